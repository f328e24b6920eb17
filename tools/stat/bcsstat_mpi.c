// SPDX-License-Identifier: GPL-2.0
/*
 * bcsstat mpi - the per-primitive table of MPI processes from the files
 * libbcsmpi writes (Documentation/mpi.rst), in the layout of Table 2 of
 * the BCS-MPI paper: calls, average, minimum and maximum latency and total
 * time of each primitive, then the rows "Comp Granularity" and "Comm
 * Overhead", added up over the files given, with the slowest and fastest
 * rank of each primitive (by its total time there) and the check that
 * computation plus communication make up each rank's time from MPI_Init
 * to MPI_Finalize.
 *
 * With --job and no FILE, the files of every node of the job come through
 * bcsd when it runs here (its "mpi-gather": merged up the tree of
 * daemons, histograms too, or a summary of each file without), else from
 * this node's directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sodium.h>

#include <bcs.h>
#include <bcs_ctl.h>

#include "mpifile.h"
#include "report.h"
#include "bcsstat.h"

/* One primitive over all the files. */
struct mpi_row {
	const char *name;		/* in the first file that has it */
	uint32_t flags;
	uint64_t calls, timed, min_ns, max_ns, bytes;
	uint64_t timed_ns;		/* in the timed calls */
	uint64_t total_ns;		/* in all (bcs_mpi_prim_time()) */
	const struct bcs_mpi_stats *slowest, *fastest;	/* by total_ns */
	uint64_t slowest_ns, fastest_ns;
	struct bcs_hist_header *lat, *size;	/* merged, or NULL */
};

/* Which ranks: of a job, on a node, one rank; NULL and -1 for any. */
struct mpi_filter {
	const char *job;
	const char *node;
	int rank;
};

/* What bcsd's gather brought: nodes expected and heard in full. */
struct mpi_gathered {
	int64_t expected, answered;
	int complete;
};

struct mpi_set {
	struct bcs_mpi_stats *files;
	char **paths;			/* of @files */
	int nr_files;
	int job_line;			/* --job: the ranks' nodes too */
	const struct mpi_gathered *gathered;	/* through bcsd, or NULL */
	struct mpi_row *rows;
	size_t nr_rows;
};

static struct mpi_row *row_of(struct mpi_set *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nr_rows; i++)
		if (!strcmp(s->rows[i].name, name))
			return &s->rows[i];
	return NULL;
}

static int add_hist(struct bcs_hist_header **dst,
		    const struct bcs_mpi_stats *st, uint64_t off)
{
	struct bcs_hist_header *h;
	int err;

	if (!off)
		return 0;
	err = bcs_mpi_stats_hist(st, off, &h);
	if (err)
		return err;
	err = bcs_hist_add(dst, h);
	free(h);
	return err;
}

/* Add record @p of file @st to the rows of @s. */
static int add_prim(struct mpi_set *s, const struct bcs_mpi_stats *st,
		    const struct bcs_mpi_prim *p, size_t max_rows)
{
	struct mpi_row *r = row_of(s, p->name);
	uint64_t t = bcs_mpi_prim_time(p);
	int err;

	if (!r) {
		if (s->nr_rows == max_rows)
			return -E2BIG;
		r = &s->rows[s->nr_rows++];
		memset(r, 0, sizeof(*r));
		r->name = p->name;
		r->flags = p->flags;
	}
	if (p->timed) {
		if (!r->timed || p->min_ns < r->min_ns)
			r->min_ns = p->min_ns;
		if (p->max_ns > r->max_ns)
			r->max_ns = p->max_ns;
	}
	if (p->calls) {
		if (!r->slowest || t > r->slowest_ns) {
			r->slowest = st;
			r->slowest_ns = t;
		}
		if (!r->fastest || t < r->fastest_ns) {
			r->fastest = st;
			r->fastest_ns = t;
		}
	}
	r->calls += p->calls;
	r->timed += p->timed;
	r->timed_ns += p->total_ns;
	r->total_ns += t;
	r->bytes += p->bytes;
	err = add_hist(&r->lat, st, p->lat_hist_off);
	return err ? err : add_hist(&r->size, st, p->size_hist_off);
}

static void set_free(struct mpi_set *s)
{
	size_t i;
	int k;

	for (i = 0; i < s->nr_rows; i++) {
		free(s->rows[i].lat);
		free(s->rows[i].size);
	}
	free(s->rows);
	for (k = 0; k < s->nr_files; k++)
		bcs_mpi_stats_free(&s->files[k]);
	free(s->files);
	free(s->paths);
}

static int filter_pass(const struct mpi_filter *f,
		       const struct bcs_mpi_file_header *h)
{
	return (!f->job || !strcmp(h->job, f->job)) &&
	       (!f->node || !strcmp(h->host, f->node)) &&
	       (f->rank < 0 || h->rank == f->rank);
}

/*
 * The files @paths[0 .. @n) that pass @f (NULL: all) into @s; with
 * @stats, those already read (taken), @paths naming them.
 */
static int set_load_filtered(struct mpi_set *s, char **paths,
			     struct bcs_mpi_stats *stats, int n,
			     const struct mpi_filter *f)
{
	char err[PATH_MAX + 128];
	size_t max_rows = 0;
	uint32_t i;
	int k, r;

	memset(s, 0, sizeof(*s));
	s->files = calloc((size_t)n + 1, sizeof(*s->files));
	s->paths = calloc((size_t)n + 1, sizeof(*s->paths));
	if (!s->files || !s->paths)
		goto nomem;
	for (k = 0; k < n; k++) {
		struct bcs_mpi_stats *st = &s->files[s->nr_files];

		if (stats) {
			*st = stats[k];
			memset(&stats[k], 0, sizeof(stats[k]));
			r = 0;
		} else {
			r = bcs_mpi_stats_read(paths[k], st, err, sizeof(err));
		}
		if (r) {
			fprintf(stderr, "bcsstat: mpi: %s\n", err);
			return EXIT_FAILURE;
		}
		if (f && !filter_pass(f, st->hdr)) {
			bcs_mpi_stats_free(st);
			continue;
		}
		s->paths[s->nr_files++] = paths[k];
		max_rows += st->hdr->nr_prims;
	}
	s->rows = calloc(max_rows + 1, sizeof(*s->rows));
	if (!s->rows)
		goto nomem;
	for (k = 0; k < s->nr_files; k++) {
		const struct bcs_mpi_stats *st = &s->files[k];

		for (i = 0; i < st->hdr->nr_prims; i++) {
			r = add_prim(s, st, &st->prims[i], max_rows);
			if (r == -ENOMEM)
				goto nomem;
			if (r) {
				fprintf(stderr, "bcsstat: mpi: %s: cannot "
					"merge its histograms: %s\n", s->paths[k],
					strerror(-r));
				return EXIT_FAILURE;
			}
		}
	}
	return 0;
nomem:
	fprintf(stderr, "bcsstat: mpi: %s\n", strerror(ENOMEM));
	return EXIT_FAILURE;
}

static int set_load(struct mpi_set *s, char **paths, int n)
{
	return set_load_filtered(s, paths, NULL, n, NULL);
}

/* The time of file @st from MPI_Init to MPI_Finalize and its split. */
struct mpi_identity {
	uint64_t elapsed_ns, comp_ns, comm_ns;
	double error_pct;	/* |comp + comm - elapsed| / elapsed */
};

static int identity(const struct bcs_mpi_stats *st, struct mpi_identity *id)
{
	const struct bcs_mpi_file_header *h = st->hdr;
	double d;

	id->comp_ns = st->prims[BCS_MPI_PRIM_COMP].total_ns;
	id->comm_ns = st->prims[BCS_MPI_PRIM_COMM].total_ns;
	if (!(h->flags & BCS_MPI_COMPLETE) || h->finalize_ns < h->init_ns)
		return 0;
	id->elapsed_ns = h->finalize_ns - h->init_ns;
	/* MPI_Pcontrol(0)'s pauses are in neither. */
	id->elapsed_ns -= h->paused_ns < id->elapsed_ns ? h->paused_ns :
			  id->elapsed_ns;
	d = (double)(id->comp_ns + id->comm_ns) - (double)id->elapsed_ns;
	id->error_pct = id->elapsed_ns ?
			100.0 * (d < 0 ? -d : d) / (double)id->elapsed_ns : 0;
	return 1;
}

/* The process rows last, as in the paper. */
static int is_process_row(const struct mpi_set *s, const struct mpi_row *r)
{
	const struct bcs_mpi_prim *p = s->files[0].prims;

	return !strcmp(r->name, p[BCS_MPI_PRIM_COMP].name) ||
	       !strcmp(r->name, p[BCS_MPI_PRIM_COMM].name);
}

/* 0: a communication primitive, 1: another function, 2: a process row. */
static int row_pass(const struct mpi_set *s, const struct mpi_row *r)
{
	if (is_process_row(s, r))
		return 2;
	return r->flags & BCS_MPI_PRIM_OTHER ? 1 : 0;
}

static void print_row(const struct mpi_row *r)
{
	char slow[32] = "-", fast[32] = "-";

	if (r->slowest)
		snprintf(slow, sizeof(slow), "%d", r->slowest->hdr->rank);
	if (r->fastest)
		snprintf(fast, sizeof(fast), "%d", r->fastest->hdr->rank);
	printf("%-22s %10" PRIu64 " %10.3f %10.3f %10.3f %12.3f %14" PRIu64
	       " %7s %7s\n", r->name, r->calls,
	       r->timed ? r->timed_ns / 1e6 / (double)r->timed : 0.0,
	       r->min_ns / 1e6, r->max_ns / 1e6, r->total_ns / 1e6,
	       r->bytes, slow, fast);
}

/* "job J: R ranks (lowest .. highest) on N nodes: A (2), B (1)". */
static void print_nodes(const struct mpi_set *s)
{
	int k, m, lo = INT32_MAX, hi = INT32_MIN, nodes = 0;

	for (k = 0; k < s->nr_files; k++) {
		lo = s->files[k].hdr->rank < lo ? s->files[k].hdr->rank : lo;
		hi = s->files[k].hdr->rank > hi ? s->files[k].hdr->rank : hi;
		for (m = 0; m < k; m++)
			if (!strcmp(s->files[m].hdr->host,
				    s->files[k].hdr->host))
				break;
		nodes += m == k;
	}
	printf("job %s: %d rank%s (%d .. %d) on %d node%s:",
	       s->files[0].hdr->job, s->nr_files, s->nr_files == 1 ? "" : "s",
	       lo, hi, nodes, nodes == 1 ? "" : "s");
	for (k = 0; k < s->nr_files; k++) {
		int n = 0;

		for (m = 0; m < k; m++)
			if (!strcmp(s->files[m].hdr->host,
				    s->files[k].hdr->host))
				break;
		if (m < k)
			continue;
		for (m = k; m < s->nr_files; m++)
			n += !strcmp(s->files[m].hdr->host,
				     s->files[k].hdr->host);
		printf("%s %s (%d)", k ? "," : "", s->files[k].hdr->host, n);
	}
	printf("\n");
}

static void print_table(const struct mpi_set *s)
{
	double worst = 0, sum = 0, elapsed = 0;
	struct mpi_identity id;
	int k, pass, complete = 0;
	size_t i;

	for (k = 0; k < s->nr_files; k++)
		complete += !!(s->files[k].hdr->flags & BCS_MPI_COMPLETE);
	printf("%d rank file%s, %d complete\n", s->nr_files,
	       s->nr_files == 1 ? "" : "s", complete);
	if (s->gathered && s->gathered->expected &&
	    s->gathered->answered > s->gathered->expected)
		/* A node the asker had not heard a report from yet. */
		printf("through bcsd: %" PRId64 " nodes answered (%" PRId64
		       " expected)\n", s->gathered->answered,
		       s->gathered->expected);
	else if (s->gathered && s->gathered->expected)
		printf("through bcsd: %" PRId64 " of %" PRId64 " node%s "
		       "answered%s\n", s->gathered->answered,
		       s->gathered->expected,
		       s->gathered->expected == 1 ? "" : "s",
		       s->gathered->complete ? "" :
		       " (incomplete: the table lacks the others)");
	else if (s->gathered)
		printf("through bcsd: %" PRId64 " node%s answered (no node "
		       "reports tasks of the job: those that answered in "
		       "time)\n", s->gathered->answered,
		       s->gathered->answered == 1 ? "" : "s");
	if (s->job_line)
		print_nodes(s);
	printf("%-22s %10s %10s %10s %10s %12s %14s %7s %7s\n", "Primitive",
	       "Calls", "Avg(ms)", "Min(ms)", "Max(ms)", "Total(ms)", "Bytes",
	       "Slowest", "Fastest");
	/* Primitives, other functions, the process rows. */
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < s->nr_rows; i++)
			if (row_pass(s, &s->rows[i]) == pass &&
			    (s->rows[i].calls || pass == 2))
				print_row(&s->rows[i]);
	/* A live file's other records may show a call not yet timed. */
	for (i = 0; i < s->nr_rows; i++)
		if ((s->rows[i].flags & BCS_MPI_PRIM_POLL) &&
		    s->rows[i].timed < s->rows[i].calls)
			printf("%s: %" PRIu64 " of %" PRIu64 " calls timed "
			       "(a polled primitive, BCS_MPI_POLL): Avg, Min "
			       "and Max theirs, Total estimated\n",
			       s->rows[i].name, s->rows[i].timed,
			       s->rows[i].calls);
	for (k = 0; k < s->nr_files; k++) {
		const struct bcs_mpi_stats *st = &s->files[k];

		if (!identity(st, &id)) {
			printf("rank %d (pid %d on %s): incomplete, no "
			       "MPI_Finalize (killed, or still running)\n",
			       st->hdr->rank, st->hdr->pid, st->hdr->host);
			continue;
		}
		sum += (double)(id.comp_ns + id.comm_ns);
		elapsed += (double)id.elapsed_ns;
		if (id.error_pct > worst)
			worst = id.error_pct;
	}
	if (complete)
		printf("Computation + communication: %.3f ms of %.3f ms from "
		       "MPI_Init to MPI_Finalize (largest gap of a rank "
		       "%.4f %%)\n", sum / 1e6, elapsed / 1e6, worst);
	for (k = 0; k < s->nr_files; k++)
		if (s->files[k].regions && s->files[k].regions[0].name[0])
			break;
	if (k < s->nr_files) {
		printf("Regions (MPI_Pcontrol):\n");
		bcsmpi_report_regions(stdout, s->files, s->nr_files);
	}
}

static struct json_object *hist_json(const struct bcs_hist_header *h)
{
	struct json_object *o = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!h)
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	if (!bcs_hist_json(f, h) && !fclose(f))
		o = json_text_parse("histogram", text);
	else
		fclose(f);
	free(text);
	return o;
}

static void prim_json(struct json_object *o, const struct bcs_mpi_prim *p)
{
	json_add_u64(o, "calls", p->calls);
	json_add_u64(o, "timed", p->timed);
	json_add_u64(o, "total_ns", p->total_ns);
	json_add_u64(o, "min_ns", p->min_ns);
	json_add_u64(o, "max_ns", p->max_ns);
	json_add_u64(o, "bytes", p->bytes);
}

static struct json_object *rank_json(const struct bcs_mpi_stats *st,
				     const char *path)
{
	const struct bcs_mpi_file_header *h = st->hdr;
	struct json_object *o = json_object_new_object(), *prims;
	struct mpi_identity id;
	uint32_t i;

	json_object_object_add(o, "file", json_object_new_string(path));
	json_object_object_add(o, "rank", json_object_new_int(h->rank));
	json_object_object_add(o, "world_size",
			       json_object_new_int(h->world_size));
	json_object_object_add(o, "pid", json_object_new_int(h->pid));
	json_object_object_add(o, "host", json_object_new_string(h->host));
	json_object_object_add(o, "job", json_object_new_string(h->job));
	json_object_object_add(o, "mpi", json_object_new_string(h->mpi));
	json_add_u64(o, "sub_bits", h->sub_bits);
	json_object_object_add(o, "complete", json_object_new_boolean(
				       !!(h->flags & BCS_MPI_COMPLETE)));
	if (identity(st, &id)) {
		json_add_u64(o, "elapsed_ns", id.elapsed_ns);
		json_object_object_add(o, "identity_error_pct",
				       json_object_new_double(id.error_pct));
	}
	json_add_u64(o, "comp_ns", id.comp_ns);
	json_add_u64(o, "comm_ns", id.comm_ns);
	prims = json_object_new_object();
	for (i = 0; i < h->nr_prims; i++) {
		struct json_object *p = json_object_new_object();

		prim_json(p, &st->prims[i]);
		json_object_object_add(prims, st->prims[i].name, p);
	}
	json_object_object_add(o, "primitives", prims);
	return o;
}

static void print_json(const struct mpi_set *s)
{
	struct json_object *top = json_object_new_object();
	struct json_object *rows = json_object_new_array();
	struct json_object *ranks = json_object_new_array();
	size_t i;
	int k;

	for (i = 0; i < s->nr_rows; i++) {
		const struct mpi_row *r = &s->rows[i];
		struct json_object *o = json_object_new_object();
		struct bcs_mpi_prim p = {
			.calls = r->calls, .timed = r->timed,
			.total_ns = r->total_ns,
			.min_ns = r->min_ns, .max_ns = r->max_ns,
			.bytes = r->bytes,
		};

		json_object_object_add(o, "name",
				       json_object_new_string(r->name));
		json_object_object_add(o, "other", json_object_new_boolean(
				       !!(r->flags & BCS_MPI_PRIM_OTHER)));
		prim_json(o, &p);
		json_add_u64(o, "avg_ns", r->timed ? r->timed_ns / r->timed :
			     0);
		if (r->slowest) {
			json_object_object_add(o, "slowest_rank",
				json_object_new_int(r->slowest->hdr->rank));
			json_add_u64(o, "slowest_total_ns", r->slowest_ns);
			json_object_object_add(o, "fastest_rank",
				json_object_new_int(r->fastest->hdr->rank));
			json_add_u64(o, "fastest_total_ns", r->fastest_ns);
		}
		if (r->lat)
			json_object_object_add(o, "latency_hist",
					       hist_json(r->lat));
		if (r->size)
			json_object_object_add(o, "size_hist",
					       hist_json(r->size));
		json_object_array_add(rows, o);
	}
	for (k = 0; k < s->nr_files; k++)
		json_object_array_add(ranks, rank_json(&s->files[k],
						       s->paths[k]));
	json_object_object_add(top, "primitives", rows);
	json_object_object_add(top, "ranks", ranks);
	if (s->gathered) {
		struct json_object *g = json_object_new_object();

		json_add_u64(g, "expected", (uint64_t)s->gathered->expected);
		json_add_u64(g, "answered", (uint64_t)s->gathered->answered);
		json_object_object_add(g, "complete", json_object_new_boolean(
					       s->gathered->complete));
		json_object_object_add(top, "through_bcsd", g);
	}
	json_print(top, 1);
	json_object_put(top);
}

/*
 * The row of @s named @name: a primitive with or without "MPI_", case
 * ignored, or "comp" and "comm" for the process rows.
 */
static struct mpi_row *find_row(struct mpi_set *s, const char *name)
{
	const struct bcs_mpi_prim *p = s->files[0].prims;
	size_t i;

	if (!strcasecmp(name, "comp"))
		name = p[BCS_MPI_PRIM_COMP].name;
	else if (!strcasecmp(name, "comm"))
		name = p[BCS_MPI_PRIM_COMM].name;
	for (i = 0; i < s->nr_rows; i++) {
		const char *n = s->rows[i].name;

		if (!strcasecmp(n, name) ||
		    (!strncmp(n, "MPI_", 4) && !strcasecmp(n + 4, name)))
			return &s->rows[i];
	}
	return NULL;
}

/* The row @prim of @s with its distributions, or NULL after saying why. */
static struct mpi_row *hist_row(struct mpi_set *s, const char *prim)
{
	struct mpi_row *r = find_row(s, prim);

	if (!r) {
		fprintf(stderr, "bcsstat: mpi: no primitive '%s' in these "
			"files (a name of the table, with or without MPI_; "
			"comp, comm)\n", prim);
		return NULL;
	}
	if (!r->lat) {
		fprintf(stderr, "bcsstat: mpi: %s has no distributions in "
			"these files: select it (BCS_MPI_STATS=%s, or bcsctl "
			"stats enable JOB --mpi %s)\n", r->name,
			r->name + (strncmp(r->name, "MPI_", 4) ? 0 : 4),
			r->name + (strncmp(r->name, "MPI_", 4) ? 0 : 4));
		return NULL;
	}
	return r;
}

static int print_hists(struct mpi_set *s, const char *prim)
{
	struct mpi_row *r = hist_row(s, prim);
	char title[128];
	int err;

	if (!r)
		return EXIT_FAILURE;
	printf("%s in %d rank file%s: %" PRIu64 " calls, %" PRIu64 " with "
	       "distributions\n", r->name, s->nr_files,
	       s->nr_files == 1 ? "" : "s", r->calls, (uint64_t)r->lat->count);
	snprintf(title, sizeof(title), "%s latency", r->name);
	err = dist_text_hist(title, r->lat, dist_fmt_ns);
	if (!err && r->size) {
		snprintf(title, sizeof(title), "%s size", r->name);
		err = dist_text_hist(title, r->size, dist_fmt_bytes);
	}
	if (err) {
		fprintf(stderr, "bcsstat: mpi: %s\n", strerror(-err));
		return EXIT_FAILURE;
	}
	return 0;
}

static struct bcs_hist_header *hist_copy(const struct bcs_hist_header *h)
{
	struct bcs_hist_header *c = NULL;

	if (h && bcs_hist_add(&c, h))
		return NULL;
	return c;
}

int mpi_hists(char **paths, int n, const char *prim, char *name,
	      size_t len, struct bcs_hist_header **lat,
	      struct bcs_hist_header **size)
{
	struct mpi_row *r;
	struct mpi_set s;
	int ret;

	*lat = *size = NULL;
	ret = set_load(&s, paths, n);
	if (!ret) {
		r = hist_row(&s, prim);
		if (r) {
			snprintf(name, len, "%s", r->name);
			*lat = hist_copy(r->lat);
			*size = hist_copy(r->size);
			if (!*lat || (r->size && !*size)) {
				fprintf(stderr, "bcsstat: mpi: %s\n",
					strerror(ENOMEM));
				free(*lat);
				free(*size);
				*lat = *size = NULL;
			}
		}
		if (!*lat)
			ret = EXIT_FAILURE;
	}
	set_free(&s);
	return ret;
}

/* A list of paths that grows. */
struct path_list {
	char **v;
	int n, cap;
};

static int path_add(struct path_list *l, const char *dir, const char *name)
{
	char *p;

	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (dir) {
		if (asprintf(&p, "%s/%s", dir, name) < 0)
			return -ENOMEM;
	} else {
		p = strdup(name);
		if (!p)
			return -ENOMEM;
	}
	l->v[l->n++] = p;
	return 0;
}

static void path_free(struct path_list *l)
{
	int k;

	for (k = 0; k < l->n; k++)
		free(l->v[k]);
	free(l->v);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The libbcsmpi files in directory @dir (JOB.HOST.RANK.PID.bcsmpi), of
 * job @job only if given, by name: 0, or an exit status after a message.
 */
static int scan_dir(struct path_list *l, const char *dir, const char *job)
{
	size_t jl = job ? strlen(job) : 0, n;
	struct dirent *e;
	int first = l->n;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "bcsstat: mpi: %s: %s\n", dir, strerror(errno));
		return EXIT_FAILURE;
	}
	while ((e = readdir(d))) {
		n = strlen(e->d_name);
		if (n < 7 || strcmp(e->d_name + n - 7, ".bcsmpi") ||
		    (job && (strncmp(e->d_name, job, jl) ||
			     e->d_name[jl] != '.')))
			continue;
		if (path_add(l, dir, e->d_name)) {
			closedir(d);
			fprintf(stderr, "bcsstat: mpi: %s\n", strerror(ENOMEM));
			return EXIT_FAILURE;
		}
	}
	closedir(d);
	qsort(l->v + first, (size_t)(l->n - first), sizeof(*l->v), by_name);
	return 0;
}

/*
 * The files to read: FILE... as given, a directory among them for its
 * files; with --job and nothing given, $BCS_MPI_DIR (or /run/bcs/mpi)
 * and the job's directory in it (bcsd's, DIR/JOB) if there is one.
 */
static int collect_paths(const struct opts *o, const char *job,
			 struct path_list *l)
{
	const char *env = getenv("BCS_MPI_DIR");
	const char *dir = env && *env ? env : "/run/bcs/mpi";
	char jd[PATH_MAX];
	struct stat sb;
	int k, r;

	if (!o->nr_args) {
		r = scan_dir(l, dir, job);
		if (!r && job &&
		    snprintf(jd, sizeof(jd), "%s/%s", dir, job) <
		    (int)sizeof(jd) && !lstat(jd, &sb) && S_ISDIR(sb.st_mode))
			r = scan_dir(l, jd, job);
		return r;
	}
	for (k = 0; k < o->nr_args; k++) {
		if (!stat(o->args[k], &sb) && S_ISDIR(sb.st_mode))
			r = scan_dir(l, o->args[k], job);
		else
			r = path_add(l, NULL, o->args[k]) ? EXIT_FAILURE : 0;
		if (r)
			return r;
	}
	return 0;
}

int mpi_path_is_mpi(const char *path)
{
	size_t n = strlen(path);
	struct stat sb;

	return (n > 7 && !strcmp(path + n - 7, ".bcsmpi")) ||
	       (!stat(path, &sb) && S_ISDIR(sb.st_mode));
}

int mpi_files_load(char **args, int nr_args, const char *job, int only_mpi,
		   struct bcs_mpi_stats **files, char ***paths, int *n)
{
	struct opts o = { .nr_args = 0 };
	struct path_list l = { 0 };
	char err[PATH_MAX + 128];
	char **mine;
	int k, r;

	*files = NULL;
	*paths = NULL;
	*n = 0;
	mine = calloc((size_t)nr_args + 1, sizeof(*mine));
	if (!mine)
		goto nomem;
	for (k = 0; k < nr_args; k++)
		if (!only_mpi || mpi_path_is_mpi(args[k]))
			mine[o.nr_args++] = args[k];
	o.args = mine;
	if (!o.nr_args && !job) {
		free(mine);
		return 0;
	}
	r = collect_paths(&o, job, &l);
	free(mine);
	if (r) {
		path_free(&l);
		return r;
	}
	*files = calloc((size_t)l.n + 1, sizeof(**files));
	if (!*files) {
		path_free(&l);
		goto nomem;
	}
	*paths = l.v;
	for (k = 0; k < l.n; k++) {
		r = bcs_mpi_stats_read(l.v[k], &(*files)[k], err, sizeof(err));
		if (r) {
			fprintf(stderr, "bcsstat: %s\n", err);
			mpi_files_free(*files, *paths, l.n);
			*files = NULL;
			*paths = NULL;
			return EXIT_FAILURE;
		}
	}
	*n = l.n;
	return 0;
nomem:
	fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
	return EXIT_FAILURE;
}

void mpi_files_free(struct bcs_mpi_stats *files, char **paths, int n)
{
	int k;

	for (k = 0; files && k < n; k++)
		bcs_mpi_stats_free(&files[k]);
	for (k = 0; paths && k < n; k++)
		free(paths[k]);
	free(files);
	free(paths);
}

/* A job's files as bcsd gathered them, read. */
struct mpi_fetched {
	struct json_object *tree;	/* the tree's merged answer, or NULL */
	struct bcs_mpi_stats *stats;
	char **labels;			/* "node N file K" */
	int n;
	struct mpi_gathered info;
};

static void fetched_free(struct mpi_fetched *g)
{
	int k;

	for (k = 0; k < g->n; k++) {
		bcs_mpi_stats_free(&g->stats[k]);
		free(g->labels[k]);
	}
	free(g->stats);
	free(g->labels);
	json_object_put(g->tree);
	memset(g, 0, sizeof(*g));
}

/* File @f of a gather's answer ({"node", "file", "data"}) into @g. */
static int fetched_add(struct mpi_fetched *g, struct json_object *f)
{
	struct json_object *v;
	char err[256];
	const char *b64;
	size_t len;
	void *bin;
	int r;

	if (!json_object_object_get_ex(f, "data", &v))
		return -EPROTO;
	b64 = json_object_get_string(v);
	if (!b64)
		return -EPROTO;
	len = strlen(b64) / 4 * 3 + 3;
	bin = malloc(len);
	if (!bin)
		return -ENOMEM;
	if (asprintf(&g->labels[g->n], "node %" PRId64 " file %" PRId64,
		     bcs_ctl_int(f, "node", 0), bcs_ctl_int(f, "file", 0)) < 0) {
		g->labels[g->n] = NULL;
		free(bin);
		return -ENOMEM;
	}
	if (sodium_base642bin(bin, len, b64, strlen(b64), NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL)) {
		free(bin);
		free(g->labels[g->n]);
		return -EPROTO;
	}
	r = bcs_mpi_stats_parse(bin, len, g->labels[g->n], &g->stats[g->n],
				err, sizeof(err));
	if (r) {
		fprintf(stderr, "bcsstat: mpi: from bcsd: %s\n", err);
		free(g->labels[g->n]);
		return r;
	}
	g->n++;
	return 0;
}

static uint64_t jget_u64(struct json_object *o, const char *k)
{
	int64_t v = bcs_ctl_int(o, k, 0);

	return v < 0 ? 0 : (uint64_t)v;
}

/* The process rows (the first two records of every file). */
static int tree_row_pass(struct json_object *p)
{
	struct json_object *n;
	const char *name = json_object_object_get_ex(p, "name", &n) ?
			   json_object_get_string(n) : "";

	if (!strcmp(name, "Comp Granularity") ||
	    !strcmp(name, "Comm Overhead"))
		return 2;
	return jget_u64(p, "flags") & BCS_MPI_PRIM_OTHER ? 1 : 0;
}

static void tree_rank(char *buf, size_t size, struct json_object *p,
		      const char *k)
{
	int64_t r = bcs_ctl_int(p, k, -1);

	if (r < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%" PRId64, r);
}

/*
 * The answer of bcsd's gather through the tree (@o: merged on the way up,
 * Documentation/filters.rst): the table of the files, the nodes covered
 * and missing, and each primitive's extremes with their ranks.
 */
static void print_tree(struct json_object *o)
{
	struct json_object *prims, *p, *n;
	char slow[24], fast[24], lo[24], hi[24];
	uint64_t timed;
	size_t i, nr = 0;
	int pass;

	if (json_object_object_get_ex(o, "primitives", &prims) &&
	    json_object_is_type(prims, json_type_array))
		nr = json_object_array_length(prims);
	tree_answer_head(o, "the table's rows", 1);
	printf("%-22s %10s %10s %10s %10s %12s %14s %7s %7s\n", "Primitive",
	       "Calls", "Avg(ms)", "Min(ms)", "Max(ms)", "Total(ms)", "Bytes",
	       "Slowest", "Fastest");
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < nr; i++) {
			p = json_object_array_get_idx(prims, i);
			if (tree_row_pass(p) != pass ||
			    (!jget_u64(p, "calls") && pass != 2) ||
			    !json_object_object_get_ex(p, "name", &n))
				continue;
			tree_rank(slow, sizeof(slow), p, "rmax_rank");
			tree_rank(fast, sizeof(fast), p, "rmin_rank");
			timed = jget_u64(p, "timed");
			/* Time over calls: the estimate of polled ones too. */
			printf("%-22s %10" PRIu64 " %10.3f %10.3f %10.3f "
			       "%12.3f %14" PRIu64 " %7s %7s\n",
			       json_object_get_string(n), jget_u64(p, "calls"),
			       jget_u64(p, "calls") ? jget_u64(p, "time_ns") /
			       1e6 / (double)jget_u64(p, "calls") : 0.0,
			       timed ? jget_u64(p, "min_ns") / 1e6 : 0.0,
			       timed ? jget_u64(p, "max_ns") / 1e6 : 0.0,
			       jget_u64(p, "time_ns") / 1e6,
			       jget_u64(p, "bytes"), slow, fast);
		}
	printf("Per-rank extremes (ms): shortest call (rank), longest call "
	       "(rank), least time in it (rank), most time (rank)\n");
	for (i = 0; i < nr; i++) {
		p = json_object_array_get_idx(prims, i);
		if (!jget_u64(p, "calls") ||
		    !json_object_object_get_ex(p, "name", &n))
			continue;
		tree_rank(lo, sizeof(lo), p, "min_rank");
		tree_rank(hi, sizeof(hi), p, "max_rank");
		tree_rank(fast, sizeof(fast), p, "rmin_rank");
		tree_rank(slow, sizeof(slow), p, "rmax_rank");
		printf("  %-22s %10.3f (%s) %10.3f (%s) %12.3f (%s) %12.3f "
		       "(%s)\n", json_object_get_string(n),
		       jget_u64(p, "min_ns") / 1e6, lo,
		       jget_u64(p, "max_ns") / 1e6, hi,
		       jget_u64(p, "rmin_ns") / 1e6, fast,
		       jget_u64(p, "rmax_ns") / 1e6, slow);
	}
}

/*
 * The histograms of primitive @prim (a name with or without "MPI_", case
 * ignored; comp, comm) in the tree's answer @o: merged up the tree of
 * daemons from every rank file, as --hist shows those of the files.
 */
static int print_tree_hists(struct json_object *o, const char *prim)
{
	static const char *const kinds[] = { "latency", "size" };
	struct json_object *hs, *h, *v;
	struct bcs_hist_header *hist;
	const char *name, *want = prim;
	char title[128];
	size_t i, nr = 0;
	int k, shown = 0, err = 0;

	if (!strcasecmp(prim, "comp"))
		want = "Comp Granularity";
	else if (!strcasecmp(prim, "comm"))
		want = "Comm Overhead";
	if (json_object_object_get_ex(o, "histograms", &hs) &&
	    json_object_is_type(hs, json_type_array))
		nr = json_object_array_length(hs);
	tree_answer_head(o, "the histograms", 1);
	for (k = 0; k < 2 && !err; k++)
		for (i = 0; i < nr && !err; i++) {
			h = json_object_array_get_idx(hs, i);
			if (!json_object_object_get_ex(h, "kind", &v) ||
			    strcmp(json_object_get_string(v), kinds[k]) ||
			    !json_object_object_get_ex(h, "name", &v))
				continue;
			name = json_object_get_string(v);
			if (strcasecmp(name, want) &&
			    (strncmp(name, "MPI_", 4) ||
			     strcasecmp(name + 4, want)))
				continue;
			hist = dist_hist_parse("bcsd", h, name);
			if (!hist)
				return EXIT_FAILURE;
			snprintf(title, sizeof(title), "%s %s", name, kinds[k]);
			err = dist_text_hist(title, hist, k ? dist_fmt_bytes :
					     dist_fmt_ns);
			free(hist);
			shown++;
		}
	if (err) {
		fprintf(stderr, "bcsstat: mpi: %s\n", strerror(-err));
		return EXIT_FAILURE;
	}
	if (!shown) {
		fprintf(stderr, "bcsstat: mpi: no distribution of '%s' in the "
			"tree's answer (no such primitive, or not selected: "
			"BCS_MPI_STATS, bcsctl stats enable JOB --mpi)\n", prim);
		return EXIT_FAILURE;
	}
	return 0;
}

/*
 * The files of job @job on every node, through bcsd: 1 with @g filled,
 * or 0 after saying why not (no bcsd here says nothing), to read this
 * node's files instead.
 */
static int fetch(uint32_t job, int by_file, struct mpi_fetched *g)
{
	struct json_object *resp, *files;
	char msg[256];
	size_t i, n;
	int fd, r;

	memset(g, 0, sizeof(*g));
	fd = bcs_ctl_connect();
	if (fd < 0)
		return 0;
	r = mpi_gather_call(fd, job, by_file, &resp, msg, sizeof(msg));
	if (r) {
		fprintf(stderr, "bcsstat: mpi: bcsd: %s; this node's files "
			"only\n", r == -ETIMEDOUT ? "no answer" : msg);
		return 0;
	}
	if (json_object_object_get_ex(resp, "tree", &files) &&
	    json_object_get_boolean(files)) {
		/* Merged in the tree: no files, the answer itself. */
		g->tree = resp;
		return 1;
	}
	if (sodium_init() < 0 ||
	    !json_object_object_get_ex(resp, "files", &files) ||
	    !json_object_is_type(files, json_type_array)) {
		json_object_put(resp);
		fprintf(stderr, "bcsstat: mpi: bcsd's answer has no files; "
			"this node's files only\n");
		return 0;
	}
	n = json_object_array_length(files);
	g->stats = calloc(n + 1, sizeof(*g->stats));
	g->labels = calloc(n + 1, sizeof(*g->labels));
	r = g->stats && g->labels ? 0 : -ENOMEM;
	for (i = 0; !r && i < n; i++) {
		r = fetched_add(g, json_object_array_get_idx(files, i));
		if (r == -EPROTO || r == -EINVAL || r == -EAGAIN)
			r = 0;	/* said; the others are good */
	}
	g->info.expected = bcs_ctl_int(resp, "expected", 0);
	g->info.answered = bcs_ctl_int(resp, "answered", 0);
	g->info.complete = g->info.expected &&
			   g->info.answered >= g->info.expected;
	json_object_put(resp);
	if (r) {
		fprintf(stderr, "bcsstat: mpi: %s\n", strerror(-r));
		fetched_free(g);
		return 0;
	}
	return 1;
}

int run_mpi(const struct opts *o)
{
	struct mpi_filter f = { .rank = -1 };
	struct path_list l = { 0 };
	struct mpi_fetched g = { 0 };
	char job[16], where[256];
	struct mpi_set s;
	int r = 0, fetched = 0;

	if (!o->nr_args && !(o->given & OPT_JOB))
		return usage_err(o->cmd, "no FILE given (or --job J)", NULL);
	if ((o->given & OPT_JSON) && o->hist)
		return usage_err(o->cmd, "--json has every histogram; --hist "
				 "is for text", NULL);
	if (!!(o->given & OPT_JSON) * !(o->given & OPT_SLICES) + !!o->hist +
	    !!(o->given & OPT_RANKS) + !!(o->given & OPT_REPORT) +
	    !!(o->given & OPT_SLICES) > 1)
		return usage_err(o->cmd, "one of --json, --hist, --ranks, "
				 "--report, --slices", NULL);
	if (o->given & OPT_JOB) {
		snprintf(job, sizeof(job), "%u", o->job);
		f.job = job;
	}
	if (o->given & OPT_NODE)
		f.node = o->node;
	if (o->given & OPT_RANK)
		f.rank = o->rank;
	/*
	 * Slices are in the files, not in bcsd's gather; histograms only in
	 * the tree's.  Per rank or per file, each rank's file, gathered
	 * flat; else merged in the tree where there is one.
	 */
	if ((o->given & OPT_JOB) && !o->nr_args && !(o->given & OPT_SLICES))
		fetched = fetch(o->job, (o->given & (OPT_RANKS | OPT_REPORT)) ||
				f.node || f.rank >= 0, &g);
	/* The flat gather's summaries have none: this node's files. */
	if (fetched && !g.tree && o->hist) {
		fetched_free(&g);
		fetched = 0;
	}
	if (fetched && g.tree) {
		if (o->hist)
			r = print_tree_hists(g.tree, o->hist);
		else if (o->given & OPT_JSON)
			printf("%s\n", json_object_to_json_string_ext(
				       g.tree, JSON_C_TO_STRING_PRETTY));
		else
			print_tree(g.tree);
		fetched_free(&g);
		return o->hist ? r : 0;
	}
	if (fetched) {
		r = set_load_filtered(&s, g.labels, g.stats, g.n, &f);
		s.gathered = &g.info;
	} else {
		r = collect_paths(o, f.job, &l);
		if (r) {
			path_free(&l);
			return r;
		}
		r = set_load_filtered(&s, l.v, NULL, l.n, &f);
	}
	if (!r && !s.nr_files) {
		snprintf(where, sizeof(where), "%s%s%s%s",
			 f.job ? " of job " : "", f.job ? f.job : "",
			 f.node ? " on " : "", f.node ? f.node : "");
		if (f.rank >= 0)
			snprintf(where + strlen(where),
				 sizeof(where) - strlen(where), " of rank %d",
				 f.rank);
		fprintf(stderr, "bcsstat: mpi: no statistics file%s in %s "
			"(%d file%s looked at)\n", where, fetched ?
			"what bcsd gathered" : o->nr_args ?
			"the files given" : "$BCS_MPI_DIR", fetched ? g.n : l.n,
			(fetched ? g.n : l.n) == 1 ? "" : "s");
		r = EXIT_FAILURE;
	}
	s.job_line = !!(o->given & OPT_JOB);
	if (!r) {
		if (o->hist)
			r = print_hists(&s, o->hist);
		else if (o->given & OPT_SLICES)
			r = mpi_slices_print(s.files, s.paths, s.nr_files,
					     !!(o->given & OPT_JSON));
		else if (o->given & OPT_RANKS)
			bcsmpi_report_ranks(stdout, s.files, s.nr_files);
		else if (o->given & OPT_REPORT)
			bcsmpi_report(stdout, s.files, s.nr_files, 1);
		else if (o->given & OPT_JSON)
			print_json(&s);
		else
			print_table(&s);
	}
	set_free(&s);
	path_free(&l);
	fetched_free(&g);
	return r;
}

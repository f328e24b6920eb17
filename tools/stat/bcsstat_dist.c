// SPDX-License-Identifier: GPL-2.0
/*
 * bcsstat dist [--job J] [--pid P] [--metric NAME] [--json] [FILE...]:
 * the per-task distributions of bcs.ko (bursts, voluntary sleeps, parks,
 * runnable waits), live from /dev/bcs or from job dumps (libbcs's
 * bcs_job_dump(), one per node), merged per task and per job.
 *
 * Live statistics are read by dumping them with libbcs into memory and
 * reading that dump as a file is read: one reader, one schema.  A
 * histogram is kept in the form of <linux/bcs_hist.h> (header, then the
 * non-empty buckets), so that merging is a merge of two sorted lists and
 * the writer of libbcs prints the result.
 *
 * Histograms of different resolutions are added at the coarser one
 * (libbcs's bcs_hist_add(), which bcsd's filters use too).
 */
#define _GNU_SOURCE		/* open_memstream() */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include <bcs.h>
#include <bcs_ctl.h>

#include "bcsstat.h"

/* What each metric measures, for the headings. */
static const char *const metric_what[BCS_DIST_METRICS] = {
	[BCS_DIST_BURST] = "CPU bursts (computation granularity)",
	[BCS_DIST_BLOCKED] = "voluntary sleeps (communication overhead)",
	[BCS_DIST_SUSPENDED] = "parks by bcs (suspended)",
	[BCS_DIST_WAIT] = "runnable waits (on a run queue)",
};

/* Rows of a text histogram at most: finer ones are shown coarser. */
#define HIST_ROWS_MAX	32
#define BAR_WIDTH	40
/* Empty buckets between two others shown as rows, at most; else "...". */
#define GAP_ROWS_MAX	3

int dist_metric_parse(const char *name, uint32_t *metric)
{
	uint32_t k;

	for (k = 0; k < BCS_DIST_METRICS; k++)
		if (!strcmp(name, bcs_dist_metric_name(k))) {
			*metric = k;
			return 0;
		}
	return -EINVAL;
}

void dist_help(FILE *f)
{
	fprintf(f, "METRIC: burst (CPU time between voluntary sleeps), blocked "
		"(each voluntary\nsleep), suspended (each park by bcs), wait "
		"(each wait on a run queue).\nFILE: job dumps (bcsd, "
		"bcs_job_dump(); dist --json output too), one per node,\n"
		"merged; none: the jobs of this node with statistics.\n"
		"Task FLAGS: G gone from the job, T being tracked.\n");
}

/* ---- histograms ---- */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---- reading dumps ---- */

struct src {
	const char *path;	/* for messages */
	char where[64];		/* "task 3", or "" */
};

static int bad(const struct src *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(const struct src *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bcsstat: %s: %s%s", s->path, s->where,
		*s->where ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* The member @key of @o, NULL (and a message if @required) if absent. */
static struct json_object *member(const struct src *s, struct json_object *o,
				  const char *key, int required)
{
	struct json_object *f = NULL;

	if (!json_object_object_get_ex(o, key, &f) || !f) {
		if (required)
			bad(s, "no \"%s\"", key);
		return NULL;
	}
	return f;
}

static int get_u64(const struct src *s, struct json_object *o,
		   const char *key, __u64 *v)
{
	struct json_object *f = member(s, o, key, 1);

	if (!f)
		return -1;
	if (!json_object_is_type(f, json_type_int) ||
	    json_object_get_int64(f) < 0)
		return bad(s, "\"%s\" is not an unsigned integer", key);
	*v = json_object_get_uint64(f);
	return 0;
}

static int get_bool(const struct src *s, struct json_object *o,
		    const char *key, int *v)
{
	struct json_object *f = member(s, o, key, 1);

	if (!f)
		return -1;
	if (!json_object_is_type(f, json_type_boolean))
		return bad(s, "\"%s\" is not true or false", key);
	*v = json_object_get_boolean(f);
	return 0;
}

static int get_int_range(const struct src *s, struct json_object *v,
			 const char *what, uint64_t max, __u64 *out)
{
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0 ||
	    json_object_get_uint64(v) > max)
		return bad(s, "%s is not an integer in 0..%llu", what,
			   (unsigned long long)max);
	*out = json_object_get_uint64(v);
	return 0;
}

/*
 * A histogram of the dump: sub_bits, count, sum, min, max, saturated and
 * buckets [lower_ns, upper_ns, count], each lower and upper those of a
 * bucket at that resolution, in increasing order, adding up to count.
 */
static struct bcs_hist_header *hist_parse(const struct src *s,
					  struct json_object *o,
					  const char *metric)
{
	struct json_object *arr, *b;
	struct bcs_hist_header *h = NULL;
	struct bcs_hist_bucket *hb;
	__u64 sub, lo, hi, n, total = 0;
	size_t i, nr;
	int sat;

	if (!json_object_is_type(o, json_type_object)) {
		bad(s, "metric %s is not an object", metric);
		return NULL;
	}
	if (get_u64(s, o, "sub_bits", &sub))
		return NULL;
	if (sub > BCS_HIST_SUB_BITS_MAX) {
		bad(s, "%s: resolution sub_bits %llu is not 0..%d", metric,
		    (unsigned long long)sub, BCS_HIST_SUB_BITS_MAX);
		return NULL;
	}
	arr = member(s, o, "buckets", 1);
	if (!arr)
		return NULL;
	if (!json_object_is_type(arr, json_type_array)) {
		bad(s, "%s: \"buckets\" is not an array", metric);
		return NULL;
	}
	nr = json_object_array_length(arr);
	if (nr > bcs_hist_buckets((unsigned int)sub)) {
		bad(s, "%s: more buckets than resolution %llu has", metric,
		    (unsigned long long)sub);
		return NULL;
	}
	h = bcs_hist_alloc((uint32_t)nr);
	if (!h) {
		bad(s, "%s", strerror(ENOMEM));
		return NULL;
	}
	h->sub_bits = (uint8_t)sub;
	h->nr_buckets = (uint32_t)nr;
	if (get_u64(s, o, "count", &h->count) || get_u64(s, o, "sum", &h->sum) ||
	    get_u64(s, o, "min", &h->min) || get_u64(s, o, "max", &h->max) ||
	    get_bool(s, o, "saturated", &sat))
		goto fail;
	h->flags = sat ? BCS_HIST_SATURATED : 0;
	hb = bcs_hist_bucket_array(h);
	for (i = 0; i < nr; i++) {
		b = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(b, json_type_array) ||
		    json_object_array_length(b) != 3) {
			bad(s, "%s: bucket %zu is not [lower_ns, upper_ns, "
			    "count]", metric, i);
			goto fail;
		}
		if (get_int_range(s, json_object_array_get_idx(b, 0),
				  "a bucket's lower_ns", UINT64_MAX, &lo) ||
		    get_int_range(s, json_object_array_get_idx(b, 1),
				  "a bucket's upper_ns", UINT64_MAX, &hi) ||
		    get_int_range(s, json_object_array_get_idx(b, 2),
				  "a bucket's count", UINT64_MAX, &n))
			goto fail;
		hb[i].index = bcs_hist_index(lo, (unsigned int)sub);
		if (bcs_hist_lower(hb[i].index, (unsigned int)sub) != lo ||
		    bcs_hist_upper(hb[i].index, (unsigned int)sub) != hi) {
			bad(s, "%s: bucket %zu [%llu, %llu] is not a bucket of "
			    "resolution sub_bits %llu", metric, i,
			    (unsigned long long)lo, (unsigned long long)hi,
			    (unsigned long long)sub);
			goto fail;
		}
		if (!n || (i && hb[i].index <= hb[i - 1].index)) {
			bad(s, "%s: bucket %zu is empty or out of order",
			    metric, i);
			goto fail;
		}
		hb[i].count = n;
		total = add_sat(total, n);
	}
	if (total != h->count) {
		bad(s, "%s: the buckets hold %llu values, \"count\" says %llu",
		    metric, (unsigned long long)total,
		    (unsigned long long)h->count);
		goto fail;
	}
	if (h->count && (h->min > h->max ||
			 bcs_hist_index(h->min, (unsigned int)sub) !=
			 hb[0].index ||
			 bcs_hist_index(h->max, (unsigned int)sub) !=
			 hb[nr - 1].index)) {
		bad(s, "%s: min %llu and max %llu do not fall in the first "
		    "and last buckets", metric, (unsigned long long)h->min,
		    (unsigned long long)h->max);
		goto fail;
	}
	return h;
fail:
	free(h);
	return NULL;
}

struct bcs_hist_header *dist_hist_parse(const char *path,
					struct json_object *o,
					const char *what)
{
	struct src s = { .path = path };

	return hist_parse(&s, o, what);
}

static const char *const total_keys[] = {
	"start_ns", "tracked_ns", "run_ns", "blocked_ns", "suspended_ns",
	"wait_ns", "bursts", "preemptions", "suspensions",
};

static int totals_parse(const struct src *s, struct json_object *o,
			struct bcs_dist_totals *t)
{
	__u64 *f[] = {
		&t->start_ns, &t->tracked_ns, &t->run_ns, &t->blocked_ns,
		&t->suspended_ns, &t->wait_ns, &t->bursts, &t->preemptions,
		&t->suspensions,
	};
	struct json_object *st;
	size_t i;

	if (!json_object_is_type(o, json_type_object))
		return bad(s, "\"totals\" is not an object");
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (get_u64(s, o, total_keys[i], f[i]))
			return -1;
	st = member(s, o, "state", 1);
	if (!st)
		return -1;
	if (!json_object_is_type(st, json_type_string) ||
	    dist_metric_parse(json_object_get_string(st), &t->state))
		return bad(s, "\"state\" is not a metric's name");
	return 0;
}

static void task_free(struct dist_task *t)
{
	int k;

	free(t->node);
	for (k = 0; k < BCS_DIST_METRICS; k++)
		free(t->hist[k]);
}

static int task_parse(const struct src *s, struct json_object *o,
		      const char *node, struct dist_task *t)
{
	struct json_object *f, *m;
	__u64 pid;
	int gone, tracking;

	memset(t, 0, sizeof(*t));
	if (!json_object_is_type(o, json_type_object))
		return bad(s, "not an object");
	if (get_u64(s, o, "pid", &pid))
		return -1;
	if (!pid || pid > INT32_MAX)
		return bad(s, "bad pid %llu", (unsigned long long)pid);
	t->pid = (int32_t)pid;
	f = member(s, o, "tgid", 0);
	if (f) {
		__u64 tgid;

		if (get_int_range(s, f, "\"tgid\"", INT32_MAX, &tgid))
			return -1;
		t->tgid = (int32_t)tgid;
	}
	f = member(s, o, "node", 0);
	if (f && !json_object_is_type(f, json_type_string))
		return bad(s, "\"node\" is not a string");
	t->node = strdup(f ? json_object_get_string(f) : node);
	if (!t->node)
		return bad(s, "%s", strerror(ENOMEM));
	if (get_bool(s, o, "gone", &gone) ||
	    get_bool(s, o, "tracking", &tracking))
		return -1;
	f = member(s, o, "totals", 1);
	if (!f || totals_parse(s, f, &t->totals))
		return -1;
	t->totals.flags = (gone ? BCS_DIST_GONE : 0) |
			  (tracking ? BCS_DIST_TRACKING : 0);
	m = member(s, o, "metrics", 1);
	if (!m)
		return -1;
	if (!json_object_is_type(m, json_type_object))
		return bad(s, "\"metrics\" is not an object");
	json_object_object_foreach(m, key, val) {
		uint32_t metric;

		if (dist_metric_parse(key, &metric)) {
			/* A metric of a later bcs: not ours to show. */
			continue;
		}
		if (t->hist[metric])
			return bad(s, "metric %s twice", key);
		t->hist[metric] = hist_parse(s, val, key);
		if (!t->hist[metric])
			return -1;
	}
	return 0;
}

static int add_node(struct dist_job *j, const char *node)
{
	char **p;
	size_t i;

	for (i = 0; i < j->nr_nodes; i++)
		if (!strcmp(j->nodes[i], node))
			return 0;
	p = realloc(j->nodes, (j->nr_nodes + 1) * sizeof(*p));
	if (!p)
		return -1;
	j->nodes = p;
	p[j->nr_nodes] = strdup(node);
	if (!p[j->nr_nodes])
		return -1;
	j->nr_nodes++;
	return 0;
}

/* The names of @list, "node1" or "node1,node2" (a merged document). */
static int add_nodes(struct dist_job *j, const char *list)
{
	char *copy = strdup(list), *p, *save = NULL;
	int err = 0;

	if (!copy)
		return -1;
	for (p = strtok_r(copy, ",", &save); p && !err;
	     p = strtok_r(NULL, ",", &save))
		err = add_node(j, p);
	free(copy);
	return err;
}

static struct dist_job *job_get(struct dist_set *set, uint32_t id)
{
	struct dist_job *p;
	size_t i;

	for (i = 0; i < set->nr_jobs; i++)
		if (set->jobs[i].id == id)
			return &set->jobs[i];
	p = realloc(set->jobs, (set->nr_jobs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	set->jobs = p;
	p = &set->jobs[set->nr_jobs++];
	memset(p, 0, sizeof(*p));
	p->id = id;
	p->row = BCS_ROW_NONE;
	return p;
}

/* Add task @t (its contents taken) to @j, merged with the same one. */
static int job_add_task(struct dist_job *j, struct dist_task *t)
{
	struct dist_task *o, *p;
	size_t i;
	int k;

	for (i = 0; i < j->nr_tasks; i++) {
		o = &j->tasks[i];
		if (o->pid != t->pid || strcmp(o->node, t->node))
			continue;
		for (k = 0; k < BCS_DIST_METRICS; k++) {
			if (!t->hist[k])
				continue;
			if (bcs_hist_add(&o->hist[k], t->hist[k]))
				return -1;
		}
		if (t->totals.start_ns < o->totals.start_ns)
			o->totals.start_ns = t->totals.start_ns;
		o->totals.tracked_ns += t->totals.tracked_ns;
		o->totals.run_ns += t->totals.run_ns;
		o->totals.blocked_ns += t->totals.blocked_ns;
		o->totals.suspended_ns += t->totals.suspended_ns;
		o->totals.wait_ns += t->totals.wait_ns;
		o->totals.bursts += t->totals.bursts;
		o->totals.preemptions += t->totals.preemptions;
		o->totals.suspensions += t->totals.suspensions;
		o->totals.flags |= t->totals.flags;
		if (!o->tgid)
			o->tgid = t->tgid;
		task_free(t);
		return 0;
	}
	p = realloc(j->tasks, (j->nr_tasks + 1) * sizeof(*p));
	if (!p)
		return -1;
	j->tasks = p;
	p[j->nr_tasks++] = *t;
	return 0;
}

/* Dumps already read, to warn of one given twice. */
struct seen {
	char *node;
	uint32_t job;
	uint64_t time_ns;
	const char *path;
};

/* One dump (an object) of @path into @set; -1 after a message. */
static int doc_load(const char *path, size_t nr, struct json_object *o,
		    const struct opts *opt, struct dist_set *set,
		    struct seen *seen, size_t *nr_seen)
{
	struct src s = { .path = path };
	struct json_object *f, *tasks;
	const char *node;
	__u64 version, job, row = BCS_ROW_NONE, time_ns, mono = 0;
	struct dist_job *j;
	struct dist_task t;
	size_t i, n;

	if (nr > 1)
		snprintf(s.where, sizeof(s.where), "document %zu", nr);
	if (!json_object_is_type(o, json_type_object))
		return bad(&s, "not a bcs job dump (an object)");
	f = member(&s, o, "format", 0);
	if (!f || !json_object_is_type(f, json_type_string) ||
	    strcmp(json_object_get_string(f), BCS_DUMP_FORMAT))
		return bad(&s, "not a bcs job dump (no \"format\": \"%s\")",
			   BCS_DUMP_FORMAT);
	if (get_u64(&s, o, "version", &version))
		return -1;
	if (version != BCS_DUMP_VERSION)
		return bad(&s, "dump version %llu is not supported (this "
			   "bcsstat reads version %d)",
			   (unsigned long long)version, BCS_DUMP_VERSION);
	f = member(&s, o, "node", 1);
	if (!f)
		return -1;
	if (!json_object_is_type(f, json_type_string))
		return bad(&s, "\"node\" is not a string");
	node = json_object_get_string(f);
	if (get_u64(&s, o, "job", &job) || get_u64(&s, o, "time_ns", &time_ns))
		return -1;
	if (!bcs_job_id_valid(job > UINT32_MAX ? 0 : (uint32_t)job))
		return bad(&s, "bad job id %llu", (unsigned long long)job);
	f = member(&s, o, "row", 0);
	if (f && get_int_range(&s, f, "\"row\"", BCS_ROWS_MAX - 1, &row))
		return -1;
	f = member(&s, o, "monotonic_ns", 0);
	if (f && get_int_range(&s, f, "\"monotonic_ns\"", UINT64_MAX, &mono))
		return -1;
	tasks = member(&s, o, "tasks", 1);
	if (!tasks)
		return -1;
	if (!json_object_is_type(tasks, json_type_array))
		return bad(&s, "\"tasks\" is not an array");
	if ((opt->given & OPT_JOB) && job != opt->job)
		return 0;

	for (i = 0; i < *nr_seen; i++)
		if (seen[i].job == job && seen[i].time_ns == time_ns &&
		    !strcmp(seen[i].node, node))
			fprintf(stderr, "bcsstat: warning: %s is the same dump "
				"as %s (node %s, job %llu): counted twice\n",
				path, seen[i].path, node,
				(unsigned long long)job);
	seen[*nr_seen].node = strdup(node);
	seen[*nr_seen].job = (uint32_t)job;
	seen[*nr_seen].time_ns = time_ns;
	seen[(*nr_seen)++].path = path;

	j = job_get(set, (uint32_t)job);
	if (!j || add_nodes(j, node))
		return bad(&s, "%s", strerror(ENOMEM));
	if (j->row == BCS_ROW_NONE)
		j->row = (uint32_t)row;
	if (time_ns > j->time_ns)
		j->time_ns = time_ns;
	j->monotonic_ns = j->nr_nodes == 1 ? mono : 0;
	j->nr_docs++;
	n = json_object_array_length(tasks);
	for (i = 0; i < n; i++) {
		if (nr > 1)
			snprintf(s.where, sizeof(s.where),
				 "document %zu, task %zu", nr, i);
		else
			snprintf(s.where, sizeof(s.where), "task %zu", i);
		if (task_parse(&s, json_object_array_get_idx(tasks, i), node,
			       &t)) {
			task_free(&t);
			return -1;
		}
		if ((opt->given & OPT_PID) && t.pid != opt->pid) {
			task_free(&t);
			continue;
		}
		if (job_add_task(j, &t)) {
			task_free(&t);
			return bad(&s, "%s", strerror(ENOMEM));
		}
	}
	return 0;
}

/* The dumps in @o, one object or an array of them, from @path. */
static int docs_load(const char *path, struct json_object *o,
		     const struct opts *opt, struct dist_set *set,
		     struct seen **seen, size_t *nr_seen, size_t *cap)
{
	size_t i, n = 1;
	struct seen *p;

	if (json_object_is_type(o, json_type_array))
		n = json_object_array_length(o);
	if (*nr_seen + n > *cap) {
		p = realloc(*seen, (*nr_seen + n) * sizeof(*p));
		if (!p) {
			fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
			return -1;
		}
		*seen = p;
		*cap = *nr_seen + n;
	}
	if (!json_object_is_type(o, json_type_array))
		return doc_load(path, 1, o, opt, set, *seen, nr_seen);
	if (!n) {
		fprintf(stderr, "bcsstat: %s: no job dump in it\n", path);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (doc_load(path, n > 1 ? i + 1 : 1,
			     json_object_array_get_idx(o, i), opt, set,
			     *seen, nr_seen))
			return -1;
	return 0;
}

void dist_free(struct dist_set *set)
{
	size_t i, k;

	for (i = 0; i < set->nr_jobs; i++) {
		struct dist_job *j = &set->jobs[i];

		for (k = 0; k < j->nr_tasks; k++)
			task_free(&j->tasks[k]);
		for (k = 0; k < j->nr_nodes; k++)
			free(j->nodes[k]);
		free(j->tasks);
		free(j->nodes);
	}
	free(set->jobs);
	memset(set, 0, sizeof(*set));
}

/* The dump of live job @job, parsed into @set; 1: it has no statistics. */
static int live_job(struct bcs *h, uint32_t job, const struct opts *opt,
		    struct dist_set *set, struct seen **seen, size_t *nr_seen,
		    size_t *cap)
{
	struct json_object *o;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	f = open_memstream(&text, &len);
	if (!f) {
		fprintf(stderr, "bcsstat: %s\n", strerror(errno));
		return -1;
	}
	err = bcs_job_dump(h, job, f, BCS_DUMP_NO_SLICES);
	if (fclose(f) && !err)
		err = -EIO;
	if (err == -ENOENT) {
		free(text);
		return 1;
	}
	if (err) {
		fprintf(stderr, "bcsstat: dist: job %u: %s\n", job,
			bcs_strerror(err, BCS_CTX_JOB));
		free(text);
		return -1;
	}
	o = json_text_parse("/dev/" BCS_DEVICE_NAME, text);
	free(text);
	if (!o)
		return -1;
	err = docs_load("/dev/" BCS_DEVICE_NAME, o, opt, set, seen, nr_seen,
			cap);
	json_object_put(o);
	return err;
}

static int live_load(const struct opts *opt, struct dist_set *set,
		     struct seen **seen, size_t *nr_seen, size_t *cap)
{
	struct bcs_job_info *jobs = NULL;
	struct bcs *h;
	size_t n = 0, i;
	int err;

	err = bcs_open(&h);
	if (err) {
		fprintf(stderr, "bcsstat: %s\n", bcs_strerror(err, BCS_CTX_OPEN));
		return -1;
	}
	if (opt->given & OPT_JOB) {
		err = live_job(h, opt->job, opt, set, seen, nr_seen, cap);
		if (err > 0)
			fprintf(stderr, "bcsstat: dist: job %u has no "
				"statistics on this node (no such job, or "
				"none enabled: bcsctl stats enable %u)\n",
				opt->job, opt->job);
		bcs_close(h);
		return err ? -1 : 0;
	}
	err = bcs_job_list(h, &jobs, &n);
	if (err) {
		fprintf(stderr, "bcsstat: dist: %s\n",
			bcs_strerror(err, BCS_CTX_JOB));
		bcs_close(h);
		return -1;
	}
	for (i = 0; i < n && err >= 0; i++)
		err = live_job(h, jobs[i].id, opt, set, seen, nr_seen, cap);
	free(jobs);
	bcs_close(h);
	return err < 0 ? -1 : 0;
}

static int cmp_task(const void *a, const void *b)
{
	const struct dist_task *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_job(const void *a, const void *b)
{
	const struct dist_job *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

int dist_load(const struct opts *opt, struct dist_set *set)
{
	struct seen *seen = NULL;
	size_t nr_seen = 0, cap = 0, i;
	struct json_object *o;
	int err = 0, k;

	memset(set, 0, sizeof(*set));
	if (!opt->nr_args) {
		err = live_load(opt, set, &seen, &nr_seen, &cap);
	} else {
		for (k = 0; k < opt->nr_args && !err; k++) {
			o = json_file_parse(opt->args[k]);
			if (!o) {
				err = -1;
				break;
			}
			err = docs_load(opt->args[k], o, opt, set, &seen,
					&nr_seen, &cap);
			json_object_put(o);
		}
		if (!err && (opt->given & OPT_JOB) && !set->nr_jobs) {
			fprintf(stderr, "bcsstat: dist: job %u not found in "
				"the files given\n", opt->job);
			err = -1;
		}
	}
	for (i = 0; i < nr_seen; i++)
		free(seen[i].node);
	free(seen);
	if (!err && (opt->given & OPT_PID)) {
		size_t n = 0;

		for (i = 0; i < set->nr_jobs; i++)
			n += set->jobs[i].nr_tasks;
		if (!n) {
			fprintf(stderr, "bcsstat: dist: no task %d with "
				"statistics%s\n", opt->pid,
				(opt->given & OPT_JOB) ? " in that job" : "");
			err = -1;
		}
	}
	if (err) {
		dist_free(set);
		return EXIT_FAILURE;
	}
	qsort(set->jobs, set->nr_jobs, sizeof(*set->jobs), cmp_job);
	for (i = 0; i < set->nr_jobs; i++)
		qsort(set->jobs[i].tasks, set->jobs[i].nr_tasks,
		      sizeof(*set->jobs[i].tasks), cmp_task);
	return 0;
}

/* The histograms of metric @m of @j's tasks added up; NULL if none. */
struct bcs_hist_header *dist_job_hist(const struct dist_job *j, uint32_t m,
				      int *err)
{
	struct bcs_hist_header *h = NULL;
	size_t i;

	*err = 0;
	for (i = 0; i < j->nr_tasks; i++) {
		if (!j->tasks[i].hist[m])
			continue;
		*err = bcs_hist_add(&h, j->tasks[i].hist[m]);
		if (*err) {
			free(h);
			return NULL;
		}
	}
	return h;
}

/* ---- text ---- */

/* @ns with a unit, 3 significant digits: "1.88 ms", "312 us", "0 ns". */
const char *dist_fmt_ns(char *buf, size_t len, double ns)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {
		{ 1, "ns" }, { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" },
	};
	size_t u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) &&
	       ns / units[u].scale >= 999.5)
		u++;
	snprintf(buf, len, "%.3g %s", ns / units[u].scale, units[u].unit);
	return buf;
}

static void summary_row(const char *name, const struct bcs_hist_header *h)
{
	char a[24], b[24], c[24], d[24];

	if (!h->count) {
		printf("%-10s %12s %10s %10s %10s %10s\n", name, "0", "-", "-",
		       "-", "0 ns");
		return;
	}
	printf("%-10s %12llu %10s %10s %10s %10s%s\n", name,
	       (unsigned long long)h->count,
	       dist_fmt_ns(a, sizeof(a), (double)h->min),
	       dist_fmt_ns(b, sizeof(b), (double)h->sum / (double)h->count),
	       dist_fmt_ns(c, sizeof(c), (double)h->max),
	       dist_fmt_ns(d, sizeof(d), (double)h->sum),
	       h->flags & BCS_HIST_SATURATED ? " (saturated)" : "");
}

static void summary_header(const char *first)
{
	printf("%-10s %12s %10s %10s %10s %10s\n", first, "COUNT", "MIN",
	       "AVG", "MAX", "TOTAL");
}

/* The relative width of a bucket at @sub_bits, for the heading. */
static double resolution_pct(unsigned int sub_bits)
{
	return 100.0 / (double)(1U << sub_bits);
}

/* @bytes with a binary unit, 3 significant digits: "8 B", "1 MiB". */
const char *dist_fmt_bytes(char *buf, size_t len, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >= 999.5) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%.3g %s", bytes, units[u]);
	return buf;
}

int dist_text_hist(const char *title, const struct bcs_hist_header *h,
		   dist_fmt_fn fmt)
{
	struct bcs_hist_header *show;
	struct bcs_hist_bucket *b;
	unsigned int sub = h->sub_bits;
	char lo[24], hi[24];
	uint64_t top = 0;
	uint32_t i, gap;
	int bar, err;

	/* Coarser until it fits a screen. */
	err = bcs_hist_coarsen(h, sub, &show);
	while (!err && show->nr_buckets > HIST_ROWS_MAX && sub > 0) {
		free(show);
		err = bcs_hist_coarsen(h, --sub, &show);
	}
	if (err)
		return err;
	printf("\n%s, %llu values, buckets within %.3g %%", title,
	       (unsigned long long)h->count, resolution_pct(sub));
	if (sub != h->sub_bits)
		printf(" (recorded within %.3g %%)",
		       resolution_pct(h->sub_bits));
	printf("\n  %-10s %-10s %12s\n", "FROM", "TO", "COUNT");
	b = bcs_hist_bucket_array(show);
	for (i = 0; i < show->nr_buckets; i++)
		if (b[i].count > top)
			top = b[i].count;
	for (i = 0; i < show->nr_buckets; i++) {
		/* A short gap as empty rows, a long one as "...". */
		if (i && b[i].index - b[i - 1].index > GAP_ROWS_MAX + 1)
			printf("  ...\n");
		else if (i)
			for (gap = b[i - 1].index + 1; gap < b[i].index; gap++)
				printf("  %-10s %-10s %12d\n",
				       fmt(lo, sizeof(lo), (double)
					   bcs_hist_lower(gap, sub)),
				       fmt(hi, sizeof(hi), (double)
					   bcs_hist_upper(gap, sub) + 1),
				       0);
		bar = (int)((b[i].count * BAR_WIDTH + top - 1) / top);
		printf("  %-10s %-10s %12llu %.*s\n",
		       fmt(lo, sizeof(lo),
			   (double)bcs_hist_lower(b[i].index, sub)),
		       fmt(hi, sizeof(hi),
			   (double)bcs_hist_upper(b[i].index, sub) + 1),
		       (unsigned long long)b[i].count, bar,
		       "########################################");
	}
	free(show);
	return 0;
}

static int text_hist(uint32_t m, const struct bcs_hist_header *h)
{
	char title[128];

	snprintf(title, sizeof(title), "%s: %s", bcs_dist_metric_name(m),
		 metric_what[m]);
	return dist_text_hist(title, h, dist_fmt_ns);
}

static int want_metric(const struct opts *o, uint32_t m)
{
	return !(o->given & OPT_METRIC) || o->metric == m;
}

static int text_job(const struct opts *o, const struct dist_job *j)
{
	struct bcs_hist_header *hist[BCS_DIST_METRICS] = { NULL };
	size_t i, gone = 0;
	int err = 0, any = 0;
	char rb[16];
	uint32_t m;

	for (i = 0; i < j->nr_tasks; i++)
		gone += !!(j->tasks[i].totals.flags & BCS_DIST_GONE);
	printf("job %u", j->id);
	if (j->row != BCS_ROW_NONE) {
		snprintf(rb, sizeof(rb), "%u", j->row);
		printf(" (row %s)", rb);
	}
	printf(" on ");
	for (i = 0; i < j->nr_nodes; i++) {
		printf("%s%s", i ? ", " : "", j->nodes[i]);
	}
	printf(": %zu task%s", j->nr_tasks, j->nr_tasks == 1 ? "" : "s");
	if (gone)
		printf(" (%zu gone)", gone);
	if (o->given & OPT_PID)
		printf(", pid %d", o->pid);
	printf("\n");
	for (m = 0; m < BCS_DIST_METRICS && !err; m++)
		if (want_metric(o, m))
			hist[m] = dist_job_hist(j, m, &err);
	if (err)
		goto out;
	for (m = 0; m < BCS_DIST_METRICS; m++) {
		if (!hist[m])
			continue;
		if (!any++)
			summary_header("METRIC");
		summary_row(bcs_dist_metric_name(m), hist[m]);
	}
	if (!any) {
		printf("no distribution%s recorded\n",
		       (o->given & OPT_METRIC) ? " of this metric" : "");
		goto out;
	}
	for (m = 0; m < BCS_DIST_METRICS && !err; m++)
		if (hist[m] && hist[m]->count)
			err = text_hist(m, hist[m]);
	if (err)
		goto out;

	printf("\n%-12s %8s %8s %-6s ", "NODE", "PID", "TGID", "FLAGS");
	summary_header("METRIC");
	for (i = 0; i < j->nr_tasks; i++) {
		const struct dist_task *t = &j->tasks[i];
		char tg[16], fl[8];

		snprintf(tg, sizeof(tg), t->tgid ? "%d" : "-", t->tgid);
		snprintf(fl, sizeof(fl), "%c%c",
			 t->totals.flags & BCS_DIST_GONE ? 'G' : '-',
			 t->totals.flags & BCS_DIST_TRACKING ? 'T' : '-');
		for (m = 0; m < BCS_DIST_METRICS; m++) {
			if (!t->hist[m] || !want_metric(o, m))
				continue;
			printf("%-12s %8d %8s %-6s ", t->node, t->pid, tg, fl);
			summary_row(bcs_dist_metric_name(m), t->hist[m]);
		}
	}
out:
	for (m = 0; m < BCS_DIST_METRICS; m++)
		free(hist[m]);
	if (err)
		fprintf(stderr, "bcsstat: %s\n", strerror(-err));
	return err;
}

/* ---- JSON: the dump format, merged ---- */

static int json_job(const struct opts *o, const struct dist_job *j)
{
	struct bcs_hist_header *hist[BCS_DIST_METRICS] = { NULL };
	struct bcs_dump_head head;
	struct bcs_dump *d = NULL;
	size_t i, len = 1;
	char *nodes;
	uint32_t m;
	int err = 0;

	for (i = 0; i < j->nr_nodes; i++)
		len += strlen(j->nodes[i]) + 1;
	nodes = calloc(1, len);
	if (!nodes)
		return -ENOMEM;
	for (i = 0; i < j->nr_nodes; i++) {
		if (i)
			strcat(nodes, ",");
		strcat(nodes, j->nodes[i]);
	}
	for (m = 0; m < BCS_DIST_METRICS && !err; m++)
		if (want_metric(o, m))
			hist[m] = dist_job_hist(j, m, &err);
	memset(&head, 0, sizeof(head));
	head.job = j->id;
	head.row = j->row;
	head.node = nodes;
	head.bcs_version = LIBBCS_VERSION;
	head.time_ns = j->time_ns;
	head.monotonic_ns = j->monotonic_ns;
	for (m = 0; m < BCS_DIST_METRICS; m++)
		head.merged[m] = hist[m];
	if (!err)
		err = bcs_dump_begin(stdout, &head, &d);
	for (i = 0; i < j->nr_tasks && !err; i++) {
		const struct dist_task *t = &j->tasks[i];
		struct bcs_dump_task dt;

		memset(&dt, 0, sizeof(dt));
		dt.pid = t->pid;
		dt.tgid = t->tgid;
		dt.node = t->node;
		dt.totals = t->totals;
		for (m = 0; m < BCS_DIST_METRICS; m++)
			if (want_metric(o, m))
				dt.hist[m] = t->hist[m];
		err = bcs_dump_task(d, &dt);
	}
	if (d) {
		int end = bcs_dump_end(d);

		if (!err)
			err = end;
	}
	for (m = 0; m < BCS_DIST_METRICS; m++)
		free(hist[m]);
	free(nodes);
	return err;
}

/* bcsd answers a gather within about 3 s of the master's reply. */
#define GATHER_WAIT_MS	15000

static uint64_t tree_u64(struct json_object *o, const char *k)
{
	int64_t v = bcs_ctl_int(o, k, 0);

	return v < 0 ? 0 : (uint64_t)v;
}

int mpi_gather_call(int fd, uint32_t job, int by_file,
		    struct json_object **resp, char *msg, size_t len)
{
	struct json_object *req = json_object_new_object();
	int r;

	json_object_object_add(req, "cmd", json_object_new_string("mpi-gather"));
	json_object_object_add(req, "job", json_object_new_int64(job));
	if (by_file)
		json_object_object_add(req, "files", json_object_new_int(1));
	r = bcs_ctl_call(fd, req, resp, GATHER_WAIT_MS, msg, len);
	close(fd);
	return r;
}

void tree_answer_head(struct json_object *o, const char *lack, int ranks)
{
	uint64_t missing = tree_u64(o, "missing"), n;

	printf("job %" PRIu64 ":", tree_u64(o, "job"));
	n = tree_u64(o, "ranks");
	if (ranks)
		printf(" %" PRIu64 " rank%s", n, n == 1 ? "" : "s");
	printf(" through the tree of daemons: nodes covered %" PRIu64
	       ", missing %" PRIu64 "%s%s%s\n", tree_u64(o, "nodes"), missing,
	       missing ? " (incomplete: " : "", missing ? lack : "",
	       missing ? " lack them)" : "");
	n = tree_u64(o, "dropped");
	if (n)
		printf("%" PRIu64 " record%s or histogram%s left out by the "
		       "bounds of an answer (not exact)\n", n,
		       n == 1 ? "" : "s", n == 1 ? "" : "s");
}

/*
 * Job @o->job cluster-wide: bcsd's gather merged up the tree of daemons
 * (Documentation/filters.rst), each node's tasks' distributions added
 * per metric.  1 when printed (0 or EXIT_FAILURE in *@ret), 0 to read
 * this node's instead (no bcsd here, or no tree: said on stderr).
 */
static int tree_dist(const struct opts *o, int *ret)
{
	struct json_object *resp, *v, *hs, *h;
	struct bcs_hist_header *hist;
	char msg[256];
	uint32_t m;
	size_t i, nr = 0;
	int fd, r, any = 0;

	fd = bcs_ctl_connect();
	if (fd < 0)
		return 0;
	r = mpi_gather_call(fd, o->job, 0, &resp, msg, sizeof(msg));
	if (r) {
		fprintf(stderr, "bcsstat: dist: bcsd: %s; this node's tasks "
			"only\n", r == -ETIMEDOUT ? "no answer" : msg);
		return 0;
	}
	if (!json_object_object_get_ex(resp, "tree", &v) ||
	    !json_object_get_boolean(v)) {
		json_object_put(resp);
		fprintf(stderr, "bcsstat: dist: bcsd gathers without a tree; "
			"this node's tasks only\n");
		return 0;
	}
	tree_answer_head(resp, "the distributions", 0);
	if (json_object_object_get_ex(resp, "histograms", &hs) &&
	    json_object_is_type(hs, json_type_array))
		nr = json_object_array_length(hs);
	*ret = 0;
	for (m = 0; m < BCS_DIST_METRICS && !*ret; m++) {
		if (!want_metric(o, m))
			continue;
		for (i = 0; i < nr && !*ret; i++) {
			h = json_object_array_get_idx(hs, i);
			if (!json_object_object_get_ex(h, "kind", &v) ||
			    strcmp(json_object_get_string(v), "dist") ||
			    !json_object_object_get_ex(h, "name", &v) ||
			    strcmp(json_object_get_string(v),
				   bcs_dist_metric_name(m)))
				continue;
			hist = dist_hist_parse("bcsd", h, bcs_dist_metric_name(m));
			if (!hist) {
				*ret = EXIT_FAILURE;
				break;
			}
			if (!any++)
				summary_header("METRIC");
			summary_row(bcs_dist_metric_name(m), hist);
			if (hist->count && text_hist(m, hist))
				*ret = EXIT_FAILURE;
			free(hist);
		}
	}
	if (!any && !*ret)
		printf("no distribution%s recorded\n",
		       (o->given & OPT_METRIC) ? " of this metric" : "");
	json_object_put(resp);
	return 1;
}

int run_dist(const struct opts *o)
{
	struct dist_set set;
	size_t i;
	int err = 0;

	/* Text of one job, live: cluster-wide through bcsd's tree. */
	if ((o->given & OPT_JOB) && !o->nr_args && !(o->given & OPT_PID) &&
	    !(o->given & OPT_JSON) && tree_dist(o, &err))
		return err;
	if (dist_load(o, &set))
		return EXIT_FAILURE;
	if (o->given & OPT_JSON) {
		/* An array of dumps, one per job: bcsstat dist reads it. */
		fputs("[", stdout);
		for (i = 0; i < set.nr_jobs && !err; i++) {
			fputs(i ? ",\n" : "\n", stdout);
			err = json_job(o, &set.jobs[i]);
		}
		fputs("]\n", stdout);
	} else if (!set.nr_jobs) {
		printf("no job has statistics on this node\n");
	} else {
		for (i = 0; i < set.nr_jobs && !err; i++) {
			if (i)
				printf("\n");
			err = text_job(o, &set.jobs[i]);
		}
	}
	dist_free(&set);
	if (err) {
		fprintf(stderr, "bcsstat: dist: %s\n", strerror(-err));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}


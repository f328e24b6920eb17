// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: the text report of a job (report.h).  Everything it prints
 * is bounded by the ranks it is given: names come checked and terminated
 * from the reader (mpifile.c), regions and call sites are bounded there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

extern char **environ;

/* Records outside the measured time: MPI_Init's and MPI_Finalize's. */
static int outside(const char *name)
{
	return !strcmp(name, "MPI_Init") || !strcmp(name, "MPI_Init_thread") ||
	       !strcmp(name, "MPI_Finalize");
}

/* Record @i of @st is time inside MPI within the measured time. */
static int in_mpi(const struct bcs_mpi_stats *st, uint32_t i)
{
	return i > BCS_MPI_PRIM_COMM && !outside(st->prims[i].name);
}

uint64_t bcsmpi_mpi_time(const struct bcs_mpi_stats *st)
{
	uint64_t t = 0;
	uint32_t i;

	for (i = 0; i < st->hdr->nr_prims; i++)
		if (in_mpi(st, i))
			t += bcs_mpi_prim_time(&st->prims[i]);
	return t;
}

uint64_t bcsmpi_app_time(const struct bcs_mpi_stats *st)
{
	const struct bcs_mpi_file_header *h = st->hdr;
	uint64_t t;

	if (!(h->flags & BCS_MPI_COMPLETE) || h->finalize_ns < h->init_ns)
		return 0;
	t = h->finalize_ns - h->init_ns;
	return h->paused_ns < t ? t - h->paused_ns : 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void bcsmpi_report_ranks(FILE *out, const struct bcs_mpi_stats *st, int n)
{
	uint64_t app, mpi, calls, bytes, tapp = 0, tmpi = 0, tc = 0, tb = 0;
	uint32_t i;
	int k;

	fprintf(out, "%6s %-20s %12s %12s %7s %12s %16s\n", "Rank", "Host",
		"App(ms)", "MPI(ms)", "MPI%", "Calls", "Bytes");
	for (k = 0; k < n; k++) {
		app = bcsmpi_app_time(&st[k]);
		mpi = bcsmpi_mpi_time(&st[k]);
		calls = bytes = 0;
		for (i = 0; i < st[k].hdr->nr_prims; i++) {
			if (!in_mpi(&st[k], i))
				continue;
			calls += st[k].prims[i].calls;
			bytes += st[k].prims[i].bytes;
		}
		if (app)
			fprintf(out, "%6d %-20.20s %12.3f %12.3f %7.2f %12"
				PRIu64 " %16" PRIu64 "\n", st[k].hdr->rank,
				st[k].hdr->host, app / 1e6, mpi / 1e6,
				pct(mpi, app), calls, bytes);
		else
			fprintf(out, "%6d %-20.20s %12s %12.3f %7s %12" PRIu64
				" %16" PRIu64 "\n", st[k].hdr->rank,
				st[k].hdr->host, "-", mpi / 1e6, "-", calls,
				bytes);
		tapp += app;
		tmpi += mpi;
		tc += calls;
		tb += bytes;
	}
	fprintf(out, "%6s %-20s %12.3f %12.3f %7.2f %12" PRIu64 " %16" PRIu64
		"\n", "*", "", tapp / 1e6, tmpi / 1e6, pct(tmpi, tapp), tc, tb);
}

/* The primitives of all ranks by total time, with their share. */
static void report_prims(FILE *out, const struct bcs_mpi_stats *st, int n)
{
	const struct bcs_mpi_prim *p0 = st[0].prims;
	uint64_t tapp = 0, tmpi = 0, calls, t, bytes;
	uint32_t i, j;
	int k;

	for (k = 0; k < n; k++) {
		tapp += bcsmpi_app_time(&st[k]);
		tmpi += bcsmpi_mpi_time(&st[k]);
	}
	fprintf(out, "%-24s %12s %12s %7s %7s %16s\n", "Primitive", "Calls",
		"Time(ms)", "App%", "MPI%", "Bytes");
	for (i = 0; i < st[0].hdr->nr_prims; i++) {
		if (!in_mpi(&st[0], i))
			continue;
		calls = t = bytes = 0;
		for (k = 0; k < n; k++)
			for (j = 0; j < st[k].hdr->nr_prims; j++)
				if (!strcmp(st[k].prims[j].name, p0[i].name)) {
					calls += st[k].prims[j].calls;
					t += bcs_mpi_prim_time(&st[k].prims[j]);
					bytes += st[k].prims[j].bytes;
					break;
				}
		if (calls)
			fprintf(out, "%-24s %12" PRIu64 " %12.3f %7.2f %7.2f "
				"%16" PRIu64 "\n", p0[i].name, calls, t / 1e6,
				pct(t, tapp), pct(t, tmpi), bytes);
	}
}

void bcsmpi_report_regions(FILE *out, const struct bcs_mpi_stats *st, int n)
{
	const struct bcs_mpi_region *r;
	const struct bcs_mpi_rprim *rp;
	uint64_t entries, time, mpi, calls, t, bytes;
	uint32_t i, j, m;
	int k, ranks, any = 0;

	/* Regions by name, in the order of the first rank that has them. */
	for (k = 0; k < n; k++) {
		for (i = 0; st[k].regions && i < st[k].hdr->nr_regions; i++) {
			const char *name = st[k].regions[i].name;
			int seen = 0, q;

			if (!name[0])
				continue;
			for (q = 0; q < k && !seen; q++)
				for (m = 0; st[q].regions &&
				     m < st[q].hdr->nr_regions; m++)
					if (!strcmp(st[q].regions[m].name,
						    name)) {
						seen = 1;
						break;
					}
			if (seen)
				continue;
			if (!any++)
				fprintf(out, "%-24s %6s %10s %12s %12s %7s\n",
					"Region", "Ranks", "Entries",
					"Time(ms)", "MPI(ms)", "MPI%");
			entries = time = mpi = 0;
			ranks = 0;
			for (q = k; q < n; q++)
				for (m = 0; st[q].regions &&
				     m < st[q].hdr->nr_regions; m++) {
					r = &st[q].regions[m];
					if (strcmp(r->name, name))
						continue;
					ranks++;
					entries += r->entries;
					time += r->time_ns;
					rp = &st[q].rprims[(size_t)m *
							   st[q].hdr->nr_prims];
					for (j = 0; j < st[q].hdr->nr_prims; j++)
						if (in_mpi(&st[q], j))
							mpi += rp[j].total_ns;
					break;
				}
			fprintf(out, "%-24s %6d %10" PRIu64 " %12.3f %12.3f "
				"%7.2f\n", name, ranks, entries, time / 1e6,
				mpi / 1e6, pct(mpi, time));
			/* Its primitives, over the ranks. */
			for (j = 0; j < st[k].hdr->nr_prims; j++) {
				if (!in_mpi(&st[k], j))
					continue;
				calls = t = bytes = 0;
				for (q = k; q < n; q++)
					for (m = 0; st[q].regions &&
					     m < st[q].hdr->nr_regions &&
					     j < st[q].hdr->nr_prims; m++) {
						if (strcmp(st[q].regions[m].name,
							   name))
							continue;
						rp = &st[q].rprims[
							(size_t)m *
							st[q].hdr->nr_prims + j];
						calls += rp->calls;
						t += rp->total_ns;
						bytes += rp->bytes;
						break;
					}
				if (calls)
					fprintf(out, "  %-22s %12" PRIu64
						" calls %12.3f ms %16" PRIu64
						" bytes\n",
						st[k].prims[j].name, calls,
						t / 1e6, bytes);
			}
		}
	}
	if (!any)
		fprintf(out, "(no region entered: MPI_Pcontrol(1, \"name\") "
			"with BCS_MPI_REGIONS=1)\n");
}

/* One call site over the ranks. */
struct site_row {
	const char *prim, *module;
	uint64_t offset, calls, time, bytes;
	char where[520];
};

static int by_time(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;

	return x->time < y->time ? 1 : x->time > y->time ? -1 : 0;
}

/*
 * The function and file:line of the @n rows of @rows in @module, from
 * addr2line's output (two lines per address); left as they are if it
 * cannot run.  The return address minus 1 is the call's instruction.
 */
static void resolve(struct site_row **rows, int n, const char *module)
{
	char *argv[8 + BCSMPI_REPORT_SITES], hex[BCSMPI_REPORT_SITES][24];
	char fn[256], line[256];
	posix_spawn_file_actions_t fa;
	struct stat sb;
	int fd[2], a = 0, k, status;
	FILE *in;
	pid_t pid;

	if (module[0] != '/' || stat(module, &sb) || !S_ISREG(sb.st_mode) ||
	    pipe2(fd, O_CLOEXEC))
		return;
	argv[a++] = "addr2line";
	argv[a++] = "-f";
	argv[a++] = "-C";
	argv[a++] = "-e";
	argv[a++] = (char *)module;
	for (k = 0; k < n; k++) {
		snprintf(hex[k], sizeof(hex[k]), "0x%" PRIx64,
			 rows[k]->offset ? rows[k]->offset - 1 : 0);
		argv[a++] = hex[k];
	}
	argv[a] = NULL;
	if (posix_spawn_file_actions_init(&fa)) {
		close(fd[0]);
		close(fd[1]);
		return;
	}
	posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null",
					 O_WRONLY, 0);
	if (posix_spawnp(&pid, "addr2line", &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		close(fd[0]);
		close(fd[1]);
		return;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	in = fdopen(fd[0], "r");
	for (k = 0; in && k < n; k++) {
		if (!fgets(fn, sizeof(fn), in) || !fgets(line, sizeof(line), in))
			break;
		fn[strcspn(fn, "\n")] = 0;
		line[strcspn(line, "\n")] = 0;
		/* "??:0" or "??:?": no debug information there. */
		if (!strncmp(line, "??", 2))
			continue;
		snprintf(rows[k]->where, sizeof(rows[k]->where), "%s (%s)",
			 line, fn);
	}
	if (in)
		fclose(in);
	else
		close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

void bcsmpi_report_sites(FILE *out, const struct bcs_mpi_stats *st, int n,
			 int resolve_lines)
{
	struct site_row *rows = NULL, *r, *batch[BCSMPI_REPORT_SITES];
	size_t nr = 0, cap = 0, i, j;
	uint32_t m;
	int k, b;

	for (k = 0; k < n; k++) {
		for (m = 0; st[k].sites && m < st[k].hdr->nr_sites; m++) {
			const struct bcs_mpi_site *s = &st[k].sites[m];

			if (!s->calls)
				continue;
			for (i = 0; i < nr; i++)
				if (rows[i].offset == s->offset &&
				    !strcmp(rows[i].module, s->module) &&
				    !strcmp(rows[i].prim,
					    st[k].prims[s->prim].name))
					break;
			if (i == nr) {
				if (nr == cap) {
					cap = cap ? 2 * cap : 64;
					r = realloc(rows, cap * sizeof(*r));
					if (!r)
						break;
					rows = r;
				}
				r = &rows[nr++];
				memset(r, 0, sizeof(*r));
				r->prim = st[k].prims[s->prim].name;
				r->module = s->module;
				r->offset = (uint64_t)s->offset;
				snprintf(r->where, sizeof(r->where),
					 "%s+0x%" PRIx64,
					 s->module[0] ? s->module : "?",
					 (uint64_t)s->offset);
			}
			rows[i].calls += s->calls;
			rows[i].time += s->total_ns;
			rows[i].bytes += s->bytes;
		}
	}
	if (!nr) {
		fprintf(out, "(no call site kept: BCS_MPI_SITES=1)\n");
		free(rows);
		return;
	}
	qsort(rows, nr, sizeof(*rows), by_time);
	if (nr > BCSMPI_REPORT_SITES) {
		fprintf(out, "(%zu call sites; the %d of most time)\n", nr,
			BCSMPI_REPORT_SITES);
		nr = BCSMPI_REPORT_SITES;
	}
	/* One addr2line per object, with all its addresses. */
	for (i = 0; resolve_lines && i < nr; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(rows[j].module, rows[i].module))
				break;
		if (j < i)
			continue;
		for (b = 0, j = i; j < nr; j++)
			if (!strcmp(rows[j].module, rows[i].module))
				batch[b++] = &rows[j];
		resolve(batch, b, rows[i].module);
	}
	fprintf(out, "%4s %-22s %12s %12s %16s  %s\n", "Id", "Primitive",
		"Calls", "Time(ms)", "Bytes", "Site");
	for (i = 0; i < nr; i++)
		fprintf(out, "%4zu %-22s %12" PRIu64 " %12.3f %16" PRIu64
			"  %s\n", i + 1, rows[i].prim, rows[i].calls,
			rows[i].time / 1e6, rows[i].bytes, rows[i].where);
	free(rows);
}

void bcsmpi_report(FILE *out, const struct bcs_mpi_stats *st, int n,
		   int resolve_lines)
{
	const struct bcs_mpi_file_header *h = st[0].hdr;
	char when[64] = "";
	struct tm tm;
	time_t now = time(NULL);

	if (localtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm);
	fprintf(out, "@ libbcsmpi report of job %s: %d rank%s of %d, %s, "
		"written %s\n", h->job[0] ? h->job : "(none)", n,
		n == 1 ? "" : "s", h->world_size, h->mpi, when);
	fprintf(out, "\n--- MPI time per rank (App: MPI_Init to MPI_Finalize, "
		"less MPI_Pcontrol(0)'s pauses)\n");
	bcsmpi_report_ranks(out, st, n);
	fprintf(out, "\n--- Primitives over all ranks\n");
	report_prims(out, st, n);
	fprintf(out, "\n--- Regions (MPI_Pcontrol)\n");
	bcsmpi_report_regions(out, st, n);
	fprintf(out, "\n--- Call sites\n");
	bcsmpi_report_sites(out, st, n, resolve_lines);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * matrix_replay: a deterministic workload replay comparing gang-scheduling
 * matrices, on the host (issue 39, "Workload replay").
 *
 *   matrix_replay [--swf PATH] [--mpl N] [--slice S] [--move-interval S]
 *                 [--jobs N] [--nodes N] [--policy NAME] [--csv] [--check]
 *                 [--select block|least] [--dc FRACTION]
 *   matrix_replay --scale [--nodes N] [--mpl N] [--jobs N] [--reps N]
 *
 * Reads a workload in the Standard Workload Format (default
 * ../shared/workloads/lublin_256.swf from the top of the repository;
 * fields 1 id, 2 submit, 4 run time, 5 processors; one processor is one
 * node) and replays it under each policy:
 *   fcfs            space sharing, first come first served;
 *   easy            space sharing, EASY backfilling;
 *   slurm-gang      Slurm's sched/gang: each slice the jobs that ran move
 *                   to the back of the list and the active row is rebuilt
 *                   by first fit over it; a job that ends lets suspended
 *                   jobs that now fit resume, a new job runs at once if it
 *                   fits the active row;
 *   bcs-row         daemon/master/matrix.c, MATRIX_ONE_PER_ROW, no alternates,
 *                   at most 64 jobs admitted (bcs's old limit);
 *   bcs-pack        daemon/master/matrix.c, MATRIX_PACK with MATRIX_ALTERNATE;
 *   bcs-pack-noalt  MATRIX_PACK alone;
 *   bcs-pack-fill   bcs-pack with Flexible CoScheduling's fill for the
 *                   jobs marked DC (below).
 * The bcs policies take turns over matrix_rows_used() as bcs.ko does
 * (bcs_row_next()), one row per slice; a job progresses in a slice when
 * the slice's row is in its row set.  The matrix code is the master's own
 * (daemon/master/matrix.c, compiled in).  Gang policies admit a job when @procs
 * nodes each host fewer than MPL jobs, on nodes chosen by one rule for all
 * (select_nodes(): aligned blocks, or with --select least the least-loaded
 * nodes), in FCFS order with EASY-style backfilling (see admit()).
 * Each MPL (2 and 4 unless --mpl) gets a table: utilisation, mean response
 * time, mean bounded slowdown (10 s), rows used, moves per job and the
 * CPU time of the matrix calls per placement.  Everything but the CPU
 * times is the same on every run.
 *
 * DC ("don't care") jobs, a fraction --dc (0.25) of the jobs chosen by a
 * hash of the trace's job id, need no coscheduling: each of their tasks
 * progresses on its own.  Under every policy but bcs-pack-fill they are
 * scheduled as any job.  Under bcs-pack-fill (bcs.ko's fill rule: on a
 * node idle in the current row, its filler jobs run), a DC job's task on
 * node n also progresses in a slice whose row is not in the job's row set
 * if node n is idle in that row (no admitted job there has the row in its
 * row set: node_idle()); fillers of one idle node share it, one at a time,
 * the one that has had the least CPU first (fill_pick()).  A DC job ends
 * when all its tasks have done their work (the run time each).  A table
 * with bcs-pack or bcs-pack-fill ends with the mean bounded slowdown of
 * the DC jobs and of the others.
 *
 * --check runs matrix_check() after every placement and, under
 * bcs-pack-fill, checks node_idle() against the jobs' row sets and the
 * fillers that run at every pick (check_fill()).
 *
 * Time moves in slices (--slice, 30 s: Slurm's SchedulerTimeSlice); jobs
 * start and end between slice boundaries (a finish is exact: times are
 * whole seconds).  Space sharing has no slices.
 *
 * --scale times matrix_add() + matrix_compact() + matrix_alternates(),
 * and matrix_remove() + the same, with a matrix holding --jobs (4096)
 * synthetic jobs on --nodes (4096) nodes at MPL 4 (seeded PRNG), their
 * nodes at random, then in aligned blocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/bcs.h>

#include "master/matrix.h"

#define DEFAULT_SWF	"../shared/workloads/lublin_256.swf"
#define BSLD_BOUND	10		/* s, bounded slowdown's floor */
#define ROW_JOBS_MAX	64		/* bcs-row: bcs.ko's old job limit */
#define MPL_MAX		64
#define SCALE_SEED	0x5eed2026U
#define DC_DEFAULT	0.25		/* --dc */

enum kind {
	K_FCFS,
	K_EASY,
	K_SLURM,
	K_ROW,
	K_PACK,
	K_PACK_NOALT,
	K_PACK_FILL,
	K_NR,
};

struct policy {
	const char *name;
	bool gang;		/* time-shared, admitted under MPL */
	bool backfill;
	bool matrix;		/* uses daemon/master/matrix.c */
	enum matrix_policy mpol;
	uint32_t mflags;
	bool fill;		/* DC jobs fill idle nodes */
};

static const struct policy policies[K_NR] = {
	[K_FCFS]	= { "fcfs", false, false, false, 0, 0 },
	[K_EASY]	= { "easy", false, true, false, 0, 0 },
	[K_SLURM]	= { "slurm-gang", true, true, false, 0, 0 },
	[K_ROW]		= { "bcs-row", true, true, true, MATRIX_ONE_PER_ROW, 0 },
	[K_PACK]	= { "bcs-pack", true, true, true, MATRIX_PACK,
			    MATRIX_ALTERNATE },
	[K_PACK_NOALT]	= { "bcs-pack-noalt", true, true, true, MATRIX_PACK, 0 },
	[K_PACK_FILL]	= { "bcs-pack-fill", true, true, true, MATRIX_PACK,
			    MATRIX_ALTERNATE, true },
};

struct tjob {
	uint32_t id;		/* the trace's */
	uint32_t procs;
	int64_t submit;		/* s */
	int64_t run;		/* s, > 0 */
	bool dc;		/* needs no coscheduling (--dc) */
};

struct trace {
	struct tjob *j;
	uint32_t n;
	uint32_t nodes;
	uint32_t skipped;
	uint32_t requested;	/* jobs with a requested time (ignored) */
	uint32_t dc;		/* jobs marked DC */
};

/* A job's state in one replay. */
struct sj {
	int64_t rem;		/* run time left (a filler: its tasks' most) */
	int64_t finish;
	uint32_t *nodes;	/* while admitted */
	/* A filler (DC job under a fill policy), while admitted, per node: */
	int64_t *trem;		/* the task's run time left */
	uint8_t *tprog;		/* the task progresses now */
	bool on;		/* progresses now (a filler: in its own rows) */
	bool admitted;
};

struct result {
	bool valid;
	double util, resp, bsld;
	bool has_rows;
	double rows_mean;
	uint32_t rows_max;
	double moves;
	bool has_pl;
	double pl_mean, pl_max;	/* us */
	uint32_t overfull_max;
	double bsld_dc, bsld_rest;	/* of the DC jobs, of the others */
};

struct sim {
	const struct trace *tr;
	const struct policy *pol;
	enum kind kind;
	uint32_t mpl;		/* 1 for space sharing */
	uint32_t nodes;
	int64_t q;		/* slice */
	int64_t now;
	struct sj *s;
	uint32_t *wait, nwait;	/* FCFS queue: trace indices */
	uint32_t *adm, nadm;	/* admitted, in admission order */
	uint32_t *load;		/* per node: admitted jobs there */
	uint32_t nfit;		/* nodes with load < mpl */
	uint32_t max_jobs;	/* admitted at most (bcs-row) */
	uint8_t *act;		/* slurm-gang: node in the active row */
	uint32_t *pick;		/* scratch: a job's nodes */
	uint32_t *loads;	/* scratch: per-node load at the shadow time */
	struct resv_ent { int64_t end; uint32_t k; } *ends;
	struct matrix_res *res;	/* scratch */
	struct matrix m;
	uint32_t row;		/* the strobe's row */
	uint32_t *fill_by;	/* per node: filler job + 1 that runs, or 0 */
	int64_t *fill_got;	/* per node: its CPU time so far */
	bool refill;		/* a filler's task ended: pick again */
	bool check;
	/* statistics */
	uint32_t done;
	int64_t first_submit, last_finish;
	double sum_resp, sum_bsld, sum_bsld_dc;
	double rows_time, rows_busy;	/* sum of rows * dt, sum of dt */
	uint32_t rows_max;
	uint64_t moves;
	uint64_t pl_n;
	double pl_sum, pl_max;	/* ns */
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "matrix_replay: out of memory\n");
		exit(1);
	}
	return p;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- the trace ---- */

static int cmp_submit(const void *a, const void *b)
{
	const struct tjob *x = a, *y = b;

	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Read @path into @tr: jobs with a run time or processor count <= 0, or
 * more processors than nodes, are skipped and counted; the first @max
 * jobs kept (0: all).  @nodes overrides the header's MaxNodes.  0 or -1
 * (said on stderr).
 */
static int read_swf(const char *path, uint32_t nodes, uint32_t max,
		    struct trace *tr)
{
	char line[4096];
	uint32_t cap = 0, lineno = 0, hdr_nodes = 0;
	FILE *f = fopen(path, "r");

	memset(tr, 0, sizeof(*tr));
	if (!f) {
		fprintf(stderr, "matrix_replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* The header first: MaxNodes decides which jobs fit. */
	while (fgets(line, sizeof(line), f)) {
		unsigned long v;

		if (line[0] != ';')
			continue;
		if (sscanf(line, "; MaxNodes: %lu", &v) == 1 && v && v <= UINT32_MAX)
			hdr_nodes = (uint32_t)v;
		else if (!hdr_nodes &&
			 sscanf(line, "; MaxProcs: %lu", &v) == 1 && v && v <= UINT32_MAX)
			hdr_nodes = (uint32_t)v;
	}
	tr->nodes = nodes ? nodes : hdr_nodes;
	if (!tr->nodes) {
		fprintf(stderr, "matrix_replay: %s: no MaxNodes or MaxProcs in "
			"the header: give --nodes\n", path);
		fclose(f);
		return -1;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		double v[18];
		char *p = line, *end;
		int nf = 0;
		struct tjob *j;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			fprintf(stderr, "matrix_replay: %s:%u: line too long\n",
				path, lineno);
			goto bad;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == ';' || *p == '\n' || *p == '\r' || !*p)
			continue;
		while (nf < 18) {
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == '\n' || *p == '\r' || !*p)
				break;
			errno = 0;
			v[nf] = strtod(p, &end);
			if (end == p || errno || !isfinite(v[nf]) ||
			    (*end && *end != ' ' && *end != '\t' &&
			     *end != '\n' && *end != '\r')) {
				fprintf(stderr, "matrix_replay: %s:%u: field %d "
					"is not a number\n", path, lineno, nf + 1);
				goto bad;
			}
			p = end;
			nf++;
		}
		if (nf < 5) {
			fprintf(stderr, "matrix_replay: %s:%u: %d fields, an SWF "
				"job has 18 (at least 5 needed)\n", path, lineno,
				nf);
			goto bad;
		}
		if (v[0] < 0 || v[0] > UINT32_MAX || v[1] < 0 || v[1] > 1e15) {
			fprintf(stderr, "matrix_replay: %s:%u: bad job number or "
				"submit time\n", path, lineno);
			goto bad;
		}
		if (v[3] <= 0 || v[4] <= 0 || v[4] > tr->nodes || v[3] > 1e12 ||
		    llround(v[3]) <= 0) {
			tr->skipped++;
			continue;
		}
		if (max && tr->n >= max)
			continue;
		if (tr->n == cap) {
			struct tjob *nj;

			cap = cap ? 2 * cap : 1024;
			nj = realloc(tr->j, cap * sizeof(*nj));
			if (!nj) {
				fprintf(stderr, "matrix_replay: out of memory\n");
				goto bad;
			}
			tr->j = nj;
		}
		j = &tr->j[tr->n++];
		j->id = (uint32_t)v[0];
		j->submit = llround(v[1]);
		j->run = llround(v[3]);
		j->procs = (uint32_t)llround(v[4]);
		if (nf >= 9 && v[8] > 0)
			tr->requested++;
	}
	if (ferror(f)) {
		fprintf(stderr, "matrix_replay: %s: read error\n", path);
		goto bad;
	}
	fclose(f);
	if (!tr->n) {
		fprintf(stderr, "matrix_replay: %s: no job to replay\n", path);
		free(tr->j);
		tr->j = NULL;
		return -1;
	}
	/* SWF is in submit order; make sure, keeping the file's order on ties. */
	qsort(tr->j, tr->n, sizeof(*tr->j), cmp_submit);
	return 0;
bad:
	fclose(f);
	free(tr->j);
	tr->j = NULL;
	return -1;
}

/*
 * Is the job of trace id @id one of the fraction @frac (0..1) marked DC?
 * By a hash of the id, so that a job keeps its mark whatever the other
 * jobs, the options or the order of the file.
 */
static bool dc_job(uint32_t id, double frac)
{
	uint64_t x = id;

	x *= 0x9e3779b97f4a7c15ULL;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return (double)(x >> 11) < frac * (double)(1ULL << 53);
}

static void mark_dc(struct trace *tr, double frac)
{
	uint32_t i;

	tr->dc = 0;
	for (i = 0; i < tr->n; i++) {
		tr->j[i].dc = dc_job(tr->j[i].id, frac);
		tr->dc += tr->j[i].dc;
	}
}

/* ---- one replay ---- */

/* A job's estimated wall time left: its run time left, stretched by MPL. */
static int64_t est_left(const struct sim *S, int64_t rem)
{
	return rem * S->mpl;
}

static bool fits(const struct sim *S, uint32_t procs)
{
	return S->nfit >= procs && S->nadm < S->max_jobs;
}

/*
 * The nodes for @procs into S->pick, by the same rule for every policy.
 * SEL_LEAST: the least-loaded nodes, ties by the lowest index.
 * SEL_BLOCK (buddy-like): within the aligned block of 2^k >= @procs nodes
 * whose @procs least-loaded nodes carry the fewest jobs (ties: the lowest
 * block), those nodes; SEL_LEAST if no block has room.  Jobs then nest or
 * are disjoint, and the rows they need come near the most jobs on a node.
 */
enum select_rule { SEL_BLOCK, SEL_LEAST };
static enum select_rule sel_rule = SEL_BLOCK;

static void select_least(struct sim *S, uint32_t procs, uint32_t from,
			 uint32_t to)
{
	uint32_t got = 0, lvl, n;

	for (lvl = 0; lvl < S->mpl && got < procs; lvl++)
		for (n = from; n < to && got < procs; n++)
			if (S->load[n] == lvl)
				S->pick[got++] = n;
}

static void select_nodes(struct sim *S, uint32_t procs)
{
	uint32_t size = 1, b, best = UINT32_MAX, n;
	uint64_t best_cost = UINT64_MAX;
	uint32_t cnt[MPL_MAX];

	if (sel_rule == SEL_LEAST || S->mpl == 1) {
		select_least(S, procs, 0, S->nodes);
		return;
	}
	while (size < procs)
		size <<= 1;
	for (b = 0; b + size <= S->nodes; b += size) {
		uint32_t need = procs, lvl;
		uint64_t cost = 0;

		memset(cnt, 0, S->mpl * sizeof(*cnt));
		for (n = b; n < b + size; n++)
			if (S->load[n] < S->mpl)
				cnt[S->load[n]]++;
		for (lvl = 0; lvl < S->mpl && need; lvl++) {
			uint32_t take = cnt[lvl] < need ? cnt[lvl] : need;

			cost += (uint64_t)take * lvl;
			need -= take;
		}
		if (!need && cost < best_cost) {
			best_cost = cost;
			best = b;
		}
	}
	if (best == UINT32_MAX)
		select_least(S, procs, 0, S->nodes);
	else
		select_least(S, procs, best, best + size);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void place_timed(struct sim *S, uint64_t t0)
{
	double ns = (double)(cpu_ns() - t0);

	S->pl_n++;
	S->pl_sum += ns;
	if (ns > S->pl_max)
		S->pl_max = ns;
}

static void check_matrix(struct sim *S)
{
	char why[256];

	if (S->check && matrix_check(&S->m, why, sizeof(why))) {
		fprintf(stderr, "matrix_replay: %s at t=%lld: matrix_check: %s\n",
			S->pol->name, (long long)S->now, why);
		exit(1);
	}
}

static void start_job(struct sim *S, uint32_t k)
{
	const struct tjob *j = &S->tr->j[k];
	struct sj *s = &S->s[k];
	uint32_t i;

	select_nodes(S, j->procs);
	s->nodes = xcalloc(j->procs, sizeof(*s->nodes));
	memcpy(s->nodes, S->pick, j->procs * sizeof(*s->nodes));
	qsort(s->nodes, j->procs, sizeof(*s->nodes), cmp_u32);
	for (i = 0; i < j->procs; i++)
		if (++S->load[s->nodes[i]] == S->mpl)
			S->nfit--;
	s->rem = j->run;
	if (S->pol->fill && j->dc) {
		s->trem = xcalloc(j->procs, sizeof(*s->trem));
		s->tprog = xcalloc(j->procs, sizeof(*s->tprog));
		for (i = 0; i < j->procs; i++)
			s->trem[i] = j->run;
	}
	s->admitted = true;
	s->on = !S->pol->gang;
	S->adm[S->nadm++] = k;

	if (S->kind == K_SLURM) {
		/* gs_job_start(): it runs now if it fits the active row. */
		bool ok = true;

		for (i = 0; i < j->procs && ok; i++)
			ok = !S->act[s->nodes[i]];
		if (ok)
			for (i = 0; i < j->procs; i++)
				S->act[s->nodes[i]] = 1;
		s->on = ok;
	} else if (S->pol->matrix) {
		uint64_t t0;
		int r;

		for (i = 0; i < j->procs; i++) {
			S->res[i].node = s->nodes[i];
			S->res[i].cpus = MATRIX_CPUS_ALL;
		}
		t0 = cpu_ns();
		r = matrix_add(&S->m, k + 1, S->res, j->procs, MATRIX_ROW_NONE,
			       (uint64_t)S->now);
		if (r >= 0) {
			matrix_compact(&S->m, (uint64_t)S->now);
			matrix_alternates(&S->m);
		}
		place_timed(S, t0);
		if (r < 0) {
			fprintf(stderr, "matrix_replay: matrix_add: %s\n",
				strerror(-r));
			exit(1);
		}
		check_matrix(S);
	}
}

static void end_job(struct sim *S, uint32_t k)
{
	const struct tjob *j = &S->tr->j[k];
	struct sj *s = &S->s[k];
	double resp, bsld;
	uint32_t i;

	for (i = 0; i < j->procs; i++) {
		if (S->load[s->nodes[i]]-- == S->mpl)
			S->nfit++;
		if (S->kind == K_SLURM && s->on)
			S->act[s->nodes[i]] = 0;
	}
	free(s->nodes);
	free(s->trem);
	free(s->tprog);
	s->nodes = NULL;
	s->trem = NULL;
	s->tprog = NULL;
	s->admitted = false;
	s->on = false;
	s->finish = S->now;
	for (i = 0; i < S->nadm; i++)
		if (S->adm[i] == k)
			break;
	memmove(&S->adm[i], &S->adm[i + 1],
		(S->nadm - i - 1) * sizeof(*S->adm));
	S->nadm--;

	if (S->pol->matrix) {
		struct matrix_job *mj = matrix_find(&S->m, k + 1);
		uint64_t t0;

		if (mj)
			S->moves += mj->moves;
		t0 = cpu_ns();
		matrix_remove(&S->m, k + 1);
		matrix_compact(&S->m, (uint64_t)S->now);
		matrix_alternates(&S->m);
		place_timed(S, t0);
		check_matrix(S);
	}

	resp = (double)(S->now - j->submit);
	bsld = resp / (double)(j->run > BSLD_BOUND ? j->run : BSLD_BOUND);
	S->sum_resp += resp;
	S->sum_bsld += bsld > 1 ? bsld : 1;
	if (j->dc)
		S->sum_bsld_dc += bsld > 1 ? bsld : 1;
	S->done++;
	if (S->now > S->last_finish)
		S->last_finish = S->now;
}

static int cmp_end(const void *a, const void *b)
{
	const struct resv_ent *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/*
 * Admission: the queue in FCFS order; every job that fits now starts
 * until one does not (FCFS stops there).  With backfilling (EASY, and the
 * gang policies as in Zhang, Franke, Moreira and Sivasubramaniam) that
 * first blocked job gets a reservation: the shadow time at which it would
 * fit if the admitted jobs ended at their estimated ends (now + run time
 * left x MPL; exact for space sharing), and the node slots to spare then.
 * A later job that fits now starts if it ends by the shadow time by the
 * same estimate, or takes only spare slots from the reservation.
 */
static void admit(struct sim *S)
{
	const struct tjob *tj = S->tr->j;
	uint32_t i, kept = 0, extra = 0, extra_jobs = 0;
	bool resv = false, stop = false;
	int64_t shadow = 0;

	for (i = 0; i < S->nwait; i++) {
		uint32_t k = S->wait[i], procs = tj[k].procs, a, n, c;

		if (stop || !fits(S, procs)) {
			if (!stop && !resv && S->pol->backfill) {
				/* Reserve for this one. */
				uint32_t cnt = S->nfit, jobs = S->nadm;

				memcpy(S->loads, S->load,
				       S->nodes * sizeof(*S->loads));
				for (a = 0; a < S->nadm; a++) {
					S->ends[a].k = S->adm[a];
					S->ends[a].end = S->now +
						est_left(S, S->s[S->adm[a]].rem);
				}
				qsort(S->ends, S->nadm, sizeof(*S->ends), cmp_end);
				for (a = 0; a < S->nadm; a++) {
					const struct sj *s = &S->s[S->ends[a].k];
					uint32_t p = tj[S->ends[a].k].procs;

					for (n = 0; n < p; n++)
						if (S->loads[s->nodes[n]]-- == S->mpl)
							cnt++;
					jobs--;
					if (cnt >= procs && jobs < S->max_jobs)
						break;
				}
				if (a == S->nadm)	/* not reached: all end */
					a = S->nadm ? S->nadm - 1 : 0;
				shadow = S->nadm ? S->ends[a].end : S->now;
				extra = cnt - procs;
				extra_jobs = S->max_jobs - jobs - 1;
				resv = true;
			} else if (!S->pol->backfill) {
				stop = true;
			}
			S->wait[kept++] = k;
			continue;
		}
		if (!resv) {
			start_job(S, k);
			continue;
		}
		/* A backfill candidate: it fits now. */
		if (S->now + est_left(S, tj[k].run) <= shadow) {
			start_job(S, k);
			continue;
		}
		if (!extra_jobs) {
			S->wait[kept++] = k;
			continue;
		}
		select_nodes(S, procs);
		for (c = 0, n = 0; n < procs; n++)
			c += S->mpl - S->loads[S->pick[n]] == 1;
		if (c > extra) {
			S->wait[kept++] = k;
			continue;
		}
		for (n = 0; n < procs; n++)
			S->loads[S->pick[n]]++;
		extra -= c;
		extra_jobs--;
		start_job(S, k);
	}
	S->nwait = kept;
}

/* slurm-gang: first fit of the suspended jobs, in list order, into the active row. */
static void slurm_fill(struct sim *S)
{
	uint32_t a, i;

	for (a = 0; a < S->nadm; a++) {
		uint32_t k = S->adm[a], p = S->tr->j[k].procs;
		struct sj *s = &S->s[k];
		bool ok = true;

		if (s->on)
			continue;
		for (i = 0; i < p && ok; i++)
			ok = !S->act[s->nodes[i]];
		if (!ok)
			continue;
		for (i = 0; i < p; i++)
			S->act[s->nodes[i]] = 1;
		s->on = true;
	}
}

/*
 * slurm-gang's time slice (_cycle_job_list()): jobs that ran go to the back
 * of the list, in their order; the active row is built again by first fit.
 */
static void slurm_cycle(struct sim *S)
{
	uint32_t a, n = 0;
	uint32_t *tmp = S->pick;	/* nadm <= nodes * mpl: see sim_run() */

	for (a = 0; a < S->nadm; a++)
		if (!S->s[S->adm[a]].on)
			tmp[n++] = S->adm[a];
	for (a = 0; a < S->nadm; a++)
		if (S->s[S->adm[a]].on)
			tmp[n++] = S->adm[a];
	memcpy(S->adm, tmp, S->nadm * sizeof(*S->adm));
	memset(S->act, 0, S->nodes);
	for (a = 0; a < S->nadm; a++)
		S->s[S->adm[a]].on = false;
	slurm_fill(S);
}

/*
 * Is node @n idle in row @r: does no job placed on it run in @r, by its
 * home row or an alternate?  The matrix's per-node mask of the rows run
 * there (@busy) says, exact after matrix_alternates(), which every change
 * of the matrix here ends with.  No row (BCS_ROW_NONE): not idle.
 */
static bool node_idle(const struct matrix *m, uint32_t n, uint32_t r)
{
	return r < MATRIX_ROWS_MAX && !(m->busy[n] >> r & 1);
}

/*
 * A fill policy, once the jobs of the row are known: which tasks of the
 * fillers (DC jobs) progress.  A filler's tasks run in its own rows; and
 * a task with work left on a node idle in the row runs there, the
 * node's fillers taking turns: the one that has had the least CPU runs
 * (ties: the first admitted) until the next pick.
 */
static void fill_pick(struct sim *S)
{
	uint32_t a, i;

	memset(S->fill_by, 0, S->nodes * sizeof(*S->fill_by));
	for (a = 0; a < S->nadm; a++) {
		uint32_t k = S->adm[a];
		const struct sj *s = &S->s[k];

		if (!s->trem || s->on)
			continue;
		for (i = 0; i < S->tr->j[k].procs; i++) {
			uint32_t n = s->nodes[i];
			int64_t got = S->tr->j[k].run - s->trem[i];

			if (!s->trem[i] || !node_idle(&S->m, n, S->row))
				continue;
			if (!S->fill_by[n] || got < S->fill_got[n]) {
				S->fill_by[n] = k + 1;
				S->fill_got[n] = got;
			}
		}
	}
	for (a = 0; a < S->nadm; a++) {
		uint32_t k = S->adm[a];
		struct sj *s = &S->s[k];

		if (!s->trem)
			continue;
		for (i = 0; i < S->tr->j[k].procs; i++)
			s->tprog[i] = s->trem[i] &&
				      (s->on || S->fill_by[s->nodes[i]] == k + 1);
	}
}

static void fill_fail(const struct sim *S, const char *what, uint32_t n)
{
	fprintf(stderr, "matrix_replay: %s at t=%lld: node %u, row %u: %s\n",
		S->pol->name, (long long)S->now, n, S->row, what);
	exit(1);
}

/*
 * --check, after fill_pick(): node_idle() against the jobs' row sets, and
 * on each node at most one filler that runs outside its rows, and only
 * where the node is idle; a filler in its row runs wherever it has work.
 */
static void check_fill(const struct sim *S)
{
	uint8_t *runs = xcalloc(S->nodes, 1);
	uint8_t *fills = xcalloc(S->nodes, 1);
	uint32_t a, i, n;

	for (i = 0; i < S->m.nr_jobs; i++) {
		const struct matrix_job *mj = &S->m.jobs[i];

		if (S->row >= MATRIX_ROWS_MAX || !(mj->rows >> S->row & 1))
			continue;
		for (n = 0; n < mj->nr_res; n++)
			runs[mj->res[n].node] = 1;
	}
	for (n = 0; n < S->nodes; n++)
		if (node_idle(&S->m, n, S->row) !=
		    (S->row < MATRIX_ROWS_MAX && !runs[n]))
			fill_fail(S, "node_idle() disagrees with the row sets",
				  n);
	for (a = 0; a < S->nadm; a++) {
		const struct sj *s = &S->s[S->adm[a]];

		if (!s->trem)
			continue;
		for (i = 0; i < S->tr->j[S->adm[a]].procs; i++) {
			n = s->nodes[i];
			if (s->on && s->trem[i] && !s->tprog[i])
				fill_fail(S, "a filler in its row is held", n);
			if (s->on || !s->tprog[i])
				continue;
			if (runs[n])
				fill_fail(S, "a filler runs on a busy node", n);
			if (fills[n]++)
				fill_fail(S, "two fillers run on one node", n);
		}
	}
	free(runs);
	free(fills);
}

/* bcs: the jobs whose row set holds the strobe's row run (and fillers). */
static void matrix_refresh(struct sim *S, bool next)
{
	uint64_t used = matrix_rows_used(&S->m);
	uint32_t i;

	if (next || S->row >= MATRIX_ROWS_MAX || !(used >> S->row & 1))
		S->row = bcs_row_next(used, S->row);
	for (i = 0; i < S->m.nr_jobs; i++) {
		const struct matrix_job *mj = &S->m.jobs[i];

		S->s[mj->id - 1].on = S->row < MATRIX_ROWS_MAX &&
				      (mj->rows >> S->row & 1);
	}
	if (S->pol->fill) {
		fill_pick(S);
		if (S->check)
			check_fill(S);
	}
	S->refill = false;
}

/*
 * The run time job @k has left before its next event if nothing changes:
 * its end, or a filler's next task to finish its work; INT64_MAX if none.
 */
static int64_t job_left(const struct sim *S, uint32_t k)
{
	const struct sj *s = &S->s[k];
	int64_t left = INT64_MAX;
	uint32_t i;

	if (!s->trem)
		return s->on ? s->rem : INT64_MAX;
	for (i = 0; i < S->tr->j[k].procs; i++)
		if (s->tprog[i] && s->trem[i] && s->trem[i] < left)
			left = s->trem[i];
	return left;
}

/*
 * Job @k runs for @dt (at most job_left()).  True if a task of a filler
 * finished its work.
 */
static bool job_advance(struct sim *S, uint32_t k, int64_t dt)
{
	struct sj *s = &S->s[k];
	bool ended = false;
	uint32_t i;

	if (!s->trem) {
		if (s->on)
			s->rem -= dt;
		return false;
	}
	s->rem = 0;
	for (i = 0; i < S->tr->j[k].procs; i++) {
		if (s->tprog[i] && s->trem[i]) {
			s->trem[i] -= dt;
			ended |= !s->trem[i];
		}
		if (s->trem[i] > s->rem)
			s->rem = s->trem[i];
	}
	return ended;
}

/* Has job @k done its work (a filler: every task)? */
static bool job_done(const struct sim *S, uint32_t k)
{
	const struct sj *s = &S->s[k];

	return !s->rem && (s->on || s->trem);
}

static void sim_run(const struct trace *tr, enum kind kind, uint32_t mpl,
		    int64_t q, int64_t move_interval, bool check,
		    struct result *res)
{
	struct sim S = {
		.tr = tr,
		.pol = &policies[kind],
		.kind = kind,
		.mpl = policies[kind].gang ? mpl : 1,
		.nodes = tr->nodes,
		.q = q,
		.check = check,
		.row = BCS_ROW_NONE,
	};
	uint32_t arr = 0, a, slots;
	int64_t next_slice, t0 = tr->j[0].submit;
	bool changed;

	memset(res, 0, sizeof(*res));
	slots = S.nodes * S.mpl;
	S.max_jobs = kind == K_ROW ? ROW_JOBS_MAX : UINT32_MAX;
	S.s = xcalloc(tr->n, sizeof(*S.s));
	S.wait = xcalloc(tr->n, sizeof(*S.wait));
	S.adm = xcalloc(slots, sizeof(*S.adm));
	S.load = xcalloc(S.nodes, sizeof(*S.load));
	S.loads = xcalloc(S.nodes, sizeof(*S.loads));
	S.act = xcalloc(S.nodes, 1);
	S.pick = xcalloc(slots > S.nodes ? slots : S.nodes, sizeof(*S.pick));
	S.ends = xcalloc(slots, sizeof(*S.ends));
	S.res = xcalloc(S.nodes, sizeof(*S.res));
	S.fill_by = xcalloc(S.nodes, sizeof(*S.fill_by));
	S.fill_got = xcalloc(S.nodes, sizeof(*S.fill_got));
	S.nfit = S.nodes;
	S.first_submit = t0;
	if (S.pol->matrix &&
	    matrix_init(&S.m, S.nodes, S.pol->mpol, S.pol->mflags,
			MATRIX_ROWS_MAX, (uint64_t)move_interval)) {
		fprintf(stderr, "matrix_replay: matrix_init failed\n");
		exit(1);
	}

	S.now = t0;
	next_slice = t0 + q;
	changed = true;
	while (S.done < tr->n) {
		int64_t next = INT64_MAX, dt;
		bool slice_end;

		if (!S.nadm && !S.nwait && arr < tr->n &&
		    tr->j[arr].submit > S.now) {
			/* Idle: on to the next submit, on the slice grid. */
			S.now = tr->j[arr].submit;
			next_slice = t0 + ((S.now - t0) / q + 1) * q;
		}
		while (arr < tr->n && tr->j[arr].submit <= S.now) {
			S.wait[S.nwait++] = arr++;
			changed = true;
		}
		if (changed) {
			admit(&S);
			if (S.kind == K_SLURM)
				slurm_fill(&S);
			else if (S.pol->matrix)
				matrix_refresh(&S, false);
			changed = false;
		} else if (S.refill) {
			matrix_refresh(&S, false);
		}

		if (arr < tr->n)
			next = tr->j[arr].submit;
		if (S.pol->gang && next_slice < next)
			next = next_slice;
		for (a = 0; a < S.nadm; a++) {
			int64_t left = job_left(&S, S.adm[a]);

			if (left != INT64_MAX && S.now + left < next)
				next = S.now + left;
		}
		dt = next - S.now;
		for (a = 0; a < S.nadm; a++)
			if (job_advance(&S, S.adm[a], dt))
				S.refill = true;
		if (S.pol->matrix && S.nadm) {
			uint32_t rows = __builtin_popcountll(matrix_rows_used(&S.m));

			S.rows_time += (double)rows * (double)dt;
			S.rows_busy += (double)dt;
			if (rows > S.rows_max)
				S.rows_max = rows;
			if (S.m.overfull > res->overfull_max)
				res->overfull_max = S.m.overfull;
		}
		S.now = next;

		for (a = 0; a < S.nadm; ) {
			uint32_t k = S.adm[a];

			if (job_done(&S, k)) {
				end_job(&S, k);
				changed = true;
			} else {
				a++;
			}
		}
		slice_end = S.pol->gang && S.now == next_slice;
		if (slice_end) {
			next_slice += q;
			/* Jobs that arrive or start now take part in the turn. */
			while (arr < tr->n && tr->j[arr].submit <= S.now) {
				S.wait[S.nwait++] = arr++;
				changed = true;
			}
			if (changed)
				admit(&S);
			changed = false;
			if (S.kind == K_SLURM)
				slurm_cycle(&S);
			else if (S.pol->matrix)
				matrix_refresh(&S, true);
		}
	}

	res->valid = true;
	{
		double work = 0;
		uint32_t i;

		for (i = 0; i < tr->n; i++)
			work += (double)tr->j[i].run * tr->j[i].procs;
		res->util = work / ((double)S.nodes *
				    (double)(S.last_finish - S.first_submit));
	}
	res->resp = S.sum_resp / tr->n;
	res->bsld = S.sum_bsld / tr->n;
	res->bsld_dc = tr->dc ? S.sum_bsld_dc / tr->dc : 0;
	res->bsld_rest = tr->n > tr->dc ?
			 (S.sum_bsld - S.sum_bsld_dc) / (tr->n - tr->dc) : 0;
	res->has_rows = S.pol->matrix;
	res->rows_mean = S.rows_busy > 0 ? S.rows_time / S.rows_busy : 0;
	res->rows_max = S.rows_max;
	res->moves = (double)S.moves / tr->n;
	res->has_pl = S.pol->matrix;
	res->pl_mean = S.pl_n ? S.pl_sum / S.pl_n / 1e3 : 0;
	res->pl_max = S.pl_max / 1e3;

	if (S.pol->matrix)
		matrix_free(&S.m);
	free(S.s);
	free(S.wait);
	free(S.adm);
	free(S.load);
	free(S.loads);
	free(S.act);
	free(S.pick);
	free(S.ends);
	free(S.res);
	free(S.fill_by);
	free(S.fill_got);
}

/* ---- --scale: placement cost with many jobs ---- */

static uint64_t rng_state;

static uint32_t rng(void)
{
	/* xorshift64*: the same sequence on every run */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

/* A job size: 2^k nodes, k = 0 .. 6 with probability 2^-(k+1) (6: the rest). */
static uint32_t scale_size(void)
{
	uint32_t k = 0;

	while (k < 6 && (rng() & 1))
		k++;
	return 1U << k;
}

/*
 * @procs nodes with fewer than @mpl jobs into @res, sorted by node: at
 * random (seeded), or by select_nodes()'s aligned blocks if @S; false if
 * fewer are left.
 */
static bool scale_pick(struct sim *S, uint32_t *load, uint32_t nodes,
		       uint32_t mpl, uint32_t *cand, uint32_t procs,
		       struct matrix_res *res)
{
	uint32_t n, nc = 0, i;

	for (n = 0; n < nodes; n++)
		if (load[n] < mpl)
			cand[nc++] = n;
	if (nc < procs)
		return false;
	if (S) {
		select_nodes(S, procs);
		memcpy(cand, S->pick, procs * sizeof(*cand));
	} else {
		for (i = 0; i < procs; i++) {
			uint32_t r = i + rng() % (nc - i), t = cand[i];

			cand[i] = cand[r];
			cand[r] = t;
		}
	}
	qsort(cand, procs, sizeof(*cand), cmp_u32);
	for (i = 0; i < procs; i++) {
		res[i].node = cand[i];
		res[i].cpus = MATRIX_CPUS_ALL;
		load[cand[i]]++;
	}
	return true;
}

struct stat_us {
	double sum, max;
	uint64_t n;
};

static void stat_add(struct stat_us *st, uint64_t t0)
{
	double us = (double)(cpu_ns() - t0) / 1e3;

	st->sum += us;
	if (us > st->max)
		st->max = us;
	st->n++;
}

static int run_scale(uint32_t nodes, uint32_t mpl, uint32_t jobs,
		     uint32_t reps, int64_t q, bool blocks)
{
	struct matrix m;
	struct matrix_res *res = xcalloc(nodes, sizeof(*res));
	uint32_t *load = xcalloc(nodes, sizeof(*load));
	uint32_t *cand = xcalloc(nodes, sizeof(*cand));
	uint32_t *ids = xcalloc(jobs, sizeof(*ids));
	uint32_t next_id = 1, i, tries, lb, procs_sum = 0;
	struct stat_us add = { 0 }, rem = { 0 };
	uint64_t now = 0, t0;
	char why[256];
	int ret = 1, r;
	struct sim S = {
		.nodes = nodes,
		.mpl = mpl,
		.load = load,
		.pick = xcalloc(nodes, sizeof(uint32_t)),
	};
	struct sim *sp = blocks ? &S : NULL;
	enum select_rule saved = sel_rule;

	sel_rule = SEL_BLOCK;
	rng_state = SCALE_SEED;
	if (matrix_init(&m, nodes, MATRIX_PACK, MATRIX_ALTERNATE,
			MATRIX_ROWS_MAX, (uint64_t)q)) {
		fprintf(stderr, "matrix_replay: matrix_init failed\n");
		goto out;
	}
	/* Fill: jobs of random sizes on random nodes below MPL. */
	for (i = 0; i < jobs; i++) {
		uint32_t procs = scale_size();

		for (tries = 0; !scale_pick(sp, load, nodes, mpl, cand, procs, res);
		     tries++) {
			if (procs == 1) {
				fprintf(stderr, "matrix_replay: --scale: %u jobs "
					"do not fit %u nodes at MPL %u\n", jobs,
					nodes, mpl);
				goto out_m;
			}
			procs /= 2;
		}
		procs_sum += procs;
		r = matrix_add(&m, next_id, res, procs, MATRIX_ROW_NONE, now);
		if (r < 0) {
			fprintf(stderr, "matrix_replay: matrix_add: %s\n",
				strerror(-r));
			goto out_m;
		}
		ids[i] = next_id++;
	}
	matrix_compact(&m, now);
	matrix_alternates(&m);
	printf("scale: %u jobs (%u job-nodes) on %u nodes, MPL %u, "
	       "MATRIX_PACK | MATRIX_ALTERNATE, seed %#x, %s\n", jobs,
	       procs_sum, nodes, mpl, SCALE_SEED, blocks ?
	       "nodes in aligned blocks (--select block)" :
	       "nodes at random");
	printf("  filled: %d rows used, lower bound %u, %u overfull\n",
	       __builtin_popcountll(matrix_rows_used(&m)),
	       matrix_lower_bound(&m), m.overfull);

	/*
	 * Each repetition: a random job ends (remove + compact + alternates),
	 * a new one starts on nodes below MPL (add + compact + alternates).
	 */
	for (i = 0; i < reps; i++) {
		uint32_t v = rng() % jobs, procs;
		struct matrix_job *mj = matrix_find(&m, ids[v]);
		uint32_t n;

		now += (uint64_t)q;
		if (!mj) {
			fprintf(stderr, "matrix_replay: job %u lost\n", ids[v]);
			goto out_m;
		}
		for (n = 0; n < mj->nr_res; n++)
			load[mj->res[n].node]--;
		t0 = cpu_ns();
		matrix_remove(&m, ids[v]);
		matrix_compact(&m, now);
		matrix_alternates(&m);
		stat_add(&rem, t0);

		procs = scale_size();
		while (!scale_pick(sp, load, nodes, mpl, cand, procs, res))
			procs /= 2;	/* one just ended: 1 fits */
		t0 = cpu_ns();
		r = matrix_add(&m, next_id, res, procs, MATRIX_ROW_NONE, now);
		if (r >= 0) {
			matrix_compact(&m, now);
			matrix_alternates(&m);
		}
		stat_add(&add, t0);
		if (r < 0) {
			fprintf(stderr, "matrix_replay: matrix_add: %s\n",
				strerror(-r));
			goto out_m;
		}
		ids[v] = next_id++;
	}
	lb = matrix_lower_bound(&m);
	printf("  after %u repetitions: %d rows used, lower bound %u, "
	       "%u overfull\n", reps,
	       __builtin_popcountll(matrix_rows_used(&m)), lb, m.overfull);
	printf("  add + compact + alternates:    mean %9.1f us  max %9.1f us"
	       "  (%llu)\n", add.sum / add.n, add.max,
	       (unsigned long long)add.n);
	printf("  remove + compact + alternates: mean %9.1f us  max %9.1f us"
	       "  (%llu)\n", rem.sum / rem.n, rem.max,
	       (unsigned long long)rem.n);
	if (matrix_check(&m, why, sizeof(why)))
		printf("  matrix_check: %s\n", why);
	else
		printf("  matrix_check: ok\n");
	ret = 0;
out_m:
	matrix_free(&m);
out:
	sel_rule = saved;
	free(S.pick);
	free(res);
	free(load);
	free(cand);
	free(ids);
	return ret;
}

/* ---- output and options ---- */

static void print_table(uint32_t mpl, const struct result *r, bool csv,
			bool header)
{
	enum kind k;

	if (csv) {
		if (header)
			printf("mpl,policy,util,resp_mean_s,bsld_mean,rows_mean,"
			       "rows_max,moves_per_job,place_us_mean,"
			       "place_us_max\n");
		for (k = 0; k < K_NR; k++) {
			if (!r[k].valid)
				continue;
			printf("%u,%s,%.4f,%.1f,%.2f,", mpl, policies[k].name,
			       r[k].util, r[k].resp, r[k].bsld);
			if (r[k].has_rows)
				printf("%.2f,%u,", r[k].rows_mean, r[k].rows_max);
			else
				printf(",,");
			printf("%.3f,", r[k].moves);
			if (r[k].has_pl)
				printf("%.1f,%.1f\n", r[k].pl_mean, r[k].pl_max);
			else
				printf(",\n");
		}
		return;
	}
	printf("\nMPL %u\n", mpl);
	printf("%-15s %6s %12s %10s %9s %8s %9s %13s %12s\n", "policy",
	       "util%", "resp_mean_s", "bsld_mean", "rows_mean", "rows_max",
	       "moves/job", "place_us_mean", "place_us_max");
	for (k = 0; k < K_NR; k++) {
		if (!r[k].valid)
			continue;
		printf("%-15s %6.1f %12.0f %10.2f ", policies[k].name,
		       100 * r[k].util, r[k].resp, r[k].bsld);
		if (r[k].has_rows)
			printf("%9.2f %8u ", r[k].rows_mean, r[k].rows_max);
		else
			printf("%9s %8s ", "-", "-");
		printf("%9.3f ", r[k].moves);
		if (r[k].has_pl)
			printf("%13.1f %12.1f\n", r[k].pl_mean, r[k].pl_max);
		else
			printf("%13s %12s\n", "-", "-");
	}
	if (!r[K_PACK].valid && !r[K_PACK_FILL].valid)
		return;
	printf("bounded slowdown of the DC jobs / the others:");
	for (k = K_PACK; k < K_NR; k++)
		if (r[k].valid && (k == K_PACK || policies[k].fill))
			printf("  %s %.2f / %.2f", policies[k].name,
			       r[k].bsld_dc, r[k].bsld_rest);
	printf("\n");
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: matrix_replay [--swf PATH] [--mpl N] [--slice S] "
		"[--move-interval S]\n"
		"                     [--jobs N] [--nodes N] [--policy NAME] "
		"[--csv] [--check]\n"
		"                     [--select block|least] [--dc FRACTION]\n"
		"       matrix_replay --scale [--nodes N] [--mpl N] [--jobs N] "
		"[--reps N]\n"
		"  --swf PATH          SWF workload (default %s,\n"
		"                      from the top of the repository)\n"
		"  --mpl N             jobs per node at most, 1..%d (default: 2, "
		"then 4)\n"
		"  --slice S           time slice, seconds (default 30)\n"
		"  --move-interval S   a job moves at most once per S seconds "
		"(default: the slice)\n"
		"  --jobs N            the first N jobs only (--scale: jobs in "
		"the matrix, 4096)\n"
		"  --nodes N           nodes (default: the header's MaxNodes; "
		"--scale: 4096)\n"
		"  --policy NAME       fcfs, easy, slurm-gang, bcs-row, bcs-pack, "
		"bcs-pack-noalt\n"
		"                      or bcs-pack-fill\n"
		"  --dc FRACTION       jobs that need no coscheduling, 0..1 "
		"(default %.2f):\n"
		"                      bcs-pack-fill lets their tasks fill idle "
		"nodes\n"
		"  --csv               comma-separated values\n"
		"  --select RULE       gang policies' nodes: block (aligned "
		"blocks, default)\n"
		"                      or least (least-loaded nodes)\n"
		"  --check             matrix_check() after every placement, "
		"and fill's rules\n"
		"                      at every pick (slow)\n"
		"  --scale             placement cost with many jobs\n"
		"  --reps N            --scale: repetitions (default 2000)\n",
		DEFAULT_SWF, MPL_MAX, DC_DEFAULT);
}

static int parse_u32(const char *opt, const char *arg, uint32_t min,
		     uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (*arg == '-' || end == arg || *end || errno || v < min || v > max) {
		fprintf(stderr, "matrix_replay: --%s %s: want an integer "
			"%u..%u\n", opt, arg, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_frac(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end || errno || !(v >= 0 && v <= 1)) {
		fprintf(stderr, "matrix_replay: --%s %s: want a number 0..1\n",
			opt, arg);
		return -1;
	}
	*out = v;
	return 0;
}

/* The default SWF: ../shared/workloads/ beside the repository's top. */
static char *default_swf(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');
	char *p;

	/* bench/ or $(BUILD)/bench: try the source tree's top first. */
	if (!access("../" DEFAULT_SWF, R_OK))
		return strdup("../" DEFAULT_SWF);
	if (!access(DEFAULT_SWF, R_OK))
		return strdup(DEFAULT_SWF);
	if (slash && asprintf(&p, "%.*s/../%s", (int)(slash - argv0), argv0,
			      DEFAULT_SWF) > 0) {
		if (!access(p, R_OK))
			return p;
		free(p);
	}
	return strdup(DEFAULT_SWF);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "swf", required_argument, NULL, 'f' },
		{ "mpl", required_argument, NULL, 'm' },
		{ "slice", required_argument, NULL, 's' },
		{ "move-interval", required_argument, NULL, 'i' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, 'p' },
		{ "csv", no_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "scale", no_argument, NULL, 'S' },
		{ "reps", required_argument, NULL, 'r' },
		{ "select", required_argument, NULL, 'L' },
		{ "dc", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *swf = NULL;
	uint32_t mpl = 0, slice = 30, move = UINT32_MAX, jobs = 0, nodes = 0;
	uint32_t reps = 2000, mpls[2], nmpl, i;
	int policy = -1, c, ret = 1;
	bool csv = false, check = false, scale = false;
	double dc = DC_DEFAULT;
	struct trace tr;
	struct result r[K_NR];

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			free(swf);
			swf = strdup(optarg);
			break;
		case 'm':
			if (parse_u32("mpl", optarg, 1, MPL_MAX, &mpl))
				goto out;
			break;
		case 's':
			if (parse_u32("slice", optarg, 1, 86400, &slice))
				goto out;
			break;
		case 'i':
			if (parse_u32("move-interval", optarg, 0, 86400 * 365,
				      &move))
				goto out;
			break;
		case 'j':
			if (parse_u32("jobs", optarg, 1, 10000000, &jobs))
				goto out;
			break;
		case 'n':
			if (parse_u32("nodes", optarg, 1, 1000000, &nodes))
				goto out;
			break;
		case 'r':
			if (parse_u32("reps", optarg, 1, 10000000, &reps))
				goto out;
			break;
		case 'p':
			for (policy = 0; policy < K_NR; policy++)
				if (!strcmp(optarg, policies[policy].name))
					break;
			if (policy == K_NR) {
				fprintf(stderr, "matrix_replay: --policy %s: "
					"unknown\n", optarg);
				usage(stderr);
				goto out;
			}
			break;
		case 'c':
			csv = true;
			break;
		case 'C':
			check = true;
			break;
		case 'S':
			scale = true;
			break;
		case 'L':
			if (!strcmp(optarg, "block")) {
				sel_rule = SEL_BLOCK;
			} else if (!strcmp(optarg, "least")) {
				sel_rule = SEL_LEAST;
			} else {
				fprintf(stderr, "matrix_replay: --select %s: "
					"block or least\n", optarg);
				goto out;
			}
			break;
		case 'D':
			if (parse_frac("dc", optarg, &dc))
				goto out;
			break;
		case 'h':
			usage(stdout);
			ret = 0;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "matrix_replay: unexpected argument %s\n",
			argv[optind]);
		usage(stderr);
		goto out;
	}
	if (move == UINT32_MAX)
		move = slice;
	if (scale) {
		ret = run_scale(nodes ? nodes : 4096, mpl ? mpl : 4,
				jobs ? jobs : 4096, reps, slice, false) ||
		      run_scale(nodes ? nodes : 4096, mpl ? mpl : 4,
				jobs ? jobs : 4096, reps, slice, true);
		goto out;
	}
	if (!swf)
		swf = default_swf(argv[0]);
	if (read_swf(swf, nodes, jobs, &tr))
		goto out;
	mark_dc(&tr, dc);
	if (mpl) {
		mpls[0] = mpl;
		nmpl = 1;
	} else {
		mpls[0] = 2;
		mpls[1] = 4;
		nmpl = 2;
	}
	if (!csv) {
		printf("matrix_replay: %s: %u jobs replayed, %u skipped (run "
		       "time or processors <= 0, or more than the nodes), %u "
		       "nodes\n", swf, tr.n, tr.skipped, tr.nodes);
		printf("slice %u s, move interval %u s; estimates are the run "
		       "times (%s)\n", slice, move, tr.requested ?
		       "the trace's requested times are ignored" :
		       "the trace has no requested times");
		printf("DC jobs (no coscheduling needed; bcs-pack-fill fills "
		       "idle nodes with them): %u of %u (--dc %g)\n", tr.dc,
		       tr.n, dc);
	}
	for (i = 0; i < nmpl; i++) {
		enum kind k;

		for (k = 0; k < K_NR; k++) {
			if (policy >= 0 && (int)k != policy) {
				r[k].valid = false;
				continue;
			}
			/* Space sharing does not depend on MPL: run it once. */
			if (i && !policies[k].gang) {
				continue;
			}
			sim_run(&tr, k, mpls[i], slice, move, check, &r[k]);
		}
		print_table(mpls[i], r, csv, !i);
	}
	free(tr.j);
	ret = 0;
out:
	free(swf);
	return ret;
}

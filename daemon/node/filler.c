// SPDX-License-Identifier: GPL-2.0
/*
 * The fill policy on this node (Documentation/matrix.rst, "Fill").  Every
 * fill_period_ms, for each job bcsd made on this node, the tasks' CPU
 * time and blocked time since they attached (bcs.ko's task statistics)
 * and their voluntary sleeps (the kernel's voluntary context switches of
 * each thread, less bcs's parks, which are voluntary switches too) are
 * summed and handed to the classifier (fill.c); a job whose class turns
 * filler or back is marked so in bcs.ko (bcs_job_set_filler()), which
 * then runs it in every row in which no job of this node's runs.
 *
 * A node busy in every row of the map (each row holds a job with tasks
 * here) could fill nothing: it reads nothing either.
 *
 * Node-local by design: a job coarse-grained here may fill here, whatever
 * it does elsewhere; the master and the map know nothing of it.  Nothing
 * is tracked that bcs.ko does not keep anyway (no distributions are
 * switched on), and with fill off no job is ever marked.  A job's mark
 * goes with the job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "node/fill.h"
#include "node/filler.h"
#include "core/log.h"

/* CPU time a classification needs, per period or added up over several. */
#define FILL_MIN_RUN_NS		(10ULL * 1000 * 1000)
/* Equal verdicts in a row that change a job's class. */
#define FILL_CONFIRM		2

/*
 * The voluntary context switches of thread @tid, or -1 if it is gone.
 * /proc is the kernel's: its content is not the task's to shape.
 */
static long long voluntary_switches(pid_t tid)
{
	char path[64], buf[2048];
	long long v = -1;
	ssize_t n;
	char *p;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nvoluntary_ctxt_switches:");
	if (p && sscanf(p + 25, "%lld", &v) != 1)
		v = -1;
	return v;
}

/* Keep in the table exactly this node's jobs, in order, new ones fresh. */
static int sync_jobs(struct bcsd *d)
{
	struct bcsd_filler *f = &d->filler;
	struct bcsd_filler_job *jobs;
	uint32_t i, k = 0, n = d->local.nr_jobs;

	jobs = calloc(n ? n : 1, sizeof(*jobs));
	if (!jobs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint32_t job = d->local.jobs[i], s;

		/* Both in increasing order: a merge. */
		while (k < f->nr && f->jobs[k].job < job)
			k++;
		s = k;
		if (s < f->nr && f->jobs[s].job == job)
			jobs[i] = f->jobs[s];
		else
			jobs[i].job = job;
	}
	free(f->jobs);
	f->jobs = jobs;
	f->nr = n;
	return 0;
}

/* The sums over @job's tasks here, into @s: false if there are none. */
static bool sample_job(struct bcsd *d, uint32_t job, struct fill_sample *s)
{
	struct bcs_task_stat *ts = NULL;
	size_t n = 0, i;
	long long v;

	memset(s, 0, sizeof(*s));
	if (bcs_task_stats(d->bcs, job, &ts, &n) || !n) {
		free(ts);
		return false;
	}
	for (i = 0; i < n; i++) {
		s->run_ns += ts[i].run_ns;
		s->blocked_ns += ts[i].blocked_ns;
		v = voluntary_switches(ts[i].pid);
		/* A thread gone meanwhile: its sleeps count as none. */
		if (v > 0 && (unsigned long long)v > ts[i].parks)
			s->bursts += (unsigned long long)v - ts[i].parks;
	}
	free(ts);
	return true;
}

static void classify(struct bcsd *d, struct bcsd_filler_job *j)
{
	struct bcsd_filler *f = &d->filler;
	struct fill_sample s;
	bool filler;
	int err;

	if (!sample_job(d, j->job, &s))
		return;
	if (!fill_update(&j->st, &f->params, &s))
		return;
	filler = fill_is_filler(j->st.cls);
	pr_info("job %u: %s here, %s", j->job, fill_class_name(j->st.cls),
		filler ? "fills idle rows" : "coscheduled only");
	if (filler == j->marked)
		return;
	err = bcs_job_set_filler(d->bcs, j->job, filler);
	if (err) {
		pr_warn("job %u: filler mark not set: %s", j->job,
			bcs_strerror(err, BCS_CTX_JOB));
		return;
	}
	j->marked = filler;
	d->cnt.fill_changes++;
}

/*
 * The rows of the map in which no job with tasks here runs: where a
 * filler would run.  None (every row busy here, or no map): nothing to
 * classify for.
 */
static uint64_t idle_rows(const struct bcsd *d,
			  const struct bcs_job_info *jobs, size_t n)
{
	uint64_t rows, busy = 0;
	uint32_t version;
	size_t i;

	rows = followed_rows_at(d, UINT64_MAX, &version);
	for (i = 0; i < n; i++)
		if (jobs[i].nr_tasks && jobs[i].row < BCS_ROWS_MAX)
			busy |= 1ULL << jobs[i].row | jobs[i].rows;
	return rows & ~busy;
}

static int by_id(const void *a, const void *b)
{
	const struct bcs_job_info *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void filler_tick(struct bcsd *d, void *arg)
{
	struct bcsd_filler *f = &d->filler;
	struct bcs_job_info *jobs = NULL;
	uint64_t now = now_mono_ms();
	size_t n = 0, k = 0;
	uint32_t i;

	(void)arg;
	if (now - f->last_ms < d->cfg.fill_period_ms || !d->bcs)
		return;
	f->last_ms = now;
	if (sync_jobs(d)) {
		pr_warn("fill: out of memory: jobs not classified this time");
		return;
	}
	if (bcs_job_list(d->bcs, &jobs, &n))
		return;
	if (n)
		qsort(jobs, n, sizeof(*jobs), by_id);
	/* A node busy in every row has nothing to fill: no reads at all. */
	if (idle_rows(d, jobs, n)) {
		/* Both in increasing order of ids: a merge. */
		for (i = 0; i < f->nr; i++) {
			while (k < n && jobs[k].id < f->jobs[i].job)
				k++;
			if (k < n && jobs[k].id == f->jobs[i].job &&
			    jobs[k].nr_tasks)
				classify(d, &f->jobs[i]);
		}
	}
	free(jobs);
}

int filler_init(struct bcsd *d)
{
	struct bcsd_filler *f = &d->filler;

	memset(f, 0, sizeof(*f));
	if (!d->cfg.fill)
		return 0;
	f->params = (struct fill_params){
		.coarse_ns = (uint64_t)d->cfg.fill_coarse_ms * 1000000,
		.frustrated_pct = d->cfg.fill_frustrated_pct,
		.min_run_ns = FILL_MIN_RUN_NS,
		.confirm = FILL_CONFIRM,
	};
	if (fill_params_check(&f->params)) {
		pr_err("fill: bad parameters");
		return -1;
	}
	f->last_ms = now_mono_ms();
	pr_info("fill on: jobs classified every %u ms (coarse from %u ms, frustrated from %u%% blocked)",
		d->cfg.fill_period_ms, d->cfg.fill_coarse_ms,
		d->cfg.fill_frustrated_pct);
	return loop_on_tick(d, filler_tick, NULL);
}

void filler_exit(struct bcsd *d)
{
	free(d->filler.jobs);
	d->filler.jobs = NULL;
	d->filler.nr = 0;
}

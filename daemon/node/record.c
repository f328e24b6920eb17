// SPDX-License-Identifier: GPL-2.0
/*
 * What this node records: the master's statistics context (BCSP_CONTEXT,
 * made by bcsctl stats through bcsd) applied to bcs.ko at the strobe of
 * the slice it names, so that every node starts and stops recording in
 * the same slice (wire-protocol.rst, Context).
 *
 * Applying is reconciling: for each job of the context that bcs.ko holds
 * here, the metrics it should record are enabled and the others disabled,
 * and a release the node has not carried out yet is; the slice window is
 * armed or cleared as the context has it.  A job that is not
 * here yet (its map comes later), or that bcs.ko refused, is tried again
 * every report period, so a node that joins late or lost a datagram ends
 * up recording what the others do.
 */
#include <errno.h>
#include <string.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "core/log.h"
#include "node/mpidir.h"
#include "node/record.h"

/* Rank files of a job read for its rank subsets, at most. */
#define RECORD_RANKS_MAX	1024

/* The context followed, if it is not the one applied. */
static bool ctx_new(const struct bcsd *d)
{
	const struct bcsd_record *r = &d->record;

	return d->followed.have_ctx &&
	       (!r->applied || r->epoch != d->followed.ctx_epoch ||
		r->master != d->followed.ctx_master ||
		r->version != d->followed.ctx.version);
}

static const struct bcsp_job_stats *applied_job(const struct bcsd *d,
						uint32_t job)
{
	uint32_t i;

	for (i = 0; i < d->record.nr_jobs; i++)
		if (d->record.jobs[i].job == job)
			return &d->record.jobs[i];
	return NULL;
}

static int dist(struct bcsd *d, uint32_t job, uint32_t op, uint32_t metrics,
		uint32_t sub_bits)
{
	int err = bcs_dist_ctl(d->bcs, job, op, metrics, sub_bits, NULL, 0);

	if (err) {
		d->cnt.kernel_errors++;
		pr_warn("job %u: statistics: %s", job,
			bcs_strerror(err, BCS_CTX_TASK));
	}
	return err;
}

static bool job_has_subsets(const struct bcsp_context *c, uint32_t job,
			    bool *ranks)
{
	bool any = false;
	uint32_t i;

	*ranks = false;
	for (i = 0; i < c->nr_subsets; i++) {
		if (c->subsets[i].job != job)
			continue;
		any = true;
		*ranks |= c->subsets[i].kind == BCSP_SUBSET_RANKS;
	}
	return any;
}

static void pids_add(struct bcsd_record_pids *out, int32_t pid)
{
	uint32_t i;

	for (i = 0; i < out->nr; i++)
		if (out->pid[i] == pid)
			return;
	if (out->nr == RECORD_PIDS_MAX) {
		out->over = true;
		return;
	}
	out->pid[out->nr++] = pid;
}

void record_subset_pids(const struct bcsp_context *c, uint32_t job,
			uint32_t node, const struct mpidir_rank *ranks,
			unsigned int nr_ranks, struct bcsd_record_pids *out)
{
	const struct bcsp_subset *s;
	uint32_t i, k;

	out->subset = true;
	out->ranks = false;
	out->over = false;
	out->nr = 0;
	for (i = 0; i < c->nr_subsets; i++) {
		s = &c->subsets[i];
		if (s->job != job)
			continue;
		if (s->kind == BCSP_SUBSET_PID) {
			if (s->a == node)
				pids_add(out, (int32_t)s->b);
			continue;
		}
		out->ranks = true;
		for (k = 0; k < nr_ranks; k++)
			if (ranks[k].rank >= s->a && ranks[k].rank <= s->b)
				pids_add(out, ranks[k].pid);
	}
}

static bool has_pid(const struct bcsd_record_pids *p, int32_t pid)
{
	uint32_t i;

	for (i = 0; i < p->nr; i++)
		if (p->pid[i] == pid)
			return true;
	return false;
}

/*
 * @op on @metrics of task @pid of @job alone: 0, or the error, counted
 * and said unless the task is gone or not of the job (-ESRCH).
 */
static int dist_pid(struct bcsd *d, uint32_t job, uint32_t op,
		    uint32_t metrics, uint32_t sub_bits, int32_t pid)
{
	int err = bcs_dist_ctl(d->bcs, job, op, metrics, sub_bits, &pid, 1);

	if (err && err != -ESRCH) {
		d->cnt.kernel_errors++;
		pr_warn("job %u: statistics of pid %d: %s", job, pid,
			bcs_strerror(err, BCS_CTX_TASK));
	}
	return err;
}

/* The pids of @want's job that the context names here, into @t. */
static void subset_target(struct bcsd *d, const struct bcsp_job_stats *want,
			  struct bcsd_record_pids *t)
{
	static struct mpidir_rank ranks[RECORD_RANKS_MAX];
	const struct bcsp_context *c = &d->followed.ctx;
	bool has_ranks;
	int n = 0;

	job_has_subsets(c, want->job, &has_ranks);
	if (has_ranks && d->cfg.mpi_dir[0]) {
		n = mpidir_ranks(d->cfg.mpi_dir, want->job, ranks,
				 RECORD_RANKS_MAX);
		if (n < 0) {
			pr_debug("job %u: its MPI ranks: %s", want->job,
				 strerror(-n));
			n = 0;
		}
	}
	record_subset_pids(c, want->job, d->node_id, ranks, (unsigned int)n,
			   t);
}

/*
 * Job @want's subsets: bring bcs.ko from @have on @hp's tasks to
 * @want on the tasks the context names here, task by task; a task
 * gone, or not of the job, is left out.  False if something is left to
 * do; always so while the job has rank subsets (a rank's process may
 * come later).
 */
static bool reconcile_subset(struct bcsd *d, const struct bcsp_job_stats *want,
			     struct bcsp_job_stats *have,
			     struct bcsd_record_pids *hp)
{
	struct bcsd_record_pids t;
	uint32_t i, n, del, add;
	bool done = true;
	int err;

	subset_target(d, want, &t);
	if (!hp->subset && have->metrics) {
		/* From the whole job to some of its tasks. */
		err = bcs_dist_ctl(d->bcs, want->job, BCS_DIST_DISABLE,
				   have->metrics, 0, NULL, 0);
		if (err && err != -ENOENT) {
			dist(d, want->job, BCS_DIST_DISABLE, have->metrics, 0);
			return false;
		}
		have->metrics = 0;
	}
	if (!hp->subset)
		hp->nr = 0;
	hp->subset = true;
	hp->ranks = t.ranks;
	if (t.over && !hp->over)
		pr_warn("job %u: its subsets name more than %u processes here: the rest left out",
			want->job, RECORD_PIDS_MAX);
	hp->over = t.over;
	/* Tasks no longer named: nothing more of them. */
	for (i = n = 0; i < hp->nr; i++) {
		if (has_pid(&t, hp->pid[i]))
			hp->pid[n++] = hp->pid[i];
		else if (have->metrics)
			dist_pid(d, want->job, BCS_DIST_DISABLE, have->metrics,
				 0, hp->pid[i]);
	}
	hp->nr = n;
	del = have->metrics & ~want->metrics;
	for (i = 0; del && i < hp->nr; i++)
		dist_pid(d, want->job, BCS_DIST_DISABLE, del, 0, hp->pid[i]);
	add = want->metrics & ~have->metrics;
	if (have->metrics && want->sub_bits != have->sub_bits)
		add = want->metrics;
	/* Those it had get what is new (a task gone is dropped)... */
	for (i = n = 0; i < hp->nr; i++) {
		err = add ? dist_pid(d, want->job, BCS_DIST_ENABLE, add,
				     want->sub_bits, hp->pid[i]) : 0;
		if (err != -ESRCH)
			hp->pid[n++] = hp->pid[i];
		if (err && err != -ESRCH)
			done = false;
	}
	hp->nr = n;
	/* ... and the new ones all of it. */
	have->metrics = want->metrics;
	have->sub_bits = want->sub_bits;
	for (i = 0; want->metrics && i < t.nr; i++) {
		if (has_pid(hp, t.pid[i]))
			continue;
		err = dist_pid(d, want->job, BCS_DIST_ENABLE, want->metrics,
			       want->sub_bits, t.pid[i]);
		if (!err) {
			hp->pid[hp->nr++] = t.pid[i];
			pr_info("job %u: statistics of pid %d from slice %llu",
				want->job, t.pid[i],
				(unsigned long long)d->record.slice);
		} else if (err != -ESRCH) {
			done = false;
		}
	}
	return done && !hp->ranks;
}

/*
 * Bring job @want's statistics in bcs.ko from @have to @want; @have keeps
 * what was done.  False if something is left to do.
 */
static bool reconcile(struct bcsd *d, const struct bcsp_job_stats *want,
		      struct bcsp_job_stats *have,
		      struct bcsd_record_pids *hp)
{
	uint32_t add, del, i;
	bool done = true, ranks;
	int err;

	if (!view_local_job(d, want->job, NULL))
		return want->metrics == have->metrics;
	if (want->release != have->release) {
		/* Nothing recorded here (-ENOENT) is released too. */
		err = bcs_dist_ctl(d->bcs, want->job, BCS_DIST_RELEASE, 0, 0,
				   NULL, 0);
		if (err && err != -ENOENT) {
			dist(d, want->job, BCS_DIST_RELEASE, 0, 0);
			return false;
		}
		have->release = want->release;
		have->metrics = 0;
		hp->nr = 0;
	}
	if (job_has_subsets(&d->followed.ctx, want->job, &ranks))
		return reconcile_subset(d, want, have, hp);
	if (hp->subset) {
		/* From some of its tasks to the whole job. */
		for (i = 0; have->metrics && i < hp->nr; i++)
			dist_pid(d, want->job, BCS_DIST_DISABLE, have->metrics,
				 0, hp->pid[i]);
		have->metrics = 0;
		memset(hp, 0, sizeof(*hp));
	}
	add = want->metrics & ~have->metrics;
	if (have->metrics && want->sub_bits != have->sub_bits)
		add = want->metrics;
	if (add) {
		if (!dist(d, want->job, BCS_DIST_ENABLE, add, want->sub_bits)) {
			have->metrics |= (uint8_t)add;
			have->sub_bits = want->sub_bits;
		} else {
			done = false;
		}
	}
	del = have->metrics & ~want->metrics;
	if (del) {
		err = bcs_dist_ctl(d->bcs, want->job, BCS_DIST_DISABLE, del, 0,
				   NULL, 0);
		if (!err || err == -ENOENT)
			have->metrics &= (uint8_t)~del;
		else
			done = !dist(d, want->job, BCS_DIST_DISABLE, del, 0) &&
			       done;
	}
	return done;
}

/*
 * The slice window as the context has it.  Done either way: a node that
 * comes to it after its first slice began (-ERANGE), or whose ring is too
 * small (-E2BIG), cannot capture it, now or later.
 */
static void apply_window(struct bcsd *d, const struct bcsp_context *c)
{
	struct bcsd_record *r = &d->record;
	bool armed = c->flags & BCSP_WINDOW_ARMED;
	int err;

	if (r->applied && (r->window_flags & BCSP_WINDOW_ARMED) == armed &&
	    (!armed || (r->window_from == c->window_from &&
			r->window_to == c->window_to)))
		return;
	if (armed)
		err = bcs_window_set(d->bcs, c->window_from, c->window_to);
	else if (r->applied && (r->window_flags & BCSP_WINDOW_ARMED))
		err = bcs_window_clear(d->bcs);
	else
		return;		/* none armed by us: leave a local one alone */
	if (err) {
		d->cnt.kernel_errors++;
		pr_warn("slice window %llu..%llu: %s",
			(unsigned long long)c->window_from,
			(unsigned long long)c->window_to,
			bcs_strerror(err, BCS_CTX_WINDOW));
	} else if (armed) {
		pr_info("slice window armed: slices %llu..%llu",
			(unsigned long long)c->window_from,
			(unsigned long long)c->window_to);
	} else {
		pr_info("slice window cleared");
	}
}

static void apply(struct bcsd *d)
{
	const struct bcsp_context *c = &d->followed.ctx;
	struct bcsd_record *r = &d->record;
	struct bcsp_job_stats next[BCSP_MAX_JOBS];
	const struct bcsp_job_stats *old;
	bool done = true;
	uint32_t i;

	for (i = 0; i < c->nr_jobs; i++) {
		old = applied_job(d, c->jobs[i].job);
		if (old) {
			next[i] = *old;
			r->next[i] = r->pids[old - r->jobs];
		} else {
			/* First seen: its earlier releases are not ours. */
			memset(&next[i], 0, sizeof(next[i]));
			next[i].job = c->jobs[i].job;
			next[i].release = c->jobs[i].release;
			memset(&r->next[i], 0, sizeof(r->next[i]));
		}
		done = reconcile(d, &c->jobs[i], &next[i], &r->next[i]) &&
		       done;
	}
	apply_window(d, c);
	/* Jobs no longer in it are destroyed: bcs.ko keeps what they had. */
	memcpy(r->jobs, next, sizeof(next[0]) * c->nr_jobs);
	memcpy(r->pids, r->next, sizeof(r->next[0]) * c->nr_jobs);
	r->nr_jobs = c->nr_jobs;
	r->window_flags = c->flags & BCSP_WINDOW_ARMED;
	r->window_from = c->window_from;
	r->window_to = c->window_to;
	if (!r->applied || r->version != c->version)
		pr_info("statistics context %u applied%s", c->version,
			done ? "" : ", some jobs still to do");
	r->applied = true;
	r->epoch = d->followed.ctx_epoch;
	r->master = d->followed.ctx_master;
	r->version = c->version;
	r->retry = !done;
}

/* After node.c handed the strobe to bcs.ko: a context due now applies. */
static void on_strobe(struct bcsd *d, const struct bcsp_msg *m,
		      const struct bcsd_origin *from)
{
	(void)from;
	d->record.slice = m->strobe.slice;
	if (ctx_new(d) && m->strobe.slice >= d->followed.ctx.apply_slice)
		apply(d);
}

static void record_tick(struct bcsd *d, void *arg)
{
	uint64_t now = now_mono_ms();

	(void)arg;
	if (!d->record.retry || ctx_new(d) ||
	    now - d->record.retried_ms < d->cfg.report_ms)
		return;
	d->record.retried_ms = now;
	apply(d);
}

int record_init(struct bcsd *d)
{
	memset(&d->record, 0, sizeof(d->record));
	dispatch_register(d, BCSP_STROBE, on_strobe);
	return loop_on_tick(d, record_tick, NULL);
}

void record_exit(struct bcsd *d)
{
	/* bcs.ko keeps recording: the statistics are the jobs', not ours. */
	d->record.applied = false;
}

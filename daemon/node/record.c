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
#include "node/record.h"

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

/*
 * Bring job @want's statistics in bcs.ko from @have to @want; @have keeps
 * what was done.  False if something is left to do.
 */
static bool reconcile(struct bcsd *d, const struct bcsp_job_stats *want,
		      struct bcsp_job_stats *have)
{
	uint32_t add, del;
	bool done = true;
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
		} else {
			/* First seen: its earlier releases are not ours. */
			memset(&next[i], 0, sizeof(next[i]));
			next[i].job = c->jobs[i].job;
			next[i].release = c->jobs[i].release;
		}
		done = reconcile(d, &c->jobs[i], &next[i]) && done;
	}
	apply_window(d, c);
	/* Jobs no longer in it are destroyed: bcs.ko keeps what they had. */
	memcpy(r->jobs, next, sizeof(next[0]) * c->nr_jobs);
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

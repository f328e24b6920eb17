// SPDX-License-Identifier: GPL-2.0
/*
 * The statistics context (BCSP_CONTEXT): what the nodes' bcs.ko record
 * of each job (bcsctl stats) and the window of slices they record in,
 * kept by the active master and sent with every map.
 */
#include <errno.h>
#include <string.h>

#include <linux/bcs.h>
#include <linux/bcs_hist.h>

#include "bcsd.h"
#include "master/context.h"

/*
 * Context @c as version 3 has it: no subsets, and a job that had some
 * records nothing, not all of its tasks (a daemon of version 3 would take
 * it for the whole job).
 */
void context_v3(struct bcsp_context *c)
{
	uint32_t i, k;

	for (i = 0; i < c->nr_subsets; i++)
		for (k = 0; k < c->nr_jobs; k++)
			if (c->jobs[k].job == c->subsets[i].job)
				c->jobs[k].metrics = 0;
	c->nr_subsets = 0;
}

/* Drop job @id's subsets from @c. */
static void subsets_drop(struct bcsp_context *c, uint32_t id)
{
	uint32_t i, n = 0;

	for (i = 0; i < c->nr_subsets; i++)
		if (c->subsets[i].job != id)
			c->subsets[n++] = c->subsets[i];
	c->nr_subsets = n;
}

/* Job @id's subsets in @c. */
static uint32_t subsets_of(const struct bcsp_context *c, uint32_t id)
{
	uint32_t i, n = 0;

	for (i = 0; i < c->nr_subsets; i++)
		n += c->subsets[i].job == id;
	return n;
}

/*
 * The statistics context, to the group and to this host's node part; sent
 * with every map once there is one, so that a node that lost it or
 * joined later gets it.
 */
void context_send(struct bcsd *d)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_CONTEXT } };

	if (!d->master.ctx.version)
		return;
	m.hdr.epoch = d->master.epoch;
	m.hdr.priority = (uint16_t)d->cfg.priority;
	m.ctx = d->master.ctx;
	if (d->cfg.protocol_version < 4)
		context_v3(&m.ctx);
	net_send(d, &m, NULL);
	d->followed.ctx = m.ctx;
	d->followed.ctx_epoch = d->master.epoch;
	d->followed.ctx_master = d->node_id;
	d->followed.have_ctx = true;
	dispatch(d, &m, &(struct bcsd_origin){
		.local = true, .slice = d->master.strobe_slice });
}

/* Strobes from a context change to the one that applies it. */
#define CTX_LEAD_SLICES	2

static void ctx_changed(struct bcsd *d)
{
	d->master.ctx.version++;
	d->master.ctx.apply_slice = d->master.strobe_slice +
				    (uint64_t)CTX_LEAD_SLICES * d->master.plan_next;
	context_send(d);
}

static struct bcsp_job_stats *ctx_job(struct bcsd *d, uint32_t id,
				      bool add)
{
	struct bcsp_context *c = &d->master.ctx;
	uint32_t i;

	for (i = 0; i < c->nr_jobs; i++)
		if (c->jobs[i].job == id)
			return &c->jobs[i];
	if (!add || c->nr_jobs >= BCSP_MAX_JOBS)
		return NULL;
	memset(&c->jobs[c->nr_jobs], 0, sizeof(c->jobs[0]));
	c->jobs[c->nr_jobs].job = id;
	return &c->jobs[c->nr_jobs++];
}

/*
 * Statistics request @req (BCSP_OP_STATS) for a job the master has
 * (@known) or not: 0 or a negative errno.
 */
int context_stats(struct bcsd *d, const struct bcsp_request *req, bool known)
{
	struct bcsp_context *c = &d->master.ctx;
	uint32_t metrics = req->stats.metrics, n = req->stats.nr_subsets, i;
	struct bcsp_job_stats *js;

	if (req->stats.op > BCS_DIST_RELEASE || (metrics & ~BCS_DIST_ALL) ||
	    (req->stats.op == BCS_DIST_RELEASE) != !metrics ||
	    (req->stats.op == BCS_DIST_ENABLE ?
	     req->stats.sub_bits > BCS_HIST_SUB_BITS_MAX : req->stats.sub_bits) ||
	    n > BCSP_JOB_SUBSETS_MAX || (n && req->stats.op != BCS_DIST_ENABLE))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!bcsp_subset_valid(&req->stats.subsets[i]))
			return -EINVAL;
	/* Daemons of version 3 would record the whole job. */
	if (n && d->cfg.protocol_version < 4)
		return -EPROTONOSUPPORT;
	if (!known)
		return -ENOENT;
	if (n && c->nr_subsets - subsets_of(c, req->job) + n >
	    BCSP_CTX_SUBSETS_MAX)
		return -E2BIG;	/* the other jobs' subsets leave no room */
	js = ctx_job(d, req->job, true);
	if (!js)
		return -ENOSPC;	/* BCSP_MAX_JOBS jobs have statistics */
	switch (req->stats.op) {
	case BCS_DIST_ENABLE:
		js->metrics |= (uint8_t)metrics;
		js->sub_bits = (uint8_t)req->stats.sub_bits;
		/* Its processes now: those named, or all of them. */
		subsets_drop(c, req->job);
		for (i = 0; i < n; i++) {
			c->subsets[c->nr_subsets] = req->stats.subsets[i];
			c->subsets[c->nr_subsets++].job = req->job;
		}
		break;
	case BCS_DIST_DISABLE:
		js->metrics &= (uint8_t)~metrics;
		break;
	default:
		/* bcs.ko forgets the job's enables with its statistics. */
		js->metrics = 0;
		js->release++;
		subsets_drop(c, req->job);
		break;
	}
	ctx_changed(d);
	return 0;
}

/* Window request @req: 0 or a negative errno. */
int context_window(struct bcsd *d, const struct bcsp_request *req)
{
	struct bcsp_context *c = &d->master.ctx;

	if (req->op == BCSP_OP_WINDOW_CLEAR) {
		c->flags &= ~BCSP_WINDOW_ARMED;
		ctx_changed(d);
		return 0;
	}
	if (req->window.from > req->window.to)
		return -EINVAL;
	/*
	 * Every node must have it before the window's first slice: it
	 * applies it at the first strobe at or after apply_slice, with
	 * plans up to a plan's step after it.
	 */
	if (req->window.from <= d->master.strobe_slice +
	    (uint64_t)(CTX_LEAD_SLICES + 1) * d->master.plan_next - 1)
		return -ERANGE;
	c->flags |= BCSP_WINDOW_ARMED;
	c->window_from = req->window.from;
	c->window_to = req->window.to;
	ctx_changed(d);
	return 0;
}

/* Job @id is gone: so are its statistics from the context. */
void context_forget(struct bcsd *d, uint32_t id)
{
	struct bcsp_job_stats *js = ctx_job(d, id, false);

	if (!js)
		return;
	subsets_drop(&d->master.ctx, id);
	*js = d->master.ctx.jobs[--d->master.ctx.nr_jobs];
	ctx_changed(d);
}

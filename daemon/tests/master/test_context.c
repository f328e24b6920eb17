// SPDX-License-Identifier: GPL-2.0
/*
 * The master's statistics context (context.c) with subsets of jobs'
 * processes: an enable sets a job's subset (replacing the one before),
 * one without makes it the whole job again; release and a job's end drop
 * it; a job takes at most BCSP_JOB_SUBSETS_MAX, the context
 * BCSP_CTX_SUBSETS_MAX; at protocol_version 3 subsets are refused, and
 * a context sent then has none, its jobs that had some recording nothing.
 */
#include <errno.h>
#include <string.h>

#include "bcsd.h"
#include "master/context.h"
#include "tests/unit.h"

static struct bcsd d;
static struct bcsp_msg last;	/* the last context sent */
static unsigned int sends;

int net_send(struct bcsd *dd, struct bcsp_msg *m,
	     const struct sockaddr_in *to)
{
	(void)dd;
	(void)to;
	last = *m;
	sends++;
	return 0;
}

void dispatch(struct bcsd *dd, const struct bcsp_msg *m,
	      const struct bcsd_origin *from)
{
	(void)dd;
	(void)m;
	(void)from;
}

/* Stats request @op of @job, @n subsets of ranks i .. i. */
static int stats(uint32_t job, uint32_t op, uint32_t n)
{
	static struct bcsp_request req;
	uint32_t i;

	memset(&req, 0, sizeof(req));
	req.op = BCSP_OP_STATS;
	req.job = job;
	req.stats.op = op;
	req.stats.metrics = op == BCS_DIST_RELEASE ? 0 : 1;
	req.stats.nr_subsets = n;
	for (i = 0; i < n && i < BCSP_JOB_SUBSETS_MAX; i++)
		req.stats.subsets[i] = (struct bcsp_subset){
			.kind = BCSP_SUBSET_RANKS, .a = i, .b = i };
	return context_stats(&d, &req, true);
}

static uint32_t subsets_of(const struct bcsp_context *c, uint32_t job)
{
	uint32_t i, n = 0;

	for (i = 0; i < c->nr_subsets; i++)
		n += c->subsets[i].job == job;
	return n;
}

int main(void)
{
	struct bcsp_context *c = &d.master.ctx;

	d.cfg.protocol_version = 4;
	d.master.plan_next = 1;
	CHECK(stats(5, BCS_DIST_ENABLE, 2) == 0 && subsets_of(c, 5) == 2 &&
	      c->nr_jobs == 1 && c->jobs[0].metrics == 1);
	CHECK(last.ctx.nr_subsets == 2 && sends == 1);
	/* Replaced, not added to; then the whole job again. */
	CHECK(stats(5, BCS_DIST_ENABLE, 1) == 0 && subsets_of(c, 5) == 1);
	CHECK(stats(5, BCS_DIST_ENABLE, 0) == 0 && c->nr_subsets == 0);
	/* Enable only; a job's bound. */
	CHECK(stats(5, BCS_DIST_DISABLE, 1) == -EINVAL);
	CHECK(stats(5, BCS_DIST_ENABLE, BCSP_JOB_SUBSETS_MAX + 1) == -EINVAL);
	/* The context's: 64 in all, a job's own counted out on replacing. */
	CHECK(stats(5, BCS_DIST_ENABLE, BCSP_JOB_SUBSETS_MAX) == 0);
	CHECK(stats(6, BCS_DIST_ENABLE, BCSP_JOB_SUBSETS_MAX) == 0);
	CHECK(c->nr_subsets == BCSP_CTX_SUBSETS_MAX);
	CHECK(stats(7, BCS_DIST_ENABLE, 1) == -E2BIG && c->nr_jobs == 2);
	CHECK(stats(5, BCS_DIST_ENABLE, BCSP_JOB_SUBSETS_MAX) == 0);
	/* A job gone, a release: their subsets go. */
	context_forget(&d, 6);
	CHECK(subsets_of(c, 6) == 0 && c->nr_subsets == BCSP_JOB_SUBSETS_MAX);
	CHECK(stats(7, BCS_DIST_ENABLE, 1) == 0);
	CHECK(stats(5, BCS_DIST_RELEASE, 0) == 0 && subsets_of(c, 5) == 0 &&
	      subsets_of(c, 7) == 1);

	/* Version 3: refused; what is there is sent without, recording nothing. */
	d.cfg.protocol_version = 3;
	CHECK(stats(8, BCS_DIST_ENABLE, 1) == -EPROTONOSUPPORT);
	CHECK(stats(8, BCS_DIST_ENABLE, 0) == 0);
	CHECK(last.ctx.nr_subsets == 0 && subsets_of(c, 7) == 1);
	{
		uint32_t i, m7 = 9, m8 = 0;

		for (i = 0; i < last.ctx.nr_jobs; i++) {
			if (last.ctx.jobs[i].job == 7)
				m7 = last.ctx.jobs[i].metrics;
			if (last.ctx.jobs[i].job == 8)
				m8 = last.ctx.jobs[i].metrics;
		}
		CHECK(m7 == 0 && m8 == 1);
	}
	return unit_done("test_context");
}

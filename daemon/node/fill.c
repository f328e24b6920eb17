// SPDX-License-Identifier: GPL-2.0
/*
 * The fill policy's classifier, after Flexible CoScheduling (Frachtenberg,
 * Feitelson, Petrini and Fernandez): a job whose tasks compute long
 * between voluntary sleeps hardly communicates and gains nothing from
 * running with its peers (DC, "don't care"); one that sleeps often but
 * spends most of its time asleep waits for its peers even when they run
 * (frustrated); the rest, fine-grained and waiting little, is what
 * coscheduling is for (CS).  DC and frustrated jobs may fill a node's
 * idle rows (Documentation/matrix.rst, "Fill").
 *
 * The inputs are bcs.ko's per-task totals: CPU time, blocked time and
 * bursts ended by a voluntary sleep.  The granularity is the mean burst,
 * run / bursts; a period with CPU time and no voluntary sleep is as
 * coarse as it gets.
 */
#include <errno.h>

#include "node/fill.h"

int fill_params_check(const struct fill_params *p)
{
	if (!p->coarse_ns || !p->frustrated_pct || p->frustrated_pct > 100 ||
	    !p->min_run_ns || !p->confirm)
		return -EINVAL;
	return 0;
}

enum fill_class fill_verdict(const struct fill_params *p,
			     const struct fill_sample *d)
{
	uint64_t run, blocked, busy;

	if (d->run_ns < p->min_run_ns)
		return FILL_UNKNOWN;
	/* The mean burst: no voluntary sleep at all is the coarsest. */
	if (!d->bursts || d->run_ns / d->bursts >= p->coarse_ns)
		return FILL_DC;
	/* blocked / (run + blocked) >= pct / 100, the products in 64 bits. */
	run = d->run_ns;
	blocked = d->blocked_ns;
	while (run > UINT64_MAX / 256 || blocked > UINT64_MAX / 256) {
		run >>= 1;
		blocked >>= 1;
	}
	busy = run + blocked;
	if (blocked * 100 >= busy * p->frustrated_pct)
		return FILL_FRUSTRATED;
	return FILL_CS;
}

bool fill_update(struct fill_state *s, const struct fill_params *p,
		 const struct fill_sample *now)
{
	struct fill_sample d;
	enum fill_class v;

	if (!s->have_last || now->run_ns < s->last.run_ns ||
	    now->blocked_ns < s->last.blocked_ns ||
	    now->bursts < s->last.bursts) {
		s->last = *now;
		s->have_last = true;
		s->votes = 0;
		return false;
	}
	d.run_ns = now->run_ns - s->last.run_ns;
	d.blocked_ns = now->blocked_ns - s->last.blocked_ns;
	d.bursts = now->bursts - s->last.bursts;
	v = fill_verdict(p, &d);
	if (v == FILL_UNKNOWN)
		return false;		/* too little CPU: keep what was */
	s->last = *now;
	if (v == s->cls) {
		s->votes = 0;
		return false;
	}
	if (v != s->pending) {
		s->pending = v;
		s->votes = 0;
	}
	if (++s->votes < p->confirm)
		return false;
	s->cls = v;
	s->votes = 0;
	return true;
}

bool fill_is_filler(enum fill_class c)
{
	return c == FILL_DC || c == FILL_FRUSTRATED;
}

const char *fill_class_name(enum fill_class c)
{
	switch (c) {
	case FILL_CS:
		return "cs";
	case FILL_FRUSTRATED:
		return "frustrated";
	case FILL_DC:
		return "dc";
	default:
		return "unknown";
	}
}

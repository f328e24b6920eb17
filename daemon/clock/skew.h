/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Clock offsets in the tree of bcsd daemons (Documentation/tree.rst,
 * "Clock offsets"), MRNet's clock skew detection: every parent estimates
 * each child's clock offset from timestamped round trips, keeping the
 * sample of minimum delay, and the offsets compose down the tree, so that
 * the master knows every node's offset from its own clock, with a bound.
 *
 * An offset is the child's clock minus the parent's (or a node's minus the
 * root's), int64 ns, always within -INT64_MAX .. INT64_MAX so that it can
 * be negated.  A bound is uint64 ns: the true offset lies within
 * offset - bound .. offset + bound.  SKEW_BOUND_NONE means no bound: the
 * offset is not known.
 *
 * Pure: no I/O, no clock reads (every "now" is passed in, CLOCK_REALTIME
 * ns of the parent), no allocation, nothing of the rest of bcsd is called.
 */
#ifndef BCSD_SKEW_H
#define BCSD_SKEW_H

#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"	/* BCSD_MAX_NODES */

/* The samples kept per child; the estimate is chosen among them. */
#define SKEW_WINDOW		8
/* No bound: the offset is not known. */
#define SKEW_BOUND_NONE		UINT64_MAX
/* No parent: the root's, as TOPO_NONE. */
#define SKEW_NONE		UINT32_MAX
/*
 * The rate at which two clocks may drift apart, parts per million, used
 * unless configured: two free-running crystals of +-50 ppm each.
 */
#define SKEW_DRIFT_PPM_DEFAULT	100
/* The largest drift rate accepted: one second per second. */
#define SKEW_DRIFT_PPM_MAX	1000000

/* One round trip, NTP's four timestamps, ns. */
struct skew_stamps {
	uint64_t t1;		/* the parent sends, parent's clock */
	uint64_t t2;		/* the child receives, child's clock */
	uint64_t t3;		/* the child replies, child's clock */
	uint64_t t4;		/* the parent receives, parent's clock */
};

/* What one round trip says. */
struct skew_sample {
	int64_t offset;		/* child minus parent, ns */
	uint64_t delay;		/* (t4 - t1) - (t3 - t2): the round trip */
	uint64_t bound;		/* ceil(delay / 2) + the clock resolution */
	uint64_t t1;		/* when it was taken, parent's clock */
	uint64_t t4;		/* when it came back, parent's clock */
};

/* An offset and its bound. */
struct skew_estimate {
	int64_t offset;		/* ns */
	uint64_t bound;		/* ns, SKEW_BOUND_NONE: not known */
};

/* The last SKEW_WINDOW samples of one child, and what became of them. */
struct skew_window {
	struct skew_sample sample[SKEW_WINDOW];	/* a ring */
	uint32_t nr;		/* samples held, <= SKEW_WINDOW */
	uint32_t next;		/* the slot of the next sample */
	uint64_t added;		/* samples taken in */
	uint64_t refused;	/* samples refused (skew_window_add()) */
};

/* How an estimate is made from a window. */
struct skew_params {
	uint64_t max_age;	/* ns: older samples (now - t1) are not used */
	uint32_t drift_ppm;	/* 0 .. SKEW_DRIFT_PPM_MAX */
};

/*
 * Make @s from the timestamps @ts of one round trip whose clocks are read
 * to within @resolution ns:
 *   offset = ((t2 - t1) + (t3 - t4)) / 2, rounded down,
 *   delay  = (t4 - t1) - (t3 - t2),
 *   bound  = ceil(delay / 2) + resolution.
 * Errors, @s unchanged: -EINVAL when t4 < t1, t3 < t2, or the child held
 * the message longer than the round trip took (a negative delay);
 * -ERANGE when the offset is beyond -INT64_MAX .. INT64_MAX or the bound
 * reaches SKEW_BOUND_NONE.
 */
int skew_sample_make(struct skew_sample *s, const struct skew_stamps *ts,
		     uint64_t resolution);

/* Empty @w, its counters zero. */
void skew_window_init(struct skew_window *w);
/*
 * Make a sample of @ts (skew_sample_make()) and put it into @w in the
 * place of the oldest when @w is full; counted in @w->added.  Errors:
 * those of skew_sample_make(), @w unchanged but @w->refused counted.
 */
int skew_window_add(struct skew_window *w, const struct skew_stamps *ts,
		    uint64_t resolution);
/*
 * The estimate of @w at @now (parent's clock): among the samples with
 * t4 <= @now and now - t1 <= @p->max_age, the one of minimum delay (the
 * newest of equals); its offset, and its bound widened by the drift since
 * it was taken, ceil(drift_ppm * (now - t1) / 10^6), saturating at
 * SKEW_BOUND_NONE.  @chosen, unless NULL, gets the sample's slot in
 * @w->sample[].  Errors, @e unchanged: -EINVAL for a drift rate above
 * SKEW_DRIFT_PPM_MAX; -ENOENT when no sample is usable (none, all too
 * old, or taken after @now: the parent's clock went back).
 */
int skew_window_estimate(const struct skew_window *w, uint64_t now,
			 const struct skew_params *p, struct skew_estimate *e,
			 uint32_t *chosen);

/*
 * Widen @e's bound by the drift over @age ns, ceil(drift_ppm * age /
 * 10^6), saturating at SKEW_BOUND_NONE: for an estimate that was made
 * @age ago.  -EINVAL, @e unchanged, for a drift rate above
 * SKEW_DRIFT_PPM_MAX.
 */
int skew_widen(struct skew_estimate *e, uint64_t age, uint32_t drift_ppm);

/*
 * @out = the offset of a node from the root, given its parent's offset
 * from the root @up and its own from its parent @link: the offsets add,
 * the bounds add (saturating at SKEW_BOUND_NONE).  When either is not
 * known, neither is @out ({0, SKEW_BOUND_NONE}).  -ERANGE, @out not known,
 * when the sum is beyond -INT64_MAX .. INT64_MAX.  @out may be @up or
 * @link.
 */
int skew_compose(const struct skew_estimate *up,
		 const struct skew_estimate *link, struct skew_estimate *out);

/*
 * The offset of every node of a tree from its root: @nr nodes, node i's
 * parent @parent[i] (SKEW_NONE for the root) and @link[i] its offset from
 * its parent (the root's is not read).  @out[i] gets node i's offset from
 * the root, composed breadth-first from the root ({0, 0}) down; a node
 * whose path has a link not known, or whose sum overflows, is not known.
 * Returns the number of nodes known, or -EINVAL, @out unchanged, when
 * @nr is 0 or above BCSD_MAX_NODES, a parent is out of range, there is
 * not exactly one root, or a node is not below the root (a cycle).
 */
int skew_tree(uint32_t nr, const uint32_t *parent,
	      const struct skew_estimate *link, struct skew_estimate *out);

/*
 * Whether |offset| + bound of @e is beyond @permille thousandths of a
 * slice of @slice ns (the warning): 1 beyond, 0 within, -ENOENT when @e
 * is not known.
 */
int skew_exceeds(const struct skew_estimate *e, uint64_t slice,
		 uint32_t permille);

/*
 * Whether two estimates of one offset agree, their intervals offset +-
 * bound overlapping (bcs's and chrony's, say).  One not known agrees
 * with anything.
 */
bool skew_agree(const struct skew_estimate *a, const struct skew_estimate *b);

/* Whether @value lies within @e's interval; always when @e is not known. */
bool skew_contains(const struct skew_estimate *e, int64_t value);

#endif /* BCSD_SKEW_H */

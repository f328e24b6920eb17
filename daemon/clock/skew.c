// SPDX-License-Identifier: GPL-2.0
/*
 * Clock offsets in the tree of daemons: samples of round trips, the
 * minimum-delay estimate of a window of them, and the composition down the
 * tree (skew.h, Documentation/tree.rst).  Pure: no I/O, no clock.
 */
#include <errno.h>
#include <string.h>

#include "clock/skew.h"

/* a + b, stopping at UINT64_MAX. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* |v| as uint64, right for INT64_MIN too. */
static uint64_t mag(int64_t v)
{
	return v < 0 ? (uint64_t)-(v + 1) + 1 : (uint64_t)v;
}

int skew_sample_make(struct skew_sample *s, const struct skew_stamps *ts,
		     uint64_t resolution)
{
	uint64_t rtt, hold, delay, half, ceil_half, a, d;
	int64_t offset;

	if (ts->t4 < ts->t1 || ts->t3 < ts->t2)
		return -EINVAL;
	rtt = ts->t4 - ts->t1;
	hold = ts->t3 - ts->t2;
	if (hold > rtt)
		return -EINVAL;
	delay = rtt - hold;
	half = delay / 2;
	ceil_half = half + (delay & 1);

	/*
	 * The offset lies within lo = t3 - t4 .. hi = t2 - t1 = lo + delay;
	 * the estimate is the middle, rounded down: lo + floor(delay / 2).
	 * lo may be beyond int64 while the middle is not.
	 */
	if (ts->t3 >= ts->t4) {
		a = ts->t3 - ts->t4;
		if (a > INT64_MAX || half > INT64_MAX - a)
			return -ERANGE;
		offset = (int64_t)(a + half);
	} else {
		a = ts->t4 - ts->t3;
		if (half >= a) {
			offset = (int64_t)(half - a);
		} else {
			d = a - half;
			if (d > INT64_MAX)
				return -ERANGE;
			offset = -(int64_t)d;
		}
	}
	if (resolution >= SKEW_BOUND_NONE - ceil_half)
		return -ERANGE;

	s->offset = offset;
	s->delay = delay;
	s->bound = ceil_half + resolution;
	s->t1 = ts->t1;
	s->t4 = ts->t4;
	return 0;
}

void skew_window_init(struct skew_window *w)
{
	memset(w, 0, sizeof(*w));
}

int skew_window_add(struct skew_window *w, const struct skew_stamps *ts,
		    uint64_t resolution)
{
	struct skew_sample s;
	int err;

	err = skew_sample_make(&s, ts, resolution);
	if (err) {
		w->refused = sat_add(w->refused, 1);
		return err;
	}
	w->sample[w->next] = s;
	w->next = (w->next + 1) % SKEW_WINDOW;
	if (w->nr < SKEW_WINDOW)
		w->nr++;
	w->added = sat_add(w->added, 1);
	return 0;
}

/* ceil(drift_ppm * age / 10^6), saturating; drift_ppm <= 10^6. */
static uint64_t drift_over(uint64_t age, uint32_t drift_ppm)
{
	uint64_t q = age / 1000000, r = age % 1000000;

	/* q * drift_ppm <= age; r * drift_ppm < 10^12. */
	return sat_add(q * drift_ppm,
		       (r * drift_ppm + 999999) / 1000000);
}

int skew_widen(struct skew_estimate *e, uint64_t age, uint32_t drift_ppm)
{
	if (drift_ppm > SKEW_DRIFT_PPM_MAX)
		return -EINVAL;
	e->bound = sat_add(e->bound, drift_over(age, drift_ppm));
	return 0;
}

int skew_window_estimate(const struct skew_window *w, uint64_t now,
			 const struct skew_params *p, struct skew_estimate *e,
			 uint32_t *chosen)
{
	const struct skew_sample *s, *best = NULL;
	uint32_t i, slot, best_slot = 0, nr;

	if (p->drift_ppm > SKEW_DRIFT_PPM_MAX)
		return -EINVAL;
	nr = w->nr < SKEW_WINDOW ? w->nr : SKEW_WINDOW;
	/* Oldest first, so that the newest of equal delays wins. */
	slot = (w->next % SKEW_WINDOW + SKEW_WINDOW - nr) % SKEW_WINDOW;
	for (i = 0; i < nr; i++, slot = (slot + 1) % SKEW_WINDOW) {
		s = &w->sample[slot];
		if (s->t4 > now || now - s->t1 > p->max_age)
			continue;
		if (!best || s->delay <= best->delay) {
			best = s;
			best_slot = slot;
		}
	}
	if (!best)
		return -ENOENT;
	e->offset = best->offset;
	e->bound = sat_add(best->bound, drift_over(now - best->t1,
						   p->drift_ppm));
	if (chosen)
		*chosen = best_slot;
	return 0;
}

int skew_compose(const struct skew_estimate *up,
		 const struct skew_estimate *link, struct skew_estimate *out)
{
	int64_t a = up->offset, b = link->offset;
	uint64_t bound;

	if (up->bound == SKEW_BOUND_NONE || link->bound == SKEW_BOUND_NONE) {
		out->offset = 0;
		out->bound = SKEW_BOUND_NONE;
		return 0;
	}
	if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < -INT64_MAX - b)) {
		out->offset = 0;
		out->bound = SKEW_BOUND_NONE;
		return -ERANGE;
	}
	bound = sat_add(up->bound, link->bound);
	out->offset = bound == SKEW_BOUND_NONE ? 0 : a + b;
	out->bound = bound;
	return 0;
}

int skew_tree(uint32_t nr, const uint32_t *parent,
	      const struct skew_estimate *link, struct skew_estimate *out)
{
	uint32_t queue[BCSD_MAX_NODES], kid[BCSD_MAX_NODES];
	uint32_t first[BCSD_MAX_NODES + 1];
	uint32_t i, q, head, tail, acc = 0, root = SKEW_NONE;
	int known = 0;

	if (nr == 0 || nr > BCSD_MAX_NODES)
		return -EINVAL;
	memset(first, 0, sizeof(first));
	for (i = 0; i < nr; i++) {
		if (parent[i] == SKEW_NONE) {
			if (root != SKEW_NONE)
				return -EINVAL;
			root = i;
		} else if (parent[i] >= nr) {
			return -EINVAL;
		} else {
			first[parent[i]]++;
		}
	}
	if (root == SKEW_NONE)
		return -EINVAL;

	/*
	 * Each node's children, in index order: kid[first[q]] ..
	 * kid[first[q + 1] - 1] (counted, summed to the ends of the ranges,
	 * then filled from the back).
	 */
	for (q = 0; q < nr; q++) {
		acc += first[q];
		first[q] = acc;
	}
	first[nr] = acc;
	for (i = nr; i-- > 0;)
		if (i != root)
			kid[--first[parent[i]]] = i;

	/*
	 * Breadth-first from the root: every node enters the queue once,
	 * after its parent, so at most nr entries; a node that never does
	 * is in a cycle.
	 */
	queue[0] = root;
	tail = 1;
	for (head = 0; head < tail; head++) {
		q = queue[head];
		for (i = first[q]; i < first[q + 1]; i++)
			queue[tail++] = kid[i];
	}
	if (tail != nr)
		return -EINVAL;

	out[root].offset = 0;
	out[root].bound = 0;
	known = 1;
	for (head = 1; head < nr; head++) {
		i = queue[head];
		skew_compose(&out[parent[i]], &link[i], &out[i]);
		if (out[i].bound != SKEW_BOUND_NONE)
			known++;
	}
	return known;
}

int skew_exceeds(const struct skew_estimate *e, uint64_t slice,
		 uint32_t permille)
{
	uint64_t q = slice / 1000, r = slice % 1000, limit;

	if (e->bound == SKEW_BOUND_NONE)
		return -ENOENT;
	/* floor(slice * permille / 1000), saturating. */
	if (permille && q > UINT64_MAX / permille)
		limit = UINT64_MAX;
	else
		limit = sat_add(q * permille, r * permille / 1000);
	return sat_add(mag(e->offset), e->bound) > limit;
}

bool skew_agree(const struct skew_estimate *a, const struct skew_estimate *b)
{
	uint64_t diff;

	if (a->bound == SKEW_BOUND_NONE || b->bound == SKEW_BOUND_NONE)
		return true;
	/* The true difference is below 2^64; modulo 2^64 it is exact. */
	if (a->offset >= b->offset)
		diff = (uint64_t)a->offset - (uint64_t)b->offset;
	else
		diff = (uint64_t)b->offset - (uint64_t)a->offset;
	return diff <= sat_add(a->bound, b->bound);
}

bool skew_contains(const struct skew_estimate *e, int64_t value)
{
	struct skew_estimate v = { .offset = value, .bound = 0 };

	return skew_agree(e, &v);
}

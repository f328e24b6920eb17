// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the clock offsets of a tree of daemons (skew.c):
 * samples against hand-worked round trips, refused and overflowing
 * samples, the minimum-delay choice, aging and the widening by drift, and,
 * over many random cases of synthetic clocks (an offset, a drift, delays
 * symmetric or not, jitter from a seeded generator), that the interval of
 * the estimate always holds the true offset, for one link and composed
 * over a tree of three levels.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock/skew.h"
#include "tests/unit.h"

/* About 2023 in CLOCK_REALTIME ns: where the synthetic clocks start. */
#define BASE		1700000000000000000ULL
#define MS		1000000ULL
#define SEC		1000000000ULL

/* ---- a seeded generator (xorshift64*) ----------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	return unit_rng(&rng_state);
}

/* Uniform enough in lo .. hi (hi - lo < 2^63). */
static uint64_t rng_in(uint64_t lo, uint64_t hi)
{
	return lo + rng() % (hi - lo + 1);
}

static int64_t rng_s(int64_t lim)
{
	return (int64_t)rng_in(0, 2 * (uint64_t)lim) - lim;
}

/* ---- synthetic clocks ---------------------------------------------- */

/*
 * A clock reading true time T as T + off + ppb * (T - BASE) / 10^9, read
 * to a multiple of res ns (rounded down).
 */
struct clk {
	int64_t off;
	int64_t ppb;
	uint64_t res;		/* 1: to the ns */
};

/* The clock's offset from true time at T, exactly. */
static int64_t clk_offset(const struct clk *c, uint64_t t)
{
	return c->off + c->ppb * (int64_t)(t - BASE) / 1000000000;
}

static uint64_t clk_read(const struct clk *c, uint64_t t)
{
	uint64_t v = t + (uint64_t)clk_offset(c, t);

	return v - v % c->res;
}

/*
 * One round trip from parent @p to child @c leaving at true time @t
 * (moved on to when it came back), with delays out and back and the
 * child's holding time drawn at random; @asym: one way much slower.
 */
static void round_trip(const struct clk *p, const struct clk *c,
		       uint64_t *t, bool asym, struct skew_stamps *ts)
{
	uint64_t out = rng_in(20000, 60000), back = out, hold;

	if (asym) {
		if (rng() & 1)
			out = rng_in(2000, 10 * MS);
		else
			back = rng_in(2000, 10 * MS);
	}
	/* jitter, queues on the way */
	out += rng_in(0, 20000) * (rng() % 4 == 0);
	back += rng_in(0, 20000) * (rng() % 4 == 0);
	hold = rng_in(0, 200000);
	ts->t1 = clk_read(p, *t);
	ts->t2 = clk_read(c, *t + out);
	ts->t3 = clk_read(c, *t + out + hold);
	ts->t4 = clk_read(p, *t + out + hold + back);
	*t += out + hold + back;
}

/* ---- single samples -------------------------------------------------- */

static int make(struct skew_sample *s, uint64_t t1, uint64_t t2,
		uint64_t t3, uint64_t t4, uint64_t res)
{
	struct skew_stamps ts = { t1, t2, t3, t4 };

	return skew_sample_make(s, &ts, res);
}

static void test_sample(void)
{
	struct skew_sample s;

	/* offset 200, out 100, hold 50, back 300 */
	CHECK(make(&s, 1000, 1300, 1350, 1450, 0) == 0);
	CHECK(s.offset == 100 && s.delay == 400 && s.bound == 200);
	CHECK(s.t1 == 1000 && s.t4 == 1450);
	CHECK(s.offset - (int64_t)s.bound <= 200 &&
	      s.offset + (int64_t)s.bound >= 200);
	/* the resolution widens the bound */
	CHECK(make(&s, 1000, 1300, 1350, 1450, 7) == 0 && s.bound == 207);

	/* an odd delay: the middle of 7 .. 10 rounds down, the bound up */
	CHECK(make(&s, 0, 10, 10, 3, 0) == 0);
	CHECK(s.offset == 8 && s.delay == 3 && s.bound == 2);
	/* negative: -103 .. -100 */
	CHECK(make(&s, 100, 0, 0, 103, 0) == 0);
	CHECK(s.offset == -102 && s.delay == 3 && s.bound == 2);
	/* symmetric paths without drift: the offset exactly */
	CHECK(make(&s, 5000, 5000 - 777 + 40, 5000 - 777 + 90, 5130, 0) == 0);
	CHECK(s.offset == -777 && s.delay == 80 && s.bound == 40);

	/* nonsense, left unchanged */
	s.offset = 1234;
	CHECK(make(&s, 10, 5, 6, 9, 0) == -EINVAL);	/* t4 < t1 */
	CHECK(make(&s, 10, 6, 5, 20, 0) == -EINVAL);	/* t3 < t2 */
	CHECK(make(&s, 10, 0, 11, 20, 0) == -EINVAL);	/* held > trip */
	CHECK(s.offset == 1234);
	/* held as long as the trip: delay 0, allowed */
	CHECK(make(&s, 10, 0, 10, 20, 0) == 0 && s.delay == 0 &&
	      s.bound == 0 && s.offset == -10);
}

static void test_overflow(void)
{
	const uint64_t two63 = (uint64_t)INT64_MAX + 1;
	struct skew_sample s;

	/* timestamps at the top of uint64 */
	CHECK(make(&s, UINT64_MAX - 10, UINT64_MAX - 5, UINT64_MAX - 4,
		   UINT64_MAX, 0) == 0);
	CHECK(s.offset == 0 && s.delay == 9 && s.bound == 5);
	CHECK(make(&s, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
		   0) == 0 && s.offset == 0 && s.bound == 0);
	/* offsets at the int64 limits, and one past */
	CHECK(make(&s, 0, INT64_MAX, INT64_MAX, 0, 0) == 0 &&
	      s.offset == INT64_MAX);
	CHECK(make(&s, 0, INT64_MAX, INT64_MAX, 2, 0) == 0 &&
	      s.offset == INT64_MAX - 1);
	CHECK(make(&s, 0, two63, two63, 0, 0) == -ERANGE);
	CHECK(make(&s, 0, two63 + 1, two63 + 1, 2, 0) == -ERANGE);
	CHECK(make(&s, INT64_MAX, 0, 0, INT64_MAX, 0) == 0 &&
	      s.offset == -INT64_MAX);
	CHECK(make(&s, two63, 0, 0, two63, 0) == -ERANGE);
	CHECK(make(&s, 0, UINT64_MAX, UINT64_MAX, 0, 0) == -ERANGE);
	CHECK(make(&s, UINT64_MAX, 0, 0, UINT64_MAX, 0) == -ERANGE);
	/* lo = t3 - t4 below int64, the middle not */
	CHECK(make(&s, 0, 1, 1, UINT64_MAX, 0) == 0);
	CHECK(s.offset == -INT64_MAX && s.delay == UINT64_MAX &&
	      s.bound == two63);
	CHECK(make(&s, 0, 0, 0, UINT64_MAX, 0) == -ERANGE);
	CHECK(make(&s, 0, 2, 2, UINT64_MAX, 0) == 0 && s.bound == two63);
	/* a bound reaching SKEW_BOUND_NONE */
	CHECK(make(&s, 0, 2, 2, UINT64_MAX, two63 - 2) == 0 &&
	      s.bound == UINT64_MAX - 1);
	CHECK(make(&s, 0, 2, 2, UINT64_MAX, two63 - 1) == -ERANGE);
	CHECK(make(&s, 0, 0, 0, 0, UINT64_MAX) == -ERANGE);
}

/* ---- a window -------------------------------------------------------- */

/* Add a sample of offset @off, taken at @t1, of round trip @delay. */
static int add(struct skew_window *w, int64_t off, uint64_t t1,
	       uint64_t delay)
{
	struct skew_stamps ts;

	ts.t1 = t1;
	ts.t2 = t1 + (uint64_t)off + delay / 2;
	ts.t3 = ts.t2;
	ts.t4 = t1 + delay;
	return skew_window_add(w, &ts, 0);
}

static void test_window(void)
{
	struct skew_params p = { .max_age = 10 * SEC, .drift_ppm = 0 };
	struct skew_stamps bad = { 10, 5, 6, 9 };
	struct skew_window w;
	struct skew_estimate e = { 42, 42 };
	uint32_t chosen = 99, i;

	skew_window_init(&w);
	CHECK(skew_window_estimate(&w, BASE, &p, &e, &chosen) == -ENOENT);
	CHECK(e.offset == 42 && e.bound == 42 && chosen == 99);

	CHECK(add(&w, 1000, BASE, 400) == 0);
	CHECK(add(&w, 1010, BASE + MS, 100) == 0);
	CHECK(add(&w, 990, BASE + 2 * MS, 300) == 0);
	CHECK(skew_window_estimate(&w, BASE + 3 * MS, &p, &e, &chosen) == 0);
	CHECK(chosen == 1 && e.offset == 1010 && e.bound == 50);
	/* equal delays: the newest */
	CHECK(add(&w, 1020, BASE + 3 * MS, 100) == 0);
	CHECK(skew_window_estimate(&w, BASE + 4 * MS, &p, &e, &chosen) == 0);
	CHECK(chosen == 3 && e.offset == 1020);
	CHECK(skew_window_estimate(&w, BASE + 4 * MS, &p, &e, NULL) == 0);

	/* refused samples are counted, the window unchanged */
	CHECK(skew_window_add(&w, &bad, 0) == -EINVAL);
	CHECK(w.nr == 4 && w.added == 4 && w.refused == 1);

	/* a full window forgets the oldest: the best sample goes */
	skew_window_init(&w);
	CHECK(add(&w, -5000, BASE, 10) == 0);
	for (i = 1; i < SKEW_WINDOW + 3; i++)
		CHECK(add(&w, -5000 + (int64_t)i, BASE + i * MS,
			  1000 + 2 * i) == 0);
	CHECK(w.nr == SKEW_WINDOW && w.added == SKEW_WINDOW + 3);
	CHECK(skew_window_estimate(&w, BASE + SEC, &p, &e, &chosen) == 0);
	CHECK(e.offset == -5000 + 3 && e.bound == (1000 + 6) / 2);
	CHECK(w.sample[chosen].t1 == BASE + 3 * MS);
}

static void test_aging(void)
{
	struct skew_params p = { .max_age = SEC, .drift_ppm = 100 };
	struct skew_window w;
	struct skew_estimate e;
	uint32_t chosen;

	skew_window_init(&w);
	CHECK(add(&w, 700, BASE, 100) == 0);		/* the best */
	CHECK(add(&w, 800, BASE + SEC / 2, 1000) == 0);

	/* at once: no widening */
	CHECK(skew_window_estimate(&w, BASE + SEC / 2 + 1000, &p, &e,
				   &chosen) == 0);
	CHECK(chosen == 0 && e.offset == 700);
	/* 100 ppm of 0.5 s + 1 us, 50000.1, rounded up */
	CHECK(e.bound == 50 + 50001);
	/* at the age limit */
	CHECK(skew_window_estimate(&w, BASE + SEC, &p, &e, &chosen) == 0);
	CHECK(chosen == 0 && e.bound == 50 + 100000);
	/* past it: the next best, widened by its own age */
	CHECK(skew_window_estimate(&w, BASE + SEC + 1, &p, &e, &chosen) == 0);
	CHECK(chosen == 1 && e.offset == 800 && e.bound == 500 + 50001);
	/* all too old */
	CHECK(skew_window_estimate(&w, BASE + 2 * SEC, &p, &e, NULL) ==
	      -ENOENT);
	/* all after now: the parent's clock went back */
	CHECK(skew_window_estimate(&w, BASE + 50, &p, &e, NULL) == -ENOENT);
	/* only the first came back by now */
	CHECK(skew_window_estimate(&w, BASE + SEC / 2 + 500, &p, &e,
				   &chosen) == 0 && chosen == 0);

	/* widening: rounded up, saturating, the rate checked */
	p.max_age = UINT64_MAX;
	CHECK(skew_window_estimate(&w, BASE + 1, &p, &e, &chosen) == -ENOENT);
	CHECK(skew_window_estimate(&w, BASE + 100, &p, &e, &chosen) == 0);
	CHECK(e.bound == 50 + 1);		/* 100 ppm of 100 ns: 0.01 */
	CHECK(skew_window_estimate(&w, UINT64_MAX, &p, &e, &chosen) == 0);
	CHECK(e.bound > 50 && e.bound < SKEW_BOUND_NONE);
	p.drift_ppm = SKEW_DRIFT_PPM_MAX;
	CHECK(skew_window_estimate(&w, UINT64_MAX, &p, &e, &chosen) == 0);
	CHECK(e.bound == 50 + (UINT64_MAX - BASE));
	p.drift_ppm = SKEW_DRIFT_PPM_MAX + 1;
	e.bound = 3;
	CHECK(skew_window_estimate(&w, BASE + SEC, &p, &e, NULL) == -EINVAL);
	CHECK(skew_widen(&e, SEC, SKEW_DRIFT_PPM_MAX + 1) == -EINVAL);
	CHECK(e.bound == 3);
	CHECK(skew_widen(&e, 3 * SEC, SKEW_DRIFT_PPM_DEFAULT) == 0);
	CHECK(e.bound == 3 + 300000);
	CHECK(skew_widen(&e, 0, SKEW_DRIFT_PPM_MAX) == 0 && e.bound == 300003);
	CHECK(skew_widen(&e, 1, 1) == 0 && e.bound == 300004);
	CHECK(skew_widen(&e, UINT64_MAX, SKEW_DRIFT_PPM_MAX) == 0);
	CHECK(e.bound == SKEW_BOUND_NONE);
}

/* ---- the property: the interval holds the true offset -------------- */

static void test_random_link(void)
{
	struct skew_params p = { .max_age = 60 * SEC, .drift_ppm = 100 };
	unsigned int n, bad = 0, cases = 2000, exact = 0;

	for (n = 0; n < cases; n++) {
		struct clk par = { 0, 0, 1 }, chi;
		struct skew_window w;
		struct skew_stamps ts;
		struct skew_estimate e;
		uint64_t t = BASE + rng_in(0, 1000 * SEC), now;
		uint32_t i, k = rng_in(1, 3 * SKEW_WINDOW), chosen, slot;
		bool asym = rng() % 3 == 0;
		int64_t truth;
		int ret;

		chi.off = rng_s(1000 * SEC);
		chi.ppb = rng_s(p.drift_ppm * 1000);
		chi.res = n % 4 == 0 ? rng_in(1, 1000) : 1;
		par.res = chi.res;
		skew_window_init(&w);
		for (i = 0; i < k; i++) {
			round_trip(&par, &chi, &t, asym, &ts);
			if (skew_window_add(&w, &ts, chi.res) != 0)
				bad++;
			t += rng_in(0, 2 * SEC);
		}
		now = t + rng_in(0, 10 * SEC);
		ret = skew_window_estimate(&w, clk_read(&par, now), &p, &e,
					   &chosen);
		truth = clk_offset(&chi, now) - clk_offset(&par, now);
		if (ret != 0 || !skew_contains(&e, truth)) {
			fprintf(stderr, "case %u: ret %d offset %lld bound %llu truth %lld\n",
				n, ret, (long long)e.offset,
				(unsigned long long)e.bound, (long long)truth);
			CHECK(0);
			continue;
		}
		CHECK(1);
		/* no usable sample had a smaller delay */
		for (slot = 0; slot < w.nr; slot++)
			if (w.sample[slot].delay < w.sample[chosen].delay &&
			    clk_read(&par, now) - w.sample[slot].t1 <=
			    p.max_age)
				break;
		CHECK(slot == w.nr);
		/* the bound is no wider than the sample and its aging */
		CHECK(e.bound <= w.sample[chosen].bound +
		      (clk_read(&par, now) - w.sample[chosen].t1) / 10000 + 1);
		if (w.sample[chosen].bound < 100000)
			exact++;
	}
	CHECK(bad == 0);
	/* most cases are tight: a test that everything is wide fails */
	CHECK(exact > cases / 2);
}

/* ---- composition ----------------------------------------------------- */

static void test_compose(void)
{
	struct skew_estimate a = { 100, 10 }, b = { -30, 5 }, o;
	struct skew_estimate none = { 7, SKEW_BOUND_NONE };
	struct skew_estimate max = { INT64_MAX, 0 }, min = { -INT64_MAX, 0 };
	struct skew_estimate one = { 1, 0 }, mone = { -1, 0 };

	CHECK(skew_compose(&a, &b, &o) == 0);
	CHECK(o.offset == 70 && o.bound == 15);
	CHECK(skew_compose(&a, &none, &o) == 0 && o.bound == SKEW_BOUND_NONE);
	CHECK(skew_compose(&none, &a, &o) == 0 && o.bound == SKEW_BOUND_NONE);
	o = a;
	CHECK(skew_compose(&o, &b, &o) == 0 && o.offset == 70);

	CHECK(skew_compose(&max, &one, &o) == -ERANGE);
	CHECK(o.bound == SKEW_BOUND_NONE);
	CHECK(skew_compose(&min, &mone, &o) == -ERANGE);
	CHECK(skew_compose(&max, &min, &o) == 0 && o.offset == 0);
	CHECK(skew_compose(&max, &mone, &o) == 0 && o.offset == INT64_MAX - 1);
	CHECK(skew_compose(&min, &one, &o) == 0 && o.offset == -INT64_MAX + 1);
	a.bound = UINT64_MAX - 5;
	CHECK(skew_compose(&a, &b, &o) == 0 && o.bound == SKEW_BOUND_NONE);
	a.bound = UINT64_MAX - 6;
	CHECK(skew_compose(&a, &b, &o) == 0 && o.bound == UINT64_MAX - 1);
}

/*
 * A tree of three levels, listed children first so that the order of the
 * list is not the order of composition:
 *
 *   5 (root) => 3 4;  3 => 0 1;  4 => 2
 */
#define TREE_NR	6
static const uint32_t tree_parent[TREE_NR] = { 3, 3, 4, 5, 5, SKEW_NONE };

static void test_random_tree(void)
{
	struct skew_params p = { .max_age = 60 * SEC, .drift_ppm = 100 };
	unsigned int n, cases = 300;

	for (n = 0; n < cases; n++) {
		struct clk clk[TREE_NR];
		struct skew_estimate link[TREE_NR], out[TREE_NR];
		struct skew_window w;
		struct skew_stamps ts;
		uint64_t start = BASE + rng_in(0, 1000 * SEC), t, now;
		uint32_t i, j, k, up;
		uint64_t sum;
		int64_t osum, truth;
		bool ok = true;

		/*
		 * Every clock within 40 ppm of true time: two of them drift
		 * apart at 80 ppm, below the 100 ppm assumed, which leaves
		 * room for the parent's clock measuring the age.
		 */
		for (i = 0; i < TREE_NR; i++) {
			clk[i].off = rng_s(100 * SEC);
			clk[i].ppb = rng_s(40000);
			clk[i].res = 1;
		}
		now = start + 30 * SEC;
		for (i = 0; i < TREE_NR; i++) {
			if (tree_parent[i] == SKEW_NONE)
				continue;
			skew_window_init(&w);
			t = start + rng_in(0, SEC);
			k = rng_in(1, SKEW_WINDOW);
			for (j = 0; j < k; j++) {
				round_trip(&clk[tree_parent[i]], &clk[i], &t,
					   rng() % 2, &ts);
				CHECK(skew_window_add(&w, &ts, 0) == 0);
				t += rng_in(0, 3 * SEC);
			}
			CHECK(skew_window_estimate(&w,
				clk_read(&clk[tree_parent[i]], now), &p,
				&link[i], NULL) == 0);
		}
		memset(out, 0, sizeof(out));
		CHECK(skew_tree(TREE_NR, tree_parent, link, out) == TREE_NR);
		CHECK(out[5].offset == 0 && out[5].bound == 0);
		for (i = 0; i < TREE_NR; i++) {
			/* offsets sum and bounds add along the path */
			sum = 0;
			osum = 0;
			for (up = i; tree_parent[up] != SKEW_NONE;
			     up = tree_parent[up]) {
				sum += link[up].bound;
				osum += link[up].offset;
			}
			truth = clk_offset(&clk[i], now) -
				clk_offset(&clk[5], now);
			if (out[i].bound != sum || out[i].offset != osum ||
			    !skew_contains(&out[i], truth))
				ok = false;
		}
		CHECK(ok);
	}
}

static void test_tree(void)
{
	struct skew_estimate link[TREE_NR], out[TREE_NR], keep[TREE_NR];
	uint32_t par[TREE_NR];
	uint32_t i;

	for (i = 0; i < TREE_NR; i++) {
		link[i].offset = 10 * (int64_t)i + 1;
		link[i].bound = i + 1;
		out[i].offset = 12345;
		out[i].bound = 6789;
	}
	CHECK(skew_tree(TREE_NR, tree_parent, link, out) == TREE_NR);
	/* 0: 1 + 31 (3), 2: 21 + 41 (4) */
	CHECK(out[0].offset == 1 + 31 && out[0].bound == 1 + 4);
	CHECK(out[1].offset == 11 + 31 && out[1].bound == 2 + 4);
	CHECK(out[2].offset == 21 + 41 && out[2].bound == 3 + 5);
	CHECK(out[3].offset == 31 && out[3].bound == 4);
	CHECK(out[5].offset == 0 && out[5].bound == 0);

	/* a link not known: its subtree neither */
	link[4].bound = SKEW_BOUND_NONE;
	CHECK(skew_tree(TREE_NR, tree_parent, link, out) == TREE_NR - 2);
	CHECK(out[4].bound == SKEW_BOUND_NONE);
	CHECK(out[2].bound == SKEW_BOUND_NONE);
	CHECK(out[0].bound == 5);
	/* a sum beyond int64: that node not known, the rest are */
	link[4].bound = 5;
	link[3].offset = INT64_MAX;
	CHECK(skew_tree(TREE_NR, tree_parent, link, out) == TREE_NR - 2);
	CHECK(out[3].offset == INT64_MAX && out[3].bound == 4);
	CHECK(out[0].bound == SKEW_BOUND_NONE);
	CHECK(out[1].bound == SKEW_BOUND_NONE);
	CHECK(out[2].bound == 8);

	/* one node */
	par[0] = SKEW_NONE;
	CHECK(skew_tree(1, par, link, out) == 1);
	CHECK(out[0].offset == 0 && out[0].bound == 0);

	/* bad trees, @out unchanged */
	memcpy(keep, out, sizeof(out));
	memcpy(par, tree_parent, sizeof(par));
	CHECK(skew_tree(0, par, link, out) == -EINVAL);
	CHECK(skew_tree(BCSD_MAX_NODES + 1, par, link, out) == -EINVAL);
	par[3] = SKEW_NONE;			/* two roots */
	CHECK(skew_tree(TREE_NR, par, link, out) == -EINVAL);
	memcpy(par, tree_parent, sizeof(par));
	par[5] = 0;				/* no root, a cycle */
	CHECK(skew_tree(TREE_NR, par, link, out) == -EINVAL);
	memcpy(par, tree_parent, sizeof(par));
	par[3] = 0;				/* 0 => 3 => 0 */
	CHECK(skew_tree(TREE_NR, par, link, out) == -EINVAL);
	memcpy(par, tree_parent, sizeof(par));
	par[2] = 2;				/* its own parent */
	CHECK(skew_tree(TREE_NR, par, link, out) == -EINVAL);
	memcpy(par, tree_parent, sizeof(par));
	par[2] = TREE_NR;			/* out of range */
	CHECK(skew_tree(TREE_NR, par, link, out) == -EINVAL);
	CHECK(memcmp(keep, out, sizeof(out)) == 0);
}

/* A path of BCSD_MAX_NODES nodes, listed leaf first: the deepest tree. */
static void test_tree_path(void)
{
	static uint32_t par[BCSD_MAX_NODES];
	static struct skew_estimate link[BCSD_MAX_NODES], out[BCSD_MAX_NODES];
	uint32_t i;

	for (i = 0; i < BCSD_MAX_NODES; i++) {
		par[i] = i + 1 < BCSD_MAX_NODES ? i + 1 : SKEW_NONE;
		link[i].offset = -3;
		link[i].bound = 2;
	}
	CHECK(skew_tree(BCSD_MAX_NODES, par, link, out) == BCSD_MAX_NODES);
	CHECK(out[0].offset == -3 * (BCSD_MAX_NODES - 1));
	CHECK(out[0].bound == 2 * (BCSD_MAX_NODES - 1));
	CHECK(out[BCSD_MAX_NODES - 1].bound == 0);
}

/* ---- the checks ------------------------------------------------------ */

static void test_checks(void)
{
	struct skew_estimate e = { -600, 400 }, f, none = { 0, SKEW_BOUND_NONE };

	/* 1000 ns against 10% of a 10 us slice */
	CHECK(skew_exceeds(&e, 10000, 100) == 0);
	CHECK(skew_exceeds(&e, 9999, 100) == 1);
	CHECK(skew_exceeds(&e, 10000, 99) == 1);
	CHECK(skew_exceeds(&e, 10000, 0) == 1);
	CHECK(skew_exceeds(&none, 10000, 100) == -ENOENT);
	f.offset = 0;
	f.bound = 0;
	CHECK(skew_exceeds(&f, 0, 0) == 0);
	/* no overflow at the limits */
	f.offset = -INT64_MAX;
	f.bound = UINT64_MAX - 1;
	CHECK(skew_exceeds(&f, UINT64_MAX, UINT32_MAX) == 0);
	CHECK(skew_exceeds(&f, UINT64_MAX, 1000) == 0);
	CHECK(skew_exceeds(&f, UINT64_MAX, 999) == 1);
	f.offset = INT64_MIN;		/* not made here, handled anyway */
	f.bound = 0;
	CHECK(skew_exceeds(&f, (uint64_t)INT64_MAX + 1, 1000) == 0);
	CHECK(skew_exceeds(&f, INT64_MAX, 1000) == 1);

	/* agreement: -1000 .. -200 */
	f.offset = 300;
	f.bound = 500;			/* -200 .. 800: touches */
	CHECK(skew_agree(&e, &f) && skew_agree(&f, &e));
	f.offset = 301;
	CHECK(!skew_agree(&e, &f) && !skew_agree(&f, &e));
	CHECK(skew_agree(&e, &e));
	CHECK(skew_agree(&e, &none) && skew_agree(&none, &e));
	e.offset = INT64_MAX;
	e.bound = 0;
	f.offset = -INT64_MAX;
	f.bound = UINT64_MAX - 1;
	CHECK(skew_agree(&e, &f));
	f.bound = UINT64_MAX - 2;
	CHECK(!skew_agree(&e, &f));

	e.offset = -600;
	e.bound = 400;
	CHECK(skew_contains(&e, -1000) && skew_contains(&e, -200));
	CHECK(!skew_contains(&e, -1001) && !skew_contains(&e, -199));
	CHECK(skew_contains(&none, INT64_MIN));
}

int main(void)
{
	test_sample();
	test_overflow();
	test_window();
	test_aging();
	test_random_link();
	test_compose();
	test_tree();
	test_tree_path();
	test_random_tree();
	test_checks();
	return unit_done("test_skew");
}

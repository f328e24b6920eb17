// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the fill policy's classifier (fill.c): each verdict
 * at and next to its thresholds, counters near overflow, and the class
 * over successive samples: the baseline, confirmation, periods without a
 * verdict, counters that go back, and, over random sequences, that the
 * class changes exactly when a reference model says it must.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "node/fill.h"
#include "tests/unit.h"

#define MS	1000000ULL

static const struct fill_params P = {
	.coarse_ns = 100 * MS,
	.frustrated_pct = 50,
	.min_run_ns = 10 * MS,
	.confirm = 2,
};

static enum fill_class verdict(uint64_t run, uint64_t blocked,
			       uint64_t bursts)
{
	struct fill_sample d = { run, blocked, bursts };

	return fill_verdict(&P, &d);
}

static void test_params(void)
{
	struct fill_params p = P;

	CHECK(!fill_params_check(&p));
	p.coarse_ns = 0;
	CHECK(fill_params_check(&p) == -EINVAL);
	p = P;
	p.frustrated_pct = 0;
	CHECK(fill_params_check(&p) == -EINVAL);
	p.frustrated_pct = 101;
	CHECK(fill_params_check(&p) == -EINVAL);
	p.frustrated_pct = 100;
	CHECK(!fill_params_check(&p));
	p = P;
	p.min_run_ns = 0;
	CHECK(fill_params_check(&p) == -EINVAL);
	p = P;
	p.confirm = 0;
	CHECK(fill_params_check(&p) == -EINVAL);
}

static void test_verdicts(void)
{
	/* Too little CPU time: no verdict, whatever else. */
	CHECK(verdict(10 * MS - 1, 0, 0) == FILL_UNKNOWN);
	CHECK(verdict(0, 1000 * MS, 1000) == FILL_UNKNOWN);
	/* No voluntary sleep: a spinning or computing job. */
	CHECK(verdict(10 * MS, 0, 0) == FILL_DC);
	CHECK(verdict(10 * MS, 500 * MS, 0) == FILL_DC);
	/* The mean burst at the threshold and just under it. */
	CHECK(verdict(200 * MS, 0, 2) == FILL_DC);
	CHECK(verdict(200 * MS - 1, 0, 2) == FILL_CS);
	CHECK(verdict(200 * MS - 1, 200 * MS, 2) == FILL_FRUSTRATED);
	/* Blocked half the time, fine-grained: frustrated; under: CS. */
	CHECK(verdict(100 * MS, 100 * MS, 1000) == FILL_FRUSTRATED);
	CHECK(verdict(100 * MS, 100 * MS - 1, 1000) == FILL_CS);
	CHECK(verdict(100 * MS, 0, 1000) == FILL_CS);
	/* Counters near overflow neither wrap nor flip the verdict. */
	CHECK(verdict(UINT64_MAX / 2, UINT64_MAX / 2, UINT64_MAX / 2) ==
	      FILL_FRUSTRATED);
	CHECK(verdict(UINT64_MAX, UINT64_MAX / 4, UINT64_MAX / 2) ==
	      FILL_CS);
	CHECK(verdict(UINT64_MAX / 4, UINT64_MAX, UINT64_MAX / 2) ==
	      FILL_FRUSTRATED);
	CHECK(verdict(UINT64_MAX, UINT64_MAX, 1) == FILL_DC);

	CHECK(fill_is_filler(FILL_DC));
	CHECK(fill_is_filler(FILL_FRUSTRATED));
	CHECK(!fill_is_filler(FILL_CS));
	CHECK(!fill_is_filler(FILL_UNKNOWN));
}

/* Sample @s plus one period of @run CPU time, @blocked, @bursts. */
static void period(struct fill_sample *s, uint64_t run, uint64_t blocked,
		   uint64_t bursts)
{
	s->run_ns += run;
	s->blocked_ns += blocked;
	s->bursts += bursts;
}

static void test_update(void)
{
	struct fill_state st = { 0 };
	struct fill_sample s = { 0 };

	/* The first sample is the baseline: no class from it. */
	period(&s, 1000 * MS, 0, 0);
	CHECK(!fill_update(&st, &P, &s));
	CHECK(st.cls == FILL_UNKNOWN);
	/* DC once: not yet; twice: DC. */
	period(&s, 50 * MS, 0, 0);
	CHECK(!fill_update(&st, &P, &s));
	CHECK(st.cls == FILL_UNKNOWN);
	period(&s, 50 * MS, 0, 0);
	CHECK(fill_update(&st, &P, &s));
	CHECK(st.cls == FILL_DC);
	/* Idle periods add up and break no run. */
	period(&s, 1 * MS, 0, 1);
	CHECK(!fill_update(&st, &P, &s));
	period(&s, 20 * MS, 0, 1000);
	CHECK(!fill_update(&st, &P, &s));
	CHECK(st.cls == FILL_DC);
	period(&s, 2 * MS, 0, 1);
	CHECK(!fill_update(&st, &P, &s));
	period(&s, 20 * MS, 0, 1000);
	CHECK(fill_update(&st, &P, &s));
	CHECK(st.cls == FILL_CS);
	/* Alternating verdicts never confirm. */
	period(&s, 20 * MS, 0, 0);
	CHECK(!fill_update(&st, &P, &s));
	period(&s, 20 * MS, 0, 1000);
	CHECK(!fill_update(&st, &P, &s));
	period(&s, 20 * MS, 0, 0);
	CHECK(!fill_update(&st, &P, &s));
	period(&s, 20 * MS, 20 * MS, 1000);
	CHECK(!fill_update(&st, &P, &s));
	CHECK(st.cls == FILL_CS);
	/* A counter that goes back (tasks left): a new baseline. */
	s.run_ns /= 2;
	CHECK(!fill_update(&st, &P, &s));
	period(&s, 20 * MS, 20 * MS, 1000);
	CHECK(!fill_update(&st, &P, &s));
	CHECK(st.cls == FILL_CS);
	period(&s, 20 * MS, 20 * MS, 1000);
	CHECK(fill_update(&st, &P, &s));
	CHECK(st.cls == FILL_FRUSTRATED);
}

/* ---- random sequences against a reference model --------------------- */

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
	return unit_rng(&rng_state);
}

static void test_random(void)
{
	struct fill_params p = P;
	int round, i, bad = 0;

	for (round = 0; round < 200; round++) {
		struct fill_state st = { 0 };
		struct fill_sample s = { 0 }, acc = { 0 };
		enum fill_class model = FILL_UNKNOWN, last_v = FILL_UNKNOWN;
		uint32_t run = 0;

		p.confirm = 1 + rng() % 4;
		fill_update(&st, &p, &s);
		for (i = 0; i < 100; i++) {
			uint64_t r = rng() % (40 * MS), b = rng() % (40 * MS);
			uint64_t n = rng() % 4 ? rng() % 8 : 0;
			enum fill_class v;
			bool changed, want = false;

			period(&s, r, b, n);
			period(&acc, r, b, n);
			v = fill_verdict(&p, &acc);
			if (v != FILL_UNKNOWN) {
				acc = (struct fill_sample){ 0 };
				if (v == model) {
					run = 0;
				} else {
					run = v == last_v ? run + 1 : 1;
					last_v = v;
					if (run >= p.confirm) {
						model = v;
						run = 0;
						want = true;
					}
				}
			}
			changed = fill_update(&st, &p, &s);
			if (changed != want || st.cls != model)
				bad++;
		}
	}
	CHECK(!bad);
}

int main(void)
{
	test_params();
	test_verdicts();
	test_update();
	test_random();
	return unit_done("test_fill");
}

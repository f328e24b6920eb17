// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the reductions of the tree of daemons (filter.c): every
 * filter's identity, associativity and commutativity on seeded random
 * inputs (the same result whatever the order and grouping), the edges
 * (saturation, overflow, bad input), and the waves driven by scripts of
 * packets and clock values.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tree/filter.h"
#include "tests/unit.h"

/* xorshift64: deterministic, so a failure can be replayed. */
static uint64_t rnd_state = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A random order of 0 .. @n - 1 into @p. */
static void shuffle(uint32_t *p, uint32_t n)
{
	uint32_t i, j, t;

	for (i = 0; i < n; i++)
		p[i] = i;
	for (i = n; i > 1; i--) {
		j = (uint32_t)(rnd() % i);
		t = p[i - 1];
		p[i - 1] = p[j];
		p[j] = t;
	}
}

#define ROUNDS	200
#define VALS	64

/* ---- the saturating sum ------------------------------------------- */

static void test_scalars(void)
{
	uint64_t v[VALS], a, b, c;
	uint32_t p[VALS], i, n, cut;
	int round, ok = 1;

	/* The identity: merging into it gives the value. */
	a = FILTER_SUM_U64_INIT;
	CHECK(filter_sum_u64(&a, 42) == 0 && a == 42);

	/* Any order, any split in two partial results: the same. */
	for (round = 0; round < ROUNDS; round++) {
		n = 1 + (uint32_t)(rnd() % VALS);
		for (i = 0; i < n; i++)
			v[i] = rnd() >> (rnd() % 64);
		a = FILTER_SUM_U64_INIT;
		for (i = 0; i < n; i++)
			filter_sum_u64(&a, v[i]);
		shuffle(p, n);
		cut = (uint32_t)(rnd() % (n + 1));
		b = FILTER_SUM_U64_INIT;
		c = FILTER_SUM_U64_INIT;
		for (i = 0; i < n; i++)
			filter_sum_u64(i < cut ? &b : &c, v[p[i]]);
		filter_sum_u64(&c, b);
		ok &= c == a;
	}
	CHECK(ok);
	/* Saturation: stops at 2^64 - 1, says so, and stays there. */
	a = UINT64_MAX - 5;
	CHECK(filter_sum_u64(&a, 5) == -ERANGE && a == UINT64_MAX);
	a = UINT64_MAX - 5;
	CHECK(filter_sum_u64(&a, 10) == -ERANGE && a == UINT64_MAX);
	CHECK(filter_sum_u64(&a, 0) == -ERANGE && a == UINT64_MAX);
	a = UINT64_MAX - 5;
	CHECK(filter_sum_u64(&a, 4) == 0 && a == UINT64_MAX - 1);
	/* ... whatever the grouping: (MAX-5 + 10) + 0 = MAX-5 + (10 + 0). */
	b = 10;
	filter_sum_u64(&b, 0);
	a = UINT64_MAX - 5;
	CHECK(filter_sum_u64(&a, b) == -ERANGE && a == UINT64_MAX);
}

/* ---- concatenation ------------------------------------------------ */

#define CAP	8

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x < y ? -1 : x > y;
}

static int list_equal(const struct filter_list *a, const struct filter_list *b)
{
	return a->nr == b->nr && a->overflow == b->overflow &&
	       !memcmp(a->items, b->items, (size_t)a->nr * a->item_size);
}

static void test_list(void)
{
	uint32_t ids[3 * CAP], buf[4][CAP], p[3 * CAP], i, n, k, prev;
	struct filter_list l[4], e;
	int round, ok = 1, sorted = 1;
	struct item12 {
		unsigned char b[12];
	} ib[CAP], x;
	uint32_t ebuf[CAP];

	/* Bad input. */
	CHECK(filter_list_init(&l[0], NULL, 1, 4, NULL) == -EINVAL);
	CHECK(filter_list_init(&l[0], buf[0], CAP, 0, NULL) == -EINVAL);
	CHECK(filter_list_init(NULL, buf[0], CAP, 4, NULL) == -EINVAL);

	/* Pushes beyond the room: the smallest kept, the rest counted. */
	filter_list_init(&l[0], buf[0], CAP, sizeof(uint32_t), cmp_u32);
	for (i = 0; i < CAP; i++)
		CHECK(filter_list_push(&l[0], &(uint32_t){ 100 - i }) == 0);
	CHECK(filter_list_push(&l[0], &(uint32_t){ 200 }) == -ENOSPC);
	CHECK(filter_list_push(&l[0], &(uint32_t){ 1 }) == -ENOSPC);
	CHECK(l[0].nr == CAP && l[0].overflow == 2);
	CHECK(buf[0][0] == 1 && buf[0][CAP - 1] == 99);
	for (i = 1; i < CAP; i++)
		sorted &= buf[0][i - 1] <= buf[0][i];
	CHECK(sorted);

	/* A list of no room counts everything. */
	filter_list_init(&e, NULL, 0, sizeof(uint32_t), cmp_u32);
	CHECK(filter_list_push(&e, &(uint32_t){ 5 }) == -ENOSPC);
	CHECK(e.nr == 0 && e.overflow == 1);

	/* A merge that fits says 0, one that does not -ENOSPC. */
	filter_list_init(&l[2], buf[2], CAP, sizeof(uint32_t), cmp_u32);
	filter_list_init(&l[3], buf[3], CAP, sizeof(uint32_t), cmp_u32);
	CHECK(filter_list_push(&l[3], &(uint32_t){ 3 }) == 0);
	CHECK(filter_list_merge(&l[2], &l[3]) == 0 && l[2].nr == 1);
	CHECK(filter_list_merge(&l[3], &l[0]) == -ENOSPC);
	CHECK(l[3].nr == CAP && l[3].overflow == 3 && buf[3][0] == 1 &&
	      buf[3][1] == 3 && buf[3][CAP - 1] == 98);

	/* Mismatched lists are refused. */
	filter_list_init(&l[1], ib, CAP, sizeof(ib[0]), NULL);
	CHECK(filter_list_merge(&l[0], &l[1]) == -EINVAL);
	CHECK(filter_list_merge(&l[0], &l[0]) == -EINVAL);

	/*
	 * Random ids put into three lists, merged in any order and
	 * grouping: the same list, the @CAP smallest of all, with
	 * nr + overflow the number put in.
	 */
	for (round = 0; round < ROUNDS; round++) {
		n = (uint32_t)(rnd() % (3 * CAP + 1));
		for (i = 0; i < n; i++)
			ids[i] = (uint32_t)(rnd() % 40);
		for (k = 0; k < 4; k++)
			filter_list_init(&l[k], buf[k], CAP, sizeof(uint32_t),
					 cmp_u32);
		for (i = 0; i < n; i++)
			filter_list_push(&l[i % 3], &ids[i]);
		/* l[3] = (l0 + l1) + l2, from a copy of l0. */
		memcpy(buf[3], buf[0], sizeof(buf[0]));
		l[3].nr = l[0].nr;
		l[3].overflow = l[0].overflow;
		filter_list_merge(&l[3], &l[1]);
		filter_list_merge(&l[3], &l[2]);
		/* l2 + (l1 + l0), in place. */
		filter_list_merge(&l[1], &l[0]);
		filter_list_merge(&l[2], &l[1]);
		ok &= list_equal(&l[2], &l[3]);
		ok &= l[3].nr + l[3].overflow == n;
		/* Against a sort of all of them. */
		shuffle(p, n);
		filter_list_init(&e, ebuf, CAP, sizeof(uint32_t), cmp_u32);
		for (i = 0; i < n; i++)
			filter_list_push(&e, &ids[p[i]]);
		ok &= list_equal(&e, &l[3]);
		prev = 0;
		for (i = 0; i < l[3].nr; i++) {
			ok &= buf[3][i] >= prev;
			prev = buf[3][i];
		}
		/* The identity. */
		filter_list_init(&e, ebuf, CAP, sizeof(uint32_t), cmp_u32);
		ok &= filter_list_merge(&l[3], &e) == 0;
		ok &= list_equal(&l[2], &l[3]);
	}
	CHECK(ok);

	/* Fixed-size items of 12 bytes in memcmp() order. */
	filter_list_init(&l[1], ib, 2, sizeof(ib[0]), NULL);
	memset(&x, 0x33, sizeof(x));
	CHECK(filter_list_push(&l[1], &x) == 0);
	memset(&x, 0x11, sizeof(x));
	CHECK(filter_list_push(&l[1], &x) == 0);
	memset(&x, 0x22, sizeof(x));
	CHECK(filter_list_push(&l[1], &x) == -ENOSPC);
	CHECK(l[1].nr == 2 && l[1].overflow == 1);
	CHECK(ib[0].b[11] == 0x11 && ib[1].b[0] == 0x22);
}

/* ---- waves -------------------------------------------------------- */

static void test_waves(void)
{
	struct filter_wave w = { 0 };

	/* A free slot: the packet starts its wave. */
	CHECK(filter_wave_step(&w, 7) == FILTER_WAVE_NEW);
	CHECK(!filter_wave_due(&w, 1000, 0));
	filter_wave_start(&w, 7, 100);
	CHECK(w.used && w.id == 7 && w.first_ms == 100);
	/* Its own packets are reduced in, another wave's push it up. */
	CHECK(filter_wave_step(&w, 7) == FILTER_WAVE_SAME);
	CHECK(filter_wave_step(&w, 7 + 256) == FILTER_WAVE_OTHER);
	/* It waits @wait_ms from its first packet, not from the last. */
	CHECK(!filter_wave_due(&w, 149, 50));
	CHECK(filter_wave_due(&w, 150, 50));
	CHECK(filter_wave_due(&w, 100, 0));
	/* Complete when it counts every node waited for, or more. */
	CHECK(!filter_wave_complete(3, 4));
	CHECK(filter_wave_complete(4, 4) && filter_wave_complete(5, 4));
	CHECK(filter_wave_complete(0, 0));
	/* Up: the slot is free again, and never due. */
	filter_wave_end(&w);
	CHECK(filter_wave_step(&w, 7) == FILTER_WAVE_NEW);
	CHECK(!filter_wave_due(&w, 1000, 50));
}

int main(void)
{
	test_scalars();
	test_list();
	test_waves();
	return unit_done("test_filter");
}

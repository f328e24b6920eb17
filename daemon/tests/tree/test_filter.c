// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the reductions of the tree of daemons (filter.c): every
 * filter's identity, associativity and commutativity on seeded random
 * inputs (the same result whatever the order and grouping), the edges
 * (saturation, overflow, bad input), the histogram merge against the
 * bucket helpers of <linux/bcs_hist.h>, the equivalence classes, the
 * record tables, and the synchronisation modes driven by scripts of
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

/* ---- scalars ------------------------------------------------------ */

static void test_scalars(void)
{
	uint64_t v[VALS], a, b, c, mn, mx;
	int64_t sv[VALS], smn, smx, t, u;
	uint32_t p[VALS], i, n, cut;
	int round, ok = 1;

	/* Identities: merging into them gives the value. */
	a = FILTER_SUM_U64_INIT;
	CHECK(filter_sum_u64(&a, 42) == 0 && a == 42);
	a = FILTER_MIN_U64_INIT;
	filter_min_u64(&a, 42);
	CHECK(a == 42);
	a = FILTER_MAX_U64_INIT;
	filter_max_u64(&a, 42);
	CHECK(a == 42);
	t = FILTER_MIN_S64_INIT;
	filter_min_s64(&t, -42);
	CHECK(t == -42);
	t = FILTER_MAX_S64_INIT;
	filter_max_s64(&t, -42);
	CHECK(t == -42);

	/* Any order, any split in two partial results: the same. */
	for (round = 0; round < ROUNDS; round++) {
		n = 1 + (uint32_t)(rnd() % VALS);
		for (i = 0; i < n; i++) {
			v[i] = rnd() >> (rnd() % 64);
			sv[i] = (int64_t)rnd() >> (rnd() % 64);
		}
		a = FILTER_SUM_U64_INIT;
		mn = FILTER_MIN_U64_INIT;
		mx = FILTER_MAX_U64_INIT;
		smn = FILTER_MIN_S64_INIT;
		smx = FILTER_MAX_S64_INIT;
		for (i = 0; i < n; i++) {
			filter_sum_u64(&a, v[i]);
			filter_min_u64(&mn, v[i]);
			filter_max_u64(&mx, v[i]);
			filter_min_s64(&smn, sv[i]);
			filter_max_s64(&smx, sv[i]);
		}
		shuffle(p, n);
		cut = (uint32_t)(rnd() % (n + 1));
		b = FILTER_SUM_U64_INIT;
		c = FILTER_SUM_U64_INIT;
		for (i = 0; i < n; i++)
			filter_sum_u64(i < cut ? &b : &c, v[p[i]]);
		filter_sum_u64(&c, b);
		ok &= c == a;
		b = FILTER_MIN_U64_INIT;
		c = FILTER_MIN_U64_INIT;
		for (i = 0; i < n; i++)
			filter_min_u64(i < cut ? &b : &c, v[p[i]]);
		filter_min_u64(&c, b);
		ok &= c == mn;
		b = FILTER_MAX_U64_INIT;
		c = FILTER_MAX_U64_INIT;
		for (i = 0; i < n; i++)
			filter_max_u64(i < cut ? &b : &c, v[p[i]]);
		filter_max_u64(&c, b);
		ok &= c == mx;
		t = FILTER_MIN_S64_INIT;
		u = FILTER_MIN_S64_INIT;
		for (i = 0; i < n; i++)
			filter_min_s64(i < cut ? &t : &u, sv[p[i]]);
		filter_min_s64(&u, t);
		ok &= u == smn;
		t = FILTER_MAX_S64_INIT;
		u = FILTER_MAX_S64_INIT;
		for (i = 0; i < n; i++)
			filter_max_s64(i < cut ? &t : &u, sv[p[i]]);
		filter_max_s64(&u, t);
		ok &= u == smx;
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
	/* Extremes of the signed ones. */
	t = 0;
	filter_min_s64(&t, INT64_MIN);
	CHECK(t == INT64_MIN);
	t = 0;
	filter_max_s64(&t, INT64_MAX);
	CHECK(t == INT64_MAX);
}

/* ---- average ------------------------------------------------------ */

static void test_avg(void)
{
	struct filter_avg a = FILTER_AVG_INIT, b, c, id = FILTER_AVG_INIT;
	uint64_t v[VALS], mean, sum;
	uint32_t p[VALS], i, n, cut;
	int round, ok = 1;

	/* Count 0: no average. */
	CHECK(filter_avg_result(&a, &mean) == -ENODATA);
	CHECK(filter_avg_add(&a, 10) == 0);
	CHECK(filter_avg_add(&a, 20) == 0);
	CHECK(filter_avg_add(&a, 31) == 0);
	CHECK(filter_avg_result(&a, &mean) == 0 && mean == 20);
	CHECK(a.sum == 61 && a.count == 3);
	/* The identity changes nothing, on either side. */
	b = a;
	CHECK(filter_avg_merge(&b, &id) == 0 && !memcmp(&a, &b, sizeof(a)));
	c = FILTER_AVG_INIT;
	CHECK(filter_avg_merge(&c, &a) == 0 && !memcmp(&a, &c, sizeof(a)));

	for (round = 0; round < ROUNDS; round++) {
		n = 1 + (uint32_t)(rnd() % VALS);
		sum = 0;
		for (i = 0; i < n; i++) {
			v[i] = rnd() >> 8;	/* no saturation */
			sum += v[i];
		}
		shuffle(p, n);
		cut = (uint32_t)(rnd() % (n + 1));
		b = FILTER_AVG_INIT;
		c = FILTER_AVG_INIT;
		for (i = 0; i < n; i++)
			filter_avg_add(i < cut ? &b : &c, v[p[i]]);
		/* Either way round. */
		a = b;
		ok &= filter_avg_merge(&a, &c) == 0;
		ok &= filter_avg_merge(&c, &b) == 0;
		ok &= !memcmp(&a, &c, sizeof(a));
		ok &= a.count == n && a.sum == sum;
		ok &= filter_avg_result(&a, &mean) == 0 && mean == sum / n;
	}
	CHECK(ok);

	/* A saturated sum gives no mean, and the flag travels up. */
	a = FILTER_AVG_INIT;
	CHECK(filter_avg_add(&a, UINT64_MAX - 1) == 0);
	CHECK(filter_avg_add(&a, 2) == -ERANGE);
	CHECK(filter_avg_result(&a, &mean) == -ERANGE);
	b = FILTER_AVG_INIT;
	CHECK(filter_avg_merge(&b, &a) == -ERANGE && b.saturated);
	CHECK(filter_avg_result(&b, &mean) == -ERANGE);
}

/* ---- concatenation ------------------------------------------------ */

#define CAP	8

static int cmp_u32(const void *a, const void *b)
{
	return filter_cmp_u32(a, b);
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

/* ---- sets of nodes ------------------------------------------------ */

static void test_nodeset(void)
{
	struct filter_nodeset s, t;
	char buf[64], tiny[12];
	uint32_t i;

	filter_nodeset_clear(&s);
	CHECK(filter_nodeset_count(&s) == 0);
	CHECK(filter_nodeset_format(&s, buf, sizeof(buf)) == 0 && !buf[0]);
	CHECK(filter_nodeset_add(&s, 7) == 0);
	CHECK(filter_nodeset_add(&s, 311) == 0);
	CHECK(filter_nodeset_add(&s, 90) == 0);
	CHECK(filter_nodeset_add(&s, 90) == -EEXIST);
	CHECK(filter_nodeset_add(&s, BCSD_MAX_NODES) == -EINVAL);
	CHECK(filter_nodeset_has(&s, 90) && !filter_nodeset_has(&s, 91));
	CHECK(!filter_nodeset_has(&s, BCSD_MAX_NODES));
	CHECK(filter_nodeset_count(&s) == 3);
	CHECK(filter_nodeset_format(&s, buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, "7, 90, 311"));
	CHECK(filter_nodeset_format(&s, buf, 0) == -EINVAL);

	/* All but 7, as ranges; the last node counts. */
	filter_nodeset_clear(&t);
	for (i = 0; i < BCSD_MAX_NODES; i++)
		filter_nodeset_add(&t, i);
	filter_nodeset_del(&t, 7);
	CHECK(filter_nodeset_count(&t) == BCSD_MAX_NODES - 1);
	CHECK(filter_nodeset_format(&t, buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, "0-6, 8-1023"));
	CHECK(filter_nodeset_meet(&s, &t));
	CHECK(!filter_nodeset_within(&s, &t));
	filter_nodeset_del(&s, 7);
	CHECK(filter_nodeset_within(&s, &t));
	filter_nodeset_union(&s, &t);
	CHECK(filter_nodeset_count(&s) == BCSD_MAX_NODES - 1);

	/* Too long for the buffer: cut short, said so. */
	filter_nodeset_clear(&s);
	for (i = 0; i < 20; i += 2)
		filter_nodeset_add(&s, i);
	CHECK(filter_nodeset_format(&s, tiny, sizeof(tiny)) == -ENOSPC);
	CHECK(strlen(tiny) < sizeof(tiny));
	CHECK(!strcmp(tiny + strlen(tiny) - 3, "..."));
	CHECK(filter_nodeset_format(&s, tiny, 2) == -ENOSPC);
	CHECK(strlen(tiny) < 2);
}

/* ---- histograms --------------------------------------------------- */

/* A histogram of @n values at resolution @sub, from the bucket helpers. */
static struct bcs_hist_header *hist_of(const uint64_t *v, size_t n,
				       unsigned int sub)
{
	uint32_t nb = bcs_hist_buckets(sub), i, k = 0;
	struct bcs_hist_header *h;
	struct bcs_hist_bucket *b;
	uint64_t *count;
	size_t j;
	int sat = 0;

	count = calloc(nb, sizeof(*count));
	h = calloc(1, sizeof(*h) + (n ? n : 1) * sizeof(*b));
	if (!count || !h) {
		free(count);
		free(h);
		return NULL;
	}
	h->magic = BCS_HIST_MAGIC;
	h->version = BCS_HIST_VERSION;
	h->sub_bits = (uint8_t)sub;
	for (j = 0; j < n; j++) {
		count[bcs_hist_index(v[j], sub)]++;
		if (h->sum > UINT64_MAX - v[j]) {
			sat = 1;
			h->sum = UINT64_MAX;
		} else {
			h->sum += v[j];
		}
		if (!h->count || v[j] < h->min)
			h->min = v[j];
		if (!h->count || v[j] > h->max)
			h->max = v[j];
		h->count++;
	}
	if (sat)
		h->flags = BCS_HIST_SATURATED;
	b = (struct bcs_hist_bucket *)(h + 1);
	for (i = 0; i < nb; i++)
		if (count[i]) {
			b[k].index = i;
			b[k++].count = count[i];
		}
	h->nr_buckets = k;
	free(count);
	return h;
}

static int hist_equal(const struct bcs_hist_header *a,
		      const struct bcs_hist_header *b)
{
	return a && b && a->sub_bits == b->sub_bits &&
	       a->nr_buckets == b->nr_buckets && a->count == b->count &&
	       a->sum == b->sum && a->min == b->min && a->max == b->max &&
	       a->flags == b->flags &&
	       !memcmp(a + 1, b + 1,
		       a->nr_buckets * sizeof(struct bcs_hist_bucket));
}

static void test_hist(void)
{
	struct bcs_hist_header *h[3], *all, *acc, *acc2, *keep;
	uint64_t v[3 * VALS], big[] = { UINT64_MAX - 5 };
	unsigned int sub[3], coarse;
	size_t n[3], i, k, at;
	int round, ok = 1, alloc = 1;

	/* The identity: nothing yet, and NULL merges nothing. */
	acc = NULL;
	CHECK(filter_hist_merge(&acc, NULL) == 0 && !acc);

	for (round = 0; round < ROUNDS; round++) {
		at = 0;
		for (k = 0; k < 3; k++) {
			n[k] = (size_t)(rnd() % VALS);
			sub[k] = (unsigned int)(rnd() %
						(BCS_HIST_SUB_BITS_MAX + 1));
			for (i = 0; i < n[k]; i++)
				v[at + i] = rnd() >> (rnd() % 64 | 8);
			h[k] = hist_of(v + at, n[k], sub[k]);
			at += n[k];
		}
		coarse = sub[0];
		for (k = 1; k < 3; k++)
			if (sub[k] < coarse)
				coarse = sub[k];
		all = hist_of(v, at, coarse);
		/* (h0 + h1) + h2 and h2 + (h1 + h0). */
		acc = NULL;
		acc2 = NULL;
		keep = NULL;
		alloc &= h[0] && h[1] && h[2] && all;
		ok &= filter_hist_merge(&acc, h[0]) == 0;
		ok &= filter_hist_merge(&acc, h[1]) == 0;
		ok &= filter_hist_merge(&acc, h[2]) == 0;
		ok &= filter_hist_merge(&keep, h[1]) == 0;
		ok &= filter_hist_merge(&keep, h[0]) == 0;
		ok &= filter_hist_merge(&acc2, h[2]) == 0;
		ok &= filter_hist_merge(&acc2, keep) == 0;
		ok &= hist_equal(acc, all) && hist_equal(acc2, all);
		ok &= acc && acc->sub_bits == coarse;
		free(acc);
		free(acc2);
		free(keep);
		free(all);
		for (k = 0; k < 3; k++)
			free(h[k]);
	}
	CHECK(alloc);
	CHECK(ok);

	/* Different resolutions: at the coarser one, exactly. */
	{
		uint64_t a[] = { 5, 1000, 1001, 123456789 };
		uint64_t b[] = { 6, 999, 1 << 20 };
		uint64_t ab[] = { 5, 1000, 1001, 123456789, 6, 999, 1 << 20 };

		h[0] = hist_of(a, 4, 7);
		h[1] = hist_of(b, 3, 2);
		all = hist_of(ab, 7, 2);
		acc = NULL;
		CHECK(filter_hist_merge(&acc, h[0]) == 0);
		CHECK(acc && acc->sub_bits == 7);
		CHECK(filter_hist_merge(&acc, h[1]) == 0);
		CHECK(hist_equal(acc, all));
		CHECK(acc && acc->min == 5 && acc->max == 123456789);
		/* Not a histogram: refused, the accumulator kept. */
		keep = acc;
		h[1]->sub_bits = BCS_HIST_SUB_BITS_MAX + 1;
		CHECK(filter_hist_merge(&acc, h[1]) == -EINVAL && acc == keep);
		free(acc);
		free(all);
		free(h[0]);
		free(h[1]);
	}

	/* A sum past 2^64 - 1 saturates and says so. */
	h[0] = hist_of(big, 1, 3);
	acc = NULL;
	CHECK(filter_hist_merge(&acc, h[0]) == 0);
	CHECK(filter_hist_merge(&acc, h[0]) == 0);
	CHECK(acc && (acc->flags & BCS_HIST_SATURATED) &&
	      acc->sum == UINT64_MAX && acc->count == 2);
	free(acc);
	free(h[0]);
}

/* ---- equivalence classes ------------------------------------------ */

static void test_eq(void)
{
	const struct filter_eq_class *cls[FILTER_EQ_CLASSES_MAX];
	static struct filter_eq part[4], a, b, before;
	uint32_t p[BCSD_MAX_NODES], i, k, nr;
	char buf[64];
	int round, ok = 1;

	/* 1,024 nodes over four subtrees: 1021 ran row 3, three row 2. */
	for (k = 0; k < 4; k++)
		filter_eq_init(&part[k]);
	shuffle(p, BCSD_MAX_NODES);
	for (i = 0; i < BCSD_MAX_NODES; i++)
		CHECK(filter_eq_add(&part[p[i] % 4], p[i],
				    p[i] == 7 || p[i] == 90 || p[i] == 311 ?
				    2 : 3) == 0);
	filter_eq_init(&a);
	filter_eq_init(&b);
	CHECK(filter_eq_merge(&a, &part[0]) == 0);
	CHECK(filter_eq_merge(&a, &part[1]) == 0);
	CHECK(filter_eq_merge(&a, &part[2]) == 0);
	CHECK(filter_eq_merge(&a, &part[3]) == 0);
	/* The other way round, grouped differently. */
	CHECK(filter_eq_merge(&part[3], &part[2]) == 0);
	CHECK(filter_eq_merge(&part[1], &part[0]) == 0);
	CHECK(filter_eq_merge(&b, &part[3]) == 0);
	CHECK(filter_eq_merge(&b, &part[1]) == 0);
	CHECK(!memcmp(&a, &b, sizeof(a)));
	nr = filter_eq_sorted(&a, cls, FILTER_EQ_CLASSES_MAX);
	CHECK(nr == 2);
	CHECK(cls[0]->value == 3 && cls[0]->nr == 1021);
	CHECK(cls[1]->value == 2 && cls[1]->nr == 3);
	CHECK(filter_nodeset_format(&cls[1]->nodes, buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, "7, 90, 311"));
	CHECK(filter_eq_sorted(&a, cls, 1) == 1 && cls[0]->value == 3);

	/* A node once only; a merge of overlapping sets changes nothing. */
	CHECK(filter_eq_add(&a, 7, 5) == -EEXIST);
	CHECK(filter_eq_add(&a, BCSD_MAX_NODES, 5) == -EINVAL);
	filter_eq_init(&b);
	filter_eq_add(&b, 7, 9);
	before = a;
	CHECK(filter_eq_merge(&a, &b) == -EEXIST);
	CHECK(!memcmp(&a, &before, sizeof(a)));
	CHECK(filter_eq_merge(&a, &a) == -EEXIST);

	/*
	 * More values than classes: the smallest kept, the nodes of the
	 * others in "other", whatever the order and grouping.
	 */
	for (round = 0; round < 50; round++) {
		uint32_t vals = FILTER_EQ_CLASSES_MAX + 1 +
				(uint32_t)(rnd() % 16);

		for (k = 0; k < 4; k++)
			filter_eq_init(&part[k]);
		filter_eq_init(&a);
		filter_eq_init(&b);
		shuffle(p, 200);
		for (i = 0; i < 200; i++) {
			filter_eq_add(&part[rnd() % 3], p[i], p[i] % vals);
			filter_eq_add(&b, p[i], p[i] % vals);
		}
		filter_eq_merge(&a, &part[2]);
		filter_eq_merge(&a, &part[0]);
		filter_eq_merge(&a, &part[1]);
		ok &= !memcmp(&a, &b, sizeof(a));
		ok &= a.nr == FILTER_EQ_CLASSES_MAX;
		ok &= a.cls[FILTER_EQ_CLASSES_MAX - 1].value ==
		      FILTER_EQ_CLASSES_MAX - 1;
		nr = 0;
		for (k = 0; k < a.nr; k++)
			nr += a.cls[k].nr;
		ok &= nr + a.nr_other == 200;
		ok &= filter_nodeset_count(&a.other) == a.nr_other;
		ok &= filter_nodeset_count(&a.all) == 200;
	}
	CHECK(ok);
	filter_eq_init(&a);
	for (i = 0; i < FILTER_EQ_CLASSES_MAX; i++)
		CHECK(filter_eq_add(&a, i, 100 + i) == 0);
	CHECK(filter_eq_add(&a, 50, 1000) == -ENOSPC);
	CHECK(a.nr_other == 1 && filter_nodeset_has(&a.other, 50));
	CHECK(filter_eq_add(&a, 51, 1) == -ENOSPC);
	CHECK(a.cls[0].value == 1 && a.nr_other == 2);
	CHECK(filter_nodeset_has(&a.other, FILTER_EQ_CLASSES_MAX - 1));
}

/* ---- records ------------------------------------------------------ */

/* The example: what the nodes of one slice say about its switch. */
struct slice_summary {
	uint64_t slice;		/* key */
	uint64_t switched;	/* nodes that switched */
	uint64_t late;		/* of them late */
	int64_t latest_ns;	/* switch end after the deadline, latest */
	int64_t earliest_ns;	/* ... earliest (negative: before it) */
	struct filter_avg switch_ns;	/* time the switch took */
	uint32_t pad;		/* not in the table: left alone */
};

static const struct filter_field slice_fields[] = {
	{ "slice", offsetof(struct slice_summary, slice), FILTER_OP_KEY_U64 },
	{ "switched", offsetof(struct slice_summary, switched),
	  FILTER_OP_SUM_U64 },
	{ "late", offsetof(struct slice_summary, late), FILTER_OP_SUM_U64 },
	{ "latest_ns", offsetof(struct slice_summary, latest_ns),
	  FILTER_OP_MAX_S64 },
	{ "earliest_ns", offsetof(struct slice_summary, earliest_ns),
	  FILTER_OP_MIN_S64 },
	{ "switch_ns", offsetof(struct slice_summary, switch_ns),
	  FILTER_OP_AVG },
};

static const struct filter_record slice_record = {
	.name = "slice summary",
	.size = sizeof(struct slice_summary),
	.fields = slice_fields,
	.nr_fields = sizeof(slice_fields) / sizeof(slice_fields[0]),
};

/* What node @i says about slice @slice. */
static void node_report(struct slice_summary *r, uint64_t slice)
{
	memset(r, 0, sizeof(*r));
	r->slice = slice;
	r->switched = 1;
	r->late = rnd() % 4 == 0;
	r->latest_ns = (int64_t)(rnd() % 200000) - 100000;
	r->earliest_ns = r->latest_ns;
	r->switch_ns = FILTER_AVG_INIT;
	filter_avg_add(&r->switch_ns, 10000 + rnd() % 5000);
}

static void test_record(void)
{
	struct slice_summary node[VALS], a, b, c, before;
	struct filter_field bad[1];
	struct filter_record r;
	uint32_t p[VALS], i, n, cut;
	int64_t mx, mn;
	uint64_t late, mean;
	int round, ok = 1;

	CHECK(filter_record_check(&slice_record) == 0);
	/* Bad tables. */
	r = slice_record;
	r.nr_fields = 0;
	CHECK(filter_record_check(&r) == -EINVAL);
	bad[0] = (struct filter_field){ "x", sizeof(a) - 4, FILTER_OP_SUM_U64 };
	r.fields = bad;
	r.nr_fields = 1;
	CHECK(filter_record_check(&r) == -EINVAL);
	CHECK(filter_record_init(&r, &a, NULL) == -EINVAL);
	CHECK(filter_record_reduce(&r, &a, &b) == -EINVAL);
	bad[0] = (struct filter_field){ "x", 0, FILTER_OPS };
	CHECK(filter_record_check(&r) == -EINVAL);
	bad[0] = (struct filter_field){ "x", SIZE_MAX, FILTER_OP_MAX_U64 };
	CHECK(filter_record_check(&r) == -EINVAL);

	/* The identity with its key; the pad left alone. */
	memset(&a, 0xaa, sizeof(a));
	node_report(&b, 77);
	CHECK(filter_record_init(&slice_record, &a, &b) == 0);
	CHECK(a.slice == 77 && a.switched == 0 && a.late == 0);
	CHECK(a.latest_ns == INT64_MIN && a.earliest_ns == INT64_MAX);
	CHECK(a.switch_ns.count == 0 && a.pad == 0xaaaaaaaa);
	CHECK(filter_record_reduce(&slice_record, &a, &b) == 0);
	CHECK(a.switched == 1 && a.latest_ns == b.latest_ns &&
	      a.earliest_ns == b.earliest_ns &&
	      !memcmp(&a.switch_ns, &b.switch_ns, sizeof(b.switch_ns)));

	/* Another slice's record is refused and changes nothing. */
	node_report(&c, 78);
	before = a;
	CHECK(filter_record_reduce(&slice_record, &a, &c) == -EINVAL);
	CHECK(!memcmp(&a, &before, sizeof(a)));

	/* Node reports of a slice in any order and grouping. */
	for (round = 0; round < ROUNDS; round++) {
		n = 1 + (uint32_t)(rnd() % VALS);
		late = 0;
		mx = INT64_MIN;
		mn = INT64_MAX;
		for (i = 0; i < n; i++) {
			node_report(&node[i], 5);
			late += node[i].late;
			if (node[i].latest_ns > mx)
				mx = node[i].latest_ns;
			if (node[i].earliest_ns < mn)
				mn = node[i].earliest_ns;
		}
		filter_record_init(&slice_record, &a, &node[0]);
		for (i = 0; i < n; i++)
			ok &= filter_record_reduce(&slice_record, &a,
						   &node[i]) == 0;
		shuffle(p, n);
		cut = (uint32_t)(rnd() % (n + 1));
		filter_record_init(&slice_record, &b, &node[0]);
		filter_record_init(&slice_record, &c, &node[0]);
		for (i = 0; i < n; i++)
			filter_record_reduce(&slice_record,
					     i < cut ? &b : &c, &node[p[i]]);
		ok &= filter_record_reduce(&slice_record, &c, &b) == 0;
		ok &= !memcmp(&a, &c, offsetof(struct slice_summary, pad));
		ok &= a.switched == n && a.late == late;
		ok &= a.latest_ns == mx && a.earliest_ns == mn;
		ok &= filter_avg_result(&a.switch_ns, &mean) == 0 &&
		      mean >= 10000 && mean < 15000;
	}
	CHECK(ok);

	/* A sum that saturates: done, and said. */
	filter_record_init(&slice_record, &a, NULL);
	node_report(&b, 0);
	b.late = UINT64_MAX;
	CHECK(filter_record_reduce(&slice_record, &a, &b) == -ERANGE);
	CHECK(a.late == UINT64_MAX && a.switched == 1);
}

/* ---- synchronisation ---------------------------------------------- */

/* Children 1 .. @n. */
static struct filter_nodeset children(uint32_t n)
{
	struct filter_nodeset s;
	uint32_t i;

	filter_nodeset_clear(&s);
	for (i = 1; i <= n; i++)
		filter_nodeset_add(&s, i);
	return s;
}

static void test_sync_wait_all(void)
{
	struct filter_nodeset kids = children(4);
	struct filter_sync_res res;
	struct filter_sync_out out;
	struct filter_sync s;
	unsigned int slot;
	uint64_t at;

	CHECK(filter_sync_init(&s, FILTER_SYNC_WAIT_ALL, 0, &kids) == 0);
	CHECK(filter_sync_packet(&s, 1, 10, 0, &res) == 0);
	CHECK(res.verdict == FILTER_TAKE && res.fresh && !res.flushed);
	slot = res.slot;
	CHECK(filter_sync_packet(&s, 2, 10, 5, &res) == 0);
	CHECK(res.verdict == FILTER_TAKE && !res.fresh && res.slot == slot);
	CHECK(filter_sync_packet(&s, 3, 10, 9, &res) == 0);
	/* Not before all four, however long. */
	CHECK(filter_sync_ready(&s, 1000000, &out) == 0);
	CHECK(filter_sync_next_deadline(&s, &at) == 0);
	/* A second packet of child 2 for wave 10: refused. */
	CHECK(filter_sync_packet(&s, 2, 10, 10, &res) == 0);
	CHECK(res.verdict == FILTER_REFUSED && s.stats.duplicates == 1);
	/* A child it does not have: refused. */
	CHECK(filter_sync_packet(&s, 9, 10, 10, &res) == 0);
	CHECK(res.verdict == FILTER_REFUSED && s.stats.unknown == 1);
	CHECK(filter_sync_packet(&s, BCSD_MAX_NODES, 10, 10, &res) ==
	      -EINVAL);
	CHECK(filter_sync_packet(&s, 4, 10, 11, &res) == 0);
	CHECK(res.verdict == FILTER_TAKE);
	CHECK(filter_sync_ready(&s, 11, &out) == 1);
	CHECK(out.wave == 10 && out.slot == slot &&
	      out.why == FILTER_WAVE_COMPLETE && out.got == 4 &&
	      out.missing == 0);
	CHECK(filter_sync_ready(&s, 11, &out) == 0);

	/* Late: for wave 10, sent up; for 9, never seen but older. */
	CHECK(filter_sync_packet(&s, 1, 10, 12, &res) == 0);
	CHECK(res.verdict == FILTER_ALONE && res.late);
	CHECK(filter_sync_packet(&s, 1, 9, 12, &res) == 0);
	CHECK(res.verdict == FILTER_ALONE && res.late);
	CHECK(s.stats.late == 2);

	/* A dead child: the wave no longer waits for it. */
	CHECK(filter_sync_packet(&s, 1, 11, 20, &res) == 0);
	CHECK(filter_sync_packet(&s, 2, 11, 20, &res) == 0);
	CHECK(filter_sync_packet(&s, 3, 11, 20, &res) == 0);
	CHECK(filter_sync_ready(&s, 20, &out) == 0);
	CHECK(filter_sync_child_dead(&s, 4) == 0);
	CHECK(filter_sync_ready(&s, 21, &out) == 1);
	CHECK(out.wave == 11 && out.why == FILTER_WAVE_COMPLETE &&
	      out.got == 3 && out.missing == 0);
	/* Its packets now are those of a stranger; back, it counts again. */
	CHECK(filter_sync_packet(&s, 4, 12, 30, &res) == 0);
	CHECK(res.verdict == FILTER_REFUSED && s.stats.unknown == 2);
	CHECK(filter_sync_child_add(&s, 4) == 0);
	CHECK(filter_sync_packet(&s, 4, 12, 30, &res) == 0);
	CHECK(res.verdict == FILTER_TAKE && res.fresh);
	/* The others dead: child 4 alone is all. */
	CHECK(filter_sync_ready(&s, 30, &out) == 0);
	CHECK(filter_sync_child_dead(&s, 1) == 0 &&
	      filter_sync_child_dead(&s, 2) == 0 &&
	      filter_sync_child_dead(&s, 3) == 0);
	CHECK(filter_sync_ready(&s, 31, &out) == 1 && out.wave == 12 &&
	      out.got == 1 && out.missing == 0);
	/* Every child dead: what came goes up. */
	CHECK(filter_sync_child_add(&s, 1) == 0);
	CHECK(filter_sync_packet(&s, 4, 13, 40, &res) == 0);
	CHECK(filter_sync_ready(&s, 40, &out) == 0);
	CHECK(filter_sync_child_dead(&s, 4) == 0);
	CHECK(filter_sync_ready(&s, 40, &out) == 0);
	CHECK(filter_sync_child_dead(&s, 1) == 0);
	CHECK(filter_sync_ready(&s, 41, &out) == 1 && out.wave == 13 &&
	      out.got == 1 && out.missing == 0);
	CHECK(filter_sync_child_dead(&s, BCSD_MAX_NODES) == -EINVAL);
	CHECK(s.stats.packets == 14 && s.stats.complete == 4);
}

static void test_sync_timeout(void)
{
	struct filter_nodeset kids = children(4);
	struct filter_sync_res res;
	struct filter_sync_out out;
	struct filter_sync s;
	uint64_t at;

	CHECK(filter_sync_init(&s, FILTER_SYNC_TIMEOUT, 0, &kids) == -EINVAL);
	CHECK(filter_sync_init(&s, (enum filter_sync_mode)7, 5, &kids) ==
	      -EINVAL);
	CHECK(filter_sync_init(&s, FILTER_SYNC_TIMEOUT, 50, &kids) == 0);
	/* Wave 1 from child 1 at 100: up at 150, with three missing. */
	CHECK(filter_sync_packet(&s, 1, 1, 100, &res) == 0);
	CHECK(filter_sync_packet(&s, 2, 2, 120, &res) == 0);
	CHECK(filter_sync_next_deadline(&s, &at) == 1 && at == 150);
	CHECK(filter_sync_ready(&s, 149, &out) == 0);
	CHECK(filter_sync_ready(&s, 150, &out) == 1);
	CHECK(out.wave == 1 && out.why == FILTER_WAVE_TIMEOUT &&
	      out.got == 1 && out.missing == 3);
	CHECK(filter_sync_ready(&s, 150, &out) == 0);
	CHECK(filter_sync_next_deadline(&s, &at) == 1 && at == 170);
	/* Wave 2 completes before its timeout. */
	CHECK(filter_sync_packet(&s, 1, 2, 130, &res) == 0);
	CHECK(filter_sync_packet(&s, 3, 2, 140, &res) == 0);
	CHECK(filter_sync_packet(&s, 4, 2, 151, &res) == 0);
	CHECK(filter_sync_ready(&s, 151, &out) == 1);
	CHECK(out.wave == 2 && out.why == FILTER_WAVE_COMPLETE);
	/* A clock that went back does not time a wave out. */
	CHECK(filter_sync_packet(&s, 1, 3, 500, &res) == 0);
	CHECK(filter_sync_ready(&s, 400, &out) == 0);
	CHECK(filter_sync_ready(&s, 550, &out) == 1 && out.wave == 3);
	/* The straggler of wave 1: late, up alone. */
	CHECK(filter_sync_packet(&s, 4, 1, 600, &res) == 0);
	CHECK(res.verdict == FILTER_ALONE && res.late);
	CHECK(s.stats.timed_out == 2 && s.stats.complete == 1 &&
	      s.stats.late == 1);
}

static void test_sync_dont_wait(void)
{
	struct filter_nodeset kids = children(3);
	struct filter_sync_res res;
	struct filter_sync_out out;
	struct filter_sync s;
	uint64_t at;
	uint32_t i;

	CHECK(filter_sync_init(&s, FILTER_SYNC_DONT_WAIT, 0, &kids) == 0);
	for (i = 1; i <= 3; i++) {
		CHECK(filter_sync_packet(&s, i, 1, 0, &res) == 0);
		CHECK(res.verdict == FILTER_ALONE && !res.late);
	}
	/* Even the same again: nothing is held, so nothing is a dup. */
	CHECK(filter_sync_packet(&s, 1, 1, 0, &res) == 0);
	CHECK(res.verdict == FILTER_ALONE);
	CHECK(filter_sync_packet(&s, 8, 1, 0, &res) == 0);
	CHECK(res.verdict == FILTER_REFUSED);
	CHECK(filter_sync_ready(&s, 1000, &out) == 0);
	CHECK(filter_sync_next_deadline(&s, &at) == 0);
	CHECK(s.stats.alone == 4 && s.stats.unknown == 1);
}

static void test_sync_too_many(void)
{
	struct filter_nodeset kids = children(2);
	struct filter_sync_res res;
	struct filter_sync_out out;
	struct filter_sync s;
	unsigned int slot1 = FILTER_WAVES_MAX;
	uint64_t w;

	CHECK(filter_sync_init(&s, FILTER_SYNC_WAIT_ALL, 0, &kids) == 0);
	/* Child 1 runs ahead of child 2 by more than the waves kept. */
	for (w = 1; w <= FILTER_WAVES_MAX; w++) {
		CHECK(filter_sync_packet(&s, 1, w, w, &res) == 0);
		CHECK(res.verdict == FILTER_TAKE && res.fresh &&
		      !res.flushed);
		if (w == 1)
			slot1 = res.slot;
	}
	CHECK(filter_sync_packet(&s, 1, FILTER_WAVES_MAX + 1, 100, &res) == 0);
	CHECK(res.verdict == FILTER_TAKE && res.fresh && res.flushed &&
	      res.flushed_wave == 1 && res.slot == slot1);
	CHECK(s.stats.flushed == 1);
	/* Child 2's packet for wave 1 is now late; for 2, on time. */
	CHECK(filter_sync_packet(&s, 2, 1, 101, &res) == 0);
	CHECK(res.verdict == FILTER_ALONE && res.late);
	CHECK(filter_sync_packet(&s, 2, 2, 101, &res) == 0);
	CHECK(res.verdict == FILTER_TAKE && !res.fresh);
	CHECK(filter_sync_ready(&s, 101, &out) == 1 && out.wave == 2);
	CHECK(filter_sync_ready(&s, 101, &out) == 0);
}

/*
 * The pieces together, as a daemon will use them: three children send
 * slice summaries, some twice, one late; what goes up adds up to what
 * was sent, less the refused duplicates.
 */
static void test_sync_reduce(void)
{
	struct filter_nodeset kids = children(3);
	struct slice_summary acc[FILTER_WAVES_MAX], r, up;
	struct filter_sync_res res;
	struct filter_sync_out out;
	struct filter_sync s;
	uint64_t sent = 0, switched = 0, now = 0;
	uint32_t step, child;
	uint64_t wave;
	int ok = 1;

	CHECK(filter_sync_init(&s, FILTER_SYNC_TIMEOUT, 30, &kids) == 0);
	for (step = 0; step < 300; step++) {
		child = 1 + (uint32_t)(rnd() % 3);
		wave = step / 6 + rnd() % 2;
		now += rnd() % 5;
		node_report(&r, wave);
		ok &= filter_sync_packet(&s, child, wave, now, &res) == 0;
		if (res.verdict == FILTER_REFUSED)
			continue;
		sent++;
		if (res.verdict == FILTER_ALONE) {
			switched += r.switched;
			continue;
		}
		if (res.flushed)
			switched += acc[res.slot].switched;
		if (res.fresh)
			filter_record_init(&slice_record, &acc[res.slot], &r);
		ok &= filter_record_reduce(&slice_record, &acc[res.slot],
					   &r) == 0;
		while (filter_sync_ready(&s, now, &out) == 1) {
			up = acc[out.slot];
			ok &= up.slice == out.wave && up.switched == out.got;
			switched += up.switched;
		}
	}
	while (filter_sync_ready(&s, UINT64_MAX, &out) == 1)
		switched += acc[out.slot].switched;
	CHECK(ok);
	/* Nothing lost: every packet not refused is in what went up. */
	CHECK(switched == sent);
	CHECK(s.stats.taken + s.stats.alone + s.stats.duplicates ==
	      s.stats.packets);
	CHECK(s.stats.duplicates > 0 && s.stats.late > 0);
}

int main(void)
{
	test_scalars();
	test_avg();
	test_list();
	test_nodeset();
	test_hist();
	test_eq();
	test_record();
	test_sync_wait_all();
	test_sync_timeout();
	test_sync_dont_wait();
	test_sync_too_many();
	test_sync_reduce();
	return unit_done("test_filter");
}

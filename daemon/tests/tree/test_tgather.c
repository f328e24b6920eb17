// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the gathers reduced in the tree (tgather.c): seeded random
 * jobs (ranks on nodes, MPI records, histograms of several resolutions,
 * bcs.ko metrics per node) answered by every node and merged up random
 * trees, each answer through the wire (tg_encode(), tg_decode()) as a
 * daemon sends it: the root's answer is byte for byte the flat merge's
 * whatever the shape, its histograms are those of all the values at the
 * lowest resolution, the extremes carry their ranks, the root hears one
 * answer per child, a silent child's subtree is counted missing.  Then
 * the bounds and the decoder's refusals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree/tgather.h"
#include "tests/unit.h"

static uint64_t seed = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	return unit_rng(&seed);
}

#define NODES_MAX	64
#define RANKS_MAX	8	/* per node */
#define VALS		40	/* values per histogram */
#define NAMES		12

static const char *names[NAMES] = {
	"Comp Granularity", "Comm Overhead", "MPI_Allreduce", "MPI_Barrier",
	"MPI_Bcast", "MPI_Irecv", "MPI_Isend", "MPI_Recv", "MPI_Send",
	"MPI_Test", "MPI_Wait", "MPI_Waitall",
};

/* Every value put in, per name, for the flat check of histograms. */
static uint64_t all_vals[NAMES][NODES_MAX * RANKS_MAX * VALS];
static uint32_t nr_vals[NAMES];
static unsigned int min_sub[NAMES];

struct hist_buf {
	struct bcs_hist_header h;
	struct bcs_hist_bucket b[8192];
};

static struct hist_buf hb;

/* @n values at @sub_bits into hb, the exported format. */
static void make_hist(const uint64_t *v, uint32_t n, unsigned int sub_bits)
{
	static uint64_t dense[8192];
	uint32_t i, nb = bcs_hist_buckets(sub_bits);

	memset(&hb.h, 0, sizeof(hb.h));
	memset(dense, 0, sizeof(dense));
	hb.h.magic = BCS_HIST_MAGIC;
	hb.h.version = BCS_HIST_VERSION;
	hb.h.sub_bits = (uint8_t)sub_bits;
	for (i = 0; i < n; i++) {
		dense[bcs_hist_index(v[i], sub_bits)]++;
		if (!hb.h.count || v[i] < hb.h.min)
			hb.h.min = v[i];
		if (v[i] > hb.h.max)
			hb.h.max = v[i];
		hb.h.count++;
		hb.h.sum += v[i];
	}
	for (i = 0; i < nb; i++)
		if (dense[i]) {
			hb.b[hb.h.nr_buckets].index = i;
			hb.b[hb.h.nr_buckets++].count = dense[i];
		}
}

static uint64_t value(void)
{
	/* Spread over many powers of two. */
	return rnd() >> (rnd() % 64);
}

/* Node @n's own answer: its ranks' records and its tasks' metric. */
static void node_answer(struct tg_answer *a, uint32_t n, uint32_t ranks)
{
	uint64_t v[VALS], mn, mx, t;
	uint32_t r, k, i;
	unsigned int sb;

	tg_init(a, 7);
	a->nodes = 1;
	for (r = 0; r < ranks; r++) {
		int32_t rank = (int32_t)(n * RANKS_MAX + r);

		a->ranks++;
		for (k = 0; k < NAMES; k++) {
			if (k > 1 && rnd() % 3 == 0)
				continue;	/* not called here */
			mn = UINT64_MAX;
			mx = t = 0;
			for (i = 0; i < VALS; i++) {
				v[i] = value() >> 20;
				mn = v[i] < mn ? v[i] : mn;
				mx = v[i] > mx ? v[i] : mx;
				t += v[i];
			}
			CHECK(!tg_add_prim(a, rank, names[k], 1u << (k % 3),
					   VALS + k, VALS, mn, mx, k * 100, t));
			sb = 2 + (unsigned int)(rnd() % 6);
			make_hist(v, VALS, sb);
			CHECK(!tg_add_hist(a, TG_HIST_LAT, names[k], &hb.h,
					   hb.b));
			memcpy(&all_vals[k][nr_vals[k]], v, sizeof(v));
			nr_vals[k] += VALS;
			if (sb < min_sub[k])
				min_sub[k] = sb;
		}
	}
	/* The node's bcs.ko metric of the job, even without ranks. */
	for (i = 0; i < VALS; i++)
		v[i] = value();
	make_hist(v, VALS, 4);
	CHECK(!tg_add_hist(a, TG_HIST_DIST, "run", &hb.h, hb.b));
}

static uint8_t blob[TG_BLOB_MAX], blob2[TG_BLOB_MAX];
static struct tg_answer own[NODES_MAX], acc[NODES_MAX], flat, got;

/* @src through the wire and into @dst, as a parent takes a child's. */
static void send_up(struct tg_answer *dst, const struct tg_answer *src,
		    uint64_t *msgs, uint64_t *bytes)
{
	long len = tg_encode(src, blob, sizeof(blob));

	CHECK(len > 0);
	if (len <= 0)
		return;
	CHECK(!tg_decode(blob, (size_t)len, &got));
	CHECK(!tg_merge(dst, &got));
	tg_free(&got);
	if (msgs) {
		(*msgs)++;
		*bytes += (uint64_t)len;
	}
}

/*
 * Merge up a tree of @n nodes (parent[i] < i, node 0 the root), node
 * @silent's answer never coming (0: none).  The root's result in acc[0];
 * the answers the root took in *@msgs.
 */
static void tree_merge(const uint32_t *parent, uint32_t n, uint32_t silent,
		       uint64_t *msgs, uint64_t *bytes)
{
	uint32_t i, sub[NODES_MAX];

	for (i = 0; i < n; i++) {
		tg_init(&acc[i], 7);
		CHECK(!tg_merge(&acc[i], &own[i]));
		sub[i] = 1;
	}
	*msgs = *bytes = 0;
	/* Children before their parents: from the end. */
	for (i = n - 1; i > 0; i--) {
		sub[parent[i]] += sub[i];
		if (i == silent) {
			/* Its parent's wait ends: its subtree is missing. */
			acc[parent[i]].missing += sub[i];
			continue;
		}
		send_up(&acc[parent[i]], &acc[i],
			parent[i] ? NULL : msgs, bytes);
	}
	for (i = 1; i < n; i++)
		tg_free(&acc[i]);
}

static void test_trees(void)
{
	uint32_t parent[NODES_MAX], n, i, k, kids, round;
	uint64_t msgs, bytes;
	long flen, len;

	for (round = 0; round < 12; round++) {
		n = 2 + (uint32_t)(rnd() % (NODES_MAX - 1));
		memset(nr_vals, 0, sizeof(nr_vals));
		for (k = 0; k < NAMES; k++)
			min_sub[k] = BCS_HIST_SUB_BITS_MAX;
		for (i = 0; i < n; i++)
			node_answer(&own[i], i, (uint32_t)(rnd() % RANKS_MAX));
		/* Flat: the asker takes every node's answer. */
		tg_init(&flat, 7);
		for (i = 0; i < n; i++)
			send_up(&flat, &own[i], NULL, NULL);
		flen = tg_encode(&flat, blob2, sizeof(blob2));
		CHECK(flen > 0 && flat.nodes == n && !flat.missing &&
		      !flat.dropped);

		/* The histograms are those of all the values, exactly. */
		for (k = 0; k < NAMES; k++) {
			const struct tg_hist *h = NULL;

			for (i = 0; i < flat.nr_hists; i++)
				if (flat.hists[i].kind == TG_HIST_LAT &&
				    !strcmp(flat.hists[i].name, names[k]))
					h = &flat.hists[i];
			if (!nr_vals[k]) {
				CHECK(!h);
				continue;
			}
			CHECK(h != NULL);
			if (!h)
				continue;
			make_hist(all_vals[k], nr_vals[k], min_sub[k]);
			CHECK(h->sub_bits == min_sub[k] &&
			      h->count == hb.h.count && h->sum == hb.h.sum &&
			      h->min == hb.h.min && h->max == hb.h.max &&
			      h->nr == hb.h.nr_buckets);
			for (i = 0; i < h->nr && i < hb.h.nr_buckets; i++)
				CHECK(h->b[i].index == hb.b[i].index &&
				      h->b[i].count == hb.b[i].count);
		}

		/* Random trees, a chain and a star: all the same answer. */
		for (k = 0; k < 6; k++) {
			kids = 0;
			for (i = 1; i < n; i++) {
				parent[i] = k == 0 ? i - 1 : k == 1 ? 0 :
					    (uint32_t)(rnd() % i);
				kids += parent[i] == 0;
			}
			tree_merge(parent, n, 0, &msgs, &bytes);
			len = tg_encode(&acc[0], blob, sizeof(blob));
			CHECK(len == flen && !memcmp(blob, blob2, (size_t)len));
			/* The root heard one answer per child, not per node. */
			CHECK(msgs == kids);
			tg_free(&acc[0]);
		}

		/* A silent child: its subtree missing, the rest there. */
		for (i = 1; i < n; i++)
			parent[i] = (uint32_t)(rnd() % i);
		tree_merge(parent, n, n - 1, &msgs, &bytes);
		CHECK(acc[0].nodes == n - 1 && acc[0].missing == 1);
		CHECK(acc[0].nodes + acc[0].missing == n);
		tg_free(&acc[0]);
		if (n > 2) {
			tree_merge(parent, n, 1, &msgs, &bytes);
			CHECK(acc[0].missing >= 1 &&
			      acc[0].nodes + acc[0].missing == n);
			tg_free(&acc[0]);
		}
		for (i = 0; i < n; i++)
			tg_free(&own[i]);
		tg_free(&flat);
	}
}

/* The extremes keep the rank that had them; ties to the lower rank. */
static void test_extremes(void)
{
	struct tg_answer a, b;

	tg_init(&a, 1);
	tg_init(&b, 1);
	CHECK(!tg_add_prim(&a, 5, "MPI_Send", 0, 10, 10, 3, 90, 0, 500));
	CHECK(!tg_add_prim(&b, 2, "MPI_Send", 0, 10, 10, 3, 40, 0, 900));
	CHECK(!tg_add_prim(&b, 9, "MPI_Send", 0, 10, 10, 7, 95, 0, 100));
	CHECK(!tg_merge(&a, &b));
	CHECK(a.nr_prims == 1 && a.prims[0].ranks == 3 &&
	      a.prims[0].calls == 30 && a.prims[0].time_ns == 1500);
	CHECK(a.prims[0].min_ns == 3 && a.prims[0].min_rank == 2);
	CHECK(a.prims[0].max_ns == 95 && a.prims[0].max_rank == 9);
	CHECK(a.prims[0].rmin_ns == 100 && a.prims[0].rmin_rank == 9);
	CHECK(a.prims[0].rmax_ns == 900 && a.prims[0].rmax_rank == 2);
	/* A record without timed calls has no call extremes. */
	CHECK(!tg_add_prim(&a, 1, "MPI_Test", 0, 4, 0, 0, 0, 0, 0));
	CHECK(a.prims[1].min_rank == -1);
	CHECK(tg_add_prim(&a, 1, "MPI_Test", 0, 4, 0, 1, 2, 0, 0) == -EINVAL);
	CHECK(tg_add_prim(&a, -1, "MPI_Test", 0, 4, 1, 1, 2, 0, 0) == -EINVAL);
	CHECK(tg_add_prim(&a, 1, "", 0, 4, 1, 1, 2, 0, 0) == -EINVAL);
	b.job = 2;
	CHECK(tg_merge(&a, &b) == -EINVAL);
	tg_free(&a);
	tg_free(&b);
}

/* Down in resolution: the histogram of the values at the lower one. */
static void test_down(void)
{
	static uint64_t v[500];
	struct tg_answer a;
	struct tg_hist *h;
	unsigned int s, t;
	uint32_t i;

	for (s = 0; s <= BCS_HIST_SUB_BITS_MAX; s++)
		for (t = 0; t <= s; t++) {
			for (i = 0; i < 500; i++)
				v[i] = value();
			tg_init(&a, 1);
			make_hist(v, 500, s);
			CHECK(!tg_add_hist(&a, TG_HIST_DIST, "x", &hb.h, hb.b));
			h = &a.hists[0];
			CHECK(!tg_hist_down(h, t));
			make_hist(v, 500, t);
			CHECK(h->nr == hb.h.nr_buckets);
			for (i = 0; i < h->nr && i < hb.h.nr_buckets; i++)
				CHECK(h->b[i].index == hb.b[i].index &&
				      h->b[i].count == hb.b[i].count);
			CHECK(tg_hist_down(h, t + 1) == -EINVAL);
			tg_free(&a);
		}
}

/* The bounds: what does not fit is counted, and the rest merged. */
static void test_bounds(void)
{
	struct tg_answer a;
	uint64_t v[1];
	char name[TG_NAME_LEN];
	uint32_t i;

	tg_init(&a, 1);
	for (i = 0; i < TG_PRIMS_MAX + 10; i++) {
		snprintf(name, sizeof(name), "P%03u", i);
		tg_add_prim(&a, 0, name, 0, 1, 1, 1, 1, 0, 1);
	}
	CHECK(a.nr_prims == TG_PRIMS_MAX && a.dropped == 10);
	CHECK(!strcmp(a.prims[TG_PRIMS_MAX - 1].name, "P127"));
	for (i = 0; i < TG_HISTS_MAX + 3; i++) {
		snprintf(name, sizeof(name), "H%03u", i);
		v[0] = i;
		make_hist(v, 1, 3);
		tg_add_hist(&a, TG_HIST_DIST, name, &hb.h, hb.b);
	}
	CHECK(a.nr_hists == TG_HISTS_MAX && a.dropped == 13);
	CHECK(tg_encode(&a, blob, sizeof(blob)) > 0);
	CHECK(tg_encode(&a, blob, 100) == -ENOSPC);
	tg_free(&a);
}

/* The decoder: only canonical, bounded, consistent answers. */
static void test_decode(void)
{
	struct tg_answer a, b;
	uint64_t v[3] = { 5, 900, 70000 };
	long len;
	size_t i, off;

	tg_init(&a, 3);
	a.nodes = 2;
	CHECK(!tg_add_prim(&a, 0, "MPI_Bcast", 0, 2, 2, 1, 9, 8, 10));
	CHECK(!tg_add_prim(&a, 1, "MPI_Send", 0, 2, 2, 1, 9, 8, 10));
	make_hist(v, 3, 5);
	CHECK(!tg_add_hist(&a, TG_HIST_LAT, "MPI_Send", &hb.h, hb.b));
	len = tg_encode(&a, blob, sizeof(blob));
	CHECK(len == TG_HDR_LEN + 2 * TG_PRIM_LEN + TG_HIST_LEN +
	      3 * TG_BUCKET_LEN);
	CHECK(!tg_decode(blob, (size_t)len, &b));
	CHECK(tg_encode(&b, blob2, sizeof(blob2)) == len &&
	      !memcmp(blob, blob2, (size_t)len));
	tg_free(&b);
	/* Short or long by a byte. */
	CHECK(tg_decode(blob, (size_t)len - 1, &b) == -EINVAL);
	tg_free(&b);
	CHECK(tg_decode(blob, (size_t)len + 1, &b) == -EINVAL);
	tg_free(&b);
	/* Names out of order: the primitives swapped. */
	memcpy(blob2, blob, (size_t)len);
	memcpy(blob2 + TG_HDR_LEN, blob + TG_HDR_LEN + TG_PRIM_LEN,
	       TG_PRIM_LEN);
	memcpy(blob2 + TG_HDR_LEN + TG_PRIM_LEN, blob + TG_HDR_LEN,
	       TG_PRIM_LEN);
	CHECK(tg_decode(blob2, (size_t)len, &b) == -EINVAL);
	tg_free(&b);
	/* A name without its NUL. */
	memcpy(blob2, blob, (size_t)len);
	memset(blob2 + TG_HDR_LEN, 'A', TG_NAME_LEN);
	CHECK(tg_decode(blob2, (size_t)len, &b) == -EINVAL);
	tg_free(&b);
	/* A bucket past the last, a count that does not add up. */
	off = TG_HDR_LEN + 2 * TG_PRIM_LEN + TG_HIST_LEN;
	memcpy(blob2, blob, (size_t)len);
	blob2[off] = 0xff;
	CHECK(tg_decode(blob2, (size_t)len, &b) == -EINVAL);
	tg_free(&b);
	memcpy(blob2, blob, (size_t)len);
	blob2[off + 11]++;
	CHECK(tg_decode(blob2, (size_t)len, &b) == -EINVAL);
	tg_free(&b);
	/* A huge bucket count: refused before any allocation. */
	memcpy(blob2, blob, (size_t)len);
	memset(blob2 + TG_HDR_LEN + 2 * TG_PRIM_LEN + 36, 0xff, 4);
	CHECK(tg_decode(blob2, (size_t)len, &b) == -EINVAL);
	tg_free(&b);
	/* Any byte flipped: refused or a valid answer, never a crash. */
	for (i = 0; i < (size_t)len; i++) {
		memcpy(blob2, blob, (size_t)len);
		blob2[i] ^= (uint8_t)(1 + rnd() % 255);
		if (!tg_decode(blob2, (size_t)len, &b))
			CHECK(tg_encode(&b, blob2, sizeof(blob2)) == len);
		tg_free(&b);
	}
	tg_free(&a);
}

/* Parts @from .. @to - 1 of an answer of @size bytes at @b from @idx. */
static void parts(struct tg_gather *g, uint32_t idx, const uint8_t *b,
		  uint32_t size, uint32_t from, uint32_t to, uint64_t now)
{
	uint32_t k, off, len;

	for (k = from; k < to; k++) {
		off = k * TG_PART_MAX;
		len = size - off < TG_PART_MAX ? size - off : TG_PART_MAX;
		CHECK(tg_gather_part(g, idx, size, off, len, b + off,
				     now) >= 0);
	}
}

/*
 * Which children are asked for their answers' lost parts again
 * (tg_gather_ask()), and when: one that sent some and then nothing for
 * a gap, for exactly the others; one that sent nothing, late in the
 * wait; none too close to its end, none after three asks, none that
 * answered.
 */
static void test_asks(void)
{
	static uint8_t big[80 * TG_PART_MAX];
	uint32_t idx[3] = { 4, 9, 12 }, sub[3] = { 1, 2, 1 }, k, size;
	static uint8_t blob[TG_BLOB_MAX];
	struct tg_answer a;
	struct tg_gather g;
	struct tg_want w;
	char name[8];
	long len;

	tg_init(&a, 7);
	a.nodes = 1;
	for (k = 0; k < 30; k++) {
		snprintf(name, sizeof(name), "p%02u", k);
		CHECK(!tg_add_prim(&a, 0, name, 0, 1, 0, 0, 0, 0, 1));
	}
	len = tg_encode(&a, blob, sizeof(blob));
	CHECK(len > 2 * TG_PART_MAX && len <= 3 * TG_PART_MAX);
	size = (uint32_t)len;
	CHECK(!tg_gather_start(&g, 7, 3, idx, sub, 2000));
	CHECK(!tg_gather_own(&g, &a));
	/* Early in the wait, nothing come: nobody asked. */
	for (k = 0; k < 3; k++)
		CHECK(!tg_gather_ask(&g, k, 100, &w));
	CHECK(!tg_gather_ask(&g, 3, 1800, &w));	/* no such child */
	/* Parts 0 and 2 of node 4's at 100: part 1 asked for after a gap. */
	parts(&g, 4, blob, size, 0, 1, 100);
	parts(&g, 4, blob, size, 2, 3, 100);
	CHECK(!tg_gather_ask(&g, 0, 100 + TG_ASK_GAP_MS - 1, &w));
	CHECK(tg_gather_ask(&g, 0, 100 + TG_ASK_GAP_MS, &w));
	CHECK(w.idx == 4 && w.size == size && w.parts[0] == 2 &&
	      !w.parts[1]);
	/* Again a gap after the ask, three times in all. */
	CHECK(!tg_gather_ask(&g, 0, 100 + 2 * TG_ASK_GAP_MS - 1, &w));
	CHECK(tg_gather_ask(&g, 0, 100 + 2 * TG_ASK_GAP_MS, &w) &&
	      w.parts[0] == 2);
	CHECK(tg_gather_ask(&g, 0, 1000, &w));
	CHECK(!tg_gather_ask(&g, 0, 1200, &w) && g.kids[0].asks == TG_ASKS_MAX);
	/* Node 9, silent: all of it, late in the wait, not too late. */
	CHECK(!tg_gather_ask(&g, 1, 2000 - TG_ASK_LATE_MS - 1, &w));
	CHECK(tg_gather_ask(&g, 1, 2000 - TG_ASK_LATE_MS, &w));
	CHECK(w.idx == 9 && !w.size && !w.parts[0] && !w.parts[1]);
	CHECK(!tg_gather_ask(&g, 2, 2000 - TG_ASK_LAST_MS + 1, &w));
	CHECK(tg_gather_ask(&g, 2, 2000 - TG_ASK_LAST_MS, &w) && w.idx == 12);
	/* The missing part comes: node 4 is done, never asked again. */
	parts(&g, 4, blob, size, 1, 2, 1500);
	CHECK(g.kids[0].done);
	g.kids[0].asks = 0;
	CHECK(!tg_gather_ask(&g, 0, 1800, &w));
	/* Node 12's answer whole: not asked; 9 still is. */
	parts(&g, 12, blob, size, 0, 3, 1850);
	CHECK(!tg_gather_ask(&g, 2, 1950, &w));
	CHECK(tg_gather_ask(&g, 1, 1950, &w));
	CHECK(tg_gather_finish(&g)->missing == 2);
	tg_gather_free(&g);

	/* Exactly the parts missing, across the words: 3, 64 and 79. */
	CHECK(!tg_gather_start(&g, 7, 1, idx, sub, 2000));
	size = 79 * TG_PART_MAX + 5;
	for (k = 0; k < 80; k++)
		if (k != 3 && k != 64 && k != 79)
			parts(&g, 4, big, size, k, k + 1, 10);
	CHECK(tg_gather_ask(&g, 0, 10 + TG_ASK_GAP_MS, &w));
	CHECK(w.size == size && w.parts[0] == 1ULL << 3 && w.parts[1] ==
	      (1ULL << 0 | 1ULL << 15));
	tg_gather_free(&g);
	tg_free(&a);
}

/*
 * A gather whose command a busy tree passed down slowly: every node of
 * depth d (a tree of fan-out @k, @height deep: all nodes of a depth
 * alike) gets it @arrive[d] ms after the master sent it; a leaf answers
 * at once, a node when all its children have or when its wait ends
 * (tg_wait_ms(), or with @late tg_wait_late_ms()); a child's answer
 * counts if it comes before its parent's.  The nodes the root covers.
 */
static uint32_t late_cover(const uint64_t *arrive, uint32_t height,
			   uint32_t k, bool late)
{
	uint64_t at[8], until;
	uint32_t cov[8];
	int d;

	for (d = (int)height; d >= 0; d--) {
		until = arrive[d] + (late ?
			tg_wait_late_ms((uint32_t)d, height, TG_STEP_MS,
					arrive[d]) :
			tg_wait_ms((uint32_t)d, height, TG_STEP_MS));
		at[d] = arrive[d];
		cov[d] = 1;
		if ((uint32_t)d == height)
			continue;
		if (at[d + 1] < until) {
			at[d] = at[d + 1] > arrive[d] ? at[d + 1] : arrive[d];
			cov[d] += k * cov[d + 1];
		} else {
			at[d] = until;
		}
	}
	return cov[0];
}

/*
 * A daemon's wait less the time its command took to come: unchanged on
 * time or up to half a step late, the root's never, cut so that it ends
 * half a step before its parent's would (counted from the master's send),
 * 0 past that; and in a tree whose command took more than a step a level
 * the root covers more nodes with it, never fewer.
 */
static void test_late(void)
{
	static const uint64_t on_time[] = { 0, 10, 20, 30 },
		slow[] = { 0, 300, 600, 900 },
		slower[] = { 0, 700, 1400, 2100 },
		stalled[] = { 0, 50, 900, 1000 },
		lost[] = { 0, 50, 1700, 1750 };
	const uint64_t s = TG_STEP_MS;

	CHECK(tg_wait_late_ms(0, 3, s, 0) == tg_wait_ms(0, 3, s));
	CHECK(tg_wait_late_ms(0, 3, s, 10 * s) == tg_wait_ms(0, 3, s));
	CHECK(tg_wait_late_ms(2, 3, s, 0) == tg_wait_ms(2, 3, s));
	CHECK(tg_wait_late_ms(2, 3, s, s / 2) == tg_wait_ms(2, 3, s));
	/* Depth 2 of 3: its parent's wait 3 steps, so at most 2.5 from the send. */
	CHECK(tg_wait_late_ms(2, 3, s, s) == 2 * s - s / 2);
	CHECK(tg_wait_late_ms(2, 3, s, 2 * s) == s / 2);
	CHECK(tg_wait_late_ms(2, 3, s, 2 * s + s / 2) == 0);
	CHECK(tg_wait_late_ms(3, 3, s, 100 * s) == 0);
	CHECK(tg_late_ms(5000000000ULL, 5750000000ULL) == 750);
	CHECK(tg_late_ms(5750000000ULL, 5000000000ULL) == 0);
	/* Fan-out 4, 3 deep: 85 nodes. */
	CHECK(late_cover(on_time, 3, 4, false) == 85);
	CHECK(late_cover(on_time, 3, 4, true) == 85);
	CHECK(late_cover(slow, 3, 4, false) == 85);
	CHECK(late_cover(slow, 3, 4, true) == 85);
	CHECK(late_cover(stalled, 3, 4, true) == 85);
	/* 700 ms a level: each wait ran past its parent's. */
	CHECK(late_cover(slower, 3, 4, false) == 1);
	CHECK(late_cover(slower, 3, 4, true) == 21);
	CHECK(late_cover(lost, 3, 4, false) == 5);
	CHECK(late_cover(lost, 3, 4, true) == 5);
}

int main(void)
{
	test_extremes();
	test_down();
	test_trees();
	test_bounds();
	test_decode();
	test_asks();
	test_late();
	return unit_done("test_tgather");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A gather over a tree of simulated daemons, without sockets (the
 * Slurm/MRNet way: the filters driven by a simulation): N daemons on a
 * k-ary tree of topo.c, each with its ranks' MPI records and histograms
 * and its bcs.ko metric, each answering its parent with one merged answer
 * cut in parts (tg_gather_*() of tgather.c, as a daemon runs them), the
 * root passing its answer to the asker.  Compared with the flat gather,
 * where the asker takes every node's answer itself:
 *  - the same answer, byte for byte;
 *  - the asker hears one answer, the root one per child, not one per node;
 *  - a silent daemon: its parent's wait ends, its subtree counted missing,
 *    and nothing else lost.
 *
 * With "--bench N FANOUT" it prints, for N daemons, what the asker and the
 * root receive and spend, flat and through the tree (bench/tree_scale.sh):
 * answers, datagrams, bytes (each part a datagram of the wire's header,
 * 28 bytes of part header and a tag), and CPU time: for every datagram
 * the tag checked (HMAC-SHA-256, as bcsp_decode() does), the parts put
 * together, decoded and merged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "proto/proto.h"
#include "tree/tgather.h"
#include "tree/topo.h"
#include "tests/unit.h"

#define JOB		11
#define RANKS		4	/* per node */
#define PRIMS		12
#define VALS		32
#define STEP_MS		100
#define PART_HDR	28	/* as BCSP_MPI_PART's */

static uint64_t seed = 0x2545f4914f6cdd1dULL;
static uint8_t key[BCSP_KEY_LEN];

static const char *prims[PRIMS] = {
	"Comp Granularity", "Comm Overhead", "MPI_Allreduce", "MPI_Barrier",
	"MPI_Bcast", "MPI_Irecv", "MPI_Isend", "MPI_Recv", "MPI_Send",
	"MPI_Test", "MPI_Wait", "MPI_Waitall",
};

static struct topo_list list;
static struct topo_tree tree;

struct hist_buf {
	struct bcs_hist_header h;
	struct bcs_hist_bucket b[2048];
};

static void make_hist(struct hist_buf *hb, const uint64_t *v, uint32_t n,
		      unsigned int sub_bits)
{
	static uint64_t dense[2048];
	uint32_t i;

	memset(&hb->h, 0, sizeof(hb->h));
	memset(dense, 0, sizeof(dense));
	hb->h.magic = BCS_HIST_MAGIC;
	hb->h.version = BCS_HIST_VERSION;
	hb->h.sub_bits = (uint8_t)sub_bits;
	for (i = 0; i < n; i++) {
		dense[bcs_hist_index(v[i], sub_bits)]++;
		if (!hb->h.count || v[i] < hb->h.min)
			hb->h.min = v[i];
		if (v[i] > hb->h.max)
			hb->h.max = v[i];
		hb->h.count++;
		hb->h.sum += v[i];
	}
	for (i = 0; i < bcs_hist_buckets(sub_bits); i++)
		if (dense[i]) {
			hb->b[hb->h.nr_buckets].index = i;
			hb->b[hb->h.nr_buckets++].count = dense[i];
		}
}

/* Node @n's own answer: its ranks' records, its metric. */
static void own_answer(struct tg_answer *a, uint32_t n)
{
	static struct hist_buf hb;
	uint64_t v[VALS], mn, mx, t;
	uint32_t r, k, i;

	tg_init(a, JOB);
	a->nodes = 1;
	for (r = 0; r < RANKS; r++) {
		a->ranks++;
		for (k = 0; k < PRIMS; k++) {
			mn = UINT64_MAX;
			mx = t = 0;
			for (i = 0; i < VALS; i++) {
				v[i] = 1000 + unit_rng(&seed) % 1000000;
				mn = v[i] < mn ? v[i] : mn;
				mx = v[i] > mx ? v[i] : mx;
				t += v[i];
			}
			tg_add_prim(a, (int32_t)(n * RANKS + r), prims[k], 0,
				    VALS, VALS, mn, mx, 8 * k, t);
			make_hist(&hb, v, VALS, 4);
			tg_add_hist(a, TG_HIST_LAT, prims[k], &hb.h, hb.b);
		}
	}
	for (i = 0; i < VALS; i++)
		v[i] = unit_rng(&seed) % 100000000;
	make_hist(&hb, v, VALS, 4);
	tg_add_hist(a, TG_HIST_DIST, "run", &hb.h, hb.b);
}

/* What a receiver (the asker, the root) took and spent. */
struct cost {
	uint64_t answers, datagrams, bytes;
	double cpu_s;
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t blob[TG_BLOB_MAX];
static uint8_t dgram[BCSP_MAX_LEN];

/*
 * @a sent as node @from's answer to gather @g, in parts; @c (if not
 * NULL) counts what the receiver took and its CPU time.
 */
static void send_answer(struct tg_gather *g, uint32_t from,
			const struct tg_answer *a, struct cost *c)
{
	long len = tg_encode(a, blob, sizeof(blob));
	uint32_t off, n, dlen;
	uint8_t mac[32];
	double t0;

	CHECK(len > 0);
	if (len <= 0)
		return;
	if (c)
		c->answers++;
	for (off = 0; off < (uint32_t)len; off += TG_PART_MAX) {
		n = (uint32_t)len - off < TG_PART_MAX ? (uint32_t)len - off :
						       TG_PART_MAX;
		dlen = BCSP_HDR_LEN + PART_HDR + (n + 3) / 4 * 4 +
		       BCSP_TAG_LEN;
		memcpy(dgram + BCSP_HDR_LEN + PART_HDR, blob + off, n);
		t0 = cpu_now();
		crypto_auth_hmacsha256(mac, dgram, dlen - BCSP_TAG_LEN, key);
		CHECK(tg_gather_part(g, from, (uint32_t)len, off, n,
				     dgram + BCSP_HDR_LEN + PART_HDR, 1) >= 0);
		if (c) {
			c->cpu_s += cpu_now() - t0;
			c->datagrams++;
			c->bytes += dlen;
		}
	}
}

static struct tg_answer own[BCSD_MAX_NODES];

/* The asker has nothing of its own: an empty answer, covering no node. */
static void asker_own(struct tg_gather *asker)
{
	struct tg_answer none;

	tg_init(&none, JOB);
	CHECK(!tg_gather_own(asker, &none));
}
static struct tg_gather gat[BCSD_MAX_NODES];
static uint32_t height;

/*
 * Where each node's answer goes: its parent, or (adopt()) the ancestor
 * it asked while its parent was silent.  NULL in tree_gather(): parents.
 */
static uint32_t up_to[BCSD_MAX_NODES];

/* Does gather @i wait in vain for a node (silent, or answering elsewhere)? */
static bool waits_in_vain(uint32_t i, uint32_t silent, const uint32_t *to)
{
	uint32_t k;

	for (k = 0; k < gat[i].nr_kids; k++)
		if (gat[i].kids[k].idx == silent ||
		    (to && to[gat[i].kids[k].idx] != i))
			return true;
	return false;
}

/* Down: each daemon, from @now, waits for the children it passed it to. */
static void start_gathers(uint64_t now, uint64_t step_ms)
{
	uint32_t i, k, n, ord, sub[BCSD_MAX_NODES];
	const uint32_t *child;

	for (ord = 0; ord < tree.nr; ord++) {
		i = tree.order[ord];
		n = topo_children(&tree, i, &child);
		for (k = 0; k < n; k++)
			sub[k] = topo_subtree(&tree, child[k]);
		CHECK(!tg_gather_start(&gat[i], JOB, n, child, sub,
				       now + tg_wait_ms(topo_depth(&tree, i),
							height, step_ms)));
	}
}

/*
 * The gather down tree @tree and back, node @silent (not the root;
 * BCSD_MAX_NODES: none) answering nothing, every node answering to
 * @to[node] (NULL: its parent; another: an ancestor that adopted it).
 * The asker's answer into @asker; the root's costs and the asker's.
 */
static void tree_gather(uint32_t silent, struct tg_gather *asker,
			struct cost *root_c, struct cost *ask_c,
			const uint32_t *to)
{
	uint32_t i, j, k;
	const struct tg_answer *up;
	uint64_t now = 0;
	uint32_t root_idx = tree.root, one = 1, ord;
	bool vain;

	start_gathers(now, STEP_MS);
	/* Each adopter waits for the nodes that asked it too. */
	for (i = 0; to && i < tree.nr; i++)
		if (i != root_idx && to[i] != topo_parent(&tree, i))
			CHECK(!tg_gather_adopt(&gat[to[i]], i,
					       topo_subtree(&tree, i)));
	CHECK(!tg_gather_start(asker, JOB, 1, &root_idx, &one,
			       now + tg_wait_ms(0, height + 1, STEP_MS)));
	asker_own(asker);
	/* Up: children first (breadth-first order, backwards). */
	for (ord = tree.nr; ord-- > 0;) {
		i = tree.order[ord];
		CHECK(!tg_gather_own(&gat[i], &own[i]));
		vain = waits_in_vain(i, silent, to);
		/* All in, or (a silent child) its wait over. */
		j = 0;
		if (!tg_gather_done(&gat[i], now)) {
			CHECK(!tg_gather_done(&gat[i], gat[i].until_ms - 1));
			CHECK(tg_gather_done(&gat[i], gat[i].until_ms));
			j = 1;
		}
		up = tg_gather_finish(&gat[i]);
		CHECK(j == vain);
		if (i == silent)
			continue;
		k = to ? to[i] : topo_parent(&tree, i);
		if (i == root_idx)
			send_answer(asker, i, up, ask_c);
		else
			send_answer(&gat[k], i, up,
				    k == root_idx ? root_c : NULL);
	}
	for (i = 0; i < tree.nr; i++)
		tg_gather_free(&gat[i]);
	CHECK(tg_gather_done(asker, now));
	tg_gather_finish(asker);
}

/* The flat gather: the asker takes every node's answer. */
static void flat_gather(struct tg_gather *asker, struct cost *c)
{
	static uint32_t idx[BCSD_MAX_NODES], one[BCSD_MAX_NODES];
	uint32_t i;

	for (i = 0; i < tree.nr; i++) {
		idx[i] = i;
		one[i] = 1;
	}
	CHECK(!tg_gather_start(asker, JOB, tree.nr, idx, one, STEP_MS));
	asker_own(asker);
	for (i = 0; i < tree.nr; i++)
		send_answer(asker, i, &own[i], c);
	CHECK(tg_gather_done(asker, 0));
	tg_gather_finish(asker);
}

static int setup(uint32_t nodes, uint32_t fanout)
{
	char err[256], host[32];
	uint32_t i;

	topo_list_init(&list);
	for (i = 0; i < nodes; i++) {
		snprintf(host, sizeof(host), "10.%u.%u.%u", i >> 16,
			 (i >> 8) & 255, i & 255);
		if (topo_list_add(&list, i + 1, host, 0, err, sizeof(err)) ||
		    i >= BCSD_MAX_NODES)
			return -1;
	}
	if (topo_tree_kary(&tree, &list, 1, fanout, err, sizeof(err)))
		return -1;
	height = 0;
	for (i = 0; i < tree.nr; i++)
		if (topo_depth(&tree, i) > height)
			height = topo_depth(&tree, i);
	for (i = 0; i < tree.nr; i++)
		own_answer(&own[i], i);
	return 0;
}

static void teardown(void)
{
	uint32_t i;

	for (i = 0; i < tree.nr; i++)
		tg_free(&own[i]);
}

static uint8_t flat_blob[TG_BLOB_MAX];

/*
 * The tree of @nodes at @fanout (setup()), and the flat gather over it
 * into @flat (its costs in @fc), encoded into flat_blob: its length.
 */
static long flat_ref(uint32_t nodes, uint32_t fanout, struct tg_gather *flat,
		     struct cost *fc)
{
	CHECK(!setup(nodes, fanout));
	memset(fc, 0, sizeof(*fc));
	flat_gather(flat, fc);
	return tg_encode(&flat->acc, flat_blob, sizeof(flat_blob));
}

static void test_shapes(void)
{
	static const uint32_t sizes[] = { 20, 37, 50 };
	static const uint32_t fanouts[] = { 2, 3, 8 };
	struct tg_gather flat, ask;
	struct cost fc, rc, ac;
	long flen, len;
	uint32_t s, f, kids;
	const uint32_t *child;

	for (s = 0; s < 3; s++)
		for (f = 0; f < 3; f++) {
			flen = flat_ref(sizes[s], fanouts[f], &flat, &fc);
			CHECK(flat.acc.nodes == sizes[s] &&
			      !flat.acc.missing &&
			      flat.acc.ranks == sizes[s] * RANKS);
			CHECK(fc.answers == sizes[s]);

			memset(&rc, 0, sizeof(rc));
			memset(&ac, 0, sizeof(ac));
			tree_gather(BCSD_MAX_NODES, &ask, &rc, &ac, NULL);
			len = tg_encode(&ask.acc, blob, sizeof(blob));
			CHECK(len == flen && !memcmp(blob, flat_blob, len));
			/* One answer per child of the root; one to the asker. */
			kids = topo_children(&tree, tree.root, &child);
			CHECK(rc.answers == kids && ac.answers == 1);
			CHECK(ac.datagrams < fc.datagrams);
			tg_gather_free(&ask);

			/* A silent daemon: its subtree missing, no more. */
			tree_gather(sizes[s] - 1 - f, &ask, &rc, &ac, NULL);
			CHECK(ask.acc.missing == topo_subtree(&tree,
							      sizes[s] - 1 - f));
			CHECK(ask.acc.nodes + ask.acc.missing == sizes[s]);
			CHECK(ask.acc.ranks == ask.acc.nodes * RANKS);
			tg_gather_free(&ask);
			tg_gather_free(&flat);
			teardown();
		}
}

/* A child's parts that do not fit: refused, the child counted missing. */
static void test_parts(void)
{
	struct tg_gather g;
	uint32_t idx[2] = { 4, 9 }, sub[2] = { 3, 1 };
	struct tg_answer a;
	long len;

	tg_init(&a, JOB);
	a.nodes = 3;
	len = tg_encode(&a, blob, sizeof(blob));
	CHECK(!tg_gather_start(&g, JOB, 2, idx, sub, 1000));
	CHECK(tg_gather_part(&g, 5, (uint32_t)len, 0, (uint32_t)len, blob, 1) ==
	      -ENOENT);
	CHECK(tg_gather_part(&g, 4, (uint32_t)len, 0, (uint32_t)len - 1,
			     blob, 1) == -EINVAL);
	CHECK(tg_gather_part(&g, 4, (uint32_t)len, 0, (uint32_t)len, blob, 1) ==
	      -ENOENT);
	blob[0] ^= 1;
	CHECK(tg_gather_part(&g, 9, (uint32_t)len, 0, (uint32_t)len, blob, 1) ==
	      -EINVAL);
	blob[0] ^= 1;
	CHECK(!tg_gather_done(&g, 999));	/* its own answer not in */
	tg_init(&a, JOB);
	CHECK(!tg_gather_own(&g, &a));
	CHECK(tg_gather_own(&g, &a) == -EALREADY);
	CHECK(tg_gather_done(&g, 0));
	CHECK(tg_gather_finish(&g)->missing == 4 && g.refused == 2);
	tg_gather_free(&g);
	/* Another job's answer is refused too. */
	tg_init(&a, JOB + 1);
	len = tg_encode(&a, blob, sizeof(blob));
	CHECK(!tg_gather_start(&g, JOB, 1, idx, sub, 1000));
	CHECK(tg_gather_part(&g, 4, (uint32_t)len, 0, (uint32_t)len, blob, 1) ==
	      -EINVAL);
	tg_gather_free(&g);
	CHECK(tg_wait_ms(0, 3, 10) == 40 && tg_wait_ms(3, 3, 10) == 10);
}

/*
 * Lossy links: the gather over the tree in time (TG_STEP_MS a level, a
 * tick every TICK_MS as the daemons have), each part sent lost with
 * probability @lost_pct % (seeded), each part sent again on an ask with
 * @relost_pct %; with @repair the daemons and the asker ask
 * (tg_gather_ask()) and the children resend from the answer they keep.
 * The asker's gather is in @asker; the parts lost in *@lost.
 */
#define TICK_MS		10

static uint8_t *kept[BCSD_MAX_NODES];
static uint32_t kept_len[BCSD_MAX_NODES];

/* Parts of node @from's kept answer in @want (NULL: all) into @g. */
static void lossy_send(struct tg_gather *g, uint32_t from, const uint64_t *want,
		       unsigned int pct, uint64_t now, uint32_t *lost)
{
	uint32_t off, k, n, len = kept_len[from];

	for (off = 0; off < len; off += TG_PART_MAX) {
		k = off / TG_PART_MAX;
		if (want && !(want[k / 64] & 1ULL << (k % 64)))
			continue;
		if (unit_rng(&seed) % 100 < pct) {
			(*lost)++;
			continue;
		}
		n = len - off < TG_PART_MAX ? len - off : TG_PART_MAX;
		/* A gather already answered refuses it (-ENOENT). */
		tg_gather_part(g, from, len, off, n, kept[from] + off, now);
	}
}

static void lossy_gather(struct tg_gather *asker, unsigned int lost_pct,
			 unsigned int relost_pct, bool repair, uint32_t *lost)
{
	uint32_t i, k, ord, all = tree.nr;
	bool answered[BCSD_MAX_NODES] = { false };
	struct tg_gather *g;
	struct tg_want w;
	uint64_t now;
	long len;

	*lost = 0;
	start_gathers(0, TG_STEP_MS);
	for (i = 0; i < tree.nr; i++)
		CHECK(!tg_gather_own(&gat[i], &own[i]));
	/* As bcsd's asker: the root's answer covers every node. */
	CHECK(!tg_gather_start(asker, JOB, 1, &tree.root, &all,
			       tg_wait_ms(0, height + 1, TG_STEP_MS)));
	asker_own(asker);
	for (now = TICK_MS; now <= asker->until_ms; now += TICK_MS) {
		/* Answers up, deepest first, as their gathers end. */
		for (ord = tree.nr; ord-- > 0;) {
			i = tree.order[ord];
			if (answered[i] || !tg_gather_done(&gat[i], now))
				continue;
			answered[i] = true;
			len = tg_encode(tg_gather_finish(&gat[i]), blob,
					sizeof(blob));
			CHECK(len > 0);
			if (len <= 0)
				continue;
			kept[i] = malloc((size_t)len);
			CHECK(kept[i] != NULL);
			if (!kept[i])
				continue;
			memcpy(kept[i], blob, (size_t)len);
			kept_len[i] = (uint32_t)len;
			lossy_send(i == tree.root ? asker :
				   &gat[topo_parent(&tree, i)], i, NULL,
				   lost_pct, now, lost);
		}
		if (tg_gather_done(asker, now))
			break;
		/* The asks of the daemons waiting, and the asker's. */
		for (i = 0; repair && i <= tree.nr; i++) {
			g = i < tree.nr ? &gat[i] : asker;
			if (i < tree.nr && answered[i])
				continue;
			for (k = 0; k < g->nr_kids; k++) {
				if (!tg_gather_ask(g, k, now, &w) ||
				    !kept[w.idx])
					continue;
				/* Asked once per ask, never more. */
				CHECK(w.size ? w.size == kept_len[w.idx] :
				      !w.parts[0] && !w.parts[1]);
				lossy_send(g, w.idx, w.size ? w.parts : NULL,
					   relost_pct, now, lost);
			}
		}
	}
	/* Every wait ends by its deadline: the asker's too. */
	CHECK(now <= asker->until_ms && tg_gather_done(asker, now));
	tg_gather_finish(asker);
	for (i = 0; i < tree.nr; i++) {
		tg_gather_free(&gat[i]);
		free(kept[i]);
		kept[i] = NULL;
	}
}

/*
 * Parts lost on the way up: with the repair, the asker's answer is the
 * flat gather's, byte for byte; without it, or when the parts sent
 * again are lost too, the answer ends by the deadline, partial, what it
 * has right (the subtrees lost counted missing, nothing else lost).
 */
static void test_lossy(void)
{
	static const unsigned int pcts[] = { 5, 20 };
	struct tg_gather flat, ask;
	struct cost fc;
	uint32_t lost, p;
	long flen, len;

	flen = flat_ref(40, 3, &flat, &fc);
	for (p = 0; p < 2; p++) {
		lossy_gather(&ask, pcts[p], 0, true, &lost);
		len = tg_encode(&ask.acc, blob, sizeof(blob));
		CHECK(lost > 0);
		CHECK(!ask.acc.missing && ask.acc.nodes == 40);
		CHECK(len == flen && !memcmp(blob, flat_blob, len));
		tg_gather_free(&ask);

		/* The same losses, no repair: partial. */
		lossy_gather(&ask, pcts[p], 0, false, &lost);
		CHECK(lost > 0 && ask.acc.missing > 0);
		CHECK(ask.acc.nodes + ask.acc.missing == 40);
		CHECK(ask.acc.ranks == ask.acc.nodes * RANKS);
		tg_gather_free(&ask);

		/* Every part sent again lost: by the deadline, partial. */
		lossy_gather(&ask, pcts[p], 100, true, &lost);
		CHECK(lost > 0 && ask.acc.missing > 0);
		CHECK(ask.acc.nodes + ask.acc.missing == 40);
		CHECK(ask.acc.ranks == ask.acc.nodes * RANKS);
		tg_gather_free(&ask);
	}
	tg_gather_free(&flat);
	teardown();
}

static int bench(uint32_t nodes, uint32_t fanout)
{
	struct tg_gather flat, ask;
	struct cost fc = { 0 }, rc = { 0 }, ac = { 0 };

	if (setup(nodes, fanout))
		return 2;
	flat_gather(&flat, &fc);
	tree_gather(BCSD_MAX_NODES, &ask, &rc, &ac, NULL);
	/* nodes fanout | flat: answers datagrams bytes cpu_ms | root | asker */
	printf("%u %u %lu %lu %lu %.3f %lu %lu %lu %.3f %lu %lu %lu %.3f\n",
	       nodes, fanout, (unsigned long)fc.answers,
	       (unsigned long)fc.datagrams, (unsigned long)fc.bytes,
	       fc.cpu_s * 1e3, (unsigned long)rc.answers,
	       (unsigned long)rc.datagrams, (unsigned long)rc.bytes,
	       rc.cpu_s * 1e3, (unsigned long)ac.answers,
	       (unsigned long)ac.datagrams, (unsigned long)ac.bytes,
	       ac.cpu_s * 1e3);
	tg_gather_free(&flat);
	tg_gather_free(&ask);
	teardown();
	return unit_fail ? 1 : 0;
}

/* Every node's answer to its parent, @a's children's to @a's parent. */
static void adopt_children(uint32_t a)
{
	const uint32_t *child;
	uint32_t i, n;

	for (i = 0; i < tree.nr; i++)
		up_to[i] = i == tree.root ? i : topo_parent(&tree, i);
	n = topo_children(&tree, a, &child);
	for (i = 0; i < n; i++)
		up_to[child[i]] = topo_parent(&tree, a);
}

/*
 * Nodes adopted by an ancestor (tg_gather_adopt()): covered through it,
 * counted missing once whether their parent answers or not.
 */
static void test_adopted(void)
{
	static const uint32_t sizes[] = { 20, 37 };
	static const uint32_t fanouts[] = { 2, 3 };
	struct tg_gather flat, ask;
	struct cost fc, rc, ac;
	const uint32_t *child;
	uint32_t s, f, p, a;
	long flen, len;

	for (s = 0; s < 2; s++)
		for (f = 0; f < 2; f++) {
			flen = flat_ref(sizes[s], fanouts[f], &flat, &fc);
			/* An interior node below the root's first child. */
			topo_children(&tree, tree.root, &child);
			topo_children(&tree, child[0], &child);
			p = child[0];
			CHECK(topo_children(&tree, p, &child) > 0);
			a = child[0];

			/* Its parent silent, its children adopted above. */
			adopt_children(p);
			tree_gather(p, &ask, &rc, &ac, up_to);
			CHECK(ask.acc.missing == 1);
			CHECK(ask.acc.nodes == sizes[s] - 1);
			CHECK(ask.acc.ranks == ask.acc.nodes * RANKS);
			tg_gather_free(&ask);

			/* Its parent alive, the child answering above: all
			 * there, as the flat gather has it. */
			adopt_children(p);
			tree_gather(BCSD_MAX_NODES, &ask, &rc, &ac, up_to);
			len = tg_encode(&ask.acc, blob, sizeof(blob));
			CHECK(ask.acc.nodes == sizes[s] && !ask.acc.missing);
			CHECK(len == flen && !memcmp(blob, flat_blob, len));
			tg_gather_free(&ask);

			/* An adopted node silent: its subtree missing once. */
			adopt_children(p);
			tree_gather(a, &ask, &rc, &ac, up_to);
			CHECK(ask.acc.missing == topo_subtree(&tree, a));
			CHECK(ask.acc.nodes + ask.acc.missing == sizes[s]);
			tg_gather_free(&ask);
			tg_gather_free(&flat);
			teardown();
		}
}

int main(int argc, char **argv)
{
	if (sodium_init() < 0)
		return 1;
	randombytes_buf(key, sizeof(key));
	if (argc == 4 && !strcmp(argv[1], "--bench"))
		return bench((uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]));
	test_parts();
	test_shapes();
	test_adopted();
	test_lossy();
	return unit_done("test_tgsim");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Gathers reduced in the tree of daemons: the merge of answers, and their
 * encoding for the wire (tgather.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cursor.h"
#include "tree/filter.h"
#include "tree/tgather.h"

void tg_init(struct tg_answer *a, uint32_t job)
{
	memset(a, 0, sizeof(*a));
	a->job = job;
}

void tg_free(struct tg_answer *a)
{
	uint32_t i;

	for (i = 0; i < a->nr_hists; i++)
		free(a->hists[i].b);
	tg_init(a, a->job);
}

static bool name_ok(const char *name)
{
	size_t n = strnlen(name, TG_NAME_LEN);

	return n > 0 && n < TG_NAME_LEN;
}

static uint64_t sum(uint64_t a, uint64_t b)
{
	filter_sum_u64(&a, b);
	return a;
}

static void count_dropped(struct tg_answer *a, uint64_t n)
{
	filter_sum_u64(&a->dropped, n);
}

/* ---- primitives --------------------------------------------------- */

/* Is (@v, @r) below (@w, @s): the lower value, on a tie the lower rank. */
static bool below(uint64_t v, int32_t r, uint64_t w, int32_t s)
{
	return v < w || (v == w && r < s);
}

static bool above(uint64_t v, int32_t r, uint64_t w, int32_t s)
{
	return v > w || (v == w && r < s);
}

/* (@sv, @sr) into the extreme (@v, @r) if it passes it, or if @take. */
static void keep(uint64_t *v, int32_t *r, uint64_t sv, int32_t sr, bool take,
		 bool lower)
{
	if (take || (lower ? below(sv, sr, *v, *r) : above(sv, sr, *v, *r))) {
		*v = sv;
		*r = sr;
	}
}

static void prim_merge(struct tg_prim *d, const struct tg_prim *s)
{
	if (s->timed) {
		keep(&d->min_ns, &d->min_rank, s->min_ns, s->min_rank,
		     !d->timed, true);
		keep(&d->max_ns, &d->max_rank, s->max_ns, s->max_rank,
		     !d->timed, false);
	}
	if (s->ranks) {
		keep(&d->rmin_ns, &d->rmin_rank, s->rmin_ns, s->rmin_rank,
		     !d->ranks, true);
		keep(&d->rmax_ns, &d->rmax_rank, s->rmax_ns, s->rmax_rank,
		     !d->ranks, false);
	}
	d->flags |= s->flags;
	d->ranks = (uint32_t)(d->ranks + s->ranks < d->ranks ? UINT32_MAX :
			      d->ranks + s->ranks);
	d->calls = sum(d->calls, s->calls);
	d->timed = sum(d->timed, s->timed);
	d->time_ns = sum(d->time_ns, s->time_ns);
	d->bytes = sum(d->bytes, s->bytes);
}

/* @n records of @s merged into @a's, by name; the smallest names kept. */
static int prims_merge(struct tg_answer *a, const struct tg_prim *s,
		       uint32_t n)
{
	struct tg_prim out[2 * TG_PRIMS_MAX];
	uint32_t i = 0, j = 0, k = 0;
	int c;

	while (i < a->nr_prims || j < n) {
		/* Which goes first: @a's (< 0), @s's (> 0) or both. */
		c = i == a->nr_prims ? 1 : j == n ? -1 :
		    strcmp(a->prims[i].name, s[j].name);
		if (c < 0) {
			out[k++] = a->prims[i++];
		} else if (c > 0) {
			out[k++] = s[j++];
		} else {
			out[k] = a->prims[i++];
			prim_merge(&out[k++], &s[j++]);
		}
	}
	a->nr_prims = k < TG_PRIMS_MAX ? k : TG_PRIMS_MAX;
	memcpy(a->prims, out, (size_t)a->nr_prims * sizeof(*out));
	if (k == a->nr_prims)
		return 0;
	count_dropped(a, k - TG_PRIMS_MAX);
	return -ENOSPC;
}

int tg_add_prim(struct tg_answer *a, int32_t rank, const char *name,
		uint32_t flags, uint64_t calls, uint64_t timed,
		uint64_t min_ns, uint64_t max_ns, uint64_t bytes,
		uint64_t time_ns)
{
	struct tg_prim p;

	if (!name_ok(name) || rank < 0 || min_ns > max_ns ||
	    (!timed && (min_ns || max_ns)))
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	strcpy(p.name, name);
	p.flags = flags;
	p.ranks = 1;
	p.calls = calls;
	p.timed = timed;
	p.time_ns = time_ns;
	p.bytes = bytes;
	p.min_ns = min_ns;
	p.max_ns = max_ns;
	p.min_rank = p.max_rank = timed ? rank : -1;
	p.rmin_ns = p.rmax_ns = time_ns;
	p.rmin_rank = p.rmax_rank = rank;
	return prims_merge(a, &p, 1);
}

/* ---- histograms --------------------------------------------------- */

static int hist_cmp(const struct tg_hist *x, const struct tg_hist *y)
{
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

int tg_hist_down(struct tg_hist *h, unsigned int sub_bits)
{
	uint32_t i, k = 0, idx;

	if (sub_bits > h->sub_bits)
		return -EINVAL;
	/* The map is non-decreasing in the index: merged in place. */
	for (i = 0; i < h->nr; i++) {
		idx = bcs_hist_index(bcs_hist_lower(h->b[i].index, h->sub_bits),
				     sub_bits);
		if (k && h->b[k - 1].index == idx) {
			h->b[k - 1].count += h->b[i].count;
		} else {
			h->b[k].index = idx;
			h->b[k++].count = h->b[i].count;
		}
	}
	h->nr = k;
	h->sub_bits = (uint8_t)sub_bits;
	return 0;
}

/*
 * The buckets of @x and @y (at the same resolution) merged into a new
 * array *@out of *@nr.  Counts do not overflow: each histogram's sum to
 * its @count, and the sum of the counts is checked by the caller.
 */
static int buckets_merge(const struct tg_hist *x, const struct tg_hist *y,
			 struct tg_bucket **out, uint32_t *nr)
{
	struct tg_bucket *o = malloc(((size_t)x->nr + y->nr) * sizeof(*o) + 1);
	uint32_t i = 0, j = 0, k = 0;

	if (!o)
		return -ENOMEM;
	while (i < x->nr || j < y->nr) {
		if (j == y->nr || (i < x->nr && x->b[i].index < y->b[j].index))
			o[k++] = x->b[i++];
		else if (i == x->nr || y->b[j].index < x->b[i].index)
			o[k++] = y->b[j++];
		else {
			o[k] = x->b[i++];
			o[k++].count += y->b[j++].count;
		}
	}
	*out = o;
	*nr = k;
	return 0;
}

/* A copy of @s (its buckets too) at resolution @sub_bits into @d. */
static int hist_copy(struct tg_hist *d, const struct tg_hist *s,
		     unsigned int sub_bits)
{
	*d = *s;
	d->b = NULL;
	if (s->nr) {
		d->b = malloc((size_t)s->nr * sizeof(*d->b));
		if (!d->b)
			return -ENOMEM;
		memcpy(d->b, s->b, (size_t)s->nr * sizeof(*d->b));
	}
	return tg_hist_down(d, sub_bits);
}

static bool count_overflows(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b;
}

/* @s merged into @d, of the same kind and name: exact. */
static int hist_merge(struct tg_hist *d, const struct tg_hist *s)
{
	unsigned int sb = d->sub_bits < s->sub_bits ? d->sub_bits : s->sub_bits;
	struct tg_hist t;
	struct tg_bucket *b;
	uint32_t nr;
	int r;

	if (count_overflows(d->count, s->count))
		return -ERANGE;
	r = hist_copy(&t, s, sb);
	if (r)
		goto out;
	tg_hist_down(d, sb);
	r = buckets_merge(d, &t, &b, &nr);
	if (r)
		goto out;
	free(d->b);
	d->b = b;
	d->nr = nr;
	if (s->count) {
		if (!d->count || s->min < d->min)
			d->min = s->min;
		if (s->max > d->max)
			d->max = s->max;
	}
	d->count += s->count;
	if (filter_sum_u64(&d->sum, s->sum) || (s->flags & BCS_HIST_SATURATED))
		d->flags |= BCS_HIST_SATURATED;
out:
	free(t.b);
	return r;
}

/*
 * @n histograms of @s merged into @a's by kind and name (@s's buckets
 * copied).  The smallest keys kept, and from the end whole histograms
 * left out while the buckets pass TG_BUCKETS_MAX: counted in @dropped.
 */
static int hists_merge(struct tg_answer *a, const struct tg_hist *s,
		       uint32_t n)
{
	struct tg_hist out[2 * TG_HISTS_MAX];
	uint32_t i = 0, j = 0, k = 0, kept, total = 0;
	int c, r, ret = 0;

	while (i < a->nr_hists || j < n) {
		c = i == a->nr_hists ? 1 : j == n ? -1 :
		    hist_cmp(&a->hists[i], &s[j]);
		if (c < 0) {
			out[k++] = a->hists[i++];
			continue;
		}
		if (c > 0) {
			r = hist_copy(&out[k], &s[j], s[j].sub_bits);
			j++;
			if (r) {
				free(out[k].b);
				ret = r;
				continue;
			}
			k++;
			continue;
		}
		out[k] = a->hists[i++];
		r = hist_merge(&out[k++], &s[j++]);
		if (r == -ERANGE) {
			count_dropped(a, 1);
			ret = -ENOSPC;
		} else if (r) {
			ret = r;
		}
	}
	/* A prefix kept, canonical whatever the order of merges. */
	for (i = 0, kept = 0; i < k; i++) {
		if (i == kept && i < TG_HISTS_MAX &&
		    total + out[i].nr <= TG_BUCKETS_MAX) {
			total += out[i].nr;
			a->hists[kept++] = out[i];
			continue;
		}
		count_dropped(a, 1);
		free(out[i].b);
		if (!ret)
			ret = -ENOSPC;
	}
	a->nr_hists = kept;
	a->buckets = total;
	return ret;
}

/* Is @h a histogram as tgather.h has them? */
static bool hist_ok(const struct tg_hist *h)
{
	uint64_t total = 0;
	uint32_t i;

	if (!name_ok(h->name) || h->kind >= __TG_HIST_KIND_MAX ||
	    h->sub_bits > BCS_HIST_SUB_BITS_MAX ||
	    (h->flags & ~BCS_HIST_SATURATED) ||
	    h->nr > bcs_hist_buckets(h->sub_bits) || h->min > h->max)
		return false;
	for (i = 0; i < h->nr; i++) {
		if (!h->b[i].count || h->b[i].index >= bcs_hist_buckets(h->sub_bits) ||
		    (i && h->b[i].index <= h->b[i - 1].index) ||
		    count_overflows(total, h->b[i].count))
			return false;
		total += h->b[i].count;
	}
	if (total != h->count)
		return false;
	if (!h->count)
		return !h->min && !h->max && !h->sum;
	/* The extremes lie in the first and the last bucket. */
	return bcs_hist_index(h->min, h->sub_bits) == h->b[0].index &&
	       bcs_hist_index(h->max, h->sub_bits) == h->b[h->nr - 1].index;
}

int tg_add_hist(struct tg_answer *a, enum tg_kind kind, const char *name,
		const struct bcs_hist_header *h,
		const struct bcs_hist_bucket *b)
{
	struct tg_hist t;
	uint32_t i;
	int r;

	if (!name_ok(name) || h->magic != BCS_HIST_MAGIC ||
	    h->version != BCS_HIST_VERSION ||
	    h->sub_bits > BCS_HIST_SUB_BITS_MAX ||
	    h->nr_buckets > bcs_hist_buckets(h->sub_bits))
		return -EINVAL;
	memset(&t, 0, sizeof(t));
	strcpy(t.name, name);
	t.kind = (uint8_t)kind;
	t.sub_bits = h->sub_bits;
	t.flags = h->flags;
	t.count = h->count;
	t.sum = h->sum;
	t.min = h->min;
	t.max = h->max;
	t.nr = h->nr_buckets;
	if (t.nr) {
		t.b = malloc((size_t)t.nr * sizeof(*t.b));
		if (!t.b)
			return -ENOMEM;
		for (i = 0; i < t.nr; i++) {
			t.b[i].index = b[i].index;
			t.b[i].count = b[i].count;
		}
	}
	r = hist_ok(&t) ? hists_merge(a, &t, 1) : -EINVAL;
	free(t.b);
	return r;
}

int tg_merge(struct tg_answer *dst, const struct tg_answer *src)
{
	int r1, r2;

	if (dst->job != src->job || dst == src)
		return -EINVAL;
	dst->nodes = (uint32_t)(dst->nodes + (uint64_t)src->nodes > UINT32_MAX ?
				UINT32_MAX : dst->nodes + src->nodes);
	dst->missing = (uint32_t)(dst->missing + (uint64_t)src->missing >
				  UINT32_MAX ? UINT32_MAX :
				  dst->missing + src->missing);
	dst->ranks = (uint32_t)(dst->ranks + (uint64_t)src->ranks > UINT32_MAX ?
				UINT32_MAX : dst->ranks + src->ranks);
	count_dropped(dst, src->dropped);
	r1 = prims_merge(dst, src->prims, src->nr_prims);
	r2 = hists_merge(dst, src->hists, src->nr_hists);
	return r2 == -ENOMEM ? r2 : r1 ? r1 : r2;
}

/* ---- the wire ----------------------------------------------------- */

/* The fields of a record and of a histogram, in their order on the wire. */
#define PRIM_U64(x)	offsetof(struct tg_prim, x)
static const size_t prim_u64[] = {
	PRIM_U64(calls), PRIM_U64(timed), PRIM_U64(time_ns), PRIM_U64(bytes),
	PRIM_U64(min_ns), PRIM_U64(max_ns), PRIM_U64(rmin_ns),
	PRIM_U64(rmax_ns),
};
static const size_t prim_s32[] = {
	PRIM_U64(min_rank), PRIM_U64(max_rank), PRIM_U64(rmin_rank),
	PRIM_U64(rmax_rank),
};
static const size_t hist_u64[] = {
	offsetof(struct tg_hist, count), offsetof(struct tg_hist, sum),
	offsetof(struct tg_hist, min), offsetof(struct tg_hist, max),
};

#define FIELD(ptr, off, type)	((type *)((char *)(ptr) + (off)))
#define NR(a)			(sizeof(a) / sizeof((a)[0]))

long tg_encode(const struct tg_answer *a, uint8_t *buf, size_t size)
{
	struct bcsp_cur c = { .p = buf, .len = size, .ok = true };
	const struct tg_prim *p;
	const struct tg_hist *h;
	uint32_t i, k;

	put32(&c, TG_MAGIC);
	put16(&c, TG_VERSION);
	put16(&c, 0);
	put32(&c, a->job);
	put32(&c, a->nodes);
	put32(&c, a->missing);
	put32(&c, a->ranks);
	put64(&c, a->dropped);
	put32(&c, a->nr_prims);
	put32(&c, a->nr_hists);
	for (i = 0; i < a->nr_prims; i++) {
		p = &a->prims[i];
		put(&c, p->name, TG_NAME_LEN);
		put32(&c, p->flags);
		put32(&c, p->ranks);
		for (k = 0; k < NR(prim_u64); k++)
			put64(&c, *FIELD(p, prim_u64[k], const uint64_t));
		for (k = 0; k < NR(prim_s32); k++)
			put32(&c, (uint32_t)*FIELD(p, prim_s32[k],
						   const int32_t));
	}
	for (i = 0; i < a->nr_hists; i++) {
		h = &a->hists[i];
		put(&c, h->name, TG_NAME_LEN);
		put8(&c, h->kind);
		put8(&c, h->sub_bits);
		put8(&c, h->flags);
		put8(&c, 0);
		put32(&c, h->nr);
		for (k = 0; k < NR(hist_u64); k++)
			put64(&c, *FIELD(h, hist_u64[k], const uint64_t));
		for (k = 0; k < h->nr; k++) {
			put32(&c, h->b[k].index);
			put64(&c, h->b[k].count);
		}
	}
	return c.ok ? (long)c.off : -ENOSPC;
}

/* A record's extremes: none (rank -1, 0) without @have, else a rank. */
static bool extremes_ok(bool have, uint64_t lo, int32_t lo_rank, uint64_t hi,
			int32_t hi_rank)
{
	if (!have)
		return !lo && !hi && lo_rank == -1 && hi_rank == -1;
	return lo <= hi && lo_rank >= 0 && hi_rank >= 0;
}

static int decode_prim(struct bcsp_cur *c, struct tg_prim *p)
{
	uint32_t k;

	get(c, p->name, TG_NAME_LEN);
	p->flags = get32(c);
	p->ranks = get32(c);
	for (k = 0; k < NR(prim_u64); k++)
		*FIELD(p, prim_u64[k], uint64_t) = get64(c);
	for (k = 0; k < NR(prim_s32); k++)
		*FIELD(p, prim_s32[k], int32_t) = (int32_t)get32(c);
	if (!c->ok || !name_ok(p->name) || !p->ranks ||
	    !extremes_ok(p->timed, p->min_ns, p->min_rank, p->max_ns,
			 p->max_rank) ||
	    !extremes_ok(true, p->rmin_ns, p->rmin_rank, p->rmax_ns,
			 p->rmax_rank))
		return -EINVAL;
	return 0;
}

static int decode_hist(struct bcsp_cur *c, struct tg_hist *h, uint32_t *left)
{
	uint32_t k;

	get(c, h->name, TG_NAME_LEN);
	h->kind = get8(c);
	h->sub_bits = get8(c);
	h->flags = get8(c);
	if (get8(c))
		return -EINVAL;
	h->nr = get32(c);
	for (k = 0; k < NR(hist_u64); k++)
		*FIELD(h, hist_u64[k], uint64_t) = get64(c);
	/* Bounded before any allocation, and by the bytes there are. */
	if (!c->ok || h->nr > *left ||
	    (uint64_t)h->nr * TG_BUCKET_LEN > c->len - c->off)
		return -EINVAL;
	*left -= h->nr;
	if (h->nr) {
		h->b = malloc((size_t)h->nr * sizeof(*h->b));
		if (!h->b)
			return -ENOMEM;
	}
	for (k = 0; k < h->nr; k++) {
		h->b[k].index = get32(c);
		h->b[k].count = get64(c);
	}
	return c->ok && hist_ok(h) ? 0 : -EINVAL;
}

int tg_decode(const uint8_t *buf, size_t len, struct tg_answer *a)
{
	struct bcsp_cur c = { .p = (uint8_t *)buf, .len = len, .ok = true };
	uint32_t i, nr_prims, nr_hists, left = TG_BUCKETS_MAX;
	int r;

	tg_init(a, 0);
	if (len > TG_BLOB_MAX || get32(&c) != TG_MAGIC ||
	    get16(&c) != TG_VERSION || get16(&c))
		return -EINVAL;
	a->job = get32(&c);
	a->nodes = get32(&c);
	a->missing = get32(&c);
	a->ranks = get32(&c);
	a->dropped = get64(&c);
	nr_prims = get32(&c);
	nr_hists = get32(&c);
	if (!c.ok || nr_prims > TG_PRIMS_MAX || nr_hists > TG_HISTS_MAX)
		return -EINVAL;
	for (i = 0; i < nr_prims; i++) {
		if (decode_prim(&c, &a->prims[i]) ||
		    (i && strcmp(a->prims[i - 1].name, a->prims[i].name) >= 0))
			return -EINVAL;
		a->nr_prims++;
	}
	for (i = 0; i < nr_hists; i++) {
		/* Counted first, so that tg_free() frees its buckets. */
		a->nr_hists++;
		r = decode_hist(&c, &a->hists[i], &left);
		if (r)
			return r;
		if (i && hist_cmp(&a->hists[i - 1], &a->hists[i]) >= 0)
			return -EINVAL;
	}
	a->buckets = TG_BUCKETS_MAX - left;
	return c.off == len ? 0 : -EINVAL;
}

/* ---- one gather at one daemon ------------------------------------- */

uint64_t tg_wait_ms(uint32_t depth, uint32_t height, uint64_t step_ms)
{
	return (uint64_t)(height > depth ? height - depth + 1 : 1) * step_ms;
}

uint64_t tg_wait_late_ms(uint32_t depth, uint32_t height, uint64_t step_ms,
			 uint64_t late_ms)
{
	uint64_t wait = tg_wait_ms(depth, height, step_ms), cap;

	if (!depth)
		return wait;
	/* The parent's wait from the send, less half a step for the way up. */
	cap = tg_wait_ms(depth - 1, height, step_ms) - step_ms / 2;
	if (late_ms >= cap)
		return 0;
	return cap - late_ms < wait ? cap - late_ms : wait;
}

uint64_t tg_late_ms(uint64_t sent_ns, uint64_t now_ns)
{
	return now_ns > sent_ns ? (now_ns - sent_ns) / 1000000 : 0;
}

int tg_gather_start(struct tg_gather *g, uint32_t job, uint32_t nr_kids,
		    const uint32_t *idx, const uint32_t *subtree,
		    uint64_t until_ms)
{
	uint32_t i;

	memset(g, 0, sizeof(*g));
	tg_init(&g->acc, job);
	g->until_ms = until_ms;
	if (nr_kids) {
		g->kids = calloc(nr_kids, sizeof(*g->kids));
		if (!g->kids)
			return -ENOMEM;
	}
	g->nr_kids = nr_kids;
	for (i = 0; i < nr_kids; i++) {
		g->kids[i].idx = idx[i];
		g->kids[i].subtree = subtree[i];
	}
	return 0;
}

int tg_gather_adopt(struct tg_gather *g, uint32_t idx, uint32_t subtree)
{
	struct tg_kid *k;
	uint32_t i;

	for (i = 0; i < g->nr_kids; i++)
		if (g->kids[i].idx == idx)
			return -EEXIST;
	k = realloc(g->kids, (g->nr_kids + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	g->kids = k;
	k += g->nr_kids++;
	memset(k, 0, sizeof(*k));
	k->idx = idx;
	k->subtree = subtree;
	k->adopted = true;
	return 0;
}

int tg_gather_own(struct tg_gather *g, const struct tg_answer *own)
{
	if (g->own)
		return -EALREADY;
	g->own = true;
	return tg_merge(&g->acc, own);
}

static struct tg_kid *kid_of(struct tg_gather *g, uint32_t idx)
{
	struct tg_kid *k = g->kids, *end = g->kids + g->nr_kids;

	while (k < end && k->idx != idx)
		k++;
	return k < end ? k : NULL;
}

/* Child @k is done without an answer: its subtree is missing. */
static int kid_refused(struct tg_gather *g, struct tg_kid *k, int err)
{
	k->done = true;
	if (!k->adopted)	/* else counted on its path already */
		g->acc.missing += k->subtree;
	g->refused++;
	free(k->parts.buf);
	k->parts.buf = NULL;
	return err;
}

int tg_gather_part(struct tg_gather *g, uint32_t idx, uint32_t size,
		   uint32_t offset, uint32_t len, const uint8_t *data,
		   uint64_t now_ms)
{
	struct tg_kid *k = kid_of(g, idx);
	struct tg_parts *p;
	struct tg_answer got;
	uint32_t n, part;
	int r;

	if (!k || k->done)
		return -ENOENT;
	p = &k->parts;
	if (!size || size > TG_BLOB_MAX || offset % TG_PART_MAX ||
	    offset >= size ||
	    len != (size - offset < TG_PART_MAX ? size - offset : TG_PART_MAX) ||
	    (p->size && p->size != size))
		return kid_refused(g, k, -EINVAL);
	if (!p->size) {
		p->buf = malloc(size);
		if (!p->buf)
			return -ENOMEM;
		p->size = size;
	}
	k->heard_ms = now_ms;
	part = offset / TG_PART_MAX;
	if (p->got[part / 64] & 1ULL << (part % 64))
		return 0;	/* a copy */
	p->got[part / 64] |= 1ULL << (part % 64);
	memcpy(p->buf + offset, data, len);
	n = (size + TG_PART_MAX - 1) / TG_PART_MAX;
	if (++p->nr < n)
		return 0;
	r = tg_decode(p->buf, size, &got);
	if (!r && got.job != g->acc.job)
		r = -EINVAL;
	if (r) {
		tg_free(&got);
		return kid_refused(g, k, r);
	}
	k->done = true;
	if (k->adopted)
		g->credit += k->subtree;
	free(p->buf);
	p->buf = NULL;
	r = tg_merge(&g->acc, &got);
	tg_free(&got);
	return r == -ENOMEM ? r : 1;
}

bool tg_gather_ask(struct tg_gather *g, uint32_t i, uint64_t now_ms,
		   struct tg_want *w)
{
	struct tg_kid *k;
	uint32_t n, part;
	uint64_t last;

	if (i >= g->nr_kids)
		return false;
	k = &g->kids[i];
	if (k->done || k->asks >= TG_ASKS_MAX ||
	    now_ms + TG_ASK_LAST_MS > g->until_ms)
		return false;
	/* Silent for a gap since its last part, or the last ask. */
	last = k->heard_ms > k->asked_ms ? k->heard_ms : k->asked_ms;
	if (last && now_ms < last + TG_ASK_GAP_MS)
		return false;
	/* Nothing came: its whole answer, late in the wait only. */
	if (!k->parts.size && now_ms + TG_ASK_LATE_MS < g->until_ms)
		return false;
	memset(w, 0, sizeof(*w));
	w->idx = k->idx;
	w->size = k->parts.size;
	n = (w->size + TG_PART_MAX - 1) / TG_PART_MAX;
	for (part = 0; part < n; part++)
		if (!(k->parts.got[part / 64] & 1ULL << (part % 64)))
			w->parts[part / 64] |= 1ULL << (part % 64);
	k->asks++;
	k->asked_ms = now_ms;
	return true;
}

bool tg_gather_done(const struct tg_gather *g, uint64_t now_ms)
{
	uint32_t i;

	if (now_ms >= g->until_ms)
		return true;
	if (!g->own)
		return false;
	for (i = 0; i < g->nr_kids; i++)
		if (!g->kids[i].done)
			return false;
	return true;
}

const struct tg_answer *tg_gather_finish(struct tg_gather *g)
{
	uint32_t i;

	for (i = 0; i < g->nr_kids; i++) {
		if (g->kids[i].done)
			continue;
		g->kids[i].done = true;
		if (!g->kids[i].adopted)
			g->acc.missing += g->kids[i].subtree;
		free(g->kids[i].parts.buf);
		g->kids[i].parts.buf = NULL;
	}
	/* Covered here, and counted missing on the path to them. */
	g->acc.missing -= g->credit < g->acc.missing ? g->credit :
			  g->acc.missing;
	g->credit = 0;
	return &g->acc;
}

void tg_gather_free(struct tg_gather *g)
{
	uint32_t i;

	for (i = 0; i < g->nr_kids; i++)
		free(g->kids[i].parts.buf);
	free(g->kids);
	tg_free(&g->acc);
	memset(g, 0, sizeof(*g));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bcsd reductions: the filters that combine node reports at every
 * interior daemon of the tree, and the synchronisation of reports into
 * waves (filter.h, Documentation/filters.rst).  Pure: no I/O, no clock.
 */
#include <errno.h>
#include <string.h>

#include "libbcs/bcs.h"
#include "tree/filter.h"

/* ---- scalars ------------------------------------------------------ */

int filter_sum_u64(uint64_t *acc, uint64_t v)
{
	if (*acc > UINT64_MAX - v) {
		*acc = UINT64_MAX;
		return -ERANGE;
	}
	*acc += v;
	return *acc == UINT64_MAX ? -ERANGE : 0;
}

void filter_min_u64(uint64_t *acc, uint64_t v)
{
	if (v < *acc)
		*acc = v;
}

void filter_max_u64(uint64_t *acc, uint64_t v)
{
	if (v > *acc)
		*acc = v;
}

void filter_min_s64(int64_t *acc, int64_t v)
{
	if (v < *acc)
		*acc = v;
}

void filter_max_s64(int64_t *acc, int64_t v)
{
	if (v > *acc)
		*acc = v;
}

/* ---- average ------------------------------------------------------ */

int filter_avg_add(struct filter_avg *acc, uint64_t v)
{
	struct filter_avg one = { .sum = v, .count = 1 };

	return filter_avg_merge(acc, &one);
}

int filter_avg_merge(struct filter_avg *acc, const struct filter_avg *v)
{
	/* A count at 2^64 - 1 is as wrong as a sum: saturated too. */
	if (filter_sum_u64(&acc->count, v->count))
		acc->saturated = 1;
	if (filter_sum_u64(&acc->sum, v->sum) || v->saturated)
		acc->saturated = 1;
	return acc->saturated ? -ERANGE : 0;
}

int filter_avg_result(const struct filter_avg *a, uint64_t *mean)
{
	if (!a->count)
		return -ENODATA;
	if (a->saturated)
		return -ERANGE;
	*mean = a->sum / a->count;
	return 0;
}

/* ---- concatenation ------------------------------------------------ */

static int list_cmp(const struct filter_list *l, const void *a, const void *b)
{
	return l->cmp ? l->cmp(a, b) : memcmp(a, b, l->item_size);
}

static unsigned char *item(const struct filter_list *l, uint32_t i)
{
	return (unsigned char *)l->items + (size_t)i * l->item_size;
}

int filter_cmp_u32(const void *a, const void *b)
{
	uint32_t x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x < y ? -1 : x > y;
}

int filter_list_init(struct filter_list *l, void *buf, uint32_t cap,
		     uint32_t item_size, int (*cmp)(const void *a,
						    const void *b))
{
	if (!l || !item_size || (!buf && cap))
		return -EINVAL;
	l->items = buf;
	l->cap = cap;
	l->item_size = item_size;
	l->nr = 0;
	l->overflow = 0;
	l->cmp = cmp;
	return 0;
}

int filter_list_push(struct filter_list *l, const void *it)
{
	uint32_t lo = 0, hi, mid;
	int ret = 0;

	if (l->nr == l->cap) {
		/* Full: @it or the largest kept goes to the overflow. */
		filter_sum_u64(&l->overflow, 1);
		if (!l->cap || list_cmp(l, it, item(l, l->nr - 1)) >= 0)
			return -ENOSPC;
		l->nr--;
		ret = -ENOSPC;
	}
	/* After the equal ones: the first item greater than @it. */
	hi = l->nr;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (list_cmp(l, item(l, mid), it) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(item(l, lo + 1), item(l, lo),
		(size_t)(l->nr - lo) * l->item_size);
	memcpy(item(l, lo), it, l->item_size);
	l->nr++;
	return ret;
}

int filter_list_merge(struct filter_list *dst, const struct filter_list *src)
{
	uint32_t i = 0, j = 0, keep, k;
	uint64_t in, dropped;

	if (!dst || !src || dst == src || dst->item_size != src->item_size ||
	    dst->cmp != src->cmp)
		return -EINVAL;
	in = (uint64_t)dst->nr + src->nr;
	keep = in < dst->cap ? (uint32_t)in : dst->cap;
	/* How many of each are among the @keep smallest of both. */
	while (i + j < keep) {
		if (j == src->nr ||
		    (i < dst->nr &&
		     list_cmp(dst, item(dst, i), item(src, j)) <= 0))
			i++;
		else
			j++;
	}
	/* From the end, so that nothing of @dst is overwritten unread. */
	k = keep;
	while (j > 0) {
		if (i > 0 && list_cmp(dst, item(dst, i - 1),
				      item(src, j - 1)) > 0) {
			memmove(item(dst, k - 1), item(dst, i - 1),
				dst->item_size);
			i--;
		} else {
			memcpy(item(dst, k - 1), item(src, j - 1),
			       dst->item_size);
			j--;
		}
		k--;
	}
	dropped = in - keep;
	dst->nr = keep;
	filter_sum_u64(&dst->overflow, src->overflow);
	filter_sum_u64(&dst->overflow, dropped);
	return dropped ? -ENOSPC : 0;
}

/* ---- sets of nodes ------------------------------------------------ */

void filter_nodeset_clear(struct filter_nodeset *s)
{
	memset(s, 0, sizeof(*s));
}

int filter_nodeset_add(struct filter_nodeset *s, uint32_t node)
{
	uint64_t bit;

	if (node >= BCSD_MAX_NODES)
		return -EINVAL;
	bit = 1ULL << (node % 64);
	if (s->bits[node / 64] & bit)
		return -EEXIST;
	s->bits[node / 64] |= bit;
	return 0;
}

void filter_nodeset_del(struct filter_nodeset *s, uint32_t node)
{
	if (node < BCSD_MAX_NODES)
		s->bits[node / 64] &= ~(1ULL << (node % 64));
}

bool filter_nodeset_has(const struct filter_nodeset *s, uint32_t node)
{
	return node < BCSD_MAX_NODES &&
	       (s->bits[node / 64] >> (node % 64)) & 1;
}

uint32_t filter_nodeset_count(const struct filter_nodeset *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < FILTER_NODE_WORDS; i++)
		n += (uint32_t)__builtin_popcountll(s->bits[i]);
	return n;
}

void filter_nodeset_union(struct filter_nodeset *dst,
			  const struct filter_nodeset *src)
{
	uint32_t i;

	for (i = 0; i < FILTER_NODE_WORDS; i++)
		dst->bits[i] |= src->bits[i];
}

bool filter_nodeset_meet(const struct filter_nodeset *a,
			 const struct filter_nodeset *b)
{
	uint32_t i;

	for (i = 0; i < FILTER_NODE_WORDS; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}

bool filter_nodeset_within(const struct filter_nodeset *a,
			   const struct filter_nodeset *b)
{
	uint32_t i;

	for (i = 0; i < FILTER_NODE_WORDS; i++)
		if (a->bits[i] & ~b->bits[i])
			return false;
	return true;
}

/* The nodes of @a that are in @b too. */
static uint32_t nodeset_count_both(const struct filter_nodeset *a,
				   const struct filter_nodeset *b)
{
	uint32_t i, n = 0;

	for (i = 0; i < FILTER_NODE_WORDS; i++)
		n += (uint32_t)__builtin_popcountll(a->bits[i] & b->bits[i]);
	return n;
}

int filter_nodeset_format(const struct filter_nodeset *s, char *buf,
			  size_t len)
{
	uint32_t n = 0, first;
	size_t at = 0;
	int w;

	if (!buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	while (n < BCSD_MAX_NODES) {
		if (!filter_nodeset_has(s, n)) {
			n++;
			continue;
		}
		first = n;
		while (n + 1 < BCSD_MAX_NODES && filter_nodeset_has(s, n + 1))
			n++;
		if (first == n)
			w = snprintf(buf + at, len - at, "%s%u", at ? ", " : "",
				     first);
		else
			w = snprintf(buf + at, len - at, "%s%u-%u",
				     at ? ", " : "", first, n);
		if (w < 0 || (size_t)w >= len - at) {
			/* Cut short: say so where there is room. */
			if (len >= 4)
				strcpy(buf + (at + 4 <= len ? at : len - 4),
				       "...");
			else
				buf[at < len ? at : len - 1] = '\0';
			return -ENOSPC;
		}
		at += (size_t)w;
		n++;
	}
	return 0;
}

/* ---- equivalence classes ------------------------------------------ */

void filter_eq_init(struct filter_eq *eq)
{
	memset(eq, 0, sizeof(*eq));
}

/*
 * The nodes @nodes (@nr of them, in no class of @eq yet) with value
 * @value into @eq: a class of their own or with the same value, kept
 * among the FILTER_EQ_CLASSES_MAX smallest values; -ENOSPC when nodes
 * went to @other.
 */
static int eq_put(struct filter_eq *eq, uint64_t value,
		  const struct filter_nodeset *nodes, uint32_t nr)
{
	struct filter_eq_class *c;
	uint32_t i, at;
	int ret = 0;

	for (at = 0; at < eq->nr && eq->cls[at].value < value; at++)
		;
	if (at < eq->nr && eq->cls[at].value == value) {
		c = &eq->cls[at];
		filter_nodeset_union(&c->nodes, nodes);
		c->nr += nr;
		return 0;
	}
	if (eq->nr == FILTER_EQ_CLASSES_MAX) {
		/* Full: the largest value, this one or the last, goes. */
		if (at == eq->nr) {
			filter_nodeset_union(&eq->other, nodes);
			eq->nr_other += nr;
			return -ENOSPC;
		}
		c = &eq->cls[eq->nr - 1];
		filter_nodeset_union(&eq->other, &c->nodes);
		eq->nr_other += c->nr;
		eq->nr--;
		ret = -ENOSPC;
	}
	for (i = eq->nr; i > at; i--)
		eq->cls[i] = eq->cls[i - 1];
	c = &eq->cls[at];
	memset(c, 0, sizeof(*c));
	c->value = value;
	c->nodes = *nodes;
	c->nr = nr;
	eq->nr++;
	return ret;
}

int filter_eq_add(struct filter_eq *eq, uint32_t node, uint64_t value)
{
	struct filter_nodeset one;

	if (node >= BCSD_MAX_NODES)
		return -EINVAL;
	if (filter_nodeset_has(&eq->all, node))
		return -EEXIST;
	filter_nodeset_clear(&one);
	filter_nodeset_add(&one, node);
	filter_nodeset_add(&eq->all, node);
	return eq_put(eq, value, &one, 1);
}

int filter_eq_merge(struct filter_eq *dst, const struct filter_eq *src)
{
	uint32_t i;
	int ret = 0;

	if (dst == src || filter_nodeset_meet(&dst->all, &src->all))
		return -EEXIST;
	for (i = 0; i < src->nr && i < FILTER_EQ_CLASSES_MAX; i++)
		if (eq_put(dst, src->cls[i].value, &src->cls[i].nodes,
			   src->cls[i].nr))
			ret = -ENOSPC;
	filter_nodeset_union(&dst->other, &src->other);
	dst->nr_other += src->nr_other;
	filter_nodeset_union(&dst->all, &src->all);
	return ret;
}

/* Does class @a come before @b: larger first, then smaller value. */
static bool eq_before(const struct filter_eq_class *a,
		      const struct filter_eq_class *b)
{
	return a->nr != b->nr ? a->nr > b->nr : a->value < b->value;
}

uint32_t filter_eq_sorted(const struct filter_eq *eq,
			  const struct filter_eq_class **out, uint32_t max)
{
	const struct filter_eq_class *all[FILTER_EQ_CLASSES_MAX], *c;
	uint32_t i, j, n = eq->nr < FILTER_EQ_CLASSES_MAX ? eq->nr :
			   FILTER_EQ_CLASSES_MAX;

	/* Insertion sort: a handful of classes. */
	for (i = 0; i < n; i++) {
		c = &eq->cls[i];
		for (j = i; j > 0 && eq_before(c, all[j - 1]); j--)
			all[j] = all[j - 1];
		all[j] = c;
	}
	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
		out[i] = all[i];
	return n;
}

/* ---- histograms --------------------------------------------------- */

int filter_hist_merge(struct bcs_hist_header **acc,
		      const struct bcs_hist_header *h)
{
	return bcs_hist_add(acc, h);
}

/* ---- records ------------------------------------------------------ */

/* The bytes of a field of @op. */
static size_t op_size(enum filter_op op)
{
	return op == FILTER_OP_AVG ? sizeof(struct filter_avg) :
	       sizeof(uint64_t);
}

int filter_record_check(const struct filter_record *r)
{
	const struct filter_field *f;
	uint32_t i;

	if (!r || !r->fields || !r->nr_fields ||
	    r->nr_fields > FILTER_FIELDS_MAX)
		return -EINVAL;
	for (i = 0; i < r->nr_fields; i++) {
		f = &r->fields[i];
		if ((unsigned int)f->op >= FILTER_OPS ||
		    f->offset > r->size ||
		    op_size(f->op) > r->size - f->offset)
			return -EINVAL;
	}
	return 0;
}

int filter_record_init(const struct filter_record *r, void *acc,
		       const void *first)
{
	const struct filter_field *f;
	unsigned char *a = acc;
	struct filter_avg avg = FILTER_AVG_INIT;
	uint64_t u;
	int64_t s;
	uint32_t i;

	if (filter_record_check(r) || !acc)
		return -EINVAL;
	for (i = 0; i < r->nr_fields; i++) {
		f = &r->fields[i];
		switch (f->op) {
		case FILTER_OP_KEY_U64:
			u = 0;
			if (first)
				memcpy(&u, (const unsigned char *)first +
				       f->offset, sizeof(u));
			memcpy(a + f->offset, &u, sizeof(u));
			break;
		case FILTER_OP_SUM_U64:
		case FILTER_OP_MAX_U64:
			u = 0;
			memcpy(a + f->offset, &u, sizeof(u));
			break;
		case FILTER_OP_MIN_U64:
			u = FILTER_MIN_U64_INIT;
			memcpy(a + f->offset, &u, sizeof(u));
			break;
		case FILTER_OP_MIN_S64:
			s = FILTER_MIN_S64_INIT;
			memcpy(a + f->offset, &s, sizeof(s));
			break;
		case FILTER_OP_MAX_S64:
			s = FILTER_MAX_S64_INIT;
			memcpy(a + f->offset, &s, sizeof(s));
			break;
		case FILTER_OP_AVG:
			memcpy(a + f->offset, &avg, sizeof(avg));
			break;
		case FILTER_OPS:
			return -EINVAL;
		}
	}
	return 0;
}

int filter_record_reduce(const struct filter_record *r, void *dst,
			 const void *src)
{
	const unsigned char *b = src;
	const struct filter_field *f;
	unsigned char *a = dst;
	struct filter_avg x, y;
	uint64_t u, v;
	int64_t s, t;
	uint32_t i;
	int ret = 0;

	if (filter_record_check(r) || !dst || !src)
		return -EINVAL;
	/* The keys first, so that a mismatch changes nothing. */
	for (i = 0; i < r->nr_fields; i++) {
		f = &r->fields[i];
		if (f->op == FILTER_OP_KEY_U64 &&
		    memcmp(a + f->offset, b + f->offset, sizeof(uint64_t)))
			return -EINVAL;
	}
	for (i = 0; i < r->nr_fields; i++) {
		f = &r->fields[i];
		switch (f->op) {
		case FILTER_OP_KEY_U64:
		case FILTER_OPS:
			break;
		case FILTER_OP_SUM_U64:
		case FILTER_OP_MIN_U64:
		case FILTER_OP_MAX_U64:
			memcpy(&u, a + f->offset, sizeof(u));
			memcpy(&v, b + f->offset, sizeof(v));
			if (f->op == FILTER_OP_SUM_U64) {
				if (filter_sum_u64(&u, v))
					ret = -ERANGE;
			} else if (f->op == FILTER_OP_MIN_U64) {
				filter_min_u64(&u, v);
			} else {
				filter_max_u64(&u, v);
			}
			memcpy(a + f->offset, &u, sizeof(u));
			break;
		case FILTER_OP_MIN_S64:
		case FILTER_OP_MAX_S64:
			memcpy(&s, a + f->offset, sizeof(s));
			memcpy(&t, b + f->offset, sizeof(t));
			if (f->op == FILTER_OP_MIN_S64)
				filter_min_s64(&s, t);
			else
				filter_max_s64(&s, t);
			memcpy(a + f->offset, &s, sizeof(s));
			break;
		case FILTER_OP_AVG:
			memcpy(&x, a + f->offset, sizeof(x));
			memcpy(&y, b + f->offset, sizeof(y));
			if (filter_avg_merge(&x, &y))
				ret = -ERANGE;
			memcpy(a + f->offset, &x, sizeof(x));
			break;
		}
	}
	return ret;
}

/* ---- synchronisation ---------------------------------------------- */

int filter_sync_init(struct filter_sync *s, enum filter_sync_mode mode,
		     uint64_t timeout_ms,
		     const struct filter_nodeset *expected)
{
	if (!s || !expected || (mode != FILTER_SYNC_WAIT_ALL &&
				mode != FILTER_SYNC_TIMEOUT &&
				mode != FILTER_SYNC_DONT_WAIT) ||
	    (mode == FILTER_SYNC_TIMEOUT && !timeout_ms))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->timeout_ms = mode == FILTER_SYNC_TIMEOUT ? timeout_ms : 0;
	s->expected = *expected;
	return 0;
}

/* Record that wave @id went up. */
static void sync_sent(struct filter_sync *s, uint64_t id)
{
	if (!s->sent_any || id > s->sent_high)
		s->sent_high = id;
	s->sent_any = true;
}

int filter_sync_packet(struct filter_sync *s, uint32_t child, uint64_t wave,
		       uint64_t now_ms, struct filter_sync_res *res)
{
	struct filter_wave *w;
	unsigned int i, slot = FILTER_WAVES_MAX;

	if (!s || !res || child >= BCSD_MAX_NODES)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	s->stats.packets++;
	if (!filter_nodeset_has(&s->expected, child)) {
		s->stats.unknown++;
		res->verdict = FILTER_REFUSED;
		return 0;
	}
	if (s->mode == FILTER_SYNC_DONT_WAIT) {
		s->stats.alone++;
		res->verdict = FILTER_ALONE;
		return 0;
	}
	for (i = 0; i < FILTER_WAVES_MAX; i++) {
		w = &s->waves[i];
		if (!w->used || w->id != wave)
			continue;
		if (filter_nodeset_add(&w->got, child)) {
			s->stats.duplicates++;
			res->verdict = FILTER_REFUSED;
			return 0;
		}
		s->stats.taken++;
		res->verdict = FILTER_TAKE;
		res->slot = i;
		return 0;
	}
	if (s->sent_any && wave <= s->sent_high) {
		s->stats.late++;
		s->stats.alone++;
		res->verdict = FILTER_ALONE;
		res->late = true;
		return 0;
	}
	/* A new wave: a free slot, else the oldest wave's. */
	for (i = 0; i < FILTER_WAVES_MAX; i++) {
		w = &s->waves[i];
		if (!w->used) {
			slot = i;
			break;
		}
		if (slot == FILTER_WAVES_MAX ||
		    w->first_ms < s->waves[slot].first_ms ||
		    (w->first_ms == s->waves[slot].first_ms &&
		     w->id < s->waves[slot].id))
			slot = i;
	}
	w = &s->waves[slot];
	if (w->used) {
		res->flushed = true;
		res->flushed_wave = w->id;
		s->stats.flushed++;
		sync_sent(s, w->id);
	}
	memset(w, 0, sizeof(*w));
	w->used = true;
	w->id = wave;
	w->first_ms = now_ms;
	filter_nodeset_add(&w->got, child);
	s->stats.taken++;
	res->verdict = FILTER_TAKE;
	res->slot = slot;
	res->fresh = true;
	return 0;
}

/* Is wave @w ready at @now_ms, and why. */
static bool wave_ready(const struct filter_sync *s,
		       const struct filter_wave *w, uint64_t now_ms,
		       enum filter_wave_why *why)
{
	if (filter_nodeset_within(&s->expected, &w->got)) {
		*why = FILTER_WAVE_COMPLETE;
		return true;
	}
	if (s->mode == FILTER_SYNC_TIMEOUT && now_ms >= w->first_ms &&
	    now_ms - w->first_ms >= s->timeout_ms) {
		*why = FILTER_WAVE_TIMEOUT;
		return true;
	}
	return false;
}

int filter_sync_ready(struct filter_sync *s, uint64_t now_ms,
		      struct filter_sync_out *out)
{
	enum filter_wave_why why, best_why = FILTER_WAVE_COMPLETE;
	unsigned int i, best = FILTER_WAVES_MAX;
	struct filter_wave *w;

	if (!s || !out)
		return 0;
	for (i = 0; i < FILTER_WAVES_MAX; i++) {
		w = &s->waves[i];
		if (!w->used || !wave_ready(s, w, now_ms, &why))
			continue;
		if (best == FILTER_WAVES_MAX || w->id < s->waves[best].id) {
			best = i;
			best_why = why;
		}
	}
	if (best == FILTER_WAVES_MAX)
		return 0;
	w = &s->waves[best];
	out->wave = w->id;
	out->slot = best;
	out->why = best_why;
	out->got = filter_nodeset_count(&w->got);
	out->missing = filter_nodeset_count(&s->expected) -
		       nodeset_count_both(&s->expected, &w->got);
	if (best_why == FILTER_WAVE_COMPLETE)
		s->stats.complete++;
	else
		s->stats.timed_out++;
	sync_sent(s, w->id);
	w->used = false;
	return 1;
}

int filter_sync_child_dead(struct filter_sync *s, uint32_t child)
{
	if (!s || child >= BCSD_MAX_NODES)
		return -EINVAL;
	filter_nodeset_del(&s->expected, child);
	return 0;
}

int filter_sync_child_add(struct filter_sync *s, uint32_t child)
{
	if (!s || child >= BCSD_MAX_NODES)
		return -EINVAL;
	filter_nodeset_add(&s->expected, child);
	return 0;
}

int filter_sync_next_deadline(const struct filter_sync *s, uint64_t *at_ms)
{
	uint64_t at, best = UINT64_MAX;
	unsigned int i;
	int found = 0;

	if (!s || !at_ms || s->mode != FILTER_SYNC_TIMEOUT)
		return 0;
	for (i = 0; i < FILTER_WAVES_MAX; i++) {
		if (!s->waves[i].used)
			continue;
		at = s->waves[i].first_ms;
		filter_sum_u64(&at, s->timeout_ms);
		if (!found || at < best)
			best = at;
		found = 1;
	}
	if (found)
		*at_ms = best;
	return found;
}

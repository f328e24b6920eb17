// SPDX-License-Identifier: GPL-2.0
/*
 * bcsd reductions: the filters that combine node reports at every
 * interior daemon of the tree, and the waves that gather them
 * (filter.h, Documentation/filters.rst).  Pure: no I/O, no clock.
 */
#include <errno.h>
#include <string.h>

#include "tree/filter.h"

/* ---- the saturating sum ------------------------------------------- */

int filter_sum_u64(uint64_t *acc, uint64_t v)
{
	if (*acc > UINT64_MAX - v) {
		*acc = UINT64_MAX;
		return -ERANGE;
	}
	*acc += v;
	return *acc == UINT64_MAX ? -ERANGE : 0;
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

/* ---- waves -------------------------------------------------------- */

enum filter_wave_step filter_wave_step(const struct filter_wave *w,
				       uint64_t id)
{
	if (!w->used)
		return FILTER_WAVE_NEW;
	return w->id == id ? FILTER_WAVE_SAME : FILTER_WAVE_OTHER;
}

void filter_wave_start(struct filter_wave *w, uint64_t id, uint64_t now_ms)
{
	w->used = true;
	w->id = id;
	w->first_ms = now_ms;
}

void filter_wave_end(struct filter_wave *w)
{
	w->used = false;
}

bool filter_wave_complete(uint64_t got, uint64_t expect)
{
	return got >= expect;
}

bool filter_wave_due(const struct filter_wave *w, uint64_t now_ms,
		     uint64_t wait_ms)
{
	return w->used && now_ms - w->first_ms >= wait_ms;
}

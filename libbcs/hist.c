// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: arithmetic on whole histograms of the format of
 * <linux/bcs_hist.h> (header, then the non-empty buckets in increasing
 * index): whether a buffer is one, and the sum of two.  One home for the
 * merge that bcsstat (merging the dumps of several nodes) and bcsd
 * (merging the reports of its children, daemon/tree/filter.c) both need.
 *
 * Histograms of different resolutions are added at the coarser one: every
 * bucket of a finer log-linear histogram lies inside one bucket of a
 * coarser one (both split the same powers of two), so the result is exact
 * at that resolution, and the sum is associative and commutative.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

int bcs__hist_valid(const struct bcs_hist_header *h)
{
	const struct bcs_hist_bucket *b = (const void *)(h + 1);
	uint32_t i;

	if (h->magic != BCS_HIST_MAGIC || h->version != BCS_HIST_VERSION ||
	    h->sub_bits > BCS_HIST_SUB_BITS_MAX ||
	    h->nr_buckets > bcs_hist_buckets(h->sub_bits))
		return 0;
	for (i = 0; i < h->nr_buckets; i++)
		if (b[i].index >= bcs_hist_buckets(h->sub_bits) ||
		    (i && b[i].index <= b[i - 1].index))
			return 0;
	return 1;
}

struct bcs_hist_header *bcs_hist_alloc(uint32_t nr)
{
	struct bcs_hist_header *h;

	h = calloc(1, sizeof(*h) + (size_t)nr * sizeof(struct bcs_hist_bucket));
	if (h) {
		h->magic = BCS_HIST_MAGIC;
		h->version = BCS_HIST_VERSION;
	}
	return h;
}

static uint64_t add_sat(uint64_t a, uint64_t b, int *sat)
{
	if (a > UINT64_MAX - b) {
		if (sat)
			*sat = 1;
		return UINT64_MAX;
	}
	return a + b;
}

/* A copy of @src at resolution @sub_bits, no finer than its own. */
static struct bcs_hist_header *hist_rebucket(const struct bcs_hist_header *src,
					     unsigned int sub_bits)
{
	const struct bcs_hist_bucket *b = bcs_hist_bucket_array(src);
	struct bcs_hist_header *h = bcs_hist_alloc(src->nr_buckets);
	struct bcs_hist_bucket *o;
	uint32_t i, k = 0, idx;

	if (!h)
		return NULL;
	*h = *src;
	h->sub_bits = (uint8_t)sub_bits;
	o = bcs_hist_bucket_array(h);
	for (i = 0; i < src->nr_buckets; i++) {
		idx = bcs_hist_index(bcs_hist_lower(b[i].index, src->sub_bits),
				     sub_bits);
		if (k && o[k - 1].index == idx) {
			o[k - 1].count = add_sat(o[k - 1].count, b[i].count,
						 NULL);
		} else {
			o[k].index = idx;
			o[k].reserved0 = 0;
			o[k++].count = b[i].count;
		}
	}
	h->nr_buckets = k;
	return h;
}

/* @a plus @b, both of resolution @sub, into a new histogram. */
static struct bcs_hist_header *hist_sum(const struct bcs_hist_header *a,
					const struct bcs_hist_header *b,
					unsigned int sub)
{
	const struct bcs_hist_bucket *ba = bcs_hist_bucket_array(a);
	const struct bcs_hist_bucket *bb = bcs_hist_bucket_array(b);
	struct bcs_hist_header *h;
	struct bcs_hist_bucket *o;
	uint32_t i = 0, j = 0, k = 0;
	int sat = 0;

	h = bcs_hist_alloc(a->nr_buckets + b->nr_buckets);
	if (!h)
		return NULL;
	o = bcs_hist_bucket_array(h);
	while (i < a->nr_buckets || j < b->nr_buckets) {
		if (j == b->nr_buckets ||
		    (i < a->nr_buckets && ba[i].index < bb[j].index)) {
			o[k++] = ba[i++];
		} else if (i == a->nr_buckets || bb[j].index < ba[i].index) {
			o[k++] = bb[j++];
		} else {
			o[k].index = ba[i].index;
			o[k++].count = add_sat(ba[i++].count, bb[j++].count,
					       NULL);
		}
	}
	h->sub_bits = (uint8_t)sub;
	h->nr_buckets = k;
	h->count = add_sat(a->count, b->count, NULL);
	h->sum = add_sat(a->sum, b->sum, &sat);
	h->flags = (uint8_t)((a->flags | b->flags) |
			     (sat ? BCS_HIST_SATURATED : 0));
	if (!a->count || !b->count) {
		h->min = a->count ? a->min : b->min;
		h->max = a->count ? a->max : b->max;
	} else {
		h->min = a->min < b->min ? a->min : b->min;
		h->max = a->max > b->max ? a->max : b->max;
	}
	return h;
}

int bcs_hist_coarsen(const struct bcs_hist_header *src, unsigned int sub_bits,
		     struct bcs_hist_header **out)
{
	if (!src || !out || !bcs__hist_valid(src) || sub_bits > src->sub_bits)
		return -EINVAL;
	*out = hist_rebucket(src, sub_bits);
	return *out ? 0 : -ENOMEM;
}

int bcs_hist_add(struct bcs_hist_header **dst,
		 const struct bcs_hist_header *src)
{
	struct bcs_hist_header *a = NULL, *b, *h;
	unsigned int sub;

	if (!dst || (*dst && !bcs__hist_valid(*dst)) ||
	    (src && !bcs__hist_valid(src)))
		return -EINVAL;
	if (!src)
		return 0;
	sub = *dst && (*dst)->sub_bits < src->sub_bits ? (*dst)->sub_bits :
	      src->sub_bits;
	b = hist_rebucket(src, sub);
	if (!b)
		return -ENOMEM;
	if (!*dst) {
		*dst = b;
		return 0;
	}
	a = hist_rebucket(*dst, sub);
	h = a ? hist_sum(a, b, sub) : NULL;
	free(a);
	free(b);
	if (!h)
		return -ENOMEM;
	free(*dst);
	*dst = h;
	return 0;
}

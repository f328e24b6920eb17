// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the decoder of the answers of gathers reduced in the
 * tree (tgather.c), which a daemon runs on what its children send.  The
 * input is an encoded answer.  An accepted one must be canonical (encoded
 * again, the same bytes), within the bounds, and merge with itself and
 * with the empty answer into answers that encode and decode again: the
 * identity gives the same bytes, and merging it with itself doubles the
 * nodes (saturating) and keeps the names.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tree/tgather.h"
#include "fuzz/fuzz_assert.h"

static uint8_t out[TG_BLOB_MAX], again[TG_BLOB_MAX];
static struct tg_answer a, b, c;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	long len, len2;
	uint32_t i;
	int r;

	r = tg_decode(data, size, &a);
	if (r) {
		FUZZ_ASSERT(r == -EINVAL || r == -ENOMEM);
		tg_free(&a);
		return 0;
	}
	FUZZ_ASSERT(a.nr_prims <= TG_PRIMS_MAX && a.nr_hists <= TG_HISTS_MAX &&
		    a.buckets <= TG_BUCKETS_MAX);
	len = tg_encode(&a, out, sizeof(out));
	FUZZ_ASSERT(len == (long)size && !memcmp(out, data, size));

	/* The identity: the same answer. */
	tg_init(&b, a.job);
	FUZZ_ASSERT(!tg_merge(&b, &a));
	len2 = tg_encode(&b, again, sizeof(again));
	FUZZ_ASSERT(len2 == len && !memcmp(again, out, (size_t)len));
	tg_free(&b);

	/* With itself: a valid answer again, the same names. */
	FUZZ_ASSERT(!tg_decode(out, (size_t)len, &c));
	r = tg_merge(&c, &a);
	FUZZ_ASSERT(r == 0 || r == -ENOSPC);
	FUZZ_ASSERT(c.nr_prims == a.nr_prims);
	for (i = 0; i < c.nr_prims; i++)
		FUZZ_ASSERT(!strcmp(c.prims[i].name, a.prims[i].name));
	len2 = tg_encode(&c, again, sizeof(again));
	FUZZ_ASSERT(len2 > 0);
	tg_free(&c);
	FUZZ_ASSERT(!tg_decode(again, (size_t)len2, &c));
	tg_free(&c);
	tg_free(&a);
	return 0;
}

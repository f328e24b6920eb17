// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the reader of libbcsmpi's statistics files
 * (libbcsmpi/mpifile.c), which bcsd runs as root on the files a job's
 * processes write in its mpi_dir (collect.c) and bcsstat on the
 * summaries other nodes send.  The input is a file.  A refused one is
 * refused with a message that names it.  An accepted one must have every
 * record's name terminated and every histogram it points to readable;
 * its summary must be accepted in turn, as a summary, with the process
 * records and those of the primitives called, in order, no histogram.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libbcsmpi/mpifile.h"
#include "fuzz/fuzz_assert.h"

static void check_hist(const struct bcs_mpi_stats *st, uint64_t off)
{
	struct bcs_hist_header *h;
	const struct bcs_hist_bucket *b;
	uint32_t i;

	if (!off)
		return;
	FUZZ_ASSERT(!bcs_mpi_stats_hist(st, off, &h));
	FUZZ_ASSERT(h->sub_bits <= BCS_HIST_SUB_BITS_MAX);
	FUZZ_ASSERT(h->nr_buckets <= bcs_hist_buckets(h->sub_bits));
	b = (const void *)(h + 1);
	for (i = 0; i < h->nr_buckets; i++)
		FUZZ_ASSERT(b[i].count);
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bcs_mpi_stats st, sum;
	char err[256];
	uint32_t i, k;
	void *copy, *out;
	size_t len;

	copy = malloc(size ? size : 1);
	FUZZ_ASSERT(copy);
	memcpy(copy, data, size);
	if (bcs_mpi_stats_parse(copy, size, "in", &st, err, sizeof(err))) {
		FUZZ_ASSERT(!strncmp(err, "in: ", 4));
		return 0;
	}
	FUZZ_ASSERT(st.hdr && st.prims && st.hdr->nr_prims >= 2);
	for (i = 0; i < st.hdr->nr_prims; i++) {
		const struct bcs_mpi_prim *p = &st.prims[i];

		FUZZ_ASSERT(memchr(p->name, 0, sizeof(p->name)));
		(void)bcs_mpi_prim_time(p);
		check_hist(&st, p->lat_hist_off);
		check_hist(&st, p->size_hist_off);
	}
	FUZZ_ASSERT(!bcs_mpi_stats_summary(&st, &out, &len));
	FUZZ_ASSERT(!bcs_mpi_stats_parse(out, len, "summary", &sum, err,
					 sizeof(err)));
	FUZZ_ASSERT(sum.hdr->flags & BCS_MPI_SUMMARY);
	for (i = 0, k = 0; i < st.hdr->nr_prims; i++) {
		if (i > BCS_MPI_PRIM_COMM && !st.prims[i].calls)
			continue;
		FUZZ_ASSERT(k < sum.hdr->nr_prims);
		FUZZ_ASSERT(!strcmp(sum.prims[k].name, st.prims[i].name));
		FUZZ_ASSERT(sum.prims[k].calls == st.prims[i].calls);
		FUZZ_ASSERT(!sum.prims[k].lat_hist_off &&
			    !sum.prims[k].size_hist_off);
		k++;
	}
	FUZZ_ASSERT(k == sum.hdr->nr_prims);
	bcs_mpi_stats_free(&sum);
	bcs_mpi_stats_free(&st);
	return 0;
}

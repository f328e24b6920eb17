/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcsmpi: what to measure, from the environment at MPI_Init.
 */
#ifndef BCSMPI_SELECT_H
#define BCSMPI_SELECT_H

#include <stddef.h>

#include "prims.h"

struct bcsmpi_select {
	int off;			/* BCS_MPI_STATS=off: nothing at all */
	unsigned int sub_bits;		/* resolution of the histograms */
	unsigned int poll_sample;	/* 1 in it of a polled primitive timed */
	unsigned int sites;		/* BCS_MPI_SITES=1: call sites kept */
	/* BCS_MPI_SLICES, BCS_MPI_CALLS: the table's bytes, 0 for none. */
	unsigned int nr_slices, nr_calls;
	size_t slices_bytes;
	unsigned char dist[BCSMPI_NR_PRIMS];	/* 1: with histograms */
};

/* Regions of MPI_Pcontrol and call sites a file has room for. */
#define BCSMPI_MAX_REGIONS		16
#define BCSMPI_MAX_SITES		256

/* One call in this many of a polled primitive is timed, by default. */
#define BCSMPI_POLL_SAMPLE_DEFAULT	32
#define BCSMPI_POLL_SAMPLE_MAX		65536

/*
 * Parse @stats (BCS_MPI_STATS, NULL or "" as "on"), @resolution
 * (BCS_MPI_RESOLUTION, NULL or "" for BCS_HIST_SUB_BITS_DEFAULT) and
 * @poll (BCS_MPI_POLL, NULL or "" for BCSMPI_POLL_SAMPLE_DEFAULT: 1 to
 * BCSMPI_POLL_SAMPLE_MAX, 1 timing every call) into @sel.  @stats is "off", "on" (counts and latencies of every primitive,
 * histograms of the process only), "all" (histograms of every primitive
 * too) or a comma-separated list of primitives ("Allreduce,MPI_Isend",
 * case ignored) that get histograms besides.  The two process
 * distributions always have theirs.  Returns 0, or -EINVAL with a
 * message in the @errlen bytes at @err (an unknown primitive, a
 * resolution that is not 0 .. BCS_HIST_SUB_BITS_MAX, a sample out of
 * range).
 */
int bcsmpi_select_parse(const char *stats, const char *resolution,
			const char *poll, struct bcsmpi_select *sel,
			char *err, size_t errlen);

#endif /* BCSMPI_SELECT_H */

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
	unsigned char dist[BCSMPI_NR_PRIMS];	/* 1: with histograms */
};

/*
 * Parse @stats (BCS_MPI_STATS, NULL or "" as "on") and @resolution
 * (BCS_MPI_RESOLUTION, NULL or "" for BCS_HIST_SUB_BITS_DEFAULT) into
 * @sel.  @stats is "off", "on" (counts and latencies of every primitive,
 * histograms of the process only), "all" (histograms of every primitive
 * too) or a comma-separated list of primitives ("Allreduce,MPI_Isend",
 * case ignored) that get histograms besides.  The two process
 * distributions always have theirs.  Returns 0, or -EINVAL with a
 * message in the @errlen bytes at @err (an unknown primitive, a
 * resolution that is not 0 .. BCS_HIST_SUB_BITS_MAX).
 */
int bcsmpi_select_parse(const char *stats, const char *resolution,
			struct bcsmpi_select *sel, char *err, size_t errlen);

#endif /* BCSMPI_SELECT_H */

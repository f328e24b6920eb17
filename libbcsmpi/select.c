// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: BCS_MPI_STATS, BCS_MPI_RESOLUTION and BCS_MPI_POLL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <linux/bcs_hist.h>
#include <linux/bcs_mpi.h>

#include "select.h"

/* The record named @name ("Allreduce" or "MPI_Allreduce"), or -1. */
static int prim_index(const char *name, size_t len)
{
	unsigned int i;

	if (len > 4 && !strncasecmp(name, "MPI_", 4)) {
		name += 4;
		len -= 4;
	}
	for (i = BCSMPI_Init; i < BCSMPI_NR_PRIMS; i++) {
		const char *n = bcsmpi_prim_info[i].name + 4;

		if (strlen(n) == len && !strncasecmp(n, name, len))
			return (int)i;
	}
	return -1;
}

static int parse_resolution(const char *s, unsigned int *out)
{
	if (!s || !*s) {
		*out = BCS_HIST_SUB_BITS_DEFAULT;
		return 0;
	}
	if (s[0] < '0' || s[0] > '0' + BCS_HIST_SUB_BITS_MAX || s[1])
		return -EINVAL;
	*out = (unsigned int)(s[0] - '0');
	return 0;
}

static int parse_poll(const char *s, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s) {
		*out = BCSMPI_POLL_SAMPLE_DEFAULT;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > BCSMPI_POLL_SAMPLE_MAX)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

int bcsmpi_select_parse(const char *stats, const char *resolution,
			const char *poll, struct bcsmpi_select *sel,
			char *err, size_t errlen)
{
	const char *p, *end;
	unsigned int i;
	int k;

	memset(sel, 0, sizeof(*sel));
	sel->dist[BCSMPI_COMP] = sel->dist[BCSMPI_COMM] = 1;
	if (parse_resolution(resolution, &sel->sub_bits)) {
		snprintf(err, errlen, "BCS_MPI_RESOLUTION '%s' is not 0 .. %d",
			 resolution, BCS_HIST_SUB_BITS_MAX);
		return -EINVAL;
	}
	if (parse_poll(poll, &sel->poll_sample)) {
		snprintf(err, errlen, "BCS_MPI_POLL '%s' is not 1 .. %d",
			 poll, BCSMPI_POLL_SAMPLE_MAX);
		return -EINVAL;
	}
	if (!stats || !*stats || !strcasecmp(stats, "on"))
		return 0;
	if (!strcasecmp(stats, "off")) {
		sel->off = 1;
		return 0;
	}
	if (!strcasecmp(stats, "all")) {
		for (i = 0; i < BCSMPI_NR_PRIMS; i++)
			sel->dist[i] = 1;
		return 0;
	}
	/* Each round consumes one name and its comma. */
	for (p = stats; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		k = prim_index(p, (size_t)(end - p));
		if (k < 0) {
			snprintf(err, errlen, "BCS_MPI_STATS: '%.*s' is not "
				 "an MPI primitive libbcsmpi measures "
				 "(or on, off, all)", (int)(end - p), p);
			return -EINVAL;
		}
		sel->dist[k] = 1;
	}
	return 0;
}

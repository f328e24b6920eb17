// SPDX-License-Identifier: GPL-2.0
/*
 * What bcsstat plot draws, computed without gnuplot so that the unit tests
 * can check it: the time unit that fits a range of values, and the matrix
 * of the per-rank heatmap (a row per task, a column per duration bucket,
 * each cell the share of the task's time spent in intervals of that
 * bucket).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bcs.h>

#include "bcsstat.h"

static const struct time_unit time_units[] = {
	{ "ns", 1 }, { "\xc2\xb5s", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
};

#define NR_TIME_UNITS	(sizeof(time_units) / sizeof(time_units[0]))

const struct time_unit *plot_time_unit(double lo_ns, double hi_ns)
{
	double m = fabs(lo_ns) > fabs(hi_ns) ? fabs(lo_ns) : fabs(hi_ns);
	size_t u = 0;

	/* The largest unit in which the largest magnitude is at least 1. */
	while (u + 1 < NR_TIME_UNITS && m >= time_units[u + 1].ns)
		u++;
	return &time_units[u];
}

void rank_map_free(struct rank_map *m)
{
	size_t i;

	for (i = 0; m->labels && i < m->nr_rows; i++)
		free(m->labels[i]);
	free(m->labels);
	free(m->col_lo);
	free(m->col_hi);
	free(m->cell);
	free(m->total_ns);
	free(m->ratio);
	free(m->count);
	memset(m, 0, sizeof(*m));
}

/* The column of bucket @idx of resolution @sub at resolution @coarse. */
static uint32_t coarse_index(uint32_t idx, unsigned int sub,
			     unsigned int coarse)
{
	return bcs_hist_index(bcs_hist_lower(idx, sub), coarse);
}

int plot_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Each row's total against the median of the totals. */
static int ratios(struct rank_map *m)
{
	double *v = malloc(m->nr_rows * sizeof(*v)), med;
	size_t r, n = m->nr_rows;

	if (!v) {
		rank_map_free(m);
		return -ENOMEM;
	}
	memcpy(v, m->total_ns, n * sizeof(*v));
	qsort(v, n, sizeof(*v), plot_cmp_double);
	med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	for (r = 0; r < n; r++)
		m->ratio[r] = med > 0 ? m->total_ns[r] / med : 1;
	free(v);
	return 0;
}

int rank_map_outlier(const struct rank_map *m, size_t r)
{
	return m->nr_rows > 2 && (m->ratio[r] >= RANK_MAP_OUTLIER ||
				  m->ratio[r] <= 1 / RANK_MAP_OUTLIER);
}

int rank_map_build(const struct dist_job *j, uint32_t metric,
		   struct rank_map *m)
{
	unsigned int coarse = RANK_MAP_SUB_BITS;
	uint32_t lo = UINT32_MAX, hi = 0, c;
	size_t i, r, single = 1;
	char buf[128];

	memset(m, 0, sizeof(*m));
	if (metric >= BCS_DIST_METRICS)
		return -EINVAL;
	/* The columns: every coarse bucket from the lowest to the highest. */
	for (i = 0; i < j->nr_tasks; i++) {
		const struct bcs_hist_header *h = j->tasks[i].hist[metric];

		if (!h || !h->count || !h->nr_buckets)
			continue;
		if (h->sub_bits < coarse)
			coarse = h->sub_bits;
		m->nr_rows++;
		if (strcmp(j->tasks[i].node, j->tasks[0].node))
			single = 0;
	}
	if (!m->nr_rows)
		return 0;
	for (i = 0; i < j->nr_tasks; i++) {
		const struct bcs_hist_header *h = j->tasks[i].hist[metric];
		const struct bcs_hist_bucket *b;

		if (!h || !h->count || !h->nr_buckets)
			continue;
		b = (const void *)(h + 1);
		/* Values of 0 ns are no time: they have no column. */
		if (!bcs_hist_lower(b[0].index, h->sub_bits) &&
		    h->nr_buckets == 1)
			continue;
		c = coarse_index(b[!bcs_hist_lower(b[0].index, h->sub_bits)]
				 .index, h->sub_bits, coarse);
		lo = c < lo ? c : lo;
		c = coarse_index(b[h->nr_buckets - 1].index, h->sub_bits,
				 coarse);
		hi = c > hi ? c : hi;
	}
	if (lo > hi) {		/* nothing but values of 0 ns */
		m->nr_rows = 0;
		return 0;
	}
	m->sub_bits = coarse;
	m->nr_cols = hi - lo + 1;
	m->labels = calloc(m->nr_rows, sizeof(*m->labels));
	m->col_lo = calloc(m->nr_cols, sizeof(*m->col_lo));
	m->col_hi = calloc(m->nr_cols, sizeof(*m->col_hi));
	m->cell = calloc(m->nr_rows * m->nr_cols, sizeof(*m->cell));
	m->total_ns = calloc(m->nr_rows, sizeof(*m->total_ns));
	m->ratio = calloc(m->nr_rows, sizeof(*m->ratio));
	m->count = calloc(m->nr_rows, sizeof(*m->count));
	if (!m->labels || !m->col_lo || !m->col_hi || !m->cell ||
	    !m->total_ns || !m->ratio || !m->count) {
		rank_map_free(m);
		return -ENOMEM;
	}
	for (c = 0; c < m->nr_cols; c++) {
		m->col_lo[c] = (double)bcs_hist_lower(lo + c, coarse);
		m->col_hi[c] = (double)bcs_hist_upper(lo + c, coarse) + 1;
	}
	for (i = 0, r = 0; i < j->nr_tasks; i++) {
		const struct bcs_hist_header *h = j->tasks[i].hist[metric];
		const struct bcs_hist_bucket *b;
		double *row, t = 0;
		uint32_t k;

		if (!h || !h->count || !h->nr_buckets)
			continue;
		b = (const void *)(h + 1);
		row = &m->cell[r * m->nr_cols];
		/* A bucket's time: its count at the middle of the bucket. */
		for (k = 0; k < h->nr_buckets; k++) {
			double mid = ((double)bcs_hist_lower(b[k].index,
							     h->sub_bits) +
				      (double)bcs_hist_upper(b[k].index,
							     h->sub_bits) +
				      1) / 2;

			if (!bcs_hist_lower(b[k].index, h->sub_bits))
				continue;
			c = coarse_index(b[k].index, h->sub_bits, coarse) - lo;
			row[c] += mid * (double)b[k].count;
			t += mid * (double)b[k].count;
		}
		for (c = 0; c < m->nr_cols; c++) {
			row[c] = t > 0 ? 100 * row[c] / t : 0;
			if (row[c] > m->max_cell)
				m->max_cell = row[c];
		}
		m->total_ns[r] = (double)h->sum;
		m->count[r] = h->count;
		if (single)
			snprintf(buf, sizeof(buf), "pid %d",
				 (int)j->tasks[i].pid);
		else
			snprintf(buf, sizeof(buf), "%s pid %d",
				 j->tasks[i].node, (int)j->tasks[i].pid);
		m->labels[r] = strdup(buf);
		if (!m->labels[r]) {
			rank_map_free(m);
			return -ENOMEM;
		}
		r++;
	}
	return ratios(m);
}

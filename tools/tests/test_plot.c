// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of what bcsstat plot draws (bcsstat_picture.c), without
 * gnuplot: the time unit chosen for ranges of values, and the per-task
 * heatmap's matrix for a job of four tasks of which one is the slow rank
 * (twice the CPU time in bursts four times as long, almost no sleep):
 * its row alone holds the longest buckets, it has the largest total, and
 * it alone stands out against the median.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bcs.h>

#include "bcsstat.h"

/* CHECK() and unit_done(), the harness of the host unit tests. */
#include "unit.h"

#define CHECK_UNIT(lo, hi, want) do {					\
	const char *__u = plot_time_unit(lo, hi)->name;			\
	if (!strcmp(__u, want)) {					\
		unit_pass++;						\
	} else {							\
		unit_fail++;						\
		fprintf(stdout, "FAIL %s:%d: plot_time_unit(%g, %g) is "\
			"%s, want %s\n", __FILE__, __LINE__,		\
			(double)(lo), (double)(hi), __u, want);		\
	}								\
} while (0)

static void test_units(void)
{
	CHECK_UNIT(0, 0, "ns");
	CHECK_UNIT(0, 999, "ns");
	CHECK_UNIT(-500, 500, "ns");
	CHECK_UNIT(0, 1000, "\xc2\xb5s");
	CHECK_UNIT(2000, 40000, "\xc2\xb5s");
	CHECK_UNIT(0, 999999, "\xc2\xb5s");
	/* Switches late by tens of ms read in ms, not in thousands of us. */
	CHECK_UNIT(-20000, 45e6, "ms");
	CHECK_UNIT(1e6, 999e6, "ms");
	/* An early switch by far: the magnitude counts, not the sign. */
	CHECK_UNIT(-3e9, 1e6, "s");
	CHECK_UNIT(0, 5e9, "s");
	CHECK_UNIT(0, 5e12, "s");
	CHECK(plot_time_unit(0, 45e6)->ns == 1e6);
}

/* A histogram at resolution @sub of @n values: @v[i] @c[i] times each. */
static struct bcs_hist_header *hist(unsigned int sub, const uint64_t *v,
				    const uint64_t *c, size_t n)
{
	struct bcs_hist_header *h = bcs_hist_alloc((uint32_t)n);
	struct bcs_hist_bucket *b;
	size_t i;

	if (!h)
		exit(1);
	b = bcs_hist_bucket_array(h);
	h->sub_bits = (uint8_t)sub;
	h->min = v[0];
	for (i = 0; i < n; i++) {
		b[i].index = bcs_hist_index(v[i], sub);
		b[i].count = c[i];
		h->count += c[i];
		h->sum += v[i] * c[i];
		h->max = v[i];
	}
	h->nr_buckets = (uint32_t)n;
	return h;
}

#define NR_TASKS	4
#define SLOW		2	/* the slow rank's row */

static void test_rank_map(void)
{
	/* Ranks: 100 bursts of 2 ms and 100 sleeps of 2 ms; the slow one
	 * 50 bursts of 8 ms (twice the CPU time) and 2 sleeps of 50 us. */
	static const uint64_t burst_v[] = { 2000000 }, burst_c[] = { 100 };
	static const uint64_t slow_v[] = { 100000, 8000000 };
	static const uint64_t slow_c[] = { 1, 50 };
	static const uint64_t sleep_v[] = { 0, 2000000 };
	static const uint64_t sleep_c[] = { 5, 100 };
	static const uint64_t nap_v[] = { 50000 }, nap_c[] = { 2 };
	struct dist_task t[NR_TASKS];
	struct dist_job j;
	struct rank_map m;
	size_t r, c, slow_hi = 0, other_hi = 0;
	int i;

	memset(t, 0, sizeof(t));
	memset(&j, 0, sizeof(j));
	for (i = 0; i < NR_TASKS; i++) {
		t[i].node = "node1";
		t[i].pid = 100 + i;
		if (i == SLOW) {
			t[i].hist[BCS_DIST_BURST] = hist(3, slow_v, slow_c, 2);
			t[i].hist[BCS_DIST_BLOCKED] = hist(3, nap_v, nap_c, 1);
		} else {
			t[i].hist[BCS_DIST_BURST] = hist(3, burst_v, burst_c,
							 1);
			t[i].hist[BCS_DIST_BLOCKED] = hist(3, sleep_v, sleep_c,
							   2);
		}
	}
	j.id = 7;
	j.tasks = t;
	j.nr_tasks = NR_TASKS;

	CHECK(rank_map_build(&j, BCS_DIST_BURST, &m) == 0);
	CHECK(m.nr_rows == NR_TASKS);
	CHECK(m.nr_rows == NR_TASKS && !strcmp(m.labels[SLOW], "pid 102"));
	/* Columns from 100 us's bucket to 8 ms's, one a power of two. */
	CHECK(m.nr_cols == 7);
	CHECK(m.nr_cols && m.col_lo[0] <= 100000 && m.col_hi[0] > 100000);
	CHECK(m.nr_cols && m.col_lo[m.nr_cols - 1] <= 8000000 &&
	      m.col_hi[m.nr_cols - 1] > 8000000);
	/* The highest column with a value, row by row. */
	for (r = 0; r < m.nr_rows; r++)
		for (c = 0; c < m.nr_cols; c++)
			if (m.cell[r * m.nr_cols + c] > 0) {
				if (r == SLOW && c > slow_hi)
					slow_hi = c;
				if (r != SLOW && c > other_hi)
					other_hi = c;
			}
	/* The slow rank's row alone reaches the longest buckets, and holds
	 * nearly all its time there. */
	CHECK(slow_hi == m.nr_cols - 1);
	CHECK(other_hi < slow_hi);
	CHECK(m.nr_cols && m.cell[SLOW * m.nr_cols + m.nr_cols - 1] > 99);
	/* Each row's shares add up to 100 %. */
	for (r = 0; r < m.nr_rows; r++) {
		double sum = 0;

		for (c = 0; c < m.nr_cols; c++)
			sum += m.cell[r * m.nr_cols + c];
		CHECK(sum > 99.999 && sum < 100.001);
	}
	/* Its total is the highest, twice the median; it alone stands out. */
	for (r = 0; r < m.nr_rows; r++) {
		CHECK(r == SLOW || m.total_ns[r] < m.total_ns[SLOW]);
		CHECK(rank_map_outlier(&m, r) == (r == SLOW));
	}
	CHECK(m.nr_rows && m.ratio[SLOW] > 2.0 && m.ratio[SLOW] < 2.01);
	rank_map_free(&m);

	/* Sleeps: the slow rank's are the fewest and shortest; the values
	 * of 0 ns have no column (no time). */
	CHECK(rank_map_build(&j, BCS_DIST_BLOCKED, &m) == 0);
	CHECK(m.nr_rows == NR_TASKS);
	CHECK(m.nr_cols && m.col_lo[0] > 0);
	for (r = 0; r < m.nr_rows; r++)
		CHECK(rank_map_outlier(&m, r) == (r == SLOW));
	CHECK(m.nr_rows && m.ratio[SLOW] < 0.01);
	rank_map_free(&m);

	/* No task has parks: no rows. */
	CHECK(rank_map_build(&j, BCS_DIST_SUSPENDED, &m) == 0);
	CHECK(m.nr_rows == 0 && m.labels == NULL);
	rank_map_free(&m);
	CHECK(rank_map_build(&j, BCS_DIST_METRICS, &m) < 0);

	/* Tasks on two nodes are named by node and pid. */
	t[1].node = "node2";
	CHECK(rank_map_build(&j, BCS_DIST_BURST, &m) == 0);
	CHECK(m.nr_rows == NR_TASKS &&
	      !strcmp(m.labels[1], "node2 pid 101"));
	rank_map_free(&m);

	for (i = 0; i < NR_TASKS; i++) {
		free(t[i].hist[BCS_DIST_BURST]);
		free(t[i].hist[BCS_DIST_BLOCKED]);
	}
}

int main(void)
{
	test_units();
	test_rank_map();
	return unit_done("test_plot");
}

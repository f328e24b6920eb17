// SPDX-License-Identifier: GPL-2.0
/*
 * mkdump NODE JOB SUB_BITS [SCALE]: write a synthetic job dump to standard
 * output with libbcs's writer, for the tests of bcsstat dist and plot:
 *
 *   pid 101 (tgid 101): 200 bursts of 2 ms + (i % 10) * 50 us and 200
 *     sleeps of 3 ms + (i % 7) * 100 us (the rhythm of a program that
 *     computes 2 ms and communicates 3 ms), 40 runnable waits of
 *     5 us + i * 1 us;
 *   pid 102 (gone): 50 bursts of 10 ms + i * 200 us, 10 parks of 40 ms;
 *   3 slice records.
 *
 * Every duration is multiplied by SCALE (default 1), so that the dumps of
 * two nodes differ.  Times are fixed, so the output is too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bcs.h>

#define MAX_BUCKETS	(65 << BCS_HIST_SUB_BITS_MAX)

struct hist {
	struct bcs_hist_header h;
	struct bcs_hist_bucket b[MAX_BUCKETS];
};

/* The counts of the histogram being filled: one at a time. */
static uint64_t counts[MAX_BUCKETS];

static void hist_init(struct hist *x, unsigned int sub_bits)
{
	memset(x, 0, sizeof(*x));
	memset(counts, 0, sizeof(counts));
	x->h.magic = BCS_HIST_MAGIC;
	x->h.version = BCS_HIST_VERSION;
	x->h.sub_bits = (uint8_t)sub_bits;
}

static void hist_add(struct hist *x, uint64_t v)
{
	if (!x->h.count || v < x->h.min)
		x->h.min = v;
	if (v > x->h.max)
		x->h.max = v;
	x->h.count++;
	x->h.sum += v;
	counts[bcs_hist_index(v, x->h.sub_bits)]++;
}

static const struct bcs_hist_header *hist_done(struct hist *x)
{
	uint32_t i, n = 0;

	for (i = 0; i < bcs_hist_buckets(x->h.sub_bits); i++)
		if (counts[i]) {
			x->b[n].index = i;
			x->b[n++].count = counts[i];
		}
	x->h.nr_buckets = n;
	return &x->h;
}

int main(int argc, char **argv)
{
	static struct hist burst, blocked, wait, susp;
	struct bcs_dump_head head;
	struct bcs_dump_task t;
	struct bcs_dump *d;
	unsigned int sub;
	uint64_t i, scale = 1;
	int err;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: mkdump NODE JOB SUB_BITS [SCALE]\n");
		return 2;
	}
	sub = (unsigned int)atoi(argv[3]);
	if (argc == 5)
		scale = strtoull(argv[4], NULL, 10);
	memset(&head, 0, sizeof(head));
	head.node = argv[1];
	head.job = (uint32_t)atoi(argv[2]);
	head.row = 1;
	head.time_ns = 1764000000000000000ULL;
	head.monotonic_ns = 5000000000000ULL;
	head.slices = 1;
	if (bcs_dump_begin(stdout, &head, &d))
		return 1;

	memset(&t, 0, sizeof(t));
	t.pid = 101;
	t.tgid = 101;
	t.totals.flags = BCS_DIST_TRACKING;
	t.totals.start_ns = 4000000000000ULL;
	t.totals.state = BCS_DIST_BLOCKED;
	hist_init(&burst, sub);
	for (i = 0; i < 200; i++)
		hist_add(&burst, scale * (2000000 + (i % 10) * 50000));
	t.hist[BCS_DIST_BURST] = hist_done(&burst);
	hist_init(&blocked, sub);
	for (i = 0; i < 200; i++)
		hist_add(&blocked, scale * (3000000 + (i % 7) * 100000));
	t.hist[BCS_DIST_BLOCKED] = hist_done(&blocked);
	hist_init(&wait, sub);
	for (i = 0; i < 40; i++)
		hist_add(&wait, scale * (5000 + i * 1000));
	t.hist[BCS_DIST_WAIT] = hist_done(&wait);
	t.totals.run_ns = burst.h.sum;
	t.totals.blocked_ns = blocked.h.sum;
	t.totals.wait_ns = wait.h.sum;
	t.totals.tracked_ns = burst.h.sum + blocked.h.sum + wait.h.sum;
	t.totals.bursts = burst.h.count;
	t.totals.preemptions = 3;
	if (bcs_dump_task(d, &t))
		return 1;

	memset(&t, 0, sizeof(t));
	t.pid = 102;
	t.totals.flags = BCS_DIST_GONE;
	t.totals.start_ns = 4000000000000ULL;
	t.totals.state = BCS_DIST_BURST;
	hist_init(&burst, sub);
	for (i = 0; i < 50; i++)
		hist_add(&burst, scale * (10000000 + i * 200000));
	t.hist[BCS_DIST_BURST] = hist_done(&burst);
	hist_init(&susp, sub);
	for (i = 0; i < 10; i++)
		hist_add(&susp, scale * 40000000);
	t.hist[BCS_DIST_SUSPENDED] = hist_done(&susp);
	t.totals.run_ns = burst.h.sum;
	t.totals.suspended_ns = susp.h.sum;
	t.totals.tracked_ns = burst.h.sum + susp.h.sum;
	t.totals.bursts = burst.h.count;
	t.totals.suspensions = 10;
	if (bcs_dump_task(d, &t))
		return 1;

	for (i = 0; i < 3; i++) {
		struct bcs_slice_record r;

		memset(&r, 0, sizeof(r));
		r.seq = 10 + i;
		r.slice = 500 + i;
		r.row = (uint32_t)(i % 2);
		r.flags = BCS_SLICE_DRIVEN;
		r.deadline_ns = 1763999999000000000ULL + i * 10000000;
		r.switch_start_ns = r.deadline_ns + 20000;
		r.switch_end_ns = r.switch_start_ns + 15000;
		r.switch_ns = 15000;
		r.interval_ns = i ? 10000000 : 0;
		if (bcs_dump_slice(d, &r))
			return 1;
	}
	err = bcs_dump_end(d);
	return err ? 1 : 0;
}

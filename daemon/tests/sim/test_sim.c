// SPDX-License-Identifier: GPL-2.0
/*
 * bcsd-sim's stand-in for bcs.ko (sim/sim.c) on its own: jobs and their
 * errors, the driver, strobes into the slice ring (late or not, the
 * switch at the later of arrival and deadline, a past slice missed), the
 * ring's sequence numbers when it wraps, the slice window, the ends of
 * jobs on the events descriptor, the strobe log of $BCS_SIM_LOG, the
 * rows of jobs: alternate rows, moves at a slice and filler jobs; and
 * plans.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libbcs/bcs.h"
#include "sim/sim.h"
#include "tests/unit.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int strobe(struct bcs_nl *nl, uint64_t slice, uint32_t row,
		  uint64_t deadline)
{
	struct bcs_strobe s = { .slice = slice, .row = row,
				.deadline_ns = deadline };

	return bcs_nl_strobe_send(nl, &s);
}

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void test_jobs(struct bcs *h)
{
	struct bcs_job_info *jobs = NULL;
	uint32_t id = 0;
	size_t n = 9;

	CHECK(bcs_job_list(h, &jobs, &n) == 0 && n == 0 && !jobs);
	CHECK(bcs_job_create(h, 5, 0, NULL) == 0);
	CHECK(bcs_job_create(h, 5, 1, NULL) == -EEXIST);
	/* In turn from 1, as bcs.ko hands them out. */
	CHECK(bcs_job_create(h, 0, BCS_ROW_NONE, &id) == 0 && id == 1);
	CHECK(bcs_job_create(h, BCS_JOB_ID_MAX + 1U, 0, NULL) == -EINVAL);
	CHECK(bcs_job_create(h, 7, BCS_ROWS_MAX, NULL) == -EINVAL);
	CHECK(bcs_job_set_row(h, 5, 1) == 0);
	CHECK(bcs_job_set_row(h, 8, 1) == -ENOENT);
	CHECK(bcs_job_list(h, &jobs, &n) == 0 && n == 2 && jobs &&
	      jobs[0].id == 5 && jobs[0].row == 1 && jobs[0].nr_tasks == 0 &&
	      jobs[1].id == 1 && jobs[1].row == BCS_ROW_NONE);
	/* Owned by the caller, as bcs.ko's; or by the uid named. */
	CHECK(jobs && n == 2 && jobs[0].owner == geteuid());
	free(jobs);
	CHECK(bcs_dist_ctl(h, 5, BCS_DIST_ENABLE, BCS_DIST_ALL, 2, NULL, 0) == 0);
	CHECK(bcs_dist_ctl(h, 9, BCS_DIST_ENABLE, BCS_DIST_ALL, 2, NULL, 0) ==
	      -ENOENT);
	CHECK(bcs_dist_ctl(h, 5, BCS_DIST_ENABLE, 0, 2, NULL, 0) == -EINVAL);
	CHECK(bcs_job_dump(h, 5, stdout, 0) == -EOPNOTSUPP);
}

static void test_strobes(struct bcs *h, struct bcs_nl *nl,
			 struct bcs_stat *st)
{
	struct bcs_slice_record r[4];
	struct bcs_nl *other = NULL;
	struct bcs_state s;
	uint64_t head = 1, next = 0, now = now_ns();
	size_t n = 0;

	CHECK(strobe(nl, 1, 0, now) == -ENOTCONN);
	CHECK(bcs_nl_open(&other) == 0);
	CHECK(bcs_nl_drive(nl, 100000000, 5) == 0);
	CHECK(bcs_nl_drive(other, 0, BCS_NL_DEFAULT) == -EBUSY);
	CHECK(strobe(other, 1, 0, now) == -EBUSY);
	CHECK(strobe(nl, 1, BCS_ROWS_MAX, now) == -ERANGE);
	CHECK(bcs_stat_head(st, &head) == 0 && head == 0);

	/* In the past: at once, late; ahead: at its deadline. */
	CHECK(strobe(nl, 10, 1, now - 1000000) == 0);
	CHECK(strobe(nl, 11, 0, now + 50000000) == 0);
	/* A slice before the current one: dropped, missed. */
	CHECK(strobe(nl, 9, 1, now) == 0);
	CHECK(bcs_stat_head(st, &head) == 0 && head == 2);
	CHECK(bcs_stat_snapshot(st, 0, r, 4, &n, &next) == 0 && n == 2 &&
	      next == 2);
	CHECK(r[0].seq == 0 && r[0].slice == 10 && r[0].row == 1 &&
	      r[0].flags == (BCS_SLICE_DRIVEN | BCS_SLICE_LATE) && r[0].late &&
	      r[0].switch_start_ns >= now && r[0].switch_start_ns ==
	      r[0].switch_end_ns && r[0].deadline_ns == now - 1000000);
	CHECK(r[1].seq == 1 && r[1].slice == 11 && r[1].row == 0 &&
	      r[1].flags == BCS_SLICE_DRIVEN && !r[1].late &&
	      r[1].switch_start_ns == now + 50000000 &&
	      r[1].switch_end_ns == now + 50000000);
	CHECK(bcs_get_state(h, &s) == 0 && s.mode == BCS_MODE_DRIVEN &&
	      s.slice == 11 && s.row == 0 && s.strobes == 3 &&
	      s.switches == 2 && s.late == 1 && s.missed == 1 &&
	      s.slice_ns == 100000000 && s.watchdog_slices == 5 &&
	      s.nr_jobs == 2 && s.stat_records == BCS_SIM_RECORDS);

	/* The driver closed: mode off, strobes refused. */
	CHECK(bcs_nl_release(other) == -EBUSY);
	bcs_nl_close(other);
	CHECK(bcs_nl_release(nl) == 0);
	CHECK(bcs_get_state(h, &s) == 0 && s.mode == BCS_MODE_OFF &&
	      s.failopens == 1);
	CHECK(strobe(nl, 12, 0, now) == -ENOTCONN);
}

/*
 * Plans: checked as bcs.ko checks them; the first slice at once, the
 * others at their deadlines, through plan_rows; a later plan switches
 * the slices before its own first, then replaces the rest, none missed;
 * the fail-open drops what is left.  Slices of a second: nothing comes
 * due while the test runs.  Returns the lines it logged.
 */
static int test_plans(struct bcs *h, struct bcs_nl *nl, struct bcs_stat *st)
{
	const uint64_t sec = 1000000000ULL;
	struct bcs_slice_record r[16];
	uint64_t now = now_ns(), head = 0, next = 0, missed;
	struct bcs_strobe a = { .slice = 10000, .row = 0, .slice_ns = sec,
				.flags = BCS_STROBE_PLAN, .plan_slices = 20,
				.plan_rows = 0x5 }, b, bad;
	struct bcs_state s;
	size_t n = 0;
	int lines = 0;

	CHECK(bcs_nl_drive(nl, 0, BCS_NL_DEFAULT) == 0);
	CHECK(bcs_get_state(h, &s) == 0);
	missed = s.missed;
	/* What bcs.ko refuses. */
	bad = a;
	bad.deadline_ns = now;
	bad.flags |= BCS_STROBE_PREDICT;
	CHECK(bcs_nl_strobe_send(nl, &bad) == -EINVAL && ++lines);
	bad.flags = BCS_STROBE_PLAN | BCS_STROBE_NOW;
	CHECK(bcs_nl_strobe_send(nl, &bad) == -EINVAL && ++lines);
	bad.flags = 0;
	CHECK(bcs_nl_strobe_send(nl, &bad) == -EINVAL && ++lines);
	bad.flags = BCS_STROBE_PLAN;
	bad.plan_slices = 0;
	CHECK(bcs_nl_strobe_send(nl, &bad) == -ERANGE && ++lines);
	bad.plan_slices = BCS_PLAN_SLICES_MAX + 1;
	CHECK(bcs_nl_strobe_send(nl, &bad) == -ERANGE && ++lines);
	bad.plan_slices = 3;
	bad.deadline_ns = BCS_DEADLINE_NS_MAX - sec;
	CHECK(bcs_nl_strobe_send(nl, &bad) == -ERANGE && ++lines);

	/* Slices 10000 .. 10002 due already, 10003 in half a second. */
	a.deadline_ns = now - 5 * sec / 2;
	CHECK(bcs_stat_head(st, &head) == 0);
	CHECK(bcs_nl_strobe_send(nl, &a) == 0);
	CHECK(bcs_get_state(h, &s) == 0 && s.slice == 10002 && s.row == 0);
	lines += 3;
	/* From 10005 on, row 7 throughout: 10003 and 10004 switch first. */
	b = a;
	b.slice = 10005;
	b.row = 7;
	b.plan_rows = 0;
	b.deadline_ns = now + 5 * sec;
	CHECK(bcs_nl_strobe_send(nl, &b) == 0);
	lines += 3;
	CHECK(bcs_get_state(h, &s) == 0 && s.slice == 10005 && s.row == 7 &&
	      s.missed == missed);
	CHECK(bcs_stat_snapshot(st, head, r, 16, &n, &next) == 0 && n == 6);
	CHECK(n == 6 && r[0].slice == 10000 && r[0].row == 0 && r[0].late &&
	      r[1].slice == 10001 && r[1].row == 2 && !r[1].late &&
	      r[1].switch_start_ns == a.deadline_ns + sec &&
	      r[2].slice == 10002 && r[2].row == 0 &&
	      r[3].slice == 10003 && r[3].row == 2 &&
	      r[3].switch_start_ns == a.deadline_ns + 3 * sec &&
	      r[4].slice == 10004 && r[4].row == 0 &&
	      r[5].slice == 10005 && r[5].row == 7 &&
	      r[5].switch_start_ns == b.deadline_ns);
	/* The driver gone: the rest of the plan with it. */
	CHECK(bcs_nl_release(nl) == 0);
	CHECK(bcs_get_state(h, &s) == 0 && s.slice == 10005);
	return lines;
}

/* More strobes than the ring holds: the oldest are overwritten. */
static void test_wrap(struct bcs_nl *nl, struct bcs_stat *st)
{
	static struct bcs_slice_record r[BCS_SIM_RECORDS];
	uint64_t head = 0, next = 0, now = now_ns(), i;
	size_t n = 0;
	bool ok = true;

	CHECK(bcs_nl_drive(nl, 0, BCS_NL_DEFAULT) == 0);
	for (i = 0; i < BCS_SIM_RECORDS; i++)
		ok &= strobe(nl, 100 + i, (uint32_t)(i % 2), now) == 0;
	CHECK(ok);
	CHECK(bcs_stat_head(st, &head) == 0 && head == BCS_SIM_RECORDS + 2);
	CHECK(bcs_stat_snapshot(st, 0, r, BCS_SIM_RECORDS, &n, &next) == 0 &&
	      n == BCS_SIM_RECORDS && next == head && r[0].seq == 2 &&
	      r[0].slice == 100 &&
	      r[BCS_SIM_RECORDS - 1].seq == BCS_SIM_RECORDS + 1);
	CHECK(bcs_stat_snapshot(st, head - 1, r, 4, &n, &next) == 0 &&
	      n == 1 && r[0].slice == 100 + BCS_SIM_RECORDS - 1);
	CHECK(bcs_stat_snapshot(st, head, r, 4, &n, &next) == 0 && n == 0 &&
	      next == head);
}

static void test_window(struct bcs *h, struct bcs_nl *nl,
			struct bcs_stat *st)
{
	struct bcs_slice_record r[8];
	struct bcs_state s;
	uint64_t head = 0, next, from = 100 + BCS_SIM_RECORDS + 10, i;
	uint64_t now = now_ns();
	size_t n = 0;

	CHECK(bcs_window_set(h, from + 2, from) == -EINVAL);
	CHECK(bcs_window_set(h, 5, 6) == -ERANGE);
	CHECK(bcs_window_set(h, from, from + BCS_SIM_RECORDS) == -E2BIG);
	CHECK(bcs_window_set(h, from, from + 1) == 0);
	CHECK(bcs_stat_head(st, &head) == 0);
	for (i = from - 2; i < from + 4; i++)
		strobe(nl, i, 0, now);
	CHECK(bcs_stat_snapshot(st, head, r, 8, &n, &next) == 0 && n == 2 &&
	      r[0].slice == from && r[1].slice == from + 1);
	CHECK(bcs_get_state(h, &s) == 0 && s.window_state == BCS_WINDOW_DONE);
	CHECK(bcs_window_clear(h) == 0);
	strobe(nl, from + 4, 0, now);
	CHECK(bcs_stat_snapshot(st, head, r, 8, &n, &next) == 0 && n == 3);
}

static void test_events(struct bcs *h)
{
	struct bcs_events *ev = NULL;
	struct bcs_job_ended e;

	CHECK(bcs_events_open(&ev) == 0);
	if (!ev)
		return;
	CHECK(!readable(bcs_events_fd(ev)));
	CHECK(bcs_events_read(ev, &e, 1) == -EAGAIN);
	CHECK(bcs_job_destroy(h, 5) == 0);
	CHECK(bcs_job_destroy(h, 5) == -ENOENT);
	CHECK(bcs_job_destroy(h, 1) == 0);
	CHECK(readable(bcs_events_fd(ev)));
	CHECK(bcs_events_read(ev, &e, 1) == 0 && e.job == 5 &&
	      e.reason == BCS_JOB_END_DESTROYED && e.dist_tasks == 0 &&
	      e.seq == 1 && e.lost == 0);
	CHECK(bcs_events_read(ev, &e, 1) == 0 && e.job == 1 && e.seq == 2);
	CHECK(bcs_events_read(ev, &e, 1) == -EAGAIN);
	CHECK(!readable(bcs_events_fd(ev)));
	bcs_events_close(ev);
}

/* Job @id as bcs_job_list() shows it; false if it is not listed. */
static bool job_get(struct bcs *h, uint32_t id, struct bcs_job_info *out)
{
	struct bcs_job_info *jobs = NULL;
	bool found = false;
	size_t n = 0, i;

	if (bcs_job_list(h, &jobs, &n))
		return false;
	for (i = 0; i < n; i++) {
		if (jobs[i].id == id) {
			*out = jobs[i];
			found = true;
		}
	}
	free(jobs);
	return found;
}

/* Job @id has home row @row, set @rows, and is in state @state. */
static bool job_is(struct bcs *h, uint32_t id, uint32_t row, uint64_t rows,
		   uint32_t state)
{
	struct bcs_job_info j;

	return job_get(h, id, &j) && j.row == row && j.rows == rows &&
	       j.state == state;
}

#define RUN	BCS_JOB_RUNNING
#define SUS	BCS_JOB_SUSPENDED

/*
 * Alternate scheduling: a job runs in every row of its set, and a move at
 * a slice waits for the switch to it.  Driven by @nl, after the slices of
 * test_window().  Returns the strobes it sent, for the log's count.
 */
static int test_rows(struct bcs *h, struct bcs_nl *nl)
{
	uint64_t now = now_ns(), base;
	struct bcs_job_info j;
	struct bcs_state s;
	int sent = 0;

	CHECK(bcs_get_state(h, &s) == 0 && s.mode == BCS_MODE_DRIVEN);
	base = s.slice + 10;

	CHECK(bcs_job_create_rows(h, 20, 0, 1ULL << 1, NULL) == 0);
	CHECK(bcs_job_create_rows(h, 21, 1, 0, NULL) == 0);
	CHECK(bcs_job_create(h, 22, 63, NULL) == 0);
	CHECK(bcs_job_create_rows(h, 23, BCS_ROW_NONE, 1, NULL) == -EINVAL);
	CHECK(bcs_job_create_rows(h, 23, BCS_ROWS_MAX, 0, NULL) == -EINVAL);
	CHECK(bcs_job_create_rows(NULL, 23, 0, 1, NULL) == -EBADF);
	CHECK(bcs_job_set_rows(h, 20, BCS_ROW_NONE, 1, 0) == -EINVAL);
	CHECK(bcs_job_set_rows(h, 20, BCS_ROW_NONE, 1, base) == -EINVAL);
	CHECK(bcs_job_set_rows(h, 99, 0, 1, base) == -ENOENT);
	CHECK(job_get(h, 22, &j) && j.rows == 1ULL << 63);

	/* Row 0 runs job 20 only; row 1 both, 20 in its alternate row. */
	CHECK(strobe(nl, base, 0, now) == 0 && ++sent);
	CHECK(job_is(h, 20, 0, 3, RUN) && job_is(h, 21, 1, 2, SUS));
	CHECK(strobe(nl, base + 1, 1, now) == 0 && ++sent);
	CHECK(job_is(h, 20, 0, 3, RUN) && job_is(h, 21, 1, 2, RUN));
	CHECK(job_get(h, 20, &j) && j.slices_run == 2);
	CHECK(job_get(h, 21, &j) && j.slices_run == 1);
	CHECK(job_is(h, 22, 63, 1ULL << 63, SUS));

	/* A move at base + 3, replaced by one at base + 4, waits for it. */
	CHECK(bcs_job_set_rows(h, 21, 0, 0, base + 3) == 0);
	CHECK(job_is(h, 21, 1, 2, RUN));
	CHECK(strobe(nl, base + 2, 1, now) == 0 && ++sent);
	CHECK(job_is(h, 21, 1, 2, RUN));
	CHECK(bcs_job_set_rows(h, 21, 2, 1ULL << 5, base + 4) == 0);
	CHECK(strobe(nl, base + 3, 1, now) == 0 && ++sent);
	CHECK(job_is(h, 21, 1, 2, RUN));
	CHECK(strobe(nl, base + 4, 1, now) == 0 && ++sent);
	CHECK(job_is(h, 21, 2, 1ULL << 2 | 1ULL << 5, SUS));
	CHECK(job_get(h, 21, &j) && j.slices_run == 3);

	/* A slice already begun: at the next switch. */
	CHECK(bcs_job_set_rows(h, 21, 1, 1, base + 2) == 0);
	CHECK(job_is(h, 21, 2, 1ULL << 2 | 1ULL << 5, SUS));
	CHECK(strobe(nl, base + 5, 0, now) == 0 && ++sent);
	CHECK(job_is(h, 21, 1, 3, RUN));

	/* A move without a slice drops the one that waits. */
	CHECK(bcs_job_set_rows(h, 21, 3, 0, base + 7) == 0);
	CHECK(bcs_job_set_row(h, 21, 2) == 0);
	CHECK(job_is(h, 21, 2, 4, SUS));
	CHECK(strobe(nl, base + 8, 2, now) == 0 && ++sent);
	CHECK(job_is(h, 21, 2, 4, RUN));

	/* A waiting move follows its job when another job goes. */
	CHECK(bcs_job_set_rows(h, 22, 4, 0, base + 9) == 0);
	CHECK(bcs_job_set_rows(h, 20, 6, 0, base + 9) == 0);
	CHECK(bcs_job_destroy(h, 20) == 0);
	CHECK(bcs_job_create(h, 20, 0, NULL) == 0);
	CHECK(strobe(nl, base + 9, 4, now) == 0 && ++sent);
	CHECK(job_is(h, 22, 4, 1ULL << 4, RUN));
	CHECK(job_is(h, 20, 0, 1, SUS));
	CHECK(job_is(h, 21, 2, 4, SUS));

	/*
	 * Filler jobs: 23 (row 5) runs where no job with tasks runs by its
	 * rows: not in row 4 (22 has one), in row 2 (21 has none), from the
	 * next switch after the flag changes.
	 */
	CHECK(bcs_job_create(h, 23, 5, NULL) == 0);
	CHECK(bcs_job_set_filler(h, 23, true) == 0);
	CHECK(bcs_job_set_filler(h, 98, true) == -ENOENT);
	CHECK(bcs_job_set_filler(NULL, 23, true) == -EBADF);
	CHECK(job_get(h, 23, &j) && j.flags == BCS_JOB_FILLER);
	CHECK(bcs_attach(h, 22, getpid(), 0, NULL) == 0);
	CHECK(job_is(h, 23, 5, 1ULL << 5, SUS));
	CHECK(strobe(nl, base + 10, 4, now) == 0 && ++sent);
	CHECK(job_is(h, 23, 5, 1ULL << 5, SUS));
	CHECK(strobe(nl, base + 11, 2, now) == 0 && ++sent);
	CHECK(job_is(h, 23, 5, 1ULL << 5, RUN));
	CHECK(job_is(h, 21, 2, 4, RUN) && job_is(h, 22, 4, 1ULL << 4, SUS));
	CHECK(job_get(h, 23, &j) && j.slices_run == 1);
	CHECK(bcs_job_set_filler(h, 23, false) == 0);
	CHECK(job_get(h, 23, &j) && j.flags == 0 && j.state == RUN);
	CHECK(strobe(nl, base + 12, 2, now) == 0 && ++sent);
	CHECK(job_is(h, 23, 5, 1ULL << 5, SUS));
	CHECK(bcs_job_destroy(h, 23) == 0);

	/* The fail-open is a switch in the current slice. */
	CHECK(bcs_job_set_rows(h, 21, 7, 0, base + 9) == 0);
	CHECK(bcs_nl_release(nl) == 0);
	CHECK(job_is(h, 21, 7, 1ULL << 7, RUN));

	CHECK(bcs_job_destroy(h, 20) == 0);
	CHECK(bcs_job_destroy(h, 21) == 0);
	CHECK(bcs_job_destroy(h, 22) == 0);
	return sent;
}

/* Owners: the uid named, kept and listed (last: it adds a job). */
static void test_owners(struct bcs *h)
{
	struct bcs_job_info *jobs = NULL;
	size_t n = 0, i;

	CHECK(bcs_job_create_rows_owned(h, 30, 2, 1ULL << 3, 65534, NULL) == 0);
	CHECK(bcs_job_create_rows_owned(h, 31, 2, 0, (uid_t)-1, NULL) ==
	      -EINVAL);
	CHECK(bcs_job_create_owned(h, 30, 2, 0, NULL) == -EEXIST);
	CHECK(bcs_job_list(h, &jobs, &n) == 0 && jobs);
	for (i = 0; i < n && jobs[i].id != 30; i++)
		;
	CHECK(i < n && jobs[i].owner == 65534 &&
	      jobs[i].rows == (1ULL << 2 | 1ULL << 3));
	free(jobs);
}

int main(void)
{
	char path[] = "/tmp/test_sim.XXXXXX";
	struct bcs_stat *st = NULL;
	struct bcs_nl *nl = NULL;
	struct bcs *h = NULL;
	unsigned long long a, b, c, d;
	FILE *f;
	int fd, lines = 0, rows_strobes, plan_lines;

	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	setenv(BCS_SIM_ENV_LOG, path, 1);
	CHECK(bcs_open(&h) == 0 && h);
	CHECK(bcs_nl_open(&nl) == 0 && nl);
	CHECK(bcs_stat_open(&st) == 0 && st);
	if (!h || !nl || !st)
		return unit_done("test_sim");
	CHECK(bcs_stat_head(st, &(uint64_t){ 0 }) == -ENODATA);
	CHECK(bcs_stat_map(st) == 0);

	test_jobs(h);
	test_strobes(h, nl, st);
	test_wrap(nl, st);
	test_window(h, nl, st);
	test_events(h);
	rows_strobes = test_rows(h, nl);
	test_owners(h);
	plan_lines = test_plans(h, nl, st);

	bcs_stat_close(st);
	bcs_nl_close(nl);
	bcs_close(h);

	/* Every strobe the driver sent, refused ones too, one line each. */
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(fscanf(f, "%llu %llu %llu %llu", &a, &b, &c, &d) == 4 &&
		      a == 1 && b == BCS_ROWS_MAX && c > 0 && d >= c);
		lines = 1;
		while (fscanf(f, "%llu %llu %llu %llu", &a, &b, &c, &d) == 4)
			lines++;
		fclose(f);
	}
	CHECK(lines == (int)BCS_SIM_RECORDS + 4 + 6 + 1 + rows_strobes +
	      plan_lines);
	unlink(path);
	return unit_done("test_sim");
}

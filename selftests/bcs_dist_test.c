// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task distributions (BCS_IOC_DIST_CTL, BCS_IOC_DIST_READ): enabling
 * and disabling per job, per pid and per metric; bursts and sleeps of a
 * child with a known rhythm in the right buckets; suspended time and
 * runnable wait; the four totals adding up to the time tracked; the
 * statistics of a killed task kept until released; permissions; bad input.
 * The assertions are on where values fall, loosely enough for emulation,
 * never on how long anything took.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/bcs_hist.h>
#include <linux/userfaultfd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

#define NS_MS		1000000ULL
#define WORK_NS		(2 * NS_MS)	/* CPU time of each burst */
#define SLEEP_NS	(8 * NS_MS)	/* each voluntary sleep */
#define ROUNDS		150
#define HIST_ROOM	(1 << 20)

struct rhythm_sh {
	volatile int go;
	volatile int done;
};

FIXTURE(dist) {
	int fd;
	pid_t child;
	struct rhythm_sh *sh;
	struct bt_burner b;
	void *hist;
};

static int dist_ctl(int fd, uint32_t job, uint32_t op, uint32_t metrics,
		    uint32_t sub_bits, const int32_t *pids, uint32_t nr)
{
	struct bcs_dist_ctl c = {
		.size = sizeof(c),
		.job = job,
		.op = op,
		.metrics = metrics,
		.sub_bits = sub_bits,
		.nr_pids = nr,
		.pids = (uintptr_t)pids,
	};

	return bt_ioctl(fd, BCS_IOC_DIST_CTL, &c);
}

static int dist_read(int fd, uint32_t job, pid_t pid, uint32_t metric,
		     void *buf, uint32_t room, struct bcs_dist_read *rd)
{
	memset(rd, 0, sizeof(*rd));
	rd->size = sizeof(*rd);
	rd->job = job;
	rd->pid = pid;
	rd->metric = metric;
	rd->buf = (uintptr_t)buf;
	rd->buf_size = room;
	return bt_ioctl(fd, BCS_IOC_DIST_READ, rd);
}

/* Spin until this thread has used @ns more CPU time. */
static void burn_cpu(uint64_t ns)
{
	uint64_t end = bt_now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (bt_now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

static void rhythm(struct rhythm_sh *sh)
{
	struct timespec ts = { 0, SLEEP_NS };
	int i;

	while (!sh->go)
		bt_sleep_ms(1);
	for (i = 0; i < ROUNDS; i++) {
		burn_cpu(WORK_NS);
		nanosleep(&ts, NULL);
	}
	sh->done = 1;
	for (;;)
		pause();
}

FIXTURE_SETUP(dist)
{
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0, 0, NULL, 0);
	dist_ctl(self->fd, BT_JOB_B, BCS_DIST_RELEASE, 0, 0, NULL, 0);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	self->hist = malloc(HIST_ROOM);
	ASSERT_NE(NULL, self->hist);
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
}

FIXTURE_TEARDOWN(dist)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		bt_waitpid_bounded(self->child, NULL, BT_WAIT_MS);
	}
	bt_burner_stop(&self->b);
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0, 0, NULL, 0);
		dist_ctl(self->fd, BT_JOB_B, BCS_DIST_RELEASE, 0, 0, NULL, 0);
		close(self->fd);
	}
	free(self->hist);
	if (self->sh && self->sh != MAP_FAILED)
		munmap((void *)self->sh, sizeof(*self->sh));
}

static pid_t start_rhythm(struct rhythm_sh *sh)
{
	pid_t pid;

	sh->go = 0;
	sh->done = 0;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		rhythm(sh);
	return pid;
}

/* The bucket holding the median of histogram @h, checked as it goes. */
static int median_bucket(const struct bcs_hist_header *h, uint32_t *index)
{
	const struct bcs_hist_bucket *b = (const void *)(h + 1);
	uint64_t seen = 0, total = 0;
	uint32_t i;

	if (h->magic != BCS_HIST_MAGIC || h->version != BCS_HIST_VERSION ||
	    h->sub_bits > BCS_HIST_SUB_BITS_MAX || !h->nr_buckets)
		return -EINVAL;
	for (i = 0; i < h->nr_buckets; i++) {
		if (!b[i].count || b[i].reserved0 ||
		    b[i].index >= bcs_hist_buckets(h->sub_bits) ||
		    (i && b[i].index <= b[i - 1].index))
			return -EINVAL;
		total += b[i].count;
	}
	if (total != h->count)
		return -EINVAL;
	for (i = 0; i < h->nr_buckets; i++) {
		seen += b[i].count;
		if (seen * 2 >= total) {
			*index = b[i].index;
			return 0;
		}
	}
	return -EINVAL;
}

/* The four totals add up to the time tracked, within 0.01 %. */
static bool identity_holds(const struct bcs_dist_totals *t)
{
	uint64_t sum = t->run_ns + t->blocked_ns + t->suspended_ns +
		       t->wait_ns;
	uint64_t diff = sum > t->tracked_ns ? sum - t->tracked_ns :
					      t->tracked_ns - sum;

	return t->tracked_ns && diff * 10000 <= t->tracked_ns;
}

TEST_F(dist, rhythm_in_the_right_buckets)
{
	struct bcs_hist_header *h = self->hist;
	struct bcs_dist_read rd;
	uint64_t before, after;
	uint32_t idx;

	/* Enabled for the job before the task joins: tracked from attach. */
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 4, NULL, 0));
	self->child = start_rhythm(self->sh);
	ASSERT_LT(0, self->child);
	before = bt_now_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->child, 0, NULL));
	after = bt_now_ns(CLOCK_MONOTONIC);
	self->sh->go = 1;
	ASSERT_TRUE(WAIT_UNTIL(self->sh->done, 20 * BT_WAIT_MS));

	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->child, BCS_DIST_BURST,
			       h, HIST_ROOM, &rd));
	EXPECT_LE(before, rd.totals.start_ns);
	EXPECT_GE(after, rd.totals.start_ns);
	EXPECT_TRUE(rd.totals.flags & BCS_DIST_TRACKING);
	EXPECT_FALSE(rd.totals.flags & BCS_DIST_GONE);
	EXPECT_TRUE(identity_holds(&rd.totals));
	EXPECT_EQ(sizeof(*h) + h->nr_buckets * sizeof(struct bcs_hist_bucket),
		  rd.buf_size);
	EXPECT_EQ(4, h->sub_bits);
	/*
	 * A sleep whose timer fires while the task, about to sleep, is
	 * preempted is no sleep: most rounds, not all, end a burst.
	 */
	EXPECT_LE(ROUNDS * 9 / 10, h->count);
	EXPECT_LE(ROUNDS * 9 / 10, rd.totals.bursts);
	ASSERT_EQ(0, median_bucket(h, &idx));
	/* About 2 ms of CPU each: not a sleep of 8 ms, not nothing. */
	EXPECT_LE(WORK_NS * 3 / 4, bcs_hist_upper(idx, h->sub_bits));
	EXPECT_GE(WORK_NS * 3, bcs_hist_lower(idx, h->sub_bits));
	EXPECT_LE(h->min, h->max);
	EXPECT_GE(rd.totals.run_ns, h->sum);

	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->child,
			       BCS_DIST_BLOCKED, h, HIST_ROOM, &rd));
	EXPECT_LE(ROUNDS * 9 / 10, h->count);
	ASSERT_EQ(0, median_bucket(h, &idx));
	/* At least the 8 ms asked for, not a burst of 2 ms. */
	EXPECT_LE(SLEEP_NS, bcs_hist_upper(idx, h->sub_bits));
	EXPECT_GE(SLEEP_NS * 30, bcs_hist_lower(idx, h->sub_bits));
	EXPECT_TRUE(identity_holds(&rd.totals));

	/* Never parked: nothing suspended; woken every round: waits. */
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->child,
			       BCS_DIST_SUSPENDED, h, HIST_ROOM, &rd));
	EXPECT_EQ(0, h->count);
	EXPECT_EQ(0, h->nr_buckets);
	EXPECT_EQ(0, rd.totals.suspended_ns);
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->child, BCS_DIST_WAIT,
			       h, HIST_ROOM, &rd));
	EXPECT_LE(ROUNDS * 9 / 10, h->count);
}

TEST_F(dist, suspended_and_waiting)
{
	struct bcs_hist_header *h = self->hist;
	struct bcs_dist_read rd;
	int i, n = 0;
	pid_t pid;

	ASSERT_EQ(0, bt_drive(self->fd));
	/* Four spinning threads on two CPUs wait for each other. */
	ASSERT_EQ(0, bt_burner_start(&self->b, 4, false));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 3, NULL, 0));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
		bt_sleep_ms(50);
		ASSERT_EQ(0, bt_resume_row0(self->fd, BT_JOB_A));
		bt_sleep_ms(50);
	}

	/* Each thread, found with BCS_DIST_NEXT. */
	for (pid = 0;; pid = rd.pid) {
		memset(&rd, 0, sizeof(rd));
		rd.size = sizeof(rd);
		rd.job = BT_JOB_A;
		rd.pid = pid;
		rd.metric = BCS_DIST_SUSPENDED;
		rd.flags = BCS_DIST_NEXT;
		rd.buf = (uintptr_t)h;
		rd.buf_size = HIST_ROOM;
		if (bt_ioctl(self->fd, BCS_IOC_DIST_READ, &rd))
			break;
		EXPECT_LT(pid, rd.pid);
		n++;
		EXPECT_TRUE(identity_holds(&rd.totals));
		/* Parked three times, 50 ms each: suspended, not blocked. */
		EXPECT_LE(3, rd.totals.suspensions);
		EXPECT_LE(3, h->count);
		EXPECT_LE(3 * 40 * NS_MS, rd.totals.suspended_ns);
		EXPECT_GT(rd.totals.suspended_ns, rd.totals.blocked_ns);
		/* A spinner's burst is not ended by a park. */
		EXPECT_GT(3, rd.totals.bursts);
	}
	EXPECT_EQ(4, n);

	/* Four spinners on two CPUs: each waits, preempted, for a CPU. */
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->b.sh->tid[0],
			       BCS_DIST_WAIT, h, HIST_ROOM, &rd));
	EXPECT_LT(0, h->count);
	EXPECT_LT(0, rd.totals.wait_ns);
}

static int pin_cpu0(pid_t pid)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

/* Spin @ns of CPU time, sleep @sleep_ns, on CPU 0 at SCHED_FIFO, until killed. */
static void __attribute__((noreturn)) rt_hog(uint64_t ns, uint64_t sleep_ns)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct timespec ts = { 0, (long)sleep_ns };
	int i;

	if (pin_cpu0(0) || sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(1);
	/* Bounded: the test kills it long before. */
	for (i = 0; i < 10000; i++) {
		burn_cpu(ns);
		nanosleep(&ts, NULL);
	}
	_exit(0);
}

/*
 * A sleep ends when the task is woken, not when it runs: woken while a
 * real-time task holds its CPU, it waits on the run queue (taken from the
 * scheduler's own accounting of run-queue waits), and that wait is
 * runnable wait, not blocked time.
 */
TEST_F(dist, wait_after_a_sleep_is_not_a_sleep)
{
	struct bcs_hist_header *h = self->hist;
	struct bcs_dist_read rd;
	uint32_t idx;
	pid_t hog;

	self->child = start_rhythm(self->sh);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pin_cpu0(self->child));
	fflush(stdout);
	fflush(stderr);
	hog = fork();
	ASSERT_LE(0, hog);
	if (!hog)
		rt_hog(4 * SLEEP_NS, 4 * NS_MS);
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 4, NULL, 0));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->child, 0, NULL));
	self->sh->go = 1;
	EXPECT_TRUE(WAIT_UNTIL(self->sh->done, 20 * BT_WAIT_MS));
	kill(hog, SIGKILL);
	bt_waitpid_bounded(hog, NULL, BT_WAIT_MS);
	ASSERT_TRUE(self->sh->done);

	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->child,
			       BCS_DIST_BLOCKED, h, HIST_ROOM, &rd));
	EXPECT_TRUE(identity_holds(&rd.totals));
	/* Woken behind 32 ms of the hog, most of its time is waiting. */
	EXPECT_GT(rd.totals.wait_ns, rd.totals.blocked_ns);
	ASSERT_EQ(0, median_bucket(h, &idx));
	/* The sleeps asked for, not the hog's 32 ms on top. */
	EXPECT_LE(SLEEP_NS, bcs_hist_upper(idx, h->sub_bits));
	EXPECT_GT(3 * SLEEP_NS, bcs_hist_lower(idx, h->sub_bits));
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->child, BCS_DIST_WAIT,
			       h, HIST_ROOM, &rd));
	EXPECT_LE(ROUNDS / 2, h->count);
}

/*
 * The probe splits a sleep into the sleep and the wait after it only at
 * the task's next event, when the scheduler has counted that wait; a read
 * is such an event.  A task that reads its own distributions right after
 * each sleep finds the sleep just ended counted, and the four totals
 * adding up to the time tracked.
 */
#define SELF_ROUNDS	40

struct self_sh {
	volatile int go;
	volatile int done;
	volatile int rounds;
	volatile int counted;
	volatile int whole;
};

static void read_own(int fd, struct self_sh *sh)
{
	struct timespec ts = { 0, 2 * NS_MS };
	struct bcs_hist_header *h = malloc(HIST_ROOM);
	struct bcs_dist_read rd;
	uint64_t last = 0;
	int i;

	while (!sh->go)
		bt_sleep_ms(1);
	for (i = 0; h && i < SELF_ROUNDS; i++) {
		nanosleep(&ts, NULL);
		if (dist_read(fd, BT_JOB_A, getpid(), BCS_DIST_BLOCKED, h,
			      HIST_ROOM, &rd))
			break;
		if (i && h->count > last)
			sh->counted++;
		if (identity_holds(&rd.totals))
			sh->whole++;
		last = h->count;
		sh->rounds++;
	}
	sh->done = 1;
	for (;;)
		pause();
}

TEST_F(dist, own_sleep_seen_at_once)
{
	struct self_sh *sh;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child)
		read_own(self->fd, sh);
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 4, NULL, 0));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->child, 0, NULL));
	sh->go = 1;
	EXPECT_TRUE(WAIT_UNTIL(sh->done, 20 * BT_WAIT_MS));
	EXPECT_EQ(SELF_ROUNDS, sh->rounds);
	/* Most sleeps end a burst (see rhythm_in_the_right_buckets). */
	EXPECT_LE((SELF_ROUNDS - 1) * 9 / 10, sh->counted);
	EXPECT_EQ(SELF_ROUNDS, sh->whole);
	munmap((void *)sh, sizeof(*sh));
}

#define LINGER_PARAM	"/sys/module/bcs/parameters/dist_linger_ms"

/* dist_linger_ms: 0 .. 600000, changed at run time. */
TEST_F(dist, linger_param_range)
{
	char old[32];

	ASSERT_EQ(0, bt_read_file(LINGER_PARAM, old, sizeof(old)));
	EXPECT_EQ(10000, atoi(old));
	EXPECT_EQ(-EINVAL, bt_write_file(LINGER_PARAM, "600001"));
	EXPECT_EQ(-EINVAL, bt_write_file(LINGER_PARAM, "-1"));
	EXPECT_EQ(-EINVAL, bt_write_file(LINGER_PARAM, "soon"));
	EXPECT_EQ(0, bt_write_file(LINGER_PARAM, "0"));
	EXPECT_EQ(0, bt_write_file(LINGER_PARAM, "600000"));
	ASSERT_EQ(0, bt_write_file(LINGER_PARAM, old));
}

TEST_F(dist, per_pid_and_per_metric)
{
	struct bcs_hist_header *h = self->hist;
	struct bcs_dist_read rd;
	int32_t tid0, tid1;
	uint64_t count;

	ASSERT_EQ(0, bt_burner_start(&self->b, 2, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	tid0 = self->b.sh->tid[0];
	tid1 = self->b.sh->tid[1];
	ASSERT_NE(tid0, tid1);

	/* Nothing enabled yet. */
	EXPECT_EQ(-ENOENT, dist_read(self->fd, BT_JOB_A, tid0, 0, h,
				     HIST_ROOM, &rd));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      1U << BCS_DIST_BLOCKED, 2, &tid1, 1));
	bt_sleep_ms(100);
	EXPECT_EQ(-ESRCH, dist_read(self->fd, BT_JOB_A, tid0, 0, h,
				    HIST_ROOM, &rd));
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, tid1, BCS_DIST_BLOCKED, h,
			       HIST_ROOM, &rd));
	EXPECT_EQ(2, h->sub_bits);
	EXPECT_LT(0, h->count);
	/* A metric never enabled has no histogram, but the totals run. */
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, tid1, BCS_DIST_BURST, h,
			       HIST_ROOM, &rd));
	EXPECT_EQ(0, rd.buf_size);
	EXPECT_LT(0, rd.totals.blocked_ns);

	/* Disabled: what was recorded stays, nothing is added. */
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_DISABLE,
			      1U << BCS_DIST_BLOCKED, 0, &tid1, 1));
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, tid1, BCS_DIST_BLOCKED, h,
			       HIST_ROOM, &rd));
	count = h->count;
	EXPECT_FALSE(rd.totals.flags & BCS_DIST_TRACKING);
	bt_sleep_ms(100);
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, tid1, BCS_DIST_BLOCKED, h,
			       HIST_ROOM, &rd));
	EXPECT_EQ(count, h->count);
	EXPECT_TRUE(identity_holds(&rd.totals));

	/* Enabled for the job, at another resolution: a new histogram. */
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      1U << BCS_DIST_BLOCKED | 1U << BCS_DIST_WAIT, 6,
			      NULL, 0));
	bt_sleep_ms(100);
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, tid0, BCS_DIST_BLOCKED, h,
			       HIST_ROOM, &rd));
	EXPECT_EQ(6, h->sub_bits);
	EXPECT_LT(0, h->count);
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, tid1, BCS_DIST_BLOCKED, h,
			       HIST_ROOM, &rd));
	EXPECT_EQ(6, h->sub_bits);
	EXPECT_TRUE(rd.totals.flags & BCS_DIST_TRACKING);

	/* Released per pid: that task's statistics are gone. */
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0, 0,
			      &tid0, 1));
	EXPECT_EQ(-ESRCH, dist_read(self->fd, BT_JOB_A, tid0, 0, h,
				    HIST_ROOM, &rd));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_DISABLE,
			      BCS_DIST_ALL, 0, NULL, 0));
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, tid1, BCS_DIST_BLOCKED, h,
			       HIST_ROOM, &rd));
	EXPECT_FALSE(rd.totals.flags & BCS_DIST_TRACKING);
}

TEST_F(dist, killed_task_kept_until_released)
{
	struct bcs_hist_header *h = self->hist;
	struct bcs_dist_read rd;
	uint64_t count;
	pid_t pid;

	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 5, NULL, 0));
	self->child = start_rhythm(self->sh);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->child, 0, NULL));
	self->sh->go = 1;
	ASSERT_TRUE(WAIT_UNTIL(self->sh->done, 20 * BT_WAIT_MS));
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->child,
			       BCS_DIST_BURST, h, HIST_ROOM, &rd));
	count = h->count;
	EXPECT_LE(ROUNDS * 9 / 10, count);

	pid = self->child;
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, bt_waitpid_bounded(pid, NULL, BT_WAIT_MS));
	self->child = 0;

	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, pid, BCS_DIST_BURST, h,
			       HIST_ROOM, &rd));
	EXPECT_TRUE(rd.totals.flags & BCS_DIST_GONE);
	EXPECT_FALSE(rd.totals.flags & BCS_DIST_TRACKING);
	/* Kept; the exit ended the burst it was in, if any: one more. */
	EXPECT_LE(count, h->count);
	EXPECT_GE(count + 1, h->count);
	EXPECT_TRUE(identity_holds(&rd.totals));

	/* The job destroyed: still there, until released. */
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_A));
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, pid, BCS_DIST_BLOCKED, h,
			       HIST_ROOM, &rd));
	EXPECT_LE(ROUNDS * 9 / 10, h->count);
	EXPECT_EQ(-ENOENT, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
				    BCS_DIST_ALL, 5, NULL, 0));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0, 0,
			      NULL, 0));
	EXPECT_EQ(-ENOENT, dist_read(self->fd, BT_JOB_A, pid, BCS_DIST_BURST,
				     h, HIST_ROOM, &rd));
}

TEST_F(dist, enospc_says_the_size)
{
	struct bcs_hist_header *h = self->hist;
	struct bcs_dist_read rd;
	uint32_t need;

	ASSERT_EQ(0, bt_burner_start(&self->b, 1, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, BCS_HIST_SUB_BITS_MAX, NULL, 0));
	bt_sleep_ms(100);
	/* No buffer: the size it takes. */
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->b.pid,
			       BCS_DIST_BLOCKED, NULL, 0, &rd));
	need = rd.buf_size;
	ASSERT_LE(sizeof(*h) + sizeof(struct bcs_hist_bucket), need);
	EXPECT_EQ(-ENOSPC, dist_read(self->fd, BT_JOB_A, self->b.pid,
				     BCS_DIST_BLOCKED, h, sizeof(*h), &rd));
	EXPECT_LE(need, rd.buf_size);
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, self->b.pid,
			       BCS_DIST_BLOCKED, h, HIST_ROOM, &rd));
	EXPECT_EQ(BCS_HIST_SUB_BITS_MAX, h->sub_bits);
	EXPECT_EQ(rd.buf_size,
		  sizeof(*h) + h->nr_buckets * sizeof(struct bcs_hist_bucket));
}

TEST_F(dist, unprivileged)
{
	struct bcs_dist_read rd;
	int32_t root_pid;
	int status = -1;
	pid_t pid;

	ASSERT_EQ(0, bt_burner_start(&self->b, 1, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      1U << BCS_DIST_BLOCKED, 3, NULL, 0));
	root_pid = self->b.pid;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (bt_drop_privs())
			_exit(10);
		fd = bt_open();
		if (fd < 0)
			_exit(11);
		if (dist_ctl(fd, BT_JOB_A, BCS_DIST_ENABLE, BCS_DIST_ALL, 3,
			     &root_pid, 1) != -EPERM)
			_exit(12);
		if (dist_ctl(fd, BT_JOB_A, BCS_DIST_DISABLE, BCS_DIST_ALL, 0,
			     NULL, 0) != -EPERM)
			_exit(13);
		if (dist_ctl(fd, BT_JOB_A, BCS_DIST_RELEASE, 0, 0, NULL,
			     0) != -EPERM)
			_exit(14);
		if (dist_read(fd, BT_JOB_A, root_pid, 0, NULL, 0, &rd) !=
		    -EPERM)
			_exit(15);
		rd.flags = BCS_DIST_NEXT;
		rd.pid = 0;
		if (bt_ioctl(fd, BCS_IOC_DIST_READ, &rd) != -ESRCH)
			_exit(16);
		_exit(0);
	}
	ASSERT_EQ(pid, bt_waitpid_bounded(pid, &status, BT_WAIT_MS));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Still enabled. */
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, root_pid, 0, NULL, 0, &rd));
	EXPECT_TRUE(rd.totals.flags & BCS_DIST_TRACKING);
}

TEST_F(dist, bad_input)
{
	struct bcs_dist_ctl c;
	struct bcs_dist_read rd;
	int32_t pids[2];
	char small[8];

	ASSERT_EQ(0, bt_burner_start(&self->b, 1, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	pids[0] = self->b.pid;
	pids[1] = getpid();	/* not in the job */

	/* Each one a valid argument but for what is set. */
#define CTL(...) ({ c = (struct bcs_dist_ctl){ .size = sizeof(c),	\
		.job = BT_JOB_A, .metrics = BCS_DIST_ALL };		\
		__VA_ARGS__;						\
		bt_ioctl(self->fd, BCS_IOC_DIST_CTL, &c); })
	EXPECT_EQ(-EINVAL, CTL(c.size = sizeof(c) - 8));
	EXPECT_EQ(-EINVAL, CTL(c.size = sizeof(c) + 8));
	EXPECT_EQ(-EINVAL, CTL(c.reserved[1] = 1));
	EXPECT_EQ(-EINVAL, CTL(c.op = 3));
	EXPECT_EQ(-EINVAL, CTL(c.op = 0xffffffff));
	EXPECT_EQ(-EINVAL, CTL(c.metrics = 0));
	EXPECT_EQ(-EINVAL, CTL(c.metrics = BCS_DIST_ALL + 1));
	EXPECT_EQ(-EINVAL, CTL(c.metrics = 0x80000000));
	EXPECT_EQ(-EINVAL, CTL(c.sub_bits = BCS_HIST_SUB_BITS_MAX + 1));
	EXPECT_EQ(-EINVAL, CTL(c.sub_bits = 0xffffffff));
	EXPECT_EQ(-EINVAL, CTL(c.op = BCS_DIST_DISABLE, c.sub_bits = 1));
	EXPECT_EQ(-EINVAL, CTL(c.op = BCS_DIST_RELEASE));
	EXPECT_EQ(-EINVAL, CTL(c.nr_pids = BCS_DIST_PIDS_MAX + 1,
			       c.pids = (uintptr_t)pids));
	EXPECT_EQ(-EINVAL, CTL(c.nr_pids = 0xffffffff,
			       c.pids = (uintptr_t)pids));
	EXPECT_EQ(-EINVAL, CTL(c.pids = (uintptr_t)pids));
	EXPECT_EQ(-EFAULT, CTL(c.nr_pids = 1, c.pids = 8));
	EXPECT_EQ(-ESRCH, CTL(c.nr_pids = 2, c.pids = (uintptr_t)pids));
	pids[1] = -1;
	EXPECT_EQ(-ESRCH, CTL(c.nr_pids = 2, c.pids = (uintptr_t)pids));
	pids[1] = 0;
	EXPECT_EQ(-ESRCH, CTL(c.nr_pids = 2, c.pids = (uintptr_t)pids));
	EXPECT_EQ(-ENOENT, CTL(c.job = 0));
	EXPECT_EQ(-ENOENT, CTL(c.job = BT_JOB_B));
	EXPECT_EQ(-ENOENT, CTL(c.op = BCS_DIST_DISABLE));
	EXPECT_EQ(-ENOENT, CTL(c.op = BCS_DIST_RELEASE, c.metrics = 0));
	EXPECT_EQ(-EFAULT, bt_ioctl(self->fd, BCS_IOC_DIST_CTL, (void *)8));
	EXPECT_EQ(0, CTL(c.nr_pids = 1, c.pids = (uintptr_t)pids,
			 c.sub_bits = 1));

#define RD(...) ({ rd = (struct bcs_dist_read){ .size = sizeof(rd),	\
		.job = BT_JOB_A, .pid = self->b.pid };			\
		__VA_ARGS__;						\
		bt_ioctl(self->fd, BCS_IOC_DIST_READ, &rd); })
	EXPECT_EQ(0, RD());
	EXPECT_LT(0, rd.buf_size);
	EXPECT_EQ(-ENOSPC, RD(rd.buf_size = 1));
	EXPECT_EQ(-EINVAL, RD(rd.size = sizeof(rd) - 8));
	EXPECT_EQ(-EINVAL, RD(rd.reserved[0] = 1));
	EXPECT_EQ(-EINVAL, RD(rd.metric = BCS_DIST_METRICS));
	EXPECT_EQ(-EINVAL, RD(rd.metric = 0xffffffff));
	EXPECT_EQ(-EINVAL, RD(rd.flags = 2));
	EXPECT_EQ(-ESRCH, RD(rd.pid = -5));
	EXPECT_EQ(-ESRCH, RD(rd.pid = 0));
	EXPECT_EQ(-ESRCH, RD(rd.pid = -5, rd.flags = BCS_DIST_NEXT));
	EXPECT_EQ(-ESRCH, RD(rd.pid = getpid()));
	EXPECT_EQ(-ENOENT, RD(rd.job = 0));
	EXPECT_EQ(-ENOENT, RD(rd.job = BT_JOB_B));
	EXPECT_EQ(-EFAULT, RD(rd.buf = 8, rd.buf_size = HIST_ROOM));
	EXPECT_EQ(-ENOSPC, RD(rd.buf = (uintptr_t)small,
			      rd.buf_size = sizeof(small)));
	EXPECT_LT(sizeof(small), rd.buf_size);
	EXPECT_EQ(-EFAULT, bt_ioctl(self->fd, BCS_IOC_DIST_READ, (void *)8));
	EXPECT_EQ(-ENOTTY, bt_ioctl(self->fd, _IOWR(BCS_IOC_MAGIC, 13,
						    struct bcs_dist_read), &rd));
}

/* --- Bounds, permissions, order and copies out (issue 40, items 4, 5) --- */

#define JOB_PARAM	"/sys/module/bcs/parameters/dist_max_job_tasks"
#define USER_PARAM	"/sys/module/bcs/parameters/dist_max_user_tasks"
#define DIST_DEBUGFS	"/sys/kernel/debug/bcs/dist"
#define DEBUGFS_ROOM	(64 << 10)

/*
 * From debugfs bcs/dist: the value of "@key: N" if @row is NULL; else in
 * the table under the header line @row, column @col of the row whose
 * first column is @id (0 if there is no such row).  -1 if unreadable.
 */
static long long dist_info(const char *key, const char *row,
			   unsigned long id, int col)
{
	char *buf = malloc(DEBUGFS_ROOM), *line, *save;
	unsigned long long v[4];
	long long ret = -1;
	bool in = false;
	size_t n = key ? strlen(key) : 0;

	if (!buf)
		return -1;
	if (!bt_exists("/sys/kernel/debug/bcs") &&
	    system("mount -t debugfs none /sys/kernel/debug 2>/dev/null"))
		fprintf(stderr, "# debugfs: could not mount it\n");
	if (bt_read_file(DIST_DEBUGFS, buf, DEBUGFS_ROOM)) {
		free(buf);
		return -1;
	}
	if (row)
		ret = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (key && !strncmp(line, key, n) && line[n] == ':') {
			ret = strtoll(line + n + 1, NULL, 10);
			break;
		}
		if (!row)
			continue;
		if (!strcmp(line, row)) {
			in = true;
			continue;
		}
		if (in && (line[0] < '0' || line[0] > '9'))
			break;
		if (in && sscanf(line, "%llu %llu %llu %llu", &v[0], &v[1],
				 &v[2], &v[3]) > col && v[0] == id) {
			ret = v[col];
			break;
		}
	}
	free(buf);
	return ret;
}

#define JOB_ROW		"job tasks dropped failures"
#define UID_ROW		"uid tasks"

/* A child that forks @n children, each exiting at once, when told. */
static pid_t start_forker(struct rhythm_sh *sh, int n)
{
	pid_t pid, c;
	int i;

	sh->go = 0;
	sh->done = 0;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid)
		return pid;
	while (!sh->go)
		bt_sleep_ms(1);
	for (i = 0; i < n; i++) {
		c = fork();
		if (c == 0)
			_exit(0);
		if (c > 0)
			waitpid(c, NULL, 0);
	}
	sh->done = 1;
	for (;;)
		pause();
}

static bool wait_done(struct rhythm_sh *sh)
{
	long i;

	for (i = 0; i < BT_WAIT_MS && !sh->done; i++)
		bt_sleep_ms(1);
	return sh->done;
}

/* The pids BCS_DIST_NEXT returns for @job, in order; their number. */
static int next_pids(int fd, uint32_t job, pid_t *out, int max)
{
	struct bcs_dist_read rd;
	pid_t pid = 0;
	int n = 0, err;

	for (;;) {
		memset(&rd, 0, sizeof(rd));
		rd.size = sizeof(rd);
		rd.job = job;
		rd.pid = pid;
		rd.flags = BCS_DIST_NEXT;
		err = bt_ioctl(fd, BCS_IOC_DIST_READ, &rd);
		if (err == -ESRCH)
			return n;
		if (err)
			return err;
		if (n == max)
			return -E2BIG;
		out[n++] = rd.pid;
		pid = rd.pid;
	}
}

/*
 * The bound per job: a job whose distributions are on as a whole keeps
 * at most dist_max_job_tasks trackers; each fork past it is counted as a
 * drop (debugfs bcs/dist), an enable past it fails with -ENOSPC.
 */
TEST_F(dist, job_bound_counted_and_kept)
{
	long long before, tasks, dropped;
	char old[32];
	pid_t pids[16];
	int32_t pid;

	ASSERT_EQ(0, bt_read_file(JOB_PARAM, old, sizeof(old)));
	EXPECT_EQ(4096, atoi(old));
	EXPECT_EQ(-EINVAL, bt_write_file(JOB_PARAM, "0"));
	EXPECT_EQ(-EINVAL, bt_write_file(JOB_PARAM, "1048577"));
	before = dist_info("dropped_job_bound", NULL, 0, 0);
	ASSERT_LE(0, before);
	ASSERT_EQ(0, bt_write_file(JOB_PARAM, "4"));
	EXPECT_EQ(4, dist_info("max_job_tasks", NULL, 0, 0));

	self->child = start_forker(self->sh, 8);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->child, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 0, NULL, 0));
	self->sh->go = 1;
	ASSERT_TRUE(wait_done(self->sh));
	/* The forker and 3 of its children: 5 forks dropped. */
	tasks = dist_info(NULL, JOB_ROW, BT_JOB_A, 1);
	dropped = dist_info(NULL, JOB_ROW, BT_JOB_A, 2);
	EXPECT_EQ(4, tasks);
	EXPECT_EQ(5, dropped);
	EXPECT_EQ(before + 5, dist_info("dropped_job_bound", NULL, 0, 0));
	EXPECT_EQ(4, next_pids(self->fd, BT_JOB_A, pids, 16));
	/* A task attached now is dropped; enabling it is refused. */
	ASSERT_EQ(0, bt_burner_start(&self->b, 1, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	EXPECT_EQ(6, dist_info(NULL, JOB_ROW, BT_JOB_A, 2));
	pid = self->b.pid;
	EXPECT_EQ(-ENOSPC, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
				    BCS_DIST_ALL, 0, &pid, 1));
	EXPECT_EQ(4, dist_info(NULL, JOB_ROW, BT_JOB_A, 1));
	ASSERT_EQ(0, bt_write_file(JOB_PARAM, old));
	/* Under the bound again, the enable goes through. */
	EXPECT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 0, &pid, 1));
	EXPECT_EQ(5, dist_info(NULL, JOB_ROW, BT_JOB_A, 1));
}

/*
 * The bound per uid: the tasks of one uid have at most
 * dist_max_user_tasks trackers in all; forks past it are counted drops.
 */
TEST_F(dist, user_bound_counted_and_kept)
{
	long long base, before;
	char old[32], val[32];

	ASSERT_EQ(0, bt_read_file(USER_PARAM, old, sizeof(old)));
	EXPECT_EQ(16384, atoi(old));
	base = dist_info(NULL, UID_ROW, 0, 1);
	before = dist_info("dropped_user_bound", NULL, 0, 0);
	ASSERT_LE(0, base);
	ASSERT_LE(0, before);
	snprintf(val, sizeof(val), "%lld", base + 3);
	ASSERT_EQ(0, bt_write_file(USER_PARAM, val));

	self->child = start_forker(self->sh, 8);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->child, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      1U << BCS_DIST_BURST, 0, NULL, 0));
	self->sh->go = 1;
	ASSERT_TRUE(wait_done(self->sh));
	/* The forker and 2 of its children: 6 forks dropped. */
	EXPECT_EQ(base + 3, dist_info(NULL, UID_ROW, 0, 1));
	EXPECT_EQ(3, dist_info(NULL, JOB_ROW, BT_JOB_A, 1));
	EXPECT_EQ(6, dist_info(NULL, JOB_ROW, BT_JOB_A, 2));
	EXPECT_EQ(before + 6, dist_info("dropped_user_bound", NULL, 0, 0));
	ASSERT_EQ(0, bt_write_file(USER_PARAM, old));
	/* Released, the uid's count goes back. */
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0, 0,
			      NULL, 0));
	EXPECT_EQ(base, dist_info(NULL, UID_ROW, 0, 1));
}

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

/*
 * BCS_DIST_NEXT returns each task of the job once, in pid order: live
 * ones, gone ones, and one that left and came back (one tracker a pid).
 */
TEST_F(dist, next_each_task_once_in_pid_order)
{
	pid_t want[16], got[16];
	int nw = 0, ng, i;

	self->child = start_forker(self->sh, 5);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, bt_burner_start(&self->b, 3, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->child, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 0, NULL, 0));
	self->sh->go = 1;
	ASSERT_TRUE(wait_done(self->sh));
	/* The burner leaves and joins again: still one entry. */
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ng = next_pids(self->fd, BT_JOB_A, got, 16);
	/* The forker, its 5 children, the burner's 3 threads. */
	want[nw++] = self->child;
	nw += bt_list_threads(self->b.pid, want + nw, 16 - nw);
	ASSERT_EQ(9, ng);
	ASSERT_EQ(4, nw);
	for (i = 1; i < ng; i++)
		EXPECT_LT(got[i - 1], got[i]);
	qsort(want, nw, sizeof(*want), cmp_pid);
	/* Every live task is there; the rest are the 5 gone children. */
	for (i = 0; i < nw; i++)
		EXPECT_NE(NULL, bsearch(&want[i], got, ng, sizeof(*got),
					cmp_pid));
	EXPECT_EQ(ng, dist_info(NULL, JOB_ROW, BT_JOB_A, 1));
}

/*
 * Another uid reads neither a task's distributions nor its pid: in a job
 * of root's tasks and nobody's, nobody sees its own task only, by pid
 * (-EPERM for root's) and with BCS_DIST_NEXT; in a job of root's only,
 * BCS_DIST_NEXT finds nothing.
 */
TEST_F(dist, other_uid_cannot_read)
{
	int32_t root_pid, nobody_pid;
	struct bcs_dist_read rd;
	pid_t reader, seen[4];
	int status = -1;

	ASSERT_EQ(0, bt_burner_start(&self->b, 1, true));
	root_pid = self->b.pid;
	fflush(stdout);
	fflush(stderr);
	self->sh->done = 0;
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		if (bt_drop_privs())
			_exit(10);
		self->sh->done = 1;
		for (;;)
			pause();
	}
	nobody_pid = self->child;
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_B, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_B, root_pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_B, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 0, NULL, 0));
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_B, root_pid, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, root_pid, 0, NULL));
	/* Once nobody's child is nobody's. */
	ASSERT_TRUE(wait_done(self->sh));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, nobody_pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 0, NULL, 0));
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, nobody_pid, 0, NULL, 0,
			       &rd));
	fflush(stdout);
	fflush(stderr);
	reader = fork();
	ASSERT_LE(0, reader);
	if (reader == 0) {
		int fd, n;

		if (bt_drop_privs())
			_exit(10);
		fd = bt_open();
		if (fd < 0)
			_exit(11);
		if (dist_read(fd, BT_JOB_A, root_pid, 0, NULL, 0, &rd) !=
		    -EPERM)
			_exit(12);
		if (dist_read(fd, BT_JOB_A, nobody_pid, 0, NULL, 0, &rd))
			_exit(13);
		n = next_pids(fd, BT_JOB_A, seen, 4);
		if (n != 1 || seen[0] != nobody_pid)
			_exit(14);
		if (next_pids(fd, BT_JOB_B, seen, 4) != 0)
			_exit(15);
		if (dist_read(fd, BT_JOB_B, root_pid, 0, NULL, 0, &rd) !=
		    -EPERM)
			_exit(16);
		_exit(0);
	}
	ASSERT_EQ(reader, bt_waitpid_bounded(reader, &status, BT_WAIT_MS));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Root sees both. */
	EXPECT_EQ(2, next_pids(self->fd, BT_JOB_A, seen, 4));
	dist_ctl(self->fd, BT_JOB_B, BCS_DIST_RELEASE, 0, 0, NULL, 0);
}

struct slow_read {
	int fd;
	uint32_t job;
	pid_t pid;
	void *buf;
	uint32_t room;
	int err;
	int done_pipe;		/* written once the read returned */
};

static void *slow_read_fn(void *arg)
{
	struct slow_read *s = arg;
	struct bcs_dist_read rd;
	char c = 1;

	s->err = dist_read(s->fd, s->job, s->pid, BCS_DIST_BLOCKED, s->buf,
			   s->room, &rd);
	if (write(s->done_pipe, &c, 1) != 1)
		s->err = -EIO;
	return NULL;
}

/* Has the read of @s returned within @ms?  (A bound, not a measure.) */
static bool read_returned(int rfd, long ms)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1)
		return false;
	return read(rfd, &c, 1) == 1;
}

/*
 * A reader blocked in the copy to its buffer (a page of a userfaultfd
 * region, its fault not resolved yet) does not hold up another reader:
 * the second read returns while the first is still blocked.
 */
TEST_F(dist, blocked_copy_out_stalls_no_other_reader)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct slow_read first = {}, second = {};
	struct uffdio_copy copy = {};
	int p1[2], p2[2], uffd;
	struct uffd_msg msg;
	struct pollfd pfd;
	pthread_t t1, t2;
	long page = sysconf(_SC_PAGESIZE);
	bool second_done, t2_joined = false;
	char *region, *src;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		SKIP(return, "userfaultfd: %s (CONFIG_USERFAULTFD, vm.unprivileged_userfaultfd)",
		     strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	region = mmap(NULL, page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, region);
	src = calloc(1, page);
	ASSERT_NE(NULL, src);
	reg.range.start = (uintptr_t)region;
	reg.range.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	ASSERT_EQ(0, bt_burner_start(&self->b, 1, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 0, NULL, 0));
	ASSERT_EQ(0, pipe(p1));
	ASSERT_EQ(0, pipe(p2));

	first = (struct slow_read){ .fd = bt_open(), .job = BT_JOB_A,
		.pid = self->b.pid, .buf = region, .room = page,
		.done_pipe = p1[1] };
	second = (struct slow_read){ .fd = bt_open(), .job = BT_JOB_A,
		.pid = self->b.pid, .buf = self->hist, .room = HIST_ROOM,
		.done_pipe = p2[1] };
	ASSERT_LE(0, first.fd);
	ASSERT_LE(0, second.fd);
	ASSERT_EQ(0, pthread_create(&t1, NULL, slow_read_fn, &first));
	/* The first read faults on the region: it is blocked there. */
	pfd = (struct pollfd){ .fd = uffd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, BT_WAIT_MS));
	ASSERT_EQ((ssize_t)sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	ASSERT_EQ(0, pthread_create(&t2, NULL, slow_read_fn, &second));
	second_done = read_returned(p2[0], BT_WAIT_MS);
	/* Whatever came of it, the first read has not returned. */
	EXPECT_FALSE(read_returned(p1[0], 0));
	EXPECT_TRUE(second_done);
	if (second_done) {
		pthread_join(t2, NULL);
		t2_joined = true;
		EXPECT_EQ(0, second.err);
	}

	/* Resolve the fault: the first read completes. */
	copy.dst = (uintptr_t)region;
	copy.src = (uintptr_t)src;
	copy.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &copy));
	pthread_join(t1, NULL);
	EXPECT_EQ(0, first.err);
	if (!t2_joined)
		pthread_join(t2, NULL);
	EXPECT_EQ(BCS_HIST_MAGIC, ((struct bcs_hist_header *)region)->magic);
	close(first.fd);
	close(second.fd);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
	close(uffd);
	munmap(region, page);
	free(src);
}

/* Every task of @pids read, tracking (@on) or not. */
static bool all_tracking(int fd, uint32_t job, const pid_t *pids, int n,
			 bool on)
{
	struct bcs_dist_read rd;
	int i;

	for (i = 0; i < n; i++)
		if (dist_read(fd, job, pids[i], 0, NULL, 0, &rd) ||
		    !(rd.totals.flags & BCS_DIST_TRACKING) != !on)
			return false;
	return true;
}

/*
 * A job of more tasks than one batch of the ioctl (64): enabling,
 * disabling and releasing the whole job, and a list of all its pids,
 * reach every task.
 */
TEST_F(dist, whole_job_past_one_batch)
{
	int32_t tids[BT_MAX_THREADS];
	pid_t got[BT_MAX_THREADS + 1];
	long long base;
	int n;

	base = dist_info(NULL, UID_ROW, 0, 1);
	ASSERT_LE(0, base);
	ASSERT_EQ(0, bt_burner_start(&self->b, BT_MAX_THREADS, true));
	n = bt_list_threads(self->b.pid, tids, BT_MAX_THREADS);
	ASSERT_EQ(BT_MAX_THREADS, n);
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 1, NULL, 0));
	EXPECT_EQ(n, next_pids(self->fd, BT_JOB_A, got, n + 1));
	EXPECT_TRUE(all_tracking(self->fd, BT_JOB_A, tids, n, true));
	EXPECT_EQ(base + n, dist_info(NULL, UID_ROW, 0, 1));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_DISABLE,
			      BCS_DIST_ALL, 0, NULL, 0));
	EXPECT_TRUE(all_tracking(self->fd, BT_JOB_A, tids, n, false));
	/* Again, at another resolution: new histograms for every task. */
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL, 2, NULL, 0));
	EXPECT_TRUE(all_tracking(self->fd, BT_JOB_A, tids, n, true));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0, 0,
			      NULL, 0));
	EXPECT_EQ(-ENOENT, next_pids(self->fd, BT_JOB_A, got, n + 1));
	EXPECT_EQ(base, dist_info(NULL, UID_ROW, 0, 1));
	EXPECT_EQ(0, dist_info(NULL, JOB_ROW, BT_JOB_A, 1));
	/* By pid list: every one of them. */
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      1U << BCS_DIST_BURST, 0, tids, n));
	EXPECT_TRUE(all_tracking(self->fd, BT_JOB_A, tids, n, true));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_DISABLE,
			      1U << BCS_DIST_BURST, 0, tids, n));
	EXPECT_TRUE(all_tracking(self->fd, BT_JOB_A, tids, n, false));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0, 0,
			      tids, n));
	EXPECT_EQ(0, next_pids(self->fd, BT_JOB_A, got, n + 1));
	EXPECT_EQ(base, dist_info(NULL, UID_ROW, 0, 1));
}

BT_HARNESS_MAIN

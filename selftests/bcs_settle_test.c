// SPDX-License-Identifier: GPL-2.0
/*
 * When a switch takes effect: the parked_ns and resumed_ns of a slice
 * record.  The switch only tells tasks to park and wakes others; the
 * record says when the last task it waited for had parked, and when the
 * last task it woke had left its parking.  Checked: both are filled in
 * for an ordinary switch; blocked tasks are not waited for; a task that
 * gets no CPU keeps the suspension from taking effect until it runs; a task
 * that leaves its job counts as done.
 *
 * The order: a switch wakes the next row only once the old row has parked
 * (drain, then fill), so that a woken task cannot preempt an old one on
 * its way to park; a starved old task holds the next row back for at most
 * the drain limit (module parameter drain_us), and drain_us 0 wakes at
 * once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

/* The CPU where a starved task and the real-time task that starves it run. */
#define HOG_CPU		1
#define HOG_LIMIT_MS	5000

#define DRAIN_PARAM	"/sys/module/bcs/parameters/drain_us"
/* Switches watched for the order of parking and waking. */
#define ORDER_SWITCHES	20

struct hog {
	pid_t pid;
	volatile int *flags;		/* [0] running, [1] stop */
};

FIXTURE(settle) {
	int fd;
	int sfd;
	const struct bcs_stat_header *h;
	size_t map_len;
	struct bt_burner a, b;
	struct hog hog;
	char drain_us[32];		/* the parameter, restored at teardown */
};

FIXTURE_SETUP(settle)
{
	struct bcs_stat_header hdr;
	void *m;

	self->sfd = -1;
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	self->sfd = bt_open_stat();
	ASSERT_LE(0, self->sfd);
	m = mmap(NULL, sizeof(hdr), PROT_READ, MAP_SHARED, self->sfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	memcpy(&hdr, m, sizeof(hdr));
	munmap(m, sizeof(hdr));
	ASSERT_EQ(sizeof(struct bcs_slice_record), hdr.record_size);
	self->map_len = hdr.records_offset +
			(size_t)hdr.nr_records * hdr.record_size;
	m = mmap(NULL, self->map_len, PROT_READ, MAP_SHARED, self->sfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	self->h = m;
	ASSERT_EQ(0, bt_read_file(DRAIN_PARAM, self->drain_us,
				  sizeof(self->drain_us)));
	ASSERT_EQ(0, bt_drive(self->fd));
}

static void hog_stop(struct hog *hog)
{
	int status;

	if (hog->pid > 0) {
		hog->flags[1] = 1;
		if (!bt_waitpid_bounded(hog->pid, &status, BT_WAIT_MS)) {
			kill(hog->pid, SIGKILL);
			bt_waitpid_bounded(hog->pid, &status, BT_WAIT_MS);
		}
		hog->pid = 0;
	}
	if (hog->flags) {
		munmap((void *)hog->flags, 4096);
		hog->flags = NULL;
	}
}

FIXTURE_TEARDOWN(settle)
{
	hog_stop(&self->hog);
	if (self->drain_us[0])
		EXPECT_EQ(0, bt_write_file(DRAIN_PARAM, self->drain_us));
	if (self->fd >= 0)
		EXPECT_EQ(0, bt_reset(self->fd));
	bt_burner_stop(&self->a);
	bt_burner_stop(&self->b);
	if (self->h)
		munmap((void *)self->h, self->map_len);
	if (self->sfd >= 0)
		close(self->sfd);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * Copy the newest record from the mapping.  Its seq reads UINT64_MAX for
 * the moment the module fills in a settle time: read it again then.
 */
static bool newest(const struct bcs_stat_header *h,
		   struct bcs_slice_record *out)
{
	const struct bcs_slice_record *ring = (const void *)
		((const char *)h + h->records_offset);
	int tries;

	for (tries = 0; tries < 100000; tries++) {
		uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
		const struct bcs_slice_record *r;
		uint64_t s1, s2;

		if (!head)
			return false;
		r = &ring[(head - 1) % h->nr_records];
		s1 = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
		memcpy(out, r, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&r->seq, __ATOMIC_RELAXED);
		if (s1 == head - 1 && s2 == s1)
			return true;
	}
	return false;
}

/* The newest record, once the switch it records has taken effect. */
static bool settled(const struct bcs_stat_header *h,
		    struct bcs_slice_record *r)
{
	return newest(h, r) && r->parked_ns && r->resumed_ns;
}

static int pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set) ? -errno : 0;
}

/*
 * A SCHED_FIFO task spinning on HOG_CPU, outside bcs, until told to stop
 * (or HOG_LIMIT_MS passed): every SCHED_OTHER task pinned there waits.
 */
static int hog_start(struct hog *hog)
{
	struct sched_param sp = { .sched_priority = 10 };
	volatile int *flags;
	uint64_t end;

	flags = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (flags == MAP_FAILED)
		return -errno;
	hog->flags = flags;
	hog->pid = fork();
	if (hog->pid < 0)
		return -errno;
	if (!hog->pid) {
		if (pin(0, HOG_CPU) || sched_setscheduler(0, SCHED_FIFO, &sp))
			_exit(1);
		flags[0] = 1;
		end = bt_now_ns(CLOCK_MONOTONIC) + HOG_LIMIT_MS * 1000000ULL;
		while (!flags[1] && bt_now_ns(CLOCK_MONOTONIC) < end)
			;
		_exit(0);
	}
	return WAIT_UNTIL(flags[0], BT_WAIT_MS) ? 0 : -ETIMEDOUT;
}

TEST_F(settle, switch_takes_effect)
{
	struct bcs_slice_record r;

	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_A, 0, &self->a, 2));
	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_B, 1, &self->b, 2));

	/* Row 0: B's two spinning threads park; nothing was parked. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	ASSERT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_B),
			       BT_WAIT_MS));
	ASSERT_TRUE(WAIT_UNTIL(settled(self->h, &r), BT_WAIT_MS));
	EXPECT_EQ(0, r.row);
	EXPECT_EQ(2, r.nr_suspended);
	EXPECT_EQ(0, r.nr_resumed);
	EXPECT_LE(r.switch_end_ns, r.parked_ns);
	EXPECT_LE(r.parked_ns, bt_now_ns(CLOCK_REALTIME));
	EXPECT_EQ(r.switch_end_ns, r.resumed_ns);

	/* Row 1: A's threads park, B's two leave their parking. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	ASSERT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A) &&
			       bt_job_none_parked(self->fd, BT_JOB_B),
			       BT_WAIT_MS));
	ASSERT_TRUE(WAIT_UNTIL(settled(self->h, &r), BT_WAIT_MS));
	EXPECT_EQ(1, r.row);
	EXPECT_EQ(2, r.nr_suspended);
	EXPECT_EQ(2, r.nr_resumed);
	EXPECT_LE(r.switch_end_ns, r.parked_ns);
	EXPECT_LE(r.switch_end_ns, r.resumed_ns);
	EXPECT_LE(r.resumed_ns, bt_now_ns(CLOCK_REALTIME));
}

/*
 * A child that blocks in read() on @fds[0] until a byte comes, then sets
 * flags[0] and spins: it must never get there while its job is suspended.
 */
static pid_t reader_start(int fds[2], volatile int **flags)
{
	pid_t pid;
	char c;

	*flags = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (*flags == MAP_FAILED || pipe(fds))
		return -1;
	pid = fork();
	if (!pid) {
		close(fds[1]);
		if (read(fds[0], &c, 1) == 1)
			(*flags)[0] = 1;
		for (;;)
			pause();
	}
	close(fds[0]);
	return pid;
}

TEST_F(settle, blocked_tasks_are_not_waited_for)
{
	struct bcs_slice_record r, r2;
	volatile int *flags = NULL;
	int fds[2], status;
	pid_t pid;

	pid = reader_start(fds, &flags);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, pid, 0, NULL));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	ASSERT_TRUE(WAIT_UNTIL(bt_thread_state(pid, pid) == 'S', BT_WAIT_MS));

	/* Asleep in read(): told to park, not waited for. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	ASSERT_TRUE(newest(self->h, &r));
	EXPECT_EQ(1, r.nr_suspended);
	EXPECT_EQ(r.switch_end_ns, r.parked_ns);
	EXPECT_EQ(r.switch_end_ns, r.resumed_ns);

	/* Woken, it parks before read() returns to user space. */
	ASSERT_EQ(1, write(fds[1], "x", 1));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	EXPECT_EQ(0, flags[0]);
	ASSERT_TRUE(newest(self->h, &r2));
	EXPECT_EQ(r.seq, r2.seq);
	EXPECT_EQ(r.parked_ns, r2.parked_ns);

	/* Resumed, it leaves its parking and finishes the read. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	EXPECT_TRUE(WAIT_UNTIL(flags[0], BT_WAIT_MS));
	ASSERT_TRUE(WAIT_UNTIL(settled(self->h, &r2), BT_WAIT_MS));
	EXPECT_EQ(1, r2.nr_resumed);
	EXPECT_LE(r2.switch_end_ns, r2.resumed_ns);

	kill(pid, SIGKILL);
	EXPECT_EQ(pid, bt_waitpid_bounded(pid, &status, BT_WAIT_MS));
	close(fds[1]);
	munmap((void *)flags, 4096);
}

/*
 * Suspend job A, whose one spinning thread is pinned to a CPU that a
 * real-time task holds: the switch cannot take effect until the thread
 * gets the CPU back.  @leave: detach it instead of letting it run.
 */
static void starved(FIXTURE_DATA(settle) *self,
		    struct __test_metadata *_metadata, bool leave)
{
	struct bcs_slice_record r, r2;
	uint32_t nr;

	if (sysconf(_SC_NPROCESSORS_ONLN) <= HOG_CPU)
		SKIP(return, "needs CPU %d", HOG_CPU);
	ASSERT_EQ(0, pin(0, 0));
	ASSERT_EQ(0, bt_burner_start(&self->a, 1, false));
	ASSERT_EQ(0, pin(self->a.sh->tid[0], HOG_CPU));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->a.pid, 0, NULL));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));

	ASSERT_EQ(0, hog_start(&self->hog));
	EXPECT_EQ('R', bt_thread_state(self->a.pid, self->a.sh->tid[0]));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	ASSERT_TRUE(newest(self->h, &r));
	EXPECT_EQ(1, r.row);
	EXPECT_EQ(1, r.nr_suspended);
	EXPECT_EQ(0, r.parked_ns) TH_LOG("a thread without a CPU parked");
	bt_sleep_ms(50);
	ASSERT_TRUE(newest(self->h, &r2));
	EXPECT_EQ(r.seq, r2.seq);
	EXPECT_EQ(0, r2.parked_ns);
	EXPECT_FALSE(bt_job_all_parked(self->fd, BT_JOB_A));

	if (leave) {
		/* Leaving the job settles the switch at once. */
		ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, self->a.pid, 0,
				       &nr));
		ASSERT_TRUE(newest(self->h, &r2));
		EXPECT_EQ(r.seq, r2.seq);
		EXPECT_LE(r2.switch_end_ns, r2.parked_ns);
		hog_stop(&self->hog);
		return;
	}
	hog_stop(&self->hog);
	ASSERT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	ASSERT_TRUE(WAIT_UNTIL(newest(self->h, &r2) && r2.parked_ns,
			       BT_WAIT_MS));
	EXPECT_EQ(r.seq, r2.seq);
	EXPECT_LE(r2.switch_end_ns, r2.parked_ns);
}

/*
 * A strobe for @row due in @ms milliseconds: its hrtimer fires on the
 * calling CPU.
 */
static int strobe_soon(int fd, uint32_t row, unsigned int ms)
{
	struct bcs_strobe s = { .size = sizeof(s), .row = row };
	struct bcs_state st;
	int ret = bt_get_state(fd, &st);

	if (ret)
		return ret;
	s.slice = st.slice + 1;
	s.deadline_ns = bt_now_ns(CLOCK_REALTIME) + ms * 1000000ULL;
	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

/*
 * Jobs A (row 0) and B (row 1), one spinning thread each, and this process
 * all on one CPU, where the switch's hrtimer interrupts the thread that
 * runs.  Were B woken at once, it would preempt that thread of the old
 * row on its way to park, and the old thread would park only when the
 * scheduler came back to it.  Draining first, the record of every switch
 * must show the old row parked before the new row left its parking,
 * except in a switch cut short at the drain limit (host hiccups under
 * emulation); most must not be cut.
 */
TEST_F(settle, next_row_waits_for_the_old_row)
{
	int i, cut = 0, disorder = 0;
	struct bcs_slice_record r;
	uint64_t seq;

	/* The limit becomes half a slice. */
	ASSERT_EQ(0, bt_write_file(DRAIN_PARAM, "1000000"));
	ASSERT_EQ(0, pin(0, 0));
	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_A, 0, &self->a, 1));
	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_B, 1, &self->b, 1));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	ASSERT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_B),
			       BT_WAIT_MS));
	ASSERT_TRUE(WAIT_UNTIL(settled(self->h, &r), BT_WAIT_MS));
	seq = r.seq;

	for (i = 0; i < ORDER_SWITCHES; i++) {
		ASSERT_EQ(0, strobe_soon(self->fd, (i + 1) % 2, 2));
		ASSERT_TRUE(WAIT_UNTIL(settled(self->h, &r) && r.seq != seq,
				       BT_WAIT_MS));
		seq = r.seq;
		EXPECT_EQ(1, r.nr_suspended);
		EXPECT_EQ(1, r.nr_resumed);
		if (r.flags & BCS_SLICE_DRAIN_CUT) {
			cut++;
			continue;
		}
		if (r.resumed_ns < r.parked_ns) {
			disorder++;
			TH_LOG("switch %d: resumed %llu ns before the old row parked",
			       i, (unsigned long long)(r.parked_ns - r.resumed_ns));
		}
		/* Let the new row run a little before the next switch. */
		bt_sleep_ms(5);
	}
	EXPECT_EQ(0, disorder);
	EXPECT_LE(cut, ORDER_SWITCHES / 2);
}

/*
 * Job A's one spinning thread is starved on HOG_CPU, job B is parked, and
 * the switch to B's row waits for A.  @drain_us: the limit of that wait.
 */
static void held_back(FIXTURE_DATA(settle) *self,
		      struct __test_metadata *_metadata, const char *drain_us)
{
	struct bcs_state st0, st;
	struct bcs_slice_record r;

	if (sysconf(_SC_NPROCESSORS_ONLN) <= HOG_CPU)
		SKIP(return, "needs CPU %d", HOG_CPU);
	ASSERT_EQ(0, bt_write_file(DRAIN_PARAM, drain_us));
	ASSERT_EQ(0, pin(0, 0));
	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_A, 0, &self->a, 1));
	ASSERT_EQ(0, pin(self->a.sh->tid[0], HOG_CPU));
	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_B, 1, &self->b, 1));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	ASSERT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_B),
			       BT_WAIT_MS));
	ASSERT_TRUE(WAIT_UNTIL(settled(self->h, &r), BT_WAIT_MS));
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));

	ASSERT_EQ(0, hog_start(&self->hog));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	/* B runs while A, without a CPU, has still not parked. */
	ASSERT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_B),
			       HOG_LIMIT_MS / 2));
	ASSERT_TRUE(WAIT_UNTIL(newest(self->h, &r) && r.resumed_ns,
			       BT_WAIT_MS));
	EXPECT_EQ(0, r.parked_ns) TH_LOG("the hog let A park");
	EXPECT_FALSE(bt_job_all_parked(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	if (strcmp(drain_us, "0")) {
		EXPECT_TRUE(r.flags & BCS_SLICE_DRAIN_CUT);
		EXPECT_EQ(st0.drain_cuts + 1, st.drain_cuts);
		EXPECT_LE(r.switch_end_ns + 1000ULL * atoi(drain_us),
			  r.resumed_ns);
	} else {
		EXPECT_FALSE(r.flags & BCS_SLICE_DRAIN_CUT);
		EXPECT_EQ(st0.drain_cuts, st.drain_cuts);
	}

	/* A parks as soon as it gets its CPU back. */
	hog_stop(&self->hog);
	EXPECT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
}

TEST_F(settle, drain_limit_wakes_the_next_row)
{
	held_back(self, _metadata, "2000");
}

TEST_F(settle, drain_off_wakes_the_next_row_at_once)
{
	held_back(self, _metadata, "0");
}

TEST_F(settle, drain_limit_is_checked)
{
	char buf[32];

	EXPECT_EQ(-EINVAL, bt_write_file(DRAIN_PARAM, "1000001"));
	EXPECT_EQ(-EINVAL, bt_write_file(DRAIN_PARAM, "-1"));
	EXPECT_EQ(-EINVAL, bt_write_file(DRAIN_PARAM, "1ms"));
	ASSERT_EQ(0, bt_read_file(DRAIN_PARAM, buf, sizeof(buf)));
	EXPECT_STREQ(self->drain_us, buf);
	ASSERT_EQ(0, bt_write_file(DRAIN_PARAM, "0"));
	ASSERT_EQ(0, bt_write_file(DRAIN_PARAM, "1000000"));
}

TEST_F(settle, starved_task_holds_the_switch_open)
{
	starved(self, _metadata, false);
}

TEST_F(settle, task_leaving_its_job_settles_the_switch)
{
	starved(self, _metadata, true);
}

BT_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * Fail-open: losing the driver, a silent driver (watchdog) and unloading
 * the module all resume every suspended job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

FIXTURE(failopen) {
	int fd;
	struct bcs_config saved;
	struct bt_burner a, b;
	pid_t driver;
	pid_t holder;		/* the driver's child holding its file */
};

FIXTURE_SETUP(failopen)
{
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, bt_config(self->fd, 0, 0, 0, 0, &self->saved));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_burner_start(&self->a, 2, false));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->a.pid, 0, NULL));
}

FIXTURE_TEARDOWN(failopen)
{
	if (self->driver > 0) {
		kill(self->driver, SIGKILL);
		bt_waitpid_bounded(self->driver, NULL, BT_WAIT_MS);
	}
	/* Not our child: reaped by init. */
	if (self->holder > 0)
		kill(self->holder, SIGKILL);
	if (self->fd < 0)
		self->fd = bt_open();
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		bt_config(self->fd, BCS_CONFIG_SLICE | BCS_CONFIG_WATCHDOG, 0,
			  self->saved.slice_ns, self->saved.watchdog_slices,
			  NULL);
		/* Resuming is asynchronous: parked tasks wake up and leave. */
		EXPECT_TRUE(bt_wait_none_parked(self->fd));
		close(self->fd);
	}
	bt_burner_stop(&self->a);
	bt_burner_stop(&self->b);
}

static bool runs_again(const struct bt_burner *b)
{
	uint64_t c[BT_MAX_THREADS];

	bt_burner_counters(b, c);
	return WAIT_UNTIL(bt_burner_all_advanced(b, c), BT_WAIT_MS);
}

/*
 * Driver child: take over, suspend job A, report through @up, wait for
 * a byte on @down, exit without any clean-up of its own.
 */
static void driver_child(int up, int down)
{
	int fd = bt_open();
	char c = 'p';

	if (fd < 0 || bt_drive(fd) || bt_suspend_row0(fd, BT_JOB_A))
		c = 'e';
	if (write(up, &c, 1) != 1)
		_exit(2);
	if (read(down, &c, 1) < 0)
		_exit(3);
	_exit(0);
}

/*
 * Only the release of the driving file fails open: closing another file
 * on /dev/bcs does not, nor does the exit of a child that inherited the
 * driving file (the file lives on in the driver).
 */
TEST_F(failopen, not_on_other_close)
{
	struct bcs_state st;
	int other, status;
	pid_t child;

	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));

	other = bt_open();
	ASSERT_LE(0, other);
	ASSERT_EQ(0, close(other));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		_exit(0);	/* closes its copy of the driving file */
	ASSERT_EQ(child, bt_waitpid_bounded(child, &status, BT_WAIT_MS));

	bt_sleep_ms(200);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_DRIVEN, st.mode);
	EXPECT_EQ(getpid(), st.driver_pid);
	EXPECT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
}

TEST_F(failopen, on_driver_close)
{
	struct bcs_state st0, st;
	int up[2], down[2], status;
	char c = 0;

	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	self->driver = fork();
	ASSERT_LE(0, self->driver);
	if (self->driver == 0)
		driver_child(up[1], down[0]);
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ('p', c) TH_LOG("driver could not suspend the job");
	ASSERT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_DRIVEN, st.mode);
	EXPECT_EQ(self->driver, st.driver_pid);

	/* The driver goes away: its file is closed by exit. */
	ASSERT_EQ(1, write(down[1], "x", 1));
	ASSERT_EQ(self->driver, bt_waitpid_bounded(self->driver, &status,
						   BT_WAIT_MS));
	self->driver = 0;
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	EXPECT_TRUE(runs_again(&self->a));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_OFF, st.mode);
	EXPECT_EQ(0, st.driver_pid);
	EXPECT_EQ(0, st.nr_parked);
	EXPECT_LT(st0.failopens, st.failopens);
	close(up[0]);
	close(down[1]);
}

/*
 * Driver child that leaves a child of its own holding the driving file:
 * take over, suspend job A, fork the holder, report its pid through @up;
 * then on 'c' from @down close the file and report 'c', on 'x' exit.
 */
static void driver_with_holder(int up, int down)
{
	int fd = bt_open();
	pid_t holder;
	char c;

	if (fd < 0 || bt_drive(fd) || bt_suspend_row0(fd, BT_JOB_A))
		_exit(2);
	holder = fork();
	if (holder < 0)
		_exit(2);
	if (holder == 0) {
		for (;;)
			pause();
	}
	if (write(up, &holder, sizeof(holder)) != sizeof(holder))
		_exit(2);
	while (read(down, &c, 1) == 1) {
		if (c == 'x')
			_exit(0);
		close(fd);
		if (write(up, &c, 1) != 1)
			_exit(2);
	}
	_exit(3);
}

/*
 * The driving process closing its file, or exiting, fails open even
 * though its child still holds the file (and would for ever, were it a
 * task of a suspended job).
 */
static void gone_with_holder(struct __test_metadata *_metadata,
			     FIXTURE_DATA(failopen) *self, char how)
{
	struct bcs_state st0, st;
	int up[2], down[2], status;
	char c = 0;

	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	self->driver = fork();
	ASSERT_LE(0, self->driver);
	if (self->driver == 0)
		driver_with_holder(up[1], down[0]);
	close(up[1]);
	close(down[0]);
	ASSERT_EQ((ssize_t)sizeof(self->holder),
		  read(up[0], &self->holder, sizeof(self->holder)))
		TH_LOG("driver could not suspend the job");
	ASSERT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
	ASSERT_EQ(1, write(down[1], &how, 1));
	if (how == 'x') {
		ASSERT_EQ(self->driver,
			  bt_waitpid_bounded(self->driver, &status,
					     BT_WAIT_MS));
		self->driver = 0;
	} else {
		ASSERT_EQ(1, read(up[0], &c, 1));
	}
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	EXPECT_TRUE(runs_again(&self->a));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_OFF, st.mode);
	EXPECT_EQ(0, st.driver_pid);
	EXPECT_LT(st0.failopens, st.failopens);
	/* The holder lives on with the file. */
	EXPECT_EQ(0, kill(self->holder, 0));
	close(up[0]);
	close(down[1]);
}

TEST_F(failopen, on_driver_close_while_a_child_holds_it)
{
	gone_with_holder(_metadata, self, 'c');
}

TEST_F(failopen, on_driver_exit_while_a_child_holds_it)
{
	gone_with_holder(_metadata, self, 'x');
}

/*
 * "Fail open within watchdog_slices slices", counted in slices from the
 * records: after the driver's last strobe (which carries a prediction),
 * the node switches the prediction one slice later, then nothing, until
 * the fail-open record, which begins no earlier than watchdog_slices
 * slices after the last strobe's deadline, and not much later.
 */
#define WD_SLICES	4
#define WD_SLICE_NS	50000000ULL

TEST_F(failopen, within_watchdog_slices_counted_in_records)
{
	struct bcs_slice_record rec, last = { 0 }, fo = { 0 };
	struct bcs_state st0, st;
	struct bcs_strobe s = {
		.size = sizeof(s),
		.flags = BCS_STROBE_PREDICT,
		.row = 1,
		.next_row = 1,
	};
	int sfd, i, after = 0, predicted = 0;
	uint64_t slices;

	sfd = open(BCS_STAT_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, sfd);
	for (i = 0; i < 200000 && read(sfd, &rec, sizeof(rec)) > 0; i++)
		;
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_ALL, BCS_MODE_DRIVEN,
			       WD_SLICE_NS, WD_SLICES, NULL));
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	s.slice = st0.slice + 1;
	s.deadline_ns = bt_now_ns(CLOCK_REALTIME) + WD_SLICE_NS;
	ASSERT_EQ(0, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	EXPECT_TRUE(WAIT_UNTIL(!bt_get_state(self->fd, &st) &&
			       st.failopens > st0.failopens, BT_WAIT_MS));
	/* Entering driven mode wrote a record (every job resumed) first. */
	for (i = 0; i < 200000 && read(sfd, &rec, sizeof(rec)) > 0; i++) {
		if (!last.slice) {
			if (rec.slice == s.slice &&
			    !(rec.flags & (BCS_SLICE_PREDICTED |
					   BCS_SLICE_FAILOPEN)))
				last = rec;
			continue;
		}
		if (rec.flags & BCS_SLICE_FAILOPEN) {
			fo = rec;
			break;
		}
		if (rec.flags & BCS_SLICE_PREDICTED)
			predicted++;
		else
			after++;
	}
	close(sfd);
	ASSERT_EQ(s.slice, last.slice) TH_LOG("no record of the strobe");
	ASSERT_TRUE(fo.flags & BCS_SLICE_FAILOPEN);
	/* Between them only the prediction, once. */
	EXPECT_EQ(1, predicted);
	EXPECT_EQ(0, after);
	slices = (fo.switch_start_ns - last.deadline_ns) / WD_SLICE_NS;
	EXPECT_LE(WD_SLICES, slices);
	/* Generous: the timer of an emulated guest may run late. */
	EXPECT_GE(2 * WD_SLICES + 2, slices);
}

TEST_F(failopen, on_watchdog)
{
	struct bcs_state st0, st;
	struct bcs_slice_record rec;
	int sfd, i;
	bool seen = false;

	sfd = open(BCS_STAT_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, sfd);
	for (i = 0; i < 200000 && read(sfd, &rec, sizeof(rec)) > 0; i++)
		;
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_ALL, BCS_MODE_DRIVEN,
			       10000000, 3, NULL));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	/* No more strobes: within a bounded time the job runs again. */
	EXPECT_TRUE(WAIT_UNTIL(!bt_get_state(self->fd, &st) && st.failopen,
			       BT_WAIT_MS));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	EXPECT_TRUE(runs_again(&self->a));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(1, st.failopen);
	EXPECT_EQ(BCS_MODE_DRIVEN, st.mode);
	EXPECT_EQ(getpid(), st.driver_pid);
	EXPECT_EQ(st0.failopens + 1, st.failopens);
	for (i = 0; i < 200000 && read(sfd, &rec, sizeof(rec)) > 0; i++)
		seen |= !!(rec.flags & BCS_SLICE_FAILOPEN);
	EXPECT_TRUE(seen) TH_LOG("no fail-open record in " BCS_STAT_DEV);
	close(sfd);

	/* The next strobe resumes gang scheduling (and re-arms the dog). */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	EXPECT_TRUE(WAIT_UNTIL(!bt_get_state(self->fd, &st) &&
			       st.failopens == st0.failopens + 2, BT_WAIT_MS));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
}

/*
 * A driver whose clock runs ahead: every strobe's deadline lies a second
 * ahead, and the next strobe replaces it before it is due, so nothing
 * ever switches.  The watchdog counts from the last switch, not from the
 * newest deadline: it still fails open.
 */
TEST_F(failopen, on_watchdog_strobes_never_due)
{
	struct bcs_strobe s = { .size = sizeof(s), .row = 1 };
	struct bcs_state st0, st;
	int i;

	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	/*
	 * Slices of 100 ms: the watchdog's three must outlast parking the
	 * job in a busy emulated guest, or it fails open before the job is
	 * seen suspended.
	 */
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_ALL, BCS_MODE_DRIVEN,
			       100000000, 3, NULL));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	s.slice = st.slice;
	/* Bounded: a strobe every 5 ms for at most BT_WAIT_MS. */
	for (i = 0; i < BT_WAIT_MS / 5; i++) {
		s.slice++;
		s.deadline_ns = bt_now_ns(CLOCK_REALTIME) + 1000000000ULL;
		ASSERT_EQ(0, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
		ASSERT_EQ(0, bt_get_state(self->fd, &st));
		if (st.failopen)
			break;
		bt_sleep_ms(5);
	}
	EXPECT_EQ(1, st.failopen)
		TH_LOG("%d strobes never due kept it suspended", i);
	EXPECT_EQ(st0.failopens + 1, st.failopens);
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	EXPECT_TRUE(runs_again(&self->a));
}

TEST_F(failopen, watchdog_off_keeps_suspended)
{
	struct bcs_state st;
	int i;

	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_ALL, BCS_MODE_DRIVEN,
			       10000000, 0, NULL));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	/* Many slices without strobes: nothing happens with the dog off. */
	for (i = 0; i < 30; i++) {
		bt_sleep_ms(10);
		ASSERT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
	}
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(0, st.failopen);
}

static int run_cmd(const char *fmt, const char *arg)
{
	char cmd[1024];
	int status;

	snprintf(cmd, sizeof(cmd), fmt, arg);
	fflush(stdout);
	fflush(stderr);
	status = system(cmd);
	if (status < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F_TIMEOUT(failopen, on_unload, 120)
{
	const char *mod = getenv("BCS_MODULE");
	const char *params = getenv("BCS_MODULE_PARAMS");
	char cmd[1024];

	if (!mod || !*mod)
		SKIP(return, "BCS_MODULE not set: cannot reload the module");
	if (access(mod, R_OK))
		SKIP(return, "BCS_MODULE=%s not readable", mod);

	/*
	 * STANDALONE with the longest slice, so that no open file is needed
	 * to keep job A suspended: B in row 1 runs, A in row 0 waits.
	 */
	ASSERT_EQ(0, bt_burner_start(&self->b, 1, false));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_B, 1, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_B, self->b.pid, 0, NULL));
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_MODE | BCS_CONFIG_SLICE,
			       BCS_MODE_STANDALONE, BCS_SLICE_NS_MAX, 0,
			       NULL));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	close(self->fd);
	self->fd = -1;

	EXPECT_EQ(0, run_cmd("rmmod bcs", NULL));
	EXPECT_FALSE(bt_exists(BCS_DEV));
	EXPECT_TRUE(runs_again(&self->a));
	EXPECT_TRUE(runs_again(&self->b));
	EXPECT_EQ(0, waitpid(self->a.pid, NULL, WNOHANG));

	/* Put the module back for the tests that follow. */
	snprintf(cmd, sizeof(cmd), "insmod '%s' %s", mod, params ? params : "");
	ASSERT_EQ(0, run_cmd("%s", cmd));
	ASSERT_TRUE(WAIT_UNTIL(bt_exists(BCS_DEV), BT_WAIT_MS));
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	/* A fresh module knows nothing of the old jobs. */
	EXPECT_EQ(0, bt_nr_jobs(self->fd));
}

BT_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/bcs ioctl interface: jobs, ids, rows, configuration, state,
 * attach and detach.
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

FIXTURE(ioctl) {
	int fd;
	struct bcs_config saved;
	struct bt_burner b1, b2;
};

FIXTURE_SETUP(ioctl)
{
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, bt_config(self->fd, 0, 0, 0, 0, &self->saved));
}

FIXTURE_TEARDOWN(ioctl)
{
	bt_burner_stop(&self->b1);
	bt_burner_stop(&self->b2);
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		/* Restore slice length and watchdog changed by a test. */
		bt_config(self->fd, BCS_CONFIG_SLICE | BCS_CONFIG_WATCHDOG, 0,
			  self->saved.slice_ns, self->saved.watchdog_slices,
			  NULL);
		close(self->fd);
	}
}

/* Does @file under debugfs bcs/ hold a line starting with @prefix? */
static bool debugfs_has(const char *file, const char *prefix)
{
	char path[128], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/bcs/%s", file);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, prefix, strlen(prefix));
	fclose(f);
	return found;
}

/*
 * debugfs bcs/ says what the ioctls say: state, jobs, tasks and the newest
 * slices, here for a suspended job of two tasks in row 0 while row 1 runs.
 */
TEST_F(ioctl, debugfs_matches_the_module)
{
	char want[128];
	struct bcs_state st;
	int i;

	if (!bt_exists("/sys/kernel/debug/bcs") &&
	    system("mount -t debugfs none /sys/kernel/debug 2>/dev/null"))
		SKIP(return, "debugfs not mounted and cannot be");
	ASSERT_TRUE(bt_exists("/sys/kernel/debug/bcs/state"));
	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_A, 0, &self->b1, 2));
	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));

	EXPECT_TRUE(debugfs_has("state", "mode: driven"));
	EXPECT_TRUE(debugfs_has("state", "row: 1"));
	EXPECT_TRUE(debugfs_has("state", "jobs: 1"));
	EXPECT_TRUE(debugfs_has("state", "tasks: 2"));
	EXPECT_TRUE(debugfs_has("state", "parked: 2"));
	snprintf(want, sizeof(want), "driver_pid: %d", getpid());
	EXPECT_TRUE(debugfs_has("state", want));
	snprintf(want, sizeof(want), "slice: %llu",
		 (unsigned long long)st.slice);
	EXPECT_TRUE(debugfs_has("state", want));
	snprintf(want, sizeof(want), "%u 0 suspended 2 2 ", BT_JOB_A);
	EXPECT_TRUE(debugfs_has("jobs", want)) TH_LOG("no line '%s'", want);
	for (i = 0; i < self->b1.nthreads; i++) {
		snprintf(want, sizeof(want), "%d %d %u parked ",
			 self->b1.sh->tid[i], self->b1.pid, BT_JOB_A);
		EXPECT_TRUE(debugfs_has("tasks", want))
			TH_LOG("no line '%s'", want);
	}
	EXPECT_TRUE(debugfs_has("slices", "seq slice row flags"));
	/* "<seq> <slice> <row> ": the newest switch, to row 1. */
	EXPECT_TRUE(system("awk 'END { exit !($3 == 1) }' "
			   "/sys/kernel/debug/bcs/slices") == 0);
}

TEST_F(ioctl, get_state)
{
	struct bcs_state st;

	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(sizeof(st), st.size);
	EXPECT_EQ(BCS_VERSION, st.version);
	EXPECT_EQ(BCS_MODE_OFF, st.mode);
	EXPECT_EQ(0, st.nr_jobs);
	EXPECT_EQ(0, st.nr_parked);
	EXPECT_EQ(0, st.driver_pid);
	EXPECT_EQ(0, st.failopen);
	EXPECT_LT(0, st.stat_records);
	EXPECT_LE(BCS_SLICE_NS_MIN, st.slice_ns);
	EXPECT_GE(BCS_SLICE_NS_MAX, st.slice_ns);
	EXPECT_GE(BCS_WATCHDOG_MAX, st.watchdog_slices);
	/* The configuration and the state agree. */
	EXPECT_EQ(self->saved.slice_ns, st.slice_ns);
	EXPECT_EQ(self->saved.watchdog_slices, st.watchdog_slices);
	EXPECT_EQ(self->saved.mode, st.mode);
}

TEST_F(ioctl, create_explicit_id)
{
	struct bcs_job_info ji;
	uint32_t id = 0;

	ASSERT_EQ(0, bt_job_create(self->fd, 4242, BCS_ROW_NONE, &id));
	EXPECT_EQ(4242, id);
	EXPECT_EQ(-EEXIST, bt_job_create(self->fd, 4242, 0, NULL));
	ASSERT_EQ(0, bt_job_info(self->fd, 4242, &ji));
	EXPECT_EQ(BCS_ROW_NONE, ji.row);
	EXPECT_EQ(BCS_JOB_RUNNING, ji.state);
	EXPECT_EQ(0, ji.nr_tasks);
	EXPECT_EQ(0, ji.nr_parked);
	EXPECT_EQ(1, bt_nr_jobs(self->fd));
	EXPECT_EQ(0, bt_job_destroy(self->fd, 4242));
	EXPECT_EQ(-ENOENT, bt_job_destroy(self->fd, 4242));
	EXPECT_EQ(-ENOENT, bt_job_info(self->fd, 4242, &ji));
	EXPECT_EQ(0, bt_nr_jobs(self->fd));
}

TEST_F(ioctl, create_allocated_id)
{
	uint32_t a = 0, b = 0, c = 0;
	struct bcs_state st;

	ASSERT_EQ(0, bt_job_create(self->fd, 0, BCS_ROW_NONE, &a));
	ASSERT_EQ(0, bt_job_create(self->fd, 0, 0, &b));
	EXPECT_NE(0, a);
	EXPECT_NE(0, b);
	EXPECT_NE(a, b);
	EXPECT_GE(BCS_JOB_ID_MAX, a);
	EXPECT_GE(BCS_JOB_ID_MAX, b);
	/* An allocated id is really taken. */
	EXPECT_EQ(-EEXIST, bt_job_create(self->fd, a, 0, NULL));
	/* An explicit id is never handed out again by the allocator. */
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, 0, 0, &c));
	EXPECT_NE(BT_JOB_A, c);
	EXPECT_NE(a, c);
	EXPECT_NE(b, c);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(4, st.nr_jobs);
	EXPECT_EQ(0, bt_job_destroy(self->fd, a));
	EXPECT_EQ(0, bt_job_destroy(self->fd, b));
	EXPECT_EQ(0, bt_job_destroy(self->fd, c));
	EXPECT_EQ(0, bt_job_destroy(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(0, st.nr_jobs);
}

TEST_F(ioctl, id_range)
{
	struct bcs_job_info ji;
	int r;

	EXPECT_EQ(0, bt_job_create(self->fd, 1, BCS_ROW_NONE, NULL));
	EXPECT_EQ(0, bt_job_create(self->fd, BCS_JOB_ID_MAX, 0, NULL));
	EXPECT_EQ(0, bt_job_info(self->fd, BCS_JOB_ID_MAX, &ji));
	EXPECT_EQ(-EINVAL, bt_job_create(self->fd, BCS_JOB_ID_MAX + 1U, 0,
					 NULL));
	EXPECT_EQ(-EINVAL, bt_job_create(self->fd, 0xffffffffU, 0, NULL));
	EXPECT_EQ(2, bt_nr_jobs(self->fd));
	/* Ids that cannot exist are unknown or invalid, never found. */
	r = bt_job_destroy(self->fd, BCS_JOB_ID_MAX + 1U);
	EXPECT_TRUE(r == -ENOENT || r == -EINVAL)
		TH_LOG("destroy of id > max: %d", r);
	r = bt_job_destroy(self->fd, 0);
	EXPECT_TRUE(r == -ENOENT || r == -EINVAL)
		TH_LOG("destroy of id 0: %d", r);
	EXPECT_EQ(0, bt_job_destroy(self->fd, 1));
	EXPECT_EQ(0, bt_job_destroy(self->fd, BCS_JOB_ID_MAX));
}

TEST_F(ioctl, rows)
{
	struct bcs_job_info ji;

	EXPECT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	EXPECT_EQ(0, bt_job_create(self->fd, BT_JOB_B, BCS_ROWS_MAX - 1,
				   NULL));
	EXPECT_EQ(-EINVAL, bt_job_create(self->fd, 7, BCS_ROWS_MAX, NULL));
	EXPECT_EQ(-EINVAL, bt_job_create(self->fd, 7, BCS_ROW_NONE - 1, NULL));
	EXPECT_EQ(-ENOENT, bt_job_info(self->fd, 7, &ji));

	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(0, ji.row);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_B, &ji));
	EXPECT_EQ(BCS_ROWS_MAX - 1, ji.row);

	EXPECT_EQ(0, bt_job_set_row(self->fd, BT_JOB_A, 17));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(17, ji.row);
	EXPECT_EQ(-EINVAL, bt_job_set_row(self->fd, BT_JOB_A, BCS_ROWS_MAX));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(17, ji.row);
	EXPECT_EQ(0, bt_job_set_row(self->fd, BT_JOB_A, BCS_ROW_NONE));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(BCS_ROW_NONE, ji.row);
	EXPECT_EQ(-ENOENT, bt_job_set_row(self->fd, 7, 0));
}

TEST_F(ioctl, config_ranges)
{
	struct bcs_config c;

	ASSERT_EQ(0, bt_config(self->fd, 0, 0, 0, 0, &c));
	EXPECT_EQ(BCS_MODE_OFF, c.mode);
	EXPECT_EQ(sizeof(c), c.size);

	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_SLICE, 0,
			       BCS_SLICE_NS_MIN, 0, &c));
	EXPECT_EQ(BCS_SLICE_NS_MIN, c.slice_ns);
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_SLICE, 0,
			       BCS_SLICE_NS_MAX, 0, &c));
	EXPECT_EQ(BCS_SLICE_NS_MAX, c.slice_ns);
	EXPECT_EQ(-EINVAL, bt_config(self->fd, BCS_CONFIG_SLICE, 0,
				     BCS_SLICE_NS_MIN - 1, 0, NULL));
	EXPECT_EQ(-EINVAL, bt_config(self->fd, BCS_CONFIG_SLICE, 0,
				     BCS_SLICE_NS_MAX + 1, 0, NULL));
	EXPECT_EQ(-EINVAL, bt_config(self->fd, BCS_CONFIG_SLICE, 0, 0, 0,
				     NULL));

	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_WATCHDOG, 0, 0,
			       BCS_WATCHDOG_MAX, &c));
	EXPECT_EQ(BCS_WATCHDOG_MAX, c.watchdog_slices);
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_WATCHDOG, 0, 0, 0, &c));
	EXPECT_EQ(0, c.watchdog_slices);
	EXPECT_EQ(-EINVAL, bt_config(self->fd, BCS_CONFIG_WATCHDOG, 0, 0,
				     BCS_WATCHDOG_MAX + 1, NULL));

	EXPECT_EQ(-EINVAL, bt_config(self->fd, BCS_CONFIG_MODE, 3, 0, 0,
				     NULL));
	EXPECT_EQ(-EINVAL, bt_config(self->fd, BCS_CONFIG_ALL + 1, 0, 0, 0,
				     NULL));

	/* A rejected call changes nothing, not even its valid fields. */
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_SLICE, 0, 20000000, 0,
			       NULL));
	EXPECT_EQ(-EINVAL, bt_config(self->fd,
				     BCS_CONFIG_SLICE | BCS_CONFIG_WATCHDOG,
				     0, 30000000, BCS_WATCHDOG_MAX + 1, NULL));
	ASSERT_EQ(0, bt_config(self->fd, 0, 0, 0, 0, &c));
	EXPECT_EQ(20000000, c.slice_ns);
	EXPECT_EQ(0, c.watchdog_slices);
	EXPECT_EQ(BCS_MODE_OFF, c.mode);

	/* Fields not named in @set are ignored. */
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_WATCHDOG, 1, 1, 5, &c));
	EXPECT_EQ(20000000, c.slice_ns);
	EXPECT_EQ(5, c.watchdog_slices);
	EXPECT_EQ(BCS_MODE_OFF, c.mode);
}

TEST_F(ioctl, modes_and_state)
{
	struct bcs_state st;
	struct bcs_config c;

	/* Strobes need a mode that switches. */
	EXPECT_EQ(-ENOTCONN, bt_strobe_now(self->fd, 0));

	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_MODE, BCS_MODE_STANDALONE,
			       0, 0, &c));
	EXPECT_EQ(BCS_MODE_STANDALONE, c.mode);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_STANDALONE, st.mode);
	EXPECT_EQ(0, st.driver_pid);

	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_DRIVEN, st.mode);
	EXPECT_EQ(getpid(), st.driver_pid);
	EXPECT_EQ(0, st.failopen);
	EXPECT_EQ(0, bt_strobe_now(self->fd, 0));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(0, st.row);
	EXPECT_LE(1, st.strobes);

	ASSERT_EQ(0, bt_set_mode(self->fd, BCS_MODE_OFF));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_OFF, st.mode);
	EXPECT_EQ(0, st.driver_pid);
	EXPECT_EQ(-ENOTCONN, bt_strobe_now(self->fd, 0));
}

TEST_F(ioctl, attach_process)
{
	struct bcs_task_stat *ts = NULL;
	struct bcs_job_info ji;
	struct bcs_state st;
	uint32_t nr = 0;
	int n, i, j;

	ASSERT_EQ(0, bt_burner_start(&self->b1, 4, true));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b1.pid, 0, &nr));
	EXPECT_EQ(4, nr);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(4, ji.nr_tasks);
	EXPECT_EQ(0, ji.nr_parked);
	EXPECT_EQ(BCS_JOB_RUNNING, ji.state);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(4, st.nr_tasks);

	n = bt_task_stats(self->fd, BT_JOB_A, &ts);
	ASSERT_EQ(4, n);
	for (i = 0; i < n; i++) {
		bool found = false;

		EXPECT_EQ(self->b1.pid, ts[i].tgid);
		EXPECT_EQ(BT_JOB_A, ts[i].job);
		EXPECT_NE(BCS_TASK_PARKED, ts[i].state);
		EXPECT_LT(0, ts[i].attach_ns);
		for (j = 0; j < 4; j++)
			found |= ts[i].pid == self->b1.sh->tid[j];
		EXPECT_TRUE(found) TH_LOG("unexpected tid %d", ts[i].pid);
	}
	free(ts);

	/* Attaching again to the same job is harmless. */
	nr = 0;
	EXPECT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b1.pid, 0, &nr));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(4, ji.nr_tasks);

	nr = 0;
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, self->b1.pid, 0, &nr));
	EXPECT_EQ(4, nr);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(0, ji.nr_tasks);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(0, st.nr_tasks);
	EXPECT_EQ(0, bt_task_stats(self->fd, BT_JOB_A, &ts));
	free(ts);
}

TEST_F(ioctl, attach_thread)
{
	struct bcs_task_stat *ts = NULL;
	struct bcs_job_info ji;
	pid_t tid;
	uint32_t nr = 0;
	int n;

	ASSERT_EQ(0, bt_burner_start(&self->b1, 3, true));
	tid = self->b1.sh->tid[2];
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, tid, BCS_ATTACH_THREAD,
			       &nr));
	EXPECT_EQ(1, nr);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(1, ji.nr_tasks);
	n = bt_task_stats(self->fd, BT_JOB_A, &ts);
	ASSERT_EQ(1, n);
	EXPECT_EQ(tid, ts[0].pid);
	EXPECT_EQ(self->b1.pid, ts[0].tgid);
	free(ts);

	/* The rest of the process can join later. */
	nr = 0;
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b1.pid, 0, &nr));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(3, ji.nr_tasks);

	nr = 0;
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, tid, BCS_ATTACH_THREAD,
			       &nr));
	EXPECT_EQ(1, nr);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(2, ji.nr_tasks);
	n = bt_task_stats(self->fd, BT_JOB_A, &ts);
	ASSERT_EQ(2, n);
	EXPECT_NE(tid, ts[0].pid);
	EXPECT_NE(tid, ts[1].pid);
	free(ts);
}

TEST_F(ioctl, attach_busy)
{
	struct bcs_job_info ji;
	uint32_t nr = 0;

	ASSERT_EQ(0, bt_burner_start(&self->b1, 2, true));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_B, 1, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b1.pid, 0, &nr));
	EXPECT_EQ(-EBUSY, bt_attach(self->fd, BT_JOB_B, self->b1.pid, 0,
				    NULL));
	EXPECT_EQ(-EBUSY, bt_attach(self->fd, BT_JOB_B, self->b1.sh->tid[1],
				    BCS_ATTACH_THREAD, NULL));
	/* A failed attach leaves both jobs as they were. */
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(2, ji.nr_tasks);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_B, &ji));
	EXPECT_EQ(0, ji.nr_tasks);

	/* After a detach the process is free to move. */
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, self->b1.pid, 0, NULL));
	EXPECT_EQ(0, bt_attach(self->fd, BT_JOB_B, self->b1.pid, 0, &nr));
	EXPECT_EQ(2, nr);
}

TEST_F(ioctl, attach_dead_and_unknown)
{
	int status, r;
	pid_t pid;

	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* The pid is now free (reuse within this test is unlikely). */
	EXPECT_EQ(-ESRCH, bt_attach(self->fd, BT_JOB_A, pid, 0, NULL));
	EXPECT_EQ(-ESRCH, bt_attach(self->fd, BT_JOB_A, pid,
				    BCS_ATTACH_THREAD, NULL));
	EXPECT_EQ(-ESRCH, bt_attach(self->fd, BT_JOB_A, 0x3fffffff, 0, NULL));
	r = bt_attach(self->fd, BT_JOB_A, -1, 0, NULL);
	EXPECT_TRUE(r == -ESRCH || r == -EINVAL) TH_LOG("pid -1: %d", r);
	EXPECT_EQ(-ENOENT, bt_attach(self->fd, BT_JOB_B, getpid(), 0, NULL));
	EXPECT_EQ(-ENOENT, bt_detach(self->fd, BT_JOB_B, getpid(), 0, NULL));
	EXPECT_EQ(-ESRCH, bt_detach(self->fd, BT_JOB_A, pid, 0, NULL));
}

TEST_F(ioctl, destroy_releases_tasks)
{
	struct bcs_state st;
	long long t0;
	uint32_t nr = 0;

	ASSERT_EQ(0, bt_burner_start(&self->b1, 2, false));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b1.pid, 0, &nr));
	ASSERT_EQ(2, nr);
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(0, st.nr_tasks);
	EXPECT_EQ(0, st.nr_jobs);
	/* The tasks keep running and are free to join another job. */
	t0 = bt_proc_ticks(self->b1.pid);
	ASSERT_LE(0, t0);
	EXPECT_TRUE(WAIT_UNTIL(bt_proc_ticks(self->b1.pid) > t0, BT_WAIT_MS));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_B, 0, NULL));
	EXPECT_EQ(0, bt_attach(self->fd, BT_JOB_B, self->b1.pid, 0, &nr));
	EXPECT_EQ(2, nr);
}

TEST_F(ioctl, job_list)
{
	struct bcs_job_list l = { .size = sizeof(l) };
	struct bcs_job_info info[8];
	int i;

	ASSERT_EQ(0, bt_job_create(self->fd, 11, 0, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, 12, 1, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, 13, BCS_ROW_NONE, NULL));

	/* count 0: only the number of jobs comes back. */
	ASSERT_EQ(0, bt_ioctl(self->fd, BCS_IOC_JOB_LIST, &l));
	EXPECT_EQ(3, l.count);

	/* Room for one: one record, the total in @count. */
	memset(info, 0xa5, sizeof(info));
	l.count = 1;
	l.jobs = (uintptr_t)info;
	ASSERT_EQ(0, bt_ioctl(self->fd, BCS_IOC_JOB_LIST, &l));
	EXPECT_EQ(3, l.count);
	EXPECT_TRUE(info[0].id >= 11 && info[0].id <= 13);
	EXPECT_EQ(0xa5a5a5a5U, info[1].id);

	/* Plenty of room: every job once. */
	memset(info, 0, sizeof(info));
	l.count = 8;
	ASSERT_EQ(0, bt_ioctl(self->fd, BCS_IOC_JOB_LIST, &l));
	ASSERT_EQ(3, l.count);
	for (i = 11; i <= 13; i++) {
		int k, seen = 0;

		for (k = 0; k < 3; k++) {
			if (info[k].id != (uint32_t)i)
				continue;
			seen++;
			EXPECT_EQ(i == 11 ? 0U : i == 12 ? 1U : BCS_ROW_NONE,
				  info[k].row);
		}
		EXPECT_EQ(1, seen);
	}
}

TEST_F(ioctl, task_stats_all_jobs)
{
	struct bcs_task_stat *ts = NULL;
	struct bcs_state st;
	int n, i, in_a = 0, in_b = 0;

	ASSERT_EQ(0, bt_burner_start(&self->b1, 2, true));
	ASSERT_EQ(0, bt_burner_start(&self->b2, 3, true));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_B, 1, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b1.pid, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_B, self->b2.pid, 0, NULL));
	n = bt_task_stats(self->fd, 0, &ts);
	ASSERT_EQ(5, n);
	for (i = 0; i < n; i++) {
		if (ts[i].job == BT_JOB_A && ts[i].tgid == self->b1.pid)
			in_a++;
		if (ts[i].job == BT_JOB_B && ts[i].tgid == self->b2.pid)
			in_b++;
	}
	free(ts);
	EXPECT_EQ(2, in_a);
	EXPECT_EQ(3, in_b);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(5, st.nr_tasks);
	EXPECT_EQ(2, st.nr_jobs);
	EXPECT_EQ(-ENOENT, bt_task_stats(self->fd, 999, &ts));
}

TEST_F(ioctl, stat_device_queries)
{
	struct bcs_job_list l = { .size = sizeof(l) };
	struct bcs_job j = { .size = sizeof(j), .row = 0 };
	struct bcs_state st1, st2;
	int sfd, r;

	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	sfd = bt_open_stat();
	ASSERT_LE(0, sfd);
	EXPECT_EQ(0, bt_get_state(sfd, &st1));
	EXPECT_EQ(0, bt_get_state(self->fd, &st2));
	EXPECT_EQ(st2.nr_jobs, st1.nr_jobs);
	EXPECT_EQ(BCS_VERSION, st1.version);
	EXPECT_EQ(0, bt_ioctl(sfd, BCS_IOC_JOB_LIST, &l));
	EXPECT_EQ(1, l.count);
	/* Only the queries exist on the read-only device. */
	r = bt_ioctl(sfd, BCS_IOC_JOB_CREATE, &j);
	EXPECT_TRUE(r == -ENOTTY || r == -EPERM || r == -EBADF)
		TH_LOG("JOB_CREATE on " BCS_STAT_DEV ": %d", r);
	EXPECT_EQ(1, bt_nr_jobs(self->fd));
	close(sfd);
}

/* BCS_IOC_JOB_* with every field given: 0 or -errno. */
static int job_ioc(int fd, unsigned long cmd, uint32_t flags, uint32_t id,
		   uint32_t row, uint64_t rows, uint64_t slice)
{
	struct bcs_job j = {
		.size = sizeof(j), .flags = flags, .id = id, .row = row,
		.rows = rows, .slice = slice,
	};

	return bt_ioctl(fd, cmd, &j);
}

#define BIT64(r)	(1ULL << (r))

/* Job @id is listed with home row @row and the set @rows. */
static bool job_rows_are(int fd, uint32_t id, uint32_t row, uint64_t rows)
{
	struct bcs_job_info ji;

	return !bt_job_info(fd, id, &ji) && ji.row == row && ji.rows == rows;
}

/* Job @id is listed in @state (enum bcs_job_state). */
static bool job_state_is(int fd, uint32_t id, uint32_t state)
{
	struct bcs_job_info ji;

	return !bt_job_info(fd, id, &ji) && ji.state == state;
}

static uint64_t job_slices_run(int fd, uint32_t id)
{
	struct bcs_job_info ji;

	return bt_job_info(fd, id, &ji) ? ~0ULL : ji.slices_run;
}

/* A driven strobe for slice @slice and @row, now; 0 or -errno. */
static int strobe_slice(int fd, uint64_t slice, uint32_t row, uint32_t flags)
{
	struct bcs_strobe s = {
		.size = sizeof(s), .flags = BCS_STROBE_NOW | flags,
		.slice = slice, .row = row,
		.deadline_ns = bt_now_ns(CLOCK_REALTIME),
	};

	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

static uint64_t cur_slice(int fd)
{
	struct bcs_state st;

	return bt_get_state(fd, &st) ? 0 : st.slice;
}

/*
 * struct bcs_job's @rows and @slice: only with their flags, no rows with
 * no row, a slice only for a move; every refusal leaves the job as it was.
 * The set is listed, @row's bit included.
 */
TEST_F(ioctl, rows_input)
{
	const unsigned long C = BCS_IOC_JOB_CREATE, S = BCS_IOC_JOB_SET_ROW;
	const unsigned long D = BCS_IOC_JOB_DESTROY;
	const uint32_t R = BCS_JOB_ROWS, AT = BCS_JOB_AT_SLICE;
	const uint32_t A = BT_JOB_A, B = BT_JOB_B;

	/* Create. */
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, 0, A, 0, BIT64(1), 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, 0, A, 0, 0, 5));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, R, A, BCS_ROW_NONE,
				   BIT64(1), 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, AT, A, 0, 0, 5));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, AT, A, 0, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, R | AT, A, 0, 1, 5));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, 1U << 5, A, 0, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, 1U << 31, A, 0, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, R, A, BCS_ROWS_MAX, 1, 0));
	EXPECT_EQ(0, bt_nr_jobs(self->fd));

	ASSERT_EQ(0, job_ioc(self->fd, C, R, A, 2, BIT64(5) | BIT64(63), 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 2,
				 BIT64(2) | BIT64(5) | BIT64(63)));
	ASSERT_EQ(0, job_ioc(self->fd, C, R, B, 3, 0, 0));
	EXPECT_TRUE(job_rows_are(self->fd, B, 3, BIT64(3)));
	ASSERT_EQ(0, job_ioc(self->fd, C, R, 7, BCS_ROW_NONE, 0, 0));
	EXPECT_TRUE(job_rows_are(self->fd, 7, BCS_ROW_NONE, 0));
	ASSERT_EQ(0, bt_job_create(self->fd, 8, 4, NULL));
	EXPECT_TRUE(job_rows_are(self->fd, 8, 4, BIT64(4)));

	/* Set row. */
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, 0, A, 1, BIT64(1), 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, 0, A, 1, 0, 9));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, R, A, BCS_ROW_NONE, 1, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, R | AT, A, BCS_ROW_NONE, 1,
				   9));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, 1U << 2, A, 1, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, R | (1U << 7), A, 1, 1, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, R, A, BCS_ROWS_MAX, 1, 0));
	EXPECT_EQ(-ENOENT, job_ioc(self->fd, S, R | AT, 9, 1, 1, 9));
	EXPECT_TRUE(job_rows_are(self->fd, A, 2,
				 BIT64(2) | BIT64(5) | BIT64(63)));

	EXPECT_EQ(0, job_ioc(self->fd, S, R, A, 1, BIT64(1) | BIT64(0), 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 1, BIT64(0) | BIT64(1)));
	EXPECT_EQ(0, job_ioc(self->fd, S, R, 7, 6, ~0ULL, 0));
	EXPECT_TRUE(job_rows_are(self->fd, 7, 6, ~0ULL));
	EXPECT_EQ(0, bt_job_set_row(self->fd, 7, 9));
	EXPECT_TRUE(job_rows_are(self->fd, 7, 9, BIT64(9)));
	EXPECT_EQ(0, bt_job_set_row(self->fd, 7, BCS_ROW_NONE));
	EXPECT_TRUE(job_rows_are(self->fd, 7, BCS_ROW_NONE, 0));

	/* Destroy: no flag at all. */
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, D, R, A, 0, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, D, AT, A, 0, 0, 1));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, D, 0, A, 0, 1, 0));
	EXPECT_EQ(4, bt_nr_jobs(self->fd));
	EXPECT_EQ(0, job_ioc(self->fd, D, 0, A, 0, 0, 0));
	EXPECT_EQ(3, bt_nr_jobs(self->fd));
}

/*
 * Alternate scheduling, driven: job A lives in row 0 and also runs in row
 * 1, job B in row 1 only.  A runs (and counts the slice) in rows 0 and 1,
 * B in row 1 only; in row 2 neither.  A's tasks park and leave their
 * parking accordingly.  The rotation (BCS_STROBE_NEXT) steps through the
 * home rows 0 and 1 only, never through A's alternate row 5.
 */
TEST_F(ioctl, alternate_rows)
{
	const uint32_t A = BT_JOB_A, B = BT_JOB_B;
	uint64_t a0, b0;
	struct bcs_state st;
	int i;

	ASSERT_EQ(0, job_ioc(self->fd, BCS_IOC_JOB_CREATE, BCS_JOB_ROWS, A,
			     0, BIT64(1), 0));
	ASSERT_EQ(0, bt_job_create(self->fd, B, 1, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, 7, BCS_ROW_NONE, NULL));
	ASSERT_EQ(0, bt_burner_start(&self->b1, 1, true));
	ASSERT_EQ(0, bt_attach(self->fd, A, self->b1.pid, 0, NULL));
	ASSERT_EQ(0, bt_drive(self->fd));

	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	a0 = job_slices_run(self->fd, A);
	b0 = job_slices_run(self->fd, B);
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_RUNNING));
	EXPECT_TRUE(job_state_is(self->fd, B, BCS_JOB_SUSPENDED));

	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	EXPECT_TRUE(WAIT_UNTIL(job_state_is(self->fd, A, BCS_JOB_RUNNING),
			       BT_WAIT_MS));
	EXPECT_TRUE(job_state_is(self->fd, B, BCS_JOB_RUNNING));
	EXPECT_TRUE(job_state_is(self->fd, 7, BCS_JOB_RUNNING));
	EXPECT_EQ(a0 + 1, job_slices_run(self->fd, A));
	EXPECT_EQ(b0 + 1, job_slices_run(self->fd, B));
	EXPECT_TRUE(bt_job_none_parked(self->fd, A));

	ASSERT_EQ(0, bt_strobe_now(self->fd, 2));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_SUSPENDED));
	EXPECT_TRUE(job_state_is(self->fd, B, BCS_JOB_SUSPENDED));
	EXPECT_TRUE(job_state_is(self->fd, 7, BCS_JOB_RUNNING));
	EXPECT_EQ(a0 + 1, job_slices_run(self->fd, A));
	EXPECT_EQ(b0 + 1, job_slices_run(self->fd, B));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, A), BT_WAIT_MS));

	/* Its alternate row wakes A's tasks again. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, A), BT_WAIT_MS));
	EXPECT_TRUE(WAIT_UNTIL(job_state_is(self->fd, A, BCS_JOB_RUNNING),
			       BT_WAIT_MS));
	EXPECT_EQ(a0 + 2, job_slices_run(self->fd, A));
	EXPECT_EQ(b0 + 2, job_slices_run(self->fd, B));

	/* The rotation: home rows 0 and 1, whatever A's other rows are. */
	ASSERT_EQ(0, job_ioc(self->fd, BCS_IOC_JOB_SET_ROW, BCS_JOB_ROWS, A,
			     0, BIT64(5) | BIT64(1), 0));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, strobe_slice(self->fd, cur_slice(self->fd) + 1,
					  0, BCS_STROBE_NEXT));
		ASSERT_EQ(0, bt_get_state(self->fd, &st));
		EXPECT_EQ(i % 2 ? 1U : 0U, st.row) TH_LOG("step %d", i);
		EXPECT_TRUE(job_state_is(self->fd, B, i % 2 ?
					 BCS_JOB_RUNNING :
					 BCS_JOB_SUSPENDED));
	}
	/* Row 5 itself runs A, though the rotation never names it. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 5));
	EXPECT_TRUE(WAIT_UNTIL(job_state_is(self->fd, A, BCS_JOB_RUNNING),
			       BT_WAIT_MS));
	EXPECT_TRUE(job_state_is(self->fd, B, BCS_JOB_SUSPENDED));
}

/* Job @id is listed as a filler job (BCS_JOB_FILLER) or not. */
static bool job_filler_is(int fd, uint32_t id, bool filler)
{
	struct bcs_job_info ji;

	return !bt_job_info(fd, id, &ji) &&
	       ji.flags == (filler ? BCS_JOB_FILLER : 0U);
}

/* BCS_JOB_SET_FILLER on job @id: 0 or -errno. */
static int set_filler(int fd, uint32_t id, bool filler)
{
	return job_ioc(fd, BCS_IOC_JOB_SET_ROW,
		       BCS_JOB_SET_FILLER | (filler ? BCS_JOB_FILLER : 0), id,
		       0, 0, 0);
}

/*
 * The filler flag: BCS_JOB_FILLER on create only, BCS_JOB_SET_FILLER on
 * BCS_IOC_JOB_SET_ROW only and with nothing else; every refusal leaves the
 * job as it was.  A move keeps the flag, setting the flag keeps the rows.
 */
TEST_F(ioctl, filler_input)
{
	const unsigned long C = BCS_IOC_JOB_CREATE, S = BCS_IOC_JOB_SET_ROW;
	const unsigned long D = BCS_IOC_JOB_DESTROY;
	const uint32_t F = BCS_JOB_FILLER, SF = BCS_JOB_SET_FILLER;
	const uint32_t A = BT_JOB_A, B = BT_JOB_B;

	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, SF, A, 0, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, F | SF, A, 0, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, C, F | (1U << 5), A, 0, 0, 0));
	EXPECT_EQ(0, bt_nr_jobs(self->fd));

	ASSERT_EQ(0, job_ioc(self->fd, C, F | BCS_JOB_ROWS, A, 2, BIT64(5),
			     0));
	EXPECT_TRUE(job_filler_is(self->fd, A, true));
	EXPECT_TRUE(job_rows_are(self->fd, A, 2, BIT64(2) | BIT64(5)));
	ASSERT_EQ(0, bt_job_create(self->fd, B, 3, NULL));
	EXPECT_TRUE(job_filler_is(self->fd, B, false));

	/* The flag alone, without SET_FILLER, or SET_FILLER with more. */
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, F, B, 3, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, SF | F, B, 3, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, SF | F | BCS_JOB_ROWS, B, 0,
				   BIT64(1), 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, SF | F | BCS_JOB_AT_SLICE, B,
				   0, 0, 9));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, SF | (1U << 5), B, 0, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, S, SF, A, BCS_ROW_NONE, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, D, F, A, 0, 0, 0));
	EXPECT_EQ(-EINVAL, job_ioc(self->fd, D, SF, A, 0, 0, 0));
	EXPECT_EQ(-ENOENT, set_filler(self->fd, 9, true));
	EXPECT_EQ(-ENOENT, set_filler(self->fd, 0, true));
	EXPECT_TRUE(job_filler_is(self->fd, A, true));
	EXPECT_TRUE(job_filler_is(self->fd, B, false));
	EXPECT_TRUE(job_rows_are(self->fd, B, 3, BIT64(3)));
	EXPECT_EQ(2, bt_nr_jobs(self->fd));

	/* Set and clear: the rows stay; a move keeps the flag. */
	EXPECT_EQ(0, set_filler(self->fd, B, true));
	EXPECT_TRUE(job_filler_is(self->fd, B, true));
	EXPECT_TRUE(job_rows_are(self->fd, B, 3, BIT64(3)));
	EXPECT_EQ(0, set_filler(self->fd, B, true));
	EXPECT_TRUE(job_filler_is(self->fd, B, true));
	EXPECT_EQ(0, bt_job_set_row(self->fd, B, 4));
	EXPECT_TRUE(job_filler_is(self->fd, B, true));
	EXPECT_TRUE(job_rows_are(self->fd, B, 4, BIT64(4)));
	EXPECT_EQ(0, set_filler(self->fd, A, false));
	EXPECT_TRUE(job_filler_is(self->fd, A, false));
	EXPECT_TRUE(job_rows_are(self->fd, A, 2, BIT64(2) | BIT64(5)));
	EXPECT_EQ(0, job_ioc(self->fd, D, 0, B, 0, 0, 0));
	EXPECT_EQ(1, bt_nr_jobs(self->fd));
}

/*
 * Filler jobs, driven: A (row 0) and F (row 1, a filler) have tasks, E
 * (row 2) none, N (no row) runs always.  Row 0 runs A only: the node is
 * busy.  Row 3 has no job, row 2 a job with no tasks: the node is idle
 * and F runs there too, N's tasks notwithstanding, A does not.  A moved
 * into row 2 makes it busy: F is suspended.  Cleared, F runs in its own
 * row only; set again, it fills again.
 */
TEST_F(ioctl, filler_runs_when_idle)
{
	const uint32_t A = BT_JOB_A, F = BT_JOB_B, E = 7, N = 8;
	struct bcs_job_info ji;
	uint64_t f0;

	ASSERT_EQ(0, bt_job_create(self->fd, A, 0, NULL));
	ASSERT_EQ(0, job_ioc(self->fd, BCS_IOC_JOB_CREATE, BCS_JOB_FILLER, F,
			     1, 0, 0));
	ASSERT_EQ(0, bt_job_create(self->fd, E, 2, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, N, BCS_ROW_NONE, NULL));
	ASSERT_EQ(0, bt_burner_start(&self->b1, 1, true));
	ASSERT_EQ(0, bt_burner_start(&self->b2, 1, true));
	ASSERT_EQ(0, bt_attach(self->fd, A, self->b1.pid, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, F, self->b2.pid, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, N, getpid(), BCS_ATTACH_THREAD,
			       NULL));
	ASSERT_EQ(0, bt_drive(self->fd));

	/* Busy: A's row. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_RUNNING));
	EXPECT_TRUE(job_state_is(self->fd, F, BCS_JOB_SUSPENDED));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, F), BT_WAIT_MS));
	f0 = job_slices_run(self->fd, F);

	/* Idle: no job in row 3; F fills it, its tasks leave parking. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 3));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_SUSPENDED));
	EXPECT_TRUE(WAIT_UNTIL(job_state_is(self->fd, F, BCS_JOB_RUNNING),
			       BT_WAIT_MS));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, F), BT_WAIT_MS));
	EXPECT_EQ(f0 + 1, job_slices_run(self->fd, F));

	/* Idle: row 2's only job has no tasks here. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	EXPECT_TRUE(job_state_is(self->fd, F, BCS_JOB_SUSPENDED));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 2));
	EXPECT_TRUE(WAIT_UNTIL(job_state_is(self->fd, F, BCS_JOB_RUNNING),
			       BT_WAIT_MS));
	EXPECT_TRUE(job_state_is(self->fd, E, BCS_JOB_RUNNING));

	/* Busy: A, with its task, moved to row 2. */
	ASSERT_EQ(0, bt_job_set_row(self->fd, A, 2));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 2));
	/* A wakes once F's running task has parked (the drain). */
	EXPECT_TRUE(job_state_is(self->fd, F, BCS_JOB_SUSPENDED));
	EXPECT_TRUE(WAIT_UNTIL(job_state_is(self->fd, A, BCS_JOB_RUNNING),
			       BT_WAIT_MS));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, F), BT_WAIT_MS));
	EXPECT_TRUE(job_state_is(self->fd, N, BCS_JOB_RUNNING));

	/* Cleared: not in an idle row, still in its own. */
	ASSERT_EQ(0, set_filler(self->fd, F, false));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 3));
	EXPECT_TRUE(job_state_is(self->fd, F, BCS_JOB_SUSPENDED));
	ASSERT_EQ(0, bt_job_info(self->fd, F, &ji));
	EXPECT_EQ(0U, ji.flags);
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	EXPECT_TRUE(WAIT_UNTIL(job_state_is(self->fd, F, BCS_JOB_RUNNING),
			       BT_WAIT_MS));

	/* Set again: fills row 3 again. */
	ASSERT_EQ(0, set_filler(self->fd, F, true));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 2));
	EXPECT_TRUE(job_state_is(self->fd, F, BCS_JOB_SUSPENDED));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 3));
	EXPECT_TRUE(WAIT_UNTIL(job_state_is(self->fd, F, BCS_JOB_RUNNING),
			       BT_WAIT_MS));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, F), BT_WAIT_MS));
	ASSERT_EQ(0, bt_detach(self->fd, N, getpid(), BCS_ATTACH_THREAD,
			       NULL));
}

/*
 * BCS_JOB_AT_SLICE: the job runs and is listed as before in the slices
 * before the one named, and moves at the switch to it (or to a later one,
 * when slices are skipped); a later move replaces a waiting one, a move
 * without the flag drops it, and a slice already begun moves the job at
 * the next switch.
 */
TEST_F(ioctl, set_row_at_slice)
{
	const unsigned long S = BCS_IOC_JOB_SET_ROW;
	const uint32_t R = BCS_JOB_ROWS, AT = BCS_JOB_AT_SLICE;
	const uint32_t A = BT_JOB_A;
	uint64_t s0, s;

	ASSERT_EQ(0, bt_job_create(self->fd, A, 0, NULL));
	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	s0 = cur_slice(self->fd);

	/* To row 1 at s0 + 2: row 0 still runs A in s0 + 1. */
	ASSERT_EQ(0, job_ioc(self->fd, S, AT, A, 1, 0, s0 + 2));
	EXPECT_TRUE(job_rows_are(self->fd, A, 0, BIT64(0)));
	ASSERT_EQ(0, strobe_slice(self->fd, s0 + 1, 0, 0));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_RUNNING));
	EXPECT_TRUE(job_rows_are(self->fd, A, 0, BIT64(0)));
	ASSERT_EQ(0, strobe_slice(self->fd, s0 + 2, 0, 0));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_SUSPENDED));
	EXPECT_TRUE(job_rows_are(self->fd, A, 1, BIT64(1)));
	ASSERT_EQ(0, strobe_slice(self->fd, s0 + 3, 1, 0));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_RUNNING));

	/* A move at s0 + 10, replaced by one at s0 + 5 with rows. */
	ASSERT_EQ(0, job_ioc(self->fd, S, AT, A, 2, 0, s0 + 10));
	ASSERT_EQ(0, job_ioc(self->fd, S, R | AT, A, 3, BIT64(4), s0 + 5));
	ASSERT_EQ(0, strobe_slice(self->fd, s0 + 4, 1, 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 1, BIT64(1)));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_RUNNING));
	ASSERT_EQ(0, strobe_slice(self->fd, s0 + 5, 4, 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 3, BIT64(3) | BIT64(4)));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_RUNNING));
	for (s = s0 + 6; s <= s0 + 11; s++)
		ASSERT_EQ(0, strobe_slice(self->fd, s, 3, 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 3, BIT64(3) | BIT64(4)));

	/* Skipped slices: the first switch past the slice moves it. */
	ASSERT_EQ(0, job_ioc(self->fd, S, AT, A, 6, 0, s0 + 13));
	ASSERT_EQ(0, strobe_slice(self->fd, s0 + 15, 3, 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 6, BIT64(6)));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_SUSPENDED));

	/* A slice already begun: listed as before until the next switch. */
	ASSERT_EQ(0, job_ioc(self->fd, S, AT, A, 3, 0, 1));
	EXPECT_TRUE(job_rows_are(self->fd, A, 6, BIT64(6)));
	ASSERT_EQ(0, strobe_slice(self->fd, s0 + 16, 3, 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 3, BIT64(3)));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_RUNNING));

	/* A move without the flag is made at once and drops the waiting one. */
	ASSERT_EQ(0, job_ioc(self->fd, S, AT, A, 5, 0, s0 + 18));
	ASSERT_EQ(0, bt_job_set_row(self->fd, A, 7));
	EXPECT_TRUE(job_rows_are(self->fd, A, 7, BIT64(7)));
	for (s = s0 + 17; s <= s0 + 20; s++)
		ASSERT_EQ(0, strobe_slice(self->fd, s, 7, 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 7, BIT64(7)));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_RUNNING));

	/* A destroyed job takes its waiting move with it. */
	ASSERT_EQ(0, job_ioc(self->fd, S, AT, A, 5, 0, s0 + 22));
	ASSERT_EQ(0, bt_job_destroy(self->fd, A));
	ASSERT_EQ(0, bt_job_create(self->fd, A, 7, NULL));
	ASSERT_EQ(0, strobe_slice(self->fd, s0 + 22, 7, 0));
	EXPECT_TRUE(job_rows_are(self->fd, A, 7, BIT64(7)));
}

/*
 * Standalone mode counts its own slices: a move at a slice waits for the
 * switch that numbers it, and the rotation of that switch already follows
 * it.
 */
TEST_F(ioctl, set_row_at_slice_standalone)
{
	const uint32_t A = BT_JOB_A, B = BT_JOB_B;
	struct bcs_state st;
	uint64_t s0;
	int i;

	ASSERT_EQ(0, bt_job_create(self->fd, A, 0, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, B, 1, NULL));
	/*
	 * Slices of 10 s: after the first tick, which entering the mode
	 * starts at once, only the injected strobes switch (each restarts
	 * the slice).  Step to row 0, whether that tick came first or not.
	 */
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_MODE | BCS_CONFIG_SLICE,
			       BCS_MODE_STANDALONE, BCS_SLICE_NS_MAX, 0,
			       NULL));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, strobe_slice(self->fd, 0, 0, BCS_STROBE_NEXT));
		ASSERT_EQ(0, bt_get_state(self->fd, &st));
		if (st.row == 0)
			break;
	}
	ASSERT_EQ(0, st.row);
	s0 = st.slice;
	/* B moves to row 2 at s0 + 2: s0 + 1 still runs row 1 (B). */
	ASSERT_EQ(0, job_ioc(self->fd, BCS_IOC_JOB_SET_ROW, BCS_JOB_AT_SLICE,
			     B, 2, 0, s0 + 2));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(0, st.row);
	ASSERT_EQ(0, strobe_slice(self->fd, 0, 0, BCS_STROBE_NEXT));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(s0 + 1, st.slice);
	EXPECT_EQ(1, st.row);
	EXPECT_TRUE(job_rows_are(self->fd, B, 1, BIT64(1)));
	EXPECT_TRUE(job_state_is(self->fd, B, BCS_JOB_RUNNING));
	/* Slice s0 + 2: B is in row 2 now, the rotation goes there. */
	ASSERT_EQ(0, strobe_slice(self->fd, 0, 0, BCS_STROBE_NEXT));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(s0 + 2, st.slice);
	EXPECT_EQ(2, st.row);
	EXPECT_TRUE(job_rows_are(self->fd, B, 2, BIT64(2)));
	EXPECT_TRUE(job_state_is(self->fd, B, BCS_JOB_RUNNING));
	EXPECT_TRUE(job_state_is(self->fd, A, BCS_JOB_SUSPENDED));
}

BT_HARNESS_MAIN

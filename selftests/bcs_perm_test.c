// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions: an unprivileged user (uid/gid 65534, no capabilities) may
 * query, may attach its own processes to a job it owns, and destroy that
 * job, and nothing else: not attach to root's job nor to another uid's,
 * nor destroy them.  Jobs not owned by root that have no task are reaped.
 *
 * The checks run in a forked child that dropped its privileges; it records
 * the result of each operation in shared memory and the test asserts on
 * them in the parent, so no harness state is touched after the fork.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

enum {
	R_DROP,			/* bt_drop_privs() */
	R_OPEN,			/* open /dev/bcs */
	R_CREATE,
	R_CREATE_INHERITED,	/* through the fd root opened */
	R_DESTROY,
	R_DESTROY_OTHER,	/* the job of uid BT_OTHER_UID */
	R_DESTROY_OWN,
	R_SET_ROW,
	R_CONFIG_SET,
	R_CONFIG_GET,
	R_STROBE,
	R_ATTACH_INIT,
	R_ATTACH_ROOT,
	R_DETACH_ROOT,
	R_ATTACH_OWN,
	R_OWN_NR,
	R_DETACH_OWN,
	R_ATTACH_OWN_ROOT_JOB,	/* its own process to root's job */
	R_ATTACH_OWN_OTHER_JOB,	/* its own process to BT_OTHER_UID's job */
	R_GET_STATE,
	R_JOB_LIST,
	R_TASK_STATS,
	R_STAT_OPEN,
	R_STAT_MMAP,
	R_STAT_GET_STATE,
	R_STAT_OPEN_RW,
	R_WINDOW_ARM,
	R_WINDOW_DISARM,
	R_WINDOW_GET,
	R_DONE,
	R_MAX
};

/* A second unprivileged uid, owner of a job the first may not touch. */
#define BT_OTHER_UID	65533U
#define BT_JOB_ROOT	7U	/* owned by root */
#define BT_JOB_OTHER	8U	/* owned by BT_OTHER_UID */
#define BT_REAP_PARAM	"/sys/module/bcs/parameters/reap_empty_s"

/* Create job @id in row 0 owned by @uid (BCS_JOB_OWNER); 0 or -errno. */
static int create_owned(int fd, uint32_t id, uint32_t uid)
{
	struct bcs_job j = {
		.size = sizeof(j), .flags = BCS_JOB_OWNER, .id = id,
		.owner = uid,
	};

	return bt_ioctl(fd, BCS_IOC_JOB_CREATE, &j);
}

static bool job_exists(int fd, uint32_t id)
{
	struct bcs_job_info ji;

	return !bt_job_info(fd, id, &ji);
}

struct perm_sh {
	volatile int r[R_MAX];
};

FIXTURE(perm) {
	int fd;
	struct bt_burner root_proc;
	struct perm_sh *sh;
	pid_t child;
};

FIXTURE_SETUP(perm)
{
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset((void *)self->sh, 0x7f, sizeof(*self->sh));
	/* The unprivileged user's own job. */
	ASSERT_EQ(0, create_owned(self->fd, BT_JOB_A, BT_NOBODY));
	ASSERT_EQ(0, bt_burner_start(&self->root_proc, 1, true));
	/* Driven by root, so that a privileged strobe would be accepted. */
	ASSERT_EQ(0, bt_drive(self->fd));
}

FIXTURE_TEARDOWN(perm)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		bt_waitpid_bounded(self->child, NULL, BT_WAIT_MS);
	}
	bt_burner_stop(&self->root_proc);
	/* The default, whatever a test set. */
	bt_write_file(BT_REAP_PARAM, "60");
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		close(self->fd);
	}
	if (self->sh && self->sh != MAP_FAILED)
		munmap((void *)self->sh, sizeof(*self->sh));
}

static void unprivileged(struct perm_sh *sh, int root_fd, pid_t root_pid)
{
	struct bcs_job_list jl = { .size = sizeof(jl) };
	struct bcs_task_list tl = { .size = sizeof(tl) };
	struct bcs_strobe s = {
		.size = sizeof(s),
		.flags = BCS_STROBE_NOW,
		.slice = 1000000,
		.row = 1,
	};
	struct bcs_state st;
	uint32_t nr = 0;
	pid_t own;
	void *m;
	int fd, sfd;

	sh->r[R_DROP] = bt_drop_privs();
	if (sh->r[R_DROP])
		_exit(1);
	fd = bt_open();
	sh->r[R_OPEN] = fd < 0 ? -errno : 0;
	if (fd < 0)
		_exit(1);
	sh->r[R_CREATE] = bt_job_create(fd, 0, 0, NULL);
	sh->r[R_CREATE_INHERITED] = bt_job_create(root_fd, 0, 0, NULL);
	sh->r[R_DESTROY] = bt_job_destroy(fd, BT_JOB_ROOT);
	sh->r[R_DESTROY_OTHER] = bt_job_destroy(fd, BT_JOB_OTHER);
	sh->r[R_SET_ROW] = bt_job_set_row(fd, BT_JOB_A, 5);
	sh->r[R_CONFIG_SET] = bt_set_mode(fd, BCS_MODE_OFF);
	sh->r[R_CONFIG_GET] = bt_config(fd, 0, 0, 0, 0, NULL);
	s.deadline_ns = bt_now_ns(CLOCK_REALTIME);
	sh->r[R_STROBE] = bt_ioctl(fd, BCS_IOC_STROBE, &s);
	sh->r[R_ATTACH_INIT] = bt_attach(fd, BT_JOB_A, 1, 0, NULL);
	sh->r[R_ATTACH_ROOT] = bt_attach(fd, BT_JOB_A, root_pid, 0, NULL);
	sh->r[R_DETACH_ROOT] = bt_detach(fd, BT_JOB_A, root_pid, 0, NULL);

	own = fork();
	if (own == 0) {
		for (;;)
			pause();
	}
	sh->r[R_ATTACH_OWN] = own < 0 ? -errno :
			      bt_attach(fd, BT_JOB_A, own, 0, &nr);
	sh->r[R_OWN_NR] = (int)nr;
	sh->r[R_DETACH_OWN] = bt_detach(fd, BT_JOB_A, own, 0, NULL);
	sh->r[R_ATTACH_OWN_ROOT_JOB] = bt_attach(fd, BT_JOB_ROOT, own, 0, NULL);
	sh->r[R_ATTACH_OWN_OTHER_JOB] = bt_attach(fd, BT_JOB_OTHER, own, 0,
						  NULL);
	if (own > 0) {
		kill(own, SIGKILL);
		waitpid(own, NULL, 0);
	}

	sh->r[R_GET_STATE] = bt_get_state(fd, &st);
	sh->r[R_JOB_LIST] = bt_ioctl(fd, BCS_IOC_JOB_LIST, &jl);
	sh->r[R_TASK_STATS] = bt_ioctl(fd, BCS_IOC_TASK_STATS, &tl);
	sh->r[R_WINDOW_ARM] = bt_window(fd, BCS_WINDOW_ARM, st.slice + 10,
					st.slice + 20, NULL);
	sh->r[R_WINDOW_DISARM] = bt_window(fd, BCS_WINDOW_DISARM, 0, 0, NULL);
	sh->r[R_WINDOW_GET] = bt_window(fd, BCS_WINDOW_GET, 0, 0, NULL);
	sh->r[R_DESTROY_OWN] = bt_job_destroy(fd, BT_JOB_A);
	close(fd);

	sfd = bt_open_stat();
	sh->r[R_STAT_OPEN] = sfd < 0 ? -errno : 0;
	if (sfd >= 0) {
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sfd, 0);
		sh->r[R_STAT_MMAP] = m == MAP_FAILED ? -errno : 0;
		if (m != MAP_FAILED)
			munmap(m, 4096);
		sh->r[R_STAT_GET_STATE] = bt_get_state(sfd, &st);
		close(sfd);
	}
	sfd = open(BCS_STAT_DEV, O_RDWR | O_CLOEXEC);
	sh->r[R_STAT_OPEN_RW] = sfd < 0 ? -errno : 0;
	if (sfd >= 0)
		close(sfd);
	sh->r[R_DONE] = 0;
	_exit(0);
}

TEST_F(perm, unprivileged_user)
{
	struct bcs_job_info ji;
	struct bcs_state st;
	int status = 0;

	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_ROOT, 1, NULL));
	ASSERT_EQ(0, create_owned(self->fd, BT_JOB_OTHER, BT_OTHER_UID));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(BT_NOBODY, ji.owner);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_ROOT, &ji));
	EXPECT_EQ(0U, ji.owner);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_OTHER, &ji));
	EXPECT_EQ(BT_OTHER_UID, ji.owner);
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0)
		unprivileged(self->sh, self->fd, self->root_proc.pid);
	ASSERT_EQ(self->child, bt_waitpid_bounded(self->child, &status,
						  BT_WAIT_MS));
	self->child = 0;
	ASSERT_EQ(0, self->sh->r[R_DROP]);
	ASSERT_EQ(0, self->sh->r[R_OPEN]) TH_LOG(BCS_DEV " not world-usable");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, self->sh->r[R_DONE]);

	EXPECT_EQ(-EPERM, self->sh->r[R_CREATE]);
	EXPECT_EQ(-EPERM, self->sh->r[R_CREATE_INHERITED]);
	EXPECT_EQ(-EPERM, self->sh->r[R_DESTROY]);
	EXPECT_EQ(-EPERM, self->sh->r[R_DESTROY_OTHER]);
	EXPECT_EQ(0, self->sh->r[R_DESTROY_OWN]);
	/* Rows are the scheduler's: not even the owner's to change. */
	EXPECT_EQ(-EPERM, self->sh->r[R_SET_ROW]);
	EXPECT_EQ(-EPERM, self->sh->r[R_CONFIG_SET]);
	EXPECT_EQ(0, self->sh->r[R_CONFIG_GET]);
	EXPECT_EQ(-EPERM, self->sh->r[R_STROBE]);
	EXPECT_EQ(-EPERM, self->sh->r[R_ATTACH_INIT]);
	EXPECT_EQ(-EPERM, self->sh->r[R_ATTACH_ROOT]);
	EXPECT_EQ(-EPERM, self->sh->r[R_DETACH_ROOT]);
	EXPECT_EQ(0, self->sh->r[R_ATTACH_OWN]);
	EXPECT_EQ(1, self->sh->r[R_OWN_NR]);
	EXPECT_EQ(0, self->sh->r[R_DETACH_OWN]);
	EXPECT_EQ(-EPERM, self->sh->r[R_ATTACH_OWN_ROOT_JOB]);
	EXPECT_EQ(-EPERM, self->sh->r[R_ATTACH_OWN_OTHER_JOB]);
	EXPECT_EQ(0, self->sh->r[R_GET_STATE]);
	EXPECT_EQ(0, self->sh->r[R_JOB_LIST]);
	EXPECT_EQ(0, self->sh->r[R_TASK_STATS]);
	EXPECT_EQ(0, self->sh->r[R_STAT_OPEN]);
	EXPECT_EQ(0, self->sh->r[R_STAT_MMAP]);
	EXPECT_EQ(0, self->sh->r[R_STAT_GET_STATE]);
	EXPECT_EQ(-EACCES, self->sh->r[R_STAT_OPEN_RW]);
	EXPECT_EQ(-EPERM, self->sh->r[R_WINDOW_ARM]);
	EXPECT_EQ(-EPERM, self->sh->r[R_WINDOW_DISARM]);
	EXPECT_EQ(0, self->sh->r[R_WINDOW_GET]);

	/* Nothing else the unprivileged child tried changed anything. */
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(2, st.nr_jobs);
	EXPECT_EQ(BCS_MODE_DRIVEN, st.mode);
	EXPECT_EQ(getpid(), st.driver_pid);
	EXPECT_FALSE(job_exists(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_ROOT, &ji));
	EXPECT_EQ(1, ji.row);
	EXPECT_EQ(0, ji.nr_tasks);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_OTHER, &ji));
	EXPECT_EQ(0, ji.nr_tasks);
	EXPECT_EQ(BCS_WINDOW_NONE, st.window_state);

	/* Root may do all of it to another uid's job. */
	EXPECT_EQ(0, bt_attach(self->fd, BT_JOB_OTHER, self->root_proc.pid, 0,
			       NULL));
	EXPECT_EQ(0, bt_job_set_row(self->fd, BT_JOB_OTHER, 3));
	EXPECT_EQ(0, bt_job_destroy(self->fd, BT_JOB_OTHER));
	EXPECT_EQ(1, bt_nr_jobs(self->fd));
}

/*
 * BCS_JOB_OWNER: only with a uid (not (uid_t)-1 nor wider), only on
 * create; an owner's job of id 0 gets one.
 */
TEST_F(perm, owner_input)
{
	struct bcs_job j = { .size = sizeof(j), .flags = BCS_JOB_OWNER };
	struct bcs_job_info ji;

	j.owner = 0xffffffffULL;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_JOB_CREATE, &j));
	j.owner = 1ULL << 32;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_JOB_CREATE, &j));
	j.owner = 1000;
	j.id = BT_JOB_A;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_JOB_SET_ROW, &j));
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_JOB_DESTROY, &j));
	j.id = 0;
	ASSERT_EQ(0, bt_ioctl(self->fd, BCS_IOC_JOB_CREATE, &j));
	ASSERT_EQ(0, bt_job_info(self->fd, j.id, &ji));
	EXPECT_EQ(1000U, ji.owner);
	EXPECT_EQ(1000U, j.owner);
	EXPECT_EQ(2, bt_nr_jobs(self->fd));
}

/*
 * Reaping: with reap_empty_s 1, a job of a uid that is not root goes once
 * it has had no task for a while (from its creation, or its last task's
 * leaving); root's jobs stay, empty or not, and so does a job while it has
 * a task.  Never with 0.  Orders only, no times.
 */
TEST_F(perm, reap_empty_jobs)
{
	const uint32_t busy = 9, never = 10;

	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_ROOT, 0, NULL));
	ASSERT_EQ(0, create_owned(self->fd, busy, BT_OTHER_UID));
	ASSERT_EQ(0, bt_attach(self->fd, busy, self->root_proc.pid, 0, NULL));
	ASSERT_EQ(0, bt_write_file(BT_REAP_PARAM, "1"));

	EXPECT_TRUE(WAIT_UNTIL(!job_exists(self->fd, BT_JOB_A), BT_WAIT_MS));
	EXPECT_TRUE(job_exists(self->fd, BT_JOB_ROOT));
	EXPECT_TRUE(job_exists(self->fd, busy));

	/* Its last task gone, the busy one goes too. */
	ASSERT_EQ(0, bt_detach(self->fd, busy, self->root_proc.pid, 0, NULL));
	EXPECT_TRUE(WAIT_UNTIL(!job_exists(self->fd, busy), BT_WAIT_MS));
	EXPECT_TRUE(job_exists(self->fd, BT_JOB_ROOT));

	/* 0: never (what was due is left too). */
	ASSERT_EQ(0, bt_write_file(BT_REAP_PARAM, "0"));
	ASSERT_EQ(0, create_owned(self->fd, never, BT_NOBODY));
	bt_sleep_ms(1500);
	EXPECT_TRUE(job_exists(self->fd, never));
	EXPECT_EQ(-EINVAL, bt_write_file(BT_REAP_PARAM, "1000001"));
}

/*
 * BCS_IOC_TASK_STATS shows an unprivileged user only the tasks it could
 * attach: its own, not root's in the same job (pids, CPU and blocked
 * times of other users' work would pass by hidepid).  Root sees all.
 */
TEST_F(perm, task_stats_show_only_own_tasks)
{
	struct bcs_task_stat *st = NULL;
	volatile int *res;
	int status = 0, n, i;
	bool root_seen = false;

	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->root_proc.pid, 0,
			       NULL));
	res = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	res[0] = res[1] = res[2] = res[3] = res[4] = -12345;
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		struct bcs_task_stat ts[8];
		struct bcs_task_list tl = {
			.size = sizeof(tl), .count = 8,
			.tasks = (uintptr_t)ts,
		};
		pid_t own;
		int fd;

		res[0] = bt_drop_privs();
		fd = bt_open();
		if (res[0] || fd < 0)
			_exit(1);
		own = fork();
		if (own == 0) {
			for (;;)
				pause();
		}
		res[1] = bt_attach(fd, BT_JOB_A, own, 0, NULL);
		res[2] = bt_ioctl(fd, BCS_IOC_TASK_STATS, &tl);
		res[3] = (int)tl.count;
		res[4] = tl.count >= 1 && ts[0].tgid == own;
		kill(own, SIGKILL);
		waitpid(own, NULL, 0);
		_exit(0);
	}
	ASSERT_EQ(self->child, bt_waitpid_bounded(self->child, &status,
						  BT_WAIT_MS));
	self->child = 0;
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(0, res[2]);
	EXPECT_EQ(1, res[3]) TH_LOG("sees tasks that are not its own");
	EXPECT_EQ(1, res[4]) TH_LOG("does not see its own task");
	munmap((void *)res, 4096);

	/* Root sees root's task. */
	n = bt_task_stats(self->fd, BT_JOB_A, &st);
	ASSERT_LE(1, n);
	for (i = 0; i < n; i++)
		root_seen |= st[i].tgid == self->root_proc.pid;
	free(st);
	EXPECT_TRUE(root_seen);
}

/*
 * Attach asks kill(2)'s own permission check, LSMs included: a process
 * that Landlock keeps from signalling outside its domain (6.12's
 * LANDLOCK_SCOPE_SIGNAL) cannot attach even a process of its own uid.
 */
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION	(1U << 0)
#endif
#define BT_LANDLOCK_SCOPE_SIGNAL	(1ULL << 1)

struct bt_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

TEST_F(perm, lsm_denial_applies_to_attach)
{
	struct bt_landlock_ruleset_attr attr = {
		.scoped = BT_LANDLOCK_SCOPE_SIGNAL,
	};
	volatile int *res;
	int status = 0;
	long abi;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
		      LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 6)
		SKIP(return, "Landlock signal scoping (ABI 6, Linux 6.12) not available: ABI %ld",
		     abi);
	res = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	res[0] = res[1] = res[2] = res[3] = -12345;
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		int fd, rs, p[2];
		pid_t own;
		char c;

		res[0] = bt_drop_privs();
		fd = bt_open();
		if (res[0] || fd < 0 || pipe(p))
			_exit(1);
		/*
		 * Once sandboxed, this child may not signal it either: it
		 * ends when the child exits and closes the pipe.
		 */
		own = fork();
		if (own == 0) {
			close(fd);
			close(p[1]);
			if (read(p[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		close(p[0]);
		rs = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr),
			     0);
		res[1] = rs < 0 ? -errno :
			 syscall(SYS_landlock_restrict_self, rs, 0) ? -errno : 0;
		res[2] = kill(own, 0) ? -errno : 0;
		res[3] = bt_attach(fd, BT_JOB_A, own, 0, NULL);
		_exit(0);
	}
	ASSERT_EQ(self->child, bt_waitpid_bounded(self->child, &status,
						  BT_WAIT_MS));
	self->child = 0;
	ASSERT_EQ(0, res[0]);
	ASSERT_EQ(0, res[1]);
	/* kill(2) itself is denied, and so is attach. */
	EXPECT_EQ(-EPERM, res[2]);
	EXPECT_EQ(-EPERM, res[3]);
	munmap((void *)res, 4096);
}

TEST_F(perm, device_modes)
{
	struct stat stb;

	ASSERT_EQ(0, stat(BCS_DEV, &stb));
	EXPECT_TRUE(S_ISCHR(stb.st_mode));
	EXPECT_EQ(0666, stb.st_mode & 0777);
	ASSERT_EQ(0, stat(BCS_STAT_DEV, &stb));
	EXPECT_TRUE(S_ISCHR(stb.st_mode));
	EXPECT_EQ(0444, stb.st_mode & 0777);
}

BT_HARNESS_MAIN

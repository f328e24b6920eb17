// SPDX-License-Identifier: GPL-2.0
/*
 * Job membership is inherited: children, grandchildren and new threads of
 * an attached task join its job, and exiting tasks leave it.
 *
 * A "puppet" child process runs commands sent over a pipe (fork a child
 * and a grandchild, start threads, stop them, fork and exec) so that every
 * new task is created after the attach, at a moment the test chooses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

#define NR_THREADS	3

struct puppet_sh {
	volatile int ack;		/* sequence number of the last command */
	volatile pid_t child;		/* forked by 'f' or 'e' */
	volatile pid_t grandchild;	/* forked by the child in 'f' */
	volatile pid_t tid[NR_THREADS];
	volatile int threads_stop;
	volatile int err;
};

static struct puppet_sh *psh;

static void *puppet_thread(void *p)
{
	int i = (int)(intptr_t)p;

	psh->tid[i] = (pid_t)syscall(SYS_gettid);
	while (!psh->threads_stop)
		usleep(1000);
	return NULL;
}

/* The child of 'f': fork a grandchild that sleeps, wait for it, exit. */
static void puppet_fork_two(void)
{
	pid_t c, g;

	c = fork();
	if (c < 0) {
		psh->err = errno;
		return;
	}
	if (c == 0) {
		g = fork();
		if (g < 0)
			_exit(1);
		if (g == 0) {
			for (;;)
				pause();
		}
		psh->grandchild = g;
		waitpid(g, NULL, 0);
		_exit(0);
	}
	psh->child = c;
	while (!psh->grandchild)
		usleep(1000);
}

static void puppet_main(int rfd)
{
	pthread_t th[NR_THREADS];
	int seq = 0, i;
	char cmd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (dup2(rfd, 3) != 3)
		_exit(1);
	bt_close_fds_from(4);
	rfd = 3;
	while (read(rfd, &cmd, 1) == 1) {
		switch (cmd) {
		case 'f':
			psh->child = 0;
			psh->grandchild = 0;
			puppet_fork_two();
			break;
		case 't':
			psh->threads_stop = 0;
			for (i = 0; i < NR_THREADS; i++) {
				psh->tid[i] = 0;
				if (pthread_create(&th[i], NULL, puppet_thread,
						   (void *)(intptr_t)i))
					psh->err = EAGAIN;
			}
			for (i = 0; i < NR_THREADS; i++) {
				while (!psh->tid[i])
					usleep(1000);
			}
			break;
		case 'x':
			psh->threads_stop = 1;
			for (i = 0; i < NR_THREADS; i++)
				pthread_join(th[i], NULL);
			break;
		case 'w':
			/* Reap the child of 'f' or 'e' once it has died. */
			if (psh->child > 0)
				waitpid(psh->child, NULL, 0);
			break;
		case 'e': {
			pid_t c = fork();

			if (c == 0) {
				execl("/bin/sleep", "sleep", "60", (char *)NULL);
				_exit(127);
			}
			psh->child = c;
			break;
		}
		}
		psh->ack = ++seq;
	}
	_exit(0);
}

FIXTURE(inherit) {
	int fd;
	pid_t puppet;
	int wfd;
	int seq;
};

static int puppet_cmd(FIXTURE_DATA(inherit) *self, char cmd)
{
	if (write(self->wfd, &cmd, 1) != 1)
		return -errno;
	self->seq++;
	return WAIT_UNTIL(psh->ack == self->seq, BT_WAIT_MS) ? 0 : -ETIMEDOUT;
}

static int job_tasks(int fd, uint32_t id)
{
	struct bcs_job_info ji;
	int ret = bt_job_info(fd, id, &ji);

	return ret ? ret : (int)ji.nr_tasks;
}

/* Number of task records of job @id whose tgid is @tgid. */
static int tasks_of(int fd, uint32_t id, pid_t tgid)
{
	struct bcs_task_stat *ts;
	int n = bt_task_stats(fd, id, &ts), i, k = 0;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		k += ts[i].tgid == tgid;
	free(ts);
	return k;
}

static bool has_tid(int fd, uint32_t id, pid_t tid)
{
	struct bcs_task_stat *ts;
	int n = bt_task_stats(fd, id, &ts), i;
	bool found = false;

	for (i = 0; i < n; i++)
		found |= ts[i].pid == tid;
	if (n >= 0)
		free(ts);
	return found;
}

FIXTURE_SETUP(inherit)
{
	int p[2];

	self->fd = -1;
	self->wfd = -1;
	psh = mmap(NULL, sizeof(*psh), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, psh);
	memset((void *)psh, 0, sizeof(*psh));
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	self->puppet = fork();
	ASSERT_LE(0, self->puppet);
	if (self->puppet == 0) {
		close(p[1]);
		puppet_main(p[0]);
	}
	close(p[0]);
	self->wfd = p[1];
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_B, 1, NULL));
}

FIXTURE_TEARDOWN(inherit)
{
	if (psh->grandchild > 0)
		kill(psh->grandchild, SIGKILL);
	if (psh->child > 0)
		kill(psh->child, SIGKILL);
	if (self->puppet > 0) {
		kill(self->puppet, SIGKILL);
		bt_waitpid_bounded(self->puppet, NULL, BT_WAIT_MS);
	}
	if (self->wfd >= 0)
		close(self->wfd);
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		close(self->fd);
	}
	munmap((void *)psh, sizeof(*psh));
}

TEST_F(inherit, fork_child_and_grandchild_join)
{
	uint32_t nr = 0;

	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->puppet, 0, &nr));
	ASSERT_EQ(1, nr);
	ASSERT_EQ(0, puppet_cmd(self, 'f'));
	ASSERT_EQ(0, psh->err);
	ASSERT_LT(0, psh->child);
	ASSERT_LT(0, psh->grandchild);

	/* Membership is given at fork time, not later. */
	EXPECT_EQ(3, job_tasks(self->fd, BT_JOB_A));
	EXPECT_EQ(1, tasks_of(self->fd, BT_JOB_A, self->puppet));
	EXPECT_EQ(1, tasks_of(self->fd, BT_JOB_A, psh->child));
	EXPECT_EQ(1, tasks_of(self->fd, BT_JOB_A, psh->grandchild));
	/* They really are members: another job cannot take them. */
	EXPECT_EQ(-EBUSY, bt_attach(self->fd, BT_JOB_B, psh->grandchild, 0,
				    NULL));
	EXPECT_EQ(-EBUSY, bt_attach(self->fd, BT_JOB_B, psh->child, 0,
				    NULL));
	EXPECT_EQ(0, job_tasks(self->fd, BT_JOB_B));

	/* Exiting tasks leave: grandchild, then child. */
	ASSERT_EQ(0, kill(psh->grandchild, SIGKILL));
	ASSERT_EQ(0, puppet_cmd(self, 'w'));
	EXPECT_TRUE(WAIT_UNTIL(job_tasks(self->fd, BT_JOB_A) == 1,
			       BT_WAIT_MS))
		TH_LOG("job still has %d tasks", job_tasks(self->fd, BT_JOB_A));
	EXPECT_EQ(0, tasks_of(self->fd, BT_JOB_A, psh->child));
	EXPECT_EQ(0, tasks_of(self->fd, BT_JOB_A, psh->grandchild));
	psh->child = 0;
	psh->grandchild = 0;
}

TEST_F(inherit, new_threads_join)
{
	struct bcs_state st;
	uint32_t nr = 0;
	int i;

	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->puppet, 0, &nr));
	ASSERT_EQ(1, nr);
	ASSERT_EQ(0, puppet_cmd(self, 't'));
	ASSERT_EQ(0, psh->err);
	EXPECT_EQ(1 + NR_THREADS, job_tasks(self->fd, BT_JOB_A));
	for (i = 0; i < NR_THREADS; i++) {
		EXPECT_TRUE(has_tid(self->fd, BT_JOB_A, psh->tid[i]))
			TH_LOG("thread %d not in the job", psh->tid[i]);
	}
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(1 + NR_THREADS, st.nr_tasks);

	/* Threads that exit leave the job by themselves. */
	ASSERT_EQ(0, puppet_cmd(self, 'x'));
	EXPECT_TRUE(WAIT_UNTIL(job_tasks(self->fd, BT_JOB_A) == 1,
			       BT_WAIT_MS))
		TH_LOG("job still has %d tasks", job_tasks(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(1, st.nr_tasks);
}

TEST_F(inherit, thread_attach_inherits_to_new_threads)
{
	uint32_t nr = 0;

	/* Attaching the only thread alone still passes on membership. */
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->puppet,
			       BCS_ATTACH_THREAD, &nr));
	ASSERT_EQ(1, nr);
	ASSERT_EQ(0, puppet_cmd(self, 't'));
	EXPECT_EQ(1 + NR_THREADS, job_tasks(self->fd, BT_JOB_A));
	ASSERT_EQ(0, puppet_cmd(self, 'x'));
}

TEST_F(inherit, fork_and_exec_stays)
{
	char comm[64] = "";
	char path[64];

	if (access("/bin/sleep", X_OK))
		SKIP(return, "/bin/sleep not available");
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->puppet, 0, NULL));
	ASSERT_EQ(0, puppet_cmd(self, 'e'));
	ASSERT_LT(0, psh->child);
	snprintf(path, sizeof(path), "/proc/%d/comm", psh->child);
	/* Wait for the exec to have happened. */
	ASSERT_TRUE(WAIT_UNTIL(!bt_read_file(path, comm, sizeof(comm)) &&
			       !strncmp(comm, "sleep", 5), BT_WAIT_MS));
	EXPECT_EQ(2, job_tasks(self->fd, BT_JOB_A));
	EXPECT_EQ(1, tasks_of(self->fd, BT_JOB_A, psh->child));
	ASSERT_EQ(0, kill(psh->child, SIGKILL));
	ASSERT_EQ(0, puppet_cmd(self, 'w'));
	psh->child = 0;
	EXPECT_TRUE(WAIT_UNTIL(job_tasks(self->fd, BT_JOB_A) == 1,
			       BT_WAIT_MS));
}

TEST_F(inherit, detached_parent_children_stay_out)
{
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->puppet, 0, NULL));
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, self->puppet, 0, NULL));
	ASSERT_EQ(0, puppet_cmd(self, 'f'));
	ASSERT_LT(0, psh->grandchild);
	EXPECT_EQ(0, job_tasks(self->fd, BT_JOB_A));
	/* The new tasks belong to nobody and can be attached anywhere. */
	EXPECT_EQ(0, bt_attach(self->fd, BT_JOB_B, psh->child, 0, NULL));
	EXPECT_EQ(1, job_tasks(self->fd, BT_JOB_B));
}

TEST_F(inherit, process_exit_leaves)
{
	struct bcs_state st;
	int status;

	ASSERT_EQ(0, puppet_cmd(self, 't'));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->puppet, 0, NULL));
	ASSERT_EQ(1 + NR_THREADS, job_tasks(self->fd, BT_JOB_A));
	ASSERT_EQ(0, kill(self->puppet, SIGKILL));
	ASSERT_EQ(self->puppet, bt_waitpid_bounded(self->puppet, &status,
						   BT_WAIT_MS));
	self->puppet = 0;
	EXPECT_EQ(0, job_tasks(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(0, st.nr_tasks);
	/* The job outlives its tasks. */
	EXPECT_EQ(2, st.nr_jobs);
}

/*
 * The kernel's workers inside a user process, here io_uring's SQPOLL
 * thread, are not attached with the process: they run task works with
 * kernel locks held (SQPOLL holds its ring's lock), so parking them would
 * stop work outside the job.
 */
TEST(io_uring_sqpoll_thread_stays_out)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SQPOLL,
		.sq_thread_idle = 1000,
	};
	pid_t tids[8];
	uint32_t nr = 0;
	int fd, ring, n;

	fd = bt_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bt_reset(fd));
	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0) {
		close(fd);
		SKIP(return, "io_uring with SQPOLL: %s", strerror(errno));
	}
	/* This process: the test's thread and the ring's SQPOLL thread. */
	n = bt_list_threads(getpid(), tids, 8);
	ASSERT_EQ(2, n);
	ASSERT_EQ(0, bt_job_create(fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_attach(fd, BT_JOB_A, getpid(), 0, &nr));
	EXPECT_EQ(1, nr);
	EXPECT_EQ(1, job_tasks(fd, BT_JOB_A));
	/* Nor can the worker be attached on its own. */
	EXPECT_EQ(-EINVAL, bt_attach(fd, BT_JOB_A,
				     tids[0] == getpid() ? tids[1] : tids[0],
				     BCS_ATTACH_THREAD, NULL));
	EXPECT_EQ(0, bt_reset(fd));
	close(ring);
	close(fd);
}

/*
 * Attach while clone() adds threads as fast as it can: attach walks the
 * thread list twice, and threads added between the walks must neither
 * overrun what the first walk sized (once an unprivileged heap overwrite)
 * nor be left out.  After every attach, once the cloning has stopped,
 * every live thread of the process is in the job.
 */
#define STORM_BASE	300	/* threads before the first attach */
#define STORM_MAX	2000	/* threads the cloners create at most */
#define STORM_CLONERS	3
#define STORM_ROUNDS	4

struct storm_sh {
	volatile int created;
	volatile int go;	/* cloners clone while set */
	volatile int idle;	/* cloners not cloning */
	volatile int err;
};

static struct storm_sh *ssh;

static void *storm_sleeper(void *p)
{
	(void)p;
	for (;;)
		pause();
	return NULL;
}

static int storm_spawn(void)
{
	pthread_attr_t a;
	pthread_t t;
	int ret;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &a, storm_sleeper, NULL);
	pthread_attr_destroy(&a);
	if (!ret)
		__atomic_add_fetch(&ssh->created, 1, __ATOMIC_SEQ_CST);
	else
		ssh->err = ret;
	return ret;
}

static void *storm_cloner(void *p)
{
	(void)p;
	for (;;) {
		if (!ssh->go) {
			__atomic_add_fetch(&ssh->idle, 1, __ATOMIC_SEQ_CST);
			while (!ssh->go)
				usleep(1000);
			__atomic_sub_fetch(&ssh->idle, 1, __ATOMIC_SEQ_CST);
		}
		if (ssh->created >= STORM_MAX || storm_spawn())
			break;
	}
	__atomic_add_fetch(&ssh->idle, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void storm_child(void)
{
	pthread_t t;
	int i;

	for (i = 0; i < STORM_BASE; i++)
		if (storm_spawn())
			_exit(1);
	for (i = 0; i < STORM_CLONERS; i++)
		if (pthread_create(&t, NULL, storm_cloner, NULL))
			_exit(1);
	for (;;)
		pause();
}

/* Threads of @pid now, from /proc (bounded by @max). */
static int storm_threads(pid_t pid, pid_t *tids, int max)
{
	return bt_list_threads(pid, tids, max);
}

TEST(attach_while_cloning)
{
	const int max = STORM_MAX + STORM_BASE + STORM_CLONERS + 16;
	int fd, round, n, live, status;
	uint32_t nr = 0;
	pid_t child, *tids;

	tids = calloc(max, sizeof(*tids));
	ASSERT_NE(NULL, tids);
	ssh = mmap(NULL, sizeof(*ssh), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ssh);
	fd = bt_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bt_reset(fd));
	ASSERT_EQ(0, bt_job_create(fd, BT_JOB_A, BCS_ROW_NONE, NULL));
	fflush(stdout);
	fflush(stderr);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		storm_child();
	ASSERT_TRUE(WAIT_UNTIL(ssh->created >= STORM_BASE &&
			       ssh->idle == STORM_CLONERS, BT_WAIT_MS));

	for (round = 0; round < STORM_ROUNDS; round++) {
		ssh->go = 1;
		/* Attach and detach while the cloners run. */
		EXPECT_EQ(0, bt_attach(fd, BT_JOB_A, child, 0, &nr));
		EXPECT_LE(STORM_BASE, nr);
		ssh->go = 0;
		ASSERT_TRUE(WAIT_UNTIL(ssh->idle == STORM_CLONERS, BT_WAIT_MS));
		live = storm_threads(child, tids, max);
		n = job_tasks(fd, BT_JOB_A);
		EXPECT_EQ(live, n) TH_LOG("round %d: %d threads, %d in the job",
					   round, live, n);
		EXPECT_EQ(0, bt_detach(fd, BT_JOB_A, child, 0, &nr));
		EXPECT_EQ(0, job_tasks(fd, BT_JOB_A));
	}
	EXPECT_EQ(0, ssh->err);
	kill(child, SIGKILL);
	EXPECT_EQ(child, bt_waitpid_bounded(child, &status, BT_WAIT_MS));
	EXPECT_EQ(0, bt_reset(fd));
	close(fd);
	munmap((void *)ssh, sizeof(*ssh));
	free(tids);
}

BT_HARNESS_MAIN

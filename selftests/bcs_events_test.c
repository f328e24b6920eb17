// SPDX-License-Identifier: GPL-2.0
/*
 * The end of a job on the generic netlink multicast group "events"
 * (BCS_CMD_JOB_ENDED): a destroyed job announced exactly once with its id,
 * a job whose last task exits or is detached announced as such, no listener
 * but CAP_SYS_ADMIN, the statistics of a task killed with SIGKILL readable
 * after the job's end until released, and the bound on the statistics of
 * destroyed jobs (module parameter dist_kept_jobs) dropping the oldest and
 * counting it in debugfs bcs/state; a listener whose socket buffer is full
 * told so (ENOBUFS), the refusals counted.
 *
 * Events come in the order of their numbers: a test that must show that
 * something was *not* announced ends another job after it and checks that
 * the next event is that one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

#define JOB_SENTINEL	0x5a0000ffU
#define JOB_K(i)	(0x5a000010U + (i))
#define KEPT_PARAM	"/sys/module/bcs/parameters/dist_kept_jobs"
#define DEBUGFS_STATE	"/sys/kernel/debug/bcs/state"

struct job_event {
	uint32_t job;
	uint32_t reason;
	uint32_t dist_tasks;
	uint64_t seq;
	bool have_job, have_reason, have_dist, have_seq;
};

struct listener {
	struct nl_sock *sk;
	int fd;
	int family;
	int grp;
	/* Events read but not yet handed out, from one datagram. */
	struct job_event pending[64];
	int npending, next;
};

/* Resolve the family and its group; join it.  0 or -errno. */
static int listen_open(struct listener *l)
{
	struct timeval tv = {
		.tv_sec = bt_wait_ms() / 1000,
		.tv_usec = bt_wait_ms() % 1000 * 1000,
	};

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->sk = nl_socket_alloc();
	if (!l->sk)
		return -ENOMEM;
	if (genl_connect(l->sk) < 0)
		return -ECONNREFUSED;
	l->fd = nl_socket_get_fd(l->sk);
	l->family = genl_ctrl_resolve(l->sk, BCS_GENL_NAME);
	if (l->family < 0)
		return -ENOENT;
	l->grp = genl_ctrl_resolve_grp(l->sk, BCS_GENL_NAME,
				       BCS_GENL_MCGRP_EVENTS);
	if (l->grp < 0)
		return -ENOENT;
	if (setsockopt(l->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	if (setsockopt(l->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &l->grp,
		       sizeof(l->grp)))
		return -errno;
	return 0;
}

static void listen_close(struct listener *l)
{
	if (l->sk)
		nl_socket_free(l->sk);
	l->sk = NULL;
}

static void parse_event(const struct genlmsghdr *gh, int len,
			struct job_event *ev)
{
	struct nlattr *a;
	int rem;

	memset(ev, 0, sizeof(*ev));
	nla_for_each_attr(a, (struct nlattr *)((char *)gh + GENL_HDRLEN),
			  len - GENL_HDRLEN, rem) {
		switch (nla_type(a)) {
		case BCS_A_JOB:
			ev->have_job = nla_len(a) == 4;
			ev->job = nla_get_u32(a);
			break;
		case BCS_A_JOB_END:
			ev->have_reason = nla_len(a) == 4;
			ev->reason = nla_get_u32(a);
			break;
		case BCS_A_DIST_TASKS:
			ev->have_dist = nla_len(a) == 4;
			ev->dist_tasks = nla_get_u32(a);
			break;
		case BCS_A_EVENT_SEQ:
			ev->have_seq = nla_len(a) == 8;
			ev->seq = nla_get_u64(a);
			break;
		}
	}
}

/* The next event: 0, -EAGAIN after the receive timeout, or -errno. */
static int next_event(struct listener *l, struct job_event *ev)
{
	static char buf[16384];
	struct nlmsghdr *nh;
	ssize_t n;
	int len;

	while (l->next >= l->npending) {
		l->next = 0;
		l->npending = 0;
		n = recv(l->fd, buf, sizeof(buf), 0);
		if (n < 0)
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		len = (int)n;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len)) {
			struct genlmsghdr *gh = NLMSG_DATA(nh);

			if (nh->nlmsg_type != l->family ||
			    nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN) ||
			    gh->cmd != BCS_CMD_JOB_ENDED ||
			    l->npending >= (int)ARRAY_SIZE(l->pending))
				continue;
			parse_event(gh, nh->nlmsg_len - NLMSG_HDRLEN,
				    &l->pending[l->npending++]);
		}
	}
	*ev = l->pending[l->next++];
	return 0;
}

/*
 * End a job of our own and read up to its announcement: whatever was
 * announced before (by an earlier test's clean-up) is behind us then.
 */
static int drain(int fd, struct listener *l)
{
	struct job_event ev;
	int err, i;

	err = bt_job_create(fd, JOB_SENTINEL, BCS_ROW_NONE, NULL);
	if (!err)
		err = bt_job_destroy(fd, JOB_SENTINEL);
	for (i = 0; !err && i < 100000; i++) {
		err = next_event(l, &ev);
		if (!err && ev.job == JOB_SENTINEL &&
		    ev.reason == BCS_JOB_END_DESTROYED)
			return 0;
	}
	return err ?: -ENOSPC;
}

static int dist_ctl(int fd, uint32_t job, uint32_t op, uint32_t metrics)
{
	struct bcs_dist_ctl c = {
		.size = sizeof(c),
		.job = job,
		.op = op,
		.metrics = metrics,
		.sub_bits = op == BCS_DIST_ENABLE ? 3 : 0,
	};

	return bt_ioctl(fd, BCS_IOC_DIST_CTL, &c);
}

static int dist_read(int fd, uint32_t job, pid_t pid,
		     struct bcs_dist_read *rd)
{
	memset(rd, 0, sizeof(*rd));
	rd->size = sizeof(*rd);
	rd->job = job;
	rd->pid = pid;
	rd->metric = BCS_DIST_BLOCKED;
	return bt_ioctl(fd, BCS_IOC_DIST_READ, rd);
}

/* A number from debugfs bcs/state ("name: N"), or -1. */
static long long debugfs_count(const char *name)
{
	char buf[4096], *p;
	size_t n = strlen(name);

	if (bt_read_file(DEBUGFS_STATE, buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ':')
			return strtoll(p + n + 1, NULL, 10);
	return -1;
}

FIXTURE(ev) {
	int fd;
	struct listener l;
	struct bt_burner b;
	char kept[32];
};

FIXTURE_SETUP(ev)
{
	int i;

	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	for (i = 0; i < 5; i++)
		dist_ctl(self->fd, JOB_K(i), BCS_DIST_RELEASE, 0);
	dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0);
	ASSERT_EQ(0, listen_open(&self->l));
	ASSERT_EQ(0, drain(self->fd, &self->l));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_B, 1, NULL));
}

FIXTURE_TEARDOWN(ev)
{
	int i;

	bt_burner_stop(&self->b);
	listen_close(&self->l);
	if (self->kept[0])
		bt_write_file(KEPT_PARAM, self->kept);
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		for (i = 0; i < 5; i++)
			dist_ctl(self->fd, JOB_K(i), BCS_DIST_RELEASE, 0);
		dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0);
		close(self->fd);
	}
}

#define EXPECT_EVENT(l, id, why) do {					\
	struct job_event __e;						\
	ASSERT_EQ(0, next_event(l, &__e));				\
	EXPECT_TRUE(__e.have_job && __e.have_reason &&			\
		    __e.have_dist && __e.have_seq);			\
	EXPECT_EQ((uint32_t)(id), __e.job);				\
	EXPECT_EQ((uint32_t)(why), __e.reason);				\
} while (0)

/* Destruction: one event with the id, none for the tasks it detaches. */
TEST_F(ev, destroy_announced_once)
{
	struct job_event e1, e2;
	long long before = debugfs_count("job_events_sent");

	ASSERT_EQ(0, bt_burner_start(&self->b, 3, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_B));

	ASSERT_EQ(0, next_event(&self->l, &e1));
	ASSERT_EQ(0, next_event(&self->l, &e2));
	EXPECT_TRUE(e1.have_job && e1.have_reason && e1.have_dist &&
		    e1.have_seq);
	EXPECT_EQ(BT_JOB_A, e1.job);
	EXPECT_EQ(BCS_JOB_END_DESTROYED, e1.reason);
	EXPECT_EQ(0, e1.dist_tasks);
	/* The next event is B's: A's destruction came exactly once. */
	EXPECT_EQ(BT_JOB_B, e2.job);
	EXPECT_EQ(BCS_JOB_END_DESTROYED, e2.reason);
	EXPECT_EQ(e1.seq + 1, e2.seq);
	/* The burner still runs, detached; its exit announces nothing. */
	bt_burner_stop(&self->b);
	ASSERT_EQ(0, bt_job_create(self->fd, JOB_SENTINEL, BCS_ROW_NONE,
				   NULL));
	ASSERT_EQ(0, bt_job_destroy(self->fd, JOB_SENTINEL));
	EXPECT_EVENT(&self->l, JOB_SENTINEL, BCS_JOB_END_DESTROYED);
	/* Counted as sent (the count may lag the last one's arrival). */
	if (before >= 0)
		EXPECT_LE(before + 2, debugfs_count("job_events_sent"));
}

/* The last task exits: announced once, as an exit; the job lives on. */
TEST_F(ev, last_task_exit_announced)
{
	ASSERT_EQ(0, bt_burner_start(&self->b, 4, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	bt_burner_stop(&self->b);
	EXPECT_EVENT(&self->l, BT_JOB_A, BCS_JOB_END_EXITED);
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_B));
	EXPECT_EVENT(&self->l, BT_JOB_B, BCS_JOB_END_DESTROYED);
	/* Still a job, and its destruction is announced too. */
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_A));
	EXPECT_EVENT(&self->l, BT_JOB_A, BCS_JOB_END_DESTROYED);
}

/* Detaching one of two threads ends nothing; detaching the last does. */
TEST_F(ev, last_task_detach_announced)
{
	ASSERT_EQ(0, bt_burner_start(&self->b, 2, true));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, self->b.sh->tid[1],
			       BCS_ATTACH_THREAD, NULL));
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_B));
	EXPECT_EVENT(&self->l, BT_JOB_B, BCS_JOB_END_DESTROYED);
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	EXPECT_EVENT(&self->l, BT_JOB_A, BCS_JOB_END_DETACHED);
	/* Joined again and left again: announced again. */
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	ASSERT_EQ(0, bt_detach(self->fd, BT_JOB_A, self->b.pid, 0, NULL));
	EXPECT_EVENT(&self->l, BT_JOB_A, BCS_JOB_END_DETACHED);
}

/*
 * A listener that does not read: its socket refuses what its buffer cannot
 * hold, its next recv() says so (ENOBUFS), and the module counts the
 * refusals of a socket that asks to be told of them (NETLINK_BROADCAST_ERROR,
 * as libbcs's); other listeners get every event.  Netlink drops everything
 * for that socket until it has read its queue empty.
 */
TEST_F(ev, full_listener_counted)
{
	struct listener slow;
	struct job_event e;
	long long failed;
	int one = 1, i, err;

	if (!bt_exists("/sys/kernel/debug/bcs") &&
	    system("mount -t debugfs none /sys/kernel/debug 2>/dev/null"))
		SKIP(return, "debugfs not mounted and cannot be");
	failed = debugfs_count("job_events_failed");
	ASSERT_LE(0, failed);
	ASSERT_EQ(0, listen_open(&slow));
	/* The kernel makes it its smallest buffer. */
	ASSERT_EQ(0, setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &one,
				sizeof(one)));
	ASSERT_EQ(0, setsockopt(slow.fd, SOL_NETLINK, NETLINK_BROADCAST_ERROR,
				&one, sizeof(one)));
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, bt_job_create(self->fd, JOB_K(8 + i),
					   BCS_ROW_NONE, NULL));
		ASSERT_EQ(0, bt_job_destroy(self->fd, JOB_K(8 + i)));
	}
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, next_event(&self->l, &e));
		EXPECT_EQ(JOB_K(8 + i), e.job);
	}
	EXPECT_TRUE(WAIT_UNTIL(debugfs_count("job_events_failed") > failed,
			       BT_WAIT_MS));
	err = next_event(&slow, &e);
	EXPECT_EQ(-ENOBUFS, err);
	/* Read empty, it gets what comes after. */
	while (recv(slow.fd, &e, sizeof(e), MSG_DONTWAIT | MSG_TRUNC) >= 0)
		;
	slow.npending = 0;
	slow.next = 0;
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_B));
	do {
		err = next_event(&slow, &e);
	} while (!err && e.job != BT_JOB_B);
	EXPECT_EQ(0, err);
	EXPECT_EQ(BT_JOB_B, e.job);
	listen_close(&slow);
}

/* Only CAP_SYS_ADMIN may join the group; a request of it is refused. */
TEST_F(ev, unprivileged_cannot_listen)
{
	int *res, status = -1;
	pid_t child;

	res = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	res[0] = res[1] = 1;
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct listener l;

		res[0] = bt_drop_privs();
		res[1] = listen_open(&l);
		listen_close(&l);
		_exit(0);
	}
	ASSERT_EQ(child, bt_waitpid_bounded(child, &status, BT_WAIT_MS));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(-EPERM, res[1]);
	munmap(res, 4096);

	/* The privileged listener still hears. */
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_B));
	EXPECT_EVENT(&self->l, BT_JOB_B, BCS_JOB_END_DESTROYED);
}

/*
 * A task killed with SIGKILL: the job's end says that it keeps statistics,
 * which stay readable after it exits and after the job is destroyed, until
 * released.
 */
TEST_F(ev, killed_task_stats_after_the_end)
{
	struct bcs_dist_read rd;
	struct job_event e;
	pid_t pid;

	ASSERT_EQ(0, bt_burner_start(&self->b, 1, true));
	pid = self->b.pid;
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_ENABLE,
			      BCS_DIST_ALL));
	ASSERT_TRUE(WAIT_UNTIL(!dist_read(self->fd, BT_JOB_A, pid, &rd) &&
			       rd.totals.blocked_ns > 0, BT_WAIT_MS));
	bt_burner_stop(&self->b);	/* SIGKILL */

	ASSERT_EQ(0, next_event(&self->l, &e));
	EXPECT_EQ(BT_JOB_A, e.job);
	EXPECT_EQ(BCS_JOB_END_EXITED, e.reason);
	EXPECT_EQ(1, e.dist_tasks);
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, pid, &rd));
	EXPECT_TRUE(rd.totals.flags & BCS_DIST_GONE);
	EXPECT_LT(0, rd.totals.tracked_ns);

	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_A));
	ASSERT_EQ(0, next_event(&self->l, &e));
	EXPECT_EQ(BT_JOB_A, e.job);
	EXPECT_EQ(BCS_JOB_END_DESTROYED, e.reason);
	EXPECT_EQ(1, e.dist_tasks);
	ASSERT_EQ(0, dist_read(self->fd, BT_JOB_A, pid, &rd));
	EXPECT_TRUE(rd.totals.flags & BCS_DIST_GONE);
	EXPECT_LT(0, rd.totals.blocked_ns);

	ASSERT_EQ(0, dist_ctl(self->fd, BT_JOB_A, BCS_DIST_RELEASE, 0));
	EXPECT_EQ(-ENOENT, dist_read(self->fd, BT_JOB_A, pid, &rd));
}

/*
 * dist_kept_jobs: the statistics of at most that many destroyed jobs stay;
 * the next destruction drops those destroyed first, and counts them.
 */
TEST_F(ev, bound_drops_the_oldest)
{
	struct bcs_dist_read rd;
	long long dropped;
	pid_t pid;
	int i;

	if (!bt_exists("/sys/kernel/debug/bcs") &&
	    system("mount -t debugfs none /sys/kernel/debug 2>/dev/null"))
		SKIP(return, "debugfs not mounted and cannot be");
	ASSERT_EQ(0, bt_read_file(KEPT_PARAM, self->kept,
				  sizeof(self->kept)));
	EXPECT_EQ(-EINVAL, bt_write_file(KEPT_PARAM, "0"));
	EXPECT_EQ(-EINVAL, bt_write_file(KEPT_PARAM, "65537"));
	ASSERT_EQ(0, bt_burner_start(&self->b, 1, true));
	pid = self->b.pid;

	/*
	 * Statistics other programs left behind go first: with a bound of 1,
	 * one destruction drops every older one.
	 */
	ASSERT_EQ(0, bt_write_file(KEPT_PARAM, "1"));
	ASSERT_EQ(0, bt_job_create(self->fd, JOB_K(4), 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, JOB_K(4), pid, 0, NULL));
	ASSERT_EQ(0, dist_ctl(self->fd, JOB_K(4), BCS_DIST_ENABLE,
			      BCS_DIST_ALL));
	ASSERT_EQ(0, bt_job_destroy(self->fd, JOB_K(4)));
	EXPECT_EQ(1, debugfs_count("dist_destroyed_jobs"));
	ASSERT_EQ(0, dist_ctl(self->fd, JOB_K(4), BCS_DIST_RELEASE, 0));
	EXPECT_EQ(0, debugfs_count("dist_destroyed_jobs"));

	ASSERT_EQ(0, bt_write_file(KEPT_PARAM, "2"));
	dropped = debugfs_count("dist_dropped_jobs");
	ASSERT_LE(0, dropped);

	/* One task, in each of four jobs in turn, tracked in each. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, bt_job_create(self->fd, JOB_K(i), 0, NULL));
		ASSERT_EQ(0, bt_attach(self->fd, JOB_K(i), pid, 0, NULL));
		ASSERT_EQ(0, dist_ctl(self->fd, JOB_K(i), BCS_DIST_ENABLE,
				      BCS_DIST_ALL));
		ASSERT_EQ(0, bt_detach(self->fd, JOB_K(i), pid, 0, NULL));
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, bt_job_destroy(self->fd, JOB_K(i)));
	EXPECT_EQ(dropped, debugfs_count("dist_dropped_jobs"));
	EXPECT_EQ(2, debugfs_count("dist_destroyed_jobs"));
	ASSERT_EQ(0, dist_read(self->fd, JOB_K(0), pid, &rd));

	ASSERT_EQ(0, bt_job_destroy(self->fd, JOB_K(2)));
	EXPECT_EQ(dropped + 1, debugfs_count("dist_dropped_jobs"));
	EXPECT_EQ(-ENOENT, dist_read(self->fd, JOB_K(0), pid, &rd));
	EXPECT_EQ(0, dist_read(self->fd, JOB_K(1), pid, &rd));
	EXPECT_EQ(0, dist_read(self->fd, JOB_K(2), pid, &rd));

	/* A released one frees its place: nothing more is dropped. */
	ASSERT_EQ(0, dist_ctl(self->fd, JOB_K(1), BCS_DIST_RELEASE, 0));
	ASSERT_EQ(0, bt_job_destroy(self->fd, JOB_K(3)));
	EXPECT_EQ(dropped + 1, debugfs_count("dist_dropped_jobs"));
	EXPECT_EQ(0, dist_read(self->fd, JOB_K(2), pid, &rd));
	EXPECT_EQ(0, dist_read(self->fd, JOB_K(3), pid, &rd));
	EXPECT_EQ(2, debugfs_count("dist_destroyed_jobs"));
}

BT_HARNESS_MAIN

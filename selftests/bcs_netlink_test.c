// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "bcs": GET_STATE, DRIVE, STROBE, RELEASE,
 * strict attribute validation, permissions and fail-open when the driving
 * socket is closed.  Messages are built with libnl-genl-3; errors are taken
 * from the kernel's netlink error message so that exact errnos can be
 * checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

struct nlreply {
	int error;		/* 0 or -errno from the kernel */
	bool done;
	bool have[BCS_A_MAX + 1];
	uint64_t val[BCS_A_MAX + 1];
};

struct nlconn {
	struct nl_sock *sk;
	int family;
};

static int bnl_open(struct nlconn *c)
{
	struct timeval tv = { .tv_sec = 5 };
	int ret;

	c->sk = nl_socket_alloc();
	if (!c->sk)
		return -ENOMEM;
	ret = genl_connect(c->sk);
	if (ret < 0)
		return -ECONNREFUSED;
	/* Never wait forever for a reply. */
	setsockopt(nl_socket_get_fd(c->sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
		   sizeof(tv));
	c->family = genl_ctrl_resolve(c->sk, BCS_GENL_NAME);
	return c->family < 0 ? -ENOENT : 0;
}

static void bnl_close(struct nlconn *c)
{
	if (c->sk)
		nl_socket_free(c->sk);
	c->sk = NULL;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlreply *r = arg;
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *a;
	int rem;

	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			  rem) {
		int t = nla_type(a);

		if (t <= 0 || t > BCS_A_MAX)
			continue;
		r->have[t] = true;
		if (nla_len(a) == 8)
			r->val[t] = nla_get_u64(a);
		else if (nla_len(a) == 4)
			r->val[t] = nla_get_u32(a);
	}
	return NL_OK;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct nlreply *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct nlreply *r = arg;

	(void)who;
	r->error = e->error;
	r->done = true;
	return NL_STOP;
}

/* Send @msg (consumed), collect the reply; returns 0 or -errno. */
static int bnl_xfer(struct nlconn *c, struct nl_msg *msg, struct nlreply *r)
{
	struct nl_cb *cb;
	int ret, i;

	memset(r, 0, sizeof(*r));
	ret = nl_send_auto(c->sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return -EIO;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	for (i = 0; i < 16 && !r->done; i++) {
		ret = nl_recvmsgs(c->sk, cb);
		if (ret < 0 && !r->done) {
			nl_cb_put(cb);
			return -EIO;
		}
	}
	nl_cb_put(cb);
	return r->done ? r->error : -ETIMEDOUT;
}

static struct nl_msg *bnl_new(struct nlconn *c, int cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0,
				NLM_F_REQUEST | NLM_F_ACK, cmd,
				BCS_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

static int bnl_simple(struct nlconn *c, int cmd, struct nlreply *r)
{
	struct nl_msg *msg = bnl_new(c, cmd);

	return msg ? bnl_xfer(c, msg, r) : -ENOMEM;
}

static int bnl_drive(struct nlconn *c, uint64_t slice_ns, int watchdog)
{
	struct nl_msg *msg = bnl_new(c, BCS_CMD_DRIVE);
	struct nlreply r;

	if (!msg)
		return -ENOMEM;
	if (slice_ns)
		nla_put_u64(msg, BCS_A_SLICE_NS, slice_ns);
	if (watchdog >= 0)
		nla_put_u32(msg, BCS_A_WATCHDOG_SLICES, (uint32_t)watchdog);
	return bnl_xfer(c, msg, &r);
}

/* A strobe of @row now; @slice 0 means the current slice + 1. */
static int bnl_strobe(struct nlconn *c, uint32_t row)
{
	struct nl_msg *msg = bnl_new(c, BCS_CMD_STROBE);
	struct bcs_state st;
	struct nlreply r;
	int fd = bt_open();

	if (!msg || fd < 0)
		return -ENOMEM;
	bt_get_state(fd, &st);
	close(fd);
	nla_put_u64(msg, BCS_A_SLICE, st.slice + 1);
	nla_put_u32(msg, BCS_A_ROW, row);
	nla_put_u64(msg, BCS_A_DEADLINE_NS, bt_now_ns(CLOCK_REALTIME));
	nla_put_u32(msg, BCS_A_FLAGS, BCS_STROBE_NOW);
	return bnl_xfer(c, msg, &r);
}

/*
 * A BCS_CMD_STROBE for @slice and @row due at @deadline_ns, to which the
 * caller may add attributes; NULL if it cannot be built.
 */
static struct nl_msg *bnl_strobe_msg(struct nlconn *c, uint64_t slice,
				     uint32_t row, uint64_t deadline_ns)
{
	struct nl_msg *msg = bnl_new(c, BCS_CMD_STROBE);

	if (msg && (nla_put_u64(msg, BCS_A_SLICE, slice) ||
		    nla_put_u32(msg, BCS_A_ROW, row) ||
		    nla_put_u64(msg, BCS_A_DEADLINE_NS, deadline_ns))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

FIXTURE(nl) {
	int fd;
	struct nlconn c;
	struct bt_burner b;
	pid_t child;
};

FIXTURE_SETUP(nl)
{
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, bnl_open(&self->c))
		TH_LOG("generic netlink family \"" BCS_GENL_NAME "\" missing");
}

FIXTURE_TEARDOWN(nl)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		bt_waitpid_bounded(self->child, NULL, BT_WAIT_MS);
	}
	bnl_close(&self->c);
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		close(self->fd);
	}
	bt_burner_stop(&self->b);
}

static int start_job(FIXTURE_DATA(nl) *self)
{
	int ret = bt_job_create(self->fd, BT_JOB_A, 0, NULL);

	if (!ret)
		ret = bt_burner_start(&self->b, 2, false);
	if (!ret)
		ret = bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, NULL);
	return ret;
}

TEST_F(nl, get_state)
{
	static const int attrs[] = {
		BCS_A_MODE, BCS_A_ROW, BCS_A_SLICE, BCS_A_SLICE_NS,
		BCS_A_WATCHDOG_SLICES, BCS_A_FAILOPEN, BCS_A_NR_JOBS,
		BCS_A_NR_TASKS, BCS_A_STROBES, BCS_A_LATE, BCS_A_MISSED,
		BCS_A_FAILOPENS, BCS_A_PREDICTED, BCS_A_EXPIRED,
		BCS_A_NR_PARKED, BCS_A_DRIVER_PID, BCS_A_SWITCHES,
		BCS_A_ATTACH_FAILURES, BCS_A_STAT_RECORDS, BCS_A_DRAIN_CUTS,
		BCS_A_WINDOW_STATE, BCS_A_WINDOW_FROM, BCS_A_WINDOW_TO,
		BCS_A_WINDOW_RECORDS, BCS_A_PLANNED,
	};
	struct bcs_state st;
	struct nlreply r;
	size_t i;

	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 3, NULL));
	ASSERT_EQ(0, bnl_simple(&self->c, BCS_CMD_GET_STATE, &r));
	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		EXPECT_TRUE(r.have[attrs[i]])
			TH_LOG("attribute %d missing", attrs[i]);
	}
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(st.mode, r.val[BCS_A_MODE]);
	EXPECT_EQ(1, r.val[BCS_A_NR_JOBS]);
	EXPECT_EQ(st.slice_ns, r.val[BCS_A_SLICE_NS]);
	EXPECT_EQ(st.watchdog_slices, r.val[BCS_A_WATCHDOG_SLICES]);
	EXPECT_EQ(st.failopens, r.val[BCS_A_FAILOPENS]);
	/* Every field of struct bcs_state, as the ioctl gives it. */
	EXPECT_EQ(st.row, r.val[BCS_A_ROW]);
	EXPECT_EQ(st.slice, r.val[BCS_A_SLICE]);
	EXPECT_EQ(st.failopen, r.val[BCS_A_FAILOPEN]);
	EXPECT_EQ(st.nr_jobs, r.val[BCS_A_NR_JOBS]);
	EXPECT_EQ(st.nr_tasks, r.val[BCS_A_NR_TASKS]);
	EXPECT_EQ(st.strobes, r.val[BCS_A_STROBES]);
	EXPECT_EQ(st.late, r.val[BCS_A_LATE]);
	EXPECT_EQ(st.missed, r.val[BCS_A_MISSED]);
	EXPECT_EQ(st.predicted, r.val[BCS_A_PREDICTED]);
	EXPECT_EQ(st.expired, r.val[BCS_A_EXPIRED]);
	EXPECT_EQ(st.nr_parked, r.val[BCS_A_NR_PARKED]);
	EXPECT_EQ((uint32_t)st.driver_pid, r.val[BCS_A_DRIVER_PID]);
	EXPECT_EQ(st.switches, r.val[BCS_A_SWITCHES]);
	EXPECT_EQ(st.attach_failures, r.val[BCS_A_ATTACH_FAILURES]);
	EXPECT_EQ(st.stat_records, r.val[BCS_A_STAT_RECORDS]);
	EXPECT_EQ(st.drain_cuts, r.val[BCS_A_DRAIN_CUTS]);
	EXPECT_EQ(st.window_state, r.val[BCS_A_WINDOW_STATE]);
	EXPECT_EQ(st.planned, r.val[BCS_A_PLANNED]);
}

/* BCS_CMD_WINDOW: with @from and @to, or without either if @arm is false. */
static int bnl_window(struct nlconn *c, bool arm, uint64_t from, uint64_t to)
{
	struct nl_msg *msg = bnl_new(c, BCS_CMD_WINDOW);
	struct nlreply r;

	if (!msg)
		return -ENOMEM;
	if (arm && (nla_put_u64(msg, BCS_A_WINDOW_FROM, from) ||
		    nla_put_u64(msg, BCS_A_WINDOW_TO, to))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return bnl_xfer(c, msg, &r);
}

/*
 * A window armed through netlink is the ioctl's: the same window, the same
 * errors, shown in GET_STATE; a command without bounds disarms it.
 */
TEST_F(nl, window)
{
	struct bcs_window w;
	struct bcs_state st;
	struct nlreply r;
	struct nl_msg *m;
	uint64_t base;

	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	base = st.slice;
	ASSERT_EQ(0, bnl_window(&self->c, true, base + 100, base + 199));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_ARMED, w.state);
	EXPECT_EQ(base + 100, w.from_slice);
	EXPECT_EQ(base + 199, w.to_slice);
	EXPECT_EQ(0, w.records);
	ASSERT_EQ(0, bnl_simple(&self->c, BCS_CMD_GET_STATE, &r));
	EXPECT_EQ(BCS_WINDOW_ARMED, r.val[BCS_A_WINDOW_STATE]);
	EXPECT_EQ(base + 100, r.val[BCS_A_WINDOW_FROM]);
	EXPECT_EQ(base + 199, r.val[BCS_A_WINDOW_TO]);
	EXPECT_EQ(0, r.val[BCS_A_WINDOW_RECORDS]);

	/* The errors of BCS_WINDOW_ARM; none changes the window. */
	EXPECT_EQ(-EINVAL, bnl_window(&self->c, true, base + 10, base + 9));
	EXPECT_EQ(-E2BIG, bnl_window(&self->c, true, base + 10,
				     base + 10 + st.stat_records));
	EXPECT_EQ(-ERANGE, bnl_window(&self->c, true, base, base + 5));
	/* One bound without the other. */
	m = bnl_new(&self->c, BCS_CMD_WINDOW);
	ASSERT_NE(NULL, m);
	nla_put_u64(m, BCS_A_WINDOW_FROM, base + 10);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));
	m = bnl_new(&self->c, BCS_CMD_WINDOW);
	ASSERT_NE(NULL, m);
	nla_put_u64(m, BCS_A_WINDOW_TO, base + 10);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));
	/* A bound of the wrong length, and a reply-only attribute. */
	m = bnl_new(&self->c, BCS_CMD_WINDOW);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_WINDOW_FROM, 10);
	nla_put_u64(m, BCS_A_WINDOW_TO, base + 10);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));
	m = bnl_new(&self->c, BCS_CMD_WINDOW);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_WINDOW_STATE, BCS_WINDOW_DONE);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_ARMED, w.state);
	EXPECT_EQ(base + 100, w.from_slice);
	EXPECT_EQ(base + 199, w.to_slice);

	/* Arming again replaces it; no bounds disarm. */
	ASSERT_EQ(0, bnl_window(&self->c, true, base + 1, base + 1));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(base + 1, w.from_slice);
	EXPECT_EQ(base + 1, w.to_slice);
	ASSERT_EQ(0, bnl_window(&self->c, false, 0, 0));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_NONE, w.state);
	ASSERT_EQ(0, bnl_simple(&self->c, BCS_CMD_GET_STATE, &r));
	EXPECT_EQ(BCS_WINDOW_NONE, r.val[BCS_A_WINDOW_STATE]);
	EXPECT_EQ(0, r.val[BCS_A_WINDOW_FROM]);
}

TEST_F(nl, strobe_needs_drive)
{
	EXPECT_EQ(-ENOTCONN, bnl_strobe(&self->c, 0));
}

TEST_F(nl, drive_strobe_release)
{
	struct bcs_job_info ji;
	struct bcs_state st;
	struct nlreply r;

	ASSERT_EQ(0, start_job(self));
	ASSERT_EQ(0, bnl_drive(&self->c, 10000000, 0));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_DRIVEN, st.mode);
	EXPECT_EQ(getpid(), st.driver_pid);
	EXPECT_EQ(10000000, st.slice_ns);
	EXPECT_EQ(0, st.watchdog_slices);

	ASSERT_EQ(0, bnl_strobe(&self->c, 1));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(BCS_JOB_SUSPENDED, ji.state);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(1, st.row);

	ASSERT_EQ(0, bnl_strobe(&self->c, 0));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(BCS_JOB_RUNNING, ji.state);
	ASSERT_EQ(0, bnl_simple(&self->c, BCS_CMD_GET_STATE, &r));
	EXPECT_EQ(BCS_MODE_DRIVEN, r.val[BCS_A_MODE]);
	EXPECT_EQ(0, r.val[BCS_A_ROW]);

	/* Suspend again, then give up driving: everybody runs, mode off. */
	ASSERT_EQ(0, bnl_strobe(&self->c, 1));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	ASSERT_EQ(0, bnl_simple(&self->c, BCS_CMD_RELEASE, &r));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_OFF, st.mode);
	EXPECT_EQ(0, st.driver_pid);
}

TEST_F(nl, bad_attributes)
{
	struct nlreply r;
	struct nl_msg *m;
	struct bcs_state st;
	uint16_t small = 1;

	ASSERT_EQ(0, bnl_drive(&self->c, 0, 0));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));

	/* Missing BCS_A_ROW. */
	m = bnl_new(&self->c, BCS_CMD_STROBE);
	ASSERT_NE(NULL, m);
	nla_put_u64(m, BCS_A_SLICE, st.slice + 1);
	nla_put_u64(m, BCS_A_DEADLINE_NS, 0);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* BCS_A_ROW out of range. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, BCS_ROWS_MAX, 0);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(-ERANGE, bnl_xfer(&self->c, m, &r));

	/* BCS_A_ROW too long. */
	m = bnl_new(&self->c, BCS_CMD_STROBE);
	ASSERT_NE(NULL, m);
	nla_put_u64(m, BCS_A_SLICE, st.slice + 1);
	nla_put_u64(m, BCS_A_ROW, 0);
	nla_put_u64(m, BCS_A_DEADLINE_NS, 0);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* BCS_A_SLICE too short. */
	m = bnl_new(&self->c, BCS_CMD_STROBE);
	ASSERT_NE(NULL, m);
	nla_put(m, BCS_A_SLICE, sizeof(small), &small);
	nla_put_u32(m, BCS_A_ROW, 0);
	nla_put_u64(m, BCS_A_DEADLINE_NS, 0);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* Unknown attribute. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_MAX + 1, 0);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* Unknown strobe flags. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_FLAGS, 1U << 7);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* BCS_A_NEXT_ROW out of range. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_NEXT_ROW, BCS_ROWS_MAX);
	EXPECT_EQ(-ERANGE, bnl_xfer(&self->c, m, &r));

	/* BCS_STROBE_PREDICT without the row it predicts. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_FLAGS, BCS_STROBE_PREDICT);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* A prediction with a strobe for now, which has no deadline. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_FLAGS, BCS_STROBE_NOW);
	nla_put_u32(m, BCS_A_NEXT_ROW, 1);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* A plan of no slices, or of too many. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_PLAN_SLICES, 0);
	EXPECT_EQ(-ERANGE, bnl_xfer(&self->c, m, &r));
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_PLAN_SLICES, BCS_PLAN_SLICES_MAX + 1);
	EXPECT_EQ(-ERANGE, bnl_xfer(&self->c, m, &r));

	/* BCS_A_PLAN_SLICES too long, BCS_A_PLAN_ROWS too short. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u64(m, BCS_A_PLAN_SLICES, 2);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_PLAN_SLICES, 2);
	nla_put_u32(m, BCS_A_PLAN_ROWS, 3);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* BCS_STROBE_PLAN without its slices; rows without a plan. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_FLAGS, BCS_STROBE_PLAN);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u64(m, BCS_A_PLAN_ROWS, 3);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* A plan with a prediction, or for now. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_PLAN_SLICES, 2);
	nla_put_u32(m, BCS_A_NEXT_ROW, 1);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_PLAN_SLICES, 2);
	nla_put_u32(m, BCS_A_FLAGS, BCS_STROBE_NOW);
	EXPECT_EQ(-EINVAL, bnl_xfer(&self->c, m, &r));

	/* Out of range, on DRIVE and on STROBE: -ERANGE, as for any netlink
	 * range policy.
	 */
	EXPECT_EQ(-ERANGE, bnl_drive(&self->c, BCS_SLICE_NS_MIN - 1, -1));
	EXPECT_EQ(-ERANGE, bnl_drive(&self->c, BCS_SLICE_NS_MAX + 1, -1));
	EXPECT_EQ(-ERANGE, bnl_drive(&self->c, 0, BCS_WATCHDOG_MAX + 1));
	m = bnl_strobe_msg(&self->c, st.slice + 1, 0, 0);
	ASSERT_NE(NULL, m);
	nla_put_u64(m, BCS_A_SLICE_NS, BCS_SLICE_NS_MAX + 1);
	EXPECT_EQ(-ERANGE, bnl_xfer(&self->c, m, &r));

	/* Unknown command. */
	EXPECT_NE(0, bnl_simple(&self->c, BCS_CMD_MAX + 1, &r));

	/* None of it changed the configuration; a good strobe still works. */
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_MODE_DRIVEN, st.mode);
	EXPECT_EQ(0, bnl_strobe(&self->c, 0));
}

TEST_F(nl, strobe_with_prediction)
{
	struct bcs_state st0, st;
	struct nl_msg *m;
	struct nlreply r;

	ASSERT_EQ(0, bnl_drive(&self->c, 50000000, 0));
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	m = bnl_strobe_msg(&self->c, st0.slice + 1, 1,
			   bt_now_ns(CLOCK_REALTIME) + 200000000ULL);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_NEXT_ROW, 2);
	ASSERT_EQ(0, bnl_xfer(&self->c, m, &r));
	/* The strobe's slice, then the predicted one, and no more. */
	EXPECT_TRUE(WAIT_UNTIL(!bt_get_state(self->fd, &st) &&
			       st.predicted == st0.predicted + 1,
			       BT_WAIT_MS));
	EXPECT_EQ(st0.slice + 2, st.slice);
	EXPECT_EQ(2, st.row);
	EXPECT_EQ(st0.switches + 2, st.switches);
	ASSERT_EQ(0, bnl_simple(&self->c, BCS_CMD_GET_STATE, &r));
	EXPECT_EQ(st.predicted, r.val[BCS_A_PREDICTED]);
}

/*
 * A plan through netlink: BCS_A_PLAN_SLICES makes it one, BCS_A_PLAN_ROWS
 * gives its rows; its four slices switch (rows 1, 2, 1, 2), the last three
 * planned, and no more.
 */
TEST_F(nl, strobe_with_plan)
{
	struct bcs_state st0, st;
	struct nl_msg *m;
	struct nlreply r;

	ASSERT_EQ(0, bnl_drive(&self->c, 50000000, 0));
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	m = bnl_strobe_msg(&self->c, st0.slice + 1, 1,
			   bt_now_ns(CLOCK_REALTIME) + 200000000ULL);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_PLAN_SLICES, 4);
	nla_put_u64(m, BCS_A_PLAN_ROWS, 0x6);
	ASSERT_EQ(0, bnl_xfer(&self->c, m, &r));
	EXPECT_TRUE(WAIT_UNTIL(!bt_get_state(self->fd, &st) &&
			       st.planned == st0.planned + 3,
			       BT_WAIT_MS));
	bt_sleep_ms(200);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(st0.slice + 4, st.slice);
	EXPECT_EQ(2, st.row);
	EXPECT_EQ(st0.switches + 4, st.switches);
	EXPECT_EQ(st0.strobes + 1, st.strobes);
	EXPECT_EQ(st0.planned + 3, st.planned);
	ASSERT_EQ(0, bnl_simple(&self->c, BCS_CMD_GET_STATE, &r));
	EXPECT_EQ(st.planned, r.val[BCS_A_PLANNED]);

	/* Without BCS_A_PLAN_ROWS, the row in every slice. */
	m = bnl_strobe_msg(&self->c, st.slice + 1, 4,
			   bt_now_ns(CLOCK_REALTIME) + 200000000ULL);
	ASSERT_NE(NULL, m);
	nla_put_u32(m, BCS_A_PLAN_SLICES, 2);
	ASSERT_EQ(0, bnl_xfer(&self->c, m, &r));
	EXPECT_TRUE(WAIT_UNTIL(!bt_get_state(self->fd, &st) &&
			       st.planned == st0.planned + 4,
			       BT_WAIT_MS));
	EXPECT_EQ(st0.slice + 6, st.slice);
	EXPECT_EQ(4, st.row);
}

/* What a forked child got: its set-up, the family, the commands. */
enum { R_SETUP, R_OPEN, R_DRIVE, R_STROBE, R_RELEASE, R_GET_STATE,
       R_WINDOW, R_NR };

/*
 * Fork a child that calls @setup (drop privileges, leave the network
 * namespace...), opens the family and sends DRIVE, STROBE, RELEASE and
 * GET_STATE; their results land in @res.  Returns the child's wait status,
 * or -1 if it could not be run or did not end.
 */
static int from_child(FIXTURE_DATA(nl) *self, int (*setup)(void),
		      int res[R_NR])
{
	volatile int *sh;
	int status = -1, i;

	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	for (i = 0; i < R_NR; i++)
		sh[i] = 12345;
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	if (self->child == 0) {
		struct nlconn c = { 0 };
		struct nlreply r;

		sh[R_SETUP] = setup();
		if (sh[R_SETUP])
			_exit(1);
		sh[R_OPEN] = bnl_open(&c);
		if (!sh[R_OPEN]) {
			sh[R_DRIVE] = bnl_drive(&c, 0, 0);
			sh[R_STROBE] = bnl_strobe(&c, 1);
			sh[R_RELEASE] = bnl_simple(&c, BCS_CMD_RELEASE, &r);
			sh[R_GET_STATE] = bnl_simple(&c, BCS_CMD_GET_STATE, &r);
			sh[R_WINDOW] = bnl_simple(&c, BCS_CMD_WINDOW, &r);
		}
		bnl_close(&c);
		_exit(0);
	}
	if (self->child > 0 &&
	    bt_waitpid_bounded(self->child, &status, BT_WAIT_MS) != self->child)
		status = -1;
	self->child = 0;
	for (i = 0; i < R_NR; i++)
		res[i] = sh[i];
	munmap((void *)sh, 4096);
	return status;
}

TEST_F(nl, unprivileged)
{
	int res[R_NR], status;

	/* Root drives, so that a privileged strobe would be accepted. */
	ASSERT_EQ(0, bnl_drive(&self->c, 0, 0));
	status = from_child(self, bt_drop_privs, res);
	ASSERT_EQ(0, res[R_SETUP]);
	ASSERT_EQ(0, res[R_OPEN]);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(-EPERM, res[R_DRIVE]);
	EXPECT_EQ(-EPERM, res[R_STROBE]);
	EXPECT_EQ(-EPERM, res[R_RELEASE]);
	EXPECT_EQ(0, res[R_GET_STATE]);
	EXPECT_EQ(-EPERM, res[R_WINDOW]);
}
TEST_F(nl, close_fails_open)
{
	struct bcs_state st0, st;

	ASSERT_EQ(0, start_job(self));
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	ASSERT_EQ(0, bnl_drive(&self->c, 0, 0));
	ASSERT_EQ(0, bnl_strobe(&self->c, 1));
	ASSERT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	bnl_close(&self->c);
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	EXPECT_TRUE(WAIT_UNTIL(!bt_get_state(self->fd, &st) &&
			       st.mode == BCS_MODE_OFF, BT_WAIT_MS));
	EXPECT_EQ(0, st.driver_pid);
	EXPECT_LT(st0.failopens, st.failopens);
}

/* A strobe for the next slice of @row due at @deadline_ns: 0 or -errno. */
static int bnl_strobe_at(struct nlconn *c, uint32_t row, uint64_t deadline_ns)
{
	struct bcs_state st;
	struct nl_msg *msg;
	struct nlreply r;
	int fd = bt_open();

	if (fd < 0)
		return -errno;
	bt_get_state(fd, &st);
	close(fd);
	msg = bnl_strobe_msg(c, st.slice + 1, row, deadline_ns);
	return msg ? bnl_xfer(c, msg, &r) : -ENOMEM;
}

/*
 * Deadlines past a ktime fail the policy, those further ahead than the
 * queue holds the handler: -ERANGE both, and nothing switches.
 */
TEST_F(nl, deadline_out_of_range)
{
	struct bcs_state st0, st;

	ASSERT_EQ(0, bnl_drive(&self->c, 0, 0));
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	EXPECT_EQ(-ERANGE, bnl_strobe_at(&self->c, 1, 1ULL << 63));
	EXPECT_EQ(-ERANGE, bnl_strobe_at(&self->c, 1, UINT64_MAX));
	EXPECT_EQ(-ERANGE, bnl_strobe_at(&self->c, 1,
					 bt_now_ns(CLOCK_REALTIME) +
					 BCS_STROBE_AHEAD_MAX_NS +
					 1000000000ULL));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(st0.strobes, st.strobes);
	EXPECT_EQ(st0.switches, st.switches);
	EXPECT_EQ(0, bnl_strobe_at(&self->c, 1, bt_now_ns(CLOCK_REALTIME)));
}

/* The driver's socket strobes; another socket or a file gets -EBUSY. */
TEST_F(nl, only_the_driver_strobes)
{
	struct nlconn other = { 0 };
	struct nlreply r;

	ASSERT_EQ(0, bnl_open(&other));
	ASSERT_EQ(0, bnl_drive(&self->c, 0, 0));
	EXPECT_EQ(-EBUSY, bnl_strobe(&other, 1));
	EXPECT_EQ(-EBUSY, bt_strobe_now(self->fd, 1));
	EXPECT_EQ(0, bnl_strobe(&self->c, 1));
	/* And the other way round: a file drives, sockets are refused. */
	ASSERT_EQ(0, bnl_simple(&self->c, BCS_CMD_RELEASE, &r));
	ASSERT_EQ(0, bt_drive(self->fd));
	EXPECT_EQ(-EBUSY, bnl_strobe(&other, 1));
	EXPECT_EQ(0, bt_strobe_now(self->fd, 1));
	bnl_close(&other);
}

/* Keep only capability @cap (uid stays 0): 0 or -errno. */
static int keep_only_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	data[cap / 32].effective = 1U << (cap % 32);
	data[cap / 32].permitted = 1U << (cap % 32);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/*
 * CAP_NET_ADMIN is not enough to change the schedule: it takes what the
 * ioctls take, CAP_SYS_ADMIN.  (A container with NET_ADMIN could otherwise
 * drive strobes and keep every gang suspended.)
 */
static int keep_only_net_admin(void)
{
	return keep_only_cap(CAP_NET_ADMIN);
}

TEST_F(nl, net_admin_is_not_enough)
{
	int res[R_NR], status;

	status = from_child(self, keep_only_net_admin, res);
	ASSERT_EQ(0, res[R_SETUP]);
	ASSERT_EQ(0, res[R_OPEN]);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(-EPERM, res[R_DRIVE]);
	EXPECT_EQ(-EPERM, res[R_STROBE]);
	EXPECT_EQ(-EPERM, res[R_RELEASE]);
	EXPECT_EQ(0, res[R_GET_STATE]);
	EXPECT_EQ(-EPERM, res[R_WINDOW]);
}

static int leave_the_network_namespace(void)
{
	return unshare(CLONE_NEWNET) ? -errno : 0;
}

/* The family exists in the initial network namespace only. */
TEST_F(nl, not_in_other_network_namespaces)
{
	int res[R_NR], status;

	status = from_child(self, leave_the_network_namespace, res);
	ASSERT_EQ(0, res[R_SETUP]);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(-ENOENT, res[R_OPEN]);
}

/*
 * The driving process exiting fails open, even though its child still
 * holds the driving socket.
 */
TEST_F(nl, exit_fails_open_while_a_child_holds_the_socket)
{
	struct bcs_state st0, st;
	int up[2], status;
	pid_t holder = 0;

	ASSERT_EQ(0, start_job(self));
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		struct nlconn c = { 0 };
		pid_t h;

		if (bnl_open(&c) || bnl_drive(&c, 0, 0) || bnl_strobe(&c, 1))
			_exit(2);
		h = fork();
		if (h == 0) {
			for (;;)
				pause();
		}
		if (write(up[1], &h, sizeof(h)) != sizeof(h))
			_exit(2);
		_exit(0);
	}
	close(up[1]);
	ASSERT_EQ((ssize_t)sizeof(holder), read(up[0], &holder, sizeof(holder)));
	close(up[0]);
	ASSERT_EQ(self->child, bt_waitpid_bounded(self->child, &status,
						  BT_WAIT_MS));
	self->child = 0;
	EXPECT_TRUE(WAIT_UNTIL(!bt_get_state(self->fd, &st) &&
			       st.mode == BCS_MODE_OFF, BT_WAIT_MS));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_none_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	EXPECT_LT(st0.failopens, st.failopens);
	EXPECT_EQ(0, kill(holder, 0));
	kill(holder, SIGKILL);
}

BT_HARNESS_MAIN

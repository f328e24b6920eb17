// SPDX-License-Identifier: GPL-2.0
/*
 * Slice windows (BCS_IOC_WINDOW): the ring armed in advance for the slices
 * from .. to records exactly those and nothing else, keeps them after the
 * window, and records every switch again once disarmed.
 *
 * The exact tests drive the slices themselves: in driven mode a strobe with
 * BCS_STROBE_NOW switches within the ioctl, for the slice number it names,
 * so the slices that switch, and the records they should leave, do not
 * depend on timing.  One test lets the standalone timer step the slices.
 * Records are read through read() from the end of the ring as it was at
 * set-up, and through the header of the mapping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

#define MAX_RECS	64

FIXTURE(window) {
	int fd;
	int sfd;
	const struct bcs_stat_header *h;
	uint64_t base;			/* the slice number at set-up */
	uint32_t nr;			/* the ring's capacity */
	struct bcs_slice_record recs[MAX_RECS];
};

/* Skip the records in the ring: read() returns only new ones after. */
static int drain(int sfd)
{
	struct bcs_slice_record r;
	int i;

	for (i = 0; i < 2000000; i++)
		if (read(sfd, &r, sizeof(r)) != sizeof(r))
			break;
	return errno == EAGAIN ? 0 : -errno;
}

FIXTURE_SETUP(window)
{
	struct bcs_state st;
	void *m;

	self->sfd = -1;
	self->h = NULL;
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	self->base = st.slice;
	self->nr = st.stat_records;
	self->sfd = open(BCS_STAT_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->sfd);
	ASSERT_EQ(0, drain(self->sfd));
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->sfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	self->h = m;
}

FIXTURE_TEARDOWN(window)
{
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		close(self->fd);
	}
	if (self->h)
		munmap((void *)self->h, 4096);
	if (self->sfd >= 0)
		close(self->sfd);
}

/* A driven strobe for @slice that switches at once. */
static int strobe_slice(int fd, uint64_t slice)
{
	struct bcs_strobe s = {
		.size = sizeof(s),
		.flags = BCS_STROBE_NOW,
		.slice = slice,
		.row = 0,
		.deadline_ns = bt_now_ns(CLOCK_REALTIME),
	};

	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

/* Strobes for the slices @first .. @last; 0 or the first error. */
static int strobe_range(int fd, uint64_t first, uint64_t last)
{
	uint64_t s;
	int ret;

	for (s = first; s <= last; s++) {
		ret = strobe_slice(fd, s);
		if (ret)
			return ret;
	}
	return 0;
}

/* The records written since the last call, into self->recs; their count. */
static int new_records(FIXTURE_DATA(window) *self)
{
	ssize_t r;
	int n = 0;

	for (;;) {
		r = read(self->sfd, &self->recs[n < MAX_RECS ? n : 0],
			 sizeof(self->recs[0]));
		if (r != sizeof(self->recs[0]))
			break;
		n++;
	}
	return n;
}

static uint64_t head(FIXTURE_DATA(window) *self)
{
	return __atomic_load_n(&self->h->head, __ATOMIC_ACQUIRE);
}

/*
 * The paper's scenario, small: slices before the window leave no record,
 * the window's slices one each, in order, and none after it, until the
 * window is disarmed.
 */
TEST_F(window, captures_exactly_its_slices)
{
	uint64_t from = self->base + 10, to = self->base + 14, h0;
	struct bcs_window w;
	struct bcs_state st;
	int i, n;

	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_ARM, from, to, &w));
	EXPECT_EQ(BCS_WINDOW_ARMED, w.state);
	EXPECT_EQ(from, w.from_slice);
	EXPECT_EQ(to, w.to_slice);
	EXPECT_EQ(0, w.records);
	EXPECT_EQ(0, w.dropped);
	EXPECT_EQ(BCS_WINDOW_ARMED, self->h->window_state);
	EXPECT_EQ(from, self->h->window_from);
	EXPECT_EQ(to, self->h->window_to);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_WINDOW_ARMED, st.window_state);
	h0 = head(self);

	/* Before the window: nothing is written, the ring keeps its records. */
	ASSERT_EQ(0, strobe_range(self->fd, self->base + 1, from - 1));
	EXPECT_EQ(h0, head(self));
	EXPECT_EQ(0, new_records(self));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_ARMED, w.state);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(from - 1, st.slice);

	/* The window, and slices after it. */
	ASSERT_EQ(0, strobe_range(self->fd, from, to));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_CAPTURING, w.state);
	ASSERT_EQ(0, strobe_range(self->fd, to + 1, to + 20));
	n = new_records(self);
	ASSERT_EQ(to - from + 1, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(from + i, self->recs[i].slice);
		EXPECT_EQ(h0 + i, self->recs[i].seq);
	}
	EXPECT_EQ(h0 + n, head(self));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_DONE, w.state);
	EXPECT_EQ(n, w.records);
	EXPECT_EQ(0, w.dropped);
	EXPECT_EQ(h0, w.first_seq);
	EXPECT_EQ(BCS_WINDOW_DONE, self->h->window_state);
	EXPECT_EQ(n, self->h->window_records);
	EXPECT_EQ(h0, self->h->window_first_seq);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_WINDOW_DONE, st.window_state);
	/* A slice number of the window again (a new master) is not taken. */
	ASSERT_EQ(0, bt_set_mode(self->fd, BCS_MODE_OFF));
	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, strobe_slice(self->fd, from));
	EXPECT_EQ(0, new_records(self));

	/* Disarmed: every switch is recorded again. */
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_DISARM, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_NONE, w.state);
	EXPECT_EQ(0, w.from_slice);
	EXPECT_EQ(0, w.to_slice);
	EXPECT_EQ(0, w.records);
	EXPECT_EQ(BCS_WINDOW_NONE, self->h->window_state);
	EXPECT_EQ(0, self->h->window_from);
	ASSERT_EQ(0, strobe_range(self->fd, to + 21, to + 23));
	n = new_records(self);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(to + 21 + i, self->recs[i].slice);
}

/* Every switch in the window is recorded, several of one slice too. */
TEST_F(window, records_every_switch_of_its_slices)
{
	uint64_t from = self->base + 2, to = self->base + 3;
	struct bcs_window w;
	int n;

	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_ARM, from, to, NULL));
	ASSERT_EQ(0, strobe_range(self->fd, from, from));
	/* Again for the same slice, then a fail-open in it (mode off). */
	ASSERT_EQ(0, strobe_slice(self->fd, from));
	ASSERT_EQ(0, bt_set_mode(self->fd, BCS_MODE_OFF));
	n = new_records(self);
	ASSERT_EQ(3, n);
	EXPECT_EQ(from, self->recs[0].slice);
	EXPECT_EQ(from, self->recs[1].slice);
	EXPECT_EQ(from, self->recs[2].slice);
	EXPECT_TRUE(self->recs[2].flags & BCS_SLICE_FAILOPEN);
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_CAPTURING, w.state);
	EXPECT_EQ(3, w.records);
}

/*
 * A window whose switches outnumber the ring (one slice switched again and
 * again) keeps the records it has: those that would overwrite them are not
 * written, and are counted.
 */
TEST_F(window, full_ring_keeps_the_window)
{
	uint64_t from = self->base + 1, h0, i;
	struct bcs_slice_record r;
	struct bcs_window w;

	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_ARM, from, from, NULL));
	h0 = head(self);
	for (i = 0; i < (uint64_t)self->nr + 3; i++)
		ASSERT_EQ(0, strobe_slice(self->fd, from));
	EXPECT_EQ(h0 + self->nr, head(self));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_CAPTURING, w.state);
	EXPECT_EQ(self->nr, w.records);
	EXPECT_EQ(3, w.dropped);
	EXPECT_EQ(h0, w.first_seq);
	/* The first record of the window is still there. */
	ASSERT_EQ(sizeof(r), read(self->sfd, &r, sizeof(r)));
	EXPECT_EQ(h0, r.seq);
	EXPECT_EQ(from, r.slice);
	ASSERT_EQ(0, strobe_slice(self->fd, from + 1));
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_DONE, w.state);
	EXPECT_EQ(h0 + self->nr, head(self));
}

/*
 * The standalone timer's slices: from the moment the window is armed, the
 * ring holds exactly from .. to, each once.
 */
TEST_F_TIMEOUT(window, standalone_slices, 300)
{
	const uint64_t len = 20;
	struct bcs_slice_record r;
	uint64_t from = 0, armed = 0;
	struct bcs_window w;
	struct bcs_state st;
	int tries, n = 0, ret = -ERANGE;

	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_MODE | BCS_CONFIG_SLICE,
			       BCS_MODE_STANDALONE, 2000000, 0, NULL));
	/* The timer may pass the first slice before the window is armed. */
	for (tries = 0; tries < 10 && ret == -ERANGE; tries++) {
		ASSERT_EQ(0, bt_get_state(self->fd, &st));
		from = st.slice + 25 * (uint64_t)bt_slowdown();
		ret = bt_window(self->fd, BCS_WINDOW_ARM, from,
				from + len - 1, NULL);
		armed = head(self);
	}
	ASSERT_EQ(0, ret);
	ASSERT_TRUE(WAIT_UNTIL(!bt_window(self->fd, BCS_WINDOW_GET, 0, 0,
					  &w) &&
			       w.state == BCS_WINDOW_DONE,
			       BT_WAIT_MS + 60 * 2 * bt_slowdown()));
	ASSERT_EQ(0, bt_set_mode(self->fd, BCS_MODE_OFF));
	EXPECT_EQ(len, w.records);
	EXPECT_EQ(armed, w.first_seq);
	EXPECT_EQ(armed + len, head(self));
	/* The ticks before the window was armed are older. */
	while (read(self->sfd, &r, sizeof(r)) == sizeof(r)) {
		if (r.seq < armed)
			continue;
		EXPECT_EQ(from + n, r.slice);
		EXPECT_TRUE(r.flags & BCS_SLICE_STANDALONE);
		n++;
	}
	EXPECT_EQ(len, n);
}

TEST_F(window, bad_input)
{
	struct bcs_window w, good = {
		.size = sizeof(w),
		.op = BCS_WINDOW_ARM,
		.from_slice = self->base + 10,
		.to_slice = self->base + 20,
	};
	struct bcs_state st;

#define TRY(change) ({ w = good; change; bt_ioctl(self->fd, BCS_IOC_WINDOW, &w); })
	EXPECT_EQ(-EINVAL, TRY(w.size--));
	EXPECT_EQ(-EINVAL, TRY(w.size = 0));
	EXPECT_EQ(-EINVAL, TRY(w.op = BCS_WINDOW_DISARM + 1));
	EXPECT_EQ(-EINVAL, TRY(w.op = ~0U));
	EXPECT_EQ(-EINVAL, TRY(w.flags = 1));
	EXPECT_EQ(-EINVAL, TRY(w.flags = 1U << 31));
	EXPECT_EQ(-EINVAL, TRY(w.state = BCS_WINDOW_ARMED));
	EXPECT_EQ(-EINVAL, TRY(w.records = 1));
	EXPECT_EQ(-EINVAL, TRY(w.dropped = 1));
	EXPECT_EQ(-EINVAL, TRY(w.first_seq = 1));
	EXPECT_EQ(-EINVAL, TRY(w.reserved[0] = 1));
	EXPECT_EQ(-EINVAL, TRY(w.reserved[1] = 1ULL << 63));
	/* Bounds only to arm. */
	EXPECT_EQ(-EINVAL, TRY(w.op = BCS_WINDOW_GET));
	EXPECT_EQ(-EINVAL, TRY(w.op = BCS_WINDOW_DISARM; w.from_slice = 0));
	/* A window that ends before it begins. */
	EXPECT_EQ(-EINVAL, TRY(w.to_slice = w.from_slice - 1));
	EXPECT_EQ(-EINVAL, TRY(w.from_slice = ~0ULL; w.to_slice = 0));
	/* Larger than the ring; as large is fine. */
	EXPECT_EQ(-E2BIG, TRY(w.to_slice = w.from_slice + self->nr));
	EXPECT_EQ(-E2BIG, TRY(w.to_slice = ~0ULL));
	/* A first slice that has begun: the current one, or earlier. */
	EXPECT_EQ(-ERANGE, TRY(w.from_slice = self->base;
			       w.to_slice = self->base));
	EXPECT_EQ(-ERANGE, TRY(w.from_slice = self->base - !!self->base;
			       w.to_slice = self->base + 5));
	EXPECT_EQ(-EFAULT, bt_ioctl(self->fd, BCS_IOC_WINDOW, NULL));
	/* Only /dev/bcs takes it. */
	w = good;
	EXPECT_EQ(-ENOTTY, bt_ioctl(self->sfd, BCS_IOC_WINDOW, &w));
#undef TRY

	/* None of it armed a window. */
	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_GET, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_NONE, w.state);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(BCS_WINDOW_NONE, st.window_state);

	/* The edges that are allowed. */
	EXPECT_EQ(0, bt_window(self->fd, BCS_WINDOW_ARM, self->base + 1,
			       self->base + self->nr, &w));
	EXPECT_EQ(BCS_WINDOW_ARMED, w.state);
	EXPECT_EQ(0, bt_window(self->fd, BCS_WINDOW_ARM, ~0ULL, ~0ULL, &w));
	EXPECT_EQ(~0ULL, w.from_slice);
	EXPECT_EQ(0, bt_window(self->fd, BCS_WINDOW_DISARM, 0, 0, &w));
	/* Disarming without a window is fine. */
	EXPECT_EQ(0, bt_window(self->fd, BCS_WINDOW_DISARM, 0, 0, &w));
	EXPECT_EQ(BCS_WINDOW_NONE, w.state);
}

/*
 * Arming and disarming need CAP_SYS_ADMIN, reading does not; a malformed
 * argument is refused first.
 */
TEST_F(window, unprivileged)
{
	volatile int *res;
	int status = 0;
	pid_t child;

	ASSERT_EQ(0, bt_window(self->fd, BCS_WINDOW_ARM, self->base + 5,
			       self->base + 6, NULL));
	res = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	res[0] = res[1] = res[2] = res[3] = res[4] = 12345;
	fflush(stdout);
	fflush(stderr);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct bcs_window w = { .size = sizeof(w), .op = 7 };
		int fd;

		if (bt_drop_privs())
			_exit(1);
		fd = bt_open();
		if (fd < 0)
			_exit(1);
		res[0] = bt_window(fd, BCS_WINDOW_ARM, self->base + 100,
				   self->base + 101, NULL);
		res[1] = bt_window(fd, BCS_WINDOW_DISARM, 0, 0, NULL);
		res[2] = bt_window(fd, BCS_WINDOW_GET, 0, 0, &w);
		res[3] = (int)w.state;
		w.op = 7;
		w.state = 0;
		res[4] = bt_ioctl(fd, BCS_IOC_WINDOW, &w);
		_exit(0);
	}
	ASSERT_EQ(child, bt_waitpid_bounded(child, &status, BT_WAIT_MS));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(-EPERM, res[0]);
	EXPECT_EQ(-EPERM, res[1]);
	EXPECT_EQ(0, res[2]);
	EXPECT_EQ(BCS_WINDOW_ARMED, res[3]);
	EXPECT_EQ(-EINVAL, res[4]);
	munmap((void *)res, 4096);
}

BT_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * Driven strobes waiting for their deadlines.  A driver may send strobes
 * more than a slice ahead (a lead longer than the slice): up to
 * BCS_STROBE_QUEUE of them wait, and each switches at its own deadline,
 * in order.  A strobe due no later than a waiting one supersedes it, a
 * strobe that switches at once supersedes them all, a full queue gives up
 * its earliest, and leaving driven mode forgets them; every strobe given
 * up counts as missed and never switches.  A timer expiry that finds
 * several deadlines passed switches to the newest only, and marks its
 * record as having overtaken the others.
 *
 * A strobe may carry a prediction, the row of the slice after it: that
 * switches a slice after the strobe, flagged, unless a strobe for its
 * slice (or a later one) replaces it first; a strobe that comes after its
 * prediction switched confirms it, or corrects it at once.
 *
 * The records of /dev/bcsstat (read(), from the end of the ring at set-up)
 * say which strobes switched.  Deadlines lie a second or more ahead, so
 * that all strobes of a test are sent before the first is due; a test
 * slowed down by its host still sees every switch, only late.  Under a
 * debug kernel, leads and gaps grow by bt_slowdown().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

/* The first deadline from now, and between deadlines (see bt_slowdown). */
#define AHEAD_NS	(1000000000ULL * (uint64_t)bt_slowdown())
#define APART_NS	(50000000ULL * (uint64_t)bt_slowdown())

FIXTURE(driven) {
	int fd;
	int sfd;
	uint64_t slice;		/* the slice number at set-up */
	uint64_t missed;	/* and the missed counter */
	uint64_t predicted;	/* and the predicted one */
};

FIXTURE_SETUP(driven)
{
	struct bcs_state st;

	self->sfd = -1;
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	self->slice = st.slice;
	self->missed = st.missed;
	self->predicted = st.predicted;
	self->sfd = bt_open_stat_new();
	ASSERT_LE(0, self->sfd);
}

FIXTURE_TEARDOWN(driven)
{
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		close(self->fd);
	}
	if (self->sfd >= 0)
		close(self->sfd);
}

/* The next record, waiting at most @ms; 0, or -ETIMEDOUT or -errno. */
static int next_record(int sfd, struct bcs_slice_record *r, int ms)
{
	struct pollfd p = { .fd = sfd, .events = POLLIN };
	ssize_t n;

	n = poll(&p, 1, ms);
	if (n < 0)
		return -errno;
	if (!n)
		return -ETIMEDOUT;
	n = read(sfd, r, sizeof(*r));
	if (n < 0)
		return -errno;
	return n == sizeof(*r) ? 0 : -EIO;
}

/* Strobe for @slice and @row, due @ahead_ns from now. */
static int strobe_at(int fd, uint64_t slice, uint32_t row, uint64_t ahead_ns)
{
	struct bcs_strobe s = {
		.size = sizeof(s),
		.slice = slice,
		.row = row,
		.deadline_ns = bt_now_ns(CLOCK_REALTIME) + ahead_ns,
	};

	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

/* Three strobes for row 1 after slice @slice, due from AHEAD_NS on. */
static int three_ahead(int fd, uint64_t slice)
{
	int i, ret = 0;

	for (i = 0; i < 3 && !ret; i++)
		ret = strobe_at(fd, slice + 1 + i, 1, AHEAD_NS + i * APART_NS);
	return ret;
}

/*
 * Strobe for @slice and @row due at @deadline_ns, in slices of APART_NS,
 * with the prediction @next_row for the slice after it if @predict.
 */
static int send_strobe(int fd, uint64_t slice, uint32_t row,
		       uint64_t deadline_ns, bool predict, uint32_t next_row)
{
	struct bcs_strobe s = {
		.size = sizeof(s),
		.flags = predict ? BCS_STROBE_PREDICT : 0,
		.slice = slice,
		.row = row,
		.next_row = predict ? next_row : 0,
		.deadline_ns = deadline_ns,
		.slice_ns = APART_NS,
	};

	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

/* The same due @ahead_ns from now, always with a prediction. */
static int strobe_predicting(int fd, uint64_t slice, uint32_t row,
			     uint32_t next_row, uint64_t ahead_ns)
{
	return send_strobe(fd, slice, row, bt_now_ns(CLOCK_REALTIME) + ahead_ns,
			   true, next_row);
}

static uint64_t missed_since(int fd, uint64_t missed0)
{
	struct bcs_state st;

	if (bt_get_state(fd, &st))
		return UINT64_MAX;
	return st.missed - missed0;
}

static uint64_t predicted_since(int fd, uint64_t predicted0)
{
	struct bcs_state st;

	if (bt_get_state(fd, &st))
		return UINT64_MAX;
	return st.predicted - predicted0;
}

#define WHY_FLAGS	(BCS_SLICE_OVERTAKEN | BCS_SLICE_PREDICTED | \
			 BCS_SLICE_EXPIRED)

/*
 * Check that @r is the switch of @slice to @row, at its deadline and not
 * before, late only if its strobe came late, with @missed strobes missed
 * since the record before, and of the flags that say why it switched,
 * exactly @why (BCS_SLICE_OVERTAKEN, BCS_SLICE_PREDICTED).
 */
static void check_switch(struct __test_metadata *_metadata,
			 const struct bcs_slice_record *r, uint64_t slice,
			 uint32_t row, uint32_t missed, uint32_t why)
{
	EXPECT_EQ(slice, r->slice);
	EXPECT_EQ(row, r->row);
	EXPECT_TRUE(r->flags & BCS_SLICE_DRIVEN);
	EXPECT_LE(r->deadline_ns, r->switch_start_ns);
	EXPECT_EQ(r->strobe_ns > r->deadline_ns,
		  !!(r->flags & BCS_SLICE_LATE));
	EXPECT_EQ(missed, r->missed);
	EXPECT_EQ(why, r->flags & WHY_FLAGS);
}

/* The same for the next record, a strobe's switch, in @r if not NULL. */
static void expect_switch_rec(struct __test_metadata *_metadata, int sfd,
			      uint64_t slice, uint32_t row, uint32_t missed,
			      uint32_t why, struct bcs_slice_record *r)
{
	struct bcs_slice_record rec;

	if (!r)
		r = &rec;
	ASSERT_EQ(0, next_record(sfd, r, BT_WAIT_MS));
	check_switch(_metadata, r, slice, row, missed, why);
}

/* The next record is a strobe's switch, neither overtaking nor predicted. */
static void expect_switch(struct __test_metadata *_metadata, int sfd,
			  uint64_t slice, uint32_t row, uint32_t missed)
{
	expect_switch_rec(_metadata, sfd, slice, row, missed, 0, NULL);
}

/* Nothing switched within @ms (the deadlines of superseded strobes). */
static void expect_no_switch(struct __test_metadata *_metadata, int sfd,
			     int ms)
{
	struct bcs_slice_record r;
	int ret = next_record(sfd, &r, ms);

	EXPECT_EQ(-ETIMEDOUT, ret)
		TH_LOG("a switch to row %u (slice %llu)", r.row,
		       (unsigned long long)r.slice);
}

TEST_F(driven, strobes_wait_for_their_deadlines)
{
	const uint32_t rows[] = { 1, 2, 3, 0 };
	uint64_t i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, strobe_at(self->fd, self->slice + 1 + i, rows[i],
				       AHEAD_NS + i * APART_NS));
	for (i = 0; i < 4; i++)
		expect_switch(_metadata, self->sfd, self->slice + 1 + i,
			      rows[i], 0);
	EXPECT_EQ(0, missed_since(self->fd, self->missed));
}

TEST_F(driven, skipped_slices_count_as_missed)
{
	/* Slices +2 and +3 are never sent: two missed, once. */
	ASSERT_EQ(0, strobe_at(self->fd, self->slice + 1, 1, AHEAD_NS));
	ASSERT_EQ(0, strobe_at(self->fd, self->slice + 4, 2,
			       AHEAD_NS + APART_NS));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_switch(_metadata, self->sfd, self->slice + 4, 2, 2);
	EXPECT_EQ(2, missed_since(self->fd, self->missed));
}

TEST_F(driven, earlier_deadline_supersedes_later_ones)
{
	ASSERT_EQ(0, strobe_at(self->fd, self->slice + 1, 1, AHEAD_NS));
	ASSERT_EQ(0, strobe_at(self->fd, self->slice + 2, 2,
			       AHEAD_NS + APART_NS));
	/* A driver started again: its strobe is due before both. */
	ASSERT_EQ(0, strobe_at(self->fd, self->slice + 1, 3,
			       AHEAD_NS - APART_NS));
	expect_switch(_metadata, self->sfd, self->slice + 1, 3, 2);
	expect_no_switch(_metadata, self->sfd,
			 (int)(3 * APART_NS / 1000000));
	EXPECT_EQ(2, missed_since(self->fd, self->missed));
}

TEST_F(driven, full_queue_gives_up_the_earliest)
{
	uint64_t i;

	for (i = 0; i <= BCS_STROBE_QUEUE; i++)
		ASSERT_EQ(0, strobe_at(self->fd, self->slice + 1 + i,
				       (uint32_t)i % 4, AHEAD_NS + i * APART_NS));
	for (i = 1; i <= BCS_STROBE_QUEUE; i++)
		expect_switch(_metadata, self->sfd, self->slice + 1 + i,
			      (uint32_t)i % 4, i == 1);
	EXPECT_EQ(1, missed_since(self->fd, self->missed));
}

TEST_F(driven, strobe_now_supersedes_all)
{
	struct bcs_slice_record r;

	ASSERT_EQ(0, three_ahead(self->fd, self->slice));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 2));
	/* At once, and never late: its deadline is ignored. */
	ASSERT_EQ(0, next_record(self->sfd, &r, BT_WAIT_MS));
	EXPECT_EQ(self->slice + 1, r.slice);
	EXPECT_EQ(2, r.row);
	EXPECT_EQ(BCS_SLICE_DRIVEN | BCS_SLICE_INJECTED, r.flags);
	EXPECT_EQ(3, r.missed);
	expect_no_switch(_metadata, self->sfd,
			 (int)((AHEAD_NS + 3 * APART_NS) / 1000000));
	EXPECT_EQ(3, missed_since(self->fd, self->missed));
}

TEST_F(driven, leaving_driven_mode_forgets_them)
{
	struct bcs_slice_record r;

	ASSERT_EQ(0, three_ahead(self->fd, self->slice));
	ASSERT_EQ(0, bt_set_mode(self->fd, BCS_MODE_OFF));
	/* The fail-open switch of the mode change, nothing after it. */
	ASSERT_EQ(0, next_record(self->sfd, &r, BT_WAIT_MS));
	EXPECT_TRUE(r.flags & BCS_SLICE_FAILOPEN);
	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, next_record(self->sfd, &r, BT_WAIT_MS));
	EXPECT_TRUE(r.flags & BCS_SLICE_FAILOPEN);
	expect_no_switch(_metadata, self->sfd,
			 (int)((AHEAD_NS + 3 * APART_NS) / 1000000));
}

/* Step CLOCK_REALTIME by @ns (negative: back); 0 or -errno. */
static int step_clock(int64_t ns)
{
	struct timespec ts;
	int64_t t;

	if (clock_gettime(CLOCK_REALTIME, &ts))
		return -errno;
	t = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + ns;
	ts.tv_sec = t / 1000000000LL;
	ts.tv_nsec = t % 1000000000LL;
	return clock_settime(CLOCK_REALTIME, &ts) ? -errno : 0;
}

TEST_F(driven, clock_step_overtakes_waiting_strobes)
{
	const int64_t step = 2 * AHEAD_NS;
	struct bcs_slice_record r;
	int ret, back;

	/*
	 * All three deadlines pass at once: the timer's expiry finds them
	 * all due, as after a stall of the CPU, and switches to the newest
	 * only.  The clock goes back before anything is checked.
	 */
	ASSERT_EQ(0, three_ahead(self->fd, self->slice));
	ret = step_clock(step);
	if (ret == -EPERM)
		SKIP(return, "stepping the clock needs CAP_SYS_TIME");
	ASSERT_EQ(0, ret);
	ret = next_record(self->sfd, &r, BT_WAIT_MS);
	back = step_clock(-step);
	ASSERT_EQ(0, back);
	ASSERT_EQ(0, ret);
	check_switch(_metadata, &r, self->slice + 3, 1, 2, BCS_SLICE_OVERTAKEN);
	expect_no_switch(_metadata, self->sfd,
			 (int)((AHEAD_NS + 3 * APART_NS) / 1000000));
	EXPECT_EQ(2, missed_since(self->fd, self->missed));
}

TEST_F(driven, prediction_switches_when_no_strobe_comes)
{
	struct bcs_slice_record first, r;

	ASSERT_EQ(0, strobe_predicting(self->fd, self->slice + 1, 1, 2,
				       AHEAD_NS));
	expect_switch_rec(_metadata, self->sfd, self->slice + 1, 1, 0, 0,
			  &first);
	expect_switch_rec(_metadata, self->sfd, self->slice + 2, 2, 0,
			  BCS_SLICE_PREDICTED, &r);
	EXPECT_EQ(first.deadline_ns + APART_NS, r.deadline_ns);
	EXPECT_EQ(first.strobe_ns, r.strobe_ns);
	/* One slice past the driver's last strobe, and no more. */
	expect_no_switch(_metadata, self->sfd,
			 (int)(3 * APART_NS / 1000000));
	EXPECT_EQ(0, missed_since(self->fd, self->missed));
	EXPECT_EQ(1, predicted_since(self->fd, self->predicted));
}

TEST_F(driven, strobe_replaces_its_prediction)
{
	ASSERT_EQ(0, strobe_predicting(self->fd, self->slice + 1, 1, 2,
				       AHEAD_NS));
	/* The strobe for slice +2 names another row than predicted. */
	ASSERT_EQ(0, strobe_predicting(self->fd, self->slice + 2, 3, 0,
				       AHEAD_NS + APART_NS));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_switch(_metadata, self->sfd, self->slice + 2, 3, 0);
	expect_switch_rec(_metadata, self->sfd, self->slice + 3, 0, 0,
			  BCS_SLICE_PREDICTED, NULL);
	expect_no_switch(_metadata, self->sfd,
			 (int)(3 * APART_NS / 1000000));
	EXPECT_EQ(0, missed_since(self->fd, self->missed));
	EXPECT_EQ(1, predicted_since(self->fd, self->predicted));
}

TEST_F(driven, lost_strobe_between_strobes_sent_ahead)
{
	/*
	 * Strobes sent more than a slice ahead, and the one for slice +2
	 * lost: the strobe for +3, which came before +2 was due, leaves the
	 * prediction for +2 in place.
	 */
	ASSERT_EQ(0, strobe_predicting(self->fd, self->slice + 1, 1, 2,
				       AHEAD_NS));
	ASSERT_EQ(0, strobe_predicting(self->fd, self->slice + 3, 3, 0,
				       AHEAD_NS + 2 * APART_NS));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_switch_rec(_metadata, self->sfd, self->slice + 2, 2, 0,
			  BCS_SLICE_PREDICTED, NULL);
	expect_switch(_metadata, self->sfd, self->slice + 3, 3, 0);
	expect_switch_rec(_metadata, self->sfd, self->slice + 4, 0, 0,
			  BCS_SLICE_PREDICTED, NULL);
	expect_no_switch(_metadata, self->sfd,
			 (int)(3 * APART_NS / 1000000));
	EXPECT_EQ(0, missed_since(self->fd, self->missed));
	EXPECT_EQ(2, predicted_since(self->fd, self->predicted));
}

TEST_F(driven, late_strobe_confirms_its_prediction)
{
	struct bcs_slice_record r;
	struct bcs_state st0, st;

	ASSERT_EQ(0, strobe_predicting(self->fd, self->slice + 1, 1, 2,
				       AHEAD_NS));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_switch_rec(_metadata, self->sfd, self->slice + 2, 2, 0,
			  BCS_SLICE_PREDICTED, &r);
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	/* The strobe for slice +2 comes after its deadline, as predicted. */
	ASSERT_EQ(0, send_strobe(self->fd, self->slice + 2, 2, r.deadline_ns,
				 false, 0));
	expect_no_switch(_metadata, self->sfd,
			 (int)(3 * APART_NS / 1000000));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(st0.strobes + 1, st.strobes);
	EXPECT_EQ(st0.switches, st.switches);
	EXPECT_EQ(st0.late, st.late);
	EXPECT_EQ(st0.missed, st.missed);
	EXPECT_EQ(self->slice + 2, st.slice);
	EXPECT_EQ(2, st.row);
}

TEST_F(driven, late_strobe_corrects_a_wrong_prediction)
{
	struct bcs_slice_record r;

	ASSERT_EQ(0, strobe_predicting(self->fd, self->slice + 1, 1, 2,
				       AHEAD_NS));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_switch_rec(_metadata, self->sfd, self->slice + 2, 2, 0,
			  BCS_SLICE_PREDICTED, &r);
	/* Late, and for another row: it switches at once. */
	ASSERT_EQ(0, send_strobe(self->fd, self->slice + 2, 3, r.deadline_ns,
				 false, 0));
	expect_switch_rec(_metadata, self->sfd, self->slice + 2, 3, 0, 0, &r);
	EXPECT_TRUE(r.flags & BCS_SLICE_LATE);
	EXPECT_EQ(0, missed_since(self->fd, self->missed));
	EXPECT_EQ(1, predicted_since(self->fd, self->predicted));
}

TEST_F(driven, prediction_already_due_is_dropped)
{
	uint64_t now = bt_now_ns(CLOCK_REALTIME);

	/* Two slices late: the prediction's deadline has passed too. */
	ASSERT_EQ(0, send_strobe(self->fd, self->slice + 1, 1,
				 now - 2 * APART_NS, true, 2));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_no_switch(_metadata, self->sfd,
			 (int)(3 * APART_NS / 1000000));
	EXPECT_EQ(0, predicted_since(self->fd, self->predicted));
}

/*
 * Deadlines that do not fit a ktime, or lie further ahead than the queue
 * could ever hold, are refused (-ERANGE), with BCS_STROBE_NOW too; one
 * just inside the bound waits in the queue.  A deadline of 2^63 or more
 * once re-armed the strobe timer at a negative expiry for ever, in hard
 * interrupt context: this test then never returned.
 */
TEST_F(driven, deadline_out_of_range)
{
	uint64_t now = bt_now_ns(CLOCK_REALTIME), slice = self->slice;
	const uint64_t huge[] = { 1ULL << 63, UINT64_MAX,
				  now + BCS_STROBE_AHEAD_MAX_NS + AHEAD_NS };
	struct bcs_strobe s = { .size = sizeof(s), .row = 1 };
	struct bcs_state st;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(huge); i++) {
		s.slice = ++slice;
		s.deadline_ns = huge[i];
		s.flags = 0;
		EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s))
			TH_LOG("deadline %llu", (unsigned long long)huge[i]);
		s.flags = BCS_STROBE_NOW;
		EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	}
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->slice, st.slice);
	expect_no_switch(_metadata, self->sfd, 200);

	s.flags = 0;
	s.deadline_ns = bt_now_ns(CLOCK_REALTIME) + BCS_STROBE_AHEAD_MAX_NS -
			AHEAD_NS;
	EXPECT_EQ(0, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	expect_no_switch(_metadata, self->sfd, 200);
}

/*
 * In driven mode only the driver's file strobes; another file, even root's,
 * gets -EBUSY and changes nothing.  In standalone mode any file may.
 */
TEST_F(driven, only_the_driver_strobes)
{
	struct bcs_state st;
	int other;

	other = bt_open();
	ASSERT_LE(0, other);
	EXPECT_EQ(-EBUSY, strobe_at(other, self->slice + 1, 1, 0));
	EXPECT_EQ(-EBUSY, bt_strobe_now(other, 1));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->slice, st.slice);
	expect_no_switch(_metadata, self->sfd, 200);
	EXPECT_EQ(0, strobe_at(self->fd, self->slice + 1, 1, 0));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);

	ASSERT_EQ(0, bt_set_mode(self->fd, BCS_MODE_STANDALONE));
	EXPECT_EQ(0, bt_strobe_now(other, 1));
	close(other);
}

/* A strobe with BCS_STROBE_EXPIRE (and @predict, next row 0). */
static int strobe_expiring(int fd, uint64_t slice, uint32_t row,
			   uint64_t deadline_ns, bool predict)
{
	struct bcs_strobe s = {
		.size = sizeof(s),
		.flags = BCS_STROBE_EXPIRE | (predict ? BCS_STROBE_PREDICT : 0),
		.slice = slice,
		.row = row,
		.deadline_ns = deadline_ns,
		.slice_ns = APART_NS,
	};

	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

/*
 * With BCS_STROBE_EXPIRE a strobe's row ends with its slice: when no
 * strobe follows, the next slice runs no gang (row none, flagged expired,
 * counted), once; the watchdog is not fed by it.
 */
TEST_F(driven, expired_row_runs_no_gang)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	struct bcs_slice_record r;
	struct bcs_state st0, st;

	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	ASSERT_EQ(0, strobe_expiring(self->fd, self->slice + 1, 1, t, false));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_switch_rec(_metadata, self->sfd, self->slice + 2, BCS_ROW_NONE,
			  0, BCS_SLICE_EXPIRED, &r);
	EXPECT_EQ(t + APART_NS, r.deadline_ns);
	expect_no_switch(_metadata, self->sfd, 300);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(st0.expired + 1, st.expired);
	EXPECT_EQ(st0.missed, st.missed);
	EXPECT_EQ(st0.predicted, st.predicted);
	EXPECT_EQ(BCS_ROW_NONE, st.row);
}

/* With a prediction too, the rows end after the predicted slice. */
TEST_F(driven, expiry_after_the_prediction)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;

	ASSERT_EQ(0, strobe_expiring(self->fd, self->slice + 1, 1, t, true));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_switch_rec(_metadata, self->sfd, self->slice + 2, 0, 0,
			  BCS_SLICE_PREDICTED, NULL);
	expect_switch_rec(_metadata, self->sfd, self->slice + 3, BCS_ROW_NONE,
			  0, BCS_SLICE_EXPIRED, NULL);
	expect_no_switch(_metadata, self->sfd, 300);
}

/*
 * An expiring strobe that comes after its slice has ended does not run
 * its row now, in another slice: its expiry is due at once and overtakes
 * it (the strobe counts as missed), and no gang runs.
 */
TEST_F(driven, expiring_strobe_after_its_slice_runs_no_gang)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) - 3 * APART_NS;

	ASSERT_EQ(0, strobe_expiring(self->fd, self->slice + 1, 1, t, false));
	expect_switch_rec(_metadata, self->sfd, self->slice + 2, BCS_ROW_NONE,
			  1, BCS_SLICE_EXPIRED | BCS_SLICE_OVERTAKEN, NULL);
	expect_no_switch(_metadata, self->sfd, 300);
}

/* The next strobe replaces the expiry: only the last one's row ends. */
TEST_F(driven, next_strobe_replaces_the_expiry)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;

	ASSERT_EQ(0, strobe_expiring(self->fd, self->slice + 1, 1, t, false));
	ASSERT_EQ(0, strobe_expiring(self->fd, self->slice + 2, 2,
				     t + APART_NS, false));
	expect_switch(_metadata, self->sfd, self->slice + 1, 1, 0);
	expect_switch(_metadata, self->sfd, self->slice + 2, 2, 0);
	expect_switch_rec(_metadata, self->sfd, self->slice + 3, BCS_ROW_NONE,
			  0, BCS_SLICE_EXPIRED, NULL);
	expect_no_switch(_metadata, self->sfd, 300);
}

/*
 * A strobe for a slice before the current one that comes after its
 * deadline (the node switched past it, to a guess or after a stall) is
 * over: it counts as missed and does not switch.
 */
TEST_F(driven, late_strobe_for_a_slice_passed_is_dropped)
{
	uint64_t now = bt_now_ns(CLOCK_REALTIME);
	struct bcs_state st0, st;

	ASSERT_EQ(0, strobe_at(self->fd, self->slice + 3, 1, 0));
	expect_switch(_metadata, self->sfd, self->slice + 3, 1, 0);
	ASSERT_EQ(0, bt_get_state(self->fd, &st0));
	ASSERT_EQ(0, send_strobe(self->fd, self->slice + 2, 2,
				 now - APART_NS, false, 0));
	expect_no_switch(_metadata, self->sfd, 300);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(st0.missed + 1, st.missed);
	EXPECT_EQ(1, st.row);
	EXPECT_EQ(self->slice + 3, st.slice);
}

/*
 * The fields of the records that no other test reads: nr_running and
 * nr_blocked (a task asleep in pause() and a spinning one, in the row that
 * runs), switch_ns and interval_ns (exact sums of the record's own
 * times), and the tasks' blocked_ns (the sleeper's grows, the spinner's
 * stays below its CPU time).
 */
TEST_F(driven, record_fields)
{
	struct bcs_slice_record r[3];
	struct bt_burner spin = { 0 };
	struct bcs_task_stat *ts = NULL;
	uint64_t slice = self->slice;
	int n, i, found = 0;
	pid_t sleeper;

	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_burner_start(&spin, 1, false));
	sleeper = fork();
	ASSERT_LE(0, sleeper);
	if (sleeper == 0) {
		for (;;)
			pause();
	}
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, spin.pid, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, sleeper, 0, NULL));
	/* Wait until the sleeper sleeps. */
	ASSERT_TRUE(WAIT_UNTIL(bt_thread_state(sleeper, sleeper) == 'S',
			       BT_WAIT_MS));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, strobe_at(self->fd, ++slice, i % 2, 0));
		ASSERT_EQ(0, next_record(self->sfd, &r[i], BT_WAIT_MS));
		EXPECT_EQ(r[i].switch_end_ns - r[i].switch_start_ns,
			  r[i].switch_ns);
		if (i)
			EXPECT_EQ(r[i].switch_start_ns - r[i - 1].switch_start_ns,
				  r[i].interval_ns);
		bt_sleep_ms(100);
	}
	EXPECT_EQ(2, r[0].nr_running);
	EXPECT_EQ(1, r[0].nr_blocked);
	EXPECT_EQ(2, r[1].nr_suspended);
	EXPECT_EQ(0, r[1].nr_running);

	n = bt_task_stats(self->fd, BT_JOB_A, &ts);
	ASSERT_EQ(2, n);
	for (i = 0; i < n; i++) {
		if (ts[i].tgid == sleeper) {
			EXPECT_LT(0, ts[i].blocked_ns);
			EXPECT_LT(ts[i].run_ns, ts[i].blocked_ns);
			found++;
		} else {
			EXPECT_LT(ts[i].blocked_ns, ts[i].run_ns);
			found++;
		}
	}
	EXPECT_EQ(2, found);
	free(ts);
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
	bt_burner_stop(&spin);
}

BT_HARNESS_MAIN

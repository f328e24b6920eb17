// SPDX-License-Identifier: GPL-2.0
/*
 * Plans (BCS_STROBE_PLAN): one driven strobe for many slices.  bcs.ko
 * switches every slice of a plan at its own deadline, to the row that
 * bcs_plan_row() gives (the rows of @plan_rows in turn after @row), each a
 * switch of the driver's: slices after the first are flagged
 * BCS_SLICE_PLANNED and counted in @planned.  A later strobe or plan
 * replaces the rest of a plan from its own slice on, uncounted; nothing
 * runs after a plan's last slice but what the driver sends, the watchdog
 * counts from that slice, and with BCS_STROBE_EXPIRE no row runs after it.
 * Every refused input changes nothing.
 *
 * The records of /dev/bcsstat (read(), from the end of the ring at set-up)
 * say which slices switched.  Deadlines lie a second or more ahead, so
 * that a test slowed down by its host still sees every switch, only late;
 * the tests check rows, flags and counts, never how late a switch was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

/* The first deadline from now, and the slice length (see bt_slowdown). */
#define AHEAD_NS	(1000000000ULL * (uint64_t)bt_slowdown())
#define LEN_NS		(100000000ULL * (uint64_t)bt_slowdown())
#define LEN_MS		((int)(LEN_NS / 1000000))

/*
 * The rules of the header, not inlined: the harness's longjmp would make
 * -m32 builds warn of their variables (-Wclobbered).
 */
static __attribute__((noinline)) uint32_t plan_row(uint64_t rows,
						   uint32_t row, uint32_t i)
{
	return bcs_plan_row(rows, row, i);
}

/* The row of slice @i of a plan, by the rule itself: r(i) from r(i - 1). */
static __attribute__((noinline)) uint32_t row_by_steps(uint64_t rows, uint32_t row, uint32_t i)
{
	while (rows && i--)
		row = bcs_row_next(rows, row);
	return row;
}

/*
 * The shared rule in user space: bcs_plan_row() is the rule of the
 * contract, r(0) = @row, r(i) = bcs_row_next(@rows, r(i - 1)), whatever
 * the rows, the first row (in @rows or not) and i.
 */
TEST(plan_row_follows_the_rule)
{
	static const uint64_t sets[] = {
		0, 1, 1ULL << 63, 0x5, 0xb, 0x8000000000000001ULL,
		0xf0f0f0f0f0f0f0f0ULL, ~0ULL, 0x123456789abcdef0ULL,
	};
	uint32_t row, i;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(sets); k++)
		for (row = 0; row < BCS_ROWS_MAX; row += 7)
			for (i = 0; i < 200; i++)
				ASSERT_EQ(row_by_steps(sets[k], row, i),
					  plan_row(sets[k], row, i))
					TH_LOG("rows %#llx row %u slice %u",
					       (unsigned long long)sets[k], row, i);
	/* Far into a plan, and past what a plan may hold. */
	EXPECT_EQ(row_by_steps(0xb, 1, BCS_PLAN_SLICES_MAX - 1),
		  plan_row(0xb, 1, BCS_PLAN_SLICES_MAX - 1));
	EXPECT_EQ(0, plan_row(1, 5, UINT32_MAX));
}

/* And its deadlines: exact, or above BCS_DEADLINE_NS_MAX past it. */
TEST(plan_deadline_stops_at_the_limit)
{
	EXPECT_EQ(1000 + 7 * 300, bcs_plan_deadline(1000, 300, 7));
	EXPECT_EQ(1000, bcs_plan_deadline(1000, 300, 0));
	EXPECT_EQ(BCS_DEADLINE_NS_MAX,
		  bcs_plan_deadline(BCS_DEADLINE_NS_MAX - 10, 5, 2));
	EXPECT_LT(BCS_DEADLINE_NS_MAX,
		  bcs_plan_deadline(BCS_DEADLINE_NS_MAX - 10, 5, 3));
	EXPECT_LT(BCS_DEADLINE_NS_MAX,
		  bcs_plan_deadline(BCS_DEADLINE_NS_MAX + 1, 0, 0));
	EXPECT_LT(BCS_DEADLINE_NS_MAX, bcs_plan_deadline(0, UINT64_MAX, 2));
	EXPECT_EQ((uint64_t)BCS_PLAN_SLICES_MAX * BCS_SLICE_NS_MAX,
		  bcs_plan_deadline(0, BCS_SLICE_NS_MAX, BCS_PLAN_SLICES_MAX));
	EXPECT_LT(BCS_DEADLINE_NS_MAX,
		  bcs_plan_deadline(0, BCS_SLICE_NS_MAX, UINT32_MAX));
}

/* A record read ahead and put back (put_back()), read again next. */
static struct bcs_slice_record back;
static bool have_back;

FIXTURE(plan) {
	int fd;
	int sfd;
	struct bcs_state st0;	/* the state at set-up */
};

FIXTURE_SETUP(plan)
{
	have_back = false;
	self->sfd = -1;
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, bt_drive(self->fd));
	ASSERT_EQ(0, bt_get_state(self->fd, &self->st0));
	self->sfd = bt_open_stat_new();
	ASSERT_LE(0, self->sfd);
}

FIXTURE_TEARDOWN(plan)
{
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		close(self->fd);
	}
	if (self->sfd >= 0)
		close(self->sfd);
}

static void put_back(const struct bcs_slice_record *r)
{
	back = *r;
	have_back = true;
}

/* The next record, waiting at most @ms; 0, or -ETIMEDOUT or -errno. */
static int next_record(int sfd, struct bcs_slice_record *r, int ms)
{
	struct pollfd p = { .fd = sfd, .events = POLLIN };
	ssize_t n;

	if (have_back) {
		*r = back;
		have_back = false;
		return 0;
	}
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

/* A plan of @n slices from @slice, due at @deadline_ns, in LEN_NS slices. */
static struct bcs_strobe plan_of(uint64_t slice, uint32_t row, uint64_t rows,
				 uint32_t n, uint64_t deadline_ns)
{
	struct bcs_strobe s = {
		.size = sizeof(s),
		.flags = BCS_STROBE_PLAN,
		.slice = slice,
		.row = row,
		.deadline_ns = deadline_ns,
		.slice_ns = LEN_NS,
		.plan_rows = rows,
		.plan_slices = n,
	};

	return s;
}

static int send_plan(int fd, uint64_t slice, uint32_t row, uint64_t rows,
		     uint32_t n, uint64_t deadline_ns, uint32_t flags)
{
	struct bcs_strobe s = plan_of(slice, row, rows, n, deadline_ns);

	s.flags |= flags;
	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

static int send_strobe(int fd, uint64_t slice, uint32_t row,
		       uint64_t deadline_ns)
{
	struct bcs_strobe s = {
		.size = sizeof(s),
		.slice = slice,
		.row = row,
		.deadline_ns = deadline_ns,
		.slice_ns = LEN_NS,
	};

	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

#define WHY_FLAGS	(BCS_SLICE_OVERTAKEN | BCS_SLICE_PREDICTED | \
			 BCS_SLICE_EXPIRED | BCS_SLICE_PLANNED | \
			 BCS_SLICE_FAILOPEN)

/*
 * The next record is the switch of @slice to @row, due at @deadline_ns,
 * a driver's, with @missed strobes or slices missed since the record
 * before and, of the flags that say why it switched, exactly @why.
 */
static void expect_slice(struct __test_metadata *_metadata, int sfd,
			 uint64_t slice, uint32_t row, uint64_t deadline_ns,
			 uint32_t missed, uint32_t why,
			 struct bcs_slice_record *out)
{
	struct bcs_slice_record r;

	ASSERT_EQ(0, next_record(sfd, &r, BT_WAIT_MS));
	EXPECT_EQ(slice, r.slice);
	EXPECT_EQ(row, r.row);
	EXPECT_TRUE(r.flags & BCS_SLICE_DRIVEN);
	EXPECT_EQ(deadline_ns, r.deadline_ns);
	EXPECT_LE(r.deadline_ns, r.switch_start_ns);
	EXPECT_EQ(r.strobe_ns > r.deadline_ns, !!(r.flags & BCS_SLICE_LATE));
	EXPECT_EQ(missed, r.missed);
	EXPECT_EQ(why, r.flags & WHY_FLAGS);
	if (out)
		*out = r;
}

/* Nothing switched within @ms. */
static void expect_no_switch(struct __test_metadata *_metadata, int sfd,
			     int ms)
{
	struct bcs_slice_record r;
	int ret = next_record(sfd, &r, ms);

	EXPECT_EQ(-ETIMEDOUT, ret)
		TH_LOG("a switch to row %u (slice %llu, flags %#x)", r.row,
		       (unsigned long long)r.slice, r.flags);
}

/* What expect_plan() saw of a plan. */
struct seen {
	uint32_t records;	/* switches */
	uint32_t planned;	/* of those, flagged planned */
	uint32_t missed;	/* slices passed over by a late timer */
	uint64_t strobe_ns;	/* the plan's arrival: every record's */
};

/*
 * The slices of a plan from @slice (due at @t, rows @rows after @row) up
 * to slice @n - 1 switch in order from slice @from on, each at its
 * deadline to its row, slices after the first flagged planned.  A timer
 * late by more than a slice (a loaded host) passes some over: the switch
 * after them is then flagged overtaken and counts them missed, and so
 * does the first switch the slices @carry of what came before.  A record
 * of anything else (what follows the plan) is put back.  Returns the
 * slices of the plan not seen, @n - the next slice's index.
 */
static uint32_t expect_plan(struct __test_metadata *_metadata, int sfd,
			    uint64_t slice, uint32_t row, uint64_t rows,
			    uint64_t t, uint32_t from, uint32_t n,
			    uint32_t carry, struct seen *seen)
{
	struct bcs_slice_record r;
	uint32_t i = from, j, skip;
	int ret;

	while (i < n) {
		ret = next_record(sfd, &r, BT_WAIT_MS);
		EXPECT_EQ(0, ret)
			TH_LOG("no switch to slice %u of the plan", i);
		if (ret)
			break;
		if (r.slice < slice + i || r.slice >= slice + n ||
		    !(r.flags & BCS_SLICE_DRIVEN) ||
		    (r.flags & (BCS_SLICE_EXPIRED | BCS_SLICE_FAILOPEN)) ||
		    r.deadline_ns != t + (r.slice - slice) * LEN_NS) {
			put_back(&r);
			break;
		}
		j = (uint32_t)(r.slice - slice);
		skip = j - i + carry;
		carry = 0;
		EXPECT_EQ(plan_row(rows, row, j), r.row)
			TH_LOG("slice %u of the plan", j);
		EXPECT_LE(r.deadline_ns, r.switch_start_ns);
		EXPECT_EQ(r.strobe_ns > r.deadline_ns,
			  !!(r.flags & BCS_SLICE_LATE));
		EXPECT_EQ(skip, r.missed);
		EXPECT_EQ((j ? BCS_SLICE_PLANNED : 0) |
			  (skip ? BCS_SLICE_OVERTAKEN : 0),
			  r.flags & WHY_FLAGS);
		if (seen) {
			if (!seen->strobe_ns)
				seen->strobe_ns = r.strobe_ns;
			EXPECT_EQ(seen->strobe_ns, r.strobe_ns);
			seen->records++;
			seen->planned += !!j;
			seen->missed += skip;
		}
		i = j + 1;
	}
	return n - i;
}

/* The overtaken flag if @missed slices were passed over. */
static uint32_t over(uint32_t missed)
{
	return missed ? BCS_SLICE_OVERTAKEN : 0;
}

/*
 * Each of these is refused, with the errno the contract gives, and
 * changes nothing.
 */
TEST_F(plan, refused)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;
	struct bcs_strobe s;
	struct bcs_state st;

	s = plan_of(slice, 1, 0x3, 0, t);
	EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s.plan_slices = BCS_PLAN_SLICES_MAX + 1;
	EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s.plan_slices = UINT32_MAX;
	EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));

	/* Not with a strobe for now, the next row or a prediction. */
	s = plan_of(slice, 1, 0x3, 4, t);
	s.flags |= BCS_STROBE_NOW;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s.flags = BCS_STROBE_PLAN | BCS_STROBE_NEXT;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s.flags = BCS_STROBE_PLAN | BCS_STROBE_PREDICT;
	s.next_row = 1;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));

	/* Its fields without the flag, and the reserved word. */
	s = plan_of(slice, 1, 0x3, 4, t);
	s.flags = 0;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s.plan_slices = 0;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s.plan_rows = 0;
	s.plan_slices = 4;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s = plan_of(slice, 1, 0x3, 4, t);
	s.reserved = 1;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));

	/* A row out of range, a slice length out of range. */
	s = plan_of(slice, BCS_ROWS_MAX, 0x3, 4, t);
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s = plan_of(slice, 1, 0x3, 4, t);
	s.slice_ns = BCS_SLICE_NS_MIN - 1;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));

	/* Slice numbers that would wrap, the expiry's included. */
	s = plan_of(UINT64_MAX - 1, 1, 0x3, 2, t);
	EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));

	/* The first deadline too far ahead, as a strobe's. */
	s = plan_of(slice, 1, 0x3, 4, bt_now_ns(CLOCK_REALTIME) +
		    BCS_STROBE_AHEAD_MAX_NS + AHEAD_NS);
	EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	/* Past the last deadline there is. */
	s = plan_of(slice, 1, 0x3, 4, BCS_DEADLINE_NS_MAX);
	EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));

	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->st0.slice, st.slice);
	EXPECT_EQ(self->st0.strobes, st.strobes);
	EXPECT_EQ(self->st0.slice_ns, st.slice_ns);
	expect_no_switch(_metadata, self->sfd, 200);

	/* Without a mode, a good plan is refused as any strobe. */
	ASSERT_EQ(0, bt_set_mode(self->fd, BCS_MODE_OFF));
	s = plan_of(slice, 1, 0x3, 4, t);
	EXPECT_EQ(-ENOTCONN, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
}

/*
 * The whole plan must end by BCS_DEADLINE_NS_MAX, in slices of the length
 * it runs in: checked in standalone mode too, where a deadline so far
 * ahead is no error in itself (a strobe switches at once there).
 */
TEST_F(plan, ends_by_the_last_deadline)
{
	struct bcs_strobe s;

	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_MODE | BCS_CONFIG_SLICE,
			       BCS_MODE_STANDALONE, LEN_NS, 0, NULL));
	s = plan_of(self->st0.slice + 1, 1, 0, 1,
		    BCS_DEADLINE_NS_MAX - LEN_NS / 2);
	EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	/* The current length, when the plan names none. */
	s.slice_ns = 0;
	EXPECT_EQ(-ERANGE, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s.deadline_ns = BCS_DEADLINE_NS_MAX - LEN_NS;
	EXPECT_EQ(0, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	s.deadline_ns = BCS_DEADLINE_NS_MAX - LEN_NS / 2;
	s.flags = 0;
	s.plan_slices = 0;
	EXPECT_EQ(0, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
}

/* Standalone mode uses a plan's first slice only, as an injected strobe. */
TEST_F(plan, standalone_runs_the_first_slice)
{
	struct bcs_slice_record r;
	struct bcs_state st;
	uint64_t slice;

	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_MODE | BCS_CONFIG_SLICE,
			       BCS_MODE_STANDALONE, BCS_SLICE_NS_MAX, 0,
			       NULL));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	slice = st.slice + 100;
	EXPECT_EQ(0, send_plan(self->fd, slice, 5, 0x6, 4,
			       bt_now_ns(CLOCK_REALTIME) + AHEAD_NS, 0));
	/* After the switches of the mode change and the tick, if any. */
	do {
		ASSERT_EQ(0, next_record(self->sfd, &r, BT_WAIT_MS));
	} while (!(r.flags & BCS_SLICE_INJECTED));
	EXPECT_EQ(slice, r.slice);
	EXPECT_EQ(5, r.row);
	EXPECT_EQ(BCS_SLICE_STANDALONE | BCS_SLICE_INJECTED, r.flags);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->st0.planned, st.planned);
	EXPECT_EQ(LEN_NS, st.slice_ns);
}

/*
 * A plan of five slices switches five slices, each at its own deadline,
 * to the planned rows in order (rows 0, 1 and 3 in turn after row 1), the
 * first as the strobe it is, the others planned; then nothing more.
 */
TEST_F(plan, switches_every_planned_slice)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;
	const uint32_t rows[] = { 1, 3, 0, 1, 3 };
	struct seen seen = { 0 };
	struct bcs_state st;
	uint32_t i;

	ASSERT_EQ(0, send_plan(self->fd, slice, 1, 0xb, 5, t, 0));
	/* The rule, written out once. */
	for (i = 0; i < 5; i++)
		EXPECT_EQ(rows[i], plan_row(0xb, 1, i));
	EXPECT_EQ(0, expect_plan(_metadata, self->sfd, slice, 1, 0xb, t, 0, 5,
				 0, &seen));
	expect_no_switch(_metadata, self->sfd, 3 * LEN_MS);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->st0.strobes + 1, st.strobes);
	EXPECT_EQ(self->st0.switches + seen.records, st.switches);
	EXPECT_EQ(5, seen.records + seen.missed);
	EXPECT_EQ(self->st0.planned + seen.planned, st.planned);
	EXPECT_EQ(self->st0.missed + seen.missed, st.missed);
	EXPECT_EQ(slice + 4, st.slice);
	EXPECT_EQ(3, st.row);
}

/* Without rows to step through, every slice runs @row. */
TEST_F(plan, no_rows_repeats_the_row)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;

	ASSERT_EQ(0, send_plan(self->fd, slice, 7, 0, 3, t, 0));
	EXPECT_EQ(0, expect_plan(_metadata, self->sfd, slice, 7, 0, t, 0, 3,
				 0, NULL));
	expect_no_switch(_metadata, self->sfd, 3 * LEN_MS);
}

/*
 * A strobe sent during a plan replaces it from its own slice on: the
 * plan's slices before it switch, the strobe's, and nothing of the plan
 * after; the rest is not missed.
 */
TEST_F(plan, later_strobe_cuts_it_short)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;
	struct seen seen = { 0 };
	struct bcs_state st;
	uint32_t left;

	ASSERT_EQ(0, send_plan(self->fd, slice, 0, 0x3, 8, t, 0));
	ASSERT_EQ(0, send_strobe(self->fd, slice + 3, 5, t + 3 * LEN_NS));
	left = expect_plan(_metadata, self->sfd, slice, 0, 0x3, t, 0, 3, 0,
			   &seen);
	expect_slice(_metadata, self->sfd, slice + 3, 5, t + 3 * LEN_NS, left,
		     over(left), NULL);
	expect_no_switch(_metadata, self->sfd, 6 * LEN_MS);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->st0.missed + seen.missed + left, st.missed);
	EXPECT_EQ(self->st0.planned + seen.planned, st.planned);
	EXPECT_EQ(self->st0.switches + seen.records + 1, st.switches);
}

/* So does a later plan, which runs to its own end. */
TEST_F(plan, later_plan_replaces_it)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;
	struct seen seen = { 0 };
	struct bcs_state st;
	uint32_t left;

	ASSERT_EQ(0, send_plan(self->fd, slice, 0, 0x3, 8, t, 0));
	ASSERT_EQ(0, send_plan(self->fd, slice + 2, 4, 0x30, 3,
			       t + 2 * LEN_NS, 0));
	left = expect_plan(_metadata, self->sfd, slice, 0, 0x3, t, 0, 2, 0,
			   &seen);
	/* The second plan's slices follow, the first's cut at them. */
	seen.strobe_ns = 0;
	EXPECT_EQ(0, expect_plan(_metadata, self->sfd, slice + 2, 4, 0x30,
				 t + 2 * LEN_NS, 0, 3, left, &seen));
	expect_no_switch(_metadata, self->sfd, 5 * LEN_MS);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->st0.missed + seen.missed, st.missed);
	EXPECT_EQ(self->st0.strobes + 2, st.strobes);
	EXPECT_EQ(self->st0.planned + seen.planned, st.planned);
	EXPECT_EQ(4, st.row);
}

/*
 * A strobe for now, once the plan runs, switches at once and drops the
 * rest of the plan, not counted missed.
 */
TEST_F(plan, strobe_now_drops_the_rest)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;
	struct seen seen = { 0 };
	struct bcs_slice_record r;
	struct bcs_state st;

	ASSERT_EQ(0, send_plan(self->fd, slice, 2, 0, 20, t, 0));
	/* Once the plan runs. */
	ASSERT_EQ(0, next_record(self->sfd, &r, BT_WAIT_MS));
	put_back(&r);
	ASSERT_EQ(0, bt_strobe_now(self->fd, 6));
	EXPECT_LT(0, expect_plan(_metadata, self->sfd, slice, 2, 0, t, 0, 20,
				 0, &seen));
	ASSERT_EQ(0, next_record(self->sfd, &r, BT_WAIT_MS));
	EXPECT_EQ(6, r.row);
	EXPECT_EQ(0, r.missed);
	EXPECT_EQ(0, r.flags & WHY_FLAGS);
	expect_no_switch(_metadata, self->sfd, 4 * LEN_MS);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->st0.missed + seen.missed, st.missed);
}

/*
 * A node never runs past its plan: the watchdog counts from the plan's
 * last slice, so a plan longer than the watchdog runs to its end, and the
 * node fails open only watchdog_slices after that slice began.
 */
TEST_F(plan, watchdog_counts_from_the_end)
{
	const uint64_t len = 2 * LEN_NS, w = 3;
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;
	struct bcs_slice_record r, last = { 0 };
	struct bcs_strobe s;
	struct bcs_state st;
	uint32_t j;

	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_WATCHDOG, 0, 0, w, NULL));
	s = plan_of(slice, 0, 0x3, 8, t);
	s.slice_ns = len;
	ASSERT_EQ(0, bt_ioctl(self->fd, BCS_IOC_STROBE, &s));
	/* Every slice (a late timer may pass some over), the last one too. */
	while (last.slice != slice + 7) {
		ASSERT_EQ(0, next_record(self->sfd, &last, BT_WAIT_MS));
		ASSERT_FALSE(last.flags & BCS_SLICE_FAILOPEN)
			TH_LOG("failed open before the plan's last slice");
		ASSERT_LE(slice, last.slice);
		ASSERT_GT(slice + 8, last.slice);
		j = (uint32_t)(last.slice - slice);
		EXPECT_EQ(j % 2, last.row);
	}
	ASSERT_EQ(0, next_record(self->sfd, &r, BT_WAIT_MS));
	EXPECT_TRUE(r.flags & BCS_SLICE_FAILOPEN);
	EXPECT_EQ(BCS_ROW_NONE, r.row);
	/* Never before: timers do not fire early. */
	EXPECT_LE(last.switch_start_ns + w * len, r.switch_start_ns);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->st0.failopens + 1, st.failopens);
	EXPECT_EQ(1, st.failopen);
}

/* With BCS_STROBE_EXPIRE, no row runs after the plan's last slice. */
TEST_F(plan, expires_at_its_end)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;
	struct seen seen = { 0 };
	struct bcs_state st;
	uint32_t left;

	ASSERT_EQ(0, send_plan(self->fd, slice, 1, 0x6, 3, t,
			       BCS_STROBE_EXPIRE));
	left = expect_plan(_metadata, self->sfd, slice, 1, 0x6, t, 0, 3, 0,
			   &seen);
	expect_slice(_metadata, self->sfd, slice + 3, BCS_ROW_NONE,
		     t + 3 * LEN_NS, left, BCS_SLICE_EXPIRED | over(left),
		     NULL);
	expect_no_switch(_metadata, self->sfd, 3 * LEN_MS);
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(self->st0.expired + 1, st.expired);
	EXPECT_EQ(self->st0.planned + seen.planned, st.planned);
	EXPECT_EQ(BCS_ROW_NONE, st.row);
}

/* A plan cut short by a strobe expires with that strobe, not before. */
TEST_F(plan, cut_plan_does_not_expire)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) + AHEAD_NS;
	uint64_t slice = self->st0.slice + 1;
	uint32_t left;

	ASSERT_EQ(0, send_plan(self->fd, slice, 1, 0, 2, t,
			       BCS_STROBE_EXPIRE));
	ASSERT_EQ(0, send_plan(self->fd, slice + 1, 2, 0, 3, t + LEN_NS, 0));
	left = expect_plan(_metadata, self->sfd, slice, 1, 0, t, 0, 1, 0,
			   NULL);
	EXPECT_EQ(0, expect_plan(_metadata, self->sfd, slice + 1, 2, 0,
				 t + LEN_NS, 0, 3, left, NULL));
	expect_no_switch(_metadata, self->sfd, 4 * LEN_MS);
}

/*
 * A plan that comes after some of its deadlines switches at once to its
 * newest slice due, late, the slices it passed over counted missed, and
 * runs the rest at their deadlines.
 */
TEST_F(plan, late_plan_joins_in)
{
	uint64_t t = bt_now_ns(CLOCK_REALTIME) - 2 * LEN_NS - LEN_NS / 2;
	uint64_t slice = self->st0.slice + 1;
	struct bcs_slice_record r;
	uint32_t first;

	ASSERT_EQ(0, send_plan(self->fd, slice, 1, 0xe, 8, t, 0));
	ASSERT_EQ(0, next_record(self->sfd, &r, BT_WAIT_MS));
	ASSERT_LE(slice + 2, r.slice);
	ASSERT_GT(slice + 8, r.slice);
	first = (uint32_t)(r.slice - slice);
	EXPECT_EQ(plan_row(0xe, 1, first), r.row);
	EXPECT_EQ(t + first * LEN_NS, r.deadline_ns);
	EXPECT_EQ(first, r.missed);
	EXPECT_EQ(BCS_SLICE_OVERTAKEN | BCS_SLICE_PLANNED,
		  r.flags & WHY_FLAGS);
	EXPECT_TRUE(r.flags & BCS_SLICE_LATE);
	EXPECT_EQ(0, expect_plan(_metadata, self->sfd, slice, 1, 0xe, t,
				 first + 1, 8, 0, NULL));
	expect_no_switch(_metadata, self->sfd, 3 * LEN_MS);
}

BT_HARNESS_MAIN

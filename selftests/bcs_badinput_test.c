// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed input to every ioctl: wrong sizes, non-zero reserved fields,
 * unknown flags, bad pointers, unknown ioctl numbers and ids, short list
 * buffers, short reads; then a bounded, seeded fuzz run of the ioctls and
 * of the generic netlink family, with ids, rows, slices, deadlines and
 * pids drawn from the whole 64-bit range.  Afterwards the module must
 * still work and no task may be left parked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef BCS_HAVE_LIBNL		/* not in the m32 build (selftests/Makefile) */
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#define HAVE_NL	1
#else
#define HAVE_NL	0
#endif

#include "bcs_test_util.h"
#include "bcs_harness.h"

#define KERNEL_PTR	((void *)0xffff800000000000UL)
#define BUF_SIZE	4096
#define SCRATCH_SIZE	(1UL << 20)

struct ctx {
	int fd;
	pid_t victim;		/* attached burner, never the test itself */
	void *scratch;		/* target of list ioctls in the fuzz run */
};

/* One ioctl: its number, struct size and where its reserved words are. */
struct ioc_desc {
	const char *name;
	unsigned long cmd;
	size_t size;
	size_t rsv[4];		/* offsets of reserved __u32/__u64 words */
	size_t rsv_len[4];
	int nr_rsv;
	size_t flags_off;	/* offset of a flags word, or 0 */
	uint32_t bad_flags;
};

#define RSV64(type, f, i) (offsetof(type, f) + 8 * (i))

static const struct ioc_desc iocs[] = {
	/* @rows and @slice without their flags are refused like reserved words. */
	{ "JOB_CREATE", BCS_IOC_JOB_CREATE, sizeof(struct bcs_job),
	  { offsetof(struct bcs_job, rows),
	    offsetof(struct bcs_job, slice) }, { 8, 8 }, 2,
	  offsetof(struct bcs_job, flags),
	  ~(BCS_JOB_ROWS | BCS_JOB_FILLER | BCS_JOB_OWNER) },
	{ "JOB_DESTROY", BCS_IOC_JOB_DESTROY, sizeof(struct bcs_job),
	  { offsetof(struct bcs_job, rows),
	    offsetof(struct bcs_job, slice) }, { 8, 8 }, 2,
	  offsetof(struct bcs_job, flags), ~0U },
	{ "JOB_SET_ROW", BCS_IOC_JOB_SET_ROW, sizeof(struct bcs_job),
	  { offsetof(struct bcs_job, rows),
	    offsetof(struct bcs_job, slice) }, { 8, 8 }, 2,
	  offsetof(struct bcs_job, flags), ~BCS_JOB_FLAGS },
	{ "ATTACH", BCS_IOC_ATTACH, sizeof(struct bcs_attach),
	  { offsetof(struct bcs_attach, reserved0),
	    RSV64(struct bcs_attach, reserved, 0),
	    RSV64(struct bcs_attach, reserved, 1) }, { 4, 8, 8 }, 3,
	  offsetof(struct bcs_attach, flags), ~BCS_ATTACH_FLAGS },
	{ "DETACH", BCS_IOC_DETACH, sizeof(struct bcs_attach),
	  { offsetof(struct bcs_attach, reserved0),
	    RSV64(struct bcs_attach, reserved, 0),
	    RSV64(struct bcs_attach, reserved, 1) }, { 4, 8, 8 }, 3,
	  offsetof(struct bcs_attach, flags), ~BCS_ATTACH_FLAGS },
	{ "CONFIG", BCS_IOC_CONFIG, sizeof(struct bcs_config),
	  { RSV64(struct bcs_config, reserved, 0),
	    RSV64(struct bcs_config, reserved, 1) }, { 8, 8 }, 2,
	  offsetof(struct bcs_config, set), ~BCS_CONFIG_ALL },
	/* A next_row without BCS_STROBE_PREDICT is refused like a reserved word. */
	{ "STROBE", BCS_IOC_STROBE, sizeof(struct bcs_strobe),
	  { offsetof(struct bcs_strobe, next_row),
	    offsetof(struct bcs_strobe, plan_rows),
	    offsetof(struct bcs_strobe, plan_slices),
	    offsetof(struct bcs_strobe, reserved) }, { 4, 8, 4, 4 }, 4,
	  offsetof(struct bcs_strobe, flags), ~BCS_STROBE_FLAGS },
	/* struct bcs_state is filled in: its reserved words are outputs. */
	{ "GET_STATE", BCS_IOC_GET_STATE, sizeof(struct bcs_state),
	  { 0 }, { 0 }, 0, 0, 0 },
	{ "JOB_LIST", BCS_IOC_JOB_LIST, sizeof(struct bcs_job_list),
	  { RSV64(struct bcs_job_list, reserved, 0),
	    RSV64(struct bcs_job_list, reserved, 1) }, { 8, 8 }, 2, 0, 0 },
	{ "TASK_STATS", BCS_IOC_TASK_STATS, sizeof(struct bcs_task_list),
	  { offsetof(struct bcs_task_list, reserved0),
	    RSV64(struct bcs_task_list, reserved, 0),
	    RSV64(struct bcs_task_list, reserved, 1) }, { 4, 8, 8 }, 3,
	  0, 0 },
	/* Its output fields must be 0 on input, like reserved words. */
	{ "WINDOW", BCS_IOC_WINDOW, sizeof(struct bcs_window),
	  { offsetof(struct bcs_window, state),
	    offsetof(struct bcs_window, records),
	    RSV64(struct bcs_window, reserved, 0),
	    RSV64(struct bcs_window, reserved, 1) }, { 4, 8, 8, 8 }, 4,
	  offsetof(struct bcs_window, flags), ~0U },
};

#define NR_IOCS	ARRAY_SIZE(iocs)

/*
 * A valid argument for iocs[i]: the call succeeds as it is, so that any
 * error after a single change comes from that change.
 */
static void fill_valid(const struct ctx *c, size_t i, void *buf)
{
	memset(buf, 0, BUF_SIZE);
	switch (iocs[i].cmd) {
	case BCS_IOC_JOB_CREATE:
		*(struct bcs_job *)buf = (struct bcs_job){
			.size = sizeof(struct bcs_job), .id = BT_JOB_B,
			.row = 1 };
		break;
	case BCS_IOC_JOB_DESTROY:
		/* Destroy B, which fill_fixup() recreates as needed. */
		*(struct bcs_job *)buf = (struct bcs_job){
			.size = sizeof(struct bcs_job), .id = BT_JOB_B,
			.row = BCS_ROW_NONE };
		break;
	case BCS_IOC_JOB_SET_ROW:
		*(struct bcs_job *)buf = (struct bcs_job){
			.size = sizeof(struct bcs_job), .id = BT_JOB_A,
			.row = 0 };
		break;
	case BCS_IOC_ATTACH:
	case BCS_IOC_DETACH:
		*(struct bcs_attach *)buf = (struct bcs_attach){
			.size = sizeof(struct bcs_attach), .job = BT_JOB_A,
			.pid = c->victim };
		break;
	case BCS_IOC_CONFIG:
		*(struct bcs_config *)buf = (struct bcs_config){
			.size = sizeof(struct bcs_config) };
		break;
	case BCS_IOC_STROBE: {
		struct bcs_state st;

		bt_get_state(c->fd, &st);
		*(struct bcs_strobe *)buf = (struct bcs_strobe){
			.size = sizeof(struct bcs_strobe),
			.flags = BCS_STROBE_NOW, .slice = st.slice + 1,
			.row = 0 };
		break;
	}
	case BCS_IOC_GET_STATE:
		((struct bcs_state *)buf)->size = sizeof(struct bcs_state);
		break;
	case BCS_IOC_JOB_LIST:
		((struct bcs_job_list *)buf)->size =
			sizeof(struct bcs_job_list);
		break;
	case BCS_IOC_TASK_STATS:
		((struct bcs_task_list *)buf)->size =
			sizeof(struct bcs_task_list);
		break;
	case BCS_IOC_WINDOW:
		((struct bcs_window *)buf)->size = sizeof(struct bcs_window);
		break;
	}
}

/* Make sure job B exists for DESTROY and does not for CREATE. */
static void prepare(const struct ctx *c, size_t i)
{
	if (iocs[i].cmd == BCS_IOC_JOB_CREATE)
		bt_job_destroy(c->fd, BT_JOB_B);
	else if (iocs[i].cmd == BCS_IOC_JOB_DESTROY)
		bt_job_create(c->fd, BT_JOB_B, 1, NULL);
}

FIXTURE(bad) {
	struct ctx c;
	struct bt_burner victim;
	void *buf;
	int sfd;
};

FIXTURE_SETUP(bad)
{
	self->c.fd = -1;
	self->sfd = -1;
	self->c.fd = bt_open();
	ASSERT_LE(0, self->c.fd);
	ASSERT_EQ(0, bt_reset(self->c.fd));
	/* A guard page after the buffer catches calls that run off it. */
	self->buf = mmap(NULL, 2 * BUF_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_EQ(0, mprotect((char *)self->buf + BUF_SIZE, BUF_SIZE,
			      PROT_NONE));
	self->c.scratch = mmap(NULL, SCRATCH_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->c.scratch);
	ASSERT_EQ(0, bt_burner_start(&self->victim, 2, true));
	self->c.victim = self->victim.pid;
	ASSERT_EQ(0, bt_job_create(self->c.fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_attach(self->c.fd, BT_JOB_A, self->c.victim, 0,
			       NULL));
	/* Driven, so that a valid strobe is accepted. */
	ASSERT_EQ(0, bt_drive(self->c.fd));
	self->sfd = bt_open_stat();
	ASSERT_LE(0, self->sfd);
}

FIXTURE_TEARDOWN(bad)
{
	struct bcs_state st;

	if (self->c.fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->c.fd));
		EXPECT_TRUE(bt_wait_none_parked(self->c.fd));
		EXPECT_EQ(0, bt_get_state(self->c.fd, &st));
		EXPECT_EQ(0, st.nr_jobs);
	}
	bt_burner_stop(&self->victim);
	if (self->sfd >= 0)
		close(self->sfd);
	if (self->c.fd >= 0)
		close(self->c.fd);
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, 2 * BUF_SIZE);
	if (self->c.scratch && self->c.scratch != MAP_FAILED)
		munmap(self->c.scratch, SCRATCH_SIZE);
}

TEST_F(bad, valid_templates_work)
{
	size_t i;

	for (i = 0; i < NR_IOCS; i++) {
		prepare(&self->c, i);
		fill_valid(&self->c, i, self->buf);
		EXPECT_EQ(0, bt_ioctl(self->c.fd, iocs[i].cmd, self->buf))
			TH_LOG("%s", iocs[i].name);
	}
}

TEST_F(bad, wrong_size_field)
{
	static const long delta[] = { -1, 1, 8, -8, 4 };
	size_t i, k;
	int r;

	for (i = 0; i < NR_IOCS; i++) {
		for (k = 0; k < ARRAY_SIZE(delta) + 1; k++) {
			uint32_t sz = k < ARRAY_SIZE(delta) ?
				(uint32_t)(iocs[i].size + delta[k]) : 0;

			prepare(&self->c, i);
			fill_valid(&self->c, i, self->buf);
			*(uint32_t *)self->buf = sz;
			r = bt_ioctl(self->c.fd, iocs[i].cmd, self->buf);
			EXPECT_EQ(-EINVAL, r)
				TH_LOG("%s with size %u", iocs[i].name, sz);
		}
	}
}

TEST_F(bad, reserved_fields)
{
	size_t i;
	int k, r;

	for (i = 0; i < NR_IOCS; i++) {
		for (k = 0; k < iocs[i].nr_rsv; k++) {
			char *p = (char *)self->buf + iocs[i].rsv[k];

			prepare(&self->c, i);
			fill_valid(&self->c, i, self->buf);
			/* The highest byte, to catch truncating checks. */
			p[iocs[i].rsv_len[k] - 1] = 0x80;
			r = bt_ioctl(self->c.fd, iocs[i].cmd, self->buf);
			EXPECT_EQ(-EINVAL, r)
				TH_LOG("%s, reserved word at offset %zu",
				       iocs[i].name, iocs[i].rsv[k]);
		}
	}
}

TEST_F(bad, output_reserved_zeroed)
{
	struct bcs_state *st = self->buf;
	struct bcs_job_info *ji;
	struct bcs_task_stat *ts;
	struct bcs_job_list jl = { .size = sizeof(jl), .count = 4 };

	/* Garbage in the output words must not come back (nor kernel data). */
	memset(st, 0xff, sizeof(*st));
	st->size = sizeof(*st);
	ASSERT_EQ(0, bt_ioctl(self->c.fd, BCS_IOC_GET_STATE, st));
	EXPECT_GE(BCS_WINDOW_DONE, st->window_state);
	/* Its last word, reserved before plans, is a counter now. */
	EXPECT_NE(UINT64_MAX, st->planned);

	ji = self->c.scratch;
	memset(ji, 0xff, 4 * sizeof(*ji));
	jl.jobs = (uintptr_t)ji;
	ASSERT_EQ(0, bt_ioctl(self->c.fd, BCS_IOC_JOB_LIST, &jl));
	ASSERT_EQ(1, jl.count);
	EXPECT_EQ(0, ji[0].flags);
	EXPECT_EQ(1, ji[0].rows);	/* job A's row 0 */
	EXPECT_EQ(0, ji[0].owner);
	EXPECT_EQ(0, ji[0].reserved1);

	ASSERT_EQ(2, bt_task_stats(self->c.fd, BT_JOB_A, &ts));
	EXPECT_EQ(self->c.victim, ts[0].tgid);
	free(ts);
}

TEST_F(bad, unknown_flags)
{
	static const uint32_t bits[] = { 0x4, 0x80000000U, 0x100 };
	size_t i, k;
	int r;

	for (i = 0; i < NR_IOCS; i++) {
		if (!iocs[i].flags_off)
			continue;
		for (k = 0; k < ARRAY_SIZE(bits); k++) {
			uint32_t *f = (uint32_t *)((char *)self->buf +
						   iocs[i].flags_off);
			uint32_t bad = bits[k] & iocs[i].bad_flags;

			if (!bad)
				bad = iocs[i].bad_flags & -iocs[i].bad_flags;
			prepare(&self->c, i);
			fill_valid(&self->c, i, self->buf);
			*f |= bad;
			r = bt_ioctl(self->c.fd, iocs[i].cmd, self->buf);
			EXPECT_EQ(-EINVAL, r)
				TH_LOG("%s with flags 0x%x", iocs[i].name, *f);
		}
	}
}

TEST_F(bad, bad_pointers)
{
	void *ptrs[] = { NULL, (void *)1, KERNEL_PTR,
			 (void *)0xffffffffffffffffUL };
	size_t i, k;

	for (i = 0; i < NR_IOCS; i++) {
		for (k = 0; k < ARRAY_SIZE(ptrs); k++) {
			EXPECT_EQ(-EFAULT, bt_ioctl(self->c.fd, iocs[i].cmd,
						    ptrs[k]))
				TH_LOG("%s with %p", iocs[i].name, ptrs[k]);
		}
	}
	/* The queries on /dev/bcsstat too. */
	EXPECT_EQ(-EFAULT, bt_ioctl(self->sfd, BCS_IOC_GET_STATE, NULL));
	EXPECT_EQ(-EFAULT, bt_ioctl(self->sfd, BCS_IOC_JOB_LIST, KERNEL_PTR));
	EXPECT_EQ(-EFAULT, bt_ioctl(self->sfd, BCS_IOC_TASK_STATS, (void *)1));
}

TEST_F(bad, unknown_ioctls)
{
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE };
	static const unsigned int nrs[] = { 0, 11, 12, 13, 64, 128, 255 };
	unsigned long cmd;
	size_t i, d, k;

	for (i = 0; i < NR_IOCS; i++) {
		unsigned int nr = _IOC_NR(iocs[i].cmd);
		unsigned int dir = _IOC_DIR(iocs[i].cmd);
		unsigned int size = _IOC_SIZE(iocs[i].cmd);
		unsigned int sizes[] = { size - 1, size + 1, size + 8,
					 size - 8, 0 };

		/* Same number, other direction. */
		for (d = 0; d < 4; d++) {
			if (dirs[d] == dir)
				continue;
			fill_valid(&self->c, i, self->buf);
			cmd = _IOC(dirs[d], BCS_IOC_MAGIC, nr, size);
			EXPECT_EQ(-ENOTTY, bt_ioctl(self->c.fd, cmd, self->buf))
				TH_LOG("%s with dir %u", iocs[i].name, dirs[d]);
		}
		/* Same number, other size. */
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			fill_valid(&self->c, i, self->buf);
			cmd = _IOC(dir, BCS_IOC_MAGIC, nr, sizes[k]);
			EXPECT_EQ(-ENOTTY, bt_ioctl(self->c.fd, cmd, self->buf))
				TH_LOG("%s with size %u", iocs[i].name,
				       sizes[k]);
		}
		/* Same number and size, other type. */
		cmd = _IOC(dir, BCS_IOC_MAGIC + 1, nr, size);
		EXPECT_EQ(-ENOTTY, bt_ioctl(self->c.fd, cmd, self->buf));
	}
	for (k = 0; k < ARRAY_SIZE(nrs); k++) {
		for (d = 0; d < 4; d++) {
			memset(self->buf, 0, BUF_SIZE);
			cmd = _IOC(dirs[d], BCS_IOC_MAGIC, nrs[k], 32);
			EXPECT_EQ(-ENOTTY, bt_ioctl(self->c.fd, cmd, self->buf))
				TH_LOG("nr %u dir %u", nrs[k], dirs[d]);
			EXPECT_EQ(-ENOTTY, bt_ioctl(self->sfd, cmd, self->buf))
				TH_LOG("nr %u dir %u on " BCS_STAT_DEV,
				       nrs[k], dirs[d]);
		}
	}
	/* Common ioctls of other drivers. */
	EXPECT_EQ(-ENOTTY, bt_ioctl(self->c.fd, TCGETS, self->buf));
	EXPECT_EQ(-ENOTTY, bt_ioctl(self->c.fd, FIONREAD, self->buf));
}

TEST_F(bad, unknown_ids_and_values)
{
	struct bcs_strobe s = {
		.size = sizeof(s), .flags = BCS_STROBE_NOW, .slice = 1,
	};
	struct bcs_task_list tl = { .size = sizeof(tl), .job = 999 };

	EXPECT_EQ(-ENOENT, bt_job_destroy(self->c.fd, 999));
	EXPECT_EQ(-ENOENT, bt_job_set_row(self->c.fd, 999, 0));
	EXPECT_EQ(-ENOENT, bt_attach(self->c.fd, 999, self->c.victim, 0,
				     NULL));
	EXPECT_EQ(-ESRCH, bt_attach(self->c.fd, BT_JOB_A, 0x3ffffffe, 0,
				    NULL));
	EXPECT_EQ(-ESRCH, bt_detach(self->c.fd, BT_JOB_A, 0x3ffffffe, 0,
				    NULL));
	EXPECT_EQ(-ENOENT, bt_ioctl(self->c.fd, BCS_IOC_TASK_STATS, &tl));
	EXPECT_EQ(-EINVAL, bt_job_create(self->c.fd, 0, BCS_ROWS_MAX, NULL));
	EXPECT_EQ(-EINVAL, bt_job_set_row(self->c.fd, BT_JOB_A, 1000));
	s.row = BCS_ROWS_MAX;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->c.fd, BCS_IOC_STROBE, &s));
	s.row = BCS_ROW_NONE;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->c.fd, BCS_IOC_STROBE, &s));
	s.row = 0;
	s.slice_ns = BCS_SLICE_NS_MIN - 1;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->c.fd, BCS_IOC_STROBE, &s));
	s.slice_ns = BCS_SLICE_NS_MAX + 1;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->c.fd, BCS_IOC_STROBE, &s));
	/* A prediction: a row in range, and a deadline to predict from. */
	s.slice_ns = 0;
	s.flags = BCS_STROBE_PREDICT;
	s.next_row = BCS_ROWS_MAX;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->c.fd, BCS_IOC_STROBE, &s));
	s.next_row = 1;
	s.flags = BCS_STROBE_PREDICT | BCS_STROBE_NOW;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->c.fd, BCS_IOC_STROBE, &s));
	s.flags = BCS_STROBE_PREDICT | BCS_STROBE_NEXT;
	EXPECT_EQ(-EINVAL, bt_ioctl(self->c.fd, BCS_IOC_STROBE, &s));
	EXPECT_EQ(-EINVAL, bt_config(self->c.fd, BCS_CONFIG_MODE, 7, 0, 0,
				     NULL));
	EXPECT_EQ(-EINVAL, bt_config(self->c.fd, BCS_CONFIG_MODE,
				     0xffffffffU, 0, 0, NULL));
}

TEST_F(bad, short_list_buffers)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct bcs_job_list jl = { .size = sizeof(jl), .count = 2 };
	struct bcs_task_list tl = { .size = sizeof(tl), .count = 2 };
	char *area;

	ASSERT_EQ(0, bt_job_create(self->c.fd, BT_JOB_B, 1, NULL));
	area = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	ASSERT_EQ(0, munmap(area + pg, pg));
	/* Room for one record before the hole, two jobs and two tasks. */
	jl.jobs = (uintptr_t)(area + pg - sizeof(struct bcs_job_info));
	EXPECT_EQ(-EFAULT, bt_ioctl(self->c.fd, BCS_IOC_JOB_LIST, &jl));
	tl.tasks = (uintptr_t)(area + pg - sizeof(struct bcs_task_stat));
	EXPECT_EQ(-EFAULT, bt_ioctl(self->c.fd, BCS_IOC_TASK_STATS, &tl));
	/* Read-only memory cannot take records either. */
	ASSERT_EQ(0, mprotect(area, pg, PROT_READ));
	jl.jobs = (uintptr_t)area;
	EXPECT_EQ(-EFAULT, bt_ioctl(self->c.fd, BCS_IOC_JOB_LIST, &jl));
	munmap(area, pg);
	/* Kernel addresses are refused, not written. */
	jl.jobs = (uintptr_t)KERNEL_PTR;
	EXPECT_EQ(-EFAULT, bt_ioctl(self->c.fd, BCS_IOC_JOB_LIST, &jl));
	tl.tasks = (uintptr_t)KERNEL_PTR;
	EXPECT_EQ(-EFAULT, bt_ioctl(self->c.fd, BCS_IOC_TASK_STATS, &tl));
}

/*
 * A count far beyond the records that exist: the kernel sizes its work by
 * the records there are, writes only those (a buffer that ends at a guard
 * page right after them is enough) and reports their number.
 */
TEST_F(bad, huge_list_counts)
{
	struct bcs_job_list jl = { .size = sizeof(jl), .count = UINT32_MAX };
	struct bcs_task_list tl = { .size = sizeof(tl), .count = UINT32_MAX,
				    .job = BT_JOB_A };
	char *end = (char *)self->buf + BUF_SIZE;

	jl.jobs = (uintptr_t)(end - sizeof(struct bcs_job_info));
	EXPECT_EQ(0, bt_ioctl(self->c.fd, BCS_IOC_JOB_LIST, &jl));
	EXPECT_EQ(1, jl.count);
	tl.tasks = (uintptr_t)(end - 2 * sizeof(struct bcs_task_stat));
	EXPECT_EQ(0, bt_ioctl(self->c.fd, BCS_IOC_TASK_STATS, &tl));
	EXPECT_EQ(2, tl.count);
	tl.job = 0;
	tl.count = UINT32_MAX;
	EXPECT_EQ(0, bt_ioctl(self->c.fd, BCS_IOC_TASK_STATS, &tl));
	EXPECT_EQ(2, tl.count);
}

TEST_F(bad, stat_read_small_buffer)
{
	char small[sizeof(struct bcs_slice_record)];
	int fd = open(BCS_STAT_DEV, O_RDONLY | O_NONBLOCK);

	ASSERT_LE(0, fd);
	/* Produce records so that the size check is not hidden by EAGAIN. */
	ASSERT_EQ(0, bt_strobe_now(self->c.fd, 0));
	ASSERT_EQ(0, bt_strobe_now(self->c.fd, 0));
	EXPECT_EQ(-1, read(fd, small, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(fd, small, sizeof(small) - 1));
	EXPECT_EQ(EINVAL, errno);
	/* A whole record fits. */
	EXPECT_EQ((ssize_t)sizeof(small), read(fd, small, sizeof(small)));
	/* Writes are not a thing on a read-only device. */
	EXPECT_EQ(-1, write(fd, small, sizeof(small)));
	close(fd);
}

/* xorshift64*: deterministic for a given seed on every libc. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/*
 * A 64-bit value from the whole range, edges first: 0, 1, the ends of 32
 * and 64 bits signed and unsigned, CLOCK_REALTIME now give or take a
 * little, small numbers, and anything.
 */
static uint64_t edge64(void)
{
	uint64_t now = bt_now_ns(CLOCK_REALTIME);

	switch (rnd() % 16) {
	case 0:  return 0;
	case 1:  return 1;
	case 2:  return UINT32_MAX;
	case 3:  return (uint64_t)UINT32_MAX + 1;
	case 4:  return INT64_MAX;
	case 5:  return (uint64_t)INT64_MAX + 1;
	case 6:  return UINT64_MAX;
	case 7:  return UINT64_MAX - rnd() % 1024;
	case 8:  return now + rnd() % 100000000;
	case 9:  return now - rnd() % 100000000;
	case 10: return now;
	case 11: return rnd() % 1024;
	case 12: return (uint64_t)INT64_MAX - rnd() % 100000000000ULL;
	case 13: return rnd() >> (rnd() % 64);
	default: return rnd();
	}
}

static uint32_t edge32(void)
{
	switch (rnd() % 10) {
	case 0:  return 0;
	case 1:  return 1;
	case 2:  return UINT32_MAX;
	case 3:  return UINT32_MAX - 1;
	case 4:  return INT32_MAX;
	case 5:  return (uint32_t)INT32_MAX + 1;
	case 6:  return BCS_ROWS_MAX - 1 + (uint32_t)(rnd() % 3);
	case 7:  return (uint32_t)(rnd() % 16);
	default: return (uint32_t)rnd();
	}
}

/*
 * Strobes with deadlines from 2^63 - 2^36 up (2^63 and more, and those
 * that a prediction, a slice later, takes past 2^63) reach the module
 * unless BCS_FUZZ_HUGE=0.  A bcs.ko from before their -ERANGE (issue 25,
 * item 1) re-armed its hrtimer at a negative expiry for ever on a driven
 * one and the guest never came back: BCS_FUZZ_HUGE=0 fuzzes such a module
 * for everything else.
 */
#define HUGE_DEADLINE	((1ULL << 63) - (1ULL << 36))
static bool fuzz_huge;

static uint64_t tame_deadline(uint64_t d)
{
	return fuzz_huge || d < HUGE_DEADLINE ? d : d % HUGE_DEADLINE;
}

#define PUT(buf, type, field, v) do {					\
	__typeof__(((type *)0)->field) v_ = (v);			\
	memcpy((char *)(buf) + offsetof(type, field), &v_, sizeof(v_));	\
} while (0)

/* Edge values into the fields of the ioctls that carry numbers. */
static void fill_edges(unsigned long cmd, char *buf)
{
	switch (cmd) {
	case BCS_IOC_JOB_CREATE:
	case BCS_IOC_JOB_DESTROY:
	case BCS_IOC_JOB_SET_ROW:
		PUT(buf, struct bcs_job, id, edge32());
		PUT(buf, struct bcs_job, row, edge32());
		/* Rows and moves at a slice, with their flags or not. */
		PUT(buf, struct bcs_job, flags,
		    (uint32_t)(rnd() % 2 ? rnd() % 8 : 0));
		PUT(buf, struct bcs_job, rows, rnd() % 2 ? 0 : edge64());
		PUT(buf, struct bcs_job, slice, rnd() % 2 ? 0 : edge64());
		break;
	case BCS_IOC_ATTACH:
	case BCS_IOC_DETACH:
		PUT(buf, struct bcs_attach, job, edge32());
		break;	/* the pid: defuse() */
	case BCS_IOC_CONFIG:
		PUT(buf, struct bcs_config, set, (uint32_t)rnd() % 8);
		PUT(buf, struct bcs_config, slice_ns, edge64());
		PUT(buf, struct bcs_config, mode, edge32() % 5);
		PUT(buf, struct bcs_config, watchdog_slices, edge32());
		break;
	case BCS_IOC_STROBE:
		PUT(buf, struct bcs_strobe, flags,
		    (uint32_t)(rnd() % 2 ? rnd() % 16 : 0));
		PUT(buf, struct bcs_strobe, slice, edge64());
		PUT(buf, struct bcs_strobe, deadline_ns, edge64());
		PUT(buf, struct bcs_strobe, slice_ns,
		    rnd() % 2 ? 0 : edge64());
		PUT(buf, struct bcs_strobe, row, edge32());
		PUT(buf, struct bcs_strobe, next_row,
		    rnd() % 2 ? 0 : edge32());
		break;
	case BCS_IOC_JOB_LIST:
		PUT(buf, struct bcs_job_list, count, edge32());
		break;
	case BCS_IOC_TASK_STATS:
		PUT(buf, struct bcs_task_list, job, edge32());
		PUT(buf, struct bcs_task_list, count, edge32());
		break;
	case BCS_IOC_WINDOW:
		PUT(buf, struct bcs_window, op, edge32() % 4);
		PUT(buf, struct bcs_window, from_slice, edge64());
		PUT(buf, struct bcs_window, to_slice, edge64());
		break;
	}
}

/*
 * Keep the fuzz run from hurting the test itself: attach and detach only
 * ever name the victim or a pid that cannot exist (pid 1 and the test's
 * own are never drawn), list ioctls only ever write into the scratch area
 * or an invalid address, and strobes keep their deadlines below
 * HUGE_DEADLINE if BCS_FUZZ_HUGE=0.
 */
static void defuse(const struct ctx *c, unsigned long cmd, char *buf)
{
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != BCS_IOC_MAGIC)
		return;
	if (nr == _IOC_NR(BCS_IOC_ATTACH) || nr == _IOC_NR(BCS_IOC_DETACH)) {
		static const pid_t bad[] = { 0x3ffffffe, -5, 0, -1, INT32_MIN,
					     INT32_MAX, 4194304 };
		uint64_t r = rnd() % (2 * ARRAY_SIZE(bad));
		pid_t pid = r < ARRAY_SIZE(bad) ? bad[r] : c->victim;

		memcpy(buf + offsetof(struct bcs_attach, pid), &pid,
		       sizeof(pid));
	}
	if (nr == _IOC_NR(BCS_IOC_STROBE)) {
		uint64_t d;
		size_t off = offsetof(struct bcs_strobe, deadline_ns);

		memcpy(&d, buf + off, sizeof(d));
		d = tame_deadline(d);
		memcpy(buf + off, &d, sizeof(d));
	}
	if (nr == _IOC_NR(BCS_IOC_JOB_LIST) ||
	    nr == _IOC_NR(BCS_IOC_TASK_STATS)) {
		size_t off = nr == _IOC_NR(BCS_IOC_JOB_LIST) ?
			offsetof(struct bcs_job_list, jobs) :
			offsetof(struct bcs_task_list, tasks);
		uint64_t p = rnd() % 2 ? (uintptr_t)c->scratch :
					 (uintptr_t)KERNEL_PTR;

		memcpy(buf + off, &p, sizeof(p));
	}
}

/*
 * The errors the ioctls return (uapi.rst), and EBADF for the commands
 * that /dev/bcsstat, opened read-only, does not take.
 */
static bool fuzz_errno_known(int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case ENOTTY: case ENOENT: case ESRCH:
	case EPERM: case EBUSY: case EEXIST: case ENOSPC: case ENOTCONN:
	case EAGAIN: case ENOMEM: case EMSGSIZE: case EBADF: case ERANGE:
	case E2BIG:
		return true;
	}
	return false;
}

/* The errors of the netlink family: the ioctls' and its policy's. */
static bool nl_errno_known(int e)
{
	return fuzz_errno_known(e) || e == EOPNOTSUPP || e == ERANGE ||
	       e == EMSGSIZE;
}

#ifdef BCS_HAVE_LIBNL
struct nl_fuzz {
	struct nl_sock *sk;
	int family;
	int error;
	bool done;
};

static int nl_on_ack(struct nl_msg *msg, void *arg)
{
	struct nl_fuzz *n = arg;

	(void)msg;
	n->error = 0;
	n->done = true;
	return NL_STOP;
}

static int nl_on_error(struct sockaddr_nl *who, struct nlmsgerr *e,
		       void *arg)
{
	struct nl_fuzz *n = arg;

	(void)who;
	n->error = e->error;
	n->done = true;
	return NL_STOP;
}

static int nl_fuzz_open(struct nl_fuzz *n)
{
	struct timeval tv = { .tv_sec = 5 };

	n->sk = nl_socket_alloc();
	if (!n->sk)
		return -ENOMEM;
	if (genl_connect(n->sk) < 0)
		return -ECONNREFUSED;
	setsockopt(nl_socket_get_fd(n->sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
		   sizeof(tv));
	n->family = genl_ctrl_resolve(n->sk, BCS_GENL_NAME);
	return n->family < 0 ? -ENOENT : 0;
}

static void nl_fuzz_close(struct nl_fuzz *n)
{
	if (n->sk)
		nl_socket_free(n->sk);
	n->sk = NULL;
}

/*
 * Send @msg (consumed) and wait for its ack or error: 0 or -errno.
 * Replies before the ack (GET_STATE's) are skipped.
 */
static int nl_xfer(struct nl_fuzz *n, struct nl_msg *msg)
{
	struct nl_cb *cb;
	int k, ret;

	ret = nl_send_auto(n->sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return -EIO;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, nl_on_ack, n);
	nl_cb_err(cb, NL_CB_CUSTOM, nl_on_error, n);
	n->done = false;
	for (k = 0; k < 16 && !n->done; k++)
		if (nl_recvmsgs(n->sk, cb) < 0 && !n->done)
			break;
	nl_cb_put(cb);
	return n->done ? n->error : -ETIMEDOUT;
}

/* One attribute of @type, @len bytes: edge values where they fit. */
static int nl_put_random(struct nl_msg *msg, int type, int len)
{
	bool deadline = (type & NLA_TYPE_MASK) == BCS_A_DEADLINE_NS;
	uint8_t data[64];
	uint64_t v;
	uint32_t w;
	int k;

	for (k = 0; k < (int)sizeof(data); k += 8) {
		v = rnd();
		memcpy(data + k, &v, 8);
	}
	if (len == 8) {
		v = deadline ? tame_deadline(edge64()) : edge64();
		memcpy(data, &v, 8);
	} else if (len == 4) {
		w = edge32();
		memcpy(data, &w, 4);
	} else if (deadline && len > 8) {
		/* The kernel reads the first 8 bytes of a longer one. */
		memcpy(&v, data, 8);
		v = tame_deadline(v);
		memcpy(data, &v, 8);
	}
	return nla_put(msg, type, len, data);
}

/*
 * A well-typed BCS_CMD_STROBE or BCS_CMD_DRIVE: each attribute of its
 * own type and length, present or not, with values from the edges (rows
 * mostly below BCS_ROWS_MAX, so that strobes get through).
 */
static void nl_put_typed(struct nl_msg *msg, int cmd)
{
	uint32_t row = rnd() % 2 ? (uint32_t)(rnd() % BCS_ROWS_MAX) :
				   edge32();

	if (cmd == BCS_CMD_DRIVE) {
		if (rnd() % 2)
			nla_put_u64(msg, BCS_A_SLICE_NS, rnd() % 2 ?
				    BCS_SLICE_NS_MIN + rnd() % 1000000000 :
				    edge64());
		if (rnd() % 2)
			nla_put_u32(msg, BCS_A_WATCHDOG_SLICES, edge32());
		return;
	}
	if (rnd() % 8)
		nla_put_u64(msg, BCS_A_SLICE, edge64());
	if (rnd() % 8)
		nla_put_u32(msg, BCS_A_ROW, row);
	if (rnd() % 8)
		nla_put_u64(msg, BCS_A_DEADLINE_NS, tame_deadline(edge64()));
	if (rnd() % 2)
		nla_put_u64(msg, BCS_A_SLICE_NS, rnd() % 2 ?
			    BCS_SLICE_NS_MIN + rnd() % 1000000000 : edge64());
	if (rnd() % 2)
		nla_put_u32(msg, BCS_A_FLAGS, (uint32_t)(rnd() % 16));
	if (rnd() % 4 == 0)
		nla_put_u32(msg, BCS_A_NEXT_ROW, rnd() % 2 ?
			    (uint32_t)(rnd() % BCS_ROWS_MAX) : edge32());
}

/*
 * Half the time a well-typed strobe or drive (nl_put_typed()); else a
 * random BCS_CMD_* (and numbers past the last) with up to 6 random
 * attributes: types known and unknown, lengths right and wrong, values
 * from edge64()/edge32().  Returns 0 or the -errno of the reply.
 */
static int nl_fuzz_one(struct nl_fuzz *n, int *cmd_out)
{
	static const int lens[] = { 0, 1, 2, 3, 4, 4, 4, 7, 8, 8, 8, 9,
				    12, 16, 32, 64 };
	bool typed = rnd() % 2;
	int cmd = typed ? (rnd() % 4 ? BCS_CMD_STROBE : BCS_CMD_DRIVE) :
		  rnd() % 8 ? (int)(rnd() % (BCS_CMD_MAX + 1)) :
			      (int)(rnd() % 256);
	int nattr = typed ? (rnd() % 8 == 0) : (int)(rnd() % 7), k, type, len;
	struct nl_msg *msg = nlmsg_alloc();

	*cmd_out = cmd;
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, n->family, 0,
			 NLM_F_REQUEST | NLM_F_ACK, (uint8_t)cmd,
			 typed || rnd() % 8 ? BCS_GENL_VERSION :
					      (uint8_t)rnd())) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	if (typed)
		nl_put_typed(msg, cmd);
	for (k = 0; k < nattr; k++) {
		type = rnd() % 8 ? (int)(rnd() % (BCS_A_MAX + 2)) :
				   (int)(rnd() % 0x4000) |
				   (rnd() % 2 ? NLA_F_NESTED : 0);
		/* Mostly the length of the attribute's type. */
		len = rnd() % 3 ? (type == BCS_A_SLICE ||
				   type == BCS_A_DEADLINE_NS ||
				   type == BCS_A_SLICE_NS ? 8 : 4) :
				  lens[rnd() % ARRAY_SIZE(lens)];
		if (nl_put_random(msg, type, len))
			break;
	}
	return nl_xfer(n, msg);
}

/* BCS_CMD_GET_STATE, well formed: 0 or -errno. */
static int nl_get_state(struct nl_fuzz *n)
{
	struct nl_msg *m = nlmsg_alloc();

	if (!m)
		return -ENOMEM;
	if (!genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, n->family, 0,
			 NLM_F_REQUEST | NLM_F_ACK, BCS_CMD_GET_STATE,
			 BCS_GENL_VERSION)) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	return nl_xfer(n, m);
}

#else /* !BCS_HAVE_LIBNL: the ioctls only */
struct nl_fuzz {
	int unused;
};

static int nl_fuzz_open(struct nl_fuzz *n)
{
	(void)n;
	return -EOPNOTSUPP;
}

static void nl_fuzz_close(struct nl_fuzz *n)
{
	(void)n;
}

static int nl_fuzz_one(struct nl_fuzz *n, int *cmd_out)
{
	(void)n;
	*cmd_out = 0;
	return -EOPNOTSUPP;
}

static int nl_get_state(struct nl_fuzz *n)
{
	(void)n;
	return -EOPNOTSUPP;
}
#endif /* BCS_HAVE_LIBNL */

TEST_F_TIMEOUT(bad, fuzz, 600)
{
	const char *s_seed = getenv("BCS_FUZZ_SEED");
	const char *s_iter = getenv("BCS_FUZZ_ITERS");
	const char *s_huge = getenv("BCS_FUZZ_HUGE");
	long nl_ok = 0, nl_errs = 0, nl_unknown = 0;
	long nl_cmd_ok[BCS_CMD_MAX + 1] = { 0 };
	int nl_cmd;
	struct nl_fuzz nl = { 0 };
	uint64_t seed = s_seed ? strtoull(s_seed, NULL, 0) : 0x62637366757a7aULL;
	long iters = s_iter ? atol(s_iter) : 20000, it;
	long ok = 0, errs = 0, unknown = 0;
	struct bcs_state st;
	uint64_t before[2];
	char *buf = self->buf;
	unsigned long cmd;
	int fd, r;
	size_t i;

	fuzz_huge = !s_huge || atoi(s_huge) != 0;
	TH_LOG("fuzz seed 0x%llx, %ld iterations (BCS_FUZZ_SEED, BCS_FUZZ_ITERS)",
	       (unsigned long long)seed, iters);
	TH_LOG("strobe deadlines from 2^63 - 2^36 up: %s (BCS_FUZZ_HUGE)",
	       fuzz_huge ? "sent" : "held back");
	if (HAVE_NL) {
		ASSERT_EQ(0, nl_fuzz_open(&nl));
	} else {
		TH_LOG("netlink: not in this build (m32), ioctls only");
	}
	rng_state = seed ? seed : 1;
	for (it = 0; it < iters; it++) {
		uint64_t pick = rnd();
		void *arg = buf;

		/* A quarter of the calls go to the netlink family. */
		if (HAVE_NL && rnd() % 4 == 0) {
			r = nl_fuzz_one(&nl, &nl_cmd);
			if (r) {
				nl_errs++;
			} else {
				nl_ok++;
				if (nl_cmd <= BCS_CMD_MAX)
					nl_cmd_ok[nl_cmd]++;
			}
			if (r && !nl_errno_known(-r) && nl_unknown++ < 5)
				TH_LOG("netlink: unexpected error %d", r);
			if (r == -ETIMEDOUT || r == -EIO) {
				/* Out of step: start a new socket. */
				nl_fuzz_close(&nl);
				ASSERT_EQ(0, nl_fuzz_open(&nl));
			}
			continue;
		}

		i = rnd() % NR_IOCS;
		if (pick % 10 < 6) {
			cmd = iocs[i].cmd;
		} else {
			unsigned int nr = pick % 7 ? rnd() % 16 : rnd() % 256;
			unsigned int size = pick % 5 ? rnd() % 128 :
						       rnd() % 16384;

			cmd = _IOC(rnd() % 4, BCS_IOC_MAGIC, nr, size);
		}
		if (rnd() % 2) {
			int flips = (int)(rnd() % 4), f;

			fill_valid(&self->c, i, buf);
			if (cmd == iocs[i].cmd && rnd() % 2)
				fill_edges(cmd, buf);
			for (f = 0; f < flips; f++)
				buf[rnd() % 64] = (char)rnd();
		} else {
			size_t k;

			for (k = 0; k < 128; k += 8) {
				uint64_t v = rnd();

				memcpy(buf + k, &v, 8);
			}
			if (rnd() % 2)
				*(uint32_t *)buf = (uint32_t)_IOC_SIZE(cmd);
		}
		defuse(&self->c, cmd, buf);
		switch (rnd() % 40) {
		case 0:
			arg = NULL;
			break;
		case 1:
			arg = KERNEL_PTR;
			break;
		case 2:
			arg = buf + BUF_SIZE - 8;	/* runs off the end */
			break;
		}
		fd = rnd() % 10 ? self->c.fd : self->sfd;
		r = bt_ioctl(fd, cmd, arg);
		if (r)
			errs++;
		else
			ok++;
		if (r && !fuzz_errno_known(-r) && unknown++ < 5)
			TH_LOG("ioctl 0x%lx: unexpected error %d", cmd, r);
		/* Keep the number of jobs bounded. */
		if (it % 512 == 511) {
			bt_reset(self->c.fd);
			bt_job_create(self->c.fd, BT_JOB_A, 0, NULL);
			bt_attach(self->c.fd, BT_JOB_A, self->c.victim, 0,
				  NULL);
			bt_drive(self->c.fd);
		}
	}
	TH_LOG("fuzz: %ld calls succeeded, %ld failed", ok, errs);
	/* Some calls got through validation, and every error is one of ours. */
	EXPECT_LT(0, ok);
	EXPECT_LT(0, errs);
	EXPECT_EQ(0, unknown);
	if (HAVE_NL) {
		TH_LOG("fuzz: %ld netlink requests succeeded, %ld failed",
		       nl_ok, nl_errs);
		TH_LOG("fuzz: netlink successes: GET_STATE %ld, DRIVE %ld, RELEASE %ld, STROBE %ld",
		       nl_cmd_ok[BCS_CMD_GET_STATE], nl_cmd_ok[BCS_CMD_DRIVE],
		       nl_cmd_ok[BCS_CMD_RELEASE], nl_cmd_ok[BCS_CMD_STROBE]);
		EXPECT_LT(0, nl_ok);
		EXPECT_LT(0, nl_errs);
		EXPECT_EQ(0, nl_unknown);
		/* The family still answers (and our socket stops driving). */
		nl_fuzz_close(&nl);
		ASSERT_EQ(0, nl_fuzz_open(&nl));
		EXPECT_EQ(0, nl_get_state(&nl));
		nl_fuzz_close(&nl);
	}

	/* The module still works and nobody is left parked. */
	ASSERT_EQ(0, bt_reset(self->c.fd));
	EXPECT_TRUE(bt_wait_none_parked(self->c.fd));
	ASSERT_EQ(0, bt_get_state(self->c.fd, &st));
	EXPECT_EQ(BCS_MODE_OFF, st.mode);
	EXPECT_EQ(0, st.nr_jobs);
	EXPECT_EQ(0, st.nr_tasks);
	EXPECT_EQ(0, st.nr_parked);
	ASSERT_EQ(0, bt_job_create(self->c.fd, BT_JOB_B, 2, NULL));
	ASSERT_EQ(0, bt_attach(self->c.fd, BT_JOB_B, self->c.victim, 0,
			       NULL));
	ASSERT_EQ(0, bt_job_destroy(self->c.fd, BT_JOB_B));
	bt_burner_counters(&self->victim, before);
	EXPECT_TRUE(WAIT_UNTIL(bt_burner_all_advanced(&self->victim, before),
			       BT_WAIT_MS));
	EXPECT_EQ(0, waitpid(self->victim.pid, NULL, WNOHANG));
}

BT_HARNESS_MAIN

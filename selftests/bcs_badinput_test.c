// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed input to every ioctl: wrong sizes, non-zero reserved fields,
 * unknown flags, bad pointers, unknown ioctl numbers and ids, short list
 * buffers, short reads; then a bounded, seeded fuzz run.  Afterwards the
 * module must still work and no task may be left parked.
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
	{ "JOB_CREATE", BCS_IOC_JOB_CREATE, sizeof(struct bcs_job),
	  { RSV64(struct bcs_job, reserved, 0),
	    RSV64(struct bcs_job, reserved, 1) }, { 8, 8 }, 2,
	  offsetof(struct bcs_job, flags), ~0U },
	{ "JOB_DESTROY", BCS_IOC_JOB_DESTROY, sizeof(struct bcs_job),
	  { RSV64(struct bcs_job, reserved, 0),
	    RSV64(struct bcs_job, reserved, 1) }, { 8, 8 }, 2,
	  offsetof(struct bcs_job, flags), ~0U },
	{ "JOB_SET_ROW", BCS_IOC_JOB_SET_ROW, sizeof(struct bcs_job),
	  { RSV64(struct bcs_job, reserved, 0),
	    RSV64(struct bcs_job, reserved, 1) }, { 8, 8 }, 2,
	  offsetof(struct bcs_job, flags), ~0U },
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
	    RSV64(struct bcs_strobe, reserved, 0),
	    RSV64(struct bcs_strobe, reserved, 1) }, { 4, 8, 8 }, 3,
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
	int i;

	/* Garbage in the output words must not come back (nor kernel data). */
	memset(st, 0xff, sizeof(*st));
	st->size = sizeof(*st);
	ASSERT_EQ(0, bt_ioctl(self->c.fd, BCS_IOC_GET_STATE, st));
	EXPECT_EQ(0, st->reserved0);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, st->reserved[i]);
	}

	ji = self->c.scratch;
	memset(ji, 0xff, 4 * sizeof(*ji));
	jl.jobs = (uintptr_t)ji;
	ASSERT_EQ(0, bt_ioctl(self->c.fd, BCS_IOC_JOB_LIST, &jl));
	ASSERT_EQ(1, jl.count);
	EXPECT_EQ(0, ji[0].reserved0);
	EXPECT_EQ(0, ji[0].reserved[0]);
	EXPECT_EQ(0, ji[0].reserved[1]);

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
 * Keep the fuzz run from hurting the test itself: attach and detach only
 * ever name the victim or a pid that cannot exist, and list ioctls only
 * ever write into the scratch area or an invalid address.
 */
static void defuse(const struct ctx *c, unsigned long cmd, char *buf)
{
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != BCS_IOC_MAGIC)
		return;
	if (nr == _IOC_NR(BCS_IOC_ATTACH) || nr == _IOC_NR(BCS_IOC_DETACH)) {
		static const pid_t bad[] = { 0x3ffffffe, -5 };
		uint64_t r = rnd() % 3;
		pid_t pid = r == 2 ? c->victim : bad[r];

		memcpy(buf + offsetof(struct bcs_attach, pid), &pid,
		       sizeof(pid));
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
		return true;
	}
	return false;
}

TEST_F_TIMEOUT(bad, fuzz, 600)
{
	const char *s_seed = getenv("BCS_FUZZ_SEED");
	const char *s_iter = getenv("BCS_FUZZ_ITERS");
	uint64_t seed = s_seed ? strtoull(s_seed, NULL, 0) : 0x62637366757a7aULL;
	long iters = s_iter ? atol(s_iter) : 20000, it;
	long ok = 0, errs = 0, unknown = 0;
	struct bcs_state st;
	uint64_t before[2];
	char *buf = self->buf;
	unsigned long cmd;
	int fd, r;
	size_t i;

	TH_LOG("fuzz seed 0x%llx, %ld iterations (BCS_FUZZ_SEED, BCS_FUZZ_ITERS)",
	       (unsigned long long)seed, iters);
	rng_state = seed ? seed : 1;
	for (it = 0; it < iters; it++) {
		uint64_t pick = rnd();
		void *arg = buf;

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

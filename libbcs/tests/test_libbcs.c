// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host unit tests for libbcs; no module needed.
 *
 * The test is linked with -Wl,--wrap=ioctl against libbcs.a, so every
 * ioctl() the library issues lands in __wrap_ioctl() below: a small fake
 * of the module that checks what the library sends (size fields, reserved
 * fields) and answers like the real one.  The /dev/bcsstat ring is faked
 * with a regular file, and the netlink error path is exercised against
 * the kernel's own "nlctrl" family.
 */
#define _GNU_SOURCE		/* setenv(), mkstemp() */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>
#include <netlink/errno.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <linux/bcs_hist.h>

#include "bcs.h"
#include "bcs_ctl.h"
#include "internal.h"

static int passed, failed;

#define CHECK(cond) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__,	\
			#cond);						\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long __a = (long long)(a), __b = (long long)(b);		\
	if (__a == __b) {						\
		passed++;						\
	} else {							\
		failed++;						\
		fprintf(stderr, "FAIL %s:%d: %s == %s (%lld != %lld)\n",\
			__FILE__, __LINE__, #a, #b, __a, __b);		\
	}								\
} while (0)

/* ------------------------------------------------------------------ */
/* Fake module                                                          */
/* ------------------------------------------------------------------ */

#define FAKE_MAX_JOBS	256

static struct {
	int loaded;		/* 0: pass ioctls through to the real one */
	struct bcs_job_info jobs[FAKE_MAX_JOBS];
	unsigned int nr_jobs;
	uint32_t next_id;
	int grow_on_list;	/* jobs to add during the next JOB_LIST */
	unsigned int nr_tasks;
	struct bcs_config cfg;
	struct bcs_strobe last_strobe;
	struct bcs_attach last_attach;
	struct bcs_job last_job;	/* the last job ioctl accepted */
	unsigned int list_calls;
	uint32_t dist_job;	/* the job with statistics (0: none) */
	struct bcs_window window;
	uint64_t slice;
} fake;

int __real_ioctl(int fd, unsigned long req, ...);

static int fake_err(int e)
{
	errno = e;
	return -1;
}

static int zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return 0;
	return 1;
}

static struct bcs_job_info *find_job(uint32_t id)
{
	unsigned int i;

	for (i = 0; i < fake.nr_jobs; i++)
		if (fake.jobs[i].id == id)
			return &fake.jobs[i];
	return NULL;
}

static int add_job(uint32_t id, uint32_t row)
{
	struct bcs_job_info *j;

	if (fake.nr_jobs == FAKE_MAX_JOBS)
		return -ENOSPC;
	if (id == 0)
		while (find_job(id = ++fake.next_id))
			;
	if (find_job(id))
		return -EEXIST;
	j = &fake.jobs[fake.nr_jobs++];
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->row = row;
	j->run_ns = id * 1000ULL;
	return (int)id;
}

static int fake_job(unsigned long req, struct bcs_job *j)
{
	struct bcs_job_info *info;
	int ret;

	/* bcs.ko's checks of flags, rows and slice (module/device.c). */
	if (j->size != sizeof(*j) || (j->flags & ~BCS_JOB_FLAGS) ||
	    (!(j->flags & BCS_JOB_ROWS) && j->rows) ||
	    (!(j->flags & (BCS_JOB_AT_SLICE | BCS_JOB_OWNER)) && j->slice) ||
	    (req != BCS_IOC_JOB_CREATE && (j->flags & BCS_JOB_OWNER)) ||
	    (req != BCS_IOC_JOB_SET_ROW &&
	     (j->flags & (BCS_JOB_AT_SLICE | BCS_JOB_SET_FILLER))) ||
	    (req == BCS_IOC_JOB_DESTROY && j->flags))
		return fake_err(EINVAL);
	if (req == BCS_IOC_JOB_SET_ROW &&
	    (j->flags & (BCS_JOB_FILLER | BCS_JOB_SET_FILLER)) &&
	    ((j->flags & ~BCS_JOB_FILLER) != BCS_JOB_SET_FILLER ||
	     j->row || j->rows || j->slice))
		return fake_err(EINVAL);
	if (j->row != BCS_ROW_NONE && j->row >= BCS_ROWS_MAX)
		return fake_err(EINVAL);
	if (j->row == BCS_ROW_NONE && j->rows)
		return fake_err(EINVAL);
	fake.last_job = *j;
	if (req == BCS_IOC_JOB_CREATE) {
		ret = add_job(j->id, j->row);
		if (ret < 0)
			return fake_err(-ret);
		j->id = (uint32_t)ret;
		if (j->row != BCS_ROW_NONE)
			find_job(j->id)->rows = j->rows | 1ULL << j->row;
		return 0;
	}
	info = find_job(j->id);
	if (!info)
		return fake_err(ENOENT);
	if (req == BCS_IOC_JOB_SET_ROW && (j->flags & BCS_JOB_SET_FILLER)) {
		info->flags = j->flags & BCS_JOB_FILLER;
		return 0;
	}
	if (req == BCS_IOC_JOB_SET_ROW) {
		/* A change at a slice waits: the fake never switches. */
		if (j->flags & BCS_JOB_AT_SLICE)
			return 0;
		info->row = j->row;
		info->rows = j->row == BCS_ROW_NONE ? 0 :
			     j->rows | 1ULL << j->row;
		return 0;
	}
	*info = fake.jobs[--fake.nr_jobs];
	return 0;
}

static int fake_job_list(struct bcs_job_list *l)
{
	struct bcs_job_info *out = (void *)(uintptr_t)l->jobs;
	unsigned int i;

	if (l->size != sizeof(*l) || !zero(l->reserved, sizeof(l->reserved)))
		return fake_err(EINVAL);
	fake.list_calls++;
	for (i = 0; i < fake.nr_jobs && i < l->count; i++)
		out[i] = fake.jobs[i];
	l->count = fake.nr_jobs;
	/* Jobs created by someone else right after this call. */
	while (fake.grow_on_list > 0) {
		add_job(0, BCS_ROW_NONE);
		fake.grow_on_list--;
	}
	return 0;
}

static int fake_task_list(struct bcs_task_list *l)
{
	struct bcs_task_stat *out = (void *)(uintptr_t)l->tasks;
	unsigned int i, n = 0;

	if (l->size != sizeof(*l) || l->reserved0 ||
	    !zero(l->reserved, sizeof(l->reserved)))
		return fake_err(EINVAL);
	if (l->job && !find_job(l->job))
		return fake_err(ENOENT);
	/* Task i belongs to job (i % 2) + 1; pids from 1000. */
	for (i = 0; i < fake.nr_tasks; i++) {
		uint32_t job = i % 2 + 1;

		if (l->job && l->job != job)
			continue;
		if (n < l->count) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].pid = (int)(1000 + i);
			out[n].tgid = 1000;
			out[n].job = job;
			out[n].state = BCS_TASK_PARKED;
		}
		n++;
	}
	l->count = n;
	return 0;
}

/*
 * Statistics of job fake.dist_job: thread 1000 (live; bursts at
 * resolution 2 in buckets 9 and 13, one sleep in bucket 20) and thread
 * 1500 (gone; runnable waits only).
 */
static const int32_t dist_pids[] = { 1000, 1500 };

static size_t fake_hist(int32_t pid, uint32_t metric, unsigned char *buf)
{
	struct bcs_hist_header h = {
		.magic = BCS_HIST_MAGIC, .version = BCS_HIST_VERSION,
		.sub_bits = 2,
	};
	struct bcs_hist_bucket b[2] = { { 0 } };

	if (pid == 1000 && metric == BCS_DIST_BURST) {
		h.nr_buckets = 2;
		b[0].index = 9;		/* 10 .. 11 */
		b[0].count = 3;
		b[1].index = 13;	/* 20 .. 23 */
		b[1].count = 2;
		h.count = 5;
		h.sum = 10 + 11 + 11 + 20 + 23;
		h.min = 10;
		h.max = 23;
	} else if (pid == 1000 && metric == BCS_DIST_BLOCKED) {
		h.nr_buckets = 1;
		b[0].index = 18;	/* 48 .. 55 */
		b[0].count = 1;
		h.count = 1;
		h.sum = h.min = h.max = 50;
	} else if (pid == 1500 && metric == BCS_DIST_WAIT) {
		h.sub_bits = 0;
		h.nr_buckets = 1;
		b[0].index = 2;		/* 2 .. 3 */
		b[0].count = UINT64_MAX;
		h.count = UINT64_MAX;
		h.sum = UINT64_MAX;
		h.flags = BCS_HIST_SATURATED;
		h.min = 2;
		h.max = 3;
	} else {
		return 0;
	}
	if (buf) {
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), b, h.nr_buckets * sizeof(b[0]));
	}
	return sizeof(h) + h.nr_buckets * sizeof(b[0]);
}

static int fake_dist_read(struct bcs_dist_read *rd)
{
	size_t need, i;

	if (rd->size != sizeof(*rd) || !zero(rd->reserved, sizeof(rd->reserved)) ||
	    rd->metric >= BCS_DIST_METRICS || (rd->flags & ~BCS_DIST_NEXT))
		return fake_err(EINVAL);
	if (!fake.dist_job || rd->job != fake.dist_job)
		return fake_err(ENOENT);
	if (rd->flags & BCS_DIST_NEXT) {
		for (i = 0; i < 2 && dist_pids[i] <= rd->pid; i++)
			;
		if (i == 2)
			return fake_err(ESRCH);
		rd->pid = dist_pids[i];
	} else if (rd->pid != 1000 && rd->pid != 1500) {
		return fake_err(ESRCH);
	}
	memset(&rd->totals, 0, sizeof(rd->totals));
	rd->totals.start_ns = 5;
	rd->totals.tracked_ns = 1000;
	rd->totals.run_ns = 400;
	rd->totals.blocked_ns = 300;
	rd->totals.suspended_ns = 200;
	rd->totals.wait_ns = 100;
	rd->totals.bursts = 5;
	rd->totals.preemptions = 1;
	rd->totals.suspensions = 2;
	rd->totals.state = rd->pid == 1000 ? BCS_DIST_BLOCKED : BCS_DIST_WAIT;
	rd->totals.flags = rd->pid == 1000 ? BCS_DIST_TRACKING : BCS_DIST_GONE;
	need = fake_hist(rd->pid, rd->metric, NULL);
	if (need > rd->buf_size) {
		rd->buf_size = (uint32_t)need;
		return rd->buf ? fake_err(ENOSPC) : 0;
	}
	rd->buf_size = (uint32_t)need;
	if (need)
		fake_hist(rd->pid, rd->metric, (void *)(uintptr_t)rd->buf);
	return 0;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!fake.loaded)
		return __real_ioctl(fd, req, arg);

	switch (req) {
	case BCS_IOC_JOB_CREATE:
	case BCS_IOC_JOB_DESTROY:
	case BCS_IOC_JOB_SET_ROW:
		return fake_job(req, arg);
	case BCS_IOC_JOB_LIST:
		return fake_job_list(arg);
	case BCS_IOC_TASK_STATS:
		return fake_task_list(arg);
	case BCS_IOC_DIST_READ:
		return fake_dist_read(arg);
	case BCS_IOC_ATTACH:
	case BCS_IOC_DETACH: {
		struct bcs_attach *a = arg;

		if (a->size != sizeof(*a) || a->reserved0 ||
		    !zero(a->reserved, sizeof(a->reserved)) ||
		    (a->flags & ~BCS_ATTACH_FLAGS))
			return fake_err(EINVAL);
		fake.last_attach = *a;
		if (!find_job(a->job))
			return fake_err(ENOENT);
		if (a->pid <= 0 || a->pid == 99999)
			return fake_err(ESRCH);
		if (a->pid == 4242)
			return fake_err(EBUSY);
		a->nr_tasks = a->flags & BCS_ATTACH_THREAD ? 1 : 3;
		return 0;
	}
	case BCS_IOC_CONFIG: {
		struct bcs_config *c = arg;

		if (c->size != sizeof(*c) ||
		    !zero(c->reserved, sizeof(c->reserved)) ||
		    (c->set & ~BCS_CONFIG_ALL))
			return fake_err(EINVAL);
		if (c->set & BCS_CONFIG_MODE)
			fake.cfg.mode = c->mode;
		if (c->set & BCS_CONFIG_SLICE)
			fake.cfg.slice_ns = c->slice_ns;
		if (c->set & BCS_CONFIG_WATCHDOG)
			fake.cfg.watchdog_slices = c->watchdog_slices;
		*c = fake.cfg;
		c->size = sizeof(*c);
		return 0;
	}
	case BCS_IOC_STROBE: {
		struct bcs_strobe *s = arg;

		if (s->size != sizeof(*s) ||
		    (s->next_row && !(s->flags & BCS_STROBE_PREDICT)) ||
		    s->reserved)
			return fake_err(EINVAL);
		if (fake.cfg.mode == BCS_MODE_OFF)
			return fake_err(ENOTCONN);
		fake.last_strobe = *s;
		return 0;
	}
	case BCS_IOC_GET_STATE: {
		struct bcs_state *st = arg;

		if (st->size != sizeof(*st))
			return fake_err(EINVAL);
		st->version = BCS_VERSION;
		st->mode = fake.cfg.mode;
		st->nr_jobs = fake.nr_jobs;
		st->window_state = fake.window.state;
		return 0;
	}
	case BCS_IOC_WINDOW: {
		struct bcs_window *w = arg;

		/* The module's checks, before its answer. */
		if (w->size != sizeof(*w) || w->flags || w->state ||
		    w->records || w->dropped || w->first_seq ||
		    !zero(w->reserved, sizeof(w->reserved)) ||
		    w->op > BCS_WINDOW_DISARM ||
		    (w->op != BCS_WINDOW_ARM && (w->from_slice || w->to_slice)))
			return fake_err(EINVAL);
		if (w->op == BCS_WINDOW_ARM) {
			if (w->to_slice < w->from_slice)
				return fake_err(EINVAL);
			if (w->to_slice - w->from_slice >= 10000)
				return fake_err(E2BIG);
			if (w->from_slice <= fake.slice)
				return fake_err(ERANGE);
			memset(&fake.window, 0, sizeof(fake.window));
			fake.window.state = BCS_WINDOW_ARMED;
			fake.window.from_slice = w->from_slice;
			fake.window.to_slice = w->to_slice;
		} else if (w->op == BCS_WINDOW_DISARM) {
			memset(&fake.window, 0, sizeof(fake.window));
		}
		*w = fake.window;
		w->size = sizeof(*w);
		return 0;
	}
	}
	return fake_err(ENOTTY);
}

static void fake_reset(void)
{
	memset(&fake, 0, sizeof(fake));
	fake.loaded = 1;
	fake.cfg.slice_ns = 10000000;
}

/* ------------------------------------------------------------------ */
/* Tests                                                                */
/* ------------------------------------------------------------------ */

static void test_layout(void)
{
	/* The header promises no implicit padding; catch mistakes early. */
	CHECK_EQ(sizeof(struct bcs_job), 32);
	CHECK_EQ(sizeof(struct bcs_attach), 40);
	CHECK_EQ(sizeof(struct bcs_config), 40);
	CHECK_EQ(sizeof(struct bcs_strobe), 56);
	CHECK_EQ(sizeof(struct bcs_job_list) % 8, 0);
	CHECK_EQ(sizeof(struct bcs_task_list) % 8, 0);
	CHECK_EQ(sizeof(struct bcs_stat_header), 72);
	CHECK_EQ(sizeof(struct bcs_slice_record) % 8, 0);
	CHECK_EQ(sizeof(struct bcs_dist_ctl), 48);
	CHECK_EQ(sizeof(struct bcs_dist_totals), 80);
	CHECK_EQ(sizeof(struct bcs_dist_read), 128);
	CHECK_EQ(offsetof(struct bcs_dist_read, totals), 48);
	CHECK_EQ(sizeof(struct bcs_window), 72);
	CHECK_EQ(offsetof(struct bcs_window, from_slice), 16);
	CHECK_EQ(offsetof(struct bcs_stat_header, window_from), 32);
	CHECK_EQ(offsetof(struct bcs_stat_header, window_state), 64);
	CHECK_EQ(sizeof(struct bcs_state), 144);
	CHECK_EQ(offsetof(struct bcs_state, window_state), 108);
}

/* Slice windows: what the library sends, and the module's answers. */
static void test_window(struct bcs *h)
{
	struct bcs_window w;
	struct bcs_state st;

	fake_reset();
	fake.slice = 100;
	memset(&w, 0xff, sizeof(w));
	CHECK_EQ(bcs_window_get(h, &w), 0);
	CHECK_EQ(w.state, BCS_WINDOW_NONE);
	CHECK_EQ(w.size, sizeof(w));
	CHECK_EQ(bcs_window_get(h, NULL), -EINVAL);
	CHECK_EQ(bcs_window_get(NULL, &w), -EBADF);
	CHECK_EQ(bcs_window_set(NULL, 1, 2), -EBADF);
	CHECK_EQ(bcs_window_clear(NULL), -EBADF);

	CHECK_EQ(bcs_window_set(h, 7500, 12499), 0);
	CHECK_EQ(bcs_window_get(h, &w), 0);
	CHECK_EQ(w.state, BCS_WINDOW_ARMED);
	CHECK_EQ(w.from_slice, 7500);
	CHECK_EQ(w.to_slice, 12499);
	CHECK_EQ(bcs_get_state(h, &st), 0);
	CHECK_EQ(st.window_state, BCS_WINDOW_ARMED);
	CHECK_EQ(bcs_window_set(h, 200, 199), -EINVAL);
	CHECK_EQ(bcs_window_set(h, 200, 200 + 10000), -E2BIG);
	CHECK_EQ(bcs_window_set(h, 100, 101), -ERANGE);
	CHECK_EQ(bcs_window_clear(h), 0);
	CHECK_EQ(bcs_window_get(h, &w), 0);
	CHECK_EQ(w.state, BCS_WINDOW_NONE);
	CHECK_EQ(w.from_slice, 0);

	CHECK(!strcmp(bcs_window_state_name(BCS_WINDOW_NONE), "none"));
	CHECK(!strcmp(bcs_window_state_name(BCS_WINDOW_ARMED), "armed"));
	CHECK(!strcmp(bcs_window_state_name(BCS_WINDOW_CAPTURING),
		      "capturing"));
	CHECK(!strcmp(bcs_window_state_name(BCS_WINDOW_DONE), "done"));
	CHECK(!strcmp(bcs_window_state_name(4), "?"));
	CHECK(strstr(bcs_strerror(-E2BIG, BCS_CTX_WINDOW), "stat_records"));
	CHECK(strstr(bcs_strerror(-ERANGE, BCS_CTX_WINDOW), "has begun"));
	CHECK(strstr(bcs_strerror(-EPERM, BCS_CTX_WINDOW), "CAP_SYS_ADMIN"));
	CHECK(strstr(bcs_strerror(-ENOTTY, BCS_CTX_WINDOW), "do not match"));
}

/*
 * The histogram buckets of <linux/bcs_hist.h> at every resolution: they
 * tile 0 .. 2^64 - 1 without gap or overlap, in order; a value falls in
 * the bucket whose range holds it; a bucket is no wider than 2^-sub_bits
 * of its smallest value (exact below 2^sub_bits).
 */
static void test_hist(void)
{
	static const uint64_t edges[] = {
		0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256,
		1000, 1023, 1024, 1025, 999999, 1000000, 0xffffffffULL,
		0x100000000ULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
		0xfffffffffffffffeULL, 0xffffffffffffffffULL,
	};
	uint64_t x = 0x9e3779b97f4a7c15ULL, v, lo, hi;
	unsigned int s, bad_tile = 0, bad_val = 0, bad_width = 0;
	uint32_t i, n, k;

	CHECK_EQ(sizeof(struct bcs_hist_header), 48);
	CHECK_EQ(sizeof(struct bcs_hist_bucket), 16);
	CHECK_EQ(bcs_hist_buckets(0), 65);
	CHECK_EQ(bcs_hist_buckets(3), 62 * 8);
	CHECK_EQ(bcs_hist_buckets(BCS_HIST_SUB_BITS_MAX), 58 * 128);
	for (s = 0; s <= BCS_HIST_SUB_BITS_MAX; s++) {
		n = bcs_hist_buckets(s);
		if (bcs_hist_lower(0, s) != 0 ||
		    bcs_hist_upper(n - 1, s) != UINT64_MAX)
			bad_tile++;
		for (i = 0; i < n; i++) {
			lo = bcs_hist_lower(i, s);
			hi = bcs_hist_upper(i, s);
			if (hi < lo || (i + 1 < n &&
					bcs_hist_lower(i + 1, s) != hi + 1))
				bad_tile++;
			if (bcs_hist_index(lo, s) != i ||
			    bcs_hist_index(hi, s) != i)
				bad_val++;
			if (lo >= (1ULL << s) ? (hi - lo) > (lo >> s) : hi != lo)
				bad_width++;
			/* Resolutions nest: s - 1 holds each bucket whole. */
			if (s && bcs_hist_index(lo, s - 1) !=
				 bcs_hist_index(hi, s - 1))
				bad_tile++;
		}
		for (k = 0; k < 20000 + sizeof(edges) / sizeof(edges[0]); k++) {
			if (k < sizeof(edges) / sizeof(edges[0])) {
				v = edges[k];
			} else {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				v = x >> (x % 64);
			}
			i = bcs_hist_index(v, s);
			if (i >= n || bcs_hist_lower(i, s) > v ||
			    bcs_hist_upper(i, s) < v)
				bad_val++;
		}
	}
	CHECK_EQ(bad_tile, 0);
	CHECK_EQ(bad_val, 0);
	CHECK_EQ(bad_width, 0);
	/* Sub-bits 3: 12.5 % steps above 8. */
	CHECK_EQ(bcs_hist_index(7, 3), 7);
	CHECK_EQ(bcs_hist_index(8, 3), 8);
	CHECK_EQ(bcs_hist_index(16, 3), 16);
	CHECK_EQ(bcs_hist_index(17, 3), 16);
	CHECK_EQ(bcs_hist_index(18, 3), 17);
	CHECK_EQ(bcs_hist_lower(17, 3), 18);
	CHECK_EQ(bcs_hist_upper(17, 3), 19);
}

/* The rows' turns and the ids' turns of <linux/bcs.h>, against the rule
 * spelt out the slow way. */
static void test_shared_rules(void)
{
	uint64_t x = 0x2545f4914f6cdd1dULL, rows;
	unsigned int bad = 0, k;
	uint32_t row, want, r;

	CHECK_EQ(bcs_row_next(0, BCS_ROW_NONE), BCS_ROW_NONE);
	CHECK_EQ(bcs_row_next(0, 3), BCS_ROW_NONE);
	CHECK_EQ(bcs_row_next(1ULL << 5, BCS_ROW_NONE), 5);
	CHECK_EQ(bcs_row_next(1ULL << 5, 5), 5);
	CHECK_EQ(bcs_row_next((1ULL << 0) | (1ULL << 3), 0), 3);
	CHECK_EQ(bcs_row_next((1ULL << 0) | (1ULL << 3), 1), 3);
	CHECK_EQ(bcs_row_next((1ULL << 0) | (1ULL << 3), 3), 0);
	CHECK_EQ(bcs_row_next((1ULL << 63) | 1, 62), 63);
	CHECK_EQ(bcs_row_next((1ULL << 63) | 1, 63), 0);
	for (k = 0; k < 20000; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		rows = k % 3 ? x & (x >> 11) : x;
		row = k % 5 ? (uint32_t)(x >> 58) : BCS_ROW_NONE;
		want = BCS_ROW_NONE;
		for (r = 0; r < BCS_ROWS_MAX && want == BCS_ROW_NONE; r++)
			if ((rows >> r & 1) && row != BCS_ROW_NONE && r > row)
				want = r;
		for (r = 0; r < BCS_ROWS_MAX && want == BCS_ROW_NONE; r++)
			if (rows >> r & 1)
				want = r;
		bad += bcs_row_next(rows, row) != want;
	}
	CHECK_EQ(bad, 0);

	CHECK(!bcs_job_id_valid(0));
	CHECK(bcs_job_id_valid(1));
	CHECK(bcs_job_id_valid(BCS_JOB_ID_MAX));
	CHECK(!bcs_job_id_valid(BCS_JOB_ID_MAX + 1));
	CHECK_EQ(bcs_job_id_next(1), 2);
	CHECK_EQ(bcs_job_id_next(BCS_JOB_ID_MAX - 1), BCS_JOB_ID_MAX);
	CHECK_EQ(bcs_job_id_next(BCS_JOB_ID_MAX), 1);
	CHECK_EQ(bcs_job_id_next(0), 1);
	CHECK_EQ(bcs_job_id_next(0xffffffffU), 1);
}

static void test_open(void)
{
	struct bcs *h = (void *)1;
	struct bcs_stat *st = (void *)1;
	int err;

	setenv(BCS_ENV_DEVICE, "/nonexistent/bcs", 1);
	err = bcs_open(&h);
	CHECK_EQ(err, -ENOENT);
	CHECK(h == NULL);
	CHECK(strstr(bcs_strerror(err, BCS_CTX_OPEN), "module not loaded"));
	CHECK(strstr(bcs_strerror(err, BCS_CTX_OPEN), "/dev/bcs "));

	setenv(BCS_ENV_STAT_DEVICE, "/nonexistent/bcsstat", 1);
	err = bcs_stat_open(&st);
	CHECK_EQ(err, -ENOENT);
	CHECK(st == NULL);
	CHECK(strstr(bcs_strerror(err, BCS_CTX_STAT_OPEN), "/dev/bcsstat"));

	/* A file that is not the module: the ioctls fail with ENOTTY. */
	setenv(BCS_ENV_DEVICE, "/dev/null", 1);
	err = bcs_open(&h);
	CHECK_EQ(err, 0);
	if (err)
		return;
	CHECK(bcs_fd(h) >= 0);
	CHECK(fcntl(bcs_fd(h), F_GETFD) & FD_CLOEXEC);
	{
		struct bcs_state s;

		fake.loaded = 0;
		CHECK_EQ(bcs_get_state(h, &s), -ENOTTY);
	}
	bcs_close(h);
	bcs_close(NULL);
	CHECK_EQ(bcs_fd(NULL), -EBADF);
}

static void test_strerror(void)
{
	CHECK(!strcmp(bcs_strerror(-ENOENT, BCS_CTX_JOB), "no such job"));
	CHECK(!strcmp(bcs_strerror(-ENOENT, BCS_CTX_TASK), "no such job"));
	CHECK(!strcmp(bcs_strerror(-ESRCH, BCS_CTX_TASK),
		      "no such process"));
	CHECK(!strcmp(bcs_strerror(-EBUSY, BCS_CTX_TASK),
		      "process already in another job"));
	CHECK(!strcmp(bcs_strerror(-EPERM, BCS_CTX_GENERIC),
		      "permission denied: needs CAP_SYS_ADMIN (or the right "
		      "to signal the process)"));
	CHECK(strstr(bcs_strerror(-EPERM, BCS_CTX_JOB), "CAP_SYS_ADMIN"));
	CHECK(strstr(bcs_strerror(-EPERM, BCS_CTX_TASK), "job's owner"));
	CHECK(strstr(bcs_strerror(-ENOTCONN, BCS_CTX_STROBE), "off"));
	/* Netlink asks for what the ioctls ask, not CAP_NET_ADMIN. */
	CHECK(!strcmp(bcs_strerror(-EPERM, BCS_CTX_STROBE),
		      "permission denied: needs CAP_SYS_ADMIN"));
	CHECK(!strcmp(bcs_strerror(-EPERM, BCS_CTX_NETLINK),
		      "permission denied: needs CAP_SYS_ADMIN"));
	/* In driven mode only the driver strobes. */
	CHECK(strstr(bcs_strerror(-EBUSY, BCS_CTX_STROBE), "only its driver"));
	CHECK(strstr(bcs_strerror(-EBUSY, BCS_CTX_CONFIG), "another process"));
	CHECK(strstr(bcs_strerror(-ERANGE, BCS_CTX_STROBE),
		     "deadline out of range"));
	CHECK(strstr(bcs_strerror(-ENOENT, BCS_CTX_NETLINK),
		     "module not loaded"));
	/* The limits named are the interface's constants. */
	CHECK(!strcmp(bcs_strerror(-ENOSPC, BCS_CTX_JOB),
		      "too many jobs (4096)"));
	CHECK(!strcmp(bcs_strerror(-EINVAL, BCS_CTX_JOB),
		      "invalid argument (job id 1..2147483647, row 0..63 or "
		      "none)"));
	CHECK(!strcmp(bcs_strerror(-EINVAL, BCS_CTX_STROBE),
		      "invalid strobe (row 0..63, known flags only)"));
	CHECK(!strcmp(bcs_strerror(-EINVAL, BCS_CTX_CONFIG),
		      "invalid configuration (slice 50 us .. 10 s, watchdog "
		      "0..100000 slices)"));
	/* Unknown errors fall back to strerror(), positive or negative. */
	CHECK(!strcmp(bcs_strerror(-EIO, BCS_CTX_JOB), strerror(EIO)));
	CHECK(!strcmp(bcs_strerror(EIO, BCS_CTX_GENERIC), strerror(EIO)));
	CHECK(!strcmp(bcs_mode_name(BCS_MODE_DRIVEN), "driven"));
	CHECK(!strcmp(bcs_mode_name(77), "?"));
	CHECK(!strcmp(bcs_task_state_name(BCS_TASK_PARKED), "parked"));
	CHECK(!strcmp(bcs_job_state_name(BCS_JOB_SUSPENDED), "suspended"));
	CHECK(!strcmp(bcs_dist_metric_name(BCS_DIST_WAIT), "wait"));
	CHECK(!strcmp(bcs_dist_metric_name(BCS_DIST_METRICS), "?"));
}

static void test_metric_names(void)
{
	uint32_t m = 0;

	CHECK(!bcs_dist_metrics_parse("burst", &m));
	CHECK(m == 1U << BCS_DIST_BURST);
	CHECK(!bcs_dist_metrics_parse("wait,blocked", &m));
	CHECK(m == (1U << BCS_DIST_BURST | 1U << BCS_DIST_WAIT |
		    1U << BCS_DIST_BLOCKED));
	m = 0;
	CHECK(!bcs_dist_metrics_parse("all", &m) && m == BCS_DIST_ALL);
	m = 0;
	CHECK(bcs_dist_metrics_parse("", &m) == -EINVAL);
	CHECK(bcs_dist_metrics_parse("burst,", &m) == -EINVAL);
	CHECK(bcs_dist_metrics_parse("bursts", &m) == -EINVAL);
	CHECK(bcs_dist_metrics_parse("burs", &m) == -EINVAL);
	CHECK(bcs_dist_metrics_parse(",wait", &m) == -EINVAL);
	CHECK(bcs_dist_metrics_parse(NULL, &m) == -EINVAL);
	CHECK(m == 0);
}

static void test_jobs(struct bcs *h)
{
	struct bcs_job_info *jobs;
	struct bcs_task_stat *tasks;
	uint32_t id = 0, nr = 0;
	size_t n, i;
	int ok;

	fake_reset();
	CHECK_EQ(bcs_job_create(h, 0, BCS_ROW_NONE, &id), 0);
	CHECK_EQ(id, 1);
	CHECK_EQ(bcs_job_create(h, 7, 3, &id), 0);
	CHECK_EQ(id, 7);
	CHECK_EQ(bcs_job_create(h, 7, 3, NULL), -EEXIST);
	CHECK_EQ(bcs_job_create(h, 8, 64, NULL), -EINVAL);
	CHECK_EQ(bcs_job_set_row(h, 7, 5), 0);
	CHECK_EQ(find_job(7)->row, 5);
	CHECK_EQ(bcs_job_set_row(h, 9, 5), -ENOENT);
	CHECK_EQ(bcs_job_destroy(h, 9), -ENOENT);
	CHECK_EQ(bcs_job_destroy(h, 1), 0);
	CHECK(find_job(1) == NULL);
	CHECK_EQ(fake.last_job.flags, 0);

	/* Rows: BCS_JOB_ROWS only with rows, BCS_JOB_AT_SLICE only with one. */
	CHECK_EQ(bcs_job_create_rows(h, 10, 0, 1ULL << 2 | 1ULL << 63, &id),
		 0);
	CHECK_EQ(id, 10);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_ROWS);
	CHECK_EQ(fake.last_job.rows, 1ULL << 2 | 1ULL << 63);
	CHECK_EQ(fake.last_job.slice, 0);
	CHECK_EQ(find_job(10)->rows, 1ULL << 0 | 1ULL << 2 | 1ULL << 63);
	CHECK_EQ(bcs_job_create_rows(h, 11, 1, 0, NULL), 0);
	CHECK_EQ(fake.last_job.flags, 0);
	CHECK_EQ(find_job(11)->rows, 1ULL << 1);
	CHECK_EQ(bcs_job_create_rows(h, 12, BCS_ROW_NONE, 1, NULL), -EINVAL);
	CHECK_EQ(bcs_job_set_rows(h, 10, 1, 1ULL << 3, 0), 0);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_ROWS);
	CHECK_EQ(find_job(10)->row, 1);
	CHECK_EQ(find_job(10)->rows, 1ULL << 1 | 1ULL << 3);
	CHECK_EQ(bcs_job_set_rows(h, 10, 4, 1ULL << 5, 77), 0);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_ROWS | BCS_JOB_AT_SLICE);
	CHECK_EQ(fake.last_job.row, 4);
	CHECK_EQ(fake.last_job.rows, 1ULL << 5);
	CHECK_EQ(fake.last_job.slice, 77);
	CHECK_EQ(find_job(10)->row, 1);
	CHECK_EQ(bcs_job_set_rows(h, 10, 4, 0, 78), 0);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_AT_SLICE);
	CHECK_EQ(fake.last_job.rows, 0);
	CHECK_EQ(bcs_job_set_rows(h, 10, BCS_ROW_NONE, 1, 0), -EINVAL);
	CHECK_EQ(bcs_job_set_rows(h, 99, 0, 1, 5), -ENOENT);
	CHECK_EQ(bcs_job_set_rows(NULL, 10, 0, 1, 5), -EBADF);
	CHECK_EQ(bcs_job_create_rows(NULL, 0, 0, 1, NULL), -EBADF);

	/* Filler: BCS_JOB_SET_FILLER alone, BCS_JOB_FILLER with it if set. */
	CHECK_EQ(bcs_job_set_filler(h, 11, true), 0);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_SET_FILLER | BCS_JOB_FILLER);
	CHECK_EQ(fake.last_job.row, 0);
	CHECK_EQ(find_job(11)->flags, BCS_JOB_FILLER);
	CHECK_EQ(find_job(11)->rows, 1ULL << 1);
	CHECK_EQ(bcs_job_set_filler(h, 11, false), 0);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_SET_FILLER);
	CHECK_EQ(find_job(11)->flags, 0);
	CHECK_EQ(bcs_job_set_filler(h, 99, true), -ENOENT);
	CHECK_EQ(bcs_job_set_filler(NULL, 11, true), -EBADF);

	/* An owner: BCS_JOB_OWNER and the uid where a create's slice is. */
	CHECK_EQ(bcs_job_create_owned(h, 13, 2, 1000, &id), 0);
	CHECK_EQ(id, 13);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_OWNER);
	CHECK_EQ(fake.last_job.owner, 1000);
	CHECK_EQ(fake.last_job.row, 2);
	CHECK_EQ(bcs_job_create_owned(h, 14, 2, (uid_t)-1, NULL), -EINVAL);
	CHECK_EQ(bcs_job_create_owned(NULL, 14, 2, 1000, NULL), -EBADF);
	/* Rows and an owner together: both flags, both fields. */
	CHECK_EQ(bcs_job_create_rows_owned(h, 15, 3, 1ULL << 7, 65534, &id), 0);
	CHECK_EQ(id, 15);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_OWNER | BCS_JOB_ROWS);
	CHECK_EQ(fake.last_job.owner, 65534);
	CHECK_EQ(fake.last_job.rows, 1ULL << 7);
	CHECK_EQ(fake.last_job.row, 3);
	CHECK_EQ(bcs_job_create_rows_owned(h, 16, 3, 0, 0, NULL), 0);
	CHECK_EQ(fake.last_job.flags, BCS_JOB_OWNER);
	CHECK_EQ(fake.last_job.owner, 0);
	CHECK_EQ(fake.last_job.rows, 0);
	CHECK_EQ(bcs_job_create_rows_owned(h, 17, 3, 1, (uid_t)-1, NULL),
		 -EINVAL);
	CHECK_EQ(bcs_job_create_rows_owned(NULL, 17, 3, 1, 0, NULL), -EBADF);

	/* Empty list. */
	fake_reset();
	jobs = (void *)1;
	CHECK_EQ(bcs_job_list(h, &jobs, &n), 0);
	CHECK_EQ(n, 0);
	CHECK(jobs == NULL);

	/* More jobs than the first buffer holds: one retry. */
	for (i = 0; i < 40; i++)
		add_job(0, (uint32_t)(i % 4));
	fake.list_calls = 0;
	CHECK_EQ(bcs_job_list(h, &jobs, &n), 0);
	CHECK_EQ(n, 40);
	CHECK_EQ(fake.list_calls, 2);
	ok = jobs != NULL;
	for (i = 0; ok && i < n; i++)
		ok = jobs[i].id == i + 1 && jobs[i].row == i % 4;
	CHECK(ok);
	free(jobs);

	/* The list grows between the two calls: still consistent. */
	fake.list_calls = 0;
	fake.grow_on_list = 100;
	CHECK_EQ(bcs_job_list(h, &jobs, &n), 0);
	CHECK_EQ(n, 140);
	CHECK(fake.list_calls >= 2);
	free(jobs);

	/* Tasks of every job, then of one job. */
	fake_reset();
	add_job(1, 0);
	add_job(2, 1);
	fake.nr_tasks = 21;
	CHECK_EQ(bcs_task_stats(h, 0, &tasks, &n), 0);
	CHECK_EQ(n, 21);
	free(tasks);
	CHECK_EQ(bcs_task_stats(h, 2, &tasks, &n), 0);
	CHECK_EQ(n, 10);
	ok = tasks != NULL;
	for (i = 0; ok && i < n; i++)
		ok = tasks[i].job == 2 && tasks[i].state == BCS_TASK_PARKED;
	CHECK(ok);
	free(tasks);
	CHECK_EQ(bcs_task_stats(h, 5, &tasks, &n), -ENOENT);

	/* Attach and detach. */
	CHECK_EQ(bcs_attach(h, 1, 1234, 0, &nr), 0);
	CHECK_EQ(nr, 3);
	CHECK_EQ(fake.last_attach.job, 1);
	CHECK_EQ(fake.last_attach.pid, 1234);
	CHECK_EQ(bcs_attach(h, 1, 1234, BCS_ATTACH_THREAD, &nr), 0);
	CHECK_EQ(nr, 1);
	CHECK_EQ(bcs_detach(h, 1, 1234, 0, NULL), 0);
	CHECK_EQ(bcs_attach(h, 3, 1234, 0, NULL), -ENOENT);
	CHECK_EQ(bcs_attach(h, 1, 99999, 0, NULL), -ESRCH);
	CHECK_EQ(bcs_attach(h, 1, 4242, 0, NULL), -EBUSY);
	CHECK_EQ(bcs_attach(h, 1, 1234, 0x80, NULL), -EINVAL);
}

static void test_control(struct bcs *h)
{
	struct bcs_config c;
	struct bcs_strobe s;
	struct bcs_state st;

	fake_reset();
	CHECK_EQ(bcs_config_get(h, &c), 0);
	CHECK_EQ(c.slice_ns, 10000000);
	CHECK_EQ(c.mode, BCS_MODE_OFF);

	/* Garbage in size and reserved must not reach the module. */
	memset(&c, 0xff, sizeof(c));
	c.set = BCS_CONFIG_MODE | BCS_CONFIG_WATCHDOG;
	c.mode = BCS_MODE_STANDALONE;
	c.watchdog_slices = 5;
	CHECK_EQ(bcs_config_set(h, &c), 0);
	CHECK_EQ(c.mode, BCS_MODE_STANDALONE);
	CHECK_EQ(c.watchdog_slices, 5);
	CHECK_EQ(c.slice_ns, 10000000);
	CHECK_EQ(fake.cfg.mode, BCS_MODE_STANDALONE);

	memset(&s, 0xff, sizeof(s));
	s.flags = BCS_STROBE_NOW;
	s.slice = 42;
	s.row = 3;
	s.deadline_ns = 123;
	s.slice_ns = 0;
	CHECK_EQ(bcs_strobe(h, &s), 0);
	CHECK_EQ(fake.last_strobe.slice, 42);
	CHECK_EQ(fake.last_strobe.row, 3);
	CHECK_EQ(fake.last_strobe.deadline_ns, 123);
	CHECK_EQ(fake.last_strobe.flags, BCS_STROBE_NOW);
	CHECK_EQ(fake.last_strobe.next_row, 0);
	/* The prediction goes with its flag only. */
	s.flags = BCS_STROBE_PREDICT;
	s.next_row = 5;
	CHECK_EQ(bcs_strobe(h, &s), 0);
	CHECK_EQ(fake.last_strobe.flags, BCS_STROBE_PREDICT);
	CHECK_EQ(fake.last_strobe.next_row, 5);

	fake.cfg.mode = BCS_MODE_OFF;
	CHECK_EQ(bcs_strobe(h, &s), -ENOTCONN);

	memset(&st, 0xff, sizeof(st));
	CHECK_EQ(bcs_get_state(h, &st), 0);
	CHECK_EQ(st.version, BCS_VERSION);
	CHECK_EQ(st.size, sizeof(st));
	CHECK_EQ(bcs_get_state(NULL, &st), -EBADF);
}

/* ---- /dev/bcsstat faked by a regular file ---- */

struct ring_spec {
	uint32_t nr;
	uint32_t record_size;
	uint64_t head;
	uint32_t magic;
};

static char ring_path[64];

static void write_ring(const struct ring_spec *rs,
		       void (*tweak)(unsigned char *ring, uint32_t rsz))
{
	struct bcs_stat_header h;
	size_t len = 128 + (size_t)rs->nr * rs->record_size;
	unsigned char *buf = calloc(1, len);
	uint64_t s;
	int fd;

	memset(&h, 0, sizeof(h));
	h.magic = rs->magic;
	h.version = BCS_STAT_VERSION;
	h.header_size = sizeof(h);
	h.record_size = rs->record_size;
	h.nr_records = rs->nr;
	h.records_offset = 128;
	h.head = rs->head;
	memcpy(buf, &h, sizeof(h));
	for (s = rs->head > rs->nr ? rs->head - rs->nr : 0; s < rs->head;
	     s++) {
		struct bcs_slice_record r;

		memset(&r, 0, sizeof(r));
		r.seq = s;
		r.slice = 1000 + s;
		r.row = (uint32_t)(s % 3);
		memcpy(buf + 128 + (s % rs->nr) * rs->record_size, &r,
		       sizeof(r));
	}
	if (tweak)
		tweak(buf + 128, rs->record_size);
	strcpy(ring_path, "/tmp/bcs-test-ring-XXXXXX");
	fd = mkstemp(ring_path);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		abort();
	close(fd);
	free(buf);
	setenv(BCS_ENV_STAT_DEVICE, ring_path, 1);
}

static struct bcs_stat *open_ring(void)
{
	struct bcs_stat *st = NULL;

	CHECK_EQ(bcs_stat_open(&st), 0);
	return st;
}

static uint32_t tweak_rsz;

static void set_seq(unsigned char *ring, uint32_t idx, uint64_t seq)
{
	memcpy(ring + (size_t)idx * tweak_rsz, &seq, sizeof(seq));
}

/* Record 9 (slot 1) not yet written: still holds 1. */
static void tweak_unwritten(unsigned char *ring, uint32_t rsz)
{
	tweak_rsz = rsz;
	set_seq(ring, 9 % 8, 1);
}

/* Record 5 (slot 5, the oldest) already replaced by record 13. */
static void tweak_recycled(unsigned char *ring, uint32_t rsz)
{
	tweak_rsz = rsz;
	set_seq(ring, 5 % 8, 13);
}

/*
 * Record 15 (slot 7, the newest) being written again for its settle times.
 * U64_MAX - 15 is a multiple of 8, so a reader that took U64_MAX for a
 * later lap would skip the record for good.
 */
static void tweak_amending(unsigned char *ring, uint32_t rsz)
{
	tweak_rsz = rsz;
	set_seq(ring, 15 % 8, UINT64_MAX);
}

static void test_stat_ring(void)
{
	struct ring_spec rs = {
		.nr = 8, .record_size = sizeof(struct bcs_slice_record),
		.head = 13, .magic = BCS_STAT_MAGIC,
	};
	struct bcs_slice_record recs[16];
	struct bcs_stat_header hdr;
	struct bcs_stat *st;
	uint64_t next, head;
	size_t n, i;
	int ok;

	write_ring(&rs, NULL);
	st = open_ring();
	if (!st)
		return;
	CHECK_EQ(bcs_stat_head(st, &head), -ENODATA);
	CHECK_EQ(bcs_stat_snapshot(st, 0, recs, 16, &n, &next), -ENODATA);
	CHECK_EQ(bcs_stat_map(st), 0);
	CHECK_EQ(bcs_stat_map(st), 0);
	CHECK_EQ(bcs_stat_head(st, &head), 0);
	CHECK_EQ(head, 13);
	CHECK_EQ(bcs_stat_header(st, &hdr), 0);
	CHECK_EQ(hdr.nr_records, 8);

	/* Everything still in the ring: 5 .. 12. */
	CHECK_EQ(bcs_stat_snapshot(st, 0, recs, 16, &n, &next), 0);
	CHECK_EQ(n, 8);
	CHECK_EQ(next, 13);
	ok = 1;
	for (i = 0; i < n; i++)
		ok &= recs[i].seq == 5 + i && recs[i].slice == 1005 + i;
	CHECK(ok);

	/* A window, bounded by max. */
	CHECK_EQ(bcs_stat_snapshot(st, 10, recs, 2, &n, &next), 0);
	CHECK_EQ(n, 2);
	CHECK_EQ(recs[0].seq, 10);
	CHECK_EQ(next, 12);

	/* Nothing new. */
	CHECK_EQ(bcs_stat_snapshot(st, 13, recs, 16, &n, &next), 0);
	CHECK_EQ(n, 0);
	CHECK_EQ(next, 13);
	bcs_stat_close(st);
	unlink(ring_path);

	/* A record still being written stops the copy before it. */
	write_ring(&rs, tweak_unwritten);
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_map(st), 0);
		CHECK_EQ(bcs_stat_snapshot(st, 0, recs, 16, &n, &next), 0);
		CHECK_EQ(n, 4);
		CHECK_EQ(next, 9);
		bcs_stat_close(st);
	}
	unlink(ring_path);

	/* The oldest record already recycled is skipped. */
	write_ring(&rs, tweak_recycled);
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_map(st), 0);
		CHECK_EQ(bcs_stat_snapshot(st, 0, recs, 16, &n, &next), 0);
		CHECK_EQ(n, 7);
		CHECK_EQ(recs[0].seq, 6);
		CHECK_EQ(next, 13);
		bcs_stat_close(st);
	}
	unlink(ring_path);

	/* The newest record being amended: the copy stops before it. */
	rs.head = 16;
	write_ring(&rs, tweak_amending);
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_map(st), 0);
		CHECK_EQ(bcs_stat_snapshot(st, 0, recs, 16, &n, &next), 0);
		CHECK_EQ(n, 7);
		CHECK_EQ(recs[6].seq, 14);
		CHECK_EQ(next, 15);
		bcs_stat_close(st);
	}
	unlink(ring_path);

	/* Larger records (a newer module): indexed by header.record_size. */
	rs.record_size = sizeof(struct bcs_slice_record) + 32;
	rs.head = 3;
	write_ring(&rs, NULL);
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_map(st), 0);
		CHECK_EQ(bcs_stat_snapshot(st, 0, recs, 16, &n, &next), 0);
		CHECK_EQ(n, 3);
		CHECK_EQ(recs[2].slice, 1002);
		bcs_stat_close(st);
	}
	unlink(ring_path);

	/* Not a bcs ring. */
	rs.magic = 0x12345678;
	write_ring(&rs, NULL);
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_map(st), -EPROTO);
		bcs_stat_close(st);
	}
	unlink(ring_path);
}

/*
 * Read @total records of @rsz bytes through bcs_stat_read() from a ring
 * file made by write_ring(), @max at a time: a regular file positioned at
 * the records streams them as the module's read() does.  Returns 1 if
 * every record came, in order, with its fields.
 */
static int read_stream(uint32_t rsz, uint32_t total, size_t max)
{
	struct bcs_slice_record recs[8];
	struct ring_spec rs = { total, rsz, total, BCS_STAT_MAGIC };
	struct bcs_stat *st;
	size_t n, got = 0;
	int i, ok = 1;

	write_ring(&rs, NULL);
	st = open_ring();
	if (!st)
		return 0;
	if (lseek(bcs_stat_fd(st), 128, SEEK_SET) != 128)
		abort();
	for (i = 0; i < 100 && got < total; i++) {
		size_t j;

		if (bcs_stat_read(st, recs, max, &n, i & 1) || !n)
			break;
		for (j = 0; j < n; j++)
			ok &= recs[j].seq == got + j &&
			      recs[j].slice == 1000 + got + j &&
			      recs[j].row == (got + j) % 3;
		got += n;
	}
	bcs_stat_close(st);
	unlink(ring_path);
	return ok && got == total;
}

/*
 * A stand-in with no header at all: a plain stream of records of this
 * library's size (the first record's seq, 0, is not the magic).
 */
static int read_plain_stream(void)
{
	struct bcs_slice_record recs[4];
	char path[] = "/tmp/bcs-test-read-XXXXXX";
	struct bcs_stat *st;
	size_t n, got = 0;
	int fd, i, ok = 1;

	fd = mkstemp(path);
	if (fd < 0)
		abort();
	for (i = 0; i < 10; i++) {
		struct bcs_slice_record r;

		memset(&r, 0, sizeof(r));
		r.seq = (uint64_t)i;
		if (write(fd, &r, sizeof(r)) != sizeof(r))
			abort();
	}
	close(fd);
	setenv(BCS_ENV_STAT_DEVICE, path, 1);
	st = open_ring();
	for (i = 0; st && i < 10 && got < 10; i++) {
		size_t j;

		if (bcs_stat_read(st, recs, 4, &n, 0) || !n)
			break;
		for (j = 0; j < n; j++)
			ok &= recs[j].seq == got + j;
		got += n;
	}
	if (st)
		CHECK_EQ(bcs_stat_map(st), -EPROTO);
	bcs_stat_close(st);
	unlink(path);
	return ok && got == 10;
}

static void test_stat_read(void)
{
	const uint32_t rsz = sizeof(struct bcs_slice_record);
	struct bcs_slice_record big[16];
	struct ring_spec rs = { 10, rsz, 10, BCS_STAT_MAGIC };
	struct bcs_stat *st;
	size_t n;
	int fd;

	/* The read(2) path: a stream of whole records. */
	CHECK(read_stream(rsz, 10, 4));
	CHECK(read_plain_stream());
	/* A newer module's larger records: our prefix of each. */
	CHECK(read_stream(rsz + 24, 10, 4));
	CHECK(read_stream(rsz + 8, 7, 8));

	write_ring(&rs, NULL);
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_read(st, big, 0, &n, 0), -EINVAL);
		CHECK_EQ(bcs_stat_read(st, NULL, 1, &n, 0), -EINVAL);
		bcs_stat_close(st);
	}
	/* A torn stream is a protocol error, not silently dropped data. */
	fd = open(ring_path, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, "x", 1) != 1)
		abort();
	close(fd);
	st = open_ring();
	if (st) {
		if (lseek(bcs_stat_fd(st), 128, SEEK_SET) != 128)
			abort();
		CHECK_EQ(bcs_stat_read(st, big, 16, &n, 0), -EPROTO);
		bcs_stat_close(st);
	}
	unlink(ring_path);

	/* An empty stand-in: nothing to read, and no fault. */
	fd = open(ring_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	close(fd);
	setenv(BCS_ENV_STAT_DEVICE, ring_path, 1);
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_read(st, big, 16, &n, 0), 0);
		CHECK_EQ(n, 0);
		CHECK_EQ(bcs_stat_map(st), -EPROTO);
		bcs_stat_close(st);
	}
	unlink(ring_path);

	/* A ring file cut short: refused, not mapped to fault later. */
	write_ring(&rs, NULL);
	if (truncate(ring_path, 200))
		abort();
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_map(st), -EPROTO);
		bcs_stat_close(st);
	}
	unlink(ring_path);

	/* A header this library does not understand: no guess at the size. */
	rs.record_size = rsz - 8;
	rs.head = 0;		/* no record: ours would not fit */
	write_ring(&rs, NULL);
	st = open_ring();
	if (st) {
		CHECK_EQ(bcs_stat_read(st, big, 16, &n, 0), -EPROTO);
		bcs_stat_close(st);
	}
	unlink(ring_path);
}

static void test_stat_ioctls(void)
{
	struct bcs_stat *st;
	struct bcs_job_info *jobs;
	struct bcs_state s;
	size_t n;

	/* The query ioctls work on the stat file too. */
	setenv(BCS_ENV_STAT_DEVICE, "/dev/null", 1);
	st = open_ring();
	if (!st)
		return;
	fake_reset();
	add_job(3, 1);
	CHECK_EQ(bcs_stat_job_list(st, &jobs, &n), 0);
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK_EQ(jobs[0].id, 3);
	free(jobs);
	CHECK_EQ(bcs_stat_get_state(st, &s), 0);
	CHECK_EQ(s.nr_jobs, 1);
	/* /dev/null cannot be mapped: the error comes back, no crash. */
	CHECK(bcs_stat_map(st) < 0);
	bcs_stat_close(st);
}

static void test_netlink(void)
{
	struct bcs_nl *nl = NULL;
	struct bcs_state s;
	int err;

	err = bcs__nl_open_family(&nl, "bcs-no-such-family");
	if (err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT ||
	    err == -EACCES) {
		fprintf(stderr, "SKIP netlink: %s\n", strerror(-err));
		return;
	}
	CHECK_EQ(err, -ENOENT);
	CHECK(nl == NULL);

	/* The host cannot load bcs.ko, so the family is absent here. */
	err = bcs_nl_open(&nl);
	if (err == 0) {
		fprintf(stderr, "SKIP netlink: family bcs registered\n");
		bcs_nl_close(nl);
	} else {
		CHECK_EQ(err, -ENOENT);
		CHECK(strstr(bcs_strerror(err, BCS_CTX_NETLINK),
			     "module not loaded"));
	}

	/*
	 * Against "nlctrl" our command numbers mean something else and are
	 * refused: the kernel's errno must come back unchanged.
	 * BCS_CMD_GET_STATE is CTRL_CMD_NEWFAMILY there (no handler),
	 * BCS_CMD_RELEASE is CTRL_CMD_GETFAMILY without a name (-EINVAL).
	 */
	err = bcs__nl_open_family(&nl, "nlctrl");
	CHECK_EQ(err, 0);
	if (err)
		return;
	CHECK(bcs_nl_fd(nl) >= 0);
	CHECK_EQ(bcs_nl_get_state(nl, &s), -EOPNOTSUPP);
	CHECK_EQ(bcs_nl_release(nl), -EINVAL);
	CHECK_EQ(bcs_nl_strobe(nl, 1, 0, 0, 0, 0), -EOPNOTSUPP);
	CHECK_EQ(bcs_nl_strobe_send(nl, &(struct bcs_strobe){
			.flags = BCS_STROBE_PREDICT, .next_row = 1 }),
		 -EOPNOTSUPP);
	CHECK_EQ(bcs_nl_strobe_send(nl, NULL), -EINVAL);
	CHECK_EQ(bcs_nl_strobe_send(NULL, NULL), -EBADF);
	CHECK(bcs_nl_error_msg(nl) != NULL);
	bcs_nl_close(nl);
	bcs_nl_close(NULL);

	CHECK_EQ(bcs__nlerr_to_errno(-NLE_OBJ_NOTFOUND), -ENOENT);
	CHECK_EQ(bcs__nlerr_to_errno(NLE_PERM), -EPERM);
	CHECK_EQ(bcs__nlerr_to_errno(-9999), -EIO);
}

/* ---- job dumps ---- */

/* The text bcs_job_dump() wrote of job 1 to a memory file, or NULL. */
static char *dump_text(struct bcs *h, uint32_t job, unsigned int flags,
		       int *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	*err = bcs_job_dump(h, job, f, flags);
	fclose(f);
	return text;
}

static void test_dump(struct bcs *h)
{
	static const char task1[] =
		"{\"pid\":1000,\"tgid\":1000,\"gone\":false,\"tracking\":true,"
		"\"totals\":{\"start_ns\":5,\"tracked_ns\":1000,\"run_ns\":400,"
		"\"blocked_ns\":300,\"suspended_ns\":200,\"wait_ns\":100,"
		"\"bursts\":5,\"preemptions\":1,\"suspensions\":2,"
		"\"state\":\"blocked\"},\"metrics\":{"
		"\"burst\":{\"sub_bits\":2,\"count\":5,\"sum\":75,\"min\":10,"
		"\"max\":23,\"saturated\":false,"
		"\"buckets\":[[10,11,3],[20,23,2]]},"
		"\"blocked\":{\"sub_bits\":2,\"count\":1,\"sum\":50,\"min\":50,"
		"\"max\":50,\"saturated\":false,\"buckets\":[[48,55,1]]}}}";
	static const char task2[] =
		"{\"pid\":1500,\"tgid\":null,\"gone\":true,\"tracking\":false,"
		"\"totals\":{\"start_ns\":5,\"tracked_ns\":1000,\"run_ns\":400,"
		"\"blocked_ns\":300,\"suspended_ns\":200,\"wait_ns\":100,"
		"\"bursts\":5,\"preemptions\":1,\"suspensions\":2,"
		"\"state\":\"wait\"},\"metrics\":{"
		"\"wait\":{\"sub_bits\":0,\"count\":18446744073709551615,"
		"\"sum\":18446744073709551615,\"min\":2,\"max\":3,"
		"\"saturated\":true,\"buckets\":[[2,3,18446744073709551615]]}}}";
	struct ring_spec rs = {
		.nr = 4, .record_size = sizeof(struct bcs_slice_record),
		.head = 6, .magic = BCS_STAT_MAGIC,
	};
	char host[256], want[512], path[64], *text, *p;
	struct bcs_slice_record r;
	int err;

	fake_reset();
	fake.nr_tasks = 2;
	CHECK_EQ(bcs_job_create(h, 1, 3, NULL), 0);
	CHECK_EQ(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';

	/* No statistics: -ENOENT and nothing written. */
	text = dump_text(h, 1, BCS_DUMP_NO_SLICES, &err);
	CHECK_EQ(err, -ENOENT);
	CHECK(text && !*text);
	free(text);
	fake.dist_job = 1;
	text = dump_text(h, 1, 1U << 5, &err);
	CHECK_EQ(err, -EINVAL);
	free(text);
	CHECK_EQ(bcs_job_dump(h, 0, stdout, 0), -EINVAL);
	CHECK_EQ(bcs_job_dump(NULL, 1, stdout, 0), -EBADF);

	text = dump_text(h, 1, BCS_DUMP_NO_SLICES, &err);
	CHECK_EQ(err, 0);
	snprintf(want, sizeof(want), "{\"format\":\"bcs-job-dump\","
		 "\"version\":1,\"bcs_version\":\"%s\",\"node\":\"%s\","
		 "\"job\":1,\"row\":3,\"time_ns\":", BCS_PACKAGE_VERSION, host);
	CHECK(text && !strncmp(text, want, strlen(want)));
	p = text ? strstr(text, ",\n\"tasks\":[\n") : NULL;
	CHECK(p != NULL);
	if (p) {
		p += strlen(",\n\"tasks\":[\n");
		CHECK(!strncmp(p, task1, strlen(task1)));
		p += strlen(task1);
		CHECK(!strncmp(p, ",\n", 2));
		CHECK(!strncmp(p + 2, task2, strlen(task2)));
		CHECK_EQ(strcmp(p + 2 + strlen(task2), "\n]}\n"), 0);
	}
	free(text);

	/* With the slice records of the ring: 2 .. 5. */
	write_ring(&rs, NULL);
	text = dump_text(h, 1, 0, &err);
	CHECK_EQ(err, 0);
	p = text ? strstr(text, "\n],\n\"slices\":[\n{\"seq\":2,\"slice\":1002,"
			  "\"row\":2,\"flags\":\"---------\",") : NULL;
	CHECK(p != NULL);
	CHECK(text && strstr(text, "\"resumed_ns\":0}\n]}\n") &&
	      strstr(text, "{\"seq\":5,"));
	free(text);

	/* A slice record on its own, as bcsstat slices --json prints it. */
	memset(&r, 0, sizeof(r));
	r.seq = 1;
	r.row = BCS_ROW_NONE;
	r.flags = BCS_SLICE_LATE | BCS_SLICE_EXPIRED;
	r.parked_ns = 7;
	{
		char *t = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&t, &len);

		CHECK_EQ(bcs_slice_json(f, &r), 0);
		fclose(f);
		CHECK(t && !strcmp(t, "{\"seq\":1,\"slice\":0,\"row\":null,"
			"\"flags\":\"L-------E\",\"strobe_ns\":0,"
			"\"deadline_ns\":0,\"switch_start_ns\":0,"
			"\"switch_end_ns\":0,\"interval_ns\":0,\"switch_ns\":0,"
			"\"suspended\":0,\"resumed\":0,\"running\":0,"
			"\"blocked\":0,\"late\":0,\"missed\":0,\"late_total\":0,"
			"\"missed_total\":0,\"parked_ns\":7,\"resumed_ns\":0}"));
		free(t);
	}

	/* Into a file, atomically: no temporary file is left. */
	strcpy(path, "/tmp/bcs-test-dump-XXXXXX");
	CHECK(mkdtemp(path) != NULL);
	strcat(path, "/1-n.json");
	CHECK_EQ(bcs_job_dump_file(h, 1, path, 0), 0);
	{
		struct stat sb;

		CHECK_EQ(stat(path, &sb), 0);
		CHECK_EQ(sb.st_mode & 0777, 0644);
		CHECK(sb.st_size > (off_t)(sizeof(task1) + sizeof(task2)));
	}
	CHECK_EQ(bcs_job_dump_file(h, 2, path, 0), -ENOENT);
	CHECK_EQ(bcs_job_dump_file(h, 1, "/nonexistent/dir/x.json", 0),
		 -ENOENT);
	unlink(path);
	*strrchr(path, '/') = '\0';
	CHECK_EQ(rmdir(path), 0);	/* empty: no temporary file left */
	unlink(ring_path);
	setenv(BCS_ENV_STAT_DEVICE, "/nonexistent/bcsstat", 1);
	text = dump_text(h, 1, 0, &err);
	CHECK_EQ(err, -ENOENT);
	free(text);
	fake.loaded = 0;
}

static void test_dump_names(void)
{
	uint32_t fl;
	char buf[BCS_SLICE_FLAGS_LEN];

	CHECK(!strcmp(bcs_slice_flags_str(buf, BCS_SLICE_DRIVEN |
					  BCS_SLICE_PREDICTED), "--D----P-"));
	CHECK_EQ(bcs_slice_flags_parse("--D----P-", &fl), 0);
	CHECK_EQ(fl, BCS_SLICE_DRIVEN | BCS_SLICE_PREDICTED);
	CHECK_EQ(bcs_slice_flags_parse("LX", &fl), -EINVAL);
}

/* A BCS_CMD_JOB_ENDED as bcs.ko builds it; @seq 0 leaves it out. */
static struct nl_msg *job_ended_msg(int family, uint8_t cmd, uint64_t seq)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, 0, 0, family, 0, 0, cmd, BCS_GENL_VERSION) ||
	    nla_put_u32(msg, BCS_A_JOB, 0x5a000001) < 0 ||
	    nla_put_u32(msg, BCS_A_JOB_END, BCS_JOB_END_EXITED) < 0 ||
	    nla_put_u32(msg, BCS_A_DIST_TASKS, 3) < 0 ||
	    (seq && nla_put_u64(msg, BCS_A_EVENT_SEQ, seq) < 0)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void test_events(void)
{
	struct bcs_events *ev = (struct bcs_events *)1;
	struct bcs_job_ended e;
	struct nl_msg *msg;
	int err;

	CHECK_EQ(-EINVAL, bcs_events_open(NULL));
	CHECK_EQ(-EBADF, bcs_events_fd(NULL));
	CHECK_EQ(-EBADF, bcs_events_read(NULL, &e, 1));
	bcs_events_close(NULL);
	/* No bcs.ko on the host: no family "bcs". */
	err = bcs_events_open(&ev);
	CHECK(err == -ENOENT || err == 0);
	if (!err)
		bcs_events_close(ev);
	else
		CHECK(ev == NULL);

	msg = job_ended_msg(42, BCS_CMD_JOB_ENDED, 7);
	CHECK(msg != NULL);
	if (msg) {
		memset(&e, 0xff, sizeof(e));
		CHECK_EQ(1, bcs__job_end_parse(nlmsg_hdr(msg), 42, &e));
		CHECK_EQ(0x5a000001, e.job);
		CHECK_EQ(BCS_JOB_END_EXITED, e.reason);
		CHECK_EQ(3, e.dist_tasks);
		CHECK_EQ(7, e.seq);
		CHECK_EQ(0, e.lost);
		CHECK_EQ(0, e.reserved);
		/* Another family's message, or another command: not ours. */
		CHECK_EQ(0, bcs__job_end_parse(nlmsg_hdr(msg), 43, &e));
		nlmsg_free(msg);
	}
	msg = job_ended_msg(42, BCS_CMD_GET_STATE, 7);
	if (msg) {
		CHECK_EQ(0, bcs__job_end_parse(nlmsg_hdr(msg), 42, &e));
		nlmsg_free(msg);
	}
	/* Without its number it is no notification bcs.ko sends. */
	msg = job_ended_msg(42, BCS_CMD_JOB_ENDED, 0);
	if (msg) {
		CHECK_EQ(-EPROTO, bcs__job_end_parse(nlmsg_hdr(msg), 42, &e));
		nlmsg_free(msg);
	}
	CHECK(!strcmp(bcs_job_end_name(BCS_JOB_END_DESTROYED), "destroyed"));
	CHECK(!strcmp(bcs_job_end_name(BCS_JOB_END_EXITED), "exited"));
	CHECK(!strcmp(bcs_job_end_name(BCS_JOB_END_DETACHED), "detached"));
	CHECK(!strcmp(bcs_job_end_name(0), "?"));
}

/*
 * bcs_ctl_call() against the other end of a socketpair standing in for
 * bcsd, the answer @answer (NULL: none) queued before the call: what it
 * returns; the request must arrive as sent.
 */
static int ctl_call(const char *answer, struct json_object **resp,
		    char *msg, size_t len)
{
	struct json_object *req = json_object_new_object();
	char buf[64];
	int sv[2], err;
	ssize_t n;

	json_object_object_add(req, "cmd", json_object_new_string("status"));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		failed++;
		json_object_put(req);
		return 1;
	}
	if (answer)
		CHECK(send(sv[1], answer, strlen(answer), 0) ==
		      (ssize_t)strlen(answer));
	err = bcs_ctl_call(sv[0], req, resp, 20, msg, len);
	n = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
	CHECK(n == 16 && !memcmp(buf, "{\"cmd\":\"status\"}", 16));
	close(sv[0]);
	close(sv[1]);
	return err;
}

static void test_ctl(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct json_object *resp;
	char msg[64], dir[] = "/tmp/test_libbcs.XXXXXX";
	int fd, lfd;

	CHECK(ctl_call("{\"ok\":true,\"row\":3,\"epoch\":7}", &resp, msg,
		       sizeof(msg)) == 0);
	CHECK(resp && bcs_ctl_row(resp) == 3);
	CHECK(bcs_ctl_int(resp, "epoch", 0) == 7);
	CHECK(bcs_ctl_int(resp, "nodes", -2) == -2);
	json_object_put(resp);
	CHECK(ctl_call("{\"ok\":true,\"row\":null}", &resp, msg,
		       sizeof(msg)) == 0);
	CHECK(resp && bcs_ctl_row(resp) == BCS_ROW_NONE);
	json_object_put(resp);
	CHECK(ctl_call("{\"ok\":true}", &resp, msg, sizeof(msg)) == 0);
	CHECK(resp && bcs_ctl_row(resp) == BCS_ROW_NONE);
	json_object_put(resp);

	/* Refused: bcsd's error and message. */
	CHECK(ctl_call("{\"ok\":false,\"error\":-1,\"message\":\"not root\"}",
		       &resp, msg, sizeof(msg)) == -EPERM);
	CHECK(!resp && !strcmp(msg, "not root"));
	CHECK(ctl_call("{\"ok\":false}", &resp, msg, sizeof(msg)) == -EPROTO);
	CHECK(!resp && !strcmp(msg, "bcsd refused the request"));
	CHECK(ctl_call("not json", &resp, msg, sizeof(msg)) == -EPROTO);
	CHECK(!resp);
	CHECK(ctl_call(NULL, &resp, msg, sizeof(msg)) == -ETIMEDOUT);
	CHECK(!resp && !strcmp(msg, "no answer from bcsd"));

	/* Connecting: never with an empty path, else to what listens. */
	CHECK(setenv(BCSD_ENV_SOCKET, "", 1) == 0);
	CHECK(bcs_ctl_connect() == -ENOENT);
	CHECK(mkdtemp(dir) != NULL);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/ctl", dir);
	CHECK(setenv(BCSD_ENV_SOCKET, sun.sun_path, 1) == 0);
	CHECK(bcs_ctl_connect() < 0);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	CHECK(lfd >= 0 && !bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) &&
	      !listen(lfd, 1));
	fd = bcs_ctl_connect();
	CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC));
	if (fd >= 0)
		close(fd);
	close(lfd);
	unlink(sun.sun_path);
	rmdir(dir);
	unsetenv(BCSD_ENV_SOCKET);
}

int main(void)
{
	struct bcs *h = NULL;

	test_layout();
	test_hist();
	test_shared_rules();
	test_open();
	test_strerror();
	test_metric_names();
	test_dump_names();

	setenv(BCS_ENV_DEVICE, "/dev/null", 1);
	if (bcs_open(&h) == 0) {
		test_jobs(h);
		test_control(h);
		test_dump(h);
		test_window(h);
		bcs_close(h);
	} else {
		failed++;
		fprintf(stderr, "FAIL: cannot open /dev/null\n");
	}
	test_stat_ring();
	test_stat_read();
	test_stat_ioctls();
	test_netlink();
	test_events();
	test_ctl();

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

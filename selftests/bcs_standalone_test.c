// SPDX-License-Identifier: GPL-2.0
/*
 * STANDALONE mode: the module's own timer alternates two CPU-bound gangs;
 * both make progress, /dev/bcsstat records the switches, and read() and
 * mmap() of /dev/bcsstat agree.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

#define SLICE_NS	10000000ULL	/* 10 ms */
#define RUN_MS		2000
#define MAX_RECS	4096

FIXTURE(standalone) {
	int fd;
	int sfd;
	struct bcs_config saved;
	struct bt_burner a, b;
	void *map;
	size_t map_len;
	struct bcs_slice_record *recs;
};

FIXTURE_SETUP(standalone)
{
	self->fd = -1;
	self->sfd = -1;
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, bt_config(self->fd, 0, 0, 0, 0, &self->saved));
	self->sfd = open(BCS_STAT_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->sfd);
	self->recs = calloc(MAX_RECS, sizeof(*self->recs));
	ASSERT_NE(NULL, self->recs);
}

FIXTURE_TEARDOWN(standalone)
{
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
		bt_config(self->fd, BCS_CONFIG_SLICE | BCS_CONFIG_WATCHDOG, 0,
			  self->saved.slice_ns, self->saved.watchdog_slices,
			  NULL);
	}
	bt_burner_stop(&self->a);
	bt_burner_stop(&self->b);
	if (self->map)
		munmap(self->map, self->map_len);
	if (self->sfd >= 0)
		close(self->sfd);
	if (self->fd >= 0)
		close(self->fd);
	free(self->recs);
}

static const struct bcs_stat_header *map_stat(FIXTURE_DATA(standalone) *self)
{
	struct bcs_stat_header h;
	void *m;

	m = mmap(NULL, sizeof(h), PROT_READ, MAP_SHARED, self->sfd, 0);
	if (m == MAP_FAILED)
		return NULL;
	memcpy(&h, m, sizeof(h));
	munmap(m, sizeof(h));
	self->map_len = h.records_offset +
			(size_t)h.nr_records * h.record_size;
	m = mmap(NULL, self->map_len, PROT_READ, MAP_SHARED, self->sfd, 0);
	if (m == MAP_FAILED)
		return NULL;
	self->map = m;
	return m;
}

/* Read every record newer than @from with read(); returns the count. */
static int read_records(FIXTURE_DATA(standalone) *self, uint64_t from)
{
	struct bcs_slice_record buf[64];
	int n = 0, iter;
	ssize_t r;
	size_t i;

	/* The ring holds at most stat_records; bound the loop by that. */
	for (iter = 0; iter < 100000; iter++) {
		r = read(self->sfd, buf, sizeof(buf));
		if (r <= 0)
			break;
		if (r % sizeof(buf[0]))
			return -EPROTO;
		for (i = 0; i < r / sizeof(buf[0]); i++) {
			if (buf[i].seq < from || n >= MAX_RECS)
				continue;
			self->recs[n++] = buf[i];
		}
	}
	return n;
}

TEST(stat_header)
{
	const struct bcs_stat_header *h;
	struct bcs_state st;
	void *m;
	int sfd, fd;

	fd = bt_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bt_get_state(fd, &st));
	close(fd);
	sfd = bt_open_stat();
	ASSERT_LE(0, sfd);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	h = m;
	EXPECT_EQ(BCS_STAT_MAGIC, h->magic);
	EXPECT_EQ(BCS_STAT_VERSION, h->version);
	EXPECT_EQ(sizeof(*h), h->header_size);
	EXPECT_EQ(sizeof(struct bcs_slice_record), h->record_size);
	EXPECT_EQ(st.stat_records, h->nr_records);
	EXPECT_LE(sizeof(*h), h->records_offset);
	EXPECT_EQ(0, h->records_offset % 8);
	munmap(m, 4096);
	/* The ring is read-only, even for root. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED, sfd, 0));
	close(sfd);
}

TEST_F_TIMEOUT(standalone, two_gangs_alternate, 90)
{
	const struct bcs_stat_header *h;
	struct bcs_task_stat *ts = NULL;
	struct bcs_job_info ja, jb;
	long long a0, b0, a1, b1, da, db;
	uint64_t head0;
	struct pollfd pfd;
	int n, i, rows_seen[2] = { 0, 0 }, pairs = 0, matched = 0;
	int tasks_ok[2] = { 0, 0 };

	h = map_stat(self);
	ASSERT_NE(NULL, h);
	head0 = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);

	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_A, 0, &self->a, 2));
	ASSERT_EQ(0, bt_gang_start(self->fd, BT_JOB_B, 1, &self->b, 2));

	/* Drain older records so that poll() waits for a new one. */
	ASSERT_LE(0, read_records(self, UINT64_MAX));
	a0 = bt_proc_ticks(self->a.pid);
	b0 = bt_proc_ticks(self->b.pid);
	ASSERT_EQ(0, bt_config(self->fd, BCS_CONFIG_MODE | BCS_CONFIG_SLICE,
			       BCS_MODE_STANDALONE, SLICE_NS, 0, NULL));
	/* poll() reports new records. */
	pfd.fd = self->sfd;
	pfd.events = POLLIN;
	EXPECT_EQ(1, poll(&pfd, 1, BT_WAIT_MS));
	EXPECT_TRUE(pfd.revents & POLLIN);
	bt_sleep_ms(RUN_MS);
	ASSERT_EQ(0, bt_set_mode(self->fd, BCS_MODE_OFF));
	a1 = bt_proc_ticks(self->a.pid);
	b1 = bt_proc_ticks(self->b.pid);

	/* Both gangs got a fair part of the CPU. */
	da = a1 - a0;
	db = b1 - b0;
	TH_LOG("CPU ticks: gang A %lld, gang B %lld", da, db);
	EXPECT_LT(0, da + db);
	EXPECT_LE(da + db, 5 * da) TH_LOG("gang A starved");
	EXPECT_LE(da + db, 5 * db) TH_LOG("gang B starved");

	/* Records: consecutive, increasing slices, alternating rows. */
	n = read_records(self, head0);
	ASSERT_LE(10, n) TH_LOG("only %d records", n);
	for (i = 0; i < n; i++) {
		const struct bcs_slice_record *r = &self->recs[i];

		if (!(r->flags & BCS_SLICE_STANDALONE))
			continue;
		EXPECT_GT(2, r->row) TH_LOG("record %llu: row %u",
					    (unsigned long long)r->seq, r->row);
		if (r->row < 2)
			rows_seen[r->row]++;
		EXPECT_LE(r->switch_start_ns, r->switch_end_ns);
		if (i == 0)
			continue;
		EXPECT_LT(self->recs[i - 1].seq, r->seq);
		EXPECT_LT(self->recs[i - 1].slice, r->slice);
		if (r->seq == self->recs[i - 1].seq + 1 &&
		    (self->recs[i - 1].flags & BCS_SLICE_STANDALONE)) {
			pairs++;
			EXPECT_NE(self->recs[i - 1].row, r->row)
				TH_LOG("seq %llu repeats row %u",
				       (unsigned long long)r->seq, r->row);
		}
	}
	EXPECT_LT(0, rows_seen[0]);
	EXPECT_LT(0, rows_seen[1]);
	EXPECT_LT(0, pairs);

	/*
	 * read() and mmap() agree on every record still in the ring but the
	 * newest, which may still get its settle times.
	 */
	for (i = 0; i < n; i++) {
		const struct bcs_slice_record *ring = (const void *)
			((const char *)h + h->records_offset);
		const struct bcs_slice_record *m =
			&ring[self->recs[i].seq % h->nr_records];
		struct bcs_slice_record copy;
		uint64_t s1, s2;

		s1 = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);
		memcpy(&copy, m, sizeof(copy));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);
		if (s1 != self->recs[i].seq || s2 != s1 ||
		    s1 + 1 >= __atomic_load_n(&h->head, __ATOMIC_ACQUIRE))
			continue;
		EXPECT_EQ(0, memcmp(&copy, &self->recs[i], sizeof(copy)))
			TH_LOG("record %llu differs",
			       (unsigned long long)s1);
		matched++;
	}
	EXPECT_LT(0, matched);
	EXPECT_LE(self->recs[n - 1].seq + 1,
		  __atomic_load_n(&h->head, __ATOMIC_ACQUIRE));

	/* Per-job and per-task accounting saw both gangs run and wait. */
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ja));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_B, &jb));
	EXPECT_LT(0, ja.slices_run);
	EXPECT_LT(0, jb.slices_run);
	EXPECT_LT(0, ja.suspended_ns);
	EXPECT_LT(0, jb.suspended_ns);
	EXPECT_LT(0, ja.run_ns);
	EXPECT_LT(0, jb.run_ns);
	n = bt_task_stats(self->fd, 0, &ts);
	ASSERT_EQ(4, n);
	for (i = 0; i < n; i++) {
		int k = ts[i].job == BT_JOB_A ? 0 : 1;

		EXPECT_LT(0, ts[i].slices_run) TH_LOG("task %d", ts[i].pid);
		EXPECT_LT(0, ts[i].suspended_ns) TH_LOG("task %d", ts[i].pid);
		EXPECT_LT(0, ts[i].parks) TH_LOG("task %d", ts[i].pid);
		if (ts[i].slices_run && ts[i].suspended_ns)
			tasks_ok[k]++;
	}
	free(ts);
	EXPECT_EQ(2, tasks_ok[0]);
	EXPECT_EQ(2, tasks_ok[1]);
}

TEST_F(standalone, read_rejects_small_buffer)
{
	char small[sizeof(struct bcs_slice_record)];

	EXPECT_EQ(-1, read(self->sfd, small, sizeof(small) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->sfd, small, 1));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(standalone, nonblocking_read_of_drained_ring)
{
	struct bcs_slice_record r;
	int i;
	ssize_t n = 1;

	/* Drain whatever older tests left; then nothing new arrives. */
	for (i = 0; i < 200000 && n > 0; i++)
		n = read(self->sfd, &r, sizeof(r));
	EXPECT_EQ(-1, n);
	EXPECT_EQ(EAGAIN, errno);
}

BT_HARNESS_MAIN

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: counting the calls of this process per global slice.  The
 * slice is that of the newest record of bcs.ko's ring (/dev/bcsstat, the
 * protocol of <linux/bcs.h>): looked up only when the ring's head moved,
 * by the one thread that takes the lock; the others count into the entry
 * of the slice as it was, at most a call or two late.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slice.h"

#define STAT_DEV	"/dev/bcsstat"
/* Records of a ring at most, against a corrupt header. */
#define STAT_RECORDS_MAX	(1U << 24)

const struct bcs_stat_header *bcsmpi_stat;
static size_t stat_len;
static const unsigned char *stat_recs;
static uint32_t stat_nr, stat_size;

static struct bcs_mpi_slices *tbl;
static struct bcs_mpi_slice *ring;
static struct bcs_mpi_call *calls;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen_head;		/* the head last looked at */
static uint64_t cur_slice = UINT64_MAX;	/* its newest record's slice */
static struct bcs_mpi_slice *cur;	/* its entry, NULL: not counted */
static int capture;			/* calls written too */
/* BCS_MPI_PRIM_P2P or BCS_MPI_PRIM_COLL of each record, or 0. */
static unsigned char cls[BCSMPI_NR_PRIMS];

/* $@name: 0 .. @max, or @def if unset or bad (said). */
static unsigned int env_count(const char *name, unsigned int def,
			      unsigned int max)
{
	const char *v = getenv(name);
	unsigned long n;
	char *end;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || *v == '-' || n > max) {
		fprintf(stderr, "libbcsmpi: %s is not 0 .. %u; its default "
			"%u taken\n", name, max, def);
		return def;
	}
	return (unsigned int)n;
}

size_t bcsmpi_slices_bytes(unsigned int *nr_slices, unsigned int *nr_calls)
{
	*nr_slices = env_count("BCS_MPI_SLICES", BCSMPI_SLICES_DEFAULT,
			       BCSMPI_SLICES_MAX);
	*nr_calls = env_count("BCS_MPI_CALLS", BCSMPI_CALLS_DEFAULT,
			      BCSMPI_CALLS_MAX);
	if (!*nr_slices) {
		*nr_calls = 0;
		return 0;
	}
	return sizeof(struct bcs_mpi_slices) +
	       (size_t)*nr_slices * sizeof(struct bcs_mpi_slice) +
	       (size_t)*nr_calls * sizeof(struct bcs_mpi_call);
}

/* Map the ring at @fd: 0 or a negative errno. */
static int stat_map(int fd, int test)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	struct bcs_stat_header h;
	struct stat sb;
	void *p;

	if (fstat(fd, &sb))
		return -errno;
	if (test ? !S_ISREG(sb.st_mode) ||
		   sb.st_size < (off_t)sizeof(h) ||
		   sb.st_size > (off_t)BCSMPI_STATDEV_MAX :
		   !S_ISCHR(sb.st_mode))
		return -ENODEV;
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	memcpy(&h, p, sizeof(h));
	munmap(p, page);
	if (h.magic != BCS_STAT_MAGIC || h.version != BCS_STAT_VERSION ||
	    h.header_size < sizeof(h) || h.nr_records == 0 ||
	    h.nr_records > STAT_RECORDS_MAX ||
	    h.record_size < sizeof(struct bcs_slice_record) ||
	    h.record_size % 8 || h.records_offset % 8 ||
	    h.records_offset < h.header_size)
		return -EPROTO;
	len = h.records_offset + (size_t)h.nr_records * h.record_size;
	if (test && (uint64_t)sb.st_size < len)
		return -EPROTO;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	stat_len = len;
	stat_recs = (const unsigned char *)p + h.records_offset;
	stat_nr = h.nr_records;
	stat_size = h.record_size;
	/* Published last: the wrappers look at it. */
	__atomic_store_n(&bcsmpi_stat, p, __ATOMIC_RELEASE);
	return 0;
}

void bcsmpi_slices_start(struct bcs_mpi_slices *t, unsigned int nr_slices,
			 unsigned int nr_calls)
{
	const char *path = getenv("BCS_MPI_STATDEV");
	int test = path && *path, fd, r;
	unsigned int i;

	t->nr_slices = nr_slices;
	t->slice_size = sizeof(struct bcs_mpi_slice);
	t->nr_calls = nr_calls;
	t->call_size = sizeof(struct bcs_mpi_call);
	tbl = t;
	ring = (void *)(t + 1);
	calls = (void *)(ring + nr_slices);
	for (i = 0; i < BCSMPI_NR_PRIMS; i++)
		cls[i] = bcsmpi_prim_info[i].flags &
			 (BCS_MPI_PRIM_P2P | BCS_MPI_PRIM_COLL);
	if (!test)
		path = STAT_DEV;
	/* Never through a link, never waiting, never a write. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	r = fd < 0 ? -errno : stat_map(fd, test);
	if (fd >= 0)
		close(fd);
	if (r) {
		t->flags = BCS_MPI_SLICES_NODEV;
		/* Not running under bcs is no news; anything else is. */
		if (test || r != -ENOENT)
			fprintf(stderr, "libbcsmpi: %s: %s; no per-slice "
				"counts\n", path, strerror(-r));
		return;
	}
	t->flags = BCS_MPI_SLICES_ON | (test ? BCS_MPI_SLICES_TEST : 0);
}

void bcsmpi_slices_stop(int child)
{
	const struct bcs_stat_header *h = bcsmpi_stat;

	__atomic_store_n(&bcsmpi_stat, NULL, __ATOMIC_RELAXED);
	cur = NULL;
	if (child) {		/* the parent's file: not ours to touch */
		tbl = NULL;
		return;
	}
	if (h)
		munmap((void *)h, stat_len);
	tbl = NULL;
}

/* The slice of the record of sequence @seq, or UINT64_MAX if unsure. */
static uint64_t record_slice(uint64_t seq)
{
	const struct bcs_slice_record *r =
		(const void *)(stat_recs + (size_t)(seq % stat_nr) * stat_size);
	uint64_t slice;

	if (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != seq)
		return UINT64_MAX;	/* rewritten this instant, or lapped */
	slice = __atomic_load_n(&r->slice, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&r->seq, __ATOMIC_RELAXED) != seq)
		return UINT64_MAX;
	return slice;
}

/* The head moved to @head: the entry of the newest slice. */
static void slice_changed(uint64_t head)
{
	const struct bcs_stat_header *h = bcsmpi_stat;
	struct bcs_mpi_slice *e;
	uint64_t slice, from, to, k;
	uint32_t state;
	int in;

	if (pthread_mutex_trylock(&lock))
		return;		/* another thread does it */
	if (!tbl || head == seen_head || !head)
		goto out;
	slice = record_slice(head - 1);
	if (slice == UINT64_MAX)
		goto out;	/* the head stays unseen: the next call */
	__atomic_store_n(&seen_head, head, __ATOMIC_RELAXED);
	if (slice == cur_slice)
		goto out;
	cur_slice = slice;
	state = __atomic_load_n(&h->window_state, __ATOMIC_RELAXED);
	from = __atomic_load_n(&h->window_from, __ATOMIC_RELAXED);
	to = __atomic_load_n(&h->window_to, __ATOMIC_RELAXED);
	in = state != BCS_WINDOW_NONE && from <= slice && slice <= to;
	if (state != BCS_WINDOW_NONE) {
		tbl->window_from = from;
		tbl->window_to = to;
		__atomic_or_fetch(&tbl->flags, BCS_MPI_SLICES_WINDOW,
				  __ATOMIC_RELAXED);
	}
	__atomic_store_n(&capture, in && tbl->nr_calls, __ATOMIC_RELAXED);
	if (state != BCS_WINDOW_NONE && !in) {
		__atomic_store_n(&cur, NULL, __ATOMIC_RELEASE);
		goto out;
	}
	k = tbl->slice_head;
	e = &ring[k % tbl->nr_slices];
	memset(&e->p2p_calls, 0, sizeof(*e) - sizeof(e->slice));
	__atomic_store_n(&e->slice, slice, __ATOMIC_RELEASE);
	__atomic_store_n(&tbl->slice_head, k + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&cur, e, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&lock);
}

static void add(__u64 *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

void bcsmpi_slice_call(enum bcsmpi_prim prim, uint64_t t0, uint64_t t,
		       uint64_t bytes)
{
	const struct bcs_stat_header *h = bcsmpi_stat;
	unsigned int c = cls[prim];
	struct bcs_mpi_slice *e;
	struct bcs_mpi_call *ev;
	uint64_t head, k;

	if (!c || !h)
		return;
	head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	if (head != __atomic_load_n(&seen_head, __ATOMIC_RELAXED))
		slice_changed(head);
	e = __atomic_load_n(&cur, __ATOMIC_ACQUIRE);
	if (!e)
		return;
	if (c & BCS_MPI_PRIM_P2P) {
		add(&e->p2p_calls, 1);
		add(&e->p2p_ns, t - t0);
		add(&e->p2p_bytes, bytes);
	} else {
		add(&e->coll_calls, 1);
		add(&e->coll_ns, t - t0);
		add(&e->coll_bytes, bytes);
	}
	/* 0 until the first call: the earliest start kept. */
	k = __atomic_load_n(&e->first_ns, __ATOMIC_RELAXED);
	if (!k || t0 < k)
		__atomic_store_n(&e->first_ns, t0, __ATOMIC_RELAXED);
	if (t > __atomic_load_n(&e->last_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&e->last_ns, t, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&capture, __ATOMIC_RELAXED))
		return;
	k = __atomic_fetch_add(&tbl->call_head, 1, __ATOMIC_RELAXED);
	ev = &calls[k % tbl->nr_calls];
	ev->start_ns = t0;
	ev->duration_ns = t - t0;
	ev->bytes = bytes;
	ev->prim = prim;
	__atomic_store_n(&ev->slice, e->slice, __ATOMIC_RELEASE);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: /dev/bcsstat, the per-slice record ring.
 *
 * The ring is written by the module at every gang switch and read here
 * either through read(2) (each open file has its own cursor) or through a
 * read-only mapping that lets any number of readers look at the last
 * records without disturbing the writer.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Bytes per read() when the module's records are larger than ours. */
#define BCS_STAT_BOUNCE_BYTES	(256 * 1024)

int bcs_stat_open(struct bcs_stat **out)
{
	const char *path;
	struct bcs_stat *st;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	path = bcs__device_path(BCS_ENV_STAT_DEVICE, BCS_STAT_DEVICE_PATH);
	st->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (st->fd < 0) {
		err = -errno;
		free(st);
		return err;
	}
	*out = st;
	return 0;
}

void bcs_stat_close(struct bcs_stat *st)
{
	if (!st)
		return;
	if (st->map)
		munmap(st->map, st->map_len);
	free(st->bounce);
	close(st->fd);
	free(st);
}

int bcs_stat_fd(const struct bcs_stat *st)
{
	return st ? st->fd : -EBADF;
}

/* Is @h a header this library can index records with? */
static int header_ok(const struct bcs_stat_header *h, size_t *len)
{
	uint64_t total;

	if (h->version != BCS_STAT_VERSION)
		return 0;
	/* Newer modules may append fields; we only read our prefix. */
	if (h->header_size < sizeof(*h) ||
	    h->record_size < sizeof(struct bcs_slice_record) ||
	    h->record_size % 8 || h->records_offset % 8 ||
	    h->records_offset < h->header_size || h->nr_records == 0)
		return 0;
	total = (uint64_t)h->records_offset +
		(uint64_t)h->nr_records * h->record_size;
	if (total > SIZE_MAX / 2)
		return 0;
	*len = (size_t)total;
	return 1;
}

/*
 * Read the header through a one-page mapping and check it: 0, -ENOMSG if
 * there is no bcsstat header (a stand-in that cannot be mapped, or whose
 * first bytes are not the magic), -EPROTO if it is not one this library
 * understands, or another -errno.
 */
static int read_header(struct bcs_stat *st, struct bcs_stat_header *h,
		       size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat sb;
	void *p;

	/* A regular file (a stand-in) shorter than a header has none. */
	if (fstat(st->fd, &sb))
		return -errno;
	if (S_ISREG(sb.st_mode) && sb.st_size < (off_t)sizeof(*h))
		return -ENOMSG;
	if (page <= 0 || (size_t)page < sizeof(*h))
		page = 4096;
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, st->fd, 0);
	if (p == MAP_FAILED)
		return errno == ENODEV ? -ENOMSG : -errno;
	memcpy(h, p, sizeof(*h));
	munmap(p, (size_t)page);
	if (h->magic != BCS_STAT_MAGIC)
		return -ENOMSG;
	/* Touching a mapping beyond the end of a regular file faults. */
	if (!header_ok(h, len) ||
	    (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size < *len))
		return -EPROTO;
	st->record_size = h->record_size;
	return 0;
}

int bcs_stat_map(struct bcs_stat *st)
{
	struct bcs_stat_header h;
	size_t len;
	void *p;
	int err;

	if (!st)
		return -EBADF;
	if (st->map)
		return 0;
	/* Learn the sizes from the header, then map the whole ring. */
	err = read_header(st, &h, &len);
	if (err)
		return err == -ENOMSG ? -EPROTO : err;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, st->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	st->map = p;
	st->map_len = len;
	st->hdr = p;
	st->ring = (const unsigned char *)p + h.records_offset;
	st->nr_records = h.nr_records;
	return 0;
}

static uint64_t load_head(const struct bcs_stat *st)
{
	return __atomic_load_n(&st->hdr->head, __ATOMIC_ACQUIRE);
}

int bcs_stat_header(struct bcs_stat *st, struct bcs_stat_header *hdr)
{
	if (!st)
		return -EBADF;
	if (!hdr)
		return -EINVAL;
	if (!st->map)
		return -ENODATA;
	memcpy(hdr, st->hdr, sizeof(*hdr));
	hdr->head = load_head(st);
	return 0;
}

int bcs_stat_head(struct bcs_stat *st, uint64_t *head)
{
	if (!st)
		return -EBADF;
	if (!head)
		return -EINVAL;
	if (!st->map)
		return -ENODATA;
	*head = load_head(st);
	return 0;
}

static int set_nonblock(struct bcs_stat *st, int nonblock)
{
	int fl;

	nonblock = !!nonblock;
	if (st->nonblock == nonblock)
		return 0;
	fl = fcntl(st->fd, F_GETFL);
	if (fl < 0)
		return -errno;
	fl = nonblock ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	if (fcntl(st->fd, F_SETFL, fl) < 0)
		return -errno;
	st->nonblock = nonblock;
	return 0;
}

/* read(2) restarted on EINTR (a bounded number of times); bytes or -errno. */
static ssize_t read_restart(int fd, void *buf, size_t len)
{
	ssize_t ret;
	int i;

	for (i = 0; i < 100; i++) {
		ret = read(fd, buf, len);
		if (ret >= 0 || errno != EINTR)
			break;
	}
	return ret < 0 ? -errno : ret;
}

int bcs_stat_read(struct bcs_stat *st, struct bcs_slice_record *buf,
		  size_t max, size_t *n, int nonblock)
{
	const size_t rs = sizeof(*buf);
	unsigned char *src;
	size_t mrs, i;
	ssize_t ret;
	int err;

	if (!st)
		return -EBADF;
	if (!buf || !n || max == 0)
		return -EINVAL;
	*n = 0;
	/*
	 * read() hands out whole records of the module's size, which a newer
	 * module may have made larger than ours (fields appended): learn it
	 * once from the header.  A stand-in with no header at all (a stream
	 * of records, as tests use) has records of our size.
	 */
	if (!st->record_size) {
		struct bcs_stat_header h;
		size_t len;

		err = read_header(st, &h, &len);
		if (err == -ENOMSG)
			st->record_size = sizeof(*buf);
		else if (err)
			return err;
	}
	mrs = st->record_size;
	err = set_nonblock(st, nonblock);
	if (err)
		return err;
	if (mrs == rs) {
		if (max > SSIZE_MAX / rs)
			max = SSIZE_MAX / rs;
		ret = read_restart(st->fd, buf, max * rs);
		if (ret < 0)
			return (int)ret;
		/* The module hands out whole records only. */
		if ((size_t)ret % rs)
			return -EPROTO;
		*n = (size_t)ret / rs;
		return 0;
	}
	/* Larger records: through a buffer, keeping the prefix we know. */
	if (max > BCS_STAT_BOUNCE_BYTES / mrs)
		max = BCS_STAT_BOUNCE_BYTES / mrs ? BCS_STAT_BOUNCE_BYTES / mrs : 1;
	if (st->bounce_len < max * mrs) {
		void *b = realloc(st->bounce, max * mrs);

		if (!b)
			return -ENOMEM;
		st->bounce = b;
		st->bounce_len = max * mrs;
	}
	ret = read_restart(st->fd, st->bounce, max * mrs);
	if (ret < 0)
		return (int)ret;
	if ((size_t)ret % mrs)
		return -EPROTO;
	src = st->bounce;
	for (i = 0; i < (size_t)ret / mrs; i++)
		memcpy(&buf[i], src + i * mrs, rs);
	*n = i;
	return 0;
}

/*
 * Copy one record under the seq protocol of <linux/bcs.h>: seq must read
 * @s before and after the copy.  Returns 1 if @out holds record @s.
 */
static int copy_record(const struct bcs_stat *st, uint64_t s,
		       struct bcs_slice_record *out, uint64_t *seen)
{
	const struct bcs_slice_record *rec = (const void *)
		(st->ring + (size_t)(s % st->nr_records) * st->record_size);
	uint64_t seq;

	seq = __atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE);
	*seen = seq;
	if (seq != s)
		return 0;
	memcpy(out, rec, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	seq = __atomic_load_n(&rec->seq, __ATOMIC_RELAXED);
	*seen = seq;
	if (seq != s)
		return 0;
	/*
	 * A writer that advanced head past this slot's lap may be rewriting
	 * it; such a copy cannot be trusted even if seq still matched.
	 */
	if (s + st->nr_records < load_head(st))
		return 0;
	out->seq = s;
	return 1;
}

int bcs_stat_snapshot(struct bcs_stat *st, uint64_t from_seq,
		      struct bcs_slice_record *buf, size_t max, size_t *n,
		      uint64_t *next_seq)
{
	uint64_t head, s, seen, nr, budget;
	size_t count = 0;

	if (!st)
		return -EBADF;
	if (!n || (!buf && max))
		return -EINVAL;
	*n = 0;
	if (!st->map)
		return -ENODATA;
	nr = st->nr_records;
	head = load_head(st);
	s = from_seq;
	if (head > nr && s < head - nr)
		s = head - nr;
	/* Bounded even against a writer running circles around us. */
	budget = 4 * nr + max;
	while (count < max && s < head && budget--) {
		uint64_t h2;

		if (copy_record(st, s, &buf[count], &seen)) {
			count++;
			s++;
			continue;
		}
		h2 = load_head(st);
		if (h2 > nr && s < h2 - nr) {
			/* Lapped: everything before the new oldest is gone. */
			s = h2 - nr;
		} else if (seen == UINT64_MAX) {
			/*
			 * Being written: the oldest slot, recycled for a new
			 * record, is skipped; any other record is the newest,
			 * getting its settle times, and is read again.
			 */
			if (h2 >= nr && s == h2 - nr)
				s++;
		} else if (seen > s && (seen - s) % nr == 0) {
			/* Already replaced by a later lap. */
			s++;
		} else {
			/* Still being written: stop, the caller comes back. */
			break;
		}
		if (h2 > head)
			head = h2;
	}
	*n = count;
	if (next_seq)
		*next_seq = s;
	return 0;
}

int bcs_stat_get_state(struct bcs_stat *st, struct bcs_state *state)
{
	if (!st)
		return -EBADF;
	return bcs__get_state(st->fd, state);
}

int bcs_stat_job_list(struct bcs_stat *st, struct bcs_job_info **out,
		      size_t *n)
{
	if (!st)
		return -EBADF;
	return bcs__job_list(st->fd, out, n);
}

int bcs_stat_task_stats(struct bcs_stat *st, uint32_t job,
			struct bcs_task_stat **out, size_t *n)
{
	if (!st)
		return -EBADF;
	return bcs__task_stats(st->fd, job, out, n);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: the reader of statistics files.  The file is copied whole
 * before it is checked, so that a process still writing it changes
 * nothing under the checks; a copy is as consistent as the counters of a
 * running process can be (each one current, not all of one instant).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpifile.h"

/* Not a regular file (a FIFO, a device): read_all()'s own error. */
#define EFTYPE_BCS	(-EBADFD)

/* Read all of @fd (@size bytes by fstat) into a new buffer. */
static int read_all(int fd, void **out, size_t *size)
{
	struct stat sb;
	size_t got = 0;
	ssize_t n;
	char *buf;

	if (fstat(fd, &sb))
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return EFTYPE_BCS;
	if (sb.st_size < (off_t)sizeof(struct bcs_mpi_file_header))
		return -EINVAL;
	buf = malloc((size_t)sb.st_size);
	if (!buf)
		return -ENOMEM;
	/* Each round reads something or ends: bounded by the size. */
	while (got < (size_t)sb.st_size) {
		n = read(fd, buf + got, (size_t)sb.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EINVAL;
		}
		got += (size_t)n;
	}
	*out = buf;
	*size = got;
	return 0;
}

static int hist_ok(const struct bcs_mpi_stats *st, uint64_t off)
{
	const struct bcs_hist_header *h;

	if (!off)
		return 1;
	if (off % 8 || off > st->size ||
	    st->size - off < sizeof(struct bcs_hist_header))
		return 0;
	/* Its own resolution: another after a change while it ran. */
	h = (const void *)((const char *)st->data + off);
	return h->magic == BCS_HIST_MAGIC && h->version == BCS_HIST_VERSION &&
	       h->sub_bits <= BCS_HIST_SUB_BITS_MAX &&
	       st->size - off >= bcs_mpi_hist_bytes(h->sub_bits) &&
	       h->nr_buckets == bcs_hist_buckets(h->sub_bits);
}

/* Whether @n items of @size bytes at @off lie inside @st (0 for none). */
static int table_ok(const struct bcs_mpi_stats *st, uint64_t off, uint64_t n,
		    uint64_t size)
{
	if (!off)
		return !n;
	return off % 8 == 0 && off <= st->size &&
	       n * size <= st->size - off;
}

/* The regions and call sites of @st checked, their strings terminated. */
static const char *check_tables(struct bcs_mpi_stats *st)
{
	struct bcs_mpi_file_header *h = st->data;
	struct bcs_mpi_region *r;
	struct bcs_mpi_site *s;
	uint32_t i;

	if (h->nr_regions > BCS_MPI_MAX_REGIONS ||
	    h->nr_sites > BCS_MPI_MAX_SITES ||
	    (h->region_off && h->region_size != sizeof(*r)) ||
	    (h->site_off && h->site_size != sizeof(*s)) ||
	    !table_ok(st, h->region_off, h->nr_regions,
		      sizeof(*r) + (uint64_t)h->nr_prims *
		      sizeof(struct bcs_mpi_rprim)) ||
	    !table_ok(st, h->site_off, h->nr_sites, sizeof(*s)))
		return "corrupt (regions or call sites)";
	if (h->region_off) {
		r = (void *)((char *)st->data + h->region_off);
		for (i = 0; i < h->nr_regions; i++)
			r[i].name[sizeof(r[i].name) - 1] = 0;
		st->regions = r;
		st->rprims = (void *)(r + h->nr_regions);
	}
	if (h->site_off) {
		s = (void *)((char *)st->data + h->site_off);
		for (i = 0; i < h->nr_sites; i++) {
			s[i].module[sizeof(s[i].module) - 1] = 0;
			if (s[i].prim >= h->nr_prims)
				s[i].calls = 0;	/* not a site */
		}
		st->sites = s;
	}
	return NULL;
}

/* The slices of @st checked (version 4; none in 3): 0 or -EINVAL. */
static int check_slices(struct bcs_mpi_stats *st)
{
	struct bcs_mpi_file_header *h = st->data;
	struct bcs_mpi_slices *s;
	uint64_t need;

	if (h->version < 4 || !h->slices_off)
		return 0;
	if (h->flags & BCS_MPI_SUMMARY ||
	    !table_ok(st, h->slices_off, 1, sizeof(*s)))
		return -EINVAL;
	s = (void *)((char *)st->data + h->slices_off);
	need = (uint64_t)s->nr_slices * sizeof(struct bcs_mpi_slice) +
	       (uint64_t)s->nr_calls * sizeof(struct bcs_mpi_call);
	if (s->nr_slices > BCS_MPI_MAX_SLICES ||
	    s->nr_calls > BCS_MPI_MAX_CALLS ||
	    s->slice_size != sizeof(struct bcs_mpi_slice) ||
	    s->call_size != sizeof(struct bcs_mpi_call) ||
	    need > st->size - h->slices_off - sizeof(*s))
		return -EINVAL;
	st->slices = s;
	st->slice = (void *)(s + 1);
	st->calls = (void *)(st->slice + s->nr_slices);
	return 0;
}

/* What is wrong with @st, or NULL. */
static const char *check(struct bcs_mpi_stats *st)
{
	struct bcs_mpi_file_header *h = st->data;
	struct bcs_mpi_prim *p;
	uint32_t i;

	if (h->magic != BCS_MPI_MAGIC)
		return h->magic ? "not a libbcsmpi statistics file" : NULL;
	if (h->version < BCS_MPI_VERSION_MIN || h->version > BCS_MPI_VERSION)
		return "of another version of the format";
	if (h->header_size != sizeof(*h) ||
	    h->prim_size != sizeof(struct bcs_mpi_prim) ||
	    h->nr_prims > BCS_MPI_MAX_PRIMS || h->nr_prims < 2 ||
	    h->sub_bits > BCS_HIST_SUB_BITS_MAX || h->prim_off % 8 ||
	    h->file_size > st->size || h->prim_off > h->file_size ||
	    (h->file_size - h->prim_off) / sizeof(*p) < h->nr_prims)
		return "corrupt (header)";
	/* A file growing: what lies past its size is not written yet. */
	st->size = h->file_size;
	h->job[sizeof(h->job) - 1] = 0;
	h->host[sizeof(h->host) - 1] = 0;
	h->mpi[sizeof(h->mpi) - 1] = 0;
	st->hdr = h;
	p = (void *)((char *)st->data + h->prim_off);
	for (i = 0; i < h->nr_prims; i++) {
		p[i].name[sizeof(p[i].name) - 1] = 0;
		if (!hist_ok(st, p[i].lat_hist_off) ||
		    !hist_ok(st, p[i].size_hist_off))
			return "corrupt (a histogram)";
	}
	if (!(h->flags & BCS_MPI_SUMMARY) &&
	    (!p[BCS_MPI_PRIM_COMP].lat_hist_off ||
	     !p[BCS_MPI_PRIM_COMM].lat_hist_off))
		return "corrupt (no process distributions)";
	if (check_tables(st))
		return "corrupt (regions or call sites)";
	if (check_slices(st))
		return "corrupt (slices)";
	st->prims = p;
	return NULL;
}

int bcs_mpi_stats_read(const char *path, struct bcs_mpi_stats *st, char *err,
		       size_t errlen)
{
	size_t size = 0;
	void *data = NULL;
	int fd, r;

	memset(st, 0, sizeof(*st));
	/* A FIFO opens without waiting for a writer, and is refused. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	r = read_all(fd, &data, &size);
	close(fd);
	if (r == EFTYPE_BCS) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (r) {
		snprintf(err, errlen, "%s: %s", path, r == -EINVAL ?
			 "too short for a libbcsmpi statistics file" :
			 strerror(-r));
		return r;
	}
	return bcs_mpi_stats_parse(data, size, path, st, err, errlen);
}

/* @len bytes at @off of @fd, all of them: 0, or -EINVAL (shorter). */
static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, (char *)buf + got, len - got,
			  (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EINVAL;
		got += (size_t)n;
	}
	return 0;
}

int bcs_mpi_stats_summary_fd(int fd, const char *name, void **out,
			     size_t *len, char *err, size_t errlen)
{
	struct bcs_mpi_file_header h;
	struct bcs_mpi_stats st;
	struct stat sb;
	size_t size;
	char *buf;
	int r, known;

	if (fstat(fd, &sb)) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", name, strerror(-r));
		return r;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", name);
		return -EINVAL;
	}
	r = pread_all(fd, &h, sizeof(h), 0);
	if (r) {
		snprintf(err, errlen, "%s: %s", name, r == -EINVAL ?
			 "too short for a libbcsmpi statistics file" :
			 strerror(-r));
		return r;
	}
	/*
	 * Only the header and the records are read, whatever size the file
	 * claims (a sparse file of any size costs nothing): checked here
	 * as far as they are needed to be read, and whole by the parser.
	 */
	known = h.magic == BCS_MPI_MAGIC &&
		h.version >= BCS_MPI_VERSION_MIN &&
		h.version <= BCS_MPI_VERSION;
	if (known &&
	    (h.header_size != sizeof(h) ||
	     h.prim_size != sizeof(struct bcs_mpi_prim) ||
	     h.nr_prims > BCS_MPI_MAX_PRIMS || h.nr_prims < 2 ||
	     h.prim_off < sizeof(h) || h.prim_off % 8 ||
	     h.file_size > (uint64_t)sb.st_size ||
	     h.prim_off > h.file_size ||
	     (h.file_size - h.prim_off) / sizeof(struct bcs_mpi_prim) <
	     h.nr_prims)) {
		snprintf(err, errlen, "%s: corrupt (header)", name);
		return -EINVAL;
	}
	size = sizeof(h);
	if (known)
		size += (size_t)h.nr_prims * sizeof(struct bcs_mpi_prim);
	buf = malloc(size);
	if (!buf) {
		snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(buf, &h, sizeof(h));
	if (size > sizeof(h)) {
		struct bcs_mpi_file_header *nh = (void *)buf;
		struct bcs_mpi_prim *p = (void *)(nh + 1);
		uint32_t i;

		r = pread_all(fd, p, size - sizeof(h), h.prim_off);
		if (r) {
			free(buf);
			snprintf(err, errlen, "%s: %s", name, r == -EINVAL ?
				 "shorter than its header says" :
				 strerror(-r));
			return r;
		}
		for (i = 0; i < h.nr_prims; i++) {
			p[i].lat_hist_off = 0;
			p[i].size_hist_off = 0;
		}
		nh->flags |= BCS_MPI_SUMMARY;
		nh->prim_off = sizeof(h);
		nh->file_size = size;
		nh->region_off = nh->site_off = 0;
		nh->nr_regions = nh->nr_sites = 0;
		nh->slices_off = 0;
	}
	r = bcs_mpi_stats_parse(buf, size, name, &st, err, errlen);
	if (r)
		return r;
	r = bcs_mpi_stats_summary(&st, out, len);
	bcs_mpi_stats_free(&st);
	if (r)
		snprintf(err, errlen, "%s: %s", name, strerror(-r));
	return r;
}

int bcs_mpi_stats_parse(void *data, size_t size, const char *name,
			struct bcs_mpi_stats *st, char *err, size_t errlen)
{
	const char *what;
	int r = 0;

	memset(st, 0, sizeof(*st));
	if (size < sizeof(struct bcs_mpi_file_header)) {
		free(data);
		snprintf(err, errlen, "%s: too short for a libbcsmpi "
			 "statistics file", name);
		return -EINVAL;
	}
	st->data = data;
	st->size = size;
	what = check(st);
	if (!what && !st->prims) {
		snprintf(err, errlen, "%s: not written yet (its process is "
			 "in MPI_Init, or died there)", name);
		r = -EAGAIN;
	} else if (what) {
		snprintf(err, errlen, "%s: %s", name, what);
		r = -EINVAL;
	}
	if (r)
		bcs_mpi_stats_free(st);
	return r;
}

void bcs_mpi_stats_free(struct bcs_mpi_stats *st)
{
	free(st->data);
	memset(st, 0, sizeof(*st));
}

uint64_t bcs_mpi_prim_time(const struct bcs_mpi_prim *p)
{
	double t;

	if (!p->timed || p->timed >= p->calls)
		return p->total_ns;
	t = (double)p->total_ns * (double)p->calls / (double)p->timed;
	/* 2^64: a corrupt file's counts, not a time. */
	return t >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)t;
}

int bcs_mpi_stats_hist(const struct bcs_mpi_stats *st, uint64_t off,
		       struct bcs_hist_header **out)
{
	const struct bcs_hist_header *h =
		(const void *)((const char *)st->data + off);
	const struct bcs_hist_bucket *b = (const void *)(h + 1);
	struct bcs_hist_bucket *o;
	struct bcs_hist_header *n;
	uint32_t i, k = 0;

	for (i = 0; i < h->nr_buckets; i++)
		k += b[i].count != 0;
	n = malloc(sizeof(*n) + (size_t)k * sizeof(*o));
	if (!n)
		return -ENOMEM;
	*n = *h;
	o = (void *)(n + 1);
	for (i = 0, k = 0; i < h->nr_buckets; i++)
		if (b[i].count)
			o[k++] = b[i];
	n->nr_buckets = k;
	if (!n->count) {
		n->min = 0;
		n->max = 0;
	}
	*out = n;
	return 0;
}

int bcs_mpi_stats_summary(const struct bcs_mpi_stats *st, void **out,
			  size_t *len)
{
	const struct bcs_mpi_file_header *h = st->hdr;
	struct bcs_mpi_file_header *nh;
	struct bcs_mpi_prim *np;
	uint32_t i, k = 0;
	size_t size;

	for (i = 0; i < h->nr_prims; i++)
		k += i <= BCS_MPI_PRIM_COMM || st->prims[i].calls;
	size = sizeof(*nh) + (size_t)k * sizeof(*np);
	nh = calloc(1, size);
	if (!nh)
		return -ENOMEM;
	*nh = *h;
	nh->flags |= BCS_MPI_SUMMARY;
	nh->region_off = nh->site_off = 0;
	nh->nr_regions = nh->nr_sites = 0;
	nh->slices_off = 0;
	nh->nr_prims = k;
	nh->prim_off = sizeof(*nh);
	nh->file_size = size;
	np = (void *)(nh + 1);
	for (i = 0, k = 0; i < h->nr_prims; i++) {
		if (i > BCS_MPI_PRIM_COMM && !st->prims[i].calls)
			continue;
		np[k] = st->prims[i];
		np[k].lat_hist_off = 0;
		np[k].size_hist_off = 0;
		k++;
	}
	*out = nh;
	*len = size;
	return 0;
}

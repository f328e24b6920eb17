// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: creating the statistics file of this process.  The file is
 * allocated in full (posix_fallocate) before it is mapped, so that a full
 * disk is an error here and never a SIGBUS in the middle of an MPI call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bcs_hist.h>

#include "control.h"
#include "statfile.h"

/* The histograms of every record the reserve of a growable file holds. */
#define GROW_LAYOUTS	8

static void init_hist(void *at, unsigned int sub_bits)
{
	struct bcs_hist_header *h = at;
	struct bcs_hist_bucket *b = (void *)(h + 1);
	uint32_t i, n = bcs_hist_buckets(sub_bits);

	h->version = BCS_HIST_VERSION;
	h->sub_bits = (uint8_t)sub_bits;
	h->nr_buckets = n;
	h->min = UINT64_MAX;		/* until the first value */
	for (i = 0; i < n; i++)
		b[i].index = i;
	h->magic = BCS_HIST_MAGIC;
}

static void set_name(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

/* The size of the file for @sel in *@size; with @hdr, lay it out there. */
static void lay_out(struct bcs_mpi_file_header *hdr,
		    const struct bcsmpi_select *sel, size_t *size)
{
	struct bcs_mpi_prim *p = hdr ? (void *)(hdr + 1) : NULL;
	size_t off = sizeof(*hdr) + BCSMPI_NR_PRIMS * sizeof(struct bcs_mpi_prim);
	size_t hb = bcs_mpi_hist_bytes(sel->sub_bits);
	unsigned int i;

	/* The regions (always), their rows, the call sites (if asked). */
	if (hdr) {
		hdr->region_off = off;
		hdr->nr_regions = BCSMPI_MAX_REGIONS;
		hdr->region_size = sizeof(struct bcs_mpi_region);
	}
	off += BCSMPI_MAX_REGIONS * (sizeof(struct bcs_mpi_region) +
		BCSMPI_NR_PRIMS * sizeof(struct bcs_mpi_rprim));
	if (sel->sites) {
		if (hdr) {
			hdr->site_off = off;
			hdr->nr_sites = BCSMPI_MAX_SITES;
			hdr->site_size = sizeof(struct bcs_mpi_site);
		}
		off += BCSMPI_MAX_SITES * sizeof(struct bcs_mpi_site);
	}
	/* The slices (unless BCS_MPI_SLICES=0), laid out when started. */
	if (sel->slices_bytes) {
		if (hdr)
			hdr->slices_off = (uint32_t)off;
		off += (sel->slices_bytes + 7) / 8 * 8;
	}

	for (i = 0; i < BCSMPI_NR_PRIMS; i++) {
		if (hdr) {
			set_name(p[i].name, sizeof(p[i].name),
				 bcsmpi_prim_info[i].name);
			p[i].flags = bcsmpi_prim_info[i].flags;
			p[i].sample = p[i].flags & BCS_MPI_PRIM_POLL ?
				      sel->poll_sample : 1;
		}
		if (!sel->dist[i])
			continue;
		if (hdr) {
			p[i].lat_hist_off = off;
			init_hist((char *)hdr + off, sel->sub_bits);
		}
		off += hb;
		if (!(bcsmpi_prim_info[i].flags & BCS_MPI_PRIM_SIZED))
			continue;
		if (hdr) {
			p[i].size_hist_off = off;
			init_hist((char *)hdr + off, sel->sub_bits);
		}
		off += hb;
	}
	*size = off;
}

/* Keep the address space @f may grow into; its mapping moves there. */
static int growable(struct bcsmpi_statfile *f, char *err, size_t errlen)
{
	struct bcsmpi_select all;
	size_t size, page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned int i;
	void *base, *map;
	int r;

	memset(&all, 0, sizeof(all));
	all.sub_bits = BCS_HIST_SUB_BITS_MAX;
	for (i = 0; i < BCSMPI_NR_PRIMS; i++)
		all.dist[i] = 1;
	lay_out(NULL, &all, &size);
	/*
	 * The file's pages, then those it may grow into: every record's
	 * histograms at the finest resolution, GROW_LAYOUTS times (each
	 * change of resolution starts them again).  Address space only.
	 */
	size = (f->size + GROW_LAYOUTS * size + page - 1) / page * page;
	base = mmap(NULL, size, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	map = mmap(base, f->size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_FIXED, f->fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		munmap(base, size);
		goto fail;
	}
	munmap(f->hdr, f->size);
	f->hdr = map;
	f->prims = (void *)(f->hdr + 1);
	f->reserved = size;
	return 0;
fail:
	snprintf(err, errlen, "cannot map %s to grow: %s", f->path,
		 strerror(-r));
	return r;
}

int bcsmpi_statfile_create(struct bcsmpi_statfile *f,
			   const struct bcsmpi_select *sel,
			   const struct bcsmpi_where *w, int grow, char *err,
			   size_t errlen)
{
	struct bcs_mpi_file_header *hdr;
	char host[64] = "";
	const char *what;
	size_t size;
	void *map;
	int fd, r;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	gethostname(host, sizeof(host) - 1);
	r = snprintf(f->path, sizeof(f->path), "%s/%s.%s.%d.%d.bcsmpi",
		     w->dir, *w->job ? w->job : "nojob", host, w->rank,
		     (int)getpid());
	if (r < 0 || (size_t)r >= sizeof(f->path)) {
		snprintf(err, errlen, "the file name in %s is too long",
			 w->dir);
		return -ENAMETOOLONG;
	}
	r = bcsmpi_make_dirs(w->dir);
	if (r) {
		snprintf(err, errlen, "cannot create %s: %s", w->dir,
			 strerror(-r));
		return r;
	}
	lay_out(NULL, sel, &size);
	what = "cannot create";
	fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	what = "cannot allocate";
	r = posix_fallocate(fd, 0, (off_t)size);
	if (r) {
		errno = r;
		goto fail_unlink;
	}
	what = "cannot map";
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto fail_unlink;
	/* Kept until it is known whether the file must grow. */
	f->fd = fd;
	hdr = map;
	lay_out(hdr, sel, &size);
	hdr->version = BCS_MPI_VERSION;
	hdr->header_size = sizeof(*hdr);
	hdr->nr_prims = BCSMPI_NR_PRIMS;
	hdr->prim_size = sizeof(struct bcs_mpi_prim);
	hdr->sub_bits = sel->sub_bits;
	hdr->prim_off = sizeof(*hdr);
	hdr->file_size = size;
	hdr->rank = w->rank;
	hdr->world_size = w->world_size;
	hdr->pid = (int32_t)getpid();
	set_name(hdr->job, sizeof(hdr->job), w->job);
	set_name(hdr->host, sizeof(hdr->host), host);
	set_name(hdr->mpi, sizeof(hdr->mpi), w->mpi);
	__atomic_store_n(&hdr->magic, BCS_MPI_MAGIC, __ATOMIC_RELEASE);
	f->hdr = hdr;
	f->prims = (void *)(hdr + 1);
	f->size = size;
	if (!grow) {
		close(fd);
		f->fd = -1;
		return 0;
	}
	r = growable(f, err, errlen);
	if (r) {
		munmap(map, size);
		unlink(f->path);
		close(fd);
		f->hdr = NULL;
		f->prims = NULL;
		f->fd = -1;
	}
	return r;

fail_unlink:
	r = -errno;
	unlink(f->path);
	close(fd);
	errno = -r;
fail:
	r = -errno;
	snprintf(err, errlen, "%s %s: %s", what, f->path, strerror(-r));
	return r;
}

int bcsmpi_statfile_add_hists(struct bcsmpi_statfile *f, unsigned int prim,
			      unsigned int sub_bits, char *err, size_t errlen)
{
	struct bcs_mpi_prim *p = &f->prims[prim];
	size_t hb = bcs_mpi_hist_bytes(sub_bits);
	int sized = !!(p->flags & BCS_MPI_PRIM_SIZED);
	size_t old = f->size, size = old + hb * (sized ? 2 : 1);
	size_t page = (size_t)sysconf(_SC_PAGESIZE), start = old / page * page;
	void *map;
	int r;

	if (!f->reserved || size > f->reserved) {
		snprintf(err, errlen, "%s cannot grow any more", f->path);
		return -ENOSPC;
	}
	r = posix_fallocate(f->fd, (off_t)old, (off_t)(size - old));
	if (r) {
		snprintf(err, errlen, "cannot allocate %s: %s", f->path,
			 strerror(r));
		return -r;
	}
	/* The last page again (the same pages of the file) and the new. */
	map = mmap((char *)f->hdr + start, size - start,
		   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f->fd,
		   (off_t)start);
	if (map == MAP_FAILED) {
		r = -errno;
		snprintf(err, errlen, "cannot map %s: %s", f->path,
			 strerror(-r));
		return r;
	}
	init_hist((char *)f->hdr + old, sub_bits);
	if (sized)
		init_hist((char *)f->hdr + old + hb, sub_bits);
	f->size = size;
	__atomic_store_n(&f->hdr->file_size, size, __ATOMIC_RELEASE);
	if (sized)
		__atomic_store_n(&p->size_hist_off, old + hb, __ATOMIC_RELEASE);
	__atomic_store_n(&p->lat_hist_off, old, __ATOMIC_RELEASE);
	return 0;
}

void bcsmpi_statfile_close(struct bcsmpi_statfile *f)
{
	if (f->hdr)
		munmap(f->hdr, f->reserved ? f->reserved : f->size);
	if (f->fd >= 0)
		close(f->fd);
	f->hdr = NULL;
	f->prims = NULL;
	f->fd = -1;
	f->reserved = 0;
}

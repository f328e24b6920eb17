/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcsmpi: reading the statistics file of an MPI process
 * (<linux/bcs_mpi.h>), whether its process still runs, ended in
 * MPI_Finalize or was killed.  Needs no MPI; bcsstat mpi uses it.
 */
#ifndef BCSMPI_MPIFILE_H
#define BCSMPI_MPIFILE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bcs_hist.h>
#include <linux/bcs_mpi.h>

/* Records in a file at most, against a corrupt count. */
#define BCS_MPI_MAX_PRIMS	4096
/* Regions and call sites in a file at most, likewise. */
#define BCS_MPI_MAX_REGIONS	64
#define BCS_MPI_MAX_SITES	4096
/* Entries of the rings of slices and of calls at most (version 4). */
#define BCS_MPI_MAX_SLICES	(1U << 20)
#define BCS_MPI_MAX_CALLS	(1U << 22)

struct bcs_mpi_stats {
	void *data;				/* a copy of the file */
	size_t size;
	const struct bcs_mpi_file_header *hdr;	/* at @data */
	const struct bcs_mpi_prim *prims;	/* hdr->nr_prims of them */
	const struct bcs_mpi_region *regions;	/* hdr->nr_regions, or NULL */
	const struct bcs_mpi_rprim *rprims;	/* [region][record] */
	const struct bcs_mpi_site *sites;	/* hdr->nr_sites, or NULL */
	/* Version 4: the per-slice counts and calls, or all NULL. */
	const struct bcs_mpi_slices *slices;
	const struct bcs_mpi_slice *slice;	/* slices->nr_slices */
	const struct bcs_mpi_call *calls;	/* slices->nr_calls */
};

/*
 * Read the file at @path into @st, checked: its magic, version and sizes,
 * every record's histograms inside the file and in the format of
 * <linux/bcs_hist.h> at the file's resolution, the strings terminated.
 * Returns 0, or a negative errno with a message naming @path in the
 * @errlen bytes at @err: -EIO and the like (unreadable), -EINVAL (not
 * such a file, or of another version), -EAGAIN (still being created),
 * -ENOMEM.  Free with bcs_mpi_stats_free().
 */
int bcs_mpi_stats_read(const char *path, struct bcs_mpi_stats *st, char *err,
		       size_t errlen);

/*
 * As bcs_mpi_stats_read(), of the @size bytes at @data (malloc'd; taken:
 * freed on error, else by bcs_mpi_stats_free()), called @name in the
 * messages.
 */
int bcs_mpi_stats_parse(void *data, size_t size, const char *name,
			struct bcs_mpi_stats *st, char *err, size_t errlen);

void bcs_mpi_stats_free(struct bcs_mpi_stats *st);

/*
 * The summary (bcs_mpi_stats_summary()) of the statistics file open at
 * @fd, called @name in messages, read with pread(): its header and its
 * records only, never more than BCS_MPI_MAX_PRIMS records whatever size
 * the file has (bcsd reads files of users with it).  Returns 0 with
 * *@out (to be freed) of *@len bytes, or a negative errno with a message
 * in @err: -EINVAL (not a regular file, not such a file), -EAGAIN (still
 * being created), -ENOMEM, or the error of the read.
 */
int bcs_mpi_stats_summary_fd(int fd, const char *name, void **out,
			     size_t *len, char *err, size_t errlen);

/*
 * The time spent in the calls of record @p: its @total_ns, or for a
 * polled primitive of which not every call was timed, the average of the
 * timed calls times @calls.
 */
uint64_t bcs_mpi_prim_time(const struct bcs_mpi_prim *p);

/*
 * A summary of @st, to be sent elsewhere (bcsd's gather for bcsstat mpi
 * --job): a file of the same format with BCS_MPI_SUMMARY set, its header,
 * the two process records and the records of the primitives called, in
 * their order, none with a histogram.  Returns 0 with *@out (to be
 * freed) of *@len bytes, or -ENOMEM.
 */
int bcs_mpi_stats_summary(const struct bcs_mpi_stats *st, void **out,
			  size_t *len);

/*
 * The histogram at offset @off of @st (a record's @lat_hist_off or
 * @size_hist_off, not 0) as a new one in the exported format of
 * <linux/bcs_hist.h>: its empty buckets left out, @min 0 while @count is
 * 0.  Returns 0 with *@out to be freed, or -ENOMEM.
 */
int bcs_mpi_stats_hist(const struct bcs_mpi_stats *st, uint64_t off,
		       struct bcs_hist_header **out);

#endif /* BCSMPI_MPIFILE_H */

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcsmpi: the statistics file of this process, a file-backed shared
 * mapping in the format of <linux/bcs_mpi.h>.
 */
#ifndef BCSMPI_STATFILE_H
#define BCSMPI_STATFILE_H

#include <limits.h>
#include <stddef.h>

#include <linux/bcs_mpi.h>

#include "select.h"

struct bcsmpi_statfile {
	struct bcs_mpi_file_header *hdr;	/* the mapping */
	struct bcs_mpi_prim *prims;		/* its records */
	size_t size;
	size_t reserved;	/* address space kept for growing, or 0 */
	int fd;			/* open while it may grow, or -1 */
	char path[PATH_MAX];
};

/* Where the file of a process is: its directory, job, host and MPI rank. */
struct bcsmpi_where {
	const char *dir;	/* created if missing */
	const char *job;	/* "" for none */
	const char *mpi;	/* "openmpi", "mpich" */
	int rank;
	int world_size;
};

/*
 * Create DIR/JOB.HOST.RANK.PID.bcsmpi (JOB "nojob" if empty) laid out for
 * @sel, map it shared into @f and fill in everything but @init_ns, the
 * magic written last.  Returns 0, or a negative errno with a message in
 * @err (directory or file not creatable, disk full, mmap failing,
 * -ENAMETOOLONG); nothing is left behind then.  With @grow, the file
 * can grow later (bcsmpi_statfile_add_hists()): the address space its
 * histograms of every record would take is kept after its mapping, and
 * the file open, so that it is extended in place and the mapping never
 * moves under other threads.
 */
int bcsmpi_statfile_create(struct bcsmpi_statfile *f,
			   const struct bcsmpi_select *sel,
			   const struct bcsmpi_where *w, int grow, char *err,
			   size_t errlen);

/*
 * Give record @prim new histograms (latency, and size if it is sized) of
 * resolution @sub_bits at the end of the growable file @f, empty, and
 * publish their offsets last; histograms it had stay in the file,
 * unused.  Returns 0 or a negative errno with a message in @err
 * (-ENOSPC: no room left in the reserve; the disk full).
 */
int bcsmpi_statfile_add_hists(struct bcsmpi_statfile *f, unsigned int prim,
			      unsigned int sub_bits, char *err,
			      size_t errlen);

/* Unmap @f; the file stays. */
void bcsmpi_statfile_close(struct bcsmpi_statfile *f);

#endif /* BCSMPI_STATFILE_H */

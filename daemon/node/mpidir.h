/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MPI profiling directory of this node (mpi_dir) as bcsd keeps it: a
 * directory per job, made for the job's user, with the job's control
 * file in it (root's, written by bcsd only), and the statistics files the
 * job's processes write there, read back for gathers.  Everything is
 * opened without following a symbolic link and without blocking, checked
 * for type and owner with fstat, and read within bounds: the users whose
 * files these are may have put anything there.  Pure: no state of bcsd's,
 * so that the unit tests (tests/test_mpidir.c) call it as bcsd does.
 * Documentation/mpi.rst, "Permissions".
 */
#ifndef BCSD_MPIDIR_H
#define BCSD_MPIDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Entries of a job's directory looked at for one gather, at most. */
#define MPIDIR_SCAN_MAX		4096

/* A summary of one statistics file, to send. */
struct mpidir_summary {
	void *data;
	size_t len;
	bool whole;		/* the whole file (mpidir_read()), histograms too */
};

/*
 * Make @dir/JOB for job @job, owned by @uid:@gid and mode 0700, with the
 * job's control file in it (root's, mode 0644: a copy of @dir/JOB.control
 * if bcsd set that before, else never set), unless it is there already;
 * @dir (mode 0755) too.  One made for bcsd's own user (root: the job's
 * first task was root's then) is given to @uid; one of another user (an
 * earlier job of the same id) is renamed away to ".stale.JOB.N" first.  Returns 0, or a negative errno with a message in
 * @err.
 */
int mpidir_prepare(const char *dir, uint32_t job, uid_t uid, gid_t gid,
		   char *err, size_t errlen);

/* The owner of @dir/JOB into *@uid: 0, or a negative errno (-ENOENT). */
int mpidir_owner(const char *dir, uint32_t job, uid_t *uid);

/*
 * Set job @job's control file as bcs_mpi_control_set() does: in @dir/JOB
 * (replaced by a new one of root's if it is missing or not root's) and
 * in @dir/JOB.control if there is one (processes of root's that started
 * without the job's directory) or there is no @dir/JOB yet (made then,
 * and copied into @dir/JOB when it is made), never waiting for a lock.
 * 0, or a negative errno with a message in @err.
 */
int mpidir_control_set(const char *dir, uint32_t job, int off,
		       const char *stats, int sub_bits, char *err,
		       size_t errlen);

/*
 * Remove job @job's control files (the job is gone); its statistics
 * files stay for bcsstat.  0, -ENOENT (there was none), or a negative
 * errno.
 */
int mpidir_control_remove(const char *dir, uint32_t job);

/*
 * The summaries of job @job's statistics files, into @out (@max at
 * most), sorted by name: those of @dir/JOB owned by its owner, and the
 * files "JOB.*.bcsmpi" of @dir itself owned by bcsd's user (root).  A
 * file that is not a regular file, belongs to another user, cannot be
 * read or summarised (in MPI_Init still), or whose summary is over
 * @file_max bytes, is left out and counted in *@skipped; at most
 * MPIDIR_SCAN_MAX entries of each directory are looked at.  Returns
 * their number, or a negative errno.
 */
int mpidir_summaries(const char *dir, uint32_t job,
		     struct mpidir_summary *out, unsigned int max,
		     size_t file_max, unsigned int *skipped);

/*
 * As mpidir_summaries(), but a file of at most *@budget bytes (its size
 * by fstat) is read whole instead (@whole set; its histograms are in it,
 * and bcs_mpi_stats_parse() checks it all), its size taken from
 * *@budget: what a gather reads is bounded by the budget, not by what
 * the users wrote.  A file over what is left of the budget is
 * summarised.  @budget NULL: summaries only.
 */
int mpidir_read(const char *dir, uint32_t job, struct mpidir_summary *out,
		unsigned int max, size_t file_max, size_t *budget,
		unsigned int *skipped);

/* A rank of a job's on this node: its rank and its process. */
struct mpidir_rank {
	uint32_t rank;		/* in MPI_COMM_WORLD */
	int32_t pid;
};

/*
 * The ranks of job @job whose statistics files are here, as their
 * headers say (rank, pid), into @out (@max at most): the files
 * mpidir_summaries() would read, opened alike (no link followed, no
 * blocking, of the owner expected), of which only the header is read;
 * one without its magic yet (in MPI_Init), or with a negative rank or a
 * pid not above 0, is left out.  A pid is only what a user wrote: the
 * caller names it to bcs.ko, which takes only tasks of the job.  Returns
 * their number, or a negative errno.
 */
int mpidir_ranks(const char *dir, uint32_t job, struct mpidir_rank *out,
		 unsigned int max);

#endif /* BCSD_MPIDIR_H */

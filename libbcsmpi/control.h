/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcsmpi: the control file of a job (struct bcs_mpi_control of
 * <linux/bcs_mpi.h>), read by the processes of the job and written by
 * bcsctl.  Needs no MPI.
 */
#ifndef BCSMPI_CONTROL_H
#define BCSMPI_CONTROL_H

#include <stddef.h>

#include <linux/bcs_mpi.h>

/* Where the files of the processes and the control files are. */
#define BCSMPI_DIR_DEFAULT	"/run/bcs/mpi"

/* $BCS_MPI_DIR, or BCSMPI_DIR_DEFAULT if unset or empty. */
const char *bcsmpi_dir(void);

/* mkdir -p @dir: 0 or a negative errno. */
int bcsmpi_make_dirs(const char *dir);

/* @flags of bcsmpi_control_open(). */
#define BCSMPI_CTL_WRITE	1	/* mapped writable */
#define BCSMPI_CTL_NOCREATE	2	/* not created if missing (-ENOENT) */

/* A writer's tries at the file's lock, BCSMPI_CTL_LOCK_WAIT_US apart. */
#define BCSMPI_CTL_LOCK_TRIES	50
#define BCSMPI_CTL_LOCK_WAIT_US	10000

/*
 * Map the control file of @job in @dir (created, never set, if missing;
 * @dir too; neither with BCSMPI_CTL_NOCREATE), read-only, or writable
 * with BCSMPI_CTL_WRITE, into *@out.  The file is opened without
 * following a symbolic link and without blocking, and mapped only if it
 * is a regular file of one link owned by root or by this user (no one
 * else can truncate it under the mapping).  Returns the open descriptor
 * (>= 0), or a negative errno with a message in @err: the file cannot be
 * created or mapped, is not a control file of this version (-EINVAL), or
 * is someone else's (-EPERM).  Undo with bcsmpi_control_close().
 */
int bcsmpi_control_open(const char *dir, const char *job, int flags,
			struct bcs_mpi_control **out, char *err,
			size_t errlen);

/*
 * The directory of the files of job @job on this node, into @out:
 *   - @dir/@job if it is a directory of this user's that no one else may
 *     write (bcsd makes it for the job's user, with the control file in
 *     it, root's): *@own 0, the control file is never created;
 *   - else @dir itself if it is such a directory (or can be made one,
 *     missing): a private directory, *@own 1, as without bcsd;
 *   - else (@dir is root's, or shared) @dir/@job once bcsd made it,
 *     waited for up to @wait_ms.
 * Returns 0, or a negative errno with a message in @err: -EPERM
 * (@dir/@job is someone else's, or writable by others), -ETIMEDOUT (not
 * made in time).  Nothing here blocks on a file.
 */
int bcsmpi_job_dir(const char *dir, const char *job, unsigned int wait_ms,
		   char *out, size_t outlen, int *own, char *err,
		   size_t errlen);

/* The wait of bcsmpi_job_dir() for bcsd, by default ($BCS_MPI_WAIT_MS). */
#define BCSMPI_WAIT_MS_DEFAULT	3000
#define BCSMPI_WAIT_MS_MAX	60000

void bcsmpi_control_close(struct bcs_mpi_control *c, int fd);

/*
 * A consistent copy of @c in @copy: 0, or -EAGAIN while a writer is
 * between its two increments of the generation (try again later).
 */
int bcsmpi_control_read(const struct bcs_mpi_control *c,
			struct bcs_mpi_control *copy);

/*
 * Set the control of @job in @dir: @stats (BCS_MPI_STATS syntax, NULL to
 * keep it), recording on or @off, the resolution @sub_bits of processes
 * that start later (-1 to keep it).  @stats is checked as the processes
 * will parse it.  Returns 0, or a negative errno with a message in @err.
 * This is the one writer: bcsctl calls it on its node, bcsd may call it
 * on every node of a job.
 */
int bcs_mpi_control_set(const char *dir, const char *job, int off,
			const char *stats, int sub_bits, char *err,
			size_t errlen);

/*
 * As bcs_mpi_control_set(), trying the file's lock (flock, LOCK_NB)
 * @lock_tries times, BCSMPI_CTL_LOCK_WAIT_US apart, before -EBUSY: bcsd
 * tries once, so that no reader of the file holding a lock stops it.
 */
int bcs_mpi_control_set_tries(const char *dir, const char *job, int off,
			      const char *stats, int sub_bits, int lock_tries,
			      char *err, size_t errlen);

/*
 * Remove the control file of @job in @dir, when the job is gone: 0, or a
 * negative errno (-ENOENT: there was none).  Processes that still have it
 * mapped keep their copy.
 */
int bcs_mpi_control_remove(const char *dir, const char *job);

#endif /* BCSMPI_CONTROL_H */

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

/*
 * Map the control file of @job in @dir (created, never set, if missing;
 * @dir too), read-only, or writable with @writable, into *@out.  Returns
 * the open descriptor (>= 0), or a negative errno with a message in
 * @err: the file cannot be created or mapped, or is not a control file
 * of this version (-EINVAL).  Undo with bcsmpi_control_close().
 */
int bcsmpi_control_open(const char *dir, const char *job, int writable,
			struct bcs_mpi_control **out, char *err,
			size_t errlen);

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
 * Remove the control file of @job in @dir, when the job is gone: 0, or a
 * negative errno (-ENOENT: there was none).  Processes that still have it
 * mapped keep their copy.
 */
int bcs_mpi_control_remove(const char *dir, const char *job);

#endif /* BCSMPI_CONTROL_H */

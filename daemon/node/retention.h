/* SPDX-License-Identifier: GPL-2.0 */
/*
 * retention.c: what jobs leave on a node, aged (retention_days): the
 * dumps bcsd wrote to jobs_dir (JOB-HOST.json, and a temporary
 * JOB-HOST.json.XXXXXX a crash left), and in mpi_dir the MPI files of
 * jobs gone (mpi_dir/JOB/ with its JOB.control and JOB.*.bcsmpi, the
 * flat JOB.control and JOB.*.bcsmpi of mpi_dir, and the .stale.JOB.*
 * directories of mpidir.c).  A file goes when its mtime is older than
 * the cut-off; a job's directory when it is then empty, was not changed
 * since the cut-off, and the job is not live on this node.  Only those
 * names are touched, never through a link (openat O_NOFOLLOW, unlinkat
 * from the directory's descriptor), and only of owners that may have
 * made them (bcsd's user, or the job directory's owner inside it).
 *
 * A pass is done in steps of bounded work, one per tick of the loop
 * (collect.c), over as many ticks as it needs; a pass starts every
 * RETENTION_PERIOD_MS, the first at start.  Pure: no state of bcsd's,
 * no clock, no log.
 */
#ifndef BCSD_RETENTION_H
#define BCSD_RETENTION_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define RETENTION_PERIOD_MS	3600000ULL	/* a pass every hour */
#define RETENTION_STEP		256	/* entries looked at per step */
#define RETENTION_JOB_ENTRIES	512	/* of a job's directory, per pass */

/* Is job @job live on this node (its MPI files in use)? */
typedef bool retention_live_fn(void *arg, uint32_t job);

struct retention {
	/* Set once. */
	const char *jobs_dir;		/* "" or NULL: none */
	const char *host;		/* of the dumps' names */
	const char *mpi_dir;		/* "" or NULL: none */
	retention_live_fn *live;
	void *live_arg;
	/* A pass. */
	time_t cutoff;			/* older than this goes */
	bool active;			/* a pass under way */
	int phase;			/* 0: none; 1: jobs_dir; 2: mpi_dir */
	DIR *dir;			/* of the phase */
	uint64_t removed, failed;	/* in all passes */
	char err[256];			/* the last failure, for the log */
};

/* A pass starts over now, with the files older than @cutoff to go. */
void retention_start(struct retention *r, time_t cutoff);
/*
 * A step of the pass: at most RETENTION_STEP entries looked at (and
 * RETENTION_JOB_ENTRIES of one job's directory).  Returns true while
 * the pass has more to do.
 */
bool retention_step(struct retention *r);
/* The pass ended early (at exit). */
void retention_stop(struct retention *r);

#endif /* BCSD_RETENTION_H */

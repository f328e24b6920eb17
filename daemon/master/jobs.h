/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jobs.c, the master's jobs (d->master.jobs): placed in the matrix
 * (matrix.c) and announced in the job map.
 */
#ifndef BCSD_MASTER_JOBS_H
#define BCSD_MASTER_JOBS_H

#include <stdbool.h>
#include <stdint.h>

struct bcsd;
struct bcsd_job;
struct bcsd_origin;
struct bcsp_msg;
struct bcsp_report;

/*
 * jobs_init(): the matrix of the policy configured, empty; jobs_exit()
 * forgets the jobs and frees the matrix, also after jobs_init() failed.
 */
int jobs_init(struct bcsd *d);
void jobs_exit(struct bcsd *d);

/* Job @id, or NULL. */
struct bcsd_job *jobs_find(struct bcsd *d, uint32_t id);
/*
 * Add job @id born @birth and owned by @owner (struct bcsp_job_row) to
 * the matrix, in row @row (BCS_ROW_NONE: where the policy places it;
 * @pin: the row was asked for, and stays); false if it is full.  It is
 * the last of d->master.jobs.
 */
bool jobs_add(struct bcsd *d, uint32_t id, uint32_t row, bool pin,
	      uint32_t birth, uint32_t owner);
/* Take job @j (of the master's) out of the matrix. */
void jobs_remove(struct bcsd *d, struct bcsd_job *j);
/* Forget every job: the matrix empty again. */
void jobs_forget(struct bcsd *d);
/*
 * Take into the matrix the jobs of node @node's report @r that it lacks,
 * each in a row of its own choosing.
 */
void jobs_adopt_reported(struct bcsd *d, uint32_t node,
			 const struct bcsp_report *r);
/*
 * Place the jobs again; true if a job's row or row set changed: the map
 * must go out (jobs_map_changed()).
 */
bool jobs_replan(struct bcsd *d);
/* The rows the jobs use: one past the highest. */
uint32_t jobs_nr_rows(const struct bcsd *d);

/*
 * The map changed: a new version, sent at once, whose rows take effect a
 * few slices from now, or with @at_once at once (a take-over).
 */
void jobs_map_changed(struct bcsd *d, bool at_once);
/*
 * With each strobe: the map again if a change is being repeated, or if
 * the last went out long enough ago.
 */
void jobs_map_resend(struct bcsd *d);
/* Once a tick of the active master (CLOCK_MONOTONIC @now): replan. */
void jobs_tick(struct bcsd *d, uint64_t now);

/*
 * Handlers, on the active master: the nodes' reports (BCSP_REPORT), and
 * down a tree this host's sum of the cluster's tasks (BCSP_TASKS).
 */
void jobs_on_report(struct bcsd *d, const struct bcsp_msg *m,
		    const struct bcsd_origin *from);
void jobs_on_tasks(struct bcsd *d, const struct bcsp_msg *m,
		   const struct bcsd_origin *from);

#endif /* BCSD_MASTER_JOBS_H */

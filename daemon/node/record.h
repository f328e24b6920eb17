/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record.c, what this node records: a part of bcsd that applies the
 * statistics context of the master followed to bcs.ko.  It depends on the
 * core (bcsd.h) alone; bcsd.c starts and stops it, after the node part.
 */
#ifndef BCSD_RECORD_H
#define BCSD_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"

struct bcsd;

/*
 * record.c: the statistics context applied to bcs.ko: the name of the
 * followed master's last context applied, and per job what bcs.ko records.
 * @retry: a job was not here yet, or bcs.ko refused; tried again at each
 * report period.
 */
/*
 * The tasks of a job with subsets that bcs.ko records here: the pids
 * named for this node and those of its ranks here, at most
 * RECORD_PIDS_MAX (more are left out, with a warning).
 */
#define RECORD_PIDS_MAX		128

struct bcsd_record_pids {
	bool subset;		/* false: the whole job */
	bool ranks;		/* it has rank subsets: look again */
	bool over;		/* more than RECORD_PIDS_MAX named here */
	uint32_t nr;
	int32_t pid[RECORD_PIDS_MAX];
};

/*
 * The pids of job @job on node @node that the subsets of context @c name:
 * those given for @node and the ranks' processes of @ranks (@nr_ranks,
 * read from the job's MPI files here), into @out, without repeats.  Pure.
 */
struct mpidir_rank;
void record_subset_pids(const struct bcsp_context *c, uint32_t job,
			uint32_t node, const struct mpidir_rank *ranks,
			unsigned int nr_ranks, struct bcsd_record_pids *out);

struct bcsd_record {
	bool applied;
	uint32_t epoch, master, version;
	bool retry;
	uint64_t retried_ms;
	uint64_t slice;			/* of the last strobe */
	struct bcsp_job_stats jobs[BCSP_MAX_JOBS];
	struct bcsd_record_pids pids[BCSP_MAX_JOBS];	/* of @jobs */
	struct bcsd_record_pids next[BCSP_MAX_JOBS];	/* apply()'s */
	uint32_t nr_jobs;
	uint32_t window_flags;		/* BCSP_WINDOW_ARMED */
	uint64_t window_from, window_to;
};

int record_init(struct bcsd *d);
void record_exit(struct bcsd *d);

#endif /* BCSD_RECORD_H */

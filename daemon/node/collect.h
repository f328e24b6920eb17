/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collect.c, what a job leaves on this node: a part of bcsd that writes
 * the statistics of each job that ends to jobs_dir.  It depends on the
 * core (bcsd.h) alone; bcsd.c starts and stops it, after the node part.
 */
#ifndef BCSD_COLLECT_H
#define BCSD_COLLECT_H

#include <stdint.h>

#include "node/dumpfile.h"
#include "node/jobcopy.h"
#include "node/retention.h"
#include "proto/proto.h"

struct bcsd;
struct bcs_events;

/* collect.c: the ends of jobs that bcs.ko announces, and their dumps. */
struct bcsd_collect {
	struct bcs_events *ev;
	char host[64];			/* in the dumps' names */
	struct dump_owners owners;	/* the jobs' uids, for their dumps */
	uint64_t learnt_ms;		/* owners last learnt */
	struct dump_budget budget;	/* of the dumps written */
	uint64_t refused_said_ms;	/* refusals last logged */
	uint64_t refused_unsaid;	/* refusals since */
	struct bcsp_window cmds;	/* the commands taken (MPI_GATHER) */
	/*
	 * The jobs with tasks here whose directory in mpi_dir is made (or
	 * could not be: said once), in order of ids; the loop's only.
	 * @until_ms: made for bcsd's own user (root), looked at again until
	 * then (a task that attached as root and then took its user's
	 * identity, as a launcher does), or 0.
	 */
	struct bcsd_mpi_ready {
		uint32_t job;
		uint64_t until_ms;
	} *mpi_ready;
	uint32_t nr_mpi_ready;
	/* Aging of jobs_dir and mpi_dir (retention_days): a pass per hour. */
	struct retention retention;
	uint64_t retention_next_ms;	/* the next pass */
	uint64_t retention_said;	/* failures logged so far */
	/* The copies of dumps to jobs_copy_dir, by a thread of their own. */
	struct jobcopy copy;
	bool copying;			/* its thread started */
};

int collect_init(struct bcsd *d);
void collect_exit(struct bcsd *d);

#endif /* BCSD_COLLECT_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * node.c, the node role, bcs.ko's driver: a part of bcsd.  It depends on
 * the core (bcsd.h) alone and takes its messages from the dispatcher;
 * bcsd.c starts and stops it.
 */
#ifndef BCSD_NODE_H
#define BCSD_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"

struct bcsd;
struct bcs_nl;

#define BCSD_MAP_HISTORY	32	/* maps kept for the stats file */
#define BCSD_MAP_EVENT_JOBS	64	/* jobs kept of each */

/*
 * A map applied to bcs.ko, for the stats file: the cluster tests compare
 * what each node ran with the master's map of each slice.
 */
struct bcsd_map_event {
	uint64_t applied_ns;		/* CLOCK_REALTIME */
	uint64_t from_slice;		/* own map: first strobe naming it */
	uint64_t apply_slice;		/* its rows from this slice; 0: at once */
	uint32_t epoch, master, version, nr_jobs;
	/*
	 * The first BCSD_MAP_EVENT_JOBS of its jobs, so that 32 events stay
	 * small with maps of thousands of jobs: the stats file says how
	 * many more there were ("more").
	 */
	uint32_t job[BCSD_MAP_EVENT_JOBS], row[BCSD_MAP_EVENT_JOBS];
	uint64_t rows[BCSD_MAP_EVENT_JOBS];
};

/* node.c: the node role, bcs.ko's driver. */
struct bcsd_node {
	struct bcs_nl *nl;
	bool driving;			/* bcs.ko in driven mode, by us */
	/* The map last applied to bcs.ko: (epoch, master, version). */
	bool applied;
	uint32_t applied_epoch;
	uint32_t applied_master;
	uint32_t applied_version;
	uint64_t applied_slice;		/* its apply_slice; 0: at once */
	/* The one in force before it, of the same master, until then. */
	bool applied_prev;
	uint32_t applied_prev_version;
	/* The newest at (nr_history - 1) % BCSD_MAP_HISTORY. */
	struct bcsd_map_event history[BCSD_MAP_HISTORY];
	uint32_t nr_history;
	uint64_t reported_ms;		/* the last report sent */
	/* The commands carried out: (epoch, id) of their master. */
	struct bcsp_window cmds;
};

/*
 * The kernel jobs bcsd made on this node, and their births (0: not
 * known): node.c keeps them, ctl.c waits for them (view_local_job()).
 * @owner_said: the job in bcs.ko has another owner than the map's and
 * tasks, and the log has said so (node.c check_owner()), once.
 */
struct bcsd_local {
	uint32_t jobs[BCS_JOBS_MAX];	/* in increasing order */
	uint32_t births[BCS_JOBS_MAX];
	bool owner_said[BCS_JOBS_MAX];
	uint32_t nr_jobs;
};

int node_init(struct bcsd *d);
void node_exit(struct bcsd *d);

#endif /* BCSD_NODE_H */

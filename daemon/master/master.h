/* SPDX-License-Identifier: GPL-2.0 */
/*
 * master.c, the master role, active or standby: a part of bcsd.  It depends on
 * the core (bcsd.h) alone and takes its messages from the dispatcher;
 * bcsd.c starts and stops it.  Its pieces: strobe.c (the clock), jobs.c
 * (the matrix and the job map), context.c (the statistics context),
 * takeover.c (fail-over between masters), requests.c (bcsctl's requests).
 */
#ifndef BCSD_MASTER_H
#define BCSD_MASTER_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/bcs.h>

#include "core/config.h"
#include "master/matrix.h"
#include "proto/proto.h"

struct bcsd;

/* Attach requests in flight at the master, and how long each waits. */
#define BCSD_ATTACHING_MAX	16
#define BCSD_ATTACH_WAIT_MS	2000

/* One job of the cluster, as the master keeps it. */
struct bcsd_job {
	uint32_t id;
	uint32_t row;
	uint64_t rows;			/* the row set the map names (matrix.c) */
	uint32_t birth;			/* struct bcsp_job_row */
	/*
	 * Its owner's uid, as its create named it (0: root), or
	 * BCSP_OWNER_NONE when learnt from reports; a take-over keeps the
	 * followed map's.
	 */
	uint32_t owner;
	/*
	 * The nodes its create named (bcsctl job create --nodes): @nr_declared
	 * of them, allocated (NULL with none).
	 */
	uint32_t *declared;
	uint32_t nr_declared;
	/*
	 * Tasks per node, from the nodes' reports; down a tree, per sender
	 * of a subtree's sum, with @nodes the nodes with tasks in it.  Only
	 * senders that report tasks of it: @nr_nodes entries of arrays that
	 * grow (@cap_nodes, at most BCSD_MAX_NODES) as it spreads, so that
	 * BCS_JOBS_MAX jobs of a node or two each cost little; freed with
	 * the job (jobs.c job_free()).  A sender whose entry cannot be
	 * had is not learnt.
	 */
	struct bcsd_job_node {
		uint32_t id;		/* the sender's node id */
		uint32_t tasks;
		uint32_t nodes;
		uint64_t seen_ms;
		uint64_t cpus;		/* its report's, 0: the whole node */
	} *node;
	uint32_t nr_nodes;
	uint32_t cap_nodes;
};

/*
 * The master role, active or standby: its state, which no other part
 * writes (tree.c and stats.c read @active).
 */
struct bcsd_master {
	bool active;			/* sending strobes */
	uint32_t epoch;			/* ours while active */
	int strobe_fd;			/* timerfd, CLOCK_REALTIME */
	uint64_t strobe_slice;		/* of the last strobe sent */
	uint64_t strobe_deadline_ns;	/* of slice strobe_slice */
	uint32_t strobe_row;		/* the row of the slice before the next */
	/*
	 * Plans (cfg.plan_slices > 1): the next strobe is for slice
	 * strobe_slice + plan_next (1 without plans); no slice from plan_end
	 * on is planned yet.
	 */
	uint32_t plan_next;
	uint64_t plan_end;
	struct bcsp_msg strobe_msg;	/* the last strobe sent */
	unsigned int strobe_copies_left;	/* of it, still to send */
	/*
	 * The jobs; their rows are the matrix's (matrix.c).  @by_id: the
	 * indices into @jobs in the order of their ids, for find_job().
	 */
	struct bcsd_job jobs[BCS_JOBS_MAX];
	uint16_t by_id[BCS_JOBS_MAX];
	uint32_t nr_jobs;
	uint32_t next_job_id;
	struct matrix matrix;
	/*
	 * The node id of each of the matrix's node indices, and a hash of
	 * the ids (index + 1; 0: free) that finds them (matrix_node()).
	 */
	uint32_t matrix_node[BCSD_MAX_NODES];
	uint32_t matrix_nodes;
	uint16_t matrix_node_hash[2 * BCSD_MAX_NODES];
	uint32_t map_version;
	uint64_t map_apply_slice;	/* of map_version; 0: at once */
	uint64_t replanned_ms;		/* the jobs last placed again */
	uint64_t map_sent_slice;
	uint32_t map_repeats;		/* resend with the next strobes */
	uint32_t map_repeated_version;	/* map_version they are for */
	/* Fail-over. */
	uint64_t listen_until_ms;	/* no take-over before: reports come */
	bool no_quorum_said;		/* logged once until a master is heard */
	bool no_epoch_said;		/* the last epoch seen: logged once */
	uint64_t higher_epoch_ms;	/* reports first named a higher epoch */
	uint64_t higher_epoch_last_ms;	/* and last did */
	/*
	 * Replies to requests, the active master's own and, on a standby,
	 * those of the master it follows: for retries (done_find()).
	 */
	struct bcsp_request done[32];
	unsigned int done_next;
	/* What the nodes record (bcsctl stats): sent with every map. */
	struct bcsp_context ctx;
	uint32_t cmd_id;		/* of the last command sent */
	/*
	 * Attach requests whose command went to their node, waiting for
	 * its result (BCSP_RESULT); @req.id 0: a free slot.  Answered with
	 * -EHOSTUNREACH after BCSD_ATTACH_WAIT_MS.
	 */
	struct {
		struct bcsp_request req;
		uint32_t cmd_id;
		uint64_t sent_ms;	/* CLOCK_MONOTONIC */
	} attaching[BCSD_ATTACHING_MAX];
};

int master_init(struct bcsd *d);
void master_exit(struct bcsd *d);

#endif /* BCSD_MASTER_H */

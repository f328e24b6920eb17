/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reduce.c: the reductions up the tree of daemons (switch summaries,
 * tasks per job and per node), on the filters of filter.c.
 */
#ifndef BCSD_REDUCE_H
#define BCSD_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"
#include "tree/filter.h"

struct bcsd;

/*
 * reduce.c: per slice, the switch summaries of this node's subtree
 * being added up on their way to the master (@w: the slice's wave, its
 * first at @w.first_ms), and the datagram going up.
 */
#define REDUCE_SLICES		256

struct bcsd_reduce_slot {
	struct bcsp_switch_sum sw;
	struct filter_wave w;		/* CLOCK_MONOTONIC */
};

/* A child's sum of tasks is left out when so many report periods old. */
#define REDUCE_TASKS_REPORTS	3

/*
 * A node's last report, or a child's last sum of its subtree's; and the
 * same per node (@nt, allocated when the first came; NULL: never).
 */
struct reduce_tasks {
	uint64_t seen_ms;		/* CLOCK_MONOTONIC; 0: never */
	struct bcsp_tasks t;
	uint64_t nt_seen_ms;
	struct bcsp_node_tasks *nt;
};

struct bcsd_reduce {
	uint32_t epoch;			/* of the master the sums are for */
	struct bcsd_reduce_slot slot[REDUCE_SLICES];
	struct bcsp_msg out;
	/* Per node of the list: this node's and its children's tasks. */
	struct reduce_tasks *tasks;
	uint64_t tasks_sent_ms;
	/*
	 * The last concatenation of this node's and its children's tasks
	 * per node, made when the sums went up (@nodes_ms; 0: never): the
	 * subtree's, on the root the cluster's.
	 */
	struct bcsp_node_tasks nodes;
	uint64_t nodes_ms;
	/* Nodes whose reports the last sum up held (the subtree's). */
	uint32_t reporting;
};

/*
 * reduce.c: with strobe_transport tree, switch summaries @sw for the
 * master of @epoch, this node's own or a child's, to add up and send on
 * up the tree (the root: to the global records).
 */
int reduce_init(struct bcsd *d);
void reduce_exit(struct bcsd *d);
void reduce_add(struct bcsd *d, uint32_t epoch,
		const struct bcsp_switches *sw);
/*
 * reduce_report(): this node's report of its tasks per job;
 * reduce_tasks(): node @node's sum of its subtree's (BCSP_TASKS).  Their
 * total goes up once per report period.
 */
void reduce_report(struct bcsd *d, const struct bcsp_report *rep);
void reduce_tasks(struct bcsd *d, uint32_t node, const struct bcsp_tasks *t);
/*
 * reduce_node_tasks(): node @node's list of its subtree's tasks per node
 * (BCSP_NODE_TASKS), concatenated with this node's and its other
 * children's and sent up with the sums, and kept as d->reduce.nodes.
 */
void reduce_node_tasks(struct bcsd *d, uint32_t node,
		       const struct bcsp_node_tasks *nt);

#endif /* BCSD_REDUCE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * view.c: the cluster view, every node's last report, and this node's
 * jobs.
 */
#ifndef BCSD_VIEW_H
#define BCSD_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/rx.h"
#include "proto/proto.h"

struct bcsd;

/* A node's last report, as every bcsd keeps it (view.c). */
struct bcsd_peer {
	uint32_t node;
	uint64_t seen_ms;		/* CLOCK_MONOTONIC */
	struct bcsp_report report;
};

/* view.c: the cluster view, every node's last report. */
struct bcsd_view {
	struct bcsd_peer peers[BCSD_MAX_SENDERS];
	uint32_t nr_peers;
};

/* view.c: the cluster view and this node's jobs. */
struct json_object;
void view_on_report(struct bcsd *d, uint32_t node,
		    const struct bcsp_report *r, uint64_t now_ms);
bool view_quorum(const struct bcsd *d, uint64_t now_ms, uint32_t *fresh,
		 uint32_t *need);
/*
 * The tasks per (job, node) of the fresh reports (in a tree the subtree's
 * list, reduce.c), sorted by job and node, for a job list: built once,
 * O(P log P) for P pairs, rather than every report searched per job
 * (BCS_JOBS_MAX jobs times BCSD_MAX_SENDERS reports of 64).  @e: job,
 * node, tasks.
 */
struct view_pairs {
	uint32_t (*e)[3];
	size_t n;
};
int view_pairs_build(const struct bcsd *d, uint64_t now_ms,
		     struct view_pairs *vp);
/* Job @job's [{"node": N, "tasks": T}, ...], in order of nodes. */
struct json_object *view_pairs_job(const struct view_pairs *vp, uint32_t job);
void view_pairs_free(struct view_pairs *vp);
/*
 * The nodes whose reports are fresh (this one's too); in a tree, those
 * in the root's last sum of reports on the root, 0 elsewhere.
 */
uint32_t view_live_nodes(const struct bcsd *d, uint64_t now_ms);
/*
 * What view_pairs_job() shows: {"of": "reports" | "subtree" | "cluster",
 * "more": pairs (job, node) left out of a tree's bounded lists}.
 */
struct json_object *view_nodes_json(const struct bcsd *d, uint64_t now_ms);
/* The index of the first local job whose id is not below @job. */
uint32_t view_local_index(const struct bcsd *d, uint32_t job);
bool view_local_job(const struct bcsd *d, uint32_t job, uint32_t *idx);

#endif /* BCSD_VIEW_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * offsets.c: the active master's record of the clock offsets of the
 * tree's nodes.
 */
#ifndef BCSD_OFFSETS_H
#define BCSD_OFFSETS_H

#include <stdbool.h>
#include <stdint.h>

#include "clock/skew.h"
#include "core/config.h"
#include "proto/proto.h"

struct bcsd;

/*
 * Clock offsets (probe.c, offsets.c): estimates older than so many report
 * periods are not used.
 */
#define BCSD_SKEW_PERIODS	10

/*
 * offsets.c: the active master's record of the clock offsets, per node of
 * the list (its index): the latest estimate of its clock minus its
 * parent's, as that parent sent it (BCSP_OFFSETS).
 */
struct bcsd_offset_link {
	bool known;
	uint32_t parent;		/* node id of the sender */
	struct skew_estimate est;
	uint64_t at_ns;			/* CLOCK_REALTIME when it came */
	uint64_t warned_ms;		/* CLOCK_MONOTONIC; 0: never */
};

struct bcsd_offsets {
	struct bcsd_offset_link link[BCSD_MAX_NODES];
};

struct json_object;

/*
 * offsets.c: the active master's clock offsets (the master part feeds
 * them).  offsets_add(): the estimates @o of @sender's children, come at
 * @now_ns (CLOCK_REALTIME); children not in the list are counted and
 * dropped.  offsets_compose(): every node's offset from the root of the
 * current tree at @now_ns into @out (d->nodes->nr of them), composed
 * over the links whose sender is the node's parent in that tree and that
 * are at most BCSD_SKEW_PERIODS report periods old; returns the number
 * of nodes known, -ENOENT without nodes_file, or skew_tree()'s -EINVAL.
 * offsets_check(): warn about nodes whose |offset| + bound is beyond
 * skew_warn_permille of the slice, each at most once a minute (@now_ms,
 * CLOCK_MONOTONIC), counted in skew_warnings.  offsets_json(): per node
 * of the list {node, parent, depth, offset_ns, bound_ns, age_ms}, or
 * NULL without nodes_file.
 */
void offsets_add(struct bcsd *d, uint32_t sender,
		 const struct bcsp_offsets *o, uint64_t now_ns);
int offsets_compose(const struct bcsd *d, uint64_t now_ns,
		    struct skew_estimate *out);
void offsets_check(struct bcsd *d, uint64_t now_ns, uint64_t now_ms);
struct json_object *offsets_json(const struct bcsd *d, uint64_t now_ns);

#endif /* BCSD_OFFSETS_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * global.c, the active master's global records, per slice (the paper's
 * GETTS and GTTS): d->global, which the master part writes and the
 * control socket and the stats file read.
 */
#ifndef BCSD_MASTER_GLOBAL_H
#define BCSD_MASTER_GLOBAL_H

#include <stdint.h>

#include "proto/proto.h"

struct bcsd;
struct json_object;

/*
 * global.c: the active master's record of a slice (GETTS, GTTS): its
 * strobe, and how the nodes' switches to it went, summed.
 */
#define BCSD_GLOBAL_SLICES	4096	/* slices kept */

enum bcsd_global_state {
	GLOBAL_NONE = 0,
	GLOBAL_PENDING,			/* nodes said, the strobe is not out */
	GLOBAL_SENT,			/* its strobe went out */
	GLOBAL_SKIPPED,			/* no strobe: the master fell behind */
};

struct bcsd_global_rec {
	uint64_t slice;			/* none if @state is GLOBAL_NONE */
	enum bcsd_global_state state;
	uint64_t deadline_ns;		/* CLOCK_REALTIME, as the strobe */
	uint64_t sent_ns;		/* its first copy sent */
	uint64_t interval_ns;		/* since the strobe before; 0: none */
	uint32_t row;
	struct bcsp_switch_sum sw;	/* @sw.nodes 0: no node said yet */
	uint64_t heard_ns;		/* CLOCK_REALTIME of the last summary */
};

struct bcsd_global {
	uint32_t epoch;			/* of the strobes recorded */
	uint64_t nr;			/* strobes recorded in @epoch */
	uint64_t newest;		/* slice of the last */
	uint64_t last_sent_ns;
	uint64_t unknown;		/* summaries of slices not held */
	struct bcsd_global_rec recs[BCSD_GLOBAL_SLICES];
};

/*
 * global.c: the active master's global records.  global_sent(): strobe
 * @s of master epoch @epoch went out at @sent_ns (CLOCK_REALTIME); a new
 * epoch starts afresh.  global_add(): a node's (or a subtree's) switch
 * summaries, for the strobes of @epoch, heard at @now_ns
 * (CLOCK_REALTIME).  global_json(): the records of
 * the last @last slices sent (at most BCSD_GLOBAL_SLICES), oldest first,
 * as {"epoch", "unknown", "slices": [...]}.
 */
void global_sent(struct bcsd *d, uint32_t epoch, const struct bcsp_strobe *s,
		 uint64_t sent_ns);
void global_add(struct bcsd *d, uint32_t epoch,
		const struct bcsp_switches *sw, uint64_t now_ns);
struct json_object *global_json(const struct bcsd *d, uint64_t last);

#endif /* BCSD_MASTER_GLOBAL_H */

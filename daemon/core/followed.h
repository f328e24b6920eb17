/* SPDX-License-Identifier: GPL-2.0 */
/*
 * followed.c: the live master, as this daemon follows it, and its map.
 */
#ifndef BCSD_FOLLOWED_H
#define BCSD_FOLLOWED_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"

struct bcsd;

/*
 * The live master as every role knows it, from its strobes (rx.c) or,
 * on the active master, from itself; and the last map it sent.
 */
struct bcsd_followed {
	bool known;			/* a master has been heard */
	uint32_t id;			/* its node id */
	uint32_t epoch;
	uint16_t priority;
	struct sockaddr_in addr;	/* where requests go */
	uint64_t heard_ms;		/* CLOCK_MONOTONIC */
	uint64_t slice;			/* of its last strobe followed */
	uint64_t slice_ns;		/* and that strobe's slice length */
	uint32_t plan_len;		/* and the slices it named, 1 .. */
	uint32_t max_epoch_seen;	/* in any datagram accepted */
	/*
	 * The last map received.  A map is named by (epoch, master,
	 * version): two standbys that take over in one tick take the same
	 * epoch and step the same version on, with maps of their own.
	 */
	bool have_map;
	struct bcsp_whole_map map;
	uint32_t map_epoch;		/* of the master that sent it */
	uint32_t map_master;		/* that master's node id */
	/*
	 * The map in force before it, until its apply_slice: its version
	 * and home rows (followed_set_map(), followed_rows_at()).
	 */
	bool map_prev;
	uint32_t map_prev_version;
	uint64_t map_prev_rows;
	/* Its last statistics context (BCSP_CONTEXT), if any, so named. */
	bool have_ctx;
	struct bcsp_context ctx;
	uint32_t ctx_epoch;
	uint32_t ctx_master;
};

/*
 * The slices a master with plans may be quiet for after its last strobe
 * beyond those of a master without (whose strobes come every slice): its
 * plan's slices less one, 0 without plans.  Every silence that tells a
 * master (or a parent) gone counts them in.
 */
static inline uint64_t followed_quiet_slices(const struct bcsd_followed *f)
{
	return f->plan_len > 1 ? f->plan_len - 1 : 0;
}

/*
 * followed.c: the whole map @map of master @master, epoch @epoch, is the one followed
 * (received, or on the active master its own): the one before it stays in
 * force until @map's apply_slice, unless @map only replaces a map that is
 * not yet in force (the same apply_slice).
 */
void followed_set_map(struct bcsd *d, const struct bcsp_whole_map *map,
		      uint32_t epoch, uint32_t master);
/*
 * The home rows of the map followed that is in force at slice @slice, and
 * its version in *@version; 0 (and no version) if none is held.
 */
uint64_t followed_rows_at(const struct bcsd *d, uint64_t slice,
			  uint32_t *version);

#endif /* BCSD_FOLLOWED_H */

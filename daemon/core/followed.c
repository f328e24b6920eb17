// SPDX-License-Identifier: GPL-2.0
/*
 * The map of the master followed, and which of its versions is in force
 * in which slice: a changed map takes effect at its apply_slice on every
 * node (proto.h, Documentation/matrix.rst), and until then the one before
 * it is.  rx.c holds what the network brings, master.c what it sends.
 */
#include <string.h>

#include "bcsd.h"

void followed_set_map(struct bcsd *d, const struct bcsp_whole_map *map,
		      uint32_t epoch, uint32_t master)
{
	struct bcsd_followed *f = &d->followed;

	if (f->have_map && f->map_epoch == epoch && f->map_master == master &&
	    f->map.version == map->version) {
		/* Sent again: the same rows, fresher counts of tasks. */
	} else if (!map->apply_slice || !f->have_map || f->map_epoch != epoch ||
	    f->map_master != master) {
		/* In force at once. */
		f->map_prev = false;
	} else if (map->apply_slice != f->map.apply_slice) {
		/* The one held was in force (or will be, first). */
		f->map_prev = true;
		f->map_prev_version = f->map.version;
		f->map_prev_rows = bcsp_map_home_rows(&f->map);
	}
	/* Not the jobs past nr_jobs: up to 128 KB copied otherwise. */
	if (map != &f->map) {
		f->map.version = map->version;
		f->map.nr_jobs = map->nr_jobs;
		f->map.apply_slice = map->apply_slice;
		memcpy(f->map.jobs, map->jobs,
		       map->nr_jobs * sizeof(map->jobs[0]));
	}
	f->map_epoch = epoch;
	f->map_master = master;
	f->have_map = true;
}

uint64_t followed_rows_at(const struct bcsd *d, uint64_t slice,
			  uint32_t *version)
{
	const struct bcsd_followed *f = &d->followed;

	if (!f->have_map)
		return 0;
	if (f->map_prev && slice < f->map.apply_slice) {
		*version = f->map_prev_version;
		return f->map_prev_rows;
	}
	*version = f->map.version;
	return bcsp_map_home_rows(&f->map);
}

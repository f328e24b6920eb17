/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe.c, the clock offsets of the tree (Documentation/tree.rst, "Clock
 * offsets"): a part of bcsd that, with nodes_file, times round trips to
 * this node's children in the tree, answers its parent's, and sends its
 * children's offsets to the master it follows.  It depends on the core
 * (bcsd.h) alone; bcsd.c starts it on every daemon.
 */
#ifndef BCSD_PROBE_H
#define BCSD_PROBE_H

#include <stdint.h>

#include "clock/skew.h"

struct bcsd;

/*
 * probe.c: the round trips to this node's children in the tree, per node
 * of the list (its index; NULL without nodes_file): the last probe sent
 * (@t1 0: none awaits its reply) and the window of round trips.
 */
struct bcsd_probe_child {
	uint32_t id;
	uint64_t t1;
	struct skew_window w;
};

struct bcsd_probe {
	struct bcsd_probe_child *child;
	uint32_t next_id;
	uint64_t resolution_ns;		/* of CLOCK_REALTIME */
	uint64_t sent_ms;		/* the last period's probes */
};

/*
 * Registers the handlers of BCSP_PROBE and BCSP_PROBE_REPLY and a tick;
 * nothing without nodes_file.  -1, said, when out of memory.
 */
int probe_init(struct bcsd *d);
/* Frees what probe_init() took; also after it failed. */
void probe_exit(struct bcsd *d);

#endif /* BCSD_PROBE_H */

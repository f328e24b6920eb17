/* SPDX-License-Identifier: GPL-2.0 */
/*
 * switches.c, how this node's switches went: a part of bcsd that reads
 * bcs.ko's slice ring and sends the master a summary of each slice, for
 * its global records.  It depends on the core (bcsd.h) alone; bcsd.c
 * starts and stops it, after the node part.
 */
#ifndef BCSD_SWITCHES_H
#define BCSD_SWITCHES_H

#include <stdint.h>

struct bcsd;
struct bcs_stat;

/*
 * switches.c: this node's slice ring (NULL: none, no summaries), read up
 * to @next_seq, last at @sent_ms; the last slice summarised, of the
 * master of @epoch.
 */
struct bcsd_switches {
	struct bcs_stat *st;
	uint64_t next_seq;
	uint64_t sent_ms;
	uint64_t last_slice;
	uint32_t epoch;
};

int switches_init(struct bcsd *d);
void switches_exit(struct bcsd *d);

#endif /* BCSD_SWITCHES_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * filler.c, the fill policy on this node (bcsd.conf fill): a part of bcsd
 * that classifies this node's jobs (fill.c) from what bcs.ko and the
 * kernel measure of their tasks, and marks in bcs.ko the ones that may
 * run in the rows in which the node is otherwise idle.  It depends on the
 * core (bcsd.h) alone; bcsd.c starts and stops it, after the node part.
 */
#ifndef BCSD_FILLER_H
#define BCSD_FILLER_H

#include <stdbool.h>
#include <stdint.h>

#include "node/fill.h"

struct bcsd;

/*
 * filler.c: this node's jobs in increasing order, each with its fill
 * classification and whether bcs.ko has it marked filler.
 */
struct bcsd_filler_job {
	uint32_t job;
	bool marked;
	struct fill_state st;
};

struct bcsd_filler {
	struct fill_params params;
	struct bcsd_filler_job *jobs;
	uint32_t nr;
	uint64_t last_ms;
};

int filler_init(struct bcsd *d);
void filler_exit(struct bcsd *d);

#endif /* BCSD_FILLER_H */

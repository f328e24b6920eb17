/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record.c, what this node records: a part of bcsd that applies the
 * statistics context of the master followed to bcs.ko.  It depends on the
 * core (bcsd.h) alone; bcsd.c starts and stops it, after the node part.
 */
#ifndef BCSD_RECORD_H
#define BCSD_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"

struct bcsd;

/*
 * record.c: the statistics context applied to bcs.ko: the name of the
 * followed master's last context applied, and per job what bcs.ko records.
 * @retry: a job was not here yet, or bcs.ko refused; tried again at each
 * report period.
 */
struct bcsd_record {
	bool applied;
	uint32_t epoch, master, version;
	bool retry;
	uint64_t retried_ms;
	struct bcsp_job_stats jobs[BCSP_MAX_JOBS];
	uint32_t nr_jobs;
	uint32_t window_flags;		/* BCSP_WINDOW_ARMED */
	uint64_t window_from, window_to;
};

int record_init(struct bcsd *d);
void record_exit(struct bcsd *d);

#endif /* BCSD_RECORD_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metrics.c: bcsd's counters and state in the Prometheus text format
 * (promtext.c), written to metrics_file for node_exporter's textfile
 * collector: every metrics_interval_ms at a tick of the loop, on SIGUSR1,
 * each time a new file renamed over the last (a reader sees one whole),
 * and removed at exit.  It reads the parts' state and calls no part.
 */
#ifndef BCSD_METRICS_H
#define BCSD_METRICS_H

#include <stdint.h>
#include <stdio.h>

struct bcsd;

struct bcsd_metrics {
	uint64_t start_s;		/* CLOCK_REALTIME, at start */
	uint64_t written_ms;		/* CLOCK_MONOTONIC, last written */
	uint64_t failed_said_ms;	/* a failure last logged */
};

int metrics_init(struct bcsd *d);
void metrics_exit(struct bcsd *d);
/* Every metric of @d to @f. */
void metrics_format(const struct bcsd *d, FILE *f);
/* metrics_file written now (a failure counted in metrics_failed). */
void metrics_write(struct bcsd *d);

#endif /* BCSD_METRICS_H */

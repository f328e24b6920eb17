/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collect.c, what a job leaves on this node: a part of bcsd that writes
 * the statistics of each job that ends to jobs_dir.  It depends on the
 * core (bcsd.h) alone; bcsd.c starts and stops it, after the node part.
 */
#ifndef BCSD_COLLECT_H
#define BCSD_COLLECT_H

struct bcsd;

int collect_init(struct bcsd *d);
void collect_exit(struct bcsd *d);

#endif /* BCSD_COLLECT_H */

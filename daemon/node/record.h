/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record.c, what this node records: a part of bcsd that applies the
 * statistics context of the master followed to bcs.ko.  It depends on the
 * core (bcsd.h) alone; bcsd.c starts and stops it, after the node part.
 */
#ifndef BCSD_RECORD_H
#define BCSD_RECORD_H

struct bcsd;

int record_init(struct bcsd *d);
void record_exit(struct bcsd *d);

#endif /* BCSD_RECORD_H */

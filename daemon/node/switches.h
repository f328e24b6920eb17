/* SPDX-License-Identifier: GPL-2.0 */
/*
 * switches.c, how this node's switches went: a part of bcsd that reads
 * bcs.ko's slice ring and sends the master a summary of each slice, for
 * its global records.  It depends on the core (bcsd.h) alone; bcsd.c
 * starts and stops it, after the node part.
 */
#ifndef BCSD_SWITCHES_H
#define BCSD_SWITCHES_H

struct bcsd;

int switches_init(struct bcsd *d);
void switches_exit(struct bcsd *d);

#endif /* BCSD_SWITCHES_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * master.c, the master role, active or standby: a part of bcsd.  It depends on
 * the core (bcsd.h) alone and takes its messages from the dispatcher;
 * bcsd.c starts and stops it.
 */
#ifndef BCSD_MASTER_H
#define BCSD_MASTER_H

struct bcsd;

int master_init(struct bcsd *d);
void master_exit(struct bcsd *d);

#endif /* BCSD_MASTER_H */

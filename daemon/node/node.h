/* SPDX-License-Identifier: GPL-2.0 */
/*
 * node.c, the node role, bcs.ko's driver: a part of bcsd.  It depends on
 * the core (bcsd.h) alone and takes its messages from the dispatcher;
 * bcsd.c starts and stops it.
 */
#ifndef BCSD_NODE_H
#define BCSD_NODE_H

struct bcsd;

int node_init(struct bcsd *d);
void node_exit(struct bcsd *d);

#endif /* BCSD_NODE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl.c, the control socket for bcsctl: a part of bcsd.  It depends on
 * the core (bcsd.h) alone and takes its messages from the dispatcher;
 * bcsd.c starts and stops it.
 */
#ifndef BCSD_CTL_H
#define BCSD_CTL_H

struct bcsd;

int ctl_init(struct bcsd *d);
void ctl_exit(struct bcsd *d);

#endif /* BCSD_CTL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task distributions: BCS_IOC_DIST_CTL and BCS_IOC_DIST_READ.
 */
#ifndef _BCS_DIST_IOCTL_H
#define _BCS_DIST_IOCTL_H

#include <linux/bcs.h>

/* The ioctls, their argument checked for size and reserved fields. */
int bcs_dist_ctl(const struct bcs_dist_ctl *ctl);
int bcs_dist_read(struct bcs_dist_read *rd);

#endif /* _BCS_DIST_IOCTL_H */

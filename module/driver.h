/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration (mode, slice, watchdog) and the driver that holds
 * driven mode.
 */
#ifndef _BCS_DRIVER_H
#define _BCS_DRIVER_H

#include <linux/types.h>
#include <linux/bcs.h>

#include "sched.h"

struct task_struct;

int bcs_sched_config(struct bcs_config *cfg, const struct bcs_driver *drv);
int bcs_driver_release(const struct bcs_driver *drv);
void bcs_driver_gone(const struct bcs_driver *drv);
void bcs_driver_task_exit(struct task_struct *p, bool group_dead);
void bcs_driver_exit(void);

#endif /* _BCS_DRIVER_H */

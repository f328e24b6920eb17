/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Suspension: tasks park themselves on their job's wait queue on their way
 * back to user space.
 */
#ifndef _BCS_PARK_H
#define _BCS_PARK_H

#include "job.h"

int bcs_park_init(void);
void bcs_park_exit(void);
void bcs_park_init_task(struct bcs_task *bt);
bool bcs_park_request(struct bcs_task *bt);
void bcs_park_kick(struct bcs_task *bt);
void bcs_park_wait_idle(void);

#endif /* _BCS_PARK_H */

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
bool bcs_park_request(struct bcs_task *bt);

#endif /* _BCS_PARK_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The watchdog of driven mode: fail open when the node stops switching.
 */
#ifndef _BCS_WATCHDOG_H
#define _BCS_WATCHDOG_H

#include <linux/types.h>

void bcs_watchdog_init(void);
void bcs_watchdog_arm(u64 wait_ns);
bool bcs_watchdog_armed(void);
void bcs_watchdog_cancel(void);

#endif /* _BCS_WATCHDOG_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strobes: the standalone tick, and strobes submitted by user space.
 */
#ifndef _BCS_STROBE_H
#define _BCS_STROBE_H

#include <linux/types.h>
#include <linux/bcs.h>

struct bcs_driver;

void bcs_strobe_init(void);
void bcs_strobe_tick_start(u64 delay_ns);
void bcs_strobe_tick_cancel(void);

int bcs_strobe_submit(const struct bcs_strobe *req, u32 origin,
		      const struct bcs_driver *drv);

#endif /* _BCS_STROBE_H */

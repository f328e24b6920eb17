/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The gang switch: one row runs, the other rows' jobs are suspended.
 */
#ifndef _BCS_SWITCH_H
#define _BCS_SWITCH_H

#include <linux/types.h>

struct bcs_task;

void bcs_switch_init(void);
void bcs_switch_cancel_fill(void);

void bcs_switch(u32 row, u64 strobe_ns, u64 deadline_ns, u32 flags);
void bcs_switch_resume_all(bool failure);
u32 bcs_switch_next_row(void);

void bcs_switch_parked(struct bcs_task *bt);
void bcs_switch_woken(struct bcs_task *bt);

#endif /* _BCS_SWITCH_H */

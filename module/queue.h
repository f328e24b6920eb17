/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Driven strobes waiting for their deadlines, with the predictions and
 * expiries they carry.
 */
#ifndef _BCS_QUEUE_H
#define _BCS_QUEUE_H

#include <linux/types.h>
#include <linux/bcs.h>

void bcs_queue_init(void);
void bcs_queue_add(const struct bcs_strobe *req, u64 now, u32 origin);
void bcs_queue_run(u64 now);
void bcs_queue_arm(void);
void bcs_queue_cancel(void);
void bcs_queue_flush(void);
void bcs_queue_forget_slice(void);
u32 bcs_queue_count(void);

#endif /* _BCS_QUEUE_H */

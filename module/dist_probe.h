/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task distributions: the sched_switch probe, the accounting of each
 * tracked task, and the registration of the probe.
 */
#ifndef _BCS_DIST_PROBE_H
#define _BCS_DIST_PROBE_H

#include <linux/types.h>

struct bcs_dist_task;
struct task_struct;

/* Longest wait before unused probes go (module parameter dist_linger_ms). */
#define BCS_DIST_LINGER_MS_MAX	600000

int bcs_dist_init(void);

/* For dist_ctx.c and dist_ioctl.c; locking as the functions say. */
struct bcs_dist_task *bcs_dist_find(const struct task_struct *t);
void bcs_dist_hash_add(struct bcs_dist_task *tr);
void bcs_dist_hash_del(struct bcs_dist_task *tr);
void bcs_dist_record(struct bcs_dist_task *tr, u32 m, u64 v);
void bcs_dist_settle(struct bcs_dist_task *tr);
void bcs_dist_activate(struct bcs_dist_task *tr, u64 now);
void bcs_dist_deactivate(struct bcs_dist_task *tr, u64 now);
int bcs_dist_probes(bool want);
void bcs_dist_linger(void);
void bcs_dist_linger_cancel(void);

#endif /* _BCS_DIST_PROBE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task distributions: CPU bursts, blocked time, suspended time and
 * runnable wait of the tasks of jobs where they are enabled.
 */
#ifndef _BCS_DIST_H
#define _BCS_DIST_H

#include <linux/bcs.h>

#include "job.h"

int bcs_dist_init(void);
void bcs_dist_exit(void);

/* What job.c tells dist.c, through struct bcs_job_hooks (bcs_lock held). */
void bcs_dist_linked(struct bcs_task *bt);
void bcs_dist_unlinked(struct bcs_task *bt);
void bcs_dist_job_created(struct bcs_kjob *job);
void bcs_dist_job_destroyed(struct bcs_kjob *job);

/* Most destroyed jobs' statistics kept (module parameter dist_kept_jobs). */
#define BCS_DIST_KEPT_MAX	65536
/* Longest wait before unused probes go (module parameter dist_linger_ms). */
#define BCS_DIST_LINGER_MS_MAX	600000
/* Most of dist_max_job_tasks and dist_max_user_tasks. */
#define BCS_DIST_TASKS_MAX	1048576

struct seq_file;

u32 bcs_dist_job_tasks(u32 id);
void bcs_dist_get_kept(u32 *kept, u64 *dropped);
void bcs_dist_show(struct seq_file *m);

/* The ioctls, their argument checked for size and reserved fields. */
int bcs_dist_ctl(const struct bcs_dist_ctl *ctl);
int bcs_dist_read(struct bcs_dist_read *rd);

#endif /* _BCS_DIST_H */

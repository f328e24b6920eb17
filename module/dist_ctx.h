/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task distributions: the contexts of jobs and the trackers of their
 * tasks, their bounds and their lifetime.
 */
#ifndef _BCS_DIST_CTX_H
#define _BCS_DIST_CTX_H

#include <linux/gfp.h>
#include <linux/types.h>

struct bcs_dist_ctx;
struct bcs_dist_hist;
struct bcs_dist_task;
struct bcs_kjob;
struct bcs_task;
struct seq_file;

/* Most destroyed jobs' statistics kept (module parameter dist_kept_jobs). */
#define BCS_DIST_KEPT_MAX	65536
/* Most of dist_max_job_tasks and dist_max_user_tasks. */
#define BCS_DIST_TASKS_MAX	1048576

/* Module exit, after every job is gone. */
void bcs_dist_exit(void);

/* What job.c tells dist_ctx.c, through struct bcs_job_hooks (bcs_lock held). */
void bcs_dist_linked(struct bcs_task *bt);
void bcs_dist_unlinked(struct bcs_task *bt);
void bcs_dist_job_created(struct bcs_kjob *job);
void bcs_dist_job_destroyed(struct bcs_kjob *job);

u32 bcs_dist_job_tasks(u32 id);
void bcs_dist_get_kept(u32 *kept, u64 *dropped);
void bcs_dist_show(struct seq_file *m);

/* For dist_probe.c and dist_ioctl.c; locking as the functions say. */
extern unsigned int bcs_dist_max_job;	/* dist_max_job_tasks */
struct bcs_dist_hist *bcs_dist_hist_alloc(u32 sub_bits, gfp_t gfp);
struct bcs_dist_task *bcs_dist_task_alloc(gfp_t gfp);
void bcs_dist_task_free(struct bcs_dist_task *tr);
int bcs_dist_task_add(struct bcs_dist_ctx *ctx, struct bcs_dist_task *tr,
		      struct bcs_task *bt);
void bcs_dist_task_gone(struct bcs_dist_task *tr, u64 now);
void bcs_dist_task_del(struct bcs_dist_ctx *ctx, struct bcs_dist_task *tr);
struct bcs_dist_task *bcs_dist_of(const struct bcs_task *bt);
struct bcs_dist_ctx *bcs_dist_ctx_find(u32 job);
int bcs_dist_ctx_add(struct bcs_dist_ctx *ctx, u32 job);
void bcs_dist_ctx_free(struct bcs_dist_ctx *ctx);
bool bcs_dist_wanted(void);

#endif /* _BCS_DIST_CTX_H */

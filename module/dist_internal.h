/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task distributions, what the files of dist_ share: the tracker of a
 * task (struct bcs_dist_task), its histograms, the context of a job
 * (struct bcs_dist_ctx), the locks and the clock.  dist_probe.c follows
 * the tasks, dist_ctx.c keeps the contexts and their trackers, and
 * dist_ioctl.c answers BCS_IOC_DIST_CTL and BCS_IOC_DIST_READ.
 *
 * Locking: bcs_dist_mutex serialises the ioctls and the freeing of
 * trackers and histograms, so that a reader holding it may keep a
 * tracker pointer (BCS_IOC_DIST_READ drops it before copying out);
 * bcs_dist_lock (inside bcs_lock) protects the contexts, their lists and
 * xarrays (every change to an xarray is made under it, interrupts off),
 * the hash, the filter and the counts; struct bcs_dist_task.lock the
 * state of one task.  Contexts are freed after an RCU grace period, so
 * that a reader may find one and its trackers under rcu_read_lock().
 */
#ifndef _BCS_DIST_INTERNAL_H
#define _BCS_DIST_INTERNAL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>
#include <linux/bcs.h>

#include "job.h"

struct bcs_dist_hist {
	u32 sub_bits;
	u32 nr;				/* bcs_hist_buckets(sub_bits) */
	bool saturated;
	u64 count;
	u64 sum;
	u64 min;
	u64 max;
	u64 buckets[];
};

struct bcs_dist_task {
	struct hlist_node hash;		/* bcs_dist_lock, RCU: until gone */
	struct list_head node;		/* bcs_dist_lock: in its ctx->tasks */
	struct task_struct *task;	/* not dereferenced once gone */
	struct bcs_task *bt;		/* NULL once gone */
	struct pid *pid;		/* a reference, for reads after exit */
	kuid_t uid;
	u32 key;			/* pid in the initial namespace */
	bool charged;			/* counted in bcs_dist_users */
	raw_spinlock_t lock;
	/* lock; @active and @metrics also bcs_dist_lock to change. */
	bool active;			/* in bcs_dist_count, bcs_dist_filter */
	bool gone;			/* left its job */
	u32 metrics;			/* 1 << enum bcs_dist_metric */
	u32 state;			/* enum bcs_dist_metric */
	u64 since;			/* CLOCK_MONOTONIC: @state began */
	u64 period_start;		/* CLOCK_MONOTONIC: @active began */
	u64 start_ns;			/* CLOCK_MONOTONIC: first tracked */
	u64 run_delay;			/* of the task when its sleep began */
	/*
	 * The sleep that ended at the last switch-in, to split into the
	 * sleep and the wait after it once the scheduler has counted that
	 * wait (bcs_dist_settle()): its state, BCS_DIST_BURST for none, and
	 * its length with the wait.
	 */
	u32 woke;
	u64 woke_ns;
	u64 tracked_ns;			/* of the periods that ended */
	u64 time[BCS_DIST_METRICS];
	u64 burst_ns;			/* CPU time of the burst so far */
	u64 bursts;
	u64 preemptions;
	u64 suspensions;
	struct bcs_dist_hist *hist[BCS_DIST_METRICS];
};

/* The distributions of one job, live or destroyed. */
struct bcs_dist_ctx {
	struct list_head node;		/* in bcs_dist_ctxs */
	struct list_head tasks;		/* struct bcs_dist_task.node */
	struct xarray pids;		/* the same, by key; RCU to read */
	struct list_head dead_node;	/* in bcs_dist_dead once @dead */
	struct rcu_head rcu;
	u32 job;
	u32 nr_tasks;			/* on @tasks */
	bool dead;			/* the job was destroyed */
	bool uid_set;			/* @uid is that of a tracker */
	bool mixed;			/* trackers of several uids were added */
	kuid_t uid;			/* of every tracker added, if !@mixed */
	u32 metrics;			/* enabled for the whole job */
	u32 sub_bits[BCS_DIST_METRICS];
	u64 failures;			/* joins without memory to track */
	u64 dropped;			/* joins past a bound */
};

/* dist_ctx.c */
extern struct mutex bcs_dist_mutex;
extern spinlock_t bcs_dist_lock;
/* dist_probe.c: trackers counted in the filter, bcs_dist_lock. */
extern u32 bcs_dist_nr_active;

/* The clock of every interval; see the top of dist_probe.c. */
static inline u64 bcs_dist_now(void)
{
	return ktime_get_ns();
}

#endif /* _BCS_DIST_INTERNAL_H */

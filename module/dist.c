// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task distributions: for the tasks where they are enabled, the time
 * split into four states, each a metric with its histogram (linux/bcs_hist.h):
 * CPU bursts (running, from the end of one voluntary sleep to the start of
 * the next), blocked time (each voluntary sleep), suspended time (each sleep
 * parked by bcs) and runnable wait (on a run queue, not running).
 *
 * The events come from one tracepoint, sched_switch, registered while some
 * distribution is enabled, and dist_linger_ms after (10 s).  The probe
 * runs for every task switch in the system with a run queue lock held and
 * interrupts off: an untracked task costs a hash of its task_struct pointer
 * and one load from bcs_dist_filter, a small table counting the tracked
 * tasks by that hash; only a task whose slot is not 0 is looked up in
 * bcs_dist_hash.  A tracked task's state changes under its own raw lock,
 * taken inside the run queue lock and never around anything else.
 *
 * When a sleep ended is not taken from the sched_wakeup tracepoint (a
 * second probe on every wake-up in the system) but, when the task next
 * runs, from what the scheduler itself keeps of its run-queue waits
 * (CONFIG_SCHED_INFO, task_struct.sched_info): the waits counted in
 * run_delay since the sleep began, and the wait still open since
 * last_queued, which sched_info_arrive() folds in only after the probe.
 * The sleep is the rest of the interval.  A kernel without SCHED_INFO
 * counts the wait after a sleep as part of the sleep.
 *
 * A task parked by bcs sleeps in park.c with bcs_task.parked set: its
 * sleep is suspended time, any other sleep is blocked time.  Preemptions
 * and parks do not end a burst.  Every nanosecond of the time a task is
 * tracked belongs to exactly one state, all read from CLOCK_MONOTONIC
 * (one clock for every CPU: the scheduler's local_clock() may run apart
 * on two CPUs by up to a tick where the TSC is unstable), never going
 * back for one task (a reading behind the last one counts as the last
 * one), so that the four totals add up to the time tracked exactly.  The
 * wait that ends a sleep is a length of the run queue's clock (the
 * scheduler's), taken from the end of the interval.
 *
 * Nothing is allocated in the probes: histograms are allocated when a
 * metric is enabled (BCS_IOC_DIST_CTL), or without sleeping when a task
 * joins a job whose distributions are enabled as a whole (fork, attach).
 * Every allocation is charged to the memory cgroup of the task that makes
 * it (__GFP_ACCOUNT): the caller of the ioctl, or the task that forks or
 * attaches.  The statistics of a task that leaves its job stay in the
 * job's context (struct bcs_dist_ctx) until released, also after the job
 * is destroyed; a task of the same pid that joins the same job later
 * replaces them.  Contexts of destroyed jobs are kept in the order of
 * their destruction, at most dist_kept_jobs of them (module parameter):
 * past it the oldest goes, counted in bcs_dist_dead_dropped (debugfs
 * bcs/state).
 *
 * Bounds: a context holds at most dist_max_job_tasks trackers, and the
 * tasks of one uid have at most dist_max_user_tasks trackers in all
 * (module parameters; trackers of tasks that left count until freed).
 * An enable that would pass a bound fails (-ENOSPC for the job's,
 * -EDQUOT for a uid's); a task joining a job past a bound is not tracked,
 * counted in bcs_dist_dropped_job or bcs_dist_dropped_user and in the
 * context's drops (debugfs bcs/dist).
 *
 * Lookups: contexts by job id in bcs_dist_ctxs_xa; trackers by task in
 * bcs_dist_hash (the probes), by pid in their context's @pids, in the
 * order BCS_DIST_NEXT reads them.  A reader in another pid namespace than
 * the initial one walks @pids, at most dist_max_job_tasks entries.
 *
 * BCS_IOC_DIST_CTL works in batches of BCS_DIST_BATCH tasks (see
 * bcs_dist_run()), so that no section with interrupts off grows with the
 * job.
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
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bcs_hist.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "compat.h"
#include "dist.h"

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
	bool active;			/* counted in bcs_dist_filter */
	bool gone;			/* left its job */
	u32 metrics;			/* 1 << enum bcs_dist_metric */
	u32 state;			/* enum bcs_dist_metric */
	u64 since;			/* CLOCK_MONOTONIC: @state began */
	u64 period_start;		/* CLOCK_MONOTONIC: @active began */
	u64 start_ns;			/* CLOCK_MONOTONIC: first tracked */
	u64 run_delay;			/* of the task when its sleep began */
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

#define BCS_DIST_FILTER_BITS	10

static DEFINE_MUTEX(bcs_dist_mutex);
static DEFINE_SPINLOCK(bcs_dist_lock);
static LIST_HEAD(bcs_dist_ctxs);		/* bcs_dist_lock */
/* The contexts by job id; bcs_dist_lock to change, RCU to read. */
static DEFINE_XARRAY(bcs_dist_ctxs_xa);
/* Trackers per uid (xa_mk_value()), bcs_dist_lock. */
static DEFINE_XARRAY(bcs_dist_users);
static u32 bcs_dist_nr_tasks;			/* bcs_dist_lock: charged */
static u64 bcs_dist_dropped_job;		/* bcs_dist_lock */
static u64 bcs_dist_dropped_user;		/* bcs_dist_lock */
static u64 bcs_dist_nomem;			/* bcs_dist_lock */
static u32 bcs_dist_nr_ctx;			/* bcs_dist_lock and bcs_lock */
static u32 bcs_dist_nr_active;			/* bcs_dist_lock */
static DEFINE_HASHTABLE(bcs_dist_hash, 10);	/* bcs_dist_lock, RCU */
static u16 bcs_dist_filter[1 << BCS_DIST_FILTER_BITS];	/* bcs_dist_lock */
static LIST_HEAD(bcs_dist_free_list);		/* bcs_dist_lock */
/* Contexts of destroyed jobs, oldest destruction first. */
static LIST_HEAD(bcs_dist_dead);		/* bcs_dist_lock */
static u32 bcs_dist_nr_dead;			/* bcs_dist_lock */
static u64 bcs_dist_dead_dropped;		/* bcs_dist_lock */
static struct tracepoint *bcs_tp_switch;
static bool bcs_dist_registered;		/* bcs_dist_mutex */

static void bcs_dist_free_fn(struct work_struct *work);
static DECLARE_WORK(bcs_dist_free_work, bcs_dist_free_fn);

/*
 * The most contexts of destroyed jobs kept: a bound on the memory of
 * statistics that nobody releases.  Changed at run time, it applies at
 * the next destruction.
 */
static unsigned int bcs_dist_kept = 1024;

static int bcs_dist_kept_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (v < 1 || v > BCS_DIST_KEPT_MAX)
		return -EINVAL;
	WRITE_ONCE(bcs_dist_kept, v);
	return 0;
}

static const struct kernel_param_ops bcs_dist_kept_ops = {
	.set	= bcs_dist_kept_set,
	.get	= param_get_uint,
};

module_param_cb(dist_kept_jobs, &bcs_dist_kept_ops, &bcs_dist_kept, 0644);
MODULE_PARM_DESC(dist_kept_jobs,
		 "Destroyed jobs whose distributions are kept until released; past it the oldest go (1..65536, default 1024)");

/*
 * The most trackers of one job's context, and of the tasks of one uid in
 * all contexts (see "Bounds" at the top).  Changed at run time, they apply
 * to the trackers added from then on.
 */
static unsigned int bcs_dist_max_job = 4096;
static unsigned int bcs_dist_max_user = 16384;

static int bcs_dist_max_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, BCS_DIST_TASKS_MAX);
}

static const struct kernel_param_ops bcs_dist_max_ops = {
	.set	= bcs_dist_max_set,
	.get	= param_get_uint,
};

module_param_cb(dist_max_job_tasks, &bcs_dist_max_ops, &bcs_dist_max_job,
		0644);
MODULE_PARM_DESC(dist_max_job_tasks,
		 "Most tasks whose distributions one job keeps, gone ones included (1..1048576, default 4096)");
module_param_cb(dist_max_user_tasks, &bcs_dist_max_ops, &bcs_dist_max_user,
		0644);
MODULE_PARM_DESC(dist_max_user_tasks,
		 "Most tasks of one uid whose distributions are kept, gone ones included (1..1048576, default 16384)");

/* The clock of every interval; see the top of this file. */
static inline u64 bcs_dist_now(void)
{
	return ktime_get_ns();
}

static inline u16 *bcs_dist_slot(const struct task_struct *t)
{
	return &bcs_dist_filter[hash_ptr((void *)t, BCS_DIST_FILTER_BITS)];
}

/* Context: bcs_dist_lock or RCU (the probes: preemption off). */
static struct bcs_dist_task *bcs_dist_find(const struct task_struct *t)
{
	struct bcs_dist_task *tr;

	hash_for_each_possible_rcu(bcs_dist_hash, tr, hash, (unsigned long)t)
		if (tr->task == t)
			return tr;
	return NULL;
}

static void bcs_hist_add(struct bcs_dist_hist *h, u64 v)
{
	h->buckets[bcs_hist_index(v, h->sub_bits)]++;
	if (!h->count || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	if (h->saturated || check_add_overflow(h->sum, v, &h->sum)) {
		h->sum = U64_MAX;
		h->saturated = true;
	}
}

static void bcs_dist_record(struct bcs_dist_task *tr, u32 m, u64 v)
{
	if ((tr->metrics & BIT(m)) && tr->hist[m])
		bcs_hist_add(tr->hist[m], v);
}

/*
 * Close the interval of the current state at @now; return its length.  A
 * reading behind @tr->since (another CPU's clock) closes it at
 * @tr->since, so that the intervals still add up to the time tracked.
 */
static u64 bcs_dist_account(struct bcs_dist_task *tr, u64 now)
{
	u64 d = now > tr->since ? now - tr->since : 0;

	tr->time[tr->state] += d;
	if (tr->state == BCS_DIST_BURST)
		tr->burst_ns += d;
	tr->since += d;
	return d;
}

/*
 * How long the sleeping task @p has waited on run queues since its sleep
 * began, at @now: the waits the scheduler has counted since (it counts a
 * task moved to another CPU's queue as a wait ended there), and the one
 * still open.  No more than the interval of the sleep.
 */
static u64 bcs_dist_queued(const struct bcs_dist_task *tr,
			   const struct task_struct *p, u64 now)
{
	u64 w = bcs_task_run_delay(p) - tr->run_delay;
	u64 q = bcs_task_last_queued(p);
	u64 d = now > tr->since ? now - tr->since : 0;
	u64 rq_now;

	/* @q is of this CPU's run queue clock, which local_clock() reads. */
	if (q) {
		rq_now = local_clock();
		if (rq_now > q)
			w += rq_now - q;
	}
	return min(w, d);
}

static void bcs_dist_out(struct bcs_dist_task *tr, struct task_struct *p,
			 bool preempt, unsigned int prev_state, u64 now)
{
	bool was_running;

	raw_spin_lock(&tr->lock);
	if (!tr->active)
		goto out;
	was_running = tr->state == BCS_DIST_BURST;
	bcs_dist_account(tr, now);
	/*
	 * Still runnable: preempted, yielded, or a sleep cut short by a
	 * signal (__schedule() set the state back to running).
	 */
	if (preempt || !prev_state || task_is_running(p)) {
		tr->state = BCS_DIST_WAIT;
		if (was_running)
			tr->preemptions++;
	} else if (READ_ONCE(tr->bt->parked)) {
		tr->state = BCS_DIST_SUSPENDED;
		tr->suspensions++;
		tr->run_delay = bcs_task_run_delay(p);
	} else {
		tr->state = BCS_DIST_BLOCKED;
		bcs_dist_record(tr, BCS_DIST_BURST, tr->burst_ns);
		tr->bursts++;
		tr->burst_ns = 0;
		tr->run_delay = bcs_task_run_delay(p);
	}
out:
	raw_spin_unlock(&tr->lock);
}

static void bcs_dist_in(struct bcs_dist_task *tr, struct task_struct *p,
			u64 now)
{
	u32 s;
	u64 d;

	raw_spin_lock(&tr->lock);
	if (!tr->active)
		goto out;
	s = tr->state;
	/* A sleep ended when the task was first queued again. */
	if (s == BCS_DIST_BLOCKED || s == BCS_DIST_SUSPENDED) {
		d = bcs_dist_account(tr, now - bcs_dist_queued(tr, p, now));
		bcs_dist_record(tr, s, d);
		tr->state = BCS_DIST_WAIT;
	}
	d = bcs_dist_account(tr, now);
	if (tr->state == BCS_DIST_WAIT)
		bcs_dist_record(tr, BCS_DIST_WAIT, d);
	tr->state = BCS_DIST_BURST;
out:
	raw_spin_unlock(&tr->lock);
}

/* Out of line: the probe's own test stays a few instructions. */
static noinline void bcs_dist_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next,
				     unsigned int prev_state)
{
	struct bcs_dist_task *tr;
	u64 now = 0;

	if (READ_ONCE(*bcs_dist_slot(prev))) {
		tr = bcs_dist_find(prev);
		if (tr) {
			now = bcs_dist_now();
			bcs_dist_out(tr, prev, preempt, prev_state, now);
		}
	}
	if (READ_ONCE(*bcs_dist_slot(next))) {
		tr = bcs_dist_find(next);
		if (tr)
			bcs_dist_in(tr, next, now ?: bcs_dist_now());
	}
}

static void bcs_dist_probe_switch(void *data, bool preempt,
				  struct task_struct *prev,
				  struct task_struct *next,
				  unsigned int prev_state)
{
	if (unlikely(READ_ONCE(*bcs_dist_slot(prev)) ||
		     READ_ONCE(*bcs_dist_slot(next))))
		bcs_dist_switch(preempt, prev, next, prev_state);
}

/*
 * Start tracking @tr at @now, in the state its task seems to be in: a
 * guess that the task's next event corrects.  bcs_dist_lock and @tr->lock
 * held.
 */
static void bcs_dist_activate(struct bcs_dist_task *tr, u64 now)
{
	struct task_struct *t = tr->task;
	unsigned int state = READ_ONCE(t->__state);
	bool on_cpu = t == current;

#ifdef CONFIG_SMP
	on_cpu = on_cpu || READ_ONCE(t->on_cpu);
#endif
	if (state & TASK_NEW)
		tr->state = BCS_DIST_WAIT;	/* forked, not yet woken */
	else if (state != TASK_RUNNING && READ_ONCE(tr->bt->parked))
		tr->state = BCS_DIST_SUSPENDED;
	else if (state != TASK_RUNNING)
		tr->state = BCS_DIST_BLOCKED;
	else
		tr->state = on_cpu ? BCS_DIST_BURST : BCS_DIST_WAIT;
	tr->since = now;
	tr->period_start = now;
	if (!tr->start_ns)
		tr->start_ns = now;
	tr->run_delay = bcs_task_run_delay(t);
	tr->burst_ns = 0;
	tr->active = true;
	(*bcs_dist_slot(t))++;
	bcs_dist_nr_active++;
}

/* Stop tracking @tr at @now.  bcs_dist_lock and @tr->lock held. */
static void bcs_dist_deactivate(struct bcs_dist_task *tr, u64 now)
{
	bcs_dist_account(tr, now);
	tr->tracked_ns += tr->since - tr->period_start;
	tr->active = false;
	(*bcs_dist_slot(tr->task))--;
	bcs_dist_nr_active--;
}

static struct bcs_dist_hist *bcs_dist_hist_alloc(u32 sub_bits, gfp_t gfp)
{
	u32 nr = bcs_hist_buckets(sub_bits);
	struct bcs_dist_hist *h;

	if (gfpflags_allow_blocking(gfp))
		h = kvzalloc(struct_size(h, buckets, nr), gfp);
	else
		h = kzalloc(struct_size(h, buckets, nr), gfp);
	if (h) {
		h->sub_bits = sub_bits;
		h->nr = nr;
	}
	return h;
}

static struct bcs_dist_task *bcs_dist_task_alloc(gfp_t gfp)
{
	struct bcs_dist_task *tr = kzalloc(sizeof(*tr), gfp);

	if (tr)
		raw_spin_lock_init(&tr->lock);
	return tr;
}

/* Count @tr's task in its uid's trackers, if under the bound. */
static int bcs_dist_charge(struct bcs_dist_task *tr)
{
	unsigned long k = __kuid_val(tr->uid);
	unsigned long n = xa_to_value(xa_load(&bcs_dist_users, k) ?:
				      xa_mk_value(0));

	if (n >= READ_ONCE(bcs_dist_max_user))
		return -EDQUOT;
	if (xa_is_err(xa_store(&bcs_dist_users, k, xa_mk_value(n + 1),
			       GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN)))
		return -ENOMEM;
	tr->charged = true;
	bcs_dist_nr_tasks++;
	return 0;
}

/* Undo bcs_dist_charge().  bcs_dist_lock held. */
static void bcs_dist_uncharge(struct bcs_dist_task *tr)
{
	unsigned long k = __kuid_val(tr->uid);
	unsigned long n = xa_to_value(xa_load(&bcs_dist_users, k) ?:
				      xa_mk_value(1));

	if (!tr->charged)
		return;
	tr->charged = false;
	bcs_dist_nr_tasks--;
	/* Either replaces a value in place or erases: no allocation. */
	if (n > 1)
		xa_store(&bcs_dist_users, k, xa_mk_value(n - 1), GFP_ATOMIC);
	else
		xa_erase(&bcs_dist_users, k);
}

/* Free @tr, no longer reachable.  bcs_dist_lock not held. */
static void bcs_dist_task_free(struct bcs_dist_task *tr)
{
	unsigned long flags;
	int m;

	if (tr->charged) {
		spin_lock_irqsave(&bcs_dist_lock, flags);
		bcs_dist_uncharge(tr);
		spin_unlock_irqrestore(&bcs_dist_lock, flags);
	}
	for (m = 0; m < BCS_DIST_METRICS; m++)
		kvfree(tr->hist[m]);
	put_pid(tr->pid);
	kfree(tr);
}

static void bcs_dist_task_gone(struct bcs_dist_task *tr, u64 now);

/*
 * Make @tr the tracker of @bt in @ctx, in place of one of a task of the
 * same pid that left: 0, or -ENOSPC (@ctx is full), -EDQUOT (the task's
 * uid has its most trackers) or -ENOMEM, with @tr untouched.  bcs_lock
 * and bcs_dist_lock held.
 */
static int bcs_dist_task_add(struct bcs_dist_ctx *ctx,
			     struct bcs_dist_task *tr, struct bcs_task *bt)
{
	u32 key = task_pid_nr(bt->task);
	struct bcs_dist_task *old = xa_load(&ctx->pids, key);
	bool moved = false;
	void *e;
	int err;

	if (!old && ctx->nr_tasks >= READ_ONCE(bcs_dist_max_job))
		return -ENOSPC;
	tr->uid = task_uid(bt->task);
	if (old && old->charged && uid_eq(old->uid, tr->uid)) {
		/* @old's count goes to @tr. */
		old->charged = false;
		tr->charged = true;
		moved = true;
	} else {
		err = bcs_dist_charge(tr);
		if (err)
			return err;
	}
	/* Only a new index may need memory, and fail. */
	e = xa_store(&ctx->pids, key, tr,
		     GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN);
	if (xa_is_err(e)) {
		if (moved) {
			old->charged = true;
			tr->charged = false;
		} else {
			bcs_dist_uncharge(tr);
		}
		return -ENOMEM;
	}
	if (old) {
		if (!old->gone)
			bcs_dist_task_gone(old, bcs_dist_now());
		list_move_tail(&old->node, &bcs_dist_free_list);
		schedule_work(&bcs_dist_free_work);
	} else {
		ctx->nr_tasks++;
	}
	if (!ctx->uid_set) {
		ctx->uid = tr->uid;
		ctx->uid_set = true;
	} else if (!uid_eq(ctx->uid, tr->uid)) {
		ctx->mixed = true;
	}
	tr->key = key;
	tr->task = bt->task;
	tr->bt = bt;
	tr->pid = get_task_pid(bt->task, PIDTYPE_PID);
	hash_add_rcu(bcs_dist_hash, &tr->hash, (unsigned long)bt->task);
	list_add_tail(&tr->node, &ctx->tasks);
	return 0;
}

/*
 * Would a tracker of @bt in @ctx pass a bound?  -ENOSPC, -EDQUOT or 0,
 * as bcs_dist_task_add() would answer, before anything is allocated.
 * bcs_dist_lock held.
 */
static int bcs_dist_full(struct bcs_dist_ctx *ctx, struct bcs_task *bt)
{
	struct bcs_dist_task *old = xa_load(&ctx->pids, task_pid_nr(bt->task));
	kuid_t uid = task_uid(bt->task);
	void *n;

	if (!old && ctx->nr_tasks >= READ_ONCE(bcs_dist_max_job))
		return -ENOSPC;
	if (old && old->charged && uid_eq(old->uid, uid))
		return 0;
	n = xa_load(&bcs_dist_users, __kuid_val(uid));
	if (n && xa_to_value(n) >= READ_ONCE(bcs_dist_max_user))
		return -EDQUOT;
	return 0;
}

/* Take gone tracker @tr out of @ctx, to free.  bcs_dist_lock held. */
static void bcs_dist_task_del(struct bcs_dist_ctx *ctx,
			      struct bcs_dist_task *tr)
{
	if (xa_load(&ctx->pids, tr->key) == tr)
		xa_erase(&ctx->pids, tr->key);
	ctx->nr_tasks--;
}

/* Count a join past a bound (@err) or without memory.  bcs_dist_lock. */
static void bcs_dist_drop(struct bcs_dist_ctx *ctx, int err)
{
	if (err == -ENOMEM) {
		ctx->failures++;
		bcs_dist_nomem++;
		return;
	}
	ctx->dropped++;
	if (err == -EDQUOT)
		bcs_dist_dropped_user++;
	else
		bcs_dist_dropped_job++;
}

/* The tracker of attached task @bt, if any.  bcs_dist_lock held. */
static struct bcs_dist_task *bcs_dist_of(const struct bcs_task *bt)
{
	struct bcs_dist_task *tr = bcs_dist_find(bt->task);

	return tr && tr->bt == bt ? tr : NULL;
}

/* Context: bcs_dist_lock or RCU. */
static struct bcs_dist_ctx *bcs_dist_ctx_find(u32 job)
{
	return xa_load(&bcs_dist_ctxs_xa, job);
}

/* Trackers on bcs_dist_free_list, freed after a grace period. */
static void bcs_dist_free_fn(struct work_struct *work)
{
	struct bcs_dist_task *tr, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	mutex_lock(&bcs_dist_mutex);
	spin_lock_irqsave(&bcs_dist_lock, flags);
	list_splice_init(&bcs_dist_free_list, &list);
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
	if (!list_empty(&list))
		synchronize_rcu();
	list_for_each_entry_safe(tr, tmp, &list, node)
		bcs_dist_task_free(tr);
	mutex_unlock(&bcs_dist_mutex);
}

/* Stop following @tr's task for good.  bcs_dist_lock held. */
static void bcs_dist_task_gone(struct bcs_dist_task *tr, u64 now)
{
	raw_spin_lock(&tr->lock);
	if (tr->active) {
		bcs_dist_deactivate(tr, now);
		/*
		 * Leaving the job ends a burst as a sleep does, so that a
		 * task that never sleeps (the slowest rank of a barrier
		 * finds every message there) still shows its bursts.
		 */
		if (tr->burst_ns) {
			bcs_dist_record(tr, BCS_DIST_BURST, tr->burst_ns);
			tr->bursts++;
			tr->burst_ns = 0;
		}
	}
	tr->gone = true;
	tr->bt = NULL;
	raw_spin_unlock(&tr->lock);
	hash_del_rcu(&tr->hash);
}

/* Take @ctx, emptied of trackers, off the lists; free it.  bcs_dist_lock. */
static void bcs_dist_ctx_free(struct bcs_dist_ctx *ctx)
{
	if (ctx->dead) {
		list_del(&ctx->dead_node);
		bcs_dist_nr_dead--;
	}
	list_del(&ctx->node);
	bcs_dist_nr_ctx--;
	xa_erase(&bcs_dist_ctxs_xa, ctx->job);
	xa_destroy(&ctx->pids);
	kfree_rcu(ctx, rcu);
}

/* Free @ctx and its trackers (later).  bcs_dist_lock held. */
static void bcs_dist_ctx_drop(struct bcs_dist_ctx *ctx, u64 now)
{
	struct bcs_dist_task *tr;

	list_for_each_entry(tr, &ctx->tasks, node)
		if (!tr->gone)
			bcs_dist_task_gone(tr, now);
	list_splice_tail_init(&ctx->tasks, &bcs_dist_free_list);
	ctx->nr_tasks = 0;
	bcs_dist_ctx_free(ctx);
}

/**
 * bcs_dist_linked - hook: @bt has joined its job (attach, fork, clone)
 * @bt: the task
 *
 * Tracks it if its job's distributions are enabled as a whole, with
 * memory taken without sleeping; a task that gets none is not tracked
 * (counted in the context's failures).  Context: bcs_lock held.
 */
void bcs_dist_linked(struct bcs_task *bt)
{
	const gfp_t gfp = GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN;
	struct bcs_dist_ctx *ctx;
	struct bcs_dist_task *tr;
	unsigned long flags;
	int m, err;

	if (!bcs_dist_nr_ctx)
		return;
	spin_lock_irqsave(&bcs_dist_lock, flags);
	ctx = bcs_dist_ctx_find(bt->job->id);
	if (!ctx || ctx->dead || !ctx->metrics || bcs_dist_of(bt))
		goto out;
	/* Past a bound, nothing is allocated. */
	err = bcs_dist_full(ctx, bt);
	if (err) {
		bcs_dist_drop(ctx, err);
		goto out;
	}
	tr = bcs_dist_task_alloc(gfp);
	for (m = 0; tr && m < BCS_DIST_METRICS; m++) {
		if (!(ctx->metrics & BIT(m)))
			continue;
		tr->hist[m] = bcs_dist_hist_alloc(ctx->sub_bits[m], gfp);
		if (!tr->hist[m]) {
			bcs_dist_task_free(tr);	/* not charged */
			tr = NULL;
		}
	}
	err = tr ? bcs_dist_task_add(ctx, tr, bt) : -ENOMEM;
	if (err) {
		if (tr)
			bcs_dist_task_free(tr);
		bcs_dist_drop(ctx, err);
		goto out;
	}
	raw_spin_lock(&tr->lock);
	tr->metrics = ctx->metrics;
	bcs_dist_activate(tr, bcs_dist_now());
	raw_spin_unlock(&tr->lock);
out:
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
}

/*
 * bcs_dist_unlinked - hook: @bt leaves its job (exit, detach, destroy); its
 * statistics stay in the job's context.  Context: bcs_lock held.
 */
void bcs_dist_unlinked(struct bcs_task *bt)
{
	struct bcs_dist_task *tr;
	unsigned long flags;

	if (!bcs_dist_nr_ctx)
		return;
	spin_lock_irqsave(&bcs_dist_lock, flags);
	tr = bcs_dist_of(bt);
	if (tr)
		bcs_dist_task_gone(tr, bcs_dist_now());
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
}

/*
 * bcs_dist_job_created - hook: a job of this id starts afresh, and the
 * statistics of a destroyed one of the same id go.  bcs_lock held.
 */
void bcs_dist_job_created(struct bcs_kjob *job)
{
	struct bcs_dist_ctx *ctx;
	unsigned long flags;

	if (!bcs_dist_nr_ctx)
		return;
	spin_lock_irqsave(&bcs_dist_lock, flags);
	ctx = bcs_dist_ctx_find(job->id);
	if (ctx) {
		bcs_dist_ctx_drop(ctx, bcs_dist_now());
		schedule_work(&bcs_dist_free_work);
	}
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
}

/*
 * bcs_dist_job_destroyed - hook: @job is gone, its tasks unlinked; its
 * statistics stay until released.  bcs_lock held.
 */
void bcs_dist_job_destroyed(struct bcs_kjob *job)
{
	struct bcs_dist_ctx *ctx;
	unsigned long flags;

	if (!bcs_dist_nr_ctx)
		return;
	spin_lock_irqsave(&bcs_dist_lock, flags);
	ctx = bcs_dist_ctx_find(job->id);
	if (ctx) {
		ctx->dead = true;
		ctx->metrics = 0;
		list_add_tail(&ctx->dead_node, &bcs_dist_dead);
		bcs_dist_nr_dead++;
		if (list_empty(&ctx->tasks))
			bcs_dist_ctx_drop(ctx, 0);
	}
	/* Past the bound, the statistics destroyed longest ago go. */
	while (bcs_dist_nr_dead > READ_ONCE(bcs_dist_kept)) {
		ctx = list_first_entry(&bcs_dist_dead, struct bcs_dist_ctx,
				       dead_node);
		bcs_dist_ctx_drop(ctx, 0);
		bcs_dist_dead_dropped++;
		schedule_work(&bcs_dist_free_work);
	}
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
}

/**
 * bcs_dist_job_tasks - the tasks whose statistics job @id keeps
 * @id: a job id
 *
 * Return: the trackers of its context, gone or not; 0 if it has none.
 * Context: bcs_lock held (bcs_dist_lock must not be).
 */
u32 bcs_dist_job_tasks(u32 id)
{
	struct bcs_dist_ctx *ctx;
	unsigned long flags;
	u32 n = 0;

	if (!bcs_dist_nr_ctx)
		return 0;
	spin_lock_irqsave(&bcs_dist_lock, flags);
	ctx = bcs_dist_ctx_find(id);
	if (ctx)
		n = ctx->nr_tasks;
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
	return n;
}

/* The contexts of destroyed jobs kept now, and those dropped so far. */
void bcs_dist_get_kept(u32 *kept, u64 *dropped)
{
	unsigned long flags;

	spin_lock_irqsave(&bcs_dist_lock, flags);
	*kept = bcs_dist_nr_dead;
	*dropped = bcs_dist_dead_dropped;
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
}

/*
 * bcs_dist_show - debugfs bcs/dist: the bounds, the trackers and the drops
 * in all, then the trackers of each uid that has some and of each context.
 * A snapshot of a bounded number of lines at a time: the xarrays are read
 * under RCU, the counts may move meanwhile.
 */
void bcs_dist_show(struct seq_file *m)
{
	struct bcs_dist_ctx *ctx;
	unsigned long flags, k;
	u64 drop_job, drop_user, nomem;
	u32 nr;
	void *e;

	spin_lock_irqsave(&bcs_dist_lock, flags);
	nr = bcs_dist_nr_tasks;
	drop_job = bcs_dist_dropped_job;
	drop_user = bcs_dist_dropped_user;
	nomem = bcs_dist_nomem;
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
	seq_printf(m, "max_job_tasks: %u\n", READ_ONCE(bcs_dist_max_job));
	seq_printf(m, "max_user_tasks: %u\n", READ_ONCE(bcs_dist_max_user));
	seq_printf(m, "tasks: %u\n", nr);
	seq_printf(m, "dropped_job_bound: %llu\n", drop_job);
	seq_printf(m, "dropped_user_bound: %llu\n", drop_user);
	seq_printf(m, "dropped_no_memory: %llu\n", nomem);
	seq_puts(m, "uid tasks\n");
	rcu_read_lock();
	xa_for_each(&bcs_dist_users, k, e)
		seq_printf(m, "%lu %lu\n", k, xa_to_value(e));
	seq_puts(m, "job tasks dropped failures\n");
	xa_for_each(&bcs_dist_ctxs_xa, k, ctx)
		seq_printf(m, "%lu %u %llu %llu\n", k, READ_ONCE(ctx->nr_tasks),
			   READ_ONCE(ctx->dropped), READ_ONCE(ctx->failures));
	rcu_read_unlock();
}

/*
 * Register the probes while some task is tracked or some job's
 * distributions are enabled as a whole, and only then.  bcs_dist_mutex
 * held.
 */
static int bcs_dist_probes(bool want)
{
	int err;

	if (want == bcs_dist_registered)
		return 0;
	if (want) {
		err = tracepoint_probe_register(bcs_tp_switch,
						bcs_dist_probe_switch, NULL);
		if (err)
			return err;
	} else {
		tracepoint_probe_unregister(bcs_tp_switch,
					    bcs_dist_probe_switch, NULL);
		tracepoint_synchronize_unregister();
	}
	bcs_dist_registered = want;
	return 0;
}

static bool bcs_dist_wanted(void)
{
	struct bcs_dist_ctx *ctx;
	unsigned long flags;
	bool want;

	spin_lock_irqsave(&bcs_dist_lock, flags);
	want = bcs_dist_nr_active;
	list_for_each_entry(ctx, &bcs_dist_ctxs, node)
		want = want || ctx->metrics;
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
	return want;
}

/*
 * Probes no longer wanted are unregistered after dist_linger_ms (module
 * parameter) with nothing enabled, not at once.  Each registration and
 * unregistration patches the scheduler's text on every CPU
 * (text_poke_bp(), waiting for the other CPUs), so a tool that switches
 * statistics on and off in turn would patch it at each switch; meanwhile
 * an untracked task costs the probes' filter test only.  Changed at run
 * time, it applies from the next disable.
 */
static unsigned int bcs_dist_linger_ms = 10000;

static int bcs_dist_linger_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, BCS_DIST_LINGER_MS_MAX);
}

static const struct kernel_param_ops bcs_dist_linger_ops = {
	.set	= bcs_dist_linger_set,
	.get	= param_get_uint,
};

module_param_cb(dist_linger_ms, &bcs_dist_linger_ops, &bcs_dist_linger_ms,
		0644);
MODULE_PARM_DESC(dist_linger_ms,
		 "Probes stay registered this long after the last distribution was disabled (0..600000 ms, default 10000)");

static void bcs_dist_linger_fn(struct work_struct *work)
{
	mutex_lock(&bcs_dist_mutex);
	if (!bcs_dist_wanted())
		bcs_dist_probes(false);
	mutex_unlock(&bcs_dist_mutex);
}

static DECLARE_DELAYED_WORK(bcs_dist_linger_work, bcs_dist_linger_fn);

static bool bcs_dist_admin(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

static bool bcs_dist_may_see(const struct bcs_dist_task *tr, bool all)
{
	return all || uid_eq(tr->uid, current_uid()) ||
	       uid_eq(tr->uid, current_euid());
}

/*
 * May the caller see some tracker of @ctx?  Not if every tracker ever
 * added to it is of another uid: the test before any walk.
 */
static bool bcs_dist_may_see_ctx(const struct bcs_dist_ctx *ctx, bool all)
{
	return all || READ_ONCE(ctx->mixed) ||
	       uid_eq(ctx->uid, current_uid()) ||
	       uid_eq(ctx->uid, current_euid());
}

/*
 * The tasks of @pids with a reference each, if the caller may signal them
 * (as attach: kill(2)'s check for signal 0).
 */
static int bcs_dist_get_tasks(const s32 *pids, u32 nr,
			      struct task_struct **tasks)
{
	struct pid *pid;
	int err = 0;
	u32 i;

	for (i = 0; i < nr && !err; i++) {
		tasks[i] = NULL;
		pid = pids[i] > 0 ? find_get_pid(pids[i]) : NULL;
		if (pid)
			tasks[i] = get_pid_task(pid, PIDTYPE_PID);
		err = tasks[i] ? kill_pid(pid, 0, 0) : -ESRCH;
		put_pid(pid);
	}
	return err;
}

/* May the caller enable or disable the whole of live job @id? */
static int bcs_dist_may_job(u32 id)
{
	struct bcs_kjob *job;
	struct bcs_task *bt;
	int err = 0;

	if (bcs_dist_admin())
		return 0;
	rcu_read_lock();
	list_for_each_entry_rcu(job, &bcs_jobs, node) {
		if (job->id != id)
			continue;
		list_for_each_entry_rcu(bt, &job->tasks, job_node)
			if (kill_pid(task_pid(bt->task), 0, 0))
				err = -EPERM;
	}
	rcu_read_unlock();
	return err;
}

/*
 * Memory for an enable, taken before the locks: the walk under them
 * counts what it needs (@want_*) and fails with -EAGAIN while the pool
 * holds less.  Histograms that the enable replaces go to @old.
 */
struct bcs_dist_pool {
	struct bcs_dist_ctx *ctx;
	struct bcs_dist_task **tr;
	struct bcs_dist_hist **hist;
	struct bcs_dist_hist **old;
	u32 nr_tr, nr_hist, used_tr, used_hist, nr_old;
	u32 want_tr, want_hist;
};

/*
 * Grow @p to what the last try counted (@want_*) beyond what is used
 * already: an operation in batches fills it again for each batch that
 * needs more.
 */
static int bcs_dist_pool_fill(struct bcs_dist_pool *p, u32 sub_bits)
{
	u32 nr_tr = p->used_tr + p->want_tr + 4;
	u32 nr_hist = p->used_hist + p->want_hist + 4;
	void *a;

	if (!p->ctx) {
		p->ctx = kzalloc(sizeof(*p->ctx), GFP_KERNEL_ACCOUNT);
		if (!p->ctx)
			return -ENOMEM;
	}
	if (nr_tr > p->nr_tr) {
		a = kvcalloc(nr_tr, sizeof(*p->tr), GFP_KERNEL);
		if (!a)
			return -ENOMEM;
		if (p->nr_tr)
			memcpy(a, p->tr, p->nr_tr * sizeof(*p->tr));
		kvfree(p->tr);
		p->tr = a;
		for (; p->nr_tr < nr_tr; p->nr_tr++) {
			p->tr[p->nr_tr] =
				bcs_dist_task_alloc(GFP_KERNEL_ACCOUNT);
			if (!p->tr[p->nr_tr])
				return -ENOMEM;
		}
	}
	if (nr_hist > p->nr_hist) {
		a = kvcalloc(nr_hist, sizeof(*p->hist), GFP_KERNEL);
		if (!a)
			return -ENOMEM;
		if (p->nr_hist)
			memcpy(a, p->hist, p->nr_hist * sizeof(*p->hist));
		kvfree(p->hist);
		p->hist = a;
		/* At most one histogram replaced for each one used. */
		a = kvcalloc(nr_hist, sizeof(*p->old), GFP_KERNEL);
		if (!a)
			return -ENOMEM;
		if (p->nr_old)
			memcpy(a, p->old, p->nr_old * sizeof(*p->old));
		kvfree(p->old);
		p->old = a;
		for (; p->nr_hist < nr_hist; p->nr_hist++) {
			p->hist[p->nr_hist] =
				bcs_dist_hist_alloc(sub_bits,
						    GFP_KERNEL_ACCOUNT);
			if (!p->hist[p->nr_hist])
				return -ENOMEM;
		}
	}
	return 0;
}

static void bcs_dist_pool_free(struct bcs_dist_pool *p)
{
	u32 i;

	for (i = p->used_tr; i < p->nr_tr; i++)
		if (p->tr[i])
			bcs_dist_task_free(p->tr[i]);
	for (i = p->used_hist; i < p->nr_hist; i++)
		kvfree(p->hist[i]);
	for (i = 0; i < p->nr_old; i++)
		kvfree(p->old[i]);
	kvfree(p->tr);
	kvfree(p->hist);
	kvfree(p->old);
	kfree(p->ctx);
}

/*
 * Enable @ctl's metrics for @bt: 0 or the error of bcs_dist_task_add().
 * bcs_dist_lock held, pool big enough.
 */
static int bcs_dist_enable_one(struct bcs_dist_ctx *ctx, struct bcs_task *bt,
			       const struct bcs_dist_ctl *ctl,
			       struct bcs_dist_pool *p, u64 now)
{
	struct bcs_dist_task *tr = bcs_dist_of(bt);
	struct bcs_dist_hist *h;
	int m, err;

	if (!tr) {
		tr = p->tr[p->used_tr];
		err = bcs_dist_task_add(ctx, tr, bt);
		if (err)
			return err;
		p->used_tr++;
	}
	raw_spin_lock(&tr->lock);
	for (m = 0; m < BCS_DIST_METRICS; m++) {
		h = tr->hist[m];
		if (!(ctl->metrics & BIT(m)) || (h && h->sub_bits == ctl->sub_bits))
			continue;
		if (h)
			p->old[p->nr_old++] = h;
		tr->hist[m] = p->hist[p->used_hist++];
	}
	tr->metrics |= ctl->metrics;
	if (!tr->active)
		bcs_dist_activate(tr, now);
	raw_spin_unlock(&tr->lock);
	return 0;
}

/* What enabling @metrics at @sub_bits for @bt takes from the pool. */
static void bcs_dist_count(const struct bcs_task *bt,
			   const struct bcs_dist_ctl *ctl,
			   struct bcs_dist_pool *p)
{
	struct bcs_dist_task *tr = bcs_dist_of(bt);
	int m;

	if (!tr)
		p->want_tr++;
	for (m = 0; m < BCS_DIST_METRICS; m++)
		if ((ctl->metrics & BIT(m)) &&
		    (!tr || !tr->hist[m] ||
		     tr->hist[m]->sub_bits != ctl->sub_bits))
			p->want_hist++;
}

static void bcs_dist_disable_one(struct bcs_dist_task *tr, u32 metrics,
				 u64 now)
{
	raw_spin_lock(&tr->lock);
	tr->metrics &= ~metrics;
	if (tr->active && !tr->metrics)
		bcs_dist_deactivate(tr, now);
	raw_spin_unlock(&tr->lock);
}

static void bcs_dist_release_one(struct bcs_dist_ctx *ctx,
				 struct bcs_dist_task *tr,
				 struct list_head *released, u64 now)
{
	if (!tr->gone)
		bcs_dist_task_gone(tr, now);
	bcs_dist_task_del(ctx, tr);
	list_move_tail(&tr->node, released);
}

/* Live job @id.  bcs_lock or RCU. */
static struct bcs_kjob *bcs_dist_job_find(u32 id)
{
	struct bcs_kjob *job;

	list_for_each_entry_rcu(job, &bcs_jobs, node)
		if (job->id == id)
			return job;
	return NULL;
}

/*
 * The ioctl works in batches of at most BCS_DIST_BATCH tasks, each under
 * bcs_lock and bcs_dist_lock, interrupts on in between: the longest
 * section with interrupts off does not grow with the job.  A whole job's
 * operation first changes its context's metrics, which the join hook
 * reads, so that tasks joining during the batches are the hook's.
 */
#define BCS_DIST_BATCH	64

/*
 * The tasks of live job @id, a reference each, in *@tasks and *@nr:
 * those that are in it now.  Under RCU, interrupts on.
 */
static int bcs_dist_snapshot(u32 id, struct task_struct ***tasks, u32 *nr)
{
	struct task_struct **t = NULL;
	struct bcs_kjob *job;
	struct bcs_task *bt;
	u32 cap = 0, n = 0;
	bool more = true;

	while (more) {
		if (t) {
			while (n)
				put_task_struct(t[--n]);
			kvfree(t);
		}
		rcu_read_lock();
		job = bcs_dist_job_find(id);
		if (job)
			cap = max(cap * 2, READ_ONCE(job->nr_tasks) + 16);
		rcu_read_unlock();
		if (!job)
			return -ENOENT;
		t = kvmalloc_array(cap, sizeof(*t), GFP_KERNEL);
		if (!t)
			return -ENOMEM;
		more = false;
		rcu_read_lock();
		job = bcs_dist_job_find(id);
		/* A task's reference is its bcs_task's until a grace period. */
		if (job) {
			list_for_each_entry_rcu(bt, &job->tasks, job_node) {
				if (n == cap) {
					more = true;
					break;
				}
				t[n] = bt->task;
				get_task_struct(t[n++]);
			}
		}
		rcu_read_unlock();
	}
	*tasks = t;
	*nr = n;
	return 0;
}

/* How many of @tasks have no tracker: an estimate, under RCU. */
static u32 bcs_dist_want(struct task_struct **tasks, u32 nr)
{
	u32 i, want = 0;

	rcu_read_lock();
	for (i = 0; i < nr; i++)
		want += !bcs_dist_find(tasks[i]);
	rcu_read_unlock();
	return want;
}

/* -ENOENT or -ESRCH unless each of @tasks is in the job of @ctl. */
static int bcs_dist_check_pids(const struct bcs_dist_ctl *ctl,
			       struct task_struct **tasks, u32 nr)
{
	struct bcs_kjob *job;
	struct bcs_task *bt;
	unsigned long flags;
	u32 from, i;
	int err = 0;

	for (from = 0; from < nr && !err; from += BCS_DIST_BATCH) {
		spin_lock_irqsave(&bcs_lock, flags);
		spin_lock(&bcs_dist_lock);
		job = bcs_dist_job_find(ctl->job);
		if (ctl->op == BCS_DIST_ENABLE ? !job :
		    !bcs_dist_ctx_find(ctl->job))
			err = -ENOENT;
		for (i = from; i < min(nr, from + BCS_DIST_BATCH) && !err;
		     i++) {
			bt = job ? bcs_task_find(tasks[i]) : NULL;
			if (!bt || bt->job != job)
				err = -ESRCH;
		}
		spin_unlock(&bcs_dist_lock);
		spin_unlock_irqrestore(&bcs_lock, flags);
	}
	return err;
}

/*
 * May the caller (not an administrator) release all of @ctx: is every
 * tracker of its uid?  A walk only if trackers of several uids were ever
 * added.  bcs_dist_lock held.
 */
static bool bcs_dist_may_release(struct bcs_dist_ctx *ctx)
{
	struct bcs_dist_task *tr;

	if (!ctx->mixed)
		return !ctx->uid_set || bcs_dist_may_see_ctx(ctx, false);
	list_for_each_entry(tr, &ctx->tasks, node)
		if (!bcs_dist_may_see(tr, false))
			return false;
	return true;
}

/*
 * The start of an operation, under bcs_lock and bcs_dist_lock: the
 * context found, or created by an enable (-EAGAIN until @p has one), the
 * job's bound checked for @want new trackers, and for a whole job its
 * metrics changed.  Return: 0 or a negative errno.
 */
static int bcs_dist_begin(const struct bcs_dist_ctl *ctl, bool admin,
			  u32 want, struct bcs_dist_pool *p)
{
	struct bcs_kjob *job = bcs_dist_job_find(ctl->job);
	struct bcs_dist_ctx *ctx = bcs_dist_ctx_find(ctl->job);
	u32 m;

	if (ctl->op == BCS_DIST_ENABLE ? !job : !ctx)
		return -ENOENT;
	if (ctl->op == BCS_DIST_RELEASE && !ctl->nr_pids && !admin &&
	    !bcs_dist_may_release(ctx))
		return -EPERM;
	if (ctl->op == BCS_DIST_ENABLE) {
		/* Trackers replaced (same pid) counted too: a bound below. */
		if ((ctx ? ctx->nr_tasks : 0) + want >
		    READ_ONCE(bcs_dist_max_job))
			return -ENOSPC;
		if (!ctx && !p->ctx)
			return -EAGAIN;
	}
	if (!ctx) {
		if (xa_is_err(xa_store(&bcs_dist_ctxs_xa, ctl->job, p->ctx,
				       GFP_ATOMIC | __GFP_ACCOUNT |
				       __GFP_NOWARN)))
			return -ENOMEM;
		ctx = p->ctx;
		p->ctx = NULL;
		INIT_LIST_HEAD(&ctx->tasks);
		xa_init(&ctx->pids);
		ctx->job = ctl->job;
		list_add_tail(&ctx->node, &bcs_dist_ctxs);
		bcs_dist_nr_ctx++;
	}
	if (ctl->nr_pids)
		return 0;
	switch (ctl->op) {
	case BCS_DIST_ENABLE:
		ctx->metrics |= ctl->metrics;
		for (m = 0; m < BCS_DIST_METRICS; m++)
			if (ctl->metrics & BIT(m))
				ctx->sub_bits[m] = ctl->sub_bits;
		break;
	case BCS_DIST_DISABLE:
		ctx->metrics &= ~ctl->metrics;
		break;
	default:
		ctx->metrics = 0;
		break;
	}
	return 0;
}

/*
 * One batch of tasks @tasks[@from..@to) of job @ctl->job: those still in
 * it enabled, disabled or released.  Return: 0, -EAGAIN if @p must grow
 * first (an enable), -ENOENT if the job or its context went meanwhile, or
 * the first error of bcs_dist_task_add().  bcs_lock and bcs_dist_lock
 * held.
 */
static int bcs_dist_batch(const struct bcs_dist_ctl *ctl,
			  struct task_struct **tasks, u32 from, u32 to,
			  struct bcs_dist_pool *p, struct list_head *released)
{
	struct bcs_kjob *job = bcs_dist_job_find(ctl->job);
	struct bcs_dist_ctx *ctx = bcs_dist_ctx_find(ctl->job);
	struct bcs_dist_task *tr;
	struct bcs_task *bt;
	int err = 0, e;
	u64 now;
	u32 i;

	if (!ctx || !job)
		return -ENOENT;
	if (ctl->op == BCS_DIST_ENABLE) {
		p->want_tr = 0;
		p->want_hist = 0;
		for (i = from; i < to; i++) {
			bt = bcs_task_find(tasks[i]);
			if (bt && bt->job == job)
				bcs_dist_count(bt, ctl, p);
		}
		if (p->want_tr > p->nr_tr - p->used_tr ||
		    p->want_hist > p->nr_hist - p->used_hist)
			return -EAGAIN;
	}
	now = bcs_dist_now();
	for (i = from; i < to; i++) {
		bt = bcs_task_find(tasks[i]);
		if (!bt || bt->job != job)
			continue;	/* left the job meanwhile */
		if (ctl->op == BCS_DIST_ENABLE) {
			e = bcs_dist_enable_one(ctx, bt, ctl, p, now);
			err = err ?: e;
			continue;
		}
		tr = bcs_dist_of(bt);
		if (tr && ctl->op == BCS_DIST_DISABLE)
			bcs_dist_disable_one(tr, ctl->metrics, now);
		else if (tr)
			bcs_dist_release_one(ctx, tr, released, now);
	}
	return err;
}

/*
 * Disable or release the trackers of @ctl->job's context from key *@key
 * on, at most BCS_DIST_BATCH of them; *@key set past the last one.
 * Return: true while more may follow.  bcs_dist_lock held.
 */
static bool bcs_dist_ctx_batch(const struct bcs_dist_ctl *ctl,
			       unsigned long *key, struct list_head *released)
{
	struct bcs_dist_ctx *ctx = bcs_dist_ctx_find(ctl->job);
	struct bcs_dist_task *tr, *tmp;
	unsigned long k;
	u32 n = 0;
	u64 now;

	if (!ctx)
		return false;
	now = bcs_dist_now();
	xa_for_each_start(&ctx->pids, k, tr, *key) {
		if (ctl->op == BCS_DIST_RELEASE)
			bcs_dist_release_one(ctx, tr, released, now);
		else if (!tr->gone)
			bcs_dist_disable_one(tr, ctl->metrics, now);
		if (++n == BCS_DIST_BATCH) {
			*key = k + 1;
			return true;
		}
	}
	if (ctl->op == BCS_DIST_RELEASE) {
		/* Emptied: the list holds what the xarray did. */
		list_for_each_entry_safe(tr, tmp, &ctx->tasks, node)
			bcs_dist_release_one(ctx, tr, released, now);
		bcs_dist_ctx_free(ctx);
	}
	return false;
}

/*
 * The operation, in batches: bcs_dist_mutex held, @tasks the listed
 * tasks, or a whole job's for an enable.
 */
static int bcs_dist_run(const struct bcs_dist_ctl *ctl, bool admin,
			struct task_struct **tasks, u32 nr,
			struct bcs_dist_pool *p, struct list_head *released)
{
	unsigned long flags, key = 0;
	u32 from, want = 0;
	bool more = true;
	int err, e;

	if (ctl->nr_pids) {
		err = bcs_dist_check_pids(ctl, tasks, nr);
		if (err)
			return err;
	}
	if (ctl->op == BCS_DIST_ENABLE)
		want = bcs_dist_want(tasks, nr);
	do {
		spin_lock_irqsave(&bcs_lock, flags);
		spin_lock(&bcs_dist_lock);
		err = bcs_dist_begin(ctl, admin, want, p);
		spin_unlock(&bcs_dist_lock);
		spin_unlock_irqrestore(&bcs_lock, flags);
		if (err == -EAGAIN) {
			p->want_tr = 0;
			p->want_hist = 0;
			e = bcs_dist_pool_fill(p, ctl->sub_bits);
			if (e)
				return e;
		}
	} while (err == -EAGAIN);
	if (err)
		return err;

	if (!ctl->nr_pids && ctl->op != BCS_DIST_ENABLE) {
		while (more) {
			spin_lock_irqsave(&bcs_dist_lock, flags);
			more = bcs_dist_ctx_batch(ctl, &key, released);
			spin_unlock_irqrestore(&bcs_dist_lock, flags);
		}
		return 0;
	}
	for (from = 0; from < nr;) {
		spin_lock_irqsave(&bcs_lock, flags);
		spin_lock(&bcs_dist_lock);
		e = bcs_dist_batch(ctl, tasks, from,
				   min(nr, from + BCS_DIST_BATCH), p, released);
		spin_unlock(&bcs_dist_lock);
		spin_unlock_irqrestore(&bcs_lock, flags);
		if (e == -EAGAIN) {
			e = bcs_dist_pool_fill(p, ctl->sub_bits);
			if (e)
				return err ?: e;
			continue;
		}
		if (e == -ENOENT)
			return err ?: e;
		err = err ?: e;
		from += BCS_DIST_BATCH;
	}
	return err;
}

/**
 * bcs_dist_ctl - BCS_IOC_DIST_CTL: enable, disable or release distributions
 * @ctl: the argument, its size and reserved fields checked
 *
 * Context: process, may sleep.  Return: 0 or a negative errno.
 */
int bcs_dist_ctl(const struct bcs_dist_ctl *ctl)
{
	bool admin = bcs_dist_admin();
	struct task_struct **tasks = NULL;
	struct bcs_dist_pool pool = {};
	struct bcs_dist_task *tr, *tmp;
	LIST_HEAD(released);
	s32 *pids = NULL;
	u32 i, nr = 0;
	int err = 0;

	if (ctl->op > BCS_DIST_RELEASE || ctl->nr_pids > BCS_DIST_PIDS_MAX ||
	    (!ctl->nr_pids && ctl->pids))
		return -EINVAL;
	if (ctl->op == BCS_DIST_RELEASE ?
	    ctl->metrics || ctl->sub_bits :
	    !ctl->metrics || (ctl->metrics & ~BCS_DIST_ALL))
		return -EINVAL;
	if (ctl->op == BCS_DIST_ENABLE ?
	    ctl->sub_bits > BCS_HIST_SUB_BITS_MAX : ctl->sub_bits)
		return -EINVAL;
	if (!ctl->job)
		return -ENOENT;

	if (ctl->nr_pids) {
		pids = kvmalloc_array(ctl->nr_pids, sizeof(*pids), GFP_KERNEL);
		tasks = kvcalloc(ctl->nr_pids, sizeof(*tasks), GFP_KERNEL);
		if (!pids || !tasks) {
			err = -ENOMEM;
			goto out;
		}
		nr = ctl->nr_pids;
		if (copy_from_user(pids, u64_to_user_ptr(ctl->pids),
				   ctl->nr_pids * sizeof(*pids))) {
			err = -EFAULT;
			goto out;
		}
		err = bcs_dist_get_tasks(pids, ctl->nr_pids, tasks);
	} else {
		err = bcs_dist_may_job(ctl->job);
	}
	if (err)
		goto out;

	if (mutex_lock_killable(&bcs_dist_mutex)) {
		err = -EINTR;
		goto out;
	}
	/* The probes must run before the first task is tracked. */
	if (ctl->op == BCS_DIST_ENABLE)
		err = bcs_dist_probes(true);
	if (!err && !ctl->nr_pids && ctl->op == BCS_DIST_ENABLE)
		err = bcs_dist_snapshot(ctl->job, &tasks, &nr);
	if (!err)
		err = bcs_dist_run(ctl, admin, tasks, nr, &pool, &released);
	if (!list_empty(&released)) {
		synchronize_rcu();
		list_for_each_entry_safe(tr, tmp, &released, node)
			bcs_dist_task_free(tr);
	}
	/* Probes nothing wants any more go later (bcs_dist_linger_fn()). */
	if (bcs_dist_registered && !bcs_dist_wanted())
		mod_delayed_work(system_wq, &bcs_dist_linger_work,
				 msecs_to_jiffies(READ_ONCE(bcs_dist_linger_ms)));
	mutex_unlock(&bcs_dist_mutex);
out:
	bcs_dist_pool_free(&pool);
	for (i = 0; tasks && i < nr; i++)
		if (tasks[i])
			put_task_struct(tasks[i]);
	kvfree(tasks);
	kvfree(pids);
	return err;
}

static void bcs_dist_fill_totals(const struct bcs_dist_task *tr,
				 struct bcs_dist_totals *t, u64 now)
{
	u64 d = tr->active && now > tr->since ? now - tr->since : 0;

	memset(t, 0, sizeof(*t));
	t->start_ns = tr->start_ns;
	t->tracked_ns = tr->tracked_ns;
	if (tr->active)
		t->tracked_ns += tr->since + d - tr->period_start;
	t->run_ns = tr->time[BCS_DIST_BURST];
	t->blocked_ns = tr->time[BCS_DIST_BLOCKED];
	t->suspended_ns = tr->time[BCS_DIST_SUSPENDED];
	t->wait_ns = tr->time[BCS_DIST_WAIT];
	switch (tr->state) {
	case BCS_DIST_BURST:
		t->run_ns += d;
		break;
	case BCS_DIST_BLOCKED:
		t->blocked_ns += d;
		break;
	case BCS_DIST_SUSPENDED:
		t->suspended_ns += d;
		break;
	default:
		t->wait_ns += d;
		break;
	}
	t->bursts = tr->bursts;
	t->preemptions = tr->preemptions;
	t->suspensions = tr->suspensions;
	t->state = tr->state;
	t->flags = (tr->gone ? BCS_DIST_GONE : 0) |
		   (tr->active ? BCS_DIST_TRACKING : 0);
}

/*
 * bcs_dist_lookup() for a caller in a pid namespace other than the
 * initial one, whose pids are not the keys of @ctx->pids: a walk of them
 * all, at most dist_max_job_tasks.  RCU held.
 */
static struct bcs_dist_task *bcs_dist_lookup_ns(struct bcs_dist_ctx *ctx,
						struct bcs_dist_read *rd,
						bool all, int *err)
{
	struct bcs_dist_task *tr, *found = NULL;
	unsigned long k;
	pid_t v, best = 0;

	xa_for_each(&ctx->pids, k, tr) {
		v = pid_vnr(tr->pid);
		if (v <= 0)
			continue;
		if (rd->flags & BCS_DIST_NEXT) {
			if (v > rd->pid && (!found || v < best) &&
			    bcs_dist_may_see(tr, all)) {
				found = tr;
				best = v;
			}
		} else if (v == rd->pid) {
			found = tr;
			best = v;
		}
	}
	if (found && !bcs_dist_may_see(found, all)) {
		*err = -EPERM;
		return NULL;
	}
	if (found)
		rd->pid = best;
	return found;
}

/*
 * The tracker @rd names in @ctx: pid @rd->pid (one tracker a pid); or
 * with BCS_DIST_NEXT the visible one with the smallest pid above it,
 * @rd->pid updated.  The permission is tested before the tracker is
 * read, and for BCS_DIST_NEXT before the walk: only trackers visible to
 * the caller are returned.  RCU held.
 */
static struct bcs_dist_task *bcs_dist_lookup(struct bcs_dist_ctx *ctx,
					     struct bcs_dist_read *rd,
					     bool all, int *err)
{
	struct bcs_dist_task *tr;
	unsigned long k;

	*err = -ESRCH;
	if (task_active_pid_ns(current) != &init_pid_ns)
		return !(rd->flags & BCS_DIST_NEXT) ||
		       bcs_dist_may_see_ctx(ctx, all) ?
		       bcs_dist_lookup_ns(ctx, rd, all, err) : NULL;
	if (!(rd->flags & BCS_DIST_NEXT)) {
		tr = xa_load(&ctx->pids, rd->pid);
		if (tr && !bcs_dist_may_see(tr, all)) {
			*err = -EPERM;
			return NULL;
		}
		return tr;
	}
	if (!bcs_dist_may_see_ctx(ctx, all))
		return NULL;
	k = rd->pid;
	for (tr = xa_find_after(&ctx->pids, &k, ULONG_MAX, XA_PRESENT); tr;
	     tr = xa_find_after(&ctx->pids, &k, ULONG_MAX, XA_PRESENT)) {
		if (bcs_dist_may_see(tr, all)) {
			rd->pid = k;
			return tr;
		}
	}
	return NULL;
}

/**
 * bcs_dist_read - BCS_IOC_DIST_READ: a task's totals and one histogram
 * @rd: the argument, its size and reserved fields checked; updated
 *
 * The tracker is found and its histogram copied into a buffer of the
 * histogram's size under bcs_dist_mutex, which is dropped before the copy
 * to user space: a buffer that faults slowly (userfaultfd, FUSE) holds
 * up no other reader, nor the freeing of trackers.
 *
 * Context: process, may sleep.  Return: 0, -ENOSPC with @rd updated, or
 * another negative errno.
 */
int bcs_dist_read(struct bcs_dist_read *rd)
{
	bool all = bcs_dist_admin() ||
		   ns_capable_noaudit(&init_user_ns, CAP_SYS_PTRACE);
	struct bcs_hist_bucket *out = NULL;
	struct bcs_hist_header hdr = {};
	struct bcs_dist_ctx *ctx;
	struct bcs_dist_task *tr;
	struct bcs_dist_hist *h;
	u64 *counts = NULL;
	u32 nr = 0, k = 0, i;
	unsigned long flags;
	size_t need = 0;
	int err;

	if (rd->metric >= BCS_DIST_METRICS || (rd->flags & ~BCS_DIST_NEXT))
		return -EINVAL;
	if (!rd->job)
		return -ENOENT;
	if (rd->pid < 0 || (!rd->pid && !(rd->flags & BCS_DIST_NEXT)))
		return -ESRCH;
	if (mutex_lock_killable(&bcs_dist_mutex))
		return -EINTR;

	/* Trackers are freed only under bcs_dist_mutex, which is held. */
	rcu_read_lock();
	ctx = bcs_dist_ctx_find(rd->job);
	tr = ctx ? bcs_dist_lookup(ctx, rd, all, &err) : NULL;
	if (!ctx)
		err = -ENOENT;
	rcu_read_unlock();
	if (!tr)
		goto unlock;

	/* Histograms change only under bcs_dist_mutex, which is held. */
	h = tr->hist[rd->metric];
	if (h) {
		nr = h->nr;
		counts = kvmalloc_array(nr, sizeof(*counts), GFP_KERNEL);
		if (!counts) {
			err = -ENOMEM;
			goto unlock;
		}
	}
	raw_spin_lock_irqsave(&tr->lock, flags);
	bcs_dist_fill_totals(tr, &rd->totals, bcs_dist_now());
	if (h) {
		memcpy(counts, h->buckets, nr * sizeof(*counts));
		hdr.magic = BCS_HIST_MAGIC;
		hdr.version = BCS_HIST_VERSION;
		hdr.sub_bits = h->sub_bits;
		hdr.flags = h->saturated ? BCS_HIST_SATURATED : 0;
		hdr.count = h->count;
		hdr.sum = h->sum;
		hdr.min = h->min;
		hdr.max = h->max;
	}
	raw_spin_unlock_irqrestore(&tr->lock, flags);
	/* From here on, only the snapshot in @counts and @hdr. */
	mutex_unlock(&bcs_dist_mutex);

	err = 0;
	if (h) {
		for (i = 0; i < nr; i++)
			k += !!counts[i];
		hdr.nr_buckets = k;
		need = sizeof(hdr) + (size_t)k * sizeof(*out);
	}
	/* No buffer at all asks for the size; a buffer too small is -ENOSPC. */
	if (need > rd->buf_size) {
		if (rd->buf || rd->buf_size)
			err = -ENOSPC;
	} else if (h) {
		out = kvcalloc(k + 1, sizeof(*out), GFP_KERNEL);
		if (!out) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0, k = 0; i < nr; i++) {
			if (!counts[i])
				continue;
			out[k].index = i;
			out[k++].count = counts[i];
		}
		if (copy_to_user(u64_to_user_ptr(rd->buf), &hdr, sizeof(hdr)) ||
		    copy_to_user(u64_to_user_ptr(rd->buf + sizeof(hdr)), out,
				 (size_t)k * sizeof(*out)))
			err = -EFAULT;
	}
	rd->buf_size = need;
out:
	kvfree(out);
	kvfree(counts);
	return err;
unlock:
	mutex_unlock(&bcs_dist_mutex);
	goto out;
}

int bcs_dist_init(void)
{
	bcs_tp_switch = bcs_tracepoint("sched_switch");
	return bcs_tp_switch ? 0 : -ENOENT;
}

/* Module exit, after every job is gone: stop the probes, free it all. */
void bcs_dist_exit(void)
{
	struct bcs_dist_ctx *ctx, *tmp;
	unsigned long flags;

	cancel_delayed_work_sync(&bcs_dist_linger_work);
	mutex_lock(&bcs_dist_mutex);
	bcs_dist_probes(false);
	spin_lock_irqsave(&bcs_dist_lock, flags);
	list_for_each_entry_safe(ctx, tmp, &bcs_dist_ctxs, node)
		bcs_dist_ctx_drop(ctx, bcs_dist_now());
	spin_unlock_irqrestore(&bcs_dist_lock, flags);
	mutex_unlock(&bcs_dist_mutex);
	flush_work(&bcs_dist_free_work);
	bcs_dist_free_fn(NULL);
}

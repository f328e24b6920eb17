// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task distributions: the contexts of jobs (struct bcs_dist_ctx) and
 * the trackers of their tasks (struct bcs_dist_task), from allocation to
 * release; their bounds, and the hooks through which job.c tells of tasks
 * joining and leaving and of jobs created and destroyed.
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
 * Locking: see dist_internal.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bcs_hist.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "dist_ctx.h"
#include "dist_internal.h"
#include "dist_probe.h"

/* The locks of all the distributions: see dist_internal.h. */
DEFINE_MUTEX(bcs_dist_mutex);
DEFINE_SPINLOCK(bcs_dist_lock);
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
static LIST_HEAD(bcs_dist_free_list);		/* bcs_dist_lock */
/* Contexts of destroyed jobs, oldest destruction first. */
static LIST_HEAD(bcs_dist_dead);		/* bcs_dist_lock */
static u32 bcs_dist_nr_dead;			/* bcs_dist_lock */
static u64 bcs_dist_dead_dropped;		/* bcs_dist_lock */

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
unsigned int bcs_dist_max_job = 4096;
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

struct bcs_dist_hist *bcs_dist_hist_alloc(u32 sub_bits, gfp_t gfp)
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

struct bcs_dist_task *bcs_dist_task_alloc(gfp_t gfp)
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
void bcs_dist_task_free(struct bcs_dist_task *tr)
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

/*
 * Make @tr the tracker of @bt in @ctx, in place of one of a task of the
 * same pid that left: 0, or -ENOSPC (@ctx is full), -EDQUOT (the task's
 * uid has its most trackers) or -ENOMEM, with @tr untouched.  bcs_lock
 * and bcs_dist_lock held.
 */
int bcs_dist_task_add(struct bcs_dist_ctx *ctx, struct bcs_dist_task *tr,
		      struct bcs_task *bt)
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
	bcs_dist_hash_add(tr);
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
void bcs_dist_task_del(struct bcs_dist_ctx *ctx, struct bcs_dist_task *tr)
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
struct bcs_dist_task *bcs_dist_of(const struct bcs_task *bt)
{
	struct bcs_dist_task *tr = bcs_dist_find(bt->task);

	return tr && tr->bt == bt ? tr : NULL;
}

/* Context: bcs_dist_lock or RCU. */
struct bcs_dist_ctx *bcs_dist_ctx_find(u32 job)
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
void bcs_dist_task_gone(struct bcs_dist_task *tr, u64 now)
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
	bcs_dist_hash_del(tr);
}

/* Take @ctx, emptied of trackers, off the lists; free it.  bcs_dist_lock. */
void bcs_dist_ctx_free(struct bcs_dist_ctx *ctx)
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

/*
 * Make the empty @ctx the context of job @job: 0, or -ENOMEM.  bcs_lock
 * and bcs_dist_lock held.
 */
int bcs_dist_ctx_add(struct bcs_dist_ctx *ctx, u32 job)
{
	if (xa_is_err(xa_store(&bcs_dist_ctxs_xa, job, ctx,
			       GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN)))
		return -ENOMEM;
	INIT_LIST_HEAD(&ctx->tasks);
	xa_init(&ctx->pids);
	ctx->job = job;
	list_add_tail(&ctx->node, &bcs_dist_ctxs);
	bcs_dist_nr_ctx++;
	return 0;
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

/* Is some task tracked, or some job's whole enabled? */
bool bcs_dist_wanted(void)
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

/* Module exit, after every job is gone: stop the probes, free it all. */
void bcs_dist_exit(void)
{
	struct bcs_dist_ctx *ctx, *tmp;
	unsigned long flags;

	bcs_dist_linger_cancel();
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

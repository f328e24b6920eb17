// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task distributions: the ioctls.  BCS_IOC_DIST_CTL enables, disables
 * or releases the distributions of listed tasks of a job or of the whole
 * job, for a caller that may signal those tasks (an administrator for any);
 * BCS_IOC_DIST_READ copies out a task's totals and one histogram, of the
 * caller's uid unless it is an administrator or may trace.
 *
 * BCS_IOC_DIST_CTL works in batches of BCS_DIST_BATCH tasks (see
 * bcs_dist_run()), so that no section with interrupts off grows with the
 * job.
 *
 * Locking: see dist_internal.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bcs_hist.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dist_ctx.h"
#include "dist_internal.h"
#include "dist_ioctl.h"
#include "dist_probe.h"

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
	/* A sleep not yet split goes to the histograms of its time. */
	bcs_dist_settle(tr);
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
	bcs_dist_settle(tr);
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
	int err;
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
		err = bcs_dist_ctx_add(p->ctx, ctl->job);
		if (err)
			return err;
		ctx = p->ctx;
		p->ctx = NULL;
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
	bcs_dist_linger();
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
	bcs_dist_settle(tr);
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

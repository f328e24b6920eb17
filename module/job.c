// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs and their tasks: creation, attach and detach, inheritance on
 * fork and clone, departure on exit, and per-task accounting.
 *
 * Tasks are found by their task_struct in bcs_task_hash.  bcs follows
 * forks and exits through the sched_process_fork and sched_process_exit
 * tracepoints, because out-of-tree code has no other hook on either.  Both
 * probes run for every task in the system, so they return at once while no
 * job exists; otherwise they take bcs_lock, which also orders them against
 * bcs_job_attach() (see the comment there).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "job.h"

/* See job.h for what each is protected by. */
DEFINE_SPINLOCK(bcs_lock);
LIST_HEAD(bcs_jobs);
u32 bcs_nr_jobs;
u32 bcs_nr_tasks;
u32 bcs_nr_parked;
u32 bcs_nr_fillers;
/* bcs_lock: jobs whose move waits for a slice (struct bcs_kjob.pending). */
static u32 bcs_nr_pending;
u64 bcs_attach_failures;
LIST_HEAD(bcs_all_tasks);
/* Set by bcs_job_init() before the probes are registered, then constant. */
const struct bcs_job_hooks *bcs_hooks;
/* bcs_lock for writers, RCU for readers. */
static DEFINE_HASHTABLE(bcs_task_hash, 10);
static u32 bcs_next_id = 1;		/* bcs_lock */
static struct kmem_cache *bcs_task_cache;

static struct tracepoint *bcs_tp_fork, *bcs_tp_exit;

/*
 * Reaping: a job whose owner is not root is destroyed once it has had no
 * task for bcs_reap_s seconds (0: never).  bcs_reap_work runs at the
 * earliest moment one may be due and queues itself again for the next;
 * a job becoming empty (bcs_reap_kick()) queues it if it is idle.  Jobs
 * owned by root (bcsd's, made from the master's map, which may stay empty
 * while the map holds them) are never reaped.
 */
#define BCS_REAP_S_MAX		1000000U
#define BCS_REAP_BATCH		16

static unsigned int bcs_reap_s = 60;
static bool bcs_reap_on;		/* bcs_lock: between init and exit */
static void bcs_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(bcs_reap_work, bcs_reap_fn);

static int bcs_reap_set(const char *val, const struct kernel_param *kp)
{
	unsigned long flags;
	int err;

	err = param_set_uint_minmax(val, kp, 0, BCS_REAP_S_MAX);
	if (err)
		return err;
	/* Look again at once: a shorter grace may be due already. */
	spin_lock_irqsave(&bcs_lock, flags);
	if (bcs_reap_on)
		mod_delayed_work(system_wq, &bcs_reap_work, 0);
	spin_unlock_irqrestore(&bcs_lock, flags);
	return 0;
}

static const struct kernel_param_ops bcs_reap_ops = {
	.set = bcs_reap_set,
	.get = param_get_uint,
};

module_param_cb(reap_empty_s, &bcs_reap_ops, &bcs_reap_s, 0644);
MODULE_PARM_DESC(reap_empty_s,
		 "Seconds after which a job not owned by root that has no task is destroyed (0: never, 0..1000000, default 60)");

/* A job that reaping may destroy once its grace is over.  bcs_lock held. */
static bool bcs_job_reapable(const struct bcs_kjob *job)
{
	return !job->nr_tasks && !job->dead &&
	       !uid_eq(job->owner, GLOBAL_ROOT_UID);
}

/*
 * @job may have become reapable: see to it that reaping looks at it when
 * its grace is over.  A queued run comes no later than that (it is for an
 * older empty job, or was moved earlier by bcs_reap_set()).  bcs_lock held.
 */
static void bcs_reap_kick(const struct bcs_kjob *job)
{
	unsigned int s = READ_ONCE(bcs_reap_s);

	lockdep_assert_held(&bcs_lock);
	if (bcs_reap_on && s && bcs_job_reapable(job))
		queue_delayed_work(system_wq, &bcs_reap_work,
				   (unsigned long)s * HZ);
}

/*
 * May the caller act on @job as its owner: its effective uid is the
 * owner's, or it has CAP_SYS_ADMIN (not audited: ownership would do).
 * Not under bcs_lock (the capability check may sleep).
 */
static bool bcs_job_may_own(const struct bcs_kjob *job)
{
	return uid_eq(current_euid(), job->owner) ||
	       ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

static struct bcs_kjob *bcs_job_find(u32 id)
{
	struct bcs_kjob *job;

	lockdep_assert_held(&bcs_lock);
	list_for_each_entry(job, &bcs_jobs, node)
		if (job->id == id)
			return job;
	return NULL;
}

/* Context: bcs_lock or rcu_read_lock held. */
struct bcs_task *bcs_task_find(struct task_struct *t)
{
	struct bcs_task *bt;

	hash_for_each_possible_rcu(bcs_task_hash, bt, hash, (unsigned long)t)
		if (bt->task == t)
			return bt;
	return NULL;
}

static void bcs_job_release(struct kref *ref)
{
	/* RCU readers of bcs_jobs may still look at it. */
	kfree_rcu(container_of(ref, struct bcs_kjob, ref), rcu);
}

void bcs_job_put(struct bcs_kjob *job)
{
	kref_put(&job->ref, bcs_job_release);
}

static void bcs_task_free_rcu(struct rcu_head *rcu)
{
	struct bcs_task *bt = container_of(rcu, struct bcs_task, rcu);
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	list_del(&bt->all_node);
	spin_unlock_irqrestore(&bcs_lock, flags);
	put_task_struct(bt->task);
	kmem_cache_free(bcs_task_cache, bt);
}

/* Context: any.  The last reference frees @bt after an RCU grace period. */
void bcs_task_put(struct bcs_task *bt)
{
	if (refcount_dec_and_test(&bt->ref))
		call_rcu(&bt->rcu, bcs_task_free_rcu);
}

static struct bcs_task *bcs_task_alloc(gfp_t gfp)
{
	struct bcs_task *bt = kmem_cache_zalloc(bcs_task_cache, gfp);

	if (bt)
		refcount_set(&bt->ref, 1);
	return bt;
}

static u64 bcs_task_delay(const struct task_struct *t)
{
#ifdef CONFIG_SCHED_INFO
	return t->sched_info.run_delay;
#else
	return 0;
#endif
}

/* Make @bt a member of @job for task @t.  Takes over @bt's reference. */
static void bcs_task_link(struct bcs_task *bt, struct bcs_kjob *job,
			  struct task_struct *t)
{
	lockdep_assert_held(&bcs_lock);
	get_task_struct(t);
	bt->task = t;
	bt->job = job;
	bt->attach_real_ns = ktime_get_real_ns();
	bt->attach_ns = ktime_get_ns();
	bt->exec_at_attach = t->se.sum_exec_runtime;
	bt->exec_at_switch = bt->exec_at_attach;
	bt->delay_at_attach = bcs_task_delay(t);
	hash_add_rcu(bcs_task_hash, &bt->hash, (unsigned long)t);
	list_add_tail_rcu(&bt->job_node, &job->tasks);
	list_add_tail(&bt->all_node, &bcs_all_tasks);
	job->nr_tasks++;
	bcs_nr_tasks++;
	bcs_hooks->linked(bt);
	if (job->suspended)
		bcs_hooks->park(bt);
}

/*
 * Remove @bt from its job.  The caller drops the membership reference with
 * bcs_task_put() once it has released bcs_lock.  A parked task is woken
 * through its job's wait queue by the caller and leaves by itself.
 */
static void bcs_task_unlink(struct bcs_task *bt)
{
	struct bcs_kjob *job = bt->job;

	lockdep_assert_held(&bcs_lock);
	job->gone_run_ns += bcs_task_run_ns(bt);
	job->gone_suspended_ns += bcs_task_suspended_ns(bt, ktime_get_ns());
	/* A switch waiting for this task waits no longer. */
	bcs_hooks->parked(bt);
	bcs_hooks->woken(bt);
	bcs_hooks->unlinked(bt);
	hash_del_rcu(&bt->hash);
	list_del_rcu(&bt->job_node);
	WRITE_ONCE(bt->job, NULL);
	job->nr_tasks--;
	bcs_nr_tasks--;
	if (!job->nr_tasks) {
		job->empty_since = ktime_get_ns();
		bcs_reap_kick(job);
	}
}

u64 bcs_task_run_ns(const struct bcs_task *bt)
{
	u64 exec = READ_ONCE(bt->task->se.sum_exec_runtime);

	return exec > bt->exec_at_attach ? exec - bt->exec_at_attach : 0;
}

u64 bcs_task_suspended_ns(const struct bcs_task *bt, u64 now)
{
	u64 ns = bt->suspended_ns;

	if (bt->parked && now > bt->park_start_ns)
		ns += now - bt->park_start_ns;
	return ns;
}

/* Context: bcs_lock or rcu_read_lock() held (a snapshot, as for jobs). */
void bcs_task_fill_stat(const struct bcs_task *bt, struct bcs_task_stat *st,
			u64 now)
{
	struct task_struct *t = bt->task;
	u64 elapsed = now - bt->attach_ns, busy;
	u64 delay = bcs_task_delay(t) - bt->delay_at_attach;
	struct bcs_kjob *job = READ_ONCE(bt->job);

	memset(st, 0, sizeof(*st));
	/* As the caller sees them: 0 if outside its pid namespace. */
	st->pid = task_pid_vnr(t);
	st->tgid = task_tgid_vnr(t);
	st->job = job ? job->id : 0;
	if (READ_ONCE(bt->parked))
		st->state = BCS_TASK_PARKED;
	else if (task_is_running(t))
		st->state = BCS_TASK_RUNNABLE;
	else
		st->state = BCS_TASK_BLOCKED;
	st->attach_ns = bt->attach_real_ns;
	st->run_ns = bcs_task_run_ns(bt);
	st->suspended_ns = bcs_task_suspended_ns(bt, now);
	/* What is left of the time since attach once the task's CPU time,
	 * its wait for a CPU and its parked time are taken away.
	 */
	busy = st->run_ns + st->suspended_ns + delay;
	st->blocked_ns = elapsed > busy ? elapsed - busy : 0;
	st->slices_run = bt->slices_run;
	st->parks = bt->parks;
}

/*
 * The set of rows of a job in @row that also runs in @rows: @row's bit
 * included, none with no row.  False if @row is no row nor BCS_ROW_NONE,
 * or is BCS_ROW_NONE with rows.
 */
static bool bcs_job_rows(u32 row, u64 rows, u64 *set)
{
	if (row == BCS_ROW_NONE) {
		*set = 0;
		return !rows;
	}
	if (row >= BCS_ROWS_MAX)
		return false;
	*set = rows | BIT_ULL(row);
	return true;
}

/**
 * bcs_job_create - create a job
 * @id: its id, 0 to pick a free one
 * @row: its home row, or BCS_ROW_NONE
 * @rows: the rows it also runs in (bit r for row r), 0 with BCS_ROW_NONE
 * @filler: a filler job, which also runs where the node is idle
 * @owner: its owner, a valid uid
 * @id_out: the id used
 *
 * Return: 0, -EINVAL, -ENOMEM, -ENOSPC or -EEXIST.
 */
int bcs_job_create(u32 id, u32 row, u64 rows, bool filler, kuid_t owner,
		   u32 *id_out)
{
	struct bcs_kjob *job;
	unsigned long flags;
	u64 set;
	int err = 0;

	if ((id && !bcs_job_id_valid(id)) || !bcs_job_rows(row, rows, &set) ||
	    !uid_valid(owner))
		return -EINVAL;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	INIT_LIST_HEAD(&job->tasks);
	init_waitqueue_head(&job->wq);
	kref_init(&job->ref);
	job->row = row;
	job->rows = set;
	job->filler = filler;
	job->owner = owner;

	spin_lock_irqsave(&bcs_lock, flags);
	if (bcs_nr_jobs >= BCS_JOBS_MAX) {
		err = -ENOSPC;
	} else if (id) {
		if (bcs_job_find(id))
			err = -EEXIST;
	} else {
		/*
		 * In turn, skipping the ids in use, by the rule bcsd's master
		 * follows too.  At most BCS_JOBS_MAX jobs: this ends quickly.
		 */
		while (bcs_job_find(bcs_next_id))
			bcs_next_id = bcs_job_id_next(bcs_next_id);
		id = bcs_next_id;
		bcs_next_id = bcs_job_id_next(bcs_next_id);
	}
	if (!err) {
		job->id = id;
		list_add_tail_rcu(&job->node, &bcs_jobs);
		bcs_nr_fillers += filler;
		job->empty_since = ktime_get_ns();
		bcs_reap_kick(job);
		bcs_hooks->created(job);
		/* Pairs with smp_mb() in the fork and exit probes. */
		WRITE_ONCE(bcs_nr_jobs, bcs_nr_jobs + 1);
	}
	spin_unlock_irqrestore(&bcs_lock, flags);

	if (err) {
		kfree(job);
		return err;
	}
	*id_out = id;
	return 0;
}

static void bcs_put_list(struct list_head *list)
{
	struct bcs_task *bt, *tmp;

	list_for_each_entry_safe(bt, tmp, list, put_node) {
		list_del(&bt->put_node);
		bcs_task_put(bt);
	}
}

/* Detach every task of @job, moving them to @gone.  bcs_lock held. */
static void bcs_job_empty(struct bcs_kjob *job, struct list_head *gone)
{
	struct bcs_task *bt, *tmp;

	list_for_each_entry_safe(bt, tmp, &job->tasks, job_node) {
		bcs_task_unlink(bt);
		list_add_tail(&bt->put_node, gone);
	}
	WRITE_ONCE(job->suspended, false);
	wake_up_all(&job->wq);
}

/* Who destroys a job, and so what bcs_job_remove() checks first. */
enum bcs_remover {
	BCS_REMOVE_ANY,		/* the caller is allowed to */
	BCS_REMOVE_OWNER,	/* only the owner (or @admin) */
	BCS_REMOVE_REAP,	/* only if reapable and its grace is over */
};

/*
 * Destroy job @id as @who may: for BCS_REMOVE_OWNER, if @admin or the
 * caller's effective uid is the owner; for BCS_REMOVE_REAP, if the job has
 * been reapable for @grace_ns.  Return: 0, -ENOENT, -EPERM, or -EAGAIN
 * (not to be reaped).
 */
static int bcs_job_remove(u32 id, enum bcs_remover who, bool admin,
			  u64 grace_ns)
{
	struct bcs_kjob *job;
	unsigned long flags;
	LIST_HEAD(gone);
	int err = 0;

	spin_lock_irqsave(&bcs_lock, flags);
	job = bcs_job_find(id);
	if (!job)
		err = -ENOENT;
	else if (who == BCS_REMOVE_OWNER && !admin &&
		 !uid_eq(job->owner, current_euid()))
		err = -EPERM;
	else if (who == BCS_REMOVE_REAP &&
		 (!bcs_job_reapable(job) ||
		  ktime_get_ns() - job->empty_since < grace_ns))
		err = -EAGAIN;
	if (err) {
		spin_unlock_irqrestore(&bcs_lock, flags);
		return err;
	}
	list_del_rcu(&job->node);
	job->dead = true;
	bcs_nr_fillers -= job->filler;
	if (job->pending) {
		job->pending = false;
		bcs_nr_pending--;
	}
	bcs_job_empty(job, &gone);
	bcs_hooks->destroyed(job);
	WRITE_ONCE(bcs_nr_jobs, bcs_nr_jobs - 1);
	spin_unlock_irqrestore(&bcs_lock, flags);

	bcs_put_list(&gone);
	bcs_job_put(job);
	return 0;
}

int bcs_job_destroy(u32 id)
{
	return bcs_job_remove(id, BCS_REMOVE_ANY, true, 0);
}

/**
 * bcs_job_destroy_owned - destroy a job for its owner or an administrator
 * @id: the job
 *
 * Return: 0, -ENOENT, or -EPERM if the caller is neither the job's owner
 * (effective uid) nor CAP_SYS_ADMIN.
 */
int bcs_job_destroy_owned(u32 id)
{
	/* Not audited: ownership would do (bcs_job_may_own()). */
	bool admin = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);

	return bcs_job_remove(id, BCS_REMOVE_OWNER, admin, 0);
}

/*
 * Destroy the jobs whose grace is over, a batch at a time, and come back
 * when the next one will be.  A job that gets a task meanwhile is left
 * (bcs_job_remove() looks again under bcs_lock).
 */
static void bcs_reap_fn(struct work_struct *work)
{
	u64 now, next, grace_ns;
	u32 ids[BCS_REAP_BATCH];
	struct bcs_kjob *job;
	unsigned int grace, n, i;
	unsigned long flags;
	bool more;

	do {
		grace = READ_ONCE(bcs_reap_s);
		if (!grace)
			return;
		grace_ns = (u64)grace * NSEC_PER_SEC;
		next = U64_MAX;
		n = 0;
		more = false;
		now = ktime_get_ns();
		spin_lock_irqsave(&bcs_lock, flags);
		list_for_each_entry(job, &bcs_jobs, node) {
			if (!bcs_job_reapable(job))
				continue;
			if (now - job->empty_since < grace_ns)
				next = min(next, job->empty_since + grace_ns);
			else if (n < ARRAY_SIZE(ids))
				ids[n++] = job->id;
			else
				more = true;
		}
		/*
		 * Replacing a run that a job emptied since queued: that
		 * one's grace ends no sooner than @next.
		 */
		if (bcs_reap_on && next != U64_MAX && !more)
			mod_delayed_work(system_wq, &bcs_reap_work,
					 nsecs_to_jiffies(next - now) + 1);
		spin_unlock_irqrestore(&bcs_lock, flags);
		for (i = 0; i < n; i++)
			if (!bcs_job_remove(ids[i], BCS_REMOVE_REAP, false,
					    grace_ns))
				pr_info("job %u reaped: no task for %u s\n",
					ids[i], grace);
	} while (more);
}

/**
 * bcs_job_set_row - move a job to other rows
 * @id: the job
 * @row: its new home row, or BCS_ROW_NONE
 * @rows: the rows it also runs in (bit r for row r), 0 with BCS_ROW_NONE
 * @at_slice: wait for the switch to slice @slice or a later one
 * @slice: with @at_slice, the first slice of the new rows
 *
 * Without @at_slice the job moves at once and runs by its new rows from
 * the next switch.  Either way a change that waits is dropped.
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int bcs_job_set_row(u32 id, u32 row, u64 rows, bool at_slice, u64 slice)
{
	struct bcs_kjob *job;
	unsigned long flags;
	u64 set;
	int err = 0;

	if (!bcs_job_rows(row, rows, &set))
		return -EINVAL;
	spin_lock_irqsave(&bcs_lock, flags);
	job = bcs_job_find(id);
	if (!job) {
		err = -ENOENT;
	} else if (at_slice) {
		bcs_nr_pending += !job->pending;
		job->pending = true;
		job->pending_row = row;
		job->pending_rows = set;
		job->pending_slice = slice;
	} else {
		bcs_nr_pending -= job->pending;
		job->pending = false;
		WRITE_ONCE(job->row, row);
		WRITE_ONCE(job->rows, set);
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return err;
}

/**
 * bcs_job_set_filler - make a job a filler job or not
 * @id: the job
 * @filler: whether it is one
 *
 * Takes effect at the next switch, like a move without BCS_JOB_AT_SLICE;
 * the job's rows and any move that waits are left as they are.
 *
 * Return: 0 or -ENOENT.
 */
int bcs_job_set_filler(u32 id, bool filler)
{
	struct bcs_kjob *job;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&bcs_lock, flags);
	job = bcs_job_find(id);
	if (job) {
		bcs_nr_fillers += (u32)filler - (u32)job->filler;
		WRITE_ONCE(job->filler, filler);
	} else {
		err = -ENOENT;
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return err;
}

/**
 * bcs_job_apply_due - make the changes due at a slice
 * @slice: the slice that a switch begins
 *
 * Every change of rows that waits for @slice or an earlier one takes
 * effect.  The switch calls this before it decides which jobs run.
 * Context: bcs_lock held.
 */
void bcs_job_apply_due(u64 slice)
{
	struct bcs_kjob *job;

	lockdep_assert_held(&bcs_lock);
	if (!bcs_nr_pending)
		return;
	list_for_each_entry(job, &bcs_jobs, node) {
		if (!job->pending || job->pending_slice > slice)
			continue;
		job->pending = false;
		bcs_nr_pending--;
		WRITE_ONCE(job->row, job->pending_row);
		WRITE_ONCE(job->rows, job->pending_rows);
	}
}

/*
 * Threads that are not user code of the job: kernel threads, and the
 * kernel workers that live in a user process (io_uring's io-wq and SQPOLL
 * threads, vhost workers).  They run task works with kernel locks held
 * (SQPOLL holds its ring's lock), so parking them would stop work outside
 * the job; they are never attached.
 */
static bool bcs_kernel_worker(const struct task_struct *t)
{
	return t->flags & (PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER);
}

/*
 * The task of pid @nr (in the caller's pid namespace), if the caller may
 * signal it.  kill(2)'s own check for signal 0, which sends nothing, decides
 * that: credentials, CAP_KILL and the LSMs (security_task_kill()), none of
 * which a module can call directly.  The whole process or one thread: the
 * caller decides which threads of it to walk.  Return: the task with a
 * reference; ERR_PTR(-ESRCH) if there is none, -EINVAL for a kernel thread
 * or worker, which is never attached, or the error of the check.
 */
static struct task_struct *bcs_get_task(pid_t nr)
{
	struct task_struct *t;
	struct pid *pid;
	int err;

	if (nr <= 0)
		return ERR_PTR(-ESRCH);
	pid = find_get_pid(nr);
	if (!pid)
		return ERR_PTR(-ESRCH);
	t = get_pid_task(pid, PIDTYPE_PID);
	if (!t) {
		put_pid(pid);
		return ERR_PTR(-ESRCH);
	}
	err = bcs_kernel_worker(t) ? -EINVAL : kill_pid(pid, 0, 0);
	put_pid(pid);
	if (err) {
		put_task_struct(t);
		return ERR_PTR(err);
	}
	return t;
}

/*
 * May the caller see @bt in BCS_IOC_TASK_STATS?  Only a task it could
 * attach, unless it may look at every task anyway.  RCU read lock held.
 */
static bool bcs_may_see(const struct bcs_task *bt, bool all)
{
	return all || !kill_pid(task_pid(bt->task), 0, 0);
}

/*
 * Is @th, a thread of @t's process, one that attach of @t links: @t
 * itself, or with @thread_only false any thread, if it runs user code of
 * the job (not a kernel worker, not on its way out)?  Detach unlinks the
 * threads it finds linked, whatever they are.
 */
static bool bcs_is_target(const struct task_struct *t,
			  const struct task_struct *th, bool thread_only)
{
	if (thread_only && th != t)
		return false;
	return !(th->flags & PF_EXITING) && !bcs_kernel_worker(th);
}

/*
 * Attach and detach walk a process's threads with interrupts on and take
 * bcs_lock for one thread at a time, so that no caller (they need no
 * privilege) holds interrupts off for as long as its process has threads.
 * The mutex keeps two of them from racing for the same threads.
 *
 * The walk is for_each_thread(t, th), under rcu_read_lock() and after
 * pid_alive(t): the list hangs off t->signal, which the reference on @t
 * keeps, so it stays safe to walk even if the process is reaped meanwhile.
 * Starting from t->group_leader or walking with next_thread() would not
 * be: once @t is reaped, both may point at freed tasks.
 */
static DEFINE_MUTEX(bcs_attach_mutex);

/* The job @id with a reference, or NULL.  Takes bcs_lock. */
static struct bcs_kjob *bcs_job_get(u32 id)
{
	struct bcs_kjob *job;
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	job = bcs_job_find(id);
	if (job)
		kref_get(&job->ref);
	spin_unlock_irqrestore(&bcs_lock, flags);
	return job;
}

/*
 * What attach and detach start from: the task of pid @pid and job @id,
 * each with a reference, and bcs_attach_mutex held.  Undone by
 * bcs_attach_end().
 */
static int bcs_attach_begin(u32 id, pid_t pid, struct task_struct **t,
			    struct bcs_kjob **job)
{
	*t = bcs_get_task(pid);
	if (IS_ERR(*t))
		return PTR_ERR(*t);
	*job = bcs_job_get(id);
	if (!*job) {
		put_task_struct(*t);
		return -ENOENT;
	}
	if (!bcs_job_may_own(*job)) {
		bcs_job_put(*job);
		put_task_struct(*t);
		return -EPERM;
	}
	if (mutex_lock_killable(&bcs_attach_mutex)) {
		bcs_job_put(*job);
		put_task_struct(*t);
		return -EINTR;
	}
	return 0;
}

static void bcs_attach_end(struct task_struct *t, struct bcs_kjob *job)
{
	mutex_unlock(&bcs_attach_mutex);
	bcs_job_put(job);
	put_task_struct(t);
}

/*
 * Link thread @th to @job with @bt unless it is a member already.
 * Return: 1 if @bt was used, 0 if not, -EBUSY if @th is in another job,
 * -ENOENT if @job was destroyed.
 */
static int bcs_attach_one(struct bcs_kjob *job, struct task_struct *th,
			  struct bcs_task *bt)
{
	struct bcs_task *old;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&bcs_lock, flags);
	/* Pairs with smp_mb() in the fork and exit probes. */
	smp_mb__after_spinlock();
	old = bcs_task_find(th);
	if (job->dead)
		ret = -ENOENT;
	else if (old)
		ret = old->job == job ? 0 : -EBUSY;
	else if (!(th->flags & PF_EXITING))
		ret = 1;
	if (ret == 1)
		bcs_task_link(bt, job, th);
	spin_unlock_irqrestore(&bcs_lock, flags);
	return ret;
}

/*
 * Attach @t (one thread, or its whole process) to job @id.
 *
 * A first walk counts the threads to link and finds conflicts (a thread in
 * another job); a second links them, each in a bcs_lock section of its own.
 *
 * Ordering against fork and exit: the fork and exit probes take bcs_lock
 * whenever a job exists.  A thread that clone() adds during the walks is
 * added at the tail of the thread list, behind the thread that created it,
 * and its fork probe runs before it can run itself: if the probe finds its
 * creator linked, the probe links it; if not, the second walk has still to
 * link the creator and then reaches the new thread.  Either way it joins.
 * The second walk stops using the pool at its end, and allocates for such
 * late threads without sleeping (counted in bcs_attach_failures if that
 * fails, as for the fork probe).  A task that has set PF_EXITING is skipped;
 * one that sets it later finds itself in the hash in the exit probe.
 * smp_mb__after_spinlock() orders the creation of the job (bcs_nr_jobs)
 * against the probes' lock-free check of bcs_nr_jobs.
 */
int bcs_job_attach(u32 id, pid_t pid, bool thread_only, u32 *nr)
{
	struct bcs_task **pool = NULL, *bt;
	unsigned int want = 0, have = 0, used = 0, i;
	struct task_struct *t, *th;
	struct bcs_kjob *job;
	int err, ret;

	err = bcs_attach_begin(id, pid, &t, &job);
	if (err)
		return err;

	/* First walk: conflicts, and how many threads need a struct. */
	rcu_read_lock();
	if (!pid_alive(t) || ((t->flags & PF_EXITING) && thread_only))
		err = -ESRCH;
	else
		for_each_thread(t, th) {
			if (!bcs_is_target(t, th, thread_only))
				continue;
			bt = bcs_task_find(th);
			if (!bt) {
				want++;
			} else if (READ_ONCE(bt->job) != job) {
				err = -EBUSY;
				break;
			}
		}
	rcu_read_unlock();
	if (err)
		goto out;

	/* A few more for threads created meanwhile. */
	want += 4;
	pool = kcalloc(want, sizeof(*pool), GFP_KERNEL);
	if (!pool) {
		err = -ENOMEM;
		goto out;
	}
	for (; have < want; have++) {
		pool[have] = bcs_task_alloc(GFP_KERNEL);
		if (!pool[have]) {
			err = -ENOMEM;
			goto out;
		}
	}

	/* Second walk: link, one thread per bcs_lock section. */
	rcu_read_lock();
	if (!pid_alive(t))
		err = -ESRCH;
	else
		for_each_thread(t, th) {
			if (!bcs_is_target(t, th, thread_only))
				continue;
			bt = used < have ? pool[used] :
			     bcs_task_alloc(GFP_ATOMIC | __GFP_NOWARN);
			if (!bt) {
				spin_lock_irq(&bcs_lock);
				bcs_attach_failures++;
				spin_unlock_irq(&bcs_lock);
				continue;
			}
			ret = bcs_attach_one(job, th, bt);
			if (used >= have && ret != 1)
				kmem_cache_free(bcs_task_cache, bt);
			else if (ret == 1)
				used++;
			if (ret < 0) {
				/* A racing destroy; attach and detach are serialised. */
				err = ret;
				break;
			}
		}
	rcu_read_unlock();
	if (!err)
		*nr = used;
out:
	for (i = used; i < have; i++)
		kmem_cache_free(bcs_task_cache, pool[i]);
	kfree(pool);
	bcs_attach_end(t, job);
	return err;
}

/* Detach thread @th from @job if it is a member; true if it was. */
static bool bcs_detach_one(struct bcs_kjob *job, struct task_struct *th)
{
	struct bcs_task *bt;
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	bt = bcs_task_find(th);
	if (bt && bt->job == job)
		bcs_task_unlink(bt);
	else
		bt = NULL;
	spin_unlock_irqrestore(&bcs_lock, flags);
	if (!bt)
		return false;
	/* A parked one leaves its parking by itself. */
	wake_up_all(&job->wq);
	bcs_task_put(bt);
	return true;
}

int bcs_job_detach(u32 id, pid_t pid, bool thread_only, u32 *nr)
{
	struct task_struct *t, *th;
	struct bcs_kjob *job;
	u32 count = 0;
	int err;

	err = bcs_attach_begin(id, pid, &t, &job);
	if (err)
		return err;
	rcu_read_lock();
	if (!pid_alive(t)) {
		err = -ESRCH;
	} else {
		for_each_thread(t, th)
			if ((!thread_only || th == t) &&
			    bcs_detach_one(job, th))
				count++;
		if (!count)
			err = -ESRCH;
	}
	rcu_read_unlock();
	bcs_attach_end(t, job);
	if (!err)
		*nr = count;
	return err;
}

/*
 * A job's record.  Under rcu_read_lock() only: the fields are read while
 * switches and probes may change them, so a record is a snapshot of
 * statistics, exact for each field, not across fields.
 */
static void bcs_fill_job_info(const struct bcs_kjob *job,
			      struct bcs_job_info *info, u64 now)
{
	const struct bcs_task *bt;

	memset(info, 0, sizeof(*info));
	info->id = job->id;
	info->row = READ_ONCE(job->row);
	info->state = READ_ONCE(job->suspended) ? BCS_JOB_SUSPENDED :
						   BCS_JOB_RUNNING;
	info->nr_tasks = READ_ONCE(job->nr_tasks);
	info->nr_parked = READ_ONCE(job->nr_parked);
	info->run_ns = READ_ONCE(job->gone_run_ns);
	info->suspended_ns = READ_ONCE(job->gone_suspended_ns);
	list_for_each_entry_rcu(bt, &job->tasks, job_node) {
		info->run_ns += bcs_task_run_ns(bt);
		info->suspended_ns += bcs_task_suspended_ns(bt, now);
	}
	info->slices_run = READ_ONCE(job->slices_run);
	info->rows = READ_ONCE(job->rows);
	info->flags = READ_ONCE(job->filler) ? BCS_JOB_FILLER : 0;
	info->owner = from_kuid_munged(current_user_ns(), job->owner);
}

/*
 * Copy records to user space: size the buffer from a snapshot of the
 * count, fill it walking the lists under rcu_read_lock() (interrupts on,
 * bcs_lock not taken: the time is proportional to the number of tasks and
 * anyone may ask), copy it out after.  If objects appeared in between and
 * the buffer came out short of what the caller has room for, size it
 * again (objects appearing faster than that is -EAGAIN).  @count returns
 * how many objects exist; min(room, that) were copied.
 */
#define BCS_LIST_TRIES	4

int bcs_job_list(struct bcs_job_info __user *uinfo, u32 *count)
{
	struct bcs_job_info *buf = NULL;
	u32 room = 0, n, total, tries;
	struct bcs_kjob *job;
	int err = 0;
	u64 now;

	for (tries = 0; tries < BCS_LIST_TRIES; tries++) {
		n = 0;
		total = 0;
		rcu_read_lock();
		now = ktime_get_ns();
		list_for_each_entry_rcu(job, &bcs_jobs, node) {
			total++;
			if (n < room)
				bcs_fill_job_info(job, &buf[n++], now);
		}
		rcu_read_unlock();
		if (n >= min(*count, total))
			break;
		kvfree(buf);
		room = min(*count, total + 8);
		buf = kvcalloc(room, sizeof(*buf), GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	if (tries == BCS_LIST_TRIES)
		err = -EAGAIN;
	else if (n && copy_to_user(uinfo, buf, n * sizeof(*buf)))
		err = -EFAULT;
	kvfree(buf);
	*count = total;
	return err;
}

/*
 * Task records of job @job_id (0: all), of the tasks the caller may see
 * (bcs_may_see()); @count returns how many of those exist.
 */
int bcs_task_list(u32 job_id, struct bcs_task_stat __user *ustat, u32 *count)
{
	bool all = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN) ||
		   ns_capable_noaudit(&init_user_ns, CAP_SYS_PTRACE);
	struct bcs_task_stat *buf = NULL;
	u32 room = 0, n, total, tries;
	struct bcs_kjob *job;
	struct bcs_task *bt;
	bool found;
	int err = 0;
	u64 now;

	for (tries = 0; tries < BCS_LIST_TRIES; tries++) {
		n = 0;
		total = 0;
		found = !job_id;
		rcu_read_lock();
		now = ktime_get_ns();
		list_for_each_entry_rcu(job, &bcs_jobs, node) {
			if (job_id && job->id != job_id)
				continue;
			found = true;
			list_for_each_entry_rcu(bt, &job->tasks, job_node) {
				if (!bcs_may_see(bt, all))
					continue;
				total++;
				if (n < room)
					bcs_task_fill_stat(bt, &buf[n++], now);
			}
		}
		rcu_read_unlock();
		if (!found || n >= min(*count, total))
			break;
		kvfree(buf);
		room = min(*count, total + 64);
		buf = kvcalloc(room, sizeof(*buf), GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	if (!found)
		err = -ENOENT;
	else if (tries == BCS_LIST_TRIES)
		err = -EAGAIN;
	else if (n && copy_to_user(ustat, buf, n * sizeof(*buf)))
		err = -EFAULT;
	kvfree(buf);
	*count = total;
	return err;
}

static void bcs_probe_fork(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	struct bcs_task *pbt, *bt;
	unsigned long flags;

	/* Pairs with smp_mb__after_spinlock() in bcs_job_attach(). */
	smp_mb();
	if (!READ_ONCE(bcs_nr_jobs))
		return;
	if (bcs_kernel_worker(child))
		return;

	spin_lock_irqsave(&bcs_lock, flags);
	rcu_read_lock();
	pbt = bcs_task_find(parent);
	if (pbt && pbt->job && !bcs_task_find(child)) {
		/* The child has not run yet: atomic context, no sleeping. */
		bt = bcs_task_alloc(GFP_ATOMIC | __GFP_NOWARN);
		if (bt)
			bcs_task_link(bt, pbt->job, child);
		else
			bcs_attach_failures++;
	}
	rcu_read_unlock();
	spin_unlock_irqrestore(&bcs_lock, flags);
}

static void bcs_probe_exit(BCS_EXIT_PROBE_ARGS)
{
	struct bcs_task *bt;
	unsigned long flags;

	bcs_hooks->exited(p, bcs_exit_group_dead(p));
	/* Pairs with smp_mb__after_spinlock() in bcs_job_attach(). */
	smp_mb();
	if (!READ_ONCE(bcs_nr_jobs))
		return;

	spin_lock_irqsave(&bcs_lock, flags);
	rcu_read_lock();
	bt = bcs_task_find(p);
	if (bt)
		bcs_task_unlink(bt);
	rcu_read_unlock();
	spin_unlock_irqrestore(&bcs_lock, flags);
	if (bt)
		bcs_task_put(bt);
}

struct bcs_tp_lookup {
	const char *name;
	struct tracepoint *tp;
};

static void bcs_tp_match(struct tracepoint *tp, void *priv)
{
	struct bcs_tp_lookup *l = priv;

	if (!strcmp(tp->name, l->name))
		l->tp = tp;
}

/**
 * bcs_tracepoint - find a kernel tracepoint by name
 * @name: e.g. "sched_process_fork"
 *
 * The tracepoints bcs hooks are not exported to modules, so they are looked
 * up among the kernel's own.  Return: the tracepoint, or NULL.
 */
struct tracepoint *bcs_tracepoint(const char *name)
{
	struct bcs_tp_lookup l = { .name = name };

	for_each_kernel_tracepoint(bcs_tp_match, &l);
	if (!l.tp)
		pr_err("tracepoint %s not found\n", name);
	return l.tp;
}

int bcs_job_init(const struct bcs_job_hooks *hooks)
{
	int err;

	bcs_hooks = hooks;
	bcs_task_cache = KMEM_CACHE(bcs_task, 0);
	if (!bcs_task_cache)
		return -ENOMEM;

	bcs_tp_fork = bcs_tracepoint("sched_process_fork");
	bcs_tp_exit = bcs_tracepoint("sched_process_exit");
	if (!bcs_tp_fork || !bcs_tp_exit) {
		err = -ENOENT;
		goto err_cache;
	}
	err = tracepoint_probe_register(bcs_tp_fork, bcs_probe_fork, NULL);
	if (err)
		goto err_cache;
	err = tracepoint_probe_register(bcs_tp_exit, bcs_probe_exit, NULL);
	if (err)
		goto err_fork;
	spin_lock_irq(&bcs_lock);
	bcs_reap_on = true;
	spin_unlock_irq(&bcs_lock);
	return 0;

err_fork:
	tracepoint_probe_unregister(bcs_tp_fork, bcs_probe_fork, NULL);
	tracepoint_synchronize_unregister();
err_cache:
	kmem_cache_destroy(bcs_task_cache);
	return err;
}

/*
 * Module exit, after the scheduler has failed open and park.c has waited
 * for every task work: destroy every job, stop following forks and exits,
 * and wait until no RCU callback points into this module.
 */
void bcs_job_exit(void)
{
	struct bcs_kjob *job;
	unsigned long flags;

	/* No reaping from here on: the jobs all go. */
	spin_lock_irqsave(&bcs_lock, flags);
	bcs_reap_on = false;
	spin_unlock_irqrestore(&bcs_lock, flags);
	cancel_delayed_work_sync(&bcs_reap_work);

	for (;;) {
		u32 id = 0;

		spin_lock_irqsave(&bcs_lock, flags);
		job = list_first_entry_or_null(&bcs_jobs, struct bcs_kjob, node);
		if (job)
			id = job->id;
		spin_unlock_irqrestore(&bcs_lock, flags);
		if (!job)
			break;
		bcs_job_destroy(id);
	}

	tracepoint_probe_unregister(bcs_tp_exit, bcs_probe_exit, NULL);
	tracepoint_probe_unregister(bcs_tp_fork, bcs_probe_fork, NULL);
	tracepoint_synchronize_unregister();

	rcu_barrier();
	WARN_ON(!list_empty(&bcs_all_tasks));
	kmem_cache_destroy(bcs_task_cache);
}

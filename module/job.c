// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs (gangs) and their tasks: creation, attach and detach, inheritance on
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

#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "job.h"
#include "park.h"
#include "stats.h"
#include "strobe.h"

#define BCS_JOBS_MAX		4096
#define BCS_ATTACH_TRIES	4

DEFINE_SPINLOCK(bcs_lock);
LIST_HEAD(bcs_gangs);
u32 bcs_nr_jobs;
u32 bcs_nr_tasks;
u32 bcs_nr_parked;
u64 bcs_attach_failures;

/* bcs_lock: every struct bcs_task until it is freed, for module unload. */
static LIST_HEAD(bcs_all_tasks);
/* bcs_lock for writers, RCU for readers. */
static DEFINE_HASHTABLE(bcs_task_hash, 10);
static u32 bcs_next_id = 1;		/* bcs_lock */
static struct kmem_cache *bcs_task_cache;

static struct tracepoint *bcs_tp_fork, *bcs_tp_exit;

static struct bcs_gang *bcs_gang_find(u32 id)
{
	struct bcs_gang *gang;

	lockdep_assert_held(&bcs_lock);
	list_for_each_entry(gang, &bcs_gangs, node)
		if (gang->id == id)
			return gang;
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

static void bcs_gang_release(struct kref *ref)
{
	kfree(container_of(ref, struct bcs_gang, ref));
}

void bcs_gang_put(struct bcs_gang *gang)
{
	kref_put(&gang->ref, bcs_gang_release);
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

	if (bt) {
		refcount_set(&bt->ref, 1);
		bcs_park_init_task(bt);
	}
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

/* Make @bt a member of @gang for task @t.  Takes over @bt's reference. */
static void bcs_task_link(struct bcs_task *bt, struct bcs_gang *gang,
			  struct task_struct *t)
{
	lockdep_assert_held(&bcs_lock);
	get_task_struct(t);
	bt->task = t;
	bt->gang = gang;
	bt->attach_real_ns = ktime_get_real_ns();
	bt->attach_ns = ktime_get_ns();
	bt->exec_at_attach = t->se.sum_exec_runtime;
	bt->exec_at_switch = bt->exec_at_attach;
	bt->delay_at_attach = bcs_task_delay(t);
	hash_add_rcu(bcs_task_hash, &bt->hash, (unsigned long)t);
	list_add_tail(&bt->gang_node, &gang->tasks);
	list_add_tail(&bt->all_node, &bcs_all_tasks);
	gang->nr_tasks++;
	bcs_nr_tasks++;
	if (gang->suspended)
		bcs_park_request(bt);
}

/*
 * Remove @bt from its job.  The caller drops the membership reference with
 * bcs_task_put() once it has released bcs_lock.  A parked task is woken
 * through its job's wait queue by the caller and leaves by itself.
 */
static void bcs_task_unlink(struct bcs_task *bt)
{
	struct bcs_gang *gang = bt->gang;

	lockdep_assert_held(&bcs_lock);
	gang->gone_run_ns += bcs_task_run_ns(bt);
	gang->gone_suspended_ns += bcs_task_suspended_ns(bt, ktime_get_ns());
	/* A switch waiting for this task waits no longer. */
	bcs_strobe_parked(bt);
	bcs_stats_settle(&bt->wake_due, false);
	hash_del_rcu(&bt->hash);
	list_del(&bt->gang_node);
	WRITE_ONCE(bt->gang, NULL);
	gang->nr_tasks--;
	bcs_nr_tasks--;
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

/* Context: bcs_lock held. */
void bcs_task_fill_stat(const struct bcs_task *bt, struct bcs_task_stat *st,
			u64 now)
{
	struct task_struct *t = bt->task;
	u64 elapsed = now - bt->attach_ns, busy;
	u64 delay = bcs_task_delay(t) - bt->delay_at_attach;

	memset(st, 0, sizeof(*st));
	/* As the caller sees them: 0 if outside its pid namespace. */
	st->pid = task_pid_vnr(t);
	st->tgid = task_tgid_vnr(t);
	st->job = bt->gang ? bt->gang->id : 0;
	if (bt->parked)
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

int bcs_job_create(u32 id, u32 row, u32 *id_out)
{
	struct bcs_gang *gang;
	unsigned long flags;
	int err = 0;

	if (id > BCS_JOB_ID_MAX || (row >= BCS_ROWS_MAX && row != BCS_ROW_NONE))
		return -EINVAL;
	gang = kzalloc(sizeof(*gang), GFP_KERNEL);
	if (!gang)
		return -ENOMEM;
	INIT_LIST_HEAD(&gang->tasks);
	init_waitqueue_head(&gang->wq);
	kref_init(&gang->ref);
	gang->row = row;

	spin_lock_irqsave(&bcs_lock, flags);
	if (bcs_nr_jobs >= BCS_JOBS_MAX) {
		err = -ENOSPC;
	} else if (id) {
		if (bcs_gang_find(id))
			err = -EEXIST;
	} else {
		/* There are at most BCS_JOBS_MAX jobs: this ends quickly. */
		while (bcs_gang_find(bcs_next_id))
			bcs_next_id = bcs_next_id % BCS_JOB_ID_MAX + 1;
		id = bcs_next_id;
		bcs_next_id = bcs_next_id % BCS_JOB_ID_MAX + 1;
	}
	if (!err) {
		gang->id = id;
		list_add_tail(&gang->node, &bcs_gangs);
		/* Pairs with smp_mb() in the fork and exit probes. */
		WRITE_ONCE(bcs_nr_jobs, bcs_nr_jobs + 1);
	}
	spin_unlock_irqrestore(&bcs_lock, flags);

	if (err) {
		kfree(gang);
		return err;
	}
	*id_out = id;
	return 0;
}

static void bcs_put_list(struct list_head *list)
{
	struct bcs_task *bt, *tmp;

	list_for_each_entry_safe(bt, tmp, list, gang_node) {
		list_del(&bt->gang_node);
		bcs_task_put(bt);
	}
}

/* Detach every task of @gang, moving them to @gone.  bcs_lock held. */
static void bcs_gang_empty(struct bcs_gang *gang, struct list_head *gone)
{
	struct bcs_task *bt, *tmp;

	list_for_each_entry_safe(bt, tmp, &gang->tasks, gang_node) {
		bcs_task_unlink(bt);
		list_add_tail(&bt->gang_node, gone);
	}
	WRITE_ONCE(gang->suspended, false);
	wake_up_all(&gang->wq);
}

int bcs_job_destroy(u32 id)
{
	struct bcs_gang *gang;
	unsigned long flags;
	LIST_HEAD(gone);

	spin_lock_irqsave(&bcs_lock, flags);
	gang = bcs_gang_find(id);
	if (!gang) {
		spin_unlock_irqrestore(&bcs_lock, flags);
		return -ENOENT;
	}
	list_del(&gang->node);
	gang->dead = true;
	bcs_gang_empty(gang, &gone);
	WRITE_ONCE(bcs_nr_jobs, bcs_nr_jobs - 1);
	spin_unlock_irqrestore(&bcs_lock, flags);

	bcs_put_list(&gone);
	bcs_gang_put(gang);
	return 0;
}

int bcs_job_set_row(u32 id, u32 row)
{
	struct bcs_gang *gang;
	unsigned long flags;
	int err = 0;

	if (row >= BCS_ROWS_MAX && row != BCS_ROW_NONE)
		return -EINVAL;
	spin_lock_irqsave(&bcs_lock, flags);
	gang = bcs_gang_find(id);
	if (gang)
		gang->row = row;
	else
		err = -ENOENT;
	spin_unlock_irqrestore(&bcs_lock, flags);
	return err;
}

/* May the caller signal @t?  The rule of kill(2). */
static bool bcs_may_signal(struct task_struct *t)
{
	const struct cred *cred = current_cred(), *tcred;
	bool ok;

	rcu_read_lock();
	tcred = __task_cred(t);
	ok = uid_eq(cred->euid, tcred->suid) ||
	     uid_eq(cred->euid, tcred->uid) ||
	     uid_eq(cred->uid, tcred->suid) ||
	     uid_eq(cred->uid, tcred->uid) ||
	     ns_capable(tcred->user_ns, CAP_KILL);
	rcu_read_unlock();
	return ok;
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

static struct task_struct *bcs_get_task(pid_t nr, bool thread_only)
{
	struct task_struct *t;
	struct pid *pid;

	if (nr <= 0)
		return ERR_PTR(-ESRCH);
	pid = find_get_pid(nr);
	if (!pid)
		return ERR_PTR(-ESRCH);
	t = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	if (!t)
		return ERR_PTR(-ESRCH);
	if (bcs_kernel_worker(t)) {
		put_task_struct(t);
		return ERR_PTR(-EINVAL);
	}
	if (!bcs_may_signal(t)) {
		put_task_struct(t);
		return ERR_PTR(-EPERM);
	}
	return t;
}

/*
 * Is @th, a thread of @t's process, one that attach or detach of @t
 * concerns: @t itself, or with @thread_only false every thread?
 *
 * The walk is for_each_thread(t, th), under rcu_read_lock() and after
 * pid_alive(t): the list hangs off t->signal, which the reference on @t
 * keeps, so it stays safe to walk even if the process is reaped meanwhile.
 * Starting from t->group_leader or walking with next_thread() would not
 * be: once @t is reaped, both may point at freed tasks.
 */
static bool bcs_is_target(const struct task_struct *t,
			  const struct task_struct *th, bool thread_only)
{
	return th == t || !thread_only;
}

/*
 * Attach @t (one thread, or its whole process) to job @id.
 *
 * Ordering against fork and exit: the tasks are looked at and linked in one
 * bcs_lock section, and the fork and exit probes take bcs_lock whenever a
 * job exists.  A thread created before that section is on the thread list
 * and gets linked here; one created after it is created by a linked parent
 * and gets linked by the fork probe.  A task that has set PF_EXITING is
 * skipped; one that sets it later finds itself in the hash in the exit probe.
 * smp_mb__after_spinlock() orders the creation of the job (bcs_nr_jobs)
 * against the probes' lock-free check of bcs_nr_jobs.
 */
int bcs_job_attach(u32 id, pid_t pid, bool thread_only, u32 *nr)
{
	struct bcs_task **pool = NULL, *bt;
	struct task_struct *t, *th;
	unsigned int want = 0, have = 0, used = 0, i, tries;
	struct bcs_gang *gang;
	unsigned long flags;
	int err;

	t = bcs_get_task(pid, thread_only);
	if (IS_ERR(t))
		return PTR_ERR(t);

	for (tries = 0; tries < BCS_ATTACH_TRIES; tries++) {
		want = thread_only ? 1 : get_nr_threads(t) + 4;
		if (want > have) {
			struct bcs_task **np;

			np = krealloc(pool, want * sizeof(*pool), GFP_KERNEL);
			if (!np) {
				err = -ENOMEM;
				goto out;
			}
			pool = np;
			for (; have < want; have++) {
				pool[have] = bcs_task_alloc(GFP_KERNEL);
				if (!pool[have]) {
					err = -ENOMEM;
					goto out;
				}
			}
		}

		spin_lock_irqsave(&bcs_lock, flags);
		smp_mb__after_spinlock();
		rcu_read_lock();
		gang = bcs_gang_find(id);
		err = gang ? 0 : -ENOENT;
		want = 0;
		if (!err && (!pid_alive(t) ||
			     ((t->flags & PF_EXITING) && thread_only)))
			err = -ESRCH;
		/* First pass: check for conflicts and count. */
		if (!err) {
			for_each_thread(t, th) {
				if (!bcs_is_target(t, th, thread_only) ||
				    (th->flags & PF_EXITING) ||
				    bcs_kernel_worker(th))
					continue;
				bt = bcs_task_find(th);
				if (bt && bt->gang != gang) {
					err = -EBUSY;
					break;
				}
				if (!bt)
					want++;
			}
		}
		if (!err && want <= have) {
			for_each_thread(t, th) {
				if (!bcs_is_target(t, th, thread_only) ||
				    (th->flags & PF_EXITING) ||
				    bcs_kernel_worker(th) || bcs_task_find(th))
					continue;
				bcs_task_link(pool[used++], gang, th);
			}
		}
		rcu_read_unlock();
		spin_unlock_irqrestore(&bcs_lock, flags);
		if (err || want <= have)
			break;
		/* Threads appeared meanwhile: allocate more and retry. */
	}
	if (!err && tries == BCS_ATTACH_TRIES)
		err = -EAGAIN;
	if (!err)
		*nr = used;
out:
	for (i = used; i < have; i++)
		kmem_cache_free(bcs_task_cache, pool[i]);
	kfree(pool);
	put_task_struct(t);
	return err;
}

int bcs_job_detach(u32 id, pid_t pid, bool thread_only, u32 *nr)
{
	struct task_struct *t, *th;
	struct bcs_gang *gang;
	struct bcs_task *bt;
	unsigned long flags;
	LIST_HEAD(gone);
	u32 count = 0;
	int err = 0;

	t = bcs_get_task(pid, thread_only);
	if (IS_ERR(t))
		return PTR_ERR(t);

	spin_lock_irqsave(&bcs_lock, flags);
	rcu_read_lock();
	gang = bcs_gang_find(id);
	if (!gang) {
		err = -ENOENT;
	} else if (!pid_alive(t)) {
		err = -ESRCH;
	} else {
		for_each_thread(t, th) {
			if (!bcs_is_target(t, th, thread_only))
				continue;
			bt = bcs_task_find(th);
			if (!bt || bt->gang != gang)
				continue;
			bcs_task_unlink(bt);
			list_add_tail(&bt->gang_node, &gone);
			count++;
		}
		if (!count)
			err = -ESRCH;
		else
			wake_up_all(&gang->wq);
	}
	rcu_read_unlock();
	spin_unlock_irqrestore(&bcs_lock, flags);

	bcs_put_list(&gone);
	put_task_struct(t);
	if (!err)
		*nr = count;
	return err;
}

static void bcs_fill_job_info(const struct bcs_gang *gang,
			      struct bcs_job_info *info, u64 now)
{
	const struct bcs_task *bt;

	memset(info, 0, sizeof(*info));
	info->id = gang->id;
	info->row = gang->row;
	info->state = gang->suspended ? BCS_JOB_SUSPENDED : BCS_JOB_RUNNING;
	info->nr_tasks = gang->nr_tasks;
	info->nr_parked = gang->nr_parked;
	info->run_ns = gang->gone_run_ns;
	info->suspended_ns = gang->gone_suspended_ns;
	list_for_each_entry(bt, &gang->tasks, gang_node) {
		info->run_ns += bcs_task_run_ns(bt);
		info->suspended_ns += bcs_task_suspended_ns(bt, now);
	}
	info->slices_run = gang->slices_run;
}

/*
 * Copy records to user space: size the buffer from a snapshot of the
 * count, fill it under bcs_lock, copy it out after.  If objects appeared
 * in between and the buffer came out short of what the caller has room
 * for, size it again (objects appearing faster than that is -EAGAIN).
 * @count returns how many objects exist; min(room, that) were copied.
 */
#define BCS_LIST_TRIES	4

int bcs_job_list(struct bcs_job_info __user *uinfo, u32 *count)
{
	struct bcs_job_info *buf = NULL;
	u32 room = 0, n, total, tries;
	struct bcs_gang *gang;
	unsigned long flags;
	int err = 0;
	u64 now;

	for (tries = 0; tries < BCS_LIST_TRIES; tries++) {
		n = 0;
		spin_lock_irqsave(&bcs_lock, flags);
		now = ktime_get_ns();
		total = bcs_nr_jobs;
		list_for_each_entry(gang, &bcs_gangs, node) {
			if (n == room)
				break;
			bcs_fill_job_info(gang, &buf[n++], now);
		}
		spin_unlock_irqrestore(&bcs_lock, flags);
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

int bcs_task_list(u32 job, struct bcs_task_stat __user *ustat, u32 *count)
{
	struct bcs_task_stat *buf = NULL;
	u32 room = 0, n, total, tries;
	struct bcs_gang *gang;
	struct bcs_task *bt;
	unsigned long flags;
	bool found;
	int err = 0;
	u64 now;

	for (tries = 0; tries < BCS_LIST_TRIES; tries++) {
		n = 0;
		total = 0;
		found = !job;
		spin_lock_irqsave(&bcs_lock, flags);
		now = ktime_get_ns();
		list_for_each_entry(gang, &bcs_gangs, node) {
			if (job && gang->id != job)
				continue;
			found = true;
			total += gang->nr_tasks;
			list_for_each_entry(bt, &gang->tasks, gang_node)
				if (n < room)
					bcs_task_fill_stat(bt, &buf[n++], now);
		}
		spin_unlock_irqrestore(&bcs_lock, flags);
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
	if (pbt && pbt->gang && !bcs_task_find(child)) {
		/* The child has not run yet: atomic context, no sleeping. */
		bt = bcs_task_alloc(GFP_ATOMIC | __GFP_NOWARN);
		if (bt)
			bcs_task_link(bt, pbt->gang, child);
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

	bcs_strobe_task_exit(p, bcs_exit_group_dead(p));
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

int bcs_job_init(void)
{
	int err;

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
	return 0;

err_fork:
	tracepoint_probe_unregister(bcs_tp_fork, bcs_probe_fork, NULL);
	tracepoint_synchronize_unregister();
err_cache:
	kmem_cache_destroy(bcs_task_cache);
	return err;
}

/*
 * Module exit, after the strobe machinery has failed open: destroy every
 * job, stop following forks and exits, and wait until no task holds a work
 * item or an RCU callback that points into this module.
 */
void bcs_job_exit(void)
{
	struct bcs_gang *gang;
	struct bcs_task *bt;
	unsigned long flags;

	for (;;) {
		u32 id = 0;

		spin_lock_irqsave(&bcs_lock, flags);
		gang = list_first_entry_or_null(&bcs_gangs, struct bcs_gang,
						node);
		if (gang)
			id = gang->id;
		spin_unlock_irqrestore(&bcs_lock, flags);
		if (!gang)
			break;
		bcs_job_destroy(id);
	}

	tracepoint_probe_unregister(bcs_tp_exit, bcs_probe_exit, NULL);
	tracepoint_probe_unregister(bcs_tp_fork, bcs_probe_fork, NULL);
	tracepoint_synchronize_unregister();

	spin_lock_irqsave(&bcs_lock, flags);
	list_for_each_entry(bt, &bcs_all_tasks, all_node)
		bcs_park_kick(bt);
	spin_unlock_irqrestore(&bcs_lock, flags);
	bcs_park_wait_idle();
	/*
	 * The last work has said it is done, but its task may still be in
	 * this module's text on the way out of bcs_work_done(): tasks RCU
	 * waits until every task preempted in the kernel has moved on.
	 */
	synchronize_rcu_tasks();

	rcu_barrier();
	WARN_ON(!list_empty(&bcs_all_tasks));
	kmem_cache_destroy(bcs_task_cache);
}

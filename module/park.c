// SPDX-License-Identifier: GPL-2.0
/*
 * Suspension of a job's tasks.
 *
 * A task is suspended by queueing a task work on it with TWA_RESUME: a task
 * running in user space is sent an IPI and enters the kernel, a task
 * running in the kernel finishes what it is doing, and a task that is
 * blocked stays blocked (it is not woken, so no system call is interrupted
 * or restarted).  Each of them runs bcs_park_fn() just before returning to
 * user space and sleeps there on its job's wait queue until the job runs
 * again.  The sleep is TASK_KILLABLE | TASK_NOLOAD | TASK_FREEZABLE:
 *  - killable: SIGKILL wakes the task at once and it dies on its way out.
 *    So does any other signal that will end the process, one that is
 *    neither handled nor blocked and whose default action terminates it
 *    (with or without a core dump), unless the process is traced.  The
 *    kernel turns only some of those into SIGKILL at once: not one that
 *    dumps core, and not one that arrives while another signal is already
 *    pending.  For the rest, bcs_signal_probe() wakes a parked thread of
 *    the process, which leaves the park and takes the signal (see
 *    bcs_park_doomed());
 *  - other signals stay pending and are delivered when the task resumes,
 *    exactly as if it had been preempted;
 *  - TASK_NOLOAD keeps parked tasks out of the load average, and the
 *    hung-task detector skips killable sleeps;
 *  - TASK_FREEZABLE lets the freezer (system suspend, hibernation) freeze
 *    a parked task where it sleeps: it holds no lock there.  A thawed task
 *    is woken and goes round the loop, so a resume that came while it was
 *    frozen is not lost;
 *  - no signal is ever sent, so job control (SIGSTOP/SIGCONT, wait status,
 *    a shell's job table) sees nothing.
 * Resuming a job is a single wake_up_all() on its wait queue.
 *
 * The work items point into this module, so bcs.ko must not go away while
 * one of them is queued: bcs_works_pending counts them and module exit
 * waits for it to reach zero, kicking blocked tasks with TWA_SIGNAL so they
 * run their works (a blocked system call is restarted transparently).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/wait_bit.h>
#include <trace/events/signal.h>

#include "compat.h"
#include "park.h"

static atomic_t bcs_works_pending = ATOMIC_INIT(0);
static struct tracepoint *bcs_tp_signal;

static void bcs_work_done(struct bcs_task *bt)
{
	bcs_task_put(bt);
	if (atomic_dec_and_test(&bcs_works_pending))
		wake_up_var(&bcs_works_pending);
}

/*
 * sig_fatal() for a signal handler table the caller has pinned: @sig has
 * no handler and its default action terminates the process.
 */
static bool bcs_sig_kills(const struct sighand_struct *sh, int sig)
{
	return !siginmask(sig, SIG_KERNEL_IGNORE_MASK | SIG_KERNEL_STOP_MASK) &&
	       sh->action[sig - 1].sa.sa_handler == SIG_DFL;
}

/*
 * Will a signal pending for current end its process as soon as it is
 * dequeued?  That is SIGKILL, or a signal that is not blocked, has no
 * handler and whose default action is to terminate.  A traced task is
 * left parked: its tracer, not the signal's default, decides.
 *
 * Only SIGKILL is visible without the signal lock, and only the tasks
 * that may have such a signal look under it: those with TIF_SIGPENDING
 * and those that bcs_signal_probe() woke for the purpose.  A doomed task
 * gets TIF_SIGPENDING (the signal may be queued for the whole process and
 * have been announced to another thread) so that it takes the signal
 * before it could return to user space.
 */
static bool bcs_park_doomed(struct bcs_task *bt)
{
	struct task_struct *t = current;
	struct sighand_struct *sh;
	bool doomed = false;
	sigset_t pending;
	int sig;

	if (fatal_signal_pending(t))
		return true;
	if (!test_and_clear_bit(BCS_TASK_SIGNAL_CHECK, &bt->flags) &&
	    !signal_pending(t))
		return false;
	if (t->ptrace)
		return false;

	/* Only an exec replaces a task's handlers, and current is here. */
	sh = rcu_dereference_protected(t->sighand, true);
	spin_lock_irq(&sh->siglock);
	sigorsets(&pending, &t->pending.signal,
		  &t->signal->shared_pending.signal);
	for (sig = 1; sig <= _NSIG && !doomed; sig++)
		doomed = sigismember(&pending, sig) &&
			 !sigismember(&t->blocked, sig) && bcs_sig_kills(sh, sig);
	if (doomed)
		recalc_sigpending();
	spin_unlock_irq(&sh->siglock);
	return doomed;
}

/* Sleep until @bt's job runs again, is destroyed, or @bt is detached. */
static void bcs_park_wait(struct bcs_task *bt)
{
	struct bcs_kjob *job;
	bool doomed = false;
	unsigned long flags;
	DEFINE_WAIT(wait);
	u64 start;

	spin_lock_irqsave(&bcs_lock, flags);
	job = bt->job;
	if (!job || !job->suspended) {
		spin_unlock_irqrestore(&bcs_lock, flags);
		return;
	}
	kref_get(&job->ref);
	bt->parked = true;
	start = ktime_get_ns();
	bt->park_start_ns = start;
	job->nr_parked++;
	/* Read by bcs_signal_probe(); the barrier is in prepare_to_wait(). */
	WRITE_ONCE(bcs_nr_parked, bcs_nr_parked + 1);
	bcs_hooks->parked(bt);
	spin_unlock_irqrestore(&bcs_lock, flags);

	for (;;) {
		prepare_to_wait(&job->wq, &wait,
				TASK_KILLABLE | TASK_NOLOAD | TASK_FREEZABLE);
		if (!READ_ONCE(job->suspended) || READ_ONCE(bt->job) != job)
			break;
		doomed = bcs_park_doomed(bt);
		if (doomed)
			break;
		schedule();
	}
	finish_wait(&job->wq, &wait);

	spin_lock_irqsave(&bcs_lock, flags);
	bt->parked = false;
	bt->suspended_ns += ktime_get_ns() - start;
	bt->parks++;
	job->nr_parked--;
	WRITE_ONCE(bcs_nr_parked, bcs_nr_parked - 1);
	bcs_hooks->woken(bt);
	/*
	 * A switch that suspended the job again after the check above found
	 * this task still parked and asked nothing of it: ask now.  The work
	 * runs next in the task_work_run() that is running this one, so the
	 * task parks again before it can reach user space.  A doomed task
	 * goes on to take its signal instead.
	 */
	if (!doomed && bt->job == job && job->suspended)
		bcs_park_request(bt);
	spin_unlock_irqrestore(&bcs_lock, flags);
	bcs_job_put(job);
}

static void bcs_park_fn(struct callback_head *cb)
{
	struct bcs_task *bt = container_of(cb, struct bcs_task, park_work);

	clear_bit(BCS_TASK_PARK_QUEUED, &bt->flags);
	/* Pairs with the barrier in bcs_park_request(). */
	smp_mb__after_atomic();
	/* An exiting task runs its works from do_exit(): never park it. */
	if (!(current->flags & PF_EXITING))
		bcs_park_wait(bt);
	bcs_work_done(bt);
}

static void bcs_kick_fn(struct callback_head *cb)
{
	struct bcs_task *bt = container_of(cb, struct bcs_task, kick_work);

	clear_bit(BCS_TASK_KICK_QUEUED, &bt->flags);
	bcs_work_done(bt);
}

static bool bcs_queue(struct bcs_task *bt, struct callback_head *work,
		      task_work_func_t fn, int bit,
		      enum task_work_notify_mode notify)
{
	if (test_and_set_bit(bit, &bt->flags))
		return false;
	/* Not queued while the bit was clear: the work is ours to set up. */
	init_task_work(work, fn);
	/*
	 * On unload a detached task's last reference may be its park work,
	 * finishing in the task right now: then there is nothing to kick.
	 */
	if (!refcount_inc_not_zero(&bt->ref)) {
		clear_bit(bit, &bt->flags);
		return false;
	}
	atomic_inc(&bcs_works_pending);
	if (task_work_add(bt->task, work, notify)) {
		/* The task is past exit_task_work(): nothing to suspend. */
		clear_bit(bit, &bt->flags);
		bcs_work_done(bt);
		return false;
	}
	return true;
}

/**
 * bcs_park_request - ask @bt's task to park before it next returns to user
 * @bt: attached task whose job has just been suspended
 *
 * Context: any, with bcs_lock held.  Return: true if a park was requested,
 * false if the task is parked (it looks at its job again as it leaves,
 * under bcs_lock), one was already pending, or the task is exiting.
 */
bool bcs_park_request(struct bcs_task *bt)
{
	lockdep_assert_held(&bcs_lock);
	if (bt->parked)
		return false;
	return bcs_queue(bt, &bt->park_work, bcs_park_fn, BCS_TASK_PARK_QUEUED,
			 TWA_RESUME);
}

/**
 * bcs_park_kick - make a task with a queued park work run it soon
 * @bt: task, attached or not
 *
 * Used only on module unload: TWA_SIGNAL wakes an interruptibly blocked task
 * so that it runs its task works, bcs_park_fn() among them, on its way out
 * of the (restarted) system call.
 *
 * Context: any, with bcs_lock held.
 */
static void bcs_park_kick(struct bcs_task *bt)
{
	lockdep_assert_held(&bcs_lock);
	if (test_bit(BCS_TASK_PARK_QUEUED, &bt->flags))
		bcs_queue(bt, &bt->kick_work, bcs_kick_fn, BCS_TASK_KICK_QUEUED,
			  TWA_SIGNAL);
}

/* Wait until no work of this module is queued on any task. */
static void bcs_park_wait_idle(void)
{
	while (!wait_var_event_timeout(&bcs_works_pending,
				       !atomic_read(&bcs_works_pending),
				       10 * HZ))
		pr_warn("waiting for %d tasks to leave bcs\n",
			atomic_read(&bcs_works_pending));
}

/* Wake @th if it is parked and can take @sig.  bcs_lock held. */
static bool bcs_signal_wake(struct task_struct *th, int sig)
{
	struct bcs_task *bt = bcs_task_find(th);

	if (!bt || !bt->parked || sigismember(&th->blocked, sig))
		return false;
	set_bit(BCS_TASK_SIGNAL_CHECK, &bt->flags);
	wake_up_process(th);
	return true;
}

/*
 * Called for every signal sent in the system, with the target's signal
 * lock held, after the signal has been queued.  When the signal will end
 * the target's process (see bcs_park_doomed()) but the kernel has not
 * turned it into SIGKILL, no parked thread of that process has been woken:
 * wake one that can take it.  Waking it directly is safe because, under
 * bcs_lock, a task marked parked sleeps nowhere but in bcs_park_wait().
 * Lock order: the signal lock, then bcs_lock; bcs never takes a signal
 * lock while it holds bcs_lock.
 */
static void bcs_signal_probe(void *data, int sig, struct kernel_siginfo *info,
			     struct task_struct *t, int group, int result)
{
	/* The caller holds its lock: the table cannot change. */
	struct sighand_struct *sh = rcu_dereference_protected(t->sighand, true);
	struct task_struct *th;
	unsigned long flags;

	if ((result != TRACE_SIGNAL_DELIVERED &&
	     result != TRACE_SIGNAL_LOSE_INFO) ||
	    sig == SIGKILL || t->ptrace || !bcs_sig_kills(sh, sig))
		return;
	/*
	 * Pairs with the barrier in prepare_to_wait() after a task counts
	 * itself parked: either the parking task sees the TIF_SIGPENDING
	 * that the sender set, or the sender sees the task counted.
	 */
	smp_mb();
	if (!READ_ONCE(bcs_nr_parked))
		return;

	spin_lock_irqsave(&bcs_lock, flags);
	rcu_read_lock();
	if (!group) {
		bcs_signal_wake(t, sig);
	} else {
		for_each_thread(t, th)
			if (bcs_signal_wake(th, sig))
				break;
	}
	rcu_read_unlock();
	spin_unlock_irqrestore(&bcs_lock, flags);
}

int bcs_park_init(void)
{
	bcs_tp_signal = bcs_tracepoint("signal_generate");
	if (!bcs_tp_signal)
		return -ENOENT;
	return tracepoint_probe_register(bcs_tp_signal, bcs_signal_probe, NULL);
}

/*
 * Module exit, after the scheduler has failed open: no job is suspended, so
 * no task is asked to park any more.  Stop watching signals, make every
 * task with a park work queued run it, and wait until none is left.
 */
void bcs_park_exit(void)
{
	struct bcs_task *bt;
	unsigned long flags;

	tracepoint_probe_unregister(bcs_tp_signal, bcs_signal_probe, NULL);
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
}

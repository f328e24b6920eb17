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
 *  - killable: SIGKILL, and a signal that kills without a core dump, has
 *    no handler and is neither blocked nor traced (the kernel turns it
 *    into SIGKILL for every thread), wake the task at once and it dies on
 *    its way out; signals that would dump core stay pending until the job
 *    resumes, as for any killable sleep in the kernel;
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
#include <linux/task_work.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "park.h"

static atomic_t bcs_works_pending = ATOMIC_INIT(0);

static void bcs_work_done(struct bcs_task *bt)
{
	bcs_task_put(bt);
	if (atomic_dec_and_test(&bcs_works_pending))
		wake_up_var(&bcs_works_pending);
}

/* Sleep until @bt's job runs again, is destroyed, or @bt is detached. */
static void bcs_park_wait(struct bcs_task *bt)
{
	struct bcs_gang *gang;
	unsigned long flags;
	DEFINE_WAIT(wait);
	u64 start;

	spin_lock_irqsave(&bcs_lock, flags);
	gang = bt->gang;
	if (!gang || !gang->suspended) {
		spin_unlock_irqrestore(&bcs_lock, flags);
		return;
	}
	kref_get(&gang->ref);
	bt->parked = true;
	start = ktime_get_ns();
	bt->park_start_ns = start;
	gang->nr_parked++;
	bcs_nr_parked++;
	spin_unlock_irqrestore(&bcs_lock, flags);

	for (;;) {
		prepare_to_wait(&gang->wq, &wait,
				TASK_KILLABLE | TASK_NOLOAD | TASK_FREEZABLE);
		if (!READ_ONCE(gang->suspended) || READ_ONCE(bt->gang) != gang ||
		    fatal_signal_pending(current))
			break;
		schedule();
	}
	finish_wait(&gang->wq, &wait);

	spin_lock_irqsave(&bcs_lock, flags);
	bt->parked = false;
	bt->suspended_ns += ktime_get_ns() - start;
	bt->parks++;
	gang->nr_parked--;
	bcs_nr_parked--;
	spin_unlock_irqrestore(&bcs_lock, flags);
	bcs_gang_put(gang);
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

void bcs_park_init_task(struct bcs_task *bt)
{
	init_task_work(&bt->park_work, bcs_park_fn);
	init_task_work(&bt->kick_work, bcs_kick_fn);
}

static bool bcs_queue(struct bcs_task *bt, struct callback_head *work,
		      int bit, enum task_work_notify_mode notify)
{
	if (test_and_set_bit(bit, &bt->flags))
		return false;
	refcount_inc(&bt->ref);
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
 * false if one was already pending or the task is exiting.
 */
bool bcs_park_request(struct bcs_task *bt)
{
	lockdep_assert_held(&bcs_lock);
	if (bt->parked)
		return false;
	return bcs_queue(bt, &bt->park_work, BCS_TASK_PARK_QUEUED, TWA_RESUME);
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
void bcs_park_kick(struct bcs_task *bt)
{
	lockdep_assert_held(&bcs_lock);
	if (test_bit(BCS_TASK_PARK_QUEUED, &bt->flags))
		bcs_queue(bt, &bt->kick_work, BCS_TASK_KICK_QUEUED, TWA_SIGNAL);
}

/* Wait until no work of this module is queued on any task. */
void bcs_park_wait_idle(void)
{
	while (!wait_var_event_timeout(&bcs_works_pending,
				       !atomic_read(&bcs_works_pending),
				       10 * HZ))
		pr_warn("waiting for %d tasks to leave bcs\n",
			atomic_read(&bcs_works_pending));
}

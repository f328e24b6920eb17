// SPDX-License-Identifier: GPL-2.0
/*
 * The ends of jobs, for the generic netlink multicast group "events"
 * (BCS_CMD_JOB_ENDED): a job destroyed, or a job whose last task has left
 * it by exit or detach.
 *
 * The hooks of job.c run with bcs_lock held, interrupts off, in the exit
 * probe among other places: there an event is only queued, in memory
 * taken without sleeping, and the sender's work item is scheduled.  The
 * sender is netlink.c, a layer above this file: it hands its work item
 * over with bcs_events_start() and takes the events with bcs_events_pop(),
 * so that calls still run one way.  Nothing here can fail or delay the
 * job's path: an event that finds no memory or a full queue is dropped and
 * counted, and its number (@seq) is used all the same, so that a listener
 * sees the gap.
 *
 * Locking: bcs_events_lock protects the queue, the work pointer and the
 * counters.  It is taken inside bcs_lock, never with bcs_dist_lock held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "dist_ctx.h"
#include "events.h"

/* Room for every job of a node to end twice before the sender runs. */
#define BCS_EVENTS_QUEUE_MAX	(2 * BCS_JOBS_MAX)

struct bcs_event_node {
	struct list_head node;
	struct bcs_job_event ev;
};

static DEFINE_SPINLOCK(bcs_events_lock);
static LIST_HEAD(bcs_events_list);		/* bcs_events_lock */
static u32 bcs_events_queued;			/* bcs_events_lock */
static struct work_struct *bcs_events_work;	/* bcs_events_lock */
static struct bcs_events_counts bcs_events_counts; /* bcs_events_lock */

/* Queue the end of job @id.  bcs_lock held; any context. */
static void bcs_events_queue(u32 id, u32 reason)
{
	u32 dist_tasks = bcs_dist_job_tasks(id);
	struct bcs_event_node *n = NULL;
	unsigned long flags;

	spin_lock_irqsave(&bcs_events_lock, flags);
	/* Before the sender starts and after it stops, nobody listens. */
	if (!bcs_events_work)
		goto out;
	bcs_events_counts.seq++;
	if (bcs_events_queued < BCS_EVENTS_QUEUE_MAX)
		n = kmalloc(sizeof(*n), GFP_ATOMIC | __GFP_NOWARN);
	if (!n) {
		bcs_events_counts.dropped++;
		goto out;
	}
	n->ev.seq = bcs_events_counts.seq;
	n->ev.job = id;
	n->ev.reason = reason;
	n->ev.dist_tasks = dist_tasks;
	list_add_tail(&n->node, &bcs_events_list);
	bcs_events_queued++;
	schedule_work(bcs_events_work);
out:
	spin_unlock_irqrestore(&bcs_events_lock, flags);
}

/**
 * bcs_events_job_destroyed - hook: @job was destroyed, its tasks unlinked
 * @job: the job
 *
 * After dist.c's hook, so that the count of kept statistics is final.
 * Context: bcs_lock held.
 */
void bcs_events_job_destroyed(struct bcs_kjob *job)
{
	bcs_events_queue(job->id, BCS_JOB_END_DESTROYED);
}

/**
 * bcs_events_unlinked - hook: @bt leaves its job (exit, detach, destroy)
 * @bt: the task, @bt->job still set and still counting it
 *
 * The job ends if @bt is its last task and it is not being destroyed
 * (destruction is announced once, as such).  A task leaves by exit when
 * it is exiting (PF_EXITING, set before the exit probe runs), else by
 * detach.  After dist.c's hook.  Context: bcs_lock held.
 */
void bcs_events_unlinked(struct bcs_task *bt)
{
	struct bcs_kjob *job = bt->job;

	if (job->dead || job->nr_tasks != 1)
		return;
	bcs_events_queue(job->id, (bt->task->flags & PF_EXITING) ?
			 BCS_JOB_END_EXITED : BCS_JOB_END_DETACHED);
}

/**
 * bcs_events_start - the sender is ready: queue events from now on
 * @work: the sender's work item, scheduled whenever an event is queued
 */
void bcs_events_start(struct work_struct *work)
{
	unsigned long flags;

	spin_lock_irqsave(&bcs_events_lock, flags);
	bcs_events_work = work;
	spin_unlock_irqrestore(&bcs_events_lock, flags);
}

/*
 * bcs_events_stop - the sender goes: queue nothing more, free what waits.
 * The caller then cancels its work item.  Context: may sleep.
 */
void bcs_events_stop(void)
{
	struct bcs_event_node *n, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&bcs_events_lock, flags);
	bcs_events_work = NULL;
	list_splice_init(&bcs_events_list, &list);
	bcs_events_queued = 0;
	spin_unlock_irqrestore(&bcs_events_lock, flags);
	list_for_each_entry_safe(n, tmp, &list, node)
		kfree(n);
}

/**
 * bcs_events_pop - take the oldest queued event
 * @ev: where it goes
 *
 * Return: true if there was one.  Context: any.
 */
bool bcs_events_pop(struct bcs_job_event *ev)
{
	struct bcs_event_node *n;
	unsigned long flags;

	spin_lock_irqsave(&bcs_events_lock, flags);
	n = list_first_entry_or_null(&bcs_events_list, struct bcs_event_node,
				     node);
	if (n) {
		list_del(&n->node);
		bcs_events_queued--;
	}
	spin_unlock_irqrestore(&bcs_events_lock, flags);
	if (!n)
		return false;
	*ev = n->ev;
	kfree(n);
	return true;
}

/*
 * bcs_events_sent - the sender's verdict on a popped event: 0 sent (or
 * nobody listened), else not built or refused by some listener.
 */
void bcs_events_sent(int err)
{
	unsigned long flags;

	spin_lock_irqsave(&bcs_events_lock, flags);
	if (err)
		bcs_events_counts.failed++;
	else
		bcs_events_counts.sent++;
	spin_unlock_irqrestore(&bcs_events_lock, flags);
}

void bcs_events_get_counts(struct bcs_events_counts *c)
{
	unsigned long flags;

	spin_lock_irqsave(&bcs_events_lock, flags);
	*c = bcs_events_counts;
	spin_unlock_irqrestore(&bcs_events_lock, flags);
}

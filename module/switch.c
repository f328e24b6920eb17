// SPDX-License-Identifier: GPL-2.0
/*
 * The gang switch.
 *
 * A switch drains, then fills.  It tells the tasks of the jobs it suspends
 * to park and marks the jobs it resumes (struct bcs_kjob.fill), but wakes
 * those only when every task it told to park that was running has parked
 * (bcs_switch_parked()).  Waking them at once would let them preempt, on a
 * shared CPU, an old task on its way to park, which then lingers runnable
 * until the scheduler gives it the CPU again, for as long as a scheduler
 * slice; and woken tasks would be placed on CPUs the old row still holds.
 * bcs_fill_timer bounds the wait by the drain_us parameter (and half a
 * slice): a task of the old row that gets no CPU (a real-time task holds
 * it) or stays in a long system call cannot hold the new row back.
 *
 * Filler jobs (struct bcs_kjob.filler) also run in the slices where the
 * node is idle: no job that has tasks runs by its rows in the slice's row
 * (bcs_row_idle()).  "Fill" above is the other thing, the wake-up of the
 * resumed jobs after the drain; "filler" is only this one.
 *
 * Failing open (bcs_switch_resume_all()) is a switch to no row that runs
 * every job, so no task stays parked.
 *
 * A switch has taken effect once the tasks it told to park have parked and
 * the tasks it woke have left their parking.  That happens after its
 * record is published, in those tasks, so the switch counts them
 * (bcs_settle) and the last of them stamps the time into the record.
 *
 * Locking: the switch runs under bcs_lock, in any context (the strobe
 * hrtimers call it in hard interrupt context); struct bcs_sched (switch.h)
 * and bcs_settle are protected by it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>

#include "compat.h"
#include "job.h"
#include "park.h"
#include "ring.h"
#include "switch.h"

#define BCS_DRAIN_US_MAX	1000000

static unsigned int bcs_drain_us = 1000;

static int bcs_drain_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, BCS_DRAIN_US_MAX);
}

static const struct kernel_param_ops bcs_drain_ops = {
	.set = bcs_drain_set,
	.get = param_get_uint,
};

module_param_cb(drain_us, &bcs_drain_ops, &bcs_drain_us, 0644);
MODULE_PARM_DESC(drain_us,
		 "Longest wait, in microseconds, of a switch for the old row to park before it wakes the new one; at most half a slice (0: wake at once, 0..1000000, default 1000)");
/*
 * The scheduling state (switch.h), defined here, in the lowest of the files
 * that share it.
 */
struct bcs_sched bcs_sched;		/* bcs_lock */

/*
 * Drops the driven strobes waiting for their deadlines when every job
 * resumes (bcs_queue_flush(), from bcs_switch_init()): the queue is above
 * the switch.  bcs_lock held.
 */
static void (*bcs_switch_flush)(void);

static struct hrtimer bcs_fill_timer;		/* drain limit */

/*
 * What the newest switch still waits for, bcs_lock: tasks whose park_due
 * (wake_due) equals @gen, the switch's number (bcs_sched.switches + 1),
 * and have not parked (left their parking) yet; and its record, @seq, if
 * @recorded (the slice window may leave a switch unrecorded).
 */
static struct {
	u64 gen;
	u64 seq;
	bool recorded;
	u32 parks_due;
	u32 wakes_due;
} bcs_settle;

/*
 * bcs_settle_begin - the newest switch waits for tasks to settle
 * @gen: the switch's number; the tasks it waits for have park_due or
 *	 wake_due == @gen
 * @rec: its record, committed, or NULL if it has none
 * @seq: the sequence number of @rec
 * @parks: how many tasks it told to park and waits for
 * @wakes: how many tasks it woke
 *
 * Called after bcs_ring_commit(), whose record holds 0 in @parked_ns
 * (@resumed_ns) if @parks (@wakes) is not 0.  Context: bcs_lock held.
 */
static void bcs_settle_begin(u64 gen, const struct bcs_slice_record *rec,
			     u64 seq, u32 parks, u32 wakes)
{
	lockdep_assert_held(&bcs_lock);
	bcs_settle.gen = gen;
	bcs_settle.seq = seq;
	bcs_settle.recorded = rec;
	bcs_settle.parks_due = parks;
	bcs_settle.wakes_due = wakes;
}

/*
 * bcs_settle_one - account a task that was due for the newest switch
 * @due: the task's park_due or wake_due; cleared here
 * @parked: true for a park (or a task leaving before it parked), false for
 *	    a task leaving its parking (or leaving its job while parked)
 *
 * The last of them stamps @parked_ns (@resumed_ns) into the switch's
 * record.  Context: bcs_lock held.  Return: true if that was the last task
 * of its kind that the newest switch waited for.
 */
static bool bcs_settle_one(u64 *due, bool parked)
{
	u32 *left = parked ? &bcs_settle.parks_due : &bcs_settle.wakes_due;
	u64 seq = bcs_settle.seq;
	struct bcs_slice_record *rec;
	bool last;

	lockdep_assert_held(&bcs_lock);
	last = *due && *due == bcs_settle.gen && *left && !--*left;
	*due = 0;
	if (last && bcs_settle.recorded) {
		rec = bcs_ring_rewrite(seq);
		if (rec) {
			if (parked)
				rec->parked_ns = ktime_get_real_ns();
			else
				rec->resumed_ns = ktime_get_real_ns();
			bcs_ring_rewritten(rec, seq);
		}
	}
	return last;
}

/*
 * Wake the jobs that the newest switch resumes; @cut if their wait for the
 * old row to drain reached its limit.  bcs_lock held.
 */
static void bcs_fill(bool cut)
{
	struct bcs_kjob *job;

	list_for_each_entry(job, &bcs_jobs, node) {
		if (!job->fill)
			continue;
		job->fill = false;
		WRITE_ONCE(job->suspended, false);
		wake_up_all(&job->wq);
	}
	bcs_sched.fill_pending = false;
	if (cut) {
		bcs_sched.drain_cuts++;
		if (bcs_settle.recorded)
			bcs_ring_flag(bcs_settle.seq, BCS_SLICE_DRAIN_CUT);
	}
}

/* How long a switch may wait for the old row to drain, in ns. */
static u64 bcs_drain_limit_ns(void)
{
	return min_t(u64, (u64)READ_ONCE(bcs_drain_us) * NSEC_PER_USEC,
		     bcs_sched.slice_ns / 2);
}

/**
 * bcs_switch_parked - a task that the newest switch may wait for is done
 * @bt: the task, which has parked or is leaving its job
 *
 * The last of them lets the switch wake the jobs it resumes.
 * Context: bcs_lock held.
 */
void bcs_switch_parked(struct bcs_task *bt)
{
	if (bcs_settle_one(&bt->park_due, true) && bcs_sched.fill_pending) {
		/* A running expiry finds nothing left to do. */
		hrtimer_try_to_cancel(&bcs_fill_timer);
		bcs_fill(false);
	}
}

/**
 * bcs_switch_woken - a task that the newest switch woke is done
 * @bt: the task, which has left its parking or is leaving its job
 *
 * Context: bcs_lock held.
 */
void bcs_switch_woken(struct bcs_task *bt)
{
	bcs_settle_one(&bt->wake_due, false);
}

/*
 * Whether the node is idle in @row, for the filler jobs: no job that has
 * tasks runs by its rows (home or alternate) in @row.  Jobs with no row
 * run always but do not make the node busy; a filler job running by its
 * own rows does.  Every row is idle for BCS_ROW_NONE.  bcs_lock held.
 */
static bool bcs_row_idle(u32 row)
{
	struct bcs_kjob *job;

	lockdep_assert_held(&bcs_lock);
	if (row >= BCS_ROWS_MAX)
		return true;
	list_for_each_entry(job, &bcs_jobs, node)
		if (job->nr_tasks && (job->rows & BIT_ULL(row)))
			return false;
	return true;
}

/*
 * Switch to @row in slice @slice, which becomes bcs_sched.slice: make the
 * changes of rows due by then (bcs_job_apply_due()), resume the jobs whose rows hold @row (home
 * or alternate), those with no row and, if the node is idle in @row, the
 * filler jobs; suspend the others (every job resumes when @flags has
 * BCS_SLICE_FAILOPEN), and write the slice record.
 * Context: bcs_lock held, any context.
 */
void bcs_switch(u64 slice, u32 row, u64 strobe_ns, u64 deadline_ns,
		u32 flags)
{
	struct bcs_sched *s = &bcs_sched;
	struct bcs_slice_record *rec;
	u32 suspended = 0, resumed = 0, running = 0, blocked = 0, parks = 0;
	u32 fills = 0;
	/* This switch's number, and its record's if it has one. */
	u64 start, exec, drain_ns = 0, gen = s->switches + 1;
	u64 seq = bcs_ring_head();
	struct bcs_kjob *job;
	struct bcs_task *bt;
	bool run, ran, wake, idle;

	lockdep_assert_held(&bcs_lock);
	s->slice = slice;
	/* A standalone switch's strobe is the clock read just before. */
	start = (flags & BCS_SLICE_STANDALONE) ? strobe_ns :
		ktime_get_real_ns();
	/* A fill still pending is decided again, job by job, below. */
	s->fill_pending = false;
	bcs_job_apply_due(s->slice);
	idle = bcs_nr_fillers && bcs_row_idle(row);
	list_for_each_entry(job, &bcs_jobs, node) {
		ran = !job->suspended;
		run = (flags & BCS_SLICE_FAILOPEN) || job->row == BCS_ROW_NONE ||
		      (row < BCS_ROWS_MAX && (job->rows & BIT_ULL(row))) ||
		      (idle && job->filler);
		/* Still suspended while it waits for the old row to drain. */
		wake = run && job->suspended;
		if (wake) {
			job->fill = true;
			fills++;
			resumed += job->nr_parked;
		} else if (!run) {
			job->fill = false;
			WRITE_ONCE(job->suspended, true);
		}
		if (run)
			job->slices_run++;
		list_for_each_entry(bt, &job->tasks, job_node) {
			/*
			 * Credit the slice that ends now to the tasks that got
			 * CPU time in it while their job was running (parking
			 * itself costs a suspended task a little CPU time).
			 */
			exec = READ_ONCE(bt->task->se.sum_exec_runtime);
			if (exec != bt->exec_at_switch) {
				bt->exec_at_switch = exec;
				bt->slices_run += ran;
			}
			if (!run) {
				suspended += bcs_park_request(bt);
				/*
				 * Wait for the tasks that can run user code;
				 * a blocked one parks before it could.
				 */
				if (!bt->parked && task_is_running(bt->task)) {
					bt->park_due = gen;
					parks++;
				}
				continue;
			}
			/* The wait queue wakes exactly the parked ones. */
			if (wake && bt->parked)
				bt->wake_due = gen;
			running++;
			if (!bt->parked && !task_is_running(bt->task))
				blocked++;
		}
	}

	if (fills && parks && !(flags & BCS_SLICE_FAILOPEN))
		drain_ns = bcs_drain_limit_ns();
	if (fills && !drain_ns)
		bcs_fill(false);

	/* The slice window may leave the switch without a record. */
	rec = bcs_ring_begin(s->slice);
	if (rec) {
		rec->slice = s->slice;
		rec->strobe_ns = strobe_ns;
		rec->deadline_ns = deadline_ns;
		rec->switch_start_ns = start;
		rec->switch_end_ns = ktime_get_real_ns();
		rec->interval_ns = s->last_switch_ns &&
				   start > s->last_switch_ns ?
				   start - s->last_switch_ns : 0;
		rec->switch_ns = rec->switch_end_ns - start;
		rec->row = row;
		rec->flags = flags;
		rec->nr_suspended = suspended;
		rec->nr_resumed = resumed;
		rec->nr_running = running;
		rec->nr_blocked = blocked;
		rec->late = !!(flags & BCS_SLICE_LATE);
		rec->missed = s->missed_unrecorded;
		rec->late_total = s->late;
		rec->missed_total = s->missed;
		rec->parked_ns = parks ? 0 : rec->switch_end_ns;
		rec->resumed_ns = resumed ? 0 : rec->switch_end_ns;
		bcs_ring_commit(rec);
	}
	bcs_settle_begin(gen, rec, seq, parks, resumed);
	if (drain_ns) {
		s->fill_pending = true;
		hrtimer_start(&bcs_fill_timer, ns_to_ktime(drain_ns),
			      HRTIMER_MODE_REL);
	}

	s->row = row;
	s->last_switch_ns = start;
	s->missed_unrecorded = 0;
	s->switches++;
}

/* Resume everything; counted as a fail-open if @failure.  bcs_lock held. */
void bcs_switch_resume_all(bool failure)
{
	u64 now = ktime_get_real_ns();

	if (failure) {
		bcs_sched.failopens++;
		bcs_sched.failopen = true;
	}
	bcs_switch_flush();
	bcs_switch(bcs_sched.slice, BCS_ROW_NONE, now, now, BCS_SLICE_FAILOPEN);
}

/* The slice length from now on.  bcs_lock held. */
void bcs_switch_set_slice_ns(u64 slice_ns)
{
	bcs_sched.slice_ns = slice_ns;
}

/*
 * @n strobes that will never switch: counted, and recorded in the next
 * switch's record.  bcs_lock held.
 */
void bcs_switch_missed(u64 n)
{
	bcs_sched.missed += n;
	bcs_sched.missed_unrecorded += n;
}

/* Switching again: a driver's strobe, or a new mode.  bcs_lock held. */
void bcs_switch_clear_failopen(void)
{
	bcs_sched.failopen = false;
}

/*
 * The row after bcs_sched.row that is a job's home row, by the rule bcsd's
 * master follows too (bcs_row_next() of the UAPI header); BCS_ROW_NONE if
 * no job has a row.  A job's alternate rows add none.  bcs_lock held.
 */
u32 bcs_switch_next_row(void)
{
	struct bcs_kjob *job;
	u64 rows = 0;

	list_for_each_entry(job, &bcs_jobs, node)
		if (job->row < BCS_ROWS_MAX)
			rows |= 1ULL << job->row;
	return bcs_row_next(rows, bcs_sched.row);
}

static enum hrtimer_restart bcs_fill_fn(struct hrtimer *timer)
{
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	/* Re-armed meanwhile by a newer switch: that one's limit stands. */
	if (bcs_sched.fill_pending && !hrtimer_is_queued(timer))
		bcs_fill(true);
	spin_unlock_irqrestore(&bcs_lock, flags);
	return HRTIMER_NORESTART;
}

/* Stop waiting for a drain.  bcs_config_mutex held, bcs_lock not. */
void bcs_switch_cancel_fill(void)
{
	hrtimer_cancel(&bcs_fill_timer);
}

void bcs_switch_init(u64 slice_ns, void (*flush)(void))
{
	bcs_sched.row = BCS_ROW_NONE;
	bcs_sched.slice_ns = slice_ns;
	bcs_switch_flush = flush;
	bcs_hrtimer_setup(&bcs_fill_timer, bcs_fill_fn, CLOCK_MONOTONIC,
			  HRTIMER_MODE_REL);
}

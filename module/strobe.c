// SPDX-License-Identifier: GPL-2.0
/*
 * Strobes and the job switch.
 *
 * A strobe names a slice, the row to run in it and the deadline at which
 * the slice begins.  In standalone mode bcs_tick_timer produces one every
 * slice.  In driven mode they come from user space (ioctl or netlink) ahead
 * of their deadline; bcs_strobe_timer, on CLOCK_REALTIME so that nodes with
 * synchronised clocks switch together, fires at the deadline.  A strobe
 * whose deadline has passed switches at once and is counted late.  Up to
 * BCS_STROBE_QUEUE strobes wait for their deadlines, so that a driver may
 * send them more than a slice ahead: slices shorter than the network's
 * latency still switch on time.  A strobe may carry a prediction, the row
 * of the slice after it (BCS_STROBE_PREDICT): queued behind it, it switches
 * at the next deadline only if no strobe from the driver replaced it, so a
 * node whose strobe was lost switches to the row the master would have
 * sent.  A prediction is only ever for the slice after a strobe, so it
 * never runs more than one slice past the driver's last strobe.
 *
 * A switch drains, then fills.  It tells the tasks of the jobs it suspends
 * to park and marks the jobs it resumes (struct bcs_kjob.fill), but wakes
 * those only when every task it told to park that was running has parked
 * (bcs_strobe_parked()).  Waking them at once would let them preempt, on a
 * shared CPU, an old task on its way to park, which then lingers runnable
 * until the scheduler gives it the CPU again, for as long as a scheduler
 * slice; and woken tasks would be placed on CPUs the old row still holds.
 * bcs_fill_timer bounds the wait by the drain_us parameter (and half a
 * slice): a task of the old row that gets no CPU (a real-time task holds
 * it) or stays in a long system call cannot hold the new row back.
 *
 * bcs_watchdog_timer fails open when a driven node stops switching (no
 * strobes, or strobes that never reach their deadlines);
 * losing the driver (its file or netlink socket closed) and module unload
 * fail open too.  Failing open resumes every job, so no task stays parked.
 *
 * Locking: struct bcs_sched is protected by bcs_lock (timer callbacks run
 * in hard interrupt context).  Mode changes, which start and cancel timers,
 * are serialised by bcs_config_mutex; timers are cancelled with the mutex
 * held but never with bcs_lock held, because their callbacks take it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "job.h"
#include "park.h"
#include "stats.h"
#include "strobe.h"

/* A driven strobe waiting for its deadline. */
struct bcs_queued {
	struct bcs_strobe strobe;
	u64 arrival_ns;
	u64 skipped;			/* slice numbers skipped before it */
	u32 origin;			/* BCS_SLICE_INJECTED or 0 */
	bool late;			/* arrived after its deadline */
	bool predicted;			/* a prediction, not a strobe */
	bool expiry;			/* and of no row: a strobe's row ended */
};

struct bcs_sched {
	u32 mode;			/* enum bcs_mode */
	u32 row;			/* running row, BCS_ROW_NONE if none */
	u64 slice;			/* current slice number */
	bool have_slice;		/* a driven strobe has set @slice */
	u64 slice_ns;
	u32 watchdog_slices;
	bool failopen;
	struct bcs_driver driver;	/* valid in BCS_MODE_DRIVEN */
	/* Driven strobes waiting for their deadlines, earliest first. */
	struct bcs_queued queue[BCS_STROBE_QUEUE];
	u32 queued;
	u64 last_switch_ns;		/* CLOCK_REALTIME */
	bool slice_predicted;		/* @slice began with a prediction */
	u32 missed_unrecorded;
	bool fill_pending;		/* jobs wait for the old row to drain */
	/* Counters since load. */
	u64 strobes;
	u64 switches;
	u64 late;
	u64 missed;
	u64 failopens;
	u64 drain_cuts;
	u64 predicted;
	u64 expired;
	pid_t driver_exited;		/* for bcs_driver_exit_work */
};

static struct bcs_sched bcs_sched;	/* bcs_lock */

/*
 * The driver's process id while in driven mode, else 0: written under
 * bcs_lock with bcs_sched.driver, read without it by the exit probe
 * (bcs_strobe_task_exit()).  bcs_driver_exit_work fails open in process
 * context for the probe, which may not sleep.
 */
static pid_t bcs_driver_tgid;
static void bcs_driver_exit_fn(struct work_struct *work);
static DECLARE_WORK(bcs_driver_exit_work, bcs_driver_exit_fn);

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
static DEFINE_MUTEX(bcs_config_mutex);
static struct hrtimer bcs_tick_timer;		/* standalone slices */
static struct hrtimer bcs_strobe_timer;		/* driven deadlines */
static struct hrtimer bcs_watchdog_timer;	/* driven, no switches */
static struct hrtimer bcs_fill_timer;		/* drain limit */

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
		bcs_stats_flag_newest(BCS_SLICE_DRAIN_CUT);
	}
}

/* How long a switch may wait for the old row to drain, in ns. */
static u64 bcs_drain_limit_ns(void)
{
	return min_t(u64, (u64)READ_ONCE(bcs_drain_us) * NSEC_PER_USEC,
		     bcs_sched.slice_ns / 2);
}

/**
 * bcs_strobe_parked - a task that the newest switch may wait for is done
 * @bt: the task, which has parked or is leaving its job
 *
 * The last of them lets the switch wake the jobs it resumes.
 * Context: bcs_lock held.
 */
void bcs_strobe_parked(struct bcs_task *bt)
{
	if (bcs_stats_settle(&bt->park_due, true) && bcs_sched.fill_pending) {
		/* A running expiry finds nothing left to do. */
		hrtimer_try_to_cancel(&bcs_fill_timer);
		bcs_fill(false);
	}
}

/*
 * Switch to @row: resume the jobs of @row and those with no row, suspend
 * the others (every job resumes when @flags has BCS_SLICE_FAILOPEN), and
 * write the slice record.  Context: bcs_lock held, any context.
 */
static void bcs_switch(u32 row, u64 strobe_ns, u64 deadline_ns, u32 flags)
{
	struct bcs_sched *s = &bcs_sched;
	struct bcs_slice_record *rec;
	u32 suspended = 0, resumed = 0, running = 0, blocked = 0, parks = 0;
	u32 fills = 0;
	/* This switch's record will have sequence number gen - 1. */
	u64 start, exec, drain_ns = 0, gen = bcs_stats_head() + 1;
	struct bcs_kjob *job;
	struct bcs_task *bt;
	bool run, ran, wake;

	lockdep_assert_held(&bcs_lock);
	start = ktime_get_real_ns();
	/* A fill still pending is decided again, job by job, below. */
	s->fill_pending = false;
	list_for_each_entry(job, &bcs_jobs, node) {
		ran = !job->suspended;
		run = (flags & BCS_SLICE_FAILOPEN) || job->row == row ||
		      job->row == BCS_ROW_NONE;
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

	rec = bcs_stats_begin();
	rec->slice = s->slice;
	rec->strobe_ns = strobe_ns;
	rec->deadline_ns = deadline_ns;
	rec->switch_start_ns = start;
	rec->switch_end_ns = ktime_get_real_ns();
	rec->interval_ns = s->last_switch_ns && start > s->last_switch_ns ?
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
	bcs_stats_commit(rec);
	bcs_stats_settle_begin(gen, parks, resumed);
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
static void bcs_resume_all(bool failure)
{
	u64 now = ktime_get_real_ns();

	if (failure) {
		bcs_sched.failopens++;
		bcs_sched.failopen = true;
	}
	bcs_sched.queued = 0;
	bcs_sched.slice_predicted = false;
	bcs_switch(BCS_ROW_NONE, now, now, BCS_SLICE_FAILOPEN);
}

/* The row after bcs_sched.row that has a job, in order.  bcs_lock held. */
static u32 bcs_next_row(void)
{
	u32 cur = bcs_sched.row, best = BCS_ROW_NONE, first = BCS_ROW_NONE;
	struct bcs_kjob *job;

	list_for_each_entry(job, &bcs_jobs, node) {
		if (job->row == BCS_ROW_NONE)
			continue;
		if (first == BCS_ROW_NONE || job->row < first)
			first = job->row;
		if ((cur == BCS_ROW_NONE || job->row > cur) &&
		    (best == BCS_ROW_NONE || job->row < best))
			best = job->row;
	}
	return best != BCS_ROW_NONE ? best : first;
}

static void bcs_standalone_switch(u64 now, u32 flags)
{
	bcs_sched.slice++;
	bcs_sched.strobes++;
	bcs_switch(bcs_next_row(), now, now, BCS_SLICE_STANDALONE | flags);
}

static enum hrtimer_restart bcs_tick_fn(struct hrtimer *timer)
{
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	unsigned long flags;
	u64 overruns;

	spin_lock_irqsave(&bcs_lock, flags);
	/* Re-armed meanwhile by an injected strobe: that one stands. */
	if (bcs_sched.mode == BCS_MODE_STANDALONE && !hrtimer_is_queued(timer)) {
		bcs_standalone_switch(ktime_get_real_ns(), 0);
		overruns = hrtimer_forward_now(timer,
					       ns_to_ktime(bcs_sched.slice_ns));
		if (overruns > 1) {
			bcs_sched.missed += overruns - 1;
			bcs_sched.missed_unrecorded += overruns - 1;
		}
		ret = HRTIMER_RESTART;
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return ret;
}

/* Fail open @wait_ns + watchdog_slices slices from now.  bcs_lock held. */
static void bcs_watchdog_arm(u64 wait_ns)
{
	struct bcs_sched *s = &bcs_sched;

	if (!s->watchdog_slices) {
		hrtimer_try_to_cancel(&bcs_watchdog_timer);
		return;
	}
	hrtimer_start(&bcs_watchdog_timer,
		      ns_to_ktime(wait_ns + (u64)s->watchdog_slices * s->slice_ns),
		      HRTIMER_MODE_REL);
}

/* @n strobes that will never switch.  bcs_lock held. */
static void bcs_count_missed(u64 n)
{
	bcs_sched.missed += n;
	bcs_sched.missed_unrecorded += n;
}

/* Remove the @n earliest queued strobes.  bcs_lock held. */
static void bcs_queue_pop(u32 n)
{
	struct bcs_sched *s = &bcs_sched;

	s->queued -= n;
	memmove(&s->queue[0], &s->queue[n], s->queued * sizeof(s->queue[0]));
}

/*
 * Queue the prediction that @req carries, the row of the slice after it,
 * due a slice after it, behind everything queued.  Not if that deadline has
 * passed, if a strobe for a later slice is queued already, or if the queue
 * is full: a prediction never displaces a strobe.  bcs_lock held.
 */
static bool bcs_queue_guess(const struct bcs_strobe *req, u64 now, u32 origin,
			    u32 ahead, u32 row, bool expiry)
{
	struct bcs_sched *s = &bcs_sched;
	u64 slice_ns = req->slice_ns ? req->slice_ns : s->slice_ns;
	u64 deadline = req->deadline_ns + ahead * slice_ns;
	struct bcs_queued *q;

	/* The rows of a strobe that comes after them have ended already. */
	if (expiry && deadline <= now)
		deadline = now;
	else if (deadline <= now)
		return false;
	if (s->queued == BCS_STROBE_QUEUE ||
	    (s->queued &&
	     s->queue[s->queued - 1].strobe.deadline_ns >= deadline))
		return false;
	q = &s->queue[s->queued++];
	memset(q, 0, sizeof(*q));
	q->strobe.slice = req->slice + ahead;
	q->strobe.deadline_ns = deadline;
	q->strobe.row = row;
	q->arrival_ns = now;
	q->origin = origin;
	q->predicted = true;
	q->expiry = expiry;
	return true;
}

/*
 * The guesses @req carries, behind everything queued: its prediction, the
 * row of the slice after it, due a slice after it; and with
 * BCS_STROBE_EXPIRE the end of its rows, no row, due the slice after the
 * last one they cover.  Each is dropped if a strobe for a later slice is
 * queued already, or if the queue is full: a guess never displaces a
 * strobe; a prediction also if its deadline has passed, while an expiry
 * then is due at once (the strobe came after its rows had ended: it is
 * overtaken, and nothing runs).  bcs_lock held.
 */
static void bcs_queue_predict(const struct bcs_strobe *req, u64 now, u32 origin)
{
	u32 ahead = 1;

	if ((req->flags & BCS_STROBE_PREDICT) &&
	    bcs_queue_guess(req, now, origin, 1, req->next_row, false))
		ahead = 2;
	if (req->flags & BCS_STROBE_EXPIRE)
		bcs_queue_guess(req, now, origin, ahead, BCS_ROW_NONE, true);
}

/*
 * Forget the waiting predictions for @slice and later ones: a strobe from
 * the driver for @slice has come.  Not counted: they were only guesses.
 * One for an earlier slice stays; a strobe sent more than a slice ahead
 * can overtake the one before it that was lost.  bcs_lock held.
 */
static void bcs_queue_unpredict(u64 slice)
{
	struct bcs_sched *s = &bcs_sched;
	u32 i, n = 0;

	for (i = 0; i < s->queued; i++)
		if (!s->queue[i].predicted || s->queue[i].strobe.slice < slice)
			s->queue[n++] = s->queue[i];
	s->queued = n;
}

/*
 * A strobe that comes after a prediction for its slice has switched, and
 * names the same row, has nothing left to do.  bcs_lock held.
 */
static bool bcs_strobe_confirms(const struct bcs_strobe *req)
{
	struct bcs_sched *s = &bcs_sched;

	return s->slice_predicted && req->slice == s->slice &&
	       req->row == s->row && !(req->flags & BCS_STROBE_NEXT);
}

/*
 * Queue a driven strobe.  It replaces the waiting predictions for its slice
 * and later ones first.  Queued strobes due no earlier than it
 * (a driver that started again, another master) and, when it switches at
 * once, all of them are superseded and count as missed now; so does the
 * earliest when the queue is full.  The slice numbers it skips after the
 * strobe before it count as missed when it switches.  A prediction it
 * carries goes behind it.  bcs_lock held.
 */
static void bcs_queue_add(const struct bcs_strobe *req, u64 now, u32 origin)
{
	struct bcs_sched *s = &bcs_sched;
	bool at_once = req->flags & (BCS_STROBE_NOW | BCS_STROBE_NEXT);
	struct bcs_queued *q;
	u32 keep = 0;
	u64 last;

	/*
	 * A strobe for a slice before the current one, come after its
	 * deadline: the node switched past it (to a guess, or overtaking it
	 * after a stall), and running its row now would run it in another
	 * slice.  It counts as missed and changes nothing.
	 */
	if (!at_once && s->have_slice && req->slice < s->slice &&
	    req->deadline_ns <= now) {
		bcs_count_missed(1);
		return;
	}
	bcs_queue_unpredict(req->slice);
	if (bcs_strobe_confirms(req)) {
		/* Its slice is this one: it feeds the watchdog as a switch. */
		s->slice_predicted = false;
		bcs_watchdog_arm(0);
		goto predict;
	}

	while (!at_once && keep < s->queued &&
	       s->queue[keep].strobe.deadline_ns < req->deadline_ns)
		keep++;
	bcs_count_missed(s->queued - keep);
	s->queued = keep;
	if (s->queued == BCS_STROBE_QUEUE) {
		bcs_count_missed(1);
		bcs_queue_pop(1);
	}
	last = s->queued ? s->queue[s->queued - 1].strobe.slice : s->slice;

	q = &s->queue[s->queued++];
	q->skipped = 0;
	if ((s->queued > 1 || s->have_slice) && req->slice > last + 1)
		q->skipped = req->slice - last - 1;
	q->strobe = *req;
	if (req->flags & BCS_STROBE_NEXT) {
		q->strobe.row = bcs_next_row();
		q->strobe.flags |= BCS_STROBE_NOW;
	}
	q->arrival_ns = now;
	q->late = !at_once && now > req->deadline_ns;
	q->origin = origin;
	q->predicted = false;
	q->expiry = false;
predict:
	bcs_queue_predict(req, now, origin);
}

/*
 * Apply the newest queued strobe that is due at @now.  Earlier ones also
 * due were overtaken (this expiry came late) and count as missed.  A
 * strobe is late if it arrived after its deadline; the hrtimer firing a
 * little after the deadline is not.  bcs_lock held.
 */
static void bcs_queue_run(u64 now)
{
	struct bcs_sched *s = &bcs_sched;
	struct bcs_queued q;
	u32 due = 0, flags, i;

	while (due < s->queued &&
	       ((s->queue[due].strobe.flags & BCS_STROBE_NOW) ||
		s->queue[due].strobe.deadline_ns <= now))
		due++;
	if (!due)
		return;
	/* An expiry overtaken is no strobe lost. */
	for (i = 0; i + 1 < due; i++)
		bcs_count_missed(!s->queue[i].expiry);
	q = s->queue[due - 1];
	bcs_queue_pop(due);
	bcs_count_missed(q.skipped);

	flags = BCS_SLICE_DRIVEN | q.origin;
	if (due > 1)
		flags |= BCS_SLICE_OVERTAKEN;
	if (q.late) {
		flags |= BCS_SLICE_LATE;
		s->late++;
	}
	if (q.expiry) {
		flags |= BCS_SLICE_EXPIRED;
		s->expired++;
	} else if (q.predicted) {
		flags |= BCS_SLICE_PREDICTED;
		s->predicted++;
	}
	s->failopen = false;
	s->slice = q.strobe.slice;
	s->have_slice = true;
	s->slice_predicted = q.predicted;
	bcs_switch(q.strobe.row, q.arrival_ns, q.strobe.deadline_ns, flags);
	/* The watchdog counts from the driver's last strobe, not a guess. */
	if (!q.predicted)
		bcs_watchdog_arm(0);
}

static enum hrtimer_restart bcs_strobe_fn(struct hrtimer *timer)
{
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	struct bcs_sched *s = &bcs_sched;
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	/* Re-armed meanwhile by a new strobe: that one has run what was due. */
	if (s->mode == BCS_MODE_DRIVEN && !hrtimer_is_queued(timer)) {
		bcs_queue_run(ktime_get_real_ns());
		if (s->queued) {
			hrtimer_set_expires(timer,
					    ns_to_ktime(s->queue[0].strobe.deadline_ns));
			ret = HRTIMER_RESTART;
		}
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return ret;
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

static enum hrtimer_restart bcs_watchdog_fn(struct hrtimer *timer)
{
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	if (bcs_sched.mode == BCS_MODE_DRIVEN && !bcs_sched.failopen &&
	    !hrtimer_is_queued(timer)) {
		pr_warn_ratelimited("no switch for %u slices: failing open\n",
				    bcs_sched.watchdog_slices);
		bcs_resume_all(true);
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return HRTIMER_NORESTART;
}

static bool bcs_same_driver(const struct bcs_driver *a,
			    const struct bcs_driver *b)
{
	if (a->file || b->file)
		return a->file == b->file;
	return a->portid && a->portid == b->portid && a->net == b->net;
}

static int bcs_check_strobe(const struct bcs_strobe *req)
{
	if (req->flags & ~BCS_STROBE_FLAGS)
		return -EINVAL;
	/* A deadline becomes a ktime: it must fit one (see also below). */
	if (req->deadline_ns > BCS_DEADLINE_NS_MAX)
		return -ERANGE;
	if (req->row >= BCS_ROWS_MAX && !(req->flags & BCS_STROBE_NEXT))
		return -EINVAL;
	if (req->flags & BCS_STROBE_PREDICT) {
		if (req->next_row >= BCS_ROWS_MAX ||
		    (req->flags & (BCS_STROBE_NOW | BCS_STROBE_NEXT)))
			return -EINVAL;
	} else if (req->next_row) {
		return -EINVAL;
	}
	if ((req->flags & BCS_STROBE_EXPIRE) && (req->flags & BCS_STROBE_NEXT))
		return -EINVAL;
	if (req->slice_ns && (req->slice_ns < BCS_SLICE_NS_MIN ||
			      req->slice_ns > BCS_SLICE_NS_MAX))
		return -EINVAL;
	return 0;
}

/*
 * May @drv strobe now?  In driven mode only the driver may: any other file
 * or socket would otherwise steer (or, with strobes far ahead, stall) the
 * node behind its driver's back.  Every driven strobe is due at most
 * BCS_STROBE_AHEAD_MAX_NS from now, with BCS_STROBE_NOW too, because its
 * deadline also arms the watchdog: further than the queue could ever hold
 * is a mistake or an attack, and would put off switching and failing open
 * alike.  bcs_lock held.
 */
static int bcs_strobe_allowed(const struct bcs_strobe *req,
			      const struct bcs_driver *drv, u64 now)
{
	const struct bcs_sched *s = &bcs_sched;

	if (s->mode != BCS_MODE_DRIVEN)
		return 0;
	if (!bcs_same_driver(&s->driver, drv))
		return -EBUSY;
	if (req->deadline_ns > now &&
	    req->deadline_ns - now > BCS_STROBE_AHEAD_MAX_NS)
		return -ERANGE;
	return 0;
}

/**
 * bcs_strobe_submit - accept a strobe from user space
 * @req: the strobe, fields checked here
 * @origin: BCS_SLICE_INJECTED for the ioctl, 0 for netlink
 * @drv: the sender, a file or a netlink socket
 *
 * Return: 0, -EINVAL for a bad strobe, -ERANGE for a deadline out of range,
 * -EBUSY from anyone but the driver in driven mode, -ENOTCONN when bcs is
 * off.
 */
int bcs_strobe_submit(const struct bcs_strobe *req, u32 origin,
		      const struct bcs_driver *drv)
{
	struct bcs_sched *s = &bcs_sched;
	unsigned long flags;
	u64 now;
	int err;

	err = bcs_check_strobe(req);
	if (err)
		return err;

	spin_lock_irqsave(&bcs_lock, flags);
	now = ktime_get_real_ns();
	err = bcs_strobe_allowed(req, drv, now);
	if (err)
		goto unlock;
	if (req->slice_ns && s->mode != BCS_MODE_OFF)
		s->slice_ns = req->slice_ns;
	switch (s->mode) {
	case BCS_MODE_STANDALONE:
		/* Switch now; the local timer continues from here. */
		s->slice = req->slice ? req->slice - 1 : s->slice;
		if (req->flags & BCS_STROBE_NEXT) {
			bcs_standalone_switch(now, origin);
		} else {
			s->slice++;
			s->strobes++;
			bcs_switch(req->row, now, now,
				   BCS_SLICE_STANDALONE | origin);
		}
		hrtimer_start(&bcs_tick_timer, ns_to_ktime(s->slice_ns),
			      HRTIMER_MODE_REL);
		break;
	case BCS_MODE_DRIVEN:
		s->strobes++;
		bcs_queue_add(req, now, origin);
		bcs_queue_run(now);
		if (s->queued)
			hrtimer_start(&bcs_strobe_timer,
				      ns_to_ktime(s->queue[0].strobe.deadline_ns),
				      HRTIMER_MODE_ABS);
		/*
		 * Each applied switch re-arms the watchdog; a strobe arms it
		 * from its deadline only if it is not armed.  Strobes that
		 * keep superseding each other before their deadlines (a
		 * driver whose clock runs ahead) must not put it off for ever.
		 */
		if (!hrtimer_is_queued(&bcs_watchdog_timer))
			bcs_watchdog_arm(req->deadline_ns > now ?
					 req->deadline_ns - now : 0);
		break;
	default:
		err = -ENOTCONN;
	}
unlock:
	spin_unlock_irqrestore(&bcs_lock, flags);
	return err;
}

/*
 * Stop the timers that @mode does not use.  bcs_config_mutex held.  Any
 * mode switches, and so may wait for a drain, but a mode that is entered
 * has resumed every job first (no fill is pending): off needs no timer.
 */
static void bcs_stop_timers(u32 mode)
{
	if (mode == BCS_MODE_OFF)
		hrtimer_cancel(&bcs_fill_timer);
	if (mode != BCS_MODE_STANDALONE)
		hrtimer_cancel(&bcs_tick_timer);
	if (mode != BCS_MODE_DRIVEN) {
		hrtimer_cancel(&bcs_strobe_timer);
		hrtimer_cancel(&bcs_watchdog_timer);
	}
}

/**
 * bcs_strobe_config - change and read the configuration
 * @cfg: fields named in @cfg->set are applied; all are returned
 * @drv: the caller, which becomes the driver when it enters driven mode
 *
 * Return: 0; -EINVAL for a bad value; -EBUSY if another driver holds
 * driven mode.
 */
int bcs_strobe_config(struct bcs_config *cfg, const struct bcs_driver *drv)
{
	struct bcs_sched *s = &bcs_sched;
	unsigned long flags;
	u32 old_mode, mode;
	int err = 0;

	if (cfg->set & ~BCS_CONFIG_ALL)
		return -EINVAL;
	if ((cfg->set & BCS_CONFIG_MODE) && cfg->mode > BCS_MODE_DRIVEN)
		return -EINVAL;
	if ((cfg->set & BCS_CONFIG_SLICE) &&
	    (cfg->slice_ns < BCS_SLICE_NS_MIN || cfg->slice_ns > BCS_SLICE_NS_MAX))
		return -EINVAL;
	if ((cfg->set & BCS_CONFIG_WATCHDOG) &&
	    cfg->watchdog_slices > BCS_WATCHDOG_MAX)
		return -EINVAL;

	mutex_lock(&bcs_config_mutex);
	spin_lock_irqsave(&bcs_lock, flags);
	old_mode = s->mode;
	mode = (cfg->set & BCS_CONFIG_MODE) ? cfg->mode : old_mode;
	if (mode == BCS_MODE_DRIVEN && old_mode == BCS_MODE_DRIVEN &&
	    (cfg->set & BCS_CONFIG_MODE) && !bcs_same_driver(&s->driver, drv)) {
		err = -EBUSY;
		goto unlock;
	}
	if (cfg->set & BCS_CONFIG_SLICE)
		s->slice_ns = cfg->slice_ns;
	if (cfg->set & BCS_CONFIG_WATCHDOG)
		s->watchdog_slices = cfg->watchdog_slices;
	if (cfg->set & BCS_CONFIG_MODE) {
		s->mode = mode;
		if (mode == BCS_MODE_DRIVEN) {
			s->driver = *drv;
			s->have_slice = false;
		} else {
			memset(&s->driver, 0, sizeof(s->driver));
		}
		WRITE_ONCE(bcs_driver_tgid, s->driver.tgid);
		/*
		 * A new mode starts from every job running: the next strobe
		 * (or, in standalone mode, the first tick) suspends what it
		 * must.  Nothing stays parked by a mode that has ended.
		 */
		if (mode != old_mode) {
			bcs_resume_all(false);
			s->failopen = false;
		}
	}
	cfg->slice_ns = s->slice_ns;
	cfg->mode = s->mode;
	cfg->watchdog_slices = s->watchdog_slices;
unlock:
	spin_unlock_irqrestore(&bcs_lock, flags);
	if (!err) {
		bcs_stop_timers(mode);
		/* The first standalone slice starts now. */
		if (mode == BCS_MODE_STANDALONE && old_mode != mode)
			hrtimer_start(&bcs_tick_timer, 0, HRTIMER_MODE_REL);
	}
	mutex_unlock(&bcs_config_mutex);
	return err;
}

/*
 * Does @drv name the driver?  Each of its fields that is set must match:
 * the handle (a file, or a netlink socket) and the process.  bcs_lock held.
 */
static bool bcs_driver_match(const struct bcs_driver *drv)
{
	const struct bcs_sched *s = &bcs_sched;

	if (s->mode != BCS_MODE_DRIVEN)
		return false;
	if ((drv->file || drv->portid) && !bcs_same_driver(&s->driver, drv))
		return false;
	if (drv->tgid && drv->tgid != s->driver.tgid)
		return false;
	return drv->file || drv->portid || drv->tgid;
}

/* Fail open and leave driven mode if @drv matches the driver. */
static int bcs_drop_driver(const struct bcs_driver *drv, bool failure)
{
	struct bcs_sched *s = &bcs_sched;
	unsigned long flags;
	int err = -ENOTCONN;

	mutex_lock(&bcs_config_mutex);
	spin_lock_irqsave(&bcs_lock, flags);
	if (bcs_driver_match(drv)) {
		if (failure)
			pr_warn("driver (pid %d) gone: failing open\n",
				s->driver.tgid);
		s->mode = BCS_MODE_OFF;
		memset(&s->driver, 0, sizeof(s->driver));
		WRITE_ONCE(bcs_driver_tgid, 0);
		bcs_resume_all(failure);
		s->failopen = false;
		err = 0;
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	if (!err)
		bcs_stop_timers(BCS_MODE_OFF);
	mutex_unlock(&bcs_config_mutex);
	return err;
}

/* The driver's file or socket leaves driven mode on purpose. */
int bcs_strobe_release(const struct bcs_driver *drv)
{
	struct bcs_driver handle = *drv;

	handle.tgid = 0;
	return bcs_drop_driver(&handle, false);
}

/**
 * bcs_strobe_driver_gone - the driver may have gone: fail open if it has
 * @drv: what is gone: a file or netlink socket released (@drv->tgid 0), a
 *	file closed by process @drv->tgid, or process @drv->tgid exited
 *	(@drv->file and @drv->portid 0)
 *
 * The driving process closing the file it drives with, or exiting, fails
 * open even if another process (a child that inherited the file) still
 * holds it: that one neither strobes nor can, and a task of a suspended
 * job may be among them.
 */
void bcs_strobe_driver_gone(const struct bcs_driver *drv)
{
	bcs_drop_driver(drv, true);
}

static void bcs_driver_exit_fn(struct work_struct *work)
{
	struct bcs_driver drv = {};
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	/* bcs_drop_driver() checks that it still drives. */
	drv.tgid = bcs_sched.driver_exited;
	bcs_sched.driver_exited = 0;
	spin_unlock_irqrestore(&bcs_lock, flags);
	if (drv.tgid)
		bcs_strobe_driver_gone(&drv);
}

/**
 * bcs_strobe_task_exit - a task exits: fail open if it ends the driver
 * @p: the exiting task
 * @group_dead: @p is the last thread of its process
 *
 * Context: the sched_process_exit probe, which may not sleep: the fail-open
 * is left to a work item.
 */
void bcs_strobe_task_exit(struct task_struct *p, bool group_dead)
{
	pid_t tgid = READ_ONCE(bcs_driver_tgid);
	unsigned long flags;

	if (likely(!tgid || !group_dead || task_tgid_nr(p) != tgid))
		return;
	spin_lock_irqsave(&bcs_lock, flags);
	if (bcs_sched.mode == BCS_MODE_DRIVEN && bcs_sched.driver.tgid == tgid) {
		bcs_sched.driver_exited = tgid;
		schedule_work(&bcs_driver_exit_work);
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
}

/* Driven strobes waiting for their deadlines now. */
u32 bcs_strobe_queued(void)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&bcs_lock, flags);
	n = bcs_sched.queued;
	spin_unlock_irqrestore(&bcs_lock, flags);
	return n;
}

void bcs_strobe_get_state(struct bcs_state *st)
{
	struct bcs_sched *s = &bcs_sched;
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	st->version = BCS_VERSION;
	st->mode = s->mode;
	st->row = s->row;
	st->slice = s->slice;
	st->slice_ns = s->slice_ns;
	st->watchdog_slices = s->watchdog_slices;
	st->failopen = s->failopen;
	st->nr_jobs = bcs_nr_jobs;
	st->nr_tasks = bcs_nr_tasks;
	st->nr_parked = bcs_nr_parked;
	st->driver_pid = s->mode == BCS_MODE_DRIVEN ? s->driver.tgid : 0;
	st->strobes = s->strobes;
	st->switches = s->switches;
	st->late = s->late;
	st->missed = s->missed;
	st->failopens = s->failopens;
	st->attach_failures = bcs_attach_failures;
	st->stat_records = bcs_stats_capacity();
	st->drain_cuts = s->drain_cuts;
	st->predicted = s->predicted;
	st->expired = s->expired;
	spin_unlock_irqrestore(&bcs_lock, flags);
}

int bcs_strobe_init(unsigned long slice_ns, unsigned int watchdog_slices)
{
	bcs_sched.mode = BCS_MODE_OFF;
	bcs_sched.row = BCS_ROW_NONE;
	bcs_sched.slice_ns = slice_ns;
	bcs_sched.watchdog_slices = watchdog_slices;
	bcs_hrtimer_setup(&bcs_tick_timer, bcs_tick_fn, CLOCK_MONOTONIC,
			  HRTIMER_MODE_REL);
	bcs_hrtimer_setup(&bcs_strobe_timer, bcs_strobe_fn, CLOCK_REALTIME,
			  HRTIMER_MODE_ABS);
	bcs_hrtimer_setup(&bcs_watchdog_timer, bcs_watchdog_fn,
			  CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	bcs_hrtimer_setup(&bcs_fill_timer, bcs_fill_fn, CLOCK_MONOTONIC,
			  HRTIMER_MODE_REL);
	return 0;
}

/* Module unload: fail open and stop every timer. */
void bcs_strobe_exit(void)
{
	unsigned long flags;

	mutex_lock(&bcs_config_mutex);
	spin_lock_irqsave(&bcs_lock, flags);
	bcs_sched.mode = BCS_MODE_OFF;
	memset(&bcs_sched.driver, 0, sizeof(bcs_sched.driver));
	WRITE_ONCE(bcs_driver_tgid, 0);
	bcs_resume_all(false);
	spin_unlock_irqrestore(&bcs_lock, flags);
	bcs_stop_timers(BCS_MODE_OFF);
	mutex_unlock(&bcs_config_mutex);
	/*
	 * An exit probe that saw the driver's tgid before it was cleared has
	 * returned after a grace period (probes run with preemption off);
	 * the work it may have queued finds driven mode over.
	 */
	synchronize_rcu();
	cancel_work_sync(&bcs_driver_exit_work);
}

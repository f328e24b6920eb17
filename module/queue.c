// SPDX-License-Identifier: GPL-2.0
/*
 * The queue of driven strobes, and predictions.
 *
 * In driven mode strobes come from user space (ioctl or netlink) ahead of
 * their deadline; bcs_strobe_timer, on CLOCK_REALTIME so that nodes with
 * synchronised clocks switch together, fires at the deadline.  A strobe
 * whose deadline has passed switches at once and is counted late.  Up to
 * BCS_STROBE_QUEUE strobes wait for their deadlines, so that a driver may
 * send them more than a slice ahead: slices shorter than the network's
 * latency still switch on time.  A strobe may carry a prediction, the row
 * of the slice after it (BCS_STROBE_PREDICT): queued behind it, it switches
 * at the next deadline only if no strobe from the driver replaced it, so a
 * node whose strobe was lost switches to the row the master would have
 * sent.  A prediction is only ever for the slice after a strobe, so it
 * never runs more than one slice past the driver's last strobe.  With
 * BCS_STROBE_EXPIRE an expiry of no row follows, due when the strobe's
 * rows end.
 *
 * A plan (BCS_STROBE_PLAN) is one entry of the queue for all of its slices:
 * the entry holds the slice due next (its number, deadline and row) and
 * how many are left.  When its slice is due it switches, and the entry,
 * moved on a slice, waits for the next deadline, so that the same timer
 * switches every planned slice at its own deadline, until the last; a plan
 * whose first slice has switched is the node's current plan.  A strobe
 * that comes behind a plan cuts it short before its own slice (and
 * deadline), so that every slice of an entry is due before the next entry:
 * the queue stays in deadline order, and nothing of a plan runs after the
 * strobe that replaced it.  The rest of a plan cut short or given up is
 * not counted missed (the driver replaced it); slices of a plan that the
 * timer overtook are.
 *
 * Locking: the queue (bcs_queue) is under bcs_lock, as struct bcs_sched
 * (switch.h) is; the timer is cancelled by driver.c with bcs_config_mutex held and bcs_lock
 * released.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/string.h>

#include "compat.h"
#include "job.h"
#include "queue.h"
#include "switch.h"
#include "watchdog.h"

/* A driven strobe waiting for its deadline. */
struct bcs_queued {
	struct bcs_strobe strobe;
	u64 arrival_ns;
	u64 skipped;			/* slice numbers skipped before it */
	u64 plan_ns;			/* a plan: the length of its slices */
	u32 origin;			/* BCS_SLICE_INJECTED or 0 */
	bool late;			/* arrived after its deadline */
	bool predicted;			/* a prediction, not a strobe */
	bool expiry;			/* and of no row: a strobe's row ended */
	bool started;			/* a plan whose first slice switched */
};

/*
 * A plan's entry: @strobe.slice, .deadline_ns and .row are those of the
 * slice due next, .plan_slices the slices left, that one included.
 */
static bool bcs_queued_plan(const struct bcs_queued *q)
{
	return q->strobe.flags & BCS_STROBE_PLAN;
}

/* The slices @q switches yet: a plan's left, one for anything else. */
static u32 bcs_queued_slices(const struct bcs_queued *q)
{
	return bcs_queued_plan(q) ? q->strobe.plan_slices : 1;
}

/* The number of the last slice @q switches. */
static u64 bcs_queued_last(const struct bcs_queued *q)
{
	return q->strobe.slice + bcs_queued_slices(q) - 1;
}

/* The deadline of the last slice @q switches. */
static u64 bcs_queued_end(const struct bcs_queued *q)
{
	return q->strobe.deadline_ns +
	       (u64)(bcs_queued_slices(q) - 1) * q->plan_ns;
}

/*
 * Move plan @q @n slices on (@n below the slices it has left), by the
 * rule of bcs_plan_row().
 */
static void bcs_plan_advance(struct bcs_queued *q, u32 n)
{
	q->strobe.slice += n;
	q->strobe.deadline_ns += (u64)n * q->plan_ns;
	q->strobe.row = bcs_plan_row(q->strobe.plan_rows, q->strobe.row, n);
	q->strobe.plan_slices -= n;
}

/*
 * How many of the slices of plan @q are numbered before @slice and due
 * before @deadline_ns (@before) or, with !@before, due by @deadline_ns
 * (due at or before it); at most the slices it has left.
 */
static u32 bcs_plan_count(const struct bcs_queued *q, u64 slice,
			  u64 deadline_ns, bool before)
{
	u64 n = q->strobe.plan_slices, d = q->strobe.deadline_ns;

	if (slice <= q->strobe.slice)
		return 0;
	n = min(n, slice - q->strobe.slice);
	if (deadline_ns < d || (before && deadline_ns == d))
		return 0;
	if (before)
		n = min(n, DIV64_U64_ROUND_UP(deadline_ns - d, q->plan_ns));
	else
		n = min(n, div64_u64(deadline_ns - d, q->plan_ns) + 1);
	return n;
}

/*
 * The queue, and what it knows of the slice number it sets (bcs_sched.slice,
 * switch.c).  bcs_lock.
 */
static struct bcs_queue_state {
	/* Driven strobes waiting for their deadlines, earliest first. */
	struct bcs_queued queue[BCS_STROBE_QUEUE];
	u32 queued;
	bool have_slice;		/* a driven strobe has set the slice */
	bool slice_predicted;		/* the slice began with a prediction */
} bcs_queue;

static struct hrtimer bcs_strobe_timer;		/* driven deadlines */

/* Remove the @n earliest queued strobes.  bcs_lock held. */
static void bcs_queue_pop(u32 n)
{
	struct bcs_queue_state *qs = &bcs_queue;

	qs->queued -= n;
	memmove(&qs->queue[0], &qs->queue[n],
		qs->queued * sizeof(qs->queue[0]));
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
	struct bcs_queue_state *qs = &bcs_queue;
	u64 slice_ns = req->slice_ns ? req->slice_ns : bcs_sched.slice_ns;
	u64 deadline = req->deadline_ns + ahead * slice_ns;
	struct bcs_queued *q;

	/* The rows of a strobe that comes after them have ended already. */
	if (expiry && deadline <= now)
		deadline = now;
	else if (deadline <= now)
		return false;
	if (qs->queued == BCS_STROBE_QUEUE ||
	    (qs->queued &&
	     bcs_queued_end(&qs->queue[qs->queued - 1]) >= deadline))
		return false;
	q = &qs->queue[qs->queued++];
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
 * last one they cover (the last of a plan's).  Each is dropped if a strobe for a later slice is
 * queued already, or if the queue is full: a guess never displaces a
 * strobe; a prediction also if its deadline has passed, while an expiry
 * then is due at once (the strobe came after its rows had ended: it is
 * overtaken, and nothing runs).  bcs_lock held.
 */
static void bcs_queue_predict(const struct bcs_strobe *req, u64 now, u32 origin)
{
	u32 ahead = req->flags & BCS_STROBE_PLAN ? req->plan_slices : 1;

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
	struct bcs_queue_state *qs = &bcs_queue;
	u32 i, n = 0;

	for (i = 0; i < qs->queued; i++)
		if (!qs->queue[i].predicted || qs->queue[i].strobe.slice < slice)
			qs->queue[n++] = qs->queue[i];
	qs->queued = n;
}

/*
 * A strobe that comes after a prediction for its slice has switched, and
 * names the same row, has nothing left to do.  bcs_lock held.
 */
static bool bcs_strobe_confirms(const struct bcs_strobe *req)
{
	const struct bcs_sched *s = &bcs_sched;

	return bcs_queue.slice_predicted && req->slice == s->slice &&
	       req->row == s->row && !(req->flags & BCS_STROBE_NEXT);
}

/*
 * Queue a driven strobe.  It replaces the waiting predictions for its slice
 * and later ones first.  Queued strobes due no earlier than it
 * (a driver that started again, another master) and, when it switches at
 * once, all of them are superseded and count as missed now (the rest of a
 * current plan does not); so does the earliest when the queue is full.
 * Plans queued before it are cut short before its slice and deadline.
 * The slice numbers it skips after the strobe before it count as missed
 * when it switches.  A prediction or expiry it carries goes behind it.
 * bcs_lock held.
 */
void bcs_queue_add(const struct bcs_strobe *req, u64 now, u32 origin)
{
	struct bcs_queue_state *qs = &bcs_queue;
	bool at_once = req->flags & (BCS_STROBE_NOW | BCS_STROBE_NEXT);
	u64 slice = bcs_sched.slice;
	struct bcs_queued n = {
		.strobe = *req,
		.arrival_ns = now,
		.origin = origin,
	};
	u32 keep = 0, i, cut;
	u64 last;

	if (bcs_queued_plan(&n)) {
		n.plan_ns = req->slice_ns ? req->slice_ns : bcs_sched.slice_ns;
		/*
		 * A plan come late: its slices before the current one that
		 * are past have run otherwise.  The rest is a plan still.
		 */
		cut = qs->have_slice ? bcs_plan_count(&n, slice, now, false) : 0;
		if (cut && cut < n.strobe.plan_slices)
			bcs_plan_advance(&n, cut);
	}
	/*
	 * A strobe for a slice before the current one, come after its
	 * deadline: the node switched past it (to a guess, or overtaking it
	 * after a stall), and running its row now would run it in another
	 * slice.  It counts as missed and changes nothing.
	 */
	if (!at_once && qs->have_slice && n.strobe.slice < slice &&
	    n.strobe.deadline_ns <= now) {
		bcs_switch_missed(1);
		return;
	}
	bcs_queue_unpredict(req->slice);
	if (bcs_strobe_confirms(&n.strobe)) {
		/* Its slice is this one: it feeds the watchdog as a switch. */
		qs->slice_predicted = false;
		bcs_watchdog_arm(0);
		if (bcs_queued_slices(&n) == 1)
			goto predict;
		/* The rest of the plan goes on from the next slice. */
		bcs_plan_advance(&n, 1);
		n.started = true;
	}

	while (!at_once && keep < qs->queued &&
	       qs->queue[keep].strobe.deadline_ns < req->deadline_ns)
		keep++;
	for (i = keep; i < qs->queued; i++)
		bcs_switch_missed(!qs->queue[i].started);
	qs->queued = keep;
	/* What it replaces of the plans before it is dropped, uncounted. */
	for (i = 0; i < qs->queued; i++)
		if (bcs_queued_plan(&qs->queue[i]))
			qs->queue[i].strobe.plan_slices =
				max(1U, bcs_plan_count(&qs->queue[i], req->slice,
						       req->deadline_ns, true));
	if (qs->queued == BCS_STROBE_QUEUE) {
		bcs_switch_missed(!qs->queue[0].started);
		bcs_queue_pop(1);
	}
	last = qs->queued ? bcs_queued_last(&qs->queue[qs->queued - 1]) :
			    slice;

	if ((qs->queued || qs->have_slice) && n.strobe.slice > last + 1)
		n.skipped = n.strobe.slice - last - 1;
	if (req->flags & BCS_STROBE_NEXT) {
		n.strobe.row = bcs_switch_next_row();
		n.strobe.flags |= BCS_STROBE_NOW;
	}
	n.late = !at_once && now > n.strobe.deadline_ns;
	qs->queue[qs->queued++] = n;
predict:
	bcs_queue_predict(req, now, origin);
}

/*
 * Apply the newest queued strobe that is due at @now, or of a plan the
 * newest slice due; a plan with slices left waits for the next one.
 * Earlier ones also due were overtaken (this expiry came late) and count
 * as missed.  A strobe is late if it arrived after its deadline; the
 * hrtimer firing a little after the deadline is not.  bcs_lock held.
 */
void bcs_queue_run(u64 now)
{
	struct bcs_queue_state *qs = &bcs_queue;
	struct bcs_sched *s = &bcs_sched;
	struct bcs_queued q, *head;
	u32 due = 0, over = 0, flags, i;

	while (due < qs->queued &&
	       ((qs->queue[due].strobe.flags & BCS_STROBE_NOW) ||
		qs->queue[due].strobe.deadline_ns <= now))
		due++;
	if (!due)
		return;
	/* An expiry overtaken is no strobe lost; a plan's slices are. */
	for (i = 0; i + 1 < due; i++)
		if (!qs->queue[i].expiry)
			bcs_switch_missed(bcs_queued_slices(&qs->queue[i]));
	head = &qs->queue[due - 1];
	if (bcs_queued_plan(head)) {
		over = bcs_plan_count(head, U64_MAX, now, false) - 1;
		if (over) {
			bcs_switch_missed(over);
			bcs_plan_advance(head, over);
			head->skipped = 0;
		}
		head->late = head->arrival_ns > head->strobe.deadline_ns;
	}
	q = *head;
	if (bcs_queued_slices(head) > 1) {
		/* The rest of the plan waits for its next slice. */
		bcs_plan_advance(head, 1);
		head->started = true;
		head->late = false;
		head->skipped = 0;
		bcs_queue_pop(due - 1);
	} else {
		bcs_queue_pop(due);
	}
	bcs_switch_missed(q.skipped);

	flags = BCS_SLICE_DRIVEN | q.origin;
	if (due > 1 || over)
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
	} else if (q.started || over) {
		flags |= BCS_SLICE_PLANNED;
		s->planned++;
	}
	bcs_switch_clear_failopen();
	qs->have_slice = true;
	qs->slice_predicted = q.predicted;
	bcs_switch(q.strobe.slice, q.strobe.row, q.arrival_ns,
		   q.strobe.deadline_ns, flags);
	/*
	 * The watchdog counts from the driver's last switch, not a guess:
	 * each slice of a plan is one, so it counts from the plan's last.
	 */
	if (!q.predicted)
		bcs_watchdog_arm(0);
}

static enum hrtimer_restart bcs_strobe_fn(struct hrtimer *timer)
{
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	struct bcs_queue_state *qs = &bcs_queue;
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	/* Re-armed meanwhile by a new strobe: that one has run what was due. */
	if (bcs_sched.mode == BCS_MODE_DRIVEN && !hrtimer_is_queued(timer)) {
		bcs_queue_run(ktime_get_real_ns());
		if (qs->queued) {
			hrtimer_set_expires(timer,
					    ns_to_ktime(qs->queue[0].strobe.deadline_ns));
			ret = HRTIMER_RESTART;
		}
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return ret;
}

/* Arm the timer for the earliest queued strobe.  bcs_lock held. */
void bcs_queue_arm(void)
{
	if (bcs_queue.queued)
		hrtimer_start(&bcs_strobe_timer,
			      ns_to_ktime(bcs_queue.queue[0].strobe.deadline_ns),
			      HRTIMER_MODE_ABS);
}

/* bcs_config_mutex held, bcs_lock not: the callback takes it. */
void bcs_queue_cancel(void)
{
	hrtimer_cancel(&bcs_strobe_timer);
}

/*
 * Every job resumes (bcs_switch_resume_all()): drop the strobes waiting
 * for their deadlines, uncounted; the next strobe confirms no prediction.
 * bcs_lock held.
 */
void bcs_queue_flush(void)
{
	bcs_queue.queued = 0;
	bcs_queue.slice_predicted = false;
}

/*
 * A driver enters driven mode: the slice number is not yet one of its
 * strobes'.  bcs_lock held.
 */
void bcs_queue_forget_slice(void)
{
	bcs_queue.have_slice = false;
}

/* Driven strobes waiting for their deadlines now. */
u32 bcs_queue_count(void)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&bcs_lock, flags);
	n = bcs_queue.queued;
	spin_unlock_irqrestore(&bcs_lock, flags);
	return n;
}

void bcs_queue_init(void)
{
	bcs_hrtimer_setup(&bcs_strobe_timer, bcs_strobe_fn, CLOCK_REALTIME,
			  HRTIMER_MODE_ABS);
}

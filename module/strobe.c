// SPDX-License-Identifier: GPL-2.0
/*
 * Strobes.
 *
 * A strobe names a slice, the row to run in it and the deadline at which
 * the slice begins.  In standalone mode bcs_tick_timer produces one every
 * slice.  In driven mode they come from user space (ioctl or netlink) and
 * wait in the queue (queue.c) for their deadlines; bcs_strobe_submit()
 * checks them and hands them on.  In standalone mode a submitted strobe
 * switches at once and the tick continues from there.  A plan
 * (BCS_STROBE_PLAN) is one strobe for many slices: checked here, queued
 * whole, and switched slice by slice by the queue.
 *
 * Locking: bcs_lock, as for struct bcs_sched; the tick is cancelled by
 * driver.c with bcs_config_mutex held and bcs_lock released.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/ktime.h>

#include "compat.h"
#include "driver.h"
#include "job.h"
#include "queue.h"
#include "strobe.h"
#include "switch.h"
#include "watchdog.h"

static struct hrtimer bcs_tick_timer;		/* standalone slices */

/* Switch to the next row in slice @slice.  bcs_lock held. */
static void bcs_standalone_switch(u64 slice, u64 now, u32 flags)
{
	bcs_sched.strobes++;
	/* The rotation follows the home rows of the new slice. */
	bcs_job_apply_due(slice);
	bcs_switch(slice, bcs_switch_next_row(), now, now,
		   BCS_SLICE_STANDALONE | flags);
}

static enum hrtimer_restart bcs_tick_fn(struct hrtimer *timer)
{
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	unsigned long flags;
	u64 overruns;

	spin_lock_irqsave(&bcs_lock, flags);
	/* Re-armed meanwhile by an injected strobe: that one stands. */
	if (bcs_sched.mode == BCS_MODE_STANDALONE && !hrtimer_is_queued(timer)) {
		bcs_standalone_switch(bcs_sched.slice + 1,
				      ktime_get_real_ns(), 0);
		overruns = hrtimer_forward_now(timer,
					       ns_to_ktime(bcs_sched.slice_ns));
		if (overruns > 1)
			bcs_switch_missed(overruns - 1);
		ret = HRTIMER_RESTART;
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return ret;
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
	if (req->flags & BCS_STROBE_PLAN) {
		if (req->flags & (BCS_STROBE_NOW | BCS_STROBE_NEXT |
				  BCS_STROBE_PREDICT))
			return -EINVAL;
		if (!req->plan_slices || req->plan_slices > BCS_PLAN_SLICES_MAX)
			return -ERANGE;
		/* Slice numbers do not wrap, nor does the expiry's. */
		if (req->slice > U64_MAX - req->plan_slices)
			return -ERANGE;
	} else if (req->plan_rows || req->plan_slices) {
		return -EINVAL;
	}
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
 * alike.  A plan is checked in every mode (standalone uses its first slice
 * only).  bcs_lock held.
 */
static int bcs_strobe_allowed(const struct bcs_strobe *req,
			      const struct bcs_driver *drv, u64 now)
{
	const struct bcs_sched *s = &bcs_sched;
	u64 len = req->slice_ns ? req->slice_ns : s->slice_ns;

	/* A plan ends, in slices of the length it runs in, by the limit. */
	if ((req->flags & BCS_STROBE_PLAN) &&
	    bcs_plan_deadline(req->deadline_ns, len, req->plan_slices) >
	    BCS_DEADLINE_NS_MAX)
		return -ERANGE;
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
	u64 now, slice;
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
		bcs_switch_set_slice_ns(req->slice_ns);
	switch (s->mode) {
	case BCS_MODE_STANDALONE:
		/*
		 * Switch now; the local timer continues from here.  Of a plan
		 * only the first slice, as a strobe's.
		 */
		slice = req->slice ? req->slice : s->slice + 1;
		if (req->flags & BCS_STROBE_NEXT) {
			bcs_standalone_switch(slice, now, origin);
		} else {
			s->strobes++;
			bcs_switch(slice, req->row, now, now,
				   BCS_SLICE_STANDALONE | origin);
		}
		hrtimer_start(&bcs_tick_timer, ns_to_ktime(s->slice_ns),
			      HRTIMER_MODE_REL);
		break;
	case BCS_MODE_DRIVEN:
		s->strobes++;
		bcs_queue_add(req, now, origin);
		bcs_queue_run(now);
		bcs_queue_arm();
		/*
		 * Each applied switch re-arms the watchdog; a strobe arms it
		 * from its deadline only if it is not armed.  Strobes that
		 * keep superseding each other before their deadlines (a
		 * driver whose clock runs ahead) must not put it off for ever.
		 */
		if (!bcs_watchdog_armed())
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

/* Start the standalone tick @delay_ns from now.  bcs_lock may be held. */
void bcs_strobe_tick_start(u64 delay_ns)
{
	hrtimer_start(&bcs_tick_timer, ns_to_ktime(delay_ns), HRTIMER_MODE_REL);
}

/* bcs_config_mutex held, bcs_lock not: the callback takes it. */
void bcs_strobe_tick_cancel(void)
{
	hrtimer_cancel(&bcs_tick_timer);
}

void bcs_strobe_init(void)
{
	bcs_hrtimer_setup(&bcs_tick_timer, bcs_tick_fn, CLOCK_MONOTONIC,
			  HRTIMER_MODE_REL);
}

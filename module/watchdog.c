// SPDX-License-Identifier: GPL-2.0
/*
 * The watchdog of driven mode.
 *
 * bcs_watchdog_timer fails open when a driven node stops switching: no
 * strobes, or strobes that never reach their deadlines.  Every applied
 * strobe re-arms it for watchdog_slices slices; a strobe that finds it
 * unarmed arms it for that long after its deadline, so strobes that keep
 * superseding each other cannot put it off.  It stays in driven mode: the
 * next applied strobe clears the fail-open state.  CLOCK_MONOTONIC, so that
 * a step of the realtime clock does not fire it.
 *
 * Locking: bcs_lock, as for struct bcs_sched; cancelled by driver.c with
 * bcs_config_mutex held and bcs_lock released.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/ktime.h>

#include "compat.h"
#include "job.h"
#include "switch.h"
#include "watchdog.h"

static struct hrtimer bcs_watchdog_timer;	/* driven, no switches */

/* Fail open @wait_ns + watchdog_slices slices from now.  bcs_lock held. */
void bcs_watchdog_arm(u64 wait_ns)
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

static enum hrtimer_restart bcs_watchdog_fn(struct hrtimer *timer)
{
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	if (bcs_sched.mode == BCS_MODE_DRIVEN && !bcs_sched.failopen &&
	    !hrtimer_is_queued(timer)) {
		pr_warn_ratelimited("no switch for %u slices: failing open\n",
				    bcs_sched.watchdog_slices);
		bcs_switch_resume_all(true);
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return HRTIMER_NORESTART;
}

/* Is it armed?  bcs_lock held. */
bool bcs_watchdog_armed(void)
{
	return hrtimer_is_queued(&bcs_watchdog_timer);
}

/* bcs_config_mutex held, bcs_lock not: the callback takes it. */
void bcs_watchdog_cancel(void)
{
	hrtimer_cancel(&bcs_watchdog_timer);
}

void bcs_watchdog_init(void)
{
	bcs_hrtimer_setup(&bcs_watchdog_timer, bcs_watchdog_fn,
			  CLOCK_MONOTONIC, HRTIMER_MODE_REL);
}

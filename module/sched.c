// SPDX-License-Identifier: GPL-2.0
/*
 * The scheduling state of the module (struct bcs_sched, switch.h) read
 * out, the hooks that job.c and park.c call, and the start and end of the
 * parts that decide when to switch: the switch, the watchdog, the queue,
 * strobes and the driver.
 *
 * Locking: bcs_sched is protected by bcs_lock (see switch.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>

#include "dist_ctx.h"
#include "driver.h"
#include "events.h"
#include "job.h"
#include "park.h"
#include "queue.h"
#include "sched.h"
#include "ring.h"
#include "strobe.h"
#include "switch.h"
#include "watchdog.h"

/*
 * A task leaves its job, or a job is destroyed: the statistics first, so
 * that the announcement of the job's end counts what they keep.
 */
static void bcs_sched_unlinked(struct bcs_task *bt)
{
	bcs_dist_unlinked(bt);
	bcs_events_unlinked(bt);
}

static void bcs_sched_destroyed(struct bcs_kjob *job)
{
	bcs_dist_job_destroyed(job);
	bcs_events_job_destroyed(job);
}

/* What job.c and park.c tell the layers above them. */
const struct bcs_job_hooks bcs_sched_hooks = {
	.park	= bcs_park_request,
	.parked	= bcs_switch_parked,
	.woken	= bcs_switch_woken,
	.exited	= bcs_driver_task_exit,
	.linked	= bcs_dist_linked,
	.unlinked = bcs_sched_unlinked,
	.created = bcs_dist_job_created,
	.destroyed = bcs_sched_destroyed,
};

void bcs_sched_get_state(struct bcs_state *st)
{
	struct bcs_sched *s = &bcs_sched;
	struct bcs_window w;
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
	st->stat_records = bcs_ring_capacity();
	st->drain_cuts = s->drain_cuts;
	st->predicted = s->predicted;
	st->expired = s->expired;
	st->planned = s->planned;
	bcs_ring_window_get(&w);
	st->window_state = w.state;
	spin_unlock_irqrestore(&bcs_lock, flags);
}

/**
 * bcs_sched_window - read, arm or disarm the slice window of the ring
 * @w: the request, checked by the caller; its output fields are filled
 *	with the window as it is after the call
 *
 * A window must begin after the current slice: its first slice must not
 * have begun.  Return: 0, or the error of bcs_ring_window_arm().
 */
int bcs_sched_window(struct bcs_window *w)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&bcs_lock, flags);
	if (w->op == BCS_WINDOW_ARM)
		err = bcs_ring_window_arm(w->from_slice, w->to_slice,
					  bcs_sched.slice);
	else if (w->op == BCS_WINDOW_DISARM)
		bcs_ring_window_disarm();
	if (!err)
		bcs_ring_window_get(w);
	spin_unlock_irqrestore(&bcs_lock, flags);
	return err;
}

int bcs_sched_init(unsigned long slice_ns, unsigned int watchdog_slices)
{
	bcs_driver_init(watchdog_slices);
	bcs_switch_init(slice_ns, bcs_queue_flush);
	bcs_strobe_init();
	bcs_queue_init();
	bcs_watchdog_init();
	return 0;
}

/* Module unload: fail open and stop every timer. */
void bcs_sched_exit(void)
{
	bcs_driver_exit();
}

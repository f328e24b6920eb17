// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration and the driver.
 *
 * bcs_sched_config() changes the mode, the slice length and the watchdog.
 * The file or netlink socket that enters driven mode becomes the driver:
 * only it strobes.  Losing the driver (its file or socket released, the
 * driving process closing its file or exiting) fails open and leaves driven
 * mode, as does module unload.
 *
 * Locking: mode changes, which start and cancel timers, are serialised by
 * bcs_config_mutex; timers are cancelled with the mutex held but never with
 * bcs_lock held, because their callbacks take it.  The state itself is
 * struct bcs_sched (switch.h), under bcs_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "driver.h"
#include "job.h"
#include "queue.h"
#include "strobe.h"
#include "switch.h"
#include "watchdog.h"

/*
 * The driver's process id while in driven mode, else 0: written under
 * bcs_lock with bcs_sched.driver, read without it by the exit probe
 * (bcs_driver_task_exit()).  bcs_driver_exit_work fails open in process
 * context for the probe, which may not sleep, for the driver that
 * bcs_driver_exited names (bcs_lock).
 */
static pid_t bcs_driver_tgid;
static pid_t bcs_driver_exited;
static void bcs_driver_exit_fn(struct work_struct *work);
static DECLARE_WORK(bcs_driver_exit_work, bcs_driver_exit_fn);

/*
 * Serialises mode changes and driver loss, which start and cancel timers.
 * Taken before bcs_lock; timers are cancelled with it held and bcs_lock
 * released (their callbacks take bcs_lock).
 */
static DEFINE_MUTEX(bcs_config_mutex);

/* The state at load: off, the watchdog of module parameter watchdog_slices. */
void bcs_driver_init(u32 watchdog_slices)
{
	bcs_sched.mode = BCS_MODE_OFF;
	bcs_sched.watchdog_slices = watchdog_slices;
}

/*
 * Stop the timers that @mode does not use.  bcs_config_mutex held.  Any
 * mode switches, and so may wait for a drain, but a mode that is entered
 * has resumed every job first (no fill is pending): off needs no timer.
 */
static void bcs_stop_timers(u32 mode)
{
	if (mode == BCS_MODE_OFF)
		bcs_switch_cancel_fill();
	if (mode != BCS_MODE_STANDALONE)
		bcs_strobe_tick_cancel();
	if (mode != BCS_MODE_DRIVEN) {
		bcs_queue_cancel();
		bcs_watchdog_cancel();
	}
}

/**
 * bcs_sched_config - change and read the configuration
 * @cfg: fields named in @cfg->set are applied; all are returned
 * @drv: the caller, which becomes the driver when it enters driven mode
 *
 * Return: 0; -EINVAL for a bad value; -EBUSY if another driver holds
 * driven mode.
 */
int bcs_sched_config(struct bcs_config *cfg, const struct bcs_driver *drv)
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
		bcs_switch_set_slice_ns(cfg->slice_ns);
	if (cfg->set & BCS_CONFIG_WATCHDOG)
		s->watchdog_slices = cfg->watchdog_slices;
	if (cfg->set & BCS_CONFIG_MODE) {
		s->mode = mode;
		if (mode == BCS_MODE_DRIVEN) {
			s->driver = *drv;
			bcs_queue_forget_slice();
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
			bcs_switch_resume_all(false);
			bcs_switch_clear_failopen();
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
			bcs_strobe_tick_start(0);
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
		bcs_switch_resume_all(failure);
		bcs_switch_clear_failopen();
		err = 0;
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	if (!err)
		bcs_stop_timers(BCS_MODE_OFF);
	mutex_unlock(&bcs_config_mutex);
	return err;
}

/* The driver's file or socket leaves driven mode on purpose. */
int bcs_driver_release(const struct bcs_driver *drv)
{
	struct bcs_driver handle = *drv;

	handle.tgid = 0;
	return bcs_drop_driver(&handle, false);
}

/**
 * bcs_driver_gone - the driver may have gone: fail open if it has
 * @drv: what is gone: a file or netlink socket released (@drv->tgid 0), a
 *	file closed by process @drv->tgid, or process @drv->tgid exited
 *	(@drv->file and @drv->portid 0)
 *
 * The driving process closing the file it drives with, or exiting, fails
 * open even if another process (a child that inherited the file) still
 * holds it: that one neither strobes nor can, and a task of a suspended
 * job may be among them.
 */
void bcs_driver_gone(const struct bcs_driver *drv)
{
	bcs_drop_driver(drv, true);
}

static void bcs_driver_exit_fn(struct work_struct *work)
{
	struct bcs_driver drv = {};
	unsigned long flags;

	spin_lock_irqsave(&bcs_lock, flags);
	/* bcs_drop_driver() checks that it still drives. */
	drv.tgid = bcs_driver_exited;
	bcs_driver_exited = 0;
	spin_unlock_irqrestore(&bcs_lock, flags);
	if (drv.tgid)
		bcs_driver_gone(&drv);
}

/**
 * bcs_driver_task_exit - a task exits: fail open if it ends the driver
 * @p: the exiting task
 * @group_dead: @p is the last thread of its process
 *
 * Context: the sched_process_exit probe, which may not sleep: the fail-open
 * is left to a work item.
 */
void bcs_driver_task_exit(struct task_struct *p, bool group_dead)
{
	pid_t tgid = READ_ONCE(bcs_driver_tgid);
	unsigned long flags;

	if (likely(!tgid || !group_dead || task_tgid_nr(p) != tgid))
		return;
	spin_lock_irqsave(&bcs_lock, flags);
	if (bcs_sched.mode == BCS_MODE_DRIVEN && bcs_sched.driver.tgid == tgid) {
		bcs_driver_exited = tgid;
		schedule_work(&bcs_driver_exit_work);
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
}

/* Module unload: fail open and stop every timer. */
void bcs_driver_exit(void)
{
	unsigned long flags;

	mutex_lock(&bcs_config_mutex);
	spin_lock_irqsave(&bcs_lock, flags);
	bcs_sched.mode = BCS_MODE_OFF;
	memset(&bcs_sched.driver, 0, sizeof(bcs_sched.driver));
	WRITE_ONCE(bcs_driver_tgid, 0);
	bcs_switch_resume_all(false);
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

// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task distributions: for the tasks where they are enabled, the time
 * split into four states, each a metric with its histogram (linux/bcs_hist.h):
 * CPU bursts (running, from the end of one voluntary sleep to the start of
 * the next), blocked time (each voluntary sleep), suspended time (each sleep
 * parked by bcs) and runnable wait (on a run queue, not running).
 *
 * The events come from one tracepoint, sched_switch, registered while some
 * distribution is enabled, and dist_linger_ms after (10 s).  The probe
 * runs for every task switch in the system with a run queue lock held and
 * interrupts off: an untracked task costs a hash of its task_struct pointer
 * and one load from bcs_dist_filter, a small table counting the tracked
 * tasks by that hash; only a task whose slot is not 0 is looked up in
 * bcs_dist_hash.  A tracked task's state changes under its own raw lock,
 * taken inside the run queue lock and never around anything else.
 *
 * When a sleep ended is not taken from the sched_wakeup tracepoint (a
 * second probe on every wake-up in the system) but, when the task next
 * runs, from what the scheduler itself keeps of its run-queue waits
 * (CONFIG_SCHED_INFO, task_struct.sched_info): the waits counted in
 * run_delay since the sleep began, and the wait still open since
 * last_queued, which sched_info_arrive() folds in only after the probe.
 * The sleep is the rest of the interval.  A kernel without SCHED_INFO
 * counts the wait after a sleep as part of the sleep.
 *
 * A task parked by bcs sleeps in park.c with bcs_task.parked set: its
 * sleep is suspended time, any other sleep is blocked time.  Preemptions
 * and parks do not end a burst.  Every nanosecond of the time a task is
 * tracked belongs to exactly one state, all read from CLOCK_MONOTONIC
 * (one clock for every CPU: the scheduler's local_clock() may run apart
 * on two CPUs by up to a tick where the TSC is unstable), never going
 * back for one task (a reading behind the last one counts as the last
 * one), so that the four totals add up to the time tracked exactly.  The
 * wait that ends a sleep is a length of the run queue's clock (the
 * scheduler's), taken from the end of the interval.
 *
 * Here too the registration of the probe: while some distribution is
 * enabled, and dist_linger_ms after.
 *
 * Locking: see dist_internal.h.  The hash and the filter are changed under
 * bcs_dist_lock, and read by the probes under RCU (preemption off).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bcs_hist.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/sched/clock.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "dist_ctx.h"
#include "dist_internal.h"
#include "dist_probe.h"

#define BCS_DIST_FILTER_BITS	10

u32 bcs_dist_nr_active;				/* bcs_dist_lock */
static DEFINE_HASHTABLE(bcs_dist_hash, 10);	/* bcs_dist_lock, RCU */
static u16 bcs_dist_filter[1 << BCS_DIST_FILTER_BITS];	/* bcs_dist_lock */
static struct tracepoint *bcs_tp_switch;
static bool bcs_dist_registered;		/* bcs_dist_mutex */

static inline u16 *bcs_dist_slot(const struct task_struct *t)
{
	return &bcs_dist_filter[hash_ptr((void *)t, BCS_DIST_FILTER_BITS)];
}

/* Context: bcs_dist_lock or RCU (the probes: preemption off). */
struct bcs_dist_task *bcs_dist_find(const struct task_struct *t)
{
	struct bcs_dist_task *tr;

	hash_for_each_possible_rcu(bcs_dist_hash, tr, hash, (unsigned long)t)
		if (tr->task == t)
			return tr;
	return NULL;
}

/* Make @tr, of task @tr->task, found by the probes.  bcs_dist_lock held. */
void bcs_dist_hash_add(struct bcs_dist_task *tr)
{
	hash_add_rcu(bcs_dist_hash, &tr->hash, (unsigned long)tr->task);
}

/* No longer: @tr's task has gone.  bcs_dist_lock held. */
void bcs_dist_hash_del(struct bcs_dist_task *tr)
{
	hash_del_rcu(&tr->hash);
}

static void bcs_hist_add(struct bcs_dist_hist *h, u64 v)
{
	h->buckets[bcs_hist_index(v, h->sub_bits)]++;
	if (!h->count || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	if (h->saturated || check_add_overflow(h->sum, v, &h->sum)) {
		h->sum = U64_MAX;
		h->saturated = true;
	}
}

/* Count @v in @tr's histogram of metric @m, if enabled.  @tr->lock held. */
void bcs_dist_record(struct bcs_dist_task *tr, u32 m, u64 v)
{
	if ((tr->metrics & BIT(m)) && tr->hist[m])
		bcs_hist_add(tr->hist[m], v);
}

/*
 * Close the interval of the current state at @now; return its length.  A
 * reading behind @tr->since (another CPU's clock) closes it at
 * @tr->since, so that the intervals still add up to the time tracked.
 */
static u64 bcs_dist_account(struct bcs_dist_task *tr, u64 now)
{
	u64 d = now > tr->since ? now - tr->since : 0;

	tr->time[tr->state] += d;
	if (tr->state == BCS_DIST_BURST)
		tr->burst_ns += d;
	tr->since += d;
	return d;
}

/*
 * How long the sleeping task @p has waited on run queues since its sleep
 * began, at @now: the waits the scheduler has counted since (it counts a
 * task moved to another CPU's queue as a wait ended there), and the one
 * still open.  No more than the interval of the sleep.
 */
static u64 bcs_dist_queued(const struct bcs_dist_task *tr,
			   const struct task_struct *p, u64 now)
{
	u64 w = bcs_task_run_delay(p) - tr->run_delay;
	u64 q = bcs_task_last_queued(p);
	u64 d = now > tr->since ? now - tr->since : 0;
	u64 rq_now;

	/* @q is of this CPU's run queue clock, which local_clock() reads. */
	if (q) {
		rq_now = local_clock();
		if (rq_now > q)
			w += rq_now - q;
	}
	return min(w, d);
}

static void bcs_dist_out(struct bcs_dist_task *tr, struct task_struct *p,
			 bool preempt, unsigned int prev_state, u64 now)
{
	bool was_running;

	raw_spin_lock(&tr->lock);
	if (!tr->active)
		goto out;
	was_running = tr->state == BCS_DIST_BURST;
	bcs_dist_account(tr, now);
	/*
	 * Still runnable: preempted, yielded, or a sleep cut short by a
	 * signal (__schedule() set the state back to running).
	 */
	if (preempt || !prev_state || task_is_running(p)) {
		tr->state = BCS_DIST_WAIT;
		if (was_running)
			tr->preemptions++;
	} else if (READ_ONCE(tr->bt->parked)) {
		tr->state = BCS_DIST_SUSPENDED;
		tr->suspensions++;
		tr->run_delay = bcs_task_run_delay(p);
	} else {
		tr->state = BCS_DIST_BLOCKED;
		bcs_dist_record(tr, BCS_DIST_BURST, tr->burst_ns);
		tr->bursts++;
		tr->burst_ns = 0;
		tr->run_delay = bcs_task_run_delay(p);
	}
out:
	raw_spin_unlock(&tr->lock);
}

static void bcs_dist_in(struct bcs_dist_task *tr, struct task_struct *p,
			u64 now)
{
	u32 s;
	u64 d;

	raw_spin_lock(&tr->lock);
	if (!tr->active)
		goto out;
	s = tr->state;
	/* A sleep ended when the task was first queued again. */
	if (s == BCS_DIST_BLOCKED || s == BCS_DIST_SUSPENDED) {
		d = bcs_dist_account(tr, now - bcs_dist_queued(tr, p, now));
		bcs_dist_record(tr, s, d);
		tr->state = BCS_DIST_WAIT;
	}
	d = bcs_dist_account(tr, now);
	if (tr->state == BCS_DIST_WAIT)
		bcs_dist_record(tr, BCS_DIST_WAIT, d);
	tr->state = BCS_DIST_BURST;
out:
	raw_spin_unlock(&tr->lock);
}

/* Out of line: the probe's own test stays a few instructions. */
static noinline void bcs_dist_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next,
				     unsigned int prev_state)
{
	struct bcs_dist_task *tr;
	u64 now = 0;

	if (READ_ONCE(*bcs_dist_slot(prev))) {
		tr = bcs_dist_find(prev);
		if (tr) {
			now = bcs_dist_now();
			bcs_dist_out(tr, prev, preempt, prev_state, now);
		}
	}
	if (READ_ONCE(*bcs_dist_slot(next))) {
		tr = bcs_dist_find(next);
		if (tr)
			bcs_dist_in(tr, next, now ?: bcs_dist_now());
	}
}

static void bcs_dist_probe_switch(void *data, bool preempt,
				  struct task_struct *prev,
				  struct task_struct *next,
				  unsigned int prev_state)
{
	if (unlikely(READ_ONCE(*bcs_dist_slot(prev)) ||
		     READ_ONCE(*bcs_dist_slot(next))))
		bcs_dist_switch(preempt, prev, next, prev_state);
}

/*
 * Start tracking @tr at @now, in the state its task seems to be in: a
 * guess that the task's next event corrects.  bcs_dist_lock and @tr->lock
 * held.
 */
void bcs_dist_activate(struct bcs_dist_task *tr, u64 now)
{
	struct task_struct *t = tr->task;
	unsigned int state = READ_ONCE(t->__state);
	bool on_cpu = t == current;

#ifdef CONFIG_SMP
	on_cpu = on_cpu || READ_ONCE(t->on_cpu);
#endif
	if (state & TASK_NEW)
		tr->state = BCS_DIST_WAIT;	/* forked, not yet woken */
	else if (state != TASK_RUNNING && READ_ONCE(tr->bt->parked))
		tr->state = BCS_DIST_SUSPENDED;
	else if (state != TASK_RUNNING)
		tr->state = BCS_DIST_BLOCKED;
	else
		tr->state = on_cpu ? BCS_DIST_BURST : BCS_DIST_WAIT;
	tr->since = now;
	tr->period_start = now;
	if (!tr->start_ns)
		tr->start_ns = now;
	tr->run_delay = bcs_task_run_delay(t);
	tr->burst_ns = 0;
	tr->active = true;
	(*bcs_dist_slot(t))++;
	bcs_dist_nr_active++;
}

/* Stop tracking @tr at @now.  bcs_dist_lock and @tr->lock held. */
void bcs_dist_deactivate(struct bcs_dist_task *tr, u64 now)
{
	bcs_dist_account(tr, now);
	tr->tracked_ns += tr->since - tr->period_start;
	tr->active = false;
	(*bcs_dist_slot(tr->task))--;
	bcs_dist_nr_active--;
}

/*
 * Register the probes while some task is tracked or some job's
 * distributions are enabled as a whole, and only then.  bcs_dist_mutex
 * held.
 */
int bcs_dist_probes(bool want)
{
	int err;

	if (want == bcs_dist_registered)
		return 0;
	if (want) {
		err = tracepoint_probe_register(bcs_tp_switch,
						bcs_dist_probe_switch, NULL);
		if (err)
			return err;
	} else {
		tracepoint_probe_unregister(bcs_tp_switch,
					    bcs_dist_probe_switch, NULL);
		tracepoint_synchronize_unregister();
	}
	bcs_dist_registered = want;
	return 0;
}

/*
 * Probes no longer wanted are unregistered after dist_linger_ms (module
 * parameter) with nothing enabled, not at once.  Each registration and
 * unregistration patches the scheduler's text on every CPU
 * (text_poke_bp(), waiting for the other CPUs), so a tool that switches
 * statistics on and off in turn would patch it at each switch; meanwhile
 * an untracked task costs the probes' filter test only.  Changed at run
 * time, it applies from the next disable.
 */
static unsigned int bcs_dist_linger_ms = 10000;

static int bcs_dist_linger_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, BCS_DIST_LINGER_MS_MAX);
}

static const struct kernel_param_ops bcs_dist_linger_ops = {
	.set	= bcs_dist_linger_set,
	.get	= param_get_uint,
};

module_param_cb(dist_linger_ms, &bcs_dist_linger_ops, &bcs_dist_linger_ms,
		0644);
MODULE_PARM_DESC(dist_linger_ms,
		 "Probes stay registered this long after the last distribution was disabled (0..600000 ms, default 10000)");

static void bcs_dist_linger_fn(struct work_struct *work)
{
	mutex_lock(&bcs_dist_mutex);
	if (!bcs_dist_wanted())
		bcs_dist_probes(false);
	mutex_unlock(&bcs_dist_mutex);
}

static DECLARE_DELAYED_WORK(bcs_dist_linger_work, bcs_dist_linger_fn);

/*
 * After an operation, bcs_dist_mutex held: probes nothing wants any more
 * go later (bcs_dist_linger_fn()).
 */
void bcs_dist_linger(void)
{
	if (bcs_dist_registered && !bcs_dist_wanted())
		mod_delayed_work(system_wq, &bcs_dist_linger_work,
				 msecs_to_jiffies(READ_ONCE(bcs_dist_linger_ms)));
}

/* Module exit: no unregistration pending.  bcs_dist_mutex not held. */
void bcs_dist_linger_cancel(void)
{
	cancel_delayed_work_sync(&bcs_dist_linger_work);
}

int bcs_dist_init(void)
{
	bcs_tp_switch = bcs_tracepoint("sched_switch");
	return bcs_tp_switch ? 0 : -ENOENT;
}

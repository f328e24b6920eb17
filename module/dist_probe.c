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
 * and one load from bcs_dist_filter, a small table that holds, by that
 * hash, the tracker of the one tracked task there (BCS_DIST_MANY if
 * several share the slot: only then is bcs_dist_hash walked).  A tracked
 * task's state changes under its own raw lock, taken inside the run queue
 * lock and never around anything else.
 *
 * The fast path of a tracked switch: one clock read for both tasks, the
 * tracker straight from its slot (no second hash, no list walk), the
 * task's lock by its inline fast path (interrupts are off: no preemption
 * count to keep), and the histograms updated inline.  Nothing the probe
 * writes is shared between CPUs but the trackers of the two tasks it
 * switches: the filter is written only by the ioctls, under bcs_dist_lock.
 *
 * When a sleep ended is not taken from the sched_wakeup tracepoint (a
 * second probe on every wake-up in the system) but from what the
 * scheduler itself keeps of its run-queue waits (CONFIG_SCHED_INFO,
 * task_struct.sched_info): the waits counted in run_delay since the sleep
 * began.  The last of them, still open since last_queued when the task
 * is switched in, sched_info_arrive() folds in only after the probe; so
 * the switch-in keeps the interval of the sleep and its wait (@woke_ns)
 * and bcs_dist_settle() splits it at the task's next event (its
 * switch-out, a read, a change of its metrics), when run_delay has it:
 * no second clock read in the probe.  A reader on another CPU that comes
 * between the switch-in and sched_info_arrive() reads the open wait with
 * local_clock().  The sleep is the rest of the interval.  A kernel without
 * SCHED_INFO counts the wait after a sleep as part of the sleep.
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

/* A filter slot shared by several active trackers: walk the hash. */
#define BCS_DIST_MANY	((struct bcs_dist_task *)1UL)

u32 bcs_dist_nr_active;				/* bcs_dist_lock */
/* Same bits as the filter: a slot's trackers are in the bucket it names. */
static DEFINE_HASHTABLE(bcs_dist_hash, BCS_DIST_FILTER_BITS); /* lock, RCU */
/*
 * The active trackers by the hash of their task pointer: how many
 * (bcs_dist_count) and, for the probe, which (bcs_dist_filter: NULL for
 * none, the tracker for one, BCS_DIST_MANY for more).  Both change under
 * bcs_dist_lock; the probe reads bcs_dist_filter under RCU (interrupts
 * off), and a tracker it finds there stays allocated until a grace period
 * after it left the hash (bcs_dist_free_fn()).
 */
static struct bcs_dist_task *bcs_dist_filter[1 << BCS_DIST_FILTER_BITS];
static u16 bcs_dist_count[1 << BCS_DIST_FILTER_BITS];
static struct tracepoint *bcs_tp_switch;
static bool bcs_dist_registered;		/* bcs_dist_mutex */

static __always_inline u32 bcs_dist_slot(const struct task_struct *t)
{
	return hash_ptr((void *)t, BCS_DIST_FILTER_BITS);
}

/* Context: bcs_dist_lock or RCU (the probes: preemption off). */
struct bcs_dist_task *bcs_dist_find(const struct task_struct *t)
{
	struct bcs_dist_task *tr;

	hlist_for_each_entry_rcu(tr, &bcs_dist_hash[bcs_dist_slot(t)], hash)
		if (tr->task == t)
			return tr;
	return NULL;
}

/*
 * The tracker of @t from its filter slot @tr, if active when the slot was
 * read (the probe checks @active again under the tracker's lock).  RCU.
 */
static __always_inline struct bcs_dist_task *
bcs_dist_probe_find(struct bcs_dist_task *tr, const struct task_struct *t)
{
	if (unlikely(tr == BCS_DIST_MANY))
		return bcs_dist_find(t);
	return tr->task == t ? tr : NULL;
}

/* Set filter slot @i from its count.  bcs_dist_lock held. */
static void bcs_dist_filter_set(u32 i)
{
	struct bcs_dist_task *tr, *one = NULL;

	if (bcs_dist_count[i] == 1) {
		hlist_for_each_entry(tr, &bcs_dist_hash[i], hash)
			if (tr->active) {
				one = tr;
				break;
			}
	}
	if (bcs_dist_count[i] > 1 || (bcs_dist_count[i] && !one))
		one = BCS_DIST_MANY;
	/* The tracker is initialised: publish it, as the hash did. */
	smp_store_release(&bcs_dist_filter[i], one);
}

/*
 * The probe's lock of a tracker.  Interrupts are off, so preemption needs
 * no count, and the fast path inline spares two calls per task; kernels
 * that debug locks take the lock as everywhere else.
 */
#if defined(CONFIG_DEBUG_SPINLOCK) || defined(CONFIG_DEBUG_LOCK_ALLOC) || \
	defined(CONFIG_PREEMPT_RT)
#define bcs_dist_probe_lock(tr)		raw_spin_lock(&(tr)->lock)
#define bcs_dist_probe_unlock(tr)	raw_spin_unlock(&(tr)->lock)
#else
#define bcs_dist_probe_lock(tr)		do_raw_spin_lock(&(tr)->lock)
#define bcs_dist_probe_unlock(tr)	do_raw_spin_unlock(&(tr)->lock)
#endif

/* Make @tr, of task @tr->task, found by the probes.  bcs_dist_lock held. */
void bcs_dist_hash_add(struct bcs_dist_task *tr)
{
	hlist_add_head_rcu(&tr->hash, &bcs_dist_hash[bcs_dist_slot(tr->task)]);
}

/* No longer: @tr's task has gone.  bcs_dist_lock held. */
void bcs_dist_hash_del(struct bcs_dist_task *tr)
{
	hash_del_rcu(&tr->hash);
}

static __always_inline void bcs_hist_add(struct bcs_dist_hist *h, u64 v)
{
	h->buckets[bcs_hist_index(v, h->sub_bits)]++;
	if (!h->count || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	/* Saturated, @sum is U64_MAX: adding overflows again or adds 0. */
	if (unlikely(check_add_overflow(h->sum, v, &h->sum))) {
		h->sum = U64_MAX;
		h->saturated = true;
	}
}

static __always_inline void bcs_dist_record_inline(struct bcs_dist_task *tr,
						   u32 m, u64 v)
{
	if ((tr->metrics & BIT(m)) && tr->hist[m])
		bcs_hist_add(tr->hist[m], v);
}

/* Count @v in @tr's histogram of metric @m, if enabled.  @tr->lock held. */
void bcs_dist_record(struct bcs_dist_task *tr, u32 m, u64 v)
{
	bcs_dist_record_inline(tr, m, v);
}

/*
 * Close the interval of the current state at @now; return its length.  A
 * reading behind @tr->since (another CPU's clock) closes it at
 * @tr->since, so that the intervals still add up to the time tracked.
 */
static inline u64 bcs_dist_account(struct bcs_dist_task *tr, u64 now)
{
	u64 d = now > tr->since ? now - tr->since : 0;

	tr->time[tr->state] += d;
	if (tr->state == BCS_DIST_BURST)
		tr->burst_ns += d;
	tr->since += d;
	return d;
}

/*
 * How long task @p has waited on run queues since its sleep began, the
 * sleep and its wait @d long: the waits the scheduler has counted since
 * (it counts a task moved to another CPU's queue as a wait ended there),
 * and the one still open, if any.  No more than @d.
 */
static __always_inline u64 bcs_dist_waited(const struct bcs_dist_task *tr,
					   const struct task_struct *p, u64 d)
{
	u64 w = bcs_task_run_delay(p) - tr->run_delay;
	u64 q = bcs_task_last_queued(p);
	u64 rq_now;

	/* @q is of its run queue's clock, which local_clock() reads. */
	if (unlikely(q)) {
		rq_now = local_clock();
		if (rq_now > q)
			w += rq_now - q;
	}
	return min(w, d);
}

/*
 * Split the sleep that ended at @tr's last switch-in, if not yet: the
 * wait after it is recorded, the sleep is the rest.  @tr->lock held.
 */
static __always_inline void bcs_dist_settle_inline(struct bcs_dist_task *tr,
						   const struct task_struct *p)
{
	u32 s = tr->woke;
	u64 w;

	if (likely(s == BCS_DIST_BURST))
		return;
	w = bcs_dist_waited(tr, p, tr->woke_ns);
	tr->time[s] += tr->woke_ns - w;
	bcs_dist_record_inline(tr, s, tr->woke_ns - w);
	tr->time[BCS_DIST_WAIT] += w;
	bcs_dist_record_inline(tr, BCS_DIST_WAIT, w);
	tr->woke = BCS_DIST_BURST;
}

/* For dist_ctx.c and dist_ioctl.c: @tr active, @tr->lock held. */
void bcs_dist_settle(struct bcs_dist_task *tr)
{
	bcs_dist_settle_inline(tr, tr->task);
}

static __always_inline void bcs_dist_out(struct bcs_dist_task *tr,
					 struct task_struct *p, bool preempt,
					 unsigned int prev_state, u64 now)
{
	bool was_running;

	bcs_dist_probe_lock(tr);
	if (!tr->active)
		goto out;
	bcs_dist_settle_inline(tr, p);
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
		bcs_dist_record_inline(tr, BCS_DIST_BURST, tr->burst_ns);
		tr->bursts++;
		tr->burst_ns = 0;
		tr->run_delay = bcs_task_run_delay(p);
	}
out:
	bcs_dist_probe_unlock(tr);
}

static __always_inline void bcs_dist_in(struct bcs_dist_task *tr,
					struct task_struct *p, u64 now)
{
	u32 s;
	u64 d;

	bcs_dist_probe_lock(tr);
	if (!tr->active)
		goto out;
	bcs_dist_settle_inline(tr, p);
	s = tr->state;
	d = now > tr->since ? now - tr->since : 0;
	tr->since += d;
	if (s == BCS_DIST_BLOCKED || s == BCS_DIST_SUSPENDED) {
		/* The sleep and its wait: bcs_dist_settle() splits them. */
		tr->woke = s;
		tr->woke_ns = d;
	} else {
		tr->time[s] += d;
		if (s == BCS_DIST_BURST)
			tr->burst_ns += d;
		else
			bcs_dist_record_inline(tr, BCS_DIST_WAIT, d);
	}
	tr->state = BCS_DIST_BURST;
out:
	bcs_dist_probe_unlock(tr);
}

/*
 * Out of line: the probe's own test stays a few instructions.  @ptr and
 * @ntr are the filter slots of @prev and @next, one of them not NULL.
 * One clock read serves both tasks.
 */
static noinline notrace void bcs_dist_switch(struct bcs_dist_task *ptr,
					     struct bcs_dist_task *ntr,
					     bool preempt,
					     struct task_struct *prev,
					     struct task_struct *next,
					     unsigned int prev_state)
{
	u64 now;

	if (ptr)
		ptr = bcs_dist_probe_find(ptr, prev);
	if (ntr)
		ntr = bcs_dist_probe_find(ntr, next);
	if (!ptr && !ntr)
		return;
	now = bcs_dist_now();
	if (ptr)
		bcs_dist_out(ptr, prev, preempt, prev_state, now);
	if (ntr)
		bcs_dist_in(ntr, next, now);
}

static notrace void bcs_dist_probe_switch(void *data, bool preempt,
					  struct task_struct *prev,
					  struct task_struct *next,
					  unsigned int prev_state)
{
	struct bcs_dist_task *ptr, *ntr;

	ptr = READ_ONCE(bcs_dist_filter[bcs_dist_slot(prev)]);
	ntr = READ_ONCE(bcs_dist_filter[bcs_dist_slot(next)]);
	if (unlikely((unsigned long)ptr | (unsigned long)ntr))
		bcs_dist_switch(ptr, ntr, preempt, prev, next, prev_state);
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
	tr->woke = BCS_DIST_BURST;
	tr->burst_ns = 0;
	tr->active = true;
	bcs_dist_count[bcs_dist_slot(t)]++;
	bcs_dist_filter_set(bcs_dist_slot(t));
	bcs_dist_nr_active++;
}

/* Stop tracking @tr at @now.  bcs_dist_lock and @tr->lock held. */
void bcs_dist_deactivate(struct bcs_dist_task *tr, u64 now)
{
	bcs_dist_settle(tr);
	bcs_dist_account(tr, now);
	tr->tracked_ns += tr->since - tr->period_start;
	tr->active = false;
	bcs_dist_count[bcs_dist_slot(tr->task)]--;
	bcs_dist_filter_set(bcs_dist_slot(tr->task));
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

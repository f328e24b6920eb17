/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels bcs builds against, in one place.  Which
 * branch is taken is decided by module/compat-detect.sh, which looks for
 * each interface in the headers rather than comparing version numbers.
 */
#ifndef _BCS_COMPAT_H
#define _BCS_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/sched.h>

#include "bcs_compat_features.h"

#ifndef BCS_HAVE_VM_FLAGS_SET
/* Before vm_flags became read-only for drivers. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma,
				  vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

static inline void bcs_hrtimer_setup(struct hrtimer *timer,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#ifdef BCS_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/* The sched_process_exit tracepoint grew a group_dead argument. */
#ifdef BCS_HAVE_EXIT_TP_GROUP_DEAD
#define BCS_EXIT_PROBE_ARGS	void *data, struct task_struct *p, bool group_dead
#define bcs_exit_group_dead(p)	(group_dead)
#else
#define BCS_EXIT_PROBE_ARGS	void *data, struct task_struct *p
/* do_exit() has counted the task out of signal->live before the probe. */
#define bcs_exit_group_dead(p)	(!atomic_read(&(p)->signal->live))
#endif

/*
 * What the scheduler keeps of a task's run-queue waits (CONFIG_SCHED_INFO):
 * their total, and when the one still open began (0: none).  Without it a
 * task seems never to wait after a sleep.
 */
#ifdef CONFIG_SCHED_INFO
static inline u64 bcs_task_run_delay(const struct task_struct *p)
{
	return READ_ONCE(p->sched_info.run_delay);
}

static inline u64 bcs_task_last_queued(const struct task_struct *p)
{
	return READ_ONCE(p->sched_info.last_queued);
}
#else
static inline u64 bcs_task_run_delay(const struct task_struct *p)
{
	return 0;
}

static inline u64 bcs_task_last_queued(const struct task_struct *p)
{
	return 0;
}
#endif

/*
 * Sleeps that the freezer (system suspend, cgroup v1 freezer) may freeze in
 * place; before the freezer rewrite there is no such state bit and a parked
 * task holds up freezing, as any killable sleep does.
 */
#ifndef TASK_FREEZABLE
#define TASK_FREEZABLE	0
#endif

/* Kernel workers in user processes (vhost) are flagged from 6.4 on. */
#ifndef PF_USER_WORKER
#define PF_USER_WORKER	0
#endif

/*
 * A multicast group only CAP_SYS_ADMIN may join (checked by genetlink in
 * the user namespace of the family's network namespace, the initial one
 * for bcs).  Kernels without the flag check nothing: there the group is
 * open to every listener, as the queries are.
 */
#ifdef BCS_HAVE_GENL_MCAST_CAP
#define BCS_GENL_MCAST_ADMIN	GENL_MCAST_CAP_SYS_ADMIN
#else
#define BCS_GENL_MCAST_ADMIN	0
#endif

#endif /* _BCS_COMPAT_H */

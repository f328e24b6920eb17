/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Jobs and the tasks attached to them.  A job is a struct bcs_kjob: the
 * kernel's object of a job, as struct kstat is of a stat, apart from the
 * ioctl argument struct bcs_job that names one.
 */
#ifndef _BCS_JOB_H
#define _BCS_JOB_H

#include <linux/cred.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/bcs.h>

/*
 * bcs_lock protects every job and task list, the job and task fields marked
 * "bcs_lock" below, and the scheduling state (switch.h).  It is taken from
 * hard interrupt context (the strobe hrtimers), so always with irqsave.
 * Lock order: bcs_lock, then a job's wait queue lock, then scheduler locks
 * (taken inside task_work_add() and wake-ups).
 */
extern spinlock_t bcs_lock;

struct bcs_kjob {
	u32 id;
	/* Set at creation, then constant: read without a lock. */
	kuid_t owner;
	/*
	 * bcs_lock: CLOCK_MONOTONIC ns since when the job has had no task
	 * (its creation, or its last task's leaving); meaningful while
	 * @nr_tasks is 0, for the reaping of jobs not owned by root.
	 */
	u64 empty_since;
	/*
	 * bcs_lock, and read without it (READ_ONCE) by the job list: the home
	 * row, which the rotation steps through, and the set of rows the job
	 * runs in, @row's bit included (0 with no row).
	 */
	u32 row;
	u64 rows;
	/*
	 * bcs_lock: a change of @row and @rows that waits for the switch to
	 * slice @pending_slice or a later one (BCS_JOB_AT_SLICE), if @pending;
	 * the switch path applies it (bcs_job_apply_due()).
	 */
	bool pending;
	u32 pending_row;
	u64 pending_rows;
	u64 pending_slice;
	/*
	 * bcs_lock, and read without it (READ_ONCE) by the job list: a filler
	 * job, which also runs in the slices where the node is idle (see
	 * "Filler jobs" in the UAPI header and switch.c).
	 */
	bool filler;
	/*
	 * Written under bcs_lock; read without it by parked tasks, which are
	 * woken through @wq after every change that lets them run.
	 */
	bool suspended;
	bool dead;			/* bcs_lock: destroyed */
	/*
	 * bcs_lock: the switch that ended this job's suspension waits for
	 * the old row to drain before it wakes the job (see switch.c).
	 */
	bool fill;
	/*
	 * Both lists are written under bcs_lock and may be read under
	 * rcu_read_lock() alone: the queries walk them with interrupts on.
	 */
	struct list_head node;		/* in bcs_jobs */
	struct list_head tasks;		/* struct bcs_task.job_node */
	u32 nr_tasks;			/* bcs_lock */
	u32 nr_parked;			/* bcs_lock */
	u64 slices_run;			/* bcs_lock */
	/* Accounting of tasks that have left, bcs_lock. */
	u64 gone_run_ns;
	u64 gone_suspended_ns;
	wait_queue_head_t wq;		/* parked tasks sleep here */
	struct kref ref;		/* list membership + each parked task */
	struct rcu_head rcu;		/* freed after a grace period */
};

enum {
	BCS_TASK_PARK_QUEUED,		/* park_work is on the task's list */
	BCS_TASK_KICK_QUEUED,		/* kick_work is on the task's list */
	BCS_TASK_SIGNAL_CHECK,		/* parked: look at pending signals */
};

struct bcs_task {
	struct task_struct *task;	/* holds a task_struct reference */
	struct bcs_kjob *job;		/* bcs_lock; NULL once detached */
	struct hlist_node hash;		/* bcs_lock, RCU readers: by task */
	struct list_head job_node;	/* bcs_lock, RCU readers: in job->tasks */
	struct list_head put_node;	/* detached, waiting for bcs_task_put() */
	struct list_head all_node;	/* bcs_lock: in bcs_all_tasks */
	struct callback_head park_work;
	struct callback_head kick_work;
	unsigned long flags;		/* BCS_TASK_*, atomic bitops */
	refcount_t ref;			/* membership + each queued work */
	struct rcu_head rcu;
	/* Accounting, bcs_lock. */
	bool parked;
	u64 attach_real_ns;		/* CLOCK_REALTIME, for user space */
	u64 attach_ns;			/* CLOCK_MONOTONIC */
	u64 exec_at_attach;		/* task's sum_exec_runtime then */
	u64 delay_at_attach;		/* task's run queue wait then */
	u64 exec_at_switch;		/* sum_exec_runtime at the last switch */
	u64 park_start_ns;		/* CLOCK_MONOTONIC, while parked */
	u64 suspended_ns;
	u64 slices_run;
	u64 parks;
	/*
	 * bcs_lock: the switch that waits for this task to park, or to leave
	 * its parking (see switch.c); 0 if none.
	 */
	u64 park_due;
	u64 wake_due;
};

/*
 * What job.c and park.c must tell the layers above them (see "Layers" in
 * Documentation/design.rst): they call these, never a function of those
 * layers by name.  The table is handed to bcs_job_init() and stays for
 * the life of the module.  Every hook but @exited is called with bcs_lock
 * held, in any context.
 */
struct bcs_job_hooks {
	/* @bt has joined a suspended job: it must park.  True if asked. */
	bool (*park)(struct bcs_task *bt);
	/* @bt has parked, or leaves its job before it parked. */
	void (*parked)(struct bcs_task *bt);
	/* @bt has left its parking, or leaves its job while parked. */
	void (*woken)(struct bcs_task *bt);
	/*
	 * @p exits (sched_process_exit), the last of its process if
	 * @group_dead.  Without bcs_lock; may not sleep.
	 */
	void (*exited)(struct task_struct *p, bool group_dead);
	/* @bt has joined its job (attach, fork, clone); not yet parked. */
	void (*linked)(struct bcs_task *bt);
	/* @bt leaves its job (exit, detach, destroy); @bt->job still set. */
	void (*unlinked)(struct bcs_task *bt);
	/* @job has been created, or destroyed (its tasks unlinked). */
	void (*created)(struct bcs_kjob *job);
	void (*destroyed)(struct bcs_kjob *job);
};

extern const struct bcs_job_hooks *bcs_hooks;

int bcs_job_init(const struct bcs_job_hooks *hooks);
void bcs_job_exit(void);

int bcs_job_create(u32 id, u32 row, u64 rows, bool filler, kuid_t owner,
		   u32 *id_out);
int bcs_job_destroy(u32 id);
int bcs_job_destroy_owned(u32 id);
int bcs_job_set_row(u32 id, u32 row, u64 rows, bool at_slice, u64 slice);
int bcs_job_set_filler(u32 id, bool filler);
void bcs_job_apply_due(u64 slice);
int bcs_job_attach(u32 id, pid_t pid, bool thread_only, u32 *nr);
int bcs_job_detach(u32 id, pid_t pid, bool thread_only, u32 *nr);

int bcs_job_list(struct bcs_job_info __user *uinfo, u32 *count);
int bcs_task_list(u32 job_id, struct bcs_task_stat __user *ustat, u32 *count);

void bcs_job_put(struct bcs_kjob *job);
struct bcs_task *bcs_task_find(struct task_struct *t);
void bcs_task_put(struct bcs_task *bt);

struct tracepoint;
struct tracepoint *bcs_tracepoint(const char *name);

/*
 * Written under bcs_lock.  bcs_jobs is an RCU list (see struct bcs_kjob);
 * bcs_nr_jobs is read without the lock by the fork and exit probes, and
 * bcs_nr_parked by the signal probe, each after a full barrier.
 */
extern struct list_head bcs_jobs;
extern u32 bcs_nr_jobs;
extern u32 bcs_nr_tasks;
extern u32 bcs_nr_parked;
/* bcs_lock: filler jobs, so that a switch without any skips looking. */
extern u32 bcs_nr_fillers;
extern u64 bcs_attach_failures;
/* bcs_lock: every struct bcs_task until it is freed, for module unload. */
extern struct list_head bcs_all_tasks;

u64 bcs_task_run_ns(const struct bcs_task *bt);
u64 bcs_task_suspended_ns(const struct bcs_task *bt, u64 now);
void bcs_task_fill_stat(const struct bcs_task *bt, struct bcs_task_stat *st,
			u64 now);

#endif /* _BCS_JOB_H */

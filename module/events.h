/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ends of jobs, queued for the netlink multicast group "events".
 */
#ifndef _BCS_EVENTS_H
#define _BCS_EVENTS_H

#include <linux/types.h>
#include <linux/workqueue.h>

#include "job.h"

/* One job's end, as BCS_CMD_JOB_ENDED carries it. */
struct bcs_job_event {
	u64 seq;
	u32 job;
	u32 reason;			/* enum bcs_job_end */
	u32 dist_tasks;
};

struct bcs_events_counts {
	u64 seq;			/* events so far */
	u64 sent;			/* sent with no listener refusing */
	u64 dropped;			/* not queued: no memory, queue full */
	u64 failed;			/* not built or refused by a listener */
};

/* The hooks' side (bcs_lock held, any context): never sleeps or fails. */
void bcs_events_job_destroyed(struct bcs_kjob *job);
void bcs_events_unlinked(struct bcs_task *bt);

/* The sender's side (netlink.c). */
void bcs_events_start(struct work_struct *work);
void bcs_events_stop(void);
bool bcs_events_pop(struct bcs_job_event *ev);
void bcs_events_sent(int err);

void bcs_events_get_counts(struct bcs_events_counts *c);

#endif /* _BCS_EVENTS_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The gang switch: one row runs, the other rows' jobs are suspended; and
 * the scheduling state that the files deciding when to switch share.
 */
#ifndef _BCS_SWITCH_H
#define _BCS_SWITCH_H

#include <linux/types.h>

#include "driver.h"

struct bcs_task;

/*
 * The scheduling state, defined in switch.c, the lowest of the files that
 * share it.  Each field has one writer, the file named in its group; the
 * others read it, and change it only through that file's functions.
 *
 * Locking: every field is protected by bcs_lock (job.h), which the timer
 * callbacks take in hard interrupt context.  Mode changes, which start and
 * cancel timers, are serialised by bcs_config_mutex in driver.c.
 */
struct bcs_sched {
	/* driver.c: the configuration and the driver. */
	u32 mode;			/* enum bcs_mode */
	u32 watchdog_slices;
	struct bcs_driver driver;	/* valid in BCS_MODE_DRIVEN */
	/* switch.c: the switch; bcs_switch_set_slice_ns() and the like. */
	u32 row;			/* running row, BCS_ROW_NONE if none */
	u64 slice;			/* current slice number */
	u64 slice_ns;
	bool failopen;
	u64 last_switch_ns;		/* CLOCK_REALTIME */
	u32 missed_unrecorded;
	bool fill_pending;		/* jobs wait for the old row to drain */
	/* Counters since load, each of the file named. */
	u64 strobes;			/* strobe.c */
	u64 switches;			/* switch.c */
	u64 late;			/* queue.c */
	u64 missed;			/* switch.c: bcs_switch_missed() */
	u64 failopens;			/* switch.c */
	u64 drain_cuts;			/* switch.c */
	u64 predicted;			/* queue.c */
	u64 expired;			/* queue.c */
	u64 planned;			/* queue.c */
};

extern struct bcs_sched bcs_sched;

void bcs_switch_init(u64 slice_ns, void (*flush)(void));
void bcs_switch_cancel_fill(void);

void bcs_switch(u64 slice, u32 row, u64 strobe_ns, u64 deadline_ns,
		u32 flags);
void bcs_switch_resume_all(bool failure);
u32 bcs_switch_next_row(void);

void bcs_switch_set_slice_ns(u64 slice_ns);
void bcs_switch_missed(u64 n);
void bcs_switch_clear_failopen(void);

void bcs_switch_parked(struct bcs_task *bt);
void bcs_switch_woken(struct bcs_task *bt);

#endif /* _BCS_SWITCH_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scheduling state of the whole module, shared by the files that decide
 * when to switch: switch.c, watchdog.c, queue.c, strobe.c, driver.c and
 * sched.c.
 */
#ifndef _BCS_SCHED_H
#define _BCS_SCHED_H

#include <linux/types.h>
#include <net/net_namespace.h>
#include <linux/bcs.h>

/*
 * Who drives strobes in BCS_MODE_DRIVEN: an open file or a netlink socket
 * (the handle), and the process that entered driven mode through it.
 */
struct bcs_driver {
	const struct file *file;
	const struct net *net;
	u32 portid;
	pid_t tgid;
};

/* Do @a and @b name the same handle, a file or a netlink socket? */
static inline bool bcs_same_driver(const struct bcs_driver *a,
				   const struct bcs_driver *b)
{
	if (a->file || b->file)
		return a->file == b->file;
	return a->portid && a->portid == b->portid && a->net == b->net;
}

/* A driven strobe waiting for its deadline (queue.c). */
struct bcs_queued {
	struct bcs_strobe strobe;
	u64 arrival_ns;
	u64 skipped;			/* slice numbers skipped before it */
	u32 origin;			/* BCS_SLICE_INJECTED or 0 */
	bool late;			/* arrived after its deadline */
	bool predicted;			/* a prediction, not a strobe */
	bool expiry;			/* and of no row: a strobe's row ended */
};

/*
 * Locking: every field is protected by bcs_lock (job.h), which the timer
 * callbacks take in hard interrupt context.  Mode changes, which start and
 * cancel timers, are serialised by bcs_config_mutex in driver.c.
 */
struct bcs_sched {
	u32 mode;			/* enum bcs_mode */
	u32 row;			/* running row, BCS_ROW_NONE if none */
	u64 slice;			/* current slice number */
	bool have_slice;		/* a driven strobe has set @slice */
	u64 slice_ns;
	u32 watchdog_slices;
	bool failopen;
	struct bcs_driver driver;	/* valid in BCS_MODE_DRIVEN */
	/* Driven strobes waiting for their deadlines, earliest first. */
	struct bcs_queued queue[BCS_STROBE_QUEUE];
	u32 queued;
	u64 last_switch_ns;		/* CLOCK_REALTIME */
	bool slice_predicted;		/* @slice began with a prediction */
	u32 missed_unrecorded;
	bool fill_pending;		/* jobs wait for the old row to drain */
	/* Counters since load. */
	u64 strobes;
	u64 switches;
	u64 late;
	u64 missed;
	u64 failopens;
	u64 drain_cuts;
	u64 predicted;
	u64 expired;
	pid_t driver_exited;		/* for bcs_driver_exit_work */
};

extern struct bcs_sched bcs_sched;

struct bcs_job_hooks;
extern const struct bcs_job_hooks bcs_sched_hooks;

int bcs_sched_init(unsigned long slice_ns, unsigned int watchdog_slices);
void bcs_sched_exit(void);
void bcs_sched_get_state(struct bcs_state *st);
int bcs_sched_window(struct bcs_window *w);

#endif /* _BCS_SCHED_H */

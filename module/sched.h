/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scheduler as the rest of the module sees it: its state read out,
 * the hooks the lower layers call, its start and end.
 */
#ifndef _BCS_SCHED_H
#define _BCS_SCHED_H

#include <linux/bcs.h>

struct bcs_job_hooks;
extern const struct bcs_job_hooks bcs_sched_hooks;

int bcs_sched_init(unsigned long slice_ns, unsigned int watchdog_slices);
void bcs_sched_exit(void);
void bcs_sched_get_state(struct bcs_state *st);
int bcs_sched_window(struct bcs_window *w);

#endif /* _BCS_SCHED_H */

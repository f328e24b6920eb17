/* SPDX-License-Identifier: GPL-2.0 */
/*
 * strobe.c, the master's clock: one strobe per slice, sent lead_us ahead
 * of its deadline, in strobe_copies copies, while the master is active.
 */
#ifndef BCSD_MASTER_STROBE_H
#define BCSD_MASTER_STROBE_H

#include <stdint.h>

struct bcsd;
struct bcsd_origin;
struct bcsp_msg;

/*
 * strobe_init(): the strobe timer (a timerfd, CLOCK_REALTIME) in the
 * loop; strobe_exit() closes it, also after strobe_init() failed.
 */
int strobe_init(struct bcsd *d);
void strobe_exit(struct bcsd *d);
/* Arm the strobe timer for CLOCK_REALTIME @at_ns; 0 disarms it. */
void strobe_arm(struct bcsd *d, uint64_t at_ns);
/* @slices slices in milliseconds, at least 1. */
uint64_t strobe_slices_ms(const struct bcsd *d, uint64_t slices);
/*
 * Handlers: the nodes' switch summaries (BCSP_SWITCHES) to the global
 * records, and the parents' estimates of their children's clock offsets
 * (BCSP_OFFSETS), on the active master.
 */
void strobe_on_switches(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from);
void strobe_on_offsets(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from);

#endif /* BCSD_MASTER_STROBE_H */

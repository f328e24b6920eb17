/* SPDX-License-Identifier: GPL-2.0 */
/*
 * takeover.c, fail-over between masters: a standby takes over when the
 * master falls silent (with a quorum) or when it outranks a new one; an
 * active master steps down when it hears a more senior one.
 */
#ifndef BCSD_MASTER_TAKEOVER_H
#define BCSD_MASTER_TAKEOVER_H

#include <stdint.h>

struct bcsd;
struct bcsd_origin;
struct bcsp_msg;

/*
 * Once a tick (CLOCK_MONOTONIC @now): a standby that has heard no master
 * for failover_slices, and has a quorum, takes over.
 */
void takeover_tick(struct bcsd *d, uint64_t now);
/*
 * Handlers: a strobe of another master (BCSP_STROBE), and the nodes'
 * reports (BCSP_REPORT), which may name an epoch above the active
 * master's.
 */
void takeover_on_strobe(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from);
void takeover_on_report(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from);

#endif /* BCSD_MASTER_TAKEOVER_H */

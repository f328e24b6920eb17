/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/bcsstat, the per-slice records and the queries, for anyone.
 */
#ifndef _BCS_STATS_H
#define _BCS_STATS_H

int bcs_stats_init(void);
void bcs_stats_exit(void);

#endif /* _BCS_STATS_H */

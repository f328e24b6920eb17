/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring of per-slice records behind /dev/bcsstat.
 */
#ifndef _BCS_STATS_H
#define _BCS_STATS_H

#include <linux/fs.h>
#include <linux/bcs.h>

extern const struct file_operations bcs_stat_fops;

int bcs_stats_init(unsigned int nr_records);
void bcs_stats_exit(void);
u32 bcs_stats_capacity(void);

struct bcs_slice_record *bcs_stats_begin(void);
void bcs_stats_commit(struct bcs_slice_record *rec);
u64 bcs_stats_head(void);
bool bcs_stats_get(u64 seq, struct bcs_slice_record *rec);
void bcs_stats_settle_begin(u64 gen, u32 parks, u32 wakes);
bool bcs_stats_settle(u64 *due, bool parked);
void bcs_stats_flag_newest(u32 flags);

#endif /* _BCS_STATS_H */

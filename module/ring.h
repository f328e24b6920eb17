/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring of per-slice records that /dev/bcsstat shows.
 */
#ifndef _BCS_RING_H
#define _BCS_RING_H

#include <linux/mm_types.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/bcs.h>

extern wait_queue_head_t bcs_ring_wq;

int bcs_ring_init(unsigned int nr_records);
void bcs_ring_exit(void);
u32 bcs_ring_capacity(void);

struct bcs_slice_record *bcs_ring_begin(u64 slice);
void bcs_ring_commit(struct bcs_slice_record *rec);
struct bcs_slice_record *bcs_ring_rewrite(u64 seq);
void bcs_ring_rewritten(struct bcs_slice_record *rec, u64 seq);
void bcs_ring_flag(u64 seq, u32 flags);

int bcs_ring_window_arm(u64 from, u64 to, u64 slice);
void bcs_ring_window_disarm(void);
void bcs_ring_window_get(struct bcs_window *w);

u64 bcs_ring_head(void);
u64 bcs_ring_head_acquire(void);
bool bcs_ring_get(u64 seq, struct bcs_slice_record *rec);
int bcs_ring_mmap(struct vm_area_struct *vma);

#endif /* _BCS_RING_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * The ring of per-slice records.
 *
 * The ring lives in one vmalloc_user() area: struct bcs_stat_header in the
 * first page, then nr_records struct bcs_slice_record.  Records are written
 * only by the gang switch, under bcs_lock.  A record's @seq is set to
 * U64_MAX before its fields change and to its sequence number after, with
 * write barriers between, so that a reader of the mapping can tell a record
 * that was overwritten while it read it.  Readers that copy records
 * (bcs_ring_get()) hold bcs_lock and never see a torn one.
 *
 * The newest record is written again, under the same protocol, when the
 * switch learns when it took effect (bcs_ring_rewrite()).
 *
 * A slice window (bcs_ring_window_arm()) makes bcs_ring_begin() hand out a
 * record only for the slices in it, and none after it until it is
 * disarmed, so that the records of those slices are captured and kept.
 * Its state is copied into the header for readers of the mapping.
 *
 * Locking: the ring, its header and the window are written under
 * bcs_lock; the area is allocated at load and freed at unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "job.h"
#include "ring.h"

/* Set at load, constant until unload. */
static void *bcs_stat_area;		/* header page + ring */
static size_t bcs_stat_size;
static struct bcs_stat_header *bcs_stat_hdr;
static struct bcs_slice_record *bcs_stat_ring;
static u32 bcs_stat_nr;
/*
 * The records and bcs_stat_hdr->head are written under bcs_lock; head is
 * published with a release store for lock-free readers (the mapping,
 * bcs_ring_head_acquire()).
 */
/* Readers waiting for a new record. */
DECLARE_WAIT_QUEUE_HEAD(bcs_ring_wq);

/*
 * The slice window, bcs_lock; also shown in bcs_stat_hdr->window_*.
 * @state BCS_WINDOW_NONE: every record is written.
 */
static struct {
	u32 state;		/* enum bcs_window_state */
	u64 from;
	u64 to;
	u64 records;		/* records written in the window */
	u64 dropped;		/* records of it not written: ring full */
	u64 first_seq;		/* seq of its first record */
} bcs_window;

/* Show the window to readers of the mapping.  bcs_lock held. */
static void bcs_window_publish(void)
{
	struct bcs_stat_header *h = bcs_stat_hdr;

	WRITE_ONCE(h->window_from, bcs_window.from);
	WRITE_ONCE(h->window_to, bcs_window.to);
	WRITE_ONCE(h->window_records, bcs_window.records);
	WRITE_ONCE(h->window_first_seq, bcs_window.first_seq);
	WRITE_ONCE(h->window_state, bcs_window.state);
}

/*
 * May a switch to @slice write a record?  It may when there is no window,
 * and for a slice in the window while the ring has room for it without
 * overwriting the window's own records.  Moves the window on: the first
 * slice after it ends it.  bcs_lock held.
 */
static bool bcs_window_admits(u64 slice)
{
	bool write = false;

	switch (bcs_window.state) {
	case BCS_WINDOW_NONE:
		return true;
	case BCS_WINDOW_DONE:
		return false;
	}
	/* Before the window, or a slice number that went back: nothing. */
	if (slice < bcs_window.from)
		return false;
	if (slice > bcs_window.to) {
		bcs_window.state = BCS_WINDOW_DONE;
	} else if (bcs_window.records >= bcs_stat_nr) {
		bcs_window.dropped++;
	} else {
		if (!bcs_window.records)
			bcs_window.first_seq = bcs_stat_hdr->head;
		bcs_window.records++;
		bcs_window.state = BCS_WINDOW_CAPTURING;
		write = true;
	}
	bcs_window_publish();
	return write;
}

/**
 * bcs_ring_window_arm - record only the slices @from .. @to from now on
 * @from: the first slice of the window
 * @to: its last slice, inclusive
 * @slice: the current slice, which has begun
 *
 * Replaces any window.  Context: bcs_lock held.
 * Return: 0; -EINVAL if @to < @from, -E2BIG if the window has more slices
 * than the ring has records, -ERANGE if slice @from has begun.
 */
int bcs_ring_window_arm(u64 from, u64 to, u64 slice)
{
	lockdep_assert_held(&bcs_lock);
	if (to < from)
		return -EINVAL;
	if (to - from >= bcs_stat_nr)
		return -E2BIG;
	if (from <= slice)
		return -ERANGE;
	memset(&bcs_window, 0, sizeof(bcs_window));
	bcs_window.state = BCS_WINDOW_ARMED;
	bcs_window.from = from;
	bcs_window.to = to;
	bcs_window_publish();
	return 0;
}

/* Remove the window: every switch is recorded again.  bcs_lock held. */
void bcs_ring_window_disarm(void)
{
	lockdep_assert_held(&bcs_lock);
	memset(&bcs_window, 0, sizeof(bcs_window));
	bcs_window_publish();
}

/* Fill the output fields of @w with the window.  bcs_lock held. */
void bcs_ring_window_get(struct bcs_window *w)
{
	lockdep_assert_held(&bcs_lock);
	w->state = bcs_window.state;
	w->from_slice = bcs_window.from;
	w->to_slice = bcs_window.to;
	w->records = bcs_window.records;
	w->dropped = bcs_window.dropped;
	w->first_seq = bcs_window.first_seq;
}

u32 bcs_ring_capacity(void)
{
	return bcs_stat_nr;
}

/* Context: bcs_lock held. */
u64 bcs_ring_head(void)
{
	return bcs_stat_hdr->head;
}

/**
 * bcs_ring_begin - claim the next record of the ring for a switch
 * @slice: the slice number of the switch
 *
 * Context: bcs_lock held, until bcs_ring_commit().
 * Return: the record, zeroed but for @seq, which is marked invalid; NULL
 * if the slice window leaves the switch unrecorded.
 */
struct bcs_slice_record *bcs_ring_begin(u64 slice)
{
	u64 head = bcs_stat_hdr->head;
	struct bcs_slice_record *rec = &bcs_stat_ring[head % bcs_stat_nr];

	lockdep_assert_held(&bcs_lock);
	if (!bcs_window_admits(slice))
		return NULL;
	WRITE_ONCE(rec->seq, U64_MAX);
	/* Readers of the mapping see the record invalid before it changes. */
	smp_wmb();
	memset((char *)rec + sizeof(rec->seq), 0,
	       sizeof(*rec) - sizeof(rec->seq));
	return rec;
}

void bcs_ring_commit(struct bcs_slice_record *rec)
{
	u64 head = bcs_stat_hdr->head;

	lockdep_assert_held(&bcs_lock);
	/* The fields are complete before the record is marked valid... */
	smp_wmb();
	WRITE_ONCE(rec->seq, head);
	/* ...and the record is valid before readers are told it exists. */
	smp_store_release(&bcs_stat_hdr->head, head + 1);
	if (wq_has_sleeper(&bcs_ring_wq))
		wake_up_interruptible(&bcs_ring_wq);
}

/*
 * Start rewriting the newest record if it is record @seq: it reads invalid
 * until bcs_ring_rewritten(), as in bcs_ring_begin().  Return: the
 * record, or NULL if there is a newer one (or none).
 */
struct bcs_slice_record *bcs_ring_rewrite(u64 seq)
{
	u64 head = bcs_stat_hdr->head;
	struct bcs_slice_record *rec;

	if (!head || seq != head - 1)
		return NULL;
	rec = &bcs_stat_ring[seq % bcs_stat_nr];
	WRITE_ONCE(rec->seq, U64_MAX);
	/* Readers of the mapping see the record invalid before it changes. */
	smp_wmb();
	return rec;
}

void bcs_ring_rewritten(struct bcs_slice_record *rec, u64 seq)
{
	/* The fields are written before the record is valid again. */
	smp_wmb();
	WRITE_ONCE(rec->seq, seq);
}

/*
 * Or @flags into the flags of record @seq if it is the newest.
 * Context: bcs_lock held.
 */
void bcs_ring_flag(u64 seq, u32 flags)
{
	struct bcs_slice_record *rec;

	lockdep_assert_held(&bcs_lock);
	rec = bcs_ring_rewrite(seq);
	if (rec) {
		rec->flags |= flags;
		bcs_ring_rewritten(rec, seq);
	}
}

/* Copy record @seq if it is still in the ring.  Context: bcs_lock held. */
bool bcs_ring_get(u64 seq, struct bcs_slice_record *rec)
{
	u64 head = bcs_stat_hdr->head;

	lockdep_assert_held(&bcs_lock);
	if (seq >= head || head - seq > bcs_stat_nr)
		return false;
	*rec = bcs_stat_ring[seq % bcs_stat_nr];
	return true;
}

/* The number of records written, read without bcs_lock. */
u64 bcs_ring_head_acquire(void)
{
	/* Pairs with the release in bcs_ring_commit(). */
	return smp_load_acquire(&bcs_stat_hdr->head);
}

/* Map the header and the ring read-only into @vma. */
int bcs_ring_mmap(struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;

	if (vma->vm_pgoff || len > PAGE_ALIGN(bcs_stat_size))
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	vm_flags_clear(vma, VM_MAYWRITE);
	return remap_vmalloc_range(vma, bcs_stat_area, 0);
}

int bcs_ring_init(unsigned int nr_records)
{
	bcs_stat_nr = nr_records;
	bcs_stat_size = PAGE_SIZE + (size_t)nr_records * sizeof(*bcs_stat_ring);
	bcs_stat_area = vmalloc_user(PAGE_ALIGN(bcs_stat_size));
	if (!bcs_stat_area)
		return -ENOMEM;
	bcs_stat_hdr = bcs_stat_area;
	bcs_stat_ring = bcs_stat_area + PAGE_SIZE;
	bcs_stat_hdr->magic = BCS_STAT_MAGIC;
	bcs_stat_hdr->version = BCS_STAT_VERSION;
	bcs_stat_hdr->header_size = sizeof(*bcs_stat_hdr);
	bcs_stat_hdr->record_size = sizeof(*bcs_stat_ring);
	bcs_stat_hdr->nr_records = nr_records;
	bcs_stat_hdr->records_offset = PAGE_SIZE;
	return 0;
}

void bcs_ring_exit(void)
{
	vfree(bcs_stat_area);
}

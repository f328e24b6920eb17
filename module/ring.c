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
 * Locking: the ring and its header are written under bcs_lock; the area
 * is allocated at load and freed at unload.
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
 * bcs_ring_begin - claim the next record of the ring
 *
 * Context: bcs_lock held, until bcs_ring_commit().
 * Return: the record, zeroed but for @seq, which is marked invalid.
 */
struct bcs_slice_record *bcs_ring_begin(void)
{
	u64 head = bcs_stat_hdr->head;
	struct bcs_slice_record *rec = &bcs_stat_ring[head % bcs_stat_nr];

	lockdep_assert_held(&bcs_lock);
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

/* Or @flags into the newest record's flags.  Context: bcs_lock held. */
void bcs_ring_flag_newest(u32 flags)
{
	u64 seq = bcs_stat_hdr->head - 1;
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

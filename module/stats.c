// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bcsstat: a ring of per-slice records, readable with read(2) and
 * mmap(2).
 *
 * The ring lives in one vmalloc_user() area: struct bcs_stat_header in the
 * first page, then nr_records struct bcs_slice_record.  Records are written
 * only by the job switch, under bcs_lock.  A record's @seq is set to
 * U64_MAX before its fields change and to its sequence number after, with
 * write barriers between, so that a reader of the mapping can tell a record
 * that was overwritten while it read it.  read(2) copies records under
 * bcs_lock and never sees a torn one.
 *
 * A switch has taken effect once the tasks it told to park have parked and
 * the tasks it woke have left their parking.  That happens after the
 * record is published, in those tasks, so the newest record is written
 * again, under the same protocol, when the last of them is done (see
 * bcs_stats_settle()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "device.h"
#include "job.h"
#include "stats.h"

/* Records copied per bcs_lock section by read(2). */
#define BCS_STAT_BATCH	32

static void *bcs_stat_area;		/* header page + ring */
static size_t bcs_stat_size;
static struct bcs_stat_header *bcs_stat_hdr;
static struct bcs_slice_record *bcs_stat_ring;
static u32 bcs_stat_nr;
static DECLARE_WAIT_QUEUE_HEAD(bcs_stat_wq);

/*
 * What the newest switch still waits for, bcs_lock: tasks whose park_due
 * (wake_due) equals @gen, the record's sequence number + 1, and have not
 * parked (left their parking) yet.
 */
static struct {
	u64 gen;
	u32 parks_due;
	u32 wakes_due;
} bcs_settle;

u32 bcs_stats_capacity(void)
{
	return bcs_stat_nr;
}

/* Context: bcs_lock held. */
u64 bcs_stats_head(void)
{
	return bcs_stat_hdr->head;
}

/**
 * bcs_stats_begin - claim the next record of the ring
 *
 * Context: bcs_lock held, until bcs_stats_commit().
 * Return: the record, zeroed but for @seq, which is marked invalid.
 */
struct bcs_slice_record *bcs_stats_begin(void)
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

void bcs_stats_commit(struct bcs_slice_record *rec)
{
	u64 head = bcs_stat_hdr->head;

	lockdep_assert_held(&bcs_lock);
	/* The fields are complete before the record is marked valid... */
	smp_wmb();
	WRITE_ONCE(rec->seq, head);
	/* ...and the record is valid before readers are told it exists. */
	smp_store_release(&bcs_stat_hdr->head, head + 1);
	if (wq_has_sleeper(&bcs_stat_wq))
		wake_up_interruptible(&bcs_stat_wq);
}

/**
 * bcs_stats_settle_begin - the newest switch waits for tasks to settle
 * @gen: bcs_stats_head() + 1 as it was before the switch's record was
 *	 claimed; the tasks it waits for have park_due or wake_due == @gen
 * @parks: how many tasks it told to park and waits for
 * @wakes: how many tasks it woke
 *
 * Called after bcs_stats_commit(), whose record holds 0 in @parked_ns
 * (@resumed_ns) if @parks (@wakes) is not 0.  Context: bcs_lock held.
 */
void bcs_stats_settle_begin(u64 gen, u32 parks, u32 wakes)
{
	lockdep_assert_held(&bcs_lock);
	bcs_settle.gen = gen;
	bcs_settle.parks_due = parks;
	bcs_settle.wakes_due = wakes;
}

/*
 * Start rewriting the newest record if it is record @seq: it reads invalid
 * until bcs_stats_rewritten(), as in bcs_stats_begin().  Return: the
 * record, or NULL if there is a newer one (or none).
 */
static struct bcs_slice_record *bcs_stats_rewrite(u64 seq)
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

static void bcs_stats_rewritten(struct bcs_slice_record *rec, u64 seq)
{
	/* The fields are written before the record is valid again. */
	smp_wmb();
	WRITE_ONCE(rec->seq, seq);
}

/**
 * bcs_stats_settle - account a task that was due for the newest switch
 * @due: the task's park_due or wake_due; cleared here
 * @parked: true for a park (or a task leaving before it parked), false for
 *	    a task leaving its parking (or leaving its job while parked)
 *
 * The last of them stamps @parked_ns (@resumed_ns) into the switch's
 * record.  Context: bcs_lock held.  Return: true if that was the last task
 * of its kind that the newest switch waited for.
 */
bool bcs_stats_settle(u64 *due, bool parked)
{
	u32 *left = parked ? &bcs_settle.parks_due : &bcs_settle.wakes_due;
	u64 seq = bcs_settle.gen - 1;
	struct bcs_slice_record *rec;
	bool last;

	lockdep_assert_held(&bcs_lock);
	last = *due && *due == bcs_settle.gen && *left && !--*left;
	*due = 0;
	if (last) {
		rec = bcs_stats_rewrite(seq);
		if (rec) {
			if (parked)
				rec->parked_ns = ktime_get_real_ns();
			else
				rec->resumed_ns = ktime_get_real_ns();
			bcs_stats_rewritten(rec, seq);
		}
	}
	return last;
}

/* Or @flags into the newest record's flags.  Context: bcs_lock held. */
void bcs_stats_flag_newest(u32 flags)
{
	u64 seq = bcs_stat_hdr->head - 1;
	struct bcs_slice_record *rec;

	lockdep_assert_held(&bcs_lock);
	rec = bcs_stats_rewrite(seq);
	if (rec) {
		rec->flags |= flags;
		bcs_stats_rewritten(rec, seq);
	}
}

/* Copy record @seq if it is still in the ring.  Context: bcs_lock held. */
bool bcs_stats_get(u64 seq, struct bcs_slice_record *rec)
{
	u64 head = bcs_stat_hdr->head;

	lockdep_assert_held(&bcs_lock);
	if (seq >= head || head - seq > bcs_stat_nr)
		return false;
	*rec = bcs_stat_ring[seq % bcs_stat_nr];
	return true;
}

struct bcs_stat_reader {
	struct mutex lock;		/* serialises read(2) on one file */
	u64 cursor;			/* lock: next sequence number to return */
};

static int bcs_stat_open(struct inode *inode, struct file *file)
{
	struct bcs_stat_reader *r = kzalloc(sizeof(*r), GFP_KERNEL);
	unsigned long flags;
	u64 head;

	if (!r)
		return -ENOMEM;
	mutex_init(&r->lock);
	spin_lock_irqsave(&bcs_lock, flags);
	head = bcs_stat_hdr->head;
	r->cursor = head > bcs_stat_nr ? head - bcs_stat_nr : 0;
	spin_unlock_irqrestore(&bcs_lock, flags);
	file->private_data = r;
	return 0;
}

static int bcs_stat_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static bool bcs_stat_has_new(struct bcs_stat_reader *r)
{
	/* Pairs with the release in bcs_stats_commit(). */
	return smp_load_acquire(&bcs_stat_hdr->head) > r->cursor;
}

static ssize_t bcs_stat_read(struct file *file, char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct bcs_stat_reader *r = file->private_data;
	struct bcs_slice_record *buf;
	size_t want = len / sizeof(*buf), n, done = 0;
	unsigned long flags;
	ssize_t done_err = 0;
	u64 head;
	int err;

	if (!want)
		return -EINVAL;
	if (!bcs_stat_has_new(r)) {
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		err = wait_event_interruptible(bcs_stat_wq,
					       bcs_stat_has_new(r));
		if (err)
			return err;
	}

	buf = kmalloc_array(BCS_STAT_BATCH, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&r->lock);
	while (done < want) {
		spin_lock_irqsave(&bcs_lock, flags);
		head = bcs_stat_hdr->head;
		/* Lapped by the writer: skip to the oldest record kept. */
		if (head - r->cursor > bcs_stat_nr)
			r->cursor = head - bcs_stat_nr;
		for (n = 0; n < BCS_STAT_BATCH && done + n < want &&
		     r->cursor + n < head; n++)
			buf[n] = bcs_stat_ring[(r->cursor + n) % bcs_stat_nr];
		spin_unlock_irqrestore(&bcs_lock, flags);
		if (!n)
			break;
		if (copy_to_user(ubuf + done * sizeof(*buf), buf,
				 n * sizeof(*buf))) {
			if (!done)
				done_err = -EFAULT;
			break;
		}
		r->cursor += n;
		done += n;
	}
	mutex_unlock(&r->lock);
	kfree(buf);
	return done_err ? done_err : done * sizeof(*buf);
}

static __poll_t bcs_stat_poll(struct file *file, poll_table *wait)
{
	struct bcs_stat_reader *r = file->private_data;

	poll_wait(file, &bcs_stat_wq, wait);
	return bcs_stat_has_new(r) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int bcs_stat_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;

	if (vma->vm_pgoff || len > PAGE_ALIGN(bcs_stat_size))
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	vm_flags_clear(vma, VM_MAYWRITE);
	return remap_vmalloc_range(vma, bcs_stat_area, 0);
}

const struct file_operations bcs_stat_fops = {
	.owner		= THIS_MODULE,
	.open		= bcs_stat_open,
	.release	= bcs_stat_release,
	.read		= bcs_stat_read,
	.poll		= bcs_stat_poll,
	.mmap		= bcs_stat_mmap,
	.unlocked_ioctl	= bcs_dev_query_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

int bcs_stats_init(unsigned int nr_records)
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

void bcs_stats_exit(void)
{
	vfree(bcs_stat_area);
}

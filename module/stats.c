// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bcsstat: the ring of per-slice records (ring.c) through read(2),
 * poll(2) and mmap(2), and the queries of /dev/bcs (device.c).
 *
 * Locking: a per-file mutex serialises read(2) on one file (its cursor);
 * records are copied out of the ring under bcs_lock, in batches.  Lock
 * order: the reader's mutex, then bcs_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "device.h"
#include "job.h"
#include "ring.h"
#include "stats.h"

/* Records copied per bcs_lock section by read(2). */
#define BCS_STAT_BATCH	32

struct bcs_stat_reader {
	struct mutex lock;		/* serialises read(2) on one file */
	u64 cursor;			/* lock: next sequence number to return */
};

static int bcs_stat_open(struct inode *inode, struct file *file)
{
	struct bcs_stat_reader *r = kzalloc(sizeof(*r), GFP_KERNEL);
	unsigned long flags;
	u64 head;
	u32 nr;

	if (!r)
		return -ENOMEM;
	mutex_init(&r->lock);
	spin_lock_irqsave(&bcs_lock, flags);
	head = bcs_ring_head();
	nr = bcs_ring_capacity();
	r->cursor = head > nr ? head - nr : 0;
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
	return bcs_ring_head_acquire() > r->cursor;
}

static ssize_t bcs_stat_read(struct file *file, char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct bcs_stat_reader *r = file->private_data;
	struct bcs_slice_record *buf;
	size_t want = len / sizeof(*buf), n, done = 0;
	u32 nr = bcs_ring_capacity();
	unsigned long flags;
	ssize_t done_err = 0;
	u64 head;
	int err;

	if (!want)
		return -EINVAL;
	if (!bcs_stat_has_new(r)) {
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		err = wait_event_interruptible(bcs_ring_wq,
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
		head = bcs_ring_head();
		/* Lapped by the writer: skip to the oldest record kept. */
		if (head - r->cursor > nr)
			r->cursor = head - nr;
		for (n = 0; n < BCS_STAT_BATCH && done + n < want; n++)
			if (!bcs_ring_get(r->cursor + n, &buf[n]))
				break;
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

	poll_wait(file, &bcs_ring_wq, wait);
	return bcs_stat_has_new(r) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int bcs_stat_mmap(struct file *file, struct vm_area_struct *vma)
{
	return bcs_ring_mmap(vma);
}

static const struct file_operations bcs_stat_fops = {
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

static struct miscdevice bcs_stat_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= BCS_STAT_DEVICE_NAME,
	.fops	= &bcs_stat_fops,
	.mode	= 0444,
};

int bcs_stats_init(void)
{
	return misc_register(&bcs_stat_dev);
}

void bcs_stats_exit(void)
{
	misc_deregister(&bcs_stat_dev);
}

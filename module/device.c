// SPDX-License-Identifier: GPL-2.0
/*
 * The control device /dev/bcs, and the ioctls of /dev/bcs and /dev/bcsstat.
 *
 * Every ioctl argument is a fixed-size struct whose first field is its own
 * size; it must match, and reserved fields and unknown flags must be zero,
 * so that later versions can give them a meaning.  Anything else is
 * rejected before it reaches the rest of the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/miscdevice.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "device.h"
#include "dist_ioctl.h"
#include "driver.h"
#include "job.h"
#include "sched.h"
#include "strobe.h"

/* Copy in an ioctl argument of @size bytes and check its size field. */
static int bcs_copy_arg(void *karg, size_t size, unsigned long arg)
{
	if (copy_from_user(karg, (void __user *)arg, size))
		return -EFAULT;
	return *(u32 *)karg == size ? 0 : -EINVAL;
}

#define bcs_zero(field)	(!memchr_inv(&(field), 0, sizeof(field)))

/*
 * The owner of a job that BCS_IOC_JOB_CREATE makes: the caller's effective
 * uid, or with BCS_JOB_OWNER the uid @owner names in the caller's user
 * namespace (INVALID_UID if none: -EINVAL).
 */
static kuid_t bcs_job_owner(const struct bcs_job *job)
{
	if (!(job->flags & BCS_JOB_OWNER))
		return current_euid();
	if (job->owner >= (uid_t)-1)
		return INVALID_UID;
	return make_kuid(current_user_ns(), (uid_t)job->owner);
}

/*
 * Create and move need CAP_SYS_ADMIN, checked before the argument; destroy
 * needs it or to be the job's owner, checked once the job is found.
 */
static long bcs_ioc_job(unsigned int cmd, unsigned long arg)
{
	struct bcs_job job;
	int err;

	if (cmd != BCS_IOC_JOB_DESTROY && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = bcs_copy_arg(&job, sizeof(job), arg);
	if (err)
		return err;
	/*
	 * Rows only with their flag, a slice (or an owner, which shares its
	 * place) only with its; a slice only for a move, an owner only for
	 * a create.
	 */
	if ((job.flags & ~BCS_JOB_FLAGS) ||
	    (!(job.flags & BCS_JOB_ROWS) && job.rows) ||
	    (!(job.flags & (BCS_JOB_AT_SLICE | BCS_JOB_OWNER)) && job.slice) ||
	    (cmd != BCS_IOC_JOB_SET_ROW &&
	     (job.flags & (BCS_JOB_AT_SLICE | BCS_JOB_SET_FILLER))) ||
	    (cmd != BCS_IOC_JOB_CREATE && (job.flags & BCS_JOB_OWNER)) ||
	    (cmd == BCS_IOC_JOB_DESTROY && job.flags))
		return -EINVAL;
	/* A move keeps the filler flag; BCS_JOB_SET_FILLER changes only it. */
	if (cmd == BCS_IOC_JOB_SET_ROW &&
	    (job.flags & (BCS_JOB_FILLER | BCS_JOB_SET_FILLER)) &&
	    ((job.flags & ~BCS_JOB_FILLER) != BCS_JOB_SET_FILLER ||
	     job.row || job.rows || job.slice))
		return -EINVAL;

	switch (cmd) {
	case BCS_IOC_JOB_CREATE:
		err = bcs_job_create(job.id, job.row, job.rows,
				     job.flags & BCS_JOB_FILLER,
				     bcs_job_owner(&job), &job.id);
		if (!err && copy_to_user((void __user *)arg, &job, sizeof(job))) {
			/* The caller cannot learn the id: do not leak the job. */
			bcs_job_destroy(job.id);
			err = -EFAULT;
		}
		return err;
	case BCS_IOC_JOB_DESTROY:
		return job.id ? bcs_job_destroy_owned(job.id) : -ENOENT;
	default:
		if (!job.id)
			return -ENOENT;
		if (job.flags & BCS_JOB_SET_FILLER)
			return bcs_job_set_filler(job.id,
						  job.flags & BCS_JOB_FILLER);
		return bcs_job_set_row(job.id, job.row, job.rows,
				       job.flags & BCS_JOB_AT_SLICE, job.slice);
	}
}

static long bcs_ioc_attach(unsigned int cmd, unsigned long arg)
{
	struct bcs_attach at;
	bool thread_only;
	int err;

	err = bcs_copy_arg(&at, sizeof(at), arg);
	if (err)
		return err;
	if ((at.flags & ~BCS_ATTACH_FLAGS) || at.reserved0 ||
	    !bcs_zero(at.reserved) || at.nr_tasks)
		return -EINVAL;
	if (!at.job)
		return -ENOENT;
	thread_only = at.flags & BCS_ATTACH_THREAD;
	if (cmd == BCS_IOC_ATTACH)
		err = bcs_job_attach(at.job, at.pid, thread_only, &at.nr_tasks);
	else
		err = bcs_job_detach(at.job, at.pid, thread_only, &at.nr_tasks);
	if (!err && copy_to_user((void __user *)arg, &at, sizeof(at)))
		err = -EFAULT;
	return err;
}

static long bcs_ioc_config(struct file *file, unsigned long arg)
{
	struct bcs_driver drv = { .file = file, .tgid = task_tgid_nr(current) };
	struct bcs_config cfg;
	int err;

	err = bcs_copy_arg(&cfg, sizeof(cfg), arg);
	if (err)
		return err;
	if (!bcs_zero(cfg.reserved))
		return -EINVAL;
	if (cfg.set && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = bcs_sched_config(&cfg, &drv);
	if (!err && copy_to_user((void __user *)arg, &cfg, sizeof(cfg)))
		err = -EFAULT;
	return err;
}

static long bcs_ioc_strobe(struct file *file, unsigned long arg)
{
	struct bcs_driver drv = { .file = file };
	struct bcs_strobe req;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = bcs_copy_arg(&req, sizeof(req), arg);
	if (err)
		return err;
	if (req.reserved)
		return -EINVAL;
	return bcs_strobe_submit(&req, BCS_SLICE_INJECTED, &drv);
}

static long bcs_ioc_state(unsigned long arg)
{
	struct bcs_state st;
	int err;

	err = bcs_copy_arg(&st, sizeof(st), arg);
	if (err)
		return err;
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	bcs_sched_get_state(&st);
	return copy_to_user((void __user *)arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long bcs_ioc_job_list(unsigned long arg)
{
	struct bcs_job_list jl;
	int err;

	err = bcs_copy_arg(&jl, sizeof(jl), arg);
	if (err)
		return err;
	if (!bcs_zero(jl.reserved))
		return -EINVAL;
	err = bcs_job_list(u64_to_user_ptr(jl.jobs), &jl.count);
	if (!err && copy_to_user((void __user *)arg, &jl, sizeof(jl)))
		err = -EFAULT;
	return err;
}

static long bcs_ioc_task_stats(unsigned long arg)
{
	struct bcs_task_list tl;
	int err;

	err = bcs_copy_arg(&tl, sizeof(tl), arg);
	if (err)
		return err;
	if (tl.reserved0 || !bcs_zero(tl.reserved))
		return -EINVAL;
	err = bcs_task_list(tl.job, u64_to_user_ptr(tl.tasks), &tl.count);
	if (!err && copy_to_user((void __user *)arg, &tl, sizeof(tl)))
		err = -EFAULT;
	return err;
}

static long bcs_ioc_dist_ctl(unsigned long arg)
{
	struct bcs_dist_ctl ctl;
	int err;

	err = bcs_copy_arg(&ctl, sizeof(ctl), arg);
	if (err)
		return err;
	if (!bcs_zero(ctl.reserved))
		return -EINVAL;
	return bcs_dist_ctl(&ctl);
}

/* The argument goes back with -ENOSPC too: it says the size needed. */
static long bcs_ioc_dist_read(unsigned long arg)
{
	struct bcs_dist_read rd;
	int err;

	err = bcs_copy_arg(&rd, sizeof(rd), arg);
	if (err)
		return err;
	if (!bcs_zero(rd.reserved))
		return -EINVAL;
	err = bcs_dist_read(&rd);
	if ((!err || err == -ENOSPC) &&
	    copy_to_user((void __user *)arg, &rd, sizeof(rd)))
		err = -EFAULT;
	return err;
}

/*
 * BCS_IOC_WINDOW: reading the window is open to everyone, arming and
 * disarming it need CAP_SYS_ADMIN, checked after the argument (as
 * BCS_IOC_CONFIG does: one ioctl both reads and changes).
 */
static long bcs_ioc_window(unsigned long arg)
{
	struct bcs_window w;
	int err;

	err = bcs_copy_arg(&w, sizeof(w), arg);
	if (err)
		return err;
	if (w.flags || w.state || w.records || w.dropped || w.first_seq ||
	    !bcs_zero(w.reserved) || w.op > BCS_WINDOW_DISARM)
		return -EINVAL;
	if (w.op != BCS_WINDOW_ARM && (w.from_slice || w.to_slice))
		return -EINVAL;
	if (w.op != BCS_WINDOW_GET && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = bcs_sched_window(&w);
	if (!err && copy_to_user((void __user *)arg, &w, sizeof(w)))
		err = -EFAULT;
	return err;
}

/* Queries, open to everyone, on both devices. */
long bcs_dev_query_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	switch (cmd) {
	case BCS_IOC_GET_STATE:
		return bcs_ioc_state(arg);
	case BCS_IOC_JOB_LIST:
		return bcs_ioc_job_list(arg);
	case BCS_IOC_TASK_STATS:
		return bcs_ioc_task_stats(arg);
	default:
		return -ENOTTY;
	}
}

static long bcs_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	switch (cmd) {
	case BCS_IOC_JOB_CREATE:
	case BCS_IOC_JOB_DESTROY:
	case BCS_IOC_JOB_SET_ROW:
		return bcs_ioc_job(cmd, arg);
	case BCS_IOC_ATTACH:
	case BCS_IOC_DETACH:
		return bcs_ioc_attach(cmd, arg);
	case BCS_IOC_CONFIG:
		return bcs_ioc_config(file, arg);
	case BCS_IOC_STROBE:
		return bcs_ioc_strobe(file, arg);
	case BCS_IOC_DIST_CTL:
		return bcs_ioc_dist_ctl(arg);
	case BCS_IOC_DIST_READ:
		return bcs_ioc_dist_read(arg);
	case BCS_IOC_WINDOW:
		return bcs_ioc_window(arg);
	default:
		return bcs_dev_query_ioctl(file, cmd, arg);
	}
}

/*
 * The driving process closing the file it drives with (close(2), exit,
 * exec with O_CLOEXEC) fails open, whoever else still holds the file.
 */
static int bcs_dev_flush(struct file *file, fl_owner_t id)
{
	struct bcs_driver drv = { .file = file, .tgid = task_tgid_nr(current) };

	bcs_driver_gone(&drv);
	return 0;
}

/* So does the last close of that file, by anyone. */
static int bcs_dev_release(struct inode *inode, struct file *file)
{
	struct bcs_driver drv = { .file = file };

	bcs_driver_gone(&drv);
	return 0;
}

static const struct file_operations bcs_dev_fops = {
	.owner		= THIS_MODULE,
	.flush		= bcs_dev_flush,
	.release	= bcs_dev_release,
	.unlocked_ioctl	= bcs_dev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice bcs_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= BCS_DEVICE_NAME,
	.fops	= &bcs_dev_fops,
	.mode	= 0666,
};

int bcs_device_init(void)
{
	return misc_register(&bcs_dev);
}

void bcs_device_exit(void)
{
	misc_deregister(&bcs_dev);
}

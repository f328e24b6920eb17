/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration (mode, slice, watchdog) and the driver that holds
 * driven mode.
 */
#ifndef _BCS_DRIVER_H
#define _BCS_DRIVER_H

#include <linux/types.h>
#include <net/net_namespace.h>
#include <linux/bcs.h>

struct task_struct;

/*
 * Who drives strobes in BCS_MODE_DRIVEN: an open file or a netlink socket
 * (the handle), and the process that entered driven mode through it.
 */
struct bcs_driver {
	const struct file *file;
	const struct net *net;
	u32 portid;
	pid_t tgid;
};

/* Do @a and @b name the same handle, a file or a netlink socket? */
static inline bool bcs_same_driver(const struct bcs_driver *a,
				   const struct bcs_driver *b)
{
	if (a->file || b->file)
		return a->file == b->file;
	return a->portid && a->portid == b->portid && a->net == b->net;
}

void bcs_driver_init(u32 watchdog_slices);
int bcs_sched_config(struct bcs_config *cfg, const struct bcs_driver *drv);
int bcs_driver_release(const struct bcs_driver *drv);
void bcs_driver_gone(const struct bcs_driver *drv);
void bcs_driver_task_exit(struct task_struct *p, bool group_dead);
void bcs_driver_exit(void);

#endif /* _BCS_DRIVER_H */

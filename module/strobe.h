/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strobes and job switching: standalone timer, driven strobes, watchdog,
 * fail-open.
 */
#ifndef _BCS_STROBE_H
#define _BCS_STROBE_H

#include <linux/fs.h>
#include <linux/types.h>
#include <net/net_namespace.h>
#include <linux/bcs.h>

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

int bcs_strobe_init(unsigned long slice_ns, unsigned int watchdog_slices);
void bcs_strobe_exit(void);

int bcs_strobe_submit(const struct bcs_strobe *req, u32 origin,
		      const struct bcs_driver *drv);
int bcs_strobe_config(struct bcs_config *cfg, const struct bcs_driver *drv);
int bcs_strobe_release(const struct bcs_driver *drv);
void bcs_strobe_driver_gone(const struct bcs_driver *drv);
void bcs_strobe_get_state(struct bcs_state *st);
u32 bcs_strobe_queued(void);

struct bcs_task;
struct task_struct;
void bcs_strobe_parked(struct bcs_task *bt);
void bcs_strobe_task_exit(struct task_struct *p, bool group_dead);

#endif /* _BCS_STROBE_H */

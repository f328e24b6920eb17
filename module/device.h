/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/bcs and /dev/bcsstat.
 */
#ifndef _BCS_DEVICE_H
#define _BCS_DEVICE_H

#include <linux/fs.h>

int bcs_device_init(void);
void bcs_device_exit(void);
long bcs_dev_query_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg);

#endif /* _BCS_DEVICE_H */

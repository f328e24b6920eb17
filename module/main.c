// SPDX-License-Identifier: GPL-2.0
/*
 * bcs.ko: job scheduling of parallel jobs, switched at a global strobe.
 *
 * This file only loads and unloads the parts, in dependency order; see
 * Documentation/design.rst for how they fit together.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "debugfs.h"
#include "device.h"
#include "dist_ctx.h"
#include "dist_probe.h"
#include "job.h"
#include "netlink.h"
#include "park.h"
#include "ring.h"
#include "sched.h"
#include "stats.h"

static unsigned int stat_records = 10000;
module_param(stat_records, uint, 0444);
MODULE_PARM_DESC(stat_records,
		 "Per-slice records kept in /dev/bcsstat (16..1000000, default 10000)");

static unsigned int slice_us = 10000;
module_param(slice_us, uint, 0444);
MODULE_PARM_DESC(slice_us,
		 "Initial slice length in microseconds (50..10000000, default 10000)");

static unsigned int watchdog_slices = 10;
module_param(watchdog_slices, uint, 0444);
MODULE_PARM_DESC(watchdog_slices,
		 "Driven mode fails open after this many slices without a strobe (0: never, default 10)");

static int __init bcs_init(void)
{
	u64 slice_ns = (u64)slice_us * NSEC_PER_USEC;
	int err;

	if (stat_records < 16 || stat_records > 1000000 ||
	    slice_ns < BCS_SLICE_NS_MIN || slice_ns > BCS_SLICE_NS_MAX ||
	    watchdog_slices > BCS_WATCHDOG_MAX) {
		pr_err("module parameter out of range\n");
		return -EINVAL;
	}

	err = bcs_ring_init(stat_records);
	if (err)
		return err;
	err = bcs_job_init(&bcs_sched_hooks);
	if (err)
		goto err_ring;
	err = bcs_park_init();
	if (err)
		goto err_job;
	err = bcs_dist_init();
	if (err)
		goto err_park;
	err = bcs_sched_init(slice_ns, watchdog_slices);
	if (err)
		goto err_dist;
	err = bcs_device_init();
	if (err)
		goto err_sched;
	err = bcs_stats_init();
	if (err)
		goto err_device;
	err = bcs_netlink_init();
	if (err)
		goto err_stats;
	bcs_debugfs_init();
	pr_info("loaded: slice %u us, %u slice records\n", slice_us,
		stat_records);
	return 0;

err_stats:
	bcs_stats_exit();
err_device:
	bcs_device_exit();
err_sched:
	bcs_sched_exit();
err_dist:
	bcs_dist_exit();	/* no job yet: nothing recorded */
err_park:
	bcs_park_exit();
err_job:
	bcs_job_exit();
err_ring:
	bcs_ring_exit();
	return err;
}

static void __exit bcs_exit(void)
{
	bcs_debugfs_exit();
	bcs_netlink_exit();
	bcs_stats_exit();
	bcs_device_exit();
	bcs_sched_exit();
	bcs_park_exit();
	bcs_job_exit();
	bcs_dist_exit();
	bcs_ring_exit();
	pr_info("unloaded\n");
}

module_init(bcs_init);
module_exit(bcs_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Gang scheduling of parallel jobs at a global strobe");
MODULE_VERSION(BCS_PACKAGE_VERSION);

// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "bcs".
 *
 * Every command is validated strictly against bcs_nl_policy (all of them
 * are at or after resv_start_op, 0, so the reserved header fields are
 * checked too), so unknown attributes, wrong lengths and out-of-range
 * values never reach the handlers.  Commands that change the schedule need
 * what the ioctls need, CAP_SYS_ADMIN in the initial user namespace, of
 * the sender and of the socket's opener (netlink_capable()).  The family
 * exists in the initial network namespace only: bcs.ko schedules the whole
 * machine, which a container's network namespace is not (design.rst).  A
 * socket that entered driven mode is the driver: the NETLINK_URELEASE
 * notification for it fails open.
 *
 * The multicast group "events" announces the end of jobs
 * (BCS_CMD_JOB_ENDED); only CAP_SYS_ADMIN may join it.  events.c queues
 * the ends from the hooks of job.c, in any context; the work item here
 * builds and sends them in process context, GFP_KERNEL, so that nothing of
 * netlink runs on the job's path.  An event that cannot be built, or that
 * some listener's full socket refuses (known only from the sockets with
 * NETLINK_BROADCAST_ERROR), is counted (events.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "compat.h"
#include "driver.h"
#include "events.h"
#include "netlink.h"
#include "sched.h"
#include "strobe.h"

static struct netlink_range_validation bcs_slice_ns_range = {
	.min = BCS_SLICE_NS_MIN,
	.max = BCS_SLICE_NS_MAX,
};

static struct netlink_range_validation bcs_watchdog_range = {
	.min = 0,
	.max = BCS_WATCHDOG_MAX,
};

static struct netlink_range_validation bcs_deadline_range = {
	.min = 0,
	.max = BCS_DEADLINE_NS_MAX,
};

static const struct nla_policy bcs_nl_policy[BCS_A_MAX + 1] = {
	[BCS_A_SLICE]		= { .type = NLA_U64 },
	[BCS_A_ROW]		= NLA_POLICY_MAX(NLA_U32, BCS_ROWS_MAX - 1),
	[BCS_A_DEADLINE_NS]	= NLA_POLICY_FULL_RANGE(NLA_U64,
							&bcs_deadline_range),
	[BCS_A_SLICE_NS]	= NLA_POLICY_FULL_RANGE(NLA_U64,
							&bcs_slice_ns_range),
	[BCS_A_FLAGS]		= NLA_POLICY_MASK(NLA_U32, BCS_STROBE_FLAGS),
	[BCS_A_WATCHDOG_SLICES]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&bcs_watchdog_range),
	[BCS_A_NEXT_ROW]	= NLA_POLICY_MAX(NLA_U32, BCS_ROWS_MAX - 1),
	[BCS_A_PLAN_SLICES]	= NLA_POLICY_RANGE(NLA_U32, 1, BCS_PLAN_SLICES_MAX),
	[BCS_A_PLAN_ROWS]	= { .type = NLA_U64 },
	[BCS_A_WINDOW_FROM]	= { .type = NLA_U64 },
	[BCS_A_WINDOW_TO]	= { .type = NLA_U64 },
};

static struct genl_family bcs_nl_family;

static void bcs_nl_driver(struct genl_info *info, struct bcs_driver *drv)
{
	memset(drv, 0, sizeof(*drv));
	drv->net = genl_info_net(info);
	drv->portid = info->snd_portid;
	drv->tgid = task_tgid_nr(current);
}

/* The permission of the ioctls that change the schedule. */
static int bcs_nl_admin(struct sk_buff *skb, struct genl_info *info)
{
	if (netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;
	NL_SET_ERR_MSG(info->extack, "bcs: needs CAP_SYS_ADMIN");
	return -EPERM;
}

static int bcs_nl_get_state(struct sk_buff *skb, struct genl_info *info)
{
	struct bcs_window w = { .size = sizeof(w), .op = BCS_WINDOW_GET };
	struct bcs_state st = { .size = sizeof(st) };
	struct sk_buff *msg;
	void *hdr;

	bcs_sched_get_state(&st);
	bcs_sched_window(&w);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &bcs_nl_family, 0,
				BCS_CMD_GET_STATE);
	if (!hdr)
		goto nospace;
	if (nla_put_u32(msg, BCS_A_MODE, st.mode) ||
	    nla_put_u32(msg, BCS_A_ROW, st.row) ||
	    nla_put_u64_64bit(msg, BCS_A_SLICE, st.slice, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_SLICE_NS, st.slice_ns, BCS_A_PAD) ||
	    nla_put_u32(msg, BCS_A_WATCHDOG_SLICES, st.watchdog_slices) ||
	    nla_put_u32(msg, BCS_A_FAILOPEN, st.failopen) ||
	    nla_put_u32(msg, BCS_A_NR_JOBS, st.nr_jobs) ||
	    nla_put_u32(msg, BCS_A_NR_TASKS, st.nr_tasks) ||
	    nla_put_u64_64bit(msg, BCS_A_STROBES, st.strobes, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_LATE, st.late, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_MISSED, st.missed, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_FAILOPENS, st.failopens, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_PREDICTED, st.predicted, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_EXPIRED, st.expired, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_PLANNED, st.planned, BCS_A_PAD) ||
	    nla_put_u32(msg, BCS_A_NR_PARKED, st.nr_parked) ||
	    nla_put_u32(msg, BCS_A_DRIVER_PID, st.driver_pid) ||
	    nla_put_u64_64bit(msg, BCS_A_SWITCHES, st.switches, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_ATTACH_FAILURES, st.attach_failures,
			      BCS_A_PAD) ||
	    nla_put_u32(msg, BCS_A_STAT_RECORDS, st.stat_records) ||
	    nla_put_u64_64bit(msg, BCS_A_DRAIN_CUTS, st.drain_cuts,
			      BCS_A_PAD) ||
	    nla_put_u32(msg, BCS_A_WINDOW_STATE, st.window_state) ||
	    nla_put_u64_64bit(msg, BCS_A_WINDOW_FROM, w.from_slice,
			      BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_WINDOW_TO, w.to_slice, BCS_A_PAD) ||
	    nla_put_u64_64bit(msg, BCS_A_WINDOW_RECORDS, w.records,
			      BCS_A_PAD))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int bcs_nl_drive(struct sk_buff *skb, struct genl_info *info)
{
	struct bcs_config cfg = { .size = sizeof(cfg) };
	struct bcs_driver drv;
	int err;

	err = bcs_nl_admin(skb, info);
	if (err)
		return err;
	bcs_nl_driver(info, &drv);
	cfg.set = BCS_CONFIG_MODE;
	cfg.mode = BCS_MODE_DRIVEN;
	if (info->attrs[BCS_A_SLICE_NS]) {
		cfg.set |= BCS_CONFIG_SLICE;
		cfg.slice_ns = nla_get_u64(info->attrs[BCS_A_SLICE_NS]);
	}
	if (info->attrs[BCS_A_WATCHDOG_SLICES]) {
		cfg.set |= BCS_CONFIG_WATCHDOG;
		cfg.watchdog_slices =
			nla_get_u32(info->attrs[BCS_A_WATCHDOG_SLICES]);
	}
	return bcs_sched_config(&cfg, &drv);
}

static int bcs_nl_release(struct sk_buff *skb, struct genl_info *info)
{
	struct bcs_driver drv;
	int err;

	err = bcs_nl_admin(skb, info);
	if (err)
		return err;
	bcs_nl_driver(info, &drv);
	return bcs_driver_release(&drv);
}

static int bcs_nl_strobe(struct sk_buff *skb, struct genl_info *info)
{
	struct bcs_strobe req = { .size = sizeof(req) };
	struct bcs_driver drv;
	int err;

	err = bcs_nl_admin(skb, info);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, BCS_A_SLICE) ||
	    GENL_REQ_ATTR_CHECK(info, BCS_A_ROW) ||
	    GENL_REQ_ATTR_CHECK(info, BCS_A_DEADLINE_NS))
		return -EINVAL;
	req.slice = nla_get_u64(info->attrs[BCS_A_SLICE]);
	req.row = nla_get_u32(info->attrs[BCS_A_ROW]);
	req.deadline_ns = nla_get_u64(info->attrs[BCS_A_DEADLINE_NS]);
	if (info->attrs[BCS_A_SLICE_NS])
		req.slice_ns = nla_get_u64(info->attrs[BCS_A_SLICE_NS]);
	if (info->attrs[BCS_A_FLAGS])
		req.flags = nla_get_u32(info->attrs[BCS_A_FLAGS]);
	/* The prediction is the attribute; the flag alone names no row. */
	if (info->attrs[BCS_A_NEXT_ROW]) {
		req.flags |= BCS_STROBE_PREDICT;
		req.next_row = nla_get_u32(info->attrs[BCS_A_NEXT_ROW]);
	} else if (req.flags & BCS_STROBE_PREDICT) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[BCS_A_FLAGS],
				    "BCS_STROBE_PREDICT needs BCS_A_NEXT_ROW");
		return -EINVAL;
	}
	/* So is the plan, with the rows it steps through if any. */
	if (info->attrs[BCS_A_PLAN_SLICES]) {
		req.flags |= BCS_STROBE_PLAN;
		req.plan_slices = nla_get_u32(info->attrs[BCS_A_PLAN_SLICES]);
		if (info->attrs[BCS_A_PLAN_ROWS])
			req.plan_rows = nla_get_u64(info->attrs[BCS_A_PLAN_ROWS]);
	} else if (info->attrs[BCS_A_PLAN_ROWS]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[BCS_A_PLAN_ROWS],
				    "BCS_A_PLAN_ROWS needs BCS_A_PLAN_SLICES");
		return -EINVAL;
	} else if (req.flags & BCS_STROBE_PLAN) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[BCS_A_FLAGS],
				    "BCS_STROBE_PLAN needs BCS_A_PLAN_SLICES");
		return -EINVAL;
	}
	bcs_nl_driver(info, &drv);
	err = bcs_strobe_submit(&req, 0, &drv);
	if (err == -ERANGE && (req.flags & BCS_STROBE_PLAN))
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[BCS_A_PLAN_SLICES],
				    "deadline too far ahead, or the plan ends past BCS_DEADLINE_NS_MAX");
	else if (err == -ERANGE)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[BCS_A_DEADLINE_NS],
				    "deadline further ahead than the strobe queue holds");
	else if (err == -EBUSY)
		NL_SET_ERR_MSG(info->extack,
			       "another file or socket drives bcs");
	return err;
}

/* Arm the slice window with both bounds, disarm it with neither. */
static int bcs_nl_window(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *from = info->attrs[BCS_A_WINDOW_FROM];
	struct nlattr *to = info->attrs[BCS_A_WINDOW_TO];
	struct bcs_window w = { .size = sizeof(w) };
	int err;

	err = bcs_nl_admin(skb, info);
	if (err)
		return err;
	if (!from != !to) {
		NL_SET_ERR_MSG_ATTR(info->extack, from ? from : to,
				    "a window needs BCS_A_WINDOW_FROM and BCS_A_WINDOW_TO");
		return -EINVAL;
	}
	w.op = from ? BCS_WINDOW_ARM : BCS_WINDOW_DISARM;
	if (from) {
		w.from_slice = nla_get_u64(from);
		w.to_slice = nla_get_u64(to);
	}
	err = bcs_sched_window(&w);
	if (err == -E2BIG)
		NL_SET_ERR_MSG_ATTR(info->extack, to,
				    "window larger than the ring");
	else if (err == -ERANGE)
		NL_SET_ERR_MSG_ATTR(info->extack, from,
				    "the window's first slice has begun");
	else if (err)
		NL_SET_ERR_MSG_ATTR(info->extack, to,
				    "the window ends before it begins");
	return err;
}

static const struct genl_small_ops bcs_nl_ops[] = {
	{
		.cmd	= BCS_CMD_GET_STATE,
		.doit	= bcs_nl_get_state,
	},
	{
		.cmd	= BCS_CMD_DRIVE,
		.doit	= bcs_nl_drive,
	},
	{
		.cmd	= BCS_CMD_RELEASE,
		.doit	= bcs_nl_release,
	},
	{
		.cmd	= BCS_CMD_STROBE,
		.doit	= bcs_nl_strobe,
	},
	{
		.cmd	= BCS_CMD_WINDOW,
		.doit	= bcs_nl_window,
	},
};

enum bcs_nl_groups {
	BCS_NL_GRP_EVENTS,
};

static const struct genl_multicast_group bcs_nl_mcgrps[] = {
	[BCS_NL_GRP_EVENTS] = {
		.name	= BCS_GENL_MCGRP_EVENTS,
		.flags	= BCS_GENL_MCAST_ADMIN,
	},
};

static struct genl_family bcs_nl_family __ro_after_init = {
	.name		= BCS_GENL_NAME,
	.version	= BCS_GENL_VERSION,
	.maxattr	= BCS_A_MAX,
	.policy		= bcs_nl_policy,
	.netnsok	= false,
	.module		= THIS_MODULE,
	.small_ops	= bcs_nl_ops,
	.n_small_ops	= ARRAY_SIZE(bcs_nl_ops),
	.mcgrps		= bcs_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(bcs_nl_mcgrps),
};

/* One BCS_CMD_JOB_ENDED to the group.  Return: 0, or why it failed. */
static int bcs_nl_job_ended(const struct bcs_job_event *ev)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (!genl_has_listeners(&bcs_nl_family, &init_net, BCS_NL_GRP_EVENTS))
		return 0;
	/* As small as it is: a listener's buffer holds many. */
	msg = genlmsg_new(3 * nla_total_size(sizeof(u32)) +
			  nla_total_size_64bit(sizeof(u64)), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put(msg, 0, 0, &bcs_nl_family, 0, BCS_CMD_JOB_ENDED);
	if (!hdr ||
	    nla_put_u32(msg, BCS_A_JOB, ev->job) ||
	    nla_put_u32(msg, BCS_A_JOB_END, ev->reason) ||
	    nla_put_u32(msg, BCS_A_DIST_TASKS, ev->dist_tasks) ||
	    nla_put_u64_64bit(msg, BCS_A_EVENT_SEQ, ev->seq, BCS_A_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_multicast(&bcs_nl_family, msg, 0, BCS_NL_GRP_EVENTS,
				GFP_KERNEL);
	/* -ESRCH: the last listener left meanwhile, nothing is lost. */
	return err == -ESRCH ? 0 : err;
}

static void bcs_nl_events_fn(struct work_struct *work)
{
	struct bcs_job_event ev;

	while (bcs_events_pop(&ev)) {
		bcs_events_sent(bcs_nl_job_ended(&ev));
		cond_resched();
	}
}

static DECLARE_WORK(bcs_nl_events_work, bcs_nl_events_fn);

static int bcs_nl_notify(struct notifier_block *nb, unsigned long event,
			 void *ptr)
{
	struct netlink_notify *n = ptr;
	struct bcs_driver drv = {};

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !n->portid)
		return NOTIFY_DONE;
	drv.net = n->net;
	drv.portid = n->portid;
	bcs_driver_gone(&drv);
	return NOTIFY_DONE;
}

static struct notifier_block bcs_nl_notifier = {
	.notifier_call = bcs_nl_notify,
};

int bcs_netlink_init(void)
{
	int err;

	err = netlink_register_notifier(&bcs_nl_notifier);
	if (err)
		return err;
	err = genl_register_family(&bcs_nl_family);
	if (err) {
		netlink_unregister_notifier(&bcs_nl_notifier);
		return err;
	}
	bcs_events_start(&bcs_nl_events_work);
	return 0;
}

void bcs_netlink_exit(void)
{
	bcs_events_stop();
	cancel_work_sync(&bcs_nl_events_work);
	genl_unregister_family(&bcs_nl_family);
	netlink_unregister_notifier(&bcs_nl_notifier);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by the parts of bcsd.
 */
#ifndef BCSD_H
#define BCSD_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/config.h"
#include "core/counters.h"
#include "core/dispatch.h"
#include "core/followed.h"
#include "core/loop.h"
#include "core/metrics.h"
#include "core/net.h"
#include "core/rx.h"
#include "core/stats.h"
#include "core/view.h"
#include "tree/reduce.h"
#include "tree/tree.h"
#include "clock/offsets.h"
#include "clock/probe.h"
#include "master/global.h"
#include "master/master.h"
#include "proto/proto.h"
#include "clock/skew.h"
#include "ctl/ctl.h"
#include "node/collect.h"
#include "node/tgnode.h"
#include "node/filler.h"
#include "node/node.h"
#include "node/record.h"
#include "node/switches.h"

#define BCSD_REQ_TIMEOUT_MS	500
#define BCSD_REQ_TRIES		6
/*
 * The longest lead, in slices: bcs.ko holds BCS_STROBE_QUEUE strobes until
 * their deadlines, and a node takes none due more than BCSP_AHEAD_SLICES
 * ahead.  The rest is margin for the nodes' clock offsets.
 */
#define BCSD_LEAD_SLICES_MAX	(BCS_STROBE_QUEUE / 2)

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

struct bcs;
struct bcs_nl;
struct bcs_stat;
struct topo_list;
struct topo_tree;

/*
 * bcsd.  The core (loop, net, rx, dispatch, view, and what is set at
 * start) is what the parts (master, node, ctl) share; each part's own
 * fields are in its struct, which no other part touches.
 */
struct bcsd {
	/* Set at start (bcsd.c), read by every part. */
	struct cfg cfg;
	uint8_t key[BCSP_KEY_LEN];	/* key_file: signs, accepted */
	/* key_file_next or key_file_old: accepted too (a key rotation). */
	uint8_t key2[BCSP_KEY_LEN];
	bool have_key2;
	uint32_t cluster;
	uint32_t node_id;
	bool master_role, node_role;
	uint64_t slice_ns;		/* slice_us */
	struct bcs *bcs;		/* bcs.ko, opened by the node part */
	/*
	 * The tree of daemons (tree.c, topo.h), NULL without nodes_file:
	 * the list, the tree hung from the master followed, every node's
	 * address, and this node's index in the list.
	 */
	struct topo_list *nodes;
	struct topo_tree *tree;
	struct sockaddr_in *tree_addr;
	uint32_t tree_self;
	struct bcsd_tree_rt tree_rt;
	struct bcsd_reduce reduce;

	/* The core. */
	struct loop loop;
	struct bcsd_net net;
	struct bcsd_rx rx;
	struct bcsd_handlers dispatch[__BCSP_TYPE_MAX];
	struct bcsd_stats stats;	/* the sections the parts registered */
	struct bcsd_metrics metrics;
	struct bcsd_followed followed;	/* rx.c, and master.c when active */
	struct bcsd_view view;
	struct bcsd_global global;	/* master.c records, ctl.c reads */
	struct bcsd_offsets offsets;	/* master.c records, stats.c reads */
	struct bcsd_local local;	/* node.c writes it */
	struct bcsd_counters cnt;	/* each part its own */

	/* The parts. */
	struct bcsd_master master;
	struct bcsd_node node;
	struct bcsd_record record;
	struct bcsd_collect collect;
	struct bcsd_tgnode tgnode;	/* tree gathers (node/tgnode.c) */
	struct bcsd_switches switches;
	struct bcsd_filler filler;
	struct bcsd_probe probe;
	struct bcsd_ctl ctl;
	struct ctl_providers ctl_providers;	/* the parts fill, ctl.c calls */
};

/* Is this daemon the master it follows, that is the active master? */
static inline bool followed_is_self(const struct bcsd *d)
{
	return d->followed.known && d->followed.id == d->node_id;
}

#endif /* BCSD_H */

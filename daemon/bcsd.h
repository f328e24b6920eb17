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
#include "core/loop.h"
#include "master/global.h"
#include "master/master.h"
#include "proto/proto.h"
#include "clock/skew.h"
#include "ctl/ctl.h"
#include "node/collect.h"
#include "node/filler.h"
#include "node/node.h"
#include "node/record.h"
#include "node/switches.h"

/* The largest cluster, BCSD_MAX_NODES, is in config.h (quorum). */
#define BCSD_MAX_SENDERS	BCSD_MAX_NODES
/* Parts of the largest map (proto.h): 100. */
#define BCSD_MAP_PARTS_MAX	\
	((BCSP_MAP_JOBS_MAX + BCSP_MAP_PART_JOBS - 1) / BCSP_MAP_PART_JOBS)
#define BCSD_REQ_TIMEOUT_MS	500
#define BCSD_REQ_TRIES		6
/*
 * The longest lead, in slices: bcs.ko holds BCS_STROBE_QUEUE strobes until
 * their deadlines, and a node takes none due more than BCSP_AHEAD_SLICES
 * ahead.  The rest is margin for the nodes' clock offsets.
 */
#define BCSD_LEAD_SLICES_MAX	(BCS_STROBE_QUEUE / 2)

/*
 * Clock offsets (probe.c, offsets.c): estimates older than so many report
 * periods are not used.
 */
#define BCSD_SKEW_PERIODS	10

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

struct bcs;
struct bcs_nl;
struct bcs_stat;
struct topo_list;
struct topo_tree;

/* A node's last report, as every bcsd keeps it (view.c). */
struct bcsd_peer {
	uint32_t node;
	uint64_t seen_ms;		/* CLOCK_MONOTONIC */
	struct bcsp_report report;
};

/*
 * tree.c: a node's re-attachment while its parent is silent: the
 * ancestor asked (list index, TOPO_NONE: none), and the nodes this one
 * passes the master's datagrams to because they asked.
 */
#define TREE_ADOPTED_MAX	64

struct tree_adopted {
	uint32_t idx;			/* in the node list */
	uint64_t until_ms;		/* CLOCK_MONOTONIC */
};

/*
 * A command passed to a child (or a node that asked) and not yet
 * acknowledged (BCSP_ACK): sent again every tree_ack_ms, tree_retries
 * times at most, as it was (the master's signature and sequence number).
 * @len 0: a free slot.
 */
#define TREE_UNACKED_MAX	32

struct tree_unacked {
	uint32_t idx;			/* the child, in the node list */
	uint32_t master, epoch, id;	/* the command */
	uint32_t tries;			/* sent again so often */
	uint64_t next_ms;		/* CLOCK_MONOTONIC: send again */
	uint16_t len;
	uint8_t buf[BCSP_MAX_LEN];
};

struct bcsd_tree_rt {
	uint64_t parent_heard_ms;	/* the parent last passed on */
	uint32_t adopter;
	uint64_t asked_ms;		/* @adopter chosen */
	uint64_t attach_sent_ms;
	bool asking_any;		/* past the root: every node in turn */
	struct tree_adopted adopted[TREE_ADOPTED_MAX];
	uint32_t nr_adopted;
	struct tree_unacked unacked[TREE_UNACKED_MAX];
	/*
	 * Lost strobes (BCSP_STROBE_F_REPAIR): the last strobe passed down,
	 * kept to send again to a node below that missed it; and the last
	 * taken, whose node @from is asked for the next (BCSP_STROBE_NACK)
	 * if it has not come at @due_ns (by @repair_fd: CLOCK_REALTIME, one
	 * shot; -1 without strobe_transport tree), @left times, @gap_ns
	 * apart, before the next one's deadline.
	 */
	struct tree_strobe_kept {
		uint8_t buf[BCSP_MAX_LEN];
		size_t len;		/* 0: none */
		uint32_t master;
		uint32_t epoch;
		uint64_t slice;
	} kept;
	struct tree_strobe_taken {
		uint32_t master;
		uint32_t epoch;
		uint64_t slice;
		struct sockaddr_in from;
		uint64_t next_deadline_ns;	/* CLOCK_REALTIME */
		uint64_t due_ns;		/* CLOCK_REALTIME */
		unsigned int left;
		uint64_t gap_ns;
	} taken;
	int repair_fd;
	/*
	 * A standby's quorum (tree.c, tquorum.c): the id of its last round of
	 * quorum probes, when it went, and per node of the list (NULL: none
	 * yet) the last answer and whether it said it hears a master.
	 */
	uint32_t q_id;
	uint64_t q_sent_ms;
	struct tree_q_answer {
		uint64_t ms;		/* CLOCK_MONOTONIC; 0: none */
		bool hears;
	} *q;
};

/*
 * reduce.c: per slice, the switch summaries of this node's subtree
 * being added up on their way to the master (@used: some came, the
 * first at @first_ms), and the datagram going up.
 */
#define REDUCE_SLICES		256

struct bcsd_reduce_slot {
	struct bcsp_switch_sum sw;
	uint64_t first_ms;		/* CLOCK_MONOTONIC */
	bool used;
};

/* A child's sum of tasks is left out when so many report periods old. */
#define REDUCE_TASKS_REPORTS	3

/*
 * A node's last report, or a child's last sum of its subtree's; and the
 * same per node (@nt, allocated when the first came; NULL: never).
 */
struct reduce_tasks {
	uint64_t seen_ms;		/* CLOCK_MONOTONIC; 0: never */
	struct bcsp_tasks t;
	uint64_t nt_seen_ms;
	struct bcsp_node_tasks *nt;
};

struct bcsd_reduce {
	uint32_t epoch;			/* of the master the sums are for */
	struct bcsd_reduce_slot slot[REDUCE_SLICES];
	struct bcsp_msg out;
	/* Per node of the list: this node's and its children's tasks. */
	struct reduce_tasks *tasks;
	uint64_t tasks_sent_ms;
	/*
	 * The last concatenation of this node's and its children's tasks
	 * per node, made when the sums went up (@nodes_ms; 0: never): the
	 * subtree's, on the root the cluster's.
	 */
	struct bcsp_node_tasks nodes;
	uint64_t nodes_ms;
	/* Nodes whose reports the last sum up held (the subtree's). */
	uint32_t reporting;
};

/*
 * offsets.c: the active master's record of the clock offsets, per node of
 * the list (its index): the latest estimate of its clock minus its
 * parent's, as that parent sent it (BCSP_OFFSETS).
 */
struct bcsd_offset_link {
	bool known;
	uint32_t parent;		/* node id of the sender */
	struct skew_estimate est;
	uint64_t at_ns;			/* CLOCK_REALTIME when it came */
	uint64_t warned_ms;		/* CLOCK_MONOTONIC; 0: never */
};

struct bcsd_offsets {
	struct bcsd_offset_link link[BCSD_MAX_NODES];
};

/* net.c: the UDP socket and what is sent on it. */
struct bcsd_net {
	int sock;			/* UDP: group and unicast */
	struct sockaddr_in group;
	uint64_t seq;			/* our next sequence number */
	uint64_t seq_first;		/* our first one */
};

/* rx.c: datagram acceptance. */
struct bcsd_rx {
	struct {
		uint32_t sender;
		uint64_t heard_ms;	/* CLOCK_MONOTONIC */
		struct bcsp_window w;
	} windows[BCSD_MAX_SENDERS];
	uint64_t dup_id_said_ms;	/* another daemon with our node id */
	/* Rejections, said at most every RX_REJECT_LOG_MS. */
	uint64_t said[__BCSP_VERDICT_MAX];	/* cnt.rejected when last said */
	uint64_t said_ms;
	struct in_addr last_from;	/* the last rejected datagram's */
	/* The ids of the followed master's commands taken, each once. */
	struct bcsp_window cmds;
	/*
	 * The parts of the map being received (BCSP_MAP_PART_JOBS jobs
	 * each), of (epoch, master, version): bit k % 64 of @parts[k / 64],
	 * part k, of up to BCSD_MAP_PARTS_MAX.
	 */
	struct bcsd_map_asm {
		uint32_t epoch, master, version;
		bool started;
		uint64_t parts[(BCSD_MAP_PARTS_MAX + 63) / 64];
		struct bcsp_whole_map map;
	} map_asm;
};

/*
 * The live master as every role knows it, from its strobes (rx.c) or,
 * on the active master, from itself; and the last map it sent.
 */
struct bcsd_followed {
	bool known;			/* a master has been heard */
	uint32_t id;			/* its node id */
	uint32_t epoch;
	uint16_t priority;
	struct sockaddr_in addr;	/* where requests go */
	uint64_t heard_ms;		/* CLOCK_MONOTONIC */
	uint64_t slice;			/* of its last strobe followed */
	uint64_t slice_ns;		/* and that strobe's slice length */
	uint32_t max_epoch_seen;	/* in any datagram accepted */
	/*
	 * The last map received.  A map is named by (epoch, master,
	 * version): two standbys that take over in one tick take the same
	 * epoch and step the same version on, with maps of their own.
	 */
	bool have_map;
	struct bcsp_whole_map map;
	uint32_t map_epoch;		/* of the master that sent it */
	uint32_t map_master;		/* that master's node id */
	/*
	 * The map in force before it, until its apply_slice: its version
	 * and home rows (followed_set_map(), followed_rows_at()).
	 */
	bool map_prev;
	uint32_t map_prev_version;
	uint64_t map_prev_rows;
	/* Its last statistics context (BCSP_CONTEXT), if any, so named. */
	bool have_ctx;
	struct bcsp_context ctx;
	uint32_t ctx_epoch;
	uint32_t ctx_master;
};

/* view.c: the cluster view, every node's last report. */
struct bcsd_view {
	struct bcsd_peer peers[BCSD_MAX_SENDERS];
	uint32_t nr_peers;
};

/*
 * probe.c: the round trips to this node's children in the tree, per node
 * of the list (its index; NULL without nodes_file): the last probe sent
 * (@t1 0: none awaits its reply) and the window of round trips.
 */
struct bcsd_probe_child {
	uint32_t id;
	uint64_t t1;
	struct skew_window w;
};

struct bcsd_probe {
	struct bcsd_probe_child *child;
	uint32_t next_id;
	uint64_t resolution_ns;		/* of CLOCK_REALTIME */
	uint64_t sent_ms;		/* the last period's probes */
};

/* Where a message handed to the parts (dispatch()) comes from. */
struct bcsd_origin {
	bool local;			/* a part of this daemon, not the network */
	uint64_t slice;			/* local: the master's current slice */
	/* A strobe from the network: the master followed until it came. */
	bool prev_known;
	uint32_t prev_id;
	uint32_t prev_epoch;
	uint64_t prev_heard_ms;
};

typedef void dispatch_fn(struct bcsd *d, const struct bcsp_msg *m,
			 const struct bcsd_origin *from);

#define DISPATCH_HANDLERS_MAX	6	/* per message type */

struct bcsd_handlers {
	dispatch_fn *fn[DISPATCH_HANDLERS_MAX];
	unsigned int nr;
};

/*
 * bcsd.  The core (loop, net, rx, dispatch, view, and what is set at
 * start) is what the parts (master, node, ctl) share; each part's own
 * fields are in its struct, which no other part touches.
 */
struct bcsd {
	/* Set at start (bcsd.c), read by every part. */
	struct cfg cfg;
	uint8_t key[BCSP_KEY_LEN];
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
	struct bcsd_switches switches;
	struct bcsd_filler filler;
	struct bcsd_probe probe;
	struct bcsd_ctl ctl;
	struct ctl_providers ctl_providers;	/* the parts fill, ctl.c calls */
};

/*
 * The core, on which the parts depend; it calls no part.  Each piece has
 * an _init, which registers its descriptors and handlers with the loop
 * (loop.h), and an _exit, called also after its _init failed half-way.
 */

/* net.c: the UDP socket; received datagrams go to rx_datagram(). */
int net_init(struct bcsd *d);
void net_exit(struct bcsd *d);
int net_send(struct bcsd *d, struct bcsp_msg *m,
	     const struct sockaddr_in *to);
/*
 * Command @m (BCSP_COMMAND) to every node; down a tree only into the
 * subtrees with tasks of its job, or for an attach towards its node,
 * each child acknowledging it (tree_send_command()).
 */
int net_send_command(struct bcsd *d, struct bcsp_msg *m);

/* rx.c: datagram acceptance; what passes goes to dispatch(). */
int rx_init(struct bcsd *d);
void rx_datagram(struct bcsd *d, const uint8_t *buf, size_t len,
		 const struct sockaddr_in *from);

/*
 * followed.c: the whole map @map of master @master, epoch @epoch, is the one followed
 * (received, or on the active master its own): the one before it stays in
 * force until @map's apply_slice, unless @map only replaces a map that is
 * not yet in force (the same apply_slice).
 */
void followed_set_map(struct bcsd *d, const struct bcsp_whole_map *map,
		      uint32_t epoch, uint32_t master);
/*
 * The home rows of the map followed that is in force at slice @slice, and
 * its version in *@version; 0 (and no version) if none is held.
 */
uint64_t followed_rows_at(const struct bcsd *d, uint64_t slice,
			  uint32_t *version);

/* dispatch.c: messages to the handlers the parts registered. */
void dispatch_register(struct bcsd *d, enum bcsp_type type, dispatch_fn *fn);
void dispatch(struct bcsd *d, const struct bcsp_msg *m,
	      const struct bcsd_origin *from);

/* Is this daemon the master it follows, that is the active master? */
static inline bool followed_is_self(const struct bcsd *d)
{
	return d->followed.known && d->followed.id == d->node_id;
}

/* view.c: the cluster view and this node's jobs. */
struct json_object;
void view_on_report(struct bcsd *d, uint32_t node,
		    const struct bcsp_report *r, uint64_t now_ms);
bool view_quorum(const struct bcsd *d, uint64_t now_ms, uint32_t *fresh,
		 uint32_t *need);
/*
 * The tasks per (job, node) of the fresh reports (in a tree the subtree's
 * list, reduce.c), sorted by job and node, for a job list: built once,
 * O(P log P) for P pairs, rather than every report searched per job
 * (BCS_JOBS_MAX jobs times BCSD_MAX_SENDERS reports of 64).  @e: job,
 * node, tasks.
 */
struct view_pairs {
	uint32_t (*e)[3];
	size_t n;
};
int view_pairs_build(const struct bcsd *d, uint64_t now_ms,
		     struct view_pairs *vp);
/* Job @job's [{"node": N, "tasks": T}, ...], in order of nodes. */
struct json_object *view_pairs_job(const struct view_pairs *vp, uint32_t job);
void view_pairs_free(struct view_pairs *vp);
/*
 * The nodes whose reports are fresh (this one's too); in a tree, those
 * in the root's last sum of reports on the root, 0 elsewhere.
 */
uint32_t view_live_nodes(const struct bcsd *d, uint64_t now_ms);
/*
 * What view_pairs_job() shows: {"of": "reports" | "subtree" | "cluster",
 * "more": pairs (job, node) left out of a tree's bounded lists}.
 */
struct json_object *view_nodes_json(const struct bcsd *d, uint64_t now_ms);
/* The index of the first local job whose id is not below @job. */
uint32_t view_local_index(const struct bcsd *d, uint32_t job);
bool view_local_job(const struct bcsd *d, uint32_t job, uint32_t *idx);

/*
 * tree.c: the tree of daemons.  tree_init() reads nodes_file (and
 * topology_file) and resolves every node's address; nothing without
 * nodes_file.  tree_transport(): strobe_transport is tree.
 * tree_addr(): node @node's address from the list.  tree_port(): the
 * port to bind, this node's in the list.  tree_reroot(): hang the tree
 * from node @root.  tree_send_children(): datagram @buf, decoded as @m,
 * to every child, and to the nodes that asked (tree_adopt()); returns how
 * many took it, or -1 if a send failed (to the others it went); a strobe
 * whose loss the tree repairs is kept for those that miss it.
 * tree_json(): this node's place, or NULL.
 */
int tree_init(struct bcsd *d);
void tree_exit(struct bcsd *d);
bool tree_transport(const struct bcsd *d);
bool tree_addr(const struct bcsd *d, uint32_t node, struct sockaddr_in *sin);
uint16_t tree_port(const struct bcsd *d);
void tree_reroot(struct bcsd *d, uint32_t root);
int tree_send_children(struct bcsd *d, const uint8_t *buf, size_t len,
		       const struct bcsp_msg *m);
/*
 * Command datagram @buf, decoded as @m, down the tree: to the children
 * (and nodes that asked) whose subtrees hold tasks of its job, or have
 * not said (reduce.c's sums of tasks), or for an
 * attach, whose subtrees hold its node; each must acknowledge it
 * (tree_on_ack()), or it is sent again every tree_ack_ms, tree_retries
 * times at most (tree_tick()).  Returns how many took it.
 * tree_send_ack(): acknowledge command @m to @to, the daemon that passed
 * it.  tree_on_ack(): node @sender acknowledged a command.
 */
unsigned int tree_send_command(struct bcsd *d, const uint8_t *buf,
			       size_t len, const struct bcsp_msg *m);
void tree_send_ack(struct bcsd *d, const struct bcsp_msg *m,
		   const struct sockaddr_in *to);
void tree_on_ack(struct bcsd *d, uint32_t sender, uint32_t epoch,
		 const struct bcsp_ack *a);
/*
 * Lost strobes (Documentation/tree.rst).  tree_strobe_taken(): strobe @m
 * came from @from, which is asked for the next if it does not come in
 * time.  tree_on_strobe_nack(): node @sender asked for the strobe after
 * the one it names.
 */
void tree_strobe_taken(struct bcsd *d, const struct bcsp_msg *m,
		       const struct sockaddr_in *from);
void tree_on_strobe_nack(struct bcsd *d, uint32_t sender, uint32_t epoch,
			 const struct bcsp_strobe_nack *n);
struct json_object *tree_json(const struct bcsd *d);
/*
 * tree_heard(): a datagram of the master came from @from (the parent,
 * if it is its address).  tree_adopt(): node @node asked to be passed
 * the master's datagrams, its parent @parent being silent.
 */
void tree_heard(struct bcsd *d, const struct sockaddr_in *from);
void tree_adopt(struct bcsd *d, uint32_t node, uint32_t parent);
/*
 * A standby's quorum down a tree (Documentation/tree.rst, "The quorum of
 * a standby").  tree_hears_master(): does this daemon hear a master (the
 * flag of its probe replies)?  tree_q_answer(): a reply to a quorum probe.
 * tree_quorum(): the verdict (enum tq_verdict) over the answers that came
 * in the last @window_ms; a node that hears a master is then asked to
 * pass its datagrams on (an attach).
 */
bool tree_hears_master(const struct bcsd *d);
void tree_q_answer(struct bcsd *d, uint32_t node, uint32_t id, uint32_t flags);
int tree_quorum(struct bcsd *d, uint64_t window_ms, uint32_t *answered,
		uint32_t *hearing, uint32_t *need);

/*
 * reduce.c: with strobe_transport tree, switch summaries @sw for the
 * master of @epoch, this node's own or a child's, to add up and send on
 * up the tree (the root: to the global records).
 */
int reduce_init(struct bcsd *d);
void reduce_exit(struct bcsd *d);
void reduce_add(struct bcsd *d, uint32_t epoch,
		const struct bcsp_switches *sw);
/*
 * reduce_report(): this node's report of its tasks per job;
 * reduce_tasks(): node @node's sum of its subtree's (BCSP_TASKS).  Their
 * total goes up once per report period.
 */
void reduce_report(struct bcsd *d, const struct bcsp_report *rep);
void reduce_tasks(struct bcsd *d, uint32_t node, const struct bcsp_tasks *t);
/*
 * reduce_node_tasks(): node @node's list of its subtree's tasks per node
 * (BCSP_NODE_TASKS), concatenated with this node's and its other
 * children's and sent up with the sums, and kept as d->reduce.nodes.
 */
void reduce_node_tasks(struct bcsd *d, uint32_t node,
		       const struct bcsp_node_tasks *nt);

/*
 * offsets.c: the active master's clock offsets (the master part feeds
 * them).  offsets_add(): the estimates @o of @sender's children, come at
 * @now_ns (CLOCK_REALTIME); children not in the list are counted and
 * dropped.  offsets_compose(): every node's offset from the root of the
 * current tree at @now_ns into @out (d->nodes->nr of them), composed
 * over the links whose sender is the node's parent in that tree and that
 * are at most BCSD_SKEW_PERIODS report periods old; returns the number
 * of nodes known, -ENOENT without nodes_file, or skew_tree()'s -EINVAL.
 * offsets_check(): warn about nodes whose |offset| + bound is beyond
 * skew_warn_permille of the slice, each at most once a minute (@now_ms,
 * CLOCK_MONOTONIC), counted in skew_warnings.  offsets_json(): per node
 * of the list {node, parent, depth, offset_ns, bound_ns, age_ms}, or
 * NULL without nodes_file.
 */
void offsets_add(struct bcsd *d, uint32_t sender,
		 const struct bcsp_offsets *o, uint64_t now_ns);
int offsets_compose(const struct bcsd *d, uint64_t now_ns,
		    struct skew_estimate *out);
void offsets_check(struct bcsd *d, uint64_t now_ns, uint64_t now_ms);
struct json_object *offsets_json(const struct bcsd *d, uint64_t now_ns);

/* stats.c: every part's counters as JSON; reads them, calls no part. */
struct json_object *stats_json(const struct bcsd *d);
void stats_write(const struct bcsd *d);

#endif /* BCSD_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tree.c: the tree of daemons at run time (Documentation/tree.rst).
 */
#ifndef BCSD_TREE_H
#define BCSD_TREE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

struct bcsd;

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
 * tree.c: the tree of daemons.  tree_init() reads nodes_file (and
 * topology_file) and resolves every node's address; nothing without
 * nodes_file.  It registers the tree's transport with the core (net.c),
 * its handlers (dispatch.c) and its place in the stats (stats.c).
 * tree_transport(): strobe_transport is tree.  tree_addr(): node @node's
 * address from the list.  tree_reroot(): hang the tree from node @root.
 */
int tree_init(struct bcsd *d);
void tree_exit(struct bcsd *d);
bool tree_transport(const struct bcsd *d);
bool tree_addr(const struct bcsd *d, uint32_t node, struct sockaddr_in *sin);
void tree_reroot(struct bcsd *d, uint32_t root);
/*
 * tree_up(): where this daemon's answers go up (list index): the ancestor
 * it asked while its parent is silent, else its parent; TOPO_NONE at the
 * root.  tree_adopted_now(): the nodes that asked this one to pass the
 * master's datagrams on and still do (list indices), at most @max.
 */
uint32_t tree_up(const struct bcsd *d);
uint32_t tree_adopted_now(const struct bcsd *d, uint32_t *idx, uint32_t max);
/*
 * tree_tg_ask(): the children of gather @g (the asker's: the root) that
 * tg_gather_ask() says are to be asked again at @now_ms, asked
 * (BCSP_TG_NACK of gather @req of asker @asker, job @job); counted in
 * tg_nacks_tx.  Never this daemon itself: its own parts are not lost.
 */
struct tg_gather;
void tree_tg_ask(struct bcsd *d, struct tg_gather *g, uint32_t req,
		 uint32_t asker, uint32_t job, uint64_t now_ms);
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

#endif /* BCSD_TREE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * net.c: the UDP socket; received datagrams go to the receiver registered
 * (rx.c's rx_datagram()), which calls net.c, never the other way.
 * What goes to every node goes to the group, or down the tree of daemons
 * by the transport the tree registers (tree.c): the core calls it through
 * struct net_transport, never the tree by name.
 */
#ifndef BCSD_NET_H
#define BCSD_NET_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

struct bcsd;

/* Takes each datagram received: @len bytes of @buf from @from. */
typedef void net_receive_fn(struct bcsd *d, const uint8_t *buf, size_t len,
			    const struct sockaddr_in *from);

/*
 * The tree of daemons as the core sees it (tree.c registers it at start,
 * whether strobe_transport is tree or not).  on(): strobe_transport is
 * tree.  port(): the port to bind.  addr(): node @node's address, false
 * if not known.  reroot(): hang the tree from node @root.  send_all():
 * datagram @buf, decoded as @m, to every node below; how many took it,
 * or -1 if a send failed.  send_command(): command datagram @buf down
 * into the subtrees concerned; how many took it.  send_ack(): acknowledge
 * command @m to @to.  heard(): a datagram of the master came from @from.
 * strobe_taken(): strobe @m came from @from, accepted and dispatched.
 * is_root(): this node is the tree's root.  quorum(): the nodes the
 * quorum needs down the tree.
 */
struct net_transport {
	bool (*on)(const struct bcsd *d);
	uint16_t (*port)(const struct bcsd *d);
	bool (*addr)(const struct bcsd *d, uint32_t node,
		     struct sockaddr_in *sin);
	void (*reroot)(struct bcsd *d, uint32_t root);
	int (*send_all)(struct bcsd *d, const uint8_t *buf, size_t len,
			const struct bcsp_msg *m);
	unsigned int (*send_command)(struct bcsd *d, const uint8_t *buf,
				     size_t len, const struct bcsp_msg *m);
	void (*send_ack)(struct bcsd *d, const struct bcsp_msg *m,
			 const struct sockaddr_in *to);
	void (*heard)(struct bcsd *d, const struct sockaddr_in *from);
	void (*strobe_taken)(struct bcsd *d, const struct bcsp_msg *m,
			     const struct sockaddr_in *from);
	bool (*is_root)(const struct bcsd *d);
	uint32_t (*quorum)(const struct bcsd *d);
};

/* net.c: the UDP socket and what is sent on it. */
struct bcsd_net {
	int sock;			/* UDP: group and unicast */
	struct sockaddr_in group;
	uint64_t seq;			/* our next sequence number */
	uint64_t seq_first;		/* our first one */
	const struct net_transport *tree;	/* NULL: none registered */
	net_receive_fn *receive;	/* NULL: datagrams are dropped */
};

/*
 * The core, on which the parts depend; it calls no part.  Each piece has
 * an _init, which registers its descriptors and handlers with the loop
 * (loop.h), and an _exit, called also after its _init failed half-way.
 */
int net_init(struct bcsd *d);
void net_exit(struct bcsd *d);
int net_send(struct bcsd *d, struct bcsp_msg *m,
	     const struct sockaddr_in *to);
/*
 * Command @m (BCSP_COMMAND) to every node; down a tree only into the
 * subtrees with tasks of its job, or for an attach towards its node,
 * each child acknowledging it (the transport's send_command()).
 */
int net_send_command(struct bcsd *d, struct bcsp_msg *m);
/* The receiver of datagrams (rx.c's), registered before net_init(). */
void net_receiver_register(struct bcsd *d, net_receive_fn *fn);
/* The tree's transport, registered before net_init(). */
void net_transport_register(struct bcsd *d, const struct net_transport *t);
/* Is strobe_transport tree (a transport registered, and on)? */
bool net_tree(const struct bcsd *d);

#endif /* BCSD_NET_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * The UDP socket: bound to the group's port, member of the multicast
 * group, used both for the group and for unicast requests to the master.
 * Datagrams are received here and go to rx.c; net_send() signs and sends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bcsd.h"
#include "core/log.h"

/* Datagrams taken per recvmmsg() call, up to four calls per wake-up. */
#define NET_RX_BATCH		16

/*
 * Room for bursts: a report from every node at once, and datagrams that
 * queue while bcsd waits for a CPU.  The default (net.core.rmem_default,
 * 208 KiB) holds a few hundred.  A flood fills any buffer; what keeps it
 * from starving strobes is that a forged datagram costs bcsd one HMAC at
 * most (bcsp_decode()) beside the kernel's work of receiving it, about
 * what it costs its sender.  root may pass net.core.rmem_max
 * (SO_RCVBUFFORCE); otherwise say so.
 */
static void set_rcvbuf(struct bcsd *d)
{
	int want = (int)d->cfg.rcvbuf_kb * 1024, got = 0;
	socklen_t len = sizeof(got);

	if (setsockopt(d->net.sock, SOL_SOCKET, SO_RCVBUFFORCE, &want,
		       sizeof(want)))
		setsockopt(d->net.sock, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
	/* The kernel doubles it, for its bookkeeping. */
	if (!getsockopt(d->net.sock, SOL_SOCKET, SO_RCVBUF, &got, &len) &&
	    got / 2 < want)
		pr_warn("receive buffer %d KiB, not the %d of rcvbuf_kb: raise net.core.rmem_max",
			got / 2 / 1024, want / 1024);
}

/*
 * Datagrams come in bursts (copies of a strobe, a map after it): take
 * what is queued with one recvmmsg(), and stop when a call returns less
 * than a full batch, which saves a last call that finds nothing.
 */
static void on_socket(struct bcsd *d, void *arg)
{
	static uint8_t buf[NET_RX_BATCH][BCSP_MAX_LEN + 1];
	struct sockaddr_in from[NET_RX_BATCH];
	struct mmsghdr msg[NET_RX_BATCH];
	struct iovec iov[NET_RX_BATCH];
	int round, n, i;

	(void)arg;
	/* Bounded: a flood cannot starve the timers. */
	for (round = 0; round < 4; round++) {
		for (i = 0; i < NET_RX_BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
			msg[i] = (struct mmsghdr){ .msg_hdr = {
				.msg_name = &from[i],
				.msg_namelen = sizeof(from[i]),
				.msg_iov = &iov[i], .msg_iovlen = 1 } };
		}
		n = recvmmsg(d->net.sock, msg, NET_RX_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return;
		for (i = 0; i < n && d->net.receive; i++)
			d->net.receive(d, buf[i], msg[i].msg_len, &from[i]);
		if (n < NET_RX_BATCH)
			return;
	}
}

int net_init(struct bcsd *d)
{
	const char *group = d->cfg.group;
	const char *ifname = d->cfg.interface;
	uint16_t port = d->net.tree ? d->net.tree->port(d) :
			(uint16_t)d->cfg.port;
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct ip_mreqn mreq = { 0 };
	int one = 1, ttl = (int)d->cfg.ttl;
	unsigned char loop = d->cfg.multicast_loop;

	d->net.sock = -1;
	memset(&d->net.group, 0, sizeof(d->net.group));
	d->net.group.sin_family = AF_INET;
	d->net.group.sin_port = htons((uint16_t)d->cfg.port);
	if (inet_pton(AF_INET, group, &d->net.group.sin_addr) != 1 ||
	    !IN_MULTICAST(ntohl(d->net.group.sin_addr.s_addr))) {
		pr_err("group: '%s' is not an IPv4 multicast address", group);
		return -1;
	}
	if (*ifname) {
		mreq.imr_ifindex = (int)if_nametoindex(ifname);
		if (!mreq.imr_ifindex) {
			pr_err("interface %s: %s", ifname, strerror(errno));
			return -1;
		}
	}
	mreq.imr_multiaddr = d->net.group.sin_addr;

	d->net.sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->net.sock < 0) {
		pr_err("socket: %s", strerror(errno));
		return -1;
	}
	set_rcvbuf(d);
	any.sin_port = htons(port);
	any.sin_addr.s_addr = htonl(INADDR_ANY);
	/* A restarted bcsd must rebind at once. */
	if (setsockopt(d->net.sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(d->net.sock, (struct sockaddr *)&any, sizeof(any))) {
		pr_err("bind port %u: %s", port, strerror(errno));
		return -1;
	}
	/* Down a tree, nothing is sent to the group, nor heard from it. */
	if (net_tree(d))
		return loop_add(d, d->net.sock, LOOP_NET, on_socket, NULL);
	if (setsockopt(d->net.sock, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq,
		       sizeof(mreq)) ||
	    setsockopt(d->net.sock, IPPROTO_IP, IP_MULTICAST_IF, &mreq,
		       sizeof(mreq)) ||
	    setsockopt(d->net.sock, IPPROTO_IP, IP_MULTICAST_TTL, &ttl,
		       sizeof(ttl)) ||
	    setsockopt(d->net.sock, IPPROTO_IP, IP_MULTICAST_LOOP, &loop,
		       sizeof(loop))) {
		pr_err("joining %s: %s", group, strerror(errno));
		return -1;
	}
	return loop_add(d, d->net.sock, LOOP_NET, on_socket, NULL);
}

void net_exit(struct bcsd *d)
{
	if (d->net.sock < 0)
		return;
	loop_del(d, d->net.sock);
	close(d->net.sock);
	d->net.sock = -1;
}

/*
 * Sign and send @m to @to, as this node.  @to NULL is every node: the
 * group, or with strobe_transport = tree, the children (a master's
 * datagrams, which they pass on).
 */
int net_send(struct bcsd *d, struct bcsp_msg *m, const struct sockaddr_in *to)
{
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m->hdr.version = (uint8_t)d->cfg.protocol_version;
	m->hdr.cluster = d->cluster;
	m->hdr.sender = d->node_id;
	m->hdr.seq = bcsp_seq_next(&d->net.seq, now_real_ns());
	len = bcsp_encode(m, d->key, buf, sizeof(buf));
	if (len < 0)
		return -1;
	if (!to && net_tree(d))
		return d->net.tree->send_all(d, buf, (size_t)len, m) < 0 ?
		       -1 : 0;
	if (!to)
		to = &d->net.group;
	if (sendto(d->net.sock, buf, (size_t)len, 0, (const struct sockaddr *)to,
		   sizeof(*to)) != len) {
		pr_debug("sendto: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int net_send_command(struct bcsd *d, struct bcsp_msg *m)
{
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	if (!net_tree(d))
		return net_send(d, m, NULL);
	m->hdr.version = (uint8_t)d->cfg.protocol_version;
	m->hdr.cluster = d->cluster;
	m->hdr.sender = d->node_id;
	m->hdr.seq = bcsp_seq_next(&d->net.seq, now_real_ns());
	len = bcsp_encode(m, d->key, buf, sizeof(buf));
	if (len < 0)
		return -1;
	d->net.tree->send_command(d, buf, (size_t)len, m);
	return 0;
}

void net_receiver_register(struct bcsd *d, net_receive_fn *fn)
{
	d->net.receive = fn;
}

void net_transport_register(struct bcsd *d, const struct net_transport *t)
{
	d->net.tree = t;
}

bool net_tree(const struct bcsd *d)
{
	return d->net.tree && d->net.tree->on(d);
}

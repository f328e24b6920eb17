// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: the ends of jobs, from the generic netlink multicast group
 * "events" of family "bcs" (BCS_CMD_JOB_ENDED), over libnl-genl-3 for the
 * set-up and plain recv() for the notifications, so that a caller can
 * poll() the descriptor and read without blocking.
 */
#define _GNU_SOURCE		/* struct ucred in libnl's headers */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "internal.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* One datagram: a notification is some 60 bytes, a burst many of them. */
#define BCS_EVENTS_BUF_SIZE	65536
/* Socket buffer: room for every job of a node to end at once. */
#define BCS_EVENTS_RCVBUF	(1 << 20)

struct bcs_events {
	struct nl_sock *sk;
	int fd;
	int family;
	uint64_t last_seq;
	/* The datagram being handed out, and where in it. */
	unsigned char *buf;
	size_t len, off;
};

int bcs__job_end_parse(const struct nlmsghdr *nh, int family,
		       struct bcs_job_ended *out)
{
	static struct nla_policy pol[BCS_A_MAX + 1] = {
		[BCS_A_JOB]		= { .type = NLA_U32 },
		[BCS_A_JOB_END]		= { .type = NLA_U32 },
		[BCS_A_DIST_TASKS]	= { .type = NLA_U32 },
		[BCS_A_EVENT_SEQ]	= { .type = NLA_U64 },
	};
	struct nlattr *tb[BCS_A_MAX + 1];
	const struct genlmsghdr *gh;

	if (nh->nlmsg_type != family ||
	    nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return 0;
	gh = NLMSG_DATA(nh);
	if (gh->cmd != BCS_CMD_JOB_ENDED)
		return 0;
	if (genlmsg_parse((struct nlmsghdr *)nh, 0, tb, BCS_A_MAX, pol) < 0 ||
	    !tb[BCS_A_JOB] || !tb[BCS_A_JOB_END] || !tb[BCS_A_EVENT_SEQ])
		return -EPROTO;
	memset(out, 0, sizeof(*out));
	out->job = nla_get_u32(tb[BCS_A_JOB]);
	out->reason = nla_get_u32(tb[BCS_A_JOB_END]);
	if (tb[BCS_A_DIST_TASKS])
		out->dist_tasks = nla_get_u32(tb[BCS_A_DIST_TASKS]);
	out->seq = nla_get_u64(tb[BCS_A_EVENT_SEQ]);
	return 1;
}

int bcs_events_open(struct bcs_events **out)
{
	int rcvbuf = BCS_EVENTS_RCVBUF, one = 1, grp, err;
	struct bcs_events *ev;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->buf = malloc(BCS_EVENTS_BUF_SIZE);
	ev->sk = nl_socket_alloc();
	if (!ev->buf || !ev->sk) {
		err = -ENOMEM;
		goto fail;
	}
	err = genl_connect(ev->sk);
	if (err < 0) {
		err = bcs__nlerr_to_errno(err);
		goto fail;
	}
	ev->fd = nl_socket_get_fd(ev->sk);
	err = genl_ctrl_resolve(ev->sk, BCS_GENL_NAME);
	if (err < 0) {
		err = bcs__nlerr_to_errno(err);
		goto fail;
	}
	ev->family = err;
	grp = genl_ctrl_resolve_grp(ev->sk, BCS_GENL_NAME,
				    BCS_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		/* A module from before the group. */
		err = -EOPNOTSUPP;
		goto fail;
	}
	/*
	 * Best effort: the kernel caps the buffer at net.core.rmem_max; and
	 * bcs.ko counts the events this socket refuses only if told of them.
	 */
	(void)setsockopt(ev->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			 sizeof(rcvbuf));
	(void)setsockopt(ev->fd, SOL_NETLINK, NETLINK_BROADCAST_ERROR, &one,
			 sizeof(one));
	/* Directly, so that a refusal is -EPERM rather than libnl's code. */
	if (setsockopt(ev->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp,
		       sizeof(grp)) < 0) {
		err = -errno;
		goto fail;
	}
	*out = ev;
	return 0;
fail:
	bcs_events_close(ev);
	return err;
}

void bcs_events_close(struct bcs_events *ev)
{
	if (!ev)
		return;
	if (ev->sk)
		nl_socket_free(ev->sk);
	free(ev->buf);
	free(ev);
}

int bcs_events_fd(const struct bcs_events *ev)
{
	return ev ? ev->fd : -EBADF;
}

/* The next job's end in the datagram held, if any: 1, 0 or -errno. */
static int next_held(struct bcs_events *ev, struct bcs_job_ended *out)
{
	const struct nlmsghdr *nh;
	int len, ret;

	while (ev->off < ev->len) {
		nh = (const struct nlmsghdr *)(ev->buf + ev->off);
		len = (int)(ev->len - ev->off);
		if (!NLMSG_OK(nh, len)) {
			ev->off = ev->len;
			return -EPROTO;
		}
		ev->off += NLMSG_ALIGN(nh->nlmsg_len);
		ret = bcs__job_end_parse(nh, ev->family, out);
		if (ret)
			return ret;
	}
	return 0;
}

int bcs_events_read(struct bcs_events *ev, struct bcs_job_ended *out,
		    int nonblock)
{
	ssize_t n;
	int ret;

	if (!ev)
		return -EBADF;
	if (!out)
		return -EINVAL;
	for (;;) {
		ret = next_held(ev, out);
		if (ret < 0)
			return ret;
		if (ret)
			break;
		ev->off = 0;
		ev->len = 0;
		n = recv(ev->fd, ev->buf, BCS_EVENTS_BUF_SIZE,
			 nonblock ? MSG_DONTWAIT : 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* EAGAIN, or ENOBUFS: the socket overflowed. */
			return -errno;
		}
		ev->len = (size_t)n;
	}
	out->lost = ev->last_seq && out->seq > ev->last_seq + 1 ?
		    out->seq - ev->last_seq - 1 : 0;
	if (out->seq > ev->last_seq)
		ev->last_seq = out->seq;
	return 0;
}

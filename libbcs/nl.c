// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: client of the generic netlink family "bcs", over libnl-genl-3.
 *
 * Every request asks for an ack so that the kernel's verdict, including
 * the errno of a rejected request and the text of its extended ack, comes
 * back to the caller instead of being lost in libnl's error mapping.
 */
#define _GNU_SOURCE		/* struct ucred in libnl's headers */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/netlink.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "internal.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* No request may hang the caller: the kernel answers at once or never. */
#define BCS_NL_TIMEOUT_S	10
/* Messages read for one request before giving up (reply + ack). */
#define BCS_NL_MAX_READS	64
/* Receive buffer: more than any reply (the family's, or bcs.ko's state). */
#define BCS_NL_BUF_SIZE		32768

struct bcs_nl {
	struct nl_sock *sk;
	int family;
	char errmsg[256];
};

struct nl_req {
	struct bcs_nl *nl;
	struct bcs_state *st;	/* GET_STATE: where the reply goes */
	int done;
	int err;
	int got_reply;
};

int bcs__nlerr_to_errno(int nlerr)
{
	static const int map[] = {
		[NLE_SUCCESS]		= 0,
		[NLE_FAILURE]		= EIO,
		[NLE_INTR]		= EINTR,
		[NLE_BAD_SOCK]		= EBADF,
		[NLE_AGAIN]		= EAGAIN,
		[NLE_NOMEM]		= ENOMEM,
		[NLE_EXIST]		= EEXIST,
		[NLE_INVAL]		= EINVAL,
		[NLE_RANGE]		= ERANGE,
		[NLE_MSGSIZE]		= EMSGSIZE,
		[NLE_OPNOTSUPP]		= EOPNOTSUPP,
		[NLE_AF_NOSUPPORT]	= EAFNOSUPPORT,
		[NLE_OBJ_NOTFOUND]	= ENOENT,
		[NLE_NOATTR]		= EINVAL,
		[NLE_MISSING_ATTR]	= EINVAL,
		[NLE_AF_MISMATCH]	= EPROTO,
		[NLE_SEQ_MISMATCH]	= EPROTO,
		[NLE_MSG_OVERFLOW]	= EOVERFLOW,
		[NLE_MSG_TRUNC]		= EMSGSIZE,
		[NLE_NOADDR]		= EADDRNOTAVAIL,
		[NLE_SRCRT_NOSUPPORT]	= EOPNOTSUPP,
		[NLE_MSG_TOOSHORT]	= EPROTO,
		[NLE_MSGTYPE_NOSUPPORT]	= EOPNOTSUPP,
		[NLE_OBJ_MISMATCH]	= EINVAL,
		[NLE_NOCACHE]		= ENOENT,
		[NLE_BUSY]		= EBUSY,
		[NLE_PROTO_MISMATCH]	= EPROTONOSUPPORT,
		[NLE_NOACCESS]		= EACCES,
		[NLE_PERM]		= EPERM,
		[NLE_PKTLOC_FILE]	= ENOENT,
		[NLE_PARSE_ERR]		= EPROTO,
		[NLE_NODEV]		= ENODEV,
		[NLE_IMMUTABLE]		= EPERM,
		[NLE_DUMP_INTR]		= EINTR,
		[NLE_ATTRSIZE]		= EINVAL,
	};

	if (nlerr < 0)
		nlerr = -nlerr;
	if ((size_t)nlerr >= sizeof(map) / sizeof(map[0]))
		return -EIO;
	return -map[nlerr];
}

int bcs__nl_open_family(struct bcs_nl **out, const char *family)
{
	struct timeval tv = { .tv_sec = BCS_NL_TIMEOUT_S };
	struct bcs_nl *nl;
	int one = 1, fd, err;

	if (!out || !family)
		return -EINVAL;
	*out = NULL;
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		free(nl);
		return -ENOMEM;
	}
	err = genl_connect(nl->sk);
	if (err < 0) {
		err = bcs__nlerr_to_errno(err);
		goto fail;
	}
	/*
	 * Replies and acks are small: read each with one recvmsg() into a
	 * buffer big enough for any of them, rather than peek at its size
	 * first.  A daemon hands bcs.ko a strobe every slice, on a CPU its
	 * jobs keep busy; every system call there counts.
	 */
	err = nl_socket_set_msg_buf_size(nl->sk, BCS_NL_BUF_SIZE);
	if (err < 0) {
		err = bcs__nlerr_to_errno(err);
		goto fail;
	}
	nl_socket_disable_msg_peek(nl->sk);
	fd = nl_socket_get_fd(nl->sk);
	/*
	 * Extended acks carry the kernel's explanation of a rejection;
	 * capped acks do not echo our request back.  Both are best effort:
	 * old kernels lack them and requests work without.
	 */
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		err = -errno;
		goto fail;
	}
	err = genl_ctrl_resolve(nl->sk, family);
	if (err < 0) {
		err = bcs__nlerr_to_errno(err);
		goto fail;
	}
	nl->family = err;
	*out = nl;
	return 0;
fail:
	nl_socket_free(nl->sk);
	free(nl);
	return err;
}

int bcs_nl_open(struct bcs_nl **out)
{
	return bcs__nl_open_family(out, BCS_GENL_NAME);
}

void bcs_nl_close(struct bcs_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

int bcs_nl_fd(const struct bcs_nl *nl)
{
	return nl ? nl_socket_get_fd(nl->sk) : -EBADF;
}

const char *bcs_nl_error_msg(const struct bcs_nl *nl)
{
	return nl ? nl->errmsg : "";
}

/* Pull NLMSGERR_ATTR_MSG out of an extended ack, if there is one. */
static void save_ext_ack(struct bcs_nl *nl, const struct nlmsgerr *e)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)
		((const char *)e - NLMSG_HDRLEN);
	size_t payload, off;
	struct nlattr *a;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*e))
		return;
	payload = nlh->nlmsg_len - NLMSG_HDRLEN;
	off = sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < NLMSG_HDRLEN)
			return;
		off += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN);
	}
	if (off >= payload)
		return;
	a = nla_find((struct nlattr *)((char *)(uintptr_t)e + off),
		     (int)(payload - off), NLMSGERR_ATTR_MSG);
	if (!a || nla_len(a) <= 0)
		return;
	/* The kernel NUL-terminates, but do not rely on it. */
	snprintf(nl->errmsg, sizeof(nl->errmsg), "%.*s", nla_len(a),
		 (const char *)nla_data(a));
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct nl_req *r = arg;

	(void)who;
	/* e->error is already a negative errno: keep it verbatim. */
	r->err = e->error < 0 ? e->error : -EPROTO;
	r->done = 1;
	save_ext_ack(r->nl, e);
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct nl_req *r = arg;

	(void)msg;
	r->done = 1;
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	static struct nla_policy pol[BCS_A_MAX + 1] = {
		[BCS_A_SLICE]		= { .type = NLA_U64 },
		[BCS_A_ROW]		= { .type = NLA_U32 },
		[BCS_A_SLICE_NS]	= { .type = NLA_U64 },
		[BCS_A_MODE]		= { .type = NLA_U32 },
		[BCS_A_WATCHDOG_SLICES]	= { .type = NLA_U32 },
		[BCS_A_FAILOPEN]	= { .type = NLA_U32 },
		[BCS_A_NR_JOBS]		= { .type = NLA_U32 },
		[BCS_A_NR_TASKS]	= { .type = NLA_U32 },
		[BCS_A_STROBES]		= { .type = NLA_U64 },
		[BCS_A_LATE]		= { .type = NLA_U64 },
		[BCS_A_MISSED]		= { .type = NLA_U64 },
		[BCS_A_FAILOPENS]	= { .type = NLA_U64 },
		[BCS_A_PREDICTED]	= { .type = NLA_U64 },
		[BCS_A_EXPIRED]		= { .type = NLA_U64 },
		[BCS_A_NR_PARKED]	= { .type = NLA_U32 },
		[BCS_A_DRIVER_PID]	= { .type = NLA_U32 },
		[BCS_A_SWITCHES]	= { .type = NLA_U64 },
		[BCS_A_ATTACH_FAILURES]	= { .type = NLA_U64 },
		[BCS_A_STAT_RECORDS]	= { .type = NLA_U32 },
		[BCS_A_DRAIN_CUTS]	= { .type = NLA_U64 },
		[BCS_A_PLANNED]		= { .type = NLA_U64 },
	};
	struct nlattr *tb[BCS_A_MAX + 1];
	struct nl_req *r = arg;
	struct bcs_state *st = r->st;
	int err;

	if (!st)
		return NL_SKIP;
	err = genlmsg_parse(nlmsg_hdr(msg), 0, tb, BCS_A_MAX, pol);
	if (err < 0) {
		r->err = bcs__nlerr_to_errno(err);
		return NL_SKIP;
	}
	if (tb[BCS_A_MODE])
		st->mode = nla_get_u32(tb[BCS_A_MODE]);
	if (tb[BCS_A_ROW])
		st->row = nla_get_u32(tb[BCS_A_ROW]);
	if (tb[BCS_A_SLICE])
		st->slice = nla_get_u64(tb[BCS_A_SLICE]);
	if (tb[BCS_A_SLICE_NS])
		st->slice_ns = nla_get_u64(tb[BCS_A_SLICE_NS]);
	if (tb[BCS_A_WATCHDOG_SLICES])
		st->watchdog_slices = nla_get_u32(tb[BCS_A_WATCHDOG_SLICES]);
	if (tb[BCS_A_FAILOPEN])
		st->failopen = nla_get_u32(tb[BCS_A_FAILOPEN]);
	if (tb[BCS_A_NR_JOBS])
		st->nr_jobs = nla_get_u32(tb[BCS_A_NR_JOBS]);
	if (tb[BCS_A_NR_TASKS])
		st->nr_tasks = nla_get_u32(tb[BCS_A_NR_TASKS]);
	if (tb[BCS_A_STROBES])
		st->strobes = nla_get_u64(tb[BCS_A_STROBES]);
	if (tb[BCS_A_LATE])
		st->late = nla_get_u64(tb[BCS_A_LATE]);
	if (tb[BCS_A_MISSED])
		st->missed = nla_get_u64(tb[BCS_A_MISSED]);
	if (tb[BCS_A_FAILOPENS])
		st->failopens = nla_get_u64(tb[BCS_A_FAILOPENS]);
	if (tb[BCS_A_PREDICTED])
		st->predicted = nla_get_u64(tb[BCS_A_PREDICTED]);
	if (tb[BCS_A_EXPIRED])
		st->expired = nla_get_u64(tb[BCS_A_EXPIRED]);
	if (tb[BCS_A_NR_PARKED])
		st->nr_parked = nla_get_u32(tb[BCS_A_NR_PARKED]);
	if (tb[BCS_A_DRIVER_PID])
		st->driver_pid = (int32_t)nla_get_u32(tb[BCS_A_DRIVER_PID]);
	if (tb[BCS_A_SWITCHES])
		st->switches = nla_get_u64(tb[BCS_A_SWITCHES]);
	if (tb[BCS_A_ATTACH_FAILURES])
		st->attach_failures = nla_get_u64(tb[BCS_A_ATTACH_FAILURES]);
	if (tb[BCS_A_STAT_RECORDS])
		st->stat_records = nla_get_u32(tb[BCS_A_STAT_RECORDS]);
	if (tb[BCS_A_DRAIN_CUTS])
		st->drain_cuts = nla_get_u64(tb[BCS_A_DRAIN_CUTS]);
	if (tb[BCS_A_PLANNED])
		st->planned = nla_get_u64(tb[BCS_A_PLANNED]);
	if (tb[BCS_A_WINDOW_STATE])
		st->window_state = nla_get_u32(tb[BCS_A_WINDOW_STATE]);
	r->got_reply = 1;
	return NL_OK;
}

/* Send @msg (consumed) and wait for its ack, collecting a reply if any. */
static int transact(struct bcs_nl *nl, struct nl_msg *msg,
		    struct bcs_state *st)
{
	struct nl_req r = { .nl = nl, .st = st };
	struct nl_cb *cb;
	int err, i;

	nl->errmsg[0] = '\0';
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &r);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &r);
	/* nl_send_auto() also sets NLM_F_ACK: auto-ack is on by default. */
	err = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (err < 0) {
		err = bcs__nlerr_to_errno(err);
		goto out;
	}
	err = 0;
	for (i = 0; i < BCS_NL_MAX_READS && !r.done; i++) {
		int ret = nl_recvmsgs(nl->sk, cb);

		if (ret < 0 && !r.done) {
			err = bcs__nlerr_to_errno(ret);
			/* SO_RCVTIMEO expired: say so rather than "again". */
			if (err == -EAGAIN)
				err = -ETIMEDOUT;
			break;
		}
	}
	if (!err && !r.done)
		err = -ETIMEDOUT;
	if (!err)
		err = r.err;
	if (!err && st && !r.got_reply)
		err = -ENODATA;
out:
	nl_cb_put(cb);
	return err;
}

static struct nl_msg *new_msg(struct bcs_nl *nl, uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, 0,
			 cmd, BCS_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int bcs_nl_drive(struct bcs_nl *nl, uint64_t slice_ns,
		 uint32_t watchdog_slices)
{
	struct nl_msg *msg;

	if (!nl)
		return -EBADF;
	msg = new_msg(nl, BCS_CMD_DRIVE);
	if (!msg)
		return -ENOMEM;
	if ((slice_ns && nla_put_u64(msg, BCS_A_SLICE_NS, slice_ns) < 0) ||
	    (watchdog_slices != BCS_NL_DEFAULT &&
	     nla_put_u32(msg, BCS_A_WATCHDOG_SLICES, watchdog_slices) < 0)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return transact(nl, msg, NULL);
}

int bcs_nl_release(struct bcs_nl *nl)
{
	struct nl_msg *msg;

	if (!nl)
		return -EBADF;
	msg = new_msg(nl, BCS_CMD_RELEASE);
	if (!msg)
		return -ENOMEM;
	return transact(nl, msg, NULL);
}

int bcs_nl_strobe_send(struct bcs_nl *nl, const struct bcs_strobe *s)
{
	/*
	 * The prediction travels as BCS_A_NEXT_ROW, the plan as
	 * BCS_A_PLAN_SLICES (and BCS_A_PLAN_ROWS): each implies its flag.
	 */
	uint32_t flags = s ? s->flags & ~(BCS_STROBE_PREDICT |
					  BCS_STROBE_PLAN) : 0;
	struct nl_msg *msg;

	if (!nl)
		return -EBADF;
	if (!s)
		return -EINVAL;
	msg = new_msg(nl, BCS_CMD_STROBE);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u64(msg, BCS_A_SLICE, s->slice) < 0 ||
	    nla_put_u32(msg, BCS_A_ROW, s->row) < 0 ||
	    nla_put_u64(msg, BCS_A_DEADLINE_NS, s->deadline_ns) < 0 ||
	    (s->slice_ns &&
	     nla_put_u64(msg, BCS_A_SLICE_NS, s->slice_ns) < 0) ||
	    (flags && nla_put_u32(msg, BCS_A_FLAGS, flags) < 0) ||
	    ((s->flags & BCS_STROBE_PREDICT) &&
	     nla_put_u32(msg, BCS_A_NEXT_ROW, s->next_row) < 0) ||
	    ((s->flags & BCS_STROBE_PLAN) &&
	     (nla_put_u32(msg, BCS_A_PLAN_SLICES, s->plan_slices) < 0 ||
	      nla_put_u64(msg, BCS_A_PLAN_ROWS, s->plan_rows) < 0))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return transact(nl, msg, NULL);
}

int bcs_nl_strobe(struct bcs_nl *nl, uint64_t slice, uint32_t row,
		  uint64_t deadline_ns, uint64_t slice_ns, uint32_t flags)
{
	struct bcs_strobe s = {
		.flags = flags, .slice = slice, .deadline_ns = deadline_ns,
		.slice_ns = slice_ns, .row = row,
	};

	return bcs_nl_strobe_send(nl, &s);
}

int bcs_nl_window_set(struct bcs_nl *nl, uint64_t from, uint64_t to)
{
	struct nl_msg *msg;

	if (!nl)
		return -EBADF;
	msg = new_msg(nl, BCS_CMD_WINDOW);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u64(msg, BCS_A_WINDOW_FROM, from) < 0 ||
	    nla_put_u64(msg, BCS_A_WINDOW_TO, to) < 0) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return transact(nl, msg, NULL);
}

int bcs_nl_window_clear(struct bcs_nl *nl)
{
	struct nl_msg *msg;

	if (!nl)
		return -EBADF;
	msg = new_msg(nl, BCS_CMD_WINDOW);
	if (!msg)
		return -ENOMEM;
	return transact(nl, msg, NULL);
}

int bcs_nl_get_state(struct bcs_nl *nl, struct bcs_state *st)
{
	struct nl_msg *msg;

	if (!nl)
		return -EBADF;
	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	msg = new_msg(nl, BCS_CMD_GET_STATE);
	if (!msg)
		return -ENOMEM;
	return transact(nl, msg, st);
}

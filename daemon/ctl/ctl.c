// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket through which bcsctl reaches bcsd: a Unix
 * SOCK_SEQPACKET socket carrying one JSON object per message.
 *
 *   {"cmd": "status"}
 *   {"cmd": "job-list"}
 *   {"cmd": "job-create", "job": 0, "row": null}    (root only)
 *   {"cmd": "job-destroy", "job": J}                (root only)
 *   {"cmd": "job-row", "job": J, "row": R}          (root only)
 *   {"cmd": "job-wait", "job": J, "timeout_ms": T}  (T <= control_wait_ms)
 *   {"cmd": "stats", "job": J, "op": "enable", "metrics": M, "sub_bits": S}
 *                                                   (root only, as below;
 *                                                   op enable, disable or
 *                                                   release)
 *   {"cmd": "stats", "job": J, "op": "enable", "metrics": M, "sub_bits": S,
 *    "subsets": [{"ranks": [0, 3]}, {"node": "n2", "pid": P}]}
 *                                                   (root only: the tasks
 *                                                   named, on every node)
 *   {"cmd": "stats", "job": J, "op": "enable", "mpi": "Allreduce,Isend",
 *    "sub_bits": S}                                 (the job's MPI
 *                                                   processes; enable or
 *                                                   disable, "mpi": "")
 *   {"cmd": "window", "from": A, "to": B}
 *   {"cmd": "window-clear"}
 *   {"cmd": "slices", "last": N}                   (on the active master)
 *   {"cmd": "job-create", "job": 0, "row": null, "nodes": "node[1-4]",
 *    "owner": 1000}                                 (root only; the nodes
 *                                                   it will run on, the
 *                                                   uid that owns it)
 *   {"cmd": "job-signal", "job": J, "signal": S}   (root only)
 *   {"cmd": "job-attach", "job": J, "node": N, "pid": P}  (root only)
 *   {"cmd": "mpi-gather", "job": J}                 (the job's MPI
 *                                                   statistics files from
 *                                                   every node, summarised;
 *                                                   root, or the job's user
 *                                                   on a node of the job,
 *                                                   once per
 *                                                   mpi_gather_interval_ms)
 *
 * No row is null, in requests and answers alike (-1 is taken for it in
 * requests too); a field that is null or left out takes its default.
 * Every answer has "ok" (bool) and, when false, "error" (a negative errno)
 * and "message".  Requests are at most CTL_MSG_MAX bytes, exactly one JSON
 * object, with integer fields in their ranges (ctl_parse() in ctl_req.c);
 * answers have no bound (a job list grows with the jobs, up to
 * BCS_JOBS_MAX, and their nodes), so clients peek at their size.  Job
 * requests go to the master, over UDP, retried until it answers or
 * BCSD_REQ_TRIES attempts have timed out.
 *
 * The socket is open to every user (mode 0666: bcsctl run waits for jobs
 * as the user it runs for), so no user may hold it hostage: a user other
 * than root has at most control_clients_per_user connections, all of
 * them together leave one of the control_clients slots to root, a wait
 * lasts at most control_wait_ms, a connection that asks nothing is
 * closed after CTL_IDLE_MS, and when the table is full an idle one makes
 * room, or for root the non-root client that has waited longest.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/bcs.h>
#include <sodium.h>

#include "libbcs/bcs.h"
#include "libbcsmpi/select.h"
#include "bcsd.h"
#include "ctl/ctl_req.h"
#include "core/hostlist.h"
#include "core/log.h"
#include "ctl/mpigather.h"
#include "tree/tgather.h"
#include "tree/topo.h"
#include "tree/tree.h"
#include "ctl/ctl.h"

#define CTL_IDLE_MS	10000	/* a connection that asks nothing is closed */
/*
 * An mpi-gather answers when every node the job's map counts has sent its
 * files, or this long after the master's reply with what came: a node
 * that holds the job but no longer reports tasks of it is not counted,
 * and a part may be lost.
 */
#define CTL_GATHER_MS	3000

static void ctl_error(struct bcsd_client *c, int err, const char *msg);

/*
 * Send @o as one message.  A SOCK_SEQPACKET message must fit the socket's
 * send buffer, and a job list grows with the nodes (per_node): make room
 * for a large one, and if that fails tell the client so rather than
 * leave it waiting.
 */
static void ctl_send(struct bcsd_client *c, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s);
	int room = 0, want;
	socklen_t sl = sizeof(room);

	if (len > CTL_MSG_MAX / 2 && len < INT_MAX / 2 &&
	    !getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &room, &sl) &&
	    (size_t)room < len + 4096) {
		want = (int)len + 4096;
		if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUFFORCE, &want,
			       sizeof(want)))
			setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &want,
				   sizeof(want));
	}
	if (send(c->fd, s, len, MSG_NOSIGNAL) < 0) {
		int err = errno;

		pr_warn("control: reply of %zu bytes: %s", len, strerror(err));
		if (err == EMSGSIZE || err == ENOBUFS) {
			json_object_put(o);
			ctl_error(c, -EMSGSIZE,
				  "reply too large for the control socket");
			return;
		}
	}
	json_object_put(o);
}

/* The end of client @c's gather, answered or not. */
static void gather_end(struct bcsd_client *c)
{
	if (c->tg) {
		tg_gather_free(c->tg);
		free(c->tg);
		c->tg = NULL;
	}
	if (!c->gather)
		return;
	mpi_gather_free(c->gather);
	free(c->gather);
	c->gather = NULL;
}

static void ctl_error(struct bcsd_client *c, int err, const char *msg)
{
	struct json_object *o = json_object_new_object();

	gather_end(c);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_int(err));
	json_object_object_add(o, "message", json_object_new_string(msg));
	ctl_send(c, o);
}

/*
 * Close a connection so that the client still reads what was sent to it:
 * a Unix socket closed with messages unread makes the peer's next call
 * fail with ECONNRESET, its queue of messages to read lost.  So stop the
 * client's sends first (they fail with EPIPE from here on) and drop what
 * it sent before.
 */
static void ctl_close_fd(int fd)
{
	char buf[64];
	int i;

	shutdown(fd, SHUT_RD);
	/* What is queued, at most 64 messages: then 0 (shut) or an error. */
	for (i = 0; i < 64; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC) <= 0)
			break;
	close(fd);
}

static void ctl_drop(struct bcsd *d, struct bcsd_client *c)
{
	gather_end(c);
	loop_del(d, c->fd);
	ctl_close_fd(c->fd);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Tell a connection that gets no slot why, and close it. */
static void ctl_refuse(int fd, int err, const char *msg)
{
	struct bcsd_client c = { .fd = fd };

	ctl_error(&c, err, msg);
	ctl_close_fd(fd);
}

/* Does a live process listen on @sun?  Then it is another bcsd. */
static bool ctl_in_use(const struct sockaddr_un *sun)
{
	int fd, ret;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	ret = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	return !ret || errno == EAGAIN;
}

static bool ctl_waiting(const struct bcsd_client *c)
{
	return c->req_id || c->wait_job || c->gather || c->tg;
}

/*
 * A new connection from @uid: a slot for it, or NULL and a message why
 * not in @why.  Users other than root have at most control_clients_per_user
 * connections each and leave one slot free between them, which is root's.
 * When there is no room, the client that has asked nothing for longest
 * makes room (for a user other than root, such a client of a user other
 * than root: the room must come out of their share); for root, if every
 * client waits, so does the non-root client that has waited longest.
 */
static struct bcsd_client *ctl_slot(struct bcsd *d, uid_t uid, char *why,
				    size_t whylen)
{
	unsigned int per_user, nonroot = 0, mine = 0, i;
	struct bcsd_client *c, *free_c = NULL, *idle = NULL, *waiting = NULL;

	per_user = (unsigned int)d->cfg.control_clients_per_user;
	for (i = 0; i < d->ctl.nr_clients; i++) {
		c = &d->ctl.clients[i];
		if (c->fd < 0) {
			if (!free_c)
				free_c = c;
			continue;
		}
		if (c->uid) {
			nonroot++;
			mine += c->uid == uid;
		}
		/* A non-root newcomer's room must come from a non-root. */
		if (!ctl_waiting(c) && (!uid || c->uid) &&
		    (!idle || c->last_ms < idle->last_ms))
			idle = c;
		if (ctl_waiting(c) && c->uid &&
		    (!waiting || c->last_ms < waiting->last_ms))
			waiting = c;
	}
	if (uid && mine >= per_user) {
		snprintf(why, whylen,
			 "too many connections to bcsd from uid %u (control_clients_per_user %u)",
			 (unsigned int)uid, per_user);
		return NULL;
	}
	if (free_c && (!uid || nonroot + 1 < d->ctl.nr_clients))
		return free_c;
	if (idle) {
		ctl_drop(d, idle);
		return idle;
	}
	if (!uid && waiting) {
		pr_notice("control: uid %u's wait ended early: root needs its slot",
			  (unsigned int)waiting->uid);
		ctl_error(waiting, -EBUSY,
			  "bcsd needs this connection for root: try again");
		ctl_drop(d, waiting);
		return waiting;
	}
	snprintf(why, whylen,
		 "bcsd's control socket is full (control_clients %u, one kept for root)",
		 d->ctl.nr_clients);
	return NULL;
}

static void ctl_on_client(struct bcsd *d, void *arg);

static void ctl_accept(struct bcsd *d, void *arg)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct bcsd_client *c;
	char why[128];
	int fd;

	(void)arg;
	fd = accept4(d->ctl.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		pr_warn("control: SO_PEERCRED: %s", strerror(errno));
		close(fd);
		return;
	}
	c = ctl_slot(d, cred.uid, why, sizeof(why));
	if (!c) {
		pr_debug("control: uid %u refused: %s",
			 (unsigned int)cred.uid, why);
		ctl_refuse(fd, -EUSERS, why);
		return;
	}
	if (loop_add(d, fd, LOOP_CLIENT, ctl_on_client, c)) {
		ctl_refuse(fd, -ENOMEM, "bcsd is out of memory");
		return;
	}
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->uid = cred.uid;
	c->last_ms = now_mono_ms();
}

static struct json_object *ok_object(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

/* A row, null for no row, as bcsctl and bcsstat print it in JSON. */
static void add_row(struct json_object *o, uint32_t row)
{
	json_object_object_add(o, "row", row == BCS_ROW_NONE ? NULL :
			       json_object_new_int64(row));
}

static void cmd_status(struct bcsd *d, struct bcsd_client *c)
{
	struct json_object *o = stats_json(d);
	struct bcs_state st;
	uint64_t rejected = 0;
	int i;

	for (i = 1; i < __BCSP_VERDICT_MAX; i++)
		rejected += d->cnt.rejected[i];
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "role",
			       json_object_new_string(cfg_role_name(d->cfg.role)));
	add_u64(o, "cluster", d->cluster);
	json_object_object_add(o, "have_master",
			       json_object_new_boolean(d->followed.known));
	add_u64(o, "rejected", rejected);
	if (d->bcs && !bcs_get_state(d->bcs, &st)) {
		add_u64(o, "late", st.late);
		add_u64(o, "missed", st.missed);
		add_u64(o, "failopens", st.failopens);
		add_u64(o, "failopen", st.failopen);
	}
	ctl_send(c, o);
}

/* The global records of the last @last slices, on the active master. */
static void cmd_slices(struct bcsd *d, struct bcsd_client *c, uint64_t last)
{
	struct json_object *o;
	char msg[96];

	if (!followed_is_self(d) || !d->ctl_providers.slices) {
		if (d->followed.known)
			snprintf(msg, sizeof(msg),
				 "the global records are on the master, node %u",
				 d->followed.id);
		else
			snprintf(msg, sizeof(msg), "no master heard");
		ctl_error(c, -EREMOTE, msg);
		return;
	}
	o = d->ctl_providers.slices(d, last);
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	ctl_send(c, o);
}

static int by_job_info(const void *a, const void *b)
{
	uint32_t x = ((const struct bcs_job_info *)a)->id;
	uint32_t y = ((const struct bcs_job_info *)b)->id;

	return (x > y) - (x < y);
}

/*
 * The map's jobs, up to BCSP_MAP_JOBS_MAX: this node's tasks of each
 * found by a binary search of bcs.ko's list, their nodes in the pairs of
 * the reports built once (view_pairs_build()), so that a list of
 * thousands of jobs costs O(jobs log jobs) in the event loop.  Its
 * answer is some 100 bytes per job plus 30 per node with tasks of it:
 * about 0.5 MB for 4096 jobs on a node each, one datagram of the
 * control socket, which ctl_send() makes room for with SO_SNDBUFFORCE
 * (bcsd runs as root; without that, as far as net.core.wmem_max allows,
 * and past it the client is told -EMSGSIZE).
 */
static void cmd_job_list(struct bcsd *d, struct bcsd_client *c)
{
	struct json_object *o = ok_object(), *arr = json_object_new_array();
	struct bcs_job_info *local = NULL, key, *lj;
	const struct bcsp_job_row *mj;
	uint64_t now = now_mono_ms();
	struct view_pairs vp;
	size_t nlocal = 0;
	uint32_t i;

	if (d->bcs && !bcs_job_list(d->bcs, &local, &nlocal) && nlocal)
		qsort(local, nlocal, sizeof(local[0]), by_job_info);
	if (view_pairs_build(d, now, &vp))
		pr_warn("control: job list without nodes: %s",
			strerror(ENOMEM));
	for (i = 0; d->followed.have_map && i < d->followed.map.nr_jobs; i++) {
		struct json_object *j = json_object_new_object();

		mj = &d->followed.map.jobs[i];
		key.id = mj->job;
		lj = nlocal ? bsearch(&key, local, nlocal, sizeof(local[0]),
				      by_job_info) : NULL;
		add_u64(j, "job", mj->job);
		add_row(j, mj->row);
		add_u64(j, "row_set", mj->rows);
		add_u64(j, "nodes", mj->nodes);
		add_u64(j, "tasks", mj->tasks);
		add_u64(j, "local_tasks", lj ? lj->nr_tasks : 0);
		/* The map's owner (null: not known), and bcs.ko's here. */
		json_object_object_add(j, "owner", mj->owner == BCSP_OWNER_NONE ?
				       NULL : json_object_new_int64(mj->owner));
		json_object_object_add(j, "local_owner", lj ?
				       json_object_new_int64(lj->owner) : NULL);
		json_object_object_add(j, "per_node", view_pairs_job(&vp,
								     mj->job));
		json_object_array_add(arr, j);
	}
	view_pairs_free(&vp);
	free(local);
	json_object_object_add(o, "jobs", arr);
	json_object_object_add(o, "per_node", view_nodes_json(d, now));
	add_u64(o, "map_version", d->followed.map.version);
	ctl_send(c, o);
}

/* The error of an attach, which its node gave, in words. */
static void reply_attach(struct bcsd_client *c, const struct bcsp_request *r)
{
	char msg[160];

	switch (r->error) {
	case -ENOENT:
		snprintf(msg, sizeof(msg), "no such job %u", r->job);
		break;
	case -ENXIO:
		snprintf(msg, sizeof(msg), "no such node %u in the cluster",
			 r->attach.target);
		break;
	case -EHOSTUNREACH:
		snprintf(msg, sizeof(msg), "node %u did not answer",
			 r->attach.target);
		break;
	case -ESRCH:
		snprintf(msg, sizeof(msg), "no process %u on node %u",
			 r->attach.pid, r->attach.target);
		break;
	case -EBUSY:
		snprintf(msg, sizeof(msg), "too many attaches in flight at the master");
		break;
	default:
		snprintf(msg, sizeof(msg), "node %u: %s", r->attach.target,
			 bcs_strerror(r->error, BCS_CTX_TASK));
	}
	ctl_error(c, r->error, msg);
}

/*
 * Answer client @c's gather if it is time (mpigather.h), once the master
 * has taken the request: the files that came, which bcsstat reads.
 */
static void tg_answer(struct bcsd *d, struct bcsd_client *c);

static void gather_answer(struct bcsd *d, struct bcsd_client *c)
{
	struct json_object *o;

	if (c->tg) {
		tg_answer(d, c);
		return;
	}
	if (!c->gather || c->req_id ||
	    !mpi_gather_done(c->gather, now_mono_ms()))
		return;
	o = ok_object();
	if (mpi_gather_json(c->gather, o)) {
		json_object_put(o);
		ctl_error(c, -ENOMEM, "out of memory for the MPI statistics");
		return;
	}
	if (!mpi_gather_expected(c->gather) ||
	    mpi_gather_answered(c->gather) < mpi_gather_expected(c->gather))
		d->cnt.mpi_gathers_partial++;
	gather_end(c);
	ctl_send(c, o);
}

static void reply_request(struct bcsd *d, struct bcsd_client *c,
			  const struct bcsp_request *r)
{
	struct json_object *o;

	if (r->error == -ERANGE && r->op == BCSP_OP_WINDOW) {
		ctl_error(c, r->error, "the window must start more than 2 slices after the current one");
		return;
	}
	if (r->error && r->op == BCSP_OP_ATTACH) {
		reply_attach(c, r);
		return;
	}
	if (r->error == -EPROTONOSUPPORT && r->op == BCSP_OP_STATS) {
		ctl_error(c, r->error, "subsets of a job's processes need protocol_version 4 on the master");
		return;
	}
	if (r->error == -E2BIG && r->op == BCSP_OP_STATS) {
		ctl_error(c, r->error, "the context has no room for these subsets (64 in all, of every job)");
		return;
	}
	if (r->error) {
		ctl_error(c, r->error, bcs_strerror(r->error, BCS_CTX_JOB));
		return;
	}
	if (r->op == BCSP_OP_TGATHER) {
		/* The root's wait starts: the asker's is a step longer. */
		if (c->tg)
			c->tg->until_ms = now_mono_ms() + TG_STEP_MS +
				tg_wait_ms(0, topo_height(d->tree),
					   TG_STEP_MS);
		gather_answer(d, c);
		return;
	}
	if (r->op == BCSP_OP_MPI_GATHER) {
		/* The nodes have the command now: their time starts. */
		if (c->gather) {
			c->gather->until_ms = now_mono_ms() + CTL_GATHER_MS;
			if (r->gather.live > c->gather->live)
				c->gather->live = r->gather.live;
		}
		gather_answer(d, c);
		return;
	}
	o = ok_object();
	add_u64(o, "job", r->job);
	add_row(o, r->row);
	ctl_send(c, o);
}

static void send_request(struct bcsd *d, struct bcsd_client *c)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_REQUEST } };

	m.hdr.epoch = d->followed.epoch;
	m.req = c->req;
	c->sent_ms = now_mono_ms();
	c->tries++;
	net_send(d, &m, &d->followed.addr);
}

/* A node list being resolved into a create request's node ids. */
struct resolve {
	const struct bcsd *d;
	struct bcsp_request *req;
	char host[256];			/* this host's name */
	char bad[HOSTLIST_NAME_MAX + 1];	/* the name not resolved */
};

/*
 * The node id of @name, one of a job's nodes: a number is an id; a host
 * of the nodes file is its id; this host's name (or its first label) is
 * this node's; and where ids derive from host names (node_id 0 here), the
 * id of that name.  Each id once, at most BCSP_CREATE_NODES_MAX.
 */
static uint32_t node_id_of(const struct bcsd *d, const char *host,
			   const char *name)
{
	size_t n = strlen(name), dot = strcspn(host, ".");
	unsigned long long v = 0;
	uint32_t id = 0, i;

	if (n <= 10 && strspn(name, "0123456789") == n) {
		v = strtoull(name, NULL, 10);
		id = v && v <= UINT32_MAX ? (uint32_t)v : 0;
	}
	for (i = 0; !id && d->nodes && i < d->nodes->nr; i++)
		if (!strcmp(d->nodes->node[i].host, name))
			id = d->nodes->node[i].id;
	if (!id && (!strcmp(name, host) ||
		    (n == dot && !strncmp(name, host, dot))))
		id = d->node_id;
	if (!id && !d->cfg.node_id)
		id = cfg_node_id_of(name);
	return id;
}

static int resolve_node(const char *name, void *arg)
{
	struct resolve *r = arg;
	uint32_t id = node_id_of(r->d, r->host, name), i;

	if (!id) {
		snprintf(r->bad, sizeof(r->bad), "%s", name);
		return -ENOENT;
	}
	for (i = 0; i < r->req->nodes.nr; i++)
		if (r->req->nodes.id[i] == id)
			return 0;
	if (r->req->nodes.nr == BCSP_CREATE_NODES_MAX)
		return -E2BIG;
	r->req->nodes.id[r->req->nodes.nr++] = id;
	return 0;
}

/*
 * The subsets of stats enable @in into @c's request, their nodes' names
 * resolved as a create's: 0, or an error said to the client.
 */
static int stats_subsets(struct bcsd *d, struct bcsd_client *c,
			 const struct ctl_req *in)
{
	struct bcsp_subset *s;
	char host[256] = "", msg[HOSTLIST_NAME_MAX + 96];
	uint32_t i;

	gethostname(host, sizeof(host) - 1);
	for (i = 0; i < in->nr_subsets; i++) {
		s = &c->req.stats.subsets[i];
		s->a = in->subsets[i].a;
		s->b = in->subsets[i].b;
		if (!in->subsets[i].node[0]) {
			s->kind = BCSP_SUBSET_RANKS;
			continue;
		}
		s->kind = BCSP_SUBSET_PID;
		s->a = node_id_of(d, host, in->subsets[i].node);
		if (!s->a) {
			snprintf(msg, sizeof(msg),
				 "--pid: no node id for '%s' (give node ids, or name the nodes in nodes_file)",
				 in->subsets[i].node);
			ctl_error(c, -EINVAL, msg);
			return -EINVAL;
		}
	}
	c->req.stats.nr_subsets = in->nr_subsets;
	return 0;
}

/*
 * The nodes of job-create @in into @c's request: 0, or an error said to
 * the client.
 */
static int create_nodes(struct bcsd *d, struct bcsd_client *c,
			const struct ctl_req *in)
{
	struct resolve r = { .d = d, .req = &c->req };
	char err[160], msg[480];
	int e;

	if (!in->nodes[0])
		return 0;
	gethostname(r.host, sizeof(r.host) - 1);
	e = hostlist_expand(in->nodes, resolve_node, &r, err, sizeof(err));
	if (!e)
		return 0;
	if (e == -ENOENT)
		snprintf(msg, sizeof(msg),
			 "--nodes: no node id for '%s' (give node ids, or name the nodes in nodes_file)",
			 r.bad);
	else if (e == -E2BIG && !r.bad[0] && r.req->nodes.nr)
		snprintf(msg, sizeof(msg), "--nodes: more than %d nodes",
			 BCSP_CREATE_NODES_MAX);
	else
		snprintf(msg, sizeof(msg), "--nodes: %s", err);
	ctl_error(c, -EINVAL, msg);
	return -EINVAL;
}

static void cmd_job_request(struct bcsd *d, struct bcsd_client *c,
			    uint32_t op, const struct ctl_req *in)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_REQUEST } };

	memset(&c->req, 0, sizeof(c->req));
	c->req.node = d->node_id;
	c->req.op = op;
	c->req.job = in->job;
	c->req.row = in->row;
	if (op == BCSP_OP_STATS) {
		c->req.row = 0;
		c->req.stats.op = in->dist_op;
		c->req.stats.metrics = in->metrics;
		c->req.stats.sub_bits = in->sub_bits;
		if (stats_subsets(d, c, in))
			return;
	} else if (op == BCSP_OP_WINDOW) {
		c->req.window.from = in->from;
		c->req.window.to = in->to;
	} else if (op == BCSP_OP_SIGNAL) {
		c->req.row = 0;
		c->req.signal.sig = in->signal;
	} else if (op == BCSP_OP_ATTACH) {
		c->req.row = 0;
		c->req.attach.target = in->node;
		c->req.attach.pid = in->pid;
	} else if (op == BCSP_OP_MPI) {
		c->req.row = 0;
		if (in->dist_op == BCS_DIST_DISABLE)
			c->req.mpi.flags |= BCSP_MPI_OFF;
		if (in->mpi_sub_bits >= 0) {
			c->req.mpi.flags |= BCSP_MPI_SUB_BITS;
			c->req.mpi.sub_bits = (uint32_t)in->mpi_sub_bits;
		}
		c->req.mpi.len = (uint32_t)strlen(in->mpi_sel);
		memcpy(c->req.mpi.sel, in->mpi_sel, c->req.mpi.len + 1);
	} else if (op == BCSP_OP_CREATE) {
		if (create_nodes(d, c, in))
			return;
		c->req.nodes.owner = in->owner;
	}
	if (!d->followed.known) {
		ctl_error(c, -EHOSTUNREACH, "no master heard yet");
		return;
	}
	if (!++d->ctl.next_req_id)
		++d->ctl.next_req_id;	/* 0: no request */
	c->req.id = d->ctl.next_req_id;
	c->req_id = c->req.id;
	c->tries = 0;
	if (!followed_is_self(d)) {
		send_request(d, c);
		return;
	}
	/* This daemon is the master: it answers at once (on_reply()). */
	m.hdr.epoch = d->followed.epoch;
	m.hdr.sender = d->node_id;
	m.req = c->req;
	dispatch(d, &m, &(struct bcsd_origin){ .local = true });
	/* An attach is answered when its node has said (ctl_tick() bounds it). */
	if (c->req_id && op == BCSP_OP_ATTACH) {
		c->sent_ms = now_mono_ms();
		c->tries = 1;
		return;
	}
	if (c->req_id) {
		c->req_id = 0;
		ctl_error(c, -EHOSTUNREACH, "the master did not answer");
	}
}

/* From the master followed (rx.c checked), or from this daemon's own. */
static void on_reply(struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	unsigned int i;

	(void)from;
	/* Is it ours? */
	if (m->req.node != d->node_id)
		return;

	for (i = 0; i < d->ctl.nr_clients; i++) {
		struct bcsd_client *c = &d->ctl.clients[i];

		if (c->fd >= 0 && c->req_id && c->req_id == m->req.id) {
			c->req_id = 0;
			reply_request(d, c, &m->req);
		}
	}
}

/*
 * Wait for job @req->job to exist on this node, @req->timeout_ms at most
 * (5 s if not given): bounded by control_wait_ms, so that no client holds
 * a slot for longer.
 */
static void job_appeared(struct bcsd *d);

static void cmd_job_wait(struct bcsd *d, struct bcsd_client *c,
			 const struct ctl_req *req)
{
	uint64_t max = d->cfg.control_wait_ms;
	char msg[96];

	if (req->timeout_ms > max) {
		snprintf(msg, sizeof(msg),
			 "job-wait: timeout_ms must be 0 to %llu (control_wait_ms)",
			 (unsigned long long)max);
		ctl_error(c, -EINVAL, msg);
		return;
	}
	c->wait_job = req->job;
	c->wait_until_ms = now_mono_ms() + req->timeout_ms;
	job_appeared(d);
}

/* The request to the master that each command of root's makes. */
static const uint32_t ctl_ops[] = {
	[CTL_JOB_CREATE]	= BCSP_OP_CREATE,
	[CTL_JOB_DESTROY]	= BCSP_OP_DESTROY,
	[CTL_JOB_ROW]		= BCSP_OP_SET_ROW,
	[CTL_STATS]		= BCSP_OP_STATS,
	[CTL_WINDOW]		= BCSP_OP_WINDOW,
	[CTL_WINDOW_CLEAR]	= BCSP_OP_WINDOW_CLEAR,
	[CTL_JOB_SIGNAL]	= BCSP_OP_SIGNAL,
	[CTL_JOB_ATTACH]	= BCSP_OP_ATTACH,
};

/*
 * May client @c (not root) gather job @job's MPI statistics now?  Only
 * the job's user, on a node of the job: the owner of the job's
 * directory in mpi_dir here (the node part's job_owner: the user of
 * the job's first task); and one gather per job per
 * mpi_gather_interval_ms from users other than root, each of which
 * makes every node of the job read its files.  If not, the client has
 * its error.
 */
static bool gather_allowed(struct bcsd *d, struct bcsd_client *c,
			   uint32_t job)
{
	struct bcsd_ctl *t = &d->ctl;
	uint64_t now = now_mono_ms();
	unsigned int i, slot = 0;
	char msg[160];
	uid_t owner;

	if (!*d->cfg.mpi_dir || !d->ctl_providers.job_owner ||
	    d->ctl_providers.job_owner(d, job, &owner) || owner != c->uid) {
		d->cnt.mpi_gathers_denied++;
		snprintf(msg, sizeof(msg), "permission denied: job %u's MPI statistics are its user's: ask on a node of the job as its user, or as root",
			 job);
		ctl_error(c, -EPERM, msg);
		return false;
	}
	for (i = 0; i < CTL_GATHER_SLOTS; i++) {
		if (t->gathered[i].job == job && t->gathered[i].ms &&
		    now - t->gathered[i].ms < d->cfg.mpi_gather_interval_ms) {
			d->cnt.mpi_gathers_limited++;
			snprintf(msg, sizeof(msg), "job %u's MPI statistics were gathered less than %u ms ago (mpi_gather_interval_ms): try again later",
				 job, d->cfg.mpi_gather_interval_ms);
			ctl_error(c, -EBUSY, msg);
			return false;
		}
		/* This job's slot, or the oldest. */
		if (t->gathered[slot].job != job &&
		    (t->gathered[i].job == job ||
		     t->gathered[i].ms < t->gathered[slot].ms))
			slot = i;
	}
	t->gathered[slot].job = job;
	t->gathered[slot].ms = now;
	return true;
}

/*
 * The tree's answer to client @c, once whole or at its deadline (the
 * root then counted missing with the whole tree): the merged records
 * (tree/tgather.h), which bcsstat prints.
 */
static void add_extreme(struct json_object *e, const char *k, uint64_t ns,
			int32_t rank)
{
	char key[16];

	snprintf(key, sizeof(key), "%s_ns", k);
	add_u64(e, key, ns);
	snprintf(key, sizeof(key), "%s_rank", k);
	json_object_object_add(e, key, json_object_new_int(rank));
}

/* The kinds of tree/tgather.h's histograms, as the JSON names them. */
static const char *const tg_kind_name[__TG_HIST_KIND_MAX] = {
	[TG_HIST_LAT] = "latency", [TG_HIST_SIZE] = "size",
	[TG_HIST_DIST] = "dist",
};

/*
 * Histogram @h as bcs_hist_json() writes one (sub_bits, count, sum, min,
 * max, saturated, buckets [lower, upper, count]), with its kind and name.
 */
static struct json_object *tg_hist_json(const struct tg_hist *h)
{
	struct json_object *o = json_object_new_object(), *bs, *b;
	uint32_t i;

	bs = json_object_new_array();
	if (!o || !bs)
		goto nomem;
	json_object_object_add(o, "kind",
			       json_object_new_string(tg_kind_name[h->kind]));
	json_object_object_add(o, "name", json_object_new_string(h->name));
	add_u64(o, "sub_bits", h->sub_bits);
	add_u64(o, "count", h->count);
	add_u64(o, "sum", h->sum);
	add_u64(o, "min", h->min);
	add_u64(o, "max", h->max);
	json_object_object_add(o, "saturated", json_object_new_boolean(
				       !!(h->flags & BCS_HIST_SATURATED)));
	for (i = 0; i < h->nr; i++) {
		b = json_object_new_array();
		if (!b)
			goto nomem;
		json_object_array_add(b, json_object_new_uint64(
			bcs_hist_lower(h->b[i].index, h->sub_bits)));
		json_object_array_add(b, json_object_new_uint64(
			bcs_hist_upper(h->b[i].index, h->sub_bits)));
		json_object_array_add(b, json_object_new_uint64(h->b[i].count));
		json_object_array_add(bs, b);
	}
	json_object_object_add(o, "buckets", bs);
	return o;
nomem:
	json_object_put(bs);
	json_object_put(o);
	return NULL;
}

static void tg_answer(struct bcsd *d, struct bcsd_client *c)
{
	const struct tg_answer *a;
	struct json_object *o, *prims, *e;
	uint32_t i;

	if (c->req_id || !tg_gather_done(c->tg, now_mono_ms()))
		return;
	a = tg_gather_finish(c->tg);
	o = ok_object();
	prims = json_object_new_array();
	if (!o || !prims)
		goto nomem;
	add_u64(o, "job", a->job);
	json_object_object_add(o, "tree", json_object_new_boolean(1));
	add_u64(o, "nodes", a->nodes);
	add_u64(o, "missing", a->missing);
	add_u64(o, "ranks", a->ranks);
	add_u64(o, "dropped", a->dropped);
	json_object_object_add(o, "complete", json_object_new_boolean(
				       !a->missing && !a->dropped));
	for (i = 0; i < a->nr_prims; i++) {
		const struct tg_prim *p = &a->prims[i];

		e = json_object_new_object();
		if (!e)
			goto nomem;
		json_object_object_add(e, "name",
				       json_object_new_string(p->name));
		add_u64(e, "flags", p->flags);
		add_u64(e, "ranks", p->ranks);
		add_u64(e, "calls", p->calls);
		add_u64(e, "timed", p->timed);
		add_u64(e, "time_ns", p->time_ns);
		add_u64(e, "bytes", p->bytes);
		add_extreme(e, "min", p->min_ns, p->min_rank);
		add_extreme(e, "max", p->max_ns, p->max_rank);
		add_extreme(e, "rmin", p->rmin_ns, p->rmin_rank);
		add_extreme(e, "rmax", p->rmax_ns, p->rmax_rank);
		json_object_array_add(prims, e);
	}
	json_object_object_add(o, "primitives", prims);
	prims = json_object_new_array();
	if (!prims)
		goto nomem;
	json_object_object_add(o, "histograms", prims);
	for (i = 0; i < a->nr_hists; i++) {
		e = tg_hist_json(&a->hists[i]);
		if (!e) {
			prims = NULL;
			goto nomem;
		}
		json_object_array_add(prims, e);
	}
	if (a->missing || a->dropped)
		d->cnt.mpi_gathers_partial++;
	gather_end(c);
	ctl_send(c, o);
	return;
nomem:
	json_object_put(prims);
	json_object_put(o);
	ctl_error(c, -ENOMEM, "out of memory for the MPI statistics");
}

/*
 * mpi-gather through the tree (protocol 4): the master passes the command
 * down the tree; the daemons merge their subtrees' answers on the way up
 * (node/tgnode.c) and the root sends this one the whole tree's, from
 * which alone it answers.  Its deadline is set at the master's reply.
 */
static void cmd_tgather(struct bcsd *d, struct bcsd_client *c,
			const struct ctl_req *req)
{
	uint32_t root = d->tree->root, all = d->nodes->nr;
	struct tg_answer none;

	c->tg = calloc(1, sizeof(*c->tg));
	if (!c->tg || tg_gather_start(c->tg, req->job, 1, &root, &all,
				      now_mono_ms() + BCSD_REQ_TIMEOUT_MS *
				      (BCSD_REQ_TRIES + 1))) {
		free(c->tg);
		c->tg = NULL;
		ctl_error(c, -ENOMEM, "out of memory");
		return;
	}
	tg_init(&none, req->job);	/* the asker's own: nothing */
	tg_gather_own(c->tg, &none);
	d->cnt.mpi_gathers++;
	d->cnt.tg_asked++;
	cmd_job_request(d, c, BCSP_OP_TGATHER, req);
}

/* A part of the tree's answer to a gather of this node's. */
static void on_tg_part(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	const struct bcsp_tg_part *p = &m->tg;
	unsigned int i;
	int idx, r;

	(void)from;
	if (p->node != d->node_id || !(p->flags & BCSP_TG_F_FINAL))
		return;
	idx = topo_index(d->nodes, m->hdr.sender);
	for (i = 0; i < d->ctl.nr_clients; i++) {
		struct bcsd_client *c = &d->ctl.clients[i];

		if (c->fd < 0 || !c->tg || c->req.id != p->req ||
		    c->req.op != BCSP_OP_TGATHER || c->tg->acc.job != p->job)
			continue;
		r = idx < 0 ? -ENOENT :
		    tg_gather_part(c->tg, (uint32_t)idx, p->size, p->offset,
				   p->len, p->data, now_mono_ms());
		if (r < 0) {
			d->cnt.mpi_gather_parts_refused++;
			pr_info("job %u: a part of node %u's tree answer refused: %s",
				p->job, m->hdr.sender, strerror(-r));
		} else {
			d->cnt.tg_final_parts_rx++;
			d->cnt.tg_final_answers_rx += r == 1;
		}
		gather_answer(d, c);
		return;
	}
}

/*
 * mpi-gather: the request goes to the master, which has the nodes of the
 * job send their files here; they may come before its reply (the
 * master's own node part), so the gather starts first.
 */
static void cmd_gather(struct bcsd *d, struct bcsd_client *c,
		       const struct ctl_req *req)
{
	uint32_t i, expect = 0;

	gather_end(c);
	if (c->uid && !gather_allowed(d, c, req->job))
		return;
	/* Merged in the tree, unless each rank's file is asked for. */
	if (!req->files && tree_transport(d) && d->tree &&
	    d->cfg.protocol_version >= 4) {
		cmd_tgather(d, c, req);
		return;
	}
	c->gather = malloc(sizeof(*c->gather));
	if (!c->gather) {
		ctl_error(c, -ENOMEM, "out of memory");
		return;
	}
	for (i = 0; d->followed.have_map && i < d->followed.map.nr_jobs; i++)
		if (d->followed.map.jobs[i].job == req->job)
			expect = d->followed.map.jobs[i].nodes;
	mpi_gather_init(c->gather, 0, req->job, expect,
			now_mono_ms() + CTL_GATHER_MS);
	c->gather->live = view_live_nodes(d, now_mono_ms());
	d->cnt.mpi_gathers++;
	cmd_job_request(d, c, BCSP_OP_MPI_GATHER, req);
	if (c->gather)
		c->gather->req = c->req.id;
}

/* A part of a file for a gather of this node's. */
static void on_part(struct bcsd *d, const struct bcsp_msg *m,
		    const struct bcsd_origin *from)
{
	const struct bcsp_mpi_part *p = &m->part;
	unsigned int i;
	int err;

	(void)from;
	if (p->node != d->node_id)
		return;
	for (i = 0; i < d->ctl.nr_clients; i++) {
		struct bcsd_client *c = &d->ctl.clients[i];

		if (c->fd < 0 || !c->gather || c->req.id != p->req ||
		    c->req.op != BCSP_OP_MPI_GATHER || c->gather->job != p->job)
			continue;
		err = mpi_gather_add(c->gather, m->hdr.sender, p);
		if (err) {
			d->cnt.mpi_gather_parts_refused++;
			pr_info("job %u: a part of node %u's MPI statistics refused: %s",
				p->job, m->hdr.sender, strerror(-err));
		} else {
			d->cnt.mpi_gather_parts_rx++;
		}
		gather_answer(d, c);
		return;
	}
}

/*
 * stats with "mpi": the selection checked as the processes will parse
 * it, so that a mistake is told here and not logged on every node.
 */
static void cmd_mpi(struct bcsd *d, struct bcsd_client *c,
		    const struct ctl_req *req)
{
	static const char prefix[] = "BCS_MPI_STATS: ";
	struct bcsmpi_select sel;
	char msg[256];

	if (req->mpi_sel[0] &&
	    bcsmpi_select_parse(req->mpi_sel, NULL, NULL, &sel, msg,
				sizeof(msg))) {
		ctl_error(c, -EINVAL, strncmp(msg, prefix, sizeof(prefix) - 1) ?
			  msg : msg + sizeof(prefix) - 1);
		return;
	}
	cmd_job_request(d, c, BCSP_OP_MPI, req);
}

static void ctl_on_client(struct bcsd *d, void *arg)
{
	struct bcsd_client *c = arg;
	static char buf[CTL_MSG_MAX + 1];
	struct ctl_req req;
	char err[128];
	ssize_t n;
	int ret;

	/* One more byte than a request may have: a longer one is refused. */
	n = recv(c->fd, buf, sizeof(buf), 0);
	if (n <= 0) {
		ctl_drop(d, c);
		return;
	}
	c->last_ms = now_mono_ms();
	/* One request at a time: a new one ends a gather not answered. */
	gather_end(c);
	ret = ctl_parse(buf, (size_t)n, &req, err, sizeof(err));
	if (ret) {
		ctl_error(c, ret, err);
		return;
	}
	switch (req.cmd) {
	case CTL_STATUS:
		cmd_status(d, c);
		break;
	case CTL_JOB_LIST:
		cmd_job_list(d, c);
		break;
	case CTL_JOB_WAIT:
		cmd_job_wait(d, c, &req);
		break;
	case CTL_SLICES:
		cmd_slices(d, c, req.last);
		break;
	case CTL_MPI_GATHER:
		cmd_gather(d, c, &req);
		break;
	default:
		/* The rest go to the master, from root only. */
		if (c->uid)
			ctl_error(c, -EPERM, req.cmd == CTL_JOB_SIGNAL ?
				  "permission denied: signals to a job need root" :
				  req.cmd == CTL_JOB_ATTACH ?
				  "permission denied: attaching through bcsd needs root" :
				  req.cmd >= CTL_STATS ?
				  "permission denied: the cluster's statistics need root" :
				  "permission denied: job changes need root");
		else if (req.cmd == CTL_STATS && req.mpi)
			cmd_mpi(d, c, &req);
		else
			cmd_job_request(d, c, ctl_ops[req.cmd], &req);
		break;
	}
}

/* Answer the clients waiting for a job that now exists on this node. */
static void job_appeared(struct bcsd *d)
{
	struct json_object *o;
	unsigned int i;

	for (i = 0; i < d->ctl.nr_clients; i++) {
		struct bcsd_client *c = &d->ctl.clients[i];

		if (c->fd < 0 || !c->wait_job || !view_local_job(d, c->wait_job, NULL))
			continue;
		c->wait_job = 0;
		o = ok_object();
		ctl_send(c, o);
	}
}

/* A map, which the node part (started before) has applied if it is new. */
static void on_map(struct bcsd *d, const struct bcsp_msg *m,
		   const struct bcsd_origin *from)
{
	(void)m;
	(void)from;
	job_appeared(d);
}

static void ctl_tick(struct bcsd *d, void *arg)
{
	uint64_t now = now_mono_ms();
	unsigned int i;

	(void)arg;
	for (i = 0; i < d->ctl.nr_clients; i++) {
		struct bcsd_client *c = &d->ctl.clients[i];

		if (c->fd < 0)
			continue;
		if (!ctl_waiting(c) && now - c->last_ms > CTL_IDLE_MS) {
			ctl_drop(d, c);
			continue;
		}
		if (c->wait_job && now > c->wait_until_ms) {
			c->wait_job = 0;
			ctl_error(c, -ETIMEDOUT, "job did not appear on this node");
		}
		gather_answer(d, c);
		/* The root's answer's lost parts asked for again. */
		if (c->fd >= 0 && c->tg && !c->req_id)
			tree_tg_ask(d, c->tg, c->req.id, d->node_id,
				    c->tg->acc.job, now);
		if (!c->req_id || now - c->sent_ms < BCSD_REQ_TIMEOUT_MS)
			continue;
		if (c->tries >= BCSD_REQ_TRIES || !d->followed.known) {
			c->req_id = 0;
			ctl_error(c, -ETIMEDOUT, "the master did not answer");
		} else if (followed_is_self(d)) {
			/* This master has it (an attach waiting for its node). */
			c->sent_ms = now;
			c->tries++;
		} else {
			send_request(d, c);
		}
	}
}

int ctl_init(struct bcsd *d)
{
	const char *path = d->cfg.control_socket;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[sizeof(sun.sun_path)], *slash;

	d->ctl.listen_fd = -1;
	/* Not 1 after every start: see on_request() in master.c. */
	d->ctl.next_req_id = randombytes_random();
	if (loop_on_tick(d, ctl_tick, NULL))
		return -1;
	dispatch_register(d, BCSP_REPLY, on_reply);
	dispatch_register(d, BCSP_MPI_PART, on_part);
	dispatch_register(d, BCSP_TG_PART, on_tg_part);
	dispatch_register(d, BCSP_MAP, on_map);
	if (!*path)
		return 0;
	d->ctl.nr_clients = (unsigned int)d->cfg.control_clients;
	d->ctl.clients = calloc(d->ctl.nr_clients, sizeof(*d->ctl.clients));
	if (!d->ctl.clients) {
		pr_err("control socket: out of memory");
		d->ctl.nr_clients = 0;
		return -1;
	}
	for (unsigned int i = 0; i < d->ctl.nr_clients; i++)
		d->ctl.clients[i].fd = -1;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		pr_err("control_socket: path too long");
		return -1;
	}
	strcpy(sun.sun_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	d->ctl.listen_fd = socket(AF_UNIX,
				  SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->ctl.listen_fd < 0) {
		pr_err("control socket: %s", strerror(errno));
		return -1;
	}
	if (ctl_in_use(&sun)) {
		pr_err("control socket %s: another bcsd runs on this host",
		       path);
		/* Not ours: ctl_exit() must leave the path alone. */
		close(d->ctl.listen_fd);
		d->ctl.listen_fd = -1;
		return -1;
	}
	unlink(path);
	if (bind(d->ctl.listen_fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    chmod(path, 0666) || listen(d->ctl.listen_fd, 8)) {
		pr_err("control socket %s: %s", path, strerror(errno));
		return -1;
	}
	return loop_add(d, d->ctl.listen_fd, LOOP_LISTEN, ctl_accept, NULL);
}

void ctl_exit(struct bcsd *d)
{
	unsigned int i;

	for (i = 0; i < d->ctl.nr_clients; i++)
		if (d->ctl.clients[i].fd >= 0)
			ctl_drop(d, &d->ctl.clients[i]);
	free(d->ctl.clients);
	d->ctl.clients = NULL;
	d->ctl.nr_clients = 0;
	if (d->ctl.listen_fd >= 0) {
		loop_del(d, d->ctl.listen_fd);
		close(d->ctl.listen_fd);
		unlink(d->cfg.control_socket);
		d->ctl.listen_fd = -1;
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The tree of daemons at run time (Documentation/tree.rst): the node list
 * and the tree over it (topo.c), read at start, every node's UDP address,
 * and the tree hung from the active master.
 *
 * With strobe_transport = tree, what the master sends to every node
 * (strobes, maps, contexts, replies) goes to its children, and every
 * daemon passes each such datagram it accepts from the master it follows
 * on to its own children, as it came: the master's signature, sender and
 * sequence number are untouched, so every daemon checks it as if it had
 * come straight from the master, and each takes it once whatever the
 * path (the replay window).  Requests go to the master directly, by its
 * address in the list; reports and switch summaries go up the tree,
 * added up on the way (reduce.c).
 * Without strobe_transport = tree the list and the tree are only shown.
 *
 * A node whose parent passes nothing on asks an ancestor to pass it the
 * master's datagrams (BCSP_ATTACH, tree_tick()), until its parent passes
 * on again; the ancestor does so for a few report periods per request
 * (tree_adopt()).
 *
 * Every daemon hangs the tree from the master it follows (tree_reroot()):
 * all do it from the same files, so all agree on it; a new master's first
 * datagrams reach the nodes down the new tree, each node re-rooting it
 * before passing them on.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bcsd.h"
#include "core/log.h"
#include "tree/tgather.h"
#include "tree/topo.h"
#include "tree/tquorum.h"

/* Report periods an ATTACH holds for, unless asked again. */
#define TREE_ADOPT_REPORTS	3

static void tree_tick(struct bcsd *d, void *arg);
static void on_repair(struct bcsd *d, void *arg);
static void tree_register(struct bcsd *d);

/* Node @i's address: its own from the file, or the name resolved. */
static int resolve(struct bcsd *d, uint32_t i, struct sockaddr_in *sin)
{
	const struct topo_node *n = &d->nodes->node[i];
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_DGRAM }, *ai;
	int err;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(n->port ? n->port : (uint16_t)d->cfg.port);
	if (n->numeric) {
		sin->sin_addr = n->addr;
		return 0;
	}
	err = getaddrinfo(n->host, NULL, &hints, &ai);
	if (err) {
		pr_err("nodes_file: node %u, %s: %s", n->id, n->host,
		       gai_strerror(err));
		return -1;
	}
	sin->sin_addr = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
	freeaddrinfo(ai);
	return 0;
}

static void say_place(const struct bcsd *d)
{
	const uint32_t *child;
	uint32_t p = topo_parent(d->tree, d->tree_self);

	pr_info("tree: %u nodes, root %u; this node's parent %u, depth %u, %u children",
		d->nodes->nr, d->nodes->node[d->tree->root].id,
		p == TOPO_NONE ? 0 : d->nodes->node[p].id,
		topo_depth(d->tree, d->tree_self),
		topo_children(d->tree, d->tree_self, &child));
}

int tree_init(struct bcsd *d)
{
	const struct cfg *c = &d->cfg;
	char err[512];
	uint32_t i;
	int self;

	tree_register(d);
	d->tree_rt.repair_fd = -1;
	if (!c->nodes_file[0]) {
		if (c->topology_file[0]) {
			pr_err("topology_file %s: set nodes_file too",
			       c->topology_file);
			return -1;
		}
		if (c->strobe_transport == CFG_TRANSPORT_TREE) {
			pr_err("strobe_transport tree: set nodes_file too");
			return -1;
		}
		return 0;
	}
	d->nodes = malloc(sizeof(*d->nodes));
	d->tree = malloc(sizeof(*d->tree));
	if (!d->nodes || !d->tree) {
		pr_err("nodes_file: out of memory");
		return -1;
	}
	if (topo_list_read_file(d->nodes, c->nodes_file, err, sizeof(err))) {
		pr_err("nodes_file: %s", err);
		return -1;
	}
	self = topo_index(d->nodes, d->node_id);
	if (self < 0) {
		pr_err("nodes_file: %s: this node, %u, is not in it",
		       c->nodes_file, d->node_id);
		return -1;
	}
	d->tree_self = (uint32_t)self;
	if (c->topology_file[0] ?
	    topo_tree_read_file(d->tree, d->nodes, c->topology_file, err,
				sizeof(err)) :
	    topo_tree_kary(d->tree, d->nodes, d->nodes->node[0].id,
			   c->tree_fanout, err, sizeof(err))) {
		pr_err("tree: %s", err);
		return -1;
	}
	d->tree_addr = calloc(d->nodes->nr, sizeof(*d->tree_addr));
	if (!d->tree_addr) {
		pr_err("nodes_file: out of memory");
		return -1;
	}
	for (i = 0; i < d->nodes->nr; i++)
		if (resolve(d, i, &d->tree_addr[i]))
			return -1;
	memset(&d->tree_rt, 0, sizeof(d->tree_rt));
	d->tree_rt.repair_fd = -1;
	d->tree_rt.q = calloc(d->nodes->nr, sizeof(*d->tree_rt.q));
	if (!d->tree_rt.q) {
		pr_err("nodes_file: out of memory");
		return -1;
	}
	d->tree_rt.adopter = TOPO_NONE;
	d->tree_rt.parent_heard_ms = now_mono_ms();
	say_place(d);
	if (tree_transport(d)) {
		d->tree_rt.repair_fd = timerfd_create(CLOCK_REALTIME,
						      TFD_NONBLOCK |
						      TFD_CLOEXEC);
		/* After the datagrams: a strobe that came stops the timer. */
		if (d->tree_rt.repair_fd < 0 ||
		    loop_add(d, d->tree_rt.repair_fd, LOOP_TICK, on_repair,
			     NULL)) {
			pr_err("timerfd: %s", strerror(errno));
			return -1;
		}
	}
	return loop_on_tick(d, tree_tick, NULL);
}

void tree_exit(struct bcsd *d)
{
	if (d->tree_rt.repair_fd >= 0) {
		loop_del(d, d->tree_rt.repair_fd);
		close(d->tree_rt.repair_fd);
		d->tree_rt.repair_fd = -1;
	}
	free(d->tree_rt.q);
	d->tree_rt.q = NULL;
	free(d->tree_addr);
	free(d->tree);
	free(d->nodes);
	d->tree_addr = NULL;
	d->tree = NULL;
	d->nodes = NULL;
}

bool tree_transport(const struct bcsd *d)
{
	return d->tree && d->cfg.strobe_transport == CFG_TRANSPORT_TREE;
}

bool tree_addr(const struct bcsd *d, uint32_t node,
	       struct sockaddr_in *sin)
{
	int i;

	if (!d->nodes)
		return false;
	i = topo_index(d->nodes, node);
	if (i < 0)
		return false;
	*sin = d->tree_addr[i];
	return true;
}

void tree_tg_ask(struct bcsd *d, struct tg_gather *g, uint32_t req,
		 uint32_t asker, uint32_t job, uint64_t now_ms)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_TG_NACK } };
	struct sockaddr_in sin;
	struct tg_want w;
	uint32_t i, id;

	_Static_assert(TG_PARTS_WORDS <= BCSP_TG_NACK_BITS / 64,
		       "a NACK names every part of an answer");
	if (!d->nodes)
		return;
	for (i = 0; i < g->nr_kids; i++) {
		if (!tg_gather_ask(g, i, now_ms, &w) || w.idx >= d->nodes->nr)
			continue;
		id = d->nodes->node[w.idx].id;
		if (id == d->node_id || !tree_addr(d, id, &sin))
			continue;
		memset(&m.tg_nack, 0, sizeof(m.tg_nack));
		m.hdr.epoch = d->followed.epoch;
		m.tg_nack.req = req;
		m.tg_nack.node = asker;
		m.tg_nack.job = job;
		m.tg_nack.size = w.size;
		m.tg_nack.flags = w.size ? 0 : BCSP_TG_NACK_F_ALL;
		memcpy(m.tg_nack.parts, w.parts, sizeof(w.parts));
		if (!net_send(d, &m, &sin))
			d->cnt.tg_nacks_tx++;
	}
}

static uint16_t tree_port(const struct bcsd *d)
{
	return d->nodes ? ntohs(d->tree_addr[d->tree_self].sin_port) :
			  (uint16_t)d->cfg.port;
}

void tree_reroot(struct bcsd *d, uint32_t root)
{
	char err[256];

	if (!d->tree || d->nodes->node[d->tree->root].id == root)
		return;
	if (topo_tree_reroot(d->tree, d->nodes, root, err, sizeof(err))) {
		/* A master not in the list: the tree stays as it was. */
		pr_warn("tree: %s", err);
		return;
	}
	d->cnt.tree_reroots++;
	/* Another tree: other parents, other ancestors. */
	d->tree_rt.adopter = TOPO_NONE;
	d->tree_rt.nr_adopted = 0;
	d->tree_rt.parent_heard_ms = now_mono_ms();
	memset(d->tree_rt.unacked, 0, sizeof(d->tree_rt.unacked));
	say_place(d);
}

/* Does the subtree of node @i hold tasks of @job, or not say? */
static bool holds(const struct bcsd *d, uint32_t i, uint32_t job)
{
	const struct reduce_tasks *e;
	uint32_t k;

	if (!d->reduce.tasks)
		return true;
	e = &d->reduce.tasks[i];
	if (!e->seen_ms || now_mono_ms() - e->seen_ms >
	    REDUCE_TASKS_REPORTS * (uint64_t)d->cfg.report_ms)
		return true;
	for (k = 0; k < e->t.nr_jobs && k < BCSP_MAX_JOBS; k++)
		if (e->t.jobs[k].job == job)
			return e->t.jobs[k].nodes > 0;
	return false;
}

/* Datagram @buf to node @i of the list: 0, or -1 if the send failed. */
static int send_node(struct bcsd *d, uint32_t i, const uint8_t *buf,
		     size_t len)
{
	const struct sockaddr_in *to = &d->tree_addr[i];

	if (sendto(d->net.sock, buf, len, 0, (const struct sockaddr *)to,
		   sizeof(*to)) == (ssize_t)len)
		return 0;
	pr_debug("sendto node %u: %s", d->nodes->node[i].id, strerror(errno));
	return -1;
}

/*
 * @buf to the children, and to the nodes that asked while their parents
 * are silent.  Counts in *@sent those that took it; -1 if a send failed.
 */
static int send_down(struct bcsd *d, const uint8_t *buf, size_t len,
		     unsigned int *sent)
{
	const uint32_t *child;
	uint64_t now = now_mono_ms();
	uint32_t n, i, to;
	int ret = 0;

	*sent = 0;
	if (!d->tree)
		return 0;
	n = topo_children(d->tree, d->tree_self, &child);
	for (i = 0; i < n + d->tree_rt.nr_adopted; i++) {
		if (i < n) {
			to = child[i];
		} else {
			const struct tree_adopted *a =
				&d->tree_rt.adopted[i - n];

			if (now > a->until_ms)
				continue;
			to = a->idx;
		}
		if (send_node(d, to, buf, len))
			ret = -1;
		else
			(*sent)++;
	}
	return ret;
}

/*
 * Strobe @buf (@m), passed down: kept, if the tree repairs its loss, for
 * a node below that misses it (tree_on_strobe_nack()).
 */
static void strobe_keep(struct bcsd *d, const uint8_t *buf, size_t len,
			const struct bcsp_msg *m)
{
	struct tree_strobe_kept *k = &d->tree_rt.kept;

	if (!m || m->hdr.type != BCSP_STROBE ||
	    !(m->strobe.flags & BCSP_STROBE_F_REPAIR) || len > sizeof(k->buf))
		return;
	/* An older strobe of the same master, late: the newer stays. */
	if (k->len && k->master == m->hdr.sender && k->epoch == m->hdr.epoch &&
	    k->slice > m->strobe.slice)
		return;
	memcpy(k->buf, buf, len);
	k->len = len;
	k->master = m->hdr.sender;
	k->epoch = m->hdr.epoch;
	k->slice = m->strobe.slice;
}

/*
 * Datagram @buf, decoded as @m, to every child, and to the nodes that
 * asked (tree_adopt()); returns how many took it, or -1 if a send failed
 * (to the others it went); a strobe whose loss the tree repairs is kept
 * for those that miss it.
 */
static int tree_send_children(struct bcsd *d, const uint8_t *buf,
			      size_t len, const struct bcsp_msg *m)
{
	unsigned int sent;
	int ret;

	ret = send_down(d, buf, len, &sent);
	if (sent)
		strobe_keep(d, buf, len, m);
	return ret ? -1 : (int)sent;
}

uint32_t tree_up(const struct bcsd *d)
{
	if (d->tree_rt.adopter != TOPO_NONE)
		return d->tree_rt.adopter;
	return d->tree ? topo_parent(d->tree, d->tree_self) : TOPO_NONE;
}

uint32_t tree_adopted_now(const struct bcsd *d, uint32_t *idx, uint32_t max)
{
	uint64_t now = now_mono_ms();
	uint32_t k, n = 0;

	for (k = 0; k < d->tree_rt.nr_adopted && n < max; k++)
		if (now <= d->tree_rt.adopted[k].until_ms)
			idx[n++] = d->tree_rt.adopted[k].idx;
	return n;
}

/* Is node @i (of the list) below this one: a child, or adopted? */
static bool is_below(const struct bcsd *d, uint32_t i)
{
	const uint32_t *child;
	uint64_t now = now_mono_ms();
	uint32_t n, k;

	n = topo_children(d->tree, d->tree_self, &child);
	for (k = 0; k < n; k++)
		if (child[k] == i)
			return true;
	for (k = 0; k < d->tree_rt.nr_adopted; k++)
		if (d->tree_rt.adopted[k].idx == i &&
		    now <= d->tree_rt.adopted[k].until_ms)
			return true;
	return false;
}

/* Node @sender asked for the strobe after the one it names. */
static void tree_on_strobe_nack(struct bcsd *d, uint32_t sender,
				uint32_t epoch,
				const struct bcsp_strobe_nack *n)
{
	const struct tree_strobe_kept *k = &d->tree_rt.kept;
	int idx;

	if (!tree_transport(d))
		return;
	d->cnt.strobe_nacks_rx++;
	idx = topo_index(d->nodes, sender);
	/* Only a later strobe of the same master helps. */
	if (idx < 0 || !is_below(d, (uint32_t)idx) || !k->len ||
	    k->master != n->master || k->epoch != epoch ||
	    k->slice <= n->slice)
		return;
	if (!send_node(d, (uint32_t)idx, k->buf, k->len))
		d->cnt.strobe_resent++;
}

/* The next request for a missed strobe at @ns (CLOCK_REALTIME); 0: none. */
static void repair_arm(struct bcsd *d, uint64_t ns)
{
	loop_timer_at(d->tree_rt.repair_fd, ns);
}

/*
 * Ask @from for the next strobe if it has not come when the master's
 * copies of it would have gone out on a group, less the first: at its
 * deadline less j times a strobe_copies-th of half the lead, for j from
 * strobe_copies - 1 down to 1 (one try, 7.5 ms before it, with the
 * defaults and a lead of 30 ms).  As late as that, a strobe delayed on
 * its way costs no request; and a try is left out if it would come
 * before the next strobe is due here, a slice after this one came: a
 * node whose strobes all come that late asks for none.
 */
static void tree_strobe_taken(struct bcsd *d, const struct bcsp_msg *m,
			      const struct sockaddr_in *from)
{
	struct tree_strobe_taken *t = &d->tree_rt.taken;
	uint64_t copies = (uint64_t)d->cfg.strobe_copies;
	uint64_t now = now_real_ns(), due;
	unsigned int j, armed = t->left;

	if (d->tree_rt.repair_fd < 0)
		return;
	t->left = 0;
	if ((m->strobe.flags & BCSP_STROBE_F_REPAIR) && copies >= 2) {
		t->master = m->hdr.sender;
		t->epoch = m->hdr.epoch;
		t->slice = m->strobe.slice;
		t->from = *from;
		t->next_deadline_ns = m->strobe.deadline_ns +
				      bcsp_plan_next(&m->strobe) *
				      m->strobe.slice_ns;
		t->gap_ns = (uint64_t)d->cfg.lead_us * 1000 / 2 / copies;
		for (j = (unsigned int)copies - 1; j; j--) {
			due = t->next_deadline_ns - j * t->gap_ns;
			if (due > now + bcsp_plan_next(&m->strobe) *
				  m->strobe.slice_ns) {
				t->left = j;
				t->due_ns = due;
				break;
			}
		}
	}
	if (t->left || armed)
		repair_arm(d, t->left ? t->due_ns : 0);
}

static void on_repair(struct bcsd *d, void *arg)
{
	struct tree_strobe_taken *t = &d->tree_rt.taken;
	struct bcsp_msg n = { .hdr = { .type = BCSP_STROBE_NACK } };

	(void)arg;
	loop_drain_timer(d->tree_rt.repair_fd);
	/* Came meanwhile (tree_strobe_taken() moved the timer on). */
	if (!t->left || d->followed.id != t->master ||
	    d->followed.epoch != t->epoch || d->followed.slice != t->slice)
		return;
	/* Past its deadline the strobe is of no use (bcs.ko predicted). */
	if (now_real_ns() >= t->next_deadline_ns) {
		t->left = 0;
		return;
	}
	t->left--;
	n.hdr.epoch = t->epoch;
	n.nack.master = t->master;
	n.nack.slice = t->slice;
	if (!net_send(d, &n, &t->from))
		d->cnt.strobe_nacks_tx++;
	if (t->left) {
		t->due_ns += t->gap_ns;
		repair_arm(d, t->due_ns);
	}
}

/* Is node @t in the subtree of node @i (list indices)? */
static bool in_subtree(const struct bcsd *d, uint32_t i, uint32_t t)
{
	uint32_t k;

	/* Bounded: no path is longer than the list. */
	for (k = 0; k <= d->nodes->nr && t != TOPO_NONE; k++) {
		if (t == i)
			return true;
		t = topo_parent(d->tree, t);
	}
	return false;
}

/*
 * Keep command @buf (of master @master, epoch @epoch, id @id) sent to
 * node @i until @i acknowledges it.  A full table gives up the slot to
 * be sent again soonest (counted as unacknowledged).
 */
static void unacked_add(struct bcsd *d, uint32_t i, const uint8_t *buf,
			size_t len, const struct bcsp_msg *m)
{
	struct tree_unacked *u = NULL, *e;
	uint32_t k;

	if (!d->cfg.tree_retries || len > sizeof(u->buf))
		return;
	for (k = 0; k < TREE_UNACKED_MAX; k++) {
		e = &d->tree_rt.unacked[k];
		if (!e->len) {
			u = e;
			break;
		}
		if (!u || e->next_ms < u->next_ms)
			u = e;
	}
	if (u->len)
		d->cnt.tree_unacked++;
	u->idx = i;
	u->master = m->hdr.sender;
	u->epoch = m->hdr.epoch;
	u->id = m->cmd.id;
	u->tries = 0;
	u->next_ms = now_mono_ms() + d->cfg.tree_ack_ms;
	u->len = (uint16_t)len;
	memcpy(u->buf, buf, len);
}

/*
 * Command datagram @buf, decoded as @m, down the tree: to the children
 * (and nodes that asked) whose subtrees hold tasks of its job, or have
 * not said (reduce.c's sums of tasks), or for an attach, whose subtrees
 * hold its node; each must acknowledge it (tree_on_ack()), or it is sent
 * again every tree_ack_ms, tree_retries times at most (tree_tick()).
 * Returns how many took it.
 */
static unsigned int tree_send_command(struct bcsd *d, const uint8_t *buf,
				      size_t len, const struct bcsp_msg *m)
{
	const uint32_t *child;
	uint64_t now = now_mono_ms();
	uint32_t n, i, to;
	unsigned int sent = 0;
	int target = -1;

	if (!d->tree)
		return 0;
	if (m->cmd.op == BCSP_CMD_ATTACH) {
		target = topo_index(d->nodes, m->cmd.node);
		if (target < 0)
			return 0;	/* not in the list: nobody below */
	}
	n = topo_children(d->tree, d->tree_self, &child);
	for (i = 0; i < n + d->tree_rt.nr_adopted; i++) {
		if (i < n) {
			to = child[i];
		} else {
			const struct tree_adopted *a =
				&d->tree_rt.adopted[i - n];

			if (now > a->until_ms)
				continue;
			to = a->idx;
		}
		/* A gather goes everywhere: files outlive their tasks. */
		if (target >= 0 ? !in_subtree(d, to, (uint32_t)target) :
		    m->cmd.op != BCSP_CMD_MPI_GATHER &&
		    m->cmd.op != BCSP_CMD_TGATHER &&
		    !holds(d, to, m->cmd.job)) {
			d->cnt.tree_pruned++;
			continue;
		}
		/* Kept even if this send failed: it goes again. */
		unacked_add(d, to, buf, len, m);
		if (!send_node(d, to, buf, len))
			sent++;
	}
	return sent;
}

/* Acknowledge command @m to @to, the daemon that passed it. */
static void tree_send_ack(struct bcsd *d, const struct bcsp_msg *m,
			  const struct sockaddr_in *to)
{
	struct bcsp_msg a = { .hdr = { .type = BCSP_ACK } };

	a.hdr.epoch = m->hdr.epoch;
	a.ack.master = m->hdr.sender;
	a.ack.id = m->cmd.id;
	if (!net_send(d, &a, to))
		d->cnt.tree_acks_tx++;
}

/* Node @sender acknowledged a command. */
static void tree_on_ack(struct bcsd *d, uint32_t sender, uint32_t epoch,
			const struct bcsp_ack *a)
{
	struct tree_unacked *u;
	int idx;
	uint32_t k;

	if (!d->tree)
		return;
	idx = topo_index(d->nodes, sender);
	if (idx < 0)
		return;
	for (k = 0; k < TREE_UNACKED_MAX; k++) {
		u = &d->tree_rt.unacked[k];
		if (u->len && u->idx == (uint32_t)idx &&
		    u->master == a->master && u->epoch == epoch &&
		    u->id == a->id) {
			u->len = 0;
			d->cnt.tree_acks_rx++;
		}
	}
}

/*
 * The commands not yet acknowledged: each again every tree_ack_ms, and
 * given up after tree_retries.
 */
static void resend_unacked(struct bcsd *d)
{
	uint64_t now = now_mono_ms();
	struct tree_unacked *u;
	uint32_t k;

	for (k = 0; k < TREE_UNACKED_MAX; k++) {
		u = &d->tree_rt.unacked[k];
		if (!u->len || now < u->next_ms)
			continue;
		if (u->tries >= d->cfg.tree_retries) {
			pr_info("tree: node %u did not acknowledge command %u of %u",
				d->nodes->node[u->idx].id, u->id, u->master);
			d->cnt.tree_unacked++;
			u->len = 0;
			continue;
		}
		u->tries++;
		u->next_ms = now + d->cfg.tree_ack_ms;
		d->cnt.tree_resent++;
		send_node(d, u->idx, u->buf, u->len);
	}
}

/* Is @from node @i's address? */
static bool is_node(const struct bcsd *d, uint32_t i,
		    const struct sockaddr_in *from)
{
	const struct sockaddr_in *a = &d->tree_addr[i];

	return a->sin_addr.s_addr == from->sin_addr.s_addr &&
	       a->sin_port == from->sin_port;
}

/*
 * A datagram of the master came from @from (the parent, if it is its
 * address).
 */
static void tree_heard(struct bcsd *d, const struct sockaddr_in *from)
{
	struct bcsd_tree_rt *t = &d->tree_rt;
	uint32_t p;

	if (!d->tree)
		return;
	p = topo_parent(d->tree, d->tree_self);
	if (p == TOPO_NONE || !is_node(d, p, from))
		return;
	t->parent_heard_ms = now_mono_ms();
	if (t->adopter != TOPO_NONE) {
		pr_notice("tree: parent %u passes on again; no longer asking %u",
			  d->nodes->node[p].id, d->nodes->node[t->adopter].id);
		t->adopter = TOPO_NONE;
	}
}

/*
 * Node @node asked to be passed the master's datagrams, its parent
 * @parent being silent.
 */
static void tree_adopt(struct bcsd *d, uint32_t node, uint32_t parent)
{
	struct bcsd_tree_rt *t = &d->tree_rt;
	uint64_t now = now_mono_ms(), oldest = UINT64_MAX;
	uint32_t i, slot = 0;
	int idx;

	if (!tree_transport(d))
		return;
	idx = topo_index(d->nodes, node);
	if (idx < 0 || (uint32_t)idx == d->tree_self)
		return;
	for (i = 0; i < t->nr_adopted; i++) {
		if (t->adopted[i].idx == (uint32_t)idx) {
			slot = i;
			goto found;
		}
		if (t->adopted[i].until_ms < oldest) {
			oldest = t->adopted[i].until_ms;
			slot = i;
		}
	}
	/* Full: the one that lapses first makes room. */
	if (t->nr_adopted < TREE_ADOPTED_MAX)
		slot = t->nr_adopted++;
	d->cnt.tree_adoptions++;
	pr_notice("tree: node %u asks to be passed the master's datagrams (its parent %u is silent)",
		  node, parent);
	t->adopted[slot].idx = (uint32_t)idx;
found:
	t->adopted[slot].until_ms = now + TREE_ADOPT_REPORTS *
					  (uint64_t)d->cfg.report_ms;
}

static void send_attach(struct bcsd *d, uint32_t parent)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_ATTACH } };
	struct bcsd_tree_rt *t = &d->tree_rt;

	m.hdr.epoch = d->followed.epoch;
	m.attach.parent = d->nodes->node[parent].id;
	net_send(d, &m, &d->tree_addr[t->adopter]);
	t->attach_sent_ms = now_mono_ms();
}

/*
 * The silence of a master after which a daemon no longer hears it: a
 * quarter of failover_slices (after the quiet of a plan), so that every
 * answer in the last half of a standby's silence that says so is one of a
 * master still heard.
 */
static uint64_t hear_ms(const struct bcsd *d)
{
	uint64_t ns = d->followed.slice_ns;
	uint64_t ms = d->cfg.failover_slices * ns / 1000000 / 4 +
		      followed_quiet_slices(&d->followed) * ns / 1000000;

	return ms ? ms : 1;
}

bool tree_hears_master(const struct bcsd *d)
{
	if (d->master.active)
		return true;
	return d->followed.known && d->followed.slice_ns &&
	       now_mono_ms() - d->followed.heard_ms <= hear_ms(d);
}

/*
 * A standby whose master has been silent for a quarter of failover_slices
 * probes every node of the list, again every eighth while the silence
 * lasts (or every housekeeping tick, if that is longer): at most one
 * datagram per node and round, and rounds enough in the half of the
 * silence whose answers count.
 */
static void quorum_probes(struct bcsd *d, uint64_t now)
{
	struct bcsd_tree_rt *t = &d->tree_rt;
	struct bcsp_msg m = { .hdr = { .type = BCSP_PROBE } };
	uint32_t i;

	if (!d->master_role || d->master.active || !t->q ||
	    now - d->followed.heard_ms <= hear_ms(d) ||
	    now - t->q_sent_ms < hear_ms(d) / 2)
		return;
	t->q_sent_ms = now;
	t->q_id = ((t->q_id + 1) & ~BCSP_PROBE_QUORUM) | BCSP_PROBE_QUORUM;
	for (i = 0; i < d->nodes->nr; i++) {
		if (i == d->tree_self)
			continue;
		memset(&m, 0, sizeof(m));
		m.hdr.type = BCSP_PROBE;
		m.hdr.epoch = d->followed.epoch;
		m.probe.id = t->q_id;
		m.probe.t1 = now_real_ns();
		if (!net_send(d, &m, &d->tree_addr[i]))
			d->cnt.quorum_probes_tx++;
	}
}

void tree_q_answer(struct bcsd *d, uint32_t node, uint32_t id, uint32_t flags)
{
	struct bcsd_tree_rt *t = &d->tree_rt;
	int i = d->nodes ? topo_index(d->nodes, node) : -1;

	/* This round's or the one before: one round trip late at most. */
	if (i < 0 || !t->q || (uint32_t)i == d->tree_self ||
	    (id != t->q_id && id != (((t->q_id - 1) & ~BCSP_PROBE_QUORUM) |
				     BCSP_PROBE_QUORUM))) {
		d->cnt.quorum_replies_dropped++;
		return;
	}
	d->cnt.quorum_replies++;
	t->q[i].ms = now_mono_ms();
	t->q[i].hears = flags & BCSP_PROBE_HEARS;
}

int tree_quorum(struct bcsd *d, uint64_t window_ms, uint32_t *answered,
		uint32_t *hearing, uint32_t *need)
{
	struct bcsd_tree_rt *t = &d->tree_rt;
	uint64_t now = now_mono_ms();
	uint32_t i, p, ask = TOPO_NONE;
	enum tq_verdict v;

	*answered = *hearing = 0;
	for (i = 0; t->q && i < d->nodes->nr; i++) {
		if (!t->q[i].ms || now - t->q[i].ms > window_ms)
			continue;
		(*answered)++;
		if (t->q[i].hears) {
			(*hearing)++;
			ask = i;
		}
	}
	v = tq_decide(d->nodes->nr, (uint32_t)d->cfg.quorum, *answered,
		      *hearing, need);
	/* Only this daemon's path broke: be passed on to by one that hears. */
	p = topo_parent(d->tree, d->tree_self);
	if (v == TQ_MASTER_HEARD && p != TOPO_NONE && ask != TOPO_NONE) {
		t->adopter = ask;
		t->asked_ms = now;
		pr_notice("tree: node %u hears the master: asking it",
			  d->nodes->node[ask].id);
		send_attach(d, p);
	}
	return v;
}

/*
 * The node after @from in the list, not this one; or none.  The silent
 * parent too, in its turn: it may be the new master, whose tree no longer
 * has this node as its child.
 */
static uint32_t next_any(const struct bcsd *d, uint32_t from)
{
	uint32_t i = from, k;

	for (k = 0; k < d->nodes->nr; k++) {
		i = (i + 1) % d->nodes->nr;
		if (i != d->tree_self)
			return i;
	}
	return TOPO_NONE;
}

/*
 * A node whose parent has passed nothing on for tree_reattach_slices asks
 * its grandparent to pass it the master's datagrams, and, while nothing
 * comes, one level further up every tree_reattach_slices; it asks again
 * every report period, and stops when its parent passes on again.  The
 * root has nobody to ask: a silent master is the standbys' business.
 */
static void tree_tick(struct bcsd *d, void *arg)
{
	struct bcsd_tree_rt *t = &d->tree_rt;
	uint64_t now = now_mono_ms(), wait_ms;
	uint32_t p, up;

	(void)arg;
	if (!tree_transport(d))
		return;
	resend_unacked(d);
	if (!d->followed.known || !d->followed.slice_ns)
		return;
	/* A parent passes plans on, quiet in between. */
	wait_ms = (d->cfg.tree_reattach_slices +
		   followed_quiet_slices(&d->followed)) *
		  d->followed.slice_ns / 1000000;
	quorum_probes(d, now);
	p = topo_parent(d->tree, d->tree_self);
	if (p == TOPO_NONE)
		return;
	if (now - t->parent_heard_ms <= wait_ms)
		return;
	if (t->adopter == TOPO_NONE) {
		up = topo_parent(d->tree, p);
		/*
		 * The parent is the root: once a standby may be about to take
		 * over (a quarter of the failover silence), ask the others.
		 */
		t->asking_any = up == TOPO_NONE;
		if (t->asking_any && now - d->followed.heard_ms > hear_ms(d))
			up = next_any(d, p);
		if (up == TOPO_NONE)
			return;
		t->adopter = up;
		t->asked_ms = now;
		pr_notice("tree: parent %u silent for %u slices: asking %u",
			  d->nodes->node[p].id, d->cfg.tree_reattach_slices,
			  d->nodes->node[up].id);
		send_attach(d, p);
		return;
	}
	/* The one asked passes nothing on either: one level up. */
	if (now - d->followed.heard_ms > wait_ms &&
	    now - t->asked_ms > wait_ms) {
		/*
		 * Past the root (which may be dead, and the new master
		 * unknown), once a standby may be about to take over (a
		 * quarter of the failover silence): every other node in turn, one each
		 * period, until one passes on the datagrams of a master,
		 * whose tree then gives this node its place.
		 */
		up = t->asking_any ? TOPO_NONE : topo_parent(d->tree, t->adopter);
		if (up == TOPO_NONE && now - d->followed.heard_ms > hear_ms(d)) {
			t->asking_any = true;
			up = next_any(d, t->adopter);
		}
		if (up != TOPO_NONE) {
			t->adopter = up;
			t->asked_ms = now;
			pr_notice("tree: asking %u", d->nodes->node[up].id);
			send_attach(d, p);
			return;
		}
	}
	if (now - t->attach_sent_ms >= d->cfg.report_ms)
		send_attach(d, p);
}

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

static struct json_object *tree_json(const struct bcsd *d)
{
	struct json_object *o, *a;
	const uint32_t *child;
	uint32_t p, n, i;

	if (!d->tree)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "transport", json_object_new_string(
		tree_transport(d) ? "tree" : "multicast"));
	add_u64(o, "nodes", d->nodes->nr);
	add_u64(o, "root", d->nodes->node[d->tree->root].id);
	p = topo_parent(d->tree, d->tree_self);
	/* null: this node is the root. */
	json_object_object_add(o, "parent", p == TOPO_NONE ? NULL :
			       json_object_new_int64(d->nodes->node[p].id));
	add_u64(o, "depth", topo_depth(d->tree, d->tree_self));
	add_u64(o, "subtree", topo_subtree(d->tree, d->tree_self));
	/* Of them, the nodes whose reports the last sum of tasks held. */
	json_object_object_add(o, "reporting", tree_transport(d) ?
			       json_object_new_int64(d->reduce.reporting) :
			       NULL);
	a = json_object_new_array();
	n = topo_children(d->tree, d->tree_self, &child);
	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int64(
			d->nodes->node[child[i]].id));
	json_object_object_add(o, "children", a);
	/* null: the parent passes on, or this is the root. */
	json_object_object_add(o, "asking", d->tree_rt.adopter == TOPO_NONE ?
			       NULL : json_object_new_int64(
				       d->nodes->node[d->tree_rt.adopter].id));
	a = json_object_new_array();
	for (i = 0; i < d->tree_rt.nr_adopted; i++)
		if (now_mono_ms() <= d->tree_rt.adopted[i].until_ms)
			json_object_array_add(a, json_object_new_int64(
				d->nodes->node[d->tree_rt.adopted[i].idx].id));
	json_object_object_add(o, "adopted", a);
	return o;
}

static bool tree_is_root(const struct bcsd *d)
{
	return d->tree && topo_parent(d->tree, d->tree_self) == TOPO_NONE;
}

/* The nodes the quorum needs down the tree: of the nodes file. */
static uint32_t tree_quorum_need(const struct bcsd *d)
{
	uint32_t need;

	tq_decide(d->nodes->nr, (uint32_t)d->cfg.quorum, 0, 0, &need);
	return need;
}

/*
 * A command of the master followed, taken once (rx.c): acknowledged to
 * the daemon that passed it, and passed on only into the subtrees with
 * the job's tasks (an attach: with its node), before the parts carry it
 * out.
 */
static void on_command(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	if (from->local || !tree_transport(d))
		return;
	tree_heard(d, from->sin);
	tree_send_ack(d, m, from->sin);
	if (tree_send_command(d, from->buf, from->len, m))
		d->cnt.tree_passed++;
}

/*
 * What the tree answers on the way and the parts never see: a child took
 * a command this daemon passed on; a node below missed a strobe (the last
 * passed down again); a node asks to be passed on to.
 */
static bool on_tree_msg(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from)
{
	if (from->local)
		return false;
	switch (m->hdr.type) {
	case BCSP_ACK:
		tree_on_ack(d, m->hdr.sender, m->hdr.epoch, &m->ack);
		break;
	case BCSP_STROBE_NACK:
		tree_on_strobe_nack(d, m->hdr.sender, m->hdr.epoch, &m->nack);
		break;
	case BCSP_ATTACH:
		tree_adopt(d, m->hdr.sender, m->attach.parent);
		break;
	default:
		return false;
	}
	return true;
}

static const struct net_transport tree_ops = {
	.on		= tree_transport,
	.port		= tree_port,
	.addr		= tree_addr,
	.reroot		= tree_reroot,
	.send_all	= tree_send_children,
	.send_command	= tree_send_command,
	.send_ack	= tree_send_ack,
	.heard		= tree_heard,
	.strobe_taken	= tree_strobe_taken,
	.is_root	= tree_is_root,
	.quorum		= tree_quorum_need,
};

/*
 * The tree's transport for the core (net.c, rx.c), its handlers, and its
 * place in the stats; the first registered, so that a command goes on
 * down before the parts carry it out, as it came.
 */
static void tree_register(struct bcsd *d)
{
	net_transport_register(d, &tree_ops);
	dispatch_register(d, BCSP_COMMAND, on_command);
	dispatch_claim(d, BCSP_ACK, on_tree_msg);
	dispatch_claim(d, BCSP_STROBE_NACK, on_tree_msg);
	dispatch_claim(d, BCSP_ATTACH, on_tree_msg);
	stats_register(d, "tree", tree_json);
}

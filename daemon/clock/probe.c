// SPDX-License-Identifier: GPL-2.0
/*
 * The clock offsets of the tree (Documentation/tree.rst, "Clock
 * offsets"), MRNet's clock skew detection.  With nodes_file, once per
 * report period every daemon with children in its current tree:
 *
 * - sends the master it follows its estimate of each child's offset
 *   (BCSP_OFFSETS, BCSP_MAX_OFFSETS children per datagram), made from
 *   the child's window of round trips (skew_window_estimate(): the one
 *   of minimum delay of the last BCSD_SKEW_PERIODS report periods,
 *   widened by SKEW_DRIFT_PPM_DEFAULT since), or hands them to this
 *   host's master part if it is the master;
 * - sends each child a probe (BCSP_PROBE, t1 its CLOCK_REALTIME), unicast
 *   to the child's address in the list.
 *
 * A daemon answers a probe from any node of the list, not only from its
 * parent: during a change of master two daemons may for a moment hang the
 * tree from different masters, and an answer costs one datagram; the
 * prober decides what to keep.  The answer goes to the prober's address
 * in the list, never to the datagram's source, with t2 read first thing
 * in the handler and t3 just before it is signed and sent.  A reply is
 * taken (t4 read first thing) only from a child of the current tree, and
 * only to the last probe sent to it (same id and t1), once.
 *
 * Neither datagram goes down the tree (rx.c).  A window is kept per node
 * of the list, so that the round trips to a node that is a child again
 * after a re-rooting still count while they are young enough.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bcsd.h"
#include "core/log.h"
#include "clock/probe.h"
#include "tree/topo.h"

static void fill_hdr(struct bcsd *d, struct bcsp_msg *m, enum bcsp_type type)
{
	m->hdr.type = type;
	m->hdr.epoch = d->followed.epoch;
	m->hdr.sender = d->node_id;
}

static void send_offsets(struct bcsd *d, struct bcsp_msg *m)
{
	fill_hdr(d, m, BCSP_OFFSETS);
	if (followed_is_self(d))
		dispatch(d, m, &(struct bcsd_origin){ .local = true });
	else if (!net_send(d, m, &d->followed.addr))
		d->cnt.offsets_tx++;
	m->offsets.nr = 0;
}

/* This node's children's estimates, to the master followed. */
static void probe_offsets(struct bcsd *d, const uint32_t *child, uint32_t n,
			  uint64_t now)
{
	struct skew_params p = {
		.max_age = (uint64_t)BCSD_SKEW_PERIODS * d->cfg.report_ms *
			   1000000,
		.drift_ppm = SKEW_DRIFT_PPM_DEFAULT,
	};
	struct bcsp_msg m = { .hdr = { .type = BCSP_OFFSETS } };
	struct bcsp_offset *o;
	struct skew_estimate e;
	uint32_t i;

	if (!d->followed.known)
		return;
	for (i = 0; i < n; i++) {
		if (m.offsets.nr == BCSP_MAX_OFFSETS)
			send_offsets(d, &m);
		o = &m.offsets.o[m.offsets.nr++];
		memset(o, 0, sizeof(*o));
		o->node = d->nodes->node[child[i]].id;
		o->bound = BCSP_BOUND_NONE;
		if (!skew_window_estimate(&d->probe.child[child[i]].w, now, &p,
					  &e, NULL) &&
		    e.bound != SKEW_BOUND_NONE) {
			o->offset = e.offset;
			o->bound = e.bound;
		}
	}
	if (m.offsets.nr)
		send_offsets(d, &m);
}

static void probe_tick(struct bcsd *d, void *arg)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_PROBE } };
	uint64_t now = now_mono_ms();
	struct bcsd_probe_child *c;
	const uint32_t *child;
	uint32_t n, i;

	(void)arg;
	if (now - d->probe.sent_ms < d->cfg.report_ms)
		return;
	d->probe.sent_ms = now;
	n = topo_children(d->tree, d->tree_self, &child);
	probe_offsets(d, child, n, now_real_ns());
	for (i = 0; i < n; i++) {
		c = &d->probe.child[child[i]];
		memset(&m.probe, 0, sizeof(m.probe));
		fill_hdr(d, &m, BCSP_PROBE);
		m.probe.id = ++d->probe.next_id & ~BCSP_PROBE_QUORUM;
		m.probe.t1 = now_real_ns();
		/* A reply to an earlier probe is too late now. */
		c->id = m.probe.id;
		c->t1 = m.probe.t1;
		if (!net_send(d, &m, &d->tree_addr[child[i]]))
			d->cnt.probes_tx++;
	}
}

/* A probe: answer it, to the prober's address in the list. */
static void on_probe(struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	uint64_t t2 = now_real_ns();
	struct bcsp_msg r = { .hdr = { .type = BCSP_PROBE_REPLY } };
	struct sockaddr_in to;

	if (from->local || m->hdr.sender == d->node_id ||
	    !tree_addr(d, m->hdr.sender, &to))
		return;
	fill_hdr(d, &r, BCSP_PROBE_REPLY);
	r.probe.id = m->probe.id;
	r.probe.t1 = m->probe.t1;
	r.probe.flags = tree_hears_master(d) ? BCSP_PROBE_HEARS : 0;
	r.probe.t2 = t2;
	r.probe.t3 = now_real_ns();
	if (!net_send(d, &r, &to))
		d->cnt.probes_answered++;
}

/* A reply: a round trip, if it is a child's to the last probe sent. */
static void on_probe_reply(struct bcsd *d, const struct bcsp_msg *m,
			   const struct bcsd_origin *from)
{
	struct skew_stamps ts = { .t4 = now_real_ns() };
	struct bcsd_probe_child *c;
	int i;

	/* A standby's quorum probe (tree.c): not a round trip to keep. */
	if (m->probe.id & BCSP_PROBE_QUORUM) {
		if (!from->local)
			tree_q_answer(d, m->hdr.sender, m->probe.id,
				      m->probe.flags);
		return;
	}
	i = topo_index(d->nodes, m->hdr.sender);
	if (from->local || i < 0 ||
	    topo_parent(d->tree, (uint32_t)i) != d->tree_self) {
		d->cnt.probe_replies_dropped++;
		return;
	}
	c = &d->probe.child[i];
	if (!c->t1 || m->probe.id != c->id || m->probe.t1 != c->t1) {
		d->cnt.probe_replies_dropped++;
		return;
	}
	c->t1 = 0;
	ts.t1 = m->probe.t1;
	ts.t2 = m->probe.t2;
	ts.t3 = m->probe.t3;
	if (skew_window_add(&c->w, &ts, d->probe.resolution_ns))
		d->cnt.probe_samples_refused++;
	else
		d->cnt.probe_replies++;
}

int probe_init(struct bcsd *d)
{
	struct bcsd_probe *p = &d->probe;
	struct timespec res;
	uint32_t i;

	memset(p, 0, sizeof(*p));
	if (!d->nodes)
		return 0;
	p->child = calloc(d->nodes->nr, sizeof(*p->child));
	if (!p->child) {
		pr_err("clock offsets: out of memory");
		return -1;
	}
	for (i = 0; i < d->nodes->nr; i++)
		skew_window_init(&p->child[i].w);
	/* How finely t1 .. t4 are read: part of every bound. */
	if (!clock_getres(CLOCK_REALTIME, &res))
		p->resolution_ns = (uint64_t)res.tv_sec * 1000000000 +
				   (uint64_t)res.tv_nsec;
	/* Ids differ from a restarted daemon's last probes. */
	p->next_id = (uint32_t)now_real_ns();
	p->sent_ms = now_mono_ms();
	dispatch_register(d, BCSP_PROBE, on_probe);
	dispatch_register(d, BCSP_PROBE_REPLY, on_probe_reply);
	return loop_on_tick(d, probe_tick, NULL);
}

void probe_exit(struct bcsd *d)
{
	free(d->probe.child);
	d->probe.child = NULL;
}

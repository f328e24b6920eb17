// SPDX-License-Identifier: GPL-2.0
/*
 * Datagram acceptance: each datagram the socket receives (net.c) is
 * decoded and checked (bcsp_decode(): cluster, MAC, format), then its
 * sender's replay window, then a strobe's deadline; our own, looped back,
 * are told from another daemon with our node id.  Strobes from a master
 * at least as senior as the one followed make it the one followed, and
 * a map from it is the map held (struct bcsd_followed); reports go into
 * the view.  Down a tree, what the master sends to every node goes on
 * to the children by the transport the tree registers (net.h).  Every
 * message type that passes goes to the parts through dispatch(), the
 * tree's handlers first; what fails is counted, and said at most every
 * RX_REJECT_LOG_MS.
 */
#include <arpa/inet.h>
#include <string.h>

#include "bcsd.h"
#include "core/log.h"

/*
 * The window of @sender, or a free one.  When the table is full, the
 * window of the sender heard from longest ago makes room if that was more
 * than WINDOW_EXPIRY_MS ago (nodes come and go over a daemon's life);
 * NULL if none is that old.
 */
#define WINDOW_EXPIRY_MS	60000

static struct bcsp_window *window_of(struct bcsd *d, uint32_t sender)
{
	uint64_t now = now_mono_ms();
	int i, free_slot = -1, oldest = -1;

	for (i = 0; i < BCSD_MAX_SENDERS; i++) {
		if (d->rx.windows[i].w.used && d->rx.windows[i].sender == sender)
			goto found;
		if (!d->rx.windows[i].w.used) {
			if (free_slot < 0)
				free_slot = i;
		} else if (oldest < 0 || d->rx.windows[i].heard_ms <
					 d->rx.windows[oldest].heard_ms) {
			oldest = i;
		}
	}
	if (free_slot < 0 && oldest >= 0 &&
	    now - d->rx.windows[oldest].heard_ms > WINDOW_EXPIRY_MS) {
		memset(&d->rx.windows[oldest].w, 0, sizeof(d->rx.windows[oldest].w));
		free_slot = oldest;
	}
	if (free_slot < 0)
		return NULL;
	i = free_slot;
	d->rx.windows[i].sender = sender;
found:
	d->rx.windows[i].heard_ms = now;
	return &d->rx.windows[i].w;
}

/*
 * A datagram that names this daemon as its sender: its own, looped back,
 * if it carries a sequence number it has sent.  Any other is a replay of
 * an earlier run, or comes from another daemon with the same node id,
 * which would break the cluster in ways hard to see: say so.
 */
static enum bcsp_verdict own_verdict(struct bcsd *d, const struct bcsp_msg *m,
				     const struct sockaddr_in *from)
{
	char addr[INET_ADDRSTRLEN] = "?";
	uint64_t now;

	if (m->hdr.seq >= d->net.seq_first && m->hdr.seq < d->net.seq)
		return BCSP_OK;
	now = now_mono_ms();
	if (m->hdr.seq >= d->net.seq &&
	    (!d->rx.dup_id_said_ms || now - d->rx.dup_id_said_ms > 60000)) {
		d->rx.dup_id_said_ms = now;
		inet_ntop(AF_INET, &from->sin_addr, addr, sizeof(addr));
		pr_err("another daemon at %s sends with this node id (%u): give every node its own node_id",
		       addr, d->node_id);
	}
	return BCSP_REPLAY;
}

/*
 * The oldest sequence number a sender heard for the first time (or in a
 * new epoch) may carry: our clock less seq_allowance_ms, which covers
 * the lag of senders' numbers behind their clocks (BCSP_SEQ_LAG_NS) and
 * the clocks' skew.
 */
static uint64_t seq_floor(const struct bcsd *d)
{
	uint64_t now = now_real_ns(), allow = d->cfg.seq_allowance_ms * 1000000ULL;

	return now > allow ? now - allow : 0;
}

/* From the master followed, of its epoch: a map or context to hold. */
static bool of_followed(const struct bcsd *d, const struct bcsp_msg *m)
{
	return d->followed.known && m->hdr.sender == d->followed.id &&
	       m->hdr.epoch == d->followed.epoch;
}

/*
 * Is map @m older than the one held, of the same master and epoch?
 */
static bool map_older(const struct bcsd *d, const struct bcsp_msg *m)
{
	return d->followed.have_map &&
	       d->followed.map_epoch == m->hdr.epoch &&
	       d->followed.map_master == m->hdr.sender &&
	       bcsp_map_older(m->map.version, d->followed.map.version);
}

/*
 * Part @m of a map: true when it completes the map of its (epoch,
 * master, version), whole in d->rx.map_asm.map then.  A part of another
 * map starts again; parts come in any order, each any number of times.
 */
static bool map_assemble(struct bcsd *d, const struct bcsp_msg *m)
{
	struct bcsd_map_asm *a = &d->rx.map_asm;
	uint32_t parts = bcsp_map_parts(m->map.nr_jobs), k;

	/* proto.c takes no more (BCSP_MAP_JOBS_MAX), and parts in place. */
	if (parts > BCSD_MAP_PARTS_MAX ||
	    m->map.first + m->map.nr > BCSP_MAP_JOBS_MAX)
		return false;
	if (!a->started || a->epoch != m->hdr.epoch ||
	    a->master != m->hdr.sender || a->version != m->map.version ||
	    a->map.nr_jobs != m->map.nr_jobs ||
	    a->map.apply_slice != m->map.apply_slice) {
		a->started = true;
		a->epoch = m->hdr.epoch;
		a->master = m->hdr.sender;
		a->version = m->map.version;
		memset(a->parts, 0, sizeof(a->parts));
		a->map.version = m->map.version;
		a->map.nr_jobs = m->map.nr_jobs;
		a->map.apply_slice = m->map.apply_slice;
	}
	memcpy(&a->map.jobs[m->map.first], m->map.jobs,
	       m->map.nr * sizeof(m->map.jobs[0]));
	k = m->map.first / BCSP_MAP_PART_JOBS;
	a->parts[k / 64] |= 1ULL << (k % 64);
	for (k = 0; k < parts; k++)
		if (!(a->parts[k / 64] & (1ULL << (k % 64))))
			return false;
	/* Taken: the next part, even of this map, starts again. */
	a->started = false;
	return true;
}

/*
 * Is @m from a master at least as senior as the one we follow?  Seniority
 * is (epoch, priority, sender id), compared in that order.
 */
static bool from_senior_master(const struct bcsd *d, const struct bcsp_msg *m)
{
	const struct bcsp_hdr *h = &m->hdr;

	if (!d->followed.known)
		return true;
	if (h->epoch != d->followed.epoch)
		return h->epoch > d->followed.epoch;
	if (h->priority != d->followed.priority)
		return h->priority > d->followed.priority;
	return h->sender >= d->followed.id;
}

/*
 * With strobe_transport = tree, a datagram of the master followed goes on
 * down the tree, as it came (the transport of tree.c).
 */
static void pass_down(struct bcsd *d, const uint8_t *buf, size_t len,
		      const struct bcsp_msg *m, const struct sockaddr_in *from)
{
	if (!net_tree(d))
		return;
	d->net.tree->heard(d, from);
	if (d->net.tree->send_all(d, buf, len, m) > 0)
		d->cnt.tree_passed++;
}

static void follow_master(struct bcsd *d, const struct bcsp_msg *m,
			  const struct sockaddr_in *from)
{
	if (!d->followed.known || d->followed.id != m->hdr.sender ||
	    d->followed.epoch != m->hdr.epoch) {
		if (d->followed.known)
			d->cnt.master_changes++;
		pr_notice("following master %u epoch %u", m->hdr.sender,
			  m->hdr.epoch);
	}
	d->followed.known = true;
	d->followed.id = m->hdr.sender;
	d->followed.epoch = m->hdr.epoch;
	d->followed.priority = m->hdr.priority;
	/* Down a tree, @from is the parent: the master is where the list says. */
	if (!net_tree(d) ||
	    !d->net.tree->addr(d, m->hdr.sender, &d->followed.addr))
		d->followed.addr = *from;
	if (d->net.tree)
		d->net.tree->reroot(d, m->hdr.sender);
	d->followed.heard_ms = now_mono_ms();
	if (m->hdr.epoch > d->followed.max_epoch_seen)
		d->followed.max_epoch_seen = m->hdr.epoch;
}

/*
 * Has this daemon taken command @id of the followed master's epoch
 * @epoch?  Only the last 64 ids are known (struct bcsp_window).
 */
static bool cmd_taken(const struct bcsd *d, uint32_t epoch, uint32_t id)
{
	const struct bcsp_window *w = &d->rx.cmds;

	return w->used && w->epoch == epoch && id <= w->top &&
	       w->top - id < 64 && (w->bits >> (w->top - id) & 1);
}

/*
 * A copy of a command this daemon has already taken, sent again by a
 * parent whose acknowledgement was lost (the same datagram, so the
 * replay window refused it): acknowledge it again.
 */
static void ack_copy(struct bcsd *d, const struct bcsp_msg *m,
		     const struct sockaddr_in *from)
{
	if (m->hdr.type == BCSP_COMMAND && net_tree(d) &&
	    of_followed(d, m) && cmd_taken(d, m->hdr.epoch, m->cmd.id))
		d->net.tree->send_ack(d, m, from);
}

/*
 * bcsd-sim's loss of chosen datagrams (sim/sim.c, for the tests of
 * retransmission); bcsd loses none.
 */
__attribute__((weak)) bool sim_rx_drop(const uint8_t *buf, size_t len)
{
	(void)buf;
	(void)len;
	return false;
}

void rx_datagram(struct bcsd *d, const uint8_t *buf, size_t len,
		 const struct sockaddr_in *from)
{
	struct bcsd_origin origin = { .local = false, .buf = buf, .len = len,
				      .sin = from };
	struct bcsp_window *w;
	enum bcsp_verdict v;
	unsigned int which;
	struct bcsp_msg m;
	bool own;

	if (sim_rx_drop(buf, len))
		return;
	d->cnt.rx++;
	v = bcsp_decode_keys(buf, len, d->cluster, d->key,
			     d->have_key2 ? d->key2 : NULL, &which, &m);
	if (v == BCSP_OK && which)
		d->cnt.rx_key2++;
	own = v == BCSP_OK && m.hdr.sender == d->node_id;
	if (own) {
		v = own_verdict(d, &m, from);
		if (v == BCSP_OK)
			d->cnt.rx_own++;
	}
	if (v == BCSP_OK && !own) {
		w = window_of(d, m.hdr.sender);
		v = w ? bcsp_seq_check(w, m.hdr.epoch, m.hdr.seq,
				       seq_floor(d)) : BCSP_STALE;
	}
	if (v == BCSP_OK && !own && m.hdr.type == BCSP_STROBE)
		v = bcsp_strobe_verdict(&m.strobe, now_real_ns(),
					d->cfg.stale_slices);
	if (v == BCSP_REPLAY && !own)
		ack_copy(d, &m, from);
	/*
	 * Down a tree a copy of the master's datagram that came another way
	 * first (from an ancestor asked meanwhile) still shows that the
	 * parent passes on again.
	 */
	if (v == BCSP_REPLAY && !own && net_tree(d) &&
	    d->followed.known && m.hdr.sender == d->followed.id &&
	    m.hdr.epoch == d->followed.epoch)
		d->net.tree->heard(d, from);
	if (v != BCSP_OK) {
		/* Said by say_rejected(): a flood costs no log line each. */
		d->cnt.rejected[v]++;
		d->rx.last_from = from->sin_addr;
		return;
	}
	if (m.hdr.epoch > d->followed.max_epoch_seen)
		d->followed.max_epoch_seen = m.hdr.epoch;

	switch (m.hdr.type) {
	case BCSP_STROBE:
		if (own)
			return;	/* our own strobe, looped back */
		if (!from_senior_master(d, &m)) {
			d->cnt.rejected[BCSP_STALE]++;
			return;
		}
		/*
		 * A copy of a strobe already followed (the master sends each
		 * strobe_copies times), or one overtaken by a later strobe:
		 * it keeps the master alive and changes nothing else.
		 */
		if (d->followed.known && d->followed.id == m.hdr.sender &&
		    d->followed.epoch == m.hdr.epoch &&
		    m.strobe.slice <= d->followed.slice) {
			d->followed.heard_ms = now_mono_ms();
			d->cnt.strobe_copies++;
			pass_down(d, buf, len, &m, from);
			return;
		}
		/* The master it replaces counts (master.c: outranks()). */
		origin.prev_known = d->followed.known;
		origin.prev_id = d->followed.id;
		origin.prev_epoch = d->followed.epoch;
		origin.prev_heard_ms = d->followed.heard_ms;
		follow_master(d, &m, from);
		d->followed.slice = m.strobe.slice;
		d->followed.slice_ns = m.strobe.slice_ns;
		d->followed.plan_len = bcsp_plan_len(&m.strobe);
		d->cnt.strobes_rx++;
		pass_down(d, buf, len, &m, from);
		/* The module first: a timer for the next can wait. */
		dispatch(d, &m, &origin);
		if (d->net.tree)
			d->net.tree->strobe_taken(d, &m, from);
		return;
	case BCSP_MAP:
		if (own || !of_followed(d, &m))
			return;
		/*
		 * An older map of the same master, late (a retransmission,
		 * or another path down the tree): applied, it would destroy
		 * the jobs made since, and their tasks would run on
		 * unscheduled.
		 */
		if (map_older(d, &m)) {
			d->cnt.maps_stale++;
			return;
		}
		pass_down(d, buf, len, &m, from);
		/*
		 * In parts: the parts go on down, the whole to the parts,
		 * which read it from d->followed.map (the message holds the
		 * last part only).
		 */
		if (!map_assemble(d, &m))
			return;
		followed_set_map(d, &d->rx.map_asm.map, m.hdr.epoch,
				 m.hdr.sender);
		break;
	case BCSP_CONTEXT:
		if (own || !of_followed(d, &m))
			return;
		d->followed.ctx = m.ctx;
		d->followed.ctx_epoch = m.hdr.epoch;
		d->followed.ctx_master = m.hdr.sender;
		d->followed.have_ctx = true;
		pass_down(d, buf, len, &m, from);
		break;
	case BCSP_REPORT:
		if (own)
			return;	/* looped back; node.c took it */
		view_on_report(d, m.hdr.sender, &m.report, now_mono_ms());
		break;
	case BCSP_SWITCHES:
		/* Up a tree, added up on the way (reduce.c takes them). */
	case BCSP_REQUEST:
	case BCSP_RESULT:
	case BCSP_MPI_PART:
	case BCSP_TG_PART:
	case BCSP_TG_NACK:
	case BCSP_PROBE:
	case BCSP_PROBE_REPLY:
	case BCSP_OFFSETS:
		/* Unicast, never down the tree (probe.c). */
		if (own)
			return;	/* never sent to ourselves */
		break;
	case BCSP_COMMAND:
		if (own || !of_followed(d, &m))
			return;
		/*
		 * Each command once, whatever the copies (the master's, or a
		 * parent's again) and their order.
		 */
		if (bcsp_window_check(&d->rx.cmds, m.hdr.epoch, m.cmd.id) !=
		    BCSP_OK) {
			d->cnt.command_copies++;
			if (net_tree(d))
				d->net.tree->send_ack(d, &m, from);
			return;
		}
		/*
		 * Down a tree: acknowledged to the daemon that passed it, and
		 * passed on only into the subtrees with the job's tasks (an
		 * attach: with its node), by the tree's handler, the first.
		 */
		break;
	case BCSP_ACK:
		/* A child took a command this daemon passed on (tree.c). */
	case BCSP_STROBE_NACK:
		/* A node below missed a strobe: the last passed down again. */
	case BCSP_TASKS:
		/* A child's subtree's tasks, added up on the way (reduce.c). */
	case BCSP_NODE_TASKS:
		/* The same per node, concatenated on the way (reduce.c). */
	case BCSP_ATTACH:
		/* Not a part's business: the tree passes on to it. */
		if (own)
			return;
		break;
	case BCSP_REPLY:
		/*
		 * To the group: the node that asked takes it, and standbys
		 * keep it for retries after a take-over.
		 */
		if (own || !d->followed.known || m.hdr.sender != d->followed.id)
			return;
		pass_down(d, buf, len, &m, from);
		break;
	default:
		return;
	}
	dispatch(d, &m, &origin);
}

/*
 * Say what was rejected since it was last said, at most every
 * RX_REJECT_LOG_MS: a sender of forged datagrams shows in the log, and
 * a flood of them costs one line, not one each.
 */
#define RX_REJECT_LOG_MS	10000

static void say_rejected(struct bcsd *d, void *arg)
{
	char what[256], addr[INET_ADDRSTRLEN] = "?";
	uint64_t now = now_mono_ms(), n, total = 0;
	size_t off = 0;
	int i;

	(void)arg;
	if (d->rx.said_ms &&
	    now - d->rx.said_ms < RX_REJECT_LOG_MS)
		return;
	what[0] = '\0';
	for (i = 1; i < __BCSP_VERDICT_MAX; i++) {
		n = d->cnt.rejected[i] - d->rx.said[i];
		d->rx.said[i] = d->cnt.rejected[i];
		if (!n)
			continue;
		total += n;
		if (off < sizeof(what))
			off += (size_t)snprintf(what + off, sizeof(what) - off,
						"%s%s %llu", off ? ", " : "",
						bcsp_verdict_name(i),
						(unsigned long long)n);
	}
	if (!total)
		return;
	inet_ntop(AF_INET, &d->rx.last_from, addr, sizeof(addr));
	pr_notice("rejected %llu datagram(s) (%s), the last from %s",
		  (unsigned long long)total, what, addr);
	d->rx.said_ms = now;
}

int rx_init(struct bcsd *d)
{
	net_receiver_register(d, rx_datagram);
	return loop_on_tick(d, say_rejected, NULL);
}

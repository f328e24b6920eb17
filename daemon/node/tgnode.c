// SPDX-License-Identifier: GPL-2.0
/*
 * This daemon's part in gathers reduced in the tree: see tgnode.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libbcs/bcs.h"
#include "libbcsmpi/mpifile.h"
#include "bcsd.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/net.h"
#include "node/mpidir.h"
#include "node/tgnode.h"
#include "tree/topo.h"
#include "tree/tree.h"

_Static_assert(BCSP_TG_PART_MAX == TG_PART_MAX &&
	       BCSP_TG_SIZE_MAX >= TG_BLOB_MAX,
	       "a tree answer's parts as the wire carries them");

/*
 * Histogram @off of record @p of file @st (0: none) into @a as @kind:
 * what a bound leaves out is counted in @a->dropped by tg_add_hist(), a
 * histogram it refuses here.
 */
static void own_hist(struct tg_answer *a, const struct bcs_mpi_stats *st,
		     uint64_t off, enum tg_kind kind, const char *name)
{
	struct bcs_hist_header *h;
	int r;

	if (!off)
		return;
	r = bcs_mpi_stats_hist(st, off, &h);
	if (r) {
		a->dropped++;
		return;
	}
	r = tg_add_hist(a, kind, name, h, (const void *)(h + 1));
	if (r && r != -ENOSPC)
		a->dropped++;
	free(h);
}

/*
 * This node's own answer to a gather of @job: each of its statistics
 * files read back into records of its rank, and their histograms: files
 * read whole within TGNODE_READ_MAX bytes in all, the others summarised
 * (no histograms: counted in @dropped, the answer then not exact).
 */
static void own_answer(struct bcsd *d, uint32_t job, struct tg_answer *a)
{
	struct mpidir_summary *sums;
	unsigned int skipped = 0;
	size_t budget = TGNODE_READ_MAX;
	struct bcs_mpi_stats st;
	char err[256];
	uint32_t k;
	int n, i;

	tg_init(a, job);
	a->nodes = 1;
	if (!*d->cfg.mpi_dir)
		return;
	sums = calloc(BCSP_MPI_FILES_MAX, sizeof(*sums));
	if (!sums) {
		pr_warn("job %u: MPI statistics left out of the tree's answer: %s",
			job, strerror(ENOMEM));
		a->dropped++;
		return;
	}
	n = mpidir_read(d->cfg.mpi_dir, job, sums, BCSP_MPI_FILES_MAX,
			BCSP_MPI_FILE_MAX, &budget, &skipped);
	d->cnt.mpi_gather_skipped += skipped;
	for (i = 0; i < n; i++) {
		/* Taken by the parser, freed on error too. */
		if (bcs_mpi_stats_parse(sums[i].data, sums[i].len,
					sums[i].whole ? "file" : "summary",
					&st, err, sizeof(err))) {
			pr_info("job %u: %s", job, err);
			a->dropped++;
			continue;
		}
		a->ranks++;
		if (!sums[i].whole)
			a->dropped++;	/* its histograms */
		for (k = 0; k < st.hdr->nr_prims; k++) {
			const struct bcs_mpi_prim *p = &st.prims[k];
			char name[TG_NAME_LEN];

			memcpy(name, p->name, sizeof(name) - 1);
			name[sizeof(name) - 1] = 0;
			if (!name[0] || (!p->calls && !p->timed))
				continue;
			/* -ENOSPC is counted in @dropped. */
			if (tg_add_prim(a, st.hdr->rank < 0 ? 0 : st.hdr->rank,
					name, p->flags, p->calls, p->timed,
					p->timed ? p->min_ns : 0,
					p->timed ? p->max_ns : 0, p->bytes,
					bcs_mpi_prim_time(p)) == -EINVAL)
				a->dropped++;
			own_hist(a, &st, p->lat_hist_off, TG_HIST_LAT, name);
			own_hist(a, &st, p->size_hist_off, TG_HIST_SIZE, name);
		}
		bcs_mpi_stats_free(&st);
	}
	free(sums);
}

/*
 * bcs.ko's metrics by the names libbcs's bcs_dist_metric_name() gives
 * them (bcsstat dist matches them), here so that bcsd-sim's stand-in of
 * libbcs's device object need not define it.
 */
static const char *const dist_name[BCS_DIST_METRICS] = {
	[BCS_DIST_BURST] = "burst", [BCS_DIST_BLOCKED] = "blocked",
	[BCS_DIST_SUSPENDED] = "suspended", [BCS_DIST_WAIT] = "wait",
};

/*
 * The distributions bcs.ko keeps of job @job's tasks on this node
 * (BCS_IOC_DIST_READ), per metric, into @a as TG_HIST_DIST histograms
 * named by metric: for bcsstat dist --job.  At most TGNODE_TASKS_MAX
 * tasks (the rest counted in @dropped).
 */
static void own_dists(struct bcsd *d, uint32_t job, struct tg_answer *a)
{
	struct bcs_hist_header *h;
	uint32_t m, tasks = 0;
	pid_t pid = 0, next;
	int r;

	if (!d->bcs)
		return;
	while (!bcs_dist_next(d->bcs, job, pid, &next) && next > pid) {
		pid = next;
		if (tasks++ == TGNODE_TASKS_MAX) {
			a->dropped++;
			break;
		}
		for (m = 0; m < BCS_DIST_METRICS; m++) {
			h = NULL;
			if (bcs_dist_hist(d->bcs, job, pid, m, &h, NULL) || !h)
				continue;
			r = tg_add_hist(a, TG_HIST_DIST, dist_name[m], h,
					(const void *)(h + 1));
			if (r && r != -ENOSPC)
				a->dropped++;
			free(h);
		}
	}
}

/* To node @to: itself (the root that asked), or its address in the list. */
static void send_up(struct bcsd *d, uint32_t to, struct bcsp_msg *m)
{
	struct sockaddr_in sin;

	m->hdr.epoch = d->followed.epoch;
	if (to == d->node_id) {
		m->hdr.sender = d->node_id;
		dispatch(d, m, &(struct bcsd_origin){ .local = true });
	} else if (tree_addr(d, to, &sin)) {
		net_send(d, m, &sin);
	}
}

/* Parts of @len bytes at @buf, those in @want (NULL: all), to @to. */
static uint32_t send_parts(struct bcsd *d, struct bcsp_msg *m, uint32_t to,
			   const uint8_t *buf, const uint64_t *want)
{
	uint32_t off, k, sent = 0;

	for (off = 0; off < m->tg.size; off += BCSP_TG_PART_MAX) {
		k = off / BCSP_TG_PART_MAX;
		if (want && !(want[k / 64] & 1ULL << (k % 64)))
			continue;
		m->tg.offset = off;
		m->tg.len = m->tg.size - off < BCSP_TG_PART_MAX ?
			    m->tg.size - off : BCSP_TG_PART_MAX;
		memcpy(m->tg.data, buf + off, m->tg.len);
		send_up(d, to, m);
		sent++;
	}
	return sent;
}

static void kept_free(struct tgnode_kept *k)
{
	free(k->buf);
	memset(k, 0, sizeof(*k));
}

/*
 * The answer @buf (malloc'd, @len bytes) of slot @s, sent to @to with
 * @flags, kept for asks again (taken: freed here or later): in a free
 * place, or the one that goes first.
 */
static void keep(struct bcsd *d, const struct tgnode_slot *s, uint32_t to,
		 uint32_t flags, uint8_t *buf, uint32_t len)
{
	struct tgnode_kept *k = &d->tgnode.kept[0];
	uint8_t *b;
	unsigned int i;

	for (i = 1; i < TGNODE_SLOTS && k->buf; i++)
		if (!d->tgnode.kept[i].buf ||
		    d->tgnode.kept[i].until_ms < k->until_ms)
			k = &d->tgnode.kept[i];
	kept_free(k);
	/* TG_BLOB_MAX allocated; most answers are far shorter. */
	b = realloc(buf, len);
	k->buf = b ? b : buf;
	k->asker = s->asker;
	k->req = s->req;
	k->job = s->job;
	k->to = to;
	k->flags = flags;
	k->size = len;
	k->until_ms = s->g.until_ms + TGNODE_KEEP_MS;
}

/* Slot @s's answer up, in parts, and the slot free again. */
static void answer(struct bcsd *d, struct tgnode_slot *s)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_TG_PART } };
	const struct tg_answer *a;
	uint32_t parent, to, i;
	uint8_t *buf;
	long len;

	for (i = 0; i < s->g.nr_kids; i++)
		d->cnt.tg_missing += !s->g.kids[i].done &&
				     !s->g.kids[i].adopted;
	/* The ancestor it asked while its parent is silent, or the parent. */
	parent = tree_up(d);
	a = tg_gather_finish(&s->g);
	/*
	 * At the root, every node of the tree that did not answer is
	 * missing, however the levels below counted those that answered
	 * an adopter off their path (one that was no ancestor).
	 */
	if (parent == TOPO_NONE && d->tree && s->g.acc.nodes <= d->tree->nr)
		s->g.acc.missing = d->tree->nr - s->g.acc.nodes;
	buf = malloc(TG_BLOB_MAX);
	len = buf ? tg_encode(a, buf, TG_BLOB_MAX) : -ENOMEM;
	if (len <= 0) {
		pr_warn("job %u: the tree's answer not sent: %s", s->job,
			strerror(len ? (int)-len : EINVAL));
		goto out;
	}
	to = parent == TOPO_NONE ? s->asker : d->nodes->node[parent].id;
	m.tg.req = s->req;
	m.tg.node = s->asker;
	m.tg.job = s->job;
	m.tg.flags = parent == TOPO_NONE ? BCSP_TG_F_FINAL : 0;
	m.tg.size = (uint32_t)len;
	send_parts(d, &m, to, buf, NULL);
	d->cnt.tg_answers_tx++;
	pr_debug("job %u: the tree's answer of %u nodes (%u missing) to node %u",
		 s->job, a->nodes, a->missing, to);
	/* Handed on locally (this root asked), nothing to lose. */
	if (to != d->node_id) {
		keep(d, s, to, m.tg.flags, buf, m.tg.size);
		buf = NULL;
	}
out:
	free(buf);
	tg_gather_free(&s->g);
	s->used = false;
}

static void check(struct bcsd *d, struct tgnode_slot *s, uint64_t now)
{
	if (s->used && tg_gather_done(&s->g, now))
		answer(d, s);
}

static void tgnode_tick(struct bcsd *d, void *arg)
{
	uint64_t now = now_mono_ms();
	struct tgnode_slot *s;
	unsigned int i;

	(void)arg;
	for (i = 0; i < TGNODE_SLOTS; i++) {
		s = &d->tgnode.slot[i];
		check(d, s, now);
		/* Lost parts of the children's answers asked for again. */
		if (s->used)
			tree_tg_ask(d, &s->g, s->req, s->asker, s->job, now);
		if (d->tgnode.kept[i].buf && now >= d->tgnode.kept[i].until_ms)
			kept_free(&d->tgnode.kept[i]);
	}
}

/*
 * BCSP_CMD_TGATHER: the tree (tree.c) passed it on to every child; this
 * daemon waits for their answers and its own, then answers up.
 */
static void on_command(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	const struct bcsp_command *c = &m->cmd;
	uint32_t *idx = NULL, *sub = NULL, nr = 0, i, height;
	uint32_t adopted[TREE_ADOPTED_MAX];
	struct tgnode_slot *s = NULL;
	const uint32_t *child;
	uint64_t now = now_mono_ms();
	struct tg_answer own;
	int err;

	if (c->op != BCSP_CMD_TGATHER ||
	    bcsp_window_check(&d->tgnode.cmds, m->hdr.epoch, c->id) != BCSP_OK)
		return;
	for (i = 0; i < TGNODE_SLOTS; i++)
		if (!d->tgnode.slot[i].used) {
			s = &d->tgnode.slot[i];
			break;
		}
	if (!s) {
		/* The oldest answers now, with what it has. */
		s = &d->tgnode.slot[0];
		for (i = 1; i < TGNODE_SLOTS; i++)
			if (d->tgnode.slot[i].started_ms < s->started_ms)
				s = &d->tgnode.slot[i];
		answer(d, s);
	}
	if (d->tree) {
		nr = topo_children(d->tree, d->tree_self, &child);
		idx = calloc(nr ? nr : 1, sizeof(*idx));
		sub = calloc(nr ? nr : 1, sizeof(*sub));
		if (!idx || !sub) {
			free(idx);
			free(sub);
			return;
		}
		for (i = 0; i < nr; i++) {
			idx[i] = child[i];
			sub[i] = topo_subtree(d->tree, child[i]);
		}
	}
	height = d->tree ? topo_height(d->tree) : 0;
	/* Less the time the command took to come (the master's: none). */
	err = tg_gather_start(&s->g, c->job, nr, idx, sub,
			      now + tg_wait_late_ms(d->tree ?
					topo_depth(d->tree, d->tree_self) : 0,
					height, TG_STEP_MS, from->local ? 0 :
					tg_late_ms(m->hdr.seq, now_real_ns())));
	free(idx);
	free(sub);
	/* And the nodes below a silent parent that asked this one. */
	for (i = 0, nr = d->tree && !err ?
			 tree_adopted_now(d, adopted, TREE_ADOPTED_MAX) : 0;
	     i < nr && !err; i++) {
		err = tg_gather_adopt(&s->g, adopted[i],
				      topo_subtree(d->tree, adopted[i]));
		if (err == -EEXIST)
			err = 0;
	}
	if (err) {
		tg_gather_free(&s->g);
		return;
	}
	s->used = true;
	s->asker = c->node;
	s->req = c->arg;
	s->job = c->job;
	s->started_ms = now;
	d->cnt.tg_gathers++;
	own_answer(d, c->job, &own);
	own_dists(d, c->job, &own);
	if (tg_gather_own(&s->g, &own))
		s->g.acc.dropped++;
	tg_free(&own);
	check(d, s, now);
}

/* A part of a child's answer (the asker's, BCSP_TG_F_FINAL: ctl.c). */
static void on_part(struct bcsd *d, const struct bcsp_msg *m,
		    const struct bcsd_origin *from)
{
	const struct bcsp_tg_part *p = &m->tg;
	struct tgnode_slot *s;
	unsigned int i;
	int idx, r;

	(void)from;
	if (p->flags & BCSP_TG_F_FINAL)
		return;
	idx = topo_index(d->nodes, m->hdr.sender);
	for (i = 0; i < TGNODE_SLOTS; i++) {
		s = &d->tgnode.slot[i];
		if (!s->used || s->asker != p->node || s->req != p->req ||
		    s->job != p->job)
			continue;
		r = idx < 0 ? -ENOENT :
		    tg_gather_part(&s->g, (uint32_t)idx, p->size, p->offset,
				   p->len, p->data, now_mono_ms());
		if (r < 0) {
			d->cnt.tg_parts_refused++;
			pr_info("job %u: a part of node %u's tree answer refused: %s",
				p->job, m->hdr.sender, strerror(-r));
		} else {
			d->cnt.tg_parts_rx++;
		}
		check(d, s, now_mono_ms());
		return;
	}
	d->cnt.tg_parts_refused++;
}

/*
 * Parts of an answer this daemon sent, asked for again by the node it
 * sent it to: those it names, once per ask, at most TGNODE_NACKS_MAX
 * asks.  Anybody else, an answer no longer kept, a size not the
 * answer's: refused, and nothing sent (an ask is no way to make a
 * daemon send more than it would have).
 */
static void on_nack(struct bcsd *d, const struct bcsp_msg *m,
		    const struct bcsd_origin *from)
{
	const struct bcsp_tg_nack *n = &m->tg_nack;
	struct bcsp_msg p = { .hdr = { .type = BCSP_TG_PART } };
	struct tgnode_kept *k = NULL;
	unsigned int i;

	(void)from;
	d->cnt.tg_nacks_rx++;
	for (i = 0; i < TGNODE_SLOTS && !k; i++) {
		k = &d->tgnode.kept[i];
		if (!k->buf || k->asker != n->node || k->req != n->req ||
		    k->job != n->job)
			k = NULL;
	}
	if (!k || k->to != m->hdr.sender || k->nacks >= TGNODE_NACKS_MAX ||
	    (!(n->flags & BCSP_TG_NACK_F_ALL) && n->size != k->size)) {
		d->cnt.tg_nacks_refused++;
		pr_debug("job %u: node %u's ask for parts of the tree's answer refused",
			 n->job, m->hdr.sender);
		return;
	}
	k->nacks++;
	p.tg.req = k->req;
	p.tg.node = k->asker;
	p.tg.job = k->job;
	p.tg.flags = k->flags;
	p.tg.size = k->size;
	d->cnt.tg_parts_resent +=
		send_parts(d, &p, k->to, k->buf,
			   n->flags & BCSP_TG_NACK_F_ALL ? NULL : n->parts);
}

int tgnode_init(struct bcsd *d)
{
	memset(&d->tgnode, 0, sizeof(d->tgnode));
	dispatch_register(d, BCSP_COMMAND, on_command);
	dispatch_register(d, BCSP_TG_PART, on_part);
	dispatch_register(d, BCSP_TG_NACK, on_nack);
	return loop_on_tick(d, tgnode_tick, NULL);
}

void tgnode_exit(struct bcsd *d)
{
	unsigned int i;

	for (i = 0; i < TGNODE_SLOTS; i++) {
		if (d->tgnode.slot[i].used)
			tg_gather_free(&d->tgnode.slot[i].g);
		kept_free(&d->tgnode.kept[i]);
	}
	memset(&d->tgnode, 0, sizeof(d->tgnode));
}

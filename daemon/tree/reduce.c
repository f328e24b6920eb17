// SPDX-License-Identifier: GPL-2.0
/*
 * Reductions up the tree of daemons (Documentation/tree.rst): with
 * strobe_transport = tree, the switch summaries of a subtree (struct
 * bcsp_switch_sum, BCSP_SWITCHES) are added up on their way to the
 * master, per slice, at every daemon that has children, so that the
 * master gets a summary per slice from each of its children rather than
 * one from every node.  The fields combine by sum, max and min
 * (bcsp_switch_sum_add()), in any order and grouping, so a partial sum
 * sent up early and the rest sent later add up to the same at the master.
 *
 * When a slice's sum goes up is the synchronisation mode (tree_sync, as
 * MRNet's): "all" waits until every node of the subtree has said (its
 * size; bounded by REDUCE_ALL_REPORTS report periods, for a node that is
 * gone), "timeout" until then or tree_sync_ms after the first summary of
 * the slice came, "none" sends each summary on as it comes.  A summary
 * that comes after its slice went up goes up on its own.  The master,
 * the root, hands what it gets to its global records at once.
 *
 * The nodes' reports of their tasks per job are added up the same way,
 * as state rather than events: every daemon keeps its own last report
 * and each child's last sum (BCSP_TASKS), and once per report period
 * sends their total up; the root hands it to its master part, which
 * builds the map's counts of nodes and tasks from it.  A child's sum
 * that is REDUCE_TASKS_REPORTS periods old is left out: its subtree has
 * gone.
 *
 * The same reports go up per node as well, concatenated rather than
 * added up (BCSP_NODE_TASKS, filter.c's bounded list): every daemon
 * merges its own pairs of (job, node) and tasks with its children's
 * lists, keeps the BCSP_MAX_NODE_TASKS smallest pairs and counts the
 * rest, and sends that up with the sums.  What it made last is the
 * per-node view of its subtree (d->reduce.nodes; on the root, of the
 * cluster), which the job list shows.
 *
 * It is built on filter.c's pieces: the waves for the slices' sums (a
 * slot per slice; a slice is complete when it counts every node of the
 * subtree, not every child, since a child may send a slice in two
 * parts), the bounded list for the tasks per node, the saturating sum
 * for the sums of tasks.  The switch summaries themselves add up by
 * their own rule (bcsp_switch_sum_add(): 16-bit counts and two row
 * classes on the wire; Documentation/filters.rst, "What bcsd uses").
 */
#include <stdlib.h>
#include <string.h>

#include "bcsd.h"
#include "proto/codec.h"
#include "tree/filter.h"
#include "core/log.h"
#include "tree/topo.h"

/* "all": a subtree's slice goes up at the latest after so many reports. */
#define REDUCE_ALL_REPORTS	10

static struct bcsp_msg *out_msg(struct bcsd *d)
{
	return &d->reduce.out;
}

/* Where the sums go: the parent, or the ancestor asked in its stead. */
static void send_out(struct bcsd *d)
{
	struct bcsp_msg *m = out_msg(d);
	uint32_t to;

	if (!m->sw.nr)
		return;
	m->hdr.type = BCSP_SWITCHES;
	m->hdr.epoch = d->reduce.epoch;
	to = d->tree_rt.adopter != TOPO_NONE ? d->tree_rt.adopter :
	     topo_parent(d->tree, d->tree_self);
	if (to != TOPO_NONE && !net_send(d, m, &d->tree_addr[to]))
		d->cnt.reduce_up++;
	m->sw.nr = 0;
}

static void emit(struct bcsd *d, const struct bcsp_switch_sum *s)
{
	struct bcsp_msg *m = out_msg(d);

	if (m->sw.nr == BCSP_MAX_SWITCHES)
		send_out(d);
	m->sw.s[m->sw.nr++] = *s;
}

static void flush_slot(struct bcsd *d, struct bcsd_reduce_slot *sl,
		       bool complete)
{
	emit(d, &sl->sw);
	filter_wave_end(&sl->w);
	if (!complete)
		d->cnt.reduce_partial++;
}

static bool is_root(const struct bcsd *d)
{
	return topo_parent(d->tree, d->tree_self) == TOPO_NONE;
}

void reduce_add(struct bcsd *d, uint32_t epoch, const struct bcsp_switches *sw)
{
	struct bcsd_reduce *r = &d->reduce;
	uint32_t expect, i;
	uint64_t now;

	/* The root: straight to the global records, which add up anyway. */
	if (is_root(d)) {
		struct bcsp_msg m = { .hdr = { .type = BCSP_SWITCHES,
					       .epoch = epoch,
					       .sender = d->node_id } };

		m.sw = *sw;
		dispatch(d, &m, &(struct bcsd_origin){ .local = true });
		return;
	}
	/* Sums of another master's slices are of no use to this one. */
	if (epoch != r->epoch) {
		send_out(d);
		memset(r->slot, 0, sizeof(r->slot));
		r->epoch = epoch;
	}
	now = now_mono_ms();
	expect = topo_subtree(d->tree, d->tree_self);
	for (i = 0; i < sw->nr; i++) {
		const struct bcsp_switch_sum *s = &sw->s[i];
		struct bcsd_reduce_slot *sl = &r->slot[s->slice % REDUCE_SLICES];

		d->cnt.reduce_in++;
		if (d->cfg.tree_sync == CFG_SYNC_NONE) {
			emit(d, s);
			continue;
		}
		switch (filter_wave_step(&sl->w, s->slice)) {
		case FILTER_WAVE_OTHER:
			/* Another slice in its place: it goes up as it is. */
			flush_slot(d, sl, false);
			break;
		case FILTER_WAVE_SAME:
			if (bcsp_switch_sum_add(&sl->sw, s))
				goto added;
			/* Full (16-bit counts): up with it, and start again. */
			flush_slot(d, sl, false);
			break;
		case FILTER_WAVE_NEW:
			break;
		}
		sl->sw = *s;
		filter_wave_start(&sl->w, s->slice, now);
added:
		if (filter_wave_complete(sl->sw.nodes, expect))
			flush_slot(d, sl, true);
	}
	send_out(d);
}

void reduce_report(struct bcsd *d, const struct bcsp_report *rep)
{
	struct reduce_tasks *e;
	uint32_t i;

	if (!d->reduce.tasks)
		return;
	e = &d->reduce.tasks[d->tree_self];
	memset(&e->t, 0, sizeof(e->t));
	e->t.nodes = 1;
	e->t.nr_jobs = rep->nr_jobs;
	for (i = 0; i < rep->nr_jobs && i < BCSP_MAX_JOBS; i++) {
		e->t.jobs[i].job = rep->jobs[i].job;
		e->t.jobs[i].nodes = rep->jobs[i].tasks ? 1 : 0;
		e->t.jobs[i].tasks = rep->jobs[i].tasks;
		e->t.jobs[i].birth = rep->jobs[i].birth;
	}
	e->seen_ms = now_mono_ms();
	if (!e->nt)
		return;
	/* Its pairs, in the lists' order (jobs are once in a report). */
	e->nt->nr = 0;
	e->nt->more = 0;
	for (i = 0; i < rep->nr_jobs && i < BCSP_MAX_JOBS; i++) {
		if (!rep->jobs[i].tasks)
			continue;
		e->nt->e[e->nt->nr++] = (struct bcsp_node_task){
			.job = rep->jobs[i].job, .node = d->node_id,
			.tasks = rep->jobs[i].tasks };
	}
	qsort(e->nt->e, e->nt->nr, sizeof(e->nt->e[0]), bcsp_node_task_cmp);
	e->nt_seen_ms = e->seen_ms;
}

void reduce_node_tasks(struct bcsd *d, uint32_t node,
		       const struct bcsp_node_tasks *nt)
{
	struct reduce_tasks *e;
	int i;

	if (!d->reduce.tasks)
		return;
	i = topo_index(d->nodes, node);
	if (i < 0 || (uint32_t)i == d->tree_self)
		return;
	e = &d->reduce.tasks[i];
	if (!e->nt) {
		/* Only children and nodes that asked send: a few. */
		e->nt = malloc(sizeof(*e->nt));
		if (!e->nt)
			return;
	}
	*e->nt = *nt;
	e->nt_seen_ms = now_mono_ms();
	d->cnt.node_tasks_in++;
}

/*
 * A pair heard along two paths (a node that asked an ancestor while its
 * parent still passed on its older list): once, with the larger count.
 */
static void nodes_dedup(struct bcsp_node_tasks *nt)
{
	uint32_t i, k = 0;

	for (i = 0; i < nt->nr; i++) {
		if (k && !bcsp_node_task_cmp(&nt->e[k - 1], &nt->e[i])) {
			if (nt->e[i].tasks > nt->e[k - 1].tasks)
				nt->e[k - 1].tasks = nt->e[i].tasks;
			continue;
		}
		nt->e[k++] = nt->e[i];
	}
	nt->nr = k;
}

/*
 * The per-node lists of this node and its children, none older than
 * @old ms at @now, concatenated into d->reduce.nodes.
 */
static void nodes_concat(struct bcsd *d, uint64_t now, uint64_t old)
{
	struct bcsp_node_tasks *out = &d->reduce.nodes;
	struct filter_list acc, in;
	uint32_t i;

	filter_list_init(&acc, out->e, BCSP_MAX_NODE_TASKS, sizeof(out->e[0]),
			 bcsp_node_task_cmp);
	for (i = 0; i < d->nodes->nr; i++) {
		const struct reduce_tasks *e = &d->reduce.tasks[i];

		if (!e->nt || !e->nt_seen_ms || now - e->nt_seen_ms > old)
			continue;
		/* A child's list as it came: sorted, bounded, with its rest. */
		filter_list_init(&in, e->nt->e, e->nt->nr, sizeof(e->nt->e[0]),
				 bcsp_node_task_cmp);
		in.nr = e->nt->nr < BCSP_MAX_NODE_TASKS ? e->nt->nr :
							   BCSP_MAX_NODE_TASKS;
		in.overflow = e->nt->more;
		filter_list_merge(&acc, &in);
		out->nr = acc.nr;
		nodes_dedup(out);
		acc.nr = out->nr;
	}
	out->nr = acc.nr;
	out->reserved = 0;
	out->more = acc.overflow;
	d->reduce.nodes_ms = now;
}

void reduce_tasks(struct bcsd *d, uint32_t node, const struct bcsp_tasks *t)
{
	int i;

	if (!d->reduce.tasks)
		return;
	i = topo_index(d->nodes, node);
	if (i < 0 || (uint32_t)i == d->tree_self)
		return;
	d->reduce.tasks[i].t = *t;
	d->reduce.tasks[i].seen_ms = now_mono_ms();
	d->cnt.tasks_in++;
}

/*
 * *@acc += @v by filter.c's saturating sum, stopping at 2^32 - 1: a sum
 * of many large counts (or a child's nonsense) stays the largest count,
 * not a small one.
 */
static void sum_u32(uint32_t *acc, uint32_t v)
{
	uint64_t x = *acc;

	filter_sum_u64(&x, v);
	*acc = x > UINT32_MAX ? UINT32_MAX : (uint32_t)x;
}

/* @t's jobs into @sum; false if @sum has no room for one of them. */
static bool tasks_add(struct bcsp_tasks *sum, const struct bcsp_tasks *t)
{
	bool room = true;
	uint32_t i, k;

	sum_u32(&sum->nodes, t->nodes);
	for (i = 0; i < t->nr_jobs && i < BCSP_MAX_JOBS; i++) {
		for (k = 0; k < sum->nr_jobs; k++)
			if (sum->jobs[k].job == t->jobs[i].job)
				break;
		if (k == sum->nr_jobs) {
			if (k == BCSP_MAX_JOBS) {
				room = false;
				continue;
			}
			sum->jobs[k] = t->jobs[i];
			sum->nr_jobs++;
			continue;
		}
		sum_u32(&sum->jobs[k].nodes, t->jobs[i].nodes);
		sum_u32(&sum->jobs[k].tasks, t->jobs[i].tasks);
		if (!sum->jobs[k].birth)
			sum->jobs[k].birth = t->jobs[i].birth;
	}
	return room;
}

/* Once per report period: the subtree's tasks, up or to the master. */
static void send_tasks(struct bcsd *d, uint64_t now)
{
	uint64_t old = REDUCE_TASKS_REPORTS * (uint64_t)d->cfg.report_ms;
	struct bcsp_msg m = { .hdr = { .type = BCSP_TASKS } };
	uint32_t i, to;

	if (!d->followed.known)
		return;
	for (i = 0; i < d->nodes->nr; i++) {
		const struct reduce_tasks *e = &d->reduce.tasks[i];

		if (!e->seen_ms || now - e->seen_ms > old)
			continue;
		if (!tasks_add(&m.tasks, &e->t))
			d->cnt.tasks_jobs_dropped++;
	}
	d->reduce.reporting = m.tasks.nodes;
	m.hdr.epoch = d->followed.epoch;
	m.hdr.sender = d->node_id;
	to = d->tree_rt.adopter != TOPO_NONE ? d->tree_rt.adopter :
	     topo_parent(d->tree, d->tree_self);
	if (to == TOPO_NONE)
		dispatch(d, &m, &(struct bcsd_origin){ .local = true });
	else if (!net_send(d, &m, &d->tree_addr[to]))
		d->cnt.tasks_up++;
	/* The same per node, kept here and sent up after them. */
	nodes_concat(d, now, old);
	if (to == TOPO_NONE)
		return;
	m.hdr.type = BCSP_NODE_TASKS;
	m.node_tasks = d->reduce.nodes;
	if (!net_send(d, &m, &d->tree_addr[to]))
		d->cnt.node_tasks_up++;
}

static void reduce_tick(struct bcsd *d, void *arg)
{
	struct bcsd_reduce *r = &d->reduce;
	uint64_t now = now_mono_ms(), wait;
	uint32_t i;

	(void)arg;
	if (!tree_transport(d))
		return;
	wait = d->cfg.tree_sync == CFG_SYNC_TIMEOUT ? d->cfg.tree_sync_ms :
	       REDUCE_ALL_REPORTS * (uint64_t)d->cfg.report_ms;
	for (i = 0; i < REDUCE_SLICES; i++)
		if (filter_wave_due(&r->slot[i].w, now, wait))
			flush_slot(d, &r->slot[i], false);
	send_out(d);
	if (now - r->tasks_sent_ms >= d->cfg.report_ms) {
		r->tasks_sent_ms = now;
		send_tasks(d, now);
	}
}

/*
 * From the network, what children send up: with strobe_transport tree,
 * switch summaries added up on the way (without, they are the master's),
 * a subtree's tasks added up, and the same per node, concatenated.  The
 * tasks are the tree's only: the root hands its sums over, local.
 */
static bool on_child(struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	if (from->local)
		return false;
	switch (m->hdr.type) {
	case BCSP_SWITCHES:
		if (!tree_transport(d))
			return false;
		reduce_add(d, m->hdr.epoch, &m->sw);
		break;
	case BCSP_TASKS:
		if (tree_transport(d))
			reduce_tasks(d, m->hdr.sender, &m->tasks);
		break;
	case BCSP_NODE_TASKS:
		if (tree_transport(d))
			reduce_node_tasks(d, m->hdr.sender, &m->node_tasks);
		break;
	default:
		return false;
	}
	return true;
}

int reduce_init(struct bcsd *d)
{
	memset(&d->reduce, 0, sizeof(d->reduce));
	dispatch_claim(d, BCSP_SWITCHES, on_child);
	dispatch_claim(d, BCSP_TASKS, on_child);
	dispatch_claim(d, BCSP_NODE_TASKS, on_child);
	if (!tree_transport(d))
		return 0;
	d->reduce.tasks = calloc(d->nodes->nr, sizeof(*d->reduce.tasks));
	if (!d->reduce.tasks ||
	    !(d->reduce.tasks[d->tree_self].nt =
	      calloc(1, sizeof(struct bcsp_node_tasks)))) {
		pr_err("reductions: out of memory");
		return -1;
	}
	return loop_on_tick(d, reduce_tick, NULL);
}

void reduce_exit(struct bcsd *d)
{
	uint32_t i;

	for (i = 0; d->reduce.tasks && i < d->nodes->nr; i++)
		free(d->reduce.tasks[i].nt);
	free(d->reduce.tasks);
	d->reduce.tasks = NULL;
}

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
 */
#include <string.h>

#include "bcsd.h"
#include "topo.h"

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
	sl->used = false;
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
		/* Another slice in its place: it goes up as it is. */
		if (sl->used && sl->sw.slice != s->slice)
			flush_slot(d, sl, false);
		if (!sl->used) {
			sl->sw = *s;
			sl->first_ms = now;
			sl->used = true;
		} else if (!bcsp_switch_sum_add(&sl->sw, s)) {
			flush_slot(d, sl, false);
			sl->sw = *s;
			sl->first_ms = now;
			sl->used = true;
		}
		if (sl->sw.nodes >= expect)
			flush_slot(d, sl, true);
	}
	send_out(d);
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
		if (r->slot[i].used && now - r->slot[i].first_ms >= wait)
			flush_slot(d, &r->slot[i], false);
	send_out(d);
}

int reduce_init(struct bcsd *d)
{
	memset(&d->reduce, 0, sizeof(d->reduce));
	if (!tree_transport(d))
		return 0;
	return loop_on_tick(d, reduce_tick, NULL);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The active master's record of the clock offsets (Documentation/tree.rst,
 * "Clock offsets"): every daemon with children in the tree estimates each
 * child's offset from its own clock (probe.c) and sends the estimates to
 * the master it follows (BCSP_OFFSETS); the master part hands them here
 * (offsets_add()).  Per node of the list the latest is kept, with the
 * node that sent it, the node's parent when it was made.
 *
 * offsets_compose() hangs them on the master's current tree: a link is
 * used only if its sender is the node's parent in that tree and it is at
 * most BCSD_SKEW_PERIODS report periods old, widened by the drift over
 * its age (the age on the master's clock, from when it came: the time
 * it took to come is the sender's estimate's own age, not counted, a few
 * ms at 100 ppm, well within a bound of a round trip); skew_tree() then
 * composes every node's offset from the master, with a bound.
 *
 * offsets_check() warns, at most once a minute per node, about a node
 * whose |offset| + bound is beyond skew_warn_permille thousandths of the
 * slice (skew_warnings counts the warnings).  offsets_json() shows it all.
 */
#include <errno.h>

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "bcsd.h"
#include "core/log.h"
#include "tree/topo.h"

#define OFFSETS_WARN_MS		60000	/* one warning per node so often */

void offsets_add(struct bcsd *d, uint32_t sender,
		 const struct bcsp_offsets *o, uint64_t now_ns)
{
	struct bcsd_offset_link *l;
	uint32_t i;
	int idx;

	if (!d->nodes)
		return;
	for (i = 0; i < o->nr && i < BCSP_MAX_OFFSETS; i++) {
		idx = topo_index(d->nodes, o->o[i].node);
		if (idx < 0) {
			d->cnt.offsets_unknown++;
			continue;
		}
		l = &d->offsets.link[idx];
		l->known = true;
		l->parent = sender;
		l->est.offset = o->o[i].offset;
		l->est.bound = o->o[i].bound;
		l->at_ns = now_ns;
		d->cnt.offsets_rx++;
	}
}

/* The link of node @i to its parent @parent (an index), at @now_ns. */
static struct skew_estimate link_of(const struct bcsd *d, uint32_t i,
				    uint32_t parent, uint64_t now_ns)
{
	const struct bcsd_offset_link *l = &d->offsets.link[i];
	struct skew_estimate e = { 0, SKEW_BOUND_NONE };
	uint64_t max_age = (uint64_t)BCSD_SKEW_PERIODS * d->cfg.report_ms *
			   1000000;

	/* Not known, from another parent, too old, or from the future. */
	if (!l->known || parent == TOPO_NONE ||
	    l->parent != d->nodes->node[parent].id || l->at_ns > now_ns ||
	    now_ns - l->at_ns > max_age)
		return e;
	e = l->est;
	if (skew_widen(&e, now_ns - l->at_ns, SKEW_DRIFT_PPM_DEFAULT))
		return (struct skew_estimate){ 0, SKEW_BOUND_NONE };
	return e;
}

int offsets_compose(const struct bcsd *d, uint64_t now_ns,
		    struct skew_estimate *out)
{
	static uint32_t parent[BCSD_MAX_NODES];
	static struct skew_estimate link[BCSD_MAX_NODES];
	uint32_t i, nr;

	if (!d->nodes || !d->tree)
		return -ENOENT;
	nr = d->nodes->nr;
	for (i = 0; i < nr; i++) {
		parent[i] = topo_parent(d->tree, i);
		link[i] = link_of(d, i, parent[i], now_ns);
		if (parent[i] == TOPO_NONE)
			parent[i] = SKEW_NONE;
	}
	return skew_tree(nr, parent, link, out);
}

void offsets_check(struct bcsd *d, uint64_t now_ns, uint64_t now_ms)
{
	static struct skew_estimate e[BCSD_MAX_NODES];
	struct bcsd_offset_link *l;
	uint32_t i;

	if (!d->cfg.skew_warn_permille || offsets_compose(d, now_ns, e) < 0)
		return;
	for (i = 0; i < d->nodes->nr; i++) {
		l = &d->offsets.link[i];
		if (skew_exceeds(&e[i], d->slice_ns,
				 d->cfg.skew_warn_permille) != 1)
			continue;
		if (l->warned_ms && now_ms - l->warned_ms < OFFSETS_WARN_MS)
			continue;
		l->warned_ms = now_ms;
		d->cnt.skew_warnings++;
		pr_warn("node %u: clock %lld us from the master's, +- %llu us: beyond %u/1000 of the %llu us slice",
			d->nodes->node[i].id,
			(long long)(e[i].offset / 1000),
			(unsigned long long)((e[i].bound + 999) / 1000),
			d->cfg.skew_warn_permille,
			(unsigned long long)(d->slice_ns / 1000));
	}
}

static void add_i64(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

struct json_object *offsets_json(const struct bcsd *d, uint64_t now_ns)
{
	static struct skew_estimate e[BCSD_MAX_NODES];
	const struct bcsd_offset_link *l;
	struct json_object *a, *o;
	uint32_t i, p;
	bool known;

	if (offsets_compose(d, now_ns, e) < 0)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < d->nodes->nr; i++) {
		l = &d->offsets.link[i];
		p = topo_parent(d->tree, i);
		known = e[i].bound != SKEW_BOUND_NONE;
		o = json_object_new_object();
		add_i64(o, "node", d->nodes->node[i].id);
		/* null: the root, the master. */
		json_object_object_add(o, "parent", p == TOPO_NONE ? NULL :
			json_object_new_int64(d->nodes->node[p].id));
		add_i64(o, "depth", topo_depth(d->tree, i));
		/* null: not known. */
		json_object_object_add(o, "offset_ns", known ?
			json_object_new_int64(e[i].offset) : NULL);
		json_object_object_add(o, "bound_ns", known ?
			json_object_new_int64((int64_t)e[i].bound) : NULL);
		/* The age of its link's estimate; null: none, or the root. */
		json_object_object_add(o, "age_ms",
			p != TOPO_NONE && l->known && l->at_ns <= now_ns ?
			json_object_new_int64((int64_t)((now_ns - l->at_ns) /
							1000000)) : NULL);
		json_object_array_add(a, o);
	}
	return a;
}

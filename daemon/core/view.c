// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster view: what every node last reported of its jobs' tasks.
 *
 * Nodes multicast their reports, so every bcsd (not only the master, which
 * places jobs with them) knows how many tasks of each job run on which
 * node, and `bcsctl job list` shows the same per-node view on any node.
 * A node that has not reported for VIEW_STALE_REPORTS report periods has
 * gone (or lost its bcsd) and drops out of the view.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>

#include "bcsd.h"

#define VIEW_STALE_REPORTS	3

void view_on_report(struct bcsd *d, uint32_t node,
		    const struct bcsp_report *r, uint64_t now_ms)
{
	struct bcsd_peer *p, *oldest = NULL;
	uint32_t i;

	for (i = 0; i < d->view.nr_peers; i++) {
		p = &d->view.peers[i];
		if (p->node == node)
			goto found;
		if (!oldest || p->seen_ms < oldest->seen_ms)
			oldest = p;
	}
	/* Full: the node heard from longest ago makes room. */
	p = d->view.nr_peers < BCSD_MAX_SENDERS ?
	    &d->view.peers[d->view.nr_peers++] : oldest;
	p->node = node;
found:
	p->seen_ms = now_ms;
	p->report = *r;
}

static bool view_fresh(const struct bcsd *d, const struct bcsd_peer *p,
		       uint64_t now_ms)
{
	return now_ms - p->seen_ms <=
	       VIEW_STALE_REPORTS * d->cfg.report_ms;
}

static uint32_t fresh_peers(const struct bcsd *d, uint64_t now_ms)
{
	uint32_t i, n = 0;

	for (i = 0; i < d->view.nr_peers; i++)
		n += view_fresh(d, &d->view.peers[i], now_ms);
	return n;
}

/*
 * Does this daemon hear enough of the cluster to take over as master?
 * Enough is the quorum option, or more than half of the nodes heard since
 * the daemon started (it never forgets one, so a standby cut off the
 * network for however long still knows it is in the minority).  A
 * standby that has heard no report at all has nothing to count, and may.
 */
bool view_quorum(const struct bcsd *d, uint64_t now_ms, uint32_t *fresh,
		 uint32_t *need)
{
	*fresh = fresh_peers(d, now_ms);
	*need = (uint32_t)d->cfg.quorum;
	if (!*need)
		*need = d->view.nr_peers / 2 + 1;
	return !d->view.nr_peers || *fresh >= *need;
}

uint32_t view_live_nodes(const struct bcsd *d, uint64_t now_ms)
{
	if (!net_tree(d))
		return fresh_peers(d, now_ms);
	/*
	 * Down a tree a node hears its children only; the root, the
	 * master, counts the nodes in its last sum of reports (reduce.c).
	 */
	return d->net.tree->is_root(d) ? d->reduce.reporting : 0;
}

/*
 * Down a tree, nodes hear only their children: the per-node view is the
 * concatenation of the subtree's reports (reduce.c), the cluster's on the
 * root, while it is fresh.
 */
static bool view_from_tree(const struct bcsd *d, uint64_t now_ms)
{
	return net_tree(d) && d->reduce.nodes_ms &&
	       now_ms - d->reduce.nodes_ms <=
	       REDUCE_TASKS_REPORTS * (uint64_t)d->cfg.report_ms;
}

static int by_job_node(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return (x[0] > y[0]) - (x[0] < y[0]);
	return (x[1] > y[1]) - (x[1] < y[1]);
}

int view_pairs_build(const struct bcsd *d, uint64_t now_ms,
		     struct view_pairs *vp)
{
	const struct bcsd_peer *p;
	size_t max = 0, n = 0;
	uint32_t i, k;

	vp->e = NULL;
	vp->n = 0;
	if (view_from_tree(d, now_ms))
		max += d->reduce.nodes.nr;
	if (!net_tree(d))
		max += (size_t)d->view.nr_peers * BCSP_MAX_JOBS;
	if (!max)
		return 0;
	vp->e = malloc(max * sizeof(vp->e[0]));
	if (!vp->e)
		return -ENOMEM;
	for (i = 0; view_from_tree(d, now_ms) && i < d->reduce.nodes.nr; i++) {
		vp->e[n][0] = d->reduce.nodes.e[i].job;
		vp->e[n][1] = d->reduce.nodes.e[i].node;
		vp->e[n++][2] = d->reduce.nodes.e[i].tasks;
	}
	for (i = 0; !net_tree(d) && i < d->view.nr_peers; i++) {
		p = &d->view.peers[i];
		if (!view_fresh(d, p, now_ms))
			continue;
		for (k = 0; k < p->report.nr_jobs && k < BCSP_MAX_JOBS; k++) {
			if (!p->report.jobs[k].tasks)
				continue;
			vp->e[n][0] = p->report.jobs[k].job;
			vp->e[n][1] = p->node;
			vp->e[n++][2] = p->report.jobs[k].tasks;
		}
	}
	qsort(vp->e, n, sizeof(vp->e[0]), by_job_node);
	vp->n = n;
	return 0;
}

void view_pairs_free(struct view_pairs *vp)
{
	free(vp->e);
	vp->e = NULL;
	vp->n = 0;
}

struct json_object *view_pairs_job(const struct view_pairs *vp, uint32_t job)
{
	struct json_object *arr = json_object_new_array(), *o;
	size_t lo = 0, hi = vp->n, mid;

	if (!arr)
		return NULL;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (vp->e[mid][0] < job)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* In order of nodes, as sorted. */
	for (; lo < vp->n && vp->e[lo][0] == job; lo++) {
		o = json_object_new_object();
		if (!o)
			break;
		json_object_object_add(o, "node",
				       json_object_new_int64(vp->e[lo][1]));
		json_object_object_add(o, "tasks",
				       json_object_new_int64(vp->e[lo][2]));
		json_object_array_add(arr, o);
	}
	return arr;
}

struct json_object *view_nodes_json(const struct bcsd *d, uint64_t now_ms)
{
	struct json_object *o = json_object_new_object();
	bool tree = net_tree(d);

	if (!o)
		return NULL;
	/*
	 * Whose tasks per_node shows: every node's reports (multicast), the
	 * subtree's or, on the root, the cluster's concatenation (a tree).
	 */
	json_object_object_add(o, "of", json_object_new_string(
		!tree ? "reports" :
		d->net.tree->is_root(d) ? "cluster" :
		"subtree"));
	/* Pairs (job, node) left out of a tree's bounded lists. */
	json_object_object_add(o, "more", json_object_new_int64(
		tree && view_from_tree(d, now_ms) ?
		(int64_t)(d->reduce.nodes.more > INT64_MAX ? INT64_MAX :
			  d->reduce.nodes.more) : 0));
	return o;
}

uint32_t view_local_index(const struct bcsd *d, uint32_t job)
{
	uint32_t lo = 0, hi = d->local.nr_jobs, mid;

	/* node.c keeps them in order of ids. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (d->local.jobs[mid] < job)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is @job one of this node's kernel jobs (struct bcsd_local)?  Its index. */
bool view_local_job(const struct bcsd *d, uint32_t job, uint32_t *idx)
{
	uint32_t lo = view_local_index(d, job);

	if (lo == d->local.nr_jobs || d->local.jobs[lo] != job)
		return false;
	if (idx)
		*idx = lo;
	return true;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Reductions up the tree (reduce.c), against stand-ins for the rest of
 * bcsd: a tree of 7 nodes, fan-out 2 (1; 2 3; 4 5 6 7), seen from node 2,
 * whose subtree is 2, 4 and 5; what it sends up, and when, in each
 * synchronisation mode.
 */
#include <string.h>

#include "bcsd.h"
#include "tree/topo.h"
#include "tests/unit.h"

static struct bcsd d;
static struct topo_list nodes;
static struct topo_tree tree;
static struct sockaddr_in addrs[7];
static uint64_t clock_ms = 1000;
static loop_fn *ticker;

/* What went up, summed over datagrams, and where to. */
static struct bcsp_switch_sum up[64];
static unsigned int nr_up, nr_sent, nr_local;
static struct sockaddr_in last_to;
static struct bcsp_tasks last_tasks;
static unsigned int nr_tasks_msgs;
static struct bcsp_node_tasks last_nodes;
static unsigned int nr_nodes_msgs;

uint64_t now_mono_ms(void)
{
	return clock_ms;
}

int loop_on_tick(struct bcsd *dd, loop_fn *fn, void *arg)
{
	(void)dd;
	(void)arg;
	ticker = fn;
	return 0;
}

bool tree_transport(const struct bcsd *dd)
{
	return dd->tree != NULL;
}

int net_send(struct bcsd *dd, struct bcsp_msg *m, const struct sockaddr_in *to)
{
	uint32_t i;

	(void)dd;
	last_to = *to;
	if (m->hdr.type == BCSP_TASKS) {
		last_tasks = m->tasks;
		nr_tasks_msgs++;
		return 0;
	}
	if (m->hdr.type == BCSP_NODE_TASKS) {
		last_nodes = m->node_tasks;
		nr_nodes_msgs++;
		return 0;
	}
	nr_sent++;
	for (i = 0; i < m->sw.nr && nr_up < 64; i++)
		up[nr_up++] = m->sw.s[i];
	return 0;
}

void dispatch_claim(struct bcsd *dd, enum bcsp_type type,
		    dispatch_claim_fn *fn)
{
	(void)dd;
	(void)type;
	(void)fn;
}

void dispatch(struct bcsd *dd, const struct bcsp_msg *m,
	      const struct bcsd_origin *from)
{
	uint32_t i;

	(void)dd;
	(void)from;
	if (m->hdr.type == BCSP_TASKS) {
		last_tasks = m->tasks;
		nr_tasks_msgs++;
		return;
	}
	nr_local++;
	for (i = 0; i < m->sw.nr && nr_up < 64; i++)
		up[nr_up++] = m->sw.s[i];
}

static struct bcsp_switches one(uint64_t slice, int64_t end, uint16_t nodes)
{
	struct bcsp_switches sw = { .nr = 1 };

	sw.s[0] = (struct bcsp_switch_sum){ .slice = slice, .nodes = nodes,
					    .end_max_ns = end,
					    .end_min_ns = end };
	return sw;
}

static void reset(enum cfg_sync mode)
{
	d.cfg.tree_sync = mode;
	struct reduce_tasks *keep = d.reduce.tasks;

	nr_up = nr_sent = nr_local = 0;
	memset(&d.reduce, 0, sizeof(d.reduce));
	d.reduce.tasks = keep;
}

static bool pair_is(const struct bcsp_node_task *e, uint32_t job,
		    uint32_t node, uint32_t tasks)
{
	return e->job == job && e->node == node && e->tasks == tasks;
}

/*
 * Tasks per node: node 2's own pairs and its children's lists go up
 * concatenated (filter.c's bounded list), sorted by job and node, each
 * pair once, the smallest BCSP_MAX_NODE_TASKS kept and the rest counted;
 * what went up is also what node 2 shows of its subtree.
 */
static void test_node_tasks(void)
{
	struct bcsp_report rep = { .nr_jobs = 2 };
	struct bcsp_node_tasks n4 = { .nr = 1 }, n5 = { .nr = 2, .more = 2 };
	const struct bcsp_node_tasks *kept = &d.reduce.nodes;
	uint64_t in0 = d.cnt.node_tasks_in, up0 = d.cnt.node_tasks_up;
	uint32_t i;

	d.tree_self = 1;
	d.node_id = 2;
	d.followed.known = true;
	rep.jobs[0].job = 7;
	rep.jobs[0].tasks = 2;
	rep.jobs[1].job = 8;		/* no tasks here: no pair */
	n4.e[0] = (struct bcsp_node_task){ 7, 4, 3 };
	n5.e[0] = (struct bcsp_node_task){ 7, 5, 1 };
	n5.e[1] = (struct bcsp_node_task){ 9, 5, 1 };
	clock_ms += 5000;
	reduce_report(&d, &rep);
	reduce_node_tasks(&d, 5, &n5);
	reduce_node_tasks(&d, 4, &n4);
	nr_nodes_msgs = 0;
	clock_ms += 500;
	ticker(&d, NULL);
	CHECK(nr_nodes_msgs == 1 && last_nodes.nr == 4 &&
	      last_nodes.more == 2);
	CHECK(pair_is(&last_nodes.e[0], 7, 2, 2) &&
	      pair_is(&last_nodes.e[1], 7, 4, 3) &&
	      pair_is(&last_nodes.e[2], 7, 5, 1) &&
	      pair_is(&last_nodes.e[3], 9, 5, 1));
	CHECK(last_to.sin_port == addrs[0].sin_port);
	CHECK(kept->nr == 4 && !memcmp(kept, &last_nodes, sizeof(*kept)));
	CHECK(d.cnt.node_tasks_in == in0 + 2 && d.cnt.node_tasks_up == up0 + 1);

	/* Its own node is not a child's; no node outside the list. */
	reduce_node_tasks(&d, 2, &n5);
	reduce_node_tasks(&d, 99, &n5);
	CHECK(d.cnt.node_tasks_in == in0 + 2);

	/* A pair heard twice (node 5 re-attaching): once, the larger. */
	n4.nr = 2;
	n4.e[1] = (struct bcsp_node_task){ 7, 5, 4 };
	reduce_report(&d, &rep);
	reduce_node_tasks(&d, 4, &n4);
	reduce_node_tasks(&d, 5, &n5);
	clock_ms += 500;
	ticker(&d, NULL);
	CHECK(nr_nodes_msgs == 2 && last_nodes.nr == 4 &&
	      pair_is(&last_nodes.e[2], 7, 5, 4) && last_nodes.more == 2);

	/*
	 * Bounded: child 4's full list of job 3 comes first in the order;
	 * the three pairs of jobs 7 and 9 no longer fit and are counted
	 * with child 5's two.
	 */
	n4.nr = BCSP_MAX_NODE_TASKS;
	for (i = 0; i < BCSP_MAX_NODE_TASKS; i++)
		n4.e[i] = (struct bcsp_node_task){ 3, 100 + i, 1 };
	reduce_report(&d, &rep);
	reduce_node_tasks(&d, 4, &n4);
	reduce_node_tasks(&d, 5, &n5);
	clock_ms += 500;
	ticker(&d, NULL);
	CHECK(nr_nodes_msgs == 3 && last_nodes.nr == BCSP_MAX_NODE_TASKS &&
	      last_nodes.more == 5);
	CHECK(pair_is(&last_nodes.e[0], 3, 100, 1) &&
	      pair_is(&last_nodes.e[BCSP_MAX_NODE_TASKS - 1], 3,
		      100 + BCSP_MAX_NODE_TASKS - 1, 1));

	/* Children silent for three periods: only node 2's own pair. */
	clock_ms += 2000;
	reduce_report(&d, &rep);
	clock_ms += 500;
	ticker(&d, NULL);
	CHECK(last_nodes.nr == 1 && last_nodes.more == 0 &&
	      pair_is(&last_nodes.e[0], 7, 2, 2));

	/* The root keeps the cluster's list and sends nothing. */
	d.tree_self = 0;
	nr_nodes_msgs = 0;
	clock_ms += 500;
	ticker(&d, NULL);
	CHECK(nr_nodes_msgs == 0 && d.reduce.nodes_ms == clock_ms);
	d.tree_self = 1;
}

/* Sums of tasks saturate (filter.c's sum) rather than wrap. */
static void test_tasks_saturate(void)
{
	struct bcsp_tasks t4 = { .nodes = 1, .nr_jobs = 1 };
	struct bcsp_tasks t5 = { .nodes = 1, .nr_jobs = 1 };
	struct bcsp_report rep = { .nr_jobs = 0 };

	d.tree_self = 1;
	d.followed.known = true;
	t4.jobs[0].job = 7;
	t4.jobs[0].nodes = 1;
	t4.jobs[0].tasks = 0xfffffff0u;
	t5.jobs[0].job = 7;
	t5.jobs[0].nodes = 1;
	t5.jobs[0].tasks = 0x100;
	clock_ms += 5000;
	reduce_report(&d, &rep);
	reduce_tasks(&d, 4, &t4);
	reduce_tasks(&d, 5, &t5);
	nr_tasks_msgs = 0;
	clock_ms += 500;
	ticker(&d, NULL);
	CHECK(nr_tasks_msgs == 1 && last_tasks.nr_jobs == 1 &&
	      last_tasks.jobs[0].tasks == UINT32_MAX &&
	      last_tasks.jobs[0].nodes == 2 && last_tasks.nodes == 3);
}

int main(void)
{
	struct bcsp_switches sw;
	char err[128];
	uint32_t i;

	topo_list_init(&nodes);
	for (i = 0; i < 7; i++) {
		char host[16];

		snprintf(host, sizeof(host), "10.0.0.%u", i + 1);
		CHECK(!topo_list_add(&nodes, i + 1, host, 0, err, sizeof(err)));
		addrs[i].sin_family = AF_INET;
		addrs[i].sin_port = htons((uint16_t)(5000 + i));
	}
	CHECK(!topo_tree_kary(&tree, &nodes, 1, 2, err, sizeof(err)));
	d.nodes = &nodes;
	d.tree = &tree;
	d.tree_addr = addrs;
	d.tree_self = 1;		/* node 2 */
	d.tree_rt.adopter = TOPO_NONE;
	d.cfg.report_ms = 500;
	d.cfg.tree_sync_ms = 1000;
	CHECK(topo_subtree(&tree, 1) == 3);
	CHECK(!reduce_init(&d) && ticker);

	/* all: up when the three of the subtree have said, as one sum. */
	reset(CFG_SYNC_ALL);
	sw = one(10, 500, 1);
	reduce_add(&d, 1, &sw);
	sw = one(10, -20, 1);
	reduce_add(&d, 1, &sw);
	CHECK(nr_sent == 0);
	sw = one(10, 90, 1);
	reduce_add(&d, 1, &sw);
	CHECK(nr_sent == 1 && nr_up == 1 && up[0].slice == 10 &&
	      up[0].nodes == 3 && up[0].end_max_ns == 500 &&
	      up[0].end_min_ns == -20);
	/* To the parent, node 1. */
	CHECK(last_to.sin_port == addrs[0].sin_port);
	CHECK(d.cnt.reduce_partial == 0);

	/* all: a node that never says holds it up to 10 report periods. */
	reset(CFG_SYNC_ALL);
	sw = one(11, 1, 2);
	reduce_add(&d, 1, &sw);
	clock_ms += 9 * 500;
	ticker(&d, NULL);
	CHECK(nr_sent == 0);
	clock_ms += 500;
	ticker(&d, NULL);
	CHECK(nr_sent == 1 && up[0].nodes == 2 && d.cnt.reduce_partial == 1);
	/* What comes after its slice went up goes up on its own. */
	sw = one(11, 7, 1);
	reduce_add(&d, 1, &sw);
	clock_ms += 5000;
	ticker(&d, NULL);
	CHECK(nr_up == 2 && up[1].slice == 11 && up[1].nodes == 1);

	/* timeout: up tree_sync_ms after the first, or when all said. */
	reset(CFG_SYNC_TIMEOUT);
	sw = one(12, 1, 1);
	reduce_add(&d, 1, &sw);
	clock_ms += 999;
	ticker(&d, NULL);
	CHECK(nr_sent == 0);
	clock_ms += 1;
	ticker(&d, NULL);
	CHECK(nr_sent == 1 && up[0].nodes == 1);

	/* none: each on as it comes. */
	reset(CFG_SYNC_NONE);
	sw = one(13, 1, 1);
	reduce_add(&d, 1, &sw);
	sw = one(13, 2, 1);
	reduce_add(&d, 1, &sw);
	CHECK(nr_sent == 2 && nr_up == 2);

	/* Another slice in the same place pushes the first up. */
	reset(CFG_SYNC_TIMEOUT);
	sw = one(14, 1, 1);
	reduce_add(&d, 1, &sw);
	sw = one(14 + REDUCE_SLICES, 1, 1);
	reduce_add(&d, 1, &sw);
	CHECK(nr_up == 1 && up[0].slice == 14);

	/* A new master's epoch: the old sums are dropped. */
	reset(CFG_SYNC_TIMEOUT);
	d.reduce.epoch = 1;
	sw = one(15, 1, 1);
	reduce_add(&d, 1, &sw);
	sw = one(16, 1, 1);
	reduce_add(&d, 2, &sw);
	clock_ms += 5000;
	ticker(&d, NULL);
	CHECK(nr_up == 1 && up[0].slice == 16);

	/* A node asking an ancestor sends it its sums instead. */
	reset(CFG_SYNC_NONE);
	d.tree_rt.adopter = 0;
	d.tree_self = 3;		/* node 4, parent 2 */
	sw = one(17, 1, 1);
	reduce_add(&d, 1, &sw);
	CHECK(nr_sent == 1 && last_to.sin_port == addrs[0].sin_port);
	d.tree_rt.adopter = TOPO_NONE;

	/* The root hands its sums to the global records at once. */
	reset(CFG_SYNC_ALL);
	d.tree_self = 0;
	sw = one(18, 1, 1);
	reduce_add(&d, 1, &sw);
	CHECK(nr_local == 1 && nr_sent == 0 && up[0].slice == 18);
	d.reduce.tasks_sent_ms = clock_ms;
	/*
	 * Tasks: node 2's own report and the sums of its children 4 and 5
	 * go up as one, once per report period; a child silent for three
	 * periods is left out.
	 */
	{
		struct bcsp_report rep = { .nr_jobs = 2 };
		struct bcsp_tasks t4 = { .nodes = 1, .nr_jobs = 1 };
		struct bcsp_tasks t5 = { .nodes = 1, .nr_jobs = 1 };

		d.tree_self = 1;
		d.followed.known = true;
		rep.jobs[0].job = 7;
		rep.jobs[0].tasks = 2;
		rep.jobs[1].job = 8;
		rep.jobs[1].tasks = 0;
		rep.jobs[1].birth = 99;
		t4.jobs[0].job = 7;
		t4.jobs[0].nodes = 1;
		t4.jobs[0].tasks = 3;
		t5.jobs[0].job = 9;
		t5.jobs[0].nodes = 1;
		t5.jobs[0].tasks = 1;
		reduce_report(&d, &rep);
		reduce_tasks(&d, 4, &t4);
		reduce_tasks(&d, 5, &t5);
		nr_tasks_msgs = 0;
		clock_ms += 500;
		ticker(&d, NULL);
		CHECK(nr_tasks_msgs == 1 && last_tasks.nodes == 3 &&
		      last_tasks.nr_jobs == 3);
		CHECK(last_tasks.jobs[0].job == 7 &&
		      last_tasks.jobs[0].nodes == 2 &&
		      last_tasks.jobs[0].tasks == 5);
		CHECK(last_tasks.jobs[1].job == 8 &&
		      last_tasks.jobs[1].nodes == 0 &&
		      last_tasks.jobs[1].birth == 99);
		CHECK(last_tasks.jobs[2].job == 9 &&
		      last_tasks.jobs[2].tasks == 1);
		CHECK(last_to.sin_port == addrs[0].sin_port);
		/* Not again within the period. */
		clock_ms += 100;
		ticker(&d, NULL);
		CHECK(nr_tasks_msgs == 1);
		/* Child 5 silent, child 4 and node 2 itself go on. */
		clock_ms += 1000;
		reduce_report(&d, &rep);
		reduce_tasks(&d, 4, &t4);
		clock_ms += 500;
		ticker(&d, NULL);
		CHECK(nr_tasks_msgs == 2 && last_tasks.nodes == 2 &&
		      last_tasks.nr_jobs == 2);
		/* Its own node is not a child's. */
		reduce_tasks(&d, 2, &t5);
		clock_ms += 500;
		ticker(&d, NULL);
		CHECK(nr_tasks_msgs == 3 && last_tasks.nodes == 2);
	}
	test_node_tasks();
	test_tasks_saturate();
	reduce_exit(&d);
	return unit_done("test_reduce");
}

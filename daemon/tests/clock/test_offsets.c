// SPDX-License-Identifier: GPL-2.0
/*
 * The active master's clock offsets (offsets.c), fed scripted BCSP_OFFSETS
 * as the parents of a tree of seven nodes would send them: composition
 * down the tree, aging, links from a node that is not the parent, the
 * warning and its rate, and what bcsctl status shows.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bcsd.h"
#include "core/log.h"
#include "tree/topo.h"
#include "tests/unit.h"

static struct bcsd d;
static struct topo_list list;
static struct topo_tree tree;
static struct skew_estimate e[BCSD_MAX_NODES];
static unsigned int warnings;

/* offsets.c's warnings, counted instead of logged. */
void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level == LOG_WARNING)
		warnings++;
	va_start(ap, fmt);
	va_end(ap);
}

#define S	1000000000ULL	/* a second, ns */
#define T0	(1700000000ULL * S)

/* Node @id's index. */
static uint32_t ix(uint32_t id)
{
	return (uint32_t)topo_index(&list, id);
}

/* Node @id's parent's id, 0 for the root. */
static uint32_t parent_of(uint32_t id)
{
	uint32_t p = topo_parent(&tree, ix(id));

	return p == TOPO_NONE ? 0 : list.node[p].id;
}

/* @sender says its child @child is @offset +- @bound from it, at @now. */
static void says(uint32_t sender, uint32_t child, int64_t offset,
		 uint64_t bound, uint64_t now)
{
	struct bcsp_offsets o = { .nr = 1 };

	o.o[0] = (struct bcsp_offset){ .node = child, .offset = offset,
				       .bound = bound };
	offsets_add(&d, sender, &o, now);
}

/* Every parent says its children are (id * 1000) +- (id * 10) ns off. */
static void all_say(uint64_t now)
{
	uint32_t id;

	for (id = 2; id <= 7; id++)
		says(parent_of(id), id, (int64_t)id * 1000, id * 10, now);
}

/* Node @id's offset from the root and its bound, summed up the tree. */
static struct skew_estimate expect(uint32_t id, uint64_t age)
{
	struct skew_estimate x = { 0, 0 };

	for (; parent_of(id); id = parent_of(id)) {
		x.offset += (int64_t)id * 1000;
		/* Widened by 100 ppm over the age, rounded up, per link. */
		x.bound += id * 10 + (age * 100 + 999999) / 1000000;
	}
	return x;
}

static bool is(uint32_t id, struct skew_estimate x)
{
	return e[ix(id)].offset == x.offset && e[ix(id)].bound == x.bound;
}

static int64_t field(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return -999;
	return v ? json_object_get_int64(v) : -1;	/* null: -1 */
}

int main(void)
{
	struct json_object *a, *o;
	char err[256];
	uint32_t id;

	topo_list_init(&list);
	for (id = 1; id <= 7; id++)
		CHECK(!topo_list_add(&list, id, "127.0.0.1",
				     (uint16_t)(5400 + id), err, sizeof(err)));
	CHECK(!topo_tree_kary(&tree, &list, 1, 2, err, sizeof(err)));
	d.nodes = &list;
	d.tree = &tree;
	d.cfg.report_ms = 1000;
	d.cfg.skew_warn_permille = 100;
	d.slice_ns = 10000000;		/* warnings beyond 1 ms */
	CHECK(parent_of(1) == 0 && parent_of(2) == 1 && parent_of(4) == 2);

	/* Nothing said: only the master itself is known. */
	CHECK(offsets_compose(&d, T0, e) == 1);
	CHECK(e[ix(1)].offset == 0 && e[ix(1)].bound == 0);
	CHECK(e[ix(5)].bound == SKEW_BOUND_NONE);

	/* Every link: the offsets and the bounds add down the tree. */
	all_say(T0);
	CHECK(d.cnt.offsets_rx == 6);
	CHECK(offsets_compose(&d, T0, e) == 7);
	for (id = 1; id <= 7; id++)
		CHECK(is(id, expect(id, 0)));
	CHECK(e[ix(4)].offset == 6000 && e[ix(4)].bound == 60);

	/* A second later, each link is wider by 100 ppm of it. */
	CHECK(offsets_compose(&d, T0 + S, e) == 7);
	for (id = 2; id <= 7; id++)
		CHECK(is(id, expect(id, S)));
	/* Older than ten report periods: not used. */
	CHECK(offsets_compose(&d, T0 + 10 * S, e) == 7);
	CHECK(offsets_compose(&d, T0 + 10 * S + 1, e) == 1);
	/* Nor from before the master's clock went back. */
	CHECK(offsets_compose(&d, T0 - 1, e) == 1);

	/* A node not the parent says it: its subtree is not known. */
	says(3, 2, 500, 5, T0);
	CHECK(offsets_compose(&d, T0, e) == 4);
	CHECK(e[ix(2)].bound == SKEW_BOUND_NONE &&
	      e[ix(4)].bound == SKEW_BOUND_NONE &&
	      e[ix(5)].bound == SKEW_BOUND_NONE && is(6, expect(6, 0)));
	/* The parent again; a link not known hides what is below it. */
	says(1, 2, 2000, 20, T0);
	CHECK(offsets_compose(&d, T0, e) == 7);
	says(1, 3, 0, SKEW_BOUND_NONE, T0);
	CHECK(offsets_compose(&d, T0, e) == 4);
	CHECK(e[ix(7)].bound == SKEW_BOUND_NONE && is(5, expect(5, 0)));
	all_say(T0);

	/* A child not in the list: counted, nothing else. */
	says(1, 99, 1, 1, T0);
	CHECK(d.cnt.offsets_unknown == 1 && d.cnt.offsets_rx == 6 + 3 + 6);
	CHECK(offsets_compose(&d, T0, e) == 7);

	/* Within 1 ms: no warning. */
	offsets_check(&d, T0, 1000);
	CHECK(warnings == 0 && d.cnt.skew_warnings == 0);
	/* Node 7, 3 us + 998 us away, +- 30 + 70 ns: beyond. */
	says(3, 7, 998000, 70, T0);
	offsets_check(&d, T0, 2000);
	CHECK(warnings == 1 && d.cnt.skew_warnings == 1);
	/* Not again within the minute, again after it. */
	offsets_check(&d, T0, 61999);
	CHECK(warnings == 1);
	offsets_check(&d, T0, 62000);
	CHECK(warnings == 2 && d.cnt.skew_warnings == 2);
	/* Negative offsets count by their size; 0 permille: never. */
	says(3, 7, -1004000, 70, T0);
	offsets_check(&d, T0, 200000);
	CHECK(warnings == 3);
	d.cfg.skew_warn_permille = 0;
	offsets_check(&d, T0, 400000);
	CHECK(warnings == 3 && d.cnt.skew_warnings == 3);
	d.cfg.skew_warn_permille = 100;
	says(3, 7, 7000, 70, T0);

	/* What bcsctl status shows. */
	a = offsets_json(&d, T0 + 2500000);
	CHECK(a && json_object_array_length(a) == 7);
	o = json_object_array_get_idx(a, ix(1));
	CHECK(field(o, "node") == 1 && field(o, "parent") == -1 &&
	      field(o, "depth") == 0 && field(o, "offset_ns") == 0 &&
	      field(o, "bound_ns") == 0 && field(o, "age_ms") == -1);
	o = json_object_array_get_idx(a, ix(7));
	CHECK(field(o, "node") == 7 && field(o, "parent") == 3 &&
	      field(o, "depth") == 2 && field(o, "offset_ns") == 10000 &&
	      field(o, "bound_ns") == 30 + 250 + 70 + 250 &&
	      field(o, "age_ms") == 2);
	json_object_put(a);

	/*
	 * Hung from node 2 (the k-ary tree made again from it), the links
	 * from the old parents are not used; those the new ones say are.
	 */
	CHECK(!topo_tree_reroot(&tree, &list, 2, err, sizeof(err)));
	CHECK(parent_of(2) == 0 && parent_of(1) == 2 && parent_of(3) == 2 &&
	      parent_of(4) == 1);
	CHECK(offsets_compose(&d, T0, e) == 1);
	CHECK(e[ix(2)].offset == 0 && e[ix(2)].bound == 0);
	CHECK(e[ix(1)].bound == SKEW_BOUND_NONE);
	says(2, 1, -2000, 20, T0);
	CHECK(offsets_compose(&d, T0, e) >= 2);
	CHECK(is(1, (struct skew_estimate){ -2000, 20 }) &&
	      e[ix(4)].bound == SKEW_BOUND_NONE);
	says(1, 4, 4000, 40, T0);
	offsets_compose(&d, T0, e);
	CHECK(is(4, (struct skew_estimate){ 2000, 60 }));

	/* Without nodes_file: nothing. */
	d.nodes = NULL;
	CHECK(offsets_compose(&d, T0, e) == -ENOENT);
	CHECK(!offsets_json(&d, T0));
	offsets_check(&d, T0, 1000000);
	CHECK(warnings == 3);
	return unit_done("test_offsets");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The master's global records (global.c): strobes sent, the nodes'
 * switch summaries added to them, and what bcsctl slices shows.
 */
#include <json-c/json.h>
#include <string.h>

#include "bcsd.h"
#include "tests/unit.h"

static struct bcsd d;

static void sent(uint32_t epoch, uint64_t slice, uint64_t at)
{
	struct bcsp_strobe s = { .slice = slice, .row = 2,
				 .deadline_ns = at + 3000000 };

	global_sent(&d, epoch, &s, at);
}

static struct bcsp_switches one(uint64_t slice, int64_t end, bool late)
{
	struct bcsp_switches sw = { .nr = 1 };

	sw.s[0] = (struct bcsp_switch_sum){ .slice = slice, .nodes = 1,
					    .end_max_ns = end,
					    .end_min_ns = end, .late = late };
	return sw;
}

static struct json_object *slice_of(struct json_object *g, size_t i)
{
	struct json_object *a;

	json_object_object_get_ex(g, "slices", &a);
	return i < json_object_array_length(a) ?
	       json_object_array_get_idx(a, i) : NULL;
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
	struct bcsp_switches sw;
	struct json_object *g, *a;
	uint64_t t = 1020000000;	/* when the summaries come */

	/* Three strobes, 10 ms apart, then one after a skipped slice. */
	sent(4, 100, 1000000000);
	sent(4, 101, 1010000000);
	sent(4, 102, 1020000000);
	sent(4, 104, 1040000000);
	/* Three nodes said how slice 101 went, one of them late. */
	sw = one(101, 20000, false);
	global_add(&d, 4, &sw, t);
	sw = one(101, 3000, false);
	global_add(&d, 4, &sw, t);
	sw = one(101, 450000, true);
	global_add(&d, 4, &sw, t + 5000000);
	/* Of another epoch, or too old: not added; a skipped slice's is. */
	sw = one(102, 1, false);
	global_add(&d, 3, &sw, t);
	sw = one(103, 7, false);
	sw.s[0].predicted = 1;
	global_add(&d, 4, &sw, t);
	sw = one(100 + BCSD_GLOBAL_SLICES, 1, false);
	global_add(&d, 4, &sw, t);

	g = global_json(&d, 100);
	json_object_object_get_ex(g, "slices", &a);
	CHECK(json_object_array_length(a) == 5);
	CHECK(field(g, "unknown") == 2 && field(g, "epoch") == 4);
	CHECK(field(slice_of(g, 0), "slice") == 100 &&
	      field(slice_of(g, 0), "interval_ns") == -1 &&
	      field(slice_of(g, 0), "nodes") == 0 &&
	      field(slice_of(g, 0), "end_max_ns") == -1);
	CHECK(field(slice_of(g, 1), "slice") == 101 &&
	      field(slice_of(g, 1), "interval_ns") == 10000000 &&
	      field(slice_of(g, 1), "sent_ns") == 1010000000 &&
	      field(slice_of(g, 1), "deadline_ns") == 1013000000 &&
	      field(slice_of(g, 1), "row") == 2);
	/* The last of them came 12 ms after the deadline; none of 100. */
	CHECK(field(slice_of(g, 1), "heard_after_ns") == 12000000 &&
	      field(slice_of(g, 0), "heard_after_ns") == -1);
	CHECK(field(slice_of(g, 1), "nodes") == 3 &&
	      field(slice_of(g, 1), "late") == 1 &&
	      field(slice_of(g, 1), "end_max_ns") == 450000 &&
	      field(slice_of(g, 1), "end_min_ns") == 3000);
	/* Skipped by the master, switched to on a prediction. */
	CHECK(field(slice_of(g, 3), "slice") == 103 &&
	      field(slice_of(g, 3), "skipped") == 1 &&
	      field(slice_of(g, 3), "sent_ns") == -1 &&
	      field(slice_of(g, 3), "deadline_ns") == -1 &&
	      field(slice_of(g, 3), "row") == -1 &&
	      field(slice_of(g, 3), "nodes") == 1 &&
	      field(slice_of(g, 3), "predicted") == 1 &&
	      field(slice_of(g, 3), "end_max_ns") == 7 &&
	      field(slice_of(g, 3), "heard_after_ns") == -1);
	CHECK(field(slice_of(g, 4), "slice") == 104 &&
	      field(slice_of(g, 4), "skipped") == 0 &&
	      field(slice_of(g, 4), "interval_ns") == 20000000);
	json_object_put(g);

	/* The newest three slices; a slice number again or back is not recorded. */
	sent(4, 104, 1050000000);
	sent(4, 90, 1060000000);
	g = global_json(&d, 3);
	CHECK(field(slice_of(g, 0), "slice") == 102 &&
	      field(slice_of(g, 1), "slice") == 103 &&
	      field(slice_of(g, 2), "slice") == 104 && !slice_of(g, 3) &&
	      field(slice_of(g, 2), "sent_ns") == 1040000000);
	json_object_put(g);

	/*
	 * A master running late: nodes switched to 106 and 107 on a
	 * prediction before it sent them; it skips 106 and sends 107.
	 * Too far ahead is not kept.
	 */
	sw = one(106, 11, false);
	global_add(&d, 4, &sw, t);
	sw = one(107, 12, false);
	global_add(&d, 4, &sw, t);
	sw = one(104 + 17, 13, false);
	global_add(&d, 4, &sw, t);
	g = global_json(&d, 100);
	CHECK(field(slice_of(g, 4), "slice") == 104 && !slice_of(g, 5) &&
	      field(g, "unknown") == 3);
	json_object_put(g);
	sent(4, 107, 1055000000);
	g = global_json(&d, 3);
	CHECK(field(slice_of(g, 0), "slice") == 105 &&
	      field(slice_of(g, 0), "skipped") == 1 &&
	      field(slice_of(g, 0), "nodes") == 0);
	CHECK(field(slice_of(g, 1), "slice") == 106 &&
	      field(slice_of(g, 1), "skipped") == 1 &&
	      field(slice_of(g, 1), "nodes") == 1 &&
	      field(slice_of(g, 1), "end_max_ns") == 11);
	CHECK(field(slice_of(g, 2), "slice") == 107 &&
	      field(slice_of(g, 2), "skipped") == 0 &&
	      field(slice_of(g, 2), "sent_ns") == 1055000000 &&
	      field(slice_of(g, 2), "nodes") == 1 &&
	      field(slice_of(g, 2), "end_max_ns") == 12);
	json_object_put(g);

	/* A take-over: a new epoch starts afresh. */
	sent(5, 108, 1070000000);
	sw = one(101, 1, false);
	global_add(&d, 5, &sw, t);
	g = global_json(&d, BCSD_GLOBAL_SLICES + 1);
	CHECK(field(slice_of(g, 0), "slice") == 108 && !slice_of(g, 1) &&
	      field(g, "unknown") == 4);
	json_object_put(g);

	/* A jump further than is kept: only the newest skipped are. */
	sent(5, 108 + 3 * BCSD_GLOBAL_SLICES, 1075000000);
	g = global_json(&d, UINT32_MAX);
	json_object_object_get_ex(g, "slices", &a);
	CHECK(json_object_array_length(a) == BCSD_GLOBAL_SLICES &&
	      field(slice_of(g, 0), "skipped") == 1 &&
	      field(slice_of(g, BCSD_GLOBAL_SLICES - 1), "skipped") == 0);
	json_object_put(g);

	/* More slices than are kept: the newest BCSD_GLOBAL_SLICES. */
	for (uint64_t s = 107 + 3 * BCSD_GLOBAL_SLICES;
	     s < 107 + 5 * BCSD_GLOBAL_SLICES; s++)
		sent(5, s, 1080000000 + s);
	g = global_json(&d, UINT32_MAX);
	json_object_object_get_ex(g, "slices", &a);
	CHECK(json_object_array_length(a) == BCSD_GLOBAL_SLICES);
	CHECK(field(slice_of(g, 0), "slice") ==
	      107 + 4 * BCSD_GLOBAL_SLICES &&
	      field(slice_of(g, 0), "skipped") == 0);
	json_object_put(g);
	return unit_done("test_global");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The master's global records (global.c): strobes sent, the nodes'
 * switch summaries added to them, and what bcsctl slices shows.
 */
#include <json-c/json.h>
#include <string.h>

#include "bcsd.h"
#include "unit.h"

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

	/* Three strobes, 10 ms apart, then one after a skipped slice. */
	sent(4, 100, 1000000000);
	sent(4, 101, 1010000000);
	sent(4, 102, 1020000000);
	sent(4, 104, 1040000000);
	/* Three nodes said how slice 101 went, one of them late. */
	sw = one(101, 20000, false);
	global_add(&d, 4, &sw);
	sw = one(101, -3000, false);
	global_add(&d, 4, &sw);
	sw = one(101, 450000, true);
	global_add(&d, 4, &sw);
	/* Of another epoch, of a slice not sent, or too old: not added. */
	sw = one(102, 1, false);
	global_add(&d, 3, &sw);
	sw = one(103, 1, false);
	global_add(&d, 4, &sw);
	sw = one(100 + BCSD_GLOBAL_SLICES, 1, false);
	global_add(&d, 4, &sw);

	g = global_json(&d, 100);
	json_object_object_get_ex(g, "slices", &a);
	CHECK(json_object_array_length(a) == 4);
	CHECK(field(g, "unknown") == 3 && field(g, "epoch") == 4);
	CHECK(field(slice_of(g, 0), "slice") == 100 &&
	      field(slice_of(g, 0), "interval_ns") == -1 &&
	      field(slice_of(g, 0), "nodes") == 0 &&
	      field(slice_of(g, 0), "end_max_ns") == -1);
	CHECK(field(slice_of(g, 1), "slice") == 101 &&
	      field(slice_of(g, 1), "interval_ns") == 10000000 &&
	      field(slice_of(g, 1), "sent_ns") == 1010000000 &&
	      field(slice_of(g, 1), "deadline_ns") == 1013000000 &&
	      field(slice_of(g, 1), "row") == 2);
	CHECK(field(slice_of(g, 1), "nodes") == 3 &&
	      field(slice_of(g, 1), "late") == 1 &&
	      field(slice_of(g, 1), "end_max_ns") == 450000 &&
	      field(slice_of(g, 1), "end_min_ns") == -3000);
	CHECK(field(slice_of(g, 3), "slice") == 104 &&
	      field(slice_of(g, 3), "interval_ns") == 20000000);
	json_object_put(g);

	/* The newest three slices; a slice number again or back is not recorded. */
	sent(4, 104, 1050000000);
	sent(4, 90, 1060000000);
	g = global_json(&d, 3);
	CHECK(field(slice_of(g, 0), "slice") == 102 &&
	      field(slice_of(g, 1), "slice") == 104 && !slice_of(g, 2) &&
	      field(slice_of(g, 1), "sent_ns") == 1040000000);
	json_object_put(g);

	/* A take-over: a new epoch starts afresh. */
	sent(5, 106, 1070000000);
	sw = one(101, 1, false);
	global_add(&d, 5, &sw);
	g = global_json(&d, BCSD_GLOBAL_SLICES + 1);
	CHECK(field(slice_of(g, 0), "slice") == 106 && !slice_of(g, 1) &&
	      field(g, "unknown") == 4);
	json_object_put(g);

	/* More slices than are kept: the newest BCSD_GLOBAL_SLICES. */
	for (uint64_t s = 107; s < 107 + 2 * BCSD_GLOBAL_SLICES; s++)
		sent(5, s, 1080000000 + s);
	g = global_json(&d, UINT32_MAX);
	json_object_object_get_ex(g, "slices", &a);
	CHECK(json_object_array_length(a) == BCSD_GLOBAL_SLICES);
	CHECK(field(slice_of(g, 0), "slice") ==
	      107 + BCSD_GLOBAL_SLICES);
	json_object_put(g);
	return unit_done("test_global");
}

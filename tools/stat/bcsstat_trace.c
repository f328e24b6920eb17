// SPDX-License-Identifier: GPL-2.0
/*
 * bcsstat trace -o FILE.json [FILE...]: the slice records of one or more
 * nodes as a trace in the Chrome trace-event format, which Perfetto
 * (https://ui.perfetto.dev) and chrome://tracing open:
 *
 *   - a process per node (pid 1, 2, ... in the order of the inputs), named
 *     after the node;
 *   - a complete event ("X") per record, from its switch_start to the next
 *     record's (the last one: to the end of its switch), named after the
 *     row that ran and, when a jobs.json file is beside the slices, the
 *     jobs of that row;
 *   - an instant ("i") at the switch for each of: late, missed strobes,
 *     predicted, expired, fail-open.
 *
 * Times are in microseconds from the earliest switch of all inputs; the
 * earliest is in otherData.t0_ns.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <bcs.h>

#include "bcsstat.h"

/* Microseconds with the nanoseconds kept: 1234.567, not 1234.5670000001. */
static struct json_object *new_us(uint64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu.%03llu",
		 (unsigned long long)(ns / 1000),
		 (unsigned long long)(ns % 1000));
	return json_object_new_double_s(ns / 1e3, buf);
}

/* The same for @ns that may be negative. */
static struct json_object *new_us_signed(int64_t ns)
{
	uint64_t mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	char buf[32];

	snprintf(buf, sizeof(buf), "%s%llu.%03llu", ns < 0 ? "-" : "",
		 (unsigned long long)(mag / 1000),
		 (unsigned long long)(mag % 1000));
	return json_object_new_double_s(ns / 1e3, buf);
}

static struct json_object *event(const char *ph, const char *name,
				 const char *cat, int pid)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "name", json_object_new_string(name));
	if (cat)
		json_object_object_add(e, "cat", json_object_new_string(cat));
	json_object_object_add(e, "ph", json_object_new_string(ph));
	json_object_object_add(e, "pid", json_object_new_int(pid));
	json_object_object_add(e, "tid", json_object_new_int(1));
	return e;
}

static void add_meta(struct json_object *evs, int pid, const char *what,
		     const char *key, struct json_object *val)
{
	struct json_object *e = event("M", what, NULL, pid),
			   *args = json_object_new_object();

	json_object_object_add(args, key, val);
	json_object_object_add(e, "args", args);
	json_object_array_add(evs, e);
}

/* "row 2: jobs 3, 7", "row 2: job 3", "row 2", "no row". */
static void span_name(char *buf, size_t len, const struct node_input *in,
		      uint32_t row)
{
	size_t i, at, nr = 0;

	if (row == BCS_ROW_NONE) {
		snprintf(buf, len, "no row");
		return;
	}
	for (i = 0; i < in->nr_jobs; i++)
		nr += in->jobs[i].row == row;
	at = (size_t)snprintf(buf, len, "row %u%s", row,
			      !nr ? "" : nr == 1 ? ": job " : ": jobs ");
	for (i = 0, nr = 0; i < in->nr_jobs && at < len; i++) {
		if (in->jobs[i].row != row)
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%u",
				       nr++ ? ", " : "", in->jobs[i].id);
	}
}

static void add_instant(struct json_object *evs, int pid, const char *name,
			uint64_t ts, const struct bcs_slice_record *r)
{
	struct json_object *e = event("i", name, "switch", pid),
			   *args = json_object_new_object();

	json_object_object_add(e, "ts", new_us(ts));
	json_object_object_add(e, "s", json_object_new_string("t"));
	json_object_object_add(args, "slice", json_object_new_uint64(r->slice));
	json_object_object_add(args, "seq", json_object_new_uint64(r->seq));
	if (r->missed)
		json_object_object_add(args, "missed",
				       json_object_new_uint64(r->missed));
	json_object_object_add(e, "args", args);
	json_object_array_add(evs, e);
}

/* When the switch of @r had taken effect, as far as it tells. */
static uint64_t record_end(const struct bcs_slice_record *r)
{
	uint64_t end = r->switch_end_ns;

	if (r->parked_ns > end)
		end = r->parked_ns;
	if (r->resumed_ns > end)
		end = r->resumed_ns;
	return end;
}

static void add_node(struct json_object *evs, const struct node_input *in,
		     int pid, uint64_t t0)
{
	static const struct { uint32_t bit; const char *name; } marks[] = {
		{ BCS_SLICE_PREDICTED, "predicted" },
		{ BCS_SLICE_EXPIRED, "expired" },
		{ BCS_SLICE_FAILOPEN, "fail-open" },
	};
	char name[256], fl[BCS_SLICE_FLAGS_LEN];
	size_t i, m;

	add_meta(evs, pid, "process_name", "name",
		 json_object_new_string(in->name));
	add_meta(evs, pid, "process_sort_index", "sort_index",
		 json_object_new_int(pid));
	add_meta(evs, pid, "thread_name", "name",
		 json_object_new_string("slices"));
	for (i = 0; i < in->nr_recs; i++) {
		const struct bcs_slice_record *r = &in->recs[i];
		uint64_t start = r->switch_start_ns, end;
		struct json_object *e, *args;

		if (!start)
			continue;
		end = i + 1 < in->nr_recs ? in->recs[i + 1].switch_start_ns : 0;
		if (end <= start)
			end = record_end(r);
		if (end < start)
			end = start;
		span_name(name, sizeof(name), in, r->row);
		e = event("X", name, "slice", pid);
		json_object_object_add(e, "ts", new_us(start - t0));
		json_object_object_add(e, "dur", new_us(end - start));
		args = json_object_new_object();
		json_object_object_add(args, "seq",
				       json_object_new_uint64(r->seq));
		json_object_object_add(args, "slice",
				       json_object_new_uint64(r->slice));
		json_object_object_add(args, "row", r->row == BCS_ROW_NONE ?
				       NULL : json_object_new_int64(r->row));
		json_object_object_add(args, "flags",
			json_object_new_string(bcs_slice_flags_str(fl, r->flags)));
		json_object_object_add(args, "interval_us",
				       new_us(r->interval_ns));
		json_object_object_add(args, "switch_us", new_us(r->switch_ns));
		json_object_object_add(args, "lateness_us",
			new_us_signed((int64_t)(start - r->deadline_ns)));
		if (r->parked_ns >= start)
			json_object_object_add(args, "parked_us",
					       new_us(r->parked_ns - start));
		if (r->resumed_ns >= start)
			json_object_object_add(args, "resumed_us",
					       new_us(r->resumed_ns - start));
		json_object_object_add(args, "suspended",
				       json_object_new_int64(r->nr_suspended));
		json_object_object_add(args, "resumed",
				       json_object_new_int64(r->nr_resumed));
		json_object_object_add(args, "running",
				       json_object_new_int64(r->nr_running));
		json_object_object_add(args, "blocked",
				       json_object_new_int64(r->nr_blocked));
		json_object_object_add(args, "missed",
				       json_object_new_int64(r->missed));
		json_object_object_add(e, "args", args);
		json_object_array_add(evs, e);

		if (r->late)
			add_instant(evs, pid, "late", start - t0, r);
		if (r->missed)
			add_instant(evs, pid, "missed", start - t0, r);
		for (m = 0; m < sizeof(marks) / sizeof(marks[0]); m++)
			if (r->flags & marks[m].bit)
				add_instant(evs, pid, marks[m].name,
					    start - t0, r);
	}
}

static int write_trace(struct json_object *top, const char *path)
{
	const char *s = json_object_to_json_string_ext(top,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	int to_stdout = !strcmp(path, "-");
	FILE *f = to_stdout ? stdout : fopen(path, "w");

	if (!f) {
		fprintf(stderr, "bcsstat: cannot write %s: %s\n", path,
			strerror(errno));
		return EXIT_FAILURE;
	}
	if (fputs(s, f) < 0 || fputc('\n', f) < 0 || fflush(f) ||
	    (!to_stdout && fclose(f))) {
		fprintf(stderr, "bcsstat: writing %s: %s\n", path,
			strerror(errno));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

int run_trace(const struct opts *o)
{
	struct json_object *top, *evs, *other;
	uint64_t t0 = UINT64_MAX;
	struct node_input *in;
	size_t n, i, r;
	int ret;

	if (!o->output)
		return usage_err(o->cmd, "missing -o FILE.json", NULL);
	ret = inputs_load(o->args, o->nr_args, 1, &in, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		for (r = 0; r < in[i].nr_recs; r++)
			if (in[i].recs[r].switch_start_ns &&
			    in[i].recs[r].switch_start_ns < t0)
				t0 = in[i].recs[r].switch_start_ns;
	if (t0 == UINT64_MAX) {
		fprintf(stderr, "bcsstat: no slice records to trace\n");
		inputs_free(in, n);
		return EXIT_FAILURE;
	}
	top = json_object_new_object();
	evs = json_object_new_array();
	json_object_object_add(top, "traceEvents", evs);
	json_object_object_add(top, "displayTimeUnit",
			       json_object_new_string("ms"));
	for (i = 0; i < n; i++)
		add_node(evs, &in[i], (int)i + 1, t0);
	other = json_object_new_object();
	json_object_object_add(other, "source",
			       json_object_new_string("bcsstat trace"));
	json_object_object_add(other, "t0_ns", json_object_new_uint64(t0));
	json_object_object_add(top, "otherData", other);
	ret = write_trace(top, o->output);
	json_object_put(top);
	inputs_free(in, n);
	return ret;
}

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
 *     predicted, expired, fail-open;
 *   - with libbcsmpi files among the inputs (RANK.bcsmpi or a directory of
 *     them, or --job J for job J's in $BCS_MPI_DIR), a process per rank
 *     after the nodes, "rank R (HOST)", with a span per slice in which it
 *     called MPI ("mpi" thread: NP2P, NCOLL and the time in them, the
 *     span that of the node's record of the same slice number, the
 *     node of the rank's host first, so that ranks and slices line up by
 *     slice number; the rank's own first call to last return when no
 *     node has that slice), a counter of its MPI time per slice, and
 *     each call its window captured ("calls" thread, at the rank's own
 *     CLOCK_MONOTONIC, the clock of its node's records).
 *
 * Times are in microseconds from the earliest switch (or MPI call) of
 * all inputs; the earliest is in otherData.t0_ns.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <bcs.h>

#include "mpifile.h"
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

static struct json_object *event_tid(const char *ph, const char *name,
				     const char *cat, int pid, int tid)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "name", json_object_new_string(name));
	if (cat)
		json_object_object_add(e, "cat", json_object_new_string(cat));
	json_object_object_add(e, "ph", json_object_new_string(ph));
	json_object_object_add(e, "pid", json_object_new_int(pid));
	json_object_object_add(e, "tid", json_object_new_int(tid));
	return e;
}

static struct json_object *event(const char *ph, const char *name,
				 const char *cat, int pid)
{
	return event_tid(ph, name, cat, pid, 1);
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

/*
 * The span of slice @slice in the node inputs: the node named @host
 * first, then any; 0 if none has it.
 */
static int slice_span(const struct node_input *in, size_t n, const char *host,
		      uint64_t slice, uint64_t *start, uint64_t *end)
{
	size_t i, r, pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			if (!pass && strcmp(in[i].name, host))
				continue;
			for (r = 0; r < in[i].nr_recs; r++) {
				const struct bcs_slice_record *x =
					&in[i].recs[r];

				if (x->slice != slice || !x->switch_start_ns)
					continue;
				*start = x->switch_start_ns;
				*end = r + 1 < in[i].nr_recs ?
				       in[i].recs[r + 1].switch_start_ns : 0;
				if (*end <= *start)
					*end = record_end(x);
				if (*end < *start)
					*end = *start;
				return 1;
			}
		}
	return 0;
}

/* A thread @tid of @pid named @name. */
static void add_thread(struct json_object *evs, int pid, int tid,
		       const char *name)
{
	struct json_object *e = event_tid("M", "thread_name", NULL, pid, tid),
			   *args = json_object_new_object();

	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(e, "args", args);
	json_object_array_add(evs, e);
}

/* The tracks of rank file @st (process @pid). */
static int add_rank(struct json_object *evs, const struct bcs_mpi_stats *st,
		    const struct node_input *in, size_t nr_in, int pid,
		    uint64_t t0)
{
	struct bcs_mpi_slice *e;
	struct bcs_mpi_call *c;
	struct json_object *x, *args;
	char name[128];
	uint64_t start, end, mpi;
	long ne, nc, i;

	ne = mpi_slice_entries(st, &e);
	if (ne < 0)
		return -ENOMEM;
	nc = mpi_call_events(st, &c);
	if (nc < 0) {
		free(e);
		return -ENOMEM;
	}
	snprintf(name, sizeof(name), "rank %d (%s)", st->hdr->rank,
		 st->hdr->host);
	add_meta(evs, pid, "process_name", "name",
		 json_object_new_string(name));
	add_meta(evs, pid, "process_sort_index", "sort_index",
		 json_object_new_int(pid));
	add_thread(evs, pid, 1, "mpi");
	add_thread(evs, pid, 2, "calls");
	for (i = 0; i < ne; i++) {
		mpi = e[i].p2p_ns + e[i].coll_ns;
		if (!slice_span(in, nr_in, st->hdr->host, e[i].slice, &start,
				&end)) {
			start = e[i].first_ns;
			end = e[i].last_ns > start ? e[i].last_ns : start;
		}
		if (start < t0)
			continue;	/* not of this trace's time */
		snprintf(name, sizeof(name), "NP2P %llu NCOLL %llu",
			 (unsigned long long)e[i].p2p_calls,
			 (unsigned long long)e[i].coll_calls);
		x = event("X", name, "mpi", pid);
		json_object_object_add(x, "ts", new_us(start - t0));
		json_object_object_add(x, "dur", new_us(end - start));
		args = json_object_new_object();
		json_object_object_add(args, "slice",
				       json_object_new_uint64(e[i].slice));
		json_object_object_add(args, "p2p_calls",
				       json_object_new_uint64(e[i].p2p_calls));
		json_object_object_add(args, "coll_calls",
				       json_object_new_uint64(e[i].coll_calls));
		json_object_object_add(args, "p2p_us", new_us(e[i].p2p_ns));
		json_object_object_add(args, "coll_us", new_us(e[i].coll_ns));
		json_object_object_add(args, "bytes", json_object_new_uint64(
				       e[i].p2p_bytes + e[i].coll_bytes));
		json_object_object_add(x, "args", args);
		json_object_array_add(evs, x);
		/* The counter: its MPI time in the slice, 0 after it. */
		x = event("C", "MPI time (us)", "mpi", pid);
		json_object_object_add(x, "ts", new_us(start - t0));
		args = json_object_new_object();
		json_object_object_add(args, "mpi", new_us(mpi));
		json_object_object_add(x, "args", args);
		json_object_array_add(evs, x);
		x = event("C", "MPI time (us)", "mpi", pid);
		json_object_object_add(x, "ts", new_us(end - t0));
		args = json_object_new_object();
		json_object_object_add(args, "mpi", json_object_new_int(0));
		json_object_object_add(x, "args", args);
		json_object_array_add(evs, x);
	}
	for (i = 0; i < nc; i++) {
		if (c[i].start_ns < t0)
			continue;
		x = event_tid("X", st->prims[c[i].prim].name, "call", pid, 2);
		json_object_object_add(x, "ts", new_us(c[i].start_ns - t0));
		json_object_object_add(x, "dur", new_us(c[i].duration_ns));
		args = json_object_new_object();
		json_object_object_add(args, "slice",
				       json_object_new_uint64(c[i].slice));
		json_object_object_add(args, "bytes",
				       json_object_new_uint64(c[i].bytes));
		json_object_object_add(x, "args", args);
		json_object_array_add(evs, x);
	}
	free(e);
	free(c);
	return 0;
}

/* The earliest MPI time of @st that a trace shows, or UINT64_MAX. */
static uint64_t rank_first(const struct bcs_mpi_stats *st)
{
	struct bcs_mpi_slice *e;
	long ne = mpi_slice_entries(st, &e), i;
	uint64_t t = UINT64_MAX;

	for (i = 0; i < ne; i++)
		if (e[i].first_ns && e[i].first_ns < t)
			t = e[i].first_ns;
	free(e);
	return t;
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
	struct node_input *in = NULL;
	struct bcs_mpi_stats *ranks;
	uint64_t t0 = UINT64_MAX, t;
	char **nodes, **paths, job[16];
	size_t n = 0, i, r;
	int ret, nr, k, nr_nodes = 0;

	if (!o->output)
		return usage_err(o->cmd, "missing -o FILE.json", NULL);
	snprintf(job, sizeof(job), "%u", o->job);
	ret = mpi_files_load(o->args, o->nr_args,
			     o->given & OPT_JOB ? job : NULL, 1, &ranks,
			     &paths, &nr);
	if (ret)
		return ret;
	nodes = calloc((size_t)o->nr_args + 1, sizeof(*nodes));
	if (!nodes) {
		mpi_files_free(ranks, paths, nr);
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		return EXIT_FAILURE;
	}
	for (k = 0; k < o->nr_args; k++)
		if (!mpi_path_is_mpi(o->args[k]))
			nodes[nr_nodes++] = o->args[k];
	/* Ranks alone: no node's ring to read. */
	if (nr_nodes || !nr)
		ret = inputs_load(nodes, nr_nodes, 1, &in, &n);
	free(nodes);
	if (ret) {
		mpi_files_free(ranks, paths, nr);
		return ret;
	}
	for (k = 0; k < nr; k++) {
		t = rank_first(&ranks[k]);
		t0 = t < t0 ? t : t0;
	}
	for (i = 0; i < n; i++)
		for (r = 0; r < in[i].nr_recs; r++)
			if (in[i].recs[r].switch_start_ns &&
			    in[i].recs[r].switch_start_ns < t0)
				t0 = in[i].recs[r].switch_start_ns;
	if (t0 == UINT64_MAX) {
		fprintf(stderr, "bcsstat: no slice records to trace\n");
		inputs_free(in, n);
		mpi_files_free(ranks, paths, nr);
		return EXIT_FAILURE;
	}
	top = json_object_new_object();
	evs = json_object_new_array();
	json_object_object_add(top, "traceEvents", evs);
	json_object_object_add(top, "displayTimeUnit",
			       json_object_new_string("ms"));
	for (i = 0; i < n; i++)
		add_node(evs, &in[i], (int)i + 1, t0);
	for (k = 0; k < nr; k++)
		if (add_rank(evs, &ranks[k], in, n, (int)n + 1 + k, t0)) {
			fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
			json_object_put(top);
			inputs_free(in, n);
			mpi_files_free(ranks, paths, nr);
			return EXIT_FAILURE;
		}
	other = json_object_new_object();
	json_object_object_add(other, "source",
			       json_object_new_string("bcsstat trace"));
	json_object_object_add(other, "t0_ns", json_object_new_uint64(t0));
	json_object_object_add(top, "otherData", other);
	ret = write_trace(top, o->output);
	json_object_put(top);
	inputs_free(in, n);
	mpi_files_free(ranks, paths, nr);
	return ret;
}

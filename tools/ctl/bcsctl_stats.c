// SPDX-License-Identifier: GPL-2.0
/*
 * bcsctl stats: per-task distributions (BCS_IOC_DIST_CTL), enabled,
 * disabled and released at run time for a job or some of its threads.
 * For a whole job, when bcsd runs here, on every node of the cluster
 * through it; for threads, or without bcsd, on this node.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <bcs.h>
#include <bcs_ctl.h>
#include <json-c/json.h>

#include "bcsctl.h"
#include "control.h"
#include "select.h"
#include "numparse.h"

#define STATS_TIMEOUT_MS	5000
/* BCSP_MPI_SEL_LEN of daemon/proto.h: a selection in a datagram. */
#define BCSCTL_MPI_SEL_MAX	256

static const char *op_name(uint32_t op)
{
	switch (op) {
	case BCS_DIST_ENABLE:
		return "enable";
	case BCS_DIST_DISABLE:
		return "disable";
	}
	return "release";
}

/* The request both kinds of stats through bcsd begin with. */
static struct json_object *stats_request(const struct bcsctl_req *req)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "cmd", json_object_new_string("stats"));
	json_object_object_add(o, "job", json_object_new_int64(req->job));
	json_object_object_add(o, "op",
			       json_object_new_string(op_name(req->dist_op)));
	return o;
}

/* --rank and --pid NODE:PID as the "subsets" of the request. */
static struct json_object *subsets_json(const struct bcsctl_req *req)
{
	struct json_object *a = json_object_new_array(), *o, *r;
	int i;

	for (i = 0; i < req->nr_subsets; i++) {
		const struct bcsctl_subset *s = &req->subsets[i];

		o = json_object_new_object();
		if (s->node) {
			json_object_object_add(o, "node",
					       json_object_new_string(s->node));
			json_object_object_add(o, "pid",
					       json_object_new_int64(s->b));
		} else {
			r = json_object_new_array();
			json_object_array_add(r, json_object_new_int64(s->a));
			json_object_array_add(r, json_object_new_int64(s->b));
			json_object_object_add(o, "ranks", r);
		}
		json_object_array_add(a, o);
	}
	return a;
}

/*
 * Through bcsd to every node of the cluster, from the slice the master
 * names: the whole job, or the subsets of its tasks given (--rank, --pid
 * NODE:PID); plain pids are this node's.
 */
static int stats_cluster(int fd, const struct bcsctl_req *req,
			 const char *what)
{
	struct json_object *o = stats_request(req), *resp;
	char msg[256];
	int err;

	if (req->dist_op != BCS_DIST_RELEASE)
		json_object_object_add(o, "metrics",
				       json_object_new_int64(req->metrics));
	if (req->dist_op == BCS_DIST_ENABLE)
		json_object_object_add(o, "sub_bits",
				       json_object_new_int64(req->sub_bits));
	if (req->nr_subsets)
		json_object_object_add(o, "subsets", subsets_json(req));
	err = bcs_ctl_call(fd, o, &resp, STATS_TIMEOUT_MS, msg, sizeof(msg));
	close(fd);
	if (err) {
		fprintf(stderr, "bcsctl: %s: %s\n", what, msg);
		return BCSCTL_EXIT_FAIL;
	}
	json_object_put(resp);
	return BCSCTL_EXIT_OK;
}

/*
 * --mpi through bcsd: the master sends it down to the nodes that hold the
 * job (BCSP_CMD_MPI, as bcsctl job signal), and each one's bcsd sets the
 * job's control file there.  Returns BCSCTL_EXIT_*, or -1 if bcsd refused
 * it for want of root (the caller sets this node's then).
 */
static int stats_mpi_cluster(int fd, const struct bcsctl_req *req,
			     const char *what)
{
	struct json_object *o = stats_request(req), *resp;
	char msg[256];
	int err;

	json_object_object_add(o, "mpi", json_object_new_string(req->mpi));
	if (req->has_resolution)
		json_object_object_add(o, "sub_bits",
				       json_object_new_int64(req->sub_bits));
	err = bcs_ctl_call(fd, o, &resp, STATS_TIMEOUT_MS, msg, sizeof(msg));
	close(fd);
	if (err == -EPERM)
		return -1;
	if (err) {
		fprintf(stderr, "bcsctl: %s: --mpi: %s\n", what, msg);
		return BCSCTL_EXIT_FAIL;
	}
	json_object_put(resp);
	return BCSCTL_EXIT_OK;
}

/*
 * --mpi: the control file of the job's MPI processes (libbcsmpi/
 * control.c), which they apply at their next MPI call: on every node of
 * the job through bcsd when it runs here, else on this node.  The
 * selection is checked here first, as the processes will parse it.
 */
static int stats_mpi(const struct bcsctl_req *req, const char *what)
{
	static const char prefix[] = "BCS_MPI_STATS: ";
	char job[16], err[1024];
	int off = req->dist_op == BCS_DIST_DISABLE;
	struct bcsmpi_select sel;
	int fd, r;

	if (*req->mpi && bcsmpi_select_parse(req->mpi, NULL, NULL, &sel, err,
					     sizeof(err))) {
		fprintf(stderr, "bcsctl: %s: --mpi: %s\n", what,
			strncmp(err, prefix, sizeof(prefix) - 1) ? err :
			err + sizeof(prefix) - 1);
		return BCSCTL_EXIT_FAIL;
	}
	fd = bcs_ctl_connect();
	if (fd >= 0) {
		if (strlen(req->mpi) >= BCSCTL_MPI_SEL_MAX) {
			close(fd);
			fprintf(stderr, "bcsctl: %s: --mpi: a selection sent "
				"through bcsd is at most %d characters (give "
				"all, or fewer primitives)\n", what,
				BCSCTL_MPI_SEL_MAX - 1);
			return BCSCTL_EXIT_FAIL;
		}
		r = stats_mpi_cluster(fd, req, what);
		if (r >= 0)
			return r;
		fprintf(stderr, "bcsctl: %s: --mpi: bcsd takes it from root "
			"only: on this node alone\n", what);
	}
	snprintf(job, sizeof(job), "%u", req->job);
	if (bcs_mpi_control_set(bcsmpi_dir(), job, off,
				off ? NULL : req->mpi,
				req->has_resolution ? (int)req->sub_bits : -1,
				err, sizeof(err))) {
		fprintf(stderr, "bcsctl: %s: --mpi: %s\n", what, err);
		return BCSCTL_EXIT_FAIL;
	}
	return BCSCTL_EXIT_OK;
}

int bcsctl_run_stats(const struct bcsctl_req *req)
{
	int fd;
	int32_t *pids = NULL;
	struct bcs *h;
	char what[64];
	int i, err;

	snprintf(what, sizeof(what), "stats %s %u", op_name(req->dist_op),
		 req->job);
	if (req->mpi)
		return stats_mpi(req, what);
	if (!req->nr_pids) {
		fd = bcs_ctl_connect();
		if (fd >= 0)
			return stats_cluster(fd, req, what);
		if (req->nr_subsets) {
			fprintf(stderr, "bcsctl: %s: --rank and --pid NODE:PID "
				"go through bcsd, which does not run here\n",
				what);
			return BCSCTL_EXIT_FAIL;
		}
	}
	if (req->nr_pids) {
		pids = calloc((size_t)req->nr_pids, sizeof(*pids));
		if (!pids) {
			fprintf(stderr, "bcsctl: %s: out of memory\n", what);
			return BCSCTL_EXIT_FAIL;
		}
		for (i = 0; i < req->nr_pids; i++)
			if (parse_pid(req->pids[i], &pids[i]))
				pids[i] = 0;	/* checked by the parser */
	}
	err = bcs_open(&h);
	if (err) {
		free(pids);
		fprintf(stderr, "bcsctl: %s\n", bcs_strerror(err, BCS_CTX_OPEN));
		return BCSCTL_EXIT_FAIL;
	}
	err = bcs_dist_ctl(h, req->job, req->dist_op, req->metrics,
			   req->sub_bits, pids, (uint32_t)req->nr_pids);
	bcs_close(h);
	free(pids);
	if (err == -ESRCH && req->nr_pids) {
		fprintf(stderr, "bcsctl: %s: a pid given is not a thread of "
			"job %u\n", what, req->job);
		return BCSCTL_EXIT_FAIL;
	}
	if (err) {
		fprintf(stderr, "bcsctl: %s: %s\n", what,
			bcs_strerror(err, BCS_CTX_TASK));
		return BCSCTL_EXIT_FAIL;
	}
	return BCSCTL_EXIT_OK;
}

/* @v ns as milliseconds, or "-" for null. */
static const char *fmt_ms(char *buf, size_t len, struct json_object *o,
			  const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return "-";
	snprintf(buf, len, "%.3f", (double)json_object_get_int64(v) / 1e6);
	return buf;
}

/*
 * The rows the nodes ran in a slice, as equivalence classes: "ROW:NODES"
 * each ("-" for no row), and "+N" for the nodes of other rows.
 */
static const char *fmt_rows(char *buf, size_t len, struct json_object *r)
{
	struct json_object *a, *c, *v;
	size_t i, n, off = 0;
	int64_t other = bcs_ctl_int(r, "rows_other", 0);

	buf[0] = '\0';
	a = json_object_object_get_ex(r, "rows", &a) ? a : NULL;
	n = a ? json_object_array_length(a) : 0;
	for (i = 0; i < n && off < len; i++) {
		c = json_object_array_get_idx(a, i);
		json_object_object_get_ex(c, "row", &v);
		if (v)
			off += (size_t)snprintf(buf + off, len - off, "%s%lld:%lld",
						i ? "," : "",
						(long long)json_object_get_int64(v),
						(long long)bcs_ctl_int(c, "nodes", 0));
		else
			off += (size_t)snprintf(buf + off, len - off, "%s-:%lld",
						i ? "," : "",
						(long long)bcs_ctl_int(c, "nodes", 0));
	}
	if (other && off < len)
		snprintf(buf + off, len - off, "%s+%lld", n ? "," : "",
			 (long long)other);
	if (!buf[0] && len > 1)
		snprintf(buf, len, "-");
	return buf;
}

/*
 * The master's global records (daemon/global.c): each slice's strobe,
 * when it went out and the interval since the one before, and how the
 * nodes' switches to it went.  On the master's host only: the records
 * are there.
 */
int bcsctl_run_stats_global(const struct bcsctl_req *req)
{
	struct json_object *o = json_object_new_object(), *resp, *a, *r;
	char msg[256], b[6][32], rows[64];
	int fd = bcs_ctl_connect(), err;
	size_t i, n;

	if (fd < 0) {
		json_object_put(o);
		fprintf(stderr, "bcsctl: stats global: bcsd does not run here\n");
		return BCSCTL_EXIT_FAIL;
	}
	json_object_object_add(o, "cmd", json_object_new_string("slices"));
	json_object_object_add(o, "last", json_object_new_int64(req->last));
	err = bcs_ctl_call(fd, o, &resp, STATS_TIMEOUT_MS, msg, sizeof(msg));
	close(fd);
	if (err) {
		fprintf(stderr, "bcsctl: stats global: %s\n", msg);
		return BCSCTL_EXIT_FAIL;
	}
	json_object_object_del(resp, "ok");
	if (req->json) {
		printf("%s\n", json_object_to_json_string_ext(resp,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
		json_object_put(resp);
		return BCSCTL_EXIT_OK;
	}
	if (!json_object_object_get_ex(resp, "slices", &a))
		a = NULL;
	n = a ? json_object_array_length(a) : 0;
	printf("%12s %4s %12s %10s %5s %5s %5s %11s %11s %9s  %s\n",
	       "slice", "row", "interval_ms", "lead_ms", "nodes", "late",
	       "pred", "end_max_ms", "end_min_ms", "heard_ms", "rows_run");
	for (i = 0; i < n; i++) {
		int64_t lead;

		r = json_object_array_get_idx(a, i);
		lead = bcs_ctl_int(r, "deadline_ns", 0) -
		       bcs_ctl_int(r, "sent_ns", 0);
		/* A slice the master skipped: no strobe, no lead. */
		if (bcs_ctl_int(r, "skipped", 0))
			snprintf(b[1], sizeof(b[1]), "skipped");
		else
			snprintf(b[1], sizeof(b[1]), "%.3f",
				 (double)lead / 1e6);
		if (bcs_ctl_row(r) == BCS_ROW_NONE)
			snprintf(b[0], sizeof(b[0]), "-");
		else
			snprintf(b[0], sizeof(b[0]), "%u", bcs_ctl_row(r));
		printf("%12lld %4s %12s %10s %5lld %5lld %5lld %11s %11s %9s  %s\n",
		       (long long)bcs_ctl_int(r, "slice", 0), b[0],
		       fmt_ms(b[2], sizeof(b[2]), r, "interval_ns"), b[1],
		       (long long)bcs_ctl_int(r, "nodes", 0),
		       (long long)bcs_ctl_int(r, "late", 0),
		       (long long)bcs_ctl_int(r, "predicted", 0),
		       fmt_ms(b[3], sizeof(b[3]), r, "end_max_ns"),
		       fmt_ms(b[4], sizeof(b[4]), r, "end_min_ns"),
		       fmt_ms(b[5], sizeof(b[5]), r, "heard_after_ns"),
		       fmt_rows(rows, sizeof(rows), r));
	}
	if (bcs_ctl_int(resp, "unknown", 0))
		printf("(%lld switch summaries of slices not held were dropped)\n",
		       (long long)bcs_ctl_int(resp, "unknown", 0));
	json_object_put(resp);
	return BCSCTL_EXIT_OK;
}

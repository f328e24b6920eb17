// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing of control-socket requests.  Anyone may write to the socket,
 * so nothing is taken on trust: the message must be exactly one JSON
 * object, and every number must be an integer in the range of the field
 * it fills (json_object_get_int64() would read "5", 1.9 and true as
 * numbers, and a cast to 32 bits would turn job 2^32 + 1 into job 1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <linux/bcs.h>
#include <linux/bcs_hist.h>

#include "ctl/ctl_req.h"
#include "proto/proto.h"

static const struct {
	const char *name;
	enum ctl_cmd cmd;
} ctl_cmds[] = {
	{ "status",	 CTL_STATUS },
	{ "job-list",	 CTL_JOB_LIST },
	{ "job-create",	 CTL_JOB_CREATE },
	{ "job-destroy", CTL_JOB_DESTROY },
	{ "job-row",	 CTL_JOB_ROW },
	{ "job-wait",	 CTL_JOB_WAIT },
	{ "stats",	 CTL_STATS },
	{ "window",	 CTL_WINDOW },
	{ "window-clear", CTL_WINDOW_CLEAR },
	{ "slices",	 CTL_SLICES },
	{ "job-signal",	 CTL_JOB_SIGNAL },
	{ "job-attach",	 CTL_JOB_ATTACH },
	{ "mpi-gather",	 CTL_MPI_GATHER },
};

/*
 * Integer member @key of @in in [@min, @max] into @out, left alone if
 * absent.  0, or -EINVAL with a message in @err.
 */
static int get_int(struct json_object *in, const char *key, int64_t min,
		   int64_t max, int64_t *out, char *err, size_t errlen)
{
	struct json_object *v;
	int64_t x;

	/* Left out or null: the default (null is no row for "row"). */
	if (!json_object_object_get_ex(in, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		goto bad;
	errno = 0;
	x = json_object_get_int64(v);
	/* json-c clamps integers beyond int64_t and says so in errno. */
	if (errno || x < min || x > max)
		goto bad;
	*out = x;
	return 0;
bad:
	snprintf(err, errlen, "\"%s\" must be an integer in %" PRId64 "..%"
		 PRId64, key, min, max);
	return -EINVAL;
}

static const char *const dist_ops[] = {
	[BCS_DIST_ENABLE]	= "enable",
	[BCS_DIST_DISABLE]	= "disable",
	[BCS_DIST_RELEASE]	= "release",
};

_Static_assert(CTL_MPI_SEL_LEN == BCSP_MPI_SEL_LEN,
	       "an MPI selection of a request fits a datagram's");

/* The MPI statistics of stats @in, "mpi" @v, into @req. */
static int get_mpi(struct json_object *in, struct json_object *v,
		   struct ctl_req *req, char *err, size_t errlen)
{
	int64_t sub_bits = -1, metrics = 0;
	const char *sel;

	if (req->dist_op == BCS_DIST_RELEASE) {
		snprintf(err, errlen, "stats release takes no \"mpi\"");
		return -EINVAL;
	}
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "\"mpi\" must be a string");
		return -EINVAL;
	}
	sel = json_object_get_string(v);
	if (strlen(sel) >= CTL_MPI_SEL_LEN) {
		snprintf(err, errlen, "\"mpi\" is longer than %d bytes",
			 CTL_MPI_SEL_LEN - 1);
		return -EINVAL;
	}
	if (req->dist_op == BCS_DIST_ENABLE && !*sel) {
		snprintf(err, errlen, "stats enable needs an \"mpi\" selection");
		return -EINVAL;
	}
	if (get_int(in, "metrics", 0, 0, &metrics, err, errlen) ||
	    get_int(in, "sub_bits", -1,
		    req->dist_op == BCS_DIST_ENABLE ? BCS_HIST_SUB_BITS_MAX : -1,
		    &sub_bits, err, errlen))
		return -EINVAL;
	req->mpi = 1;
	req->mpi_sub_bits = (int)sub_bits;
	snprintf(req->mpi_sel, sizeof(req->mpi_sel), "%s", sel);
	return 0;
}

_Static_assert(CTL_SUBSETS_MAX == BCSP_JOB_SUBSETS_MAX,
	       "a request's subsets fit a datagram's");

/* Subset @o of "subsets" into @s: 0, or -EINVAL with @err. */
static int get_subset(struct json_object *o, struct ctl_subset *s, char *err,
		      size_t errlen)
{
	struct json_object *v, *a, *b;
	int64_t pid = 0, lo, hi;
	const char *name;

	memset(s, 0, sizeof(*s));
	if (!json_object_is_type(o, json_type_object))
		goto bad;
	if (json_object_object_get_ex(o, "ranks", &v)) {
		if (json_object_object_length(o) != 1 ||
		    !json_object_is_type(v, json_type_array) ||
		    json_object_array_length(v) != 2)
			goto bad;
		a = json_object_array_get_idx(v, 0);
		b = json_object_array_get_idx(v, 1);
		if (!a || !b || !json_object_is_type(a, json_type_int) ||
		    !json_object_is_type(b, json_type_int))
			goto bad;
		errno = 0;
		lo = json_object_get_int64(a);
		hi = json_object_get_int64(b);
		if (errno || lo < 0 || lo > hi || hi > BCSP_RANK_MAX) {
			snprintf(err, errlen, "\"ranks\" must be [A, B] with 0 <= A <= B <= %d",
				 BCSP_RANK_MAX);
			return -EINVAL;
		}
		s->a = (uint32_t)lo;
		s->b = (uint32_t)hi;
		return 0;
	}
	if (json_object_object_length(o) != 2 ||
	    !json_object_object_get_ex(o, "node", &v) ||
	    !json_object_is_type(v, json_type_string))
		goto bad;
	name = json_object_get_string(v);
	if (!*name || strlen(name) >= sizeof(s->node)) {
		snprintf(err, errlen, "\"node\" must be 1 to %d bytes",
			 CTL_NODE_NAME_LEN - 1);
		return -EINVAL;
	}
	if (!json_object_object_get_ex(o, "pid", &v) || !v ||
	    get_int(o, "pid", 1, BCSP_PID_MAX, &pid, err, errlen))
		return -EINVAL;
	snprintf(s->node, sizeof(s->node), "%s", name);
	s->b = (uint32_t)pid;
	return 0;
bad:
	snprintf(err, errlen, "each of \"subsets\" must be {\"ranks\": [A, B]} or {\"node\": NAME, \"pid\": P}");
	return -EINVAL;
}

/* "subsets" of a stats enable into @req: 0, or -EINVAL with @err. */
static int get_subsets(struct json_object *in, struct ctl_req *req,
		       char *err, size_t errlen)
{
	struct json_object *v;
	size_t n, i;

	if (!json_object_object_get_ex(in, "subsets", &v) || !v)
		return 0;
	if (req->dist_op != BCS_DIST_ENABLE) {
		snprintf(err, errlen, "only stats enable takes \"subsets\"");
		return -EINVAL;
	}
	n = json_object_is_type(v, json_type_array) ?
	    json_object_array_length(v) : 0;
	if (!n || n > CTL_SUBSETS_MAX) {
		snprintf(err, errlen, "\"subsets\" must be an array of 1 to %d subsets",
			 CTL_SUBSETS_MAX);
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		if (get_subset(json_object_array_get_idx(v, i),
			       &req->subsets[i], err, errlen))
			return -EINVAL;
	req->nr_subsets = (uint32_t)n;
	return 0;
}

/* The statistics fields of @in into @req: 0, or -EINVAL with @err. */
static int get_stats(struct json_object *in, struct ctl_req *req, char *err,
		     size_t errlen)
{
	int64_t metrics = 0, sub_bits = 0;
	struct json_object *v;
	const char *op;
	uint32_t i;

	if (!req->job) {
		snprintf(err, errlen, "stats needs a job");
		return -EINVAL;
	}
	if (!json_object_object_get_ex(in, "op", &v) ||
	    !json_object_is_type(v, json_type_string))
		goto bad_op;
	op = json_object_get_string(v);
	for (i = 0; i < sizeof(dist_ops) / sizeof(dist_ops[0]); i++)
		if (!strcmp(op, dist_ops[i]))
			break;
	if (i == sizeof(dist_ops) / sizeof(dist_ops[0]))
		goto bad_op;
	req->dist_op = i;
	if (json_object_object_get_ex(in, "mpi", &v) && v) {
		if (json_object_object_get_ex(in, "subsets", NULL)) {
			snprintf(err, errlen, "\"mpi\" takes no \"subsets\": the MPI selection is the job's");
			return -EINVAL;
		}
		return get_mpi(in, v, req, err, errlen);
	}
	if (get_subsets(in, req, err, errlen))
		return -EINVAL;
	if (get_int(in, "metrics", i == BCS_DIST_RELEASE ? 0 : 1,
		    i == BCS_DIST_RELEASE ? 0 : BCS_DIST_ALL, &metrics, err,
		    errlen) ||
	    get_int(in, "sub_bits", 0,
		    i == BCS_DIST_ENABLE ? BCS_HIST_SUB_BITS_MAX : 0,
		    &sub_bits, err, errlen))
		return -EINVAL;
	if (i != BCS_DIST_RELEASE && !metrics) {
		snprintf(err, errlen, "stats %s needs \"metrics\"", op);
		return -EINVAL;
	}
	req->metrics = (uint32_t)metrics;
	req->sub_bits = (uint32_t)sub_bits;
	return 0;
bad_op:
	snprintf(err, errlen, "\"op\" must be enable, disable or release");
	return -EINVAL;
}

/* The window's slices of @in into @req: 0, or -EINVAL with @err. */
static int get_window(struct json_object *in, struct ctl_req *req,
		      char *err, size_t errlen)
{
	int64_t from = -1, to = -1;

	if (get_int(in, "from", 0, INT64_MAX, &from, err, errlen) ||
	    get_int(in, "to", 0, INT64_MAX, &to, err, errlen))
		return -EINVAL;
	if (from < 0 || to < 0 || from > to) {
		snprintf(err, errlen, "window needs \"from\" <= \"to\"");
		return -EINVAL;
	}
	req->from = (uint64_t)from;
	req->to = (uint64_t)to;
	return 0;
}

int ctl_parse(const char *buf, size_t len, struct ctl_req *req, char *err,
	      size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *in = NULL, *v;
	int64_t job = 0, row = -1, timeout = CTL_WAIT_DEFAULT_MS;
	int64_t last = CTL_SLICES_DEFAULT;
	const char *cmd;
	size_t i, end;
	int ret = -EINVAL;

	memset(req, 0, sizeof(*req));
	snprintf(err, errlen, "malformed request");
	if (len > CTL_MSG_MAX || memchr(buf, '\0', len))
		return -EINVAL;
	tok = json_tokener_new();
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	in = json_tokener_parse_ex(tok, buf, (int)len);
	end = in ? json_tokener_get_parse_end(tok) : 0;
	while (end < len && strchr(" \t\r\n", buf[end]))
		end++;
	/* One complete object and nothing but white space after it. */
	if (!in || json_tokener_get_error(tok) != json_tokener_success ||
	    end != len ||
	    !json_object_is_type(in, json_type_object) ||
	    !json_object_object_get_ex(in, "cmd", &v) ||
	    !json_object_is_type(v, json_type_string))
		goto out;
	cmd = json_object_get_string(v);
	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		if (!strcmp(cmd, ctl_cmds[i].name))
			break;
	if (i == sizeof(ctl_cmds) / sizeof(ctl_cmds[0])) {
		snprintf(err, errlen, "unknown command");
		goto out;
	}
	req->cmd = ctl_cmds[i].cmd;
	if (get_int(in, "job", 0, UINT32_MAX, &job, err, errlen) ||
	    get_int(in, "row", -1, (int64_t)BCS_ROW_NONE - 1, &row, err,
		    errlen) ||
	    get_int(in, "timeout_ms", 0, INT64_MAX, &timeout, err, errlen) ||
	    get_int(in, "last", 1, UINT32_MAX, &last, err, errlen))
		goto out;
	if (json_object_object_get_ex(in, "nodes", &v) && v) {
		if (req->cmd != CTL_JOB_CREATE) {
			snprintf(err, errlen, "only job-create takes \"nodes\"");
			goto out;
		}
		if (!json_object_is_type(v, json_type_string) ||
		    !json_object_get_string_len(v) ||
		    json_object_get_string_len(v) >= CTL_NODES_LEN) {
			snprintf(err, errlen,
				 "\"nodes\" must be a hostlist of 1 to %d bytes",
				 CTL_NODES_LEN - 1);
			goto out;
		}
		snprintf(req->nodes, sizeof(req->nodes), "%s",
			 json_object_get_string(v));
	}
	if (json_object_object_get_ex(in, "owner", &v) && v) {
		int64_t owner = 0;

		if (req->cmd != CTL_JOB_CREATE) {
			snprintf(err, errlen, "only job-create takes \"owner\"");
			goto out;
		}
		/* A uid: (uid_t)-1 is none (BCSP_OWNER_NONE). */
		if (get_int(in, "owner", 0, (int64_t)UINT32_MAX - 1, &owner,
			    err, errlen))
			goto out;
		req->owner = (uint32_t)owner;
	}
	if (req->cmd == CTL_JOB_SIGNAL) {
		int64_t sig = 0;

		if (!job) {
			snprintf(err, errlen, "job-signal needs a job");
			goto out;
		}
		if (get_int(in, "signal", 1, BCSP_SIGNAL_MAX, &sig, err,
			    errlen))
			goto out;
		if (!sig) {
			snprintf(err, errlen, "job-signal needs \"signal\"");
			goto out;
		}
		req->signal = (uint32_t)sig;
	}
	if (req->cmd == CTL_JOB_ATTACH) {
		int64_t node = 0, pid = 0;

		if (!job) {
			snprintf(err, errlen, "job-attach needs a job");
			goto out;
		}
		if (get_int(in, "node", 1, UINT32_MAX, &node, err, errlen) ||
		    get_int(in, "pid", 1, BCSP_PID_MAX, &pid, err, errlen))
			goto out;
		if (!node || !pid) {
			snprintf(err, errlen, "job-attach needs \"node\" and \"pid\"");
			goto out;
		}
		req->node = (uint32_t)node;
		req->pid = (uint32_t)pid;
	}
	/* Nothing would ever answer a wait for job 0. */
	if (req->cmd == CTL_JOB_WAIT && !job) {
		snprintf(err, errlen, "job-wait needs a job");
		goto out;
	}
	if (req->cmd == CTL_MPI_GATHER && !job) {
		snprintf(err, errlen, "mpi-gather needs a job");
		goto out;
	}
	if (req->cmd == CTL_MPI_GATHER) {
		int64_t files = 0;

		if (get_int(in, "files", 0, 1, &files, err, errlen))
			goto out;
		req->files = (int)files;
	}
	req->job = (uint32_t)job;
	req->row = row < 0 ? BCS_ROW_NONE : (uint32_t)row;
	req->timeout_ms = (uint64_t)timeout;
	req->last = (uint64_t)last;
	if ((req->cmd == CTL_STATS && get_stats(in, req, err, errlen)) ||
	    (req->cmd == CTL_WINDOW && get_window(in, req, err, errlen)))
		goto out;
	ret = 0;
out:
	json_object_put(in);
	json_tokener_free(tok);
	if (ret)
		memset(req, 0, sizeof(*req));
	else if (errlen)
		err[0] = '\0';
	return ret;
}

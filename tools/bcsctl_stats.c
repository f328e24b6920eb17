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

#include <unistd.h>

#include <bcs.h>
#include <json-c/json.h>

#include "bcsctl.h"
#include "bcsctl_cluster.h"
#include "numparse.h"

#define STATS_TIMEOUT_MS	5000

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

/*
 * Through bcsd to every node of the cluster, from the slice the master
 * names: the whole job only (pids are this node's).
 */
static int stats_cluster(int fd, const struct bcsctl_req *req,
			 const char *what)
{
	struct json_object *o = json_object_new_object(), *resp;
	char msg[256];
	int err;

	json_object_object_add(o, "cmd", json_object_new_string("stats"));
	json_object_object_add(o, "job", json_object_new_int64(req->job));
	json_object_object_add(o, "op",
			       json_object_new_string(op_name(req->dist_op)));
	if (req->dist_op != BCS_DIST_RELEASE)
		json_object_object_add(o, "metrics",
				       json_object_new_int64(req->metrics));
	if (req->dist_op == BCS_DIST_ENABLE)
		json_object_object_add(o, "sub_bits",
				       json_object_new_int64(req->sub_bits));
	err = cluster_call(fd, o, &resp, STATS_TIMEOUT_MS, msg, sizeof(msg));
	close(fd);
	if (err) {
		fprintf(stderr, "bcsctl: %s: %s\n", what, msg);
		return BCSCTL_EXIT_FAIL;
	}
	json_object_put(resp);
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
	if (!req->nr_pids) {
		fd = cluster_connect();
		if (fd >= 0)
			return stats_cluster(fd, req, what);
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

// SPDX-License-Identifier: GPL-2.0
/*
 * bcsctl stats: per-task distributions (BCS_IOC_DIST_CTL), enabled,
 * disabled and released at run time for a job or some of its threads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <bcs.h>

#include "bcsctl.h"
#include "numparse.h"

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

int bcsctl_run_stats(const struct bcsctl_req *req)
{
	int32_t *pids = NULL;
	struct bcs *h;
	char what[64];
	int i, err;

	snprintf(what, sizeof(what), "stats %s %u", op_name(req->dist_op),
		 req->job);
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

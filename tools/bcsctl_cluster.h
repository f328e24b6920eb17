/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsctl's client of bcsd's control socket.  When bcsd runs on this host,
 * job commands act on the whole cluster through it.
 */
#ifndef BCS_TOOLS_BCSCTL_CLUSTER_H
#define BCS_TOOLS_BCSCTL_CLUSTER_H

#include <stdint.h>

struct json_object;

#define BCSD_CONTROL_SOCKET	"/run/bcs/bcsd.sock"
#define BCSD_ENV_SOCKET		"BCS_CONTROL_SOCKET"

/*
 * Labels of jobs: BCS_LABEL_DIR/<job id> holds one line naming what the
 * job is on this node ("slurm 42.0": Slurm job 42, step 0, written by the
 * SPANK plugin on each node that runs a task of the step); `bcsctl job
 * list` shows it.  Nothing else is kept about it.
 */
#define BCS_LABEL_DIR		"/run/bcs/labels"
#define BCS_LABEL_MAX		64
#define BCS_ENV_LABEL_DIR	"BCS_LABEL_DIR"	/* bcsctl's, for tests */

/*
 * Connect to bcsd ($BCS_CONTROL_SOCKET, else the default path; an empty
 * variable means "never").  Returns a file descriptor, or -1 when no bcsd
 * listens.
 */
int cluster_connect(void);

/*
 * Send @req (consumed) and wait up to @timeout_ms for the answer.  Returns
 * 0 with *@resp set when bcsd answered ok, a negative errno otherwise
 * (bcsd's "error", with its message copied to @msg).
 */
int cluster_call(int fd, struct json_object *req, struct json_object **resp,
		 int timeout_ms, char *msg, size_t msglen);

/* Field @key of @o as an integer, @def if missing. */
int64_t cluster_int(struct json_object *o, const char *key, int64_t def);
/* Field "row" of @o: null (or none) is BCS_ROW_NONE. */
uint32_t cluster_row(struct json_object *o);

#endif /* BCS_TOOLS_BCSCTL_CLUSTER_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Requests on bcsd's control socket (see ctl.c): parsed by a pure
 * function, so that the host unit tests and the fuzzer (daemon/fuzz/)
 * reach every path of it without a daemon.
 */
#ifndef BCSD_CTL_REQ_H
#define BCSD_CTL_REQ_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bcs_ctl.h>

#define CTL_MSG_MAX		BCS_CTL_MSG_MAX	/* longest request */
#define CTL_WAIT_DEFAULT_MS	5000	/* job-wait without timeout_ms */
#define CTL_SLICES_DEFAULT	100	/* slices without last */
#define CTL_MPI_SEL_LEN		256	/* BCSP_MPI_SEL_LEN of proto.h */
#define CTL_NODES_LEN		1024	/* HOSTLIST_LEN_MAX of hostlist.h + 1 */

enum ctl_cmd {
	CTL_STATUS = 1,
	CTL_JOB_LIST,
	CTL_JOB_CREATE,		/* root only, as the next two */
	CTL_JOB_DESTROY,
	CTL_JOB_ROW,
	CTL_JOB_WAIT,
	CTL_STATS,		/* root only, as the next two */
	CTL_WINDOW,
	CTL_WINDOW_CLEAR,
	CTL_SLICES,		/* anyone: the master's global records */
	CTL_JOB_SIGNAL,		/* root only: a signal to a job's tasks */
	CTL_JOB_ATTACH,		/* root only: a process of a node to a job */
	CTL_MPI_GATHER,		/* anyone: a job's MPI statistics files */
	__CTL_CMD_MAX,
};

/* Subsets of a stats enable: BCSP_JOB_SUBSETS_MAX of proto.h. */
#define CTL_SUBSETS_MAX		32
#define CTL_NODE_NAME_LEN	256	/* HOSTLIST_NAME_MAX of hostlist.h + 1 */

/* A subset: ranks @a .. @b (@node ""), or pid @b on node @node. */
struct ctl_subset {
	uint32_t a, b;
	char node[CTL_NODE_NAME_LEN];
};

struct ctl_req {
	enum ctl_cmd cmd;
	uint32_t job;		/* 0 if not given (create: the master picks) */
	uint32_t row;		/* BCS_ROW_NONE if not given or -1 */
	uint64_t timeout_ms;	/* job-wait */
	uint32_t dist_op;	/* stats: enum bcs_dist_op */
	uint32_t metrics;	/* stats: 1 << enum bcs_dist_metric */
	uint32_t sub_bits;	/* stats: the resolution of an enable */
	uint64_t from, to;	/* window: first and last slice */
	uint64_t last;		/* slices: how many, the newest */
	uint32_t signal;	/* job-signal: 1 .. BCSP_SIGNAL_MAX */
	uint32_t node;		/* job-attach: the node, at least 1 */
	uint32_t pid;		/* job-attach: 1 .. BCSP_PID_MAX */
	int mpi;		/* stats: "mpi" given, the job's MPI processes */
	int mpi_sub_bits;	/* stats with mpi: "sub_bits", or -1: keep it */
	char mpi_sel[CTL_MPI_SEL_LEN];	/* stats with mpi: "" keeps it */
	char nodes[CTL_NODES_LEN];	/* job-create: a hostlist, or "" */
	uint32_t owner;		/* job-create: the job's owner, a uid; 0: root */
	int files;		/* mpi-gather: "files" 1, every rank's file */
	uint32_t nr_subsets;	/* stats enable: "subsets", 0: the whole job */
	struct ctl_subset subsets[CTL_SUBSETS_MAX];
};

/*
 * Parse request @buf of @len bytes: one JSON object with a string "cmd"
 * and, as the command takes them, integers "job" (0 .. 2^32 - 1; at
 * least 1 for job-wait and stats), "row" (-1 .. 2^32 - 2) and
 * "timeout_ms" (>= 0); for stats a string "op" (enable, disable,
 * release) and integers "metrics" (1 .. BCS_DIST_ALL, 0 for release)
 * and "sub_bits" (0 .. BCS_HIST_SUB_BITS_MAX); for window integers
 * "from" and "to" (0 .. 2^63 - 1, from <= to); for slices an integer
 * "last" (1 .. 2^32 - 1, CTL_SLICES_DEFAULT if absent); for job-signal
 * a job (at least 1) and an integer "signal" (1 .. BCSP_SIGNAL_MAX);
 * for job-attach a job (at least 1) and integers "node" (1 .. 2^32 - 1)
 * and "pid" (1 .. BCSP_PID_MAX); for mpi-gather a job (at least 1)
 * and an integer "files" (0 or 1; 1: each rank's file, gathered flat,
 * not merged in the tree);
 * for job-create a string "nodes" (a hostlist, 1 .. CTL_NODES_LEN - 1
 * bytes, expanded by the caller), the nodes the job will run on, and an
 * integer "owner" (0 .. 2^32 - 2), the uid that will own it (0: root).
 * A stats enable or disable with a string "mpi" acts on the job's MPI
 * processes (libbcsmpi's control file on every node of the job) instead
 * of bcs.ko's distributions: "mpi" is the selection (BCS_MPI_STATS
 * syntax, at most CTL_MPI_SEL_LEN - 1 bytes, checked by the caller; ""
 * keeps it), "sub_bits" the resolution (left out: kept), no "metrics".
 * A stats enable without "mpi" may have "subsets", an array of 1 ..
 * CTL_SUBSETS_MAX objects, each {"ranks": [A, B]} (MPI ranks A .. B,
 * 0 <= A <= B <= 16777215) or {"node": NAME, "pid": P} (a node's name or
 * id, 1 .. CTL_NODE_NAME_LEN - 1 bytes, resolved by the caller, and
 * P 1 .. BCSP_PID_MAX): the job's tasks it records, not all of them.
 * Returns 0, or -EINVAL with a message for the client in @err.
 */
int ctl_parse(const char *buf, size_t len, struct ctl_req *req, char *err,
	      size_t errlen);

#endif /* BCSD_CTL_REQ_H */

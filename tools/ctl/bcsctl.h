/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsctl: command table, parsed request and the run functions.
 *
 * Parsing (bcsctl_parse.c) is kept apart from execution (bcsctl_run.c) so
 * that the unit tests can check every accepted and rejected command line
 * without a module.
 */
#ifndef BCS_TOOLS_BCSCTL_H
#define BCS_TOOLS_BCSCTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses. */
#define BCSCTL_EXIT_OK		0
#define BCSCTL_EXIT_FAIL	1
#define BCSCTL_EXIT_USAGE	2
#define BCSCTL_EXIT_NOEXEC	126	/* run: CMD found but not runnable */
#define BCSCTL_EXIT_NOTFOUND	127	/* run: CMD not found */

/* Results of bcsctl_parse(). */
enum bcsctl_parse_result {
	BCSCTL_PARSE_USAGE = -1,	/* bad command line, see req->err */
	BCSCTL_PARSE_OK = 0,		/* run req->cmd */
	BCSCTL_PARSE_HELP,		/* -h: help for req->cmd, or all */
	BCSCTL_PARSE_VERSION,		/* --version */
};

/* Default lead time of `bcsctl strobe` without --now, microseconds. */
#define BCSCTL_STROBE_LEAD_US	1000

struct bcsctl_cmd;

/*
 * Subsets of a stats enable through bcsd (--rank LIST, --pid NODE:PID):
 * BCSP_JOB_SUBSETS_MAX of daemon/proto/proto.h, and its highest rank.
 */
#define BCSCTL_SUBSETS_MAX	32
#define BCSCTL_RANK_MAX		16777215
#define BCSCTL_NODE_NAME_MAX	255
#define BCSCTL_PID_MAX		4194304	/* BCSP_PID_MAX */

/* Ranks @a .. @b (@node NULL), or pid @b of node @node. */
struct bcsctl_subset {
	uint32_t a, b;
	char *node;		/* points into argv, its ':' made a NUL */
};

struct bcsctl_req {
	const struct bcsctl_cmd *cmd;
	uint32_t job;		/* job id (1 ..) */
	uint32_t id;		/* job create --id, 0: let the module pick */
	uint32_t row;		/* BCS_ROW_NONE unless given */
	int has_row;
	int create;		/* run --create */
	int mpi_stats;		/* run --mpi-stats: preload libbcsmpi */
	int no_attach;		/* run --no-attach: without the module */
	int thread;		/* attach/detach --thread */
	uint32_t node;		/* attach --node, 0: this node's bcs.ko */
	uint32_t mode;		/* mode: enum bcs_mode */
	int has_watchdog;
	uint32_t watchdog;	/* slices */
	uint64_t slice_us;	/* slice set */
	int has_slice;
	uint64_t slice;		/* strobe --slice */
	int now;		/* strobe --now */
	uint64_t lead_us;	/* strobe --in */
	char **pids;		/* attach/detach: validated pid arguments */
	const char *nodes;	/* job create --nodes: a hostlist, or NULL */
	const char *owner;	/* job create --owner: a user or uid, or NULL */
	int filler;		/* job filler: 1 on, 0 off */
	int nr_pids;
	char **cmd_argv;	/* run: NULL-terminated command */
	int json;		/* status, job list, stats: --json */
	int window;		/* stats window: 1 arm, -1 clear, 0 show */
	uint64_t from_slice;	/* stats window --from-slice */
	uint64_t to_slice;	/* stats window --to-slice */
	uint64_t last;		/* stats global --last */
	int cluster;		/* status --cluster */
	int signal;		/* job signal */
	uint32_t dist_op;	/* stats: enum bcs_dist_op */
	uint32_t metrics;	/* stats: 1 << enum bcs_dist_metric */
	uint32_t sub_bits;	/* stats enable: log2 of --resolution */
	int has_resolution;	/* stats enable: --resolution given */
	const char *mpi;	/* stats --mpi: the selection ("" disable) */
	int nr_subsets;		/* stats enable --rank, --pid NODE:PID */
	struct bcsctl_subset subsets[BCSCTL_SUBSETS_MAX];
	const char *group;	/* help or error for a group ("job") */
	char err[256];		/* message for BCSCTL_PARSE_USAGE */
};

#define BCSCTL_GLOBAL_LAST	20	/* stats global without --last */

struct bcsctl_cmd {
	const char *group;	/* first word ("job"), or NULL */
	const char *name;	/* the (next) word */
	const char *args;	/* synopsis of the arguments */
	const char *help;	/* one line */
	int admin;		/* needs CAP_SYS_ADMIN */
	int (*parse)(struct bcsctl_req *req, int argc, char **argv);
	int (*run)(const struct bcsctl_req *req);
};

/* The single table driving parsing, dispatch and help. */
extern const struct bcsctl_cmd bcsctl_cmds[];
extern const size_t bcsctl_nr_cmds;

/* Parse argv (argv[0] is the program) into @req. */
int bcsctl_parse(int argc, char **argv, struct bcsctl_req *req);
/*
 * Full usage (@cmd and @group NULL), one command's usage and help, or the
 * commands of one group ("job").
 */
void bcsctl_usage(FILE *f, const struct bcsctl_cmd *cmd, const char *group);
/* bash's completion of bcsctl, from the same table. */
void bcsctl_completion(FILE *f);

/* Run functions (bcsctl_run.c): return an exit status. */
int bcsctl_run_status(const struct bcsctl_req *req);
int bcsctl_run_job_create(const struct bcsctl_req *req);
int bcsctl_run_job_destroy(const struct bcsctl_req *req);
int bcsctl_run_job_signal(const struct bcsctl_req *req);
int bcsctl_run_job_list(const struct bcsctl_req *req);
int bcsctl_run_job_attach(const struct bcsctl_req *req);
int bcsctl_run_job_detach(const struct bcsctl_req *req);
int bcsctl_run_job_row(const struct bcsctl_req *req);
int bcsctl_run_job_filler(const struct bcsctl_req *req);
int bcsctl_run_run(const struct bcsctl_req *req);
int bcsctl_run_slice_set(const struct bcsctl_req *req);
int bcsctl_run_slice_get(const struct bcsctl_req *req);
int bcsctl_run_completion(const struct bcsctl_req *req);
int bcsctl_run_mode(const struct bcsctl_req *req);
int bcsctl_run_strobe(const struct bcsctl_req *req);
/*
 * Rank list @s ("0-3,17") into @req's subsets, a range per item: 0, or -1
 * with a message in @req->err.
 */
int bcsctl_parse_ranks(struct bcsctl_req *req, const char *s);
/*
 * "NODE:PID" @s into @req's subsets (@s is cut at the ':'): 1 if it is
 * one, 0 if @s has no ':' (a pid of this node), -1 with a message in
 * @req->err.
 */
int bcsctl_parse_node_pid(struct bcsctl_req *req, char *s);

/* bcsctl_stats.c */
int bcsctl_run_stats(const struct bcsctl_req *req);
int bcsctl_run_stats_window(const struct bcsctl_req *req);
int bcsctl_run_stats_global(const struct bcsctl_req *req);

#endif /* BCS_TOOLS_BCSCTL_H */

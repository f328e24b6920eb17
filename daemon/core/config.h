/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsd configuration: one table of options (config.c), with defaults and
 * ranges, parsed once into the typed struct cfg.  The file is read as
 * "name value" lines; the command line overrides it with --name=value.
 * The rest of bcsd reads the fields of struct cfg and never looks an
 * option up by name.
 */
#ifndef BCSD_CONFIG_H
#define BCSD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The largest cluster: bcsd keeps a replay window and a report per node,
 * and the master each job's tasks per node; also the largest quorum.
 */
#define BCSD_MAX_NODES		1024

/* The longest string option, with its '\0'. */
#define CFG_STR_MAX		256

enum cfg_role {
	CFG_ROLE_NODE,		/* follows strobes */
	CFG_ROLE_MASTER,	/* sends them */
	CFG_ROLE_BOTH,
};

enum cfg_transport {
	CFG_TRANSPORT_MULTICAST,	/* the master's datagrams to the group */
	CFG_TRANSPORT_TREE,		/* down the tree of nodes_file */
};

enum cfg_sync {
	CFG_SYNC_ALL,		/* a subtree's sum when all have said */
	CFG_SYNC_TIMEOUT,	/* or tree_sync_ms after the first */
	CFG_SYNC_NONE,		/* each summary on as it comes */
};

enum cfg_switch_reports {
	CFG_SWITCHES_PERIOD,	/* once per report_ms */
	CFG_SWITCHES_SLICE,	/* each slice's, at the next strobe */
};

enum cfg_matrix {
	CFG_MATRIX_PACK,	/* rows by where jobs run (matrix.c) */
	CFG_MATRIX_ROW,		/* a row per job, or the emptiest of @rows */
};

enum cfg_log {
	CFG_LOG_STDERR,
	CFG_LOG_SYSLOG,
};

/* Words of struct cfg's from_cmdline: room for 128 options. */
#define CFG_CMDLINE_WORDS	2

struct cfg {
	enum cfg_role role;
	uint32_t cluster;
	uint32_t node_id;		/* 0: derived from the host name */
	char group[CFG_STR_MAX];
	uint32_t port;
	char interface[CFG_STR_MAX];
	uint32_t ttl;
	bool multicast_loop;
	uint32_t rcvbuf_kb;
	char key_file[CFG_STR_MAX];
	char key_file_next[CFG_STR_MAX];	/* accepted too (rotation) */
	char key_file_old[CFG_STR_MAX];		/* the same */
	/* The tree of daemons (topo.h). */
	char nodes_file[CFG_STR_MAX];
	uint32_t tree_fanout;
	enum cfg_transport strobe_transport;
	uint32_t tree_reattach_slices;
	enum cfg_sync tree_sync;
	uint32_t tree_sync_ms;
	uint32_t tree_ack_ms;
	uint32_t tree_retries;
	char topology_file[CFG_STR_MAX];
	/* Master. */
	uint32_t slice_us;
	uint32_t lead_us;
	uint32_t strobe_copies;
	uint32_t plan_slices;		/* a strobe per so many slices */
	uint32_t protocol_version;	/* sent; plans only at 4 */
	uint32_t rows;
	enum cfg_matrix matrix;
	bool alternate;
	uint32_t move_interval_ms;
	uint32_t priority;
	uint32_t failover_slices;
	uint32_t quorum;
	/* Node. */
	bool fill;
	uint32_t fill_period_ms;
	uint32_t fill_coarse_ms;
	uint32_t fill_frustrated_pct;
	enum cfg_switch_reports switch_reports;
	uint32_t watchdog_slices;
	bool predict;
	bool expire;
	uint32_t stale_slices;
	uint32_t seq_allowance_ms;
	uint32_t report_ms;
	uint32_t skew_warn_permille;
	char jobs_dir[CFG_STR_MAX];
	uint32_t dump_burst_kb;
	uint32_t dump_rate_kb;
	uint32_t dump_job_ms;
	char jobs_copy_dir[CFG_STR_MAX];
	uint32_t retention_days;
	char mpi_dir[CFG_STR_MAX];
	uint32_t mpi_gather_interval_ms;
	/* Process, control socket, logging. */
	uint32_t rt_priority;
	char control_socket[CFG_STR_MAX];
	uint32_t control_clients;
	uint32_t control_clients_per_user;
	uint32_t control_wait_ms;
	enum cfg_log log;
	uint32_t verbose;
	char stats_file[CFG_STR_MAX];
	char metrics_file[CFG_STR_MAX];
	uint32_t metrics_interval_ms;

	/* bit i % 64 of word i / 64: option i was given there */
	uint64_t from_cmdline[CFG_CMDLINE_WORDS];
};

enum cfg_type {
	CFG_UINT,	/* uint32_t, decimal within [min, max] */
	CFG_BOOL,	/* bool, 0 or 1 */
	CFG_ENUM,	/* an enum, one of @choices by name */
	CFG_STR,	/* char[CFG_STR_MAX] */
};

struct cfg_opt {
	const char *name;
	enum cfg_type type;
	size_t offset;			/* of its field in struct cfg */
	const char *defval;
	uint64_t min, max;		/* CFG_UINT */
	const char *const *choices;	/* CFG_ENUM: names by value, NULL ends */
	const char *help;
};

extern const struct cfg_opt cfg_opts[];
extern const unsigned int cfg_nr_opts;

/* The defaults; a default the table refuses is a bug and aborts. */
void cfg_init(struct cfg *cfg);
const char *cfg_role_name(enum cfg_role role);
/*
 * The node id of host @host when node_id is 0 (derived from the host
 * name): FNV-1a of the name, never 0.  bcsd's own, and the one ctl.c
 * gives a host name of a node list that nothing else names.
 */
uint32_t cfg_node_id_of(const char *host);
const char *cfg_transport_name(enum cfg_transport t);
/* The index of option @name in cfg_opts[], or -1. */
int cfg_find(const char *name);
/* Set option @name; returns 0 or -1 with a message in @err. */
int cfg_set(struct cfg *cfg, const char *name, const char *value,
	    bool from_cmdline, char *err, size_t errlen);
/* Read "name value" lines; command-line values win.  0 or -1 with @err. */
int cfg_read_file(struct cfg *cfg, const char *path, bool must_exist,
		  char *err, size_t errlen);
/* The same from stream @f, named @path in messages. */
int cfg_read_stream(struct cfg *cfg, FILE *f, const char *path, char *err,
		    size_t errlen);
/* Does a reload (SIGHUP) apply option @i?  Else it needs a restart. */
bool cfg_is_live(unsigned int i);
/* Option @i's value as the file and the command line write it. */
void cfg_format(const struct cfg *cfg, unsigned int i, char *buf,
		size_t len);
/*
 * getopt_long() entries of the options, one per option with @val_base + i
 * as its value, into @opts (room for cfg_nr_opts); returns cfg_nr_opts.
 */
struct option;
unsigned int cfg_longopts(struct option *opts, int val_base);
void cfg_print_help(FILE *f);
/* "name = value" lines, which cfg_read_stream() reads back the same. */
void cfg_dump(const struct cfg *cfg, FILE *f);

#endif /* BCSD_CONFIG_H */

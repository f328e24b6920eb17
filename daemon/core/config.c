// SPDX-License-Identifier: GPL-2.0
/*
 * The option table of bcsd.  Every option can be set in the configuration
 * file as "name value" and on the command line as --name=value; the table
 * gives both their field in struct cfg, defaults, ranges and help, and is
 * parsed once: the daemon reads the typed fields from then on.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs.h>
#include <linux/bcs_ctl.h>

#include "core/config.h"
#include "proto/proto.h"

/* Ranges that are bcsd's own, not the kernel's. */
#define SLICES_MAX		100000U		/* failover, stale */
#define REPORT_MS_MIN		10U
#define HOUR_MS			3600000U	/* report, control wait */
#define CONTROL_CLIENTS_MAX	4096U
#define RT_PRIORITY_MAX		99U		/* SCHED_FIFO */
#define STROBE_COPIES_MAX	8U
#define RCVBUF_KB_MIN		64U
#define RCVBUF_KB_MAX		65536U
#define VERBOSE_MAX		2U
#define TREE_RETRIES_MAX	16U
#define RETENTION_DAYS_MAX	36500U

/*
 * The offset of field @f of struct cfg, which must be of type @T: a
 * field of another type does not compile (negative array size).
 */
#define FIELD(f, T)							\
	(offsetof(struct cfg, f) +					\
	 0 * sizeof(char[_Generic(((struct cfg *)0)->f, T: 1, default: -1)]))

#define OPT_UINT(n, def, lo, hi, h)					\
	{ #n, CFG_UINT, FIELD(n, uint32_t), def, lo, hi, NULL, h }
#define OPT_BOOL(n, def, h)						\
	{ #n, CFG_BOOL, FIELD(n, bool), def, 0, 1, NULL, h }
#define OPT_ENUM(n, T, def, names, h)					\
	{ #n, CFG_ENUM, FIELD(n, T), def, 0, 0, names, h }
/* A string field is char[CFG_STR_MAX]. */
#define FIELD_STR(f)							\
	(offsetof(struct cfg, f) +					\
	 0 * sizeof(char[sizeof(((struct cfg *)0)->f) == CFG_STR_MAX &&	\
			 _Generic(((struct cfg *)0)->f, char *: 1,	\
				  default: 0) ? 1 : -1]))

#define OPT_STR(n, def, h)						\
	{ #n, CFG_STR, FIELD_STR(n), def, 0, 0, NULL, h }

static const char *const role_names[] = {
	[CFG_ROLE_NODE] = "node", [CFG_ROLE_MASTER] = "master",
	[CFG_ROLE_BOTH] = "both", NULL
};

static const char *const transport_names[] = {
	[CFG_TRANSPORT_MULTICAST] = "multicast",
	[CFG_TRANSPORT_TREE] = "tree",
	NULL,
};

static const char *const sync_names[] = {
	[CFG_SYNC_ALL] = "all",
	[CFG_SYNC_TIMEOUT] = "timeout",
	[CFG_SYNC_NONE] = "none",
	NULL,
};

static const char *const switch_report_names[] = {
	[CFG_SWITCHES_PERIOD] = "period",
	[CFG_SWITCHES_SLICE] = "slice",
	NULL,
};

static const char *const matrix_names[] = {
	[CFG_MATRIX_PACK] = "pack", [CFG_MATRIX_ROW] = "row", NULL
};

static const char *const log_names[] = {
	[CFG_LOG_STDERR] = "stderr", [CFG_LOG_SYSLOG] = "syslog", NULL
};

const struct cfg_opt cfg_opts[] = {
	OPT_ENUM(role, enum cfg_role, "node", role_names,
		 "node follows strobes; master sends them; both does both"),
	OPT_UINT(cluster, "1", 1, UINT32_MAX,
		 "cluster id; datagrams of other clusters are ignored"),
	OPT_UINT(node_id, "0", 0, UINT32_MAX,
		 "this node's id (0: derived from the host name)"),
	OPT_STR(group, "239.255.66.83",
		"IPv4 multicast group of strobes and maps"),
	OPT_UINT(port, "5399", 1, UINT16_MAX,
		 "UDP port of the multicast group and of the master's requests"),
	OPT_STR(interface, "",
		"network interface for multicast (empty: the kernel chooses)"),
	OPT_UINT(ttl, "1", 1, UINT8_MAX,
		 "multicast TTL (1: do not leave the link)"),
	OPT_BOOL(multicast_loop, "0",
		 "hand this daemon's multicast datagrams to this host's own sockets too (IP_MULTICAST_LOOP): only for several daemons, or a program listening to the group, in one network namespace (0: a sender is spared receiving its own)"),
	OPT_UINT(rcvbuf_kb, "1024", RCVBUF_KB_MIN, RCVBUF_KB_MAX,
		 "UDP receive buffer in KiB (SO_RCVBUF; the kernel reports twice that)"),
	OPT_STR(key_file, "/etc/bcs/cluster.key",
		"shared cluster key, 32 bytes or 64 hex digits, mode 0600: datagrams are signed with it"),
	OPT_STR(key_file_next, "",
		"key rotation, first step: the next cluster key, also accepted from other daemons, not signed with (empty: none; not with key_file_old)"),
	OPT_STR(key_file_old, "",
		"key rotation, second step: the previous cluster key, still accepted from other daemons, not signed with (empty: none; not with key_file_next)"),
	OPT_STR(nodes_file, "",
		"the cluster's nodes as \"ID HOST[:PORT]\" lines, over which the tree of daemons is made (empty: no tree)"),
	OPT_UINT(tree_fanout, "32", 1, BCSD_MAX_NODES,
		 "children of each daemon in the k-ary tree over nodes_file"),
	OPT_UINT(tree_reattach_slices, "3", 1, SLICES_MAX,
		 "node: slices without the master's datagrams from its parent before it asks an ancestor"),
	OPT_ENUM(tree_sync, enum cfg_sync, "timeout", sync_names,
		 "when a daemon sends its subtree's sums up: all (every node said), timeout (or tree_sync_ms after the first), none (at once)"),
	OPT_UINT(tree_sync_ms, "1000", 0, HOUR_MS,
		 "tree_sync timeout: how long a subtree's sum waits for the rest"),
	OPT_UINT(tree_ack_ms, "20", 1, 10000,
		 "strobe_transport tree: send a command again to a child that has not acknowledged it after this many ms"),
	OPT_UINT(tree_retries, "4", 0, TREE_RETRIES_MAX,
		 "strobe_transport tree: send a command again so many times at most (0: once, no acknowledgements awaited)"),
	OPT_ENUM(strobe_transport, enum cfg_transport, "multicast",
		 transport_names,
		 "how the master's datagrams reach the nodes: multicast (the group) or tree (down the tree of nodes_file)"),
	OPT_STR(topology_file, "",
		"the tree as MRNet's \"host:idx => child:idx ... ;\" (empty: the k-ary tree)"),
	OPT_UINT(slice_us, "10000", BCS_SLICE_NS_MIN / 1000,
		 BCS_SLICE_NS_MAX / 1000,
		 "master: length of a time slice in microseconds"),
	OPT_UINT(lead_us, "3000", 0, BCS_SLICE_NS_MAX / 1000,
		 "master: send each strobe this long before its deadline (< 4 slices)"),
	OPT_UINT(strobe_copies, "2", 1, STROBE_COPIES_MAX,
		 "send each strobe this many times, within the first half of the lead; down a tree, ask for a lost one this many times less one"),
	OPT_UINT(plan_slices, "1", 1, BCS_PLAN_SLICES_MAX / 2,
		 "master: one strobe per this many slices, a plan of twice as many that the nodes' bcs.ko switch off their own clocks (1: a strobe per slice, no plans)"),
	OPT_UINT(protocol_version, "4", BCSP_VERSION_MIN, BCSP_VERSION,
		 "the wire protocol's version this daemon sends (it reads 3 and 4): 3 while a cluster is upgraded from daemons of version 3, which refuse 4; plans (plan_slices) only at 4"),
	OPT_UINT(rows, "0", 0, BCS_ROWS_MAX,
		 "master: the most rows of the matrix (0: 64)"),
	OPT_ENUM(matrix, enum cfg_matrix, "pack", matrix_names,
		 "master: jobs to rows: pack (jobs on disjoint nodes share a row) or row (a row per job; with rows N the emptiest of N)"),
	OPT_BOOL(alternate, "1",
		 "master: a job also runs in every row where its nodes are otherwise idle"),
	OPT_UINT(move_interval_ms, "10000", 0, HOUR_MS,
		 "master: a job is moved to a lower row at most once per this (ms)"),
	OPT_BOOL(fill, "1",
		 "node: jobs classified as not needing coscheduling (coarse-grained or frustrated) run in the rows where this node is otherwise idle"),
	OPT_UINT(fill_period_ms, "1000", REPORT_MS_MIN, HOUR_MS,
		 "node, fill: how often the jobs are classified again (ms)"),
	OPT_UINT(fill_coarse_ms, "100", 1, HOUR_MS,
		 "node, fill: a job whose mean CPU burst between sleeps is this long or longer is coarse-grained (ms)"),
	OPT_UINT(fill_frustrated_pct, "50", 1, 100,
		 "node, fill: a fine-grained job blocked this share of its time or more is frustrated (%)"),
	OPT_UINT(priority, "100", 1, UINT16_MAX,
		 "master: the highest priority wins a take-over, and between live masters of one epoch"),
	OPT_UINT(failover_slices, "20", 2, SLICES_MAX,
		 "standby master: take over after this many slices of silence"),
	OPT_UINT(quorum, "0", 0, BCSD_MAX_NODES,
		 "standby master: take over only while this many nodes report, down a tree answer its probes (0: more than half of those heard, of the nodes file)"),
	OPT_UINT(watchdog_slices, "10", 1, BCS_WATCHDOG_MAX,
		 "node: bcs.ko fails open after this many slices without strobe"),
	OPT_BOOL(predict, "1",
		 "node: give bcs.ko the row of the slice after each strobe, which runs if that slice's strobe is lost (0: off)"),
	OPT_BOOL(expire, "1",
		 "node: a strobe's row (and its prediction's) ends with its slice: no gang runs in a slice no strobe reached (0: the last row runs on)"),
	OPT_UINT(stale_slices, "4", 1, SLICES_MAX,
		 "node: ignore strobes whose deadline passed this many slices ago"),
	OPT_UINT(seq_allowance_ms, "10000", 2000, HOUR_MS,
		 "accept the first datagram of a sender (none heard since start, or for a minute) only if its sequence number, its sender's clock, is at most this far behind ours: a replay of one captured earlier is refused (more than the clocks' skew)"),
	OPT_UINT(report_ms, "1000", REPORT_MS_MIN, HOUR_MS,
		 "node: how often to report local tasks to the master"),
	OPT_ENUM(switch_reports, enum cfg_switch_reports, "period",
		 switch_report_names,
		 "node: when to tell the master how its switches went: period (every report_ms), slice (each slice's as the next strobe comes: the master's global record of a slice is complete within about a slice, at one datagram per slice and node, added up down a tree)"),
	OPT_UINT(skew_warn_permille, "100", 0, 1000000,
		 "master, with nodes_file: warn about a node whose clock may be further from the master's than this many thousandths of a slice (0: never)"),
	OPT_STR(jobs_dir, "/var/lib/bcs/jobs",
		"node: write each job's statistics here as JOB-HOST.json when it ends (empty: keep them in bcs.ko)"),
	OPT_UINT(dump_burst_kb, "16384", 256, 4194304,
		 "node: the dumps to jobs_dir written at once at most (KB; each counts 256 at least): a budget that refills at dump_rate_kb; a dump over it is refused, counted, and its statistics stay in bcs.ko"),
	OPT_UINT(dump_rate_kb, "256", 1, 4194304,
		 "node: the dumps' budget refills at this many KB a second"),
	OPT_UINT(dump_job_ms, "10000", 0, HOUR_MS,
		 "node: a job is dumped at most once in this many ms when its last task ends (its dump when destroyed is limited by the budget alone)"),
	OPT_STR(jobs_copy_dir, "",
		"node: copy each job's dump here (a shared directory) when the job is destroyed, off the loop, as JOB-HOST.json (empty: no copies)"),
	OPT_UINT(retention_days, "30", 0, RETENTION_DAYS_MAX,
		 "node: remove the dumps in jobs_dir, and the MPI statistics files and directories of jobs gone in mpi_dir, older than this many days, checked every hour (0: keep them)"),
	OPT_STR(mpi_dir, "/run/bcs/mpi",
		"node: the MPI statistics of jobs, BCS_MPI_DIR of their processes: a directory JOB per job with tasks here, the job's user's, with the control file JOB.control (bcsctl stats enable --mpi) bcsd's"),
	OPT_UINT(mpi_gather_interval_ms, "5000", 0, HOUR_MS,
		 "the shortest time between two gathers of one job's MPI statistics (bcsstat mpi --job) asked on this node by users other than root"),
	OPT_UINT(rt_priority, "40", 0, RT_PRIORITY_MAX,
		 "SCHED_FIFO priority, memory locked (0: run as an ordinary task)"),
	OPT_STR(control_socket, BCSD_CONTROL_SOCKET,
		"Unix socket on which bcsctl talks to bcsd"),
	OPT_UINT(control_clients, "128", 2, CONTROL_CLIENTS_MAX,
		 "connections to the control socket at once, one of them kept for root"),
	OPT_UINT(control_clients_per_user, "32", 1, CONTROL_CLIENTS_MAX,
		 "connections to the control socket at once per user other than root"),
	OPT_UINT(control_wait_ms, "60000", 0, HOUR_MS,
		 "the longest a bcsctl may wait for a job to reach this node"),
	OPT_ENUM(log, enum cfg_log, "stderr", log_names, "where messages go"),
	OPT_UINT(verbose, "0", 0, VERBOSE_MAX,
		 "0: notices, 1: info, 2: debug"),
	OPT_STR(stats_file, "",
		"write counters here as JSON on SIGUSR1 and at exit"),
	OPT_STR(metrics_file, "",
		"write the counters and state here in the Prometheus text format (for node_exporter's textfile collector: a name ending in .prom) every metrics_interval_ms and on SIGUSR1; removed at exit (empty: none)"),
	OPT_UINT(metrics_interval_ms, "15000", 1000, HOUR_MS,
		 "how often metrics_file is written (ms)"),
};

const unsigned int cfg_nr_opts = sizeof(cfg_opts) / sizeof(cfg_opts[0]);

/*
 * The options a reload (SIGHUP) applies to the running daemon: each is
 * read where it is used, never copied into a part's state at its start.
 * The others need a restart; a reload keeps their values.
 */
static const char *const live_opts[] = {
	"key_file", "key_file_next", "key_file_old", "stale_slices",
	"seq_allowance_ms", "predict", "expire", "fill_period_ms",
	"tree_sync", "tree_sync_ms", "tree_ack_ms", "tree_retries",
	"skew_warn_permille", "control_clients_per_user", "control_wait_ms",
	"mpi_gather_interval_ms", "verbose", "stats_file", "protocol_version",
};

bool cfg_is_live(unsigned int i)
{
	unsigned int k;

	for (k = 0; k < sizeof(live_opts) / sizeof(live_opts[0]); k++)
		if (!strcmp(live_opts[k], cfg_opts[i].name))
			return true;
	return false;
}

_Static_assert(sizeof(cfg_opts) / sizeof(cfg_opts[0]) <=
	       8 * sizeof(((struct cfg *)0)->from_cmdline),
	       "struct cfg's from_cmdline has a bit per option");
_Static_assert(sizeof(enum cfg_role) == sizeof(unsigned int) &&
	       sizeof(enum cfg_log) == sizeof(unsigned int),
	       "enum options are stored as unsigned int");

uint32_t cfg_node_id_of(const char *host)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	const char *p;

	for (p = host; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h ? h : 1;
}

const char *cfg_role_name(enum cfg_role role)
{
	return role_names[role];
}

const char *cfg_transport_name(enum cfg_transport t)
{
	return transport_names[t];
}

int cfg_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < cfg_nr_opts; i++)
		if (!strcmp(cfg_opts[i].name, name))
			return (int)i;
	return -1;
}

static void *field(struct cfg *cfg, const struct cfg_opt *o)
{
	return (char *)cfg + o->offset;
}

static const void *cfield(const struct cfg *cfg, const struct cfg_opt *o)
{
	return (const char *)cfg + o->offset;
}

/* "a|b|c" of @o's choices, for messages and help. */
static const char *choices_str(const struct cfg_opt *o, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; o->choices[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? "|" : "", o->choices[i]);
	return buf;
}

/* Parse @value for option @o into its field of @cfg. */
static int parse(struct cfg *cfg, const struct cfg_opt *o, const char *value,
		 char *err, size_t errlen)
{
	unsigned long long v;
	char names[64], *end;
	unsigned int e;
	uint32_t u;
	bool b;

	if (strlen(value) >= CFG_STR_MAX) {
		snprintf(err, errlen, "%s: value too long", o->name);
		return -1;
	}
	switch (o->type) {
	case CFG_UINT:
	case CFG_BOOL:
		errno = 0;
		v = strtoull(value, &end, 10);
		if (errno || end == value || *end || value[0] == '-' ||
		    v < o->min || v > o->max) {
			snprintf(err, errlen, "%s: '%s' is not a number in %" PRIu64
				 "..%" PRIu64, o->name, value, o->min, o->max);
			return -1;
		}
		if (o->type == CFG_BOOL) {
			b = v;
			memcpy(field(cfg, o), &b, sizeof(b));
		} else {
			u = (uint32_t)v;
			memcpy(field(cfg, o), &u, sizeof(u));
		}
		return 0;
	case CFG_ENUM:
		for (e = 0; o->choices[e]; e++)
			if (!strcmp(o->choices[e], value))
				break;
		if (!o->choices[e]) {
			snprintf(err, errlen, "%s: '%s' is not one of %s",
				 o->name, value,
				 choices_str(o, names, sizeof(names)));
			return -1;
		}
		memcpy(field(cfg, o), &e, sizeof(e));
		return 0;
	case CFG_STR:
		memset(field(cfg, o), 0, CFG_STR_MAX);
		memcpy(field(cfg, o), value, strlen(value));
		return 0;
	}
	abort();
}

void cfg_init(struct cfg *cfg)
{
	char err[256];
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < cfg_nr_opts; i++) {
		if (parse(cfg, &cfg_opts[i], cfg_opts[i].defval, err,
			  sizeof(err))) {
			fprintf(stderr, "bcsd: bug: default of %s\n", err);
			abort();
		}
	}
}

int cfg_set(struct cfg *cfg, const char *name, const char *value,
	    bool from_cmdline, char *err, size_t errlen)
{
	int i = cfg_find(name);

	if (i < 0) {
		snprintf(err, errlen, "unknown option '%s'", name);
		return -1;
	}
	if ((cfg->from_cmdline[i / 64] & (1ULL << (i % 64))) && !from_cmdline)
		return 0;	/* the command line wins */
	if (parse(cfg, &cfg_opts[i], value, err, errlen))
		return -1;
	if (from_cmdline)
		cfg->from_cmdline[i / 64] |= 1ULL << (i % 64);
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int cfg_read_stream(struct cfg *cfg, FILE *f, const char *path, char *err,
		    size_t errlen)
{
	char line[512], msg[256], *name, *value, *hash;
	unsigned int lineno = 0;

	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path, lineno);
			return -1;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		name = trim(line);
		if (!*name)
			continue;
		value = name + strcspn(name, " \t=");
		if (*value) {
			*value++ = '\0';
			value = trim(value);
			if (*value == '=')
				value = trim(value + 1);
		}
		if (cfg_set(cfg, name, value, false, msg, sizeof(msg))) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, msg);
			return -1;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int cfg_read_file(struct cfg *cfg, const char *path, bool must_exist,
		  char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	ret = cfg_read_stream(cfg, f, path, err, errlen);
	fclose(f);
	return ret;
}

void cfg_format(const struct cfg *cfg, unsigned int i, char *buf, size_t len)
{
	const struct cfg_opt *o = &cfg_opts[i];
	unsigned int e;
	uint32_t u;
	bool b;

	switch (o->type) {
	case CFG_UINT:
		memcpy(&u, cfield(cfg, o), sizeof(u));
		snprintf(buf, len, "%" PRIu32, u);
		return;
	case CFG_BOOL:
		memcpy(&b, cfield(cfg, o), sizeof(b));
		snprintf(buf, len, "%d", b);
		return;
	case CFG_ENUM:
		memcpy(&e, cfield(cfg, o), sizeof(e));
		snprintf(buf, len, "%s", o->choices[e]);
		return;
	case CFG_STR:
		snprintf(buf, len, "%s", (const char *)cfield(cfg, o));
		return;
	}
	abort();
}

unsigned int cfg_longopts(struct option *opts, int val_base)
{
	unsigned int i;

	for (i = 0; i < cfg_nr_opts; i++)
		opts[i] = (struct option){ cfg_opts[i].name, required_argument,
					   NULL, val_base + (int)i };
	return cfg_nr_opts;
}

void cfg_print_help(FILE *f)
{
	const struct cfg_opt *o;
	char names[64];
	unsigned int i;

	for (i = 0; i < cfg_nr_opts; i++) {
		o = &cfg_opts[i];
		fprintf(f, "  --%s=%s\n      %s (default \"%s\"", o->name,
			o->type == CFG_ENUM ? choices_str(o, names, sizeof(names)) :
			o->type == CFG_STR ? "STR" : "N", o->help, o->defval);
		if (o->type == CFG_UINT || o->type == CFG_BOOL)
			fprintf(f, ", %" PRIu64 "..%" PRIu64, o->min, o->max);
		fprintf(f, ")\n");
	}
}

void cfg_dump(const struct cfg *cfg, FILE *f)
{
	char value[CFG_STR_MAX];
	unsigned int i;

	/*
	 * "name = value": a value that begins with '=' ("interface ==x" is
	 * "=x") would lose it as "name =x" (found by fuzz_config).
	 */
	for (i = 0; i < cfg_nr_opts; i++) {
		cfg_format(cfg, i, value, sizeof(value));
		fprintf(f, "%s = %s\n", cfg_opts[i].name, value);
	}
}

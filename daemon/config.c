// SPDX-License-Identifier: GPL-2.0
/*
 * The option table of bcsd.  Every option can be set in the configuration
 * file as "name value" and on the command line as --name=value; the table
 * gives both their defaults, ranges and help.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define U32MAX	4294967295ULL

const struct cfg_opt cfg_opts[] = {
	{ "role", CFG_STR, "node", 0, 0, "node|master|both",
	  "node follows strobes; master sends them; both does both" },
	{ "cluster", CFG_UINT, "1", 1, U32MAX, NULL,
	  "cluster id; datagrams of other clusters are ignored" },
	{ "node_id", CFG_UINT, "0", 0, U32MAX, NULL,
	  "this node's id (0: derived from the host name)" },
	{ "group", CFG_STR, "239.255.66.83", 0, 0, NULL,
	  "IPv4 multicast group of strobes and maps" },
	{ "port", CFG_UINT, "5399", 1, 65535, NULL,
	  "UDP port of the multicast group and of the master's requests" },
	{ "interface", CFG_STR, "", 0, 0, NULL,
	  "network interface for multicast (empty: the kernel chooses)" },
	{ "ttl", CFG_UINT, "1", 1, 255, NULL,
	  "multicast TTL (1: do not leave the link)" },
	{ "rcvbuf_kb", CFG_UINT, "1024", 64, 65536, NULL,
	  "UDP receive buffer in KiB (SO_RCVBUF; the kernel reports twice that)" },
	{ "key_file", CFG_STR, "/etc/bcs/cluster.key", 0, 0, NULL,
	  "shared cluster key, 32 bytes or 64 hex digits, mode 0600" },
	{ "slice_us", CFG_UINT, "10000", 50, 10000000, NULL,
	  "master: length of a time slice in microseconds" },
	{ "lead_us", CFG_UINT, "3000", 0, 10000000, NULL,
	  "master: send each strobe this long before its deadline (< 4 slices)" },
	{ "strobe_copies", CFG_UINT, "2", 1, 8, NULL,
	  "master: send each strobe this many times, within the first half of the lead" },
	{ "rows", CFG_UINT, "0", 0, 64, NULL,
	  "master: rows of the matrix (0: one per job, as many as needed)" },
	{ "priority", CFG_UINT, "100", 1, 65535, NULL,
	  "master: the highest priority wins a take-over, and between live masters of one epoch" },
	{ "failover_slices", CFG_UINT, "20", 2, 100000, NULL,
	  "standby master: take over after this many slices of silence" },
	{ "quorum", CFG_UINT, "0", 0, 1024, NULL,
	  "standby master: take over only while this many nodes report (0: more than half of those heard)" },
	{ "watchdog_slices", CFG_UINT, "10", 1, 100000, NULL,
	  "node: bcs.ko fails open after this many slices without strobe" },
	{ "predict", CFG_UINT, "1", 0, 1, NULL,
	  "node: give bcs.ko the row of the slice after each strobe, which runs if that slice's strobe is lost (0: off)" },
	{ "expire", CFG_UINT, "1", 0, 1, NULL,
	  "node: a strobe's row (and its prediction's) ends with its slice: no gang runs in a slice no strobe reached (0: the last row runs on)" },
	{ "stale_slices", CFG_UINT, "4", 1, 100000, NULL,
	  "node: ignore strobes whose deadline passed this many slices ago" },
	{ "report_ms", CFG_UINT, "1000", 10, 3600000, NULL,
	  "node: how often to report local tasks to the master" },
	{ "rt_priority", CFG_UINT, "40", 0, 99, NULL,
	  "SCHED_FIFO priority, memory locked (0: run as an ordinary task)" },
	{ "control_socket", CFG_STR, "/run/bcs/bcsd.sock", 0, 0, NULL,
	  "Unix socket on which bcsctl talks to bcsd" },
	{ "control_clients", CFG_UINT, "128", 2, 4096, NULL,
	  "connections to the control socket at once, one of them kept for root" },
	{ "control_clients_per_user", CFG_UINT, "32", 1, 4096, NULL,
	  "connections to the control socket at once per user other than root" },
	{ "control_wait_ms", CFG_UINT, "60000", 0, 3600000, NULL,
	  "the longest a bcsctl may wait for a job to reach this node" },
	{ "log", CFG_STR, "stderr", 0, 0, "stderr|syslog",
	  "where messages go" },
	{ "verbose", CFG_UINT, "0", 0, 2, NULL,
	  "0: notices, 1: info, 2: debug" },
	{ "stats_file", CFG_STR, "", 0, 0, NULL,
	  "write counters here as JSON on SIGUSR1 and at exit" },
};

const unsigned int cfg_nr_opts = sizeof(cfg_opts) / sizeof(cfg_opts[0]);

_Static_assert(sizeof(cfg_opts) / sizeof(cfg_opts[0]) <= 32,
	       "struct cfg holds 32 options");

static int cfg_index(const char *name)
{
	unsigned int i;

	for (i = 0; i < cfg_nr_opts; i++)
		if (!strcmp(cfg_opts[i].name, name))
			return (int)i;
	return -1;
}

void cfg_init(struct cfg *cfg)
{
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < cfg_nr_opts; i++)
		snprintf(cfg->values[i], CFG_VALUE_MAX, "%s", cfg_opts[i].defval);
}

static bool in_choices(const char *choices, const char *v)
{
	size_t n = strlen(v);
	const char *p = choices;

	while (p && *p) {
		if (!strncmp(p, v, n) && (p[n] == '|' || !p[n]))
			return n > 0;
		p = strchr(p, '|');
		if (p)
			p++;
	}
	return false;
}

int cfg_set(struct cfg *cfg, const char *name, const char *value,
	    bool from_cmdline, char *err, size_t errlen)
{
	int i = cfg_index(name);
	const struct cfg_opt *o;
	unsigned long long v;
	char *end;

	if (i < 0) {
		snprintf(err, errlen, "unknown option '%s'", name);
		return -1;
	}
	o = &cfg_opts[i];
	if (cfg->set[i] && !from_cmdline)
		return 0;	/* the command line wins */
	if (strlen(value) >= CFG_VALUE_MAX) {
		snprintf(err, errlen, "%s: value too long", name);
		return -1;
	}
	if (o->type == CFG_UINT) {
		errno = 0;
		v = strtoull(value, &end, 10);
		if (errno || end == value || *end || value[0] == '-' ||
		    v < o->min || v > o->max) {
			snprintf(err, errlen, "%s: '%s' is not a number in %" PRIu64
				 "..%" PRIu64, name, value, o->min, o->max);
			return -1;
		}
	} else if (o->choices && !in_choices(o->choices, value)) {
		snprintf(err, errlen, "%s: '%s' is not one of %s", name, value,
			 o->choices);
		return -1;
	}
	snprintf(cfg->values[i], CFG_VALUE_MAX, "%s", value);
	if (from_cmdline)
		cfg->set[i] = true;
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

uint64_t cfg_uint(const struct cfg *cfg, const char *name)
{
	int i = cfg_index(name);

	return i < 0 ? 0 : strtoull(cfg->values[i], NULL, 10);
}

const char *cfg_str(const struct cfg *cfg, const char *name)
{
	int i = cfg_index(name);

	return i < 0 ? "" : cfg->values[i];
}

void cfg_print_help(FILE *f)
{
	const struct cfg_opt *o;
	unsigned int i;

	for (i = 0; i < cfg_nr_opts; i++) {
		o = &cfg_opts[i];
		fprintf(f, "  --%s=%s\n      %s (default \"%s\"", o->name,
			o->type == CFG_UINT ? "N" : (o->choices ? o->choices : "STR"),
			o->help, o->defval);
		if (o->type == CFG_UINT)
			fprintf(f, ", %" PRIu64 "..%" PRIu64, o->min, o->max);
		fprintf(f, ")\n");
	}
}

void cfg_dump(const struct cfg *cfg, FILE *f)
{
	unsigned int i;

	/*
	 * "name = value": a value that begins with '=' ("interface ==x" is
	 * "=x") would lose it as "name =x" (found by fuzz_config).
	 */
	for (i = 0; i < cfg_nr_opts; i++)
		fprintf(f, "%s = %s\n", cfg_opts[i].name, cfg->values[i]);
}

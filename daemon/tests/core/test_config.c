// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the option table: defaults, ranges, choices, the
 * configuration file format, and command-line precedence.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bcs.h>

#include "core/config.h"
#include "tests/unit.h"

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* Every option lands in its typed field, with the kernel's ranges. */
static void test_typed(void)
{
	char err[256], buf[CFG_STR_MAX], big[CFG_STR_MAX + 1];
	struct cfg cfg;
	unsigned int i;

	cfg_init(&cfg);
	CHECK(cfg.log == CFG_LOG_STDERR && cfg.predict && cfg.expire);
	CHECK(cfg.rows == 0 && cfg.watchdog_slices == 10);
	CHECK(!strcmp(cfg.key_file, "/etc/bcs/cluster.key"));
	CHECK(cfg_find("role") == 0 && cfg_find("nonsense") < 0);
	CHECK(!strcmp(cfg_role_name(CFG_ROLE_MASTER), "master"));
	/* Each default reads back as the table gives it. */
	for (i = 0; i < cfg_nr_opts; i++) {
		cfg_format(&cfg, i, buf, sizeof(buf));
		CHECK(!strcmp(buf, cfg_opts[i].defval));
	}
	CHECK(cfg_set(&cfg, "log", "syslog", true, err, sizeof(err)) == 0);
	CHECK(cfg.log == CFG_LOG_SYSLOG);
	CHECK(cfg_set(&cfg, "predict", "0", true, err, sizeof(err)) == 0);
	CHECK(!cfg.predict);
	CHECK(cfg_set(&cfg, "expire", "2", true, err, sizeof(err)) < 0);
	snprintf(buf, sizeof(buf), "%u", BCS_ROWS_MAX);
	CHECK(cfg_set(&cfg, "rows", buf, true, err, sizeof(err)) == 0);
	CHECK(cfg.rows == BCS_ROWS_MAX);
	snprintf(buf, sizeof(buf), "%u", BCS_ROWS_MAX + 1);
	CHECK(cfg_set(&cfg, "rows", buf, true, err, sizeof(err)) < 0);
	snprintf(buf, sizeof(buf), "%u", BCS_WATCHDOG_MAX + 1);
	CHECK(cfg_set(&cfg, "watchdog_slices", buf, true, err,
		      sizeof(err)) < 0);
	snprintf(buf, sizeof(buf), "%llu", BCS_SLICE_NS_MAX / 1000);
	CHECK(cfg_set(&cfg, "slice_us", buf, true, err, sizeof(err)) == 0);
	CHECK(cfg.slice_us == BCS_SLICE_NS_MAX / 1000);
	CHECK(cfg_set(&cfg, "cluster", "4294967295", true, err,
		      sizeof(err)) == 0);
	CHECK(cfg.cluster == 4294967295U);
	CHECK(cfg_set(&cfg, "cluster", "4294967296", true, err,
		      sizeof(err)) < 0);
	memset(big, 'x', CFG_STR_MAX);
	big[CFG_STR_MAX] = '\0';
	CHECK(cfg_set(&cfg, "interface", big, true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "too long") != NULL);
	big[CFG_STR_MAX - 1] = '\0';
	CHECK(cfg_set(&cfg, "interface", big, true, err, sizeof(err)) == 0);
	CHECK(strlen(cfg.interface) == CFG_STR_MAX - 1);
	CHECK(cfg_set(&cfg, "interface", "lo", true, err, sizeof(err)) == 0);
	CHECK(!strcmp(cfg.interface, "lo"));
}

/* The tree of daemons: no tree by default, a fan-out up to every node. */
static void test_tree(void)
{
	char err[256], buf[16];
	struct cfg cfg;

	cfg_init(&cfg);
	CHECK(!strcmp(cfg.nodes_file, "") && !strcmp(cfg.topology_file, ""));
	CHECK(cfg.tree_fanout == 32);
	CHECK(cfg_set(&cfg, "tree_fanout", "0", true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "tree_fanout: '0' is not a number in 1..1024"));
	snprintf(buf, sizeof(buf), "%d", BCSD_MAX_NODES + 1);
	CHECK(cfg_set(&cfg, "tree_fanout", buf, true, err, sizeof(err)) < 0);
	snprintf(buf, sizeof(buf), "%d", BCSD_MAX_NODES);
	CHECK(cfg_set(&cfg, "tree_fanout", buf, true, err, sizeof(err)) == 0);
	CHECK(cfg.tree_fanout == BCSD_MAX_NODES);
	CHECK(cfg_set(&cfg, "tree_fanout", "1", false, err, sizeof(err)) == 0);
	CHECK(cfg.tree_fanout == BCSD_MAX_NODES);	/* the command line's */
	CHECK(cfg_set(&cfg, "nodes_file", "/etc/bcs/nodes", false, err,
		      sizeof(err)) == 0);
	CHECK(!strcmp(cfg.nodes_file, "/etc/bcs/nodes"));
	CHECK(cfg_set(&cfg, "topology_file", "/etc/bcs/topology", false, err,
		      sizeof(err)) == 0);
	CHECK(!strcmp(cfg.topology_file, "/etc/bcs/topology"));
	/* The clock offsets' warning: 10 % of a slice unless set. */
	CHECK(cfg.skew_warn_permille == 100);
	CHECK(cfg_set(&cfg, "skew_warn_permille", "0", true, err,
		      sizeof(err)) == 0 && cfg.skew_warn_permille == 0);
	CHECK(cfg_set(&cfg, "skew_warn_permille", "1000000", true, err,
		      sizeof(err)) == 0 && cfg.skew_warn_permille == 1000000);
	CHECK(cfg_set(&cfg, "skew_warn_permille", "1000001", true, err,
		      sizeof(err)) < 0);
	CHECK(strstr(err, "skew_warn_permille: '1000001' is not a number in 0..1000000"));
	CHECK(cfg_set(&cfg, "skew_warn_permille", "-1", true, err,
		      sizeof(err)) < 0);
	CHECK(cfg.skew_warn_permille == 1000000);
	/* Every option has a bit of from_cmdline. */
	CHECK(cfg_nr_opts <= 8 * sizeof(cfg.from_cmdline));
	/* A reload applies the keys, not the addresses or the role. */
	CHECK(cfg_is_live((unsigned int)cfg_find("key_file")));
	CHECK(cfg_is_live((unsigned int)cfg_find("key_file_old")));
	CHECK(cfg_is_live((unsigned int)cfg_find("verbose")));
	CHECK(!cfg_is_live((unsigned int)cfg_find("role")));
	CHECK(!cfg_is_live((unsigned int)cfg_find("port")));
	CHECK(!cfg_is_live((unsigned int)cfg_find("slice_us")));
}

int main(void)
{
	char err[256], path[] = "/tmp/bcsd-conf-XXXXXX";
	char stream[] = "role master\nport 0\n";
	struct cfg cfg;
	FILE *f;
	int fd;

	cfg_init(&cfg);
	CHECK(cfg.role == CFG_ROLE_NODE);
	CHECK(cfg.port == 5399);
	CHECK(cfg.slice_us == 10000);

	CHECK(cfg_set(&cfg, "slice_us", "49", true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "50..10000000") != NULL);
	CHECK(cfg_set(&cfg, "slice_us", "-1", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "slice_us", "12abc", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "slice_us", "", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "slice_us", "99999999999999999999999", true, err,
		      sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "port", "0", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "role", "boss", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "role", "mast", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "role", "", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "nonsense", "1", true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "unknown option") != NULL);
	CHECK(cfg_set(&cfg, "role", "both", true, err, sizeof(err)) == 0);
	CHECK(cfg_set(&cfg, "slice_us", "1000", true, err, sizeof(err)) == 0);

	fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(write_file(path, "# comment\n\nrole master   # trailing\n"
			       "slice_us = 500\nport\t6000\ncluster 9\n") == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) == 0);
	/* The command line wins over the file. */
	CHECK(cfg.role == CFG_ROLE_BOTH);
	CHECK(cfg.slice_us == 1000);
	CHECK(cfg.port == 6000);
	CHECK(cfg.cluster == 9);

	CHECK(write_file(path, "port 70000\n") == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) < 0);
	CHECK(strstr(err, ":1:") != NULL);
	CHECK(write_file(path, "bogus 1\n") == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) < 0);

	/*
	 * What --print-config writes reads back the same, also a value
	 * that begins with '=' (fuzz_config, corpus/config/regress-*).
	 */
	cfg_init(&cfg);
	CHECK(write_file(path, "interface ==53\nstats_file = \n") == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) == 0);
	CHECK(!strcmp(cfg.interface, "=53"));
	CHECK(!strcmp(cfg.stats_file, ""));
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		cfg_dump(&cfg, f);
		fclose(f);
	}
	cfg_init(&cfg);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) == 0);
	CHECK(!strcmp(cfg.interface, "=53"));
	CHECK(cfg.port == 5399);

	/* A stream, as the fuzzer reads it: errors name the stream. */
	f = fmemopen(stream, strlen(stream), "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(cfg_read_stream(&cfg, f, "mem", err, sizeof(err)) < 0);
		CHECK(!strncmp(err, "mem:2: ", 7));
		fclose(f);
	}

	unlink(path);
	CHECK(cfg_read_file(&cfg, path, false, err, sizeof(err)) == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) < 0);
	test_typed();
	test_tree();
	return unit_done("test_config");
}

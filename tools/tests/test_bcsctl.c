// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of bcsctl's command-line parser and of the number
 * parsers shared by the tools.  No module is needed: nothing is run.
 */
#define _DEFAULT_SOURCE	/* open_memstream(), strdup(), mkdtemp(), realpath() */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bcs.h>
#include <linux/bcs_hist.h>

#include "bcsctl.h"
#include "bcsctl_mpi.h"
#include "control.h"
#include "numparse.h"

static int passed, failed;

static void check(int ok, const char *what, const char *line)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	fprintf(stderr, "FAIL: %s: '%s'\n", what, line);
}

#define MAX_ARGS 32

/* Split @line at blanks into a NULL-terminated, writable argv. */
struct args {
	char buf[512];
	char *argv[MAX_ARGS + 1];
	int argc;
};

static void split(struct args *a, const char *line)
{
	char *p;

	snprintf(a->buf, sizeof(a->buf), "bcsctl %s", line);
	a->argc = 0;
	for (p = strtok(a->buf, " "); p && a->argc < MAX_ARGS;
	     p = strtok(NULL, " "))
		a->argv[a->argc++] = p;
	a->argv[a->argc] = NULL;
}

static int parse(const char *line, struct bcsctl_req *req, struct args *a)
{
	split(a, line);
	return bcsctl_parse(a->argc, a->argv, req);
}

static const char *cmd_name(const struct bcsctl_req *req, char *buf,
			    size_t len)
{
	if (!req->cmd)
		return "";
	snprintf(buf, len, "%s%s%s", req->cmd->group ? req->cmd->group : "",
		 req->cmd->group ? " " : "", req->cmd->name);
	return buf;
}

/* Lines that must parse, to the command named @cmd. */
static void expect_ok(const char *line, const char *cmd)
{
	struct bcsctl_req req;
	struct args a;
	char name[64];
	int r = parse(line, &req, &a);

	check(r == BCSCTL_PARSE_OK, "should parse", line);
	check(!strcmp(cmd_name(&req, name, sizeof(name)), cmd),
	      "wrong command", line);
	if (r != BCSCTL_PARSE_OK)
		fprintf(stderr, "  error: %s\n", req.err);
}

/* Lines that are usage errors, with a message. */
static void expect_usage(const char *line)
{
	struct bcsctl_req req;
	struct args a;
	int r = parse(line, &req, &a);

	check(r == BCSCTL_PARSE_USAGE, "should be a usage error", line);
	check(req.err[0] != '\0', "usage error without message", line);
}

static void expect(const char *line, int result)
{
	struct bcsctl_req req;
	struct args a;

	check(parse(line, &req, &a) == result, "wrong parse result", line);
}

static void test_numbers(void)
{
	uint64_t v = 0;
	uint32_t u = 0;
	int32_t pid = 0;

	check(!parse_u64("0", 0, 10, &v) && v == 0, "u64 0", "0");
	check(!parse_u64("007", 0, 10, &v) && v == 7, "u64 decimal", "007");
	check(!parse_u64("18446744073709551615", 0, UINT64_MAX, &v) &&
	      v == UINT64_MAX, "u64 max", "18446744073709551615");
	check(parse_u64("18446744073709551616", 0, UINT64_MAX, &v) == -ERANGE,
	      "u64 overflow", "18446744073709551616");
	check(parse_u64("", 0, 10, &v) == -EINVAL, "empty", "");
	check(parse_u64(NULL, 0, 10, &v) == -EINVAL, "NULL", "(null)");
	check(parse_u64("-1", 0, UINT64_MAX, &v) == -EINVAL, "sign", "-1");
	check(parse_u64("+1", 0, 10, &v) == -EINVAL, "sign", "+1");
	check(parse_u64(" 1", 0, 10, &v) == -EINVAL, "blank", " 1");
	check(parse_u64("1 ", 0, 10, &v) == -EINVAL, "blank", "1 ");
	check(parse_u64("0x10", 0, 100, &v) == -EINVAL, "hex", "0x10");
	check(parse_u64("1e3", 0, 10000, &v) == -EINVAL, "exp", "1e3");
	check(parse_u64("11", 0, 10, &v) == -ERANGE, "range", "11");
	check(parse_u64("4", 5, 10, &v) == -ERANGE, "range", "4");
	check(!parse_u32("4294967295", 0, UINT32_MAX, &u) && u == UINT32_MAX,
	      "u32 max", "4294967295");
	check(parse_u32("4294967296", 0, UINT32_MAX, &u) == -ERANGE,
	      "u32 overflow", "4294967296");
	check(!parse_job("2147483647", &u) && u == BCS_JOB_ID_MAX,
	      "job max", "2147483647");
	check(parse_job("0", &u) == -ERANGE, "job 0", "0");
	check(parse_job("2147483648", &u) == -ERANGE, "job range",
	      "2147483648");
	check(!parse_row("none", &u) && u == BCS_ROW_NONE, "row none", "none");
	check(!parse_row("63", &u) && u == 63, "row 63", "63");
	check(parse_row("64", &u) == -ERANGE, "row 64", "64");
	check(parse_row("None", &u) == -EINVAL, "row None", "None");
	check(!parse_pid("1", &pid) && pid == 1, "pid 1", "1");
	check(parse_pid("0", &pid) == -ERANGE, "pid 0", "0");
	check(parse_pid("2147483648", &pid) == -ERANGE, "pid range",
	      "2147483648");
}

static void test_values(void)
{
	struct bcsctl_req r;
	struct args a;

	parse("job create", &r, &a);
	check(r.id == 0 && r.row == BCS_ROW_NONE && !r.has_row,
	      "create defaults", "job create");
	parse("job create --id 5 --row 3", &r, &a);
	check(r.id == 5 && r.row == 3, "create values",
	      "job create --id 5 --row 3");
	parse("job create --row=none --id=2147483647", &r, &a);
	check(r.id == BCS_JOB_ID_MAX && r.row == BCS_ROW_NONE && r.has_row,
	      "create = values", "job create --row=none --id=2147483647");
	parse("job create --owner alice --id 3", &r, &a);
	check(r.id == 3 && r.owner && !strcmp(r.owner, "alice"),
	      "create owner", "job create --owner alice --id 3");
	parse("job create --id 3", &r, &a);
	check(!r.owner, "create without owner", "job create --id 3");
	parse("job filler 7 on", &r, &a);
	check(r.job == 7 && r.filler == 1, "filler on", "job filler 7 on");
	parse("job filler 7 off", &r, &a);
	check(r.job == 7 && r.filler == 0, "filler off", "job filler 7 off");

	parse("job destroy 12", &r, &a);
	check(r.job == 12, "destroy job", "job destroy 12");

	parse("job attach 3 100 200", &r, &a);
	check(r.job == 3 && r.nr_pids == 2 && !strcmp(r.pids[0], "100") &&
	      !strcmp(r.pids[1], "200") && !r.thread, "attach pids",
	      "job attach 3 100 200");
	parse("job detach --thread 3 100", &r, &a);
	check(r.job == 3 && r.nr_pids == 1 && !strcmp(r.pids[0], "100") &&
	      r.thread, "detach --thread", "job detach --thread 3 100");
	parse("job attach 3 100 --thread 7", &r, &a);
	check(r.job == 3 && r.nr_pids == 2 && !strcmp(r.pids[1], "7") &&
	      r.thread, "attach --thread inside", "job attach 3 100 --thread 7");

	parse("job attach 3 --node 2 100", &r, &a);
	check(r.job == 3 && r.node == 2 && r.nr_pids == 1 &&
	      !strcmp(r.pids[0], "100"), "attach --node",
	      "job attach 3 --node 2 100");
	parse("job attach 3 100 --node=4294967295 200", &r, &a);
	check(r.job == 3 && r.node == 4294967295u && r.nr_pids == 2 &&
	      !strcmp(r.pids[0], "100") && !strcmp(r.pids[1], "200"),
	      "attach --node= inside", "job attach 3 100 --node=4294967295 200");
	parse("job attach 3 100", &r, &a);
	check(r.node == 0, "attach without --node", "job attach 3 100");

	parse("job row 4 none", &r, &a);
	check(r.job == 4 && r.row == BCS_ROW_NONE, "row none", "job row 4 none");
	parse("job row 4 63", &r, &a);
	check(r.job == 4 && r.row == 63, "row 63", "job row 4 63");

	parse("stats enable 5 --mpi Allreduce --resolution 8", &r, &a);
	check(r.job == 5 && r.mpi && !strcmp(r.mpi, "Allreduce") &&
	      r.has_resolution && r.sub_bits == 3, "stats --mpi values",
	      "stats enable 5 --mpi Allreduce --resolution 8");
	parse("stats enable 5 --mpi on", &r, &a);
	check(!r.has_resolution, "stats --mpi without --resolution",
	      "stats enable 5 --mpi on");
	parse("stats disable 6 --mpi", &r, &a);
	check(r.job == 6 && r.mpi && !*r.mpi &&
	      r.dist_op == BCS_DIST_DISABLE, "stats disable --mpi",
	      "stats disable 6 --mpi");

	parse("run --job 4 -- sleep 1", &r, &a);
	check(r.job == 4 && !r.create && !strcmp(r.cmd_argv[0], "sleep") &&
	      !strcmp(r.cmd_argv[1], "1") && !r.cmd_argv[2], "run argv",
	      "run --job 4 -- sleep 1");
	parse("run --create --row 2 --job=9 mpi_app -h --job 3", &r, &a);
	check(r.job == 9 && r.create && r.row == 2 &&
	      !strcmp(r.cmd_argv[0], "mpi_app") &&
	      !strcmp(r.cmd_argv[1], "-h") && !strcmp(r.cmd_argv[2], "--job"),
	      "run stops at CMD", "run --create --row 2 --job=9 mpi_app -h");
	parse("run --job 1 -- --weird-name", &r, &a);
	check(!strcmp(r.cmd_argv[0], "--weird-name"), "run after --",
	      "run --job 1 -- --weird-name");

	parse("slice set 50", &r, &a);
	check(r.slice_us == 50, "slice min", "slice set 50");
	parse("slice set 10000000", &r, &a);
	check(r.slice_us == 10000000, "slice max", "slice set 10000000");

	parse("mode standalone --watchdog 10", &r, &a);
	check(r.mode == BCS_MODE_STANDALONE && r.has_watchdog &&
	      r.watchdog == 10, "mode values", "mode standalone --watchdog 10");
	parse("mode --watchdog=0 off", &r, &a);
	check(r.mode == BCS_MODE_OFF && r.has_watchdog && r.watchdog == 0,
	      "mode off", "mode --watchdog=0 off");
	parse("mode off", &r, &a);
	check(!r.has_watchdog, "mode no watchdog", "mode off");

	parse("strobe", &r, &a);
	check(!r.has_row && !r.has_slice && !r.now &&
	      r.lead_us == BCSCTL_STROBE_LEAD_US, "strobe defaults", "strobe");
	parse("strobe --row 2 --slice 99 --now", &r, &a);
	check(r.has_row && r.row == 2 && r.has_slice && r.slice == 99 &&
	      r.now, "strobe values", "strobe --row 2 --slice 99 --now");
	parse("strobe --in 0", &r, &a);
	check(r.lead_us == 0 && !r.now, "strobe --in", "strobe --in 0");

	parse("stats enable 7", &r, &a);
	check(r.job == 7 && r.dist_op == BCS_DIST_ENABLE &&
	      r.metrics == BCS_DIST_ALL &&
	      r.sub_bits == BCS_HIST_SUB_BITS_DEFAULT && !r.nr_pids,
	      "stats defaults", "stats enable 7");
	parse("stats enable --pid 10 7 --metric burst --resolution 128 "
	      "--pid=11 --metric=wait,blocked", &r, &a);
	check(r.job == 7 && r.nr_pids == 2 && !strcmp(r.pids[0], "10") &&
	      !strcmp(r.pids[1], "11") && r.sub_bits == 7 &&
	      r.metrics == (1U << BCS_DIST_BURST | 1U << BCS_DIST_WAIT |
			    1U << BCS_DIST_BLOCKED),
	      "stats enable values", "stats enable --pid 10 7 ...");
	parse("stats enable 7 --resolution 1", &r, &a);
	check(r.sub_bits == 0, "resolution 1", "stats enable 7 --resolution 1");

	/* Subsets: rank lists and NODE:PID, through bcsd. */
	parse("stats enable 7 --rank 0-3,17 --pid node2:123 --rank=40-41",
	      &r, &a);
	check(r.nr_subsets == 4 && !r.nr_pids &&
	      !r.subsets[0].node && r.subsets[0].a == 0 &&
	      r.subsets[0].b == 3 && r.subsets[1].a == 17 &&
	      r.subsets[1].b == 17 && r.subsets[2].node &&
	      !strcmp(r.subsets[2].node, "node2") && r.subsets[2].b == 123 &&
	      r.subsets[3].a == 40 && r.subsets[3].b == 41,
	      "stats enable subsets", "stats enable 7 --rank ... --pid N:P");
	parse("stats enable 7 --rank 16777215 --pid 3:4194304", &r, &a);
	check(r.nr_subsets == 2 && r.subsets[0].a == 16777215 &&
	      !strcmp(r.subsets[1].node, "3") && r.subsets[1].b == 4194304,
	      "subsets at their bounds", "stats enable 7 --rank 16777215 ...");
	expect_usage("stats enable 7 --rank 3-1");
	expect_usage("stats enable 7 --rank 16777216");
	expect_usage("stats enable 7 --rank 0-99999999999");
	expect_usage("stats enable 7 --rank ''");
	expect_usage("stats enable 7 --rank 1,,2");
	expect_usage("stats enable 7 --rank 1,");
	expect_usage("stats enable 7 --rank -1");
	expect_usage("stats enable 7 --rank 1-2-3");
	expect_usage("stats enable 7 --rank 1x");
	expect_usage("stats enable 7 --pid :5");
	expect_usage("stats enable 7 --pid n1:");
	expect_usage("stats enable 7 --pid n1:0");
	expect_usage("stats enable 7 --pid n1:4194305");
	expect_usage("stats enable 7 --pid n1:5 --pid 6");
	expect_usage("stats enable 7 --rank 1 --mpi on");
	expect_usage("stats disable 7 --rank 1");
	expect_usage("stats release 7 --rank 1");
	expect_usage("stats disable 7 --pid n1:5");
	expect_usage("stats enable 7 --rank "
		     "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
		     "21,22,23,24,25,26,27,28,29,30,31,32");
	parse("stats disable 3 --metric suspended", &r, &a);
	check(r.dist_op == BCS_DIST_DISABLE &&
	      r.metrics == 1U << BCS_DIST_SUSPENDED && !r.sub_bits,
	      "stats disable",
	      "stats disable 3 --metric suspended");
	parse("stats release 3 --pid 5", &r, &a);
	check(r.dist_op == BCS_DIST_RELEASE && !r.metrics && !r.sub_bits &&
	      r.nr_pids == 1, "stats release", "stats release 3 --pid 5");
	parse("stats window --from-slice 7500 --to-slice 12500", &r, &a);
	check(r.window == 1 && r.from_slice == 7500 && r.to_slice == 12500,
	      "window values", "stats window --from-slice 7500 --to-slice 12500");
	parse("stats window --to-slice=18446744073709551615 --from-slice=0",
	      &r, &a);
	check(r.window == 1 && r.from_slice == 0 && r.to_slice == UINT64_MAX,
	      "window = values", "stats window --to-slice=... --from-slice=0");
	parse("stats window --clear", &r, &a);
	check(r.window == -1, "window clear", "stats window --clear");
	parse("stats window", &r, &a);
	check(r.window == 0 && !r.json, "window show", "stats window");
	parse("stats window --json", &r, &a);
	check(r.window == 0 && r.json, "window show --json",
	      "stats window --json");
}

static void test_usage_text(void)
{
	char *text = NULL;
	size_t len = 0, k;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		check(0, "open_memstream", "");
		return;
	}
	bcsctl_usage(f, NULL, NULL);
	fclose(f);
	/* The help is generated from the table: every command shows up. */
	for (k = 0; k < bcsctl_nr_cmds; k++) {
		char word[64];

		snprintf(word, sizeof(word), "%s%s%s\n",
			 bcsctl_cmds[k].group ? bcsctl_cmds[k].group : "",
			 bcsctl_cmds[k].group ? " " : "", bcsctl_cmds[k].name);
		word[strlen(word) - 1] = '\0';
		check(strstr(text, word) != NULL, "command missing in help",
		      word);
	}
	free(text);
}

/* --json, the help of a group, and the nearest command for a slip. */
static void test_queries(void)
{
	char *text = NULL;
	size_t len = 0;
	struct bcsctl_req r;
	struct args a;
	FILE *f;

	check(parse("status --json", &r, &a) == BCSCTL_PARSE_OK && r.json,
	      "status --json", "status --json");
	check(parse("job list --json", &r, &a) == BCSCTL_PARSE_OK && r.json,
	      "job list --json", "job list --json");
	check(parse("job list", &r, &a) == BCSCTL_PARSE_OK && !r.json,
	      "job list without --json", "job list");
	expect_usage("slice get --json");

	check(parse("job --help", &r, &a) == BCSCTL_PARSE_HELP && !r.cmd &&
	      r.group && !strcmp(r.group, "job"), "job --help is the group's",
	      "job --help");
	f = open_memstream(&text, &len);
	if (f) {
		bcsctl_usage(f, NULL, "job");
		fclose(f);
		check(strstr(text, "job attach") && strstr(text, "job list") &&
		      !strstr(text, "slice set") && !strstr(text, "status"),
		      "job help lists the job commands only", text);
		free(text);
	}

	parse("stauts", &r, &a);
	check(strstr(r.err, "did you mean 'status'?") != NULL,
	      "stauts suggests status", r.err);
	parse("job lsit", &r, &a);
	check(strstr(r.err, "unknown job subcommand 'lsit'; did you mean "
		     "'list'?") != NULL, "job lsit suggests list", r.err);
	parse("jbo list", &r, &a);
	check(strstr(r.err, "did you mean 'job'?") != NULL,
	      "jbo suggests job", r.err);
	parse("frobnicate", &r, &a);
	check(!strstr(r.err, "did you mean"), "no suggestion for a word "
	      "unlike any command", r.err);
}

static int same(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

/* bcsctl run --mpi-stats: the MPI of a program and the preload. */
static void test_mpi(void)
{
	const char *mpi;
	char out[64], err[512];
	int r;

	check(same(bcsctl_mpi_of_soname("libmpi.so.40"), "openmpi"),
	      "soname", "libmpi.so.40");
	check(same(bcsctl_mpi_of_soname("libmpich.so.12"), "mpich"),
	      "soname", "libmpich.so.12");
	check(same(bcsctl_mpi_of_soname("libmpi.so.12"), "mpich"),
	      "soname", "libmpi.so.12");
	check(same(bcsctl_mpi_of_soname("libmpi.so.120"), "openmpi"),
	      "soname", "libmpi.so.120");
	check(same(bcsctl_mpi_of_soname("libopen-pal.so.40"), "openmpi"),
	      "soname", "libopen-pal.so.40");
	check(!bcsctl_mpi_of_soname("libc.so.6"), "soname", "libc.so.6");
	check(!bcsctl_mpi_of_soname("libmpi_dummy.so"), "soname",
	      "libmpi_dummy.so");

	r = bcsctl_mpi_preload(NULL, "/l/a.so", out, sizeof(out));
	check(!r && !strcmp(out, "/l/a.so"), "preload", "none");
	r = bcsctl_mpi_preload("", "/l/a.so", out, sizeof(out));
	check(!r && !strcmp(out, "/l/a.so"), "preload", "empty");
	r = bcsctl_mpi_preload("/x.so", "/l/a.so", out, sizeof(out));
	check(!r && !strcmp(out, "/x.so:/l/a.so"), "preload", "appended");
	r = bcsctl_mpi_preload("/x.so /l/a.so", "/l/a.so", out, sizeof(out));
	check(!r && !strcmp(out, "/x.so /l/a.so"), "preload", "not twice");
	r = bcsctl_mpi_preload("/l/a.so.1", "/l/a.so", out, sizeof(out));
	check(!r && !strcmp(out, "/l/a.so.1:/l/a.so"), "preload", "prefix");
	r = bcsctl_mpi_preload("/x.so", "/l/a.so", out, 8);
	check(r == -ENAMETOOLONG, "preload", "too long");

	/* A program of no MPI, a script, one that is not there. */
	r = bcsctl_mpi_which("/bin/true", &mpi, err, sizeof(err));
	check(r == -ESRCH && !mpi && strstr(err, "cannot tell which MPI"),
	      "which", "/bin/true");
	r = bcsctl_mpi_which("true", &mpi, err, sizeof(err));
	check(r == -ESRCH, "which in PATH", "true");
	r = bcsctl_mpi_which("tests/test_cli.sh", &mpi, err, sizeof(err));
	check(r == -ENOEXEC && strstr(err, "not a 64-bit ELF program"),
	      "which", "tests/test_cli.sh");
	r = bcsctl_mpi_which("/nonexistent/app", &mpi, err, sizeof(err));
	check(r == -ENOENT, "which", "/nonexistent/app");
	r = bcsctl_mpi_which("no-such-program-here", &mpi, err, sizeof(err));
	check(r == -ENOENT, "which", "no-such-program-here");
}

/* @root/@rel with @text, mode @mode (directories made). */
static void put(const char *root, const char *rel, const char *text,
		mode_t mode)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || chmod(path, mode))
		check(0, "write", path);
}

/*
 * The MPI finder and the dynamic loader's configuration, in a fake root:
 * ld.so.conf's directories, includes (absolute, relative, sorted, in a
 * loop), comments, hwcap, "=TYPE", relative and repeated directories; a
 * file others may write, a directory, one too large are skipped; then a
 * program that needs an MPI only through a library in a directory that
 * ld.so.conf alone names.
 */
static void test_ldconf(void)
{
	char root[] = "/tmp/bcsctl-ldconf.XXXXXX", err[512], cmd[PATH_MAX + 16];
	char dirs[BCSCTL_LDCONF_DIRS][BCSCTL_LDCONF_DIR_MAX], fixture[PATH_MAX];
	char link[PATH_MAX], *big;
	const char *mpi;
	int n, r;

	if (!mkdtemp(root)) {
		check(0, "mkdtemp", root);
		return;
	}
	n = bcsctl_mpi_ldconf(root, dirs, BCSCTL_LDCONF_DIRS);
	check(n == 0, "ldconf", "no ld.so.conf");
	put(root, "etc/ld.so.conf", "# the loader's\n"
	    "include /etc/ld.so.conf.d/*.conf\r\n/usr/local/lib\n", 0644);
	put(root, "etc/ld.so.conf.d/a.conf", "/opt/mpi-a/lib/  # slash\n"
	    "hwcap 0 nosegneg\ninclude ../extra.conf\n", 0644);
	put(root, "etc/extra.conf", "\t/opt/extra\r\n", 0644);
	put(root, "etc/ld.so.conf.d/b.conf", "/opt/mpi-b/lib=libc6\n"
	    "relative/lib\n/usr/local/lib\n", 0644);
	put(root, "etc/ld.so.conf.d/c.conf", "/opt/hostile\n", 0666);
	put(root, "etc/ld.so.conf.d/loop.conf", "include /etc/ld.so.conf\n",
	    0644);
	big = malloc(70000);
	if (big) {
		memset(big, '#', 69999);
		big[0] = '/';
		big[1] = 'x';
		big[2] = '\n';
		big[69999] = '\0';
		put(root, "etc/ld.so.conf.d/d.conf", big, 0644);
		free(big);
	}
	snprintf(cmd, sizeof(cmd), "%s/etc/ld.so.conf.d/e.conf", root);
	mkdir(cmd, 0755);
	n = bcsctl_mpi_ldconf(root, dirs, BCSCTL_LDCONF_DIRS);
	check(n == 4 && !strcmp(dirs[0], "/opt/mpi-a/lib") &&
	      !strcmp(dirs[1], "/opt/extra") &&
	      !strcmp(dirs[2], "/opt/mpi-b/lib") &&
	      !strcmp(dirs[3], "/usr/local/lib"), "ldconf",
	      "dirs, includes, comments, skipped files");
	n = bcsctl_mpi_ldconf(root, dirs, 2);
	check(n == 2 && !strcmp(dirs[1], "/opt/extra"), "ldconf", "max 2");

	/* The program's library is found through ld.so.conf alone. */
	if (!realpath("tests/ldfake", fixture)) {
		check(0, "realpath", "tests/ldfake (make test builds it)");
		goto out;
	}
	put(root, "etc/ld.so.conf", "include ld.so.conf.d/*.conf\n", 0644);
	put(root, "etc/ld.so.conf.d/a.conf", "/opt/mpi/lib\n", 0644);
	snprintf(link, sizeof(link), "%s/opt/mpi/lib", root);
	snprintf(cmd, sizeof(cmd), "%s/opt", root);
	mkdir(cmd, 0755);
	snprintf(cmd, sizeof(cmd), "%s/opt/mpi", root);
	mkdir(cmd, 0755);
	if (symlink(fixture, link))
		check(0, "symlink", link);
	unsetenv("LD_LIBRARY_PATH");
	r = bcsctl_mpi_which_in(root, "tests/ldfake/prog", &mpi, err,
				sizeof(err));
	check(!r && mpi && !strcmp(mpi, "openmpi"), "which through ld.so.conf",
	      err);
	put(root, "etc/ld.so.conf.d/a.conf", "/opt/elsewhere\n", 0644);
	r = bcsctl_mpi_which_in(root, "tests/ldfake/prog", &mpi, err,
				sizeof(err));
	check(r == -ESRCH, "which without ld.so.conf's directory", err);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		check(0, "rm -rf", root);
}

/* The control file of a job's MPI statistics, as bcsctl writes it. */
static void test_mpi_control(void)
{
	char dir[] = "/tmp/bcsctl-test.XXXXXX", path[64], err[512];
	struct bcs_mpi_control *c, copy;
	FILE *f;
	int fd, r;

	if (!mkdtemp(dir)) {
		check(0, "mkdtemp", dir);
		return;
	}
	r = bcs_mpi_control_set(dir, "7", 0, "Allreduce,MPI_Isend", 3, err,
				sizeof(err));
	check(!r, "control set", err);
	fd = bcsmpi_control_open(dir, "7", 0, &c, err, sizeof(err));
	check(fd >= 0, "control open", err);
	if (fd >= 0) {
		r = bcsmpi_control_read(c, &copy);
		check(!r && copy.generation == 2 &&
		      !strcmp(copy.stats, "Allreduce,MPI_Isend") &&
		      copy.sub_bits == 3 && !(copy.flags & BCS_MPI_CTL_OFF),
		      "control contents", copy.stats);
		r = bcs_mpi_control_set(dir, "7", 1, NULL, -1, err,
					sizeof(err));
		/* Seen through the mapping of a reader. */
		check(!r && !bcsmpi_control_read(c, &copy) &&
		      copy.generation == 4 && copy.sub_bits == 3 &&
		      (copy.flags & BCS_MPI_CTL_OFF) &&
		      !strcmp(copy.stats, "Allreduce,MPI_Isend"),
		      "control off", copy.stats);
		bcsmpi_control_close(c, fd);
	}
	r = bcs_mpi_control_set(dir, "7", 0, "Allreduce,Nope", -1, err,
				sizeof(err));
	check(r == -EINVAL && !strncmp(err, "'Nope' is not", 13),
	      "control bad selection", err);
	r = bcs_mpi_control_set(dir, "7", 0, "all", 8, err, sizeof(err));
	check(r == -EINVAL, "control bad resolution", err);
	snprintf(path, sizeof(path), "%s/8.control", dir);
	f = fopen(path, "w");
	if (f) {
		fputs("not a control file", f);
		fclose(f);
	}
	r = bcs_mpi_control_set(dir, "8", 0, "on", -1, err, sizeof(err));
	check(r == -EINVAL && strstr(err, "not a control file"),
	      "control not a control file", err);
	unlink(path);
	/* A symbolic link is not followed. */
	snprintf(path, sizeof(path), "%s/9.control", dir);
	if (symlink("7.control", path) == 0) {
		r = bcs_mpi_control_set(dir, "9", 0, "on", -1, err,
					sizeof(err));
		check(r == -ELOOP && strstr(err, "cannot open"),
		      "control through a symbolic link", err);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/7.control", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	static const char *const ok[][2] = {
		{ "status", "status" },
		{ "job create", "job create" },
		{ "job create --id 5 --row 3", "job create" },
		{ "job destroy 12", "job destroy" },
		{ "job list", "job list" },
		{ "job attach 3 100 200", "job attach" },
		{ "job detach 3 100", "job detach" },
		{ "job row 3 none", "job row" },
		{ "run --job 4 -- sleep 1", "run" },
		{ "run --job 4 --create sleep", "run" },
		{ "run --job 4 --mpi-stats -- ./app", "run" },
		{ "run --mpi-stats --no-attach ./app", "run" },
		{ "run --no-attach --job 2 --mpi-stats ./app", "run" },
		{ "slice set 1000", "slice set" },
		{ "slice get", "slice get" },
		{ "mode off", "mode" },
		{ "mode standalone --watchdog 100000", "mode" },
		{ "strobe", "strobe" },
		{ "strobe --row 63 --slice 18446744073709551615", "strobe" },
		{ "stats enable 1 --pid 2147483647", "stats enable" },
		{ "stats disable 1", "stats disable" },
		{ "stats release 1", "stats release" },
		{ "stats enable 5 --mpi Allreduce,Isend --resolution 8",
		  "stats enable" },
		{ "stats enable 5 --mpi=all", "stats enable" },
		{ "stats disable 5 --mpi", "stats disable" },
		{ "stats window", "stats window" },
		{ "stats window --clear", "stats window" },
		{ "stats window --from-slice 5 --to-slice 5", "stats window" },
	};
	static const char *const usage[] = {
		"", "bogus", "--bogus", "-x", "job", "job bogus", "slice",
		"slice bogus", "status extra", "status --bogus", "job list 1",
		"job create --id", "job create --id 0",
		"job create --id 2147483648", "job create --id -1",
		"job create --id 5x", "job create --id=", "job create --row 64",
		"job create --row -1", "job create --bogus", "job create 5",
		"job create --idx 5", "job create --owner", "job filler",
		"job filler 7", "job filler 7 yes", "job filler 0 on",
		"job filler 7 on off",
		"job destroy", "job destroy 1 2", "job destroy abc",
		"job destroy --now 1",
		"job attach", "job attach 1", "job attach --thread 1",
		"job attach 1 0", "job attach 1 -5", "job attach 1 2147483648",
		"job attach 1 12 x", "job attach x 12", "job detach 1",
		"job attach 1 --node 0 5", "job attach 1 --node 4294967296 5",
		"job attach 1 --node 2", "job attach 1 5 --node",
		"job attach 1 --node 2 --node 3 5",
		"job attach 1 --node 2 --thread 5", "job detach 1 --node 2 5",
		"job row", "job row 1", "job row 1 64", "job row 0 1",
		"job row 1 2 3",
		"run", "run --job 1", "run --job 1 --", "run -- ls",
		"run --job 0 ls", "run --job 1 --row 2 ls",
		"run --job 1 --bogus ls", "run --job", "run --create ls",
		"run --no-attach ls", "run --job 1 --no-attach ls",
		"run --mpi-stats ls", "run --mpi-stats --no-attach",
		"run --mpi-stats --no-attach --create ls",
		"slice set", "slice set 49", "slice set 10000001",
		"slice set 1e3", "slice set 18446744073709551616",
		"slice set 100 200", "slice get 1",
		"mode", "mode driven", "mode fast", "mode off standalone",
		"mode off --watchdog 100001", "mode off --watchdog",
		"mode --watchdog 5",
		"strobe --row none", "strobe --row 64", "strobe --now --in 5",
		"strobe --slice -1", "strobe --in 10000001", "strobe 3",
		"strobe --row",
		"stats", "stats enable", "stats enable 0", "stats enable 1 2",
		"stats enable 1 --pid 0", "stats enable 1 --pid x",
		"stats enable 1 --pid", "stats enable 1 --metric",
		"stats enable 1 --metric bogus", "stats enable 1 --metric ,",
		"stats enable 1 --resolution 0", "stats enable 1 --resolution 3",
		"stats enable 1 --resolution 256", "stats enable --pid 5",
		"stats disable 1 --resolution 4", "stats release 1 --metric all",
		"stats bogus 1",
		"stats enable 5 --mpi", "stats enable 5 --mpi=",
		"stats enable 5 --mpi all --pid 3",
		"stats enable 5 --metric burst --mpi all",
		"stats disable 5 --mpi x", "stats release 5 --mpi",
		"stats disable 5 --mpi --pid 4",
		"stats", "stats bogus", "stats window 5",
		"stats window --from-slice 5",
		"stats window --to-slice 5",
		"stats window --from-slice 6 --to-slice 5",
		"stats window --from-slice 5 --to-slice 6 --clear",
		"stats window --from-slice -1 --to-slice 5",
		"stats window --from-slice 1 --to-slice 18446744073709551616",
		"stats window --from-slice x --to-slice 5",
		"stats window --from-slice", "stats window --clear --json",
		"stats window --from-slice 1 --to-slice 2 --json",
	};
	size_t i;

	test_numbers();
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		expect_ok(ok[i][0], ok[i][1]);
	for (i = 0; i < sizeof(usage) / sizeof(usage[0]); i++)
		expect_usage(usage[i]);
	expect("-h", BCSCTL_PARSE_HELP);
	expect("--help", BCSCTL_PARSE_HELP);
	expect("job -h", BCSCTL_PARSE_HELP);
	expect("job create -h", BCSCTL_PARSE_HELP);
	expect("job attach 1 --help", BCSCTL_PARSE_HELP);
	expect("status --help", BCSCTL_PARSE_HELP);
	expect("run --job 1 --help", BCSCTL_PARSE_HELP);
	expect("strobe -h", BCSCTL_PARSE_HELP);
	expect("stats enable 1 -h", BCSCTL_PARSE_HELP);
	expect("stats window --help", BCSCTL_PARSE_HELP);
	expect("--version", BCSCTL_PARSE_VERSION);
	test_values();
	test_usage_text();
	test_queries();
	test_mpi();
	test_ldconf();
	test_mpi_control();

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

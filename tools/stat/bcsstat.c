// SPDX-License-Identifier: GPL-2.0
/*
 * bcsstat - show bcs statistics: the per-slice records of /dev/bcsstat and
 * the per-job and per-task accounting.  See bcsstat(1).
 *
 * Everything here but `events` goes through /dev/bcsstat, which is
 * world-readable, so bcsstat needs no privileges but for that one.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <bcs.h>

#include "bcsstat.h"
#include "numparse.h"

/* Records read per read(2) in follow mode. */
#define FOLLOW_BATCH	64

static int run_slices(const struct opts *o);
static int run_jobs(const struct opts *o);
static int run_tasks(const struct opts *o);
static int run_dump(const struct opts *o);

static const struct cmd cmds[] = {
	{ "slices", "[-n N] [-f|--follow [-c COUNT]] [--json]",
	  "Per-slice records (last N, or all in the ring; -f: new ones)",
	  OPT_N | OPT_FOLLOW | OPT_COUNT | OPT_JSON, run_slices, NULL },
	{ "jobs", "[--json]",
	  "Per-job accounting and CPU share",
	  OPT_JSON, run_jobs, NULL },
	{ "tasks", "[--job J] [--json]",
	  "Per-task accounting",
	  OPT_JOB | OPT_JSON, run_tasks, NULL },
	{ "events", "[-c COUNT] [--json]",
	  "Jobs' ends as they happen, one line each (needs CAP_SYS_ADMIN)",
	  OPT_COUNT | OPT_JSON, run_events, NULL },
	{ "plot", "KIND -o FILE.png [--job J] [--metric NAME] "
	  "[--hist PRIM] [FILE...]",
	  "Draw slice records or distributions of nodes with gnuplot",
	  OPT_OUTPUT | OPT_JOB | OPT_METRIC | OPT_HIST | OPT_ARGS, run_plot,
	  plot_help },
	{ "dist", "[--job J] [--pid P] [--metric NAME] [--json] [FILE...]",
	  "Distributions of bursts, sleeps, parks, waits (FILE: job dumps)",
	  OPT_JOB | OPT_PID | OPT_METRIC | OPT_JSON | OPT_ARGS, run_dist,
	  dist_help },
	{ "dump", "--job J [-o FILE.json]",
	  "Job J's statistics on this node as one JSON document (a job dump)",
	  OPT_JOB | OPT_OUTPUT, run_dump, NULL },
	{ "mpi", "[--job J] [--node HOST] [--rank R] [--json | --hist PRIM | "
	  "--ranks | --report | --slices [--json]] [FILE|DIR...]",
	  "Per-primitive MPI statistics of the ranks whose libbcsmpi files "
	  "are given\n      (--hist: the latency and size distributions of "
	  "PRIM; --job: job J's files in DIR\n      or $BCS_MPI_DIR, merged "
	  "over its ranks and nodes; --ranks: MPI time %, calls\n      and "
	  "bytes per rank; --report: the job's report, regions and call "
	  "sites;\n      --slices: each rank's point-to-point and collective "
	  "calls per slice)",
	  OPT_JOB | OPT_NODE | OPT_RANK | OPT_JSON | OPT_HIST | OPT_ARGS |
	  OPT_RANKS | OPT_REPORT | OPT_SLICES, run_mpi, NULL },
	{ "trace", "-o FILE.json [--job J] [FILE...] [RANK.bcsmpi|DIR...]",
	  "Slice records of nodes as a trace for https://ui.perfetto.dev\n"
	  "      (and a track per MPI rank of the libbcsmpi files given, or "
	  "of job J's)",
	  OPT_OUTPUT | OPT_ARGS | OPT_JOB, run_trace, NULL },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f, const struct cmd *c)
{
	size_t k;

	if (c) {
		fprintf(f, "Usage: bcsstat %s %s\n%s.\n", c->name, c->args,
			c->help);
		if (c->more_help)
			c->more_help(f);
		return;
	}
	fprintf(f, "Usage: bcsstat [-h|--help] [--version] COMMAND [OPTIONS]\n"
		"Show bcs statistics from /dev/" BCS_STAT_DEVICE_NAME ".\n\n"
		"Commands:\n");
	for (k = 0; k < NR_CMDS; k++)
		fprintf(f, "  %s %s\n      %s\n", cmds[k].name, cmds[k].args,
			cmds[k].help);
	fprintf(f, "\nSlice flags: L late, S standalone, D driven, "
		"F fail-open, I injected,\n"
		"C next row woken at the drain limit, O earlier strobes overtaken,\n"
		"P predicted (no strobe for the slice by its deadline),\n"
		"E expired (no gang: the last strobe's row ended),\n"
		"N planned (a slice of a plan after its first).\n"
		"Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

int usage_err(const struct cmd *c, const char *msg, const char *arg)
{
	fprintf(stderr, "bcsstat: %s%s%s%s\n", msg, arg ? " '" : "",
		arg ? arg : "", arg ? "'" : "");
	if (c)
		usage(stderr, c);
	else
		fprintf(stderr, "Try 'bcsstat --help'.\n");
	return EXIT_USAGE;
}

/* The value of option @a at argv[*i]: "-n 5", "-n5", "--job 5", "--job=5". */
static const char *opt_value(int argc, char **argv, int *i, size_t namelen)
{
	const char *a = argv[*i];

	if (a[namelen] == '=')
		return a + namelen + 1;
	if (a[namelen] != '\0')
		return a + namelen;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static int parse_opts(const struct cmd *c, int argc, char **argv,
		      struct opts *o)
{
	unsigned int opt;
	const char *v;
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--") && (c->allowed & OPT_ARGS)) {
			while (++i < argc)
				o->args[o->nr_args++] = argv[i];
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout, c);
			return -1;
		}
		if (a[0] != '-' && (c->allowed & OPT_ARGS)) {
			o->args[o->nr_args++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--json"))
			opt = OPT_JSON;
		else if (!strcmp(a, "--ranks"))
			opt = OPT_RANKS;
		else if (!strcmp(a, "--report"))
			opt = OPT_REPORT;
		else if (!strcmp(a, "--slices"))
			opt = OPT_SLICES;
		else if (!strcmp(a, "-f") || !strcmp(a, "--follow"))
			opt = OPT_FOLLOW;
		else if (!strncmp(a, "-n", 2))
			opt = OPT_N;
		else if (!strncmp(a, "-c", 2))
			opt = OPT_COUNT;
		else if (!strcmp(a, "--job") || !strncmp(a, "--job=", 6))
			opt = OPT_JOB;
		else if (!strncmp(a, "-o", 2))
			opt = OPT_OUTPUT;
		else if (!strcmp(a, "--pid") || !strncmp(a, "--pid=", 6))
			opt = OPT_PID;
		else if (!strcmp(a, "--metric") || !strncmp(a, "--metric=", 9))
			opt = OPT_METRIC;
		else if (!strcmp(a, "--hist") || !strncmp(a, "--hist=", 7))
			opt = OPT_HIST;
		else if (!strcmp(a, "--node") || !strncmp(a, "--node=", 7))
			opt = OPT_NODE;
		else if (!strcmp(a, "--rank") || !strncmp(a, "--rank=", 7))
			opt = OPT_RANK;
		else if (a[0] == '-')
			return usage_err(c, "unknown option", a);
		else
			return usage_err(c, "unexpected argument", a);
		if (!(opt & c->allowed))
			return usage_err(c, "option not valid here:", a);
		o->given |= opt;
		if (opt == OPT_JSON || opt == OPT_FOLLOW ||
		    opt == OPT_RANKS || opt == OPT_REPORT ||
		    opt == OPT_SLICES)
			continue;
		v = opt_value(argc, argv, &i, opt == OPT_JOB ? 5 :
			      opt == OPT_PID ? 5 : opt == OPT_METRIC ? 8 :
			      opt == OPT_HIST || opt == OPT_NODE ? 6 :
			      opt == OPT_RANK ? 6 : 2);
		if (!v)
			return usage_err(c, "missing value for", a);
		if (opt == OPT_N && parse_u64(v, 1, UINT32_MAX, &o->n))
			return usage_err(c, "bad record count", v);
		if (opt == OPT_COUNT && parse_u64(v, 1, UINT64_MAX, &o->count))
			return usage_err(c, "bad count", v);
		if (opt == OPT_JOB && parse_job(v, &o->job))
			return usage_err(c, "bad job id", v);
		if (opt == OPT_PID && parse_pid(v, &o->pid))
			return usage_err(c, "bad pid", v);
		if (opt == OPT_METRIC && dist_metric_parse(v, &o->metric))
			return usage_err(c, "unknown metric (burst, blocked, "
					 "suspended, wait):", v);
		if (opt == OPT_OUTPUT && !*v)
			return usage_err(c, "empty output file name", NULL);
		if (opt == OPT_OUTPUT)
			o->output = v;
		if (opt == OPT_HIST && !*v)
			return usage_err(c, "empty primitive name", NULL);
		if (opt == OPT_HIST)
			o->hist = v;
		if (opt == OPT_NODE && !*v)
			return usage_err(c, "empty node name", NULL);
		if (opt == OPT_NODE)
			o->node = v;
		if (opt == OPT_RANK) {
			uint64_t rank;

			if (parse_u64(v, 0, INT32_MAX, &rank))
				return usage_err(c, "bad rank", v);
			o->rank = (int)rank;
		}
	}
	if ((o->given & OPT_COUNT) && (c->allowed & OPT_FOLLOW) &&
	    !(o->given & OPT_FOLLOW))
		return usage_err(c, "-c needs --follow", NULL);
	return 0;
}

static int open_stat(struct bcs_stat **st)
{
	int err = bcs_stat_open(st);

	if (err)
		fprintf(stderr, "bcsstat: %s\n",
			bcs_strerror(err, BCS_CTX_STAT_OPEN));
	return err ? EXIT_FAILURE : 0;
}

static int fail(struct bcs_stat *st, const char *what, int err,
		enum bcs_err_ctx ctx)
{
	fprintf(stderr, "bcsstat: %s: %s\n", what, bcs_strerror(err, ctx));
	bcs_stat_close(st);
	return EXIT_FAILURE;
}

/* ---- output helpers ---- */

void json_add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void json_add_row(struct json_object *o, uint32_t row)
{
	json_object_object_add(o, "row", row == BCS_ROW_NONE ? NULL :
			       json_object_new_int64(row));
}

void json_print(struct json_object *o, int pretty)
{
	int fl = JSON_C_TO_STRING_NOSLASHESCAPE |
		 (pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN);

	puts(json_object_to_json_string_ext(o, fl));
}

static const char *fmt_row(char *buf, size_t len, uint32_t row)
{
	if (row == BCS_ROW_NONE)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%u", row);
	return buf;
}

/* ---- slices ---- */

static void slice_header(void)
{
	printf("%10s %10s %4s %8s %12s %10s %10s %10s %6s %6s %6s %6s %4s %6s\n",
	       "SEQ", "SLICE", "ROW", "FLAGS", "INTERVAL_US", "SWITCH_US",
	       "PARKED_US", "RESUMED_US", "SUSP", "RES", "RUN", "BLK", "LATE",
	       "MISSED");
}

/* Microseconds from @start to @at, or "-" while @at is not known. */
static const char *fmt_after(char *buf, size_t len, uint64_t at,
			     uint64_t start)
{
	if (!at)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", at > start ? (at - start) / 1e3 : 0.0);
	return buf;
}

static void slice_line(const struct bcs_slice_record *r)
{
	char f[BCS_SLICE_FLAGS_LEN], rb[16], pb[24], wb[24];

	printf("%10llu %10llu %4s %8s %12.1f %10.1f %10s %10s %6u %6u %6u %6u %4u %6u\n",
	       (unsigned long long)r->seq, (unsigned long long)r->slice,
	       fmt_row(rb, sizeof(rb), r->row), bcs_slice_flags_str(f, r->flags),
	       r->interval_ns / 1e3, r->switch_ns / 1e3,
	       fmt_after(pb, sizeof(pb), r->parked_ns, r->switch_start_ns),
	       fmt_after(wb, sizeof(wb), r->resumed_ns, r->switch_start_ns),
	       r->nr_suspended, r->nr_resumed, r->nr_running, r->nr_blocked,
	       r->late, r->missed);
}

static int slices_snapshot(struct bcs_stat *st, const struct opts *o)
{
	struct bcs_slice_record *buf;
	struct bcs_stat_header hdr;
	uint64_t want, from;
	size_t n, i;
	int err;

	err = bcs_stat_map(st);
	if (!err)
		err = bcs_stat_header(st, &hdr);
	if (err)
		return fail(st, "cannot map /dev/" BCS_STAT_DEVICE_NAME, err,
			    BCS_CTX_STAT_OPEN);
	want = hdr.nr_records;
	if ((o->given & OPT_N) && o->n < want)
		want = o->n;
	from = hdr.head > want ? hdr.head - want : 0;
	buf = calloc((size_t)want, sizeof(*buf));
	if (!buf)
		return fail(st, "slices", -ENOMEM, BCS_CTX_GENERIC);
	err = bcs_stat_snapshot(st, from, buf, (size_t)want, &n, NULL);
	if (err) {
		free(buf);
		return fail(st, "slices", err, BCS_CTX_GENERIC);
	}
	if (o->given & OPT_JSON) {
		/* An array, a record a line, as in the job dumps (libbcs). */
		fputs("[", stdout);
		for (i = 0; i < n; i++) {
			fputs(i ? ",\n" : "\n", stdout);
			bcs_slice_json(stdout, &buf[i]);
		}
		fputs("\n]\n", stdout);
	} else {
		slice_header();
		for (i = 0; i < n; i++)
			slice_line(&buf[i]);
	}
	free(buf);
	bcs_stat_close(st);
	return EXIT_SUCCESS;
}

static int slices_follow(struct bcs_stat *st, const struct opts *o)
{
	struct bcs_slice_record buf[FOLLOW_BATCH];
	uint64_t start = 0, head, printed = 0;
	int json = o->given & OPT_JSON;
	size_t n, i;
	int err;

	/*
	 * read(2) starts at the oldest record in the ring; like tail -f,
	 * show only the last N (default none) of those, then new ones.
	 */
	if (!bcs_stat_map(st) && !bcs_stat_head(st, &head)) {
		uint64_t back = (o->given & OPT_N) ? o->n : 0;

		start = head > back ? head - back : 0;
	}
	if (!json) {
		slice_header();
		fflush(stdout);
	}
	for (;;) {
		err = bcs_stat_read(st, buf, FOLLOW_BATCH, &n, 0);
		if (err)
			return fail(st, "reading /dev/" BCS_STAT_DEVICE_NAME,
				    err, BCS_CTX_GENERIC);
		/* The device blocks instead; 0 means a plain file ended. */
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			if (buf[i].seq < start)
				continue;
			if (json) {
				bcs_slice_json(stdout, &buf[i]);
				fputc('\n', stdout);
			} else {
				slice_line(&buf[i]);
			}
			if ((o->given & OPT_COUNT) && ++printed >= o->count) {
				bcs_stat_close(st);
				return EXIT_SUCCESS;
			}
		}
		fflush(stdout);
	}
	bcs_stat_close(st);
	return EXIT_SUCCESS;
}

static int run_slices(const struct opts *o)
{
	struct bcs_stat *st;

	if (open_stat(&st))
		return EXIT_FAILURE;
	if (o->given & OPT_FOLLOW)
		return slices_follow(st, o);
	return slices_snapshot(st, o);
}

/* ---- jobs ---- */

static int run_jobs(const struct opts *o)
{
	struct bcs_job_info *jobs;
	struct json_object *arr = NULL;
	struct bcs_stat *st;
	double total = 0;
	size_t n, i;
	char rb[16];
	int err;

	if (open_stat(&st))
		return EXIT_FAILURE;
	err = bcs_stat_job_list(st, &jobs, &n);
	if (err)
		return fail(st, "jobs", err, BCS_CTX_JOB);
	bcs_stat_close(st);
	/* Share of the CPU time used by all jobs together. */
	for (i = 0; i < n; i++)
		total += (double)jobs[i].run_ns;
	if (o->given & OPT_JSON)
		arr = json_object_new_array();
	else
		printf("%10s %4s %6s %12s %12s %10s %7s\n", "JOB", "ROW",
		       "TASKS", "RUN_MS", "SUSPENDED_MS", "SLICES", "SHARE%");
	for (i = 0; i < n; i++) {
		const struct bcs_job_info *j = &jobs[i];
		double share = total > 0 ? 100.0 * (double)j->run_ns / total : 0;

		if (!arr) {
			printf("%10u %4s %6u %12.1f %12.1f %10llu %7.1f\n",
			       j->id, fmt_row(rb, sizeof(rb), j->row),
			       j->nr_tasks, j->run_ns / 1e6,
			       j->suspended_ns / 1e6,
			       (unsigned long long)j->slices_run, share);
		} else {
			struct json_object *jo = json_object_new_object();
			struct json_object *set;
			uint32_t r;

			json_add_u64(jo, "id", j->id);
			json_add_row(jo, j->row);
			/* The rows it runs in, alternates included. */
			set = json_object_new_array();
			for (r = 0; r < BCS_ROWS_MAX; r++)
				if (j->rows & (1ULL << r))
					json_object_array_add(set,
						json_object_new_int64(r));
			json_object_object_add(jo, "rows", set);
			/* bcsd's fill marks it: it also runs where we idle. */
			json_object_object_add(jo, "filler",
				json_object_new_boolean(
					!!(j->flags & BCS_JOB_FILLER)));
			json_object_object_add(jo, "state",
				json_object_new_string(
					bcs_job_state_name(j->state)));
			json_add_u64(jo, "tasks", j->nr_tasks);
			json_add_u64(jo, "parked", j->nr_parked);
			json_add_u64(jo, "run_ns", j->run_ns);
			json_add_u64(jo, "suspended_ns", j->suspended_ns);
			json_add_u64(jo, "slices", j->slices_run);
			json_object_object_add(jo, "share_pct",
					       json_object_new_double(share));
			json_object_array_add(arr, jo);
		}
	}
	if (arr) {
		json_print(arr, 1);
		json_object_put(arr);
	}
	free(jobs);
	return EXIT_SUCCESS;
}

/* ---- tasks ---- */

static int run_tasks(const struct opts *o)
{
	struct bcs_task_stat *tasks;
	struct json_object *arr = NULL;
	struct bcs_stat *st;
	size_t n, i;
	int err;

	if (open_stat(&st))
		return EXIT_FAILURE;
	err = bcs_stat_task_stats(st, (o->given & OPT_JOB) ? o->job : 0,
				  &tasks, &n);
	if (err)
		return fail(st, "tasks", err, BCS_CTX_JOB);
	bcs_stat_close(st);
	if (o->given & OPT_JSON)
		arr = json_object_new_array();
	else
		printf("%8s %8s %10s %-9s %12s %12s %12s %10s %8s\n", "PID",
		       "TGID", "JOB", "STATE", "RUN_MS", "SUSPENDED_MS",
		       "BLOCKED_MS", "SLICES", "PARKS");
	for (i = 0; i < n; i++) {
		const struct bcs_task_stat *t = &tasks[i];

		if (!arr) {
			printf("%8d %8d %10u %-9s %12.1f %12.1f %12.1f %10llu "
			       "%8llu\n", t->pid, t->tgid, t->job,
			       bcs_task_state_name(t->state), t->run_ns / 1e6,
			       t->suspended_ns / 1e6, t->blocked_ns / 1e6,
			       (unsigned long long)t->slices_run,
			       (unsigned long long)t->parks);
		} else {
			struct json_object *jo = json_object_new_object();

			json_object_object_add(jo, "pid",
					       json_object_new_int(t->pid));
			json_object_object_add(jo, "tgid",
					       json_object_new_int(t->tgid));
			json_add_u64(jo, "job", t->job);
			json_object_object_add(jo, "state",
				json_object_new_string(
					bcs_task_state_name(t->state)));
			json_add_u64(jo, "attach_ns", t->attach_ns);
			json_add_u64(jo, "run_ns", t->run_ns);
			json_add_u64(jo, "suspended_ns", t->suspended_ns);
			json_add_u64(jo, "blocked_ns", t->blocked_ns);
			json_add_u64(jo, "slices", t->slices_run);
			json_add_u64(jo, "parks", t->parks);
			json_object_array_add(arr, jo);
		}
	}
	if (arr) {
		json_print(arr, 1);
		json_object_put(arr);
	}
	free(tasks);
	return EXIT_SUCCESS;
}

/* ---- dump: a job's dump of this node, as bcsd writes it ---- */

static int run_dump(const struct opts *o)
{
	struct bcs *h;
	int err;

	if (!(o->given & OPT_JOB))
		return usage_err(o->cmd, "missing --job J", NULL);
	err = bcs_open(&h);
	if (err) {
		fprintf(stderr, "bcsstat: %s\n", bcs_strerror(err, BCS_CTX_OPEN));
		return EXIT_FAILURE;
	}
	if (o->output)
		err = bcs_job_dump_file(h, o->job, o->output, 0);
	else
		err = bcs_job_dump(h, o->job, stdout, 0);
	bcs_close(h);
	if (err == -ENOENT && !o->output) {
		fprintf(stderr, "bcsstat: dump: job %u has no statistics on "
			"this node (no such job, or none enabled: bcsctl stats "
			"enable %u)\n", o->job, o->job);
		return EXIT_FAILURE;
	}
	if (err) {
		fprintf(stderr, "bcsstat: dump: job %u%s%s: %s\n", o->job,
			o->output ? " to " : "", o->output ? o->output : "",
			err == -ENOENT && o->output ?
			"no statistics, or no such directory" :
			bcs_strerror(err, BCS_CTX_JOB));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct opts o = { .given = 0 };
	const struct cmd *c = NULL;
	size_t k;
	int r;

	if (argc < 2)
		return usage_err(NULL, "missing command", NULL);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout, NULL);
		return EXIT_SUCCESS;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("bcsstat %s (bcs interface %u)\n", LIBBCS_VERSION,
		       BCS_VERSION);
		return EXIT_SUCCESS;
	}
	for (k = 0; k < NR_CMDS; k++)
		if (!strcmp(argv[1], cmds[k].name))
			c = &cmds[k];
	if (!c)
		return usage_err(NULL, argv[1][0] == '-' ? "unknown option" :
				 "unknown command", argv[1]);
	o.cmd = c;
	/* Room for every argument that is not an option. */
	o.args = calloc((size_t)argc, sizeof(*o.args));
	if (!o.args) {
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		return EXIT_FAILURE;
	}
	r = parse_opts(c, argc - 2, argv + 2, &o);
	if (!r)
		r = c->run(&o);
	free(o.args);
	if (r < 0)
		return EXIT_SUCCESS;
	/* Output that could not be written (a full disk) is a failure. */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "bcsstat: writing the output: %s\n",
			strerror(errno));
		return r ? r : EXIT_FAILURE;
	}
	return r;
}

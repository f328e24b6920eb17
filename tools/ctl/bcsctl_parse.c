// SPDX-License-Identifier: GPL-2.0
/*
 * bcsctl: command-line parsing and the command table.
 *
 * Nothing here touches the module: a command line is turned into a
 * struct bcsctl_req, fully validated, and then handed to the run function
 * named by the table entry.
 */
#define _GNU_SOURCE		/* sigabbrev_np() */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <bcs.h>
#include <linux/bcs.h>
#include <linux/bcs_hist.h>

#include "bcsctl.h"
#include "numparse.h"

static int usage_err(struct bcsctl_req *req, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_err(struct bcsctl_req *req, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(req->err, sizeof(req->err), fmt, ap);
	va_end(ap);
	return BCSCTL_PARSE_USAGE;
}

static int is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

/*
 * If argv[*i] is option @name, given as "--name VALUE" or "--name=VALUE",
 * store the value in *@val and return 1 (advancing *@i past a separate
 * value).  Returns 0 if it is another argument, BCSCTL_PARSE_USAGE if the
 * value is missing.
 */
static int opt_val(struct bcsctl_req *req, int argc, char **argv, int *i,
		   const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t len = strlen(name);

	if (strncmp(a, name, len))
		return 0;
	if (a[len] == '=') {
		*val = a + len + 1;
		return 1;
	}
	if (a[len] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return usage_err(req, "option %s needs a value", name);
	*val = argv[++*i];
	return 1;
}

static int bad_arg(struct bcsctl_req *req, const char *a)
{
	if (a[0] == '-' && a[1] != '\0')
		return usage_err(req, "unknown option '%s'", a);
	return usage_err(req, "unexpected argument '%s'", a);
}

static int get_job(struct bcsctl_req *req, const char *s, uint32_t *out)
{
	if (parse_job(s, out))
		return usage_err(req, "bad job id '%s' (1..%u)", s,
				 BCS_JOB_ID_MAX);
	return 0;
}

static int get_row(struct bcsctl_req *req, const char *s, int allow_none)
{
	if (parse_row(s, &req->row) ||
	    (!allow_none && req->row == BCS_ROW_NONE))
		return usage_err(req, "bad row '%s' (0..%u%s)", s,
				 BCS_ROWS_MAX - 1, allow_none ? " or none" : "");
	req->has_row = 1;
	return 0;
}

/* --json, and --cluster if @cluster_ok. */
static int parse_flags(struct bcsctl_req *req, int argc, char **argv,
		       int cluster_ok)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i]))
			return BCSCTL_PARSE_HELP;
		if (!strcmp(argv[i], "--json"))
			req->json = 1;
		else if (cluster_ok && !strcmp(argv[i], "--cluster"))
			req->cluster = 1;
		else
			return bad_arg(req, argv[i]);
	}
	if (req->json && req->cluster)
		return usage_err(req, "--cluster shows text; the JSON is bcsctl stats global --json");
	return BCSCTL_PARSE_OK;
}

/* job list: --json only. */
static int parse_query(struct bcsctl_req *req, int argc, char **argv)
{
	return parse_flags(req, argc, argv, 0);
}

/* status: --json, or --cluster. */
static int parse_status(struct bcsctl_req *req, int argc, char **argv)
{
	return parse_flags(req, argc, argv, 1);
}

/* slice get: no arguments. */
static int parse_none(struct bcsctl_req *req, int argc, char **argv)
{
	if (argc > 0)
		return is_help(argv[0]) ? BCSCTL_PARSE_HELP :
					  bad_arg(req, argv[0]);
	return BCSCTL_PARSE_OK;
}

static int parse_job_create(struct bcsctl_req *req, int argc, char **argv)
{
	const char *v;
	int i, r;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i]))
			return BCSCTL_PARSE_HELP;
		r = opt_val(req, argc, argv, &i, "--id", &v);
		if (r < 0)
			return r;
		if (r) {
			if (get_job(req, v, &req->id))
				return BCSCTL_PARSE_USAGE;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--row", &v);
		if (r < 0)
			return r;
		if (r) {
			if (get_row(req, v, 1))
				return BCSCTL_PARSE_USAGE;
			continue;
		}
		/* Expanded and checked by bcsd, which knows the nodes. */
		r = opt_val(req, argc, argv, &i, "--nodes", &v);
		if (r < 0)
			return r;
		if (r) {
			req->nodes = v;
			continue;
		}
		/* Looked up when it is used: a user name or a uid. */
		r = opt_val(req, argc, argv, &i, "--owner", &v);
		if (r < 0)
			return r;
		if (r) {
			req->owner = v;
			continue;
		}
		return bad_arg(req, argv[i]);
	}
	return BCSCTL_PARSE_OK;
}

/*
 * Collect the positional arguments of a command that has no options
 * except --help and, if @thread_ok, --thread.
 */
static int positionals(struct bcsctl_req *req, int argc, char **argv,
		       int thread_ok, char **pos, int max, int *n)
{
	int i;

	*n = 0;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (is_help(a))
			return BCSCTL_PARSE_HELP;
		if (thread_ok && !strcmp(a, "--thread")) {
			req->thread = 1;
			continue;
		}
		if (a[0] == '-' && a[1] != '\0')
			return bad_arg(req, a);
		if (*n == max)
			return bad_arg(req, a);
		pos[(*n)++] = argv[i];
	}
	return BCSCTL_PARSE_OK;
}

static int parse_job_destroy(struct bcsctl_req *req, int argc, char **argv)
{
	char *pos[1];
	int n, r;

	r = positionals(req, argc, argv, 0, pos, 1, &n);
	if (r)
		return r;
	if (n < 1)
		return usage_err(req, "missing JOB");
	return get_job(req, pos[0], &req->job);
}

/* A signal by number (1 .. 64) or name, with or without "SIG". */
static int parse_signal(const char *s)
{
	const char *name;
	uint64_t v;
	int i;

	if (!parse_u64(s, 1, 64, &v))
		return (int)v;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (i = 1; i <= 64; i++) {
		name = sigabbrev_np(i);
		if (name && !strcasecmp(name, s))
			return i;
	}
	return 0;
}

/* job signal: JOB SIG. */
static int parse_job_signal(struct bcsctl_req *req, int argc, char **argv)
{
	char *pos[2];
	int n, r;

	r = positionals(req, argc, argv, 0, pos, 2, &n);
	if (r)
		return r;
	if (n < 2)
		return usage_err(req, n ? "missing SIGNAL" : "missing JOB");
	if (get_job(req, pos[0], &req->job))
		return BCSCTL_PARSE_USAGE;
	req->signal = parse_signal(pos[1]);
	if (!req->signal)
		return usage_err(req, "bad signal '%s' (a number 1..64 or a name such as TERM)",
				 pos[1]);
	return BCSCTL_PARSE_OK;
}

/*
 * job attach|detach [--thread] JOB PID..., and for attach --node N: the
 * pids of node N, through bcsd and its master.
 */
static int parse_job_pids(struct bcsctl_req *req, int argc, char **argv)
{
	int attach = !strcmp(req->cmd->name, "attach");
	int i, r, first = -1, opt = -1, val = -1;
	const char *v;
	int32_t pid;

	/* JOB PID... with the options anywhere; pids are checked here. */
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (is_help(a))
			return BCSCTL_PARSE_HELP;
		if (!strcmp(a, "--thread")) {
			req->thread = 1;
			continue;
		}
		r = attach ? opt_val(req, argc, argv, &i, "--node", &v) : 0;
		if (r < 0)
			return r;
		if (r) {
			if (req->node)
				return usage_err(req, "--node given twice");
			if (parse_u32(v, 1, UINT32_MAX, &req->node))
				return usage_err(req, "bad node '%s' (1..%u)",
						 v, UINT32_MAX);
			opt = argv[i] == v ? i - 1 : i;
			val = argv[i] == v ? i : -1;
			continue;
		}
		if (a[0] == '-' && a[1] != '\0')
			return bad_arg(req, a);
		if (first < 0) {
			if (get_job(req, a, &req->job))
				return BCSCTL_PARSE_USAGE;
			first = i;
			continue;
		}
		if (parse_pid(a, &pid))
			return usage_err(req, "bad pid '%s' (1..%d)", a,
					 INT32_MAX);
	}
	if (first < 0)
		return usage_err(req, "missing JOB");
	if (req->node && req->thread)
		return usage_err(req, "--node attaches whole processes: no --thread");
	/*
	 * Gather the pid words, in order, at the front of argv for the run
	 * function (the write index never passes the read index).
	 */
	req->nr_pids = 0;
	for (i = 0; i < argc; i++)
		if (i != first && i != opt && i != val &&
		    strcmp(argv[i], "--thread"))
			argv[req->nr_pids++] = argv[i];
	req->pids = argv;
	if (!req->nr_pids)
		return usage_err(req, "missing PID");
	return BCSCTL_PARSE_OK;
}

/*
 * "JOB VALUE": the job into @req, the value's text into *@value; @what
 * names the value in the error for a missing one.
 */
static int job_and_value(struct bcsctl_req *req, int argc, char **argv,
			 const char *what, char **value)
{
	char *pos[2];
	int n, r;

	r = positionals(req, argc, argv, 0, pos, 2, &n);
	if (r)
		return r;
	if (n < 1)
		return usage_err(req, "missing JOB");
	if (n < 2)
		return usage_err(req, "missing %s", what);
	if (get_job(req, pos[0], &req->job))
		return BCSCTL_PARSE_USAGE;
	*value = pos[1];
	return BCSCTL_PARSE_OK;
}

static int parse_job_row(struct bcsctl_req *req, int argc, char **argv)
{
	char *value;
	int r;

	r = job_and_value(req, argc, argv, "ROW", &value);
	if (r)
		return r;
	return get_row(req, value, 1);
}

static int parse_job_filler(struct bcsctl_req *req, int argc, char **argv)
{
	char *value;
	int r;

	r = job_and_value(req, argc, argv, "on|off", &value);
	if (r)
		return r;
	if (!strcmp(value, "on"))
		req->filler = 1;
	else if (!strcmp(value, "off"))
		req->filler = 0;
	else
		return usage_err(req, "bad filler state (on or off)");
	return BCSCTL_PARSE_OK;
}

static int parse_run(struct bcsctl_req *req, int argc, char **argv)
{
	int i, r, has_job = 0;
	const char *v;

	/* Options end at "--" or at the first word that is no option. */
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (is_help(a))
			return BCSCTL_PARSE_HELP;
		if (!strcmp(a, "--create")) {
			req->create = 1;
			continue;
		}
		if (!strcmp(a, "--mpi-stats")) {
			req->mpi_stats = 1;
			continue;
		}
		if (!strcmp(a, "--no-attach")) {
			req->no_attach = 1;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--job", &v);
		if (r < 0)
			return r;
		if (r) {
			if (get_job(req, v, &req->job))
				return BCSCTL_PARSE_USAGE;
			has_job = 1;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--row", &v);
		if (r < 0)
			return r;
		if (r) {
			if (get_row(req, v, 1))
				return BCSCTL_PARSE_USAGE;
			continue;
		}
		if (a[0] == '-' && a[1] != '\0')
			return bad_arg(req, a);
		break;
	}
	if (!has_job && !req->no_attach)
		return usage_err(req, "missing --job JOB");
	if (req->no_attach && !req->mpi_stats)
		return usage_err(req, "--no-attach is for --mpi-stats alone");
	if (req->no_attach && req->create)
		return usage_err(req, "--create needs the job joined, not "
				 "--no-attach");
	if (req->has_row && !req->create)
		return usage_err(req, "--row needs --create");
	if (i >= argc)
		return usage_err(req, "missing CMD");
	req->cmd_argv = argv + i;
	return BCSCTL_PARSE_OK;
}

static int parse_slice_set(struct bcsctl_req *req, int argc, char **argv)
{
	char *pos[1];
	int n, r;

	r = positionals(req, argc, argv, 0, pos, 1, &n);
	if (r)
		return r;
	if (n < 1)
		return usage_err(req, "missing USEC");
	if (parse_u64(pos[0], BCS_SLICE_NS_MIN / 1000, BCS_SLICE_NS_MAX / 1000,
		      &req->slice_us))
		return usage_err(req, "bad slice length '%s' (%llu..%llu us)",
				 pos[0], BCS_SLICE_NS_MIN / 1000,
				 BCS_SLICE_NS_MAX / 1000);
	return BCSCTL_PARSE_OK;
}

static int get_watchdog(struct bcsctl_req *req, const char *v)
{
	if (parse_u32(v, 0, BCS_WATCHDOG_MAX, &req->watchdog))
		return usage_err(req, "bad watchdog '%s' (0..%u slices)", v,
				 BCS_WATCHDOG_MAX);
	req->has_watchdog = 1;
	return 0;
}

static int parse_mode(struct bcsctl_req *req, int argc, char **argv)
{
	const char *v, *mode = NULL;
	int i, r;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i]))
			return BCSCTL_PARSE_HELP;
		r = opt_val(req, argc, argv, &i, "--watchdog", &v);
		if (r < 0)
			return r;
		if (r) {
			if (get_watchdog(req, v))
				return BCSCTL_PARSE_USAGE;
			continue;
		}
		if (argv[i][0] == '-' || mode)
			return bad_arg(req, argv[i]);
		mode = argv[i];
	}
	if (!mode)
		return usage_err(req, "missing mode (off or standalone)");
	if (!strcmp(mode, "off"))
		req->mode = BCS_MODE_OFF;
	else if (!strcmp(mode, "standalone"))
		req->mode = BCS_MODE_STANDALONE;
	else if (!strcmp(mode, "driven"))
		return usage_err(req, "driven mode belongs to the process that "
				 "sends the strobes and cannot be set here");
	else
		return usage_err(req, "bad mode '%s' (off or standalone)",
				 mode);
	return BCSCTL_PARSE_OK;
}

static int parse_strobe(struct bcsctl_req *req, int argc, char **argv)
{
	int i, r, has_in = 0;
	const char *v;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i]))
			return BCSCTL_PARSE_HELP;
		if (!strcmp(argv[i], "--now")) {
			req->now = 1;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--row", &v);
		if (r < 0)
			return r;
		if (r) {
			if (get_row(req, v, 0))
				return BCSCTL_PARSE_USAGE;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--slice", &v);
		if (r < 0)
			return r;
		if (r) {
			if (parse_u64(v, 0, UINT64_MAX, &req->slice))
				return usage_err(req, "bad slice number '%s'",
						 v);
			req->has_slice = 1;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--in", &v);
		if (r < 0)
			return r;
		if (r) {
			if (parse_u64(v, 0, BCS_SLICE_NS_MAX / 1000,
				      &req->lead_us))
				return usage_err(req, "bad lead time '%s' "
						 "(0..%llu us)", v,
						 BCS_SLICE_NS_MAX / 1000);
			has_in = 1;
			continue;
		}
		return bad_arg(req, argv[i]);
	}
	if (has_in && req->now)
		return usage_err(req, "--in and --now exclude each other");
	return BCSCTL_PARSE_OK;
}

static int subset_room(struct bcsctl_req *req)
{
	if (req->nr_subsets < BCSCTL_SUBSETS_MAX)
		return 0;
	snprintf(req->err, sizeof(req->err), "more than %d subsets (ranges of "
		 "--rank and NODE:PID of --pid together)", BCSCTL_SUBSETS_MAX);
	return -1;
}

/* The number of digits at *@p into @out, *@p past it: 0, or -1. */
static int rank_num(const char **p, uint32_t *out)
{
	size_t n = strspn(*p, "0123456789");
	char num[16];

	if (!n || n >= sizeof(num))
		return -1;
	memcpy(num, *p, n);
	num[n] = '\0';
	*p += n;
	return parse_u32(num, 0, UINT32_MAX, out);
}

int bcsctl_parse_ranks(struct bcsctl_req *req, const char *s)
{
	const char *p = s;
	uint32_t lo, hi;

	if (!*s)
		goto bad;
	for (;;) {
		if (rank_num(&p, &lo))
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if (rank_num(&p, &hi))
				goto bad;
		}
		if (*p && *p != ',')
			goto bad;
		if (hi < lo) {
			snprintf(req->err, sizeof(req->err), "--rank: %u-%u "
				 "ends before it starts", lo, hi);
			return -1;
		}
		if (hi > BCSCTL_RANK_MAX) {
			snprintf(req->err, sizeof(req->err), "--rank: rank %u "
				 "out of range (0..%d)", hi, BCSCTL_RANK_MAX);
			return -1;
		}
		if (subset_room(req))
			return -1;
		req->subsets[req->nr_subsets].a = lo;
		req->subsets[req->nr_subsets].b = hi;
		req->subsets[req->nr_subsets++].node = NULL;
		if (!*p)
			return 0;
		p++;
	}
bad:
	snprintf(req->err, sizeof(req->err), "--rank: bad rank list '%s' "
		 "(ranks and ranges, e.g. 0-3,17)", s);
	return -1;
}

int bcsctl_parse_node_pid(struct bcsctl_req *req, char *s)
{
	char *colon = strrchr(s, ':');
	int32_t pid;

	if (!colon)
		return 0;
	if (colon == s || (size_t)(colon - s) > BCSCTL_NODE_NAME_MAX ||
	    parse_pid(colon + 1, &pid) || pid > BCSCTL_PID_MAX) {
		snprintf(req->err, sizeof(req->err), "--pid: bad NODE:PID "
			 "'%s' (a node's name or id of 1 to %d bytes, a pid "
			 "of 1..%d)", s, BCSCTL_NODE_NAME_MAX,
			 BCSCTL_PID_MAX);
		return -1;
	}
	if (subset_room(req))
		return -1;
	*colon = '\0';
	req->subsets[req->nr_subsets].a = 0;
	req->subsets[req->nr_subsets].b = (uint32_t)pid;
	req->subsets[req->nr_subsets++].node = s;
	return 1;
}

/*
 * stats enable|disable|release JOB [--pid PID]... [--metric NAME]...
 * [--resolution N] (enable only): the pid words are gathered at the front
 * of argv, as for attach.  Enable also takes --rank LIST and --pid
 * NODE:PID, the job's tasks on every node (bcsd), not with plain pids.
 */
static int parse_stats(struct bcsctl_req *req, int argc, char **argv)
{
	int enable = !strcmp(req->cmd->name, "enable");
	int i, r, has_job = 0, has_metric = 0;
	uint32_t per2;
	const char *v;
	int32_t pid;

	req->dist_op = enable ? BCS_DIST_ENABLE :
		       !strcmp(req->cmd->name, "disable") ? BCS_DIST_DISABLE :
		       BCS_DIST_RELEASE;
	req->sub_bits = enable ? BCS_HIST_SUB_BITS_DEFAULT : 0;
	req->pids = argv;
	req->nr_pids = 0;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (is_help(a))
			return BCSCTL_PARSE_HELP;
		r = opt_val(req, argc, argv, &i, "--pid", &v);
		if (r < 0)
			return r;
		if (r && enable && strchr(v, ':')) {
			if (bcsctl_parse_node_pid(req, (char *)v) < 0)
				return BCSCTL_PARSE_USAGE;
			continue;
		}
		if (r) {
			if (parse_pid(v, &pid))
				return usage_err(req, "bad pid '%s' (1..%d)",
						 v, INT32_MAX);
			if (req->nr_pids == BCS_DIST_PIDS_MAX)
				return usage_err(req, "more than %u pids",
						 BCS_DIST_PIDS_MAX);
			/* The write index never passes the read index. */
			argv[req->nr_pids++] = (char *)v;
			continue;
		}
		r = enable ? opt_val(req, argc, argv, &i, "--rank", &v) : 0;
		if (r < 0)
			return r;
		if (r) {
			if (bcsctl_parse_ranks(req, v))
				return BCSCTL_PARSE_USAGE;
			continue;
		}
		if (!enable && req->dist_op == BCS_DIST_DISABLE &&
		    !strcmp(a, "--mpi")) {
			req->mpi = "";
			continue;
		}
		r = enable ? opt_val(req, argc, argv, &i, "--mpi", &v) : 0;
		if (r < 0)
			return r;
		if (r) {
			if (!*v)
				return usage_err(req, "--mpi needs a list of "
						 "MPI primitives, on or all");
			req->mpi = v;
			continue;
		}
		r = req->dist_op == BCS_DIST_RELEASE ? 0 :
		    opt_val(req, argc, argv, &i, "--metric", &v);
		if (r < 0)
			return r;
		if (r) {
			if (bcs_dist_metrics_parse(v, &req->metrics))
				return usage_err(req, "bad metric '%s' (burst, "
						 "blocked, suspended, wait "
						 "or all)", v);
			has_metric = 1;
			continue;
		}
		r = enable ? opt_val(req, argc, argv, &i, "--resolution", &v) :
			     0;
		if (r < 0)
			return r;
		if (r) {
			if (parse_u32(v, 1, 1U << BCS_HIST_SUB_BITS_MAX,
				      &per2) || (per2 & (per2 - 1)))
				return usage_err(req, "bad resolution '%s' "
						 "(1, 2, 4 .. %u buckets per "
						 "power of two)", v,
						 1U << BCS_HIST_SUB_BITS_MAX);
			req->sub_bits = (uint32_t)__builtin_ctz(per2);
			req->has_resolution = 1;
			continue;
		}
		if ((a[0] == '-' && a[1] != '\0') || has_job)
			return bad_arg(req, a);
		if (get_job(req, a, &req->job))
			return BCSCTL_PARSE_USAGE;
		has_job = 1;
	}
	if (!has_job)
		return usage_err(req, "missing JOB");
	/* The MPI processes' selection is theirs: no module metrics. */
	if (req->mpi && (has_metric || req->nr_pids || req->nr_subsets))
		return usage_err(req, "--mpi takes no --metric, --pid or "
				 "--rank (it acts on all the job's MPI "
				 "processes)");
	if (req->nr_pids && req->nr_subsets)
		return usage_err(req, "--pid PID (this node's, through bcs.ko) "
				 "and --rank or --pid NODE:PID (every node's, "
				 "through bcsd) exclude each other");
	/* Release frees every metric: the module takes no metrics then. */
	if (!has_metric && req->dist_op != BCS_DIST_RELEASE)
		req->metrics = BCS_DIST_ALL;
	return BCSCTL_PARSE_OK;
}

static int get_slice(struct bcsctl_req *req, const char *opt, const char *v,
		     uint64_t *out)
{
	if (parse_u64(v, 0, UINT64_MAX, out))
		return usage_err(req, "bad slice number '%s' for %s", v, opt);
	return 0;
}

/*
 * stats window: --from-slice A --to-slice B arms, --clear clears, neither
 * shows; --json for showing.
 */
static int parse_stats_window(struct bcsctl_req *req, int argc, char **argv)
{
	int i, r, has_from = 0, has_to = 0;
	const char *v;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i]))
			return BCSCTL_PARSE_HELP;
		if (!strcmp(argv[i], "--clear")) {
			req->window = -1;
			continue;
		}
		if (!strcmp(argv[i], "--json")) {
			req->json = 1;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--from-slice", &v);
		if (r < 0)
			return r;
		if (r) {
			if (get_slice(req, "--from-slice", v, &req->from_slice))
				return BCSCTL_PARSE_USAGE;
			has_from = 1;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--to-slice", &v);
		if (r < 0)
			return r;
		if (r) {
			if (get_slice(req, "--to-slice", v, &req->to_slice))
				return BCSCTL_PARSE_USAGE;
			has_to = 1;
			continue;
		}
		return bad_arg(req, argv[i]);
	}
	if (has_from != has_to)
		return usage_err(req, "a window needs both --from-slice and "
				 "--to-slice");
	if (has_from && req->window < 0)
		return usage_err(req, "--clear excludes --from-slice and "
				 "--to-slice");
	if (has_from && req->to_slice < req->from_slice)
		return usage_err(req, "the window ends (--to-slice %llu) "
				 "before it begins (--from-slice %llu)",
				 (unsigned long long)req->to_slice,
				 (unsigned long long)req->from_slice);
	if (has_from)
		req->window = 1;
	if (req->json && req->window)
		return usage_err(req, "--json only shows the window");
	return BCSCTL_PARSE_OK;
}

/* stats global: --last N, --json. */
static int parse_stats_global(struct bcsctl_req *req, int argc, char **argv)
{
	const char *v;
	int i, r;

	req->last = BCSCTL_GLOBAL_LAST;
	for (i = 0; i < argc; i++) {
		if (is_help(argv[i]))
			return BCSCTL_PARSE_HELP;
		if (!strcmp(argv[i], "--json")) {
			req->json = 1;
			continue;
		}
		r = opt_val(req, argc, argv, &i, "--last", &v);
		if (r < 0)
			return r;
		if (r) {
			if (parse_u64(v, 1, UINT32_MAX, &req->last))
				return usage_err(req, "bad --last '%s' (1..%u)",
						 v, UINT32_MAX);
			continue;
		}
		return bad_arg(req, argv[i]);
	}
	return BCSCTL_PARSE_OK;
}

const struct bcsctl_cmd bcsctl_cmds[] = {
	{ NULL, "status", "[--json | --cluster]",
	  "Show mode, row, slice, jobs and counters (and the last slices)",
	  0, parse_status, bcsctl_run_status },
	{ "job", "create", "[--id N] [--row R] [--nodes LIST] [--owner USER]",
	  "Create a job and print its id; through bcsd, --nodes names the nodes it will run on (Slurm hostlist syntax, node[01-16,20], or node ids); --owner makes USER (a name or uid) its owner, who alone (and root) may attach to it and destroy it, on every node through bcsd",
	  1, parse_job_create, bcsctl_run_job_create },
	{ "job", "destroy", "JOB",
	  "Destroy a job; its tasks keep running",
	  1, parse_job_destroy, bcsctl_run_job_destroy },
	{ "job", "list", "[--json]",
	  "List the jobs (and the cluster's, with bcsd)",
	  0, parse_query, bcsctl_run_job_list },
	{ "job", "signal", "JOB SIGNAL",
	  "Send a signal to every process of a job (on every node)",
	  1, parse_job_signal, bcsctl_run_job_signal },
	{ "job", "attach", "[--thread] JOB PID... | JOB --node N PID...",
	  "Attach processes (or threads) to a job; with --node, node N's, through bcsd",
	  0, parse_job_pids, bcsctl_run_job_attach },
	{ "job", "detach", "[--thread] JOB PID...",
	  "Detach processes (or threads) from a job",
	  0, parse_job_pids, bcsctl_run_job_detach },
	{ "job", "row", "JOB ROW|none",
	  "Move a job to a row at the next strobe",
	  1, parse_job_row, bcsctl_run_job_row },
	{ "job", "filler", "JOB on|off",
	  "Make a job of this node's bcs.ko a filler job, which also runs in the slices where no other job has work here, or not",
	  1, parse_job_filler, bcsctl_run_job_filler },
	{ NULL, "run", "--job JOB [--create [--row R]] "
	  "[--mpi-stats [--no-attach]] [--] CMD [ARGS...]",
	  "Join a job, then execute CMD in it",
	  0, parse_run, bcsctl_run_run },
	{ "slice", "set", "USEC",
	  "Set the slice length in microseconds",
	  1, parse_slice_set, bcsctl_run_slice_set },
	{ "slice", "get", "",
	  "Print the slice length in microseconds",
	  0, parse_none, bcsctl_run_slice_get },
	{ NULL, "mode", "off|standalone [--watchdog N]",
	  "Stop, or strobe from the local timer",
	  1, parse_mode, bcsctl_run_mode },
	{ NULL, "strobe", "[--row R] [--slice N] [--now | --in USEC]",
	  "Inject a strobe (next row, in 1 ms)",
	  1, parse_strobe, bcsctl_run_strobe },
	{ "stats", "enable",
	  "JOB [--pid PID|NODE:PID]... [--rank LIST]... [--metric NAME]... "
	  "[--mpi LIST] "
	  "[--resolution N]",
	  "Record distributions of the tasks (MPI primitives) of a job",
	  0, parse_stats, bcsctl_run_stats },
	{ "stats", "disable", "JOB [--pid PID]... [--metric NAME]... [--mpi]",
	  "Stop recording them (MPI statistics); what was recorded stays",
	  0, parse_stats, bcsctl_run_stats },
	{ "stats", "release", "JOB [--pid PID]...",
	  "Free the statistics, also of tasks that are gone",
	  0, parse_stats, bcsctl_run_stats },
	{ "stats", "window",
	  "[--from-slice A --to-slice B | --clear | --json]",
	  "Record only slices A..B (*), clear (*) or show the window",
	  0, parse_stats_window, bcsctl_run_stats_window },
	{ "stats", "global", "[--last N] [--json]",
	  "The master's records of its last N slices (20)",
	  0, parse_stats_global, bcsctl_run_stats_global },
	{ NULL, "completion", "",
	  "Print bash's completion of bcsctl, made from this list of commands",
	  0, parse_none, bcsctl_run_completion },
};

const size_t bcsctl_nr_cmds = sizeof(bcsctl_cmds) / sizeof(bcsctl_cmds[0]);

/*
 * Edit distance of @a and @b, a swap of two neighbours counting as one
 * edit (optimal string alignment); command names are short.
 */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, c;
	size_t d[24][24];

	if (la >= 24 || lb >= 24)
		return (size_t)-1;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	}
	return d[la][lb];
}

/*
 * The command word (@group NULL: a command or a group; else a subcommand
 * of @group) nearest to @word, if it is near enough to be a slip.
 */
static const char *nearest(const char *group, const char *word)
{
	const char *best = NULL, *cand;
	size_t d, best_d = (size_t)-1, k;

	for (k = 0; k < bcsctl_nr_cmds; k++) {
		const struct bcsctl_cmd *c = &bcsctl_cmds[k];

		if (group)
			cand = c->group && !strcmp(c->group, group) ?
			       c->name : NULL;
		else
			cand = c->group ? c->group : c->name;
		if (!cand)
			continue;
		d = distance(word, cand);
		if (d < best_d) {
			best_d = d;
			best = cand;
		}
	}
	/* A slip: at most two edits, and fewer than half the word. */
	if (best && best_d <= 2 && best_d * 2 < strlen(best))
		return best;
	return NULL;
}

static int unknown(struct bcsctl_req *req, const char *group,
		   const char *word)
{
	const char *near = nearest(group, word);
	char hint[64] = "";

	if (near)
		snprintf(hint, sizeof(hint), "; did you mean '%s'?", near);
	if (group)
		return usage_err(req, "unknown %s subcommand '%s'%s", group,
				 word, hint);
	return usage_err(req, "unknown command '%s'%s", word, hint);
}

int bcsctl_parse(int argc, char **argv, struct bcsctl_req *req)
{
	const struct bcsctl_cmd *c;
	int group_seen = 0;
	const char *a;
	size_t k;

	memset(req, 0, sizeof(*req));
	req->row = BCS_ROW_NONE;
	req->lead_us = BCSCTL_STROBE_LEAD_US;

	if (argc < 2)
		return usage_err(req, "missing command");
	a = argv[1];
	if (is_help(a))
		return BCSCTL_PARSE_HELP;
	if (!strcmp(a, "--version"))
		return BCSCTL_PARSE_VERSION;
	if (a[0] == '-')
		return usage_err(req, "unknown option '%s'", a);

	for (k = 0; k < bcsctl_nr_cmds; k++) {
		c = &bcsctl_cmds[k];
		if (!c->group) {
			if (!strcmp(a, c->name)) {
				req->cmd = c;
				return c->parse(req, argc - 2, argv + 2);
			}
			continue;
		}
		if (strcmp(a, c->group))
			continue;
		group_seen = 1;
		if (argc > 2 && !strcmp(argv[2], c->name)) {
			req->cmd = c;
			return c->parse(req, argc - 3, argv + 3);
		}
	}
	if (!group_seen)
		return unknown(req, NULL, a);
	req->group = a;
	if (argc < 3)
		return usage_err(req, "missing %s subcommand", a);
	if (is_help(argv[2]))
		return BCSCTL_PARSE_HELP;
	return unknown(req, a, argv[2]);
}

/*
 * The words of a synopsis a user may type as they are: options ("--row")
 * and the lower-case alternatives of a choice ("off|standalone",
 * "ROW|none" gives "none"), each once, apart by spaces.
 */
static void print_words(FILE *f, const char *args)
{
	const char *p = args, *e;
	size_t n;

	while (*p) {
		p += strcspn(p, "-abcdefghijklmnopqrstuvwxyz");
		if (!*p)
			break;
		/* A word: letters, digits, '-' and '_' (an option or a choice). */
		n = strspn(p, "-_abcdefghijklmnopqrstuvwxyz0123456789");
		e = p + n;
		if ((p[0] == '-' && p[1] == '-' && n > 2) ||
		    (p[0] != '-' && ((p > args && p[-1] == '|') || *e == '|')))
			fprintf(f, " %.*s", (int)n, p);
		p = e;
	}
}

/* Is @k the first command of its group in the table (or of none)? */
static int first_of_group(size_t k)
{
	const struct bcsctl_cmd *c = &bcsctl_cmds[k];
	size_t j;

	for (j = 0; j < k && c->group; j++)
		if (bcsctl_cmds[j].group &&
		    !strcmp(bcsctl_cmds[j].group, c->group))
			return 0;
	return 1;
}

void bcsctl_completion(FILE *f)
{
	size_t k, j;

	fprintf(f, "# bash completion of bcsctl, made by `bcsctl completion`"
		" from its table of\n# commands.\n"
		"_bcsctl()\n{\n"
		"\tlocal cur=${COMP_WORDS[COMP_CWORD]} key words\n"
		"\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
		"\t\twords=\"--help --version");
	for (k = 0; k < bcsctl_nr_cmds; k++)
		if (first_of_group(k))
			fprintf(f, " %s", bcsctl_cmds[k].group ?
				bcsctl_cmds[k].group : bcsctl_cmds[k].name);
	fprintf(f, "\"\n\telse\n\t\tkey=${COMP_WORDS[1]}\n"
		"\t\tcase $key in\n");
	for (k = 0; k < bcsctl_nr_cmds; k++) {
		const struct bcsctl_cmd *c = &bcsctl_cmds[k];

		if (!c->group || !first_of_group(k))
			continue;
		fprintf(f, "\t\t%s)\n\t\t\tif [ \"$COMP_CWORD\" -eq 2 ]; then\n"
			"\t\t\t\tkey=\n\t\t\t\twords=\"", c->group);
		for (j = k; j < bcsctl_nr_cmds; j++)
			if (bcsctl_cmds[j].group &&
			    !strcmp(bcsctl_cmds[j].group, c->group))
				fprintf(f, "%s%s", j == k ? "" : " ",
					bcsctl_cmds[j].name);
		fprintf(f, "\"\n\t\t\telse\n"
			"\t\t\t\tkey=\"$key ${COMP_WORDS[2]}\"\n"
			"\t\t\tfi ;;\n");
	}
	fprintf(f, "\t\tesac\n\t\tcase $key in\n");
	for (k = 0; k < bcsctl_nr_cmds; k++) {
		const struct bcsctl_cmd *c = &bcsctl_cmds[k];

		if (c->group)
			fprintf(f, "\t\t\"%s %s\") words=\"", c->group, c->name);
		else
			fprintf(f, "\t\t%s) words=\"", c->name);
		print_words(f, c->args);
		fprintf(f, " --help\" ;;\n");
	}
	fprintf(f, "\t\tesac\n\tfi\n"
		"\tmapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n"
		"}\ncomplete -F _bcsctl bcsctl\n");
}

/* Synopses longer than this get their help text on the next line. */
#define SYNOPSIS_WIDTH	36

static void print_synopsis(FILE *f, const struct bcsctl_cmd *c, int list)
{
	char buf[128];
	int len;

	len = snprintf(buf, sizeof(buf), "%s%s%s%s%s",
		       c->group ? c->group : "", c->group ? " " : "", c->name,
		       *c->args ? " " : "", c->args);
	if (!list) {
		fprintf(f, "Usage: bcsctl %s\n", buf);
		return;
	}
	if (len > SYNOPSIS_WIDTH)
		fprintf(f, "  %s\n  %-*s  ", buf, SYNOPSIS_WIDTH, "");
	else
		fprintf(f, "  %-*s  ", SYNOPSIS_WIDTH, buf);
	fprintf(f, "%s%s\n", c->help, c->admin ? " (*)" : "");
}

void bcsctl_usage(FILE *f, const struct bcsctl_cmd *cmd, const char *group)
{
	int admin = 0;
	size_t k;

	if (cmd) {
		print_synopsis(f, cmd, 0);
		fprintf(f, "%s%s.\n", cmd->help,
			cmd->admin ? "; needs CAP_SYS_ADMIN" : "");
		/* A command whose options differ in privilege marks them. */
		if (strstr(cmd->help, "(*)"))
			fprintf(f, "(*) needs CAP_SYS_ADMIN.\n");
		return;
	}
	if (group) {
		fprintf(f, "Usage: bcsctl %s SUBCOMMAND [ARGS]\n\n"
			"Subcommands:\n", group);
		for (k = 0; k < bcsctl_nr_cmds; k++) {
			const struct bcsctl_cmd *c = &bcsctl_cmds[k];

			if (c->group && !strcmp(c->group, group)) {
				print_synopsis(f, c, 1);
				admin |= c->admin || strstr(c->help, "(*)");
			}
		}
		if (admin)
			fprintf(f, "\n(*) needs CAP_SYS_ADMIN.\n");
		return;
	}
	fprintf(f, "Usage: bcsctl [-h|--help] [--version] COMMAND [ARGS]\n"
		"Control bcs, the gang scheduler.\n\nCommands:\n");
	for (k = 0; k < bcsctl_nr_cmds; k++)
		print_synopsis(f, &bcsctl_cmds[k], 1);
	fprintf(f, "\n(*) needs CAP_SYS_ADMIN.  JOB is 1..%u, ROW 0..%u or "
		"none, USEC %llu..%llu.\n"
		"Exit status: 0 ok, 1 operation failed, 2 usage error.\n",
		BCS_JOB_ID_MAX, BCS_ROWS_MAX - 1, BCS_SLICE_NS_MIN / 1000,
		BCS_SLICE_NS_MAX / 1000);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bcsctl: execution of parsed commands through libbcs.
 *
 * Each run function returns the exit status: 0 done, 1 the operation
 * failed (with a message on stderr), 126/127 for `run` when the command
 * cannot be executed.
 *
 * When bcsd runs on this host, job create, destroy, row and list act on
 * the cluster through it (the master assigns ids and rows, and every node
 * creates the job); otherwise they act on the local module only.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE		/* fgetpwent() */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bcs.h>
#include <bcs_ctl.h>
#include <json-c/json.h>

#include "bcsctl.h"
#include "bcsctl_mpi.h"
#include "numparse.h"

static int fail(const char *what, int err, enum bcs_err_ctx ctx)
{
	fprintf(stderr, "bcsctl: %s: %s\n", what, bcs_strerror(err, ctx));
	return BCSCTL_EXIT_FAIL;
}

static int open_bcs(struct bcs **h)
{
	int err = bcs_open(h);

	if (err) {
		fprintf(stderr, "bcsctl: %s\n", bcs_strerror(err, BCS_CTX_OPEN));
		return BCSCTL_EXIT_FAIL;
	}
	return BCSCTL_EXIT_OK;
}

#define CLUSTER_TIMEOUT_MS	5000
#define CLUSTER_WAIT_MS		10000

/* One request to bcsd; prints bcsd's message on failure. */
static int cluster(int fd, struct json_object *req, struct json_object **resp,
		   const char *what, int timeout_ms)
{
	char msg[256];
	int err;

	err = bcs_ctl_call(fd, req, resp, timeout_ms, msg, sizeof(msg));
	close(fd);
	if (err)
		fprintf(stderr, "bcsctl: %s: %s\n", what, msg);
	return err;
}

static struct json_object *cluster_req(const char *cmd)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "cmd", json_object_new_string(cmd));
	return o;
}

static void cluster_add(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

/*
 * bcsd's answer to @cmd: 1 with *@resp set, 0 when bcsd does not run
 * here, -1 when it runs and failed to answer (said on stderr).
 */
static int cluster_query(const char *cmd, const char *what,
			 struct json_object **resp)
{
	int fd = bcs_ctl_connect();

	*resp = NULL;
	if (fd < 0)
		return 0;
	if (cluster(fd, cluster_req(cmd), resp, what, CLUSTER_TIMEOUT_MS))
		return -1;
	return 1;
}

/* This node's place in the tree of daemons, if bcsd has one. */
static void print_tree(struct json_object *resp)
{
	struct json_object *t, *v, *a;
	size_t i, n;

	if (!json_object_object_get_ex(resp, "tree", &t) || !t)
		return;
	printf("%-16s %s, %lld nodes, root %lld\n", "tree:",
	       json_object_object_get_ex(t, "transport", &v) && v ?
	       json_object_get_string(v) : "?",
	       (long long)bcs_ctl_int(t, "nodes", 0),
	       (long long)bcs_ctl_int(t, "root", 0));
	if (bcs_ctl_int(t, "parent", 0))
		printf("%-16s %lld, depth %lld\n", "tree parent:",
		       (long long)bcs_ctl_int(t, "parent", 0),
		       (long long)bcs_ctl_int(t, "depth", 0));
	else
		printf("%-16s none (the root)\n", "tree parent:");
	printf("%-16s", "tree children:");
	a = json_object_object_get_ex(t, "children", &a) ? a : NULL;
	n = a ? json_object_array_length(a) : 0;
	for (i = 0; i < n; i++)
		printf("%s%lld", i ? ", " : " ",
		       (long long)json_object_get_int64(
			       json_object_array_get_idx(a, i)));
	printf("%s (subtree of %lld", n ? "" : " none",
	       (long long)bcs_ctl_int(t, "subtree", 0));
	/* Down a tree: how many of them the last sum of reports held. */
	if (json_object_object_get_ex(t, "reporting", &v) && v)
		printf(", %lld reporting", (long long)json_object_get_int64(v));
	printf(")\n");
	/* Lost strobes, asked for again (Documentation/tree.rst). */
	if (!json_object_object_get_ex(t, "transport", &v) || !v ||
	    strcmp(json_object_get_string(v), "tree"))
		return;
	printf("%-16s %lld asked for again, %lld asked of it, %lld resent\n",
	       "tree strobes:",
	       (long long)bcs_ctl_int(resp, "strobe_nacks_tx", 0),
	       (long long)bcs_ctl_int(resp, "strobe_nacks_rx", 0),
	       (long long)bcs_ctl_int(resp, "strobe_resent", 0));
	/* Lost parts of tree gathers' answers, the same way (filters.rst). */
	printf("%-16s %lld asked for again, %lld asked of it, %lld parts resent, %lld refused\n",
	       "tree gathers:",
	       (long long)bcs_ctl_int(resp, "tg_nacks_tx", 0),
	       (long long)bcs_ctl_int(resp, "tg_nacks_rx", 0),
	       (long long)bcs_ctl_int(resp, "tg_parts_resent", 0),
	       (long long)bcs_ctl_int(resp, "tg_nacks_refused", 0));
}

/*
 * On the active master with a tree: every node's clock offset from the
 * master's, with its bound, in microseconds.
 */
static void print_offsets(struct json_object *resp)
{
	struct json_object *a, *o, *v;
	size_t i, n;

	if (!json_object_object_get_ex(resp, "offsets", &a) || !a ||
	    !json_object_is_type(a, json_type_array))
		return;
	printf("%-16s %lld warning(s)\n", "clock offsets:",
	       (long long)bcs_ctl_int(resp, "skew_warnings", 0));
	printf("  %8s %8s %5s %14s %12s %8s\n", "node", "parent", "depth",
	       "offset_us", "bound_us", "age_ms");
	n = json_object_array_length(a);
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(a, i);
		printf("  %8lld", (long long)bcs_ctl_int(o, "node", 0));
		if (json_object_object_get_ex(o, "parent", &v) && v)
			printf(" %8lld", (long long)json_object_get_int64(v));
		else
			printf(" %8s", "-");
		printf(" %5lld", (long long)bcs_ctl_int(o, "depth", 0));
		if (json_object_object_get_ex(o, "bound_ns", &v) && v)
			printf(" %14.3f %12.3f",
			       (double)bcs_ctl_int(o, "offset_ns", 0) / 1000,
			       (double)json_object_get_int64(v) / 1000);
		else
			printf(" %14s %12s", "?", "?");
		if (json_object_object_get_ex(o, "age_ms", &v) && v)
			printf(" %8lld\n", (long long)json_object_get_int64(v));
		else
			printf(" %8s\n", "-");
	}
}

static void print_cluster_status(struct json_object *resp)
{
	struct json_object *v;

	printf("%-16s %s\n", "bcsd role:",
	       json_object_object_get_ex(resp, "role", &v) ?
	       json_object_get_string(v) : "?");
	printf("%-16s %lld\n", "node id:",
	       (long long)bcs_ctl_int(resp, "node_id", 0));
	if (bcs_ctl_int(resp, "master_id", 0))
		printf("%-16s %lld%s\n", "master:",
		       (long long)bcs_ctl_int(resp, "master_id", 0),
		       bcs_ctl_int(resp, "active_master", 0) ? " (this node)" : "");
	else
		printf("%-16s none heard\n", "master:");
	printf("%-16s %lld\n", "epoch:", (long long)bcs_ctl_int(resp, "epoch", 0));
	printf("%-16s %lld\n", "cluster slice:",
	       (long long)bcs_ctl_int(resp, "slice", 0));
	printf("%-16s %lld\n", "strobes rx:",
	       (long long)bcs_ctl_int(resp, "strobes_rx", 0));
	printf("%-16s %lld\n", "strobe copies:",
	       (long long)bcs_ctl_int(resp, "strobe_copies", 0));
	printf("%-16s %lld\n", "strobes tx:",
	       (long long)bcs_ctl_int(resp, "strobes_tx", 0));
	printf("%-16s %lld\n", "rejected:",
	       (long long)bcs_ctl_int(resp, "rejected", 0));
	printf("%-16s %lld reporting of %lld heard (quorum %lld)\n", "nodes:",
	       (long long)bcs_ctl_int(resp, "nodes_reporting", 0),
	       (long long)bcs_ctl_int(resp, "nodes_heard", 0),
	       (long long)bcs_ctl_int(resp, "quorum", 0));
	print_tree(resp);
	print_offsets(resp);
}

static void json_print(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void json_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

/* A row in JSON: its number, or null for no row. */
static void json_row(struct json_object *o, uint32_t row)
{
	json_object_object_add(o, "row", row == BCS_ROW_NONE ? NULL :
			       json_object_new_int64(row));
}

static struct json_object *state_json(const struct bcs_state *st)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "mode",
			       json_object_new_string(bcs_mode_name(st->mode)));
	json_row(o, st->row);
	json_u64(o, "slice", st->slice);
	json_u64(o, "slice_ns", st->slice_ns);
	json_u64(o, "watchdog_slices", st->watchdog_slices);
	json_object_object_add(o, "failopen",
			       json_object_new_boolean(st->failopen));
	json_object_object_add(o, "driver_pid", st->driver_pid ?
			       json_object_new_int(st->driver_pid) : NULL);
	json_u64(o, "jobs", st->nr_jobs);
	json_u64(o, "tasks", st->nr_tasks);
	json_u64(o, "parked", st->nr_parked);
	json_u64(o, "strobes", st->strobes);
	json_u64(o, "switches", st->switches);
	json_u64(o, "late", st->late);
	json_u64(o, "missed", st->missed);
	json_u64(o, "predicted", st->predicted);
	json_u64(o, "expired", st->expired);
	json_u64(o, "planned", st->planned);
	json_u64(o, "failopens", st->failopens);
	json_u64(o, "drain_cuts", st->drain_cuts);
	json_u64(o, "attach_failures", st->attach_failures);
	json_u64(o, "stat_records", st->stat_records);
	json_u64(o, "interface_version", st->version);
	return o;
}

/* The slice window in JSON; its bounds are null when there is none. */
static struct json_object *window_json(const struct bcs_window *w)
{
	struct json_object *o = json_object_new_object();
	int none = w->state == BCS_WINDOW_NONE;

	json_object_object_add(o, "state", json_object_new_string(
			       bcs_window_state_name(w->state)));
	json_object_object_add(o, "from_slice", none ? NULL :
			       json_object_new_uint64(w->from_slice));
	json_object_object_add(o, "to_slice", none ? NULL :
			       json_object_new_uint64(w->to_slice));
	json_u64(o, "records", w->records);
	json_u64(o, "dropped", w->dropped);
	json_object_object_add(o, "first_seq", w->records ?
			       json_object_new_uint64(w->first_seq) : NULL);
	return o;
}

/* "none", or "armed, slices A..B, N records" and so on. */
static void print_window(const char *label, const struct bcs_window *w)
{
	printf("%-16s %s", label, bcs_window_state_name(w->state));
	if (w->state != BCS_WINDOW_NONE) {
		printf(", slices %llu..%llu, %llu records",
		       (unsigned long long)w->from_slice,
		       (unsigned long long)w->to_slice,
		       (unsigned long long)w->records);
		if (w->records)
			printf(" from seq %llu",
			       (unsigned long long)w->first_seq);
		if (w->dropped)
			printf(", %llu dropped (ring full)",
			       (unsigned long long)w->dropped);
	}
	putchar('\n');
}

/* Create, destroy or move a job through bcsd. */
static int cluster_job(int fd, const char *cmd, uint32_t job, uint32_t row,
		       const char *what, uint32_t *id_out)
{
	struct json_object *req = cluster_req(cmd), *resp;

	cluster_add(req, "job", job);
	json_row(req, row);
	if (cluster(fd, req, &resp, what, CLUSTER_TIMEOUT_MS))
		return BCSCTL_EXIT_FAIL;
	if (id_out)
		*id_out = (uint32_t)bcs_ctl_int(resp, "job", 0);
	json_object_put(resp);
	return BCSCTL_EXIT_OK;
}

/* Nanoseconds as microseconds, without losing sub-microsecond parts. */
static const char *fmt_us(char *buf, size_t len, uint64_t ns)
{
	if (ns % 1000)
		snprintf(buf, len, "%llu.%03llu", (unsigned long long)ns / 1000,
			 (unsigned long long)ns % 1000);
	else
		snprintf(buf, len, "%llu", (unsigned long long)ns / 1000);
	return buf;
}

static const char *fmt_row(char *buf, size_t len, uint32_t row)
{
	if (row == BCS_ROW_NONE)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%u", row);
	return buf;
}

/*
 * Row @row and, after a '+', the other rows of set @rows (alternate
 * scheduling): "0", "0+2,3", "none".
 */
static const char *fmt_row_set(char *buf, size_t len, uint32_t row,
			       uint64_t rows)
{
	size_t off;
	uint32_t r;

	fmt_row(buf, len, row);
	if (row >= BCS_ROWS_MAX)
		return buf;
	rows &= ~(1ULL << row);
	for (r = 0; r < BCS_ROWS_MAX && rows; r++) {
		if (!(rows & (1ULL << r)))
			continue;
		off = strlen(buf);
		snprintf(buf + off, len - off, "%s%u",
			 strchr(buf, '+') ? "," : "+", r);
		rows &= ~(1ULL << r);
	}
	return buf;
}

int bcsctl_run_status(const struct bcsctl_req *req)
{
	struct json_object *resp;
	struct bcs_window w;
	struct bcs_state st;
	struct bcs *h;
	char b[64];
	int err, cl, has_window;

	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	err = bcs_get_state(h, &st);
	/* A module from before slice windows has none to show. */
	has_window = !err && !bcs_window_get(h, &w);
	bcs_close(h);
	if (err)
		return fail("status", err, BCS_CTX_GENERIC);
	if (st.version != BCS_VERSION)
		fprintf(stderr, "bcsctl: warning: module interface version %u, "
			"bcsctl speaks %u\n", st.version, BCS_VERSION);

	cl = cluster_query("status", "cluster status", &resp);
	if (req->json) {
		struct json_object *o = state_json(&st);

		json_object_object_add(o, "window", has_window ?
				       window_json(&w) : NULL);
		/* bcsd's own answer, as it gave it; null without bcsd. */
		json_object_object_add(o, "cluster", resp);
		json_print(o);
		json_object_put(o);
		return BCSCTL_EXIT_OK;
	}
	printf("%-16s %s\n", "mode:", bcs_mode_name(st.mode));
	printf("%-16s %s\n", "row:", fmt_row(b, sizeof(b), st.row));
	printf("%-16s %llu\n", "slice:", (unsigned long long)st.slice);
	printf("%-16s %s us\n", "slice length:",
	       fmt_us(b, sizeof(b), st.slice_ns));
	if (st.watchdog_slices)
		printf("%-16s %u slices\n", "watchdog:", st.watchdog_slices);
	else
		printf("%-16s off\n", "watchdog:");
	printf("%-16s %s\n", "fail-open:", st.failopen ? "yes" : "no");
	if (st.driver_pid)
		printf("%-16s pid %d\n", "driver:", st.driver_pid);
	else
		printf("%-16s none\n", "driver:");
	printf("%-16s %u\n", "jobs:", st.nr_jobs);
	printf("%-16s %u\n", "tasks:", st.nr_tasks);
	printf("%-16s %u\n", "parked:", st.nr_parked);
	printf("%-16s %llu\n", "strobes:", (unsigned long long)st.strobes);
	printf("%-16s %llu\n", "switches:", (unsigned long long)st.switches);
	printf("%-16s %llu\n", "late:", (unsigned long long)st.late);
	printf("%-16s %llu\n", "missed:", (unsigned long long)st.missed);
	printf("%-16s %llu\n", "predicted:",
	       (unsigned long long)st.predicted);
	printf("%-16s %llu\n", "expired:",
	       (unsigned long long)st.expired);
	printf("%-16s %llu\n", "planned:",
	       (unsigned long long)st.planned);
	printf("%-16s %llu\n", "failopens:",
	       (unsigned long long)st.failopens);
	printf("%-16s %llu\n", "drain cuts:",
	       (unsigned long long)st.drain_cuts);
	printf("%-16s %llu\n", "attach failures:",
	       (unsigned long long)st.attach_failures);
	printf("%-16s %u\n", "stat records:", st.stat_records);
	if (has_window)
		print_window("window:", &w);
	if (cl > 0) {
		print_cluster_status(resp);
		json_object_put(resp);
	}
	/* --cluster: the master's summary of the last slices too. */
	if (cl > 0 && req->cluster) {
		struct bcsctl_req g = *req;

		g.json = 0;
		g.last = BCSCTL_GLOBAL_LAST;
		printf("\n");
		return bcsctl_run_stats_global(&g);
	}
	return BCSCTL_EXIT_OK;
}

/*
 * Say why bcs.ko refused to attach @pid to @job (-EPERM): the job belongs
 * to another uid, or the process is not the caller's to signal.  Returns
 * the exit status.
 */
static int attach_denied(struct bcs *h, const char *what, bool attach,
			 uint32_t job, pid_t pid)
{
	struct bcs_job_info *jobs = NULL;
	uid_t me = geteuid();
	size_t n = 0, i;

	if (me && !bcs_job_list(h, &jobs, &n)) {
		for (i = 0; i < n; i++) {
			if (jobs[i].id != job || jobs[i].owner == me)
				continue;
			fprintf(stderr, "bcsctl: %s: permission denied: job %u belongs to uid %u; only its owner or root may %s it\n",
				what, job, jobs[i].owner,
				attach ? "attach to" : "detach from");
			free(jobs);
			return BCSCTL_EXIT_FAIL;
		}
		free(jobs);
	}
	if (kill(pid, 0) && errno == EPERM) {
		fprintf(stderr, "bcsctl: %s: permission denied: process %d is not yours to signal, so not yours to %s\n",
			what, (int)pid, attach ? "attach" : "detach");
		return BCSCTL_EXIT_FAIL;
	}
	return fail(what, -EPERM, BCS_CTX_TASK);
}

/*
 * The uid of --owner: a uid, or a user name of /etc/passwd (read as a
 * file: bcsctl is linked statically, without the name services); -1 and
 * a message if none.
 */
static int owner_uid(const char *s, uid_t *uid)
{
	const struct passwd *pw;
	uint32_t v;
	FILE *f;

	if (!parse_u32(s, 0, UINT32_MAX - 1, &v)) {
		*uid = (uid_t)v;
		return 0;
	}
	f = fopen("/etc/passwd", "re");
	while (f && (pw = fgetpwent(f))) {
		if (!strcmp(pw->pw_name, s)) {
			*uid = pw->pw_uid;
			fclose(f);
			return 0;
		}
	}
	if (f)
		fclose(f);
	fprintf(stderr, "bcsctl: job create: --owner %s: no such user in /etc/passwd (give the uid)\n",
		s);
	return -1;
}

int bcsctl_run_job_create(const struct bcsctl_req *req)
{
	int fd = bcs_ctl_connect();
	struct bcs *h;
	uid_t owner = 0;
	uint32_t id;
	int err;

	if (req->owner && owner_uid(req->owner, &owner)) {
		if (fd >= 0)
			close(fd);
		return BCSCTL_EXIT_USAGE;
	}
	if (fd >= 0) {
		struct json_object *r = cluster_req("job-create"), *resp;

		cluster_add(r, "job", req->id);
		json_row(r, req->row);
		/* Every node makes the job for this uid (a cluster job). */
		if (req->owner)
			cluster_add(r, "owner", owner);
		if (req->nodes)
			json_object_object_add(r, "nodes",
				json_object_new_string(req->nodes));
		if (cluster(fd, r, &resp, "job create", CLUSTER_TIMEOUT_MS))
			return BCSCTL_EXIT_FAIL;
		id = (uint32_t)bcs_ctl_int(resp, "job", 0);
		json_object_put(resp);
		printf("%u\n", id);
		return BCSCTL_EXIT_OK;
	}
	if (req->nodes) {
		fprintf(stderr, "bcsctl: job create: --nodes needs bcsd (a cluster job); this node's bcs.ko alone runs its own jobs\n");
		return BCSCTL_EXIT_USAGE;
	}
	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	if (req->owner)
		err = bcs_job_create_owned(h, req->id, req->row, owner, &id);
	else
		err = bcs_job_create(h, req->id, req->row, &id);
	bcs_close(h);
	if (err)
		return fail("job create", err, BCS_CTX_JOB);
	printf("%u\n", id);
	return BCSCTL_EXIT_OK;
}

int bcsctl_run_job_destroy(const struct bcsctl_req *req)
{
	int fd = bcs_ctl_connect();
	char what[64];
	struct bcs *h;
	int err;

	snprintf(what, sizeof(what), "job destroy %u", req->job);
	if (fd >= 0)
		return cluster_job(fd, "job-destroy", req->job, -1, what, NULL);
	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	err = bcs_job_destroy(h, req->job);
	bcs_close(h);
	snprintf(what, sizeof(what), "job destroy %u", req->job);
	return err ? fail(what, err, BCS_CTX_JOB) : BCSCTL_EXIT_OK;
}

/*
 * A signal to every process of a job: through bcsd to every node that
 * holds its tasks, or, without bcsd, to those of this node.
 */
int bcsctl_run_job_signal(const struct bcsctl_req *req)
{
	struct bcs_task_stat *ts = NULL;
	int fd = bcs_ctl_connect();
	struct json_object *o;
	size_t n = 0, i, k, sent = 0;
	char what[64];
	struct bcs *h;
	int err;

	snprintf(what, sizeof(what), "job signal %u", req->job);
	if (fd >= 0) {
		o = cluster_req("job-signal");
		cluster_add(o, "job", req->job);
		cluster_add(o, "signal", req->signal);
		if (cluster(fd, o, &o, what, CLUSTER_TIMEOUT_MS))
			return BCSCTL_EXIT_FAIL;
		json_object_put(o);
		return BCSCTL_EXIT_OK;
	}
	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	err = bcs_task_stats(h, req->job, &ts, &n);
	bcs_close(h);
	if (err)
		return fail(what, err, BCS_CTX_JOB);
	for (i = 0; i < n; i++) {
		for (k = 0; k < i && ts[k].tgid != ts[i].tgid; k++)
			;
		if (k < i)
			continue;	/* a process once, not each thread */
		if (kill(ts[i].tgid, req->signal)) {
			fprintf(stderr, "bcsctl: %s: process %d: %s\n", what,
				ts[i].tgid, strerror(errno));
			err = -errno;
		} else {
			sent++;
		}
	}
	free(ts);
	printf("%zu\n", sent);
	return err ? BCSCTL_EXIT_FAIL : BCSCTL_EXIT_OK;
}

/* This node's bcs.ko only: bcsd neither keeps nor changes the flag. */
int bcsctl_run_job_filler(const struct bcsctl_req *req)
{
	char what[64];
	struct bcs *h;
	int err;

	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	err = bcs_job_set_filler(h, req->job, req->filler);
	bcs_close(h);
	snprintf(what, sizeof(what), "job filler %u", req->job);
	return err ? fail(what, err, BCS_CTX_JOB) : BCSCTL_EXIT_OK;
}

int bcsctl_run_job_row(const struct bcsctl_req *req)
{
	int fd = bcs_ctl_connect();
	char what[64];
	struct bcs *h;
	int err;

	snprintf(what, sizeof(what), "job row %u", req->job);
	if (fd >= 0)
		return cluster_job(fd, "job-row", req->job, req->row,
				   what, NULL);
	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	err = bcs_job_set_row(h, req->job, req->row);
	bcs_close(h);
	snprintf(what, sizeof(what), "job row %u", req->job);
	return err ? fail(what, err, BCS_CTX_JOB) : BCSCTL_EXIT_OK;
}

/*
 * Job @id's label on this node (BCS_LABEL_DIR, or $BCS_LABEL_DIR), into
 * @buf; NULL if it has none.  Control characters become '?'.
 */
static const char *job_label(uint32_t id, char *buf, size_t len)
{
	const char *dir = getenv(BCS_ENV_LABEL_DIR);
	char path[4096];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", dir && *dir ? dir : BCS_LABEL_DIR,
		 id);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	for (i = 0; buf[i]; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	return *buf ? buf : NULL;
}

/* "NODE:TASKS,..." from a job's per_node array; "-" if none. */
static void print_per_node(struct json_object *j)
{
	struct json_object *arr, *o;
	size_t i, n = 0;

	if (json_object_object_get_ex(j, "per_node", &arr) &&
	    json_object_is_type(arr, json_type_array))
		n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(arr, i);
		printf("%s%lld:%lld", i ? "," : "",
		       (long long)bcs_ctl_int(o, "node", 0),
		       (long long)bcs_ctl_int(o, "tasks", 0));
	}
	printf("%s", n ? "" : "-");
}

static const struct bcs_job_info *local_job(const struct bcs_job_info *jobs,
					    size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (jobs[i].id == id)
			return &jobs[i];
	return NULL;
}

/*
 * One job of `job list`: what this node's module holds of it (@lj, NULL
 * if nothing), and the cluster's view from bcsd (@cj, NULL without bcsd).
 * Text: the same columns with or without bcsd; "-" where a part has no
 * value.  JSON: null there.
 */
static void list_one(struct json_object *arr, uint32_t id, uint32_t row,
		     const struct bcs_job_info *lj, struct json_object *cj)
{
	char rb[200], lb[BCS_LABEL_MAX];
	const char *label = job_label(id, lb, sizeof(lb));
	struct json_object *o, *v, *set;
	uint64_t rows;
	uint32_t r;

	/* The rows it runs in: this node's module's, else the map's. */
	rows = 0;
	if (lj)
		rows = lj->rows;
	else if (cj && json_object_object_get_ex(cj, "row_set", &v))
		rows = json_object_get_uint64(v);
	if (!arr) {
		printf("%10u %4s ", id, fmt_row_set(rb, sizeof(rb), row, rows));
		if (lj)
			printf("%-9s %6u %6u %12.1f %12.1f ",
			       bcs_job_state_name(lj->state), lj->nr_tasks,
			       lj->nr_parked, lj->run_ns / 1e6,
			       lj->suspended_ns / 1e6);
		else if (cj)
			printf("%-9s %6lld %6s %12s %12s ", "-",
			       (long long)bcs_ctl_int(cj, "local_tasks", 0),
			       "-", "-", "-");
		else
			printf("%-9s %6s %6s %12s %12s ", "-", "-", "-", "-",
			       "-");
		if (!cj) {
			printf("%6s %13s  %-9s  %s\n", "-", "-", "-",
			       label ? label : "-");
			return;
		}
		printf("%6lld %13lld  ", (long long)bcs_ctl_int(cj, "nodes", 0),
		       (long long)bcs_ctl_int(cj, "tasks", 0));
		print_per_node(cj);
		printf("  %s\n", label ? label : "-");
		return;
	}
	o = json_object_new_object();
	json_u64(o, "id", id);
	json_row(o, row);
	set = json_object_new_array();
	for (r = 0; r < BCS_ROWS_MAX; r++)
		if (rows & (1ULL << r))
			json_object_array_add(set, json_object_new_int64(r));
	json_object_object_add(o, "rows", set);
	json_object_object_add(o, "state", lj ?
		json_object_new_string(bcs_job_state_name(lj->state)) : NULL);
	/*
	 * This node's bcs.ko's; for a job it does not hold, bcsd's: what
	 * its bcs.ko has (bcsd-sim's stand-in), else the map's (null: not
	 * known).
	 */
	v = NULL;
	if (lj) {
		v = json_object_new_int64(lj->owner);
	} else if (cj) {
		if (!json_object_object_get_ex(cj, "local_owner", &v) || !v)
			json_object_object_get_ex(cj, "owner", &v);
		json_object_get(v);
	}
	json_object_object_add(o, "owner", v);
	json_object_object_add(o, "filler", lj ?
		json_object_new_boolean(!!(lj->flags & BCS_JOB_FILLER)) :
		NULL);
	if (lj)
		json_u64(o, "tasks", lj->nr_tasks);
	else
		json_object_object_add(o, "tasks", cj ?
			json_object_new_int64(bcs_ctl_int(cj, "local_tasks",
							  0)) : NULL);
	json_object_object_add(o, "parked", lj ?
			       json_object_new_uint64(lj->nr_parked) : NULL);
	json_object_object_add(o, "run_ns", lj ?
			       json_object_new_uint64(lj->run_ns) : NULL);
	json_object_object_add(o, "suspended_ns", lj ?
			       json_object_new_uint64(lj->suspended_ns) : NULL);
	json_object_object_add(o, "slices", lj ?
			       json_object_new_uint64(lj->slices_run) : NULL);
	json_object_object_add(o, "nodes", cj ?
		json_object_new_int64(bcs_ctl_int(cj, "nodes", 0)) : NULL);
	json_object_object_add(o, "cluster_tasks", cj ?
		json_object_new_int64(bcs_ctl_int(cj, "tasks", 0)) : NULL);
	v = NULL;
	if (cj && json_object_object_get_ex(cj, "per_node", &v))
		json_object_get(v);
	json_object_object_add(o, "per_node", v);
	json_object_object_add(o, "label", label ?
			       json_object_new_string(label) : NULL);
	json_object_array_add(arr, o);
}

/*
 * The jobs: with bcsd, those of the cluster's map, with what this node's
 * module holds of each; without, the module's.
 */
int bcsctl_run_job_list(const struct bcsctl_req *req)
{
	struct json_object *resp = NULL, *cjobs = NULL, *arr = NULL, *cj;
	struct json_object *pn = NULL, *v;
	struct bcs_job_info *jobs = NULL;
	size_t n = 0, i, nc = 0;
	const char *of = NULL;
	int64_t more;
	struct bcs *h;
	int err, cl;

	cl = cluster_query("job-list", "job list", &resp);
	if (cl < 0)
		return BCSCTL_EXIT_FAIL;
	if (cl > 0) {
		/* The module's side is a bonus here: bcsd's view stands. */
		if (!bcs_open(&h)) {
			if (bcs_job_list(h, &jobs, &n))
				n = 0;
			bcs_close(h);
		}
		if (json_object_object_get_ex(resp, "jobs", &cjobs) &&
		    json_object_is_type(cjobs, json_type_array))
			nc = json_object_array_length(cjobs);
	} else {
		if (open_bcs(&h))
			return BCSCTL_EXIT_FAIL;
		err = bcs_job_list(h, &jobs, &n);
		bcs_close(h);
		if (err)
			return fail("job list", err, BCS_CTX_JOB);
	}
	if (req->json)
		arr = json_object_new_array();
	else
		printf("%10s %4s %-9s %6s %6s %12s %12s %6s %13s  %-9s  %s\n",
		       "JOB", "ROW", "STATE", "TASKS", "PARKED", "RUN_MS",
		       "SUSPENDED_MS", "NODES", "CLUSTER_TASKS", "PER_NODE",
		       "LABEL");
	if (cl > 0) {
		for (i = 0; i < nc; i++) {
			uint32_t id;

			cj = json_object_array_get_idx(cjobs, i);
			id = (uint32_t)bcs_ctl_int(cj, "job", 0);
			list_one(arr, id,
				 bcs_ctl_row(cj),
				 local_job(jobs, n, id), cj);
		}
	} else {
		for (i = 0; i < n; i++)
			list_one(arr, jobs[i].id, jobs[i].row, &jobs[i], NULL);
	}
	/*
	 * Whose tasks PER_NODE shows (bcsd's "per_node": every node's
	 * reports, or down a tree this node's subtree, the cluster on the
	 * master), and the pairs its bounded lists left out.
	 */
	if (cl > 0 && json_object_object_get_ex(resp, "per_node", &pn) && pn &&
	    json_object_object_get_ex(pn, "of", &v))
		of = json_object_get_string(v);
	more = cl > 0 && pn ? bcs_ctl_int(pn, "more", 0) : 0;
	if (arr) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "jobs", arr);
		json_object_object_add(o, "cluster",
				       json_object_new_boolean(cl > 0));
		json_object_object_add(o, "per_node_of", of ?
				       json_object_new_string(of) : NULL);
		json_object_object_add(o, "per_node_more", cl > 0 ?
				       json_object_new_int64(more) : NULL);
		json_print(o);
		json_object_put(o);
	} else if (more > 0) {
		printf("PER_NODE: %lld more (job, node) pairs than the tree carries\n",
		       (long long)more);
	}
	free(jobs);
	json_object_put(resp);
	return BCSCTL_EXIT_OK;
}

static int attach_detach(const struct bcsctl_req *req, int attach)
{
	uint32_t flags = req->thread ? BCS_ATTACH_THREAD : 0;
	int status = BCSCTL_EXIT_OK;
	struct bcs *h;
	int i, err;

	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	/* Try every pid, so one bad pid does not hide the others. */
	for (i = 0; i < req->nr_pids; i++) {
		char what[64];
		int32_t pid;

		if (parse_pid(req->pids[i], &pid))
			continue;	/* cannot happen: checked by the parser */
		if (attach)
			err = bcs_attach(h, req->job, pid, flags, NULL);
		else
			err = bcs_detach(h, req->job, pid, flags, NULL);
		if (!err)
			continue;
		snprintf(what, sizeof(what), "job %s %u %d",
			 attach ? "attach" : "detach", req->job, pid);
		if (err == -EPERM) {
			status = attach_denied(h, what, attach, req->job,
					       pid);
			continue;
		}
		/*
		 * Detach says ESRCH also for a process that lives but has
		 * no thread in the job: say which it is.
		 */
		if (!attach && err == -ESRCH &&
		    (!kill(pid, 0) || errno == EPERM)) {
			fprintf(stderr, "bcsctl: %s: process %d is not in "
				"job %u\n", what, pid, req->job);
			status = BCSCTL_EXIT_FAIL;
			continue;
		}
		status = fail(what, err, BCS_CTX_TASK);
	}
	bcs_close(h);
	return status;
}

/*
 * attach --node N: each pid through bcsd, its master and down to node N,
 * whose bcsd attaches it and says how it went.
 */
static int attach_remote(const struct bcsctl_req *req)
{
	int status = BCSCTL_EXIT_OK;
	struct json_object *o;
	char what[80];
	int i, fd;
	int32_t pid;

	for (i = 0; i < req->nr_pids; i++) {
		if (parse_pid(req->pids[i], &pid))
			continue;	/* cannot happen: checked by the parser */
		snprintf(what, sizeof(what), "job attach %u --node %u %d",
			 req->job, req->node, pid);
		fd = bcs_ctl_connect();
		if (fd < 0) {
			fprintf(stderr, "bcsctl: %s: bcsd does not run here\n",
				what);
			return BCSCTL_EXIT_FAIL;
		}
		o = cluster_req("job-attach");
		cluster_add(o, "job", req->job);
		cluster_add(o, "node", req->node);
		cluster_add(o, "pid", pid);
		if (cluster(fd, o, &o, what, CLUSTER_TIMEOUT_MS)) {
			status = BCSCTL_EXIT_FAIL;
			continue;
		}
		json_object_put(o);
	}
	return status;
}

int bcsctl_run_job_attach(const struct bcsctl_req *req)
{
	if (req->node)
		return attach_remote(req);
	return attach_detach(req, 1);
}

int bcsctl_run_job_detach(const struct bcsctl_req *req)
{
	return attach_detach(req, 0);
}

/* Execute the command of `run`; returns only if that fails. */
static int run_exec(const struct bcsctl_req *req)
{
	int err;

	fflush(NULL);
	execvp(req->cmd_argv[0], req->cmd_argv);
	err = errno;
	fprintf(stderr, "bcsctl: run: %s: %s\n", req->cmd_argv[0],
		strerror(err));
	return err == ENOENT ? BCSCTL_EXIT_NOTFOUND : BCSCTL_EXIT_NOEXEC;
}

int bcsctl_run_run(const struct bcsctl_req *req)
{
	char what[64], msg[PATH_MAX + 256];
	struct bcs *h;
	int err, fd, create_err = 0;
	bool cluster;

	/* Before joining: a program it cannot profile is said at once. */
	if (req->mpi_stats &&
	    bcsctl_mpi_setup(req->cmd_argv[0], req->job, msg, sizeof(msg))) {
		fprintf(stderr, "bcsctl: run: --mpi-stats: %s\n", msg);
		return BCSCTL_EXIT_FAIL;
	}
	if (req->no_attach)
		return run_exec(req);
	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	/*
	 * bcsd runs here.  Its connections are counted per user (every rank
	 * of a launch runs this at once): hold one only while asking.
	 */
	fd = bcs_ctl_connect();
	cluster = fd >= 0;
	if (!req->create && fd >= 0) {
		close(fd);
		fd = -1;
	}
	if (req->create && fd >= 0) {
		/* Cluster job: the first rank creates it, the others join. */
		struct json_object *r = cluster_req("job-create"), *resp;
		char msg[256];

		cluster_add(r, "job", req->job);
		json_row(r, req->row);
		err = bcs_ctl_call(fd, r, &resp, CLUSTER_TIMEOUT_MS, msg,
				   sizeof(msg));
		json_object_put(resp);
		close(fd);
		fd = -1;
		/*
		 * Not allowed to create (not root): the job may exist all
		 * the same, made by the batch system; attaching tells.
		 */
		create_err = err;
		if (err && err != -EEXIST && err != -EPERM) {
			bcs_close(h);
			fprintf(stderr, "bcsctl: run: job create %u: %s\n",
				req->job, msg);
			return BCSCTL_EXIT_FAIL;
		}
	} else if (req->create) {
		/*
		 * Every rank of a parallel launch may race to create the
		 * job: the first one wins, the others just join it.
		 */
		err = bcs_job_create(h, req->job, req->row, NULL);
		create_err = err;
		if (err && err != -EEXIST && err != -EPERM) {
			bcs_close(h);
			snprintf(what, sizeof(what), "run: job create %u",
				 req->job);
			return fail(what, err, BCS_CTX_JOB);
		}
	}
	/* Our own pid: after execvp() the command is the attached task. */
	err = bcs_attach(h, req->job, getpid(), 0, NULL);
	if (err == -ENOENT && cluster && (fd = bcs_ctl_connect()) >= 0) {
		/* A cluster job this node has not heard of yet: wait for it. */
		struct json_object *r = cluster_req("job-wait"), *resp;
		char msg[256];
		int werr;

		cluster_add(r, "job", req->job);
		cluster_add(r, "timeout_ms", CLUSTER_WAIT_MS);
		werr = bcs_ctl_call(fd, r, &resp, CLUSTER_WAIT_MS + 1000, msg,
				    sizeof(msg));
		if (!werr)
			err = bcs_attach(h, req->job, getpid(), 0, NULL);
		else if (werr != -ETIMEDOUT)
			/* Refused (too many connections): say why. */
			fprintf(stderr, "bcsctl: run: waiting for job %u: %s\n",
				req->job, msg);
		json_object_put(resp);
		close(fd);
	}
	if (err == -EPERM) {
		int status;

		snprintf(what, sizeof(what), "run: job attach %u", req->job);
		status = attach_denied(h, what, true, req->job, getpid());
		bcs_close(h);
		return status;
	}
	bcs_close(h);
	if (err == -ENOENT && create_err == -EPERM) {
		snprintf(what, sizeof(what), "run: job create %u", req->job);
		return fail(what, create_err, BCS_CTX_JOB);
	}
	if (err) {
		snprintf(what, sizeof(what), "run: job attach %u", req->job);
		return fail(what, err, BCS_CTX_TASK);
	}
	return run_exec(req);
}

static int config(const struct bcsctl_req *req, struct bcs_config *cfg,
		  const char *what)
{
	struct bcs *h;
	int err;

	(void)req;
	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	if (cfg->set)
		err = bcs_config_set(h, cfg);
	else
		err = bcs_config_get(h, cfg);
	bcs_close(h);
	return err ? fail(what, err, BCS_CTX_CONFIG) : BCSCTL_EXIT_OK;
}

int bcsctl_run_slice_set(const struct bcsctl_req *req)
{
	struct bcs_config cfg = {
		.set = BCS_CONFIG_SLICE,
		.slice_ns = req->slice_us * 1000,
	};

	return config(req, &cfg, "slice set");
}

int bcsctl_run_completion(const struct bcsctl_req *req)
{
	(void)req;
	bcsctl_completion(stdout);
	return fflush(stdout) ? 1 : 0;
}

int bcsctl_run_slice_get(const struct bcsctl_req *req)
{
	struct bcs_config cfg = { .set = 0 };
	char b[64];
	int status;

	status = config(req, &cfg, "slice get");
	if (!status)
		printf("%s\n", fmt_us(b, sizeof(b), cfg.slice_ns));
	return status;
}

int bcsctl_run_mode(const struct bcsctl_req *req)
{
	struct bcs_config cfg = {
		.set = BCS_CONFIG_MODE,
		.mode = req->mode,
	};

	if (req->has_watchdog) {
		cfg.set |= BCS_CONFIG_WATCHDOG;
		cfg.watchdog_slices = req->watchdog;
	}
	return config(req, &cfg, "mode");
}

int bcsctl_run_strobe(const struct bcsctl_req *req)
{
	struct bcs_strobe s = { .row = 0 };
	struct bcs_state st = { .slice = 0 };
	struct timespec ts;
	struct bcs *h;
	int err;

	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	if (!req->has_slice) {
		/* The strobe names the slice it starts: the next one. */
		err = bcs_get_state(h, &st);
		if (err) {
			bcs_close(h);
			return fail("strobe", err, BCS_CTX_GENERIC);
		}
	}
	s.slice = req->has_slice ? req->slice : st.slice + 1;
	if (req->has_row)
		s.row = req->row;
	else
		s.flags |= BCS_STROBE_NEXT;
	if (req->now) {
		s.flags |= BCS_STROBE_NOW;
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		s.deadline_ns = (uint64_t)ts.tv_sec * 1000000000ULL +
				(uint64_t)ts.tv_nsec + req->lead_us * 1000;
	}
	err = bcs_strobe(h, &s);
	/* Driven by another process: name it. */
	if (err == -EBUSY && !bcs_get_state(h, &st) &&
	    st.mode == BCS_MODE_DRIVEN && st.driver_pid) {
		bcs_close(h);
		fprintf(stderr, "bcsctl: strobe: bcs is driven by pid %d, "
			"the only process that may strobe in driven mode; "
			"bcsctl strobes in standalone mode\n", st.driver_pid);
		return BCSCTL_EXIT_FAIL;
	}
	bcs_close(h);
	return err ? fail("strobe", err, BCS_CTX_STROBE) : BCSCTL_EXIT_OK;
}

/*
 * stats window: arm the slice window of the local ring, clear it, or show
 * it.  The cluster path (through bcsd, every node for the same slices) is
 * not here yet: this acts on this node's module.
 */
/*
 * Arm or clear the window through bcsd, on every node of the cluster at
 * the slice the master names; slice numbers beyond a JSON integer are
 * refused there.
 */
static int window_cluster(int fd, const struct bcsctl_req *req)
{
	struct json_object *o, *resp;

	o = cluster_req(req->window > 0 ? "window" : "window-clear");
	if (req->window > 0) {
		json_object_object_add(o, "from",
				       json_object_new_int64((int64_t)req->from_slice));
		json_object_object_add(o, "to",
				       json_object_new_int64((int64_t)req->to_slice));
	}
	if (cluster(fd, o, &resp, "stats window", CLUSTER_TIMEOUT_MS))
		return BCSCTL_EXIT_FAIL;
	json_object_put(resp);
	return BCSCTL_EXIT_OK;
}

int bcsctl_run_stats_window(const struct bcsctl_req *req)
{
	struct json_object *o;
	struct bcs_window w;
	struct bcs *h;
	int err = 0, fd;

	if (req->window) {
		fd = bcs_ctl_connect();
		if (fd >= 0)
			return window_cluster(fd, req);
	}
	if (open_bcs(&h))
		return BCSCTL_EXIT_FAIL;
	if (req->window > 0)
		err = bcs_window_set(h, req->from_slice, req->to_slice);
	else if (req->window < 0)
		err = bcs_window_clear(h);
	if (!err)
		err = bcs_window_get(h, &w);
	bcs_close(h);
	if (err)
		return fail("stats window", err, BCS_CTX_WINDOW);
	if (req->json) {
		o = window_json(&w);
		json_print(o);
		json_object_put(o);
		return BCSCTL_EXIT_OK;
	}
	print_window("window:", &w);
	return BCSCTL_EXIT_OK;
}

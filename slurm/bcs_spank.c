// SPDX-License-Identifier: GPL-2.0
/*
 * bcs.so, the Slurm SPANK plugin of bcs: `srun --bcs[=JOB]` gang-schedules
 * the tasks of a job step with bcs.
 *
 * In slurmstepd (the remote context), on every node of the step:
 *
 *   init_post_opt         the Slurm job's bcs job, through the local bcsd:
 *                         every node of every step asks bcsd to create
 *                         the same job (its id derived from the Slurm
 *                         job's, bcs_slurm_job_id(): all steps of a Slurm
 *                         job are one gang); the master makes it once, in
 *                         a row of its choice, on every node, and the
 *                         others' requests fail with -EEXIST and join it.
 *                         The Slurm job's user owns it (S_JOB_UID), so
 *                         that they may attach their own processes.
 *                         Then wait until this node's module holds it,
 *                         and label it (BCS_LABEL_DIR) for bcsctl.
 *   task_init_privileged  in each task, before it executes (as root, in the
 *                         task's process between fork() and execve()):
 *                         the task into the job (BCS_JOB is in the
 *                         environment since init_post_opt).
 *   exit                  when every task of the step on this node has
 *                         ended, however it ended: wait (up to wait=S)
 *                         until no task of the job is left in the cluster
 *                         (another step's keep it), then destroy it.  Every node does so; the
 *                         destruction of a job already gone is no error,
 *                         and a node whose wait runs out leaves the job to
 *                         the nodes still running it.
 *
 * Problems are said in the job's stderr (slurm_error() in the task, before
 * it executes) and in slurmd's log; with require=yes they fail the tasks,
 * otherwise the step runs without gang scheduling.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <slurm/spank.h>

#include <bcs.h>
#include <bcs_ctl.h>
#include "bcs_slurm.h"

SPANK_PLUGIN(bcs, 1);

#define CTL_TIMEOUT_MS	5000
#define CTL_WAIT_MS	15000	/* for the job to reach this node */
#define POLL_MS		250

static struct bcs_slurm_conf conf;
static enum bcs_slurm_want want = BCS_WANT_DEFAULT;
static uint32_t want_job;

/* The step on this node (slurmstepd; copied into each task by fork). */
static struct {
	bool active;		/* the step asked for bcs */
	bool ready;		/* the job exists here: attach the tasks */
	bool owned;		/* the step's own job: destroy it at the end */
	bool labelled;		/* this node wrote its label file */
	uint32_t job, step;	/* Slurm's ids */
	uint32_t id;		/* bcs's */
	uid_t uid;		/* the Slurm job's user: the bcs job's owner */
	char nodes[1024];	/* the allocation's nodes (hostlist), or "" */
	char why[256];		/* why not ready */
	char note[256];		/* something to tell the job, if not "" */
} st;

static int opt_cb(int val, const char *optarg, int remote)
{
	(void)val;
	if (bcs_slurm_opt_parse(optarg, &want, &want_job)) {
		slurm_error("bcs: --bcs=%s: not a bcs job id (1..%u) or \"off\"",
			    optarg, BCS_JOB_ID_MAX);
		return remote ? 0 : -1;
	}
	return 0;
}

static struct spank_option bcs_option = {
	.name = "bcs",
	.arginfo = "JOB",
	.usage = "Gang-schedule the tasks with bcs: in a bcs job made for "
		 "the step, or in the existing bcs job JOB (--bcs=off: not "
		 "at all)",
	.has_arg = 2,		/* optional */
	.val = 0,
	.cb = opt_cb,
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	char err[160];

	bcs_slurm_conf_init(&conf);
	if (bcs_slurm_conf_parse(&conf, ac, av, err, sizeof(err))) {
		slurm_error("bcs: plugstack.conf: %s", err);
		return -1;
	}
	if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE &&
	    ctx != S_CTX_ALLOCATOR)
		return 0;
	if (spank_option_register(sp, &bcs_option) != ESPANK_SUCCESS) {
		slurm_error("bcs: cannot register --bcs");
		return -1;
	}
	return 0;
}

/* One request to the local bcsd; its message in @msg on failure. */
static int ctl(struct json_object *req, struct json_object **resp,
	       int timeout_ms, char *msg, size_t len)
{
	int fd = bcs_ctl_connect(), err;

	*resp = NULL;
	if (fd < 0) {
		json_object_put(req);
		snprintf(msg, len, "bcsd does not run on this node (no %s)",
			 getenv(BCSD_ENV_SOCKET) ? getenv(BCSD_ENV_SOCKET) :
			 BCSD_CONTROL_SOCKET);
		return -ENOTCONN;
	}
	err = bcs_ctl_call(fd, req, resp, timeout_ms, msg, len);
	close(fd);
	return err;
}

static struct json_object *ctl_req(const char *cmd, uint32_t job)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "cmd", json_object_new_string(cmd));
	json_object_object_add(o, "job", json_object_new_int64(job));
	return o;
}

static void label_write(void)
{
	char path[128], label[64];
	int fd;

	if (bcs_slurm_label_path(path, sizeof(path), BCS_LABEL_DIR, st.id) ||
	    bcs_slurm_label(label, sizeof(label), st.job))
		return;
	mkdir("/run/bcs", 0755);
	mkdir(BCS_LABEL_DIR, 0755);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		slurm_info("bcs: %s: %s (bcsctl job list shows no label)",
			   path, strerror(errno));
		return;
	}
	if (dprintf(fd, "%s\n", label) < 0)
		slurm_info("bcs: %s: %s", path, strerror(errno));
	close(fd);
	st.labelled = true;
}

/*
 * -EEXIST from job-create: the Slurm job's bcs job, made by another node
 * or another step, or an unrelated job that has the id (a job made by
 * hand with an id above BCS_SLURM_ID_BASE).  This node's label tells when
 * it has one.
 */
static bool label_other(void)
{
	char path[128], label[64], have[64] = "";
	FILE *f;

	if (bcs_slurm_label_path(path, sizeof(path), BCS_LABEL_DIR, st.id) ||
	    bcs_slurm_label(label, sizeof(label), st.job))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(have, sizeof(have), f))
		have[0] = '\0';
	fclose(f);
	have[strcspn(have, "\n")] = '\0';
	return *have && strcmp(have, label);
}

/* The cluster's slice against slice=MS: a note when they differ. */
static void slice_check(void)
{
	struct bcs_state bs;
	struct bcs *h;
	uint64_t want_ns = (uint64_t)conf.slice_ms * 1000000;

	if (!conf.slice_ms || bcs_open(&h))
		return;
	if (!bcs_get_state(h, &bs) && bs.slice_ns &&
	    (bs.slice_ns > want_ns + want_ns / 100 ||
	     bs.slice_ns + want_ns / 100 < want_ns))
		snprintf(st.note, sizeof(st.note),
			 "the cluster's slice is %.1f ms, not the %u ms of plugstack.conf (slice= is checked, not set: bcsd's slice_us sets it)",
			 bs.slice_ns / 1e6, conf.slice_ms);
	bcs_close(h);
}

/*
 * Ask bcsd for the step's job: made by this request, or by another
 * node's (-EEXIST).  False, with st.why set, if it cannot be had.
 */
static bool create_step_job(void)
{
	struct json_object *req, *resp;
	char msg[200];
	int err;

	if (bcs_slurm_job_id(st.job, st.step, &st.id)) {
		snprintf(st.why, sizeof(st.why),
			 "no bcs job id for Slurm step %u.%u", st.job, st.step);
		return false;
	}
	req = ctl_req("job-create", st.id);
	json_object_object_add(req, "row", NULL);	/* the master's */
	/*
	 * The job's user owns it on every node, so that they may attach
	 * their own processes to it (bcsctl run --job) and no other user
	 * may; a bcsd before owners ignores it, and the job is root's.
	 */
	if (st.uid)
		json_object_object_add(req, "owner",
				       json_object_new_int64(st.uid));
	/* Placed by the allocation's nodes before any task reports. */
	if (st.nodes[0])
		json_object_object_add(req, "nodes",
				       json_object_new_string(st.nodes));
	err = ctl(json_object_get(req), &resp, CTL_TIMEOUT_MS, msg,
		  sizeof(msg));
	json_object_put(resp);
	/*
	 * Names bcsd cannot turn into node ids (ids set by hand, no
	 * nodes_file): the tasks' reports place the job instead.
	 */
	if (err == -EINVAL && st.nodes[0]) {
		slurm_verbose("bcs: job %u: %s; placed by its tasks instead",
			      st.job, msg);
		json_object_object_del(req, "nodes");
		err = ctl(json_object_get(req), &resp, CTL_TIMEOUT_MS, msg,
			  sizeof(msg));
		json_object_put(resp);
	}
	json_object_put(req);
	if (err == -EEXIST && label_other()) {
		snprintf(st.why, sizeof(st.why),
			 "bcs job %u exists, not of Slurm job %u", st.id,
			 st.job);
		return false;
	}
	if (err && err != -EEXIST) {
		snprintf(st.why, sizeof(st.why), "cannot create bcs job %u: %s",
			 st.id, msg);
		return false;
	}
	st.owned = true;
	return true;
}

static void setup(void)
{
	struct json_object *req, *resp;
	char msg[200];
	int err;

	if (want == BCS_WANT_JOB)
		st.id = want_job;
	else if (!create_step_job())
		return;
	/* bcsd creates it on every node: until it has reached this one. */
	req = ctl_req("job-wait", st.id);
	json_object_object_add(req, "timeout_ms",
			       json_object_new_int64(CTL_WAIT_MS));
	err = ctl(req, &resp, CTL_WAIT_MS + 2000, msg, sizeof(msg));
	json_object_put(resp);
	if (err) {
		snprintf(st.why, sizeof(st.why),
			 "bcs job %u did not reach this node: %s", st.id,
			 err == -ETIMEDOUT ? "timed out" : msg);
		return;
	}
	if (st.owned)
		label_write();
	slice_check();
	st.ready = true;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	char v[16];

	(void)ac;
	(void)av;
	if (!spank_remote(sp) || !bcs_slurm_enabled(&conf, want))
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &st.job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &st.step) != ESPANK_SUCCESS) {
		slurm_error("bcs: no Slurm job or step id");
		return conf.require ? -1 : 0;
	}
	/* Slurm's batch script, extern and interactive steps: not ours. */
	if (st.step >= BCS_SLURM_SPECIAL_STEP)
		return 0;
	/* No uid: root's job, as before owners. */
	if (spank_get_item(sp, S_JOB_UID, &st.uid) != ESPANK_SUCCESS ||
	    st.uid == (uid_t)-1)
		st.uid = 0;
	if (spank_getenv(sp, "SLURM_JOB_NODELIST", st.nodes,
			 sizeof(st.nodes)) != ESPANK_SUCCESS)
		st.nodes[0] = '\0';
	st.active = true;
	setup();
	if (!st.ready) {
		slurm_error("bcs: step %u.%u: %s", st.job, st.step, st.why);
		return 0;	/* said to each task, which fails or runs */
	}
	slurm_verbose("bcs: step %u.%u in bcs job %u%s", st.job, st.step,
		      st.id, st.owned ? " (the step's own)" : "");
	snprintf(v, sizeof(v), "%u", st.id);
	spank_setenv(sp, "BCS_JOB", v, 1);
	return 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	char host[64] = "?";
	int local = 0, err;
	struct bcs *h;
	pid_t pid;

	(void)ac;
	(void)av;
	if (!st.active)
		return 0;
	gethostname(host, sizeof(host) - 1);
	spank_get_item(sp, S_TASK_ID, &local);
	if (st.ready) {
		/*
		 * This hook runs in the task itself, between fork() and
		 * execve(): S_TASK_PID is set in slurmstepd after fork()
		 * returns there, not in this copy.
		 */
		pid = getpid();
		err = bcs_open(&h);
		if (!err) {
			err = bcs_attach(h, st.id, pid, 0, NULL);
			bcs_close(h);
			if (err)
				snprintf(st.why, sizeof(st.why),
					 "task %d: %s", local,
					 bcs_strerror(err, BCS_CTX_TASK));
		} else {
			snprintf(st.why, sizeof(st.why), "%s",
				 bcs_strerror(err, BCS_CTX_OPEN));
		}
		if (!err) {
			if (*st.note && !local)
				slurm_info("bcs: %s: %s", host, st.note);
			return 0;
		}
		spank_unsetenv(sp, "BCS_JOB");
	}
	if (conf.require) {
		slurm_error("bcs: %s: %s; the step fails (require=yes)", host,
			    st.why);
		return -1;
	}
	if (!local)
		slurm_error("bcs: %s: %s; running without gang scheduling",
			    host, st.why);
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/*
 * The tasks bcsd's map gives job st.id in the cluster: 0 or more, -1 if
 * the job is gone (or bcsd cannot be asked).
 */
static int cluster_tasks(void)
{
	struct json_object *resp, *jobs, *j;
	char msg[200];
	size_t i, n;
	int tasks = -1;

	j = json_object_new_object();
	json_object_object_add(j, "cmd", json_object_new_string("job-list"));
	if (ctl(j, &resp, CTL_TIMEOUT_MS, msg, sizeof(msg)))
		return -1;
	if (json_object_object_get_ex(resp, "jobs", &jobs) &&
	    json_object_is_type(jobs, json_type_array)) {
		n = json_object_array_length(jobs);
		for (i = 0; i < n; i++) {
			j = json_object_array_get_idx(jobs, i);
			if (bcs_ctl_int(j, "job", 0) == st.id) {
				tasks = (int)bcs_ctl_int(j, "tasks", 0);
				break;
			}
		}
	}
	json_object_put(resp);
	return tasks;
}

static void destroy(void)
{
	long end = now_ms() + (long)conf.wait_s * 1000;
	struct json_object *resp;
	struct timespec nap = { 0, POLL_MS * 1000000L };
	char msg[200];
	int tasks, err;

	/* The other nodes' tasks leave the job as they end. */
	while ((tasks = cluster_tasks()) > 0 && now_ms() < end)
		nanosleep(&nap, NULL);
	if (tasks < 0)
		return;		/* gone already */
	if (tasks > 0) {
		slurm_info("bcs: step %u.%u: bcs job %u still has %d task(s) after %u s; left to the nodes still running them",
			   st.job, st.step, st.id, tasks, conf.wait_s);
		return;
	}
	err = ctl(ctl_req("job-destroy", st.id), &resp, CTL_TIMEOUT_MS, msg,
		  sizeof(msg));
	json_object_put(resp);
	if (err && err != -ENOENT)
		slurm_error("bcs: step %u.%u: destroying bcs job %u: %s",
			    st.job, st.step, st.id, msg);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	char path[128];

	(void)ac;
	(void)av;
	if (!spank_remote(sp) || !st.active)
		return 0;
	if (st.ready && st.owned)
		destroy();
	if (st.labelled &&
	    !bcs_slurm_label_path(path, sizeof(path), BCS_LABEL_DIR, st.id))
		unlink(path);
	return 0;
}

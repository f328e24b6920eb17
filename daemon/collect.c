// SPDX-License-Identifier: GPL-2.0
/*
 * What a job leaves on this node.  bcs.ko announces the end of each job on
 * the generic netlink group "events": destroyed, or its last task gone
 * (exited or detached).  If the job kept statistics (bcsctl stats), they
 * are written then, per-task totals, distributions and the node's slice
 * records, as one JSON document to jobs_dir/JOB-HOST.json (libbcs's
 * bcs_job_dump_file(): a temporary file renamed into place, so a reader
 * sees the old or the new document, never half of one).  A job whose last
 * task ended is written again when it is destroyed, and only then are its
 * statistics released in bcs.ko: a job that crashes loses nothing, and a
 * job that gets tasks again goes on recording.
 *
 * A dump holds every task's pid and times, which bcs.ko shows only to the
 * task's owner: it is made mode 0600, owned by the job's owner (the uid
 * of its tasks, learnt from /proc every report period while they live),
 * or by root alone when its tasks had several uids or none was seen; in
 * jobs_dir, mode 0711, which others pass through but cannot list
 * (dumpfile.c).
 *
 * Dumps are written on the loop that also sends strobes, so they are
 * bounded: a job whose last task ends is dumped at most once per
 * dump_job_ms, and all dumps together take from a budget of bytes
 * (dump_burst_kb, refilled at dump_rate_kb a second, each dump counting
 * 256 KB at least).  A dump refused is counted (dumps_refused) and said
 * at most once a minute; its statistics stay in bcs.ko.
 *
 * If the file cannot be written, the statistics stay in bcs.ko (bounded
 * by its dist_kept_jobs parameter), and bcsstat dump can still fetch them.
 *
 * A job destroyed also takes its MPI control file (mpi_dir/JOB.control,
 * bcsctl stats enable --mpi) with it, so that a later job of the same id
 * starts from the defaults rather than from an old selection.
 *
 * The MPI statistics files a job's processes leave in mpi_dir are sent,
 * summarised, to a node that asks for them (bcsstat mpi --job through
 * bcsd: the master's command BCSP_CMD_MPI_GATHER; the asker puts them
 * together, ctl.c and mpigather.c).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../libbcs/bcs.h"
#include "../libbcsmpi/control.h"
#include "../libbcsmpi/mpifile.h"
#include "bcsd.h"
#include "log.h"
#include "collect.h"

static void control_remove(struct bcsd *d, uint32_t job)
{
	char id[16];
	int err;

	snprintf(id, sizeof(id), "%u", job);
	err = bcs_mpi_control_remove(d->cfg.mpi_dir, id);
	if (!err) {
		d->cnt.mpi_controls_removed++;
		pr_info("job %u destroyed: its MPI control file removed", job);
	} else if (err != -ENOENT) {
		pr_warn("job %u: MPI control file in %s not removed: %s", job,
			d->cfg.mpi_dir, strerror(-err));
	}
}

/* The uids of the tasks of @job (0: of every job) into the owners. */
static void learn_owners(struct bcsd *d, uint32_t job)
{
	struct bcs_task_stat *ts = NULL;
	int32_t last = 0;
	size_t n = 0, i;
	uint32_t uid;

	if (!d->bcs || bcs_task_stats(d->bcs, job, &ts, &n))
		return;
	for (i = 0; i < n; i++) {
		if (ts[i].tgid == last)
			continue;	/* the threads of a process: one uid */
		last = ts[i].tgid;
		if (!dumpfile_task_uid(ts[i].tgid, &uid))
			dumpfile_owner_learn(&d->collect.owners, ts[i].job, uid);
	}
	free(ts);
}

static void collect_tick(struct bcsd *d, void *arg)
{
	struct bcs_job_info *jobs = NULL;
	uint64_t now = now_mono_ms();
	uint32_t *ids;
	size_t n = 0, i;

	(void)arg;
	if (now - d->collect.learnt_ms < d->cfg.report_ms)
		return;
	d->collect.learnt_ms = now;
	learn_owners(d, 0);
	if (bcs_job_list(d->bcs, &jobs, &n))
		return;
	ids = malloc((n ? n : 1) * sizeof(*ids));
	if (ids) {
		for (i = 0; i < n; i++)
			ids[i] = jobs[i].id;
		dumpfile_owners_sweep(&d->collect.owners, ids, n);
	}
	free(ids);
	free(jobs);
}

struct dump_arg {
	struct bcsd *d;
	uint32_t job;
};

static int write_dump(FILE *f, void *arg)
{
	struct dump_arg *a = arg;

	return bcs_job_dump(a->d->bcs, a->job, f, 0);
}

/*
 * A dump over the budget (dumpfile.h): counted, and said at most once a
 * minute with the number since; the statistics stay in bcs.ko.
 */
static void refused(struct bcsd *d, const struct bcs_job_ended *e,
		    uint64_t now)
{
	d->cnt.dumps_refused++;
	d->collect.refused_unsaid++;
	if (d->collect.refused_said_ms &&
	    now - d->collect.refused_said_ms < 60000)
		return;
	pr_warn("job %u %s: statistics not written, over the dump budget (dump_burst_kb, dump_rate_kb, dump_job_ms): %llu dump(s) refused in the last minute; they stay in bcs.ko",
		e->job, bcs_job_end_name(e->reason),
		(unsigned long long)d->collect.refused_unsaid);
	d->collect.refused_said_ms = now;
	d->collect.refused_unsaid = 0;
}

static void job_ended(struct bcsd *d, const struct bcs_job_ended *e)
{
	struct dump_arg arg = { .d = d, .job = e->job };
	uint64_t now = now_mono_ms(), bytes;
	char path[PATH_MAX];
	uid_t owner = 0;
	int err;

	if (e->reason == BCS_JOB_END_DESTROYED && *d->cfg.mpi_dir)
		control_remove(d, e->job);
	if (!e->dist_tasks)
		return;
	if (snprintf(path, sizeof(path), "%s/%u-%s.json", d->cfg.jobs_dir,
		     e->job, d->collect.host) >= (int)sizeof(path)) {
		pr_warn("job %u: jobs_dir too long for its dump", e->job);
		return;
	}
	if (!dump_budget_may(&d->collect.budget, e->job,
			     e->reason == BCS_JOB_END_DESTROYED, now)) {
		refused(d, e, now);
		return;
	}
	/* Its tasks of now, if it has some (destroyed with tasks). */
	learn_owners(d, e->job);
	if (!dumpfile_owner(&d->collect.owners, e->job, &owner))
		owner = 0;	/* several uids, or none seen: root's */
	err = dumpfile_write(path, owner, write_dump, &arg, &bytes);
	dump_budget_spent(&d->collect.budget, e->job, bytes, now);
	if (e->reason == BCS_JOB_END_DESTROYED)
		dumpfile_owner_forget(&d->collect.owners, e->job);
	if (err == -ENOENT)
		return;		/* released meanwhile */
	if (err) {
		d->cnt.dumps_failed++;
		pr_warn("job %u: statistics not written to %s: %s; they stay in bcs.ko",
			e->job, path, strerror(-err));
		return;
	}
	d->cnt.dumps++;
	pr_info("job %u %s: statistics of %u task(s) written to %s, for uid %u",
		e->job, bcs_job_end_name(e->reason), e->dist_tasks, path,
		(unsigned int)owner);
	if (e->reason != BCS_JOB_END_DESTROYED)
		return;
	err = bcs_dist_ctl(d->bcs, e->job, BCS_DIST_RELEASE, 0, 0, NULL, 0);
	if (err && err != -ENOENT)
		pr_warn("job %u: statistics not released: %s", e->job,
			bcs_strerror(err, BCS_CTX_TASK));
}

static void on_events(struct bcsd *d, void *arg)
{
	struct bcs_job_ended e;
	int err, n;

	(void)arg;
	/* Bounded: the loop's other descriptors wait meanwhile. */
	for (n = 0; n < 64; n++) {
		err = bcs_events_read(d->collect.ev, &e, 1);
		if (err == -EAGAIN)
			return;
		if (err == -ENOBUFS) {
			pr_warn("ends of jobs lost (socket buffer full): their statistics stay in bcs.ko");
			continue;
		}
		if (err) {
			pr_warn("ends of jobs: %s", bcs_strerror(err, BCS_CTX_NETLINK));
			return;
		}
		if (e.lost)
			pr_warn("%llu end(s) of jobs lost: their statistics stay in bcs.ko",
				(unsigned long long)e.lost);
		job_ended(d, &e);
	}
}

/* A summary of one MPI statistics file, to send. */
struct summary {
	void *data;
	size_t len;
};

/* Is @name one of job @job's files: "JOB.*.bcsmpi"? */
static bool job_file(const char *name, const char *job)
{
	size_t n = strlen(name), j = strlen(job);

	return n > j + 7 && !strncmp(name, job, j) && name[j] == '.' &&
	       !strcmp(name + n - 7, ".bcsmpi");
}

/*
 * The summaries of job @job's files in mpi_dir, by name, into @out
 * (BCSP_MPI_FILES_MAX at most): their number, or a negative errno.  A
 * file that cannot be read (its process still in MPI_Init, or it is
 * not one) or whose summary is too large is left out and counted.
 */
static int summaries(struct bcsd *d, uint32_t job, struct summary *out)
{
	struct bcs_mpi_stats st;
	struct dirent **names;
	char id[16], path[PATH_MAX], err[PATH_MAX + 128];
	int n, i, k = 0, r;

	snprintf(id, sizeof(id), "%u", job);
	n = scandir(d->cfg.mpi_dir, &names, NULL, alphasort);
	if (n < 0)
		return errno == ENOENT ? 0 : -errno;
	for (i = 0; i < n; i++) {
		if (k == BCSP_MPI_FILES_MAX || !job_file(names[i]->d_name, id))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", d->cfg.mpi_dir,
			     names[i]->d_name) >= (int)sizeof(path))
			continue;
		r = bcs_mpi_stats_read(path, &st, err, sizeof(err));
		if (!r) {
			r = bcs_mpi_stats_summary(&st, &out[k].data,
						  &out[k].len);
			bcs_mpi_stats_free(&st);
			if (!r && out[k].len > BCSP_MPI_FILE_MAX) {
				free(out[k].data);
				snprintf(err, sizeof(err), "%s: its summary "
					 "is over %u bytes", path,
					 BCSP_MPI_FILE_MAX);
				r = -EFBIG;
			}
		}
		if (r) {
			d->cnt.mpi_gather_skipped++;
			pr_info("job %u: MPI statistics not sent: %s", job,
				err);
			continue;
		}
		k++;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return k;
}

/*
 * To node @to, the asker: itself, its address in the nodes list, or the
 * group, where it listens too.
 */
static void send_part(struct bcsd *d, uint32_t to, struct bcsp_msg *m)
{
	struct sockaddr_in sin;

	m->hdr.epoch = d->followed.epoch;
	d->cnt.mpi_gather_parts_tx++;
	if (to == d->node_id) {
		m->hdr.sender = d->node_id;
		dispatch(d, m, &(struct bcsd_origin){ .local = true });
	} else if (tree_addr(d, to, &sin)) {
		net_send(d, m, &sin);
	} else if (!tree_transport(d)) {
		net_send(d, m, NULL);
	}
}

/*
 * BCSP_CMD_MPI_GATHER: the summary of each of this node's MPI statistics
 * files of the job to the node that asked, in parts; with none, one
 * empty part, so that it knows it has all of this node.  A node where
 * bcs.ko does not know the job and that has no file of it stays silent.
 * Each command once (the window, as node.c keeps for its own).
 */
static void on_command(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	const struct bcsp_command *c = &m->cmd;
	struct bcsp_msg p = { .hdr = { .type = BCSP_MPI_PART } };
	struct summary *sums;
	struct bcs_task_stat *ts = NULL;
	size_t nts = 0;
	uint32_t off;
	int n, i;

	(void)from;
	if (c->op != BCSP_CMD_MPI_GATHER ||
	    bcsp_window_check(&d->collect.cmds, m->hdr.epoch, c->id) != BCSP_OK)
		return;
	sums = calloc(BCSP_MPI_FILES_MAX, sizeof(*sums));
	if (!sums) {
		pr_warn("job %u: MPI statistics not sent: %s", c->job,
			strerror(ENOMEM));
		return;
	}
	n = *d->cfg.mpi_dir ? summaries(d, c->job, sums) : 0;
	if (n < 0) {
		pr_warn("job %u: MPI statistics not sent: %s: %s", c->job,
			d->cfg.mpi_dir, strerror(-n));
		n = 0;
	}
	if (!n && (!d->bcs || bcs_task_stats(d->bcs, c->job, &ts, &nts))) {
		free(sums);
		return;		/* not here */
	}
	free(ts);
	p.part.req = c->arg;
	p.part.node = c->node;
	p.part.job = c->job;
	p.part.files = (uint16_t)n;
	if (!n)
		send_part(d, c->node, &p);
	for (i = 0; i < n; i++) {
		p.part.file = (uint16_t)i;
		p.part.size = (uint32_t)sums[i].len;
		for (off = 0; off < p.part.size; off += BCSP_MPI_PART_MAX) {
			p.part.offset = off;
			p.part.len = p.part.size - off < BCSP_MPI_PART_MAX ?
				     p.part.size - off : BCSP_MPI_PART_MAX;
			memcpy(p.part.data, (uint8_t *)sums[i].data + off,
			       p.part.len);
			send_part(d, c->node, &p);
		}
		free(sums[i].data);
	}
	free(sums);
	d->cnt.mpi_gather_files_tx += (uint64_t)n;
	pr_info("job %u: %d MPI statistics file(s) sent to node %u", c->job,
		n, c->node);
}

int collect_init(struct bcsd *d)
{
	bool tightened;
	int err;

	memset(&d->collect, 0, sizeof(d->collect));
	dispatch_register(d, BCSP_COMMAND, on_command);
	if (!d->cfg.jobs_dir[0])
		return 0;
	err = dumpfile_owners_init(&d->collect.owners);
	if (err)
		return err;
	dump_budget_init(&d->collect.budget, d->cfg.dump_burst_kb,
			 d->cfg.dump_rate_kb, d->cfg.dump_job_ms,
			 now_mono_ms());
	if (gethostname(d->collect.host, sizeof(d->collect.host) - 1) ||
	    !d->collect.host[0] || strchr(d->collect.host, '/'))
		snprintf(d->collect.host, sizeof(d->collect.host), "node%u",
			 d->node_id);
	err = dumpfile_dir(d->cfg.jobs_dir, &tightened);
	if (err)
		pr_warn("jobs_dir %s: %s: statistics stay in bcs.ko",
			d->cfg.jobs_dir, strerror(-err));
	else if (tightened)
		pr_warn("jobs_dir %s: others could list or write it: now mode %o or less",
			d->cfg.jobs_dir, DUMP_DIR_MODE);
	err = bcs_events_open(&d->collect.ev);
	if (err) {
		/* An older bcs.ko: bcsd runs on, without dumps. */
		pr_warn("no ends of jobs from bcs.ko (%s): statistics are not written to %s",
			bcs_strerror(err, BCS_CTX_NETLINK), d->cfg.jobs_dir);
		d->collect.ev = NULL;
		return 0;
	}
	err = loop_on_tick(d, collect_tick, NULL);
	if (err)
		return err;
	return loop_add(d, bcs_events_fd(d->collect.ev), LOOP_EVENTS,
			on_events, NULL);
}

void collect_exit(struct bcsd *d)
{
	dumpfile_owners_free(&d->collect.owners);
	if (!d->collect.ev)
		return;
	loop_del(d, bcs_events_fd(d->collect.ev));
	bcs_events_close(d->collect.ev);
	d->collect.ev = NULL;
}

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
 * Each job with tasks here gets a directory mpi_dir/JOB for its MPI
 * statistics, its user's (the user of its task that attached first, as
 * /proc shows it), with the job's control file in it, root's (mpidir.c):
 * made at the tick after its first task attached, which its processes
 * wait for in MPI_Init.  A job destroyed also takes its MPI control file
 * (bcsctl stats enable --mpi) with it, so that a later job of the same
 * id starts from the defaults rather than from an old selection.
 *
 * The MPI statistics files a job's processes leave in mpi_dir are sent,
 * summarised, to a node that asks for them (bcsstat mpi --job through
 * bcsd: the master's command BCSP_CMD_MPI_GATHER; the asker puts them
 * together, ctl.c and mpigather.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libbcs/bcs.h"
#include "libbcsmpi/control.h"
#include "bcsd.h"
#include "core/log.h"
#include "node/collect.h"
#include "core/loop.h"
#include "node/mpidir.h"
#include "node/retention.h"
#include "node/jobcopy.h"

static void control_remove(struct bcsd *d, uint32_t job)
{
	int err;

	err = mpidir_control_remove(d->cfg.mpi_dir, job);
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
	/* Its last dump, to the shared directory: queued, never waited. */
	if (d->collect.copying)
		jobcopy_queue(&d->collect.copy, path, owner);
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

/*
 * The user of job @job here: of its task that attached first (its
 * effective uid and gid, /proc/PID/status).  0, or a negative errno.
 */
static int job_user(struct bcsd *d, uint32_t job, uid_t *uid, gid_t *gid)
{
	struct bcs_task_stat *ts = NULL;
	size_t n = 0, i, first = 0;
	char path[64], buf[4096], *u, *g;
	unsigned long ru, eu, rg, eg;
	ssize_t len;
	int fd, err;

	err = bcs_task_stats(d->bcs, job, &ts, &n);
	if (err)
		return err;
	for (i = 1; i < n; i++)
		if (ts[i].attach_ns < ts[first].attach_ns)
			first = i;
	if (!n || ts[first].tgid <= 0) {
		free(ts);
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", ts[first].tgid);
	free(ts);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return len < 0 ? -errno : -ESRCH;
	buf[len] = 0;
	u = strstr(buf, "\nUid:");
	g = strstr(buf, "\nGid:");
	if (!u || !g || sscanf(u, "\nUid: %lu %lu", &ru, &eu) != 2 ||
	    sscanf(g, "\nGid: %lu %lu", &rg, &eg) != 2)
		return -EINVAL;
	*uid = (uid_t)eu;
	*gid = (gid_t)eg;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Jobs' directories made at one tick at most (the rest at the next). */
#define MPI_DIRS_PER_TICK	16
/* How long a directory made for root is looked at again. */
#define MPI_DIR_SETTLE_MS	10000

static int cmp_ready(const void *a, const void *b)
{
	const struct bcsd_mpi_ready *x = a, *y = b;

	return x->job < y->job ? -1 : x->job > y->job;
}

/*
 * Each tick: a directory in mpi_dir for each job that got tasks here
 * since the last (and again for one made for root, while it settles);
 * the jobs gone forgotten.
 */
static void mpi_tick(struct bcsd *d, void *arg)
{
	struct bcsd_collect *co = &d->collect;
	struct bcs_job_info *jobs = NULL;
	struct bcsd_mpi_ready key = { 0 }, *r;
	uint64_t now = now_mono_ms();
	uint32_t *ids, nr = 0, made = 0;
	char err[512];
	size_t n = 0, i;
	uid_t uid = 0;
	gid_t gid = 0;
	bool again;

	(void)arg;
	if (!*d->cfg.mpi_dir || !d->bcs || !co->mpi_ready ||
	    bcs_job_list(d->bcs, &jobs, &n))
		return;
	ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids) {
		free(jobs);
		return;
	}
	for (i = 0; i < n; i++)
		ids[i] = jobs[i].id;
	qsort(ids, n, sizeof(*ids), cmp_u32);
	for (i = 0; i < n && made < MPI_DIRS_PER_TICK; i++) {
		const struct bcs_job_info *j = &jobs[i];

		key.job = j->id;
		r = bsearch(&key, co->mpi_ready, co->nr_mpi_ready,
			    sizeof(*r), cmp_ready);
		again = r && r->until_ms;
		if (!j->nr_tasks || (r && (!again || now >= r->until_ms)))
			continue;
		if (job_user(d, j->id, &uid, &gid) ||
		    (again && uid == geteuid()))
			continue;	/* no task to tell, or no change */
		made++;
		if (mpidir_prepare(d->cfg.mpi_dir, j->id, uid, gid, err,
				   sizeof(err))) {
			d->cnt.mpi_dir_errors++;
			pr_warn("job %u: no MPI statistics directory for uid %u: %s: its processes profile nothing",
				j->id, (unsigned int)uid, err);
		} else {
			d->cnt.mpi_dirs_made += !again;
			pr_info("job %u: MPI statistics in %s/%u, uid %u's",
				j->id, d->cfg.mpi_dir, j->id,
				(unsigned int)uid);
		}
		if (r) {
			r->until_ms = 0;
			continue;
		}
		/* Tried once per job while it has tasks here. */
		r = &co->mpi_ready[co->nr_mpi_ready++];
		r->job = j->id;
		r->until_ms = uid == geteuid() ? now + MPI_DIR_SETTLE_MS : 0;
		qsort(co->mpi_ready, co->nr_mpi_ready, sizeof(*r), cmp_ready);
	}
	/* Those still in bcs.ko stay (both in order of ids). */
	for (i = 0; i < co->nr_mpi_ready; i++)
		if (bsearch(&co->mpi_ready[i].job, ids, n, sizeof(*ids),
			    cmp_u32))
			co->mpi_ready[nr++] = co->mpi_ready[i];
	co->nr_mpi_ready = nr;
	free(ids);
	free(jobs);
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
	struct mpidir_summary *sums;
	unsigned int skipped = 0;
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
	n = *d->cfg.mpi_dir ? mpidir_summaries(d->cfg.mpi_dir, c->job, sums,
					       BCSP_MPI_FILES_MAX,
					       BCSP_MPI_FILE_MAX, &skipped) : 0;
	d->cnt.mpi_gather_skipped += skipped;
	if (skipped)
		pr_info("job %u: %u MPI statistics file(s) not sent (not the job's user's, unreadable, or in MPI_Init)",
			c->job, skipped);
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

/* ctl.c's job_owner: the owner of job @job's directory in mpi_dir. */
static int job_owner(const struct bcsd *d, uint32_t job, uid_t *uid)
{
	return mpidir_owner(d->cfg.mpi_dir, job, uid);
}

/* The copies to jobs_copy_dir counted, their failures said once. */
static void copy_tick(struct bcsd *d, void *arg)
{
	uint64_t failed;
	char err[256];

	(void)arg;
	jobcopy_counts(&d->collect.copy, &d->cnt.dump_copies, &failed, err,
		       sizeof(err));
	if (failed == d->cnt.dump_copies_failed)
		return;
	pr_warn("jobs_copy_dir: %llu dump(s) not copied: %s",
		(unsigned long long)(failed - d->cnt.dump_copies_failed), err);
	d->cnt.dump_copies_failed = failed;
}

/* Are job @job's MPI files in use: a job of ours here, or with tasks? */
static bool job_live(void *arg, uint32_t job)
{
	const struct bcsd *d = arg;
	const struct bcsd_collect *co = &d->collect;
	uint32_t i;

	for (i = 0; i < d->local.nr_jobs; i++)
		if (d->local.jobs[i] == job)
			return true;
	for (i = 0; co->mpi_ready && i < co->nr_mpi_ready; i++)
		if (co->mpi_ready[i].job == job)
			return true;
	return false;
}

/*
 * Retention (retention.h): a pass every hour, the first at start, a
 * step of bounded work at each tick until it is done; its failures said
 * once a pass.
 */
static void retention_tick(struct bcsd *d, void *arg)
{
	struct bcsd_collect *co = &d->collect;
	struct retention *r = &co->retention;
	uint64_t now = now_mono_ms(), removed = r->removed;

	(void)arg;
	if (!r->active) {
		if (now < co->retention_next_ms)
			return;
		co->retention_next_ms = now + RETENTION_PERIOD_MS;
		retention_start(r, time(NULL) -
				(time_t)d->cfg.retention_days * 86400);
	}
	retention_step(r);
	d->cnt.retention_removed = r->removed;
	d->cnt.retention_failed = r->failed;
	if (r->removed != removed)
		pr_debug("retention: %llu file(s) removed in all",
			 (unsigned long long)r->removed);
	if (!r->active && r->failed != co->retention_said) {
		pr_warn("retention_days: %llu old file(s) not removed; the last: %s",
			(unsigned long long)(r->failed - co->retention_said),
			r->err);
		co->retention_said = r->failed;
	}
}

int collect_init(struct bcsd *d)
{
	bool tightened;
	struct stat sb;
	int err;

	memset(&d->collect, 0, sizeof(d->collect));
	d->ctl_providers.job_owner = job_owner;
	dispatch_register(d, BCSP_COMMAND, on_command);
	if (d->cfg.mpi_dir[0]) {
		/* Twice: the jobs kept and those just added, at one tick. */
		d->collect.mpi_ready = calloc(2 * BCS_JOBS_MAX,
					      sizeof(*d->collect.mpi_ready));
		err = bcsmpi_make_dirs(d->cfg.mpi_dir);
		if (err)
			pr_warn("mpi_dir %s: %s: no MPI statistics", d->cfg.mpi_dir,
				strerror(-err));
		else if (!stat(d->cfg.mpi_dir, &sb) &&
			 (sb.st_uid != geteuid() ||
			  (sb.st_mode & (S_IWGRP | S_IWOTH))))
			pr_warn("mpi_dir %s is writable by others than bcsd's user: any user can take a job's files there (make it 0755, bcsd's)",
				d->cfg.mpi_dir);
		if (!d->collect.mpi_ready || loop_on_tick(d, mpi_tick, NULL))
			return -1;
	}
	if (gethostname(d->collect.host, sizeof(d->collect.host) - 1) ||
	    !d->collect.host[0] || strchr(d->collect.host, '/'))
		snprintf(d->collect.host, sizeof(d->collect.host), "node%u",
			 d->node_id);
	if (d->cfg.retention_days) {
		d->collect.retention.jobs_dir = d->cfg.jobs_dir;
		d->collect.retention.host = d->collect.host;
		d->collect.retention.mpi_dir = d->cfg.mpi_dir;
		d->collect.retention.live = job_live;
		d->collect.retention.live_arg = d;
		if (loop_on_tick(d, retention_tick, NULL))
			return -1;
	}
	if (!d->cfg.jobs_dir[0])
		return 0;
	err = dumpfile_owners_init(&d->collect.owners);
	if (err)
		return err;
	dump_budget_init(&d->collect.budget, d->cfg.dump_burst_kb,
			 d->cfg.dump_rate_kb, d->cfg.dump_job_ms,
			 now_mono_ms());
	err = dumpfile_dir(d->cfg.jobs_dir, &tightened);
	if (err)
		pr_warn("jobs_dir %s: %s: statistics stay in bcs.ko",
			d->cfg.jobs_dir, strerror(-err));
	else if (tightened)
		pr_warn("jobs_dir %s: others could list or write it: now mode %o or less",
			d->cfg.jobs_dir, DUMP_DIR_MODE);
	if (d->cfg.jobs_copy_dir[0]) {
		err = jobcopy_start(&d->collect.copy, d->cfg.jobs_copy_dir);
		if (err) {
			pr_err("jobs_copy_dir %s: no thread to copy: %s",
			       d->cfg.jobs_copy_dir, strerror(-err));
			return err;
		}
		d->collect.copying = true;
		err = loop_on_tick(d, copy_tick, NULL);
		if (err)
			return err;
	}
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
	retention_stop(&d->collect.retention);
	if (d->collect.copying) {
		jobcopy_stop(&d->collect.copy);
		d->collect.copying = false;
	}
	dumpfile_owners_free(&d->collect.owners);
	free(d->collect.mpi_ready);
	d->collect.mpi_ready = NULL;
	d->collect.nr_mpi_ready = 0;
	if (!d->collect.ev)
		return;
	loop_del(d, bcs_events_fd(d->collect.ev));
	bcs_events_close(d->collect.ev);
	d->collect.ev = NULL;
}

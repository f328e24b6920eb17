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
 * If the file cannot be written, the statistics stay in bcs.ko (bounded
 * by its dist_kept_jobs parameter), and bcsstat dump can still fetch them.
 *
 * A job destroyed also takes its MPI control file (mpi_dir/JOB.control,
 * bcsctl stats enable --mpi) with it, so that a later job of the same id
 * starts from the defaults rather than from an old selection.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../libbcs/bcs.h"
#include "../libbcsmpi/control.h"
#include "bcsd.h"
#include "log.h"
#include "collect.h"

/* mkdir -p @path, mode 0755: 0 or -errno. */
static int make_dir(char *path)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

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

static void job_ended(struct bcsd *d, const struct bcs_job_ended *e)
{
	char path[PATH_MAX];
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
	err = bcs_job_dump_file(d->bcs, e->job, path, 0);
	if (err == -ENOENT)
		return;		/* released meanwhile */
	if (err) {
		d->cnt.dumps_failed++;
		pr_warn("job %u: statistics not written to %s: %s; they stay in bcs.ko",
			e->job, path, strerror(-err));
		return;
	}
	d->cnt.dumps++;
	pr_info("job %u %s: statistics of %u task(s) written to %s", e->job,
		bcs_job_end_name(e->reason), e->dist_tasks, path);
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

int collect_init(struct bcsd *d)
{
	char dir[CFG_STR_MAX];
	int err;

	memset(&d->collect, 0, sizeof(d->collect));
	if (!d->cfg.jobs_dir[0])
		return 0;
	if (gethostname(d->collect.host, sizeof(d->collect.host) - 1) ||
	    !d->collect.host[0] || strchr(d->collect.host, '/'))
		snprintf(d->collect.host, sizeof(d->collect.host), "node%u",
			 d->node_id);
	snprintf(dir, sizeof(dir), "%s", d->cfg.jobs_dir);
	err = make_dir(dir);
	if (err)
		pr_warn("jobs_dir %s: %s: statistics stay in bcs.ko",
			d->cfg.jobs_dir, strerror(-err));
	err = bcs_events_open(&d->collect.ev);
	if (err) {
		/* An older bcs.ko: bcsd runs on, without dumps. */
		pr_warn("no ends of jobs from bcs.ko (%s): statistics are not written to %s",
			bcs_strerror(err, BCS_CTX_NETLINK), d->cfg.jobs_dir);
		d->collect.ev = NULL;
		return 0;
	}
	return loop_add(d, bcs_events_fd(d->collect.ev), LOOP_EVENTS,
			on_events, NULL);
}

void collect_exit(struct bcsd *d)
{
	if (!d->collect.ev)
		return;
	loop_del(d, bcs_events_fd(d->collect.ev));
	bcs_events_close(d->collect.ev);
	d->collect.ev = NULL;
}

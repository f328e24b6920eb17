// SPDX-License-Identifier: GPL-2.0
/*
 * The node: hands accepted strobes (and their plans) to bcs.ko over
 * generic netlink, keeps the kernel's jobs in line with the master's map,
 * and reports the local tasks of each job to the master.
 *
 * bcsd drives bcs.ko through its netlink socket.  If bcsd dies, the
 * kernel sees the socket close and fails open; if the master goes quiet,
 * the kernel's watchdog fails open after watchdog_slices.  Either way no
 * task stays suspended, and the next strobe resumes gang scheduling.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "core/log.h"
#include "node/mpidir.h"
#include "node/node.h"

/*
 * The jobs a stopped bcsd left in bcs.ko are this node's share of cluster
 * jobs: take them in, so that the first map keeps those the master still
 * has and destroys those it destroyed meanwhile.
 */
static bool local_add(struct bcsd *d, uint32_t job, uint32_t *idx);

static void adopt_jobs(struct bcsd *d)
{
	struct bcs_job_info *jobs = NULL;
	size_t n = 0, i;

	if (bcs_job_list(d->bcs, &jobs, &n))
		return;
	/* Births not known: the first map tells them. */
	for (i = 0; i < n; i++)
		local_add(d, jobs[i].id, NULL);
	free(jobs);
	if (n)
		pr_info("%zu job(s) already in bcs.ko: kept if the map has them",
			n);
}

/*
 * The row the master will send for the slice after @m: the rotation of
 * wire-protocol.rst over the map @m names, if this node holds that map:
 * the same version from the same master and epoch (another master of that
 * epoch may have sent a map of that version too).  bcs.ko switches to it
 * should that strobe be lost.  A map that changes in between may make it
 * wrong, for that one slice only.
 */
static bool map_current(const struct bcsd *d, const struct bcsp_msg *m);

static bool predict_row(const struct bcsd *d, const struct bcsp_msg *m,
			uint32_t *row)
{
	uint32_t version = 0;
	uint64_t rows;

	if (!d->cfg.predict || !d->followed.have_map ||
	    !map_current(d, m) || d->followed.map_epoch != m->hdr.epoch ||
	    d->followed.map_master != m->hdr.sender)
		return false;
	/* The map in force in the next slice, which this node holds. */
	rows = followed_rows_at(d, m->strobe.slice + 1, &version);
	if (version != d->node.applied_version &&
	    (!d->node.applied_prev || version != d->node.applied_prev_version))
		return false;
	*row = bcsp_rows_next(rows, m->strobe.row);
	return true;
}

/*
 * Is the map in force in bcs.ko at the strobe's slice the one the strobe
 * names, (epoch, master, version)?  The last map applied from its
 * apply_slice on, the one before it until then.  Not when a change of
 * the map was lost on its way here: the strobe's row may then hold other
 * jobs here than at the master (a job moved, made or destroyed
 * meanwhile).
 */
static bool map_current(const struct bcsd *d, const struct bcsp_msg *m)
{
	const struct bcsd_node *n = &d->node;

	if (!n->applied || n->applied_epoch != m->hdr.epoch ||
	    n->applied_master != m->hdr.sender)
		return false;
	if (m->strobe.slice >= n->applied_slice)
		return n->applied_version == m->strobe.map_version;
	return n->applied_prev &&
	       n->applied_prev_version == m->strobe.map_version;
}

/*
 * A row that holds none of the jobs in bcs.ko, the highest, to run while
 * this node's map is stale: no gang then, rather than one the master's map
 * does not put in the slice's row.  Jobs without a row run as ever.
 */
static bool idle_row(struct bcsd *d, uint32_t *row)
{
	uint64_t used = 0;
	struct bcs_job_info *jobs = NULL;
	size_t n = 0, i;

	if (bcs_job_list(d->bcs, &jobs, &n))
		return false;
	/* Home and alternate rows: a row in no job's set. */
	for (i = 0; i < n; i++)
		if (jobs[i].row < BCS_ROWS_MAX)
			used |= 1ULL << jobs[i].row | jobs[i].rows;
	free(jobs);
	/*
	 * From the top: the master places a new job in the lowest of the
	 * emptiest rows, and a map that comes before the strobe's deadline
	 * would put it in the row chosen here.
	 */
	for (i = BCS_ROWS_MAX; i-- > 0;) {
		if (!(used & (1ULL << i))) {
			*row = (uint32_t)i;
			return true;
		}
	}
	return false;
}

/* Strobes reach here checked (rx.c: bcsp_strobe_verdict()). */
static void on_strobe(struct bcsd *d, const struct bcsp_msg *m,
		      const struct bcsd_origin *from)
{
	const struct bcsp_strobe *s = &m->strobe;
	struct bcs_strobe req = {
		.slice = s->slice, .deadline_ns = s->deadline_ns,
		.slice_ns = s->slice_ns, .row = s->row,
	};
	int err;

	(void)from;
	/*
	 * A plan: bcs.ko switches its slices off its own clock, through
	 * its rows; the overlap of plans stands in for predictions.
	 */
	if (s->plan_slices) {
		req.flags |= BCS_STROBE_PLAN;
		req.plan_slices = s->plan_slices;
		req.plan_rows = s->plan_rows;
	}
	if (!map_current(d, m)) {
		/* The idle row throughout. */
		req.plan_rows = 0;
		d->cnt.strobes_stale_map++;
		if (!idle_row(d, &req.row)) {
			pr_debug("strobe %llu: map stale, no idle row",
				 (unsigned long long)s->slice);
			return;
		}
		pr_debug("strobe %llu: map %u of %u/%u not here: idle row %u",
			 (unsigned long long)s->slice, s->map_version,
			 m->hdr.epoch, m->hdr.sender, req.row);
	}

	if (!d->node.driving) {
		err = bcs_nl_drive(d->node.nl, s->slice_ns,
				   (uint32_t)d->cfg.watchdog_slices);
		if (err) {
			d->cnt.kernel_errors++;
			pr_warn("cannot drive bcs.ko: %s",
				bcs_strerror(err, BCS_CTX_NETLINK));
			return;
		}
		d->node.driving = true;
		pr_notice("driving bcs.ko: slice %llu us",
			  (unsigned long long)(s->slice_ns / 1000));
	}
	if (!s->plan_slices && predict_row(d, m, &req.next_row))
		req.flags |= BCS_STROBE_PREDICT;
	if (d->cfg.expire)
		req.flags |= BCS_STROBE_EXPIRE;
	err = bcs_nl_strobe_send(d->node.nl, &req);
	if (err) {
		d->cnt.kernel_errors++;
		/* Someone else took driven mode away: ask again next time. */
		if (err == -ENOTCONN)
			d->node.driving = false;
		pr_debug("strobe: %s", bcs_strerror(err, BCS_CTX_STROBE));
		return;
	}
	d->cnt.strobes_forwarded++;
}

static void forget_local_job(struct bcsd *d, uint32_t idx)
{
	uint32_t after = d->local.nr_jobs - idx - 1;

	/* In order of ids (view_local_job() searches them). */
	memmove(&d->local.jobs[idx], &d->local.jobs[idx + 1],
		after * sizeof(d->local.jobs[0]));
	memmove(&d->local.births[idx], &d->local.births[idx + 1],
		after * sizeof(d->local.births[0]));
	memmove(&d->local.owner_said[idx], &d->local.owner_said[idx + 1],
		after * sizeof(d->local.owner_said[0]));
	d->local.nr_jobs--;
}

/*
 * Job @job, of birth not known, into the local jobs, in order, if it is
 * not there: false if BCS_JOBS_MAX are (bcs.ko holds no more).  Its
 * index into @idx if not NULL.
 */
static bool local_add(struct bcsd *d, uint32_t job, uint32_t *idx)
{
	uint32_t lo = view_local_index(d, job), after;

	if (lo < d->local.nr_jobs && d->local.jobs[lo] == job)
		goto out;
	if (d->local.nr_jobs >= BCS_JOBS_MAX)
		return false;
	after = d->local.nr_jobs - lo;
	memmove(&d->local.jobs[lo + 1], &d->local.jobs[lo],
		after * sizeof(d->local.jobs[0]));
	memmove(&d->local.births[lo + 1], &d->local.births[lo],
		after * sizeof(d->local.births[0]));
	memmove(&d->local.owner_said[lo + 1], &d->local.owner_said[lo],
		after * sizeof(d->local.owner_said[0]));
	d->local.jobs[lo] = job;
	d->local.births[lo] = 0;
	d->local.owner_said[lo] = false;
	d->local.nr_jobs++;
out:
	if (idx)
		*idx = lo;
	return true;
}

static int by_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Destroy the local jobs that map @map does not hold: the local jobs and
 * a sorted copy of the map's ids walked together, O(n log n) for maps and
 * local tables of up to BCS_JOBS_MAX jobs each.
 */
static void drop_jobs_not_in(struct bcsd *d, const struct bcsp_whole_map *map)
{
	static uint32_t ids[BCSP_MAP_JOBS_MAX];
	uint32_t i, k = 0, n = 0, p = 0;

	for (i = 0; i < map->nr_jobs && i < BCSP_MAP_JOBS_MAX; i++)
		ids[n++] = map->jobs[i].job;
	qsort(ids, n, sizeof(ids[0]), by_u32);
	for (i = 0; i < d->local.nr_jobs; i++) {
		while (p < n && ids[p] < d->local.jobs[i])
			p++;
		if (p < n && ids[p] == d->local.jobs[i]) {
			d->local.jobs[k] = d->local.jobs[i];
			d->local.owner_said[k] = d->local.owner_said[i];
			d->local.births[k++] = d->local.births[i];
			continue;
		}
		bcs_job_destroy(d->bcs, d->local.jobs[i]);
	}
	d->local.nr_jobs = k;
}

/*
 * Local job @j->job, born otherwise than the map's job of that id, is
 * another job: two masters of a partitioned cluster each made one with
 * that id, and the one whose map this node now follows won.  Destroy the
 * local one, as a job missing from the map would be (its tasks run on,
 * detached), rather than schedule its tasks as part of the winner's job.
 */
static void supersede_local_job(struct bcsd *d, const struct bcsp_job_row *j)
{
	uint32_t idx;

	if (!j->birth || !view_local_job(d, j->job, &idx) ||
	    !d->local.births[idx] || d->local.births[idx] == j->birth)
		return;
	pr_warn("job %u here was made by another master (a healed partition): destroyed, its tasks run unscheduled",
		j->job);
	bcs_job_destroy(d->bcs, j->job);
	forget_local_job(d, idx);
	d->cnt.jobs_superseded++;
}

/*
 * Job @j of the map into bcs.ko, in its rows at once, owned by the map's
 * owner: root's as bcsd's own (bcs_job_create_rows(), which modules
 * before owners take too) or, with another uid, that uid's, so that the
 * user may attach to it and destroy it here (admin-guide.rst, "Job
 * owners"); not known (BCSP_OWNER_NONE), root's.
 */
static int make_job(struct bcsd *d, const struct bcsp_job_row *j)
{
	if (!j->owner || j->owner == BCSP_OWNER_NONE)
		return bcs_job_create_rows(d->bcs, j->job, j->row, j->rows,
					   NULL);
	return bcs_job_create_rows_owned(d->bcs, j->job, j->row, j->rows,
					 (uid_t)j->owner, NULL);
}

static int by_info_id(const void *a, const void *b)
{
	uint32_t x = ((const struct bcs_job_info *)a)->id;
	uint32_t y = ((const struct bcs_job_info *)b)->id;

	return (x > y) - (x < y);
}

/* Job @id in bcs.ko's list @jobs of @n, sorted by id: NULL if not there. */
static const struct bcs_job_info *kernel_job(const struct bcs_job_info *jobs,
					     size_t n, uint32_t id)
{
	struct bcs_job_info key = { .id = id };

	return n ? bsearch(&key, jobs, n, sizeof(jobs[0]), by_info_id) : NULL;
}

/*
 * Job @j of the map was in bcs.ko already (@kj: as it was before the
 * map; made by a bcsd before this one, or by another master's map), as
 * local job @idx: if it has another owner than the map's, make it again
 * with the map's while it has no task here; with tasks, keep it (they
 * stay scheduled with their job, and their owner's attaches work on)
 * and say so once.  A map that does not know the owner changes nothing.
 */
static void check_owner(struct bcsd *d, const struct bcsp_job_row *j,
			const struct bcs_job_info *kj, uint32_t idx)
{
	int err;

	if (j->owner == BCSP_OWNER_NONE || !kj || kj->owner == j->owner) {
		d->local.owner_said[idx] = false;
		return;
	}
	if (kj->nr_tasks) {
		if (!d->local.owner_said[idx])
			pr_warn("job %u here is owned by uid %u, the map's by uid %u: kept, it has %u task(s) here",
				j->job, kj->owner, j->owner, kj->nr_tasks);
		d->local.owner_said[idx] = true;
		d->cnt.jobs_owner_kept++;
		return;
	}
	d->local.owner_said[idx] = false;
	err = bcs_job_destroy(d->bcs, j->job);
	if (!err || err == -ENOENT)
		err = make_job(d, j);
	if (err) {
		d->cnt.kernel_errors++;
		pr_warn("job %u: made again for uid %u: %s", j->job, j->owner,
			bcs_strerror(err, BCS_CTX_JOB));
		return;
	}
	d->cnt.jobs_reowned++;
	pr_notice("job %u made again for the map's owner, uid %u (was uid %u)",
		  j->job, j->owner, kj->owner);
}

/*
 * Map @m from the master followed, or (@from local) from this host's
 * active master, whose next strobe is the first to name it.
 */
static void on_map(struct bcsd *d, const struct bcsp_msg *m,
		   const struct bcsd_origin *from)
{
	/* Whole, as rx.c or master.c left it: @m holds one part. */
	const struct bcsp_whole_map *map = &d->followed.map;
	uint32_t epoch = m->hdr.epoch, master = m->hdr.sender;
	struct bcs_job_info *kjobs = NULL;
	const struct bcs_job_info *kj;
	struct bcsd_map_event *ev;
	size_t nk = 0;
	uint32_t i, idx;
	int err;

	/*
	 * Versions count per master: two masters of a partitioned cluster
	 * each step theirs on from the same one, and two standbys that took
	 * over in the same tick take the same epoch too, so only (epoch,
	 * master, version) says that this map is the one applied.
	 */
	if (d->node.applied && d->node.applied_version == map->version &&
	    d->node.applied_epoch == epoch && d->node.applied_master == master)
		return;
	/*
	 * An older map of the master whose map is applied, come late: it
	 * would destroy the jobs made since (rx.c drops those from the
	 * network already; this guards bcs.ko's jobs whatever the path).
	 */
	if (d->node.applied && d->node.applied_epoch == epoch &&
	    d->node.applied_master == master &&
	    bcsp_map_older(map->version, d->node.applied_version)) {
		d->cnt.maps_stale++;
		return;
	}
	/* bcs.ko's jobs as they were, for their owners and tasks. */
	if (bcs_job_list(d->bcs, &kjobs, &nk))
		nk = 0;
	if (nk)
		qsort(kjobs, nk, sizeof(kjobs[0]), by_info_id);
	for (i = 0; i < map->nr_jobs; i++) {
		const struct bcsp_job_row *j = &map->jobs[i];
		bool existed;

		supersede_local_job(d, j);
		/* A new job at once; a job's move at the map's slice. */
		err = make_job(d, j);
		existed = err == -EEXIST;
		if (existed)
			err = bcs_job_set_rows(d->bcs, j->job, j->row, j->rows,
					       map->apply_slice);
		if (err) {
			d->cnt.kernel_errors++;
			pr_warn("job %u: %s", j->job,
				bcs_strerror(err, BCS_CTX_JOB));
			continue;
		}
		if (!local_add(d, j->job, &idx))
			continue;
		if (j->birth)
			d->local.births[idx] = j->birth;
		kj = existed ? kernel_job(kjobs, nk, j->job) : NULL;
		if (kj)
			check_owner(d, j, kj, idx);
		else
			d->local.owner_said[idx] = false;
	}
	free(kjobs);
	/* Jobs the master no longer has. */
	drop_jobs_not_in(d, map);
	/* The map before stays in force until this one's slice. */
	if (!map->apply_slice || !d->node.applied ||
	    d->node.applied_epoch != epoch || d->node.applied_master != master) {
		d->node.applied_prev = false;
	} else if (map->apply_slice != d->node.applied_slice) {
		d->node.applied_prev = true;
		d->node.applied_prev_version = d->node.applied_version;
	}
	d->node.applied_version = map->version;
	d->node.applied_slice = map->apply_slice;
	d->node.applied_epoch = epoch;
	d->node.applied_master = master;
	d->node.applied = true;
	d->cnt.maps_applied++;
	ev = &d->node.history[d->node.nr_history++ % BCSD_MAP_HISTORY];
	ev->applied_ns = now_real_ns();
	/* This master's next strobe is the first to name its new map. */
	ev->from_slice = from->local ? from->slice + 1 : 0;
	ev->apply_slice = map->apply_slice;
	ev->epoch = epoch;
	ev->master = master;
	ev->version = map->version;
	ev->nr_jobs = map->nr_jobs;
	for (i = 0; i < map->nr_jobs && i < BCSD_MAP_EVENT_JOBS; i++) {
		ev->job[i] = map->jobs[i].job;
		ev->row[i] = map->jobs[i].row;
		ev->rows[i] = map->jobs[i].rows;
	}
}

/*
 * The CPUs the tasks of @r's jobs may run on, into @r (struct
 * bcsp_report's @cpus): the union of each task's affinity, CPU c as bit
 * c % 64; 0 for a job with a task whose affinity cannot be read (gone
 * meanwhile: the next report has it), so that it counts as the whole
 * node rather than as less than it uses.
 */
static void report_cpus(struct bcsd *d, struct bcsp_report *r)
{
	bool unknown[BCSP_MAX_JOBS] = { false };
	struct bcs_task_stat *ts = NULL;
	size_t n = 0, i;
	uint32_t k, c;
	cpu_set_t set;

	if (bcs_task_stats(d->bcs, 0, &ts, &n))
		return;
	for (i = 0; i < n; i++) {
		for (k = 0; k < r->nr_jobs; k++)
			if (r->jobs[k].job == ts[i].job)
				break;
		if (k == r->nr_jobs || unknown[k])
			continue;
		if (ts[i].pid <= 0 ||
		    sched_getaffinity(ts[i].pid, sizeof(set), &set)) {
			unknown[k] = true;
			r->jobs[k].cpus = 0;
			continue;
		}
		for (c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				r->jobs[k].cpus |= 1ULL << (c % 64);
	}
	free(ts);
}

/*
 * Jobs of the map applied that bcs.ko no longer holds: bcs.ko reaped a
 * job owned by a user after reap_empty_s without a task (admin-guide.rst,
 * "Job owners"), or someone destroyed it past bcsd.  The map still has
 * it, so that its next tasks here may join it: make it again, with its
 * rows and owner, at most BCSD_RESTORE_MAX per report.  @jobs (bcs.ko's
 * list of @n) is sorted here.
 */
#define BCSD_RESTORE_MAX	16

static void restore_jobs(struct bcsd *d, struct bcs_job_info *jobs, size_t n)
{
	const struct bcsp_whole_map *map = &d->followed.map;
	uint32_t i, k, done = 0;
	int err;

	if (!d->node.applied || !d->local.nr_jobs)
		return;
	if (n)
		qsort(jobs, n, sizeof(jobs[0]), by_info_id);
	for (i = 0; i < d->local.nr_jobs && done < BCSD_RESTORE_MAX; i++) {
		if (kernel_job(jobs, n, d->local.jobs[i]))
			continue;
		for (k = 0; k < map->nr_jobs && k < BCSP_MAP_JOBS_MAX; k++)
			if (map->jobs[k].job == d->local.jobs[i])
				break;
		if (k == map->nr_jobs || k == BCSP_MAP_JOBS_MAX)
			continue;
		done++;
		err = make_job(d, &map->jobs[k]);
		if (err && err != -EEXIST) {
			d->cnt.kernel_errors++;
			pr_warn("job %u, gone from bcs.ko: %s", map->jobs[k].job,
				bcs_strerror(err, BCS_CTX_JOB));
			continue;
		}
		d->local.owner_said[i] = false;
		d->cnt.jobs_restored++;
		pr_notice("job %u was gone from bcs.ko (reaped while empty?): made again, owner %u",
			  map->jobs[k].job, map->jobs[k].owner == BCSP_OWNER_NONE ?
			  0 : map->jobs[k].owner);
	}
}

static void send_report(struct bcsd *d)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_REPORT } };
	struct bcs_job_info *jobs = NULL;
	size_t n = 0, i;
	uint32_t idx;

	if (bcs_job_list(d->bcs, &jobs, &n))
		return;
	restore_jobs(d, jobs, n);
	for (i = 0; i < n && m.report.nr_jobs < BCSP_MAX_JOBS; i++) {
		if (!view_local_job(d, jobs[i].id, &idx))
			continue;
		m.report.jobs[m.report.nr_jobs].job = jobs[i].id;
		m.report.jobs[m.report.nr_jobs].tasks = jobs[i].nr_tasks;
		m.report.jobs[m.report.nr_jobs].birth = d->local.births[idx];
		m.report.nr_jobs++;
	}
	free(jobs);
	report_cpus(d, &m.report);
	m.hdr.epoch = d->followed.epoch;
	m.hdr.sender = d->node_id;
	view_on_report(d, d->node_id, &m.report, now_mono_ms());
	/* Down a tree, up the tree: added up on the way (reduce.c). */
	if (tree_transport(d)) {
		reduce_report(d, &m.report);
		return;
	}
	/* To this host's master part, if any. */
	dispatch(d, &m, &(struct bcsd_origin){ .local = true });
	/* To the group: the master and every other node's view. */
	net_send(d, &m, NULL);
}

/*
 * How command @c of master epoch @epoch went here, for the master: to
 * this host's master part if it is the master followed, else to it.
 */
static void send_result(struct bcsd *d, uint32_t epoch,
			const struct bcsp_command *c, int err)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_RESULT } };

	m.hdr.epoch = epoch;
	m.result.id = c->id;
	m.result.op = c->op;
	m.result.job = c->job;
	m.result.arg = c->arg;
	m.result.error = err < 0 && err >= -4095 ? err : err ? -EIO : 0;
	d->cnt.results_tx++;
	if (followed_is_self(d)) {
		m.hdr.sender = d->node_id;
		dispatch(d, &m, &(struct bcsd_origin){ .local = true });
		return;
	}
	if (d->followed.known)
		net_send(d, &m, &d->followed.addr);
}

/* Attach command @c: process @c->arg to job @c->job in bcs.ko. */
static void do_attach(struct bcsd *d, uint32_t epoch,
		      const struct bcsp_command *c)
{
	uint32_t nr = 0;
	int err;

	err = bcs_attach(d->bcs, c->job, (pid_t)c->arg, 0, &nr);
	d->cnt.attaches++;
	if (err) {
		d->cnt.attach_failures++;
		pr_warn("job %u: attach of %u: %s", c->job, c->arg,
			bcs_strerror(err, BCS_CTX_TASK));
	} else {
		pr_notice("job %u: process %u attached (%u threads)", c->job,
			  c->arg, nr);
	}
	send_result(d, epoch, c, err);
}

/*
 * BCSP_CMD_MPI: the control file of job @c->job's MPI processes on this
 * node, in its directory of mpi_dir (mpidir.c, libbcsmpi/control.c),
 * which they apply at their next MPI call; the same as bcsctl stats
 * enable|disable --mpi writes on a node without bcsd.  Never waits for
 * the file's lock (a reader may hold it).
 */
static void mpi_control(struct bcsd *d, const struct bcsp_command *c)
{
	char err[512];
	int r;

	r = mpidir_control_set(d->cfg.mpi_dir, c->job, !!(c->arg & BCSP_MPI_OFF),
			       c->len ? c->sel : NULL,
			       c->arg & BCSP_MPI_SUB_BITS ? (int)c->sub_bits : -1,
			       err, sizeof(err));
	if (r) {
		d->cnt.mpi_control_errors++;
		pr_warn("job %u: MPI statistics: %s", c->job, err);
		return;
	}
	d->cnt.mpi_controls_set++;
	pr_notice("job %u: MPI statistics %s%s%s in %s", c->job,
		  c->arg & BCSP_MPI_OFF ? "off" : "on",
		  c->len ? ": " : "", c->len ? c->sel : "", d->cfg.mpi_dir);
}

/*
 * A command of the master on the tasks of a job (BCSP_COMMAND), carried
 * out once per (epoch, id) whatever the copies and their order: a signal
 * to each of this node's processes of the job, if it has any, or their MPI
 * statistics set (on a node where the job is known); an attach on its
 * node only.
 */
static void on_command(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	const struct bcsp_command *c = &m->cmd;
	struct bcs_task_stat *ts = NULL;
	size_t n = 0, i, k, sent = 0;

	(void)from;
	if (bcsp_window_check(&d->node.cmds, m->hdr.epoch, c->id) != BCSP_OK)
		return;
	if (c->op == BCSP_CMD_ATTACH) {
		if (c->node == d->node_id)
			do_attach(d, m->hdr.epoch, c);
		return;
	}
	if ((c->op != BCSP_CMD_SIGNAL && c->op != BCSP_CMD_MPI) ||
	    bcs_task_stats(d->bcs, c->job, &ts, &n))
		return;		/* not here: nothing to do */
	d->cnt.commands++;
	if (c->op == BCSP_CMD_MPI) {
		free(ts);
		mpi_control(d, c);
		return;
	}
	for (i = 0; i < n; i++) {
		/* Each process once, not each of its threads. */
		for (k = 0; k < i; k++)
			if (ts[k].tgid == ts[i].tgid)
				break;
		if (k < i)
			continue;
		if (!kill(ts[i].tgid, (int)c->arg))
			sent++;
		else
			pr_warn("job %u: signal %u to %d: %s", c->job, c->arg,
				ts[i].tgid, strerror(errno));
	}
	free(ts);
	d->cnt.signals_sent += sent;
	pr_notice("job %u: signal %u to %zu processes", c->job, c->arg, sent);
}

static void node_tick(struct bcsd *d, void *arg)
{
	uint64_t now = now_mono_ms();

	(void)arg;
	if (d->followed.known &&
	    now - d->node.reported_ms >= d->cfg.report_ms) {
		d->node.reported_ms = now;
		send_report(d);
	}
}

int node_init(struct bcsd *d)
{
	int err;

	err = bcs_open(&d->bcs);
	if (!err)
		err = bcs_nl_open(&d->node.nl);
	if (err) {
		pr_err("%s", bcs_strerror(err, BCS_CTX_OPEN));
		return -1;
	}
	adopt_jobs(d);
	d->node.reported_ms = now_mono_ms();
	dispatch_register(d, BCSP_STROBE, on_strobe);
	dispatch_register(d, BCSP_MAP, on_map);
	dispatch_register(d, BCSP_COMMAND, on_command);
	return loop_on_tick(d, node_tick, NULL);
}

void node_exit(struct bcsd *d)
{
	/*
	 * Every gang runs again, on purpose: this is not a failure.  The
	 * jobs stay, with their tasks attached, so that a restarted bcsd
	 * adopts them from the master's map (bcs_job_create() -EEXIST) and
	 * the running ranks rejoin the schedule, as after a crash.
	 */
	if (d->node.driving && d->node.nl)
		bcs_nl_release(d->node.nl);
	d->node.driving = false;
	d->local.nr_jobs = 0;
	bcs_nl_close(d->node.nl);
	bcs_close(d->bcs);
	d->node.nl = NULL;
	d->bcs = NULL;
}

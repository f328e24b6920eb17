// SPDX-License-Identifier: GPL-2.0
/*
 * bcsd-sim's stand-in for bcs.ko: the libbcs functions bcsd calls that
 * touch the device (/dev/bcs, /dev/bcsstat, the generic netlink family
 * and its events group), answered in user space from a model of one
 * node's bcs.ko, one model per process.  The pure functions of libbcs
 * (bcs_strerror(), bcs_hist_add(), bcs_job_end_name()) are linked from
 * libbcs's own objects.  Signatures, argument checks and errors are those
 * of libbcs/bcs.h and <linux/bcs.h>.
 *
 * What is modelled:
 *  - jobs: id, row and set of rows (alternate scheduling: a job runs, and
 *    counts slices_run, in the slices of every row of its set), created,
 *    moved at once or at a slice (BCS_JOB_AT_SLICE: applied by the first
 *    strobe that switches to that slice or a later one, or by the
 *    fail-open, as bcs.ko's switch does), listed, destroyed, at most
 *    BCS_JOBS_MAX; filler jobs (bcs_job_set_filler()), which also run in
 *    a row where the node is idle, decided at each switch as bcs.ko's
 *    switch does: no job with tasks here has the row in its set;
 *  - tasks: processes attached whole (bcs_attach(), -ESRCH if there is
 *    no such process, -EBUSY if it is in another job), at most
 *    BCS_SIM_TASKS, one task each, gone when the process is or its job;
 *    listed and counted (nr_tasks), never suspended;
 *  - the mode: off, or driven by the netlink handle that called
 *    bcs_nl_drive(), until it releases or is closed (fail-open, mode off);
 *  - strobes from the driver: each switches at once, at max(arrival,
 *    deadline) (CLOCK_REALTIME), and is written to the slice ring as a
 *    record with BCS_SLICE_DRIVEN (| BCS_SLICE_LATE if it arrived after its
 *    deadline) and switch_start_ns = switch_end_ns = that time.  A strobe
 *    for a slice before the current one is dropped and counted missed, as
 *    bcs.ko does.  Predictions and expiries are checked and then ignored:
 *    no strobe is ever lost here;
 *  - plans (BCS_STROBE_PLAN): checked as bcs.ko checks them; the first
 *    slice switches as a strobe does, each later one at its deadline
 *    (row by bcs_row_next() through plan_rows), switched when the model
 *    is next looked at (a strobe, the slice ring, the state, the job
 *    list) and recorded so; a later strobe or plan first switches the
 *    plan's slices before its own, then replaces the rest (not missed),
 *    as does the fail-open; one for the slice a plan has switched already,
 *    with the same row, only confirms it (no second switch), and a plan
 *    that comes late replaces the current one from the slice after the
 *    current one on, its slices before gone (not missed).  The watchdog's count from a plan's end is
 *    not modelled (no watchdog is);
 *  - the slice ring of BCS_SIM_RECORDS records, read through
 *    bcs_stat_head() and bcs_stat_snapshot() with libbcs's semantics, and
 *    the slice window that arms it;
 *  - the ends of jobs: each destroyed job is announced, with no
 *    statistics (dist_tasks 0), on every events handle, whose descriptor
 *    (an eventfd) is readable while one waits.
 * What is not: threads, parking, detaching, the watchdog, standalone mode, statistics
 * (bcs_dist_ctl() checks its arguments and records nothing; bcs_dist_next()
 * finds no task, bcs_dist_hist() no histogram, unless $BCS_SIM_DIST asks
 * for one made-up thread per job, sim.h), and job dumps
 * (bcs_job_dump() fails with -EOPNOTSUPP; with no tasks no job has
 * statistics to dump, so bcsd never asks).
 *
 * If $BCS_SIM_LOG (sim.h) names a file, every strobe that reaches the
 * stand-in from the driver, accepted or not, is appended to it as the
 * line "slice row deadline_ns arrival_ns", for a harness to compare the
 * nodes' schedules; of an accepted plan, every slice it switches, with
 * the plan's arrival.
 *
 * Handles hold no state of their own beyond what they are (the driver,
 * an events queue): every handle of a process sees the same model.  Not
 * thread-safe, as libbcs's handles are not.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "libbcs/bcs.h"
#include "sim/sim.h"

struct bcs {
	int unused;
};

struct bcs_stat {
	bool mapped;
};

struct bcs_nl {
	int unused;
};

struct bcs_events {
	int fd;				/* eventfd: readable while one waits */
	struct bcs_job_ended queue[BCS_SIM_EVENTS_QUEUE];
	unsigned int first, len;
	uint64_t last_seq;		/* of the last one read */
};

/*
 * A move of a job that waits for slice @slice (BCS_JOB_AT_SLICE), kept at
 * the index of its job in sim.jobs.
 */
struct sim_pending {
	bool on;
	uint32_t row;
	uint64_t rows;			/* the whole set, @row's bit included */
	uint64_t slice;
	/* A filler job that the last switch resumed: the node was idle. */
	bool filling;
};

/* The model's tables, apart so that they take no room in the binary. */
static struct bcs_job_info jobs_store[BCS_JOBS_MAX];
static struct sim_pending pending_store[BCS_JOBS_MAX];
static struct bcs_slice_record ring_store[BCS_SIM_RECORDS];

/* The model of this process's bcs.ko. */
static struct {
	unsigned int opens;		/* struct bcs handles open */
	int log_fd;			/* $BCS_SIM_LOG, or -1 */
	bool log_failed;		/* said once */

	uint32_t mode;
	const struct bcs_nl *driver;
	uint64_t slice_ns;
	uint32_t watchdog_slices;
	uint32_t failopen;
	uint64_t slice;
	uint32_t row;
	bool switched;			/* some strobe has switched */
	uint64_t last_switch_ns;
	uint64_t strobes, switches, late, missed, missed_since, failopens;

	struct bcs_job_info *jobs;	/* jobs_store */
	struct sim_pending *pending;	/* pending_store, by job index */
	uint32_t nr_jobs;
	uint32_t last_id;

	struct bcs_slice_record *ring;	/* ring_store */
	uint64_t head;

	uint32_t window_state;
	uint64_t window_from, window_to, window_records, window_first_seq;

	struct bcs_events *events[BCS_SIM_EVENTS_MAX];
	uint64_t event_seq;

	struct {
		pid_t pid;		/* 0: a free slot */
		uint32_t job;
		uint64_t attach_ns;
	} tasks[BCS_SIM_TASKS];

	/*
	 * The plan switching (BCS_STROBE_PLAN): its strobe, when it came,
	 * and the index of its next slice to switch; none once @next is
	 * @plan.plan_slices.
	 */
	struct bcs_strobe plan;
	uint64_t plan_arrival;
	uint32_t plan_next;
	bool planned_now;		/* the current slice is a plan's */

	int drop_type;			/* $BCS_SIM_DROP; -1: not read yet */
	unsigned long drop_skip;	/* to let through first */
	unsigned long drop_left;
} sim = {
	.drop_type = -1,
	.log_fd = -1,
	.slice_ns = 10000000,
	.watchdog_slices = 10,
	.row = BCS_ROW_NONE,
	.jobs = jobs_store,
	.pending = pending_store,
	.ring = ring_store,
};

static void plan_catch_up(uint64_t now, uint64_t before);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* /dev/bcs                                                             */
/* ------------------------------------------------------------------ */

static int log_open(void)
{
	const char *path = getenv(BCS_SIM_ENV_LOG);
	int err;

	if (!path || !*path || sim.log_fd >= 0)
		return 0;
	sim.log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			  0644);
	if (sim.log_fd < 0) {
		err = -errno;
		fprintf(stderr, "bcsd-sim: %s %s: %s\n", BCS_SIM_ENV_LOG, path,
			strerror(-err));
		return err;
	}
	sim.log_failed = false;
	return 0;
}

int bcs_open(struct bcs **out)
{
	struct bcs *h;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	err = log_open();
	if (err) {
		free(h);
		return err;
	}
	sim.opens++;
	*out = h;
	return 0;
}

void bcs_close(struct bcs *h)
{
	if (!h)
		return;
	free(h);
	if (--sim.opens || sim.log_fd < 0)
		return;
	close(sim.log_fd);
	sim.log_fd = -1;
}

static int row_ok(uint32_t row)
{
	return row < BCS_ROWS_MAX || row == BCS_ROW_NONE;
}

static struct bcs_job_info *job_find(uint32_t id)
{
	uint32_t i;

	for (i = 0; i < sim.nr_jobs; i++)
		if (sim.jobs[i].id == id)
			return &sim.jobs[i];
	return NULL;
}

/*
 * The tasks of processes that are gone, and of job @job (0: none) which
 * goes, leave; each job's nr_tasks is counted again.
 */
static void tasks_prune(uint32_t job)
{
	struct bcs_job_info *j;
	uint32_t i;

	for (i = 0; i < sim.nr_jobs; i++)
		sim.jobs[i].nr_tasks = 0;
	for (i = 0; i < BCS_SIM_TASKS; i++) {
		if (!sim.tasks[i].pid)
			continue;
		if (sim.tasks[i].job == job ||
		    (kill(sim.tasks[i].pid, 0) && errno == ESRCH)) {
			sim.tasks[i].pid = 0;
			continue;
		}
		j = job_find(sim.tasks[i].job);
		if (j)
			j->nr_tasks++;
	}
}

/* A free id, in turn from 1 after the last one handed out, as bcs.ko. */
static uint32_t job_pick_id(void)
{
	uint32_t id = sim.last_id, i;

	/* Fewer jobs than BCS_JOBS_MAX: one of the next that many is free. */
	for (i = 0; i <= BCS_JOBS_MAX; i++) {
		id = bcs_job_id_next(id);
		if (!job_find(id))
			return id;
	}
	return 0;
}

/*
 * The set of rows of a job in @row that also runs in @rows, @row's bit
 * included (0 with no row), or false if bcs.ko refuses them (-EINVAL).
 */
static bool rows_set(uint32_t row, uint64_t rows, uint64_t *set)
{
	if (!row_ok(row) || (row == BCS_ROW_NONE && rows))
		return false;
	*set = row == BCS_ROW_NONE ? 0 : rows | 1ULL << row;
	return true;
}

/*
 * Job @id in @row and @rows, owned by @owner (bcs.ko's BCS_JOB_OWNER),
 * which bcs_job_list() reports as bcs.ko does; attaches are bcsd's, as
 * root, so the stand-in checks no owner.
 */
int bcs_job_create_rows_owned(struct bcs *h, uint32_t id, uint32_t row,
			      uint64_t rows, uid_t owner, uint32_t *id_out)
{
	struct bcs_job_info *j;
	uint64_t set;

	if (!h)
		return -EBADF;
	if ((id && !bcs_job_id_valid(id)) || !rows_set(row, rows, &set) ||
	    owner == (uid_t)-1)
		return -EINVAL;
	if (sim.nr_jobs >= BCS_JOBS_MAX)
		return -ENOSPC;
	if (id && job_find(id))
		return -EEXIST;
	if (!id) {
		id = job_pick_id();
		if (!id)
			return -ENOSPC;
		sim.last_id = id;
	}
	memset(&sim.pending[sim.nr_jobs], 0, sizeof(sim.pending[0]));
	j = &sim.jobs[sim.nr_jobs++];
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->row = row;
	j->rows = set;
	j->owner = (uint32_t)owner;
	if (id_out)
		*id_out = id;
	return 0;
}

/* Without an owner: the caller's effective uid, as bcs.ko. */
int bcs_job_create_rows(struct bcs *h, uint32_t id, uint32_t row,
			uint64_t rows, uint32_t *id_out)
{
	return bcs_job_create_rows_owned(h, id, row, rows, geteuid(), id_out);
}

int bcs_job_create_owned(struct bcs *h, uint32_t id, uint32_t row,
			 uid_t owner, uint32_t *id_out)
{
	return bcs_job_create_rows_owned(h, id, row, 0, owner, id_out);
}

int bcs_job_create(struct bcs *h, uint32_t id, uint32_t row,
		   uint32_t *id_out)
{
	return bcs_job_create_rows(h, id, row, 0, id_out);
}

/* Announce the end of job @id on every events handle. */
static void events_announce(uint32_t id)
{
	struct bcs_job_ended e = {
		.job = id, .reason = BCS_JOB_END_DESTROYED,
		.seq = ++sim.event_seq,
	};
	uint64_t one = 1;
	unsigned int i;

	for (i = 0; i < BCS_SIM_EVENTS_MAX; i++) {
		struct bcs_events *ev = sim.events[i];

		/* A full queue loses it: the gap shows in the next's @lost. */
		if (!ev || ev->len >= BCS_SIM_EVENTS_QUEUE)
			continue;
		ev->queue[(ev->first + ev->len++) % BCS_SIM_EVENTS_QUEUE] = e;
		/* The counter cannot overflow: it is reset when drained. */
		if (write(ev->fd, &one, sizeof(one)) != sizeof(one))
			fprintf(stderr, "bcsd-sim: events eventfd: %s\n",
				strerror(errno));
	}
}

int bcs_job_destroy(struct bcs *h, uint32_t id)
{
	struct bcs_job_info *j;

	if (!h)
		return -EBADF;
	if (!bcs_job_id_valid(id))
		return -EINVAL;
	j = job_find(id);
	if (!j)
		return -ENOENT;
	sim.pending[j - sim.jobs] = sim.pending[sim.nr_jobs - 1];
	*j = sim.jobs[--sim.nr_jobs];
	tasks_prune(id);
	events_announce(id);
	return 0;
}

/*
 * Move job @id to @row and @rows: at once without @at_slice (a move that
 * waits is dropped), else at the first switch to slice @at_slice or a
 * later one, replacing one that waits.
 */
int bcs_job_set_rows(struct bcs *h, uint32_t id, uint32_t row,
		     uint64_t rows, uint64_t at_slice)
{
	struct sim_pending *p;
	struct bcs_job_info *j;
	uint64_t set;

	if (!h)
		return -EBADF;
	if (!bcs_job_id_valid(id) || !rows_set(row, rows, &set))
		return -EINVAL;
	j = job_find(id);
	if (!j)
		return -ENOENT;
	p = &sim.pending[j - sim.jobs];
	p->on = at_slice != 0;
	if (p->on) {
		p->row = row;
		p->rows = set;
		p->slice = at_slice;
	} else {
		j->row = row;
		j->rows = set;
	}
	return 0;
}

/* Make job @id a filler job or not, from the next switch, as bcs.ko. */
int bcs_job_set_filler(struct bcs *h, uint32_t id, bool filler)
{
	struct bcs_job_info *j;

	if (!h)
		return -EBADF;
	j = job_find(id);
	if (!j)
		return -ENOENT;
	j->flags = filler ? BCS_JOB_FILLER : 0;
	return 0;
}

int bcs_job_set_row(struct bcs *h, uint32_t id, uint32_t row)
{
	return bcs_job_set_rows(h, id, row, 0, 0);
}

/* The moves due by slice @slice, which a switch begins, take effect. */
static void jobs_apply_due(uint64_t slice)
{
	uint32_t i;

	for (i = 0; i < sim.nr_jobs; i++) {
		struct sim_pending *p = &sim.pending[i];

		if (!p->on || p->slice > slice)
			continue;
		p->on = false;
		sim.jobs[i].row = p->row;
		sim.jobs[i].rows = p->rows;
	}
}

/*
 * Whether job @j runs in row @row: no row, or @row is in its set, or it is
 * a filler job that the last switch resumed in an idle row.
 */
static bool job_in_row(const struct bcs_job_info *j, uint32_t row)
{
	return j->row == BCS_ROW_NONE ||
	       (row < BCS_ROWS_MAX && (j->rows & 1ULL << row)) ||
	       sim.pending[j - sim.jobs].filling;
}

/*
 * Whether the node is idle in @row, for the filler jobs, as bcs.ko's
 * bcs_row_idle(): no job with tasks here has @row in its set.  The tasks
 * are counted first (tasks_prune()).
 */
static bool row_idle(uint32_t row)
{
	uint32_t i;

	if (row >= BCS_ROWS_MAX)
		return true;
	tasks_prune(0);
	for (i = 0; i < sim.nr_jobs; i++)
		if (sim.jobs[i].nr_tasks && (sim.jobs[i].rows & 1ULL << row))
			return false;
	return true;
}

/* Whether job @j may run now: no gang scheduling, or its rows hold ours. */
static uint32_t job_state(const struct bcs_job_info *j)
{
	if (sim.mode != BCS_MODE_DRIVEN || sim.failopen || !sim.switched ||
	    job_in_row(j, sim.row))
		return BCS_JOB_RUNNING;
	return BCS_JOB_SUSPENDED;
}

int bcs_job_list(struct bcs *h, struct bcs_job_info **out, size_t *n)
{
	struct bcs_job_info *a;
	uint32_t i;

	if (!h)
		return -EBADF;
	if (!out || !n)
		return -EINVAL;
	plan_catch_up(now_ns(), 0);
	*out = NULL;
	*n = 0;
	if (!sim.nr_jobs)
		return 0;
	tasks_prune(0);
	a = calloc(sim.nr_jobs, sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (i = 0; i < sim.nr_jobs; i++) {
		a[i] = sim.jobs[i];
		a[i].state = job_state(&sim.jobs[i]);
	}
	*out = a;
	*n = sim.nr_jobs;
	return 0;
}

/* The processes attached to job @job (0: every job), or -ENOENT. */
int bcs_task_stats(struct bcs *h, uint32_t job, struct bcs_task_stat **out,
		   size_t *n)
{
	struct bcs_task_stat *a;
	size_t k = 0;
	uint32_t i;

	if (!h)
		return -EBADF;
	if (!out || !n)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	if (job && !job_find(job))
		return -ENOENT;
	tasks_prune(0);
	a = calloc(BCS_SIM_TASKS, sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (i = 0; i < BCS_SIM_TASKS; i++) {
		if (!sim.tasks[i].pid || (job && sim.tasks[i].job != job))
			continue;
		a[k].pid = sim.tasks[i].pid;
		a[k].tgid = sim.tasks[i].pid;
		a[k].job = sim.tasks[i].job;
		a[k].state = BCS_TASK_RUNNABLE;
		a[k].attach_ns = sim.tasks[i].attach_ns;
		k++;
	}
	if (!k) {
		free(a);
		a = NULL;
	}
	*out = a;
	*n = k;
	return 0;
}

/*
 * Process @pid, whole, to job @job: bcs.ko's errors for a bad argument,
 * no such job (-ENOENT), no such process (-ESRCH) and a process of
 * another job (-EBUSY); one of this job already is.
 */
int bcs_attach(struct bcs *h, uint32_t job, pid_t pid, uint32_t flags,
	       uint32_t *nr)
{
	int free_slot = -1;
	uint32_t i;

	if (!h)
		return -EBADF;
	if (!bcs_job_id_valid(job) || pid <= 0 || (flags & ~BCS_ATTACH_THREAD))
		return -EINVAL;
	if (nr)
		*nr = 0;
	if (!job_find(job))
		return -ENOENT;
	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	tasks_prune(0);
	for (i = 0; i < BCS_SIM_TASKS; i++) {
		if (sim.tasks[i].pid == pid) {
			if (sim.tasks[i].job != job)
				return -EBUSY;
			return 0;
		}
		if (!sim.tasks[i].pid && free_slot < 0)
			free_slot = (int)i;
	}
	if (free_slot < 0)
		return -ENOMEM;
	sim.tasks[free_slot].pid = pid;
	sim.tasks[free_slot].job = job;
	sim.tasks[free_slot].attach_ns = now_ns();
	job_find(job)->nr_tasks++;
	if (nr)
		*nr = 1;
	return 0;
}

/*
 * bcsd's hook (rx.c): lose the first N datagrams of type T that come, or
 * the N after the first K, as $BCS_SIM_DROP ("T:N" or "T:N:K") says.
 */
bool sim_rx_drop(const uint8_t *buf, size_t len);

bool sim_rx_drop(const uint8_t *buf, size_t len)
{
	const char *e;
	unsigned long n, k = 0;
	unsigned int type;

	if (sim.drop_type < 0) {
		sim.drop_type = 0;
		e = getenv(BCS_SIM_ENV_DROP);
		if (e && sscanf(e, "%u:%lu:%lu", &type, &n, &k) >= 2 && type &&
		    type < 256) {
			sim.drop_type = (int)type;
			sim.drop_left = n;
			sim.drop_skip = k;
		}
	}
	/* The type is the sixth byte of the header (proto.h). */
	if (!sim.drop_left || len < 6 || buf[5] != sim.drop_type)
		return false;
	if (sim.drop_skip) {
		sim.drop_skip--;
		return false;
	}
	sim.drop_left--;
	fprintf(stderr, "bcsd-sim: %s: datagram of type %d lost\n",
		BCS_SIM_ENV_DROP, sim.drop_type);
	return true;
}

int bcs_get_state(struct bcs *h, struct bcs_state *st)
{
	if (!h)
		return -EBADF;
	if (!st)
		return -EINVAL;
	plan_catch_up(now_ns(), 0);
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->version = BCS_VERSION;
	st->mode = sim.mode;
	st->row = sim.row;
	st->slice = sim.slice;
	st->slice_ns = sim.slice_ns;
	st->watchdog_slices = sim.watchdog_slices;
	st->failopen = sim.failopen;
	st->nr_jobs = sim.nr_jobs;
	st->driver_pid = sim.driver ? (int32_t)getpid() : 0;
	st->strobes = sim.strobes;
	st->switches = sim.switches;
	st->late = sim.late;
	st->missed = sim.missed;
	st->failopens = sim.failopens;
	st->stat_records = BCS_SIM_RECORDS;
	st->window_state = sim.window_state;
	return 0;
}

/*
 * Statistics: no task is ever tracked, so nothing is recorded; the
 * arguments are checked as bcs.ko checks them, and a job that exists
 * takes every op, of any pids (the stand-in has no tasks to check them
 * against: tests/test_sim.sh names those of its fake MPI files).
 */
int bcs_dist_ctl(struct bcs *h, uint32_t job, uint32_t op, uint32_t metrics,
		 uint32_t sub_bits, const int32_t *pids, uint32_t nr_pids)
{
	if (!h)
		return -EBADF;
	if (op > BCS_DIST_RELEASE || (metrics & ~BCS_DIST_ALL) ||
	    (op != BCS_DIST_RELEASE && !metrics) ||
	    sub_bits > BCS_HIST_SUB_BITS_MAX || nr_pids > BCS_DIST_PIDS_MAX ||
	    (nr_pids && !pids))
		return -EINVAL;
	if (!job_find(job))
		return -ENOENT;
	return 0;
}

/*
 * Nothing is recorded, so no task of a job has distributions: there is
 * no next task (-ESRCH, as bcs.ko says after the last one), and none has
 * a histogram.
 */
/* $BCS_SIM_DIST's values per histogram, read once; 0: none tracked. */
static unsigned long sim_dist_values(void)
{
	static long values = -1;
	const char *e;
	char *end;
	unsigned long n;

	if (values < 0) {
		values = 0;
		e = getenv(BCS_SIM_ENV_DIST);
		if (e && *e) {
			errno = 0;
			n = strtoul(e, &end, 10);
			if (!errno && !*end && n && n <= BCS_SIM_DIST_MAX)
				values = (long)n;
		}
	}
	return (unsigned long)values;
}

int bcs_dist_next(struct bcs *h, uint32_t job, pid_t pid, pid_t *next)
{
	if (!h || !next)
		return h ? -EINVAL : -EBADF;
	if (!job_find(job))
		return -ENOENT;
	if (!sim_dist_values() || pid >= BCS_SIM_DIST_PID)
		return -ESRCH;
	*next = BCS_SIM_DIST_PID;
	return 0;
}

int bcs_dist_hist(struct bcs *h, uint32_t job, pid_t pid, uint32_t metric,
		  struct bcs_hist_header **out, struct bcs_dist_totals *totals)
{
	struct bcs_hist_header *hh;
	struct bcs_hist_bucket *b;
	unsigned long n = sim_dist_values();

	if (!h)
		return -EBADF;
	if (!out || metric >= BCS_DIST_METRICS)
		return -EINVAL;
	*out = NULL;
	if (!job_find(job))
		return -ENOENT;
	if (!n || pid != BCS_SIM_DIST_PID)
		return -ESRCH;
	hh = bcs_hist_alloc(1);
	if (!hh)
		return -ENOMEM;
	hh->sub_bits = BCS_SIM_DIST_SUB_BITS;
	hh->nr_buckets = 1;
	hh->count = n;
	hh->sum = (uint64_t)n * BCS_SIM_DIST_NS;
	hh->min = BCS_SIM_DIST_NS;
	hh->max = BCS_SIM_DIST_NS;
	b = bcs_hist_bucket_array(hh);
	b->index = bcs_hist_index(BCS_SIM_DIST_NS, BCS_SIM_DIST_SUB_BITS);
	b->count = n;
	if (totals)
		memset(totals, 0, sizeof(*totals));
	*out = hh;
	return 0;
}

int bcs_window_set(struct bcs *h, uint64_t from, uint64_t to)
{
	if (!h)
		return -EBADF;
	if (to < from)
		return -EINVAL;
	if (to - from >= BCS_SIM_RECORDS)
		return -E2BIG;
	if (from <= sim.slice)
		return -ERANGE;
	sim.window_state = BCS_WINDOW_ARMED;
	sim.window_from = from;
	sim.window_to = to;
	sim.window_records = 0;
	sim.window_first_seq = 0;
	return 0;
}

int bcs_window_clear(struct bcs *h)
{
	if (!h)
		return -EBADF;
	sim.window_state = BCS_WINDOW_NONE;
	sim.window_from = 0;
	sim.window_to = 0;
	sim.window_records = 0;
	sim.window_first_seq = 0;
	return 0;
}

/*
 * Without statistics there is nothing to dump, and bcsd asks for a dump
 * only of a job that kept some (collect.c).
 */
int bcs_job_dump(struct bcs *h, uint32_t job, FILE *out, unsigned int flags)
{
	(void)job;
	if (!h)
		return -EBADF;
	if (!out || (flags & ~BCS_DUMP_FLAGS))
		return -EINVAL;
	return -EOPNOTSUPP;
}

/* ------------------------------------------------------------------ */
/* The slice ring                                                       */
/* ------------------------------------------------------------------ */

/* Whether the window lets the switch to @slice be recorded. */
static bool window_records(uint64_t slice)
{
	switch (sim.window_state) {
	case BCS_WINDOW_NONE:
		return true;
	case BCS_WINDOW_ARMED:
	case BCS_WINDOW_CAPTURING:
		if (slice > sim.window_to) {
			sim.window_state = BCS_WINDOW_DONE;
			return false;
		}
		if (slice < sim.window_from)
			return false;
		/* Never over the window's own records. */
		if (sim.window_records >= BCS_SIM_RECORDS)
			return false;
		if (sim.window_state == BCS_WINDOW_ARMED)
			sim.window_first_seq = sim.head;
		sim.window_state = BCS_WINDOW_CAPTURING;
		sim.window_records++;
		return true;
	}
	return false;
}

static void ring_add(const struct bcs_strobe *s, uint64_t arrival,
		     uint64_t at, bool late, uint32_t missed)
{
	struct bcs_slice_record *r;

	if (!window_records(s->slice))
		return;
	r = &sim.ring[sim.head % BCS_SIM_RECORDS];
	memset(r, 0, sizeof(*r));
	r->seq = sim.head;
	r->slice = s->slice;
	r->strobe_ns = arrival;
	r->deadline_ns = s->deadline_ns;
	r->switch_start_ns = at;
	r->switch_end_ns = at;
	r->interval_ns = sim.last_switch_ns && at > sim.last_switch_ns ?
			 at - sim.last_switch_ns : 0;
	r->row = s->row;
	r->flags = BCS_SLICE_DRIVEN | (late ? BCS_SLICE_LATE : 0);
	r->late = late;
	r->missed = missed;
	r->late_total = sim.late;
	r->missed_total = sim.missed;
	/* Nothing to wait for: no task parks or wakes. */
	r->parked_ns = at;
	r->resumed_ns = at;
	sim.head++;
}

int bcs_stat_open(struct bcs_stat **out)
{
	if (!out)
		return -EINVAL;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void bcs_stat_close(struct bcs_stat *st)
{
	free(st);
}

int bcs_stat_map(struct bcs_stat *st)
{
	if (!st)
		return -EBADF;
	st->mapped = true;
	return 0;
}

int bcs_stat_head(struct bcs_stat *st, uint64_t *head)
{
	if (!st)
		return -EBADF;
	if (!head)
		return -EINVAL;
	if (!st->mapped)
		return -ENODATA;
	plan_catch_up(now_ns(), 0);
	*head = sim.head;
	return 0;
}

int bcs_stat_snapshot(struct bcs_stat *st, uint64_t from_seq,
		      struct bcs_slice_record *buf, size_t max, size_t *n,
		      uint64_t *next_seq)
{
	uint64_t s = from_seq;
	size_t count = 0;

	if (!st)
		return -EBADF;
	if (!n || (!buf && max))
		return -EINVAL;
	*n = 0;
	if (!st->mapped)
		return -ENODATA;
	plan_catch_up(now_ns(), 0);
	/* Records overwritten are skipped: the gap shows in seq. */
	if (sim.head > BCS_SIM_RECORDS && s < sim.head - BCS_SIM_RECORDS)
		s = sim.head - BCS_SIM_RECORDS;
	while (count < max && s < sim.head)
		buf[count++] = sim.ring[s++ % BCS_SIM_RECORDS];
	*n = count;
	if (next_seq)
		*next_seq = s;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Generic netlink                                                      */
/* ------------------------------------------------------------------ */

int bcs_nl_open(struct bcs_nl **out)
{
	if (!out)
		return -EINVAL;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/*
 * The driver is gone: every job runs, the mode is off.  bcs.ko's fail-open
 * is a switch in the current slice: the moves due by it take effect.
 */
static void fail_open(void)
{
	/* What the plan had left is dropped with the driver. */
	sim.plan_next = sim.plan.plan_slices;
	jobs_apply_due(sim.slice);
	sim.driver = NULL;
	sim.mode = BCS_MODE_OFF;
	sim.failopen = 0;
	sim.failopens++;
}

void bcs_nl_close(struct bcs_nl *nl)
{
	if (!nl)
		return;
	if (sim.driver == nl)
		fail_open();
	free(nl);
}

int bcs_nl_drive(struct bcs_nl *nl, uint64_t slice_ns,
		 uint32_t watchdog_slices)
{
	if (!nl)
		return -EBADF;
	if ((slice_ns && (slice_ns < BCS_SLICE_NS_MIN ||
			  slice_ns > BCS_SLICE_NS_MAX)) ||
	    (watchdog_slices != BCS_NL_DEFAULT &&
	     watchdog_slices > BCS_WATCHDOG_MAX))
		return -ERANGE;
	if (sim.driver && sim.driver != nl)
		return -EBUSY;
	if (slice_ns)
		sim.slice_ns = slice_ns;
	if (watchdog_slices != BCS_NL_DEFAULT)
		sim.watchdog_slices = watchdog_slices;
	sim.driver = nl;
	sim.mode = BCS_MODE_DRIVEN;
	sim.failopen = 0;
	return 0;
}

int bcs_nl_release(struct bcs_nl *nl)
{
	if (!nl)
		return -EBADF;
	if (sim.driver != nl)
		return sim.driver ? -EBUSY : -ENOTCONN;
	fail_open();
	return 0;
}

/* Append the strobe to $BCS_SIM_LOG; a failure is said once. */
static void log_strobe(const struct bcs_strobe *s, uint64_t arrival)
{
	char line[96];
	int len;

	if (sim.log_fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu32 " %" PRIu64
		       " %" PRIu64 "\n", (uint64_t)s->slice, (uint32_t)s->row,
		       (uint64_t)s->deadline_ns, arrival);
	if (len > 0 && len < (int)sizeof(line) &&
	    write(sim.log_fd, line, (size_t)len) == len)
		return;
	if (!sim.log_failed)
		fprintf(stderr, "bcsd-sim: %s: strobes not logged: %s\n",
			BCS_SIM_ENV_LOG, strerror(errno));
	sim.log_failed = true;
}

static int strobe_check(const struct bcs_strobe *s, uint64_t now)
{
	uint32_t f = s->flags;
	uint64_t len = s->slice_ns ? s->slice_ns : sim.slice_ns;

	if ((f & ~BCS_STROBE_FLAGS) || s->reserved ||
	    ((f & BCS_STROBE_PREDICT) &&
	     (f & (BCS_STROBE_NOW | BCS_STROBE_NEXT))) ||
	    ((f & BCS_STROBE_EXPIRE) && (f & BCS_STROBE_NEXT)) ||
	    ((f & BCS_STROBE_PLAN) &&
	     (f & (BCS_STROBE_NOW | BCS_STROBE_NEXT | BCS_STROBE_PREDICT))) ||
	    (!(f & BCS_STROBE_PLAN) && (s->plan_slices || s->plan_rows)))
		return -EINVAL;
	if (s->row >= BCS_ROWS_MAX ||
	    ((f & BCS_STROBE_PREDICT) && s->next_row >= BCS_ROWS_MAX) ||
	    (s->slice_ns && (s->slice_ns < BCS_SLICE_NS_MIN ||
			     s->slice_ns > BCS_SLICE_NS_MAX)) ||
	    s->deadline_ns > BCS_DEADLINE_NS_MAX ||
	    (s->deadline_ns > now &&
	     s->deadline_ns - now > BCS_STROBE_AHEAD_MAX_NS))
		return -ERANGE;
	/* The whole plan ends by BCS_DEADLINE_NS_MAX. */
	if ((f & BCS_STROBE_PLAN) &&
	    (!s->plan_slices || s->plan_slices > BCS_PLAN_SLICES_MAX ||
	     (uint64_t)(s->plan_slices - 1) * len >
	     BCS_DEADLINE_NS_MAX - s->deadline_ns))
		return -ERANGE;
	return 0;
}

/*
 * Decide which filler jobs run in the slice that starts now, and count it
 * for the jobs that run in it.
 */
static void jobs_switched(void)
{
	bool idle = row_idle(sim.row);
	uint32_t i;

	for (i = 0; i < sim.nr_jobs; i++) {
		sim.pending[i].filling = idle &&
					 (sim.jobs[i].flags & BCS_JOB_FILLER);
		if (job_in_row(&sim.jobs[i], sim.row))
			sim.jobs[i].slices_run++;
	}
}

/* The switch to @s's slice and row, which came at @arrival, at @at. */
static void switch_to(const struct bcs_strobe *s, uint64_t arrival,
		      uint64_t at, bool late)
{
	uint32_t missed;

	if (s->slice_ns)
		sim.slice_ns = s->slice_ns;
	sim.slice = s->slice;
	sim.row = s->row;
	sim.switched = true;
	sim.failopen = 0;
	sim.switches++;
	sim.late += late;
	missed = sim.missed_since > UINT32_MAX ? UINT32_MAX :
		 (uint32_t)sim.missed_since;
	sim.missed_since = 0;
	ring_add(s, arrival, at, late, missed);
	sim.last_switch_ns = at;
	jobs_apply_due(sim.slice);
	jobs_switched();
}

/* Slice @i of the plan switching, as a strobe of its own. */
static struct bcs_strobe plan_slice(uint32_t i)
{
	const struct bcs_strobe *p = &sim.plan;
	struct bcs_strobe s = *p;
	uint64_t len = p->slice_ns ? p->slice_ns : sim.slice_ns;
	uint32_t k;

	s.slice = p->slice + i;
	s.deadline_ns = p->deadline_ns + i * len;
	/* bcs_row_next() i times (<linux/bcs.h>, "Plans"); none: 0. */
	for (k = 0; k < i && p->plan_rows; k++) {
		s.row = bcs_row_next(p->plan_rows, s.row);
		if (s.row == BCS_ROW_NONE)
			s.row = 0;
	}
	s.flags = 0;
	s.plan_slices = 0;
	s.plan_rows = 0;
	return s;
}

/*
 * The slices of the plan due by @now switch, each at its deadline, as
 * bcs.ko's clock would have switched them; with @before, also every
 * slice before slice @before whatever its deadline (a later strobe is
 * for @before).  Called wherever the model is looked at.
 */
static void plan_catch_up(uint64_t now, uint64_t before)
{
	struct bcs_strobe s;

	if (sim.mode != BCS_MODE_DRIVEN)
		sim.plan_next = sim.plan.plan_slices;
	while (sim.plan_next < sim.plan.plan_slices) {
		s = plan_slice(sim.plan_next);
		if (s.deadline_ns > now && s.slice >= before)
			break;
		sim.plan_next++;
		log_strobe(&s, sim.plan_arrival);
		switch_to(&s, sim.plan_arrival, s.deadline_ns, false);
		sim.planned_now = true;
	}
}

int bcs_nl_strobe_send(struct bcs_nl *nl, const struct bcs_strobe *s)
{
	uint64_t arrival = now_ns(), at;
	bool late, same;
	int err;

	if (!nl || !s)
		return -EINVAL;
	if (sim.mode != BCS_MODE_DRIVEN)
		return -ENOTCONN;
	if (sim.driver != nl)
		return -EBUSY;
	err = strobe_check(s, arrival);
	/* A plan's slices are logged as they switch. */
	if (err || !(s->flags & BCS_STROBE_PLAN))
		log_strobe(s, arrival);
	if (err)
		return err;
	sim.strobes++;
	/*
	 * The plan switching runs up to this strobe's slice; what it has
	 * from there on, this strobe replaces (not missed).
	 */
	plan_catch_up(arrival, s->slice);
	sim.plan_next = sim.plan.plan_slices;
	if (sim.switched && s->slice <= sim.slice) {
		/*
		 * Its slice switched already, a plan's, to its row:
		 * confirmed, not switched again (as a prediction is).
		 */
		same = s->slice == sim.slice && sim.planned_now &&
		       s->row == sim.row;
		/*
		 * A plan that came late: its slices up to the current one
		 * are gone (not missed: the current plan switched them), the
		 * rest replaces the current plan's.
		 */
		if ((s->flags & BCS_STROBE_PLAN) && (same || s->slice < sim.slice) &&
		    sim.slice - s->slice < s->plan_slices - 1ULL) {
			sim.plan = *s;
			sim.plan_arrival = arrival;
			sim.plan_next = (uint32_t)(sim.slice - s->slice) + 1;
			plan_catch_up(arrival, 0);
			return 0;
		}
		if (same)
			return 0;
	}
	sim.planned_now = false;
	/* Its slice is over: dropped, missed. */
	if (sim.switched && s->slice < sim.slice) {
		sim.missed++;
		sim.missed_since++;
		return 0;
	}
	if (s->flags & BCS_STROBE_NOW) {
		late = false;
		at = arrival;
	} else {
		late = arrival > s->deadline_ns;
		at = late ? arrival : s->deadline_ns;
	}
	if (s->flags & BCS_STROBE_PLAN) {
		/* Its first slice now, as a strobe; the rest on its clock. */
		sim.plan = *s;
		sim.plan_arrival = arrival;
		sim.plan_next = 1;
		log_strobe(s, arrival);
	}
	switch_to(s, arrival, at, late);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The ends of jobs                                                     */
/* ------------------------------------------------------------------ */

int bcs_events_open(struct bcs_events **out)
{
	struct bcs_events *ev;
	unsigned int i;

	if (!out)
		return -EINVAL;
	*out = NULL;
	for (i = 0; i < BCS_SIM_EVENTS_MAX && sim.events[i]; i++)
		;
	if (i == BCS_SIM_EVENTS_MAX)
		return -EMFILE;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ev->fd < 0) {
		int err = -errno;

		free(ev);
		return err;
	}
	/* Events that came before the open are not seen. */
	ev->last_seq = sim.event_seq;
	sim.events[i] = ev;
	*out = ev;
	return 0;
}

void bcs_events_close(struct bcs_events *ev)
{
	unsigned int i;

	if (!ev)
		return;
	for (i = 0; i < BCS_SIM_EVENTS_MAX; i++)
		if (sim.events[i] == ev)
			sim.events[i] = NULL;
	close(ev->fd);
	free(ev);
}

int bcs_events_fd(const struct bcs_events *ev)
{
	return ev ? ev->fd : -EBADF;
}

/*
 * Nothing else adds events while this process waits in here, so a
 * blocking read with none queued would never return: it fails with
 * -EAGAIN as a non-blocking one does.
 */
int bcs_events_read(struct bcs_events *ev, struct bcs_job_ended *out,
		    int nonblock)
{
	uint64_t count;

	(void)nonblock;
	if (!ev)
		return -EBADF;
	if (!out)
		return -EINVAL;
	if (!ev->len) {
		/* Drained: the descriptor is no longer readable. */
		if (read(ev->fd, &count, sizeof(count)) < 0 &&
		    errno != EAGAIN)
			return -errno;
		return -EAGAIN;
	}
	*out = ev->queue[ev->first];
	ev->first = (ev->first + 1) % BCS_SIM_EVENTS_QUEUE;
	ev->len--;
	out->lost = out->seq > ev->last_seq + 1 ?
		    out->seq - ev->last_seq - 1 : 0;
	ev->last_seq = out->seq;
	return 0;
}

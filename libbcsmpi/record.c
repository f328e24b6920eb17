// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: the counters and histograms of this process, updated in its
 * statistics file.  Updates are atomic (relaxed), so that calls from
 * several threads lose nothing; a reader sees every field current.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include <linux/bcs_hist.h>

#include "control.h"
#include "record.h"
#include "select.h"
#include "statfile.h"

/* Tries of a compare-and-swap on a minimum or maximum under contention. */
#define CAS_TRIES	64

int bcsmpi_on;
int bcsmpi_started;

/* The generation of the control file, or 0 without one. */
static const __u32 no_generation;
const __u32 *bcsmpi_generation = &no_generation;
__u32 bcsmpi_generation_seen;

static struct bcsmpi_statfile file = { .fd = -1 };
struct bcs_mpi_prim *bcsmpi_prims;
__thread unsigned int bcsmpi_depth BCSMPI_TLS;
unsigned int bcsmpi_poll_left[BCSMPI_NR_PRIMS];
static struct bcs_mpi_control *control;
static int control_fd = -1;
static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER;
/* 1: the record's histograms are updated (they may exist while 0). */
static unsigned char dist_on[BCSMPI_NR_PRIMS];
static uint64_t last_ns;		/* end of the last blocking call */

uint64_t bcsmpi_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void add(__u64 *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* *@p = min(*@p, @v) (@less; 0 is none yet) or max (!@less). */
static void bound(__u64 *p, uint64_t v, int less)
{
	__u64 old = __atomic_load_n(p, __ATOMIC_RELAXED);
	int i;

	for (i = 0; i < CAS_TRIES; i++) {
		if (less ? old && old <= v : old >= v)
			return;
		if (__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return;
	}
}

static void hist_add(uint64_t off, uint64_t v)
{
	struct bcs_hist_header *h = (void *)((char *)file.hdr + off);
	struct bcs_hist_bucket *b = (void *)(h + 1);

	add(&b[bcs_hist_index(v, h->sub_bits)].count, 1);
	add(&h->count, 1);
	add(&h->sum, v);
	bound(&h->min, v, 1);
	bound(&h->max, v, 0);
}

static void record(enum bcsmpi_prim prim, uint64_t ns, uint64_t bytes)
{
	struct bcs_mpi_prim *p = &file.prims[prim];
	uint64_t off;

	/* @calls first: a reader may see it ahead of @timed, not behind. */
	add(&p->calls, 1);
	add(&p->timed, 1);
	bound(&p->min_ns, ns, 1);
	bound(&p->max_ns, ns, 0);
	add(&p->total_ns, ns);
	if (bytes)
		add(&p->bytes, bytes);
	if (!__atomic_load_n(&dist_on[prim], __ATOMIC_RELAXED))
		return;
	off = __atomic_load_n(&p->lat_hist_off, __ATOMIC_ACQUIRE);
	if (off)
		hist_add(off, ns);
	off = __atomic_load_n(&p->size_hist_off, __ATOMIC_ACQUIRE);
	if (off)
		hist_add(off, bytes);
}

/* A computation point: from the end of the last blocking call to @t. */
static void computation(uint64_t t)
{
	uint64_t last = __atomic_exchange_n(&last_ns, t, __ATOMIC_RELAXED);

	record(BCSMPI_COMP, t - last, 0);
}

uint64_t bcsmpi_enter(int blocking)
{
	uint64_t t;

	if (bcsmpi_depth++)
		return 0;
	t = bcsmpi_now();
	if (blocking)
		computation(t);
	return t;
}

void bcsmpi_leave(enum bcsmpi_prim prim, int blocking, uint64_t t0,
		  uint64_t bytes)
{
	uint64_t t;

	bcsmpi_depth--;
	if (!t0)
		return;
	t = bcsmpi_now();
	record(prim, t - t0, bytes);
	if (blocking) {
		record(BCSMPI_COMM, t - t0, 0);
		__atomic_store_n(&last_ns, t, __ATOMIC_RELAXED);
	}
}

/*
 * A child forked by a process that records shares its mapping: it must
 * not count into its parent's file.
 */
static void child_off(void)
{
	__atomic_store_n(&bcsmpi_on, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bcsmpi_started, 0, __ATOMIC_RELAXED);
	bcsmpi_generation = &no_generation;
	bcsmpi_generation_seen = 0;
	file.hdr = NULL;
	file.prims = NULL;
	bcsmpi_prims = NULL;
}

static void say(const char *msg)
{
	fprintf(stderr, "libbcsmpi: %s; MPI profiling off\n", msg);
}

static void warn(const char *msg, const char *what)
{
	fprintf(stderr, "libbcsmpi: %s; %s\n", msg, what);
}

/* The selection of the control file @c into @sel; 0 or -EINVAL. */
static int control_select(const struct bcs_mpi_control *c,
			  struct bcsmpi_select *sel)
{
	char err[256];
	int r;

	r = bcsmpi_select_parse(c->stats, NULL, NULL, sel, err, sizeof(err));
	if (r) {
		warn(err, "the control file's selection ignored");
		return r;
	}
	if (c->flags & BCS_MPI_CTL_OFF)
		sel->off = 1;
	if ((c->flags & BCS_MPI_CTL_SUB_BITS) &&
	    c->sub_bits > BCS_HIST_SUB_BITS_MAX) {
		warn("the control file's resolution is not 0 .. 7",
		     "the control file ignored");
		return -EINVAL;
	}
	return 0;
}

/*
 * The control file changed (or is being changed): apply it when it is
 * consistent.  One thread at a time; the others go on as they were.
 */
void bcsmpi_control(void)
{
	struct bcs_mpi_control c;
	struct bcsmpi_select sel;
	char err[PATH_MAX + 64];
	unsigned int i, sub;
	int restart, warned = 0;

	if (pthread_mutex_trylock(&control_lock))
		return;
	if (!control || bcsmpi_control_read(control, &c) ||
	    c.generation == bcsmpi_generation_seen)
		goto out;
	__atomic_store_n(&bcsmpi_generation_seen, c.generation,
			 __ATOMIC_RELAXED);
	if (control_select(&c, &sel))
		goto out;
	/* A new resolution starts the distributions selected again. */
	sub = c.flags & BCS_MPI_CTL_SUB_BITS ? c.sub_bits : file.hdr->sub_bits;
	restart = sub != file.hdr->sub_bits;
	for (i = 0; i < BCSMPI_NR_PRIMS; i++) {
		if (sel.dist[i] && (restart || !file.prims[i].lat_hist_off) &&
		    bcsmpi_statfile_add_hists(&file, i, sub, err,
					      sizeof(err))) {
			if (!warned++)
				warn(err, "no more distributions");
			/* The process rows keep theirs. */
			sel.dist[i] = !!file.prims[i].lat_hist_off &&
				      i <= BCSMPI_COMM;
		}
		__atomic_store_n(&dist_on[i], sel.dist[i], __ATOMIC_RELAXED);
	}
	if (restart)
		__atomic_store_n(&file.hdr->sub_bits, sub, __ATOMIC_RELEASE);
	__atomic_store_n(&bcsmpi_on, !sel.off, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&control_lock);
}

/*
 * The control file of job @job: mapped, and its selection in @sel if it
 * was ever set.  Without one (it cannot be created) the selection of the
 * environment stays, said once.
 */
static void control_start(const char *dir, const char *job, int own,
			  struct bcsmpi_select *sel)
{
	struct bcs_mpi_control c;
	struct bcsmpi_select csel;
	char err[PATH_MAX + 64];
	int fd;

	/* In bcsd's directory of the job, bcsd's file only. */
	fd = bcsmpi_control_open(dir, job, own ? 0 : BCSMPI_CTL_NOCREATE,
				 &control, err, sizeof(err));
	if (fd < 0) {
		warn(err, "the selection cannot change while it runs");
		return;
	}
	control_fd = fd;
	/* Being written (odd): the environment's until the next call. */
	if (bcsmpi_control_read(control, &c)) {
		bcsmpi_generation_seen = 1;
		return;
	}
	bcsmpi_generation_seen = c.generation;
	if (!c.generation || control_select(&c, &csel))
		return;
	csel.sub_bits = c.flags & BCS_MPI_CTL_SUB_BITS ? c.sub_bits :
			sel->sub_bits;
	*sel = csel;
}

/* Unmap the control file (nothing reads it any more). */
static void control_stop(void)
{
	bcsmpi_control_close(control, control_fd);
	control = NULL;
	control_fd = -1;
}

/* $BCS_MPI_WAIT_MS, or its default if unset or not 0 .. the most. */
static unsigned int wait_ms(void)
{
	const char *v = getenv("BCS_MPI_WAIT_MS");
	char *end;
	unsigned long ms;

	if (!v || !*v)
		return BCSMPI_WAIT_MS_DEFAULT;
	errno = 0;
	ms = strtoul(v, &end, 10);
	if (errno || *end || *v == '-' || ms > BCSMPI_WAIT_MS_MAX) {
		warn("BCS_MPI_WAIT_MS is not 0 .. 60000", "its default taken");
		return BCSMPI_WAIT_MS_DEFAULT;
	}
	return (unsigned int)ms;
}

void bcsmpi_start(enum bcsmpi_prim prim, uint64_t t0, const char *mpi)
{
	struct bcsmpi_select sel;
	struct bcsmpi_where w = { .mpi = mpi };
	const char *job = getenv("BCS_JOB");
	char err[PATH_MAX + 128];
	static char jobdir[PATH_MAX];
	struct timespec rt;
	uint64_t t;
	int own = 0;

	if (file.hdr)		/* MPI_Init called twice: MPI says no */
		return;
	if (bcsmpi_select_parse(getenv("BCS_MPI_STATS"),
				getenv("BCS_MPI_RESOLUTION"),
				getenv("BCS_MPI_POLL"), &sel, err,
				sizeof(err))) {
		say(err);
		return;
	}
	if (sel.off)
		return;
	w.dir = bcsmpi_dir();
	w.job = job ? job : "";
	if (PMPI_Comm_rank(MPI_COMM_WORLD, &w.rank) != MPI_SUCCESS ||
	    PMPI_Comm_size(MPI_COMM_WORLD, &w.world_size) != MPI_SUCCESS) {
		say("cannot learn the rank in MPI_COMM_WORLD");
		return;
	}
	if (pthread_atfork(NULL, NULL, child_off)) {
		say("cannot register a fork handler");
		return;
	}
	/*
	 * A job's files go to its directory (bcsmpi_job_dir()): one no
	 * other user can write to, or profiling is off.  A job's selection
	 * can change while it runs.
	 */
	if (*w.job) {
		if (bcsmpi_job_dir(w.dir, w.job, wait_ms(), jobdir,
				   sizeof(jobdir), &own, err, sizeof(err))) {
			say(err);
			return;
		}
		w.dir = jobdir;
		control_start(w.dir, w.job, own, &sel);
	}
	if (bcsmpi_statfile_create(&file, &sel, &w, control != NULL, err,
				   sizeof(err))) {
		say(err);
		control_stop();
		return;
	}
	memcpy(dist_on, sel.dist, sizeof(dist_on));
	bcsmpi_prims = file.prims;
	t = bcsmpi_now();
	record(prim, t - t0, 0);
	clock_gettime(CLOCK_REALTIME, &rt);
	file.hdr->start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ULL +
				      (uint64_t)rt.tv_nsec;
	t = bcsmpi_now();
	file.hdr->init_ns = t;
	last_ns = t;
	__atomic_store_n(&bcsmpi_started, 1, __ATOMIC_RELAXED);
	if (control)
		bcsmpi_generation = &control->generation;
	__atomic_store_n(&bcsmpi_on, !sel.off, __ATOMIC_RELEASE);
}

uint64_t bcsmpi_finalize_enter(void)
{
	uint64_t t = bcsmpi_now();

	/* No more changes: the control file is not read again. */
	pthread_mutex_lock(&control_lock);
	bcsmpi_generation = &no_generation;
	bcsmpi_generation_seen = 0;
	pthread_mutex_unlock(&control_lock);
	__atomic_store_n(&bcsmpi_on, 0, __ATOMIC_RELAXED);
	computation(t);
	__atomic_store_n(&file.hdr->finalize_ns, t, __ATOMIC_RELAXED);
	return t;
}

void bcsmpi_finalize_leave(uint64_t t0)
{
	record(BCSMPI_Finalize, bcsmpi_now() - t0, 0);
	__atomic_or_fetch(&file.hdr->flags, BCS_MPI_COMPLETE,
			  __ATOMIC_RELEASE);
	__atomic_store_n(&bcsmpi_started, 0, __ATOMIC_RELAXED);
	bcsmpi_statfile_close(&file);
	control_stop();
}

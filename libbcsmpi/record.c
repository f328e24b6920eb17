// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: the counters and histograms of this process, updated in its
 * statistics file.  Updates are atomic (relaxed), so that calls from
 * several threads lose nothing; a reader sees every field current.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include <linux/bcs_hist.h>

#include "control.h"
#include "mpifile.h"
#include "record.h"
#include "report.h"
#include "select.h"
#include "slice.h"
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
/*
 * What record() does beyond the counters of a record, read once per
 * call: DIST_ON, its histograms are updated (they may exist while
 * not); EXTRA_ON, the call is counted in the current region or its call
 * site too.  0 (the common case) costs a record nothing more.
 */
#define DIST_ON		1
#define EXTRA_ON	2
static unsigned char dist_on[BCSMPI_NR_PRIMS];
static unsigned char dist_sel[BCSMPI_NR_PRIMS];	/* DIST_ON as selected */
static uint64_t last_ns;		/* end of the last blocking call */

/*
 * MPI_Pcontrol: recording is on while the control file (or the
 * environment) wants it and the level is not 0.  The regions' stack is
 * the process's (not a thread's), changed under region_lock.
 */
int bcsmpi_regions;
static int ctl_on, pc_on = 1;
static uint64_t paused_at;		/* while MPI_Pcontrol(0) holds */
#define REGION_DEPTH	16
static int region_stack[REGION_DEPTH], region_depth;
static int cur_region = -1;		/* innermost, or -1 */
static struct bcs_mpi_region *regions;	/* in the file */
static struct bcs_mpi_rprim *rprims;	/* [region][record] */
static struct bcs_mpi_site *sites;	/* in the file, or NULL */
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
static int sites_full;			/* said once */

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

/*
 * dist_on[] from the selection and the extras: with control_lock held
 * (the one lock of everything that changes it).
 */
static void flags_update(void)
{
	unsigned char e = sites || cur_region >= 0 ? EXTRA_ON : 0;
	unsigned int i;

	for (i = 0; i < BCSMPI_NR_PRIMS; i++)
		__atomic_store_n(&dist_on[i], dist_sel[i] | e,
				 __ATOMIC_RELAXED);
}

/* Recording on or off: the control file's wish and MPI_Pcontrol's. */
static void on_update(void)
{
	__atomic_store_n(&bcsmpi_on, ctl_on && pc_on, __ATOMIC_RELEASE);
}

/* The slot of call site @caller of @prim, taken if new; NULL if full. */
static struct bcs_mpi_site *site_of(enum bcsmpi_prim prim, const void *caller)
{
	uint64_t a = (uintptr_t)caller, h = (a >> 4) * 0x9e3779b97f4a7c15ULL;
	unsigned int i, k, n = file.hdr->nr_sites;
	struct bcs_mpi_site *s;
	Dl_info info;
	size_t len, cut;

	for (k = 0; k < n; k++) {
		i = (unsigned int)((h >> 40) + k) % n;
		s = &sites[i];
		if (__atomic_load_n(&s->addr, __ATOMIC_ACQUIRE) == a)
			return s;
		if (__atomic_load_n(&s->addr, __ATOMIC_ACQUIRE))
			continue;
		/* A free slot: taken under the lock, filled, then published. */
		pthread_mutex_lock(&site_lock);
		if (s->addr) {
			pthread_mutex_unlock(&site_lock);
			k--;		/* taken meanwhile: look at it again */
			continue;
		}
		s->prim = prim;
		s->id = i + 1;
		s->offset = a;
		if (dladdr(caller, &info) && info.dli_fname) {
			char real[PATH_MAX];

			s->offset = a - (uintptr_t)info.dli_fbase;
			/* The program as it was started: made absolute. */
			if (info.dli_fname[0] != '/' &&
			    realpath(info.dli_fname, real))
				info.dli_fname = real;
			/* Too long: its end, not to be resolved then. */
			len = strlen(info.dli_fname);
			cut = len < sizeof(s->module) ? 0 :
			      len - sizeof(s->module) + 1;
			memcpy(s->module, info.dli_fname + cut, len - cut + 1);
		}
		__atomic_store_n(&s->addr, a, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&site_lock);
		return s;
	}
	if (!__atomic_exchange_n(&sites_full, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "libbcsmpi: more than %u call sites; the "
			"others not kept\n", n);
	return NULL;
}

/* The region's and call site's share of a call (EXTRA_ON). */
static void extra(enum bcsmpi_prim prim, uint64_t ns, uint64_t bytes,
		  const void *caller)
{
	int r = __atomic_load_n(&cur_region, __ATOMIC_RELAXED);
	struct bcs_mpi_rprim *rp;
	struct bcs_mpi_site *s;

	if (r >= 0) {
		rp = &rprims[(size_t)r * BCSMPI_NR_PRIMS + prim];
		add(&rp->calls, 1);
		add(&rp->total_ns, ns);
		if (bytes)
			add(&rp->bytes, bytes);
	}
	if (sites && caller && prim > BCSMPI_COMM) {
		s = site_of(prim, caller);
		if (s) {
			add(&s->calls, 1);
			add(&s->total_ns, ns);
			if (bytes)
				add(&s->bytes, bytes);
		}
	}
}

static void record(enum bcsmpi_prim prim, uint64_t ns, uint64_t bytes,
		   const void *caller)
{
	struct bcs_mpi_prim *p = &file.prims[prim];
	unsigned int on;
	uint64_t off;

	/* @calls first: a reader may see it ahead of @timed, not behind. */
	add(&p->calls, 1);
	add(&p->timed, 1);
	bound(&p->min_ns, ns, 1);
	bound(&p->max_ns, ns, 0);
	add(&p->total_ns, ns);
	if (bytes)
		add(&p->bytes, bytes);
	on = __atomic_load_n(&dist_on[prim], __ATOMIC_RELAXED);
	if (!on)
		return;
	if (on & EXTRA_ON)
		extra(prim, ns, bytes, caller);
	if (!(on & DIST_ON))
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

	record(BCSMPI_COMP, t - last, 0, NULL);
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
		  uint64_t bytes, const void *caller)
{
	uint64_t t;

	bcsmpi_depth--;
	if (!t0)
		return;
	t = bcsmpi_now();
	record(prim, t - t0, bytes, caller);
	bcsmpi_slice_note(prim, t0, t, bytes);
	if (blocking) {
		record(BCSMPI_COMM, t - t0, 0, NULL);
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
	regions = NULL;
	rprims = NULL;
	sites = NULL;
	cur_region = -1;
	region_depth = 0;
	bcsmpi_slices_stop(1);
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
		dist_sel[i] = sel.dist[i] ? DIST_ON : 0;
	}
	flags_update();
	if (restart)
		__atomic_store_n(&file.hdr->sub_bits, sub, __ATOMIC_RELEASE);
	ctl_on = !sel.off;
	on_update();
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

/*
 * The job's report (BCS_MPI_REPORT, on unless 0): every rank that
 * returned from MPI_Init here sends its statistics to rank 0 in
 * MPI_Finalize, whether its file could be made or not.
 */
static int report_on;
static char report_dir[PATH_MAX];

/* Environment variable @name: 1 for "1", 0 for unset, "" or "0". */
static int env_flag(const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v || !strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "1"))
		return 1;
	fprintf(stderr, "libbcsmpi: %s is not 0 or 1; taken as 0\n", name);
	return 0;
}

/* @name sanitized into @out: [A-Za-z0-9_.-] kept, others '_'. */
static void region_name(char *out, size_t size, const char *name)
{
	size_t i;

	for (i = 0; i + 1 < size && name[i]; i++)
		out[i] = (name[i] >= 'a' && name[i] <= 'z') ||
			 (name[i] >= 'A' && name[i] <= 'Z') ||
			 (name[i] >= '0' && name[i] <= '9') ||
			 name[i] == '_' || name[i] == '.' || name[i] == '-' ?
			 name[i] : '_';
	out[i] = 0;
}

/* Say @msg once per @flag. */
static void once(int *flag, const char *msg)
{
	if (!*flag) {
		*flag = 1;
		fprintf(stderr, "libbcsmpi: %s\n", msg);
	}
}

/* Leave the region on the stack at @k and the ones inside it. */
static void region_pop(int k, uint64_t now)
{
	struct bcs_mpi_region *r;

	while (region_depth > k) {
		r = &regions[region_stack[--region_depth]];
		if (r->inside && !--r->inside)
			add(&r->time_ns, now - r->entered_ns);
	}
	cur_region = region_depth ? region_stack[region_depth - 1] : -1;
}

/* Enter (@level 1) or leave (-1) region @name. */
static void region(int level, const char *name)
{
	static int full, deep, unknown;
	char n[BCS_MPI_NAME_LEN];
	uint64_t now = bcsmpi_now();
	unsigned int i, nr = file.hdr->nr_regions;
	int k;

	if (!name) {
		once(&unknown, "MPI_Pcontrol(1 or -1) without a region's "
		     "name; ignored");
		return;
	}
	region_name(n, sizeof(n), name);
	if (level < 0) {
		for (k = region_depth - 1; k >= 0; k--)
			if (!strcmp(regions[region_stack[k]].name, n))
				break;
		if (k < 0)
			once(&unknown, "MPI_Pcontrol(-1) of a region not "
			     "entered; ignored");
		else
			region_pop(k, now);
		return;
	}
	for (i = 0; i < nr && regions[i].name[0]; i++)
		if (!strcmp(regions[i].name, n))
			break;
	if (i == nr) {
		once(&full, "more regions than a file holds (16); the "
		     "others not counted");
		return;
	}
	if (region_depth == REGION_DEPTH) {
		once(&deep, "regions nested more than 16 deep; the inner "
		     "ones not counted");
		return;
	}
	if (!regions[i].name[0])
		memcpy(regions[i].name, n, sizeof(n));
	add(&regions[i].entries, 1);
	if (!regions[i].inside++)
		regions[i].entered_ns = now;
	region_stack[region_depth++] = (int)i;
	cur_region = (int)i;
}

void bcsmpi_pcontrol(int level, const char *name)
{
	uint64_t now;

	if (!__atomic_load_n(&bcsmpi_started, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&control_lock);
	now = bcsmpi_now();
	if (!level && pc_on) {
		/* The computation so far is counted, the pause is not. */
		if (ctl_on)
			computation(now);
		paused_at = now;
		pc_on = 0;
	} else if (level && !pc_on) {
		add(&file.hdr->paused_ns, now - paused_at);
		__atomic_store_n(&last_ns, now, __ATOMIC_RELAXED);
		pc_on = 1;
	}
	file.hdr->pcontrol = level;
	if (bcsmpi_regions && (level == 1 || level == -1)) {
		region(level, name);
		flags_update();
	}
	on_update();
	pthread_mutex_unlock(&control_lock);
}

void bcsmpi_start(enum bcsmpi_prim prim, uint64_t t0, const char *mpi)
{
	struct bcsmpi_select sel;
	struct bcsmpi_where w = { .mpi = mpi };
	const char *job = getenv("BCS_JOB");
	char err[PATH_MAX + 128];
	static char jobdir[PATH_MAX];
	struct timespec rt;
	unsigned int i;
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
	sel.sites = env_flag("BCS_MPI_SITES");
	/* The same on every rank: the report is a collective at the end. */
	report_on = !getenv("BCS_MPI_REPORT") || env_flag("BCS_MPI_REPORT");
	bcsmpi_regions = env_flag("BCS_MPI_REGIONS");
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
		snprintf(report_dir, sizeof(report_dir), "%s", jobdir);
		control_start(w.dir, w.job, own, &sel);
	}
	if (!*w.job)
		snprintf(report_dir, sizeof(report_dir), "%s", w.dir);
	sel.slices_bytes = bcsmpi_slices_bytes(&sel.nr_slices, &sel.nr_calls);
	if (bcsmpi_statfile_create(&file, &sel, &w, control != NULL, err,
				   sizeof(err))) {
		say(err);
		control_stop();
		return;
	}
	for (i = 0; i < BCSMPI_NR_PRIMS; i++)
		dist_sel[i] = sel.dist[i] ? DIST_ON : 0;
	regions = (void *)((char *)file.hdr + file.hdr->region_off);
	rprims = (void *)(regions + file.hdr->nr_regions);
	if (file.hdr->site_off)
		sites = (void *)((char *)file.hdr + file.hdr->site_off);
	if (file.hdr->slices_off)
		bcsmpi_slices_start((void *)((char *)file.hdr +
					     file.hdr->slices_off),
				    sel.nr_slices, sel.nr_calls);
	file.hdr->pcontrol = 1;
	flags_update();
	bcsmpi_prims = file.prims;
	t = bcsmpi_now();
	record(prim, t - t0, 0, NULL);
	clock_gettime(CLOCK_REALTIME, &rt);
	file.hdr->start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ULL +
				      (uint64_t)rt.tv_nsec;
	t = bcsmpi_now();
	file.hdr->init_ns = t;
	last_ns = t;
	__atomic_store_n(&bcsmpi_started, 1, __ATOMIC_RELAXED);
	if (control)
		bcsmpi_generation = &control->generation;
	ctl_on = !sel.off;
	on_update();
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
	/* The regions still entered end here, and so does a pause. */
	pthread_mutex_lock(&control_lock);
	region_pop(0, t);
	flags_update();
	if (!pc_on) {
		add(&file.hdr->paused_ns, t - paused_at);
		pc_on = 1;
	} else {
		computation(t);
	}
	pthread_mutex_unlock(&control_lock);
	__atomic_store_n(&file.hdr->finalize_ns, t, __ATOMIC_RELAXED);
	return t;
}

void bcsmpi_finalize_leave(uint64_t t0)
{
	record(BCSMPI_Finalize, bcsmpi_now() - t0, 0, NULL);
	__atomic_or_fetch(&file.hdr->flags, BCS_MPI_COMPLETE,
			  __ATOMIC_RELEASE);
	__atomic_store_n(&bcsmpi_started, 0, __ATOMIC_RELAXED);
	regions = NULL;
	rprims = NULL;
	sites = NULL;
	bcsmpi_slices_stop(0);
	bcsmpi_statfile_close(&file);
	control_stop();
}

/* The bytes of this rank's file that the report needs: up to the sites. */
static size_t report_bytes(void)
{
	const struct bcs_mpi_file_header *h = file.hdr;

	if (!h)
		return 0;
	if (h->site_off)
		return h->site_off + (size_t)h->nr_sites * h->site_size;
	return h->region_off + (size_t)h->nr_regions *
	       (h->region_size + h->nr_prims * sizeof(struct bcs_mpi_rprim));
}

void *bcsmpi_report_gather(size_t *len)
{
	int me, n, k, ok = 1, mine = (int)report_bytes();
	int *lens = NULL, *displs = NULL;
	size_t total = 0;
	char *buf = NULL;

	*len = 0;
	if (!report_on || PMPI_Comm_rank(MPI_COMM_WORLD, &me) ||
	    PMPI_Comm_size(MPI_COMM_WORLD, &n))
		return NULL;
	if (!me) {
		lens = calloc((size_t)n, sizeof(*lens));
		displs = calloc((size_t)n, sizeof(*displs));
		ok = lens && displs;
	}
	/* Whether rank 0 can take them, then their sizes, then them. */
	if (PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD) || !ok)
		goto out;
	if (PMPI_Gather(&mine, 1, MPI_INT, lens, 1, MPI_INT, 0,
			MPI_COMM_WORLD))
		goto out;
	if (!me) {
		for (k = 0; k < n; k++) {
			displs[k] = (int)total;
			total += (size_t)lens[k];
		}
		ok = total < INT32_MAX && (buf = malloc(total ? total : 1));
	}
	if (PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD) || !ok ||
	    PMPI_Gatherv(file.hdr, mine, MPI_BYTE, buf, lens, displs, MPI_BYTE,
			 0, MPI_COMM_WORLD)) {
		free(buf);
		buf = NULL;
		goto out;
	}
	if (!me) {
		/* Each as "rank bytes" (int) and its bytes, for the writer. */
		char *packed = malloc(total + (size_t)n * sizeof(int));
		size_t at = 0;

		if (packed)
			for (k = 0; k < n; k++) {
				memcpy(packed + at, &lens[k], sizeof(int));
				at += sizeof(int);
				memcpy(packed + at, buf + displs[k],
				       (size_t)lens[k]);
				at += (size_t)lens[k];
			}
		free(buf);
		buf = packed;
		*len = packed ? at : 0;
	}
out:
	free(lens);
	free(displs);
	return buf;
}

void bcsmpi_report_write(void *data, size_t len)
{
	struct bcs_mpi_stats *st;
	struct bcs_mpi_file_header *h;
	struct bcs_mpi_prim *p;
	char path[PATH_MAX], err[PATH_MAX + 128], host[64] = "";
	size_t at = 0;
	int n = 0, k, m, fd, r;
	uint32_t i;
	FILE *f;

	if (!data)
		return;
	st = calloc(len / sizeof(int) + 1, sizeof(*st));
	if (!st)
		goto out;
	while (len - at >= sizeof(int)) {
		memcpy(&m, (char *)data + at, sizeof(int));
		at += sizeof(int);
		if (m < 0 || (size_t)m > len - at)
			break;
		if (m >= (int)sizeof(*h)) {
			h = malloc((size_t)m);
			if (!h)
				break;
			memcpy(h, (char *)data + at, (size_t)m);
			/* What the file will be once this MPI_Finalize ends. */
			h->flags |= BCS_MPI_SUMMARY | BCS_MPI_COMPLETE;
			h->file_size = (uint64_t)m;
			h->slices_off = 0;
			p = (void *)((char *)h + h->prim_off);
			for (i = 0; h->prim_off < (uint64_t)m &&
			     i < h->nr_prims &&
			     (char *)(p + i + 1) <= (char *)h + m; i++)
				p[i].lat_hist_off = p[i].size_hist_off = 0;
			if (!bcs_mpi_stats_parse(h, (size_t)m, "a rank", &st[n],
						 err, sizeof(err)))
				n++;
		}
		at += (size_t)m;
	}
	if (!n || !*report_dir)
		goto out;
	gethostname(host, sizeof(host) - 1);
	if (*st[0].hdr->job)
		r = snprintf(path, sizeof(path), "%s/%s.report", report_dir,
			     st[0].hdr->job);
	else
		r = snprintf(path, sizeof(path), "%s/nojob.%s.%d.report",
			     report_dir, host, (int)getpid());
	if (r < 0 || (size_t)r >= sizeof(path))
		goto out;
	/* Never through a link, never over a file that is there. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		fprintf(stderr, "libbcsmpi: cannot create %s: %s; no report\n",
			path, strerror(errno));
		goto out;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		goto out;
	}
	bcsmpi_report(f, st, n, 1);
	if (fclose(f))
		fprintf(stderr, "libbcsmpi: cannot write %s: %s\n", path,
			strerror(errno));
out:
	for (k = 0; st && k < n; k++)
		bcs_mpi_stats_free(&st[k]);
	free(st);
	free(data);
}

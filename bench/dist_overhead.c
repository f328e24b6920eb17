// SPDX-License-Identifier: GPL-2.0
/*
 * dist_overhead - what bcs.ko's per-task distributions cost the programs
 * they watch (BCS-MPI's Table 3: under 0.5 %).
 *
 * The workload is barrier's (bench/barrier.c) on one machine: N processes
 * (-n, 4) repeat a fixed amount of computation (work.h's loop, calibrated
 * to a grain in microseconds) and then a barrier through rank 0, here over
 * pipes: every rank writes a byte to rank 0 and blocks reading its answer.
 * Variants, each with its own processes:
 *   barrier G us   for each grain G of -g (1000 and 100);
 *   sleepy G us    the finest grain, then a sleep of -s us (200) before
 *                  the barrier: a sleep-heavy program, twice the events;
 *   ping-pong      two processes and no computation: one byte back and
 *                  forth over two pipes, every step a context switch;
 *                  the worst case, and the cost of the probes per switch.
 * The processes belong to one bcs job (mode as loaded: nothing gang
 * switches them) and run rounds of a fixed number of iterations, chosen by
 * a warm-up round so that a round takes about -t ms.  Configurations:
 *   none   no bcs job: the job destroyed, the processes detached;
 *   off    attached to the job, no statistics (the probes unregistered:
 *          bench/run-in-guest.sh loads bcs.ko with dist_linger_ms=0);
 *   other  as off, but every metric enabled for another job (one process
 *          that sleeps throughout): the probes run for every switch and
 *          find these tasks untracked, the cost the issue bounds to a few
 *          instructions;
 *   on/4   every metric enabled for the whole job at the default
 *          resolution (BCS_HIST_SUB_BITS_DEFAULT: 16 buckets per power of
 *          two);
 *   on/7   the same at the finest (BCS_HIST_SUB_BITS_MAX: 128).
 * Every round runs each configuration once, in an order rotated from
 * round to round, so that drifts of the machine spread over all of them;
 * per configuration the table gives the median time per iteration and,
 * per round, the time against "off" of the same round: the median of
 * those ratios and their spread (min..max).  Context switches of the round
 * come from /proc/stat; the difference to "off" divided by them is what
 * the probes cost per switch (ns/switch).
 *
 * The benchmark reports numbers and never fails on them; it fails if the
 * statistics were not what a configuration says: after an "on" round
 * every process must be tracked (BCS_DIST_NEXT finds exactly the N),
 * since before the round began (tracked_ns at least the round's time),
 * with histograms of every metric at the resolution asked for and bursts
 * and sleeps counted; before an "off" or "none" round no task may be
 * tracked, and during an "other" round only the other job's process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/bcs_hist.h>

#include "bench_util.h"
#include "work.h"

#define MAX_PROCS	64
#define MAX_GRAINS	8
#define MAX_ROUNDS	1000
#define MIN_ITERS	10
#define SETTLE_NS	(50 * NSEC_PER_MSEC)
/* Spread of the start of a round: a few periods of the scheduler tick. */
#define PHASE_NS	(16 * NSEC_PER_MSEC)

enum config { C_NONE, C_OFF, C_OTHER, C_ON_DEF, C_ON_MAX, NR_CONFIGS };

static const char *const config_name[NR_CONFIGS] = {
	"none", "off", "other", "on/4", "on/7",
};

static const unsigned int config_bits[NR_CONFIGS] = {
	0, 0, BCS_HIST_SUB_BITS_DEFAULT, BCS_HIST_SUB_BITS_DEFAULT,
	BCS_HIST_SUB_BITS_MAX,
};

struct opts {
	unsigned int procs;
	unsigned int rounds;
	uint64_t round_ns;
	uint64_t grains_ns[MAX_GRAINS];
	unsigned int nr_grains;
	uint64_t sleep_ns;
	bool pingpong;
	bool verbose;
};

static struct opts opt = {
	.procs = 4,
	.rounds = 10,
	.round_ns = 500 * NSEC_PER_MSEC,
	.grains_ns = { 1000 * NSEC_PER_USEC, 100 * NSEC_PER_USEC },
	.nr_grains = 2,
	.sleep_ns = 200 * NSEC_PER_USEC,
	.pingpong = true,
};

/* Parameters of the next round, and its result; shared with the ranks. */
struct shared {
	uint64_t iters;
	uint64_t work;			/* bench_work() units per iteration */
	uint64_t sleep_ns;
	uint64_t elapsed_ns;		/* written by rank 0 */
};

struct workload {
	char name[48];
	unsigned int n;			/* processes */
	uint64_t work;
	uint64_t sleep_ns;
	pid_t pids[MAX_PROCS];
	int go[MAX_PROCS];		/* controller -> rank: write end */
	int done;			/* rank 0 -> controller: read end */
	uint32_t job;			/* 0: none */
	uint64_t iters;
	/* Per configuration and round. */
	double t[NR_CONFIGS][MAX_ROUNDS];	/* ns per iteration */
	double ctxt[NR_CONFIGS][MAX_ROUNDS];	/* switches per iteration */
};

static int bcs_fd = -1;
static struct shared *sh;
/* The other job of "other": one process that sleeps. */
static pid_t other_pid;
static uint32_t other_job;
static double unit_ns;			/* one bench_work() unit */

static void check(int err, const char *what)
{
	if (err) {
		errno = -err;
		bench_die("%s", what);
	}
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));

/* The statistics were not what the configuration says: no number. */
static void fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "dist_overhead: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Ranks */

static void xfer(int fd, bool out)
{
	char c = 'b';
	ssize_t n;

	do {
		n = out ? write(fd, &c, 1) : read(fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(1);
}

/* One barrier through rank 0, as barrier.c's. */
static void barrier(unsigned int rank, unsigned int n, int (*up)[2],
		    int (*down)[2])
{
	unsigned int r;

	if (rank) {
		xfer(up[rank][1], true);
		xfer(down[rank][0], false);
		return;
	}
	for (r = 1; r < n; r++)
		xfer(up[r][0], false);
	for (r = 1; r < n; r++)
		xfer(down[r][1], true);
}

static void __attribute__((noreturn))
rank_main(unsigned int rank, unsigned int n, int go, int done, int (*up)[2],
	  int (*down)[2])
{
	uint64_t it, t0;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
	for (;;) {
		if (read(go, &c, 1) != 1 || c != 'r')
			_exit(0);
		/* One barrier to start together. */
		barrier(rank, n, up, down);
		t0 = bench_now();
		for (it = 0; it < sh->iters; it++) {
			if (sh->work)
				bench_work(sh->work);
			if (sh->sleep_ns)
				bench_sleep_ns(sh->sleep_ns);
			barrier(rank, n, up, down);
		}
		if (!rank) {
			sh->elapsed_ns = bench_now() - t0;
			xfer(done, true);
		}
	}
}

static void workload_start(struct workload *w)
{
	int up[MAX_PROCS][2], down[MAX_PROCS][2], go[2], done[2];
	unsigned int r;

	if (pipe2(done, O_CLOEXEC))
		bench_die("pipe");
	for (r = 0; r < w->n; r++)
		if (pipe2(up[r], O_CLOEXEC) || pipe2(down[r], O_CLOEXEC))
			bench_die("pipe");
	for (r = 0; r < w->n; r++) {
		if (pipe2(go, O_CLOEXEC))
			bench_die("pipe");
		w->pids[r] = fork();
		if (w->pids[r] < 0)
			bench_die("fork");
		if (!w->pids[r])
			rank_main(r, w->n, go[0], done[1], up, down);
		close(go[0]);
		w->go[r] = go[1];
	}
	for (r = 0; r < w->n; r++) {
		close(up[r][0]);
		close(up[r][1]);
		close(down[r][0]);
		close(down[r][1]);
	}
	close(done[1]);
	w->done = done[0];
}

static void workload_stop(struct workload *w)
{
	unsigned int r;

	for (r = 0; r < w->n; r++) {
		close(w->go[r]);
		kill(w->pids[r], SIGKILL);
		waitpid(w->pids[r], NULL, 0);
	}
	close(w->done);
}

static unsigned long long ctxt_switches(void)
{
	unsigned long long v = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * One round of @iters iterations: the time per iteration, and the context
 * switches of the machine per iteration in *@ctxt.
 */
static double workload_round(struct workload *w, uint64_t iters,
			     double *ctxt)
{
	/* Bounded: a round that takes 50 times its share has gone wrong. */
	int tmo = (int)(60 * 1000 + 50 * opt.round_ns / NSEC_PER_MSEC);
	struct pollfd pfd = { .fd = w->done, .events = POLLIN };
	static uint64_t phase = 1;
	unsigned long long c0, c1;
	unsigned int r;
	char c = 'r';

	sh->iters = iters;
	sh->work = w->work;
	sh->sleep_ns = w->sleep_ns;
	sh->elapsed_ns = 0;
	/*
	 * Let the work that the last change left behind (RCU callbacks,
	 * freeing of trackers) be done before the round: idle time, which
	 * the instruction-counted bed skips.  A pseudo-random part moves the
	 * round's start against the scheduler tick, so that no
	 * configuration starts its rounds at the same phase every time (the
	 * bed is deterministic; this did not change its numbers, though).
	 */
	phase = phase * 6364136223846793005ULL + 1442695040888963407ULL;
	bench_sleep_ns(SETTLE_NS + (phase >> 33) % PHASE_NS);
	c0 = ctxt_switches();
	for (r = 0; r < w->n; r++)
		if (write(w->go[r], &c, 1) != 1)
			bench_die("write");
	if (poll(&pfd, 1, tmo) != 1 || read(w->done, &c, 1) != 1) {
		fprintf(stderr, "%s: a round did not end within %d ms\n",
			w->name, tmo);
		exit(1);
	}
	c1 = ctxt_switches();
	*ctxt = (double)(c1 - c0) / (double)iters;
	return (double)sh->elapsed_ns / (double)iters;
}

/* Configurations */

static void job_attach(struct workload *w)
{
	unsigned int r;
	uint32_t nr;

	if (w->job)
		return;
	check(bench_job_create(bcs_fd, 0, &w->job), "BCS_IOC_JOB_CREATE");
	for (r = 0; r < w->n; r++) {
		check(bench_attach(bcs_fd, w->job, w->pids[r], &nr),
		      "BCS_IOC_ATTACH");
		if (nr != 1)
			fail("%s: rank %u attached %u tasks, not 1", w->name,
			     r, nr);
	}
}

static void job_destroy(struct workload *w)
{
	if (!w->job)
		return;
	check(bench_job_destroy(bcs_fd, w->job), "BCS_IOC_JOB_DESTROY");
	w->job = 0;
}

/* No task of the job may be tracked. */
static void verify_off(const struct workload *w, enum config c)
{
	struct bcs_dist_read rd;
	int err;

	if (!w->job)
		return;
	err = bench_dist_read(bcs_fd, w->job, 0, BCS_DIST_BURST,
			      BCS_DIST_NEXT, NULL, 0, &rd);
	if (!err)
		fail("%s, %s: task %d is tracked", w->name, config_name[c],
		     rd.pid);
	if (err != -ESRCH && err != -ENOENT)
		check(err, "BCS_IOC_DIST_READ");
}

static bool is_rank(const struct workload *w, pid_t pid)
{
	unsigned int r;

	for (r = 0; r < w->n; r++)
		if (w->pids[r] == pid)
			return true;
	return false;
}

/* The histogram of @m of @pid: its header, checked against @c. */
static void read_hist(const struct workload *w, enum config c, pid_t pid,
		      uint32_t m, struct bcs_hist_header *hdr)
{
	struct bcs_dist_read rd;
	unsigned int try;
	void *buf;
	int err;

	/*
	 * The ranks may still be on their way to the next round's start
	 * when this reads: a histogram that grew meanwhile gets -ENOSPC.
	 */
	for (try = 0;; try++) {
		check(bench_dist_read(bcs_fd, w->job, pid, m, 0, NULL, 0,
				      &rd), "BCS_IOC_DIST_READ size");
		if (rd.buf_size < sizeof(*hdr))
			fail("%s, %s: task %d has no histogram of metric %u",
			     w->name, config_name[c], pid, m);
		buf = malloc(rd.buf_size);
		if (!buf)
			bench_die("malloc");
		err = bench_dist_read(bcs_fd, w->job, pid, m, 0, buf,
				      rd.buf_size, &rd);
		if (!err)
			break;
		free(buf);
		if (err != -ENOSPC || try == 100)
			check(err, "BCS_IOC_DIST_READ");
		bench_sleep_ns(NSEC_PER_MSEC);
	}
	memcpy(hdr, buf, sizeof(*hdr));
	free(buf);
	if (hdr->magic != BCS_HIST_MAGIC || hdr->sub_bits != config_bits[c])
		fail("%s, %s: task %d, metric %u: histogram of resolution "
		     "%u (magic %#x)", w->name, config_name[c], pid, m,
		     hdr->sub_bits, hdr->magic);
}

/*
 * After an "on" round of @elapsed ns: every rank tracked for the whole
 * round, histograms of every metric at the resolution of @c, bursts and
 * sleeps recorded.
 */
static void verify_on(const struct workload *w, enum config c,
		      uint64_t elapsed)
{
	uint64_t bursts = 0, hist_bursts = 0, sleeps = 0;
	struct bcs_hist_header hdr;
	struct bcs_dist_read rd;
	unsigned int found = 0;
	pid_t pid = 0;
	uint32_t m;
	int err;

	for (;;) {
		err = bench_dist_read(bcs_fd, w->job, pid, BCS_DIST_BURST,
				      BCS_DIST_NEXT, NULL, 0, &rd);
		if (err == -ESRCH)
			break;
		check(err, "BCS_IOC_DIST_READ next");
		pid = rd.pid;
		if (!is_rank(w, pid))
			fail("%s, %s: task %d tracked, not a rank", w->name,
			     config_name[c], pid);
		found++;
		if (!(rd.totals.flags & BCS_DIST_TRACKING) ||
		    rd.totals.tracked_ns < elapsed || !rd.totals.run_ns)
			fail("%s, %s: task %d: flags %#x, tracked %llu ns of "
			     "a round of %llu ns, running %llu ns", w->name,
			     config_name[c], pid, rd.totals.flags,
			     (unsigned long long)rd.totals.tracked_ns,
			     (unsigned long long)elapsed,
			     (unsigned long long)rd.totals.run_ns);
		bursts += rd.totals.bursts;
		for (m = 0; m < BCS_DIST_METRICS; m++) {
			read_hist(w, c, pid, m, &hdr);
			if (m == BCS_DIST_BURST)
				hist_bursts += hdr.count;
			else if (m == BCS_DIST_BLOCKED)
				sleeps += hdr.count;
		}
	}
	if (found != w->n)
		fail("%s, %s: %u tasks tracked, not %u", w->name,
		     config_name[c], found, w->n);
	if (!bursts || !hist_bursts || !sleeps)
		fail("%s, %s: %llu bursts (%llu in the histograms), %llu "
		     "sleeps recorded", w->name, config_name[c],
		     (unsigned long long)bursts,
		     (unsigned long long)hist_bursts,
		     (unsigned long long)sleeps);
}

/* "other": the other job's process tracked for the round, no rank. */
static void verify_other(const struct workload *w, uint64_t elapsed)
{
	struct bcs_dist_read rd;

	check(bench_dist_read(bcs_fd, other_job, other_pid, BCS_DIST_BURST,
			      0, NULL, 0, &rd), "BCS_IOC_DIST_READ other");
	if (!(rd.totals.flags & BCS_DIST_TRACKING) ||
	    rd.totals.tracked_ns < elapsed)
		fail("%s, other: the other job's task: flags %#x, tracked "
		     "%llu ns of a round of %llu ns", w->name, rd.totals.flags,
		     (unsigned long long)rd.totals.tracked_ns,
		     (unsigned long long)elapsed);
	verify_off(w, C_OTHER);
}

static void other_start(void)
{
	uint32_t nr;

	other_pid = fork();
	if (other_pid < 0)
		bench_die("fork");
	if (!other_pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(0);
		for (;;)
			pause();
	}
	check(bench_job_create(bcs_fd, 0, &other_job), "BCS_IOC_JOB_CREATE");
	check(bench_attach(bcs_fd, other_job, other_pid, &nr),
	      "BCS_IOC_ATTACH");
}

static void other_stop(void)
{
	bench_job_destroy(bcs_fd, other_job);
	kill(other_pid, SIGKILL);
	waitpid(other_pid, NULL, 0);
}

/* Measure configuration @c once: ns per iteration. */
static void run_config(struct workload *w, enum config c, unsigned int round)
{
	double t, ctxt;

	if (c == C_NONE)
		job_destroy(w);
	else
		job_attach(w);
	if (c == C_NONE || c == C_OFF) {
		verify_off(w, c);
		t = workload_round(w, w->iters, &ctxt);
	} else if (c == C_OTHER) {
		check(bench_dist_ctl(bcs_fd, other_job, BCS_DIST_ENABLE,
				     BCS_DIST_ALL, config_bits[c]),
		      "BCS_DIST_ENABLE other");
		verify_off(w, c);
		t = workload_round(w, w->iters, &ctxt);
		verify_other(w, sh->elapsed_ns);
		check(bench_dist_ctl(bcs_fd, other_job, BCS_DIST_DISABLE,
				     BCS_DIST_ALL, 0), "BCS_DIST_DISABLE");
		check(bench_dist_ctl(bcs_fd, other_job, BCS_DIST_RELEASE, 0,
				     0), "BCS_DIST_RELEASE");
	} else {
		check(bench_dist_ctl(bcs_fd, w->job, BCS_DIST_ENABLE,
				     BCS_DIST_ALL, config_bits[c]),
		      "BCS_DIST_ENABLE");
		t = workload_round(w, w->iters, &ctxt);
		verify_on(w, c, sh->elapsed_ns);
		check(bench_dist_ctl(bcs_fd, w->job, BCS_DIST_DISABLE,
				     BCS_DIST_ALL, 0), "BCS_DIST_DISABLE");
		check(bench_dist_ctl(bcs_fd, w->job, BCS_DIST_RELEASE, 0, 0),
		      "BCS_DIST_RELEASE");
	}
	w->t[c][round] = t;
	w->ctxt[c][round] = ctxt;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median (the mean of the middle two for an even count), min and max. */
static double median(const double *v, unsigned int n, double *lo,
		     double *hi)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	if (lo)
		*lo = s[0];
	if (hi)
		*hi = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The worst median overhead of "on" against "off" over the barriers. */
static double worst_pct;
static double pingpong_ns[NR_CONFIGS];

static void report(struct workload *w, bool is_pingpong)
{
	unsigned int n = opt.rounds, c, i;
	double ratio[MAX_ROUNDS], cost[MAX_ROUNDS];

	for (c = 0; c < NR_CONFIGS; c++) {
		double med, lo, hi, pct, sw, ns;
		char vs[40] = "-", per[16] = "-";

		med = median(w->t[c], n, NULL, NULL);
		sw = median(w->ctxt[c], n, NULL, NULL);
		if (c != C_OFF) {
			for (i = 0; i < n; i++) {
				ratio[i] = 100.0 * (w->t[c][i] /
						    w->t[C_OFF][i] - 1.0);
				cost[i] = w->ctxt[c][i] > 0 ?
					  (w->t[c][i] - w->t[C_OFF][i]) /
					  w->ctxt[c][i] : 0;
			}
			ns = median(cost, n, NULL, NULL);
			pct = median(ratio, n, &lo, &hi);
			snprintf(vs, sizeof(vs), "%+7.3f %+7.3f..%+.3f",
				 pct, lo, hi);
			snprintf(per, sizeof(per), "%+.0f", ns);
			if (c >= C_ON_DEF && !is_pingpong && pct > worst_pct)
				worst_pct = pct;
			if (is_pingpong)
				pingpong_ns[c] = ns;
		}
		printf("  %-20s %-5s %7llu %11.1f %-30s %9.1f %9s\n",
		       c == 0 ? w->name : "", config_name[c],
		       (unsigned long long)w->iters, med / 1e3, vs, sw, per);
	}
}

static void run_workload(struct workload *w, bool is_pingpong)
{
	double per_iter, ctxt, est;
	unsigned int round, k;

	workload_start(w);
	job_attach(w);
	/* Warm-up in "off", and the iterations that fill a round. */
	est = (double)w->n * ((double)w->work * unit_ns +
			      (double)w->sleep_ns) / bench_nr_cpus() + 50e3;
	w->iters = (uint64_t)((double)opt.round_ns / est / 4);
	if (w->iters < MIN_ITERS)
		w->iters = MIN_ITERS;
	per_iter = workload_round(w, w->iters, &ctxt);
	w->iters = (uint64_t)((double)opt.round_ns / per_iter);
	if (w->iters < MIN_ITERS)
		w->iters = MIN_ITERS;
	if (opt.verbose)
		printf("%s: warm-up %.1f us per iteration, %.1f switches; "
		       "%llu iterations a round\n", w->name, per_iter / 1e3,
		       ctxt, (unsigned long long)w->iters);
	for (round = 0; round < opt.rounds; round++) {
		for (k = 0; k < NR_CONFIGS; k++)
			run_config(w, (k + round) % NR_CONFIGS, round);
		if (opt.verbose) {
			printf("  round %2u:", round);
			for (k = 0; k < NR_CONFIGS; k++)
				printf(" %s %.2f", config_name[k],
				       w->t[k][round] / 1e3);
			printf(" us/iteration\n");
		}
	}
	job_destroy(w);
	workload_stop(w);
	report(w, is_pingpong);
}

/* Time of one bench_work() unit: the fastest of a few runs. */
static double calibrate(void)
{
	double best = 0;
	unsigned int i;
	uint64_t t;

	for (i = 0; i < 5; i++) {
		t = bench_now();
		bench_work(100);
		t = bench_now() - t;
		if (!i || (double)t < best)
			best = (double)t;
	}
	return best / 100;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n PROCS] [-r ROUNDS] [-t ROUND_MS] "
		"[-g GRAIN_US[,GRAIN_US...]] [-s SLEEP_US] [-P] [-v]\n"
		"  -n  processes of the barrier workloads (4)\n"
		"  -r  rounds, each configuration once a round (10)\n"
		"  -t  length of a round in ms (500)\n"
		"  -g  grains of computation between barriers, us "
		"(1000,100)\n"
		"  -s  sleep of the sleep-heavy variant, us, after the "
		"finest grain\n"
		"      (200; 0 leaves the variant out)\n"
		"  -P  leave out the ping-pong of two processes\n"
		"  -v  print every round\n"
		"Configurations: none (no bcs job), off (job, no statistics),"
		" other (statistics\nof another job only), on/4 and on/7 "
		"(every metric at 16 and 128 buckets per\npower of two).  "
		"Fails only if the statistics were not on (or not off) as\n"
		"the configuration says.\n", prog);
	exit(2);
}

static void parse_grains(const char *arg, const char *prog)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	if (!copy)
		bench_die("strdup");
	opt.nr_grains = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long us = strtoul(tok, NULL, 0);

		if (!us || us > 1000000 || opt.nr_grains == MAX_GRAINS)
			usage(prog);
		opt.grains_ns[opt.nr_grains++] = us * NSEC_PER_USEC;
	}
	free(copy);
	if (!opt.nr_grains)
		usage(prog);
}

static unsigned long parse_num(const char *arg, unsigned long min,
			       unsigned long max, const char *prog)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || *end || end == arg || v < min || v > max)
		usage(prog);
	return v;
}

static struct workload *new_workload(unsigned int n, uint64_t grain_ns,
				     uint64_t sleep_ns, const char *name)
{
	struct workload *w = calloc(1, sizeof(*w));

	if (!w)
		bench_die("calloc");
	w->n = n;
	w->work = grain_ns ? (uint64_t)((double)grain_ns / unit_ns + 0.5) : 0;
	if (grain_ns && !w->work)
		w->work = 1;
	w->sleep_ns = sleep_ns;
	snprintf(w->name, sizeof(w->name), "%s", name);
	return w;
}

int main(int argc, char **argv)
{
	struct workload *w;
	uint64_t finest;
	unsigned int i;
	char name[48];
	int c;

	while ((c = getopt(argc, argv, "n:r:t:g:s:Pvh")) != -1) {
		switch (c) {
		case 'n':
			opt.procs = parse_num(optarg, 2, MAX_PROCS, argv[0]);
			break;
		case 'r':
			opt.rounds = parse_num(optarg, 1, MAX_ROUNDS, argv[0]);
			break;
		case 't':
			opt.round_ns = parse_num(optarg, 1, 600000, argv[0]) *
				       NSEC_PER_MSEC;
			break;
		case 'g':
			parse_grains(optarg, argv[0]);
			break;
		case 's':
			opt.sleep_ns = parse_num(optarg, 0, 1000000,
						 argv[0]) * NSEC_PER_USEC;
			break;
		case 'P':
			opt.pingpong = false;
			break;
		case 'v':
			opt.verbose = true;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);

	bcs_fd = open(BCS_DEV, O_RDWR | O_CLOEXEC);
	if (bcs_fd < 0)
		bench_die("%s", BCS_DEV);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		bench_die("mmap");
	unit_ns = calibrate();
	other_start();

	printf("dist_overhead: %u online CPUs, %u rounds of about %.0f ms, "
	       "work unit %.2f us\n", bench_nr_cpus(), opt.rounds,
	       (double)opt.round_ns / 1e6, unit_ns / 1e3);
	printf("configurations: none = no bcs job; off = bcs job, no "
	       "statistics; other = off,\nbut every metric on for another "
	       "job (these tasks untracked); on/B = every\nmetric on at 2^B "
	       "buckets per power of two; each once a round, order rotated"
	       "\n");
	printf("vs off: per round (time / time of \"off\" of the same round "
	       "- 1), median and\nmin..max; ns/switch: per round (time - "
	       "time of \"off\") / context switches\n\n");
	printf("  %-20s %-5s %7s %11s %-30s %9s %9s\n", "workload", "conf",
	       "iters", "us/iter", "vs off %: median min..max", "switches",
	       "ns/switch");

	finest = opt.grains_ns[0];
	for (i = 0; i < opt.nr_grains; i++) {
		if (opt.grains_ns[i] < finest)
			finest = opt.grains_ns[i];
		snprintf(name, sizeof(name), "barrier %llu us x%u",
			 (unsigned long long)(opt.grains_ns[i] /
					      NSEC_PER_USEC), opt.procs);
		w = new_workload(opt.procs, opt.grains_ns[i], 0, name);
		run_workload(w, false);
		free(w);
	}
	if (opt.sleep_ns) {
		snprintf(name, sizeof(name), "sleepy %llu+%llu x%u",
			 (unsigned long long)(finest / NSEC_PER_USEC),
			 (unsigned long long)(opt.sleep_ns / NSEC_PER_USEC),
			 opt.procs);
		w = new_workload(opt.procs, finest, opt.sleep_ns, name);
		run_workload(w, false);
		free(w);
	}
	if (opt.pingpong) {
		w = new_workload(2, 0, 0, "ping-pong x2");
		run_workload(w, true);
		free(w);
	}

	printf("\nstatistics checked: every \"on\" round had all its "
	       "processes tracked with every\nmetric at the resolution "
	       "asked; no \"none\", \"off\" or \"other\" round had any, "
	       "and\nevery \"other\" round had the other job's process "
	       "tracked\n");
	if (opt.pingpong)
		printf("probes per context switch (ping-pong, worst case): "
		       "on/4 %+.0f ns, on/7 %+.0f ns;\nuntracked tasks "
		       "(other) %+.0f ns\n", pingpong_ns[C_ON_DEF],
		       pingpong_ns[C_ON_MAX], pingpong_ns[C_OTHER]);
	printf("goal: overhead of every metric on under 0.5 %% on the "
	       "barrier workloads: worst median %+.3f %%, %s (reported, not "
	       "asserted)\n", worst_pct, worst_pct < 0.5 ? "met" : "not met");
	other_stop();
	close(bcs_fd);
	return 0;
}

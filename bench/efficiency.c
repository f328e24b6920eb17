// SPDX-License-Identifier: GPL-2.0
/*
 * efficiency - how much CPU time gang switching in standalone mode costs.
 *
 * A "job" is one process with K threads (K = online CPUs by default) that
 * each count loop iterations into their own counter in shared memory.
 * Iterations are the measure of useful work: whatever the machine spends
 * on switching, parking and waking shows up as iterations not done.  In
 * one run, repeated and interleaved so that drifts of the machine spread
 * over all cases:
 *   alone     job A alone, no bcs: I_alone, the machine's capacity
 *   cfs       A and B together under plain CFS
 *   bcs SLICE A and B as two bcs jobs in rows 0 and 1, standalone mode
 *             with the given slice (10 ms, 1 ms and 500 us by default)
 *   bcsd SLICE  with -b BCSD -c BCSCTL -K KEY, the same driven by a real
 *             bcsd (role both: master and node in one process, on lo):
 *             started for the run with that slice, the jobs made through
 *             it (bcsctl job create --row 0 and 1, the master's map
 *             carried to bcs.ko by its node part), its strobes handed to
 *             bcs.ko over netlink; stopped after the run
 *   ... nodrain  with -D, the same with the module parameter drain_us at 0:
 *             each switch wakes the new row at once instead of when the
 *             old row has parked
 *   sigstop SLICE  the peers of bcs's standalone mode: a gang scheduler in
 *   freezer SLICE  user space, this program's SCHED_FIFO controller, that
 *             at every slice boundary (an absolute clock_nanosleep) holds
 *             the running job and releases the other, with SIGSTOP and
 *             SIGCONT to the job's process, or by writing the
 *             cgroup.freeze files of the jobs' two cgroups; -P leaves
 *             them out
 * Per case: A, B, A+B, (A+B)/I_alone, loss = 100 * (1 - (A+B)/I_alone) and
 * A's share of A+B.  Counters are sampled over a fixed window of T after a
 * warm-up, and scaled to exactly T by the measured length of the window.
 * The ratio of a run is taken against I_alone of its own repetition and
 * the table gives the median over repetitions, because the capacity of a
 * shared or emulated machine drifts more between repetitions than within
 * one.
 *
 * A second table explains the loss: CPU time of the window from /proc/stat
 * (sys includes parking and waking; idle is CPU time nobody used), context
 * switches and rescheduling and function-call IPIs per second from
 * /proc/interrupts, the gang switches made, and the loss divided by them:
 * the machine's time that one gang switch cost (us/switch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_THREADS	256
#define MAX_SLICES	8
#define FIFO_PRIO	50
/* alone, cfs; per slice bcs, bcs nodrain, bcsd, sigstop, freezer. */
#define NR_CASES	(2 + 5 * MAX_SLICES)
#define DRAIN_PARAM	"/sys/module/bcs/parameters/drain_us"

struct slot {
	uint64_t count;
	char pad[56];
};

struct opts {
	unsigned int threads;		/* K */
	uint64_t window_ns;		/* T */
	uint64_t warmup_ns;
	unsigned int reps;
	uint64_t slices[MAX_SLICES];
	unsigned int nr_slices;
	bool nodrain;			/* -D */
	bool peers;			/* not -P */
	const char *bcsd;		/* -b: driven cases */
	const char *bcsctl;		/* -c */
	const char *key;		/* -K */
};

static struct opts opt = {
	.window_ns = 2 * NSEC_PER_SEC,
	.warmup_ns = 300 * NSEC_PER_MSEC,
	.reps = 8,
	.slices = { 10 * NSEC_PER_MSEC, 1 * NSEC_PER_MSEC,
		    500 * NSEC_PER_USEC },
	.nr_slices = 3,
	.peers = true,
};

enum kind { C_ALONE, C_CFS, C_BCS, C_BCSD, C_SIGSTOP, C_FREEZER };

struct bench_case {
	enum kind kind;
	uint64_t slice_ns;
	const char *drain_us;		/* bcs: the parameter for this case */
	const char *why;		/* why the case is not measured */
	char name[40];
	/* Sums over the repetitions. */
	double a, b;
	uint64_t switches, late, missed, cuts;
	double user, sys, idle;		/* percent of CPU time */
	double ctxt, res, cal;		/* per second */
	double secs;			/* measured windows */
	double daemon;			/* bcsd's CPU time in them, s */
	unsigned int runs;
	/* (A+B)/I_alone of each run, in millionths. */
	struct bench_samples ratio;
};

/* System-wide counters: /proc/stat (CPU time in ticks) and /proc/interrupts. */
struct sys_counters {
	unsigned long long user, sys, idle, total;
	unsigned long long ctxt;
	unsigned long long res, cal;	/* rescheduling, function-call IPIs */
};

static int bcs_fd = -1;
static struct slot *slots;		/* K for job A, then K for job B */
static char drain_loaded[32];		/* drain_us as the module had it */

static void set_drain(const char *value)
{
	FILE *f = fopen(DRAIN_PARAM, "w");

	if (!f || fputs(value, f) < 0 || fclose(f)) {
		fprintf(stderr, "%s: %s\n", DRAIN_PARAM, strerror(errno));
		exit(1);
	}
}

/*
 * The user-space gang scheduler of the peer cases: job @cur runs, the
 * other is held; at @next it changes.
 */
struct peer {
	enum kind kind;
	uint64_t slice_ns;
	pid_t pid[2];
	struct bench_cgroup cg[2];	/* freezer */
	unsigned int cur;
	uint64_t next;
	uint64_t switches, missed;
};

static void peer_hold(struct peer *p, unsigned int job, bool hold)
{
	int err;

	if (p->kind == C_SIGSTOP) {
		if (kill(p->pid[job], hold ? SIGSTOP : SIGCONT))
			bench_die("kill");
		return;
	}
	err = bench_cgroup_freeze(&p->cg[job], hold);
	if (err) {
		errno = -err;
		bench_die("cgroup.freeze");
	}
}

/* Hold job B, and switch at every slice boundary from now on. */
static const char *peer_start(struct peer *p, pid_t pa, pid_t pb)
{
	const char *why;
	unsigned int i;

	p->pid[0] = pa;
	p->pid[1] = pb;
	for (i = 0; i < 2; i++) {
		p->cg[i].dir[0] = 0;
		p->cg[i].freeze_fd = p->cg[i].events_fd = -1;
	}
	if (p->kind == C_FREEZER) {
		why = bench_cgroup_create(&p->cg[0], "A", &pa, 1);
		if (!why)
			why = bench_cgroup_create(&p->cg[1], "B", &pb, 1);
		if (why)
			return why;
	}
	p->cur = 0;
	peer_hold(p, 1, true);
	p->next = bench_now() + p->slice_ns;
	return NULL;
}

/* Sleep until @until, switching jobs at the slice boundaries on the way. */
static void peer_run_until(struct peer *p, uint64_t until)
{
	uint64_t now;

	while (p->next <= until) {
		bench_sleep_until(p->next);
		peer_hold(p, p->cur, true);
		p->cur ^= 1;
		peer_hold(p, p->cur, false);
		p->switches++;
		p->next += p->slice_ns;
		/* Boundaries that passed while the controller was late. */
		now = bench_now();
		if (p->next <= now) {
			p->missed += (now - p->next) / p->slice_ns + 1;
			p->next = now + p->slice_ns;
		}
	}
	bench_sleep_until(until);
}

/* Let both jobs run again, so that they can be killed and reaped. */
static void peer_stop(struct peer *p)
{
	if (p->kind == C_SIGSTOP) {
		kill(p->pid[0], SIGCONT);
		kill(p->pid[1], SIGCONT);
	}
	bench_cgroup_close(&p->cg[0]);
	bench_cgroup_close(&p->cg[1]);
}

static void check(int err, const char *what);

/*
 * The driven cases: bcsd (role both) on lo, its control socket and log
 * in /tmp, no tree, no fill (it would move the jobs out of their rows),
 * no dumps.  The lead is 3 ms, or 2.5 slices where that is shorter (it
 * must stay under 4 slices).
 */
#define BCSD_SOCK	"/tmp/efficiency-bcsd.sock"
#define BCSD_LOG	"/tmp/efficiency-bcsd.log"
#define BCSD_WAIT_NS	(30 * NSEC_PER_SEC)

static pid_t bcsd_start(uint64_t slice_ns)
{
	uint64_t slice_us = slice_ns / NSEC_PER_USEC, end;
	uint64_t lead_us = slice_us * 5 / 2 < 3000 ? slice_us * 5 / 2 : 3000;
	char a_key[512], a_slice[64], a_lead[64];
	struct stat sb;
	pid_t pid;
	int fd;

	snprintf(a_key, sizeof(a_key), "--key_file=%s", opt.key);
	snprintf(a_slice, sizeof(a_slice), "--slice_us=%llu",
		 (unsigned long long)slice_us);
	snprintf(a_lead, sizeof(a_lead), "--lead_us=%llu",
		 (unsigned long long)lead_us);
	unlink(BCSD_SOCK);
	pid = fork();
	if (pid < 0)
		bench_die("fork");
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		fd = open(BCSD_LOG, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(opt.bcsd, opt.bcsd, "-f", "/dev/null", "--role=both",
		      "--node_id=1", "--interface=lo", a_key, a_slice, a_lead,
		      "--fill=0", "--jobs_dir=", "--stats_file=",
		      "--mpi_dir=/tmp/efficiency-bcsd-mpi",
		      "--control_socket=" BCSD_SOCK, (char *)NULL);
		_exit(127);
	}
	end = bench_now() + BCSD_WAIT_NS;
	while (stat(BCSD_SOCK, &sb)) {
		if (bench_now() > end || waitpid(pid, NULL, WNOHANG) == pid)
			bench_die("bcsd did not start (see " BCSD_LOG ")");
		bench_sleep_ns(10 * NSEC_PER_MSEC);
	}
	return pid;
}

/* A process's CPU time, user and system, in seconds (0 if unknown). */
static double proc_cpu(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* Fields 14 and 15, counted after the command's closing ')'. */
	if (!p || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
		   "%llu %llu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* SIGTERM, and wait (bounded) until it has gone. */
static void bcsd_stop(pid_t pid)
{
	uint64_t end = bench_now() + BCSD_WAIT_NS;

	kill(pid, SIGTERM);
	while (waitpid(pid, NULL, WNOHANG) != pid) {
		if (bench_now() > end) {
			fprintf(stderr, "warning: bcsd did not stop: killed\n");
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
		bench_sleep_ns(10 * NSEC_PER_MSEC);
	}
}

/*
 * A cluster job in @row through bcsd: bcsctl job create --row ROW, again
 * (bounded) while bcsd has not yet heard its own master's first strobe.
 */
static uint32_t bcsd_job_create(unsigned int row)
{
	uint64_t end = bench_now() + BCSD_WAIT_NS;
	char cmd[1024], line[64];
	unsigned long id;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "BCS_CONTROL_SOCKET=%s %s job create "
		 "--row %u 2>>%s", BCSD_SOCK, opt.bcsctl, row, BCSD_LOG);
	for (;;) {
		f = popen(cmd, "r");
		if (!f)
			bench_die("popen");
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		st = pclose(f);
		id = strtoul(line, NULL, 10);
		if (!st && id)
			return (uint32_t)id;
		if (bench_now() > end)
			bench_die("%s: failed (status %d)", cmd, st);
		bench_sleep_ns(50 * NSEC_PER_MSEC);
	}
}

/* Attach once bcsd's node part has made the job in bcs.ko (bounded). */
static void bcsd_attach(uint32_t job, pid_t pid)
{
	uint64_t end = bench_now() + BCSD_WAIT_NS;
	uint32_t nr = 0;
	int err;

	while ((err = bench_attach(bcs_fd, job, pid, &nr)) == -ENOENT &&
	       bench_now() < end)
		bench_sleep_ns(10 * NSEC_PER_MSEC);
	check(err, "ATTACH (bcsd's job)");
	if (nr != opt.threads)
		fprintf(stderr, "warning: job %u has %u tasks\n", job, nr);
}

static void spin(struct slot *slot)
{
	uint64_t n = 0;

	for (;;)
		__atomic_store_n(&slot->count, ++n, __ATOMIC_RELAXED);
}

static void *spin_thread(void *arg)
{
	spin(arg);
	return NULL;
}

/* A job: one process whose K threads spin on @s[0 .. K - 1]. */
static pid_t job_start(struct slot *s)
{
	pthread_attr_t attr;
	unsigned int i;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		bench_die("fork");
	if (pid)
		return pid;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 1; i < opt.threads; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, spin_thread, &s[i]))
			_exit(1);
	}
	spin(&s[0]);
	return 0;
}

static void job_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static uint64_t job_sum(const struct slot *s)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < opt.threads; i++)
		sum += __atomic_load_n(&s[i].count, __ATOMIC_RELAXED);
	return sum;
}

/* Wait (bounded) until every thread of the job has counted. */
static void job_wait_started(const struct slot *s)
{
	uint64_t end = bench_now() + 10 * NSEC_PER_SEC;
	unsigned int i;

	for (i = 0; i < opt.threads; i++) {
		while (!__atomic_load_n(&s[i].count, __ATOMIC_RELAXED)) {
			if (bench_now() > end) {
				fprintf(stderr, "warning: a thread did not "
					"start\n");
				return;
			}
			bench_sleep_ns(NSEC_PER_MSEC);
		}
	}
}

/* Sum of the per-CPU counts on an interrupt line of /proc/interrupts. */
static unsigned long long irq_line_sum(const char *line)
{
	unsigned long long sum = 0;
	const char *p = strchr(line, ':');
	char *end;

	if (!p)
		return 0;
	for (p++;;) {
		unsigned long long v = strtoull(p, &end, 10);

		if (end == p)
			break;
		sum += v;
		p = end;
	}
	return sum;
}

static void sys_counters(struct sys_counters *sc)
{
	unsigned long long v[8] = { 0 };
	char line[4096], name[16];
	FILE *f;
	int i;

	memset(sc, 0, sizeof(*sc));
	f = fopen("/proc/stat", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			/*
			 * The summary line only ("cpu " but not "cpuN"):
			 * user nice system idle iowait irq softirq steal.
			 */
			if (!strncmp(line, "cpu ", 4) &&
			    sscanf(line, "cpu %llu %llu %llu %llu %llu %llu "
				   "%llu %llu", &v[0], &v[1], &v[2], &v[3],
				   &v[4], &v[5], &v[6], &v[7]) >= 4) {
				sc->user = v[0] + v[1];
				sc->sys = v[2] + v[5] + v[6];
				sc->idle = v[3] + v[4];
				for (i = 0; i < 8; i++)
					sc->total += v[i];
			}
			sscanf(line, "ctxt %llu", &sc->ctxt);
		}
		fclose(f);
	}
	f = fopen("/proc/interrupts", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, " %15s", name) != 1)
				continue;
			if (!strcmp(name, "RES:"))
				sc->res = irq_line_sum(line);
			else if (!strcmp(name, "CAL:"))
				sc->cal = irq_line_sum(line);
		}
		fclose(f);
	}
}

static void check(int err, const char *what)
{
	if (err) {
		errno = -err;
		bench_die("%s", what);
	}
}

/*
 * Run one case once, add its counts to @c and, with @print, print them.
 * @i_alone is the capacity measured in the same repetition, for the spread
 * of the ratio.  Returns A's iterations.
 */
static double run_case(struct bench_case *c, double i_alone, bool print)
{
	struct slot *sa = slots, *sb = slots + opt.threads;
	uint64_t a0 = 0, b0 = 0, a1 = 0, b1 = 0, t0 = 0, t1 = 0;
	struct bcs_state st0, st1;
	struct sys_counters sc0, sc1;
	unsigned long long total;
	double secs;
	uint32_t job_a = 0, job_b = 0, nr;
	struct peer peer = { .kind = c->kind, .slice_ns = c->slice_ns };
	bool is_peer = c->kind == C_SIGSTOP || c->kind == C_FREEZER;
	pid_t pa, pb = 0, bcsd = 0;
	double a, b, scale, cpu0 = 0;
	uint64_t end;

	memset(slots, 0, 2 * opt.threads * sizeof(*slots));
	pa = job_start(sa);
	if (c->kind != C_ALONE)
		pb = job_start(sb);
	job_wait_started(sa);
	if (pb)
		job_wait_started(sb);

	if (c->kind == C_BCS) {
		if (c->drain_us)
			set_drain(c->drain_us);
		check(bench_job_create(bcs_fd, 0, &job_a), "JOB_CREATE");
		check(bench_job_create(bcs_fd, 1, &job_b), "JOB_CREATE");
		check(bench_attach(bcs_fd, job_a, pa, &nr), "ATTACH");
		if (nr != opt.threads)
			fprintf(stderr, "warning: A has %u tasks\n", nr);
		check(bench_attach(bcs_fd, job_b, pb, &nr), "ATTACH");
		if (nr != opt.threads)
			fprintf(stderr, "warning: B has %u tasks\n", nr);
		check(bench_config(bcs_fd, BCS_MODE_STANDALONE, c->slice_ns,
				   0), "CONFIG standalone");
	}
	if (c->kind == C_BCSD) {
		if (c->drain_us)
			set_drain(c->drain_us);
		bcsd = bcsd_start(c->slice_ns);
		job_a = bcsd_job_create(0);
		job_b = bcsd_job_create(1);
		bcsd_attach(job_a, pa);
		bcsd_attach(job_b, pb);
	}
	if (is_peer) {
		c->why = peer_start(&peer, pa, pb);
		if (c->why)
			goto stop;
	}

	end = bench_now() + opt.warmup_ns;
	if (is_peer)
		peer_run_until(&peer, end);
	else
		bench_sleep_until(end);
	if (c->kind == C_BCS || c->kind == C_BCSD)
		check(bench_get_state(bcs_fd, &st0), "GET_STATE");
	if (c->kind == C_BCSD && (st0.mode != BCS_MODE_DRIVEN ||
				  st0.driver_pid != bcsd))
		fprintf(stderr, "warning: %s: bcs.ko in mode %u, driver %d, "
			"not bcsd %d\n", c->name, st0.mode, st0.driver_pid,
			bcsd);
	if (bcsd)
		cpu0 = proc_cpu(bcsd);
	sys_counters(&sc0);
	t0 = bench_now();
	a0 = job_sum(sa);
	b0 = pb ? job_sum(sb) : 0;
	if (is_peer) {
		/* The window's switches only, not the warm-up's. */
		uint64_t sw0 = peer.switches, missed0 = peer.missed;

		peer_run_until(&peer, t0 + opt.window_ns);
		c->switches += peer.switches - sw0;
		c->missed += peer.missed - missed0;
	} else {
		bench_sleep_until(t0 + opt.window_ns);
	}
	t1 = bench_now();
	a1 = job_sum(sa);
	b1 = pb ? job_sum(sb) : 0;
	sys_counters(&sc1);
	if (c->kind == C_BCS || c->kind == C_BCSD) {
		check(bench_get_state(bcs_fd, &st1), "GET_STATE");
		if (bcsd)
			c->daemon += proc_cpu(bcsd) - cpu0;
		/*
		 * bcsd leaves its jobs in bcs.ko when it stops (a restarted
		 * one adopts them), and bcs.ko goes off as its driver goes.
		 */
		if (bcsd)
			bcsd_stop(bcsd);
		check(bench_config(bcs_fd, BCS_MODE_OFF, 0, 0), "CONFIG off");
		bench_job_destroy(bcs_fd, job_a);
		bench_job_destroy(bcs_fd, job_b);
		c->switches += st1.switches - st0.switches;
		c->late += st1.late - st0.late;
		c->missed += st1.missed - st0.missed;
		c->cuts += st1.drain_cuts - st0.drain_cuts;
	}
stop:
	if (is_peer)
		peer_stop(&peer);
	job_stop(pa);
	if (pb)
		job_stop(pb);
	if (is_peer) {
		bench_cgroup_remove(&peer.cg[0]);
		bench_cgroup_remove(&peer.cg[1]);
	}
	if (c->why) {
		fprintf(stderr, "%s: %s: left out\n", c->name, c->why);
		return 0;
	}

	/* The controller may wake a little late: scale the window to T. */
	secs = (double)(t1 - t0) / 1e9;
	scale = (double)opt.window_ns / (double)(t1 - t0);
	a = (double)(a1 - a0) * scale;
	b = (double)(b1 - b0) * scale;
	c->a += a;
	c->b += b;
	c->runs++;
	c->secs += secs;
	total = sc1.total - sc0.total;
	if (total) {
		c->user += 100.0 * (double)(sc1.user - sc0.user) / total;
		c->sys += 100.0 * (double)(sc1.sys - sc0.sys) / total;
		c->idle += 100.0 * (double)(sc1.idle - sc0.idle) / total;
	}
	c->ctxt += (double)(sc1.ctxt - sc0.ctxt);
	c->res += (double)(sc1.res - sc0.res);
	c->cal += (double)(sc1.cal - sc0.cal);
	if (i_alone > 0)
		bench_samples_add(&c->ratio,
				  (uint64_t)((a + b) / i_alone * 1e6 + 0.5));
	if (print)
		printf("  %-17s %12.2f %12.2f %12.2f   window %.3f s\n",
		       c->name, a / 1e6, b / 1e6, (a + b) / 1e6,
		       (double)(t1 - t0) / 1e9);
	return a;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-k THREADS] [-t WINDOW_MS] [-r REPS] "
		"[-s SLICE_US[,SLICE_US...]] [-D] [-P]\n"
		"          [-b BCSD -c BCSCTL -K KEY_FILE] [-v]\n"
		"  -k  threads per job (online CPUs)\n"
		"  -t  measured window per case in ms (2000)\n"
		"  -r  repetitions of every case, interleaved (8)\n"
		"  -s  bcs slices in us (10000,1000,500)\n"
		"  -D  also every slice with drain_us 0 (new row woken at once)\n"
		"  -P  leave out the peers (SIGSTOP and freezer gang schedulers)\n"
		"  -b  also every slice driven by this bcsd (role both, on lo),\n"
		"      the jobs made with this bcsctl (-c), the cluster key -K\n"
		"  -v  print every run\n", prog);
	exit(2);
}

static void parse_slices(const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	opt.nr_slices = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t ns = strtoull(tok, NULL, 0) * NSEC_PER_USEC;

		if (ns < BCS_SLICE_NS_MIN || ns > BCS_SLICE_NS_MAX ||
		    opt.nr_slices == MAX_SLICES) {
			fprintf(stderr, "bad slice %s us\n", tok);
			exit(2);
		}
		opt.slices[opt.nr_slices++] = ns;
	}
	free(copy);
}

int main(int argc, char **argv)
{
	struct bench_case cases[NR_CASES];
	unsigned int d;
	FILE *f;
	unsigned int nr_cases, i, rep;
	bool verbose = false;
	const char *why;
	double i_alone;
	int c;

	while ((c = getopt(argc, argv, "k:t:r:s:DPb:c:K:vh")) != -1) {
		switch (c) {
		case 'k':
			opt.threads = (unsigned int)strtoul(optarg, NULL, 0);
			if (!opt.threads || opt.threads > MAX_THREADS)
				usage(argv[0]);
			break;
		case 't':
			opt.window_ns = strtoull(optarg, NULL, 0) *
					NSEC_PER_MSEC;
			if (!opt.window_ns)
				usage(argv[0]);
			break;
		case 'r':
			opt.reps = (unsigned int)strtoul(optarg, NULL, 0);
			if (!opt.reps)
				usage(argv[0]);
			break;
		case 's':
			parse_slices(optarg);
			break;
		case 'D':
			opt.nodrain = true;
			break;
		case 'P':
			opt.peers = false;
			break;
		case 'b':
			opt.bcsd = optarg;
			break;
		case 'c':
			opt.bcsctl = optarg;
			break;
		case 'K':
			opt.key = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || (opt.bcsd && (!opt.bcsctl || !opt.key)))
		usage(argv[0]);
	if (!opt.threads)
		opt.threads = bench_nr_cpus();
	setvbuf(stdout, NULL, _IOLBF, 0);

	slots = mmap(NULL, 2 * opt.threads * sizeof(*slots),
		     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED)
		bench_die("mmap");

	memset(cases, 0, sizeof(cases));
	for (i = 0; i < NR_CASES; i++)
		bench_samples_init(&cases[i].ratio, opt.reps);
	cases[0].kind = C_ALONE;
	strcpy(cases[0].name, "alone");
	cases[1].kind = C_CFS;
	strcpy(cases[1].name, "cfs");
	nr_cases = 2;
	bcs_fd = open(BCS_DEV, O_RDWR | O_CLOEXEC);
	if (bcs_fd < 0) {
		fprintf(stderr, "%s: %s: bcs cases skipped\n", BCS_DEV,
			strerror(errno));
	} else {
		f = fopen(DRAIN_PARAM, "r");
		if (f && fgets(drain_loaded, sizeof(drain_loaded), f))
			drain_loaded[strcspn(drain_loaded, "\n")] = '\0';
		if (f)
			fclose(f);
		if (opt.nodrain && !drain_loaded[0]) {
			fprintf(stderr, "%s: cannot read it: no -D\n",
				DRAIN_PARAM);
			opt.nodrain = false;
		}
		for (i = 0; i < opt.nr_slices; i++) {
			for (d = 0; d <= opt.nodrain; d++, nr_cases++) {
				struct bench_case *k = &cases[nr_cases];

				k->kind = C_BCS;
				k->slice_ns = opt.slices[i];
				if (opt.nodrain)
					k->drain_us = d ? "0" : drain_loaded;
				snprintf(k->name, sizeof(k->name), "bcs %g ms%s",
					 (double)opt.slices[i] / 1e6,
					 d ? " nodrain" : "");
			}
			if (opt.bcsd) {
				struct bench_case *k = &cases[nr_cases++];

				k->kind = C_BCSD;
				k->slice_ns = opt.slices[i];
				if (opt.nodrain)
					k->drain_us = drain_loaded;
				snprintf(k->name, sizeof(k->name),
					 "bcsd %g ms",
					 (double)opt.slices[i] / 1e6);
			}
		}
	}
	for (i = 0; opt.peers && i < opt.nr_slices; i++) {
		for (d = C_SIGSTOP; d <= C_FREEZER; d++, nr_cases++) {
			struct bench_case *k = &cases[nr_cases];

			k->kind = d;
			k->slice_ns = opt.slices[i];
			snprintf(k->name, sizeof(k->name), "%s %g ms",
				 d == C_SIGSTOP ? "sigstop" : "freezer",
				 (double)opt.slices[i] / 1e6);
		}
	}

	printf("efficiency: %u online CPUs, jobs of %u threads, window "
	       "%.1f s, warm-up %.1f s, %u repetitions\n", bench_nr_cpus(),
	       opt.threads, (double)opt.window_ns / 1e9,
	       (double)opt.warmup_ns / 1e9, opt.reps);
	if (opt.peers)
		bench_cgroup_root(&why);
	printf("controller: %s\n", bench_set_fifo(FIFO_PRIO) ?
	       "SCHED_FIFO 50" : "SCHED_OTHER (SCHED_FIFO refused)");
	if (verbose)
		printf("  %-17s %12s %12s %12s   (millions of iterations)\n",
		       "case", "A", "B", "A+B");

	/*
	 * Every repetition starts with the "alone" case; the spread of the
	 * ratios compares each run with the capacity of its own repetition,
	 * the table's means with the mean capacity.
	 */
	for (rep = 0; rep < opt.reps; rep++) {
		i_alone = run_case(&cases[0], 0, verbose);
		for (i = 1; i < nr_cases; i++)
			if (!cases[i].why)
				run_case(&cases[i], i_alone, verbose);
	}
	i_alone = cases[0].a / cases[0].runs;

	printf("\nmeans of %u runs, iterations in millions per %.1f s, "
	       "I_alone = %.2f;\n(A+B)/alone: median over the runs of "
	       "(A+B) / I_alone of the same repetition\n", opt.reps,
	       (double)opt.window_ns / 1e9, i_alone / 1e6);
	printf("  %-17s %9s %9s %9s %11s %7s %7s %15s\n", "case", "A", "B",
	       "A+B", "(A+B)/alone", "loss %", "A share", "ratio min..max");
	for (i = 0; i < nr_cases; i++) {
		struct bench_case *k = &cases[i];
		double a = k->a / k->runs, b = k->b / k->runs, ratio = 1.0;
		double lo = 1.0, hi = 1.0;

		if (!k->runs) {
			printf("  %-17s left out: %s\n", k->name, k->why);
			continue;
		}
		if (k->ratio.n) {
			ratio = bench_percentile(&k->ratio, 50) / 1e6;
			lo = bench_percentile(&k->ratio, 0) / 1e6;
			hi = bench_percentile(&k->ratio, 100) / 1e6;
		}
		printf("  %-17s %9.2f %9.2f %9.2f %11.4f %7.2f %7.3f "
		       "%7.4f..%-6.4f\n", k->name, a / 1e6, b / 1e6,
		       (a + b) / 1e6, ratio, 100.0 * (1.0 - ratio),
		       a / (a + b), lo, hi);
	}

	printf("\nwhere the time went (means; IPIs from /proc/interrupts)\n");
	printf("  %-17s %6s %6s %6s %9s %9s %9s %10s %9s %8s %8s\n",
	       "case", "user%", "sys%", "idle%", "ctxt/s", "RES/s", "CAL/s",
	       "switches/s", "us/switch", "missed", "cuts");
	for (i = 0; i < nr_cases; i++) {
		struct bench_case *k = &cases[i];
		char sw[16] = "-", missed[16] = "-", cuts[16] = "-";
		char cost[16] = "-";

		if (!k->runs)
			continue;
		if (k->kind != C_ALONE && k->kind != C_CFS) {
			snprintf(sw, sizeof(sw), "%.1f",
				 k->switches / k->secs);
			if (k->switches && k->ratio.n)
				snprintf(cost, sizeof(cost), "%.1f",
					 (1.0 - bench_percentile(&k->ratio, 50) /
					  1e6) * k->secs * 1e6 / k->switches);
			snprintf(missed, sizeof(missed), "%llu",
				 (unsigned long long)k->missed);
		}
		if (k->kind == C_BCS || k->kind == C_BCSD)
			snprintf(cuts, sizeof(cuts), "%llu",
				 (unsigned long long)k->cuts);
		printf("  %-17s %6.1f %6.1f %6.1f %9.0f %9.0f %9.0f %10s %9s "
		       "%8s %8s\n", k->name, k->user / k->runs,
		       k->sys / k->runs, k->idle / k->runs, k->ctxt / k->secs,
		       k->res / k->secs, k->cal / k->secs, sw, cost, missed,
		       cuts);
	}
	for (i = 2; i < nr_cases; i++)
		if (cases[i].late)
			printf("  %s: %llu late switches\n", cases[i].name,
			       (unsigned long long)cases[i].late);
	for (i = 2; i < nr_cases; i++) {
		struct bench_case *k = &cases[i];

		if (k->kind != C_BCSD || !k->runs)
			continue;
		printf("  %s: bcsd's own CPU time %.1f %% of the window, %.0f us "
		       "per slice\n", k->name, 100.0 * k->daemon / k->secs,
		       1e6 * k->daemon / (k->secs * 1e9 / k->slice_ns));
	}
	for (i = 2; i < nr_cases; i++) {
		struct bench_case *k = &cases[i];
		double loss;

		if (k->kind != C_BCS || k->slice_ns != 10 * NSEC_PER_MSEC ||
		    !k->ratio.n || (k->drain_us && !strcmp(k->drain_us, "0")))
			continue;
		loss = 100.0 * (1.0 - bench_percentile(&k->ratio, 50) / 1e6);
		printf("goal: loss at most 1%% with 10 ms slices: %.2f %%, %s "
		       "(reported, not asserted)\n", loss,
		       loss <= 1.0 ? "met" : "not met");
	}

	if (opt.nodrain)
		set_drain(drain_loaded);
	if (bcs_fd >= 0)
		close(bcs_fd);
	munmap(slots, 2 * opt.threads * sizeof(*slots));
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * irqoff - the longest section with interrupts (or preemption) off that
 * each of bcs.ko's paths causes, with many attached tasks.
 *
 * Method: cyclictest (rt-tests, a peer nobody here wrote) runs one
 * SCHED_FIFO 99 thread on CPU 0 that sleeps for an interval and measures
 * how late it wakes up.  Meanwhile this program calls one path of bcs.ko
 * in a loop, also on CPU 0.  In a fully preemptible kernel (boot with
 * preempt=full) the measuring thread preempts the caller at once, unless
 * the caller holds interrupts or preemption off: the largest wake-up
 * latency while a path runs, against the latency with nothing running,
 * is the longest such section of that path.  The guest should have one
 * CPU (or everything else kept off CPU 0).
 *
 * Paths:
 *   idle        nothing (the bed's own latency)
 *   job_list    BCS_IOC_JOB_LIST (anyone)
 *   task_stats  BCS_IOC_TASK_STATS of every task (anyone)
 *   attach      detach and attach the whole process (its owner)
 *   switch      driven strobes, switching between two rows (the driver)
 *   dist_read   BCS_IOC_DIST_READ with BCS_DIST_NEXT, one task a call,
 *               round the job's tracked tasks, histogram included (anyone)
 *   dist_ctl    BCS_IOC_DIST_CTL: disable and enable every metric of the
 *               whole job (its owner)
 *
 * Distributions are enabled for the whole job (every metric, resolution
 * 0) before the first dist_ path, so that every attached task is tracked
 * from then on (the paths before it run without them).
 * Usage: irqoff [-n THREADS] [-s SECONDS] [-i INTERVAL_US] [-p PATHS]
 * Prints one line per path: max latency in us, calls made, and the ratio
 * of the max to idle's.  Reports numbers; never fails on a timing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include "bench_util.h"

struct shared {
	volatile int ready;
};

static struct shared *sh;

static void *sleeper(void *p)
{
	(void)p;
	for (;;)
		pause();
	return NULL;
}

/* A process of @n threads that sleep (the main thread included). */
static pid_t start_threads(int n)
{
	pthread_attr_t a;
	pthread_t t;
	pid_t pid;
	int i;

	pid = fork();
	if (pid < 0)
		bench_die("fork");
	if (pid)
		return pid;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 32 * 1024);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (i = 1; i < n; i++)
		if (pthread_create(&t, &a, sleeper, NULL))
			_exit(1);
	sh->ready = 1;
	for (;;)
		pause();
}

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die("sched_setaffinity");
}

/* Start cyclictest on CPU 0 for @secs, its output into @out. */
static pid_t start_cyclictest(int secs, int interval_us, const char *out)
{
	char d[32], i[32];
	pid_t pid;
	int fd;

	snprintf(d, sizeof(d), "-D%d", secs);
	snprintf(i, sizeof(i), "-i%d", interval_us);
	pid = fork();
	if (pid < 0)
		bench_die("fork");
	if (pid)
		return pid;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || dup2(fd, 1) < 0)
		_exit(127);
	execlp("cyclictest", "cyclictest", "-q", "-m", "-a0", "-t1", "-p99",
	       i, d, (char *)NULL);
	_exit(127);
}

/* The "Max:" that cyclictest printed, in us; -1 if none. */
static long cyclictest_max(const char *out)
{
	char line[512], *p;
	long max = -1;
	FILE *f = fopen(out, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "Max:");
		if (p)
			max = strtol(p + 4, NULL, 10);
	}
	fclose(f);
	return max;
}

struct ctx {
	int fd;
	uint32_t job, other;
	pid_t target;
	int nthreads;
	struct bcs_task_stat *stats;
	struct bcs_job_info jobs[8];
	uint64_t slice;
	pid_t cursor;			/* dist_read: the last pid read */
	char hist[64 << 10];
};

static void call_path(struct ctx *c, const char *path)
{
	if (!strcmp(path, "job_list")) {
		struct bcs_job_list l = {
			.size = sizeof(l), .count = 8,
			.jobs = (uintptr_t)c->jobs,
		};

		bench_ioctl(c->fd, BCS_IOC_JOB_LIST, &l);
	} else if (!strcmp(path, "task_stats")) {
		struct bcs_task_list l = {
			.size = sizeof(l), .count = c->nthreads + 64,
			.tasks = (uintptr_t)c->stats,
		};

		bench_ioctl(c->fd, BCS_IOC_TASK_STATS, &l);
	} else if (!strcmp(path, "attach")) {
		struct bcs_attach at = {
			.size = sizeof(at), .job = c->job, .pid = c->target,
		};

		bench_ioctl(c->fd, BCS_IOC_DETACH, &at);
		at.nr_tasks = 0;
		bench_ioctl(c->fd, BCS_IOC_ATTACH, &at);
	} else if (!strcmp(path, "switch")) {
		c->slice++;
		bench_strobe_now(c->fd, c->slice, c->slice % 2);
	} else if (!strcmp(path, "dist_read")) {
		struct bcs_dist_read rd;

		if (bench_dist_read(c->fd, c->job, c->cursor, BCS_DIST_BURST,
				    BCS_DIST_NEXT, c->hist, sizeof(c->hist),
				    &rd))
			c->cursor = 0;
		else
			c->cursor = rd.pid;
	} else if (!strcmp(path, "dist_ctl")) {
		bench_dist_ctl(c->fd, c->job, BCS_DIST_DISABLE, BCS_DIST_ALL,
			       0);
		bench_dist_ctl(c->fd, c->job, BCS_DIST_ENABLE, BCS_DIST_ALL,
			       0);
	} else {
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	const char *paths =
		"idle,job_list,task_stats,attach,switch,dist_read,dist_ctl";
	int secs = 5, interval = 200, opt;
	char out[] = "/tmp/irqoff-cyclictest.txt";
	long idle_max = -1;
	bool dist_on = false;
	static struct ctx c = { .nthreads = 4096 };
	char *list, *path, *save;

	while ((opt = getopt(argc, argv, "n:s:i:p:h")) != -1) {
		switch (opt) {
		case 'n': c.nthreads = atoi(optarg); break;
		case 's': secs = atoi(optarg); break;
		case 'i': interval = atoi(optarg); break;
		case 'p': paths = optarg; break;
		default:
			fprintf(stderr, "usage: irqoff [-n THREADS] [-s SECONDS] [-i INTERVAL_US] [-p PATHS]\n");
			return 2;
		}
	}
	if (c.nthreads < 1 || secs < 1 || interval < 10)
		bench_die("bad arguments");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	c.stats = calloc(c.nthreads + 64, sizeof(*c.stats));
	if (sh == MAP_FAILED || !c.stats)
		bench_die("memory");
	c.fd = open(BCS_DEV, O_RDWR | O_CLOEXEC);
	if (c.fd < 0)
		bench_die("open " BCS_DEV);
	if (bench_config(c.fd, BCS_MODE_OFF, 0, 0) ||
	    bench_job_create(c.fd, 0, &c.job) ||
	    bench_job_create(c.fd, 1, &c.other))
		bench_die("set-up");
	c.target = start_threads(c.nthreads);
	while (!sh->ready)
		usleep(10000);
	if (bench_attach(c.fd, c.job, c.target, NULL) ||
	    bench_config(c.fd, BCS_MODE_DRIVEN, 0, 0))
		bench_die("attach or drive");
	pin_cpu0();

	printf("irqoff: %d attached tasks, %d s per path, cyclictest -i %d on CPU 0\n",
	       c.nthreads, secs, interval);
	printf("  %-11s %12s %10s %10s\n", "path", "max_us", "calls", "x_idle");
	list = strdup(paths);
	for (path = strtok_r(list, ",", &save); path;
	     path = strtok_r(NULL, ",", &save)) {
		uint64_t end, calls = 0;
		pid_t ct;
		long max;
		int st;

		if (!strncmp(path, "dist_", 5) && !dist_on) {
			if (bench_dist_ctl(c.fd, c.job, BCS_DIST_ENABLE,
					   BCS_DIST_ALL, 0))
				bench_die("distributions");
			dist_on = true;
		}
		ct = start_cyclictest(secs, interval, out);
		usleep(200000);		/* cyclictest is up */
		end = bench_now() + (uint64_t)(secs - 1) * NSEC_PER_SEC;
		while (bench_now() < end) {
			call_path(&c, path);
			calls++;
		}
		waitpid(ct, &st, 0);
		max = cyclictest_max(out);
		if (!strcmp(path, "idle"))
			idle_max = max;
		printf("  %-11s %12ld %10llu %10.1f\n", path, max,
		       (unsigned long long)calls,
		       idle_max > 0 ? (double)max / idle_max : 0.0);
		fflush(stdout);
	}
	free(list);
	bench_config(c.fd, BCS_MODE_OFF, 0, 0);
	kill(c.target, SIGKILL);
	waitpid(c.target, NULL, 0);
	bench_job_destroy(c.fd, c.job);
	bench_dist_ctl(c.fd, c.job, BCS_DIST_RELEASE, 0, 0);
	bench_job_destroy(c.fd, c.other);
	return 0;
}

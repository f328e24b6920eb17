// SPDX-License-Identifier: GPL-2.0
/*
 * switch_cost - cost of suspending and resuming a gang of CPU-bound tasks
 * with bcs, with SIGSTOP/SIGCONT sent from user space, and with the cgroup
 * v2 freezer, measured in the same run.
 *
 * For each gang size N a gang of N spinning tasks is created (N
 * single-threaded processes, or N threads of one process with -g), put
 * under the control of all three mechanisms at once (attached to a bcs job
 * in row 0, moved into a child cgroup), and then, R times, each mechanism
 * in turn suspends and resumes it.  Interleaving the mechanisms round by
 * round means that slow drifts of the machine (or of the emulator) spread
 * evenly over them, so their ratios are meaningful even where absolute
 * times are not.
 *
 * Per switch the benchmark records, from the same starting time:
 *   issue  the system calls that order the switch (strobe ioctl; kill()
 *          of each process; write of cgroup.freeze),
 *   done   until the mechanism confirms the new state: for bcs the time
 *          the kernel stamped into the switch's slice record when the
 *          last task had parked or left its parking (parked_ns,
 *          resumed_ns); waitpid() reporting each process stopped or
 *          continued; cgroup.events saying "frozen 1" or "frozen 0", woken
 *          by poll(),
 *   run    for resumes only: until every task has been seen running again
 *          (each task bumps its own counter in shared memory).  The three
 *          mechanisms confirm a resume at different points (a continued
 *          report or "frozen 0" may come before any task has run), so "run"
 *          is the like-for-like resume time.
 *
 * None of the "done" times comes from polling: a controller that wakes
 * up every few microseconds to look preempts a spinner each time, and on
 * an emulated CPU that costs the mechanism it polls as much as the
 * switch itself.  Only "run" and the bcs fallback without the ring poll
 * (short sleeps that grow with the wait).  The controller runs at
 * SCHED_FIFO so that it is not starved by the spinners; the spinners run
 * SCHED_OTHER.  A mechanism that does not confirm a switch within the
 * timeout is reported as "timeout" and dropped for that gang; nothing here
 * waits without a bound.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_TASKS	4096
#define MAX_SIZES	16
#define FIFO_PRIO	50

/* One counter per spinning task, each in its own cache line. */
struct slot {
	uint64_t count;
	int32_t tid;			/* the task, for diagnostics */
	char pad[52];
};

enum mech { M_BCS, M_SIG, M_FRZ, NR_MECH };

static const char *const mech_name[NR_MECH] = { "bcs", "sigstop", "freezer" };

enum metric { S_ISSUE, S_DONE, R_ISSUE, R_DONE, R_RUN, NR_METRIC };

static const char *const metric_name[NR_METRIC] = {
	"susp-issue", "susp-done", "res-issue", "res-done", "res-run",
};

struct opts {
	unsigned int rounds;
	unsigned int sizes[MAX_SIZES];
	unsigned int nr_sizes;
	bool procs, threads;
	bool use[NR_MECH];
	uint64_t poll_ns;
	uint64_t timeout_ns;
	uint64_t hold_ns;
	uint64_t budget_ns;
};

static struct opts opt = {
	.rounds = 20,
	.sizes = { 1, 8, 64, 256 },
	.nr_sizes = 4,
	.procs = true,
	.use = { true, true, true },
	.poll_ns = 20 * NSEC_PER_USEC,
	.timeout_ns = 10 * NSEC_PER_SEC,
	.hold_ns = 1 * NSEC_PER_MSEC,
};

/* Rounds that a gang always gets, whatever the time budget. */
#define MIN_ROUNDS	3

struct gang {
	bool threads;
	unsigned int n;			/* tasks */
	unsigned int nr_procs;		/* processes: n, or 1 with threads */
	pid_t *pids;
	struct slot *slots;		/* shared with the tasks */
	uint64_t *snap;			/* counters at the last snapshot */
	/* bcs */
	uint32_t job;
	/* freezer */
	struct bench_cgroup cg;
};

/* Results of one mechanism on one gang. */
struct result {
	bool enabled;
	bool dead;			/* timed out: no further rounds */
	const char *why;		/* reason it is not measured */
	struct bench_samples m[NR_METRIC];
	unsigned int leaks;		/* rounds in which a task ran while stopped */
};

/* One gang's row of the final ratio tables. */
struct summary {
	bool threads;
	unsigned int n;
	uint64_t med[NR_MECH][NR_METRIC];
	bool have[NR_MECH][NR_METRIC];
};

static struct summary summaries[2 * MAX_SIZES];
static unsigned int nr_summaries;

/*
 * Bound of every wait of the current gang: the -w timeout plus 0.1 s per
 * task, because confirming a resume means that the scheduler has run every
 * task once, and an emulated CPU shared with hundreds of spinners may take
 * seconds for that.
 */
#define TIMEOUT_PER_TASK	(100 * NSEC_PER_MSEC)
static uint64_t gang_timeout_ns;

static int bcs_fd = -1;
static uint64_t bcs_slice;		/* slice number of the last strobe */
static struct bench_ring ring;
static bool have_ring;

/* Spinning tasks */

static void spin(struct slot *slot)
{
	uint64_t n = 0;

	__atomic_store_n(&slot->tid, gettid(), __ATOMIC_RELAXED);
	for (;;)
		__atomic_store_n(&slot->count, ++n, __ATOMIC_RELAXED);
}

/* Threads of a thread gang start spinning when all of them exist. */
static pthread_barrier_t start_barrier;

static void *spin_thread(void *arg)
{
	pthread_barrier_wait(&start_barrier);
	spin(arg);
	return NULL;
}

static void child_init(void)
{
	/* Never outlive the benchmark, whatever happens to it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
}

static pid_t spawn_procs(struct slot *slot)
{
	pid_t pid = fork();

	if (pid < 0)
		bench_die("fork");
	if (pid == 0) {
		child_init();
		spin(slot);
	}
	return pid;
}

static pid_t spawn_threads(struct slot *slots, unsigned int n)
{
	pid_t pid = fork();
	pthread_attr_t attr;
	unsigned int i;

	if (pid < 0)
		bench_die("fork");
	if (pid)
		return pid;

	child_init();
	/*
	 * Creating hundreds of threads while the first ones already spin
	 * would take the creator (a SCHED_OTHER task like them) very long.
	 */
	pthread_barrier_init(&start_barrier, NULL, n);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 1; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, spin_thread, &slots[i])) {
			fprintf(stderr, "pthread_create failed\n");
			_exit(1);
		}
	}
	pthread_barrier_wait(&start_barrier);
	spin(&slots[0]);
	return 0;
}

static void snapshot(struct gang *g)
{
	unsigned int i;

	for (i = 0; i < g->n; i++)
		g->snap[i] = __atomic_load_n(&g->slots[i].count,
					     __ATOMIC_RELAXED);
}

/* Number of tasks whose counter moved since the last snapshot. */
static unsigned int nr_moved(const struct gang *g)
{
	unsigned int i, moved = 0;

	for (i = 0; i < g->n; i++)
		moved += __atomic_load_n(&g->slots[i].count,
					 __ATOMIC_RELAXED) != g->snap[i];
	return moved;
}

/*
 * Sleep between two polls: opt.poll_ns, or 1/64 of the time waited so far
 * if that is longer.  Long waits (hundreds of tasks to be scheduled) are
 * still measured to within about 2%, and the controller does not steal
 * much of the CPU time whose distribution it is measuring.
 */
static uint64_t poll_ns_after(uint64_t waited)
{
	return waited / 64 > opt.poll_ns ? waited / 64 : opt.poll_ns;
}

/*
 * Check @cond until it holds or the timeout passes, sleeping @nap ns
 * (an expression of __waited, the time since @t0) between checks; on
 * success store the time since @t0 in @out.
 */
#define POLL_EVERY(cond, t0, out, nap) ({				\
	bool __ok = false;						\
	uint64_t __waited __attribute__((unused));			\
	uint64_t __end = bench_now() + gang_timeout_ns;			\
	for (;;) {							\
		if (cond) {						\
			*(out) = bench_now() - (t0);			\
			__ok = true;					\
			break;						\
		}							\
		if (bench_now() > __end)				\
			break;						\
		__waited = bench_now() - (t0);				\
		bench_sleep_ns(nap);					\
	}								\
	__ok;								\
})

/* Fine polling: opt.poll_ns, growing with the wait (poll_ns_after()). */
#define POLL_UNTIL(cond, t0, out)					\
	POLL_EVERY(cond, t0, out, poll_ns_after(__waited))

static bool wait_all_ran(struct gang *g, uint64_t t0, uint64_t *out)
{
	return POLL_UNTIL(nr_moved(g) == g->n, t0, out);
}

/* bcs */

static int bcs_parked(const struct gang *g)
{
	struct bcs_job_info info;

	if (bench_job_info(bcs_fd, g->job, &info))
		return -1;
	return (int)info.nr_parked;
}

static const char *bcs_setup(struct gang *g)
{
	uint32_t nr, total = 0;
	unsigned int i;
	int err;

	if (bcs_fd < 0)
		return "no /dev/bcs";
	err = bench_job_create(bcs_fd, 0, &g->job);
	if (err) {
		errno = -err;
		bench_die("BCS_IOC_JOB_CREATE");
	}
	for (i = 0; i < g->nr_procs; i++) {
		err = bench_attach(bcs_fd, g->job, g->pids[i], &nr);
		if (err) {
			errno = -err;
			bench_die("BCS_IOC_ATTACH %d", g->pids[i]);
		}
		total += nr;
	}
	if (total != g->n)
		fprintf(stderr, "warning: attached %u tasks, expected %u\n",
			total, g->n);
	/* Start from a known running row. */
	err = bench_strobe_now(bcs_fd, ++bcs_slice, 0);
	if (err) {
		errno = -err;
		bench_die("BCS_IOC_STROBE");
	}
	return NULL;
}

static void bcs_teardown(struct gang *g)
{
	if (g->job)
		bench_job_destroy(bcs_fd, g->job);
	g->job = 0;
}

/*
 * When the switch in record @seq took effect, from the kernel's stamp:
 * parked_ns for a suspend, resumed_ns for a resume; 0 while not yet.
 */
static uint64_t bcs_settled_at(uint64_t seq, bool suspend)
{
	struct bcs_slice_record rec;

	if (!bench_ring_read(&ring, seq, &rec) || rec.slice != bcs_slice)
		return 0;
	return suspend ? rec.parked_ns : rec.resumed_ns;
}

static bool bcs_switch(struct gang *g, uint32_t row, int want,
		       uint64_t *issue, uint64_t *done)
{
	uint64_t t0 = bench_now(), t0_real = bench_now_real(), seq, at = 0;
	uint64_t waited;
	bool ok;
	int err;

	err = bench_strobe_now(bcs_fd, ++bcs_slice, row);
	*issue = bench_now() - t0;
	if (err) {
		fprintf(stderr, "BCS_IOC_STROBE row %u: %s\n", row,
			strerror(-err));
		return false;
	}
	if (!have_ring)
		return POLL_UNTIL(bcs_parked(g) == want, t0, done);
	/*
	 * The kernel stamps the time; looking for it once a millisecond
	 * keeps the controller out of the way of the tasks it measures.
	 */
	seq = bench_ring_head(&ring) - 1;
	ok = POLL_EVERY((at = bcs_settled_at(seq, want != 0)) != 0, t0, &waited,
			NSEC_PER_MSEC);
	if (ok && bcs_parked(g) != want) {
		fprintf(stderr, "bcs: switch took effect with %d tasks "
			"parked, not %d\n", bcs_parked(g), want);
		ok = false;
	}
	if (ok)
		*done = at > t0_real ? at - t0_real : 0;
	return ok;
}

static bool bcs_suspend(struct gang *g, uint64_t *issue, uint64_t *done)
{
	/* Row 1 is empty: running it suspends the job in row 0. */
	return bcs_switch(g, 1, (int)g->n, issue, done);
}

static bool bcs_resume(struct gang *g, uint64_t *issue, uint64_t *done)
{
	return bcs_switch(g, 0, 0, issue, done);
}

/* SIGSTOP / SIGCONT */

static volatile sig_atomic_t alarm_fired;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
}

/*
 * Bound blocking waitpid() calls: SIGALRM (installed without SA_RESTART)
 * interrupts them after the timeout, and keeps doing so every 10 ms in case
 * the first one came just before a call.
 */
static void alarm_arm(bool on)
{
	struct itimerval it = { 0 };

	alarm_fired = 0;
	if (on) {
		it.it_value.tv_sec = gang_timeout_ns / NSEC_PER_SEC;
		it.it_value.tv_usec = gang_timeout_ns % NSEC_PER_SEC / 1000;
		it.it_interval.tv_usec = 10000;
	}
	setitimer(ITIMER_REAL, &it, NULL);
}

static bool sig_wait(struct gang *g, int flag, bool (*ok)(int))
{
	unsigned int i;
	bool good = true;
	int status;
	pid_t r;

	alarm_arm(true);
	for (i = 0; i < g->nr_procs && good; i++) {
		do {
			r = alarm_fired ? -1 :
			    waitpid(g->pids[i], &status, flag);
		} while (r > 0 && !ok(status));
		if (r < 0) {
			if (!alarm_fired)
				perror("waitpid");
			good = false;
		}
	}
	alarm_arm(false);
	return good;
}

static bool is_stopped(int status)
{
	return WIFSTOPPED(status);
}

static bool is_continued(int status)
{
	return WIFCONTINUED(status);
}

static bool sig_switch(struct gang *g, int sig, int flag, bool (*ok)(int),
		       uint64_t *issue, uint64_t *done)
{
	uint64_t t0 = bench_now();
	unsigned int i;

	for (i = 0; i < g->nr_procs; i++)
		if (kill(g->pids[i], sig))
			bench_die("kill %d", g->pids[i]);
	*issue = bench_now() - t0;
	if (!sig_wait(g, flag, ok))
		return false;
	*done = bench_now() - t0;
	return true;
}

static bool sig_suspend(struct gang *g, uint64_t *issue, uint64_t *done)
{
	return sig_switch(g, SIGSTOP, WUNTRACED, is_stopped, issue, done);
}

static bool sig_resume(struct gang *g, uint64_t *issue, uint64_t *done)
{
	return sig_switch(g, SIGCONT, WCONTINUED, is_continued, issue, done);
}

/* cgroup v2 freezer */

static const char *frz_setup(struct gang *g)
{
	return bench_cgroup_create(&g->cg, "gang", g->pids, g->nr_procs);
}

/*
 * Wait for "frozen @want": cgroup.events raises POLLPRI when it changes,
 * so the controller sleeps until the freezer says it is done.
 */
static bool frz_wait(struct gang *g, int want, uint64_t t0, uint64_t *done)
{
	struct pollfd pfd = { .fd = g->cg.events_fd, .events = POLLPRI };
	uint64_t now, end = t0 + gang_timeout_ns;

	for (;;) {
		if (bench_cgroup_frozen(&g->cg) == want) {
			*done = bench_now() - t0;
			return true;
		}
		now = bench_now();
		if (now > end)
			return false;
		if (poll(&pfd, 1, (int)((end - now) / NSEC_PER_MSEC) + 1) < 0 &&
		    errno != EINTR) {
			perror("poll cgroup.events");
			return false;
		}
	}
}

static bool frz_switch(struct gang *g, int want, uint64_t *issue,
		       uint64_t *done)
{
	uint64_t t0 = bench_now();
	int err = bench_cgroup_freeze(&g->cg, want);

	if (err) {
		fprintf(stderr, "cgroup.freeze: %s\n", strerror(-err));
		return false;
	}
	*issue = bench_now() - t0;
	return frz_wait(g, want, t0, done);
}

static bool frz_suspend(struct gang *g, uint64_t *issue, uint64_t *done)
{
	return frz_switch(g, 1, issue, done);
}

static bool frz_resume(struct gang *g, uint64_t *issue, uint64_t *done)
{
	return frz_switch(g, 0, issue, done);
}

/* Gangs */

static bool (*const suspend_fn[NR_MECH])(struct gang *, uint64_t *,
					  uint64_t *) = {
	bcs_suspend, sig_suspend, frz_suspend,
};

static bool (*const resume_fn[NR_MECH])(struct gang *, uint64_t *,
					 uint64_t *) = {
	bcs_resume, sig_resume, frz_resume,
};

/* Scheduler state letter and wait channel of thread @tid from /proc. */
static void proc_state(pid_t tid, char *state, char *wchan, size_t len)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	*state = '?';
	snprintf(wchan, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ')
			*state = p[2];
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/wchan", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, wchan, len - 1);
		wchan[n > 0 ? n : 0] = 0;
		close(fd);
	}
}

static const char *const bcs_task_state_name[] = {
	"runnable", "blocked", "parked",
};

/*
 * After a timeout, say precisely what the tasks that did not run look like
 * to /proc and to bcs, for the report.
 */
static void dump_stuck(struct gang *g, const char *when)
{
	struct bcs_task_stat *ts = NULL;
	struct bcs_task_list tl = { .size = sizeof(tl) };
	struct bcs_job_info info;
	struct bcs_state st;
	unsigned int i, j, shown = 0, stuck = 0;
	char state, wchan[64];

	for (i = 0; i < g->n; i++)
		stuck += __atomic_load_n(&g->slots[i].count,
					 __ATOMIC_RELAXED) == g->snap[i];
	fprintf(stderr, "  diagnostics (%s): %u of %u tasks did not run "
		"since the last snapshot\n", when, stuck, g->n);
	if (g->job && !bench_job_info(bcs_fd, g->job, &info))
		fprintf(stderr, "  bcs job %u: state %u, %u tasks, %u parked\n",
			info.id, info.state, info.nr_tasks, info.nr_parked);
	if (bcs_fd >= 0 && !bench_get_state(bcs_fd, &st))
		fprintf(stderr, "  bcs: mode %u row %u slice %llu, %u tasks, "
			"%u parked, %llu switches, %llu failopens\n", st.mode,
			st.row, (unsigned long long)st.slice, st.nr_tasks,
			st.nr_parked, (unsigned long long)st.switches,
			(unsigned long long)st.failopens);
	if (g->job) {
		ts = calloc(g->n, sizeof(*ts));
		tl.job = g->job;
		tl.count = ts ? g->n : 0;
		tl.tasks = (uintptr_t)ts;
		if (!ts || bench_ioctl(bcs_fd, BCS_IOC_TASK_STATS, &tl))
			tl.count = 0;
		if (tl.count > g->n)
			tl.count = g->n;
	}
	for (i = 0; i < g->n && shown < 8; i++) {
		int32_t tid = __atomic_load_n(&g->slots[i].tid,
					      __ATOMIC_RELAXED);

		if (__atomic_load_n(&g->slots[i].count, __ATOMIC_RELAXED) !=
		    g->snap[i])
			continue;
		shown++;
		proc_state(tid, &state, wchan, sizeof(wchan));
		fprintf(stderr, "  task %d: /proc state %c wchan %s", tid,
			state, wchan);
		for (j = 0; j < tl.count; j++) {
			if (ts[j].pid != tid)
				continue;
			fprintf(stderr, ", bcs %s, parks %llu, parked %.1f ms",
				ts[j].state < 3 ?
				bcs_task_state_name[ts[j].state] : "?",
				(unsigned long long)ts[j].parks,
				ts[j].suspended_ns / 1e6);
		}
		fprintf(stderr, "\n");
	}
	free(ts);
}

/*
 * After a timeout: resume the gang through every mechanism in use, so that
 * the others can still be measured.  Returns whether every task runs.
 */
static bool rescue(struct gang *g)
{
	unsigned int i;
	uint64_t t;

	if (g->job)
		bench_strobe_now(bcs_fd, ++bcs_slice, 0);
	for (i = 0; i < g->nr_procs; i++)
		kill(g->pids[i], SIGCONT);
	/* Reap the reports the signals made, without waiting. */
	for (i = 0; i < g->nr_procs; i++)
		while (waitpid(g->pids[i], NULL,
			       WNOHANG | WUNTRACED | WCONTINUED) > 0)
			;
	if (g->cg.freeze_fd >= 0 && bench_cgroup_freeze(&g->cg, false))
		perror("cgroup.freeze");
	snapshot(g);
	return wait_all_ran(g, bench_now(), &t);
}

static void gang_start(struct gang *g, unsigned int n, bool threads)
{
	size_t len = (size_t)n * sizeof(struct slot);
	uint64_t t0;
	unsigned int i;

	memset(g, 0, sizeof(*g));
	gang_timeout_ns = opt.timeout_ns + n * TIMEOUT_PER_TASK;
	g->threads = threads;
	g->n = n;
	g->nr_procs = threads ? 1 : n;
	g->cg.freeze_fd = g->cg.events_fd = -1;
	g->pids = calloc(g->nr_procs, sizeof(*g->pids));
	g->snap = calloc(n, sizeof(*g->snap));
	g->slots = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!g->pids || !g->snap || g->slots == MAP_FAILED)
		bench_die("gang memory");

	if (threads)
		g->pids[0] = spawn_threads(g->slots, n);
	else
		for (i = 0; i < n; i++)
			g->pids[i] = spawn_procs(&g->slots[i]);

	/* Every task is running before it is attached anywhere. */
	snapshot(g);
	t0 = bench_now();
	if (!wait_all_ran(g, t0, &t0))
		fprintf(stderr, "warning: not all %u tasks started\n", n);
}

static void gang_stop(struct gang *g)
{
	unsigned int i;

	for (i = 0; i < g->nr_procs; i++)
		kill(g->pids[i], SIGKILL);
	/* SIGKILL ends stopped, frozen and parked tasks alike. */
	alarm_arm(true);
	for (i = 0; i < g->nr_procs && !alarm_fired; i++)
		while (waitpid(g->pids[i], NULL, 0) < 0 && errno == EINTR &&
		       !alarm_fired)
			;
	alarm_arm(false);
	munmap(g->slots, (size_t)g->n * sizeof(struct slot));
	free(g->pids);
	free(g->snap);
}

/* Kernel switch times from the /dev/bcsstat records of one gang. */
static void print_kernel_switch(const struct gang *g, uint64_t from,
				uint64_t to)
{
	struct bench_samples s[2];
	struct bcs_slice_record rec;
	unsigned int bad = 0, lost = 0;
	uint64_t seq;
	int i;

	if (!have_ring)
		return;
	bench_samples_init(&s[0], 64);
	bench_samples_init(&s[1], 64);
	for (seq = from; seq < to; seq++) {
		if (!bench_ring_read(&ring, seq, &rec)) {
			lost++;
			continue;
		}
		if (!(rec.flags & BCS_SLICE_DRIVEN))
			continue;
		if (rec.row == 1) {
			bench_samples_add(&s[0], rec.switch_ns);
			bad += rec.nr_suspended != g->n;
		} else {
			bench_samples_add(&s[1], rec.switch_ns);
		}
	}
	printf("  kernel switch_ns (/dev/bcsstat): suspend med %.1f p90 %.1f "
	       "us (%zu), resume med %.1f p90 %.1f us (%zu)",
	       bench_percentile(&s[0], 50) / 1e3,
	       bench_percentile(&s[0], 90) / 1e3, s[0].n,
	       bench_percentile(&s[1], 50) / 1e3,
	       bench_percentile(&s[1], 90) / 1e3, s[1].n);
	if (bad)
		printf("; %u suspends did not park %u tasks", bad, g->n);
	if (lost)
		printf("; %u records lost", lost);
	printf("\n");
	for (i = 0; i < 2; i++)
		bench_samples_free(&s[i]);
}

static void format_cell(char *buf, size_t len, struct result *r,
			enum metric m)
{
	struct bench_samples *s = &r->m[m];

	if (!r->enabled)
		snprintf(buf, len, "-");
	else if (!s->n)
		snprintf(buf, len, s->timeouts ? "timeout" : "-");
	else
		snprintf(buf, len, "%.1f/%.1f%s",
			 bench_percentile(s, 50) / 1e3,
			 bench_percentile(s, 90) / 1e3,
			 s->timeouts ? "+T" : "");
}

static void run_gang(unsigned int n, bool threads)
{
	struct result res[NR_MECH];
	struct summary *sum;
	uint64_t head0 = 0, head1 = 0, start, t0, t[NR_METRIC];
	unsigned int round, rounds, m, k;
	bool give_up = false;
	struct gang g;
	char cell[32];
	bool ok;

	gang_start(&g, n, threads);
	memset(res, 0, sizeof(res));
	for (m = 0; m < NR_MECH; m++) {
		const char *why = NULL;

		if (!opt.use[m]) {
			res[m].why = "not selected";
			continue;
		}
		if (m == M_BCS)
			why = bcs_setup(&g);
		else if (m == M_FRZ)
			why = frz_setup(&g);
		res[m].enabled = !why;
		res[m].why = why;
		for (k = 0; k < NR_METRIC; k++)
			bench_samples_init(&res[m].m[k], opt.rounds);
	}
	if (have_ring)
		head0 = bench_ring_head(&ring);

	start = bench_now();
	for (round = 0; round < opt.rounds && !give_up; round++) {
		if (opt.budget_ns && round >= MIN_ROUNDS &&
		    bench_now() - start > opt.budget_ns)
			break;
		for (m = 0; m < NR_MECH; m++) {
			struct result *r = &res[m];

			if (!r->enabled || r->dead)
				continue;
			memset(t, 0, sizeof(t));
			ok = suspend_fn[m](&g, &t[S_ISSUE], &t[S_DONE]);
			if (!ok) {
				r->m[S_DONE].timeouts++;
				r->dead = true;
			}
			/* Hold the gang stopped and check that it is. */
			snapshot(&g);
			bench_sleep_ns(opt.hold_ns);
			if (ok && nr_moved(&g))
				r->leaks++;
			snapshot(&g);
			t0 = bench_now();
			if (!resume_fn[m](&g, &t[R_ISSUE], &t[R_DONE])) {
				r->m[R_DONE].timeouts++;
				r->dead = true;
				ok = false;
			}
			if (!wait_all_ran(&g, t0, &t[R_RUN])) {
				r->m[R_RUN].timeouts++;
				r->dead = true;
				ok = false;
			}
			if (r->dead) {
				fprintf(stderr, "%s, %u tasks: timeout in "
					"round %u\n", mech_name[m], n, round);
				dump_stuck(&g, "after the timeout");
				if (!rescue(&g)) {
					dump_stuck(&g, "after the rescue");
					fprintf(stderr, "gang of %u stays "
						"stopped: giving up on it\n",
						n);
					give_up = true;
					break;
				}
				continue;
			}
			if (!ok)
				continue;
			for (k = 0; k < NR_METRIC; k++)
				bench_samples_add(&r->m[k], t[k]);
		}
	}
	rounds = round;
	if (have_ring)
		head1 = bench_ring_head(&ring);

	printf("\ngang of %u %s (%u tasks), %u rounds in %.1f s; "
	       "us, median/p90\n", n,
	       threads ? "threads in one process" : "processes", g.n,
	       rounds, (double)(bench_now() - start) / 1e9);
	printf("  %-9s", "mechanism");
	for (k = 0; k < NR_METRIC; k++)
		printf(" %17s", metric_name[k]);
	printf("\n");
	sum = &summaries[nr_summaries++];
	sum->threads = threads;
	sum->n = n;
	for (m = 0; m < NR_MECH; m++) {
		printf("  %-9s", mech_name[m]);
		for (k = 0; k < NR_METRIC; k++) {
			format_cell(cell, sizeof(cell), &res[m], k);
			printf(" %17s", cell);
			if (res[m].enabled && res[m].m[k].n) {
				sum->med[m][k] =
					bench_percentile(&res[m].m[k], 50);
				sum->have[m][k] = true;
			}
		}
		if (!res[m].enabled && res[m].why)
			printf("  (%s)", res[m].why);
		if (res[m].leaks)
			printf("  (ran while stopped in %u rounds!)",
			       res[m].leaks);
		printf("\n");
	}
	if (res[M_BCS].enabled)
		print_kernel_switch(&g, head0, head1);
	fflush(stdout);

	if (res[M_BCS].enabled)
		bcs_teardown(&g);
	bench_cgroup_close(&g.cg);
	gang_stop(&g);
	bench_cgroup_remove(&g.cg);
	for (m = 0; m < NR_MECH; m++)
		for (k = 0; k < NR_METRIC; k++)
			bench_samples_free(&res[m].m[k]);
}

static void print_ratios(enum mech m)
{
	unsigned int i, k;

	printf("\nratio of medians %s/bcs (> 1: bcs is faster)\n",
	       mech_name[m]);
	printf("  %-8s %5s", "gang", "N");
	for (k = 0; k < NR_METRIC; k++)
		printf(" %11s", metric_name[k]);
	printf("\n");
	for (i = 0; i < nr_summaries; i++) {
		struct summary *s = &summaries[i];

		printf("  %-8s %5u", s->threads ? "threads" : "procs", s->n);
		for (k = 0; k < NR_METRIC; k++) {
			if (!s->have[m][k] || !s->have[M_BCS][k] ||
			    !s->med[M_BCS][k])
				printf(" %11s", "-");
			else
				printf(" %11.2f", (double)s->med[m][k] /
						  (double)s->med[M_BCS][k]);
		}
		printf("\n");
	}
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-r ROUNDS] [-b SEC] [-n N[,N...]] "
		"[-g procs|threads|both]\n"
		"          [-m MECH[,MECH...]] [-p POLL_US] [-w TIMEOUT_S]\n"
		"  -r  suspend/resume rounds per mechanism and gang (20)\n"
		"  -b  time budget per gang in seconds: no new round after it,\n"
		"      but at least %d rounds (0: none)\n"
		"  -n  gang sizes (1,8,64,256)\n"
		"  -g  gangs of processes, of threads of one process, or both\n"
		"  -m  mechanisms among bcs, sigstop, freezer (all)\n"
		"  -p  shortest polling interval of the controller in us (20)\n"
		"  -w  timeout of one switch in seconds, plus 0.1 s per task "
		"(10)\n", prog,
		MIN_ROUNDS);
	exit(2);
}

static void parse_sizes(const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	opt.nr_sizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long n = strtoul(tok, NULL, 0);

		if (!n || n > MAX_TASKS || opt.nr_sizes == MAX_SIZES) {
			fprintf(stderr, "bad gang size %s (1..%d, at most %d "
				"sizes)\n", tok, MAX_TASKS, MAX_SIZES);
			exit(2);
		}
		opt.sizes[opt.nr_sizes++] = (unsigned int)n;
	}
	free(copy);
	if (!opt.nr_sizes)
		exit(2);
}

static void parse_mechs(const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned int m;

	memset(opt.use, 0, sizeof(opt.use));
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (m = 0; m < NR_MECH; m++)
			if (!strcmp(tok, mech_name[m]))
				break;
		if (m == NR_MECH) {
			fprintf(stderr, "unknown mechanism %s\n", tok);
			exit(2);
		}
		opt.use[m] = true;
	}
	free(copy);
}

static void parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "r:b:n:g:m:p:w:h")) != -1) {
		switch (c) {
		case 'r':
			opt.rounds = (unsigned int)strtoul(optarg, NULL, 0);
			if (!opt.rounds)
				usage(argv[0]);
			break;
		case 'b':
			opt.budget_ns = strtoull(optarg, NULL, 0) *
					NSEC_PER_SEC;
			break;
		case 'n':
			parse_sizes(optarg);
			break;
		case 'g':
			opt.procs = !strcmp(optarg, "procs") ||
				    !strcmp(optarg, "both");
			opt.threads = !strcmp(optarg, "threads") ||
				      !strcmp(optarg, "both");
			if (!opt.procs && !opt.threads)
				usage(argv[0]);
			break;
		case 'm':
			parse_mechs(optarg);
			break;
		case 'p':
			opt.poll_ns = strtoull(optarg, NULL, 0) * NSEC_PER_USEC;
			break;
		case 'w':
			opt.timeout_ns = strtoull(optarg, NULL, 0) *
					 NSEC_PER_SEC;
			if (!opt.timeout_ns)
				usage(argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	unsigned int i;
	int err;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* No SA_RESTART: the alarm must interrupt waitpid(). */
	sigaction(SIGALRM, &sa, NULL);

	printf("switch_cost: %u online CPUs, up to %u rounds, budget %llu s "
	       "per gang, poll %llu us, timeout %llu s + 0.1 s per task\n",
	       bench_nr_cpus(),
	       opt.rounds, (unsigned long long)(opt.budget_ns / NSEC_PER_SEC),
	       (unsigned long long)(opt.poll_ns / NSEC_PER_USEC),
	       (unsigned long long)(opt.timeout_ns / NSEC_PER_SEC));
	printf("controller: %s\n", bench_set_fifo(FIFO_PRIO) ?
	       "SCHED_FIFO 50" : "SCHED_OTHER (SCHED_FIFO refused)");

	if (opt.use[M_BCS]) {
		bcs_fd = open(BCS_DEV, O_RDWR | O_CLOEXEC);
		if (bcs_fd < 0) {
			fprintf(stderr, "%s: %s: bcs not measured\n", BCS_DEV,
				strerror(errno));
		} else {
			/* This file is the driver; no watchdog. */
			err = bench_config(bcs_fd, BCS_MODE_DRIVEN, 0, 0);
			if (err) {
				errno = -err;
				bench_die("BCS_IOC_CONFIG driven");
			}
			have_ring = !bench_ring_open(&ring);
			if (!have_ring)
				fprintf(stderr, "no /dev/bcsstat mapping\n");
		}
	}
	if (opt.use[M_FRZ]) {
		const char *why;

		bench_cgroup_root(&why);
	}
	for (i = 0; i < opt.nr_sizes; i++) {
		if (opt.procs)
			run_gang(opt.sizes[i], false);
		if (opt.threads)
			run_gang(opt.sizes[i], true);
	}

	if (opt.use[M_BCS]) {
		if (opt.use[M_SIG])
			print_ratios(M_SIG);
		if (opt.use[M_FRZ])
			print_ratios(M_FRZ);
		printf("\nres-done is not like for like: bcs confirms a resume "
		       "when every task has\nleft its parking, i.e. has run; "
		       "a continued report and \"frozen 0\" come\nbefore "
		       "the tasks run.  res-run is the comparable resume "
		       "time.\n");
	}

	if (bcs_fd >= 0) {
		/* Leave driven mode on purpose rather than by closing. */
		bench_config(bcs_fd, BCS_MODE_OFF, 0, 0);
		if (have_ring)
			bench_ring_close(&ring);
		close(bcs_fd);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Suspension requirements, one test each: complete, invisible to job
 * control, killable (whatever else is pending), quiet (no load, no
 * hung-task reports), cheap to resume, and no obstacle to system suspend.
 * Switches are driven deterministically: DRIVEN mode from the
 * test's own file, watchdog off, the job in row 0; a strobe to row 1
 * suspends it and a strobe to row 0 resumes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcs_test_util.h"
#include "bcs_harness.h"

FIXTURE(suspend) {
	int fd;
	struct bt_burner b;
	char hung_saved[32];
};

FIXTURE_SETUP(suspend)
{
	self->fd = bt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bt_reset(self->fd));
	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_A, 0, NULL));
	ASSERT_EQ(0, bt_drive(self->fd));
}

FIXTURE_TEARDOWN(suspend)
{
	/* Resume first so that nothing is left parked even if kill fails. */
	if (self->fd >= 0) {
		EXPECT_EQ(0, bt_reset(self->fd));
	}
	bt_burner_stop(&self->b);
	if (self->hung_saved[0])
		bt_write_file("/proc/sys/kernel/hung_task_timeout_secs",
			      self->hung_saved);
	if (self->fd >= 0) {
		/* Resuming is asynchronous: parked tasks wake up and leave. */
		EXPECT_TRUE(bt_wait_none_parked(self->fd));
		close(self->fd);
	}
}

static int start_attached(FIXTURE_DATA(suspend) *self, int nthreads,
			  bool sleepy)
{
	uint32_t nr = 0;
	int ret = bt_burner_start(&self->b, nthreads, sleepy);

	if (ret)
		return ret;
	ret = bt_attach(self->fd, BT_JOB_A, self->b.pid, 0, &nr);
	if (ret)
		return ret;
	return nr == (uint32_t)nthreads ? 0 : -EPROTO;
}

/* Every thread of the burner in a state other than R, D and T. */
static bool all_quiet(const struct bt_burner *b, char *bad)
{
	int i;

	for (i = 0; i < b->nthreads; i++) {
		char s = bt_thread_state(b->pid, b->sh->tid[i]);

		if (s == 'R' || s == 'D' || s == 'T' || s == 't' || !s) {
			*bad = s ? s : '?';
			return false;
		}
	}
	return true;
}

TEST_F(suspend, complete)
{
	long long t1[8], t2[8], t3[8];
	uint64_t c1[8], c2[8];
	struct bcs_job_info ji;
	char bad = 0;
	int i;

	ASSERT_EQ(0, start_attached(self, 4, false));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(BCS_JOB_SUSPENDED, ji.state);
	EXPECT_EQ(4, ji.nr_parked);

	for (i = 0; i < 4; i++)
		t1[i] = bt_thread_ticks(self->b.pid, self->b.sh->tid[i]);
	bt_burner_counters(&self->b, c1);
	bt_sleep_ms(300);
	for (i = 0; i < 4; i++)
		t2[i] = bt_thread_ticks(self->b.pid, self->b.sh->tid[i]);
	bt_burner_counters(&self->b, c2);
	/* No thread of the process got any CPU time in between. */
	for (i = 0; i < 4; i++) {
		EXPECT_LE(0, t1[i]);
		EXPECT_EQ(t1[i], t2[i]) TH_LOG("thread %d ran while suspended",
					       self->b.sh->tid[i]);
		EXPECT_EQ(c1[i], c2[i]);
	}
	EXPECT_TRUE(all_quiet(&self->b, &bad)) TH_LOG("state %c", bad);

	/* Resume: every thread counts on from where it stopped. */
	ASSERT_EQ(0, bt_resume_row0(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(BCS_JOB_RUNNING, ji.state);
	EXPECT_TRUE(WAIT_UNTIL(bt_burner_all_advanced(&self->b, c2),
			       BT_WAIT_MS));
	for (i = 0; i < 4; i++) {
		EXPECT_TRUE(WAIT_UNTIL((t3[i] = bt_thread_ticks(self->b.pid,
						self->b.sh->tid[i])) > t2[i],
				       BT_WAIT_MS));
	}
	/* Memory and process state survived. */
	EXPECT_EQ(0, self->b.sh->corrupt);
	EXPECT_EQ(0, kill(self->b.pid, 0));
	EXPECT_EQ(0, waitpid(self->b.pid, NULL, WNOHANG));
}

static volatile int sigchld_count;

static void on_sigchld(int sig)
{
	(void)sig;
	sigchld_count++;
}

TEST_F(suspend, invisible_to_job_control)
{
	struct sigaction sa = { .sa_handler = on_sigchld };
	char path[64], buf[512], *p;
	int status = 0, i;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGCHLD, &sa, NULL));
	sigchld_count = 0;
	ASSERT_EQ(0, start_attached(self, 2, false));
	snprintf(path, sizeof(path), "/proc/%d/stat", self->b.pid);

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
		bt_sleep_ms(100);
		EXPECT_EQ(0, waitpid(self->b.pid, &status,
				     WUNTRACED | WCONTINUED | WNOHANG))
			TH_LOG("wait status 0x%x while suspended", status);
		ASSERT_EQ(0, bt_read_file(path, buf, sizeof(buf)));
		p = strrchr(buf, ')');
		ASSERT_NE(NULL, p);
		EXPECT_NE('T', p[2]);
		EXPECT_NE('t', p[2]);
		ASSERT_EQ(0, bt_resume_row0(self->fd, BT_JOB_A));
		bt_sleep_ms(100);
		EXPECT_EQ(0, waitpid(self->b.pid, &status,
				     WUNTRACED | WCONTINUED | WNOHANG))
			TH_LOG("wait status 0x%x after resume", status);
	}
	EXPECT_EQ(0, sigchld_count);
	signal(SIGCHLD, SIG_DFL);
}

/*
 * Kill a suspended burner of @nthreads threads with @sig: it must die of
 * @sig while the job is parked.  With @behind_pending, every thread first
 * gets a SIGUSR1 that its handler would take, which stays pending: the
 * kernel then turns no signal into SIGKILL and wakes no killable sleep,
 * and the burner must die all the same, without running the handler.
 */
static void kill_suspended(struct __test_metadata *_metadata,
			   FIXTURE_DATA(suspend) *self, int nthreads, int sig,
			   bool behind_pending)
{
	const struct rlimit nocore = { 0, 0 };
	struct bcs_job_info ji;
	int status = 0, i;

	ASSERT_EQ(0, start_attached(self, nthreads, false));
	/* Signals that dump core must not depend on a writable directory. */
	ASSERT_EQ(0, prlimit(self->b.pid, RLIMIT_CORE, &nocore, NULL));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	if (behind_pending) {
		for (i = 0; i < nthreads; i++)
			ASSERT_EQ(0, tgkill(self->b.pid, self->b.sh->tid[i],
					    SIGUSR1));
		bt_sleep_ms(50);
		ASSERT_EQ(0, self->b.sh->usr1) TH_LOG("handler ran while suspended");
	}
	ASSERT_EQ(0, kill(self->b.pid, sig));
	ASSERT_EQ(self->b.pid, bt_waitpid_bounded(self->b.pid, &status,
						  BT_WAIT_MS))
		TH_LOG("signal %d did not end the suspended process", sig);
	self->b.pid = 0;
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(sig, WTERMSIG(status));
	EXPECT_EQ(0, self->b.sh->usr1) TH_LOG("handler ran while suspended");
	/* No strobe has happened: the job is still suspended. */
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(BCS_JOB_SUSPENDED, ji.state);
	EXPECT_EQ(0, ji.nr_tasks);
	EXPECT_EQ(0, ji.nr_parked);
}

TEST_F(suspend, killable_sigkill)
{
	kill_suspended(_metadata, self, 3, SIGKILL, false);
}

TEST_F(suspend, killable_sigterm_default)
{
	kill_suspended(_metadata, self, 3, SIGTERM, false);
}

/* Default action: terminate with a core dump. */
TEST_F(suspend, killable_sigquit_default)
{
	kill_suspended(_metadata, self, 3, SIGQUIT, false);
}

TEST_F(suspend, killable_sigterm_behind_pending_signal)
{
	kill_suspended(_metadata, self, 1, SIGTERM, true);
}

TEST_F(suspend, killable_threads_behind_pending_signals)
{
	kill_suspended(_metadata, self, 3, SIGTERM, true);
}

TEST_F(suspend, killable_sigkill_behind_pending_signal)
{
	kill_suspended(_metadata, self, 1, SIGKILL, true);
}

TEST_F(suspend, handled_signal_waits_for_resume)
{
	int i;

	ASSERT_EQ(0, start_attached(self, 2, false));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	ASSERT_EQ(0, kill(self->b.pid, SIGUSR1));
	for (i = 0; i < 30; i++) {
		bt_sleep_ms(10);
		ASSERT_EQ(0, self->b.sh->usr1) TH_LOG("handler ran while suspended");
	}
	/* The signal did not wake the job up either. */
	EXPECT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_resume_row0(self->fd, BT_JOB_A));
	EXPECT_TRUE(WAIT_UNTIL(self->b.sh->usr1 == 1, BT_WAIT_MS));
	EXPECT_EQ(0, waitpid(self->b.pid, NULL, WNOHANG));
}

/* Wait (bounded) for a wait status of @pid matching @flags; 0 if none. */
static int wait_status(pid_t pid, int flags)
{
	int status = 0;

	if (!WAIT_UNTIL(waitpid(pid, &status, flags | WNOHANG) == pid,
			BT_WAIT_MS))
		return 0;
	return status;
}

static uint32_t job_state(int fd, uint32_t id)
{
	struct bcs_job_info ji;

	return bt_job_info(fd, id, &ji) ? ~0U : ji.state;
}

/*
 * Job control by the process's own user and bcs are independent.  A
 * process stopped with SIGSTOP stays stopped through a suspend and resume
 * of its gang, and its parent hears nothing more; continued while its
 * gang is suspended, it parks rather than runs.
 */
TEST_F(suspend, user_stop_outlives_gang_switches)
{
	long long t0, t1;
	int status;

	ASSERT_EQ(0, start_attached(self, 1, false));
	ASSERT_EQ(0, kill(self->b.pid, SIGSTOP));
	status = wait_status(self->b.pid, WUNTRACED);
	ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);

	/* Its gang is suspended and resumed: it stays stopped. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	ASSERT_TRUE(WAIT_UNTIL(job_state(self->fd, BT_JOB_A) ==
			       BCS_JOB_SUSPENDED, BT_WAIT_MS));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	ASSERT_TRUE(WAIT_UNTIL(job_state(self->fd, BT_JOB_A) ==
			       BCS_JOB_RUNNING, BT_WAIT_MS));
	bt_sleep_ms(200);
	EXPECT_EQ('T', bt_thread_state(self->b.pid, self->b.pid));
	EXPECT_EQ(0, waitpid(self->b.pid, &status,
			     WUNTRACED | WCONTINUED | WNOHANG));

	/* Continued by its user while its gang is suspended: it parks. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	ASSERT_TRUE(WAIT_UNTIL(job_state(self->fd, BT_JOB_A) ==
			       BCS_JOB_SUSPENDED, BT_WAIT_MS));
	ASSERT_EQ(0, kill(self->b.pid, SIGCONT));
	status = wait_status(self->b.pid, WCONTINUED);
	EXPECT_TRUE(WIFCONTINUED(status));
	EXPECT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	t0 = bt_proc_ticks(self->b.pid);
	bt_sleep_ms(300);
	t1 = bt_proc_ticks(self->b.pid);
	EXPECT_LE(0, t0);
	EXPECT_EQ(t0, t1) TH_LOG("ran while its gang was suspended");

	ASSERT_EQ(0, bt_resume_row0(self->fd, BT_JOB_A));
	EXPECT_TRUE(WAIT_UNTIL(bt_proc_ticks(self->b.pid) > t1, BT_WAIT_MS));
	EXPECT_EQ(0, self->b.sh->corrupt);
}

/*
 * SIGSTOP sent to a parked process takes effect when its gang resumes,
 * like any other signal: then it stops, its parent sees the stop, and
 * SIGCONT lets it run.
 */
TEST_F(suspend, sigstop_while_parked_stops_at_resume)
{
	long long t0;
	int status = 0;

	ASSERT_EQ(0, start_attached(self, 2, false));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	ASSERT_EQ(0, kill(self->b.pid, SIGSTOP));
	bt_sleep_ms(100);
	EXPECT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
	EXPECT_EQ(0, waitpid(self->b.pid, &status, WUNTRACED | WNOHANG))
		TH_LOG("stop reported while parked: 0x%x", status);

	ASSERT_EQ(0, bt_resume_row0(self->fd, BT_JOB_A));
	status = wait_status(self->b.pid, WUNTRACED);
	EXPECT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP)
		TH_LOG("wait status 0x%x after resume", status);
	EXPECT_TRUE(WAIT_UNTIL(bt_thread_state(self->b.pid,
					       self->b.sh->tid[1]) == 'T',
			       BT_WAIT_MS));

	t0 = bt_proc_ticks(self->b.pid);
	ASSERT_EQ(0, kill(self->b.pid, SIGCONT));
	EXPECT_TRUE(WAIT_UNTIL(bt_proc_ticks(self->b.pid) > t0, BT_WAIT_MS));
	EXPECT_EQ(0, self->b.sh->corrupt);
}

struct fork_sh {
	volatile uint64_t count;	/* the child's */
	volatile pid_t child;
	volatile int go;
};

/*
 * A child forked by a member after it was attached joins the gang (the
 * inherit tests show the membership) and is suspended and resumed with
 * it: it uses no CPU while its gang is out.
 */
TEST_F(suspend, forked_child_parks_with_its_gang)
{
	struct fork_sh *sh;
	struct bcs_job_info ji;
	long long t0, t1;
	uint64_t c0;
	uint32_t nr = 0;
	pid_t p, c;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset((void *)sh, 0, sizeof(*sh));
	p = fork();
	ASSERT_LE(0, p);
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (!sh->go)
			;
		c = fork();
		if (c == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				sh->count++;
		}
		sh->child = c;
		for (;;)
			;
	}
	self->b.pid = p;	/* the teardown kills and reaps it */
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_A, p, 0, &nr));
	ASSERT_EQ(1, nr);
	sh->go = 1;
	ASSERT_TRUE(WAIT_UNTIL(sh->child != 0, BT_WAIT_MS));
	ASSERT_LT(0, sh->child);
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(2, ji.nr_tasks);

	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_job_info(self->fd, BT_JOB_A, &ji));
	EXPECT_EQ(2, ji.nr_parked);
	c0 = sh->count;
	t0 = bt_proc_ticks(sh->child);
	bt_sleep_ms(300);
	t1 = bt_proc_ticks(sh->child);
	EXPECT_LE(0, t0);
	EXPECT_EQ(t0, t1) TH_LOG("the child ran while its gang was out");
	EXPECT_EQ(c0, sh->count);

	ASSERT_EQ(0, bt_resume_row0(self->fd, BT_JOB_A));
	EXPECT_TRUE(WAIT_UNTIL(sh->count > c0, BT_WAIT_MS));
	kill(sh->child, SIGKILL);
	munmap((void *)sh, sizeof(*sh));
}

/* Destroying a suspended job lets its parked tasks run at once. */
TEST_F(suspend, destroy_of_suspended_job_resumes_it)
{
	struct bcs_state st;
	uint64_t c[4];

	ASSERT_EQ(0, start_attached(self, 4, false));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	bt_burner_counters(&self->b, c);
	ASSERT_EQ(0, bt_job_destroy(self->fd, BT_JOB_A));
	EXPECT_TRUE(WAIT_UNTIL(bt_burner_all_advanced(&self->b, c),
			       BT_WAIT_MS));
	ASSERT_EQ(0, bt_get_state(self->fd, &st));
	EXPECT_EQ(0, st.nr_tasks);
	EXPECT_EQ(0, self->b.sh->corrupt);
}

/*
 * A suspended job moved to another row stays suspended until a switch
 * runs that row; moved to no row, it runs from the next switch on and is
 * never suspended again.
 */
TEST_F(suspend, row_change_of_suspended_job_takes_effect_at_a_switch)
{
	uint64_t c[2];

	ASSERT_EQ(0, start_attached(self, 2, false));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));	/* row 1 runs */
	ASSERT_EQ(0, bt_job_set_row(self->fd, BT_JOB_A, 2));
	bt_sleep_ms(200);
	EXPECT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	bt_sleep_ms(200);
	EXPECT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));

	/* A switch to its new row runs it. */
	bt_burner_counters(&self->b, c);
	ASSERT_EQ(0, bt_strobe_now(self->fd, 2));
	EXPECT_TRUE(WAIT_UNTIL(bt_burner_all_advanced(&self->b, c),
			       BT_WAIT_MS));

	/* Suspended again, then moved to no row: the next switch frees it. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	ASSERT_TRUE(WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
			       BT_WAIT_MS));
	ASSERT_EQ(0, bt_job_set_row(self->fd, BT_JOB_A, BCS_ROW_NONE));
	bt_burner_counters(&self->b, c);
	ASSERT_EQ(0, bt_strobe_now(self->fd, 3));
	EXPECT_TRUE(WAIT_UNTIL(bt_burner_all_advanced(&self->b, c),
			       BT_WAIT_MS));
	ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
	bt_sleep_ms(200);
	EXPECT_TRUE(bt_job_none_parked(self->fd, BT_JOB_A));
	EXPECT_EQ(0, self->b.sh->corrupt);
}

/* Field 4 of /proc/loadavg: runnable/total. */
static int loadavg_running(double *avg1)
{
	char buf[128];
	int running = -1;

	if (bt_read_file("/proc/loadavg", buf, sizeof(buf)))
		return -1;
	if (sscanf(buf, "%lf %*f %*f %d/", avg1, &running) != 2)
		return -1;
	return running;
}

TEST_F_TIMEOUT(suspend, quiet_no_load, 60)
{
	double avg_before = 0, avg = 0;
	char bad = 0;
	int i, run;

	ASSERT_EQ(0, start_attached(self, 8, false));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	ASSERT_LE(0, loadavg_running(&avg_before));
	/* ~3 s of samples: no burner counts as running or blocked. */
	for (i = 0; i < 30; i++) {
		ASSERT_TRUE(all_quiet(&self->b, &bad))
			TH_LOG("a suspended thread is in state %c", bad);
		run = loadavg_running(&avg);
		ASSERT_LE(0, run);
		EXPECT_GT(8, run) TH_LOG("%d runnable tasks", run);
		bt_sleep_ms(100);
	}
	/*
	 * The 1-minute average moves too slowly to test in 3 s; the count
	 * of runnable tasks above, from which it is made, is the check.
	 */
	TH_LOG("load average %.2f -> %.2f while suspended", avg_before, avg);
	EXPECT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
}

/* Skip old kernel messages, then collect new ones until none is left. */
static int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static bool kmsg_find(int fd, const char *needle, char *line, size_t len)
{
	char rec[2048];
	ssize_t n;
	int i;

	/* Bounded: at most a few thousand records. */
	for (i = 0; i < 4096; i++) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0) {
			if (errno == EPIPE)	/* overwritten: go on */
				continue;
			break;
		}
		rec[n] = 0;
		if (strstr(rec, needle)) {
			rec[len - 1] = 0;
			memcpy(line, rec, len);
			return true;
		}
	}
	return false;
}

TEST_F_TIMEOUT(suspend, quiet_no_hung_task, 60)
{
	const char *knob = "/proc/sys/kernel/hung_task_timeout_secs";
	char buf[32], line[512] = "";
	int kfd, i;

	if (bt_read_file(knob, self->hung_saved, sizeof(self->hung_saved)))
		SKIP(return, "no hung task detector (%s)", knob);
	if (!bt_read_file("/proc/sys/kernel/hung_task_warnings", buf,
			  sizeof(buf)) && atoi(buf) == 0) {
		self->hung_saved[0] = 0;
		SKIP(return, "hung task warnings are used up");
	}
	kfd = kmsg_open_at_end();
	ASSERT_LE(0, kfd);
	ASSERT_EQ(0, bt_write_file(knob, "2"));
	ASSERT_EQ(0, start_attached(self, 8, false));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	/* Two full detector periods and some more. */
	for (i = 0; i < 60; i++) {
		bt_sleep_ms(100);
		ASSERT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
	}
	EXPECT_FALSE(kmsg_find(kfd, "blocked for more than", line,
			       sizeof(line)))
		TH_LOG("hung task report: %s", line);
	close(kfd);
}

TEST_F_TIMEOUT(suspend, resume_wakes_whole_gang, 90)
{
	enum { N = 64 };
	struct bcs_task_stat *ts = NULL;
	long long t_susp[N], t = 0;
	uint64_t c[N];
	int i, n, parked;

	ASSERT_EQ(0, start_attached(self, N, false));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	for (i = 0; i < N; i++)
		t_susp[i] = bt_thread_ticks(self->b.pid, self->b.sh->tid[i]);
	bt_burner_counters(&self->b, c);

	/* One strobe, nothing else: every thread must run again. */
	ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
	EXPECT_TRUE(WAIT_UNTIL(bt_burner_all_advanced(&self->b, c),
			       BT_WAIT_MS));
	n = bt_task_stats(self->fd, BT_JOB_A, &ts);
	ASSERT_EQ(N, n);
	for (i = 0, parked = 0; i < n; i++)
		parked += ts[i].state == BCS_TASK_PARKED;
	free(ts);
	EXPECT_EQ(0, parked);
	for (i = 0; i < N; i++) {
		pid_t tid = self->b.sh->tid[i];

		EXPECT_TRUE(WAIT_UNTIL((t = bt_thread_ticks(self->b.pid, tid))
				       > t_susp[i], BT_WAIT_MS))
			TH_LOG("thread %d: %lld ticks", tid, t);
	}
}

/*
 * Job A resumed and at once suspended again, many times, while job B is
 * switched the other way: every task of A must end up parked each time.
 * A task that saw A resumed but had not yet left its parking when the
 * second strobe came must not be taken for still parked, and so be left
 * running while A is suspended.  B's tasks leaving their parking keep the
 * lock busy, which is what holds a task of A in that state.
 */
TEST_F_TIMEOUT(suspend, resume_then_suspend_at_once, 300)
{
	enum { N = 32, ROUNDS = 200 };
	struct bt_burner other = { 0 };
	uint32_t nr = 0;
	int i;

	ASSERT_EQ(0, bt_job_create(self->fd, BT_JOB_B, 1, NULL));
	ASSERT_EQ(0, start_attached(self, N, false));
	ASSERT_EQ(0, bt_burner_start(&other, N, false));
	ASSERT_EQ(0, bt_attach(self->fd, BT_JOB_B, other.pid, 0, &nr));
	ASSERT_EQ(N, nr);
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));
	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, bt_strobe_now(self->fd, 0));
		ASSERT_EQ(0, bt_strobe_now(self->fd, 1));
		if (!WAIT_UNTIL(bt_job_all_parked(self->fd, BT_JOB_A),
				BT_WAIT_MS))
			break;
	}
	EXPECT_EQ(ROUNDS, i) TH_LOG("round %d: a task of suspended job A runs", i);
	bt_burner_stop(&other);
}

/*
 * System suspend and hibernation freeze every user task first: a parked
 * task must let itself be frozen where it sleeps, or suspend fails.  The
 * PM core's "freezer" test mode freezes all tasks, waits, thaws them and
 * suspends no device.  Afterwards the job is still parked and resumes.
 */
TEST_F_TIMEOUT(suspend, freezable_for_system_suspend, 90)
{
	static const char *const test_knob = "/sys/power/pm_test";
	static const char *const timeout_knob = "/sys/power/pm_freeze_timeout";
	char states[128], saved_timeout[32] = "";
	uint64_t c[8];
	int ret;

	if (bt_read_file(test_knob, states, sizeof(states)))
		SKIP(return, "no %s (CONFIG_PM_DEBUG)", test_knob);
	if (bt_read_file("/sys/power/state", states, sizeof(states)) ||
	    !strstr(states, "freeze"))
		SKIP(return, "no suspend-to-idle in /sys/power/state");
	ASSERT_EQ(0, start_attached(self, 2, false));
	ASSERT_EQ(0, bt_suspend_row0(self->fd, BT_JOB_A));

	/* Fail in seconds rather than the default 20 if it cannot freeze. */
	bt_read_file(timeout_knob, saved_timeout, sizeof(saved_timeout));
	ASSERT_EQ(0, bt_write_file(timeout_knob, "3000"));
	bt_write_file("/sys/module/suspend/parameters/pm_test_delay", "1");
	ASSERT_EQ(0, bt_write_file(test_knob, "freezer"));
	ret = bt_write_file("/sys/power/state", "freeze");
	EXPECT_EQ(0, bt_write_file(test_knob, "none"));
	if (saved_timeout[0])
		bt_write_file(timeout_knob, saved_timeout);
	EXPECT_EQ(0, ret) TH_LOG("freezing tasks failed: %s", strerror(-ret));

	EXPECT_TRUE(bt_job_all_parked(self->fd, BT_JOB_A));
	bt_burner_counters(&self->b, c);
	ASSERT_EQ(0, bt_resume_row0(self->fd, BT_JOB_A));
	EXPECT_TRUE(WAIT_UNTIL(bt_burner_all_advanced(&self->b, c),
			       BT_WAIT_MS));
}

BT_HARNESS_MAIN

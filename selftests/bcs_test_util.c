// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers for the bcs selftests.  Kept free of the test harness so
 * that they can be used from forked children that must not touch the
 * harness state.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "bcs_test_util.h"

void bt_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	/* Restart after signal handlers so a sleep is never cut short. */
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

uint64_t bt_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int bt_open(void)
{
	return open(BCS_DEV, O_RDWR | O_CLOEXEC);
}

int bt_open_stat(void)
{
	return open(BCS_STAT_DEV, O_RDONLY | O_CLOEXEC);
}

int bt_open_stat_new(void)
{
	struct bcs_slice_record r;
	int fd, i;

	fd = open(BCS_STAT_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Skip the records already in the ring (bounded by its size). */
	for (i = 0; i < 1000000; i++)
		if (read(fd, &r, sizeof(r)) != sizeof(r))
			break;
	if (errno != EAGAIN) {
		i = -errno;
		close(fd);
		return i;
	}
	return fd;
}

int bt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static int job_op(int fd, unsigned long cmd, uint32_t id, uint32_t row,
		  uint32_t *id_out)
{
	struct bcs_job j = {
		.size = sizeof(j),
		.id = id,
		.row = row,
	};
	int ret = bt_ioctl(fd, cmd, &j);

	if (!ret && id_out)
		*id_out = j.id;
	return ret;
}

int bt_job_create(int fd, uint32_t id, uint32_t row, uint32_t *id_out)
{
	return job_op(fd, BCS_IOC_JOB_CREATE, id, row, id_out);
}

int bt_job_destroy(int fd, uint32_t id)
{
	return job_op(fd, BCS_IOC_JOB_DESTROY, id, BCS_ROW_NONE, NULL);
}

int bt_job_set_row(int fd, uint32_t id, uint32_t row)
{
	return job_op(fd, BCS_IOC_JOB_SET_ROW, id, row, NULL);
}

static int attach_op(int fd, unsigned long cmd, uint32_t job, pid_t pid,
		     uint32_t flags, uint32_t *nr_tasks)
{
	struct bcs_attach a = {
		.size = sizeof(a),
		.flags = flags,
		.job = job,
		.pid = pid,
	};
	int ret = bt_ioctl(fd, cmd, &a);

	if (!ret && nr_tasks)
		*nr_tasks = a.nr_tasks;
	return ret;
}

int bt_attach(int fd, uint32_t job, pid_t pid, uint32_t flags,
	      uint32_t *nr_tasks)
{
	return attach_op(fd, BCS_IOC_ATTACH, job, pid, flags, nr_tasks);
}

int bt_detach(int fd, uint32_t job, pid_t pid, uint32_t flags,
	      uint32_t *nr_tasks)
{
	return attach_op(fd, BCS_IOC_DETACH, job, pid, flags, nr_tasks);
}

int bt_config(int fd, uint32_t set, uint32_t mode, uint64_t slice_ns,
	      uint32_t watchdog, struct bcs_config *out)
{
	struct bcs_config c = {
		.size = sizeof(c),
		.set = set,
		.mode = mode,
		.slice_ns = slice_ns,
		.watchdog_slices = watchdog,
	};
	int ret = bt_ioctl(fd, BCS_IOC_CONFIG, &c);

	if (!ret && out)
		*out = c;
	return ret;
}

int bt_set_mode(int fd, uint32_t mode)
{
	return bt_config(fd, BCS_CONFIG_MODE, mode, 0, 0, NULL);
}

int bt_get_state(int fd, struct bcs_state *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return bt_ioctl(fd, BCS_IOC_GET_STATE, st);
}

int bt_strobe_now(int fd, uint32_t row)
{
	struct bcs_state st;
	struct bcs_strobe s = {
		.size = sizeof(s),
		.flags = BCS_STROBE_NOW,
		.row = row,
	};
	int ret = bt_get_state(fd, &st);

	if (ret)
		return ret;
	s.slice = st.slice + 1;
	s.deadline_ns = bt_now_ns(CLOCK_REALTIME);
	return bt_ioctl(fd, BCS_IOC_STROBE, &s);
}

static int job_list(int fd, struct bcs_job_info **out)
{
	struct bcs_job_list l = { .size = sizeof(l) };
	struct bcs_job_info *buf = NULL;
	int ret, tries;

	/* Jobs may come and go between the two calls: retry a few times. */
	for (tries = 0; tries < 5; tries++) {
		uint32_t room = l.count + 4;

		free(buf);
		buf = calloc(room, sizeof(*buf));
		if (!buf)
			return -ENOMEM;
		l.count = room;
		l.jobs = (uintptr_t)buf;
		ret = bt_ioctl(fd, BCS_IOC_JOB_LIST, &l);
		if (ret) {
			free(buf);
			return ret;
		}
		if (l.count <= room) {
			*out = buf;
			return (int)l.count;
		}
	}
	free(buf);
	return -EAGAIN;
}

int bt_job_info(int fd, uint32_t id, struct bcs_job_info *info)
{
	struct bcs_job_info *jobs;
	int n = job_list(fd, &jobs), i, ret = -ENOENT;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (jobs[i].id == id) {
			*info = jobs[i];
			ret = 0;
			break;
		}
	}
	free(jobs);
	return ret;
}

int bt_nr_jobs(int fd)
{
	struct bcs_job_list l = { .size = sizeof(l) };
	int ret = bt_ioctl(fd, BCS_IOC_JOB_LIST, &l);

	return ret ? ret : (int)l.count;
}

int bt_task_stats(int fd, uint32_t job, struct bcs_task_stat **out)
{
	struct bcs_task_list l = { .size = sizeof(l), .job = job };
	struct bcs_task_stat *buf = NULL;
	int ret, tries;

	for (tries = 0; tries < 5; tries++) {
		uint32_t room = l.count + 8;

		free(buf);
		buf = calloc(room, sizeof(*buf));
		if (!buf)
			return -ENOMEM;
		l.count = room;
		l.tasks = (uintptr_t)buf;
		ret = bt_ioctl(fd, BCS_IOC_TASK_STATS, &l);
		if (ret) {
			free(buf);
			return ret;
		}
		if (l.count <= room) {
			*out = buf;
			return (int)l.count;
		}
	}
	free(buf);
	return -EAGAIN;
}

int bt_window(int fd, uint32_t op, uint64_t from, uint64_t to,
	      struct bcs_window *out)
{
	struct bcs_window w = {
		.size = sizeof(w),
		.op = op,
		.from_slice = from,
		.to_slice = to,
	};
	int ret = bt_ioctl(fd, BCS_IOC_WINDOW, &w);

	if (!ret && out)
		*out = w;
	return ret;
}

int bt_reset(int fd)
{
	struct bcs_job_info *jobs;
	int n, i, ret, first = 0;

	/* Every switch recorded again, the mode change's too. */
	ret = bt_window(fd, BCS_WINDOW_DISARM, 0, 0, NULL);
	if (ret)
		first = ret;
	ret = bt_set_mode(fd, BCS_MODE_OFF);
	if (ret && !first)
		first = ret;
	n = job_list(fd, &jobs);
	if (n < 0)
		return first ? first : n;
	for (i = 0; i < n; i++) {
		ret = bt_job_destroy(fd, jobs[i].id);
		if (ret && ret != -ENOENT && !first)
			first = ret;
	}
	free(jobs);
	return first;
}

int bt_drive(int fd)
{
	return bt_config(fd, BCS_CONFIG_MODE | BCS_CONFIG_WATCHDOG,
			 BCS_MODE_DRIVEN, 0, 0, NULL);
}

bool bt_job_all_parked(int fd, uint32_t id)
{
	struct bcs_job_info ji;

	if (bt_job_info(fd, id, &ji))
		return false;
	return ji.nr_tasks > 0 && ji.nr_parked == ji.nr_tasks;
}

bool bt_job_none_parked(int fd, uint32_t id)
{
	struct bcs_job_info ji;

	if (bt_job_info(fd, id, &ji))
		return false;
	return ji.nr_parked == 0;
}

static bool none_parked(int fd)
{
	struct bcs_state st;

	return !bt_get_state(fd, &st) && st.nr_parked == 0;
}

long bt_wait_ms(void)
{
	static long ms;
	const char *e;

	if (!ms) {
		e = getenv("BCS_TEST_WAIT_MS");
		ms = e ? strtol(e, NULL, 10) : 0;
		if (ms < 10000 || ms > 3600000)
			ms = 10000;
	}
	return ms;
}

long bt_slowdown(void)
{
	return bt_wait_ms() / 10000;
}

bool bt_wait_none_parked(int fd)
{
	return WAIT_UNTIL(none_parked(fd), BT_WAIT_MS);
}

int bt_suspend_row0(int fd, uint32_t id)
{
	int ret = bt_strobe_now(fd, 1);

	if (ret)
		return ret;
	return WAIT_UNTIL(bt_job_all_parked(fd, id), BT_WAIT_MS) ?
		0 : -ETIMEDOUT;
}

int bt_resume_row0(int fd, uint32_t id)
{
	int ret = bt_strobe_now(fd, 0);

	if (ret)
		return ret;
	return WAIT_UNTIL(bt_job_none_parked(fd, id), BT_WAIT_MS) ?
		0 : -ETIMEDOUT;
}

void bt_close_fds_from(int first)
{
	int fd;

	if (syscall(SYS_close_range, (unsigned int)first, ~0U, 0) == 0)
		return;
	/* Kernels without close_range(): close what is likely open. */
	for (fd = first; fd < 1024; fd++)
		close(fd);
}

/* ---- CPU burner ---- */

static struct bt_shared *burner_sh;
static bool burner_sleepy;

struct burner_arg {
	int idx;
};

static void burner_usr1(int sig)
{
	(void)sig;
	burner_sh->usr1 = 1;
}

static void burner_loop(int idx)
{
	uint32_t pat[64];
	uint64_t n = 0;
	int i;

	burner_sh->tid[idx] = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < 64; i++)
		pat[i] = (uint32_t)(idx * 2654435761U) ^ (uint32_t)i;
	for (;;) {
		burner_sh->counter[idx]++;
		if ((++n & 1023) == 0 || burner_sleepy) {
			for (i = 0; i < 64; i++) {
				if (pat[i] != ((uint32_t)(idx * 2654435761U) ^
					       (uint32_t)i))
					burner_sh->corrupt = 1;
			}
			/* Keep the pattern live in memory, not in registers. */
			__asm__ __volatile__("" : : "r"(pat) : "memory");
		}
		if (burner_sh->stop)
			break;
		if (burner_sleepy)
			usleep(2000);
	}
}

static void *burner_thread(void *p)
{
	burner_loop(((struct burner_arg *)p)->idx);
	return NULL;
}

static void burner_child(int nthreads)
{
	static struct burner_arg args[BT_MAX_THREADS];
	struct sigaction sa = { .sa_handler = burner_usr1 };
	pthread_t th;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/*
	 * Holding no file of the test keeps /dev/bcs and netlink sockets
	 * closable by the test alone (driver loss, module unload).
	 */
	bt_close_fds_from(3);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 1; i < nthreads; i++) {
		args[i].idx = i;
		if (pthread_create(&th, NULL, burner_thread, &args[i]))
			_exit(2);
	}
	burner_sh->tid[0] = getpid();
	for (i = 1; i < nthreads; i++) {
		while (!burner_sh->tid[i])
			sched_yield();
	}
	burner_sh->ready = 1;
	burner_loop(0);
	_exit(0);
}

int bt_burner_start(struct bt_burner *b, int nthreads, bool sleepy)
{
	struct bt_shared *sh;
	pid_t pid;

	memset(b, 0, sizeof(*b));
	if (nthreads < 1 || nthreads > BT_MAX_THREADS)
		return -EINVAL;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	memset(sh, 0, sizeof(*sh));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		munmap(sh, sizeof(*sh));
		return err;
	}
	if (pid == 0) {
		burner_sh = sh;
		burner_sleepy = sleepy;
		burner_child(nthreads);
	}
	b->pid = pid;
	b->nthreads = nthreads;
	b->sh = sh;
	if (!WAIT_UNTIL(sh->ready, BT_WAIT_MS)) {
		bt_burner_stop(b);
		return -ETIMEDOUT;
	}
	return 0;
}

int bt_gang_start(int fd, uint32_t job, uint32_t row, struct bt_burner *b,
		  int nthreads)
{
	int ret = bt_burner_start(b, nthreads, false);

	if (!ret)
		ret = bt_job_create(fd, job, row, NULL);
	if (!ret)
		ret = bt_attach(fd, job, b->pid, 0, NULL);
	return ret;
}

void bt_burner_stop(struct bt_burner *b)
{
	if (b->pid > 0) {
		kill(b->pid, SIGKILL);
		bt_waitpid_bounded(b->pid, NULL, BT_WAIT_MS);
		b->pid = 0;
	}
	if (b->sh) {
		munmap(b->sh, sizeof(*b->sh));
		b->sh = NULL;
	}
}

void bt_burner_counters(const struct bt_burner *b, uint64_t *out)
{
	int i;

	for (i = 0; i < b->nthreads; i++)
		out[i] = b->sh->counter[i];
}

bool bt_burner_all_advanced(const struct bt_burner *b,
			    const uint64_t *before)
{
	int i;

	for (i = 0; i < b->nthreads; i++) {
		if (b->sh->counter[i] <= before[i])
			return false;
	}
	return true;
}

/* ---- /proc ---- */

int bt_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	buf[n] = 0;
	close(fd);
	return 0;
}

int bt_write_file(const char *path, const char *s)
{
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

/*
 * Parse a /proc stat line: the comm may contain spaces and parentheses, so
 * fields are counted from the last ')'.  Field 3 is the state, 14 and 15
 * are utime and stime.
 */
static int parse_stat(const char *path, char *state, long long *ticks)
{
	unsigned long long ut, st;
	char buf[1024], *p;
	int ret = bt_read_file(path, buf, sizeof(buf));

	if (ret)
		return ret;
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/*
	 * After ")": state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime.
	 */
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   state, &ut, &st) != 3)
		return -EINVAL;
	if (ticks)
		*ticks = (long long)(ut + st);
	return 0;
}

long long bt_thread_ticks(pid_t pid, pid_t tid)
{
	char path[64], state;
	long long t;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	return parse_stat(path, &state, &t) ? -1 : t;
}

long long bt_proc_ticks(pid_t pid)
{
	char path[64], state;
	long long t;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return parse_stat(path, &state, &t) ? -1 : t;
}

char bt_thread_state(pid_t pid, pid_t tid)
{
	char path[64], state;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	return parse_stat(path, &state, NULL) ? 0 : state;
}

int bt_list_threads(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		tids[n++] = atoi(de->d_name);
	}
	closedir(d);
	return n;
}

int bt_drop_privs(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (setgroups(0, NULL))
		return -errno;
	if (setresgid(BT_NOBODY, BT_NOBODY, BT_NOBODY))
		return -errno;
	if (setresuid(BT_NOBODY, BT_NOBODY, BT_NOBODY))
		return -errno;
	/* The uid change clears the capability sets; make sure of it. */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	if (data[0].effective || data[1].effective ||
	    data[0].permitted || data[1].permitted)
		return -EPERM;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}

pid_t bt_waitpid_bounded(pid_t pid, int *status, unsigned int ms)
{
	unsigned int i;
	pid_t ret;

	for (i = 0; i <= ms / BT_POLL_MS; i++) {
		ret = waitpid(pid, status, WNOHANG);
		if (ret != 0)
			return ret < 0 ? -errno : ret;
		bt_sleep_ms(BT_POLL_MS);
	}
	return 0;
}

bool bt_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

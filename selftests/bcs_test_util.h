/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the bcs selftests: raw ioctl wrappers on /dev/bcs,
 * CPU burner processes, /proc readers and bounded waits.
 *
 * The ioctl wrappers return 0 or a negative errno so that tests can compare
 * results directly with ASSERT_EQ(-EINVAL, ...).
 */
#ifndef BCS_TEST_UTIL_H
#define BCS_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/bcs.h>

#define BCS_DEV		"/dev/bcs"
#define BCS_STAT_DEV	"/dev/bcsstat"

/*
 * Upper bound for every wait on something the kernel does asynchronously.
 * Generous because the tests run under TCG emulation; a passing test never
 * waits this long, a failing one is bounded by it.
 */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define BT_WAIT_MS	bt_wait_ms()
#define BT_POLL_MS	10

/*
 * The bound of those waits: 10 s, or BCS_TEST_WAIT_MS milliseconds from
 * the environment (make check-debug gives more: its kernel checks every
 * lock and access and runs many times slower).
 */
long bt_wait_ms(void);

/*
 * How much slower than usual the kernel runs: that bound over 10 s (1, or
 * 6 under make check-debug).  Tests that send strobes a lead ahead of
 * their deadlines, and deadlines a gap apart, scale both by it, so that a
 * timer that strikes late still strikes before the next deadline.
 */
long bt_slowdown(void);

/* Ids far away from what a job-id allocator hands out first. */
#define BT_JOB_A	0x5a000001U
#define BT_JOB_B	0x5a000002U

/*
 * Poll @cond every BT_POLL_MS until it is true or @ms milliseconds have
 * passed; evaluates to the final value of @cond.
 */
#define WAIT_UNTIL(cond, ms) ({						\
	bool __ok = false;						\
	long __i, __n = (long)(ms) / BT_POLL_MS + 1;			\
	for (__i = 0; __i < __n; __i++) {				\
		if (cond) {						\
			__ok = true;					\
			break;						\
		}							\
		bt_sleep_ms(BT_POLL_MS);				\
	}								\
	__ok;								\
})

/* Time and sleeping. */
void bt_sleep_ms(unsigned int ms);
uint64_t bt_now_ns(clockid_t clk);

/* Devices. */
int bt_open(void);			/* /dev/bcs, O_RDWR | O_CLOEXEC */
int bt_open_stat(void);			/* /dev/bcsstat, O_RDONLY */
/* /dev/bcsstat, non-blocking, past the records already there; or -errno. */
int bt_open_stat_new(void);
int bt_ioctl(int fd, unsigned long cmd, void *arg);	/* 0 or -errno */

/* ioctl wrappers: 0 or -errno. */
int bt_job_create(int fd, uint32_t id, uint32_t row, uint32_t *id_out);
int bt_job_destroy(int fd, uint32_t id);
int bt_job_set_row(int fd, uint32_t id, uint32_t row);
int bt_attach(int fd, uint32_t job, pid_t pid, uint32_t flags,
	      uint32_t *nr_tasks);
int bt_detach(int fd, uint32_t job, pid_t pid, uint32_t flags,
	      uint32_t *nr_tasks);
int bt_config(int fd, uint32_t set, uint32_t mode, uint64_t slice_ns,
	      uint32_t watchdog, struct bcs_config *out);
int bt_set_mode(int fd, uint32_t mode);
int bt_get_state(int fd, struct bcs_state *st);
/* Strobe to @row now; uses the current slice number + 1. */
int bt_strobe_now(int fd, uint32_t row);
/* Fills @info for job @id; -ENOENT if it is not listed. */
int bt_job_info(int fd, uint32_t id, struct bcs_job_info *info);
/* Number of jobs, or -errno. */
int bt_nr_jobs(int fd);
/*
 * Task records of job @job (0: all) into a malloc()ed array; returns the
 * number of records or -errno.
 */
int bt_task_stats(int fd, uint32_t job, struct bcs_task_stat **out);

/*
 * BCS_IOC_WINDOW with @op (enum bcs_window_op) and the slices @from ..
 * @to; the window after the call in @out if not NULL.  0 or -errno.
 */
int bt_window(int fd, uint32_t op, uint64_t from, uint64_t to,
	      struct bcs_window *out);

/*
 * Put the module back into a known state: no slice window, mode OFF,
 * every job destroyed.
 * Returns 0 or -errno of the first failure.
 */
int bt_reset(int fd);

/*
 * DRIVEN mode with the watchdog off, driven by @fd, and helpers that
 * suspend or resume job @id (placed in row 0) by strobing row 1 or row 0 and
 * waiting until every task of the job is parked or none is.
 */
int bt_drive(int fd);
bool bt_job_all_parked(int fd, uint32_t id);
bool bt_job_none_parked(int fd, uint32_t id);
int bt_suspend_row0(int fd, uint32_t id);	/* 0, -errno or -ETIMEDOUT */
int bt_resume_row0(int fd, uint32_t id);

/*
 * CPU burner: a child process with @nthreads threads (the main thread
 * included), each spinning and counting in shared memory.  Each thread also
 * keeps a private pattern in memory and checks it on every loop, raising
 * @corrupt on a mismatch.  A SIGUSR1 handler sets @usr1.
 */
#define BT_MAX_THREADS	128

struct bt_shared {
	volatile uint64_t counter[BT_MAX_THREADS];
	volatile pid_t tid[BT_MAX_THREADS];
	volatile int ready;
	volatile int corrupt;
	volatile int usr1;
	volatile int stop;
};

struct bt_burner {
	pid_t pid;
	int nthreads;
	struct bt_shared *sh;
};

/*
 * Start a burner; returns 0 when all threads run, -errno otherwise.  If
 * @sleepy, threads sleep in a loop instead of burning CPU.
 */
int bt_burner_start(struct bt_burner *b, int nthreads, bool sleepy);
/*
 * A gang: a burner of @nthreads spinning threads attached to a new job
 * @job in @row.  Returns 0 or -errno.
 */
int bt_gang_start(int fd, uint32_t job, uint32_t row, struct bt_burner *b,
		  int nthreads);
/* SIGKILL and reap; safe on a zeroed or already stopped burner. */
void bt_burner_stop(struct bt_burner *b);
/* Copy the counters into @out[nthreads]. */
void bt_burner_counters(const struct bt_burner *b, uint64_t *out);
/* True if every counter is greater than in @before. */
bool bt_burner_all_advanced(const struct bt_burner *b,
			    const uint64_t *before);

/* /proc readers. */
/* utime + stime of thread @tid of @pid in clock ticks, or -1. */
long long bt_thread_ticks(pid_t pid, pid_t tid);
/* utime + stime of the whole process (all threads), or -1. */
long long bt_proc_ticks(pid_t pid);
/* State letter of a thread ('R', 'S', 'D', ...), or 0 if it is gone. */
char bt_thread_state(pid_t pid, pid_t tid);
/* Fill @tids with up to @max thread ids of @pid; returns the count. */
int bt_list_threads(pid_t pid, pid_t *tids, int max);
/* Read a small /proc or /sys file into @buf; 0 or -errno. */
int bt_read_file(const char *path, char *buf, size_t len);
int bt_write_file(const char *path, const char *s);

/*
 * Drop to uid/gid 65534 with no supplementary groups and no capabilities.
 * Returns 0 or -errno.  Meant for forked children.
 */
#define BT_NOBODY	65534
int bt_drop_privs(void);

/* Wait for @pid with a bound; returns the pid, 0 on timeout or -errno. */
pid_t bt_waitpid_bounded(pid_t pid, int *status, unsigned int ms);

/* In a forked child: close every file descriptor from @first up. */
void bt_close_fds_from(int first);

/* Wait until no task is parked by bcs (bounded); true on success. */
bool bt_wait_none_parked(int fd);

/* Whether a path exists. */
bool bt_exists(const char *path);

#endif /* BCS_TEST_UTIL_H */

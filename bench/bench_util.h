/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the bcs benchmarks: clocks, summary statistics, raw
 * ioctls on /dev/bcs, the /dev/bcsstat ring and real-time priority.
 *
 * The benchmarks only report numbers; nothing here fails on a timing.
 */
#ifndef BCS_BENCH_UTIL_H
#define BCS_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/bcs.h>

#define BCS_DEV		"/dev/bcs"
#define BCS_STAT_DEV	"/dev/bcsstat"

#define NSEC_PER_USEC	1000ULL
#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

/* Monotonic time in nanoseconds. */
uint64_t bench_now(void);
/* CLOCK_REALTIME in ns: the clock of the /dev/bcsstat records. */
uint64_t bench_now_real(void);
/* Sleep for @ns nanoseconds (restarted on EINTR). */
void bench_sleep_ns(uint64_t ns);

/* Fatal error with errno text, for set-up steps that must not fail. */
void bench_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/*
 * Samples of one measured quantity.  A round that timed out adds no sample
 * but is counted, so that a table can say "timeout" instead of a number.
 */
struct bench_samples {
	uint64_t *v;
	size_t n, cap;
	unsigned int timeouts;
};

void bench_samples_init(struct bench_samples *s, size_t cap);
void bench_samples_free(struct bench_samples *s);
void bench_samples_add(struct bench_samples *s, uint64_t ns);
/* Percentile @p (0..100) by nearest rank; 0 if there is no sample. */
uint64_t bench_percentile(struct bench_samples *s, unsigned int p);

/*
 * Run the caller at SCHED_FIFO priority @prio, with SCHED_RESET_ON_FORK so
 * that the children it forks afterwards stay SCHED_OTHER.  Returns false
 * (after a warning) if the policy cannot be set.
 */
bool bench_set_fifo(int prio);

/* ioctl on /dev/bcs or /dev/bcsstat: 0 or -errno. */
int bench_ioctl(int fd, unsigned long cmd, void *arg);
int bench_job_create(int fd, uint32_t row, uint32_t *id);
int bench_job_destroy(int fd, uint32_t id);
int bench_attach(int fd, uint32_t job, pid_t pid, uint32_t *nr_tasks);
int bench_config(int fd, uint32_t mode, uint64_t slice_ns, uint32_t watchdog);
int bench_strobe_now(int fd, uint64_t slice, uint32_t row);
int bench_get_state(int fd, struct bcs_state *st);
/* Record of job @id; -ENOENT if it does not exist. */
int bench_job_info(int fd, uint32_t id, struct bcs_job_info *info);
/* BCS_IOC_DIST_CTL for job @job as a whole (no pid list). */
int bench_dist_ctl(int fd, uint32_t job, uint32_t op, uint32_t metrics,
		   uint32_t sub_bits);
/*
 * BCS_IOC_DIST_READ of task @pid of job @job (with @flags BCS_DIST_NEXT
 * the next tracked one above @pid, returned in @rd->pid): the totals, and
 * the histogram of @metric into the @size bytes at @buf (NULL, 0: none).
 */
int bench_dist_read(int fd, uint32_t job, pid_t pid, uint32_t metric,
		    uint32_t flags, void *buf, uint32_t size,
		    struct bcs_dist_read *rd);

/* Read-only mapping of the /dev/bcsstat ring. */
struct bench_ring {
	int fd;
	void *map;
	size_t len;
	const struct bcs_stat_header *hdr;
};

int bench_ring_open(struct bench_ring *r);
void bench_ring_close(struct bench_ring *r);
/* Sequence number of the next record to be written. */
uint64_t bench_ring_head(const struct bench_ring *r);
/*
 * Copy record @seq to @out.  Returns false if it has been overwritten (or
 * is being written) meanwhile.
 */
bool bench_ring_read(const struct bench_ring *r, uint64_t seq,
		     struct bcs_slice_record *out);

/*
 * A child cgroup of the cgroup v2 hierarchy, for its freezer.  The
 * hierarchy is found at /sys/fs/cgroup (unified layout) or its "unified"
 * subdirectory (hybrid layout), or mounted on /sys/fs/cgroup when nothing
 * is mounted there yet (the test guest mounts sysfs and no cgroup).
 */
struct bench_cgroup {
	char dir[128];			/* empty: none */
	int freeze_fd;			/* cgroup.freeze, or -1 */
	int events_fd;			/* cgroup.events, or -1 */
};

/* The hierarchy's directory, or NULL and why there is none. */
const char *bench_cgroup_root(const char **why);
/*
 * Create cgroup bcs-bench-<pid>-@name and move the processes @pids (with
 * all their threads) into it.  Returns NULL, or why the freezer cannot be
 * used; @cg is valid for bench_cgroup_close() and _remove() either way.
 */
const char *bench_cgroup_create(struct bench_cgroup *cg, const char *name,
				const pid_t *pids, unsigned int n);
/* Write cgroup.freeze: 0 or -errno. */
int bench_cgroup_freeze(struct bench_cgroup *cg, bool freeze);
/* 1 or 0 from the "frozen" line of cgroup.events, -1 on error. */
int bench_cgroup_frozen(const struct bench_cgroup *cg);
/* Thaw the group and close its files. */
void bench_cgroup_close(struct bench_cgroup *cg);
/* Remove the group, once its processes are gone. */
void bench_cgroup_remove(struct bench_cgroup *cg);

/* Sleep until bench_now() reaches @t. */
void bench_sleep_until(uint64_t t);

/* Number of online CPUs (at least 1). */
unsigned int bench_nr_cpus(void);

#endif /* BCS_BENCH_UTIL_H */

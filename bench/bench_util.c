// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the bcs benchmarks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define JOB_LIST_MAX	64
#define CGROUP_ROOT	"/sys/fs/cgroup"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif
#ifndef SYSFS_MAGIC
#define SYSFS_MAGIC		0x62656572
#endif

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK	0x40000000
#endif

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t bench_now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t bench_now_real(void)
{
	return clock_ns(CLOCK_REALTIME);
}

void bench_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void bench_sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = t / NSEC_PER_SEC,
		.tv_nsec = t % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

void bench_die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	exit(1);
}

void bench_samples_init(struct bench_samples *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap ? cap : 1;
	s->v = calloc(s->cap, sizeof(*s->v));
	if (!s->v)
		bench_die("calloc");
}

void bench_samples_free(struct bench_samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void bench_samples_add(struct bench_samples *s, uint64_t ns)
{
	if (s->n == s->cap) {
		uint64_t *v = realloc(s->v, 2 * s->cap * sizeof(*v));

		if (!v)
			bench_die("realloc");
		s->v = v;
		s->cap *= 2;
	}
	s->v[s->n++] = ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t bench_percentile(struct bench_samples *s, unsigned int p)
{
	size_t rank;

	if (!s->n)
		return 0;
	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	/* Nearest rank: the smallest sample with p% of them at or below. */
	rank = (s->n * p + 99) / 100;
	if (rank)
		rank--;
	if (rank >= s->n)
		rank = s->n - 1;
	return s->v[rank];
}

bool bench_set_fifo(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp)) {
		fprintf(stderr, "warning: SCHED_FIFO %d: %s; timings of the "
			"controller may suffer\n", prio, strerror(errno));
		return false;
	}
	return true;
}

int bench_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int bench_job_create(int fd, uint32_t row, uint32_t *id)
{
	struct bcs_job job = { .size = sizeof(job), .row = row };
	int err = bench_ioctl(fd, BCS_IOC_JOB_CREATE, &job);

	if (!err)
		*id = job.id;
	return err;
}

int bench_job_destroy(int fd, uint32_t id)
{
	struct bcs_job job = { .size = sizeof(job), .id = id };

	return bench_ioctl(fd, BCS_IOC_JOB_DESTROY, &job);
}

int bench_attach(int fd, uint32_t job, pid_t pid, uint32_t *nr_tasks)
{
	struct bcs_attach at = {
		.size = sizeof(at),
		.job = job,
		.pid = pid,
	};
	int err = bench_ioctl(fd, BCS_IOC_ATTACH, &at);

	if (!err && nr_tasks)
		*nr_tasks = at.nr_tasks;
	return err;
}

int bench_config(int fd, uint32_t mode, uint64_t slice_ns, uint32_t watchdog)
{
	struct bcs_config cfg = {
		.size = sizeof(cfg),
		.set = BCS_CONFIG_MODE | BCS_CONFIG_WATCHDOG,
		.mode = mode,
		.watchdog_slices = watchdog,
	};

	if (slice_ns) {
		cfg.set |= BCS_CONFIG_SLICE;
		cfg.slice_ns = slice_ns;
	}
	return bench_ioctl(fd, BCS_IOC_CONFIG, &cfg);
}

int bench_strobe_now(int fd, uint64_t slice, uint32_t row)
{
	struct bcs_strobe st = {
		.size = sizeof(st),
		.flags = BCS_STROBE_NOW,
		.slice = slice,
		.row = row,
	};

	return bench_ioctl(fd, BCS_IOC_STROBE, &st);
}

int bench_get_state(int fd, struct bcs_state *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return bench_ioctl(fd, BCS_IOC_GET_STATE, st);
}

int bench_job_info(int fd, uint32_t id, struct bcs_job_info *info)
{
	/* Room for the jobs of the benchmarks and for some others. */
	struct bcs_job_info jobs[JOB_LIST_MAX];
	struct bcs_job_list list = {
		.size = sizeof(list),
		.count = sizeof(jobs) / sizeof(jobs[0]),
		.jobs = (uintptr_t)jobs,
	};
	uint32_t i, n;
	int err;

	err = bench_ioctl(fd, BCS_IOC_JOB_LIST, &list);
	if (err)
		return err;
	n = list.count < JOB_LIST_MAX ? list.count : JOB_LIST_MAX;
	for (i = 0; i < n; i++) {
		if (jobs[i].id == id) {
			*info = jobs[i];
			return 0;
		}
	}
	return -ENOENT;
}

int bench_dist_ctl(int fd, uint32_t job, uint32_t op, uint32_t metrics,
		   uint32_t sub_bits)
{
	struct bcs_dist_ctl ctl = {
		.size = sizeof(ctl),
		.job = job,
		.op = op,
		.metrics = metrics,
		.sub_bits = sub_bits,
	};

	return bench_ioctl(fd, BCS_IOC_DIST_CTL, &ctl);
}

int bench_dist_read(int fd, uint32_t job, pid_t pid, uint32_t metric,
		    uint32_t flags, void *buf, uint32_t size,
		    struct bcs_dist_read *rd)
{
	memset(rd, 0, sizeof(*rd));
	rd->size = sizeof(*rd);
	rd->job = job;
	rd->pid = pid;
	rd->metric = metric;
	rd->flags = flags;
	rd->buf_size = size;
	rd->buf = (uintptr_t)buf;
	return bench_ioctl(fd, BCS_IOC_DIST_READ, rd);
}

int bench_ring_open(struct bench_ring *r)
{
	struct bcs_stat_header hdr;
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = open(BCS_STAT_DEV, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	/* Map the header first to learn the size of the whole ring. */
	r->map = mmap(NULL, sizeof(hdr), PROT_READ, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED)
		goto fail;
	memcpy(&hdr, r->map, sizeof(hdr));
	munmap(r->map, sizeof(hdr));
	if (hdr.magic != BCS_STAT_MAGIC ||
	    hdr.record_size != sizeof(struct bcs_slice_record)) {
		errno = EPROTO;
		goto fail;
	}
	r->len = hdr.records_offset +
		 (size_t)hdr.nr_records * hdr.record_size;
	r->map = mmap(NULL, r->len, PROT_READ, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED)
		goto fail;
	r->hdr = r->map;
	return 0;
fail:
	err = -errno;
	close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	return err;
}

void bench_ring_close(struct bench_ring *r)
{
	if (r->hdr)
		munmap(r->map, r->len);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

uint64_t bench_ring_head(const struct bench_ring *r)
{
	return __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE);
}

bool bench_ring_read(const struct bench_ring *r, uint64_t seq,
		     struct bcs_slice_record *out)
{
	const struct bcs_slice_record *rec;

	rec = (const void *)((const char *)r->map + r->hdr->records_offset +
			     (seq % r->hdr->nr_records) * r->hdr->record_size);
	if (__atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE) != seq)
		return false;
	memcpy(out, rec, sizeof(*out));
	/* The copy must be complete before @seq is checked again. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&rec->seq, __ATOMIC_RELAXED) == seq &&
	       out->seq == seq;
}

unsigned int bench_nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

/* cgroup v2 freezer */

static bool is_fs(const char *path, long magic)
{
	struct statfs sfs;

	return !statfs(path, &sfs) && sfs.f_type == magic;
}

const char *bench_cgroup_root(const char **why)
{
	static const char *root, *err;
	static bool done;

	if (done) {
		*why = err;
		return root;
	}
	done = true;
	if (is_fs(CGROUP_ROOT, CGROUP2_SUPER_MAGIC)) {
		root = CGROUP_ROOT;
	} else if (is_fs(CGROUP_ROOT "/unified", CGROUP2_SUPER_MAGIC)) {
		root = CGROUP_ROOT "/unified";
	} else if (!is_fs(CGROUP_ROOT, SYSFS_MAGIC)) {
		err = "no cgroup2 hierarchy found";
	} else if (mount("cgroup2", CGROUP_ROOT, "cgroup2", 0, NULL)) {
		err = "cannot mount cgroup2";
		fprintf(stderr, "mount cgroup2 on %s: %s\n", CGROUP_ROOT,
			strerror(errno));
	} else {
		root = CGROUP_ROOT;
		printf("mounted cgroup2 on %s\n", CGROUP_ROOT);
	}
	*why = err;
	return root;
}

static int move_pid(const char *dir, pid_t pid)
{
	char path[160], buf[16];
	int fd, err = 0;
	ssize_t len;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	len = snprintf(buf, sizeof(buf), "%d", pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != len)
		err = -errno;
	close(fd);
	return err;
}

const char *bench_cgroup_create(struct bench_cgroup *cg, const char *name,
				const pid_t *pids, unsigned int n)
{
	const char *root, *why;
	char path[160];
	unsigned int i;
	int err;

	memset(cg, 0, sizeof(*cg));
	cg->freeze_fd = cg->events_fd = -1;
	root = bench_cgroup_root(&why);
	if (!root)
		return why;
	snprintf(cg->dir, sizeof(cg->dir), "%s/bcs-bench-%d-%s", root,
		 getpid(), name);
	if (mkdir(cg->dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "mkdir %s: %s\n", cg->dir, strerror(errno));
		cg->dir[0] = 0;
		return "cannot create a cgroup";
	}
	for (i = 0; i < n; i++) {
		err = move_pid(cg->dir, pids[i]);
		if (err) {
			fprintf(stderr, "move %d to %s: %s\n", pids[i],
				cg->dir, strerror(-err));
			return "cannot move tasks into the cgroup";
		}
	}
	snprintf(path, sizeof(path), "%s/cgroup.freeze", cg->dir);
	cg->freeze_fd = open(path, O_WRONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/cgroup.events", cg->dir);
	cg->events_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (cg->freeze_fd < 0 || cg->events_fd < 0)
		return "no cgroup.freeze (kernel without the v2 freezer?)";
	return NULL;
}

int bench_cgroup_freeze(struct bench_cgroup *cg, bool freeze)
{
	if (pwrite(cg->freeze_fd, freeze ? "1" : "0", 1, 0) != 1)
		return -errno;
	return 0;
}

int bench_cgroup_frozen(const struct bench_cgroup *cg)
{
	char buf[256], *p;
	ssize_t len;

	len = pread(cg->events_fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	p = strstr(buf, "frozen ");
	return p ? p[7] == '1' : -1;
}

void bench_cgroup_close(struct bench_cgroup *cg)
{
	if (cg->freeze_fd >= 0) {
		if (bench_cgroup_freeze(cg, false))
			perror("cgroup.freeze");
		close(cg->freeze_fd);
	}
	if (cg->events_fd >= 0)
		close(cg->events_fd);
	cg->freeze_fd = cg->events_fd = -1;
}

void bench_cgroup_remove(struct bench_cgroup *cg)
{
	if (cg->dir[0] && rmdir(cg->dir))
		fprintf(stderr, "rmdir %s: %s\n", cg->dir, strerror(errno));
	cg->dir[0] = 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: the /dev/bcs handle, jobs, tasks and control ioctls.
 */
#define _GNU_SOURCE		/* secure_getenv() */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

const char *bcs__device_path(const char *env, const char *def)
{
	/*
	 * secure_getenv(): a set-uid program linked with libbcs must not let
	 * its caller point it at another file.
	 */
	const char *p = secure_getenv(env);

	return p && *p ? p : def;
}

int bcs__ioctl(int fd, unsigned long req, void *arg)
{
	int i;

	/* Bounded: a signal storm must not spin us forever. */
	for (i = 0; i < 100; i++) {
		if (ioctl(fd, req, arg) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
	return -EINTR;
}

int bcs_open(struct bcs **out)
{
	const char *path;
	struct bcs *h;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	path = bcs__device_path(BCS_ENV_DEVICE, BCS_DEVICE_PATH);
	h->fd = open(path, O_RDWR | O_CLOEXEC);
	if (h->fd < 0) {
		err = -errno;
		free(h);
		return err;
	}
	*out = h;
	return 0;
}

void bcs_close(struct bcs *h)
{
	if (!h)
		return;
	close(h->fd);
	free(h);
}

int bcs_fd(const struct bcs *h)
{
	return h ? h->fd : -EBADF;
}

/*
 * One struct bcs_job ioctl.  BCS_JOB_ROWS is set when @rows is not 0 (the
 * set is then @row's and @rows'; without rows it is @row's alone either
 * way), BCS_JOB_AT_SLICE when @slice is not 0.
 */
static int job_ioctl(struct bcs *h, unsigned long req, uint32_t id,
		     uint32_t row, uint64_t rows, uint64_t slice,
		     uint32_t *id_out)
{
	struct bcs_job job;
	int err;

	if (!h)
		return -EBADF;
	memset(&job, 0, sizeof(job));
	job.size = sizeof(job);
	job.id = id;
	job.row = row;
	if (rows) {
		job.flags |= BCS_JOB_ROWS;
		job.rows = rows;
	}
	if (slice) {
		job.flags |= BCS_JOB_AT_SLICE;
		job.slice = slice;
	}
	err = bcs__ioctl(h->fd, req, &job);
	if (!err && id_out)
		*id_out = job.id;
	return err;
}

int bcs_job_create(struct bcs *h, uint32_t id, uint32_t row,
		   uint32_t *id_out)
{
	return job_ioctl(h, BCS_IOC_JOB_CREATE, id, row, 0, 0, id_out);
}

int bcs_job_create_rows(struct bcs *h, uint32_t id, uint32_t row,
			uint64_t rows, uint32_t *id_out)
{
	return job_ioctl(h, BCS_IOC_JOB_CREATE, id, row, rows, 0, id_out);
}

int bcs_job_destroy(struct bcs *h, uint32_t id)
{
	return job_ioctl(h, BCS_IOC_JOB_DESTROY, id, BCS_ROW_NONE, 0, 0, NULL);
}

int bcs_job_set_row(struct bcs *h, uint32_t id, uint32_t row)
{
	return job_ioctl(h, BCS_IOC_JOB_SET_ROW, id, row, 0, 0, NULL);
}

int bcs_job_set_rows(struct bcs *h, uint32_t id, uint32_t row,
		     uint64_t rows, uint64_t at_slice)
{
	return job_ioctl(h, BCS_IOC_JOB_SET_ROW, id, row, rows, at_slice,
			 NULL);
}

int bcs_job_create_rows_owned(struct bcs *h, uint32_t id, uint32_t row,
			      uint64_t rows, uid_t owner, uint32_t *id_out)
{
	struct bcs_job job;
	int err;

	if (!h)
		return -EBADF;
	if (owner == (uid_t)-1)
		return -EINVAL;
	memset(&job, 0, sizeof(job));
	job.size = sizeof(job);
	job.flags = BCS_JOB_OWNER;
	job.id = id;
	job.row = row;
	if (rows) {
		job.flags |= BCS_JOB_ROWS;
		job.rows = rows;
	}
	job.owner = owner;
	err = bcs__ioctl(h->fd, BCS_IOC_JOB_CREATE, &job);
	if (!err && id_out)
		*id_out = job.id;
	return err;
}

int bcs_job_create_owned(struct bcs *h, uint32_t id, uint32_t row,
			 uid_t owner, uint32_t *id_out)
{
	return bcs_job_create_rows_owned(h, id, row, 0, owner, id_out);
}

int bcs_job_set_filler(struct bcs *h, uint32_t id, bool filler)
{
	struct bcs_job job;

	if (!h)
		return -EBADF;
	memset(&job, 0, sizeof(job));
	job.size = sizeof(job);
	job.id = id;
	job.flags = BCS_JOB_SET_FILLER | (filler ? BCS_JOB_FILLER : 0);
	return bcs__ioctl(h->fd, BCS_IOC_JOB_SET_ROW, &job);
}

/*
 * Both lists share one shape: offer a buffer, learn how many entries
 * exist, and grow the buffer if the offer was too small.  Entries can be
 * added between two calls, hence the bounded retry loop.
 */
static int list_ioctl(int fd, int tasks, uint32_t job, void **out,
		      size_t *n)
{
	size_t esize = tasks ? sizeof(struct bcs_task_stat) :
			       sizeof(struct bcs_job_info);
	uint32_t room = 16, count;
	void *buf = NULL;
	int err, i;

	if (!out || !n)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	for (i = 0; i < BCS_LIST_RETRIES; i++) {
		void *nbuf = realloc(buf, (size_t)room * esize);

		if (!nbuf) {
			free(buf);
			return -ENOMEM;
		}
		buf = nbuf;
		memset(buf, 0, (size_t)room * esize);
		if (tasks) {
			struct bcs_task_list tl;

			memset(&tl, 0, sizeof(tl));
			tl.size = sizeof(tl);
			tl.job = job;
			tl.count = room;
			tl.tasks = (uintptr_t)buf;
			err = bcs__ioctl(fd, BCS_IOC_TASK_STATS, &tl);
			count = tl.count;
		} else {
			struct bcs_job_list jl;

			memset(&jl, 0, sizeof(jl));
			jl.size = sizeof(jl);
			jl.count = room;
			jl.jobs = (uintptr_t)buf;
			err = bcs__ioctl(fd, BCS_IOC_JOB_LIST, &jl);
			count = jl.count;
		}
		if (err) {
			free(buf);
			return err;
		}
		if (count <= room) {
			if (count == 0) {
				free(buf);
				buf = NULL;
			}
			*out = buf;
			*n = count;
			return 0;
		}
		/* Leave headroom for entries created meanwhile. */
		if (count > UINT32_MAX - count / 4 - 16) {
			free(buf);
			return -EOVERFLOW;
		}
		room = count + count / 4 + 16;
	}
	free(buf);
	return -EAGAIN;
}

int bcs__job_list(int fd, struct bcs_job_info **out, size_t *n)
{
	return list_ioctl(fd, 0, 0, (void **)out, n);
}

int bcs__task_stats(int fd, uint32_t job, struct bcs_task_stat **out,
		    size_t *n)
{
	return list_ioctl(fd, 1, job, (void **)out, n);
}

int bcs__get_state(int fd, struct bcs_state *st)
{
	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return bcs__ioctl(fd, BCS_IOC_GET_STATE, st);
}

int bcs_job_list(struct bcs *h, struct bcs_job_info **out, size_t *n)
{
	if (!h)
		return -EBADF;
	return bcs__job_list(h->fd, out, n);
}

int bcs_task_stats(struct bcs *h, uint32_t job, struct bcs_task_stat **out,
		   size_t *n)
{
	if (!h)
		return -EBADF;
	return bcs__task_stats(h->fd, job, out, n);
}

int bcs_get_state(struct bcs *h, struct bcs_state *st)
{
	if (!h)
		return -EBADF;
	return bcs__get_state(h->fd, st);
}

static int attach_ioctl(struct bcs *h, unsigned long req, uint32_t job,
			pid_t pid, uint32_t flags, uint32_t *nr)
{
	struct bcs_attach a;
	int err;

	if (!h)
		return -EBADF;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.job = job;
	a.pid = pid;
	err = bcs__ioctl(h->fd, req, &a);
	if (!err && nr)
		*nr = a.nr_tasks;
	return err;
}

int bcs_attach(struct bcs *h, uint32_t job, pid_t pid, uint32_t flags,
	       uint32_t *nr)
{
	return attach_ioctl(h, BCS_IOC_ATTACH, job, pid, flags, nr);
}

int bcs_detach(struct bcs *h, uint32_t job, pid_t pid, uint32_t flags,
	       uint32_t *nr)
{
	return attach_ioctl(h, BCS_IOC_DETACH, job, pid, flags, nr);
}

static int window_op(struct bcs *h, uint32_t op, uint64_t from, uint64_t to,
		     struct bcs_window *out)
{
	struct bcs_window w;
	int err;

	if (!h)
		return -EBADF;
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.op = op;
	w.from_slice = from;
	w.to_slice = to;
	err = bcs__ioctl(h->fd, BCS_IOC_WINDOW, &w);
	if (!err && out)
		*out = w;
	return err;
}

int bcs_window_set(struct bcs *h, uint64_t from, uint64_t to)
{
	return window_op(h, BCS_WINDOW_ARM, from, to, NULL);
}

int bcs_window_clear(struct bcs *h)
{
	return window_op(h, BCS_WINDOW_DISARM, 0, 0, NULL);
}

int bcs_window_get(struct bcs *h, struct bcs_window *w)
{
	if (!w)
		return -EINVAL;
	return window_op(h, BCS_WINDOW_GET, 0, 0, w);
}

int bcs_dist_ctl(struct bcs *h, uint32_t job, uint32_t op, uint32_t metrics,
		 uint32_t sub_bits, const int32_t *pids, uint32_t nr_pids)
{
	struct bcs_dist_ctl c;

	if (!h)
		return -EBADF;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.job = job;
	c.op = op;
	c.metrics = metrics;
	c.sub_bits = sub_bits;
	c.nr_pids = nr_pids;
	c.pids = (uintptr_t)pids;
	return bcs__ioctl(h->fd, BCS_IOC_DIST_CTL, &c);
}

static int dist_read(struct bcs *h, struct bcs_dist_read *rd, uint32_t job,
		     pid_t pid, uint32_t metric, uint32_t flags, void *buf,
		     size_t size)
{
	if (!h)
		return -EBADF;
	memset(rd, 0, sizeof(*rd));
	rd->size = sizeof(*rd);
	rd->job = job;
	rd->pid = pid;
	rd->metric = metric;
	rd->flags = flags;
	rd->buf = (uintptr_t)buf;
	rd->buf_size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	return bcs__ioctl(h->fd, BCS_IOC_DIST_READ, rd);
}

int bcs_dist_read(struct bcs *h, uint32_t job, pid_t pid, uint32_t metric,
		  void *buf, size_t size, size_t *needed,
		  struct bcs_dist_totals *totals)
{
	struct bcs_dist_read rd;
	int err;

	err = dist_read(h, &rd, job, pid, metric, 0, buf, size);
	if ((!err || err == -ENOSPC) && needed)
		*needed = rd.buf_size;
	if (!err && totals)
		*totals = rd.totals;
	return err;
}

int bcs_dist_hist(struct bcs *h, uint32_t job, pid_t pid, uint32_t metric,
		  struct bcs_hist_header **out, struct bcs_dist_totals *totals)
{
	size_t room = 0, need = 0;
	void *buf = NULL;
	int err, tries;

	if (!out)
		return -EINVAL;
	*out = NULL;
	/* Buckets that fill between two reads: a few more tries. */
	for (tries = 0; tries < 4; tries++) {
		err = bcs_dist_read(h, job, pid, metric, buf, room, &need,
				    totals);
		if ((err && err != -ENOSPC) || need <= room)
			break;
		err = -ENOSPC;
		free(buf);
		room = need + 64 * sizeof(struct bcs_hist_bucket);
		buf = malloc(room);
		if (!buf)
			return -ENOMEM;
	}
	if (err || !need) {
		free(buf);
		return err == -ENOSPC ? -EAGAIN : err;
	}
	*out = buf;
	return 0;
}

int bcs_dist_next(struct bcs *h, uint32_t job, pid_t pid, pid_t *next)
{
	struct bcs_dist_read rd;
	int err;

	err = dist_read(h, &rd, job, pid, 0, BCS_DIST_NEXT, NULL, 0);
	if (!err && next)
		*next = rd.pid;
	return err;
}

int bcs_config_get(struct bcs *h, struct bcs_config *cfg)
{
	if (!h)
		return -EBADF;
	if (!cfg)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	return bcs__ioctl(h->fd, BCS_IOC_CONFIG, cfg);
}

int bcs_config_set(struct bcs *h, struct bcs_config *cfg)
{
	struct bcs_config c;
	int err;

	if (!h)
		return -EBADF;
	if (!cfg)
		return -EINVAL;
	/* Copy so that stale reserved fields of the caller never leak in. */
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.set = cfg->set;
	c.slice_ns = cfg->slice_ns;
	c.mode = cfg->mode;
	c.watchdog_slices = cfg->watchdog_slices;
	err = bcs__ioctl(h->fd, BCS_IOC_CONFIG, &c);
	if (!err)
		*cfg = c;
	return err;
}

int bcs_strobe(struct bcs *h, const struct bcs_strobe *s)
{
	struct bcs_strobe c;

	if (!h)
		return -EBADF;
	if (!s)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = s->flags;
	c.slice = s->slice;
	c.deadline_ns = s->deadline_ns;
	c.slice_ns = s->slice_ns;
	c.row = s->row;
	/*
	 * Only with its flag: callers built before next_row existed left
	 * that word (then reserved) as it was, and the library zeroed it.
	 */
	if (c.flags & BCS_STROBE_PREDICT)
		c.next_row = s->next_row;
	/* So are the plan's (then a reserved word), for the same reason. */
	if (c.flags & BCS_STROBE_PLAN) {
		c.plan_rows = s->plan_rows;
		c.plan_slices = s->plan_slices;
	}
	return bcs__ioctl(h->fd, BCS_IOC_STROBE, &c);
}

const char *bcs_mode_name(uint32_t mode)
{
	switch (mode) {
	case BCS_MODE_OFF:
		return "off";
	case BCS_MODE_STANDALONE:
		return "standalone";
	case BCS_MODE_DRIVEN:
		return "driven";
	}
	return "?";
}

const char *bcs_job_state_name(uint32_t state)
{
	switch (state) {
	case BCS_JOB_RUNNING:
		return "running";
	case BCS_JOB_SUSPENDED:
		return "suspended";
	}
	return "?";
}

const char *bcs_task_state_name(uint32_t state)
{
	switch (state) {
	case BCS_TASK_RUNNABLE:
		return "runnable";
	case BCS_TASK_BLOCKED:
		return "blocked";
	case BCS_TASK_PARKED:
		return "parked";
	}
	return "?";
}

static const char *const bcs_dist_names[BCS_DIST_METRICS] = {
	[BCS_DIST_BURST]	= "burst",
	[BCS_DIST_BLOCKED]	= "blocked",
	[BCS_DIST_SUSPENDED]	= "suspended",
	[BCS_DIST_WAIT]		= "wait",
};

const char *bcs_dist_metric_name(uint32_t m)
{
	return m < BCS_DIST_METRICS ? bcs_dist_names[m] : "?";
}

int bcs_dist_metrics_parse(const char *s, uint32_t *metrics)
{
	uint32_t mask = 0, m;
	const char *end;
	size_t len;

	if (!s)
		return -EINVAL;
	do {
		end = strchr(s, ',');
		len = end ? (size_t)(end - s) : strlen(s);
		if (len == 3 && !strncmp(s, "all", 3)) {
			mask |= BCS_DIST_ALL;
		} else {
			for (m = 0; m < BCS_DIST_METRICS; m++)
				if (strlen(bcs_dist_names[m]) == len &&
				    !strncmp(s, bcs_dist_names[m], len))
					break;
			if (m == BCS_DIST_METRICS)
				return -EINVAL;
			mask |= 1U << m;
		}
		s = end + 1;
	} while (end);
	*metrics |= mask;
	return 0;
}

const char *bcs_window_state_name(uint32_t state)
{
	switch (state) {
	case BCS_WINDOW_NONE:
		return "none";
	case BCS_WINDOW_ARMED:
		return "armed";
	case BCS_WINDOW_CAPTURING:
		return "capturing";
	case BCS_WINDOW_DONE:
		return "done";
	}
	return "?";
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: the job dump, one JSON document with a job's statistics on one
 * node (Documentation/uapi.rst, "Job dumps"), and the JSON of one slice
 * record that bcsstat prints too.
 *
 * The JSON is written here by a small streaming writer rather than with a
 * JSON library: the documents hold only unsigned integers, booleans,
 * null, fixed ASCII keys and two strings (the node's name and the
 * version), so a writer is a few lines, a dump of thousands of tasks and
 * 10,000 slice records needs no tree in memory, and the programs that
 * link libbcs (bcsd, MPI launchers) get no new dependency.  Reading dumps
 * is bcsstat's business (json-c).
 */
#define _GNU_SOURCE		/* mkostemp() */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* Slice flags                                                          */
/* ------------------------------------------------------------------ */

static const struct {
	uint32_t bit;
	char c;
} slice_flag_names[] = {
	{ BCS_SLICE_LATE, 'L' },
	{ BCS_SLICE_STANDALONE, 'S' },
	{ BCS_SLICE_DRIVEN, 'D' },
	{ BCS_SLICE_FAILOPEN, 'F' },
	{ BCS_SLICE_INJECTED, 'I' },
	{ BCS_SLICE_DRAIN_CUT, 'C' },
	{ BCS_SLICE_OVERTAKEN, 'O' },
	{ BCS_SLICE_PREDICTED, 'P' },
	{ BCS_SLICE_EXPIRED, 'E' },
	{ BCS_SLICE_PLANNED, 'N' },
};

#define NR_SLICE_FLAGS	(sizeof(slice_flag_names) / sizeof(slice_flag_names[0]))

const char *bcs_slice_flags_str(char buf[BCS_SLICE_FLAGS_LEN], uint32_t flags)
{
	size_t i;

	_Static_assert(NR_SLICE_FLAGS < BCS_SLICE_FLAGS_LEN,
		       "a letter for every flag, and the NUL");
	for (i = 0; i < NR_SLICE_FLAGS; i++)
		buf[i] = flags & slice_flag_names[i].bit ?
			 slice_flag_names[i].c : '-';
	buf[i] = '\0';
	return buf;
}

int bcs_slice_flags_parse(const char *s, uint32_t *flags)
{
	size_t i;

	if (!s || !flags)
		return -EINVAL;
	*flags = 0;
	for (; *s; s++) {
		if (*s == '-')
			continue;
		for (i = 0; i < NR_SLICE_FLAGS; i++)
			if (*s == slice_flag_names[i].c)
				break;
		if (i == NR_SLICE_FLAGS)
			return -EINVAL;
		*flags |= slice_flag_names[i].bit;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The writer                                                           */
/* ------------------------------------------------------------------ */

/*
 * @s as a JSON string.  Control characters, '"' and '\' are escaped;
 * bytes outside ASCII become '?', so that the output is valid UTF-8
 * whatever the bytes (host names are ASCII).
 */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else if (c >= 0x80)
			fputc('?', f);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void put_u64(FILE *f, const char *key, uint64_t v, int comma)
{
	fprintf(f, "%s\"%s\":%" PRIu64, comma ? "," : "", key, v);
}

static int io_result(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

int bcs_slice_json(FILE *out, const struct bcs_slice_record *r)
{
	char fl[BCS_SLICE_FLAGS_LEN];

	if (!out || !r)
		return -EINVAL;
	fputc('{', out);
	put_u64(out, "seq", r->seq, 0);
	put_u64(out, "slice", r->slice, 1);
	if (r->row == BCS_ROW_NONE)
		fputs(",\"row\":null", out);
	else
		put_u64(out, "row", r->row, 1);
	fprintf(out, ",\"flags\":\"%s\"", bcs_slice_flags_str(fl, r->flags));
	put_u64(out, "strobe_ns", r->strobe_ns, 1);
	put_u64(out, "deadline_ns", r->deadline_ns, 1);
	put_u64(out, "switch_start_ns", r->switch_start_ns, 1);
	put_u64(out, "switch_end_ns", r->switch_end_ns, 1);
	put_u64(out, "interval_ns", r->interval_ns, 1);
	put_u64(out, "switch_ns", r->switch_ns, 1);
	put_u64(out, "suspended", r->nr_suspended, 1);
	put_u64(out, "resumed", r->nr_resumed, 1);
	put_u64(out, "running", r->nr_running, 1);
	put_u64(out, "blocked", r->nr_blocked, 1);
	put_u64(out, "late", r->late, 1);
	put_u64(out, "missed", r->missed, 1);
	put_u64(out, "late_total", r->late_total, 1);
	put_u64(out, "missed_total", r->missed_total, 1);
	put_u64(out, "parked_ns", r->parked_ns, 1);
	put_u64(out, "resumed_ns", r->resumed_ns, 1);
	fputc('}', out);
	return io_result(out);
}

int bcs_hist_json(FILE *out, const struct bcs_hist_header *h)
{
	const struct bcs_hist_bucket *b;
	uint32_t i;

	if (!out || !h || !bcs__hist_valid(h))
		return -EINVAL;
	b = (const void *)(h + 1);
	fprintf(out, "{\"sub_bits\":%u", h->sub_bits);
	put_u64(out, "count", h->count, 1);
	put_u64(out, "sum", h->sum, 1);
	put_u64(out, "min", h->min, 1);
	put_u64(out, "max", h->max, 1);
	fprintf(out, ",\"saturated\":%s,\"buckets\":[",
		h->flags & BCS_HIST_SATURATED ? "true" : "false");
	for (i = 0; i < h->nr_buckets; i++)
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
			i ? "," : "",
			(uint64_t)bcs_hist_lower(b[i].index, h->sub_bits),
			(uint64_t)bcs_hist_upper(b[i].index, h->sub_bits),
			(uint64_t)b[i].count);
	fputs("]}", out);
	return io_result(out);
}

/* "metrics" or "merged": an object with the histograms that are there. */
static int put_hists(FILE *out, const char *key,
		     const struct bcs_hist_header *const hist[BCS_DIST_METRICS])
{
	int k, n = 0, err;

	fprintf(out, ",\"%s\":{", key);
	for (k = 0; k < BCS_DIST_METRICS; k++) {
		if (!hist[k])
			continue;
		fprintf(out, "%s\"%s\":", n++ ? "," : "",
			bcs_dist_metric_name((uint32_t)k));
		err = bcs_hist_json(out, hist[k]);
		if (err)
			return err;
	}
	fputc('}', out);
	return 0;
}

enum { DUMP_TASKS, DUMP_SLICES, DUMP_DONE };

struct bcs_dump {
	FILE *out;
	int state;
	int slices;		/* write "slices" even if none come */
	uint64_t nr_tasks, nr_slices;
	int err;		/* the first error */
};

static int dump_err(struct bcs_dump *d, int err)
{
	if (err && !d->err)
		d->err = err;
	return err;
}

int bcs_dump_begin(FILE *out, const struct bcs_dump_head *head,
		   struct bcs_dump **dp)
{
	struct bcs_dump *d;
	int k, err;

	if (!dp)
		return -EINVAL;
	*dp = NULL;
	if (!out || !head || !head->node)
		return -EINVAL;
	for (k = 0; k < BCS_DIST_METRICS; k++)
		if (head->merged[k] && !bcs__hist_valid(head->merged[k]))
			return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->out = out;
	d->slices = head->slices;
	fprintf(out, "{\"format\":");
	put_str(out, BCS_DUMP_FORMAT);
	fprintf(out, ",\"version\":%d,\"bcs_version\":", BCS_DUMP_VERSION);
	put_str(out, head->bcs_version ? head->bcs_version :
		BCS_PACKAGE_VERSION);
	fputs(",\"node\":", out);
	put_str(out, head->node);
	put_u64(out, "job", head->job, 1);
	if (head->row == BCS_ROW_NONE)
		fputs(",\"row\":null", out);
	else
		put_u64(out, "row", head->row, 1);
	put_u64(out, "time_ns", head->time_ns, 1);
	put_u64(out, "monotonic_ns", head->monotonic_ns, 1);
	err = 0;
	for (k = 0; k < BCS_DIST_METRICS; k++)
		if (head->merged[k])
			break;
	if (k < BCS_DIST_METRICS)
		err = put_hists(out, "merged", head->merged);
	fputs(",\n\"tasks\":[", out);
	*dp = d;
	return dump_err(d, err ? err : io_result(out));
}

int bcs_dump_task(struct bcs_dump *d, const struct bcs_dump_task *t)
{
	const struct bcs_dist_totals *s;
	FILE *out;

	if (!d || !t || d->state != DUMP_TASKS)
		return -EINVAL;
	out = d->out;
	s = &t->totals;
	fprintf(out, "%s\n{\"pid\":%" PRId32, d->nr_tasks++ ? "," : "",
		t->pid);
	if (t->tgid > 0)
		fprintf(out, ",\"tgid\":%" PRId32, t->tgid);
	else
		fputs(",\"tgid\":null", out);
	if (t->node) {
		fputs(",\"node\":", out);
		put_str(out, t->node);
	}
	fprintf(out, ",\"gone\":%s,\"tracking\":%s",
		s->flags & BCS_DIST_GONE ? "true" : "false",
		s->flags & BCS_DIST_TRACKING ? "true" : "false");
	fputs(",\"totals\":{", out);
	put_u64(out, "start_ns", s->start_ns, 0);
	put_u64(out, "tracked_ns", s->tracked_ns, 1);
	put_u64(out, "run_ns", s->run_ns, 1);
	put_u64(out, "blocked_ns", s->blocked_ns, 1);
	put_u64(out, "suspended_ns", s->suspended_ns, 1);
	put_u64(out, "wait_ns", s->wait_ns, 1);
	put_u64(out, "bursts", s->bursts, 1);
	put_u64(out, "preemptions", s->preemptions, 1);
	put_u64(out, "suspensions", s->suspensions, 1);
	fputs(",\"state\":", out);
	put_str(out, bcs_dist_metric_name(s->state));
	fputc('}', out);
	if (dump_err(d, put_hists(out, "metrics", t->hist)))
		return d->err;
	fputc('}', out);
	return dump_err(d, io_result(out));
}

int bcs_dump_slice(struct bcs_dump *d, const struct bcs_slice_record *r)
{
	if (!d || !r || d->state == DUMP_DONE)
		return -EINVAL;
	if (d->state == DUMP_TASKS) {
		fputs("\n],\n\"slices\":[", d->out);
		d->state = DUMP_SLICES;
	}
	fputs(d->nr_slices++ ? ",\n" : "\n", d->out);
	return dump_err(d, bcs_slice_json(d->out, r));
}

int bcs_dump_end(struct bcs_dump *d)
{
	int err;

	if (!d)
		return -EINVAL;
	if (d->state == DUMP_TASKS)
		fputs(d->slices ? "\n],\n\"slices\":[\n]}\n" : "\n]}\n", d->out);
	else
		fputs("\n]}\n", d->out);
	dump_err(d, io_result(d->out));
	err = d->err;
	free(d);
	return err;
}

/* ------------------------------------------------------------------ */
/* A job's dump                                                         */
/* ------------------------------------------------------------------ */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The records the ring holds, oldest first; *@recs to be freed. */
static int ring_records(struct bcs_stat *st, struct bcs_slice_record **recs,
			size_t *n)
{
	struct bcs_stat_header hdr;
	uint64_t from;
	int err;

	*recs = NULL;
	*n = 0;
	err = bcs_stat_map(st);
	if (!err)
		err = bcs_stat_header(st, &hdr);
	if (err)
		return err;
	from = hdr.head > hdr.nr_records ? hdr.head - hdr.nr_records : 0;
	*recs = calloc(hdr.nr_records ? hdr.nr_records : 1, sizeof(**recs));
	if (!*recs)
		return -ENOMEM;
	err = bcs_stat_snapshot(st, from, *recs, hdr.nr_records, n, NULL);
	if (err) {
		free(*recs);
		*recs = NULL;
	}
	return err;
}

/* The tgid of thread @pid among @tasks, 0 if it is not there. */
static int32_t tgid_of(const struct bcs_task_stat *tasks, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tasks[i].pid == pid)
			return tasks[i].tgid;
	return 0;
}

/* Write task @pid of @job; -ESRCH if it went away meanwhile. */
static int dump_one_task(struct bcs *h, struct bcs_dump *d, uint32_t job,
			 pid_t pid, int32_t tgid)
{
	struct bcs_hist_header *hist[BCS_DIST_METRICS] = { NULL };
	struct bcs_dump_task t;
	int k, err = 0;

	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.tgid = tgid;
	for (k = 0; k < BCS_DIST_METRICS && !err; k++)
		err = bcs_dist_hist(h, job, pid, (uint32_t)k, &hist[k],
				    k ? NULL : &t.totals);
	if (!err) {
		for (k = 0; k < BCS_DIST_METRICS; k++)
			t.hist[k] = hist[k];
		err = bcs_dump_task(d, &t);
	}
	for (k = 0; k < BCS_DIST_METRICS; k++)
		free(hist[k]);
	return err;
}

int bcs_job_dump(struct bcs *h, uint32_t job, FILE *out, unsigned int flags)
{
	struct bcs_slice_record *recs = NULL;
	struct bcs_task_stat *tasks = NULL;
	struct bcs_job_info *jobs = NULL;
	struct bcs_dump_head head;
	struct bcs_stat *st = NULL;
	size_t nr_tasks = 0, nr_jobs = 0, nr_recs = 0, i;
	struct bcs_dump *d;
	char host[256];
	pid_t pid = 0;
	int err;

	if (!h)
		return -EBADF;
	if (!out || (flags & ~BCS_DUMP_FLAGS) || !bcs_job_id_valid(job))
		return -EINVAL;
	memset(&head, 0, sizeof(head));
	head.job = job;
	head.row = BCS_ROW_NONE;
	head.slices = !(flags & BCS_DUMP_NO_SLICES);
	head.time_ns = now_ns(CLOCK_REALTIME);
	head.monotonic_ns = now_ns(CLOCK_MONOTONIC);
	if (gethostname(host, sizeof(host)))
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	head.node = host;

	/* Everything that can fail before a byte is written. */
	err = bcs_dist_next(h, job, 0, &pid);
	if (err == -ESRCH)
		pid = 0;
	else if (err)
		return err;
	if (head.slices) {
		err = bcs_stat_open(&st);
		if (!err)
			err = ring_records(st, &recs, &nr_recs);
		bcs_stat_close(st);
		if (err)
			return err;
	}
	/* The row and the tgids, while the job exists. */
	if (!bcs_job_list(h, &jobs, &nr_jobs))
		for (i = 0; i < nr_jobs; i++)
			if (jobs[i].id == job)
				head.row = jobs[i].row;
	free(jobs);
	if (bcs_task_stats(h, job, &tasks, &nr_tasks))
		nr_tasks = 0;

	err = bcs_dump_begin(out, &head, &d);
	if (err)
		goto out;
	while (pid > 0 && !d->err) {
		err = dump_one_task(h, d, job, pid,
				    tgid_of(tasks, nr_tasks, pid));
		/* A task gone between the two reads, or hidden: skip it. */
		if (err && err != -ESRCH && err != -EPERM)
			dump_err(d, err);
		err = bcs_dist_next(h, job, pid, &pid);
		if (err == -ESRCH || err == -ENOENT)
			break;
		dump_err(d, err);
	}
	for (i = 0; i < nr_recs && !d->err; i++)
		bcs_dump_slice(d, &recs[i]);
	err = bcs_dump_end(d);
out:
	free(tasks);
	free(recs);
	return err;
}

int bcs_job_dump_file(struct bcs *h, uint32_t job, const char *path,
		      unsigned int flags)
{
	const char *slash;
	char *tmp, *dir;
	FILE *f;
	int fd, err, derr;

	if (!path || !*path)
		return -EINVAL;
	tmp = malloc(strlen(path) + sizeof(".XXXXXX"));
	if (!tmp)
		return -ENOMEM;
	sprintf(tmp, "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	f = fchmod(fd, 0644) ? NULL : fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	err = bcs_job_dump(h, job, f, flags);
	if (!err && fflush(f))
		err = -errno;
	if (!err && fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		goto fail;
	/* The rename itself, on disk: best effort. */
	slash = strrchr(path, '/');
	dir = slash ? strndup(path, (size_t)(slash - path) + 1) : NULL;
	fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		derr = fsync(fd);
		(void)derr;
		close(fd);
	}
	free(dir);
	free(tmp);
	return 0;
fail:
	unlink(tmp);
	free(tmp);
	return err;
}

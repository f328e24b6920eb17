/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcs - user-space access to the bcs gang scheduler.
 *
 * Thin, allocation-light wrappers around the interface described in
 * <linux/bcs.h>: the ioctls of /dev/bcs, the slice ring of /dev/bcsstat and
 * the generic netlink family "bcs".  Every function that returns int returns
 * 0 on success or a negative errno value; nothing prints and nothing exits,
 * so the library can live inside daemons and MPI launchers.  The size fields
 * of the ioctl structures are filled in by the library.
 *
 * Handles are not thread-safe: use one handle per thread, or lock around it.
 */
#ifndef LIBBCS_BCS_H
#define LIBBCS_BCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/bcs.h>
#include <linux/bcs_hist.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is versioned with bcs as a whole (<linux/bcs.h>). */
#define LIBBCS_VERSION		BCS_PACKAGE_VERSION

/* Environment variables overriding the device paths (used by tests). */
#define BCS_ENV_DEVICE		"BCS_DEVICE"
#define BCS_ENV_STAT_DEVICE	"BCS_STAT_DEVICE"
#define BCS_DEVICE_PATH		"/dev/" BCS_DEVICE_NAME
#define BCS_STAT_DEVICE_PATH	"/dev/" BCS_STAT_DEVICE_NAME

/* ------------------------------------------------------------------ */
/* /dev/bcs                                                             */
/* ------------------------------------------------------------------ */

struct bcs;

/* Open /dev/bcs (or $BCS_DEVICE) read-write, close-on-exec. */
int bcs_open(struct bcs **out);
/* Close the handle; NULL is accepted. */
void bcs_close(struct bcs *h);
/* The file descriptor behind the handle, for poll() or direct ioctls. */
int bcs_fd(const struct bcs *h);

/*
 * Create job @id (0: let the module pick one) in @row (BCS_ROW_NONE or
 * 0 .. BCS_ROWS_MAX - 1).  The id actually used is stored in *@id_out if
 * @id_out is not NULL.
 */
int bcs_job_create(struct bcs *h, uint32_t id, uint32_t row,
		   uint32_t *id_out);
int bcs_job_destroy(struct bcs *h, uint32_t id);
int bcs_job_set_row(struct bcs *h, uint32_t id, uint32_t row);

/*
 * Alternate scheduling (LIBBCS_1.6; see "Rows of a job" in <linux/bcs.h>):
 * like bcs_job_create() and bcs_job_set_row(), for a job that runs in
 * @row and also in every row r whose bit (1ULL << r) is set in @rows
 * (BCS_JOB_ROWS; @row's own bit may be set or not; @rows must be 0 with
 * BCS_ROW_NONE: -EINVAL).  bcs_job_set_rows() with @at_slice 0 moves the
 * job at the next switch; otherwise at the first switch to a global slice
 * numbered @at_slice or later (BCS_JOB_AT_SLICE), so that every node
 * moves it in the same slice.  Both return 0 or a negative errno.
 */
int bcs_job_create_rows(struct bcs *h, uint32_t id, uint32_t row,
			uint64_t rows, uint32_t *id_out);
int bcs_job_set_rows(struct bcs *h, uint32_t id, uint32_t row,
		     uint64_t rows, uint64_t at_slice);

/*
 * Filler jobs (LIBBCS_1.7; see "Filler jobs" in <linux/bcs.h>): make job
 * @id a filler job, which also runs in the slices where no job with tasks
 * here runs by its rows, or (@filler false) not one, from the next switch
 * (BCS_JOB_SET_FILLER).  Its rows stay as they are.  struct bcs_job_info
 * has BCS_JOB_FILLER in @flags for a filler job.  0 or a negative errno
 * (-EINVAL from a module before filler jobs).
 */
int bcs_job_set_filler(struct bcs *h, uint32_t id, bool filler);

/*
 * Owners (LIBBCS_1.7; see "Permissions" in <linux/bcs.h>): like
 * bcs_job_create(), for a job owned by uid @owner (BCS_JOB_OWNER) rather
 * than by the caller, so that root makes a job that only @owner (and
 * root) may attach to and destroy.  @owner (uid_t)-1: -EINVAL.  struct
 * bcs_job_info has the owner's uid in @owner.
 */
int bcs_job_create_owned(struct bcs *h, uint32_t id, uint32_t row,
			 uid_t owner, uint32_t *id_out);

/*
 * Both at once (LIBBCS_1.7): job @id in @row and the rows of @rows, as
 * bcs_job_create_rows(), owned by uid @owner, as bcs_job_create_owned();
 * what bcsd makes of each job of the master's map.  @owner (uid_t)-1:
 * -EINVAL.
 */
int bcs_job_create_rows_owned(struct bcs *h, uint32_t id, uint32_t row,
			      uint64_t rows, uid_t owner, uint32_t *id_out);

/*
 * Allocate and fill an array with one record per job; release it with
 * free().  On success *@out may be NULL when *@n is 0.  If jobs appear
 * while the list is read, the read is retried with a larger buffer a
 * bounded number of times (-EAGAIN when the list keeps growing).
 */
int bcs_job_list(struct bcs *h, struct bcs_job_info **out, size_t *n);

/* Like bcs_job_list() for the tasks of job @job (0: every job). */
int bcs_task_stats(struct bcs *h, uint32_t job, struct bcs_task_stat **out,
		   size_t *n);

/*
 * Attach process @pid (every thread; with BCS_ATTACH_THREAD only that
 * thread) to @job, or detach it.  The number of threads affected is stored
 * in *@nr if @nr is not NULL.
 */
int bcs_attach(struct bcs *h, uint32_t job, pid_t pid, uint32_t flags,
	       uint32_t *nr);
int bcs_detach(struct bcs *h, uint32_t job, pid_t pid, uint32_t flags,
	       uint32_t *nr);

/* Read the whole configuration (its @set field is ignored and cleared). */
int bcs_config_get(struct bcs *h, struct bcs_config *cfg);
/*
 * Change the fields of @cfg named in @cfg->set (BCS_CONFIG_*); on success
 * @cfg holds the resulting configuration.
 */
int bcs_config_set(struct bcs *h, struct bcs_config *cfg);
/*
 * Send a strobe; @s->size and the reserved fields are handled here.
 * @s->next_row is sent only with BCS_STROBE_PREDICT, @s->plan_rows and
 * @s->plan_slices only with BCS_STROBE_PLAN (a plan, see linux/bcs.h),
 * 0 otherwise.
 */
int bcs_strobe(struct bcs *h, const struct bcs_strobe *s);
int bcs_get_state(struct bcs *h, struct bcs_state *st);

/*
 * Per-task distributions, since LIBBCS_1.2 (BCS_IOC_DIST_CTL): @op (enum bcs_dist_op) for
 * the metrics @metrics (1 << enum bcs_dist_metric, or'ed) at resolution
 * @sub_bits, of job @job as a whole (@pids NULL, @nr_pids 0) or of its
 * @nr_pids threads at @pids.
 */
int bcs_dist_ctl(struct bcs *h, uint32_t job, uint32_t op, uint32_t metrics,
		 uint32_t sub_bits, const int32_t *pids, uint32_t nr_pids);
/*
 * BCS_IOC_DIST_READ: the totals of thread @pid of job @job in *@totals
 * (if not NULL) and the histogram of @metric, in the format of
 * <linux/bcs_hist.h>, into the @size bytes at @buf.  *@needed (if not
 * NULL) gets the bytes the histogram takes, also with -ENOSPC when @size
 * is too small; @buf NULL and @size 0 ask for that size only.
 */
int bcs_dist_read(struct bcs *h, uint32_t job, pid_t pid, uint32_t metric,
		  void *buf, size_t size, size_t *needed,
		  struct bcs_dist_totals *totals);
/*
 * Like bcs_dist_read() into a buffer allocated to fit (release it with
 * free()); *@out is NULL if @metric was never enabled for the task.
 */
int bcs_dist_hist(struct bcs *h, uint32_t job, pid_t pid, uint32_t metric,
		  struct bcs_hist_header **out, struct bcs_dist_totals *totals);
/*
 * The tracked thread of job @job with the smallest pid above @pid
 * (BCS_DIST_NEXT), in *@next; -ESRCH when there is none.
 */
int bcs_dist_next(struct bcs *h, uint32_t job, pid_t pid, pid_t *next);

/*
 * Slice windows, since LIBBCS_1.3 (BCS_IOC_WINDOW, see "Slice windows" in
 * <linux/bcs.h>).  bcs_window_set() arms the ring for the slices @from ..
 * @to (inclusive), replacing any window: only their records are written,
 * and none after them, until bcs_window_clear() (both need CAP_SYS_ADMIN).
 * -EINVAL if @to < @from, -E2BIG if the window has more slices than the
 * ring has records, -ERANGE if slice @from has begun.  bcs_window_get()
 * fills @w with the window (state, bounds, records captured and dropped,
 * the sequence number of its first record).
 */
int bcs_window_set(struct bcs *h, uint64_t from, uint64_t to);
int bcs_window_clear(struct bcs *h);
int bcs_window_get(struct bcs *h, struct bcs_window *w);
/* "none", "armed", "capturing", "done" for enum bcs_window_state. */
const char *bcs_window_state_name(uint32_t state);

/* ------------------------------------------------------------------ */
/* /dev/bcsstat                                                         */
/* ------------------------------------------------------------------ */

struct bcs_stat;

/* Open /dev/bcsstat (or $BCS_STAT_DEVICE) read-only, close-on-exec. */
int bcs_stat_open(struct bcs_stat **out);
void bcs_stat_close(struct bcs_stat *st);
int bcs_stat_fd(const struct bcs_stat *st);

/*
 * Map the header and the ring read-only, using the sizes the header
 * announces.  Fails with -EPROTO if the header is not one this library
 * understands.  Needed by bcs_stat_head() and bcs_stat_snapshot().
 */
int bcs_stat_map(struct bcs_stat *st);
/* A copy of the mapped header (head read atomically). */
int bcs_stat_header(struct bcs_stat *st, struct bcs_stat_header *hdr);
/* Sequence number of the next record to be written. */
int bcs_stat_head(struct bcs_stat *st, uint64_t *head);

/*
 * read(2) path: copy up to @max whole records, in order, from the file's
 * cursor.  Blocks until at least one record is available unless @nonblock,
 * in which case -EAGAIN means "nothing new".  *@n receives the count.
 * Records of a module that made them larger than this header's keep the
 * fields this header knows; -EPROTO if the module's header is not one
 * this library understands.  A file with no header at all (a stand-in
 * for tests) is read as records of this header's size.
 */
int bcs_stat_read(struct bcs_stat *st, struct bcs_slice_record *buf,
		  size_t max, size_t *n, int nonblock);

/*
 * mmap path: copy the valid records with sequence numbers from @from_seq
 * onwards (oldest first, at most @max) from the mapped ring without
 * blocking the writer.  Records overwritten before they could be copied
 * are skipped (the gap shows in their seq); copying stops at a record that
 * is still being written.  *@next_seq (if not NULL) receives the sequence
 * number to pass next time.  To get the newest N records pass
 * head - N (see bcs_stat_head()).
 */
int bcs_stat_snapshot(struct bcs_stat *st, uint64_t from_seq,
		      struct bcs_slice_record *buf, size_t max, size_t *n,
		      uint64_t *next_seq);

/* The query ioctls, through the world-readable /dev/bcsstat. */
int bcs_stat_get_state(struct bcs_stat *st, struct bcs_state *state);
int bcs_stat_job_list(struct bcs_stat *st, struct bcs_job_info **out,
		      size_t *n);
int bcs_stat_task_stats(struct bcs_stat *st, uint32_t job,
			struct bcs_task_stat **out, size_t *n);

/*
 * The flags of a slice record as letters, one per BCS_SLICE_* bit in the
 * order L S D F I C O P E, '-' where a bit is clear ("L--F-----"), as
 * `bcsstat slices` and the job dumps show them; and back (-EINVAL for a
 * letter that is none of these; '-' is skipped).  Since LIBBCS_1.3.
 */
#define BCS_SLICE_FLAGS_LEN	16	/* a letter per flag, and the NUL */
const char *bcs_slice_flags_str(char buf[BCS_SLICE_FLAGS_LEN], uint32_t flags);
int bcs_slice_flags_parse(const char *s, uint32_t *flags);

/*
 * One slice record as a JSON object on one line, without a newline: the
 * form of `bcsstat slices --json` and of the "slices" of a job dump
 * (Documentation/uapi.rst).  -EIO if @out has an error.  Since LIBBCS_1.3.
 */
int bcs_slice_json(FILE *out, const struct bcs_slice_record *r);

/* ------------------------------------------------------------------ */
/* Job dumps (since LIBBCS_1.3)                                         */
/* ------------------------------------------------------------------ */

/*
 * A job dump is one JSON document with the statistics of one job on one
 * node: the per-task totals and distributions of BCS_IOC_DIST_READ and
 * the slice records the ring of /dev/bcsstat holds.  Its format is
 * described, with an example, in Documentation/uapi.rst ("Job dumps");
 * readers check "format" and "version".
 */
#define BCS_DUMP_FORMAT		"bcs-job-dump"
#define BCS_DUMP_VERSION	1

/* bcs_job_dump() flags */
#define BCS_DUMP_NO_SLICES	(1U << 0)	/* leave the slice records out */
#define BCS_DUMP_FLAGS		BCS_DUMP_NO_SLICES

/*
 * Write the dump of job @job on this node to @out: every task of the job
 * that BCS_DIST_NEXT shows (gone ones too), with its totals and the
 * histogram of every metric ever enabled for it, then every slice record
 * the ring holds (unless BCS_DUMP_NO_SLICES).  -ENOENT if the job has no
 * statistics (nothing is written then), -EINVAL for unknown @flags, -EIO
 * if writing failed, or the errno of a failed read; after an error the
 * output may be incomplete.  Needs /dev/bcs and, for the slices,
 * /dev/bcsstat; a caller without CAP_SYS_ADMIN or CAP_SYS_PTRACE sees
 * only its own tasks.  @out is not flushed or closed.
 */
int bcs_job_dump(struct bcs *h, uint32_t job, FILE *out, unsigned int flags);
/*
 * The same into the file @path, atomically: written to a temporary file
 * beside it (@path.XXXXXX, mode 0644), flushed to disk, then renamed to
 * @path, so that @path is either the old file or the whole new dump;
 * nothing is left behind on failure.  The directory must exist.
 */
int bcs_job_dump_file(struct bcs *h, uint32_t job, const char *path,
		      unsigned int flags);

/*
 * The writer behind bcs_job_dump(), for programs that write documents of
 * the same format from other sources (bcsstat dist --json writes the
 * merged statistics of several nodes with it): bcs_dump_begin(), then
 * bcs_dump_task() for each task, then bcs_dump_slice() for each record,
 * then bcs_dump_end(), which frees the writer and returns the first
 * error (-EIO: @out failed; -EINVAL: a histogram not in the format of
 * <linux/bcs_hist.h>, or a call out of order).
 */
struct bcs_dump;

struct bcs_dump_head {
	uint32_t job;
	uint32_t row;		/* BCS_ROW_NONE: none ("row": null) */
	const char *node;	/* this node's name; a merged document: the
				 * nodes' names, comma-separated
				 */
	const char *bcs_version;	/* NULL: BCS_PACKAGE_VERSION */
	uint64_t time_ns;	/* CLOCK_REALTIME of the dump */
	uint64_t monotonic_ns;	/* CLOCK_MONOTONIC at the same time */
	int slices;		/* write "slices" even if no record comes */
	/* The job's tasks added up per metric ("merged"), or all NULL. */
	const struct bcs_hist_header *merged[BCS_DIST_METRICS];
};

struct bcs_dump_task {
	int32_t pid;
	int32_t tgid;		/* 0: not known ("tgid": null) */
	const char *node;	/* NULL: the document's node (no "node") */
	struct bcs_dist_totals totals;
	/* A histogram per metric, NULL where the metric was never enabled. */
	const struct bcs_hist_header *hist[BCS_DIST_METRICS];
};

int bcs_dump_begin(FILE *out, const struct bcs_dump_head *head,
		   struct bcs_dump **d);
int bcs_dump_task(struct bcs_dump *d, const struct bcs_dump_task *t);
int bcs_dump_slice(struct bcs_dump *d, const struct bcs_slice_record *r);
int bcs_dump_end(struct bcs_dump *d);
/* One histogram, as the dumps write it ({"sub_bits": .., "buckets": ..}). */
int bcs_hist_json(FILE *out, const struct bcs_hist_header *h);

/* The buckets of @h, after its header. */
static inline struct bcs_hist_bucket *
bcs_hist_bucket_array(const struct bcs_hist_header *h)
{
	return (struct bcs_hist_bucket *)(void *)(h + 1);
}

/*
 * A new histogram with room for @nr_buckets buckets, zeroed but for its
 * magic and version (the caller sets the rest), to be freed; NULL when
 * out of memory.
 */
struct bcs_hist_header *bcs_hist_alloc(uint32_t nr_buckets);

/*
 * A copy of @src at the resolution @sub_bits, no finer than its own
 * (every bucket of @src lies inside one of the copy's), into *@out, to be
 * freed.  0, or -EINVAL (@src not in the format of <linux/bcs_hist.h>, or
 * @sub_bits finer than @src's) or -ENOMEM.
 */
int bcs_hist_coarsen(const struct bcs_hist_header *src, unsigned int sub_bits,
		     struct bcs_hist_header **out);

/*
 * *@dst plus @src (NULL: nothing) into *@dst: a new histogram at the
 * coarser of the two resolutions (a finer bucket lies inside one coarser
 * bucket, so the sum is exact there), the old *@dst (NULL: none yet)
 * freed.  Counts add up and stop at 2^64 - 1; a sum past it sets
 * BCS_HIST_SATURATED.  0, or -EINVAL (@dst NULL, or *@dst or @src not in
 * the format of <linux/bcs_hist.h>) or -ENOMEM, *@dst unchanged then.
 */
int bcs_hist_add(struct bcs_hist_header **dst,
		 const struct bcs_hist_header *src);

/* ------------------------------------------------------------------ */
/* Generic netlink                                                      */
/* ------------------------------------------------------------------ */

struct bcs_nl;

/* Leave an optional attribute out of a request. */
#define BCS_NL_DEFAULT		UINT32_MAX

/* Connect and resolve family "bcs" (-ENOENT: module not loaded). */
int bcs_nl_open(struct bcs_nl **out);
void bcs_nl_close(struct bcs_nl *nl);
int bcs_nl_fd(const struct bcs_nl *nl);

/*
 * Become the driver and enter driven mode.  @slice_ns 0 and
 * @watchdog_slices BCS_NL_DEFAULT keep the current values.  The socket
 * stays the driver until bcs_nl_release() or bcs_nl_close().
 */
int bcs_nl_drive(struct bcs_nl *nl, uint64_t slice_ns,
		 uint32_t watchdog_slices);
int bcs_nl_release(struct bcs_nl *nl);
/* @slice_ns 0 and @flags 0 are left out of the message. */
int bcs_nl_strobe(struct bcs_nl *nl, uint64_t slice, uint32_t row,
		  uint64_t deadline_ns, uint64_t slice_ns, uint32_t flags);
/*
 * The same from a struct bcs_strobe (@size and the reserved fields are not
 * looked at), with its prediction: BCS_STROBE_PREDICT in @s->flags sends
 * @s->next_row as BCS_A_NEXT_ROW, and its plan: BCS_STROBE_PLAN sends
 * @s->plan_slices as BCS_A_PLAN_SLICES and @s->plan_rows as
 * BCS_A_PLAN_ROWS (each in place of its flag).  Since LIBBCS_1.1.
 */
int bcs_nl_strobe_send(struct bcs_nl *nl, const struct bcs_strobe *s);
/*
 * Fill the fields of @st carried by BCS_CMD_GET_STATE (mode, row, slice,
 * slice_ns, watchdog_slices, failopen, nr_jobs, nr_tasks, strobes, late,
 * missed, failopens, predicted, ..., window_state, planned); every other
 * field is zeroed.
 */
int bcs_nl_get_state(struct bcs_nl *nl, struct bcs_state *st);
/*
 * BCS_CMD_WINDOW, since LIBBCS_1.3: arm the slice window for @from ..
 * @to, as bcs_window_set() does, or disarm it.
 */
int bcs_nl_window_set(struct bcs_nl *nl, uint64_t from, uint64_t to);
int bcs_nl_window_clear(struct bcs_nl *nl);
/*
 * The message of the extended ack of the last failed request, or "" if
 * the kernel sent none.  Valid until the next request on @nl.
 */
const char *bcs_nl_error_msg(const struct bcs_nl *nl);

/* ------------------------------------------------------------------ */
/* The ends of jobs (multicast group "events"), since LIBBCS_1.3        */
/* ------------------------------------------------------------------ */

struct bcs_events;

/* One BCS_CMD_JOB_ENDED. */
struct bcs_job_ended {
	uint32_t job;
	uint32_t reason;	/* enum bcs_job_end */
	uint32_t dist_tasks;	/* tasks whose statistics the job keeps */
	uint32_t reserved;
	uint64_t seq;		/* the module's number of the event */
	uint64_t lost;		/* events missed just before this one */
};

/*
 * Join the group on a socket of its own.  -EPERM without CAP_SYS_ADMIN,
 * -ENOENT if bcs.ko is not loaded, -EOPNOTSUPP if it has no such group.
 * The descriptor (bcs_events_fd()) is for poll(): readable when an event
 * waits.  Events that came before the open are not seen.
 */
int bcs_events_open(struct bcs_events **out);
void bcs_events_close(struct bcs_events *ev);
int bcs_events_fd(const struct bcs_events *ev);
/*
 * The next job's end, oldest first.  Blocks until one comes unless
 * @nonblock (-EAGAIN: none now).  -ENOBUFS: the socket's buffer overflowed
 * and events were lost; the next read goes on with those that came after
 * (the gap shows in @lost too); until the events queued before it are
 * read, the kernel drops new ones for this socket.  -EINTR is retried.
 */
int bcs_events_read(struct bcs_events *ev, struct bcs_job_ended *out,
		    int nonblock);

/* ------------------------------------------------------------------ */
/* Errors                                                               */
/* ------------------------------------------------------------------ */

/* What was being done when an error happened, to word the message. */
enum bcs_err_ctx {
	BCS_CTX_GENERIC = 0,
	BCS_CTX_OPEN,		/* bcs_open() */
	BCS_CTX_STAT_OPEN,	/* bcs_stat_open(), bcs_stat_map() */
	BCS_CTX_JOB,		/* job create, destroy, row, list */
	BCS_CTX_TASK,		/* attach, detach */
	BCS_CTX_CONFIG,		/* bcs_config_get(), bcs_config_set() */
	BCS_CTX_STROBE,		/* bcs_strobe(), bcs_nl_strobe() */
	BCS_CTX_NETLINK,	/* bcs_nl_open(), drive, release */
	BCS_CTX_WINDOW,		/* bcs_window_set(), _clear(), _get() */
};

/*
 * A message for users explaining the negative errno @err in context @ctx.
 * Never NULL.  The string is static, or strerror()'s, or (for messages
 * that name the interface's limits) in a buffer of the calling thread
 * that its next call may overwrite.
 */
const char *bcs_strerror(int err, enum bcs_err_ctx ctx);

/* Names for enum values, "?" if unknown. */
const char *bcs_mode_name(uint32_t mode);
const char *bcs_job_state_name(uint32_t state);
const char *bcs_task_state_name(uint32_t state);
/*
 * Since LIBBCS_1.2: the name of metric @m (enum bcs_dist_metric: "burst",
 * "blocked", "suspended", "wait"), and its inverse for a comma-separated
 * list of names or "all", or'ed into *@metrics as 1 << metric; -EINVAL
 * (and *@metrics untouched) on an unknown or empty name.
 */
const char *bcs_dist_metric_name(uint32_t m);
int bcs_dist_metrics_parse(const char *s, uint32_t *metrics);
/* "destroyed", "exited", "detached" (enum bcs_job_end); since LIBBCS_1.3. */
const char *bcs_job_end_name(uint32_t reason);

#ifdef __cplusplus
}
#endif

#endif /* LIBBCS_BCS_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsstat's commands share this: the parsed command line, the usage
 * errors, the slice flag letters and the reader of slice records from
 * `bcsstat slices --json` files or the local ring.
 */
#ifndef BCSSTAT_H
#define BCSSTAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/bcs.h>

#define EXIT_USAGE	2

enum {
	OPT_N		= 1 << 0,
	OPT_FOLLOW	= 1 << 1,
	OPT_COUNT	= 1 << 2,
	OPT_JSON	= 1 << 3,
	OPT_JOB		= 1 << 4,
	OPT_OUTPUT	= 1 << 5,
	OPT_ARGS	= 1 << 6,	/* takes arguments, not only options */
	OPT_PID		= 1 << 7,
	OPT_METRIC	= 1 << 8,
	OPT_HIST	= 1 << 9,	/* --hist PRIM */
	OPT_NODE	= 1 << 10,	/* --node HOST */
	OPT_RANK	= 1 << 11,	/* --rank R */
	OPT_RANKS	= 1 << 12,	/* mpi --ranks */
	OPT_REPORT	= 1 << 13,	/* mpi --report */
	OPT_SLICES	= 1 << 14,	/* mpi --slices */
};

struct cmd;

struct opts {
	const struct cmd *cmd;
	unsigned int given;	/* OPT_* seen on the command line */
	uint64_t n;
	uint64_t count;
	uint32_t job;
	int32_t pid;
	uint32_t metric;	/* enum bcs_dist_metric */
	const char *output;	/* -o FILE */
	const char *hist;	/* --hist PRIM */
	const char *node;	/* --node HOST */
	int rank;		/* --rank R */
	char **args;		/* the arguments that are not options */
	int nr_args;
};

struct cmd {
	const char *name;
	const char *args;
	const char *help;
	unsigned int allowed;	/* OPT_* accepted */
	int (*run)(const struct opts *o);
	void (*more_help)(FILE *f);	/* optional, after the help line */
};

/* bcsstat events (bcsstat_events.c). */
int run_events(const struct opts *o);

/* bcsstat mpi: the files of libbcsmpi (bcsstat_mpi.c). */
int run_mpi(const struct opts *o);

/*
 * The distributions of primitive @prim ("Allreduce", "MPI_Isend", "comp",
 * "comm") merged over the libbcsmpi files @paths[0 .. @n): its name in
 * @name, the latency histogram in *@lat and the size histogram in *@size
 * (NULL if it has none), both to be freed.  0, or EXIT_FAILURE after
 * saying why (a file unreadable, no such primitive, no distributions).
 */
int mpi_hists(char **paths, int n, const char *prim, char *name,
	      size_t len, struct bcs_hist_header **lat,
	      struct bcs_hist_header **size);

struct bcs_mpi_stats;
struct bcs_mpi_slice;
struct bcs_mpi_call;

/*
 * The libbcsmpi files of FILE|DIR... in @args (those that are not, with
 * @only_mpi, left out: a trace's node files), or with @job and none given
 * the job's files in $BCS_MPI_DIR, as bcsstat mpi finds them: read into
 * *@files (*@n of them, named by *@paths), to be freed with
 * mpi_files_free().  0, or EXIT_FAILURE after saying why.
 */
int mpi_files_load(char **args, int nr_args, const char *job, int only_mpi,
		   struct bcs_mpi_stats **files, char ***paths, int *n);
void mpi_files_free(struct bcs_mpi_stats *files, char **paths, int n);
/* Whether @path is one for mpi_files_load() (FILE.bcsmpi or a DIR). */
int mpi_path_is_mpi(const char *path);

/* ---- per-slice MPI counts (bcsstat_mpislc.c) ---- */

/*
 * The entries of @st's ring of slices, oldest first, into *@out (to be
 * freed; NULL and 0 for none); likewise its calls.  -ENOMEM or a count.
 */
long mpi_slice_entries(const struct bcs_mpi_stats *st,
		       struct bcs_mpi_slice **out);
long mpi_call_events(const struct bcs_mpi_stats *st,
		     struct bcs_mpi_call **out);
/* bcsstat mpi --slices [--json] of @files. */
int mpi_slices_print(const struct bcs_mpi_stats *files, char **paths, int n,
		     int json);

/* Print "bcsstat: MSG 'ARG'" and the usage of @c; returns EXIT_USAGE. */
int usage_err(const struct cmd *c, const char *msg, const char *arg);

/* ---- input: the slice records of one node (bcsstat_input.c) ---- */

struct node_job {
	uint32_t id;
	uint32_t row;		/* BCS_ROW_NONE if none */
};

struct node_input {
	char *name;		/* "node1" from node1.slices.json */
	char *path;		/* the file, or NULL for the local ring */
	struct bcs_slice_record *recs;
	size_t nr_recs;
	struct node_job *jobs;	/* from nodeN.jobs.json beside it, if any */
	size_t nr_jobs;
};

/*
 * Read the records of each of @files (`bcsstat slices --json`), or of the
 * local ring when @nr_files is 0; with @want_jobs, also the jobs.json file
 * beside each slices.json file if there is one, or the jobs of the local
 * module if it lists them.  Prints what went wrong
 * and returns EXIT_FAILURE, or 0 with *@out to be freed by inputs_free().
 */
int inputs_load(char **files, int nr_files, int want_jobs,
		struct node_input **out, size_t *nr_out);
void inputs_free(struct node_input *in, size_t n);

struct json_object;
/* Add @v to object @o as @k. */
void json_add_u64(struct json_object *o, const char *k, uint64_t v);
/* Print @o and a newline on stdout, indented if @pretty. */
void json_print(struct json_object *o, int pretty);
/*
 * The JSON of file @path, or of @text read from @path: one value, or
 * objects one after the other as an array of them.  Prints what is wrong
 * (naming @path) and returns NULL.
 */
struct json_object *json_file_parse(const char *path);
struct json_object *json_text_parse(const char *path, const char *text);

/* ---- distributions: job dumps or the local module (bcsstat_dist.c) ---- */

struct bcs_hist_header;

struct dist_task {
	char *node;
	int32_t pid;
	int32_t tgid;		/* 0: not known */
	struct bcs_dist_totals totals;	/* flags: BCS_DIST_GONE, _TRACKING */
	/* In the format of <linux/bcs_hist.h>; NULL: never enabled. */
	struct bcs_hist_header *hist[BCS_DIST_METRICS];
};

struct dist_job {
	uint32_t id;
	uint32_t row;		/* BCS_ROW_NONE if not known */
	char **nodes;		/* in the order they came */
	size_t nr_nodes;
	size_t nr_docs;
	uint64_t time_ns;	/* the latest dump's */
	uint64_t monotonic_ns;	/* its CLOCK_MONOTONIC, one node only; or 0 */
	struct dist_task *tasks;	/* sorted by node and pid */
	size_t nr_tasks;
};

struct dist_set {
	struct dist_job *jobs;	/* sorted by id */
	size_t nr_jobs;
};

/*
 * The jobs of the dumps in @o->args (merged: the same task of the same
 * node added up), or of the local module when there are none, as
 * --job and --pid select.  Prints what went wrong and returns
 * EXIT_FAILURE; 0 with @set to be freed by dist_free().
 */
int dist_load(const struct opts *o, struct dist_set *set);
void dist_free(struct dist_set *set);
/* Metric @m of every task of @j added up; NULL if none has it. */
/*
 * bcsd's "mpi-gather" of job @job on the control connection @fd (closed
 * here), each rank's file if @by_file: bcs_ctl_call()'s result, *@resp
 * the answer.  The first lines of a tree's answer @o (job, ranks if
 * @ranks, nodes covered and missing, what @lack lacks, what was left out).
 */
int mpi_gather_call(int fd, uint32_t job, int by_file,
		    struct json_object **resp, char *msg, size_t len);
void tree_answer_head(struct json_object *o, const char *lack, int ranks);

/*
 * A histogram as the dumps and bcsd's tree answers write it (sub_bits,
 * count, sum, min, max, saturated, buckets [lower, upper, count]),
 * checked; NULL after a message naming @path and @what.  Free it.
 */
struct bcs_hist_header *dist_hist_parse(const char *path,
					struct json_object *o,
					const char *what);
struct bcs_hist_header *dist_job_hist(const struct dist_job *j, uint32_t m,
				      int *err);
/* @ns with a unit and 3 significant digits ("1.88 ms"). */
const char *dist_fmt_ns(char *buf, size_t len, double ns);
/* @bytes with a unit, 3 significant digits: "8 B", "1 MiB". */
const char *dist_fmt_bytes(char *buf, size_t len, double bytes);

/* How the values of a histogram read: dist_fmt_ns, dist_fmt_bytes. */
typedef const char *(*dist_fmt_fn)(char *buf, size_t len, double v);

/*
 * @h as a text histogram under the heading @title ("burst: CPU time ..."):
 * a row a bucket with a bar, coarsened until it fits a screen, values
 * read by @fmt.  0, or -ENOMEM.
 */
int dist_text_hist(const char *title, const struct bcs_hist_header *h,
		   dist_fmt_fn fmt);

/* ---- what bcsstat plot draws (bcsstat_picture.c) ---- */

struct time_unit {
	const char *name;	/* "ns", "µs", "ms", "s" (UTF-8) */
	double ns;		/* one unit in ns */
};

/*
 * The unit in which times from @lo_ns to @hi_ns read best: the largest
 * in which the larger magnitude is at least 1 (ns at most 999 ns, then
 * us, ms, s).
 */
const struct time_unit *plot_time_unit(double lo_ns, double hi_ns);
/* qsort()'s comparison of doubles, ascending. */
int plot_cmp_double(const void *a, const void *b);

/* The heatmap's columns: one a power of two. */
#define RANK_MAP_SUB_BITS	0
/* A task whose total is this many times the median's, or under its
 * inverse, stands out. */
#define RANK_MAP_OUTLIER	1.5

/*
 * A metric of the tasks of a job as a matrix: a row per task that has
 * values (in the order of the job's tasks), a column per duration bucket
 * from the lowest to the highest bucket of any task, and in each cell
 * the share (%) of the task's time in intervals of that bucket (values
 * of 0 ns are no time and have no column); with each row's total and its
 * ratio to the median total of the rows.
 */
struct rank_map {
	size_t nr_rows, nr_cols;
	unsigned int sub_bits;	/* the columns' resolution */
	char **labels;		/* "pid 130", or "node2 pid 130" */
	double *col_lo, *col_hi;	/* a column's durations, ns */
	double *cell;		/* [row * nr_cols + col] */
	double *total_ns;	/* a row's sum */
	double *ratio;		/* total_ns / the median of total_ns */
	uint64_t *count;	/* a row's values */
	double max_cell;	/* the largest share */
};

/* Whether row @r of @m stands out (RANK_MAP_OUTLIER). */
int rank_map_outlier(const struct rank_map *m, size_t r);

/* 0 (no rows if no task has the metric), or -ENOMEM, -EINVAL. */
int rank_map_build(const struct dist_job *j, uint32_t metric,
		   struct rank_map *m);
void rank_map_free(struct rank_map *m);

/* ---- the commands in their own files ---- */

int run_plot(const struct opts *o);
int run_dist(const struct opts *o);
/* Metric @name ("burst", ...) in *@metric; -EINVAL if it is none. */
int dist_metric_parse(const char *name, uint32_t *metric);
void dist_help(FILE *f);
void plot_help(FILE *f);
int run_trace(const struct opts *o);

#endif /* BCSSTAT_H */

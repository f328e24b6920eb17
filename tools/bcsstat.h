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
};

struct cmd;

struct opts {
	const struct cmd *cmd;
	unsigned int given;	/* OPT_* seen on the command line */
	uint64_t n;
	uint64_t count;
	uint32_t job;
	const char *output;	/* -o FILE */
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

/* Print "bcsstat: MSG 'ARG'" and the usage of @c; returns EXIT_USAGE. */
int usage_err(const struct cmd *c, const char *msg, const char *arg);

/* One letter per BCS_SLICE_* flag, and the NUL. */
#define SLICE_FLAGS_LEN	16

const char *slice_flags(char buf[SLICE_FLAGS_LEN], uint32_t flags);
/* The BCS_SLICE_* bits of a flags string such as "L--F-----"; -EINVAL. */
int slice_flags_parse(const char *s, uint32_t *flags);

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

/* ---- the commands in their own files ---- */

int run_plot(const struct opts *o);
void plot_help(FILE *f);
int run_trace(const struct opts *o);

#endif /* BCSSTAT_H */

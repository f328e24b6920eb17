/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fill policy's classifier (Flexible CoScheduling): which jobs of a
 * node need coscheduling and which may fill the rows in which the node
 * is idle.  Pure code: samples in, a class out; node.c feeds it bcs.ko's
 * per-task totals (struct bcs_dist_totals) and sets the kernel's filler
 * flag from the class.
 */
#ifndef BCSD_FILL_H
#define BCSD_FILL_H

#include <stdbool.h>
#include <stdint.h>

enum fill_class {
	FILL_UNKNOWN,		/* not measured enough yet: coscheduled */
	FILL_CS,		/* fine-grained, waits little: coscheduled */
	FILL_FRUSTRATED,	/* fine-grained, waits much even so: filler */
	FILL_DC,		/* coarse-grained ("don't care"): filler */
};

/* A job's tasks on one node, summed; counters since tracking began. */
struct fill_sample {
	uint64_t run_ns;	/* CPU time */
	uint64_t blocked_ns;	/* voluntary sleeps */
	uint64_t bursts;	/* bursts ended by a voluntary sleep */
};

struct fill_params {
	uint64_t coarse_ns;	/* a mean burst this long or longer: DC */
	uint32_t frustrated_pct; /* blocked share of run + blocked: F */
	uint64_t min_run_ns;	/* less CPU time in a period: no verdict */
	uint32_t confirm;	/* verdicts in a row that change the class */
};

/* One job's classification over successive samples. */
struct fill_state {
	struct fill_sample last;	/* the sample before */
	bool have_last;
	enum fill_class cls;		/* in force */
	enum fill_class pending;	/* a different verdict, ... */
	uint32_t votes;			/* ... seen this many times in a row */
};

/* Whether @p is usable: 0 or -EINVAL. */
int fill_params_check(const struct fill_params *p);

/* The verdict on one period's difference of samples @d. */
enum fill_class fill_verdict(const struct fill_params *p,
			     const struct fill_sample *d);

/*
 * Take sample @now into @s: the verdict on its difference from the sample
 * before (a counter that went back, tasks having left the job, starts the
 * differences and the votes again from @now) changes the class after @p->confirm equal
 * verdicts in a row; a period without a verdict breaks no run.  True if
 * the class changed.
 */
bool fill_update(struct fill_state *s, const struct fill_params *p,
		 const struct fill_sample *now);

/* Whether a job of class @c may run as a filler. */
bool fill_is_filler(enum fill_class c);

const char *fill_class_name(enum fill_class c);

#endif /* BCSD_FILL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Ousterhout matrix as pure code: which jobs share a slice
 * (Documentation/matrix.rst).
 *
 * A job occupies *resources*: nodes, each whole or, where its tasks are
 * bound to CPUs, a set of that node's CPUs.  Two jobs *conflict* when they
 * share a resource: a node both use, with CPU sets that intersect.  The
 * matrix gives every job a *home row* and, with alternate scheduling,
 * further rows; a job runs in every row of its set, on every node at once.
 *
 * Rules, checked by matrix_check():
 *  - no two conflicting jobs run in one row (home or alternate), unless
 *    the rows allowed (@max_rows) are too few: then a job shares the row
 *    where it conflicts least (MATRIX_PACK) and is counted in @overfull;
 *  - every job has a home row, and its row set holds it;
 *  - a job has an alternate row only where no job that conflicts with it
 *    runs in that row;
 *  - only rows that are some job's home row are used (bcs.ko takes turns
 *    over those).
 *
 * Policies (enum matrix_policy):
 *  - MATRIX_ONE_PER_ROW: a row per job, the lowest free (bcs before the
 *    matrix knew where jobs run; the master's "rows 0");
 *  - MATRIX_EMPTIEST: the row holding the fewest jobs (the master's
 *    "rows N" before);
 *  - MATRIX_PACK: first fit: the lowest row in which no job conflicts with
 *    it; matrix_compact() moves jobs down into lower rows where they fit,
 *    each at most once per @move_interval, so rows freed by jobs that end
 *    are given back.  At most (the most jobs any one job conflicts with)
 *    + 1 rows; never fewer than the most jobs on one resource.
 * MATRIX_ALTERNATE (a flag of @flags) adds alternate rows to any policy.
 *
 * Cost: placing, moving or removing a job costs O(its resources) with
 * one 64-bit row mask per node; alternate rows cost O(the resources of
 * all jobs) per pass, a pass for each row a job gains at most.  Nothing
 * is allocated but the job table and the per-node masks, both at init
 * and on adding a job.
 *
 * Not thread-safe; the caller serialises.  Times (@now, @move_interval)
 * are in the caller's unit.
 */
#ifndef BCSD_MATRIX_H
#define BCSD_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MATRIX_ROWS_MAX		64		/* BCS_ROWS_MAX */
#define MATRIX_ROW_NONE		0xffffffffU	/* BCS_ROW_NONE */
#define MATRIX_CPUS_ALL		UINT64_MAX	/* the whole node */

enum matrix_policy {
	MATRIX_PACK = 0,
	MATRIX_ONE_PER_ROW,
	MATRIX_EMPTIEST,
};

#define MATRIX_ALTERNATE	(1U << 0)	/* @flags: alternate rows */

/* One resource of a job: node @node (an index), CPUs @cpus of it. */
struct matrix_res {
	uint32_t node;		/* < the matrix's @nr_nodes */
	uint64_t cpus;		/* CPU n of the node: bit n; MATRIX_CPUS_ALL */
};

struct matrix_job {
	uint32_t id;		/* not 0; the caller's */
	uint32_t row;		/* home row */
	uint64_t rows;		/* rows it runs in, @row's bit included */
	bool pinned;		/* its home row was given: never moved */
	uint64_t moved_at;	/* @now of its last placement */
	uint32_t moves;		/* times placed again after the first */
	uint32_t nr_res;
	struct matrix_res *res;	/* sorted by node, each node once */
	bool whole;		/* every resource a whole node */
};

struct matrix {
	enum matrix_policy policy;
	uint32_t flags;		/* MATRIX_ALTERNATE */
	uint32_t max_rows;	/* 1 .. MATRIX_ROWS_MAX */
	uint64_t move_interval;	/* a job moves at most once per this */
	uint32_t nr_nodes;
	uint32_t nr_jobs;
	uint32_t cap_jobs;
	struct matrix_job *jobs;	/* [0, nr_jobs), by id; they move */
	uint64_t *home;		/* per node: rows with a home job there */
	uint64_t *busy;		/* per node: rows with any job there */
	uint16_t *cnt;		/* per node and row: home jobs there */
	uint16_t *on;		/* per node: jobs there */
	uint32_t overfull;	/* placements that had to share a row */
	uint64_t placements;	/* jobs placed, first times and moves */
};

/*
 * An empty matrix over nodes 0 .. @nr_nodes - 1 with @policy, @flags and
 * at most @max_rows rows (0: MATRIX_ROWS_MAX): 0 or -EINVAL, -ENOMEM.
 */
int matrix_init(struct matrix *m, uint32_t nr_nodes, enum matrix_policy policy,
		uint32_t flags, uint32_t max_rows, uint64_t move_interval);
void matrix_free(struct matrix *m);

/*
 * Job @id, or NULL; O(log jobs).  Valid until the next call that adds or
 * removes a job (the table is kept in id order).
 */
struct matrix_job *matrix_find(const struct matrix *m, uint32_t id);

/*
 * Add job @id on the @nr resources at @res (any order; a node named twice
 * has its CPU sets joined; @nr may be 0: a job whose place is not known
 * conflicts with nothing yet) and place it by the policy, or in row @row
 * if it is not MATRIX_ROW_NONE (pinned).  Returns its home row, or
 * -EEXIST, -EINVAL (id 0, a node out of range, a CPU set of 0, @row out of
 * range), -ENOMEM.  Alternate rows are not updated: matrix_alternates().
 */
int matrix_add(struct matrix *m, uint32_t id, const struct matrix_res *res,
	       uint32_t nr, uint32_t row, uint64_t now);

/*
 * Job @id now occupies the @nr resources at @res (a task attached on a
 * new node, or left one).  If it now conflicts with a job of its home row
 * it is placed again (a move that the interval does not hold back: a
 * conflict would let one of the two gangs run against the other).
 * Returns 1 if it moved, 0 if not, -ENOENT, -EINVAL, -ENOMEM.
 */
int matrix_set_res(struct matrix *m, uint32_t id, const struct matrix_res *res,
		   uint32_t nr, uint64_t now);

/* Pin job @id to row @row, or unpin it (MATRIX_ROW_NONE): 0, -ENOENT, -EINVAL. */
int matrix_pin(struct matrix *m, uint32_t id, uint32_t row, uint64_t now);

/* Remove job @id: 0 or -ENOENT. */
int matrix_remove(struct matrix *m, uint32_t id);

/*
 * MATRIX_PACK: move jobs from higher rows into the lowest row below in
 * which they conflict with nothing, highest rows first, each job at most
 * once per @move_interval (its @moved_at), pinned jobs never.  Returns the
 * number of jobs moved.  Other policies: 0.
 */
uint32_t matrix_compact(struct matrix *m, uint64_t now);

/*
 * MATRIX_PACK, for a periodic tick: colour every job again, those with
 * the most resources first, each in the lowest row where it fits (first
 * fit, largest first); if that takes fewer rows than the matrix uses now,
 * no job is pinned and every job that would change row may move (its
 * @moved_at at least @move_interval ago), move them all; else none (a
 * job moves only with the rest: a half-done recolouring could put two
 * conflicting jobs in one row).  Nothing to do at the lower bound.
 * Returns the number of jobs moved.  O(jobs * resources + jobs log jobs).
 */
uint32_t matrix_repack(struct matrix *m, uint64_t now);

/*
 * Recompute every job's row set: its home row, and with MATRIX_ALTERNATE
 * every other used row in which no job that conflicts with it runs (a
 * job of no resource, whose place is not known yet, none).  Rows
 * are handed out one at a time, each pass to the jobs with the fewest
 * rows first (then the lowest id), so that no job takes every free row
 * from another.  Returns the number of alternate rows given.
 */
uint32_t matrix_alternates(struct matrix *m);

/* The rows that are some job's home row (bit r: row r). */
uint64_t matrix_rows_used(const struct matrix *m);

/*
 * The lower bound of rows for the conflicts of the jobs: the most jobs
 * that share one resource (one node, or one CPU with CPU sets).
 */
uint32_t matrix_lower_bound(const struct matrix *m);

/* Do jobs @a and @b share a resource? */
bool matrix_conflict(const struct matrix_job *a, const struct matrix_job *b);

/*
 * Check every rule above (O(jobs^2 * resources): for tests): 0, or -1
 * with what is wrong in @why (@len bytes).
 */
int matrix_check(const struct matrix *m, char *why, size_t len);

/*
 * After matrix_compact() with every job free to move: no job that is not
 * pinned fits a lower row than its own (so every job's row is at most the
 * number of jobs it conflicts with, and the rows used at most the largest
 * such number + 1).  0, or -1 with the job that would fit in @why.
 */
int matrix_check_compact(const struct matrix *m, char *why, size_t len);

#endif /* BCSD_MATRIX_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the matrix (matrix.c), pure code: the cases
 * (jobs on disjoint nodes share a row; two that share a node alternate and
 * a third on another node runs in every row), CPU sets, pinned rows, moves
 * when a job's nodes change, bounded churn, and random job sets checked
 * against the rules of matrix.h after every step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "master/matrix.h"
#include "tests/unit.h"

#define ALL	MATRIX_CPUS_ALL
#define NONE	MATRIX_ROW_NONE

static bool rules_hold(const struct matrix *m)
{
	char why[160] = "";

	if (matrix_check(m, why, sizeof(why))) {
		fprintf(stderr, "matrix_check: %s\n", why);
		return false;
	}
	return true;
}

static bool compact_holds(const struct matrix *m)
{
	char why[160] = "";

	if (matrix_check_compact(m, why, sizeof(why))) {
		fprintf(stderr, "matrix_check_compact: %s\n", why);
		return false;
	}
	return true;
}

/* Job @id on nodes @a .. @b, whole. */
static int add_range(struct matrix *m, uint32_t id, uint32_t a, uint32_t b,
		     uint64_t now)
{
	struct matrix_res r[64];
	uint32_t n = 0, i;

	for (i = a; i <= b && n < 64; i++)
		r[n++] = (struct matrix_res){ .node = i, .cpus = ALL };
	return matrix_add(m, id, r, n, NONE, now);
}

static uint64_t rows_of(const struct matrix *m, uint32_t id)
{
	const struct matrix_job *j = matrix_find(m, id);

	return j ? j->rows : 0;
}

/* The three-guest case: nodes 0, 1, 2 for node1 .. node3. */
static void test_three_nodes(void)
{
	struct matrix m;

	CHECK(!matrix_init(&m, 3, MATRIX_PACK, MATRIX_ALTERNATE, 0, 0));
	/* Job 1 on node1 and node2, job 2 on node3: one row for both. */
	CHECK(add_range(&m, 1, 0, 1, 0) == 0);
	CHECK(add_range(&m, 2, 2, 2, 0) == 0);
	matrix_alternates(&m);
	CHECK(matrix_rows_used(&m) == 1);
	CHECK(rows_of(&m, 1) == 1 && rows_of(&m, 2) == 1);
	CHECK(rules_hold(&m));
	matrix_free(&m);

	/* Jobs 1 and 2 share node2; job 3 on node3 alone runs in both rows. */
	CHECK(!matrix_init(&m, 3, MATRIX_PACK, MATRIX_ALTERNATE, 0, 0));
	CHECK(add_range(&m, 1, 0, 1, 0) == 0);
	CHECK(add_range(&m, 2, 1, 1, 0) == 1);
	CHECK(add_range(&m, 3, 2, 2, 0) == 0);
	CHECK(matrix_alternates(&m) == 1);
	CHECK(rows_of(&m, 1) == 1);
	CHECK(rows_of(&m, 2) == 2);
	CHECK(rows_of(&m, 3) == 3);
	CHECK(matrix_lower_bound(&m) == 2);
	CHECK(rules_hold(&m));
	/* Job 3's task on node2 too: it moves out of row 0... */
	CHECK(matrix_set_res(&m, 3, (struct matrix_res[]){
		{ .node = 1, .cpus = ALL }, { .node = 2, .cpus = ALL } }, 2,
		5) == 1);
	matrix_alternates(&m);
	CHECK(matrix_find(&m, 3)->row == 2 && matrix_find(&m, 3)->moves == 1);
	CHECK(rules_hold(&m));
	/* ...and job 1 ends: compaction brings the highest down. */
	CHECK(!matrix_remove(&m, 1));
	CHECK(matrix_remove(&m, 1) == -ENOENT);
	/* Highest row first: job 3 takes row 0, job 2 keeps row 1. */
	CHECK(matrix_compact(&m, 5) == 1);
	matrix_alternates(&m);
	CHECK(matrix_find(&m, 3)->row == 0 && matrix_find(&m, 2)->row == 1);
	CHECK(rules_hold(&m) && compact_holds(&m));
	matrix_free(&m);
}

/* The policies of bcs before the matrix knew where jobs run. */
static void test_old_policies(void)
{
	struct matrix m;
	uint32_t i;

	CHECK(!matrix_init(&m, 4, MATRIX_ONE_PER_ROW, 0, 0, 0));
	for (i = 1; i <= 3; i++)
		CHECK(add_range(&m, i, i, i, 0) == (int)i - 1);
	CHECK(!matrix_remove(&m, 2));
	CHECK(add_range(&m, 4, 0, 0, 0) == 1);
	CHECK(matrix_compact(&m, 100) == 0);
	matrix_alternates(&m);
	CHECK(rules_hold(&m));
	matrix_free(&m);

	CHECK(!matrix_init(&m, 4, MATRIX_EMPTIEST, 0, 2, 0));
	CHECK(add_range(&m, 1, 0, 0, 0) == 0);
	CHECK(add_range(&m, 2, 0, 0, 0) == 1);
	CHECK(add_range(&m, 3, 0, 0, 0) == 0);
	CHECK(rules_hold(&m));
	matrix_free(&m);
}

static void test_cpusets(void)
{
	struct matrix_res a[] = { { .node = 0, .cpus = 0x0f } };
	struct matrix_res b[] = { { .node = 0, .cpus = 0xf0 } };
	struct matrix_res c[] = { { .node = 0, .cpus = 0x18 } };
	struct matrix_res d[] = { { .node = 0, .cpus = ALL } };
	struct matrix m;

	CHECK(!matrix_init(&m, 1, MATRIX_PACK, MATRIX_ALTERNATE, 0, 0));
	/* Disjoint CPUs of one node: no conflict (Slurm's CR_Core). */
	CHECK(matrix_add(&m, 1, a, 1, NONE, 0) == 0);
	CHECK(matrix_add(&m, 2, b, 1, NONE, 0) == 0);
	/* CPUs 3 and 4 meet both. */
	CHECK(matrix_add(&m, 3, c, 1, NONE, 0) == 1);
	CHECK(matrix_add(&m, 4, d, 1, NONE, 0) == 2);
	matrix_alternates(&m);
	CHECK(rows_of(&m, 1) == 1 && rows_of(&m, 2) == 1);
	CHECK(rows_of(&m, 3) == 2 && rows_of(&m, 4) == 4);
	CHECK(matrix_lower_bound(&m) == 3);
	CHECK(rules_hold(&m));
	/* A node named twice: its CPU sets joined. */
	CHECK(matrix_set_res(&m, 1, (struct matrix_res[]){ a[0], c[0] }, 2,
			     0) == 1);
	CHECK(matrix_find(&m, 1)->nr_res == 1 &&
	      matrix_find(&m, 1)->res[0].cpus == 0x1f);
	matrix_alternates(&m);
	CHECK(rules_hold(&m));
	matrix_free(&m);
}

static void test_bad_input(void)
{
	struct matrix_res r[] = { { .node = 3, .cpus = ALL } };
	struct matrix_res z[] = { { .node = 0, .cpus = 0 } };
	struct matrix m;

	CHECK(matrix_init(&m, 0, MATRIX_PACK, 0, 0, 0) == -EINVAL);
	CHECK(matrix_init(&m, 1, MATRIX_PACK, 0, 65, 0) == -EINVAL);
	CHECK(matrix_init(&m, 1, MATRIX_PACK, 2, 0, 0) == -EINVAL);
	CHECK(matrix_init(&m, 1, 7, 0, 0, 0) == -EINVAL);
	CHECK(!matrix_init(&m, 3, MATRIX_PACK, 0, 0, 0));
	CHECK(matrix_add(&m, 1, r, 1, NONE, 0) == -EINVAL);
	CHECK(matrix_add(&m, 1, z, 1, NONE, 0) == -EINVAL);
	CHECK(matrix_add(&m, 0, NULL, 0, NONE, 0) == -EINVAL);
	CHECK(matrix_add(&m, 1, NULL, 0, 64, 0) == -EINVAL);
	CHECK(matrix_add(&m, 1, NULL, 0, NONE, 0) == 0);
	CHECK(matrix_add(&m, 1, NULL, 0, NONE, 0) == -EEXIST);
	/* Not known where it runs: no alternate row. */
	CHECK(matrix_add(&m, 2, (struct matrix_res[]){ { 0, ALL } }, 1, 1,
			 0) == 1);
	matrix_alternates(&m);
	CHECK(matrix_find(&m, 1)->rows == 1);
	CHECK(!matrix_remove(&m, 2));
	CHECK(matrix_set_res(&m, 2, NULL, 0, 0) == -ENOENT);
	CHECK(matrix_set_res(&m, 1, r, 1, 0) == -EINVAL);
	CHECK(matrix_pin(&m, 1, 64, 0) == -EINVAL);
	CHECK(matrix_pin(&m, 2, 0, 0) == -ENOENT);
	CHECK(m.nr_jobs == 1 && rules_hold(&m));
	matrix_free(&m);
}

/* Pinned jobs stay; too few rows: the least conflicting row, counted. */
static void test_pinned_and_full(void)
{
	struct matrix m;

	CHECK(!matrix_init(&m, 2, MATRIX_PACK, MATRIX_ALTERNATE, 2, 0));
	CHECK(matrix_add(&m, 1, (struct matrix_res[]){ { 0, ALL } }, 1, 1,
			 0) == 1);
	CHECK(matrix_find(&m, 1)->pinned);
	CHECK(matrix_compact(&m, 10) == 0 && matrix_find(&m, 1)->row == 1);
	CHECK(add_range(&m, 2, 0, 1, 0) == 0);
	CHECK(m.overfull == 0);
	/* Rows 0 and 1 both hold a job on node 0: a third must share. */
	CHECK(add_range(&m, 3, 0, 0, 0) >= 0 && m.overfull == 1);
	matrix_alternates(&m);
	CHECK(rules_hold(&m));
	CHECK(!matrix_pin(&m, 1, NONE, 0) && !matrix_find(&m, 1)->pinned);
	CHECK(!matrix_pin(&m, 2, 1, 0) && matrix_find(&m, 2)->row == 1);
	matrix_free(&m);
}

/* A job moves at most once per interval when compacting. */
static void test_churn(void)
{
	struct matrix m;

	CHECK(!matrix_init(&m, 2, MATRIX_PACK, 0, 0, 100));
	CHECK(add_range(&m, 1, 0, 0, 0) == 0);
	CHECK(add_range(&m, 2, 0, 0, 0) == 1);
	CHECK(add_range(&m, 3, 0, 0, 0) == 2);
	CHECK(!matrix_remove(&m, 1));
	/* Placed at 0: not before 100; then the highest row first. */
	CHECK(matrix_compact(&m, 99) == 0);
	CHECK(matrix_compact(&m, 100) == 1);
	CHECK(matrix_find(&m, 3)->row == 0 && matrix_find(&m, 2)->row == 1);
	CHECK(add_range(&m, 4, 0, 0, 100) == 2);
	CHECK(!matrix_remove(&m, 2));
	/* Job 4 came at 100, job 3 moved at 100: neither before 200. */
	CHECK(matrix_compact(&m, 150) == 0);
	CHECK(matrix_compact(&m, 200) == 1 && matrix_find(&m, 4)->row == 1);
	CHECK(matrix_find(&m, 3)->moves == 1 && matrix_find(&m, 4)->moves == 1);
	matrix_free(&m);
}

/*
 * First fit in the order a, d, b, c of the path a - b - c - d takes three
 * rows, and compaction cannot help; recolouring the largest first takes
 * two, all at once, unless a job may not move yet or is pinned.
 */
static void test_repack(void)
{
	struct matrix_res a[] = { { 0, ALL } }, b[] = { { 0, ALL }, { 1, ALL } };
	struct matrix_res c[] = { { 1, ALL }, { 2, ALL } }, d[] = { { 2, ALL } };
	struct matrix m;
	int pass;

	for (pass = 0; pass < 3; pass++) {
		CHECK(!matrix_init(&m, 3, MATRIX_PACK, MATRIX_ALTERNATE, 0,
				   pass == 1 ? 100 : 0));
		CHECK(matrix_add(&m, 1, a, 1, NONE, 0) == 0);
		CHECK(matrix_add(&m, 4, d, 1, NONE, 0) == 0);
		CHECK(matrix_add(&m, 2, b, 2, pass == 2 ? 1 : NONE, 0) == 1);
		CHECK(matrix_add(&m, 3, c, 2, NONE, 0) == 2);
		CHECK(matrix_rows_used(&m) == 7 && matrix_lower_bound(&m) == 2);
		if (pass) {
			/* Job 2 may not move before 100, or is pinned. */
			CHECK(matrix_compact(&m, 50) == 0);
			CHECK(matrix_rows_used(&m) == 7);
		} else {
			CHECK(matrix_compact(&m, 50) == 3);
			CHECK(matrix_rows_used(&m) == 3);
			CHECK(matrix_find(&m, 2)->row == 0 &&
			      matrix_find(&m, 3)->row == 1 &&
			      matrix_find(&m, 1)->row == 1 &&
			      matrix_find(&m, 4)->row == 0);
			CHECK(matrix_find(&m, 1)->moves == 1);
			/* Nothing left to gain: nothing moves again. */
			CHECK(matrix_repack(&m, 60) == 0);
		}
		matrix_alternates(&m);
		CHECK(rules_hold(&m));
		matrix_free(&m);
	}
}

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

/* Random job sets: every rule after every step, for each policy. */
static void test_random(enum matrix_policy pol, uint32_t flags, bool cpus)
{
	struct matrix_res res[16];
	uint32_t step, id = 1, i, n, nodes = 24, bad = 0, lb_bad = 0;
	struct matrix m;
	uint64_t now = 0;

	CHECK(!matrix_init(&m, nodes, pol, flags, 0, 0));
	for (step = 0; step < 3000; step++) {
		now += 1;
		if (m.nr_jobs < 40 && (rnd(3) || !m.nr_jobs)) {
			n = 1 + rnd(8);
			for (i = 0; i < n; i++) {
				res[i].node = rnd(nodes);
				res[i].cpus = cpus && rnd(2) ?
					(uint64_t)(1 + rnd(255)) : ALL;
			}
			if (matrix_add(&m, id++, res, n, NONE, now) < 0)
				bad++;
		} else if (rnd(4)) {
			if (matrix_remove(&m, m.jobs[rnd(m.nr_jobs)].id))
				bad++;
		} else {
			n = 1 + rnd(8);
			for (i = 0; i < n; i++)
				res[i] = (struct matrix_res){ rnd(nodes), ALL };
			if (matrix_set_res(&m, m.jobs[rnd(m.nr_jobs)].id, res,
					   n, now) < 0)
				bad++;
		}
		matrix_compact(&m, now);
		matrix_alternates(&m);
		if (!rules_hold(&m))
			bad++;
		if (pol == MATRIX_PACK && !compact_holds(&m))
			bad++;
		/* Never below the lower bound, whatever the policy. */
		if (m.overfull == 0 &&
		    (uint32_t)__builtin_popcountll(matrix_rows_used(&m)) <
		    matrix_lower_bound(&m))
			lb_bad++;
		if (bad)
			break;
	}
	CHECK(bad == 0);
	CHECK(lb_bad == 0);
	matrix_free(&m);
}

int main(void)
{
	test_three_nodes();
	test_old_policies();
	test_cpusets();
	test_bad_input();
	test_pinned_and_full();
	test_churn();
	test_repack();
	test_random(MATRIX_PACK, MATRIX_ALTERNATE, false);
	test_random(MATRIX_PACK, MATRIX_ALTERNATE, true);
	test_random(MATRIX_PACK, 0, false);
	test_random(MATRIX_ONE_PER_ROW, MATRIX_ALTERNATE, false);
	test_random(MATRIX_EMPTIEST, MATRIX_ALTERNATE, true);
	return unit_done("test_matrix");
}

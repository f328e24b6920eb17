// SPDX-License-Identifier: GPL-2.0
/*
 * The Ousterhout matrix as pure code: placement, packing, alternate rows
 * (matrix.h, Documentation/matrix.rst).
 *
 * Per node the matrix keeps how many jobs have their home row there, per
 * row (@cnt), and the mask of rows where that count is not 0 (@home): a
 * job that takes whole nodes conflicts with a row exactly when that row's
 * bit is set on one of its nodes, so first fit is an OR over its nodes.
 * A job bound to CPUs may share a node with a job of the row on other
 * CPUs: for it the rows the masks block are checked job by job.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "master/matrix.h"

#define ROW_BIT(r)	(1ULL << (r))

static uint64_t rows_below(uint32_t n)
{
	return n >= 64 ? UINT64_MAX : ROW_BIT(n) - 1;
}

static uint16_t *cnt_at(const struct matrix *m, uint32_t node)
{
	return m->cnt + (size_t)node * MATRIX_ROWS_MAX;
}

int matrix_init(struct matrix *m, uint32_t nr_nodes, enum matrix_policy policy,
		uint32_t flags, uint32_t max_rows, uint64_t move_interval)
{
	memset(m, 0, sizeof(*m));
	if (!nr_nodes || max_rows > MATRIX_ROWS_MAX ||
	    (flags & ~MATRIX_ALTERNATE) || policy > MATRIX_EMPTIEST)
		return -EINVAL;
	m->policy = policy;
	m->flags = flags;
	m->max_rows = max_rows ? max_rows : MATRIX_ROWS_MAX;
	m->move_interval = move_interval;
	m->nr_nodes = nr_nodes;
	m->home = calloc(nr_nodes, sizeof(*m->home));
	m->busy = calloc(nr_nodes, sizeof(*m->busy));
	m->cnt = calloc((size_t)nr_nodes * MATRIX_ROWS_MAX, sizeof(uint16_t));
	m->on = calloc(nr_nodes, sizeof(*m->on));
	if (!m->home || !m->busy || !m->cnt || !m->on) {
		matrix_free(m);
		return -ENOMEM;
	}
	return 0;
}

void matrix_free(struct matrix *m)
{
	uint32_t i;

	for (i = 0; i < m->nr_jobs; i++)
		free(m->jobs[i].res);
	free(m->jobs);
	free(m->home);
	free(m->busy);
	free(m->cnt);
	free(m->on);
	memset(m, 0, sizeof(*m));
}

/* The index of the first job whose id is not below @id (the table is sorted). */
static uint32_t job_index(const struct matrix *m, uint32_t id)
{
	uint32_t lo = 0, hi = m->nr_jobs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->jobs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct matrix_job *matrix_find(const struct matrix *m, uint32_t id)
{
	uint32_t i = job_index(m, id);

	return i < m->nr_jobs && m->jobs[i].id == id ? &m->jobs[i] : NULL;
}

bool matrix_conflict(const struct matrix_job *a, const struct matrix_job *b)
{
	uint32_t i = 0, k = 0;

	/* Both sorted by node: a merge. */
	while (i < a->nr_res && k < b->nr_res) {
		if (a->res[i].node < b->res[k].node) {
			i++;
		} else if (a->res[i].node > b->res[k].node) {
			k++;
		} else {
			if (a->res[i].cpus & b->res[k].cpus)
				return true;
			i++;
			k++;
		}
	}
	return false;
}

static bool whole_nodes(const struct matrix_res *res, uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (res[i].cpus != MATRIX_CPUS_ALL)
			return false;
	return true;
}

static int res_cmp(const void *a, const void *b)
{
	const struct matrix_res *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
}

/*
 * Copy @nr resources from @res, sorted, each node once (CPU sets of a
 * node named twice joined), into a new array at *@out, its length in
 * *@out_nr: 0, -EINVAL or -ENOMEM.
 */
static int res_copy(const struct matrix *m, const struct matrix_res *res,
		    uint32_t nr, struct matrix_res **out, uint32_t *out_nr)
{
	struct matrix_res *r = NULL;
	uint32_t i, n = 0;

	for (i = 0; i < nr; i++)
		if (res[i].node >= m->nr_nodes || !res[i].cpus)
			return -EINVAL;
	if (nr) {
		r = malloc((size_t)nr * sizeof(*r));
		if (!r)
			return -ENOMEM;
		memcpy(r, res, (size_t)nr * sizeof(*r));
		qsort(r, nr, sizeof(*r), res_cmp);
		for (i = 0; i < nr; i++) {
			if (n && r[n - 1].node == r[i].node)
				r[n - 1].cpus |= r[i].cpus;
			else
				r[n++] = r[i];
		}
	}
	*out = r;
	*out_nr = n;
	return 0;
}

/* Count job @j in (@add) or out of its home row on each of its nodes. */
static void home_count(struct matrix *m, const struct matrix_job *j, bool add)
{
	uint16_t *c;
	uint32_t i;

	if (j->row >= MATRIX_ROWS_MAX)
		return;
	for (i = 0; i < j->nr_res; i++) {
		c = cnt_at(m, j->res[i].node) + j->row;
		if (add) {
			m->on[j->res[i].node]++;
			if (!(*c)++)
				m->home[j->res[i].node] |= ROW_BIT(j->row);
		} else {
			m->on[j->res[i].node]--;
			if (!--(*c))
				m->home[j->res[i].node] &= ~ROW_BIT(j->row);
		}
	}
}

/* Rows in which some job has its home on a node of @j (or may share). */
static uint64_t home_blocked(const struct matrix *m, const struct matrix_job *j)
{
	uint64_t b = 0;
	uint32_t i;

	for (i = 0; i < j->nr_res; i++)
		b |= m->home[j->res[i].node];
	return b;
}

/*
 * Jobs other than @j whose row set (@alt) or home row (!@alt) holds
 * @row and that conflict with @j.
 */
static uint32_t row_conflicts(const struct matrix *m, const struct matrix_job *j,
			      uint32_t row, bool alt)
{
	const struct matrix_job *o;
	uint32_t i, n = 0;

	for (i = 0; i < m->nr_jobs; i++) {
		o = &m->jobs[i];
		if (o == j || !(alt ? o->rows & ROW_BIT(row) : o->row == row))
			continue;
		n += matrix_conflict(j, o);
	}
	return n;
}

/*
 * Rows below @limit where no home job conflicts with @j (@j itself not
 * counted in: take it out of the counts first).
 */
static uint64_t free_rows(const struct matrix *m, const struct matrix_job *j,
			  uint32_t limit)
{
	uint64_t blocked = home_blocked(m, j), maybe, fits;
	uint32_t r;

	fits = ~blocked & rows_below(limit);
	if (j->whole)
		return fits;
	/* Bound to CPUs: a blocked row may hold only other CPUs. */
	maybe = blocked & rows_below(limit);
	for (r = 0; r < MATRIX_ROWS_MAX; r++)
		if ((maybe & ROW_BIT(r)) && !row_conflicts(m, j, r, false))
			fits |= ROW_BIT(r);
	return fits;
}

static int lowest(uint64_t rows)
{
	return rows ? __builtin_ctzll(rows) : -1;
}

/* Home rows of every job (bit r: row r). */
uint64_t matrix_rows_used(const struct matrix *m)
{
	uint64_t used = 0;
	uint32_t i;

	for (i = 0; i < m->nr_jobs; i++)
		if (m->jobs[i].row < MATRIX_ROWS_MAX)
			used |= ROW_BIT(m->jobs[i].row);
	return used;
}

/* Of rows below @limit, the one holding the fewest home jobs, lowest first. */
static uint32_t emptiest(const struct matrix *m, const struct matrix_job *skip,
			 uint32_t limit)
{
	uint32_t count[MATRIX_ROWS_MAX] = { 0 }, i, best = 0;

	for (i = 0; i < m->nr_jobs; i++)
		if (&m->jobs[i] != skip && m->jobs[i].row < MATRIX_ROWS_MAX)
			count[m->jobs[i].row]++;
	for (i = 1; i < limit; i++)
		if (count[i] < count[best])
			best = i;
	return best;
}

/*
 * The policy's row for @j, which is in no row's counts: MATRIX_PACK's
 * first fit, or where it conflicts least when no row is free.
 */
static uint32_t choose_row(struct matrix *m, const struct matrix_job *j)
{
	uint32_t r, best = 0, n, best_n = UINT32_MAX;
	uint64_t used;
	int row;

	switch (m->policy) {
	case MATRIX_ONE_PER_ROW:
		used = matrix_rows_used(m);
		row = lowest(~used & rows_below(m->max_rows));
		return row >= 0 ? (uint32_t)row : emptiest(m, j, m->max_rows);
	case MATRIX_EMPTIEST:
		return emptiest(m, j, m->max_rows);
	case MATRIX_PACK:
	default:
		row = lowest(free_rows(m, j, m->max_rows));
		if (row >= 0)
			return (uint32_t)row;
		/* Too few rows: share the one with the fewest conflicts. */
		for (r = 0; r < m->max_rows; r++) {
			n = row_conflicts(m, j, r, false);
			if (n < best_n) {
				best_n = n;
				best = r;
			}
		}
		m->overfull++;
		return best;
	}
}

/* Place @j (in no row's counts) at time @now. */
static void place(struct matrix *m, struct matrix_job *j, uint32_t row,
		  uint64_t now)
{
	j->row = row;
	j->rows = ROW_BIT(row);
	j->moved_at = now;
	m->placements++;
	home_count(m, j, true);
}

int matrix_add(struct matrix *m, uint32_t id, const struct matrix_res *res,
	       uint32_t nr, uint32_t row, uint64_t now)
{
	struct matrix_job *j, *jobs;
	struct matrix_res *r;
	uint32_t n, cap, k;
	int err;

	if (!id || (row != MATRIX_ROW_NONE && row >= MATRIX_ROWS_MAX))
		return -EINVAL;
	if (matrix_find(m, id))
		return -EEXIST;
	err = res_copy(m, res, nr, &r, &n);
	if (err)
		return err;
	if (m->nr_jobs == m->cap_jobs) {
		cap = m->cap_jobs ? 2 * m->cap_jobs : 16;
		jobs = realloc(m->jobs, (size_t)cap * sizeof(*jobs));
		if (!jobs) {
			free(r);
			return -ENOMEM;
		}
		m->jobs = jobs;
		m->cap_jobs = cap;
	}
	/* In id order: ties below go by id, whatever the history. */
	k = job_index(m, id);
	memmove(&m->jobs[k + 1], &m->jobs[k],
		(size_t)(m->nr_jobs - k) * sizeof(*m->jobs));
	j = &m->jobs[k];
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->res = r;
	j->nr_res = n;
	j->whole = whole_nodes(r, n);
	j->row = MATRIX_ROW_NONE;
	j->pinned = row != MATRIX_ROW_NONE;
	m->nr_jobs++;
	place(m, j, j->pinned ? row : choose_row(m, j), now);
	return (int)j->row;
}

/* Place @j again by the policy: it moves. */
static void move(struct matrix *m, struct matrix_job *j, uint32_t row,
		 uint64_t now)
{
	home_count(m, j, false);
	place(m, j, row, now);
	j->moves++;
}

int matrix_set_res(struct matrix *m, uint32_t id, const struct matrix_res *res,
		   uint32_t nr, uint64_t now)
{
	struct matrix_job *j = matrix_find(m, id);
	struct matrix_res *r;
	uint32_t n, row;
	int err;

	if (!j)
		return -ENOENT;
	err = res_copy(m, res, nr, &r, &n);
	if (err)
		return err;
	home_count(m, j, false);
	free(j->res);
	j->res = r;
	j->nr_res = n;
	j->whole = whole_nodes(r, n);
	home_count(m, j, true);
	if (j->pinned || m->policy != MATRIX_PACK ||
	    !row_conflicts(m, j, j->row, false))
		return 0;
	home_count(m, j, false);
	row = choose_row(m, j);
	place(m, j, row, now);
	j->moves++;
	return 1;
}

int matrix_pin(struct matrix *m, uint32_t id, uint32_t row, uint64_t now)
{
	struct matrix_job *j = matrix_find(m, id);

	if (!j)
		return -ENOENT;
	if (row == MATRIX_ROW_NONE) {
		j->pinned = false;
		return 0;
	}
	if (row >= MATRIX_ROWS_MAX)
		return -EINVAL;
	j->pinned = true;
	if (row != j->row)
		move(m, j, row, now);
	return 0;
}

int matrix_remove(struct matrix *m, uint32_t id)
{
	struct matrix_job *j = matrix_find(m, id);

	if (!j)
		return -ENOENT;
	home_count(m, j, false);
	free(j->res);
	m->nr_jobs--;
	memmove(j, j + 1, (size_t)(&m->jobs[m->nr_jobs] - j) * sizeof(*j));
	return 0;
}

/*
 * The jobs into @order, the highest home row first, in the table's order
 * within a row: a counting sort, O(jobs).
 */
static void rows_desc(const struct matrix *m, struct matrix_job **order)
{
	uint32_t start[MATRIX_ROWS_MAX + 1] = { 0 }, i, r;

	for (i = 0; i < m->nr_jobs; i++) {
		r = m->jobs[i].row < MATRIX_ROWS_MAX ? m->jobs[i].row : 0;
		start[MATRIX_ROWS_MAX - 1 - r + 1]++;
	}
	for (r = 1; r <= MATRIX_ROWS_MAX; r++)
		start[r] += start[r - 1];
	for (i = 0; i < m->nr_jobs; i++) {
		r = m->jobs[i].row < MATRIX_ROWS_MAX ? m->jobs[i].row : 0;
		order[start[MATRIX_ROWS_MAX - 1 - r]++] = &m->jobs[i];
	}
}

/*
 * One pass of compaction over @order (jobs, highest rows first): the
 * number of jobs moved.
 */
static uint32_t compact_pass(struct matrix *m, struct matrix_job **order,
			     uint64_t now)
{
	struct matrix_job *j;
	uint32_t i, moved = 0;
	int row;

	for (i = 0; i < m->nr_jobs; i++) {
		j = order[i];
		if (j->pinned || !j->row || j->row >= MATRIX_ROWS_MAX ||
		    now - j->moved_at < m->move_interval)
			continue;
		home_count(m, j, false);
		row = lowest(free_rows(m, j, j->row));
		home_count(m, j, true);
		if (row < 0)
			continue;
		move(m, j, (uint32_t)row, now);
		moved++;
	}
	return moved;
}

/* The most jobs on one node, with their CPU sets or without. */
static uint32_t most_on_a_node(const struct matrix *m)
{
	uint32_t best = 0, i;

	for (i = 0; i < m->nr_nodes; i++)
		if (m->on[i] > best)
			best = m->on[i];
	return best;
}

/*
 * The jobs into @order, those with the most resources first, in the
 * table's order among equals: a counting sort over @cnt (@m->nr_nodes + 2
 * slots), O(jobs + nodes).
 */
static void size_desc(const struct matrix *m, struct matrix_job **order,
		      uint32_t *cnt)
{
	uint32_t i, k, n = m->nr_nodes;

	memset(cnt, 0, ((size_t)n + 2) * sizeof(*cnt));
	for (i = 0; i < m->nr_jobs; i++)
		cnt[n - m->jobs[i].nr_res + 1]++;
	for (k = 1; k <= n + 1; k++)
		cnt[k] += cnt[k - 1];
	for (i = 0; i < m->nr_jobs; i++)
		order[cnt[n - m->jobs[i].nr_res]++] = &m->jobs[i];
}

/*
 * All or nothing: colour every job again, largest first, first fit; if
 * that takes fewer rows than now and every job that would change row
 * may move, move them.  The jobs' counts are rebuilt either way.
 */
uint32_t matrix_repack(struct matrix *m, uint64_t now)
{
	uint32_t i, *old, moved = 0, before, after;
	struct matrix_job *j, **order;
	int row;
	bool ok = true;

	if (m->policy != MATRIX_PACK || !m->nr_jobs)
		return 0;

	/* At the bound (with CPU sets: its whole-node estimate) already. */
	before = (uint32_t)__builtin_popcountll(matrix_rows_used(m));
	if (before <= 1 || before <= most_on_a_node(m))
		return 0;
	old = malloc(((size_t)m->nr_jobs + m->nr_nodes + 2) * sizeof(*old));
	order = malloc((size_t)m->nr_jobs * sizeof(*order));
	if (!old || !order) {
		free(old);
		free(order);
		return 0;	/* fails safe: nothing moves */
	}
	for (i = 0; i < m->nr_jobs; i++) {
		old[i] = m->jobs[i].row;
		if (m->jobs[i].pinned)
			ok = false;
	}
	if (!ok) {
		free(old);
		free(order);
		return 0;
	}
	size_desc(m, order, old + m->nr_jobs);
	for (i = 0; i < m->nr_jobs; i++)
		home_count(m, order[i], false);
	for (i = 0; i < m->nr_jobs; i++) {
		j = order[i];
		j->row = MATRIX_ROW_NONE;
	}
	for (i = 0; i < m->nr_jobs; i++) {
		j = order[i];
		row = lowest(free_rows(m, j, m->max_rows));
		if (row < 0) {
			ok = false;
			break;
		}
		j->row = (uint32_t)row;
		home_count(m, j, true);
	}
	after = ok ? (uint32_t)__builtin_popcountll(matrix_rows_used(m)) : before;
	for (i = 0; i < m->nr_jobs && ok && after < before; i++)
		if (m->jobs[i].row != old[i] &&
		    now - m->jobs[i].moved_at < m->move_interval)
			ok = false;
	/* Undo, or count the moves. */
	for (i = 0; i < m->nr_jobs; i++)
		if (m->jobs[i].row != MATRIX_ROW_NONE)
			home_count(m, &m->jobs[i], false);
	for (i = 0; i < m->nr_jobs; i++) {
		j = &m->jobs[i];
		if (!ok || after >= before) {
			j->row = old[i];
		} else if (j->row != old[i]) {
			j->moves++;
			j->moved_at = now;
			m->placements++;
			moved++;
		}
		home_count(m, j, true);
	}
	/* Moved: the alternate rows are to be worked out again. */
	for (i = 0; moved && i < m->nr_jobs; i++)
		m->jobs[i].rows = ROW_BIT(m->jobs[i].row);
	free(old);
	free(order);
	return moved;
}

/*
 * Passes until none moves a job: a move out of a row can make room there
 * for a job of a higher row seen earlier in the pass.  Every move lowers
 * a job's row, so there are at most (the sum of the rows) of them.
 */
uint32_t matrix_compact(struct matrix *m, uint64_t now)
{
	struct matrix_job **order;
	uint32_t n, moved = 0;

	if (m->policy != MATRIX_PACK || !m->nr_jobs)
		return 0;
	order = malloc((size_t)m->nr_jobs * sizeof(*order));
	if (!order)
		return 0;	/* fails safe: nothing moves */
	rows_desc(m, order);
	do {
		n = compact_pass(m, order, now);
		moved += n;
	} while (n);
	free(order);
	return moved + matrix_repack(m, now);
}

/*
 * Does some job that runs in row @r (home or alternate) conflict with
 * @j?  With @m->busy as the rows run on each node.
 */
static bool busy_in(const struct matrix *m, const struct matrix_job *j,
		    uint32_t r)
{
	uint32_t i;

	for (i = 0; i < j->nr_res; i++)
		if (m->busy[j->res[i].node] & ROW_BIT(r))
			break;
	if (i == j->nr_res)
		return false;
	return j->whole || row_conflicts(m, j, r, true);
}

uint32_t matrix_alternates(struct matrix *m)
{
	uint64_t used = matrix_rows_used(m), blocked, cand;
	uint32_t i, k, r, given = 0;
	struct matrix_job *j;
	uint8_t *done;
	bool any;

	memcpy(m->busy, m->home, (size_t)m->nr_nodes * sizeof(*m->busy));
	for (i = 0; i < m->nr_jobs; i++) {
		j = &m->jobs[i];
		j->rows = j->row < MATRIX_ROWS_MAX ? ROW_BIT(j->row) : 0;
	}
	if (!(m->flags & MATRIX_ALTERNATE) || !m->nr_jobs)
		return 0;
	done = calloc(m->nr_jobs, 1);
	if (!done)
		return 0;	/* fails safe: home rows only */
	/* A row per job and pass, so that none takes all from another. */
	do {
		any = false;
		for (i = 0; i < m->nr_jobs; i++) {
			j = &m->jobs[i];
			/* Where it runs is not known: its home row only. */
			if (done[i] || !j->rows || !j->nr_res)
				continue;
			blocked = 0;
			for (k = 0; k < j->nr_res; k++)
				blocked |= m->busy[j->res[k].node];
			cand = used & ~j->rows;
			if (j->whole)
				cand &= ~blocked;
			for (r = 0; cand; cand &= cand - 1) {
				r = (uint32_t)__builtin_ctzll(cand);
				if (!busy_in(m, j, r))
					break;
				r = MATRIX_ROWS_MAX;
			}
			if (!cand || r >= MATRIX_ROWS_MAX) {
				done[i] = 1;
				continue;
			}
			j->rows |= ROW_BIT(r);
			for (k = 0; k < j->nr_res; k++)
				m->busy[j->res[k].node] |= ROW_BIT(r);
			given++;
			any = true;
		}
	} while (any);
	free(done);
	return given;
}

uint32_t matrix_lower_bound(const struct matrix *m)
{
	uint16_t *per_cpu;
	uint32_t best = most_on_a_node(m), i, k, c, n;
	const struct matrix_res *r;

	for (i = 0; i < m->nr_jobs; i++)
		if (!m->jobs[i].whole)
			break;
	if (i == m->nr_jobs)
		return best;
	/* CPU sets: the jobs on one CPU. */
	per_cpu = calloc((size_t)m->nr_nodes * 64, sizeof(*per_cpu));
	if (!per_cpu)
		return best;
	best = 0;
	for (i = 0; i < m->nr_jobs; i++) {
		for (k = 0; k < m->jobs[i].nr_res; k++) {
			r = &m->jobs[i].res[k];
			for (c = 0; c < 64; c++) {
				if (!(r->cpus & (1ULL << c)))
					continue;
				n = ++per_cpu[(size_t)r->node * 64 + c];
				if (n > best)
					best = n;
			}
		}
	}
	free(per_cpu);
	return best;
}

int matrix_check(const struct matrix *m, char *why, size_t len)
{
	const struct matrix_job *a, *b;
	uint64_t used = matrix_rows_used(m);
	uint32_t i, k;

	for (i = 0; i < m->nr_jobs; i++) {
		a = &m->jobs[i];
		if (a->row >= MATRIX_ROWS_MAX || (!a->pinned && a->row >= m->max_rows)) {
			snprintf(why, len, "job %u: row %u out of range", a->id,
				 a->row);
			return -1;
		}
		if (!(a->rows & ROW_BIT(a->row)) || (a->rows & ~used)) {
			snprintf(why, len, "job %u: rows %#llx, home %u, used %#llx",
				 a->id, (unsigned long long)a->rows, a->row,
				 (unsigned long long)used);
			return -1;
		}
		if (a->rows != ROW_BIT(a->row) && !(m->flags & MATRIX_ALTERNATE)) {
			snprintf(why, len, "job %u: alternate rows without the policy",
				 a->id);
			return -1;
		}
		for (k = i + 1; k < m->nr_jobs; k++) {
			b = &m->jobs[k];
			if (!matrix_conflict(a, b))
				continue;
			/* Two homes may share a row only when rows ran out. */
			if (a->row == b->row &&
			    (m->overfull || a->pinned || b->pinned ||
			     m->policy != MATRIX_PACK))
				continue;
			if (a->rows & b->rows) {
				snprintf(why, len, "jobs %u and %u conflict and share rows %#llx",
					 a->id, b->id,
					 (unsigned long long)(a->rows & b->rows));
				return -1;
			}
		}
	}
	return 0;
}

int matrix_check_compact(const struct matrix *m, char *why, size_t len)
{
	const struct matrix_job *j;
	uint32_t i, r;

	if (m->policy != MATRIX_PACK || m->overfull)
		return 0;
	for (i = 0; i < m->nr_jobs; i++) {
		j = &m->jobs[i];
		if (j->pinned)
			continue;
		for (r = 0; r < j->row; r++) {
			if (!row_conflicts(m, j, r, false)) {
				snprintf(why, len, "job %u in row %u fits row %u",
					 j->id, j->row, r);
				return -1;
			}
		}
	}
	return 0;
}

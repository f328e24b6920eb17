// SPDX-License-Identifier: GPL-2.0
/*
 * The master's jobs: placed in the Ousterhout matrix (matrix.c, jobs to
 * rows) by the nodes their creates name and those the nodes' reports
 * say hold their tasks, and announced in the job map, which goes out
 * with every change and again every few slices.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs.h>

#include "bcsd.h"
#include "core/log.h"
#include "master/context.h"
#include "master/jobs.h"
#include "master/matrix.h"

/*
 * The map goes out again every MAP_RESEND_SLICES slices, or every
 * MAP_RESEND_NS if that is sooner (slices over 10 ms): a node that has
 * none yet (it started, or lost one) runs no gang until it comes.
 */
#define MAP_RESEND_SLICES	10
#define MAP_RESEND_NS		100000000ULL
/*
 * A changed map goes out at once and again with each of the next
 * MAP_REPEATS strobes: a node whose copy was lost idles (node.c) until one
 * arrives, so it should come soon; at 30 % loss a node misses all four
 * sends of a change once in about a hundred.
 */
#define MAP_REPEATS		3
#define REPORT_EXPIRY_MS(d)	(5 * (d)->cfg.report_ms)

/*
 * The position in d->master.by_id of job @id, or where it would go: a
 * binary search, for a report names up to BCSP_MAX_JOBS jobs among up to
 * BCS_JOBS_MAX.
 */
static uint32_t by_id_pos(const struct bcsd *d, uint32_t id)
{
	uint32_t lo = 0, hi = d->master.nr_jobs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (d->master.jobs[d->master.by_id[mid]].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct bcsd_job *jobs_find(struct bcsd *d, uint32_t id)
{
	uint32_t pos = by_id_pos(d, id);
	struct bcsd_job *j;

	if (pos == d->master.nr_jobs)
		return NULL;
	j = &d->master.jobs[d->master.by_id[pos]];
	return j->id == id ? j : NULL;
}

/* What job @j holds, freed: the job itself goes with its slot. */
static void job_free(struct bcsd_job *j)
{
	free(j->declared);
	free(j->node);
	j->declared = NULL;
	j->node = NULL;
	j->nr_declared = j->nr_nodes = j->cap_nodes = 0;
}

uint32_t jobs_nr_rows(const struct bcsd *d)
{
	uint32_t i, n = 0;

	for (i = 0; i < d->master.nr_jobs; i++)
		if (d->master.jobs[i].row != BCS_ROW_NONE && d->master.jobs[i].row + 1 > n)
			n = d->master.jobs[i].row + 1;
	return n;
}

static void fill_map(struct bcsd *d, struct bcsp_whole_map *map)
{
	uint64_t now = now_mono_ms(), expiry = REPORT_EXPIRY_MS(d);
	const struct bcsd_job_node *jn;
	struct bcsp_job_row *r;
	struct bcsd_job *j;
	uint32_t i, k;

	map->version = d->master.map_version;
	map->apply_slice = d->master.map_apply_slice;
	map->nr_jobs = d->master.nr_jobs;
	for (i = 0; i < d->master.nr_jobs; i++) {
		j = &d->master.jobs[i];
		r = &map->jobs[i];
		memset(r, 0, sizeof(*r));
		r->job = j->id;
		r->row = j->row;
		r->rows = j->row < BCS_ROWS_MAX ? j->rows | 1ULL << j->row : 0;
		r->birth = j->birth;
		r->owner = j->owner;
		for (k = 0; k < j->nr_nodes; k++) {
			jn = &j->node[k];
			if (now - jn->seen_ms > expiry || !jn->tasks)
				continue;
			r->nodes += jn->nodes;
			r->tasks += jn->tasks;
		}
	}
}

static void send_map(struct bcsd *d)
{
	/* Up to 128 KB: not on the stack. */
	static struct bcsp_whole_map map;
	struct bcsp_msg m = { .hdr = { .type = BCSP_MAP } };
	uint32_t k, parts;
	bool sent = false;

	m.hdr.epoch = d->master.epoch;
	m.hdr.priority = (uint16_t)d->cfg.priority;
	fill_map(d, &map);
	/* A datagram per part (proto.h), the whole map to this host. */
	parts = bcsp_map_parts(map.nr_jobs);
	for (k = 0; k < parts; k++) {
		bcsp_map_fill_part(&map, k, &m.map);
		sent |= !net_send(d, &m, NULL);
	}
	if (sent)
		d->cnt.maps_tx++;
	d->master.map_sent_slice = d->master.strobe_slice;
	if (d->master.map_repeated_version != d->master.map_version) {
		d->master.map_repeated_version = d->master.map_version;
		d->master.map_repeats = MAP_REPEATS;
	}
	/* The master's own view, for bcsctl job list on this host. */
	followed_set_map(d, &map, d->master.epoch, d->node_id);
	/*
	 * To this host's node part, as the group gets it: the message (its
	 * last part) says who sent it, the parts read the whole map from
	 * d->followed.map, as rx.c leaves it.
	 */
	dispatch(d, &m, &(struct bcsd_origin){
		.local = true, .slice = d->master.strobe_slice });
	context_send(d);
}

/*
 * Slices from a change of the map to the slice its rows take effect in
 * on every node: the map goes out at once and again with each of the
 * next MAP_REPEATS strobes, so a node that lost a copy still has it in
 * time (node.c idles a node that has not).
 */
#define MAP_LEAD_SLICES	(MAP_REPEATS + 1)

/*
 * The slice a change of the map made now takes effect in: MAP_LEAD_SLICES
 * strobes ahead, and not in a slice planned already (strobe.c: plans are
 * cut there), so that every node switches to it alike.
 */
static uint64_t map_apply_at(const struct bcsd *d)
{
	uint64_t at = d->master.strobe_slice +
		      (uint64_t)MAP_LEAD_SLICES * d->master.plan_next;

	return at > d->master.plan_end ? at : d->master.plan_end;
}

/*
 * The map changed: a new version, whose rows take effect MAP_LEAD_SLICES
 * from now on every node at once (bcs.ko's BCS_JOB_AT_SLICE), or with
 * @at_once at once (a take-over: no map of this master's is in force).  A
 * change while the last is not yet in force joins it, at its slice.
 */
void jobs_map_changed(struct bcsd *d, bool at_once)
{
	d->master.map_version++;
	if (at_once)
		d->master.map_apply_slice = 0;
	else if (d->master.map_apply_slice <= d->master.plan_end)
		d->master.map_apply_slice = map_apply_at(d);
	send_map(d);
}

/* Slices between resends of an unchanged map. */
static uint64_t map_resend_slices(const struct bcsd *d)
{
	uint64_t n = d->slice_ns ? MAP_RESEND_NS / d->slice_ns : 1;

	return n < 1 ? 1 : n > MAP_RESEND_SLICES ? MAP_RESEND_SLICES : n;
}

void jobs_map_resend(struct bcsd *d)
{
	if (d->master.map_repeats) {
		d->master.map_repeats--;
		send_map(d);
	} else if (d->master.strobe_slice - d->master.map_sent_slice >=
		   map_resend_slices(d)) {
		send_map(d);
	}
}

/*
 * The matrix's index of node @id, given one if it has none: -1 if
 * BCSD_MAX_NODES have one (more than the cluster can have).
 */
static int matrix_node(struct bcsd *d, uint32_t id)
{
	uint16_t *hash = d->master.matrix_node_hash;
	uint32_t size = ARRAY_SIZE(d->master.matrix_node_hash);
	uint32_t h = (id * 2654435761u) & (size - 1), i;

	/* Never more than half full: a probe ends at a free slot. */
	for (; hash[h]; h = (h + 1) & (size - 1))
		if (d->master.matrix_node[hash[h] - 1] == id)
			return hash[h] - 1;
	i = d->master.matrix_nodes;
	if (i == BCSD_MAX_NODES)
		return -1;
	d->master.matrix_node[d->master.matrix_nodes++] = id;
	hash[h] = (uint16_t)(i + 1);
	return (int)i;
}

/*
 * What job @j occupies: the nodes its create named, and those whose
 * fresh reports (down a tree, the subtrees whose sums) hold tasks of it,
 * whole (CPU sets: matrix.rst).  Into @res, at most BCSD_MAX_NODES plus
 * BCSP_CREATE_NODES_MAX (matrix.c joins a node named twice); their number.
 */
static uint32_t job_res(struct bcsd *d, const struct bcsd_job *j,
			struct matrix_res *res, uint64_t now)
{
	static uint32_t seen[BCSD_MAX_NODES], gen;
	uint64_t expiry = REPORT_EXPIRY_MS(d);
	uint32_t k, n = 0;
	int idx;

	if (++gen == UINT32_MAX) {
		memset(seen, 0, sizeof(seen));
		gen = 1;
	}
	/* The reports first: their CPU sets, each node once. */
	for (k = 0; k < j->nr_nodes; k++) {
		if (!j->node[k].tasks || now - j->node[k].seen_ms > expiry)
			continue;
		idx = matrix_node(d, j->node[k].id);
		if (idx < 0 || seen[idx] == gen)
			continue;
		seen[idx] = gen;
		res[n].node = (uint32_t)idx;
		res[n++].cpus = j->node[k].cpus ? j->node[k].cpus :
						  MATRIX_CPUS_ALL;
	}
	/* Then the nodes the create named that have not reported it. */
	for (k = 0; k < j->nr_declared; k++) {
		idx = matrix_node(d, j->declared[k]);
		if (idx < 0 || seen[idx] == gen)
			continue;
		seen[idx] = gen;
		res[n].node = (uint32_t)idx;
		res[n++].cpus = MATRIX_CPUS_ALL;
	}
	return n;
}

/*
 * Does matrix job @mj occupy exactly the @n resources at @res (each node
 * once): the same nodes, with the same CPU sets?  O(@n).
 */
static bool same_res(const struct matrix_job *mj, struct matrix_res *res,
		     uint32_t n)
{
	static uint64_t cpus[BCSD_MAX_NODES];
	static uint32_t mark[BCSD_MAX_NODES], gen;
	uint32_t i;

	if (n != mj->nr_res)
		return false;
	if (++gen == UINT32_MAX) {
		memset(mark, 0, sizeof(mark));
		gen = 1;
	}
	for (i = 0; i < mj->nr_res; i++) {
		if (mj->res[i].node >= BCSD_MAX_NODES)
			return false;
		mark[mj->res[i].node] = gen;
		cpus[mj->res[i].node] = mj->res[i].cpus;
	}
	for (i = 0; i < n; i++)
		if (res[i].node >= BCSD_MAX_NODES ||
		    mark[res[i].node] != gen || cpus[res[i].node] != res[i].cpus)
			return false;
	return true;
}

/*
 * Place the jobs again (matrix.c): where their nodes changed, and compact
 * and alternate rows as the policy says.  Returns true if a job's row or
 * row set changed: the map must go out.
 */
bool jobs_replan(struct bcsd *d)
{
	static struct matrix_res res[BCSD_MAX_NODES + BCSP_CREATE_NODES_MAX];
	struct matrix *mx = &d->master.matrix;
	uint64_t now = now_mono_ms();
	const struct matrix_job *mj;
	bool changed = false;
	struct bcsd_job *j;
	uint32_t i, n;

	d->master.replanned_ms = now;
	for (i = 0; i < d->master.nr_jobs; i++) {
		j = &d->master.jobs[i];
		mj = matrix_find(mx, j->id);
		if (!mj)
			continue;	/* cannot be: added with the job */
		n = job_res(d, j, res, now);
		if (!same_res(mj, res, n) &&
		    matrix_set_res(mx, j->id, res, n, now) == 1)
			pr_info("job %u: its nodes changed, moved to row %u",
				j->id, matrix_find(mx, j->id)->row);
	}
	matrix_compact(mx, now);
	matrix_alternates(mx);
	for (i = 0; i < d->master.nr_jobs; i++) {
		j = &d->master.jobs[i];
		mj = matrix_find(mx, j->id);
		if (!mj || (mj->row == j->row && mj->rows == j->rows))
			continue;
		j->row = mj->row;
		j->rows = mj->rows;
		changed = true;
	}
	return changed;
}

/* The matrix of the policy configured, empty. */
static int matrix_start(struct bcsd *d)
{
	enum matrix_policy pol = MATRIX_PACK;

	if (d->cfg.matrix == CFG_MATRIX_ROW)
		pol = d->cfg.rows ? MATRIX_EMPTIEST : MATRIX_ONE_PER_ROW;
	return matrix_init(&d->master.matrix, BCSD_MAX_NODES, pol,
			   d->cfg.alternate ? MATRIX_ALTERNATE : 0,
			   d->cfg.rows, d->cfg.move_interval_ms);
}

/* Forget every job: the matrix empty again. */
void jobs_forget(struct bcsd *d)
{
	uint32_t i;

	for (i = 0; i < d->master.nr_jobs; i++) {
		matrix_remove(&d->master.matrix, d->master.jobs[i].id);
		job_free(&d->master.jobs[i]);
	}
	d->master.nr_jobs = 0;
}

/*
 * Add job @id born @birth and owned by @owner (struct bcsp_job_row) to
 * the matrix, in row @row (BCS_ROW_NONE: where the policy places it;
 * @pin: the row was asked for, and stays); false if it is full.
 */
bool jobs_add(struct bcsd *d, uint32_t id, uint32_t row, bool pin,
	      uint32_t birth, uint32_t owner)
{
	struct bcsd_job *j;
	uint32_t pos;
	int r;

	if (d->master.nr_jobs >= BCS_JOBS_MAX)
		return false;
	r = matrix_add(&d->master.matrix, id, NULL, 0,
		       row < BCS_ROWS_MAX ? row : MATRIX_ROW_NONE,
		       now_mono_ms());
	if (r < 0)
		return false;
	if (!pin)
		matrix_pin(&d->master.matrix, id, MATRIX_ROW_NONE, 0);
	pos = by_id_pos(d, id);
	memmove(&d->master.by_id[pos + 1], &d->master.by_id[pos],
		(d->master.nr_jobs - pos) * sizeof(d->master.by_id[0]));
	d->master.by_id[pos] = (uint16_t)d->master.nr_jobs;
	j = &d->master.jobs[d->master.nr_jobs++];
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->row = (uint32_t)r;
	j->rows = 1ULL << r;
	j->birth = birth;
	j->owner = owner;
	/* Ids are handed out in turn after the highest known. */
	if (id >= d->master.next_job_id)
		d->master.next_job_id = bcs_job_id_next(id);
	return true;
}

/* Take job @j (of the master's) out of the matrix. */
void jobs_remove(struct bcsd *d, struct bcsd_job *j)
{
	uint32_t idx = (uint32_t)(j - d->master.jobs);
	uint32_t pos = by_id_pos(d, j->id), last;

	matrix_remove(&d->master.matrix, j->id);
	job_free(j);
	memmove(&d->master.by_id[pos], &d->master.by_id[pos + 1],
		(d->master.nr_jobs - pos - 1) * sizeof(d->master.by_id[0]));
	last = --d->master.nr_jobs;
	if (idx == last)
		return;
	/* The last job takes its slot, and its place in by_id follows. */
	*j = d->master.jobs[last];
	pos = by_id_pos(d, j->id);
	d->master.by_id[pos] = (uint16_t)idx;
}

/*
 * Take into the matrix the jobs of node report @r that it lacks, each in
 * a row of its own choosing: a master that knows no map (it restarted,
 * and no other master was left to announce one) learns the cluster's jobs
 * from the nodes rather than destroying them all with an empty map.
 */
void jobs_adopt_reported(struct bcsd *d, uint32_t node,
			 const struct bcsp_report *r)
{
	uint32_t i, id;

	for (i = 0; i < r->nr_jobs && i < BCSP_MAX_JOBS; i++) {
		id = r->jobs[i].job;
		if (!bcs_job_id_valid(id) || jobs_find(d, id))
			continue;
		/* Reports carry no owner: the nodes keep theirs. */
		if (!jobs_add(d, id, BCS_ROW_NONE, false, r->jobs[i].birth,
			     BCSP_OWNER_NONE))
			return;
		pr_notice("job %u adopted from node %u's report, row %u", id,
			  node, d->master.jobs[d->master.nr_jobs - 1].row);
	}
}

/*
 * The entry of sender @id in job @j's table, made if @add: NULL if it has
 * none, or cannot be had (BCSD_MAX_NODES, or no memory: the job simply
 * does not learn that node).
 */
static struct bcsd_job_node *job_node(struct bcsd_job *j, uint32_t id,
				      bool add)
{
	struct bcsd_job_node *grown;
	uint32_t k, cap;

	for (k = 0; k < j->nr_nodes; k++)
		if (j->node[k].id == id)
			return &j->node[k];
	if (!add || j->nr_nodes == BCSD_MAX_NODES)
		return NULL;
	if (j->nr_nodes == j->cap_nodes) {
		cap = j->cap_nodes ? 2 * j->cap_nodes : 4;
		if (cap > BCSD_MAX_NODES)
			cap = BCSD_MAX_NODES;
		grown = realloc(j->node, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		j->node = grown;
		j->cap_nodes = cap;
	}
	memset(&j->node[j->nr_nodes], 0, sizeof(j->node[0]));
	j->node[j->nr_nodes].id = id;
	return &j->node[j->nr_nodes++];
}

/*
 * The tasks per job of the nodes that @sender speaks for: itself (a
 * report), or its subtree of a tree of daemons (a sum of reports).  Jobs
 * keep entries only for the senders with tasks of theirs: the entries of
 * @sender go, and those of the jobs it names with tasks come back, so a
 * report costs O(jobs + their entries), not O(jobs * nodes).  The
 * matrix is replanned only when a job gained or lost a sender (the tick
 * replans for reports that expire).
 */
static void take_tasks(struct bcsd *d, uint32_t sender,
		       const struct bcsp_tasks *t, const uint64_t *cpus)
{
	uint64_t now = now_mono_ms();
	bool learnt = false, moved = false;
	struct bcsd_job_node *jn;
	struct bcsd_job *j;
	uint32_t i, k;

	/* What @sender said before: a job it no longer names has none. */
	for (i = 0; i < d->master.nr_jobs; i++) {
		j = &d->master.jobs[i];
		for (k = 0; k < j->nr_nodes; k++)
			if (j->node[k].id == sender)
				break;
		if (k == j->nr_nodes)
			continue;
		/* Marked, so that a job named again with tasks keeps it. */
		j->node[k].seen_ms = now;
		j->node[k].tasks = 0;
		j->node[k].nodes = 0;
	}
	for (i = 0; i < t->nr_jobs && i < BCSP_MAX_JOBS; i++) {
		j = jobs_find(d, t->jobs[i].job);
		if (!j)
			continue;
		if (t->jobs[i].tasks) {
			jn = job_node(j, sender, true);
			if (jn) {
				moved |= !jn->tasks && !jn->seen_ms;
				/* A CPU set that changed places it again. */
				moved |= cpus && jn->cpus != cpus[i];
				jn->cpus = cpus ? cpus[i] : 0;
				jn->tasks = t->jobs[i].tasks;
				jn->nodes = t->jobs[i].nodes;
				jn->seen_ms = now;
			}
		}
		/* Adopted from reports that did not know its birth. */
		if (!j->birth && t->jobs[i].birth) {
			j->birth = t->jobs[i].birth;
			learnt = true;
		}
	}
	/* The entries left at 0 tasks: the job left @sender's nodes. */
	for (i = 0; i < d->master.nr_jobs; i++) {
		j = &d->master.jobs[i];
		for (k = 0; k < j->nr_nodes;) {
			if (j->node[k].id != sender || j->node[k].tasks) {
				k++;
				continue;
			}
			j->node[k] = j->node[--j->nr_nodes];
			moved = true;
		}
	}
	if ((moved && jobs_replan(d)) || learnt)
		jobs_map_changed(d, false);
}

static void on_report(struct bcsd *d, const struct bcsp_msg *m)
{
	struct bcsp_tasks t = { .nodes = 1 };
	uint64_t cpus[BCSP_MAX_JOBS];
	uint32_t i;

	for (i = 0; i < m->report.nr_jobs && i < BCSP_MAX_JOBS; i++) {
		t.jobs[i].job = m->report.jobs[i].job;
		t.jobs[i].nodes = m->report.jobs[i].tasks ? 1 : 0;
		t.jobs[i].tasks = m->report.jobs[i].tasks;
		t.jobs[i].birth = m->report.jobs[i].birth;
		cpus[i] = m->report.jobs[i].cpus;
	}
	t.nr_jobs = i;
	take_tasks(d, m->hdr.sender, &t, cpus);
}

/* A report: from the network, or from this host's node part. */
void jobs_on_report(struct bcsd *d, const struct bcsp_msg *m,
		    const struct bcsd_origin *from)
{
	(void)from;
	if (d->master.active)
		on_report(d, m);
}

/* Down a tree: the whole cluster's tasks, added up on the way (reduce.c). */
void jobs_on_tasks(struct bcsd *d, const struct bcsp_msg *m,
		   const struct bcsd_origin *from)
{
	if (from->local && d->master.active)
		take_tasks(d, m->hdr.sender, &m->tasks, NULL);
}

/*
 * Reports that expired, jobs free to move again: once a report period (a
 * replan costs O(jobs) and up, and reports expire in five).
 */
void jobs_tick(struct bcsd *d, uint64_t now)
{
	if (now - d->master.replanned_ms >= d->cfg.report_ms &&
	    jobs_replan(d))
		jobs_map_changed(d, false);
}

int jobs_init(struct bcsd *d)
{
	if (matrix_start(d)) {
		pr_err("matrix: %s", strerror(ENOMEM));
		return -1;
	}
	d->master.next_job_id = 1;
	return 0;
}

void jobs_exit(struct bcsd *d)
{
	uint32_t i;

	for (i = 0; i < d->master.nr_jobs; i++)
		job_free(&d->master.jobs[i]);
	d->master.nr_jobs = 0;
	matrix_free(&d->master.matrix);
}

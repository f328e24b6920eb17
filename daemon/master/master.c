// SPDX-License-Identifier: GPL-2.0
/*
 * The master: the Ousterhout matrix (jobs to rows), one strobe per slice,
 * the job map, and fail-over between masters.
 *
 * Strobes are time-triggered: the strobe of slice n leaves lead_us before
 * its deadline, so every node holds it before the deadline and switches
 * at the same instant whatever the network latency.  Deadlines are
 * CLOCK_REALTIME: the nodes' clocks must be synchronised (chrony, PTP).
 *
 * Every master-role daemon starts as a standby.  A standby that has heard
 * no strobe for failover_slices slices takes over with an epoch higher than
 * any it has seen.  A master that hears a more senior one (higher epoch,
 * then higher priority, then higher node id) steps down, so two masters
 * that took over together settle on one.  A standby that sees one of lower
 * priority take over takes over in its turn (outranks()), so that
 * of the standbys the highest priority ends up the master.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <linux/bcs.h>
#include <sodium.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "core/log.h"
#include "master/master.h"
#include "tree/topo.h"
#include "tree/tquorum.h"

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
#define REPORT_EPOCH_SLICES	3
#define REPORT_EXPIRY_MS(d)	(5 * (d)->cfg.report_ms)

static uint64_t slices_ms(const struct bcsd *d, uint64_t slices)
{
	uint64_t ms = slices * d->slice_ns / 1000000;

	return ms ? ms : 1;
}

/* Arm the strobe timer for CLOCK_REALTIME @at_ns; 0 disarms it. */
static void arm_strobe_timer(struct bcsd *d, uint64_t at_ns)
{
	loop_timer_at(d->master.strobe_fd, at_ns);
}

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

static struct bcsd_job *find_job(struct bcsd *d, uint32_t id)
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

static uint32_t nr_rows(const struct bcsd *d)
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

/*
 * The statistics context, to the group and to this host's node part; sent
 * with every map once there is one, so that a node that lost it or
 * joined later gets it.
 */
static void send_ctx(struct bcsd *d)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_CONTEXT } };

	if (!d->master.ctx.version)
		return;
	m.hdr.epoch = d->master.epoch;
	m.hdr.priority = (uint16_t)d->cfg.priority;
	m.ctx = d->master.ctx;
	net_send(d, &m, NULL);
	d->followed.ctx = m.ctx;
	d->followed.ctx_epoch = d->master.epoch;
	d->followed.ctx_master = d->node_id;
	d->followed.have_ctx = true;
	dispatch(d, &m, &(struct bcsd_origin){
		.local = true, .slice = d->master.strobe_slice });
}

/* Slices from a context change to the strobe that applies it. */
#define CTX_LEAD_SLICES	2

static void ctx_changed(struct bcsd *d)
{
	d->master.ctx.version++;
	d->master.ctx.apply_slice = d->master.strobe_slice + CTX_LEAD_SLICES;
	send_ctx(d);
}

static struct bcsp_job_stats *ctx_job(struct bcsd *d, uint32_t id,
				      bool add)
{
	struct bcsp_context *c = &d->master.ctx;
	uint32_t i;

	for (i = 0; i < c->nr_jobs; i++)
		if (c->jobs[i].job == id)
			return &c->jobs[i];
	if (!add || c->nr_jobs >= BCSP_MAX_JOBS)
		return NULL;
	memset(&c->jobs[c->nr_jobs], 0, sizeof(c->jobs[0]));
	c->jobs[c->nr_jobs].job = id;
	return &c->jobs[c->nr_jobs++];
}

/* Statistics request @req (BCSP_OP_STATS): 0 or a negative errno. */
static int ctx_stats(struct bcsd *d, const struct bcsp_request *req)
{
	uint32_t metrics = req->stats.metrics;
	struct bcsp_job_stats *js;

	if (req->stats.op > BCS_DIST_RELEASE || (metrics & ~BCS_DIST_ALL) ||
	    (req->stats.op == BCS_DIST_RELEASE) != !metrics ||
	    (req->stats.op == BCS_DIST_ENABLE ?
	     req->stats.sub_bits > BCS_HIST_SUB_BITS_MAX : req->stats.sub_bits))
		return -EINVAL;
	if (!find_job(d, req->job))
		return -ENOENT;
	js = ctx_job(d, req->job, true);
	if (!js)
		return -ENOSPC;	/* BCSP_MAX_JOBS jobs have statistics */
	switch (req->stats.op) {
	case BCS_DIST_ENABLE:
		js->metrics |= (uint8_t)metrics;
		js->sub_bits = (uint8_t)req->stats.sub_bits;
		break;
	case BCS_DIST_DISABLE:
		js->metrics &= (uint8_t)~metrics;
		break;
	default:
		/* bcs.ko forgets the job's enables with its statistics. */
		js->metrics = 0;
		js->release++;
		break;
	}
	ctx_changed(d);
	return 0;
}

/* Window request @req: 0 or a negative errno. */
static int ctx_window(struct bcsd *d, const struct bcsp_request *req)
{
	struct bcsp_context *c = &d->master.ctx;

	if (req->op == BCSP_OP_WINDOW_CLEAR) {
		c->flags &= ~BCSP_WINDOW_ARMED;
		ctx_changed(d);
		return 0;
	}
	if (req->window.from > req->window.to)
		return -EINVAL;
	/* Every node must have it before the window's first slice. */
	if (req->window.from <= d->master.strobe_slice + CTX_LEAD_SLICES)
		return -ERANGE;
	c->flags |= BCSP_WINDOW_ARMED;
	c->window_from = req->window.from;
	c->window_to = req->window.to;
	ctx_changed(d);
	return 0;
}

/* Job @id is gone: so are its statistics from the context. */
static void ctx_forget(struct bcsd *d, uint32_t id)
{
	struct bcsp_job_stats *js = ctx_job(d, id, false);

	if (!js)
		return;
	*js = d->master.ctx.jobs[--d->master.ctx.nr_jobs];
	ctx_changed(d);
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
	send_ctx(d);
}

/*
 * Slices from a change of the map to the slice its rows take effect in
 * on every node: the map goes out at once and again with each of the
 * next MAP_REPEATS strobes, so a node that lost a copy still has it in
 * time (node.c idles a node that has not).
 */
#define MAP_LEAD_SLICES	(MAP_REPEATS + 1)

/*
 * The map changed: a new version, whose rows take effect MAP_LEAD_SLICES
 * from now on every node at once (bcs.ko's BCS_JOB_AT_SLICE), or with
 * @at_once at once (a take-over: no map of this master's is in force).  A
 * change while the last is not yet in force joins it, at its slice.
 */
static void map_changed(struct bcsd *d, bool at_once)
{
	d->master.map_version++;
	if (at_once)
		d->master.map_apply_slice = 0;
	else if (d->master.map_apply_slice <= d->master.strobe_slice + 1)
		d->master.map_apply_slice = d->master.strobe_slice +
					    MAP_LEAD_SLICES;
	send_map(d);
}

/* Slices between resends of an unchanged map. */
static uint64_t map_resend_slices(const struct bcsd *d)
{
	uint64_t n = d->slice_ns ? MAP_RESEND_NS / d->slice_ns : 1;

	return n < 1 ? 1 : n > MAP_RESEND_SLICES ? MAP_RESEND_SLICES : n;
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
static bool replan(struct bcsd *d)
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
static void forget_jobs(struct bcsd *d)
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
static bool add_job(struct bcsd *d, uint32_t id, uint32_t row, bool pin,
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
static void remove_job(struct bcsd *d, struct bcsd_job *j)
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
static void adopt_reported_jobs(struct bcsd *d, uint32_t node,
				const struct bcsp_report *r)
{
	uint32_t i, id;

	for (i = 0; i < r->nr_jobs && i < BCSP_MAX_JOBS; i++) {
		id = r->jobs[i].job;
		if (!bcs_job_id_valid(id) || find_job(d, id))
			continue;
		/* Reports carry no owner: the nodes keep theirs. */
		if (!add_job(d, id, BCS_ROW_NONE, false, r->jobs[i].birth,
			     BCSP_OWNER_NONE))
			return;
		pr_notice("job %u adopted from node %u's report, row %u", id,
			  node, d->master.jobs[d->master.nr_jobs - 1].row);
	}
}

/*
 * The epoch for a take-over, above every one seen; false, said once, if
 * none is left: the epoch counter does not wrap to 0 (proto.h).
 */
static bool next_epoch(struct bcsd *d, uint32_t *epoch)
{
	if (bcsp_epoch_next(d->followed.max_epoch_seen, epoch)) {
		d->master.no_epoch_said = false;
		return true;
	}
	if (!d->master.no_epoch_said)
		pr_err("epoch %u is the last (%u): not taking over; restart every bcsd of the cluster to start again from epoch 1",
		       d->followed.max_epoch_seen, BCSP_EPOCH_MAX);
	d->master.no_epoch_said = true;
	return false;
}

static void take_over(struct bcsd *d, uint32_t epoch)
{
	uint64_t lead = (uint64_t)d->cfg.lead_us * 1000, now;
	struct bcs_state st;
	uint32_t i;

	if (!d->followed.have_map && !d->master.nr_jobs)
		for (i = 0; i < d->view.nr_peers; i++)
			adopt_reported_jobs(d, d->view.peers[i].node,
					    &d->view.peers[i].report);
	d->master.epoch = epoch;
	d->master.active = true;
	d->cnt.takeovers++;
	/* Down a tree, from this node now. */
	tree_reroot(d, d->node_id);
	/* Carry on with the schedule the old master announced. */
	d->master.strobe_slice = d->followed.slice;
	/*
	 * No master heard since this daemon started (it restarted, alone):
	 * go on from the slice this host's bcs.ko last ran, so that slice
	 * numbers do not start again from 0 under records that have them.
	 */
	if (!d->master.strobe_slice && d->bcs && !bcs_get_state(d->bcs, &st))
		d->master.strobe_slice = st.slice;
	if (d->followed.have_map && !d->master.nr_jobs) {
		/* In the rows they had, free to move from now on; owners kept. */
		for (i = 0; i < d->followed.map.nr_jobs; i++)
			if (add_job(d, d->followed.map.jobs[i].job,
				    d->followed.map.jobs[i].row, false,
				    d->followed.map.jobs[i].birth,
				    d->followed.map.jobs[i].owner))
				d->master.jobs[d->master.nr_jobs - 1].rows =
					d->followed.map.jobs[i].rows;
		d->master.map_version = d->followed.map.version;
	}
	/* The statistics the nodes record, as the old master left them. */
	if (d->followed.have_ctx && !d->master.ctx.version) {
		d->master.ctx = d->followed.ctx;
		d->master.ctx.version++;
	}
	d->followed.known = true;
	d->followed.id = d->node_id;
	d->followed.epoch = d->master.epoch;
	d->followed.priority = (uint16_t)d->cfg.priority;
	d->followed.max_epoch_seen = d->master.epoch;
	now = now_real_ns();
	/* The first strobe, sent at once, is for the slice a lead from now. */
	d->master.strobe_deadline_ns = now + lead - d->slice_ns;
	pr_notice("taking over as master: epoch %u, slice %llu", d->master.epoch,
		  (unsigned long long)d->master.strobe_slice);
	/* No map of this master's is in force anywhere: at once. */
	map_changed(d, true);
	d->master.strobe_row = bcsp_map_next_row(&d->followed.map, BCS_ROW_NONE);
	d->master.strobe_copies_left = 0;
	arm_strobe_timer(d, now + 1000);
}

static void step_down(struct bcsd *d)
{
	d->master.active = false;
	d->cnt.stepdowns++;
	/*
	 * The senior master owns the matrix from now on: forget ours, so
	 * that a later take-over starts from the map it announced rather
	 * than from its own, older matrix (jobs created or destroyed since
	 * would be lost or come back).
	 */
	forget_jobs(d);
	memset(&d->master.ctx, 0, sizeof(d->master.ctx));
	d->master.strobe_copies_left = 0;
	d->master.higher_epoch_ms = 0;
	arm_strobe_timer(d, 0);
	pr_notice("stepping down: a more senior master is live");
}

/*
 * Does this standby outrank the master of strobe @m, which has just taken
 * over from the one it followed?  Standbys notice a master's silence each
 * on its own tick (and failover_slices may differ), so the first to take
 * over is any of them; the others follow its higher epoch.  The rule is
 * that the highest priority wins, so a standby of higher priority than
 * the new master takes over in its turn, with a higher epoch still, if
 * it too has heard nothing from the old master for half its failover
 * silence (which tells a master's death from a partition that healed,
 * where the old master was heard until just now), and if it could take
 * over on its own (listened long enough, quorum).  @from says which
 * master was followed until the strobe came.
 */
static bool outranks(const struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	uint64_t silence = slices_ms(d, d->cfg.failover_slices);
	uint64_t now = now_mono_ms();
	uint32_t fresh, need;

	return !d->master.active && from->prev_known &&
	       from->prev_id != m->hdr.sender &&
	       m->hdr.epoch > from->prev_epoch &&
	       m->hdr.priority < d->cfg.priority &&
	       now - from->prev_heard_ms >= silence / 2 &&
	       now >= d->master.listen_until_ms &&
	       view_quorum(d, now, &fresh, &need);
}

/*
 * A strobe from another master, now followed: an active master steps
 * down (the strobe passed as more senior); a standby that outranks it
 * (outranks()) takes over.  Our own strobes are not for us.
 */
static void on_strobe(struct bcsd *d, const struct bcsp_msg *m,
		      const struct bcsd_origin *from)
{
	uint32_t epoch;

	if (from->local)
		return;
	d->master.no_quorum_said = false;
	if (d->master.active) {
		step_down(d);
	} else if (outranks(d, m, from) && next_epoch(d, &epoch)) {
		pr_notice("master %u took over with priority %u, below this standby's %llu: taking over",
			  m->hdr.sender, m->hdr.priority,
			  (unsigned long long)d->cfg.priority);
		take_over(d, epoch);
	}
}

/*
 * Arm the timer for the next copy of the strobe just sent, or for the
 * next strobe.  Copies let a node that loses a datagram still switch on
 * time; a slice is lost only when every copy is.  They go out a little
 * apart (losses come in bursts), spread over the first half of the lead
 * so that even the last arrives well before the deadline.  A master
 * running late still sends them, but none within a gap of the deadline.
 */
static void next_copy(struct bcsd *d, uint64_t lead, uint64_t now)
{
	unsigned int copies = (unsigned int)d->cfg.strobe_copies;
	uint64_t gap = lead / 2 / copies;

	if (d->master.strobe_copies_left &&
	    now + 2 * gap < d->master.strobe_deadline_ns) {
		arm_strobe_timer(d, now + gap + 1);
		return;
	}
	d->master.strobe_copies_left = 0;
	arm_strobe_timer(d, d->master.strobe_deadline_ns + d->slice_ns - lead);
}

static void on_strobe_timer(struct bcsd *d, void *arg)
{
	uint64_t lead = (uint64_t)d->cfg.lead_us * 1000, now, behind, rows;
	struct bcsp_msg *m = &d->master.strobe_msg;
	uint32_t version = d->master.map_version;

	(void)arg;
	loop_drain_timer(d->master.strobe_fd);
	if (!d->master.active)
		return;
	now = now_real_ns();
	if (d->master.strobe_copies_left) {
		d->master.strobe_copies_left--;
		if (!net_send(d, m, NULL))
			d->cnt.strobe_copies_tx++;
		next_copy(d, lead, now);
		return;
	}
	d->master.strobe_slice++;
	d->master.strobe_deadline_ns += d->slice_ns;
	/*
	 * Fell behind (stopped, overloaded): skip the slices that are gone,
	 * and start the next a lead from now, off the old grid, whose next
	 * deadline may lie up to a slice further.
	 */
	if (d->master.strobe_deadline_ns < now + lead / 2) {
		behind = (now + lead - d->master.strobe_deadline_ns) / d->slice_ns;
		d->master.strobe_slice += behind;
		d->master.strobe_deadline_ns = now + lead;
	}
	/*
	 * From the map as announced (send_map() follows every change): the
	 * rotation wire-protocol.rst specifies, which a node holding the
	 * map the strobe names can work out for itself.
	 */
	rows = followed_rows_at(d, d->master.strobe_slice, &version);
	d->master.strobe_row = bcsp_rows_next(rows, d->master.strobe_row);
	memset(m, 0, sizeof(*m));
	m->hdr.type = BCSP_STROBE;
	m->hdr.epoch = d->master.epoch;
	m->hdr.priority = (uint16_t)d->cfg.priority;
	m->strobe.slice = d->master.strobe_slice;
	m->strobe.deadline_ns = d->master.strobe_deadline_ns;
	m->strobe.slice_ns = d->slice_ns;
	m->strobe.row = d->master.strobe_row;
	m->strobe.map_version = version;
	m->strobe.nr_rows = nr_rows(d);
	/* Down a tree, sent again where missed rather than copied (tree.c). */
	if (tree_transport(d) && d->cfg.strobe_copies > 1)
		m->strobe.flags = BCSP_STROBE_F_REPAIR;
	if (!net_send(d, m, NULL))
		d->cnt.strobes_tx++;
	global_sent(d, d->master.epoch, &m->strobe, now_real_ns());
	d->followed.slice = d->master.strobe_slice;
	d->followed.heard_ms = now_mono_ms();
	/* To this host's node part, as the group gets it. */
	dispatch(d, m, &(struct bcsd_origin){
		.local = true, .slice = d->master.strobe_slice });
	if (d->master.map_repeats) {
		d->master.map_repeats--;
		send_map(d);
	} else if (d->master.strobe_slice - d->master.map_sent_slice >=
		   map_resend_slices(d)) {
		send_map(d);
	}
	d->master.strobe_copies_left = tree_transport(d) ? 0 :
		(unsigned int)d->cfg.strobe_copies - 1;
	next_copy(d, lead, now);
}

static void attaching_tick(struct bcsd *d);

static void master_tick(struct bcsd *d, void *arg)
{
	uint64_t silence = slices_ms(d, d->cfg.failover_slices);
	uint64_t now = now_mono_ms();
	uint32_t fresh, need, epoch, hearing;

	(void)arg;
	if (d->master.active) {
		attaching_tick(d);
		/*
		 * Reports that expired, jobs free to move again: once a
		 * report period (a replan costs O(jobs) and up, and reports
		 * expire in five).
		 */
		if (now - d->master.replanned_ms >= d->cfg.report_ms &&
		    replan(d))
			map_changed(d, false);
	}
	if (d->master.active || now - d->followed.heard_ms <= silence ||
	    now < d->master.listen_until_ms)
		return;
	/*
	 * Cut off from most of the cluster, this daemon would take over
	 * only its own side, with an epoch that makes it the senior master
	 * when the cut heals: the jobs made on the other side meanwhile
	 * would be lost.  The silence counts again from here, so that when
	 * the cut heals (the nodes' reports may come before a strobe) the
	 * master has a whole failover period to be heard.
	 */
	if (tree_transport(d) && d->followed.known) {
		/*
		 * Down a tree this daemon hears only its subtree: it asked
		 * every node (tree.c, tquorum.c).  A node that hears a master
		 * means that only this daemon's path to it broke.  One that
		 * never heard a master has asked nobody, and may take over,
		 * as a standby that heard no report may with multicast.
		 */
		switch (tree_quorum(d, silence / 2, &fresh, &hearing, &need)) {
		case TQ_TAKE_OVER:
			break;
		case TQ_MASTER_HEARD:
			d->cnt.quorum_vetoes++;
			pr_notice("no master heard, but %u of the %u nodes that answer hear one: not taking over",
				  hearing, fresh);
			d->followed.heard_ms = now - silence * 3 / 4;
			return;
		default:
			if (!d->master.no_quorum_said)
				pr_notice("no master heard, but only %u of %u nodes answer (quorum %u): not taking over",
					  fresh + 1, d->nodes->nr, need);
			d->master.no_quorum_said = true;
			d->followed.heard_ms = now - silence * 3 / 4;
			return;
		}
	} else if (!view_quorum(d, now, &fresh, &need)) {
		if (!d->master.no_quorum_said)
			pr_notice("no master heard, but only %u of %u nodes report (quorum %u): not taking over",
				  fresh, d->view.nr_peers, need);
		d->master.no_quorum_said = true;
		d->followed.heard_ms = now;
		return;
	}
	d->master.no_quorum_said = false;
	if (!next_epoch(d, &epoch)) {
		d->followed.heard_ms = now;
		return;
	}
	take_over(d, epoch);
}

/*
 * An active master got a report from a node that follows a higher epoch:
 * a master it never heard (it restarted, or took over too soon) left the
 * nodes with an epoch above its own, so they reject its strobes as stale.
 * Take a higher epoch still, with the jobs that node holds, and announce
 * the map.  Not at the first such report: when a partition heals, a
 * node's report can come before the strobes of the live master of that
 * epoch, which make this one step down.  Only reports that keep naming
 * the higher epoch for REPORT_EPOCH_SLICES slices (and two report
 * periods) show that its master is gone.  If it lives on all the same,
 * one of the two steps down on hearing the other.
 */
static void report_epoch(struct bcsd *d, const struct bcsp_msg *m)
{
	uint64_t now = now_mono_ms(), wait = slices_ms(d, REPORT_EPOCH_SLICES);
	uint32_t epoch;

	if (!d->master.active || m->hdr.epoch <= d->master.epoch)
		return;
	if (wait < 2 * d->cfg.report_ms)
		wait = 2 * d->cfg.report_ms;
	/* A new episode if the last such report is long gone. */
	if (!d->master.higher_epoch_ms || now - d->master.higher_epoch_last_ms > wait)
		d->master.higher_epoch_ms = now;
	d->master.higher_epoch_last_ms = now;
	if (now - d->master.higher_epoch_ms < wait || !next_epoch(d, &epoch))
		return;
	d->master.higher_epoch_ms = 0;
	adopt_reported_jobs(d, m->hdr.sender, &m->report);
	d->master.epoch = epoch;
	d->followed.epoch = d->master.epoch;
	d->followed.max_epoch_seen = d->master.epoch;
	d->cnt.takeovers++;
	pr_notice("node %u follows epoch %u: taking over again with epoch %u",
		  m->hdr.sender, m->hdr.epoch, d->master.epoch);
	map_changed(d, true);
}

/* The id of the next command; 0 is none. */
static uint32_t next_cmd_id(const struct bcsd *d)
{
	return d->master.cmd_id + 1 ? d->master.cmd_id + 1 : 1;
}

/*
 * Command @cmd (its op, job and arg; for an attach its node) on the tasks
 * of a job, to the nodes (down a tree, to the subtrees that hold its tasks, or its
 * node, each child acknowledging it) and to this host's node part, whose
 * result may come before this returns.  Multicast, sent as often as a
 * strobe; each node carries it out once (its id, next_cmd_id()).
 */
static void send_command(struct bcsd *d, const struct bcsp_command *cmd)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_COMMAND } };
	unsigned int i, copies;

	m.hdr.epoch = d->master.epoch;
	m.hdr.priority = (uint16_t)d->cfg.priority;
	m.cmd = *cmd;
	d->master.cmd_id = next_cmd_id(d);
	m.cmd.id = d->master.cmd_id;
	/* Down a tree, the acknowledgements stand for the copies. */
	copies = tree_transport(d) ? 1 : d->cfg.strobe_copies;
	for (i = 0; i < copies; i++)
		net_send_command(d, &m);
	pr_info("job %u: command %u (%u) %u sent", cmd->job, cmd->op,
		cmd->arg, m.cmd.id);
	dispatch(d, &m, &(struct bcsd_origin){
		.local = true, .slice = d->master.strobe_slice });
}

/*
 * Is node @node one of the cluster's: in the nodes file if there is
 * one, else heard from (its reports), or this one?
 */
static bool node_known(const struct bcsd *d, uint32_t node)
{
	uint32_t i;

	if (node == d->node_id)
		return true;
	if (d->nodes)
		return topo_index(d->nodes, node) >= 0;
	for (i = 0; i < d->view.nr_peers; i++)
		if (d->view.peers[i].node == node)
			return true;
	return false;
}

/*
 * The slot of the attach waiting: request @req (a retry of it), or with
 * @req NULL command @cmd_id; -1 if none.
 */
static int attaching_find(const struct bcsd *d, const struct bcsp_request *req,
			  uint32_t cmd_id)
{
	const struct bcsp_request *r;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(d->master.attaching); i++) {
		r = &d->master.attaching[i].req;
		if (!r->id)
			continue;
		if (req ? r->id == req->id && r->node == req->node &&
			  r->job == req->job :
			  d->master.attaching[i].cmd_id == cmd_id)
			return (int)i;
	}
	return -1;
}

/*
 * Attach request @req: its command goes to its node, and the reply waits
 * for the node's result (on_result()); 1 then, or 0 with @reply->error
 * set if it cannot go.  A retry of one in flight waits with it.
 */
static int attach(struct bcsd *d, const struct bcsp_request *req,
		  struct bcsp_request *reply)
{
	unsigned int i;

	if (!req->id) {
		reply->error = -EINVAL;	/* no retry could be told */
		return 0;
	}
	if (attaching_find(d, req, 0) >= 0)
		return 1;
	if (!find_job(d, req->job)) {
		reply->error = -ENOENT;
		return 0;
	}
	if (!node_known(d, req->attach.target)) {
		reply->error = -ENXIO;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(d->master.attaching); i++)
		if (!d->master.attaching[i].req.id)
			break;
	if (i == ARRAY_SIZE(d->master.attaching)) {
		reply->error = -EBUSY;	/* BCSD_ATTACHING_MAX in flight */
		return 0;
	}
	d->master.attaching[i].req = *req;
	d->master.attaching[i].sent_ms = now_mono_ms();
	/* Before it goes: this master's own node answers at once. */
	d->master.attaching[i].cmd_id = next_cmd_id(d);
	send_command(d, &(struct bcsp_command){
		.op = BCSP_CMD_ATTACH, .job = req->job,
		.arg = req->attach.pid, .node = req->attach.target });
	return 1;
}

static void done_add(struct bcsd *d, const struct bcsp_request *reply);

/*
 * The reply to attach @i, with @error: to the group (down a tree) and to
 * this host's control socket, and kept for retries.
 */
static void attach_answer(struct bcsd *d, unsigned int i, int32_t error)
{
	struct bcsp_msg r = { .hdr = { .type = BCSP_REPLY } };

	r.hdr.epoch = d->master.epoch;
	r.hdr.priority = (uint16_t)d->cfg.priority;
	r.req = d->master.attaching[i].req;
	r.req.error = error;
	d->master.attaching[i].req.id = 0;
	done_add(d, &r.req);
	net_send(d, &r, NULL);
	r.hdr.sender = d->node_id;
	dispatch(d, &r, &(struct bcsd_origin){ .local = true });
}

/* How a command went on a node: for an attach, its reply. */
static void on_result(struct bcsd *d, const struct bcsp_msg *m,
		      const struct bcsd_origin *from)
{
	const struct bcsp_result *res = &m->result;
	const struct bcsp_request *req;
	int i;

	(void)from;
	if (!d->master.active || m->hdr.epoch != d->master.epoch ||
	    res->op != BCSP_CMD_ATTACH)
		return;
	i = attaching_find(d, NULL, res->id);
	if (i < 0)
		return;		/* answered, or timed out */
	req = &d->master.attaching[i].req;
	/* From its node, about its process. */
	if (m->hdr.sender != req->attach.target || res->job != req->job ||
	    res->arg != req->attach.pid)
		return;
	d->cnt.results_rx++;
	attach_answer(d, (unsigned int)i, res->error);
}

/* Attaches whose node has not answered for BCSD_ATTACH_WAIT_MS. */
static void attaching_tick(struct bcsd *d)
{
	uint64_t now = now_mono_ms();
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(d->master.attaching); i++)
		if (d->master.attaching[i].req.id &&
		    now - d->master.attaching[i].sent_ms > BCSD_ATTACH_WAIT_MS)
			attach_answer(d, i, -EHOSTUNREACH);
}

/*
 * Carry out request @req; the answer is in @reply.  Returns false if the
 * answer comes later (an attach: attach_answer()).
 */
static bool carry_out(struct bcsd *d, const struct bcsp_request *req,
		      struct bcsp_request *reply)
{
	struct bcsd_job *j;
	uint32_t id, row;

	*reply = *req;
	reply->error = 0;
	switch (req->op) {
	case BCSP_OP_CREATE:
		if (req->row != BCS_ROW_NONE && req->row >= BCS_ROWS_MAX) {
			reply->error = -EINVAL;
		} else if (d->master.nr_jobs >= BCS_JOBS_MAX) {
			reply->error = -ENOSPC;
		} else if (req->job && find_job(d, req->job)) {
			reply->error = -EEXIST;
		} else if (req->job && !bcs_job_id_valid(req->job)) {
			reply->error = -EINVAL;
		} else {
			/* bcs.ko's rule: in turn, skipping the ids in use. */
			id = req->job;
			while (!bcs_job_id_valid(id) || find_job(d, id)) {
				id = d->master.next_job_id;
				d->master.next_job_id = bcs_job_id_next(id);
			}
			/* Any number but 0 (not known). */
			if (!add_job(d, id, req->row, req->row != BCS_ROW_NONE,
				     randombytes_random() | 1,
				     req->nodes.owner)) {
				reply->error = -ENOMEM;
				break;
			}
			/* The nodes it will run on, if the request says. */
			j = &d->master.jobs[d->master.nr_jobs - 1];
			if (req->nodes.nr) {
				j->declared = malloc(req->nodes.nr *
						     sizeof(j->declared[0]));
				if (!j->declared) {
					remove_job(d, j);
					reply->error = -ENOMEM;
					break;
				}
				j->nr_declared = req->nodes.nr;
				memcpy(j->declared, req->nodes.id,
				       req->nodes.nr * sizeof(j->declared[0]));
			}
			replan(d);
			row = j->row;
			reply->job = id;
			reply->row = row;
			pr_info("job %u created in row %u, owner %u", id, row,
				req->nodes.owner);
		}
		break;
	case BCSP_OP_DESTROY:
		j = find_job(d, req->job);
		if (!j) {
			reply->error = -ENOENT;
			break;
		}
		remove_job(d, j);
		ctx_forget(d, req->job);
		pr_info("job %u destroyed", req->job);
		break;
	case BCSP_OP_SET_ROW:
		j = find_job(d, req->job);
		if (!j)
			reply->error = -ENOENT;
		else if (req->row != BCS_ROW_NONE && req->row >= BCS_ROWS_MAX)
			reply->error = -EINVAL;
		else
			/* Pinned there; BCS_ROW_NONE: placed freely again. */
			matrix_pin(&d->master.matrix, req->job, req->row,
				   now_mono_ms());
		break;
	case BCSP_OP_SIGNAL:
		if (!find_job(d, req->job))
			reply->error = -ENOENT;
		else
			send_command(d, &(struct bcsp_command){
				.op = BCSP_CMD_SIGNAL, .job = req->job,
				.arg = req->signal.sig });
		return true;
	case BCSP_OP_ATTACH:
		/* The node's result answers it, unless it cannot go. */
		return !attach(d, req, reply);
	case BCSP_OP_MPI: {
		struct bcsp_command cmd = {
			.op = BCSP_CMD_MPI, .job = req->job,
			.arg = req->mpi.flags, .sub_bits = req->mpi.sub_bits,
			.len = req->mpi.len,
		};

		if (!find_job(d, req->job)) {
			reply->error = -ENOENT;
			return true;
		}
		memcpy(cmd.sel, req->mpi.sel, sizeof(cmd.sel));
		send_command(d, &cmd);
		return true;
	}
	case BCSP_OP_MPI_GATHER:
		/* The nodes send their files to the asker (collect.c). */
		if (!req->id || !req->node)
			reply->error = -EINVAL;
		else if (!find_job(d, req->job))
			reply->error = -ENOENT;
		else
			send_command(d, &(struct bcsp_command){
				.op = BCSP_CMD_MPI_GATHER, .job = req->job,
				.arg = req->id, .node = req->node });
		/* Every live node answers: the asker may hear fewer. */
		reply->gather.live = view_live_nodes(d, now_mono_ms());
		return true;
	case BCSP_OP_STATS:
		reply->error = ctx_stats(d, req);
		return true;
	case BCSP_OP_WINDOW:
	case BCSP_OP_WINDOW_CLEAR:
		reply->error = ctx_window(d, req);
		return true;
	default:
		reply->error = -EOPNOTSUPP;
	}
	if (!reply->error) {
		replan(d);
		map_changed(d, false);
	}
	return true;
}

/*
 * The reply given to an earlier copy of request @req, if any.  A retry is
 * the same node, id and operation, on the same job if the request names
 * one (a create may leave it to the master): ids start at random, but a
 * node that restarted may still meet an old one.
 */
static struct bcsp_request *done_find(struct bcsd *d,
				      const struct bcsp_request *req)
{
	struct bcsp_request *r;
	unsigned int i;

	if (!req->id)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(d->master.done); i++) {
		r = &d->master.done[i];
		if (r->id == req->id && r->node == req->node &&
		    r->op == req->op && (!req->job || r->job == req->job))
			return r;
	}
	return NULL;
}

static void done_add(struct bcsd *d, const struct bcsp_request *reply)
{
	if (done_find(d, reply))
		return;
	d->master.done[d->master.done_next++ % ARRAY_SIZE(d->master.done)] = *reply;
}

/*
 * A standby heard the reply of the master it follows.  Replies go to the
 * group so that standbys keep them as the master does: if the requester
 * loses a reply and the master fails before the retry, the standby that
 * takes over answers the retry instead of carrying the request out again
 * (a second job, or a destroy that finds no job).
 */
static void on_reply(struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	if (!from->local && !d->master.active)
		done_add(d, &m->req);
}

static void on_request(struct bcsd *d, const struct bcsp_msg *m)
{
	struct bcsp_msg r = { .hdr = { .type = BCSP_REPLY } };
	struct bcsp_request *done;

	/*
	 * Addressed to this master as it is now: a request for an earlier
	 * epoch (a replay, or one sent before a take-over) is not carried
	 * out; a node retries with the epoch it follows.
	 */
	if (m->hdr.epoch != d->master.epoch)
		return;
	r.hdr.epoch = d->master.epoch;
	r.hdr.priority = (uint16_t)d->cfg.priority;
	/*
	 * A retry of a request already carried out gets the same answer;
	 * unless it made a job that is gone since, as when the old master
	 * failed before its map reached this one: that is made again.
	 */
	done = done_find(d, &m->req);
	if (done && (done->op != BCSP_OP_CREATE || done->error ||
		     find_job(d, done->job))) {
		r.req = *done;
	} else {
		if (!carry_out(d, &m->req, &r.req))
			return;		/* answered later */
		if (done)
			*done = r.req;
		else
			done_add(d, &r.req);
	}
	net_send(d, &r, NULL);
}

/*
 * The tasks per job of the nodes that @sender speaks for: itself (a
 * report), or its subtree of a tree of daemons (a sum of reports).
 */
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
		j = find_job(d, t->jobs[i].job);
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
	if ((moved && replan(d)) || learnt)
		map_changed(d, false);
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

/*
 * A request: from the network, carried out by the active master and
 * answered to the group; from this host's control socket (ctl.c), while
 * this master is active, carried out and answered to it alone.
 */
static void on_request_msg(struct bcsd *d, const struct bcsp_msg *m,
			   const struct bcsd_origin *from)
{
	struct bcsp_msg r = { .hdr = { .type = BCSP_REPLY } };

	if (!d->master.active)
		return;
	if (!from->local) {
		on_request(d, m);
		return;
	}
	r.hdr.epoch = d->master.epoch;
	r.hdr.sender = d->node_id;
	if (carry_out(d, &m->req, &r.req))
		dispatch(d, &r, from);
}

/*
 * How the nodes' switches went, for the global records: from the
 * network, or from this host's switches part.
 */
static void on_switches(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from)
{
	(void)from;
	if (d->master.active)
		global_add(d, m->hdr.epoch, &m->sw, now_real_ns());
}

/*
 * A parent's estimates of its children's clock offsets (probe.c): from
 * the network, or from this host's probe part.  Only the active master
 * composes them; each batch is a moment to check them.
 */
static void on_offsets(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	uint64_t now = now_real_ns();

	(void)from;
	if (!d->master.active)
		return;
	offsets_add(d, m->hdr.sender, &m->offsets, now);
	offsets_check(d, now, now_mono_ms());
}

/* A report: from the network, or from this host's node part. */
/* Down a tree: the whole cluster's tasks, added up on the way (reduce.c). */
static void on_tasks(struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	if (from->local && d->master.active)
		take_tasks(d, m->hdr.sender, &m->tasks, NULL);
}

static void on_report_msg(struct bcsd *d, const struct bcsp_msg *m,
			  const struct bcsd_origin *from)
{
	if (!from->local)
		report_epoch(d, m);
	if (d->master.active)
		on_report(d, m);
}

int master_init(struct bcsd *d)
{
	d->master.strobe_fd = timerfd_create(CLOCK_REALTIME,
					     TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->master.strobe_fd < 0) {
		pr_err("timerfd: %s", strerror(errno));
		return -1;
	}
	if (loop_add(d, d->master.strobe_fd, LOOP_STROBE, on_strobe_timer,
		     NULL) || loop_on_tick(d, master_tick, NULL))
		return -1;
	if (matrix_start(d)) {
		pr_err("matrix: %s", strerror(ENOMEM));
		return -1;
	}
	dispatch_register(d, BCSP_STROBE, on_strobe);
	dispatch_register(d, BCSP_REPORT, on_report_msg);
	dispatch_register(d, BCSP_SWITCHES, on_switches);
	dispatch_register(d, BCSP_TASKS, on_tasks);
	dispatch_register(d, BCSP_OFFSETS, on_offsets);
	dispatch_register(d, BCSP_REQUEST, on_request_msg);
	dispatch_register(d, BCSP_REPLY, on_reply);
	dispatch_register(d, BCSP_RESULT, on_result);
	d->ctl_providers.slices = global_json;
	d->master.next_job_id = 1;
	/*
	 * Listen for a live master before taking over, and for the nodes'
	 * reports: they tell a restarted master the epoch the nodes follow
	 * and the jobs they hold, which it would otherwise have forgotten.
	 */
	d->followed.heard_ms = now_mono_ms();
	d->master.listen_until_ms = d->followed.heard_ms + 2 * d->cfg.report_ms;
	return 0;
}

void master_exit(struct bcsd *d)
{
	uint32_t i;

	for (i = 0; i < d->master.nr_jobs; i++)
		job_free(&d->master.jobs[i]);
	d->master.nr_jobs = 0;
	matrix_free(&d->master.matrix);
	if (d->master.strobe_fd < 0)
		return;
	loop_del(d, d->master.strobe_fd);
	close(d->master.strobe_fd);
	d->master.strobe_fd = -1;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The bodies of bcsd datagrams, one type at a time: the table of message
 * types (codec.h), and each type's encoder and decoder.
 *
 * A decoder reads a body whose length its row allows and the header of
 * which is authentic; it checks every field that can be checked without
 * state, so that the daemon's handlers see only bodies that bcsp_encode()
 * would make again byte for byte (the fuzz targets check it).
 */
#include <stdint.h>
#include <string.h>

#include <linux/bcs.h>
#include <linux/bcs_hist.h>

#include "proto/codec.h"
#include "proto/cursor.h"

int bcsp_node_task_cmp(const void *a, const void *b)
{
	const struct bcsp_node_task *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

/* The padding of variable bodies. */
static const uint8_t zero4[4];

/* A selection of @len bytes, padded with zeros to a multiple of 4. */
static void put_sel(struct bcsp_cur *c, const char *sel, uint32_t len)
{
	if (len >= BCSP_MPI_SEL_LEN || memchr(sel, 0, len)) {
		c->ok = false;
		return;
	}
	put(c, sel, len);
	put(c, zero4, (4 - len % 4) % 4);
}

/* The same back: no NUL inside, zeros after; false if not so. */
static bool get_sel(struct bcsp_cur *c, char *sel, uint32_t len)
{
	uint8_t pad[4];
	uint32_t i, n = (4 - len % 4) % 4;

	if (len >= BCSP_MPI_SEL_LEN)
		return false;
	get(c, sel, len);
	sel[len] = 0;
	get(c, pad, n);
	for (i = 0; i < n; i++)
		if (pad[i])
			return false;
	return c->ok && !memchr(sel, 0, len);
}

/*
 * A word into *@word and three more that must be zero into @reserved:
 * false if one is not (the decoder's "and three reserved zeros").
 */
static bool get_word_zeros(struct bcsp_cur *c, uint32_t *word,
			   uint32_t reserved[3])
{
	*word = get32(c);
	reserved[0] = get32(c);
	reserved[1] = get32(c);
	reserved[2] = get32(c);
	return !reserved[0] && !reserved[1] && !reserved[2];
}

static void encode_strobe(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	put64(c, m->strobe.slice);
	put64(c, m->strobe.deadline_ns);
	put64(c, m->strobe.slice_ns);
	put32(c, m->strobe.row);
	put32(c, m->strobe.map_version);
	put32(c, m->strobe.nr_rows);
	put32(c, m->strobe.flags);
	if (!m->strobe.plan_slices)
		return;
	put32(c, m->strobe.plan_slices);
	put32(c, m->strobe.plan_next);
	put64(c, m->strobe.plan_rows);
}

static bool decode_strobe(struct bcsp_cur *c, struct bcsp_msg *m)
{
	m->strobe.slice = get64(c);
	m->strobe.deadline_ns = get64(c);
	m->strobe.slice_ns = get64(c);
	m->strobe.row = get32(c);
	m->strobe.map_version = get32(c);
	m->strobe.nr_rows = get32(c);
	m->strobe.flags = get32(c);
	if (c->ok && c->len - c->off >= BCSP_STROBE_PLAN_LEN) {
		m->strobe.plan_slices = get32(c);
		m->strobe.plan_next = get32(c);
		m->strobe.plan_rows = get64(c);
		if (!m->strobe.plan_slices ||
		    m->strobe.plan_slices > BCS_PLAN_SLICES_MAX ||
		    !m->strobe.plan_next ||
		    m->strobe.plan_next > m->strobe.plan_slices)
			return false;
	}
	return c->ok && !(m->strobe.flags & ~BCSP_STROBE_F_ALL);
}

/* Is @first the start of a part of a map of @nr_jobs jobs? */
static bool map_part_ok(uint32_t nr_jobs, uint32_t first)
{
	return nr_jobs <= BCSP_MAP_JOBS_MAX && !(first % BCSP_MAP_PART_JOBS) &&
	       first < bcsp_map_parts(nr_jobs) * BCSP_MAP_PART_JOBS;
}

/* One part: the jobs from @first. */
static void encode_map(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	uint32_t i, n;

	if (!map_part_ok(m->map.nr_jobs, m->map.first)) {
		c->ok = false;
		return;
	}
	put32(c, m->map.version);
	put32(c, m->map.nr_jobs);
	put64(c, m->map.apply_slice);
	put32(c, m->map.first);
	put32(c, 0);
	n = bcsp_map_part_len(m->map.nr_jobs, m->map.first);
	for (i = 0; i < n; i++) {
		put32(c, m->map.jobs[i].job);
		put32(c, m->map.jobs[i].row);
		put64(c, m->map.jobs[i].rows);
		put32(c, m->map.jobs[i].nodes);
		put32(c, m->map.jobs[i].tasks);
		put32(c, m->map.jobs[i].birth);
		put32(c, m->map.jobs[i].owner);
	}
}

static bool decode_map(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint32_t i;

	m->map.version = get32(c);
	m->map.nr_jobs = get32(c);
	m->map.apply_slice = get64(c);
	m->map.first = get32(c);
	if (get32(c) || !map_part_ok(m->map.nr_jobs, m->map.first))
		return false;
	/* Every part but the last is full. */
	m->map.nr = bcsp_map_part_len(m->map.nr_jobs, m->map.first);
	if (m->map.nr != (c->len - c->off) / bcsp_types[BCSP_MAP].elem)
		return false;
	for (i = 0; i < m->map.nr; i++) {
		struct bcsp_job_row *j = &m->map.jobs[i];

		j->job = get32(c);
		j->row = get32(c);
		j->rows = get64(c);
		j->nodes = get32(c);
		j->tasks = get32(c);
		j->birth = get32(c);
		j->owner = get32(c);
		/*
		 * bcs.ko's own rules for ids and rows; a job runs in its
		 * home row, and in none without one.
		 */
		if (!bcs_job_id_valid(j->job) ||
		    (j->row >= BCS_ROWS_MAX && j->row != BCS_ROW_NONE) ||
		    (j->row == BCS_ROW_NONE ? j->rows != 0 :
		     !(j->rows & (1ULL << j->row))))
			return false;
	}
	return c->ok;
}

/* Subset @s, at index @idx of its context's jobs (0 in a request). */
static void put_subset(struct bcsp_cur *c, const struct bcsp_subset *s,
		       uint32_t idx)
{
	if (!bcsp_subset_valid(s)) {
		c->ok = false;
		return;
	}
	put16(c, (uint16_t)idx);
	put16(c, (uint16_t)s->kind);
	put32(c, s->a);
	put32(c, s->b);
}

/* A subset into @s, its job's index into *@idx; false if not valid. */
static bool get_subset(struct bcsp_cur *c, struct bcsp_subset *s,
		       uint32_t *idx)
{
	*idx = get16(c);
	s->kind = get16(c);
	s->a = get32(c);
	s->b = get32(c);
	s->job = 0;
	return c->ok && bcsp_subset_valid(s);
}

/* BCSP_REQUEST and BCSP_REPLY. */
static void encode_req(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	uint32_t i;

	put32(c, m->req.id);
	put32(c, m->req.op);
	put32(c, m->req.job);
	put32(c, m->req.row);
	put32(c, (uint32_t)m->req.error);
	put32(c, m->req.node);
	if (m->req.op == BCSP_OP_STATS) {
		put32(c, m->req.stats.op);
		put32(c, m->req.stats.metrics);
		put32(c, m->req.stats.sub_bits);
		if (m->req.stats.nr_subsets > BCSP_JOB_SUBSETS_MAX) {
			c->ok = false;
			return;
		}
		put32(c, m->req.stats.nr_subsets);
		for (i = 0; i < m->req.stats.nr_subsets; i++)
			put_subset(c, &m->req.stats.subsets[i], 0);
	} else if (m->req.op == BCSP_OP_WINDOW) {
		put64(c, m->req.window.from);
		put64(c, m->req.window.to);
	} else if (m->req.op == BCSP_OP_SIGNAL) {
		put32(c, m->req.signal.sig);
		put32(c, 0);
		put32(c, 0);
		put32(c, 0);
	} else if (m->req.op == BCSP_OP_ATTACH) {
		put32(c, m->req.attach.target);
		put32(c, m->req.attach.pid);
		put32(c, 0);
		put32(c, 0);
	} else if (m->req.op == BCSP_OP_MPI) {
		put32(c, m->req.mpi.flags);
		put32(c, m->req.mpi.sub_bits);
		put32(c, m->req.mpi.len);
		put32(c, 0);
		put_sel(c, m->req.mpi.sel, m->req.mpi.len);
	} else if (m->req.op == BCSP_OP_MPI_GATHER ||
		   m->req.op == BCSP_OP_TGATHER) {
		put32(c, m->hdr.type == BCSP_REPLY ? m->req.gather.live : 0);
		put32(c, 0);
		put32(c, 0);
		put32(c, 0);
	} else if (m->req.op == BCSP_OP_CREATE &&
		   (m->req.nodes.nr || m->req.nodes.owner)) {
		if (m->req.nodes.nr > BCSP_CREATE_NODES_MAX ||
		    m->req.nodes.owner == BCSP_OWNER_NONE) {
			c->ok = false;
			return;
		}
		put32(c, m->req.nodes.nr);
		put32(c, m->req.nodes.owner);
		put32(c, 0);
		put32(c, 0);
		for (i = 0; i < m->req.nodes.nr; i++)
			put32(c, m->req.nodes.id[i]);
	}
}

/* The nodes and owner of a create, sent only with either (canonical). */
static bool decode_create_nodes(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint32_t i;

	m->req.nodes.nr = get32(c);
	m->req.nodes.owner = get32(c);
	m->req.nodes.reserved[0] = get32(c);
	m->req.nodes.reserved[1] = get32(c);
	if (m->req.nodes.reserved[0] || m->req.nodes.reserved[1] ||
	    m->req.nodes.owner == BCSP_OWNER_NONE ||
	    (!m->req.nodes.nr && !m->req.nodes.owner) ||
	    m->req.nodes.nr > BCSP_CREATE_NODES_MAX ||
	    c->len - c->off != 4 * (size_t)m->req.nodes.nr)
		return false;
	for (i = 0; i < m->req.nodes.nr; i++) {
		m->req.nodes.id[i] = get32(c);
		if (!m->req.nodes.id[i])
			return false;
	}
	return true;
}

/* The subsets of a stats request: an enable's, at most a job's. */
static bool decode_req_subsets(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint32_t i, n = m->req.stats.nr_subsets, idx;

	if (n > BCSP_JOB_SUBSETS_MAX ||
	    (n && m->req.stats.op != BCS_DIST_ENABLE) ||
	    c->len - c->off != (size_t)BCSP_SUBSET_LEN * n)
		return false;
	for (i = 0; i < n; i++)
		if (!get_subset(c, &m->req.stats.subsets[i], &idx) || idx)
			return false;
	return true;
}

/* The arguments of a request's operation, after its 24 bytes. */
static bool decode_req_args(struct bcsp_cur *c, struct bcsp_msg *m)
{
	switch (m->req.op) {
	case BCSP_OP_STATS:
		m->req.stats.op = get32(c);
		m->req.stats.metrics = get32(c);
		m->req.stats.sub_bits = get32(c);
		m->req.stats.nr_subsets = get32(c);
		return decode_req_subsets(c, m);
	case BCSP_OP_WINDOW:
		m->req.window.from = get64(c);
		m->req.window.to = get64(c);
		return true;
	case BCSP_OP_SIGNAL:
		return get_word_zeros(c, &m->req.signal.sig,
				      m->req.signal.reserved) &&
		       m->req.signal.sig && m->req.signal.sig <= BCSP_SIGNAL_MAX;
	case BCSP_OP_ATTACH:
		m->req.attach.target = get32(c);
		m->req.attach.pid = get32(c);
		m->req.attach.reserved[0] = get32(c);
		m->req.attach.reserved[1] = get32(c);
		return m->req.attach.target && m->req.attach.pid &&
		       m->req.attach.pid <= BCSP_PID_MAX &&
		       !m->req.attach.reserved[0] &&
		       !m->req.attach.reserved[1] &&
		       bcs_job_id_valid(m->req.job);
	case BCSP_OP_MPI:
		m->req.mpi.flags = get32(c);
		m->req.mpi.sub_bits = get32(c);
		m->req.mpi.len = get32(c);
		m->req.mpi.reserved = get32(c);
		return !(m->req.mpi.flags & ~BCSP_MPI_FLAGS) &&
		       m->req.mpi.sub_bits <= BCS_HIST_SUB_BITS_MAX &&
		       !m->req.mpi.reserved &&
		       get_sel(c, m->req.mpi.sel, m->req.mpi.len);
	case BCSP_OP_MPI_GATHER:
	case BCSP_OP_TGATHER:
		return get_word_zeros(c, &m->req.gather.live,
				      m->req.gather.reserved) &&
		       !(m->hdr.type == BCSP_REQUEST && m->req.gather.live);
	case BCSP_OP_CREATE:
		return c->len <= c->off || decode_create_nodes(c, m);
	}
	return true;
}

static bool decode_req(struct bcsp_cur *c, struct bcsp_msg *m)
{
	m->req.id = get32(c);
	m->req.op = get32(c);
	m->req.job = get32(c);
	m->req.row = get32(c);
	m->req.error = (int32_t)get32(c);
	m->req.node = get32(c);
	if (!decode_req_args(c, m))
		return false;
	/* A node asks for itself only. */
	return c->ok && (m->hdr.type == BCSP_REPLY ||
			 m->req.node == m->hdr.sender);
}

static void encode_report(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	uint32_t i;

	if (m->report.nr_jobs > BCSP_MAX_JOBS) {
		c->ok = false;
		return;
	}
	put32(c, m->report.nr_jobs);
	for (i = 0; i < m->report.nr_jobs; i++) {
		put32(c, m->report.jobs[i].job);
		put32(c, m->report.jobs[i].tasks);
		put32(c, m->report.jobs[i].birth);
		put64(c, m->report.jobs[i].cpus);
	}
}

static bool decode_report(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint32_t i;

	m->report.nr_jobs = get32(c);
	if (m->report.nr_jobs > BCSP_MAX_JOBS)
		return false;
	for (i = 0; i < m->report.nr_jobs; i++) {
		m->report.jobs[i].job = get32(c);
		m->report.jobs[i].tasks = get32(c);
		m->report.jobs[i].birth = get32(c);
		m->report.jobs[i].cpus = get64(c);
	}
	return c->ok;
}

static void encode_context(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	uint32_t i, k;

	if (m->ctx.nr_jobs > BCSP_MAX_JOBS) {
		c->ok = false;
		return;
	}
	put32(c, m->ctx.version);
	put32(c, m->ctx.nr_jobs);
	put64(c, m->ctx.apply_slice);
	put64(c, m->ctx.window_from);
	put64(c, m->ctx.window_to);
	put32(c, m->ctx.flags);
	put32(c, 0);
	for (i = 0; i < m->ctx.nr_jobs; i++) {
		put32(c, m->ctx.jobs[i].job);
		put8(c, m->ctx.jobs[i].metrics);
		put8(c, m->ctx.jobs[i].sub_bits);
		put16(c, m->ctx.jobs[i].release);
	}
	if (!m->ctx.nr_subsets)
		return;
	if (m->ctx.nr_subsets > BCSP_CTX_SUBSETS_MAX) {
		c->ok = false;
		return;
	}
	put32(c, m->ctx.nr_subsets);
	put32(c, 0);
	for (i = 0; i < m->ctx.nr_subsets; i++) {
		for (k = 0; k < m->ctx.nr_jobs; k++)
			if (m->ctx.jobs[k].job == m->ctx.subsets[i].job)
				break;
		if (k == m->ctx.nr_jobs) {
			c->ok = false;	/* a subset of no job of it */
			return;
		}
		put_subset(c, &m->ctx.subsets[i], k);
	}
}

/*
 * The subsets of a context after its jobs, if any: each of a job of it,
 * at most BCSP_JOB_SUBSETS_MAX of one, and the body ends with them.
 */
static bool decode_ctx_subsets(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint8_t per_job[BCSP_MAX_JOBS] = { 0 };
	uint32_t i, k, idx, reserved;

	m->ctx.nr_subsets = 0;
	if (c->off == c->len)
		return c->ok;
	m->ctx.nr_subsets = get32(c);
	reserved = get32(c);
	if (!c->ok || reserved || !m->ctx.nr_subsets ||
	    m->ctx.nr_subsets > BCSP_CTX_SUBSETS_MAX ||
	    c->len - c->off != (size_t)BCSP_SUBSET_LEN * m->ctx.nr_subsets)
		return false;
	for (i = 0; i < m->ctx.nr_subsets; i++) {
		if (!get_subset(c, &m->ctx.subsets[i], &idx) ||
		    idx >= m->ctx.nr_jobs ||
		    ++per_job[idx] > BCSP_JOB_SUBSETS_MAX)
			return false;
		/* Its job's first entry: the one the encoder names. */
		for (k = 0; k < idx; k++)
			if (m->ctx.jobs[k].job == m->ctx.jobs[idx].job)
				return false;
		m->ctx.subsets[i].job = m->ctx.jobs[idx].job;
	}
	return c->ok;
}

static bool decode_context(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint32_t i;

	m->ctx.version = get32(c);
	m->ctx.nr_jobs = get32(c);
	m->ctx.apply_slice = get64(c);
	m->ctx.window_from = get64(c);
	m->ctx.window_to = get64(c);
	m->ctx.flags = get32(c);
	m->ctx.reserved = get32(c);
	if (m->ctx.nr_jobs > BCSP_MAX_JOBS || m->ctx.reserved ||
	    (m->ctx.flags & ~BCSP_WINDOW_ARMED) ||
	    m->ctx.window_from > m->ctx.window_to)
		return false;
	for (i = 0; i < m->ctx.nr_jobs; i++) {
		m->ctx.jobs[i].job = get32(c);
		m->ctx.jobs[i].metrics = get8(c);
		m->ctx.jobs[i].sub_bits = get8(c);
		m->ctx.jobs[i].release = get16(c);
		if (!bcs_job_id_valid(m->ctx.jobs[i].job) ||
		    (m->ctx.jobs[i].metrics & ~BCS_DIST_ALL) ||
		    m->ctx.jobs[i].sub_bits > BCS_HIST_SUB_BITS_MAX)
			return false;
	}
	return decode_ctx_subsets(c, m);
}

static void encode_switches(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	uint32_t i, k;

	if (m->sw.nr > BCSP_MAX_SWITCHES) {
		c->ok = false;
		return;
	}
	put32(c, m->sw.nr);
	put32(c, 0);
	for (i = 0; i < m->sw.nr; i++) {
		put64(c, m->sw.s[i].slice);
		put64(c, (uint64_t)m->sw.s[i].end_max_ns);
		put64(c, (uint64_t)m->sw.s[i].end_min_ns);
		put16(c, m->sw.s[i].nodes);
		put16(c, m->sw.s[i].late);
		put16(c, m->sw.s[i].predicted);
		put16(c, m->sw.s[i].other);
		for (k = 0; k < BCSP_ROW_CLASSES; k++) {
			put16(c, m->sw.s[i].rows[k].row);
			put16(c, m->sw.s[i].rows[k].nodes);
		}
	}
}

/*
 * The row classes of @w: rows in range, no row twice, unused ones zero,
 * and with @other the nodes of them all.
 */
static bool row_classes_ok(const struct bcsp_switch_sum *w)
{
	uint32_t k, j, sum = w->other;

	for (k = 0; k < BCSP_ROW_CLASSES; k++) {
		const struct bcsp_row_class *r = &w->rows[k];

		sum += r->nodes;
		if (!r->nodes) {
			if (r->row)
				return false;
			continue;
		}
		if (r->row >= BCS_ROWS_MAX && r->row != BCSP_ROW_CLASS_NONE)
			return false;
		for (j = 0; j < k; j++)
			if (w->rows[j].nodes && w->rows[j].row == r->row)
				return false;
	}
	return sum == w->nodes;
}

static bool decode_switches(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint32_t i, k;

	m->sw.nr = get32(c);
	m->sw.reserved = get32(c);
	if (m->sw.nr > BCSP_MAX_SWITCHES || m->sw.reserved)
		return false;
	for (i = 0; i < m->sw.nr; i++) {
		struct bcsp_switch_sum *w = &m->sw.s[i];

		w->slice = get64(c);
		w->end_max_ns = (int64_t)get64(c);
		w->end_min_ns = (int64_t)get64(c);
		w->nodes = get16(c);
		w->late = get16(c);
		w->predicted = get16(c);
		w->other = get16(c);
		for (k = 0; k < BCSP_ROW_CLASSES; k++) {
			w->rows[k].row = get16(c);
			w->rows[k].nodes = get16(c);
		}
		if (!w->nodes || w->late > w->nodes ||
		    w->predicted > w->nodes ||
		    w->end_min_ns > w->end_max_ns ||
		    !row_classes_ok(w))
			return false;
	}
	return c->ok;
}

static void encode_attach(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	put32(c, m->attach.parent);
	put32(c, 0);
}

static bool decode_attach(struct bcsp_cur *c, struct bcsp_msg *m)
{
	m->attach.parent = get32(c);
	m->attach.reserved = get32(c);
	return c->ok && !m->attach.reserved;
}

/* BCSP_PROBE and BCSP_PROBE_REPLY: a probe has no @t2, @t3. */
static void encode_probe(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	put32(c, m->probe.id);
	put32(c, m->hdr.type == BCSP_PROBE_REPLY ?
		 m->probe.flags & BCSP_PROBE_HEARS : 0);
	put64(c, m->probe.t1);
	if (m->hdr.type == BCSP_PROBE_REPLY) {
		put64(c, m->probe.t2);
		put64(c, m->probe.t3);
	}
}

static bool decode_probe(struct bcsp_cur *c, struct bcsp_msg *m)
{
	m->probe.id = get32(c);
	m->probe.flags = get32(c);
	m->probe.t1 = get64(c);
	if (m->hdr.type == BCSP_PROBE_REPLY) {
		m->probe.t2 = get64(c);
		m->probe.t3 = get64(c);
	}
	return c->ok &&
	       !(m->probe.flags & (m->hdr.type == BCSP_PROBE_REPLY ?
				   ~BCSP_PROBE_HEARS : ~0u)) &&
	       m->probe.t3 >= m->probe.t2;
}

static void encode_tasks(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	uint32_t i;

	if (m->tasks.nr_jobs > BCSP_MAX_JOBS) {
		c->ok = false;
		return;
	}
	put32(c, m->tasks.nodes);
	put32(c, m->tasks.nr_jobs);
	for (i = 0; i < m->tasks.nr_jobs; i++) {
		put32(c, m->tasks.jobs[i].job);
		put32(c, m->tasks.jobs[i].nodes);
		put32(c, m->tasks.jobs[i].tasks);
		put32(c, m->tasks.jobs[i].birth);
	}
}

static bool decode_tasks(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint32_t i;

	m->tasks.nodes = get32(c);
	m->tasks.nr_jobs = get32(c);
	if (m->tasks.nr_jobs > BCSP_MAX_JOBS)
		return false;
	for (i = 0; i < m->tasks.nr_jobs; i++) {
		m->tasks.jobs[i].job = get32(c);
		m->tasks.jobs[i].nodes = get32(c);
		m->tasks.jobs[i].tasks = get32(c);
		m->tasks.jobs[i].birth = get32(c);
		if (!bcs_job_id_valid(m->tasks.jobs[i].job) ||
		    m->tasks.jobs[i].nodes > m->tasks.nodes)
			return false;
	}
	return c->ok;
}

static void encode_offsets(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	uint32_t i;

	if (m->offsets.nr > BCSP_MAX_OFFSETS) {
		c->ok = false;
		return;
	}
	put32(c, m->offsets.nr);
	put32(c, 0);
	for (i = 0; i < m->offsets.nr; i++) {
		put32(c, m->offsets.o[i].node);
		put32(c, 0);
		put64(c, (uint64_t)m->offsets.o[i].offset);
		put64(c, m->offsets.o[i].bound);
	}
}

static bool decode_offsets(struct bcsp_cur *c, struct bcsp_msg *m)
{
	struct bcsp_offsets *o = &m->offsets;
	uint32_t i, k;

	o->nr = get32(c);
	o->reserved = get32(c);
	if (o->nr > BCSP_MAX_OFFSETS || o->reserved)
		return false;
	for (i = 0; i < o->nr; i++) {
		struct bcsp_offset *e = &o->o[i];

		e->node = get32(c);
		e->reserved = get32(c);
		e->offset = (int64_t)get64(c);
		e->bound = get64(c);
		if (e->reserved || e->node == m->hdr.sender ||
		    e->offset == INT64_MIN ||
		    (e->bound == BCSP_BOUND_NONE && e->offset))
			return false;
		/* At most BCSP_MAX_OFFSETS^2 / 2 comparisons. */
		for (k = 0; k < i; k++)
			if (o->o[k].node == e->node)
				return false;
	}
	return c->ok;
}

static void encode_command(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	put32(c, m->cmd.id);
	put32(c, m->cmd.op);
	put32(c, m->cmd.job);
	put32(c, m->cmd.arg);
	if (m->cmd.op == BCSP_CMD_ATTACH || m->cmd.op == BCSP_CMD_MPI_GATHER ||
	    m->cmd.op == BCSP_CMD_TGATHER) {
		put32(c, m->cmd.node);
		put32(c, 0);
	} else if (m->cmd.op == BCSP_CMD_MPI) {
		put32(c, m->cmd.sub_bits);
		put32(c, m->cmd.len);
		put_sel(c, m->cmd.sel, m->cmd.len);
	}
}

static bool decode_command(struct bcsp_cur *c, struct bcsp_msg *m)
{
	m->cmd.id = get32(c);
	m->cmd.op = get32(c);
	m->cmd.job = get32(c);
	m->cmd.arg = get32(c);
	if (m->cmd.op == BCSP_CMD_ATTACH || m->cmd.op == BCSP_CMD_MPI_GATHER ||
	    m->cmd.op == BCSP_CMD_TGATHER) {
		m->cmd.node = get32(c);
		m->cmd.reserved = get32(c);
		return c->ok && m->cmd.id && m->cmd.node && !m->cmd.reserved &&
		       bcs_job_id_valid(m->cmd.job) && m->cmd.arg &&
		       (m->cmd.op != BCSP_CMD_ATTACH ||
			m->cmd.arg <= BCSP_PID_MAX);
	}
	if (m->cmd.op == BCSP_CMD_MPI) {
		m->cmd.sub_bits = get32(c);
		m->cmd.len = get32(c);
		return c->ok && m->cmd.id && bcs_job_id_valid(m->cmd.job) &&
		       !(m->cmd.arg & ~BCSP_MPI_FLAGS) &&
		       m->cmd.sub_bits <= BCS_HIST_SUB_BITS_MAX &&
		       get_sel(c, m->cmd.sel, m->cmd.len);
	}
	return c->ok && m->cmd.id && m->cmd.op == BCSP_CMD_SIGNAL &&
	       bcs_job_id_valid(m->cmd.job) && m->cmd.arg &&
	       m->cmd.arg <= BCSP_SIGNAL_MAX;
}

static void encode_result(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	put32(c, m->result.id);
	put32(c, m->result.op);
	put32(c, m->result.job);
	put32(c, m->result.arg);
	put32(c, (uint32_t)m->result.error);
	put32(c, 0);
}

static bool decode_result(struct bcsp_cur *c, struct bcsp_msg *m)
{
	m->result.id = get32(c);
	m->result.op = get32(c);
	m->result.job = get32(c);
	m->result.arg = get32(c);
	m->result.error = (int32_t)get32(c);
	m->result.reserved = get32(c);
	return c->ok && m->result.id && !m->result.reserved &&
	       (m->result.op == BCSP_CMD_SIGNAL ||
		m->result.op == BCSP_CMD_ATTACH) &&
	       bcs_job_id_valid(m->result.job) &&
	       m->result.error <= 0 && m->result.error >= -4095;
}

static void encode_ack(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	put32(c, m->ack.master);
	put32(c, m->ack.id);
}

static bool decode_ack(struct bcsp_cur *c, struct bcsp_msg *m)
{
	m->ack.master = get32(c);
	m->ack.id = get32(c);
	return c->ok && m->ack.master && m->ack.id;
}

static void encode_node_tasks(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	uint32_t i;

	if (m->node_tasks.nr > BCSP_MAX_NODE_TASKS) {
		c->ok = false;
		return;
	}
	put32(c, m->node_tasks.nr);
	put32(c, 0);
	put64(c, m->node_tasks.more);
	for (i = 0; i < m->node_tasks.nr; i++) {
		put32(c, m->node_tasks.e[i].job);
		put32(c, m->node_tasks.e[i].node);
		put32(c, m->node_tasks.e[i].tasks);
	}
}

static bool decode_node_tasks(struct bcsp_cur *c, struct bcsp_msg *m)
{
	uint32_t i;

	m->node_tasks.nr = get32(c);
	m->node_tasks.reserved = get32(c);
	m->node_tasks.more = get64(c);
	if (m->node_tasks.nr > BCSP_MAX_NODE_TASKS || m->node_tasks.reserved)
		return false;
	for (i = 0; i < m->node_tasks.nr; i++) {
		struct bcsp_node_task *e = &m->node_tasks.e[i];

		e->job = get32(c);
		e->node = get32(c);
		e->tasks = get32(c);
		/* Sorted, each pair once. */
		if (!bcs_job_id_valid(e->job) || !e->node || !e->tasks ||
		    (i && bcsp_node_task_cmp(e - 1, e) >= 0))
			return false;
	}
	return c->ok;
}

/* @len bytes of @data, then zeros to a multiple of 4. */
static void put_padded(struct bcsp_cur *c, const uint8_t *data, uint32_t len)
{
	put(c, data, len);
	put(c, zero4, (4 - len % 4) % 4);
}

/* @len bytes into @data, then the zeros to a multiple of 4. */
static bool get_padded(struct bcsp_cur *c, uint8_t *data, uint32_t len)
{
	uint8_t pad[4];
	uint32_t i, n = (4 - len % 4) % 4;

	get(c, data, len);
	get(c, pad, n);
	for (i = 0; i < n; i++)
		if (pad[i])
			return false;
	return c->ok;
}

static void encode_mpi_part(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	if (m->part.len > BCSP_MPI_PART_MAX) {
		c->ok = false;
		return;
	}
	put32(c, m->part.req);
	put32(c, m->part.node);
	put32(c, m->part.job);
	put16(c, m->part.file);
	put16(c, m->part.files);
	put32(c, m->part.size);
	put32(c, m->part.offset);
	put32(c, m->part.len);
	put_padded(c, m->part.data, m->part.len);
}

/*
 * A part of an MPI statistics file: inside its file, of a file of the
 * node's, or the one empty part of a node that has none; zeros after.
 */
static bool decode_mpi_part(struct bcsp_cur *c, struct bcsp_msg *m)
{
	struct bcsp_mpi_part *p = &m->part;

	p->req = get32(c);
	p->node = get32(c);
	p->job = get32(c);
	p->file = get16(c);
	p->files = get16(c);
	p->size = get32(c);
	p->offset = get32(c);
	p->len = get32(c);
	if (!c->ok || !p->req || !p->node || !bcs_job_id_valid(p->job) ||
	    p->files > BCSP_MPI_FILES_MAX || p->len > BCSP_MPI_PART_MAX)
		return false;
	if (!p->files) {
		if (p->file || p->size || p->offset || p->len)
			return false;
	} else if (p->file >= p->files || !p->size ||
		   p->size > BCSP_MPI_FILE_MAX || !p->len ||
		   p->offset > p->size || p->size - p->offset < p->len) {
		return false;
	}
	return get_padded(c, p->data, p->len);
}

static void encode_tg_part(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	if (m->tg.len > BCSP_TG_PART_MAX) {
		c->ok = false;
		return;
	}
	put32(c, m->tg.req);
	put32(c, m->tg.node);
	put32(c, m->tg.job);
	put32(c, m->tg.flags);
	put32(c, m->tg.size);
	put32(c, m->tg.offset);
	put32(c, m->tg.len);
	put_padded(c, m->tg.data, m->tg.len);
}

/*
 * A part of a tree gather's answer: on a part's boundary inside it, as
 * long as the rest or a whole part; zeros after.
 */
static bool decode_tg_part(struct bcsp_cur *c, struct bcsp_msg *m)
{
	struct bcsp_tg_part *p = &m->tg;

	p->req = get32(c);
	p->node = get32(c);
	p->job = get32(c);
	p->flags = get32(c);
	p->size = get32(c);
	p->offset = get32(c);
	p->len = get32(c);
	if (!c->ok || !p->req || !p->node || !bcs_job_id_valid(p->job) ||
	    (p->flags & ~BCSP_TG_FLAGS) || !p->size ||
	    p->size > BCSP_TG_SIZE_MAX || p->offset >= p->size ||
	    p->offset % BCSP_TG_PART_MAX ||
	    p->len != (p->size - p->offset < BCSP_TG_PART_MAX ?
		       p->size - p->offset : BCSP_TG_PART_MAX))
		return false;
	return get_padded(c, p->data, p->len);
}

static void encode_tg_nack(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	put32(c, m->tg_nack.req);
	put32(c, m->tg_nack.node);
	put32(c, m->tg_nack.job);
	put32(c, m->tg_nack.flags);
	put32(c, m->tg_nack.size);
	put32(c, 0);
	put64(c, m->tg_nack.parts[0]);
	put64(c, m->tg_nack.parts[1]);
}

_Static_assert(BCSP_TG_NACK_BITS == 128 &&
	       (BCSP_TG_SIZE_MAX + BCSP_TG_PART_MAX - 1) / BCSP_TG_PART_MAX <=
	       BCSP_TG_NACK_BITS, "a NACK names every part of an answer");

/*
 * Parts of a tree gather's answer asked for again: all of it (no size,
 * no bit), or at least one of the parts an answer of @size has.
 */
static bool decode_tg_nack(struct bcsp_cur *c, struct bcsp_msg *m)
{
	struct bcsp_tg_nack *n = &m->tg_nack;
	uint32_t parts;

	n->req = get32(c);
	n->node = get32(c);
	n->job = get32(c);
	n->flags = get32(c);
	n->size = get32(c);
	n->reserved = get32(c);
	n->parts[0] = get64(c);
	n->parts[1] = get64(c);
	if (!c->ok || !n->req || !n->node || !bcs_job_id_valid(n->job) ||
	    (n->flags & ~BCSP_TG_NACK_FLAGS) || n->reserved)
		return false;
	if (n->flags & BCSP_TG_NACK_F_ALL)
		return !n->size && !n->parts[0] && !n->parts[1];
	if (!n->size || n->size > BCSP_TG_SIZE_MAX ||
	    (!n->parts[0] && !n->parts[1]))
		return false;
	/* No bit at or past the last part (101 at most: two words). */
	parts = (n->size + BCSP_TG_PART_MAX - 1) / BCSP_TG_PART_MAX;
	if (parts < 64)
		return !(n->parts[0] >> parts) && !n->parts[1];
	return parts == 128 || !(n->parts[1] >> (parts - 64));
}

static void encode_strobe_nack(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	put64(c, m->nack.slice);
	put32(c, m->nack.master);
	put32(c, 0);
}

static bool decode_strobe_nack(struct bcsp_cur *c, struct bcsp_msg *m)
{
	m->nack.slice = get64(c);
	m->nack.master = get32(c);
	m->nack.reserved = get32(c);
	return c->ok && m->nack.master && !m->nack.reserved;
}

/* Words of an MPI selection at its longest, and of a request's node ids. */
#define SEL_WORDS	(BCSP_MPI_SEL_LEN / 4)
#define REQ_WORDS	(BCSP_CREATE_NODES_MAX > SEL_WORDS ? \
			 BCSP_CREATE_NODES_MAX : SEL_WORDS)

_Static_assert(BCSP_MPI_SEL_LEN % 4 == 0 && BCSP_MPI_PART_MAX % 4 == 0,
	       "variable bodies are counted in words");
_Static_assert(BCSP_SUBSET_LEN % 4 == 0 &&
	       BCSP_JOB_SUBSETS_MAX * BCSP_SUBSET_LEN / 4 <= REQ_WORDS &&
	       BCSP_JOB_SUBSETS_MAX <= BCSP_CTX_SUBSETS_MAX &&
	       BCSP_JOB_SUBSETS_MAX < 256 && BCSP_MAX_JOBS <= 65536,
	       "a job's subsets fit a request, their count a byte");
_Static_assert(BCSP_HDR_LEN + 40 + 8 * BCSP_MAX_JOBS + 8 +
	       BCSP_SUBSET_LEN * BCSP_CTX_SUBSETS_MAX + BCSP_TAG_LEN <=
	       BCSP_MAX_LEN, "a context with its subsets fits a datagram");

/*
 * The message types (wire-protocol.rst, "Bodies", whose table of types
 * tests/proto/test_types compares with this one).
 */
const struct bcsp_type_desc bcsp_types[__BCSP_TYPE_MAX] = {
	[BCSP_STROBE] = {
		.name = "strobe", .fixed = BCSP_STROBE_LEN,
		/* A plan, or none. */
		.elem = BCSP_STROBE_PLAN_LEN, .min = 1, .max = 1,
		.encode = encode_strobe, .decode = decode_strobe,
	},
	/* One part of a map: its jobs. */
	[BCSP_MAP] = {
		.name = "map", .fixed = 24,
		.elem = 32, .max = BCSP_MAP_PART_JOBS,
		.encode = encode_map, .decode = decode_map,
	},
	/*
	 * 24 bytes, or 16 more of an operation's arguments and then the
	 * words of an MPI selection or of a create's node ids.
	 */
	[BCSP_REQUEST] = {
		.name = "request", .fixed = 24,
		.elem = 4, .min = 4, .max = 4 + REQ_WORDS,
		.encode = encode_req, .decode = decode_req,
	},
	[BCSP_REPLY] = {
		.name = "reply", .fixed = 24,
		.elem = 4, .min = 4, .max = 4 + REQ_WORDS,
		.encode = encode_req, .decode = decode_req,
	},
	[BCSP_REPORT] = {
		.name = "report", .fixed = 4,
		.elem = 20, .max = BCSP_MAX_JOBS,
		.encode = encode_report, .decode = decode_report,
	},
	/* In words: the jobs, then maybe the subsets (proto.h). */
	[BCSP_CONTEXT] = {
		.name = "context", .fixed = 40,
		.elem = 4, .max = 2 * BCSP_MAX_JOBS + 2 +
			BCSP_CTX_SUBSETS_MAX * BCSP_SUBSET_LEN / 4,
		.encode = encode_context, .decode = decode_context,
	},
	[BCSP_SWITCHES] = {
		.name = "switches", .fixed = 8,
		.elem = 40, .max = BCSP_MAX_SWITCHES,
		.encode = encode_switches, .decode = decode_switches,
	},
	[BCSP_ATTACH] = {
		.name = "attach", .fixed = 8,
		.encode = encode_attach, .decode = decode_attach,
	},
	[BCSP_PROBE] = {
		.name = "probe", .fixed = 16,
		.encode = encode_probe, .decode = decode_probe,
	},
	[BCSP_PROBE_REPLY] = {
		.name = "probe-reply", .fixed = 32,
		.encode = encode_probe, .decode = decode_probe,
	},
	[BCSP_TASKS] = {
		.name = "tasks", .fixed = 8,
		.elem = 16, .max = BCSP_MAX_JOBS,
		.encode = encode_tasks, .decode = decode_tasks,
	},
	[BCSP_OFFSETS] = {
		.name = "offsets", .fixed = 8,
		.elem = 24, .max = BCSP_MAX_OFFSETS,
		.encode = encode_offsets, .decode = decode_offsets,
	},
	/*
	 * 16 bytes, or 8 more (an attach's or a gather's node, an MPI
	 * command's sub_bits and length) and the words of a selection.
	 */
	[BCSP_COMMAND] = {
		.name = "command", .fixed = 16,
		.elem = 4, .min = 2, .max = 2 + SEL_WORDS,
		.encode = encode_command, .decode = decode_command,
	},
	[BCSP_RESULT] = {
		.name = "result", .fixed = 24,
		.encode = encode_result, .decode = decode_result,
	},
	[BCSP_ACK] = {
		.name = "ack", .fixed = 8,
		.encode = encode_ack, .decode = decode_ack,
	},
	[BCSP_NODE_TASKS] = {
		.name = "node-tasks", .fixed = 16,
		.elem = 12, .max = BCSP_MAX_NODE_TASKS,
		.encode = encode_node_tasks, .decode = decode_node_tasks,
	},
	/* The part's bytes, padded to a word. */
	[BCSP_MPI_PART] = {
		.name = "mpi-part", .fixed = 28,
		.elem = 4, .max = BCSP_MPI_PART_MAX / 4,
		.encode = encode_mpi_part, .decode = decode_mpi_part,
	},
	[BCSP_STROBE_NACK] = {
		.name = "strobe-nack", .fixed = 16,
		.encode = encode_strobe_nack, .decode = decode_strobe_nack,
	},
	/* As an MPI part: the bytes, padded to a word. */
	[BCSP_TG_PART] = {
		.name = "tg-part", .fixed = 28,
		.elem = 4, .max = BCSP_TG_PART_MAX / 4,
		.encode = encode_tg_part, .decode = decode_tg_part,
	},
	[BCSP_TG_NACK] = {
		.name = "tg-nack", .fixed = 40,
		.encode = encode_tg_nack, .decode = decode_tg_nack,
	},
};

const char *bcsp_type_name(unsigned int type)
{
	return bcsp_type_valid(type) ? bcsp_types[type].name : "?";
}

bool bcsp_body_len_ok(unsigned int type, size_t n)
{
	const struct bcsp_type_desc *t;
	size_t k;

	if (!bcsp_type_valid(type))
		return false;
	t = &bcsp_types[type];
	if (n < t->fixed)
		return false;
	if (!t->elem)
		return n == t->fixed;
	if ((n - t->fixed) % t->elem)
		return false;
	k = (n - t->fixed) / t->elem;
	return k <= t->max && (!k || k >= t->min);
}

void bcsp_encode_body(struct bcsp_cur *c, const struct bcsp_msg *m)
{
	if (!bcsp_type_valid(m->hdr.type)) {
		c->ok = false;
		return;
	}
	bcsp_types[m->hdr.type].encode(c, m);
}

bool bcsp_decode_body(struct bcsp_cur *c, struct bcsp_msg *m)
{
	return bcsp_type_valid(m->hdr.type) &&
	       bcsp_types[m->hdr.type].decode(c, m);
}

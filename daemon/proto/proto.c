// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding, authentication and replay protection of bcsd datagrams.
 *
 * Decoding checks everything that can be checked without state, cheapest
 * first, and the tag before any field is trusted: a datagram that fails
 * is only counted.  Tags are compared in constant time by libsodium.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bcs.h>
#include <linux/bcs_hist.h>
#include <sodium.h>

#include "proto/proto.h"

static const char *const verdict_names[__BCSP_VERDICT_MAX] = {
	[BCSP_OK]		= "ok",
	[BCSP_SHORT]		= "truncated",
	[BCSP_BAD_MAGIC]	= "bad-magic",
	[BCSP_BAD_VERSION]	= "bad-version",
	[BCSP_BAD_TYPE]		= "bad-type",
	[BCSP_BAD_MAC]		= "bad-mac",
	[BCSP_OTHER_CLUSTER]	= "other-cluster",
	[BCSP_BAD_BODY]		= "bad-body",
	[BCSP_REPLAY]		= "replay",
	[BCSP_STALE]		= "stale",
};

const char *bcsp_verdict_name(enum bcsp_verdict v)
{
	return v < __BCSP_VERDICT_MAX ? verdict_names[v] : "?";
}

/* A cursor over a buffer; @ok turns false on overrun and stays false. */
struct cur {
	uint8_t *p;
	size_t len, off;
	bool ok;
};

static void put(struct cur *c, const void *v, size_t n)
{
	if (!c->ok || c->len - c->off < n) {
		c->ok = false;
		return;
	}
	memcpy(c->p + c->off, v, n);
	c->off += n;
}

static void put8(struct cur *c, uint8_t v)
{
	put(c, &v, 1);
}

static void put16(struct cur *c, uint16_t v)
{
	v = htobe16(v);
	put(c, &v, 2);
}

static void put32(struct cur *c, uint32_t v)
{
	v = htobe32(v);
	put(c, &v, 4);
}

static void put64(struct cur *c, uint64_t v)
{
	v = htobe64(v);
	put(c, &v, 8);
}

static void get(struct cur *c, void *v, size_t n)
{
	if (!c->ok || c->len - c->off < n) {
		c->ok = false;
		memset(v, 0, n);
		return;
	}
	memcpy(v, c->p + c->off, n);
	c->off += n;
}

static uint8_t get8(struct cur *c)
{
	uint8_t v;

	get(c, &v, 1);
	return v;
}

static uint16_t get16(struct cur *c)
{
	uint16_t v;

	get(c, &v, 2);
	return be16toh(v);
}

static uint32_t get32(struct cur *c)
{
	uint32_t v;

	get(c, &v, 4);
	return be32toh(v);
}

static uint64_t get64(struct cur *c)
{
	uint64_t v;

	get(c, &v, 8);
	return be64toh(v);
}

/* A selection of @len bytes, padded with zeros to a multiple of 4. */
/* The padding of variable bodies. */
static const uint8_t zero4[4];

static void put_sel(struct cur *c, const char *sel, uint32_t len)
{
	if (len >= BCSP_MPI_SEL_LEN || memchr(sel, 0, len)) {
		c->ok = false;
		return;
	}
	put(c, sel, len);
	put(c, zero4, (4 - len % 4) % 4);
}

/* The same back: no NUL inside, zeros after; false if not so. */
static bool get_sel(struct cur *c, char *sel, uint32_t len)
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
 * A part of an MPI statistics file: inside its file, of a file of the
 * node's, or the one empty part of a node that has none; zeros after.
 */
static bool get_part(struct cur *c, struct bcsp_mpi_part *p)
{
	uint8_t pad[4];
	uint32_t i, n;

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
	get(c, p->data, p->len);
	n = (4 - p->len % 4) % 4;
	get(c, pad, n);
	for (i = 0; i < n; i++)
		if (pad[i])
			return false;
	return c->ok;
}

static void encode_body(struct cur *c, const struct bcsp_msg *m)
{
	uint32_t i, k, n;

	switch (m->hdr.type) {
	case BCSP_STROBE:
		put64(c, m->strobe.slice);
		put64(c, m->strobe.deadline_ns);
		put64(c, m->strobe.slice_ns);
		put32(c, m->strobe.row);
		put32(c, m->strobe.map_version);
		put32(c, m->strobe.nr_rows);
		put32(c, m->strobe.flags);
		break;
	case BCSP_MAP:
		/* One part: the jobs from @first. */
		if (m->map.nr_jobs > BCSP_MAP_JOBS_MAX ||
		    m->map.first % BCSP_MAP_PART_JOBS ||
		    m->map.first >= bcsp_map_parts(m->map.nr_jobs) *
				    BCSP_MAP_PART_JOBS) {
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
		break;
	case BCSP_REQUEST:
	case BCSP_REPLY:
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
			put32(c, 0);
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
		} else if (m->req.op == BCSP_OP_MPI_GATHER) {
			put32(c, m->hdr.type == BCSP_REPLY ?
			      m->req.gather.live : 0);
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
		break;
	case BCSP_COMMAND:
		put32(c, m->cmd.id);
		put32(c, m->cmd.op);
		put32(c, m->cmd.job);
		put32(c, m->cmd.arg);
		if (m->cmd.op == BCSP_CMD_ATTACH ||
		    m->cmd.op == BCSP_CMD_MPI_GATHER) {
			put32(c, m->cmd.node);
			put32(c, 0);
		} else if (m->cmd.op == BCSP_CMD_MPI) {
			put32(c, m->cmd.sub_bits);
			put32(c, m->cmd.len);
			put_sel(c, m->cmd.sel, m->cmd.len);
		}
		break;
	case BCSP_RESULT:
		put32(c, m->result.id);
		put32(c, m->result.op);
		put32(c, m->result.job);
		put32(c, m->result.arg);
		put32(c, (uint32_t)m->result.error);
		put32(c, 0);
		break;
	case BCSP_ACK:
		put32(c, m->ack.master);
		put32(c, m->ack.id);
		break;
	case BCSP_STROBE_NACK:
		put64(c, m->nack.slice);
		put32(c, m->nack.master);
		put32(c, 0);
		break;
	case BCSP_MPI_PART:
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
		put(c, m->part.data, m->part.len);
		put(c, zero4, (4 - m->part.len % 4) % 4);
		break;
	case BCSP_NODE_TASKS:
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
		break;
	case BCSP_CONTEXT:
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
		break;
	case BCSP_REPORT:
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
		break;
	case BCSP_SWITCHES:
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
		break;
	case BCSP_ATTACH:
		put32(c, m->attach.parent);
		put32(c, 0);
		break;
	case BCSP_TASKS:
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
		break;
	case BCSP_PROBE:
	case BCSP_PROBE_REPLY:
		put32(c, m->probe.id);
		put32(c, m->hdr.type == BCSP_PROBE_REPLY ?
			 m->probe.flags & BCSP_PROBE_HEARS : 0);
		put64(c, m->probe.t1);
		if (m->hdr.type == BCSP_PROBE_REPLY) {
			put64(c, m->probe.t2);
			put64(c, m->probe.t3);
		}
		break;
	case BCSP_OFFSETS:
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
		break;
	default:
		c->ok = false;
	}
}

int bcsp_encode(const struct bcsp_msg *msg, const uint8_t *key,
		uint8_t *buf, size_t size)
{
	struct cur c = { .p = buf, .len = size, .ok = true };
	const struct bcsp_hdr *h = &msg->hdr;
	uint16_t len;

	if (h->epoch > BCSP_EPOCH_MAX)
		return -1;
	if (size > BCSP_MAX_LEN)
		c.len = BCSP_MAX_LEN;
	put32(&c, BCSP_MAGIC);
	put8(&c, BCSP_VERSION);
	put8(&c, h->type);
	put16(&c, 0);		/* length, filled in below */
	put32(&c, h->cluster);
	put32(&c, h->epoch);
	put32(&c, h->sender);
	put16(&c, h->priority);
	put16(&c, 0);
	put64(&c, h->seq);
	encode_body(&c, msg);
	if (!c.ok || c.len - c.off < BCSP_TAG_LEN)
		return -1;
	len = (uint16_t)(c.off + BCSP_TAG_LEN);
	len = htobe16(len);
	memcpy(buf + 6, &len, 2);
	crypto_auth_hmacsha256(buf + c.off, buf, c.off, key);
	return (int)(c.off + BCSP_TAG_LEN);
}

static bool decode_offsets(struct cur *c, struct bcsp_msg *m)
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

/*
 * A word into *@word and three more that must be zero into @reserved:
 * false if one is not (the decoder's "and three reserved zeros").
 */
static bool get_word_zeros(struct cur *c, uint32_t *word,
			   uint32_t reserved[3])
{
	*word = get32(c);
	reserved[0] = get32(c);
	reserved[1] = get32(c);
	reserved[2] = get32(c);
	return !reserved[0] && !reserved[1] && !reserved[2];
}

static bool decode_body(struct cur *c, struct bcsp_msg *m)
{
	uint32_t i, k;

	switch (m->hdr.type) {
	case BCSP_STROBE:
		m->strobe.slice = get64(c);
		m->strobe.deadline_ns = get64(c);
		m->strobe.slice_ns = get64(c);
		m->strobe.row = get32(c);
		m->strobe.map_version = get32(c);
		m->strobe.nr_rows = get32(c);
		m->strobe.flags = get32(c);
		return c->ok && !(m->strobe.flags & ~BCSP_STROBE_F_ALL);
	case BCSP_MAP:
		m->map.version = get32(c);
		m->map.nr_jobs = get32(c);
		m->map.apply_slice = get64(c);
		m->map.first = get32(c);
		if (get32(c) || m->map.nr_jobs > BCSP_MAP_JOBS_MAX ||
		    m->map.first % BCSP_MAP_PART_JOBS ||
		    m->map.first >= bcsp_map_parts(m->map.nr_jobs) *
				    BCSP_MAP_PART_JOBS)
			return false;
		/* Every part but the last is full. */
		m->map.nr = bcsp_map_part_len(m->map.nr_jobs, m->map.first);
		if (m->map.nr != (c->len - c->off) / 32)
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
			 * bcs.ko's own rules for ids and rows; a job runs in
			 * its home row, and in none without one.
			 */
			if (!bcs_job_id_valid(j->job) ||
			    (j->row >= BCS_ROWS_MAX && j->row != BCS_ROW_NONE) ||
			    (j->row == BCS_ROW_NONE ? j->rows != 0 :
			     !(j->rows & (1ULL << j->row))))
				return false;
		}
		return c->ok;
	case BCSP_REQUEST:
	case BCSP_REPLY:
		m->req.id = get32(c);
		m->req.op = get32(c);
		m->req.job = get32(c);
		m->req.row = get32(c);
		m->req.error = (int32_t)get32(c);
		m->req.node = get32(c);
		if (m->req.op == BCSP_OP_STATS) {
			m->req.stats.op = get32(c);
			m->req.stats.metrics = get32(c);
			m->req.stats.sub_bits = get32(c);
			m->req.stats.reserved = get32(c);
			if (m->req.stats.reserved)
				return false;
		} else if (m->req.op == BCSP_OP_WINDOW) {
			m->req.window.from = get64(c);
			m->req.window.to = get64(c);
		} else if (m->req.op == BCSP_OP_SIGNAL) {
			if (!get_word_zeros(c, &m->req.signal.sig,
					    m->req.signal.reserved) ||
			    !m->req.signal.sig ||
			    m->req.signal.sig > BCSP_SIGNAL_MAX)
				return false;
		} else if (m->req.op == BCSP_OP_ATTACH) {
			m->req.attach.target = get32(c);
			m->req.attach.pid = get32(c);
			m->req.attach.reserved[0] = get32(c);
			m->req.attach.reserved[1] = get32(c);
			if (!m->req.attach.target || !m->req.attach.pid ||
			    m->req.attach.pid > BCSP_PID_MAX ||
			    m->req.attach.reserved[0] ||
			    m->req.attach.reserved[1] ||
			    !bcs_job_id_valid(m->req.job))
				return false;
		} else if (m->req.op == BCSP_OP_MPI) {
			m->req.mpi.flags = get32(c);
			m->req.mpi.sub_bits = get32(c);
			m->req.mpi.len = get32(c);
			m->req.mpi.reserved = get32(c);
			if ((m->req.mpi.flags & ~BCSP_MPI_FLAGS) ||
			    m->req.mpi.sub_bits > BCS_HIST_SUB_BITS_MAX ||
			    m->req.mpi.reserved ||
			    !get_sel(c, m->req.mpi.sel, m->req.mpi.len))
				return false;
		} else if (m->req.op == BCSP_OP_MPI_GATHER) {
			if (!get_word_zeros(c, &m->req.gather.live,
					    m->req.gather.reserved) ||
			    (m->hdr.type == BCSP_REQUEST && m->req.gather.live))
				return false;
		} else if (m->req.op == BCSP_OP_CREATE && c->len > c->off) {
			m->req.nodes.nr = get32(c);
			m->req.nodes.owner = get32(c);
			m->req.nodes.reserved[0] = get32(c);
			m->req.nodes.reserved[1] = get32(c);
			/* Sent only with a node or an owner (canonical). */
			if (m->req.nodes.reserved[0] ||
			    m->req.nodes.reserved[1] ||
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
		}
		/* A node asks for itself only. */
		return c->ok && (m->hdr.type == BCSP_REPLY ||
				 m->req.node == m->hdr.sender);
	case BCSP_CONTEXT:
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
		return c->ok;
	case BCSP_REPORT:
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
	case BCSP_SWITCHES:
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
	case BCSP_ATTACH:
		m->attach.parent = get32(c);
		m->attach.reserved = get32(c);
		return c->ok && !m->attach.reserved;
	case BCSP_COMMAND:
		m->cmd.id = get32(c);
		m->cmd.op = get32(c);
		m->cmd.job = get32(c);
		m->cmd.arg = get32(c);
		if (m->cmd.op == BCSP_CMD_ATTACH ||
		    m->cmd.op == BCSP_CMD_MPI_GATHER) {
			m->cmd.node = get32(c);
			m->cmd.reserved = get32(c);
			return c->ok && m->cmd.id && m->cmd.node &&
			       !m->cmd.reserved &&
			       bcs_job_id_valid(m->cmd.job) && m->cmd.arg &&
			       (m->cmd.op == BCSP_CMD_MPI_GATHER ||
				m->cmd.arg <= BCSP_PID_MAX);
		}
		if (m->cmd.op == BCSP_CMD_MPI) {
			m->cmd.sub_bits = get32(c);
			m->cmd.len = get32(c);
			return c->ok && m->cmd.id &&
			       bcs_job_id_valid(m->cmd.job) &&
			       !(m->cmd.arg & ~BCSP_MPI_FLAGS) &&
			       m->cmd.sub_bits <= BCS_HIST_SUB_BITS_MAX &&
			       get_sel(c, m->cmd.sel, m->cmd.len);
		}
		return c->ok && m->cmd.id && m->cmd.op == BCSP_CMD_SIGNAL &&
		       bcs_job_id_valid(m->cmd.job) && m->cmd.arg &&
		       m->cmd.arg <= BCSP_SIGNAL_MAX;
	case BCSP_RESULT:
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
	case BCSP_ACK:
		m->ack.master = get32(c);
		m->ack.id = get32(c);
		return c->ok && m->ack.master && m->ack.id;
	case BCSP_STROBE_NACK:
		m->nack.slice = get64(c);
		m->nack.master = get32(c);
		m->nack.reserved = get32(c);
		return c->ok && m->nack.master && !m->nack.reserved;
	case BCSP_MPI_PART:
		return get_part(c, &m->part);
	case BCSP_NODE_TASKS:
		m->node_tasks.nr = get32(c);
		m->node_tasks.reserved = get32(c);
		m->node_tasks.more = get64(c);
		if (m->node_tasks.nr > BCSP_MAX_NODE_TASKS ||
		    m->node_tasks.reserved)
			return false;
		for (i = 0; i < m->node_tasks.nr; i++) {
			struct bcsp_node_task *e = &m->node_tasks.e[i];

			e->job = get32(c);
			e->node = get32(c);
			e->tasks = get32(c);
			/* Sorted, each pair once. */
			if (!bcs_job_id_valid(e->job) || !e->node ||
			    !e->tasks ||
			    (i && bcsp_node_task_cmp(e - 1, e) >= 0))
				return false;
		}
		return c->ok;
	case BCSP_TASKS:
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
	case BCSP_PROBE:
	case BCSP_PROBE_REPLY:
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
	case BCSP_OFFSETS:
		return decode_offsets(c, m);
	}
	return false;
}

/*
 * @a before @b in the classes kept: "no row ran" first, then the lower
 * row.  An order of the rows alone, not of their counts, keeps the sum
 * associative and commutative: a row is kept in the sum of a set of
 * summaries exactly when fewer than BCSP_ROW_CLASSES rows before it are
 * in the set, so it is kept, with its whole count, in every part of any
 * grouping that holds it, and a row dropped anywhere is dropped in the
 * whole (two rows before it are there too).
 */
static bool class_before(const struct bcsp_row_class *a,
			 const struct bcsp_row_class *b)
{
	if (a->row == BCSP_ROW_CLASS_NONE || b->row == BCSP_ROW_CLASS_NONE)
		return a->row == BCSP_ROW_CLASS_NONE &&
		       b->row != BCSP_ROW_CLASS_NONE;
	return a->row < b->row;
}

/* The row classes of @src into @dst's (the counts fit: checked before). */
static void merge_rows(struct bcsp_switch_sum *dst,
		       const struct bcsp_switch_sum *src)
{
	struct bcsp_row_class all[2 * BCSP_ROW_CLASSES], t;
	uint32_t n = 0, i, j, other = dst->other + src->other;

	for (i = 0; i < BCSP_ROW_CLASSES; i++)
		if (dst->rows[i].nodes)
			all[n++] = dst->rows[i];
	for (i = 0; i < BCSP_ROW_CLASSES; i++) {
		if (!src->rows[i].nodes)
			continue;
		for (j = 0; j < n; j++)
			if (all[j].row == src->rows[i].row)
				break;
		if (j < n)
			all[j].nodes += src->rows[i].nodes;
		else
			all[n++] = src->rows[i];
	}
	/* Insertion sort of at most four. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && class_before(&all[j], &all[j - 1]); j--) {
			t = all[j];
			all[j] = all[j - 1];
			all[j - 1] = t;
		}
	memset(dst->rows, 0, sizeof(dst->rows));
	for (i = 0; i < n; i++) {
		if (i < BCSP_ROW_CLASSES)
			dst->rows[i] = all[i];
		else
			other += all[i].nodes;
	}
	dst->other = (uint16_t)other;
}

bool bcsp_switch_sum_add(struct bcsp_switch_sum *dst,
			 const struct bcsp_switch_sum *src)
{
	if (dst->slice != src->slice ||
	    (uint32_t)dst->nodes + src->nodes > UINT16_MAX)
		return false;
	merge_rows(dst, src);
	/* late <= nodes and predicted <= nodes: neither passes either. */
	dst->nodes += src->nodes;
	dst->late += src->late;
	dst->predicted += src->predicted;
	if (src->end_max_ns > dst->end_max_ns)
		dst->end_max_ns = src->end_max_ns;
	if (src->end_min_ns < dst->end_min_ns)
		dst->end_min_ns = src->end_min_ns;
	return true;
}

/*
 * Can a body of type @type be @n bytes long?  Checked before the tag, so
 * that a datagram that cannot be right costs no HMAC.
 */
static bool body_len_ok(uint8_t type, size_t n)
{
	switch (type) {
	case BCSP_CONTEXT:
		return n >= 40 && (n - 40) % 8 == 0 &&
		       (n - 40) / 8 <= BCSP_MAX_JOBS;
	case BCSP_STROBE:
		return n == 40;
	case BCSP_MAP:
		return n >= 24 && (n - 24) % 32 == 0 &&
		       (n - 24) / 32 <= BCSP_MAP_PART_JOBS;
	case BCSP_REQUEST:
	case BCSP_REPLY:
		/*
		 * 40 for the operations with arguments, more for an MPI
		 * selection; checked below.
		 */
		return n == 24 ||
		       (n >= 40 && n % 4 == 0 &&
			(n <= 40 + BCSP_MPI_SEL_LEN ||
			 n <= 40 + 4 * BCSP_CREATE_NODES_MAX));
	case BCSP_REPORT:
		return n >= 4 && (n - 4) % 20 == 0 &&
		       (n - 4) / 20 <= BCSP_MAX_JOBS;
	case BCSP_SWITCHES:
		return n >= 8 && (n - 8) % 40 == 0 &&
		       (n - 8) / 40 <= BCSP_MAX_SWITCHES;
	case BCSP_ATTACH:
		return n == 8;
	case BCSP_TASKS:
		return n >= 8 && (n - 8) % 16 == 0 &&
		       (n - 8) / 16 <= BCSP_MAX_JOBS;
	case BCSP_COMMAND:
		/* 24 for an attach; 24 and more for MPI; checked below. */
		return n == 16 || (n >= 24 && n <= 24 + BCSP_MPI_SEL_LEN &&
				   n % 4 == 0);
	case BCSP_RESULT:
		return n == 24;
	case BCSP_MPI_PART:
		return n >= 28 && n <= 28 + BCSP_MPI_PART_MAX && n % 4 == 0;
	case BCSP_ACK:
		return n == 8;
	case BCSP_STROBE_NACK:
		return n == 16;
	case BCSP_NODE_TASKS:
		return n >= 16 && (n - 16) % 12 == 0 &&
		       (n - 16) / 12 <= BCSP_MAX_NODE_TASKS;
	case BCSP_PROBE:
		return n == 16;
	case BCSP_PROBE_REPLY:
		return n == 32;
	case BCSP_OFFSETS:
		return n >= 8 && (n - 8) % 24 == 0 &&
		       (n - 8) / 24 <= BCSP_MAX_OFFSETS;
	}
	return false;
}

enum bcsp_verdict bcsp_decode(const uint8_t *buf, size_t len,
			      uint32_t cluster, const uint8_t *key,
			      struct bcsp_msg *msg)
{
	struct cur c = { .p = (uint8_t *)buf, .ok = true };
	uint16_t wire_len, reserved;
	size_t body_end;
	uint8_t type;

	/*
	 * Everything before the tag costs the same whatever the datagram
	 * holds, and little: a forged one costs at most one HMAC.
	 */
	if (len < BCSP_HDR_LEN + BCSP_TAG_LEN || len > BCSP_MAX_LEN)
		return BCSP_SHORT;
	c.len = len - BCSP_TAG_LEN;
	if (get32(&c) != BCSP_MAGIC)
		return BCSP_BAD_MAGIC;
	if (get8(&c) != BCSP_VERSION)
		return BCSP_BAD_VERSION;
	type = get8(&c);
	wire_len = get16(&c);
	if (wire_len != len)
		return BCSP_SHORT;
	if (!bcsp_type_valid(type))
		return BCSP_BAD_TYPE;
	body_end = len - BCSP_TAG_LEN;
	if (!body_len_ok(type, body_end - BCSP_HDR_LEN))
		return BCSP_SHORT;
	if (crypto_auth_hmacsha256_verify(buf + body_end, buf, body_end, key))
		return BCSP_BAD_MAC;
	memset(msg, 0, sizeof(*msg));
	msg->hdr.type = type;
	msg->hdr.cluster = get32(&c);
	if (msg->hdr.cluster != cluster)
		return BCSP_OTHER_CLUSTER;
	msg->hdr.epoch = get32(&c);
	msg->hdr.sender = get32(&c);
	msg->hdr.priority = get16(&c);
	reserved = get16(&c);
	msg->hdr.seq = get64(&c);
	if (reserved || msg->hdr.epoch > BCSP_EPOCH_MAX ||
	    !decode_body(&c, msg) || c.off != body_end)
		return BCSP_BAD_BODY;
	return BCSP_OK;
}

int bcsp_node_task_cmp(const void *a, const void *b)
{
	const struct bcsp_node_task *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

bool bcsp_epoch_next(uint32_t seen, uint32_t *next)
{
	if (seen >= BCSP_EPOCH_MAX)
		return false;
	*next = seen + 1;
	return true;
}

enum bcsp_verdict bcsp_strobe_verdict(const struct bcsp_strobe *s,
				      uint64_t now_ns, uint64_t stale_slices)
{
	if (s->row >= BCS_ROWS_MAX || s->slice_ns < BCS_SLICE_NS_MIN ||
	    s->slice_ns > BCS_SLICE_NS_MAX)
		return BCSP_BAD_BODY;
	/*
	 * Differences, not sums: deadlines and clocks take any 64-bit
	 * value, and deadline + slices would wrap (found by fuzz_body).
	 */
	if (s->deadline_ns < now_ns &&
	    stale_slices <= UINT64_MAX / s->slice_ns &&
	    now_ns - s->deadline_ns > stale_slices * s->slice_ns)
		return BCSP_STALE;
	if (s->deadline_ns > now_ns &&
	    s->deadline_ns - now_ns > BCSP_AHEAD_SLICES * s->slice_ns)
		return BCSP_STALE;
	return BCSP_OK;
}

enum bcsp_verdict bcsp_window_check(struct bcsp_window *w, uint32_t epoch,
				    uint64_t seq)
{
	uint64_t back;

	if (w->used && epoch < w->epoch)
		return BCSP_STALE;
	if (!w->used || epoch > w->epoch) {
		w->used = true;
		w->epoch = epoch;
		w->top = seq;
		w->bits = 1;
		w->prev_top = 0;
		return BCSP_OK;
	}
	if (seq > w->top) {
		back = seq - w->top;
		if (back >= 64) {
			/* A jump: what came before stays checkable. */
			w->prev_top = w->top;
			w->prev_bits = w->bits;
			w->prev_above = 0;
			w->prev_end = seq - 64;
			w->bits = 0;
		} else {
			w->bits <<= back;
		}
		w->bits |= 1;
		w->top = seq;
		return BCSP_OK;
	}
	back = w->top - seq;
	if (back < 64) {
		if (w->bits & (1ULL << back))
			return BCSP_REPLAY;
		w->bits |= 1ULL << back;
		return BCSP_OK;
	}
	/* Older than the window: the one before the last jump, if any. */
	if (!w->prev_top)
		return BCSP_REPLAY;
	if (seq > w->prev_top) {
		back = seq - w->prev_top - 1;
		if (seq > w->prev_end || back >= 64 ||
		    (w->prev_above & (1ULL << back)))
			return BCSP_REPLAY;
		w->prev_above |= 1ULL << back;
		return BCSP_OK;
	}
	back = w->prev_top - seq;
	if (back >= 64 || (w->prev_bits & (1ULL << back)))
		return BCSP_REPLAY;
	w->prev_bits |= 1ULL << back;
	return BCSP_OK;
}

uint64_t bcsp_seq_next(uint64_t *next, uint64_t now_ns)
{
	if (now_ns > BCSP_SEQ_LAG_NS && *next < now_ns - BCSP_SEQ_LAG_NS)
		*next = now_ns;
	return (*next)++;
}

enum bcsp_verdict bcsp_seq_check(struct bcsp_window *w, uint32_t epoch,
				 uint64_t seq, uint64_t floor_ns)
{
	if ((!w->used || epoch > w->epoch) && seq < floor_ns)
		return BCSP_STALE;
	return bcsp_window_check(w, epoch, seq);
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int bcsp_load_key(const char *path, uint8_t key[BCSP_KEY_LEN], char *err,
		  size_t errlen)
{
	uint8_t buf[2 * BCSP_KEY_LEN + 2];
	struct stat st;
	ssize_t n;
	int fd, i, hi, lo;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by uid %u, not by this user",
			 path, (unsigned int)st.st_uid);
		goto fail;
	}
	if (st.st_mode & 0077) {
		snprintf(err, errlen,
			 "%s: readable by group or others (mode %03o); chmod 600 it",
			 path, (unsigned int)(st.st_mode & 0777));
		goto fail;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	fd = -1;
	if (n == BCSP_KEY_LEN) {
		memcpy(key, buf, BCSP_KEY_LEN);
		sodium_memzero(buf, sizeof(buf));
		return 0;
	}
	if (n == 2 * BCSP_KEY_LEN ||
	    (n == 2 * BCSP_KEY_LEN + 1 && buf[2 * BCSP_KEY_LEN] == '\n')) {
		for (i = 0; i < BCSP_KEY_LEN; i++) {
			hi = hexval(buf[2 * i]);
			lo = hexval(buf[2 * i + 1]);
			if (hi < 0 || lo < 0)
				break;
			key[i] = (uint8_t)(hi << 4 | lo);
		}
		sodium_memzero(buf, sizeof(buf));
		if (i == BCSP_KEY_LEN)
			return 0;
	}
	snprintf(err, errlen,
		 "%s: a key is 32 bytes or 64 hex digits (bcsd --genkey makes one)",
		 path);
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

void bcsp_map_fill_part(const struct bcsp_whole_map *w, uint32_t k,
			struct bcsp_map *part)
{
	part->version = w->version;
	part->nr_jobs = w->nr_jobs;
	part->apply_slice = w->apply_slice;
	part->first = k * BCSP_MAP_PART_JOBS;
	part->nr = bcsp_map_part_len(w->nr_jobs, part->first);
	memcpy(part->jobs, &w->jobs[part->first],
	       part->nr * sizeof(part->jobs[0]));
	memset(&part->jobs[part->nr], 0,
	       (BCSP_MAP_PART_JOBS - part->nr) * sizeof(part->jobs[0]));
}

uint64_t bcsp_map_home_rows(const struct bcsp_whole_map *m)
{
	uint64_t rows = 0;
	uint32_t i;

	for (i = 0; i < m->nr_jobs && i < BCSP_MAP_JOBS_MAX; i++)
		if (m->jobs[i].row < BCS_ROWS_MAX)
			rows |= 1ULL << m->jobs[i].row;
	return rows;
}

uint32_t bcsp_rows_next(uint64_t rows, uint32_t row)
{
	row = bcs_row_next(rows, row);
	/* A strobe names a row: with none to run, row 0 runs no job. */
	return row == BCS_ROW_NONE ? 0 : row;
}

uint32_t bcsp_map_next_row(const struct bcsp_whole_map *m, uint32_t row)
{
	return bcsp_rows_next(bcsp_map_home_rows(m), row);
}

int bcsp_write_key(const char *path, char *err, size_t errlen)
{
	uint8_t key[BCSP_KEY_LEN];
	FILE *f;
	int fd, i;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	randombytes_buf(key, sizeof(key));
	for (i = 0; i < BCSP_KEY_LEN; i++)
		fprintf(f, "%02x", key[i]);
	fputc('\n', f);
	sodium_memzero(key, sizeof(key));
	if (fclose(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

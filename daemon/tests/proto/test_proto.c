// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the wire protocol: round trips of every message
 * type, rejection of forged, truncated, altered and wrong-version
 * datagrams, the replay window, key files, and epochs that cannot wrap.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include <linux/bcs.h>
#include <linux/bcs_hist.h>

#include "proto/codec.h"
#include "proto/proto.h"
#include "tests/unit.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static uint8_t key[BCSP_KEY_LEN], other_key[BCSP_KEY_LEN];

/* Sign datagram @buf of @len bytes again, after a test changed it. */
static void resign(uint8_t *buf, size_t len)
{
	crypto_auth_hmacsha256(buf + len - BCSP_TAG_LEN, buf,
			       len - BCSP_TAG_LEN, key);
}

/* Encode @m, decode it: the verdict. */
static enum bcsp_verdict again(const struct bcsp_msg *m, struct bcsp_msg *out)
{
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	len = bcsp_encode(m, key, buf, sizeof(buf));
	if (len < 0)
		return __BCSP_VERDICT_MAX;
	return bcsp_decode(buf, (size_t)len, 7, key, out);
}

/* Decode what @m encodes to, with byte @off of the body set to @v. */
static enum bcsp_verdict poked(const struct bcsp_msg *m, size_t off,
			       uint8_t v, struct bcsp_msg *out)
{
	uint8_t buf[BCSP_MAX_LEN];
	int len = bcsp_encode(m, key, buf, sizeof(buf));

	if (len < 0)
		return __BCSP_VERDICT_MAX;
	buf[BCSP_HDR_LEN + off] = v;
	resign(buf, (size_t)len);
	return bcsp_decode(buf, (size_t)len, 7, key, out);
}

static struct bcsp_msg strobe_msg(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_STROBE, .cluster = 7,
				       .epoch = 3, .sender = 42,
				       .priority = 100, .seq = 1000 } };

	m.strobe.slice = 123456789;
	m.strobe.deadline_ns = 1700000000123456789ULL;
	m.strobe.slice_ns = 1000000;
	m.strobe.row = 5;
	m.strobe.map_version = 9;
	m.strobe.nr_rows = 6;
	return m;
}

static void test_roundtrip(void)
{
	struct bcsp_msg m = strobe_msg(), out;
	uint8_t buf[BCSP_MAX_LEN];
	int len, i;

	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.hdr.type == BCSP_STROBE && out.hdr.epoch == 3 &&
	      out.hdr.sender == 42 && out.hdr.priority == 100 &&
	      out.hdr.seq == 1000);
	CHECK(out.strobe.slice == m.strobe.slice &&
	      out.strobe.deadline_ns == m.strobe.deadline_ns &&
	      out.strobe.slice_ns == m.strobe.slice_ns &&
	      out.strobe.row == 5 && out.strobe.map_version == 9 &&
	      out.strobe.nr_rows == 6);

	/*
	 * A whole map of BCSP_MAP_JOBS_MAX jobs, in 100 parts: 99 of 41 and
	 * one of 37.  Each part holds its own jobs from jobs[0], @first
	 * says where they go; decoded and put back they are the map.
	 */
	{
		static struct bcsp_whole_map w, back;
		uint32_t k, parts;

		memset(&w, 0, sizeof(w));
		w.version = 4;
		w.nr_jobs = BCSP_MAP_JOBS_MAX;
		w.apply_slice = 0x123456789aULL;
		for (i = 0; i < BCSP_MAP_JOBS_MAX; i++) {
			w.jobs[i].job = (uint32_t)i + 1;
			w.jobs[i].row = (uint32_t)i % 3;
			w.jobs[i].rows = 1ULL << w.jobs[i].row | 1ULL << 40;
			w.jobs[i].nodes = 3;
			w.jobs[i].tasks = (uint32_t)i * 2;
			w.jobs[i].birth = 0x80000001u + (uint32_t)i;
			w.jobs[i].owner = i % 5 ? 60000 + (uint32_t)i :
				i % 10 ? BCSP_OWNER_NONE : 0;
		}
		parts = bcsp_map_parts(w.nr_jobs);
		CHECK(parts == 100 && bcsp_map_parts(0) == 1 &&
		      bcsp_map_parts(41) == 1 && bcsp_map_parts(42) == 2 &&
		      bcsp_map_parts(64) == 2);
		CHECK(bcsp_map_part_len(w.nr_jobs, 99 * 41) == 37 &&
		      bcsp_map_part_len(w.nr_jobs, 98 * 41) == 41);
		memset(&back, 0, sizeof(back));
		for (k = 0; k < parts; k++) {
			memset(&m, 0, sizeof(m));
			m.hdr.type = BCSP_MAP;
			m.hdr.cluster = 7;
			bcsp_map_fill_part(&w, k, &m.map);
			len = bcsp_encode(&m, key, buf, sizeof(buf));
			CHECK(len == BCSP_HDR_LEN + 24 +
			      32 * (k < 99 ? 41 : 37) + BCSP_TAG_LEN);
			CHECK(len <= BCSP_MAX_LEN);
			CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) ==
			      BCSP_OK);
			CHECK(out.map.nr_jobs == BCSP_MAP_JOBS_MAX &&
			      out.map.first == k * 41 &&
			      out.map.nr == (k < 99 ? 41 : 37) &&
			      out.map.version == 4 &&
			      out.map.apply_slice == 0x123456789aULL);
			memcpy(&back.jobs[out.map.first], out.map.jobs,
			       out.map.nr * sizeof(out.map.jobs[0]));
		}
		CHECK(!memcmp(back.jobs, w.jobs, sizeof(w.jobs)));
		CHECK(back.jobs[4095].job == 4096 &&
		      back.jobs[4095].tasks == 8190 &&
		      back.jobs[45].rows == (1ULL << 0 | 1ULL << 40));
		/* Owners round-trip: uids, root, not known. */
		CHECK(back.jobs[4094].owner == 60000 + 4094 &&
		      back.jobs[10].owner == 0 &&
		      back.jobs[5].owner == BCSP_OWNER_NONE);
		/* The last part: 37 jobs, zeros after them. */
		CHECK(m.map.nr == 37 && m.map.jobs[37].job == 0);
		/* A full part fills a datagram exactly, no more. */
		CHECK(BCSP_HDR_LEN + 24 + 32 * BCSP_MAP_PART_JOBS +
		      BCSP_TAG_LEN <= BCSP_MAX_LEN &&
		      BCSP_HDR_LEN + 24 + 32 * (BCSP_MAP_PART_JOBS + 1) +
		      BCSP_TAG_LEN > BCSP_MAX_LEN);
		/* No 101st part, nor one that starts between two. */
		m.map.first = 100 * BCSP_MAP_PART_JOBS;
		CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
		m.map.first = 1;
		CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
		/* A map of 64 jobs (today's old limit) has two parts. */
		w.nr_jobs = 64;
		memset(&m, 0, sizeof(m));
		m.hdr.type = BCSP_MAP;
		m.hdr.cluster = 7;
		bcsp_map_fill_part(&w, 1, &m.map);
		len = bcsp_encode(&m, key, buf, sizeof(buf));
		CHECK(len == BCSP_HDR_LEN + 24 + 32 * 23 + BCSP_TAG_LEN);
		CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
		CHECK(out.map.nr_jobs == 64 && out.map.first == 41 &&
		      out.map.nr == 23 && out.map.jobs[22].job == 64 &&
		      out.map.jobs[22].tasks == 126 &&
		      out.map.jobs[22].birth == 0x80000001u + 63 &&
		      out.map.jobs[22].owner == 60000 + 63 &&
		      out.map.jobs[23].job == 0);
		m.map.first = 2 * BCSP_MAP_PART_JOBS;
		CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	}
	/* The second part, said to be the first: its length is wrong. */
	m.map.first = BCSP_MAP_PART_JOBS;
	CHECK(poked(&m, 19, 0, &out) == BCSP_BAD_BODY);
	/* The reserved word. */
	CHECK(poked(&m, 23, 1, &out) == BCSP_BAD_BODY);
	m.map.first = 0;
	m.map.nr = 0;
	/* Ids and rows by bcs.ko's rules: no job 0, no row 64. */
	m.map.nr_jobs = 2;
	m.map.jobs[1].row = BCS_ROW_NONE;
	m.map.jobs[1].rows = 0;
	CHECK(again(&m, &out) == BCSP_OK);
	/* No row, no set; a set holds its home row. */
	m.map.jobs[1].rows = 1;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.map.jobs[1].row = 1;
	m.map.jobs[1].rows = 1;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.map.jobs[1].rows = 3;
	CHECK(again(&m, &out) == BCSP_OK);
	m.map.jobs[1].row = BCS_ROWS_MAX;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.map.jobs[1].row = 0;
	m.map.jobs[1].rows = 1;
	m.map.jobs[1].job = 0;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.map.jobs[1].job = BCS_JOB_ID_MAX + 1;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	/* A map of no job: one part of none. */
	m.map.nr_jobs = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.map.nr == 0);
	m.map.nr_jobs = BCSP_MAP_JOBS_MAX + 1;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	m.map.nr_jobs = BCSP_MAP_JOBS_MAX;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + 32 * 41 + BCSP_TAG_LEN);
	/* Decoding refuses what encoding would: nr_jobs 4097. */
	buf[BCSP_HDR_LEN + 4] = (BCSP_MAP_JOBS_MAX + 1) >> 24;
	buf[BCSP_HDR_LEN + 5] = (uint8_t)((BCSP_MAP_JOBS_MAX + 1) >> 16);
	buf[BCSP_HDR_LEN + 6] = (uint8_t)((BCSP_MAP_JOBS_MAX + 1) >> 8);
	buf[BCSP_HDR_LEN + 7] = (uint8_t)(BCSP_MAP_JOBS_MAX + 1);
	crypto_auth_hmacsha256(buf + len - BCSP_TAG_LEN, buf,
			       (size_t)len - BCSP_TAG_LEN, key);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REPLY;
	m.hdr.cluster = 7;
	m.req.id = 77;
	m.req.op = BCSP_OP_CREATE;
	m.req.job = 12;
	m.req.row = 2;
	m.req.error = -17;
	m.req.node = 31;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.req.id == 77 && out.req.error == -17 && out.req.job == 12 &&
	      out.req.node == 31);
	/* A create with the nodes the job will run on: 16 + 4 per node. */
	m.req.nodes.nr = BCSP_CREATE_NODES_MAX;
	for (i = 0; i < BCSP_CREATE_NODES_MAX; i++)
		m.req.nodes.id[i] = 1000 + (uint32_t)i;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + 4 * BCSP_CREATE_NODES_MAX +
		     BCSP_TAG_LEN && len <= BCSP_MAX_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.req.nodes.nr == BCSP_CREATE_NODES_MAX &&
	      out.req.nodes.id[0] == 1000 &&
	      out.req.nodes.id[BCSP_CREATE_NODES_MAX - 1] ==
	      1000 + BCSP_CREATE_NODES_MAX - 1);
	m.req.nodes.nr = BCSP_CREATE_NODES_MAX + 1;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	/* Node 0, a count that disagrees with the length, a reserved word. */
	m.req.nodes.nr = 2;
	m.req.nodes.id[1] = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.req.nodes.id[1] = 5;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.nodes.nr == 2 && out.req.nodes.id[1] == 5);
	CHECK(poked(&m, 27, 3, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 35, 1, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 39, 1, &out) == BCSP_BAD_BODY);
	/* The owner rides with the nodes; root's is 0, the word after nr. */
	CHECK(out.req.nodes.owner == 0);
	m.req.nodes.owner = 65534;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + 8 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.nodes.owner == 65534 && out.req.nodes.nr == 2);
	/* An owner and no nodes: 16 bytes more, nr 0. */
	m.req.nodes.nr = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	memset(&out, 0, sizeof(out));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.nodes.owner == 65534 && out.req.nodes.nr == 0 &&
	      out.req.job == 12);
	/* No uid is (uid_t)-1: neither sent nor taken. */
	CHECK(poked(&m, 28, 0xff, &out) == BCSP_OK &&
	      out.req.nodes.owner == (0xffu << 24 | 65534));
	for (i = 28; i < 32; i++)
		buf[BCSP_HDR_LEN + i] = 0xff;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* Neither a node nor an owner: the short form only. */
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	for (i = 28; i < 32; i++)
		buf[BCSP_HDR_LEN + i] = 0;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.req.nodes.owner = BCSP_OWNER_NONE;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	m.req.nodes.owner = 0;
	/* Another operation carries no node list. */
	m.req.op = BCSP_OP_DESTROY;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + BCSP_TAG_LEN);
	m.req.op = BCSP_OP_CREATE;
	m.req.nodes.nr = 0;

	/* A request names its sender as the requesting node, or is bad. */
	m.hdr.type = BCSP_REQUEST;
	m.hdr.sender = 31;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.req.node == 31 && out.hdr.sender == 31);
	m.hdr.sender = 32;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);

	/* Statistics and window requests carry 16 bytes more, only they. */
	m.hdr.type = BCSP_REQUEST;
	m.hdr.sender = 31;
	m.req.op = BCSP_OP_STATS;
	m.req.stats.op = BCS_DIST_DISABLE;
	m.req.stats.metrics = 5;
	m.req.stats.sub_bits = 3;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.req.op == BCSP_OP_STATS &&
	      out.req.stats.op == BCS_DIST_DISABLE &&
	      out.req.stats.metrics == 5 && out.req.stats.sub_bits == 3);
	m.req.op = BCSP_OP_WINDOW;
	m.req.window.from = 0x1122334455667788ULL;
	m.req.window.to = UINT64_MAX;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.req.window.from == 0x1122334455667788ULL &&
	      out.req.window.to == UINT64_MAX);
	/* The same 40 bytes with another operation are a bad body. */
	buf[BCSP_HDR_LEN + 7] = BCSP_OP_CREATE;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* And a statistics request of 24 bytes. */
	m.req.op = BCSP_OP_WINDOW_CLEAR;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + BCSP_TAG_LEN);
	buf[BCSP_HDR_LEN + 7] = BCSP_OP_STATS;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_CONTEXT;
	m.hdr.cluster = 7;
	m.ctx.version = 9;
	m.ctx.nr_jobs = 2;
	m.ctx.apply_slice = 1000;
	m.ctx.window_from = 2000;
	m.ctx.window_to = 2200;
	m.ctx.flags = BCSP_WINDOW_ARMED;
	m.ctx.jobs[0].job = 4;
	m.ctx.jobs[1].job = 6;
	m.ctx.jobs[1].metrics = BCS_DIST_ALL;
	m.ctx.jobs[1].sub_bits = 7;
	m.ctx.jobs[1].release = 65535;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + 8 * 2 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.ctx.version == 9 && out.ctx.apply_slice == 1000 &&
	      out.ctx.window_from == 2000 && out.ctx.window_to == 2200 &&
	      out.ctx.flags == BCSP_WINDOW_ARMED && out.ctx.nr_jobs == 2 &&
	      out.ctx.jobs[1].job == 6 && out.ctx.jobs[1].release == 65535 &&
	      out.ctx.jobs[1].metrics == BCS_DIST_ALL &&
	      out.ctx.jobs[1].sub_bits == 7);
	/* A window that ends before it starts, a bad metric, resolution. */
	m.ctx.window_to = 1999;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.ctx.window_to = 2200;
	m.ctx.jobs[1].metrics = 0x10;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.ctx.jobs[1].metrics = 1;
	m.ctx.jobs[1].sub_bits = BCS_HIST_SUB_BITS_MAX + 1;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.ctx.jobs[1].sub_bits = 0;
	m.ctx.jobs[0].job = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.ctx.jobs[0].job = 4;
	m.ctx.flags = 2;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.ctx.flags = 0;
	m.ctx.nr_jobs = BCSP_MAX_JOBS;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + 8 * BCSP_MAX_JOBS + BCSP_TAG_LEN);
	m.ctx.nr_jobs = BCSP_MAX_JOBS + 1;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REPORT;
	m.hdr.cluster = 7;
	m.report.nr_jobs = 2;
	m.report.jobs[1].job = 5;
	m.report.jobs[1].tasks = 3;
	m.report.jobs[1].birth = 0xfeedbeefu;
	m.report.jobs[1].cpus = 0x8000000000000005ULL;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 4 + 20 * 2 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.report.nr_jobs == 2 && out.report.jobs[1].tasks == 3 &&
	      out.report.jobs[1].birth == 0xfeedbeefu &&
	      out.report.jobs[1].cpus == 0x8000000000000005ULL &&
	      out.report.jobs[0].cpus == 0 &&
	      out.report.jobs[0].birth == 0);
	/* A node's every job fits one datagram. */
	m.report.nr_jobs = BCSP_MAX_JOBS;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 4 + 20 * BCSP_MAX_JOBS + BCSP_TAG_LEN &&
	      len <= BCSP_MAX_LEN);

	m.hdr.type = 99;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	CHECK(bcsp_encode(&m, key, buf, 10) < 0);
}

static void test_rejects(void)
{
	struct bcsp_msg m = strobe_msg(), out;
	uint8_t buf[BCSP_MAX_LEN], copy[BCSP_MAX_LEN];
	size_t len, i;
	unsigned int bad = 0;

	len = (size_t)bcsp_encode(&m, key, buf, sizeof(buf));
	/* Wrong key: forged. */
	CHECK(bcsp_decode(buf, len, 7, other_key, &out) == BCSP_BAD_MAC);
	/* Other cluster, right key. */
	CHECK(bcsp_decode(buf, len, 8, key, &out) == BCSP_OTHER_CLUSTER);
	/* Every truncation. */
	for (i = 0; i < len; i++)
		bad += bcsp_decode(buf, i, 7, key, &out) == BCSP_SHORT;
	CHECK(bad == len);
	/* Every single-bit change anywhere is caught. */
	bad = 0;
	for (i = 0; i < len * 8; i++) {
		memcpy(copy, buf, len);
		copy[i / 8] ^= (uint8_t)(1u << (i % 8));
		bad += bcsp_decode(copy, len, 7, key, &out) != BCSP_OK;
	}
	CHECK(bad == len * 8);
	/* Wrong magic and version are reported as such. */
	memcpy(copy, buf, len);
	copy[0] ^= 0xff;
	CHECK(bcsp_decode(copy, len, 7, key, &out) == BCSP_BAD_MAGIC);
	memcpy(copy, buf, len);
	copy[4] = BCSP_VERSION_MIN - 1;	/* version 2: maps and creates without owners */
	CHECK(bcsp_decode(copy, len, 7, key, &out) == BCSP_BAD_VERSION);
	/* Extra bytes appended. */
	memcpy(copy, buf, len);
	copy[len] = 0;
	CHECK(bcsp_decode(copy, len + 1, 7, key, &out) == BCSP_SHORT);
	/* Random garbage never decodes. */
	bad = 0;
	for (i = 0; i < 10000; i++) {
		size_t n = 1 + randombytes_uniform(BCSP_MAX_LEN);

		randombytes_buf(copy, n);
		bad += bcsp_decode(copy, n, 7, key, &out) != BCSP_OK;
	}
	CHECK(bad == 10000);
}

/*
 * Whatever comes, with jumps, no sequence number is accepted twice, and
 * within 64 below the top or the window before a jump every one is
 * accepted once.
 */
static void test_window_random(void)
{
	static uint8_t seen[1 << 16];
	struct bcsp_window w = { 0 };
	uint64_t st = 0x9e3779b97f4a7c15ULL, top = 1000, seq, x;
	unsigned int i, twice = 0;

	for (i = 0; i < 200000; i++) {
		x = unit_rng(&st);
		if (x % 97 == 0 && top < (1 << 16) - 300)
			top += 64 + x % 200;	/* a jump */
		else if (x % 3 == 0 && top < (1 << 16) - 2)
			top++;
		seq = top - (x >> 20) % 200;
		if (bcsp_window_check(&w, 1, seq) == BCSP_OK)
			twice += seen[seq]++ > 0;
	}
	CHECK(!twice);
}

static void test_window(void)
{
	struct bcsp_window w = { 0 };
	unsigned int ok = 0, i;

	CHECK(bcsp_window_check(&w, 1, 100) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 100) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 99) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 99) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 101) == BCSP_OK);
	/* A jump of 64 or more keeps the window before it (and 64 above). */
	CHECK(bcsp_window_check(&w, 1, 200) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 137) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 137) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 136) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 136) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 120) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 120) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 100) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 98) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 98) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 37) == BCSP_REPLAY);
	/* A second jump: the window before it is 200's, no longer 101's. */
	CHECK(bcsp_window_check(&w, 1, 1000) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 98) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 136) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 199) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 1, 199) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 200) == BCSP_REPLAY);
	/* An older epoch is stale; a newer one restarts the window. */
	CHECK(bcsp_window_check(&w, 0, 1000) == BCSP_STALE);
	CHECK(bcsp_window_check(&w, 2, 5) == BCSP_OK);
	CHECK(bcsp_window_check(&w, 2, 5) == BCSP_REPLAY);
	CHECK(bcsp_window_check(&w, 1, 500) == BCSP_STALE);
	/* Out-of-order arrival within the window is accepted once each. */
	for (i = 0; i < 64; i++)
		ok += bcsp_window_check(&w, 2, 1000 - i) == BCSP_OK;
	CHECK(ok == 64);
	ok = 0;
	for (i = 0; i < 64; i++)
		ok += bcsp_window_check(&w, 2, 1000 - i) == BCSP_OK;
	CHECK(ok == 0);
}

/*
 * Sequence numbers that follow the sender's clock, and a receiver that
 * lost its window (restarted): a captured datagram replayed to it is
 * refused, a sender of lately is heard.
 */
static void test_seq_replay_after_restart(void)
{
	const uint64_t t0 = 1700000000000000000ULL, s = 1000000000ULL;
	const uint64_t allow = 10 * s;
	struct bcsp_window w = { 0 };
	uint64_t next = t0, a, b, c, captured, fresh, i;

	/* The sender counts up by one, strictly, near its clock. */
	a = bcsp_seq_next(&next, t0);
	b = bcsp_seq_next(&next, t0 + 1000);
	CHECK(a == t0 && b == t0 + 1);
	/* An hour later its numbers are within the lag of its clock. */
	c = bcsp_seq_next(&next, t0 + 3600 * s);
	CHECK(c > b && c + BCSP_SEQ_LAG_NS >= t0 + 3600 * s);
	/* Many datagrams a second do not hold it back either. */
	for (i = 0; i < 100000; i++)
		a = bcsp_seq_next(&next, t0 + 3600 * s + i * 1000);
	CHECK(a > c && a + BCSP_SEQ_LAG_NS >= t0 + 3600 * s + i * 1000);
	/* A clock stepped back: still strictly increasing. */
	b = bcsp_seq_next(&next, t0);
	CHECK(b == a + 1);

	/* A job-destroy captured at t0, the receiver restarted a minute on. */
	next = t0 - 3 * 24 * 3600 * s;		/* a sender started days ago */
	captured = bcsp_seq_next(&next, t0);
	CHECK(bcsp_seq_check(&w, 7, captured, t0 + 60 * s - allow) ==
	      BCSP_STALE);
	CHECK(!w.used);
	/* The live sender's next datagram is heard, and only once. */
	fresh = bcsp_seq_next(&next, t0 + 60 * s);
	CHECK(bcsp_seq_check(&w, 7, fresh, t0 + 60 * s - allow) == BCSP_OK);
	CHECK(bcsp_seq_check(&w, 7, fresh, t0 + 60 * s - allow) ==
	      BCSP_REPLAY);
	/* The captured one, again, now that a window holds the sender. */
	CHECK(bcsp_seq_check(&w, 7, captured, t0 + 60 * s - allow) ==
	      BCSP_REPLAY);
	/* A datagram of a newer epoch captured long ago starts no window. */
	CHECK(bcsp_seq_check(&w, 8, captured, t0 + 60 * s - allow) ==
	      BCSP_STALE);
	CHECK(w.epoch == 7);
	/* Within the window, numbers older than the floor still count. */
	CHECK(bcsp_seq_check(&w, 7, fresh - 1, UINT64_MAX) == BCSP_OK);
	/* A sender with a clock behind ours by less than the allowance. */
	memset(&w, 0, sizeof(w));
	next = t0;
	a = bcsp_seq_next(&next, t0 + 60 * s - allow + BCSP_SEQ_LAG_NS);
	CHECK(bcsp_seq_check(&w, 1, a, t0 + 60 * s - allow) == BCSP_OK);
}

static void test_strobe_verdict(void)
{
	const uint64_t now = 1700000000000000000ULL, slice = 1000000;
	struct bcsp_strobe s = { .slice_ns = slice, .row = 3 };

	/* Due now, a slice ago, or up to 7 slices ahead: a lead < 4 slices. */
	s.deadline_ns = now;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_OK);
	s.deadline_ns = now + BCSP_AHEAD_SLICES * slice;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_OK);
	s.deadline_ns = now + 5 * slice / 2;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_OK);
	s.deadline_ns = now - 4 * slice;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_OK);
	/* Further ahead or older: stale. */
	s.deadline_ns = now + BCSP_AHEAD_SLICES * slice + 1;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_STALE);
	s.deadline_ns = now - 4 * slice - 1;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_STALE);
	CHECK(bcsp_strobe_verdict(&s, now, 5) == BCSP_OK);
	/* What bcs.ko would refuse. */
	s.deadline_ns = now;
	s.row = BCS_ROWS_MAX;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_BAD_BODY);
	s.row = 0;
	s.slice_ns = BCS_SLICE_NS_MIN - 1;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_BAD_BODY);
	s.slice_ns = BCS_SLICE_NS_MAX + 1;
	CHECK(bcsp_strobe_verdict(&s, now, 4) == BCSP_BAD_BODY);
}

/*
 * Deadlines and clocks anywhere in 64 bits: deadline + slices used to
 * wrap and call a due strobe stale (fuzz_body, corpus/body/regress-*).
 */
static void test_strobe_verdict_wrap(void)
{
	const uint64_t slice = 10000000, top = UINT64_MAX - 1000;
	struct bcsp_strobe s = { .slice_ns = slice, .row = 2 };

	s.deadline_ns = top;
	CHECK(bcsp_strobe_verdict(&s, top, 4) == BCSP_OK);
	CHECK(bcsp_strobe_verdict(&s, top, 100000) == BCSP_OK);
	CHECK(bcsp_strobe_verdict(&s, UINT64_MAX, 1) == BCSP_OK);
	CHECK(bcsp_strobe_verdict(&s, top - slice, 4) == BCSP_OK);
	CHECK(bcsp_strobe_verdict(&s, 1700000000000000000ULL, 4) ==
	      BCSP_STALE);
	/* A window of slices longer than 64 bits of nanoseconds. */
	s.deadline_ns = 0;
	CHECK(bcsp_strobe_verdict(&s, UINT64_MAX, UINT64_MAX) == BCSP_OK);
	CHECK(bcsp_strobe_verdict(&s, UINT64_MAX, 4) == BCSP_STALE);
	/* A clock near the top: now + 7 slices must not wrap either. */
	s.deadline_ns = UINT64_MAX;
	CHECK(bcsp_strobe_verdict(&s, UINT64_MAX - slice, 4) == BCSP_OK);
	CHECK(bcsp_strobe_verdict(&s, 0, 4) == BCSP_STALE);
}

static void test_key_file(void)
{
	char dir[] = "/tmp/bcsd-test-XXXXXX", path[64], err[256];
	uint8_t k[BCSP_KEY_LEN];
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/key", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(write(fd, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
		    65) == 65);
	close(fd);
	CHECK(bcsp_load_key(path, k, err, sizeof(err)) == 0);
	CHECK(k[0] == 0x00 && k[1] == 0x11 && k[15] == 0xff && k[31] == 0xff);
	chmod(path, 0644);
	CHECK(bcsp_load_key(path, k, err, sizeof(err)) < 0);
	CHECK(strstr(err, "chmod 600") != NULL);
	chmod(path, 0600);
	/* Another user's key is refused (as root: give it away). */
	if (geteuid() == 0 && !chown(path, 65534, 65534)) {
		CHECK(bcsp_load_key(path, k, err, sizeof(err)) < 0);
		CHECK(strstr(err, "owned by uid 65534") != NULL);
		CHECK(chown(path, 0, 0) == 0);
	}
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "short", 5) == 5);
	close(fd);
	CHECK(bcsp_load_key(path, k, err, sizeof(err)) < 0);
	unlink(path);
	CHECK(bcsp_load_key(path, k, err, sizeof(err)) < 0);
	rmdir(dir);
}

static void test_next_row(void)
{
	static struct bcsp_whole_map m = { .nr_jobs = 4 };

	m.jobs[0].row = 3;
	m.jobs[1].row = 0;
	m.jobs[2].row = BCS_ROW_NONE;
	m.jobs[3].row = 3;
	CHECK(bcsp_map_next_row(&m, BCS_ROW_NONE) == 0);
	CHECK(bcsp_map_next_row(&m, 0) == 3);
	CHECK(bcsp_map_next_row(&m, 1) == 3);
	CHECK(bcsp_map_next_row(&m, 3) == 0);
	m.nr_jobs = 0;
	CHECK(bcsp_map_next_row(&m, 5) == 0);
}

/*
 * A strobe with a plan: 56 bytes, every field back; plans out of range,
 * or whose next one is not within them, are bad bodies; without a plan
 * the strobe is 40 bytes as before.
 */
static void test_strobe_plan(void)
{
	struct bcsp_msg m = strobe_msg(), out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.strobe.plan_slices = 20;
	m.strobe.plan_next = 10;
	m.strobe.plan_rows = 0x8000000000000009ULL;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 56 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.strobe.slice == m.strobe.slice && out.strobe.row == 5 &&
	      out.strobe.plan_slices == 20 && out.strobe.plan_next == 10 &&
	      out.strobe.plan_rows == 0x8000000000000009ULL);
	CHECK(bcsp_plan_len(&out.strobe) == 20 &&
	      bcsp_plan_next(&out.strobe) == 10);
	m.strobe.plan_slices = BCS_PLAN_SLICES_MAX;
	m.strobe.plan_next = BCS_PLAN_SLICES_MAX;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	/* Out of range: the plan's slices, its next. */
	m.strobe.plan_slices = BCS_PLAN_SLICES_MAX + 1;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.strobe.plan_slices = 4;
	m.strobe.plan_next = 5;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.strobe.plan_next = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* No plan: 40 bytes, and a strobe of one slice. */
	m.strobe.plan_slices = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(!out.strobe.plan_slices && !out.strobe.plan_rows &&
	      bcsp_plan_len(&out.strobe) == 1 &&
	      bcsp_plan_next(&out.strobe) == 1);
}

/*
 * Versions (proto.h, BCSP_VERSION): a daemon reads 3 and 4 and says which
 * in the header, writes either, and refuses 2 and 5, before the tag; a
 * strobe with a plan is read in both (version 3's daemons since plans
 * send it).
 */
static void test_versions(void)
{
	struct bcsp_msg m = strobe_msg(), out;
	uint8_t buf[BCSP_MAX_LEN], v3[BCSP_MAX_LEN];
	int len, len3;

	CHECK(BCSP_VERSION == 4 && BCSP_VERSION_MIN == 3);
	/* 0: the current version. */
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len > 0 && buf[4] == BCSP_VERSION);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.hdr.version == BCSP_VERSION);
	m.hdr.version = 3;
	len3 = bcsp_encode(&m, key, v3, sizeof(v3));
	CHECK(len3 == len && v3[4] == 3);
	/* Apart from the version byte (and so the tag), the same bytes. */
	CHECK(!memcmp(v3 + 5, buf + 5, (size_t)len - 5 - BCSP_TAG_LEN));
	CHECK(bcsp_decode(v3, (size_t)len3, 7, key, &out) == BCSP_OK &&
	      out.hdr.version == 3 && out.strobe.slice == m.strobe.slice &&
	      out.strobe.row == 5 && !out.strobe.plan_slices);
	/* A version 3 datagram of a daemon of version 3, byte for byte. */
	memcpy(buf, v3, (size_t)len3);
	buf[4] = 3;
	resign(buf, (size_t)len3);
	CHECK(bcsp_decode(buf, (size_t)len3, 7, key, &out) == BCSP_OK &&
	      out.hdr.version == 3);
	/* Neither 2 nor 5, signed or not, and none written. */
	buf[4] = 2;
	CHECK(bcsp_decode(buf, (size_t)len3, 7, key, &out) == BCSP_BAD_VERSION);
	resign(buf, (size_t)len3);
	CHECK(bcsp_decode(buf, (size_t)len3, 7, key, &out) == BCSP_BAD_VERSION);
	buf[4] = BCSP_VERSION + 1;
	resign(buf, (size_t)len3);
	CHECK(bcsp_decode(buf, (size_t)len3, 7, key, &out) == BCSP_BAD_VERSION);
	buf[4] = 0;
	resign(buf, (size_t)len3);
	CHECK(bcsp_decode(buf, (size_t)len3, 7, key, &out) == BCSP_BAD_VERSION);
	m.hdr.version = 2;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) == -1);
	m.hdr.version = BCSP_VERSION + 1;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) == -1);
	/* A plan in version 3: read as in 4. */
	m.hdr.version = 3;
	m.strobe.plan_slices = 20;
	m.strobe.plan_next = 10;
	m.strobe.plan_rows = 0x3;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 56 + BCSP_TAG_LEN && buf[4] == 3);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.hdr.version == 3 && out.strobe.plan_slices == 20);
	/* Every type in either version. */
	m = strobe_msg();
	m.hdr.type = BCSP_ACK;
	m.ack.master = 1;
	m.ack.id = 2;
	for (m.hdr.version = BCSP_VERSION_MIN; m.hdr.version <= BCSP_VERSION;
	     m.hdr.version++)
		CHECK(again(&m, &out) == BCSP_OK &&
		      out.hdr.version == m.hdr.version && out.ack.id == 2);
}

/* The row of slice i of a plan, against stepping one at a time. */
static void test_plan_row(void)
{
	static const uint64_t sets[] = { 0, 1, 0x9, 0x8000000000000001ULL,
					 0xf0f0, ~0ULL, 0x10 };
	uint32_t row, start;
	uint64_t i;
	size_t k;

	CHECK(bcsp_plan_row(0, 7, 1000) == 7);
	CHECK(bcsp_plan_row(0x9, 7, 0) == 7);
	CHECK(bcsp_plan_row(0x9, 0, 1) == 3);
	CHECK(bcsp_plan_row(0x9, 0, 2) == 0);
	CHECK(bcsp_plan_row(0x9, 5, 1) == 0);
	CHECK(bcsp_plan_row(0x9, 5, 2) == 3);
	for (k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		for (start = 0; start < BCS_ROWS_MAX; start += 7) {
			row = start;
			for (i = 0; i < 300; i++) {
				CHECK(bcsp_plan_row(sets[k], start, i) == row);
				if (sets[k])
					row = bcsp_rows_next(sets[k], row);
			}
			CHECK(bcsp_plan_row(sets[k], start,
					    BCS_PLAN_SLICES_MAX - 1) ==
			      bcsp_plan_row(sets[k], start,
					    BCS_PLAN_SLICES_MAX - 1 -
					    (uint64_t)(sets[k] ? __builtin_popcountll(sets[k]) : 1)));
		}
	}
}

/*
 * The master's plans: twice the step, cut at a map change within them;
 * sent one after the other from slice 100 with a change at 117, every
 * slice is planned by two plans (the overlap) but the first and the cut's
 * (after which the next plan comes a slice later), and no plan crosses
 * 117.
 */
static void test_plan_make(void)
{
	uint64_t start, end = 0, covered[200] = { 0 };
	uint32_t next, len, i;

	CHECK(bcsp_plan_make(100, 10, 0, 110, &next) == 20 && next == 10);
	CHECK(bcsp_plan_make(100, 10, 100, 110, &next) == 20 && next == 10);
	CHECK(bcsp_plan_make(100, 10, 50, 110, &next) == 20 && next == 10);
	CHECK(bcsp_plan_make(100, 10, 120, 110, &next) == 20 && next == 10);
	CHECK(bcsp_plan_make(100, 10, 119, 110, &next) == 19 && next == 10);
	CHECK(bcsp_plan_make(100, 10, 110, 110, &next) == 10 && next == 10);
	CHECK(bcsp_plan_make(100, 10, 107, 110, &next) == 7 && next == 7);
	CHECK(bcsp_plan_make(100, 10, 101, 110, &next) == 1 && next == 1);
	CHECK(bcsp_plan_make(100, BCS_PLAN_SLICES_MAX, 0, 110, &next) ==
	      BCS_PLAN_SLICES_MAX && next == BCS_PLAN_SLICES_MAX / 2);
	CHECK(bcsp_plan_make(100, 0, 0, 110, &next) == 2 && next == 1);
	/* Nothing planned from 100 on: the next a slice later. */
	CHECK(bcsp_plan_make(100, 10, 0, 100, &next) == 20 && next == 1);
	CHECK(bcsp_plan_make(100, 10, 0, 0, &next) == 20 && next == 1);
	for (start = 100; start < 180; start += next) {
		len = bcsp_plan_make(start, 10, 117, end, &next);
		CHECK(start >= 117 || start + len <= 117);
		for (i = 0; i < len; i++)
			covered[start + i]++;
		if (start + len > end)
			end = start + len;
	}
	/* Once the first slice and that of the cut; else twice or more. */
	for (i = 100; i < 180; i++)
		CHECK(i == 100 || i == 117 ? covered[i] == 1 : covered[i] >= 2);
}

/* A plan must end by BCS_DEADLINE_NS_MAX, as bcs.ko checks. */
static void test_strobe_verdict_plan(void)
{
	const uint64_t slice = 1000000;
	struct bcsp_strobe s = { .slice_ns = slice, .row = 2,
				 .plan_slices = 10, .plan_next = 5 };

	s.deadline_ns = BCS_DEADLINE_NS_MAX - 9 * slice;
	CHECK(bcsp_strobe_verdict(&s, s.deadline_ns, 4) == BCSP_OK);
	s.deadline_ns++;
	CHECK(bcsp_strobe_verdict(&s, s.deadline_ns, 4) == BCSP_BAD_BODY);
	s.deadline_ns = BCS_DEADLINE_NS_MAX + 1;
	CHECK(bcsp_strobe_verdict(&s, s.deadline_ns, 4) == BCSP_BAD_BODY);
	/* Without a plan, as ever. */
	s.plan_slices = 0;
	CHECK(bcsp_strobe_verdict(&s, s.deadline_ns, 4) == BCSP_OK);
}

/*
 * Epochs do not wrap: a datagram whose epoch is above BCSP_EPOCH_MAX is
 * bad (signed with the cluster key all the same: a key holder's bug), and
 * a master that has seen the last epoch has none to take over with.
 */
static void test_epochs(void)
{
	static const uint32_t bad[] = { BCSP_EPOCH_MAX + 1, 0xfffffffeu,
					0xffffffffu };
	struct bcsp_msg m = strobe_msg(), out;
	uint8_t buf[BCSP_MAX_LEN];
	uint32_t next = 0, be;
	size_t i;
	int len;

	m.hdr.epoch = BCSP_EPOCH_MAX;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len > 0);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.hdr.epoch == BCSP_EPOCH_MAX);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		/* As a sender that does not check would sign it. */
		be = htobe32(bad[i]);
		memcpy(buf + 12, &be, 4);
		crypto_auth_hmacsha256(buf + len - BCSP_TAG_LEN, buf,
				       (size_t)len - BCSP_TAG_LEN, key);
		CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) ==
		      BCSP_BAD_BODY);
		m.hdr.epoch = bad[i];
		CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	}
	CHECK(bcsp_epoch_next(0, &next) && next == 1);
	CHECK(bcsp_epoch_next(41, &next) && next == 42);
	CHECK(bcsp_epoch_next(BCSP_EPOCH_MAX - 1, &next) &&
	      next == BCSP_EPOCH_MAX);
	next = 7;
	CHECK(!bcsp_epoch_next(BCSP_EPOCH_MAX, &next) && next == 7);
	CHECK(!bcsp_epoch_next(0xffffffffu, &next) && next == 7);
}

/*
 * What a forged datagram costs: nothing but the checks of its length,
 * before the tag, and one HMAC; nothing is written before the tag is
 * good.  A length its type cannot have costs no HMAC at all.
 */
static bool can_be(unsigned int type, size_t body)
{
	switch (type) {
	case BCSP_STROBE:
		return body == 40 || body == 56;
	case BCSP_MAP:
		return body >= 24 && (body - 24) % 32 == 0 &&
		       body <= 24 + 32 * BCSP_MAP_PART_JOBS;
	case BCSP_REPORT:
		return body >= 4 && (body - 4) % 20 == 0 &&
		       body <= 4 + 20 * BCSP_MAX_JOBS;
	case BCSP_CONTEXT:
		/* In words: jobs of 8 bytes, then maybe subsets. */
		return body >= 40 && body % 4 == 0 &&
		       body <= 40 + 8 * BCSP_MAX_JOBS + 8 +
			       BCSP_SUBSET_LEN * BCSP_CTX_SUBSETS_MAX;
	case BCSP_SWITCHES:
		return body >= 8 && (body - 8) % 40 == 0 &&
		       body <= 8 + 40 * BCSP_MAX_SWITCHES;
	case BCSP_ATTACH:
		return body == 8;
	case BCSP_TASKS:
		return body >= 8 && (body - 8) % 16 == 0 &&
		       body <= 8 + 16 * BCSP_MAX_JOBS;
	case BCSP_PROBE:
		return body == 16;
	case BCSP_PROBE_REPLY:
		return body == 32;
	case BCSP_OFFSETS:
		return body >= 8 && (body - 8) % 24 == 0 &&
		       body <= 8 + 24 * BCSP_MAX_OFFSETS;
	case BCSP_COMMAND:
		/* 24 for an attach; 24 and an MPI selection, padded. */
		return body == 16 || (body >= 24 && body % 4 == 0 &&
				      body <= 24 + BCSP_MPI_SEL_LEN);
	case BCSP_RESULT:
		return body == 24;
	case BCSP_ACK:
		return body == 8;
	case BCSP_STROBE_NACK:
		return body == 16;
	case BCSP_TG_NACK:
		return body == 40;
	case BCSP_NODE_TASKS:
		return body >= 16 && (body - 16) % 12 == 0 &&
		       body <= 16 + 12 * BCSP_MAX_NODE_TASKS;
	case BCSP_MPI_PART:
	case BCSP_TG_PART:
		return body >= 28 && body % 4 == 0 &&
		       body <= 28 + BCSP_MPI_PART_MAX;
	case BCSP_REQUEST:
	case BCSP_REPLY:
		return body == 24 || (body >= 40 && body % 4 == 0 &&
				      body <= 40 + 4 * BCSP_CREATE_NODES_MAX);
	}
	return false;	/* no such type */
}

static void test_before_tag(void)
{
	struct bcsp_msg m = strobe_msg(), out;
	uint8_t buf[BCSP_MAX_LEN], blank[sizeof(out)];
	unsigned int bad = 0;
	uint16_t be16;
	size_t i;
	int len;

	len = bcsp_encode(&m, key, buf, sizeof(buf));
	memset(&out, 0x5a, sizeof(out));
	memset(blank, 0x5a, sizeof(blank));
	CHECK(bcsp_decode(buf, (size_t)len, 7, other_key, &out) ==
	      BCSP_BAD_MAC);
	CHECK(!memcmp(&out, blank, sizeof(out)));

	/* A strobe 4 bytes longer, signed with the key: truncated. */
	memset(buf + len - BCSP_TAG_LEN, 0, 4);
	len += 4;
	be16 = htobe16((uint16_t)len);
	memcpy(buf + 6, &be16, 2);
	crypto_auth_hmacsha256(buf + len - BCSP_TAG_LEN, buf,
			       (size_t)len - BCSP_TAG_LEN, key);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_SHORT);
	CHECK(!memcmp(&out, blank, sizeof(out)));

	/* Every length of every type: only those it can have get a tag. */
	for (i = BCSP_HDR_LEN + BCSP_TAG_LEN; i <= BCSP_MAX_LEN; i++) {
		unsigned int t;

		for (t = BCSP_STROBE; t <= __BCSP_TYPE_MAX; t++) {
			memset(buf, 0, i);
			memcpy(buf, "BCSP", 4);
			buf[4] = BCSP_VERSION;
			buf[5] = (uint8_t)t;
			be16 = htobe16((uint16_t)i);
			memcpy(buf + 6, &be16, 2);
			/* Past the last: no such type. */
			bad += bcsp_decode(buf, i, 7, key, &out) !=
			       (!bcsp_type_valid(t) ? BCSP_BAD_TYPE :
				can_be(t, i - BCSP_HDR_LEN - BCSP_TAG_LEN) ?
				BCSP_BAD_MAC : BCSP_SHORT);
		}
	}
	CHECK(bad == 0);
}

/* The switch summaries: their wire form, their checks, their sums. */
static void test_switches(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_SWITCHES, .cluster = 7 } };
	struct bcsp_switch_sum a, b;
	uint8_t buf[BCSP_MAX_LEN];
	struct bcsp_msg out;
	uint32_t i;
	int len;

	m.sw.nr = BCSP_MAX_SWITCHES;
	for (i = 0; i < m.sw.nr; i++) {
		m.sw.s[i].slice = 1000 + i;
		m.sw.s[i].end_max_ns = -5000 + (int64_t)i * 1000000000;
		m.sw.s[i].end_min_ns = -5000 - (int64_t)i;
		m.sw.s[i].nodes = (uint16_t)(1 + i);
		m.sw.s[i].late = (uint16_t)i;
		m.sw.s[i].predicted = 1;
		/* Every node but one ran row i, one no row at all. */
		m.sw.s[i].rows[0].row = (uint16_t)(i % BCS_ROWS_MAX);
		m.sw.s[i].rows[0].nodes = (uint16_t)i;
		if (i) {
			m.sw.s[i].rows[1].row = BCSP_ROW_CLASS_NONE;
			m.sw.s[i].rows[1].nodes = 1;
		} else {
			m.sw.s[i].other = 1;
		}
	}
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 8 + 40 * BCSP_MAX_SWITCHES + BCSP_TAG_LEN);
	CHECK(len <= BCSP_MAX_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.sw.nr == BCSP_MAX_SWITCHES);
	CHECK(!memcmp(out.sw.s, m.sw.s, sizeof(m.sw.s)));
	/* One more does not fit. */
	m.sw.nr = BCSP_MAX_SWITCHES + 1;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	/* No nodes, more late or predicted than nodes, min above max. */
	m.sw.nr = 1;
	m.sw.s[0].nodes = 0;
	m.sw.s[0].late = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.sw.s[0].nodes = 2;
	m.sw.s[0].late = 3;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.sw.s[0].late = 0;
	m.sw.s[0].predicted = 3;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.sw.s[0].predicted = 0;
	m.sw.s[0].end_min_ns = m.sw.s[0].end_max_ns + 1;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.sw.s[0].end_min_ns = m.sw.s[0].end_max_ns;
	/* 2 nodes: the classes and other must count them. */
	m.sw.s[0].rows[0] = (struct bcsp_row_class){ .row = 3, .nodes = 1 };
	m.sw.s[0].other = 1;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	m.sw.s[0].other = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* The same row twice; a row out of range; an unused class's row. */
	m.sw.s[0].rows[1] = (struct bcsp_row_class){ .row = 3, .nodes = 1 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.sw.s[0].rows[1].row = BCS_ROWS_MAX;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.sw.s[0].rows[1].row = BCSP_ROW_CLASS_NONE;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	m.sw.s[0].rows[1] = (struct bcsp_row_class){ .row = 5 };
	m.sw.s[0].other = 1;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);

	/* Sums: of the same slice only, counts below 65536. */
	a = (struct bcsp_switch_sum){ .slice = 5, .end_max_ns = 100,
				      .end_min_ns = -50, .nodes = 2,
				      .late = 1 };
	b = (struct bcsp_switch_sum){ .slice = 5, .end_max_ns = 300,
				      .end_min_ns = -10, .nodes = 3,
				      .late = 2, .predicted = 1 };
	CHECK(bcsp_switch_sum_add(&a, &b));
	CHECK(a.nodes == 5 && a.late == 3 && a.predicted == 1 &&
	      a.end_max_ns == 300 && a.end_min_ns == -50);
	b.slice = 6;
	CHECK(!bcsp_switch_sum_add(&a, &b) && a.nodes == 5);
	b.slice = 5;
	b.nodes = (uint16_t)(UINT16_MAX - 4);
	CHECK(!bcsp_switch_sum_add(&a, &b) && a.nodes == 5 && a.late == 3);
	b.nodes = (uint16_t)(UINT16_MAX - 5);
	CHECK(bcsp_switch_sum_add(&a, &b) && a.nodes == UINT16_MAX);

	/*
	 * Row classes (MRNet's EQ_CLASS): equal rows add up, "no row" and
	 * the lowest rows are kept, two of them, the rest other.
	 */
	a = (struct bcsp_switch_sum){ .slice = 7, .nodes = 3,
				      .rows = { { 1, 2 }, { 0, 1 } } };
	b = (struct bcsp_switch_sum){ .slice = 7, .nodes = 4,
				      .rows = { { 1, 3 }, { 2, 1 } } };
	CHECK(bcsp_switch_sum_add(&a, &b));
	CHECK(a.nodes == 7 && a.rows[0].row == 0 && a.rows[0].nodes == 1 &&
	      a.rows[1].row == 1 && a.rows[1].nodes == 5 && a.other == 1);
	b = (struct bcsp_switch_sum){ .slice = 7, .nodes = 3, .other = 1,
				      .rows = { { BCSP_ROW_CLASS_NONE, 2 } } };
	CHECK(bcsp_switch_sum_add(&a, &b));
	CHECK(a.nodes == 10 && a.rows[0].row == BCSP_ROW_CLASS_NONE &&
	      a.rows[0].nodes == 2 && a.rows[1].row == 0 &&
	      a.rows[1].nodes == 1 && a.other == 7);
}

/*
 * The case, and random summaries of up to five rows: the sum is
 * associative and commutative, field by field.
 */
static uint32_t sw_rnd_state = 99;

static uint32_t sw_rnd(uint32_t n)
{
	sw_rnd_state = sw_rnd_state * 1103515245u + 12345u;
	return (sw_rnd_state >> 8) % n;
}

/* One node's summary of slice 9: it ran @row (or none). */
static struct bcsp_switch_sum one_node(uint16_t row)
{
	return (struct bcsp_switch_sum){ .slice = 9, .nodes = 1,
					 .rows = { { row, 1 } } };
}

/* A summary of @n nodes, each running one of five rows or none. */
static struct bcsp_switch_sum some_nodes(uint32_t n)
{
	static const uint16_t rows[] = { 0, 1, 2, 3, 7,
					 BCSP_ROW_CLASS_NONE };
	struct bcsp_switch_sum s = one_node(rows[sw_rnd(6)]), t;

	while (--n) {
		t = one_node(rows[sw_rnd(6)]);
		t.late = (uint16_t)sw_rnd(2);
		t.end_max_ns = t.end_min_ns = (int64_t)sw_rnd(1000) - 500;
		bcsp_switch_sum_add(&s, &t);
	}
	return s;
}

static bool same_sum(const struct bcsp_switch_sum *x,
		     const struct bcsp_switch_sum *y)
{
	return !memcmp(x, y, sizeof(*x));
}

static void test_switch_sum_laws(void)
{
	struct bcsp_switch_sum a, b, c, ab, bc, l, r, ba;
	uint32_t i, bad = 0;

	/* A = {1:2, 0:1}, B = {1:3, 2:1}, C = {2:5}. */
	a = (struct bcsp_switch_sum){ .slice = 9, .nodes = 3,
				      .rows = { { 1, 2 }, { 0, 1 } } };
	b = (struct bcsp_switch_sum){ .slice = 9, .nodes = 4,
				      .rows = { { 1, 3 }, { 2, 1 } } };
	c = (struct bcsp_switch_sum){ .slice = 9, .nodes = 5,
				      .rows = { { 2, 5 } } };
	l = a;
	CHECK(bcsp_switch_sum_add(&l, &b) && bcsp_switch_sum_add(&l, &c));
	bc = b;
	r = a;
	CHECK(bcsp_switch_sum_add(&bc, &c) && bcsp_switch_sum_add(&r, &bc));
	CHECK(same_sum(&l, &r));
	for (i = 0; i < 20000; i++) {
		memset(&a, 0, sizeof(a));
		a = some_nodes(1 + sw_rnd(6));
		b = some_nodes(1 + sw_rnd(6));
		c = some_nodes(1 + sw_rnd(6));
		ab = a;
		bcsp_switch_sum_add(&ab, &b);
		ba = b;
		bcsp_switch_sum_add(&ba, &a);
		l = ab;
		bcsp_switch_sum_add(&l, &c);
		bc = b;
		bcsp_switch_sum_add(&bc, &c);
		r = a;
		bcsp_switch_sum_add(&r, &bc);
		bad += !same_sum(&ab, &ba) || !same_sum(&l, &r) ||
		       l.other + l.rows[0].nodes + l.rows[1].nodes != l.nodes;
	}
	CHECK(bad == 0);
}

static void test_attach(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_ATTACH, .cluster = 7,
				       .sender = 3 } }, out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.attach.parent = 2;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 8 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.attach.parent == 2 && out.hdr.sender == 3);
	/* The reserved word must be zero. */
	buf[BCSP_HDR_LEN + 7] = 1;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
}

static void test_tasks(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_TASKS, .cluster = 7 } };
	struct bcsp_msg out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.tasks.nodes = 33;
	m.tasks.nr_jobs = BCSP_MAX_JOBS;
	for (uint32_t i = 0; i < BCSP_MAX_JOBS; i++) {
		m.tasks.jobs[i].job = i + 1;
		m.tasks.jobs[i].nodes = i % 34;
		m.tasks.jobs[i].tasks = 1000 + i;
		m.tasks.jobs[i].birth = 0xabcd0000u + i;
	}
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 8 + 16 * BCSP_MAX_JOBS + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.tasks.nodes == 33 && out.tasks.nr_jobs == BCSP_MAX_JOBS &&
	      !memcmp(out.tasks.jobs, m.tasks.jobs, sizeof(m.tasks.jobs)));
	/* More nodes with a job than in the sum, a bad job id. */
	m.tasks.nr_jobs = 1;
	m.tasks.jobs[0].nodes = 34;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.tasks.jobs[0].nodes = 1;
	m.tasks.jobs[0].job = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
}

/* The round trips of the clock offsets, and the offsets to the master. */
static void test_probes(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_PROBE, .cluster = 7,
				       .sender = 1, .seq = 3 } }, out;
	uint8_t buf[BCSP_MAX_LEN];
	uint32_t i;
	int len;

	CHECK(!bcsp_type_valid(0) && bcsp_type_valid(BCSP_ATTACH) &&
	      bcsp_type_valid(BCSP_TASKS) &&
	      !bcsp_type_valid(__BCSP_TYPE_MAX) &&
	      bcsp_type_valid(BCSP_PROBE) &&
	      bcsp_type_valid(BCSP_PROBE_REPLY) &&
	      bcsp_type_valid(BCSP_OFFSETS));

	m.probe.id = 0xdeadbeef;
	m.probe.t1 = UINT64_MAX - 1;
	m.probe.t2 = 5;		/* not on the wire of a probe */
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 16 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.hdr.type == BCSP_PROBE && out.probe.id == 0xdeadbeef &&
	      out.probe.t1 == UINT64_MAX - 1 && !out.probe.t2 &&
	      !out.probe.t3);

	m.hdr.type = BCSP_PROBE_REPLY;
	m.probe.t2 = 1000;
	m.probe.t3 = 1000;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 32 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.probe.id == 0xdeadbeef && out.probe.t1 == UINT64_MAX - 1 &&
	      out.probe.t2 == 1000 && out.probe.t3 == 1000);
	/* A reply sent before the probe came. */
	m.probe.t3 = 999;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.probe.t3 = 1001;
	CHECK(again(&m, &out) == BCSP_OK);
	/* A reply says whether its sender hears a master. */
	m.probe.flags = BCSP_PROBE_HEARS;
	CHECK(again(&m, &out) == BCSP_OK && out.probe.flags == BCSP_PROBE_HEARS);
	m.probe.flags = 0;
	CHECK(again(&m, &out) == BCSP_OK && !out.probe.flags);
	/* Any other flag. */
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[BCSP_HDR_LEN + 7] = 2;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[BCSP_HDR_LEN + 4] = 0x80;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* No flag in a probe; the quorum's id is a probe's like any. */
	m.hdr.type = BCSP_PROBE;
	m.probe.id = 0x80000001;
	CHECK(again(&m, &out) == BCSP_OK && out.probe.id == 0x80000001);
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[BCSP_HDR_LEN + 7] = 1;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);

	memset(&m.offsets, 0, sizeof(m.offsets));
	m.hdr.type = BCSP_OFFSETS;
	m.offsets.nr = 0;
	CHECK(again(&m, &out) == BCSP_OK && out.offsets.nr == 0);
	m.offsets.nr = BCSP_MAX_OFFSETS;
	for (i = 0; i < m.offsets.nr; i++) {
		m.offsets.o[i].node = 100 + i;
		m.offsets.o[i].offset = i & 1 ? -INT64_MAX : INT64_MAX - i;
		m.offsets.o[i].bound = i * 1000;
	}
	m.offsets.o[3].offset = 0;
	m.offsets.o[3].bound = BCSP_BOUND_NONE;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 8 + 24 * BCSP_MAX_OFFSETS + BCSP_TAG_LEN);
	CHECK(len <= BCSP_MAX_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.offsets.nr == BCSP_MAX_OFFSETS &&
	      !memcmp(out.offsets.o, m.offsets.o, sizeof(m.offsets.o)));
	/* One more does not fit. */
	m.offsets.nr = BCSP_MAX_OFFSETS + 1;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	m.offsets.nr = 4;
	/* Not known, yet an offset. */
	m.offsets.o[3].offset = 1;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.offsets.o[3].offset = 0;
	CHECK(again(&m, &out) == BCSP_OK);
	/* An offset that cannot be negated. */
	m.offsets.o[1].offset = INT64_MIN;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.offsets.o[1].offset = -INT64_MAX;
	/* A child twice; the sender its own child. */
	m.offsets.o[2].node = m.offsets.o[0].node;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.offsets.o[2].node = m.hdr.sender;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.offsets.o[2].node = 102;
	CHECK(again(&m, &out) == BCSP_OK);
	/* Reserved, of the body and of an entry. */
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[BCSP_HDR_LEN + 7] = 1;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[BCSP_HDR_LEN + 8 + 24 + 7] = 1;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
}

/* Commands on a job's tasks, and the request for a signal. */
static void test_command(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_COMMAND, .cluster = 7 } };
	struct bcsp_msg out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.cmd = (struct bcsp_command){ .id = 3, .op = BCSP_CMD_SIGNAL,
				       .job = 9, .arg = 15 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 16 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      !memcmp(&out.cmd, &m.cmd, sizeof(m.cmd)));
	/* No such operation, job or signal. */
	m.cmd.op = 4;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.cmd.op = BCSP_CMD_SIGNAL;
	m.cmd.job = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.cmd.job = 9;
	m.cmd.arg = BCSP_SIGNAL_MAX + 1;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REQUEST;
	m.hdr.cluster = 7;
	m.hdr.sender = 4;
	m.req = (struct bcsp_request){ .id = 1, .op = BCSP_OP_SIGNAL,
				       .job = 9, .node = 4 };
	m.req.signal.sig = 10;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.signal.sig == 10);
	m.req.signal.sig = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
}

/*
 * An attach: the request naming a node and a process, the command to
 * that node, its result, and the acknowledgements of commands.
 */
static void test_attach_command(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_COMMAND, .cluster = 7 } };
	struct bcsp_msg out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.cmd = (struct bcsp_command){ .id = 4, .op = BCSP_CMD_ATTACH,
				       .job = 9, .arg = 4321, .node = 3 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      !memcmp(&out.cmd, &m.cmd, sizeof(m.cmd)));
	/* No node, no or too high a pid, reserved, id 0. */
	CHECK(poked(&m, 19, 0, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 23, 1, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 3, 0, &out) == BCSP_BAD_BODY);
	m.cmd.arg = BCSP_PID_MAX + 1;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.cmd.arg = 0;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.cmd.arg = BCSP_PID_MAX;
	CHECK(again(&m, &out) == BCSP_OK && out.cmd.arg == BCSP_PID_MAX);
	/* A signal is 16 bytes: 24 is bad. */
	m.cmd.op = BCSP_CMD_SIGNAL;
	m.cmd.arg = 15;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 16 + BCSP_TAG_LEN);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REQUEST;
	m.hdr.cluster = 7;
	m.hdr.sender = 4;
	m.req = (struct bcsp_request){ .id = 1, .op = BCSP_OP_ATTACH,
				       .job = 9, .node = 4 };
	m.req.attach.target = 2;
	m.req.attach.pid = 77;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.attach.target == 2 && out.req.attach.pid == 77);
	/* No node, no pid, reserved, job 0. */
	CHECK(poked(&m, 27, 0, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 31, 0, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 39, 1, &out) == BCSP_BAD_BODY);
	m.req.job = 0;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.req.job = 9;
	/* The reply carries the node's error. */
	m.hdr.type = BCSP_REPLY;
	m.req.error = -ESRCH;
	CHECK(again(&m, &out) == BCSP_OK && out.req.error == -ESRCH &&
	      out.req.attach.pid == 77);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_RESULT;
	m.hdr.cluster = 7;
	m.result = (struct bcsp_result){ .id = 4, .op = BCSP_CMD_ATTACH,
					 .job = 9, .arg = 77, .error = -ESRCH };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      !memcmp(&out.result, &m.result, sizeof(m.result)));
	/* An error above 0 or below -4095, no such op, id 0, reserved. */
	m.result.error = 1;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.result.error = -4096;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.result.error = 0;
	CHECK(again(&m, &out) == BCSP_OK);
	CHECK(poked(&m, 7, 9, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 3, 0, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 23, 1, &out) == BCSP_BAD_BODY);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_ACK;
	m.hdr.cluster = 7;
	m.ack = (struct bcsp_ack){ .master = 1, .id = 4 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 8 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.ack.master == 1 && out.ack.id == 4);
	CHECK(poked(&m, 3, 0, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 7, 0, &out) == BCSP_BAD_BODY);
}

/*
 * A strobe whose loss the tree repairs, and a node's word that it missed
 * the next: master not 0, reserved zero; no flag a daemon does not know.
 */
static void test_strobe_nack(void)
{
	struct bcsp_msg m = strobe_msg(), out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.strobe.flags = BCSP_STROBE_F_REPAIR;
	CHECK(again(&m, &out) == BCSP_OK &&
	      out.strobe.flags == BCSP_STROBE_F_REPAIR);
	CHECK(poked(&m, 39, 2, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 36, 0x80, &out) == BCSP_BAD_BODY);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_STROBE_NACK;
	m.hdr.cluster = 7;
	m.hdr.epoch = 2;
	m.nack = (struct bcsp_strobe_nack){ .slice = 0x100000007ull,
					   .master = 1 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 16 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.hdr.epoch == 2 && out.nack.slice == 0x100000007ull &&
	      out.nack.master == 1);
	CHECK(poked(&m, 11, 0, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 15, 1, &out) == BCSP_BAD_BODY);
}

/*
 * Parts of a tree gather's answer asked for again: all of it (no size,
 * no bit) or some of an answer's parts (at least one, none past its
 * last); reserved zero, no flag a daemon does not know.
 */
static void test_tg_nack(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_TG_NACK, .cluster = 7,
				       .sender = 3 } };
	struct bcsp_msg out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.tg_nack = (struct bcsp_tg_nack){ .req = 12, .node = 2, .job = 9,
					   .size = 2 * BCSP_TG_PART_MAX + 1,
					   .parts = { 5, 0 } };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.tg_nack.req == 12 && out.tg_nack.node == 2 &&
	      out.tg_nack.job == 9 && !out.tg_nack.flags &&
	      out.tg_nack.size == 2 * BCSP_TG_PART_MAX + 1 &&
	      out.tg_nack.parts[0] == 5 && !out.tg_nack.parts[1]);
	CHECK(poked(&m, 3, 0, &out) == BCSP_BAD_BODY);	/* req 0 */
	CHECK(poked(&m, 7, 0, &out) == BCSP_BAD_BODY);	/* node 0 */
	CHECK(poked(&m, 15, 2, &out) == BCSP_BAD_BODY);	/* unknown flag */
	CHECK(poked(&m, 15, 1, &out) == BCSP_BAD_BODY);	/* all, and parts */
	CHECK(poked(&m, 16, 0xff, &out) == BCSP_BAD_BODY);	/* too big */
	CHECK(poked(&m, 23, 1, &out) == BCSP_BAD_BODY);	/* reserved */
	CHECK(poked(&m, 31, 0, &out) == BCSP_BAD_BODY);	/* no part */
	CHECK(poked(&m, 31, 8, &out) == BCSP_BAD_BODY);	/* part 3 of 3 */
	CHECK(poked(&m, 31, 4, &out) == BCSP_OK);	/* part 2, the last */
	CHECK(poked(&m, 39, 1, &out) == BCSP_BAD_BODY);	/* part 64 */
	/* 101 parts: the last is bit 36 of the second word, 37 is past. */
	m.tg_nack.size = 100 * BCSP_TG_PART_MAX + 7;
	m.tg_nack.parts[0] = 0;
	m.tg_nack.parts[1] = 1ULL << 36;
	CHECK(again(&m, &out) == BCSP_OK && out.tg_nack.parts[1] == 1ULL << 36);
	m.tg_nack.parts[1] = 1ULL << 37;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	/* All of it: no size, no part. */
	m.tg_nack = (struct bcsp_tg_nack){ .req = 12, .node = 2, .job = 9,
					   .flags = BCSP_TG_NACK_F_ALL };
	CHECK(again(&m, &out) == BCSP_OK &&
	      out.tg_nack.flags == BCSP_TG_NACK_F_ALL);
	CHECK(poked(&m, 19, 1, &out) == BCSP_BAD_BODY);
	CHECK(poked(&m, 39, 1, &out) == BCSP_BAD_BODY);
}

/* The MPI statistics of a job: its request and its command, a selection. */
static void test_mpi(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_REQUEST, .cluster = 7,
				       .sender = 4 } };
	struct bcsp_msg out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.req = (struct bcsp_request){ .id = 1, .op = BCSP_OP_MPI, .job = 9,
				       .node = 4 };
	m.req.mpi.flags = BCSP_MPI_SUB_BITS;
	m.req.mpi.sub_bits = 2;
	m.req.mpi.len = 15;
	strcpy(m.req.mpi.sel, "Allreduce,Isend");
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + 16 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.mpi.flags == BCSP_MPI_SUB_BITS &&
	      out.req.mpi.sub_bits == 2 && out.req.mpi.len == 15 &&
	      !strcmp(out.req.mpi.sel, "Allreduce,Isend"));
	/* A disable keeps the selection: none on the wire. */
	m.req.mpi.flags = BCSP_MPI_OFF;
	m.req.mpi.len = 0;
	m.req.mpi.sel[0] = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.mpi.flags == BCSP_MPI_OFF && !out.req.mpi.sel[0]);
	/* The longest selection, and one longer. */
	m.req.mpi.len = BCSP_MPI_SEL_LEN - 1;
	memset(m.req.mpi.sel, 'a', BCSP_MPI_SEL_LEN - 1);
	m.req.mpi.sel[BCSP_MPI_SEL_LEN - 1] = 0;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_MPI_SEL_LEN + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      strlen(out.req.mpi.sel) == BCSP_MPI_SEL_LEN - 1);
	m.req.mpi.len = BCSP_MPI_SEL_LEN;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	/* A NUL inside, unknown flags, a resolution out of range. */
	m.req.mpi.len = 4;
	memcpy(m.req.mpi.sel, "ab\0d", 5);
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	strcpy(m.req.mpi.sel, "abcd");
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	buf[BCSP_HDR_LEN + 40 + 2] = 0;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.req.mpi.flags = 4;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.req.mpi.flags = BCSP_MPI_SUB_BITS;
	m.req.mpi.sub_bits = BCS_HIST_SUB_BITS_MAX + 1;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* Only BCSP_OP_MPI has a selection. */
	m.req.op = BCSP_OP_STATS;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_COMMAND;
	m.hdr.cluster = 7;
	m.cmd = (struct bcsp_command){ .id = 5, .op = BCSP_CMD_MPI, .job = 9,
				       .arg = BCSP_MPI_SUB_BITS, .sub_bits = 3,
				       .len = 3 };
	strcpy(m.cmd.sel, "all");
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + 4 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      !memcmp(&out.cmd, &m.cmd, sizeof(m.cmd)));
	/* The padding is zeros. */
	buf[BCSP_HDR_LEN + 24 + 3] = 'x';
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.cmd.arg = 8;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* A signal has no selection. */
	m.cmd.op = BCSP_CMD_SIGNAL;
	m.cmd.arg = 15;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 16 + BCSP_TAG_LEN);
}

/* Encode @m, change it with @bend (may be NULL), decode: the verdict. */
static enum bcsp_verdict part_verdict(struct bcsp_msg *m, size_t at,
				      uint8_t byte)
{
	uint8_t buf[BCSP_MAX_LEN];
	struct bcsp_msg out;
	int len;

	len = bcsp_encode(m, key, buf, sizeof(buf));
	if (len < 0)
		return __BCSP_VERDICT_MAX;
	if (at) {
		buf[at] = byte;
		resign(buf, (size_t)len);
	}
	return bcsp_decode(buf, (size_t)len, 7, key, &out);
}

/*
 * The gather of a job's MPI statistics files: its request and command,
 * and the parts, each inside its file and the file inside its bounds.
 */
static void test_mpi_gather(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_REQUEST, .cluster = 7,
				       .sender = 4 } };
	struct bcsp_msg out;
	uint8_t buf[BCSP_MAX_LEN];
	int len;

	m.req = (struct bcsp_request){ .id = 3, .op = BCSP_OP_MPI_GATHER,
				       .job = 9, .node = 4 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.op == BCSP_OP_MPI_GATHER && out.req.job == 9 &&
	      !out.req.gather.live);
	/* The live nodes go in the reply; a request does not send them. */
	m.req.gather.live = 64;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      !out.req.gather.live);
	m.hdr.type = BCSP_REPLY;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      out.req.gather.live == 64);
	/* A reserved word set, a request with a count, 24 bytes: bad. */
	CHECK(part_verdict(&m, BCSP_HDR_LEN + 28, 1) == BCSP_BAD_BODY);
	m.hdr.type = BCSP_REQUEST;
	CHECK(part_verdict(&m, BCSP_HDR_LEN + 24, 1) == BCSP_BAD_BODY);
	m.req.op = BCSP_OP_WINDOW_CLEAR;	/* 24 bytes */
	CHECK(part_verdict(&m, BCSP_HDR_LEN + 7, BCSP_OP_MPI_GATHER) ==
	      BCSP_BAD_BODY);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_COMMAND;
	m.hdr.cluster = 7;
	/* @arg is the asker's request id, any number but 0. */
	m.cmd = (struct bcsp_command){ .id = 5, .op = BCSP_CMD_MPI_GATHER,
				       .job = 9, .arg = 0xfffffff0u,
				       .node = 4 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 24 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      !memcmp(&out.cmd, &m.cmd, sizeof(m.cmd)));
	m.cmd.arg = 0;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
	m.cmd.arg = 1;
	m.cmd.node = 0;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_MPI_PART;
	m.hdr.cluster = 7;
	m.hdr.sender = 2;
	m.part = (struct bcsp_mpi_part){ .req = 3, .node = 4, .job = 9,
					 .file = 1, .files = 2, .size = 3001,
					 .offset = BCSP_MPI_PART_MAX,
					 .len = BCSP_MPI_PART_MAX };
	memset(m.part.data, 0xab, BCSP_MPI_PART_MAX);
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 28 + BCSP_MPI_PART_MAX + BCSP_TAG_LEN);
	CHECK(len <= BCSP_MAX_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      !memcmp(&out.part, &m.part, sizeof(m.part)));
	/* The last part, padded with zeros, and not otherwise. */
	m.part.offset = 2 * BCSP_MPI_PART_MAX;
	m.part.len = 3001 - 2 * BCSP_MPI_PART_MAX;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 28 + 388 + BCSP_TAG_LEN);
	CHECK(part_verdict(&m, 0, 0) == BCSP_OK);
	CHECK(part_verdict(&m, BCSP_HDR_LEN + 28 + 388 - 1, 1) ==
	      BCSP_BAD_BODY);
	/* Past the file's end; a file past the node's; too large a file. */
	m.part.len = 3001 - 2 * BCSP_MPI_PART_MAX + 1;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
	m.part.len = 4;
	m.part.offset = 3001;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
	m.part.offset = 0;
	m.part.file = 2;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
	m.part.file = 0;
	m.part.size = BCSP_MPI_FILE_MAX + 1;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
	m.part.size = 3001;
	m.part.files = BCSP_MPI_FILES_MAX + 1;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
	m.part.files = 2;
	m.part.node = 0;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
	m.part.node = 4;
	m.part.len = 0;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
	m.part.len = BCSP_MPI_PART_MAX + 4;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	/* A node with no file: one empty part, and nothing else in it. */
	m.part = (struct bcsp_mpi_part){ .req = 3, .node = 4, .job = 9 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 28 + BCSP_TAG_LEN);
	CHECK(part_verdict(&m, 0, 0) == BCSP_OK);
	m.part.size = 1;
	CHECK(part_verdict(&m, 0, 0) == BCSP_BAD_BODY);
}

/* A subtree's tasks per node: sorted pairs, each once, and the rest. */
static void test_node_tasks(void)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_NODE_TASKS, .cluster = 7 } };
	struct bcsp_msg out;
	uint8_t buf[BCSP_MAX_LEN];
	uint32_t i;
	int len;

	m.node_tasks.nr = 3;
	m.node_tasks.more = 5;
	m.node_tasks.e[0] = (struct bcsp_node_task){ 4, 2, 1 };
	m.node_tasks.e[1] = (struct bcsp_node_task){ 4, 9, 3 };
	m.node_tasks.e[2] = (struct bcsp_node_task){ 7, 1, 2 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 16 + 3 * 12 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK &&
	      !memcmp(&out.node_tasks, &m.node_tasks,
		      16 + 3 * sizeof(m.node_tasks.e[0])));
	/* Reserved; out of order, twice; job 0, node 0, no tasks. */
	CHECK(poked(&m, 7, 1, &out) == BCSP_BAD_BODY);
	m.node_tasks.e[1].node = 2;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.node_tasks.e[1].node = 1;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.node_tasks.e[1].node = 9;
	m.node_tasks.e[0].job = 0;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.node_tasks.e[0].job = 4;
	m.node_tasks.e[2].node = 0;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.node_tasks.e[2].node = 1;
	m.node_tasks.e[2].tasks = 0;
	CHECK(again(&m, &out) == BCSP_BAD_BODY);
	m.node_tasks.e[2].tasks = 2;
	/* The most that fit; one more does not encode. */
	m.node_tasks.nr = BCSP_MAX_NODE_TASKS;
	for (i = 0; i < BCSP_MAX_NODE_TASKS; i++)
		m.node_tasks.e[i] = (struct bcsp_node_task){ 1, i + 1, 1 };
	CHECK(again(&m, &out) == BCSP_OK && out.node_tasks.nr ==
	      BCSP_MAX_NODE_TASKS);
	m.node_tasks.nr++;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	/* The order: job first, then node. */
	CHECK(bcsp_node_task_cmp(&(struct bcsp_node_task){ 1, 9, 1 },
				 &(struct bcsp_node_task){ 2, 1, 1 }) < 0);
	CHECK(bcsp_node_task_cmp(&(struct bcsp_node_task){ 2, 1, 5 },
				 &(struct bcsp_node_task){ 2, 1, 1 }) == 0);
	CHECK(bcsp_node_task_cmp(&(struct bcsp_node_task){ 2, 3, 1 },
				 &(struct bcsp_node_task){ 2, 1, 1 }) > 0);
}

/*
 * Two keys (a rotation): a datagram signed with either is taken, and says
 * which; one signed with a third is refused; with one key only, the
 * other's are refused.
 */
static void test_two_keys(void)
{
	struct bcsp_msg m = strobe_msg(), out;
	uint8_t buf[BCSP_MAX_LEN], third[BCSP_KEY_LEN];
	unsigned int which = 7;
	size_t len;

	randombytes_buf(third, sizeof(third));
	len = (size_t)bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode_keys(buf, len, 7, key, other_key, &which, &out) ==
	      BCSP_OK && which == 0 && out.strobe.row == m.strobe.row);
	CHECK(bcsp_decode_keys(buf, len, 7, other_key, key, &which, &out) ==
	      BCSP_OK && which == 1);
	CHECK(bcsp_decode_keys(buf, len, 7, other_key, NULL, &which, &out) ==
	      BCSP_BAD_MAC);
	CHECK(bcsp_decode_keys(buf, len, 7, other_key, third, &which, &out) ==
	      BCSP_BAD_MAC);
	/* The second key's tag is checked as strictly as the first's. */
	buf[len - 1] ^= 1;
	CHECK(bcsp_decode_keys(buf, len, 7, other_key, key, NULL, &out) ==
	      BCSP_BAD_MAC);
	len = (size_t)bcsp_encode(&m, third, buf, sizeof(buf));
	CHECK(bcsp_decode_keys(buf, len, 7, key, third, NULL, &out) ==
	      BCSP_OK);
	CHECK(bcsp_decode_keys(buf, len, 8, key, third, NULL, &out) ==
	      BCSP_OTHER_CLUSTER);
}

/* Contexts and stats requests with subsets of jobs' processes. */
static void test_subsets(void)
{
	struct bcsp_msg m, out;
	uint8_t buf[BCSP_MAX_LEN];
	size_t off;
	int len;
	uint32_t i;

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_CONTEXT;
	m.hdr.cluster = 7;
	m.ctx.version = 3;
	m.ctx.nr_jobs = 2;
	m.ctx.jobs[0].job = 4;
	m.ctx.jobs[0].metrics = 1;
	m.ctx.jobs[1].job = 6;
	m.ctx.jobs[1].metrics = 2;
	m.ctx.nr_subsets = 3;
	m.ctx.subsets[0] = (struct bcsp_subset){ 6, BCSP_SUBSET_RANKS, 0, 3 };
	m.ctx.subsets[1] = (struct bcsp_subset){ 4, BCSP_SUBSET_PID, 2, 77 };
	m.ctx.subsets[2] = (struct bcsp_subset){ 6, BCSP_SUBSET_RANKS, 17,
						 17 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + 8 * 2 + 8 + 12 * 3 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.ctx.nr_subsets == 3 &&
	      !memcmp(out.ctx.subsets, m.ctx.subsets,
		      3 * sizeof(m.ctx.subsets[0])));
	/* The index of a job past the list: bad body. */
	off = BCSP_HDR_LEN + 40 + 16 + 8 + 12;	/* subset 1's index */
	buf[off + 1] = 2;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* The index of a job's second entry (the encoder names the first). */
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[BCSP_HDR_LEN + 40 + 3] = 6;		/* job 4 is 6 too */
	buf[off + 1] = 1;			/* the second 6 */
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* Another kind, a reserved word, a count of none. */
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[off + 3] = 2;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[BCSP_HDR_LEN + 56 + 7] = 1;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	buf[BCSP_HDR_LEN + 56 + 3] = 2;	/* 2 said, 3 there */
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	/* Ranks upside down, past the highest; a pid of node 0, pid 0. */
	m.ctx.subsets[0].a = 4;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	m.ctx.subsets[0] = (struct bcsp_subset){ 6, BCSP_SUBSET_RANKS, 0,
						 BCSP_RANK_MAX + 1 };
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	m.ctx.subsets[0] = (struct bcsp_subset){ 6, BCSP_SUBSET_PID, 0, 5 };
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	m.ctx.subsets[0] = (struct bcsp_subset){ 6, BCSP_SUBSET_PID, 1, 0 };
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
	/* A subset of no job of the context is not sent. */
	m.ctx.subsets[0] = (struct bcsp_subset){ 9, BCSP_SUBSET_PID, 1, 5 };
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);

	/* The largest: 64 jobs, 64 subsets, 32 of one job; 33 are bad. */
	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_CONTEXT;
	m.hdr.cluster = 7;
	m.ctx.nr_jobs = BCSP_MAX_JOBS;
	for (i = 0; i < BCSP_MAX_JOBS; i++)
		m.ctx.jobs[i].job = i + 1;
	m.ctx.nr_subsets = BCSP_CTX_SUBSETS_MAX;
	for (i = 0; i < BCSP_CTX_SUBSETS_MAX; i++)
		m.ctx.subsets[i] = (struct bcsp_subset){
			i < BCSP_JOB_SUBSETS_MAX ? 1 : i - 30, BCSP_SUBSET_PID,
			i + 1, 100 + i };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 1328 + BCSP_TAG_LEN && len <= BCSP_MAX_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.ctx.nr_subsets == BCSP_CTX_SUBSETS_MAX &&
	      out.ctx.subsets[63].job == 33 && out.ctx.subsets[31].job == 1);
	m.ctx.subsets[BCSP_JOB_SUBSETS_MAX].job = 1;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len > 0);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.ctx.nr_subsets = BCSP_CTX_SUBSETS_MAX + 1;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);

	/* A stats request: its subsets, enable only, at most a job's. */
	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REQUEST;
	m.hdr.cluster = 7;
	m.req.id = 1;
	m.req.op = BCSP_OP_STATS;
	m.req.job = 5;
	m.req.stats.op = BCS_DIST_ENABLE;
	m.req.stats.metrics = 1;
	m.req.stats.nr_subsets = 2;
	m.req.stats.subsets[0] = (struct bcsp_subset){ 0, BCSP_SUBSET_RANKS,
						       2, 9 };
	m.req.stats.subsets[1] = (struct bcsp_subset){ 0, BCSP_SUBSET_PID, 3,
						       4194304 };
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(len == BCSP_HDR_LEN + 40 + 24 + BCSP_TAG_LEN);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_OK);
	CHECK(out.req.stats.nr_subsets == 2 &&
	      !memcmp(out.req.stats.subsets, m.req.stats.subsets,
		      2 * sizeof(m.req.stats.subsets[0])));
	/* The job's index must be 0 in a request. */
	buf[BCSP_HDR_LEN + 41] = 1;
	resign(buf, (size_t)len);
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.req.stats.op = BCS_DIST_DISABLE;
	len = bcsp_encode(&m, key, buf, sizeof(buf));
	CHECK(bcsp_decode(buf, (size_t)len, 7, key, &out) == BCSP_BAD_BODY);
	m.req.stats.op = BCS_DIST_ENABLE;
	m.req.stats.nr_subsets = BCSP_JOB_SUBSETS_MAX + 1;
	CHECK(bcsp_encode(&m, key, buf, sizeof(buf)) < 0);
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	randombytes_buf(key, sizeof(key));
	randombytes_buf(other_key, sizeof(other_key));
	test_roundtrip();
	test_rejects();
	test_two_keys();
	test_window();
	test_window_random();
	test_seq_replay_after_restart();
	test_strobe_verdict();
	test_strobe_verdict_wrap();
	test_switches();
	test_switch_sum_laws();
	test_attach();
	test_tasks();
	test_command();
	test_attach_command();
	test_strobe_nack();
	test_tg_nack();
	test_node_tasks();
	test_mpi();
	test_mpi_gather();
	test_probes();
	test_key_file();
	test_next_row();
	test_strobe_plan();
	test_versions();
	test_plan_row();
	test_plan_make();
	test_strobe_verdict_plan();
	test_epochs();
	test_before_tag();
	test_subsets();
	return unit_done("test_proto");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of the fuzz targets into DIR/<target>/: one
 * valid datagram of each type signed with the test key of fuzz.h (and
 * the same without its tag for fuzz_body), configuration files and
 * control requests.  Run by hand after a change of the wire format:
 *   make -C daemon fuzz-seeds
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz.h"

static const char *dir;

static void put(const char *target, const char *name, const void *buf,
		size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, target, name);
	f = fopen(path, "w");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void datagram(const char *name, struct bcsp_msg *m)
{
	uint8_t key[BCSP_KEY_LEN], buf[BCSP_MAX_LEN];
	int len;

	fuzz_key(key);
	m->hdr.cluster = FUZZ_CLUSTER;
	m->hdr.epoch = 3;
	m->hdr.priority = 100;
	m->hdr.seq = 1000;
	len = bcsp_encode(m, key, buf, sizeof(buf));
	if (len < 0) {
		fprintf(stderr, "%s: does not encode\n", name);
		exit(1);
	}
	put("datagram", name, buf, (size_t)len);
	put("body", name, buf, (size_t)len - BCSP_TAG_LEN);
}

/* A selection of the longest a datagram takes: names to the last byte. */
static void long_sel(char *sel)
{
	static const char names[] = "Allreduce,Isend,Irecv,Barrier,Bcast,";
	size_t i;

	for (i = 0; i < BCSP_MPI_SEL_LEN - 1; i++)
		sel[i] = names[i % (sizeof(names) - 1)];
	sel[BCSP_MPI_SEL_LEN - 1] = 0;
}

int main(int argc, char **argv)
{
	struct bcsp_msg m;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds DIR\n");
		return 2;
	}
	dir = argv[1];
	mkdir(dir, 0755);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_STROBE;
	m.hdr.sender = 1;
	m.strobe.slice = 123456;
	m.strobe.deadline_ns = 1700000000123456789ULL;
	m.strobe.slice_ns = 10000000;
	m.strobe.row = 2;
	m.strobe.map_version = 9;
	m.strobe.nr_rows = 3;
	datagram("strobe", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_MAP;
	m.hdr.sender = 1;
	m.map.version = 9;
	m.map.nr_jobs = 3;
	for (i = 0; i < 3; i++) {
		m.map.jobs[i].job = 100 + (uint32_t)i;
		m.map.jobs[i].row = i == 2 ? BCS_ROW_NONE : (uint32_t)i;
		m.map.jobs[i].rows = i == 2 ? 0 : 1ULL << i | 1ULL << 5;
		m.map.jobs[i].nodes = 2;
		m.map.jobs[i].tasks = 8;
		m.map.jobs[i].birth = 0x12345678u + (uint32_t)i;
		m.map.jobs[i].owner = i == 1 ? BCSP_OWNER_NONE : 1000 * (uint32_t)i;
	}
	datagram("map", &m);
	/* The last part of a map of BCSP_MAP_JOBS_MAX jobs: 37 from 4059. */
	m.map.nr_jobs = BCSP_MAP_JOBS_MAX;
	m.map.first = (bcsp_map_parts(BCSP_MAP_JOBS_MAX) - 1) *
		      BCSP_MAP_PART_JOBS;
	datagram("map-last-part", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REQUEST;
	m.hdr.sender = 5;
	m.req.id = 77;
	m.req.op = BCSP_OP_CREATE;
	m.req.row = BCS_ROW_NONE;
	m.req.node = 5;
	datagram("request", &m);
	/* A create for a user: its owner, no nodes named. */
	m.req.nodes.owner = 65534;
	datagram("request-owner", &m);
	m.req.nodes.owner = 0;

	m.hdr.type = BCSP_REPLY;
	m.hdr.sender = 1;
	m.req.job = 100;
	m.req.error = -17;
	datagram("reply", &m);

	m.hdr.type = BCSP_REQUEST;
	m.hdr.sender = 5;
	m.req.op = BCSP_OP_STATS;
	m.req.error = 0;
	m.req.stats.op = 0;	/* BCS_DIST_ENABLE */
	m.req.stats.metrics = 15;
	m.req.stats.sub_bits = 4;
	datagram("request-stats", &m);
	m.req.op = BCSP_OP_WINDOW;
	m.req.window.from = 7500;
	m.req.window.to = 12500;
	datagram("request-window", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_CONTEXT;
	m.hdr.sender = 1;
	m.ctx.version = 3;
	m.ctx.apply_slice = 123458;
	m.ctx.window_from = 130000;
	m.ctx.window_to = 140000;
	m.ctx.flags = BCSP_WINDOW_ARMED;
	m.ctx.nr_jobs = 2;
	m.ctx.jobs[0].job = 100;
	m.ctx.jobs[0].metrics = 15;
	m.ctx.jobs[0].sub_bits = 4;
	m.ctx.jobs[1].job = 101;
	m.ctx.jobs[1].release = 2;
	datagram("context", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_SWITCHES;
	m.hdr.sender = 5;
	m.sw.nr = 2;
	m.sw.s[0].slice = 123456;
	m.sw.s[0].end_max_ns = 42000;
	m.sw.s[0].end_min_ns = 42000;
	m.sw.s[0].nodes = 1;
	m.sw.s[0].rows[0].row = 1;
	m.sw.s[0].rows[0].nodes = 1;
	m.sw.s[1].slice = 123457;
	m.sw.s[1].end_max_ns = 2500000;
	m.sw.s[1].end_min_ns = -3000;
	m.sw.s[1].nodes = 3;
	m.sw.s[1].late = 1;
	m.sw.s[1].predicted = 1;
	m.sw.s[1].rows[0].row = 0;
	m.sw.s[1].rows[0].nodes = 2;
	m.sw.s[1].rows[1].row = BCSP_ROW_CLASS_NONE;
	m.sw.s[1].rows[1].nodes = 1;
	datagram("switches", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_ATTACH;
	m.hdr.sender = 3;
	m.attach.parent = 2;
	datagram("attach", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_TASKS;
	m.hdr.sender = 2;
	m.tasks.nodes = 31;
	m.tasks.nr_jobs = 2;
	m.tasks.jobs[0].job = 100;
	m.tasks.jobs[0].nodes = 31;
	m.tasks.jobs[0].tasks = 124;
	m.tasks.jobs[1].job = 101;
	m.tasks.jobs[1].nodes = 3;
	m.tasks.jobs[1].tasks = 3;
	m.tasks.jobs[1].birth = 0x12345678u;
	datagram("tasks", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_PROBE;
	m.hdr.sender = 1;
	m.probe.id = 17;
	m.probe.t1 = 1700000000123456789ULL;
	datagram("probe", &m);
	m.hdr.type = BCSP_PROBE_REPLY;
	m.hdr.sender = 5;
	m.probe.t2 = 1700000000123500000ULL;
	m.probe.t3 = 1700000000123520000ULL;
	datagram("probe-reply", &m);
	/* A standby's quorum probe, and a reply that hears a master. */
	m.probe.id = BCSP_PROBE_QUORUM | 3;
	m.probe.flags = BCSP_PROBE_HEARS;
	datagram("probe-reply-hears", &m);
	m.hdr.type = BCSP_PROBE;
	m.probe.flags = 0;
	m.probe.t2 = m.probe.t3 = 0;
	datagram("probe-quorum", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_OFFSETS;
	m.hdr.sender = 1;
	m.offsets.nr = 3;
	m.offsets.o[0].node = 2;
	m.offsets.o[0].offset = -25000;
	m.offsets.o[0].bound = 40000;
	m.offsets.o[1].node = 3;
	m.offsets.o[1].offset = 1200;
	m.offsets.o[1].bound = 900;
	m.offsets.o[2].node = 4;
	m.offsets.o[2].bound = BCSP_BOUND_NONE;
	datagram("offsets", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_COMMAND;
	m.hdr.sender = 1;
	m.cmd.id = 4;
	m.cmd.op = BCSP_CMD_SIGNAL;
	m.cmd.job = 100;
	m.cmd.arg = 15;
	datagram("command", &m);

	m.cmd.id = 5;
	m.cmd.op = BCSP_CMD_ATTACH;
	m.cmd.arg = 4321;
	m.cmd.node = 3;
	datagram("command-attach", &m);

	/* MPI selections: a short one, and one of the longest length. */
	m.cmd.id = 6;
	m.cmd.op = BCSP_CMD_MPI;
	m.cmd.arg = BCSP_MPI_SUB_BITS;
	m.cmd.node = 0;
	m.cmd.sub_bits = 4;
	strcpy(m.cmd.sel, "Allreduce,Isend,Barrier");
	m.cmd.len = strlen(m.cmd.sel);
	datagram("command-mpi", &m);
	m.cmd.id = 7;
	m.cmd.arg = 0;
	m.cmd.sub_bits = 0;
	long_sel(m.cmd.sel);
	m.cmd.len = BCSP_MPI_SEL_LEN - 1;
	datagram("command-mpi-long", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REQUEST;
	m.hdr.sender = 2;
	m.req.id = 10;
	m.req.op = BCSP_OP_MPI;
	m.req.job = 100;
	m.req.node = 2;
	m.req.mpi.flags = BCSP_MPI_SUB_BITS;
	m.req.mpi.sub_bits = 6;
	strcpy(m.req.mpi.sel, "all");
	m.req.mpi.len = 3;
	datagram("request-mpi", &m);
	m.req.id = 11;
	m.req.mpi.flags = BCSP_MPI_OFF;
	m.req.mpi.sub_bits = 0;
	long_sel(m.req.mpi.sel);
	m.req.mpi.len = BCSP_MPI_SEL_LEN - 1;
	datagram("request-mpi-long", &m);

	m.cmd.id = 8;
	m.cmd.op = BCSP_CMD_MPI_GATHER;
	m.cmd.arg = 12;
	m.cmd.node = 2;
	m.cmd.sub_bits = 0;
	m.cmd.len = 0;
	memset(m.cmd.sel, 0, sizeof(m.cmd.sel));
	datagram("command-mpi-gather", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REQUEST;
	m.hdr.sender = 2;
	m.req.id = 12;
	m.req.op = BCSP_OP_MPI_GATHER;
	m.req.job = 100;
	m.req.node = 2;
	datagram("request-mpi-gather", &m);
	m.hdr.type = BCSP_REPLY;
	m.req.gather.live = 3;
	datagram("reply-mpi-gather", &m);

	/* A file in two parts, the last one padded; a node with none. */
	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_MPI_PART;
	m.hdr.sender = 3;
	m.part.req = 12;
	m.part.node = 2;
	m.part.job = 100;
	m.part.file = 1;
	m.part.files = 2;
	m.part.size = BCSP_MPI_PART_MAX + 5;
	m.part.len = BCSP_MPI_PART_MAX;
	for (i = 0; i < BCSP_MPI_PART_MAX; i++)
		m.part.data[i] = (uint8_t)i;
	datagram("mpi-part", &m);
	m.part.offset = BCSP_MPI_PART_MAX;
	m.part.len = 5;
	datagram("mpi-part-last", &m);
	memset(&m.part, 0, sizeof(m.part));
	m.part.req = 12;
	m.part.node = 2;
	m.part.job = 100;
	datagram("mpi-part-none", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_RESULT;
	m.hdr.sender = 3;
	m.result.id = 5;
	m.result.op = BCSP_CMD_ATTACH;
	m.result.job = 100;
	m.result.arg = 4321;
	m.result.error = -3;	/* -ESRCH */
	datagram("result", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_ACK;
	m.hdr.sender = 3;
	m.ack.master = 1;
	m.ack.id = 5;
	datagram("ack", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_STROBE_NACK;
	m.hdr.sender = 3;
	m.nack.slice = 42;
	m.nack.master = 1;
	datagram("strobe-nack", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_NODE_TASKS;
	m.hdr.sender = 2;
	m.node_tasks.nr = 3;
	m.node_tasks.more = 1;
	m.node_tasks.e[0] = (struct bcsp_node_task){ 100, 2, 4 };
	m.node_tasks.e[1] = (struct bcsp_node_task){ 100, 5, 1 };
	m.node_tasks.e[2] = (struct bcsp_node_task){ 101, 3, 2 };
	datagram("node-tasks", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REQUEST;
	m.hdr.sender = 2;
	m.req.id = 9;
	m.req.op = BCSP_OP_ATTACH;
	m.req.job = 100;
	m.req.node = 2;
	m.req.attach.target = 3;
	m.req.attach.pid = 4321;
	datagram("request-attach", &m);

	memset(&m, 0, sizeof(m));
	m.hdr.type = BCSP_REPORT;
	m.hdr.sender = 5;
	m.report.nr_jobs = 2;
	m.report.jobs[0].job = 100;
	m.report.jobs[0].tasks = 4;
	m.report.jobs[0].birth = 0x12345678u;
	m.report.jobs[1].job = 101;
	m.report.jobs[1].tasks = 1;
	datagram("report", &m);

	static const char conf_node[] =
		"# a node\nrole node\ncluster 7\ngroup 239.255.66.83\n"
		"port = 5399\ninterface eth0\nkey_file /etc/bcs/cluster.key\n"
		"watchdog_slices 10\npredict 1\nstale_slices 4\n"
		"report_ms 1000\nrt_priority 40\nlog syslog\nverbose 1\n";
	static const char conf_master[] =
		"role\tmaster\nslice_us=10000\nlead_us 3000\n"
		"strobe_copies 2   # twice\nrows 0\npriority 200\n"
		"failover_slices 20\nquorum 0\n"
		"control_socket /run/bcs/bcsd.sock\nstats_file /tmp/s.json\n";
	static const char conf_both[] =
		"role both\r\nnode_id 3\r\nttl 1\r\n\r\n";
	put("config", "node", conf_node, sizeof(conf_node) - 1);
	put("config", "master", conf_master, sizeof(conf_master) - 1);
	put("config", "both", conf_both, sizeof(conf_both) - 1);

	static const char *const reqs[] = {
		"{\"cmd\":\"status\"}",
		"{\"cmd\":\"job-list\"}",
		"{\"cmd\":\"job-create\",\"job\":0,\"row\":-1}",
		"{\"cmd\":\"job-destroy\",\"job\":12}",
		"{\"cmd\":\"job-row\",\"job\":12,\"row\":3}",
		"{\"cmd\":\"job-wait\",\"job\":12,\"timeout_ms\":5000}",
		"{\"cmd\":\"stats\",\"job\":12,\"op\":\"enable\","
		"\"metrics\":15,\"sub_bits\":4}",
		"{\"cmd\":\"window\",\"from\":7500,\"to\":12500}",
		"{\"cmd\":\"window-clear\"}",
		"{\"cmd\":\"slices\",\"last\":30}",
		"{\"cmd\":\"job-signal\",\"job\":12,\"signal\":15}",
		"{\"cmd\":\"job-attach\",\"job\":12,\"node\":3,"
		"\"pid\":4321}",
		"{\"cmd\":\"stats\",\"job\":12,\"op\":\"enable\","
		"\"mpi\":\"Allreduce,Isend\",\"sub_bits\":3}",
		"{\"cmd\":\"stats\",\"job\":12,\"op\":\"disable\","
		"\"mpi\":\"\"}",
		"{\"cmd\":\"mpi-gather\",\"job\":12}",
	};
	for (i = 0; i < (int)(sizeof(reqs) / sizeof(reqs[0])); i++) {
		char name[16];

		snprintf(name, sizeof(name), "req%d", i);
		put("ctl", name, reqs[i], strlen(reqs[i]));
	}
	return 0;
}

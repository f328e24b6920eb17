// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of the fuzz targets into DIR/<target>/: one
 * valid datagram of each type signed with the test key of fuzz.h (and
 * the same without its tag for fuzz_body), configuration files,
 * control requests and answers of gathers reduced in the tree.  Run by hand after a change of the wire format:
 *   make -C daemon fuzz-seeds
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz.h"
#include "proto/codec.h"
#include "tree/tgather.h"

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

/* The seed of @m's type, named as the table of types names it. */
static void seed(struct bcsp_msg *m)
{
	datagram(bcsp_type_name(m->hdr.type), m);
}

/* A variant of it: "<type>-@what". */
static void variant(struct bcsp_msg *m, const char *what)
{
	char name[64];

	snprintf(name, sizeof(name), "%s-%s", bcsp_type_name(m->hdr.type),
		 what);
	datagram(name, m);
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

/*
 * The seeds of each type, from a message of the type and nothing else:
 * the type's own and its variants.
 */
static void seed_strobe(struct bcsp_msg *m)
{
	m->hdr.sender = 1;
	m->strobe.slice = 123456;
	m->strobe.deadline_ns = 1700000000123456789ULL;
	m->strobe.slice_ns = 10000000;
	m->strobe.row = 2;
	m->strobe.map_version = 9;
	m->strobe.nr_rows = 3;
	seed(m);
	/* A plan of 20 slices, the next in 10, through rows 0, 2 and 5. */
	m->strobe.plan_slices = 20;
	m->strobe.plan_next = 10;
	m->strobe.plan_rows = 0x25;
	variant(m, "plan");
	/* The same in version 3, which a daemon still reads. */
	m->hdr.version = 3;
	variant(m, "plan-v3");
	m->hdr.version = 0;
}

static void seed_map(struct bcsp_msg *m)
{
	uint32_t i;

	m->hdr.sender = 1;
	m->map.version = 9;
	m->map.nr_jobs = 3;
	for (i = 0; i < 3; i++) {
		m->map.jobs[i].job = 100 + i;
		m->map.jobs[i].row = i == 2 ? BCS_ROW_NONE : i;
		m->map.jobs[i].rows = i == 2 ? 0 : 1ULL << i | 1ULL << 5;
		m->map.jobs[i].nodes = 2;
		m->map.jobs[i].tasks = 8;
		m->map.jobs[i].birth = 0x12345678u + i;
		m->map.jobs[i].owner = i == 1 ? BCSP_OWNER_NONE : 1000 * i;
	}
	seed(m);
	/* The last part of a map of BCSP_MAP_JOBS_MAX jobs: 37 from 4059. */
	m->map.nr_jobs = BCSP_MAP_JOBS_MAX;
	m->map.first = (bcsp_map_parts(BCSP_MAP_JOBS_MAX) - 1) *
		       BCSP_MAP_PART_JOBS;
	variant(m, "last-part");
}

static void seed_request(struct bcsp_msg *m)
{
	m->hdr.sender = 5;
	m->req.id = 77;
	m->req.op = BCSP_OP_CREATE;
	m->req.row = BCS_ROW_NONE;
	m->req.node = 5;
	seed(m);
	/* A create for a user: its owner, no nodes named. */
	m->req.nodes.owner = 65534;
	variant(m, "owner");
	m->req.nodes.owner = 0;

	m->req.job = 100;
	m->req.op = BCSP_OP_STATS;
	m->req.stats.op = 0;	/* BCS_DIST_ENABLE */
	m->req.stats.metrics = 15;
	m->req.stats.sub_bits = 4;
	variant(m, "stats");
	/* An enable of a subset of the job's tasks: ranks, node and pid. */
	m->req.stats.nr_subsets = 2;
	m->req.stats.subsets[0] = (struct bcsp_subset){
		.kind = BCSP_SUBSET_RANKS, .a = 0, .b = 3 };
	m->req.stats.subsets[1] = (struct bcsp_subset){
		.kind = BCSP_SUBSET_PID, .a = 2, .b = 4242 };
	variant(m, "stats-subsets");
	m->req.stats.nr_subsets = 0;
	m->req.op = BCSP_OP_WINDOW;
	m->req.window.from = 7500;
	m->req.window.to = 12500;
	variant(m, "window");

	memset(&m->req, 0, sizeof(m->req));
	m->hdr.sender = 2;
	m->req.id = 10;
	m->req.op = BCSP_OP_MPI;
	m->req.job = 100;
	m->req.node = 2;
	m->req.mpi.flags = BCSP_MPI_SUB_BITS;
	m->req.mpi.sub_bits = 6;
	strcpy(m->req.mpi.sel, "all");
	m->req.mpi.len = 3;
	variant(m, "mpi");
	m->req.id = 11;
	m->req.mpi.flags = BCSP_MPI_OFF;
	m->req.mpi.sub_bits = 0;
	long_sel(m->req.mpi.sel);
	m->req.mpi.len = BCSP_MPI_SEL_LEN - 1;
	variant(m, "mpi-long");

	/*
	 * Named for a gather command, but a request (type 3, a window's)
	 * of what the command's fields leave in the union: a seed of its
	 * own all the same, kept as the corpus has it.
	 */
	m->cmd.id = 8;
	m->cmd.op = BCSP_CMD_MPI_GATHER;
	m->cmd.arg = 12;
	m->cmd.node = 2;
	m->cmd.sub_bits = 0;
	m->cmd.len = 0;
	memset(m->cmd.sel, 0, sizeof(m->cmd.sel));
	datagram("command-mpi-gather", m);

	memset(&m->req, 0, sizeof(m->req));
	m->req.id = 12;
	m->req.op = BCSP_OP_MPI_GATHER;
	m->req.job = 100;
	m->req.node = 2;
	variant(m, "mpi-gather");

	memset(&m->req, 0, sizeof(m->req));
	m->req.id = 9;
	m->req.op = BCSP_OP_ATTACH;
	m->req.job = 100;
	m->req.node = 2;
	m->req.attach.target = 3;
	m->req.attach.pid = 4321;
	variant(m, "attach");
}

static void seed_reply(struct bcsp_msg *m)
{
	/* To the request's create. */
	m->hdr.sender = 1;
	m->req.id = 77;
	m->req.op = BCSP_OP_CREATE;
	m->req.job = 100;
	m->req.row = BCS_ROW_NONE;
	m->req.error = -17;
	m->req.node = 5;
	seed(m);

	memset(&m->req, 0, sizeof(m->req));
	m->hdr.sender = 2;
	m->req.id = 12;
	m->req.op = BCSP_OP_MPI_GATHER;
	m->req.job = 100;
	m->req.node = 2;
	m->req.gather.live = 3;
	variant(m, "mpi-gather");
}

static void seed_report(struct bcsp_msg *m)
{
	m->hdr.sender = 5;
	m->report.nr_jobs = 2;
	m->report.jobs[0].job = 100;
	m->report.jobs[0].tasks = 4;
	m->report.jobs[0].birth = 0x12345678u;
	m->report.jobs[1].job = 101;
	m->report.jobs[1].tasks = 1;
	seed(m);
}

static void seed_context(struct bcsp_msg *m)
{
	m->hdr.sender = 1;
	m->ctx.version = 3;
	m->ctx.apply_slice = 123458;
	m->ctx.window_from = 130000;
	m->ctx.window_to = 140000;
	m->ctx.flags = BCSP_WINDOW_ARMED;
	m->ctx.nr_jobs = 2;
	m->ctx.jobs[0].job = 100;
	m->ctx.jobs[0].metrics = 15;
	m->ctx.jobs[0].sub_bits = 4;
	m->ctx.jobs[1].job = 101;
	m->ctx.jobs[1].release = 2;
	seed(m);
	/* Job 101 over ranks 0 .. 3 and 17, and a pid of node 2. */
	m->ctx.nr_subsets = 3;
	m->ctx.subsets[0] = (struct bcsp_subset){ 101, BCSP_SUBSET_RANKS, 0,
						  3 };
	m->ctx.subsets[1] = (struct bcsp_subset){ 101, BCSP_SUBSET_RANKS, 17,
						  17 };
	m->ctx.subsets[2] = (struct bcsp_subset){ 100, BCSP_SUBSET_PID, 2,
						  4242 };
	variant(m, "subsets");
}

static void seed_switches(struct bcsp_msg *m)
{
	m->hdr.sender = 5;
	m->sw.nr = 2;
	m->sw.s[0].slice = 123456;
	m->sw.s[0].end_max_ns = 42000;
	m->sw.s[0].end_min_ns = 42000;
	m->sw.s[0].nodes = 1;
	m->sw.s[0].rows[0].row = 1;
	m->sw.s[0].rows[0].nodes = 1;
	m->sw.s[1].slice = 123457;
	m->sw.s[1].end_max_ns = 2500000;
	m->sw.s[1].end_min_ns = -3000;
	m->sw.s[1].nodes = 3;
	m->sw.s[1].late = 1;
	m->sw.s[1].predicted = 1;
	m->sw.s[1].rows[0].row = 0;
	m->sw.s[1].rows[0].nodes = 2;
	m->sw.s[1].rows[1].row = BCSP_ROW_CLASS_NONE;
	m->sw.s[1].rows[1].nodes = 1;
	seed(m);
}

static void seed_attach(struct bcsp_msg *m)
{
	m->hdr.sender = 3;
	m->attach.parent = 2;
	seed(m);
}

static void seed_probe(struct bcsp_msg *m)
{
	m->hdr.sender = 1;
	m->probe.id = 17;
	m->probe.t1 = 1700000000123456789ULL;
	seed(m);
	/* A standby's quorum probe. */
	m->hdr.sender = 5;
	m->probe.id = BCSP_PROBE_QUORUM | 3;
	variant(m, "quorum");
}

static void seed_probe_reply(struct bcsp_msg *m)
{
	m->hdr.sender = 5;
	m->probe.id = 17;
	m->probe.t1 = 1700000000123456789ULL;
	m->probe.t2 = 1700000000123500000ULL;
	m->probe.t3 = 1700000000123520000ULL;
	seed(m);
	/* To a standby's quorum probe: one that hears a master. */
	m->probe.id = BCSP_PROBE_QUORUM | 3;
	m->probe.flags = BCSP_PROBE_HEARS;
	variant(m, "hears");
}

static void seed_tasks(struct bcsp_msg *m)
{
	m->hdr.sender = 2;
	m->tasks.nodes = 31;
	m->tasks.nr_jobs = 2;
	m->tasks.jobs[0].job = 100;
	m->tasks.jobs[0].nodes = 31;
	m->tasks.jobs[0].tasks = 124;
	m->tasks.jobs[1].job = 101;
	m->tasks.jobs[1].nodes = 3;
	m->tasks.jobs[1].tasks = 3;
	m->tasks.jobs[1].birth = 0x12345678u;
	seed(m);
}

static void seed_offsets(struct bcsp_msg *m)
{
	m->hdr.sender = 1;
	m->offsets.nr = 3;
	m->offsets.o[0].node = 2;
	m->offsets.o[0].offset = -25000;
	m->offsets.o[0].bound = 40000;
	m->offsets.o[1].node = 3;
	m->offsets.o[1].offset = 1200;
	m->offsets.o[1].bound = 900;
	m->offsets.o[2].node = 4;
	m->offsets.o[2].bound = BCSP_BOUND_NONE;
	seed(m);
}

static void seed_command(struct bcsp_msg *m)
{
	m->hdr.sender = 1;
	m->cmd.id = 4;
	m->cmd.op = BCSP_CMD_SIGNAL;
	m->cmd.job = 100;
	m->cmd.arg = 15;
	seed(m);

	m->cmd.id = 5;
	m->cmd.op = BCSP_CMD_ATTACH;
	m->cmd.arg = 4321;
	m->cmd.node = 3;
	variant(m, "attach");

	/* MPI selections: a short one, and one of the longest length. */
	m->cmd.id = 6;
	m->cmd.op = BCSP_CMD_MPI;
	m->cmd.arg = BCSP_MPI_SUB_BITS;
	m->cmd.node = 0;
	m->cmd.sub_bits = 4;
	strcpy(m->cmd.sel, "Allreduce,Isend,Barrier");
	m->cmd.len = strlen(m->cmd.sel);
	variant(m, "mpi");
	m->cmd.id = 7;
	m->cmd.arg = 0;
	m->cmd.sub_bits = 0;
	long_sel(m->cmd.sel);
	m->cmd.len = BCSP_MPI_SEL_LEN - 1;
	variant(m, "mpi-long");
}

static void seed_result(struct bcsp_msg *m)
{
	m->hdr.sender = 3;
	m->result.id = 5;
	m->result.op = BCSP_CMD_ATTACH;
	m->result.job = 100;
	m->result.arg = 4321;
	m->result.error = -3;	/* -ESRCH */
	seed(m);
}

static void seed_ack(struct bcsp_msg *m)
{
	m->hdr.sender = 3;
	m->ack.master = 1;
	m->ack.id = 5;
	seed(m);
}

static void seed_node_tasks(struct bcsp_msg *m)
{
	m->hdr.sender = 2;
	m->node_tasks.nr = 3;
	m->node_tasks.more = 1;
	m->node_tasks.e[0] = (struct bcsp_node_task){ 100, 2, 4 };
	m->node_tasks.e[1] = (struct bcsp_node_task){ 100, 5, 1 };
	m->node_tasks.e[2] = (struct bcsp_node_task){ 101, 3, 2 };
	seed(m);
}

/* A file in two parts, the last one padded; a node with none. */
static void seed_mpi_part(struct bcsp_msg *m)
{
	uint32_t i;

	m->hdr.sender = 3;
	m->part.req = 12;
	m->part.node = 2;
	m->part.job = 100;
	m->part.file = 1;
	m->part.files = 2;
	m->part.size = BCSP_MPI_PART_MAX + 5;
	m->part.len = BCSP_MPI_PART_MAX;
	for (i = 0; i < BCSP_MPI_PART_MAX; i++)
		m->part.data[i] = (uint8_t)i;
	seed(m);
	m->part.offset = BCSP_MPI_PART_MAX;
	m->part.len = 5;
	variant(m, "last");
	memset(&m->part, 0, sizeof(m->part));
	m->part.req = 12;
	m->part.node = 2;
	m->part.job = 100;
	variant(m, "none");
}

static void seed_strobe_nack(struct bcsp_msg *m)
{
	m->hdr.sender = 3;
	m->nack.slice = 42;
	m->nack.master = 1;
	seed(m);
}

static void seed_tg_part(struct bcsp_msg *m)
{
	uint32_t i;

	m->hdr.sender = 3;
	m->tg.req = 12;
	m->tg.node = 2;
	m->tg.job = 100;
	m->tg.size = BCSP_TG_PART_MAX + 5;
	m->tg.len = BCSP_TG_PART_MAX;
	for (i = 0; i < BCSP_TG_PART_MAX; i++)
		m->tg.data[i] = (uint8_t)i;
	seed(m);
	m->tg.flags = BCSP_TG_F_FINAL;
	m->tg.offset = BCSP_TG_PART_MAX;
	m->tg.len = 5;
	variant(m, "final-last");
}

static void seed_tg_nack(struct bcsp_msg *m)
{
	m->hdr.sender = 1;
	m->tg_nack.req = 12;
	m->tg_nack.node = 2;
	m->tg_nack.job = 100;
	m->tg_nack.size = 100 * BCSP_TG_PART_MAX + 7;
	m->tg_nack.parts[0] = 5;
	m->tg_nack.parts[1] = 1ULL << 36;
	seed(m);
	memset(&m->tg_nack, 0, sizeof(m->tg_nack));
	m->tg_nack.req = 12;
	m->tg_nack.node = 2;
	m->tg_nack.job = 100;
	m->tg_nack.flags = BCSP_TG_NACK_F_ALL;
	variant(m, "all");
}

/* By enum bcsp_type: every type of the table has its seeds. */
static void (*const seeds[__BCSP_TYPE_MAX])(struct bcsp_msg *m) = {
	[BCSP_STROBE]		= seed_strobe,
	[BCSP_MAP]		= seed_map,
	[BCSP_REQUEST]		= seed_request,
	[BCSP_REPLY]		= seed_reply,
	[BCSP_REPORT]		= seed_report,
	[BCSP_CONTEXT]		= seed_context,
	[BCSP_SWITCHES]		= seed_switches,
	[BCSP_ATTACH]		= seed_attach,
	[BCSP_PROBE]		= seed_probe,
	[BCSP_PROBE_REPLY]	= seed_probe_reply,
	[BCSP_TASKS]		= seed_tasks,
	[BCSP_OFFSETS]		= seed_offsets,
	[BCSP_COMMAND]		= seed_command,
	[BCSP_RESULT]		= seed_result,
	[BCSP_ACK]		= seed_ack,
	[BCSP_NODE_TASKS]	= seed_node_tasks,
	[BCSP_MPI_PART]		= seed_mpi_part,
	[BCSP_STROBE_NACK]	= seed_strobe_nack,
	[BCSP_TG_PART]		= seed_tg_part,
	[BCSP_TG_NACK]		= seed_tg_nack,
};

/* Answers of gathers reduced in the tree (fuzz_tgather). */
static void tgather_seeds(void)
{
	static uint8_t buf[TG_BLOB_MAX];
	static struct tg_answer a, b;
	struct {
		struct bcs_hist_header h;
		struct bcs_hist_bucket b[3];
	} hb = {
		.h = { .magic = BCS_HIST_MAGIC, .version = BCS_HIST_VERSION,
		       .sub_bits = 4, .nr_buckets = 3, .count = 6,
		       .sum = 5 + 2 * 900 + 3 * 70000, .min = 5,
		       .max = 70000 },
	};
	long len;

	hb.b[0].index = bcs_hist_index(5, 4);
	hb.b[0].count = 1;
	hb.b[1].index = bcs_hist_index(900, 4);
	hb.b[1].count = 2;
	hb.b[2].index = bcs_hist_index(70000, 4);
	hb.b[2].count = 3;
	tg_init(&a, 12);
	len = tg_encode(&a, buf, sizeof(buf));
	put("tgather", "empty", buf, (size_t)len);
	a.nodes = 3;
	a.missing = 1;
	a.ranks = 2;
	tg_add_prim(&a, 0, "Comm Overhead", 1, 40, 40, 100, 9000, 0, 50000);
	tg_add_prim(&a, 1, "MPI_Allreduce", 3, 20, 20, 300, 800, 160, 9000);
	tg_add_prim(&a, 1, "MPI_Test", 8, 500, 0, 0, 0, 0, 0);
	tg_add_hist(&a, TG_HIST_LAT, "MPI_Allreduce", &hb.h, hb.b);
	tg_add_hist(&a, TG_HIST_DIST, "run", &hb.h, hb.b);
	len = tg_encode(&a, buf, sizeof(buf));
	put("tgather", "mpi-dist", buf, (size_t)len);
	tg_init(&b, 12);
	hb.h.sub_bits = 7;
	hb.b[0].index = bcs_hist_index(5, 7);
	hb.b[1].index = bcs_hist_index(900, 7);
	hb.b[2].index = bcs_hist_index(70000, 7);
	tg_add_hist(&b, TG_HIST_LAT, "MPI_Allreduce", &hb.h, hb.b);
	tg_merge(&a, &b);
	len = tg_encode(&a, buf, sizeof(buf));
	put("tgather", "merged", buf, (size_t)len);
	tg_free(&a);
	tg_free(&b);
}

int main(int argc, char **argv)
{
	struct bcsp_msg m;
	unsigned int t;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds DIR\n");
		return 2;
	}
	dir = argv[1];
	mkdir(dir, 0755);

	for (t = 0; t < __BCSP_TYPE_MAX; t++) {
		if (!bcsp_type_valid(t))
			continue;
		if (!seeds[t]) {
			fprintf(stderr, "type %u (%s): no seed\n", t,
				bcsp_type_name(t));
			return 1;
		}
		memset(&m, 0, sizeof(m));
		m.hdr.type = (uint8_t)t;
		seeds[t](&m);
	}

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
	tgather_seeds();
	return 0;
}

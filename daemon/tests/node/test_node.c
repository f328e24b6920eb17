// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the node part of bcsd (node.c) against a stand-in
 * for libbcs: the jobs it makes in "bcs.ko" from the master's maps, and
 * the row it predicts with each strobe.
 *
 * Maps are named by (epoch, master, version): two standbys that take
 * over in the same tick take the same epoch and the same next version,
 * each with a map of its own, and a node that applied one must still
 * apply the other when it comes to follow its master.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "node/node.h"
#include "tests/unit.h"

/* The stand-in bcs.ko: job id -> row, NO_JOB if none (not a row). */
#define NO_JOB		(BCS_ROW_NONE - 1)
#define MAX_ID		(2 * BCS_JOBS_MAX)
static uint32_t kjobs[MAX_ID];
static struct bcs_strobe last_strobe;
static unsigned int nr_strobes;

int bcs_open(struct bcs **out)
{
	*out = NULL;
	return 0;
}

void bcs_close(struct bcs *h)
{
	(void)h;
}

int bcs_nl_open(struct bcs_nl **out)
{
	*out = NULL;
	return 0;
}

void bcs_nl_close(struct bcs_nl *nl)
{
	(void)nl;
}

int bcs_nl_drive(struct bcs_nl *nl, uint64_t slice_ns,
		 uint32_t watchdog_slices)
{
	(void)nl;
	(void)slice_ns;
	(void)watchdog_slices;
	return 0;
}

int bcs_nl_release(struct bcs_nl *nl)
{
	(void)nl;
	return 0;
}

int bcs_nl_strobe_send(struct bcs_nl *nl, const struct bcs_strobe *s)
{
	(void)nl;
	last_strobe = *s;
	nr_strobes++;
	return 0;
}

int bcs_job_create(struct bcs *h, uint32_t id, uint32_t row,
		   uint32_t *id_out)
{
	(void)h;
	(void)id_out;
	if (!id || id >= MAX_ID)
		return -EINVAL;
	if (kjobs[id] != NO_JOB)
		return -EEXIST;
	kjobs[id] = row;
	return 0;
}

int bcs_job_destroy(struct bcs *h, uint32_t id)
{
	(void)h;
	if (!id || id >= MAX_ID || kjobs[id] == NO_JOB)
		return -ENOENT;
	kjobs[id] = NO_JOB;
	return 0;
}

int bcs_job_set_row(struct bcs *h, uint32_t id, uint32_t row)
{
	(void)h;
	if (!id || id >= MAX_ID || kjobs[id] == NO_JOB)
		return -ENOENT;
	kjobs[id] = row;
	return 0;
}

/* Row sets and the slices their changes wait for, by job. */
static uint64_t ksets[MAX_ID], kat[MAX_ID];
/* Owners (bcsd runs as root: 0 without one) and tasks, by job. */
static uint32_t kowners[MAX_ID], ktasks[MAX_ID];
static unsigned int nr_owned_creates;

int bcs_job_create_rows(struct bcs *h, uint32_t id, uint32_t row,
			uint64_t rows, uint32_t *id_out)
{
	int err = bcs_job_create(h, id, row, id_out);

	if (!err) {
		ksets[id] = rows;
		kat[id] = 0;
		kowners[id] = 0;
		ktasks[id] = 0;
	}
	return err;
}

int bcs_job_create_rows_owned(struct bcs *h, uint32_t id, uint32_t row,
			      uint64_t rows, uid_t owner, uint32_t *id_out)
{
	int err;

	if (owner == (uid_t)-1)
		return -EINVAL;
	err = bcs_job_create_rows(h, id, row, rows, id_out);
	if (!err) {
		kowners[id] = (uint32_t)owner;
		nr_owned_creates++;
	}
	return err;
}

int bcs_job_set_rows(struct bcs *h, uint32_t id, uint32_t row, uint64_t rows,
		     uint64_t at_slice)
{
	int err = bcs_job_set_row(h, id, row);

	if (!err) {
		ksets[id] = rows;
		kat[id] = at_slice;
	}
	return err;
}

int bcs_job_list(struct bcs *h, struct bcs_job_info **out, size_t *n)
{
	uint32_t i;

	(void)h;
	*out = calloc(MAX_ID, sizeof(**out));
	*n = 0;
	if (!*out)
		return -ENOMEM;
	for (i = 1; i < MAX_ID; i++) {
		if (kjobs[i] == NO_JOB)
			continue;
		(*out)[*n].id = i;
		(*out)[*n].row = kjobs[i];
		(*out)[*n].rows = ksets[i];
		(*out)[*n].owner = kowners[i];
		(*out)[*n].nr_tasks = ktasks[i];
		(*n)++;
	}
	return 0;
}

const char *bcs_strerror(int err, enum bcs_err_ctx ctx)
{
	(void)ctx;
	return strerror(-err);
}

/* The rest of bcsd that node.c calls. */
uint64_t now_real_ns(void)
{
	return 1;
}

/* The handlers node.c registers, called as the dispatcher would. */
static dispatch_fn *handler[__BCSP_TYPE_MAX];

void dispatch_register(struct bcsd *d, enum bcsp_type type, dispatch_fn *fn)
{
	(void)d;
	handler[type] = fn;
}

void dispatch(struct bcsd *d, const struct bcsp_msg *m,
	      const struct bcsd_origin *from)
{
	(void)d;
	(void)m;
	(void)from;
}

/* No tree of daemons here: the group, as ever. */
bool tree_transport(const struct bcsd *d)
{
	(void)d;
	return false;
}

bool net_tree(const struct bcsd *d)
{
	(void)d;
	return false;
}

int bcs_task_stats(struct bcs *h, uint32_t job, struct bcs_task_stat **out,
		   size_t *n)
{
	(void)h;
	(void)job;
	*out = NULL;
	*n = 0;
	return -ENOENT;
}

void reduce_report(struct bcsd *d, const struct bcsp_report *rep)
{
	(void)d;
	(void)rep;
}

/* What node.c last sent, and how often. */
static struct bcsp_msg sent_msg;
static unsigned int nr_sent;

int net_send(struct bcsd *d, struct bcsp_msg *m, const struct sockaddr_in *to)
{
	(void)d;
	(void)to;
	sent_msg = *m;
	nr_sent++;
	return 0;
}

/* The attaches node.c asked of bcs.ko; -ESRCH for pid 666. */
static unsigned int nr_attaches;
static uint32_t attach_job;
static pid_t attach_pid;

int bcs_attach(struct bcs *h, uint32_t job, pid_t pid, uint32_t flags,
	       uint32_t *nr)
{
	(void)h;
	(void)flags;
	nr_attaches++;
	attach_job = job;
	attach_pid = pid;
	if (nr)
		*nr = pid == 666 ? 0 : 1;
	return pid == 666 ? -ESRCH : 0;
}

uint64_t now_mono_ms(void)
{
	return 1000;
}

/* node.c's tick, which sends the reports. */
static loop_fn *node_tick_fn;

int loop_on_tick(struct bcsd *d, loop_fn *fn, void *arg)
{
	(void)d;
	(void)arg;
	node_tick_fn = fn;
	return 0;
}

void log_msg(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

static struct bcsd d;

static void reset(void)
{
	uint32_t i;

	memset(&d, 0, sizeof(d));
	cfg_init(&d.cfg);
	d.node_role = true;
	d.node_id = 9;
	for (i = 0; i < MAX_ID; i++) {
		kjobs[i] = NO_JOB;
		ksets[i] = 0;
		kat[i] = 0;
		kowners[i] = 0;
		ktasks[i] = 0;
	}
	nr_owned_creates = 0;
	nr_strobes = 0;
	memset(handler, 0, sizeof(handler));
	CHECK(node_init(&d) == 0);
	CHECK(handler[BCSP_STROBE] && handler[BCSP_MAP]);
}

/* A map from master @master of @epoch, as the network brings it. */
static void node_on_map(struct bcsd *dd, uint32_t epoch, uint32_t master,
			const struct bcsp_whole_map *map)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_MAP } };
	struct bcsd_origin from = { .local = false };

	m.hdr.epoch = epoch;
	m.hdr.sender = master;
	/* Whole in d->followed.map, as rx.c leaves it; @m its last part. */
	bcsp_map_fill_part(map, bcsp_map_parts(map->nr_jobs) - 1, &m.map);
	followed_set_map(dd, map, epoch, master);
	handler[BCSP_MAP](dd, &m, &from);
}

static void node_on_strobe(struct bcsd *dd, const struct bcsp_msg *m)
{
	struct bcsd_origin from = { .local = false };

	handler[BCSP_STROBE](dd, m, &from);
}

static void add(struct bcsp_whole_map *m, uint32_t job, uint32_t row,
		uint32_t birth)
{
	m->jobs[m->nr_jobs].job = job;
	m->jobs[m->nr_jobs].row = row;
	m->jobs[m->nr_jobs].rows = row < BCS_ROWS_MAX ? 1ULL << row : 0;
	m->jobs[m->nr_jobs].birth = birth;
	m->nr_jobs++;
}

/*
 * Standbys 1 and 2 both took over from a master of epoch 4 with epoch 5,
 * and both stepped its map version 2 on to 3, placing the jobs they
 * learnt each in its own way.  The node followed 1 first, then 2 (more
 * senior): 2's map must replace 1's in bcs.ko.
 */
static void test_same_epoch_and_version(void)
{
	struct bcsp_whole_map a = { .version = 3 }, b = { .version = 3 };

	reset();
	add(&a, 10, 0, 0x1001);
	add(&a, 11, 1, 0x1101);
	add(&b, 10, 1, 0x1001);
	add(&b, 12, 0, 0x1201);

	node_on_map(&d, 5, 1, &a);
	CHECK(kjobs[10] == 0 && kjobs[11] == 1 && kjobs[12] == NO_JOB);
	CHECK(d.cnt.maps_applied == 1);
	/* The same map again, as resent: nothing to do. */
	node_on_map(&d, 5, 1, &a);
	CHECK(d.cnt.maps_applied == 1);

	node_on_map(&d, 5, 2, &b);
	CHECK(d.cnt.maps_applied == 2);
	CHECK(kjobs[10] == 1);
	CHECK(kjobs[11] == NO_JOB);
	CHECK(kjobs[12] == 0);
	CHECK(d.local.nr_jobs == 2);
	node_on_map(&d, 5, 2, &b);
	CHECK(d.cnt.maps_applied == 2);

	/* Back to 1 (say 2 stepped down for it): 1's map again. */
	node_on_map(&d, 5, 1, &a);
	CHECK(d.cnt.maps_applied == 3);
	CHECK(kjobs[10] == 0 && kjobs[11] == 1 && kjobs[12] == NO_JOB);
}

/*
 * Maps 4 (job 10) and 5 (jobs 10 and 11) of one master, the second come
 * first: map 4, late, must not destroy job 11.  Versions wrap.
 */
static void test_older_map_late(void)
{
	struct bcsp_whole_map a = { .version = 4 }, b = { .version = 5 };

	reset();
	add(&a, 10, 0, 0x1001);
	add(&b, 10, 0, 0x1001);
	add(&b, 11, 1, 0x1101);
	node_on_map(&d, 7, 1, &b);
	CHECK(kjobs[10] == 0 && kjobs[11] == 1);
	node_on_map(&d, 7, 1, &a);
	CHECK(kjobs[11] == 1 && d.cnt.maps_applied == 1 &&
	      d.cnt.maps_stale == 1);
	/* Another master's older version is its own: applied. */
	node_on_map(&d, 7, 2, &a);
	CHECK(kjobs[11] == NO_JOB && d.cnt.maps_applied == 2);

	reset();
	a.version = 0xffffffffu;
	b.version = 0;
	node_on_map(&d, 7, 1, &a);
	node_on_map(&d, 7, 1, &b);
	CHECK(kjobs[11] == 1 && d.cnt.maps_applied == 2);
	node_on_map(&d, 7, 1, &a);
	CHECK(kjobs[11] == 1 && d.cnt.maps_stale == 1);
}

static struct bcsp_msg strobe(uint32_t master, uint32_t epoch,
			      uint32_t version, uint32_t row)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_STROBE } };

	m.hdr.sender = master;
	m.hdr.epoch = epoch;
	m.strobe.slice = 100;
	m.strobe.deadline_ns = 1000000000;
	m.strobe.slice_ns = 10000000;
	m.strobe.row = row;
	m.strobe.map_version = version;
	return m;
}

/* As rx.c does with a map from the master it follows. */
static void hold_and_apply(uint32_t epoch, uint32_t master,
			   const struct bcsp_whole_map *m)
{
	followed_set_map(&d, m, epoch, master);
	node_on_map(&d, epoch, master, m);
}

/* Afresh, map 3 of master 1, epoch 5: jobs 10 (row 0) and 11 (row 2). */
static void two_jobs_held(void)
{
	static struct bcsp_whole_map a;

	memset(&a, 0, sizeof(a));
	a.version = 3;
	reset();
	add(&a, 10, 0, 0x1001);
	add(&a, 11, 2, 0x1101);
	hold_and_apply(5, 1, &a);
}

/*
 * The row predicted with a strobe comes from the map the strobe names:
 * not from another master's map of the same epoch and version.
 */
static void test_predict_names_the_master(void)
{
	struct bcsp_msg m;

	two_jobs_held();

	m = strobe(1, 5, 3, 0);
	node_on_strobe(&d, &m);
	CHECK(nr_strobes == 1);
	CHECK(last_strobe.flags & BCS_STROBE_PREDICT);
	CHECK(last_strobe.next_row == 2);

	/* Master 2's strobe, same epoch and version: its map is not here. */
	m = strobe(2, 5, 3, 0);
	node_on_strobe(&d, &m);
	CHECK(nr_strobes == 2);
	CHECK(!(last_strobe.flags & BCS_STROBE_PREDICT));

	/* Another version or epoch of master 1: not this map either. */
	m = strobe(1, 5, 4, 0);
	node_on_strobe(&d, &m);
	CHECK(!(last_strobe.flags & BCS_STROBE_PREDICT));
	m = strobe(1, 6, 3, 0);
	node_on_strobe(&d, &m);
	CHECK(!(last_strobe.flags & BCS_STROBE_PREDICT));
}

/*
 * A strobe that names a map this node does not have (its copy was lost)
 * runs a row that holds none of the node's jobs, and predicts nothing:
 * the strobe's row may hold other jobs at the master.  Once the map has
 * come, strobes run their rows again.
 */
static void test_stale_map_runs_no_gang(void)
{
	struct bcsp_whole_map a = { .version = 3 }, b = { .version = 4 };
	struct bcsp_msg m;

	reset();
	add(&a, 10, 0, 0x1001);
	add(&a, 11, 2, 0x1101);
	add(&b, 10, 1, 0x1001);		/* moved */
	add(&b, 12, 0, 0x1201);		/* made; 11 destroyed */
	hold_and_apply(5, 1, &a);

	m = strobe(1, 5, 3, 0);
	node_on_strobe(&d, &m);
	CHECK(nr_strobes == 1 && last_strobe.row == 0);
	CHECK(d.cnt.strobes_stale_map == 0);
	/* expire (default on): the row ends with its slices. */
	CHECK(last_strobe.flags & BCS_STROBE_EXPIRE);

	/* Map 4 lost: row 0 holds 12 at the master, 10 here. */
	m = strobe(1, 5, 4, 0);
	node_on_strobe(&d, &m);
	CHECK(nr_strobes == 2);
	CHECK(last_strobe.row == 63);	/* the highest row without a job */
	CHECK(!(last_strobe.flags & BCS_STROBE_PREDICT));
	CHECK(d.cnt.strobes_stale_map == 1);
	/* Nor any map at all, as after a restart. */
	m = strobe(2, 6, 1, 2);
	node_on_strobe(&d, &m);
	CHECK(last_strobe.row == 63);
	CHECK(d.cnt.strobes_stale_map == 2);

	hold_and_apply(5, 1, &b);
	m = strobe(1, 5, 4, 1);
	node_on_strobe(&d, &m);
	CHECK(last_strobe.row == 1 && kjobs[10] == 1);
	CHECK(last_strobe.flags & BCS_STROBE_PREDICT);
	CHECK(last_strobe.next_row == 0);
	CHECK(d.cnt.strobes_stale_map == 2);
}

/*
 * A strobe with a plan goes to bcs.ko as one (BCS_STROBE_PLAN, its slices
 * and rows), with no prediction: the overlap of plans stands in for it.
 * With the map it names lost, the plan runs the idle row throughout.
 */
static void test_plan_to_kernel(void)
{
	struct bcsp_msg m;

	two_jobs_held();

	m = strobe(1, 5, 3, 2);
	m.strobe.plan_slices = 20;
	m.strobe.plan_next = 10;
	m.strobe.plan_rows = 0x5;
	node_on_strobe(&d, &m);
	CHECK(nr_strobes == 1);
	CHECK(last_strobe.flags & BCS_STROBE_PLAN);
	CHECK(!(last_strobe.flags & BCS_STROBE_PREDICT));
	CHECK(last_strobe.plan_slices == 20 && last_strobe.plan_rows == 0x5);
	CHECK(last_strobe.row == 2 && last_strobe.slice == 100);

	/* Map 4 not here: the idle row, in every planned slice. */
	m.strobe.map_version = 4;
	node_on_strobe(&d, &m);
	CHECK(nr_strobes == 2 && last_strobe.row == 63);
	CHECK(last_strobe.flags & BCS_STROBE_PLAN);
	CHECK(last_strobe.plan_slices == 20 && last_strobe.plan_rows == 0);

	/* No plan: none to bcs.ko, a prediction as ever. */
	m = strobe(1, 5, 3, 0);
	node_on_strobe(&d, &m);
	CHECK(!(last_strobe.flags & BCS_STROBE_PLAN));
	CHECK(!last_strobe.plan_slices && !last_strobe.plan_rows);
	CHECK(last_strobe.flags & BCS_STROBE_PREDICT);
}

/* The strobe of slice @slice from master @master (strobe()) to the node. */
static void strobe_in(uint64_t slice, uint32_t master, uint32_t epoch,
		      uint32_t version, uint32_t row)
{
	struct bcsp_msg m = strobe(master, epoch, version, row);

	m.strobe.slice = slice;
	node_on_strobe(&d, &m);
}

/*
 * A map whose rows take effect at slice 110: bcs.ko is told so (the
 * change waits there), and the strobes before it name the map in force,
 * the one before: they run their rows and predict from it; from slice 110
 * the new one.  A change before 110 that joins it (the same slice) keeps
 * the old one in force until then.  Alternate rows reach bcs.ko.
 */
static void test_map_at_slice(void)
{
	struct bcsp_whole_map a = { .version = 3 }, b = { .version = 4 };
	static struct bcsp_whole_map c;

	reset();
	add(&a, 10, 0, 0x1001);
	add(&a, 11, 1, 0x1101);
	hold_and_apply(5, 1, &a);
	CHECK(kjobs[10] == 0 && kat[10] == 0);
	b = a;
	b.version = 4;
	b.apply_slice = 110;
	b.jobs[0].row = 1;		/* 10 moves to row 1... */
	b.jobs[0].rows = 0x2;
	b.jobs[1].row = 0;		/* ...11 to row 0, and runs in 1 too */
	b.jobs[1].rows = 0x3;
	hold_and_apply(5, 1, &b);
	CHECK(kjobs[10] == 1 && ksets[10] == 0x2 && kat[10] == 110);
	CHECK(ksets[11] == 0x3 && kat[11] == 110);

	/* Slice 100 names version 3, in force until 110. */
	strobe_in(100, 1, 5, 3, 1);
	CHECK(last_strobe.row == 1 && d.cnt.strobes_stale_map == 0);
	CHECK(last_strobe.flags & BCS_STROBE_PREDICT);
	CHECK(last_strobe.next_row == 0);
	/* Version 4 named before its slice: not the map in force here. */
	strobe_in(100, 1, 5, 4, 1);
	CHECK(last_strobe.row == 63 && d.cnt.strobes_stale_map == 1);
	/* From slice 110 on, version 4. */
	strobe_in(110, 1, 5, 4, 0);
	CHECK(last_strobe.row == 0 && d.cnt.strobes_stale_map == 1);
	/* Slice 109 predicts slice 110's row from version 4's rows. */
	strobe_in(109, 1, 5, 3, 0);
	CHECK(last_strobe.row == 0 && (last_strobe.flags & BCS_STROBE_PREDICT));

	/* Version 5 joins 4 at slice 110: version 3 stays in force before. */
	c = b;
	c.version = 5;
	c.jobs[0].rows = 0x2;
	hold_and_apply(5, 1, &c);
	strobe_in(100, 1, 5, 3, 1);
	CHECK(last_strobe.row == 1 && d.cnt.strobes_stale_map == 1);
	strobe_in(111, 1, 5, 5, 1);
	CHECK(last_strobe.row == 1 && d.cnt.strobes_stale_map == 1);
}

/* Command @op (@id) of master 1, epoch 5, as the network brings it. */
static void node_on_command(uint32_t id, uint32_t op, uint32_t job,
			    uint32_t arg, uint32_t node)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_COMMAND } };
	struct bcsd_origin from = { .local = false };

	m.hdr.epoch = 5;
	m.hdr.sender = 1;
	m.cmd.id = id;
	m.cmd.op = op;
	m.cmd.job = job;
	m.cmd.arg = arg;
	m.cmd.node = node;
	handler[BCSP_COMMAND](&d, &m, &from);
}

/*
 * An attach is carried out on its node only, once per command id
 * whatever the copies and their order, and its result goes to the
 * master with bcs.ko's error.
 */
static void test_attach_command(void)
{
	reset();
	CHECK(handler[BCSP_COMMAND] != NULL);
	d.followed.known = true;
	d.followed.id = 1;
	d.followed.epoch = 5;
	nr_attaches = 0;
	nr_sent = 0;
	/* Another node's: nothing here. */
	node_on_command(3, BCSP_CMD_ATTACH, 10, 4242, 8);
	CHECK(nr_attaches == 0 && nr_sent == 0);
	node_on_command(4, BCSP_CMD_ATTACH, 10, 4242, 9);
	CHECK(nr_attaches == 1 && attach_job == 10 && attach_pid == 4242);
	CHECK(nr_sent == 1 && sent_msg.hdr.type == BCSP_RESULT &&
	      sent_msg.hdr.epoch == 5 && sent_msg.result.id == 4 &&
	      sent_msg.result.op == BCSP_CMD_ATTACH &&
	      sent_msg.result.job == 10 && sent_msg.result.arg == 4242 &&
	      sent_msg.result.error == 0);
	CHECK(d.cnt.attaches == 1 && d.cnt.attach_failures == 0);
	/* A copy of it: not again. */
	node_on_command(4, BCSP_CMD_ATTACH, 10, 4242, 9);
	CHECK(nr_attaches == 1 && nr_sent == 1);
	/* No such process: the error goes back. */
	node_on_command(6, BCSP_CMD_ATTACH, 10, 666, 9);
	CHECK(nr_attaches == 2 && nr_sent == 2 &&
	      sent_msg.result.id == 6 && sent_msg.result.error == -ESRCH);
	CHECK(d.cnt.attach_failures == 1);
	/* Id 5 came late, after 6 (sent again by a parent): taken once. */
	node_on_command(5, BCSP_CMD_ATTACH, 11, 4243, 9);
	CHECK(nr_attaches == 3 && attach_job == 11 && nr_sent == 3);
	node_on_command(5, BCSP_CMD_ATTACH, 11, 4243, 9);
	CHECK(nr_attaches == 3 && nr_sent == 3);
}

/*
 * Maps of more than 64 jobs (the old bound), up to BCSP_MAP_JOBS_MAX: every
 * job reaches bcs.ko and the local table, a smaller map then destroys the
 * jobs it lacks (the walk of sorted ids in node.c), and the history keeps
 * BCSD_MAP_EVENT_JOBS of each map.
 */
static void test_big_map(void)
{
	static struct bcsp_whole_map a = { .version = 3 }, b = { .version = 4 };
	uint32_t i, n;

	reset();
	/* Ids from the top down: the local table keeps them in order. */
	for (i = BCSP_MAP_JOBS_MAX; i >= 1; i--)
		add(&a, i, i % 4, 0x10000 + i);
	hold_and_apply(5, 1, &a);
	CHECK(d.cnt.maps_applied == 1 && d.cnt.kernel_errors == 0);
	CHECK(d.local.nr_jobs == BCSP_MAP_JOBS_MAX);
	for (i = 1, n = 0; i <= BCSP_MAP_JOBS_MAX; i++)
		n += kjobs[i] == i % 4;
	CHECK(n == BCSP_MAP_JOBS_MAX);
	for (i = 1; i < d.local.nr_jobs; i++)
		if (d.local.jobs[i - 1] >= d.local.jobs[i])
			break;
	CHECK(i == d.local.nr_jobs);
	CHECK(view_local_job(&d, 4096, &n) && n == 4095 &&
	      d.local.births[n] == 0x10000 + 4096);
	CHECK(d.node.history[0].nr_jobs == BCSP_MAP_JOBS_MAX &&
	      d.node.history[0].job[0] == 4096 &&
	      d.node.history[0].job[BCSD_MAP_EVENT_JOBS - 1] ==
	      4096 - BCSD_MAP_EVENT_JOBS + 1);

	/* 100 of them, the even ids to 200, in row 1: the rest go. */
	for (i = 2; i <= 200; i += 2)
		add(&b, i, 1, 0x10000 + i);
	hold_and_apply(5, 1, &b);
	CHECK(d.cnt.maps_applied == 2 && d.local.nr_jobs == 100);
	for (i = 1, n = 0; i <= BCSP_MAP_JOBS_MAX; i++)
		n += kjobs[i] != NO_JOB;
	CHECK(n == 100);
	CHECK(kjobs[2] == 1 && kjobs[200] == 1 && kjobs[1] == NO_JOB &&
	      kjobs[202] == NO_JOB && kjobs[4096] == NO_JOB);
	CHECK(view_local_job(&d, 200, NULL) && !view_local_job(&d, 199, NULL));
	/* The one part the message held said nothing: the whole map did. */
	CHECK(d.followed.map.nr_jobs == 100);
}

/*
 * Owners: each job of the map is made in bcs.ko with the map's owner
 * (root's the plain way); a job already there with another owner is made
 * again with the map's while it has no task, kept with tasks and said
 * once; a map that does not know the owner changes nothing.  A job of
 * the map that bcs.ko lost (reaped, empty and owned by a user) is made
 * again, with its owner, at the next report.
 */
static void test_owners(void)
{
	static struct bcsp_whole_map a = { .version = 3 }, b = { .version = 4 };
	static struct bcsp_whole_map c;

	reset();
	/* Left by a bcsd before: 6 empty, 7 with tasks, both root's. */
	CHECK(bcs_job_create_rows(NULL, 6, 0, 0, NULL) == 0 &&
	      bcs_job_create_rows(NULL, 7, 0, 0, NULL) == 0 &&
	      bcs_job_create_rows(NULL, 8, 0, 0, NULL) == 0);
	ktasks[7] = 2;
	kowners[8] = 4321;
	add(&a, 5, 0, 0x51);
	a.jobs[0].owner = 65534;
	add(&a, 6, 0, 0x61);
	a.jobs[1].owner = 1000;
	add(&a, 7, 1, 0x71);
	a.jobs[2].owner = 1000;
	add(&a, 8, 1, 0x81);
	a.jobs[3].owner = BCSP_OWNER_NONE;
	add(&a, 9, 2, 0x91);
	hold_and_apply(5, 1, &a);
	CHECK(d.cnt.maps_applied == 1 && d.cnt.kernel_errors == 0);
	CHECK(kowners[5] == 65534 && kjobs[5] == 0 && ksets[5] == 1);
	CHECK(kowners[6] == 1000 && kjobs[6] == 0);
	CHECK(kowners[7] == 0 && ktasks[7] == 2 && kjobs[7] == 1);
	CHECK(kowners[8] == 4321 && kowners[9] == 0);
	/* 5 and 6 only: root's (9) the plain way. */
	CHECK(nr_owned_creates == 2);
	CHECK(d.cnt.jobs_reowned == 1 && d.cnt.jobs_owner_kept == 1);
	CHECK(view_local_job(&d, 7, NULL) && view_local_job(&d, 6, NULL));

	/* The next map: 7 is kept, and said no more (counted again). */
	b = a;
	b.version = 4;
	hold_and_apply(5, 1, &b);
	CHECK(d.cnt.maps_applied == 2 && d.cnt.jobs_owner_kept == 2 &&
	      d.cnt.jobs_reowned == 1 && kowners[7] == 0);
	/* Its tasks gone: made again for its owner. */
	ktasks[7] = 0;
	c = a;
	c.version = 5;
	hold_and_apply(5, 1, &c);
	CHECK(kowners[7] == 1000 && kjobs[7] == 1 && d.cnt.jobs_reowned == 2);

	/* bcs.ko reaps 5 (empty, a user's): the next report makes it again. */
	CHECK(bcs_job_destroy(NULL, 5) == 0 && kjobs[5] == NO_JOB);
	d.followed.known = true;
	d.node.reported_ms = 0;
	CHECK(node_tick_fn != NULL);
	node_tick_fn(&d, NULL);
	CHECK(kjobs[5] == 0 && kowners[5] == 65534 && ksets[5] == 1 &&
	      d.cnt.jobs_restored == 1);
	/* Nothing to do the next time. */
	d.node.reported_ms = 0;
	node_tick_fn(&d, NULL);
	CHECK(d.cnt.jobs_restored == 1 && d.cnt.kernel_errors == 0);
}

int main(void)
{
	test_owners();
	test_big_map();
	test_map_at_slice();
	test_attach_command();
	test_stale_map_runs_no_gang();
	test_same_epoch_and_version();
	test_older_map_late();
	test_predict_names_the_master();
	test_plan_to_kernel();
	return unit_done("test_node");
}

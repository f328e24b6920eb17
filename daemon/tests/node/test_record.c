// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of what a node records (record.c) against a stand-in
 * for libbcs and the rest of bcsd: a statistics context takes effect in
 * bcs.ko at the strobe of its apply slice, not before, so that every
 * node starts (and stops) recording in the same slice; a node that comes
 * to it later applies it at its first strobe; a newer version waits for
 * its own apply slice.  A job with subsets records only the tasks they
 * name on this node, its ranks' found in the job's MPI files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bcs_mpi.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "node/mpidir.h"
#include "node/record.h"
#include "tests/unit.h"

static dispatch_fn *on_strobe;
static uint64_t strobe_slice;		/* of the strobe being handled */
static uint64_t enabled_at, disabled_at, window_at;
static unsigned int enables, disables, windows;

/*
 * The tasks that record, as bcs.ko would have them: pid -> metrics (0:
 * the whole job's), and per call the slice; pid 9999 is no task of the
 * job (-ESRCH).
 */
#define TASKS	8
static struct {
	int32_t pid;
	uint32_t metrics;
	uint64_t at;
} tasks[TASKS];
static uint32_t whole_job;	/* the whole job's metrics */

static void task_set(int32_t pid, uint32_t op, uint32_t metrics)
{
	int i, free_i = -1;

	for (i = 0; i < TASKS; i++) {
		if (tasks[i].pid == pid)
			break;
		if (!tasks[i].pid && free_i < 0)
			free_i = i;
	}
	if (i == TASKS) {
		CHECK(free_i >= 0);
		if (free_i < 0)
			return;
		i = free_i;
		tasks[i].pid = pid;
	}
	if (op == BCS_DIST_ENABLE)
		tasks[i].metrics |= metrics;
	else
		tasks[i].metrics &= ~metrics;
	tasks[i].at = strobe_slice;
}

static uint32_t task_metrics(int32_t pid)
{
	int i;

	for (i = 0; i < TASKS; i++)
		if (tasks[i].pid == pid)
			return tasks[i].metrics;
	return 0;
}

int bcs_dist_ctl(struct bcs *h, uint32_t job, uint32_t op, uint32_t metrics,
		 uint32_t sub_bits, const int32_t *pids, uint32_t nr_pids)
{
	uint32_t i;

	(void)h;
	(void)job;
	(void)sub_bits;
	for (i = 0; i < nr_pids; i++)
		if (pids[i] == 9999)
			return -ESRCH;
	for (i = 0; i < nr_pids; i++)
		task_set(pids[i], op, metrics);
	if (!nr_pids && op == BCS_DIST_ENABLE)
		whole_job |= metrics;
	else if (!nr_pids)
		whole_job &= ~metrics;
	if (op == BCS_DIST_ENABLE) {
		enables++;
		enabled_at = strobe_slice;
	} else if (op == BCS_DIST_DISABLE) {
		disables++;
		disabled_at = strobe_slice;
	}
	return 0;
}

int bcs_window_set(struct bcs *h, uint64_t from, uint64_t to)
{
	(void)h;
	(void)from;
	(void)to;
	windows++;
	window_at = strobe_slice;
	return 0;
}

int bcs_window_clear(struct bcs *h)
{
	(void)h;
	return 0;
}

const char *bcs_strerror(int err, enum bcs_err_ctx ctx)
{
	(void)ctx;
	return strerror(-err);
}

void dispatch_register(struct bcsd *d, enum bcsp_type type, dispatch_fn *fn)
{
	(void)d;
	if (type == BCSP_STROBE)
		on_strobe = fn;
}

int loop_on_tick(struct bcsd *d, loop_fn *fn, void *arg)
{
	(void)d;
	(void)fn;
	(void)arg;
	return 0;
}

void log_msg(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

uint64_t now_mono_ms(void)
{
	return 1000;
}

bool view_local_job(const struct bcsd *d, uint32_t job, uint32_t *idx)
{
	(void)d;
	if (idx)
		*idx = 0;
	return job == 5;
}

static void strobe(struct bcsd *d, uint64_t slice)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_STROBE } };

	m.strobe.slice = slice;
	strobe_slice = slice;
	on_strobe(d, &m, &(struct bcsd_origin){ .local = false });
}

static void context(struct bcsd *d, uint32_t version, uint64_t apply,
		    uint8_t metrics)
{
	struct bcsp_context *c = &d->followed.ctx;

	d->followed.have_ctx = true;
	d->followed.ctx_epoch = 1;
	d->followed.ctx_master = 1;
	memset(c, 0, sizeof(*c));
	c->version = version;
	c->apply_slice = apply;
	c->nr_jobs = 1;
	c->jobs[0].job = 5;
	c->jobs[0].metrics = metrics;
	c->jobs[0].sub_bits = 2;
	c->flags = BCSP_WINDOW_ARMED;
	c->window_from = apply + 50;
	c->window_to = apply + 60;
}

/* A statistics file of rank @rank, process @pid, in @dir as @name. */
static void rank_file(const char *dir, const char *name, int32_t rank,
		      int32_t pid, bool magic)
{
	struct bcs_mpi_file_header h;
	char path[512];
	FILE *f;

	memset(&h, 0, sizeof(h));
	h.magic = magic ? BCS_MPI_MAGIC : 0;
	h.version = BCS_MPI_VERSION;
	h.header_size = sizeof(h);
	h.rank = rank;
	h.pid = pid;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f && fwrite(&h, sizeof(h), 1, f) == 1);
	if (f)
		fclose(f);
}

static void subset(struct bcsp_context *c, uint32_t kind, uint32_t a,
		   uint32_t b)
{
	c->subsets[c->nr_subsets++] = (struct bcsp_subset){ 5, kind, a, b };
}

/*
 * Subsets: node 2 resolves the ranks named to its processes through the
 * job's MPI files (a rank elsewhere, a file still in MPI_Init, a link
 * are nothing), takes the pids given for it and not those of others, and
 * enables them alone, at the strobe of the apply slice.
 */
static void test_subsets(void)
{
	struct bcsd *d = calloc(1, sizeof(*d));
	char dir[] = "/tmp/test_record.XXXXXX", path[700], job[600];
	struct bcsp_context *c;
	struct bcsd_record_pids p;
	struct mpidir_rank ranks[2] = { { 3, 30 }, { 4, 40 } };
	uint64_t s;

	if (!d || !mkdtemp(dir)) {
		CHECK(0);
		free(d);
		return;
	}
	/* The pure part first: pids of node 2 and ranks 3 .. 4. */
	c = &d->followed.ctx;
	c->nr_jobs = 1;
	c->jobs[0].job = 5;
	subset(c, BCSP_SUBSET_PID, 2, 700);
	subset(c, BCSP_SUBSET_PID, 3, 800);
	subset(c, BCSP_SUBSET_RANKS, 4, 9);
	subset(c, BCSP_SUBSET_PID, 2, 700);
	record_subset_pids(c, 5, 2, ranks, 2, &p);
	CHECK(p.subset && p.ranks && p.nr == 2 && p.pid[0] == 700 &&
	      p.pid[1] == 40);
	record_subset_pids(c, 6, 2, ranks, 2, &p);
	CHECK(p.subset && !p.ranks && p.nr == 0 && !p.over);
	/* More processes than a job records here: the first, and said. */
	{
		static struct mpidir_rank many[RECORD_PIDS_MAX + 5];
		unsigned int i;

		for (i = 0; i < RECORD_PIDS_MAX + 5; i++)
			many[i] = (struct mpidir_rank){ i, (int32_t)(100 + i) };
		subset(c, BCSP_SUBSET_RANKS, 0, BCSP_RANK_MAX);
		record_subset_pids(c, 5, 2, many, RECORD_PIDS_MAX + 5, &p);
		CHECK(p.nr == RECORD_PIDS_MAX && p.over && p.pid[0] == 700 &&
		      p.pid[1] == 104 && p.pid[7] == 100);
	}
	memset(c, 0, sizeof(*c));

	snprintf(job, sizeof(job), "%s/5", dir);
	CHECK(!mkdir(job, 0700));
	rank_file(job, "5.h.0.1000.bcsmpi", 0, 1000, true);
	rank_file(job, "5.h.1.1001.bcsmpi", 1, 1001, true);
	rank_file(job, "5.h.2.1002.bcsmpi", 2, 1002, true);
	rank_file(job, "5.h.3.1003.bcsmpi", 3, 1003, false);	/* MPI_Init */
	rank_file(job, "6.h.1.1101.bcsmpi", 1, 1101, true);	/* job 6 */
	rank_file(job, "5.h.4.9999.bcsmpi", 4, 9999, true);	/* no task */
	snprintf(path, sizeof(path), "%s/5.h.1.1001.bcsmpi", job);
	snprintf(job + strlen(job), sizeof(job) - strlen(job),
		 "/5.h.5.1005.bcsmpi");
	CHECK(!symlink(path, job));	/* a link: not followed */

	memset(tasks, 0, sizeof(tasks));
	whole_job = 0;
	d->node_id = 2;
	snprintf(d->cfg.mpi_dir, sizeof(d->cfg.mpi_dir), "%s", dir);
	CHECK(!record_init(d));
	context(d, 1, 100, 1);
	c = &d->followed.ctx;
	subset(c, BCSP_SUBSET_RANKS, 0, 1);
	subset(c, BCSP_SUBSET_RANKS, 3, 5);
	subset(c, BCSP_SUBSET_RANKS, 17, 17);
	subset(c, BCSP_SUBSET_PID, 2, 3000);
	subset(c, BCSP_SUBSET_PID, 3, 4000);
	for (s = 90; s < 100; s++)
		strobe(d, s);
	CHECK(!tasks[0].pid && !whole_job);
	strobe(d, 100);
	CHECK(task_metrics(1000) == 1 && task_metrics(1001) == 1 &&
	      task_metrics(3000) == 1);
	CHECK(!task_metrics(1002) && !task_metrics(1003) &&
	      !task_metrics(1005) && !task_metrics(1101) &&
	      !task_metrics(4000) && !task_metrics(9999) && !whole_job);
	CHECK(tasks[0].at == 100 && tasks[1].at == 100 && tasks[2].at == 100);
	/* Rank subsets: looked for again at each report. */
	CHECK(d->record.retry);

	/* Version 2, at 200: ranks 1 .. 2 and metric 2 as well. */
	context(d, 2, 200, 3);
	subset(c, BCSP_SUBSET_RANKS, 1, 2);
	strobe(d, 150);
	CHECK(task_metrics(1000) == 1 && !task_metrics(1002));
	strobe(d, 200);
	CHECK(!task_metrics(1000) && task_metrics(1001) == 3 &&
	      task_metrics(1002) == 3 && !task_metrics(3000) && !whole_job);

	/* Version 3, at 300: the whole job again. */
	context(d, 3, 300, 1);
	strobe(d, 300);
	CHECK(whole_job == 1 && !task_metrics(1001) && !task_metrics(1002));
	record_exit(d);
	free(d);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

int main(void)
{
	struct bcsd *d = calloc(1, sizeof(*d));
	uint64_t s;

	if (!d)
		return 1;
	CHECK(!record_init(d) && on_strobe);
	/* Context 1, to apply at slice 100: nothing before its strobe. */
	context(d, 1, 100, 1);
	for (s = 90; s < 100; s++)
		strobe(d, s);
	CHECK(enables == 0 && windows == 0);
	strobe(d, 100);
	CHECK(enables == 1 && enabled_at == 100);
	CHECK(windows == 1 && window_at == 100);
	/* Applied once: later strobes change nothing. */
	for (s = 101; s < 120; s++)
		strobe(d, s);
	CHECK(enables == 1 && windows == 1);

	/* Version 2 turns the metric off at slice 200, not at once. */
	context(d, 2, 200, 0);
	for (s = 120; s < 200; s++)
		strobe(d, s);
	CHECK(disables == 0);
	strobe(d, 200);
	CHECK(disables == 1 && disabled_at == 200);

	/* A node that comes late (first strobe after it): at its first. */
	record_exit(d);
	memset(d, 0, sizeof(*d));
	enables = windows = 0;
	CHECK(!record_init(d));
	context(d, 3, 300, 1);
	strobe(d, 305);
	CHECK(enables == 1 && enabled_at == 305);
	free(d);
	test_subsets();
	return unit_done("test_record");
}

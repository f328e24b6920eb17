// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of what a node records (record.c) against a stand-in
 * for libbcs and the rest of bcsd: a statistics context takes effect in
 * bcs.ko at the strobe of its apply slice, not before, so that every
 * node starts (and stops) recording in the same slice; a node that comes
 * to it later applies it at its first strobe; a newer version waits for
 * its own apply slice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "node/record.h"
#include "tests/unit.h"

static dispatch_fn *on_strobe;
static uint64_t strobe_slice;		/* of the strobe being handled */
static uint64_t enabled_at, disabled_at, window_at;
static unsigned int enables, disables, windows;

int bcs_dist_ctl(struct bcs *h, uint32_t job, uint32_t op, uint32_t metrics,
		 uint32_t sub_bits, const int32_t *pids, uint32_t nr_pids)
{
	(void)h;
	(void)job;
	(void)metrics;
	(void)sub_bits;
	(void)pids;
	(void)nr_pids;
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
	return unit_done("test_record");
}

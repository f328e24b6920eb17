// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the dispatcher (dispatch.c): a message reaches the
 * handlers registered for its type, in the order of registration, with
 * its origin; other types' handlers and messages of no known type reach
 * none.  A claim sees the message first, and what it takes no other.
 */
#include <string.h>

#include "bcsd.h"
#include "tests/unit.h"

void log_msg(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

static char order[8];
static unsigned int nr_calls;
static const struct bcsd_origin *seen_from;

static void record(char who, const struct bcsd_origin *from)
{
	if (nr_calls < sizeof(order) - 1)
		order[nr_calls] = who;
	nr_calls++;
	seen_from = from;
}

static void master_map(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	(void)d;
	(void)m;
	record('m', from);
}

static void node_map(struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	(void)d;
	(void)m;
	record('n', from);
}

static void ctl_reply(struct bcsd *d, const struct bcsp_msg *m,
		      const struct bcsd_origin *from)
{
	(void)d;
	(void)m;
	record('c', from);
}

/* The tree's: takes what comes from the network. */
static bool tree_ack(struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	(void)d;
	(void)m;
	record('t', from);
	return !from->local;
}

static void master_ack(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	(void)d;
	(void)m;
	record('m', from);
}

static struct bcsd d;

int main(void)
{
	struct bcsd_origin local = { .local = true, .slice = 7 };
	struct bcsp_msg m = { .hdr = { .type = BCSP_MAP } };

	dispatch_register(&d, BCSP_MAP, master_map);
	dispatch_register(&d, BCSP_MAP, node_map);
	dispatch_register(&d, BCSP_REPLY, ctl_reply);

	dispatch(&d, &m, &local);
	CHECK(nr_calls == 2 && !strcmp(order, "mn"));
	CHECK(seen_from == &local && seen_from->local && seen_from->slice == 7);

	memset(order, 0, sizeof(order));
	nr_calls = 0;
	m.hdr.type = BCSP_REPLY;
	dispatch(&d, &m, &local);
	CHECK(nr_calls == 1 && !strcmp(order, "c"));

	/* No handler for strobes; no such types. */
	nr_calls = 0;
	m.hdr.type = BCSP_STROBE;
	dispatch(&d, &m, &local);
	m.hdr.type = 0;
	dispatch(&d, &m, &local);
	m.hdr.type = __BCSP_TYPE_MAX;
	dispatch(&d, &m, &local);
	m.hdr.type = 255;
	dispatch(&d, &m, &local);
	CHECK(nr_calls == 0);

	/* Claimed first, whatever the order of registration. */
	dispatch_register(&d, BCSP_ACK, master_ack);
	dispatch_claim(&d, BCSP_ACK, tree_ack);
	memset(order, 0, sizeof(order));
	nr_calls = 0;
	m.hdr.type = BCSP_ACK;
	dispatch(&d, &m, &local);
	CHECK(nr_calls == 2 && !strcmp(order, "tm"));
	memset(order, 0, sizeof(order));
	nr_calls = 0;
	dispatch(&d, &m, &(struct bcsd_origin){ .local = false });
	CHECK(nr_calls == 1 && !strcmp(order, "t"));
	return unit_done("test_dispatch");
}

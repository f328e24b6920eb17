// SPDX-License-Identifier: GPL-2.0
/*
 * How this node's switches went, for the master's global records
 * (global.c): once per report period, the records bcs.ko's slice ring
 * (/dev/bcsstat) gained since the last period become one summary per
 * slice (struct bcsp_switch_sum, @nodes 1), sent to the master followed
 * (BCSP_SWITCHES), or handed to this host's master part if it is the
 * master.  With switch_reports = slice, the same happens at every strobe
 * too, after the node part has handed it to bcs.ko: the slice before it
 * has switched by then, so each slice's summary leaves about a slice
 * minus the lead after its deadline, and the master's record of it is
 * complete within about a slice (Documentation/tree.rst, "Scale").  The
 * period's pass still runs and sends what the strobes left.
 *
 * Only switches to a master's slice count (BCS_SLICE_DRIVEN, a
 * prediction or an expiry included), not a fail-open, and each slice
 * once, by its first switch: a record of a slice not after the last one
 * summarised is passed over (the switch again after a fail-open in it).  At most SWITCHES_DATAGRAMS datagrams go out per period: with
 * slices so short that more records came, the oldest are skipped and
 * counted (switch_slices_skipped).  While a slice window is armed, bcs.ko
 * records only the window's slices, and only they are summarised.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "core/log.h"
#include "node/switches.h"

#define SWITCHES_DATAGRAMS	8
#define SWITCHES_RECORDS	(SWITCHES_DATAGRAMS * BCSP_MAX_SWITCHES)

static bool counts(const struct bcs_slice_record *r)
{
	return (r->flags & BCS_SLICE_DRIVEN) &&
	       !(r->flags & BCS_SLICE_FAILOPEN);
}

static void fill(struct bcsp_switch_sum *s, const struct bcs_slice_record *r)
{
	int64_t end = (int64_t)(r->switch_end_ns - r->deadline_ns);

	memset(s, 0, sizeof(*s));
	s->slice = r->slice;
	s->end_max_ns = end;
	s->end_min_ns = end;
	s->nodes = 1;
	s->late = !!(r->flags & BCS_SLICE_LATE);
	s->predicted = !!(r->flags & BCS_SLICE_PREDICTED);
	s->rows[0].row = r->row < BCS_ROWS_MAX ? (uint16_t)r->row :
			 BCSP_ROW_CLASS_NONE;
	s->rows[0].nodes = 1;
}

static void send_switches(struct bcsd *d, struct bcsp_msg *m)
{
	m->hdr.type = BCSP_SWITCHES;
	m->hdr.epoch = d->followed.epoch;
	m->hdr.sender = d->node_id;
	/* Down a tree, up the tree: added up on the way (reduce.c). */
	if (tree_transport(d))
		reduce_add(d, m->hdr.epoch, &m->sw);
	else if (followed_is_self(d))
		dispatch(d, m, &(struct bcsd_origin){ .local = true });
	else if (!net_send(d, m, &d->followed.addr))
		d->cnt.switches_tx++;
	m->sw.nr = 0;
}

static void switches_report(struct bcsd *d)
{
	static struct bcs_slice_record recs[SWITCHES_RECORDS];
	struct bcsd_switches *w = &d->switches;
	struct bcsp_msg m = { .hdr = { .type = BCSP_SWITCHES } };
	uint64_t head, next;
	size_t n = 0, i;
	int err;

	err = bcs_stat_head(w->st, &head);
	if (err)
		goto fail;
	if (head - w->next_seq > SWITCHES_RECORDS) {
		d->cnt.switch_slices_skipped += head - w->next_seq -
						SWITCHES_RECORDS;
		w->next_seq = head - SWITCHES_RECORDS;
	}
	err = bcs_stat_snapshot(w->st, w->next_seq, recs, SWITCHES_RECORDS,
				&n, &next);
	if (err)
		goto fail;
	w->next_seq = next;
	/* Slice numbers are the master's: a new one may count anew. */
	if (w->epoch != d->followed.epoch) {
		w->epoch = d->followed.epoch;
		w->last_slice = 0;
	}
	for (i = 0; i < n; i++) {
		if (!counts(&recs[i]) || recs[i].slice <= w->last_slice)
			continue;
		if (m.sw.nr == BCSP_MAX_SWITCHES)
			send_switches(d, &m);
		fill(&m.sw.s[m.sw.nr++], &recs[i]);
		w->last_slice = recs[i].slice;
	}
	if (m.sw.nr)
		send_switches(d, &m);
	return;
fail:
	d->cnt.kernel_errors++;
	pr_warn("slice ring: %s", bcs_strerror(err, BCS_CTX_GENERIC));
}

static void on_strobe(struct bcsd *d, const struct bcsp_msg *m,
		      const struct bcsd_origin *from)
{
	(void)m;
	(void)from;
	if (d->cfg.switch_reports != CFG_SWITCHES_SLICE ||
	    !d->switches.st || !d->followed.known)
		return;
	switches_report(d);
}

static void switches_tick(struct bcsd *d, void *arg)
{
	uint64_t now = now_mono_ms();

	(void)arg;
	if (!d->switches.st || !d->followed.known ||
	    now - d->switches.sent_ms < d->cfg.report_ms)
		return;
	d->switches.sent_ms = now;
	switches_report(d);
}

int switches_init(struct bcsd *d)
{
	struct bcsd_switches *w = &d->switches;
	int err;

	memset(w, 0, sizeof(*w));
	err = bcs_stat_open(&w->st);
	if (!err)
		err = bcs_stat_map(w->st);
	/* From now on: the past belongs to no master this one knows. */
	if (!err)
		err = bcs_stat_head(w->st, &w->next_seq);
	if (err) {
		/* The gangs run without it; the master lacks our summaries. */
		pr_warn("slice ring: %s: the master's global records will lack this node",
			bcs_strerror(err, BCS_CTX_STAT_OPEN));
		bcs_stat_close(w->st);
		w->st = NULL;
	}
	w->sent_ms = now_mono_ms();
	dispatch_register(d, BCSP_STROBE, on_strobe);
	return loop_on_tick(d, switches_tick, NULL);
}

void switches_exit(struct bcsd *d)
{
	bcs_stat_close(d->switches.st);
	d->switches.st = NULL;
}

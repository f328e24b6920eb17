// SPDX-License-Identifier: GPL-2.0
/*
 * The active master's global records, per slice (the paper's GETTS and
 * GTTS): when it sent the strobe of each slice and the interval since
 * the strobe before, and, from the nodes' switch summaries
 * (BCSP_SWITCHES), how many nodes switched to the slice, how many of
 * them late or on a prediction, and the latest and earliest switch end
 * of any of them relative to the deadline.
 *
 * The master part records each strobe it sends (global_sent()) and adds
 * the summaries the nodes send (global_add()); a node summarises its
 * slice ring once per report period, so a slice's record is complete
 * about a report period after its deadline.  A slice the master skipped
 * (it fell behind) has a record too, marked so, without a strobe: nodes
 * may switch to it on a prediction.  A master that runs late may hear
 * of a switch before it sends the slice's strobe: up to
 * GLOBAL_AHEAD_SLICES ahead, the summary waits in the record for it.
 * Each record keeps when the last summary of it came (its heard_ns, on
 * the master's clock, as the deadline), so that how soon a slice's
 * record was complete can be read from it.
 * The last BCSD_GLOBAL_SLICES slices are kept; a summary of a slice
 * older than that, too far ahead, or of another master's (before a
 * take-over), is counted and dropped.  A take-over starts the records afresh.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "bcsd.h"
#include "master/global.h"

/* How far ahead of the newest strobe sent a node's summary is kept. */
#define GLOBAL_AHEAD_SLICES	16

/* Does @r hold slice @slice, sent, skipped or, if @pending, ahead? */
static bool held(const struct bcsd_global_rec *r, uint64_t slice,
		 bool pending)
{
	return r->slice == slice &&
	       (r->state == GLOBAL_SENT || r->state == GLOBAL_SKIPPED ||
		(pending && r->state == GLOBAL_PENDING));
}

static struct bcsd_global_rec *rec_of(struct bcsd *d, uint64_t slice)
{
	return &d->global.recs[slice % BCSD_GLOBAL_SLICES];
}

/* The record of @slice, now @state, with what nodes said ahead of it. */
static struct bcsd_global_rec *claim(struct bcsd *d, uint64_t slice,
				     enum bcsd_global_state state)
{
	struct bcsd_global_rec *r = rec_of(d, slice);

	if (!(r->slice == slice && r->state == GLOBAL_PENDING)) {
		memset(r, 0, sizeof(*r));
		r->slice = slice;
		r->sw.slice = slice;
	}
	r->state = state;
	r->row = BCS_ROW_NONE;
	return r;
}

void global_sent(struct bcsd *d, uint32_t epoch, const struct bcsp_strobe *s,
		 uint64_t sent_ns)
{
	struct bcsd_global *g = &d->global;
	struct bcsd_global_rec *r;
	uint64_t k;

	if (g->epoch != epoch || !g->nr) {
		memset(g->recs, 0, sizeof(g->recs));
		g->epoch = epoch;
		g->nr = 0;
		g->last_sent_ns = 0;
	}
	/* A slice number at most once, never back: a new master's epoch. */
	if (g->nr && s->slice <= g->newest)
		return;
	/*
	 * Slices skipped by a master that fell behind: nodes may still
	 * switch to them, on a prediction, and say so.
	 */
	k = g->nr ? g->newest + 1 : s->slice;
	if (s->slice - k >= BCSD_GLOBAL_SLICES)
		k = s->slice - (BCSD_GLOBAL_SLICES - 1);
	for (; k < s->slice; k++)
		claim(d, k, GLOBAL_SKIPPED);
	r = claim(d, s->slice, GLOBAL_SENT);
	r->deadline_ns = s->deadline_ns;
	r->sent_ns = sent_ns;
	r->interval_ns = g->last_sent_ns && sent_ns > g->last_sent_ns ?
			 sent_ns - g->last_sent_ns : 0;
	r->row = s->row;
	g->last_sent_ns = sent_ns;
	g->newest = s->slice;
	g->nr++;
}

void global_add(struct bcsd *d, uint32_t epoch, const struct bcsp_switches *sw,
		uint64_t now)
{
	struct bcsd_global *g = &d->global;
	struct bcsd_global_rec *r;
	uint32_t i;

	for (i = 0; i < sw->nr; i++) {
		const struct bcsp_switch_sum *s = &sw->s[i];

		r = rec_of(d, s->slice);
		if (!g->nr || epoch != g->epoch) {
			g->unknown++;
			continue;
		}
		if (held(r, s->slice, true)) {
			if (!r->sw.nodes)
				r->sw = *s;
			else if (!bcsp_switch_sum_add(&r->sw, s)) {
				g->unknown++;
				continue;
			}
			r->heard_ns = now;
			continue;
		}
		/*
		 * A node switched, on a prediction or an expiry, to a slice
		 * whose strobe this master, running late, has not sent yet:
		 * kept for it, in place of the oldest records.
		 */
		if (s->slice > g->newest &&
		    s->slice - g->newest <= GLOBAL_AHEAD_SLICES) {
			memset(r, 0, sizeof(*r));
			r->slice = s->slice;
			r->state = GLOBAL_PENDING;
			r->sw = *s;
			r->heard_ns = now;
			continue;
		}
		g->unknown++;
	}
}

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

static struct json_object *rec_json(const struct bcsd_global_rec *r)
{
	struct json_object *o = json_object_new_object(), *a;
	uint32_t k;
	bool any = r->sw.nodes;

	add_u64(o, "slice", r->slice);
	json_object_object_add(o, "skipped",
			       json_object_new_boolean(r->state == GLOBAL_SKIPPED));
	/* null: a skipped slice has no strobe, nor a deadline of its own. */
	json_object_object_add(o, "deadline_ns", r->state == GLOBAL_SKIPPED ? NULL :
			       json_object_new_int64((int64_t)r->deadline_ns));
	json_object_object_add(o, "sent_ns", r->state == GLOBAL_SKIPPED ? NULL :
			       json_object_new_int64((int64_t)r->sent_ns));
	/* null: the first strobe this master sent has no interval. */
	json_object_object_add(o, "interval_ns", r->interval_ns ?
			       json_object_new_int64((int64_t)r->interval_ns) :
			       NULL);
	json_object_object_add(o, "row", r->row == BCS_ROW_NONE ? NULL :
			       json_object_new_int64(r->row));
	add_u64(o, "nodes", r->sw.nodes);
	add_u64(o, "late", r->sw.late);
	add_u64(o, "predicted", r->sw.predicted);
	/* null: no node has said how its switch went, yet or at all. */
	json_object_object_add(o, "end_max_ns", any ?
			       json_object_new_int64(r->sw.end_max_ns) : NULL);
	json_object_object_add(o, "end_min_ns", any ?
			       json_object_new_int64(r->sw.end_min_ns) : NULL);
	/* When the last summary came, after the deadline (null: none). */
	json_object_object_add(o, "heard_after_ns", any && r->state != GLOBAL_SKIPPED ?
			       json_object_new_int64((int64_t)(r->heard_ns -
							       r->deadline_ns)) :
			       NULL);
	/* The rows run, as classes: {"row": R or null, "nodes": N}. */
	a = json_object_new_array();
	for (k = 0; k < BCSP_ROW_CLASSES; k++) {
		const struct bcsp_row_class *c = &r->sw.rows[k];
		struct json_object *e;

		if (!c->nodes)
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "row", c->row == BCSP_ROW_CLASS_NONE ?
				       NULL : json_object_new_int64(c->row));
		add_u64(e, "nodes", c->nodes);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "rows", a);
	add_u64(o, "rows_other", r->sw.other);
	return o;
}

struct json_object *global_json(const struct bcsd *d, uint64_t last)
{
	const struct bcsd_global *g = &d->global;
	struct json_object *o = json_object_new_object(), *a;
	uint64_t s, first;

	a = json_object_new_array();
	add_u64(o, "epoch", g->epoch);
	add_u64(o, "unknown", g->unknown);
	if (last > BCSD_GLOBAL_SLICES)
		last = BCSD_GLOBAL_SLICES;
	first = g->nr && g->newest >= last ? g->newest - last + 1 : 0;
	for (s = first; g->nr && s <= g->newest; s++) {
		const struct bcsd_global_rec *r =
			&g->recs[s % BCSD_GLOBAL_SLICES];

		if (held(r, s, false))
			json_object_array_add(a, rec_json(r));
	}
	json_object_object_add(o, "slices", a);
	return o;
}

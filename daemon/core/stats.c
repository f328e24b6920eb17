// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's counters and view as JSON: for bcsctl status, and for the
 * stats file (stats_file), written on SIGUSR1 and at exit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bcsd.h"
#include "core/log.h"

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

void stats_register(struct bcsd *d, const char *name, stats_fn *fn)
{
	struct bcsd_stats *s = &d->stats;

	if (s->nr >= STATS_SECTIONS_MAX) {
		pr_err("bug: stats section %s", name);
		abort();
	}
	s->section[s->nr].name = name;
	s->section[s->nr++].fn = fn;
}

/* Section @name, registered by its part; null if none is. */
static struct json_object *section(const struct bcsd *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->stats.nr; i++)
		if (!strcmp(d->stats.section[i].name, name))
			return d->stats.section[i].fn(d);
	return NULL;
}

/* Every counter of the table (counters.h), in its order. */
static void add_counters(struct json_object *o, const struct bcsd_counters *c)
{
#define BCSD_COUNTER_JSON(part, name, what) add_u64(o, #name, c->name);
	BCSD_COUNTERS(BCSD_COUNTER_JSON)
#undef BCSD_COUNTER_JSON
}

/* The daemon's view and counters, for the stats file and bcsctl status. */
struct json_object *stats_json(const struct bcsd *d)
{
	struct json_object *o = json_object_new_object();
	uint32_t fresh, need;

	add_u64(o, "node_id", d->node_id);
	json_object_object_add(o, "active_master",
			       json_object_new_boolean(d->master.active));
	add_u64(o, "master_id", d->followed.known ? d->followed.id : 0);
	add_u64(o, "epoch", d->followed.epoch);
	add_u64(o, "slice", d->followed.slice);
	add_counters(o, &d->cnt);
	add_u64(o, "ticks", d->loop.nr_tick_runs);
	add_u64(o, "tick_wakeups", d->loop.nr_tick_wakeups);
	view_quorum(d, now_mono_ms(), &fresh, &need);
	add_u64(o, "nodes_reporting", fresh);
	add_u64(o, "nodes_heard", d->view.nr_peers);
	/* null: no nodes_file. */
	json_object_object_add(o, "tree", section(d, "tree"));
	/*
	 * Every node's clock offset from the active master's (offsets.c);
	 * null: not the active master, or no nodes_file.
	 */
	json_object_object_add(o, "offsets", d->master.active ?
			       section(d, "offsets") : NULL);
	/* Down a tree, of the nodes file (tquorum.c); the answers count. */
	if (net_tree(d))
		need = d->net.tree->quorum(d);
	add_u64(o, "quorum", need);
	return o;
}

/* The maps applied to bcs.ko, oldest first, each with its job -> row. */
static struct json_object *map_history_json(const struct bcsd *d)
{
	struct json_object *a = json_object_new_array(), *o, *rows, *sets, *set;
	uint32_t n = d->node.nr_history, i, k, r;
	char id[16];

	for (i = n > BCSD_MAP_HISTORY ? n - BCSD_MAP_HISTORY : 0; i < n; i++) {
		const struct bcsd_map_event *ev =
			&d->node.history[i % BCSD_MAP_HISTORY];

		o = json_object_new_object();
		add_u64(o, "applied_ns", ev->applied_ns);
		add_u64(o, "from_slice", ev->from_slice);
		add_u64(o, "epoch", ev->epoch);
		add_u64(o, "master", ev->master);
		add_u64(o, "version", ev->version);
		add_u64(o, "apply_slice", ev->apply_slice);
		rows = json_object_new_object();
		sets = json_object_new_object();
		/* The first BCSD_MAP_EVENT_JOBS jobs kept, and how many more. */
		add_u64(o, "nr_jobs", ev->nr_jobs);
		add_u64(o, "more", ev->nr_jobs > BCSD_MAP_EVENT_JOBS ?
			ev->nr_jobs - BCSD_MAP_EVENT_JOBS : 0);
		for (k = 0; k < ev->nr_jobs && k < BCSD_MAP_EVENT_JOBS; k++) {
			snprintf(id, sizeof(id), "%u", ev->job[k]);
			/* null: no row, as everywhere in JSON. */
			json_object_object_add(rows, id,
					       ev->row[k] == BCS_ROW_NONE ? NULL :
					       json_object_new_int64(ev->row[k]));
			/* The rows it runs in, alternates included. */
			set = json_object_new_array();
			for (r = 0; r < BCS_ROWS_MAX; r++)
				if (ev->rows[k] & (1ULL << r))
					json_object_array_add(set,
						json_object_new_int64(r));
			json_object_object_add(sets, id, set);
		}
		json_object_object_add(o, "rows", rows);
		json_object_object_add(o, "row_sets", sets);
		json_object_array_add(a, o);
	}
	return a;
}

void stats_write(const struct bcsd *d)
{
	const char *path = d->cfg.stats_file;
	struct json_object *o, *rej;
	char tmp[CFG_STR_MAX + 8];
	int i, fd;

	if (!*path)
		return;
	o = stats_json(d);
	rej = json_object_new_object();
	for (i = 1; i < __BCSP_VERDICT_MAX; i++)
		add_u64(rej, bcsp_verdict_name(i), d->cnt.rejected[i]);
	json_object_object_add(o, "rejected", rej);
	json_object_object_add(o, "maps", map_history_json(d));
	json_object_object_add(o, "global", section(d, "global"));
	/* A fresh file of our own (mkstemp): never one a link points to. */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0 || json_object_to_fd(fd, o, JSON_C_TO_STRING_PRETTY) ||
	    fchmod(fd, 0644) || rename(tmp, path)) {
		pr_warn("cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
	}
	if (fd >= 0)
		close(fd);
	json_object_put(o);
}

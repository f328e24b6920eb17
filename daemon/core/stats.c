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
#include "tree/topo.h"
#include "tree/tquorum.h"

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
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
	add_u64(o, "rx", d->cnt.rx);
	add_u64(o, "rx_own", d->cnt.rx_own);
	add_u64(o, "strobes_rx", d->cnt.strobes_rx);
	add_u64(o, "strobe_copies", d->cnt.strobe_copies);
	add_u64(o, "strobes_forwarded", d->cnt.strobes_forwarded);
	add_u64(o, "strobes_stale_map", d->cnt.strobes_stale_map);
	add_u64(o, "strobes_tx", d->cnt.strobes_tx);
	add_u64(o, "strobe_copies_tx", d->cnt.strobe_copies_tx);
	add_u64(o, "ticks", d->loop.nr_tick_runs);
	add_u64(o, "tick_wakeups", d->loop.nr_tick_wakeups);
	add_u64(o, "kernel_errors", d->cnt.kernel_errors);
	add_u64(o, "dumps", d->cnt.dumps);
	add_u64(o, "dumps_failed", d->cnt.dumps_failed);
	add_u64(o, "dumps_refused", d->cnt.dumps_refused);
	add_u64(o, "commands", d->cnt.commands);
	add_u64(o, "command_copies", d->cnt.command_copies);
	add_u64(o, "attaches", d->cnt.attaches);
	add_u64(o, "attach_failures", d->cnt.attach_failures);
	add_u64(o, "results_tx", d->cnt.results_tx);
	add_u64(o, "results_rx", d->cnt.results_rx);
	add_u64(o, "tree_acks_tx", d->cnt.tree_acks_tx);
	add_u64(o, "tree_acks_rx", d->cnt.tree_acks_rx);
	add_u64(o, "strobe_nacks_tx", d->cnt.strobe_nacks_tx);
	add_u64(o, "strobe_nacks_rx", d->cnt.strobe_nacks_rx);
	add_u64(o, "strobe_resent", d->cnt.strobe_resent);
	add_u64(o, "tree_resent", d->cnt.tree_resent);
	add_u64(o, "tree_unacked", d->cnt.tree_unacked);
	add_u64(o, "signals_sent", d->cnt.signals_sent);
	add_u64(o, "mpi_controls_set", d->cnt.mpi_controls_set);
	add_u64(o, "mpi_control_errors", d->cnt.mpi_control_errors);
	add_u64(o, "mpi_controls_removed", d->cnt.mpi_controls_removed);
	add_u64(o, "mpi_gather_files_tx", d->cnt.mpi_gather_files_tx);
	add_u64(o, "mpi_gather_parts_tx", d->cnt.mpi_gather_parts_tx);
	add_u64(o, "mpi_gather_skipped", d->cnt.mpi_gather_skipped);
	add_u64(o, "mpi_gathers", d->cnt.mpi_gathers);
	add_u64(o, "mpi_gathers_partial", d->cnt.mpi_gathers_partial);
	add_u64(o, "mpi_gather_parts_rx", d->cnt.mpi_gather_parts_rx);
	add_u64(o, "mpi_gather_parts_refused", d->cnt.mpi_gather_parts_refused);
	add_u64(o, "mpi_gathers_denied", d->cnt.mpi_gathers_denied);
	add_u64(o, "mpi_gathers_limited", d->cnt.mpi_gathers_limited);
	add_u64(o, "mpi_dirs_made", d->cnt.mpi_dirs_made);
	add_u64(o, "mpi_dir_errors", d->cnt.mpi_dir_errors);
	add_u64(o, "tree_pruned", d->cnt.tree_pruned);
	add_u64(o, "switches_tx", d->cnt.switches_tx);
	add_u64(o, "switch_slices_skipped", d->cnt.switch_slices_skipped);
	add_u64(o, "jobs_superseded", d->cnt.jobs_superseded);
	add_u64(o, "jobs_reowned", d->cnt.jobs_reowned);
	add_u64(o, "jobs_owner_kept", d->cnt.jobs_owner_kept);
	add_u64(o, "jobs_restored", d->cnt.jobs_restored);
	add_u64(o, "maps_applied", d->cnt.maps_applied);
	add_u64(o, "maps_stale", d->cnt.maps_stale);
	add_u64(o, "takeovers", d->cnt.takeovers);
	add_u64(o, "stepdowns", d->cnt.stepdowns);
	add_u64(o, "master_changes", d->cnt.master_changes);
	view_quorum(d, now_mono_ms(), &fresh, &need);
	add_u64(o, "nodes_reporting", fresh);
	add_u64(o, "nodes_heard", d->view.nr_peers);
	add_u64(o, "tree_passed", d->cnt.tree_passed);
	add_u64(o, "tree_reroots", d->cnt.tree_reroots);
	add_u64(o, "tree_adoptions", d->cnt.tree_adoptions);
	add_u64(o, "reduce_in", d->cnt.reduce_in);
	add_u64(o, "reduce_up", d->cnt.reduce_up);
	add_u64(o, "reduce_partial", d->cnt.reduce_partial);
	add_u64(o, "tasks_in", d->cnt.tasks_in);
	add_u64(o, "tasks_up", d->cnt.tasks_up);
	add_u64(o, "tasks_jobs_dropped", d->cnt.tasks_jobs_dropped);
	add_u64(o, "node_tasks_in", d->cnt.node_tasks_in);
	add_u64(o, "node_tasks_up", d->cnt.node_tasks_up);
	/* null: no nodes_file. */
	json_object_object_add(o, "tree", tree_json(d));
	add_u64(o, "probes_tx", d->cnt.probes_tx);
	add_u64(o, "probes_answered", d->cnt.probes_answered);
	add_u64(o, "probe_replies", d->cnt.probe_replies);
	add_u64(o, "probe_replies_dropped", d->cnt.probe_replies_dropped);
	add_u64(o, "quorum_probes_tx", d->cnt.quorum_probes_tx);
	add_u64(o, "quorum_replies", d->cnt.quorum_replies);
	add_u64(o, "quorum_replies_dropped", d->cnt.quorum_replies_dropped);
	add_u64(o, "quorum_vetoes", d->cnt.quorum_vetoes);
	add_u64(o, "probe_samples_refused", d->cnt.probe_samples_refused);
	add_u64(o, "offsets_tx", d->cnt.offsets_tx);
	add_u64(o, "offsets_rx", d->cnt.offsets_rx);
	add_u64(o, "offsets_unknown", d->cnt.offsets_unknown);
	add_u64(o, "skew_warnings", d->cnt.skew_warnings);
	/*
	 * Every node's clock offset from the active master's (offsets.c);
	 * null: not the active master, or no nodes_file.
	 */
	json_object_object_add(o, "offsets", d->master.active ?
			       offsets_json(d, now_real_ns()) : NULL);
	/* Down a tree, of the nodes file (tquorum.c); the answers count. */
	if (tree_transport(d))
		tq_decide(d->nodes->nr, (uint32_t)d->cfg.quorum, 0, 0, &need);
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
	json_object_object_add(o, "global",
			       global_json(d, BCSD_GLOBAL_SLICES));
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

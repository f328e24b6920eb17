/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsd's counters, as one table: the fields of struct bcsd_counters
 * (d->cnt, each part counting its own) and the keys of the stats file
 * and of `bcsctl status --json` (stats.c), in this order.  Each entry is
 *
 *   X(part, name, what)
 *
 * part: the folder whose code counts it (core, tree, clock, master,
 * node, ctl); name: the field and the JSON key; what: what it counts.
 * A counter added here is reported; this table is their documentation.
 * Besides them: rejected[] (per verdict, below), the loop's ticks and
 * tick_wakeups (loop.h), and what stats.c adds of the view.
 */
#ifndef BCSD_COUNTERS_H
#define BCSD_COUNTERS_H

#include <stdint.h>

#include "proto/proto.h"

#define BCSD_COUNTERS(X)						\
	/* core: rx.c */						\
	X(core, rx, "datagrams received")				\
	X(core, rx_own,							\
	  "datagrams received that were our own, looped back")		\
	X(core, rx_key2,							\
	  "datagrams accepted with the second key (rotation)")		\
	X(core, strobes_rx, "distinct strobes followed")		\
	X(core, strobe_copies,						\
	  "further copies of a strobe followed, dropped")		\
	X(core, command_copies, "commands taken before, dropped")	\
	X(core, maps_stale, "maps older than the one held: dropped")	\
	X(core, master_changes, "another master (or epoch) followed")	\
	X(core, tree_passed, "datagrams passed on down the tree")	\
	X(core, metrics_failed, "metrics files not written")		\
	/* tree: tree.c, reduce.c */					\
	X(tree, tree_acks_tx, "commands acknowledged to a parent")	\
	X(tree, tree_acks_rx, "a child's acknowledgement taken")	\
	X(tree, strobe_nacks_tx, "the next strobe asked for again")	\
	X(tree, strobe_nacks_rx, "a node below asked for it")		\
	X(tree, strobe_resent, "sent again on such a request")		\
	X(tree, tree_resent, "commands sent again to a child")		\
	X(tree, tree_unacked, "given up after tree_retries")		\
	X(tree, tree_pruned, "commands kept from a subtree")		\
	X(tree, tree_reroots, "the tree hung from another master")	\
	X(tree, tree_adoptions, "nodes that asked to be passed on to")	\
	X(tree, reduce_in, "switch summaries taken to add up")		\
	X(tree, reduce_up, "datagrams of sums sent up")			\
	X(tree, reduce_partial, "sums sent up before the subtree's all") \
	X(tree, tasks_in, "children's sums of tasks taken")		\
	X(tree, tasks_up, "sums of tasks sent up")			\
	X(tree, tasks_jobs_dropped,					\
	  "sums of tasks cut: more than BCSP_MAX_JOBS jobs")		\
	X(tree, node_tasks_in, "children's tasks per node taken")	\
	X(tree, node_tasks_up, "tasks per node sent up")		\
	X(tree, quorum_probes_tx, "a standby's quorum probes, down a tree") \
	X(tree, quorum_replies, "answers to quorum probes taken")	\
	X(tree, quorum_replies_dropped,					\
	  "answers to quorum probes not of the last two rounds")	\
	/* clock: probe.c, offsets.c (the active master) */		\
	X(clock, probes_tx, "round trips to children started")		\
	X(clock, probes_answered, "probes of parents answered")		\
	X(clock, probe_replies, "replies taken into a window")		\
	X(clock, probe_replies_dropped,					\
	  "probe replies dropped: not of a child, not the last")	\
	X(clock, probe_samples_refused, "skew_window_add() refused")	\
	X(clock, offsets_tx, "BCSP_OFFSETS sent to the master")		\
	X(clock, offsets_rx, "children's estimates taken")		\
	X(clock, offsets_unknown,					\
	  "children's estimates of nodes not in the list")		\
	X(clock, skew_warnings, "nodes' clocks said to be too far")	\
	/* master: master.c */						\
	X(master, strobes_tx, "strobes sent")				\
	X(master, strobe_copies_tx,					\
	  "strobes sent again, after the first copy")			\
	X(master, maps_tx, "maps sent (all their parts)")		\
	X(master, results_rx, "results of commands taken")		\
	X(master, takeovers, "became the active master")		\
	X(master, stepdowns, "stopped being the active master")		\
	X(master, quorum_vetoes, "take-overs not made: a node hears")	\
	/* node: node.c, collect.c, switches.c, filler.c, record.c */	\
	X(node, strobes_forwarded, "strobes handed to bcs.ko")		\
	X(node, strobes_stale_map,					\
	  "strobes forwarded as an idle row: map not current")		\
	X(node, kernel_errors, "bcs.ko refused a request")		\
	X(node, dumps, "jobs' statistics written")			\
	X(node, dumps_failed,						\
	  "jobs' statistics that could not be written")			\
	X(node, dumps_refused,						\
	  "jobs' statistics not written: over the dump budget")		\
	X(node, dump_copies, "dumps copied to jobs_copy_dir")		\
	X(node, dump_copies_failed,					\
	  "dumps not copied to jobs_copy_dir")				\
	X(node, retention_removed,					\
	  "dumps and MPI files removed: older than retention_days")	\
	X(node, retention_failed, "old files not removed")		\
	X(node, commands, "commands carried out on this node")		\
	X(node, attaches, "attach commands carried out here")		\
	X(node, attach_failures, "attach commands refused by bcs.ko")	\
	X(node, results_tx, "results of commands sent")			\
	X(node, signals_sent, "processes signalled by commands")	\
	X(node, mpi_controls_set, "MPI control files set by commands")	\
	X(node, mpi_control_errors,					\
	  "MPI control files that could not be set")			\
	X(node, mpi_controls_removed,					\
	  "MPI control files removed, of jobs destroyed")		\
	X(node, mpi_gather_files_tx, "MPI statistics files sent")	\
	X(node, mpi_gather_parts_tx,					\
	  "parts of MPI statistics files sent")				\
	X(node, mpi_gather_skipped,					\
	  "MPI statistics files not sent: unreadable, too large")	\
	X(node, tg_gathers, "tree gathers taken part in")		\
	X(node, tg_parts_rx, "parts of children's tree answers taken")	\
	X(node, tg_parts_refused,					\
	  "parts of tree answers refused: not fitting, not a child")	\
	X(node, tg_answers_tx, "tree answers sent up (merged)")		\
	X(node, tg_missing, "children counted missing by tree gathers")	\
	X(node, tg_nacks_tx,						\
	  "lost parts of tree answers asked for again (asker's too)")	\
	X(node, tg_nacks_rx, "a node above asked for parts again")	\
	X(node, tg_parts_resent, "parts of tree answers sent again")	\
	X(node, tg_nacks_refused,					\
	  "asks refused: no such answer kept, not its receiver, too many") \
	X(node, mpi_dirs_made, "jobs' directories in mpi_dir")		\
	X(node, mpi_dir_errors,						\
	  "jobs' directories in mpi_dir not made")			\
	X(node, switches_tx, "switch summaries sent to the master")	\
	X(node, switch_slices_skipped, "too many in one report period") \
	X(node, jobs_superseded, "local jobs of another master's")	\
	X(node, jobs_reowned,						\
	  "local jobs made again for the map's owner")			\
	X(node, jobs_owner_kept,					\
	  "local jobs of another owner, with tasks: kept")		\
	X(node, jobs_restored, "gone from bcs.ko (reaped): made again") \
	X(node, maps_applied, "maps applied to bcs.ko")			\
	X(node, fill_changes, "jobs marked filler or unmarked")		\
	/* ctl: ctl.c */						\
	X(ctl, mpi_gathers, "gathers asked on this node")		\
	X(ctl, mpi_gathers_partial, "MPI gathers answered incomplete")	\
	X(ctl, mpi_gather_parts_rx,					\
	  "parts of MPI statistics files taken")			\
	X(ctl, mpi_gather_parts_refused,				\
	  "parts refused: not fitting, or no room")			\
	X(ctl, tg_asked, "MPI gathers asked through the tree")		\
	X(ctl, tg_final_parts_rx, "parts of the tree's answers taken")	\
	X(ctl, tg_final_answers_rx, "whole answers of the tree taken")	\
	X(ctl, mpi_gathers_denied, "asked by a user not the owner")	\
	X(ctl, mpi_gathers_limited,					\
	  "MPI gathers refused: within mpi_gather_interval_ms")

struct bcsd_counters {
#define BCSD_COUNTER_FIELD(part, name, what) uint64_t name;
	BCSD_COUNTERS(BCSD_COUNTER_FIELD)
#undef BCSD_COUNTER_FIELD
	/*
	 * Datagrams rejected, per verdict (rx.c): the stats file's
	 * "rejected", their sum bcsctl status's.
	 */
	uint64_t rejected[__BCSP_VERDICT_MAX];
};

#endif /* BCSD_COUNTERS_H */

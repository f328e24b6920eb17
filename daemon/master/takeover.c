// SPDX-License-Identifier: GPL-2.0
/*
 * Fail-over between masters.
 *
 * Every master-role daemon starts as a standby.  A standby that has heard
 * no strobe for failover_slices slices takes over with an epoch higher than
 * any it has seen.  A master that hears a more senior one (higher epoch,
 * then higher priority, then higher node id) steps down, so two masters
 * that took over together settle on one.  A standby that sees one of lower
 * priority take over takes over in its turn (outranks()), so that
 * of the standbys the highest priority ends up the master.
 */
#include <string.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "core/log.h"
#include "master/jobs.h"
#include "master/strobe.h"
#include "master/takeover.h"
#include "tree/topo.h"
#include "tree/tquorum.h"

#define REPORT_EPOCH_SLICES	3

/*
 * The epoch for a take-over, above every one seen; false, said once, if
 * none is left: the epoch counter does not wrap to 0 (proto.h).
 */
static bool next_epoch(struct bcsd *d, uint32_t *epoch)
{
	if (bcsp_epoch_next(d->followed.max_epoch_seen, epoch)) {
		d->master.no_epoch_said = false;
		return true;
	}
	if (!d->master.no_epoch_said)
		pr_err("epoch %u is the last (%u): not taking over; restart every bcsd of the cluster to start again from epoch 1",
		       d->followed.max_epoch_seen, BCSP_EPOCH_MAX);
	d->master.no_epoch_said = true;
	return false;
}

/*
 * How long a master is silent before a standby takes over: failover_slices,
 * after the slices its last plan named (a master with plans is quiet
 * between them, and the nodes run the plan to its end).
 */
static uint64_t silence_ms(const struct bcsd *d)
{
	return strobe_slices_ms(d, (uint64_t)d->cfg.failover_slices +
				followed_quiet_slices(&d->followed));
}

static void take_over(struct bcsd *d, uint32_t epoch)
{
	uint64_t lead = (uint64_t)d->cfg.lead_us * 1000, now;
	struct bcs_state st;
	uint32_t i;

	if (!d->followed.have_map && !d->master.nr_jobs)
		for (i = 0; i < d->view.nr_peers; i++)
			jobs_adopt_reported(d, d->view.peers[i].node,
					    &d->view.peers[i].report);
	d->master.epoch = epoch;
	d->master.active = true;
	d->cnt.takeovers++;
	/* Down a tree, from this node now. */
	tree_reroot(d, d->node_id);
	/*
	 * Carry on with the schedule the old master announced, after the
	 * last slice it planned: slice numbers never go back.  The first
	 * plan replaces whatever of its plan is still due (bcs.ko).
	 */
	d->master.strobe_slice = d->followed.slice +
				 followed_quiet_slices(&d->followed);
	d->master.plan_next = 1;
	d->master.plan_end = 0;
	/*
	 * No master heard since this daemon started (it restarted, alone):
	 * go on from the slice this host's bcs.ko last ran, so that slice
	 * numbers do not start again from 0 under records that have them.
	 */
	if (!d->master.strobe_slice && d->bcs && !bcs_get_state(d->bcs, &st))
		d->master.strobe_slice = st.slice;
	if (d->followed.have_map && !d->master.nr_jobs) {
		/* In the rows they had, free to move from now on; owners kept. */
		for (i = 0; i < d->followed.map.nr_jobs; i++)
			if (jobs_add(d, d->followed.map.jobs[i].job,
				     d->followed.map.jobs[i].row, false,
				     d->followed.map.jobs[i].birth,
				     d->followed.map.jobs[i].owner))
				d->master.jobs[d->master.nr_jobs - 1].rows =
					d->followed.map.jobs[i].rows;
		d->master.map_version = d->followed.map.version;
	}
	/* The statistics the nodes record, as the old master left them. */
	if (d->followed.have_ctx && !d->master.ctx.version) {
		d->master.ctx = d->followed.ctx;
		d->master.ctx.version++;
	}
	d->followed.known = true;
	d->followed.id = d->node_id;
	d->followed.epoch = d->master.epoch;
	d->followed.priority = (uint16_t)d->cfg.priority;
	d->followed.max_epoch_seen = d->master.epoch;
	now = now_real_ns();
	/* The first strobe, sent at once, is for the slice a lead from now. */
	d->master.strobe_deadline_ns = now + lead - d->slice_ns;
	pr_notice("taking over as master: epoch %u, slice %llu", d->master.epoch,
		  (unsigned long long)d->master.strobe_slice);
	/* No map of this master's is in force anywhere: at once. */
	jobs_map_changed(d, true);
	d->master.strobe_row = bcsp_map_next_row(&d->followed.map, BCS_ROW_NONE);
	d->master.strobe_copies_left = 0;
	strobe_arm(d, now + 1000);
}

static void step_down(struct bcsd *d)
{
	d->master.active = false;
	d->cnt.stepdowns++;
	/*
	 * The senior master owns the matrix from now on: forget ours, so
	 * that a later take-over starts from the map it announced rather
	 * than from its own, older matrix (jobs created or destroyed since
	 * would be lost or come back).
	 */
	jobs_forget(d);
	memset(&d->master.ctx, 0, sizeof(d->master.ctx));
	d->master.strobe_copies_left = 0;
	d->master.higher_epoch_ms = 0;
	strobe_arm(d, 0);
	pr_notice("stepping down: a more senior master is live");
}

/*
 * Does this standby outrank the master of strobe @m, which has just taken
 * over from the one it followed?  Standbys notice a master's silence each
 * on its own tick (and failover_slices may differ), so the first to take
 * over is any of them; the others follow its higher epoch.  The rule is
 * that the highest priority wins, so a standby of higher priority than
 * the new master takes over in its turn, with a higher epoch still, if
 * it too has heard nothing from the old master for half its failover
 * silence (which tells a master's death from a partition that healed,
 * where the old master was heard until just now), and if it could take
 * over on its own (listened long enough, quorum).  @from says which
 * master was followed until the strobe came.
 */
static bool outranks(const struct bcsd *d, const struct bcsp_msg *m,
		     const struct bcsd_origin *from)
{
	uint64_t silence = silence_ms(d);
	uint64_t now = now_mono_ms();
	uint32_t fresh, need;

	return !d->master.active && from->prev_known &&
	       from->prev_id != m->hdr.sender &&
	       m->hdr.epoch > from->prev_epoch &&
	       m->hdr.priority < d->cfg.priority &&
	       now - from->prev_heard_ms >= silence / 2 &&
	       now >= d->master.listen_until_ms &&
	       view_quorum(d, now, &fresh, &need);
}

/*
 * A strobe from another master, now followed: an active master steps
 * down (the strobe passed as more senior); a standby that outranks it
 * (outranks()) takes over.  Our own strobes are not for us.
 */
void takeover_on_strobe(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from)
{
	uint32_t epoch;

	if (from->local)
		return;
	d->master.no_quorum_said = false;
	if (d->master.active) {
		step_down(d);
	} else if (outranks(d, m, from) && next_epoch(d, &epoch)) {
		pr_notice("master %u took over with priority %u, below this standby's %llu: taking over",
			  m->hdr.sender, m->hdr.priority,
			  (unsigned long long)d->cfg.priority);
		take_over(d, epoch);
	}
}

void takeover_tick(struct bcsd *d, uint64_t now)
{
	uint64_t silence = silence_ms(d);
	uint32_t fresh, need, epoch, hearing;

	if (d->master.active || now - d->followed.heard_ms <= silence ||
	    now < d->master.listen_until_ms)
		return;
	/*
	 * Cut off from most of the cluster, this daemon would take over
	 * only its own side, with an epoch that makes it the senior master
	 * when the cut heals: the jobs made on the other side meanwhile
	 * would be lost.  The silence counts again from here, so that when
	 * the cut heals (the nodes' reports may come before a strobe) the
	 * master has a whole failover period to be heard.
	 */
	if (tree_transport(d) && d->followed.known) {
		/*
		 * Down a tree this daemon hears only its subtree: it asked
		 * every node (tree.c, tquorum.c).  A node that hears a master
		 * means that only this daemon's path to it broke.  One that
		 * never heard a master has asked nobody, and may take over,
		 * as a standby that heard no report may with multicast.
		 */
		switch (tree_quorum(d, silence / 2, &fresh, &hearing, &need)) {
		case TQ_TAKE_OVER:
			break;
		case TQ_MASTER_HEARD:
			d->cnt.quorum_vetoes++;
			pr_notice("no master heard, but %u of the %u nodes that answer hear one: not taking over",
				  hearing, fresh);
			d->followed.heard_ms = now - silence * 3 / 4;
			return;
		default:
			if (!d->master.no_quorum_said)
				pr_notice("no master heard, but only %u of %u nodes answer (quorum %u): not taking over",
					  fresh + 1, d->nodes->nr, need);
			d->master.no_quorum_said = true;
			d->followed.heard_ms = now - silence * 3 / 4;
			return;
		}
	} else if (!view_quorum(d, now, &fresh, &need)) {
		if (!d->master.no_quorum_said)
			pr_notice("no master heard, but only %u of %u nodes report (quorum %u): not taking over",
				  fresh, d->view.nr_peers, need);
		d->master.no_quorum_said = true;
		d->followed.heard_ms = now;
		return;
	}
	d->master.no_quorum_said = false;
	if (!next_epoch(d, &epoch)) {
		d->followed.heard_ms = now;
		return;
	}
	take_over(d, epoch);
}

/*
 * An active master got a report from a node that follows a higher epoch:
 * a master it never heard (it restarted, or took over too soon) left the
 * nodes with an epoch above its own, so they reject its strobes as stale.
 * Take a higher epoch still, with the jobs that node holds, and announce
 * the map.  Not at the first such report: when a partition heals, a
 * node's report can come before the strobes of the live master of that
 * epoch, which make this one step down.  Only reports that keep naming
 * the higher epoch for REPORT_EPOCH_SLICES slices (and two report
 * periods) show that its master is gone.  If it lives on all the same,
 * one of the two steps down on hearing the other.
 */
static void report_epoch(struct bcsd *d, const struct bcsp_msg *m)
{
	uint64_t now = now_mono_ms();
	uint64_t wait = strobe_slices_ms(d, REPORT_EPOCH_SLICES);
	uint32_t epoch;

	if (!d->master.active || m->hdr.epoch <= d->master.epoch)
		return;
	if (wait < 2 * d->cfg.report_ms)
		wait = 2 * d->cfg.report_ms;
	/* A new episode if the last such report is long gone. */
	if (!d->master.higher_epoch_ms || now - d->master.higher_epoch_last_ms > wait)
		d->master.higher_epoch_ms = now;
	d->master.higher_epoch_last_ms = now;
	if (now - d->master.higher_epoch_ms < wait || !next_epoch(d, &epoch))
		return;
	d->master.higher_epoch_ms = 0;
	jobs_adopt_reported(d, m->hdr.sender, &m->report);
	d->master.epoch = epoch;
	d->followed.epoch = d->master.epoch;
	d->followed.max_epoch_seen = d->master.epoch;
	d->cnt.takeovers++;
	pr_notice("node %u follows epoch %u: taking over again with epoch %u",
		  m->hdr.sender, m->hdr.epoch, d->master.epoch);
	jobs_map_changed(d, true);
}

/* A report from the network: does its node follow a higher epoch? */
void takeover_on_report(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from)
{
	if (!from->local)
		report_epoch(d, m);
}

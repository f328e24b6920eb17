// SPDX-License-Identifier: GPL-2.0
/*
 * The master's clock: one strobe per slice, or with plan_slices above 1
 * one per plan_slices slices, each a plan of twice as many (proto.h,
 * bcsp_plan_make()); and what the nodes say of it (their switches, for
 * the global records; their clocks' offsets).
 *
 * Strobes are time-triggered: the strobe of slice n leaves lead_us before
 * its deadline, so every node holds it before the deadline and switches
 * at the same instant whatever the network latency.  Deadlines are
 * CLOCK_REALTIME: the nodes' clocks must be synchronised (chrony, PTP).
 */
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bcsd.h"
#include "core/log.h"
#include "master/global.h"
#include "master/jobs.h"
#include "master/strobe.h"

uint64_t strobe_slices_ms(const struct bcsd *d, uint64_t slices)
{
	uint64_t ms = slices * d->slice_ns / 1000000;

	return ms ? ms : 1;
}

void strobe_arm(struct bcsd *d, uint64_t at_ns)
{
	loop_timer_at(d->master.strobe_fd, at_ns);
}

/*
 * Arm the timer for the next copy of the strobe just sent, or for the
 * next strobe.  Copies let a node that loses a datagram still switch on
 * time; a slice is lost only when every copy is.  They go out a little
 * apart (losses come in bursts), spread over the first half of the lead
 * so that even the last arrives well before the deadline.  A master
 * running late still sends them, but none within a gap of the deadline.
 */
static void next_copy(struct bcsd *d, uint64_t lead, uint64_t now)
{
	unsigned int copies = (unsigned int)d->cfg.strobe_copies;
	uint64_t gap = lead / 2 / copies;

	if (d->master.strobe_copies_left &&
	    now + 2 * gap < d->master.strobe_deadline_ns) {
		strobe_arm(d, now + gap + 1);
		return;
	}
	d->master.strobe_copies_left = 0;
	strobe_arm(d, d->master.strobe_deadline_ns +
		   d->master.plan_next * d->slice_ns - lead);
}

/*
 * Strobe @s as sent, into the global records: each slice it names (its
 * plan's), by the row it runs.  Slices already planned are there.
 */
static void plan_sent(struct bcsd *d, const struct bcsp_strobe *s,
		      uint64_t sent_ns)
{
	struct bcsp_strobe one = *s;
	uint32_t i, len = bcsp_plan_len(s);

	for (i = 0; i < len; i++) {
		one.slice = s->slice + i;
		one.deadline_ns = s->deadline_ns + i * s->slice_ns;
		one.row = bcsp_plan_row(s->plan_rows, s->row, i);
		global_sent(d, d->master.epoch, &one, sent_ns);
	}
}

/*
 * The plan of strobe @s, whose first slice has the home rows @rows in
 * force, into @s; and when the master's next strobe is.  Cut short at the
 * next map change (jobs.c chooses its slice at or after every slice
 * planned already), so that every node changes there alike.
 */
/*
 * Plans: plan_slices above 1, and protocol_version 4, which every daemon
 * that speaks knows them (proto.h, BCSP_VERSION): while a cluster is
 * upgraded from version 3 (protocol_version 3), a strobe per slice.  Both
 * options reload: plans start at the next strobe, or end there (nodes
 * still switch the slices planned before it, plan_end).
 */
static bool plans_on(const struct bcsd *d)
{
	return d->cfg.plan_slices > 1 && d->cfg.protocol_version >= 4;
}

static void plan_fill(struct bcsd *d, struct bcsp_strobe *s, uint64_t rows)
{
	uint32_t next;

	if (!plans_on(d)) {
		d->master.plan_next = 1;
		if (s->slice + 1 > d->master.plan_end)
			d->master.plan_end = s->slice + 1;
		return;
	}
	s->plan_slices = bcsp_plan_make(s->slice, d->cfg.plan_slices,
					d->master.map_apply_slice,
					d->master.plan_end, &next);
	s->plan_next = next;
	s->plan_rows = rows;
	d->master.plan_next = next;
	if (s->slice + s->plan_slices > d->master.plan_end)
		d->master.plan_end = s->slice + s->plan_slices;
}

static void on_strobe_timer(struct bcsd *d, void *arg)
{
	uint64_t lead = (uint64_t)d->cfg.lead_us * 1000, now, behind, rows;
	uint64_t skip;
	struct bcsp_msg *m = &d->master.strobe_msg;
	uint32_t version = d->master.map_version;

	(void)arg;
	loop_drain_timer(d->master.strobe_fd);
	if (!d->master.active)
		return;
	now = now_real_ns();
	if (d->master.strobe_copies_left) {
		d->master.strobe_copies_left--;
		if (!net_send(d, m, NULL))
			d->cnt.strobe_copies_tx++;
		next_copy(d, lead, now);
		return;
	}
	d->master.strobe_slice += d->master.plan_next;
	d->master.strobe_deadline_ns += d->master.plan_next * d->slice_ns;
	/*
	 * Fell behind (stopped, overloaded): skip the slices that are gone,
	 * and start the next a lead from now, off the old grid, whose next
	 * deadline may lie up to a slice further.
	 */
	skip = 0;
	if (d->master.strobe_deadline_ns < now + lead / 2) {
		behind = (now + lead / 2 - d->master.strobe_deadline_ns) /
			 d->slice_ns + 1;
		/*
		 * With plans the nodes still switch the slices planned, on
		 * the grid: the next plan starts at the first of them not
		 * too close, on the grid, and replaces the rest alike
		 * everywhere.  Off the grid only past them.
		 */
		if (plans_on(d) &&
		    d->master.strobe_slice + behind < d->master.plan_end) {
			skip = behind;
			d->master.strobe_slice += behind;
			d->master.strobe_deadline_ns += behind * d->slice_ns;
		} else {
			behind = (now + lead - d->master.strobe_deadline_ns) /
				 d->slice_ns;
			d->master.strobe_slice += behind;
			d->master.strobe_deadline_ns = now + lead;
		}
	}
	/*
	 * From the map as announced (jobs.c sends every change): the
	 * rotation wire-protocol.rst specifies, which a node holding the
	 * map the strobe names can work out for itself.
	 */
	rows = followed_rows_at(d, d->master.strobe_slice, &version);
	memset(m, 0, sizeof(*m));
	m->hdr.type = BCSP_STROBE;
	m->hdr.epoch = d->master.epoch;
	m->hdr.priority = (uint16_t)d->cfg.priority;
	m->strobe.slice = d->master.strobe_slice;
	m->strobe.deadline_ns = d->master.strobe_deadline_ns;
	m->strobe.slice_ns = d->slice_ns;
	/* Slices skipped on the grid ran their rows on the nodes. */
	m->strobe.row = bcsp_plan_row(rows, bcsp_rows_next(rows,
							   d->master.strobe_row),
				      skip);
	m->strobe.map_version = version;
	m->strobe.nr_rows = jobs_nr_rows(d);
	plan_fill(d, &m->strobe, rows);
	/* The row of the slice before the next strobe's, to step on from. */
	d->master.strobe_row = bcsp_plan_row(m->strobe.plan_rows, m->strobe.row,
					     d->master.plan_next - 1);
	/* Down a tree, sent again where missed rather than copied (tree.c). */
	if (tree_transport(d) && d->cfg.strobe_copies > 1)
		m->strobe.flags = BCSP_STROBE_F_REPAIR;
	if (!net_send(d, m, NULL))
		d->cnt.strobes_tx++;
	plan_sent(d, &m->strobe, now_real_ns());
	d->followed.slice = d->master.strobe_slice;
	d->followed.plan_len = bcsp_plan_len(&m->strobe);
	d->followed.heard_ms = now_mono_ms();
	/* To this host's node part, as the group gets it. */
	dispatch(d, m, &(struct bcsd_origin){
		.local = true, .slice = d->master.strobe_slice });
	jobs_map_resend(d);
	d->master.strobe_copies_left = tree_transport(d) ? 0 :
		(unsigned int)d->cfg.strobe_copies - 1;
	next_copy(d, lead, now);
}

/*
 * How the nodes' switches went, for the global records: from the
 * network, or from this host's switches part.
 */
void strobe_on_switches(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from)
{
	(void)from;
	if (d->master.active)
		global_add(d, m->hdr.epoch, &m->sw, now_real_ns());
}

/*
 * A parent's estimates of its children's clock offsets (probe.c): from
 * the network, or from this host's probe part.  Only the active master
 * composes them; each batch is a moment to check them.
 */
void strobe_on_offsets(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	uint64_t now = now_real_ns();

	(void)from;
	if (!d->master.active)
		return;
	offsets_add(d, m->hdr.sender, &m->offsets, now);
	offsets_check(d, now, now_mono_ms());
}

int strobe_init(struct bcsd *d)
{
	d->master.strobe_fd = timerfd_create(CLOCK_REALTIME,
					     TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->master.strobe_fd < 0) {
		pr_err("timerfd: %s", strerror(errno));
		return -1;
	}
	if (loop_add(d, d->master.strobe_fd, LOOP_STROBE, on_strobe_timer,
		     NULL)) {
		strobe_exit(d);
		return -1;
	}
	return 0;
}

void strobe_exit(struct bcsd *d)
{
	if (d->master.strobe_fd < 0)
		return;
	loop_del(d, d->master.strobe_fd);
	close(d->master.strobe_fd);
	d->master.strobe_fd = -1;
}

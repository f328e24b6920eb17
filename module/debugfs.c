// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs bcs/: the state, jobs, tasks and recent slices as text, for
 * people.  Programs should use the ioctls and /dev/bcsstat, whose formats
 * are stable; these files may change.  Failure to create them is not an
 * error (debugfs may be absent or disabled).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "debugfs.h"
#include "dist_ctx.h"
#include "events.h"
#include "job.h"
#include "queue.h"
#include "sched.h"
#include "ring.h"

#define BCS_DEBUGFS_SLICES	64

static struct dentry *bcs_debugfs_dir;

static const char *const bcs_mode_names[] = {
	[BCS_MODE_OFF]		= "off",
	[BCS_MODE_STANDALONE]	= "standalone",
	[BCS_MODE_DRIVEN]	= "driven",
};

static const char *const bcs_window_names[] = {
	[BCS_WINDOW_NONE]	= "none",
	[BCS_WINDOW_ARMED]	= "armed",
	[BCS_WINDOW_CAPTURING]	= "capturing",
	[BCS_WINDOW_DONE]	= "done",
};

static int bcs_state_show(struct seq_file *m, void *v)
{
	struct bcs_events_counts ev;
	struct bcs_window w = { .size = sizeof(w), .op = BCS_WINDOW_GET };
	struct bcs_state st = {};
	u64 dropped;
	u32 kept;

	bcs_sched_get_state(&st);
	bcs_sched_window(&w);
	seq_printf(m, "mode: %s\n", st.mode < ARRAY_SIZE(bcs_mode_names) ?
		   bcs_mode_names[st.mode] : "?");
	if (st.row == BCS_ROW_NONE)
		seq_puts(m, "row: none\n");
	else
		seq_printf(m, "row: %u\n", st.row);
	seq_printf(m, "slice: %llu\n", st.slice);
	seq_printf(m, "slice_ns: %llu\n", st.slice_ns);
	seq_printf(m, "watchdog_slices: %u\n", st.watchdog_slices);
	seq_printf(m, "failopen: %u\n", st.failopen);
	seq_printf(m, "driver_pid: %d\n", st.driver_pid);
	seq_printf(m, "jobs: %u\n", st.nr_jobs);
	seq_printf(m, "tasks: %u\n", st.nr_tasks);
	seq_printf(m, "parked: %u\n", st.nr_parked);
	seq_printf(m, "strobes: %llu\n", st.strobes);
	seq_printf(m, "switches: %llu\n", st.switches);
	seq_printf(m, "late: %llu\n", st.late);
	seq_printf(m, "missed: %llu\n", st.missed);
	seq_printf(m, "failopens: %llu\n", st.failopens);
	seq_printf(m, "attach_failures: %llu\n", st.attach_failures);
	seq_printf(m, "stat_records: %u\n", st.stat_records);
	seq_printf(m, "drain_cuts: %llu\n", st.drain_cuts);
	seq_printf(m, "predicted: %llu\n", st.predicted);
	seq_printf(m, "expired: %llu\n", st.expired);
	seq_printf(m, "planned: %llu\n", st.planned);
	seq_printf(m, "queued: %u\n", bcs_queue_count());
	bcs_events_get_counts(&ev);
	seq_printf(m, "job_events: %llu\n", ev.seq);
	seq_printf(m, "job_events_sent: %llu\n", ev.sent);
	seq_printf(m, "job_events_dropped: %llu\n", ev.dropped);
	seq_printf(m, "job_events_failed: %llu\n", ev.failed);
	bcs_dist_get_kept(&kept, &dropped);
	seq_printf(m, "dist_destroyed_jobs: %u\n", kept);
	seq_printf(m, "dist_dropped_jobs: %llu\n", dropped);
	seq_printf(m, "window: %s", w.state < ARRAY_SIZE(bcs_window_names) ?
		   bcs_window_names[w.state] : "?");
	if (w.state != BCS_WINDOW_NONE)
		seq_printf(m, " %llu..%llu records %llu dropped %llu first_seq %llu",
			   w.from_slice, w.to_slice, w.records, w.dropped,
			   w.first_seq);
	seq_putc(m, '\n');
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bcs_state);

static int bcs_dist_file_show(struct seq_file *m, void *v)
{
	bcs_dist_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bcs_dist_file);

static int bcs_jobs_show(struct seq_file *m, void *v)
{
	struct bcs_kjob *job;
	unsigned long flags;

	seq_puts(m, "job row state tasks parked slices\n");
	spin_lock_irqsave(&bcs_lock, flags);
	list_for_each_entry(job, &bcs_jobs, node) {
		if (job->row == BCS_ROW_NONE)
			seq_printf(m, "%u none", job->id);
		else
			seq_printf(m, "%u %u", job->id, job->row);
		seq_printf(m, " %s %u %u %llu\n",
			   job->suspended ? "suspended" : "running",
			   job->nr_tasks, job->nr_parked, job->slices_run);
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bcs_jobs);

static const char *const bcs_task_state_names[] = {
	[BCS_TASK_RUNNABLE]	= "runnable",
	[BCS_TASK_BLOCKED]	= "blocked",
	[BCS_TASK_PARKED]	= "parked",
};

static int bcs_tasks_show(struct seq_file *m, void *v)
{
	struct bcs_task_stat st;
	struct bcs_kjob *job;
	struct bcs_task *bt;
	unsigned long flags;
	u64 now;

	seq_puts(m, "pid tgid job state run_ns suspended_ns blocked_ns slices parks\n");
	spin_lock_irqsave(&bcs_lock, flags);
	now = ktime_get_ns();
	list_for_each_entry(job, &bcs_jobs, node) {
		list_for_each_entry(bt, &job->tasks, job_node) {
			bcs_task_fill_stat(bt, &st, now);
			seq_printf(m, "%d %d %u %s %llu %llu %llu %llu %llu\n",
				   st.pid, st.tgid, st.job,
				   bcs_task_state_names[st.state], st.run_ns,
				   st.suspended_ns, st.blocked_ns,
				   st.slices_run, st.parks);
		}
	}
	spin_unlock_irqrestore(&bcs_lock, flags);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bcs_tasks);

/* " <ns since @start>", or " -" while @at is not known yet. */
static void bcs_print_after(struct seq_file *m, u64 at, u64 start)
{
	if (at)
		seq_printf(m, " %llu", at > start ? at - start : 0);
	else
		seq_puts(m, " -");
}

static int bcs_slices_show(struct seq_file *m, void *v)
{
	struct bcs_slice_record *recs;
	unsigned long flags;
	u64 head, seq;
	int i, n = 0;

	recs = kmalloc_array(BCS_DEBUGFS_SLICES, sizeof(*recs), GFP_KERNEL);
	if (!recs)
		return -ENOMEM;
	spin_lock_irqsave(&bcs_lock, flags);
	head = bcs_ring_head();
	seq = head > BCS_DEBUGFS_SLICES ? head - BCS_DEBUGFS_SLICES : 0;
	for (; seq < head; seq++)
		if (bcs_ring_get(seq, &recs[n]))
			n++;
	spin_unlock_irqrestore(&bcs_lock, flags);

	seq_puts(m, "seq slice row flags interval_ns switch_ns suspended resumed running blocked late missed parked_after_ns resumed_after_ns\n");
	for (i = 0; i < n; i++) {
		struct bcs_slice_record *r = &recs[i];

		seq_printf(m, "%llu %llu ", r->seq, r->slice);
		if (r->row == BCS_ROW_NONE)
			seq_puts(m, "none");
		else
			seq_printf(m, "%u", r->row);
		seq_printf(m, " %#x %llu %llu %u %u %u %u %u %u", r->flags,
			   r->interval_ns, r->switch_ns, r->nr_suspended,
			   r->nr_resumed, r->nr_running, r->nr_blocked,
			   r->late, r->missed);
		bcs_print_after(m, r->parked_ns, r->switch_start_ns);
		bcs_print_after(m, r->resumed_ns, r->switch_start_ns);
		seq_putc(m, '\n');
	}
	kfree(recs);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bcs_slices);

void bcs_debugfs_init(void)
{
	bcs_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("state", 0444, bcs_debugfs_dir, NULL,
			    &bcs_state_fops);
	debugfs_create_file("jobs", 0444, bcs_debugfs_dir, NULL,
			    &bcs_jobs_fops);
	debugfs_create_file("tasks", 0444, bcs_debugfs_dir, NULL,
			    &bcs_tasks_fops);
	debugfs_create_file("slices", 0444, bcs_debugfs_dir, NULL,
			    &bcs_slices_fops);
	debugfs_create_file("dist", 0444, bcs_debugfs_dir, NULL,
			    &bcs_dist_file_fops);
}

void bcs_debugfs_exit(void)
{
	debugfs_remove_recursive(bcs_debugfs_dir);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bcsd's metrics in the Prometheus text format (metrics.h): every counter
 * of the table (counters.h) as bcsd_NAME_total, the loop's, the view's
 * state as gauges, and bcs.ko's (bcs_get_state()) as bcs_*, on a node.
 * The file is made whole in memory, then written to a temporary file of
 * the same directory (mkstemp: never through a link) that is renamed
 * over metrics_file, mode 0644: node_exporter's textfile collector reads
 * only names ending in .prom, so it never sees the temporary one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bcs.h>

#include "libbcs/bcs.h"
#include "bcsd.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/promtext.h"

/* bcs.ko's state, on a node (bcs_get_state(): one netlink request). */
static void kernel_metrics(const struct bcsd *d, FILE *f)
{
	struct bcs_state st;
	bool up = d->bcs && !bcs_get_state(d->bcs, &st);

	prom_u64(f, "bcs_up", PROM_GAUGE,
		 "bcs.ko's state could be read (1) or not (0)", up);
	if (!up)
		return;
	prom_u64(f, "bcs_mode", PROM_GAUGE,
		 "bcs.ko's mode (enum bcs_mode): 0 off, 1 standalone, 2 driven",
		 st.mode);
	prom_u64(f, "bcs_failopen", PROM_GAUGE,
		 "1 while bcs.ko is failed open in driven mode", st.failopen);
	prom_u64(f, "bcs_slice", PROM_GAUGE, "bcs.ko's current slice",
		 st.slice);
	prom_u64(f, "bcs_jobs", PROM_GAUGE, "jobs in bcs.ko", st.nr_jobs);
	prom_u64(f, "bcs_tasks", PROM_GAUGE, "tasks (threads) attached",
		 st.nr_tasks);
	prom_u64(f, "bcs_parked_tasks", PROM_GAUGE, "tasks parked right now",
		 st.nr_parked);
	prom_u64(f, "bcs_strobes_total", PROM_COUNTER, "strobes accepted",
		 st.strobes);
	prom_u64(f, "bcs_switches_total", PROM_COUNTER, "slices started",
		 st.switches);
	prom_u64(f, "bcs_late_total", PROM_COUNTER,
		 "switches after their deadline", st.late);
	prom_u64(f, "bcs_missed_total", PROM_COUNTER,
		 "strobes lost or superseded", st.missed);
	prom_u64(f, "bcs_predicted_total", PROM_COUNTER,
		 "switches to a predicted row (its strobe lost)", st.predicted);
	prom_u64(f, "bcs_expired_total", PROM_COUNTER,
		 "slices that ran no row: their strobe's row ended", st.expired);
	prom_u64(f, "bcs_drain_cuts_total", PROM_COUNTER,
		 "switches that woke the next row at the drain limit",
		 st.drain_cuts);
	prom_u64(f, "bcs_failopens_total", PROM_COUNTER, "fail-open events",
		 st.failopens);
	prom_u64(f, "bcs_attach_failures_total", PROM_COUNTER,
		 "children not attached (no memory)", st.attach_failures);
}

void metrics_format(const struct bcsd *d, FILE *f)
{
	uint32_t fresh, need;
	char role[32];

	prom_head(f, "bcsd_info", PROM_GAUGE,
		  "bcsd's version and role (always 1)");
	fprintf(f, "bcsd_info{version=\"%s\",role=\"%s\"} 1\n",
		BCS_PACKAGE_VERSION,
		prom_escape_label(cfg_role_name(d->cfg.role), role,
				  sizeof(role)));
	prom_u64(f, "bcsd_start_time_seconds", PROM_GAUGE,
		 "when bcsd started, in seconds since the epoch",
		 d->metrics.start_s);
	prom_u64(f, "bcsd_node_id", PROM_GAUGE, "this node's id", d->node_id);
	prom_u64(f, "bcsd_cluster", PROM_GAUGE, "the cluster id", d->cluster);
	prom_u64(f, "bcsd_active_master", PROM_GAUGE,
		 "1 while this daemon is the active master", d->master.active);
	prom_u64(f, "bcsd_master_known", PROM_GAUGE,
		 "1 while a master is followed", d->followed.known);
	prom_u64(f, "bcsd_master_id", PROM_GAUGE,
		 "the node id of the master followed (0: none)",
		 d->followed.known ? d->followed.id : 0);
	prom_u64(f, "bcsd_master_epoch", PROM_GAUGE,
		 "the epoch of the master followed", d->followed.epoch);
	prom_u64(f, "bcsd_slice", PROM_GAUGE,
		 "the slice of the last strobe followed", d->followed.slice);
	view_quorum(d, now_mono_ms(), &fresh, &need);
	prom_u64(f, "bcsd_nodes_reporting", PROM_GAUGE,
		 "nodes whose reports are fresh", fresh);
	prom_u64(f, "bcsd_nodes_heard", PROM_GAUGE, "nodes ever heard",
		 d->view.nr_peers);
	if (net_tree(d))
		need = d->net.tree->quorum(d);
	prom_u64(f, "bcsd_quorum", PROM_GAUGE,
		 "nodes a standby needs reporting to take over", need);
	prom_u64(f, "bcsd_ticks_total", PROM_COUNTER,
		 "core: the housekeeping tick's runs", d->loop.nr_tick_runs);
	prom_u64(f, "bcsd_tick_wakeups_total", PROM_COUNTER,
		 "core: of them, on a wake-up of their own",
		 d->loop.nr_tick_wakeups);
	prom_counters(f, &d->cnt);
	if (!d->node_role)
		return;
	prom_u64(f, "bcsd_driving", PROM_GAUGE,
		 "1 while this daemon drives bcs.ko (driven mode)",
		 d->node.driving);
	kernel_metrics(d, f);
}

/* The file at @path replaced by @len bytes of @buf, mode 0644. */
static int replace(const char *path, const char *buf, size_t len)
{
	char tmp[CFG_STR_MAX + 8];
	ssize_t n = 0;
	size_t off;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (off = 0; off < len && n >= 0; off += (size_t)n)
		n = write(fd, buf + off, len - off);
	if (n < 0 || fchmod(fd, 0644))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

void metrics_write(struct bcsd *d)
{
	const char *path = d->cfg.metrics_file;
	uint64_t now = now_mono_ms();
	size_t len = 0;
	char *buf = NULL;
	FILE *f;
	int err;

	if (!*path)
		return;
	d->metrics.written_ms = now;
	f = open_memstream(&buf, &len);
	if (!f) {
		err = -errno;
	} else {
		metrics_format(d, f);
		err = fclose(f) ? -errno : replace(path, buf, len);
	}
	free(buf);
	if (!err)
		return;
	d->cnt.metrics_failed++;
	if (d->metrics.failed_said_ms && now - d->metrics.failed_said_ms < 60000)
		return;
	d->metrics.failed_said_ms = now;
	pr_warn("metrics_file %s not written: %s (said once a minute at most)",
		path, strerror(-err));
}

static void metrics_tick(struct bcsd *d, void *arg)
{
	(void)arg;
	if (now_mono_ms() - d->metrics.written_ms >= d->cfg.metrics_interval_ms)
		metrics_write(d);
}

int metrics_init(struct bcsd *d)
{
	memset(&d->metrics, 0, sizeof(d->metrics));
	d->metrics.start_s = now_real_ns() / 1000000000ULL;
	if (!*d->cfg.metrics_file)
		return 0;
	/* The first at once: the parts have started. */
	metrics_write(d);
	return loop_on_tick(d, metrics_tick, NULL);
}

void metrics_exit(struct bcsd *d)
{
	/* No stale figures of a daemon that is gone. */
	if (*d->cfg.metrics_file && unlink(d->cfg.metrics_file) &&
	    errno != ENOENT)
		pr_warn("metrics_file %s: %s", d->cfg.metrics_file,
			strerror(errno));
}

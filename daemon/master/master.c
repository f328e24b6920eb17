// SPDX-License-Identifier: GPL-2.0
/*
 * The master: the Ousterhout matrix (jobs to rows), one strobe per slice,
 * the job map, and fail-over between masters.  This file starts and stops
 * the part and registers its handlers; the pieces are
 *
 *   strobe.c     the clock: one strobe per slice, time-triggered
 *   jobs.c       the jobs placed in the matrix (matrix.c), the job map
 *   context.c    the statistics context the nodes record
 *   takeover.c   fail-over between masters: standby, seniority, quorum
 *   requests.c   requests (bcsctl) carried out, and their replies
 *   global.c     the global records of the slices
 */
#include "bcsd.h"
#include "master/jobs.h"
#include "master/master.h"
#include "master/requests.h"
#include "master/strobe.h"
#include "master/takeover.h"

static void master_tick(struct bcsd *d, void *arg)
{
	uint64_t now = now_mono_ms();

	(void)arg;
	if (d->master.active) {
		requests_tick(d);
		jobs_tick(d, now);
	}
	takeover_tick(d, now);
}

int master_init(struct bcsd *d)
{
	int ret;

	ret = strobe_init(d);
	if (ret)
		goto err_strobe;
	ret = loop_on_tick(d, master_tick, NULL);
	if (ret)
		goto err_tick;
	ret = jobs_init(d);
	if (ret)
		goto err_jobs;
	dispatch_register(d, BCSP_STROBE, takeover_on_strobe);
	/* A report: first its epoch, then its tasks. */
	dispatch_register(d, BCSP_REPORT, takeover_on_report);
	dispatch_register(d, BCSP_REPORT, jobs_on_report);
	dispatch_register(d, BCSP_SWITCHES, strobe_on_switches);
	dispatch_register(d, BCSP_TASKS, jobs_on_tasks);
	dispatch_register(d, BCSP_OFFSETS, strobe_on_offsets);
	dispatch_register(d, BCSP_REQUEST, requests_on_request);
	dispatch_register(d, BCSP_REPLY, requests_on_reply);
	dispatch_register(d, BCSP_RESULT, requests_on_result);
	d->ctl_providers.slices = global_json;
	/*
	 * Listen for a live master before taking over, and for the nodes'
	 * reports: they tell a restarted master the epoch the nodes follow
	 * and the jobs they hold, which it would otherwise have forgotten.
	 */
	d->followed.heard_ms = now_mono_ms();
	d->master.listen_until_ms = d->followed.heard_ms + 2 * d->cfg.report_ms;
	return 0;

err_jobs:
err_tick:
	strobe_exit(d);
err_strobe:
	return ret;
}

void master_exit(struct bcsd *d)
{
	jobs_exit(d);
	strobe_exit(d);
}

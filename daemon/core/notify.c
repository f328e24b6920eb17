// SPDX-License-Identifier: GPL-2.0
/*
 * The service manager's notifications (notify.h).  bcsd's unit is
 * Type=notify: systemd holds the units ordered after it (slurmd) until
 * READY=1, which bcsd sends once every part has started (the node part
 * opened bcs.ko, the network part joined the group, the control socket
 * listens); not once a master is followed: a node comes up, failed open,
 * while the master is away, and so does slurmd after it.  The watchdog
 * (WatchdogSec=) restarts a bcsd whose loop no longer turns: the pings
 * come from the housekeeping tick, which runs on the loop's wake-ups or
 * its own timer at least every TICK_MS_MAX * 3 / 2 ms, never from a
 * handler or a timer of their own, so that a loop stuck in a handler, or
 * spinning without ever reaching its tick, stops them.
 */
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "bcsd.h"
#include "core/log.h"
#include "core/notify.h"

static uint64_t watchdog_ms;	/* half the period; 0: off */
static uint64_t pinged_ms;

static void watchdog_tick(struct bcsd *d, void *arg)
{
	uint64_t now = now_mono_ms();

	(void)d;
	(void)arg;
	if (now - pinged_ms < watchdog_ms)
		return;
	pinged_ms = now;
	sd_notify(0, "WATCHDOG=1");
}

int notify_init(struct bcsd *d)
{
	uint64_t usec = 0;
	int ret;

	ret = sd_watchdog_enabled(0, &usec);
	if (ret <= 0 || !usec)
		return 0;
	watchdog_ms = usec / 1000 / 2;
	if (!watchdog_ms)
		watchdog_ms = 1;
	pinged_ms = now_mono_ms();
	pr_info("watchdog: a ping every %llu ms",
		(unsigned long long)watchdog_ms);
	return loop_on_tick(d, watchdog_tick, NULL);
}

void notify_ready(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void notify_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
		   (unsigned long long)ts.tv_sec * 1000000ULL +
		   (unsigned long long)ts.tv_nsec / 1000);
}

void notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: resuming every gang");
}

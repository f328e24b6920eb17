/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The service manager's notifications (sd_notify(3), libsystemd): bcsd
 * ready, reloading, stopping, its status line, and the watchdog's pings
 * from the housekeeping tick.  Without $NOTIFY_SOCKET (bcsd not started
 * by systemd, or Type= other than notify) each is a no-op.
 */
#ifndef BCSD_NOTIFY_H
#define BCSD_NOTIFY_H

struct bcsd;

/*
 * The part: with the watchdog on ($WATCHDOG_USEC, WatchdogSec= of the
 * unit), WATCHDOG=1 every half period from the loop's tick, which runs
 * only while the loop turns.
 */
int notify_init(struct bcsd *d);
/* READY=1 and STATUS=@status: bcsd serves (after a start or a reload). */
void notify_ready(const char *status);
/* RELOADING=1 with the monotonic time systemd 253 and later want. */
void notify_reloading(void);
/* STOPPING=1. */
void notify_stopping(void);

#endif /* BCSD_NOTIFY_H */

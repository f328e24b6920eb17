// SPDX-License-Identifier: GPL-2.0
/*
 * The event loop: one poll() over the descriptors the parts register
 * (loop_add()), run in the order of enum loop_order, and the
 * housekeeping tick (loop_on_tick()).  Handlers run to completion; a
 * handler may add and remove descriptors, its own or others'.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bcsd.h"
#include "core/log.h"

/* Bounds of the housekeeping tick's period (tick_period_ms()). */
#define TICK_MS_MIN	10
#define TICK_MS_MAX	100

uint64_t now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t now_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000ULL + (uint64_t)ts.tv_nsec / 1000000;
}

void loop_drain_timer(int fd)
{
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		pr_warn("timerfd: %s", strerror(errno));
}

void loop_timer_at(int fd, uint64_t at_ns)
{
	struct itimerspec its = {
		.it_value = { (time_t)(at_ns / 1000000000ULL),
			      (long)(at_ns % 1000000000ULL) },
	};

	if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL))
		pr_warn("timerfd_settime: %s", strerror(errno));
}

int loop_add(struct bcsd *d, int fd, enum loop_order order, loop_fn *fn,
	     void *arg)
{
	struct loop *l = &d->loop;
	struct loop_entry *e = NULL, *grown;
	unsigned int i, n;

	for (i = 0; i < l->nr_entries && !e; i++)
		if (l->entries[i].fd < 0)
			e = &l->entries[i];
	if (!e) {
		n = l->nr_entries ? 2 * l->nr_entries : 8;
		grown = realloc(l->entries, n * sizeof(*grown));
		if (!grown) {
			pr_err("out of memory");
			return -1;
		}
		for (i = l->nr_entries; i < n; i++)
			grown[i].fd = -1;
		e = &grown[l->nr_entries];
		l->entries = grown;
		l->nr_entries = n;
	}
	*e = (struct loop_entry){ .fd = fd, .order = order, .fn = fn,
				  .arg = arg, .gen = ++l->next_gen };
	return 0;
}

void loop_del(struct bcsd *d, int fd)
{
	struct loop *l = &d->loop;
	unsigned int i;

	for (i = 0; i < l->nr_entries; i++)
		if (l->entries[i].fd == fd)
			l->entries[i].fd = -1;
}

int loop_on_tick(struct bcsd *d, loop_fn *fn, void *arg)
{
	struct loop *l = &d->loop;

	if (l->nr_ticks >= LOOP_TICKS_MAX) {
		pr_err("bug: more than %d tick handlers", LOOP_TICKS_MAX);
		abort();
	}
	l->ticks[l->nr_ticks].fn = fn;
	l->ticks[l->nr_ticks].arg = arg;
	l->nr_ticks++;
	return 0;
}

/*
 * The tick watches for a silent master and times out requests and
 * reports; a quarter of the failover silence is fine enough for that.
 * Every wake-up of bcsd preempts the jobs it runs beside: on a busy node
 * each costs the job a context switch, so the tick is no more frequent
 * than it must be, and rides on the wake-ups bcsd has anyway.
 */
static long tick_period_ms(const struct bcsd *d)
{
	/* With plans the silence is longer by a plan's quiet (followed.h). */
	uint64_t ms = (d->cfg.failover_slices +
		       followed_quiet_slices(&d->followed)) *
		      d->slice_ns / 1000000 / 4;

	if (ms > d->cfg.report_ms)
		ms = d->cfg.report_ms;
	if (ms < TICK_MS_MIN)
		ms = TICK_MS_MIN;
	if (ms > TICK_MS_MAX)
		ms = TICK_MS_MAX;
	return (long)ms;
}

/*
 * Arm the timer for a tick of its own, one and a half periods from now:
 * past the next strobe when the period is a slice, so that a tick that
 * rode on a strobe does not race the next one.  timerfd_settime() also
 * clears an expiration not yet read, so the timer is never drained.
 */
static int arm_tick(struct loop *l)
{
	long ms = l->tick_ms * 3 / 2;
	struct itimerspec its = {
		.it_value = { ms / 1000, ms % 1000 * 1000000L },
	};

	return timerfd_settime(l->tick_fd, 0, &its, NULL);
}

static void run_ticks(struct bcsd *d, uint64_t now)
{
	struct loop *l = &d->loop;
	unsigned int i;

	l->tick_last_ms = now;
	l->nr_tick_runs++;
	/* The master's plans may have changed it. */
	l->tick_ms = tick_period_ms(d);
	for (i = 0; i < l->nr_ticks; i++)
		l->ticks[i].fn(d, l->ticks[i].arg);
	if (arm_tick(l))
		pr_warn("timerfd: %s", strerror(errno));
}

/* Nothing else woke bcsd for one and a half periods. */
static void on_tick(struct bcsd *d, void *arg)
{
	(void)arg;
	d->loop.nr_tick_wakeups++;
	run_ticks(d, now_mono_ms());
}

int loop_init(struct bcsd *d)
{
	struct loop *l = &d->loop;

	memset(l, 0, sizeof(*l));
	l->tick_ms = tick_period_ms(d);
	l->tick_last_ms = now_mono_ms();
	l->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->tick_fd < 0 || arm_tick(l)) {
		pr_err("timerfd: %s", strerror(errno));
		return -1;
	}
	return loop_add(d, l->tick_fd, LOOP_TICK, on_tick, NULL);
}

void loop_exit(struct bcsd *d)
{
	struct loop *l = &d->loop;

	if (l->tick_fd >= 0)
		close(l->tick_fd);
	free(l->entries);
	free(l->pfd);
	free(l->pfd_entry);
	free(l->pfd_gen);
	memset(l, 0, sizeof(*l));
	l->tick_fd = -1;
}

/* Room for a pollfd per entry; handlers may add entries, not this. */
static int pfd_room(struct loop *l)
{
	unsigned int n = l->nr_entries;
	struct pollfd *pfd;
	unsigned int *entry;
	uint64_t *gen;

	if (l->pfd_room >= n)
		return 0;
	pfd = realloc(l->pfd, n * sizeof(*pfd));
	if (pfd)
		l->pfd = pfd;
	entry = realloc(l->pfd_entry, n * sizeof(*entry));
	if (entry)
		l->pfd_entry = entry;
	gen = realloc(l->pfd_gen, n * sizeof(*gen));
	if (gen)
		l->pfd_gen = gen;
	if (!pfd || !entry || !gen) {
		pr_err("out of memory");
		return -1;
	}
	l->pfd_room = n;
	return 0;
}

int loop_wait(struct bcsd *d)
{
	struct loop *l = &d->loop;
	struct loop_entry *e;
	unsigned int n = 0, i;
	uint64_t now;
	int order;

	if (pfd_room(l))
		return -1;
	for (order = 0; order < __LOOP_ORDERS; order++) {
		for (i = 0; i < l->nr_entries; i++) {
			e = &l->entries[i];
			if (e->fd < 0 || e->order != (enum loop_order)order)
				continue;
			l->pfd[n] = (struct pollfd){ .fd = e->fd,
						     .events = POLLIN };
			l->pfd_entry[n] = i;
			l->pfd_gen[n] = e->gen;
			n++;
		}
	}
	if (poll(l->pfd, (nfds_t)n, -1) < 0) {
		if (errno == EINTR)
			return 0;
		pr_err("poll: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		/* Taken afresh: a handler may move the entries (loop_add()). */
		e = &l->entries[l->pfd_entry[i]];
		/* Removed meanwhile, or the entry holds another now. */
		if (!l->pfd[i].revents || e->fd < 0 || e->gen != l->pfd_gen[i])
			continue;
		e->fn(d, e->arg);
	}
	/*
	 * Half a period or more since the last tick: it runs now, on this
	 * wake-up (a strobe's, most often), and its timer moves on.
	 */
	now = now_mono_ms();
	if (now - l->tick_last_ms >= (uint64_t)l->tick_ms / 2)
		run_ticks(d, now);
	return 0;
}

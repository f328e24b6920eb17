/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event loop of bcsd: one poll() over the descriptors the parts
 * register, and a housekeeping tick whose handlers the parts register.
 * Also the clocks every part reads.
 */
#ifndef BCSD_LOOP_H
#define BCSD_LOOP_H

#include <poll.h>
#include <stdint.h>

struct bcsd;

/*
 * When several descriptors are ready at once, their handlers run in this
 * order: strobes are due at a deadline, datagrams may be strobes, and a
 * connection's request is read before a new connection may take its slot.
 */
enum loop_order {
	LOOP_STROBE,		/* the master's strobe timer */
	LOOP_NET,		/* datagrams */
	LOOP_TICK,		/* the housekeeping tick; a tree's lost strobes */
	LOOP_EVENTS,		/* bcs.ko's announcements: ends of jobs */
	LOOP_CLIENT,		/* control connections */
	LOOP_LISTEN,		/* new control connections */
	__LOOP_ORDERS,
};

typedef void loop_fn(struct bcsd *d, void *arg);

struct loop_entry {
	int fd;				/* -1: a free entry */
	enum loop_order order;
	loop_fn *fn;
	void *arg;
	uint64_t gen;			/* tells a reused entry from its past */
};

#define LOOP_TICKS_MAX		20

struct loop {
	struct loop_entry *entries;
	unsigned int nr_entries;	/* in use or free */
	uint64_t next_gen;
	/* What one poll() waits for, loop_wait()'s own. */
	struct pollfd *pfd;
	unsigned int *pfd_entry;	/* the entry of pfd[i] */
	uint64_t *pfd_gen;		/* its gen then */
	unsigned int pfd_room;
	/*
	 * The tick: its handlers run at the end of a wake-up half a period
	 * or more after they last ran, or by tick_fd (CLOCK_MONOTONIC, one
	 * shot) when nothing woke bcsd for one and a half periods.
	 */
	int tick_fd;
	long tick_ms;			/* the period */
	uint64_t tick_last_ms;		/* CLOCK_MONOTONIC */
	uint64_t nr_tick_runs;		/* the handlers ran */
	uint64_t nr_tick_wakeups;	/* of those, on a wake-up of their own */
	struct {
		loop_fn *fn;
		void *arg;
	} ticks[LOOP_TICKS_MAX];
	unsigned int nr_ticks;
};

uint64_t now_real_ns(void);		/* CLOCK_REALTIME */
uint64_t now_mono_ms(void);		/* CLOCK_MONOTONIC */

int loop_init(struct bcsd *d);
void loop_exit(struct bcsd *d);
/* Call @fn(@d, @arg) when @fd is readable; 0 or -1. */
int loop_add(struct bcsd *d, int fd, enum loop_order order, loop_fn *fn,
	     void *arg);
/* Forget @fd, before it is closed. */
void loop_del(struct bcsd *d, int fd);
/*
 * Call @fn(@d, @arg) at every tick, in the order of registration: every
 * half to one and a half periods (a quarter of the failover silence,
 * 10 to 100 ms), so handlers compare clocks, never count ticks.
 */
int loop_on_tick(struct bcsd *d, loop_fn *fn, void *arg);
/*
 * Wait for the descriptors and run the handlers of those ready; 0, also
 * when a signal cut the wait short, or -1 if poll() failed.
 */
int loop_wait(struct bcsd *d);
/* Read a timerfd's count of expirations, which poll() saw. */
void loop_drain_timer(int fd);
/* Arm timerfd @fd, one shot, for its clock's @at_ns; 0 disarms it. */
void loop_timer_at(int fd, uint64_t at_ns);

#endif /* BCSD_LOOP_H */

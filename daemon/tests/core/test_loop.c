// SPDX-License-Identifier: GPL-2.0
/*
 * The event loop's housekeeping tick (loop.c), on the real clocks: its
 * period from the configuration; that, with nothing else to wake bcsd,
 * its own timer runs the handlers one and a half periods after they last
 * ran; and that when other wake-ups come, the handlers ride on them,
 * never closer than half a period, with no wake-up of their own.
 */
#include <string.h>
#include <unistd.h>

#include "bcsd.h"
#include "tests/unit.h"

static struct bcsd d;
static uint64_t tick_at[64];
static unsigned int nr_ticked;

static void ticked(struct bcsd *dd, void *arg)
{
	(void)dd;
	(void)arg;
	if (nr_ticked < 64)
		tick_at[nr_ticked] = now_mono_ms();
	nr_ticked++;
}

static unsigned int nr_ready;

/* A descriptor always readable: a wake-up at every round. */
static void ready(struct bcsd *dd, void *arg)
{
	(void)dd;
	(void)arg;
	nr_ready++;
}

/* The period loop_init() takes from slice, failover and report period. */
static long period(uint64_t slice_ms, uint32_t failover, uint32_t report_ms)
{
	long ms;

	memset(&d, 0, sizeof(d));
	d.slice_ns = slice_ms * 1000000;
	d.cfg.failover_slices = failover;
	d.cfg.report_ms = report_ms;
	if (loop_init(&d))
		return -1;
	ms = d.loop.tick_ms;
	loop_exit(&d);
	return ms;
}

static void test_period(void)
{
	CHECK(period(100, 5, 1000) == 100);	/* 125, at most 100 */
	CHECK(period(20, 4, 1000) == 20);	/* a quarter of the silence */
	CHECK(period(1, 2, 1000) == 10);	/* at least 10 */
	CHECK(period(1000, 5, 50) == 50);	/* no longer than report_ms */
}

static void test_own_timer(void)
{
	uint64_t t0;

	memset(&d, 0, sizeof(d));
	d.slice_ns = 20 * 1000000ULL;
	d.cfg.failover_slices = 4;
	d.cfg.report_ms = 1000;
	nr_ticked = 0;
	CHECK(loop_init(&d) == 0);
	CHECK(loop_on_tick(&d, ticked, NULL) == 0);
	t0 = d.loop.tick_last_ms;
	/* Only the timer can end this wait. */
	CHECK(loop_wait(&d) == 0);
	CHECK(nr_ticked == 1);
	CHECK(d.loop.nr_tick_wakeups == 1);
	/* now_mono_ms() truncates: a millisecond of slack. */
	CHECK(tick_at[0] - t0 + 1 >= 30);
	loop_exit(&d);
}

static void test_riding(void)
{
	unsigned int i, rounds = 0, failed = 0;
	uint64_t t0, now;
	int p[2];

	memset(&d, 0, sizeof(d));
	d.slice_ns = 100 * 1000000ULL;
	d.cfg.failover_slices = 5;
	d.cfg.report_ms = 1000;
	nr_ticked = 0;
	nr_ready = 0;
	CHECK(pipe(p) == 0);
	CHECK(write(p[1], "x", 1) == 1);	/* never read: always ready */
	CHECK(loop_init(&d) == 0);
	CHECK(loop_on_tick(&d, ticked, NULL) == 0);
	CHECK(loop_add(&d, p[0], LOOP_NET, ready, NULL) == 0);
	t0 = now_mono_ms();
	/* The first wake-ups come before half a period: no tick on them. */
	CHECK(loop_wait(&d) == 0);
	CHECK(nr_ready == 1);
	CHECK(nr_ticked == 0 || now_mono_ms() - t0 >= 50);
	/* Until six ticks ran, for 10 s at most. */
	do {
		failed += loop_wait(&d) != 0;
		now = now_mono_ms();
	} while (++rounds < 100000000 && nr_ticked < 6 && now - t0 < 10000);
	CHECK(failed == 0);
	CHECK(nr_ready == rounds + 1);
	CHECK(nr_ticked >= 6);
	/* Never closer than half a period. */
	for (i = 1; i < nr_ticked && i < 64; i++)
		CHECK(tick_at[i] - tick_at[i - 1] >= 50);
	CHECK(d.loop.nr_tick_runs == nr_ticked);
	/*
	 * On the descriptor's wake-ups: the timer fires only if this process
	 * was held off the CPU for a whole period, as it may be on a loaded
	 * host, so most, not all.
	 */
	CHECK(2 * d.loop.nr_tick_wakeups < nr_ticked);
	loop_exit(&d);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_period();
	test_own_timer();
	test_riding();
	return unit_done("test_loop");
}

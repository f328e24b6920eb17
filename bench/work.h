/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unit of computation of the bulk-synchronous benchmarks (barrier,
 * mpi_barrier): a fixed number of steps of a 64-bit linear congruential
 * generator, not a time, so that a descheduled rank takes longer.  Shared
 * so that the TCP and MPI programs do the same work per --work unit.
 */
#ifndef BCS_BENCH_WORK_H
#define BCS_BENCH_WORK_H

#include <stdint.h>

static volatile uint64_t bench_work_sink;

/* @thousands thousand steps; the result goes where the compiler must keep it. */
static inline void bench_work(unsigned long thousands)
{
	uint64_t x = bench_work_sink;
	unsigned long i;

	for (i = 0; i < thousands * 1000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	bench_work_sink = x;
}

#endif /* BCS_BENCH_WORK_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal unit-test harness for host tests: CHECK() records a failure
 * and goes on; unit_done() prints "N passed, N failed" and the exit code.
 */
#ifndef BCSD_UNIT_H
#define BCSD_UNIT_H

#include <stdint.h>
#include <stdio.h>

static int unit_pass, unit_fail;

#define CHECK(cond) do {						\
	if (cond) {							\
		unit_pass++;						\
	} else {							\
		unit_fail++;						\
		fprintf(stderr, "%s:%d: CHECK(%s) failed\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

/* A seeded generator for random cases (xorshift64*): @s not 0. */
static inline uint64_t unit_rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static inline int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_pass, unit_fail);
	return unit_fail ? 1 : 0;
}

#endif /* BCSD_UNIT_H */

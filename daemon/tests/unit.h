/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal unit-test harness for host tests: CHECK() records a failure
 * and goes on; unit_done() prints "N passed, N failed" and the exit code.
 */
#ifndef BCSD_UNIT_H
#define BCSD_UNIT_H

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

static inline int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_pass, unit_fail);
	return unit_fail ? 1 : 0;
}

#endif /* BCSD_UNIT_H */

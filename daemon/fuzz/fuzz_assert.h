/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every libFuzzer target of bcsd shares: the entry point's
 * declaration and the check that aborts, which libFuzzer reports as a
 * crash with its input.
 */
#ifndef BCSD_FUZZ_ASSERT_H
#define BCSD_FUZZ_ASSERT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: FUZZ_ASSERT(%s) failed\n",	\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

#endif /* BCSD_FUZZ_ASSERT_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Include the kselftest harness (from the kernel source tree, found through
 * -I at build time) under -Wextra: the harness has an unused handler
 * parameter, and its ASSERT_*()/EXPECT_*() macros compare any two integer
 * types, so mixing a signed literal with a __u32 field would trip
 * -Wsign-compare in every test.  The comparisons themselves are what the
 * tests mean, so the warning is turned off for test files only.
 */
#ifndef BCS_HARNESS_H
#define BCS_HARNESS_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#pragma GCC diagnostic ignored "-Wsign-compare"

/*
 * TEST_HARNESS_MAIN, plus a skip of the whole program when bcs.ko is not
 * loaded: the 6.1 harness would still run a test whose setup skipped.
 */
#define BT_HARNESS_MAIN							\
	static void __attribute__((constructor))			\
	__constructor_order_last(void)					\
	{								\
		if (!__constructor_order)				\
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	}								\
	int main(int argc, char **argv)					\
	{								\
		if (access("/dev/bcs", F_OK)) {				\
			ksft_print_header();				\
			ksft_exit_skip("/dev/bcs missing: load bcs.ko\n"); \
		}							\
		return test_harness_run(argc, argv);			\
	}

#endif /* BCS_HARNESS_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Strict parsing of command-line numbers for the bcs tools.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs.h>

#include "numparse.h"

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/*
	 * strtoull() skips blanks and accepts a sign ("-1" becomes
	 * ULLONG_MAX), so insist on a leading digit.
	 */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err = parse_u64(s, min, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

int parse_job(const char *s, uint32_t *out)
{
	return parse_u32(s, 1, BCS_JOB_ID_MAX, out);
}

int parse_row(const char *s, uint32_t *out)
{
	if (s && !strcmp(s, "none")) {
		*out = BCS_ROW_NONE;
		return 0;
	}
	return parse_u32(s, 0, BCS_ROWS_MAX - 1, out);
}

int parse_pid(const char *s, int32_t *out)
{
	uint32_t v;
	int err = parse_u32(s, 1, INT32_MAX, &v);

	if (!err)
		*out = (int32_t)v;
	return err;
}

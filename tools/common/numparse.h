/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strict parsing of command-line numbers for the bcs tools.
 */
#ifndef BCS_TOOLS_NUMPARSE_H
#define BCS_TOOLS_NUMPARSE_H

#include <stdint.h>

/*
 * Parse @s as a decimal number in [@min, @max].  Unlike a bare strtoull()
 * this rejects empty strings, signs, leading blanks, trailing garbage and
 * overflow.  Returns 0, -EINVAL (not a number) or -ERANGE (out of range).
 */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/* A job id: 1 .. BCS_JOB_ID_MAX. */
int parse_job(const char *s, uint32_t *out);
/* A row: 0 .. BCS_ROWS_MAX - 1, or "none" for BCS_ROW_NONE. */
int parse_row(const char *s, uint32_t *out);
/* A process or thread id: 1 .. INT32_MAX. */
int parse_pid(const char *s, int32_t *out);

#endif /* BCS_TOOLS_NUMPARSE_H */

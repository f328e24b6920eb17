/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * bcs - histograms: the one format of every distribution bcs produces
 * (per-task times in bcs.ko, MPI latencies and sizes in user space), and
 * the bucket arithmetic that gives it its meaning.  The functions are pure
 * and compiled alike by bcs.ko and by user space, so that a bucket means
 * the same value range to every producer and every reader.
 *
 * Buckets are log-linear: a histogram of resolution @sub_bits (0 ..
 * BCS_HIST_SUB_BITS_MAX) counts the values below 2^sub_bits exactly, one
 * bucket each, and splits every larger power-of-two range [2^p, 2^(p+1))
 * into 2^sub_bits equal buckets.  A value is so known to within a relative
 * error of 2^-sub_bits (sub_bits 3: 12.5 %, 7: under 1 %), whatever its
 * size, with bcs_hist_buckets(sub_bits) buckets for all 64-bit values.
 */
#ifndef _UAPI_LINUX_BCS_HIST_H
#define _UAPI_LINUX_BCS_HIST_H

#include <linux/types.h>

#define BCS_HIST_SUB_BITS_MAX	7	/* 128 buckets per power of two */
#define BCS_HIST_SUB_BITS_DEFAULT 4	/* what the tools ask for: 6.25 % */
#define BCS_HIST_MAGIC		0x48534342	/* "BCSH" little endian */
#define BCS_HIST_VERSION	1

/*
 * A histogram as it is exported: this header, then @nr_buckets
 * struct bcs_hist_bucket in increasing @index, the empty buckets left
 * out.  @count, @sum, @min and @max are of the values themselves, not of
 * the buckets; @min is 0 and @max 0 while @count is 0.  @sum saturates at
 * 2^64 - 1 (BCS_HIST_SATURATED in @flags then).
 */
struct bcs_hist_header {
	__u32 magic;		/* BCS_HIST_MAGIC */
	__u16 version;		/* BCS_HIST_VERSION */
	__u8 sub_bits;		/* resolution, 0 .. BCS_HIST_SUB_BITS_MAX */
	__u8 flags;		/* BCS_HIST_* */
	__u32 nr_buckets;	/* non-empty buckets that follow */
	__u32 reserved0;	/* 0 */
	__u64 count;
	__u64 sum;
	__u64 min;
	__u64 max;
};

#define BCS_HIST_SATURATED	(1U << 0)	/* @sum stopped at 2^64 - 1 */

struct bcs_hist_bucket {
	__u32 index;		/* see bcs_hist_index() */
	__u32 reserved0;	/* 0 */
	__u64 count;
};

/* The number of buckets of a histogram of resolution @sub_bits. */
static inline __u32 bcs_hist_buckets(unsigned int sub_bits)
{
	return (__u32)(65 - sub_bits) << sub_bits;
}

/* The bucket of value @v at resolution @sub_bits. */
static inline __u32 bcs_hist_index(__u64 v, unsigned int sub_bits)
{
	unsigned int p;

	if (v < (1ULL << sub_bits))
		return (__u32)v;
	p = 63 - (unsigned int)__builtin_clzll(v);	/* 2^p <= v */
	return ((__u32)(p - sub_bits + 1) << sub_bits) +
	       (__u32)((v >> (p - sub_bits)) - (1ULL << sub_bits));
}

/*
 * The smallest value of bucket @index at resolution @sub_bits; the bucket
 * holds the values from there up to bcs_hist_upper().  @index must be
 * below bcs_hist_buckets(sub_bits).
 */
static inline __u64 bcs_hist_lower(__u32 index, unsigned int sub_bits)
{
	__u32 sub = index & ((1U << sub_bits) - 1);
	unsigned int p;

	if (index < (1U << sub_bits))
		return index;
	p = (index >> sub_bits) + sub_bits - 1;
	return ((1ULL << sub_bits) + sub) << (p - sub_bits);
}

/* The largest value of bucket @index at resolution @sub_bits. */
static inline __u64 bcs_hist_upper(__u32 index, unsigned int sub_bits)
{
	unsigned int p;

	if (index < (1U << sub_bits))
		return index;
	p = (index >> sub_bits) + sub_bits - 1;
	return bcs_hist_lower(index, sub_bits) + (1ULL << (p - sub_bits)) - 1;
}

#endif /* _UAPI_LINUX_BCS_HIST_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsd reductions in the tree of daemons (Documentation/filters.rst):
 * node reports go up the tree and are combined at every interior daemon
 * by filters, MRNet's transformation filters, and gathered into waves by
 * a synchronisation state machine, MRNet's synchronisation filters.
 *
 * Every filter merges one value (a child's, or a partial result of a
 * subtree) into an accumulator that starts at the filter's identity, and
 * is associative and commutative: an interior daemon and the master apply
 * the same filter to partial results in any order and grouping and get
 * the same result.  Bounded filters (lists, classes) keep that property by
 * keeping a canonical part (the smallest items, values) and counting the
 * rest, never dropping anything silently.
 *
 * Pure: no I/O, no clock (times are passed in), nothing of the rest of
 * bcsd is called; only the histogram merge allocates (libbcs).
 */
#ifndef BCSD_FILTER_H
#define BCSD_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bcs_hist.h>

#include "core/config.h"	/* BCSD_MAX_NODES */

/* ---- scalars: sum, min, max --------------------------------------- */

/* The identities: acc = FILTER_..._INIT, then merge every value. */
#define FILTER_SUM_U64_INIT	((uint64_t)0)
#define FILTER_MIN_U64_INIT	UINT64_MAX
#define FILTER_MAX_U64_INIT	((uint64_t)0)
#define FILTER_MIN_S64_INIT	INT64_MAX
#define FILTER_MAX_S64_INIT	INT64_MIN

/*
 * *@acc += @v, stopping at 2^64 - 1: 0, or -ERANGE when the sum is at
 * 2^64 - 1 (reached or stopped there), which the caller reports as
 * saturated.  Saturated addition of unsigned values is min(true sum,
 * 2^64 - 1), so it stays associative, and the verdict depends on the
 * result alone, so it is the same whatever the grouping.
 */
int filter_sum_u64(uint64_t *acc, uint64_t v);
/* *@acc = the smaller (min) or the larger (max) of *@acc and @v. */
void filter_min_u64(uint64_t *acc, uint64_t v);
void filter_max_u64(uint64_t *acc, uint64_t v);
void filter_min_s64(int64_t *acc, int64_t v);
void filter_max_s64(int64_t *acc, int64_t v);

/* ---- average, carried as sum and count ---------------------------- */

struct filter_avg {
	uint64_t sum;		/* of the values, saturating */
	uint64_t count;		/* values */
	uint32_t saturated;	/* 1: @sum stopped at 2^64 - 1 */
	uint32_t reserved0;	/* 0 */
};

/* The identity: no value. */
#define FILTER_AVG_INIT		((struct filter_avg){ 0, 0, 0, 0 })

/* One value @v into @acc; -ERANGE if the sum saturated (as sum_u64). */
int filter_avg_add(struct filter_avg *acc, uint64_t v);
/* The values of @v (a partial average) into @acc; -ERANGE as above. */
int filter_avg_merge(struct filter_avg *acc, const struct filter_avg *v);
/*
 * The mean of @a, rounded down, into *@mean: 0, -ENODATA (no value, no
 * average) or -ERANGE (the sum saturated, the mean would be wrong).
 */
int filter_avg_result(const struct filter_avg *a, uint64_t *mean);

/* ---- concatenation: a bounded list of fixed-size items ------------ */

/*
 * A bounded multiset of items of @item_size bytes in caller storage
 * @items (room for @cap items), kept sorted by @cmp (NULL: memcmp()).
 * When more come than fit, the @cap smallest are kept and the others
 * counted in @overflow; as that rule does not depend on the order of
 * arrival, concatenation stays associative and commutative, and
 * @nr + @overflow is always the number of items put in.
 */
struct filter_list {
	void *items;
	uint32_t item_size;
	uint32_t cap;
	uint32_t nr;		/* items kept, sorted */
	uint64_t overflow;	/* items put in that did not fit */
	int (*cmp)(const void *a, const void *b);
};

/*
 * The empty list (identity) over @buf of @cap items of @item_size bytes.
 * -EINVAL if @buf is NULL while @cap is not 0, or @item_size is 0.
 */
int filter_list_init(struct filter_list *l, void *buf, uint32_t cap,
		     uint32_t item_size, int (*cmp)(const void *a,
						    const void *b));
/*
 * Put @item into @l, in order: 0, or -ENOSPC when the list holds the
 * @cap smallest items already and one (@item or the largest) was counted
 * in @overflow instead.
 */
int filter_list_push(struct filter_list *l, const void *item);
/*
 * The items of @src into @dst (same @item_size and @cmp, else -EINVAL,
 * @dst unchanged): the @cap smallest of both kept, the rest and @src's
 * overflow counted.  0, or -ENOSPC when items of this merge did not fit.
 * No allocation: merged in place from the end.
 */
int filter_list_merge(struct filter_list *dst, const struct filter_list *src);
/* A @cmp for lists of uint32_t (node ids): numeric order. */
int filter_cmp_u32(const void *a, const void *b);

/* ---- sets of nodes ------------------------------------------------ */

#define FILTER_NODE_WORDS	((BCSD_MAX_NODES + 63) / 64)

/* A set of node ids 0 .. BCSD_MAX_NODES - 1, one bit each (128 bytes). */
struct filter_nodeset {
	uint64_t bits[FILTER_NODE_WORDS];
};

/* Empty @s. */
void filter_nodeset_clear(struct filter_nodeset *s);
/* Add @node to @s: 0, -EINVAL (@node >= BCSD_MAX_NODES), -EEXIST. */
int filter_nodeset_add(struct filter_nodeset *s, uint32_t node);
/* Remove @node from @s (nothing if out of range or absent). */
void filter_nodeset_del(struct filter_nodeset *s, uint32_t node);
/* Whether @node is in @s. */
bool filter_nodeset_has(const struct filter_nodeset *s, uint32_t node);
/* The number of nodes in @s. */
uint32_t filter_nodeset_count(const struct filter_nodeset *s);
/* @dst |= @src. */
void filter_nodeset_union(struct filter_nodeset *dst,
			  const struct filter_nodeset *src);
/* Whether @a and @b have a node in common. */
bool filter_nodeset_meet(const struct filter_nodeset *a,
			 const struct filter_nodeset *b);
/* Whether every node of @a is in @b. */
bool filter_nodeset_within(const struct filter_nodeset *a,
			   const struct filter_nodeset *b);
/*
 * @s as text into @buf of @len bytes, runs as ranges: "7, 90, 311",
 * "0-6, 8-1023", "" if empty.  0, -EINVAL (@len 0), or -ENOSPC: cut
 * short, ending in "..." if there is room for it, '\0'-terminated.
 */
int filter_nodeset_format(const struct filter_nodeset *s, char *buf,
			  size_t len);

/* ---- equivalence classes (MRNet's EQ_CLASS) ----------------------- */

/* Classes kept at most: distinct values a reduction reports. */
#define FILTER_EQ_CLASSES_MAX	16

struct filter_eq_class {
	uint64_t value;
	uint32_t nr;			/* nodes in @nodes */
	uint32_t reserved0;
	struct filter_nodeset nodes;
};

/*
 * Nodes grouped by equal value: the classes sorted by value, at most
 * FILTER_EQ_CLASSES_MAX of them; when more values come, the smallest are
 * kept as classes and the nodes of the others go to @other (their values
 * lost, the nodes not: "3 nodes had other values").  Which values are
 * kept depends only on the union, so merging stays associative and
 * commutative.  @all: every node in the classes or @other, so that a node
 * counts once.
 */
struct filter_eq {
	uint32_t nr;			/* classes in @cls */
	uint32_t nr_other;		/* nodes in @other */
	struct filter_nodeset all;
	struct filter_nodeset other;
	struct filter_eq_class cls[FILTER_EQ_CLASSES_MAX];
};

/* The empty grouping (identity). */
void filter_eq_init(struct filter_eq *eq);
/*
 * Node @node has value @value: 0, -EINVAL (@node out of range), -EEXIST
 * (@node already in @eq; unchanged), or -ENOSPC: no room for a new
 * class, the node (or the nodes of the largest value) moved to @other.
 */
int filter_eq_add(struct filter_eq *eq, uint32_t node, uint64_t value);
/*
 * The classes of @src into @dst: 0, -EEXIST (a node in both; @dst
 * unchanged) or -ENOSPC (some nodes moved to @other, as above).
 */
int filter_eq_merge(struct filter_eq *dst, const struct filter_eq *src);
/*
 * The classes of @eq by size, largest first (equal sizes: smaller value
 * first), as pointers into @eq in @out (room for @max): the number put
 * there.  The master prints "1021 nodes ran row 3; nodes 7, 90, 311 ran
 * row 2" from it.
 */
uint32_t filter_eq_sorted(const struct filter_eq *eq,
			  const struct filter_eq_class **out, uint32_t max);

/* ---- histograms --------------------------------------------------- */

/*
 * Histogram @h (NULL: nothing) into *@acc (NULL: the identity, no
 * histogram yet), both in the format of <linux/bcs_hist.h>: buckets,
 * counts and sums added, with BCS_HIST_SATURATED; of different
 * resolutions, at the coarser one (exact there).  libbcs's bcs_hist_add()
 * does it.  0, or -EINVAL / -ENOMEM with *@acc unchanged.  The caller
 * frees *@acc.
 */
int filter_hist_merge(struct bcs_hist_header **acc,
		      const struct bcs_hist_header *h);

/* ---- records: a stream's packet reduced field by field ------------ */

enum filter_op {
	FILTER_OP_KEY_U64,		/* must be equal in both: the wave's key */
	FILTER_OP_SUM_U64,
	FILTER_OP_MIN_U64,
	FILTER_OP_MAX_U64,
	FILTER_OP_MIN_S64,
	FILTER_OP_MAX_S64,
	FILTER_OP_AVG,		/* a struct filter_avg */
	FILTER_OPS
};

/* One field of a record: where it is, and how two of it combine. */
struct filter_field {
	const char *name;	/* for messages and documentation */
	size_t offset;		/* offsetof() in the record */
	enum filter_op op;
};

/* Fields in a record at most. */
#define FILTER_FIELDS_MAX	32

/*
 * A stream's packet as data: a fixed struct of @size bytes and the
 * filter of each of its fields (bytes not in a field are left alone).
 */
struct filter_record {
	const char *name;
	size_t size;
	const struct filter_field *fields;
	uint32_t nr_fields;
};

/*
 * Whether @r is a usable table: 0, or -EINVAL (no fields or more than
 * FILTER_FIELDS_MAX, a field past @size, an unknown op).
 */
int filter_record_check(const struct filter_record *r);
/*
 * The identity of @r into @acc: every field its filter's identity, the
 * keys copied from @first (NULL: 0).  0 or -EINVAL (as check).
 */
int filter_record_init(const struct filter_record *r, void *acc,
		       const void *first);
/*
 * @src reduced into @dst field by field: 0, -EINVAL (bad table, or a key
 * differs: @dst unchanged), or -ERANGE (done, but a sum saturated).
 */
int filter_record_reduce(const struct filter_record *r, void *dst,
			 const void *src);

/* ---- synchronisation: waves (MRNet's synchronisation filters) ----- */

enum filter_sync_mode {
	FILTER_SYNC_WAIT_ALL,	/* SFILTER_WAITFORALL */
	FILTER_SYNC_TIMEOUT,	/* SFILTER_TIMEOUT */
	FILTER_SYNC_DONT_WAIT,	/* SFILTER_DONTWAIT */
};

/* Waves in flight at most per stream; one more flushes the oldest. */
#define FILTER_WAVES_MAX	8

/* Why a wave goes up. */
enum filter_wave_why {
	FILTER_WAVE_COMPLETE,	/* every expected child reported */
	FILTER_WAVE_TIMEOUT,	/* the timeout since its first packet */
	FILTER_WAVE_FLUSHED,	/* pushed out by a newer wave */
};

/* A wave in flight. */
struct filter_wave {
	bool used;
	uint64_t id;		/* slice number, report period, ... */
	uint64_t first_ms;	/* clock of its first packet */
	struct filter_nodeset got;	/* children that reported */
};

/* What the caller does with a packet (filter_sync_packet()). */
enum filter_verdict {
	FILTER_TAKE,		/* reduce it into the wave's slot */
	FILTER_ALONE,		/* send it up now, by itself */
	FILTER_REFUSED,		/* drop it: duplicate or unknown child */
};

struct filter_sync_res {
	enum filter_verdict verdict;
	unsigned int slot;	/* TAKE: the wave's slot, 0 .. WAVES_MAX - 1 */
	bool fresh;		/* TAKE: a new wave, init the slot first */
	bool late;		/* ALONE: for a wave already sent up */
	bool flushed;		/* TAKE: the slot's old wave, @flushed_wave,
				 * goes up (partial) before it is reused
				 */
	uint64_t flushed_wave;
};

/* A wave ready to go up (filter_sync_ready()). */
struct filter_sync_out {
	uint64_t wave;
	unsigned int slot;	/* its accumulator; free after this */
	enum filter_wave_why why;
	uint32_t got;		/* children that reported */
	uint32_t missing;	/* expected children that did not */
};

/* What a stream's synchronisation saw (counters only grow). */
struct filter_sync_stats {
	uint64_t packets;	/* all offered */
	uint64_t taken;		/* into a wave */
	uint64_t alone;		/* sent up alone (DONT_WAIT, late) */
	uint64_t late;		/* for a wave already sent up */
	uint64_t duplicates;	/* refused: same child, same wave */
	uint64_t unknown;	/* refused: not an expected child */
	uint64_t complete;	/* waves up, complete */
	uint64_t timed_out;	/* waves up at their timeout */
	uint64_t flushed;	/* waves up, pushed out by newer ones */
};

struct filter_sync {
	enum filter_sync_mode mode;
	uint64_t timeout_ms;
	struct filter_nodeset expected;	/* children alive */
	struct filter_wave waves[FILTER_WAVES_MAX];
	bool sent_any;
	uint64_t sent_high;	/* highest wave id sent up */
	struct filter_sync_stats stats;
};

/*
 * A stream's synchronisation in @mode (@timeout_ms: FILTER_SYNC_TIMEOUT
 * only, at least 1) over the children in @expected: 0 or -EINVAL.
 */
int filter_sync_init(struct filter_sync *s, enum filter_sync_mode mode,
		     uint64_t timeout_ms,
		     const struct filter_nodeset *expected);
/*
 * A packet of child @child for wave @wave at clock @now_ms (passed in,
 * monotonic): what to do with it in *@res.  A wave not in flight whose
 * id is not above every wave sent up is late: the packet goes up alone
 * (nothing is lost; the parent merges it into what it has, or counts it
 * late itself).  A second packet of a child for a wave in flight, or one
 * of a child not expected, is refused.  A new wave with every slot in
 * use flushes the oldest (smallest first packet clock) into its slot.
 * 0, or -EINVAL (@s or @res NULL; @child out of range).
 */
int filter_sync_packet(struct filter_sync *s, uint32_t child, uint64_t wave,
		       uint64_t now_ms, struct filter_sync_res *res);
/*
 * A wave ready to go up at @now_ms into *@out, its slot freed: 1, or 0
 * if none.  Called until 0 after every packet, clock tick and change of
 * children; waves come smallest id first.
 */
int filter_sync_ready(struct filter_sync *s, uint64_t now_ms,
		      struct filter_sync_out *out);
/*
 * Child @child is known dead (removed from the expected set; waves it
 * held back may now be ready) or back (added): 0 or -EINVAL.
 */
int filter_sync_child_dead(struct filter_sync *s, uint32_t child);
int filter_sync_child_add(struct filter_sync *s, uint32_t child);
/*
 * The clock at which the next wave times out (TIMEOUT mode) into
 * *@at_ms: 1, or 0 if none will, for the daemon's timer.
 */
int filter_sync_next_deadline(const struct filter_sync *s, uint64_t *at_ms);

#endif /* BCSD_FILTER_H */

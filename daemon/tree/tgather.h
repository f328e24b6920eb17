/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A gather reduced in the tree of daemons (Documentation/filters.rst,
 * "Gathers reduced in the tree"): the answer of a subtree to an MPI
 * statistics gather (bcsstat mpi --job) or a distribution query
 * (bcsstat dist --job), merged at every daemon on its way up so that a
 * daemon sends its parent one answer, whatever the size of its subtree,
 * and the asker hears one answer per child of the root.
 *
 * An answer holds, for one job:
 *  - how many nodes it covers (@nodes), how many did not answer in time
 *    (@missing: a child's whole subtree counts) and the processes (@ranks);
 *  - per MPI primitive (by name) the sums (calls, timed calls, time,
 *    bytes, ranks that called it) and the extremes kept with the rank that
 *    had them: the shortest and longest call, and the ranks with the least
 *    and the most time in the primitive ("per-rank extremes");
 *  - histograms by kind and name (an MPI primitive's latencies or sizes, a
 *    bcs.ko metric of the job), in <linux/bcs_hist.h>'s buckets, merged
 *    bucket by bucket: exact.  Two histograms of different resolutions
 *    merge at the lower one: every bucket of resolution s lies inside one
 *    bucket of any resolution t < s (the values below 2^s are single
 *    buckets at s, and 2^t divides 2^s), so that the conversion down is
 *    exact too, and converting s -> u -> t is converting s -> t.
 *
 * Merging is associative and commutative: any tree shape gives the
 * answer the flat merge gives, byte for byte once encoded (tg_encode() is
 * canonical: records sorted by name, buckets by index).  Ties of
 * extremes go to the lower rank.  Sums saturate at 2^64 - 1 (filter.h).
 * Sizes are bounded (TG_*_MAX); what a bound leaves out is counted in
 * @dropped, never silently lost (then the answer is no longer exact, and
 * says so).
 *
 * Pure: no I/O, no clock; allocation only for histograms' buckets.
 */
#ifndef BCSD_TGATHER_H
#define BCSD_TGATHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bcs_hist.h>

#define TG_NAME_LEN	32		/* as BCS_MPI_NAME_LEN, NUL included */
#define TG_PRIMS_MAX	128		/* primitives of one answer */
#define TG_HISTS_MAX	64		/* histograms of one answer */
#define TG_BUCKETS_MAX	8192		/* non-empty buckets over them all */

/* Encoded sizes (tg_encode()): header, primitive, histogram, bucket. */
#define TG_HDR_LEN	40
#define TG_PRIM_LEN	120
#define TG_HIST_LEN	72
#define TG_BUCKET_LEN	12
/* The largest encoded answer: about 118 KiB. */
#define TG_BLOB_MAX	(TG_HDR_LEN + TG_PRIMS_MAX * TG_PRIM_LEN + \
			 TG_HISTS_MAX * TG_HIST_LEN + \
			 TG_BUCKETS_MAX * TG_BUCKET_LEN)
#define TG_MAGIC	0x42435447u	/* "BCTG" */
#define TG_VERSION	1

enum tg_kind {
	TG_HIST_LAT	= 0,	/* an MPI primitive's latencies, ns */
	TG_HIST_SIZE	= 1,	/* an MPI primitive's sizes, bytes */
	TG_HIST_DIST	= 2,	/* a bcs.ko metric of the job's tasks */
	__TG_HIST_KIND_MAX,
};

/* One MPI primitive over the ranks merged. */
struct tg_prim {
	char name[TG_NAME_LEN];	/* NUL-terminated, not empty */
	uint32_t flags;		/* BCS_MPI_PRIM_*, or'ed */
	uint32_t ranks;		/* processes with this record */
	uint64_t calls, timed, time_ns, bytes;
	/* The shortest and longest timed call: 0 and rank -1 if none. */
	uint64_t min_ns, max_ns;
	int32_t min_rank, max_rank;
	/* The least and most time one rank spent in it, and those ranks. */
	uint64_t rmin_ns, rmax_ns;
	int32_t rmin_rank, rmax_rank;
};

struct tg_bucket {
	uint32_t index;		/* bcs_hist_index(), increasing */
	uint64_t count;		/* not 0 */
};

struct tg_hist {
	char name[TG_NAME_LEN];	/* NUL-terminated, not empty */
	uint8_t kind;		/* enum tg_kind */
	uint8_t sub_bits;	/* 0 .. BCS_HIST_SUB_BITS_MAX */
	uint8_t flags;		/* BCS_HIST_SATURATED */
	uint64_t count, sum, min, max;	/* min, max 0 while count is 0 */
	uint32_t nr;		/* buckets at @b */
	struct tg_bucket *b;	/* malloc'd, NULL while @nr is 0 */
};

struct tg_answer {
	uint32_t job;
	uint32_t nodes;		/* nodes whose data is in it */
	uint32_t missing;	/* nodes that did not answer in time */
	uint32_t ranks;		/* processes (MPI files) merged */
	uint64_t dropped;	/* records or buckets a bound left out */
	uint32_t nr_prims;	/* sorted by name */
	struct tg_prim prims[TG_PRIMS_MAX];
	uint32_t nr_hists;	/* sorted by kind, then name */
	struct tg_hist hists[TG_HISTS_MAX];
	uint32_t buckets;	/* over all of @hists */
};

/* The empty answer (the identity) of @job. */
void tg_init(struct tg_answer *a, uint32_t job);
/* Free @a's buckets; @a is the empty answer of its job again. */
void tg_free(struct tg_answer *a);

/*
 * Rank @rank's record of one primitive, @name (NUL-terminated within
 * TG_NAME_LEN, not empty), its @flags, @calls, @timed, @min_ns, @max_ns
 * (of the timed calls), @bytes and @time_ns, the time spent in it
 * (bcs_mpi_prim_time()).  0, -EINVAL (bad name, @rank negative,
 * @timed 0 with extremes, @min_ns above @max_ns), or -ENOSPC (counted in
 * @dropped).
 */
int tg_add_prim(struct tg_answer *a, int32_t rank, const char *name,
		uint32_t flags, uint64_t calls, uint64_t timed,
		uint64_t min_ns, uint64_t max_ns, uint64_t bytes,
		uint64_t time_ns);

/*
 * Histogram @h (the exported format of <linux/bcs_hist.h>: @h->nr_buckets
 * buckets at @b, increasing and not empty) of @kind and @name, merged
 * into that of the same kind and name.  0, -EINVAL (checked as
 * tg_decode() checks a histogram), -ENOSPC (counted) or -ENOMEM.
 */
int tg_add_hist(struct tg_answer *a, enum tg_kind kind, const char *name,
		const struct bcs_hist_header *h,
		const struct bcs_hist_bucket *b);

/*
 * @src merged into @dst (the same job, else -EINVAL): counts added,
 * primitives and histograms merged by name.  0, -ENOSPC (what did not fit
 * is counted in @dst->dropped, the rest merged) or -ENOMEM (@dst is then
 * still a valid answer, without some of @src).
 */
int tg_merge(struct tg_answer *dst, const struct tg_answer *src);

/*
 * @a into @buf, big-endian, canonical: returns the length (at most
 * TG_BLOB_MAX), or -ENOSPC if @size is too small.
 */
long tg_encode(const struct tg_answer *a, uint8_t *buf, size_t size);

/*
 * An answer from the network: @len bytes at @buf into @a (tg_init()'d by
 * it; tg_free() it after, on error too).  Everything is checked: magic,
 * version, the bounds, names (terminated, not empty, sorted, no two
 * alike), kinds, resolutions, extremes with their ranks, buckets (below
 * bcs_hist_buckets(), increasing, not empty, summing to @count), no
 * byte left over.  0, -EINVAL or -ENOMEM.
 */
int tg_decode(const uint8_t *buf, size_t len, struct tg_answer *a);

/* Histogram @h at resolution @sub_bits (not above its own): exact. */
int tg_hist_down(struct tg_hist *h, unsigned int sub_bits);

/* ---- one gather at one daemon: its children's answers, and when ---- */

/*
 * An encoded answer travels in parts of TG_PART_MAX bytes (a datagram's
 * worth, as BCSP_MPI_PART's files), each at a multiple of TG_PART_MAX,
 * the last one shorter.  A child's parts are put together here; a part
 * that does not fit the child's earlier ones is refused.
 */
#define TG_PART_MAX	1308
#define TG_PARTS_MAX	((TG_BLOB_MAX + TG_PART_MAX - 1) / TG_PART_MAX)
#define TG_PARTS_WORDS	((TG_PARTS_MAX + 63) / 64)

struct tg_parts {
	uint32_t size;		/* of the whole answer; 0: no part yet */
	uint32_t nr;		/* parts here */
	uint64_t got[TG_PARTS_WORDS];	/* bit k: part k here */
	uint8_t *buf;		/* @size bytes */
};

/*
 * A child of the daemon, as the gather waits for it: its node index, the
 * nodes of its subtree (counted missing if it does not answer), and its
 * answer's parts.
 */
struct tg_kid {
	uint32_t idx;
	uint32_t subtree;
	bool done;		/* answered (or refused: counted missing) */
	bool adopted;		/* a node below a silent parent (tg_gather_adopt()) */
	uint8_t asks;		/* times asked again (tg_gather_ask()) */
	uint64_t heard_ms;	/* when its last part came; 0: none yet */
	uint64_t asked_ms;	/* when it was last asked again */
	struct tg_parts parts;
};

/*
 * One gather at one daemon, MRNet's synchronisation filters: it waits
 * for its own answer and every child it passed the request to (wait for
 * all), or until @until_ms (timeout), whichever comes first; then its
 * merged answer goes up, the silent children's subtrees counted in
 * @missing.  A daemon deeper in the tree waits less than its parent
 * (tg_wait_ms()), so that a child that times out still answers in time.
 */
struct tg_gather {
	struct tg_answer acc;	/* own and children's answers merged */
	bool own;		/* its own answer is in @acc */
	uint32_t nr_kids;
	struct tg_kid *kids;
	uint64_t until_ms;
	uint64_t refused;	/* parts or answers refused */
	uint32_t credit;	/* adopted nodes' subtrees that answered */
};

/*
 * The wait of a daemon at depth @depth of a tree @height deep (the
 * deepest node's depth): @step_ms per level below it and one more, so
 * that each child's wait ends a step before its parent's.
 */
uint64_t tg_wait_ms(uint32_t depth, uint32_t height, uint64_t step_ms);
/* The daemons' step (bcsd: node/tgnode.c, and the asker one more). */
#define TG_STEP_MS	500

/*
 * The wait of a daemon at @depth (not the root: 0) whose gather command
 * came @late_ms after the master sent it: tg_wait_ms(), but never past
 * half a step before its parent's wait would end had the parent had the
 * command at once (its parent's ends no earlier), so that its answer
 * still counts up there however slowly a busy tree passed the command
 * down; 0 (answer at once with what it has) if that moment is gone.  A
 * command on time, or up to half a step late, waits tg_wait_ms().
 *
 * tg_late_ms(): how late a command sent at @sent_ns came at @now_ns, both
 * CLOCK_REALTIME (a command's sequence number is the master's clock at
 * its send, and the tree passes it on as it is); 0 if it seems to come
 * before it was sent (clocks apart).
 */
uint64_t tg_wait_late_ms(uint32_t depth, uint32_t height, uint64_t step_ms,
			 uint64_t late_ms);
uint64_t tg_late_ms(uint64_t sent_ns, uint64_t now_ns);

/*
 * Lost parts asked for again (Documentation/filters.rst, "Lost parts of
 * an answer"), as a tree's lost strobes are: a child that sent some parts
 * of its answer and then nothing for TG_ASK_GAP_MS is asked for the
 * others; one that sent nothing, TG_ASK_LATE_MS before @until_ms (its own
 * wait ended a step before, so its answer should have come: it was lost
 * whole, or the child is gone), is asked for all of it.  No ask goes out
 * later than TG_ASK_LAST_MS before @until_ms (the parts sent again would
 * come too late to count), asks of one child are TG_ASK_GAP_MS apart,
 * and at most TG_ASKS_MAX per child and gather: a child that is gone, or
 * of a daemon that does not know the ask, costs three datagrams.
 */
#define TG_ASKS_MAX	3
#define TG_ASK_GAP_MS	(TG_STEP_MS / 5)
#define TG_ASK_LATE_MS	(TG_STEP_MS / 2)
#define TG_ASK_LAST_MS	(TG_STEP_MS / 10)

/* What to ask child @idx for again. */
struct tg_want {
	uint32_t idx;		/* the child's node index */
	uint32_t size;		/* its answer's (its parts'); 0: none came */
	uint64_t parts[TG_PARTS_WORDS];	/* bit k: part k (0 if @size 0) */
};

/*
 * Start gather @g of @job at a daemon waiting for @nr_kids children
 * (node indices @idx, subtrees of @subtree nodes each) until @until_ms.
 * 0 or -ENOMEM.
 */
int tg_gather_start(struct tg_gather *g, uint32_t job, uint32_t nr_kids,
		    const uint32_t *idx, const uint32_t *subtree,
		    uint64_t until_ms);
/*
 * Wait also for node @idx (@subtree nodes) that this daemon adopted
 * (Documentation/tree.rst, "An interior node dies"): its parent, below
 * this daemon, is silent or was, so the path through it counts the
 * node's subtree missing whether the node answers here or not.  When it
 * answers here its nodes are covered and its subtree is taken off the
 * missing at tg_gather_finish(); when it does not, nothing more is
 * missing.  0, -EEXIST (a child or adopted already), -ENOMEM.
 */
int tg_gather_adopt(struct tg_gather *g, uint32_t idx, uint32_t subtree);
/* The daemon's own answer (once; its nodes, ranks and records). */
int tg_gather_own(struct tg_gather *g, const struct tg_answer *own);
/*
 * A part of child @idx's answer: [@offset, @offset + @len) of @size
 * bytes, come at @now_ms (a clock in ms, not 0: when it was last heard
 * from, for tg_gather_ask()).  Returns 1 when the child's answer is
 * whole and merged, 0 when it is taken and more are awaited, -ENOENT
 * (not a child of the gather, or one that answered), -EINVAL (a part
 * that does not fit the child's others, or a whole answer tg_decode()
 * refuses, or of another job: the child is then done and counted
 * missing), -ENOMEM.
 */
int tg_gather_part(struct tg_gather *g, uint32_t idx, uint32_t size,
		   uint32_t offset, uint32_t len, const uint8_t *data,
		   uint64_t now_ms);
/*
 * Whether child @i (its place in @g->kids, < @g->nr_kids) is to be asked
 * for parts of its answer again at @now_ms (the rules above), and which
 * into @w: the parts of @w->size bytes that did not come, or @w->size 0
 * for all of it.  A true answer counts as an ask of the child (sent or
 * not: the bound holds either way).
 */
bool tg_gather_ask(struct tg_gather *g, uint32_t i, uint64_t now_ms,
		   struct tg_want *w);
/* Whether the answer goes up: own and every child in, or @until_ms. */
bool tg_gather_done(const struct tg_gather *g, uint64_t now_ms);
/*
 * The answer as it goes up: the children not done counted missing with
 * their subtrees (once), less the subtrees of the adopted nodes that
 * answered (counted missing on their path, and covered here).  @g's answer stays in @g->acc until
 * tg_gather_free().
 */
const struct tg_answer *tg_gather_finish(struct tg_gather *g);
void tg_gather_free(struct tg_gather *g);

#endif /* BCSD_TGATHER_H */

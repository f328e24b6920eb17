/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsd reductions in the tree of daemons (Documentation/filters.rst):
 * node reports go up the tree and are combined at every interior daemon
 * by filters, MRNet's transformation filters, and gathered into waves,
 * as MRNet's synchronisation filters do (reduce.c uses them all).
 *
 * Every filter merges one value (a child's, or a partial result of a
 * subtree) into an accumulator that starts at the filter's identity, and
 * is associative and commutative: an interior daemon and the master apply
 * the same filter to partial results in any order and grouping and get
 * the same result.  A bounded list keeps that property by keeping a
 * canonical part (the smallest items) and counting the rest, never
 * dropping anything silently.
 *
 * Pure: no I/O, no clock (times are passed in), no allocation, nothing of
 * the rest of bcsd is called.
 */
#ifndef BCSD_FILTER_H
#define BCSD_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the saturating sum ------------------------------------------- */

/* The identity: acc = FILTER_SUM_U64_INIT, then merge every value. */
#define FILTER_SUM_U64_INIT	((uint64_t)0)
/*
 * *@acc += @v, stopping at 2^64 - 1: 0, or -ERANGE when the sum is at
 * 2^64 - 1 (reached or stopped there), which the caller reports as
 * saturated.  Saturated addition of unsigned values is min(true sum,
 * 2^64 - 1), so it stays associative, and the verdict depends on the
 * result alone, so it is the same whatever the grouping.
 */
int filter_sum_u64(uint64_t *acc, uint64_t v);
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

/* ---- waves: when a partial result goes up ------------------------ */

/*
 * A wave (a slice's switch summaries, ...) being reduced in a slot of a
 * ring of them: its id and the clock of its first packet.  A packet of
 * another wave in its slot sends the wave up as it is; a wave goes up
 * when it is complete (its packets count every node it waits for, not
 * every child: a child may send a wave in two parts), or when it has
 * waited long enough (the synchronisation mode's wait: tree_sync_ms, or
 * the bound for a node that is gone).  Without waiting, no slot: each
 * packet goes on as it comes.
 */
struct filter_wave {
	bool used;
	uint64_t id;		/* slice number, ... */
	uint64_t first_ms;	/* clock of its first packet */
};

/* What a packet of a wave does to slot @w (filter_wave_step()). */
enum filter_wave_step {
	FILTER_WAVE_NEW,	/* the slot is free: the packet starts it */
	FILTER_WAVE_SAME,	/* of the wave in the slot: reduce it in */
	FILTER_WAVE_OTHER,	/* another wave's: up with that one first */
};

/* A packet of wave @id, for the slot @w of its ring. */
enum filter_wave_step filter_wave_step(const struct filter_wave *w,
				       uint64_t id);
/* Wave @id starts in @w at clock @now_ms; filter_wave_end(): it went up. */
void filter_wave_start(struct filter_wave *w, uint64_t id, uint64_t now_ms);
void filter_wave_end(struct filter_wave *w);
/* Whether a wave that counts @got of the @expect it waits for is whole. */
bool filter_wave_complete(uint64_t got, uint64_t expect);
/* Whether the wave in @w has waited @wait_ms at @now_ms: it goes up. */
bool filter_wave_due(const struct filter_wave *w, uint64_t now_ms,
		     uint64_t wait_ms);

#endif /* BCSD_FILTER_H */

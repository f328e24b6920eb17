/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the libFuzzer targets of bcsd (Documentation/testing.rst,
 * "Fuzzing"): the fixed test key and cluster with which the seed corpus
 * is signed, and the checks every decoded datagram must pass.  A failed
 * check aborts, which libFuzzer reports as a crash with its input.
 */
#ifndef BCSD_FUZZ_H
#define BCSD_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs.h>

#include "proto/proto.h"
#include "fuzz/fuzz_assert.h"

#define FUZZ_CLUSTER	7

/* Bytes 0, 1, ... 31: not a secret, only the fuzzer's. */
static inline void fuzz_key(uint8_t key[BCSP_KEY_LEN])
{
	int i;

	for (i = 0; i < BCSP_KEY_LEN; i++)
		key[i] = (uint8_t)i;
}

/* bcsp_strobe_verdict() in exact arithmetic: what it must answer. */
static inline enum bcsp_verdict fuzz_strobe_model(const struct bcsp_strobe *s,
						  uint64_t now,
						  uint64_t stale)
{
	unsigned __int128 d = s->deadline_ns, n = now, sl = s->slice_ns;

	if (s->row >= BCS_ROWS_MAX || s->slice_ns < BCS_SLICE_NS_MIN ||
	    s->slice_ns > BCS_SLICE_NS_MAX)
		return BCSP_BAD_BODY;
	/* A plan ends by BCS_DEADLINE_NS_MAX. */
	if (s->plan_slices &&
	    d + (unsigned __int128)(s->plan_slices - 1) * sl >
	    BCS_DEADLINE_NS_MAX)
		return BCSP_BAD_BODY;
	if (d + stale * sl < n || d > n + BCSP_AHEAD_SLICES * sl)
		return BCSP_STALE;
	return BCSP_OK;
}

static inline void fuzz_check_strobe(const struct bcsp_strobe *s)
{
	static const uint64_t stale[] = { 1, 4, 100000 };
	uint64_t now[] = { 0, 1, 1700000000000000000ULL, s->deadline_ns,
			   s->deadline_ns - 1, s->deadline_ns + 1,
			   s->deadline_ns + s->slice_ns,
			   s->deadline_ns - 8 * s->slice_ns,
			   INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX };
	size_t i, j;

	for (i = 0; i < sizeof(now) / sizeof(now[0]); i++)
		for (j = 0; j < sizeof(stale) / sizeof(stale[0]); j++)
			FUZZ_ASSERT(bcsp_strobe_verdict(s, now[i], stale[j]) ==
				    fuzz_strobe_model(s, now[i], stale[j]));
}

/*
 * Part @p of a map: in its bounds; put in place in a whole map of its
 * jobs alone, the next row is one that a job of it holds, or 0 if none
 * does.
 */
static inline void fuzz_check_map(const struct bcsp_map *p)
{
	static struct bcsp_whole_map whole;
	const struct bcsp_whole_map *m = &whole;
	uint32_t rows[] = { 0, 1, BCS_ROWS_MAX - 1, BCS_ROWS_MAX,
			    BCS_ROW_NONE - 1, BCS_ROW_NONE };
	uint32_t next, i, k;
	int held;

	FUZZ_ASSERT(p->nr_jobs <= BCSP_MAP_JOBS_MAX &&
		    p->nr <= BCSP_MAP_PART_JOBS &&
		    p->first % BCSP_MAP_PART_JOBS == 0 &&
		    p->nr == bcsp_map_part_len(p->nr_jobs, p->first) &&
		    (p->first < p->nr_jobs || (!p->first && !p->nr)));
	memset(&whole, 0, sizeof(whole));
	whole.version = p->version;
	whole.apply_slice = p->apply_slice;
	whole.nr_jobs = p->nr;
	memcpy(whole.jobs, p->jobs, p->nr * sizeof(p->jobs[0]));

	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		next = bcsp_map_next_row(m, rows[k]);
		held = 0;
		for (i = 0; i < m->nr_jobs; i++)
			held |= m->jobs[i].row == next &&
				m->jobs[i].row != BCS_ROW_NONE;
		if (!held) {
			for (i = 0; i < m->nr_jobs; i++)
				FUZZ_ASSERT(m->jobs[i].row == BCS_ROW_NONE);
			FUZZ_ASSERT(next == 0);
		}
	}
}

/*
 * Datagram @buf of @len bytes decoded to @v, @m: a verdict in range, and
 * an accepted datagram is exactly what bcsp_encode() makes of what was
 * decoded (no byte ignored, none invented), with a body the daemon's own
 * checks handle.
 */
static inline void fuzz_check_decoded(const uint8_t *buf, size_t len,
				      enum bcsp_verdict v,
				      const struct bcsp_msg *m,
				      const uint8_t *key)
{
	uint8_t out[BCSP_MAX_LEN];
	int n;

	FUZZ_ASSERT(v < __BCSP_VERDICT_MAX);
	FUZZ_ASSERT(strcmp(bcsp_verdict_name(v), "?"));
	if (v != BCSP_OK)
		return;
	FUZZ_ASSERT(bcsp_type_valid(m->hdr.type));
	FUZZ_ASSERT(m->hdr.cluster == FUZZ_CLUSTER);
	n = bcsp_encode(m, key, out, sizeof(out));
	FUZZ_ASSERT(n > 0 && (size_t)n == len && !memcmp(out, buf, len));
	switch (m->hdr.type) {
	case BCSP_STROBE:
		FUZZ_ASSERT(!(m->strobe.flags & ~BCSP_STROBE_F_ALL));
		fuzz_check_strobe(&m->strobe);
		break;
	case BCSP_MAP:
		fuzz_check_map(&m->map);
		break;
	case BCSP_REQUEST:
		FUZZ_ASSERT(m->req.node == m->hdr.sender);
		break;
	case BCSP_REPORT:
		FUZZ_ASSERT(m->report.nr_jobs <= BCSP_MAX_JOBS);
		break;
	case BCSP_PROBE_REPLY:
		FUZZ_ASSERT(m->probe.t3 >= m->probe.t2);
		break;
	case BCSP_OFFSETS:
		FUZZ_ASSERT(m->offsets.nr <= BCSP_MAX_OFFSETS);
		break;
	case BCSP_MPI_PART:
		/* What mpigather.c copies: inside its file, and it in bounds. */
		FUZZ_ASSERT(m->part.size <= BCSP_MPI_FILE_MAX &&
			    m->part.len <= BCSP_MPI_PART_MAX &&
			    m->part.offset + m->part.len <= m->part.size);
		FUZZ_ASSERT(m->part.files ? m->part.file < m->part.files &&
					    m->part.len :
					    !m->part.size && !m->part.len);
		break;
	case BCSP_TG_NACK:
		/*
		 * What tgnode.c resends from: no part past the answer's
		 * last (its size then matched the kept answer's), or all.
		 */
		if (m->tg_nack.flags & BCSP_TG_NACK_F_ALL) {
			FUZZ_ASSERT(!m->tg_nack.size && !m->tg_nack.parts[0] &&
				    !m->tg_nack.parts[1]);
		} else {
			uint32_t k, nr = (m->tg_nack.size +
					  BCSP_TG_PART_MAX - 1) /
					 BCSP_TG_PART_MAX;

			FUZZ_ASSERT(m->tg_nack.size &&
				    m->tg_nack.size <= BCSP_TG_SIZE_MAX);
			for (k = nr; k < BCSP_TG_NACK_BITS; k++)
				FUZZ_ASSERT(!(m->tg_nack.parts[k / 64] &
					      1ULL << (k % 64)));
		}
		break;
	}
}

#endif /* BCSD_FUZZ_H */

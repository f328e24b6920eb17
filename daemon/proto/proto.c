// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding, authentication and replay protection of bcsd datagrams: the
 * header and the tag here, each type's body by the table of message types
 * (codec.c).
 *
 * Decoding checks everything that can be checked without state, cheapest
 * first, and the tag before any field is trusted: a datagram that fails
 * is only counted.  Tags are compared in constant time by libsodium.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bcs.h>
#include <sodium.h>

#include "proto/codec.h"
#include "proto/cursor.h"
#include "proto/proto.h"

static const char *const verdict_names[__BCSP_VERDICT_MAX] = {
	[BCSP_OK]		= "ok",
	[BCSP_SHORT]		= "truncated",
	[BCSP_BAD_MAGIC]	= "bad-magic",
	[BCSP_BAD_VERSION]	= "bad-version",
	[BCSP_BAD_TYPE]		= "bad-type",
	[BCSP_BAD_MAC]		= "bad-mac",
	[BCSP_OTHER_CLUSTER]	= "other-cluster",
	[BCSP_BAD_BODY]		= "bad-body",
	[BCSP_REPLAY]		= "replay",
	[BCSP_STALE]		= "stale",
};

const char *bcsp_verdict_name(enum bcsp_verdict v)
{
	return v < __BCSP_VERDICT_MAX ? verdict_names[v] : "?";
}

int bcsp_encode(const struct bcsp_msg *msg, const uint8_t *key,
		uint8_t *buf, size_t size)
{
	struct bcsp_cur c = { .p = buf, .len = size, .ok = true };
	const struct bcsp_hdr *h = &msg->hdr;
	uint8_t version = h->version ? h->version : BCSP_VERSION;
	uint16_t len;

	if (h->epoch > BCSP_EPOCH_MAX || version < BCSP_VERSION_MIN ||
	    version > BCSP_VERSION)
		return -1;
	if (size > BCSP_MAX_LEN)
		c.len = BCSP_MAX_LEN;
	put32(&c, BCSP_MAGIC);
	put8(&c, version);
	put8(&c, h->type);
	put16(&c, 0);		/* length, filled in below */
	put32(&c, h->cluster);
	put32(&c, h->epoch);
	put32(&c, h->sender);
	put16(&c, h->priority);
	put16(&c, 0);
	put64(&c, h->seq);
	bcsp_encode_body(&c, msg);
	if (!c.ok || c.len - c.off < BCSP_TAG_LEN)
		return -1;
	len = (uint16_t)(c.off + BCSP_TAG_LEN);
	len = htobe16(len);
	memcpy(buf + 6, &len, 2);
	crypto_auth_hmacsha256(buf + c.off, buf, c.off, key);
	return (int)(c.off + BCSP_TAG_LEN);
}

/*
 * @a before @b in the classes kept: "no row ran" first, then the lower
 * row.  An order of the rows alone, not of their counts, keeps the sum
 * associative and commutative: a row is kept in the sum of a set of
 * summaries exactly when fewer than BCSP_ROW_CLASSES rows before it are
 * in the set, so it is kept, with its whole count, in every part of any
 * grouping that holds it, and a row dropped anywhere is dropped in the
 * whole (two rows before it are there too).
 */
static bool class_before(const struct bcsp_row_class *a,
			 const struct bcsp_row_class *b)
{
	if (a->row == BCSP_ROW_CLASS_NONE || b->row == BCSP_ROW_CLASS_NONE)
		return a->row == BCSP_ROW_CLASS_NONE &&
		       b->row != BCSP_ROW_CLASS_NONE;
	return a->row < b->row;
}

/* The row classes of @src into @dst's (the counts fit: checked before). */
static void merge_rows(struct bcsp_switch_sum *dst,
		       const struct bcsp_switch_sum *src)
{
	struct bcsp_row_class all[2 * BCSP_ROW_CLASSES], t;
	uint32_t n = 0, i, j, other = dst->other + src->other;

	for (i = 0; i < BCSP_ROW_CLASSES; i++)
		if (dst->rows[i].nodes)
			all[n++] = dst->rows[i];
	for (i = 0; i < BCSP_ROW_CLASSES; i++) {
		if (!src->rows[i].nodes)
			continue;
		for (j = 0; j < n; j++)
			if (all[j].row == src->rows[i].row)
				break;
		if (j < n)
			all[j].nodes += src->rows[i].nodes;
		else
			all[n++] = src->rows[i];
	}
	/* Insertion sort of at most four. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && class_before(&all[j], &all[j - 1]); j--) {
			t = all[j];
			all[j] = all[j - 1];
			all[j - 1] = t;
		}
	memset(dst->rows, 0, sizeof(dst->rows));
	for (i = 0; i < n; i++) {
		if (i < BCSP_ROW_CLASSES)
			dst->rows[i] = all[i];
		else
			other += all[i].nodes;
	}
	dst->other = (uint16_t)other;
}

bool bcsp_switch_sum_add(struct bcsp_switch_sum *dst,
			 const struct bcsp_switch_sum *src)
{
	if (dst->slice != src->slice ||
	    (uint32_t)dst->nodes + src->nodes > UINT16_MAX)
		return false;
	merge_rows(dst, src);
	/* late <= nodes and predicted <= nodes: neither passes either. */
	dst->nodes += src->nodes;
	dst->late += src->late;
	dst->predicted += src->predicted;
	if (src->end_max_ns > dst->end_max_ns)
		dst->end_max_ns = src->end_max_ns;
	if (src->end_min_ns < dst->end_min_ns)
		dst->end_min_ns = src->end_min_ns;
	return true;
}

enum bcsp_verdict bcsp_decode(const uint8_t *buf, size_t len,
			      uint32_t cluster, const uint8_t *key,
			      struct bcsp_msg *msg)
{
	return bcsp_decode_keys(buf, len, cluster, key, NULL, NULL, msg);
}

enum bcsp_verdict bcsp_decode_keys(const uint8_t *buf, size_t len,
				   uint32_t cluster, const uint8_t *key,
				   const uint8_t *key2, unsigned int *which,
				   struct bcsp_msg *msg)
{
	struct bcsp_cur c = { .p = (uint8_t *)buf, .ok = true };
	uint16_t wire_len, reserved;
	uint8_t type, version;
	size_t body_end;

	/*
	 * Everything before the tag costs the same whatever the datagram
	 * holds, and little: a forged one costs at most one HMAC per key.
	 */
	if (len < BCSP_HDR_LEN + BCSP_TAG_LEN || len > BCSP_MAX_LEN)
		return BCSP_SHORT;
	c.len = len - BCSP_TAG_LEN;
	if (get32(&c) != BCSP_MAGIC)
		return BCSP_BAD_MAGIC;
	version = get8(&c);
	if (version < BCSP_VERSION_MIN || version > BCSP_VERSION)
		return BCSP_BAD_VERSION;
	type = get8(&c);
	wire_len = get16(&c);
	if (wire_len != len)
		return BCSP_SHORT;
	if (!bcsp_type_valid(type))
		return BCSP_BAD_TYPE;
	body_end = len - BCSP_TAG_LEN;
	if (!bcsp_body_len_ok(type, body_end - BCSP_HDR_LEN))
		return BCSP_SHORT;
	if (!crypto_auth_hmacsha256_verify(buf + body_end, buf, body_end, key))
		key2 = NULL;
	else if (!key2 ||
		 crypto_auth_hmacsha256_verify(buf + body_end, buf, body_end,
					       key2))
		return BCSP_BAD_MAC;
	if (which)
		*which = key2 ? 1 : 0;
	memset(msg, 0, sizeof(*msg));
	msg->hdr.version = version;
	msg->hdr.type = type;
	msg->hdr.cluster = get32(&c);
	if (msg->hdr.cluster != cluster)
		return BCSP_OTHER_CLUSTER;
	msg->hdr.epoch = get32(&c);
	msg->hdr.sender = get32(&c);
	msg->hdr.priority = get16(&c);
	reserved = get16(&c);
	msg->hdr.seq = get64(&c);
	if (reserved || msg->hdr.epoch > BCSP_EPOCH_MAX ||
	    !bcsp_decode_body(&c, msg) || c.off != body_end)
		return BCSP_BAD_BODY;
	return BCSP_OK;
}

bool bcsp_epoch_next(uint32_t seen, uint32_t *next)
{
	if (seen >= BCSP_EPOCH_MAX)
		return false;
	*next = seen + 1;
	return true;
}

enum bcsp_verdict bcsp_strobe_verdict(const struct bcsp_strobe *s,
				      uint64_t now_ns, uint64_t stale_slices)
{
	if (s->row >= BCS_ROWS_MAX || s->slice_ns < BCS_SLICE_NS_MIN ||
	    s->slice_ns > BCS_SLICE_NS_MAX)
		return BCSP_BAD_BODY;
	/* The whole plan ends by BCS_DEADLINE_NS_MAX, as bcs.ko checks. */
	if (s->plan_slices && (s->deadline_ns > BCS_DEADLINE_NS_MAX ||
	    (uint64_t)(s->plan_slices - 1) * s->slice_ns >
	    BCS_DEADLINE_NS_MAX - s->deadline_ns))
		return BCSP_BAD_BODY;
	/*
	 * Differences, not sums: deadlines and clocks take any 64-bit
	 * value, and deadline + slices would wrap (found by fuzz_body).
	 */
	if (s->deadline_ns < now_ns &&
	    stale_slices <= UINT64_MAX / s->slice_ns &&
	    now_ns - s->deadline_ns > stale_slices * s->slice_ns)
		return BCSP_STALE;
	if (s->deadline_ns > now_ns &&
	    s->deadline_ns - now_ns > BCSP_AHEAD_SLICES * s->slice_ns)
		return BCSP_STALE;
	return BCSP_OK;
}

enum bcsp_verdict bcsp_window_check(struct bcsp_window *w, uint32_t epoch,
				    uint64_t seq)
{
	uint64_t back;

	if (w->used && epoch < w->epoch)
		return BCSP_STALE;
	if (!w->used || epoch > w->epoch) {
		w->used = true;
		w->epoch = epoch;
		w->top = seq;
		w->bits = 1;
		w->prev_top = 0;
		return BCSP_OK;
	}
	if (seq > w->top) {
		back = seq - w->top;
		if (back >= 64) {
			/* A jump: what came before stays checkable. */
			w->prev_top = w->top;
			w->prev_bits = w->bits;
			w->prev_above = 0;
			w->prev_end = seq - 64;
			w->bits = 0;
		} else {
			w->bits <<= back;
		}
		w->bits |= 1;
		w->top = seq;
		return BCSP_OK;
	}
	back = w->top - seq;
	if (back < 64) {
		if (w->bits & (1ULL << back))
			return BCSP_REPLAY;
		w->bits |= 1ULL << back;
		return BCSP_OK;
	}
	/* Older than the window: the one before the last jump, if any. */
	if (!w->prev_top)
		return BCSP_REPLAY;
	if (seq > w->prev_top) {
		back = seq - w->prev_top - 1;
		if (seq > w->prev_end || back >= 64 ||
		    (w->prev_above & (1ULL << back)))
			return BCSP_REPLAY;
		w->prev_above |= 1ULL << back;
		return BCSP_OK;
	}
	back = w->prev_top - seq;
	if (back >= 64 || (w->prev_bits & (1ULL << back)))
		return BCSP_REPLAY;
	w->prev_bits |= 1ULL << back;
	return BCSP_OK;
}

uint64_t bcsp_seq_next(uint64_t *next, uint64_t now_ns)
{
	if (now_ns > BCSP_SEQ_LAG_NS && *next < now_ns - BCSP_SEQ_LAG_NS)
		*next = now_ns;
	return (*next)++;
}

enum bcsp_verdict bcsp_seq_check(struct bcsp_window *w, uint32_t epoch,
				 uint64_t seq, uint64_t floor_ns)
{
	if ((!w->used || epoch > w->epoch) && seq < floor_ns)
		return BCSP_STALE;
	return bcsp_window_check(w, epoch, seq);
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int bcsp_load_key(const char *path, uint8_t key[BCSP_KEY_LEN], char *err,
		  size_t errlen)
{
	uint8_t buf[2 * BCSP_KEY_LEN + 2];
	struct stat st;
	ssize_t n;
	int fd, i, hi, lo;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by uid %u, not by this user",
			 path, (unsigned int)st.st_uid);
		goto fail;
	}
	if (st.st_mode & 0077) {
		snprintf(err, errlen,
			 "%s: readable by group or others (mode %03o); chmod 600 it",
			 path, (unsigned int)(st.st_mode & 0777));
		goto fail;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	fd = -1;
	if (n == BCSP_KEY_LEN) {
		memcpy(key, buf, BCSP_KEY_LEN);
		sodium_memzero(buf, sizeof(buf));
		return 0;
	}
	if (n == 2 * BCSP_KEY_LEN ||
	    (n == 2 * BCSP_KEY_LEN + 1 && buf[2 * BCSP_KEY_LEN] == '\n')) {
		for (i = 0; i < BCSP_KEY_LEN; i++) {
			hi = hexval(buf[2 * i]);
			lo = hexval(buf[2 * i + 1]);
			if (hi < 0 || lo < 0)
				break;
			key[i] = (uint8_t)(hi << 4 | lo);
		}
		sodium_memzero(buf, sizeof(buf));
		if (i == BCSP_KEY_LEN)
			return 0;
	}
	snprintf(err, errlen,
		 "%s: a key is 32 bytes or 64 hex digits (bcsd --genkey makes one)",
		 path);
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

void bcsp_map_fill_part(const struct bcsp_whole_map *w, uint32_t k,
			struct bcsp_map *part)
{
	part->version = w->version;
	part->nr_jobs = w->nr_jobs;
	part->apply_slice = w->apply_slice;
	part->first = k * BCSP_MAP_PART_JOBS;
	part->nr = bcsp_map_part_len(w->nr_jobs, part->first);
	memcpy(part->jobs, &w->jobs[part->first],
	       part->nr * sizeof(part->jobs[0]));
	memset(&part->jobs[part->nr], 0,
	       (BCSP_MAP_PART_JOBS - part->nr) * sizeof(part->jobs[0]));
}

uint64_t bcsp_map_home_rows(const struct bcsp_whole_map *m)
{
	uint64_t rows = 0;
	uint32_t i;

	for (i = 0; i < m->nr_jobs && i < BCSP_MAP_JOBS_MAX; i++)
		if (m->jobs[i].row < BCS_ROWS_MAX)
			rows |= 1ULL << m->jobs[i].row;
	return rows;
}

uint32_t bcsp_rows_next(uint64_t rows, uint32_t row)
{
	row = bcs_row_next(rows, row);
	/* A strobe names a row: with none to run, row 0 runs no job. */
	return row == BCS_ROW_NONE ? 0 : row;
}

uint32_t bcsp_plan_row(uint64_t rows, uint32_t row, uint64_t i)
{
	if (!rows)
		return row;
	/* bcs.ko's rule; once on it, the rotation repeats every popcount. */
	if (i > UINT32_MAX)
		i = 1 + (i - 1) % (uint64_t)__builtin_popcountll(rows);
	return bcs_plan_row(rows, row, (uint32_t)i);
}

uint32_t bcsp_plan_make(uint64_t start, uint32_t step, uint64_t cut,
			uint64_t covered, uint32_t *next)
{
	uint32_t len;

	if (step < 1)
		step = 1;
	if (step > BCS_PLAN_SLICES_MAX / 2)
		step = BCS_PLAN_SLICES_MAX / 2;
	len = 2 * step;
	if (cut > start && cut - start < len)
		len = (uint32_t)(cut - start);
	*next = len < step ? len : step;
	if (start >= covered)
		*next = 1;
	return len;
}

uint32_t bcsp_map_next_row(const struct bcsp_whole_map *m, uint32_t row)
{
	return bcsp_rows_next(bcsp_map_home_rows(m), row);
}

int bcsp_write_key(const char *path, char *err, size_t errlen)
{
	uint8_t key[BCSP_KEY_LEN];
	FILE *f;
	int fd, i;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	randombytes_buf(key, sizeof(key));
	for (i = 0; i < BCSP_KEY_LEN; i++)
		fprintf(f, "%02x", key[i]);
	fputc('\n', f);
	sodium_memzero(key, sizeof(key));
	if (fclose(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

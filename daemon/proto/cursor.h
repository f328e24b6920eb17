/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cursor over a datagram's bytes, big-endian: what the header's coder
 * (proto.c) and the bodies' (codec.c) write and read with.  Inline: the
 * strobe's path runs through it.
 */
#ifndef BCSD_PROTO_CURSOR_H
#define BCSD_PROTO_CURSOR_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A cursor over a buffer; @ok turns false on overrun and stays false. */
struct bcsp_cur {
	uint8_t *p;
	size_t len, off;
	bool ok;
};

static inline void put(struct bcsp_cur *c, const void *v, size_t n)
{
	if (!c->ok || c->len - c->off < n) {
		c->ok = false;
		return;
	}
	memcpy(c->p + c->off, v, n);
	c->off += n;
}

static inline void put8(struct bcsp_cur *c, uint8_t v)
{
	put(c, &v, 1);
}

static inline void put16(struct bcsp_cur *c, uint16_t v)
{
	v = htobe16(v);
	put(c, &v, 2);
}

static inline void put32(struct bcsp_cur *c, uint32_t v)
{
	v = htobe32(v);
	put(c, &v, 4);
}

static inline void put64(struct bcsp_cur *c, uint64_t v)
{
	v = htobe64(v);
	put(c, &v, 8);
}

static inline void get(struct bcsp_cur *c, void *v, size_t n)
{
	if (!c->ok || c->len - c->off < n) {
		c->ok = false;
		memset(v, 0, n);
		return;
	}
	memcpy(v, c->p + c->off, n);
	c->off += n;
}

static inline uint8_t get8(struct bcsp_cur *c)
{
	uint8_t v;

	get(c, &v, 1);
	return v;
}

static inline uint16_t get16(struct bcsp_cur *c)
{
	uint16_t v;

	get(c, &v, 2);
	return be16toh(v);
}

static inline uint32_t get32(struct bcsp_cur *c)
{
	uint32_t v;

	get(c, &v, 4);
	return be32toh(v);
}

static inline uint64_t get64(struct bcsp_cur *c)
{
	uint64_t v;

	get(c, &v, 8);
	return be64toh(v);
}

#endif /* BCSD_PROTO_CURSOR_H */

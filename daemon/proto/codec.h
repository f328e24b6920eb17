/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The message types as a table (codec.c): one row per enum bcsp_type with
 * its name, the sizes its body can have and the functions that encode and
 * decode it.  The header, the tag and the replay window are proto.c's.
 *
 * A new type is a constant in enum bcsp_type, its body's struct in struct
 * bcsp_msg (proto.h), a row here with its two functions, its row in
 * wire-protocol.rst's table of types (tests/proto/test_types checks it)
 * and its seed (fuzz/mkseeds.c, which fails without one).
 */
#ifndef BCSD_PROTO_CODEC_H
#define BCSD_PROTO_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

struct bcsp_cur;		/* proto/cursor.h */

/* Write the body of @m; @c->ok false if it cannot be sent so. */
typedef void bcsp_encode_fn(struct bcsp_cur *c, const struct bcsp_msg *m);
/*
 * Read the body of @m (its header decoded, the length checked against the
 * table): false if it is not a body of its type.
 */
typedef bool bcsp_decode_fn(struct bcsp_cur *c, struct bcsp_msg *m);

/*
 * A body is @fixed bytes and then k elements of @elem bytes, with k 0, or
 * @min .. @max; @elem 0: always @fixed bytes.  What the elements are is
 * the type's own (jobs, slices, words of a selection or of node ids, bytes
 * of a file); the decoder checks the rest.
 */
struct bcsp_type_desc {
	const char *name;	/* as wire-protocol.rst and the seeds name it */
	uint16_t fixed;
	uint16_t elem;
	uint16_t min;
	uint16_t max;
	bcsp_encode_fn *encode;
	bcsp_decode_fn *decode;
};

/* Indexed by enum bcsp_type; the rows of valid types are all filled. */
extern const struct bcsp_type_desc bcsp_types[__BCSP_TYPE_MAX];

/* The name of @type, or "?" if it is not one of enum bcsp_type. */
const char *bcsp_type_name(unsigned int type);

/*
 * Can a body of valid type @type be @n bytes long?  Checked before the
 * tag, so that a datagram that cannot be right costs no HMAC.
 */
bool bcsp_body_len_ok(unsigned int type, size_t n);
/* Order of the pairs of struct bcsp_node_tasks: by job, then node. */
int bcsp_node_task_cmp(const void *a, const void *b);

/* The body of @m by its type's row; @c->ok false for an invalid type. */
void bcsp_encode_body(struct bcsp_cur *c, const struct bcsp_msg *m);

/* The body of @m, of a valid type, by its type's row. */
bool bcsp_decode_body(struct bcsp_cur *c, struct bcsp_msg *m);

#endif /* BCSD_PROTO_CODEC_H */

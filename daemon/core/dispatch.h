/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dispatch.c: messages to the handlers the parts registered, per type.
 */
#ifndef BCSD_DISPATCH_H
#define BCSD_DISPATCH_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

struct bcsd;

/* Where a message handed to the parts (dispatch()) comes from. */
struct bcsd_origin {
	bool local;			/* a part of this daemon, not the network */
	uint64_t slice;			/* local: the master's current slice */
	/* A strobe from the network: the master followed until it came. */
	bool prev_known;
	uint32_t prev_id;
	uint32_t prev_epoch;
	uint64_t prev_heard_ms;
	/*
	 * From the network: the datagram as it came (@buf, @len, for the
	 * tree to pass on as it is) and its sender's address.
	 */
	const uint8_t *buf;
	size_t len;
	const struct sockaddr_in *sin;
};

typedef void dispatch_fn(struct bcsd *d, const struct bcsp_msg *m,
			 const struct bcsd_origin *from);
/* A handler that may take the message to itself: true, no other sees it. */
typedef bool dispatch_claim_fn(struct bcsd *d, const struct bcsp_msg *m,
			       const struct bcsd_origin *from);

#define DISPATCH_HANDLERS_MAX	6	/* per message type */
#define DISPATCH_CLAIMS_MAX	2	/* per message type */

struct bcsd_handlers {
	dispatch_fn *fn[DISPATCH_HANDLERS_MAX];
	unsigned int nr;
	dispatch_claim_fn *claim[DISPATCH_CLAIMS_MAX];
	unsigned int nr_claims;
};

/*
 * dispatch_register(): @fn gets the messages of type @type, after the
 * handlers registered before it.  dispatch_claim(): @fn sees them before
 * every handler of dispatch_register(), and those see none it takes.
 */
void dispatch_register(struct bcsd *d, enum bcsp_type type, dispatch_fn *fn);
void dispatch_claim(struct bcsd *d, enum bcsp_type type,
		    dispatch_claim_fn *fn);
void dispatch(struct bcsd *d, const struct bcsp_msg *m,
	      const struct bcsd_origin *from);

#endif /* BCSD_DISPATCH_H */

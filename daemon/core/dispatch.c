// SPDX-License-Identifier: GPL-2.0
/*
 * The dispatcher: every message reaches the parts through here, whether
 * rx.c accepted it from the network or a part of this daemon hands it
 * over (the active master's own strobes and maps to the node part, the
 * node's report and a local bcsctl request to the master, the master's
 * answer to that).  The parts register a handler per message type at
 * their _init; handlers run in the order of registration, that is of
 * the parts' start (bcsd.c): tree, master, node, ctl.  The tree takes
 * some messages to itself (dispatch_claim()): the ones it adds up or
 * answers on the way, which the parts never see.
 */
#include <stdlib.h>

#include "bcsd.h"
#include "core/log.h"

void dispatch_register(struct bcsd *d, enum bcsp_type type, dispatch_fn *fn)
{
	struct bcsd_handlers *h = &d->dispatch[type];

	if (!bcsp_type_valid(type) || h->nr >= DISPATCH_HANDLERS_MAX) {
		pr_err("bug: handler for message type %d", (int)type);
		abort();
	}
	h->fn[h->nr++] = fn;
}

void dispatch_claim(struct bcsd *d, enum bcsp_type type,
		    dispatch_claim_fn *fn)
{
	struct bcsd_handlers *h = &d->dispatch[type];

	if (!bcsp_type_valid(type) || h->nr_claims >= DISPATCH_CLAIMS_MAX) {
		pr_err("bug: claim of message type %d", (int)type);
		abort();
	}
	h->claim[h->nr_claims++] = fn;
}

void dispatch(struct bcsd *d, const struct bcsp_msg *m,
	      const struct bcsd_origin *from)
{
	const struct bcsd_handlers *h;
	unsigned int i;

	if (!bcsp_type_valid(m->hdr.type))
		return;
	h = &d->dispatch[m->hdr.type];
	for (i = 0; i < h->nr_claims; i++)
		if (h->claim[i](d, m, from))
			return;
	for (i = 0; i < h->nr; i++)
		h->fn[i](d, m, from);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * context.c, the statistics context (BCSP_CONTEXT) of the active master,
 * d->master.ctx: changed by requests, sent with every map.
 */
#ifndef BCSD_MASTER_CONTEXT_H
#define BCSD_MASTER_CONTEXT_H

#include <stdint.h>

#include <stdbool.h>

struct bcsd;
struct bcsp_context;
struct bcsp_request;

/*
 * Context @c as sent at protocol_version 3: no subsets, and their jobs
 * with no metrics (wire-protocol.rst, Context).
 */
void context_v3(struct bcsp_context *c);
/* The context, if there is one, to the group and this host's node part. */
void context_send(struct bcsd *d);
/*
 * Requests: statistics (BCSP_OP_STATS) of a job the master has (@known)
 * or not, and the window (BCSP_OP_WINDOW, BCSP_OP_WINDOW_CLEAR); 0 or a
 * negative errno.
 */
int context_stats(struct bcsd *d, const struct bcsp_request *req, bool known);
int context_window(struct bcsd *d, const struct bcsp_request *req);
/* Job @id is gone: so are its statistics from the context. */
void context_forget(struct bcsd *d, uint32_t id);

#endif /* BCSD_MASTER_CONTEXT_H */

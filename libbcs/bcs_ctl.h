/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcs - the client of bcsd's control socket (<linux/bcs_ctl.h>): one
 * JSON object per message, built and read with json-c.  When bcsd runs on
 * this host, job commands act on the whole cluster through it.
 *
 * As in <bcs.h>, nothing prints and nothing exits.
 */
#ifndef LIBBCS_BCS_CTL_H
#define LIBBCS_BCS_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/bcs_ctl.h>

#ifdef __cplusplus
extern "C" {
#endif

struct json_object;

/*
 * Connect to bcsd ($BCS_CONTROL_SOCKET, else BCSD_CONTROL_SOCKET; an
 * empty variable means "never"), close-on-exec.  Returns a file
 * descriptor, or a negative errno when no bcsd listens (-ENOENT for
 * the empty variable).
 */
int bcs_ctl_connect(void);

/*
 * Send @req (consumed) and wait up to @timeout_ms for the answer.  Returns
 * 0 with *@resp set when bcsd answered ok, a negative errno otherwise
 * (bcsd's "error", with its message copied to @msg).
 */
int bcs_ctl_call(int fd, struct json_object *req, struct json_object **resp,
		 int timeout_ms, char *msg, size_t msglen);

/* Field @key of @o as an integer, @def if missing. */
int64_t bcs_ctl_int(struct json_object *o, const char *key, int64_t def);
/* Field "row" of @o: null (or none) is BCS_ROW_NONE. */
uint32_t bcs_ctl_row(struct json_object *o);

#ifdef __cplusplus
}
#endif

#endif /* LIBBCS_BCS_CTL_H */

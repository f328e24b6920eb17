/* SPDX-License-Identifier: GPL-2.0 */
/*
 * requests.c, the master's requests (bcsctl through the master): carried
 * out by the active master, the replies kept for retries.
 */
#ifndef BCSD_MASTER_REQUESTS_H
#define BCSD_MASTER_REQUESTS_H

struct bcsd;
struct bcsd_origin;
struct bcsp_msg;

/*
 * Once a tick of the active master: attaches whose node has not answered
 * for BCSD_ATTACH_WAIT_MS are answered -EHOSTUNREACH.
 */
void requests_tick(struct bcsd *d);
/*
 * Handlers: a request (BCSP_REQUEST), from the network or this host's
 * control socket; a reply of the master followed (BCSP_REPLY), kept by a
 * standby; a node's result of a command (BCSP_RESULT), which answers an
 * attach.
 */
void requests_on_request(struct bcsd *d, const struct bcsp_msg *m,
			 const struct bcsd_origin *from);
void requests_on_reply(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from);
void requests_on_result(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from);

#endif /* BCSD_MASTER_REQUESTS_H */

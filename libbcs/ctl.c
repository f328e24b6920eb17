// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: requests to bcsd over its control socket (one JSON object per
 * SOCK_SEQPACKET message; see daemon/ctl.c and <linux/bcs_ctl.h>).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/bcs.h>

#include "bcs_ctl.h"

int bcs_ctl_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *path = getenv(BCSD_ENV_SOCKET);
	int fd, err;

	if (!path)
		path = BCSD_CONTROL_SOCKET;
	if (!*path)
		return -ENOENT;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

uint32_t bcs_ctl_row(struct json_object *o)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, "row", &v) || !v)
		return BCS_ROW_NONE;
	return (uint32_t)json_object_get_int64(v);
}

int64_t bcs_ctl_int(struct json_object *o, const char *key, int64_t def)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ?
	       json_object_get_int64(v) : def;
}

int bcs_ctl_call(int fd, struct json_object *req, struct json_object **resp,
		 int timeout_ms, char *msg, size_t msglen)
{
	const char *s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct json_object *o, *v;
	char peek, *buf;
	int err, send_err = 0;
	ssize_t n;

	*resp = NULL;
	snprintf(msg, msglen, "no answer from bcsd");
	n = send(fd, s, strlen(s), MSG_NOSIGNAL);
	json_object_put(req);
	/*
	 * bcsd refuses a connection it has no room for (too many of this
	 * user's) with a message saying so, and reads nothing from it: the
	 * send fails, and that message, if any, tells why.
	 */
	if (n < 0) {
		send_err = -errno;
		if (send_err != -EPIPE)
			return send_err;
		timeout_ms = 0;
	}
	n = poll(&pfd, 1, timeout_ms);
	if (n <= 0)
		return send_err ? send_err : n ? -errno : -ETIMEDOUT;
	/* A reply has no size limit (job lists grow with the nodes): peek. */
	n = recv(fd, &peek, 1, MSG_PEEK | MSG_TRUNC);
	if (n <= 0)
		return send_err ? send_err : n ? -errno : -ECONNRESET;
	buf = malloc((size_t)n + 1);
	if (!buf)
		return -ENOMEM;
	n = recv(fd, buf, (size_t)n, 0);
	if (n <= 0) {
		err = n ? -errno : -ECONNRESET;
		free(buf);
		return err;
	}
	buf[n] = '\0';
	o = json_tokener_parse(buf);
	free(buf);
	if (!o)
		return -EPROTO;
	if (json_object_object_get_ex(o, "ok", &v) && json_object_get_boolean(v)) {
		*resp = o;
		return 0;
	}
	err = (int)bcs_ctl_int(o, "error", -EPROTO);
	snprintf(msg, msglen, "%s", json_object_object_get_ex(o, "message", &v) ?
		 json_object_get_string(v) : "bcsd refused the request");
	json_object_put(o);
	return err < 0 ? err : -EPROTO;
}

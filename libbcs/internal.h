/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libbcs and its unit tests: not installed, not exported from
 * the shared library (see libbcs.map).
 */
#ifndef LIBBCS_INTERNAL_H
#define LIBBCS_INTERNAL_H

#include "bcs.h"

/* How often a list read is retried when the list keeps growing. */
#define BCS_LIST_RETRIES	8

struct bcs {
	int fd;
};

struct bcs_stat {
	int fd;
	int nonblock;		/* O_NONBLOCK currently set on fd */
	void *map;		/* header + ring, or NULL */
	size_t map_len;
	const struct bcs_stat_header *hdr;
	const unsigned char *ring;
	uint32_t nr_records;
	uint32_t record_size;	/* the module's, from its header; 0: unknown */
	void *bounce;		/* read() buffer when record_size is larger */
	size_t bounce_len;
};

/* Path of a device: the environment override if set, else @def. */
const char *bcs__device_path(const char *env, const char *def);

/* ioctl() returning 0 or -errno, restarting on EINTR. */
int bcs__ioctl(int fd, unsigned long req, void *arg);

/* The query ioctls on any bcs file descriptor. */
int bcs__get_state(int fd, struct bcs_state *st);
int bcs__job_list(int fd, struct bcs_job_info **out, size_t *n);
int bcs__task_stats(int fd, uint32_t job, struct bcs_task_stat **out,
		    size_t *n);

/*
 * bcs_nl_open() for another generic netlink family, so the unit tests can
 * exercise the error path against a family every kernel has ("nlctrl").
 */
int bcs__nl_open_family(struct bcs_nl **out, const char *family);

/*
 * A BCS_CMD_JOB_ENDED message of family @family into @out: 1, 0 if @nh is
 * another message, -EPROTO if it lacks what every notification has.
 */
struct nlmsghdr;
int bcs__job_end_parse(const struct nlmsghdr *nh, int family,
		       struct bcs_job_ended *out);

/* Is @h a histogram of the format of <linux/bcs_hist.h> (hist.c)? */
int bcs__hist_valid(const struct bcs_hist_header *h);

/* Translate a libnl error code (NLE_*, either sign) to a negative errno. */
int bcs__nlerr_to_errno(int nlerr);

#endif /* LIBBCS_INTERNAL_H */

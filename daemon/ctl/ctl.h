/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl.c, the control socket for bcsctl: a part of bcsd.  It depends on
 * the core (bcsd.h) alone and takes its messages from the dispatcher;
 * bcsd.c starts and stops it.
 */
#ifndef BCSD_CTL_H
#define BCSD_CTL_H

#include <stdint.h>
#include <sys/types.h>

#include "proto/proto.h"

struct bcsd;
struct json_object;
struct mpi_gather;
struct tg_gather;

/*
 * What ctl.c answers with from other parts, which it does not call: each
 * part fills its entries at its _init (before ctl_init()), and an entry
 * stays NULL when its part is not in this daemon.  @slices: the active
 * master's global records of the last @last slices (the master part,
 * global_json()).  @job_owner: the owner of job @job's directory in
 * mpi_dir (the node part, mpidir_owner()), 0 or a negative errno.
 */
struct ctl_providers {
	struct json_object *(*slices)(const struct bcsd *d, uint64_t last);
	int (*job_owner)(const struct bcsd *d, uint32_t job, uid_t *uid);
};

/* A bcsctl connection, maybe waiting for the master's answer. */
struct bcsd_client {
	int fd;
	uid_t uid;		/* the peer's, when it connected */
	uint32_t req_id;	/* 0 if not waiting */
	struct bcsp_request req;
	struct mpi_gather *gather;	/* mpi-gather: the files coming */
	struct tg_gather *tg;		/* or the tree's answer coming */
	uint64_t sent_ms;
	unsigned int tries;
	uint32_t wait_job;	/* waiting for this job to exist locally */
	uint64_t wait_until_ms;
	uint64_t last_ms;	/* accepted or last asked */
};

/*
 * ctl.c: the control socket, control_clients connections, so many per
 * user (ctl_slot()).
 */
/* The last gathers of users other than root, per job (ctl.c). */
#define CTL_GATHER_SLOTS	64

struct bcsd_ctl {
	int listen_fd;
	struct bcsd_client *clients;
	unsigned int nr_clients;
	uint32_t next_req_id;
	/* Job and when (ms, monotonic) of the last such gathers. */
	struct {
		uint32_t job;
		uint64_t ms;
	} gathered[CTL_GATHER_SLOTS];
};

int ctl_init(struct bcsd *d);
void ctl_exit(struct bcsd *d);

#endif /* BCSD_CTL_H */

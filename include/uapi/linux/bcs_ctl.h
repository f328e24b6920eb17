/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * bcs - bcsd's control socket, as the daemon (daemon/ctl.c) serves it and
 * its clients (libbcs's bcs_ctl_*(), <bcs_ctl.h>: bcsctl, bcsstat, the
 * Slurm plugin) reach it: a Unix SOCK_SEQPACKET socket carrying one JSON
 * object per message, the requests and answers daemon/ctl.c lists.
 *
 * And the labels of jobs: BCS_LABEL_DIR/<job id> holds one line naming
 * what the job is on this node ("slurm 42.0": Slurm job 42, step 0,
 * written by the SPANK plugin on each node that runs a task of the step);
 * `bcsctl job list` shows it.  Nothing else is kept about it.
 */
#ifndef _UAPI_LINUX_BCS_CTL_H
#define _UAPI_LINUX_BCS_CTL_H

/* Where bcsd listens by default (its control_socket). */
#define BCSD_CONTROL_SOCKET	"/run/bcs/bcsd.sock"
/* The clients' override of it; an empty value means "no bcsd". */
#define BCSD_ENV_SOCKET		"BCS_CONTROL_SOCKET"
/* The longest request bcsd reads, in bytes; answers have no bound. */
#define BCS_CTL_MSG_MAX		65536

#define BCS_LABEL_DIR		"/run/bcs/labels"
#define BCS_LABEL_MAX		64
#define BCS_ENV_LABEL_DIR	"BCS_LABEL_DIR"	/* bcsctl's, for tests */

#endif /* _UAPI_LINUX_BCS_CTL_H */

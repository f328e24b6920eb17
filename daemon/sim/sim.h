/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsd-sim: bcsd linked against a user-space stand-in of the libbcs
 * functions that touch bcs.ko (sim.c), so that many daemons can run on
 * one host without the module.  The stand-ins keep the signatures and
 * errors of libbcs/bcs.h; this header holds only the stand-in's own
 * constants.
 */
#ifndef BCSD_SIM_H
#define BCSD_SIM_H

/*
 * If set, the file to which every strobe that reaches the stand-in is
 * appended, one line each: "slice row deadline_ns arrival_ns" (decimal,
 * CLOCK_REALTIME nanoseconds).  Opened O_APPEND at the first bcs_open();
 * bcs_open() fails with its errno if it cannot be opened.
 */
#define BCS_SIM_ENV_LOG		"BCS_SIM_LOG"

/*
 * If set to "TYPE:N", the first N datagrams of type TYPE (enum bcsp_type,
 * decimal) that reach the daemon are lost before it looks at them; if
 * "TYPE:N:K", the N after the first K.  For the tests of retransmission
 * (daemon/tests/test_attach.sh, test_tree_sim.sh).
 */
#define BCS_SIM_ENV_DROP	"BCS_SIM_DROP"

/*
 * If set to N (1 .. BCS_SIM_DIST_MAX): every job the stand-in knows has
 * one tracked thread, BCS_SIM_DIST_PID, whose histogram of every metric
 * holds N values of BCS_SIM_DIST_NS (resolution BCS_SIM_DIST_SUB_BITS),
 * so that a test can check distributions merged across nodes
 * (daemon/tests/test_tgather_sim.sh).  Unset: no thread is tracked.
 */
#define BCS_SIM_ENV_DIST	"BCS_SIM_DIST"
#define BCS_SIM_DIST_MAX	1000000UL
#define BCS_SIM_DIST_PID	4242
#define BCS_SIM_DIST_NS		1000U
#define BCS_SIM_DIST_SUB_BITS	2U

/* Processes attached to the stand-in's jobs, at most. */
#define BCS_SIM_TASKS		256U

/* Records in the stand-in's slice ring (bcs.ko's stat_records). */
#define BCS_SIM_RECORDS		4096U

/* Ends of jobs queued per events handle before they count as lost. */
#define BCS_SIM_EVENTS_QUEUE	256U

/* Events handles open at once in one process. */
#define BCS_SIM_EVENTS_MAX	8U

#endif /* BCSD_SIM_H */

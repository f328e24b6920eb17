/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcsmpi: recording the calls of this process into its statistics
 * file.  The wrappers (wrappers.c) call these and nothing else.
 *
 * Computation granularity and communication overhead follow the paper's
 * MMDS: at the entry of a blocking primitive the time since the end of
 * the previous one (or since MPI_Init's return) is a computation point,
 * at its return the time inside it a communication point.  The time
 * inside non-blocking primitives is part of the computation.  The two
 * add up to the time from MPI_Init's return to MPI_Finalize's entry for
 * a process that calls MPI from one thread at a time.
 */
#ifndef BCSMPI_RECORD_H
#define BCSMPI_RECORD_H

#include <stdint.h>

#include "prims.h"

#include <linux/types.h>
#include <linux/bcs_mpi.h>

/*
 * This thread's variables are in the static TLS block, reached without a
 * call: the library is preloaded or linked, not opened later.
 */
#define BCSMPI_TLS __attribute__((tls_model("initial-exec")))

/* Non-zero while recording: read by every wrapper before anything else. */
extern int bcsmpi_on;
/* Non-zero from MPI_Init to MPI_Finalize if the process has its file. */
extern int bcsmpi_started;

/*
 * The generation of the job's control file (a constant 0 without one),
 * and the one last applied: a wrapper compares them, one load from the
 * mapping, and calls bcsmpi_control() when they differ.
 */
extern const __u32 *bcsmpi_generation;
extern __u32 bcsmpi_generation_seen;

/* Apply the control file, which changed. */
void bcsmpi_control(void);

/* Whether to record this call: the control file looked at first. */
static inline int bcsmpi_active(void)
{
	if (__builtin_expect(__atomic_load_n(bcsmpi_generation,
					     __ATOMIC_RELAXED) !=
			     __atomic_load_n(&bcsmpi_generation_seen,
					     __ATOMIC_RELAXED), 0))
		bcsmpi_control();
	return __atomic_load_n(&bcsmpi_on, __ATOMIC_RELAXED);
}

/* The records of the file (its mapping) while recording. */
extern struct bcs_mpi_prim *bcsmpi_prims;
/* Wrappers this thread is inside: more than 1 for a nested call. */
extern __thread unsigned int bcsmpi_depth BCSMPI_TLS;

/*
 * Calls of each polled primitive left before the next one timed.  Read
 * and written by all threads without a lock: a race changes which call
 * is timed, never a count.
 */
extern unsigned int bcsmpi_poll_left[];

/*
 * A call of the polled primitive @prim: 1 if it is not to be timed, and
 * then it is counted here (or not at all, from inside another wrapper);
 * 0 for the first call, and then one in the record's @sample, which
 * bcsmpi_enter() and bcsmpi_leave() time.
 */
static inline int bcsmpi_untimed(enum bcsmpi_prim prim)
{
	struct bcs_mpi_prim *p = bcsmpi_prims;
	unsigned int left;

	if (bcsmpi_depth)
		return 1;
	left = __atomic_load_n(&bcsmpi_poll_left[prim], __ATOMIC_RELAXED);
	if (left > 1) {
		__atomic_store_n(&bcsmpi_poll_left[prim], left - 1,
				 __ATOMIC_RELAXED);
		__atomic_fetch_add(&p[prim].calls, 1, __ATOMIC_RELAXED);
		return 1;
	}
	__atomic_store_n(&bcsmpi_poll_left[prim], p[prim].sample,
			 __ATOMIC_RELAXED);
	return 0;
}

/* CLOCK_MONOTONIC in ns. */
uint64_t bcsmpi_now(void);

/*
 * A call of a primitive begins: returns its start time, or 0 if it is a
 * call from inside another one (then bcsmpi_leave() only undoes this).
 */
uint64_t bcsmpi_enter(int blocking);

/*
 * The call that began at @t0 (bcsmpi_enter()) returns, with @bytes;
 * @caller is the wrapper's return address (its call site, kept only
 * with BCS_MPI_SITES=1).
 */
void bcsmpi_leave(enum bcsmpi_prim prim, int blocking, uint64_t t0,
		  uint64_t bytes, const void *caller);

/*
 * MPI_Pcontrol(@level, ...): 0 stops recording, any other level resumes
 * it; with regions on (BCS_MPI_REGIONS=1), @name (the variadic argument
 * of levels 1 and -1, NULL for the others) enters (1) or leaves (-1)
 * the region of that name.
 */
void bcsmpi_pcontrol(int level, const char *name);

/* Whether levels 1 and -1 of MPI_Pcontrol carry a region's name. */
extern int bcsmpi_regions;

/*
 * MPI_Init or MPI_Init_thread (@prim) returned successfully after
 * starting at @t0: read the environment, create the file and start
 * recording.  Any failure is said once on stderr and leaves recording
 * off; the application goes on.
 */
void bcsmpi_start(enum bcsmpi_prim prim, uint64_t t0, const char *mpi);

/*
 * MPI_Finalize is entered: the end of the measured time, and of
 * recording other calls; returns the time.
 */
uint64_t bcsmpi_finalize_enter(void);

/*
 * MPI_Finalize that began at @t0 returned: its row, the file marked
 * complete (whatever MPI_Finalize returned: the measured time ended at
 * its entry) and unmapped.
 */
void bcsmpi_finalize_leave(uint64_t t0);

/*
 * In MPI_Finalize, before PMPI_Finalize: with the report on
 * (BCS_MPI_REPORT), a collective of MPI_COMM_WORLD that brings every
 * rank's statistics to rank 0; there returns them (*@len bytes) for
 * bcsmpi_report_write(), elsewhere NULL.
 */
void *bcsmpi_report_gather(size_t *len);

/*
 * After PMPI_Finalize, rank 0: the report of the job written from the
 * statistics gathered, into JOB.report beside the ranks' files (created,
 * never replaced, never through a link); @data freed.
 */
void bcsmpi_report_write(void *data, size_t len);

#endif /* BCSMPI_RECORD_H */

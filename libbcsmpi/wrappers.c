// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: the MPI functions it interposes, each calling its PMPI_
 * twin.  While recording is off a wrapper costs the read of one flag;
 * a call of a polled primitive that is not timed, that and a count.
 * The wrappers of the table in prims.h are all alike; MPI_Init,
 * MPI_Init_thread and MPI_Finalize start and end the recording.
 *
 * BCSMPI_MPI names the implementation the library is built for
 * ("openmpi", "mpich"), written into each file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "prims.h"
#include "record.h"

/* Only the MPI functions are exported (the rest is built hidden). */
#define EXPORT __attribute__((visibility("default")))

#ifndef BCSMPI_MPI
#error "build with -DBCSMPI_MPI=\"openmpi\" or \"mpich\""
#endif

/* Bytes of @count elements of @type; 0 for a negative count. */
static uint64_t bcsmpi_bytes(int count, MPI_Datatype type)
{
	int size;

	if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
	    size <= 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

/* The bytes of @buf, or of the other side's (@alt...) if it is in place. */
static uint64_t bcsmpi_io_bytes(const void *buf, int count, MPI_Datatype type,
				int altcount, MPI_Datatype alttype)
{
	if (buf == MPI_IN_PLACE)
		return bcsmpi_bytes(altcount, alttype);
	return bcsmpi_bytes(count, type);
}

/*
 * The bytes of counts[0 .. n) elements of @type, n the size of @comm's
 * group, or with @remote, on an inter-communicator, of the remote group:
 * an all-to-all's counts name the processes of the other group, while a
 * reduce-scatter's name those of the group that receives, its own.
 */
static uint64_t bcsmpi_vbytes(const int counts[], MPI_Datatype type,
			      MPI_Comm comm, int remote)
{
	uint64_t sum = 0;
	int i, n, inter = 0;

	if (!counts)
		return 0;
	if (remote && PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
		return 0;
	if (inter ? PMPI_Comm_remote_size(comm, &n) != MPI_SUCCESS :
		    PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
		return 0;
	for (i = 0; i < n; i++)
		sum += bcsmpi_bytes(counts[i], type);
	return sum;
}

#define P(name, blocking, sized, params, args, bytes)			\
EXPORT int MPI_##name params							\
{									\
	uint64_t t0;							\
	int rc;								\
									\
	if (!bcsmpi_active() ||						\
	    ((blocking) == BCSMPI_POLL && bcsmpi_untimed(BCSMPI_##name))) \
		return PMPI_##name args;				\
	t0 = bcsmpi_enter((blocking) == 1);				\
	rc = PMPI_##name args;						\
	bcsmpi_leave(BCSMPI_##name, (blocking) == 1, t0,		\
		     (sized) && t0 && rc == MPI_SUCCESS ?		\
		     (uint64_t)(bytes) : 0,				\
		     __builtin_return_address(0));			\
	return rc;							\
}
BCSMPI_PRIMS
#define O(name, blocking, params, args) P(name, blocking, 0, params, args, 0)
BCSMPI_OTHERS
#undef O
#undef P

/* It does not return: counted at its entry, with no latency. */
EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
	uint64_t t0;

	if (bcsmpi_active()) {
		t0 = bcsmpi_enter(0);
		bcsmpi_leave(BCSMPI_Abort, 0, t0, 0,
			     __builtin_return_address(0));
	}
	return PMPI_Abort(comm, errorcode);
}

/*
 * Levels as mpiP's (0 stops recording, others resume it) and, with
 * BCS_MPI_REGIONS=1, IPM's regions: levels 1 and -1 then take a name.
 * Not counted; PMPI_Pcontrol is called too, for a tool under this one.
 */
EXPORT int MPI_Pcontrol(const int level, ...)
{
	const char *name = NULL;
	va_list ap;

	if (bcsmpi_regions && (level == 1 || level == -1)) {
		va_start(ap, level);
		name = va_arg(ap, const char *);
		va_end(ap);
	}
	bcsmpi_pcontrol(level, name);
	return name ? PMPI_Pcontrol(level, name) : PMPI_Pcontrol(level);
}

EXPORT int MPI_Init(int *argc, char ***argv)
{
	uint64_t t0 = bcsmpi_now();
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		bcsmpi_start(BCSMPI_Init, t0, BCSMPI_MPI);
	return rc;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	uint64_t t0 = bcsmpi_now();
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		bcsmpi_start(BCSMPI_Init_thread, t0, BCSMPI_MPI);
	return rc;
}

EXPORT int MPI_Finalize(void)
{
	int started = __atomic_load_n(&bcsmpi_started, __ATOMIC_RELAXED);
	uint64_t t0 = started ? bcsmpi_finalize_enter() : 0;
	size_t len;
	void *report = bcsmpi_report_gather(&len);
	int rc = PMPI_Finalize();

	if (started)
		bcsmpi_finalize_leave(t0);
	bcsmpi_report_write(report, len);
	return rc;
}

/*
 * Open MPI's Fortran bindings (mpif.h and "use mpi": mpi_send_; "use
 * mpi_f08": mpi_send_f08_) call PMPI_Send, not MPI_Send, so that the C
 * wrappers above never see them: these wrap the Fortran symbols of
 * gfortran's naming, each calling its pmpi_ twin of Open MPI's Fortran
 * libraries, found at the first call (dlsym(RTLD_NEXT)): the library
 * needs no Fortran library of its own, and C programs load none.
 * MPICH's Fortran bindings call the C MPI_ functions, but that those of
 * mpi_f08 without a buffer (MPI_Barrier, MPI_Wait..., MPI_Test...,
 * MPI_Probe, MPI_Comm_rank; MPI_Init, MPI_Finalize, MPI_Pcontrol) call
 * PMPI_: those are wrapped there, each calling its pmpir_ twin
 * (tests/run.sh checks both MPIs).
 *
 * Every Fortran argument is passed by reference, a pointer, and the
 * error code comes last (absent, NULL, in mpi_f08 when not given):
 *
 *   F(name, lower case name, arguments, blocking, bytes)
 *
 * bytes an expression of the arguments a0 .. a(n-1), the bytes of a
 * successful call as in the C table, but that the collectives of
 * varying counts and the reduce-scatter count no bytes from Fortran,
 * and MPI_IN_PLACE is not told apart (the sending side counted).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define FP1 void *a0
#define FP2 FP1, void *a1
#define FP3 FP2, void *a2
#define FP4 FP3, void *a3
#define FP5 FP4, void *a4
#define FP6 FP5, void *a5
#define FP7 FP6, void *a6
#define FP8 FP7, void *a7
#define FP9 FP8, void *a8
#define FP10 FP9, void *a9
#define FP11 FP10, void *a10
#define FP12 FP11, void *a11
#define FP13 FP12, void *a12
#define FA1 a0
#define FA2 FA1, a1
#define FA3 FA2, a2
#define FA4 FA3, a3
#define FA5 FA4, a4
#define FA6 FA5, a5
#define FA7 FA6, a6
#define FA8 FA7, a7
#define FA9 FA8, a8
#define FA10 FA9, a9
#define FA11 FA10, a10
#define FA12 FA11, a11
#define FA13 FA12, a12
#define FERR1 a0
#define FERR2 a1
#define FERR3 a2
#define FERR4 a3
#define FERR5 a4
#define FERR6 a5
#define FERR7 a6
#define FERR8 a7
#define FERR9 a8
#define FERR10 a9
#define FERR11 a10
#define FERR12 a11
#define FERR13 a12

#ifdef OPEN_MPI
/* Bytes of *@count elements of Fortran datatype *@type. */
static uint64_t fbytes(const void *count, const void *type)
{
	return bcsmpi_bytes(*(const MPI_Fint *)count,
			    PMPI_Type_f2c(*(const MPI_Fint *)type));
}
#endif

/* Open MPI's Fortran function @name, or the end with a message. */
static void *fsym(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "libbcsmpi: no %s in the MPI's Fortran "
			"libraries\n", name);
		abort();
	}
	return f;
}

/* The pointer to @sym, found once (a race finds the same twice). */
#define FWD(n, sym)							\
	static void (*fwd)(FP##n);					\
	void (*f)(FP##n) = __atomic_load_n(&fwd, __ATOMIC_RELAXED);	\
									\
	if (!f) {							\
		f = (void (*)(FP##n))fsym(sym);				\
		__atomic_store_n(&fwd, f, __ATOMIC_RELAXED);		\
	}

#define FBODY(name, n, sym, blocking, bytes)				\
{									\
	const MPI_Fint *ierr;						\
	uint64_t t0;							\
	FWD(n, sym)							\
	if (!bcsmpi_active() ||						\
	    ((blocking) == BCSMPI_POLL && bcsmpi_untimed(BCSMPI_##name))) { \
		f(FA##n);						\
		return;							\
	}								\
	t0 = bcsmpi_enter((blocking) == 1);				\
	f(FA##n);							\
	ierr = FERR##n;							\
	bcsmpi_leave(BCSMPI_##name, (blocking) == 1, t0,		\
		     t0 && (!ierr || *ierr == MPI_SUCCESS) ?		\
		     (uint64_t)(bytes) : 0,				\
		     __builtin_return_address(0));			\
}

#ifdef OPEN_MPI
#define F(name, lname, n, blocking, bytes)				\
EXPORT void mpi_##lname##_(FP##n);					\
EXPORT void mpi_##lname##_(FP##n)					\
FBODY(name, n, "pmpi_" #lname "_", blocking, bytes)			\
EXPORT void mpi_##lname##_f08_(FP##n);					\
EXPORT void mpi_##lname##_f08_(FP##n)					\
FBODY(name, n, "pmpi_" #lname "_f08_", blocking, bytes)
#else
/* MPICH: the mpi_f08 ones that call PMPI_, none with bytes. */
#define F(name, lname, n, blocking, bytes)				\
EXPORT void mpi_##lname##_f08_(FP##n);					\
EXPORT void mpi_##lname##_f08_(FP##n)					\
FBODY(name, n, "pmpir_" #lname "_f08_", blocking, 0)
#endif

/* The functions without a buffer: wrapped for both MPIs. */
#define FP BCSMPI_POLL
F(Probe, probe, 5, 1, 0)
F(Iprobe, iprobe, 6, FP, 0)
F(Wait, wait, 3, 1, 0)
F(Waitall, waitall, 4, 1, 0)
F(Waitany, waitany, 5, 1, 0)
F(Waitsome, waitsome, 6, 1, 0)
F(Test, test, 4, FP, 0)
F(Testall, testall, 5, FP, 0)
F(Testany, testany, 6, FP, 0)
F(Testsome, testsome, 6, FP, 0)
F(Barrier, barrier, 2, 1, 0)
F(Ibarrier, ibarrier, 3, 0, 0)
F(Comm_rank, comm_rank, 3, 0, 0)
F(Comm_size, comm_size, 3, 0, 0)
#ifdef OPEN_MPI
F(Send, send, 7, 1, fbytes(a1, a2))
F(Ssend, ssend, 7, 1, fbytes(a1, a2))
F(Bsend, bsend, 7, 1, fbytes(a1, a2))
F(Rsend, rsend, 7, 1, fbytes(a1, a2))
F(Recv, recv, 8, 1, fbytes(a1, a2))
F(Sendrecv, sendrecv, 13, 1, fbytes(a1, a2) + fbytes(a6, a7))
F(Isend, isend, 8, 0, fbytes(a1, a2))
F(Irecv, irecv, 8, 0, fbytes(a1, a2))
F(Bcast, bcast, 6, 1, fbytes(a1, a2))
F(Reduce, reduce, 8, 1, fbytes(a2, a3))
F(Allreduce, allreduce, 7, 1, fbytes(a2, a3))
F(Scan, scan, 7, 1, fbytes(a2, a3))
F(Reduce_scatter, reduce_scatter, 7, 1, 0)
F(Reduce_scatter_block, reduce_scatter_block, 7, 1, fbytes(a2, a3))
F(Gather, gather, 9, 1, fbytes(a1, a2))
F(Allgather, allgather, 8, 1, fbytes(a1, a2))
F(Scatter, scatter, 9, 1, fbytes(a4, a5))
F(Alltoall, alltoall, 8, 1, fbytes(a1, a2))
F(Gatherv, gatherv, 10, 1, fbytes(a1, a2))
F(Allgatherv, allgatherv, 9, 1, fbytes(a1, a2))
F(Scatterv, scatterv, 10, 1, fbytes(a5, a6))
F(Alltoallv, alltoallv, 10, 1, 0)
F(Ibcast, ibcast, 7, 0, fbytes(a1, a2))
F(Ireduce, ireduce, 9, 0, fbytes(a2, a3))
F(Iallreduce, iallreduce, 8, 0, fbytes(a2, a3))
F(Igather, igather, 10, 0, fbytes(a1, a2))
F(Iallgather, iallgather, 9, 0, fbytes(a1, a2))
F(Iscatter, iscatter, 10, 0, fbytes(a4, a5))
F(Ialltoall, ialltoall, 9, 0, fbytes(a1, a2))
#endif /* OPEN_MPI */
#undef FP

/* MPI_Init and MPI_Init_thread from Fortran: recording starts. */
#define FINIT(name, lname, n, sym)					\
EXPORT void mpi_##lname(FP##n);						\
EXPORT void mpi_##lname(FP##n)						\
{									\
	const MPI_Fint *ierr = FERR##n;					\
	uint64_t t0 = bcsmpi_now();					\
	int done = 0;							\
	FWD(n, sym)							\
	f(FA##n);							\
	if ((!ierr || *ierr == MPI_SUCCESS) &&				\
	    PMPI_Initialized(&done) == MPI_SUCCESS && done)		\
		bcsmpi_start(BCSMPI_##name, t0, BCSMPI_MPI);		\
}
#ifdef OPEN_MPI
FINIT(Init, init_, 1, "pmpi_init_")
FINIT(Init, init_f08_, 1, "pmpi_init_f08_")
FINIT(Init_thread, init_thread_, 3, "pmpi_init_thread_")
FINIT(Init_thread, init_thread_f08_, 3, "pmpi_init_thread_f08_")
#else
FINIT(Init, init_f08_, 1, "pmpir_init_f08_")
FINIT(Init_thread, init_thread_f08_, 3, "pmpir_init_thread_f08_")
#endif

/* MPI_Finalize from Fortran: as MPI_Finalize. */
#define FFINALIZE(lname, sym)						\
EXPORT void mpi_##lname(FP1);						\
EXPORT void mpi_##lname(FP1)						\
{									\
	int started = __atomic_load_n(&bcsmpi_started, __ATOMIC_RELAXED); \
	uint64_t t0 = started ? bcsmpi_finalize_enter() : 0;		\
	size_t len;							\
	void *report = bcsmpi_report_gather(&len);			\
	FWD(1, sym)							\
	f(FA1);								\
	if (started)							\
		bcsmpi_finalize_leave(t0);				\
	bcsmpi_report_write(report, len);				\
}
#ifdef OPEN_MPI
FFINALIZE(finalize_, "pmpi_finalize_")
FFINALIZE(finalize_f08_, "pmpi_finalize_f08_")
#else
FFINALIZE(finalize_f08_, "pmpir_finalize_f08_")
#endif

/* MPI_Pcontrol from Fortran: its levels (a region needs C's name). */
#define FPCONTROL(lname, sym)						\
EXPORT void mpi_##lname(FP1);						\
EXPORT void mpi_##lname(FP1)						\
{									\
	FWD(1, sym)							\
	bcsmpi_pcontrol(*(const MPI_Fint *)a0, NULL);			\
	f(FA1);								\
}
#ifdef OPEN_MPI
FPCONTROL(pcontrol_, "pmpi_pcontrol_")
FPCONTROL(pcontrol_f08_, "pmpi_pcontrol_f08_")
#else
FPCONTROL(pcontrol_f08_, "pmpir_pcontrol_f08_")
#endif

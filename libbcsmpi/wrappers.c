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

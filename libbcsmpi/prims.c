// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: the names and kinds of the records, from the table of
 * prims.h.
 */
#include <linux/bcs_mpi.h>

#include "prims.h"

#define KIND(blocking, sized)						\
	(((blocking) == 1 ? BCS_MPI_PRIM_BLOCKING : 0) |		\
	 ((blocking) == BCSMPI_POLL ? BCS_MPI_PRIM_POLL : 0) |		\
	 ((sized) ? BCS_MPI_PRIM_SIZED : 0))

const struct bcsmpi_prim_info bcsmpi_prim_info[BCSMPI_NR_PRIMS] = {
	[BCSMPI_COMP] = { "Comp Granularity", 0 },
	[BCSMPI_COMM] = { "Comm Overhead", 0 },
	[BCSMPI_Init] = { "MPI_Init", 0 },
	[BCSMPI_Init_thread] = { "MPI_Init_thread", 0 },
	[BCSMPI_Finalize] = { "MPI_Finalize", 0 },
/*
 * Counted per slice (struct bcs_mpi_slice): the table's point-to-point
 * primitives (before MPI_Barrier) and its collectives (from it on), but
 * the polled ones (MPI_Test..., MPI_Iprobe), of which not every call is
 * timed.
 */
#define CLASS(name, blocking)						\
	((blocking) == BCSMPI_POLL ? 0 :				\
	 BCSMPI_##name < BCSMPI_Barrier ? BCS_MPI_PRIM_P2P :		\
	 BCS_MPI_PRIM_COLL)

#define P(name, blocking, sized, ...)					\
	[BCSMPI_##name] = { "MPI_" #name, KIND(blocking, sized) |	\
			    CLASS(name, blocking) },
	BCSMPI_PRIMS
#undef P
	[BCSMPI_Abort] = { "MPI_Abort", BCS_MPI_PRIM_OTHER },
#define O(name, blocking, ...)						\
	[BCSMPI_##name] = { "MPI_" #name,				\
			    KIND(blocking, 0) | BCS_MPI_PRIM_OTHER },
	BCSMPI_OTHERS
#undef O
};

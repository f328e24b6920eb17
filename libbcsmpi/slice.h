/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcsmpi: the MPI calls of this process per global slice of bcs.ko
 * (struct bcs_mpi_slices of <linux/bcs_mpi.h>), the slice learnt from
 * /dev/bcsstat, mapped read-only: one load of its head per call, the
 * newest record read only when the head moved.
 */
#ifndef BCSMPI_SLICE_H
#define BCSMPI_SLICE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bcs.h>
#include <linux/bcs_mpi.h>

#include "prims.h"

/* Entries of the rings by default and at most (BCS_MPI_SLICES, _CALLS). */
#define BCSMPI_SLICES_DEFAULT	1024
#define BCSMPI_SLICES_MAX	65536
#define BCSMPI_CALLS_DEFAULT	4096
#define BCSMPI_CALLS_MAX	(1U << 20)
/* A stand-in file of BCS_MPI_STATDEV is no larger than this. */
#define BCSMPI_STATDEV_MAX	(256U << 20)

/*
 * The sizes of the rings from BCS_MPI_SLICES and BCS_MPI_CALLS (0 .. the
 * most; a bad value said on stderr and the default taken): the bytes of
 * the table, 0 for none (BCS_MPI_SLICES=0).
 */
size_t bcsmpi_slices_bytes(unsigned int *nr_slices, unsigned int *nr_calls);

/*
 * Lay out the table at @t (zeroed, in the file) and map /dev/bcsstat (or
 * BCS_MPI_STATDEV's file, a testing aid); without it, said in @t->flags
 * and nothing counted.  Never fails the job.
 */
void bcsmpi_slices_start(struct bcs_mpi_slices *t, unsigned int nr_slices,
			 unsigned int nr_calls);

/* Stop counting and unmap /dev/bcsstat (MPI_Finalize, or a fork). */
void bcsmpi_slices_stop(int child);

/* Non-NULL while calls are counted per slice. */
extern const struct bcs_stat_header *bcsmpi_stat;

void bcsmpi_slice_call(enum bcsmpi_prim prim, uint64_t t0, uint64_t t,
		       uint64_t bytes);

/* A call of @prim from @t0 to @t returned: its slice's share. */
static inline void bcsmpi_slice_note(enum bcsmpi_prim prim, uint64_t t0,
				     uint64_t t, uint64_t bytes)
{
	if (__atomic_load_n(&bcsmpi_stat, __ATOMIC_RELAXED))
		bcsmpi_slice_call(prim, t0, t, bytes);
}

#endif /* BCSMPI_SLICE_H */

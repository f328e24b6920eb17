/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcsmpi: the text report of a job, like mpiP's, from the statistics
 * of its ranks (the files, or what the ranks sent rank 0 at
 * MPI_Finalize): the per-rank MPI time, the primitives over all ranks,
 * the regions of MPI_Pcontrol and the call sites.  Needs no MPI; the
 * library writes it at the end of a job, bcsstat mpi --report prints it.
 */
#ifndef BCSMPI_REPORT_H
#define BCSMPI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "mpifile.h"

/* Call sites a report lists at most (the ones of most time first). */
#define BCSMPI_REPORT_SITES	64

/* The time of rank @st inside MPI from MPI_Init to MPI_Finalize. */
uint64_t bcsmpi_mpi_time(const struct bcs_mpi_stats *st);

/*
 * Its time from MPI_Init's return to MPI_Finalize's entry, less the
 * pauses of MPI_Pcontrol(0); 0 if it did not reach MPI_Finalize.
 */
uint64_t bcsmpi_app_time(const struct bcs_mpi_stats *st);

/* The per-rank table of the @n ranks @st: MPI time %, calls, bytes. */
void bcsmpi_report_ranks(FILE *out, const struct bcs_mpi_stats *st, int n);

/* The regions of MPI_Pcontrol of the @n ranks @st, if any entered. */
void bcsmpi_report_regions(FILE *out, const struct bcs_mpi_stats *st, int n);

/*
 * The call sites of the @n ranks @st, merged by place, the
 * BCSMPI_REPORT_SITES of most time; with @resolve, each resolved to
 * function and file:line by addr2line (binutils) when its object has
 * debug information.
 */
void bcsmpi_report_sites(FILE *out, const struct bcs_mpi_stats *st, int n,
			 int resolve);

/* The whole report of the @n ranks @st. */
void bcsmpi_report(FILE *out, const struct bcs_mpi_stats *st, int n,
		   int resolve);

#endif /* BCSMPI_REPORT_H */

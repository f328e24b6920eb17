// SPDX-License-Identifier: GPL-2.0
/*
 * The time of one MPI call in a tight loop, for bench/mpi_callcost.sh:
 * N calls of MPI_Test on a null request (a polled primitive, of which
 * libbcsmpi times one call in BCS_MPI_POLL) and N of MPI_Comm_rank (a
 * cheap function it times at every call).  Prints
 *
 *   test_ns T rank_ns R
 *
 * the nanoseconds per call of each loop, one process (mpirun -np 1).
 *
 *   mpi_callcost [N]        N defaults to 10,000,000
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	MPI_Request null = MPI_REQUEST_NULL;
	long i, n = argc > 1 ? atol(argv[1]) : 10000000;
	int flag, rank, sum = 0;
	double t0, t1, t2;

	if (n <= 0) {
		fprintf(stderr, "mpi_callcost: N must be positive\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		MPI_Test(&null, &flag, MPI_STATUS_IGNORE);
		sum += flag;
	}
	t1 = now_ns();
	for (i = 0; i < n; i++) {
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		sum += rank;
	}
	t2 = now_ns();
	MPI_Finalize();
	if (sum != n) {
		fprintf(stderr, "mpi_callcost: MPI_Test said not done\n");
		return 1;
	}
	printf("test_ns %.2f rank_ns %.2f\n", (t1 - t0) / n, (t2 - t1) / n);
	return 0;
}

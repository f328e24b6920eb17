// SPDX-License-Identifier: GPL-2.0
/*
 * The known pattern of the libbcsmpi tests: NR_ALLREDUCE MPI_Allreduce of
 * 8 doubles, NR_PAIRS MPI_Isend/MPI_Irecv pairs of 1 MiB around a ring
 * (each pair completed by one MPI_Waitall), NR_BARRIER MPI_Barrier.
 *
 *   pattern [KILL_RANK]
 *
 * With KILL_RANK, that rank sends itself SIGKILL after its
 * NR_ALLREDUCE / 2 Allreduce calls (it has made exactly those, and one
 * MPI_Init); the others wait in the next Allreduce until mpirun ends them.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define NR_ALLREDUCE	1000
#define NR_PAIRS	200
#define NR_BARRIER	50
#define MSG_BYTES	(1 << 20)

int main(int argc, char **argv)
{
	double in[8], out[8];
	MPI_Request req[2];
	MPI_Status st[2];
	char *sbuf, *rbuf;
	int rank, size, i, kill_rank = -1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		kill_rank = atoi(argv[1]);
	for (i = 0; i < 8; i++)
		in[i] = rank + i;
	for (i = 0; i < NR_ALLREDUCE; i++) {
		if (rank == kill_rank && i == NR_ALLREDUCE / 2)
			raise(SIGKILL);
		MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	sbuf = calloc(1, MSG_BYTES);
	rbuf = calloc(1, MSG_BYTES);
	if (!sbuf || !rbuf) {
		fprintf(stderr, "pattern: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (i = 0; i < NR_PAIRS; i++) {
		MPI_Irecv(rbuf, MSG_BYTES, MPI_CHAR, (rank + size - 1) % size,
			  0, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(sbuf, MSG_BYTES, MPI_CHAR, (rank + 1) % size, 0,
			  MPI_COMM_WORLD, &req[1]);
		MPI_Waitall(2, req, st);
	}
	for (i = 0; i < NR_BARRIER; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return out[0] == size * (size - 1) / 2.0 ? 0 : 1;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The known pattern of the libbcsmpi tests: NR_ALLREDUCE MPI_Allreduce of
 * 8 doubles, NR_PAIRS MPI_Isend/MPI_Irecv pairs of 1 MiB around a ring
 * (each pair completed by one MPI_Waitall), NR_BARRIER MPI_Barrier,
 * NR_TEST MPI_Test of a null request (a polled primitive).
 *
 *   pattern [KILL_RANK]
 *   pattern abort
 *   pattern phases DIR
 *   pattern imbalance R
 *
 * With KILL_RANK, that rank sends itself SIGKILL after its
 * NR_ALLREDUCE / 2 Allreduce calls (it has made exactly those, and one
 * MPI_Init); the others wait in the next Allreduce until mpirun ends them.
 * With "abort", rank 1 calls MPI_Abort there instead.  The whole pattern
 * ends with an MPI_Comm_dup and MPI_Comm_free of MPI_COMM_WORLD and an
 * MPI_Wtime (not measured), besides the MPI_Comm_rank and MPI_Comm_size
 * at its start.
 *
 * With "imbalance R", instead: NR_IMBALANCE MPI_Allreduce of 8 doubles,
 * before each of which rank R computes for IMBALANCE_MS more than the
 * others (which compute nothing): the others wait for it in every call.
 *
 * With "intercomm", instead: one MPI_Alltoallv over an inter-communicator
 * between rank 0 and the others, ALLTOALLV_BYTES to each process of the
 * other group.
 * With "regions", instead (BCS_MPI_REGIONS=1): 10 MPI_Allreduce in
 * region "outer", within it 5 MPI_Bcast in region "inner" (nested), then
 * MPI_Pcontrol(0), 7 MPI_Barrier (not recorded), MPI_Pcontrol(2), 3
 * MPI_Barrier in region "bad name!" (kept as "bad_name_").
 * With "phases DIR", instead: NR_PHASES phases of PHASE_CALLS
 * MPI_Allreduce; after each but the last, rank 0 creates DIR/doneN and
 * every rank waits (without MPI calls) for DIR/goN, so that the test can
 * change the job's selection between two phases.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#define NR_ALLREDUCE	1000
#define NR_PAIRS	200
#define NR_BARRIER	50
#define NR_TEST		100
#define MSG_BYTES	(1 << 20)
#define NR_PHASES	3
#define PHASE_CALLS	100
#define WAIT_S		60	/* for a goN file at most */
#define NR_IMBALANCE	50
#define IMBALANCE_MS	4

/* DIR/NAMEN exists. */
static int there(const char *dir, const char *name, int n)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s%d", dir, name, n);
	return !access(p, F_OK);
}

static int phases(const char *dir, int rank)
{
	struct timespec ms = { 0, 10 * 1000 * 1000 };
	double in = rank, out;
	char p[PATH_MAX];
	int k, i, fd;

	for (k = 1; k <= NR_PHASES; k++) {
		for (i = 0; i < PHASE_CALLS; i++)
			MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM,
				      MPI_COMM_WORLD);
		if (k == NR_PHASES)
			break;
		if (!rank) {
			snprintf(p, sizeof(p), "%s/done%d", dir, k);
			fd = open(p, O_WRONLY | O_CREAT, 0644);
			if (fd >= 0)
				close(fd);
		}
		for (i = 0; i < WAIT_S * 100 && !there(dir, "go", k); i++)
			nanosleep(&ms, NULL);
		if (!there(dir, "go", k)) {
			fprintf(stderr, "pattern: no %s/go%d\n", dir, k);
			return 1;
		}
	}
	return 0;
}

static volatile double sink = 1;

/* Compute (not sleep: the CPU is busy) for @ms milliseconds. */
static void compute(int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			sink = sink * 1.000001 + 1e-9;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static int regions(void)
{
	double in[8] = { 1 }, out[8];
	int i;

	MPI_Pcontrol(1, "outer");
	for (i = 0; i < 10; i++)
		MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Pcontrol(1, "inner");
	for (i = 0; i < 5; i++)
		MPI_Bcast(in, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Pcontrol(-1, "inner");
	MPI_Pcontrol(-1, "outer");
	MPI_Pcontrol(0);
	for (i = 0; i < 7; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(2);
	MPI_Pcontrol(1, "bad name!");
	for (i = 0; i < 3; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(-1, "bad name!");
	return 0;
}

static int imbalance(int slow, int rank, int size)
{
	double in[8], out[8];
	int i, k;

	for (k = 0; k < 8; k++)
		in[k] = rank;
	for (i = 0; i < NR_IMBALANCE; i++) {
		if (rank == slow)
			compute(IMBALANCE_MS);
		MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	return out[0] == size * (size - 1) / 2.0 ? 0 : 1;
}

/*
 * An MPI_Alltoallv of ALLTOALLV_BYTES to each process of the other group
 * of an inter-communicator between rank 0 and the others: rank 0 sends
 * (size - 1) times as many bytes as each of the others.
 */
#define ALLTOALLV_BYTES	1000

static int intercomm(int rank, int size)
{
	MPI_Comm local, inter;
	int *counts, *displs, peers, i, rc;
	char *sbuf, *rbuf;

	if (size < 2)
		return 1;
	MPI_Comm_split(MPI_COMM_WORLD, rank ? 1 : 0, rank, &local);
	MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank ? 0 : 1, 7,
			     &inter);
	MPI_Comm_remote_size(inter, &peers);
	counts = calloc((size_t)peers, sizeof(*counts));
	displs = calloc((size_t)peers, sizeof(*displs));
	sbuf = calloc((size_t)peers, ALLTOALLV_BYTES);
	rbuf = calloc((size_t)peers, ALLTOALLV_BYTES);
	if (!counts || !displs || !sbuf || !rbuf)
		return 1;
	for (i = 0; i < peers; i++) {
		counts[i] = ALLTOALLV_BYTES;
		displs[i] = i * ALLTOALLV_BYTES;
	}
	rc = MPI_Alltoallv(sbuf, counts, displs, MPI_CHAR, rbuf, counts,
			   displs, MPI_CHAR, inter) != MPI_SUCCESS;
	free(counts);
	free(displs);
	free(sbuf);
	free(rbuf);
	MPI_Comm_free(&inter);
	MPI_Comm_free(&local);
	return rc;
}

int main(int argc, char **argv)
{
	double in[8], out[8];
	MPI_Request req[2], null = MPI_REQUEST_NULL;
	MPI_Status st[2];
	char *sbuf, *rbuf;
	int rank, size, i, flag, tested = 0, kill_rank = -1, abort_rank = -1;
	volatile double wtime;
	MPI_Comm dup;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 2 && !strcmp(argv[1], "phases")) {
		i = phases(argv[2], rank);
		MPI_Finalize();
		return i;
	}
	if (argc > 1 && !strcmp(argv[1], "intercomm")) {
		i = intercomm(rank, size);
		MPI_Finalize();
		return i;
	}
	if (argc > 1 && !strcmp(argv[1], "regions")) {
		i = regions();
		MPI_Finalize();
		return i;
	}
	if (argc > 2 && !strcmp(argv[1], "imbalance")) {
		i = imbalance(atoi(argv[2]), rank, size);
		MPI_Finalize();
		return i;
	}
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort_rank = 1;
	else if (argc > 1)
		kill_rank = atoi(argv[1]);
	for (i = 0; i < 8; i++)
		in[i] = rank + i;
	for (i = 0; i < NR_ALLREDUCE; i++) {
		if (rank == kill_rank && i == NR_ALLREDUCE / 2)
			raise(SIGKILL);
		if (rank == abort_rank && i == NR_ALLREDUCE / 2)
			MPI_Abort(MPI_COMM_WORLD, 3);
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
	for (i = 0; i < NR_TEST; i++) {
		MPI_Test(&null, &flag, MPI_STATUS_IGNORE);
		tested += flag;
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_free(&dup);
	wtime = MPI_Wtime();
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return out[0] == size * (size - 1) / 2.0 && wtime >= 0 &&
	       tested == NR_TEST ? 0 : 1;
}

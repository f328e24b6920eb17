// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_barrier: a bulk-synchronous MPI program, the kind of job gang
 * scheduling is for, and the MPI counterpart of barrier.c.  Every rank
 * repeats: a fixed amount of computation, then an MPI_Allreduce that
 * doubles as a barrier.  A rank descheduled on its node holds up all the
 * others, so the run time shows how well the ranks are co-scheduled.
 *
 *   mpi_barrier [--iters K] [--seconds S] [--work N] [--tag TEXT] [--go FILE]
 *               [--stop FILE]
 *
 * --work is in thousands of loop iterations, not a time, so that a
 * descheduled rank takes longer.  MPI libraries poll while they wait, as a
 * spinning barrier.c rank does.  The run ends after K iterations (default
 * 200) or, with --seconds, once rank 0 has run S seconds: its decision
 * travels in the same Allreduce, so every rank stops after the same
 * iteration.
 *
 * With --go, rank 0 waits after MPI_Init until FILE exists (at most ten
 * minutes) before the run and its clock start: a test that launches two
 * jobs lets both through MPI_Init first, so that they then run side by
 * side for the same S seconds however long each launch took.
 *
 * With --stop, the run also ends once FILE exists (rank 0 looks before
 * each Allreduce): a test that must look at the job while it runs stops
 * it when it has looked, however long that took.
 *
 * The program checks itself: every Allreduce result is compared with the
 * value it must have, and any mismatch makes every rank exit 1.  Rank 0
 * prints "mpi_barrier: started size N" once every rank is through
 * MPI_Init, and once all ranks are done:
 *
 *   mpi_barrier: size N iters K work W elapsed_s S check ok|FAILED [tag T]
 *   rank R host H pid P threads T        (one line per rank)
 *
 * "pid" is the rank's process id on its own host and "threads" the number
 * of threads it had when it finished, so that a test can match the ranks
 * against what bcs saw on each node.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <getopt.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "work.h"

#define HOST_LEN	64

struct rank_info {
	char host[HOST_LEN];
	int32_t pid;
	int32_t threads;
};

/* Threads of this process now: the entries of /proc/self/task. */
static int count_threads(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static unsigned long parse_ulong(const char *s, const char *what)
{
	unsigned long v;
	char *end;

	v = strtoul(s, &end, 10);
	if (!*s || *end || *s == '-') {
		fprintf(stderr, "mpi_barrier: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

#define GO_WAIT_S 600

/* Wait until @path exists, polling, for at most @max_s seconds. */
static void wait_for_file(const char *path, unsigned int max_s)
{
	unsigned int i;

	for (i = 0; i < max_s * 10; i++) {
		if (!access(path, F_OK))
			return;
		usleep(100000);
	}
	fprintf(stderr, "mpi_barrier: no %s after %u s, starting anyway\n",
		path, max_s);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mpi_barrier [--iters K] [--seconds S] [--work N] [--tag TEXT] [--go FILE] [--stop FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 's' },
		{ "work", required_argument, NULL, 'w' },
		{ "tag", required_argument, NULL, 't' },
		{ "go", required_argument, NULL, 'g' },
		{ "stop", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long iters = 200, work = 200, seconds = 0, it;
	struct rank_info me = { 0 }, *all = NULL;
	const char *tag = NULL, *go = NULL, *stop_file = NULL;
	int rank, size, c, bad = 0, any_bad, i, stop = 0, iters_given = 0;
	double t0, elapsed;

	/* MPI_Init may take arguments of its own: parse ours after it. */
	if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		fprintf(stderr, "mpi_barrier: MPI_Init failed\n");
		return 1;
	}
	while ((c = getopt_long(argc, argv, "i:s:w:t:g:x:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			iters = parse_ulong(optarg, "--iters");
			iters_given = 1;
			break;
		case 's':
			seconds = parse_ulong(optarg, "--seconds");
			break;
		case 'w':
			work = parse_ulong(optarg, "--work");
			break;
		case 't':
			tag = optarg;
			break;
		case 'g':
			go = optarg;
			break;
		case 'x':
			stop_file = optarg;
			break;
		default:
			usage();
		}
	}
	/* --seconds or --stop alone: no count of iterations. */
	if ((seconds || stop_file) && !iters_given)
		iters = ~0UL;
	if (optind != argc || !iters)
		usage();

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	MPI_Barrier(MPI_COMM_WORLD);
	if (!rank) {
		printf("mpi_barrier: started size %d\n", size);
		fflush(stdout);
		if (go)
			wait_for_file(go, GO_WAIT_S);
	}
	/* The other ranks wait here for rank 0's go. */
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (it = 0; it < iters && !stop; it++) {
		/*
		 * Each rank adds rank + it + 1, so the sum is known; rank 0
		 * adds its decision to stop as well.
		 */
		long long v[2] = { rank + it + 1, 0 }, sum[2] = { 0, 0 };
		long long want = (long long)size * (size - 1) / 2 +
				 (long long)size * (it + 1);

		bench_work(work);
		if (!rank && seconds && MPI_Wtime() - t0 >= seconds)
			v[1] = 1;
		if (!rank && stop_file && !access(stop_file, F_OK))
			v[1] = 1;
		MPI_Allreduce(v, sum, 2, MPI_LONG_LONG, MPI_SUM,
			      MPI_COMM_WORLD);
		if (sum[0] != want && !bad) {
			fprintf(stderr,
				"mpi_barrier: rank %d iteration %lu: sum %lld, not %lld\n",
				rank, it, sum[0], want);
			bad = 1;
		}
		stop = sum[1] != 0;
	}
	iters = it;
	elapsed = MPI_Wtime() - t0;

	MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (gethostname(me.host, sizeof(me.host) - 1))
		strcpy(me.host, "?");
	me.pid = getpid();
	me.threads = count_threads();
	if (!rank) {
		all = calloc(size, sizeof(*all));
		if (!all)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Gather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, 0,
		   MPI_COMM_WORLD);
	if (!rank) {
		printf("mpi_barrier: size %d iters %lu work %lu elapsed_s %.3f check %s",
		       size, iters, work, elapsed, any_bad ? "FAILED" : "ok");
		if (tag)
			printf(" tag %s", tag);
		printf("\n");
		for (i = 0; i < size; i++)
			printf("rank %d host %s pid %d threads %d\n", i,
			       all[i].host, all[i].pid, all[i].threads);
		fflush(stdout);
		free(all);
	}
	MPI_Finalize();
	return any_bad ? 1 : 0;
}

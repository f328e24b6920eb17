// SPDX-License-Identifier: GPL-2.0
/*
 * The per-slice counts of libbcsmpi under a stand-in of /dev/bcsstat
 * (BCS_MPI_STATDEV, tests/run.sh):
 *
 *   slices-MPI --make FILE   write FILE, a ring of 8 records, none yet
 *   slices-MPI --tick FILE US  without MPI: make a new record of the
 *                            next slice every US microseconds until
 *                            killed (bench/mpi_overhead.sh's stand-in of
 *                            a running bcs.ko)
 *   slices-MPI FILE          (under mpirun, the library preloaded) in
 *                            each phase k of PHASES, rank 0 makes slice
 *                            slice[k] the newest record, with the window
 *                            of the phase, then every rank makes k + 1
 *                            MPI_Sendrecv and 2k + 1 MPI_Allreduce
 *
 * The ranks wait for each other with PMPI_Barrier, which the library
 * does not see, so that each phase's calls are all of its slice.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include <linux/bcs.h>

#define NR_RECORDS	8

static const struct {
	unsigned long long slice, from, to;
	unsigned int state;
} phases[] = {
	{ 100, 0, 0, BCS_WINDOW_NONE },
	{ 101, 0, 0, BCS_WINDOW_NONE },
	{ 103, 0, 0, BCS_WINDOW_NONE },
	{ 104, 105, 106, BCS_WINDOW_ARMED },
	{ 105, 105, 106, BCS_WINDOW_CAPTURING },
	{ 106, 105, 106, BCS_WINDOW_CAPTURING },
	{ 107, 105, 106, BCS_WINDOW_DONE },
};

static void put(int fd, const void *v, size_t len, size_t off)
{
	if (pwrite(fd, v, len, (off_t)off) != (ssize_t)len) {
		perror("pwrite");
		exit(1);
	}
}

static int make(const char *path)
{
	struct bcs_stat_header h = {
		.magic = BCS_STAT_MAGIC,
		.version = BCS_STAT_VERSION,
		.header_size = sizeof(h),
		.record_size = sizeof(struct bcs_slice_record),
		.nr_records = NR_RECORDS,
		.records_offset = 4096,
	};
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || ftruncate(fd, 4096 + NR_RECORDS *
				sizeof(struct bcs_slice_record))) {
		perror(path);
		return 1;
	}
	put(fd, &h, sizeof(h), 0);
	return close(fd) ? 1 : 0;
}

/* Record @seq of slice @slice, then the head. */
static void record(int fd, unsigned long long seq, unsigned long long slice)
{
	struct bcs_slice_record r;
	size_t at = 4096 + (seq % NR_RECORDS) * sizeof(r);
	unsigned long long head = seq + 1;

	memset(&r, 0, sizeof(r));
	r.seq = seq;
	r.slice = slice;
	put(fd, &r, sizeof(r), at);
	put(fd, &head, 8, offsetof(struct bcs_stat_header, head));
}

static int tick(const char *path, const char *us)
{
	unsigned long long seq = 0, n = strtoull(us, NULL, 10);
	struct timespec ts = { n / 1000000, n % 1000000 * 1000 };
	int fd;

	if (make(path))
		return 1;
	fd = open(path, O_RDWR);
	if (fd < 0 || !n) {
		perror(path);
		return 1;
	}
	for (;; seq++) {
		record(fd, seq, seq + 1);
		nanosleep(&ts, NULL);
	}
}

/* The window of phase @k, then its record @seq and the head. */
static void advance(int fd, unsigned long long seq, int k)
{
	unsigned int state = phases[k].state;

	put(fd, &phases[k].from, 8, offsetof(struct bcs_stat_header,
					     window_from));
	put(fd, &phases[k].to, 8, offsetof(struct bcs_stat_header, window_to));
	put(fd, &state, 4, offsetof(struct bcs_stat_header, window_state));
	record(fd, seq, phases[k].slice);
}

int main(int argc, char **argv)
{
	int me, n, k, i, fd = -1, x = 1, y;

	if (argc == 3 && !strcmp(argv[1], "--make"))
		return make(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "--tick"))
		return tick(argv[2], argv[3]);
	if (argc != 2) {
		fprintf(stderr, "usage: slices --make FILE | --tick FILE US | "
			"slices FILE\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (!me) {
		fd = open(argv[1], O_RDWR);
		if (fd < 0) {
			perror(argv[1]);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	for (k = 0; k < (int)(sizeof(phases) / sizeof(phases[0])); k++) {
		PMPI_Barrier(MPI_COMM_WORLD);
		if (!me)
			advance(fd, (unsigned long long)k, k);
		PMPI_Barrier(MPI_COMM_WORLD);
		for (i = 0; i < k + 1; i++)
			MPI_Sendrecv(&x, 1, MPI_INT, (me + 1) % n, 0, &y, 1,
				     MPI_INT, (me + n - 1) % n, 0,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (i = 0; i < 2 * k + 1; i++)
			MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM,
				      MPI_COMM_WORLD);
	}
	PMPI_Barrier(MPI_COMM_WORLD);
	if (fd >= 0)
		close(fd);
	MPI_Finalize();
	return 0;
}

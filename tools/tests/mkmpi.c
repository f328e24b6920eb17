// SPDX-License-Identifier: GPL-2.0
/*
 * mkmpi DIR JOB HOST RANK CALLS: a synthetic MPI statistics file of one
 * rank, as libbcsmpi writes it (<linux/bcs_mpi.h>), complete, in
 * DIR/JOB.HOST.RANK.PID.bcsmpi (PID 1000 + RANK), for tests that need no
 * MPI: the two process records with their latency histograms (resolution
 * 0, empty), MPI_Allreduce called CALLS times (latencies 500, 1000 and 2000 ns
 * in turn, 64 bytes each), MPI_Barrier 5 times (the rank's own total,
 * 1000 * (RANK + 1) ns), and MPI_Send never.  Computation plus
 * communication is exactly MPI_Init to MPI_Finalize.
 *
 * mkmpi DIR JOB HOST RANK CALLS SLICE N: also a ring of slices holding N
 * slices from SLICE on (<linux/bcs_mpi.h> version 4): slice SLICE + i
 * with i + 1 point-to-point calls (1000 * (i + 1) ns) and 2 collectives
 * (3000 ns), 64 bytes, its first call at (1000 + 10 * i) ms + 600 ns
 * and its last return 5 us later; and two calls in the window of its
 * first slice, MPI_Allreduce and MPI_Send.
 *
 * With $MKMPI_HIST set, MPI_Allreduce has its latency and size
 * histograms too, holding its calls.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs_hist.h>
#include <linux/bcs_mpi.h>

#define NR_PRIMS	5
#define SUB_BITS	0

static void prim(struct bcs_mpi_prim *p, const char *name, uint32_t flags,
		 uint64_t calls, uint64_t total, uint64_t min, uint64_t max,
		 uint64_t bytes)
{
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->flags = flags;
	p->sample = 1;
	p->calls = calls;
	p->timed = calls;
	p->total_ns = total;
	p->min_ns = calls ? min : 0;
	p->max_ns = calls ? max : 0;
	p->bytes = bytes;
}

/* An empty histogram at @off of @file. */
static void hist(char *file, uint64_t off)
{
	struct bcs_hist_header *h = (void *)(file + off);
	struct bcs_hist_bucket *b = (void *)(h + 1);
	uint32_t i;

	h->magic = BCS_HIST_MAGIC;
	h->version = BCS_HIST_VERSION;
	h->sub_bits = SUB_BITS;
	h->nr_buckets = bcs_hist_buckets(SUB_BITS);
	for (i = 0; i < h->nr_buckets; i++)
		b[i].index = i;
}

/* Value @v counted @n times more in the histogram at @off of @file. */
static void hist_add(char *file, uint64_t off, uint64_t v, uint64_t n)
{
	struct bcs_hist_header *h = (void *)(file + off);
	struct bcs_hist_bucket *b = (void *)(h + 1);

	if (!n)
		return;
	if (!h->count || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count += n;
	h->sum += v * n;
	b[bcs_hist_index(v, SUB_BITS)].count += n;
}

static void slices(char *file, size_t off, uint64_t slice0, unsigned long n)
{
	struct bcs_mpi_slices *t = (void *)(file + off);
	struct bcs_mpi_slice *e = (void *)(t + 1);
	struct bcs_mpi_call *c = (void *)(e + n);
	unsigned long i;

	t->flags = BCS_MPI_SLICES_ON | BCS_MPI_SLICES_WINDOW;
	t->nr_slices = (uint32_t)n;
	t->slice_size = sizeof(*e);
	t->nr_calls = 2;
	t->call_size = sizeof(*c);
	t->slice_head = n;
	t->call_head = 2;
	t->window_from = t->window_to = slice0;
	for (i = 0; i < n; i++) {
		e[i].slice = slice0 + i;
		e[i].p2p_calls = i + 1;
		e[i].coll_calls = 2;
		e[i].p2p_ns = 1000 * (i + 1);
		e[i].coll_ns = 3000;
		e[i].coll_bytes = 64;
		e[i].first_ns = (1000 + 10 * i) * 1000000ULL + 600;
		e[i].last_ns = e[i].first_ns + 5000;
	}
	c[0].slice = c[1].slice = slice0;
	c[0].start_ns = e[0].first_ns;
	c[0].duration_ns = 1000;
	c[0].bytes = 64;
	c[0].prim = 2;
	c[1].start_ns = e[0].first_ns + 2000;
	c[1].duration_ns = 500;
	c[1].prim = 4;
}

int main(int argc, char **argv)
{
	uint64_t hbytes = bcs_mpi_hist_bytes(SUB_BITS), calls, comm, k;
	uint64_t lat[3] = { 500, 1000, 2000 }, sum = 0, barrier;
	struct bcs_mpi_file_header *h;
	struct bcs_mpi_prim *p;
	uint64_t slice0 = 0;
	unsigned long nslices = 0;
	size_t size, soff;
	char path[4096], *file;
	FILE *f;
	int rank, full;

	if (argc != 6 && argc != 8) {
		fprintf(stderr, "usage: mkmpi DIR JOB HOST RANK CALLS "
			"[SLICE N]\n");
		return 2;
	}
	if (argc == 8) {
		slice0 = strtoull(argv[6], NULL, 10);
		nslices = strtoul(argv[7], NULL, 10);
	}
	rank = atoi(argv[4]);
	calls = strtoull(argv[5], NULL, 10);
	for (k = 0; k < calls; k++)
		sum += lat[k % 3];
	barrier = 1000ULL * (uint64_t)(rank + 1);
	comm = sum + barrier;
	/* $MKMPI_HIST: MPI_Allreduce's latencies and sizes too. */
	full = getenv("MKMPI_HIST") != NULL;
	size = sizeof(*h) + NR_PRIMS * sizeof(*p) + (full ? 4 : 2) * hbytes;
	soff = size;
	if (nslices)
		size += sizeof(struct bcs_mpi_slices) +
			nslices * sizeof(struct bcs_mpi_slice) +
			2 * sizeof(struct bcs_mpi_call);
	file = calloc(1, size);
	if (!file)
		return 1;
	h = (void *)file;
	h->version = BCS_MPI_VERSION;
	h->header_size = sizeof(*h);
	h->flags = BCS_MPI_COMPLETE;
	h->nr_prims = NR_PRIMS;
	h->prim_size = sizeof(*p);
	h->sub_bits = SUB_BITS;
	h->prim_off = sizeof(*h);
	h->file_size = size;
	h->rank = rank;
	h->world_size = 4;
	h->pid = 1000 + rank;
	h->init_ns = 1000000000ULL;
	h->finalize_ns = h->init_ns + 1000000ULL + comm;
	h->start_realtime_ns = 1700000000000000000ULL;
	snprintf(h->job, sizeof(h->job), "%s", argv[2]);
	snprintf(h->host, sizeof(h->host), "%s", argv[3]);
	snprintf(h->mpi, sizeof(h->mpi), "openmpi");
	p = (void *)(h + 1);
	prim(&p[BCS_MPI_PRIM_COMP], "Comp Granularity", 0, calls + 6, 1000000,
	     1, 1000000, 0);
	prim(&p[BCS_MPI_PRIM_COMM], "Comm Overhead", 0, calls + 5, comm, 500,
	     barrier > 2000 ? barrier : 2000, 0);
	prim(&p[2], "MPI_Allreduce",
	     BCS_MPI_PRIM_BLOCKING | BCS_MPI_PRIM_SIZED, calls, sum, 500,
	     calls > 2 ? 2000 : calls > 1 ? 1000 : 500, calls * 64);
	prim(&p[3], "MPI_Barrier", BCS_MPI_PRIM_BLOCKING, 5, barrier,
	     barrier / 5, barrier / 5, 0);
	prim(&p[4], "MPI_Send", BCS_MPI_PRIM_BLOCKING | BCS_MPI_PRIM_SIZED, 0,
	     0, 0, 0, 0);
	p[BCS_MPI_PRIM_COMP].lat_hist_off = sizeof(*h) + NR_PRIMS * sizeof(*p);
	p[BCS_MPI_PRIM_COMM].lat_hist_off =
		p[BCS_MPI_PRIM_COMP].lat_hist_off + hbytes;
	hist(file, p[BCS_MPI_PRIM_COMP].lat_hist_off);
	hist(file, p[BCS_MPI_PRIM_COMM].lat_hist_off);
	if (full) {
		p[2].lat_hist_off = p[BCS_MPI_PRIM_COMM].lat_hist_off + hbytes;
		p[2].size_hist_off = p[2].lat_hist_off + hbytes;
		hist(file, p[2].lat_hist_off);
		hist(file, p[2].size_hist_off);
		for (k = 0; k < 3; k++)
			hist_add(file, p[2].lat_hist_off, lat[k],
				 calls / 3 + (k < calls % 3));
		hist_add(file, p[2].size_hist_off, 64, calls);
	}
	if (nslices)
		slices(file, soff, slice0, nslices);
	h->slices_off = nslices ? (uint32_t)soff : 0;
	h->magic = BCS_MPI_MAGIC;
	snprintf(path, sizeof(path), "%s/%s.%s.%d.%d.bcsmpi", argv[1], argv[2],
		 argv[3], rank, h->pid);
	f = fopen(path, "w");
	if (!f || fwrite(file, 1, size, f) != size || fclose(f)) {
		perror(path);
		return 1;
	}
	free(file);
	printf("%s\n", path);
	return 0;
}

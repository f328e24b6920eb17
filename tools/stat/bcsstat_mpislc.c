// SPDX-License-Identifier: GPL-2.0
/*
 * bcsstat mpi --slices: the calls of each rank per global slice of bcs.ko
 * (struct bcs_mpi_slices of <linux/bcs_mpi.h>), in the way of Table 1 of
 * the BCS-MPI paper (NP2P, NCOLL and the time in them, per slice), and
 * with --json the calls the window captured too.  bcsstat trace draws
 * the same (bcsstat_trace.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mpifile.h"
#include "bcsstat.h"

static int by_slice(const void *a, const void *b)
{
	const struct bcs_mpi_slice *x = a, *y = b;

	return x->slice < y->slice ? -1 : x->slice > y->slice;
}

static int by_start(const void *a, const void *b)
{
	const struct bcs_mpi_call *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/*
 * The entries of a ring of @nr items of @size bytes at @ring, @head of
 * them ever written (item k at k % @nr), the oldest kept first, into
 * *@out sorted by @cmp: their number, or -ENOMEM.
 */
static long ring_copy(const void *ring, size_t size, uint32_t nr,
		      uint64_t head, int (*cmp)(const void *, const void *),
		      void **out)
{
	uint64_t k, first = head > nr ? head - nr : 0;
	char *o;

	*out = NULL;
	if (!nr || !head)
		return 0;
	o = calloc((size_t)(head - first), size);
	if (!o)
		return -ENOMEM;
	for (k = first; k < head; k++)
		memcpy(o + (k - first) * size,
		       (const char *)ring + (k % nr) * size, size);
	qsort(o, (size_t)(head - first), size, cmp);
	*out = o;
	return (long)(head - first);
}

long mpi_slice_entries(const struct bcs_mpi_stats *st,
		       struct bcs_mpi_slice **out)
{
	const struct bcs_mpi_slices *t = st->slices;
	void *o = NULL;
	long n = 0;

	/* Begun in the order of the slices; sorted all the same. */
	if (t)
		n = ring_copy(st->slice, sizeof(**out), t->nr_slices,
			      t->slice_head, by_slice, &o);
	*out = o;
	return n;
}

long mpi_call_events(const struct bcs_mpi_stats *st,
		     struct bcs_mpi_call **out)
{
	const struct bcs_mpi_slices *t = st->slices;
	long n = 0, i, k = 0;
	void *o = NULL;

	if (t)
		n = ring_copy(st->calls, sizeof(**out), t->nr_calls,
			      t->call_head, by_start, &o);
	*out = o;
	/* A record index from the file: checked. */
	for (i = 0; i < n; i++)
		if ((*out)[i].prim < st->hdr->nr_prims)
			(*out)[k++] = (*out)[i];
	return n < 0 ? n : k;
}

/* Why a rank has no slices: "" if it has. */
static const char *why_none(const struct bcs_mpi_stats *st)
{
	if (!st->slices)
		return st->hdr->version < 4 ? "a file of version 3: no slices" :
		       "no slices kept (BCS_MPI_SLICES=0)";
	if (st->slices->flags & BCS_MPI_SLICES_NODEV)
		return "no /dev/bcsstat (bcs.ko not loaded): no slices";
	return "";
}

static struct json_object *rank_slices_json(const struct bcs_mpi_stats *st,
					    const char *path,
					    const struct bcs_mpi_slice *e,
					    long ne,
					    const struct bcs_mpi_call *c,
					    long nc)
{
	struct json_object *o = json_object_new_object(), *a, *x;
	const struct bcs_mpi_slices *t = st->slices;
	long i;

	json_object_object_add(o, "file", json_object_new_string(path));
	json_object_object_add(o, "rank", json_object_new_int(st->hdr->rank));
	json_object_object_add(o, "pid", json_object_new_int(st->hdr->pid));
	json_object_object_add(o, "host", json_object_new_string(st->hdr->host));
	json_object_object_add(o, "job", json_object_new_string(st->hdr->job));
	json_object_object_add(o, "source", json_object_new_string(
		!t ? "none" : t->flags & BCS_MPI_SLICES_NODEV ? "none" :
		t->flags & BCS_MPI_SLICES_TEST ? "BCS_MPI_STATDEV" :
		"/dev/bcsstat"));
	if (t) {
		json_add_u64(o, "nr_slices", t->nr_slices);
		json_add_u64(o, "slices_begun", t->slice_head);
		json_add_u64(o, "nr_calls", t->nr_calls);
		json_add_u64(o, "calls_written", t->call_head);
		if (t->flags & BCS_MPI_SLICES_WINDOW) {
			x = json_object_new_object();
			json_add_u64(x, "from", t->window_from);
			json_add_u64(x, "to", t->window_to);
			json_object_object_add(o, "window", x);
		}
	}
	a = json_object_new_array();
	for (i = 0; i < ne; i++) {
		x = json_object_new_object();
		json_add_u64(x, "slice", e[i].slice);
		json_add_u64(x, "p2p_calls", e[i].p2p_calls);
		json_add_u64(x, "coll_calls", e[i].coll_calls);
		json_add_u64(x, "p2p_ns", e[i].p2p_ns);
		json_add_u64(x, "coll_ns", e[i].coll_ns);
		json_add_u64(x, "p2p_bytes", e[i].p2p_bytes);
		json_add_u64(x, "coll_bytes", e[i].coll_bytes);
		json_add_u64(x, "first_ns", e[i].first_ns);
		json_add_u64(x, "last_ns", e[i].last_ns);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "slices", a);
	a = json_object_new_array();
	for (i = 0; i < nc; i++) {
		x = json_object_new_object();
		json_add_u64(x, "slice", c[i].slice);
		json_object_object_add(x, "primitive", json_object_new_string(
					       st->prims[c[i].prim].name));
		json_add_u64(x, "start_ns", c[i].start_ns);
		json_add_u64(x, "duration_ns", c[i].duration_ns);
		json_add_u64(x, "bytes", c[i].bytes);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "calls", a);
	return o;
}

static void rank_slices_text(const struct bcs_mpi_stats *st,
			     const struct bcs_mpi_slice *e, long ne, long nc)
{
	const struct bcs_mpi_slices *t = st->slices;
	long i;

	printf("rank %d (pid %d on %s)", st->hdr->rank, st->hdr->pid,
	       st->hdr->host);
	if (*why_none(st)) {
		printf(": %s\n", why_none(st));
		return;
	}
	printf(": %ld slice%s with calls", ne, ne == 1 ? "" : "s");
	if (t->slice_head > (uint64_t)ne)
		printf(" (of %llu; the newest %u kept)",
		       (unsigned long long)t->slice_head, t->nr_slices);
	if (t->flags & BCS_MPI_SLICES_WINDOW)
		printf(", window %llu .. %llu, %ld call%s kept",
		       (unsigned long long)t->window_from,
		       (unsigned long long)t->window_to, nc,
		       nc == 1 ? "" : "s");
	printf("\n%12s %10s %10s %12s %12s %14s\n", "Slice", "NP2P", "NCOLL",
	       "P2P(ms)", "Coll(ms)", "Bytes");
	for (i = 0; i < ne; i++)
		printf("%12llu %10llu %10llu %12.3f %12.3f %14llu\n",
		       (unsigned long long)e[i].slice,
		       (unsigned long long)e[i].p2p_calls,
		       (unsigned long long)e[i].coll_calls, e[i].p2p_ns / 1e6,
		       e[i].coll_ns / 1e6,
		       (unsigned long long)(e[i].p2p_bytes + e[i].coll_bytes));
}

int mpi_slices_print(const struct bcs_mpi_stats *files, char **paths, int n,
		     int json)
{
	struct json_object *top = NULL, *ranks = NULL;
	struct bcs_mpi_slice *e;
	struct bcs_mpi_call *c;
	long ne, nc;
	int k;

	if (json) {
		top = json_object_new_object();
		ranks = json_object_new_array();
		json_object_object_add(top, "ranks", ranks);
	}
	for (k = 0; k < n; k++) {
		ne = mpi_slice_entries(&files[k], &e);
		nc = ne < 0 ? 0 : mpi_call_events(&files[k], &c);
		if (ne < 0 || nc < 0) {
			free(e);
			json_object_put(top);
			fprintf(stderr, "bcsstat: mpi: %s\n", strerror(ENOMEM));
			return EXIT_FAILURE;
		}
		if (json)
			json_object_array_add(ranks, rank_slices_json(
				&files[k], paths[k], e, ne, c, nc));
		else
			rank_slices_text(&files[k], e, ne, nc);
		free(e);
		free(c);
	}
	if (json) {
		json_print(top, 1);
		json_object_put(top);
	}
	return 0;
}

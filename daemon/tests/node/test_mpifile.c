// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the reader of libbcsmpi's statistics files
 * (libbcsmpi/mpifile.c) as bcsd uses it: the time estimated for a
 * polled primitive, and files refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libbcsmpi/mpifile.h"
#include "tests/unit.h"

static void test_prim_time(void)
{
	struct bcs_mpi_prim p = { .calls = 10, .timed = 10, .total_ns = 500 };

	CHECK(bcs_mpi_prim_time(&p) == 500);	/* every call timed */
	p.timed = 2;
	p.total_ns = 100;			/* 50 ns a call */
	CHECK(bcs_mpi_prim_time(&p) == 500);
	p.timed = 0;				/* none timed yet */
	CHECK(bcs_mpi_prim_time(&p) == 100);
	p.timed = 11;				/* live file: calls behind */
	CHECK(bcs_mpi_prim_time(&p) == 100);
	/* A corrupt file's counts: no undefined conversion, the most. */
	p.calls = UINT64_MAX;
	p.timed = 1;
	p.total_ns = UINT64_MAX / 2;
	CHECK(bcs_mpi_prim_time(&p) == UINT64_MAX);
}

/* @len bytes of @fill refused with -EINVAL, the message naming "f". */
static void refused(size_t len, int fill, int want)
{
	struct bcs_mpi_stats st;
	char err[256] = "";
	void *d = malloc(len ? len : 1);

	CHECK(d != NULL);
	if (!d)
		return;
	memset(d, fill, len);
	CHECK(bcs_mpi_stats_parse(d, len, "f", &st, err, sizeof(err)) == want);
	CHECK(!strncmp(err, "f: ", 3));
	CHECK(st.data == NULL);
}

static void test_refused(void)
{
	struct bcs_mpi_file_header *h;
	struct bcs_mpi_stats st;
	char err[256];

	refused(0, 0, -EINVAL);
	refused(sizeof(*h) - 1, 0, -EINVAL);
	refused(4096, 0, -EAGAIN);		/* magic 0: being created */
	refused(4096, 0xff, -EINVAL);
	/* Version 1, before the timed calls. */
	h = calloc(1, 4096);
	CHECK(h != NULL);
	if (!h)
		return;
	h->magic = BCS_MPI_MAGIC;
	h->version = 1;
	CHECK(bcs_mpi_stats_parse(h, 4096, "f", &st, err, sizeof(err)) ==
	      -EINVAL);
	CHECK(strstr(err, "another version") != NULL);
}

int main(void)
{
	test_prim_time();
	test_refused();
	return unit_done("test_mpifile");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the gathering of a job's MPI statistics files
 * (mpigather.c): files cut into parts as the nodes cut them come back
 * whole whatever the order of the parts, copies count once, a node with
 * no files answers, parts that contradict earlier ones are refused, the
 * gather is done when the nodes expected answered or at its deadline, and
 * the answer's JSON has the complete files only, in base64.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "ctl/mpigather.h"
#include "tests/unit.h"

#define REQ	77
#define JOB	40

/* Part @k of file @file of @files, @size bytes of which are @content. */
static struct bcsp_mpi_part part(uint16_t file, uint16_t files, uint32_t size,
				 uint32_t k, const uint8_t *content)
{
	struct bcsp_mpi_part p = {
		.req = REQ, .node = 1, .job = JOB, .file = file,
		.files = files,
		.size = size, .offset = k * BCSP_MPI_PART_MAX,
	};

	p.len = size - p.offset < BCSP_MPI_PART_MAX ? size - p.offset :
						      BCSP_MPI_PART_MAX;
	memcpy(p.data, content + p.offset, p.len);
	return p;
}

static void fill(uint8_t *b, size_t n, uint8_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

/* The file @file of @node in answer @o, decoded into @out; its size or -1. */
static long answer_file(struct json_object *o, uint32_t node, int file,
			uint8_t *out, size_t max)
{
	struct json_object *files, *f, *v;
	size_t len, i;

	if (!json_object_object_get_ex(o, "files", &files))
		return -1;
	for (i = 0; i < json_object_array_length(files); i++) {
		f = json_object_array_get_idx(files, i);
		json_object_object_get_ex(f, "node", &v);
		if (json_object_get_int64(v) != node)
			continue;
		json_object_object_get_ex(f, "file", &v);
		if (json_object_get_int(v) != file)
			continue;
		json_object_object_get_ex(f, "data", &v);
		if (sodium_base642bin(out, max, json_object_get_string(v),
				      strlen(json_object_get_string(v)), NULL,
				      &len, NULL,
				      sodium_base64_VARIANT_ORIGINAL))
			return -1;
		return (long)len;
	}
	return -1;
}

static int64_t field(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ?
	       json_object_get_int64(v) : -1;
}

static void test_whole(void)
{
	static uint8_t a[3000], b[BCSP_MPI_PART_MAX], c[10], out[4096];
	struct bcsp_mpi_part p;
	struct mpi_gather g;
	struct json_object *o;

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	fill(c, sizeof(c), 3);
	mpi_gather_init(&g, REQ, JOB, 3, 1000);
	/* Node 2: files 0 (3 parts, backwards) and 1 (one full part). */
	p = part(0, 2, sizeof(a), 2, a);
	CHECK(!mpi_gather_add(&g, 2, &p));
	p = part(1, 2, sizeof(b), 0, b);
	CHECK(!mpi_gather_add(&g, 2, &p));
	p = part(0, 2, sizeof(a), 1, a);
	CHECK(!mpi_gather_add(&g, 2, &p));
	CHECK(!mpi_gather_add(&g, 2, &p));	/* a copy */
	CHECK(mpi_gather_answered(&g) == 0);
	p = part(0, 2, sizeof(a), 0, a);
	CHECK(!mpi_gather_add(&g, 2, &p));
	CHECK(mpi_gather_answered(&g) == 1);
	/* Node 5: none.  Node 3: one small file. */
	memset(&p, 0, sizeof(p));
	p.req = REQ;
	p.job = JOB;
	CHECK(!mpi_gather_add(&g, 5, &p));
	CHECK(mpi_gather_answered(&g) == 2);
	CHECK(!mpi_gather_done(&g, 999));
	p = part(0, 1, sizeof(c), 0, c);
	CHECK(!mpi_gather_add(&g, 3, &p));
	CHECK(mpi_gather_answered(&g) == 3);
	CHECK(mpi_gather_done(&g, 0));
	CHECK(g.refused == 0);

	o = json_object_new_object();
	CHECK(!mpi_gather_json(&g, o));
	CHECK(field(o, "expected") == 3 && field(o, "answered") == 3);
	CHECK(answer_file(o, 2, 0, out, sizeof(out)) == sizeof(a) &&
	      !memcmp(out, a, sizeof(a)));
	CHECK(answer_file(o, 2, 1, out, sizeof(out)) == sizeof(b) &&
	      !memcmp(out, b, sizeof(b)));
	CHECK(answer_file(o, 3, 0, out, sizeof(out)) == sizeof(c) &&
	      !memcmp(out, c, sizeof(c)));
	json_object_put(o);
	mpi_gather_free(&g);
}

/* Parts that do not fit the node's earlier ones, and the deadline. */
static void test_refused(void)
{
	static uint8_t a[2000], out[4096];
	struct bcsp_mpi_part p;
	struct mpi_gather g;
	struct json_object *o, *nodes;

	fill(a, sizeof(a), 9);
	mpi_gather_init(&g, REQ, JOB, 2, 500);
	p = part(0, 1, sizeof(a), 0, a);
	CHECK(!mpi_gather_add(&g, 4, &p));
	p = part(0, 2, sizeof(a), 1, a);	/* another number of files */
	CHECK(mpi_gather_add(&g, 4, &p) == -EINVAL);
	p = part(0, 1, sizeof(a) - 4, 1, a);	/* another size */
	CHECK(mpi_gather_add(&g, 4, &p) == -EINVAL);
	p = part(0, 1, sizeof(a), 1, a);	/* off a part's boundary */
	p.offset -= 4;
	p.len += 4;
	CHECK(mpi_gather_add(&g, 4, &p) == -EINVAL);
	p = part(0, 1, sizeof(a), 1, a);	/* short of its part's end */
	p.len -= 4;
	CHECK(mpi_gather_add(&g, 4, &p) == -EINVAL);
	CHECK(g.refused == 4);
	CHECK(mpi_gather_answered(&g) == 0);
	/* Not done before its deadline; at it, with what came. */
	CHECK(!mpi_gather_done(&g, 499));
	CHECK(mpi_gather_done(&g, 500));
	o = json_object_new_object();
	CHECK(!mpi_gather_json(&g, o));
	CHECK(field(o, "answered") == 0 && field(o, "expected") == 2);
	CHECK(answer_file(o, 4, 0, out, sizeof(out)) == -1);
	json_object_object_get_ex(o, "nodes", &nodes);
	CHECK(json_object_array_length(nodes) == 1);
	json_object_put(o);
	mpi_gather_free(&g);

	/* Expecting nobody (no tasks in the map): only the deadline ends it. */
	mpi_gather_init(&g, REQ, JOB, 0, 100);
	CHECK(!mpi_gather_done(&g, 99) && mpi_gather_done(&g, 100));
	mpi_gather_free(&g);
}

/* Does @g's answer say @expected, @answered and @complete? */
static bool answer_is(struct mpi_gather *g, int64_t expected,
		      int64_t answered, bool complete)
{
	struct json_object *o = json_object_new_object(), *v;
	bool ok = o && !mpi_gather_json(g, o) &&
		  field(o, "expected") == expected &&
		  field(o, "answered") == answered &&
		  json_object_object_get_ex(o, "complete", &v) &&
		  json_object_get_boolean(v) == complete;

	json_object_put(o);
	return ok;
}

/*
 * A job whose tasks have ended on two of three live nodes: the map counts
 * one node, all three have files; the gather waits for the three.  And
 * the map's count when it is the larger.
 */
static void test_live(void)
{
	struct bcsp_mpi_part p = { .req = REQ, .job = JOB };
	struct mpi_gather g;
	uint32_t n;

	mpi_gather_init(&g, REQ, JOB, 1, 100);
	g.live = 3;
	for (n = 1; n <= 3; n++) {
		CHECK(!mpi_gather_done(&g, 0));
		CHECK(!mpi_gather_add(&g, n, &p));
	}
	CHECK(mpi_gather_answered(&g) == 3 && mpi_gather_done(&g, 0));
	CHECK(answer_is(&g, 3, 3, true));
	mpi_gather_free(&g);

	mpi_gather_init(&g, REQ, JOB, 2, 100);
	g.live = 1;
	CHECK(!mpi_gather_add(&g, 1, &p));
	CHECK(!mpi_gather_done(&g, 0));
	CHECK(!mpi_gather_add(&g, 2, &p));
	CHECK(mpi_gather_done(&g, 0));
	mpi_gather_free(&g);

	/* No node with tasks: the live nodes end it before the deadline. */
	mpi_gather_init(&g, REQ, JOB, 0, 100);
	g.live = 1;
	CHECK(!mpi_gather_done(&g, 0));
	CHECK(!mpi_gather_add(&g, 7, &p));
	CHECK(mpi_gather_done(&g, 0));
	mpi_gather_free(&g);

	/* A live node silent until the deadline: not complete. */
	mpi_gather_init(&g, REQ, JOB, 1, 100);
	g.live = 2;
	CHECK(!mpi_gather_add(&g, 1, &p));
	CHECK(!mpi_gather_done(&g, 99) && mpi_gather_done(&g, 100));
	CHECK(answer_is(&g, 2, 1, false));
	mpi_gather_free(&g);
}

/* The bounds: bytes held. */
static void test_room(void)
{
	static uint8_t a[BCSP_MPI_FILE_MAX];
	struct bcsp_mpi_part p;
	struct mpi_gather g;
	uint32_t n, k = 0;
	int err = 0;

	mpi_gather_init(&g, REQ, JOB, 0, 100);
	for (n = 1; !err && n < 1000; n++) {
		p = part(0, 1, sizeof(a), 0, a);
		err = mpi_gather_add(&g, n, &p);
		k += !err;
	}
	CHECK(err == -ENOSPC);
	CHECK(k == MPI_GATHER_BYTES_MAX / BCSP_MPI_FILE_MAX);
	CHECK(g.bytes <= MPI_GATHER_BYTES_MAX);
	mpi_gather_free(&g);
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	test_whole();
	test_live();
	test_refused();
	test_room();
	return unit_done("test_mpigather");
}

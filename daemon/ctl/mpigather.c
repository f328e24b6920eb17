// SPDX-License-Identifier: GPL-2.0
/*
 * A job's MPI statistics files gathered from the nodes: see mpigather.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "ctl/mpigather.h"

void mpi_gather_init(struct mpi_gather *g, uint32_t req, uint32_t job,
		     uint32_t expect, uint64_t until_ms)
{
	memset(g, 0, sizeof(*g));
	g->req = req;
	g->job = job;
	g->expect = expect;
	g->until_ms = until_ms;
}

void mpi_gather_free(struct mpi_gather *g)
{
	uint32_t i;

	for (i = 0; i < g->nr_files; i++)
		free(g->files[i].data);
	free(g->files);
	free(g->nodes);
	memset(g, 0, sizeof(*g));
}

/* Grow array @v of @*cap elements of @size to hold one more. */
static int grow(void **v, uint32_t *cap, uint32_t nr, size_t size)
{
	uint32_t n = *cap ? *cap * 2 : 8;
	void *p;

	if (nr < *cap)
		return 0;
	p = realloc(*v, (size_t)n * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

static struct mpi_gather_node *node_of(struct mpi_gather *g, uint32_t node)
{
	uint32_t i;

	for (i = 0; i < g->nr_nodes; i++)
		if (g->nodes[i].node == node)
			return &g->nodes[i];
	return NULL;
}

static struct mpi_gather_file *file_of(struct mpi_gather *g, uint32_t node,
				       uint16_t file)
{
	uint32_t i;

	for (i = 0; i < g->nr_files; i++)
		if (g->files[i].node == node && g->files[i].file == file)
			return &g->files[i];
	return NULL;
}

/* The parts of a file of @size bytes, all present: bits 0 .. n - 1. */
static uint64_t all_parts(uint32_t size)
{
	uint32_t n = (size + BCSP_MPI_PART_MAX - 1) / BCSP_MPI_PART_MAX;

	return n >= 64 ? ~0ULL : (1ULL << n) - 1;
}

static int refuse(struct mpi_gather *g, int err)
{
	g->refused++;
	return err;
}

int mpi_gather_add(struct mpi_gather *g, uint32_t node,
		   const struct bcsp_mpi_part *p)
{
	struct mpi_gather_node *n = node_of(g, node);
	struct mpi_gather_file *f;
	uint32_t k;

	if (n && n->files != p->files)
		return refuse(g, -EINVAL);
	if (p->files && (p->offset % BCSP_MPI_PART_MAX ||
			 p->len != (p->size - p->offset < BCSP_MPI_PART_MAX ?
				    p->size - p->offset : BCSP_MPI_PART_MAX)))
		return refuse(g, -EINVAL);
	if (!n) {
		if (g->nr_nodes >= MPI_GATHER_NODES_MAX)
			return refuse(g, -ENOSPC);
		if (grow((void **)&g->nodes, &g->cap_nodes, g->nr_nodes,
			 sizeof(*g->nodes)))
			return -ENOMEM;
		n = &g->nodes[g->nr_nodes++];
		n->node = node;
		n->files = p->files;
		n->complete = 0;
	}
	if (!p->files)
		return 0;
	f = file_of(g, node, p->file);
	if (f && f->size != p->size)
		return refuse(g, -EINVAL);
	if (!f) {
		if (g->bytes + p->size > MPI_GATHER_BYTES_MAX)
			return refuse(g, -ENOSPC);
		if (grow((void **)&g->files, &g->cap_files, g->nr_files,
			 sizeof(*g->files)))
			return -ENOMEM;
		f = &g->files[g->nr_files];
		memset(f, 0, sizeof(*f));
		f->data = malloc(p->size);
		if (!f->data)
			return -ENOMEM;
		f->node = node;
		f->file = p->file;
		f->size = p->size;
		g->nr_files++;
		g->bytes += p->size;
	}
	k = p->offset / BCSP_MPI_PART_MAX;
	if (f->parts & 1ULL << k)
		return 0;	/* a copy */
	memcpy(f->data + p->offset, p->data, p->len);
	f->parts |= 1ULL << k;
	if (f->parts == all_parts(f->size))
		n->complete++;
	return 0;
}

uint32_t mpi_gather_answered(const struct mpi_gather *g)
{
	uint32_t i, k = 0;

	for (i = 0; i < g->nr_nodes; i++)
		k += g->nodes[i].complete == g->nodes[i].files;
	return k;
}

uint32_t mpi_gather_expected(const struct mpi_gather *g)
{
	return g->expect > g->live ? g->expect : g->live;
}

bool mpi_gather_done(const struct mpi_gather *g, uint64_t now_ms)
{
	uint32_t want = mpi_gather_expected(g);

	return now_ms >= g->until_ms ||
	       (want && mpi_gather_answered(g) >= want);
}

static int by_node(const void *a, const void *b)
{
	const struct mpi_gather_node *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
}

static int by_node_file(const void *a, const void *b)
{
	const struct mpi_gather_file *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

static struct json_object *file_json(const struct mpi_gather_file *f)
{
	size_t len = sodium_base64_encoded_len(f->size,
					       sodium_base64_VARIANT_ORIGINAL);
	struct json_object *o = json_object_new_object(), *s;
	char *b64 = malloc(len);

	if (!o || !b64) {
		free(b64);
		json_object_put(o);
		return NULL;
	}
	sodium_bin2base64(b64, len, f->data, f->size,
			  sodium_base64_VARIANT_ORIGINAL);
	s = json_object_new_string(b64);
	free(b64);
	if (!s) {
		json_object_put(o);
		return NULL;
	}
	json_object_object_add(o, "node", json_object_new_int64(f->node));
	json_object_object_add(o, "file", json_object_new_int(f->file));
	json_object_object_add(o, "data", s);
	return o;
}

int mpi_gather_json(struct mpi_gather *g, struct json_object *o)
{
	struct json_object *nodes = json_object_new_array();
	struct json_object *files = json_object_new_array(), *e;
	uint32_t answered = mpi_gather_answered(g), i;
	uint32_t want = mpi_gather_expected(g);

	if (!nodes || !files)
		goto nomem;
	/* Sorted in place: the order they came in is of no use. */
	if (g->nr_nodes)
		qsort(g->nodes, g->nr_nodes, sizeof(*g->nodes), by_node);
	if (g->nr_files)
		qsort(g->files, g->nr_files, sizeof(*g->files), by_node_file);
	for (i = 0; i < g->nr_nodes; i++) {
		e = json_object_new_object();
		if (!e)
			goto nomem;
		json_object_object_add(e, "node",
				       json_object_new_int64(g->nodes[i].node));
		json_object_object_add(e, "files",
				       json_object_new_int(g->nodes[i].files));
		json_object_object_add(e, "complete",
				       json_object_new_int(g->nodes[i].complete));
		json_object_array_add(nodes, e);
	}
	for (i = 0; i < g->nr_files; i++) {
		if (g->files[i].parts != all_parts(g->files[i].size))
			continue;
		e = file_json(&g->files[i]);
		if (!e)
			goto nomem;
		json_object_array_add(files, e);
	}
	json_object_object_add(o, "job", json_object_new_int64(g->job));
	json_object_object_add(o, "expected", json_object_new_int64(want));
	json_object_object_add(o, "answered", json_object_new_int64(answered));
	json_object_object_add(o, "complete", json_object_new_boolean(
				       want && answered >= want));
	json_object_object_add(o, "nodes", nodes);
	json_object_object_add(o, "files", files);
	return 0;
nomem:
	json_object_put(nodes);
	json_object_put(files);
	return -ENOMEM;
}

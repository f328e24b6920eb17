// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the two parsers of the tree of daemons (topo.c).
 * The input is a nodes file, then optionally a line "---" and a topology
 * file over those nodes, read by topo_list_read_stream() and
 * topo_tree_read_stream() as bcsd reads nodes_file and topology_file.
 * A refused file is refused with a message that names it.  An accepted
 * one must make a tree that topo_check() passes, also re-rooted at other
 * nodes and back; written out in the notation again, it must read back
 * to the same tree.  Without a topology file, the k-ary trees over the
 * nodes are checked the same way.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tree/topo.h"
#include "fuzz/fuzz_assert.h"

#define SEP	"\n---\n"

static struct topo_list list;
static struct topo_tree tree, again;

static FILE *open_buf(const void *buf, size_t len)
{
	/* fmemopen() of 0 bytes fails: a 0-byte file reads as "". */
	FILE *f = fmemopen(len ? (void *)buf : (void *)"", len ? len : 1,
			   "r");

	FUZZ_ASSERT(f);
	if (!len)
		getc(f);
	return f;
}

/* @t, re-rooted at a few nodes and back, stays a tree. */
static void check_reroot(struct topo_tree *t)
{
	uint32_t roots[3] = { 0, list.nr - 1, list.nr / 2 }, root = t->root;
	char err[512];
	unsigned int i;

	FUZZ_ASSERT(!topo_check(t, err, sizeof(err)));
	FUZZ_ASSERT(topo_subtree(t, t->root) == list.nr);
	again = *t;
	for (i = 0; i < 3; i++) {
		FUZZ_ASSERT(!topo_tree_reroot(t, &list, list.node[roots[i]].id,
					      err, sizeof(err)));
		FUZZ_ASSERT(!topo_check(t, err, sizeof(err)));
		FUZZ_ASSERT(t->root == roots[i]);
	}
	FUZZ_ASSERT(!topo_tree_reroot(t, &list, list.node[root].id, err,
				      sizeof(err)));
	FUZZ_ASSERT(!memcmp(t->parent, again.parent,
			    sizeof(t->parent[0]) * list.nr));
}

/* @t written as a topology file reads back as the same tree. */
static void check_write(const struct topo_tree *t)
{
	char err[512], name[TOPO_HOST_MAX + 16], *text = NULL;
	const uint32_t *child;
	size_t len = 0;
	uint32_t i, j, n;
	FILE *f;

	f = open_memstream(&text, &len);
	FUZZ_ASSERT(f);
	for (i = 0; i < list.nr; i++) {
		n = topo_children(t, i, &child);
		if (!n && i != t->root)
			continue;
		fprintf(f, "%s =>", topo_name(&list, i, name, sizeof(name)));
		for (j = 0; j < n; j++)
			fprintf(f, " %s",
				topo_name(&list, child[j], name, sizeof(name)));
		fprintf(f, " ;\n");
	}
	FUZZ_ASSERT(!fclose(f));
	f = open_buf(text, len);
	if (topo_tree_read_stream(&again, &list, f, "written", err,
				  sizeof(err))) {
		fprintf(stderr, "written tree refused: %s\n%s", err, text);
		abort();
	}
	fclose(f);
	FUZZ_ASSERT(again.root == t->root);
	FUZZ_ASSERT(!memcmp(again.parent, t->parent,
			    sizeof(t->parent[0]) * list.nr));
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memmem(data, size, SEP, strlen(SEP));
	size_t nodes_len = sep ? (size_t)(sep - data) : size;
	char err[512];
	uint32_t i, j;
	FILE *f;
	int ret;

	if (size > 64 * 1024)
		return -1;
	f = open_buf(data, nodes_len);
	err[0] = '\0';
	ret = topo_list_read_stream(&list, f, "fuzz.nodes", err, sizeof(err));
	fclose(f);
	if (ret) {
		FUZZ_ASSERT(!strncmp(err, "fuzz.nodes:", 11));
		return 0;
	}
	FUZZ_ASSERT(list.nr >= 1 && list.nr <= BCSD_MAX_NODES);
	for (i = 0; i < list.nr; i++) {
		FUZZ_ASSERT(list.node[i].id);
		FUZZ_ASSERT(topo_index(&list, list.node[i].id) == (int)i);
		FUZZ_ASSERT(strlen(list.node[i].host) < TOPO_HOST_MAX);
		for (j = 0; j < i; j++)
			FUZZ_ASSERT(list.node[j].port != list.node[i].port ||
				    strcasecmp(list.node[j].host,
					       list.node[i].host));
	}
	if (!sep) {
		/* The k-ary trees, at a fan-out the input chooses. */
		ret = topo_tree_kary(&tree, &list, list.node[list.nr - 1].id,
				     1 + (uint32_t)(size % 40), err,
				     sizeof(err));
		FUZZ_ASSERT(!ret);
		check_reroot(&tree);
		check_write(&tree);
		return 0;
	}
	sep += strlen(SEP);
	f = open_buf(sep, size - (size_t)(sep - data));
	err[0] = '\0';
	ret = topo_tree_read_stream(&tree, &list, f, "fuzz.topo", err,
				    sizeof(err));
	fclose(f);
	if (ret) {
		FUZZ_ASSERT(!strncmp(err, "fuzz.topo", 9));
		return 0;
	}
	FUZZ_ASSERT(tree.kind == TOPO_FILE && tree.nr == list.nr);
	check_write(&tree);
	check_reroot(&tree);
	return 0;
}

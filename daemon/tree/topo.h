/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The topology of a tree of bcsd daemons (Documentation/tree.rst): the
 * node list of the cluster, read from the nodes file, and a tree over it,
 * either k-ary in list order or read from a topology file in MRNet's
 * notation.  A pure module: it reads the files it is given and nothing
 * else, keeps no state of its own, and resolves no host names.
 *
 * Nodes are named by their index in the list (0 .. nr - 1); topo_index()
 * finds a node id's index.  Every function that fails writes a message
 * into @err, "file:line: what" for an error in a file.
 */
#ifndef BCSD_TOPO_H
#define BCSD_TOPO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <netinet/in.h>

#include "core/config.h"

/* A host name or dotted IPv4 address of the nodes file, with its '\0'. */
#define TOPO_HOST_MAX		254
/* No node: the root's parent. */
#define TOPO_NONE		UINT32_MAX

struct topo_node {
	uint32_t id;			/* 1 .. UINT32_MAX */
	char host[TOPO_HOST_MAX];	/* as written, a name or an address */
	bool numeric;			/* @host is an IPv4 address, @addr */
	struct in_addr addr;
	uint16_t port;			/* 0: the cluster's (option port) */
};

/*
 * The nodes of the cluster, in the order of the nodes file, and their
 * indices in the order of their ids (topo_index()'s binary search: it
 * runs for every datagram of the tree, on lists of up to BCSD_MAX_NODES).
 */
struct topo_list {
	uint32_t nr;
	struct topo_node node[BCSD_MAX_NODES];
	uint32_t by_id[BCSD_MAX_NODES];	/* node[by_id[j]].id ascending */
};

enum topo_kind {
	TOPO_KARY,			/* k-ary over the list, @fanout */
	TOPO_FILE,			/* the links of a topology file */
};

/*
 * A tree over the @nr nodes of a list.  parent[] is what defines it; the
 * rest is derived from it by every function that makes or changes one.
 * A node's children are in list order.
 */
struct topo_tree {
	enum topo_kind kind;
	uint32_t fanout;		/* TOPO_KARY */
	uint32_t nr;
	uint32_t root;
	uint32_t parent[BCSD_MAX_NODES];	/* TOPO_NONE for the root */
	uint32_t depth[BCSD_MAX_NODES];		/* the root's is 0 */
	uint32_t size[BCSD_MAX_NODES];		/* of the subtree, itself too */
	/* Node i's children are child[first[i]] .. child[first[i + 1] - 1]. */
	uint32_t first[BCSD_MAX_NODES + 1];
	uint32_t child[BCSD_MAX_NODES];
	uint32_t order[BCSD_MAX_NODES];		/* breadth-first, root first */
};

/* Empty @l. */
void topo_list_init(struct topo_list *l);
/*
 * Append node @id at @host (a name or a dotted IPv4 address) and @port
 * (0: the cluster's).  Fails, @l unchanged, on id 0, a bad or too long
 * host name, an id or a host and port already in @l, or a full list.
 */
int topo_list_add(struct topo_list *l, uint32_t id, const char *host,
		  uint16_t port, char *err, size_t errlen);
/*
 * Read a nodes file from stream @f, named @path in messages, into @l:
 * "ID HOST[:PORT]" lines, '#' comments and blank lines.  Fails on the
 * first bad line (what topo_list_add() refuses, a malformed line) or a
 * file without nodes; @l is then partly filled.
 */
int topo_list_read_stream(struct topo_list *l, FILE *f, const char *path,
			  char *err, size_t errlen);
/* The same from file @path; fails too if it cannot be opened. */
int topo_list_read_file(struct topo_list *l, const char *path, char *err,
			size_t errlen);
/* The index of node @id in @l, or -1. */
int topo_index(const struct topo_list *l, uint32_t id);
/*
 * Node @i's name in a topology file, "host:idx" (idx counts the nodes
 * of its host before it in the list), into @buf; returns @buf.
 */
const char *topo_name(const struct topo_list *l, uint32_t i, char *buf,
		      size_t len);

/*
 * The k-ary tree with @fanout (1 .. BCSD_MAX_NODES) over @l rooted at
 * node @root_id: the root, then the other nodes in list order, placed
 * breadth-first (position p has children k*p+1 .. k*p+k).  Fails on an
 * empty list, a bad fanout or a root not in @l.
 */
int topo_tree_kary(struct topo_tree *t, const struct topo_list *l,
		   uint32_t root_id, uint32_t fanout, char *err,
		   size_t errlen);
/*
 * The tree of topology file stream @f (named @path in messages) over @l:
 * "host:idx => child:idx ... ;" statements.  Fails on a syntax error, a
 * name not in @l, a node with two parents or two statements, more than
 * one root or none, a cycle, or a node of @l missing from the file; @t
 * is then no tree.
 */
int topo_tree_read_stream(struct topo_tree *t, const struct topo_list *l,
			  FILE *f, const char *path, char *err,
			  size_t errlen);
/* The same from file @path; fails too if it cannot be opened. */
int topo_tree_read_file(struct topo_tree *t, const struct topo_list *l,
			const char *path, char *err, size_t errlen);
/*
 * Hang @t from node @root_id of @l, the list it was made over: a k-ary
 * tree is made again with that root; a file's tree keeps its links and
 * turns round those on the path from the old root to the new one.
 * Fails, @t unchanged, on a root not in @l.
 */
int topo_tree_reroot(struct topo_tree *t, const struct topo_list *l,
		     uint32_t root_id, char *err, size_t errlen);

/* The queries take a node @i less than @t->nr. */

/* Node @i's parent, or TOPO_NONE for the root. */
uint32_t topo_parent(const struct topo_tree *t, uint32_t i);
/* The number of node @i's children, and in *@child where they are. */
uint32_t topo_children(const struct topo_tree *t, uint32_t i,
		       const uint32_t **child);
/* Node @i's depth, 0 for the root. */
uint32_t topo_depth(const struct topo_tree *t, uint32_t i);
/* The depth of the deepest node (0: the root alone). */
uint32_t topo_height(const struct topo_tree *t);
/* The number of nodes of the subtree of node @i, itself included. */
uint32_t topo_subtree(const struct topo_tree *t, uint32_t i);
/*
 * Check @t from its parent[] alone: one root, every node reached from it
 * exactly once, and the derived fields agree.  0, or -1 with @err.
 */
int topo_check(const struct topo_tree *t, char *err, size_t errlen);

#endif /* BCSD_TOPO_H */

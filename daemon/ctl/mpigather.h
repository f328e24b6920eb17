/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MPI statistics files of a job, gathered from the nodes for
 * `bcsstat mpi --job J` (BCSP_OP_MPI_GATHER and BCSP_MPI_PART in
 * proto.h): each node that holds the job sends a summary of each of its
 * files in parts; here they are put together per node and file.  A
 * gather is done when as many nodes as expected (the nodes the job's map
 * entry counts) have sent all their files, or at its deadline, whatever
 * came by then.  Pure: no I/O and no clock (the caller gives the time),
 * so that the unit test (tests/test_mpigather.c) reaches every path.
 */
#ifndef BCSD_MPIGATHER_H
#define BCSD_MPIGATHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define MPI_GATHER_NODES_MAX	4096		/* nodes answering one gather */
#define MPI_GATHER_BYTES_MAX	(16u << 20)	/* summaries held by one */
#define MPI_GATHER_PARTS_MAX	((BCSP_MPI_FILE_MAX + BCSP_MPI_PART_MAX - 1) / \
				 BCSP_MPI_PART_MAX)

struct json_object;

struct mpi_gather_file {
	uint32_t node;
	uint16_t file;		/* its index among the node's */
	uint32_t size;
	uint64_t parts;		/* bit i: part i came (at i * PART_MAX) */
	uint8_t *data;		/* @size bytes */
};

struct mpi_gather_node {
	uint32_t node;
	uint16_t files;		/* as the node said; 0: it has none */
	uint16_t complete;	/* of them, every part here */
};

struct mpi_gather {
	uint32_t req;		/* the request's id, the parts' @req */
	uint32_t job;
	uint32_t expect;	/* nodes with tasks of the job (the map) */
	/*
	 * Nodes alive as the asker or the master (its reply, in a tree
	 * the only one that knows) hears them (0: not known): each one's
	 * bcs.ko knows the job, so each answers, with files or without.
	 * A job's tasks that have ended leave their files but drop out of
	 * the map's count, so the gather waits for the larger number.
	 */
	uint32_t live;
	uint64_t until_ms;
	struct mpi_gather_node *nodes;
	uint32_t nr_nodes, cap_nodes;
	struct mpi_gather_file *files;
	uint32_t nr_files, cap_files;
	size_t bytes;		/* of the files' data held */
	uint64_t refused;	/* parts that did not fit the others, or room */
};

void mpi_gather_init(struct mpi_gather *g, uint32_t req, uint32_t job,
		     uint32_t expect, uint64_t until_ms);
void mpi_gather_free(struct mpi_gather *g);

/*
 * Part @p (for this gather: the caller checked @p->req and @p->job) from
 * node @node.  Returns 0 (a copy of a part already here included),
 * -EINVAL if it does not fit what the node sent before (another number of
 * files, size, or not on a part's boundary) or -ENOSPC past
 * MPI_GATHER_NODES_MAX or MPI_GATHER_BYTES_MAX, both counted in
 * @refused, or -ENOMEM.
 */
int mpi_gather_add(struct mpi_gather *g, uint32_t node,
		   const struct bcsp_mpi_part *p);

/* The nodes that have sent every part of every file they have. */
uint32_t mpi_gather_answered(const struct mpi_gather *g);

/* The nodes to hear from: the larger of @expect and @live (0: unknown). */
uint32_t mpi_gather_expected(const struct mpi_gather *g);

/*
 * Is it time to answer: the nodes expected (not 0) heard in full, or
 * @until_ms reached?
 */
bool mpi_gather_done(const struct mpi_gather *g, uint64_t now_ms);

/*
 * The answer into @o: "job", "expected" (mpi_gather_expected()),
 * "answered", "complete" (as many answered as expected), "nodes"
 * ([{"node", "files", "complete"}], by node) and "files" ([{"node",
 * "file", "data"}], the complete files, data in base64).  Returns 0 or
 * -ENOMEM.
 */
int mpi_gather_json(struct mpi_gather *g, struct json_object *o);

#endif /* BCSD_MPIGATHER_H */

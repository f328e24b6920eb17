/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tgnode.c: this daemon's part in gathers reduced in the tree
 * (Documentation/filters.rst, "Gathers reduced in the tree"): on the
 * master's command BCSP_CMD_TGATHER, its own answer (its MPI statistics
 * files of the job, as tree/tgather.h's records and histograms, and the
 * distributions bcs.ko keeps of the job's tasks here) merged
 * with those of the children it passed the command to (BCSP_TG_PART),
 * sent up as one answer: to its parent, or from the root to the asker.
 */
#ifndef BCSD_TGNODE_H
#define BCSD_TGNODE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"
#include "tree/tgather.h"

struct bcsd;

/*
 * Bytes of statistics files one gather reads whole (for their
 * histograms) at one node; files past it are summarised.  Read on the
 * daemon's loop, from mpi_dir (a tmpfs, /run): 4 MiB is about a
 * millisecond, short of holding up a strobe.
 */
#define TGNODE_READ_MAX		(4U << 20)

/* Tasks of a job whose bcs.ko distributions one gather reads. */
#define TGNODE_TASKS_MAX	4096U

/* Gathers in flight at once; a new one ends the oldest. */
#define TGNODE_SLOTS		4

struct tgnode_slot {
	bool used;
	uint32_t asker, req, job;
	uint64_t started_ms;
	struct tg_gather g;
};

struct bcsd_tgnode {
	struct bcsp_window cmds;	/* the commands taken (TGATHER) */
	struct tgnode_slot slot[TGNODE_SLOTS];
};

int tgnode_init(struct bcsd *d);
void tgnode_exit(struct bcsd *d);
#endif /* BCSD_TGNODE_H */

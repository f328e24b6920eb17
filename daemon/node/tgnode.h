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

/*
 * An answer sent, kept for the node it went to, which may ask for parts
 * of it again (BCSP_TG_NACK): one per gather slot, so at most
 * TGNODE_SLOTS * TG_BLOB_MAX bytes (about 470 KiB, most answers are a
 * few parts), freed TGNODE_KEEP_MS after the gather's wait would have
 * ended (its receiver's ends a step after it, the asker's too), or when
 * a later answer needs the room.  At most TGNODE_NACKS_MAX asks of it
 * answered, each with the parts it names, once.
 */
#define TGNODE_KEEP_MS		(2 * TG_STEP_MS)
#define TGNODE_NACKS_MAX	TG_ASKS_MAX

struct tgnode_kept {
	uint32_t asker, req, job;	/* the gather's; @buf NULL: none */
	uint32_t to;			/* the node it went to */
	uint32_t flags;			/* BCSP_TG_F_* it went with */
	uint32_t nacks;			/* asks of it answered */
	uint32_t size;
	uint64_t until_ms;		/* freed then */
	uint8_t *buf;
};

struct bcsd_tgnode {
	struct bcsp_window cmds;	/* the commands taken (TGATHER) */
	struct tgnode_slot slot[TGNODE_SLOTS];
	struct tgnode_kept kept[TGNODE_SLOTS];
};

int tgnode_init(struct bcsd *d);
void tgnode_exit(struct bcsd *d);
#endif /* BCSD_TGNODE_H */

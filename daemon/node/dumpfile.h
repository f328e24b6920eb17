/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dumpfile.c: the files of job dumps (collect.c) made safe for a node
 * shared by users: the directory traversable but not listable, each dump
 * readable by root and the job's owner only, created so that no user can
 * point it elsewhere; and who the owner of a job is, learnt from its
 * tasks while they live.  No I/O but the files'; no clock.
 */
#ifndef BCSD_DUMPFILE_H
#define BCSD_DUMPFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The mode of the jobs directory, and of each dump. */
#define DUMP_DIR_MODE		0711
#define DUMP_FILE_MODE		0600

/*
 * mkdir -p @path (parents 0755, @path itself DUMP_DIR_MODE, whatever the
 * umask).  An existing @path owned by this user that others can list or
 * write loses those bits; *@tightened says so.  0 or -errno.
 */
int dumpfile_dir(const char *path, bool *tightened);

/*
 * Write @path atomically: @write(f, @arg) into a temporary file beside it
 * made with O_EXCL (never through a link), mode DUMP_FILE_MODE whatever
 * the umask, owned by @owner (group root), flushed to disk, then renamed
 * over @path (a link at @path is replaced, not followed).  @write returns
 * 0 or -errno; nothing is left behind on failure.  0 or -errno.
 */
int dumpfile_write(const char *path, uid_t owner,
		   int (*write)(FILE *f, void *arg), void *arg,
		   uint64_t *bytes);

/*
 * The owners of jobs: the uid of their tasks, learnt while they live.  A
 * job whose tasks had more than one uid, or none seen, has no owner: its
 * dump is root's alone.  At most DUMP_OWNERS_MAX jobs; more are not
 * learnt (no owner).  Entries of jobs that bcs.ko no longer lists go at
 * the second dumpfile_owners_sweep() that misses them.
 */
#define DUMP_OWNERS_MAX		8192	/* a power of two, > BCS_JOBS_MAX */

struct dump_owner {
	uint32_t job;			/* 0: free */
	uint32_t uid;
	bool mixed;			/* tasks of more than one uid */
	bool dead;			/* forgotten: a free slot on sweep */
	uint8_t missed;			/* sweeps that did not list it */
};

struct dump_owners {
	struct dump_owner *slot;	/* DUMP_OWNERS_MAX, open addressing */
	uint32_t used;
};

int dumpfile_owners_init(struct dump_owners *o);
void dumpfile_owners_free(struct dump_owners *o);
/* Task of job @job has uid @uid. */
void dumpfile_owner_learn(struct dump_owners *o, uint32_t job, uint32_t uid);
/* The owner of @job into *@uid: false if none (unknown, or mixed). */
bool dumpfile_owner(const struct dump_owners *o, uint32_t job, uid_t *uid);
void dumpfile_owner_forget(struct dump_owners *o, uint32_t job);
/*
 * @jobs (@n of them) are the jobs bcs.ko holds: the others are missed
 * once more, and go at the second miss.
 */
void dumpfile_owners_sweep(struct dump_owners *o, const uint32_t *jobs,
			   size_t n);

/*
 * The budget of dumps (a flood: a user alone in a job who loops enable,
 * detach, attach makes a job end, and a dump of up to 1.5 MB written and
 * flushed to disk, at every turn).  A token bucket of bytes for them all:
 * @burst_kb at most, @rate_kb more per second; a dump needs DUMP_MIN_COST
 * in it and takes its size from it, at least DUMP_MIN_COST (so that small
 * ones count too), going into debt if it is larger: so what is written
 * over any time T is at most the burst, the rate times T and one dump.  And per job, one dump per @job_ms, but for the
 * last (the job destroyed), which the bucket alone limits.  A dump
 * refused is counted by the caller; the statistics stay in bcs.ko.
 */
#define DUMP_MIN_COST		262144ULL	/* bytes: a write and an fsync */
#define DUMP_RECENT		64	/* jobs whose last dump is kept */

struct dump_budget {
	uint64_t burst;			/* bytes */
	uint64_t rate;			/* bytes per second */
	uint64_t job_ms;
	int64_t tokens;			/* bytes; below 0: a debt */
	uint64_t at_ms;			/* tokens as of then */
	struct {
		uint32_t job;
		uint64_t ms;
	} recent[DUMP_RECENT];		/* the jobs dumped last, their time */
	uint32_t next;			/* the oldest of recent[] */
};

void dump_budget_init(struct dump_budget *b, uint32_t burst_kb,
		      uint32_t rate_kb, uint32_t job_ms, uint64_t now_ms);
/* May job @job be dumped at @now_ms?  @last: it was destroyed. */
bool dump_budget_may(struct dump_budget *b, uint32_t job, bool last,
		     uint64_t now_ms);
/* A dump of @bytes of job @job was written at @now_ms. */
void dump_budget_spent(struct dump_budget *b, uint32_t job, uint64_t bytes,
		       uint64_t now_ms);

/* The real uid of process @pid (/proc/PID/status): 0 or -errno. */
int dumpfile_task_uid(int pid, uint32_t *uid);

#endif /* BCSD_DUMPFILE_H */

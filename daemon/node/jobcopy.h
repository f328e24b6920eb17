/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jobcopy.c: each job's dump copied to a shared directory (jobs_copy_dir)
 * when the job is destroyed, by a thread of its own: a shared directory
 * (NFS) may be slow or hang, and the loop that sends strobes must not
 * wait for it.  The loop queues a copy and never waits (a full queue is a
 * failure); the thread copies at SCHED_OTHER, whatever bcsd's own policy.
 * A copy is written as a dump is: a temporary file made with O_EXCL
 * (never through a link) in the directory, mode 0600, given to the
 * dump's owner if the file system lets root do that, flushed, renamed
 * over the name.  The directory must not be writable by others, unless
 * sticky.
 */
#ifndef BCSD_JOBCOPY_H
#define BCSD_JOBCOPY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define JOBCOPY_QUEUE		64		/* copies waiting at most */
#define JOBCOPY_BYTES_MAX	(64ULL << 20)	/* the largest dump copied */
#define JOBCOPY_PATH_MAX	512

struct jobcopy {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under @lock. */
	bool stop;
	struct jobcopy_item {
		char src[JOBCOPY_PATH_MAX];
		uid_t owner;
	} q[JOBCOPY_QUEUE];
	unsigned int head, nr;
	uint64_t done, failed;
	char err[256];			/* the last failure */
	char dir[JOBCOPY_PATH_MAX];
};

/*
 * Copy @src (a regular file, not a link, JOBCOPY_BYTES_MAX at most) into
 * directory @dir under its own base name, for @owner.  0, or a negative
 * errno with a message in @err.  What the thread does for each.
 */
int jobcopy_file(const char *dir, const char *src, uid_t owner, char *err,
		 size_t errlen);

/* The thread started, copying into @dir: 0 or a negative errno. */
int jobcopy_start(struct jobcopy *c, const char *dir);
/* Queue a copy of @src; false if the queue is full (counted failed). */
bool jobcopy_queue(struct jobcopy *c, const char *src, uid_t owner);
/* The copies done and failed so far, and the last failure's message. */
void jobcopy_counts(struct jobcopy *c, uint64_t *done, uint64_t *failed,
		    char *err, size_t errlen);
/*
 * The thread stopped: the copies queued are done first, for 2 s at
 * most; a thread still copying then (a hung file system) is left to end
 * with the process.
 */
void jobcopy_stop(struct jobcopy *c);

#endif /* BCSD_JOBCOPY_H */

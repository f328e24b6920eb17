// SPDX-License-Identifier: GPL-2.0
/*
 * Copies of jobs' dumps to a shared directory, off the loop (jobcopy.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "node/dumpfile.h"
#include "node/jobcopy.h"

#define CHUNK		65536

/* @n bytes of @buf to @fd: 0 or -errno. */
static int write_all(int fd, const char *buf, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A new file ".NAME.XXXXXX" in @dfd, O_EXCL: its descriptor or -errno. */
static int open_tmp(int dfd, const char *name, char *tmp, size_t len)
{
	unsigned int tries, v;
	int fd;

	for (tries = 0; tries < 16; tries++) {
		if (getrandom(&v, sizeof(v), 0) != sizeof(v))
			v = (unsigned int)rand();
		snprintf(tmp, len, ".%s.%08x", name, v);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, DUMP_FILE_MODE);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

/* Directory @dir opened, if others cannot write it (or it is sticky). */
static int open_dir(const char *dir)
{
	struct stat sb;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || ((sb.st_mode & (S_IWGRP | S_IWOTH)) &&
			       !(sb.st_mode & S_ISVTX))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int jobcopy_file(const char *dir, const char *src, uid_t owner, char *err,
		 size_t errlen)
{
	const char *name = strrchr(src, '/');
	char tmp[300], *buf = NULL;
	int in = -1, dfd = -1, out = -1, r;
	struct stat sb;
	ssize_t n;

	name = name ? name + 1 : src;
	in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0 || fstat(in, &sb)) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", src, strerror(-r));
		goto out;
	}
	if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > JOBCOPY_BYTES_MAX) {
		r = -EFBIG;
		snprintf(err, errlen, "%s: not a regular file of %llu bytes at most",
			 src, JOBCOPY_BYTES_MAX);
		goto out;
	}
	dfd = open_dir(dir);
	if (dfd < 0) {
		r = dfd;
		snprintf(err, errlen, "%s: %s%s", dir, strerror(-r),
			 r == -EPERM ? " (others can write it, not sticky)" : "");
		goto out;
	}
	out = open_tmp(dfd, name, tmp, sizeof(tmp));
	if (out < 0) {
		r = out;
		snprintf(err, errlen, "cannot create a file in %s: %s", dir,
			 strerror(-r));
		goto out;
	}
	buf = malloc(CHUNK);
	r = buf ? 0 : -ENOMEM;
	/* Root squashed on NFS: the copy stays the directory's user's. */
	if (fchown(out, owner, -1)) {
		/* best effort */
	}
	if (!r && fchmod(out, DUMP_FILE_MODE))
		r = -errno;
	while (!r && (n = read(in, buf, CHUNK)) != 0)
		r = n < 0 ? -errno : write_all(out, buf, (size_t)n);
	if (!r && fsync(out))
		r = -errno;
	if (close(out) && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, name))
		r = -errno;
	if (r) {
		unlinkat(dfd, tmp, 0);
		snprintf(err, errlen, "%s/%s: %s", dir, name, strerror(-r));
	}
out:
	free(buf);
	if (dfd >= 0)
		close(dfd);
	if (in >= 0)
		close(in);
	return r;
}

static void *run(void *arg)
{
	struct jobcopy *c = arg;
	struct jobcopy_item it;
	char err[256];
	int r;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->nr && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		if (!c->nr)
			break;
		it = c->q[c->head];
		c->head = (c->head + 1) % JOBCOPY_QUEUE;
		c->nr--;
		pthread_mutex_unlock(&c->lock);
		r = jobcopy_file(c->dir, it.src, it.owner, err, sizeof(err));
		pthread_mutex_lock(&c->lock);
		if (r) {
			c->failed++;
			snprintf(c->err, sizeof(c->err), "%s", err);
		} else {
			c->done++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int jobcopy_start(struct jobcopy *c, const char *dir)
{
	struct sched_param sp = { .sched_priority = 0 };
	pthread_attr_t attr;
	int r;

	memset(c, 0, sizeof(*c));
	if (strlen(dir) >= sizeof(c->dir))
		return -ENAMETOOLONG;
	strcpy(c->dir, dir);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	/* An ordinary thread, whatever bcsd's policy (rt_priority). */
	r = pthread_attr_init(&attr);
	if (!r)
		r = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	if (!r)
		r = pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	if (!r)
		r = pthread_attr_setschedparam(&attr, &sp);
	if (!r)
		r = pthread_attr_setstacksize(&attr, 256 * 1024);
	if (!r)
		r = pthread_create(&c->thread, &attr, run, c);
	pthread_attr_destroy(&attr);
	c->started = !r;
	return -r;
}

bool jobcopy_queue(struct jobcopy *c, const char *src, uid_t owner)
{
	struct jobcopy_item *it;
	bool ok;

	pthread_mutex_lock(&c->lock);
	ok = c->started && c->nr < JOBCOPY_QUEUE &&
	     strlen(src) < sizeof(it->src);
	if (ok) {
		it = &c->q[(c->head + c->nr) % JOBCOPY_QUEUE];
		strcpy(it->src, src);
		it->owner = owner;
		c->nr++;
		pthread_cond_signal(&c->cond);
	} else {
		c->failed++;
		snprintf(c->err, sizeof(c->err), "%s: %s", src,
			 c->started ? "the queue of copies is full" :
			 "no copying thread");
	}
	pthread_mutex_unlock(&c->lock);
	return ok;
}

void jobcopy_counts(struct jobcopy *c, uint64_t *done, uint64_t *failed,
		    char *err, size_t errlen)
{
	pthread_mutex_lock(&c->lock);
	*done = c->done;
	*failed = c->failed;
	snprintf(err, errlen, "%s", c->err);
	pthread_mutex_unlock(&c->lock);
}

void jobcopy_stop(struct jobcopy *c)
{
	struct timespec ts;

	if (!c->started)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	if (pthread_timedjoin_np(c->thread, NULL, &ts))
		pthread_detach(c->thread);
	c->started = false;
}

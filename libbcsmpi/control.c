// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcsmpi: the control file of a job.  It is created whole under a
 * temporary name and linked into place, so that whoever opens it finds
 * it complete: the processes of a job starting together, and bcsctl.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/bcs_hist.h>

#include "control.h"
#include "select.h"

const char *bcsmpi_dir(void)
{
	const char *d = getenv("BCS_MPI_DIR");

	return d && *d ? d : BCSMPI_DIR_DEFAULT;
}

int bcsmpi_make_dirs(const char *dir)
{
	char p[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i])
			continue;
		p[i] = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		p[i] = i < n ? '/' : 0;
	}
	return 0;
}

/*
 * Is @path a directory of this user's that no one else may write: 1, 0
 * (it is not), or a negative errno (-ENOENT: none).
 */
static int private_dir(const char *path)
{
	struct stat sb;
	int fd, r;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK |
		  O_CLOEXEC);
	/* Not one, a link, another user's that this one cannot read. */
	if (fd < 0)
		return errno == ENOTDIR || errno == ELOOP ||
		       errno == EACCES ? 0 : -errno;
	r = fstat(fd, &sb) ? -errno :
	    sb.st_uid == geteuid() && !(sb.st_mode & (S_IWGRP | S_IWOTH));
	close(fd);
	return r;
}

int bcsmpi_job_dir(const char *dir, const char *job, unsigned int wait_ms,
		   char *out, size_t outlen, int *own, char *err,
		   size_t errlen)
{
	const struct timespec step = { 0, 20 * 1000 * 1000 };
	unsigned int waited = 0;
	int r, flat = -1;

	*own = 0;
	if (!*job || strchr(job, '/') || !strcmp(job, ".") ||
	    !strcmp(job, "..")) {
		snprintf(err, errlen, "job \"%s\" names no directory", job);
		return -EINVAL;
	}
	if (snprintf(out, outlen, "%s/%s", dir, job) >= (int)outlen) {
		snprintf(err, errlen, "the directory name in %s is too long",
			 dir);
		return -ENAMETOOLONG;
	}
	for (;;) {
		r = private_dir(out);
		if (r == 1)
			return 0;
		if (!r) {
			snprintf(err, errlen, "%s is not a directory of uid %u "
				 "that only it may write: not used", out,
				 (unsigned int)geteuid());
			return -EPERM;
		}
		if (r != -ENOENT) {
			snprintf(err, errlen, "%s: %s", out, strerror(-r));
			return r;
		}
		if (flat < 0) {
			/* A directory of one's own: the files go there. */
			flat = private_dir(dir);
			if (flat == -ENOENT)
				flat = !bcsmpi_make_dirs(dir) &&
				       private_dir(dir) == 1;
			if (flat == 1) {
				snprintf(out, outlen, "%s", dir);
				*own = 1;
				return 0;
			}
		}
		if (waited >= wait_ms)
			break;
		nanosleep(&step, NULL);
		waited += 20;
	}
	snprintf(err, errlen, "no directory %s of uid %u after %u ms (bcsd "
		 "makes it for the job's user once the job has tasks here)",
		 out, (unsigned int)geteuid(), wait_ms);
	return -ETIMEDOUT;
}

/* Create @path, never set, unless it exists. */
static int create(const char *path)
{
	struct bcs_mpi_control c = {
		.magic = BCS_MPI_CTL_MAGIC,
		.version = BCS_MPI_CTL_VERSION,
		.size = sizeof(c),
	};
	char tmp[PATH_MAX];
	ssize_t n;
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* Changed by its creator (the job's user, or root) and root. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -errno;
	n = write(fd, &c, sizeof(c));
	if (n != (ssize_t)sizeof(c))
		r = n < 0 ? -errno : -EIO;
	close(fd);
	if (!r && link(tmp, path) && errno != EEXIST)
		r = -errno;
	unlink(tmp);
	return r;
}

int bcsmpi_control_open(const char *dir, const char *job, int flags,
			struct bcs_mpi_control **out, char *err,
			size_t errlen)
{
	int writable = flags & BCSMPI_CTL_WRITE;
	int oflags = (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK |
		     O_CLOEXEC;
	char path[PATH_MAX];
	struct bcs_mpi_control *c;
	struct stat sb;
	int fd, r;

	*out = NULL;
	if (snprintf(path, sizeof(path), "%s/%s.control", dir, job) >=
	    (int)sizeof(path) - 16) {
		snprintf(err, errlen, "the control file name in %s is too "
			 "long", dir);
		return -ENAMETOOLONG;
	}
	r = flags & BCSMPI_CTL_NOCREATE ? 0 : bcsmpi_make_dirs(dir);
	if (r) {
		snprintf(err, errlen, "cannot create %s: %s", dir,
			 strerror(-r));
		return r;
	}
	/* Never blocks: a FIFO opens at once (and is refused below). */
	fd = open(path, oflags);
	if (fd < 0 && errno == ENOENT && !(flags & BCSMPI_CTL_NOCREATE)) {
		r = create(path);
		if (r) {
			snprintf(err, errlen, "cannot create %s: %s", path,
				 strerror(-r));
			return r;
		}
		fd = open(path, oflags);
	}
	if (fd < 0 || fstat(fd, &sb)) {
		r = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size != sizeof(*c)) {
		close(fd);
		snprintf(err, errlen, "%s: not a control file of this "
			 "version", path);
		return -EINVAL;
	}
	/*
	 * Mapped only if no one else can truncate it under the mapping (a
	 * SIGBUS at the next MPI call) or change it: root's (bcsd's) or
	 * this user's own; written only under one name (not a file linked
	 * here from elsewhere).
	 */
	if ((sb.st_uid && sb.st_uid != geteuid()) ||
	    (writable && sb.st_nlink != 1)) {
		close(fd);
		snprintf(err, errlen, "%s: owned by uid %u, not by root or "
			 "uid %u (or linked elsewhere): not trusted", path,
			 (unsigned int)sb.st_uid, (unsigned int)geteuid());
		return -EPERM;
	}
	c = mmap(NULL, sizeof(*c), PROT_READ | (writable ? PROT_WRITE : 0),
		 MAP_SHARED, fd, 0);
	if (c == MAP_FAILED) {
		r = -errno;
		close(fd);
		snprintf(err, errlen, "cannot map %s: %s", path, strerror(-r));
		return r;
	}
	if (c->magic != BCS_MPI_CTL_MAGIC || c->version != BCS_MPI_CTL_VERSION ||
	    c->size != sizeof(*c)) {
		bcsmpi_control_close(c, fd);
		snprintf(err, errlen, "%s: not a control file of this "
			 "version", path);
		return -EINVAL;
	}
	*out = c;
	return fd;
}

void bcsmpi_control_close(struct bcs_mpi_control *c, int fd)
{
	if (c)
		munmap(c, sizeof(*c));
	if (fd >= 0)
		close(fd);
}

int bcsmpi_control_read(const struct bcs_mpi_control *c,
			struct bcs_mpi_control *copy)
{
	uint32_t g = __atomic_load_n(&c->generation, __ATOMIC_ACQUIRE);

	if (g & 1)
		return -EAGAIN;
	memcpy(copy, c, sizeof(*copy));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&c->generation, __ATOMIC_RELAXED) != g)
		return -EAGAIN;
	copy->generation = g;
	copy->stats[sizeof(copy->stats) - 1] = 0;
	return 0;
}

int bcs_mpi_control_set(const char *dir, const char *job, int off,
			const char *stats, int sub_bits, char *err,
			size_t errlen)
{
	return bcs_mpi_control_set_tries(dir, job, off, stats, sub_bits,
					 BCSMPI_CTL_LOCK_TRIES, err, errlen);
}

int bcs_mpi_control_set_tries(const char *dir, const char *job, int off,
			      const char *stats, int sub_bits, int lock_tries,
			      char *err, size_t errlen)
{
	static const char prefix[] = "BCS_MPI_STATS: ";
	struct bcsmpi_select sel;
	struct bcs_mpi_control *c;
	char msg[256];
	uint32_t g;
	int fd, i;

	if (stats && strlen(stats) >= BCS_MPI_CTL_STATS_LEN) {
		snprintf(err, errlen, "the selection is longer than %d "
			 "characters", (int)BCS_MPI_CTL_STATS_LEN - 1);
		return -EINVAL;
	}
	if (stats && bcsmpi_select_parse(stats, NULL, NULL, &sel, msg,
					 sizeof(msg))) {
		snprintf(err, errlen, "%s", strncmp(msg, prefix,
			 sizeof(prefix) - 1) ? msg : msg + sizeof(prefix) - 1);
		return -EINVAL;
	}
	if (sub_bits > BCS_HIST_SUB_BITS_MAX) {
		snprintf(err, errlen, "resolution %d is not 0 .. %d", sub_bits,
			 BCS_HIST_SUB_BITS_MAX);
		return -EINVAL;
	}
	fd = bcsmpi_control_open(dir, job, BCSMPI_CTL_WRITE, &c, err,
				 errlen);
	if (fd < 0)
		return fd;
	/*
	 * Anyone who can read the file can flock() it: never wait for a
	 * lock for ever, a few tries at most (bcsd: one).
	 */
	for (i = 0; flock(fd, LOCK_EX | LOCK_NB); i++) {
		int r = -errno;

		if (r == -EWOULDBLOCK && i + 1 < lock_tries) {
			usleep(BCSMPI_CTL_LOCK_WAIT_US);
			continue;
		}
		bcsmpi_control_close(c, fd);
		snprintf(err, errlen, "cannot lock the control file: %s",
			 r == -EWOULDBLOCK ? "another process holds it" :
			 strerror(-r));
		return r == -EWOULDBLOCK ? -EBUSY : r;
	}
	/*
	 * Odd while the rest changes (already odd if a writer died
	 * there); even again, and new, once done.
	 */
	g = c->generation | 1;
	__atomic_store_n(&c->generation, g, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (stats) {
		memset(c->stats, 0, sizeof(c->stats));
		memcpy(c->stats, stats, strlen(stats));
	}
	if (off)
		c->flags |= BCS_MPI_CTL_OFF;
	else
		c->flags &= ~BCS_MPI_CTL_OFF;
	if (sub_bits >= 0) {
		c->sub_bits = (uint32_t)sub_bits;
		c->flags |= BCS_MPI_CTL_SUB_BITS;
	}
	/* Never back to 0, "never set", when it wraps. */
	__atomic_store_n(&c->generation, g + 1 ? g + 1 : 2, __ATOMIC_RELEASE);
	bcsmpi_control_close(c, fd);	/* the lock goes with the file */
	return 0;
}

int bcs_mpi_control_remove(const char *dir, const char *job)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s.control", dir, job) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return unlink(path) ? -errno : 0;
}

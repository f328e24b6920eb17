// SPDX-License-Identifier: GPL-2.0
/*
 * The MPI profiling directory of this node (mpidir.h).  bcsd runs as
 * root and the files here are its users': it never follows a symbolic
 * link here (O_NOFOLLOW, and *at() calls from descriptors of checked
 * directories), never blocks opening one (O_NONBLOCK: a FIFO opens at
 * once and is refused by its type), trusts a file only of the owner it
 * expects (fstat), reads a statistics file's header and records only
 * (whatever size it claims) or, within a budget of bytes the caller
 * sets, the whole of a file whose size is known (fstat), never waits for a lock a user can hold, and
 * maps only files of its own that no user can truncate.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <stddef.h>

#include <linux/bcs_mpi.h>

#include "libbcsmpi/control.h"
#include "libbcsmpi/mpifile.h"
#include "core/log.h"
#include "node/mpidir.h"

#define OPEN_DIR	(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | \
			 O_CLOEXEC)
#define OPEN_FILE	(O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* mpi_dir itself: root's, given by the configuration. */
static int open_top(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* @top/JOB, a directory (-ENOTDIR: something else), its stat in @sb. */
static int open_job(int top, uint32_t job, struct stat *sb)
{
	char id[16];
	int fd;

	snprintf(id, sizeof(id), "%u", job);
	fd = openat(top, id, OPEN_DIR);
	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fstat(fd, sb)) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* Is @name in @dfd a control file of bcsd's, that only it can change? */
static bool control_ok(int dfd, const char *name)
{
	struct stat sb;
	bool ok;
	int fd;

	fd = openat(dfd, name, OPEN_FILE);
	if (fd < 0)
		return false;
	ok = !fstat(fd, &sb) && S_ISREG(sb.st_mode) &&
	     sb.st_uid == geteuid() && sb.st_nlink == 1 &&
	     sb.st_size == sizeof(struct bcs_mpi_control) &&
	     !(sb.st_mode & (S_IWGRP | S_IWOTH));
	close(fd);
	return ok;
}

/*
 * A control file of bcsd's as @name in @dfd, whatever was there: a copy
 * of @name in @from if that is bcsd's (set before the job had its
 * directory), else never set.
 */
static int control_create(int dfd, const char *name, int from)
{
	struct bcs_mpi_control c = {
		.magic = BCS_MPI_CTL_MAGIC,
		.version = BCS_MPI_CTL_VERSION,
		.size = sizeof(c),
	};
	struct bcs_mpi_control set;
	char tmp[64];
	ssize_t n;
	int fd, r = 0;

	if (from >= 0 && control_ok(from, name)) {
		fd = openat(from, name, OPEN_FILE);
		/* Not being written (odd): a writer is bcsd itself. */
		if (fd >= 0 && pread(fd, &set, sizeof(set), 0) ==
		    (ssize_t)sizeof(set) && set.magic == c.magic &&
		    set.version == c.version && set.size == c.size &&
		    !(set.generation & 1))
			c = set;
		if (fd >= 0)
			close(fd);
	}

	snprintf(tmp, sizeof(tmp), "%s.bcsd.tmp", name);
	/* Whatever a user left under that name; a link is not followed. */
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644))
		r = -errno;
	n = write(fd, &c, sizeof(c));
	if (!r && n != (ssize_t)sizeof(c))
		r = n < 0 ? -errno : -EIO;
	close(fd);
	if (!r && renameat(dfd, tmp, dfd, name))
		r = -errno;
	if (r)
		unlinkat(dfd, tmp, 0);
	return r;
}

int mpidir_prepare(const char *dir, uint32_t job, uid_t uid, gid_t gid,
		   char *err, size_t errlen)
{
	char id[16], name[32], stale[64];
	struct timespec ts;
	struct stat sb;
	int top, jfd, r;

	snprintf(id, sizeof(id), "%u", job);
	snprintf(name, sizeof(name), "%u.control", job);
	r = bcsmpi_make_dirs(dir);
	top = r ? r : open_top(dir);
	if (top < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-top));
		return top;
	}
	jfd = open_job(top, job, &sb);
	/* Made for bcsd's own user (root) before the task took its own. */
	if (jfd >= 0 && sb.st_uid != uid && sb.st_uid == geteuid()) {
		if ((!control_ok(jfd, name) && control_create(jfd, name, top)) ||
		    fchmod(jfd, 0700) || fchown(jfd, uid, gid)) {
			r = -errno;
			snprintf(err, errlen, "cannot give %s/%s to uid %u: %s",
				 dir, id, (unsigned int)uid, strerror(-r));
			goto out_job;
		}
		sb.st_uid = uid;
	}
	if (jfd == -ENOTDIR || (jfd >= 0 && sb.st_uid != uid)) {
		/* An earlier job's of the same id, another user's: kept. */
		if (jfd >= 0)
			close(jfd);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(stale, sizeof(stale), ".stale.%u.%lld.%ld", job,
			 (long long)ts.tv_sec, ts.tv_nsec);
		if (renameat(top, id, top, stale)) {
			r = -errno;
			snprintf(err, errlen, "%s/%s (another user's) not moved "
				 "away: %s", dir, id, strerror(-r));
			goto out;
		}
		pr_notice("job %u: %s/%s of another user moved to %s", job,
			  dir, id, stale);
		jfd = -ENOENT;
	}
	if (jfd == -ENOENT) {
		/* bcsd's until the control file is in, then the user's. */
		if (mkdirat(top, id, 0700) && errno != EEXIST) {
			r = -errno;
			snprintf(err, errlen, "cannot create %s/%s: %s", dir, id,
				 strerror(-r));
			goto out;
		}
		jfd = open_job(top, job, &sb);
		if (jfd >= 0 && sb.st_uid != uid &&
		    (fchmod(jfd, 0700) ||
		     (!control_ok(jfd, name) &&
		      control_create(jfd, name, top)) ||
		     fchown(jfd, uid, gid))) {
			r = -errno;
			snprintf(err, errlen, "cannot give %s/%s to uid %u: %s",
				 dir, id, (unsigned int)uid, strerror(-r));
			goto out_job;
		}
	}
	if (jfd < 0) {
		r = jfd;
		snprintf(err, errlen, "%s/%s: %s", dir, id, strerror(-r));
		goto out;
	}
	r = control_ok(jfd, name) ? 0 : control_create(jfd, name, top);
	if (r)
		snprintf(err, errlen, "cannot create %s/%s/%s: %s", dir, id,
			 name, strerror(-r));
out_job:
	close(jfd);
out:
	close(top);
	return r;
}

int mpidir_owner(const char *dir, uint32_t job, uid_t *uid)
{
	struct stat sb;
	int top, jfd;

	top = open_top(dir);
	if (top < 0)
		return top;
	jfd = open_job(top, job, &sb);
	close(top);
	if (jfd < 0)
		return jfd;
	close(jfd);
	*uid = sb.st_uid;
	return 0;
}

int mpidir_control_set(const char *dir, uint32_t job, int off,
		       const char *stats, int sub_bits, char *err,
		       size_t errlen)
{
	char id[16], name[32], jd[4096];
	struct stat sb;
	int top, jfd, r = -ENOENT, r2;

	snprintf(id, sizeof(id), "%u", job);
	snprintf(name, sizeof(name), "%u.control", job);
	snprintf(err, errlen, "no directory of job %u in %s", job, dir);
	if (snprintf(jd, sizeof(jd), "%s/%s", dir, id) >= (int)sizeof(jd))
		return -ENAMETOOLONG;
	top = open_top(dir);
	if (top < 0)
		return top;
	jfd = open_job(top, job, &sb);
	if (jfd >= 0) {
		/* The user may have replaced it: bcsd's own again. */
		r = control_ok(jfd, name) ? 0 : control_create(jfd, name, -1);
		close(jfd);
		if (r)
			snprintf(err, errlen, "cannot create %s/%s: %s", jd,
				 name, strerror(-r));
		else
			r = bcs_mpi_control_set_tries(jd, id, off, stats,
						      sub_bits, 1, err,
						      errlen);
	}
	/*
	 * The flat file: of root's processes that started without the
	 * job's directory, or, with no directory yet (no task here), kept
	 * for it (mpidir_prepare() copies it).
	 */
	if (jfd < 0 || !fstatat(top, name, &sb, AT_SYMLINK_NOFOLLOW)) {
		r2 = bcs_mpi_control_set_tries(dir, id, off, stats, sub_bits,
					       1, err, errlen);
		if (r == -ENOENT || !r2)
			r = r2;
	}
	close(top);
	return r;
}

int mpidir_control_remove(const char *dir, uint32_t job)
{
	char name[32];
	struct stat sb;
	int top, jfd, r = -ENOENT;

	snprintf(name, sizeof(name), "%u.control", job);
	top = open_top(dir);
	if (top < 0)
		return top;
	jfd = open_job(top, job, &sb);
	if (jfd >= 0) {
		if (!unlinkat(jfd, name, 0))
			r = 0;
		else if (errno != ENOENT)
			r = -errno;
		close(jfd);
	}
	if (!unlinkat(top, name, 0))
		r = r == -ENOENT ? 0 : r;
	else if (errno != ENOENT)
		r = -errno;
	close(top);
	return r;
}

/* A file of a job's to read: in which directory, whose, its name. */
struct entry {
	int dfd;
	uid_t uid;
	char name[256];
};

/* Is @name one of job @id's statistics files: "JOB.*.bcsmpi"? */
static bool job_file(const char *name, const char *id)
{
	size_t n = strlen(name), j = strlen(id);

	return n > j + 7 && !strncmp(name, id, j) && name[j] == '.' &&
	       !strcmp(name + n - 7, ".bcsmpi");
}

/* Job @id's file names in @dfd into @e (at *@n, @cap at most). */
static void list(int dfd, const char *id, uid_t uid, struct entry *e,
		 unsigned int *n, unsigned int cap)
{
	struct dirent *de;
	unsigned int seen = 0;
	int fd = dup(dfd);
	DIR *dp;

	if (fd < 0)
		return;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return;
	}
	while (*n < cap && seen++ < MPIDIR_SCAN_MAX && (de = readdir(dp))) {
		if (!job_file(de->d_name, id) ||
		    strlen(de->d_name) >= sizeof(e->name))
			continue;
		e[*n].dfd = dfd;
		e[*n].uid = uid;
		snprintf(e[*n].name, sizeof(e->name), "%s", de->d_name);
		(*n)++;
	}
	closedir(dp);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name,
		      ((const struct entry *)b)->name);
}

/*
 * All of the @size bytes of @fd into a new buffer at *@out, or -EINVAL if
 * it turns out shorter (a file being truncated): at most @size, whatever
 * the file becomes while it is read.
 */
static int whole(int fd, size_t size, void **out)
{
	char *buf = malloc(size ? size : 1);
	size_t got;
	ssize_t n;
	int r;

	if (!buf)
		return -ENOMEM;
	for (got = 0; got < size; got += (size_t)n) {
		do
			n = pread(fd, buf + got, size - got, (off_t)got);
		while (n < 0 && errno == EINTR);
		if (n > 0)
			continue;
		r = n ? -errno : -EINVAL;
		free(buf);
		return r;
	}
	*out = buf;
	return 0;
}

/*
 * The summary of @e into @s, or the whole file (@s->whole) if it has at
 * most *@budget bytes, taken from *@budget: 0, or a negative errno with
 * @err.
 */
static int summary(const struct entry *e, struct mpidir_summary *s,
		   size_t file_max, size_t *budget, char *err, size_t errlen)
{
	struct stat sb;
	int fd, r;

	fd = openat(e->dfd, e->name, OPEN_FILE);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", e->name, strerror(-r));
		return r;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != e->uid) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file of uid %u",
			 e->name, (unsigned int)e->uid);
		return -EPERM;
	}
	s->whole = false;
	if (budget && sb.st_size >= (off_t)sizeof(struct bcs_mpi_file_header) &&
	    (uint64_t)sb.st_size <= *budget) {
		r = whole(fd, (size_t)sb.st_size, &s->data);
		if (!r) {
			close(fd);
			s->len = (size_t)sb.st_size;
			s->whole = true;
			*budget -= s->len;
			return 0;
		}
	}
	r = bcs_mpi_stats_summary_fd(fd, e->name, &s->data, &s->len, err,
				     errlen);
	close(fd);
	if (!r && s->len > file_max) {
		free(s->data);
		s->data = NULL;
		snprintf(err, errlen, "%s: its summary is over %zu bytes",
			 e->name, file_max);
		r = -EFBIG;
	}
	return r;
}

/*
 * The job's files to read (see mpidir_summaries()) into *@e, their number
 * into *@n, the directories they are in into @fds (top, job's or -1), to
 * close with entries_end().  0, or a negative errno (*@e NULL, nothing
 * open; no mpi_dir is none).
 */
static int entries(const char *dir, uint32_t job, struct entry **e,
		   unsigned int *n, int fds[2])
{
	unsigned int cap = 2 * MPIDIR_SCAN_MAX;
	struct stat sb;
	char id[16];

	*e = NULL;
	*n = 0;
	snprintf(id, sizeof(id), "%u", job);
	fds[0] = open_top(dir);
	if (fds[0] < 0)
		return fds[0] == -ENOENT ? 0 : fds[0];
	*e = calloc(cap, sizeof(**e));
	if (!*e) {
		close(fds[0]);
		return -ENOMEM;
	}
	fds[1] = open_job(fds[0], job, &sb);
	if (fds[1] >= 0)
		list(fds[1], id, sb.st_uid, *e, n, cap);
	/* Files in mpi_dir itself: only root's processes can write there. */
	list(fds[0], id, geteuid(), *e, n, cap);
	return 0;
}

static void entries_end(struct entry *e, const int fds[2])
{
	if (!e)
		return;
	free(e);
	if (fds[1] >= 0)
		close(fds[1]);
	close(fds[0]);
}

int mpidir_summaries(const char *dir, uint32_t job,
		     struct mpidir_summary *out, unsigned int max,
		     size_t file_max, unsigned int *skipped)
{
	return mpidir_read(dir, job, out, max, file_max, NULL, skipped);
}

int mpidir_read(const char *dir, uint32_t job, struct mpidir_summary *out,
		unsigned int max, size_t file_max, size_t *budget,
		unsigned int *skipped)
{
	unsigned int n, i, k = 0;
	struct entry *e;
	char err[512];
	int fds[2], r;

	*skipped = 0;
	r = entries(dir, job, &e, &n, fds);
	if (r || !e)
		return r;
	qsort(e, n, sizeof(*e), by_name);
	for (i = 0; i < n && k < max; i++) {
		if (summary(&e[i], &out[k], file_max, budget, err,
			    sizeof(err))) {
			(*skipped)++;
			pr_debug("job %u: MPI statistics not sent: %s", job,
				 err);
			continue;
		}
		k++;
	}
	entries_end(e, fds);
	return (int)k;
}

/* The rank and pid of @e's header into @out: 0, or a negative errno. */
static int rank_of(const struct entry *e, struct mpidir_rank *out)
{
	struct bcs_mpi_file_header h;
	struct stat sb;
	ssize_t n;
	int fd;

	fd = openat(e->dfd, e->name, OPEN_FILE);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != e->uid) {
		close(fd);
		return -EPERM;
	}
	n = pread(fd, &h, sizeof(h), 0);
	close(fd);
	/* The magic is written last: a file in MPI_Init has none yet. */
	if (n < (ssize_t)(offsetof(struct bcs_mpi_file_header, pid) +
			  sizeof(h.pid)) || h.magic != BCS_MPI_MAGIC ||
	    h.rank < 0 || h.pid <= 0)
		return -EINVAL;
	out->rank = (uint32_t)h.rank;
	out->pid = h.pid;
	return 0;
}

int mpidir_ranks(const char *dir, uint32_t job, struct mpidir_rank *out,
		 unsigned int max)
{
	unsigned int n, i, k = 0;
	struct entry *e;
	int fds[2], r;

	r = entries(dir, job, &e, &n, fds);
	if (r || !e)
		return r;
	for (i = 0; i < n && k < max; i++)
		if (!rank_of(&e[i], &out[k]))
			k++;
	entries_end(e, fds);
	return (int)k;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Aging what jobs leave on a node (retention.h).  bcsd runs as root and
 * a job's directory in mpi_dir is its user's: nothing here follows a
 * symbolic link (O_NOFOLLOW, fstatat AT_SYMLINK_NOFOLLOW, and *at()
 * calls from a checked directory's descriptor), blocks opening (a FIFO
 * is never opened: entries are looked at with fstatat), or removes a
 * name it did not make.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/retention.h"

/* Any owner: jobs_dir is bcsd's, and only it writes there. */
#define ANY_UID		((uid_t)-1)

#define OPEN_DIR	(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | \
			 O_CLOEXEC)

/* The job id @s starts with, digits up to @end (or '\0'); 0 if none. */
static uint32_t job_of(const char *s, const char **end)
{
	unsigned long v;
	char *e;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno || !v || v > UINT32_MAX)
		return 0;
	*end = e;
	return (uint32_t)v;
}

/* "JOB.*.bcsmpi", "JOB.control" or "JOB.control.bcsd.tmp": its job. */
static uint32_t mpi_file_job(const char *name)
{
	size_t n = strlen(name);
	const char *e;
	uint32_t job = job_of(name, &e);

	if (!job || *e != '.')
		return 0;
	if (!strcmp(e, ".control") || !strcmp(e, ".control.bcsd.tmp"))
		return job;
	if (n > (size_t)(e - name) + 7 && !strcmp(name + n - 7, ".bcsmpi"))
		return job;
	return 0;
}

/* "JOB-HOST.json", or "JOB-HOST.json.XXXXXX" of mkostemp(). */
static bool dump_name(const char *name, const char *host)
{
	size_t h = strlen(host);
	const char *e, *x;

	if (!job_of(name, &e) || *e != '-' || strncmp(e + 1, host, h) ||
	    strncmp(e + 1 + h, ".json", 5))
		return false;
	x = e + 1 + h + 5;
	if (!*x)
		return true;
	if (*x != '.' || strlen(x + 1) != 6)
		return false;
	for (x++; *x; x++)
		if (!((*x >= 'a' && *x <= 'z') || (*x >= 'A' && *x <= 'Z') ||
		      (*x >= '0' && *x <= '9')))
			return false;
	return true;
}

static void fail(struct retention *r, const char *what, const char *name,
		 int err)
{
	r->failed++;
	snprintf(r->err, sizeof(r->err), "%s %s: %s", what, name,
		 strerror(err));
}

/*
 * @name in @dfd, a file (or link) of owner @uid (or bcsd's user, or any
 * with ANY_UID), if older than the cut-off.
 */
static void age_file(struct retention *r, int dfd, const char *name,
		     uid_t uid)
{
	struct stat sb;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW))
		return;		/* gone meanwhile */
	if (S_ISDIR(sb.st_mode) || sb.st_mtime >= r->cutoff ||
	    (uid != ANY_UID && sb.st_uid != uid && sb.st_uid != geteuid()))
		return;
	if (unlinkat(dfd, name, 0)) {
		if (errno != ENOENT)
			fail(r, "cannot remove", name, errno);
		return;
	}
	r->removed++;
}

/*
 * The job's directory @name of mpi_dir (@top): its files of @job aged,
 * then itself removed if then empty and older than the cut-off; not if
 * @live_checked and the job is live.  Returns the entries looked at.
 */
static unsigned int age_job_dir(struct retention *r, int top,
				const char *name, uint32_t job,
				bool live_checked)
{
	unsigned int seen = 0;
	struct dirent *de;
	struct stat sb;
	int fd, dup_fd;
	DIR *dp;

	if (live_checked && r->live && r->live(r->live_arg, job))
		return 0;
	fd = openat(top, name, OPEN_DIR);
	if (fd < 0)
		return 0;	/* not a directory, or gone */
	if (fstat(fd, &sb) || sb.st_mtime >= r->cutoff) {
		close(fd);
		return 0;
	}
	dup_fd = dup(fd);
	dp = dup_fd < 0 ? NULL : fdopendir(dup_fd);
	if (!dp) {
		if (dup_fd >= 0)
			close(dup_fd);
		close(fd);
		return 0;
	}
	while (seen++ < RETENTION_JOB_ENTRIES && (de = readdir(dp)))
		if (mpi_file_job(de->d_name) == job)
			age_file(r, fd, de->d_name, sb.st_uid);
	closedir(dp);
	close(fd);
	/* Not empty (a file of another name, or kept): left, no failure. */
	if (!unlinkat(top, name, AT_REMOVEDIR))
		r->removed++;
	return seen;
}

/* @dir opened as a directory that others than its owner cannot write. */
static DIR *open_top(struct retention *r, const char *dir)
{
	struct stat sb;
	DIR *dp;
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			fail(r, "cannot open", dir, errno);
		return NULL;
	}
	if (fstat(fd, &sb) || sb.st_uid != geteuid() ||
	    (sb.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		fail(r, "not aged (not bcsd's, or others can write it):", dir,
		     EPERM);
		return NULL;
	}
	dp = fdopendir(fd);
	if (!dp)
		close(fd);
	return dp;
}

void retention_stop(struct retention *r)
{
	if (r->dir)
		closedir(r->dir);
	r->dir = NULL;
	r->phase = 0;
	r->active = false;
}

/* The next phase's directory opened; false: the pass is done. */
static bool open_phase(struct retention *r)
{
	const char *dir;

	while (r->phase < 2) {
		r->phase++;
		dir = r->phase == 1 ? r->jobs_dir : r->mpi_dir;
		if (dir && *dir) {
			r->dir = open_top(r, dir);
			if (r->dir)
				return true;
		}
	}
	r->phase = 0;
	return false;
}

void retention_start(struct retention *r, time_t cutoff)
{
	retention_stop(r);
	r->cutoff = cutoff;
	r->active = true;
}

/* Entry @name of mpi_dir (@top); the entries looked at. */
static unsigned int age_mpi_entry(struct retention *r, int top,
				  const char *name)
{
	const char *e;
	uint32_t job;

	if (!strncmp(name, ".stale.", 7)) {
		/* An earlier job's (mpidir_prepare()): never live. */
		job = job_of(name + 7, &e);
		return job && *e == '.' ? age_job_dir(r, top, name, job, false) :
		       0;
	}
	job = job_of(name, &e);
	if (job && !*e)
		return age_job_dir(r, top, name, job, true);
	job = mpi_file_job(name);
	/* The flat files: only root's processes write there. */
	if (job && !(r->live && r->live(r->live_arg, job)))
		age_file(r, top, name, geteuid());
	return 0;
}

bool retention_step(struct retention *r)
{
	unsigned int n = 0;
	struct dirent *de;

	while (r->active && n < RETENTION_STEP) {
		if (!r->dir && !open_phase(r)) {
			r->active = false;
			break;
		}
		de = readdir(r->dir);
		if (!de) {
			closedir(r->dir);
			r->dir = NULL;
			continue;
		}
		n++;
		if (r->phase == 1) {
			if (r->host && dump_name(de->d_name, r->host))
				age_file(r, dirfd(r->dir), de->d_name, ANY_UID);
		} else {
			n += age_mpi_entry(r, dirfd(r->dir), de->d_name);
		}
	}
	return r->active;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The files of job dumps (dumpfile.h).  A dump holds every task's pid and
 * times, which bcs.ko shows only to the task's owner (or to root): so it
 * is written for root and the job's owner alone, in a directory others
 * may pass through (to reach their own dumps) but not list.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/dumpfile.h"

static int mkdir_mode(const char *path, mode_t mode)
{
	if (!mkdir(path, mode))
		return chmod(path, mode) ? -errno : 0;	/* not the umask's */
	return errno == EEXIST ? 0 : -errno;
}

int dumpfile_dir(const char *path, bool *tightened)
{
	size_t len = strlen(path);
	struct stat st;
	char *p, *buf;
	mode_t want;
	int err = 0, fd;

	*tightened = false;
	if (!len)
		return -EINVAL;
	buf = strdup(path);
	if (!buf)
		return -ENOMEM;
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	for (p = buf + 1; *p && !err; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			err = -errno;
		*p = '/';
	}
	if (!err)
		err = mkdir_mode(buf, DUMP_DIR_MODE);
	if (err)
		goto out;
	fd = open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &st)) {
		err = -errno;
	} else if (st.st_uid == geteuid()) {
		/* Not listable nor writable by others; still traversable. */
		want = (st.st_mode & 07777 & ~(mode_t)(S_IRGRP | S_IWGRP |
						       S_IROTH | S_IWOTH)) |
		       S_IXGRP | S_IXOTH;
		if (want != (st.st_mode & 07777)) {
			if (fchmod(fd, want))
				err = -errno;
			else
				*tightened = true;
		}
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		err = -EPERM;	/* another's, that others can write */
	}
	close(fd);
out:
	free(buf);
	return err;
}

int dumpfile_write(const char *path, uid_t owner,
		   int (*write)(FILE *f, void *arg), void *arg,
		   uint64_t *bytes)
{
	long pos;

	const char *slash;
	char *tmp, *dir;
	FILE *f = NULL;
	int fd, err = 0;

	*bytes = 0;
	if (!path || !*path || !write)
		return -EINVAL;
	tmp = malloc(strlen(path) + sizeof(".XXXXXX"));
	if (!tmp)
		return -ENOMEM;
	strcpy(tmp, path);
	strcat(tmp, ".XXXXXX");
	/* O_CREAT | O_EXCL, mode 0600: never an existing file or a link. */
	fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	if (fchown(fd, owner, 0) || fchmod(fd, DUMP_FILE_MODE))
		err = -errno;
	if (!err) {
		f = fdopen(fd, "w");
		if (!f)
			err = -errno;
	}
	if (!f) {
		close(fd);
		goto fail;
	}
	err = write(f, arg);
	if (!err && fflush(f))
		err = -errno;
	pos = ftell(f);
	*bytes = pos > 0 ? (uint64_t)pos : 0;
	if (!err && fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		goto fail;
	/* The rename itself, on disk: best effort. */
	slash = strrchr(path, '/');
	dir = slash ? strndup(path, (size_t)(slash - path) + 1) : NULL;
	fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd))
			err = 0;	/* best effort */
		close(fd);
	}
	free(dir);
	free(tmp);
	return 0;
fail:
	unlink(tmp);
	free(tmp);
	return err;
}

int dumpfile_owners_init(struct dump_owners *o)
{
	o->used = 0;
	o->slot = calloc(DUMP_OWNERS_MAX, sizeof(*o->slot));
	return o->slot ? 0 : -ENOMEM;
}

void dumpfile_owners_free(struct dump_owners *o)
{
	free(o->slot);
	o->slot = NULL;
	o->used = 0;
}

static uint32_t hash(uint32_t job)
{
	return (job * 2654435761U) & (DUMP_OWNERS_MAX - 1);
}

/* The slot of @job, or the free one where it would go; NULL if full. */
static struct dump_owner *find(const struct dump_owners *o, uint32_t job)
{
	uint32_t i = hash(job), n;

	for (n = 0; n < DUMP_OWNERS_MAX; n++) {
		struct dump_owner *s = &o->slot[(i + n) & (DUMP_OWNERS_MAX - 1)];

		if (!s->job || s->job == job)
			return s;
	}
	return NULL;
}

void dumpfile_owner_learn(struct dump_owners *o, uint32_t job, uint32_t uid)
{
	struct dump_owner *s;

	if (!o->slot || !job)
		return;
	s = find(o, job);
	if (!s)
		return;
	if (!s->job) {
		/* Kept below 3/4 full: the probes stay short. */
		if (o->used >= DUMP_OWNERS_MAX / 4 * 3)
			return;
		memset(s, 0, sizeof(*s));
		s->job = job;
		s->uid = uid;
		o->used++;
		return;
	}
	if (s->dead) {
		/* Forgotten (destroyed), now a new job of that id. */
		s->dead = false;
		s->mixed = false;
		s->uid = uid;
	} else if (s->uid != uid) {
		s->mixed = true;
	}
	s->missed = 0;
}

bool dumpfile_owner(const struct dump_owners *o, uint32_t job, uid_t *uid)
{
	const struct dump_owner *s;

	if (!o->slot || !job)
		return false;
	s = find(o, job);
	if (!s || s->job != job || s->dead || s->mixed)
		return false;
	*uid = s->uid;
	return true;
}

void dumpfile_owner_forget(struct dump_owners *o, uint32_t job)
{
	struct dump_owner *s;

	if (!o->slot || !job)
		return;
	s = find(o, job);
	if (s && s->job == job)
		s->dead = true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void dumpfile_owners_sweep(struct dump_owners *o, const uint32_t *jobs,
			   size_t n)
{
	struct dump_owner *old = o->slot, *s;
	uint32_t *sorted = NULL, i;

	if (!old)
		return;
	if (n) {
		sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			return;		/* next time */
		memcpy(sorted, jobs, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_u32);
	}
	o->slot = calloc(DUMP_OWNERS_MAX, sizeof(*o->slot));
	if (!o->slot) {
		o->slot = old;
		free(sorted);
		return;
	}
	o->used = 0;
	for (i = 0; i < DUMP_OWNERS_MAX; i++) {
		if (!old[i].job || old[i].dead)
			continue;
		if (n && bsearch(&old[i].job, sorted, n, sizeof(*sorted),
				 cmp_u32))
			old[i].missed = 0;
		else if (++old[i].missed >= 2)
			continue;
		s = find(o, old[i].job);
		*s = old[i];
		o->used++;
	}
	free(old);
	free(sorted);
}

int dumpfile_task_uid(int pid, uint32_t *uid)
{
	char path[64], line[256];
	unsigned long v;
	FILE *f;
	int err = -ENOENT;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Uid:", 4))
			continue;
		if (sscanf(line + 4, "%lu", &v) == 1 && v <= UINT32_MAX) {
			*uid = (uint32_t)v;
			err = 0;
		}
		break;
	}
	fclose(f);
	return err;
}

static void refill(struct dump_budget *b, uint64_t now_ms)
{
	uint64_t dt, add;

	if (now_ms <= b->at_ms)
		return;
	dt = now_ms - b->at_ms;
	b->at_ms = now_ms;
	/* No overflow: dt capped at twice the time to fill the bucket. */
	if (!b->rate)
		return;
	if (dt > (2 * b->burst / b->rate + 1) * 1000)
		add = 2 * b->burst;
	else
		add = b->rate * dt / 1000;
	if (b->tokens + (int64_t)add > (int64_t)b->burst)
		b->tokens = (int64_t)b->burst;
	else
		b->tokens += (int64_t)add;
}

void dump_budget_init(struct dump_budget *b, uint32_t burst_kb,
		      uint32_t rate_kb, uint32_t job_ms, uint64_t now_ms)
{
	memset(b, 0, sizeof(*b));
	b->burst = (uint64_t)burst_kb * 1024;
	b->rate = (uint64_t)rate_kb * 1024;
	b->job_ms = job_ms;
	b->tokens = (int64_t)b->burst;
	b->at_ms = now_ms;
}

bool dump_budget_may(struct dump_budget *b, uint32_t job, bool last,
		     uint64_t now_ms)
{
	uint32_t i;

	refill(b, now_ms);
	if (b->tokens < (int64_t)DUMP_MIN_COST)
		return false;
	if (last)
		return true;
	for (i = 0; i < DUMP_RECENT; i++)
		if (b->recent[i].job == job && job &&
		    now_ms - b->recent[i].ms < b->job_ms)
			return false;
	return true;
}

void dump_budget_spent(struct dump_budget *b, uint32_t job, uint64_t bytes,
		       uint64_t now_ms)
{
	uint32_t i;

	refill(b, now_ms);
	if (bytes < DUMP_MIN_COST)
		bytes = DUMP_MIN_COST;
	if (bytes > b->burst + DUMP_MIN_COST)
		bytes = b->burst + DUMP_MIN_COST;	/* a debt of one burst */
	b->tokens -= (int64_t)bytes;
	for (i = 0; i < DUMP_RECENT; i++)
		if (b->recent[i].job == job)
			break;
	if (i == DUMP_RECENT) {
		i = b->next;
		b->next = (b->next + 1) % DUMP_RECENT;
	}
	b->recent[i].job = job;
	b->recent[i].ms = now_ms;
}

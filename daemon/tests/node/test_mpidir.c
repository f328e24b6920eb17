// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the MPI profiling directory against a hostile user
 * (mpidir.c, libbcsmpi/control.c): a FIFO, a symbolic link, a file of
 * another user, a sparse file of 10 GB and a lock held by another
 * process where bcsd or a rank looks.  Each call must come back, with the
 * file refused (or read within bounds): an alarm ends the test as failed
 * if one blocks.  The cases that need another user's files (chown) run
 * as root only.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libbcsmpi/control.h"
#include "libbcsmpi/mpifile.h"
#include "node/mpidir.h"
#include "tests/unit.h"

#define OTHER_UID	4242	/* a user that is not the test's */
#define ALARM_S		60	/* a blocked call fails the test */

static char tmp[64];

static void path(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", tmp, rel);
}

/* A statistics file (a summary: no histograms) of job 7 at @rel. */
static void stats_file(const char *rel)
{
	struct {
		struct bcs_mpi_file_header h;
		struct bcs_mpi_prim p[2];
	} f;
	char p[256];
	int fd;

	memset(&f, 0, sizeof(f));
	f.h.magic = BCS_MPI_MAGIC;
	f.h.version = BCS_MPI_VERSION;
	f.h.header_size = sizeof(f.h);
	f.h.flags = BCS_MPI_SUMMARY;
	f.h.nr_prims = 2;
	f.h.prim_size = sizeof(f.p[0]);
	f.h.prim_off = sizeof(f.h);
	f.h.file_size = sizeof(f);
	snprintf(f.h.job, sizeof(f.h.job), "7");
	snprintf(f.p[0].name, sizeof(f.p[0].name), "Comp Granularity");
	snprintf(f.p[1].name, sizeof(f.p[1].name), "Comm Overhead");
	f.p[0].calls = f.p[1].calls = 3;
	path(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, &f, sizeof(f)) == (ssize_t)sizeof(f));
	if (fd >= 0)
		close(fd);
}

static void make(const char *rel, mode_t mode)
{
	char p[256];

	path(p, sizeof(p), rel);
	CHECK(!mkdir(p, mode) && !chmod(p, mode));
}

/* A FIFO as the control file: refused at once, not waited on. */
static void test_control_fifo(void)
{
	struct bcs_mpi_control *c;
	char p[256], err[512];
	int fd;

	make("flat", 0755);
	path(p, sizeof(p), "flat/7.control");
	CHECK(!mkfifo(p, 0666));
	path(p, sizeof(p), "flat");
	fd = bcsmpi_control_open(p, "7", 0, &c, err, sizeof(err));
	CHECK(fd == -EINVAL && c == NULL);
	fd = bcsmpi_control_open(p, "7", BCSMPI_CTL_WRITE, &c, err,
				 sizeof(err));
	CHECK(fd == -EINVAL);
	CHECK(bcs_mpi_control_set(p, "7", 0, "on", -1, err, sizeof(err)) ==
	      -EINVAL);
}

/* Another user's control file is not mapped: they could truncate it. */
static void test_control_owner(void)
{
	struct bcs_mpi_control *c;
	char p[256], d[256], err[512];
	int fd;

	path(d, sizeof(d), "flat");
	CHECK(!bcs_mpi_control_set(d, "8", 0, "on", -1, err, sizeof(err)));
	fd = bcsmpi_control_open(d, "8", 0, &c, err, sizeof(err));
	CHECK(fd >= 0 && c != NULL);
	bcsmpi_control_close(c, fd);
	if (geteuid())
		return;
	path(p, sizeof(p), "flat/8.control");
	CHECK(!chown(p, OTHER_UID, OTHER_UID));
	fd = bcsmpi_control_open(d, "8", 0, &c, err, sizeof(err));
	CHECK(fd == -EPERM && c == NULL && strstr(err, "not trusted"));
}

/* A process holding the control file's lock: writers do not wait. */
static void test_control_lock(void)
{
	char p[256], d[256], err[512], b;
	int pfd[2], fd;
	pid_t pid;

	path(d, sizeof(d), "flat");
	CHECK(!bcs_mpi_control_set(d, "9", 0, "on", -1, err, sizeof(err)));
	path(p, sizeof(p), "flat/9.control");
	CHECK(!pipe(pfd));
	pid = fork();
	if (!pid) {
		fd = open(p, O_RDONLY);
		if (fd < 0 || flock(fd, LOCK_SH))
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(pid > 0 && read(pfd[0], &b, 1) == 1);
	CHECK(bcs_mpi_control_set_tries(d, "9", 1, NULL, -1, 1, err,
					sizeof(err)) == -EBUSY);
	CHECK(strstr(err, "another process holds it") != NULL);
	CHECK(bcs_mpi_control_set(d, "9", 1, NULL, -1, err, sizeof(err)) ==
	      -EBUSY);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pfd[0]);
	close(pfd[1]);
	CHECK(!bcs_mpi_control_set(d, "9", 1, NULL, -1, err, sizeof(err)));
}

/* Where a rank's files go: only a directory no one else can write. */
static void test_job_dir(void)
{
	char d[256], p[256], out[512], want[512], err[512];
	int own = -1;

	make("priv", 0755);
	path(d, sizeof(d), "priv");
	/* A directory of one's own, no job directory: flat, as ever. */
	CHECK(!bcsmpi_job_dir(d, "5", 0, out, sizeof(out), &own, err,
			      sizeof(err)));
	CHECK(!strcmp(out, d) && own == 1);
	/* The job's directory, made by bcsd: there, never creating. */
	make("priv/5", 0700);
	CHECK(!bcsmpi_job_dir(d, "5", 0, out, sizeof(out), &own, err,
			      sizeof(err)));
	snprintf(want, sizeof(want), "%s/5", d);
	CHECK(!strcmp(out, want) && own == 0);
	/* Writable by others, or a link: not used. */
	make("priv/6", 0777);
	CHECK(bcsmpi_job_dir(d, "6", 0, out, sizeof(out), &own, err,
			     sizeof(err)) == -EPERM);
	path(p, sizeof(p), "priv/7");
	CHECK(!symlink("5", p));
	CHECK(bcsmpi_job_dir(d, "7", 0, out, sizeof(out), &own, err,
			     sizeof(err)) == -EPERM);
	CHECK(bcsmpi_job_dir(d, "../5", 0, out, sizeof(out), &own, err,
			     sizeof(err)) == -EINVAL);
	if (geteuid())
		return;
	/* Another user's directory (root's mpi_dir to a user): wait, end. */
	make("shared", 0755);
	path(d, sizeof(d), "shared");
	CHECK(!chown(d, OTHER_UID, OTHER_UID));
	CHECK(bcsmpi_job_dir(d, "5", 60, out, sizeof(out), &own, err,
			     sizeof(err)) == -ETIMEDOUT);
	/* The job's directory taken by another user first. */
	make("shared/6", 0700);
	path(p, sizeof(p), "shared/6");
	CHECK(!chown(p, OTHER_UID, OTHER_UID));
	path(d, sizeof(d), "priv");
	make("priv/8", 0700);
	path(p, sizeof(p), "priv/8");
	CHECK(!chown(p, OTHER_UID, OTHER_UID));
	CHECK(bcsmpi_job_dir(d, "8", 0, out, sizeof(out), &own, err,
			     sizeof(err)) == -EPERM);
}

static void test_prepare(void)
{
	char m[256], p[256], err[512];
	struct stat sb;
	uid_t uid = 1;

	path(m, sizeof(m), "mpi");
	CHECK(!mpidir_prepare(m, 7, geteuid(), getegid(), err, sizeof(err)));
	path(p, sizeof(p), "mpi/7");
	CHECK(!lstat(p, &sb) && S_ISDIR(sb.st_mode) &&
	      sb.st_uid == geteuid() && (sb.st_mode & 0777) == 0700);
	path(p, sizeof(p), "mpi/7/7.control");
	CHECK(!lstat(p, &sb) && S_ISREG(sb.st_mode) &&
	      sb.st_uid == geteuid() && (sb.st_mode & 0777) == 0644);
	CHECK(!mpidir_owner(m, 7, &uid) && uid == geteuid());
	CHECK(mpidir_owner(m, 71, &uid) == -ENOENT);
	/* Again: kept as it is. */
	CHECK(!mpidir_prepare(m, 7, geteuid(), getegid(), err, sizeof(err)));
	if (geteuid())
		return;
	/* Made for root first (the task not yet its user's): given over. */
	CHECK(!mpidir_prepare(m, 10, 0, 0, err, sizeof(err)));
	CHECK(!mpidir_prepare(m, 10, OTHER_UID, OTHER_UID, err, sizeof(err)));
	CHECK(!mpidir_owner(m, 10, &uid) && uid == OTHER_UID);
	path(p, sizeof(p), "mpi/10/10.control");
	CHECK(!lstat(p, &sb) && S_ISREG(sb.st_mode) && sb.st_uid == 0);
	/* For a user: theirs, the control file root's. */
	CHECK(!mpidir_prepare(m, 9, OTHER_UID, OTHER_UID, err, sizeof(err)));
	path(p, sizeof(p), "mpi/9");
	CHECK(!lstat(p, &sb) && sb.st_uid == OTHER_UID &&
	      (sb.st_mode & 0777) == 0700);
	path(p, sizeof(p), "mpi/9/9.control");
	CHECK(!lstat(p, &sb) && S_ISREG(sb.st_mode) && sb.st_uid == 0);
	/* Job 9 again, of another user: the old directory moved away. */
	CHECK(!mpidir_prepare(m, 9, OTHER_UID + 1, OTHER_UID + 1, err,
			      sizeof(err)));
	CHECK(!mpidir_owner(m, 9, &uid) && uid == OTHER_UID + 1);
}

/* Control files bcsd writes: its own, whatever the user put there. */
static void test_control_set(void)
{
	struct bcs_mpi_control *c, copy;
	char m[256], p[256], d[256], err[512], b;
	int pfd[2], fd;
	pid_t pid;

	path(m, sizeof(m), "mpi");
	path(d, sizeof(d), "mpi/7");
	CHECK(!mpidir_control_set(m, 7, 0, "Allreduce", 3, err, sizeof(err)));
	fd = bcsmpi_control_open(d, "7", BCSMPI_CTL_NOCREATE, &c, err,
				 sizeof(err));
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(!bcsmpi_control_read(c, &copy) &&
		      !strcmp(copy.stats, "Allreduce") && copy.sub_bits == 3);
		bcsmpi_control_close(c, fd);
	}
	/* No directory yet: flat, and copied into it when it is made. */
	CHECK(!mpidir_control_set(m, 70, 0, "Isend", -1, err, sizeof(err)));
	CHECK(!mpidir_prepare(m, 70, geteuid(), getegid(), err, sizeof(err)));
	path(p, sizeof(p), "mpi/70");
	fd = bcsmpi_control_open(p, "70", BCSMPI_CTL_NOCREATE, &c, err,
				 sizeof(err));
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(!bcsmpi_control_read(c, &copy) &&
		      !strcmp(copy.stats, "Isend") && copy.generation == 2);
		bcsmpi_control_close(c, fd);
	}
	CHECK(!mpidir_control_remove(m, 70));
	/* The user made it a FIFO: bcsd's file again. */
	path(p, sizeof(p), "mpi/7/7.control");
	CHECK(!unlink(p) && !mkfifo(p, 0666));
	CHECK(!mpidir_control_set(m, 7, 1, NULL, -1, err, sizeof(err)));
	fd = bcsmpi_control_open(d, "7", BCSMPI_CTL_NOCREATE, &c, err,
				 sizeof(err));
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(!bcsmpi_control_read(c, &copy) &&
		      (copy.flags & BCS_MPI_CTL_OFF));
		bcsmpi_control_close(c, fd);
	}
	/* A reader holds its lock: bcsd does not wait for it. */
	CHECK(!pipe(pfd));
	pid = fork();
	if (!pid) {
		fd = open(p, O_RDONLY);
		if (fd < 0 || flock(fd, LOCK_SH))
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(pid > 0 && read(pfd[0], &b, 1) == 1);
	CHECK(mpidir_control_set(m, 7, 0, "on", -1, err, sizeof(err)) ==
	      -EBUSY);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pfd[0]);
	close(pfd[1]);
	CHECK(!mpidir_control_remove(m, 7));
	CHECK(mpidir_control_remove(m, 7) == -ENOENT);
}

/* A hostile job directory: only the user's regular files, in bounds. */
static void test_summaries(void)
{
	struct mpidir_summary s[16];
	const struct bcs_mpi_file_header *h;
	char m[256], p[256], q[256];
	unsigned int skipped = 0, want_skipped = 2;
	int n, i, fd;

	path(m, sizeof(m), "mpi");
	stats_file("mpi/7/7.h.0.1.bcsmpi");
	path(p, sizeof(p), "mpi/7/7.h.1.2.bcsmpi");
	CHECK(!mkfifo(p, 0666));
	path(p, sizeof(p), "mpi/7/7.h.2.3.bcsmpi");
	path(q, sizeof(q), "mpi/7/7.h.0.1.bcsmpi");
	CHECK(!symlink(q, p));
	/* 10 GB claimed, a valid header: its records read, no more. */
	stats_file("mpi/7/7.h.3.4.bcsmpi");
	path(p, sizeof(p), "mpi/7/7.h.3.4.bcsmpi");
	CHECK(!truncate(p, 10LL << 30));
	stats_file("mpi/7.h.5.6.bcsmpi");	/* bcsd's user's, flat */
	stats_file("mpi/7/8.h.0.1.bcsmpi");	/* another job's */
	if (!geteuid()) {
		stats_file("mpi/7/7.h.4.5.bcsmpi");
		path(p, sizeof(p), "mpi/7/7.h.4.5.bcsmpi");
		CHECK(!chown(p, OTHER_UID, OTHER_UID));
		stats_file("mpi/7.h.6.7.bcsmpi");
		path(p, sizeof(p), "mpi/7.h.6.7.bcsmpi");
		CHECK(!chown(p, OTHER_UID, OTHER_UID));
		want_skipped += 2;
	}
	n = mpidir_summaries(m, 7, s, 16, 65536, &skipped);
	CHECK(n == 3 && skipped == want_skipped);
	for (i = 0; i < n; i++) {
		h = s[i].data;
		CHECK(s[i].len >= sizeof(*h) && (h->flags & BCS_MPI_SUMMARY) &&
		      h->nr_prims == 2 && !strcmp(h->job, "7"));
		free(s[i].data);
	}
	/*
	 * Read whole within a budget (a tree gather): the same files
	 * refused (FIFO, link, another user's, another job's); the one
	 * claiming 10 GB only summarised, the budget spent on the others.
	 */
	{
		size_t budget = 1U << 20;
		int whole = 0;

		skipped = 0;
		n = mpidir_read(m, 7, s, 16, 65536, &budget, &skipped);
		CHECK(n == 3 && skipped == want_skipped);
		for (i = 0; i < n; i++) {
			whole += s[i].whole;
			free(s[i].data);
		}
		CHECK(whole == 2 && budget < (1U << 20));
	}
	/* Bounded by @max and the summary's size. */
	n = mpidir_summaries(m, 7, s, 1, 65536, &skipped);
	CHECK(n == 1);
	if (n == 1)
		free(s[0].data);
	n = mpidir_summaries(m, 7, s, 16, 16, &skipped);
	CHECK(n == 0 && skipped == want_skipped + 3);
	/* A job without files, a directory missing. */
	CHECK(mpidir_summaries(m, 71, s, 16, 65536, &skipped) == 0);
	path(p, sizeof(p), "none");
	CHECK(mpidir_summaries(p, 7, s, 16, 65536, &skipped) == 0);
	/* The reader of bcsstat refuses a FIFO too, at once. */
	path(p, sizeof(p), "mpi/7/7.h.1.2.bcsmpi");
	fd = open(p, O_RDONLY | O_NONBLOCK);
	CHECK(fd >= 0);
	if (fd >= 0) {
		void *out;
		size_t len;
		char err[256];

		CHECK(bcs_mpi_stats_summary_fd(fd, "f", &out, &len, err,
					       sizeof(err)) == -EINVAL);
		close(fd);
	}
	{
		struct bcs_mpi_stats st;
		char err[512];

		CHECK(bcs_mpi_stats_read(p, &st, err, sizeof(err)) == -EINVAL);
		CHECK(strstr(err, "not a regular file") != NULL);
	}
}

int main(void)
{
	char cmd[128];
	int r;

	snprintf(tmp, sizeof(tmp), "/tmp/test_mpidir.XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(tmp, 0755);
	alarm(ALARM_S);
	test_control_fifo();
	test_control_owner();
	test_control_lock();
	test_job_dir();
	test_prepare();
	test_control_set();
	test_summaries();
	r = unit_done("test_mpidir");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd))
		fprintf(stderr, "%s not removed\n", tmp);
	return r;
}

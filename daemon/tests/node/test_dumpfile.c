// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the files of job dumps (dumpfile.c): whatever the
 * umask, a dump is mode 0600 and its job owner's, written through no
 * link; the directory is passable, not listable; and the owner of a job
 * is the one uid of its tasks, or none.  The owner checks need root
 * (chown); without it they are skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/dumpfile.h"
#include "tests/unit.h"

static int write_doc(FILE *f, void *arg)
{
	return fputs(arg, f) < 0 ? -EIO : 0;
}

static int write_fail(FILE *f, void *arg)
{
	(void)f;
	(void)arg;
	return -EIO;
}

static char dir[] = "/tmp/test_dumpfile.XXXXXX";

static void test_files(void)
{
	char jobs[256], path[300], victim[300], cmd[400];
	struct stat st;
	uint64_t bytes;
	bool tight;
	FILE *f;

	snprintf(jobs, sizeof(jobs), "%s/var/jobs", dir);
	umask(0);
	CHECK(!dumpfile_dir(jobs, &tight));
	CHECK(!stat(jobs, &st) && (st.st_mode & 07777) == DUMP_DIR_MODE);
	/* Not listable by others: no read bit for group or others. */
	CHECK(!(st.st_mode & (S_IRGRP | S_IROTH | S_IWGRP | S_IWOTH)));
	/* A directory made 0755 before is tightened. */
	CHECK(!chmod(jobs, 0755));
	CHECK(!dumpfile_dir(jobs, &tight) && tight);
	CHECK(!stat(jobs, &st) && (st.st_mode & 07777) == 0711);

	/* Umask 0: the dump is 0600 all the same, owned as asked. */
	snprintf(path, sizeof(path), "%s/7-host.json", jobs);
	CHECK(!dumpfile_write(path, 65534, write_doc, "{}\n", &bytes));
	CHECK(!stat(path, &st) && S_ISREG(st.st_mode) &&
	      (st.st_mode & 07777) == DUMP_FILE_MODE);
	if (!geteuid())
		CHECK(st.st_uid == 65534 && st.st_gid == 0);
	/* A link planted at the name is replaced, its target untouched. */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	CHECK(f && fputs("mine", f) >= 0 && !fclose(f));
	CHECK(!unlink(path) && !symlink(victim, path));
	CHECK(!dumpfile_write(path, 0, write_doc, "{\"job\": 7}\n", &bytes) &&
	      bytes == 11);
	CHECK(!lstat(path, &st) && S_ISREG(st.st_mode) &&
	      (st.st_mode & 07777) == DUMP_FILE_MODE);
	CHECK(!stat(victim, &st) && st.st_size == 4);
	/* A failed write leaves the old dump and no temporary file. */
	CHECK(dumpfile_write(path, 0, write_fail, NULL, &bytes) == -EIO);
	CHECK(!stat(path, &st) && st.st_size == 11);
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) = 1", jobs);
	CHECK(!system(cmd));
	umask(022);
}

static void test_owners(void)
{
	struct dump_owners o;
	uint32_t jobs[2] = { 1, 2 };
	uid_t uid = 12345;
	uint32_t me;

	CHECK(!dumpfile_owners_init(&o));
	CHECK(!dumpfile_owner(&o, 1, &uid));		/* none seen */
	dumpfile_owner_learn(&o, 1, 1000);
	dumpfile_owner_learn(&o, 1, 1000);
	CHECK(dumpfile_owner(&o, 1, &uid) && uid == 1000);
	/* Tasks of two uids: no one owner, root's. */
	dumpfile_owner_learn(&o, 2, 1000);
	dumpfile_owner_learn(&o, 2, 1001);
	CHECK(!dumpfile_owner(&o, 2, &uid));
	/* Many jobs: each its own owner. */
	for (me = 100; me < 4196; me++)
		dumpfile_owner_learn(&o, me, me + 5);
	for (me = 100; me < 4196; me++)
		if (!dumpfile_owner(&o, me, &uid) || uid != me + 5)
			break;
	CHECK(me == 4196);
	/* Jobs bcs.ko no longer lists go at the second sweep. */
	dumpfile_owners_sweep(&o, jobs, 2);
	CHECK(dumpfile_owner(&o, 100, &uid));
	dumpfile_owners_sweep(&o, jobs, 2);
	CHECK(!dumpfile_owner(&o, 100, &uid));
	CHECK(dumpfile_owner(&o, 1, &uid) && uid == 1000);
	/* A job destroyed; a new job of its id, another user's. */
	dumpfile_owner_forget(&o, 1);
	CHECK(!dumpfile_owner(&o, 1, &uid));
	dumpfile_owner_learn(&o, 1, 2000);
	CHECK(dumpfile_owner(&o, 1, &uid) && uid == 2000);
	dumpfile_owners_free(&o);
	/* This process's uid, from /proc. */
	CHECK(!dumpfile_task_uid(getpid(), &me) && me == getuid());
}

/*
 * The budget: a burst, then nothing until the bucket refills at its rate;
 * a job dumped once per interval, but for its last dump; a flood of one
 * job that ends and starts again, and of many jobs, bounded in bytes.
 */
static void test_budget(void)
{
	const uint64_t mb = 1024 * 1024;
	struct dump_budget b;
	uint64_t t = 1000000, written = 0, i, n = 0;

	/* 4 MB at most, 1 MB a second, a job once per 10 s. */
	dump_budget_init(&b, 4096, 1024, 10000, t);
	CHECK(dump_budget_may(&b, 1, false, t));
	dump_budget_spent(&b, 1, 3 * mb / 2, t);
	/* The same job again at once: not before 10 s, unless destroyed. */
	CHECK(!dump_budget_may(&b, 1, false, t + 1));
	CHECK(dump_budget_may(&b, 1, true, t + 1));
	CHECK(dump_budget_may(&b, 2, false, t + 1));
	dump_budget_spent(&b, 2, 3 * mb / 2, t + 1);
	dump_budget_spent(&b, 3, 3 * mb / 2, t + 2);
	/* The bucket is empty: no job, not even a last dump. */
	CHECK(!dump_budget_may(&b, 4, false, t + 2));
	CHECK(!dump_budget_may(&b, 1, true, t + 2));
	/* A second later, 1 MB is back. */
	CHECK(dump_budget_may(&b, 4, false, t + 1002));
	CHECK(!dump_budget_may(&b, 1, false, t + 9999));
	CHECK(dump_budget_may(&b, 1, false, t + 10000));
	/* Small dumps cost DUMP_MIN_COST each. */
	dump_budget_init(&b, 1024, 1, 0, t);
	for (i = 0; i < 100 && dump_budget_may(&b, (uint32_t)i + 1, false, t);
	     i++)
		dump_budget_spent(&b, (uint32_t)i + 1, 100, t);
	CHECK(i == 1024 * 1024 / DUMP_MIN_COST);
	/*
	 * The flood: one job ends every millisecond for a minute, 1.5 MB
	 * each; then 5,000 jobs each once.  What is written stays within the
	 * burst plus the rate times the time.
	 */
	dump_budget_init(&b, 16384, 256, 10000, t);
	for (i = 0; i < 60000; i++) {
		if (!dump_budget_may(&b, 7, false, t + i))
			continue;
		dump_budget_spent(&b, 7, 3 * mb / 2, t + i);
		written += 3 * mb / 2;
		n++;
	}
	CHECK(n <= 6 && n >= 5);	/* once per 10 s, one minute */
	for (i = 0; i < 5000; i++) {
		if (!dump_budget_may(&b, 100 + (uint32_t)i, false, t + 60000 + i))
			continue;
		dump_budget_spent(&b, 100 + (uint32_t)i, 3 * mb / 2,
				  t + 60000 + i);
		written += 3 * mb / 2;
		n++;
	}
	CHECK(written <= 16 * mb + 65 * 256 * 1024 + 3 * mb / 2);
	CHECK(n < 30);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir))
		return 1;
	test_files();
	test_owners();
	test_budget();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return unit_done("test_dumpfile");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Retention (node/retention.c) in a directory of its own: old dumps of
 * bcsd's names go, others stay; a pass over many files is done in steps
 * of bounded work; in mpi_dir, a live job's files stay, a gone job's go
 * with its directory, a link is never followed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "node/retention.h"
#include "tests/unit.h"

static char top[64];

static void make(const char *name, time_t mtime)
{
	char path[256];
	struct timeval tv[2] = { { mtime, 0 }, { mtime, 0 } };
	int fd;

	snprintf(path, sizeof(path), "%s/%s", top, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		close(fd);
	lutimes(path, tv);
}

static bool exists(const char *name)
{
	char path[256];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", top, name);
	return !lstat(path, &sb);
}

static bool live(void *arg, uint32_t job)
{
	(void)arg;
	return job == 42;
}

/* A whole pass; the number of steps it took. */
static unsigned int pass(struct retention *r, time_t cutoff)
{
	unsigned int steps = 1;

	retention_start(r, cutoff);
	while (retention_step(r))
		steps++;
	return steps;
}

static void test_jobs_dir(time_t now)
{
	struct retention r = { .host = "h1" };
	char name[64], jobs[96];
	unsigned int i, steps;

	snprintf(jobs, sizeof(jobs), "%s/jobs", top);
	mkdir(jobs, 0711);
	r.jobs_dir = jobs;
	make("jobs/1-h1.json", now - 100);
	make("jobs/2-h1.json", now);
	make("jobs/3-h2.json", now - 100);
	make("jobs/4-h1.json.aB3xYz", now - 100);
	make("jobs/4-h1.json.toolong", now - 100);
	make("jobs/x-h1.json", now - 100);
	make("jobs/5-h1.jsonx", now - 100);
	for (i = 0; i < 3 * RETENTION_STEP; i++) {
		snprintf(name, sizeof(name), "jobs/%u-h1.json", 1000 + i);
		make(name, now - 100);
	}
	steps = pass(&r, now - 50);
	CHECK(steps >= 3);	/* bounded steps */
	CHECK(r.removed == 2 + 3 * RETENTION_STEP);
	CHECK(r.failed == 0);
	CHECK(!exists("jobs/1-h1.json") && exists("jobs/2-h1.json"));
	CHECK(exists("jobs/3-h2.json") && !exists("jobs/4-h1.json.aB3xYz"));
	CHECK(exists("jobs/4-h1.json.toolong") && exists("jobs/x-h1.json"));
	CHECK(exists("jobs/5-h1.jsonx") && !exists("jobs/1000-h1.json"));
	/* Nothing more the second time. */
	pass(&r, now - 50);
	CHECK(r.removed == 2 + 3 * RETENTION_STEP);
	retention_stop(&r);
}

static void test_mpi_dir(time_t now)
{
	struct retention r = { .live = live };
	struct timeval tv[2] = { { now - 100, 0 }, { now - 100, 0 } };
	char mpi[96], path[160];

	snprintf(mpi, sizeof(mpi), "%s/mpi", top);
	mkdir(mpi, 0755);
	r.mpi_dir = mpi;
	mkdir(strcat(strcpy(path, mpi), "/7"), 0700);
	mkdir(strcat(strcpy(path, mpi), "/42"), 0700);
	mkdir(strcat(strcpy(path, top), "/victim"), 0700);
	make("mpi/7/7.h.0.1.bcsmpi", now - 100);
	make("mpi/7/7.control", now - 100);
	make("mpi/42/42.h.0.1.bcsmpi", now - 100);
	make("mpi/42.control", now - 100);
	make("mpi/8.control", now - 100);
	make("victim/9.h.0.1.bcsmpi", now - 100);
	snprintf(path, sizeof(path), "%s/victim", top);
	symlink(path, strcat(strcpy(path, mpi), "/9"));
	lutimes(strcat(strcpy(path, mpi), "/7"), tv);
	lutimes(strcat(strcpy(path, mpi), "/42"), tv);
	pass(&r, now - 50);
	CHECK(!exists("mpi/7") && !exists("mpi/8.control"));
	CHECK(exists("mpi/42/42.h.0.1.bcsmpi") && exists("mpi/42.control"));
	CHECK(exists("mpi/9") && exists("victim/9.h.0.1.bcsmpi"));
	CHECK(r.removed == 4 && r.failed == 0);
	/* Others may write it: not aged, a failure. */
	chmod(mpi, 0777);
	make("mpi/8.control", now - 100);
	pass(&r, now - 50);
	CHECK(exists("mpi/8.control") && r.failed == 1);
	retention_stop(&r);
}

int main(void)
{
	time_t now = time(NULL);
	char cmd[96];

	snprintf(top, sizeof(top), "/tmp/test_retention.XXXXXX");
	if (!mkdtemp(top))
		return 1;
	test_jobs_dir(now);
	test_mpi_dir(now);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	if (system(cmd))
		unit_fail++;
	return unit_done("test_retention");
}

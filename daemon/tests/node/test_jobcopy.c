// SPDX-License-Identifier: GPL-2.0
/*
 * Copies of dumps to a shared directory (node/jobcopy.c): a copy is whole,
 * mode 0600, under the dump's name; a link at the name is replaced, its
 * target left alone; a link as the source, or a directory others can
 * write (not sticky), is refused and leaves nothing; the thread copies
 * what is queued, and a full queue is a failure, never a wait.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/jobcopy.h"
#include "tests/unit.h"

static char top[64];

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool same(const char *name, const char *text)
{
	char path[256], buf[256] = "";
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, name);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return f && !strcmp(buf, text);
}

static unsigned int entries(const char *dir)
{
	char cmd[256];
	unsigned int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A %s/%s | wc -l", top, dir);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%u", &n) != 1)
			n = 0;
		pclose(p);
	}
	return n;
}

int main(void)
{
	char src[160], dst[160], path[160], err[256];
	static struct jobcopy c;
	uint64_t done, failed;
	struct stat sb;
	unsigned int i;

	snprintf(top, sizeof(top), "/tmp/test_jobcopy.XXXXXX");
	if (!mkdtemp(top))
		return 1;
	snprintf(dst, sizeof(dst), "%s/shared", top);
	mkdir(dst, 0755);
	put("7-h.json", "{\"job\": 7}\n");
	snprintf(src, sizeof(src), "%s/7-h.json", top);
	CHECK(jobcopy_file(dst, src, getuid(), err, sizeof(err)) == 0);
	CHECK(same("shared/7-h.json", "{\"job\": 7}\n"));
	snprintf(path, sizeof(path), "%s/shared/7-h.json", top);
	CHECK(!stat(path, &sb) && (sb.st_mode & 07777) == 0600);
	CHECK(entries("shared") == 1);

	/* A link at the name: replaced, its target untouched. */
	put("target", "theirs");
	snprintf(path, sizeof(path), "%s/shared/8-h.json", top);
	symlink("../target", path);
	put("8-h.json", "ours");
	snprintf(src, sizeof(src), "%s/8-h.json", top);
	CHECK(jobcopy_file(dst, src, getuid(), err, sizeof(err)) == 0);
	CHECK(same("target", "theirs") && same("shared/8-h.json", "ours"));
	CHECK(!lstat(path, &sb) && S_ISREG(sb.st_mode));

	/* A link as the source: refused. */
	snprintf(path, sizeof(path), "%s/9-h.json", top);
	symlink("target", path);
	CHECK(jobcopy_file(dst, path, getuid(), err, sizeof(err)) < 0);
	/* A directory others can write: refused; sticky, taken. */
	chmod(dst, 0777);
	CHECK(jobcopy_file(dst, src, getuid(), err, sizeof(err)) < 0);
	CHECK(strstr(err, "others can write") != NULL);
	chmod(dst, 01777);
	CHECK(jobcopy_file(dst, src, getuid(), err, sizeof(err)) == 0);
	chmod(dst, 0755);
	CHECK(entries("shared") == 2);

	/* Not started: a failure, no wait. */
	memset(&c, 0, sizeof(c));
	/* The thread: three queued, copied before it stops. */
	CHECK(jobcopy_start(&c, dst) == 0);
	for (i = 10; i < 13; i++) {
		snprintf(path, sizeof(path), "%u-h.json", i);
		put(path, path);
		snprintf(src, sizeof(src), "%s/%u-h.json", top, i);
		CHECK(jobcopy_queue(&c, src, getuid()));
	}
	snprintf(src, sizeof(src), "%s/missing-h.json", top);
	CHECK(jobcopy_queue(&c, src, getuid()));
	jobcopy_stop(&c);
	jobcopy_counts(&c, &done, &failed, err, sizeof(err));
	CHECK(done == 3 && failed == 1 && strstr(err, "missing-h.json"));
	CHECK(same("shared/11-h.json", "11-h.json") && entries("shared") == 5);
	CHECK(!jobcopy_queue(&c, src, getuid()));
	jobcopy_counts(&c, &done, &failed, err, sizeof(err));
	CHECK(failed == 2);

	snprintf(path, sizeof(path), "rm -rf %s", top);
	if (system(path))
		unit_fail++;
	return unit_done("test_jobcopy");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of bcsstat dist's core (bcsstat_dist.c): the adding of
 * histograms, at one resolution and across resolutions, against
 * histograms built from the values; the reading of job dumps written by
 * libbcs's writer, merged per task and per job; and dumps it must refuse
 * (cut short, another version, buckets not of their resolution, counts
 * that do not add up, not a dump).  Messages go to stderr, which the
 * test sends to /dev/null; test_cli.sh checks their words.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bcs.h>

#include "bcsstat.h"

static int passed, failed;

#define CHECK(cond) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		fprintf(stdout, "FAIL %s:%d: %s\n", __FILE__, __LINE__,	\
			#cond);						\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	unsigned long long __a = (unsigned long long)(a);		\
	unsigned long long __b = (unsigned long long)(b);		\
	if (__a == __b) {						\
		passed++;						\
	} else {							\
		failed++;						\
		fprintf(stdout, "FAIL %s:%d: %s == %s (%llu != %llu)\n",\
			__FILE__, __LINE__, #a, #b, __a, __b);		\
	}								\
} while (0)

/* ---- histograms from values ---- */

#define MAX_BUCKETS	(65 << BCS_HIST_SUB_BITS_MAX)

static struct bcs_hist_header *hist_of(const uint64_t *v, size_t n,
				       unsigned int sub)
{
	static uint64_t counts[MAX_BUCKETS];
	struct bcs_hist_header *h;
	struct bcs_hist_bucket *b;
	uint32_t i, k = 0;
	size_t j;

	memset(counts, 0, sizeof(counts));
	h = calloc(1, sizeof(*h) + MAX_BUCKETS * sizeof(*b));
	if (!h)
		abort();
	h->magic = BCS_HIST_MAGIC;
	h->version = BCS_HIST_VERSION;
	h->sub_bits = (uint8_t)sub;
	for (j = 0; j < n; j++) {
		counts[bcs_hist_index(v[j], sub)]++;
		if (!h->count || v[j] < h->min)
			h->min = v[j];
		if (v[j] > h->max)
			h->max = v[j];
		h->count++;
		h->sum += v[j];
	}
	b = (void *)(h + 1);
	for (i = 0; i < bcs_hist_buckets(sub); i++)
		if (counts[i]) {
			b[k].index = i;
			b[k++].count = counts[i];
		}
	h->nr_buckets = k;
	return h;
}

static int hist_equal(const struct bcs_hist_header *a,
		      const struct bcs_hist_header *b)
{
	return a && b && a->sub_bits == b->sub_bits &&
	       a->nr_buckets == b->nr_buckets && a->count == b->count &&
	       a->sum == b->sum && a->min == b->min && a->max == b->max &&
	       a->flags == b->flags &&
	       !memcmp(a + 1, b + 1,
		       a->nr_buckets * sizeof(struct bcs_hist_bucket));
}

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* @m plus @h with libbcs's bcs_hist_add(); NULL (@m freed) on failure. */
static struct bcs_hist_header *add(struct bcs_hist_header *m,
				   const struct bcs_hist_header *h)
{
	if (bcs_hist_add(&m, h)) {
		free(m);
		return NULL;
	}
	return m;
}

static void test_merge(void)
{
	uint64_t a[] = { 2000000, 2050000, 2100000, 3000000, 7 };
	uint64_t b[] = { 2000000, 9000000, 1 };
	uint64_t all[8], vals[400];
	struct bcs_hist_header *ha, *hb, *hall, *m, *keep;
	int round, ok = 1;
	size_t i, na, n;

	/* One resolution: the sum of the parts is the histogram of all. */
	memcpy(all, a, sizeof(a));
	memcpy(all + 5, b, sizeof(b));
	ha = hist_of(a, 5, 3);
	hb = hist_of(b, 3, 3);
	hall = hist_of(all, 8, 3);
	m = add(NULL, ha);
	CHECK(hist_equal(m, ha));
	m = add(m, hb);
	CHECK(hist_equal(m, hall));
	CHECK_EQ(m->count, 8);
	CHECK_EQ(m->min, 1);
	CHECK_EQ(m->max, 9000000);
	keep = m;
	CHECK(bcs_hist_add(&m, NULL) == 0 && m == keep);
	/* Not a histogram: refused, the sum kept. */
	hall->magic = 0;
	CHECK(bcs_hist_add(&m, hall) == -EINVAL && m == keep);
	CHECK(bcs_hist_add(NULL, hall) == -EINVAL);
	free(m);
	free(hall);

	/* Across resolutions: at the coarser one, exactly. */
	free(hb);
	hb = hist_of(b, 3, 1);
	hall = hist_of(all, 8, 1);
	m = add(NULL, ha);
	m = add(m, hb);
	CHECK(hist_equal(m, hall));
	free(m);
	m = add(NULL, hb);
	m = add(m, ha);
	CHECK(hist_equal(m, hall));
	free(m);
	free(hall);
	free(ha);
	free(hb);

	/* Random values, random split, random resolutions. */
	for (round = 0; round < 200; round++) {
		unsigned int s1 = (unsigned int)(rnd() % 8);
		unsigned int s2 = (unsigned int)(rnd() % 8);

		n = 1 + rnd() % 400;
		for (i = 0; i < n; i++)
			vals[i] = rnd() >> (rnd() % 64);
		na = rnd() % (n + 1);
		ha = hist_of(vals, na, s1);
		hb = hist_of(vals + na, n - na, s2);
		hall = hist_of(vals, n, s1 < s2 ? s1 : s2);
		m = add(add(NULL, ha), hb);
		/* The sum may have saturated: compare the rest then. */
		if (m && (m->flags & BCS_HIST_SATURATED)) {
			m->flags = 0;
			m->sum = hall->sum;
		}
		ok &= hist_equal(m, hall);
		free(m);
		free(ha);
		free(hb);
		free(hall);
	}
	CHECK(ok);

	/* A sum past 2^64 - 1 saturates and says so. */
	{
		uint64_t big[] = { UINT64_MAX - 5 };

		ha = hist_of(big, 1, 2);
		m = add(add(NULL, ha), ha);
		CHECK(m && (m->flags & BCS_HIST_SATURATED));
		CHECK_EQ(m->sum, UINT64_MAX);
		CHECK_EQ(m->count, 2);
		free(m);
		free(ha);
	}
}

/* ---- dumps ---- */

static char dir[64];

/* A dump of job @job on @node: pid 101 with bursts @v, pid 102 gone. */
static char *write_dump(const char *name, const char *node, uint32_t job,
			const uint64_t *v, size_t n, unsigned int sub)
{
	struct bcs_dump_head head;
	struct bcs_dump_task t;
	struct bcs_dump *d;
	char *path;
	FILE *f;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	f = fopen(path, "w");
	if (!f)
		abort();
	memset(&head, 0, sizeof(head));
	head.node = node;
	head.job = job;
	head.row = BCS_ROW_NONE;
	head.time_ns = 1000 + job;
	CHECK_EQ(bcs_dump_begin(f, &head, &d), 0);
	memset(&t, 0, sizeof(t));
	t.pid = 101;
	t.tgid = 100;
	t.totals.flags = BCS_DIST_TRACKING;
	t.totals.run_ns = 5;
	t.totals.bursts = n;
	t.hist[BCS_DIST_BURST] = hist_of(v, n, sub);
	CHECK_EQ(bcs_dump_task(d, &t), 0);
	free((void *)t.hist[BCS_DIST_BURST]);
	memset(&t, 0, sizeof(t));
	t.pid = 102;
	t.totals.flags = BCS_DIST_GONE;
	t.hist[BCS_DIST_WAIT] = hist_of(v, 1, sub);
	CHECK_EQ(bcs_dump_task(d, &t), 0);
	free((void *)t.hist[BCS_DIST_WAIT]);
	CHECK_EQ(bcs_dump_end(d), 0);
	fclose(f);
	return path;
}

/* @text in file @name of the test's directory. */
static char *write_text(const char *name, const char *text)
{
	char *path;
	FILE *f;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	return path;
}

static char *file_text(const char *path)
{
	char *buf = NULL;
	size_t cap = 0, len;
	FILE *f = fopen(path, "r");

	if (!f)
		abort();
	len = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	(void)len;
	return buf;
}

/* dist_load() of @files with --job @job and --pid @pid if not 0. */
static int load(char **files, int n, uint32_t job, int32_t pid,
		struct dist_set *set)
{
	struct opts o;

	memset(&o, 0, sizeof(o));
	o.args = files;
	o.nr_args = n;
	if (job) {
		o.given |= OPT_JOB;
		o.job = job;
	}
	if (pid) {
		o.given |= OPT_PID;
		o.pid = pid;
	}
	return dist_load(&o, set);
}

/* @text with the first @from replaced by @to, in a new file @name. */
static char *edited(const char *name, const char *text, const char *from,
		    const char *to)
{
	const char *p = strstr(text, from);
	char *s, *path;

	if (!p)
		abort();
	if (asprintf(&s, "%.*s%s%s", (int)(p - text), text, to,
		     p + strlen(from)) < 0)
		abort();
	path = write_text(name, s);
	free(s);
	return path;
}

/*
 * Edits of a good dump that make it one to refuse: another version or
 * format; buckets of resolution 3 said to be of 2 or 8; buckets that do
 * not add up to the count; a negative pid, a string for a number, no
 * totals.
 */
static const char *const refused[][3] = {
	{ "v2.json", "\"version\":1", "\"version\":2" },
	{ "fmt.json", "bcs-job-dump", "bcs-job-dumb" },
	{ "res.json", "\"sub_bits\":3", "\"sub_bits\":2" },
	{ "res8.json", "\"sub_bits\":3", "\"sub_bits\":8" },
	{ "count.json", "\"count\":3", "\"count\":4" },
	{ "pid.json", "\"pid\":101", "\"pid\":-1" },
	{ "str.json", "\"job\":7", "\"job\":\"7\"" },
	{ "tot.json", "\"totals\"", "\"totalz\"" },
};

static void test_dumps(void)
{
	uint64_t v1[] = { 2000000, 2100000, 3000000 };
	uint64_t v2[] = { 2000000, 50000000 };
	struct bcs_hist_header *want;
	struct dist_set set;
	char *files[4], *text, *p;
	struct dist_task *t;
	size_t k;

	files[0] = write_dump("n1.json", "n1", 7, v1, 3, 3);
	files[1] = write_dump("n2.json", "n2", 7, v2, 2, 2);
	files[2] = write_dump("n3.json", "n3", 9, v1, 3, 3);

	/* One dump. */
	CHECK_EQ(load(files, 1, 0, 0, &set), 0);
	CHECK_EQ(set.nr_jobs, 1);
	CHECK_EQ(set.jobs[0].id, 7);
	CHECK_EQ(set.jobs[0].nr_tasks, 2);
	CHECK_EQ(set.jobs[0].nr_nodes, 1);
	t = &set.jobs[0].tasks[0];
	CHECK(!strcmp(t->node, "n1"));
	CHECK_EQ(t->pid, 101);
	CHECK_EQ(t->tgid, 100);
	CHECK_EQ(t->totals.flags, BCS_DIST_TRACKING);
	CHECK_EQ(t->totals.bursts, 3);
	want = hist_of(v1, 3, 3);
	CHECK(hist_equal(t->hist[BCS_DIST_BURST], want));
	free(want);
	CHECK(!t->hist[BCS_DIST_BLOCKED]);
	CHECK_EQ(set.jobs[0].tasks[1].totals.flags, BCS_DIST_GONE);
	dist_free(&set);

	/* Two nodes of job 7, one of job 9: per job, the nodes merged. */
	CHECK_EQ(load(files, 3, 0, 0, &set), 0);
	CHECK_EQ(set.nr_jobs, 2);
	CHECK_EQ(set.jobs[0].id, 7);
	CHECK_EQ(set.jobs[0].nr_nodes, 2);
	CHECK_EQ(set.jobs[0].nr_tasks, 4);
	CHECK_EQ(set.jobs[1].id, 9);
	{
		uint64_t all[] = { 2000000, 2100000, 3000000, 2000000,
				   50000000 };
		int err;
		struct bcs_hist_header *h = dist_job_hist(&set.jobs[0],
							  BCS_DIST_BURST,
							  &err);

		want = hist_of(all, 5, 2);	/* the coarser resolution */
		CHECK_EQ(err, 0);
		CHECK(hist_equal(h, want));
		free(h);
		free(want);
	}
	dist_free(&set);

	/* --job and --pid select. */
	CHECK_EQ(load(files, 3, 9, 0, &set), 0);
	CHECK_EQ(set.nr_jobs, 1);
	CHECK_EQ(set.jobs[0].id, 9);
	dist_free(&set);
	CHECK_EQ(load(files, 3, 7, 102, &set), 0);
	CHECK_EQ(set.jobs[0].nr_tasks, 2);
	CHECK_EQ(set.jobs[0].tasks[0].pid, 102);
	dist_free(&set);
	CHECK_EQ(load(files, 3, 8, 0, &set), EXIT_FAILURE);
	CHECK_EQ(load(files, 3, 7, 999, &set), EXIT_FAILURE);

	/* The same dump twice: the same task, counts doubled. */
	{
		char *twice[] = { files[0], files[0] };

		CHECK_EQ(load(twice, 2, 7, 0, &set), 0);
	}
	CHECK_EQ(set.jobs[0].nr_tasks, 2);
	CHECK_EQ(set.jobs[0].tasks[0].hist[BCS_DIST_BURST]->count, 6);
	CHECK_EQ(set.jobs[0].tasks[0].totals.bursts, 6);
	dist_free(&set);

	/* Dumps put together, and an array of them (dist --json). */
	text = file_text(files[0]);
	p = malloc(2 * strlen(text) + 8);
	sprintf(p, "%s%s", text, text);
	files[3] = write_text("cat.json", p);
	CHECK_EQ(load(files + 3, 1, 0, 0, &set), 0);
	CHECK_EQ(set.jobs[0].tasks[0].hist[BCS_DIST_BURST]->count, 6);
	dist_free(&set);
	free(files[3]);
	sprintf(p, "[%s,%s]", text, text);
	files[3] = write_text("arr.json", p);
	CHECK_EQ(load(files + 3, 1, 0, 0, &set), 0);
	CHECK_EQ(set.jobs[0].tasks[0].hist[BCS_DIST_BURST]->count, 6);
	dist_free(&set);
	free(files[3]);
	free(p);

	/* Refused: cut short, another version or format, not a dump. */
	p = strndup(text, strlen(text) / 2);
	files[3] = write_text("cut.json", p);
	CHECK_EQ(load(files + 3, 1, 0, 0, &set), EXIT_FAILURE);
	free(files[3]);
	free(p);
	files[3] = write_text("slices.json", "[{\"seq\":1}]");
	CHECK_EQ(load(files + 3, 1, 0, 0, &set), EXIT_FAILURE);
	free(files[3]);
	files[3] = write_text("empty.json", "[]");
	CHECK_EQ(load(files + 3, 1, 0, 0, &set), EXIT_FAILURE);
	free(files[3]);
	for (k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		files[3] = edited(refused[k][0], text, refused[k][1],
				  refused[k][2]);
		CHECK_EQ(load(files + 3, 1, 0, 0, &set), EXIT_FAILURE);
		free(files[3]);
	}
	/* A metric of a later bcs is left aside, not refused. */
	files[3] = edited("new.json", text, "\"wait\":", "\"later\":");
	CHECK_EQ(load(files + 3, 1, 0, 0, &set), 0);
	CHECK(!set.jobs[0].tasks[1].hist[BCS_DIST_WAIT]);
	dist_free(&set);
	free(files[3]);
	files[3] = "/nonexistent/x.json";
	CHECK_EQ(load(files + 3, 1, 0, 0, &set), EXIT_FAILURE);

	free(text);
	free(files[0]);
	free(files[1]);
	free(files[2]);
}

static void test_fmt(void)
{
	char b[24];

	CHECK(!strcmp(dist_fmt_ns(b, sizeof(b), 0), "0 ns"));
	CHECK(!strcmp(dist_fmt_ns(b, sizeof(b), 999), "999 ns"));
	CHECK(!strcmp(dist_fmt_ns(b, sizeof(b), 999.7), "1 us"));
	CHECK(!strcmp(dist_fmt_ns(b, sizeof(b), 1966080), "1.97 ms"));
	CHECK(!strcmp(dist_fmt_ns(b, sizeof(b), 2.5e12), "2.5e+03 s"));
	CHECK(dist_metric_parse("blocked", &(uint32_t){ 0 }) == 0);
	CHECK(dist_metric_parse("blocks", &(uint32_t){ 0 }) == -EINVAL);
}

int main(void)
{
	char cmd[128];

	if (!freopen("/dev/null", "w", stderr))
		return 1;
	strcpy(dir, "/tmp/bcs-test-dist-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_merge();
	test_dumps();
	test_fmt();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		failed++;
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of Slurm's hostlist syntax (hostlist.c): ranges,
 * widths, several groups, several names, and every kind of bad list,
 * with the bounds on names and lengths.
 */
#include <errno.h>
#include <string.h>

#include "core/hostlist.h"
#include "tests/unit.h"

struct got {
	char all[8192];
	unsigned int n, stop_at;
};

static int collect(const char *name, void *arg)
{
	struct got *g = arg;
	size_t len = strlen(g->all);

	if (g->n++ < 200)
		snprintf(g->all + len, sizeof(g->all) - len, "%s%s",
			 len ? " " : "", name);
	return g->stop_at && g->n == g->stop_at ? -EINTR : 0;
}

/* Expand @list: its return, the names in *@g. */
static int run(const char *list, struct got *g)
{
	char err[128];

	memset(g, 0, sizeof(*g));
	return hostlist_expand(list, collect, g, err, sizeof(err));
}

static int is(const char *list, const char *want)
{
	struct got g;

	if (run(list, &g) || strcmp(g.all, want)) {
		fprintf(stderr, "'%s' gave '%s', not '%s'\n", list, g.all, want);
		return 0;
	}
	return 1;
}

static int bad(const char *list, int code)
{
	struct got g;
	char err[128] = "";
	int r;

	memset(&g, 0, sizeof(g));
	r = hostlist_expand(list, collect, &g, err, sizeof(err));
	if (r != code || !*err) {
		fprintf(stderr, "'%.60s' gave %d '%s', not %d\n", list, r, err,
			code);
		return 0;
	}
	return 1;
}

int main(void)
{
	char big[2048];
	struct got g;
	size_t i;

	CHECK(is("node1", "node1"));
	CHECK(is("node[1-3]", "node1 node2 node3"));
	CHECK(is("node[01-03,10]", "node01 node02 node03 node10"));
	CHECK(is("node[08-10]", "node08 node09 node10"));
	CHECK(is("node[8-10]", "node8 node9 node10"));
	CHECK(is("n[1-2]-ib", "n1-ib n2-ib"));
	CHECK(is("r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2"));
	CHECK(is("a,b[1-2],c", "a b1 b2 c"));
	CHECK(is("[1-3]", "1 2 3"));
	CHECK(is("3", "3"));
	CHECK(is("node[5]", "node5"));
	CHECK(is("x[0-0]", "x0"));
	/* Slurm's own example. */
	CHECK(is("node[01-16,20]", "node01 node02 node03 node04 node05 node06 "
		 "node07 node08 node09 node10 node11 node12 node13 node14 "
		 "node15 node16 node20"));

	CHECK(bad("", -EINVAL));
	CHECK(bad(",", -EINVAL));
	CHECK(bad("a,,b", -EINVAL));
	CHECK(bad("node[1-", -EINVAL));
	CHECK(bad("node[1-3", -EINVAL));
	CHECK(bad("node1-3]", -EINVAL));
	CHECK(bad("node[[1]]", -EINVAL));
	CHECK(bad("node[3-1]", -EINVAL));
	CHECK(bad("node[a-b]", -EINVAL));
	CHECK(bad("node[]", -EINVAL));
	CHECK(bad("node[1,]", -EINVAL));
	CHECK(bad("node[1-2-3]", -EINVAL));
	CHECK(bad("node[1234567890]", -EINVAL));
	CHECK(bad("n[0-99999]", -E2BIG));
	CHECK(bad("a[1-64]b[1-64]c[1-2]", -E2BIG));
	/* The names of a list at the bound, and one past it. */
	CHECK(run("n[1-4096]", &g) == 0 && g.n == 4096);
	CHECK(bad("n[1-4096],m", -E2BIG));
	/* The caller stops it. */
	memset(&g, 0, sizeof(g));
	g.stop_at = 2;
	CHECK(hostlist_expand("a,b,c", collect, &g, big, sizeof(big)) == -EINTR &&
	      g.n == 2);
	/* Lengths: a list and a name at and past their bounds. */
	memset(big, 'a', sizeof(big));
	big[HOSTLIST_NAME_MAX] = '\0';
	CHECK(run(big, &g) == 0 && g.n == 1);
	big[HOSTLIST_NAME_MAX] = 'a';
	big[HOSTLIST_NAME_MAX + 1] = '\0';
	CHECK(bad(big, -EINVAL));
	for (i = 0; i + 4 <= HOSTLIST_LEN_MAX; i += 4)
		memcpy(big + i, "abc,", 4);
	big[i - 1] = '\0';
	CHECK(run(big, &g) == 0);
	memset(big, 'a', sizeof(big));
	for (i = 0; i < HOSTLIST_LEN_MAX + 1; i += 2)
		big[i + 1] = ',';
	big[HOSTLIST_LEN_MAX + 1] = '\0';
	CHECK(bad(big, -EINVAL));
	return unit_done("test_hostlist");
}

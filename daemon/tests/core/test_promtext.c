// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text format (core/promtext.c): label values and help
 * escaped, never cut in the middle of an escape; every counter of the
 * table (counters.h) with its HELP, TYPE and value; the rejected
 * datagrams by verdict.
 */
#include <stdlib.h>
#include <string.h>

#include "core/promtext.h"
#include "proto/proto.h"
#include "tests/unit.h"

static void test_escape(void)
{
	char out[64], small[5];

	CHECK(!strcmp(prom_escape_label("a\"b\\c\nd", out, sizeof(out)),
		      "a\\\"b\\\\c\\nd"));
	CHECK(!strcmp(prom_escape_help("a\"b\\c\nd", out, sizeof(out)),
		      "a\"b\\\\c\\nd"));
	CHECK(!strcmp(prom_escape_label("", out, sizeof(out)), ""));
	/* Cut short between escapes, never within one. */
	CHECK(!strcmp(prom_escape_label("ab\"c", small, sizeof(small)),
		      "ab\\\""));
	CHECK(!strcmp(prom_escape_label("abc\"", small, sizeof(small)),
		      "abc"));
	CHECK(!strcmp(prom_escape_label("abcdefgh", small, sizeof(small)),
		      "abcd"));
}

/* The line of @out that starts with @start, or NULL. */
static const char *line(const char *out, const char *start)
{
	const char *p = out;
	size_t n = strlen(start);

	while (p && *p) {
		if (!strncmp(p, start, n))
			return p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static void test_counters(void)
{
	struct bcsd_counters c;
	char *out = NULL, want[256];
	unsigned int nr = 0, found = 0, i;
	size_t len = 0;
	uint64_t v = 1000;
	FILE *f;

	memset(&c, 0, sizeof(c));
#define SET(part, name, what) c.name = v++;
	BCSD_COUNTERS(SET)
#undef SET
	for (i = 1; i < __BCSP_VERDICT_MAX; i++)
		c.rejected[i] = 7 * i;
	f = open_memstream(&out, &len);
	CHECK(f != NULL);
	if (!f)
		return;
	prom_counters(f, &c);
	fclose(f);
	v = 1000;
#define FIND(part, name, what)						\
	nr++;								\
	snprintf(want, sizeof(want), "# HELP bcsd_" #name "_total "	\
		 #part ": %s\n", what);					\
	found += line(out, want) != NULL;				\
	snprintf(want, sizeof(want), "# TYPE bcsd_" #name		\
		 "_total counter\n");					\
	found += line(out, want) != NULL;				\
	snprintf(want, sizeof(want), "bcsd_" #name "_total %llu\n",	\
		 (unsigned long long)v++);				\
	found += line(out, want) != NULL;
	BCSD_COUNTERS(FIND)
#undef FIND
	CHECK(nr > 80);
	CHECK(found == 3 * nr);
	CHECK(line(out, "# TYPE bcsd_rejected_total counter\n") != NULL);
	for (i = 1; i < __BCSP_VERDICT_MAX; i++) {
		snprintf(want, sizeof(want),
			 "bcsd_rejected_total{verdict=\"%s\"} %u\n",
			 bcsp_verdict_name(i), 7 * i);
		CHECK(line(out, want) != NULL);
	}
	free(out);
}

static void test_one(void)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	CHECK(f != NULL);
	if (!f)
		return;
	prom_u64(f, "x_seconds", PROM_GAUGE, "two\nlines \\ here",
		 18446744073709551615ULL);
	fclose(f);
	CHECK(!strcmp(out, "# HELP x_seconds two\\nlines \\\\ here\n"
		      "# TYPE x_seconds gauge\n"
		      "x_seconds 18446744073709551615\n"));
	free(out);
}

int main(void)
{
	test_escape();
	test_counters();
	test_one();
	return unit_done("test_promtext");
}

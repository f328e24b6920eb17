// SPDX-License-Identifier: GPL-2.0
/*
 * The table of message types (proto/codec.c) against itself and against
 * wire-protocol.rst's table of types: every type has a name, an encoder
 * and a decoder, every body it allows fits a datagram, and the document
 * has one row per type with its number, name and sizes, and no other.
 *
 * Usage: test_types [wire-protocol.rst]; by default the document beside
 * the tree this test was built in, found from its own path.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/proto.h"
#include "tests/unit.h"

/* One row of the document's table. */
struct doc_row {
	unsigned int type, fixed, elem, min, max;
	char name[32];
};

static const char header[] = "type name";

/*
 * "-" (written "\-") for none, or a number; *@end past it.  -1 if
 * neither.
 */
static long field(const char *s, const char **end)
{
	char *e;
	long v;

	while (*s == ' ')
		s++;
	if (!strncmp(s, "\\-", 2)) {
		*end = s + 2;
		return 0;
	}
	v = strtol(s, &e, 10);
	if (e == s || v < 0)
		return -1;
	*end = e;
	return v;
}

/*
 * A row "1    strobe       40    \-      \-" or "3 request 24 4 0, 4 ..
 * 260" or "2 map 24 32 0 .. 41": false if it is not one.
 */
static bool parse_row(const char *line, struct doc_row *r)
{
	const char *p;
	long v[3], a, b;
	int n, i;

	memset(r, 0, sizeof(*r));
	if (sscanf(line, "%u %31s %n", &r->type, r->name, &n) != 2)
		return false;
	p = line + n;
	for (i = 0; i < 2; i++) {
		v[i] = field(p, &p);
		if (v[i] < 0)
			return false;
	}
	r->fixed = (unsigned int)v[0];
	r->elem = (unsigned int)v[1];
	while (*p == ' ')
		p++;
	if (!r->elem)
		return !strncmp(p, "\\-", 2);
	/* "0 .. MAX" or "0, MIN .. MAX". */
	a = field(p, &p);
	if (a != 0)
		return false;
	if (*p == ',') {
		a = field(p + 1, &p);
		if (a < 0)
			return false;
	}
	if (strncmp(p, " .. ", 4))
		return false;
	b = field(p + 4, &p);
	if (b < 0)
		return false;
	r->min = (unsigned int)a;
	r->max = (unsigned int)b;
	return true;
}

/* The rows of the table of types in @path: how many, -1 if none found. */
static int read_doc(const char *path, struct doc_row *rows, int max)
{
	char line[256];
	int n = 0, borders = 0;
	bool in = false;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!in) {
			in = !strncmp(line, header, strlen(header));
			continue;
		}
		if (!strncmp(line, "====", 4)) {
			if (++borders == 2)
				break;
			continue;
		}
		if (n < max && parse_row(line, &rows[n])) {
			n++;
		} else {
			fprintf(stderr, "%s: not a row of the table of types: %s\n",
				path, line);
			n = max + 1;
		}
	}
	fclose(f);
	return in && borders == 2 ? n : -1;
}

int main(int argc, char **argv)
{
	struct doc_row rows[2 * __BCSP_TYPE_MAX];
	unsigned int seen[__BCSP_TYPE_MAX] = { 0 };
	char path[4096], self[4096];
	unsigned int t, u;
	int n, i, valid = 0;

	if (argc > 1) {
		snprintf(path, sizeof(path), "%s", argv[1]);
	} else {
		snprintf(self, sizeof(self), "%s", argv[0]);
		snprintf(path, sizeof(path),
			 "%s/../../../Documentation/wire-protocol.rst",
			 dirname(self));
	}

	/* The table itself. */
	for (t = 0; t < __BCSP_TYPE_MAX + 2; t++) {
		const struct bcsp_type_desc *d = &bcsp_types[t];

		if (!bcsp_type_valid(t)) {
			CHECK(!strcmp(bcsp_type_name(t), "?"));
			CHECK(!bcsp_body_len_ok(t, 0) &&
			      !bcsp_body_len_ok(t, 40));
			continue;
		}
		valid++;
		CHECK(d->name && d->encode && d->decode &&
		      !strcmp(bcsp_type_name(t), d->name));
		for (u = 1; u < t; u++)
			CHECK(strcmp(bcsp_types[u].name, d->name));
		/* Fixed size: no elements; else a count that may be 0. */
		CHECK(d->elem ? d->min <= d->max : !d->min && !d->max);
		/* The longest body fits a datagram. */
		CHECK(d->fixed + (size_t)d->elem * d->max <=
		      BCSP_MAX_LEN - BCSP_HDR_LEN - BCSP_TAG_LEN);
		/* The lengths allowed: these and no others. */
		for (size_t len = 0; len <= BCSP_MAX_LEN; len++) {
			bool ok = len == d->fixed;

			if (d->elem && len > d->fixed &&
			    (len - d->fixed) % d->elem == 0) {
				size_t k = (len - d->fixed) / d->elem;

				ok = k >= d->min && k <= d->max;
			}
			if (bcsp_body_len_ok(t, len) != ok) {
				fprintf(stderr, "%s: body of %zu bytes\n",
					d->name, len);
				CHECK(0);
			}
		}
	}
	CHECK(valid == __BCSP_TYPE_MAX - 1);

	/* The document's table: a row per type, the table's. */
	n = read_doc(path, rows, (int)(sizeof(rows) / sizeof(rows[0])));
	CHECK(n == valid);
	for (i = 0; i < n && i < (int)(sizeof(rows) / sizeof(rows[0])); i++) {
		const struct doc_row *r = &rows[i];
		const struct bcsp_type_desc *d;

		if (!bcsp_type_valid(r->type)) {
			fprintf(stderr, "%s: type %u is not one\n", path,
				r->type);
			CHECK(0);
			continue;
		}
		d = &bcsp_types[r->type];
		seen[r->type]++;
		if (strcmp(r->name, d->name) || r->fixed != d->fixed ||
		    r->elem != d->elem || r->max != d->max ||
		    (r->min > 1 ? r->min : 0) != (d->min > 1 ? d->min : 0)) {
			fprintf(stderr,
				"%s: type %u: %s %u %u %u..%u, the table has %s %u %u %u..%u\n",
				path, r->type, r->name, r->fixed, r->elem,
				r->min, r->max, d->name, d->fixed, d->elem,
				d->min, d->max);
			CHECK(0);
		}
	}
	for (t = 0; t < __BCSP_TYPE_MAX; t++)
		CHECK(seen[t] == (bcsp_type_valid(t) ? 1u : 0u));
	return unit_done("test_types");
}

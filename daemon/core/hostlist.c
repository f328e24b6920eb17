// SPDX-License-Identifier: GPL-2.0
/*
 * Slurm's hostlist syntax, expanded (hostlist.h).  A list is names apart
 * by commas outside brackets; a name is text and bracket groups, each a
 * comma-separated list of numbers and ranges; the names are every
 * combination of the groups' numbers, the first group's changing
 * slowest.  Recursion is one level per bracket group, at most as deep as
 * the name is long.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/hostlist.h"

struct expansion {
	hostlist_fn *fn;
	void *arg;
	unsigned int names;
	char *err;
	size_t errlen;
};

static int fail(struct expansion *x, int code, const char *what,
		const char *at, size_t n)
{
	snprintf(x->err, x->errlen, "%s at '%.*s'", what,
		 (int)(n > 40 ? 40 : n), at);
	return code;
}

/* A number of 1 .. 9 digits at @s (@n bytes): its value and digits. */
static bool number(const char *s, size_t n, uint32_t *v, size_t *digits)
{
	size_t i = 0;

	*v = 0;
	while (i < n && i < 9 && s[i] >= '0' && s[i] <= '9')
		*v = *v * 10 + (uint32_t)(s[i++] - '0');
	*digits = i;
	return i > 0 && (i == n || s[i] < '0' || s[i] > '9');
}

/*
 * The names of the rest of a name, @s (@n bytes), after @name's first
 * @len bytes.
 */
static int expand(struct expansion *x, const char *s, size_t n, char *name,
		  size_t len)
{
	const char *open = memchr(s, '[', n), *close, *p, *end;
	size_t lit = open ? (size_t)(open - s) : n, d1, d2;
	uint32_t lo, hi, v;
	int r;

	if (memchr(s, ']', lit))
		return fail(x, -EINVAL, "a ']' without '['", s, n);
	if (len + lit > HOSTLIST_NAME_MAX)
		return fail(x, -EINVAL, "a name too long", s, n);
	memcpy(name + len, s, lit);
	len += lit;
	if (!open) {
		if (!len)
			return fail(x, -EINVAL, "an empty name", s, n);
		name[len] = '\0';
		if (++x->names > HOSTLIST_HOSTS_MAX) {
			snprintf(x->err, x->errlen, "more than %d names",
				 HOSTLIST_HOSTS_MAX);
			return -E2BIG;
		}
		return x->fn(name, x->arg);
	}
	end = s + n;
	close = memchr(open, ']', (size_t)(end - open));
	if (!close)
		return fail(x, -EINVAL, "a '[' without ']'", open, (size_t)(end - open));
	if (memchr(open + 1, '[', (size_t)(close - open - 1)))
		return fail(x, -EINVAL, "a '[' inside brackets", open,
			    (size_t)(end - open));
	for (p = open + 1; p <= close; p += d1 + 1) {
		if (!number(p, (size_t)(close - p), &lo, &d1))
			return fail(x, -EINVAL, "not a number", p,
				    (size_t)(end - p));
		hi = lo;
		if (p[d1] == '-') {
			if (!number(p + d1 + 1, (size_t)(close - p - d1 - 1),
				    &hi, &d2))
				return fail(x, -EINVAL, "not a number",
					    p + d1 + 1, (size_t)(end - p - d1 - 1));
			if (hi < lo)
				return fail(x, -EINVAL, "a range backwards", p,
					    (size_t)(end - p));
			d2 += 1;
		} else {
			d2 = 0;
		}
		if (p[d1 + d2] != ',' && p + d1 + d2 != close)
			return fail(x, -EINVAL, "not a number", p,
				    (size_t)(end - p));
		if (len + d1 > HOSTLIST_NAME_MAX || len + 10 > HOSTLIST_NAME_MAX + 1)
			return fail(x, -EINVAL, "a name too long", s, n);
		for (v = lo;; v++) {
			snprintf(name + len, HOSTLIST_NAME_MAX + 1 - len,
				 "%0*u", (int)d1, v);
			r = expand(x, close + 1, (size_t)(end - close - 1),
				   name, len + strlen(name + len));
			if (r || v == hi)
				break;
		}
		if (r)
			return r;
		d1 += d2;
	}
	return 0;
}

int hostlist_expand(const char *list, hostlist_fn *fn, void *arg, char *err,
		    size_t errlen)
{
	struct expansion x = { fn, arg, 0, err, errlen };
	char name[HOSTLIST_NAME_MAX + 1];
	size_t n = strnlen(list, HOSTLIST_LEN_MAX + 1), i, start = 0;
	int depth = 0, r;

	if (!n)
		return fail(&x, -EINVAL, "an empty list", list, 0);
	if (n > HOSTLIST_LEN_MAX) {
		snprintf(err, errlen, "a list longer than %d bytes",
			 HOSTLIST_LEN_MAX);
		return -EINVAL;
	}
	for (i = 0; i <= n; i++) {
		if (i < n && list[i] == '[')
			depth++;
		else if (i < n && list[i] == ']')
			depth--;
		if (i < n && (list[i] != ',' || depth))
			continue;
		r = expand(&x, list + start, i - start, name, 0);
		if (r)
			return r;
		start = i + 1;
	}
	return 0;
}

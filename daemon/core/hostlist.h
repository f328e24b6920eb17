/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Slurm's hostlist syntax, expanded: "node[01-16,20],login1" is node01 ..
 * node16, node20 and login1; several bracket groups in one name give
 * every combination ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2); a range keeps
 * the width of its first number ("[08-10]": 08 09 10).  Pure: it reads
 * nothing and resolves no name (the callers do: ctl.c, the names of a job
 * create; topo.c, the hosts of a nodes file line); bounded in the
 * list's length, the names' and their number.
 */
#ifndef BCSD_HOSTLIST_H
#define BCSD_HOSTLIST_H

#include <stddef.h>

#define HOSTLIST_LEN_MAX	1023	/* bytes of a list */
#define HOSTLIST_NAME_MAX	255	/* bytes of a name */
#define HOSTLIST_HOSTS_MAX	4096	/* names of a list */

/* Called with each name, in order; non-zero stops the expansion. */
typedef int hostlist_fn(const char *name, void *arg);

/*
 * Call @fn(name, @arg) for each name of @list, in order (a name given
 * twice comes twice): 0, or -EINVAL with why in @err (@errlen bytes) for
 * an empty list or name, an unbalanced or nested bracket, a range that is
 * not digits or runs backwards, a list or name too long; -E2BIG for more
 * than HOSTLIST_HOSTS_MAX names; or @fn's return, if not 0.
 */
int hostlist_expand(const char *list, hostlist_fn *fn, void *arg, char *err,
		    size_t errlen);

#endif /* BCSD_HOSTLIST_H */

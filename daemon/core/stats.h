/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.c: every part's counters as JSON, for bcsctl status and the
 * stats file; it reads them and calls no part.  What the parts above
 * the core show of their own (the tree's place, the clocks' offsets, the
 * global records) they register as sections, each a key of the JSON.
 */
#ifndef BCSD_STATS_H
#define BCSD_STATS_H

struct bcsd;
struct json_object;

typedef struct json_object *stats_fn(const struct bcsd *d);

#define STATS_SECTIONS_MAX	4

struct bcsd_stats {
	struct {
		const char *name;
		stats_fn *fn;
	} section[STATS_SECTIONS_MAX];
	unsigned int nr;
};

/*
 * Section @name ("tree", "offsets", "global") is @fn's object; without
 * one registered it is null.
 */
void stats_register(struct bcsd *d, const char *name, stats_fn *fn);
struct json_object *stats_json(const struct bcsd *d);
void stats_write(const struct bcsd *d);

#endif /* BCSD_STATS_H */

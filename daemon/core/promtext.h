/* SPDX-License-Identifier: GPL-2.0 */
/*
 * promtext.c: the Prometheus text exposition format (version 0.0.4), as
 * node_exporter's textfile collector and a Prometheus server read it.
 * Pure: it writes what it is given to a stream; metrics.c gathers the
 * values.  Every metric gets its "# HELP" and "# TYPE" lines first.
 */
#ifndef BCSD_PROMTEXT_H
#define BCSD_PROMTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/counters.h"

enum prom_type {
	PROM_COUNTER,
	PROM_GAUGE,
};

/*
 * @in as a label value: backslash, double quote and newline escaped
 * (\\, \", \n), into @out of @len bytes, cut short (never in the middle
 * of an escape) if it does not fit.  Returns @out.
 */
char *prom_escape_label(const char *in, char *out, size_t len);
/* @in as help text: backslash and newline escaped. */
char *prom_escape_help(const char *in, char *out, size_t len);

/* "# HELP @name @help" and "# TYPE @name @type". */
void prom_head(FILE *f, const char *name, enum prom_type type,
	       const char *help);
/* A metric of one sample, with its head. */
void prom_u64(FILE *f, const char *name, enum prom_type type,
	      const char *help, uint64_t v);

/*
 * Every counter of the table (counters.h) as bcsd_NAME_total, its help
 * the table's, and the datagrams rejected as bcsd_rejected_total with a
 * label verdict per verdict.
 */
void prom_counters(FILE *f, const struct bcsd_counters *c);

#endif /* BCSD_PROMTEXT_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text exposition format (promtext.h): metric names are
 * made of the counters' names, which are C identifiers and so valid
 * names; label values and help text may hold anything and are escaped.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "core/promtext.h"
#include "proto/proto.h"

/* @in into @out, escaping backslash, newline and (@quote) '"'. */
static char *escape(const char *in, char *out, size_t len, bool quote)
{
	size_t o = 0;
	const char *e;
	char esc[3];

	if (!len)
		return out;
	for (; *in; in++) {
		e = NULL;
		if (*in == '\\')
			e = "\\\\";
		else if (*in == '\n')
			e = "\\n";
		else if (*in == '"' && quote)
			e = "\\\"";
		if (!e) {
			esc[0] = *in;
			esc[1] = '\0';
			e = esc;
		}
		if (o + strlen(e) >= len)
			break;
		memcpy(out + o, e, strlen(e));
		o += strlen(e);
	}
	out[o] = '\0';
	return out;
}

char *prom_escape_label(const char *in, char *out, size_t len)
{
	return escape(in, out, len, true);
}

char *prom_escape_help(const char *in, char *out, size_t len)
{
	return escape(in, out, len, false);
}

void prom_head(FILE *f, const char *name, enum prom_type type,
	       const char *help)
{
	char h[512];

	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name,
		prom_escape_help(help, h, sizeof(h)), name,
		type == PROM_COUNTER ? "counter" : "gauge");
}

void prom_u64(FILE *f, const char *name, enum prom_type type,
	      const char *help, uint64_t v)
{
	prom_head(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

void prom_counters(FILE *f, const struct bcsd_counters *c)
{
	char label[64];
	int i;

#define BCSD_COUNTER_PROM(part, name, what)				\
	prom_u64(f, "bcsd_" #name "_total", PROM_COUNTER,		\
		 #part ": " what, c->name);
	BCSD_COUNTERS(BCSD_COUNTER_PROM)
#undef BCSD_COUNTER_PROM
	prom_head(f, "bcsd_rejected_total", PROM_COUNTER,
		  "core: datagrams rejected, by verdict");
	for (i = 1; i < __BCSP_VERDICT_MAX; i++)
		fprintf(f, "bcsd_rejected_total{verdict=\"%s\"} %" PRIu64 "\n",
			prom_escape_label(bcsp_verdict_name(i), label,
					  sizeof(label)),
			c->rejected[i]);
}

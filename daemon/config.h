/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsd configuration: one table of options, with defaults and ranges,
 * read from the configuration file and overridden by --name=value on the
 * command line.
 */
#ifndef BCSD_CONFIG_H
#define BCSD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum cfg_type {
	CFG_UINT,	/* unsigned decimal within [min, max] */
	CFG_STR,	/* any string; with @choices one of them */
};

struct cfg_opt {
	const char *name;
	enum cfg_type type;
	const char *defval;
	uint64_t min, max;
	const char *choices;	/* "a|b|c" for CFG_STR, or NULL */
	const char *help;
};

#define CFG_VALUE_MAX	256

struct cfg {
	char values[32][CFG_VALUE_MAX];
	bool set[32];		/* given on the command line */
};

extern const struct cfg_opt cfg_opts[];
extern const unsigned int cfg_nr_opts;

void cfg_init(struct cfg *cfg);
/* Set option @name; returns 0 or -1 with a message in @err. */
int cfg_set(struct cfg *cfg, const char *name, const char *value,
	    bool from_cmdline, char *err, size_t errlen);
/* Read "name value" lines; command-line values win.  0 or -1 with @err. */
int cfg_read_file(struct cfg *cfg, const char *path, bool must_exist,
		  char *err, size_t errlen);
/* The same from stream @f, named @path in messages. */
int cfg_read_stream(struct cfg *cfg, FILE *f, const char *path, char *err,
		    size_t errlen);
uint64_t cfg_uint(const struct cfg *cfg, const char *name);
const char *cfg_str(const struct cfg *cfg, const char *name);
void cfg_print_help(FILE *f);
void cfg_dump(const struct cfg *cfg, FILE *f);

#endif /* BCSD_CONFIG_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the configuration parser.  The input is a
 * configuration file, read by cfg_read_stream() as bcsd reads
 * /etc/bcs/bcsd.conf.  A file that is accepted must leave every option
 * valid (cfg_set() takes each value again, as cfg_format() writes it),
 * and what cfg_dump() writes of it (bcsd --print-config) must read back
 * to the same typed struct cfg.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "fuzz/fuzz_assert.h"

static int read_buf(struct cfg *cfg, const void *buf, size_t len, char *err,
		    size_t errlen)
{
	FILE *f = fmemopen((void *)buf, len, "r");
	int ret;

	FUZZ_ASSERT(f);
	ret = cfg_read_stream(cfg, f, "fuzz.conf", err, errlen);
	fclose(f);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cfg cfg, again, check;
	char err[256], value[CFG_STR_MAX], *dump = NULL;
	unsigned long long num;
	size_t dump_len = 0;
	unsigned int i;
	FILE *f;

	if (size > 64 * 1024)
		return -1;
	cfg_init(&cfg);
	err[0] = '\0';
	if (read_buf(&cfg, data, size, err, sizeof(err))) {
		/* Refused with a message that names the file. */
		FUZZ_ASSERT(!strncmp(err, "fuzz.conf:", 10));
		return 0;
	}
	for (i = 0; i < cfg_nr_opts; i++) {
		cfg_format(&cfg, i, value, sizeof(value));
		cfg_init(&check);
		FUZZ_ASSERT(!cfg_set(&check, cfg_opts[i].name, value, true,
				     err, sizeof(err)));
		if (cfg_opts[i].type == CFG_UINT) {
			num = strtoull(value, NULL, 10);
			FUZZ_ASSERT(num >= cfg_opts[i].min);
			FUZZ_ASSERT(num <= cfg_opts[i].max);
		}
	}
	f = open_memstream(&dump, &dump_len);
	FUZZ_ASSERT(f);
	cfg_dump(&cfg, f);
	FUZZ_ASSERT(!fclose(f));
	cfg_init(&again);
	if (read_buf(&again, dump, dump_len, err, sizeof(err))) {
		fprintf(stderr, "--print-config output refused: %s\n%s", err,
			dump);
		abort();
	}
	/* The same typed values, except which came from the command line. */
	memcpy(again.from_cmdline, cfg.from_cmdline,
	       sizeof(again.from_cmdline));
	FUZZ_ASSERT(!memcmp(&cfg, &again, sizeof(cfg)));
	free(dump);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the option table: defaults, ranges, choices, the
 * configuration file format, and command-line precedence.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "unit.h"

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int main(void)
{
	char err[256], path[] = "/tmp/bcsd-conf-XXXXXX";
	char stream[] = "role master\nport 0\n";
	struct cfg cfg;
	FILE *f;
	int fd;

	cfg_init(&cfg);
	CHECK(!strcmp(cfg_str(&cfg, "role"), "node"));
	CHECK(cfg_uint(&cfg, "port") == 5399);
	CHECK(cfg_uint(&cfg, "slice_us") == 10000);

	CHECK(cfg_set(&cfg, "slice_us", "49", true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "50..10000000") != NULL);
	CHECK(cfg_set(&cfg, "slice_us", "-1", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "slice_us", "12abc", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "slice_us", "", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "slice_us", "99999999999999999999999", true, err,
		      sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "port", "0", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "role", "boss", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "role", "mast", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "role", "", true, err, sizeof(err)) < 0);
	CHECK(cfg_set(&cfg, "nonsense", "1", true, err, sizeof(err)) < 0);
	CHECK(strstr(err, "unknown option") != NULL);
	CHECK(cfg_set(&cfg, "role", "both", true, err, sizeof(err)) == 0);
	CHECK(cfg_set(&cfg, "slice_us", "1000", true, err, sizeof(err)) == 0);

	fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(write_file(path, "# comment\n\nrole master   # trailing\n"
			       "slice_us = 500\nport\t6000\ncluster 9\n") == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) == 0);
	/* The command line wins over the file. */
	CHECK(!strcmp(cfg_str(&cfg, "role"), "both"));
	CHECK(cfg_uint(&cfg, "slice_us") == 1000);
	CHECK(cfg_uint(&cfg, "port") == 6000);
	CHECK(cfg_uint(&cfg, "cluster") == 9);

	CHECK(write_file(path, "port 70000\n") == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) < 0);
	CHECK(strstr(err, ":1:") != NULL);
	CHECK(write_file(path, "bogus 1\n") == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) < 0);

	/*
	 * What --print-config writes reads back the same, also a value
	 * that begins with '=' (fuzz_config, corpus/config/regress-*).
	 */
	cfg_init(&cfg);
	CHECK(write_file(path, "interface ==53\nstats_file = \n") == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) == 0);
	CHECK(!strcmp(cfg_str(&cfg, "interface"), "=53"));
	CHECK(!strcmp(cfg_str(&cfg, "stats_file"), ""));
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		cfg_dump(&cfg, f);
		fclose(f);
	}
	cfg_init(&cfg);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) == 0);
	CHECK(!strcmp(cfg_str(&cfg, "interface"), "=53"));
	CHECK(cfg_uint(&cfg, "port") == 5399);

	/* A stream, as the fuzzer reads it: errors name the stream. */
	f = fmemopen(stream, strlen(stream), "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(cfg_read_stream(&cfg, f, "mem", err, sizeof(err)) < 0);
		CHECK(!strncmp(err, "mem:2: ", 7));
		fclose(f);
	}

	unlink(path);
	CHECK(cfg_read_file(&cfg, path, false, err, sizeof(err)) == 0);
	CHECK(cfg_read_file(&cfg, path, true, err, sizeof(err)) < 0);
	return unit_done("test_config");
}

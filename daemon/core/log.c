// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "core/log.h"

static bool log_syslog;
static int log_max = LOG_NOTICE;
static const char *log_ident = "bcsd";

void log_setup(const char *ident, bool use_syslog, int verbose)
{
	log_ident = ident;
	log_syslog = use_syslog;
	log_set_verbose(verbose);
	if (use_syslog)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

void log_set_verbose(int verbose)
{
	log_max = LOG_NOTICE + (verbose > 2 ? 2 : verbose);
}

void log_msg(int level, const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		fprintf(stderr, "%s[%lld.%03ld]: ", log_ident,
			(long long)ts.tv_sec, ts.tv_nsec / 1000000);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

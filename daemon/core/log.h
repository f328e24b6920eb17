/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Logging to stderr or syslog, in the kernel's pr_*() style.
 */
#ifndef BCSD_LOG_H
#define BCSD_LOG_H

#include <stdbool.h>
#include <syslog.h>

void log_setup(const char *ident, bool use_syslog, int verbose);
/* 0: notices, 1: info, 2: debug (a reload changes it). */
void log_set_verbose(int verbose);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define pr_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define pr_notice(...)	log_msg(LOG_NOTICE, __VA_ARGS__)
#define pr_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* BCSD_LOG_H */

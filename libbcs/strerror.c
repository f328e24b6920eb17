// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: error messages for people.  The errno values of the interface
 * are overloaded (ENOENT is "no module" when opening and "no such job"
 * afterwards), so the message depends on what was being attempted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bcs.h"

#define NOT_LOADED(what) \
	"bcs module not loaded (" what " missing); " \
	"run 'modprobe bcs' or insmod bcs.ko"

/*
 * A message that names the interface's limits, from the constants of
 * <linux/bcs.h>, formatted into a per-thread buffer.
 */
__attribute__((format(printf, 1, 2)))
static const char *limits_msg(const char *fmt, ...)
{
	static _Thread_local char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

static const char *open_msg(int e, int stat)
{
	switch (e) {
	case ENOENT:
	case ENXIO:
	case ENODEV:
		return stat ? NOT_LOADED("/dev/bcsstat") : NOT_LOADED("/dev/bcs");
	case EACCES:
		return stat ? "cannot open /dev/bcsstat: permission denied" :
			      "cannot open /dev/bcs: permission denied";
	case EPROTO:
		return "/dev/bcsstat has an unknown format "
		       "(bcs module and tools do not match)";
	}
	return NULL;
}

static const char *job_msg(int e, int task)
{
	switch (e) {
	case ENOENT:
		return "no such job";
	case ESRCH:
		return "no such process";
	case EBUSY:
		return task ? "process already in another job" :
			      "job is busy";
	case EEXIST:
		return "job id already in use";
	case ENOSPC:
		return limits_msg("too many jobs (%u)", BCS_JOBS_MAX);
	case EAGAIN:
		return task ? "the process kept creating threads; try again" :
			      NULL;
	case EINVAL:
		if (task)
			return "invalid argument (bad job id, pid or flags)";
		return limits_msg("invalid argument (job id 1..%u, row 0..%u "
				  "or none)", BCS_JOB_ID_MAX,
				  BCS_ROWS_MAX - 1);
	case EPERM:
		return task ? "permission denied: only the job's owner (or "
			      "CAP_SYS_ADMIN) may attach to it, and only "
			      "processes it may signal" :
			      "permission denied: needs CAP_SYS_ADMIN (to "
			      "destroy a job: or to own it)";
	}
	return NULL;
}

static const char *control_msg(int e, enum bcs_err_ctx ctx)
{
	switch (e) {
	case EPERM:
		/* Netlink too: it asks what the ioctls ask. */
		return "permission denied: needs CAP_SYS_ADMIN";
	case ENOTCONN:
		return "bcs is off: strobes need standalone or driven mode";
	case EBUSY:
		if (ctx == BCS_CTX_STROBE)
			return "bcs is in driven mode: only its driver "
			       "(the process that entered it, e.g. bcsd) "
			       "may strobe";
		return "bcs is driven by another process";
	case ERANGE:
		if (ctx == BCS_CTX_STROBE)
			return "deadline out of range (beyond a ktime, or "
			       "further ahead than the strobe queue holds)";
		break;
	case EINVAL:
		if (ctx == BCS_CTX_STROBE)
			return limits_msg("invalid strobe (row 0..%u, known "
					  "flags only)", BCS_ROWS_MAX - 1);
		if (ctx == BCS_CTX_CONFIG)
			return limits_msg("invalid configuration (slice "
					  "%llu us .. %llu s, watchdog 0..%u "
					  "slices)",
					  BCS_SLICE_NS_MIN / 1000,
					  BCS_SLICE_NS_MAX / 1000000000,
					  BCS_WATCHDOG_MAX);
		return "invalid request";
	case ENOENT:
		if (ctx == BCS_CTX_NETLINK)
			return "bcs module not loaded (generic netlink family "
			       "\"bcs\" not registered); run 'modprobe bcs' "
			       "or insmod bcs.ko";
		break;
	case ETIMEDOUT:
		return "no answer from the bcs module";
	}
	return NULL;
}

static const char *window_msg(int e)
{
	switch (e) {
	case EPERM:
		return "permission denied: arming a slice window needs "
		       "CAP_SYS_ADMIN";
	case EINVAL:
		return "invalid slice window (the last slice is before "
		       "the first)";
	case E2BIG:
		return "slice window larger than the ring (module parameter "
		       "stat_records)";
	case ERANGE:
		return "the window's first slice has begun: choose one after "
		       "the current slice";
	}
	return NULL;
}

const char *bcs_strerror(int err, enum bcs_err_ctx ctx)
{
	const char *msg = NULL;
	int e = err < 0 ? -err : err;

	switch (ctx) {
	case BCS_CTX_OPEN:
	case BCS_CTX_STAT_OPEN:
		msg = open_msg(e, ctx == BCS_CTX_STAT_OPEN);
		break;
	case BCS_CTX_JOB:
	case BCS_CTX_TASK:
		msg = job_msg(e, ctx == BCS_CTX_TASK);
		break;
	case BCS_CTX_CONFIG:
	case BCS_CTX_STROBE:
	case BCS_CTX_NETLINK:
		msg = control_msg(e, ctx);
		break;
	case BCS_CTX_WINDOW:
		msg = window_msg(e);
		if (!msg)
			msg = control_msg(e, ctx);
		break;
	case BCS_CTX_GENERIC:
		break;
	}
	if (msg)
		return msg;

	switch (e) {
	case 0:
		return "success";
	case EPERM:
		return "permission denied: needs CAP_SYS_ADMIN "
		       "(or the right to signal the process)";
	case ENOTTY:
		return "request not supported by the loaded bcs module "
		       "(bcs module and tools do not match)";
	case EAGAIN:
		return "the list kept changing while it was read; try again";
	case ENODATA:
		return "no data (ring not mapped or empty reply)";
	}
	return strerror(e);
}

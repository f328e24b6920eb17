// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libbcs: names of the interface's enum values that need no device, kept
 * apart from the code that talks to bcs.ko so that a program linked
 * against a stand-in of the device functions (daemon/sim/) can take them
 * from here.
 */
#include <stdint.h>

#include "bcs.h"

const char *bcs_job_end_name(uint32_t reason)
{
	switch (reason) {
	case BCS_JOB_END_DESTROYED:
		return "destroyed";
	case BCS_JOB_END_EXITED:
		return "exited";
	case BCS_JOB_END_DETACHED:
		return "detached";
	}
	return "?";
}

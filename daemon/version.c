// SPDX-License-Identifier: GPL-2.0
/* The release of bcsd (version.h). */
#include "version.h"

/* "" BCS_VERSION: a build that defines it as other than a string fails. */
const char bcsd_version[] = "" BCS_VERSION;

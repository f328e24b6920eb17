/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The release bcsd reports (bcsd --version): BCS_VERSION if the build
 * defines it, a string, else "0.0.0".  Included by version.c alone, which
 * stays clear of <linux/bcs.h>: there BCS_VERSION is the version of the
 * kernel interface, an integer (struct bcs_state.version).
 */
#ifndef BCSD_VERSION_H
#define BCSD_VERSION_H

#ifndef BCS_VERSION
#define BCS_VERSION	"0.0.0"
#endif

#endif /* BCSD_VERSION_H */

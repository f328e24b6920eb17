#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print bcs's version, from its one home: BCS_PACKAGE_VERSION in
# include/uapi/linux/bcs.h.  For Makefiles, dkms and packaging.

top=$(cd "$(dirname "$0")/.." && pwd)
v=$(sed -n 's/^#define[[:space:]]*BCS_PACKAGE_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' \
	"$top/include/uapi/linux/bcs.h")
if [ -z "$v" ]; then
	echo "version.sh: no BCS_PACKAGE_VERSION in include/uapi/linux/bcs.h" >&2
	exit 1
fi
echo "$v"

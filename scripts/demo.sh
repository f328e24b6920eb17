#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: set up (deps.sh), build the tools and the module for the
# Debian 6.1 kernel, boot one qemu guest with it and run
# scripts/demo-guest.sh there.

set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. "$top/scripts/lib.sh"

scripts/deps.sh
bcs_load_kernels
rel=$BCS_KERNEL_6_1

for d in libbcs tools; do
	if [ ! -f "$d/Makefile" ]; then
		echo "demo: $d has no Makefile; cannot build the tools" >&2
		exit 1
	fi
	make -C "$d"
done
mkdir -p "$BUILD"
BCS_KERNELS=$rel scripts/build-modules.sh > "$BUILD/demo-build.log" 2>&1 || {
	cat "$BUILD/demo-build.log" >&2
	exit 1
}

exec selftests/vm/run-vm.sh --kernel "$rel" --timeout "${BCS_VM_TIMEOUT:-600}" \
	--out "$BUILD/vm/demo" -- sh scripts/demo-guest.sh

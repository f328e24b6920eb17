#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build bcs.ko against the headers of every guest kernel (BCS_KERNELS from
# $BCS_CACHE/kernels.env, or a subset given in the environment).  Each kernel
# gets its own copy of the sources in $BUILD/kmod/<release>/src so builds
# never share objects; the result is $BUILD/kmod/<release>/bcs.ko.
#
# W=1, and any compiler or modpost warning fails the build: the kernel's
# own headers are warning-free with the distribution's compiler, so a
# warning is ours.

set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
bcs_load_kernels

jobs=${BCS_JOBS:-$(nproc)}
fail=0

for rel in $BCS_KERNELS; do
	kdir=$(bcs_kvar KDIR "$rel")
	out=$BUILD/kmod/$rel
	src=$out/src
	log=$out/build.log

	echo "build-modules: $rel (headers $kdir)"
	rm -f "$out/bcs.ko"
	bcs_copy_src "$src"

	if timeout 900 make -C "$kdir" M="$src" W=1 -j"$jobs" modules \
			> "$log" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	sed "s|^|  |" "$log"

	if [ $rc != 0 ]; then
		echo "build-modules: $rel: make failed (rc=$rc)" >&2
		fail=1
		continue
	fi
	if grep -qi "warning:" "$log"; then
		echo "build-modules: $rel: compiler warnings:" >&2
		grep -i "warning:" "$log" >&2
		fail=1
		continue
	fi
	if [ ! -f "$src/bcs.ko" ]; then
		echo "build-modules: $rel: no bcs.ko produced" >&2
		fail=1
		continue
	fi
	cp "$src/bcs.ko" "$out/bcs.ko"
	echo "build-modules: $rel: ok -> $out/bcs.ko"
done

exit $fail

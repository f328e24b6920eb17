#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Static checks of the kernel module:
#
#   checkpatch.pl --strict over module/*.[ch] and the UAPI header, from the
#   linux-source-6.1 tree unpacked by scripts/deps.sh; no check is ignored;
#
#   sparse (make C=2) against the 6.1 headers, in a private copy of the
#   sources; any sparse or compiler "warning:"/"error:" line fails.
#
# Exits non-zero if anything was found.

set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
bcs_load_kernels

checkpatch=$BCS_CACHE/linux-source-6.1/scripts/checkpatch.pl
fail=0

# --- checkpatch -----------------------------------------------------------
if [ ! -x "$checkpatch" ] && [ ! -f "$checkpatch" ]; then
	echo "lint: $checkpatch missing: run scripts/deps.sh" >&2
	exit 1
fi

files=$(cd "$top" && ls module/*.c module/*.h include/uapi/linux/bcs*.h \
	2>/dev/null || true)
if [ -z "$files" ]; then
	echo "lint: no module sources found" >&2
	exit 1
fi

echo "lint: checkpatch --strict on $(echo "$files" | wc -w) files"
for f in $files; do
	if ! out=$(cd "$top" && perl "$checkpatch" --strict --no-tree \
			--show-types --color=never --file "$f" 2>&1); then
		echo "$out"
		echo "lint: checkpatch: $f: FAILED"
		fail=1
	fi
done

# --- sparse ---------------------------------------------------------------
rel=$BCS_KERNEL_6_1
kdir=$(bcs_kvar KDIR "$rel")
src=$BUILD/lint/src
log=$BUILD/lint/sparse.log
bcs_copy_src "$src"

echo "lint: sparse (C=2) against $rel"
if ! timeout 900 make -C "$kdir" M="$src" C=2 -j"$(nproc)" modules \
		> "$log" 2>&1; then
	cat "$log"
	echo "lint: sparse: build failed"
	fail=1
elif grep -Eqi "(warning|error):" "$log"; then
	grep -Ei "(warning|error):" "$log"
	echo "lint: sparse: FAILED"
	fail=1
fi

if [ $fail = 0 ]; then
	echo "lint: ok"
fi
exit $fail

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-in-guest.sh: the guest half of `make check-debug`, run as root in
# the debug kernel (scripts/debug-kernel.sh) by scripts/check-debug.sh.
#
#   1. every selftest once (run-in-guest.sh, which loads and unloads
#      bcs.ko and fails on any kernel report);
#   2. the bad-input fuzz again with BCS_DEBUG_FUZZ_SEEDS further seeds of
#      BCS_DEBUG_FUZZ_ITERS iterations each, bcs.ko loaded afresh for each;
#   3. a kmemleak scan once bcs.ko is gone: any suspected leak whose
#      allocation trace passes through bcs.ko fails the run (leaks of the
#      rest of the kernel are counted, not failed).  Once bcs.ko is
#      unloaded its addresses no longer resolve to symbols; the debug
#      kernel has everything the guest needs built in and loads no other
#      module, so an unresolved address in a trace is bcs.ko's.
#
# KTAP on stdout; exits non-zero if any part failed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
seeds=${BCS_DEBUG_FUZZ_SEEDS:-4}
iters=${BCS_DEBUG_FUZZ_ITERS:-20000}
leaks=/sys/kernel/debug/kmemleak

echo "TAP version 13"
echo "1..$((seeds + 2))"
failed=0
num=0

result()	# result RC NAME
{
	num=$((num + 1))
	if [ "$1" = 0 ]; then
		echo "ok $num $2"
	else
		echo "not ok $num $2"
		failed=1
	fi
}

# Only what bcs allocates from here on is asked about at the end.
if [ -w "$leaks" ]; then
	echo clear > "$leaks"
fi

bash "$here/run-in-guest.sh" 2>&1 | sed 's/^/# /'
result "${PIPESTATUS[0]}" "selftests"

for s in $(seq 1 "$seeds"); do
	seed=$(printf '0x%x' $((0x62637364656267 + s)))
	echo "# fuzz: seed $seed, $iters iterations"
	BCS_FUZZ_SEED=$seed BCS_FUZZ_ITERS=$iters \
		bash "$here/run-in-guest.sh" bcs_badinput_test 2>&1 |
		sed 's/^/# /'
	result "${PIPESTATUS[0]}" "fuzz seed $seed"
done

# kmemleak reports an object only after it has gone unreferenced through
# two scans some seconds apart.
rc=0
if [ ! -r "$leaks" ]; then
	echo "# kmemleak: $leaks missing (not a debug kernel?)"
	rc=1
else
	echo scan > "$leaks"
	sleep 6
	echo scan > "$leaks"
	report=$(cat "$leaks")
	total=$(printf '%s\n' "$report" | grep -c '^unreferenced object' || true)
	ours=$(printf '%s\n' "$report" | awk '
		/^unreferenced object/ { if (hit) n++; hit = 0 }
		/\[bcs\]/ || /\] 0xffffffff/ { hit = 1 }
		END { if (hit) n++; print n + 0 }')
	echo "# kmemleak: $total suspected leaks, $ours through bcs.ko"
	if [ "$ours" != 0 ]; then
		printf '%s\n' "$report" | head -n 120 | sed 's/^/#   /'
		rc=1
	fi
fi
result "$rc" "kmemleak"

exit $failed

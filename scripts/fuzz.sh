#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make fuzz`: build bcsd's libFuzzer targets (daemon/fuzz/) with clang,
# -fsanitize=fuzzer,address,undefined, and run each for a time budget.
# Every target starts from its seed corpus in the tree
# (daemon/fuzz/corpus/<target>/, regression inputs included) and a
# working corpus under $BUILD/fuzz/corpus/<target>/ that grows from run
# to run.  A crash, a sanitizer report or a failed check of the harness
# fails the target; its input is saved as $BUILD/fuzz/crash-<target>-*.
# Ends with "N passed, N failed"; exits non-zero if any target failed.
#
# Environment:
#   FUZZ_SECONDS   time budget per target (default 60)
#   FUZZ_TARGETS   subset of targets (default: all)

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
BUILD=${BUILD:-$top/build}
out=$BUILD/fuzz
secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-datagram body config ctl topo mpifile hostlist tgather}

if ! command -v clang > /dev/null; then
	echo "fuzz: clang is missing (scripts/deps.sh installs it)" >&2
	exit 1
fi
mkdir -p "$out"
if ! make -C daemon fuzz-build FUZZ_OUT="$out" > "$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	echo "fuzz: build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

pass=0
fail=0
for t in $targets; do
	bin=$out/fuzz_$t
	seeds=$top/daemon/fuzz/corpus/$t
	work=$out/corpus/$t
	log=$out/$t.log
	dict=()
	[ -f "$top/daemon/fuzz/$t.dict" ] && dict=(-dict="$top/daemon/fuzz/$t.dict")
	mkdir -p "$work"
	echo "# fuzz $t: ${secs}s, seeds $seeds"
	# -timeout: one input taking a second is a hang here.
	timeout -k 10 $((secs + 120)) "$bin" -max_total_time="$secs" \
		-timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/crash-$t-" "${dict[@]}" \
		"$work" "$seeds" > "$log" 2>&1
	rc=$?
	grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | sed 's/^/#   /'
	grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' \
		"$log" | sed 's/^/#   /'
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
		echo "ok fuzz_$t"
	else
		fail=$((fail + 1))
		grep -E 'ERROR|FUZZ_ASSERT|runtime error|SUMMARY|Test unit' \
			"$log" | head -n 10 | sed 's/^/#   /'
		echo "not ok fuzz_$t (rc=$rc, log in $log)"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of bench/drain.sh (run by selftests/vm/run-vm.sh): two
# jobs of one busy loop each, standalone mode, BENCH_ROUNDS rounds of
# BENCH_SECS seconds with the module's drain_us and with 0; writes
# $BCS_OUT/<drain_us>-<round>.json (the slice records of the run) and
# .ctxt (context switches and seconds).

set -euo pipefail

src=${BCS_SRC:?}
out=${BCS_OUT:?}
export LD_LIBRARY_PATH=$src/libbcs
ctl=$src/tools/bcsctl
stat=$src/tools/bcsstat
param=/sys/module/bcs/parameters/drain_us

insmod "$BCS_MODULE"
pids=()
cleanup()
{
	"$ctl" mode off > /dev/null 2>&1 || true
	kill "${pids[@]}" 2> /dev/null || true
	wait 2> /dev/null || true
	"$ctl" job destroy 1 > /dev/null 2>&1 || true
	"$ctl" job destroy 2 > /dev/null 2>&1 || true
	rmmod bcs 2> /dev/null || true
}
trap cleanup EXIT

"$ctl" job create --id 1 --row 0 > /dev/null
"$ctl" job create --id 2 --row 1 > /dev/null
for j in 1 2; do
	"$ctl" run --job "$j" -- sh -c 'while :; do :; done' &
	pids+=($!)
done
sleep 1
"$ctl" slice set "$BENCH_SLICE" > /dev/null

ctxt() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }

default=$(cat "$param")
for round in $(seq "$BENCH_ROUNDS"); do
	for d in "$default" 0; do
		echo "$d" > "$param"
		"$ctl" mode standalone > /dev/null
		sleep 0.3
		c0=$(ctxt)
		t0=$(date +%s.%N)
		sleep "$BENCH_SECS"
		c1=$(ctxt)
		t1=$(date +%s.%N)
		"$ctl" mode off > /dev/null
		n=$(( BENCH_SECS * 1000000 / BENCH_SLICE ))
		"$stat" slices --json -n "$n" > "$out/$d-$round.json"
		awk -v n=$((c1 - c0)) -v a="$t0" -v b="$t1" \
			'BEGIN { print n, b - a }' > "$out/$d-$round.ctxt"
	done
done
echo "$default" > "$param"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make demo` (run by selftests/vm/run-vm.sh): two jobs in
# rows 0 and 1, one CPU-bound process each, 10 ms slices in standalone
# mode; then the per-slice records and the jobs' CPU shares, and clean-up.

set -u

src=${BCS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
module=${BCS_MODULE:?BCS_MODULE not set}
export LD_LIBRARY_PATH="$src/libbcs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

tool()
{
	if [ -x "$src/tools/$1" ]; then
		echo "$src/tools/$1"
	elif command -v "$1" > /dev/null; then
		command -v "$1"
	else
		echo "demo: $1 not built (make tools)" >&2
		exit 1
	fi
}
bcsctl=$(tool bcsctl)
bcsstat=$(tool bcsstat)

# Print a command, then run it; stop the demo if it fails.
run()
{
	echo "\$ $*" | sed "s|$src/tools/||g"
	"$@" || { echo "demo: '$*' failed" >&2; cleanup; exit 1; }
}

pids=""
cleanup()
{
	"$bcsctl" mode off > /dev/null 2>&1
	for p in $pids; do
		kill "$p" 2> /dev/null
	done
	wait 2> /dev/null
	"$bcsctl" job destroy 1 > /dev/null 2>&1
	"$bcsctl" job destroy 2 > /dev/null 2>&1
	[ -d /sys/module/bcs ] && rmmod bcs
}

echo "== bcs demo on $(uname -r), $(nproc) CPUs =="
run insmod "$module"
run "$bcsctl" job create --id 1 --row 0
run "$bcsctl" job create --id 2 --row 1

# One busy loop per job; bcsctl run attaches itself, then execs the loop.
for j in 1 2; do
	echo "\$ bcsctl run --job $j -- sh -c 'while :; do :; done' &"
	"$bcsctl" run --job "$j" -- sh -c 'while :; do :; done' &
	pids="$pids $!"
done
sleep 1

run "$bcsctl" slice set 10000
run "$bcsctl" mode standalone
run "$bcsctl" status
echo "(gang scheduling for 5 seconds)"
sleep 5

run "$bcsstat" slices -n 20
run "$bcsstat" jobs
run "$bcsctl" job list

run "$bcsctl" mode off
cleanup
echo "== demo done =="

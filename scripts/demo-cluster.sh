#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster demo (`make demo` runs it twice, see the Makefile): boots the
# cluster of selftests/cluster (bcsd on every guest, node1 the master),
# then runs two barrier jobs (bench/barrier, one rank per node, TCP between
# the guests) at once, first under plain Linux time-sharing and then as two
# bcs cluster jobs gang-scheduled by bcsd; prints the per-slice table
# across the nodes and both jobs' completion times under each regime.
#
# scripts/demo-cluster.sh [--nodes N] [--slice US] [--bench] [--iters K]
#                          [--work W] [--wait spin|block] [--quantum MS]
#                          [--slices "US..."] [--repeat R] [--nodrain]
#                          [--lead PCT] [--variant "BCSD-OPTIONS"]
#
#   --nodes N   guests, 2..9 (default 3).  Each has one virtual CPU; when
#               there are more busy guests than host cores, the host's own
#               scheduling of the virtual CPUs delays every barrier
#               whatever the guests do (see Documentation/testing.rst)
#   --slice US  the slice of the demo's gang-scheduled run (default the
#               test bed's, 100000 us: what three TCG guests keep up with)
#   --bench     also run the jobs one after the other and under the slice
#               lengths of --slices (default "1000 10000" us), and print
#               the makespan table (bench/gang_benefit.sh)
#   --repeat R  with --bench, R rounds of every regime (default 1); the
#               table gives medians, and ratios taken within each round
#   --nodrain   with --bench, every bcs slice length also with bcs.ko's
#               drain_us at 0 on every node (the new row woken at once
#               instead of once the old row has parked)
#   --iters K   barrier iterations (default: calibrated in the guests so
#               that one job alone takes about 12 s)
#   --work W    barrier --work (default 200)
#   --wait M    how a rank waits at a barrier: spin (poll, as MPI libraries
#               do; the default) or block (sleep in recv)
#   --lead PCT  bcsd's lead (how long before a slice's deadline the master
#               sends its strobe) in percent of the slice, 10..399 (default
#               30; never more than the test bed's 30 ms).  Over 100 the
#               strobes of short slices wait in bcs.ko behind the slices
#               before them, which the guests' slow strobe path needs
#   --variant O with --bench, every bcs slice length also with every
#               bcsd given the options O (e.g. "--strobe_copies=1"),
#               labelled "-var": an A/B comparison within one run
#   --quantum MS  the guests' scheduler time slice for CPU-bound tasks
#               (default: the kernel's, a few ms); see the note on time
#               scales in Documentation/testing.rst
#
# Needs root (network namespace).  Log: $BUILD/demo-cluster-N.log, guests'
# output in $BUILD/demo-cluster-N/ (N nodes).

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
. "$top/scripts/lib.sh"

export DEMO_BENCH=0
nodes=3
while [ $# -gt 0 ]; do
	case $1 in
	--nodes)
		case $2 in
		[2-9]) nodes=$2; shift 2 ;;
		*) echo "demo-cluster: --nodes 2..9, not '$2'" >&2; exit 2 ;;
		esac ;;
	--slice)
		case $2 in
		[1-9][0-9][0-9]*) export DEMO_SLICE_US=$2; shift 2 ;;
		*) echo "demo-cluster: --slice US (at least 100), not '$2'" >&2; exit 2 ;;
		esac ;;
	--bench)  DEMO_BENCH=1; shift ;;
	--repeat)
		case $2 in
		[1-9]|[1-9][0-9]) export DEMO_REPEAT=$2; shift 2 ;;
		*) echo "demo-cluster: --repeat 1..99, not '$2'" >&2; exit 2 ;;
		esac ;;
	--iters)  export DEMO_ITERS=$2; shift 2 ;;
	--work)   export DEMO_WORK=$2; shift 2 ;;
	--wait)
		case $2 in
		spin|block) export DEMO_WAIT=$2; shift 2 ;;
		*) echo "demo-cluster: --wait spin|block, not '$2'" >&2; exit 2 ;;
		esac ;;
	--slices) export DEMO_SLICES=$2; shift 2 ;;
	--nodrain) export DEMO_NODRAIN=1; shift ;;
	--variant)
		# Options only: the string is run by a shell in the guest.
		if [[ $2 != --[a-z]* || $2 == *[!-a-z0-9_=.\ ]* ]]; then
			echo "demo-cluster: --variant \"--option=value ...\", not '$2'" >&2
			exit 2
		fi
		export DEMO_VARIANT=$2; shift 2 ;;
	--lead)
		case $2 in
		[1-9][0-9]|[1-3][0-9][0-9]) export DEMO_LEAD_PCT=$2; shift 2 ;;
		*) echo "demo-cluster: --lead 10..399 (percent), not '$2'" >&2; exit 2 ;;
		esac ;;
	--quantum)
		case $2 in
		[1-9]|[1-9][0-9]|[1-9][0-9][0-9]) export DEMO_QUANTUM_MS=$2; shift 2 ;;
		*) echo "demo-cluster: --quantum 1..999 (ms), not '$2'" >&2; exit 2 ;;
		esac ;;
	-h|--help) sed -n '3,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "demo-cluster: unknown option $1" >&2; exit 2 ;;
	esac
done

mkdir -p "$BUILD"
log=$BUILD/demo-cluster-$nodes.log
scripts/deps.sh > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
make -s -C bench "$BUILD/bench/barrier" >> "$log" 2>&1 || { cat "$log" >&2; exit 1; }

echo "== bcs cluster demo: $nodes qemu guests on $(nproc) host cores," \
	"two $nodes-rank barrier jobs =="
# The top-level results of the test bed as it goes; the demo's own output
# is the report below.
# Its own output directory: `make check` may run the cluster tests meanwhile.
out=$BUILD/demo-cluster-$nodes
BCS_CLUSTER_OUT=$out selftests/cluster/run-cluster.sh --timeout 1500 \
	--nodes "$nodes" "$top/selftests/cluster/demo-run.sh" 2>&1 |
	tee -a "$log" |
	grep --line-buffered -v '^    '
rc=${PIPESTATUS[0]}
echo
report=$out/share/demo-report.txt
if [ -s "$report" ]; then
	cat "$report"
else
	echo "demo-cluster: no report; see $log" >&2
	rc=1
fi
exit "$rc"

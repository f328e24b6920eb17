#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh [options] - build and run the bcs benchmarks in a test guest.
#
# Boots each selected kernel with selftests/vm/run-vm.sh, runs
# bench/run-in-guest.sh there and saves its output to
# $BUILD/bench/<release>.txt (<release>-quick.txt, <release>-<program>.txt
# for partial runs).  Benchmarks report numbers; they do not fail
# on timings.  Times inside a TCG guest are emulated: compare only ratios
# measured in the same run.
#
# Options:
#   --kernel K   guest kernel (6.1, 6.12 or a full release); may repeat
#                (default 6.1)
#   --all        every supported kernel (6.1 and 6.12)
#   --quick      fewer rounds and shorter windows (a smoke run)
#   --only P     run only program P (switch_cost, efficiency or
#                dist_overhead)
#   --smp N      virtual CPUs of the guest (default 2)
#   --icount S   an instruction-counted guest with one virtual CPU: its
#                clocks advance 2^S ns per instruction (S 0..10; 3 is
#                125 million instructions a second), so the host's load
#                does not reach the numbers; results go to
#                $BUILD/bench/<release>-icount*.txt.  Instruction counts
#                leave out caches and memory: the bed answers what the
#                code costs, not what a machine does with it
#   --timeout S  limit for one guest (default 900)
#   --rebuild    rebuild bcs.ko even if it exists
#
# Environment: SWITCH_COST_ARGS, EFFICIENCY_ARGS and DIST_OVERHEAD_ARGS
# are appended to the programs' arguments (see their -h).

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

usage()
{
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

cmdline="bench/run.sh $*"
kernels=()
quick=""
only=""
smp=2
icount=""
tmo=900
rebuild=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel)  kernels+=("$2"); shift 2 ;;
	--all)     kernels=(6.1 6.12); shift ;;
	--quick)   quick=--quick; shift ;;
	--only)    only=$2; shift 2 ;;
	--smp)     smp=$2; shift 2 ;;
	--icount)  icount=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	--rebuild) rebuild=1; shift ;;
	-h|--help) usage ;;
	*)         echo "bench: unknown option $1" >&2; usage ;;
	esac
done
[ ${#kernels[@]} -gt 0 ] || kernels=(6.1)
vmargs=(--smp "$smp")
if [ -n "$icount" ]; then
	case $icount in
	[0-9]|10) ;;
	*) echo "bench: --icount 0..10, not '$icount'" >&2; exit 2 ;;
	esac
	smp=1
	vmargs=(--smp 1 --icount "$icount")
fi

bcs_load_kernels
make -C "$top/bench" BUILD="$BUILD" >&2
# efficiency's driven cases run the real bcsd and bcsctl.
if [ -z "$only" ] || [ "$only" = efficiency ]; then
	make -C "$top/daemon" bcsd >&2
	make -C "$top/tools" bcsctl >&2
fi

# The guest gets SWITCH_COST_ARGS / EFFICIENCY_ARGS / DIST_OVERHEAD_ARGS
# through the command line: run-vm.sh gives the command a clean
# environment.
gargs=()
[ -n "$quick" ] && gargs+=("$quick")
case $only in
"") ;;
switch_cost|efficiency|dist_overhead) gargs+=(--only "$only") ;;
*) echo "bench: --only switch_cost, efficiency or dist_overhead" >&2
   exit 2 ;;
esac

status=0
for k in "${kernels[@]}"; do
	rel=$(bcs_release "$k")
	if [ -z "$rel" ]; then
		echo "bench: unknown kernel $k" >&2
		status=1
		continue
	fi
	if [ $rebuild = 1 ] || [ ! -f "$BUILD/kmod/$rel/bcs.ko" ]; then
		BCS_KERNELS=$rel "$top/scripts/build-modules.sh" >&2
	fi
	vmout=$BUILD/bench/vm-$rel
	# Partial runs do not overwrite the result of a full one.
	result=$BUILD/bench/$rel${icount:+-icount}${quick:+-quick}${only:+-$only}.txt
	echo "bench: $rel -> $result" >&2
	# Emulated guests share the host: its load explains odd numbers.
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	rc=0
	"$top/selftests/vm/run-vm.sh" --kernel "$rel" "${vmargs[@]}" \
		--timeout "$tmo" --out "$vmout" --prefix "[$k] " -- \
		env SWITCH_COST_ARGS="${SWITCH_COST_ARGS:-}" \
		EFFICIENCY_ARGS="${EFFICIENCY_ARGS:-}" \
		DIST_OVERHEAD_ARGS="${DIST_OVERHEAD_ARGS:-}" \
		bench/run-in-guest.sh "${gargs[@]}" || rc=$?
	if [ -f "$vmout/bench.txt" ]; then
		{
			echo "# $cmdline"
			echo "# host: $(nproc) CPUs, load average" \
			     "$load0 before, $(cut -d' ' -f1-3 /proc/loadavg)" \
			     "after; guest: --smp $smp${icount:+ --icount $icount}"
			cat "$vmout/bench.txt"
		} > "$result"
	else
		echo "bench: $rel: no output" >&2
	fi
	if [ $rc != 0 ]; then
		echo "bench: $rel: guest run failed (rc=$rc), see $vmout" >&2
		status=1
	fi
done
exit $status

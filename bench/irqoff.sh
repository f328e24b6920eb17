#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/irqoff.sh [--kernel K] [--threads N] [--seconds S] [--icount S]
#                 [--module BCS.KO]
#
# The longest interrupts-off (or preemption-off) section of each path of
# bcs.ko with N attached tasks (default 4096; a second run with 16 shows
# what grows with N): bench/irqoff in one guest with one virtual CPU,
# booted with preempt=full, against cyclictest (rt-tests) on the same CPU.
# See bench/irqoff.c for the method.  --module measures another build of
# bcs.ko (e.g. an older commit's) in the same way.  --icount S uses the
# instruction-counted bed of bench/run.sh, whose times the host's load does
# not reach.  Output: $BUILD/bench/irqoff-<release>.txt.  Emulated time:
# compare ratios of one run only.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

args="$*"
kernel=6.1
threads=4096
secs=5
icount=()
module=""
while [ $# -gt 0 ]; do
	case $1 in
	--kernel)  kernel=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--icount)  icount=(--icount "$2"); shift 2 ;;
	--module)  module=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	*) sed -n '4,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
for v in "$threads" "$secs"; do
	case $v in
	''|*[!0-9]*) echo "irqoff: not a number: $v" >&2; exit 2 ;;
	esac
done

"$top/scripts/deps.sh" > /dev/null
command -v cyclictest > /dev/null ||
	{ echo "irqoff: cyclictest missing (apt-get install rt-tests)" >&2; exit 2; }
bcs_load_kernels
rel=$(bcs_release "$kernel")
make -s -C "$top/bench" >&2
[ -n "$module" ] || module=$BUILD/kmod/$rel/bcs.ko
[ -f "$module" ] || BCS_KERNELS=$rel "$top/scripts/build-modules.sh" >&2

res=$BUILD/bench/irqoff-$rel${icount[1]:+-icount}.txt
vm=$BUILD/bench/irqoff-vm
mkdir -p "$BUILD/bench"
"$top/selftests/vm/run-vm.sh" --kernel "$rel" --smp 1 "${icount[@]}" \
	--append preempt=full --timeout 1200 --quiet --out "$vm" -- bash -c "
		insmod '$module' || exit 1
		for n in 16 $threads; do
			'$BUILD/bench/irqoff' -n \$n -s $secs || exit 1
		done
		rmmod bcs"
{
	echo "# bench/irqoff.sh $args ($(date -u +%F), module $module)"
	grep -E '^(irqoff:|  )' "$vm/console.log"
} > "$res"
cat "$res"

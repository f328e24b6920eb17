#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/drain.sh [--kernel K] [--smp N | --icount S] [--slice US]
#                [--seconds S] [--rounds R]
#
# When a switch takes effect, with the old row drained before the new row
# is woken (the module's default drain_us) and with the new row woken at
# once (drain_us 0).  One guest (default: Debian's 6.1 kernel, one virtual
# CPU, where both jobs share the CPU) runs two one-thread busy loops as
# two jobs in standalone mode, slices of US microseconds (default 10000),
# S seconds per setting (default 3), the settings interleaved over R
# rounds (default 3).  From the slice records it prints, per setting, how
# long after the switch began the old row had parked (parked_ns) and the
# new row had left its parking (resumed_ns), p50 and p99 over all
# switches, how many switches hit the drain limit, and the guest's context
# switches per second.  Emulated time: compare the two settings only.
# --icount S boots the instruction-counted guest of bench/run.sh (one
# virtual CPU), whose times the host's load does not reach.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

kernel=6.1
smp=1
slice=10000
secs=3
rounds=3
icount=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel)  kernel=$2; shift 2 ;;
	--smp)     smp=$2; shift 2 ;;
	--slice)   slice=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--rounds)  rounds=$2; shift 2 ;;
	--icount)  icount=(--icount "$2"); smp=1; shift 2 ;;
	*) sed -n '4,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
for v in "$smp" "$slice" "$secs" "$rounds"; do
	case $v in
	''|*[!0-9]*) echo "drain: not a number: $v" >&2; exit 2 ;;
	esac
done

"$top/scripts/deps.sh" > /dev/null
bcs_load_kernels
rel=$(bcs_release "$kernel")
[ -n "$rel" ] || { echo "drain: unknown kernel $kernel" >&2; exit 2; }
make -s -C "$top/libbcs" >&2
make -s -C "$top/tools" >&2
[ -f "$BUILD/kmod/$rel/bcs.ko" ] ||
	BCS_KERNELS=$rel "$top/scripts/build-modules.sh" >&2

# The guest writes its records into run-vm.sh's output directory.
out=$BUILD/bench/drain-$rel${icount[1]:+-icount}
"$top/selftests/vm/run-vm.sh" --kernel "$rel" --smp "$smp" "${icount[@]}" --quiet \
	--out "$out" -- env BENCH_SLICE="$slice" BENCH_SECS="$secs" \
	BENCH_ROUNDS="$rounds" bash bench/drain-guest.sh

cpus="$smp CPU(s)"
[ ${#icount[@]} = 0 ] || cpus="1 instruction-counted CPU"
python3 - "$out" "$rel" "$cpus" "$slice" "$top/selftests/cluster" <<'EOF'
import glob, json, os, sys

out, rel, cpus, slice_us = sys.argv[1:5]
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[5])
from analyse import pct

print(f"drain: {rel}, {cpus}, two one-thread jobs, {slice_us} us slices")
print(f"  {'drain_us':>9} {'switches':>8} {'parked p50':>11} {'p99':>9} "
      f"{'resumed p50':>12} {'p99':>9} {'cuts':>5} {'ctxt/s':>8}   (us after the switch began)")
for name in sorted({os.path.basename(f).split("-")[0]
                    for f in glob.glob(f"{out}/*.json")}, key=int, reverse=True):
    parked, resumed, cuts, ctxt, secs = [], [], 0, 0, 0.0
    for f in glob.glob(f"{out}/{name}-*.json"):
        for r in json.load(open(f)):
            if not (r["suspended"] and r["resumed"]):
                continue
            if r["parked_ns"]:
                parked.append((r["parked_ns"] - r["switch_start_ns"]) / 1e3)
            if r["resumed_ns"]:
                resumed.append((r["resumed_ns"] - r["switch_start_ns"]) / 1e3)
            cuts += "C" in r["flags"]
        n, s = open(f.replace(".json", ".ctxt")).read().split()
        ctxt += int(n)
        secs += float(s)
    print(f"  {name:>9} {len(resumed):>8} {pct(parked, 50):>11.0f} "
          f"{pct(parked, 99):>9.0f} {pct(resumed, 50):>12.0f} "
          f"{pct(resumed, 99):>9.0f} {cuts:>5} {ctxt / secs:>8.0f}")
EOF

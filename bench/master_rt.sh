#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/master_rt.sh [--slice US] [--lead US] [--seconds S] [--rounds R]
#                    [--hogs N] [--priority P]
#
# How late a bcsd master's strobes leave when every CPU is busy, with bcsd
# as an ordinary task (rt_priority 0) and at real-time priority
# (rt_priority P, default 40).  Runs on this machine, not in a guest, so
# the times are real.
#
# bcsd --role=master runs in one network namespace, strobe_path watch (at
# SCHED_FIFO 60, so that its own wake-ups are not what is measured) in
# another, joined by a veth pair; N busy loops per CPU (default 2,
# SCHED_OTHER) keep the CPUs busy meanwhile.  Each round runs both
# settings, one after the other, for S seconds each (default 5), R rounds
# (default 3), slices of US microseconds (default 1000) sent --lead US
# before their deadline (default 300).  Per setting it prints the median
# over the rounds of: the strobe's arrival after its intended send time
# (deadline - lead), p50, p99 and maximum; and the share of slices the
# master skipped because it woke too late to send them in time.
#
# Needs root (network namespaces, SCHED_FIFO).  Nothing leaves the two
# namespaces, which go away at the end.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

slice=1000
lead=300
secs=5
rounds=3
hogs=2
prio=40
while [ $# -gt 0 ]; do
	case $1 in
	--slice)    slice=$2; shift 2 ;;
	--lead)     lead=$2; shift 2 ;;
	--seconds)  secs=$2; shift 2 ;;
	--rounds)   rounds=$2; shift 2 ;;
	--hogs)     hogs=$2; shift 2 ;;
	--priority) prio=$2; shift 2 ;;
	-h|--help)  sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*)          echo "master_rt: unknown option $1" >&2; exit 2 ;;
	esac
done
for v in "$slice" "$lead" "$secs" "$rounds" "$hogs" "$prio"; do
	case $v in
	''|*[!0-9]*) echo "master_rt: numbers only" >&2; exit 2 ;;
	esac
done
[ "$lead" -lt "$slice" ] && [ "$secs" -ge 1 ] && [ "$secs" -le 600 ] &&
	[ "$rounds" -ge 1 ] && [ "$rounds" -le 50 ] && [ "$hogs" -le 16 ] &&
	[ "$prio" -ge 1 ] && [ "$prio" -le 59 ] ||
	{ echo "master_rt: out of range (see --help)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "master_rt: must run as root" >&2; exit 2; }

make -s -C "$top/daemon" bcsd
make -s -C "$top/bench" BUILD="$BUILD"
bcsd=$top/daemon/bcsd
watch=$BUILD/bench/strobe_path

tmp=$(mktemp -d /tmp/bcs-master-rt.XXXXXX)
ns_m=bcs-rtm$$
ns_w=bcs-rtw$$
pids=()
cleanup()
{
	local p
	trap - EXIT INT TERM
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	ip netns del "$ns_m" 2>/dev/null || true
	ip netns del "$ns_w" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns_m"
ip netns add "$ns_w"
ip link add rtm0 netns "$ns_m" type veth peer name rtw0 netns "$ns_w"
ip -n "$ns_m" addr add 10.78.0.1/24 dev rtm0
ip -n "$ns_w" addr add 10.78.0.2/24 dev rtw0
for n in "$ns_m:rtm0" "$ns_w:rtw0"; do
	ip -n "${n%%:*}" link set lo up
	ip -n "${n%%:*}" link set "${n#*:}" up
	ip -n "${n%%:*}" route add 224.0.0.0/4 dev "${n#*:}"
done
"$bcsd" --genkey "$tmp/key" > /dev/null

# Busy loops, bounded by the whole run's length.
total=$((rounds * 2 * (secs + 5) + 30))
for _ in $(seq $(($(nproc) * hogs))); do
	timeout "$total" sh -c 'while :; do :; done' &
	pids+=($!)
done

count=$((secs * 1000000 / slice))
# run PRIO: one master run; prints the watch's output.
run()
{
	local out=$tmp/watch.out m
	ip netns exec "$ns_m" "$bcsd" --role=master --node_id=1 --cluster=1 \
		--group=239.255.66.85 --port=5403 --interface=rtm0 \
		--key_file="$tmp/key" --control_socket="$tmp/ctl.sock" \
		--slice_us="$slice" --lead_us="$lead" --failover_slices=2 \
		--rt_priority="$1" > "$tmp/bcsd.log" 2>&1 &
	m=$!
	ip netns exec "$ns_w" chrt -f 60 timeout $((secs + 20)) "$watch" \
		watch --key "$tmp/key" --group 239.255.66.85 --port 5403 \
		--count "$count" --lead-us "$lead" > "$out" 2>&1 || true
	kill -TERM "$m" 2>/dev/null || true
	wait "$m" 2>/dev/null || true
	cat "$out"
}

echo "master_rt: $(nproc) CPUs, $((hogs * $(nproc))) busy loops, slice ${slice} us," \
	"lead ${lead} us, ${secs} s x ${rounds} rounds per setting"
res=$tmp/results
: > "$res"
for r in $(seq "$rounds"); do
	for p in 0 "$prio"; do
		out=$(run "$p")
		echo "$out" | sed "s/^/  [round $r, rt_priority $p] /"
		echo "$out" | awk -v p="$p" '
			/skipped/ { gsub(/[()%]/, ""); sk = $NF }
			/late after send/ { p50 = $5; p99 = $7; mx = $9 }
			END { if (p50 != "") print p, p50, p99, mx, sk }' >> "$res"
	done
done

echo
echo "medians over $rounds rounds, us after the intended send time:"
printf '  %-12s %10s %10s %10s %10s\n' rt_priority p50 p99 max skipped%
for p in 0 "$prio"; do
	awk -v p="$p" '$1 == p' "$res" | python3 -c '
import sys
from statistics import median
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
if rows:
    print("  %-12d %10.1f %10.1f %10.1f %10.2f" % (int(rows[0][0]),
          *(median(r[i] for r in rows) for i in range(1, 5))))
else:
    print("  %-12s no data" % sys.argv[1])' "$p"
done

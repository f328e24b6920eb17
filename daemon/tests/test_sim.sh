#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd-sim (bcsd against the user-space stand-in of bcs.ko, daemon/sim/)
# on the host: a master (role both, node 1) and two nodes (2, 3), each in
# a network namespace of its own, joined by a bridge in another, all
# created and removed by the test.  Each daemon has its own control
# socket, stats file, jobs_dir and strobe log ($BCS_SIM_LOG); they share
# the cluster key.  Two jobs are made through the control sockets, so
# the master alternates rows 0 and 1; then the checks: every node's
# stand-in got strobes, the same slice names the same row on every node,
# every node applied the map with both jobs to its stand-in without an
# error, and the master's global records count the nodes' switches.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
BCSD=$(pwd)/bcsd-sim
BCSCTL=$top/tools/bcsctl
NS=bcs-sim-$$
TMP=$(mktemp -d) || exit 1
pids=()
nss=()

. "$top/scripts/check-lib.sh"

cleanup()
{
	local p

	{
		for p in "${pids[@]}"; do
			kill -KILL "$p"
		done
		wait
	} 2>/dev/null
	for p in "${nss[@]}"; do
		ip netns del "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

if [ ! -x "$BCSD" ] || [ ! -x "$BCSCTL" ]; then
	echo "test_sim: SKIP: needs $BCSD and $BCSCTL (make -C daemon sim, make -C tools)"
	echo "0 passed, 0 failed"
	exit 0
fi
# Namespace $NS-br holds the bridge; daemon N lives in $NS-N, address
# 10.78.0.N, its veth's other end on the bridge.
if [ "$(id -u)" != 0 ] || ! ip netns add "$NS-br" 2>/dev/null; then
	echo "test_sim: SKIP: needs root and ip netns"
	echo "0 passed, 0 failed"
	exit 0
fi
nss=("$NS-br")
ip -n "$NS-br" link add br0 type bridge &&
	ip -n "$NS-br" link set br0 up || exit 1
for n in 1 2 3; do
	ip netns add "$NS-$n" || exit 1
	nss+=("$NS-$n")
	ip -n "$NS-br" link add p$n type veth peer name eth0 netns "$NS-$n" &&
		ip -n "$NS-br" link set p$n master br0 up &&
		ip -n "$NS-$n" addr add 10.78.0.$n/24 dev eth0 &&
		ip -n "$NS-$n" link set eth0 up &&
		ip -n "$NS-$n" link set lo up || exit 1
done

"$BCSD" --genkey "$TMP/key" > /dev/null || exit 1

# start N ROLE [OPTION...]: bcsd-sim with node id N in its namespace;
# its pid in $TMP/pidN, messages in $TMP/logN, counters in
# $TMP/statsN.json, strobes in $TMP/strobesN.
start()
{
	local n=$1 role=$2

	shift 2
	BCS_SIM_LOG=$TMP/strobes$n ip netns exec "$NS-$n" "$BCSD" \
		--role="$role" --node_id="$n" --key_file="$TMP/key" \
		--interface=eth0 --rt_priority=0 --slice_us=100000 \
		--report_ms=200 --stale_slices=20 \
		--control_socket="$TMP/ctl$n" --stats_file="$TMP/stats$n.json" \
		--jobs_dir="$TMP/jobs$n" --verbose=1 "$@" \
		> "$TMP/log$n" 2>&1 &
	echo $! > "$TMP/pid$n"
	pids+=($!)
	# Signals before its handlers are in would kill it.
	for _ in $(seq 50); do
		grep -q "started:" "$TMP/log$n" && return 0
		sleep 0.1
	done
	echo "# node$n did not start: $(cat "$TMP/log$n")"
}

# snap N: have daemon N write its counters (SIGUSR1) to $TMP/statsN.json.
snap()
{
	local f=$TMP/stats$1.json

	rm -f "$f"
	kill -USR1 "$(cat "$TMP/pid$1")" 2>/dev/null || return 1
	for _ in $(seq 50); do
		[ -s "$f" ] && return 0
		sleep 0.1
	done
	return 1
}

# val N KEY: counter KEY (a.b for nested ones) of the last snap of N.
val()
{
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[k]
print(int(v))' "$TMP/stats$1.json" "$2" 2>/dev/null || echo -1
}

# until_stat N KEY OP VALUE SECONDS: wait for the counter to compare so.
until_stat()
{
	local end=$((SECONDS + $5))

	while [ "$SECONDS" -lt "$end" ]; do
		snap "$1"
		test "$(val "$1" "$2")" "$3" "$4" && return 0
		sleep 0.2
	done
	return 1
}

now_ns()
{
	date +%s%N
}

start 1 both --priority=200 --failover_slices=2
start 2 node
start 3 node
until_stat 1 active_master -eq 1 10
check $? "node1 takes over as master"
until_stat 2 strobes_forwarded -ge 1 10 && until_stat 3 strobes_forwarded -ge 1 10
check $? "node2 and node3 hand strobes to their stand-ins"

# Two jobs, through the master's control socket and through a node's:
# one row each, so the master alternates rows 0 and 1.
jobs=()
for n in 1 2; do
	out=$(BCS_CONTROL_SOCKET=$TMP/ctl$n timeout 10 "$BCSCTL" job create 2>&1)
	rc=$?
	echo "# bcsctl job create via node$n: $out"
	job=$(echo "$out" | grep -Eo '[0-9]+' | head -1)
	[ "$rc" = 0 ] && [ -n "$job" ]
	check $? "bcsctl job create through node$n gets a job"
	jobs+=("${job:-0}")
done

# Every node applies the map with both jobs: give them a second, then
# compare the slices due from then on, for two seconds.
sleep 1
t0=$(now_ns)
sleep 2
t1=$(now_ns)

for n in 1 2 3; do
	snap $n
	c=$(wc -l < "$TMP/strobes$n" 2>/dev/null || echo 0)
	echo "# node$n: $c strobes logged, $(val $n strobes_forwarded) forwarded, $(val $n kernel_errors) kernel errors"
	[ "$c" -ge 10 ]
	check $? "node$n's stand-in got strobes ($c)"
	mapped=0
	python3 - "$TMP/stats$n.json" "${jobs[@]}" <<'PY' || mapped=1
import json, sys
maps = json.load(open(sys.argv[1]))["maps"]
rows = maps[-1]["rows"] if maps else {}
sys.exit(0 if all(j in rows for j in sys.argv[2:]) else 1)
PY
	[ "$mapped" = 0 ] && [ "$(val $n kernel_errors)" = 0 ]
	check $? "node$n applied the map of jobs ${jobs[*]} to its stand-in without an error"
done

# Coherence: each slice due in [t0, t1) names one row on every node, the
# rows of the jobs, both of them; and every node has most of the slices.
out=$(python3 - "$t0" "$t1" "$TMP"/strobes1 "$TMP"/strobes2 "$TMP"/strobes3 <<'PY'
import sys
t0, t1 = int(sys.argv[1]), int(sys.argv[2])
logs = []
for path in sys.argv[3:]:
    rows = {}
    for line in open(path):
        slice_, row, deadline, arrival = (int(x) for x in line.split())
        if t0 <= deadline < t1:
            rows.setdefault(slice_, set()).add(row)
    logs.append(rows)
common = set.intersection(*(set(r) for r in logs))
bad = [s for s in sorted(common)
       if len(set.union(*(r[s] for r in logs))) != 1]
seen = set().union(*(r[s] for r in logs for s in common))
print(f"{len(common)} slices on every node, {len(bad)} incoherent, rows {sorted(seen)}")
sys.exit(0 if len(common) >= 10 and not bad and seen == {0, 1} else 1)
PY
)
rc=$?
echo "# coherence: $out"
check $rc "the same slices name the same rows (0 and 1) on every node"

# The master's global records: the nodes' switch summaries per slice.
out=$(BCS_CONTROL_SOCKET=$TMP/ctl1 timeout 10 "$BCSCTL" stats global --json 2>&1)
rc=$?
if [ "$rc" = 0 ]; then
	most=$(echo "$out" | python3 -c 'import json, sys
print(max((s.get("nodes", 0) for s in json.load(sys.stdin).get("slices", [])), default=0))' 2>/dev/null || echo 0)
	echo "# stats global: at most $most node(s) switched to a slice"
	[ "$most" = 3 ]
	check $? "the master's global records count the switches of all three nodes"
else
	echo "# stats global: $out"
	check 1 "bcsctl stats global through the master"
fi

checks_done test_sim

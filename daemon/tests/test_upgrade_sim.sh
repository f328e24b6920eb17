#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An upgrade one daemon at a time (wire-protocol.rst, "Versions";
# admin-guide.rst, "Upgrading a cluster one node at a time"): two builds
# of bcsd-sim in one cluster, the one of this tree (wire protocol 4, reads
# 3 and 4) and the last of version 3, built from git (the commit in
# $BCS_TEST_OLD_COMMIT, else the parent of the commit that made the
# version 4; SKIP without git).  Slices of 4 ms, plan_slices 10 everywhere.
#
#   1. A new master (node 1, protocol_version 3 in its configuration
#      file), an old standby (node 2) and a new node (3, protocol_version
#      3): every slice the same row on every node, no plan sent, nothing
#      rejected as bad-version anywhere.
#   2. The new master killed: the old standby takes over, and the new node
#      follows it alike, plans and all (version 3 has plans, though only
#      some of its daemons know them).
#   3. Node 1 back (new), node 2 restarted with the new build
#      (protocol_version 3): every daemon now speaks 4; protocol_version 4 in every
#      configuration file, a SIGHUP to each: the master (1) sends
#      plans from then on, every node switches them alike, nothing
#      rejected.  Statistics over a subset of a job's processes are
#      refused at protocol_version 3, and go at 4 (node2 alone enables
#      the pid named for it).
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_upgrade_sim
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-upg-$$
NET=10.78.0

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

if ! command -v git > /dev/null || ! git -C "$top" rev-parse HEAD > /dev/null 2>&1; then
	skip "needs the sources' git history for the build of version 3"
fi
old=${BCS_TEST_OLD_COMMIT:-}
if [ -z "$old" ]; then
	new=$(git -C "$top" log -1 --format=%H \
	      -S"$(printf '#define BCSP_VERSION\t\t4')" -- daemon/proto/proto.h)
	[ -n "$new" ] || skip "no commit of the history makes the wire protocol 4"
	old=$new^
fi
git -C "$top" show "$old:daemon/proto/proto.h" 2>/dev/null |
	grep -q "$(printf '^#define BCSP_VERSION\t\t3$')" ||
	skip "$old is not a bcsd of wire protocol 3"
mkdir "$TMP/old" &&
	git -C "$top" archive "$old" daemon libbcs libbcsmpi include |
	tar -x -C "$TMP/old" &&
	make -C "$TMP/old/daemon" -j2 bcsd-sim > "$TMP/old/build.log" 2>&1
check $? "bcsd-sim of version 3 built from $(git -C "$top" rev-parse --short "$old")"
OLD=$TMP/old/daemon/bcsd-sim
NEW=$BCSD
[ -x "$OLD" ] || exit 1

sim_setup 1 2 3

now_ns()
{
	date +%s%N
}

# conf N VERSION: node N's configuration file says protocol_version VERSION.
conf()
{
	echo "protocol_version $2" > "$TMP/conf$1"
}

opts=(--slice_us=4000 --lead_us=12000 --plan_slices=10 --matrix=row
      --failover_slices=100 --stale_slices=20)
# start N BUILD ROLE OPTION...: daemon N of build BUILD (bcsd-sim).
start()
{
	local n=$1 build=$2

	shift 2
	BCSD=$build sim_start "$n" "$@" "${opts[@]}"
}

# none_rejected N...: check that daemons N... rejected no datagram as
# bad-version or truncated (a strobe with a plan at a daemon that does
# not know plans).
none_rejected()
{
	local n r

	for n in "$@"; do
		snap "$n"
		r=$(($(val "$n" rejected.bad-version) + $(val "$n" rejected.truncated)))
		[ "$r" = 0 ]
		check $? "node$n rejected no datagram as bad-version or truncated ($r)"
	done
}

# coherent T0 T1 LOG...: the slices due in [T0, T1): each on every node
# in the LOGs with one row, none missing on one node but not another, at
# least 300; prints what it found.
coherent()
{
	python3 - "$@" <<'PY'
import sys
t0, t1 = int(sys.argv[1]), int(sys.argv[2])
logs = []
for path in sys.argv[3:]:
    rows = {}
    for line in open(path):
        s, row, deadline, _ = (int(x) for x in line.split())
        if t0 <= deadline < t1:
            rows.setdefault(s, set()).add(row)
    logs.append(rows)
common = set.intersection(*(set(r) for r in logs))
if not common:
    print("no slice on every node"); sys.exit(1)
lo, hi = min(common), max(common)
bad = [s for s in sorted(common) if len(set.union(*(r[s] for r in logs))) != 1]
gaps = [i for i, r in enumerate(logs) for s in range(lo, hi + 1)
        if s not in r and any(s in o for o in logs)]
print(f"slices {lo}..{hi}: {len(bad)} incoherent, {len(gaps)} missing")
sys.exit(0 if hi - lo >= 300 and not bad and not gaps else 1)
PY
}

# window N...: t0, 3 s, t1, then the coherence of nodes N... in [t0, t1).
window()
{
	local t0 t1 logs=() n

	sleep 0.5
	t0=$(now_ns)
	sleep 3
	t1=$(now_ns)
	for n in "$@"; do
		logs+=("$TMP/strobes$n")
	done
	coherent "$t0" "$t1" "${logs[@]}"
}

# plans N: true if node N's bcsd handed its stand-in of bcs.ko a plan
# per ten slices (fewer than 2 strobes in 10 slices) since the last call;
# $seen: what it counted.
declare -A last_fwd last_lines
plans()
{
	local fwd lines d_fwd d_lines

	snap "$1"
	fwd=$(val "$1" strobes_forwarded)
	lines=$(wc -l < "$TMP/strobes$1")
	d_fwd=$((fwd - ${last_fwd[$1]:-0}))
	d_lines=$((lines - ${last_lines[$1]:-0}))
	last_fwd[$1]=$fwd
	last_lines[$1]=$lines
	seen="$d_fwd strobes for $d_lines slices"
	[ "$d_fwd" -gt 0 ] && [ $((d_fwd * 5)) -lt "$d_lines" ]
}

# 1. New master, old standby, new node: all at version 3.
conf 1 3
conf 3 3
start 1 "$NEW" both --priority=200 --config="$TMP/conf1"
until_stat 1 active_master -eq 1 10
check $? "node1 (new) takes over as master"
start 2 "$OLD" both --priority=100
start 3 "$NEW" node --config="$TMP/conf3"
out=$(ctl 1 job create 2>&1) && out=$(ctl 2 job create 2>&1)
check $? "two jobs, one through the old node2 ($out)"
job=$(echo "$out" | grep -Eo '[0-9]+' | head -1)
sleep 1
for n in 1 2 3; do
	plans $n
done
out=$(window 1 2 3)
check $? "new master, old standby, new node: every slice on every node, one row ($out)"
for n in 2 3; do
	! plans $n
	check $? "node$n got a strobe per slice, no plan, at version 3 ($seen)"
done
none_rejected 1 2 3
# Statistics over a subset of a job's processes: refused by a master at
# protocol_version 3, whose daemons of version 3 would record the whole
# job (wire-protocol.rst, Context).
out=$(ctl 3 stats enable "$job" --pid 2:4242 2>&1)
rc=$?
echo "# a subset at version 3: $out"
[ "$rc" != 0 ] && [[ $out == *"protocol_version 4"* ]]
check $? "a subset of job $job's processes is refused at protocol_version 3"

# 2. The old standby takes over; the new node follows it.
kill -KILL "$(cat "$TMP/pid1")"
until_stat 2 active_master -eq 1 10
check $? "node2 (old) takes over as master"
plans 3
out=$(window 2 3)
check $? "old master, new node: every slice on both, one row ($out)"
plans 3
check $? "the old master sends plans (plan_slices 10), which version 3 had: the new node switches them ($seen)"
none_rejected 2 3

# 3. Node 2 upgraded, node 1 back: all new, then protocol_version 4.
# Never without a master: one that starts with none to hear numbers its
# slices anew, and bcs.ko refuses slices older than those it switched.
start 1 "$NEW" both --priority=200 --config="$TMP/conf1"
sleep 1
kill -TERM "$(cat "$TMP/pid2")"
until_stat 1 active_master -eq 1 10
check $? "node1 (new) takes over again"
conf 2 3
start 2 "$NEW" both --priority=100 --config="$TMP/conf2"
out=$(window 1 2 3)
check $? "all new, at version 3: every slice on every node, one row ($out)"
for n in 1 2 3; do
	conf $n 4
	kill -HUP "$(cat "$TMP/pid$n")"
done
for n in 1 2 3; do
	for _ in $(seq 50); do
		grep -q "protocol_version '3' -> '4'" "$TMP/log$n" && break
		sleep 0.1
	done
	grep -q "protocol_version '3' -> '4'" "$TMP/log$n"
	check $? "node$n reloads protocol_version 4"
done
sleep 1
for n in 2 3; do
	plans $n
done
out=$(window 1 2 3)
check $? "all at version 4, with plans: every slice on every node, one row ($out)"
for n in 2 3; do
	plans $n
	check $? "node$n got plans now that every daemon speaks 4 ($seen)"
done
none_rejected 1 2 3
# At 4 the subset goes: node2 alone enables pid 4242 of its own.
out=$(ctl 3 stats enable "$job" --pid 2:4242 2>&1)
check $? "a subset of job $job's processes at protocol_version 4 ($out)"
for _ in $(seq 50); do
	grep -q "job $job: statistics of pid 4242 " "$TMP/log2" && break
	sleep 0.1
done
grep -q "job $job: statistics of pid 4242 " "$TMP/log2" &&
	! grep -q "statistics of pid" "$TMP/log1" "$TMP/log3"
check $? "node2 enabled pid 4242 of job $job, nodes 1 and 3 nothing"
none_rejected 1 2 3

# With the logs (netns-lib.sh), what the stand-ins switched and the counters.
[ -d "${BCS_TEST_KEEP_LOGS:-}" ] && cp "$TMP"/strobes* "$TMP"/stats*.json "$BCS_TEST_KEEP_LOGS"/
checks_done test_upgrade_sim

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A tree of 64 bcsd-sim daemons (Documentation/tree.rst) on the host, all
# in one network namespace created by the test: with strobe_transport
# tree each daemon binds the port of its line of the nodes file on every
# address and joins no group, so daemons that differ in their ports can
# share 127.0.0.1.  Node 1, first in the nodes file, is the master (role
# both); nodes 2 to 64 are nodes.  tree_fanout 8 makes the tree two levels
# deep: 8 children of the master, 55 grandchildren under seven of them.
# Each daemon has its own control socket, stats file, jobs_dir and strobe
# log ($BCS_SIM_LOG); they share the cluster key.
#
# Slices of 100 ms, each strobe sent 30 ms before its deadline: the 64
# daemons are ordinary tasks (rt_priority 0) sharing the host's CPUs, so
# a hop may wait for the scheduler for a few milliseconds, and a leaf is
# two hops below the master; 30 ms covers both with room to spare and is
# still less than a third of the slice.
#
# Two jobs are made through the master, so that it alternates rows 0 and
# 1; then the checks: every daemon's stand-in got strobes; each slice due
# in a stretch of two seconds names the same row in all 64 strobe logs;
# the master's global records have a slice to which all 64 switched,
# each with the time its last summary came (the stand-in records a
# switch as the strobe comes, so that may be before the deadline); every
# leaf sent a summary up for most slices it was strobed (switch_reports
# slice: one at each strobe, rather than one per report period);
# every daemon is where the k-ary tree puts it (parent and depth, from
# the stats file, as bcsctl status --json has them); the daemons with
# children passed datagrams on and the leaves none; a strobe lost on the
# way to a leaf came again; a job's MPI statistics, gathered through a
# leaf and merged up the tree, cover every node.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_tree_sim
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-tree-$$
N=64
FANOUT=8
PORT0=15400

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

[ -x "$BCSD" ] && [ -x "$BCSCTL" ] ||
	skip "needs $BCSD and $BCSCTL (make -C daemon sim, make -C tools)"
loopback_setup "$N" "$PORT0"

# start N ROLE [OPTION...]: bcsd-sim with node id N, its strobes in
# $TMP/strobesN.  It does not wait for the daemon.
start()
{
	local n=$1 role=$2

	shift 2
	BCS_SIM_LOG=$TMP/strobes$n spawn "$n" "$NS" --role="$role" \
		--nodes_file="$TMP/nodes" --tree_fanout="$FANOUT" \
		--strobe_transport=tree --rt_priority=0 --slice_us=100000 \
		--lead_us=30000 --report_ms=500 --stale_slices=20 \
		--switch_reports=slice --jobs_dir="$TMP/jobs$n" \
		--mpi_dir="$TMP/mpi$n" "$@"
}

for n in $(seq "$N"); do
	mkdir -p "$TMP/mpi$n"
done
# matrix row: a row per job, so that the two jobs take turns.
start 1 both --priority=200 --failover_slices=2 --matrix=row
for n in $(seq 2 $((N - 1))); do
	start "$n" node
done
# The last leaf loses its 21st strobe: it asks its parent for it again.
BCS_SIM_DROP=1:1:20 start "$N" node
LOSER_PARENT=$(( (N - 2) / FANOUT + 1 ))
# Every daemon says "started:" once its handlers are in: wait for all,
# at most 20 s (a signal before then would kill it).
up=0
for _ in $(seq 200); do
	up=$(grep -l "started:" "$TMP"/log* 2>/dev/null | wc -l)
	[ "$up" -ge "$N" ] && break
	sleep 0.1
done
[ "$up" -ge "$N" ]
check $? "all $N daemons start in one namespace ($up up)"
if [ "$up" -lt "$N" ]; then
	for n in $(seq "$N"); do
		grep -q "started:" "$TMP/log$n" ||
			echo "# node$n did not start: $(tail -3 "$TMP/log$n")"
	done
	checks_done test_tree_sim
	exit
fi

# The master takes over after two silent slices; then two jobs.
jobs=()
for _ in 1 2; do
	out=""
	for _ in $(seq 50); do
		out=$(ctl 1 job create 2>&1) && break
		sleep 0.2
	done
	echo "# bcsctl job create via node1: $out"
	job=$(echo "$out" | grep -Eo '[0-9]+' | head -1)
	[ -n "$job" ]
	check $? "bcsctl job create through the master gets a job"
	jobs+=("${job:-0}")
done

# The map with both jobs goes down the tree: give it a second, then
# compare the slices due in the next two seconds; a second more for the
# switch summaries of the last of them to reach the master.
sleep 1
t0=$(date +%s%N)
sleep 2
t1=$(date +%s%N)
sleep 1

out=$(python3 - "$t0" "$t1" "$N" "$TMP" <<'PY'
import os, sys
t0, t1, n, tmp = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
logs, empty = [], []
for i in range(1, n + 1):
    rows = {}
    path = os.path.join(tmp, f"strobes{i}")
    if os.path.exists(path):
        for line in open(path):
            slice_, row, deadline, arrival = (int(x) for x in line.split())
            if t0 <= deadline < t1:
                rows.setdefault(slice_, set()).add(row)
    if not rows:
        empty.append(i)
    logs.append(rows)
common = set.intersection(*(set(r) for r in logs))
bad = [s for s in sorted(common)
       if len(set.union(*(r[s] for r in logs))) != 1]
seen = set().union(*(r[s] for r in logs for s in common))
print(f"{len(common)} slices in all {n} logs, {len(bad)} incoherent, "
      f"rows {sorted(seen)}, no strobes in the stretch: {empty or 'none'}")
sys.exit(0 if not empty and len(common) >= 10 and not bad and seen == {0, 1}
         else 1)
PY
)
rc=$?
echo "# coherence: $out"
check $rc "every daemon got strobes, and each slice names one row (0 and 1) in all $N logs"

out=$(ctl 1 stats global --last 4096 --json 2>&1)
rc=$?
if [ "$rc" = 0 ]; then
	out=$(echo "$out" | python3 -c 'import json, sys
s = json.load(sys.stdin).get("slices", [])
full = [r for r in s if r.get("nodes") == int(sys.argv[1])]
heard = [r["heard_after_ns"] for r in full
         if r.get("heard_after_ns") is not None]
print(f"{len(s)} slices, {len(full)} with all nodes, at most",
      max((r.get("nodes", 0) for r in s), default=0),
      f"({len(heard)} of them with the time the last summary came,",
      f"median {sorted(heard)[len(heard) // 2] / 1e6 if heard else 0:.1f} ms",
      "after the deadline)")
sys.exit(0 if full and len(heard) == len(full) else 1)' "$N" 2>&1)
	rc=$?
fi
echo "# stats global: $out"
check $rc "the master's global records have slices to which all $N nodes switched, each with the time it was heard"

# Each daemon's place and counters, against the k-ary tree over the list:
# the node at place p (node id p + 1) has the parent at place
# (p - 1) / FANOUT and children at FANOUT * p + 1 and on.  They come from
# the stats files, written on SIGUSR1: the same JSON as bcsctl status
# --json, which wants bcs.ko loaded on the host before it asks bcsd.
for n in $(seq "$N"); do
	rm -f "$TMP/stats$n.json"
	kill -USR1 "$(cat "$TMP/pid$n")" 2>/dev/null
done
for _ in $(seq 100); do
	have=$(find "$TMP" -name 'stats*.json' -size +0 | wc -l)
	[ "$have" -ge "$N" ] && break
	sleep 0.1
done
out=$(python3 - "$N" "$FANOUT" "$TMP" <<'PY'
import json, os, sys
n, k, tmp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
wrong, inner, leaves, sparse, reporting = [], [], [], [], []
ticks = [0, 0]          # the leaves' ticks, and of them, wake-ups of their own
sacks = [0, 0, 0, 0]    # leaves' strobes, copies, strobes asked for; resent
for p in range(n):
    node = p + 1
    try:
        st = json.load(open(os.path.join(tmp, f"stats{node}.json")))
        t = st["tree"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        wrong.append(f"{node}: {e}")
        continue
    parent = None if p == 0 else (p - 1) // k + 1
    depth = 0
    q = p
    while q:
        q = (q - 1) // k
        depth += 1
    if t.get("parent") != parent or t.get("depth") != depth:
        wrong.append(f"{node}: parent {t.get('parent')} depth {t.get('depth')},"
                     f" not {parent} {depth}")
    # Nodes whose reports the last sum of tasks held: a leaf its own,
    # the root more than half of the cluster (all, unless some were late).
    rep = t.get("reporting")
    if (p and k * p + 1 >= n and rep != 1) or \
            (not p and (rep is None or not n // 2 < rep <= n)):
        reporting.append(f"{node}: {rep}")
    if not p:
        print(f"root: its last sum of reports held {rep} of {n} nodes")
    if k * p + 1 < n:
        sacks[3] += st.get("strobe_resent", 0)
    if p and k * p + 1 < n:
        inner.append((node, st.get("tree_passed", -1)))
    elif p:
        leaves.append((node, st.get("tree_passed", -1)))
        ticks[0] += st.get("ticks", 0)
        ticks[1] += st.get("tick_wakeups", 0)
        sacks[0] += st.get("strobes_rx", 0)
        sacks[1] += st.get("strobe_copies", 0)
        sacks[2] += st.get("strobe_nacks_tx", 0)
        # A summary up per strobe, less the first few (no record yet).
        if st.get("reduce_up", 0) * 2 < st.get("strobes_forwarded", 0):
            sparse.append(f"{node}: {st.get('reduce_up')} up, "
                          f"{st.get('strobes_forwarded')} strobes")
print("place:", "; ".join(wrong[:8]) or "all as expected",
      f"(and {len(wrong) - 8} more)" if len(wrong) > 8 else "")
print("inner:", " ".join(f"{a}={b}" for a, b in inner))
print("leaves passing:", " ".join(f"{a}={b}" for a, b in leaves if b) or "none")
print("reporting off:", "; ".join(reporting[:8]) or "none")
print("leaves sending fewer summaries than half their strobes:",
      "; ".join(sparse[:8]) or "none")
print(f"leaves' ticks: {ticks[0]}, {ticks[1]} of them on a wake-up of their own")
print(f"leaves' strobes: {sacks[0]}, copies of them {sacks[1]}, asked for "
      f"again {sacks[2]}; sent again by the daemons with children: {sacks[3]}")
sys.exit((64 if not sacks[0] or
          4 * (sacks[1] + sacks[2]) >= sacks[0] else 0) |
         (32 if not ticks[0] or 2 * ticks[1] >= ticks[0] else 0) |
         (1 if wrong else 0) |
         (0 if inner and all(b > 0 for a, b in inner) else 2) |
         (0 if leaves and all(b == 0 for a, b in leaves) else 4) |
         (8 if sparse else 0) | (16 if reporting else 0))
PY
)
rc=$?
echo "$out" | sed 's/^/# /'
check $((rc & 1)) "every daemon has the parent and depth of the k-ary tree (fan-out $FANOUT)"
check $((rc & 2)) "every daemon with children passed datagrams on (tree_passed > 0)"
check $((rc & 4)) "no leaf passed anything on (tree_passed 0)"
check $((rc & 8)) "every leaf sent its parent a switch summary for most strobes (switch_reports slice)"
check $((rc & 16)) "the sums of reports held each leaf's own and, at the root, most of the cluster's (tree reporting)"
# Before the first strobe the tick wakes a daemon by its own timer; from
# then on it rides on the strobes.
check $((rc & 32)) "the leaves' housekeeping ticks rode mostly on their strobes (ticks, tick_wakeups)"
# strobe_copies is 2: down a tree no copies go, and a node asks for a
# strobe again only when it is late (the host's scheduler may delay one),
# so fewer than a quarter, not none.
check $((rc & 64)) "the leaves got no copies of strobes and asked for few again (strobe_copies, strobe_nacks_tx)"

# The strobe node N lost came again from its parent: every slice its
# parent passed on while node N logged is in node N's log too.
out=$(python3 - "$TMP/strobes$N" "$TMP/strobes$LOSER_PARENT" <<'PY'
import sys
def slices(path):
    try:
        return sorted({int(l.split()[0]) for l in open(path) if l.strip()})
    except OSError:
        return []
mine, parent = slices(sys.argv[1]), slices(sys.argv[2])
if not mine:
    print("no strobes logged")
    sys.exit(1)
missing = [s for s in parent if mine[0] <= s <= mine[-1] and s not in mine]
print(f"{len(mine)} slices logged, {mine[0]} to {mine[-1]}; "
      f"missing of the parent's: {missing or 'none'}")
sys.exit(1 if missing or len(mine) < 25 else 0)
PY
)
rc=$?
grep -q "datagram of type 1 lost" "$TMP/log$N" || rc=1
resent=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("strobe_resent", 0))' \
	"$TMP/stats$LOSER_PARENT.json" 2>/dev/null)
echo "# node$N lost a strobe; node$LOSER_PARENT resent ${resent:-?}: $out"
[ "${resent:-0}" -ge 1 ] || rc=1
check $rc "a strobe lost on the way to a leaf came again from its parent, and no slice is missing (BCS_SIM_DROP)"

# MPI statistics through a leaf's bcsd, down the tree: rank files of the
# first job on the master, an inner node and the last leaf, none of them
# with a task of it, so that the map counts no node of the job.  With the
# tree (protocol 4) the gather is merged on its way up (node/tgnode.c):
# every daemon answers its parent whether or not it holds the job, so
# the answer covers all N nodes and the three ranks.
gj=${jobs[0]}
MKMPI=$top/tools/tests/mkmpi
BCSSTAT=$top/tools/bcsstat
{ "$MKMPI" "$TMP/mpi1" "$gj" sim1 0 30 && "$MKMPI" "$TMP/mpi2" "$gj" sim2 1 20 &&
  "$MKMPI" "$TMP/mpi$N" "$gj" "sim$N" 2 10; } > /dev/null
check $? "three rank files of job $gj, on node1, node2 and node$N"
ASKER=$((N - 1))
BCS_CONTROL_SOCKET=$TMP/ctl$ASKER timeout 30 "$BCSSTAT" mpi --job "$gj" --json \
	> "$TMP/gather.json" 2> "$TMP/gather.err"
rc=$?
out=$(python3 - "$TMP/gather.json" "$N" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(e)
    sys.exit(1)
n = int(sys.argv[2])
print("tree %s, nodes %s, missing %s, ranks %s" % (d.get("tree"), d.get("nodes"),
      d.get("missing"), d.get("ranks")))
sys.exit(0 if d.get("tree") and d.get("nodes") == n and d.get("missing") == 0
         and d.get("ranks") == 3 else 1)
PY
) || rc=1
[ "$rc" = 0 ] || out="$out; bcsstat: $(head -c 200 "$TMP/gather.err")"
echo "# a gather through node$ASKER, the map counting no node: $out"
check $rc "a gather through a leaf, merged in the tree: all $N nodes covered, the three ranks ($out)"

checks_done test_tree_sim

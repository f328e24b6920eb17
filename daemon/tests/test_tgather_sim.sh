#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsstat mpi --job J through the tree of daemons (Documentation/
# filters.rst, "Gathers reduced in the tree"): 16 bcsd-sim daemons in one
# network namespace, strobe_transport tree, tree_fanout 3 (three levels
# below the master, node 1).  Fake MPI rank files (tools/tests/mkmpi) of
# one job on six nodes, two ranks on one of them.  Asked on a leaf, the
# gather answers from the tree: every node covered, none missing, the
# same calls, bytes, extremes and ranks as the files merged off-line
# (bcsstat mpi on the files themselves: what the flat gather gives), and
# the asker took one answer, from the root (its counters), and no flat
# part.  The first gather loses datagrams on purpose (bcsd-sim's
# BCS_SIM_DROP): the root the first part a child sends it, the asker the
# first part of the root's answer; both ask for the parts again
# (BCSP_TG_NACK) and the answer is whole all the same.  Then a daemon of
# an inner node is killed: once its children ask an ancestor in its
# stead, it alone is reported missing, the rest (its subtree too)
# covered.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_tgather_sim
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
BCSSTAT=$top/tools/bcsstat
MKMPI=$top/tools/tests/mkmpi
NS=bcs-tg-$$
N=16
FANOUT=3
PORT0=15600

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

[ -x "$BCSD" ] && [ -x "$BCSCTL" ] && [ -x "$MKMPI" ] ||
	skip "needs $BCSD, $BCSCTL and $MKMPI (make -C daemon sim, make -C tools all tests/mkmpi)"
loopback_setup "$N" "$PORT0"

# bcsd-sim's stand-in of bcs.ko: one made-up thread per job on every
# node, each metric's histogram DIST values (sim/sim.h, BCS_SIM_DIST).
DIST=5

# The asker and the root: the first part of a tree answer that comes
# lost (type 19, BCSP_TG_PART), repaired by asking for it again.
ASKER=$N
start()
{
	local n=$1 role=$2 drop=""

	shift 2
	mkdir -p "$TMP/mpi$n"
	case $n in 1|"$ASKER") drop=19:1;; esac
	BCS_SIM_DROP=$drop BCS_SIM_LOG=$TMP/strobes$n BCS_SIM_DIST=$DIST \
		spawn "$n" "$NS" --role="$role" \
		--nodes_file="$TMP/nodes" --tree_fanout="$FANOUT" \
		--strobe_transport=tree --rt_priority=0 --slice_us=100000 \
		--lead_us=30000 --report_ms=500 --stale_slices=20 \
		--jobs_dir="$TMP/jobs$n" --mpi_dir="$TMP/mpi$n" "$@"
}

start 1 both --priority=200 --failover_slices=2
for n in $(seq 2 "$N"); do
	start "$n" node
done
up=0
for _ in $(seq 200); do
	up=$(grep -l "started:" "$TMP"/log* 2>/dev/null | wc -l)
	[ "$up" -ge "$N" ] && break
	sleep 0.1
done
[ "$up" -ge "$N" ]
check $? "all $N daemons start in one namespace ($up up)"
[ "$up" -ge "$N" ] || { checks_done "$NAME"; exit; }

out=""
for _ in $(seq 50); do
	out=$(ctl 1 job create 2>&1) && break
	sleep 0.2
done
gj=$(echo "$out" | grep -Eo '[0-9]+' | head -1)
[ -n "$gj" ]
check $? "a job through the master ($out)"
gj=${gj:-0}
sleep 1

# Rank files: node (rank scale) -- the master, inner nodes, leaves.
export MKMPI_HIST=1	# MPI_Allreduce's histograms too
{ "$MKMPI" "$TMP/mpi1" "$gj" sim1 0 30 && "$MKMPI" "$TMP/mpi2" "$gj" sim2 1 20 &&
  "$MKMPI" "$TMP/mpi2" "$gj" sim2 2 5 && "$MKMPI" "$TMP/mpi4" "$gj" sim4 3 12 &&
  "$MKMPI" "$TMP/mpi7" "$gj" sim7 4 7 && "$MKMPI" "$TMP/mpi13" "$gj" sim13 5 40 &&
  "$MKMPI" "$TMP/mpi$N" "$gj" "sim$N" 6 9; } > /dev/null
unset MKMPI_HIST
check $? "seven rank files of job $gj on six nodes"

# The files merged off-line: the flat answer's totals.
BCS_CONTROL_SOCKET='' "$BCSSTAT" mpi --job "$gj" --json "$TMP"/mpi* \
	> "$TMP/files.json" 2> "$TMP/files.err"
check $? "bcsstat mpi on the files themselves ($(head -c 200 "$TMP/files.err"))"

# compare JSON WANT_NODES WANT_MISSING: the tree's answer against the files.
compare()
{
	python3 - "$1" "$TMP/files.json" "$2" "$3" <<'PY'
import json, sys
try:
    t = json.load(open(sys.argv[1]))
    f = json.load(open(sys.argv[2]))
except (OSError, ValueError) as e:
    print(e)
    sys.exit(1)
nodes, missing = int(sys.argv[3]), int(sys.argv[4])
bad = []
if not t.get("tree"):
    bad.append("not through the tree")
if t.get("nodes") != nodes or t.get("missing") != missing:
    bad.append("nodes %s missing %s" % (t.get("nodes"), t.get("missing")))
tp = {p["name"]: p for p in t.get("primitives", [])}
# Each rank's records, from the files (for the extremes' ranks).
ranks = {r["rank"]: r["primitives"] for r in f.get("ranks", [])}
if missing == 0:
    if t.get("ranks") != len(ranks):
        bad.append("ranks %s of %d" % (t.get("ranks"), len(ranks)))
    names = {n for r in ranks.values() for n, p in r.items() if p["calls"]}
    if names != set(tp):
        bad.append("primitives %s, files %s" % (sorted(tp), sorted(names)))
    for n in names:
        per = {k: r[n] for k, r in ranks.items() if n in r and r[n]["calls"]}
        p = tp.get(n, {})
        for k in ("calls", "timed", "bytes"):
            if p.get(k) != sum(x[k] for x in per.values()):
                bad.append("%s %s %s" % (n, k, p.get(k)))
        timed = {k: x for k, x in per.items() if x["timed"]}
        if timed:
            lo = min(timed, key=lambda k: (timed[k]["min_ns"], k))
            hi = max(timed, key=lambda k: (timed[k]["max_ns"], -k))
            if (p.get("min_ns"), p.get("min_rank")) != (timed[lo]["min_ns"], lo) or \
               (p.get("max_ns"), p.get("max_rank")) != (timed[hi]["max_ns"], hi):
                bad.append("%s extremes %s" % (n, p))
print("%d primitives, %s ranks, nodes %s, missing %s; %s" %
      (len(tp), t.get("ranks"), t.get("nodes"), t.get("missing"),
       bad or "all as the files"))
sys.exit(1 if bad else 0)
PY
}

BCS_CONTROL_SOCKET=$TMP/ctl$ASKER timeout 30 "$BCSSTAT" mpi --job "$gj" --json \
	> "$TMP/tree.json" 2> "$TMP/tree.err"
rc=$?
out=$(compare "$TMP/tree.json" "$N" 0) || rc=1
[ "$rc" = 0 ] || out="$out; bcsstat: $(head -c 300 "$TMP/tree.err")"
check $rc "bcsstat mpi --job $gj through a leaf and the tree: every node covered, the files' totals and extremes ($out)"

# The histograms merged up the tree: every one of the files', the same
# counts in the same buckets.
out=$(python3 - "$TMP/tree.json" "$TMP/files.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))
want = {}
for p in f.get("primitives", []):
    for k, key in (("latency", "latency_hist"), ("size", "size_hist")):
        if p.get(key):
            want[(k, p["name"])] = p[key]
# bcs.ko's distributions ("dist") are checked below, not in the files.
got = {(h["kind"], h["name"]): h for h in t.get("histograms", [])
       if h["kind"] != "dist"}
bad = []
if not want:
    bad.append("no histogram in the files")
if set(got) != set(want):
    bad.append("histograms %s, files %s" % (sorted(got), sorted(want)))
for k in want:
    g, w = got.get(k, {}), want[k]
    for x in ("sub_bits", "count", "sum", "min", "max", "buckets"):
        if g.get(x) != w.get(x):
            bad.append("%s %s: %s, files %s" % (k, x, g.get(x), w.get(x)))
print("%d histograms; %s" % (len(got), bad[:3] or "all as the files"))
sys.exit(1 if bad else 0)
PY
)
check $? "the histograms merged up the tree: the files' counts, bucket by bucket ($out)"

snap "$ASKER"
r=0
[ "$(val "$ASKER" tg_final_answers_rx)" = 1 ] &&
	[ "$(val "$ASKER" mpi_gather_parts_rx)" = 0 ] &&
	[ "$(val "$ASKER" tg_asked)" = 1 ] || r=1
check $r "the asker took one answer, the root's, and no flat part (answers $(val "$ASKER" tg_final_answers_rx), flat parts $(val "$ASKER" mpi_gather_parts_rx))"
snap 1
r=0
# The root heard its FANOUT children's answers, and sent one.
[ "$(val 1 tg_answers_tx)" = 1 ] && [ "$(val 1 tg_missing)" = 0 ] &&
	[ "$(val 1 tg_parts_rx)" -ge "$FANOUT" ] || r=1
check $r "the root merged its $FANOUT children's answers into one (parts $(val 1 tg_parts_rx), sent $(val 1 tg_answers_tx))"

# The parts lost on purpose, asked for again and sent again: the root
# asked a child and the asker the root; the root and one of its children
# sent parts again; nobody refused an ask.
resent=0
refused=0
for n in 2 3 4; do
	snap "$n"
	resent=$((resent + $(val "$n" tg_parts_resent)))
	refused=$((refused + $(val "$n" tg_nacks_refused)))
done
r=0
grep -q "type 19 lost" "$TMP/log1" && grep -q "type 19 lost" "$TMP/log$ASKER" &&
	[ "$(val 1 tg_nacks_tx)" -ge 1 ] && [ "$(val "$ASKER" tg_nacks_tx)" -ge 1 ] &&
	[ "$(val 1 tg_nacks_rx)" -ge 1 ] && [ "$(val 1 tg_parts_resent)" -ge 1 ] &&
	[ "$resent" -ge 1 ] && [ "$refused" = 0 ] &&
	[ "$(val 1 tg_nacks_refused)" = 0 ] || r=1
check $r "a part lost at the root and one at the asker, asked for again and sent again (asks: root $(val 1 tg_nacks_tx), asker $(val "$ASKER" tg_nacks_tx); resent: root $(val 1 tg_parts_resent), its children $resent; refused $refused)"

text=$(BCS_CONTROL_SOCKET=$TMP/ctl$ASKER timeout 30 "$BCSSTAT" mpi --job "$gj" --hist allreduce 2>&1)
echo "$text" | sed 's/^/# /' | head -12
want=$(python3 -c 'import json, sys
print(next(p["latency_hist"]["count"] for p in json.load(open(sys.argv[1]))["primitives"] if p["name"] == "MPI_Allreduce"))' "$TMP/files.json" 2>/dev/null)
echo "$text" | grep -q "nodes covered $N, missing 0" &&
	echo "$text" | grep -q "MPI_Allreduce latency" &&
	[ "${want:-0}" -gt 0 ] && echo "$text" | grep -q "latency, $want values"
check $? "bcsstat mpi --job --hist allreduce through the tree: the merged distribution ($want values)"

text=$(BCS_CONTROL_SOCKET=$TMP/ctl$ASKER timeout 30 "$BCSSTAT" mpi --job "$gj" 2>&1)
echo "$text" | sed 's/^/# /' | head -30
echo "$text" | grep -q "nodes covered $N, missing 0" &&
	echo "$text" | grep -q "Per-rank extremes" &&
	echo "$text" | grep -q "^MPI_Allreduce "
check $? "bcsstat mpi --job's table through the tree: nodes covered and missing, per-rank extremes"

# bcsstat dist --job through the same gather: bcsd-sim's stand-in of
# bcs.ko has one thread of the job on every node, DIST values in each
# metric's histogram, so the merged ones hold N * DIST each.
text=$(BCS_CONTROL_SOCKET=$TMP/ctl$ASKER timeout 30 "$BCSSTAT" dist --job "$gj" 2>&1)
echo "$text" | sed 's/^/# /' | grep -E "through the tree| values" | head -8
metrics=$(echo "$text" | grep -c ", $((N * DIST)) values")
others=$(echo "$text" | grep " values" | grep -vc ", $((N * DIST)) values")
echo "$text" | grep -q "job $gj: through the tree of daemons: nodes covered $N, missing 0" &&
	[ "$metrics" -ge 1 ] && [ "$others" = 0 ]
check $? "bcsstat dist --job $gj through the tree: every node covered, each metric's histogram of $((N * DIST)) values ($metrics metrics, $others otherwise)"

# Per rank: each rank's file, gathered flat even with the tree.
text=$(BCS_CONTROL_SOCKET=$TMP/ctl$ASKER timeout 30 "$BCSSTAT" mpi --job "$gj" --ranks 2>&1; echo "rc=$?")
echo "$text" | sed 's/^/# /' | head -12
snap "$ASKER"
nr=$(echo "$text" | grep -cE '^ *[0-9]+ ')
[ "$nr" -ge 7 ] && ! echo "$text" | grep -q "this node's files only" &&
	[ "$(val "$ASKER" mpi_gather_parts_rx)" -gt 0 ]
check $? "bcsstat mpi --job --ranks: every rank's file, gathered flat ($nr rank lines, flat parts $(val "$ASKER" mpi_gather_parts_rx))"

# Node 2 (a child of the root, 7 nodes in its subtree with itself) dies;
# its children (5, 6, 7) ask an ancestor to pass the master's datagrams
# on (Documentation/tree.rst), and the next gather takes their answers
# there: node 2 alone is missing, its 2 ranks with it.
kill -KILL "$(cat "$TMP/pid2")"
asking()	# asking N: daemon N asks an ancestor in its parent's stead
{
	snap "$1" && python3 -c 'import json, sys
sys.exit((json.load(open(sys.argv[1])).get("tree") or {}).get("asking") is None)' \
		"$TMP/stats$1.json"
}
adopted=0
for _ in $(seq 150); do
	asking 5 && asking 6 && asking 7 && { adopted=1; break; }
	sleep 0.1
done
check $((1 - adopted)) "node 2 killed: its children 5, 6 and 7 ask an ancestor"
BCS_CONTROL_SOCKET=$TMP/ctl$ASKER timeout 30 "$BCSSTAT" mpi --job "$gj" --json \
	> "$TMP/tree2.json" 2> "$TMP/tree2.err"
rc=$?
out=$(python3 - "$TMP/tree2.json" "$N" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
print("nodes %s, missing %s, ranks %s" % (t.get("nodes"), t.get("missing"), t.get("ranks")))
# Node 2's subtree in a 3-ary tree of 16: 2, 5, 6, 7, 14, 15, 16; of the
# 7 ranks, node 2 has 2.
sys.exit(0 if t.get("missing") == 1 and t.get("nodes") == n - 1 and
         t.get("ranks") == 5 else 1)
PY
) || rc=1
[ "$rc" = 0 ] || out="$out; bcsstat: $(head -c 300 "$TMP/tree2.err")"
check $rc "a killed inner daemon alone is reported missing, its subtree covered through the ancestor its children asked ($out)"

checks_done "$NAME"

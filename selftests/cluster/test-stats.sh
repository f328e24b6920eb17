#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Statistics through bcsd: bcsctl stats enable of a whole job, asked on one
# node, makes every node record the job's tasks; a slice window armed from
# one node for slices [S, S+200] captures exactly those slices on every
# node, and the master's global records of those slices agree with the
# nodes' records; the ends of jobs leave one dump per node in jobs_dir,
# which bcsstat dist merges.

# shellcheck disable=SC2154 # j1, j2, burners: set by two_jobs, start_burners
. "$CL_DIR/lib.sh"

two_jobs "two new jobs"
start_burners stats "$j1" "$j2"

# --- distributions of a whole job, enabled from node2 for every node ---
out=$(on 2 bcsctl stats enable "$j1" --metric burst,wait 2>&1)
ok $? "node2: stats enable $j1 through bcsd ($out)"
for n in $CL_NODES; do
	wait_until 30 eval '[ "$(tracked "$n" "$j1")" -ge 1 ] 2>/dev/null'
	ok $? "node$n: records the task of job $j1 ($(tracked "$n" "$j1") tracked)"
done
for n in $CL_NODES; do
	t=$(tracked "$n" "$j2")
	[ "$t" = 0 ]
	ok $? "node$n: records nothing of job $j2 (tracked: '$t')"
done

# --- a slice window from node3, the same slices on every node ---
# Ten seconds ahead (at the bed's 100 ms slices): the request must reach
# the master before slice from - 2, however slow the guests are.
s=$(slice_now 1)
from=$((s + 100))
to=$((from + 200))
out=$(on 3 bcsctl stats window --from-slice "$from" --to-slice "$to" 2>&1)
ok $? "node3: stats window $from..$to through bcsd ($out)"
win_state()	# win_state NODE: the window's state on NODE
{
	on "$1" 'bcsctl stats window --json' | json /dev/stdin 'v["state"]'
}
for n in $CL_NODES; do
	wait_until 120 eval '[ "$(win_state "$n")" = done ]'
	ok $? "node$n: the window is done ($(win_state "$n"))"
done
# From the window's first record on, the ring has records of slices
# from..to only, as many as the window counted.  Not necessarily of every
# one of them: a slice whose strobe a busy node missed has no switch.
for n in $CL_NODES; do
	r=$(on "$n" "bcsctl stats window --json > \$STATE/win.json &&
		bcsstat slices --json > \$STATE/slices.json &&
		$PY -c '
import json, sys
w = json.load(open(sys.argv[1]))
recs = json.load(open(sys.argv[2]))
mine = [r for r in recs if r[\"seq\"] >= w[\"first_seq\"]]
got = sorted(set(r[\"slice\"] for r in mine))
inside = all($from <= s <= $to for s in got)
print(\"ok %d\" % len(got) if got and inside and len(mine) == w[\"records\"]
      else \"slices %s..%s, %d records (window says %d)\" %
      (got[0] if got else None, got[-1] if got else None, len(mine),
       w[\"records\"]))' \$STATE/win.json \$STATE/slices.json")
	[ "${r%% *}" = ok ]
	ok $? "node$n: the window holds slices of $from..$to only ($r of $((to - from + 1)))"
done
# --- the master's global records agree with the nodes' slice records ---
# For each slice of the window: as many nodes as have a record of a
# switch to it (driven, not a fail-open; a node's first), as many late
# and predicted, the latest and earliest switch end after the deadline,
# and the rows they ran as classes, exactly.  The nodes report once per report period: wait.
for n in $CL_NODES; do
	on "$n" "cp \$STATE/slices.json $SHARE/out/stats-slices-node$n.json"
done
global_agrees()
{
	on 1 "bcsctl stats global --last 4096 --json" \
		> "$SHARE/out/stats-global.json" 2>&1 &&
	$PY - "$from" "$to" "$SHARE/out/stats-global.json" \
		"$SHARE"/out/stats-slices-node*.json <<'PY'
import json, sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
g = {r["slice"]: r for r in json.load(open(sys.argv[3]))["slices"]}
want = {}
for path in sys.argv[4:]:
    first = {}
    for r in json.load(open(path)):
        f = r["flags"]
        if f[2] == "D" and f[3] != "F" and r["slice"] not in first:
            first[r["slice"]] = r
    for s, r in first.items():
        if lo <= s <= hi:
            want.setdefault(s, []).append(r)
bad = []
for s in range(lo, hi + 1):
    rs, m = want.get(s, []), g.get(s)
    if not rs:
        if m and m["nodes"]:
            bad.append("%d: master %d nodes, none recorded" % (s, m["nodes"]))
        continue
    ends = [r["switch_end_ns"] - r["deadline_ns"] for r in rs]
    # The rows run, as classes: "no row" (0xffff) first, then the
    # lowest rows, two in all, the rest "other" (proto.h).
    count = {}
    for r in rs:
        row = r["row"] if r["row"] is not None and r["row"] < 64 else 0xffff
        count[row] = count.get(row, 0) + 1
    classes = sorted(count.items(),
                     key=lambda c: -1 if c[0] == 0xffff else c[0])
    exp = (len(rs), sum(r["flags"][0] == "L" for r in rs),
           sum(r["flags"][7] == "P" for r in rs), max(ends), min(ends),
           classes[:2], sum(c[1] for c in classes[2:]))
    got = m and (m["nodes"], m["late"], m["predicted"], m["end_max_ns"],
                 m["end_min_ns"],
                 [(0xffff if c["row"] is None else c["row"], c["nodes"])
                  for c in m["rows"]], m["rows_other"])
    if got != exp:
        bad.append("%d: master %s, nodes %s" % (s, got, exp))
n = sum(1 for s in range(lo, hi + 1) if s in want)
print("ok %d slices" % n if n and not bad else
      "%d differ, e.g. %s" % (len(bad), bad[:2]))
sys.exit(0 if n and not bad else 1)
PY
}
wait_until 30 global_agrees > /dev/null
r=$(global_agrees)
ok $? "the master's global records agree with the nodes' records ($r)"
intervals=$($PY -c '
import json, sys
g = json.load(open(sys.argv[1]))["slices"]
sent = [r for r in g if not r["skipped"]]
# Each interval is the time since the strobe sent before it.
bad = [b for a, b in zip(sent, sent[1:])
       if b["interval_ns"] != b["sent_ns"] - a["sent_ns"]]
skip = [r for r in g if r["skipped"] and (r["sent_ns"] or r["row"] is not None)]
print("ok %d" % len(sent) if len(sent) > 1 and not bad and not skip
      else "%d sent, %d bad intervals, %d bad skips" %
      (len(sent), len(bad), len(skip)))' "$SHARE/out/stats-global.json")
[ "${intervals%% *}" = ok ]
ok $? "the master recorded each strobe with the interval since the one before ($intervals)"

out=$(on 1 bcsctl stats window --clear 2>&1)
ok $? "node1: stats window --clear through bcsd ($out)"
for n in $CL_NODES; do
	wait_until 30 eval '[ "$(win_state "$n")" = none ]'
	ok $? "node$n: the window is cleared ($(win_state "$n"))"
done

# --- the end of the job: a dump per node, merged by bcsstat dist ---
on 1 "bcsctl job destroy $j1" > /dev/null
ok $? "job $j1 destroyed"
for n in $CL_NODES; do
	wait_until 30 on "$n" "ls \$STATE/jobs/$j1-*.json" > /dev/null
	ok $? "node$n: bcsd wrote job $j1's dump"
	on "$n" "cp \$STATE/jobs/$j1-*.json $SHARE/out/stats-dump-node$n.json"
done
merged=$("$CL_DIR/../../tools/bcsstat" dist --job "$j1" --json "$SHARE"/out/stats-dump-node*.json |
	json /dev/stdin 'sum(1 for doc in v for t in doc["tasks"])')
[ "$merged" -ge "$nr_nodes" ] 2>/dev/null
ok $? "bcsstat dist merges the $nr_nodes dumps ($merged tasks)"
for n in $CL_NODES; do
	t=$(tracked "$n" "$j1")
	[ "${t:-0}" = 0 ]
	ok $? "node$n: job $j1's statistics released after the dump"
done
stop_burners_all()
{
	local n
	for n in $CL_NODES; do
		on "$n" stop_burners > /dev/null
	done
}
stop_burners_all
on 1 "bcsctl job destroy $j2" > /dev/null
tap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The matrix knows where jobs run (Documentation/matrix.rst), on bcs.ko:
#  1. jobs on disjoint nodes (A on node1 and node2, B on node3) share a
#     row, and each runs in at least 95 % of the slices its nodes ran
#     (counted in the slice records over a window; slices in which a node
#     ran no row, its strobe late under emulation, are counted apart);
#  2. two jobs that share node2 (C on node1 and node2, D on node2) take
#     turns there, and a third on node3 alone (E) runs in every row: its
#     home row and the other one as its alternate;
#  3. the maps that moved jobs as their tasks attached (D joins node2,
#     where C is) were applied by every node, with one apply slice each,
#     before that slice began there: every node switched the moved jobs
#     in the same slice;
#  4. with fill on one node, a job that never sleeps is marked filler
#     there, and there only, and runs in the row in which that node idles
#     (bcs.ko's own counts of the job's slices).
# Starts from no job and no burner, and leaves none.

# shellcheck disable=SC2154,SC2317 # SHARE, CL_NODES, PY: run-cluster.sh's;
# placed: called through wait_until
. "$CL_DIR/lib.sh"

# Nothing of the tests before: the shares below are of these jobs alone.
on_all stop_burners > /dev/null
for j in $(on 1 "bcsctl job list --json" | "$PY" -c '
import json, sys
for j in json.load(sys.stdin)["jobs"]:
    print(j["id"])' 2>/dev/null); do
	on 1 "bcsctl job destroy $j" > /dev/null
done

# new_job VAR: a cluster job made through the master, its id in VAR.
new_job()
{
	local id
	id=$(on 2 bcsctl job create)
	case $id in
	''|*[!0-9]*) ok 1 "bcsctl job create ($id)"; tap_end ;;
	esac
	printf -v "$1" '%s' "$id"
}

# burn JOB NODE...: a CPU-bound task of JOB on each NODE.
burn()
{
	local j=$1 n out
	shift
	for n in "$@"; do
		out=$(on "$n" "start_burner $j") || {
			diag "node$n: $out"
			return 1
		}
	done
}

# row_sets: "JOB:ROWS JOB:ROWS ..." of node1's map (ROWS like 0+1).
row_sets()
{
	on 1 "bcsctl job list --json" | "$PY" -c '
import json, sys
print(" ".join("%d:%s" % (j["id"], "+".join(map(str, j["rows"])))
               for j in sorted(json.load(sys.stdin)["jobs"],
                               key=lambda j: j["id"])))' 2>/dev/null
}

# placed WANT: node1's map shows the row sets WANT ("JOB:ROWS ...") and
# every node's bcs.ko the same sets for the jobs it holds tasks of.
placed()
{
	[ "$(row_sets)" = "$1" ]
}

# shares LABEL MIN JOB:NODE...: from snapshots LABEL.0 and LABEL.1, in
# each node's slice records between them, the share of the slices that
# ran a row in which the job ran (its row set held the slice's row); a
# negative MIN is a most.  Slices that ran no row (a strobe that came too
# late under emulation expired, BCS_SLICE_EXPIRED; a fail-open) are the
# transport's, not the matrix's: counted apart, with bcs.ko's own count
# of the job's slices against the node's switches beside them.
shares()
{
	"$PY" - "$SHARE/data/$1" "$2" "${@:3}" <<'PY'
import json, re, sys

base, least = sys.argv[1], float(sys.argv[2])

def load(n, k, what):
    return json.load(open("%s.%d/node%s.%s.json" % (base, k, n, what)))

def switches(n, k):
    txt = open("%s.%d/node%s.state.txt" % (base, k, n)).read()
    return int(re.search(r"^switches: (\d+)$", txt, re.M).group(1))

def job(n, k, j):
    return next((x for x in load(n, k, "jobs") if x["id"] == j), None)

bad = 0
for arg in sys.argv[3:]:
    j, node = (int(x) for x in arg.split(":"))
    j0, j1 = job(node, 0, j), job(node, 1, j)
    top = max((r["seq"] for r in load(node, 0, "slices")), default=-1)
    recs = [r for r in load(node, 1, "slices") if r["seq"] > top]
    ran_row = [r for r in recs if r["row"] is not None]
    if not j0 or not j1 or len(ran_row) < 20:
        print("FAIL job %d on node%d: no records (%d slices with a row)"
              % (j, node, len(ran_row)))
        bad = 1
        continue
    rows = set(j1.get("rows") or [])
    ran = sum(1 for r in ran_row if r["row"] in rows)
    share = ran / len(ran_row)
    ok = share >= least if least >= 0 else share <= -least
    print("%s job %d on node%d ran in %d of the %d slices that ran a row "
          "(%.1f %%, rows %s), %s %.0f %%; %d slices ran none; bcs.ko: "
          "%d of %d switches" % (
              "PASS" if ok else "FAIL", j, node, ran, len(ran_row),
              100 * share, sorted(rows),
              "at least" if least >= 0 else "at most", 100 * abs(least),
              len(recs) - len(ran_row), j1["slices"] - j0["slices"],
              switches(node, 1) - switches(node, 0)))
    bad |= not ok
sys.exit(bad)
PY
}

# window LABEL: snapshots LABEL.0 and LABEL.1, 8 s apart (80 slices).
window()
{
	snapshot_all "$1.0"
	sleep 8
	snapshot_all "$1.1"
}

# 1. Disjoint nodes share a row.
new_job a
new_job b
burn "$a" 1 2 && burn "$b" 3
ok $? "job $a burns on node1 and node2, job $b on node3"
wait_until 60 placed "$a:0 $b:0"
ok $? "jobs $a and $b on disjoint nodes share row 0 ($(row_sets))"
window matrix-disjoint
tap_from < <(shares matrix-disjoint 0.95 "$a:1" "$a:2" "$b:3")

on_all stop_burners > /dev/null
on 1 "bcsctl job destroy $a && bcsctl job destroy $b" > /dev/null

# 2. Two jobs share node2; a third on node3 alone runs in both rows.
new_job c
new_job d
new_job e
from=$(slice_now 1)
burn "$c" 1 2 && burn "$e" 3 && burn "$d" 2
ok $? "job $c burns on node1 and node2, job $d on node2, job $e on node3"
wait_until 60 placed "$c:0 $d:1 $e:0+1"
ok $? "jobs $c and $d (node2) in rows 0 and 1, job $e in both ($(row_sets))"
window matrix-shared
# Each of C and D gets about half of node2; so does C on node1.
tap_from < <(shares matrix-shared 0.40 "$c:1" "$c:2" "$d:2")
tap_from < <(shares matrix-shared -0.60 "$c:1" "$c:2" "$d:2")
tap_from < <(shares matrix-shared 0.95 "$e:3")

# 3. Every node applied each map with its apply slice before that slice.
# applied LABEL SINCE: the maps every node applied since slice SINCE.
applied()
{
	# shellcheck disable=SC2086 # CL_NODES: a list of node numbers
	"$PY" - "$SHARE/data/$1" "$2" $CL_NODES <<'PY'
import json, sys

base, since = sys.argv[1], int(sys.argv[2])
maps, starts = {}, {}
for n in sys.argv[3:]:
    st = json.load(open("%s/node%s.stats.json" % (base, n)))
    maps[n] = {(m["epoch"], m["version"]): m for m in st.get("maps", [])
               if m.get("apply_slice", 0) > since}
    recs = json.load(open("%s/node%s.slices.json" % (base, n)))
    starts[n] = {r["slice"]: r for r in recs}
common = set.intersection(*(set(m) for m in maps.values()))
print("# maps applied since slice %d on every node: %s" % (since, sorted(common)))
same = all(len({maps[n][k]["apply_slice"] for n in maps}) == 1 for k in common)
print("%s every node took the same apply slice for each map (%d maps)"
      % ("PASS" if common and same else "FAIL", len(common)))
late, checked = [], 0
for k in common:
    for n in maps:
        s = maps[n][k]["apply_slice"]
        r = starts[n].get(s)
        if not r:
            continue
        # The switch to the apply slice began after the map was applied.
        checked += 1
        if maps[n][k]["applied_ns"] >= r["switch_start_ns"]:
            late.append((n, k, s))
print("%s every node held each map before its apply slice began (%d "
      "checked, late: %s)" % ("PASS" if checked and not late else "FAIL",
                              checked, late))
PY
}
tap_from < <(applied matrix-shared.1 "${from:-0}")

on_all stop_burners > /dev/null
on 1 "bcsctl job destroy $c && bcsctl job destroy $d && bcsctl job destroy $e" \
	> /dev/null

# 4. Fill, on node2 alone.  F on node1 and node2, G on node1: rows 0 and
# 1, and no alternate (node1 is busy in both).  F's task never sleeps:
# node2's bcsd finds it coarse-grained and marks it filler in bcs.ko, so
# on node2 F runs in G's row too, where node2 idles; on node1 F and G
# still take turns, and node1 (fill off) marks nothing.
on 2 'kill_bcsd TERM && start_bcsd --role=node --fill=1 --fill_period_ms=200' \
	> /dev/null
ok $? "node2: bcsd restarted with fill on"
new_job f
new_job g
burn "$f" 1 2 && burn "$g" 1
ok $? "job $f burns on node1 and node2, job $g on node1"
wait_until 60 placed "$f:0 $g:1"
ok $? "jobs $f and $g (node1) in rows 0 and 1 ($(row_sets))"

# filler NODE JOB: NODE's bcs.ko has JOB marked filler (prints the mark).
filler()
{
	on "$1" "bcsstat jobs --json" | "$PY" -c '
import json, sys
j = next((j for j in json.load(sys.stdin) if j["id"] == int(sys.argv[1])), {})
print(j.get("filler"))
sys.exit(0 if j.get("filler") else 1)' "$2" 2>/dev/null
}
wait_until 30 filler 2 "$f" > /dev/null
ok $? "node2 marked job $f filler ($(filler 2 "$f"))"
! filler 1 "$f" > /dev/null
ok $? "node1 (fill off) did not mark job $f ($(filler 1 "$f"))"
window matrix-fill

# ran LABEL MIN JOB:NODE...: bcs.ko's own count of the slices the job ran
# on the node against the node's switches between the snapshots; a
# negative MIN is a most.
ran()
{
	"$PY" - "$SHARE/data/$1" "$2" "${@:3}" <<'PY'
import json, re, sys

base, least = sys.argv[1], float(sys.argv[2])

def jobs(n, k):
    return json.load(open("%s.%d/node%s.jobs.json" % (base, k, n)))

def switches(n, k):
    txt = open("%s.%d/node%s.state.txt" % (base, k, n)).read()
    return int(re.search(r"^switches: (\d+)$", txt, re.M).group(1))

bad = 0
for arg in sys.argv[3:]:
    j, n = (int(x) for x in arg.split(":"))
    s = [next((x["slices"] for x in jobs(n, k) if x["id"] == j), None)
         for k in (0, 1)]
    sw = switches(n, 1) - switches(n, 0)
    if None in s or sw < 20:
        print("FAIL job %d on node%d: no counts (%d switches)" % (j, n, sw))
        bad = 1
        continue
    share = (s[1] - s[0]) / sw
    ok = share >= least if least >= 0 else share <= -least
    print("%s job %d on node%d ran in %d of %d switches (%.1f %%), %s %.0f %%"
          % ("PASS" if ok else "FAIL", j, n, s[1] - s[0], sw, 100 * share,
             "at least" if least >= 0 else "at most", 100 * abs(least)))
    bad |= not ok
sys.exit(bad)
PY
}
# Without fill F would run about half of node2's slices, as on node1.
tap_from < <(ran matrix-fill 0.75 "$f:2")
tap_from < <(ran matrix-fill -0.65 "$f:1" "$g:1")
tap_from < <(ran matrix-fill 0.35 "$f:1" "$g:1")

on_all stop_burners > /dev/null
on 1 "bcsctl job destroy $f && bcsctl job destroy $g" > /dev/null
on 2 'kill_bcsd TERM && start_bcsd --role=node' > /dev/null
ok $? "node2: bcsd restarted with fill off"
tap_end

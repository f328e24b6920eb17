#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster demo, run by run-cluster.sh in place of its tests (see
# scripts/demo-cluster.sh): two barrier jobs, one rank per node, first
# under plain time-sharing, then gang-scheduled by bcsd; with DEMO_BENCH=1
# also one after the other and under other slice lengths.  Writes the
# report to SHARE/demo-report.txt and prints TAP.
#
# Environment: DEMO_WORK (barrier --work, default 200), DEMO_ITERS (default:
# calibrated so that one job alone takes DEMO_SOLO_S, default 12 s),
# DEMO_BENCH, DEMO_SLICES (bench slice lengths in us, default
# "1000 10000"), DEMO_ROWS (slice table length, default 15), DEMO_WAIT
# (spin or block), DEMO_QUANTUM_MS (the guests' scheduler slice; default:
# the kernel's).

. "$CL_DIR/lib.sh"

work=${DEMO_WORK:-200}
barrier_wait=${DEMO_WAIT:-spin}
iters=${DEMO_ITERS:-}
solo=${DEMO_SOLO_S:-12}
rows=${DEMO_ROWS:-15}
report=$SHARE/demo-report.txt
results=$SHARE/demo-results.txt
port=5400
cur_lead=$CL_LEAD_US	# bcsd's lead_us now
: > "$report"
: > "$results"

say()
{
	echo "$*" >> "$report"
	diag "$*"
}

# pair LABEL J1 J2 [seq]: one run of both jobs; appends
# "LABEL makespan job1 job2" (seconds; jobN: rank 0's elapsed) to $results.
pair()
{
	local label=$1 out=$SHARE/out/demo-$1 line
	shift
	port=$((port + 2))
	on_each "$out" ". \$CL_DIR/demo-guest.sh; demo_ranks $1 $2 $port \
$iters $work $barrier_wait ${3:-}" || { ok 1 "$label: ran"; return 1; }
	line=$("$PY" - "$out/1" "$label" <<-'EOF'
	import re, sys
	txt = open(sys.argv[1]).read()
	start = float(re.search(r"start=([\d.]+)", txt).group(1))
	ends, el, bad = [], {}, []
	for m in re.finditer(r"job(\d) rc=(\d+) end=([\d.]+) ?(.*)", txt):
	    ends.append(float(m.group(3)))
	    e = re.search(r"elapsed_s ([\d.]+)", m.group(4))
	    el[m.group(1)] = e.group(1) if e else "?"
	    if m.group(2) != "0" or not e:
	        bad.append(m.group(0))
	print(sys.argv[2], "%.2f" % (max(ends) - start),
	      el.get("1", "-"), el.get("2", "-"), "BAD" if bad else "")
	EOF
	)
	case $line in
	*BAD*|"")
		ok 1 "$label: both jobs completed"
		diag "$(cat "$out"/?)"
		return 1 ;;
	esac
	echo "$line" >> "$results"
	ok 0 "$label: both jobs completed ($line)"
}

# Restart bcsd everywhere with another slice length: node1 the master,
# node2 and node3 nodes only (no standby to take over meanwhile).
restart_bcsd()	# restart_bcsd SLICE_US
{
	on 3 kill_bcsd TERM
	on 2 kill_bcsd TERM
	on 1 kill_bcsd TERM
	# The lead must stay under the slice: 30% of it, at most the bed's.
	# A starting master waits failover_slices of silence before it takes
	# over: keep that to about 3 s with long slices.
	local lead=$(($1 * 3 / 10 < CL_LEAD_US ? $1 * 3 / 10 : CL_LEAD_US))
	cur_lead=$lead
	local fo=$((3000000 / $1 < CL_FAILOVER ? 3000000 / $1 : CL_FAILOVER))
	[ "$fo" -ge 2 ] || fo=2
	on 1 "start_bcsd --role=both --priority=200 --slice_us=$1 \
--lead_us=$lead --failover_slices=$fo" &&
	wait_until 30 eval '[ "$(status_of 1 master)" = "1 (this node)" ]' &&
	on 2 start_bcsd --role=node &&
	on 3 start_bcsd --role=node &&
	wait_until 30 eval '[ "$(status_of 2 master)" = 1 ] &&
		[ "$(status_of 3 master)" = 1 ]'
}

# gang LABEL: two new cluster jobs, both run gang-scheduled, and the
# per-slice records of the run.
gang()
{
	local label=$1 j1 j2
	j1=$(on 1 bcsctl job create) && j2=$(on 1 bcsctl job create)
	case $j1$j2 in
	*[!0-9]*|"")
		ok 1 "$label: bcsctl job create ('$j1' '$j2')"
		return 1 ;;
	esac
	pair "$label" "$j1" "$j2" || return 1
	snapshot_all "demo-$label"
	echo "$j1 $j2" > "$SHARE/data/demo-$label/jobs"
	echo "$cur_lead" > "$SHARE/data/demo-$label/lead_us"
}

# slice_table LABEL [ROWS]: rows run on every node in the middle of the
# run, and a summary line.
slice_table()
{
	"$PY" - "$SHARE/data/demo-$1" "$SHARE/out/demo-$1/1" "${2:-$rows}" "$CL_DIR" \
		<<-'EOF' >> "$report"
	import json, re, sys
	sys.dont_write_bytecode = True
	sys.path.insert(0, sys.argv[4])
	from analyse import pct
	d, outf, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
	txt = open(outf).read()
	t0 = float(re.search(r"start=([\d.]+)", txt).group(1)) * 1e9
	t1 = max(float(x) for x in re.findall(r"end=([\d.]+)", txt)) * 1e9
	jobs = open(d + "/jobs").read().split()
	per = {}
	for n in (1, 2, 3):
	    recs = json.load(open("%s/node%d.slices.json" % (d, n)))
	    per[n] = {r["slice"]: r for r in recs
	              if r.get("row") is not None and "F" not in r["flags"]}
	common = sorted(set(per[1]) & set(per[2]) & set(per[3]))
	inrun = [s for s in common if t0 <= per[1][s]["switch_start_ns"] <= t1]
	rowof = {}
	for j in json.load(open(d + "/node1.jobs.json")):
	    rowof[j["row"]] = "job%d" % (jobs.index(str(j["id"])) + 1) \
	        if str(j["id"]) in jobs else "id %s" % j["id"]
	mid = max(0, len(inrun) // 2 - want // 2)
	pick = inrun[mid:mid + want]
	if pick:
	    print("slice  row: node1 node2 node3   runs  "
	          "switch - deadline (us): node1  node2  node3   spread (us)")
	for s in pick:
	    r = [per[n][s] for n in (1, 2, 3)]
	    lag = [(x["switch_start_ns"] - x["deadline_ns"]) / 1e3 for x in r]
	    st = [x["switch_start_ns"] for x in r]
	    print("%5d  %5s %5s %5s   %-5s  %29.0f %6.0f %6.0f   %8.0f" % (
	        s, r[0]["row"], r[1]["row"], r[2]["row"],
	        rowof.get(r[0]["row"], "-"), lag[0], lag[1], lag[2],
	        (max(st) - min(st)) / 1e3))
	same = sum(1 for s in inrun
	           if len({per[n][s]["row"] for n in (1, 2, 3)}) == 1)
	late = sum(per[n][s]["late"] for n in (1, 2, 3) for s in inrun)
	iv = sorted(per[1][s]["interval_ns"] for s in inrun) or [0]
	print("%s: %d slices during the run (median %.1f ms apart on node1), "
	      "%d with the same row on all three nodes, %d switches after the deadline" % (
	          d.rsplit("demo-", 1)[1], len(inrun), iv[len(iv) // 2] / 1e6,
	          same, late))
	# The strobe path per node, from the master's send time (deadline -
	# lead) to the strobe's arrival in bcs.ko and to the switch.
	lead = int(open(d + "/lead_us").read()) * 1000
	def q(v):
	    return "%6.0f %6.0f %7.0f" % (pct(v, 50) / 1e3, pct(v, 99) / 1e3,
	                                  max(v) / 1e3)
	if inrun:
	    print("  strobe path, us after the master's send time (deadline - "
	          "lead, lead %d us):" % (lead // 1000))
	    print("         in bcs.ko:    p50    p99     max   switch:    p50    p99     max")
	    for n in (1, 2, 3):
	        r = [per[n][s] for s in inrun]
	        print("  node%d %32s %32s" % (
	            n, q([x["strobe_ns"] - x["deadline_ns"] + lead for x in r]),
	            q([x["switch_start_ns"] - x["deadline_ns"] + lead for x in r])))
	    sk = [max(per[n][s]["switch_start_ns"] for n in (1, 2, 3)) -
	          min(per[n][s]["switch_start_ns"] for n in (1, 2, 3)) for s in inrun]
	    print("  cross-node switch skew, us: p50 %.0f, p99 %.0f, max %.0f" % (
	        pct(sk, 50) / 1e3, pct(sk, 99) / 1e3, max(sk) / 1e3))
	EOF
}

# --- the guests' scheduler quantum -----------------------------------------
on_each "$SHARE/out/quantum" ". \$CL_DIR/demo-guest.sh; \
demo_quantum '${DEMO_QUANTUM_MS:-}'"
ok $? "guests' scheduler slice${DEMO_QUANTUM_MS:+ set to $DEMO_QUANTUM_MS ms}: $(cat "$SHARE/out/quantum/1")"

# --- calibrate: one job alone, plain --------------------------------------
if [ -z "$iters" ]; then
	iters=150
	pair calibrate 0 - || tap_end
	el=$(awk '$1 == "calibrate" { print $3 }' "$results")
	iters=$("$PY" -c "print(max(20, int($iters * $solo / max($el, 0.01))))")
	diag "calibration: 150 iterations alone in ${el}s -> $iters iterations"
fi
say "barrier jobs: 3 ranks (one per node), iters $iters, work $work, barrier wait: $barrier_wait"
say "guests' scheduler: $(cat "$SHARE/out/quantum/1")${DEMO_QUANTUM_MS:+ (set by --quantum $DEMO_QUANTUM_MS)}"

# --- the demo: plain time-sharing, then bcs -------------------------------
pair plain 0 0
gang "bcs-${CL_SLICE_US}us" && slice_table "bcs-${CL_SLICE_US}us"

# --- the benchmark: one after the other, other slice lengths --------------
if [ "${DEMO_BENCH:-0}" = 1 ]; then
	pair sequential 0 0 seq
	for s in ${DEMO_SLICES:-1000 10000}; do
		if restart_bcsd "$s" > "$SHARE/out/restart-$s.log" 2>&1; then
			gang "bcs-${s}us" && slice_table "bcs-${s}us" 0
		else
			ok 1 "bcsd restarted with $s us slices"
			sed 's/^/# /' "$SHARE/out/restart-$s.log"
		fi
	done
fi

# --- summary --------------------------------------------------------------
"$PY" - "$results" "$CL_SLICE_US" <<-'EOF' >> "$report"
import sys
res = {}
for line in open(sys.argv[1]):
    f = line.split()
    res[f[0]] = f[1:4]
print()
print("%-18s %10s %10s %10s %8s %8s" % ("regime", "makespan", "job1",
      "job2", "/seq", "plain/x"))
seq = float(res["sequential"][0]) if "sequential" in res else None
plain = float(res["plain"][0]) if "plain" in res else None
for k, v in res.items():
    if k == "calibrate":
        continue
    m = float(v[0])
    print("%-18s %9.2fs %9ss %9ss %8s %8s" % (
        k, m, v[1], v[2], "%.2f" % (m / seq) if seq else "-",
        "%.2f" % (plain / m) if plain else "-"))
g = "bcs-%sus" % sys.argv[2]
if plain and g in res:
    print()
    print("completion times (rank 0's elapsed_s), plain time-sharing: "
          "job1 %ss job2 %ss; bcs %s ms slices: job1 %ss job2 %ss" % (
              res["plain"][1], res["plain"][2], int(sys.argv[2]) // 1000,
              res[g][1], res[g][2]))
    print("makespan plain / bcs = %.2f" % (plain / float(res[g][0])))
EOF
sed 's/^/# /' "$report"
tap_end

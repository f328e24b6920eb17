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
# DEMO_SLICE_US (the demo's gang slice, default the test bed's
# CL_SLICE_US), DEMO_BENCH, DEMO_SLICES (bench slice lengths in us, default
# "1000 10000"), DEMO_REPEAT (bench rounds, default 1: each round runs
# every regime once, so that drifts of the host spread over all of them),
# DEMO_ROWS (slice table length, default 15), DEMO_WAIT (spin or block),
# DEMO_QUANTUM_MS (the guests' scheduler slice; default: the kernel's),
# DEMO_LEAD_PCT (bcsd's lead_us in percent of the slice, default 30),
# DEMO_NODRAIN (1: in the benchmark, every bcs slice length also with
# bcs.ko's drain_us at 0 on every node, the new row woken at once),
# DEMO_VARIANT (bcsd options: in the benchmark, every bcs slice length also
# with every bcsd started with them, labelled "-var"; an A/B comparison
# within one run, e.g. "--strobe_copies=1" or "--predict=0"),
# DEMO_SLOW_ITERS and DEMO_SLOW_WORK (iterations and work of the slow-rank
# example, default 50 and 800).

. "$CL_DIR/lib.sh"

work=${DEMO_WORK:-200}
barrier_wait=${DEMO_WAIT:-spin}
iters=${DEMO_ITERS:-}
solo=${DEMO_SOLO_S:-12}
rows=${DEMO_ROWS:-15}
lead_pct=${DEMO_LEAD_PCT:-30}
report=$SHARE/demo-report.txt
results=$SHARE/demo-results.txt
port=5400
cur_lead=$CL_LEAD_US	# bcsd's lead_us now
cur_slice=$CL_SLICE_US	# and its slice_us
cur_args=		# and the master's extra options
: > "$report"
: > "$results"

say()
{
	echo "$*" >> "$report"
	diag "$*"
}

# The bench round in progress; runs of later rounds get ".rN" labels.
round=1
label_of()	# label_of REGIME
{
	if [ "$round" = 1 ]; then echo "$1"; else echo "$1.r$round"; fi
}

# pair REGIME J1 J2 [seq]: one run of both jobs; appends
# "REGIME ROUND makespan job1 job2" (seconds; jobN: rank 0's elapsed) to
# $results.
pair()
{
	local regime=$1 label out line
	label=$(label_of "$1")
	out=$SHARE/out/demo-$label
	shift
	port=$((port + 2))
	on_each "$out" ". \$CL_DIR/demo-guest.sh; demo_ranks $1 $2 $port \
$iters $work $barrier_wait ${3:-}" || { ok 1 "$label: ran"; return 1; }
	line=$("$PY" "$CL_DIR/demo_report.py" pair "$out/1" "$regime $round")
	case $line in
	*BAD*|"")
		ok 1 "$label: both jobs completed"
		diag "$(cat "$out"/?)"
		return 1 ;;
	esac
	echo "$line" >> "$results"
	ok 0 "$label: both jobs completed ($line)"
}

# Restart bcsd everywhere with another slice length, and every daemon with
# the options ARGS (options of the master's alone change nothing on a
# node): node1 the master, the others nodes only (no standby to take over
# meanwhile).
restart_bcsd()	# restart_bcsd SLICE_US [ARGS]
{
	local n
	for n in $(echo "$CL_NODES" | tr ' ' '\n' | sort -rn); do
		on "$n" kill_bcsd TERM
	done
	# The lead: DEMO_LEAD_PCT of the slice (default 30; bcsd takes
	# less than 4 slices), at most the bed's.  A starting master waits failover_slices of
	# silence before it takes over: keep that to about 3 s with long
	# slices.
	local lead=$(($1 * lead_pct / 100)) a
	[ "$lead" -le "$CL_LEAD_US" ] || lead=$CL_LEAD_US
	cur_lead=$lead
	# ARGS may set the lead: the slice tables' strobe path counts from it.
	for a in ${2:-}; do
		case $a in --lead_us=[0-9]*) cur_lead=${a#--lead_us=} ;; esac
	done
	local fo=$((3000000 / $1 < CL_FAILOVER ? 3000000 / $1 : CL_FAILOVER))
	[ "$fo" -ge 2 ] || fo=2
	on 1 "start_bcsd --role=both --priority=200 --slice_us=$1 \
--lead_us=$lead --failover_slices=$fo ${2:-}" &&
	wait_until 30 eval '[ "$(status_of 1 master)" = "1 (this node)" ]' ||
		return 1
	for n in $CL_NODES; do
		[ "$n" = 1 ] || on "$n" "start_bcsd --role=node ${2:-}" ||
			return 1
	done
	wait_until 30 all_follow_master && cur_slice=$1 && cur_args=${2:-}
}

# bcsd_share LABEL: the share of each guest's CPU that bcsd used since
# cpu0 was taken (the master sends a strobe every slice, every node hands
# each to bcs.ko): what the daemon costs at that slice length.
declare -A cpu0
bcsd_share()
{
	local n shares=""
	for n in $CL_NODES; do
		shares+=$(echo "${cpu0[$n]:-} $(on "$n" bcsd_cpu)" | awk -v n="$n" '
			NF == 4 && $4 > $2 {
				printf " node%d %.1f%%", n, 100 * ($3 - $1) / ($4 - $2)
			}')
	done
	say "$1: bcsd's share of its guest's CPU during the run:${shares:- not known}"
}

# gang REGIME: two new cluster jobs, both run gang-scheduled, and the
# per-slice records of the run.
gang()
{
	local label j1 j2 n
	label=$(label_of "$1")
	j1=$(on 1 bcsctl job create) && j2=$(on 1 bcsctl job create)
	case $j1$j2 in
	*[!0-9]*|"")
		ok 1 "$label: bcsctl job create ('$j1' '$j2')"
		return 1 ;;
	esac
	for n in $CL_NODES; do
		cpu0[$n]=$(on "$n" bcsd_cpu)
	done
	# The first job's distributions, on every node (through bcsd): each
	# node's bcsd writes them to its jobs_dir when the ranks end.
	on 1 "bcsctl stats enable $j1" > /dev/null
	pair "$1" "$j1" "$j2" || return 1
	bcsd_share "$label"
	# The whole ring (bcs.ko's default stat_records): runs are long.
	snapshot_all "demo-$label" 10000
	echo "$j1 $j2" > "$SHARE/data/demo-$label/jobs"
	echo "$cur_lead" > "$SHARE/data/demo-$label/lead_us"
	for n in $CL_NODES; do
		on "$n" "wait_for 10 eval 'ls \$STATE/jobs/$j1-*.json' &&
			cp \$STATE/jobs/$j1-*.json $SHARE/data/demo-$label/" \
			> /dev/null 2>&1
	done
}

# slice_table LABEL [ROWS]: rows run on every node in the middle of the
# run, and a summary line.
slice_table()
{
	"$PY" "$CL_DIR/demo_report.py" slices "$SHARE/data/demo-$1" \
		"$SHARE/out/demo-$1/1" "${2:-$rows}" >> "$report"
}

# --- the guests' scheduler quantum -----------------------------------------
on_each "$SHARE/out/quantum" ". \$CL_DIR/demo-guest.sh; \
demo_quantum '${DEMO_QUANTUM_MS:-}'"
ok $? "guests' scheduler slice${DEMO_QUANTUM_MS:+ set to $DEMO_QUANTUM_MS ms}: $(cat "$SHARE/out/quantum/1")"

# --- calibrate: one job alone, plain --------------------------------------
if [ -z "$iters" ]; then
	iters=150
	pair calibrate 0 - || tap_end
	el=$(awk '$1 == "calibrate" { print $4 }' "$results")
	iters=$("$PY" -c "print(max(20, int($iters * $solo / max($el, 0.01))))")
	diag "calibration: 150 iterations alone in ${el}s -> $iters iterations"
fi
say "barrier jobs: $(echo $CL_NODES | wc -w) ranks (one per node), iters $iters, work $work, barrier wait: $barrier_wait"
say "guests' scheduler: $(cat "$SHARE/out/quantum/1")${DEMO_QUANTUM_MS:+ (set by --quantum $DEMO_QUANTUM_MS)}"

# set_drain US: bcs.ko's drain_us on every node.
set_drain()
{
	on_each "$SHARE/out/drain" \
		"echo $1 > /sys/module/bcs/parameters/drain_us"
}

# gang_nodrain SLICE_US: gang_at SLICE_US 0 with drain_us 0 everywhere.
gang_nodrain()
{
	local d rc

	d=$(on 1 cat /sys/module/bcs/parameters/drain_us) &&
	set_drain 0 || { ok 1 "drain_us set to 0 on every node"; return 1; }
	gang_at "$1" 0 -nodrain
	rc=$?
	set_drain "$d" || { ok 1 "drain_us set back to $d"; return 1; }
	return $rc
}

# gang_variant SLICE_US: gang_at SLICE_US with every bcsd given
# DEMO_VARIANT, labelled -var.
gang_variant()
{
	gang_at "$1" 0 -var "$DEMO_VARIANT"
}

# gang_at SLICE_US [ROWS [SUFFIX [ARGS]]]: a gang run with bcsd at that
# slice and the daemons' options ARGS (restarted if they run others),
# labelled bcs-SLICE_USusSUFFIX, and its slice table of ROWS rows (default
# $rows).
gang_at()
{
	if { [ "$1" != "$cur_slice" ] || [ "${4:-}" != "$cur_args" ]; } &&
	   ! restart_bcsd "$1" "${4:-}" > "$SHARE/out/restart-$1.log" 2>&1; then
		ok 1 "bcsd restarted with $1 us slices"
		sed 's/^/# /' "$SHARE/out/restart-$1.log"
		return 1
	fi
	gang "bcs-${1}us${3:-}" &&
		slice_table "$(label_of "bcs-${1}us${3:-}")" "${2:-$rows}"
}

# pictures LABEL: the slice interval and the switch lateness per node of
# run LABEL as PNGs, and its Perfetto trace, drawn on the host from the
# nodes' slice records.
pictures()
{
	local d=$SHARE/data/demo-$1 out=$SHARE/pictures bcsstat
	bcsstat=$CL_DIR/../../tools/bcsstat
	mkdir -p "$out"
	"$bcsstat" plot interval -o "$out/$1-interval.png" \
		"$d"/node*.slices.json > "$SHARE/out/pictures.log" 2>&1 &&
	"$bcsstat" plot lateness -o "$out/$1-lateness.png" \
		"$d"/node*.slices.json >> "$SHARE/out/pictures.log" 2>&1 &&
	"$bcsstat" trace -o "$out/$1-trace.json" \
		"$d"/node*.slices.json >> "$SHARE/out/pictures.log" 2>&1
	ok $? "$1: pictures of the slice records and their trace"
	say "$1: slice interval $out/$1-interval.png, switch lateness" \
		"$out/$1-lateness.png, trace $out/$1-trace.json" \
		"(open it in https://ui.perfetto.dev)"
	# The first job's dumps, one per node (gang()).
	set -- "$1" "$d"/[0-9]*-*.json
	if [ -e "$2" ]; then
		"$bcsstat" plot dist -o "$out/$1-dist.png" "${@:2}" \
			>> "$SHARE/out/pictures.log" 2>&1 &&
		"$bcsstat" dist "${@:2}" > "$out/$1-dist.txt" 2>&1
		ok $? "$1: the first job's distributions on $(($# - 1)) nodes"
		"$bcsstat" plot ranks -o "$out/$1-ranks.png" "${@:2}" \
			>> "$SHARE/out/pictures.log" 2>&1
		ok $? "$1: the first job's ranks, a row each"
		say "$1: distributions of the first job $out/$1-dist.png" \
			"and $out/$1-dist.txt, its ranks $out/$1-ranks.png"
	fi
}

# slow_rank: Documentation/examples/slow-rank.sh on node 1 (four ranks of
# one job, rank 2 with twice the work of the others), gang-scheduled by
# bcsd like any job; its dump, and the pictures that show which rank the
# others wait for: plot ranks (its row in red, its bursts the longest)
# and plot dist.
slow_rank()
{
	local d=$SHARE/data/demo-slow-rank out=$SHARE/pictures bcsstat
	bcsstat=$CL_DIR/../../tools/bcsstat
	mkdir -p "$d" "$out"
	# Work enough that computing, not the guests' noise, fills the
	# ranks' CPU time; the demo's own --work may be short.
	on 1 -t 300 "BARRIER=\$BUILD/bench/barrier ITERS=${DEMO_SLOW_ITERS:-50} \
WORK=${DEMO_SLOW_WORK:-800} DUMP_DIR=$d Documentation/examples/slow-rank.sh" \
		> "$SHARE/out/slow-rank.log" 2>&1
	set -- "$d"/[0-9]*-*.json
	if [ ! -e "$1" ]; then
		ok 1 "slow rank: slow-rank.sh wrote its job's dump"
		sed 's/^/# /' "$SHARE/out/slow-rank.log"
		return 1
	fi
	"$bcsstat" plot ranks -o "$out/slow-rank-ranks.png" "$@" \
		> "$SHARE/out/slow-rank-pictures.log" 2>&1 &&
	"$bcsstat" plot dist -o "$out/slow-rank-dist.png" "$@" \
		>> "$SHARE/out/slow-rank-pictures.log" 2>&1 &&
	"$bcsstat" dist "$@" > "$out/slow-rank-dist.txt" 2>&1
	ok $? "slow rank: pictures of its job's tasks"
	say "slow rank (Documentation/examples/slow-rank.sh, rank 2 with" \
		"twice the work): its tasks $out/slow-rank-ranks.png (the" \
		"slow one in red), distributions $out/slow-rank-dist.png"
}

# --- the demo: plain time-sharing, then bcs -------------------------------
slice=${DEMO_SLICE_US:-$CL_SLICE_US}
pair plain 0 0
gang_at "$slice" && pictures "bcs-${slice}us"
slow_rank

# --- the benchmark: one after the other, other slice lengths --------------
if [ "${DEMO_BENCH:-0}" = 1 ]; then
	# Every regime once per round, in an order that rotates from round
	# to round, so that a drift of the host does not always favour the
	# same regimes.  Round 1 began with the demo's two runs.
	regimes=("pair plain 0 0" "gang_at $slice 0" "pair sequential 0 0 seq")
	for s in ${DEMO_SLICES:-1000 10000}; do
		[ "$s" = "$slice" ] || regimes+=("gang_at $s 0")
	done
	if [ "${DEMO_NODRAIN:-0}" = 1 ]; then
		for s in $slice ${DEMO_SLICES:-1000 10000}; do
			regimes+=("gang_nodrain $s")
		done
	fi
	if [ -n "${DEMO_VARIANT:-}" ]; then
		for s in $slice ${DEMO_SLICES:-1000 10000}; do
			regimes+=("gang_variant $s")
		done
	fi
	n=${#regimes[@]}
	while [ "$round" -le "${DEMO_REPEAT:-1}" ]; do
		for i in $(seq 0 $((n - 1))); do
			[ "$round" = 1 ] && [ "$i" -lt 2 ] && continue
			${regimes[$(((i + round - 1) % n))]}
		done
		round=$((round + 1))
	done
fi

# --- summary --------------------------------------------------------------
# Per regime: the median over the rounds of the makespan, and of its
# ratios to the sequential and plain runs of the same round.
"$PY" "$CL_DIR/demo_report.py" summary "$results" "$slice" >> "$report"
sed 's/^/# /' "$report"
tap_end

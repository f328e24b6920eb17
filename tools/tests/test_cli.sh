#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host tests of the bcsctl and bcsstat binaries: exit statuses, messages,
# and bcsstat's output from stand-in /dev/bcsstat files.  No module is
# needed; BCS_DEVICE and BCS_STAT_DEVICE point the tools elsewhere.
# BCSSTAT=PATH runs another bcsstat, for example a script that runs it
# under valgrind --error-exitcode=99.

set -u
cd "$(dirname "$0")/.." || exit 1

BCSCTL=./bcsctl
BCSSTAT=${BCSSTAT:-./bcsstat}
case "$BCSSTAT" in
/*) ;;
*) BCSSTAT=$PWD/$BCSSTAT ;;
esac
MKRING=./tests/mkring
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0

ok() {
	passed=$((passed + 1))
}

bad() {
	failed=$((failed + 1))
	echo "FAIL: $*" >&2
}

# expect STATUS PATTERN CMD...: run CMD, check its exit status and that
# PATTERN (a grep -E expression, or "" for any) occurs in stdout+stderr.
expect() {
	want=$1
	pat=$2
	shift 2
	"$@" >"$TMP/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "'$*' exited $got, want $want: $(head -c 300 "$TMP/out")"
		return
	fi
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$TMP/out"; then
		bad "'$*' output lacks /$pat/: $(head -c 300 "$TMP/out")"
		return
	fi
	ok
}

# --- bcsctl: usage errors exit 2 with a "bcsctl: " message ---
expect 2 '^bcsctl: missing command' $BCSCTL
expect 2 "^bcsctl: unknown command 'bogus'" $BCSCTL bogus
expect 2 "^bcsctl: unknown option" $BCSCTL --bogus
expect 2 '^bcsctl: missing job subcommand' $BCSCTL job
expect 2 "^bcsctl: bad job id '0'" $BCSCTL job create --id 0
expect 2 "^bcsctl: bad row '64'" $BCSCTL job row 1 64
expect 2 "^bcsctl: bad pid 'x'" $BCSCTL job attach 1 x
expect 2 '^bcsctl: missing CMD' $BCSCTL run --job 1
expect 2 '^bcsctl: bad slice length' $BCSCTL slice set 10
expect 2 '^bcsctl: driven mode' $BCSCTL mode driven
expect 2 '^bcsctl: --in and --now' $BCSCTL strobe --now --in 5
expect 2 '^bcsctl: unexpected argument' $BCSCTL status now

# --- bcsctl: help and version ---
expect 0 'job attach' $BCSCTL --help
expect 0 '^Usage: bcsctl job create' $BCSCTL job create -h
expect 0 '^bcsctl [0-9]' $BCSCTL --version
expect 0 '^  job list \[--json\]' $BCSCTL job --help
expect 2 "unknown command 'stauts'; did you mean 'status'\\?" $BCSCTL stauts
expect 2 '^Usage: bcsctl job SUBCOMMAND' $BCSCTL job

# --- bcsctl: no module ---
NOMOD="bcsctl: bcs module not loaded \(/dev/bcs missing\); run 'modprobe bcs' or insmod bcs.ko"
expect 1 "^$NOMOD" env BCS_DEVICE=/nonexistent $BCSCTL status
expect 1 "^$NOMOD" env BCS_DEVICE=/nonexistent $BCSCTL job list
expect 1 "^$NOMOD" env BCS_DEVICE=/nonexistent $BCSCTL job create
expect 1 "^$NOMOD" env BCS_DEVICE=/nonexistent $BCSCTL slice get
# run must not execute the command when it could not join the job
expect 1 "^$NOMOD" env BCS_DEVICE=/nonexistent $BCSCTL run --job 1 -- \
	touch "$TMP/ran"
if [ -e "$TMP/ran" ]; then bad "run executed CMD without a job"; else ok; fi
# a file that is not the module: the ioctls are not supported
expect 1 '^bcsctl: status: request not supported' \
	env BCS_DEVICE=/dev/null $BCSCTL status

# --- bcsstat: usage ---
expect 2 '^bcsstat: missing command' "$BCSSTAT"
expect 2 "^bcsstat: unknown command 'bogus'" "$BCSSTAT" bogus
expect 2 '^bcsstat: option not valid here' "$BCSSTAT" jobs -n 5
expect 2 '^bcsstat: -c needs --follow' "$BCSSTAT" slices -c 3
expect 2 "^bcsstat: bad record count '0'" "$BCSSTAT" slices -n 0
expect 2 "^bcsstat: bad count '0'" "$BCSSTAT" events -c 0
expect 2 '^bcsstat: option not valid here' "$BCSSTAT" events --follow
expect 0 '^Usage: bcsstat events' "$BCSSTAT" events -h
expect 2 "^bcsstat: bad job id 'x'" "$BCSSTAT" tasks --job x
expect 0 '^Usage: bcsstat' "$BCSSTAT" --help
expect 0 '^Usage: bcsstat slices' "$BCSSTAT" slices -h
expect 0 '^bcsstat [0-9]' "$BCSSTAT" --version

# --- bcsstat: no module ---
expect 1 "^bcsstat: bcs module not loaded \(/dev/bcsstat missing\)" \
	env BCS_STAT_DEVICE=/nonexistent "$BCSSTAT" jobs
expect 1 '^bcsstat: jobs: request not supported' \
	env BCS_STAT_DEVICE=/dev/null "$BCSSTAT" jobs

# --- bcsstat slices from a stand-in ring: 8 slots, records 12..19 ---
$MKRING ring "$TMP/ring" 8 20 || bad "mkring ring"
expect 0 '^ +SEQ +SLICE +ROW +FLAGS' env BCS_STAT_DEVICE="$TMP/ring" \
	"$BCSSTAT" slices
if [ "$(grep -c '^ *1[0-9] ' "$TMP/out")" -eq 8 ]; then ok; else
	bad "slices: want 8 records: $(cat "$TMP/out")"; fi
# Output that cannot be written fails.
env BCS_STAT_DEVICE="$TMP/ring" "$BCSSTAT" slices > /dev/full 2> "$TMP/err"
if [ $? = 1 ] && grep -q 'writing the output' "$TMP/err"; then ok; else
	bad "slices > /dev/full: want exit 1: $(cat "$TMP/err")"; fi
expect 0 '^ +19 +119 +3 +----I----- +10000\.0 +12\.5 ' \
	env BCS_STAT_DEVICE="$TMP/ring" "$BCSSTAT" slices -n 3
if [ "$(wc -l <"$TMP/out")" -eq 4 ]; then ok; else
	bad "slices -n 3: want header + 3 lines: $(cat "$TMP/out")"; fi
expect 0 '^ +15 +115 +3 +L--------- .* 1 +0$' env BCS_STAT_DEVICE="$TMP/ring" \
	"$BCSSTAT" slices -n 5
if grep -q '^ *16 .* -S-------- ' "$TMP/out" && grep -q '^ *17 .* --D------- ' \
	"$TMP/out"; then ok; else bad "slices flags: $(cat "$TMP/out")"; fi
expect 0 '"seq"' env BCS_STAT_DEVICE="$TMP/ring" "$BCSSTAT" slices --json -n 2
if command -v python3 >/dev/null; then
	if python3 -c 'import json,sys; d=json.load(sys.stdin);
assert [r["seq"] for r in d] == [18, 19], d
assert d[1]["flags"] == "----I-----" and d[1]["switch_ns"] == 12500, d' \
		<"$TMP/out"; then ok; else bad "slices --json content"; fi
fi

# --- bcsstat slices --follow over a stream of records (read path) ---
$MKRING stream "$TMP/stream" 5 || bad "mkring stream"
expect 0 '' env BCS_STAT_DEVICE="$TMP/stream" "$BCSSTAT" slices -f -c 3
if [ "$(wc -l <"$TMP/out")" -eq 4 ]; then ok; else
	bad "slices -f -c 3: want header + 3 lines: $(cat "$TMP/out")"; fi
expect 0 '"seq":4' env BCS_STAT_DEVICE="$TMP/stream" "$BCSSTAT" slices -f --json
if [ "$(wc -l <"$TMP/out")" -eq 5 ]; then ok; else
	bad "slices -f --json: want 5 lines: $(cat "$TMP/out")"; fi

# --- bcsstat trace and plot from the slices --json files of two nodes ---
# node1: 4 records; the 2nd late, the 3rd with 2 missed strobes and
# predicted, the 4th expired (no row); its jobs.json puts jobs 7 and 8 in
# row 0.  node2: 3 records, the first fail-open.  Spans: 7, instants: 5.
mkdir -p "$TMP/snap"
rec() { # seq slice row flags start_ms late missed
	printf '{"seq":%s,"slice":%s,"row":%s,"flags":"%s",' "$1" "$2" "$3" "$4"
	printf '"strobe_ns":0,"deadline_ns":%s000000,' "$5"
	printf '"switch_start_ns":%s000500,"switch_end_ns":%s001000,' "$5" "$5"
	printf '"interval_ns":10000000,"switch_ns":500,"suspended":1,'
	printf '"resumed":1,"running":2,"blocked":0,"late":%s,"missed":%s,' "$6" "$7"
	printf '"late_total":0,"missed_total":0,"parked_ns":0,"resumed_ns":0}'
}
{
	echo '['
	rec 10 100 0 '--D------' 1000 0 0; echo ,
	rec 11 101 1 'L-D------' 1010 1 0; echo ,
	rec 12 102 0 '--D----P-' 1020 0 2; echo ,
	rec 13 103 null '--D-----E' 1030 0 0
	echo ']'
} >"$TMP/snap/node1.slices.json"
echo '[{"id":7,"row":0,"state":"running"},{"id":8,"row":0},{"id":9,"row":null}]' \
	>"$TMP/snap/node1.jobs.json"
{
	echo '['
	rec 0 100 null '---F-----' 1001 0 0; echo ,
	rec 1 101 1 '--D------' 1011 0 0; echo ,
	rec 2 102 0 '--D------' 1021 0 0
	echo ']'
} >"$TMP/snap/node2.slices.json"

expect 0 '' "$BCSSTAT" trace -o "$TMP/trace.json" "$TMP/snap/node1.slices.json" \
	"$TMP/snap/node2.slices.json"
if command -v python3 >/dev/null; then
	if python3 -m json.tool "$TMP/trace.json" >/dev/null; then ok; else
		bad "trace: not JSON: $(head -c 300 "$TMP/trace.json")"; fi
	if python3 - "$TMP/trace.json" <<'PY'; then ok; else bad "trace content"; fi
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "process_name"}
assert sorted(names.values()) == ["node1", "node2"], names
spans = [e for e in ev if e["ph"] == "X"]
inst = sorted((names[e["pid"]], e["name"]) for e in ev if e["ph"] == "i")
assert len(spans) == 7, spans
assert inst == [("node1", "expired"), ("node1", "late"), ("node1", "missed"),
                ("node1", "predicted"), ("node2", "fail-open")], inst
n1 = [e for e in spans if names[e["pid"]] == "node1"]
assert [e["name"] for e in n1] == ["row 0: jobs 7, 8", "row 1",
                                   "row 0: jobs 7, 8", "no row"], n1
# relative to the earliest switch of both nodes, in microseconds
assert min(e["ts"] for e in spans) == 0, spans
assert n1[0]["ts"] == 0 and n1[0]["dur"] == 10000, n1[0]
assert n1[3]["dur"] == 0.5, n1[3]
n2 = [e for e in spans if names[e["pid"]] == "node2"]
assert n2[0]["ts"] == 1000 and n2[0]["name"] == "no row", n2[0]
PY
fi
# --- bcsstat trace with MPI ranks, bcsstat mpi --slices ---
# Two ranks (tests/mkmpi): rank 0 on node1 with slices 100 .. 103, rank 1
# on node2 with 101 .. 102; each with two calls in its first slice.  A
# track per rank, its slice spans those of its node's records of the same
# slice number; the calls on a thread of their own.
mkdir -p "$TMP/mpi"
expect 0 '' tests/mkmpi "$TMP/mpi" 5 node1 0 3 100 4
expect 0 '' tests/mkmpi "$TMP/mpi" 5 node2 1 3 101 2
expect 0 '' "$BCSSTAT" trace -o "$TMP/mtrace.json" \
	"$TMP/snap/node1.slices.json" "$TMP/snap/node2.slices.json" "$TMP/mpi"
if command -v python3 >/dev/null; then
	if python3 - "$TMP/mtrace.json" <<'PY'; then ok; else bad "trace of ranks"; fi
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "process_name"}
assert sorted(names.values()) == ["node1", "node2", "rank 0 (node1)",
                                  "rank 1 (node2)"], names
pid = {v: k for k, v in names.items()}
def spans(who, cat):
    return [e for e in ev if e["ph"] == "X" and e["pid"] == pid[who]
            and e.get("cat") == cat]
n1 = {e["args"]["slice"]: e for e in spans("node1", "slice")}
n2 = {e["args"]["slice"]: e for e in spans("node2", "slice")}
r0 = spans("rank 0 (node1)", "mpi")
assert [e["args"]["slice"] for e in r0] == [100, 101, 102, 103], r0
for i, e in enumerate(r0):
    s = n1[e["args"]["slice"]]
    assert (e["ts"], e["dur"]) == (s["ts"], s["dur"]), (e, s)
    assert e["args"]["p2p_calls"] == i + 1 and e["args"]["coll_calls"] == 2
    assert e["name"] == "NP2P %d NCOLL 2" % (i + 1), e["name"]
r1 = spans("rank 1 (node2)", "mpi")
assert [e["args"]["slice"] for e in r1] == [101, 102], r1
assert all((e["ts"], e["dur"]) == (n2[e["args"]["slice"]]["ts"],
           n2[e["args"]["slice"]]["dur"]) for e in r1), r1
calls = spans("rank 0 (node1)", "call")
assert [c["name"] for c in calls] == ["MPI_Allreduce", "MPI_Send"], calls
assert all(c["tid"] == 2 and c["args"]["slice"] == 100 for c in calls)
assert calls[0]["dur"] == 1 and calls[1]["dur"] == 0.5, calls
counters = [e for e in ev if e["ph"] == "C" and e["pid"] == pid["rank 0 (node1)"]]
assert len(counters) == 8, counters
PY
fi
# The ranks alone: no node's records needed; slices at the ranks' times.
expect 0 '"name":"rank 1 \(node2\)"' "$BCSSTAT" trace -o - \
	"$TMP/mpi/5.node1.0.1000.bcsmpi" "$TMP/mpi/5.node2.1.1001.bcsmpi"
expect 0 '^ +102 +2 +2 +0.002 +0.003 +64$' "$BCSSTAT" mpi --slices "$TMP/mpi"
expect 0 '^rank 1 \(pid 1001 on node2\): 2 slices with calls, window 101 .. 101, 2 calls kept$' \
	"$BCSSTAT" mpi --slices "$TMP/mpi"
expect 0 '"coll_calls":2' "$BCSSTAT" mpi --slices --json --rank 1 "$TMP/mpi"
expect 2 '^bcsstat: one of --json, --hist, --ranks, --report, --slices' \
	"$BCSSTAT" mpi --slices --ranks "$TMP/mpi"

# A file not named nodeN.slices.json names its node itself.
cp "$TMP/snap/node2.slices.json" "$TMP/other.json"
expect 0 '"process_name","ph":"M".*"name":"other.json"' \
	"$BCSSTAT" trace -o - "$TMP/other.json"

# plot: a PNG of each kind, with or without gnuplot installed
if command -v gnuplot >/dev/null; then
	for kind in interval lateness; do
		rm -f "$TMP/p.png"
		expect 0 '' "$BCSSTAT" plot $kind -o "$TMP/p.png" \
			"$TMP/snap/node1.slices.json" "$TMP/snap/node2.slices.json"
		if [ -s "$TMP/p.png" ] &&
		   [ "$(head -c 4 "$TMP/p.png" | od -An -c | tr -d ' ')" = \
		     '211PNG' ]; then ok; else bad "plot $kind: no PNG"; fi
	done
	# A file name is no command to gnuplot, quoted or not (gnuplot
	# runs in the directory of bcsstat, here $TMP).
	evil="it's \`touch pwned\` '; system('touch pwned') #
\".json"
	cp "$TMP/snap/node1.slices.json" "$TMP/$evil"
	# shellcheck disable=SC2016
	expect 0 '' sh -c 'cd "$1" && exec "$2" plot interval -o p.png "$3"' \
		sh "$TMP" "$BCSSTAT" "$evil"
	if [ -e "$TMP/pwned" ]; then bad "plot ran a command from a file name"
	else ok; fi
	# The local ring when no FILE is given.
	expect 0 '' env BCS_STAT_DEVICE="$TMP/ring" "$BCSSTAT" plot interval \
		-o "$TMP/ring.png"
	if [ -s "$TMP/ring.png" ]; then ok; else bad "plot of the ring"; fi
	# Nothing to plot: one record has no interval.
	echo '[' >"$TMP/one.json"; rec 0 1 0 '---------' 1 0 0 >>"$TMP/one.json"
	echo ']' >>"$TMP/one.json"
	sed -i 's/"interval_ns":10000000/"interval_ns":0/' "$TMP/one.json"
	expect 1 '^bcsstat: nothing to plot' "$BCSSTAT" plot interval \
		-o "$TMP/none.png" "$TMP/one.json"
	if [ -e "$TMP/none.png" ]; then bad "plot left a file"; else ok; fi
else
	echo "SKIP: gnuplot is not installed; no PNG checked" >&2
fi
expect 1 '^bcsstat: gnuplot not found; install it' env PATH=/nonexistent \
	"$BCSSTAT" plot interval -o "$TMP/p.png" "$TMP/snap/node1.slices.json"

# plot's script and data, through a stand-in gnuplot that keeps them.
mkdir -p "$TMP/fakebin" "$TMP/fake" "$TMP/tmpd"
cat >"$TMP/fakebin/gnuplot" <<'EOF'
#!/bin/sh
cp "$1" "$FAKE/plot.gp" && cp "${1%/*}/data" "$FAKE/data" || exit 3
case $FAKE_MODE in
fail) echo "gnuplot: stand-in failure" >&2; exit 1 ;;
empty) exit 0 ;;
esac
printf 'not really a PNG'
EOF
chmod +x "$TMP/fakebin/gnuplot"
fake() { # MODE CMD...: CMD with the stand-in gnuplot
	m=$1
	shift
	env PATH="$TMP/fakebin:$PATH" FAKE="$TMP/fake" FAKE_MODE="$m" \
		TMPDIR="$TMP/tmpd" "$@"
}
expect 0 '' fake ok "$BCSSTAT" plot interval -o "$TMP/f.png" \
	"$TMP/snap/node1.slices.json" "$TMP/snap/node2.slices.json"
if grep -q "^set title 'Slice interval per node: snap'" "$TMP/fake/plot.gp" &&
   grep -q "index 1 using 1:(\$2 / u) .* title 'node2'" "$TMP/fake/plot.gp" &&
   grep -q "^set ylabel 'slice interval (ms)'$" "$TMP/fake/plot.gp" &&
   grep -q '^u = 1000000$' "$TMP/fake/plot.gp" &&
   ! grep -q 'index 2' "$TMP/fake/plot.gp" &&
   ! grep -q 'off scale' "$TMP/fake/plot.gp" &&
   grep -q '^set xtics 1$' "$TMP/fake/plot.gp" &&
   grep -q '^set yrange \[9\.000000:11\.000000\]$' "$TMP/fake/plot.gp"
then ok; else
	bad "plot script: $(cat "$TMP/fake/plot.gp")"; fi
# 4 + 3 intervals of 10 ms in two blocks, in ns; node2's first slice is 100
if [ "$(grep -c ' 10000000$' "$TMP/fake/data")" -eq 7 ] &&
   grep -q '^100 10000000$' "$TMP/fake/data"; then ok; else
	bad "plot data: $(cat "$TMP/fake/data")"; fi
# One interval of 5 s among 10 ms ones is drawn off the scale.
{
	echo '['
	for i in $(seq 1 50); do rec "$i" "$i" 0 '--D------' "$i" 0 0; echo ,; done
	rec 51 51 0 '--D------' 51 0 0
	echo ']'
} | sed 's/"seq":30,\(.*\)"interval_ns":10000000/"seq":30,\1"interval_ns":5000000000/' \
	>"$TMP/outlier.json"
expect 0 '' fake ok "$BCSSTAT" plot interval -o "$TMP/f.png" "$TMP/outlier.json"
if grep -q "off scale: 1 value above 20.0 ms, the highest 5000 ms" \
	"$TMP/fake/plot.gp" && grep -q '^set yrange \[\*:cap' "$TMP/fake/plot.gp" &&
   ! grep -q '^set xtics 1$' "$TMP/fake/plot.gp"; then
	ok; else bad "plot off scale: $(cat "$TMP/fake/plot.gp")"; fi
# Lateness in the unit of its range: 500 ns here, 21 to 25 ms below,
# 1.5 to 3.5 s with an early switch.
expect 0 '' fake ok "$BCSSTAT" plot lateness -o "$TMP/f.png" \
	"$TMP/snap/node1.slices.json"
if grep -q "^set ylabel 'switch start - deadline (ns)'$" "$TMP/fake/plot.gp" &&
   grep -q '^u = 1$' "$TMP/fake/plot.gp"; then ok; else
	bad "plot lateness in ns: $(cat "$TMP/fake/plot.gp")"; fi
late_recs() { # FIRST_LATE_NS STEP_NS: 5 records, late by FIRST + i * STEP
	echo '['
	for i in 0 1 2 3 4; do
		d=$(( (i + 1) * 100000000 ))
		printf '%s{"seq":%s,"slice":%s,"row":0,"flags":"L-D------",' \
			"$([ $i = 0 ] || echo ,)" "$i" "$i"
		printf '"strobe_ns":0,"deadline_ns":%s,"switch_start_ns":%s,' \
			"$d" "$((d + $1 + i * $2))"
		printf '"switch_end_ns":%s,"interval_ns":100000000,' "$((d + $1 + i * $2 + 1000))"
		printf '"switch_ns":1000,"suspended":1,"resumed":1,"running":2,'
		printf '"blocked":0,"late":1,"missed":0,"late_total":0,'
		printf '"missed_total":0,"parked_ns":0,"resumed_ns":0}\n'
	done
	echo ']'
}
late_recs 21000000 1000000 >"$TMP/late-ms.json"
expect 0 '' fake ok "$BCSSTAT" plot lateness -o "$TMP/f.png" "$TMP/late-ms.json"
if grep -q "^set ylabel 'switch start - deadline (ms)'$" "$TMP/fake/plot.gp" &&
   grep -q '^u = 1000000$' "$TMP/fake/plot.gp" &&
   grep -q '^0 21000000$' "$TMP/fake/data"; then ok; else
	bad "plot lateness in ms: $(cat "$TMP/fake/plot.gp")"; fi
late_recs -50000000 1000000000 >"$TMP/late-s.json"
expect 0 '' fake ok "$BCSSTAT" plot lateness -o "$TMP/f.png" "$TMP/late-s.json"
if grep -q "^set ylabel 'switch start - deadline (s)'$" "$TMP/fake/plot.gp" &&
   grep -q '^0 -50000000$' "$TMP/fake/data"; then ok; else
	bad "plot lateness in s: $(cat "$TMP/fake/plot.gp")"; fi
rm -f "$TMP/f.png"
expect 1 '^bcsstat: gnuplot failed \(exit status 1\)' fake fail "$BCSSTAT" \
	plot lateness -o "$TMP/f.png" "$TMP/snap/node1.slices.json"
expect 1 '^bcsstat: gnuplot made no picture' fake empty "$BCSSTAT" \
	plot lateness -o "$TMP/f.png" "$TMP/snap/node1.slices.json"
if [ -e "$TMP/f.png" ]; then bad "a failed plot left its file"; else ok; fi
if [ -z "$(ls -A "$TMP/tmpd")" ]; then ok; else
	bad "plot left $(ls -A "$TMP/tmpd") in TMPDIR"; fi

# The local ring when no FILE is given: records 12..19, 2 us early.
expect 0 '' env BCS_STAT_DEVICE="$TMP/ring" "$BCSSTAT" trace -o "$TMP/ring.json"
if command -v python3 >/dev/null; then
	if python3 - "$TMP/ring.json" "$(hostname)" <<'PY'; then ok; else
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "process_name"]
assert names == [sys.argv[2]], names
spans = [e for e in ev if e["ph"] == "X"]
assert [e["args"]["seq"] for e in spans] == list(range(12, 20)), spans
assert [e["name"] for e in spans[:2]] == ["row 0", "row 1"], spans
assert [e["ts"] for e in spans[:2]] == [0, 10000], spans
assert all(e["args"]["lateness_us"] == -2 for e in spans), spans
assert spans[-1]["dur"] == 12.5, spans[-1]
PY
		bad "trace of the ring"; fi
fi

# Nodes of two runs named alike are told apart by their directories.
mkdir -p "$TMP/run2"
cp "$TMP/snap/node1.slices.json" "$TMP/run2/"
expect 0 '"name":"snap/node1".*"name":"node2".*"name":"run2/node1"' \
	"$BCSSTAT" trace -o - "$TMP/snap/node1.slices.json" \
	"$TMP/snap/node2.slices.json" "$TMP/run2/node1.slices.json"

# The lines of slices --follow --json are read as well as an array.
env BCS_STAT_DEVICE="$TMP/stream" "$BCSSTAT" slices -f --json \
	>"$TMP/lines.json" || bad "slices -f --json"
expect 0 '' "$BCSSTAT" trace -o "$TMP/lines-trace.json" "$TMP/lines.json"
if command -v python3 >/dev/null; then
	if python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
seqs = [e["args"]["seq"] for e in ev if e["ph"] == "X"]
assert seqs == [0, 1, 2, 3, 4], seqs' "$TMP/lines-trace.json"; then ok; else
		bad "trace of slices -f --json lines"; fi
fi
printf '{"seq":1}\n[1]\n' >"$TMP/mixed.json"
expect 1 "^bcsstat: $TMP/mixed.json: not an object at byte 10" \
	"$BCSSTAT" trace -o "$TMP/t.json" "$TMP/mixed.json"
printf '[]\n[]\n' >"$TMP/two.json"
expect 1 "^bcsstat: $TMP/two.json: more after the JSON value at byte 3" \
	"$BCSSTAT" trace -o "$TMP/t.json" "$TMP/two.json"

# --- bcsstat trace and plot: bad input ---
expect 2 '^bcsstat: missing KIND' "$BCSSTAT" plot
expect 2 "^bcsstat: unknown plot kind 'histogram'" "$BCSSTAT" plot histogram \
	-o "$TMP/p.png"
expect 2 '^bcsstat: missing -o FILE.png' "$BCSSTAT" plot interval \
	"$TMP/snap/node1.slices.json"
expect 2 '^bcsstat: missing -o FILE.json' "$BCSSTAT" trace \
	"$TMP/snap/node1.slices.json"
expect 2 '^bcsstat: missing value for' "$BCSSTAT" trace -o
expect 2 "^bcsstat: unknown option '-x'" "$BCSSTAT" trace -x -o "$TMP/t.json"
expect 2 "^bcsstat: option not valid here: '-o'" "$BCSSTAT" slices -o x
expect 0 '^  lateness ' "$BCSSTAT" plot --help
expect 1 "^bcsstat: cannot read $TMP/missing.json: No such file" \
	"$BCSSTAT" trace -o "$TMP/t.json" "$TMP/missing.json"
echo 'seq 1 2 3' >"$TMP/text.json"
expect 1 "^bcsstat: $TMP/text.json is not JSON" \
	"$BCSSTAT" trace -o "$TMP/t.json" "$TMP/text.json"
echo '[{"seq":1},' >"$TMP/cut.json"
expect 1 "^bcsstat: $TMP/cut.json is not JSON: unexpected end" \
	"$BCSSTAT" plot interval -o "$TMP/p.png" "$TMP/cut.json"
echo '{"seq":1}' >"$TMP/obj.json"
expect 1 "not an array of slice records" \
	"$BCSSTAT" trace -o "$TMP/t.json" "$TMP/obj.json"
echo '[{"seq":1,"slice":2}]' >"$TMP/short.json"
expect 1 "^bcsstat: $TMP/short.json: record 0 has no \"deadline_ns\"" \
	"$BCSSTAT" trace -o "$TMP/t.json" "$TMP/short.json"
sed 's/"flags":"--D------"/"flags":"xyz"/' "$TMP/snap/node2.slices.json" \
	>"$TMP/flags.json"
expect 1 '"flags" is not a string of flag letters' \
	"$BCSSTAT" trace -o "$TMP/t.json" "$TMP/flags.json"
expect 1 "^bcsstat: cannot write $TMP/no/t.json" \
	"$BCSSTAT" trace -o "$TMP/no/t.json" "$TMP/snap/node1.slices.json"
if [ -e "$TMP/t.json" ]; then bad "trace of bad input left a file"; else ok; fi

# --- bcsstat dist: job dumps of two nodes, merged ---
# mkdump writes a synthetic dump with libbcs's writer: job 7, pid 101 with
# 200 bursts of 2..2.45 ms and 200 sleeps of 3..3.6 ms, pid 102 gone;
# node2's times are twice node1's.
MKDUMP=./tests/mkdump
mkdir -p "$TMP/dumps"
$MKDUMP node1 7 3 >"$TMP/dumps/7-node1.json" || bad "mkdump node1"
$MKDUMP node2 7 3 2 >"$TMP/dumps/7-node2.json" || bad "mkdump node2"
D1=$TMP/dumps/7-node1.json
D2=$TMP/dumps/7-node2.json
# The text of one dump, as tests/dist-golden.txt has it.
expect 0 '^job 7 \(row 1\) on node1: 2 tasks \(1 gone\)$' "$BCSSTAT" dist "$D1"
if diff -u tests/dist-golden.txt "$TMP/out" >"$TMP/diff"; then ok; else
	bad "dist text differs from tests/dist-golden.txt: $(cat "$TMP/diff")"; fi
expect 0 '^burst +500 +2 ms +7\.14 ms +39\.6 ms +3\.57 s$' \
	"$BCSSTAT" dist "$D1" "$D2"
if grep -q '^job 7 (row 1) on node1, node2: 4 tasks (2 gone)$' "$TMP/out" &&
   grep -Eq '^node2 +101 +101 -T +burst +200 +4 ms ' "$TMP/out"; then ok; else
	bad "dist of two nodes: $(head -c 400 "$TMP/out")"; fi
expect 0 '' "$BCSSTAT" dist --metric blocked --pid 101 "$D1" "$D2"
if grep -Eq '^blocked +400 ' "$TMP/out" && ! grep -q '^burst' "$TMP/out" &&
   ! grep -q ' 102 ' "$TMP/out" && grep -q ', pid 101$' "$TMP/out"
then ok; else bad "dist --metric --pid: $(head -c 400 "$TMP/out")"; fi
# --json: the dump format, merged; read back, it gives itself again.
"$BCSSTAT" dist --json "$D1" "$D2" >"$TMP/merged.json" 2>"$TMP/err" ||
	bad "dist --json: $(cat "$TMP/err")"
"$BCSSTAT" dist --json "$TMP/merged.json" >"$TMP/again.json" 2>"$TMP/err" ||
	bad "dist --json of dist --json: $(cat "$TMP/err")"
if cmp -s "$TMP/merged.json" "$TMP/again.json"; then ok; else
	bad "dist --json does not read back to itself"; fi
if command -v python3 >/dev/null; then
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
assert len(d) == 1, d
j = d[0]
assert j["format"] == "bcs-job-dump" and j["version"] == 1 and j["job"] == 7
assert j["node"] == "node1,node2", j["node"]
m = j["merged"]["burst"]
assert m["count"] == 500 and m["min"] == 2000000, m
assert sum(b[2] for b in m["buckets"]) == 500
assert [(t["node"], t["pid"]) for t in j["tasks"]] == \
	[("node1", 101), ("node1", 102), ("node2", 101), ("node2", 102)]
assert j["tasks"][1]["gone"] and not j["tasks"][1]["tracking"]
assert "slices" not in j' "$TMP/merged.json"; then ok; else
		bad "dist --json content"; fi
fi
# The same dump twice: counted twice, with a warning.
expect 0 'warning: .* is the same dump as .*: counted twice' \
	"$BCSSTAT" dist --json "$D1" "$D1"
if grep -q '"merged":{"burst":{"sub_bits":3,"count":500,' "$TMP/out"; then
	ok; else bad "dist FILE FILE: want 500 bursts"; fi
# Resolutions 3 and 1 add at 1.
$MKDUMP node3 7 1 >"$TMP/dumps/7-node3.json" || bad "mkdump node3"
expect 0 'buckets within 50 %' "$BCSSTAT" dist --metric burst \
	"$D1" "$TMP/dumps/7-node3.json"
# Usage errors exit 2, bad input and missing jobs 1.
expect 2 "^bcsstat: unknown metric \(burst, blocked, suspended, wait\): 'bursts'" \
	"$BCSSTAT" dist --metric bursts "$D1"
expect 2 "^bcsstat: bad pid 'x'" "$BCSSTAT" dist --pid x "$D1"
expect 2 '^bcsstat: option not valid here' "$BCSSTAT" dist -n 3 "$D1"
expect 1 '^bcsstat: dist: job 8 not found in the files given$' \
	"$BCSSTAT" dist --job 8 "$D1" "$D2"
expect 1 '^bcsstat: dist: no task 999 with statistics' \
	"$BCSSTAT" dist --pid 999 "$D1"
head -c 1000 "$D1" >"$TMP/dumps/cut.json"
expect 1 "cut.json is not JSON: unexpected end" \
	"$BCSSTAT" dist "$TMP/dumps/cut.json"
sed 's/"version":1,/"version":2,/' "$D1" >"$TMP/dumps/v2.json"
expect 1 'v2.json: dump version 2 is not supported \(this bcsstat reads version 1\)' \
	"$BCSSTAT" dist "$TMP/dumps/v2.json"
sed '0,/"sub_bits":3/s//"sub_bits":2/' "$D1" >"$TMP/dumps/res.json"
expect 1 'res.json: task 0: burst: bucket 0 \[1966080, 2097151\] is not a bucket of resolution sub_bits 2' \
	"$BCSSTAT" dist "$TMP/dumps/res.json"
expect 1 'node1.slices.json: not a bcs job dump' \
	"$BCSSTAT" dist "$TMP/snap/node1.slices.json"
expect 1 '^bcsstat: bcs module not loaded \(/dev/bcs missing\)' \
	env BCS_DEVICE=/nonexistent "$BCSSTAT" dist
expect 0 '^Usage: bcsstat dist .*--metric NAME' "$BCSSTAT" dist --help
expect 2 '^bcsstat: missing --job J' "$BCSSTAT" dump
expect 1 '^bcsstat: bcs module not loaded \(/dev/bcs missing\)' \
	env BCS_DEVICE=/nonexistent "$BCSSTAT" dump --job 7 -o "$TMP/x.json"
if [ -e "$TMP/x.json" ]; then bad "dump without a module wrote a file"
else ok; fi
# plot dist: its script, through the stand-in gnuplot.
expect 0 '' fake ok "$BCSSTAT" plot dist -o "$TMP/d.png" "$D1" "$D2"
# Small multiples: a panel per metric, each its own axes and key.
if grep -q "^set multiplot layout 2,2 title 'Distributions of job 7 on node1, node2'" \
	"$TMP/fake/plot.gp" && grep -q '^set logscale x 10$' "$TMP/fake/plot.gp" &&
   grep -q '"1 ms" 1000000' "$TMP/fake/plot.gp" &&
   [ "$(grep -c '^plot ' "$TMP/fake/plot.gp")" -eq 4 ] &&
   [ "$(grep -c '^set xrange ' "$TMP/fake/plot.gp")" -eq 4 ] &&
   grep -q "^set title 'wait (each wait on a run queue)'$" "$TMP/fake/plot.gp" &&
   grep -q "index 3 using 1:2 with steps .* title 'n=80, avg 36.8 us'" \
	"$TMP/fake/plot.gp"; then ok; else
	bad "plot dist script: $(cat "$TMP/fake/plot.gp")"; fi
# Only the metrics present: pid 102 alone has bursts and parks.
if command -v python3 >/dev/null; then
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
d["tasks"] = [t for t in d["tasks"] if t["pid"] == 102]
json.dump(d, open(sys.argv[2], "w"))' "$D1" "$TMP/d102.json" ||
	bad "dump of pid 102"
expect 0 '' fake ok "$BCSSTAT" plot dist -o "$TMP/d.png" "$TMP/d102.json"
if grep -q "^set multiplot layout 1,2 " "$TMP/fake/plot.gp" &&
   [ "$(grep -c '^plot ' "$TMP/fake/plot.gp")" -eq 2 ] &&
   grep -q "^set title 'suspended (each park by bcs)'$" "$TMP/fake/plot.gp" &&
   ! grep -q "^set title 'wait" "$TMP/fake/plot.gp"; then ok; else
	bad "plot dist of 2 metrics: $(cat "$TMP/fake/plot.gp")"; fi
fi
expect 0 '' fake ok "$BCSSTAT" plot dist --metric burst -o "$TMP/d.png" \
	"$D1" "$D2"
if grep -q "index 1 .* title 'node2 (n=250, avg 9.52 ms)'" "$TMP/fake/plot.gp" &&
   grep -q '"2 ms" 2000000' "$TMP/fake/plot.gp"; then ok; else
	bad "plot dist --metric script: $(cat "$TMP/fake/plot.gp")"; fi
# node1's burst block: from 0 up, 40 of 250 values (16 %) from 1966080 ns.
if grep -q '^1966080 16\.000000$' "$TMP/fake/data"; then ok; else
	bad "plot dist data: $(head -5 "$TMP/fake/data")"; fi
# plot ranks: a heatmap and the totals per metric, a row per task.
expect 0 '' fake ok "$BCSSTAT" plot ranks -o "$TMP/r.png" "$D1" "$D2"
if grep -q "^set multiplot title 'Tasks of job 7 on node1, node2'$" \
	"$TMP/fake/plot.gp" &&
   [ "$(grep -c ' with boxxyerror fc palette ' "$TMP/fake/plot.gp")" -eq 4 ] &&
   grep -q "^set ytics ('node1 pid 101' 0, 'node1 pid 102' 1, 'node2 pid 101' 2, 'node2 pid 102' 3)$" \
	"$TMP/fake/plot.gp" &&
   grep -q "^set title 'suspended (each park by bcs)'$" "$TMP/fake/plot.gp"
then ok; else bad "plot ranks script: $(cat "$TMP/fake/plot.gp")"; fi
expect 0 '' fake ok "$BCSSTAT" plot ranks --metric burst -o "$TMP/r.png" \
	"$D1" "$D2"
# node1's pid 101: 200 bursts of 2 to 2.45 ms; its row, then the totals.
if [ "$(grep -c ' with boxxyerror fc palette ' "$TMP/fake/plot.gp")" -eq 1 ] &&
   grep -q "^set xlabel 'total (s); x: to the median'$" "$TMP/fake/plot.gp" &&
   grep -q '^1048576 2097152 0 ' "$TMP/fake/data" &&
   grep -q '^2097152 4194304 0 ' "$TMP/fake/data" &&
   grep -q '^0 445000000 200 [0-9.]* [0-9]* "445 ms  x' "$TMP/fake/data"
then ok; else bad "plot ranks --metric burst: $(cat "$TMP/fake/data")"; fi
$MKDUMP node1 9 3 >"$TMP/dumps/9-node1.json" || bad "mkdump job 9"
expect 1 'statistics of 2 jobs: choose one with --job' \
	fake ok "$BCSSTAT" plot dist -o "$TMP/d.png" "$D1" "$TMP/dumps/9-node1.json"
expect 0 '' fake ok "$BCSSTAT" plot dist --job 9 -o "$TMP/d.png" "$D1" \
	"$TMP/dumps/9-node1.json"
expect 1 'statistics of 2 jobs: choose one with --job' \
	fake ok "$BCSSTAT" plot ranks -o "$TMP/r.png" "$D1" "$TMP/dumps/9-node1.json"
expect 2 '^bcsstat: --metric and --job are for plot dist and ranks' \
	"$BCSSTAT" plot interval --metric burst -o "$TMP/d.png" "$D1"
# plot and trace read the slice records of a dump, named after its node.
expect 0 '' fake ok "$BCSSTAT" plot interval -o "$TMP/d.png" "$D1" "$D2"
if grep -q "title 'node2'" "$TMP/fake/plot.gp"; then ok; else
	bad "plot interval of dumps: $(cat "$TMP/fake/plot.gp")"; fi
if command -v gnuplot >/dev/null; then
	expect 0 '' "$BCSSTAT" plot dist -o "$TMP/dist.png" "$D1" "$D2"
	if [ "$(od -An -c -N4 "$TMP/dist.png" | tr -d ' ')" = '211PNG' ]; then
		ok; else bad "plot dist: no PNG"; fi
fi

# --- bcsctl job list from a stand-in bcsd: a reply far above 64 KiB ---
# (16 jobs on 1024 nodes each, as a large cluster's job list is.)
if command -v python3 >/dev/null; then
	python3 - "$TMP/ctl" <<'PY' &
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(1)
s.settimeout(20)
c, _ = s.accept()
c.settimeout(20)
c.recv(65536)
jobs = [{"job": j, "row": j % 4, "nodes": 1024, "tasks": 2048,
         "local_tasks": 2,
         "per_node": [{"node": n, "tasks": 2} for n in range(1, 1025)]}
        for j in range(1, 17)]
msg = json.dumps({"ok": True, "jobs": jobs, "map_version": 7}).encode()
c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 2 * len(msg))
c.send(msg)
c.close()
PY
	srv=$!
	for _ in $(seq 50); do [ -S "$TMP/ctl" ] && break; sleep 0.1; done
	# No module here: the columns of this node's module are "-" but
	# for its tasks, which bcsd knows.
	expect 0 '^ +16 +0 +- +2 +- +- +- +1024 +2048  1:2,2:2,.*,1024:2  -$' \
		env BCS_CONTROL_SOCKET="$TMP/ctl" BCS_DEVICE=/nonexistent \
		$BCSCTL job list
	if [ "$(grep -c ',1024:2  -$' "$TMP/out")" -eq 16 ]; then ok; else
		bad "job list of 16 jobs: $(head -c 300 "$TMP/out")"; fi
	wait $srv

	# --- the LABEL column: what /run/bcs/labels/<job> says (the Slurm
	# plugin writes "slurm JOB.STEP" there), here from BCS_LABEL_DIR ---
	rm -f "$TMP/ctl"
	mkdir -p "$TMP/labels"
	echo 'slurm 42.0' > "$TMP/labels/1344"
	printf 'a\tb\033c\n' > "$TMP/labels/1345"
	python3 - "$TMP/ctl" <<'PY' &
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(1)
s.settimeout(20)
for _ in range(2):
    c, _ = s.accept()
    c.settimeout(20)
    c.recv(65536)
    jobs = [{"job": j, "row": 0, "nodes": 2, "tasks": 4, "local_tasks": 2,
             "per_node": [{"node": 1, "tasks": 2}, {"node": 2, "tasks": 2}]}
            for j in (1344, 1345, 1346)]
    c.send(json.dumps({"ok": True, "jobs": jobs, "map_version": 1}).encode())
    c.close()
PY
	srv=$!
	for _ in $(seq 50); do [ -S "$TMP/ctl" ] && break; sleep 0.1; done
	expect 0 '^ +1344 +0 +- +2 +- +- +- +2 +4  1:2,2:2  slurm 42\.0$' \
		env BCS_CONTROL_SOCKET="$TMP/ctl" BCS_DEVICE=/nonexistent \
		BCS_LABEL_DIR="$TMP/labels" $BCSCTL job list
	if grep -q 'PER_NODE   LABEL$' "$TMP/out" &&
	   grep -q '^ *1345 .*  a?b?c$' "$TMP/out" &&
	   grep -q '^ *1346 .*  1:2,2:2  -$' "$TMP/out"; then ok; else
		bad "job list labels: $(cat "$TMP/out")"; fi
	expect 0 '"id":1344,.*"label":"slurm 42\.0"\}.*"id":1346,.*"label":null\}' \
		env BCS_CONTROL_SOCKET="$TMP/ctl" BCS_DEVICE=/nonexistent \
		BCS_LABEL_DIR="$TMP/labels" $BCSCTL job list --json
	wait $srv
fi

# bash's completion of bcsctl, made from its table of commands: what a
# user gets after typing WORDS (the last one being completed).
$BCSCTL completion > "$TMP/completion" && ok || bad "bcsctl completion"
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
		_bcsctl; echo "${COMPREPLY[*]}"' sh "$TMP/completion" "$@"
}
expect_completion() {
	want=$1
	shift
	got=$(complete_words "$@")
	if [ "$got" = "$want" ]; then ok; else
		bad "completion of '$*': '$got', not '$want'"; fi
}
expect_completion "job" bcsctl jo
expect_completion "create" bcsctl job cr
expect_completion "--owner" bcsctl job create --ow
expect_completion "off standalone --watchdog --help" bcsctl mode ""
expect_completion "--from-slice" bcsctl stats window --fr
expect_completion "--rank --resolution" bcsctl stats enable 3 --r
expect_completion "set get" bcsctl slice ""
expect_completion "on off" bcsctl job filler 3 o
# Every command of the help is offered.
for w in $($BCSCTL --help | sed -n 's/^  \([a-z][a-z]*\).*/\1/p' | sort -u); do
	case " $(complete_words bcsctl "") " in
	*" $w "*) ok ;;
	*) bad "completion lacks the command $w" ;;
	esac
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host tests of the bcsctl and bcsstat binaries: exit statuses, messages,
# and bcsstat's output from stand-in /dev/bcsstat files.  No module is
# needed; BCS_DEVICE and BCS_STAT_DEVICE point the tools elsewhere.

set -u
cd "$(dirname "$0")/.." || exit 1

BCSCTL=./bcsctl
BCSSTAT=./bcsstat
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
expect 2 '^bcsstat: missing command' $BCSSTAT
expect 2 "^bcsstat: unknown command 'bogus'" $BCSSTAT bogus
expect 2 '^bcsstat: option not valid here' $BCSSTAT jobs -n 5
expect 2 '^bcsstat: -c needs --follow' $BCSSTAT slices -c 3
expect 2 "^bcsstat: bad record count '0'" $BCSSTAT slices -n 0
expect 2 "^bcsstat: bad job id 'x'" $BCSSTAT tasks --job x
expect 0 '^Usage: bcsstat' $BCSSTAT --help
expect 0 '^Usage: bcsstat slices' $BCSSTAT slices -h
expect 0 '^bcsstat [0-9]' $BCSSTAT --version

# --- bcsstat: no module ---
expect 1 "^bcsstat: bcs module not loaded \(/dev/bcsstat missing\)" \
	env BCS_STAT_DEVICE=/nonexistent $BCSSTAT jobs
expect 1 '^bcsstat: jobs: request not supported' \
	env BCS_STAT_DEVICE=/dev/null $BCSSTAT jobs

# --- bcsstat slices from a stand-in ring: 8 slots, records 12..19 ---
$MKRING ring "$TMP/ring" 8 20 || bad "mkring ring"
expect 0 '^ +SEQ +SLICE +ROW +FLAGS' env BCS_STAT_DEVICE="$TMP/ring" \
	$BCSSTAT slices
if [ "$(grep -c '^ *1[0-9] ' "$TMP/out")" -eq 8 ]; then ok; else
	bad "slices: want 8 records: $(cat "$TMP/out")"; fi
# Output that cannot be written fails.
env BCS_STAT_DEVICE="$TMP/ring" $BCSSTAT slices > /dev/full 2> "$TMP/err"
if [ $? = 1 ] && grep -q 'writing the output' "$TMP/err"; then ok; else
	bad "slices > /dev/full: want exit 1: $(cat "$TMP/err")"; fi
expect 0 '^ +19 +119 +3 +----I---- +10000\.0 +12\.5 ' \
	env BCS_STAT_DEVICE="$TMP/ring" $BCSSTAT slices -n 3
if [ "$(wc -l <"$TMP/out")" -eq 4 ]; then ok; else
	bad "slices -n 3: want header + 3 lines: $(cat "$TMP/out")"; fi
expect 0 '^ +15 +115 +3 +L-------- .* 1 +0$' env BCS_STAT_DEVICE="$TMP/ring" \
	$BCSSTAT slices -n 5
if grep -q '^ *16 .* -S------- ' "$TMP/out" && grep -q '^ *17 .* --D------ ' \
	"$TMP/out"; then ok; else bad "slices flags: $(cat "$TMP/out")"; fi
expect 0 '"seq"' env BCS_STAT_DEVICE="$TMP/ring" $BCSSTAT slices --json -n 2
if command -v python3 >/dev/null; then
	if python3 -c 'import json,sys; d=json.load(sys.stdin);
assert [r["seq"] for r in d] == [18, 19], d
assert d[1]["flags"] == "----I----" and d[1]["switch_ns"] == 12500, d' \
		<"$TMP/out"; then ok; else bad "slices --json content"; fi
fi

# --- bcsstat slices --follow over a stream of records (read path) ---
$MKRING stream "$TMP/stream" 5 || bad "mkring stream"
expect 0 '' env BCS_STAT_DEVICE="$TMP/stream" $BCSSTAT slices -f -c 3
if [ "$(wc -l <"$TMP/out")" -eq 4 ]; then ok; else
	bad "slices -f -c 3: want header + 3 lines: $(cat "$TMP/out")"; fi
expect 0 '"seq":4' env BCS_STAT_DEVICE="$TMP/stream" $BCSSTAT slices -f --json
if [ "$(wc -l <"$TMP/out")" -eq 5 ]; then ok; else
	bad "slices -f --json: want 5 lines: $(cat "$TMP/out")"; fi

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
	expect 0 '^ +16 +0 +- +2 +- +- +- +1024 +2048  1:2,2:2,.*,1024:2$' \
		env BCS_CONTROL_SOCKET="$TMP/ctl" BCS_DEVICE=/nonexistent \
		$BCSCTL job list
	if [ "$(grep -c ',1024:2$' "$TMP/out")" -eq 16 ]; then ok; else
		bad "job list of 16 jobs: $(head -c 300 "$TMP/out")"; fi
	wait $srv
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

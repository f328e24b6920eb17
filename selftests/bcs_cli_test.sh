#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsctl against the loaded module, as root and as an ordinary user
# (nobody, through setpriv): exit statuses and messages for permission
# denied, no such job, no such process, and "run --create" by a user who
# may not create jobs; then the other commands against states the test
# sets up: status, job list, slice set and get, strobe (bcs off,
# standalone, and driven by another process) and job detach; bcsstat
# events: the ends of jobs, one line each, or JSON.  Run by
# run-in-guest.sh as root, module loaded.  Prints KTAP; exits 1 if
# anything failed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
bcsctl=${BCSCTL:-$here/../tools/bcsctl}
bcsstat=${BCSSTAT:-$here/../tools/bcsstat}
job=$((0x5a0000c1))
nojob=$((0x5a0000c2))
evjob=$((0x5a0000c4))
plan=141
tmp=$(mktemp -d) || exit 1
busy=""
driver=""
rhythm=""
listener=""

cleanup()
{
	local p

	for p in $busy $driver $rhythm $listener; do
		kill -KILL "$p" 2> /dev/null
	done
	wait 2> /dev/null
	"$bcsctl" job destroy $job > /dev/null 2>&1
	"$bcsctl" job destroy $((0x5a0000c3)) > /dev/null 2>&1
	"$bcsctl" job destroy $evjob > /dev/null 2>&1
	"$bcsctl" mode off > /dev/null 2>&1
	"$bcsctl" stats window --clear > /dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

n=0
pass=0
fail=0
skip=0
echo "TAP version 13"
echo "1..$plan"

# expect STATUS PATTERN TEXT CMD...: CMD exits STATUS and its output
# matches PATTERN (grep -E; empty: any output).
expect()
{
	local want=$1 pat=$2 text=$3 got
	shift 3
	n=$((n + 1))
	"$@" > "$tmp/out" 2>&1
	got=$?
	if [ "$got" = "$want" ] &&
	   { [ -z "$pat" ] || grep -Eq -- "$pat" "$tmp/out"; }; then
		echo "ok $n $text"
		pass=$((pass + 1))
	else
		echo "# exit $got (want $want), output:"
		sed 's/^/#   /' "$tmp/out" | head -n 5
		echo "not ok $n $text"
		fail=$((fail + 1))
	fi
}

# check TEXT CMD...: CMD succeeds (typically a test of values gathered
# just before).
check()
{
	local text=$1

	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $text"
		pass=$((pass + 1))
	else
		echo "# failed: $*"
		echo "not ok $n $text"
		fail=$((fail + 1))
	fi
}

user()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

# field NAME: the value of "NAME:" in the output of bcsctl status.
field()
{
	"$bcsctl" status 2> /dev/null | sed -n "s/^$1: *//p"
}

# until_true CMD...: wait until CMD succeeds, 10 s at most (or
# BCS_TEST_WAIT_MS milliseconds, as the C tests).
until_true()
{
	local tries=$(( ${BCS_TEST_WAIT_MS:-10000} / 100 ))

	[ "$tries" -ge 100 ] || tries=100
	for _ in $(seq "$tries"); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# job_line: job $job's line of bcsctl job list, one space between fields.
job_line()
{
	"$bcsctl" job list 2> /dev/null |
		awk -v j=$job '$1 == j { $1 = $1; print }'
}

# job_is ROW STATE TASKS PARKED: job $job's line says so.
job_is()
{
	job_line | grep -Eq "^$job $1 $2 $3 $4 "
}

# check_job TEXT ROW STATE TASKS PARKED: job $job's line says so within
# 10 s (a task parks at its next return to user space).
check_job()
{
	local text=$1 rc

	shift
	until_true job_is "$@"
	rc=$?
	[ $rc = 0 ] || echo "# job list: $(job_line)"
	check "$text" [ $rc = 0 ]
}

# at_slice ROW SLICE STROBES: status shows ROW and slice SLICE, as it was
# when the module had taken STROBES strobes, or as many slices later as it
# has taken strobes since: a slow kernel (make check-debug) may take longer
# than a 10 s slice, and the module's own timer strikes meanwhile (in the
# one row that has a job).
at_slice()
{
	local row slice strobes

	row=$(field row)
	slice=$(field slice)
	strobes=$(field strobes)
	[ "$row" = "$1" ] && [ $((slice - $2)) -eq $((strobes - $3)) ] &&
		[ "$strobes" -ge "$3" ]
}

parked_is()
{
	[ "$(field parked)" = "$1" ]
}

# utime PID: the user CPU time of PID so far, in clock ticks.
utime()
{
	sed 's/^.*) //' "/proc/$1/stat" 2> /dev/null | awk '{ print $12 }'
}

# is_busy PID UID: PID is the busy loop (sh), as UID: the fork that
# became it has set its uid and exec'd.  (Attached before, it could park
# as root, still in the forked shell, for as long as its job waits.)
is_busy()
{
	[ "$(cat "/proc/$1/comm" 2> /dev/null)" = sh ] &&
		grep -Eq "^Uid:\s+$2\s" "/proc/$1/status"
}

# runs PID: PID gets CPU time (within 10 s).
runs()
{
	local u0

	u0=$(utime "$1")
	[ -n "$u0" ] || return 1
	for _ in $(seq 100); do
		[ "$(utime "$1")" -gt "$u0" ] && return 0
		sleep 0.1
	done
	return 1
}

if ! [ -x "$bcsctl" ] || ! command -v setpriv > /dev/null; then
	echo "# bcsctl ($bcsctl) or setpriv missing"
	echo "not ok 1 set-up"
	exit 1
fi
"$bcsctl" job destroy $job > /dev/null 2>&1
"$bcsctl" job destroy $nojob > /dev/null 2>&1

expect 0 '' "root creates job $job for the user (uid 65534)" \
	"$bcsctl" job create --id $job --owner 65534
expect 1 'ermission denied' "a user may not create a job" \
	user "$bcsctl" job create --id $nojob
expect 0 '^joined$' "a user's run --create joins the job that exists" \
	user "$bcsctl" run --job $job --create -- echo joined
expect 0 "\"id\":$job,.*\"owner\":65534," "job list --json names the owner" \
	"$bcsctl" job list --json
# Root's own job: the user may neither join it nor destroy it.
rjob=$((0x5a0000c3))
"$bcsctl" job destroy $rjob > /dev/null 2>&1
expect 0 '' "root creates job $rjob, its own" "$bcsctl" job create --id $rjob
expect 1 "job $rjob belongs to uid 0; only its owner or root may attach to it" \
	"a user may not join root's job, and is told why" \
	user "$bcsctl" run --job $rjob -- echo joined
expect 1 'ermission denied.*own' "a user may not destroy root's job" \
	user "$bcsctl" job destroy $rjob
expect 0 '' "root destroys its job" "$bcsctl" job destroy $rjob
expect 0 '' "job create --owner by name (nobody)" \
	"$bcsctl" job create --id $nojob --owner nobody
expect 0 '' "the owner destroys their job" \
	user "$bcsctl" job destroy $nojob
expect 1 'job create.*ermission denied' \
	"a user's run --create of a missing job says why it failed" \
	user "$bcsctl" run --job $nojob --create -- echo joined
expect 1 '[Nn]o such job' "attach to a missing job" \
	"$bcsctl" job attach $nojob $$
# A pid that no process has: above pid_max.
expect 1 '[Nn]o such (process|task)' "attach a pid that does not exist" \
	"$bcsctl" job attach $job "$(($(cat /proc/sys/kernel/pid_max) + 1))"
expect 1 'ermission denied' "a user may not attach another user's process" \
	user "$bcsctl" job attach $job 1
expect 2 'usage|bad|invalid' "bad arguments are refused" \
	"$bcsctl" job attach $job notapid
expect 0 '' "root destroys job $job" \
	"$bcsctl" job destroy $job

# --- status, slice set and get, strobe with bcs off ---
expect 0 '' "mode off" "$bcsctl" mode off
expect 0 '^mode: +off$' "status says mode off" "$bcsctl" status
expect 0 '^driver: +none$' "status says no driver" "$bcsctl" status
expect 0 '^\{"mode":"off","row":(null|[0-9]+),.*"driver_pid":null,' \
	"status --json says mode off, no driver" "$bcsctl" status --json
expect 0 '"cluster":null' "status --json without bcsd: cluster null" \
	"$bcsctl" status --json
expect 2 "unexpected argument 'now'" "status takes no argument" \
	"$bcsctl" status now
expect 0 '^mode: +off$' "a user may query the status" \
	user "$bcsctl" status
expect 1 'strobe: bcs is off: strobes need standalone or driven mode' \
	"a strobe with bcs off is refused, saying why" "$bcsctl" strobe --now
expect 0 '' "slice set 20000" "$bcsctl" slice set 20000
expect 0 '^20000$' "slice get gives 20000" "$bcsctl" slice get
expect 0 '^slice length: +20000 us$' "status gives the slice length" \
	"$bcsctl" status
expect 2 "bad slice length '49' \(50\.\.10000000 us\)" \
	"slice set below 50 us is refused" "$bcsctl" slice set 49
expect 2 "bad slice length '10000001' \(50\.\.10000000 us\)" \
	"slice set above 10 s is refused" "$bcsctl" slice set 10000001
expect 2 "bad slice length '2ms'" "slice set of a non-number is refused" \
	"$bcsctl" slice set 2ms
expect 2 'missing USEC' "slice set without a length is refused" \
	"$bcsctl" slice set
expect 1 'slice set: permission denied: needs CAP_SYS_ADMIN' \
	"a user may not set the slice" user "$bcsctl" slice set 30000
expect 0 '^20000$' "refused slice sets changed nothing; a user may read it" \
	user "$bcsctl" slice get
expect 0 '' "slice set 50, the shortest" "$bcsctl" slice set 50
expect 0 '^50$' "slice get gives 50" "$bcsctl" slice get

# --- job list and status with a job in row 3 and a busy process ---
"$bcsctl" job destroy $job > /dev/null 2>&1
expect 0 "^$job$" "job create --id $job --row 3" \
	"$bcsctl" job create --id $job --row 3
sh -c 'while :; do :; done' &
busy=$!
until_true is_busy $busy 0
expect 0 '' "attach a busy process" "$bcsctl" job attach $job $busy
expect 0 '^ +JOB +ROW +STATE +TASKS +PARKED +RUN_MS +SUSPENDED_MS +NODES +CLUSTER_TASKS +PER_NODE +LABEL$' \
	"job list has its header" "$bcsctl" job list
check "job list: job $job in row 3, running, 1 task, none parked" \
	job_is 3 running 1 0
expect 0 "^ *$job +3 +running +1 +0 +[0-9.]+ +[0-9.]+ +- +- +- +-$" \
	"job list without bcsd: its cluster columns are -" "$bcsctl" job list

# --- statistics: enabled, disabled and released at run time ---
expect 0 '' "stats enable the job: burst and wait, 8 buckets per octave" \
	"$bcsctl" stats enable $job --metric burst,wait --resolution 8
expect 0 '' "stats enable all metrics of its busy process" \
	"$bcsctl" stats enable $job --pid $busy
expect 1 "stats enable $job: a pid given is not a thread of job $job" \
	"stats enable of a pid outside the job says so" \
	"$bcsctl" stats enable $job --pid $$
expect 1 'permission denied' "a user may not record root's job" \
	user "$bcsctl" stats enable $job
expect 1 'stats enable 2147483000: no such job' \
	"stats enable of a job that does not exist" \
	"$bcsctl" stats enable 2147483000
expect 2 "bad resolution '3'" "a resolution that is no power of two" \
	"$bcsctl" stats enable $job --resolution 3
expect 2 "bad metric 'bursts'" "an unknown metric" \
	"$bcsctl" stats enable $job --metric bursts
expect 0 '' "stats disable the job" "$bcsctl" stats disable $job
expect 0 '' "stats release the job" "$bcsctl" stats release $job
expect 0 "\\{\"id\":$job,\"row\":3,\"rows\":\\[3\\],\"state\":\"running\",\"owner\":0,\"filler\":false,\"tasks\":1,\"parked\":0," \
	"job list --json gives the job" "$bcsctl" job list --json
expect 0 '' "job filler on" "$bcsctl" job filler $job on
expect 0 "\"id\":$job,.*\"filler\":true," "job list --json shows a filler job" \
	"$bcsctl" job list --json
expect 1 'job filler.*ermission denied' "a user may not change the filler flag" \
	user "$bcsctl" job filler $job off
expect 0 '' "job filler off" "$bcsctl" job filler $job off
expect 0 '"nodes":null,"cluster_tasks":null,"per_node":null,"label":null\}.*"cluster":false,"per_node_of":null,"per_node_more":null\}$' \
	"job list --json without bcsd: cluster fields null" \
	"$bcsctl" job list --json
expect 2 "unknown job subcommand 'lsit'; did you mean 'list'\\?" \
	"a slip in a subcommand gets the nearest one" "$bcsctl" job lsit
expect 0 "^ *$job +3 +running " "a user may list the jobs" \
	user "$bcsctl" job list
expect 2 "unexpected argument '$job'" "job list takes no argument" \
	"$bcsctl" job list $job
check "status counts 1 job and 1 task" \
	[ "$(field jobs)/$(field tasks)" = 1/1 ]

# --- standalone: bcsctl's strobes switch the row at once ---
# Slices of 10 s: the module's own timer does not switch between a strobe
# and the checks of its effect right after it.
expect 0 '' "slice set 10000000" "$bcsctl" slice set 10000000
expect 0 '' "mode standalone" "$bcsctl" mode standalone
expect 0 '^mode: +standalone$' "status says mode standalone" \
	"$bcsctl" status
strobes=$(field strobes)
expect 0 '' "strobe --row 5 --slice 1000 --now" \
	"$bcsctl" strobe --row 5 --slice 1000 --now
row_slice_is()
{
	[ "$(field row)/$(field slice)" = "$1" ]
}
check "status: row 5, slice 1000 after the strobe" \
	until_true row_slice_is 5/1000
check "status counts the strobe" [ "$(field strobes)" = $((strobes + 1)) ]
check_job "job list: job $job suspended, its task parked" 3 suspended 1 1
check "status counts 1 parked task" until_true parked_is 1
strobes=$(field strobes)
expect 0 '' "strobe --row 3 --now" "$bcsctl" strobe --row 3 --now
check "status: row 3, the next slice (1001)" \
	until_true at_slice 3 1001 $((strobes + 1))
check_job "job list: job $job runs again, nothing parked" 3 running 1 0
check "status counts no parked task" until_true parked_is 0
strobes=$(field strobes)
expect 0 '' "strobe, for the next row" "$bcsctl" strobe
check "status: the next non-empty row (3), slice 1002" \
	until_true at_slice 3 1002 $((strobes + 1))
check "the busy process gets CPU time" runs $busy
expect 2 "bad row '64' \(0\.\.63\)" "strobe --row 64 is refused" \
	"$bcsctl" strobe --row 64
expect 2 "bad slice number 'x'" "strobe --slice x is refused" \
	"$bcsctl" strobe --slice x
expect 2 '--in and --now exclude each other' \
	"strobe --in with --now is refused" "$bcsctl" strobe --in 5 --now
expect 1 'strobe: permission denied: needs CAP_SYS_ADMIN$' \
	"a user may not strobe, and is told what it takes" \
	user "$bcsctl" strobe --now

# --- driven by another process ---
# A driver (python3) holds /dev/bcs in driven mode with the watchdog off
# and strobes, for now, the row of each line it reads: switches happen
# when the test asks, and only then.  bcsctl may not strobe, and says who
# may.
cat > "$tmp/drive.py" << 'PY'
import fcntl, os, struct, sys
CONFIG = (3 << 30) | (40 << 16) | (0xbc << 8) | 6   # BCS_IOC_CONFIG
STROBE = (1 << 30) | (56 << 16) | (0xbc << 8) | 7   # BCS_IOC_STROBE
fd = os.open("/dev/bcs", os.O_RDWR)
# struct bcs_config: set MODE | WATCHDOG, mode DRIVEN, watchdog 0.
fcntl.ioctl(fd, CONFIG, bytearray(struct.pack("=IIQIIQQ",
                                              40, 1 | 4, 0, 2, 0, 0, 0)))
print("driving", flush=True)
n = 0
for line in sys.stdin:
    n += 1
    # struct bcs_strobe: BCS_STROBE_NOW, slice n, the row read.
    fcntl.ioctl(fd, STROBE, struct.pack("=IIQQQIIQQ",
                                        56, 1, n, 0, 0, int(line), 0, 0, 0))
    print("strobe", n, flush=True)
PY
nstrobe=0
# drive ROW: the driver strobes ROW; wait until it has.
drive()
{
	nstrobe=$((nstrobe + 1))
	echo "$1" >&7
	until_true grep -q "^strobe $nstrobe$" "$tmp/drive.out"
}

if ! command -v python3 > /dev/null; then
	echo "# python3 missing: driven mode and job detach not tested"
	while [ $n -lt $((plan - 2)) ]; do
		n=$((n + 1))
		skip=$((skip + 1))
		echo "ok $n driven mode, job detach # SKIP no python3"
	done
else
	mkfifo "$tmp/cmd"
	python3 "$tmp/drive.py" < "$tmp/cmd" > "$tmp/drive.out" 2>&1 &
	driver=$!
	exec 7> "$tmp/cmd"
	until_true grep -q driving "$tmp/drive.out"
	rc=$?
	check "a driver ($driver) enters driven mode" [ $rc = 0 ]
	expect 0 '^mode: +driven$' "status says mode driven" "$bcsctl" status
	expect 0 "^driver: +pid $driver$" "status names the driver" \
		"$bcsctl" status
	strobes=$(field strobes)
	expect 1 "strobe: bcs is driven by pid $driver, the only process" \
		"a strobe in driven mode fails, naming the driver" \
		"$bcsctl" strobe --now
	check "the refused strobe is not counted" \
		[ "$(field strobes)" = "$strobes" ]

	# --- job detach: a parked process leaves its job and runs ---
	drive 5
	check_job "the driver's strobe to row 5 suspends job $job" \
		3 suspended 1 1
	expect 0 '' "detach the parked process" \
		"$bcsctl" job detach $job $busy
	check_job "job list: job $job has no task left" 3 suspended 0 0
	check "status counts no task and none parked" \
		[ "$(field tasks)/$(field parked)" = 0/0 ]
	check "the detached process runs, its job still suspended" \
		runs $busy
	expect 1 "job detach $job $busy: process $busy is not in job $job" \
		"detach of a process not in the job says so" \
		"$bcsctl" job detach $job $busy
	expect 1 'no such job' "detach from a missing job" \
		"$bcsctl" job detach $nojob $busy
	expect 1 'no such process' "detach of a pid that does not exist" \
		"$bcsctl" job detach $job \
		"$(($(cat /proc/sys/kernel/pid_max) + 1))"
	expect 2 'missing PID' "detach without a pid is refused" \
		"$bcsctl" job detach $job
	expect 0 '' "attach the busy process again" \
		"$bcsctl" job attach $job $busy
	check_job "it parks at once" 3 suspended 1 1
	expect 1 'permission denied' "a user may not detach root's process" \
		user "$bcsctl" job detach $job $busy
	check_job "root's process stays in the job, parked" 3 suspended 1 1
	kill -KILL $busy
	wait $busy 2> /dev/null
	# A user's own process, attached by root to root's job: only root
	# may detach it.
	# (Not through user(): its subshell, root's, would be the process.)
	setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		sh -c 'while :; do :; done' &
	busy=$!
	until_true is_busy $busy 65534
	rc=$?
	check "a busy process runs as the user" [ $rc = 0 ]
	expect 0 '' "attach a user's busy process" \
		"$bcsctl" job attach $job $busy
	check_job "the user's process is parked" 3 suspended 1 1
	expect 1 "belongs to uid 0; only its owner or root may detach from it" \
		"a user may not detach their own process from root's job" \
		user "$bcsctl" job detach $job $busy
	expect 0 '' "root detaches it" "$bcsctl" job detach $job $busy
	check_job "job $job has no task left" 3 suspended 0 0
	check "the user's process runs again" runs $busy
	kill -KILL $busy
	wait $busy 2> /dev/null
	busy=""
	drive 3
	check "row 3, slice 2 from the driver's strobes" \
		[ "$(field row)/$(field slice)" = 3/2 ]
	exec 7>&-
	wait $driver
	rc=$?
	[ $rc = 0 ] || sed 's/^/# driver: /' "$tmp/drive.out"
	check "the driver ends at the end of its input (exit $rc)" [ $rc = 0 ]
	driver=""
fi
expect 0 '' "mode off" "$bcsctl" mode off
expect 0 '' "root destroys job $job" "$bcsctl" job destroy $job

# --- distributions: a program of known rhythm, bcsstat dist and dump ---
# python3 computes 2 ms (of its own CPU time) and sleeps 3 ms, $rounds
# times, in job $djob; every metric is enabled (bcsctl stats enable)
# before it starts.  The checks are on bucket ranges, wide enough for
# TCG, never on how long anything took.
bcsstat=${BCSSTAT:-$here/../tools/bcsstat}
djob=$((0x5a0000c3))
rounds=200
dist_tests=15
if ! command -v python3 > /dev/null || ! [ -x "$bcsstat" ]; then
	echo "# python3 or bcsstat ($bcsstat) missing: distributions not tested"
	for _ in $(seq $dist_tests); do
		n=$((n + 1))
		skip=$((skip + 1))
		echo "ok $n distributions # SKIP no python3 or bcsstat"
	done
else
	cat > "$tmp/rhythm.py" << 'PY'
import sys, time
# One blocking open of the fifo: the go.
with open(sys.argv[1]) as f:
    f.read()
for _ in range(int(sys.argv[2])):
    end = time.thread_time_ns() + 2000000
    while time.thread_time_ns() < end:
        pass
    time.sleep(0.003)
PY
	# The task of the rhythm in $1 (dist --json or a dump): counts and
	# the bucket of the median of each metric, as "metric count lo hi".
	cat > "$tmp/median.py" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
docs = d if isinstance(d, list) else [d]
pid = int(sys.argv[2])
tasks = [t for doc in docs for t in doc["tasks"] if t["pid"] == pid]
assert len(tasks) == 1, tasks
for name in ("burst", "blocked"):
    h = tasks[0]["metrics"][name]
    seen = 0
    for lo, hi, c in h["buckets"]:
        seen += c
        if 2 * seen >= h["count"]:
            break
    print(name, h["count"], lo, hi)
PY
	# medians_ok FILE PID: >= $rounds bursts and sleeps, the median
	# burst in [1 ms, 20 ms] and the median sleep in [2 ms, 30 ms].
	medians_ok()
	{
		python3 "$tmp/median.py" "$1" "$2" > "$tmp/medians" || return 1
		sed 's/^/# /' "$tmp/medians"
		awk -v r=$rounds '
			$1 == "burst" && $2 >= r && $4 >= 1e6 && $3 <= 20e6 { b = 1 }
			$1 == "blocked" && $2 >= r && $4 >= 2e6 && $3 <= 30e6 { s = 1 }
			END { exit !(b && s) }' "$tmp/medians"
	}
	djob_tasks()
	{
		"$bcsctl" job list 2> /dev/null |
			awk -v j=$djob -v n="$1" '$1 == j && $4 == n { f = 1 }
				END { exit !f }'
	}
	"$bcsctl" job destroy $djob > /dev/null 2>&1
	expect 0 '' "job create $djob for the distributions" \
		"$bcsctl" job create --id $djob
	rm -f "$tmp/go"
	mkfifo "$tmp/go"
	"$bcsctl" run --job $djob -- python3 "$tmp/rhythm.py" "$tmp/go" \
		$rounds &
	rhythm=$!
	until_true djob_tasks 1
	rc=$?
	check "the program of known rhythm ($rhythm) is in job $djob" [ $rc = 0 ]
	expect 0 '' "every metric of job $djob enabled, 8 buckets an octave" \
		"$bcsctl" stats enable $djob --resolution 8
	# Bounded: a writer of a fifo waits for its reader.
	# shellcheck disable=SC2016 # $1 is sh's
	timeout 60 sh -c 'echo go > "$1"' sh "$tmp/go"
	wait $rhythm
	rc=$?
	rhythm_pid=$rhythm
	rhythm=""
	check "it ran its $rounds rounds of 2 ms work and 3 ms sleep" [ $rc = 0 ]
	expect 0 '' "bcsstat dist --job $djob --json" \
		"$bcsstat" dist --job $djob --json
	cp "$tmp/out" "$tmp/dist.json"
	check "bursts and sleeps counted, their medians in the right buckets" \
		medians_ok "$tmp/dist.json" $rhythm_pid
	expect 0 "^job $djob on .*: 1 task \\(1 gone\\)\$" \
		"bcsstat dist --job $djob, as text" "$bcsstat" dist --job $djob
	expect 0 "^burst +[0-9]+ +[0-9.]+ [mu]s " \
		"its summary has a row of bursts" "$bcsstat" dist --job $djob
	expect 0 '' "bcsstat dump --job $djob -o a file" \
		"$bcsstat" dump --job $djob -o "$tmp/d1.json"
	expect 0 '' "a second dump" \
		"$bcsstat" dump --job $djob -o "$tmp/d2.json"
	check "a dump is of the format, with its job, the task and slices" \
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "bcs-job-dump" and d["version"] == 1, d
assert d["job"] == int(sys.argv[2]) and isinstance(d["slices"], list)
t = d["tasks"][0]
assert t["pid"] == int(sys.argv[3]) and t["gone"], t
s = t["totals"]
assert s["run_ns"] + s["blocked_ns"] + s["suspended_ns"] + s["wait_ns"] \
	== s["tracked_ns"], s' "$tmp/d1.json" $djob $rhythm_pid
	check "the dump's medians too" medians_ok "$tmp/d1.json" $rhythm_pid
	expect 0 '' "bcsstat dist --json of the two dumps" \
		"$bcsstat" dist --json "$tmp/d1.json" "$tmp/d2.json"
	check "the two dumps merge to twice the counts of one" \
		python3 -c 'import json, sys
one = json.load(open(sys.argv[1]))["tasks"][0]["metrics"]
two = json.load(open(sys.argv[2]))[0]["merged"]
for m in one:
    assert two[m]["count"] == 2 * one[m]["count"], (m, one[m], two[m])
    assert two[m]["sum"] == 2 * one[m]["sum"], m
assert set(one) == set(two)' "$tmp/d1.json" "$tmp/out"
	"$bcsctl" stats release $djob > /dev/null 2>&1
	"$bcsctl" job destroy $djob > /dev/null 2>&1
	expect 1 "job $djob has no statistics" \
		"a job without statistics is an error" \
		"$bcsstat" dist --job $djob
fi
# bcsstat events: the ends of jobs as they happen.  The header is printed
# once the group is joined.
expect 1 'CAP_SYS_ADMIN' "bcsstat events refuses an ordinary user" \
	user "$bcsstat" events -c 1
"$bcsstat" events -c 2 > "$tmp/events" 2> "$tmp/events.err" &
listener=$!
until_true grep -q 'JOB' "$tmp/events"
check "bcsstat events prints its header" grep -q 'JOB.*END' "$tmp/events"
"$bcsctl" job create --id $evjob > /dev/null
sleep 1000 &
sleeper=$!
"$bcsctl" job attach $evjob $sleeper > /dev/null
kill -KILL $sleeper
wait $sleeper 2> /dev/null
"$bcsctl" job destroy $evjob > /dev/null
until_true eval '! kill -0 $listener 2> /dev/null'
wait $listener
rc=$?
listener=""
check "bcsstat events -c 2 ends after two (exit $rc)" [ $rc = 0 ]
check "the last task's exit: one line" \
	grep -Eq "^ *$evjob +exited +0 +[0-9]+$" "$tmp/events"
check "the destruction: one line" \
	grep -Eq "^ *$evjob +destroyed +0 +[0-9]+$" "$tmp/events"
# --json: a job created and destroyed until the listener has seen one.
"$bcsstat" events --json -c 1 > "$tmp/events.json" 2>&1 &
listener=$!
for _ in $(seq 100); do
	"$bcsctl" job create --id $evjob > /dev/null
	"$bcsctl" job destroy $evjob > /dev/null
	kill -0 $listener 2> /dev/null || break
	sleep 0.1
done
wait $listener
rc=$?
listener=""
check "bcsstat events --json -c 1 ends after one (exit $rc)" [ $rc = 0 ]
check "--json: the job, its end and its number" \
	grep -Eq "^\{\"job\":$evjob,\"end\":\"destroyed\",\"dist_tasks\":0,\"seq\":[0-9]+,\"lost\":0\}$" \
	"$tmp/events.json"
# --- stats window: armed, shown, refused, cleared (bcs off: the slice
# number stays where it is) ---
from=$(( $(field slice) + 100 ))
to=$((from + 9))
expect 0 '^window: +none$' "stats window shows no window" \
	"$bcsctl" stats window
expect 0 '^window: +none$' "status shows no window" "$bcsctl" status
expect 1 'stats window: permission denied: arming a slice window needs CAP_SYS_ADMIN' \
	"a user may not arm a window" \
	user "$bcsctl" stats window --from-slice $from --to-slice $to
expect 0 "^window: +armed, slices $from\\.\\.$to, 0 records$" \
	"root arms a window of 10 slices" \
	"$bcsctl" stats window --from-slice $from --to-slice $to
expect 0 "^window: +armed, slices $from\\.\\.$to, 0 records$" \
	"status shows the window, to a user too" user "$bcsctl" status
expect 0 "^\\{\"state\":\"armed\",\"from_slice\":$from,\"to_slice\":$to,\"records\":0,\"dropped\":0,\"first_seq\":null\\}$" \
	"stats window --json" user "$bcsctl" stats window --json
expect 0 "\"window\":\\{\"state\":\"armed\"" "status --json has the window" \
	"$bcsctl" status --json
expect 1 'larger than the ring' "a window larger than the ring is refused" \
	"$bcsctl" stats window --from-slice $from --to-slice $((from + 1000000))
expect 1 'has begun' "a window that has begun is refused" \
	"$bcsctl" stats window --from-slice "$(field slice)" --to-slice $to
expect 2 'ends .* before it begins' "a window that ends first is a usage error" \
	"$bcsctl" stats window --from-slice $to --to-slice $from
expect 1 'permission denied' "a user may not clear the window" \
	user "$bcsctl" stats window --clear
expect 0 '^window: +none$' "root clears the window" \
	"$bcsctl" stats window --clear

if [ $n != $plan ]; then
	echo "# $n tests ran, $plan planned"
	fail=$((fail + 1))
fi
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail = 0 ]

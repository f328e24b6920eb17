#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd killed on a node: bcs.ko there fails open at once (its driver
# socket closed).  While bcsd is down one of its jobs goes; restarted,
# bcsd follows the master again, re-creates the job from the map, a new
# task attaches to it, and the node's rows agree with the others.  bcsd
# runs at real-time priority with its memory locked.  Then bcsd is
# stopped cleanly (SIGTERM): the jobs keep their tasks, and after the
# restart the same tasks run in the schedule again.

# shellcheck source=selftests/cluster/lib.sh
. "$CL_DIR/lib.sh"

read -r _ j2 < "$SHARE/jobs" || { ok 1 "jobs of the coherence test"; tap_end; }
n=2
f0=$(kstate $n failopens)
on $n 'kill_bcsd KILL'
ok $? "node$n: bcsd killed with SIGKILL"
st=$(on $n 'cat /sys/kernel/debug/bcs/state')
mode=$(echo "$st" | sed -n 's/^mode: //p')
f1=$(echo "$st" | sed -n 's/^failopens: //p')
parked=$(echo "$st" | sed -n 's/^parked: //p')
[ "$mode" = off ] && [ "$f1" = $((f0 + 1)) ] && [ "$parked" = 0 ]
ok $? "node$n: bcs.ko failed open at once (mode $mode, failopens $f0 -> $f1, parked $parked)"

# Without bcsd, bcsctl works on the local module: drop job $j2 here.
old=$(awk -F, -v n=$n -v j="$j2" '{ for (i = 1; i <= NF; i++) {
	split($i, a, ":"); if (a[1] == n && a[2] == j) print a[3] } }' \
	"$SHARE/pids")
on $n "bcsctl job destroy $j2 && kill $old"
ok $? "node$n: job $j2 destroyed locally, its task ($old) ended"

on $n 'start_bcsd --role=node' > /dev/null
ok $? "node$n: bcsd restarted"
# rt_priority (default 40): real-time policy, memory locked.
rt=$(on $n 'p=$(bcsd_pid) && chrt -p "$p" &&
	sed -n "s/^VmLck:[[:space:]]*\([0-9]*\) kB/locked \1 kB/p" /proc/$p/status' |
	tr '\n' ' ')
case $rt in
*"policy: SCHED_FIFO"*"priority: 40"*"locked "[1-9]*) ok 0 "node$n: bcsd runs at real-time priority ($rt)" ;;
*) ok 1 "node$n: bcsd runs at real-time priority ($rt)" ;;
esac
back()
{
	local s
	s=$(on $n 'cat /sys/kernel/debug/bcs/state; bcsstat jobs --json')
	echo "$s" | grep -q '^mode: driven' && echo "$s" | grep -q '^failopen: 0' &&
		echo "$s" | grep -Eq "\"id\": *$j2,"
}
wait_until 30 back
ok $? "node$n: driven again, job $j2 re-created from the master's map"

p=$(on $n start_burner "$j2")
rc=$?
ok $rc "node$n: a new task attaches to job $j2 ($p)"
[ $rc = 0 ] && sed -i "s/$n:$j2:$old/$n:$j2:$p/" "$SHARE/pids"

from=$(slice_now 1)
listed()
{
	on 1 bcsctl job list | awk -v j="$j2" '$1 == j && $8 == 3 && $9 == 3 { f = 1 }
		END { exit !f }'
}
wait_until 40 listed
ok $? "node1: bcsctl job list shows job $j2 with nodes=3 tasks=3 again"
sleep 3
snapshot_all restart
analyse coherence --nodes "$nr_nodes" "$SHARE/data/restart" --from-slice "${from:-0}" --min 10

# A clean stop (SIGTERM, as systemctl restart sends) fails open too, but
# leaves the jobs and their tasks in bcs.ko: the restarted bcsd adopts
# them from the map and the same tasks rejoin the schedule.
tasks_of()	# tasks_of NODE: "JOB:TASKS ..." of both jobs there, or "?"
{
	on "$1" bcsstat jobs --json | "$PY" -c '
import json, sys
try:
    jobs = {j["id"]: j["tasks"] for j in json.load(sys.stdin)}
except (ValueError, KeyError, TypeError):
    print("?")
    sys.exit(0)
print(" ".join("%s:%s" % (j, jobs.get(int(j), "none")) for j in sys.argv[1:]))' \
		"$j1" "$j2"
}
# Each job present with at least one task.
tasks_ok()
{
	[[ $1 =~ ^[0-9]+:[1-9][0-9]*\ [0-9]+:[1-9][0-9]*$ ]]
}
read -r j1 _ < "$SHARE/jobs"
t0=$(tasks_of $n)
on $n 'kill_bcsd TERM'
ok $? "node$n: bcsd stopped with SIGTERM"
t1=$(tasks_of $n)
st=$(on $n 'kstate mode; kstate parked' | paste -sd ' ')
[ "$st" = "off 0" ] && [ "$t1" = "$t0" ] && tasks_ok "$t0"
ok $? "node$n: failed open, every job kept with its tasks ($st; $t0 -> $t1)"
on $n 'start_bcsd --role=node' > /dev/null
ok $? "node$n: bcsd restarted"
driven()
{
	[ "$(on $n kstate mode)" = driven ]
}
wait_until 30 driven
ok $? "node$n: driven again"
from=$(slice_now 1)
sleep 3
t2=$(tasks_of $n)
[ "$t2" = "$t0" ] && tasks_ok "$t2"
ok $? "node$n: the same tasks in both jobs after the restart ($t2)"
snapshot_all restart-term
analyse coherence --nodes "$nr_nodes" "$SHARE/data/restart-term" --from-slice "${from:-0}" --min 10
tap_end

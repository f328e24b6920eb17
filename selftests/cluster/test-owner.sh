#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Owners of cluster jobs (Documentation/admin-guide.rst, "Job owners"): a
# job created through node2's bcsd with --owner 65534 (nobody) is that
# uid's in every node's bcs.ko (the master's map carries the owner); on
# node3, nobody runs a process of its own in it (bcsctl run --job, as
# nobody), and uid 65533 cannot (EPERM, and bcsctl names the owner); a job
# made without --owner stays root's, and nobody cannot run in it either.
# On node1, where the owned job has no task, bcs.ko reaps it once
# reap_empty_s (set to 2 here) has passed, and bcsd makes it again, still
# nobody's.  Between, a second user against the first (issue 40): uid
# 65533 can neither read nobody's distributions nor gather its MPI
# statistics, plant a file in its profiling directory, signal, destroy or
# detach it, and the job does not change; after the end, nobody's dump on
# node3 is nobody's alone.  Starts from none of these jobs and leaves none.

# shellcheck source=selftests/cluster/lib.sh disable=SC2154,SC2317 # PY, CL_NODES: run-cluster.sh's; called through wait_until
. "$CL_DIR/lib.sh"

as()	# as UID: the prefix that runs a command as UID, no groups
{
	echo "setpriv --reuid=$1 --regid=$1 --clear-groups"
}

j=$(on 2 "bcsctl job create --owner 65534")
rc=$?
case $j in *[!0-9]*|"") rc=1 ;; esac
ok $rc "bcsctl job create --owner 65534 through node2's bcsd (job '$j')"
[ $rc = 0 ] || tap_end
jr=$(on 2 "bcsctl job create")
rc=$?
case $jr in *[!0-9]*|"") rc=1 ;; esac
ok $rc "bcsctl job create without --owner (job '$jr')"

owner_on()	# owner_on NODE JOB: JOB's owner in NODE's bcs.ko, "-" if none
{
	on "$1" "bcsctl job list --json" | "$PY" -c '
import json, sys
for j in json.load(sys.stdin)["jobs"]:
    if j["id"] == int(sys.argv[1]) and j["state"] is not None:
        print(j["owner"]); break
else:
    print("-")' "$2" 2>/dev/null
}
is_owner()	# is_owner NODE JOB UID
{
	[ "$(owner_on "$1" "$2")" = "$3" ]
}
for n in $CL_NODES; do
	wait_until 20 is_owner "$n" "$j" 65534
	ok $? "node$n: bcs.ko holds job $j owned by uid 65534 ($(owner_on "$n" "$j"))"
	wait_until 20 is_owner "$n" "$jr" 0
	ok $? "node$n: bcs.ko holds job $jr owned by root ($(owner_on "$n" "$jr"))"
done

# nobody's own process in nobody's job, the way a user starts one.
out=$(on 3 "$(as 65534) bcsctl run --job $j -- sleep 120 \
	< /dev/null > \$BCS_OUT/owner-run.log 2>&1 &
	p=\$!
	wait_for 20 eval '[ \"\$(cat /proc/\$p/comm 2>/dev/null)\" = sleep ]' &&
	echo \$p")
rc=$?
pid=$out
ok $rc "node3: uid 65534 runs sleep in job $j (bcsctl run --job, pid '$pid')"
tasks_on()	# tasks_on NODE JOB: the tasks of JOB in NODE's bcs.ko
{
	on "$1" "bcsctl job list --json" | "$PY" -c '
import json, sys
for j in json.load(sys.stdin)["jobs"]:
    if j["id"] == int(sys.argv[1]):
        print(j["tasks"]); break' "$2" 2>/dev/null
}
t=$(tasks_on 3 "$j")
[ "$t" = 1 ]
ok $? "node3: job $j has that task ($t)"

# Another uid, its own process: refused, and bcsctl says whose job it is.
out=$(on 3 "$(as 65533) bcsctl run --job $j -- true 2>&1; echo rc=\$?")
diag "uid 65533: $out"
[[ $out == *"belongs to uid 65534"* ]] && [[ $out == *rc=[1-9]* ]]
ok $? "node3: uid 65533 cannot run in job $j: EPERM, the owner named"
out=$(on 3 "$(as 65534) bcsctl run --job $jr -- true 2>&1; echo rc=\$?")
diag "uid 65534 in root's job: $out"
[[ $out == *"belongs to uid 0"* ]] && [[ $out == *rc=[1-9]* ]]
ok $? "node3: uid 65534 cannot run in root's job $jr"

# A second user against the first (issue 40's cross-user test): with
# statistics on for nobody's job, uid 65533 on node3 can neither read
# them nor gather its MPI statistics, write into its profiling directory,
# signal or destroy it, nor read its dump; and nothing of the job changes.
on 1 "bcsctl stats enable $j" > /dev/null
ok $? "bcsctl stats enable $j (root)"
mpidir_of()	# mpidir_of NODE JOB: owner and mode of the job's MPI directory
{
	on "$1" "stat -c %u:%a /run/bcs/mpi/$2 2>/dev/null"
}
is_mpidir()
{
	[ "$(mpidir_of 3 "$j")" = "65534:700" ]
}
wait_until 20 is_mpidir
ok $? "node3: job $j's MPI directory is uid 65534's, 0700 ($(mpidir_of 3 "$j"))"
seen()	# seen [AS]: job $j's tasks node3's bcs.ko shows tracked (as AS)
{
	on 3 "{ ${1:-} bcsstat dist --job $j --json 2>/dev/null || echo []; } |
		$PY -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for doc in d for t in doc[\"tasks\"] if t[\"tracking\"]))'"
}
wait_until 20 eval '[ "$(seen)" -ge 1 ] 2>/dev/null'
ok $? "node3: root sees job $j's task tracked ($(seen))"
x=$(seen "$(as 65534)")
[ "${x:-0}" -ge 1 ] 2>/dev/null
ok $? "node3: uid 65534 reads its own job's distributions ($x task(s))"
x=$(seen "$(as 65533)")
[ "$x" = 0 ]
ok $? "node3: uid 65533 reads none of job $j's distributions ($x)"
x=$(on 3 "$(as 65533) bcsstat mpi --job $j 2>&1; echo rc=\$?")
diag "uid 65533, bcsstat mpi: $(echo "$x" | tail -n 2 | tr '\n' ' ')"
[[ $x == *"permission denied"* ]] && [[ $x == *rc=[1-9]* ]]
ok $? "node3: uid 65533 cannot gather job $j's MPI statistics"
x=$(on 3 "$(as 65533) touch /run/bcs/mpi/$j/rank.forged 2>&1; echo rc=\$?")
[[ $x == *rc=[1-9]* ]] && ! on 3 "test -e /run/bcs/mpi/$j/rank.forged"
ok $? "node3: uid 65533 cannot plant a file in job $j's MPI directory"
x=$(on 3 "$(as 65533) bcsctl job signal $j KILL 2>&1; echo rc=\$?")
[[ $x == *"permission denied"* ]] && [[ $x == *rc=[1-9]* ]] &&
	on 3 "kill -0 $pid"
ok $? "node3: uid 65533 cannot signal job $j; its task lives"
x=$(on 3 "$(as 65533) bcsctl job destroy $j 2>&1; echo rc=\$?")
[[ $x == *"permission denied"* ]] && [[ $x == *rc=[1-9]* ]]
ok $? "node3: uid 65533 cannot destroy job $j"
x=$(on 3 "$(as 65533) bcsctl job detach $j $pid 2>&1; echo rc=\$?")
diag "uid 65533, detach: $(echo "$x" | tail -n 2 | tr '\n' ' ')"
[[ $x == *rc=[1-9]* ]]
ok $? "node3: uid 65533 cannot detach job $j's task"
t=$(tasks_on 3 "$j")
[ "$t" = 1 ] && is_owner 3 "$j" 65534
ok $? "node3: job $j unchanged: its task ($t) and its owner"

# Reaped where it has no task, made again by bcsd, still nobody's.
r0=$(on 1 'bcsd_stats' | "$PY" -c '
import json, sys
print(json.load(sys.stdin).get("jobs_restored", 0))' 2>/dev/null)
on 1 "echo 2 > /sys/module/bcs/parameters/reap_empty_s"
restored()
{
	local r
	r=$(on 1 'bcsd_stats' | "$PY" -c '
import json, sys
print(json.load(sys.stdin).get("jobs_restored", 0))' 2>/dev/null)
	[ "${r:-0}" -gt "${r0:-0}" ] 2> /dev/null
}
wait_until 30 restored
ok $? "node1: bcs.ko reaped the empty job $j and bcsd made it again"
on 1 "echo 60 > /sys/module/bcs/parameters/reap_empty_s"
wait_until 10 is_owner 1 "$j" 65534
ok $? "node1: job $j is back, owned by uid 65534 ($(owner_on 1 "$j"))"

[ -n "$pid" ] && on 3 "kill $pid" > /dev/null
for x in "$j" "$jr"; do
	on 1 "bcsctl job destroy $x" > /dev/null
done
gone()
{
	[ "$(owner_on 3 "$j")" = - ] && [ "$(owner_on 3 "$jr")" = - ]
}
wait_until 20 gone
ok $? "both jobs destroyed"

# The dump of nobody's job on node3: nobody's alone.
dump="\$STATE/jobs/$j-*.json"
dumped()
{
	on 3 "test -s $dump"
}
wait_until 20 dumped
ok $? "node3: job $j's dump written"
x=$(on 3 "stat -c %u:%a $dump")
[ "$x" = "65534:600" ]
ok $? "node3: the dump is uid 65534's, mode 0600 ($x)"
on 3 "$(as 65534) head -c 1 $dump" > /dev/null
ok $? "node3: uid 65534 reads its job's dump"
! on 3 "$(as 65533) head -c 1 $dump" > /dev/null 2>&1
ok $? "node3: uid 65533 cannot read it"

tap_end

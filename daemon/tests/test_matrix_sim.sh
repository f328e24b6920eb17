#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The matrix through whole daemons: bcsd-sim, a master (role both, node
# 1, matrix pack) and two nodes (2, 3), each in a network namespace of
# its own.  Jobs created with the nodes they will run on (bcsctl job
# create --nodes, Slurm's hostlist syntax, here node ids), before any
# task: A on nodes 1 and 2 and B on node 3 share row 0; C on nodes 2
# and 3 conflicts with both and takes row 1, its request sent from
# node2 through the network; every node's map says so; a name that no
# node id resolves, a bad hostlist and --nodes on a command that takes
# none are refused with the reason.  Then 100 jobs, more than a map's
# part of 46 and than the 64 a map once held, on nodes 1-2 and 3 in
# turn: every daemon's job list has them all in the master's rows (a map
# of 3 parts went through the network and was assembled everywhere),
# each set of nodes with a row per job, the two sets sharing rows.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_matrix_sim
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-msim-$$
NET=10.79.0

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

sim_setup 1 2 3
sim_start 1 both --priority=200 --failover_slices=2
sim_start 2 node
sim_start 3 node
until_stat 1 active_master -eq 1 10
check $? "node1 takes over as master"

# create N LIST: a job made through daemon N's control socket with
# --nodes LIST; its id on stdout.
create()
{
	ctl "$1" job create --nodes "$2" 2>&1
}

a=$(create 1 "[1-2]")
check $? "job create --nodes '[1-2]' through the master ($a)"
b=$(create 1 "3")
check $? "job create --nodes 3 ($b)"
c=$(create 2 "[2-3]")
check $? "job create --nodes '[2-3]' through node2 ($c)"

# sets N: "JOB:ROWS ..." of daemon N's job list, ROWS like 0+1.
sets()
{
	ctl "$1" job list --json 2>/dev/null | python3 -c '
import json, sys
print(" ".join("%d:%s" % (j["id"], "+".join(map(str, j["rows"])))
               for j in sorted(json.load(sys.stdin)["jobs"],
                               key=lambda j: j["id"])))' 2>/dev/null
}
want="$a:0 $b:0 $c:1"
for n in 1 2 3; do
	until_is "$want" sets "$n"
	check $? "node$n: A and B (disjoint) share row 0, C takes row 1 ($(sets "$n"))"
done

out=$(create 2 "nodeX")
rc=$?
[ "$rc" != 0 ] && [[ $out == *"no node id for 'nodeX'"* ]]
check $? "a name no node id resolves is refused, named ($out)"
out=$(create 2 "node[3-1]")
rc=$?
[ "$rc" != 0 ] && [[ $out == *"backwards"* ]]
check $? "a bad hostlist is refused with the reason ($out)"
out=$(ctl 2 job destroy "$a" --nodes 1 2>&1)
rc=$?
[ "$rc" != 0 ]
check $? "--nodes on job destroy is refused ($out)"
out=$(ctl 1 job list --json | python3 -c '
import json, sys
print(len(json.load(sys.stdin)["jobs"]))')
[ "$out" = 3 ]
check $? "the refused creates made no job ($out jobs)"

for j in "$a" "$b" "$c"; do
	ctl 1 job destroy "$j" > /dev/null 2>&1
done
until_is "" sets 1
check $? "the three jobs are destroyed"

ids=()
made=0
for i in $(seq 0 99); do
	if [ $((i % 2)) = 0 ]; then nodes="[1-2]"; else nodes=3; fi
	id=$(create 1 "$nodes") && made=$((made + 1))
	ids+=("$id")
done
[ "$made" = 100 ]
check $? "100 jobs created through the master ($made)"
# The master's sets: 100 jobs, 50 on nodes 1-2 and 50 on node 3 in
# rows of their own within their set (a row each), rows 0-49 used twice.
until_is 100 eval 'sets 1 | wc -w'
want=$(sets 1)
echo "$want" | python3 -c '
import sys
ids = sys.argv[1:]
sets = dict(w.split(":") for w in sys.stdin.read().split())
assert len(sets) == 100 and sorted(sets) == sorted(ids), len(sets)
for half in (ids[0::2], ids[1::2]):
    rows = [sets[i] for i in half]
    assert all("+" not in r for r in rows), rows
    assert sorted(map(int, rows)) == list(range(50)), rows
' "${ids[@]}"
check $? "the master: 100 jobs, a row each within nodes 1-2 and within node 3, rows 0-49"
for n in 2 3; do
	until_is "$want" sets "$n"
	check $? "node$n's job list has the master's 100 jobs and rows ($(sets "$n" | wc -w) jobs)"
done
for n in 1 2 3; do
	out=$(ctl "$n" job list | wc -l)
	[ "$out" = 101 ]
	check $? "node$n: job list as text: a header and 100 jobs ($out lines)"
done
for j in "${ids[@]}"; do
	ctl 1 job destroy "$j" > /dev/null 2>&1
done
for n in 1 2 3; do
	until_is "" sets "$n"
	check $? "node$n: the 100 jobs are destroyed"
done

# CPU sets: jobs D and E with a task on node2 each, bound to CPU 0 and
# to CPU 1 (taskset, as Slurm's task/affinity binds them), share a row;
# F, bound to both, conflicts with each and takes a row of its own.
# nodes_of JOB: the nodes the master's map counts for JOB.
nodes_of()
{
	job_field 1 "$1" nodes
}
jd=$(ctl 1 job create)
je=$(ctl 1 job create)
jf=$(ctl 1 job create)
taskset -c 0 sleep 300 &
pd=$!
taskset -c 1 sleep 300 &
pe=$!
taskset -c 0,1 sleep 300 &
pf=$!
pids+=("$pd" "$pe" "$pf")
ctl 2 job attach "$jd" --node 2 "$pd" > /dev/null 2>&1 &&
	ctl 2 job attach "$je" --node 2 "$pe" > /dev/null 2>&1
check $? "jobs $jd and $je get a task each on node2, bound to CPU 0 and to CPU 1"
until_is 1 nodes_of "$jd" && until_is 1 nodes_of "$je"
check $? "the master hears of both tasks"
# Placed again whenever a report changes a job's nodes or CPUs: settled.
sleep 1
got=$(sets 1)
[[ " $got " == *" $jd:0 "* ]] && [[ " $got " == *" $je:0 "* ]]
check $? "D and E, on disjoint CPUs of node2, share row 0 ($got)"
ctl 2 job attach "$jf" --node 2 "$pf" > /dev/null 2>&1
until_is 1 nodes_of "$jf"
sleep 1
got=$(sets 1)
[[ " $got " == *" $jd:0 "* ]] && [[ " $got " == *" $je:0 "* ]] &&
	[[ " $got " == *" $jf:1 "* ]]
check $? "F, on both CPUs, takes row 1 ($got)"
kill "$pd" "$pe" "$pf" 2>/dev/null
for j in "$jd" "$je" "$jf"; do
	ctl 1 job destroy "$j" > /dev/null 2>&1
done

# Owners: a job created through node2's bcsd (a request over the network)
# with --owner 65534, one through the master with --owner nobody (a name
# of /etc/passwd, if it has one) and one without: the master's map
# carries them, every node's stand-in holds each job with its owner, and
# bcsctl job list --json says so.
# stand_in_owner N JOB: job JOB's owner in daemon N's stand-in, from the
# control socket's job-list ("local_owner"), "-" if it does not hold it.
stand_in_owner()
{
	python3 - "$TMP/ctl$1" "$2" <<'PY' 2>/dev/null || echo "-"
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(5)
s.connect(sys.argv[1])
s.send(b'{"cmd": "job-list"}')
for j in json.loads(s.recv(1 << 22))["jobs"]:
    if j["job"] == int(sys.argv[2]):
        o = j.get("local_owner")
        print("-" if o is None else o)
        break
else:
    print("-")
PY
}
jo=$(ctl 2 job create --owner 65534 2>&1)
check $? "job create --owner 65534 through node2 ($jo)"
jr=$(ctl 1 job create 2>&1)
check $? "job create without --owner through the master ($jr)"
nobody=$(getent passwd nobody | cut -d: -f3)
if [ -n "$nobody" ]; then
	jn=$(ctl 1 job create --owner nobody 2>&1)
	check $? "job create --owner nobody through the master ($jn)"
fi
for n in 1 2 3; do
	until_is 65534 stand_in_owner "$n" "$jo"
	check $? "node$n's stand-in holds job $jo owned by uid 65534 ($(stand_in_owner "$n" "$jo"))"
	until_is 0 stand_in_owner "$n" "$jr"
	check $? "node$n's stand-in holds job $jr owned by root ($(stand_in_owner "$n" "$jr"))"
	out=$(job_field "$n" "$jo" owner)
	[ "$out" = 65534 ]
	check $? "node$n: bcsctl job list --json: job $jo's owner is 65534 ($out)"
	if [ -n "$nobody" ]; then
		until_is "$nobody" stand_in_owner "$n" "$jn"
		check $? "node$n's stand-in holds job $jn owned by nobody, uid $nobody"
	fi
done
out=$(ctl 1 job create --owner no-such-user-here 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"no such user"* ]]
check $? "an owner no uid names is refused ($out)"
for j in "$jo" "$jr" ${jn:+"$jn"}; do
	ctl 1 job destroy "$j" > /dev/null 2>&1
done

checks_done test_matrix_sim

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Commands down the tree of daemons (Documentation/tree.rst, "Commands"),
# with bcsd-sim as test_probe.sh runs it: a master (role both, node 1)
# and two nodes (2, 3), each in a network namespace of its own, with a
# nodes file, strobe_transport tree and tree_fanout 1, so the tree is the
# chain 1 - 2 - 3 and a command to node 3 passes node 2.  The stand-ins
# attach real processes of the host (the namespaces share its pids).
#
# Node 3 loses the first command that comes to it, and node 2 the first
# acknowledgement (BCS_SIM_DROP, sim/sim.h), so that the attach reaches
# node 3 only because node 2 sends it again, and node 2 sends it again
# once more after node 3 took it.  The checks: `bcsctl job attach JOB
# --node 3 PID` through node 2 succeeds; node 3 attached the process
# exactly once, after node 2 sent the command again; the master's map
# counts the task (from the sums of tasks up the tree); an attach on the
# master's own node from node 3; the per-node column of the job list
# (the lists of tasks per node concatenated up the tree): the cluster's
# on the master, a subtree's on the others; the errors come back to the asker (no
# such process, job or node); `bcsctl job signal` ends the processes
# attached; a signal to a job with a task on node1 alone is pruned
# from node2's subtree (no command reaches node2 or node3); last, node3 restarted to lose every command: node2 gives up
# after tree_retries and the asker hears that node3 did not answer.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_attach
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-attach-$$
NET=10.80.0

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

# Namespace $NS-br holds the bridge; daemon N lives in $NS-N, address
# $NET.N, its veth's other end on the bridge.
sim_setup 1 2 3

printf '1 %s.1\n2 %s.2\n3 %s.3\n' "$NET" "$NET" "$NET" > "$TMP/nodes"
tree=(--nodes_file="$TMP/nodes" --strobe_transport=tree --tree_fanout=1
      --tree_ack_ms=50 --tree_retries=4)
sim_start 1 both --priority=200 --failover_slices=2 "${tree[@]}"
# Types 15 (BCSP_ACK) and 13 (BCSP_COMMAND) of proto.h.
BCS_SIM_DROP=15:1 sim_start 2 node "${tree[@]}"
BCS_SIM_DROP=13:1 sim_start 3 node "${tree[@]}"
until_stat 1 active_master -eq 1 10
check $? "node1 takes over as master"

out=$(ctl 1 job create 2>&1)
rc=$?
job=$(echo "$out" | grep -Eo '[0-9]+' | head -1)
echo "# bcsctl job create: $out"
[ "$rc" = 0 ] && [ -n "$job" ]
check $? "a job is made through node1"
job=${job:-0}

# Processes to attach; the namespaces share the host's pids.
sleep 300 &
p3=$!
pids+=("$p3")
sleep 300 &
p1=$!
pids+=("$p1")

# The map reaches node3 within a few report periods.
for _ in $(seq 50); do
	snap 3 && python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["maps"]
sys.exit(0 if m and sys.argv[2] in m[-1]["rows"] else 1)' \
		"$TMP/stats3.json" "$job" 2>/dev/null && break
	sleep 0.2
done

out=$(ctl 2 job attach "$job" --node 3 "$p3" 2>&1)
check $? "bcsctl job attach $job --node 3 $p3 through node2 ($out)"
snap 2
snap 3
echo "# node2: resent $(val 2 tree_resent), acks rx $(val 2 tree_acks_rx); node3: attaches $(val 3 attaches), acks tx $(val 3 tree_acks_tx), copies $(val 3 command_copies)"
[ "$(val 3 attaches)" = 1 ] && [ "$(val 3 attach_failures)" = 0 ]
check $? "node3 attached the process once"
grep -q "type 13 lost" "$TMP/log3" && [ "$(val 2 tree_resent)" -ge 1 ]
check $? "node3 lost the first command; node2 sent it again"
# The lost acknowledgement: node2 sends again, node3 acknowledges again.
until_stat 2 tree_acks_rx -ge 1 5 && until_stat 3 tree_acks_tx -ge 2 5
check $? "node3 acknowledges the copy after its acknowledgement was lost"
snap 3
[ "$(val 3 attaches)" = 1 ] && [ "$(val 2 tree_unacked)" = 0 ]
check $? "still one attach on node3, and no command given up"

# tasks N: job $job's tasks in the map daemon N follows ("-" if none).
tasks()
{
	job_field "$1" "$job" cluster_tasks
}
until_is 1 tasks 1
check $? "the master's map counts the task on node3 ($(tasks 1))"

out=$(ctl 3 job attach "$job" --node 1 "$p1" 2>&1)
rc=$?
snap 1
[ "$rc" = 0 ] && [ "$(val 1 attaches)" = 1 ]
check $? "bcsctl job attach --node 1 through node3, on the master's node ($out)"

# per_node N: "OF node:tasks..." of job $job in daemon N's job list.
per_node()
{
	ctl "$1" job list --json 2>/dev/null | python3 -c 'import json, sys
o = json.load(sys.stdin)
for j in o["jobs"]:
    if j["id"] == int(sys.argv[1]):
        print(o["per_node_of"], " ".join("%d:%d" % (e["node"], e["tasks"])
                                         for e in j["per_node"] or []))' \
		"$job" 2>/dev/null
}
# The per-node column down a tree: the master's is the cluster's, node2's
# its subtree's (itself and node3), each from the lists concatenated up.
for _ in $(seq 50); do
	[ "$(per_node 1)" = "cluster 1:1 3:1" ] && [ "$(per_node 2)" = "subtree 3:1" ] && break
	sleep 0.2
done
echo "# per node: master '$(per_node 1)', node2 '$(per_node 2)', node3 '$(per_node 3)'"
[ "$(per_node 1)" = "cluster 1:1 3:1" ]
check $? "the master's job list shows the task of node1 and of node3"
[ "$(per_node 2)" = "subtree 3:1" ] && [ "$(per_node 3)" = "subtree 3:1" ]
check $? "node2's and node3's show their subtrees' (node3's task)"

# The errors, each from where it is known.
sh -c 'exit 0' &
gone=$!
wait "$gone"
out=$(ctl 2 job attach "$job" --node 3 "$gone" 2>&1)
rc=$?
echo "# $out"
[ "$rc" != 0 ] && [[ "$out" == *"no process $gone on node 3"* ]]
check $? "no such process on node3: said to the asker"
out=$(ctl 3 job attach 999 --node 2 "$p3" 2>&1)
rc=$?
echo "# $out"
[ "$rc" != 0 ] && [[ "$out" == *"no such job 999"* ]]
check $? "no such job: said to the asker"
out=$(ctl 1 job attach "$job" --node 77 "$p3" 2>&1)
rc=$?
echo "# $out"
[ "$rc" != 0 ] && [[ "$out" == *"no such node 77"* ]]
check $? "no such node: said to the asker"

# The processes attached are the job's: a signal ends both.
out=$(ctl 2 job signal "$job" TERM 2>&1)
check $? "bcsctl job signal $job TERM through node2 ($out)"
for _ in $(seq 50); do
	kill -0 "$p1" 2>/dev/null || kill -0 "$p3" 2>/dev/null || break
	sleep 0.1
done
! kill -0 "$p1" 2>/dev/null && ! kill -0 "$p3" 2>/dev/null
check $? "the signal ended the processes attached on node1 and node3"

# Pruning: job K with a task on node1 alone.  A signal to K goes to no
# subtree without its tasks: the master keeps it from node2 (and so from
# node3), which acknowledge nothing new.
out=$(ctl 1 job create 2>&1)
k=$(echo "$out" | grep -Eo '[0-9]+' | head -1)
sleep 300 &
pk=$!
pids+=("$pk")
out=$(ctl 1 job attach "${k:-0}" --node 1 "$pk" 2>&1)
check $? "job ${k:-?} made, its one task attached on node1 ($out)"
ktasks()
{
	job_field "$1" "${k:-0}" cluster_tasks
}
until_is 1 ktasks 1
snap 1
snap 2
snap 3
pr0=$(val 1 tree_pruned)
a2=$(val 2 tree_acks_tx)
a3=$(val 3 tree_acks_tx)
out=$(ctl 1 job signal "${k:-0}" TERM 2>&1)
check $? "bcsctl job signal ${k:-?} TERM ($out)"
for _ in $(seq 50); do
	kill -0 "$pk" 2>/dev/null || break
	sleep 0.1
done
! kill -0 "$pk" 2>/dev/null
check $? "the signal ended job ${k:-?}'s task on node1"
sleep 0.5
snap 1
snap 2
snap 3
echo "# node1: pruned $pr0 -> $(val 1 tree_pruned); acks tx: node2 $a2 -> $(val 2 tree_acks_tx), node3 $a3 -> $(val 3 tree_acks_tx)"
[ "$(val 1 tree_pruned)" -gt "$pr0" ] && [ "$(val 2 tree_acks_tx)" = "$a2" ] &&
	[ "$(val 3 tree_acks_tx)" = "$a3" ]
check $? "the master pruned node2's subtree: no command reached node2 or node3"
ctl 1 job destroy "${k:-0}" > /dev/null 2>&1

# A node that takes nothing: node3 again, losing every command.  node2
# sends the attach again tree_retries (4) times and gives up; the master
# tells the asker that node3 did not answer (after 2 s).
kill "$(cat "$TMP/pid3")" 2>/dev/null
for _ in $(seq 50); do
	kill -0 "$(cat "$TMP/pid3")" 2>/dev/null || break
	sleep 0.1
done
rm -f "$TMP/log3"
BCS_SIM_DROP=13:1000 sim_start 3 node "${tree[@]}"
until_stat 3 strobes_rx -ge 1 10
snap 2
r0=$(val 2 tree_resent)
u0=$(val 2 tree_unacked)
sleep 500 &
pn=$!
pids+=("$pn")
out=$(ctl 1 job attach "$job" --node 3 "$pn" 2>&1)
rc=$?
echo "# $out"
[ "$rc" != 0 ] && [[ "$out" == *"node 3 did not answer"* ]]
check $? "a node that takes no command: the asker hears that it did not answer"
snap 2
snap 3
echo "# node2: resent $r0 -> $(val 2 tree_resent), unacked $u0 -> $(val 2 tree_unacked); node3: attaches $(val 3 attaches)"
[ "$(val 2 tree_unacked)" = $((u0 + 1)) ] &&
	[ "$(val 2 tree_resent)" = $((r0 + 4)) ] && [ "$(val 3 attaches)" = 0 ]
check $? "node2 sent it again tree_retries (4) times, then gave up"
kill "$pn" 2>/dev/null

checks_done test_attach

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Strobes down a tree, without multicast: every bcsd is started afresh
# with a nodes file and strobe_transport = tree, fan-out 1, so that the
# three nodes make a chain 1 -> 2 -> 3, and multicast is switched off on
# every guest's interface.  node2 passes the master's datagrams on to
# node3; every node must run the same row in every slice, jobs made from
# node2 and node3 must reach every node, and the master's global records
# must hear from all three.  Then node2's bcsd is killed: node3 asks node1
# to pass it the master's datagrams, keeps switching and does not fail
# open; node2 restarted, node3 hears from it again.  Then a signal to
# one job from node2 ends its tasks on every node, and not the other's.
# Last, `bcsctl job attach --node 3` from node2 attaches a process of
# node3 in its bcs.ko through the master and down the chain, and a pid
# node3 does not have comes back to node2 as an error.  Last, a take-over
# in the tree: node2 as a standby, cut off node1 alone, does not take
# over; node1 killed, node2 takes over and the chain re-roots at it;
# node1 restarted follows node2.

# shellcheck disable=SC2154 # j1, j2, burners: set by two_jobs, start_burners
. "$CL_DIR/lib.sh"

tree_chain 'ip link set eth0 multicast off'

# The chain: node N's parent is N - 1, at depth N - 1.
for n in $CL_NODES; do
	p=$(status_of "$n" "tree parent")
	c=$(status_of "$n" "tree children")
	if [ "$n" = 1 ]; then
		want="none (the root)"
	else
		want="$((n - 1)), depth $((n - 1))"
	fi
	[ "$p" = "$want" ]
	ok $? "node$n: tree parent '$p', children '$c'"
done
# The repair of lost strobes (strobe_copies 2 by default) and of lost
# parts of gathers' answers: their counters.
bad=""
for n in $CL_NODES; do
	s=$(status_of "$n" "tree strobes")
	g=$(status_of "$n" "tree gathers")
	echo "# node$n: tree strobes: $s; tree gathers: $g"
	echo "$s" | grep -Eq '^[0-9]+ asked for again, [0-9]+ asked of it, [0-9]+ resent$' &&
		echo "$g" | grep -Eq '^[0-9]+ asked for again, [0-9]+ asked of it, [0-9]+ parts resent, [0-9]+ refused$' ||
		bad="$bad node$n"
done
[ -z "$bad" ]
ok $? "bcsctl status shows each node's strobes and gathers' parts asked for again, asked of it and resent${bad:+ (not on$bad)}"

two_jobs "two new jobs, made from node2 and node3 through the tree"
start_burners tree "$j1" "$j2"
# The master's map counts each job's nodes and tasks from the sums of
# tasks added up on the way (one task of each job on every node).
counted()
{
	on 1 bcsctl job list | awk -v a="$j1" -v b="$j2" -v n="$nr_nodes" '
		($1 == a || $1 == b) && $8 == n && $9 == n { f++ }
		END { exit f != 2 }'
}
wait_until 30 counted
ok $? "node1: the map counts $nr_nodes nodes and $nr_nodes tasks of each job, from the sums"
from=$(slice_now 1)
sleep 6
snapshot_all tree
analyse coherence --nodes "$nr_nodes" "$SHARE/data/tree" \
	--from-slice "${from:-0}" --jobs "$j1,$j2" --min 20 --lead-us "$CL_LEAD_US"
analyse tasks "$SHARE/data/tree" --pids "$burners"

# node2 passes what the master sends on to node3; node3, a leaf, nothing.
p2=$(stat_of 2 tree_passed)
p3=$(stat_of 3 tree_passed)
[ "${p2:-0}" -gt 0 ] 2>/dev/null && [ "$p3" = 0 ]
ok $? "node2 passed datagrams down to node3 ($p2), node3 to nobody ($p3)"

# The nodes' switch summaries reach the master without multicast.
heard()
{
	on 1 "bcsctl stats global --last 30 --json" | "$PY" -c '
import json, sys
g = json.load(sys.stdin)["slices"]
print(max((r["nodes"] for r in g), default=0))'
}
wait_until 20 eval '[ "$(heard)" = "$nr_nodes" ]'
ok $? "the master's global records hear from all $nr_nodes nodes ($(heard))"
# ... added up on the way: node2 takes its own and node3's, sends sums.
i2=$(stat_of 2 reduce_in)
u2=$(stat_of 2 reduce_up)
[ "${i2:-0}" -gt 0 ] 2>/dev/null && [ "${u2:-0}" -gt 0 ] 2>/dev/null
ok $? "node2 adds up its subtree's switch summaries ($i2 in, $u2 datagrams up)"

# --- one task's statistics, read cluster-wide through the tree ---
# A context over a subset, asked on node2: node3's task of job j2 only.
# bcsstat dist --job on node1 merges every node's distributions up the
# chain (all nodes covered, node3's values in it); node1 and node2 record
# none of job j2's tasks.
task_of()	# task_of NODE JOB: the pid of JOB's burner on NODE
{
	local e n j p
	for e in ${burners//,/ }; do
		IFS=: read -r n j p <<< "$e"
		[ "$n" = "$1" ] && [ "$j" = "$2" ] && echo "$p"
	done
}
p3=$(task_of 3 "$j2")
on 2 "bcsctl stats enable $j2 --pid 3:$p3 --metric suspended" > /dev/null
ok $? "node2: bcsctl stats enable $j2 --pid 3:$p3 --metric suspended (node3's task only)"
tree_parks()	# the values of suspended merged in the tree, asked on node1
{
	on 1 "bcsstat dist --job $j2 --metric suspended" | awk -v n="$nr_nodes" '
		$0 ~ "through the tree of daemons: nodes covered " n ", missing 0" { t = 1 }
		/values/ && t { sub(/ values.*/, ""); sub(/.*, /, ""); print; exit }'
}
wait_until 30 eval '[ "$(tree_parks)" -gt 0 ] 2> /dev/null'
ok $? "node1: bcsstat dist --job $j2 through the tree: all $nr_nodes nodes covered, node3's task's parks in it ($(tree_parks) values)"
# Only node3 records: the others keep nothing of job j2's tasks.
for n in $CL_NODES; do
	t=$(tracked "$n" "$j2")
	if [ "$n" = 3 ]; then
		[ "$t" -ge 1 ] 2> /dev/null
	else
		[ "$t" = 0 ]
	fi
	ok $? "node$n: records $([ "$n" = 3 ] && echo "node3's task" || echo nothing) of job $j2 (tracked: '$t')"
done
on 2 "bcsctl stats release $j2" > /dev/null
ok $? "node2: bcsctl stats release $j2"

# --- an interior node dies: its child asks its grandparent ---
# node3 asks node1 after tree_reattach_slices (3) without strobes from
# node2, well within the watchdog (CL_WATCHDOG slices): it goes on
# switching with the others, its bcs.ko does not fail open, and a
# gather asked on node1 covers it.
tree_of()	# tree_of NODE EXPR: EXPR over node NODE's place, "v"
{
	on "$1" "bcsctl status --json" |
		json /dev/stdin "(lambda v: $2)(v['cluster']['tree'])"
}
f3=$(kstate 3 failopens)
on 2 'kill_bcsd KILL' > /dev/null
ok $? "node2: bcsd killed, an interior node of the chain"
wait_until 20 eval '[ "$(tree_of 3 "v[\"asking\"]")" = 1 ]'
ok $? "node3 asks node1 to pass it the master's datagrams ($(tree_of 3 'v["asking"]'))"
a=$(tree_of 1 'v["adopted"]')
[ "$a" = "[3]" ]
ok $? "node1 passes them to node3 ($a)"
# A gather meanwhile takes node3's answer through node1: node2 alone is
# missing (Documentation/filters.rst, "Gathers reduced in the tree").
covered()
{
	on 1 "bcsstat dist --job $j2" 2>/dev/null |
		grep -o 'nodes covered [0-9]*, missing [0-9]*'
}
c=$(covered)
[ "$c" = "nodes covered 2, missing 1" ]
ok $? "node1: bcsstat dist --job $j2 covers node1 and node3, node2 alone missing ($c)"
r1=$(stat_of 3 strobes_rx)
sleep 3
r2=$(stat_of 3 strobes_rx)
[ "$r2" -gt "$r1" ] 2>/dev/null
ok $? "node3 follows the master's strobes meanwhile ($r1 -> $r2)"
f3b=$(kstate 3 failopens)
[ "$f3b" = "$f3" ]
ok $? "node3's bcs.ko did not fail open (failopens $f3 -> $f3b)"
on 2 "start_bcsd --role=node $tree" > /dev/null
ok $? "node2: bcsd restarted"
wait_until 30 eval '[ "$(tree_of 3 "v[\"asking\"]")" = None ]'
ok $? "node3 hears from node2 again and asks nobody ($(tree_of 3 'v["asking"]'))"
wait_until 30 all_follow_master
ok $? "every node follows node1 again"

# --- a command on a job's tasks, to every node that holds them ---
on 2 "bcsctl job signal $j1 TERM" > /dev/null
ok $? "node2: bcsctl job signal $j1 TERM through the master"
alive_of()	# alive_of JOB: "NODE:PID" of JOB's burners still alive
{
	local e n j p out=""
	for e in ${burners//,/ }; do
		IFS=: read -r n j p <<< "$e"
		[ "$j" = "$1" ] || continue
		on "$n" "kill -0 $p 2> /dev/null" > /dev/null 2>&1 &&
			out+="$n:$p "
	done
	echo "$out"
}
wait_until 20 eval '[ -z "$(alive_of "$j1")" ]'
ok $? "every node's task of job $j1 ended (alive: '$(alive_of "$j1")')"
a2=$(alive_of "$j2")
[ "$(echo "$a2" | wc -w)" = "$nr_nodes" ]
ok $? "job $j2's tasks all run on ($a2)"

# --- an attach from any node, on exactly one node ---
in_job()	# in_job NODE PID: the job bcs.ko holds PID in on NODE, or none
{
	on "$1" "bcsstat tasks --json" | "$PY" -c '
import json, sys
print(next((t["job"] for t in json.load(sys.stdin)
            if t["tgid"] == int(sys.argv[1])), "none"))' "$2"
}
pa=$(on 3 'sleep 600 < /dev/null > /dev/null 2>&1 & echo $!')
out=$(on 2 "bcsctl job attach $j2 --node 3 $pa" 2>&1)
ok $? "node2: bcsctl job attach $j2 --node 3 $pa through the master ($out)"
ja=$(in_job 3 "$pa")
[ "$ja" = "$j2" ]
ok $? "node3's bcs.ko holds process $pa in job $j2 ($ja)"
a3=$(stat_of 3 attaches)
[ "$a3" = 1 ] && [ "$(stat_of 1 attaches)" = 0 ] && [ "$(stat_of 2 attaches)" = 0 ]
ok $? "node3 alone carried out the attach ($a3)"
out=$(on 2 "bcsctl job attach $j2 --node 3 4194304" 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ "$out" == *"no process 4194304 on node 3"* ]]
ok $? "an attach of a pid node3 does not have comes back as an error ($out)"
on 3 "kill $pa" > /dev/null

# --- a take-over down the tree ---
# node2 restarted as a standby (role both, priority 100), the child of
# node1.  Cut off node1 alone (node2 drops what node1 sends), it
# does not take over: node3 still hears the master (tree.rst, "The quorum
# of a standby"), and node2 asks another node to pass the datagrams on.
# Then node1's bcsd is killed: node2 takes over, the chain re-roots at it
# (2 -> 1 -> 3: node3 under node1, dead, asks node2), and node1 restarted
# follows node2.
on 2 'kill_bcsd TERM' > /dev/null
on 2 "start_bcsd --role=both --priority=100 $tree" > /dev/null
ok $? "node2: bcsd restarted as a standby"
wait_until 30 all_follow_master
ok $? "every node follows node1"
cut=${CL_NET:-10.77.0}.1
if on 2 "cut_from $cut" > /dev/null 2>&1; then
	sleep $((CL_FAILOVER * CL_SLICE_US / 1000000 + 4))
	m2=$(status_of 2 master)
	a2=$(tree_of 2 'v["asking"]')
	[ "$(stat_of 2 takeovers)" = 0 ] && [ "$m2" = 1 ]
	ok $? "node2, cut off node1 alone, does not take over (master '$m2', asking $a2)"
	# The cut took: node2 no longer hears its parent and asks another.
	case $a2 in None|''|'?') false ;; esac
	ok $? "node2 asks another node to pass node1's datagrams on (asking $a2)"
	on 2 "uncut_from $cut" > /dev/null
	ok $? "node2: the link from node1 restored"
else
	ok 1 "node2: the link from node1 cut (ip rule)"
	on 2 "uncut_from $cut" > /dev/null
fi
on 1 'kill_bcsd KILL' > /dev/null
ok $? "node1: bcsd killed, the master of the tree"
wait_until 30 eval '[ "$(status_of 2 master)" = "2 (this node)" ]'
ok $? "node2 takes over ($(status_of 2 master))"
wait_until 20 eval '[ "$(status_of 3 master)" = 2 ]'
ok $? "node3 follows node2 ($(status_of 3 master))"
t2=$(tree_of 2 '(v["root"], v["parent"], v["children"])')
[ "$t2" = "(2, None, [1])" ]
ok $? "node2 is the root of the chain 2 -> 1 -> 3 ($t2)"
wait_until 20 eval '[ "$(tree_of 3 "(v[\"root\"], v[\"parent\"], v[\"depth\"], v[\"asking\"])")" = "(2, 1, 2, 2)" ]'
ok $? "node3 re-roots under node1, dead, and asks node2 ($(tree_of 3 '(v["root"], v["parent"], v["depth"], v["asking"])'))"
r1=$(stat_of 3 strobes_rx)
sleep 3
r2=$(stat_of 3 strobes_rx)
[ "$r2" -gt "$((r1 + 20))" ] 2>/dev/null
ok $? "node3 gets node2's strobes every slice ($r1 -> $r2)"
on 1 "start_bcsd --role=both --priority=200 $tree" > /dev/null
ok $? "node1: bcsd restarted"
wait_until 30 eval '[ "$(status_of 1 master)" = 2 ]'
ok $? "node1 follows node2 ($(status_of 1 master))"
wait_until 30 eval '[ "$(tree_of 3 "v[\"asking\"]")" = None ]'
ok $? "node3 hears from node1, its parent, again ($(tree_of 3 '(v["parent"], v["asking"])'))"

on_all stop_burners > /dev/null
for n in $CL_NODES; do
	on "$n" 'ip link set eth0 multicast on' > /dev/null
done
tap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A network partition and its heal.  After the failover test node1 is the
# master; node3's bcsd comes back as a standby, then node3 is cut off the
# network while a job is created on node1's side.
#
# With the default quorum, node3 hears one node of the three it knows and
# does not take over: its module fails open, and when the cut heals it
# follows node1 again and gets the new job.
#
# With --quorum=1 node3 does take over for itself, with a higher epoch;
# when the cut heals node1 (the junior master) steps down and every node
# must follow node3 and hold exactly the jobs of node3's map.  (Each
# master numbers its own map versions from the one they last shared, so
# a node must not take the senior's map for one it already applied.)
# During that cut each side makes a job with the same id, and node2 runs
# a task in its side's: after the heal that job must be gone from node2
# (its task running on, detached), not merged into node3's job of that
# id; the job's birth in the maps tells the two apart.
#
# Either way every node must then run the same row in every slice.

# shellcheck source=selftests/cluster/lib.sh
. "$CL_DIR/lib.sh"

read -r j1 j2 < "$SHARE/jobs" || { ok 1 "jobs of the coherence test"; tap_end; }
burners=$(cat "$SHARE/pids")

ids()	# ids: the first column of a table, header dropped, sorted
{
	awk 'NR > 1 { print $1 }' | sort -n | paste -sd ' '
}

agree()	# agree MASTER: every bcs.ko holds exactly the jobs of MASTER's map
{
	local n want got
	want=$(on "$1" bcsctl job list | ids)
	[ -n "$want" ] || return 1
	for n in $CL_NODES; do
		got=$(on "$n" 'BCS_CONTROL_SOCKET= bcsctl job list' | ids)
		[ "$got" = "$want" ] || return 1
	done
}

kernel_tasks()	# kernel_tasks NODE JOB: tasks of JOB in NODE's bcs.ko
{
	on "$1" 'BCS_CONTROL_SOCKET= bcsctl job list' |
		awk -v j="$2" '$1 == j { print $4 }'
}

show_jobs()	# show_jobs MASTER
{
	local n
	diag "node$1's map: $(on "$1" bcsctl job list | ids)"
	for n in $CL_NODES; do
		diag "node$n's bcs.ko: $(on "$n" 'BCS_CONTROL_SOCKET= bcsctl job list' | ids)"
	done
}

# failed_open NODE COUNT: its module failed open since its failopens
# counter read COUNT.  The counter, not the state: with quorum 1 node3
# takes over soon after, which ends the fail-open, and a busy host can
# make a poll miss that window.
failed_open()
{
	local f
	f=$(kstate "$1" failopens)
	[ "${f:-0}" -gt "$2" ]
}

coherent()	# coherent NAME
{
	local from
	from=$(slice_now 1)
	sleep 4
	snapshot_all "$1"
	analyse coherence --nodes "$nr_nodes" "$SHARE/data/$1" \
		--from-slice "${from:-0}" --min 10
}

# cut_during NAME: cut node3 off, create a job on node1's side, heal.
cut_during()
{
	local f0
	f0=$(kstate 3 failopens)
	on 3 'ip link set eth0 down'
	ok $? "$1: node3 cut off the network"
	wait_until 30 failed_open 3 "${f0:-0}"
	ok $? "$1: node3's module failed open without strobes"
	# Past the failover period, so that node3 has decided.
	sleep $((CL_FAILOVER * CL_SLICE_US / 500000 + 2))
	if [ "$1" = quorum ]; then
		s=$(status_of 3 nodes)
		[ "$s" = "1 reporting of 3 heard (quorum 2)" ]
		ok $? "$1: node3's bcsctl status says why it waits: $s"
	fi
	cut_job=$(on 2 bcsctl job create)
	rc=$?
	case $cut_job in *[!0-9]*|"") rc=1 ;; esac
	ok $rc "$1: job $cut_job created through node1 during the cut"
	if [ "$1" = takeover ]; then
		wait_until 30 eval '[ "$(status_of 3 master)" = "3 (this node)" ]'
		ok $? "$1: node3 masters its side of the cut"
		on 3 bcsctl job create --id "$cut_job" > /dev/null
		ok $? "$1: node3 makes a job $cut_job of its own"
		sleeper=$(on 2 "bcsctl run --job $cut_job -- sleep 600 \
			< /dev/null > /dev/null 2>&1 & echo \$!")
		wait_until 20 eval '[ "$(kernel_tasks 2 "$cut_job")" = 1 ]'
		ok $? "$1: a task of node2 ($sleeper) runs in node1's job $cut_job"
	fi
	node3_epoch=$(status_of 3 epoch)
	on 3 'ip link set eth0 up'
	ok $? "$1: node3 back on the network"
}

# --- default quorum: the cut-off standby waits ---
on 3 'start_bcsd --role=both --priority=100' > /dev/null
ok $? "node3: bcsd started as a standby"
wait_until 30 followed 3 1 0
ok $? "node3: follows node1"
ep=$(status_of 1 epoch)
cut_during quorum
[ "$node3_epoch" = "$ep" ] && [ "$(stat_of 3 takeovers)" = 0 ] &&
	on 3 'grep -q "not taking over" "$BCS_OUT/bcsd.log"'
ok $? "quorum: node3, hearing 1 of 3 nodes, did not take over (epoch $node3_epoch)"
wait_until 60 followed 3 1 $((ep - 1))
ok $? "quorum: node3 follows node1 again once the cut heals"
wait_until 30 agree 1
rc=$?
show_jobs 1
ok $rc "quorum: every node holds the jobs of node1's map"
on 3 'BCS_CONTROL_SOCKET= bcsctl job list' | ids | grep -qw "$cut_job"
ok $? "quorum: job $cut_job, made during the cut, reached node3"
coherent partition1

# --- quorum 1: the cut-off standby takes over; the senior map wins ---
on 3 'kill_bcsd TERM && start_bcsd --role=both --priority=100 --quorum=1' \
	> /dev/null
ok $? "node3: bcsd restarted with quorum 1"
wait_until 30 followed 3 1 $((ep - 1))
ok $? "node3: follows node1"
cut_during takeover
[ "$node3_epoch" -gt "$ep" ]
ok $? "takeover: node3 took over for itself ($ep -> $node3_epoch)"
for n in 1 2; do
	wait_until 60 followed "$n" 3 "$ep"
	ok $? "takeover: node$n follows node3 once the cut heals"
done
case $(stat_of 1 active_master) in False|0) rc=0 ;; *) rc=1 ;; esac
ok $rc "takeover: node1 stepped down"
wait_until 30 agree 3
rc=$?
show_jobs 3
ok $rc "takeover: every node holds the jobs of node3's map, no more, no fewer"
diag "job $cut_job is node3's: node1's of that id is gone (cluster-guide.rst: network partition)"
[ "$(kernel_tasks 2 "$cut_job")" = 0 ] && [ "$(stat_of 2 jobs_superseded)" = 1 ] &&
	on 2 "alive $sleeper"
ok $? "takeover: node2 destroyed node1's job $cut_job for node3's (superseded $(stat_of 2 jobs_superseded)); its task runs on, detached"
on 2 "kill $sleeper" > /dev/null
for j in $j1 $j2; do
	on 3 bcsctl job list | ids | grep -qw "$j"
	ok $? "takeover: job $j, made before the cut, is in node3's map"
done
coherent partition2
analyse tasks "$SHARE/data/partition2" --pids "$burners"
tap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Master failover: node1 is the master (priority 200), node3 a standby
# (priority 100).  SIGKILL node1's bcsd: node1's module fails open at once,
# the others when their watchdog expires (failover_slices is larger than
# watchdog_slices); then node3 takes over with a higher epoch and every
# node follows it with the same jobs and tasks.  node1's bcsd, restarted,
# follows node3 rather than taking over.  Then node3's bcsd is killed in
# turn and node1 takes over a second time, with an epoch higher than
# node3's.  With every master gone, all kernels fail open and every task
# runs.  Last, node1's bcsd comes back as the only master, knowing nothing:
# it learns the nodes' epoch and jobs from their reports and keeps them.

# shellcheck source=selftests/cluster/lib.sh
. "$CL_DIR/lib.sh"

read -r j1 j2 < "$SHARE/jobs" || { ok 1 "jobs of the coherence test"; tap_end; }
burners=$(cat "$SHARE/pids")
ep0=$(status_of 2 epoch)
declare -A f0
on_each "$SHARE/out/failover-0" 'kstate failopens'
for n in $CL_NODES; do
	f0[$n]=$(cat "$SHARE/out/failover-0/$n")
done

on 1 'kill_bcsd KILL'
ok $? "node1: master bcsd killed with SIGKILL"
st=$(on 1 'kstate mode; kstate failopens')
[ "$(echo "$st" | head -n 1)" = off ] &&
	[ "$(echo "$st" | tail -n 1)" -gt "${f0[1]}" ]
ok $? "node1: bcs.ko failed open at once ($(echo "$st" | paste -sd ' '))"

wait_until 60 followed 3 3
ok $? "node3: the standby took over"
wait_until 30 followed 2 3
rc=$?
ok $rc "node2: follows node3 with a higher epoch ($ep0 -> $(status_of 2 epoch))"
for n in 2 3; do
	[ "$(kstate $n failopens)" -gt "${f0[$n]}" ]
	ok $? "node$n: failed open during the gap (watchdog $CL_WATCHDOG < failover $CL_FAILOVER slices)"
done

has_job()	# has_job SNAPSHOT NODE JOB: JOB in NODE's job list of SNAPSHOT
{
	"$PY" -c 'import json,sys; sys.exit(not any(j["id"] == int(sys.argv[2])
		for j in json.load(open(sys.argv[1]))))' \
		"$SHARE/data/$1/node$2.jobs.json" "$3"
}

on 1 'start_bcsd --role=both --priority=200' > /dev/null
ok $? "node1: bcsd restarted as a standby"
wait_until 30 followed 1 3
ok $? "node1: follows node3, does not take over"
from=$(slice_now 3)
sleep 4
snapshot_all failover
for n in $CL_NODES; do
	for j in $j1 $j2; do
		has_job failover "$n" "$j"
		ok $? "node$n: job $j still exists"
	done
done
analyse tasks "$SHARE/data/failover" --pids "$burners"
analyse coherence --nodes "$nr_nodes" "$SHARE/data/failover" --from-slice "${from:-0}" --min 10
t=$(stat_of 1 takeovers)
[ "$t" = 0 ]
ok $? "node1: restarted bcsd made no takeover ($t)"

# A second takeover: node3 goes, node1 (the standby now) takes over.
ep1=$(status_of 2 epoch)
on 3 'kill_bcsd KILL'
ok $? "node3: master bcsd killed"
wait_until 60 followed 1 1 "$ep1"
ok $? "node1: took over a second time"
wait_until 30 followed 2 1 "$ep1"
ok $? "node2: follows node1 with a higher epoch ($ep1 -> $(status_of 2 epoch))"
from=$(slice_now 2)
sleep 4
snapshot_all failover2
for j in $j1 $j2; do
	has_job failover2 2 "$j"
	ok $? "node2: job $j still exists under the second master"
done
# node3 runs failed open now: coherence over the two nodes that follow.
mkdir -p "$SHARE/data/failover2-12"
cp "$SHARE"/data/failover2/node[12].* "$SHARE/data/failover2-12/"
analyse coherence --nodes 2 "$SHARE/data/failover2-12" --from-slice "${from:-0}" --min 10
t=$(stat_of 1 takeovers)
[ "$t" = 1 ]
ok $? "node1: one takeover counted ($t)"

# No master at all.
on 1 'kill_bcsd KILL'
ok $? "node1: master bcsd killed"
open_all()
{
	local n s
	for n in $CL_NODES; do
		s=$(on "$n" 'cat /sys/kernel/debug/bcs/state')
		echo "$s" | grep -Eq '^(mode: off|failopen: 1)$' || return 1
		echo "$s" | grep -q '^parked: 0$' || return 1
	done
}
wait_until 30 open_all
ok $? "with no master left every module is failed open, nothing parked"
snapshot_all noMaster1
sleep 3
snapshot_all noMaster2
analyse running "$SHARE/data/noMaster1" "$SHARE/data/noMaster2" \
	--pids "$burners"

# The only master comes back, having forgotten everything: from the
# nodes' reports it learns the epoch they follow, takes a higher one, and
# keeps the jobs they hold (an empty map would destroy them everywhere).
ep2=$(status_of 2 epoch)
on 1 'start_bcsd --role=both --priority=200' > /dev/null
ok $? "node1: bcsd restarted, with no other master alive"
wait_until 60 followed 2 1 "$ep2"
ok $? "node2: follows the restarted node1 with a higher epoch ($ep2 -> $(status_of 2 epoch))"
from=$(slice_now 2)
sleep 4
snapshot_all restarted
for n in 1 2; do
	for j in $j1 $j2; do
		"$PY" -c 'import json,sys; sys.exit(not any(j["id"] == int(sys.argv[2])
			and j["tasks"] >= 1 for j in json.load(open(sys.argv[1]))))' \
			"$SHARE/data/restarted/node$n.jobs.json" "$j"
		ok $? "node$n: job $j kept, with its task, under the restarted master"
	done
done
mkdir -p "$SHARE/data/restarted-12"
cp "$SHARE"/data/restarted/node[12].* "$SHARE/data/restarted-12/"
analyse coherence --nodes 2 "$SHARE/data/restarted-12" --from-slice "${from:-0}" --min 10
tap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A network partition and its heal.  node3's bcsd comes back as a standby
# (after the failover test node1 is the master), then node3 is cut off
# the network: it hears no strobe and takes over for itself with a higher
# epoch, while node1 goes on being the master of node2, and a job is
# created on that side.  When the cut heals there are two masters; the
# junior (node1, lower epoch) steps down on hearing the senior, and every
# node must end up following node3 and hold exactly the jobs of node3's
# map, with the same row running everywhere in every slice.  (Each
# master numbers its own map versions from the one they last shared, so
# a node must not take the senior's map for one it already applied.)

. "$CL_DIR/lib.sh"

read -r j1 j2 < "$SHARE/jobs" || { ok 1 "jobs of the coherence test"; tap_end; }
burners=$(cat "$SHARE/pids")

on 3 'start_bcsd --role=both --priority=100' > /dev/null
ok $? "node3: bcsd started as a standby"
wait_until 30 followed 3 1 0
ok $? "node3: follows node1"
ep=$(status_of 3 epoch)

on 3 'ip link set eth0 down'
ok $? "node3: cut off the network"
wait_until 60 followed 3 3 "$ep"
ok $? "node3: took over for itself ($ep -> $(status_of 3 epoch))"
followed 2 1 $((ep - 1)) && [ "$(status_of 2 epoch)" = "$ep" ]
ok $? "node2: still follows node1 at epoch $ep"
j3=$(on 2 bcsctl job create)
rc=$?
case $j3 in *[!0-9]*|"") rc=1 ;; esac
ok $rc "node2: job $j3 created through node1 during the cut"

on 3 'ip link set eth0 up'
ok $? "node3: back on the network"
ep3=$(status_of 3 epoch)
for n in 1 2; do
	wait_until 60 followed "$n" 3 "$ep"
	ok $? "node$n: follows node3 (epoch $ep3) once the cut heals"
done
[ "$(stat_of 1 active_master)" = False ] || [ "$(stat_of 1 active_master)" = 0 ]
ok $? "node1: stepped down"

# Every node holds in bcs.ko exactly the jobs of the master's map.
ids()	# ids: the first column of a table, header dropped, sorted
{
	awk 'NR > 1 { print $1 }' | sort -n | paste -sd ' '
}
agree()
{
	local n want got
	want=$(on 3 bcsctl job list | ids)
	[ -n "$want" ] || return 1
	for n in $CL_NODES; do
		got=$(on "$n" 'BCS_CONTROL_SOCKET= bcsctl job list' | ids)
		[ "$got" = "$want" ] || return 1
	done
}
wait_until 30 agree
rc=$?
diag "node3's map: $(on 3 bcsctl job list | ids)"
for n in $CL_NODES; do
	diag "node$n's bcs.ko: $(on "$n" 'BCS_CONTROL_SOCKET= bcsctl job list' | ids)"
done
ok $rc "every node holds the jobs of node3's map, no more, no fewer"
diag "job $j3, made on node1's side during the cut, is not in node3's map (cluster-guide.rst: network partition)"
for j in $j1 $j2; do
	on 3 bcsctl job list | awk -v j="$j" '$1 == j { f = 1 } END { exit !f }'
	ok $? "job $j, made before the cut, is in node3's map"
done

from=$(slice_now 3)
sleep 4
snapshot_all partition
analyse coherence --nodes "$nr_nodes" "$SHARE/data/partition" \
	--from-slice "${from:-0}" --min 10
analyse tasks "$SHARE/data/partition" --pids "$burners"
tap_end

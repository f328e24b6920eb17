#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Coherence: two cluster jobs, created through the master from two other
# nodes, each with one CPU-bound task on every node.  Every node must run
# the same row in every slice, park the other gang at each switch, and
# see both jobs on three nodes with three tasks.  (The same at 1 ms
# slices with plans: test-plans.sh.)

# shellcheck disable=SC2154 # j1, j2, burners: set by two_jobs, start_burners
. "$CL_DIR/lib.sh"

two_jobs "job create on node2 and node3 goes through the master"
echo "$j1 $j2" > "$SHARE/jobs"

start_burners coherence "$j1" "$j2"

# The master learns the tasks from the nodes' reports, and every node the
# tasks of every other node (PER_NODE, node:tasks).
listed()
{
	local n=$1 out
	out=$(on "$n" bcsctl job list) || return 1
	for j in $j1 $j2; do
		echo "$out" | awk -v j="$j" '$1 == j && $4 == 1 && $8 == 3 &&
			$9 == 3 && $10 == "1:1,2:1,3:1" { f = 1 }
			END { exit !f }' || return 1
	done
}
for n in $CL_NODES; do
	( wait_until 60 listed "$n"; echo $? > "$SHARE/out/listed.$n" ) &
done
wait
for n in $CL_NODES; do
	rc=$(cat "$SHARE/out/listed.$n")
	[ "$rc" = 0 ] || on "$n" bcsctl job list | sed 's/^/# /'
	ok "$rc" "node$n: bcsctl job list shows jobs $j1 and $j2 with nodes=3 tasks=3, one task on each node"
done

from=$(slice_now 1)
sleep 6
snapshot_all coherence
analyse coherence --nodes "$nr_nodes" "$SHARE/data/coherence" --from-slice "${from:-0}" \
	--jobs "$j1,$j2" --min 20 --skew-out "$SHARE/skew.json" \
	--lead-us "$CL_LEAD_US"
analyse tasks "$SHARE/data/coherence" --pids "$burners"
for n in $CL_NODES; do
	diag "node$n chrony: $(grep -E '^(System time|Last offset|RMS offset)' \
		"$SHARE/data/coherence/node$n.tracking.txt" | tr -s ' ' | paste -sd ';')"
done

tap_end

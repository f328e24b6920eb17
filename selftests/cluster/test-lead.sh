#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A lead longer than the slice: the master sends each strobe 2.5 slices
# before its deadline, so bcs.ko on every node holds the strobes of the
# coming slices until their deadlines.  Every bcsd is started afresh
# (node1 the master), with two new jobs and a task of each on every node:
# strobes must wait in every kernel, the other nodes follow them rather
# than take them as stale, and every node run the same row in every slice.

# shellcheck disable=SC2154 # j1, j2, burners: set by two_jobs, start_burners
. "$CL_DIR/lib.sh"

lead=$((CL_SLICE_US * 5 / 2))
for n in $CL_NODES; do
	on "$n" stop_burners > /dev/null
done
restart_bcsd --lead_us="$lead"

two_jobs "two new jobs"
start_burners lead "$j1" "$j2"

# Strobes wait in bcs.ko: two or three at any time.
waiting()
{
	local q
	q=$(kstate "$1" queued)
	[ "${q:-0}" -ge 2 ]
}
for n in $CL_NODES; do
	wait_until 20 waiting "$n"
	ok $? "node$n: strobes wait in bcs.ko for their deadlines (queued: $(kstate "$n" queued))"
done

# The master's slice runs 2.5 slices ahead of the switches, and the nodes'
# snapshots are not taken at one instant: a longer window keeps those
# ragged edges a small part of it.
from=$(slice_now 1)
sleep 10
snapshot_all lead
# A node that took strobes due more than a slice ahead as stale would
# reject them all; one delayed past stale_slices on a busy host may be.
for n in $CL_NODES; do
	[ "$n" = 1 ] && continue	# the master: its own strobes
	s=$(stat_of "$n" rejected.stale)
	r=$(stat_of "$n" strobes_rx)
	[ "$r" -gt 0 ] 2>/dev/null && [ "$s" -ge 0 ] 2>/dev/null &&
		[ $((10 * s)) -lt "$r" ]
	ok $? "node$n: strobes followed, hardly any taken as stale ($r followed, $s stale)"
done
analyse coherence --nodes "$nr_nodes" "$SHARE/data/lead" \
	--from-slice "${from:-0}" --jobs "$j1,$j2" --min 20 --lead-us "$lead"
analyse tasks "$SHARE/data/lead" --pids "$burners"
tap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Plans at 1 ms slices: bcsd restarted on every node with plan_slices 20
# (the master sends a strobe every 20 slices naming the next 40, which
# bcs.ko's BCS_STROBE_PLAN switches off its own clock), two jobs made
# then, a CPU-bound task of each on every node: every slice that every
# node ran must be the same row on every node, in enough slices that ran
# a gang.  Last of the default tests: restarting every bcsd at once may
# lose the jobs the tests before made (nothing reports them to the
# restarted master in time), so it makes its own.

# shellcheck disable=SC2154 # j1, j2: set by two_jobs
. "$CL_DIR/lib.sh"

# The watchdog, staleness and failover silences in slices of 1 ms: 2 s,
# as long as at the usual slices, so that the loaded guests' late timers
# make no standby take over.
restart_bcsd --slice_us=1000 --lead_us=2500 --plan_slices=20 \
	--watchdog_slices=2000 --stale_slices=2000 --failover_slices=2000
two_jobs "job create with plans at 1 ms"
start_burners plans "$j1" "$j2"
sleep 3
from=$(slice_now 1)
sleep 3
snapshot_all plans 2000
# At 1 ms the guests' timers run late by up to tens of ms under load: a
# node passes slices over (flagged overtaken, left out), so no share of
# switches is required, only that every slice all nodes ran was the same
# row, in enough slices that ran a gang on every node.
analyse coherence --nodes "$nr_nodes" "$SHARE/data/plans" \
	--from-slice "${from:-0}" --min 100 --min-share 0 --min-compared 50 \
	--lead-us 2500
restart_bcsd
tap_end

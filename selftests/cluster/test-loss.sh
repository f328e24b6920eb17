#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet loss: netem drops 5% of what the master (node1) sends.  Lost
# strobes must be counted (missed slices in bcs.ko, fewer strobes received
# than sent), and a node must never run a wrong row except in a slice
# whose strobe it did not get: every strobe that arrives puts it back on
# the master's row.

. "$CL_DIR/lib.sh"

secs=${CL_LOSS_SECONDS:-20}
out=$(on 1 'load_netem && tc qdisc add dev eth0 root netem loss 5% &&
	tc qdisc show dev eth0')
rc=$?
diag "$out"
ok $rc "node1: netem 5% loss on eth0"
[ $rc = 0 ] || tap_end

q='bcsd_stats > $SHARE/out/loss-$L.$NODE.json; kstate missed'
on_each "$SHARE/out/loss-0" "L=0; $q"
from=$(slice_now 1)
sleep "$secs"
to=$(slice_now 1)
on 1 'tc qdisc del dev eth0 root'
ok $? "node1: netem removed"
on_each "$SHARE/out/loss-1" "L=1; $q"
snapshot_all loss

# Each node against itself (the guests answer at different moments): the
# slices the master's strobes advanced by, against the strobes received.
for n in $CL_NODES; do
	[ "$n" = 1 ] && continue
	s0=$(json "$SHARE/out/loss-0.$n.json" 'v["slice"]')
	s1=$(json "$SHARE/out/loss-1.$n.json" 'v["slice"]')
	rx0=$(json "$SHARE/out/loss-0.$n.json" 'v["strobes_rx"]')
	rx1=$(json "$SHARE/out/loss-1.$n.json" 'v["strobes_rx"]')
	m0=$(cat "$SHARE/out/loss-0/$n")
	m1=$(cat "$SHARE/out/loss-1/$n")
	diag "node$n: slices $s0 -> $s1, strobes received $((rx1 - rx0)); bcs.ko missed $((m1 - m0))"
	[ $((rx1 - rx0)) -lt $((s1 - s0)) ] && [ "$m1" -gt "$m0" ]
	ok $? "node$n: lost strobes show (fewer strobes than slices, missed slices counted)"
done
analyse loss "$SHARE/data/loss" --master 1 --from-slice "$from" \
	--to-slice "$to"
tap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet loss: netem drops what the master (node1) sends.  The master sends
# every strobe twice (strobe_copies, default 2), and each node hands bcs.ko
# with every strobe the row of the next slice (predict, default on), which
# switches if that slice's strobe is lost.  So:
#  - at 5% loss a node loses a strobe only when both copies are lost, and
#    must never run a wrong row for more than one slice in a row;
#  - at 30% loss strobes are lost for sure: each must show (fewer strobes
#    followed than slices; bcs.ko counts predicted or missed slices), and a
#    node must never run a wrong row in a slice it switched: every strobe
#    that arrives, and every prediction, names the master's row;
#  - at 30% loss, while node3 makes, moves and destroys a job, a node that
#    lost a map change runs no gang until the map comes (its strobes name
#    a map it does not have), so that no node ever runs a gang the master's
#    map does not put in that slice's row for more than one slice.
# Two jobs of the test's own make rows alternate, so that a slice run in
# the previous slice's row is a wrong one.

# shellcheck disable=SC2154 # j1 and j2: set by two_jobs (lib.sh)
. "$CL_DIR/lib.sh"

secs=${CL_LOSS_SECONDS:-20}
q='bcsd_stats > $SHARE/out/loss-$L.$NODE.json; echo $(kstate missed) $(kstate predicted)'

# netem PCT: drop PCT% of what node1 sends (0: none).
netem()
{
	local out rc
	if [ "$1" = 0 ]; then
		on 1 'tc qdisc del dev eth0 root'
		ok $? "node1: netem removed"
		return
	fi
	out=$(on 1 "load_netem && tc qdisc replace dev eth0 root netem loss $1% &&
		tc qdisc show dev eth0")
	rc=$?
	diag "$out"
	ok $rc "node1: netem $1% loss on eth0"
	[ $rc = 0 ] || tap_end
}

# delta N KEY A B: how much counter KEY of node N grew from phase A to B.
delta()
{
	echo $(($(json "$SHARE/out/loss-$4.$1.json" "v[\"$2\"]") -
		$(json "$SHARE/out/loss-$3.$1.json" "v[\"$2\"]")))
}

two_jobs "two jobs for rows to alternate"

netem 5
on_each "$SHARE/out/loss-0" "L=0; $q"
from5=$(slice_now 1)
sleep "$secs"
to5=$(slice_now 1)
on_each "$SHARE/out/loss-1" "L=1; $q"

netem 30
from30=$(slice_now 1)
# The map changes under loss: a job made, moved twice, destroyed, twice.
on 3 -t 90 'for i in 1 2; do
	j=$(timeout 15 bcsctl job create) || continue
	sleep 1; timeout 15 bcsctl job row "$j" 0
	sleep 1; timeout 15 bcsctl job row "$j" 5
	sleep 1; timeout 15 bcsctl job destroy "$j"; sleep 1
done' > "$SHARE/out/loss-churn.txt" 2>&1 &
churn=$!
sleep $((secs / 2))
wait "$churn"
diag "map changes at 30% loss: $(tr '\n' ' ' < "$SHARE/out/loss-churn.txt")"
to30=$(slice_now 1)
netem 0
on_each "$SHARE/out/loss-2" "L=2; $q"
snapshot_all loss
diag "windows: 5% from slice $from5 to $to5, 30% from slice $from30 to $to30"

for n in $CL_NODES; do
	[ "$n" = 1 ] && continue
	copies=$(delta "$n" strobe_copies 0 1)
	rx=$(delta "$n" strobes_rx 0 1)
	diag "node$n at 5%: $rx strobes followed, $copies further copies dropped"
	[ "$copies" -gt 0 ]
	ok $? "node$n: second copies of strobes arrive and are dropped"

	slices=$(delta "$n" slice 1 2)
	rx=$(delta "$n" strobes_rx 1 2)
	read -r m1 p1 < "$SHARE/out/loss-1/$n"
	read -r m2 p2 < "$SHARE/out/loss-2/$n"
	diag "node$n at 30%: slices advanced $slices, strobes followed $rx; bcs.ko missed $((m2 - m1)), predicted $((p2 - p1))"
	[ "$rx" -lt "$slices" ] && [ $((m2 + p2)) -gt $((m1 + p1)) ]
	ok $? "node$n: lost strobes show (fewer strobes than slices, predicted or missed slices counted)"
done
analyse loss "$SHARE/data/loss" --master 1 --from-slice "$from5" \
	--to-slice "$to5" --min-gaps 0 --max-run 1
analyse loss "$SHARE/data/loss" --master 1 --from-slice "$from30" \
	--to-slice "$to30" --maps --min-maps 4 --max-map-run 1
on 2 "bcsctl job destroy $j1 && bcsctl job destroy $j2"
ok $? "jobs $j1 and $j2 destroyed"
tap_end

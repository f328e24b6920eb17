#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Flood: node2 sends forged strobes (copies of a captured one with random
# tags, daemon/tests/bcsp_flood: batches of 64 per sendmmsg()) to the group
# as fast as it can for CL_FLOOD_SECONDS (10) seconds, while two jobs
# alternate rows.  A forged datagram costs bcsd one HMAC at most, and its
# rejection no log line of its own: every node counts them as bad MAC and
# says so at most once every 10 s; the schedule stays coherent (every
# node runs the same row in every slice it switched, and switched in most
# slices) and no node fails open.

# shellcheck disable=SC2154 # j1 and j2: set by two_jobs (lib.sh)
. "$CL_DIR/lib.sh"

secs=${CL_FLOOD_SECONDS:-10}
q='bcsd_stats > $SHARE/out/flood-$L.$NODE.json; echo $(kstate failopens) $(grep -c "rejected [0-9]* datagram(s)" $BCS_OUT/bcsd.log)'

two_jobs "two jobs for rows to alternate"
on_each "$SHARE/out/flood-0" "L=0; $q"
from=$(slice_now 1)

inject="\$PY \"\$CL_DIR/bcsp-inject.py\" --group $CL_GROUP --port $CL_PORT \
	--ifaddr $CL_NET.2"
out=$(on 2 -t $((secs + 60)) "cd \$STATE && $inject capture flood.bin \
	--type 1 --sender 1 && \$BCS_SRC/daemon/tests/bcsp_flood $CL_GROUP \
	$CL_PORT $CL_NET.2 flood.bin $secs")
diag "$out"
echo "$out" | grep -q '^sent [0-9]* flood datagrams'
ok $? "node2 flooded the group with forged strobes for $secs s"
sent=$(echo "$out" | sed -n 's/^sent \([0-9]*\) flood.*/\1/p')

to=$(slice_now 1)
on_each "$SHARE/out/flood-1" "L=1; $q"
snapshot_all flood

for n in $CL_NODES; do
	b0=$(json "$SHARE/out/flood-0.$n.json" 'v["rejected"]["bad-mac"]')
	b1=$(json "$SHARE/out/flood-1.$n.json" 'v["rejected"]["bad-mac"]')
	read -r f0 l0 < "$SHARE/out/flood-0/$n"
	read -r f1 l1 < "$SHARE/out/flood-1/$n"
	fo=$(sed -n 's/^failopen: //p' "$SHARE/data/flood/node$n.state.txt")
	diag "node$n: $((b1 - b0)) of ${sent:-?} forged datagrams rejected as bad MAC, $((l1 - l0)) log line(s) on them"
	[ $((b1 - b0)) -ge 100 ] 2> /dev/null
	ok $? "node$n: bcsd counted the forged datagrams as bad MAC"
	[ $((l1 - l0)) -ge 1 ] && [ $((l1 - l0)) -le $((secs / 10 + 2)) ]
	ok $? "node$n: and said so at most once every 10 s ($((l1 - l0)) lines)"
	[ "$f1" = "$f0" ] && [ "$fo" = 0 ]
	ok $? "node$n: no fail-open during the flood (failopens $f0 -> $f1, failopen $fo)"
done
diag "slices $from to $to"
analyse coherence --nodes "$nr_nodes" "$SHARE/data/flood" \
	--from-slice "${from:-0}" --min $((secs * 5))
on 2 "bcsctl job destroy $j1 && bcsctl job destroy $j2"
ok $? "jobs $j1 and $j2 destroyed"
tap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Authentication: forged, replayed, truncated and wrong-version datagrams
# sent to the group from node2 are counted by reason on every node and
# change nothing: the schedule stays coherent and no node fails open.

# shellcheck source=selftests/cluster/lib.sh
. "$CL_DIR/lib.sh"

count=6
kinds="forged replay truncated version"
b=$SHARE/out/auth-before
a=$SHARE/out/auth-after
on_each "$b" 'bcsd_stats > $SHARE/out/auth-before.$NODE.json; kstate failopens'

# The window checked below begins before the attack: a bad datagram taken
# for a strobe would show as an incoherent slice.
from=$(slice_now 1)

# A real strobe of the master, to replay and to spoil, then the bad ones.
out=$(on 2 "cd \$STATE && \$PY \"\$CL_DIR/bcsp-inject.py\" --group $CL_GROUP \
	--port $CL_PORT --ifaddr $CL_NET.2 capture strobe.bin --type 1 \
	--sender 1 && for k in $kinds; do \$PY \"\$CL_DIR/bcsp-inject.py\" \
	--group $CL_GROUP --port $CL_PORT --ifaddr $CL_NET.2 send \$k \
	strobe.bin $count || exit 1; done")
diag "$out"
echo "$out" | grep -q '^captured type 1 from 1 '
ok $? "captured a strobe of the master on node2"
for k in $kinds; do
	echo "$out" | grep -q "^sent $count $k datagrams"
	ok $? "sent $count $k datagrams to the group"
done

# Reason counters: each must have grown by what was sent.  node1 sent the
# captured strobe: its own datagrams skip the replay window.
counted()
{
	on_each "$a" 'bcsd_stats > $SHARE/out/auth-after.$NODE.json; kstate failopens' &&
	for n in $CL_NODES; do
		[ "$(json "$SHARE/out/auth-after.$n.json" 'v["rejected"]["bad-mac"]')" -ge $count ] ||
			return 1
	done
}
wait_until 20 counted
for n in $CL_NODES; do
	for r in bad-mac truncated bad-version replay; do
		[ "$r" = replay ] && [ "$n" = 1 ] && continue
		v0=$(json "$SHARE/out/auth-before.$n.json" "v['rejected']['$r']")
		v1=$(json "$SHARE/out/auth-after.$n.json" "v['rejected']['$r']")
		[ "$v1" -ge $((v0 + count)) ] 2> /dev/null
		ok $? "node$n: bcsd counted $count datagrams as $r ($v0 -> $v1)"
	done
done

sleep 4
snapshot_all auth
for n in $CL_NODES; do
	f0=$(cat "$b/$n")
	f1=$(sed -n 's/^failopens: //p' "$SHARE/data/auth/node$n.state.txt")
	fo=$(sed -n 's/^failopen: //p' "$SHARE/data/auth/node$n.state.txt")
	[ "$f1" = "$f0" ] && [ "$fo" = 0 ]
	ok $? "node$n: no fail-open (failopens $f0 -> $f1, failopen $fo)"
done
analyse coherence --nodes "$nr_nodes" "$SHARE/data/auth" --from-slice "${from:-0}" --min 10
tap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The clock offsets of the tree of daemons (Documentation/tree.rst,
# "Clock offsets"), with bcsd-sim as test_sim.sh runs it: a master (role
# both, node 1) and two nodes (2, 3), each in a network namespace of its
# own, joined by a bridge, with a nodes file, strobe_transport tree and
# tree_fanout 1, so the tree is the chain 1 - 2 - 3 and node 3's offset
# is composed over two links.  Every daemon with a child probes it and
# sends its estimates to the master; the checks: the master shows an
# offset with a bound for every node, and since the namespaces share one
# clock, every node's interval, offset +- bound, holds 0; the probes went
# as the tree says, and no warning was given.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_probe
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-probe-$$
NET=10.79.0

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

# Namespace $NS-br holds the bridge; daemon N lives in $NS-N, address
# $NET.N, its veth's other end on the bridge.
sim_setup 1 2 3

printf '1 10.79.0.1\n2 10.79.0.2\n3 10.79.0.3\n' > "$TMP/nodes"
tree=(--nodes_file="$TMP/nodes" --strobe_transport=tree --tree_fanout=1)
sim_start 1 both --priority=200 --failover_slices=2 "${tree[@]}"
sim_start 2 node "${tree[@]}"
sim_start 3 node "${tree[@]}"
until_stat 1 active_master -eq 1 10
check $? "node1 takes over as master"

# offsets N: the master's offsets of the last snap of N, one line per
# node, "node parent depth offset_ns bound_ns" ("-" for null); nothing
# if there are none.
offsets()
{
	python3 -c 'import json, sys
o = json.load(open(sys.argv[1])).get("offsets") or []
n = lambda v: "-" if v is None else str(v)
for e in o:
    print(" ".join(n(e.get(k)) for k in
                   ("node", "parent", "depth", "offset_ns", "bound_ns")))' \
		"$TMP/stats$1.json" 2>/dev/null
}

# A few report periods: each link needs a probe and a reply, and then
# its parent's next offsets.
known=0
end=$((SECONDS + 15))
while [ "$SECONDS" -lt "$end" ]; do
	snap 1
	known=$(offsets 1 | awk '$5 != "-"' | wc -l)
	[ "$known" = 3 ] && break
	sleep 0.2
done
offsets 1 | sed 's/^/# offsets: /'
[ "$known" = 3 ]
check $? "the master knows every node's clock offset, with a bound ($known of 3)"

out=$(offsets 1)
echo "$out" | awk '$1 == 1 && $2 == "-" && $3 == 0 && $4 == 0 && $5 == 0 { r++ }
	$1 == 2 && $2 == 1 && $3 == 1 { a++ }
	$1 == 3 && $2 == 2 && $3 == 2 { b++ }
	END { exit !(r == 1 && a == 1 && b == 1) }'
check $? "the offsets follow the chain 1 - 2 - 3 from the master, itself 0 +- 0"

# One clock: the true offset of every node is 0, within every bound.
echo "$out" | awk '$5 == "-" { bad++; next }
	{ o = $4 < 0 ? -$4 : $4; if (o > $5) bad++ }
	END { exit bad > 0 }'
check $? "every node's interval, offset +- bound, holds 0 (one clock)"

# Node 2 probes node 3 and answers node 1; node 3, a leaf, probes none.
snap 2
snap 3
echo "# node2: $(val 2 probes_tx) probes, $(val 2 probe_replies) replies, $(val 2 probes_answered) answered, $(val 2 offsets_tx) offsets sent"
[ "$(val 2 probes_tx)" -ge 1 ] && [ "$(val 2 probe_replies)" -ge 1 ] &&
	[ "$(val 2 probes_answered)" -ge 1 ] && [ "$(val 2 offsets_tx)" -ge 1 ]
check $? "node2 probes its child, answers its parent, sends the master its child's offset"
[ "$(val 3 probes_tx)" = 0 ] && [ "$(val 3 offsets_tx)" = 0 ] &&
	[ "$(val 3 probes_answered)" -ge 1 ]
check $? "node3, a leaf, answers its parent and probes no one"
[ "$(val 1 probe_replies)" -ge 1 ] && [ "$(val 1 offsets_rx)" -ge 2 ] &&
	[ "$(val 1 skew_warnings)" = 0 ] && [ "$(val 1 offsets_unknown)" = 0 ]
check $? "the master took its own link and node2's, and warned of none"
# Only the active master shows offsets.
[ -z "$(offsets 2)" ]
check $? "a node that is not the master shows no offsets"

checks_done test_probe

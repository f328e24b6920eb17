#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A take-over down a tree of daemons (Documentation/tree.rst, "The quorum
# of a standby", "Re-rooting on take-over"), with bcsd-sim as
# test_attach.sh runs it: seven daemons, each in a network namespace of
# its own, a nodes file 1..7, strobe_transport tree and tree_fanout 2, so
# the tree is 1 - (2 - (4 5), 3 - (6 7)).  Node 1 is the master (role
# both, priority 200), node 2 a standby (role both, priority 100), the
# others nodes; two jobs make the master alternate two rows.
#
# 1. The quorum: node2's own link to the master is cut (nft in its
#    namespace drops what node1 sends it).  Its children and node3 still
#    hear the master, so node2 does not take over; it asks a node that
#    hears the master to pass its datagrams on, and its stand-in keeps
#    getting strobes.  node2's tree_reattach_slices is longer than its
#    failover_slices, so that it is the quorum that keeps it from taking
#    over, not an attach made before the silence is long enough.  Then
#    node2 is cut off every node: nobody answers, it is in a minority of
#    the nodes file, and does not take over either; healed, it follows
#    node1 again.
# 2. The take-over: node1's bcsd is killed.  node2 takes over within
#    failover_slices (plus a tick), every daemon re-roots at node2 (parent,
#    depth, children as the k-ary tree from 2 gives them: 2 - (1 - (4 5),
#    3 - (6 7)), nodes 4 and 5 asking node2 while node1 is dead: they
#    asked node1, the old root, then every node in turn until one passed
#    on the new master's datagrams), and for
#    two seconds every one of nodes 2..7 switches every slice, the same
#    row on all of them.
# 3. node1 restarted: it follows node2 (as with multicast, a restarted
#    master listens and follows the live one), becomes node4's and node5's
#    parent again, and they ask nobody.
#
# Needs root (ip netns) and nft for step 1 (skipped without); every wait
# is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_takeover_tree
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-tkt-$$
NET=10.81.0
FAILOVER=10		# slices of 100 ms

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

sim_setup 1 2 3 4 5 6 7

for n in 1 2 3 4 5 6 7; do
	printf '%s %s.%s\n' "$n" "$NET" "$n"
done > "$TMP/nodes"
# matrix row: a row per job, so that the two jobs take turns.
tree=(--nodes_file="$TMP/nodes" --strobe_transport=tree --tree_fanout=2
      --tree_reattach_slices=2 --failover_slices="$FAILOVER" --matrix=row)
start1() { sim_start 1 both --priority=200 "${tree[@]}"; }
start1
until_stat 1 active_master -eq 1 10
check $? "node1 takes over as master"
# node2 asks other nodes only after far longer than the failover silence,
# so that its quorum, not the attach, is what keeps it from taking over.
sim_start 2 both --priority=100 "${tree[@]}" --tree_reattach_slices=40
for n in 3 4 5 6 7; do
	sim_start "$n" node "${tree[@]}"
done

jobs=()
for _ in 1 2; do
	out=$(ctl 1 job create 2>&1)
	jobs+=("$(echo "$out" | grep -Eo '[0-9]+' | head -1)")
done
echo "# jobs: ${jobs[*]}"

# place N: "root parent depth children asking" of daemon N's tree, from
# its stats file ("-": none).
place()
{
	snap "$1" || { echo "? ? ? ? ?"; return; }
	python3 -c 'import json, sys
t = json.load(open(sys.argv[1])).get("tree") or {}
p = lambda v: "-" if v is None else str(v)
print(p(t.get("root")), p(t.get("parent")), p(t.get("depth")),
      ",".join(str(c) for c in t.get("children", [])) or "-",
      p(t.get("asking")))' "$TMP/stats$1.json" 2>/dev/null || echo "? ? ? ? ?"
}

# until_place N WANT SECONDS: wait for place N to print WANT.
until_place()
{
	local end=$((SECONDS + $3)) got=""

	while [ "$SECONDS" -lt "$end" ]; do
		got=$(place "$1")
		# shellcheck disable=SC2053 # $2 is a pattern
		[[ "$got" == $2 ]] && return 0
		sleep 0.2
	done
	echo "# node$1: $got, not $2"
	return 1
}

# strobes N: the strobes node N's stand-in logged so far.
strobes() { wc -l < "$TMP/strobes$1" 2>/dev/null || echo 0; }

until_place 7 "1 3 2 - -" 10
check $? "the tree hangs from node1 (node7 under node3)"
until_place 2 "1 1 1 4,5 -" 10
check $? "node2, the standby, is node1's child with the children 4 and 5"
[ "$(val 2 quorum)" = 4 ]
check $? "node2's quorum is 4, a majority of the nodes file ($(val 2 quorum))"

# --- 1. the standby's own link cut: no take-over -----------------------
if ip netns exec "$NS-2" nft -f - <<EOF 2>/dev/null
table inet bcs_tkt {
	chain input {
		type filter hook input priority 0; policy accept;
		ip saddr $NET.1 drop
	}
}
EOF
then
	s0=$(strobes 2)
	sleep $((FAILOVER * 3 / 10 + 2))
	snap 2
	echo "# node2: takeovers $(val 2 takeovers), quorum_vetoes $(val 2 quorum_vetoes), quorum_replies $(val 2 quorum_replies)"
	[ "$(val 2 active_master)" = 0 ] && [ "$(val 2 takeovers)" = 0 ] &&
		[ "$(val 2 quorum_vetoes)" -ge 1 ]
	check $? "node2, cut off node1 alone, does not take over: the others hear a master"
	grep -q "hears the master: asking it" "$TMP/log2"
	check $? "node2 asks a node that hears the master to pass it on"
	s1=$(strobes 2)
	sleep 1
	s2=$(strobes 2)
	echo "# node2's stand-in: $s0, $s1, then $s2 strobes"
	[ "$s2" -ge $((s1 + 5)) ]
	check $? "node2's stand-in gets strobes through another node"
	snap 1
	[ "$(val 1 active_master)" = 1 ] && [ "$(val 1 takeovers)" = 1 ]
	check $? "node1 stays the master"
	ip netns exec "$NS-2" nft delete table inet bcs_tkt

	# Cut off everyone: no node answers, no quorum, no take-over.
	ip netns exec "$NS-2" nft -f - <<EOF
table inet bcs_tkt {
	chain input {
		type filter hook input priority 0; policy accept;
		meta l4proto udp drop
	}
}
EOF
	sleep $((FAILOVER * 3 / 10 + 2))
	snap 2
	[ "$(val 2 active_master)" = 0 ] && [ "$(val 2 takeovers)" = 0 ] &&
		grep -q "nodes answer (quorum 4): not taking over" "$TMP/log2"
	check $? "node2, cut off every node, does not take over: no quorum"
	ip netns exec "$NS-2" nft delete table inet bcs_tkt
	s1=$(strobes 2)
	sleep 2
	s2=$(strobes 2)
	[ "$s2" -ge $((s1 + 8)) ]
	check $? "node2 follows node1 again once the cut heals ($s1, then $s2 strobes)"
else
	echo "# SKIP: the quorum: nft cannot filter in a namespace here"
fi

# --- 2. the master killed: node2 takes over, the tree re-roots ---------
sleep 1
snap 2
tk0=$(val 2 takeovers)
kill -KILL "$(cat "$TMP/pid1")"
wait "$(cat "$TMP/pid1")" 2>/dev/null
k0=$(date +%s%N)
took=""
for _ in $(seq 100); do
	snap 2
	if [ "$(val 2 active_master)" = 1 ]; then
		took=$(( ($(date +%s%N) - k0) / 1000000 ))
		break
	fi
	sleep 0.05
done
echo "# node2 took over ${took:-never} ms after node1 died (failover_slices $FAILOVER, 100 ms slices)"
[ -n "$took" ] && [ "$took" -le $((FAILOVER * 100 + 2000)) ] &&
	[ "$(val 2 takeovers)" = $((tk0 + 1)) ]
check $? "node2 takes over within failover_slices and a little"
grep -E "taking over|not taking over" "$TMP/log2" | tail -4 | sed 's/^/# node2: /'

until_place 2 "2 - 0 1,3 -" 5
check $? "node2 is the root, with the children 1 and 3"
until_place 3 "2 2 1 6,7 -" 5
check $? "node3 re-roots: parent 2, depth 1, children 6 and 7"
for n in 4 5; do
	# node2 first; past tree_reattach_slices without it, the next.
	until_place "$n" "2 1 2 - [2-7]" 5
	check $? "node$n re-roots under node1, dead: it asks a live node"
done
for n in 6 7; do
	until_place "$n" "2 3 2 - -" 5
	check $? "node$n re-roots: parent 3, depth 2"
done

# Every node switches every slice, the same row on all of them.
sleep 1
t0=$(date +%s%N)
sleep 2
t1=$(date +%s%N)
out=$(python3 - "$t0" "$t1" "$TMP"/strobes{2,3,4,5,6,7} <<'PY'
import sys
t0, t1 = int(sys.argv[1]), int(sys.argv[2])
logs = []
for path in sys.argv[3:]:
    rows = {}
    for line in open(path):
        slice_, row, deadline, arrival = (int(x) for x in line.split())
        if t0 <= deadline < t1:
            rows.setdefault(slice_, set()).add(row)
    logs.append(rows)
every = set().union(*(set(r) for r in logs))
want = set(range(min(every), max(every) + 1)) if every else set()
missing = {i + 2: sorted(want - set(r)) for i, r in enumerate(logs)
           if want - set(r)}
bad = [s for s in sorted(want)
       if len(set().union(*(r.get(s, set()) for r in logs))) != 1]
seen = set().union(*(r[s] for r in logs for s in r))
print(f"{len(want)} slices, missing {missing or 'none'}, {len(bad)} incoherent, rows {sorted(seen)}")
sys.exit(0 if len(want) >= 15 and not missing and not bad and
         seen == {0, 1} else 1)
PY
)
rc=$?
echo "# after the take-over: $out"
check $rc "every node 2..7 switches every slice, each slice one row on all"

# --- 3. node1 restarted follows node2 ----------------------------------
start1
sleep $((FAILOVER / 10 + 2))
snap 1
snap 2
echo "# node1: active_master $(val 1 active_master), epoch $(val 1 epoch); node2: epoch $(val 2 epoch)"
[ "$(val 1 active_master)" = 0 ] && [ "$(val 2 active_master)" = 1 ] &&
	[ "$(val 1 epoch)" = "$(val 2 epoch)" ]
check $? "node1, restarted, follows node2"
until_place 1 "2 2 1 4,5 -" 5
check $? "node1 is node2's child, with the children 4 and 5"
for n in 4 5; do
	until_place "$n" "2 1 2 - -" 5
	check $? "node$n follows through node1 again and asks nobody"
done
s1=$(strobes 4)
sleep 1
s2=$(strobes 4)
[ "$s2" -ge $((s1 + 8)) ]
check $? "node4's stand-in gets every slice's strobe ($s1, then $s2)"

checks_done test_takeover_tree

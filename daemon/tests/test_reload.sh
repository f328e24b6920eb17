#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reloads (SIGHUP) and a key rotation in a cluster of bcsd-sim daemons:
# a master (role both, node 1) and two nodes (2, 3), each in a network
# namespace of its own (netns-lib.sh), each with a configuration file of
# its own that names its keys (not the command line, which would win).
# Two jobs make the master alternate rows 0 and 1.  Then:
#
#  - a reload applies an option that can change live (seq_allowance_ms),
#    keeps one that needs a restart (port) and says so; a file with an
#    error changes nothing; every daemon runs on;
#  - the rotation of Documentation/admin-guide.rst: the new key as
#    key_file_next everywhere, reload; key_file the new key and
#    key_file_old the old one, reload, one daemon after the other, a
#    second apart (the daemons sign with different keys meanwhile);
#    key_file_old removed, reload.  No datagram is refused (bad-mac) all
#    along, the nodes took datagrams signed with their second key, and
#    every slice due across it all that reached a node reached every
#    node, naming the same row everywhere: none lost, none incoherent;
#  - after it, a daemon that goes back to the old key alone is refused,
#    and refuses the others' datagrams;
#  - the master's notifications to a stand-in of systemd ($NOTIFY_SOCKET,
#    $WATCHDOG_USEC): READY=1, watchdog pings, RELOADING=1 then READY=1
#    on SIGHUP, STOPPING=1 on SIGTERM.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_reload
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-reload-$$
NET=10.79.0

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

sim_setup 1 2 3
genkey key2

# conf N LINE...: daemon N's configuration file, made of the LINEs.
conf()
{
	local n=$1

	shift
	printf '%s\n' "$@" > "$TMP/conf$n"
}

# hup N...: SIGHUP to each daemon N; back once each logged its reload
# (or its refusal), at most 5 s each.
hup()
{
	local n before

	for n; do
		before=$(grep -c "reloaded:\|reload: .*nothing changed" "$TMP/log$n")
		kill -HUP "$(cat "$TMP/pid$n")"
		for _ in $(seq 50); do
			[ "$(grep -c "reloaded:\|reload: .*nothing changed" \
				"$TMP/log$n")" -gt "$before" ] && break
			sleep 0.1
		done
	done
}

# alive N...: every daemon N still runs.
alive()
{
	local n

	for n; do
		kill -0 "$(cat "$TMP/pid$n")" 2>/dev/null || return 1
	done
}

# The stand-in of systemd's notification socket, for the master: every
# datagram, one line each ("\n" in them as "|").
python3 - "$TMP/notify" "$TMP/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode().replace("\n", "|") + "\n")
PY
pids+=($!)
for _ in $(seq 50); do
	[ -S "$TMP/notify" ] && break
	sleep 0.1
done

export SPAWN_KEY=0
for n in 1 2 3; do
	conf $n "key_file $TMP/key"
done
NOTIFY_SOCKET=$TMP/notify WATCHDOG_USEC=400000 \
	sim_start 1 both -f "$TMP/conf1" --priority=200 --matrix=row
sim_start 2 node -f "$TMP/conf2"
sim_start 3 node -f "$TMP/conf3"
until_stat 1 active_master -eq 1 10
check $? "node1 takes over as master"
until_stat 2 strobes_forwarded -ge 1 10 && until_stat 3 strobes_forwarded -ge 1 10
check $? "node2 and node3 hand strobes to their stand-ins"
for _ in 1 2; do
	ctl 1 job create > /dev/null 2>&1
done
sleep 1
t0=$(date +%s%N)

# A live option applied, one that needs a restart kept.
for n in 1 2 3; do
	conf $n "key_file $TMP/key" "seq_allowance_ms 20000" "port 5400"
done
hup 1 2 3
ok=0
for n in 1 2 3; do
	grep -q "reload: seq_allowance_ms '10000' -> '20000'" "$TMP/log$n" &&
		grep -q "reload: port '5399' -> '5400' needs a restart: still '5399'" \
			"$TMP/log$n" || ok=1
done
check $ok "a reload applies seq_allowance_ms, keeps port and says it needs a restart"
conf 3 "key_file $TMP/key" "seq_allowance_ms 30000" "bogus 1"
hup 3
grep -q "reload: .*unknown option 'bogus': nothing changed" "$TMP/log3" &&
	! grep -q "seq_allowance_ms '20000' -> '30000'" "$TMP/log3"
check $? "a file with an error changes nothing"
alive 1 2 3
check $? "every daemon runs on after its reloads"

# The rotation.  First: the next key accepted everywhere.
for n in 1 2 3; do
	conf $n "key_file $TMP/key" "key_file_next $TMP/key2"
done
hup 1 2 3
# Second: sign with the new key, the old one still accepted; a daemon
# after the other, so that they sign with different keys meanwhile.
for n in 1 2 3; do
	conf $n "key_file $TMP/key2" "key_file_old $TMP/key"
	hup $n
	sleep 1
done
for n in 2 3; do
	snap $n
	echo "# node$n: $(val $n rx_key2) datagrams taken with its second key"
done
[ "$(val 2 rx_key2)" -gt 0 ] && [ "$(val 3 rx_key2)" -gt 0 ]
check $? "during the rotation, the nodes took datagrams signed with their second key"
# Third: the old key no more.
for n in 1 2 3; do
	conf $n "key_file $TMP/key2"
done
hup 1 2 3
sleep 1
t1=$(date +%s%N)
sleep 1
ok=0
for n in 1 2 3; do
	snap $n
	echo "# node$n: rejected $(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["rejected"])' "$TMP/stats$n.json" 2>/dev/null)"
	[ "$(val $n rejected.bad-mac)" = 0 ] || ok=1
done
check $ok "no datagram refused for its tag across the reloads and the rotation"
grep -q "reloaded: keys from $TMP/key2;" "$TMP/log3"
check $? "node3 says it signs with the new key alone"

# Every slice due in [t0, t1) that reached a node reached every node,
# naming one row on all.
out=$(python3 - "$t0" "$t1" "$TMP"/strobes1 "$TMP"/strobes2 "$TMP"/strobes3 <<'PY'
import sys
t0, t1 = map(int, sys.argv[1:3])
nodes = []     # per node: the (slice, row) pairs due in [t0, t1)
for name in sys.argv[3:]:
    with open(name) as f:
        recs = [tuple(map(int, l.split()[:3])) for l in f if l.strip()]
    nodes.append({(sl, row) for sl, row, due in recs if t0 <= due < t1})
slices = {sl for pairs in nodes for sl, _ in pairs}
lo, hi = min(slices), max(slices)
# A slice no node has the master never sent (it skips a slice whose
# strobe it could not send in time, on a loaded host): not a loss.
missing = [len(slices) - len({sl for sl, _ in pairs}) for pairs in nodes]
unsent = hi - lo + 1 - len(slices)
rows_of = {}
for pairs in nodes:
    for sl, row in pairs:
        rows_of.setdefault(sl, set()).add(row)
bad = sum(len(r) != 1 for r in rows_of.values())
seen = set().union(*rows_of.values())
print(f"slices {lo}..{hi}, {unsent} not sent, missing per node {missing}, {bad} incoherent, rows {sorted(seen)}")
sys.exit(0 if hi - lo >= 20 and not any(missing) and not bad and seen == {0, 1} else 1)
PY
)
rc=$?
echo "# across the reloads: $out"
check $rc "every slice sent across the reloads reached every node, the same row on all"

# After the rotation, the old key is refused, both ways.
conf 3 "key_file $TMP/key"
hup 3
sleep 1
snap 1
snap 3
echo "# old key: node1 refused $(val 1 rejected.bad-mac), node3 $(val 3 rejected.bad-mac)"
[ "$(val 1 rejected.bad-mac)" -gt 0 ] && [ "$(val 3 rejected.bad-mac)" -gt 0 ]
check $? "a daemon back on the old key is refused, and refuses the others"

# The notifications of the master.
kill -TERM "$(cat "$TMP/pid1")"
for _ in $(seq 50); do
	alive 1 || break
	sleep 0.1
done
sleep 0.2
out=$(python3 - "$TMP/notify.log" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
kinds = [l.split("|")[0] for l in lines]
bad = []
if not kinds or not kinds[0].startswith("READY=1"):
    bad.append("first %s" % kinds[:1])
if kinds.count("WATCHDOG=1") < 3:
    bad.append("%d watchdog pings" % kinds.count("WATCHDOG=1"))
reloads = [i for i, k in enumerate(kinds) if k == "RELOADING=1"]
if len(reloads) < 4 or any("READY=1" not in kinds[i + 1:i + 3] for i in reloads):
    bad.append("%d reloads, not each then ready" % len(reloads))
if "STOPPING=1" not in kinds[-1]:
    bad.append("last %s" % kinds[-1:])
print("; ".join(bad) or "%d notifications, %d reloads" % (len(kinds), len(reloads)))
sys.exit(1 if bad else 0)
PY
)
check $? "the master notifies ready, the watchdog, each reload and its stop ($out)"

netns_stop
checks_done test_reload

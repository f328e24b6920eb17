#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The clock offsets of the tree (Documentation/tree.rst, "Clock offsets")
# against chrony's: every bcsd is started afresh with a nodes file and
# strobe_transport = tree, fan-out 1, so that the three nodes make a chain
# 1 -> 2 -> 3 and node3's offset is composed over two links.  After a few
# report periods the master must know every node's offset with a bound,
# and each must agree with chrony's: every guest's chronyd follows the
# host's NTP server, and "chronyc tracking" says how far the guest's
# clock is from it (System time, fast or slow), within its root
# dispersion plus half its root delay; so node N's clock minus node1's is
# sysoff(N) - sysoff(1), within the sum of the two nodes' uncertainties.
# The two intervals must overlap (skew_agree()): |bcs - chrony| <= bcs's
# bound + chrony's uncertainty + CL_SKEW_MARGIN_US (default 200 us, for
# the readings of a TCG guest's clock that neither bound covers: chrony's
# figures are of a moment a little before ours).  Overlap alone would
# pass any bound wide enough (hours), so each bound must also be narrow:
# at most CL_SKEW_MAX_BOUND_US (default 50000 us: half the round trips of
# two links of TCG guests, with room to spare).

# shellcheck disable=SC2016,SC2154,SC2317 # expanded in the guest; nr_nodes:
# lib.sh; known(): called by wait_until
. "$CL_DIR/lib.sh"

margin_us=${CL_SKEW_MARGIN_US:-200}
max_bound_us=${CL_SKEW_MAX_BOUND_US:-50000}
tree_chain

# offsets: the master's, one line per node, "node parent depth offset_ns
# bound_ns" ("-" for null).
offsets()
{
	on 1 bcsd_stats | "$PY" -c '
import json, sys
try:
    o = json.load(sys.stdin).get("offsets") or []
except ValueError:
    o = []
n = lambda v: "-" if v is None else str(v)
for e in o:
    print(" ".join(n(e.get(k)) for k in
                   ("node", "parent", "depth", "offset_ns", "bound_ns")))'
}

known()
{
	[ "$(offsets | awk '$5 != "-"' | wc -l)" = "$nr_nodes" ]
}
wait_until 30 known
ok $? "the master knows every node's clock offset, with a bound"

# chrony NODE: "sysoff_ns uncertainty_ns" of NODE's clock from NTP time.
chrony()
{
	on "$1" '"$CL_CHRONYC" -n tracking' | "$PY" -c '
import re, sys
t = sys.stdin.read()
def num(name):
    m = re.search(r"^" + name + r"\s*:\s*([-0-9.e+]+) seconds(?: (fast|slow))?",
                  t, re.M)
    if not m:
        raise SystemExit(1)
    v = float(m.group(1))
    return -v if m.group(2) == "slow" else v
off = num("System time")
unc = num("Root dispersion") + num("Root delay") / 2
print(round(off * 1e9), round(unc * 1e9))'
}

ours=$(offsets)
diag "bcs (node parent depth offset_ns bound_ns):" "$ours"
declare -A sys unc
rc=0
for n in $CL_NODES; do
	c=$(chrony "$n") || { rc=1; continue; }
	sys[$n]=${c% *}
	unc[$n]=${c#* }
	diag "node$n: chrony: $c (ns: offset from NTP time, uncertainty)"
done
ok $rc "chronyc tracking on every node"

for n in $CL_NODES; do
	[ "$n" = 1 ] && continue
	line=$(echo "$ours" | awk -v n="$n" '$1 == n')
	o=$(echo "$line" | awk '{ print $4 }')
	b=$(echo "$line" | awk '{ print $5 }')
	if [ -z "$line" ] || [ "$b" = "-" ] || [ -z "${sys[$n]:-}" ] ||
	   [ -z "${sys[1]:-}" ]; then
		ok 1 "node$n: an offset of bcs's and of chrony's to compare"
		continue
	fi
	c=$((sys[$n] - sys[1]))
	u=$((unc[$n] + unc[1] + margin_us * 1000))
	d=$((o > c ? o - c : c - o))
	[ "$d" -le $((b + u)) ]
	ok $? "node$n: bcs $((o / 1000)) +- $((b / 1000)) us and chrony $((c / 1000)) +- $((u / 1000)) us agree (apart $((d / 1000)) us)"
	[ "$b" -le $((max_bound_us * 1000)) ]
	ok $? "node$n: bcs's bound $((b / 1000)) us is at most $max_bound_us us"
done

w=$(stat_of 1 skew_warnings)
diag "master: $w skew warning(s)"
tap_end

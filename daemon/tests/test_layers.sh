#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd's dependencies run one way (Documentation/design.rst): the core
# (loop, net, rx, followed, dispatch, view, stats, global, offsets, tree, reduce,
# and the pure modules topo, filter, skew, tquorum, mpigather, mpidir,
# matrix, hostlist and fill) calls no part, and no part (master, node,
# record, collect, switches, filler, probe, ctl)
# calls another;
# messages reach the parts through the handlers they register.  Checked
# on the objects' symbols.

cd "$(dirname "$0")/.." || exit 1
. ../scripts/check-lib.sh

core="loop net rx followed dispatch view stats global offsets tree reduce topo filter skew tquorum mpigather mpidir matrix hostlist fill dumpfile"
parts="master node record collect switches filler probe ctl"

# defined O: the global functions and data object O.o defines.
defined()
{
	nm --defined-only -g "$1.o" | awk '{ print $3 }' | sort
}

# uses O: the symbols O.o needs from elsewhere.
uses()
{
	nm -u "$1.o" | awk '{ print $2 }' | sort
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for p in $parts; do
	defined "$p" > "$tmp/$p"
done
for o in $core $parts; do
	bad=""
	for p in $parts; do
		[ "$o" = "$p" ] && continue
		bad+=$(comm -12 <(uses "$o") "$tmp/$p" | tr '\n' ' ')
	done
	[ -z "$bad" ]
	check $? "$o.o calls no other part ($bad)"
done
checks_done test_layers

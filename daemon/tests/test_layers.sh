#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd's dependencies run one way (Documentation/design.rst, "The daemon"),
# checked per folder on the objects' symbols: a folder may call only the
# folders below it,
#
#   proto                  the wire format, pure
#   core                   loop, config, log, net, dispatch, receive, stats
#   tree, clock            the tree of daemons; the clocks' offsets
#   master, node, ctl      the parts, which call no other part
#   bcsd.c                 starts them all
#
# and the parts reach each other only through the dispatcher and the
# handlers and transports they register.  Inside a folder, the files'
# calls form no circle either.

cd "$(dirname "$0")/.." || exit 1
. ../scripts/check-lib.sh

# below F: the folders F may call.
declare -A below=(
	[proto]=""
	[core]="proto"
	[tree]="proto core"
	[clock]="proto core tree"
	[master]="proto core tree clock"
	[node]="proto core tree clock"
	[ctl]="proto core tree clock"
)
folders="proto core tree clock master node ctl"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Every global symbol each folder's objects define.
for f in $folders; do
	nm --defined-only -g "$f"/*.o | awk 'NF == 3 { print $3 }' | sort -u > "$tmp/$f"
	[ -s "$tmp/$f" ]
	check $? "$f/ defines symbols (built)"
done

for f in $folders; do
	for o in "$f"/*.o; do
		nm -u "$o" | awk '{ print $2 }' | sort -u > "$tmp/uses"
		bad=""
		for g in $folders; do
			[ "$g" = "$f" ] && continue
			case " ${below[$f]} " in *" $g "*) continue ;; esac
			bad+=$(comm -12 "$tmp/uses" "$tmp/$g" | sed "s|^|$g:|" |
				tr '\n' ' ')
		done
		[ -z "$bad" ]
		check $? "$o calls only ${below[$f]:-nothing} ($bad)"
	done
done

# Inside a folder, calls between its files form no circle: each pair
# "caller callee" goes to tsort, which finds a loop if there is one.
for f in $folders; do
	: > "$tmp/pairs"
	for o in "$f"/*.o; do
		nm --defined-only -g "$o" | awk 'NF == 3 { print $3 }' |
			sort -u > "$tmp/def.${o//\//_}"
	done
	for o in "$f"/*.o; do
		nm -u "$o" | awk '{ print $2 }' | sort -u > "$tmp/uses"
		for p in "$f"/*.o; do
			[ "$o" = "$p" ] && continue
			[ -n "$(comm -12 "$tmp/uses" "$tmp/def.${p//\//_}")" ] &&
				echo "$o $p" >> "$tmp/pairs"
		done
		echo "$o $o" >> "$tmp/pairs"
	done
	loop=$(tsort "$tmp/pairs" 2>&1 > /dev/null | grep -v 'input contains a loop' |
		sed 's/^tsort: //' | tr '\n' ' ')
	[ -z "$loop" ]
	check $? "the files of $f/ call each other in no circle ($loop)"
done

# Every object of bcsd is in a folder checked here, or is bcsd.o.
for o in $(make -s -p 2>/dev/null | sed -n 's/^OBJS := //p' | head -1); do
	case $o in
	bcsd.o) continue ;;
	esac
	case " $folders " in *" ${o%%/*} "*) ok=0 ;; *) ok=1 ;; esac
	check $ok "$o is in a checked folder"
done
checks_done test_layers

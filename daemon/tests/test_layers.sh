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
# handlers and transports they register.

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

# Calls up still to be turned into registered handlers and transports:
# OBJECT:FOLDER:SYMBOL, one each.  Nothing else may call up.
pending="
"

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
			for s in $(comm -12 "$tmp/uses" "$tmp/$g"); do
				case " $(echo $pending) " in
				*" $o:$g:$s "*) continue ;;
				esac
				bad+="$g:$s "
			done
		done
		[ -z "$bad" ]
		check $? "$o calls only ${below[$f]:-nothing} ($bad)"
	done
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

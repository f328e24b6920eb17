#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd-sim's metrics_file and retention_days, on the host: a master (role
# both, node 1) and a node (2), each in a network namespace of its own
# joined by a bridge.  Each writes metrics_file every second: the file is
# mode 0644, passes `promtool check metrics` (Debian's prometheus
# package; that check is skipped without it), names every counter of
# core/counters.h as bcsd_NAME_total with its HELP and TYPE, shows the
# node's strobes and bcs.ko's state (the stand-in's), is written again
# on SIGUSR1, and is removed when bcsd stops.  Retention: old dumps of
# bcsd's naming in jobs_dir and old MPI files and directories of jobs
# gone in mpi_dir are removed at start; recent ones, files of other
# names, and what a symbolic link points to are kept.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_metrics
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-met-$$
NET=10.79.0

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

sim_setup 1 2

# until_file FILE: wait at most 10 s for FILE to be there.
until_file()
{
	for _ in $(seq 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

sim_start 1 both --priority=200 --failover_slices=2 \
	--metrics_file="$TMP/m1.prom" --metrics_interval_ms=1000
# What node2's retention pass finds at start (retention_days 30): of
# each pair, the first is older than 30 days and goes, the rest stay.
H=$(hostname)
old()
{
	touch -h -d "40 days ago" "$@"
}
mkdir -m 0711 "$TMP/jobs2" && mkdir -m 0755 "$TMP/mpi2" "$TMP/victim" &&
	cd "$TMP/jobs2" && touch "101-$H.json" "102-$H.json" "103-elsewhere.json" \
		notes.txt "104-$H.json.Ab12Cd" ../target &&
	ln -s ../target "105-$H.json" &&
	old "101-$H.json" "103-elsewhere.json" notes.txt "104-$H.json.Ab12Cd" \
		../target "105-$H.json" &&
	cd "$TMP/mpi2" && mkdir 201 202 203 .stale.206.1.2 &&
	touch 201/201.h.0.1.bcsmpi 201/201.control 202/202.h.0.1.bcsmpi \
		202/202.h.1.2.bcsmpi 203/203.h.0.1.bcsmpi 203/keep.txt \
		204.control 205.h.0.1.bcsmpi .stale.206.1.2/206.h.0.1.bcsmpi \
		"$TMP/victim/207.h.0.1.bcsmpi" &&
	chown -R 65534 201 &&
	ln -s "$TMP/victim" 207 &&
	old 201/* 202/202.h.0.1.bcsmpi 203/* 204.control 205.h.0.1.bcsmpi \
		.stale.206.1.2/* "$TMP/victim"/* "$TMP/victim" 207 &&
	old 201 202 203 .stale.206.1.2 && cd "$top/daemon" || exit 1
mkdir -m 0755 "$TMP/shared" || exit 1
sim_start 2 node --metrics_file="$TMP/m2.prom" --metrics_interval_ms=1000 \
	--mpi_dir="$TMP/mpi2" --jobs_copy_dir="$TMP/shared"
until_stat 2 retention_removed -ge 12 10
check $? "node2's retention pass removes 12 old files and directories ($(val 2 retention_removed))"
gone=""
kept=""
for f in "jobs2/101-$H.json" "jobs2/104-$H.json.Ab12Cd" "jobs2/105-$H.json" \
	 mpi2/201 mpi2/202/202.h.0.1.bcsmpi mpi2/203/203.h.0.1.bcsmpi \
	 mpi2/204.control mpi2/205.h.0.1.bcsmpi mpi2/.stale.206.1.2; do
	[ -e "$TMP/$f" ] || [ -L "$TMP/$f" ] && kept="$kept $f"
done
for f in "jobs2/102-$H.json" jobs2/103-elsewhere.json jobs2/notes.txt \
	 target mpi2/202/202.h.1.2.bcsmpi mpi2/203/keep.txt mpi2/207 \
	 victim/207.h.0.1.bcsmpi; do
	[ -e "$TMP/$f" ] || [ -L "$TMP/$f" ] || gone="$gone $f"
done
[ -z "$kept$gone" ] && [ "$(val 2 retention_failed)" = 0 ]
check $? "old files of bcsd's names go, the rest stay, no link followed${kept:+ (kept:$kept)}${gone:+ (gone:$gone)}"
until_stat 2 strobes_forwarded -ge 5 10
check $? "node2 hands strobes to its stand-in"

for n in 1 2; do
	f=$TMP/m$n.prom
	until_file "$f"
	check $? "node$n writes its metrics_file"
	[ "$(stat -c %a "$f" 2>/dev/null)" = 644 ]
	check $? "node$n's metrics_file is mode 0644"
	if command -v promtool > /dev/null; then
		out=$(promtool check metrics < "$f" 2>&1)
		check $? "promtool check metrics passes node$n's file${out:+: $out}"
	else
		echo "# promtool (package prometheus) missing: not checked"
	fi
	# Every counter of the table, with its HELP, TYPE and a sample.
	missing=$(sed -n 's/^[[:space:]]*X(\([a-z]*\), \([a-z_0-9]*\),.*/\2/p' \
			core/counters.h | while read -r c; do
		m=bcsd_${c}_total
		grep -q "^# HELP $m " "$f" && grep -q "^# TYPE $m counter$" "$f" &&
			grep -Eq "^$m [0-9]+$" "$f" || echo "$m"
	done)
	[ -z "$missing" ] && [ "$(grep -c '_total ' "$f")" -ge 90 ]
	check $? "node$n's metrics name every counter of counters.h${missing:+ (missing: $missing)}"
	grep -Eq '^bcsd_rejected_total\{verdict="[a-z_]+"\} [0-9]+$' "$f"
	check $? "node$n's rejected datagrams by verdict, as a label"
done

# The node's state, and its stand-in of bcs.ko's.
f=$TMP/m2.prom
sleep 1.5
grep -q '^bcsd_info{version="[^"]*",role="node"} 1$' "$f" &&
	grep -q '^bcsd_master_known 1$' "$f" &&
	grep -q '^bcsd_master_id 1$' "$f" &&
	grep -q '^bcsd_driving 1$' "$f" &&
	grep -q '^bcs_up 1$' "$f" && grep -q '^bcs_mode 2$' "$f" &&
	grep -q '^bcs_failopen 0$' "$f"
check $? "node2's metrics: role, master followed, driving bcs.ko, bcs.ko driven and not failed open"
v=$(sed -n 's/^bcsd_strobes_forwarded_total //p' "$f")
[ "${v:-0}" -ge 5 ] && grep -q '^bcsd_active_master 1$' "$TMP/m1.prom"
check $? "node2 counts $v strobes forwarded; node1 is the active master"

# SIGUSR1 writes it at once (the interval is a second: stop it first).
rm -f "$f"
kill -USR1 "$(cat "$TMP/pid2")"
until_file "$f"
check $? "SIGUSR1 writes metrics_file again"
ls "$TMP"/m2.prom.* > /dev/null 2>&1
check $((!$?)) "no temporary file left beside metrics_file"

# At exit the file goes: no figures of a daemon that is gone.
kill -TERM "$(cat "$TMP/pid2")"
for _ in $(seq 50); do
	kill -0 "$(cat "$TMP/pid2")" 2>/dev/null || break
	sleep 0.1
done
[ ! -e "$f" ]
check $? "metrics_file removed when bcsd stops"

checks_done "$NAME"

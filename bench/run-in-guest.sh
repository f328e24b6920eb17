#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run-in-guest.sh [--quick] [--only switch_cost|efficiency|dist_overhead] -
# run the bcs benchmarks inside a test guest
# (started by bench/run.sh through selftests/vm/run-vm.sh, which sets
# BCS_MODULE, BCS_OUT, BCS_KVER and BUILD).  Loads bcs.ko, runs
# switch_cost, efficiency and dist_overhead, unloads the module, and
# writes everything to $BCS_OUT/bench.txt as well as to the console.
#
# efficiency also runs its driven cases (bcsd SLICE) when bcsd and bcsctl
# are built: bcsd with role both on lo, a fresh key in /tmp.
#
# Extra arguments for the programs can be given in SWITCH_COST_ARGS,
# EFFICIENCY_ARGS and DIST_OVERHEAD_ARGS (set by run.sh).  The benchmarks
# never fail on timings: the exit status is non-zero only if something
# could not run (dist_overhead: or if its statistics were not on).

set -u

bin=${BUILD:-$BCS_SRC/build}/bench
out=$BCS_OUT/bench.txt
rcfile=$BCS_OUT/bench.rc

# Sized so that a whole run stays within a few minutes under TCG.
sc_args="-r 20 -b 45 -n 1,8,64,256 -g both"
ef_args="-t 2000 -r 8 -v -D"
do_args="-r 12 -t 1000"
quick=0
only=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--only)  only=$2; shift 2 ;;
	*)       echo "run-in-guest: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ $quick = 1 ]; then
	sc_args="-r 5 -b 10 -n 1,8,64 -g procs"
	ef_args="-t 1000 -r 2 -v -D"
	do_args="-r 3 -t 200"
fi
sc_args="$sc_args ${SWITCH_COST_ARGS:-}"
ef_args="$ef_args ${EFFICIENCY_ARGS:-}"
do_args="$do_args ${DIST_OVERHEAD_ARGS:-}"

run()
{
	echo
	echo "\$ $*"
	start=$(cut -d' ' -f1 /proc/uptime)
	"$@"
	rc=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	echo "(exit $rc, $(awk -v a="$start" -v b="$end" \
		'BEGIN { printf "%.1f", b - a }') s)"
	return $rc
}

{
	rc=0
	echo "bcs benchmarks: kernel $(uname -r), $(nproc) online CPUs," \
	     "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	grep -m1 'model name' /proc/cpuinfo
	echo "times measured inside the guest: compare ratios of one run only"
	# dist_linger_ms=0: dist_overhead's "off" runs without the probes,
	# which would otherwise stay registered 10 s after each "on".
	if ! insmod "$BCS_MODULE" dist_linger_ms=0; then
		echo "insmod $BCS_MODULE failed"
		echo 1 > "$rcfile"
		exit 1
	fi
	# shellcheck disable=SC2086 # word splitting of the argument lists
	if [ -z "$only" ] || [ "$only" = switch_cost ]; then
		run "$bin/switch_cost" $sc_args || rc=1
	fi
	# shellcheck disable=SC2086
	if [ -z "$only" ] || [ "$only" = efficiency ]; then
		bcsd=$BCS_SRC/daemon/bcsd
		key=/tmp/efficiency-bcsd.key
		rm -f "$key"
		if [ -x "$bcsd" ] && [ -x "$BCS_SRC/tools/bcsctl" ] &&
		   ip link set lo up && "$bcsd" --genkey "$key"; then
			ef_args="$ef_args -b $bcsd -c $BCS_SRC/tools/bcsctl -K $key"
		else
			echo "efficiency: no bcsd: driven cases left out"
		fi
		run "$bin/efficiency" $ef_args || rc=1
		if [ -s /tmp/efficiency-bcsd.log ]; then
			echo "bcsd's log (last lines):"
			tail -n 20 /tmp/efficiency-bcsd.log
		fi
	fi
	# shellcheck disable=SC2086
	if [ -z "$only" ] || [ "$only" = dist_overhead ]; then
		run "$bin/dist_overhead" $do_args || rc=1
	fi
	rmmod bcs || rc=1
	echo "$rc" > "$rcfile"
} 2>&1 | tee "$out"

exit "$(cat "$rcfile" 2>/dev/null || echo 1)"

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# For the benchmarks that run bcsd-sim daemons on this host (tree_scale.sh,
# daemon_cost.sh), sourced after scripts/lib.sh with NAME, NS and NET set
# as daemon/tests/netns-lib.sh wants them, and KEEP: files are kept (not
# removed at exit) when it is not empty.  It builds bcsd-sim and bcsctl
# ($BCSD, $BCSCTL), makes $OUT ($BUILD/bench), sources netns-lib.sh
# ($TMP, pids, nss, netns_bridge, netns_join, netns_stop, genkey, ctl)
# and replaces its EXIT trap by sim_cleanup: the script's own stop(),
# which it must define, then $TMP removed.  The cluster key is in
# $TMP/key.

# $top, the tree, is the sourcing script's.
: "${top:?}"
make -s -C "$top/libbcs" && make -s -C "$top/daemon" bcsd-sim &&
	make -s -C "$top/tools" bcsctl > /dev/null 2>&1 ||
	{ echo "$NAME: cannot build bcsd-sim and bcsctl" >&2; exit 1; }
BCSD=$top/daemon/bcsd-sim
BCSCTL=$top/tools/bcsctl
OUT=$BUILD/bench
mkdir -p "$OUT" || exit 1
# shellcheck source-path=SCRIPTDIR source=../daemon/tests/netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

sim_cleanup()
{
	stop
	if [ -n "$KEEP" ]; then
		echo "$NAME: files kept in $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap sim_cleanup EXIT
trap 'exit 1' INT TERM

genkey key

# sim_started DIR N SECONDS: wait at most SECONDS for N daemons' logs,
# DIR/log*, to say "started:"; fails, saying which did not, if they have
# not.
sim_started()
{
	local dir=$1 n=$2 end up=0

	end=$((SECONDS + $3))
	while [ "$SECONDS" -lt "$end" ]; do
		up=$(grep -l "started:" "$dir"/log* 2>/dev/null | wc -l)
		[ "$up" -ge "$n" ] && return 0
		sleep 0.2
	done
	echo "$NAME: only $up of $n daemons started:" >&2
	grep -L "started:" "$dir"/log* | head -3 | xargs -r tail -n 3 >&2
	return 1
}

# sim_jobs SOCKET COUNT: COUNT jobs made through the bcsd of control
# socket SOCKET (each tried for 10 s while it comes up).
sim_jobs()
{
	local job out

	for _ in $(seq "$2"); do
		job=""
		for _ in $(seq 50); do
			out=$(BCS_CONTROL_SOCKET=$1 timeout 10 \
			      "$BCSCTL" job create 2>&1) && job=$out && break
			sleep 0.2
		done
		[ -n "$job" ] ||
			{ echo "$NAME: job create: $out" >&2; return 1; }
	done
}

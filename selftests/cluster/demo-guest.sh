# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest half of the cluster demo (scripts/demo-cluster.sh): sourced by a
# command of selftests/cluster/demo-run.sh, with guest-lib.sh loaded (NODE,
# STATE, CL_NET, CL_NODES set).  This node runs rank NODE-1 of each
# barrier job, which has one rank per node.

# demo_rank K JOB PORT ITERS WORK WAIT: rank of job K, waiting at the
# barrier the WAIT way (spin or block); JOB 0 runs it outside
# bcs (plain time-sharing), "-" skips it.  Leaves one line in
# STATE/demo-K.res: "jobK rc=RC end=REALTIME <rank 0's result line>".
demo_rank()
{
	local k=$1 j=$2 port=$3 iters=$4 work=$5 out rc
	local -a wrap=() spin=() nodes
	read -r -a nodes <<< "$CL_NODES"

	rm -f "$STATE/demo-$k.res"
	[ "$j" = - ] && return 0
	[ "$j" = 0 ] || wrap=(bcsctl run --job "$j" --)
	[ "$6" = spin ] && spin=(--spin)
	out=$("${wrap[@]}" "$BUILD/bench/barrier" --rank $((NODE - 1)) \
		--size "${#nodes[@]}" --root "$CL_NET.1:$port" --iters "$iters" \
		--work "$work" "${spin[@]}" 2>&1 < /dev/null)
	rc=$?
	echo "job$k rc=$rc end=$EPOCHREALTIME ${out##*$'\n'}" > "$STATE/demo-$k.res"
}

# demo_ranks J1 J2 PORT ITERS WORK WAIT [seq]: both jobs' ranks at once
# (or one after the other with "seq"); prints the start time and each
# job's line.
demo_ranks()
{
	local j1=$1 j2=$2 port=$3 iters=$4 work=$5 how=$6 seq=${7:-} t0

	t0=$EPOCHREALTIME
	if [ "$seq" = seq ]; then
		demo_rank 1 "$j1" "$port" "$iters" "$work" "$how"
		demo_rank 2 "$j2" $((port + 1)) "$iters" "$work" "$how"
	else
		demo_rank 1 "$j1" "$port" "$iters" "$work" "$how" &
		demo_rank 2 "$j2" $((port + 1)) "$iters" "$work" "$how" &
		wait
	fi
	echo "start=$t0"
	cat "$STATE"/demo-[12].res 2> /dev/null
	return 0
}

# demo_quantum MS: make the scheduler's time slice for a few CPU-bound
# tasks about MS milliseconds (CFS latency_ns 2 MS and min_granularity_ns
# MS on 6.1; EEVDF base_slice_ns MS on 6.12), or with MS empty leave the
# kernel's; prints the setting in force.
demo_quantum()
{
	local d=/sys/kernel/debug/sched ns f

	if [ -n "$1" ]; then
		ns=$(($1 * 1000000))
		if [ -f "$d/base_slice_ns" ]; then
			echo "$ns" > "$d/base_slice_ns" || return 1
		else
			echo $((2 * ns)) > "$d/latency_ns" &&
				echo "$ns" > "$d/min_granularity_ns" || return 1
		fi
	fi
	for f in base_slice_ns latency_ns min_granularity_ns; do
		[ -f "$d/$f" ] && printf '%s %s ' "$f" "$(cat "$d/$f")"
	done
	echo
}

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/slurm_gang.sh [--nodes N] [--rounds R] [--seconds S | --iters K]
#                     [--work W] [--timeslice SEC] [--bcs-slices "US..."]
#                     [--timeout SEC]
#
# bcs against Slurm's own gang scheduler (make slurm-gang).  On the
# cluster test bed (selftests/cluster/run-cluster.sh, N guests, default
# 3, as in test-slurm.sh), Slurm brought up as test-slurm.sh
# does it, the makespan of two MPI barrier jobs (bench/mpi_barrier, one
# rank per node) submitted at once under Slurm's gang scheduler
# (PreemptMode=GANG, SchedulerTimeSlice SEC, default 5, the least
# slurmctld 22.05 takes), suspending with signals (proctrack/linuxproc)
# and with the cgroup v2 freezer (proctrack/cgroup, "gang-freezer"),
# under bcs (srun --bcs) with bcsd's slices of
# --bcs-slices (default 100000 us), under plain time-sharing
# (OverSubscribe=FORCE, neither), and one after the other; R rounds
# (default 2), interleaved.  Each job does K iterations of work W (default
# 200), by default as many as one job alone does in S seconds (default
# 20).  Prints a table of median makespans and of their ratios to one
# after the other (taken within a round), and writes it to
# $BUILD/bench/slurm_gang.txt.  --timeout (default 1500 s) bounds the
# whole run: no round is started that would not end before it.  Needs
# root.  Output in $BUILD/bench/slurm-gang-cluster/.

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

nodes=3
tmo=1500
export SG_ROUNDS=2 SG_SECONDS=20 SG_ITERS=0 SG_WORK=200 SG_TIMESLICE=5
export SG_BCS_SLICES=100000
while [ $# -gt 0 ]; do
	case $1 in
	--nodes)      nodes=$2; shift 2 ;;
	--rounds)     SG_ROUNDS=$2; shift 2 ;;
	--seconds)    SG_SECONDS=$2; shift 2 ;;
	--iters)      SG_ITERS=$2; shift 2 ;;
	--work)       SG_WORK=$2; shift 2 ;;
	--timeslice)  SG_TIMESLICE=$2; shift 2 ;;
	--bcs-slices) SG_BCS_SLICES=$2; shift 2 ;;
	--timeout)    tmo=$2; shift 2 ;;
	-h|--help)    sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*)            echo "slurm_gang: unknown option $1" >&2; exit 2 ;;
	esac
done
export SG_RESULT=$BUILD/bench/slurm_gang.txt
# No round starts that would not end two minutes before --timeout (the
# guests' shutdown).
export SG_DEADLINE=$((EPOCHSECONDS + tmo - 120))
mkdir -p "$BUILD/bench"
rm -f "$SG_RESULT"
BCS_CLUSTER_OUT=$BUILD/bench/slurm-gang-cluster timeout "$tmo" \
	"$top/selftests/cluster/run-cluster.sh" --nodes "$nodes" \
	--timeout "$tmo" "$top/bench/slurm_gang_run.sh"
rc=$?
[ -s "$SG_RESULT" ] || { echo "slurm_gang: no table (exit $rc)" >&2; exit 1; }
cat "$SG_RESULT"
exit $rc

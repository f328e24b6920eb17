#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What libbcsmpi adds to one MPI call, in nanoseconds: bench/mpi_callcost.c
# (a loop of MPI_Test on a null request, a polled primitive, and one of
# MPI_Comm_rank, timed at every call) under Open MPI, mpirun -np 1 on the
# host, in configurations interleaved round by round: without the
# library, preloaded with BCS_MPI_STATS=off, on with every polled call
# timed (BCS_MPI_POLL=1), and on by default (one polled call in 32
# timed).  Prints the median ns per call of each configuration and what
# it adds to "without", and writes them to $OUT
# (build/bench/mpi_callcost.txt).
#
# Usage: bench/mpi_callcost.sh [-r ROUNDS] [-n CALLS]
# Environment: OUT, BCS_MPI_LIBDIR (default libbcsmpi/).

set -u
cd "$(dirname "$0")/.." || exit 1
top=$PWD
out=${OUT:-$top/build/bench/mpi_callcost.txt}
lib=${BCS_MPI_LIBDIR:-$top/libbcsmpi}/libbcsmpi-openmpi.so
rounds=5
calls=10000000

while getopts r:n: o; do
	case $o in
	r) rounds=$OPTARG ;;
	n) calls=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-n CALLS]" >&2; exit 2 ;;
	esac
done
case $rounds$calls in
*[!0-9]*|'') echo "$0: -r and -n take numbers" >&2; exit 2 ;;
esac
for c in mpicc.openmpi mpirun.openmpi; do
	command -v "$c" > /dev/null || { echo "$0: no $c" >&2; exit 1; }
done
[ -r "$lib" ] || { echo "$0: no $lib: make libbcsmpi first" >&2; exit 1; }

work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
prog=$work/mpi_callcost
mpicc.openmpi -O2 -o "$prog" bench/mpi_callcost.c || exit 1
mkdir -p "$(dirname "$out")" "$work/mpi"

configs=(without off poll1 on)
# run CONFIG: one run, its line appended to $work/CONFIG
run()
{
	local e=()

	case $1 in
	without) ;;
	off)     e=(LD_PRELOAD="$lib" BCS_MPI_STATS=off) ;;
	poll1)   e=(LD_PRELOAD="$lib" BCS_MPI_STATS=on BCS_MPI_POLL=1) ;;
	on)      e=(LD_PRELOAD="$lib" BCS_MPI_STATS=on) ;;
	esac
	timeout -k 5 300 mpirun.openmpi --allow-run-as-root -np 1 \
		env -u BCS_JOB -u BCS_MPI_POLL -u LD_PRELOAD \
		BCS_MPI_DIR="$work/mpi" "${e[@]}" \
		"$prog" "$calls" >> "$work/$1" || {
		echo "$0: run of $1 failed" >&2
		exit 1
	}
	rm -f "$work"/mpi/*.bcsmpi
}

for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < ${#configs[@]}; k++)); do
		run "${configs[(k + r) % ${#configs[@]}]}"
	done
done

python3 - "$work" "$rounds" "$calls" "${configs[@]}" > "$out" <<'PY' || exit 1
import statistics
import sys

work, rounds, calls, configs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
med = {}
for c in configs:
    rows = [l.split() for l in open("%s/%s" % (work, c))]
    med[c] = (statistics.median(float(r[1]) for r in rows),
              statistics.median(float(r[3]) for r in rows))
print("ns per MPI call (median of %s runs of %s calls), Open MPI, -np 1"
      % (rounds, calls))
print("%-8s %10s %9s %10s %9s" % ("Config", "MPI_Test", "added",
                                  "Comm_rank", "added"))
for c in configs:
    print("%-8s %10.2f %+9.2f %10.2f %+9.2f" %
          (c, med[c][0], med[c][0] - med["without"][0],
           med[c][1], med[c][1] - med["without"][1]))
PY
cat "$out"

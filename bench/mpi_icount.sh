#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The instructions libbcsmpi costs per MPI call, counted by callgrind (a
# count does not depend on the machine's load, which a wall time on a
# shared machine does): libbcsmpi's test program (libbcsmpi/tests/
# pattern.c: 1,000 MPI_Allreduce, 200 MPI_Isend/MPI_Irecv pairs, 50
# MPI_Barrier...) under Open MPI, mpirun -np 2, each rank under
# callgrind, once per BCS_MPI_STATS setting (off, on, all).  The
# instructions executed in libbcsmpi-openmpi.so and in the vDSO's clocks
# (clock_gettime), divided by the MPI calls the ranks made (from their
# statistics files), are printed and written to $OUT
# (build/bench/mpi_icount.txt).
#
# Usage: bench/mpi_icount.sh
# Environment: OUT, BCS_MPI_LIBDIR (default libbcsmpi/).

set -u
cd "$(dirname "$0")/.." || exit 1
top=$PWD
out=${OUT:-$top/build/bench/mpi_icount.txt}
libdir=${BCS_MPI_LIBDIR:-$top/libbcsmpi}
lib=$libdir/libbcsmpi-openmpi.so
prog=$top/libbcsmpi/tests/pattern-openmpi
bcsstat=$top/tools/bcsstat

for c in valgrind callgrind_annotate mpirun.openmpi; do
	command -v "$c" > /dev/null || { echo "$0: no $c" >&2; exit 1; }
done
if [ ! -r "$lib" ] || [ ! -x "$prog" ] || [ ! -x "$bcsstat" ]; then
	echo "$0: build libbcsmpi, its tests and tools first" >&2
	exit 1
fi

work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$(dirname "$out")"

{
	echo "libbcsmpi's instructions per MPI call (callgrind), $(basename "$prog")," \
	     "Open MPI, mpirun -np 2"
	echo "command: bench/mpi_icount.sh"
	printf "%-6s %10s %14s %14s %10s\n" Stats "MPI calls" "Ir libbcsmpi" \
		"Ir vDSO clock" "Ir/call"
} > "$work/table"
for s in off on all; do
	d=$work/$s
	mkdir -p "$d/mpi"
	timeout -k 5 900 mpirun.openmpi --allow-run-as-root --oversubscribe \
		--mca btl self,vader -np 2 \
		env LD_PRELOAD="$lib" BCS_MPI_STATS=$s BCS_MPI_DIR="$d/mpi" \
		BCS_JOB=1 valgrind --tool=callgrind \
		--callgrind-out-file="$d/cg.%p" "$prog" > "$d/log" 2>&1 ||
		{ echo "$0: $s: the run failed" >&2; tail -n 20 "$d/log" >&2; exit 1; }
	lib_ir=0
	clk_ir=0
	for f in "$d"/cg.*; do
		# Self cost per function and object; the first column is Ir.
		callgrind_annotate --inclusive=no --threshold=100 "$f" \
			> "$f.txt" 2> /dev/null
		a=$(awk '/libbcsmpi-openmpi\.so/ { gsub(",", "", $1); s += $1 }
			END { print s + 0 }' "$f.txt")
		b=$(awk '/vdso|clock_gettime/ { gsub(",", "", $1); s += $1 }
			END { print s + 0 }' "$f.txt")
		lib_ir=$((lib_ir + a))
		clk_ir=$((clk_ir + b))
	done
	if [ "$s" = off ]; then
		# Off: no file; the calls are those of an "on" run.
		calls=
	else
		calls=$("$bcsstat" mpi --json "$d"/mpi/*.bcsmpi | python3 -c '
import json, sys
print(sum(p["calls"] for p in json.load(sys.stdin)["primitives"]
          if not p["name"] in ("Comp Granularity", "Comm Overhead")))')
	fi
	echo "$s $lib_ir $clk_ir ${calls:-}" >> "$work/raw"
done
on_calls=$(awk '$1 == "on" { print $4 }' "$work/raw")
awk -v n="$on_calls" '{
	c = $4 != "" ? $4 : n
	printf "%-6s %10d %14d %14d %10.1f\n", $1, c, $2, $3, ($2 + $3) / c
}' "$work/raw" >> "$work/table"
tee "$out" < "$work/table"

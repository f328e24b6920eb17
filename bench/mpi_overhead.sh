#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cost of libbcsmpi on a real MPI application (the BCS-MPI paper's
# Table 3): Debian's hpcc (the HPC Challenge suite: HPL, DGEMM, STREAM,
# PTRANS, RandomAccess, FFT, ping-pong and ring latency and bandwidth; a
# program nobody here wrote) under Open MPI, mpirun -np NP on this host,
# no module needed.  Five configurations, interleaved round by round so
# that a change of the machine's load falls on all of them alike:
#
#   without  no library
#   off      libbcsmpi preloaded, BCS_MPI_STATS=off
#   on       preloaded, counters of every primitive (the default), no
#            per-slice counts (BCS_MPI_SLICES=0)
#   slices   as on, with the per-slice counts (BCS_MPI_SLICES=1024): the
#            slices of /dev/bcsstat if bcs.ko is loaded, else of a
#            stand-in ring (BCS_MPI_STATDEV) to which libbcsmpi/tests/
#            slices-openmpi --tick adds a slice every millisecond, for
#            the whole run (every configuration pays for the ticker)
#   all      preloaded, distributions of every primitive too
#
# -C LIST measures only those (comma-separated, in that order), e.g.
# -C without,on,slices.
#
# Each run must pass hpcc's own checks (its summary's "Success=1", HPL's
# residuals "PASSED" and none "FAILED"); the median wall time of each
# configuration and its ratio to "without" are printed and written to
# $OUT (build/bench/mpi_overhead.txt).  A round's order rotates.  The
# last "on" run's statistics are summed up with bcsstat mpi after the
# table.  Installs hpcc (apt-get) if it is missing.
#
# With -a lammps, Debian's LAMMPS instead (lmp, installed with apt-get
# if missing): its Lennard-Jones melt (bench/in.melt, the input of its
# examples/melt in a box of N x N x N fcc cells, 200 steps), an
# application that makes a few MPI calls per step where hpcc's
# RandomAccess polls millions of times a second.  Each run must end
# ("Total wall time"), and every run's last thermodynamic line must be
# the same: the library changes nothing of the result.
#
# With -c, on the cluster test bed instead (selftests/cluster/
# run-cluster.sh, three guests, bench/mpi_overhead_run.sh): one rank on
# each guest, each run a bcs job, configurations without, off and on,
# and the last "on" run's table gathered through bcsd; the table in
# $BUILD/bench/mpi_overhead_cluster.txt (with -a lammps,
# mpi_overhead_lammps_cluster.txt; 8 cells a side by default).  -N 2
# boots two guests instead: on this machine's two CPUs each guest then
# has one to itself, where three share two and the host's scheduling
# shows in every exchange between them.
#
# With -i SHIFT, the same as on this machine but inside one
# instruction-counted guest (selftests/vm/run-vm.sh --smp 1 --icount
# SHIFT: its clocks advance 2^SHIFT ns per instruction executed, whatever
# the host does), NP (default 3) ranks sharing its one CPU: what the
# library adds is then measured in instructions, free of the host's load,
# which on this machine blurs any difference under a few per cent.  The
# table goes to $BUILD/bench/mpi_overhead_APP_icount.txt.
#
# The rounds start after one unmeasured run without the library, which
# brings the program and its input into the page cache.
#
# Usage: bench/mpi_overhead.sh [-a hpcc|lammps] [-C LIST]
#                              [-c [-N NODES] | -i SHIFT]
#                              [-r ROUNDS] [-n N] [-t SECONDS]
#   -a APP      hpcc (default) or lammps
#   -C LIST     the configurations (default without,off,on,slices,all;
#               not with -c)
#   -c          on the cluster test bed
#   -N NODES    with -c: 2..9 guests, one rank on each (default 3)
#   -i SHIFT    in an instruction-counted guest (SHIFT 0..10; 3 is 125
#               million instructions a second of its time)
#   -r ROUNDS   rounds (default 7; with -c 3, with -i 5)
#   -n N        HPL's problem size (default 1000; with -c 400; the other
#               tests are sized from it); LAMMPS's cells per side
#               (default 20: 32,000 atoms; with -c 8: 2,048)
#   -t SECONDS  start no round that would end after this long, judged by
#               the longest round so far (default 570; with -c 1800, with
#               -i 1500: the guest's seconds, and its limit 10 minutes
#               more of the host's)
# Environment: NP (default 2), OUT, BCS_MPI_LIBDIR (default libbcsmpi/).

set -u
cd "$(dirname "$0")/.." || exit 1
top=$PWD
rounds=7
size=1000
budget=570
cluster=0
icount=""
nodes=3
app=hpcc
configs=(without off on slices all)
given_configs=""
args=("$@")
while getopts a:C:ci:N:r:n:t: o; do
	case $o in
	a) app=$OPTARG ;;
	C) given_configs=$OPTARG ;;
	c) cluster=1 ;;
	i) icount=$OPTARG ;;
	N) nodes=$OPTARG ;;
	r) rounds=$OPTARG ;;
	n) size=$OPTARG ;;
	t) budget=$OPTARG ;;
	*) echo "usage: $0 [-a hpcc|lammps] [-C LIST] [-c [-N NODES] | -i SHIFT] [-r ROUNDS] [-n N] [-t SECONDS]" >&2
	   exit 2 ;;
	esac
done
for v in "$rounds" "$size" "$budget"; do
	case $v in
	''|*[!0-9]*|0) echo "$0: -r, -n and -t take a positive number" >&2; exit 2 ;;
	esac
done
if [ -n "$icount" ]; then
	case $icount in
	[0-9]|10) ;;
	*) echo "$0: -i: 0..10, not '$icount'" >&2; exit 2 ;;
	esac
	[ "$cluster" = 0 ] || { echo "$0: -c or -i, not both" >&2; exit 2; }
fi
if [ -n "$given_configs" ]; then
	[ "$cluster" = 0 ] || { echo "$0: -C is not for -c" >&2; exit 2; }
	IFS=, read -r -a configs <<< "$given_configs"
	for c in "${configs[@]}"; do
		case $c in
		without|off|on|slices|all) ;;
		*) echo "$0: -C: without, off, on, slices, all; not '$c'" >&2
		   exit 2 ;;
		esac
	done
	case " ${configs[*]} " in
	*" without "*) ;;
	*) echo "$0: -C: 'without' is the baseline; list it" >&2; exit 2 ;;
	esac
fi
case $nodes in
[2-9]) ;;
*) echo "$0: -N: 2..9 guests, not '$nodes'" >&2; exit 2 ;;
esac
[ "$nodes" = 3 ] || [ "$cluster" = 1 ] ||
	{ echo "$0: -N goes with -c" >&2; exit 2; }
case $app in
hpcc) ;;
lammps)
	case " $* " in *" -n"*) ;; *) size=20 ;; esac ;;
*) echo "$0: -a: hpcc or lammps, not '$app'" >&2; exit 2 ;;
esac
if [ -n "$icount" ]; then
	# This script again, without -i, in the guest.
	case " $* " in *" -r"*) ;; *) rounds=5 ;; esac
	case " $* " in *" -t"*) ;; *) budget=1500 ;; esac
	inner=()
	set -- "${args[@]}"
	while [ $# -gt 0 ]; do
		case $1 in
		-i) shift 2 ;;
		-i*) shift ;;
		*) inner+=("$1"); shift ;;
		esac
	done
	. "$top/scripts/lib.sh"
	bcs_load_kernels
	rel=$(bcs_release 6.1)
	vmout=$BUILD/bench/mpi-overhead-icount
	result=$BUILD/bench/mpi_overhead_${app}_icount.txt
	mkdir -p "$BUILD/bench" && rm -f "$result"
	make -s -C "$top/libbcsmpi" all tests/slices-openmpi &&
		make -s -C "$top/tools" bcsstat ||
		{ echo "$0: cannot build libbcsmpi and bcsstat" >&2; exit 1; }
	"$top/selftests/vm/run-vm.sh" --kernel "$rel" --smp 1 \
		--icount "$icount" --mem 2048 --timeout $((budget + 600)) \
		--quiet --out "$vmout" -- env NP="${NP:-3}" \
		OUT="$vmout/table.txt" MO_BED="run-vm.sh --icount $icount" \
		bench/mpi_overhead.sh -r "$rounds" -t "$budget" "${inner[@]}"
	rc=$?
	[ -s "$vmout/table.txt" ] ||
		{ echo "$0: no table (exit $rc; $vmout)" >&2; exit 1; }
	cp "$vmout/table.txt" "$result"
	cat "$result"
	echo "# written to $result" >&2
	exit $rc
fi
if [ "$cluster" = 1 ]; then
	# The defaults of the cluster, unless given.
	case " $* " in *" -r"*) ;; *) rounds=3 ;; esac
	case " $* " in *" -n"*) ;; *)
		size=400
		[ "$app" = lammps ] && size=8 ;;
	esac
	case " $* " in *" -t"*) ;; *) budget=1800 ;; esac
	. "$top/scripts/lib.sh"
	export MO_APP=$app MO_ROUNDS=$rounds MO_SIZE=$size MO_NODES=$nodes
	export MO_RESULT=$BUILD/bench/mpi_overhead_cluster.txt
	[ "$app" = lammps ] &&
		MO_RESULT=$BUILD/bench/mpi_overhead_lammps_cluster.txt
	# No round starts that would not end two minutes before the limit.
	export MO_DEADLINE=$((EPOCHSECONDS + budget - 120))
	mkdir -p "$BUILD/bench"
	rm -f "$MO_RESULT"
	BCS_CLUSTER_OUT=$BUILD/bench/mpi-overhead-cluster timeout "$budget" \
		"$top/selftests/cluster/run-cluster.sh" --nodes "$nodes" \
		--timeout "$budget" "$top/bench/mpi_overhead_run.sh"
	rc=$?
	[ -s "$MO_RESULT" ] || { echo "$0: no table (exit $rc)" >&2; exit 1; }
	cat "$MO_RESULT"
	exit $rc
fi
np=${NP:-2}
out=${OUT:-$top/build/bench/mpi_overhead.txt}
[ "$app" = hpcc ] || out=${OUT:-$top/build/bench/mpi_overhead_$app.txt}
libdir=${BCS_MPI_LIBDIR:-$top/libbcsmpi}
lib=$libdir/libbcsmpi-openmpi.so
bcsstat=$top/tools/bcsstat

prog=hpcc
pkg=hpcc
[ "$app" = lammps ] && prog=lmp pkg=lammps
if ! command -v "$prog" > /dev/null; then
	echo "# installing $pkg" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y "$pkg" > /dev/null ||
		{ echo "$0: cannot install $pkg" >&2; exit 1; }
fi
[ -r "$lib" ] || { echo "$0: no $lib (make -C libbcsmpi)" >&2; exit 1; }
command -v mpirun.openmpi > /dev/null ||
	{ echo "$0: no mpirun.openmpi (libopenmpi-dev)" >&2; exit 1; }

work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$(dirname "$out")"

# hpcc's input: HPL of N on a 1 x NP grid, the rest at its defaults.
# LAMMPS's is bench/in.melt, N x N x N cells.
if [ "$app" = hpcc ]; then
	sed -e "s/^1000 .*Ns/$size         Ns/" -e "s/^2 .*Ps/1            Ps/" \
	    -e "s/^2 .*Qs/$np            Qs/" \
	    /usr/share/doc/hpcc/examples/_hpccinf.txt > "$work/input"
fi

# The per-slice counts' slices: bcs.ko's, or a stand-in ring ticked every
# millisecond while every configuration runs.
statdev=""
case " ${configs[*]} " in
*" slices "*)
	if [ ! -c /dev/bcsstat ]; then
		ticker=$top/libbcsmpi/tests/slices-openmpi
		[ -x "$ticker" ] || make -s -C "$top/libbcsmpi" tests/slices-openmpi ||
			{ echo "$0: cannot build $ticker" >&2; exit 1; }
		statdev=$work/bcsstat
		"$ticker" --tick "$statdev" 1000 &
		ticker_pid=$!
		trap 'kill "$ticker_pid" 2>/dev/null; rm -rf "$work"' EXIT
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[ -s "$statdev" ] && break
			sleep 0.1
		done
	fi ;;
esac

# run CONFIG ROUND: one run of the application; on stdout, in
# microseconds, its wall time, the CPU time (user + system) of mpirun and
# the ranks, and LAMMPS's loop time (0 for hpcc).
run()
{
	local c=$1 r=$2 d=$work/$1.$2 TIMEFORMAT='%R %U %S'
	local env=()

	mkdir -p "$d/mpi"
	if [ "$app" = hpcc ]; then
		cp "$work/input" "$d/hpccinf.txt"
		set -- hpcc
	else
		set -- lmp -in "$top/bench/in.melt" -var n "$size" \
			-log "$d/log.lammps" -screen none
	fi
	case $c in
	without) ;;
	slices) env=("-x" "LD_PRELOAD=$lib" "-x" "BCS_MPI_STATS=on"
		 "-x" "BCS_MPI_SLICES=1024" "-x" "BCS_MPI_DIR=$d/mpi"
		 "-x" "BCS_JOB=$r")
		[ -n "$statdev" ] && env+=("-x" "BCS_MPI_STATDEV=$statdev") ;;
	*) env=("-x" "LD_PRELOAD=$lib" "-x" "BCS_MPI_STATS=$c"
		 "-x" "BCS_MPI_SLICES=0"
		 "-x" "BCS_MPI_DIR=$d/mpi" "-x" "BCS_JOB=$r") ;;
	esac
	{ time (cd "$d" && timeout 300 mpirun.openmpi --allow-run-as-root \
		--oversubscribe --mca btl self,vader -np "$np" \
		"${env[@]}" "$@" > "$d/stdout" 2>&1) ; } 2> "$d/time" ||
		return 1
	if [ "$app" = hpcc ]; then
		grep -q "^Success=1" "$d/hpccoutf.txt" &&
			grep -q "PASSED" "$d/hpccoutf.txt" &&
			! grep -q "FAILED" "$d/hpccoutf.txt" || return 1
	else
		# The last thermodynamic line (step 200), which every run
		# must give alike.
		grep -q "^Total wall time" "$d/log.lammps" || return 1
		awk '$1 == 200 && NF == 6' "$d/log.lammps" | tail -n 1 \
			> "$d/thermo"
		[ -s "$d/thermo" ] || return 1
	fi
	# LAMMPS's own time of its 200 steps ("Loop time of T on N procs"),
	# without the start-up; none for hpcc.
	loop=0
	[ "$app" = lammps ] && loop=$(awk '/^Loop time of/ { printf "%d", $4 * 1e6 }' \
		"$d/log.lammps")
	awk -v l="${loop:-0}" '{ printf "%d %d %d\n", $1 * 1e6, ($2 + $3) * 1e6, l }' \
		"$d/time"
}

declare -A times cpus loops
# The program, its libraries and input into the page cache first.
run without 0 > /dev/null || {
	echo "$0: the first run (unmeasured) failed:" >&2
	tail -n 5 "$work/without.0/stdout" >&2
	exit 1
}
rm -rf "$work/without.0"
start=$SECONDS
done_rounds=0
longest=0
for r in $(seq "$rounds"); do
	[ $((SECONDS - start + longest)) -lt "$budget" ] || break
	t_round=$SECONDS
	# Rotate the order: each configuration goes first in some round.
	for k in "${!configs[@]}"; do
		c=${configs[$(((k + r - 1) % ${#configs[@]}))]}
		t=$(run "$c" "$r") || {
			echo "$0: round $r, $c: $app failed or its checks did not pass:" >&2
			tail -n 5 "$work/$c.$r/stdout" >&2
			exit 1
		}
		read -r us cpu loop <<< "$t"
		times[$c]="${times[$c]:-} $us"
		cpus[$c]="${cpus[$c]:-} $cpu"
		loops[$c]="${loops[$c]:-} $loop"
		echo "# round $r $c: wall $us us, cpu $cpu us" >&2
	done
	done_rounds=$r
	[ $((SECONDS - t_round)) -gt "$longest" ] && longest=$((SECONDS - t_round))
done

# spread: of the numbers on stdin, the median, the smallest and the
# largest.
spread()
{
	tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 }
		END { print ((NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}

median()
{
	tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 }
		END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# LAMMPS: every run's last thermodynamic line the same.
same=""
if [ "$app" = lammps ]; then
	n=$(cat "$work"/*/thermo | sort -u | wc -l)
	[ "$n" = 1 ] || {
		echo "$0: the runs' results differ:" >&2
		cat "$work"/*/thermo >&2
		exit 1
	}
	same="; every run ended with the same state: $(cat "$work/without.1/thermo")"
fi

base=$(echo "${times[without]}" | median)
cbase=$(echo "${cpus[without]}" | median)
lbase=$(echo "${loops[without]}" | median)
{
	if [ "$app" = hpcc ]; then
		echo "libbcsmpi overhead on hpcc (HPL N=$size, 1x$np grid, Open MPI," \
		     "mpirun -np $np on $(hostname), $(nproc) CPUs)"
		echo "$done_rounds rounds, interleaved; every run passed hpcc's checks"
	else
		echo "libbcsmpi overhead on LAMMPS (LJ melt, $size^3 fcc cells," \
		     "$((4 * size * size * size)) atoms, 200 steps, Open MPI," \
		     "mpirun -np $np on $(hostname), $(nproc) CPUs)"
		echo "$done_rounds rounds, interleaved$same"
	fi
	echo "command: bench/mpi_overhead.sh -a $app -C $(IFS=,; echo "${configs[*]}") -r $rounds -n $size -t $budget${MO_BED:+ (in a guest, $MO_BED)}"
	case " ${configs[*]} " in *" slices "*)
		echo "slices: per-slice counts from ${statdev:-/dev/bcsstat}${statdev:+ (a stand-in ring, a slice a millisecond)}" ;;
	esac
	echo "wall: mpirun's, median of the runs (min .. max); cpu: user + system of"
	echo "mpirun and the ranks; each against the median of \"without\""
	[ "$app" = lammps ] &&
		echo "loop: LAMMPS's own \"Loop time\" of its 200 steps (no start-up), median"
	printf "%-8s %4s %9s %19s %8s %9s %8s" Config Runs "Wall(s)" \
		"(min .. max)" "vs w/o" "CPU(s)" "vs w/o"
	[ "$app" = lammps ] && printf " %9s %19s %8s" "Loop(s)" "(min .. max)" "vs w/o"
	echo
	for c in "${configs[@]}"; do
		read -r m lo hi <<< "$(echo "${times[$c]}" | spread)"
		cm=$(echo "${cpus[$c]}" | median)
		n=$(echo "${times[$c]}" | wc -w)
		awk -v c="$c" -v n="$n" -v m="$m" -v lo="$lo" -v hi="$hi" \
		    -v b="$base" -v cm="$cm" -v cb="$cbase" 'BEGIN {
			printf "%-8s %4d %9.3f %8.3f .. %8.3f %+7.2f%% %9.3f %+7.2f%%",
			c, n, m / 1e6, lo / 1e6, hi / 1e6, (m / b - 1) * 100,
			cm / 1e6, (cm / cb - 1) * 100 }'
		if [ "$app" = lammps ]; then
			read -r lm llo lhi <<< "$(echo "${loops[$c]}" | spread)"
			awk -v m="$lm" -v lo="$llo" -v hi="$lhi" -v b="$lbase" 'BEGIN {
				printf " %9.3f %8.3f .. %8.3f %+7.2f%%",
				m / 1e6, lo / 1e6, hi / 1e6, (b ? m / b - 1 : 0) * 100 }'
		fi
		echo
	done
} | tee "$out"

last=$work/on.$done_rounds/mpi
if [ -x "$bcsstat" ] && [ -d "$last" ]; then
	{
		echo
		echo "bcsstat mpi --job $done_rounds (the last \"on\" run):"
		"$bcsstat" mpi --job "$done_rounds" "$last"
	} | tee -a "$out"
fi
last=$work/slices.$done_rounds/mpi
if [ -x "$bcsstat" ] && [ -d "$last" ]; then
	{
		echo
		echo "bcsstat mpi --slices --rank 0 (the last \"slices\" run, its newest slices):"
		"$bcsstat" mpi --slices --rank 0 "$last" | tail -n 5
	} | tee -a "$out"
fi

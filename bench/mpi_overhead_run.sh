#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster side of bench/mpi_overhead.sh -c: run by
# selftests/cluster/run-cluster.sh as a test script, on guests with bcsd
# up.  Debian's hpcc (or, with MO_APP=lammps, LAMMPS's LJ melt of
# bench/in.melt) across the guests, one rank per node (mpirun on node1,
# the others reached over SSH as test-mpi.sh reaches them), each run in
# a cluster job of its own (bcsctl run --job J), in three configurations
# interleaved round by round, the order rotating:
#
#   without  bcsctl run --job J -- hpcc
#   off      bcsctl run --job J --mpi-stats, BCS_MPI_STATS=off
#   on       bcsctl run --job J --mpi-stats: counters of every primitive
#
# Every run must pass hpcc's own checks (Success=1, HPL's residuals
# PASSED, none FAILED); every LAMMPS run must end, all in the same state
# (the last thermodynamic line), and its own "Loop time" of the 200
# steps, which leaves out the start-up, is tabled beside the wall time.
# The time is mpirun's wall time on node1 in the guests' emulated clock:
# only ratios within the run mean anything.  The "on" runs' tables come
# from bcsstat mpi --job J on node2 with no file given, gathered through
# bcsd from every node; the last one is kept.  Prints TAP, the table in
# its notes, and writes the table to $MO_RESULT.
#
# Environment: MO_APP (hpcc or lammps), MO_ROUNDS (default 3), MO_SIZE
# (HPL's N, default 400, the other tests sized from it; LAMMPS's cells
# per side), MO_DEADLINE (epoch seconds: no round starts that would not
# end before it), MO_RESULT.

# shellcheck source=../selftests/cluster/lib.sh disable=SC2154 # nr_nodes, PY: lib.sh
. "$CL_DIR/lib.sh"

app=${MO_APP:-hpcc}
rounds=${MO_ROUNDS:-3}
size=${MO_SIZE:-400}
deadline=${MO_DEADLINE:-$((EPOCHSECONDS + 3600))}
result=${MO_RESULT:-$BUILD/bench/mpi_overhead_cluster.txt}
lib=$CL_DIR/../../libbcsmpi/libbcsmpi-openmpi.so
dir=$SHARE/$app
configs=(without off on)
prog=hpcc
[ "$app" = lammps ] && prog=lmp

missing=""
for c in $prog mpirun dropbear dropbearkey ssh ssh-keygen; do
	command -v "$c" > /dev/null || missing+=" $c"
done
[ -r "$lib" ] || missing+=" $lib"
if [ -n "$missing" ]; then
	ok 1 "$prog, Open MPI, dropbear and libbcsmpi installed (missing:$missing)"
	tap_end
fi
rm -rf "$dir"
mkdir -p "$dir"
# hpcc's input: HPL of N on a 1 x NODES grid, the rest at its defaults;
# LAMMPS's: bench/in.melt, N x N x N cells.
if [ "$app" = hpcc ]; then
	sed -e "s/^1000 .*Ns/$size         Ns/" -e "s/^2 .*Ps/1            Ps/" \
	    -e "s/^2 .*Qs/$nr_nodes            Qs/" \
	    /usr/share/doc/hpcc/examples/_hpccinf.txt > "$dir/hpccinf.txt"
	cmd="hpcc"
else
	cmd="lmp -in $CL_DIR/../../bench/in.melt -var n $size -log log.lammps -screen none"
fi
# The key mpirun logs in with; only the guests' SSH servers accept it.
rm -rf "$SHARE/mpi"
mkdir -p "$SHARE/mpi"
ssh-keygen -q -t ed25519 -N '' -C bcs-mpi-overhead -f "$SHARE/mpi/id"
on_each "$SHARE/out/mo-sshd" start_sshd
rc=$?
[ $rc = 0 ] || diag "$(cat "$SHARE/out/mo-sshd"/?)"
ok $rc "an SSH server on every node, for mpirun"
[ $rc = 0 ] || tap_end

# run CONFIG ROUND: one run from node1 in a job of its own, which is
# destroyed after it (an "on" run's table gathered first, into
# $SHARE/out/mo-table); sets job, us (its wall time in microseconds) and
# loop (LAMMPS's loop time, microseconds; 0 for hpcc), or fails after
# saying why.
run()
{
	local c=$1 r=$2 d=$dir/$1.$2 j opt="" env="" out rc s e
	job=""
	us=""
	loop=0
	j=$(on 1 bcsctl job create) || { diag "job create: $j"; return 1; }
	mkdir -p "$d"
	[ "$app" = hpcc ] && cp "$dir/hpccinf.txt" "$d/"
	case $c in
	off) opt=--mpi-stats env="-x BCS_MPI_STATS=off" ;;
	on) opt=--mpi-stats ;;
	esac
	# shellcheck disable=SC2016 # expanded in the guest
	out=$(on 1 -t 1800 'mpi_env
		: > "$STATE/hostfile1"
		for n in $CL_NODES; do
			echo "$CL_NET.$n slots=1" >> "$STATE/hostfile1"
		done
		cd '"$d"' || exit 1
		s=$EPOCHREALTIME
		mpirun -np '"$nr_nodes"' --hostfile "$STATE/hostfile1" \
			--map-by node '"$env"' "$BCS_SRC/tools/bcsctl" run \
			--job '"$j $opt"' -- '"$cmd"' > stdout 2>&1 < /dev/null
		rc=$?
		e=$EPOCHREALTIME
		echo "$rc ${s/./} ${e/./}"')
	read -r rc s e <<< "$out"
	[ "$c" = on ] && on 2 "bcsstat mpi --job $j" > "$SHARE/out/mo-table" 2>&1
	on 1 "bcsctl job destroy $j" > /dev/null
	if [ "$app" = lammps ]; then
		# The last thermodynamic line (step 200), alike in every run.
		awk '$1 == 200 && NF == 6' "$d/log.lammps" 2>/dev/null |
			tail -n 1 > "$d/thermo"
		loop=$(awk '/^Loop time of/ { printf "%d", $4 * 1e6 }' \
			"$d/log.lammps" 2>/dev/null)
		if [ "$rc" != 0 ] || [ ! -s "$d/thermo" ] || [ -z "$loop" ]; then
			diag "round $r, $c: mpirun status '$rc'" "$(tail -n 5 "$d/stdout")"
			return 1
		fi
	elif [ "$rc" != 0 ] || ! grep -q "^Success=1" "$d/hpccoutf.txt" ||
	   ! grep -q PASSED "$d/hpccoutf.txt" || grep -q FAILED "$d/hpccoutf.txt"; then
		diag "round $r, $c: mpirun status '$rc'" "$(tail -n 5 "$d/stdout")"
		return 1
	fi
	job=$j
	us=$((e - s))
}

declare -A times loops
start=$EPOCHSECONDS
longest=0
done_rounds=0
last_on=""
for r in $(seq "$rounds"); do
	[ $((EPOCHSECONDS + longest)) -lt "$deadline" ] || break
	t_round=$EPOCHSECONDS
	for k in 0 1 2; do
		c=${configs[$(((k + r - 1) % 3))]}
		run "$c" "$r"
		ok $? "round $r, $c: $prog on $nr_nodes nodes passed its checks (job $job, $us us)"
		[ -n "$us" ] || tap_end
		times[$c]="${times[$c]:-} $us"
		loops[$c]="${loops[$c]:-} $loop"
		[ "$c" = on ] && last_on=$job
	done
	done_rounds=$r
	[ $((EPOCHSECONDS - t_round)) -gt "$longest" ] &&
		longest=$((EPOCHSECONDS - t_round))
done
diag "$done_rounds rounds in $((EPOCHSECONDS - start)) s"
if [ "$app" = lammps ]; then
	n=$(cat "$dir"/*/thermo | sort -u | wc -l)
	[ "$n" = 1 ]
	ok $? "every LAMMPS run ended in the same state ($n distinct)"
fi

{
	if [ "$app" = hpcc ]; then
		echo "libbcsmpi overhead on hpcc (HPL N=$size, 1x$nr_nodes grid, Open MPI," \
		     "one rank on each of $nr_nodes guests, each run a bcs job)"
		echo "$done_rounds rounds, interleaved; every run passed hpcc's checks"
	else
		echo "libbcsmpi overhead on LAMMPS (LJ melt, $size^3 fcc cells, 200 steps," \
		     "Open MPI, one rank on each of $nr_nodes guests, each run a bcs job)"
		echo "$done_rounds rounds, interleaved; every run ended in the same state"
	fi
	echo "command: bench/mpi_overhead.sh -c -a $app -r $rounds -n $size" \
	     "$([ "$nr_nodes" = 3 ] || echo "-N $nr_nodes")"
	echo "wall: mpirun's on node1, emulated time, median (min .. max)," \
	     "against the median of \"without\""
	[ "$app" = lammps ] &&
		echo "loop: LAMMPS's own \"Loop time\" of its 200 steps (no start-up)"
	for c in "${configs[@]}"; do
		echo "$c ${times[$c]}"
		echo "$c ${loops[$c]}"
	done | "$PY" -c '
import statistics, sys
lines = [l.split() for l in sys.stdin]
rows = [(w[0], [int(x) for x in w[1:]]) for w in lines[0::2]]
loops = dict((w[0], [int(x) for x in w[1:]]) for w in lines[1::2])
base = statistics.median(dict(rows)["without"])
lbase = statistics.median(loops["without"])
cell = lambda v, b: "%9.3f %9.3f .. %9.3f %+7.2f%%" % (
    statistics.median(v) / 1e6, min(v) / 1e6, max(v) / 1e6,
    (statistics.median(v) / b - 1) * 100 if b else 0.0)
head = "%-8s %4s %9s %21s %8s" % ("Config", "Runs", "Wall(s)",
                                  "(min .. max)", "vs w/o")
if lbase:
    head += " %9s %21s %8s" % ("Loop(s)", "(min .. max)", "vs w/o")
print(head)
for c, v in rows:
    print("%-8s %4d %s%s" % (c, len(v), cell(v, base),
                             " " + cell(loops[c], lbase) if lbase else ""))'
} > "$result"
diag "$(cat "$result")"
ok 0 "the table of $done_rounds rounds in $result"

if [ -n "$last_on" ]; then
	{
		echo
		echo "bcsstat mpi --job $last_on on node2, through bcsd (the last \"on\" run):"
		cat "$SHARE/out/mo-table"
	} >> "$result"
	diag "$(cat "$SHARE/out/mo-table")"
	grep -q "^through bcsd: " "$SHARE/out/mo-table" &&
		grep -q "^job $last_on: $nr_nodes ranks" "$SHARE/out/mo-table"
	ok $? "bcsstat mpi --job $last_on on node2: the ranks of every node, through bcsd"
fi
tap_end

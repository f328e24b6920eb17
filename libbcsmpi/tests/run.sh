#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host tests of libbcsmpi with each MPI installed (no module needed):
# pattern.c under mpirun with the library preloaded, and bcsstat mpi
# reading what the ranks wrote.  Per MPI:
#   - exact calls and bytes of every primitive of every rank, the merged
#     table, the histograms of the selected primitives only, and the
#     identity computation + communication = MPI_Init .. MPI_Finalize
#     within 0.01 % (check_stats.py);
#   - a rank killed with SIGKILL mid-run leaves a readable file, marked
#     incomplete, with exactly the calls it had made; one that calls
#     MPI_Abort too, with MPI_Abort counted among the other functions;
#   - a rank that computes before each Allreduce while the others wait
#     is the fastest in Allreduce and the slowest in computation;
#   - by default, histograms of the process rows only, and one call of
#     the polled MPI_Test in 32 timed (BCS_MPI_POLL), every one counted;
#   - BCS_MPI_STATS=off writes no file; a bad BCS_MPI_STATS says so on
#     stderr, writes no file and the program still succeeds;
#   - bcsctl run --mpi-stats under mpirun -np 2 preloads the library of
#     the program's MPI, found in the build tree, and says so when the
#     library is not where BCS_MPI_LIBDIR says;
#   - bcsstat mpi --hist and bcsstat plot mpi of the selected primitives;
#   - the same pattern with the library built with ASan and UBSan: the
#     same counts, and no report from any rank; its regions, call sites
#     and the job's report likewise;
#   - bcsctl stats enable|disable --mpi changing the selection of a
#     running job of 2 ranks between two phases of its calls;
#   - ranks of a normal user against a hostile job directory (FIFO,
#     link, another user's files and lock): MPI_Init returns, profiling
#     off or the file ignored (BCS_MPI_TEST_ONLY=hostile: these alone);
#   - the Fortran programs (mpif.h, mpi_f08): every call counted;
#   - the calls per slice (tests/slices.c) under a stand-in of
#     /dev/bcsstat (BCS_MPI_STATDEV) whose head the program moves between
#     phases: exactly each phase's point-to-point and collective calls
#     and bytes in its slice, the newest BCS_MPI_SLICES kept, only the
#     window's slices once one is armed and each of their calls; without
#     the device, none and the program unharmed; a file of version 3
#     still read (BCS_MPI_TEST_ONLY=slices: these alone);
#   - MPI_Pcontrol's regions and pause, call sites resolved to
#     pattern.c:LINE, the job's report and bcsstat mpi --ranks; no region
#     without BCS_MPI_REGIONS, no report with BCS_MPI_REPORT=0, no link
#     followed to write it (BCS_MPI_TEST_ONLY=mpip: these alone);
# and bcsctl run --mpi-stats on programs of no MPI, bcsstat mpi's errors
# on files that are not statistics.  An MPI
# whose library or mpirun is missing is skipped with the reason.
#
# Ranks: BCS_MPI_TEST_NP (default 4) for Open MPI, which yields the CPU
# while it waits; 2 for MPICH (ch4:ucx polls, and four polling ranks on
# two busy cores make a run take minutes).  Output is TAP.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$PWD
BCSSTAT=${BCSSTAT:-$top/../tools/bcsstat}
BCSCTL=${BCSCTL:-$top/../tools/bcsctl}
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

n=0
failed=0

result()	# result ok|fail|skip NAME [REASON]
{
	n=$((n + 1))
	case $1 in
	ok)   echo "ok $n $2" ;;
	skip) echo "ok $n $2 # SKIP $3" ;;
	*)    echo "not ok $n $2"; failed=$((failed + 1)) ;;
	esac
}

# mpirun_of MPI: the launcher and its options for a single host.
mpirun_of()
{
	case $1 in
	openmpi)
		echo "mpirun.openmpi --allow-run-as-root --oversubscribe" \
		     "--mca btl self,vader -np ${BCS_MPI_TEST_NP:-4}" ;;
	mpich)
		echo "mpirun.mpich -np ${BCS_MPI_TEST_NP_MPICH:-2}" ;;
	esac
}

# run MPI DIR OUT [ENV...] -- ARGS: pattern-MPI under mpirun, the library
# preloaded, files into DIR; stdout and stderr into OUT.  Its status.
run()
{
	local mpi=$1 dir=$2 out=$3 envs=()

	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	mkdir -p "$dir"
	# shellcheck disable=SC2046
	timeout -k 5 60 $(mpirun_of "$mpi") env -u BCS_MPI_POLL \
		LD_PRELOAD="$top/libbcsmpi-$mpi.so" BCS_MPI_DIR="$dir" \
		"${envs[@]}" "tests/pattern-$mpi" "$@" > "$out" 2>&1
}

# run_prog MPI PROG DIR OUT [ENV...]: tests/PROG-MPI as run() runs the
# pattern, without arguments.
run_prog()
{
	local mpi=$1 prog=$2 dir=$3 out=$4

	shift 4
	mkdir -p "$dir"
	# shellcheck disable=SC2046
	timeout -k 5 60 $(mpirun_of "$mpi") env -u BCS_MPI_POLL \
		LD_PRELOAD="$top/libbcsmpi-$mpi.so" BCS_MPI_DIR="$dir" \
		"$@" "tests/$prog-$mpi" > "$out" 2>&1
}

# test_fortran MPI NP: the Fortran programs (mpif.h and mpi_f08) make
# the calls fortran.f90 says, each counted in every rank, with its bytes;
# those between MPI_Pcontrol(0) and MPI_Pcontrol(1) not.
test_fortran()
{
	local mpi=$1 np=$2 prog d

	for prog in fortran fortran08; do
		if [ ! -x "tests/$prog-$mpi" ]; then
			result skip "$mpi: $prog" "no mpif90.$mpi"
			continue
		fi
		d=$TMP/$mpi-$prog
		if run_prog "$mpi" "$prog" "$d" "$TMP/out" BCS_JOB="$prog" &&
		   "$BCSSTAT" mpi --json "$d"/"$prog".*.bcsmpi > "$TMP/json" &&
		   python3 -c '
import json, sys
np = int(sys.argv[1])
ranks = {r["rank"]: r for r in json.load(sys.stdin)["ranks"]}
bad = []
if sorted(ranks) != list(range(np)):
    bad.append("ranks %s" % sorted(ranks))
for k, r in ranks.items():
    p = r["primitives"]
    want = {"MPI_Allreduce": (10, 640), "MPI_Barrier": (5, 0),
            "MPI_Bcast": (2, 128), "MPI_Isend": (6, 600),
            "MPI_Irecv": (6, 600), "MPI_Waitall": (6, 0),
            "MPI_Send": (3 if k == 0 else 0, 1200 if k == 0 else 0),
            "MPI_Recv": (3 if k == 1 else 0, 1200 if k == 1 else 0),
            "MPI_Comm_rank": (1, 0), "MPI_Comm_size": (1, 0)}
    for name, (calls, nbytes) in want.items():
        got = (p[name]["calls"], p[name]["bytes"])
        if got != (calls, nbytes):
            bad.append("rank %d %s %s, want %s" % (k, name, got,
                                                    (calls, nbytes)))
    if p["MPI_Init"]["calls"] + p["MPI_Init_thread"]["calls"] != 1 or \
       not r["complete"]:
        bad.append("rank %d: MPI_Init or MPI_Finalize not seen" % k)
for b in bad:
    print("#", b)
sys.exit(1 if bad else 0)' "$np" < "$TMP/json" &&
		   grep -q "^MPI_Allreduce  *$((np * 10)) " "$d/$prog.report"
		then
			result ok "$mpi: $prog: every call counted, with its bytes"
		else
			cat "$TMP/out" >&2
			result fail "$mpi: $prog: every call counted, with its bytes"
		fi
	done
}

# test_regions MPI NP: the pattern's regions (BCS_MPI_REGIONS=1) and call
# sites (BCS_MPI_SITES=1) in the job's report and bcsstat mpi; without
# BCS_MPI_REGIONS no region; BCS_MPI_REPORT=0 no report; a link where
# the report goes is not followed.
test_regions()
{
	local mpi=$1 np=$2 d=$TMP/$1-regions rep

	rep=$d/reg.report
	if run "$mpi" "$d" "$TMP/out" BCS_JOB=reg BCS_MPI_REGIONS=1 \
		BCS_MPI_SITES=1 -- regions &&
	   grep -Eq "^outer +$np +$np " "$rep" &&
	   grep -Eq "^  MPI_Allreduce +$((np * 10)) calls" "$rep" &&
	   grep -Eq "^inner +$np +$np " "$rep" &&
	   grep -Eq "^  MPI_Bcast +$((np * 5)) calls" "$rep" &&
	   grep -Eq "^bad_name_ +$np +$np " "$rep" &&
	   grep -Eq "^  MPI_Barrier +$((np * 3)) calls" "$rep" &&
	   grep -Eq "^MPI_Barrier +$((np * 3)) " "$rep" &&
	   grep -Eq "^ +[0-9]+ MPI_Allreduce +$((np * 10)) .*pattern\.c:[0-9]+ \(regions\)$" "$rep" &&
	   grep -Eq "^ +[0-9]+ MPI_Bcast +$((np * 5)) .*pattern\.c:[0-9]+ \(regions\)$" "$rep" &&
	   [ "$(awk '/^--- MPI time per rank/ { f = 1; next } /^$/ { f = 0 }
		   f && $1 ~ /^[0-9]+$/' "$rep" | wc -l)" = "$np" ] &&
	   "$BCSSTAT" mpi --ranks "$d"/reg.*.bcsmpi > "$TMP/ranks" &&
	   [ "$(grep -Ec "^ +[0-9]+ +[^ ]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +20 +960$" "$TMP/ranks")" = "$np" ] &&
	   "$BCSSTAT" mpi "$d"/reg.*.bcsmpi > "$TMP/table" &&
	   grep -q "^Regions (MPI_Pcontrol):" "$TMP/table" &&
	   "$BCSSTAT" mpi --report "$d"/reg.*.bcsmpi > "$TMP/report" &&
	   grep -Eq "^  MPI_Bcast +$((np * 5)) calls" "$TMP/report" &&
	   { "$BCSSTAT" mpi --ranks --json "$d"/reg.*.bcsmpi > /dev/null 2>&1;
	     [ $? = 2 ]; } &&
	   grep -q "largest gap of a rank 0\.0" "$TMP/table"; then
		result ok "$mpi: regions, MPI_Pcontrol(0), call sites, report, --ranks"
	else
		cat "$TMP/out" "$rep" "$TMP/ranks" >&2 2>/dev/null
		result fail "$mpi: regions, MPI_Pcontrol(0), call sites, report, --ranks"
	fi

	d=$TMP/$mpi-noregions
	mkdir -p "$d"
	ln -s "$TMP/$mpi-target" "$d/noreg.report"
	if run "$mpi" "$d" "$TMP/out" BCS_JOB=noreg -- regions &&
	   [ ! -e "$TMP/$mpi-target" ] &&
	   grep -q "cannot create .*noreg.report" "$TMP/out" &&
	   rm "$d/noreg.report" &&
	   run "$mpi" "$d" "$TMP/out" BCS_JOB=noreg -- regions &&
	   grep -q "^(no region entered" "$d/noreg.report" &&
	   grep -q "^(no call site kept" "$d/noreg.report" &&
	   run "$mpi" "$TMP/$mpi-norep" "$TMP/out" BCS_JOB=norep \
		BCS_MPI_REPORT=0 -- regions &&
	   ! ls "$TMP/$mpi-norep"/*.report > /dev/null 2>&1; then
		result ok "$mpi: no regions by default, BCS_MPI_REPORT=0, no link followed"
	else
		cat "$TMP/out" >&2
		result fail "$mpi: no regions by default, BCS_MPI_REPORT=0, no link followed"
	fi
}

# wait_file PATH: until it exists, 60 s at most.
wait_file()
{
	local n=0

	while [ "$n" -lt 600 ]; do
		[ -e "$1" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	echo "no $1 after 60 s" >&2
	return 1
}

# test_hist MPI NP FILE...: bcsstat mpi --hist and plot mpi on the files
# of the full pattern (Allreduce and Isend selected).
test_hist()
{
	local mpi=$1 np=$2 png=$TMP/$1-isend.png

	shift 2
	if "$BCSSTAT" mpi --hist Isend "$@" > "$TMP/hist" &&
	   grep -q "^MPI_Isend in $np rank files: $((np * 200)) calls, $((np * 200)) with" \
		"$TMP/hist" &&
	   grep -q "^MPI_Isend latency, $((np * 200)) values" "$TMP/hist" &&
	   grep -Eq "^  1 MiB +1[.0-9]* MiB +$((np * 200)) #+$" "$TMP/hist" &&
	   "$BCSSTAT" mpi --hist mpi_allreduce "$@" |
		grep -Eq "^  64 B +[0-9]+ B +$((np * 1000)) #+$" &&
	   ! "$BCSSTAT" mpi --hist Barrier "$@" 2> "$TMP/err" &&
	   grep -q "MPI_Barrier has no distributions in these files" \
		"$TMP/err" &&
	   ! "$BCSSTAT" mpi --hist Bogus "$@" 2> /dev/null &&
	   "$BCSSTAT" mpi --hist comp "$@" |
		grep -q "^Comp Granularity latency, $((np * 1252)) values"; then
		result ok "$mpi: bcsstat mpi --hist"
	else
		cat "$TMP/hist" "$TMP/err" >&2
		result fail "$mpi: bcsstat mpi --hist"
	fi
	if ! command -v gnuplot > /dev/null; then
		result skip "$mpi: bcsstat plot mpi" "no gnuplot"
	elif "$BCSSTAT" plot mpi -o "$png" --hist Isend "$@" &&
	     [ "$(head -c 4 "$png" | tail -c 3)" = PNG ] &&
	     ! "$BCSSTAT" plot mpi -o "$png" "$@" 2> /dev/null; then
		result ok "$mpi: bcsstat plot mpi"
	else
		result fail "$mpi: bcsstat plot mpi"
	fi
}

# test_asan MPI NP: the whole pattern again with the library built with
# ASan and UBSan (obj/asan/, make test) preloaded after the ASan runtime
# into every rank: the same counts, bytes and histograms, and no report
# of a bad access or undefined behaviour in any rank (leaks are not
# checked: the MPI's own would drown the library's).
test_asan()
{
	local mpi=$1 np=$2 d=$TMP/$1-asan lib=$top/obj/asan/libbcsmpi-$1.so
	local rt files bad rc

	rt=$(${CC:-cc} -print-file-name=libasan.so)
	if [ ! -f "$lib" ] || [ ! -e "$rt" ]; then
		result skip "$mpi: under ASan and UBSan" "no $lib or ASan runtime"
		return
	fi
	# The later LD_PRELOAD of env's arguments is the one that counts.
	run "$mpi" "$d" "$TMP/out" LD_PRELOAD="$rt $lib" BCS_JOB="a$mpi" \
		ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
		BCS_MPI_STATS=Allreduce,MPI_Isend BCS_MPI_RESOLUTION=3 \
		BCS_MPI_POLL=1 --
	rc=$?
	files=("$d"/*.bcsmpi)
	# The ranks' reports come on their stderr, in $TMP/out.
	bad=$(grep -cE "ERROR: AddressSanitizer|runtime error:" "$TMP/out")
	if [ "$rc" = 0 ] && [ "$bad" = 0 ] && [ "${#files[@]}" = "$np" ] &&
	   "$BCSSTAT" mpi --json "${files[@]}" > "$TMP/json" &&
	   tests/check_stats.py full "$np" 3 < "$TMP/json"; then
		result ok "$mpi: under ASan and UBSan, the same counts and no report"
	else
		echo "mpirun: $rc; $bad reports; files: $(ls "$d")" >&2
		grep -m1 -A20 -E "ERROR: AddressSanitizer|runtime error:" \
			"$TMP/out" >&2 || tail -5 "$TMP/out" >&2
		result fail "$mpi: under ASan and UBSan, the same counts and no report"
	fi
	# The regions, call sites and the job's report too.
	run "$mpi" "$d-reg" "$TMP/out" LD_PRELOAD="$rt $lib" BCS_JOB=areg \
		ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
		BCS_MPI_REGIONS=1 BCS_MPI_SITES=1 -- regions
	rc=$?
	bad=$(grep -cE "ERROR: AddressSanitizer|runtime error:" "$TMP/out")
	if [ "$rc" = 0 ] && [ "$bad" = 0 ] &&
	   grep -Eq "^outer +$np +$np " "$d-reg/areg.report"; then
		result ok "$mpi: regions, call sites, report under ASan and UBSan"
	else
		grep -m1 -A20 -E "ERROR: AddressSanitizer|runtime error:" \
			"$TMP/out" >&2 || tail -5 "$TMP/out" >&2
		result fail "$mpi: regions, call sites, report under ASan and UBSan"
	fi
}

test_mpi()
{
	local mpi=$1 np d files rc

	case $mpi in
	openmpi) np=${BCS_MPI_TEST_NP:-4} ;;
	*) np=${BCS_MPI_TEST_NP_MPICH:-2} ;;
	esac
	if [ ! -f "libbcsmpi-$mpi.so" ] || [ ! -x "tests/pattern-$mpi" ]; then
		result skip "$mpi" "libbcsmpi-$mpi.so not built (no mpicc.$mpi)"
		return
	fi
	if ! command -v "mpirun.$mpi" > /dev/null; then
		result skip "$mpi" "mpirun.$mpi not installed"
		return
	fi

	# The whole pattern, histograms for two primitives at resolution 3.
	d=$TMP/$mpi-full
	if run "$mpi" "$d" "$TMP/out" BCS_JOB="t$mpi" \
			BCS_MPI_STATS=Allreduce,MPI_Isend \
			BCS_MPI_RESOLUTION=3 BCS_MPI_POLL=1 --; then
		files=("$d"/*.bcsmpi)
		if [ "${#files[@]}" = "$np" ] &&
		   "$BCSSTAT" mpi --json "${files[@]}" > "$TMP/json" &&
		   tests/check_stats.py full "$np" 3 < "$TMP/json" &&
		   "$BCSSTAT" mpi "${files[@]}" > "$TMP/table" &&
		   grep -Eq "^MPI_Allreduce +$((np * 1000)) " "$TMP/table" &&
		   grep -q "^Comm Overhead" "$TMP/table" &&
		   grep -q "largest gap of a rank 0\.0" "$TMP/table"; then
			result ok "$mpi: counts, bytes, histograms, identity"
		else
			ls "$d" >&2
			cat "$TMP/table" >&2 2>/dev/null
			result fail "$mpi: counts, bytes, histograms, identity"
		fi
		test_hist "$mpi" "$np" "${files[@]}"
	else
		cat "$TMP/out" >&2
		result fail "$mpi: counts, bytes, histograms, identity"
	fi
	test_asan "$mpi" "$np"
	test_fortran "$mpi" "$np"
	test_regions "$mpi" "$np"

	# An all-to-all over an inter-communicator between rank 0 and the
	# others: each rank's bytes are those for the other group's
	# processes (rank 0: np - 1 times 1000), not its own group's.
	d=$TMP/$mpi-inter
	if run "$mpi" "$d" "$TMP/out" BCS_JOB=inter BCS_MPI_POLL=1 -- \
			intercomm &&
	   "$BCSSTAT" mpi --json "$d"/inter.*.bcsmpi > "$TMP/json" &&
	   python3 -c '
import json, sys
np = int(sys.argv[1])
ranks = {r["rank"]: r["primitives"] for r in json.load(sys.stdin)["ranks"]}
got = {k: v["MPI_Alltoallv"]["bytes"] for k, v in ranks.items()}
want = {k: 1000 * (np - 1 if k == 0 else 1) for k in range(np)}
print("# Alltoallv bytes per rank:", got, "want", want)
sys.exit(got != want)' "$np" < "$TMP/json"; then
		result ok "$mpi: Alltoallv on an inter-communicator counts the remote group"
	else
		cat "$TMP/out" >&2
		result fail "$mpi: Alltoallv on an inter-communicator counts the remote group"
	fi

	# Rank 1 kills itself after 500 Allreduce; mpirun fails.
	d=$TMP/$mpi-kill
	run "$mpi" "$d" "$TMP/out" BCS_JOB=kill -- 1
	rc=$?
	files=("$d"/kill.*.1.*.bcsmpi)
	if [ "$rc" != 0 ] && [ -f "${files[0]}" ] &&
	   "$BCSSTAT" mpi --json "${files[0]}" > "$TMP/json" &&
	   tests/check_stats.py killed < "$TMP/json" &&
	   "$BCSSTAT" mpi "${files[0]}" | grep -q "incomplete"; then
		result ok "$mpi: a rank killed with SIGKILL leaves its file"
	else
		echo "mpirun: $rc; files: $(ls "$d")" >&2
		result fail "$mpi: a rank killed with SIGKILL leaves its file"
	fi

	# Rank 1 calls MPI_Abort there instead: counted, with its name.
	d=$TMP/$mpi-abort
	run "$mpi" "$d" "$TMP/out" BCS_JOB=abort -- abort
	rc=$?
	files=("$d"/abort.*.1.*.bcsmpi)
	if [ "$rc" != 0 ] && [ -f "${files[0]}" ] &&
	   "$BCSSTAT" mpi --json "${files[0]}" > "$TMP/json" &&
	   tests/check_stats.py killed abort < "$TMP/json" &&
	   "$BCSSTAT" mpi "${files[0]}" | grep -Eq "^MPI_Abort +1 "; then
		result ok "$mpi: MPI_Abort counted as another function"
	else
		echo "mpirun: $rc; files: $(ls "$d")" >&2
		result fail "$mpi: MPI_Abort counted as another function"
	fi

	d=$TMP/$mpi-default
	if run "$mpi" "$d" "$TMP/out" -- &&
	   "$BCSSTAT" mpi --json "$d"/*.bcsmpi > "$TMP/json" &&
	   tests/check_stats.py default "$np" < "$TMP/json"; then
		result ok "$mpi: by default counters, process histograms only"
	else
		result fail "$mpi: by default counters, process histograms only"
	fi

	# Rank 1 computes before each Allreduce: the spread names it.
	d=$TMP/$mpi-imbalance
	if run "$mpi" "$d" "$TMP/out" -- imbalance 1 &&
	   "$BCSSTAT" mpi --json "$d"/*.bcsmpi > "$TMP/json" &&
	   tests/check_stats.py imbalance "$np" 1 < "$TMP/json"; then
		result ok "$mpi: the rank the others wait for, from the spread"
	else
		"$BCSSTAT" mpi "$d"/*.bcsmpi >&2
		result fail "$mpi: the rank the others wait for, from the spread"
	fi

	d=$TMP/$mpi-off
	if run "$mpi" "$d" "$TMP/out" BCS_MPI_STATS=off -- &&
	   [ -z "$(ls -A "$d")" ]; then
		result ok "$mpi: BCS_MPI_STATS=off writes nothing"
	else
		result fail "$mpi: BCS_MPI_STATS=off writes nothing"
	fi

	# bcsctl run --mpi-stats finds the MPI and the library itself (here
	# in the build tree); no module: --no-attach.
	d=$TMP/$mpi-bcsctl
	mkdir -p "$d"
	# shellcheck disable=SC2046
	if timeout -k 5 60 $(mpirun_of "$mpi" | sed 's/-np [0-9]*/-np 2/') \
		env -u LD_PRELOAD -u BCS_MPI_STATS -u BCS_JOB -u BCS_MPI_LIBDIR \
		BCS_MPI_DIR="$d" "$BCSCTL" run --job 77 --mpi-stats --no-attach \
		-- "tests/pattern-$mpi" > "$TMP/out" 2>&1 &&
	   files=("$d"/77.*.bcsmpi) && [ "${#files[@]}" = 2 ] &&
	   "$BCSSTAT" mpi --json "${files[@]}" > "$TMP/json" &&
	   tests/check_stats.py default 2 < "$TMP/json" &&
	   grep -q "\"mpi\": *\"$mpi\"" "$TMP/json"; then
		result ok "$mpi: bcsctl run --mpi-stats preloads libbcsmpi-$mpi.so"
	else
		cat "$TMP/out" >&2
		ls "$d" >&2
		result fail "$mpi: bcsctl run --mpi-stats preloads libbcsmpi-$mpi.so"
	fi
	if BCS_MPI_LIBDIR=$TMP/nolib "$BCSCTL" run --mpi-stats --no-attach \
		-- "tests/pattern-$mpi" > "$TMP/out" 2>&1 ||
	   ! grep -q "libbcsmpi-$mpi.so is not installed (looked in $TMP/nolib" \
		"$TMP/out"; then
		cat "$TMP/out" >&2
		result fail "$mpi: bcsctl run --mpi-stats without the library"
	else
		result ok "$mpi: bcsctl run --mpi-stats without the library"
	fi

	# The selection changed while 2 ranks run: Allreduce histograms from
	# the second phase on, at resolution 3 (8 buckets per power of two,
	# the process rows started again at it), recording off in the third;
	# Comm_rank, selected at the start only, keeps its histogram at 4.
	d=$TMP/$mpi-control
	mkdir -p "$d"
	# shellcheck disable=SC2046
	timeout -k 5 90 $(mpirun_of "$mpi" | sed 's/-np [0-9]*/-np 2/') \
		env LD_PRELOAD="$top/libbcsmpi-$mpi.so" BCS_MPI_DIR="$d" \
		BCS_JOB=42 BCS_MPI_STATS=Comm_rank "tests/pattern-$mpi" \
		phases "$d" > "$TMP/out" 2>&1 &
	pid=$!
	if wait_file "$d/done1" &&
	   ! BCS_MPI_DIR=$d "$BCSCTL" stats enable 42 --mpi Allreduce,Bogus \
		2> "$TMP/err" &&
	   grep -q "^bcsctl: stats enable 42: --mpi: 'Bogus' is not" \
		"$TMP/err" &&
	   BCS_MPI_DIR=$d "$BCSCTL" stats enable 42 --mpi Allreduce \
		--resolution 8 &&
	   touch "$d/go1" && wait_file "$d/done2" &&
	   BCS_MPI_DIR=$d "$BCSCTL" stats disable 42 --mpi &&
	   touch "$d/go2" && wait "$pid" &&
	   "$BCSSTAT" mpi --json "$d"/42.*.bcsmpi > "$TMP/json" &&
	   tests/check_stats.py control 2 < "$TMP/json"; then
		result ok "$mpi: the selection changed while the job runs"
	else
		touch "$d/go1" "$d/go2"
		wait "$pid"
		cat "$TMP/out" "$TMP/err" >&2
		result fail "$mpi: the selection changed while the job runs"
	fi

	# A control file set by hand to a resolution out of range: said,
	# ignored, the environment's selection stands.
	d=$TMP/$mpi-badctl
	mkdir -p "$d"
	python3 -c 'import struct, sys
sys.stdout.buffer.write(struct.pack("<IHHIIII1024s", 0x43534342, 1, 1048,
                                    2, 2, 9, 0, b"all"))' > "$d/43.control"
	if run "$mpi" "$d" "$TMP/out" BCS_JOB=43 -- &&
	   grep -q "^libbcsmpi: the control file's resolution is not 0 .. 7" \
		"$TMP/out" &&
	   "$BCSSTAT" mpi --json "$d"/43.*.bcsmpi > "$TMP/json" &&
	   tests/check_stats.py default "$np" < "$TMP/json"; then
		result ok "$mpi: a bad control file said and ignored"
	else
		cat "$TMP/out" >&2
		result fail "$mpi: a bad control file said and ignored"
	fi

	d=$TMP/$mpi-bad
	if run "$mpi" "$d" "$TMP/out" BCS_MPI_STATS=Allreduce,Bogus -- &&
	   [ -z "$(ls -A "$d")" ] &&
	   grep -q "^libbcsmpi: BCS_MPI_STATS: 'Bogus' is not" "$TMP/out" &&
	   run "$mpi" "$d" "$TMP/out" BCS_MPI_RESOLUTION=8 -- &&
	   [ -z "$(ls -A "$d")" ] &&
	   grep -q "^libbcsmpi: BCS_MPI_RESOLUTION '8'" "$TMP/out" &&
	   run "$mpi" "$d" "$TMP/out" BCS_MPI_POLL=0 -- &&
	   [ -z "$(ls -A "$d")" ] &&
	   grep -q "^libbcsmpi: BCS_MPI_POLL '0' is not 1 .. 65536" \
		"$TMP/out"; then
		result ok "$mpi: bad settings said, program unharmed"
	else
		cat "$TMP/out" >&2
		result fail "$mpi: bad settings said, program unharmed"
	fi
}

# test_slices MPI: tests/slices-MPI under a stand-in ring of slice
# records; bcsstat mpi --slices --json checked against what each phase
# did (slices.c): phase k (slice 100, 101, 103, 104, 105, 106, 107) makes
# k + 1 MPI_Sendrecv of one int and 2k + 1 MPI_Allreduce of one int;
# BCS_MPI_SLICES=4 keeps 101 .. 106 of the five slices counted (104 and
# 107 are outside the window 105 .. 106 armed from 104 on), and the
# window's 14 + 17 calls are each written.
test_slices()
{
	local mpi=$1
	local d=$TMP/$mpi-slices name="$mpi: calls per slice (BCS_MPI_STATDEV)"

	if [ ! -f "libbcsmpi-$mpi.so" ] || [ ! -x "tests/slices-$mpi" ] ||
	   ! command -v "mpirun.$mpi" > /dev/null; then
		result skip "$name" "libbcsmpi-$mpi.so or mpirun.$mpi missing"
		return
	fi
	mkdir -p "$d"
	# shellcheck disable=SC2046 # the launcher and its options
	if tests/slices-"$mpi" --make "$d/stat" &&
	   timeout -k 5 60 $(mpirun_of "$mpi") env \
		LD_PRELOAD="$top/libbcsmpi-$mpi.so" \
		BCS_MPI_DIR="$d/files" BCS_MPI_SLICES=4 \
		BCS_MPI_STATDEV="$d/stat" BCS_MPI_REPORT=0 \
		"tests/slices-$mpi" "$d/stat" > "$TMP/out" 2>&1 &&
	   "$BCSSTAT" mpi --slices --json "$d/files" > "$d/json" &&
	   python3 - "$d/json" <<'PY'
import json, sys
ranks = json.load(open(sys.argv[1]))["ranks"]
assert len(ranks) >= 2, ranks
phase = {101: 1, 103: 2, 105: 4, 106: 5}
for r in ranks:
    assert r["source"] == "BCS_MPI_STATDEV", r["source"]
    assert r["slices_begun"] == 5 and r["nr_slices"] == 4, r
    assert r["window"] == {"from": 105, "to": 106}, r.get("window")
    got = [e["slice"] for e in r["slices"]]
    assert got == [101, 103, 105, 106], got
    for e in r["slices"]:
        k = phase[e["slice"]]
        assert e["p2p_calls"] == k + 1 and e["coll_calls"] == 2 * k + 1, e
        assert e["p2p_bytes"] == 8 * (k + 1), e
        assert e["coll_bytes"] == 4 * (2 * k + 1), e
        assert e["first_ns"] <= e["last_ns"], e
    calls = r["calls"]
    assert r["calls_written"] == 31 and len(calls) == 31, len(calls)
    for s, k in ((105, 4), (106, 5)):
        c = [x for x in calls if x["slice"] == s]
        assert sum(x["primitive"] == "MPI_Sendrecv" for x in c) == k + 1
        assert sum(x["primitive"] == "MPI_Allreduce" for x in c) == 2 * k + 1
        assert len(c) == 3 * k + 2, (s, c)
    assert all(a["start_ns"] <= b["start_ns"] for a, b in zip(calls, calls[1:]))
PY
	then
		result ok "$name"
	else
		cat "$TMP/out" "$d/json" >&2 2>/dev/null
		result fail "$name"
	fi

	# No device: no slices, said in the file; a bad size said.
	name="$mpi: no /dev/bcsstat, bad BCS_MPI_SLICES"
	if [ -e /dev/bcsstat ]; then
		result skip "$name" "/dev/bcsstat exists here"
		return
	fi
	if run "$mpi" "$d/bad" "$TMP/out" BCS_MPI_SLICES=x -- &&
	   grep -q "^libbcsmpi: BCS_MPI_SLICES is not 0 .. 65536" "$TMP/out" &&
	   run "$mpi" "$d/none" "$TMP/out" BCS_MPI_SLICES=8 -- &&
	   "$BCSSTAT" mpi --slices "$d/none" > "$d/text" &&
	   grep -q "^rank 0 .*: no /dev/bcsstat (bcs.ko not loaded): no slices" \
		"$d/text" &&
	   run "$mpi" "$d/zero" "$TMP/out" BCS_MPI_SLICES=0 -- &&
	   "$BCSSTAT" mpi --slices "$d/zero" > "$d/text" &&
	   grep -q "^rank 0 .*: no slices kept (BCS_MPI_SLICES=0)" "$d/text"; then
		result ok "$name"
	else
		cat "$TMP/out" "$d/text" >&2 2>/dev/null
		result fail "$name"
	fi
}

# test_hostile: the ranks of a normal user (nobody) with mpi_dir root's
# (as /run/bcs/mpi) and the job's directory in the states another user
# can leave it in: missing (bcsd has not made it), another user's, with a
# FIFO, a symbolic link or another user's file as the control file, with
# a lock held on it.  MPI_Init always returns (the run
# ends), profiling is off for the job or the control file ignored, said
# on stderr.  Needs root (chown, setpriv); Open MPI, two ranks.
hostile_run()	# hostile_run DIR OUT [ENV...]: pattern as nobody
{
	local dir=$1 out=$2

	shift 2
	# shellcheck disable=SC2046
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		timeout -k 5 60 $(BCS_MPI_TEST_NP=2 mpirun_of openmpi) \
		env -u BCS_MPI_POLL LD_PRELOAD="$top/libbcsmpi-openmpi.so" \
		BCS_MPI_DIR="$dir" BCS_JOB=55 BCS_MPI_WAIT_MS=300 "$@" \
		"$top/tests/pattern-openmpi" > "$out" 2>&1
}

test_hostile()
{
	local d=$TMP/hostile j out=$TMP/hostile.out lockpid

	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null ||
	   [ ! -f libbcsmpi-openmpi.so ] || [ ! -x tests/pattern-openmpi ] ||
	   ! command -v mpirun.openmpi > /dev/null; then
		result skip "hostile directory" "needs root, setpriv, Open MPI"
		return
	fi
	chmod 755 "$TMP"
	mkdir -m 755 "$d"
	j=$d/55
	# No directory of the job: waited for, then no profiling.
	if hostile_run "$d" "$out" &&
	   grep -q "no directory $j of uid 65534 after 300 ms" "$out" &&
	   [ -z "$(ls -A "$d")" ]; then
		result ok "hostile directory: none made: MPI_Init returns, profiling off"
	else
		cat "$out" >&2
		result fail "hostile directory: none made"
	fi
	# Another user's directory of the job.
	mkdir -m 700 "$j" && chown 4242:4242 "$j"
	if hostile_run "$d" "$out" &&
	   grep -q "$j is not a directory of uid 65534" "$out" &&
	   [ -z "$(ls -A "$j")" ]; then
		result ok "hostile directory: another user's: not used"
	else
		cat "$out" >&2
		result fail "hostile directory: another user's"
	fi
	rm -rf "$j"
	# The user's directory (bcsd's doing), its control file a FIFO, a
	# link, another user's: MPI_Init returns, the file ignored.
	mkdir -m 700 "$j" && chown 65534:65534 "$j"
	mkfifo -m 666 "$j/55.control"
	if hostile_run "$d" "$out" &&
	   grep -q "55.control: not a control file" "$out" &&
	   [ "$(ls "$j"/*.bcsmpi | wc -l)" = 2 ]; then
		result ok "hostile directory: a FIFO as the control file: ignored, MPI_Init returns"
	else
		cat "$out" >&2
		result fail "hostile directory: a FIFO as the control file"
	fi
	rm -f "$j"/*
	ln -s /dev/zero "$j/55.control"
	if hostile_run "$d" "$out" && grep -q "55.control" "$out" &&
	   [ "$(ls "$j"/*.bcsmpi | wc -l)" = 2 ]; then
		result ok "hostile directory: a link as the control file: ignored"
	else
		cat "$out" >&2
		result fail "hostile directory: a link as the control file"
	fi
	rm -f "$j"/*
	BCS_CONTROL_SOCKET='' BCS_MPI_DIR=$j "$BCSCTL" stats enable 55 \
		--mpi Allreduce > /dev/null 2>&1
	cp "$j/55.control" "$TMP/55.control.root"
	chown 4242:4242 "$j/55.control"
	if hostile_run "$d" "$out" &&
	   grep -q "owned by uid 4242, not by root or uid 65534" "$out" &&
	   [ "$(ls "$j"/*.bcsmpi | wc -l)" = 2 ]; then
		result ok "hostile directory: another user's control file: not mapped"
	else
		cat "$out" >&2
		result fail "hostile directory: another user's control file"
	fi
	rm -f "$j"/*
	# bcsd's control file (root's), locked: no matter to the ranks
	# (another user cannot even reach it in the user's 0700 directory).
	cp "$TMP/55.control.root" "$j/55.control"
	chmod 644 "$j/55.control"
	flock -s "$j/55.control" sleep 120 &
	lockpid=$!
	sleep 0.5
	if hostile_run "$d" "$out" && ! grep -q libbcsmpi "$out" &&
	   [ "$(ls "$j"/*.bcsmpi | wc -l)" = 2 ] &&
	   "$BCSSTAT" mpi --json "$j"/*.bcsmpi | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([p["name"] for p in d["primitives"] if p.get("has_hist")])' > /dev/null; then
		result ok "hostile directory: bcsd's control file locked: applied"
	else
		cat "$out" >&2
		result fail "hostile directory: bcsd's control file locked"
	fi
	kill "$lockpid" 2>/dev/null
	wait "$lockpid" 2>/dev/null
}

echo "TAP version 13"
if [ "${BCS_MPI_TEST_ONLY:-}" = mpip ]; then
	test_asan openmpi "${BCS_MPI_TEST_NP:-4}"
	test_asan mpich "${BCS_MPI_TEST_NP_MPICH:-2}"
	test_fortran openmpi "${BCS_MPI_TEST_NP:-4}"
	test_regions openmpi "${BCS_MPI_TEST_NP:-4}"
	test_fortran mpich "${BCS_MPI_TEST_NP_MPICH:-2}"
	test_regions mpich "${BCS_MPI_TEST_NP_MPICH:-2}"
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi
if [ "${BCS_MPI_TEST_ONLY:-}" = slices ]; then
	test_slices openmpi
	test_slices mpich
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi
if [ "${BCS_MPI_TEST_ONLY:-}" = hostile ]; then
	test_hostile
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi
test_mpi openmpi
test_slices openmpi
test_mpi mpich
test_slices mpich
test_hostile

# bcsstat mpi on files that are not statistics, or not whole.
good=$(find "$TMP" -path "*-full/*.bcsmpi" | head -n 1)
printf 'not a statistics file, but long enough to be read as one, '\
'with more bytes than its header has, and more, and more, and more, '\
'and more, and more, and more, and more, and more, and more, and more.'\
'and more, and more, and more, and more, and more, and more, and more.'\
> "$TMP/junk"
if ! "$BCSSTAT" mpi "$TMP/none" 2>&1 | grep -q "none: No such file" ||
   ! "$BCSSTAT" mpi "$TMP/junk" 2>&1 |
	grep -q "junk: not a libbcsmpi statistics file" ||
   "$BCSSTAT" mpi > /dev/null 2>&1 || [ $? != 2 ]; then
	result fail "bcsstat mpi: unreadable files and usage"
elif [ -n "$good" ] &&
     { head -c 1000 "$good" > "$TMP/short"
       "$BCSSTAT" mpi "$TMP/short" 2>&1 | grep -q "short: corrupt"; } &&
     { cp "$good" "$TMP/ver"
       printf '\x07' | dd of="$TMP/ver" bs=1 seek=4 conv=notrunc 2>/dev/null
       "$BCSSTAT" mpi "$TMP/ver" 2>&1 | grep -q "of another version"; } &&
     { # Version 3: no slices (@slices_off was reserved, 0); still read.
       cp "$good" "$TMP/v3"
       python3 - "$TMP/v3" <<'PY'
import struct, sys
f = open(sys.argv[1], "r+b")
d = f.read(8)
size = struct.unpack_from("<H", d, 6)[0]
f.seek(4); f.write(struct.pack("<H", 3))
f.seek(size - 4); f.write(struct.pack("<I", 0))
PY
       "$BCSSTAT" mpi "$TMP/v3" | grep -q "^MPI_Allreduce " &&
       "$BCSSTAT" mpi --slices "$TMP/v3" |
	grep -q "a file of version 3: no slices"; }; then
	result ok "bcsstat mpi: unreadable files and usage"
elif [ -z "$good" ]; then
	result ok "bcsstat mpi: unreadable files and usage (no file to cut)"
else
	result fail "bcsstat mpi: truncated or other-version file"
fi

# bcsstat mpi --job J [--node N] [--rank R] [DIR]: the files of a job in a
# directory, as gathered from its nodes, merged; here copies of the full
# run's files, made job 77, half of the ranks on "nodeA" and half on
# "nodeB" (the job and host fields of their headers), beside files of
# other jobs.
# job_copy SRC JOB HOST DIR: SRC as a file of JOB on HOST, named so.
job_copy()
{
	python3 - "$@" <<'PY'
import struct, sys
src, job, host, d = sys.argv[1:]
b = bytearray(open(src, "rb").read())
rank, _, pid = struct.unpack_from("<iii", b, 40)
b[80:112] = job.encode().ljust(32, b"\0")
b[112:176] = host.encode().ljust(64, b"\0")
open(f"{d}/{job}.{host}.{rank}.{pid}.bcsmpi", "wb").write(b)
PY
}

jd=$TMP/jobdir
mkdir -p "$jd"
full=$(find "$TMP" -path "*openmpi-full/*.bcsmpi" | sort)
nf=$(echo "$full" | grep -c .)
half=$((nf / 2))
k=0
for f in $full; do
	job_copy "$f" 77 "node$([ $((k % 2)) = 0 ] && echo A || echo B)" "$jd"
	job_copy "$f" 78 nodeA "$jd"
	k=$((k + 1))
done
[ -n "$full" ] && cp "$(echo "$full" | head -n 1)" "$jd/"
if [ "$nf" -lt 2 ]; then
	result skip "bcsstat mpi --job, --node, --rank" "no Open MPI files"
elif "$BCSSTAT" mpi --job 77 "$jd" > "$TMP/job" &&
     grep -q "^$nf rank files, $nf complete" "$TMP/job" &&
     grep -q "^job 77: $nf ranks (0 .. $((nf - 1))) on 2 nodes: nodeA ($((nf - half))), nodeB ($half)$" "$TMP/job" &&
     grep -Eq "^MPI_Allreduce +$((nf * 1000)) " "$TMP/job" &&
     BCS_MPI_DIR=$jd "$BCSSTAT" mpi --job 77 | cmp -s - "$TMP/job" &&
     "$BCSSTAT" mpi --job 77 --node nodeB "$jd" > "$TMP/node" &&
     grep -Eq "^job 77: $half ranks? \(1 \.\. " "$TMP/node" &&
     grep -Eq "^MPI_Allreduce +$((half * 1000)) " "$TMP/node" &&
     "$BCSSTAT" mpi --job 77 --rank 1 "$jd" > "$TMP/rank" &&
     grep -q "^job 77: 1 rank (1 .. 1) on 1 node: nodeB (1)$" "$TMP/rank" &&
     grep -Eq "^MPI_Isend +200 " "$TMP/rank" &&
     "$BCSSTAT" mpi --json --job 77 --rank 0 "$jd" |
	python3 -c 'import json, sys; r = json.load(sys.stdin)["ranks"]
sys.exit(0 if len(r) == 1 and r[0]["rank"] == 0 else 1)' &&
     ! "$BCSSTAT" mpi --job 79 "$jd" 2> "$TMP/err" &&
     grep -q "no statistics file of job 79 in the files given" "$TMP/err" &&
     ! "$BCSSTAT" mpi --job 77 --node nodeC "$jd" 2> /dev/null &&
     ! "$BCSSTAT" mpi --job 77 --rank x "$jd" 2> /dev/null; then
	result ok "bcsstat mpi --job, --node, --rank"
else
	cat "$TMP/job" "$TMP/node" "$TMP/rank" "$TMP/err" >&2 2>/dev/null
	result fail "bcsstat mpi --job, --node, --rank"
fi

# bcsctl run --mpi-stats on a program of no MPI, or a script.
if "$BCSCTL" run --mpi-stats --no-attach -- /bin/true > "$TMP/out" 2>&1 ||
   ! grep -q "^bcsctl: run: --mpi-stats: cannot tell which MPI /bin/true" \
	"$TMP/out" ||
   "$BCSCTL" run --mpi-stats --no-attach -- tests/run.sh > "$TMP/out" 2>&1 ||
   ! grep -q "not a 64-bit ELF program" "$TMP/out"; then
	cat "$TMP/out" >&2
	result fail "bcsctl run --mpi-stats: cannot tell"
else
	result ok "bcsctl run --mpi-stats: cannot tell"
fi

# The MPI of a program that needs it only through a library of its own,
# found through the program's RUNPATH ($ORIGIN).
if ! command -v mpicc.openmpi > /dev/null || ! command -v cc > /dev/null ||
   [ ! -f libbcsmpi-openmpi.so ]; then
	result skip "bcsctl run --mpi-stats: MPI of a library" \
		"no mpicc.openmpi, cc or libbcsmpi-openmpi.so"
else
	mkdir -p "$TMP/app"
	printf '#include <mpi.h>\nint wrap(void)\n{\n\tint f = 0;\n\n'\
'\tMPI_Initialized(&f);\n\treturn f;\n}\n' > "$TMP/app/wrap.c"
	printf '#include <stdio.h>\n#include <stdlib.h>\nint wrap(void);\n'\
'int main(void)\n{\n\tputs(getenv("LD_PRELOAD"));\n\treturn wrap();\n}\n' \
		> "$TMP/app/prog.c"
	# shellcheck disable=SC2016
	if mpicc.openmpi -shared -fPIC -o "$TMP/app/libwrap.so" \
		"$TMP/app/wrap.c" &&
	   cc -o "$TMP/app/prog" "$TMP/app/prog.c" -L"$TMP/app" -lwrap \
		-Wl,--no-as-needed,--enable-new-dtags,-rpath,'$ORIGIN' &&
	   ! readelf -d "$TMP/app/prog" | grep -q 'libmpi\.so' &&
	   env -u LD_PRELOAD "$BCSCTL" run --mpi-stats --no-attach \
		-- "$TMP/app/prog" > "$TMP/out" 2>&1 &&
	   grep -qx "$top/libbcsmpi-openmpi.so" "$TMP/out"; then
		result ok "bcsctl run --mpi-stats: MPI of a library"
	else
		cat "$TMP/out" >&2
		result fail "bcsctl run --mpi-stats: MPI of a library"
	fi
fi

echo "1..$n"
[ "$failed" = 0 ]

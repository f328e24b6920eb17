#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MPI: two Open MPI jobs of a normal user (uid 65534: mpirun, its daemons
# and every rank; the jobs created for it with --owner) started from node1
# the way a site wraps its jobs,
#
#     mpirun -np 6 --hostfile H bcsctl run --job J -- mpi_barrier ...
#
# with mpirun reaching the other nodes over SSH (dropbear in the guests).
# Both run at once, each in a row of its own next to the coherence test's
# two jobs.  Checks: every rank is attached with all its threads to its
# job on its node; every node runs the same row in every slice while the
# four gangs take turns; both jobs compute the right results; the ranks
# leave their jobs as they exit; the jobs are then destroyed.
#
# Both run with --mpi-stats (libbcsmpi preloaded, Documentation/mpi.rst):
# while they run, bcsctl stats enable J --mpi Allreduce on node2 reaches
# every node's bcsd through the master, which sets job J's control file
# there; afterwards each node's statistics files, gathered in one
# directory, give bcsstat mpi --job J the merged table of all 6 ranks on
# the 3 nodes with mpi_barrier's known calls (per rank 2 MPI_Barrier,
# iterations + 1 MPI_Allreduce, 1 MPI_Gather) and Allreduce's
# distributions from every rank; and bcsstat mpi --job J on node2, with no
# file given, the same table gathered through bcsd from every node.

# shellcheck disable=SC2154 # j1 and j2: set by two_jobs (lib.sh)
. "$CL_DIR/lib.sh"

np=$((2 * nr_nodes))
app=$BUILD/bench/mpi_barrier
# Long enough for the snapshot below on a loaded host (40 s took 43).
run_s=60
out=$SHARE/out
# Every rank, mpirun and its daemons run as this normal user (nobody),
# in cluster jobs it owns: as a user's job runs at a site.
user=65534

missing=""
for c in mpirun dropbear dropbearkey ssh ssh-keygen; do
	command -v "$c" > /dev/null || missing="$missing $c"
done
[ -x "$app" ] || missing="$missing $app"
[ -z "$missing" ]
ok $? "Open MPI, dropbear, OpenSSH and mpi_barrier are installed${missing:+ (missing:$missing: run scripts/deps.sh)}"
[ -z "$missing" ] || tap_end

# The key mpirun logs in with; only the guests' SSH servers accept it.
rm -rf "$SHARE/mpi"
mkdir -p "$SHARE/mpi"
ssh-keygen -q -t ed25519 -N '' -C bcs-cluster-test -f "$SHARE/mpi/id"
on_each "$out/mpi-sshd" "MPI_USER=$user start_sshd"
rc=$?
[ $rc = 0 ] || diag "$(cat "$out/mpi-sshd"/?)"
ok $rc "an SSH server on every node, root and uid $user log in by key only"

# shellcheck disable=SC2016 # expanded in the guest
hosts=$(on 1 'for n in $CL_NODES; do
	ssh -F "$STATE/ssh_config" "$CL_NET.$n" hostname || echo "?"
done' | paste -sd ' ')
want=$(for n in $CL_NODES; do echo "node$n"; done | paste -sd ' ')
[ "$hosts" = "$want" ]
ok $? "node1 runs commands on every node over SSH ($hosts)"

JOB_OWNER=$user two_jobs "two more cluster jobs through the master, uid $user's"

# Both jobs at once.  Each passes MPI_Init, then waits for the go file,
# so that both run side by side whichever launch was slower; each then
# ends once its rank 0 has run $run_s seconds, parked slices included.
go=$out/mpi-go
rm -f "$go"
on 1 "rm -rf /run/bcs/mpi/$j1.* /run/bcs/mpi/$j2.* /run/bcs/mpi/$j1 /run/bcs/mpi/$j2
      export MPI_STATS=1 MPI_USER=$user
      mpi_start a $np $j1 --seconds $run_s --work 200 --tag a --go $go &&
      mpi_start b $np $j2 --seconds $run_s --work 200 --tag b --go $go"
ok $? "mpirun -np $np --hostfile H bcsctl run --job J --mpi-stats -- mpi_barrier, for jobs $j1 and $j2"

started()
{
	grep -q '^mpi_barrier: started' "$out/mpi-a.out" 2>/dev/null &&
		grep -q '^mpi_barrier: started' "$out/mpi-b.out" 2>/dev/null
}
failed_early()
{
	[ -s "$out/mpi-a.rc" ] || [ -s "$out/mpi-b.rc" ]
}
# Launching 2 x 6 MPI processes on emulated CPUs takes a while.
wait_until 300 eval 'started || failed_early'
# Now and then, on a loaded host, mpirun loses one of its daemons while
# they start ("ORTE has lost communication with a remote daemon") and
# gives up before any rank runs: that launch, and only that, is tried
# once more, from a clean slate (its ranks' statistics files removed).
lost_daemon()	# lost_daemon LABEL: mpirun LABEL exited, a daemon lost
{
	[ -s "$out/mpi-$1.rc" ] &&
		grep -q 'lost communication with a remote daemon' "$out/mpi-$1.out"
}
relaunched=""
for l in a b; do
	started && break
	lost_daemon "$l" || continue
	j=$j1
	[ "$l" = b ] && j=$j2
	cp "$out/mpi-$l.out" "$out/mpi-$l.lost.out"
	diag "job $l: mpirun lost a daemon while starting (mpi-$l.lost.out): launched once more"
	on_all "rm -rf /run/bcs/mpi/$j.* /run/bcs/mpi/$j/$j.*.bcsmpi" > /dev/null
	on 1 "export MPI_STATS=1 MPI_USER=$user
	      mpi_start $l $np $j --seconds $run_s --work 200 --tag $l --go $go"
	relaunched+=" $l"
done
[ -z "$relaunched" ] || wait_until 300 eval 'started || failed_early'
started
rc=$?
if [ $rc != 0 ]; then
	# A job that is through MPI_Init must not wait any longer.
	touch "$go"
	for f in "$out"/mpi-[ab].out; do
		diag "$f:" "$(tail -n 15 "$f")"
	done
	# Where every MPI process is: its state, the kernel function it
	# sleeps in, its kernel stack; and what bcs.ko has of the jobs.
	# shellcheck disable=SC2016 # expanded in the guest
	diag "$(on_all 'ps -eLo pid,tid,user,stat,wchan:28,comm |
		grep -E "PID|mpi_barrier|orted|mpirun|prterun|bcsctl"
	for p in $(pgrep -f "mpi_barrier|orted"); do
		for t in /proc/$p/task/*; do
			echo "$t: $(tr "\n" " " < $t/stack 2>/dev/null)"
		done
	done
	bcsctl status 2>&1 | head -n 20' 2>&1)"
fi
ok $rc "both jobs through MPI_Init on all $np ranks"
if [ $rc != 0 ]; then
	# Nothing of these jobs left for the tests after this one: the
	# user's processes killed on every node, both jobs destroyed.
	on_all "pkill -KILL -u $user" > /dev/null
	on 1 "bcsctl job destroy $j1; bcsctl job destroy $j2" > /dev/null
	tap_end
fi

# Every task of both jobs is the user's, on every node: looked at while
# the ranks wait for the go file, so that none has exited yet.
uids()	# uids N: the distinct uids of jobs j1's and j2's tasks on node N
{
	on "$1" "for p in \$(bcsstat tasks --json | $PY -c '
import json, sys
print(\" \".join(str(t[\"tgid\"]) for t in json.load(sys.stdin)
               if t[\"job\"] in ($j1, $j2)))'); do
		stat -c %u /proc/\$p
	done | sort -u | paste -sd ' '" 2>/dev/null
}
for n in $CL_NODES; do
	u=$(uids "$n")
	[ "$u" = "$user" ]
	ok $? "node$n: every rank of jobs $j1 and $j2 runs as uid $user ($u)"
done
touch "$go"

# While both run, the MPI statistics of job a changed on every node from
# node2, through the master (BCSP_CMD_MPI); the ranks take it at their
# next call.  Checked below, on each node's control file.
on 2 "bcsctl stats enable $j1 --mpi Allreduce"
ok $? "bcsctl stats enable $j1 --mpi Allreduce on node2"

# Steady state: every rank and thread is in; let the gangs take turns.
from=$(slice_now 1)
sleep 8
rm -rf "${SHARE:?}/data/mpi"
# shellcheck disable=SC2016 # expanded in the guest
on_all 'snapshot mpi && proc_threads "$SHARE/data/mpi/node$NODE.threads.json"' \
	> /dev/null
ok $? "snapshot of every node while both jobs run"
analyse coherence --nodes "$nr_nodes" "$SHARE/data/mpi" --from-slice "${from:-0}" \
	--jobs "$j1,$j2" --min 20

# Each node's control file of job a says Allreduce, on.
ctl_sel()	# ctl_sel N: "FLAGS SELECTION" of node N's control file of job a
{
	on "$1" "f=/run/bcs/mpi/$j1/$j1.control
		[ -e \$f ] || f=/run/bcs/mpi/$j1.control
		echo \$(od -An -tu4 -j 16 -N 4 \$f) \
		     \$(dd if=\$f bs=1 skip=24 count=64 2>/dev/null | tr -d '\\0')"
}
for n in $CL_NODES; do
	# shellcheck disable=SC2016 # expanded by wait_until
	wait_until 10 eval '[ "$(ctl_sel "$n")" = "0 Allreduce" ]'
	ok $? "node$n: bcsd set job $j1's MPI control file ($(ctl_sel "$n"))"
done

done_both()
{
	[ -s "$out/mpi-a.rc" ] && [ -s "$out/mpi-b.rc" ]
}
wait_until $((run_s * 4 + 120)) done_both
for l in a b; do
	rc=$(cat "$out/mpi-$l.rc" 2>/dev/null)
	[ "$rc" = 0 ]
	ok $? "mpirun of job $l exited with status ${rc:-(still running)}"
done
analyse mpi "$SHARE/data/mpi" --job "$j1" --np "$np" --output "$out/mpi-a.out"
analyse mpi "$SHARE/data/mpi" --job "$j2" --np "$np" --output "$out/mpi-b.out"
diag "$(grep -h '^mpi_barrier: size' "$out"/mpi-[ab].out)"

# Every rank's libbcsmpi file, copied from the nodes into one directory,
# merged by bcsstat mpi --job J: all ranks on all nodes, the known calls.
stats=$SHARE/data/mpistats
rm -rf "$stats"
mkdir -p "$stats"
# shellcheck disable=SC2016 # expanded in the guest
# (each job's in the directory bcsd made for it, or beside it for ranks of
# root's that started before: Documentation/mpi.rst, "Permissions").
on_all 'cp /run/bcs/mpi/*.bcsmpi /run/bcs/mpi/*/*.bcsmpi "$SHARE/data/mpistats/" 2>/dev/null; ls "$SHARE/data/mpistats/" | grep -q bcsmpi' > /dev/null
ok $? "every node's MPI statistics files gathered"
# The ranks' calls per slice (mpi.rst, "Per-slice counts"): every rank
# took its slices from its node's /dev/bcsstat, counted collectives in
# some, and each of its slice numbers is one of its node's records (or
# older than the ring's oldest).
# shellcheck disable=SC2016 # expanded in the guest
on_all 'bcsstat slices --json > "$SHARE/data/mpistats/node$NODE.ring.json"' \
	> /dev/null
on 1 "bcsstat mpi --slices --json $stats" > "$out/mpi-slices.json" 2> "$out/mpi-slices.err"
rc=$?
[ $rc = 0 ] && "$PY" - "$out/mpi-slices.json" "$stats" "$np" <<'PY' > "$out/mpi-slices.check" 2>&1
import json, sys
ranks = json.load(open(sys.argv[1]))["ranks"]
assert len(ranks) == 2 * int(sys.argv[3]), len(ranks)
for r in ranks:
    ring = [x["slice"] for x in
            json.load(open("%s/%s.ring.json" % (sys.argv[2], r["host"])))]
    assert r["source"] == "/dev/bcsstat", r
    got = [e["slice"] for e in r["slices"]]
    assert got and any(e["coll_calls"] for e in r["slices"]), r
    missing = [s for s in got if s >= min(ring) and s not in set(ring)]
    assert not missing, (r["host"], r["rank"], missing[:10])
print("%d ranks, %d slices with calls" % (len(ranks),
      sum(len(r["slices"]) for r in ranks)))
PY
ok $? "bcsstat mpi --slices: every rank's slices are its node's ($(tail -n 1 "$out/mpi-slices.check" 2>/dev/null))"
per_node=$((np / nr_nodes))
nodes_want=$(for n in $CL_NODES; do printf ', node%s (%s)' "$n" "$per_node"; done)
for l in a b; do
	j=$j1
	[ $l = b ] && j=$j2
	iters=$(sed -n 's/^mpi_barrier: size [0-9]* iters \([0-9]*\) .*/\1/p' "$out/mpi-$l.out")
	on 1 "bcsstat mpi --job $j $stats" > "$out/mpi-$l.table" 2>&1
	rc=$?
	diag "$(cat "$out/mpi-$l.table")"
	[ $rc = 0 ] &&
	grep -q "^$np rank files, $np complete$" "$out/mpi-$l.table" &&
	grep -q "^job $j: $np ranks (0 .. $((np - 1))) on $nr_nodes nodes: ${nodes_want#, }$" \
		"$out/mpi-$l.table"
	ok $? "bcsstat mpi --job $j: $np ranks on the $nr_nodes nodes"
	[ -n "$iters" ] &&
	grep -Eq "^MPI_Allreduce +$((np * (iters + 1))) " "$out/mpi-$l.table" &&
	grep -Eq "^MPI_Barrier +$((np * 2)) " "$out/mpi-$l.table" &&
	grep -Eq "^MPI_Gather +$np " "$out/mpi-$l.table" &&
	grep -q "^Comm Overhead" "$out/mpi-$l.table" &&
	grep -q "largest gap of a rank 0\.0" "$out/mpi-$l.table"
	ok $? "bcsstat mpi --job $j: the calls of $np ranks of $iters iterations, computation + communication"
done
# The same through bcsd, asked on node2 with no file given: every node
# sends a summary of each of its files (mpi.rst, "Through bcsd"); the rows
# are those of the files, without histograms.
for l in a b; do
	j=$j1
	[ $l = b ] && j=$j2
	on 2 "bcsstat mpi --job $j" > "$out/mpi-$l.gathered" 2>&1
	rc=$?
	diag "$(head -n 3 "$out/mpi-$l.gathered")"
	[ $rc = 0 ] &&
	grep -q "^through bcsd: $nr_nodes \(of $nr_nodes \)\?nodes answered" \
		"$out/mpi-$l.gathered" &&
	grep -q "^job $j: $np ranks (0 .. $((np - 1))) on $nr_nodes nodes: ${nodes_want#, }$" \
		"$out/mpi-$l.gathered" &&
	diff <(grep -E '^(MPI_|Comp |Comm )' "$out/mpi-$l.table") \
		<(grep -E '^(MPI_|Comp |Comm )' "$out/mpi-$l.gathered") > /dev/null
	ok $? "bcsstat mpi --job $j on node2, through bcsd: the table of every node's files"
done
on 1 "bcsstat mpi --job $j1 --hist Allreduce $stats" > "$out/mpi-a.hist" 2>&1
grep -q "^MPI_Allreduce in $np rank files" "$out/mpi-a.hist"
ok $? "Allreduce's distributions of job $j1 from every rank, enabled while it ran ($(head -n 1 "$out/mpi-a.hist"))"
on 1 "bcsstat mpi --job $j1 --node node2 $stats" | grep -q "^job $j1: $per_node ranks .* on 1 node: node2 ($per_node)$"
ok $? "bcsstat mpi --job $j1 --node node2: its $per_node ranks"

# Exited ranks leave their jobs: no task of either job is left anywhere.
left()
{
	on "$1" bcsstat tasks --json | "$PY" -c '
import json, sys
jobs = {int(j) for j in sys.argv[1:]}
sys.exit(any(t["job"] in jobs for t in json.load(sys.stdin)))' "$j1" "$j2"
}
for n in $CL_NODES; do
	wait_until 30 left "$n"
	ok $? "node$n: no task of job $j1 or $j2 once the ranks have exited"
done

on 1 "bcsctl job destroy $j1 && bcsctl job destroy $j2"
rc=$?
gone()		# the list could be read, and neither job is in it
{
	local l
	l=$(on "$1" bcsctl job list) || return 1
	echo "$l" | awk -v a="$j1" -v b="$j2" \
		'$1 == a || $1 == b { f = 1 } END { exit f }'
}
for n in $CL_NODES; do
	[ $rc = 0 ] && wait_until 30 gone "$n"
	ok $? "node$n: jobs $j1 and $j2 destroyed cluster-wide"
done
tap_end

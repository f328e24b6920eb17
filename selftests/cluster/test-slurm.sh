#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Slurm: slurmctld on node1, slurmd on every node, munge with one key, a
# partition over the three nodes with OverSubscribe=FORCE, and bcs's SPANK
# plugin (slurm/bcs.so) in plugstack.conf.  Two MPI jobs submitted at once
# from node1, one with
#
#     srun -N 3 -n 6 --mpi=pmix --bcs mpi_barrier ...
#
# the other with sbatch --bcs, its script running the same srun line
# without --bcs.
# Checks: each Slurm job gets a bcs job of its own on every node (all of
# its steps share it), labelled with the Slurm job; every rank is in its
# step's job with all its
# threads; every node runs the same row in every slice; both compute the
# right results; the bcs jobs are gone once the steps have ended.  Then two
# CPU-bound steps with --bcs, one cancelled (scancel) while the gangs take
# turns: none of its tasks is left, stopped or parked, anywhere, and its
# bcs job is gone; the other still runs, until it is cancelled too.
#
# The configuration is written to SHARE/slurm; the daemons keep their
# state under the guests' tmpfs and log into the nodes' output directories.

# shellcheck disable=SC2154 # set by the sourced lib.sh
. "$CL_DIR/lib.sh"

np=$((2 * nr_nodes))
app=$BUILD/bench/mpi_barrier
run_s=40
out=$SHARE/out
sl=$SHARE/slurm

missing=$(slurm_missing)
if [ -n "$missing" ]; then
	ok 0 "Slurm with the bcs plugin # SKIP missing:$missing (scripts/deps.sh, make userspace)"
	tap_end
fi
ok 0 "Slurm, munge, the bcs plugin and mpi_barrier are installed"

# --- configuration and daemons (lib.sh) ---------------------------------------
slurm_up || tap_end

# --- two MPI jobs at once -----------------------------------------------------
mpi=$(on 1 'srun --mpi=list' 2>&1)
echo "$mpi" | grep -q pmix
ok $? "srun --mpi=list offers pmix ($(echo "$mpi" | tr '\n' ' '))"

go=$out/slurm-go
# The steps run from go until stop (or run_s * 4 seconds at most): stop
# comes after the snapshot, however long that took on a busy host.
stop=$out/slurm-stop
rm -f "$go" "$stop"
# Job a straight from srun, job b a batch script whose srun line gets
# --bcs from sbatch (through the environment, as SPANK options go).
oa=$out/slurm-a.out
ob=$out/slurm-b.job
cat > "$sl/job-b.sh" <<EOF
#!/bin/sh
#SBATCH -N $nr_nodes -n $np --overcommit -J bcs-b --bcs -o $ob
srun --distribution=cyclic --mpi=pmix $app --seconds $((run_s * 4)) --work 200 --tag b --go $go --stop $stop
EOF
rm -f "$ob"
start_a()
{
	on 1 "slurm_start a srun -N $nr_nodes -n $np --overcommit \
		--distribution=cyclic --mpi=pmix --bcs -J bcs-a \
		$app --seconds $((run_s * 4)) --work 200 --tag a --go $go --stop $stop"
}
start_b()
{
	rm -f "$ob"
	on 1 "slurm_start b sbatch --wait $sl/job-b.sh"
}
start_a && start_b
ok $? "srun -N $nr_nodes -n $np --mpi=pmix --bcs mpi_barrier, and sbatch --bcs of the same srun line, at once"

started()
{
	grep -q '^mpi_barrier: started' "$oa" 2>/dev/null &&
		grep -q '^mpi_barrier: started' "$ob" 2>/dev/null
}
failed_early()
{
	[ -s "$out/slurm-a.rc" ] || [ -s "$out/slurm-b.rc" ]
}
wait_until 300 eval 'started || failed_early'
# Now and then, on a loaded host, Open MPI's TCP wire-up between ranks
# times out in MPI_Init ("failed to TCP connect to a peer MPI process
# ... Operation now in progress"; open-mpi/ompi#11508: timeouts outside
# Open MPI, on an overloaded host) and the step is aborted: that step,
# and only that, is run once more.
tcp_lost()	# tcp_lost LABEL FILE: step LABEL ended, its wire-up failed
{
	[ -s "$out/slurm-$1.rc" ] &&
		grep -q 'failed to TCP connect to a peer MPI process' "$2"
}
relaunched=""
for l in a b; do
	started && break
	f=$oa
	[ "$l" = b ] && f=$ob
	tcp_lost "$l" "$f" || continue
	cp "$f" "$f.lost"
	diag "step $l: Open MPI's TCP wire-up failed in MPI_Init ($(basename "$f").lost): launched once more"
	"start_$l"
	relaunched+=" $l"
done
[ -z "$relaunched" ] || wait_until 300 eval 'started || failed_early'
started
rc=$?
if [ $rc != 0 ]; then
	touch "$go" "$stop"
	for f in "$oa" "$ob" "$out/slurm-b.out"; do
		diag "$f:" "$(tail -n 15 "$f")"
	done
	diag "$(on 1 'squeue' 2>&1)"
fi
ok $rc "both steps through MPI_Init on all $np ranks"
[ $rc = 0 ] || tap_end

# The Slurm job ids, and the bcs jobs the plugin made for their step 0.
sj=()
for l in a b; do
	sj+=("$(on 1 "squeue -h -n bcs-$l -o %i" | head -n 1)")
done
diag "Slurm jobs: a ${sj[0]}, b ${sj[1]}"
labelled()	# labelled NODE: both Slurm jobs' bcs jobs, with their labels
{
	local l
	l=$(on "$1" bcsctl job list) || return 1
	echo "$l" | grep -q " slurm ${sj[0]}$" &&
		echo "$l" | grep -q " slurm ${sj[1]}$"
}
bj=()
for n in $CL_NODES; do
	wait_until 30 labelled "$n"
	rc=$?
	[ $rc = 0 ] || on "$n" bcsctl job list | sed 's/^/# /'
	ok $rc "node$n: bcsctl job list shows a bcs job for each Slurm job, labelled 'slurm ${sj[0]}' and 'slurm ${sj[1]}'"
done
for s in "${sj[@]}"; do
	bj+=("$(on 1 bcsctl job list | awk -v l="$s" '$NF == l { print $1 }')")
done
j1=${bj[0]}
j2=${bj[1]}
# BCS_SLURM_ID_BASE (slurm/bcs_slurm.h): 2^30.
[ "$j1" = $((sj[0] + (1 << 30))) ] && [ "$j2" = $((sj[1] + (1 << 30))) ]
ok $? "the bcs jobs are $j1 and $j2: 2^30 + the Slurm job's id"

touch "$go"
from=$(slice_now 1)
sleep 8
rm -rf "${SHARE:?}/data/slurm"
# shellcheck disable=SC2016 # expanded in the guest
on_all 'snapshot slurm && proc_threads "$SHARE/data/slurm/node$NODE.threads.json"' \
	> /dev/null
ok $? "snapshot of every node while both steps run"
touch "$stop"
analyse coherence --nodes "$nr_nodes" "$SHARE/data/slurm" --from-slice "${from:-0}" \
	--jobs "$j1,$j2" --min 20

done_both()
{
	[ -s "$out/slurm-a.rc" ] && [ -s "$out/slurm-b.rc" ]
}
wait_until $((run_s * 4 + 120)) done_both
for l in a b; do
	rc=$(cat "$out/slurm-$l.rc" 2>/dev/null)
	[ "$rc" = 0 ]
	ok $? "$([ $l = a ] && echo srun || echo sbatch --wait) of job $l exited with status ${rc:-(still running)}"
	[ "$rc" = 0 ] || diag "$(tail -n 15 "$out/slurm-$l.out")"
done
# The threads of each rank: as each rank counted them itself (threads are
# made in MPI_Init, before the snapshot; the rank counts /proc/self/task
# at its end).  proc_threads' count from the guest's /proc at the
# snapshot is only shown: in 2-guest runs it listed none or one thread of
# some ranks that slurmstepd had started (reading /proc/PID/task failed
# or fell short) while bcs held all three of each and the ranks counted
# three; the cause is not known.
"$PY" - "$SHARE/data/slurm" "$oa" "$ob" <<'PY'
import json, re, sys
d = sys.argv[1]
ranks = []
for f in sys.argv[2:]:
    ranks += re.findall(r"^rank \d+ host node(\d+) pid (\d+) threads (\d+)$",
                        open(f).read(), re.M)
for node in sorted({n for n, _, _ in ranks}):
    path = "%s/node%s.threads.json" % (d, node)
    try:
        seen = json.load(open(path))
    except (OSError, ValueError):
        seen = {}
    own = {p: int(t) for n, p, t in ranks if n == node}
    differ = ["%s: %s" % (p, seen.get(p, "none")) for p in sorted(own)
              if seen.get(p) != own[p]]
    if differ:
        print("# node%s: /proc at the snapshot (pid: threads) %s; the ranks "
              "counted %s" % (node, ", ".join(differ), own))
    json.dump(own, open(path, "w"))
PY
analyse mpi "$SHARE/data/slurm" --job "$j1" --np "$np" --output "$oa"
analyse mpi "$SHARE/data/slurm" --job "$j2" --np "$np" --output "$ob"
diag "$(grep -h '^mpi_barrier: size' "$oa" "$ob")"

for n in $CL_NODES; do
	wait_until 60 gone "$n" "$j1" "$j2"
	rc=$?
	[ $rc = 0 ] || on "$n" bcsctl job list | sed 's/^/# /'
	ok $rc "node$n: bcs jobs $j1 and $j2 gone after the steps ended, labels too"
done

# --- scancel while the gangs take turns ---------------------------------------
# shellcheck disable=SC2016 # expanded in the tasks
burn='echo "task $SLURM_PROCID BCS_JOB=$BCS_JOB"; while :; do :; done'
for l in c d; do
	on 1 "slurm_start $l srun -N $nr_nodes -n $nr_nodes -J bcs-$l --bcs \
		sh -c '$burn' bcs-burn-$l"
done
burning()	# burning LABEL: every task has said its BCS_JOB
{
	[ "$(grep -c '^task .* BCS_JOB=[0-9]' "$out/slurm-$1.out" 2>/dev/null)" = "$nr_nodes" ]
}
wait_until 120 eval 'burning c && burning d'
rc=$?
[ $rc = 0 ] || diag "$(tail -n 5 "$out"/slurm-[cd].out)"
ok $rc "two CPU-bound steps with --bcs, BCS_JOB set in every task"
sc=$(on 1 "squeue -h -n bcs-c -o %i" | head -n 1)
sd=$(on 1 "squeue -h -n bcs-d -o %i" | head -n 1)
jc=$((sc + (1 << 30)))
jd=$((sd + (1 << 30)))
grep -q "BCS_JOB=$jc\$" "$out/slurm-c.out" &&
	! grep -v "BCS_JOB=$jc\$" "$out/slurm-c.out" | grep -q '^task'
ok $? "step $sc.0's tasks all have BCS_JOB=$jc"
# The tasks, as the checks below look for them (srun runs the program by
# its full path: /usr/bin/sh).
for n in $CL_NODES; do
	on "$n" "pgrep -f '^([^ ]*/)?sh -c .*bcs-burn-c\$' && pgrep -f '^([^ ]*/)?sh -c .*bcs-burn-d\$'" > /dev/null
	ok $? "node$n: a task of each step runs"
done
# Let the gangs take a few turns, so that each is parked now and then.
sleep 4
on 1 "scancel $sc"
ok $? "scancel $sc (bcs job $jc) while job $sd (bcs job $jd) shares the nodes"

# No process of the cancelled step left, stopped or otherwise; none of its
# tasks in bcs; and job d's tasks still there.
cancelled()	# cancelled NODE LABEL JOB
{
	on "$1" "! pgrep -f '^([^ ]*/)?sh -c .*bcs-burn-$2\$' > /dev/null &&
		bcsstat tasks --json | $PY -c '
import json, sys
sys.exit(any(t[\"job\"] == $3 for t in json.load(sys.stdin)))'"
}
for n in $CL_NODES; do
	wait_until 60 cancelled "$n" c "$jc"
	rc=$?
	[ $rc = 0 ] || on "$n" "ps -eo pid,stat,args | grep bcs-bur[n]" | sed 's/^/# /'
	ok $rc "node$n: no task of the cancelled step left, in bcs or out"
	wait_until 60 gone "$n" "$jc"
	ok $? "node$n: its bcs job $jc gone"
done
for n in $CL_NODES; do
	on "$n" "p=\$(pgrep -d, -f '^([^ ]*/)?sh -c .*bcs-burn-d\$') &&
		! ps -o stat= -p \"\$p\" | grep -q T"
	ok $? "node$n: the other step still runs, none of it stopped"
done

on 1 "scancel $sd"
for n in $CL_NODES; do
	wait_until 60 cancelled "$n" d "$jd" && wait_until 60 gone "$n" "$jd"
	ok $? "node$n: after scancel $sd nothing of it is left, nor its bcs job"
	# shellcheck disable=SC2016 # expanded in the guest
	on "$n" 'bcsstat tasks --json' | "$PY" -c '
import json, sys
sys.exit(len(json.load(sys.stdin)) != 0)'
	ok $? "node$n: no task left in bcs at all"
done
wait_until 60 eval '[ -s "$out/slurm-c.rc" ] && [ -s "$out/slurm-d.rc" ]'
ok $? "both sruns ended (status $(cat "$out/slurm-c.rc" 2>/dev/null) and $(cat "$out/slurm-d.rc" 2>/dev/null))"

on_all stop_slurm > /dev/null
tap_end

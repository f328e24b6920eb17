#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster side of bench/slurm_gang.sh: run by
# selftests/cluster/run-cluster.sh as a test script, on guests with bcsd
# up.  Brings Slurm up (selftests/cluster/lib.sh, as test-slurm.sh does),
# then, round by round, two MPI barrier jobs (bench/mpi_barrier, one rank
# per node, srun --mpi=pmix) submitted at once under
#
#   gang     Slurm's gang scheduler: PreemptMode=GANG, SchedulerTimeSlice
#            $SG_TIMESLICE s (slurmctld restarted with that configuration);
#            each job an allocation (salloc) whose srun is tried again
#            until its step is created (slurm_alloc_srun, guest-lib.sh):
#            slurmctld suspends the second job at once, and a plain srun
#            of a suspended job waits 300 s before it asks again;
#            slurmstepd suspends a step with SIGTSTP and, 2 s later,
#            SIGSTOP (proctrack/linuxproc), resumes it with SIGCONT
#   gang-freezer  the same with ProctrackType=proctrack/cgroup on cgroup
#            v2 (CgroupPlugin=cgroup/v2, IgnoreSystemd=yes: no systemd in
#            the guests; cgroup2 mounted on /sys/fs/cgroup first): the
#            SIGSTOP becomes a write of 1 to the step's cgroup.freeze
#            (after the same SIGTSTP), the resumption a SIGCONT and 0
#   bcs-US   srun --bcs, bcsd's slices US microseconds long
#   plain    OverSubscribe=FORCE, no gang, no bcs: the nodes' schedulers
#   seq      one after the other
#
# The makespan runs from the moment both jobs are through MPI_Init and
# released (mpi_barrier --go) until the last one's rank 0 has finished
# its iterations; for seq, the sum of the two.  Rounds stop early when
# the next would not end before SG_DEADLINE (epoch seconds).  Prints TAP,
# the table in its notes, and writes the table to $SG_RESULT.
#
# Environment: SG_ROUNDS (default 2), SG_ITERS (iterations per job;
# default 0: as many as a job alone does in SG_SECONDS, default 20, found
# by a calibration run), SG_WORK (default 200), SG_TIMESLICE (default 5),
# SG_BCS_SLICES (default "100000"), SG_DEADLINE, SG_RESULT.

# shellcheck source=../selftests/cluster/lib.sh disable=SC2154 # nr_nodes, PY: lib.sh
. "$CL_DIR/lib.sh"

rounds=${SG_ROUNDS:-2}
iters=${SG_ITERS:-0}
secs=${SG_SECONDS:-20}
work=${SG_WORK:-200}
tslice=${SG_TIMESLICE:-5}
bcs_slices=${SG_BCS_SLICES:-100000}
deadline=${SG_DEADLINE:-$((EPOCHSECONDS + 3600))}
result=${SG_RESULT:-$BUILD/bench/slurm_gang.txt}
app=$BUILD/bench/mpi_barrier
out=$SHARE/out
go=$out/sg-go
raw=$SHARE/slurm-gang.raw

missing=$(slurm_missing)
if [ -n "$missing" ]; then
	ok 1 "Slurm, munge, the bcs plugin and mpi_barrier installed (missing:$missing)"
	tap_end
fi
plain_conf="PreemptMode=OFF"
gang_conf="PreemptMode=GANG
SchedulerTimeSlice=$tslice
DebugFlags=Gang"
# Slurm's gang first: a run cut short by its deadline has the runs that
# matter most.
slurm_up "$gang_conf" || tap_end

# freezer_restart TEXT: slurmctld and slurmd again on the gang
# configuration, with proctrack/cgroup on cgroup v2 (slurm_conf,
# lib.sh); records TEXT.  The guests mount nothing on /sys/fs/cgroup;
# slurmd makes system.slice/NODE_slurmstepd.scope there (Debian builds
# Slurm with multiple slurmd support), but not system.slice.
# shellcheck disable=SC2016 # expanded in the guest
cg_mount='{ grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts ||
	mount -t cgroup2 cgroup2 /sys/fs/cgroup; } && mkdir -p /sys/fs/cgroup/system.slice'
freezer_restart()
{
	local rc
	on_all "$cg_mount" > "$out/sg-err" 2>&1
	rc=$?
	ok $rc "cgroup2 on /sys/fs/cgroup in every guest"
	[ $rc = 0 ] || { diag "$(cat "$out/sg-err")"; return 1; }
	slurm_proctrack=cgroup slurm_restart "$gang_conf" "$1"
	rc=$?
	[ $rc = 0 ] || diag "$(grep -h 'error\|fatal' "$SHARE"/../node*/slurmd.log | tail -n 6)"
	return $rc
}
# The freezer's trace: on node2, every 2 s while a gang-freezer run lasts
# (at most 600 s), the values of the steps' cgroup.freeze, a line a
# sample, in $out/sg-freeze (record runs gang_freezer_run in a subshell);
# freeze_diag ROUND tells how many samples had a step frozen.
# shellcheck disable=SC2016 # expanded in the guest
fz_sampler='( i=0; while [ $i -lt 300 ]; do
	cat /sys/fs/cgroup/system.slice/*slurmstepd.scope/job_*/step_*/user/cgroup.freeze 2>/dev/null | tr -d "\n"; echo
	sleep 2; i=$((i + 1)); done ) > "$SHARE/out/sg-freeze" 2>&1 < /dev/null &
	echo $! > "$STATE/sg-sampler.pid"'
gang_freezer_run()
{
	local rc
	rm -f "$out/sg-freeze"
	on 2 "$fz_sampler" > /dev/null
	gang_run "$@"
	rc=$?
	# shellcheck disable=SC2016 # expanded in the guest
	on 2 'kill "$(cat "$STATE/sg-sampler.pid")"' > /dev/null
	return $rc
}
freeze_diag()
{
	[ -s "$out/sg-freeze" ] || return 0
	diag "round $1, gang-freezer: node2 had a step frozen (cgroup.freeze 1) in $(grep -c 1 "$out/sg-freeze") of $(wc -l < "$out/sg-freeze") samples 2 s apart"
	rm -f "$out/sg-freeze"
}

# launch LABEL [--bcs]: srun of mpi_barrier, one rank per node, from node1
# in the background; it waits for $go after MPI_Init.  With alloc=1 (the
# gang runs), in an allocation of its own (slurm_alloc_srun).
alloc=0
launch()
{
	local sub="srun -J sg-$1"
	[ "$alloc" = 1 ] && sub="slurm_alloc_srun sg-$1 $nr_nodes"
	on 1 "slurm_start $1 $sub -N $nr_nodes -n $nr_nodes --distribution=cyclic \
		--mpi=pmix ${2:-} $app --iters $iters --work $work \
		--tag $1 --go $go" > /dev/null
}
has()		# has LABEL PATTERN: the job's output has a line PATTERN
{
	grep -q "$2" "$out/slurm-$1.out" 2>/dev/null
}
all_have()	# all_have PATTERN LABEL...
{
	local p=$1 l
	shift
	for l in "$@"; do
		has "$l" "$p" || return 1
	done
}
ended()		# ended LABEL...: every srun has exited
{
	local l
	for l in "$@"; do
		[ -s "$out/slurm-$l.rc" ] || return 1
	done
}

# run LABEL [--bcs] [LABEL [--bcs]]: one or two jobs at once, released
# together once all are through MPI_Init; prints the makespan in seconds,
# fails (and prints why on stderr) if a job failed or took too long.
run()
{
	local labels=() opts=() t0 end l
	while [ $# -gt 0 ]; do
		labels+=("$1")
		if [ "${2:-}" = --bcs ]; then
			opts+=(--bcs)
			shift 2
		else
			opts+=("")
			shift
		fi
	done
	rm -f "$go"
	for l in "${!labels[@]}"; do
		launch "${labels[$l]}" "${opts[$l]}"
	done
	if ! wait_until 600 eval 'all_have "^mpi_barrier: started" "${labels[@]}" || ended "${labels[@]}"' ||
	   ! all_have "^mpi_barrier: started" "${labels[@]}"; then
		touch "$go"
		echo "not through MPI_Init: $(tail -n 3 "$out"/slurm-"${labels[0]}".out)" >&2
		on 1 "scancel -n sg-${labels[0]}; scancel -n sg-${labels[1]:-none}" > /dev/null
		wait_until 120 ended "${labels[@]}"
		return 1
	fi
	touch "$go"
	t0=$EPOCHREALTIME
	end=$((EPOCHSECONDS + 600))
	until all_have "^mpi_barrier: size" "${labels[@]}"; do
		if [ "$EPOCHSECONDS" -ge "$end" ] || ended "${labels[@]}"; then
			all_have "^mpi_barrier: size" "${labels[@]}" && break
			echo "did not finish: $(tail -n 3 "$out"/slurm-"${labels[0]}".out)" >&2
			on 1 "scancel -n sg-${labels[0]}; scancel -n sg-${labels[1]:-none}" > /dev/null
			wait_until 120 ended "${labels[@]}"
			return 1
		fi
		sleep 0.2
	done
	"$PY" -c 'import sys, time; print("%.2f" % (time.time() - float(sys.argv[1])))' "$t0"
	wait_until 120 ended "${labels[@]}" || { echo "srun did not exit" >&2; return 1; }
	for l in "${labels[@]}"; do
		[ "$(cat "$out/slurm-$l.rc")" = 0 ] && has "$l" " check ok" ||
			{ echo "job $l: $(tail -n 3 "$out/slurm-$l.out")" >&2; return 1; }
	done
}

# bcsd_slices US: bcsd restarted on every node with slices of US
# microseconds, node1 the master, the others nodes only (no standby to
# take over meanwhile), as the cluster demo does it (demo-run.sh): the
# lead 30 % of the slice, at most the bed's, and a starting master's
# wait for silence about 3 s at most.
cur_slice=$CL_SLICE_US
bcsd_slices()
{
	local n lead fo
	[ "$1" = "$cur_slice" ] && return 0
	for n in $(echo "$CL_NODES" | tr ' ' '\n' | sort -rn); do
		on "$n" 'kill_bcsd TERM' > /dev/null
	done
	lead=$(($1 * 30 / 100))
	[ "$lead" -le "$CL_LEAD_US" ] || lead=$CL_LEAD_US
	fo=$((3000000 / $1 < CL_FAILOVER ? 3000000 / $1 : CL_FAILOVER))
	[ "$fo" -ge 2 ] || fo=2
	on 1 "start_bcsd --role=both --priority=200 --slice_us=$1 \
		--lead_us=$lead --failover_slices=$fo" > /dev/null &&
		wait_until 30 eval '[ "$(status_of 1 master)" = "1 (this node)" ]' || return 1
	for n in $CL_NODES; do
		[ "$n" = 1 ] || on "$n" "start_bcsd --role=node" > /dev/null || return 1
	done
	wait_until 30 all_follow_master || return 1
	cur_slice=$1
}

# table: the table of what $raw holds so far into $result (after every
# run, so that a run cut short still leaves one).
table()
{
	mkdir -p "$(dirname "$result")"
	"$PY" - "$raw" "$nr_nodes" "$iters" "$work" "$tslice" > "$result" <<'PY'
import statistics, sys
raw, nodes, iters, work, tslice = sys.argv[1:]
runs = {}
order = []
for line in open(raw):
    r, c, m = line.split()
    runs.setdefault(c, {})[int(r)] = float(m)
    if c not in order:
        order.append(c)
print("Slurm makespans: two MPI barrier jobs (mpi_barrier, %s ranks, one per "
      "node, iters %s work %s); gang = PreemptMode=GANG SchedulerTimeSlice=%s s"
      % (nodes, iters, work, tslice))
print("%-12s %6s %10s %10s %s" % ("config", "rounds", "median_s", "vs_seq", "makespans"))
seq = runs.get("seq", {})
for c in order:
    ms = runs[c]
    ratios = [ms[r] / seq[r] for r in ms if r in seq]
    print("%-12s %6d %10.2f %10s %s" % (
        c, len(ms), statistics.median(ms.values()),
        "%.3f" % statistics.median(ratios) if ratios else "-",
        " ".join("%.1f" % ms[r] for r in sorted(ms))))
PY
}

# record ROUND CONFIG CMD...: CMD's makespan into the raw results.
record()
{
	local r=$1 c=$2 m
	shift 2
	if [ "$EPOCHSECONDS" -ge $((deadline - 120)) ]; then
		diag "round $r, $c: not run, too near the deadline"
		return 0
	fi
	m=$("$@" 2> "$out/sg-err")
	[ -n "$m" ] && [ ! -s "$out/sg-err" ]
	ok $? "round $r, $c: makespan ${m:-?} s"
	if [ -n "$m" ] && [ ! -s "$out/sg-err" ]; then
		echo "$r $c $m" >> "$raw"
		table
	else
		diag "$(cat "$out/sg-err")"
	fi
}
gang_run()	# gang_run LABEL LABEL: run, each job an allocation of its own
{
	alloc=1
	run "$@"
}
seq_run()
{
	local a b
	a=$(run a) && b=$(run b) &&
		"$PY" -c 'import sys; print("%.2f" % (float(sys.argv[1]) + float(sys.argv[2])))' "$a" "$b"
}

if [ "$iters" = 0 ]; then
	# Calibration: a job alone for SG_SECONDS; its iteration count sizes
	# both jobs.
	rm -f "$go"
	touch "$go"
	on 1 "slurm_start cal srun -N $nr_nodes -n $nr_nodes --distribution=cyclic \
		--mpi=pmix -J sg-cal $app --seconds $secs --work $work --go $go" > /dev/null
	wait_until $((secs + 300)) ended cal
	iters=$(sed -n 's/^mpi_barrier: size [0-9]* iters \([0-9]*\) .*/\1/p' "$out/slurm-cal.out")
	[ -n "$iters" ] && [ "$iters" -gt 0 ]
	ok $? "calibration: a job alone does ${iters:-?} iterations of work $work in ${secs} s"
	[ -n "$iters" ] && [ "$iters" -gt 0 ] || tap_end
fi

rm -f "$raw"
# others: the runs under slurmctld without gang.
others()
{
	local s
	for s in $bcs_slices; do
		bcsd_slices "$s"
		ok $? "round $r: bcsd with $s us slices"
		record "$r" "bcs-$((s / 1000))ms" run a --bcs b --bcs
	done
	record "$r" seq seq_run
	record "$r" plain run a b
}
# Two restarts of slurmctld a round: Slurm's gang first in odd rounds (it
# is up with the gang configuration), then its gang on the freezer, then
# the others; in even rounds the other way round.
round_s=0
r=1
while [ "$r" -le "$rounds" ]; do
	t=$EPOCHSECONDS
	if [ "$r" -gt 1 ] && [ $((t + round_s)) -gt "$deadline" ]; then
		diag "round $r not run: a round takes ${round_s} s, the deadline is $((deadline - t)) s away"
		break
	fi
	if [ $((r % 2)) = 1 ]; then
		record "$r" gang gang_run a b
		freezer_restart "round $r: slurmctld and slurmd with GANG and proctrack/cgroup (cgroup v2 freezer)" &&
			record "$r" gang-freezer gang_freezer_run a b
		slurm_restart "$plain_conf" "round $r: slurmctld and slurmd without gang" || break
		others
	else
		others
		freezer_restart "round $r: slurmctld and slurmd with GANG and proctrack/cgroup (cgroup v2 freezer)" &&
			record "$r" gang-freezer gang_freezer_run a b
		slurm_restart "$gang_conf" "round $r: slurmctld and slurmd with PreemptMode=GANG SchedulerTimeSlice=$tslice" || break
		record "$r" gang gang_run a b
	fi
	freeze_diag "$r"
	round_s=$((EPOCHSECONDS - t))
	r=$((r + 1))
done
bcsd_slices "$CL_SLICE_US" > /dev/null
ctld=$SHARE/../node1/slurmctld.log
diag "slurmctld on the gang configuration: $(grep -c 'gang: suspending' "$ctld" 2>/dev/null) suspensions, $(grep -c 'gang: resuming' "$ctld" 2>/dev/null) resumptions; the first:" \
	"$(grep 'gang: suspending\|gang: resuming' "$ctld" 2>/dev/null | head -n 6)"

[ -s "$result" ]
ok $? "table in $result"
diag "$(cat "$result")"
on_all stop_slurm > /dev/null
tap_end

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host-side helpers of the cluster tests; sourced by every test-*.sh, which
# run-cluster.sh starts with SHARE (the directory all guests share),
# CL_DIR (this directory) and CL_NODES exported.
#
# A test prints TAP: "ok N text" / "not ok N text" lines and "# " notes,
# then "1..N"; it exits 1 if anything failed.

# shellcheck source=/dev/null
. "$SHARE/config.sh"

PY=/usr/bin/python3
# shellcheck disable=SC2034 # for the tests that source this
nr_nodes=$(echo "$CL_NODES" | wc -w)
tap_n=0
tap_failed=0

ok()		# ok COND-STATUS TEXT: record a result
{
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $tap_n $2"
	else
		echo "not ok $tap_n $2"
		tap_failed=1
	fi
}

diag()
{
	printf '%s\n' "$@" | sed 's/^/# /'
}

# Turn analyse.py's PASS/FAIL lines into results, the rest into notes.
tap_from()
{
	local line
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok 0 "${line#PASS }" ;;
		FAIL\ *) ok 1 "${line#FAIL }" ;;
		*)       diag "${line#\# }" ;;
		esac
	done
}

tap_end()
{
	echo "1..$tap_n"
	exit $tap_failed
}

analyse()
{
	local f rc
	f=$(mktemp)
	"$PY" "$CL_DIR/analyse.py" "$@" > "$f" 2>&1
	rc=$?
	tap_from < "$f"
	# A crash, or an analysis that checked nothing, is a failure.
	if ! grep -q '^\(PASS\|FAIL\) ' "$f"; then
		ok 1 "analyse.py $1 checked something (exit $rc)"
	elif [ $rc = 1 ] && ! grep -q '^FAIL ' "$f"; then
		ok 1 "analyse.py $1 failed without saying why"
	fi
	rm -f "$f"
	case $rc in
	0|1) ;;
	*) ok 1 "analyse.py $1 ran (exit $rc)" ;;
	esac
}

# json FILE EXPR: a value from a JSON file, EXPR in Python over "v".
json()
{
	"$PY" -c 'import json, sys
try:
    v = json.load(open(sys.argv[1]))
    print(eval(sys.argv[2]))
except Exception as e:
    print("?")' "$1" "$2"
}

# on NODE [-t SEC] CMD: run shell CMD in the guest of NODE (guest-lib.sh
# functions available) and print its output; returns its exit status, or
# 124 if the guest did not answer in time.  The files of an answered
# command end in SHARE/cmd/nodeNODE/done/.
on()
{
	local n=$1 t=120 id d rc end
	shift
	if [ "$1" = -t ]; then
		t=$2
		shift 2
	fi
	d=$SHARE/cmd/node$n
	id=$(date +%s%N)$RANDOM
	printf '#timeout %s\n%s\n' "$t" "$*" > "$d/.$id.tmp"
	mv "$d/.$id.tmp" "$d/$id.sh"
	end=$((EPOCHSECONDS + t + 60))
	while [ ! -s "$d/$id.rc" ]; do
		if [ "$EPOCHSECONDS" -ge "$end" ]; then
			echo "node$n did not answer: $*" >&2
			return 124
		fi
		sleep 0.2
	done
	cat "$d/$id.out"
	rc=$(cat "$d/$id.rc")
	# Out of the agent's way, kept for the record: the agent lists its
	# directory over 9p every 0.2 s, and with every command ever run
	# left there its pick-up time grew from 1 to 6 s over the suite.
	# ID.sh first: the agent takes a listed command whose ID.rc is
	# missing only if ID.sh is still there.
	mv -f "$d/$id.sh" "$d/$id.out" "$d/$id.rc" "$d/done/" 2> /dev/null
	return "${rc:-1}"
}

# on_each DIR CMD: run CMD on every node at once; output in DIR/N, exit
# status in DIR/N.rc; fails if it failed anywhere.
on_each()
{
	local d=$1 n rc=0
	shift
	rm -rf "$d"
	mkdir -p "$d"
	for n in $CL_NODES; do
		( on "$n" "$@" > "$d/$n" 2>&1; echo $? > "$d/$n.rc" ) &
	done
	wait
	for n in $CL_NODES; do
		[ "$(cat "$d/$n.rc")" = 0 ] || rc=1
	done
	return $rc
}

# on_all CMD: run CMD on every node at once; output prefixed by node.
on_all()
{
	local n rc=0 pids=() f
	f=$(mktemp -d)
	for n in $CL_NODES; do
		on "$n" "$@" > "$f/$n" 2>&1 &
		pids+=($!)
	done
	for n in "${!pids[@]}"; do
		wait "${pids[$n]}" || rc=1
	done
	for n in $CL_NODES; do
		sed "s/^/node$n: /" "$f/$n"
	done
	rm -rf "$f"
	return $rc
}

# wait_until SEC CMD...: poll CMD every second until it succeeds.
wait_until()
{
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 1
	done
}

# tracked NODE JOB: the tasks of JOB that NODE's bcs.ko records now (a
# burner never sleeps: its one burst never ends, so no count would do;
# test-stats.sh, test-tree.sh).
tracked()
{
	on "$1" "{ bcsstat dist --job $2 --json 2>/dev/null || echo []; } | $PY -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for doc in d for t in doc[\"tasks\"] if t[\"tracking\"]))'"
}

# two_jobs TEXT: two cluster jobs (owned by uid $JOB_OWNER if set), created from node2 and node3 through
# the master, in j1 and j2; records TEXT, and ends the test if that failed.
two_jobs()
{
	local r1 r2
	j1=$(on 2 bcsctl job create ${JOB_OWNER:+--owner "$JOB_OWNER"})
	r1=$?
	j2=$(on 3 bcsctl job create ${JOB_OWNER:+--owner "$JOB_OWNER"})
	r2=$?
	case $j1$j2 in
	*[!0-9]*|"") r1=1 ;;
	esac
	[ "$j1" != "$j2" ] || r1=1
	ok $((r1 | r2)) "$1 (jobs '$j1' '$j2')"
	[ $((r1 | r2)) = 0 ] || tap_end
}

# start_burners LABEL J1 J2: a CPU-bound task of each job on every node,
# started by bcsctl run; records the result and sets burners to
# "node:job:pid,..." (saved in SHARE/pids for the analyses).
start_burners()
{
	local out=$SHARE/out/$1-burners rc n p1 p2 more
	# One command per node, all nodes at once: TCG guests are slow to fork.
	on_each "$out" "start_burner $2 && start_burner $3"
	rc=$?
	burners=""
	for n in $CL_NODES; do
		# Each start_burner prints its pid on a line of its own.
		read -r -d '' p1 p2 more < "$out/$n"
		case $p1:$p2:$more in
		[0-9]*:[0-9]*:)
			burners="$burners${burners:+,}$n:$2:$p1,$n:$3:$p2" ;;
		*)
			diag "node$n: $(cat "$out/$n")"
			rc=1 ;;
		esac
	done
	echo "$burners" > "$SHARE/pids"
	ok $rc "bcsctl run --job attaches a task of each job on every node ($burners)"
}

kstate()	# kstate NODE KEY
{
	on "$1" "kstate $2"
}

# A value of bcsd's stats JSON (dotted path) on NODE; 0 if the field is
# absent, "?" if the stats cannot be read (so that no comparison passes).
stat_of()
{
	on "$1" bcsd_stats | "$PY" -c '
import json, sys
try:
    v = json.load(sys.stdin)
    if not isinstance(v, dict) or not v:
        raise ValueError
except ValueError:
    print("?")
    sys.exit(0)
for k in sys.argv[1].split("."):
    v = v.get(k, 0) if isinstance(v, dict) else 0
print(v)' "$2"
}

# Field of "bcsctl status" (e.g. "master", "epoch") on NODE.
status_of()
{
	on "$1" bcsctl status | sed -n "s/^$2: *//p" | head -n 1
}

all_follow_master()	# every node but node1 names node1 its master
{
	local n
	for n in $CL_NODES; do
		[ "$n" = 1 ] || [ "$(status_of "$n" master)" = 1 ] || return 1
	done
}

# restart_bcsd [OPTION...]: bcsd stopped on every node and started again
# as run-cluster.sh starts it (node1 the master, node3 a standby), with
# the OPTIONs; records two results.
restart_bcsd()
{
	local n rc=0
	for n in $(echo "$CL_NODES" | tr ' ' '\n' | sort -rn); do
		on "$n" 'kill_bcsd TERM' > /dev/null
	done
	on 1 "start_bcsd --role=both --priority=200 $*" > /dev/null &&
		wait_until 30 eval '[ "$(status_of 1 master)" = "1 (this node)" ]'
	ok $? "node1: bcsd restarted as the master${*:+ ($*)}"
	for n in $CL_NODES; do
		case $n in
		1) ;;
		3) on 3 "start_bcsd --role=both --priority=100 $*" ;;
		*) on "$n" "start_bcsd --role=node $*" ;;
		esac > /dev/null || rc=1
	done
	[ $rc = 0 ] && wait_until 30 all_follow_master
	ok $? "every node follows node1${*:+ ($*)}"
}

# tree_chain [GUEST-CMD]: every bcsd stopped (and the burners), a nodes
# file of the cluster's nodes on each (and GUEST-CMD run there too), then
# bcsd started afresh with strobe_transport tree and fan-out 1, a chain
# 1 -> 2 -> 3, node1 the master; records three results.  The options are
# left in $tree for a restart.
tree_chain()
{
	local net=${CL_NET:-10.77.0} nodes="" n rc=0
	for n in $(echo "$CL_NODES" | tr ' ' '\n' | sort -rn); do
		on "$n" 'kill_bcsd TERM; stop_burners' > /dev/null
	done
	for n in $CL_NODES; do
		nodes+="$n $net.$n\n"
	done
	for n in $CL_NODES; do
		on "$n" "printf '$nodes' > \$STATE/nodes${1:+ && $1}" || rc=1
	done
	ok $rc "every node: a nodes file of $nr_nodes nodes${1:+, then '$1'}"
	tree="--nodes_file=\$STATE/nodes --tree_fanout=1 --strobe_transport=tree"
	on 1 "start_bcsd --role=both --priority=200 $tree" > /dev/null &&
		wait_until 30 eval '[ "$(status_of 1 master)" = "1 (this node)" ]'
	ok $? "node1: bcsd restarted as the master, strobes down a chain"
	rc=0
	for n in $CL_NODES; do
		[ "$n" = 1 ] ||
			on "$n" "start_bcsd --role=node $tree" > /dev/null || rc=1
	done
	[ $rc = 0 ] && wait_until 30 all_follow_master
	ok $? "every node follows node1 through the tree"
}

# snapshot_all LABEL [RECORDS]: every node's view into SHARE/data/LABEL,
# with the last RECORDS slice records (default 800).
snapshot_all()
{
	rm -rf "${SHARE:?}/data/$1"
	on_all "snapshot $1 ${2:-}" > /dev/null
}

followed()	# followed NODE MASTER [EPOCH]: NODE's bcsd follows MASTER with
{		# an epoch above EPOCH (default $ep0, else 0)
	local s m e
	s=$(on "$1" bcsctl status)
	m=$(echo "$s" | sed -n 's/^master: *\([0-9]*\).*/\1/p')
	e=$(echo "$s" | sed -n 's/^epoch: *//p')
	[ "$m" = "$2" ] && [ "${e:-0}" -gt "${3:-${ep0:-0}}" ]
}

gone()		# gone NODE J...: the list could be read, and no J is in it
{
	local l n=$1
	shift
	l=$(on "$n" bcsctl job list) || return 1
	echo "$l" | awk -v js=" $* " \
		'NR > 1 && index(js, " " $1 " ") { f = 1 } END { exit f }'
}

slice_now()	# the cluster slice as NODE's bcsd knows it
{
	status_of "$1" "cluster slice"
}

# --- Slurm (test-slurm.sh, bench/slurm_gang.sh) -------------------------------
# slurmctld on node1, slurmd on every node, munge with one key, a partition
# "bcs" over all nodes, and bcs's SPANK plugin (slurm/bcs.so) in
# plugstack.conf; the configuration in SHARE/slurm.  The daemons keep their
# state under the guests' tmpfs and log into the nodes' output directories
# (guest-lib.sh).

slurm_plugin=$(cd "$CL_DIR/../.." && pwd)/slurm/bcs.so

# slurm_missing: the programs and files Slurm runs need and lack, if any.
slurm_missing()
{
	local c f missing=""
	for c in slurmctld slurmd srun squeue scancel sinfo munged munge mungekey; do
		command -v "$c" > /dev/null || missing="$missing $c"
	done
	for f in "$BUILD/bench/mpi_barrier" "$slurm_plugin" \
		/usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so; do
		[ -e "$f" ] || missing="$missing $f"
	done
	echo "$missing"
}

# slurm_conf [LINES]: slurm.conf, cgroup.conf and plugstack.conf in
# SHARE/slurm; LINES (newline-separated) are added to slurm.conf before
# the nodes, so that a later "slurm_conf LINES" plus slurm_restart
# changes, say, the preemption mode.  With slurm_proctrack=cgroup (unset:
# linuxproc), ProctrackType=proctrack/cgroup on the cgroup v2 plugin
# without systemd, so that a suspended step is frozen (cgroup.freeze)
# rather than stopped; the guests then need cgroup2 mounted on
# /sys/fs/cgroup, with a directory system.slice, before slurmd starts
# (bench/slurm_gang_run.sh does it).
# With slurm_state=DIR, the daemons' state and logs under DIR instead of
# STATE/slurm; with slurm_installed=1, no plugstack.conf here and no
# PlugStackConfig: Slurm's own (/etc/slurm/plugstack.conf, which includes
# plugstack.conf.d/*.conf) loads the packaged plugin (test-install.sh).
slurm_conf()
{
	local sl=$SHARE/slurm n pt=${slurm_proctrack:-linuxproc}
	# STATE/slurm in the guests (guest-lib.sh)
	local st=${slurm_state:-/tmp/bcs-cluster/slurm}
	mkdir -p "$sl"
	{
		cat <<-EOF
		# Written by selftests/cluster/lib.sh (slurm_conf)
		ClusterName=bcs
		SlurmctldHost=node1($CL_NET.1)
		SlurmUser=root
		SlurmdUser=root
		AuthType=auth/munge
		CredType=cred/munge
		StateSaveLocation=$st/ctld
		SlurmdSpoolDir=$st/spool
		SlurmctldPidFile=$st/slurmctld.pid.slurm
		SlurmdPidFile=$st/slurmd.pid.slurm
		SlurmctldLogFile=$st/log/slurmctld.log
		SlurmdLogFile=$st/log/slurmd.log
		SlurmctldDebug=info
		SlurmdDebug=info
		ProctrackType=proctrack/$pt
		TaskPlugin=task/none
		JobAcctGatherType=jobacct_gather/none
		AccountingStorageType=accounting_storage/none
		JobCompType=jobcomp/none
		SwitchType=switch/none
		MpiDefault=none
		SelectType=select/linear
		SchedulerType=sched/builtin
		ReturnToService=2
		# Emulated CPUs are slow.
		MessageTimeout=60
		SlurmdTimeout=300
		SlurmctldTimeout=300
		BatchStartTimeout=120
		KillWait=10
		InactiveLimit=0
		EOF
		[ "${slurm_installed:-0}" = 1 ] ||
			echo "PlugStackConfig=$sl/plugstack.conf"
		[ -z "${1:-}" ] || printf '%s\n' "$1"
		for n in $CL_NODES; do
			echo "NodeName=node$n NodeAddr=$CL_NET.$n CPUs=1 State=UNKNOWN"
		done
		echo "PartitionName=bcs Nodes=node[1-$nr_nodes] Default=YES OverSubscribe=FORCE:4 MaxTime=INFINITE State=UP"
	} > "$sl/slurm.conf"
	# slurmd initialises a cgroup plugin whatever else is configured, and
	# its autodetection fails where nothing is mounted on /sys/fs/cgroup
	# (the guests): name the v1 plugin, which mounts nothing until a
	# cgroup-based plugin asks (none here: proctrack/linuxproc, task/none).
	echo "CgroupPlugin=cgroup/v1" > "$sl/cgroup.conf"
	# proctrack/cgroup: cgroup v2, slurmd making its own directories under
	# /sys/fs/cgroup/system.slice (no systemd, no dbus in the guests), no
	# controller enabled (CgroupAutomount off): the freezer is in the core.
	[ "$pt" = linuxproc ] ||
		printf '%s\n' CgroupPlugin=cgroup/v2 IgnoreSystemd=yes > "$sl/cgroup.conf"
	# require=yes: a node without bcs fails the step, not run it silently.
	[ "${slurm_installed:-0}" = 1 ] ||
		echo "required $slurm_plugin default=off require=yes wait=10" > "$sl/plugstack.conf"
}

slurm_idle()	# every node idle in partition bcs
{
	[ "$(on 1 'sinfo -h -N -o "%N %T"' | grep -c ' idle$')" = "$nr_nodes" ]
}

# slurm_wait_idle TEXT: wait for every node to be idle, record TEXT.
slurm_wait_idle()
{
	local rc n
	wait_until 120 slurm_idle
	rc=$?
	diag "$(on 1 'sinfo -N' 2>&1)"
	if [ $rc != 0 ]; then
		for n in $CL_NODES; do
			diag "node$n slurmd.log:" "$(tail -n 4 "$SHARE/../node$n/slurmd.log" 2>&1)"
		done
	fi
	ok $rc "$1"
	return $rc
}

# slurm_up [LINES]: a munge key, slurm_conf LINES, munged, slurmctld and
# slurmd started, every node idle; records a result for each step and
# fails at the first that failed.
slurm_up()
{
	local sl=$SHARE/slurm out=$SHARE/out rc
	rm -rf "$sl"
	mkdir -p "$sl" "$out"
	mungekey -c -b 1024 -k "$sl/munge.key" || { ok 1 "mungekey"; return 1; }
	slurm_conf "${1:-}"
	ok 0 "slurm.conf, cgroup.conf, plugstack.conf and a munge key in $sl"

	on_each "$out/slurm-munge" start_munge
	rc=$?
	[ $rc = 0 ] || diag "$(tail -n 5 "$out"/slurm-munge/?)"
	ok $rc "munged on every node with the one key"
	[ $rc = 0 ] || return 1

	on 1 'start_slurm slurmctld' > "$out/slurmctld.start" 2>&1
	rc=$?
	[ $rc = 0 ] || diag "$(cat "$out/slurmctld.start")"
	ok $rc "slurmctld on node1"
	on_each "$out/slurm-slurmd" 'start_slurm slurmd'
	rc=$?
	[ $rc = 0 ] || diag "$(tail -n 5 "$out"/slurm-slurmd/?)"
	ok $rc "slurmd on every node"
	slurm_wait_idle "sinfo: the $nr_nodes nodes idle in partition bcs"
}

# slurm_restart LINES TEXT: slurmctld and every slurmd stopped, started
# again with slurm_conf LINES, every node idle; records TEXT.  munged
# stays.
slurm_restart()
{
	local out=$SHARE/out rc
	# shellcheck disable=SC2016 # expanded in the guest
	on_all 'for d in slurmd slurmctld; do
			p=$(cat "$STATE/slurm/$d.pid" 2>/dev/null) || continue
			kill "$p" 2>/dev/null && wait_for 30 eval "! alive $p"
		done; :' > /dev/null
	slurm_conf "$1"
	on 1 'start_slurm slurmctld' > "$out/slurmctld.start" 2>&1 &&
		on_each "$out/slurm-slurmd" 'start_slurm slurmd'
	rc=$?
	[ $rc = 0 ] || diag "$(cat "$out/slurmctld.start")" "$(tail -n 5 "$out"/slurm-slurmd/?)"
	[ $rc = 0 ] || { ok 1 "$2"; return 1; }
	slurm_wait_idle "$2"
}

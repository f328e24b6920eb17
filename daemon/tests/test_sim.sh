#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd-sim (bcsd against the user-space stand-in of bcs.ko, daemon/sim/)
# on the host: a master (role both, node 1) and two nodes (2, 3), each in
# a network namespace of its own, joined by a bridge in another, all
# created and removed by the test.  Each daemon has its own control
# socket, stats file, jobs_dir and strobe log ($BCS_SIM_LOG); they share
# the cluster key.  Two jobs are made through the control sockets, so
# the master (matrix row: a row per job) alternates rows 0 and 1; then the checks: every node's
# stand-in got strobes, the same slice names the same row on every node,
# every node applied the map with both jobs to its stand-in without an
# error, the master's global records count the nodes' switches, and an
# attach from node2 to node3 (multicast: every node hears it) happens on
# node3 alone; MPI statistics switched on through the master and
# gathered through node2's bcsd, complete, and with node3's bcsd stopped,
# said to be incomplete; with the tasks ended on two nodes, all gathered.
#
# Needs root (ip netns); skips otherwise.  Every wait is bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_sim
BCSD=${BCS_TEST_BCSD_SIM:-$(pwd)/bcsd-sim}
BCSCTL=$top/tools/bcsctl
NS=bcs-sim-$$
NET=10.78.0

. "$top/scripts/check-lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns-lib.sh
. "$top/daemon/tests/netns-lib.sh"

# Namespace $NS-br holds the bridge; daemon N lives in $NS-N, address
# $NET.N, its veth's other end on the bridge.
sim_setup 1 2 3

now_ns()
{
	date +%s%N
}

sim_start 1 both --priority=200 --failover_slices=2 --mpi_dir="$TMP/mpi1" \
	--matrix=row
sim_start 2 node --mpi_dir="$TMP/mpi2"
sim_start 3 node --mpi_dir="$TMP/mpi3"
until_stat 1 active_master -eq 1 10
check $? "node1 takes over as master"
until_stat 2 strobes_forwarded -ge 1 10 && until_stat 3 strobes_forwarded -ge 1 10
check $? "node2 and node3 hand strobes to their stand-ins"

# Two jobs, through the master's control socket and through a node's:
# one row each (matrix row), so the master alternates rows 0 and 1.
jobs=()
for n in 1 2; do
	out=$(ctl "$n" job create 2>&1)
	rc=$?
	echo "# bcsctl job create via node$n: $out"
	job=$(echo "$out" | grep -Eo '[0-9]+' | head -1)
	[ "$rc" = 0 ] && [ -n "$job" ]
	check $? "bcsctl job create through node$n gets a job"
	jobs+=("${job:-0}")
done

# Every node applies the map with both jobs: give them a second, then
# compare the slices due from then on, for two seconds.
sleep 1
t0=$(now_ns)
sleep 2
t1=$(now_ns)

for n in 1 2 3; do
	snap $n
	c=$(wc -l < "$TMP/strobes$n" 2>/dev/null || echo 0)
	echo "# node$n: $c strobes logged, $(val $n strobes_forwarded) forwarded, $(val $n kernel_errors) kernel errors"
	[ "$c" -ge 10 ]
	check $? "node$n's stand-in got strobes ($c)"
	mapped=0
	python3 - "$TMP/stats$n.json" "${jobs[@]}" <<'PY' || mapped=1
import json, sys
maps = json.load(open(sys.argv[1]))["maps"]
rows = maps[-1]["rows"] if maps else {}
sys.exit(0 if all(j in rows for j in sys.argv[2:]) else 1)
PY
	[ "$mapped" = 0 ] && [ "$(val $n kernel_errors)" = 0 ]
	check $? "node$n applied the map of jobs ${jobs[*]} to its stand-in without an error"
done

# Coherence: each slice due in [t0, t1) names one row on every node, the
# rows of the jobs, both of them; and every node has most of the slices.
out=$(python3 - "$t0" "$t1" "$TMP"/strobes1 "$TMP"/strobes2 "$TMP"/strobes3 <<'PY'
import sys
t0, t1 = int(sys.argv[1]), int(sys.argv[2])
logs = []
for path in sys.argv[3:]:
    rows = {}
    for line in open(path):
        slice_, row, deadline, arrival = (int(x) for x in line.split())
        if t0 <= deadline < t1:
            rows.setdefault(slice_, set()).add(row)
    logs.append(rows)
common = set.intersection(*(set(r) for r in logs))
bad = [s for s in sorted(common)
       if len(set.union(*(r[s] for r in logs))) != 1]
seen = set().union(*(r[s] for r in logs for s in common))
print(f"{len(common)} slices on every node, {len(bad)} incoherent, rows {sorted(seen)}")
sys.exit(0 if len(common) >= 10 and not bad and seen == {0, 1} else 1)
PY
)
rc=$?
echo "# coherence: $out"
check $rc "the same slices name the same rows (0 and 1) on every node"

# The master's global records: the nodes' switch summaries per slice.
out=$(ctl 1 stats global --json 2>&1)
rc=$?
if [ "$rc" = 0 ]; then
	most=$(echo "$out" | python3 -c 'import json, sys
print(max((s.get("nodes", 0) for s in json.load(sys.stdin).get("slices", [])), default=0))' 2>/dev/null || echo 0)
	echo "# stats global: at most $most node(s) switched to a slice"
	[ "$most" = 3 ]
	check $? "the master's global records count the switches of all three nodes"
else
	echo "# stats global: $out"
	check 1 "bcsctl stats global through the master"
fi

# With multicast too, an attach from node2 reaches node3 alone, and its
# answer comes back through the master.
sleep 300 &
pa=$!
pids+=("$pa")
out=$(ctl 2 job attach "${jobs[0]}" --node 3 "$pa" 2>&1)
check $? "bcsctl job attach ${jobs[0]} --node 3 $pa through node2 ($out)"
snap 1
snap 2
snap 3
[ "$(val 3 attaches)" = 1 ] && [ "$(val 3 attach_failures)" = 0 ] &&
	[ "$(val 1 attaches)" = 0 ] && [ "$(val 2 attaches)" = 0 ]
check $? "node3 alone attached the process ($(val 3 attaches))"
kill "$pa" 2>/dev/null
# MPI statistics cluster-wide: bcsctl stats enable --mpi on node 2 goes to
# the master and down to every node of the job (BCSP_CMD_MPI), whose bcsd
# sets the job's control file in its mpi_dir; disable the same.
# ctlfile N JOB: "flags sub_bits stats" of node N's control file of JOB,
# in the job's directory (made by bcsd, mpidir.c) or flat (root's ranks).
ctlfile()
{
	local f="$TMP/mpi$1/$2/$2.control"

	[ -e "$f" ] || f="$TMP/mpi$1/$2.control"
	python3 - "$f" <<'PY' 2>/dev/null || echo "none"
import struct, sys
b = open(sys.argv[1], "rb").read()
magic, ver, size, gen, flags, sub = struct.unpack_from("<IHHIII", b)
print(flags, sub, b[24:].split(b"\0")[0].decode())
PY
}

job=${jobs[0]}
out=$(ctl 2 stats enable "$job" --mpi Allreduce,Isend --resolution 4 2>&1)
check $? "bcsctl stats enable $job --mpi through node2 ($out)"
for n in 1 2 3; do
	got=none
	for _ in $(seq 50); do
		got=$(ctlfile "$n" "$job")
		[ "$got" = "2 2 Allreduce,Isend" ] && break
		sleep 0.1
	done
	echo "# node$n: $job.control: $got"
	[ "$got" = "2 2 Allreduce,Isend" ]
	check $? "node$n's bcsd set job $job's MPI control file (resolution 4)"
done
out=$(ctl 3 stats disable "$job" --mpi 2>&1)
check $? "bcsctl stats disable $job --mpi through node3 ($out)"
for n in 1 2 3; do
	got=none
	for _ in $(seq 50); do
		got=$(ctlfile "$n" "$job")
		[ "$got" = "3 2 Allreduce,Isend" ] && break
		sleep 0.1
	done
	[ "$got" = "3 2 Allreduce,Isend" ]
	check $? "node$n's bcsd turned job $job's MPI statistics off ($got)"
done
out=$(ctl 1 stats enable "$job" --mpi Allreduse 2>&1)
rc=$?
echo "# a bad selection: $out"
[ "$rc" != 0 ] && echo "$out" | grep -q "Allreduse"
check $? "a bad selection is refused, naming the primitive"
out=$(ctl 1 stats enable 999 --mpi on 2>&1)
rc=$?
echo "# an unknown job: $out"
[ "$rc" != 0 ]
check $? "the MPI statistics of a job the master does not know are refused"
snap 2
[ "$(val 2 mpi_controls_set)" = 2 ] && [ "$(val 2 mpi_control_errors)" = 0 ]
check $? "node2 counts two control files set, no error"
# MPI statistics through bcsd: rank files of job J in every node's
# mpi_dir (tools/tests/mkmpi), and bcsstat mpi --job J asked on node2
# gathers them from all three (BCSP_OP_MPI_GATHER, BCSP_MPI_PART): the
# same table as the files read together, the uncalled primitive left out.
gj=${jobs[1]}
MKMPI=$top/tools/tests/mkmpi
BCSSTAT=$top/tools/bcsstat
{ "$MKMPI" "$TMP/mpi1" "$gj" sim1 0 30 && "$MKMPI" "$TMP/mpi2" "$gj" sim2 1 20 &&
  "$MKMPI" "$TMP/mpi2" "$gj" sim2 2 10 && "$MKMPI" "$TMP/mpi3" "$gj" sim3 3 5 &&
  "$MKMPI" "$TMP/mpi3" 999 sim3 0 7; } > /dev/null
check $? "four rank files of job $gj on the three nodes, one of job 999"
BCS_CONTROL_SOCKET=$TMP/ctl2 timeout 30 "$BCSSTAT" mpi --job "$gj" --json \
	> "$TMP/gather.json" 2> "$TMP/gather.err"
check $? "bcsstat mpi --job $gj through node2's bcsd ($(head -c 200 "$TMP/gather.err"))"
BCS_CONTROL_SOCKET='' "$BCSSTAT" mpi --job "$gj" --json "$TMP/mpi1" "$TMP/mpi2" \
	"$TMP/mpi3" > "$TMP/files.json"
out=$(python3 - "$TMP/gather.json" "$TMP/files.json" <<'PY'
import json, sys
got, want = (json.load(open(p)) for p in sys.argv[1:])
keys = ("calls", "total_ns", "min_ns", "max_ns", "bytes", "slowest_rank",
        "fastest_rank")
def rows(d):
    return {r["name"]: tuple(r.get(k) for k in keys) for r in d["primitives"]
            if r["calls"] or r["name"] in ("Comp Granularity", "Comm Overhead")}
ranks = sorted((r["rank"], r["host"]) for r in got["ranks"])
g = got.get("through_bcsd", {})
bad = []
if ranks != [(0, "sim1"), (1, "sim2"), (2, "sim2"), (3, "sim3")]:
    bad.append("ranks %s" % ranks)
if rows(got) != rows(want):
    bad.append("rows %s, files %s" % (rows(got), rows(want)))
if any(r["name"] == "MPI_Send" for r in got["primitives"]):
    bad.append("MPI_Send, never called, sent")
if g.get("answered") != 3:
    bad.append("through_bcsd %s" % g)
print("; ".join(bad) or "4 ranks, %d rows, %s" % (len(rows(got)), g))
sys.exit(1 if bad else 0)
PY
)
check $? "the gathered table is the files' table ($out)"
snap 2
snap 3
[ "$(val 2 mpi_gathers)" = 1 ] && [ "$(val 2 mpi_gather_parts_refused)" = 0 ] &&
	[ "$(val 3 mpi_gather_files_tx)" = 1 ] && [ "$(val 2 mpi_gather_files_tx)" = 2 ]
check $? "node2 gathered once; node3 sent one file, node2 two (its own)"

# A statistics context over a subset of job $gj's processes (DPCL's
# contexts), asked on node3: ranks 1 and 3 and pid 4242 of node1.  Each
# node enables only its part: node1 pid 4242 (not rank 0's 1000), node2
# rank 1's 1001 (not rank 2's 1002), node3 rank 3's 1003, the ranks found
# in the headers of the rank files above, and all from the same slice.
# A node unknown, or a rank list upside down, is refused.
out=$(ctl 3 stats enable "$gj" --rank 1,3 --pid 1:4242 --metric burst 2>&1)
check $? "bcsctl stats enable $gj --rank 1,3 --pid 1:4242 through node3 ($out)"
# subset_pids N: "PID@SLICE ..." node N enabled for job $gj's subsets.
subset_pids()
{
	sed -n "s/.*job $gj: statistics of pid \([0-9]*\) from slice \([0-9]*\).*/\1@\2/p" \
		"$TMP/log$1" | sort | tr '\n' ' '
}
for n in 1 2 3; do
	for _ in $(seq 50); do
		[ -n "$(subset_pids "$n")" ] && break
		sleep 0.1
	done
done
sleep 0.5	# anything more would come now
got1=$(subset_pids 1) got2=$(subset_pids 2) got3=$(subset_pids 3)
echo "# subsets applied: node1 $got1, node2 $got2, node3 $got3"
s1=${got1#*@} s2=${got2#*@} s3=${got3#*@}
[[ $got1 == "4242@"*" " && $got2 == "1001@"*" " && $got3 == "1003@"*" " ]] &&
	[ "${s1% }" = "${s2% }" ] && [ "${s2% }" = "${s3% }" ]
check $? "each node recorded only its part of the subsets, all from slice ${s1% }"
out=$(ctl 3 stats enable "$gj" --pid nosuch:5 2>&1)
rc=$?
echo "# an unknown node: $out"
[ "$rc" != 0 ] && [[ $out == *"no node id for 'nosuch'"* ]]
check $? "a subset on a node with no id is refused, naming it"
out=$(ctl 3 stats enable "$gj" --rank 3-1 2>&1)
[ $? = 2 ] && [[ $out == *"ends before it starts"* ]]
check $? "a rank range upside down is a usage error ($out)"
BCS_CONTROL_SOCKET=$TMP/ctl2 BCS_MPI_DIR=$TMP/mpi2 timeout 30 "$BCSSTAT" mpi \
	--job 4242 > /dev/null 2> "$TMP/gather.err"
rc=$?
out=$(tr '\n' ' ' < "$TMP/gather.err")
[ "$rc" != 0 ] && [[ $out == *bcsd:*"this node's files only"* ]]
check $? "a job the master does not know: bcsstat says so, reads this node's files ($out)"

# A node that does not answer: job $gj given a task on every node, so
# that the master's map expects all three, then node3's bcsd stopped
# (SIGSTOP) before its reports go stale: node2 answers after its wait
# with the two nodes that answered, and says the table is incomplete.
# map_nodes N: job $gj's nodes in the map daemon N follows ("-" if none).
map_nodes()
{
	job_field "$1" "$gj" nodes
}
gpids=()
for n in 1 2 3; do
	sleep 300 &
	gpids+=($!)
	pids+=($!)
	ctl "$n" job attach "$gj" --node "$n" "$!" > /dev/null 2>&1
done
until_is 3 map_nodes 2
check $? "job $gj has tasks on the three nodes in node2's map ($(map_nodes 2))"
snap 2
partial0=$(val 2 mpi_gathers_partial)
kill -STOP "$(cat "$TMP/pid3")"
# Both at once: node3's reports go stale while a gather waits for it.
BCS_CONTROL_SOCKET=$TMP/ctl2 timeout 30 "$BCSSTAT" mpi --job "$gj" --json \
	> "$TMP/gather.json" 2> "$TMP/gather-json.err" &
jpid=$!
BCS_CONTROL_SOCKET=$TMP/ctl2 timeout 30 "$BCSSTAT" mpi --job "$gj" \
	> "$TMP/gather.txt" 2> "$TMP/gather.err"
rc=$?
wait "$jpid"
rc2=$?
cat "$TMP/gather-json.err" >> "$TMP/gather.err"
kill -CONT "$(cat "$TMP/pid3")"
out=$(grep "^through bcsd" "$TMP/gather.txt")
echo "# node3 stopped: $out"
[ "$rc" = 0 ] && [ "$rc2" = 0 ] &&
	[[ $out == "through bcsd: 2 of 3 nodes answered (incomplete"* ]]
check $? "node3 stopped: bcsstat mpi says 2 of 3 nodes answered, incomplete ($(head -c 200 "$TMP/gather.err"))"
out=$(python3 - "$TMP/gather.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d.get("through_bcsd", {})
ranks = sorted(r["rank"] for r in d["ranks"])
ok = g == {"expected": 3, "answered": 2, "complete": False} and ranks == [0, 1, 2]
print("%s, ranks %s" % (g, ranks))
sys.exit(0 if ok else 1)
PY
)
check $? "its JSON: expected 3, answered 2, not complete; the ranks of node1 and node2 ($out)"
snap 2
[ "$(val 2 mpi_gathers_partial)" = $((partial0 + 2)) ]
check $? "node2 counts both gathers partial"

# The job's tasks ended on nodes 1 and 3, their files still there (as
# after a run): the map counts node2 alone, the gather waits for every
# node alive (3 expected) and has all four ranks.
kill "${gpids[0]}" "${gpids[2]}" 2>/dev/null
until_is 1 map_nodes 2
check $? "job $gj has tasks on node2 alone in its map ($(map_nodes 2))"
BCS_CONTROL_SOCKET=$TMP/ctl2 timeout 30 "$BCSSTAT" mpi --job "$gj" \
	> "$TMP/gather.txt" 2> "$TMP/gather.err"
rc=$?
out=$(grep "^through bcsd" "$TMP/gather.txt")
echo "# tasks on node2 only: $out"
[ "$rc" = 0 ] &&
	[[ $out == "through bcsd: 3 of 3 nodes answered" ]] &&
	grep -q "^job $gj: 4 ranks (0 .. 3) on 3 nodes" "$TMP/gather.txt"
check $? "tasks on node2 only: bcsstat mpi hears the three nodes, all four ranks ($(head -c 200 "$TMP/gather.err"))"

# A hostile user's files where bcsd looks (mpidir.c): in job $gj's
# directory on node2 (made by bcsd for the user of its task, root here)
# and in mpi_dir itself a FIFO, a symbolic link to a device, a sparse
# file of 10 GB and a copy of a rank's file owned by another user; a
# lock held on the job's control file.  bcsd keeps answering, gathers
# the same four ranks, and refuses to wait for the lock.
jd=$TMP/mpi2/$gj
[ -d "$jd" ] && [ "$(stat -c %u "$jd")" = "$(id -u)" ] &&
	[ "$(stat -c %u "$jd/$gj.control")" = "$(id -u)" ]
check $? "node2's bcsd made job $gj's directory, the control file in it"
one=$(ls "$TMP/mpi2/$gj".*.bcsmpi | head -1)
mkfifo "$jd/$gj.fifo.0.1.bcsmpi" "$TMP/mpi2/$gj.fifo.0.2.bcsmpi" &&
	ln -s /dev/zero "$jd/$gj.link.0.3.bcsmpi" &&
	truncate -s 10G "$jd/$gj.sparse.0.4.bcsmpi" &&
	cp "$one" "$jd/$gj.other.0.5.bcsmpi" && cp "$one" "$TMP/mpi2/$gj.other.0.6.bcsmpi" &&
	chown 4242:4242 "$jd/$gj.other.0.5.bcsmpi" "$TMP/mpi2/$gj.other.0.6.bcsmpi"
check $? "a FIFO, a link, a 10 GB sparse file and another user's files in node2's mpi_dir"
flock -s "$jd/$gj.control" sleep 300 &
lockpid=$!
pids+=("$lockpid")
snap 2
errs0=$(val 2 mpi_control_errors)
out=$(ctl 2 stats enable "$gj" --mpi on 2>&1)
check $? "bcsctl stats enable $gj --mpi with the control file locked ($out)"
for _ in $(seq 50); do
	snap 2
	[ "$(val 2 mpi_control_errors)" = $((errs0 + 1)) ] && break
	sleep 0.1
done
[ "$(val 2 mpi_control_errors)" = $((errs0 + 1)) ]
check $? "node2's bcsd did not wait for the lock: an error counted"
BCS_CONTROL_SOCKET=$TMP/ctl2 timeout 30 "$BCSSTAT" mpi --job "$gj" \
	> "$TMP/gather.txt" 2> "$TMP/gather.err"
rc=$?
[ "$rc" = 0 ] && grep -q "^job $gj: 4 ranks (0 .. 3) on 3 nodes" "$TMP/gather.txt"
check $? "the gather with hostile files: the ranks of the job ($(grep "^job" "$TMP/gather.txt"; head -c 200 "$TMP/gather.err"))"
ctl 2 job list > /dev/null
check $? "node2's bcsd answers bcsctl throughout"
kill "$lockpid" 2>/dev/null
# Gathers: root's, or the job's user's (root here): another user is refused.
chmod o+x "$TMP"
setpriv --reuid=65534 --regid=65534 --clear-groups env \
	BCS_CONTROL_SOCKET="$TMP/ctl2" BCS_MPI_DIR=/nonexistent timeout 30 \
	"$BCSSTAT" mpi --job "$gj" > /dev/null 2> "$TMP/gather.err"
grep -q "permission denied" "$TMP/gather.err"
check $? "a gather of job $gj by another user is refused ($(head -c 200 "$TMP/gather.err"))"
# A job of a user's (its task nobody's): bcsd makes its directory theirs,
# and the user may gather it, once per mpi_gather_interval_ms (5 s).
out=$(ctl 1 job create 2>&1)
uj=$(echo "$out" | grep -Eo '[0-9]+' | head -1)
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 300 &
upid=$!
pids+=("$upid")
ctl 2 job attach "${uj:-0}" --node 2 "$upid" > /dev/null 2>&1
until_is 65534 stat -c %u "$TMP/mpi2/$uj" 2>/dev/null
check $? "node2's bcsd made job $uj's directory for its task's user (65534)"
ask_as_user()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups env \
		BCS_CONTROL_SOCKET="$TMP/ctl2" BCS_MPI_DIR=/nonexistent \
		timeout 30 "$BCSSTAT" mpi --job "$uj" > /dev/null 2> "$TMP/gather.err"
}
ask_as_user
grep -q "through bcsd\|no statistics file of job $uj in what bcsd gathered" "$TMP/gather.err" &&
	! grep -q "permission denied\|try again later" "$TMP/gather.err"
check $? "the job's user gathers job $uj through bcsd ($(head -c 200 "$TMP/gather.err"))"
ask_as_user
grep -q "try again later" "$TMP/gather.err"
check $? "the user's second gather within mpi_gather_interval_ms is refused ($(head -c 200 "$TMP/gather.err"))"
snap 2
[ "$(val 2 mpi_gathers_limited)" = 1 ] && [ "$(val 2 mpi_gathers_denied)" = 1 ]
check $? "node2 counts one gather limited, one denied"
kill "$upid" 2>/dev/null
kill "${gpids[@]}" 2>/dev/null

# The job destroyed: its control file goes on every node.
out=$(ctl 1 job destroy "$job" 2>&1)
check $? "bcsctl job destroy $job ($out)"
for n in 1 2 3; do
	got=
	for _ in $(seq 50); do
		got=$(ctlfile "$n" "$job")
		[ "$got" = none ] && break
		sleep 0.1
	done
	[ "$got" = none ]
	check $? "node$n's bcsd removed job $job's MPI control file ($got)"
done

checks_done test_sim

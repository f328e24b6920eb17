#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/tree_scale.sh [--nodes "N..."] [--fanouts "K..."] [--seconds S]
#                     [--flat N] [--lead US] [--switch-reports period|slice]
#                     [--copies C] [--gathers G] [--gather-only]
#
# How a tree of bcsd daemons (Documentation/tree.rst) scales: for each
# number of nodes N (default "64 256 1024") and fan-out K (default
# "32 8"), N bcsd-sim daemons (bcsd against the stand-in of bcs.ko,
# daemon/sim/) run as one cluster with strobe_transport tree, all in one
# network namespace on 127.0.0.1, a port each: node 1, the first of the
# nodes file, is the master (role both), the others nodes.  Slices are
# 100 ms, each strobe sent --lead US before its deadline (default 30000:
# hundreds of ordinary tasks share the CPUs, and a leaf is up to four
# hops down); nodes report every second (report_ms, the default).  Two
# jobs are made through the master, so it alternates two rows.  After a
# warm-up of 3 s, S seconds (default 20) are measured; per configuration
# it reports, over the slices due in them:
#
#   start_s     seconds until all N daemons were up (bounded)
#   all_sw      share of slices whose global record on the master counts
#               a switch of all N nodes (bcsctl stats global)
#   in_slice    share of slices whose record counted all N nodes before
#               the slice's end (heard_after_ns < 100 ms): the reduction
#               reached the master within the slice
#   heard50     each slice's last summary at the master, after the
#               deadline, in ms: the median over the slices
#   on_time     share of slices that every node's stand-in received before
#               the deadline (arrival_ns < deadline_ns in $BCS_SIM_LOG)
#   m_cpu_ms    the master's CPU time per slice (/proc/PID/schedstat)
#   i_cpu_ms    the busiest inner daemon's (one with children) CPU per slice
#   m_rx        datagrams the master received per slice (its rx counter)
#   worst50     each slice's latest arrival of its strobe at any node,
#   worstmx     relative to the deadline (negative: before it), in ms:
#               the median over the slices and the largest
#   cpu_pct     all daemons' CPU over the run, in per cent of one CPU
#   rss_mib     all daemons' resident memory at the end, MiB
#   load        the host's load average (1 min) at the end: other work on
#               the host shows here, and in late strobes
#   nack_pct    strobes asked for again (strobe_nacks_tx, summed over the
#               daemons: Documentation/tree.rst, "Lost strobes"), in per
#               cent of the strobes due to all nodes
#
# --switch-reports (default slice) is the daemons' switch_reports: slice
# sends each slice's summary up as the next strobe comes, period once a
# report period (1 s), when no slice can be reduced within itself.
#
# --copies C sets the master's strobe_copies (default: bcsd's, 2): down
# a tree, 1 turns off the repair of lost strobes, and from 2 a daemon may
# ask its parent for a lost strobe again C - 1 times (Documentation/
# tree.rst, "Lost strobes").
#
# --flat N (default 64; 0: none) adds the flat multicast transport with N
# daemons for comparison; those need a network namespace each (every one
# binds the cluster's port and joins the group), joined by a bridge, so
# only a small N is cheap.
#
# The gather reduced in the tree (Documentation/filters.rst, "Gathers
# reduced in the tree"): for each N and K, N daemons simulated without
# sockets (daemon/tests/tree/test_tgsim --bench N K: 4 ranks a node, 12
# MPI primitives each with a latency histogram, one bcs.ko metric) answer
# a gather flat (every node to the asker) and through the k-ary tree (each
# daemon one merged answer to its parent, the root one to the asker).
# Per configuration, what the asker (flat), the root and the asker (tree)
# receive: answers, datagrams, KiB (each part a datagram: header, part
# header, tag) and CPU ms (each datagram's tag checked, the parts put
# together, decoded, merged), and the ratios flat / tree at the asker and
# flat / root.  --gather-only runs that part alone (no daemons, no root
# needed).
#
# Live gathers through the tree (--gathers G, default 3; 0: none): in
# each tree run, after the measured seconds, bcsstat dist --job J is
# asked G times on node N (a leaf; J the first job of the master's
# list), then bcsstat mpi --job J G times: the same gather (control
# command mpi-gather: request operation 11 to the master, command 5 down
# the tree, answers merged up, the root's to the asker), printed either
# way.  Every daemon runs with BCS_SIM_DIST=5 (daemon/sim/sim.h), so
# each node adds 4 histograms (one per bcs.ko metric) of 5 values, and
# with an mpi_dir of its own ($TMP/.../mpiN; not the default,
# /run/bcs/mpi, the host's), where before the gathers one rank file of
# the job is made per node (rank i - 1 on node i: tools/tests/mkmpi,
# MPI_Allreduce with its histograms).  The merged answer stays a
# datagram or so whatever N (3 primitives, a few histograms: the volume
# of many primitives and ranks is test_tgsim's, below).  A second table,
# a line per tree run, the medians over the G gathers of each kind:
#
#   d_ok        bcsstat dist --job gathers that covered all N nodes, none
#               missing, each metric's merged histogram holding N * 5
#               values; of G
#   d_nodes     the fewest nodes an answer covered ("nodes covered")
#   a_rx        datagrams the asker's bcsd (node N's) received from
#               before to after the tool, 50 ms left either side (its rx
#               counter, through its control socket's status)
#   a_dgr       of those, parts of the tree's answer (tg_final_parts_rx)
#   a_cpu       the asker's CPU time over the same span, ms (schedstat):
#               the control connection, the request, the answer turned
#               into JSON, and as a leaf its own part of the gather
#   a_net       a_cpu less the asker's ordinary work (strobes, reports)
#               in that span, at its rate over 2 s idle before the
#               gathers (noise may make it negative)
#   m_rx, m_dgr, m_cpu, m_net   the master's (node 1, the tree's root)
#               likewise; m_dgr: parts of its children's answers
#               (tg_parts_rx).  m_rx holds the asker's request, the
#               children's acknowledgements of the command and the slice
#               summaries of the span too
#   d_wall      the host's wall time of bcsstat dist, ms (its run, start
#               to exit: the tool, the master, the tree's
#               wait-for-all, on a host whose CPUs every daemon shares)
#   p_ok, p_nodes, p_a_net, p_m_net, p_wall   bcsstat mpi --job likewise
#               (p_ok: all N nodes and N ranks)
#   drops       the most UDP datagrams the kernel dropped for full receive
#               buffers (Udp RcvbufErrors of the daemons' network
#               namespace) while one gather ran, of either kind: a part
#               lost so is asked for again (asks), else a subtree the
#               answer counts missing
#   asks, resent  over all 2G gathers and every daemon: lost parts of
#               answers asked for again (tg_nacks_tx) and parts sent
#               again (tg_parts_resent)
#
# The nodes' reports (every report_ms, 1 s) come at about the same time
# from every daemon: a gather that meets them seems to take longer and
# cost the two daemons more (one gather of G at times, which the median
# leaves out; its m_rx is higher too).
#
# Each gather's figures (and the ordinary work's rates) are in the JSON,
# under "gathers"; multicast runs have no live gather (it would go flat,
# every node to the asker: test_tgsim measures that).
#
# The daemons run with rt_priority 0: ordinary tasks, memory not locked
# (bcsd locks its memory only at real-time priority), so a thousand of
# them neither exhaust RLIMIT_MEMLOCK nor starve the host.  On a machine
# of few CPUs they share those CPUs, and the numbers say more about that
# than about a cluster's network.
#
# Results: the tables on stdout and in $BUILD/bench/tree_scale.txt, the
# same as JSON in $BUILD/bench/tree_scale.json.  Benchmarks measure and fail
# only on errors, never on a number.  Needs root (network namespaces).
# Nothing leaves the namespaces, which go away at the end, as does every
# daemon.

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

nodes="64 256 1024"
fanouts="32 8"
secs=20
flat=64
lead=30000
reports=slice
copies=2
gathers=3
gather_only=
while [ $# -gt 0 ]; do
	case $1 in
	--nodes)    nodes=$2; shift 2 ;;
	--fanouts)  fanouts=$2; shift 2 ;;
	--seconds)  secs=$2; shift 2 ;;
	--flat)     flat=$2; shift 2 ;;
	--lead)     lead=$2; shift 2 ;;
	--switch-reports) reports=$2; shift 2 ;;
	--copies)   copies=$2; shift 2 ;;
	--gathers)  gathers=$2; shift 2 ;;
	--gather-only) gather_only=1; shift ;;
	-h|--help)  sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*)          echo "tree_scale: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
for v in $nodes $fanouts "$secs" "$flat" "$lead" "$copies" "$gathers"; do
	case $v in
	''|*[!0-9]*) echo "tree_scale: numbers only (see --help)" >&2; exit 2 ;;
	esac
done
case $reports in
period|slice) ;;
*) echo "tree_scale: --switch-reports period or slice" >&2; exit 2 ;;
esac
for v in $nodes; do
	[ "$v" -ge 2 ] && [ "$v" -le 1024 ] ||
		{ echo "tree_scale: --nodes: 2 to 1024" >&2; exit 2; }
done
for v in $fanouts; do
	[ "$v" -ge 1 ] && [ "$v" -le 1024 ] ||
		{ echo "tree_scale: --fanouts: 1 to 1024" >&2; exit 2; }
done
[ "$secs" -ge 2 ] && [ "$secs" -le 600 ] && [ "$flat" -le 254 ] &&
	[ "$copies" -ge 1 ] && [ "$copies" -le 8 ] && [ "$gathers" -le 20 ] &&
	[ "$flat" != 1 ] && [ "$lead" -lt 100000 ] ||
	{ echo "tree_scale: out of range (see --help)" >&2; exit 2; }

# gather_table: the gather reduced in the tree against the flat one, for
# every N and K (test_tgsim --bench), as a table on stdout and in
# $OUT/tree_gather.txt.
gather_table()
{
	local sim=$top/daemon/tests/tree/test_tgsim out=$1 n k

	make -s -C "$top/daemon" tests/tree/test_tgsim >&2 || return 1
	{
		echo "# bench/tree_scale.sh: the gather's cost, flat vs tree ($(date -u +%F))"
		printf '%5s %3s | %6s %6s %8s %7s | %4s %5s %7s %6s | %4s %5s %6s %6s | %7s %7s %7s\n' \
			nodes k f_ans f_dgr f_KiB f_cpu r_ans r_dgr r_KiB r_cpu \
			a_ans a_dgr a_KiB a_cpu dgr_f/a KiB_f/a cpu_f/r
		for n in $nodes; do
			for k in $fanouts; do
				"$sim" --bench "$n" "$k" || return 1
			done
		done | awk '{
			printf "%5d %3d | %6d %6d %8.0f %7.2f | %4d %5d %7.1f %6.2f | %4d %5d %6.1f %6.2f | %7.0f %7.0f %7.1f\n",
				$1, $2, $3, $4, $5 / 1024, $6, $7, $8, $9 / 1024, $10,
				$11, $12, $13 / 1024, $14, $4 / $12, $5 / $13,
				($10 > 0 ? $6 / $10 : 0)
		}'
	} | tee "$out"
}

if [ -n "$gather_only" ]; then
	OUT=${BUILD:-$top/build}/bench
	mkdir -p "$OUT"
	gather_table "$OUT/tree_gather.txt"
	exit
fi
[ "$(id -u)" = 0 ] || { echo "tree_scale: must run as root" >&2; exit 2; }

SLICE_US=100000
PORT0=15400
# The namespaces of the flat runs as the host tests make them, bcsd-sim,
# the key, the EXIT trap (sim-lib.sh).
NAME=tree_scale
NS=bcs-scale-$$
NET=10.79.0
KEEP=${BCS_SCALE_KEEP:-}
# shellcheck source-path=SCRIPTDIR source=sim-lib.sh
. "$top/bench/sim-lib.sh"
make -s -C "$top/tools" bcsstat tests/mkmpi > /dev/null 2>&1 ||
	{ echo "tree_scale: cannot build bcsstat and mkmpi" >&2; exit 1; }
BCSSTAT=$top/tools/bcsstat
MKMPI=$top/tools/tests/mkmpi
# bcsd-sim's stand-in of bcs.ko: one made-up thread in every job, each
# metric's histogram DIST values (daemon/sim/sim.h), for bcsstat dist.
DIST=5

# stop: end every daemon (SIGTERM, then SIGKILL after 10 s: a thousand
# daemons on two CPUs take a while), delete every namespace.
stop()
{
	netns_stop 100
}

# start DIR N NETNS ROLE [OPTION...]: bcsd-sim node N in NETNS, files in
# DIR; its pid appended to DIR/pids (the line number is N).
start()
{
	local dir=$1 n=$2 netns=$3 role=$4

	shift 4
	BCS_SIM_LOG=$dir/strobes$n BCS_SIM_DIST=$DIST nsenter --net="/run/netns/$netns" \
		"$BCSD" --role="$role" --node_id="$n" --key_file="$TMP/key" \
		--rt_priority=0 --slice_us="$SLICE_US" --lead_us="$lead" \
		--stale_slices=20 --switch_reports="$reports" \
		--strobe_copies="$copies" \
		--control_socket="$dir/ctl$n" --mpi_dir="$dir/mpi$n" \
		--stats_file="$dir/stats$n.json" --jobs_dir="$dir/jobs$n" \
		"$@" > "$dir/log$n" 2>&1 &
	pids+=($!)
	echo $! >> "$dir/pids"
}

# wait_up DIR N T0: wait for all N daemons to say "started:", at most
# 10 s + N/16 s; prints the seconds since T0 (ns, before the first
# start), fails if not all came up.
wait_up()
{
	local rc

	sim_started "$1" "$2" $((10 + $2 / 16))
	rc=$?
	awk -v a="$3" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f\n", (b - a) / 1e9 }'
	return $rc
}

# snap DIR N: daemon N (line N of DIR/pids) writes its counters.
snap()
{
	local f=$1/stats$2.json

	rm -f "$f"
	kill -USR1 "$(sed -n "$2p" "$1/pids")" 2>/dev/null || return 1
	for _ in $(seq 50); do
		[ -s "$f" ] && return 0
		sleep 0.1
	done
	return 1
}

# nacks DIR N: every daemon writes its counters; prints the sum of their
# strobe_nacks_tx (strobes asked for again) and the time (ns), or nothing
# if not all came.
nacks()
{
	local have=0

	rm -f "$1"/stats*.json
	xargs -r kill -USR1 < "$1/pids" 2>/dev/null
	for _ in $(seq 200); do
		have=$(find "$1" -name 'stats*.json' -size +0 | wc -l)
		[ "$have" -ge "$2" ] && break
		sleep 0.1
	done
	[ "$have" -ge "$2" ] || return 0
	python3 -c 'import glob, json, sys
print(sum(json.load(open(f)).get("strobe_nacks_tx", 0)
          for f in glob.glob(sys.argv[1] + "/stats*.json")))' "$1" 2>/dev/null &&
		date +%s%N
}

# cpu DIR FILE: the CPU time in ns (the first field of
# /proc/PID/schedstat: utime + stime of /proc/PID/stat count in ticks of
# 10 ms, too coarse for a few ms per second) and the RSS in pages of every
# daemon, a line each in the order of DIR/pids.
cpu()
{
	local p st ns

	while read -r p; do
		read -r -a st < "/proc/$p/stat" 2>/dev/null || st=()
		read -r ns _ < "/proc/$p/schedstat" 2>/dev/null || ns=0
		if [ "${#st[@]}" -ge 24 ]; then
			echo "$ns ${st[23]}"
		else
			echo "0 0"
		fi
	done < "$1/pids" > "$2"
}

# live_gathers DIR N: $gathers times each, bcsstat dist --job J, then
# bcsstat mpi --job J, asked on node N (a leaf) of the running tree, J
# the first job of the master's list; before and after each, the
# asker's and the master's counters (their control sockets' status) and
# CPU time (/proc/PID/schedstat), around the host's wall time of the
# tool.  Prints a JSON object: each gather's figures, under "dist" and
# "mpi".
live_gathers()
{
	python3 - "$1" "$2" "$gathers" "$BCSSTAT" "$DIST" \
		"$(sed -n 1p "$1/pids")" "$(sed -n "$2p" "$1/pids")" \
		"$MKMPI" <<'PY'
import json, os, re, socket, subprocess, sys, time
d, n, count, bcsstat, dist = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
mpid, apid, mkmpi = sys.argv[6], sys.argv[7], sys.argv[8]
actl, mctl = os.path.join(d, f"ctl{n}"), os.path.join(d, "ctl1")

def call(path, req):
    """One request on a control socket (SOCK_SEQPACKET, a JSON object a
    message), its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(10)
        s.connect(path)
        s.send(json.dumps(req).encode())
        # Answers have no bound: their size first (peeked).
        size = s.recv_into(bytearray(1), 1, socket.MSG_PEEK | socket.MSG_TRUNC)
        return json.loads(s.recv(max(size, 1)))

# Seconds left to the daemons around a gather's CPU readings.
SETTLE = 0.05

def cpu(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])

def udp_drops(pid):
    """UDP datagrams dropped for full receive buffers in the network
    namespace of @pid (all the daemons'), so far."""
    with open(f"/proc/{pid}/net/snmp") as f:
        rows = [l.split() for l in f if l.startswith("Udp:")]
    return int(rows[1][rows[0].index("RcvbufErrors")])

out = {"asker": n, "job": None, "dist": [], "mpi": []}
try:
    jobs = call(mctl, {"cmd": "job-list"}).get("jobs") or []
    out["job"] = job = jobs[0]["job"]
except (OSError, ValueError, IndexError, KeyError) as e:
    out["error"] = f"job list: {e}"
    print(json.dumps(out))
    sys.exit(0)
# A rank file of the job in every daemon's mpi_dir (rank i - 1 on node i,
# MPI_Allreduce with its histograms: tools/tests/mkmpi).
made = 0
for i in range(1, n + 1):
    made += subprocess.run([mkmpi, os.path.join(d, f"mpi{i}"), str(job),
                            f"sim{i}", str(i - 1), str(10 + i % 50)],
                           env=dict(os.environ, MKMPI_HIST="1"),
                           stdout=subprocess.DEVNULL).returncode == 0
out["rank_files"] = made
# The two daemons' ordinary work (strobes, reports) per ms, over 2 s
# before the gathers: what a gather's deltas hold besides the gather.
try:
    a0, m0, ca0, cm0 = call(actl, {"cmd": "status"}), \
        call(mctl, {"cmd": "status"}), cpu(apid), cpu(mpid)
    t0 = time.monotonic_ns()
    time.sleep(2)
    t1 = time.monotonic_ns()
    a1, m1, ca1, cm1 = call(actl, {"cmd": "status"}), \
        call(mctl, {"cmd": "status"}), cpu(apid), cpu(mpid)
    ms = (t1 - t0) / 1e6
    bg = {"asker_rx": (a1["rx"] - a0["rx"]) / ms,
          "asker_cpu_ms": (ca1 - ca0) / 1e6 / ms,
          "master_rx": (m1["rx"] - m0["rx"]) / ms,
          "master_cpu_ms": (cm1 - cm0) / 1e6 / ms}
except (OSError, ValueError, KeyError):
    bg = {}
out["background_per_ms"] = bg
env = dict(os.environ, BCS_CONTROL_SOCKET=actl)

REPAIR = ("tg_nacks_tx", "tg_parts_resent", "tg_nacks_refused")

def repair_counts():
    """Lost parts of answers asked for again and sent again (filters.rst,
    "Lost parts of an answer"), summed over every daemon; None for a
    daemon that did not answer."""
    tot = dict.fromkeys(REPAIR, 0)
    for i in range(1, n + 1):
        try:
            st = call(os.path.join(d, f"ctl{i}"), {"cmd": "status"})
        except (OSError, ValueError):
            return None
        for k in REPAIR:
            tot[k] += st.get(k, 0)
    return tot

r0 = repair_counts()
for kind in ("dist", "mpi"):
    for _ in range(count):
        g = {}
        try:
            a0, m0 = call(actl, {"cmd": "status"}), call(mctl, {"cmd": "status"})
            # The daemons done with the status connections; and after
            # the tool, with its connection.
            time.sleep(SETTLE)
            c0 = time.monotonic_ns()
            ca0, cm0, u0 = cpu(apid), cpu(mpid), udp_drops(mpid)
            t0 = time.monotonic_ns()
            p = subprocess.run([bcsstat, kind, "--job", str(job)], env=env,
                               capture_output=True, text=True, timeout=60)
            t1 = time.monotonic_ns()
            time.sleep(SETTLE)
            ca1, cm1, u1 = cpu(apid), cpu(mpid), udp_drops(mpid)
            c1 = time.monotonic_ns()
            a1, m1 = call(actl, {"cmd": "status"}), call(mctl, {"cmd": "status"})
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            out[kind].append({"error": str(e)})
            continue
        head = re.search(r"through the tree of daemons: nodes covered (\d+), "
                         r"missing (\d+)", p.stdout)
        # dist: each metric's merged histogram, DIST values a node.
        values = [int(v) for v in re.findall(r", (\d+) values", p.stdout)]
        g = {"rc": p.returncode,
             "nodes": int(head[1]) if head else None,
             "missing": int(head[2]) if head else None,
             "wall_ms": (t1 - t0) / 1e6,
             "asker_rx": a1["rx"] - a0["rx"],
             "asker_parts": a1["tg_final_parts_rx"] - a0["tg_final_parts_rx"],
             "asker_flat_parts": a1["mpi_gather_parts_rx"] - a0["mpi_gather_parts_rx"],
             "asker_cpu_ms": (ca1 - ca0) / 1e6,
             "master_rx": m1["rx"] - m0["rx"],
             "master_parts": m1["tg_parts_rx"] - m0["tg_parts_rx"],
             "master_cpu_ms": (cm1 - cm0) / 1e6,
             "udp_drops": u1 - u0}
        # Less the ordinary work of the same span (the tool's wall time
        # and the two settles).
        for k in ("asker_cpu_ms", "master_cpu_ms"):
            if k in bg:
                g[k.replace("cpu", "net")] = g[k] - bg[k] * (c1 - c0) / 1e6
        if kind == "dist":
            g["metrics"] = len(values)
            g["exact"] = bool(values) and all(v == n * dist for v in values)
        else:
            ranks = re.search(r": (\d+) ranks? through the tree", p.stdout)
            g["ranks"] = int(ranks[1]) if ranks else None
            g["exact"] = g["ranks"] == n
        g["complete"] = (p.returncode == 0 and g["nodes"] == n and
                         g["missing"] == 0 and g["exact"])
        if not g["complete"]:
            g["output"] = (p.stdout + p.stderr)[-400:]
        out[kind].append(g)
r1 = repair_counts()
out["repair"] = ({k: r1[k] - r0[k] for k in REPAIR} if r0 and r1 else None)
print(json.dumps(out))
PY
}

# measure DIR N MODE K START_S: jobs, warm-up, the run; appends a JSON
# line of results to $TMP/results.
measure()
{
	local dir=$1 n=$2 mode=$3 k=$4 start_s=$5 t0 t1

	sim_jobs "$dir/ctl1" 2 || return 1
	sleep 3
	nacks "$dir" "$n" > "$dir/nacks0"
	snap "$dir" 1 && cp "$dir/stats1.json" "$dir/m0.json" &&
		cpu "$dir" "$dir/cpu0" || return 1
	t0=$(date +%s%N)
	sleep "$secs"
	t1=$(date +%s%N)
	snap "$dir" 1 && cp "$dir/stats1.json" "$dir/m1.json" &&
		cpu "$dir" "$dir/cpu1" || return 1
	nacks "$dir" "$n" > "$dir/nacks1"
	# Every node summarises its switches once a report period (1 s).
	sleep 2.5
	BCS_CONTROL_SOCKET=$dir/ctl1 timeout 20 "$BCSCTL" stats global \
		--last 4096 --json > "$dir/global.json" ||
		{ echo "tree_scale: stats global failed" >&2; return 1; }
	echo '{}' > "$dir/gathers.json"
	if [ "$mode" = tree ] && [ "$gathers" -gt 0 ]; then
		live_gathers "$dir" "$n" > "$dir/gathers.json" ||
			echo "tree_scale: the live gathers failed" >&2
	fi
	python3 - "$dir" "$n" "$mode" "$k" "$start_s" "$t0" "$t1" \
		"$((SLICE_US * 1000))" \
		>> "$TMP/results" <<'PY'
import json, os, sys
d, n, mode, k = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
start_s, t0, t1 = float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
slice_ns = int(sys.argv[8])

g = json.load(open(os.path.join(d, "global.json")))["slices"]
recs = [r for r in g if r.get("deadline_ns") and t0 <= r["deadline_ns"] < t1]
# The slices due in [t0, t1): from the master's records (skipped ones
# have no deadline: they count by number, between the first and last).
nums = sorted(r["slice"] for r in recs)
want = set(range(nums[0], nums[-1] + 1)) if nums else set()
full = {r["slice"] for r in g if r["slice"] in want and r.get("nodes") == n}
# Reduced within the slice: every node counted before the slice's end.
heard = sorted(r["heard_after_ns"] for r in g if r["slice"] in full and
               r.get("heard_after_ns") is not None)
in_slice = sum(1 for h in heard if h < slice_ns)

# Arrival before the deadline on every node; and each slice's latest
# arrival, of any node, relative to its deadline.
early, worst = {}, {}
for i in range(1, n + 1):
    got = set()
    path = os.path.join(d, f"strobes{i}")
    if os.path.exists(path):
        for line in open(path):
            s, row, dl, arr = (int(x) for x in line.split())
            if s in want:
                worst[s] = max(worst.get(s, arr - dl), arr - dl)
                if arr < dl:
                    got.add(s)
    for s in got:
        early[s] = early.get(s, 0) + 1
on_time = sum(1 for s in want if early.get(s, 0) == n)
late = sorted(worst.values())

def ticks(name):
    return [tuple(int(x) for x in l.split()) for l in open(os.path.join(d, name))]
c0, c1 = ticks("cpu0"), ticks("cpu1")
dt = [b[0] - a[0] for a, b in zip(c0, c1)]
slices = len(want) or 1
# Strobes asked for again (tree.rst, "Lost strobes"), per node and slice
# due between the two counts (each: the sum, then when it was taken).
try:
    na = [[int(x) for x in open(os.path.join(d, f"nacks{i}")).read().split()]
          for i in (0, 1)]
    due = (na[1][1] - na[0][1]) / slice_ns
    nack_pct = 100.0 * (na[1][0] - na[0][0]) / (due * n)
except (OSError, ValueError, IndexError, ZeroDivisionError):
    nack_pct = None
ms = lambda t: t / 1e6 / slices
inner = [p for p in range(1, n) if k * p + 1 < n] if mode == "tree" else []
m0 = json.load(open(os.path.join(d, "m0.json")))
m1 = json.load(open(os.path.join(d, "m1.json")))

# The live gathers (live_gathers): per kind, how many covered all N
# nodes, the fewest nodes an answer covered, and the medians.
try:
    lg = json.load(open(os.path.join(d, "gathers.json")))
except (OSError, ValueError):
    lg = {}
def gsum(runs):
    ok = [g for g in runs if "error" not in g]
    if not runs:
        return None
    med = lambda k: (sorted(g[k] for g in ok)[len(ok) // 2] if ok else None)
    return {"runs": len(runs),
            "complete": sum(1 for g in ok if g["complete"]),
            "udp_drops_max": max((g.get("udp_drops", 0) for g in ok),
                                 default=None),
            "nodes_min": min((g["nodes"] or 0 for g in ok), default=None),
            **{k: med(k) for k in ("wall_ms", "asker_rx", "asker_parts",
                                   "asker_cpu_ms", "asker_net_ms",
                                   "master_rx", "master_parts",
                                   "master_cpu_ms", "master_net_ms")
               if all(k in g for g in ok)}}

print(json.dumps({
    "mode": mode, "nodes": n, "fanout": k if mode == "tree" else None,
    "start_s": start_s, "slices": len(want),
    "all_switched": len(full) / slices, "on_time": on_time / slices,
    "in_slice": in_slice / slices,
    "heard_p50_ms": heard[len(heard) // 2] / 1e6 if heard else None,
    "master_cpu_ms": ms(dt[0]),
    "inner_cpu_ms": max((ms(dt[p]) for p in inner), default=None),
    "master_rx": (m1["rx"] - m0["rx"]) / slices,
    "nack_pct": nack_pct,
    "worst_p50_ms": late[len(late) // 2] / 1e6 if late else None,
    "worst_max_ms": late[-1] / 1e6 if late else None,
    "cpu_pct": 100.0 * sum(dt) / (t1 - t0),
    "loadavg": float(open("/proc/loadavg").read().split()[0]),
    "rss_mib": sum(b[1] for b in c1) * os.sysconf("SC_PAGE_SIZE") / 2**20,
    "gather_dist": gsum(lg.get("dist", [])),
    "gather_mpi": gsum(lg.get("mpi", [])),
    "gather_repair": lg.get("repair"),
    "gathers": lg or None,
}))
PY
}

# tree N K: N daemons in one namespace, a tree of fan-out K.
run_tree()
{
	local n=$1 k=$2 dir=$TMP/tree-$1-$2 netns=$NS-t i start_s t0

	mkdir -p "$dir" && : > "$dir/pids" || return 1
	ip netns add "$netns" || return 1
	nss+=("$netns")
	ip -n "$netns" link set lo up || return 1
	for i in $(seq "$n"); do
		echo "$i 127.0.0.1:$((PORT0 + i))"
	done > "$dir/nodes"
	set -- --nodes_file="$dir/nodes" --tree_fanout="$k" \
		--strobe_transport=tree
	t0=$(date +%s%N)
	start "$dir" 1 "$netns" both --priority=200 --failover_slices=2 "$@"
	for i in $(seq 2 "$n"); do
		start "$dir" "$i" "$netns" node "$@"
	done
	start_s=$(wait_up "$dir" "$n" "$t0") &&
		measure "$dir" "$n" tree "$k" "$start_s"
}

# flat N: N daemons, a namespace each on a bridge, multicast.
run_flat()
{
	local n=$1 dir=$TMP/flat-$1 i start_s t0

	mkdir -p "$dir" && : > "$dir/pids" || return 1
	# Namespace $NS-br holds the bridge, daemon N lives in $NS-N.
	netns_bridge
	# shellcheck disable=SC2046 # the numbers, split
	netns_join $(seq "$n")
	t0=$(date +%s%N)
	start "$dir" 1 "$NS-1" both --priority=200 --failover_slices=2 \
		--interface=eth0
	for i in $(seq 2 "$n"); do
		start "$dir" "$i" "$NS-$i" node --interface=eth0
	done
	start_s=$(wait_up "$dir" "$n" "$t0") &&
		measure "$dir" "$n" flat 0 "$start_s"
}

: > "$TMP/results"
for n in $nodes; do
	for k in $fanouts; do
		echo "tree_scale: $n daemons, fan-out $k, ${secs} s" >&2
		run_tree "$n" "$k" ||
			echo "tree_scale: $n daemons, fan-out $k: failed" >&2
		stop
	done
done
if [ "$flat" -gt 0 ]; then
	echo "tree_scale: $flat daemons, flat multicast, ${secs} s" >&2
	run_flat "$flat" || echo "tree_scale: flat multicast: failed" >&2
	stop
fi

python3 - "$TMP/results" "$OUT/tree_scale.txt" "$OUT/tree_scale.json" \
	"$secs" "$lead" "$reports" "$copies" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f = lambda v, p: "-" if v is None else f"{v:.{p}f}"
lines = [f"# bench/tree_scale.sh: {sys.argv[4]} s per configuration, "
         f"slices of 100 ms, lead {int(sys.argv[5]) // 1000} ms, "
         f"switch_reports {sys.argv[6]}, strobe_copies {sys.argv[7]}",
         f"{'mode':>9} {'nodes':>5} {'start_s':>7} {'slices':>6} "
         f"{'all_sw':>6} {'in_slice':>8} {'heard50':>7} "
         f"{'on_time':>7} {'m_cpu_ms':>8} {'i_cpu_ms':>8} "
         f"{'m_rx':>6} {'worst50':>7} {'worstmx':>7} {'cpu_pct':>7} "
         f"{'rss_mib':>7} {'load':>5} {'nack_pct':>8}"]
for r in rows:
    mode = f"tree/{r['fanout']}" if r["mode"] == "tree" else "multicast"
    lines.append(f"{mode:>9} {r['nodes']:>5} {f(r['start_s'], 1):>7} "
                 f"{r['slices']:>6} {f(r['all_switched'], 3):>6} "
                 f"{f(r['in_slice'], 3):>8} {f(r['heard_p50_ms'], 1):>7} "
                 f"{f(r['on_time'], 3):>7} {f(r['master_cpu_ms'], 3):>8} "
                 f"{f(r['inner_cpu_ms'], 3):>8} {f(r['master_rx'], 1):>6} "
                 f"{f(r['worst_p50_ms'], 1):>7} {f(r['worst_max_ms'], 1):>7} "
                 f"{f(r['cpu_pct'], 1):>7} {f(r['rss_mib'], 0):>7} "
                 f"{f(r['loadavg'], 1):>5} {f(r.get('nack_pct'), 2):>8}")
# The live gathers, a line per tree run (medians over the gathers).
g = [r for r in rows if r.get("gather_dist") or r.get("gather_mpi")]
if g:
    lines += ["", "# live gathers from a leaf (bcsstat dist --job, then "
              "bcsstat mpi --job): medians; wall: the host's, ms",
              f"{'mode':>9} {'nodes':>5} | {'d_ok':>4} {'d_nodes':>7} "
              f"{'a_rx':>5} {'a_dgr':>5} {'a_cpu':>6} {'a_net':>6} "
              f"{'m_rx':>5} {'m_dgr':>5} {'m_cpu':>6} {'m_net':>6} "
              f"{'d_wall':>6} | {'p_ok':>4} {'p_nodes':>7} {'p_a_net':>7} "
              f"{'p_m_net':>7} {'p_wall':>6} | {'drops':>5} "
              f"{'asks':>5} {'resent':>6}"]
for r in g:
    mode = f"tree/{r['fanout']}"
    d = r.get("gather_dist") or {}
    m = r.get("gather_mpi") or {}
    rp = r.get("gather_repair") or {}
    ok = lambda x: f"{x['complete']}/{x['runs']}" if x else "-"
    i = lambda v: "-" if v is None else str(v)
    lines.append(f"{mode:>9} {r['nodes']:>5} | {ok(d):>4} "
                 f"{i(d.get('nodes_min')):>7} {i(d.get('asker_rx')):>5} "
                 f"{i(d.get('asker_parts')):>5} "
                 f"{f(d.get('asker_cpu_ms'), 2):>6} "
                 f"{f(d.get('asker_net_ms'), 2):>6} "
                 f"{i(d.get('master_rx')):>5} {i(d.get('master_parts')):>5} "
                 f"{f(d.get('master_cpu_ms'), 2):>6} "
                 f"{f(d.get('master_net_ms'), 2):>6} "
                 f"{f(d.get('wall_ms'), 0):>6} | {ok(m):>4} "
                 f"{i(m.get('nodes_min')):>7} "
                 f"{f(m.get('asker_net_ms'), 2):>7} "
                 f"{f(m.get('master_net_ms'), 2):>7} "
                 f"{f(m.get('wall_ms'), 0):>6} | "
                 f"{i(max(d.get('udp_drops_max') or 0, m.get('udp_drops_max') or 0)):>5} "
                 f"{i(rp.get('tg_nacks_tx')):>5} "
                 f"{i(rp.get('tg_parts_resent')):>6}")
text = "\n".join(lines) + "\n"
print(text, end="")
open(sys.argv[2], "w").write(text)
json.dump(rows, open(sys.argv[3], "w"), indent=1)
PY
gather_table "$OUT/tree_gather.txt" ||
	echo "tree_scale: the gather's table failed" >&2
echo "tree_scale: written to $OUT/tree_scale.txt, tree_scale.json and tree_gather.txt" >&2

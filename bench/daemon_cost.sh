#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/daemon_cost.sh [--nodes "N..."] [--slices "US..."] [--seconds S]
#                      [--plans "K..."] [--copies C] [--lead US]
#                      [--rt-priority P] [--perf]
#
# What bcsd itself costs per slice, on this machine's own CPUs: a master
# (--role=master) and N node daemons (--role=node, default N: "4 16"),
# all bcsd-sim (bcsd against the user-space stand-in of bcs.ko,
# daemon/sim/: the whole daemon path but the netlink hop into bcs.ko),
# each in a network namespace of its own, joined by a bridge in another
# (multicast, strobe_transport's default).  Nothing leaves the
# namespaces.  For each N and each slice length (default "10000 1000
# 500" us) the daemons start, two jobs are made through the master (a row
# each, so it alternates two rows), and after a warm-up of 3 s, S seconds
# (default 10) are measured.  Per role (the master; the nodes: their
# mean and the busiest) it reports, over the slices due in those seconds:
#
#   cpu_us      CPU time per slice, us (/proc/PID/task/*/schedstat:
#               utime + stime of /proc/PID/stat count in ticks of 10 ms,
#               too coarse for a few ms per second)
#   cpu_pct     the same in per cent of one CPU
#   sys_pct     the kernel's share of it (stime / (utime + stime))
#   wake        voluntary context switches per slice (/proc/PID/task/*/
#               status): the daemon's wake-ups, each a sleep in poll()
#   invol       involuntary ones per slice (preempted by other work)
#   rx          datagrams received per slice (the rx counter)
#   got         nodes: distinct strobes followed (strobes_rx) per slice
#               due; master: strobes sent (strobes_tx, first copies)
#               per slice due (below 1: it skipped slices, woken late)
#   gaps        slice numbers passed over in that time: on a node,
#               strobes that never came (summed over the nodes), on the
#               master, slices it skipped
#   lost        nodes: strobes that another node followed and this one did
#               not, summed over the nodes: counted from before to after
#               the measured seconds with the master stopped (SIGSTOP)
#               for the 50 ms of each count, so that the nodes count the
#               same strobes.  Every strobe the master sent arrived if
#               "lost" is 0 and the nodes' "got" is the master's
#   rej         datagrams refused (bcsctl status's rejected), on the nodes
#               summed: on a busy host, strobes that came stale_slices
#               after their deadline, the node woken too late
#   missed      nodes: strobes the stand-in dropped because their slice
#               was over (bcs.ko's missed), summed over the nodes
#   late        nodes: strobes that reached the stand-in after their
#               deadline (bcs.ko's late), summed
#
# and the ratios of cost per slice and of CPU share between the slices
# and the longest one.  --plans runs each configuration once per K with
# --plan_slices K (default "1": no plans, a strobe per slice; "1 10": both
# without plans and with a plan every 10 slices); with plans "got" counts
# plans per slice and "gaps" is not counted ("-").
# Each daemon runs with --rt_priority P (default 0:
# ordinary tasks, memory not locked), --strobe_copies C (default: bcsd's,
# 2) and --lead_us US (default: 3000 or two slices, whichever is less).
# Everything else is bcsd's default (reports every second, fill on,
# switch_reports period): what a node does besides strobes is in the
# figures, spread over the slices.
#
# --perf records node 2 (the first node) with perf record -g during the
# measured seconds of each configuration, to $BUILD/bench/daemon_cost-
# N-SLICE.perf.data (perf report -i FILE): where its time goes.  perf's
# own sampling then counts in that node's figures.
#
# Results: a table on stdout and in $BUILD/bench/daemon_cost.txt, JSON
# in $BUILD/bench/daemon_cost.json.  A benchmark: it fails only on
# errors, never on a number.  Needs root (network namespaces).  Every
# wait is bounded; daemons and namespaces go away at exit, however it
# ends.  The host's load average is printed with each row: on a machine
# of few CPUs other work shows in the figures (involuntary switches).

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

nodes="4 16"
slices="10000 1000 500"
secs=10
copies=""
lead=""
prio=0
perf=""
plans=1
while [ $# -gt 0 ]; do
	case $1 in
	--nodes)       nodes=$2; shift 2 ;;
	--slices)      slices=$2; shift 2 ;;
	--seconds)     secs=$2; shift 2 ;;
	--plans)       plans=$2; shift 2 ;;
	--copies)      copies=$2; shift 2 ;;
	--lead)        lead=$2; shift 2 ;;
	--rt-priority) prio=$2; shift 2 ;;
	--perf)        perf=1; shift ;;
	-h|--help)     sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*)             echo "daemon_cost: unknown option $1 (see --help)" >&2
		       exit 2 ;;
	esac
done
for v in $nodes $slices "$secs" "$prio" $copies $lead $plans; do
	case $v in
	''|*[!0-9]*) echo "daemon_cost: numbers only (see --help)" >&2; exit 2 ;;
	esac
done
for v in $nodes; do
	[ "$v" -ge 1 ] && [ "$v" -le 200 ] ||
		{ echo "daemon_cost: --nodes: 1 to 200" >&2; exit 2; }
done
for v in $plans; do
	[ "$v" -ge 1 ] && [ "$v" -le 2048 ] ||
		{ echo "daemon_cost: --plans: 1 to 2048" >&2; exit 2; }
done
for v in $slices; do
	[ "$v" -ge 100 ] && [ "$v" -le 1000000 ] ||
		{ echo "daemon_cost: --slices: 100 to 1000000 us" >&2; exit 2; }
done
[ "$secs" -ge 2 ] && [ "$secs" -le 600 ] && [ "$prio" -le 99 ] &&
	{ [ -z "$copies" ] || { [ "$copies" -ge 1 ] && [ "$copies" -le 8 ]; }; } ||
	{ echo "daemon_cost: out of range (see --help)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "daemon_cost: must run as root" >&2; exit 2; }
[ -z "$perf" ] || command -v perf > /dev/null ||
	{ echo "daemon_cost: --perf: no perf here" >&2; exit 2; }

# The namespaces as the host tests make them, bcsd-sim, the key, the
# EXIT trap (sim-lib.sh).
NAME=daemon_cost
NS=bcs-cost-$$
NET=10.81.0
KEEP=${BCS_COST_KEEP:-}
# shellcheck source-path=SCRIPTDIR source=sim-lib.sh
. "$top/bench/sim-lib.sh"

# stop: every daemon ended, the master continued first if it is stopped
# (quiet_status), every namespace deleted (netns_stop).
stop()
{
	[ -s "$TMP/pid1" ] && kill -CONT "$(cat "$TMP/pid1")" 2>/dev/null
	netns_stop
}

# start N ROLE SLICE LEAD [OPTION...]: bcsd-sim node N in namespace $NS-N
# (netns_join), files in $TMP; its pid in $TMP/pidN.
start()
{
	local n=$1 role=$2 slice=$3 ld=$4

	shift 4
	ip netns exec "$NS-$n" "$BCSD" --role="$role" --node_id="$n" \
		--key_file="$TMP/key" --interface=eth0 \
		--rt_priority="$prio" --slice_us="$slice" --lead_us="$ld" \
		${copies:+--strobe_copies="$copies"} --plan_slices="$plan" \
		--control_socket="$TMP/ctl$n" --stats_file="$TMP/stats$n.json" \
		--jobs_dir="$TMP/jobs$n" --mpi_dir="$TMP/mpi$n" \
		"$@" > "$TMP/log$n" 2>&1 &
	echo $! > "$TMP/pid$n"
	pids+=($!)
}

# status FIRST LAST PREFIX: daemons FIRST..LAST's status (bcsd's
# counters, and the stand-in's late and missed), asked on their control
# sockets as bcsctl status asks (bcsctl itself also wants /dev/bcs), in
# PREFIX-FIRST..LAST; fails unless each answered within 5 s.
status()
{
	python3 - "$TMP" "$1" "$2" "$3" <<'PY'
import json, os, socket, sys, time
d, first, last, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for i in range(first, last + 1):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(os.path.join(d, f"ctl{i}"))
    s.send(json.dumps({"cmd": "status"}).encode())
    r = json.loads(s.recv(1 << 20))
    r["at_ns"] = time.time_ns()
    s.close()
    if not r.get("ok"):
        sys.exit(f"daemon_cost: status of {i}: {r}")
    with open(f"{prefix}-{i}", "w") as f:
        json.dump(r, f)
PY
}

# quiet_status N PREFIX: the status of the nodes 2..N with the master
# stopped (SIGSTOP) and its last strobe given 50 ms to arrive, so that
# they count the same strobes.
quiet_status()
{
	local m rc

	m=$(cat "$TMP/pid1")
	kill -STOP "$m" || return 1
	sleep 0.05
	status 2 "$1" "$2"
	rc=$?
	kill -CONT "$m"
	return $rc
}

# sample N FILE: per daemon 1..N a line "ns utime stime vol invol", summed
# over its threads: CPU in ns (schedstat), ticks in user and kernel
# mode (stat), voluntary and involuntary context switches (status).
sample()
{
	local n=$1 i p t ns st v w sns sut sst sv sw

	for i in $(seq "$n"); do
		p=$(cat "$TMP/pid$i")
		sns=0 sut=0 sst=0 sv=0 sw=0
		for t in /proc/"$p"/task/*; do
			read -r ns _ < "$t/schedstat" 2>/dev/null || continue
			read -r -a st < "$t/stat" 2>/dev/null || continue
			v=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$t/status")
			w=$(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "$t/status")
			# Fields 14 and 15 (utime, stime); the name, field 2,
			# has no blank (bcsd-sim).
			sns=$((sns + ns)) sut=$((sut + st[13])) sst=$((sst + st[14]))
			sv=$((sv + ${v:-0})) sw=$((sw + ${w:-0}))
		done
		echo "$sns $sut $sst $sv $sw"
	done > "$2"
}

# run N SLICE K: a master and N nodes at slices of SLICE us, a plan every
# K slices (1: none); appends a JSON line of results to $TMP/results.
run()
{
	local n=$1 slice=$2 plan=$3 ld total i t0 t1

	total=$((n + 1))
	ld=${lead:-$((2 * slice < 3000 ? 2 * slice : 3000))}
	rm -f "$TMP"/log* "$TMP"/stats* "$TMP"/pid* "$TMP"/st0-* "$TMP"/st1-*
	netns_bridge
	# shellcheck disable=SC2046 # the numbers, split
	netns_join $(seq "$total")
	start 1 master "$slice" "$ld" --priority=200 --failover_slices=2 \
		--matrix=row
	for i in $(seq 2 "$total"); do
		start "$i" node "$slice" "$ld"
	done
	sim_started "$TMP" "$total" 10 || return 1
	# Two jobs, a row each: the master alternates rows 0 and 1.
	sim_jobs "$TMP/ctl1" 2 || return 1
	sleep 3
	quiet_status "$total" "$TMP/q0" || return 1
	# The master, stopped, skips the slices gone meanwhile: let it.
	sleep 0.5
	status 1 "$total" "$TMP/st0" || return 1
	sample "$total" "$TMP/cpu0"
	t0=$(date +%s%N)
	if [ -n "$perf" ]; then
		perf record -q -g -o "$OUT/daemon_cost-$n-$slice.perf.data" \
			-p "$(cat "$TMP/pid2")" -- sleep "$secs" > /dev/null 2>&1 ||
			echo "daemon_cost: perf record failed" >&2
	else
		sleep "$secs"
	fi
	t1=$(date +%s%N)
	sample "$total" "$TMP/cpu1"
	status 1 "$total" "$TMP/st1" || return 1
	quiet_status "$total" "$TMP/q1" || return 1
	python3 - "$TMP" "$total" "$slice" "$t0" "$t1" \
		"$(getconf CLK_TCK)" "$plan" >> "$TMP/results" <<'PY'
import json, os, sys
d, total, slice_us = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0, t1, hz = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
plan = int(sys.argv[7])
due = (t1 - t0) / (slice_us * 1000.0)

def lines(name):
    return [[int(x) for x in l.split()] for l in open(os.path.join(d, name))]
c0, c1 = lines("cpu0"), lines("cpu1")
def st(k, i):
    return json.load(open(os.path.join(d, f"{k}-{i}")))
def delta(i, key, k="st"):
    return st(k + "1", i).get(key, 0) - st(k + "0", i).get(key, 0)

# The strobes some node followed, between the quiet counts.
sent = max(delta(i, "strobes_rx", "q") for i in range(2, total + 1))
per = []
for i in range(1, total + 1):
    a, b = c0[i - 1], c1[i - 1]
    ns, ut, stt, vol, inv = (y - x for x, y in zip(a, b))
    if i == 1:
        got = delta(i, "strobes_tx")
    else:
        got = delta(i, "strobes_rx")
    # Slices passed over: numbers between the last strobe before and
    # the last after, less the strobes seen (a node's "slice" is the
    # last strobe's it followed, the master's the last it sent).
    gaps = delta(i, "slice") - got if plan == 1 else None
    # The counters' own window: the status answers' times.
    got *= (t1 - t0) / delta(i, "at_ns")
    per.append({
        "cpu_us": ns / 1e3 / due,
        "cpu_pct": 100.0 * ns / (t1 - t0),
        "sys_pct": 100.0 * stt / (ut + stt) if ut + stt else None,
        "wake": vol / due, "invol": inv / due,
        "rx": delta(i, "rx") / due, "got": got / due, "gaps": gaps,
        "lost": sent - delta(i, "strobes_rx", "q") if i > 1 else None,
        "missed": delta(i, "missed"), "late": delta(i, "late"),
        "rejected": delta(i, "rejected"),
    })

def mean(rows, k):
    v = [r[k] for r in rows if r[k] is not None]
    return sum(v) / len(v) if v else None

nodes = per[1:]
busiest = max(nodes, key=lambda r: r["cpu_us"])
out = {"nodes": total - 1, "slice_us": slice_us, "plan_slices": plan,
       "seconds": (t1 - t0) / 1e9,
       "slices_due": due,
       "loadavg": float(open("/proc/loadavg").read().split()[0]),
       "master": per[0],
       "node_mean": {k: mean(nodes, k) for k in per[0]},
       "node_max": busiest,
       "per_node": nodes}
out["node_mean"]["gaps"] = (sum(r["gaps"] for r in nodes) if plan == 1
                            else None)
out["node_mean"]["lost"] = sum(r["lost"] for r in nodes)
out["node_mean"]["rejected"] = sum(r["rejected"] for r in nodes)
out["node_mean"]["missed"] = sum(r["missed"] for r in nodes)
out["node_mean"]["late"] = sum(r["late"] for r in nodes)
out["node_mean"]["got_min"] = min(r["got"] for r in nodes)
print(json.dumps(out))
PY
}

: > "$TMP/results"
for n in $nodes; do
	for s in $slices; do
		for k in $plans; do
			echo "daemon_cost: master and $n nodes, slices of $s us, plan_slices $k, ${secs} s" >&2
			run "$n" "$s" "$k" ||
				echo "daemon_cost: $n nodes, $s us, plan_slices $k: failed" >&2
			stop
		done
	done
done

python3 - "$TMP/results" "$OUT/daemon_cost.txt" "$OUT/daemon_cost.json" \
	"$secs" "$prio" "${copies:-default}" "${lead:-min(3000, 2 slices)}" \
	"$(nproc)" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f = lambda v, p: "-" if v is None else f"{v:.{p}f}"
lines = [f"# bench/daemon_cost.sh: {sys.argv[4]} s per configuration, "
         f"rt_priority {sys.argv[5]}, strobe_copies {sys.argv[6]}, "
         f"lead_us {sys.argv[7]}, {sys.argv[8]} CPUs",
         f"{'nodes':>5} {'slice_us':>8} {'plan':>4} {'role':>9} {'cpu_us':>7} "
         f"{'cpu_pct':>7} {'sys_pct':>7} {'wake':>5} {'invol':>5} "
         f"{'rx':>5} {'got':>5} {'gaps':>5} {'lost':>4} {'rej':>4} {'missed':>6} {'late':>5} {'load':>5}"]
for r in rows:
    for role in ("master", "node_mean", "node_max"):
        x = r[role]
        name = {"master": "master", "node_mean": "node mean",
                "node_max": "node max"}[role]
        got = x["got"] if role != "node_mean" else x["got_min"]
        miss = "-" if role == "master" else str(x["missed"])
        gaps = ("" if role == "node_max" else
                "-" if x["gaps"] is None else str(x["gaps"]))
        lost = "-" if role == "master" else str(x["lost"])
        rej = str(x["rejected"])
        if role == "node_max":
            lost = rej = ""
        late = "-" if role == "master" else str(x["late"])
        if role == "node_max":
            miss = late = ""
        lines.append(f"{r['nodes']:>5} {r['slice_us']:>8} "
                     f"{r.get('plan_slices', 1):>4} {name:>9} "
                     f"{f(x['cpu_us'], 1):>7} {f(x['cpu_pct'], 2):>7} "
                     f"{f(x['sys_pct'], 0):>7} {f(x['wake'], 2):>5} "
                     f"{f(x['invol'], 2):>5} {f(x['rx'], 2):>5} "
                     f"{f(got, 3):>5} {gaps:>5} {lost:>4} {rej:>4} {miss:>6} {late:>5} "
                     f"{f(r['loadavg'], 1):>5}")
# Ratios against the longest slice of the same number of nodes and plan.
lines.append("# ratios to the longest slice: cost per slice (cpu_us), "
             "CPU share (cpu_pct)")
for n, k in sorted({(r["nodes"], r.get("plan_slices", 1)) for r in rows}):
    rs = [r for r in rows if r["nodes"] == n and r.get("plan_slices", 1) == k]
    base = max(rs, key=lambda r: r["slice_us"])
    for r in sorted(rs, key=lambda r: -r["slice_us"]):
        if r is base:
            continue
        for role in ("master", "node_mean"):
            a, b = r[role], base[role]
            lines.append(f"{n:>5} {r['slice_us']:>8} plan {k} vs {base['slice_us']:>6} "
                         f"{role:>9}: cpu_us x{a['cpu_us'] / b['cpu_us']:.2f}, "
                         f"cpu_pct x{a['cpu_pct'] / b['cpu_pct']:.2f}")
text = "\n".join(lines) + "\n"
print(text, end="")
open(sys.argv[2], "w").write(text)
json.dump(rows, open(sys.argv[3], "w"), indent=1)
PY
echo "daemon_cost: written to $OUT/daemon_cost.txt and daemon_cost.json" >&2

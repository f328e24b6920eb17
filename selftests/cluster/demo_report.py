#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The tables of `make demo` (demo-run.sh), from the runs' output and the
per-node snapshots of the cluster tests (guest-lib.sh snapshot).

  demo_report.py pair OUTFILE "REGIME ROUND"
      one line "REGIME ROUND makespan job1 job2 [BAD]" from rank output
  demo_report.py slices DIR OUTFILE ROWS
      the rows every node ran in the middle of a run, and the strobe path
  demo_report.py summary RESULTS SLICE_US
      per regime, medians of the makespans and their ratios
"""
import json
import os
import re
import sys
from statistics import median

sys.dont_write_bytecode = True
from analyse import pct  # noqa: E402  (beside this file)


def pair(argv):
    """One run of both jobs: makespan and each job's elapsed time."""
    txt = open(argv[1]).read()
    start = float(re.search(r"start=([\d.]+)", txt).group(1))
    ends, el, bad = [], {}, []
    for m in re.finditer(r"job(\d) rc=(\d+) end=([\d.]+) ?(.*)", txt):
        ends.append(float(m.group(3)))
        e = re.search(r"elapsed_s ([\d.]+)", m.group(4))
        el[m.group(1)] = e.group(1) if e else "?"
        if m.group(2) != "0" or not e:
            bad.append(m.group(0))
    print(argv[2], "%.2f" % (max(ends) - start),
          el.get("1", "-"), el.get("2", "-"), "BAD" if bad else "")


def slices(argv):
    """Rows run on every node in the middle of the run, and a summary."""
    d, outf, want = argv[1], argv[2], int(argv[3])
    txt = open(outf).read()
    t0 = float(re.search(r"start=([\d.]+)", txt).group(1)) * 1e9
    t1 = max(float(x) for x in re.findall(r"end=([\d.]+)", txt)) * 1e9
    jobs = open(d + "/jobs").read().split()
    nodes = [int(n) for n in os.environ["CL_NODES"].split()]
    # Records of this run only (a second of margin): a bcsd restarted
    # for another slice length numbers its slices afresh, and the whole
    # ring holds records of earlier runs with the same numbers.
    per = {}
    for n in nodes:
        recs = json.load(open("%s/node%d.slices.json" % (d, n)))
        per[n] = {r["slice"]: r for r in recs
                  if r.get("row") is not None and "F" not in r["flags"] and
                  t0 - 1e9 <= r["switch_start_ns"] <= t1 + 1e9}
    common = sorted(set.intersection(*(set(per[n]) for n in nodes)))
    inrun = [s for s in common if t0 <= per[1][s]["switch_start_ns"] <= t1]
    rowof = {}
    for j in json.load(open(d + "/node1.jobs.json")):
        rowof[j["row"]] = "job%d" % (jobs.index(str(j["id"])) + 1) \
            if str(j["id"]) in jobs else "id %s" % j["id"]
    mid = max(0, len(inrun) // 2 - want // 2)
    pick = inrun[mid:mid + want]
    if pick:
        print("slice  runs   rows: %s   switch - deadline, us: %s   spread, us"
              % (" ".join("%5s" % ("node%d" % n) for n in nodes),
                 " ".join("%7s" % ("node%d" % n) for n in nodes)))
    for s in pick:
        r = [per[n][s] for n in nodes]
        st = [x["switch_start_ns"] for x in r]
        print("%5d  %-5s        %s%s%s   %10.0f" % (
            s, rowof.get(r[0]["row"], "-"),
            " ".join("%5s" % x["row"] for x in r), " " * 26,
            " ".join("%7.0f" % ((x["switch_start_ns"] - x["deadline_ns"]) / 1e3)
                     for x in r),
            (max(st) - min(st)) / 1e3))
    same = sum(1 for s in inrun
               if len({per[n][s]["row"] for n in nodes}) == 1)
    late = sum(per[n][s]["late"] for n in nodes for s in inrun)
    iv = sorted(per[1][s]["interval_ns"] for s in inrun) or [0]
    part = ""
    first = min((r["switch_start_ns"] for r in per[1].values()), default=t1)
    if first > t0:
        part = " (of its last %.1f s: the ring holds no more)" % ((t1 - first) / 1e9)
    print("%s: %d slices during the run%s (median %.1f ms apart on node1), "
          "%d with the same row on all %d nodes, %d switches after the deadline" % (
              d.rsplit("demo-", 1)[1], len(inrun), part, iv[len(iv) // 2] / 1e6,
              same, len(nodes), late))
    # The strobe path per node, from the master's send time (deadline -
    # lead) to the strobe's arrival in bcs.ko and to the switch.
    lead = int(open(d + "/lead_us").read()) * 1000
    def q(v):
        return "%6.0f %6.0f %7.0f" % (pct(v, 50) / 1e3, pct(v, 99) / 1e3,
                                      max(v) / 1e3)
    if inrun:
        print("  strobe path, us after the master's send time (deadline - "
              "lead, lead %d us):" % (lead // 1000))
        print("         in bcs.ko:    p50    p99     max   switch:    p50    p99     max")
        for n in nodes:
            r = [per[n][s] for s in inrun]
            print("  node%d %32s %32s" % (
                n, q([x["strobe_ns"] - x["deadline_ns"] + lead for x in r]),
                q([x["switch_start_ns"] - x["deadline_ns"] + lead for x in r])))
        sk = [max(per[n][s]["switch_start_ns"] for n in nodes) -
              min(per[n][s]["switch_start_ns"] for n in nodes) for s in inrun]
        print("  cross-node switch skew, us: p50 %.0f, p99 %.0f, max %.0f" % (
            pct(sk, 50) / 1e3, pct(sk, 99) / 1e3, max(sk) / 1e3))
        # When the switch had taken effect on each node: the old gang
        # parked and the new one out of its parking (the records' stamps).
        def eff(x):
            if x.get("parked_ns") and x.get("resumed_ns"):
                return max(x["parked_ns"], x["resumed_ns"])
            return 0
        print("  switch took effect, us after it began:   p50    p99     max"
              "   (slices that took full effect)")
        for n in nodes:
            v = [eff(per[n][s]) - per[n][s]["switch_start_ns"]
                 for s in inrun if eff(per[n][s])]
            if v:
                print("  node%d %36s   (%d of %d)" % (n, q(v), len(v),
                                                    len(inrun)))
        done = [s for s in inrun if all(eff(per[n][s]) for n in nodes)]
        if done:
            ek = [max(eff(per[n][s]) for n in nodes) -
                  min(eff(per[n][s]) for n in nodes) for s in done]
            print("  cross-node skew of the switch taking effect, us: p50 "
                  "%.0f, p99 %.0f, max %.0f" % (pct(ek, 50) / 1e3,
                                                 pct(ek, 99) / 1e3,
                                                 max(ek) / 1e3))


def summary(argv):
    """Per regime, the medians over the rounds and their ratios."""
    runs = {}		# regime -> {round: (makespan, job1, job2)}
    for line in open(argv[1]):
        f = line.split()
        runs.setdefault(f[0], {})[int(f[1])] = (float(f[2]), f[3], f[4])
    runs.pop("calibrate", None)
    def ratio(regime, ref, inverse=False):
        r = [(runs[ref][k][0] / v[0]) if inverse else (v[0] / runs[ref][k][0])
             for k, v in runs[regime].items() if k in runs.get(ref, {})]
        span = "%.2f..%.2f" % (min(r), max(r)) if len(r) > 1 else ""
        return ("%.2f" % median(r) if r else "-"), span
    nr = max((len(v) for v in runs.values()), default=0)
    print()
    if nr > 1:
        print("medians over %d rounds (each round runs every regime once; "
              "ratios within a round)" % nr)
    print("%-18s %6s %10s %10s %10s %8s %8s  %s" % ("regime", "rounds",
          "makespan", "job1", "job2", "/seq", "plain/x",
          "plain/x range" if nr > 1 else ""))
    for k, v in runs.items():
        first = v[min(v)]
        q, _ = ratio(k, "sequential")
        p, span = ratio(k, "plain", inverse=True)
        print("%-18s %6d %9.2fs %9ss %9ss %8s %8s  %s" % (
            k, len(v), median(x[0] for x in v.values()), first[1], first[2],
            q, p, span))
    g = "bcs-%sus" % argv[2]
    if 1 in runs.get("plain", {}) and 1 in runs.get(g, {}):
        pl, gs = runs["plain"][1], runs[g][1]
        print()
        print("completion times (rank 0's elapsed_s), plain time-sharing: "
              "job1 %ss job2 %ss; bcs %s ms slices: job1 %ss job2 %ss" % (
                  pl[1], pl[2], int(argv[2]) // 1000, gs[1], gs[2]))
        print("makespan plain / bcs = %.2f" % (pl[0] / gs[0]))


COMMANDS = {"pair": (pair, 2), "slices": (slices, 3), "summary": (summary, 2)}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit("usage: demo_report.py pair|slices|summary ARGS...")
    func, nargs = COMMANDS[sys.argv[1]]
    if len(sys.argv) != nargs + 2:
        sys.exit("demo_report.py %s: %d arguments, not %d" %
                 (sys.argv[1], nargs, len(sys.argv) - 2))
    # The functions read their arguments as argv[1], argv[2], ...
    func([sys.argv[0]] + sys.argv[2:])


if __name__ == "__main__":
    main()

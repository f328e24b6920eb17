#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Check the `bcsstat mpi --json` output of a run of pattern.c (on stdin)
# against what the program did; prints what differs, exits 1 if anything.
#
#   check_stats.py full NP SUB_BITS   every rank ran the whole pattern,
#                                     BCS_MPI_POLL=1 (every call timed)
#   check_stats.py killed [abort]     one file, of the rank killed after
#                                     half of its Allreduce calls (or
#                                     that called MPI_Abort there)
#   check_stats.py default NP         the whole pattern, BCS_MPI_STATS
#                                     and BCS_MPI_POLL unset: histograms
#                                     of the process rows only, one
#                                     MPI_Test in 32 timed
#   check_stats.py imbalance NP R     pattern imbalance R: rank R computes
#                                     before each Allreduce, the others
#                                     wait for it there
#   check_stats.py control NP         pattern phases: Allreduce selected
#                                     during the second of three phases
#                                     of 100 at resolution 3, recording
#                                     off in the third

import json
import os
import re
import sys

MIB = 1 << 20
# Per rank: calls and bytes of each primitive the whole pattern makes.
FULL = {
    "MPI_Init": (1, 0),
    "MPI_Comm_rank": (1, 0),
    "MPI_Comm_size": (1, 0),
    "MPI_Comm_dup": (1, 0),
    "MPI_Comm_free": (1, 0),
    "MPI_Allreduce": (1000, 1000 * 8 * 8),
    "MPI_Isend": (200, 200 * MIB),
    "MPI_Irecv": (200, 200 * MIB),
    "MPI_Waitall": (200, 0),
    "MPI_Barrier": (50, 0),
    "MPI_Test": (100, 0),
    "MPI_Finalize": (1, 0),
    "Comm Overhead": (1000 + 200 + 50 + 1, 0),          # + Comm_dup
    "Comp Granularity": (1000 + 200 + 50 + 1 + 1, 0),
}
# The primitives BCS_MPI_STATS selects in run.sh, and those it does not.
SELECTED = ("MPI_Allreduce", "MPI_Isend")
UNSELECTED = ("MPI_Barrier", "MPI_Waitall")

# The polled primitives of the pattern, and the default BCS_MPI_POLL.
POLLED = ("MPI_Test",)
POLL_DEFAULT = 32

errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def timed(name, calls, sample):
    """Calls of @name timed: the first, then one in @sample if polled."""
    if name not in POLLED or not calls:
        return calls
    return 1 + (calls - 1) // sample


def blocking_prims():
    """The blocking primitives, from the tables of prims.h (P and O)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "prims.h")
    with open(path) as f:
        src = f.read()
    return {"MPI_" + m.group(1)
            for m in re.finditer(r"^\s*[PO]\((\w+),\s*1\s*,", src, re.M)}


BLOCKING = blocking_prims()


def check_split(rank):
    """Communication is the blocking calls' time, measured on its own.

    comp + comm = elapsed holds by construction (each computation runs
    from the end of the last blocking call), so it cannot fail; what can
    is that the communication time is exactly the sum of the blocking
    primitives' times, each recorded by its own wrapper, and its calls
    their number."""
    prims = rank["primitives"]
    blocking = [p for name, p in prims.items() if name in BLOCKING]
    total = sum(p["total_ns"] for p in blocking)
    calls = sum(p["calls"] for p in blocking)
    comm = prims.get("Comm Overhead", {})
    check(rank["comm_ns"] == total and comm.get("total_ns") == total,
          "rank %d: communication %d ns, the blocking calls' %d ns" %
          (rank["rank"], rank["comm_ns"], total))
    check(comm.get("calls") == calls,
          "rank %d: %s communication intervals, %d blocking calls" %
          (rank["rank"], comm.get("calls"), calls))


def check_counts(rank, want, sample=1):
    prims = rank["primitives"]
    for name, p in prims.items():
        calls, nbytes = want.get(name, (0, 0))
        check(p["calls"] == calls, "rank %d %s: %d calls, want %d" %
              (rank["rank"], name, p["calls"], calls))
        check(p["timed"] == timed(name, calls, sample),
              "rank %d %s: %d calls timed, want %d" %
              (rank["rank"], name, p["timed"],
               timed(name, calls, sample)))
        check(p["bytes"] == nbytes, "rank %d %s: %d bytes, want %d" %
              (rank["rank"], name, p["bytes"], nbytes))
        if p["calls"]:
            check(p["min_ns"] <= p["max_ns"] <= p["total_ns"],
                  "rank %d %s: min/max/total out of order" %
                  (rank["rank"], name))
    for name in want:
        check(name in prims, "rank %d: no %s" % (rank["rank"], name))


def full(doc, np, sub_bits):
    ranks = doc["ranks"]
    check(sorted(r["rank"] for r in ranks) == list(range(np)),
          "ranks %s, want 0..%d" % ([r["rank"] for r in ranks], np - 1))
    for r in ranks:
        check(r["complete"], "rank %d not complete" % r["rank"])
        check(r["world_size"] == np, "rank %d: world size %d" %
              (r["rank"], r["world_size"]))
        check(r["sub_bits"] == sub_bits, "rank %d: sub_bits %d, want %d" %
              (r["rank"], r["sub_bits"], sub_bits))
        check_counts(r, FULL)
        err = r.get("identity_error_pct")
        check(err is not None and err <= 0.01,
              "rank %d: computation + communication off by %s %%" %
              (r["rank"], err))
        check(r["comp_ns"] + r["comm_ns"] <= r["elapsed_ns"] * 1.0001,
              "rank %d: more time than elapsed" % r["rank"])
        check_split(r)
    rows = {p["name"]: p for p in doc["primitives"]}
    for name, (calls, nbytes) in FULL.items():
        row = rows.get(name, {})
        check(row.get("calls") == calls * np,
              "merged %s: %s calls, want %d" %
              (name, row.get("calls"), calls * np))
        check(row.get("bytes") == nbytes * np,
              "merged %s: %s bytes, want %d" %
              (name, row.get("bytes"), nbytes * np))
        check(0 <= row.get("slowest_rank", -1) < np and
              0 <= row.get("fastest_rank", -1) < np and
              row["fastest_total_ns"] <= row["slowest_total_ns"],
              "merged %s: slowest/fastest rank wrong" % name)
    for name in SELECTED + ("Comp Granularity", "Comm Overhead"):
        h = rows[name].get("latency_hist")
        check(h is not None and h["count"] == rows[name]["calls"] and
              sum(b[2] for b in h["buckets"]) == h["count"] and
              h["sub_bits"] == sub_bits,
              "merged %s: latency histogram %s" % (name, h))
    for name in SELECTED:
        h = rows[name].get("size_hist")
        size = FULL[name][1] // FULL[name][0]
        check(h is not None and h["count"] == rows[name]["calls"] and
              all(b[0] <= size <= b[1] for b in h["buckets"]) and
              h["sum"] == rows[name]["bytes"],
              "merged %s: size histogram %s" % (name, h))
    for name in UNSELECTED:
        check("latency_hist" not in rows[name],
              "%s has a histogram, not selected" % name)


def killed(doc):
    ranks = doc["ranks"]
    check(len(ranks) == 1, "%d files" % len(ranks))
    r = ranks[0]
    check(not r["complete"], "the killed rank's file is marked complete")
    check("identity_error_pct" not in r, "an identity for a killed rank")
    want = {"MPI_Init": (1, 0), "MPI_Allreduce": (500, 500 * 64),
            "MPI_Comm_rank": (1, 0), "MPI_Comm_size": (1, 0),
            "Comm Overhead": (500, 0), "Comp Granularity": (500, 0)}
    if len(sys.argv) > 2 and sys.argv[2] == "abort":
        want["MPI_Abort"] = (1, 0)
    check_counts(r, want)
    check("MPI_Wtime" not in r["primitives"], "MPI_Wtime measured")


def default(doc, np):
    check(len(doc["ranks"]) == np, "%d files" % len(doc["ranks"]))
    for r in doc["ranks"]:
        check_counts(r, FULL, POLL_DEFAULT)
        check_split(r)
    rows = {p["name"]: p for p in doc["primitives"]}
    row = rows.get("MPI_Test", {})
    n = timed("MPI_Test", 100, POLL_DEFAULT)
    check(row.get("timed") == n * np and row.get("calls") == 100 * np and
          row["total_ns"] >= row["avg_ns"] * 100 * np * 0.999,
          "merged MPI_Test: %s, want %d of %d calls timed and the total "
          "estimated over all" % (row, n * np, 100 * np))
    for row in doc["primitives"]:
        process = row["name"] in ("Comp Granularity", "Comm Overhead")
        check(("latency_hist" in row) == process,
              "%s: latency histogram %s" % (row["name"],
                                            "missing" if process else
                                            "not selected"))
        check("size_hist" not in row, "%s: a size histogram" % row["name"])


def control(doc, np):
    check(len(doc["ranks"]) == np, "%d files" % len(doc["ranks"]))
    for r in doc["ranks"]:
        check(r["complete"], "rank %d not complete" % r["rank"])
        check(r["sub_bits"] == 3, "rank %d: sub_bits %d, want 3 (changed)" %
              (r["rank"], r["sub_bits"]))
        p = r["primitives"].get("MPI_Allreduce", {})
        check(p.get("calls") == 200, "rank %d: %s Allreduce, want 200 "
              "(the third phase off)" % (r["rank"], p.get("calls")))
    rows = {p["name"]: p for p in doc["primitives"]}
    row = rows.get("MPI_Allreduce", {})
    h = row.get("latency_hist")
    check(h is not None and h["count"] == 100 * np and
          sum(b[2] for b in h["buckets"]) == h["count"] and
          h["sub_bits"] == 3,
          "Allreduce latency histogram %s, want %d values (phase 2) at "
          "sub_bits 3" % (h and (h["count"], h["sub_bits"]), 100 * np))
    for name in ("Comp Granularity", "Comm Overhead"):
        h = rows[name].get("latency_hist")
        check(h is not None and h["sub_bits"] == 3 and
              0 < h["count"] < rows[name]["calls"],
              "%s: histogram %s, want one started again at sub_bits 3" %
              (name, h and (h["count"], h["sub_bits"])))
    h = row.get("size_hist")
    check(h is not None and h["count"] == 100 * np and
          h["sum"] == 100 * 8 * np,
          "Allreduce size histogram %s, want %d values of 8 bytes" %
          (h and (h["count"], h["sum"]), 100 * np))
    # Selected at the start only: its histogram of then, at 4.
    h = rows.get("MPI_Comm_rank", {}).get("latency_hist")
    check(h is not None and h["count"] == np and h["sub_bits"] == 4,
          "Comm_rank histogram %s, want %d values at sub_bits 4" %
          (h and (h["count"], h["sub_bits"]), np))
    for name, row in rows.items():
        if name not in ("MPI_Allreduce", "MPI_Comm_rank",
                        "Comp Granularity", "Comm Overhead"):
            check("latency_hist" not in row, "%s: a histogram" % name)


def imbalance(doc, np, slow):
    check(len(doc["ranks"]) == np, "%d files" % len(doc["ranks"]))
    rows = {p["name"]: p for p in doc["primitives"]}
    row = rows.get("MPI_Allreduce", {})
    check(row.get("calls") == 50 * np, "Allreduce: %s calls, want %d" %
          (row.get("calls"), 50 * np))
    # The rank the others wait for spends the least time in the
    # collective and the most between MPI calls.
    check(row.get("fastest_rank") == slow,
          "Allreduce: fastest rank %s, want %d (the others wait for it)" %
          (row.get("fastest_rank"), slow))
    comp = rows.get("Comp Granularity", {})
    check(comp.get("slowest_rank") == slow,
          "Comp Granularity: slowest rank %s, want %d" %
          (comp.get("slowest_rank"), slow))


def main():
    doc = json.load(sys.stdin)
    if sys.argv[1] == "full":
        full(doc, int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1] == "default":
        default(doc, int(sys.argv[2]))
    elif sys.argv[1] == "imbalance":
        imbalance(doc, int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1] == "control":
        control(doc, int(sys.argv[2]))
    else:
        killed(doc)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

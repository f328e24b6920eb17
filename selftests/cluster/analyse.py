#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Checks over the per-node snapshots of the cluster tests (guest-lib.sh
snapshot: nodeN.slices.json, nodeN.tasks.json, nodeN.jobs.json, ...).

Prints "PASS text", "FAIL text" and "# text" lines, which lib.sh turns
into TAP; exits 1 if anything failed.

  analyse.py coherence DIR [--from-slice S] [--jobs J,J] [--min N]
                         [--skew-out FILE] [--lead-us US]
  analyse.py tasks DIR --pids N:J:PID,...
  analyse.py running DIR1 DIR2 --pids N:J:PID,...
  analyse.py loss DIR --master N --from-slice S --to-slice E
  analyse.py mpi DIR --job J --np N --output FILE
"""
import argparse
import json
import os
import re
import sys

failed = False
checks = 0


def check(ok, text):
    global failed, checks
    print(("PASS " if ok else "FAIL ") + text)
    failed |= not ok
    checks += 1
    return ok


def diag(text):
    print("# " + text)


def load(d, node, what):
    with open(os.path.join(d, "node%s.%s.json" % (node, what))) as f:
        return json.load(f)


def nodes_of(d):
    return sorted(int(f[4:-12]) for f in os.listdir(d)
                  if f.startswith("node") and f.endswith(".slices.json"))


def driven(rec):
    """Records of gang switches from strobes (not fail-open ones)."""
    return rec.get("row") is not None and "F" not in rec["flags"]


def expired(rec):
    """Slices that ran no gang: the last strobe's rows had ended."""
    return "E" in rec["flags"]


def by_slice(recs, lo=0, hi=None, keep=driven):
    m = {}
    for r in recs:
        if keep(r) and r["slice"] >= lo and (hi is None or r["slice"] <= hi):
            m[r["slice"]] = r
    return m


def overtaken(per):
    """Slice numbers missing before records flagged O (overtaken): the
    node switched too late, to the newest strobe due, passing them over."""
    nums = sorted(per)
    return {s for p, c in zip(nums, nums[1:]) if "O" in per[c]["flags"]
            for s in range(p + 1, c)}


def rows_in_force(maps, rec, jinfo):
    """Each job's row in the map a switch record ran by: the newest map
    applied before the switch began whose apply slice had come (0: at
    once).  A job moves rows when the master learns its nodes, a few
    slices after its tasks attach; the snapshot's job list has only the
    last rows.  Falls back to those if no such map is recorded."""
    live = [m for m in maps
            if m.get("applied_ns", 0) < rec["switch_start_ns"] and
            m.get("apply_slice", 0) <= rec["slice"]]
    rows = {j["id"]: j["row"] for j in jinfo}
    if live:
        m = max(live, key=lambda m: (m["epoch"], m["version"]))
        rows.update({int(k): v for k, v in m.get("rows", {}).items()})
    return rows


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def coherence(a):
    nodes = nodes_of(a.dir)
    if not check(len(nodes) >= max(2, a.nodes),
                 "snapshots of %d nodes (%s), at least %d" % (
                     len(nodes), nodes, max(2, a.nodes))):
        return
    recs = {n: load(a.dir, n, "slices") for n in nodes}
    # A slice that ran no gang because the strobe came too late (expired)
    # was followed all the same: it counts, but has no row to compare.
    per = {n: by_slice(recs[n], a.from_slice,
                       keep=lambda r: driven(r) or expired(r))
           for n in nodes}
    common = sorted(set.intersection(*(set(per[n]) for n in nodes)))
    diag("nodes %s; slices from %d: %s; on all nodes: %d" % (
        nodes, a.from_slice,
        ", ".join("node%d %d" % (n, len(per[n])) for n in nodes),
        len(common)))
    check(len(common) >= a.min, "at least %d slices recorded on every node"
          % a.min)
    # Only slices every node switched to are compared: a node that failed
    # open, or lost its strobes, for much of the window must not pass by
    # shrinking that set.  Snapshots end at different slices (seconds
    # apart on a loaded host): count up to the earliest end.
    # A node held up past several deadlines switches to the newest strobe
    # only (its record flagged O, overtaken): the slices it passed over
    # ran nothing there, right or wrong, and are left out on every node.
    end = min([max(per[n]) for n in nodes if per[n]] or [0])
    held = {n: overtaken(per[n]) for n in nodes}
    out = set().union(*held.values())
    upto = {n: len([s for s in per[n] if s <= end and s not in out])
            for n in nodes}
    shared = len([s for s in common if s <= end])
    diag("slices passed over by a node held up (left out): %s" % ", ".join(
        "node%d %d" % (n, len(held[n])) for n in nodes))
    if a.min_share > 0:
        check(all(shared >= a.min_share * upto[n] for n in nodes),
              "every node switched in at least %d%% of the slices of the "
              "window up to slice %d (%d on all; %s)" % (
                  round(100 * a.min_share), end, shared,
                  ", ".join("node%d %d" % (n, upto[n]) for n in nodes)))
    # A node whose map was stale ran a row that holds none of its jobs (no
    # gang): that slice is left out, as an overtaken one is.
    job_rows = {n: {j["row"] for j in load(a.dir, n, "jobs")} for n in nodes}
    idle = {s for s in common for n in nodes
            if expired(per[n][s]) or per[n][s]["row"] not in job_rows[n]}
    if idle:
        diag("slices in which a node ran no gang, its strobe late or its "
             "map stale (left out of the comparison): %d" % len(idle))
    bad = [s for s in common if s not in idle and
           len({per[n][s]["row"] for n in nodes}) > 1]
    for s in bad[:5]:
        diag("slice %d: rows %s" % (s, {n: per[n][s]["row"] for n in nodes}))
    check(common and not bad, "every slice ran the same row on every node"
          " (%d slices, %d differ)" % (len(common), len(bad)))
    if a.min_compared:
        check(len(common) - len(idle) >= a.min_compared,
              "at least %d of them ran a gang on every node (%d)" % (
                  a.min_compared, len(common) - len(idle)))

    if a.jobs:
        jobs = [int(j) for j in a.jobs.split(",")]
        for n in nodes:
            rows = {j["id"]: j["row"] for j in load(a.dir, n, "jobs")}
            want = {rows.get(j) for j in jobs}
            seen = {per[n][s]["row"] for s in per[n]
                    if not expired(per[n][s])}
            check(None not in want and want <= seen,
                  "node%d: the rows of jobs %s (%s) all ran (rows seen %s)"
                  % (n, a.jobs, sorted(r for r in want if r is not None),
                     sorted(seen)))
            # Once every job has its tasks: each record counts the tasks of
            # the running row, never parks more tasks than the other rows
            # hold nor wakes more than its row holds, and over the window
            # tasks were both parked and woken, never more woken than
            # parked.  (Park requests act when the task next leaves the
            # kernel, so one switch may find nothing to wake.)
            jinfo = load(a.dir, n, "jobs")
            tasks = load(a.dir, n, "tasks")
            t0 = max([t["attach_ns"] for t in tasks] or [0])
            # Every switch, in order: an expiry and the late strobe after
            # it share a slice number.
            every = [r for r in load(a.dir, n, "slices")
                     if (driven(r) or expired(r)) and
                     r["slice"] >= a.from_slice and
                     r["switch_start_ns"] > t0]
            recs = [r for s, r in sorted(per[n].items())
                    if r["switch_start_ns"] > t0]
            maps = load(a.dir, n, "stats").get("maps", [])
            bad = []
            for r in recs:
                rows = rows_in_force(maps, r, jinfo)
                mine = sum(j["tasks"] for j in jinfo
                           if rows.get(j["id"]) in (r["row"], None))
                other = sum(j["tasks"] for j in jinfo) - mine
                if (r["running"] != mine or r["suspended"] > other or
                        r["resumed"] > mine):
                    bad.append(r)
            for r in bad[:3]:
                diag("node%d slice %d: row %d running %d suspended %d "
                     "resumed %d" % (n, r["slice"], r["row"], r["running"],
                                     r["suspended"], r["resumed"]))
            check(len(recs) >= 3 and not bad,
                  "node%d: every switch ran its row's tasks and parked or "
                  "woke no more than the other rows and its own hold (%d "
                  "switches)" % (n, len(recs)))
            # A task woken by a switch that never took effect (it got no
            # CPU before the next switch parked its job again) is still
            # parked, with no new request, and is woken again later:
            # those wakes come on top of one wake per park.
            # Slices that ran no gang (rows expired) park tasks too.
            susp = sum(r["suspended"] for r in every)
            res = sum(r["resumed"] for r in every)
            both = sum(1 for r in every if r["suspended"] and r["resumed"])
            again = sum(r["resumed"] for r in every[:-1]
                        if r.get("resumed_ns") == 0)
            check(susp > 0 and res > 0 and res <= susp + len(tasks) + again,
                  "node%d: tasks parked %d times and woken %d times (%d of "
                  "%d switches did both; %d wakes by switches that did not "
                  "take effect)" % (n, susp, res, both, len(recs), again))

    # Cross-node switch skew: spread of switch_start_ns over the nodes for
    # the same slice.  Reported, not asserted.
    skews = [max(per[n][s]["switch_start_ns"] for n in nodes) -
             min(per[n][s]["switch_start_ns"] for n in nodes) for s in common]
    if skews:
        res = {"slices": len(skews),
               "median_us": pct(skews, 50) / 1e3,
               "p99_us": pct(skews, 99) / 1e3,
               "max_us": max(skews) / 1e3}
        diag("cross-node switch skew over %d slices: median %.1f us, p99 "
             "%.1f us, max %.1f us" % (res["slices"], res["median_us"],
                                       res["p99_us"], res["max_us"]))
        # The same over the slices whose strobe reached every node before
        # its deadline: what the clocks and timers do, without the
        # network and scheduling delays of late strobes.
        timed = [s for s in common
                 if all(per[n][s]["strobe_ns"] <= per[n][s]["deadline_ns"]
                        for n in nodes)]
        tsk = [max(per[n][s]["switch_start_ns"] for n in nodes) -
               min(per[n][s]["switch_start_ns"] for n in nodes) for s in timed]
        if tsk:
            res.update({"timed_slices": len(tsk),
                        "timed_median_us": pct(tsk, 50) / 1e3,
                        "timed_p99_us": pct(tsk, 99) / 1e3,
                        "timed_max_us": max(tsk) / 1e3})
            diag("  of them %d slices with every strobe on time: median "
                 "%.1f us, p99 %.1f us, max %.1f us" % (
                     len(tsk), res["timed_median_us"], res["timed_p99_us"],
                     res["timed_max_us"]))
        # When each switch had taken effect on a node (the old gang parked,
        # the new one out of its parking): the later of the two stamps.
        # Slices whose switch never took full effect on some node (0) are
        # left out and counted.
        def effective(r):
            return max(r.get("parked_ns", 0), r.get("resumed_ns", 0)) \
                if r.get("parked_ns") and r.get("resumed_ns") else 0
        eff = [[effective(per[n][s]) for n in nodes] for s in common]
        done = [e for e in eff if all(e)]
        if done:
            esk = [max(e) - min(e) for e in done]
            res.update({"effective_slices": len(esk),
                        "effective_median_us": pct(esk, 50) / 1e3,
                        "effective_p99_us": pct(esk, 99) / 1e3})
            diag("cross-node skew of the switch taking effect (old gang "
                 "parked, new gang out of its parking) over %d slices: "
                 "median %.1f us, p99 %.1f us; %d slices did not take full "
                 "effect on every node" % (len(esk), pct(esk, 50) / 1e3,
                                           pct(esk, 99) / 1e3,
                                           len(eff) - len(done)))
        # Per node: how long after its deadline each switch began, and
        # how many strobes arrived after their deadline.
        for n in nodes:
            lag = [per[n][s]["switch_start_ns"] - per[n][s]["deadline_ns"]
                   for s in common]
            after = sum(1 for s in common
                        if per[n][s]["strobe_ns"] > per[n][s]["deadline_ns"])
            flagged = sum(1 for s in common if per[n][s]["late"])
            res["node%d" % n] = {"switch_after_deadline_median_us":
                                 pct(lag, 50) / 1e3,
                                 "switch_after_deadline_p99_us":
                                 pct(lag, 99) / 1e3,
                                 "strobes_after_deadline": after,
                                 "late_flag": flagged}
            diag("node%d: switch began %.1f us (median), %.1f us (p99) "
                 "after the deadline; %d strobes arrived after it; %d "
                 "records flagged late" % (n, pct(lag, 50) / 1e3,
                                           pct(lag, 99) / 1e3, after,
                                           flagged))
            if a.lead_us:
                # The strobe path: from the master's scheduled send time
                # (deadline - lead) to the strobe's arrival in bcs.ko and
                # to the start of the switch.
                send = {s: per[n][s]["deadline_ns"] - a.lead_us * 1000
                        for s in common}
                path = {"transit": [per[n][s]["strobe_ns"] - send[s]
                                    for s in common],
                        "to_switch": [per[n][s]["switch_start_ns"] - send[s]
                                      for s in common]}
                for k, v in path.items():
                    res["node%d" % n][k + "_us"] = {
                        "p50": pct(v, 50) / 1e3, "p99": pct(v, 99) / 1e3,
                        "max": max(v) / 1e3}
                diag("node%d: strobe path from the master's send time: in "
                     "bcs.ko after p50 %.0f / p99 %.0f / max %.0f us, "
                     "switch after p50 %.0f / p99 %.0f / max %.0f us "
                     "(lead %d us)" % ((n,) + tuple(
                         res["node%d" % n][k + "_us"][q]
                         for k in ("transit", "to_switch")
                         for q in ("p50", "p99", "max")) + (a.lead_us,)))
        if a.skew_out:
            with open(a.skew_out, "w") as f:
                json.dump(res, f)


def parse_pids(s):
    out = []
    for item in s.split(","):
        n, j, p = item.split(":")
        out.append((int(n), int(j), int(p)))
    return out


def tasks(a):
    for n, j, p in parse_pids(a.pids):
        ts = [t for t in load(a.dir, n, "tasks") if t["tgid"] == p]
        t = ts[0] if ts else None
        check(t is not None and t["job"] == j,
              "node%d: burner %d attached to job %d" % (n, p, j))
        if t:
            check(t["run_ns"] > 0 and t["slices"] > 0 and t["parks"] > 0
                  and t["suspended_ns"] > 0,
                  "node%d: burner %d ran (%.0f ms in %d slices) and was "
                  "parked (%d times, %.0f ms)" % (
                      n, p, t["run_ns"] / 1e6, t["slices"], t["parks"],
                      t["suspended_ns"] / 1e6))


def running(a):
    for n, j, p in parse_pids(a.pids):
        t1 = [t for t in load(a.dir1, n, "tasks") if t["tgid"] == p]
        t2 = [t for t in load(a.dir2, n, "tasks") if t["tgid"] == p]
        check(t1 and t2 and t2[0]["run_ns"] > t1[0]["run_ns"] and
              t2[0]["state"] != "parked",
              "node%d: job %d task %d keeps running (%s)" % (
                  n, j, p, "%.0f -> %.0f ms" % (t1[0]["run_ns"] / 1e6,
                                               t2[0]["run_ns"] / 1e6)
                  if t1 and t2 else "not attached"))


def map_history(d, node):
    """The maps node's bcsd applied to bcs.ko (stats file), oldest first:
    (applied_ns, from_slice, {job: row}); None if it kept none."""
    try:
        maps = load(d, node, "stats").get("maps")
    except (OSError, ValueError):
        return None
    if maps is None:
        return None
    return [(m["applied_ns"], m["from_slice"],
             {int(j): r for j, r in m["rows"].items()}) for m in maps]


def map_at(hist, t):
    """The map applied at time t (None: none yet, or older than kept)."""
    cur = None
    for ns, _, rows in hist:
        if ns <= t:
            cur = rows
    return cur


def master_map_of(hist, s):
    """The master's map that its strobe for slice s names."""
    cur = None
    for _, frm, rows in hist:
        if frm and frm <= s:
            cur = rows
    return cur


def loss(a):
    nodes = nodes_of(a.dir)
    master = by_slice(load(a.dir, a.master, "slices"), a.from_slice,
                      a.to_slice)
    span = sorted(master)
    check(len(span) >= 20, "master node%d recorded %d slices in the window"
          % (a.master, len(span)))
    rows = set(master[s]["row"] for s in span)
    check(len(rows) >= 2, "the master ran %d rows in the window (a slice "
          "missed can be in a wrong row)" % len(rows))
    mhist = map_history(a.dir, a.master) if a.maps else None
    if a.maps:
        check(mhist is not None and any(f for _, f, _ in mhist),
              "the master's bcsd kept its maps with the slices they began")
    for n in nodes:
        if n == a.master:
            continue
        per = by_slice(load(a.dir, n, "slices"), a.from_slice, a.to_slice,
                       lambda r: driven(r) or expired(r))
        nhist = map_history(a.dir, n) if a.maps else None

        def idle(r):
            """No gang ran: the rows had expired, or a row with no job of
            the node's map (a node whose map is stale runs such a row)."""
            if expired(r):
                return True
            if nhist is None:
                return False
            m = map_at(nhist, r["switch_start_ns"])
            return m is not None and r["row"] not in m.values()

        idles = sum(1 for s in per if idle(per[s]) and not expired(per[s]))
        expiries = sum(1 for s in per if expired(per[s]))
        # With map changes (--maps), a strobe queued with the old map's
        # row, or a prediction from it, may switch one slice wrong:
        # map_check() bounds that by gangs instead.
        wrong = [s for s in per if s in master and not idle(per[s]) and
                 per[s]["row"] != master[s]["row"]] if not a.maps else []
        predicted = sum(1 for s in per if "P" in per[s]["flags"])
        check(not wrong, "node%d: every strobe that arrived, and every "
              "prediction, switched to the master's row or, with a stale "
              "map, to no gang (%d slices, %d of them predicted, %d with "
              "no gang for a stale map, %d expired, %d wrong)" % (
                  n, len(per), predicted, idles, expiries, len(wrong)))
        # Slices with no record here: the strobe was lost or stale.  The
        # node kept its previous row; count the slices where that row was
        # not the master's, and check the module counted each gap.
        ordered = sorted(per)
        gaps = uncounted = wrong_slices = longest = 0
        # Counted as missed: by the first record, in the order written,
        # whose slice passes the highest one before it (a switch that
        # overtook others may be followed by late strobes of their slices).
        # A node held up past several deadlines (the host did not run it)
        # switches to the newest entry due, flagged O: the slices it passed
        # over ran nothing there, right or wrong, as in coherence().
        top = None
        held = set()
        for r in load(a.dir, n, "slices"):
            if not (driven(r) or expired(r)) or \
                    not a.from_slice <= r["slice"] <= a.to_slice:
                continue
            if top is not None and r["slice"] > top + 1:
                if r["missed"] < r["slice"] - top - 1:
                    uncounted += 1
                    if uncounted <= 3:
                        diag("node%d: slice %d after %d, missed %d, flags "
                             "%s" % (n, r["slice"], top, r["missed"],
                                     r["flags"]))
                if "O" in r["flags"]:
                    held.update(range(top + 1, r["slice"]))
            top = r["slice"] if top is None else max(top, r["slice"])
        for prev, cur in zip(ordered, ordered[1:]):
            gap = cur - prev - 1
            if gap <= 0:
                continue
            gaps += gap
            run = 0
            for s in range(prev + 1, cur):
                if s in held:
                    run = 0
                    continue
                if s in master and master[s]["row"] != per[prev]["row"] \
                        and not idle(per[prev]):
                    wrong_slices += 1
                    run += 1
            longest = max(longest, run)
        diag("node%d: %d slices without a strobe in the window (%d passed "
             "over held up), %d of them in a wrong row (longest run %d); %d "
             "strobes arrived after their deadline" % (
                 n, gaps, len(held), wrong_slices, longest,
                                 sum(1 for s in per if per[s]["strobe_ns"] >
                                     per[s]["deadline_ns"])))
        # The checks above mean something only if the node followed the
        # master through the window (and, where asked, lost some strobes:
        # a slice with no record, or one a prediction switched).
        check(len(per) >= 0.8 * len(span) and
              gaps + predicted >= a.min_gaps,
              "node%d: switched in %d of the master's %d slices, %d of them "
              "predicted, and missed %d (lost strobes: at least %d)" % (
                  n, len(per), len(span), predicted, gaps, a.min_gaps))
        if gaps:
            check(uncounted == 0, "node%d: every gap in slice numbers was "
                  "counted as missed by bcs.ko" % n)
        if a.max_run is not None:
            check(longest <= a.max_run, "node%d: never in a wrong row for "
                  "more than %d slice(s) in a row (longest %d)"
                  % (n, a.max_run, longest))
        if a.maps:
            map_check(a, n, per, master, mhist, nhist, held)


def map_check(a, n, per, master, mhist, nhist, held):
    """No slice in which node n ran a job that the master's map for that
    slice does not put in the row the master ran, for more than
    a.max_map_run slices in a row.  A slice without a record here kept the
    row before it, with the node's map of the master's switch time."""
    check(nhist is not None, "node%d's bcsd kept the maps it applied" % n)
    if nhist is None:
        return
    wrong = longest = run = changes = 0
    row = None
    seen = set()
    for s in sorted(master):
        if s in per:
            row, t = per[s]["row"], per[s]["switch_start_ns"]
            if expired(per[s]):
                row = -1  # no gang
        else:
            t = master[s]["switch_start_ns"]
        if s in held:
            run = 0
            continue
        mine, theirs = map_at(nhist, t), master_map_of(mhist, s)
        if row is None or mine is None or theirs is None:
            run = 0
            continue
        seen.add(tuple(sorted(theirs.items())))
        want = master[s]["row"]
        bad = [j for j, r in mine.items()
               if r == row and theirs.get(j) != want]
        if bad:
            wrong += 1
            run += 1
            longest = max(longest, run)
        else:
            run = 0
    changes = len(seen)
    diag("node%d: %d slice(s) ran a job the master's map did not put in "
         "that row (longest run %d); %d maps of the master in the window"
         % (n, wrong, longest, changes))
    check(changes >= a.min_maps, "the master's map changed in the window "
          "(%d maps, at least %d)" % (changes, a.min_maps))
    check(longest <= a.max_map_run, "node%d: never ran a gang that the "
          "master's map does not put in that row for more than %d slice(s) "
          "in a row (longest %d)" % (n, a.max_map_run, longest))


def mpi(a):
    """One MPI job launched as "mpirun ... bcsctl run --job J -- mpi_barrier"
    against the snapshot DIR taken while it ran (with nodeN.threads.json,
    each attached process's thread count from /proc at that moment)."""
    with open(a.output) as f:
        text = f.read()
    head = re.search(r"^mpi_barrier: size (\d+) iters (\d+) .*check (\w+)",
                     text, re.M)
    ranks = [(int(r), h, int(p), int(t)) for r, h, p, t in re.findall(
        r"^rank (\d+) host (\S+) pid (\d+) threads (-?\d+)$", text, re.M)]
    check(head is not None and head.group(3) == "ok" and
          int(head.group(1)) == a.np and len(ranks) == a.np,
          "job %d: all %d ranks computed the right sums (%s)" % (
              a.job, a.np, head.group(0) if head else "no result line"))
    if not head:
        for line in text.splitlines()[-8:]:
            diag("  " + line)
    per_node = {}
    for r, host, pid, _ in ranks:
        m = re.fullmatch(r"node(\d+)", host)
        node = int(m.group(1)) if m else None
        per_node[node] = per_node.get(node, 0) + 1
        tasks = [t for t in load(a.dir, node, "tasks")
                 if t["tgid"] == pid] if node else []
        threads = load(a.dir, node, "threads").get(str(pid)) if node else 0
        check(tasks and all(t["job"] == a.job for t in tasks) and
              len(tasks) == threads,
              "job %d rank %d (%s pid %d): its %s threads all attached to "
              "job %d (%d attached)" % (a.job, r, host, pid, threads, a.job,
                                        len(tasks)))
        run = sum(t["run_ns"] for t in tasks)
        parks = sum(t["parks"] for t in tasks)
        check(run > 0 and parks > 0,
              "job %d rank %d: ran (%.0f ms) and was parked (%d times) "
              "between the other gangs' slices" % (a.job, r, run / 1e6,
                                                   parks))
    nodes = nodes_of(a.dir)
    check(sorted(per_node) == nodes and
          len(set(per_node.values())) == 1,
          "job %d: mpirun placed the ranks evenly on every node (%s)" % (
              a.job, ", ".join("node%s: %d" % kv
                               for kv in sorted(per_node.items(),
                                                key=lambda kv: str(kv[0])))))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("coherence")
    c.add_argument("dir")
    c.add_argument("--from-slice", type=int, default=0)
    c.add_argument("--jobs", default="")
    c.add_argument("--min", type=int, default=10)
    c.add_argument("--nodes", type=int, default=0)
    c.add_argument("--skew-out", default="")
    c.add_argument("--lead-us", type=int, default=0)
    # Share of its slices each node must have switched in with the others
    # (0: not checked), and slices that must have run a gang on every node.
    c.add_argument("--min-share", type=float, default=0.8)
    c.add_argument("--min-compared", type=int, default=0)
    c = sub.add_parser("tasks")
    c.add_argument("dir")
    c.add_argument("--pids", required=True)
    c = sub.add_parser("running")
    c.add_argument("dir1")
    c.add_argument("dir2")
    c.add_argument("--pids", required=True)
    c = sub.add_parser("loss")
    c.add_argument("dir")
    c.add_argument("--master", type=int, required=True)
    c.add_argument("--from-slice", type=int, required=True)
    c.add_argument("--to-slice", type=int, required=True)
    c.add_argument("--min-gaps", type=int, default=1)
    c.add_argument("--max-run", type=int, default=None)
    c.add_argument("--maps", action="store_true",
                   help="check each slice's gang against the master's map")
    c.add_argument("--min-maps", type=int, default=1)
    c.add_argument("--max-map-run", type=int, default=1)
    c = sub.add_parser("mpi")
    c.add_argument("dir")
    c.add_argument("--job", type=int, required=True)
    c.add_argument("--np", type=int, required=True)
    c.add_argument("--output", required=True)
    a = p.parse_args()
    # Data that cannot be read or makes no sense fails the test: a crash
    # or an analysis that checked nothing must not pass.
    try:
        {"coherence": coherence, "tasks": tasks, "running": running,
         "loss": loss, "mpi": mpi}[a.cmd](a)
    except Exception as e:
        check(False, "analyse.py %s: %s: %s" % (a.cmd, type(e).__name__, e))
        return 2
    if not checks:
        check(False, "analyse.py %s: nothing to check" % a.cmd)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

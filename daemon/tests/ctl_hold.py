#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold bcsd's control socket as a user would who tries to lock others out.

  ctl_hold.py SOCKET COUNT TIMEOUT_MS OUT

Opens COUNT connections to SOCKET, asks on each to wait TIMEOUT_MS for a
job that never comes, and writes to OUT, once every connection has had a
second to be answered, a line "held H answered A" (H still waiting, A
answered or closed at once) and the messages of the answers.  Then keeps
the waiting connections open until killed, or for 120 s at most.
"""
import json
import os
import select
import socket
import sys
import time


def main():
    path, count, timeout, out = sys.argv[1], int(sys.argv[2]), \
        int(sys.argv[3]), sys.argv[4]
    conns = []
    for _ in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # A full backlog: bcsd accepts one connection per wake-up.
        for _ in range(1000):
            try:
                s.connect(path)
                break
            except BlockingIOError:
                time.sleep(0.01)
        req = {"cmd": "job-wait", "job": 2000000000, "timeout_ms": timeout}
        try:
            s.send(json.dumps(req).encode())
        except OSError:
            pass
        conns.append(s)
    answers = []
    end = time.monotonic() + 1.0
    pending = list(conns)
    while pending and time.monotonic() < end:
        ready, _, _ = select.select(pending, [], [],
                                    max(0.0, end - time.monotonic()))
        for s in ready:
            pending.remove(s)
            try:
                buf = s.recv(65536)
            except OSError as e:
                buf = b""
                answers.append("error %s" % e)
            if buf:
                answers.append(json.loads(buf).get("message", "ok"))
            elif not answers or not answers[-1].startswith("error"):
                answers.append("closed")
            s.close()
    held = pending
    with open(out + ".tmp", "w") as f:
        f.write("held %d answered %d\n" % (len(held), len(answers)))
        for a in sorted(set(answers)):
            f.write("%d x %s\n" % (answers.count(a), a))
    os.rename(out + ".tmp", out)
    time.sleep(120)
    return 0


if __name__ == "__main__":
    sys.exit(main())

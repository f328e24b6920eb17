#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Capture and inject bcsd datagrams (Documentation/wire-protocol.rst).

  bcsp-inject.py capture FILE [--type T] [--sender S]   save one datagram
  bcsp-inject.py send KIND FILE COUNT                    send COUNT bad ones
  bcsp-inject.py sign KEYFILE --type T --epoch E --sender S
                                  send one datagram signed with the key

KIND: forged (a strobe tagged with a random key), replay (FILE as it is),
truncated (FILE cut short: alternately one byte less and 40 bytes),
version (FILE with the next version), flood (forged strobes as fast as this
process can send them, for COUNT seconds).  Options --group, --port, --ifaddr name the
cluster's group and this node's address on the cluster network.

sign makes a datagram of the fields given, authenticated with the cluster
key in KEYFILE (as bcsd --genkey writes it), as a key holder that does not
check what it sends would: a report of no job (type 5) or a strobe of row
0 due a few milliseconds from now (type 1).
"""
import argparse
import hashlib
import hmac
import os
import socket
import struct
import sys
import time

HDR = struct.Struct(">IBBHIIIHHQ")
MAGIC = 0x42435350
# BCSP_VERSION of daemon/proto/proto.h; a forged datagram copies the real one's.
VERSION = 4


def group_socket(args, bind):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ifaddr = socket.inet_aton(args.ifaddr)
    if bind:
        s.bind(("", args.port))
        mreq = socket.inet_aton(args.group) + ifaddr
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, ifaddr)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    return s


def capture(args):
    s = group_socket(args, True)
    end = time.monotonic() + args.timeout
    while time.monotonic() < end:
        s.settimeout(max(0.1, end - time.monotonic()))
        try:
            buf, _ = s.recvfrom(2048)
        except socket.timeout:
            break
        if len(buf) < HDR.size:
            continue
        f = HDR.unpack_from(buf)
        if f[0] != MAGIC or f[2] != args.type:
            continue
        if args.sender and f[6] != args.sender:
            continue
        with open(args.file, "wb") as out:
            out.write(buf)
        print("captured type %d from %d epoch %d seq %d, %d bytes"
              % (f[2], f[6], f[5], f[9], len(buf)))
        return 0
    print("nothing captured")
    return 1


def forged(real):
    f = HDR.unpack_from(real)
    body = struct.pack(">QQQIIII", 1 << 40, time.time_ns(), 100000000,
                       1, 1, 2, 0)
    hdr = HDR.pack(MAGIC, f[1], 1, HDR.size + len(body) + 32, f[4], f[5] + 1,
                   f[6], f[7], 0, time.time_ns())
    key = os.urandom(32)
    return hdr + body + hmac.new(key, hdr + body, hashlib.sha256).digest()


def flood(args, real, s):
    """Forged strobes, as fast as they go, for args.count seconds."""
    pool = [forged(real) for _ in range(256)]
    to = (args.group, args.port)
    sent = dropped = 0
    end = time.monotonic() + args.count
    while time.monotonic() < end:
        for d in pool:
            try:
                s.sendto(d, to)
                sent += 1
            except OSError:
                dropped += 1    # ENOBUFS: the sender's queue is full
    print("sent %d flood datagrams in %d s (%d not queued)"
          % (sent, args.count, dropped))
    return 0


def send(args):
    with open(args.file, "rb") as f:
        real = f.read()
    s = group_socket(args, False)
    if args.kind == "flood":
        return flood(args, real, s)
    for i in range(args.count):
        if args.kind == "forged":
            d = forged(real)
        elif args.kind == "replay":
            d = real
        elif args.kind == "truncated":
            d = real[:-1] if i % 2 == 0 else real[:40]
        elif args.kind == "version":
            d = real[:4] + bytes([(real[4] + 1) & 0xff]) + real[5:]
        else:
            print("unknown kind %s" % args.kind)
            return 2
        s.sendto(d, (args.group, args.port))
        time.sleep(0.05)
    print("sent %d %s datagrams" % (args.count, args.kind))
    return 0


def sign(args):
    with open(args.keyfile) as f:
        key = bytes.fromhex(f.read().strip())
    if args.type == 1:
        body = struct.pack(">QQQIIII", 1, time.time_ns() + 3000000,
                           10000000, 0, 1, 1, 0)
    elif args.type == 5:
        body = struct.pack(">I", 0)
    else:
        print("sign: type %d not supported" % args.type)
        return 2
    hdr = HDR.pack(MAGIC, VERSION, args.type, HDR.size + len(body) + 32,
                   args.cluster, args.epoch, args.sender, args.priority, 0,
                   time.time_ns())
    d = hdr + body + hmac.new(key, hdr + body, hashlib.sha256).digest()
    s = group_socket(args, False)
    s.sendto(d, (args.group, args.port))
    print("sent type %d epoch %#x from %d" % (args.type, args.epoch,
                                              args.sender))
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--group", default="239.255.66.83")
    p.add_argument("--port", type=int, default=5399)
    p.add_argument("--ifaddr", required=True)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("file")
    c.add_argument("--type", type=int, default=1)
    c.add_argument("--sender", type=int, default=0)
    c.add_argument("--timeout", type=float, default=10)
    c = sub.add_parser("send")
    c.add_argument("kind")
    c.add_argument("file")
    c.add_argument("count", type=int)
    c = sub.add_parser("sign")
    c.add_argument("keyfile")
    c.add_argument("--type", type=int, default=5)
    c.add_argument("--epoch", type=lambda v: int(v, 0), required=True)
    c.add_argument("--sender", type=int, required=True)
    c.add_argument("--priority", type=int, default=0)
    c.add_argument("--cluster", type=int, default=1)
    args = p.parse_args()
    return {"capture": capture, "send": send, "sign": sign}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())

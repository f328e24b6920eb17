#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd's messages with "log syslog": they go to /dev/log, none to stderr,
# as the facility daemon with the ident bcsd and its pid, an error at the
# error level; with the default "log stderr" none goes to /dev/log.
#
# Each daemon runs in a mount and network namespace of its own (unshare),
# with a tmpfs over /dev holding the few device nodes it needs and a
# datagram socket at /dev/log whose every message a listener (python3)
# writes to a file; the host's /dev and syslog are never touched.  The
# daemons are in the master role on the namespace's loopback, needing no
# module.  Needs root (unshare, mount); skips otherwise.  Every wait is
# bounded.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
BCSD=${BCS_TEST_BCSD:-$(pwd)/bcsd}
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

. "$top/scripts/check-lib.sh"

if [ "$(id -u)" != 0 ] || ! unshare --mount --net true 2> /dev/null ||
   ! command -v python3 > /dev/null; then
	echo "test_syslog: SKIP: needs root, unshare and python3"
	echo "test_syslog: 0 passed, 0 failed"
	exit 0
fi

"$BCSD" --genkey "$TMP/key" > /dev/null || exit 1
cp "$TMP/key" "$TMP/open.key" && chmod 0644 "$TMP/open.key" || exit 1

cat > "$TMP/listen.py" << 'EOF'
# A stand-in syslog: every datagram to /dev/log, one line each, to argv[1].
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
os.chmod("/dev/log", 0o666)
s.settimeout(60)
with open(sys.argv[1], "ab", buffering=0) as f:
    f.write(b"listening\n")
    while True:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        f.write(d.rstrip(b"\0\n") + b"\n")
EOF

# In the namespaces: /dev of our own, the listener at /dev/log, bcsd with
# the options given until it has logged "started:" (or exited), then
# SIGTERM.  $TMP/syslog gets the listener's lines, $TMP/stderr bcsd's
# stderr, $TMP/pid its pid, $TMP/rc its exit status.
cat > "$TMP/run.sh" << 'EOF'
set -u
tmp=$1
bcsd=$2
shift 2
mount -t tmpfs -o mode=0755 bcs-test-dev /dev || exit 1
mknod -m 0666 /dev/null c 1 3 && mknod -m 0666 /dev/zero c 1 5 &&
	mknod -m 0666 /dev/random c 1 8 && mknod -m 0666 /dev/urandom c 1 9 ||
	exit 1
ip link set lo up || exit 1
python3 "$tmp/listen.py" "$tmp/syslog" &
lpid=$!
for _ in $(seq 100); do
	grep -q '^listening$' "$tmp/syslog" 2> /dev/null && break
	sleep 0.1
done
"$bcsd" --role=master --node_id=7 --interface=lo --rt_priority=0 \
	--control_socket= --slice_us=10000 "$@" 2> "$tmp/stderr" &
bpid=$!
echo $bpid > "$tmp/pid"
for _ in $(seq 100); do
	grep -q 'started:' "$tmp/syslog" "$tmp/stderr" && break
	kill -0 $bpid 2> /dev/null || break
	sleep 0.1
done
kill -TERM $bpid 2> /dev/null
wait $bpid
echo $? > "$tmp/rc"
# Let the listener take the last messages, then stop it.
for _ in $(seq 20); do
	grep -q 'stopped$' "$tmp/syslog" && break
	sleep 0.1
done
kill $lpid
wait $lpid 2> /dev/null
exit 0
EOF

# run OPTION...: one daemon, as above, from empty files.
run()
{
	rm -f "$TMP/syslog" "$TMP/stderr" "$TMP/pid" "$TMP/rc"
	timeout 60 unshare --mount --net --propagation private \
		bash "$TMP/run.sh" "$TMP" "$BCSD" "$@"
}

# syslog(3) sends "<PRI>Mmm dd hh:mm:ss IDENT[PID]: MESSAGE"; PRI is
# facility * 8 + level: daemon (3) with notice (5) is 29, with err (3) 27.
stamp='[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}'

# --- log syslog: the notices of a start and a stop ---
run --key_file="$TMP/key" --log=syslog
pid=$(cat "$TMP/pid" 2> /dev/null)
sed 's/^/# syslog: /' "$TMP/syslog"
grep -Eq "^<29>$stamp bcsd\[$pid\]: started: role master, node 7," \
	"$TMP/syslog"
check $? "log syslog: 'started' reaches /dev/log as daemon.notice from bcsd[$pid]"
grep -Eq "^<29>$stamp bcsd\[$pid\]: stopped$" "$TMP/syslog"
check $? "log syslog: 'stopped' at SIGTERM too"
[ "$(cat "$TMP/rc")" = 0 ] && [ ! -s "$TMP/stderr" ]
check $? "log syslog: exit 0, nothing on stderr ($(head -c 200 "$TMP/stderr"))"

# --- log syslog: an error at the error level ---
run --key_file="$TMP/open.key" --log=syslog
pid=$(cat "$TMP/pid" 2> /dev/null)
sed 's/^/# syslog: /' "$TMP/syslog"
grep -Eq "^<27>$stamp bcsd\[$pid\]: cluster key: .*open.key" "$TMP/syslog"
check $? "log syslog: a key others may read is refused as daemon.err"
[ "$(cat "$TMP/rc")" != 0 ] && [ ! -s "$TMP/stderr" ]
check $? "log syslog: bcsd fails (exit $(cat "$TMP/rc")), nothing on stderr"

# --- the default, log stderr: nothing goes to /dev/log ---
run --key_file="$TMP/key"
grep -q 'bcsd\[[0-9.]*\]: started: role master' "$TMP/stderr" &&
	! grep -q 'bcsd' "$TMP/syslog"
check $? "log stderr: messages on stderr, none to /dev/log"

checks_done test_syslog

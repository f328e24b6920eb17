#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd's systemd unit, daemon/bcsd.service, as `make install` writes it
# (ExecStart= the bcsd built here): `systemd-analyze verify` finds nothing
# to say; `systemd-analyze security --offline=yes` rates its exposure at
# most 3.5 (Documentation/admin-guide.rst, "The service", has the
# figure); it is Type=notify with a watchdog, reloads with SIGHUP, starts
# before slurmd and after time-sync.target, and loads bcs.ko only in a
# way that cannot fail on a head node without it.  No root needed; skips
# without systemd-analyze.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_unit
UNIT=bcsd.service
# In tenths: systemd-analyze says 3.5, --threshold takes 35.
THRESHOLD=35

. "$top/scripts/check-lib.sh"

if ! command -v systemd-analyze > /dev/null; then
	echo "$NAME: SKIP: needs systemd-analyze"
	echo "0 passed, 0 failed"
	exit 0
fi
if [ ! -x bcsd ]; then
	echo "$NAME: SKIP: needs bcsd (make -C daemon)"
	echo "0 passed, 0 failed"
	exit 0
fi
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
sed "s|/usr/local/sbin/bcsd|$(pwd)/bcsd|" "$UNIT" > "$TMP/$UNIT"

out=$(systemd-analyze verify --man=no "$TMP/$UNIT" 2>&1)
rc=$?
[ -n "$out" ] && echo "$out" | sed 's/^/# /'
[ "$rc" = 0 ] && [ -z "$out" ]
check $? "systemd-analyze verify: nothing to say"

out=$(systemd-analyze security --offline=yes --threshold="$THRESHOLD" \
	"$TMP/$UNIT" 2>&1)
rc=$?
echo "# $(echo "$out" | grep "Overall exposure")"
check $rc "systemd-analyze security: exposure at most 3.5"

# key: the value of directive KEY in the unit (the last one).
key()
{
	sed -n "s/^$1=//p" "$UNIT" | tail -1
}
[ "$(key Type)" = notify ] && [ -n "$(key WatchdogSec)" ] &&
	[ "$(key ExecReload)" = '/bin/kill -HUP $MAINPID' ]
check $? "Type=notify, WatchdogSec=, ExecReload= sends SIGHUP"
[[ " $(key Before) " == *" slurmd.service "* ]] &&
	[[ " $(key After) " == *" time-sync.target "* ]] &&
	! grep -q "chrony" <(grep -v '^#' "$UNIT")
check $? "before slurmd, after time-sync.target (no time daemon named)"
out=$(grep "^ExecStartPre=" "$UNIT" | grep "modprobe")
[ -z "$out" ] || [[ $out == ExecStartPre=-* || $out == ExecStartPre=+-* ]]
check $? "loading bcs.ko may fail: a master-only head node has no module ($out)"

checks_done "$NAME"

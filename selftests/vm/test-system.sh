#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-system.sh [--kernel REL]: run-vm.sh --system, checked.  One guest
# boots with systemd as PID 1 on the overlay root and checks, from its
# command unit: PID 1 is systemd, the root is an overlay and writable,
# the host name is the guest's, no unit this machine has enabled runs (the
# guest boots bcs-vm.target), the timers are masked, a unit can be
# started (a transient one, systemd-run); then exits 42.  Here: the exit
# status came back (42), and nothing the guest wrote is on this machine.
# Ends with "test-system: N passed, N failed"; exits non-zero if anything
# failed.

set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib.sh"
. "$top/scripts/check-lib.sh"
kernel=6.1
[ "${1:-}" != --kernel ] || kernel=$2

out=$BUILD/vm/test-system
mark=/var/tmp/bcs-test-system.$$
# shellcheck disable=SC2016 # expanded in the guest
"$top/selftests/vm/run-vm.sh" --kernel "$kernel" --system --quiet \
	--timeout 600 --append bcs_hostname=bcs-system --out "$out" -- \
	bash -c '
	fail() { echo "test-system: FAIL: $*"; exit 1; }
	[ "$(cat /proc/1/comm)" = systemd ] || fail "PID 1 is $(cat /proc/1/comm)"
	[ "$(findmnt -n -o FSTYPE /)" = overlay ] || fail "/ is not an overlay"
	echo guest > '"$mark"' || fail "/var/tmp not writable"
	[ "$(hostname)" = bcs-system ] || fail "host name $(hostname)"
	for u in $(ls /etc/systemd/system/multi-user.target.wants/ 2>/dev/null); do
		! systemctl -q is-active "$u" || fail "$u runs"
	done
	[ "$(systemctl is-enabled timers.target 2>&1)" = masked ] || fail "timers.target not masked"
	systemd-run --wait -q -p Type=oneshot /bin/true || fail "systemd-run"
	echo "test-system: all checks passed"
	exit 42' > "$out.log" 2>&1
rc=$?
grep -h '^test-system:' "$out/console.log" 2>/dev/null | sed 's/^/# /'
[ $rc = 42 ]
check $? "run-vm.sh --system: the guest's checks passed and its exit status came back (rc=$rc)"
[ ! -e "$mark" ]
check $? "nothing the guest wrote reached this machine ($mark)"
rm -f "$mark"
checks_done test-system

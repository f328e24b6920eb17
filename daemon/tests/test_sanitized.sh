#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole-daemon tests again, on bcsd and bcsd-sim built with
# AddressSanitizer and UBSan ($BCS_ASAN_BCSD, $BCS_ASAN_SIM: make -C daemon
# test-asan): test_daemons.sh and test_syslog.sh (bcsd), test_sim.sh,
# test_tree_sim.sh (64 daemons), test_takeover_tree.sh, test_attach.sh,
# test_probe.sh, test_metrics.sh and test_reload.sh (bcsd-sim), each with
# its own checks, while every daemon
# writes what ASan finds to a file of its own; UBSan writes to the
# daemon's stderr, its log, which the tests keep here for the check
# (BCS_TEST_KEEP_LOGS; test_syslog.sh does not: a daemon it runs that
# stops on undefined behaviour fails its checks).  A bad access or undefined
# behaviour stops the daemon with a report; a leak is reported when it
# exits (LeakSanitizer, on SIGTERM at the end of each test).
#
# Then the checks: each test passed; the daemons exited through the
# sanitizers' exit (each writes its exit statistics, atexit=1: proof that
# the leak check ran, not a daemon killed before it could); and no report
# of an error, a leak or undefined behaviour.
#
# Skips without both; each test skips as it does alone (root).

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
NAME=test_sanitized

. "$top/scripts/check-lib.sh"

sim=${BCS_ASAN_SIM:-}
bcsd=${BCS_ASAN_BCSD:-}
if [ ! -x "$sim" ] || [ ! -x "$bcsd" ]; then
	echo "$NAME: SKIP: needs bcsd and bcsd-sim built with the sanitizers (make -C daemon test-asan)"
	echo "0 passed, 0 failed"
	exit 0
fi
logs=$(mktemp -d) || exit 1
trap 'rm -rf "$logs"' EXIT

for t in test_daemons test_syslog test_sim test_tree_sim test_takeover_tree \
	 test_attach test_probe test_metrics test_reload; do
	mkdir "$logs/$t"
	BCS_TEST_BCSD=$bcsd BCS_TEST_BCSD_SIM=$sim \
	ASAN_OPTIONS="log_path=$logs/$t/asan:atexit=1:detect_leaks=1" \
	UBSAN_OPTIONS=print_stacktrace=1 BCS_TEST_KEEP_LOGS="$logs/$t" \
		"tests/$t.sh" > "$logs/$t.out" 2>&1
	rc=$?
	grep -E "^FAIL|SKIP|^$t: [0-9]+ passed" "$logs/$t.out" | sed "s/^/# /"
	# Skipped whole ("NAME: SKIP: why"), not a case of it ("# SKIP: ..."),
	# which leaves the rest of the test to count.
	if grep -q "^$t: SKIP" "$logs/$t.out"; then
		echo "# $t skipped: $(grep -m1 "^$t: SKIP" "$logs/$t.out")"
		continue
	fi
	check "$rc" "$t on the sanitized daemons"
	exits=$(grep -l "AddressSanitizer exit stats" "$logs/$t"/asan.* 2>/dev/null | wc -l)
	[ "$exits" -ge 1 ]
	check $? "$t: its daemons exited through the sanitizers' leak check ($exits exits)"
	bad=$(grep -lE "ERROR: (Address|Leak)Sanitizer|runtime error:" \
		"$logs/$t"/* "$logs/$t.out" 2>/dev/null)
	for f in $bad; do
		echo "# $f:"
		grep -m1 -A30 -E "ERROR:|runtime error:" "$f" | sed 's/^/#   /'
	done
	[ -z "$bad" ]
	check $? "$t: no bad access, undefined behaviour or leak in any daemon ($(echo "$bad" | grep -c .) reports)"
done

checks_done "$NAME"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-in-guest.sh [MODULE.ko] [TEST...]
#
# Run the bcs selftests inside a test guest, as root: load bcs.ko
# (MODULE.ko, else $BCS_MODULE), check that /dev/bcs and /dev/bcsstat
# appear, run every test program (or the TESTs named, e.g. bcs_ioctl_test),
# print their KTAP output nested in one KTAP report, unload the module and
# check that the unload worked.  Exits non-zero if anything failed.
#
# Typically: selftests/vm/run-vm.sh --kernel 6.1 -- selftests/run-in-guest.sh
#
# Environment:
#   BCS_MODULE         path of bcs.ko (also used by tests that reload it)
#   BCS_MODULE_PARAMS  extra insmod parameters
#   BCS_TEST_DIR       directory of the test programs (default: next to
#                      this script if they are there, else $BUILD/selftests)
#   BCS_TEST_TIMEOUT   per-program limit in seconds (default 600)
#   BCS_FUZZ_SEED, BCS_FUZZ_ITERS, BCS_FUZZ_HUGE   read by bcs_badinput_test
#                      (give them with env: run-vm.sh ... -- env
#                      BCS_FUZZ_ITERS=50000 bash selftests/run-in-guest.sh)

set -u

here=$(cd "$(dirname "$0")" && pwd)
all_tests="bcs_ioctl_test bcs_inherit_test bcs_suspend_test
	bcs_standalone_test bcs_failopen_test bcs_perm_test bcs_badinput_test
	bcs_netlink_test bcs_settle_test bcs_driven_test bcs_dist_test
	bcs_events_test bcs_window_test bcs_plan_test bcs_cli_test.sh
	m32/bcs_ioctl_test m32/bcs_badinput_test m32/bcs_driven_test
	m32/bcs_standalone_test m32/bcs_dist_test m32/bcs_window_test
	m32/bcs_plan_test"

case ${1:-} in
*.ko) BCS_MODULE=$1; shift ;;
esac
export BCS_MODULE=${BCS_MODULE:-}
tests=${*:-$all_tests}
tmo=${BCS_TEST_TIMEOUT:-600}

say()
{
	echo "# run-in-guest: $*"
}

if [ "$(id -u)" != 0 ]; then
	say "must run as root (inside the test guest)"
	exit 2
fi

dir=${BCS_TEST_DIR:-}
if [ -z "$dir" ]; then
	for d in "$here" "${BUILD:-}/selftests" "$here/../build/selftests"; do
		if [ -x "$d/bcs_ioctl_test" ]; then
			dir=$d
			break
		fi
	done
fi
if [ -z "$dir" ]; then
	say "no test programs found: build them with 'make selftests'"
	exit 2
fi

if [ -z "$BCS_MODULE" ] || [ ! -r "$BCS_MODULE" ]; then
	say "bcs.ko not found (BCS_MODULE='$BCS_MODULE')"
	exit 2
fi
BCS_MODULE=$(cd "$(dirname "$BCS_MODULE")" && pwd)/$(basename "$BCS_MODULE")

# Kernel messages from here on are checked at the end.
klog_start=$(dmesg | wc -l)

if [ -d /sys/module/bcs ]; then
	say "bcs already loaded: unloading it first"
	rmmod bcs || exit 2
fi
# shellcheck disable=SC2086 # parameters are words on purpose
if ! insmod "$BCS_MODULE" ${BCS_MODULE_PARAMS:-}; then
	say "insmod $BCS_MODULE failed"
	exit 1
fi
for _ in $(seq 100); do
	[ -c /dev/bcs ] && [ -c /dev/bcsstat ] && break
	sleep 0.1
done
for n in /dev/bcs /dev/bcsstat; do
	if [ ! -c "$n" ]; then
		say "$n missing after insmod"
		rmmod bcs
		exit 1
	fi
done

# shellcheck disable=SC2086 # a list of names
set -- $tests
echo "TAP version 13"
echo "1..$(($# + 1))"
num=0
failed=0
sum_pass=0 sum_fail=0 sum_skip=0 sum_xfail=0 sum_xpass=0 sum_error=0
out=$(mktemp)
for t in "$@"; do
	num=$((num + 1))
	echo "# selftests: bcs: $t"
	# Programs are built into $dir; scripts stay next to this one.
	prog=$dir/$t
	[ -x "$prog" ] || prog=$here/$t
	if [ ! -x "$prog" ]; then
		echo "# $t: not built"
		echo "not ok $num selftests: bcs: $t # missing"
		failed=1
		continue
	fi
	# timeout signals the whole process group of a test that hangs.
	KSFT_TAP_LEVEL=1 timeout -k 10 "$tmo" "$prog" > "$out" 2>&1
	rc=$?
	sed 's/^/# /' "$out"
	totals=$(grep -E '^# Totals: ' "$out" | tail -n 1)
	for k in pass fail xfail xpass skip error; do
		v=$(printf '%s\n' "$totals" | sed -n "s/.* $k:\([0-9]*\).*/\1/p")
		eval "sum_$k=\$((sum_$k + ${v:-0}))"
	done
	case $rc in
	0)	echo "ok $num selftests: bcs: $t" ;;
	4)	# Every test of the program skipped: in this guest, which
		# has loaded bcs.ko itself, that hides whatever they test.
		echo "not ok $num selftests: bcs: $t # every test skipped"
		failed=1 ;;
	124|137)
		echo "not ok $num selftests: bcs: $t # TIMEOUT ${tmo}s"
		failed=1 ;;
	*)	echo "not ok $num selftests: bcs: $t # exit=$rc"
		failed=1 ;;
	esac
done
rm -f "$out"

# Unload: must work, and must leave nothing behind.
num=$((num + 1))
echo "# selftests: bcs: unload"
if rmmod bcs && [ ! -d /sys/module/bcs ] && [ ! -e /dev/bcs ]; then
	echo "ok $num selftests: bcs: unload"
else
	echo "# rmmod bcs failed or left the module or its devices behind"
	echo "not ok $num selftests: bcs: unload"
	failed=1
fi

# Problems the kernel reported while the tests ran.
bad='Oops|BUG:|WARNING:|Call Trace|general protection fault'
bad+='|turning off the locking correctness validator'
bad+='|possible circular locking|blocked for more than|soft lockup'
bad+='|rcu_.*stall|UBSAN|KASAN|refcount_t:|list_add corruption'
bad+='|list_del corruption|Slab cache still has objects'
if dmesg | tail -n +"$((klog_start + 1))" | grep -E "$bad" > /dev/null; then
	echo "# kernel log problems while testing:"
	dmesg | tail -n +"$((klog_start + 1))" | grep -E -A3 "$bad" |
		head -n 80 | sed 's/^/#   /'
	failed=1
fi

echo "# Totals: pass:$sum_pass fail:$sum_fail xfail:$sum_xfail" \
	"xpass:$sum_xpass skip:$sum_skip error:$sum_error"
if [ $failed = 0 ]; then
	echo "# bcs selftests: PASS"
else
	echo "# bcs selftests: FAIL"
fi
exit $failed

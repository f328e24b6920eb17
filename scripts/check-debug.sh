#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-debug`: bcs.ko's selftests in a debug kernel, where lockdep,
# KASAN, UBSAN, debug objects and kmemleak can report what Debian's stock
# kernels never would.  Not part of `make check` (the kernel build alone
# takes about ten minutes on two cores the first time; it is cached).
#
#   deps.sh, then scripts/debug-kernel.sh (build once, cached), user space
#   and the selftests, bcs.ko against the debug tree, then one guest that
#   runs selftests/debug-in-guest.sh: every selftest, a longer fuzz run,
#   a kmemleak scan.  Any kernel report fails the run (run-vm.sh scans the
#   guest's log for them).  Ends with "N passed, N failed".
#
# Environment:
#   BCS_VM_TIMEOUT         hard limit for the guest in seconds (default 5400)
#   BCS_DEBUG_FUZZ_SEEDS   further fuzz seeds (default 4)
#   BCS_DEBUG_FUZZ_ITERS   iterations per seed (default 20000)
#
# The selftests' waits for what the kernel does asynchronously are bounded
# at 120 s here (BCS_TEST_WAIT_MS) instead of 10 s, and the tests that send
# strobes ahead of their deadlines send them 12 times further ahead, 12
# times further apart (bt_slowdown()): every lock and access is checked,
# the kernel runs many times slower under TCG, and its timers strike late.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. "$top/scripts/lib.sh"

logdir=$BUILD/check-debug
started=$(date +%s)
pass=0
fail=0
mkdir -p "$logdir"

result()	# result RC NAME
{
	if [ "$1" = 0 ]; then
		pass=$((pass + 1))
		echo "ok $((pass + fail)) $2"
	else
		fail=$((fail + 1))
		echo "not ok $((pass + fail)) $2"
	fi
}

finish()
{
	echo "# check-debug: $(($(date +%s) - started))s, logs in $logdir"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}

step()		# step NAME LOG CMD...: fatal when it fails
{
	local name=$1 log=$2 rc
	shift 2
	echo "# ---- $name: $*"
	"$@" > "$log" 2>&1
	rc=$?
	[ $rc = 0 ] || tail -n 40 "$log" | sed 's/^/# /'
	result $rc "$name"
	[ $rc = 0 ] || finish
}

echo "TAP version 13"
step deps "$logdir/deps.log" scripts/deps.sh
step "debug kernel" "$logdir/kernel.log" scripts/debug-kernel.sh
sed 's/^/# /' "$logdir/kernel.log"
bcs_load_kernels || finish
rel=$BCS_KERNEL_DEBUG
step "build user space" "$logdir/build.log" \
	sh -c 'make -C libbcs && make -C tools && make -C daemon && make -C selftests'
step "build module $rel" "$logdir/module.log" \
	env BCS_KERNELS="$rel" scripts/build-modules.sh

out=$logdir/vm
echo "# ---- vm $rel (log in $logdir/vm.log)"
selftests/vm/run-vm.sh --kernel "$rel" --timeout "${BCS_VM_TIMEOUT:-5400}" \
	--mem 2048 --out "$out" --prefix "[debug] " -- \
	env BCS_DEBUG_FUZZ_SEEDS="${BCS_DEBUG_FUZZ_SEEDS:-4}" \
	BCS_DEBUG_FUZZ_ITERS="${BCS_DEBUG_FUZZ_ITERS:-20000}" \
	BCS_TEST_TIMEOUT=3600 BCS_TEST_WAIT_MS=120000 \
	bash selftests/debug-in-guest.sh > "$logdir/vm.log" 2>&1
rc=$?
grep -E '^\[debug\] (not )?ok [0-9]+ |^\[debug\] # kmemleak|^run-vm' \
	"$logdir/vm.log" | sed 's/^/# /'
result $rc "vm $rel: selftests, fuzz, kmemleak, kernel log"
finish

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# For host test scripts (sourced): count checks and end with the
# "NAME: N passed, N failed" line that make check looks for.

passed=0
failed=0

check()		# check STATUS TEXT: one check, passed if STATUS is 0
{
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "ok: $2"
	else
		failed=$((failed + 1))
		echo "FAIL: $2" >&2
	fi
}

checks_done()	# checks_done NAME: the totals line; fails if any check did
{
	echo "$1: $passed passed, $failed failed"
	[ "$failed" = 0 ]
}

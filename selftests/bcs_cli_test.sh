#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsctl against the loaded module, as root and as an ordinary user
# (nobody, through setpriv): exit statuses and messages for permission
# denied, no such job, no such process, and "run --create" by a user who
# may not create jobs.  Run by run-in-guest.sh as root, module loaded.
# Prints KTAP; exits 1 if anything failed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
bcsctl=${BCSCTL:-$here/../tools/bcsctl}
job=$((0x5a0000c1))
nojob=$((0x5a0000c2))
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"; "$bcsctl" job destroy $job > /dev/null 2>&1' EXIT

n=0
pass=0
fail=0
echo "TAP version 13"
echo "1..9"

# expect STATUS PATTERN TEXT CMD...: CMD exits STATUS and its output
# matches PATTERN (grep -E; empty: any output).
expect()
{
	local want=$1 pat=$2 text=$3 got
	shift 3
	n=$((n + 1))
	"$@" > "$tmp/out" 2>&1
	got=$?
	if [ "$got" = "$want" ] &&
	   { [ -z "$pat" ] || grep -Eq -- "$pat" "$tmp/out"; }; then
		echo "ok $n $text"
		pass=$((pass + 1))
	else
		echo "# exit $got (want $want), output:"
		sed 's/^/#   /' "$tmp/out" | head -n 5
		echo "not ok $n $text"
		fail=$((fail + 1))
	fi
}

user()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

if ! [ -x "$bcsctl" ] || ! command -v setpriv > /dev/null; then
	echo "# bcsctl ($bcsctl) or setpriv missing"
	echo "not ok 1 set-up"
	exit 1
fi
"$bcsctl" job destroy $job > /dev/null 2>&1
"$bcsctl" job destroy $nojob > /dev/null 2>&1

expect 0 '' "root creates job $job" \
	"$bcsctl" job create --id $job
expect 1 'ermission denied' "a user may not create a job" \
	user "$bcsctl" job create --id $nojob
expect 0 '^joined$' "a user's run --create joins the job that exists" \
	user "$bcsctl" run --job $job --create -- echo joined
expect 1 'job create.*ermission denied' \
	"a user's run --create of a missing job says why it failed" \
	user "$bcsctl" run --job $nojob --create -- echo joined
expect 1 '[Nn]o such job' "attach to a missing job" \
	"$bcsctl" job attach $nojob $$
# A pid that no process has: above pid_max.
expect 1 '[Nn]o such (process|task)' "attach a pid that does not exist" \
	"$bcsctl" job attach $job "$(($(cat /proc/sys/kernel/pid_max) + 1))"
expect 1 'ermission denied' "a user may not attach another user's process" \
	user "$bcsctl" job attach $job 1
expect 2 'usage|bad|invalid' "bad arguments are refused" \
	"$bcsctl" job attach $job notapid
expect 0 '' "root destroys job $job" \
	"$bcsctl" job destroy $job

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]

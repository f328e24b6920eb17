#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# agent.sh SHARE NODE
#
# The command of every guest of the cluster test bed (run-cluster.sh): sets
# the clock from the harness's NTP server, loads bcs.ko, then runs the
# command files the harness drops into SHARE/cmd/nodeNODE/ in name order,
# each with guest-lib.sh sourced, and leaves ID.out and ID.rc next to them
# (the harness then moves the three into done/, so that the directory
# holds only what is pending).
# Ends when SHARE/cmd/nodeNODE/quit appears, or after BCS_AGENT_LIMIT
# seconds (default 7200; the guest's own limit, run-cluster.sh --timeout,
# comes first).  Processes that commands leave running (bcsd, loads)
# survive from one command to the next.

set -u

share=$1
node=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$share/cmd/node$node
state=/tmp/bcs-cluster
limit=${BCS_AGENT_LIMIT:-7200}
export SHARE=$share NODE=$node STATE=$state CL_DIR=$here
mkdir -p "$state"

say()
{
	echo "agent[node$node]: $*"
}

# shellcheck source=guest-lib.sh
. "$here/guest-lib.sh"

say "$(hostname) up; $(ip -4 -o addr show dev eth0 | awk '{ print $4 }')"
clock_sync > "$BCS_OUT/chrony.txt" 2>&1
say "clock: $(tail -n 1 "$BCS_OUT/chrony.txt")"

# The install test (run-cluster.sh --install) installs bcs itself.
if [ "$CL_INSTALL" = 1 ]; then
	:
elif ! install -m 0600 "$share/cluster.key" "$state/cluster.key" ||
   ! insmod "$BCS_MODULE"; then
	say "insmod $BCS_MODULE failed"
	echo "insmod failed" > "$share/ready-node$node"
	exit 1
fi
echo ok > "$share/ready-node$node"

# Forks are dear under TCG: the loop itself uses builtins only, and each
# command runs in a subshell of this shell (guest-lib.sh already loaded),
# under a watchdog that kills it after its "#timeout SEC" first line.
log=$BCS_OUT/agent.log
end=$((EPOCHSECONDS + limit))
while [ ! -e "$dir/quit" ] && [ "$EPOCHSECONDS" -lt "$end" ]; do
	ran=0
	for f in "$dir"/*.sh; do
		id=${f%.sh}
		[ -e "$id.rc" ] && continue
		# After the status: the harness moves ID.sh before ID.rc
		# (lib.sh), so a command answered since the listing is gone.
		[ -f "$f" ] || continue
		read -r first < "$f" || continue
		t=${first#\#timeout }
		case $t in
		''|*[!0-9]*) t=120 ;;
		esac
		t0=$EPOCHREALTIME
		(
			set +u
			cd "$BCS_SRC" || exit 125
			# shellcheck source=/dev/null
			. "$f"
		) > "$id.out" 2>&1 < /dev/null &
		cmd=$!
		(
			nap "$t"
			kill -9 "$cmd"
		) > /dev/null 2>&1 &
		dog=$!
		wait "$cmd"
		rc=$?
		kill "$dog" 2> /dev/null
		wait "$dog" 2> /dev/null
		# The harness reads the output once the status is there.
		echo "$rc" > "$id.rc"
		printf '%s %s %s %s\n' "${id##*/}" "$t0" "$EPOCHREALTIME" "$rc" >> "$log"
		ran=1
	done
	[ $ran = 1 ] || nap 0.2
done
[ -e "$dir/quit" ] || say "no quit after ${limit}s"

# Orderly end: bcsd resumes its gangs, then the loads go.
stop_all
say "done"
exit 0

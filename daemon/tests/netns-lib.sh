# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# For the host tests that run whole daemons in network namespaces
# (sourced, with scripts/check-lib.sh): the namespaces and their bridge,
# the cluster key, daemons each with a control socket, stats file and log
# of their own, their counters, and the removal of all of it at exit.
#
# The test sets, before sourcing:
#
#   NAME	its name, for the SKIP lines
#   BCSD	the daemon to run (bcsd or bcsd-sim)
#   NS		the prefix of its namespaces' names, unique (with $$)
#   NET		the first three octets of the bridge's subnet (netns_join)
#
# Sourcing makes $TMP, a directory, and sets the EXIT trap that ends
# every process in $pids, deletes every namespace in $nss and removes
# $TMP.  Daemon N has its pid in $TMP/pidN, messages in $TMP/logN,
# counters in $TMP/statsN.json and its control socket at $TMP/ctlN.

TMP=$(mktemp -d) || exit 1
pids=()		# processes to end at exit
nss=()		# namespaces to delete at exit

# netns_stop [TENTHS]: end every process in $pids, SIGTERM first, so
# that no shell's notice of a killed job comes out, SIGKILL for any still
# there after TENTHS tenths of a second (50); delete every namespace in
# $nss; both lists emptied.
# shellcheck disable=SC2120 # TENTHS: bench/tree_scale.sh gives it
netns_stop()
{
	local p

	{
		for p in "${pids[@]}"; do
			kill -TERM "$p"
		done
		for _ in $(seq "${1:-50}"); do
			kill -0 "${pids[@]}" || break
			sleep 0.1
		done
		for p in "${pids[@]}"; do
			kill -KILL "$p"
		done
		wait
	} 2>/dev/null
	for p in "${nss[@]}"; do
		ip netns del "$p" 2>/dev/null
	done
	pids=()
	nss=()
}

# netns_cleanup: the EXIT trap: netns_stop, then $TMP goes.
netns_cleanup()
{
	netns_stop
	# The daemons' messages, for a caller that reads them after
	# (test_sanitized.sh: UBSan writes only to stderr).
	[ -d "${BCS_TEST_KEEP_LOGS:-}" ] &&
		cp "$TMP"/log* "$BCS_TEST_KEEP_LOGS"/ 2>/dev/null
	rm -rf "$TMP"
}
trap netns_cleanup EXIT

# skip WHY: the test cannot run here; say why, with the totals line that
# make check looks for, and exit 0.
skip()
{
	echo "$NAME: SKIP: $1"
	echo "0 passed, 0 failed"
	exit 0
}

# netns_first NETNS: make the test's first namespace; skip if not root
# or if namespaces cannot be made.
netns_first()
{
	if [ "$(id -u)" != 0 ] || ! ip netns add "$1" 2>/dev/null; then
		skip "needs root and ip netns"
	fi
	nss+=("$1")
}

# netns_bridge: namespace $NS-br holding bridge br0, the first namespace
# (netns_first).
netns_bridge()
{
	netns_first "$NS-br"
	ip -n "$NS-br" link add br0 type bridge &&
		ip -n "$NS-br" link set br0 up || exit 1
}

# netns_join N...: for each N, namespace $NS-N with lo up and eth0 at
# $NET.N/24, a veth whose other end, pN, is on the bridge.
netns_join()
{
	local n

	for n; do
		ip netns add "$NS-$n" || exit 1
		nss+=("$NS-$n")
		ip -n "$NS-br" link add "p$n" type veth peer name eth0 \
				netns "$NS-$n" &&
			ip -n "$NS-br" link set "p$n" master br0 up &&
			ip -n "$NS-$n" addr add "$NET.$n/24" dev eth0 &&
			ip -n "$NS-$n" link set eth0 up &&
			ip -n "$NS-$n" link set lo up || exit 1
	done
}

# sim_setup N...: the set-up of the tests of bcsd-sim daemons each in a
# network namespace of its own: skip unless $BCSD and $BCSCTL are built;
# the bridge (netns_bridge), namespace $NS-N at $NET.N for each N
# (netns_join) and the cluster key $TMP/key.
sim_setup()
{
	[ -x "$BCSD" ] && [ -x "$BCSCTL" ] ||
		skip "needs $BCSD and $BCSCTL (make -C daemon sim, make -C tools)"
	netns_bridge
	netns_join "$@"
	genkey key
}

# loopback_setup N PORT0: the set-up of the tests of N bcsd-sim daemons
# in one namespace ($NS, lo up) on 127.0.0.1, node n at port PORT0 + n:
# the cluster key $TMP/key and the nodes file $TMP/nodes.
loopback_setup()
{
	local n

	netns_first "$NS"
	ip -n "$NS" link set lo up || exit 1
	genkey key
	for n in $(seq "$1"); do
		echo "$n 127.0.0.1:$(($2 + n))"
	done > "$TMP/nodes"
}

# genkey FILE: a new cluster key in $TMP/FILE.
genkey()
{
	"$BCSD" --genkey "$TMP/$1" > /dev/null || exit 1
}

# spawn N NETNS OPTION...: $BCSD with node id N in namespace NETNS, in the
# background, with the key $TMP/key (none on the command line if
# $SPAWN_KEY is 0: the configuration file's), its own control socket and
# stats file, verbose 1 and the OPTIONs (later ones win).  It does not
# wait for the daemon: see wait_started.
spawn()
{
	local n=$1 netns=$2 key=(--key_file="$TMP/key")

	[ "${SPAWN_KEY:-1}" = 0 ] && key=()
	shift 2
	ip netns exec "$netns" "$BCSD" --node_id="$n" "${key[@]}" \
		--control_socket="$TMP/ctl$n" --stats_file="$TMP/stats$n.json" \
		--verbose=1 "$@" > "$TMP/log$n" 2>&1 &
	echo $! > "$TMP/pid$n"
	pids+=($!)
}

# sim_start N ROLE [OPTION...]: bcsd-sim ($BCSD) with node id N and role
# ROLE in namespace $NS-N (netns_join), slices of 100 ms, its strobes in
# $TMP/strobesN and its jobs in $TMP/jobsN; back once it has started.
sim_start()
{
	local n=$1 role=$2

	shift 2
	BCS_SIM_LOG=$TMP/strobes$n spawn "$n" "$NS-$n" --role="$role" \
		--interface=eth0 --rt_priority=0 --slice_us=100000 \
		--report_ms=200 --stale_slices=20 --jobs_dir="$TMP/jobs$n" "$@"
	wait_started "$n"
}

# wait_started N: wait at most 5 s for daemon N to log "started:", its
# signal handlers in (a signal before then would kill it).
wait_started()
{
	for _ in $(seq 50); do
		grep -q "started:" "$TMP/log$1" && return 0
		sleep 0.1
	done
	echo "# node$1 did not start: $(cat "$TMP/log$1")"
}

# snap N: have daemon N write its counters (SIGUSR1) to $TMP/statsN.json;
# fails if it has not within 5 s.
snap()
{
	local f=$TMP/stats$1.json

	rm -f "$f"
	kill -USR1 "$(cat "$TMP/pid$1")" 2>/dev/null || return 1
	for _ in $(seq 50); do
		[ -s "$f" ] && return 0
		sleep 0.1
	done
	return 1
}

# val N KEY: counter KEY (a.b for nested ones) of the last snap of N; -1
# if there is none.
val()
{
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[k]
print(int(v))' "$TMP/stats$1.json" "$2" 2>/dev/null || echo -1
}

# until_stat N KEY OP VALUE SECONDS: wait for daemon N's counter KEY to
# compare so (test(1)'s OP) with VALUE, at most SECONDS.
until_stat()
{
	local end=$((SECONDS + $5))

	while [ "$SECONDS" -lt "$end" ]; do
		snap "$1"
		test "$(val "$1" "$2")" "$3" "$4" && return 0
		sleep 0.2
	done
	return 1
}

# until_is WANT CMD...: wait at most 10 s for CMD to print WANT.
until_is()
{
	local want=$1 end=$((SECONDS + 10))

	shift
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$("$@")" = "$want" ] && return 0
		sleep 0.2
	done
	return 1
}

# ctl N ARG...: bcsctl ARG... against daemon N's control socket, for at
# most 10 s; needs $BCSCTL.
ctl()
{
	local n=$1

	shift
	BCS_CONTROL_SOCKET=$TMP/ctl$n timeout 10 "$BCSCTL" "$@"
}

# job_field N JOB FIELD: FIELD of job JOB in daemon N's bcsctl job list
# --json ("-" if the job is not there).
job_field()
{
	ctl "$1" job list --json 2>/dev/null | python3 -c 'import json, sys
for j in json.load(sys.stdin)["jobs"]:
    if j["id"] == int(sys.argv[1]):
        print(j[sys.argv[2]]); break
else:
    print("-")' "$2" "$3" 2>/dev/null
}

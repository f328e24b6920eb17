#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-cluster.sh [options] [TEST...]
#
# The cluster test bed, three nodes unless --nodes says otherwise.  Makes
# a network namespace with a bridge, one tap per guest and the host side of
# the bridge at $CL_NET.254, runs an NTP server there (chronyd -x: it
# serves this machine's clock and never adjusts it), boots the qemu guests
# (selftests/vm/run-vm.sh) on the bridge at $CL_NET.1-N, which set their
# clocks from it, load bcs.ko and run agent.sh, and drives them through a
# directory they all share.  bcsd runs on every guest: node1 is the master
# (role both, priority 200), node2 a node, node3 a standby master (role
# both, priority 100).  Then it runs the tests, selftests/cluster/test-*.sh
# (default, in this order: coherence mpi auth flood loss restart failover
# partition lead stats matrix owner tree skew slurm plans), and prints TAP, each test's results nested
# under its line, and "N passed, N failed".  Exits non-zero if anything
# failed.  A TEST with a slash is the path of a script to run as a test.
#
# No traffic leaves the namespace; the namespace and everything started
# here go away on exit.  Needs root.  Output in $BUILD/cluster/.
#
# Options:
#   --kernel REL    guest kernel (default 6.1, or $BCS_CLUSTER_KERNEL)
#   --timeout SEC   hard limit for the guests (default 3540: all 13 tests
#                   took 1229 s on three guests of a quiet two-core host,
#                   the slurm test alone 1274 s on a loaded one)
#   --nodes N       2..9 guests (default 3); the tests need 3 (node3 is the
#                   standby master), a script TEST (the demo) any number
#   --install       the install test (test-install.sh, the only test then):
#                   the guests boot with systemd on a writable overlay
#                   (run-vm.sh --system) and nothing of this tree: no bcs.ko
#                   loaded, no bcsd started, no cluster key; the test
#                   installs the packages of $BUILD/deb (scripts/deb.sh)
#                   and sets the cluster up from them

set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/selftests/cluster
. "$top/scripts/lib.sh"

kernel=${BCS_CLUSTER_KERNEL:-6.1}
tmo=3540
nr_nodes=3
install=0
while [ $# -gt 0 ]; do
	case $1 in
	--install) install=1; shift ;;
	--kernel)  kernel=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	--nodes)   nr_nodes=$2; shift 2 ;;
	-h|--help) sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*)        echo "run-cluster: unknown option $1" >&2; exit 2 ;;
	*)         break ;;
	esac
done
tests=${*:-coherence mpi auth flood loss restart failover partition lead stats matrix owner tree skew slurm plans}
if [ $install = 1 ]; then
	[ $# = 0 ] || [ "$*" = install ] ||
		{ echo "run-cluster: --install runs the install test only" >&2; exit 2; }
	tests=install
fi
case $nr_nodes in
[2-9]) ;;
*) echo "run-cluster: --nodes 2..9, not '$nr_nodes'" >&2; exit 2 ;;
esac
if [ "$nr_nodes" != 3 ]; then
	for t in $tests; do
		case $t in
		*/*) ;;
		*) echo "run-cluster: test $t needs 3 nodes" >&2; exit 2 ;;
		esac
	done
fi

say()
{
	echo "# run-cluster: $*"
}

die()
{
	echo "run-cluster: $*" >&2
	exit 2
}

[ "$(id -u)" = 0 ] || die "must run as root (network namespace, taps)"
# chrony comes unpacked by scripts/deps.sh, not installed on this machine.
chronyd=$BCS_CACHE/chrony/usr/sbin/chronyd
chronyc=$BCS_CACHE/chrony/usr/bin/chronyc
for c in ip qemu-system-x86_64 tc /usr/bin/python3 "$chronyd" "$chronyc"; do
	command -v "$c" > /dev/null || die "$c missing: run scripts/deps.sh"
done
bcs_load_kernels || exit 2
rel=$(bcs_release "$kernel")
[ -n "$(bcs_kvar KDIR "$rel")" ] || die "unknown kernel $kernel"

started=$(date +%s)
# BCS_CLUSTER_OUT: another output directory, so that a demo run does not
# share its guests' command directories with a concurrent test run.
run=${BCS_CLUSTER_OUT:-$BUILD/cluster}
share=$run/share
# One run per output directory: a second would mix its commands with the
# first's in the guests' command directories.
mkdir -p "$(dirname "$run")" || die "cannot create $(dirname "$run")"
if other=$(cat "$run.pid" 2>/dev/null) && [ "$other" != $$ ] &&
   grep -qs run-cluster "/proc/$other/cmdline"; then
	die "run $other uses $run; stop it first"
fi
echo $$ > "$run.pid"
nodes=$(seq -s " " 1 "$nr_nodes")
net=10.77.0

# --- build what the guests run --------------------------------------------
# The install test: only the packages, which must have been built.
if [ $install = 1 ]; then
	ls "$BUILD"/deb/bcsd_*.deb > /dev/null 2>&1 ||
		die "no packages in $BUILD/deb: run scripts/deb.sh (make deb)"
else
# slurm: the SPANK plugin where spank.h is installed (test-slurm.sh).
for d in libbcs tools daemon slurm; do
	make -s -C "$top/$d" > "$run.build.log" 2>&1 ||
		{ cat "$run.build.log" >&2; die "make -C $d failed"; }
done
# The MPI test's program and libbcsmpi; that test says so if MPI is
# missing.
if command -v mpicc > /dev/null; then
	make -s -C "$top/bench" mpi > "$run.build.log" 2>&1 ||
		{ cat "$run.build.log" >&2; die "mpi_barrier did not build"; }
	make -s -C "$top/libbcsmpi" > "$run.build.log" 2>&1 ||
		{ cat "$run.build.log" >&2; die "libbcsmpi did not build"; }
fi
# Always: make rebuilds only what changed, and a stale bcs.ko would test
# old code.
BCS_KERNELS=$rel "$top/scripts/build-modules.sh" > "$run.build.log" 2>&1 ||
	{ cat "$run.build.log" >&2; die "bcs.ko for $rel did not build"; }
rm -f "$run.build.log"
fi

rm -rf "$run"
mkdir -p "$share/data"
for n in $nodes; do
	mkdir -p "$share/cmd/node$n/done" "$run/node$n"
done
# The install test makes its key with the installed bcsd.
[ $install = 1 ] ||
	"$top/daemon/bcsd" --genkey "$share/cluster.key" || die "no cluster key"
cat > "$share/config.sh" <<EOF
CL_NODES="$nodes"
CL_NET=$net
CL_NTP=$net.254
CL_CLUSTER=7
CL_GROUP=239.255.66.83
CL_PORT=5399
CL_SLICE_US=100000
CL_LEAD_US=30000
CL_WATCHDOG=30
CL_FAILOVER=60
CL_REPORT_MS=500
CL_MODDIR=$(bcs_kvar MODDIR "$rel")
CL_CHRONYD=$chronyd
CL_CHRONYC=$chronyc
CL_INSTALL=$install
CL_DEB=$BUILD/deb
CL_KREL=$rel
EOF

# --- network namespace, NTP server, guests ---------------------------------
ns=bcs-c$$
tmp=$(mktemp -d /tmp/bcs-cluster.XXXXXX)
chmod 700 "$tmp"
chrony_pid=""
vm_pids=()

cleanup()
{
	local p
	trap - EXIT INT TERM
	for n in $nodes; do
		[ -d "$share/cmd/node$n" ] && touch "$share/cmd/node$n/quit"
	done
	# run-vm.sh runs in its own session: stop it and its qemu together.
	for p in "${vm_pids[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null
	done
	[ -n "$chrony_pid" ] && kill "$chrony_pid" 2>/dev/null
	sleep 1
	# Anything left in the namespace was started here.
	for p in $(ip netns pids "$ns" 2>/dev/null); do
		kill -9 "$p" 2>/dev/null
	done
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
	rm -f "$run.pid"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Namespaces of earlier runs that were killed before cleaning up: what
# still runs in them (qemu, chronyd) was started by those runs.
for old in $(ip netns list | sed -n 's/^\(bcs-c[0-9][0-9]*\)\( .*\)\{0,1\}$/\1/p'); do
	kill -0 "${old#bcs-c}" 2>/dev/null && continue
	say "removing stale namespace $old"
	for p in $(ip netns pids "$old"); do
		kill -9 "$p"
	done
	ip netns del "$old"
done

ip netns add "$ns" || die "ip netns add $ns failed"
nsip()
{
	ip -n "$ns" "$@" || die "ip $* failed"
}
nsip link set lo up
nsip link add br0 type bridge mcast_snooping 0
nsip addr add "$net.254/24" dev br0
nsip link set br0 up
for n in $nodes; do
	ip netns exec "$ns" ip tuntap add dev "tap$n" mode tap ||
		die "tap$n: cannot create"
	nsip link set "tap$n" master br0
	nsip link set "tap$n" up
done

cat > "$tmp/chronyd.conf" <<EOF
local stratum 8
allow $net.0/24
bindaddress $net.254
cmdport 0
bindcmdaddress $tmp/chronyd.sock
pidfile $tmp/chronyd.pid
EOF
# -x: serve this machine's clock, never touch it.
ip netns exec "$ns" "$chronyd" -d -x -u root -f "$tmp/chronyd.conf" \
	> "$run/chronyd.log" 2>&1 &
chrony_pid=$!

echo "TAP version 13"
echo "1..$((2 - install + $(echo "$tests" | wc -w) + nr_nodes))"
say "kernel $rel, namespace $ns, output in $run"

num=0
total_fail=0
leaf_pass=0
leaf_fail=0
result()	# result STATUS TEXT [nested]: a top-level result
{
	num=$((num + 1))
	if [ "$1" = 0 ]; then
		echo "ok $num cluster: $2"
		[ -n "${3:-}" ] || leaf_pass=$((leaf_pass + 1))
	else
		echo "not ok $num cluster: $2"
		total_fail=$((total_fail + 1))
		[ -n "${3:-}" ] || leaf_fail=$((leaf_fail + 1))
	fi
}

# The install test: systemd on an overlay, room for DKMS and the units.
vm_mode=(--mem 512)
[ $install = 0 ] || vm_mode=(--mem 1024 --system)
for n in $nodes; do
	ip netns exec "$ns" setsid "$top/selftests/vm/run-vm.sh" \
		--kernel "$rel" --timeout "$tmo" --smp 1 "${vm_mode[@]}" \
		--out "$run/node$n" --share "$share" --prefix "[node$n] " \
		--append "bcs_ip=$net.$n/24 bcs_hostname=node$n" \
		--qemu-arg -netdev \
		--qemu-arg "tap,id=net0,ifname=tap$n,script=no,downscript=no" \
		--qemu-arg -device \
		--qemu-arg "virtio-net-pci,netdev=net0,mac=52:54:00:77:00:0$n" \
		-- bash selftests/cluster/agent.sh "$share" "$n" \
		> "$run/node$n.log" 2>&1 < /dev/null &
	vm_pids+=($!)
done

ready()
{
	local n
	for n in $nodes; do
		[ -e "$share/ready-node$n" ] || return 1
	done
}
end=$(($(date +%s) + 600))
while ! ready && [ "$(date +%s)" -lt "$end" ]; do
	# A guest that died early ends the wait.
	for p in "${vm_pids[@]}"; do
		kill -0 "$p" 2>/dev/null || end=0
	done
	sleep 1
done
rc=0
for n in $nodes; do
	st=$(cat "$share/ready-node$n" 2>/dev/null)
	[ "$st" = ok ] || rc=1
	say "node$n: ${st:-not ready}; $(grep -h '^clock:\|synchronised' \
		"$run/node$n/chrony.txt" 2>/dev/null | paste -sd ' ')"
done
if [ $install = 1 ]; then
	result $rc "$nr_nodes guests booted (systemd, overlay root), clocks set from $net.254"
else
	result $rc "$nr_nodes guests booted, clocks set from $net.254, bcs.ko loaded"
fi
export SHARE=$share CL_DIR=$here CL_NODES=$nodes
. "$here/lib.sh"

if [ $install = 1 ]; then
	:	# test-install.sh starts bcsd from its unit
elif [ $rc = 0 ]; then
	# The master first, so that the standby hears it before its
	# failover timeout.
	{
		on 1 'start_bcsd --role=both --priority=200' &&
		wait_until 30 eval '[ "$(status_of 1 master)" = "1 (this node)" ]' &&
		for n in $nodes; do
			case $n in
			1) ;;
			3) on 3 'start_bcsd --role=both --priority=100' ;;
			*) on "$n" 'start_bcsd --role=node' ;;
			esac || exit 1
		done &&
		wait_until 30 all_follow_master
	} > "$run/setup.log" 2>&1
	rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$run/setup.log"
fi
[ $install = 1 ] ||
	result $rc "bcsd on every node, node1 the master$([ "$nr_nodes" -lt 3 ] || echo ", node3 a standby")"
for t in $tests; do
	if [ $rc != 0 ]; then
		result 1 "$t: not run, no cluster"
		continue
	fi
	t0=$(date +%s)
	# A name with a slash is a script path (the cluster demo's hook).
	tf=$here/test-$t.sh
	case $t in
	*/*) tf=$t; t=$(basename "$t" .sh) ;;
	esac
	bash "$tf" > "$run/test-$t.tap" 2>&1
	trc=$?
	sed 's/^/    /' "$run/test-$t.tap"
	p=$(grep -c '^ok ' "$run/test-$t.tap")
	f=$(grep -c '^not ok ' "$run/test-$t.tap")
	leaf_pass=$((leaf_pass + p))
	leaf_fail=$((leaf_fail + f))
	# A test that died without a failed check is a failure too.
	[ "$trc" = 0 ] || [ "$f" != 0 ] || leaf_fail=$((leaf_fail + 1))
	result $trc "$t ($(($(date +%s) - t0))s)" nested
done

# Shut the guests down and check their kernel logs.
for n in $nodes; do
	touch "$share/cmd/node$n/quit"
done
i=0
for n in $nodes; do
	p=${vm_pids[$i]}
	i=$((i + 1))
	end=$(($(date +%s) + 120))
	while kill -0 "$p" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
		sleep 1
	done
	wait "$p"
	vrc=$?
	grep -h '^run-vm:' "$run/node$n.log" | sed 's/^/# /'
	result $vrc "guest node$n shut down cleanly, no kernel problems"
done
vm_pids=()

if [ -f "$share/skew.json" ]; then
	say "cross-node switch skew (coherence test): $(cat "$share/skew.json")"
fi
for n in $nodes; do
	say "node$n chrony at boot: $(sed -n 's/^clock: //p' "$run/node$n/chrony.txt" 2>/dev/null)"
done
say "total $(($(date +%s) - started))s"
echo "# Totals: pass:$leaf_pass fail:$leaf_fail xfail:0 xpass:0 skip:0 error:0"
echo "$leaf_pass passed, $leaf_fail failed"
[ "$total_fail" = 0 ] && [ "$leaf_fail" = 0 ]

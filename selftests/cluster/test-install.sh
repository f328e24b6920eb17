#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The install test (run-cluster.sh --install): bcs installed on three
# guests from its Debian packages only, as Documentation/install.rst says,
# task by task.  The guests run systemd on a writable overlay of this
# machine's root (run-vm.sh --system); nothing of the source tree is used
# but this harness (bcs.ko, bcsd, bcsctl, the plugin: all from the
# packages of CL_DEB, which scripts/deb.sh built).
#
#   0. bcs is not installed yet (else: skipped, with the reason);
#   1. dpkg -i of the packages on every node, offline: DKMS builds
#      bcs.ko for the guest's kernel (its headers are this machine's);
#   2. one cluster key, made on node1 (bcsd --genkey) and copied to every
#      node; the same on all;
#   3. bcsd.conf: node1 the master (role both), the others nodes;
#      systemctl restart bcsd, node1 first; every node follows node1, the
#      module the unit loaded is DKMS's;
#   4. munge with one key, slurm.conf, the packaged plugin in
#      plugstack.conf.d; slurmctld on node1 and slurmd everywhere started
#      from their units; every node idle;
#   5. a normal user's two srun --bcs steps of three CPU-bound tasks at
#      once: BCS_JOB set in every task, each step's bcs job listed by
#      bcsctl job list and by bcs.ko (bcsstat jobs) on every node, every
#      node running the same row in every slice (analyse.py coherence);
#      scancel ends them, and their bcs jobs go.
#
# BCS_INSTALL_BREAK=key: node3 gets a key of its own instead of node1's
# (the test must fail: node3 does not follow the master).

# shellcheck disable=SC2154 # set by the sourced lib.sh
. "$CL_DIR/lib.sh"

deb=$CL_DEB
sl=$SHARE/slurm
out=$SHARE/out
inst=$SHARE/install
user=bcsuser
uid=2001
mkdir -p "$out" "$inst"

# --- 0. nothing of bcs installed yet -------------------------------------------
# shellcheck disable=SC2016 # expanded in the guest
pre=$(on 1 'dpkg-query -W -f "\${Package} \${db:Status-Abbrev}\n" \
	bcs-dkms bcsd bcs-tools libbcs1 slurm-bcs-plugin 2>/dev/null | grep " ii"
	for c in bcsd bcsctl; do command -v $c; done')
if [ -n "$pre" ]; then
	ok 0 "install from packages # SKIP bcs already installed on this machine: $(echo "$pre" | tr '\n' ' ')"
	tap_end
fi
ok 0 "bcs is not installed in the guests (nor on this machine)"

# --- 1. the packages -----------------------------------------------------------
# Those of a node: the module's sources, the daemon, the tools and the
# plugin (libbcs1 is their dependency).  dpkg -i, not apt: their
# dependencies are all installed already, and apt takes minutes to read
# this machine's package lists in an emulated guest.  The guest has one kernel; the headers of this
# machine's other kernels are removed in the overlay, lest DKMS build for
# them too.
debs=""
for p in bcs-dkms libbcs1 bcs-tools bcsd slurm-bcs-plugin; do
	f=$(printf '%s\n' "$deb/${p}_"*.deb | head -n 1)
	[ -f "$f" ] || { ok 1 "package $p in $deb"; tap_end; }
	debs="$debs $f"
done
diag "packages:$(for f in $debs; do printf ' %s' "${f##*/}"; done)"
t0=$(date +%s)
# shellcheck disable=SC2016 # expanded in the guest
on_each "$out/install-dpkg" -t 2400 'for d in /lib/modules/*; do
		[ "${d##*/}" = "$(uname -r)" ] || rm -rf "$d"
	done
	t=$EPOCHSECONDS
	DEBIAN_FRONTEND=noninteractive dpkg -i '"$debs"' \
		> "$BCS_OUT/dpkg-install.log" 2>&1
	rc=$?
	echo "dpkg -i: rc=$rc, $((EPOCHSECONDS - t)) s"
	[ $rc = 0 ] || tail -n 30 "$BCS_OUT/dpkg-install.log"
	exit $rc'
rc=$?
for f in "$out"/install-dpkg/[0-9]; do
	diag "node${f##*/}: $(head -n 1 "$f")"
done
[ $rc = 0 ] || diag "$(cat "$out"/install-dpkg/[0-9])"
ok $rc "dpkg -i of the packages on every node ($(($(date +%s) - t0)) s for all)"
[ $rc = 0 ] || tap_end

# shellcheck disable=SC2016 # expanded in the guest
on_each "$out/install-dkms" 'dkms status bcs
	ko=$(modinfo -n bcs) && echo "$ko" &&
	case $ko in */updates/dkms/bcs.ko*) ;; *) exit 1 ;; esac &&
	[ "$(modinfo -F version bcs)" = "$(dpkg-query -W -f "\${Version}" bcs-dkms)" ]'
rc=$?
diag "$(cat "$out"/install-dkms/[0-9])"
ok $rc "DKMS built and installed bcs.ko for the guest kernel, of the package's version"

# --- 2. one key ----------------------------------------------------------------
# Made on node1 (or the one its bcsd package made), copied to the others
# through the share as a site would with scp.
# shellcheck disable=SC2016 # expanded in the guest
on 1 'k=/etc/bcs/cluster.key
	[ -s $k ] || bcsd --genkey $k || exit 1
	cp $k "$SHARE/install/cluster.key"' > "$out/install-key" 2>&1
rc=$?
ok $rc "node1: a cluster key (bcsd --genkey /etc/bcs/cluster.key)"
[ $rc = 0 ] || { diag "$(cat "$out/install-key")"; tap_end; }
for n in $CL_NODES; do
	[ "$n" = 1 ] && continue
	# shellcheck disable=SC2016 # expanded in the guest
	if [ "$n" = 3 ] && [ "${BCS_INSTALL_BREAK:-}" = key ]; then
		diag "BCS_INSTALL_BREAK=key: node3 gets a key of its own"
		on 3 'rm -f /etc/bcs/cluster.key && bcsd --genkey /etc/bcs/cluster.key'
	else
		on "$n" 'k=/etc/bcs/cluster.key
		if [ -e $k ]; then cat "$SHARE/install/cluster.key" > $k
		else install -m 0600 "$SHARE/install/cluster.key" $k; fi'
	fi > /dev/null 2>&1 || { ok 1 "node$n: the key copied"; tap_end; }
done
sums=$(on_all 'sha256sum < /etc/bcs/cluster.key; stat -c "%a %U" /etc/bcs/cluster.key')
diag "$sums"
[ "$(echo "$sums" | grep -c ' -$')" = "$nr_nodes" ] &&
	[ "$(echo "$sums" | grep ' -$' | awk '{ print $2 }' | sort -u | wc -l)" = 1 ] &&
	! echo "$sums" | grep -q ' [0-7]*[1-7] [a-z]*$'
ok $? "one key on every node, readable by its owner only"

# --- 3. bcsd.conf, bcsd from its unit -----------------------------------------
# The site's settings replace those lines of the packaged bcsd.conf; the
# slices are long, for emulated CPUs (as the other cluster tests).
conf()		# conf NODE ROLE-LINES
{
	on "$1" "f=/etc/bcs/bcsd.conf
	grep -v -E '^(role|cluster|interface|priority|slice_us|lead_us|watchdog_slices|failover_slices|report_ms|fill)[[:space:]]' \$f > \$f.new &&
	printf '%s\n' '# install test' $2 'cluster $CL_CLUSTER' 'interface eth0' \
		'slice_us $CL_SLICE_US' 'lead_us $CL_LEAD_US' \
		'watchdog_slices $CL_WATCHDOG' 'failover_slices $CL_FAILOVER' \
		'report_ms $CL_REPORT_MS' 'fill 0' >> \$f.new && mv \$f.new \$f"
}
rc=0
for n in $CL_NODES; do
	if [ "$n" = 1 ]; then
		conf 1 "'role both' 'priority 200'" || rc=1
	else
		conf "$n" "'role node'" || rc=1
	fi
done
ok $rc "bcsd.conf on every node: node1 the master (role both), the others nodes"
# shellcheck disable=SC2016 # expanded in the guest
on 1 -t 180 'systemctl restart bcsd; systemctl is-active bcsd' > "$out/install-bcsd1" 2>&1 &&
	wait_until 60 eval 'case $(status_of 1 master) in *" (this node)") ;; *) false ;; esac'
rc=$?
# bcsd.conf gives no node_id: bcsd takes one of its own (from the address).
id1=$(status_of 1 master)
id1=${id1%% *}
[ $rc = 0 ] || diag "$(cat "$out/install-bcsd1")" "$(on 1 'journalctl -u bcsd -n 20 --no-pager')"
ok $rc "node1: systemctl restart bcsd; it is the master"
rc=0
for n in $CL_NODES; do
	[ "$n" = 1 ] && continue
	on "$n" -t 180 'systemctl restart bcsd && systemctl is-active bcsd' > /dev/null 2>&1 || rc=1
done
follow_node1()	# every other node names node1's bcsd its master
{
	local n
	for n in $CL_NODES; do
		[ "$n" = 1 ] || [ "$(status_of "$n" master)" = "$id1" ] || return 1
	done
}
[ $rc = 0 ] && [ -n "$id1" ] && wait_until 60 follow_node1
rc=$?
if [ $rc != 0 ]; then
	for n in $CL_NODES; do
		diag "node$n:" "$(on "$n" 'bcsctl status; journalctl -u bcsd -n 8 --no-pager' 2>&1)"
	done
fi
ok $rc "every node: bcsd started from its unit, following node1 ($id1)"
# shellcheck disable=SC2016 # expanded in the guest
on_each "$out/install-mod" '[ -d /sys/module/bcs ] && systemctl show -p ActiveState,SubState,Type bcsd'
rc=$?
diag "$(cat "$out/install-mod/1")"
ok $rc "every node: bcs.ko loaded (by the unit), bcsd active"
[ $rc = 0 ] || tap_end

# --- 4. munge and Slurm from their units ------------------------------------------
rm -rf "$sl"
mkdir -p "$sl"
mungekey -c -b 1024 -k "$sl/munge.key" || { ok 1 "mungekey"; tap_end; }
slurm_state=/var/lib/bcs-test-slurm slurm_installed=1 slurm_conf
hosts=""
for n in $CL_NODES; do
	hosts="$hosts$CL_NET.$n node$n\n"
done
# shellcheck disable=SC2016 # expanded in the guest
on_each "$out/install-slurm" 'set -e
	printf "'"$hosts"'" >> /etc/hosts
	install -m 0400 -o munge -g munge "$SHARE/slurm/munge.key" /etc/munge/munge.key
	install -m 0644 "$SHARE/slurm/slurm.conf" "$SHARE/slurm/cgroup.conf" /etc/slurm/
	mkdir -p /var/lib/bcs-test-slurm/ctld /var/lib/bcs-test-slurm/spool
	ln -sfn "$BCS_OUT" /var/lib/bcs-test-slurm/log
	so=$(dpkg -L slurm-bcs-plugin | grep "/bcs\.so$")
	if grep -qs "bcs\.so" /etc/slurm/plugstack.conf.d/*.conf; then
		echo "packaged snippet: $(grep -ls "bcs\.so" /etc/slurm/plugstack.conf.d/*.conf)"
	else
		echo "required $so default=off" > /etc/slurm/plugstack.conf.d/bcs.conf
		echo "no packaged snippet: wrote plugstack.conf.d/bcs.conf"
	fi
	systemctl restart munge
	munge -n | unmunge > /dev/null
	if [ "$NODE" = 1 ]; then systemctl restart slurmctld; fi'
rc=$?
diag "node1: $(cat "$out/install-slurm/1")"
[ $rc = 0 ] || diag "$(cat "$out"/install-slurm/[0-9])"
ok $rc "every node: munge key, slurm.conf, the plugin in plugstack.conf.d, munge restarted; slurmctld on node1"
[ $rc = 0 ] || tap_end
on_each "$out/install-slurmd" -t 180 'systemctl restart slurmd && systemctl is-active slurmd'
rc=$?
[ $rc = 0 ] || diag "$(cat "$out"/install-slurmd/[0-9])"
ok $rc "every node: systemctl restart slurmd"
slurm_wait_idle "sinfo: the $nr_nodes nodes idle" || tap_end
o=$(on 1 'srun --help' 2>&1 | grep -e '--bcs')
[ -n "$o" ]
ok $? "srun --help offers --bcs (the packaged plugin): ${o## }"

# --- 5. a user's gang-scheduled steps -----------------------------------------------
# shellcheck disable=SC2016 # expanded in the guest
on_each "$out/install-user" "id $user > /dev/null 2>&1 || useradd -m -u $uid -s /bin/sh $user"
ok $? "a user $user (uid $uid) on every node"
# shellcheck disable=SC2016 # expanded in the tasks
burn='echo "task $SLURM_PROCID on $(hostname) BCS_JOB=$BCS_JOB"; while :; do :; done'
for l in c d; do
	on 1 "mkdir -p \$STATE/slurm && slurm_start $l runuser -u $user -- srun -N $nr_nodes -n $nr_nodes \
		--chdir=/tmp -J bcs-$l --bcs sh -c '$burn' bcs-burn-$l"
done
burning()	# burning LABEL: every task has said its BCS_JOB
{
	[ "$(grep -c '^task .* BCS_JOB=[0-9]' "$out/slurm-$1.out" 2>/dev/null)" = "$nr_nodes" ]
}
wait_until 300 eval 'burning c && burning d'
rc=$?
[ $rc = 0 ] || diag "$(tail -n 5 "$out"/slurm-[cd].out)" "$(on 1 squeue 2>&1)"
ok $rc "user $user: two srun --bcs steps of $nr_nodes CPU-bound tasks, BCS_JOB set in every task"
[ $rc = 0 ] || tap_end
sc=$(on 1 "squeue -h -n bcs-c -o %i" | head -n 1)
sd=$(on 1 "squeue -h -n bcs-d -o %i" | head -n 1)
# BCS_SLURM_ID_BASE (slurm/bcs_slurm.h): 2^30.
jc=$((sc + (1 << 30)))
jd=$((sd + (1 << 30)))
for n in $CL_NODES; do
	l=$(on "$n" bcsctl job list)
	echo "$l" | grep -q "^$jc .*slurm $sc\$" && echo "$l" | grep -q "^$jd .*slurm $sd\$" &&
		on "$n" "bcsstat jobs --json | \$PY -c '
import json, sys
sys.exit(not {$jc, $jd} <= {j[\"id\"] for j in json.load(sys.stdin)})'"
	rc=$?
	[ $rc = 0 ] || diag "$l" "$(on "$n" 'bcsstat jobs --json')"
	ok $rc "node$n: bcsctl job list and bcs.ko (bcsstat jobs) have bcs jobs $jc and $jd of Slurm jobs $sc and $sd"
done

from=$(slice_now 1)
sleep 8
snapshot_all install
ok $? "snapshot of every node while both steps run"
analyse coherence --nodes "$nr_nodes" "$SHARE/data/install" --from-slice "${from:-0}" \
	--jobs "$jc,$jd" --min 20

on 1 "runuser -u $user -- scancel $sc $sd"
ok $? "user $user: scancel $sc $sd"
for n in $CL_NODES; do
	wait_until 60 gone "$n" "$jc" "$jd"
	ok $? "node$n: the bcs jobs $jc and $jd gone after scancel"
done
tap_end

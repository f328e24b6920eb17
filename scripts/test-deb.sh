#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-deb`: the Debian packages end to end, on this machine (root).
#
#   1. scripts/deb.sh builds them into $BUILD/deb; lintian must find no
#      error and no warning;
#   2. apt-get installs them; the programs, the library (through
#      pkg-config), no cluster key made (postinst says how to install the
#      cluster's; the test then makes one as the guide does), and DKMS's
#      bcs.ko for each guest kernel of kernels.env (their headers are
#      installed by scripts/deps.sh), with modinfo giving bcs's version;
#   3. reinstalling keeps the key and a changed bcsd.conf, and so does an
#      upgrade to packages of the same sources with the version raised
#      (BCS_DEB_UPGRADE=0 leaves it out), after which DKMS has the new
#      version's module, and the old one's is gone;
#   1b. the install test (selftests/cluster/run-cluster.sh --install,
#      Documentation/install.rst), before anything is installed here:
#      three guests install the packages, share one key, start bcsd and
#      Slurm from their units and run a gang-scheduled srun job
#      (BCS_DEB_CLUSTER=0 leaves it out);
#   4. one guest (6.1) boots and runs bcs_ioctl_test with the DKMS-built
#      module (BCS_DEB_VM=0 leaves it out; BCS_DEB_TESTS="..." names other
#      selftests, BCS_DEB_TESTS=all runs them all, as make check does);
#   5. apt-get remove leaves nothing but configuration (bcsd.conf, the
#      key); apt-get purge leaves nothing at all.
#
# Not part of `make check` (it takes several minutes and installs packages
# on the host).  Prints KTAP-style results, ends with
# "check-deb: N passed, N failed"; exits non-zero if anything failed.
#
# Environment: BUILD, BCS_CACHE (scripts/lib.sh); BCS_DEB_VM=0: no guest;
# BCS_DEB_CLUSTER=0: no install test (step 1b);
# BCS_DEB_WAIT: seconds to wait for another run of scripts/deps.sh to
# write $BCS_CACHE/kernels.env (default 1200).

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

version=$("$top/scripts/version.sh") || exit 1
out=$BUILD/deb
logdir=$BUILD/check-deb
# The packages this test installs (not the -dbgsym ones).
pkgs="bcs-dkms libbcs1 libbcs-dev bcs-tools bcsd libbcsmpi"
key=/etc/bcs/cluster.key
apt_opts=(-y -q -o DPkg::Lock::Timeout=900)

n=0
passed=0
failed=0

check()		# check STATUS TEXT
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "ok $n $2"
	else
		failed=$((failed + 1))
		echo "not ok $n $2"
	fi
}

skip()		# skip TEXT REASON
{
	n=$((n + 1))
	passed=$((passed + 1))
	echo "ok $n $1 # SKIP $2"
}

note()		# note FILE: a log, as KTAP diagnostics
{
	sed 's/^/# /' "$1"
}

finish()
{
	echo "1..$n"
	echo "check-deb: $passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}

# Status of our packages that dpkg knows of: "pkg ii", "pkg rc", ...
pkg_states()
{
	local p st
	for p in $pkgs; do
		st=$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null) || continue
		st=${st% }
		case $st in
		un|pn|"") ;;
		*) echo "$p $st" ;;
		esac
	done
}

if [ "$(id -u)" != 0 ]; then
	echo "test-deb: must run as root (installs packages)" >&2
	exit 1
fi
mkdir -p "$logdir"
echo "TAP version 13"

# The guest kernels' headers and images: another run of deps.sh may be
# installing them.
wait_s=${BCS_DEB_WAIT:-1200}
while [ ! -r "$BCS_CACHE/kernels.env" ] && [ "$wait_s" -gt 0 ]; do
	[ $((wait_s % 60)) = 0 ] &&
		echo "# waiting for $BCS_CACHE/kernels.env (scripts/deps.sh)"
	sleep 10
	wait_s=$((wait_s - 10))
done
if ! bcs_load_kernels; then
	check 1 "kernels.env (run scripts/deps.sh)"
	finish
fi

# --- build ----------------------------------------------------------------
BCS_DEB_LINTIAN=0 "$top/scripts/deb.sh" > "$logdir/deb.log" 2>&1
rc=$?
[ $rc = 0 ] || tail -n 40 "$logdir/deb.log" | sed 's/^/# /'
check $rc "make deb: packages of bcs $version built (log: $logdir/deb.log)"
[ $rc = 0 ] || finish

# The SPANK plugin's package too, where the tree built it (slurm/bcs.so
# needs libslurm-dev's spank.h; scripts/deb.sh says when it is left out).
if grep -q "slurm-bcs-plugin not built" "$logdir/deb.log"; then
	echo "# slurm-bcs-plugin not built here: $(grep -m1 'slurm-bcs-plugin not built' "$logdir/deb.log")"
else
	pkgs+=" slurm-bcs-plugin"
fi
nr_pkgs=$(echo "$pkgs" | wc -w)
debs=()
for p in $pkgs; do
	f=$(ls "$out/${p}_${version}_"*.deb 2>/dev/null)
	[ -n "$f" ] && debs+=("$f")
done
[ ${#debs[@]} = "$nr_pkgs" ]
check $? "one .deb for each of: $pkgs"

"$top/scripts/deb.sh" --lintian > "$logdir/lintian.log" 2>&1
rc=$?
note "$logdir/lintian.log"
check $rc "lintian --fail-on error,warning: no error, no warning"

# --- install ----------------------------------------------------------------
# A package left from an interrupted run would hide what this one does.
left=$(pkg_states | awk '{ print $1 }' | tr '\n' ' ')
if [ -n "$left" ]; then
	echo "# purging packages left from an earlier run: $left"
	# shellcheck disable=SC2086
	timeout 900 apt-get purge "${apt_opts[@]}" $left > /dev/null 2>&1
fi
rm -f "$key"
# No key before the installation: the package must make none.

# --- the install test: three guests, the packages only --------------------------
# Before the packages are installed here: the guests' root is this
# machine's (an overlay of it), which must not have bcs yet.
if [ "${BCS_DEB_CLUSTER:-1}" = 0 ]; then
	skip "install test on three guests (run-cluster.sh --install)" "BCS_DEB_CLUSTER=0"
else
	timeout 3700 "$top/selftests/cluster/run-cluster.sh" --install \
		> "$logdir/install-cluster.log" 2>&1
	rc=$?
	grep -E '^(not )?ok |^    (not )?ok |^ *# (run-cluster|SKIP)|passed, ' \
		"$logdir/install-cluster.log" | sed 's/^/# /'
	check $rc "install test: three guests install the packages, one key, bcsd and Slurm from their units, a gang-scheduled srun (log: $logdir/install-cluster.log)"
fi

# What is in DKMS's tree and in each kernel's module directory before: DKMS
# runs depmod, which writes its indexes for a kernel whose image is not
# installed (the guest kernels' headers only are), and makes its signing
# key on its first build; neither is bcs's.
for d in /var/lib/dkms $(for rel in $BCS_KERNELS; do echo "/lib/modules/$rel"; done); do
	find "$d" -maxdepth 1 2>/dev/null
done | sort > "$logdir/before"

timeout 1800 apt-get install "${apt_opts[@]}" --no-install-recommends \
	"${debs[@]}" > "$logdir/install.log" 2>&1
rc=$?
[ $rc = 0 ] || tail -n 40 "$logdir/install.log" | sed 's/^/# /'
check $rc "apt-get install ./{$(echo "$pkgs" | tr ' ' ',')}_$version*.deb"
sed -n '/Building for\|Building initial\|DKMS\|bcsd:/p' \
	"$logdir/install.log" | sed 's/^/# /'

bad=$(pkg_states | awk '$2 != "ii"')
[ -z "$bad" ] && [ "$(pkg_states | wc -l)" = "$nr_pkgs" ]
check $? "all $nr_pkgs packages installed (ii)${bad:+: $bad}"

for p in /usr/bin/bcsctl /usr/bin/bcsstat /usr/sbin/bcsd; do
	o=$("$p" --version 2>&1)
	case $o in
	"${p##*/} $version "*|"${p##*/} $version") rc=0 ;;
	*) rc=1 ;;
	esac
	check $rc "$p --version: $o"
done

o=$(pkg-config --modversion libbcs 2>&1)
[ "$o" = "$version" ]
check $? "pkg-config --modversion libbcs: $o"

# A program against the installed header and shared library.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/prog.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <bcs.h>

int main(void)
{
	const char *m = bcs_strerror(-ENOENT, BCS_CTX_JOB);

	printf("%u %s\n", (unsigned int)BCS_ROWS_MAX, m);
	return !m || !*m;
}
C
# shellcheck disable=SC2046
o=$(cc -std=c11 -Wall -Wextra -Werror -o "$tmp/prog" "$tmp/prog.c" \
	$(pkg-config --cflags --libs libbcs) 2>&1 && "$tmp/prog" 2>&1 &&
	ldd "$tmp/prog" | grep -o '/[^ ]*/libbcs\.so\.1')
check $? "a program builds with pkg-config libbcs and runs against libbcs.so.1 ($(echo "$o" | tr '\n' ' '))"

o=$(ldd /usr/lib/*/bcs/libbcsmpi-*.so 2>&1)
[ "$(ls /usr/lib/*/bcs/libbcsmpi-*.so | wc -l)" = 2 ] &&
	! echo "$o" | grep -q 'not found'
check $? "libbcsmpi-openmpi.so and libbcsmpi-mpich.so, every library found"

# The SPANK plugin where slurmd looks for plugins, every library found.
if [[ " $pkgs " == *" slurm-bcs-plugin "* ]]; then
	o=$(ldd /usr/lib/*/slurm-wlm/bcs.so 2>&1)
	[ "$(ls /usr/lib/*/slurm-wlm/bcs.so 2>/dev/null | wc -l)" = 1 ] &&
		! echo "$o" | grep -q 'not found'
	check $? "the SPANK plugin $(ls /usr/lib/*/slurm-wlm/bcs.so 2>/dev/null), every library found"
fi

# bcsctl run --mpi-stats preloads them from the directory compiled in.
mpidir=$(ls -d /usr/lib/*/bcs 2>/dev/null | head -n 1)
# (grep reads everything: with -q, strings could die of SIGPIPE first.)
[ -n "$mpidir" ] && strings /usr/bin/bcsctl | grep -x "$mpidir" > /dev/null
check $? "bcsctl looks for libbcsmpi in ${mpidir:-(none installed)}"

grep -qx 'ExecStart=/usr/sbin/bcsd -f /etc/bcs/bcsd.conf --log=syslog' \
	/lib/systemd/system/bcsd.service
check $? "bcsd.service starts /usr/sbin/bcsd"

# One key per cluster, installed by the administrator: postinst makes
# none (a node's own would be refused by every other), and says so.
[ ! -e "$key" ] && grep -q "bcsd: no cluster key in $key" "$logdir/install.log"
check $? "postinst made no cluster key, and said how to install one"
bcsd --genkey "$key" > /dev/null 2>&1
o=$(stat -c '%a %U %s' "$key" 2>&1)
[ "$o" = "600 root 65" ]
check $? "bcsd --genkey $key, as the admin guide says (mode, owner, size: $o)"
keysum=$(sha256sum "$key" 2>/dev/null)

# --- DKMS -------------------------------------------------------------------
# The package's postinst builds for every kernel in /lib/modules on a first
# installation; a kernel it left out is built here.
for rel in $BCS_KERNELS; do
	if ! dkms status "bcs/$version" -k "$rel" 2>/dev/null | grep -q installed; then
		echo "# dkms install bcs/$version -k $rel"
		timeout 900 dkms install "bcs/$version" -k "$rel" \
			> "$logdir/dkms-$rel.log" 2>&1
		note "$logdir/dkms-$rel.log"
	fi
	o=$(dkms status "bcs/$version" -k "$rel" 2>/dev/null)
	echo "$o" | grep -q ": installed"
	check $? "dkms status: $o"
	ko=$(ls "/lib/modules/$rel/updates/dkms/bcs.ko"* 2>/dev/null | head -n 1)
	v=$(modinfo -F version "${ko:-/nonexistent}" 2>/dev/null)
	vm=$(modinfo -F vermagic "${ko:-/nonexistent}" 2>/dev/null)
	[ "$v" = "$version" ] && [ "${vm%% *}" = "$rel" ]
	check $? "DKMS's ${ko:-bcs.ko for $rel}: version ${v:-?}, vermagic ${vm%% *}"
done

# --- reinstall: an upgrade keeps the configuration ----------------------------
echo "# site setting" >> /etc/bcs/bcsd.conf
timeout 900 apt-get install "${apt_opts[@]}" --reinstall \
	"$out/bcsd_${version}_"*.deb > "$logdir/reinstall.log" 2>&1
rc=$?
[ $rc = 0 ] || note "$logdir/reinstall.log"
check $rc "apt-get install --reinstall bcsd"
[ "$(sha256sum "$key" 2>/dev/null)" = "$keysum" ]
check $? "the cluster key is kept"
grep -qx "# site setting" /etc/bcs/bcsd.conf
check $? "a changed bcsd.conf is kept"

# --- upgrade to a newer version ----------------------------------------------
# The same sources with BCS_PACKAGE_VERSION raised, in a copy: its packages
# replace these, and DKMS's module of the old version makes way for the
# new one's, for the same kernels.
if [ "${BCS_DEB_UPGRADE:-1}" = 0 ]; then
	skip "upgrade to a newer version" "BCS_DEB_UPGRADE=0"
else
	up=$logdir/upgrade
	upver=$version+up1
	rm -rf "$up"
	mkdir -p "$up/src"
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -xf - -C "$up/src"
	sed -i "s/^\(#define[[:space:]]*BCS_PACKAGE_VERSION[[:space:]]*\)\"[^\"]*\"/\1\"$upver\"/" \
		"$up/src/include/uapi/linux/bcs.h"
	o=$("$up/src/scripts/version.sh")
	BUILD=$up/build BCS_DEB_LINTIAN=0 DEB_BUILD_OPTIONS=nocheck \
		"$up/src/scripts/deb.sh" > "$logdir/upgrade-deb.log" 2>&1
	rc=$?
	[ $rc = 0 ] || tail -n 40 "$logdir/upgrade-deb.log" | sed 's/^/# /'
	[ "$o" = "$upver" ] && [ $rc = 0 ]
	check $? "packages of bcs $o built from a copy with the version raised"

	updebs=()
	for p in $pkgs; do
		f=$(ls "$up/build/deb/${p}_${upver}_"*.deb 2>/dev/null)
		[ -n "$f" ] && updebs+=("$f")
	done
	timeout 1800 apt-get install "${apt_opts[@]}" --no-install-recommends \
		-o Dpkg::Options::=--force-confold "${updebs[@]}" \
		> "$logdir/upgrade.log" 2>&1
	rc=$?
	[ $rc = 0 ] || tail -n 40 "$logdir/upgrade.log" | sed 's/^/# /'
	sed -n '/Building for\|Building initial\|DKMS\|bcsd:/p' \
		"$logdir/upgrade.log" | sed 's/^/# /'
	[ ${#updebs[@]} = "$nr_pkgs" ] && [ $rc = 0 ]
	check $? "apt-get install: upgrade from $version to $upver"

	bad=$(for p in $pkgs; do
		dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' "$p"
	done 2>&1 | grep -v " $upver ii")
	[ -z "$bad" ]
	check $? "all $nr_pkgs packages at $upver${bad:+: $bad}"
	o=$(/usr/bin/bcsctl --version 2>&1)
	[ "${o#bcsctl "$upver" }" != "$o" ]
	check $? "bcsctl --version: $o"

	o=$(dkms status bcs 2>/dev/null)
	echo "$o" | sed 's/^/# dkms status: /'
	! echo "$o" | grep -q "bcs/$version,"
	check $? "DKMS has no module of $version left"
	for rel in $BCS_KERNELS; do
		ko=$(ls "/lib/modules/$rel/updates/dkms/bcs.ko"* 2>/dev/null | head -n 1)
		v=$(modinfo -F version "${ko:-/nonexistent}" 2>/dev/null)
		[ "$v" = "$upver" ]
		check $? "DKMS's bcs.ko for $rel after the upgrade: version ${v:-none}"
	done
	[ ! -e "/usr/src/bcs-$version" ]
	check $? "/usr/src/bcs-$version is gone"
	[ "$(sha256sum "$key" 2>/dev/null)" = "$keysum" ] &&
		grep -qx "# site setting" /etc/bcs/bcsd.conf
	check $? "the upgrade keeps the key and the changed bcsd.conf"
	version=$upver
fi

# --- a guest with the DKMS-built module -------------------------------------
rel61=$(bcs_release 6.1)
ko=/lib/modules/$rel61/updates/dkms/bcs.ko
tests=${BCS_DEB_TESTS:-bcs_ioctl_test}
# run-in-guest.sh runs every selftest when none is named.
[ "$tests" = all ] && tests=
if [ "${BCS_DEB_VM:-1}" = 0 ]; then
	skip "guest $rel61: selftests with DKMS's bcs.ko" "BCS_DEB_VM=0"
elif ! timeout 900 make -s -C "$top/selftests" > "$logdir/selftests.log" 2>&1; then
	note "$logdir/selftests.log"
	check 1 "selftests built (make -C selftests)"
else
	# The guest sees this machine's root file system, so the module
	# DKMS installed is there at the same path.
	vmtmo=900
	[ -z "$tests" ] && vmtmo=2400
	# shellcheck disable=SC2086
	timeout $((vmtmo + 100)) "$top/selftests/vm/run-vm.sh" \
		--kernel "$rel61" --timeout "$vmtmo" --quiet --out "$logdir/vm" \
		-- bash selftests/run-in-guest.sh "$ko" $tests \
		> "$logdir/vm.log" 2>&1
	rc=$?
	grep -E '^ *(# )*(not )?ok |insmod|run-in-guest' \
		"$logdir/vm/console.log" 2>/dev/null | sed 's/^/# /' | tail -n 30
	check $rc "guest $rel61: ${tests:-all selftests} with DKMS's $ko"
fi

# --- remove: only configuration is left -------------------------------------
# Every path the packages installed, and which of them are conffiles.
for p in $pkgs; do
	dpkg -L "$p"
done | sort -u > "$logdir/files"
for p in $pkgs; do
	dpkg-query -W -f '${Conffiles}\n' "$p"
done | awk 'NF { print $1 }' | sort -u > "$logdir/conffiles"

# A left path is one of ours that still exists: a file or link, or a
# directory no other package owns.
leftovers()
{
	local f
	while IFS= read -r f; do
		if [ "$f" = /. ]; then
			continue
		elif [ -d "$f" ]; then
			# Also /lib, a link to usr/lib on a merged /usr.
			dpkg -S "$f" > /dev/null 2>&1 || echo "$f/"
		elif [ -L "$f" ] || [ -e "$f" ]; then
			echo "$f"
		fi
	done < "$logdir/files"
	# What DKMS and bcsd make beside the packaged files.
	for f in /var/lib/dkms/bcs /usr/src/bcs-* /var/lib/bcs \
		 /etc/bcs/cluster.key; do
		[ -e "$f" ] && echo "$f"
	done
	for rel in $BCS_KERNELS; do
		ls "/lib/modules/$rel/updates/dkms/bcs.ko"* 2>/dev/null
	done
}

# shellcheck disable=SC2086
timeout 900 apt-get remove "${apt_opts[@]}" $pkgs > "$logdir/remove.log" 2>&1
rc=$?
[ $rc = 0 ] || note "$logdir/remove.log"
check $rc "apt-get remove $pkgs"

st=$(pkg_states | tr '\n' ';')
[ -z "$(pkg_states | awk '$2 != "rc"')" ]
check $? "nothing installed, at most configuration: ${st:-none}"

left=$(leftovers | sort -u)
echo "$left" | sed '/^$/d; s/^/# left after remove: /'
extra=$(echo "$left" | grep -v -x -F -f "$logdir/conffiles" |
	grep -v -x -e "$key" -e '/etc/bcs/' -e '/etc/bcs')
[ -z "$extra" ] && echo "$left" | grep -qx "$key" &&
	echo "$left" | grep -qx /etc/bcs/bcsd.conf
check $? "after remove only bcsd.conf and the key are left${extra:+ (also: $(echo "$extra" | tr '\n' ' '))}"

# --- purge: nothing is left ----------------------------------------------------
# apt-get purge takes only the packages dpkg still knows of.
rcpkgs=$(pkg_states | awk '{ print $1 }' | tr '\n' ' ')
# shellcheck disable=SC2086
timeout 900 apt-get purge "${apt_opts[@]}" $rcpkgs > "$logdir/purge.log" 2>&1
rc=$?
[ $rc = 0 ] || note "$logdir/purge.log"
check $rc "apt-get purge ${rcpkgs:-(nothing left to purge)}"

st=$(pkg_states | tr '\n' ';')
[ -z "$st" ]
check $? "dpkg knows none of the packages any more${st:+ ($st)}"

left=$(leftovers | sort -u)
echo "$left" | sed '/^$/d; s/^/# left after purge: /'
[ -z "$left" ] && [ ! -e /etc/bcs ]
check $? "after purge nothing is left (not /etc/bcs either)"

for d in /var/lib/dkms $(for rel in $BCS_KERNELS; do echo "/lib/modules/$rel"; done); do
	find "$d" -maxdepth 1 2>/dev/null
done | sort > "$logdir/after"
new=$(comm -13 "$logdir/before" "$logdir/after")
echo "$new" | sed '/^$/d; s/^/# made by dkms or depmod, not bcs: /'
# shellcheck disable=SC2086
named=$(echo "$new" | grep -i bcs; [ -z "$new" ] || grep -l -w bcs $new 2>/dev/null)
[ -z "$named" ]
check $? "nothing DKMS or depmod made names bcs${named:+: $(echo "$named" | tr '\n' ' ')}"

finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make install` into a staging directory: every file in its place, the
# systemd unit pointing at the installed bcsd, an existing bcsd.conf kept,
# and a program built against the installed headers and library through
# pkg-config (linux/bcs.h included by bcs.h must be there too).
# Prints "N passed, N failed"; exits non-zero on a failure.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$(mktemp -d) || exit 1
trap 'rm -rf "$dest"' EXIT
prefix=/opt/bcs
. "$top/scripts/check-lib.sh"

mkdir -p "$dest/etc/bcs"
echo "# the site's own" > "$dest/etc/bcs/bcsd.conf"
make -s -C "$top" install DESTDIR="$dest" PREFIX="$prefix" > "$dest.log" 2>&1
rc=$?
[ $rc = 0 ] || cat "$dest.log"
rm -f "$dest.log"
check $rc "make install DESTDIR=... PREFIX=$prefix"

missing=
for f in bin/bcsctl sbin/bcsd bin/bcsstat include/bcs.h include/linux/bcs.h \
	 include/linux/bcs_hist.h include/bcs_ctl.h include/linux/bcs_ctl.h \
	 lib/libbcs.a lib/libbcs.so lib/libbcs.so.1 lib/pkgconfig/libbcs.pc \
	 lib/systemd/system/bcsd.service share/man/man1/bcsstat.1 \
	 share/man/man1/bcsctl.1 share/man/man8/bcsd.8 share/man/man5/bcsd.conf.5 \
	 share/man/man7/bcs-mpi.7 \
	 share/bash-completion/completions/bcsctl; do
	[ -e "$dest$prefix/$f" ] || missing="$missing $f"
done
[ -z "$missing" ]
check $? "every file installed under $prefix${missing:+ (missing:$missing)}"

# The SPANK plugin where Slurm's spank.h is: bcs.so, its page and its
# plugstack.conf.d snippet naming it where it is installed.
if [ -f /usr/include/slurm/spank.h ]; then
	pdir=/usr/lib/$(cc -print-multiarch)/slurm-wlm
	snip=$dest/etc/slurm/plugstack.conf.d/bcs.conf
	[ -e "$dest$pdir/bcs.so" ] && [ -e "$dest$prefix/share/man/man8/bcs_spank.8" ] &&
		grep -qx "optional $pdir/bcs.so default=off require=no" "$snip"
	check $? "the SPANK plugin, bcs_spank.8 and plugstack.conf.d/bcs.conf naming it"
fi

# Every manual page installed reads without a warning of man (groff).
if command -v man > /dev/null; then
	warn=
	for p in $(find "$dest" -path '*/share/man/man*' -type f | sort); do
		w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$p" 2>&1 > /dev/null)
		[ -z "$w" ] || { warn="$warn ${p##*/}"; printf '%s\n' "$w" | sed 's/^/# /'; }
	done
	[ -z "$warn" ]
	check $? "man --warnings: no warning in the pages installed${warn:+ (in:$warn)}"
fi

# libbcsmpi: the library of every MPI built, where bcsctl run --mpi-stats
# looks for it (the one place, libbcsmpi/libdir.mk).
libs=$(cd "$top/libbcsmpi" && ls libbcsmpi-*.so 2>/dev/null)
missing=
for f in $libs; do
	[ -e "$dest$prefix/lib/$f" ] || missing="$missing $f"
done
[ -n "$libs" ] && [ -z "$missing" ]
check $? "libbcsmpi of each MPI under $prefix/lib (built: ${libs:-none}${missing:+, missing:$missing})"
out=$(env -u BCS_MPI_LIBDIR "$dest$prefix/bin/bcsctl" run --mpi-stats \
	--no-attach -- "$top/libbcsmpi/tests/pattern-openmpi" 2>&1)
echo "# $out"
case $out in
*"is not installed (looked in $prefix/lib,"*) rc=0 ;;
*) rc=1 ;;
esac
check $rc "the installed bcsctl looks for libbcsmpi in $prefix/lib"

grep -q "^ExecStart=$prefix/sbin/bcsd " \
	"$dest$prefix/lib/systemd/system/bcsd.service"
check $? "bcsd.service starts $prefix/sbin/bcsd"
grep -qx "# the site's own" "$dest/etc/bcs/bcsd.conf" &&
	[ -s "$dest/etc/bcs/bcsd.conf.example" ]
check $? "an existing bcsd.conf is kept, the example installed beside it"

cat > "$dest/prog.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bcs.h>

int main(void)
{
	const char *m = bcs_strerror(-ENOENT, BCS_CTX_JOB);

	printf("%u %s\n", (unsigned int)BCS_ROWS_MAX, m);
	return !m || !*m;
}
C
pc="$dest$prefix/lib/pkgconfig"
flags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest \
	pkg-config --cflags --libs --static libbcs 2>&1)
rc=$?
echo "# pkg-config --cflags --libs --static libbcs: $flags"
check $rc "pkg-config finds the installed libbcs.pc"
# Static, so that the staged library is the one linked and nothing needs
# to be found at run time.
out=$(cc -std=c11 -Wall -Wextra -Werror -o "$dest/prog" "$dest/prog.c" \
	-static $flags 2>&1 && "$dest/prog" 2>&1)
rc=$?
echo "# $out"
[ $rc = 0 ] && [ "${out%% *}" = 64 ]
check $? "a program builds against the installed bcs.h and libbcs and runs"

# One version, from its one home (scripts/version.sh), everywhere.
version=$("$top/scripts/version.sh")
for p in bin/bcsctl bin/bcsstat sbin/bcsd; do
	out=$("$dest$prefix/$p" --version 2>&1)
	echo "# $p --version: $out"
	case $out in
	"${p#*/} $version "*|"${p#*/} $version") rc=0 ;;
	*) rc=1 ;;
	esac
	check $rc "$p --version gives bcs $version"
done
out=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest \
	pkg-config --modversion libbcs 2>&1)
[ "$out" = "$version" ]
check $? "libbcs.pc says version $version (it says $out)"

# DKMS builds the module from the tree's dkms.conf, under the version
# it reads from the UAPI header, in a private DKMS tree.
kdir=$(ls -d /lib/modules/*-amd64/build 2>/dev/null | head -n 1)
if ! command -v dkms > /dev/null || [ -z "$kdir" ]; then
	check 1 "dkms and kernel headers installed (scripts/deps.sh)"
else
	krel=$(basename "$(dirname "$kdir")")
	dk=$dest/dkms
	mkdir -p "$dk/src/bcs-$version" "$dk/tree"
	cp -r "$top/Kbuild" "$top/module" "$top/include" "$top/dkms.conf" \
		"$dk/src/bcs-$version/"
	rm -rf "$dk/src/bcs-$version/module/generated"
	dopt=(--sourcetree "$dk/src" --dkmstree "$dk/tree")
	dkms add "bcs/$version" "${dopt[@]}" > "$dk/log" 2>&1 &&
		dkms build "bcs/$version" -k "$krel" "${dopt[@]}" \
			>> "$dk/log" 2>&1
	rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$dk/log"
	check $rc "dkms add and build bcs/$version for $krel"
	ko=$(find "$dk/tree" -name 'bcs.ko*' | head -n 1)
	out=$(modinfo -F version "$ko" 2>&1)
	[ "$out" = "$version" ]
	check $? "modinfo of the DKMS-built bcs.ko says version $version (${out:-nothing})"
fi

# dkms.conf's BUILD_EXCLUSIVE_KERNEL: 6.1 and later, as dkms matches it
# (bash's =~ on the release).
out=$(bash -c '. "$1"; for r in 6.1.0-56-amd64 6.12.43+deb12-amd64 6.10.1 \
		7.0.1 5.10.0-30-amd64 6.0.19 4.19.0 6.01.0; do
		[[ $r =~ $BUILD_EXCLUSIVE_KERNEL ]] && printf "%s " "$r"; done' \
	_ "$top/dkms.conf" 2>&1)
echo "# dkms.conf builds for: $out"
[ "$out" = "6.1.0-56-amd64 6.12.43+deb12-amd64 6.10.1 7.0.1 " ]
check $? "dkms.conf's BUILD_EXCLUSIVE_KERNEL admits 6.1 and later only"

# make install-module without DKMS, staged: bcs.ko in extra/ and in the
# staged modules.dep.
if [ -n "$kdir" ]; then
	mp=$dest/modroot
	make -s -C "$top" install-module KREL="$krel" INSTALL_MOD_PATH="$mp" \
		> "$dest/mod.log" 2>&1
	rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$dest/mod.log"
	[ $rc = 0 ] && [ -f "$mp/lib/modules/$krel/extra/bcs.ko" ] &&
		grep -q '^extra/bcs.ko:' "$mp/lib/modules/$krel/modules.dep"
	check $? "make install-module KREL=$krel: extra/bcs.ko, in modules.dep"
fi

checks_done test-install

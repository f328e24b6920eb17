#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: the Debian packages of bcs (debian/), built with debhelper
# in a copy of the tree under $BUILD/deb/src, so that nothing the build
# makes (as root or not) is left in the tree, then checked with lintian.
# The packages, .changes and .buildinfo go into $BUILD/deb.
#
# debian/changelog is not kept in the tree: it is written here, in the
# copy, with the version scripts/version.sh prints (BCS_PACKAGE_VERSION in
# include/uapi/linux/bcs.h), so that bcs keeps one version.
#
# The package slurm-bcs-plugin is built only when the tree has
# slurm/Makefile; otherwise the build profile pkg.bcs.noslurm drops it
# (debian/control, debian/rules).
#
# It needs only the build dependencies of debian/control (with
# build-essential): `apt-get build-dep ./`, `mk-build-deps -ir` or
# `scripts/deps.sh --build` install them; not the test rig of `make
# deps`.  lintian is run when it is installed (else the packages are built
# and the check is said to be skipped): lintian --pedantic, failing on any
# tag not overridden (debian/*.lintian-overrides, each with its reason).
#
# scripts/deb.sh --lintian runs lintian alone on the packages built last.
#
# Environment: BUILD (default ./build), DEB_BUILD_OPTIONS (e.g. nocheck),
# BCS_DEB_LINTIAN=0 to skip lintian.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

export LC_ALL=C.UTF-8

out=$BUILD/deb
version=$("$top/scripts/version.sh")
src=$out/src/bcs-$version

log()
{
	echo "deb: $*"
}

# lintian --pedantic on the .changes of this version, failing on every tag
# shown (errors, warnings, info and pedantic: those that stay are
# overridden, with a reason, in debian/*.lintian-overrides); as nobody when
# run as root (lintian advises against root).
lintian_check()
{
	local changes as=()

	changes=$(ls "$out"/bcs_"${version}"_*.changes) || return 1
	if [ "$(id -u)" = 0 ] && command -v runuser > /dev/null &&
	   runuser -u nobody -- test -r "$changes"; then
		as=(runuser -u nobody -- env HOME=/tmp TMPDIR=/tmp)
	fi
	log "lintian --pedantic --display-info $(basename "$changes")"
	if ! timeout 900 "${as[@]}" lintian --pedantic --display-info \
			--fail-on error,warning,info,pedantic \
			--tag-display-limit 0 "$changes"; then
		log "lintian: FAILED (tags above)"
		return 1
	fi
	log "lintian: clean (--pedantic: no tag but those overridden)"
}

if [ "${1:-}" = --lintian ]; then
	command -v lintian > /dev/null ||
		{ echo "deb: lintian is not installed" >&2; exit 1; }
	lintian_check
	exit
fi

for tool in dpkg-buildpackage dh dh_dkms; do
	if ! command -v "$tool" > /dev/null; then
		echo "deb: $tool missing: install the build dependencies" \
			"(scripts/deps.sh --build, or apt-get build-dep ./)" >&2
		exit 1
	fi
done

# A copy of the files git knows (tracked, and new ones not ignored), as
# they are in the work tree; outside git (an unpacked tarball), of
# everything but ./build (debian/rules cleans what was built in place).
log "copying the tree into $src"
rm -rf "$out"
mkdir -p "$src"
# (A tree copied into another's build directory is not that one's.)
in_git=0
if prefix=$(git -C "$top" rev-parse --show-prefix 2>/dev/null) &&
   [ -z "$prefix" ]; then
	in_git=1
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -xf - -C "$src"
else
	(cd "$top" && tar --exclude=./build -cf - .) | tar -xf - -C "$src"
fi

# The one changelog entry, from the one version; dated by the commit so
# that the same commit makes the same packages.
maint=$(sed -n 's/^Maintainer: *//p' "$src/debian/control")
date=$(date -R)
from="a source tree outside git"
if [ $in_git = 1 ]; then
	date=$(git -C "$top" log -1 --format=%aD 2>/dev/null) || date=$(date -R)
	from="the source tree at $(git -C "$top" describe --always --dirty \
		2>/dev/null || echo "an unknown commit")"
fi
cat > "$src/debian/changelog" <<CHANGELOG
bcs ($version) unstable; urgency=medium

  * bcs $version, built from $from.
    (Written by scripts/deb.sh from BCS_PACKAGE_VERSION.)

 -- $maint  $date
CHANGELOG

profiles=()
if [ ! -f "$src/slurm/Makefile" ]; then
	log "no slurm/Makefile: slurm-bcs-plugin not built (pkg.bcs.noslurm)"
	profiles=(-Ppkg.bcs.noslurm)
fi

cd "$src"
if ! dpkg-checkbuilddeps "${profiles[@]}"; then
	echo "deb: build dependencies missing: scripts/deps.sh --build" \
		"(or apt-get build-dep ./) installs them" >&2
	exit 1
fi
log "dpkg-buildpackage -b -us -uc ${profiles[*]}"
# Without the BUILD of the tree the copy was made from (debian/rules too).
timeout 1800 env -u BUILD -u BCS_CACHE \
	dpkg-buildpackage -b -us -uc "${profiles[@]}"

cd "$out"
mv src/*.deb src/*.changes src/*.buildinfo "$out/"
rm -rf src
log "packages in $out:"
ls "$out"/*.deb | sed 's/^/deb:   /'

if [ "${BCS_DEB_LINTIAN:-1}" = 0 ]; then
	log "lintian: skipped (BCS_DEB_LINTIAN=0)"
elif ! command -v lintian > /dev/null; then
	log "lintian: skipped (not installed; apt-get install lintian to check)"
else
	lintian_check
fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Resolve the two guest kernels bcs is built and tested against, from the
# local apt cache (run `apt-get update` first on a fresh machine):
#
#   6.1:  the release linux-image-amd64 currently depends on (Debian 12's
#         own kernel);
#   6.12: the highest 6.12.X+deb12 for which both the unsigned image and
#         the matching headers package are available (the backport kernel).
#
# Patch releases move with every Debian point/security update, so nothing
# here names one.  Output, one kernel per line:
#
#   <release> <image package> <headers package>
#
# With --releases only the releases are printed, space-separated.  Exits
# non-zero if either kernel cannot be resolved.

set -eu

export LC_ALL=C

# apt-cache loads the whole package cache on every call (about a second
# when no binary cache is kept), so ask everything in three calls.
img61=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-6\.1\.[0-9]+-[0-9]+-amd64$/ \
		{ print $2; exit }')
rel61=${img61#linux-image-}

# Candidate 6.12 patch levels, newest first.
xs=$(apt-cache pkgnames linux-image-6.12. 2>/dev/null |
	sed -n 's/^linux-image-6\.12\.\([0-9][0-9]*\)+deb12-amd64-unsigned$/\1/p' |
	sort -rn -u)

pkgs=""
[ -n "$img61" ] && pkgs="$img61 linux-headers-$rel61"
for x in $xs; do
	pkgs="$pkgs linux-image-6.12.$x+deb12-amd64-unsigned linux-headers-6.12.$x+deb12-amd64"
done

# Names of the packages that have an installable candidate version.
# shellcheck disable=SC2086
avail=$(if [ -n "$pkgs" ]; then apt-cache policy $pkgs 2>/dev/null; fi |
	awk '/^[^ ]/ { sub(/:$/, ""); p = $0 }
	     $1 == "Candidate:" && $2 != "(none)" { print p }')

has()
{
	echo "$avail" | grep -qxF "$1"
}

k61=""
if [ -n "$img61" ] && has "$img61" && has "linux-headers-$rel61"; then
	k61="$rel61 $img61 linux-headers-$rel61"
fi
k612=""
for x in $xs; do
	rel="6.12.$x+deb12-amd64"
	if has "linux-image-$rel-unsigned" && has "linux-headers-$rel"; then
		k612="$rel linux-image-$rel-unsigned linux-headers-$rel"
		break
	fi
done

if [ -z "$k61" ]; then
	echo "kernels.sh: cannot resolve the 6.1 kernel from apt-cache" >&2
	exit 1
fi
if [ -z "$k612" ]; then
	echo "kernels.sh: cannot resolve a 6.12 kernel from apt-cache" >&2
	exit 1
fi

if [ "${1:-}" = "--releases" ]; then
	echo "${k61%% *} ${k612%% *}"
else
	echo "$k61"
	echo "$k612"
fi

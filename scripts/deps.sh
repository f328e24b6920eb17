#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install and unpack everything bcs needs to build and test on Debian 12.
# Idempotent and quick when all is in place: each step checks first.
#
#   - Debian packages (compiler, qemu, busybox, sparse, libraries, the kernel
#     headers of both guest kernels, linux-source-6.1, Open MPI and the SSH
#     server and client through which mpirun reaches the test guests,
#     MPICH (libbcsmpi is built and tested against both MPIs), the
#     tools that build the debug kernel of `make check-debug`, debhelper,
#     dh-dkms and lintian for `make deb`, Slurm and munge (the SPANK
#     plugin builds against libslurm-dev; the cluster test runs
#     slurmctld, slurmd and munged in the guests, with their own
#     configuration and state, not the host's), and prometheus for its
#     promtool, which checks bcsd's metrics file (daemon/tests/test_metrics.sh;
#     a test tool only, no dependency of the build or the packages));
#   - the two guest kernel image packages, downloaded (not installed: the
#     host keeps its own kernel) and unpacked into
#     $BCS_CACHE/kernels/<release>/;
#   - checkpatch and the kselftest headers from linux-source-6.1, unpacked
#     into $BCS_CACHE/linux-source-6.1/;
#   - $BCS_CACHE/kernels.env describing the kernels (see scripts/lib.sh).
#
# The packages, by what they are for (the lists below):
#   build   what building the Debian packages needs (`make deb`): exactly
#           the Build-Depends of debian/control, with build-essential;
#   module  building bcs.ko by hand or with DKMS on this host;
#   rig     the test rig of `make check`: the guest kernels' headers and
#           source, qemu, busybox, the MPIs' runtimes, Slurm and munge for
#           the guests, lint and analysis tools, lintian.
#
# scripts/deps.sh --build installs only the first: build-essential and the
# build dependencies of debian/control (`apt-get build-dep ./`), nothing of
# the test rig (no guest kernel, no qemu); the same as `mk-build-deps -ir`
# of devscripts.  lintian is not among them: `make deb` runs it when it is
# installed.

set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

export DEBIAN_FRONTEND=noninteractive LC_ALL=C

log()
{
	echo "deps: $*"
}

if [ "$(id -u)" != 0 ]; then
	echo "deps: must run as root (installs packages)" >&2
	exit 1
fi

updated=0
apt_update()
{
	[ $updated = 0 ] || return 0
	log "apt-get update"
	timeout 600 apt-get update -q
	updated=1
}

# The build dependencies of the packages alone.
if [ "${1:-}" = --build ]; then
	log "installing build-essential and debian/control's Build-Depends"
	apt_update
	timeout 1800 apt-get install -y -q --no-install-recommends \
		build-essential
	(cd "$top" && timeout 1800 apt-get build-dep -y -q \
		--no-install-recommends ./)
	log "ok: build dependencies of the packages (make deb)"
	exit 0
fi

# Refresh package lists that are missing or older than a day, so that the
# kernel resolution below sees current security updates.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' \
		-mmin -1440 2>/dev/null | head -n 1)" ]; then
	apt_update
fi

if ! kernels=$("$top/scripts/kernels.sh"); then
	apt_update
	kernels=$("$top/scripts/kernels.sh")
fi
releases=$(echo "$kernels" | awk '{ print $1 }' | tr '\n' ' ')
releases=${releases% }
headers=$(echo "$kernels" | awk '{ print $3 }' | tr '\n' ' ')

# build: debian/control's Build-Depends (keep the two the same).
build="build-essential pkg-config debhelper dh-dkms
	libnl-3-dev libnl-genl-3-dev libsodium-dev libjson-c-dev libsystemd-dev
	libopenmpi-dev libmpich-dev libslurm-dev"
# module: bcs.ko for this host's kernels, by hand or with DKMS.
module="linux-headers-amd64 kmod dkms"
# rig: the guests (kernels, qemu, busybox, the MPIs' runtimes, ssh for
# mpirun, Slurm and munge, chrony's libraries, rt-tests), the debug kernel
# of make check-debug (gcc-multilib .. libssl-dev), lint, analysis and
# plots, the fuzzers (clang), lintian for make deb's check.
rig="qemu-system-x86 busybox-static sparse
	linux-source-6.1 $headers
	iproute2 nftables cpio xz-utils gzip procps util-linux perl
	openmpi-bin mpich gfortran binutils
	dropbear-bin openssh-client rt-tests
	gcc-multilib bc bison flex libelf-dev libssl-dev
	shellcheck python3-pyflakes gnuplot-nox
	libedit2 libgnutls30 libnettle8 libseccomp2 libcap2
	clang libclang-rt-dev python3
	lintian
	slurm-wlm munge
	prometheus"
packages="$build $module $rig"

missing=""
for p in $packages; do
	st=$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case $st in
	ii*) ;;
	*) missing="$missing $p" ;;
	esac
done
if [ -n "$missing" ]; then
	log "installing:$missing"
	# shellcheck disable=SC2086
	if ! timeout 1800 apt-get install -y -q --no-install-recommends $missing; then
		# A stale list can name versions no longer on the mirror.
		[ $updated = 0 ] || exit 1
		apt_update
		# shellcheck disable=SC2086
		timeout 1800 apt-get install -y -q --no-install-recommends $missing
	fi
fi

# Guest kernels: download the image package and unpack it; the stamp file
# holds the package version so a new Debian build of the same release is
# picked up.
mkdir -p "$BCS_CACHE/kernels" "$BCS_CACHE/debs"
echo "$kernels" | while read -r rel img _; do
	ver=$(apt-cache policy "$img" | awk '$1 == "Candidate:" { print $2 }')
	dest=$BCS_CACHE/kernels/$rel
	if [ -f "$dest/.bcs-unpacked" ] &&
	   [ "$(cat "$dest/.bcs-unpacked")" = "$img $ver" ]; then
		continue
	fi
	log "downloading and unpacking $img $ver"
	(
		cd "$BCS_CACHE/debs"
		rm -f "$img"_*.deb
		timeout 1800 apt-get download -q -o APT::Sandbox::User=root \
			"$img=$ver"
	)
	deb=$(ls "$BCS_CACHE/debs/$img"_*.deb)
	rm -rf "$dest.tmp" "$dest"
	dpkg-deb -x "$deb" "$dest.tmp"
	echo "$img $ver" > "$dest.tmp/.bcs-unpacked"
	mv "$dest.tmp" "$dest"
	rm -f "$deb"
done

# checkpatch.pl (with the data files it reads next to itself) and the
# kselftest headers from the 6.1 source tarball.
src=$BCS_CACHE/linux-source-6.1
srcver=$(dpkg-query -W -f '${Version}' linux-source-6.1)
if [ ! -f "$src/.bcs-unpacked" ] ||
   [ "$(cat "$src/.bcs-unpacked")" != "$srcver" ]; then
	log "unpacking parts of linux-source-6.1 $srcver"
	tarball=$(ls /usr/src/linux-source-6.1.tar.xz)
	tmp=$BCS_CACHE/linux-source-6.1.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	timeout 1200 tar -xJf "$tarball" -C "$tmp" --strip-components=1 \
		linux-source-6.1/scripts \
		linux-source-6.1/Documentation/dev-tools/checkpatch.rst \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	echo "$srcver" > "$tmp/.bcs-unpacked"
	# Keep anything else already unpacked there (others may have added
	# reference files); replace only what this script owns.
	mkdir -p "$src"
	rm -rf "$src/scripts" "$src/Documentation/dev-tools/checkpatch.rst" \
		"$src/tools/testing/selftests/kselftest_harness.h" \
		"$src/tools/testing/selftests/kselftest.h"
	cp -a "$tmp/." "$src/"
	rm -rf "$tmp"
fi

# chrony for the clocks of the cluster test bed (selftests/cluster), unpacked
# into $BCS_CACHE/chrony, not installed: the package would replace the
# host's time service and start chronyd on the host.  The test bed runs it
# only inside its network namespace, as a server that never adjusts the
# host's clock, and in the guests.  (The libraries above are its.)
chrony=$BCS_CACHE/chrony
chver=$(apt-cache policy chrony | awk '$1 == "Candidate:" { print $2 }')
if [ ! -f "$chrony/.bcs-unpacked" ] ||
   [ "$(cat "$chrony/.bcs-unpacked")" != "chrony $chver" ]; then
	log "downloading and unpacking chrony $chver"
	(
		cd "$BCS_CACHE/debs"
		rm -f chrony_*.deb
		timeout 600 apt-get download -q -o APT::Sandbox::User=root \
			"chrony=$chver"
	)
	rm -rf "$chrony.tmp" "$chrony"
	dpkg-deb -x "$(ls "$BCS_CACHE/debs"/chrony_*.deb)" "$chrony.tmp"
	echo "chrony $chver" > "$chrony.tmp/.bcs-unpacked"
	mv "$chrony.tmp" "$chrony"
	rm -f "$BCS_CACHE/debs"/chrony_*.deb
fi
"$chrony/usr/sbin/chronyd" -v > /dev/null ||
	{ echo "deps: $chrony/usr/sbin/chronyd does not run" >&2; exit 1; }

# Describe the kernels for the other scripts.
env=$BCS_CACHE/kernels.env
{
	echo "# Generated by scripts/deps.sh; see scripts/lib.sh."
	echo "BCS_KERNELS=\"$releases\""
	for rel in $releases; do
		case $rel in
		6.1.*)  echo "BCS_KERNEL_6_1=\"$rel\"" ;;
		6.12.*) echo "BCS_KERNEL_6_12=\"$rel\"" ;;
		esac
	done
	for rel in $releases; do
		key=$(bcs_key "$rel")
		echo "BCS_KDIR_$key=\"/usr/src/linux-headers-$rel\""
		echo "BCS_VMLINUZ_$key=\"$BCS_CACHE/kernels/$rel/boot/vmlinuz-$rel\""
		echo "BCS_MODDIR_$key=\"$BCS_CACHE/kernels/$rel/lib/modules/$rel\""
	done
} > "$env.tmp"
mv "$env.tmp" "$env"

# Sanity: everything named in kernels.env exists.
for rel in $releases; do
	for f in "/usr/src/linux-headers-$rel/Makefile" \
		 "$BCS_CACHE/kernels/$rel/boot/vmlinuz-$rel" \
		 "$BCS_CACHE/kernels/$rel/lib/modules/$rel/modules.order"; do
		if [ ! -e "$f" ]; then
			echo "deps: missing $f" >&2
			exit 1
		fi
	done
done
[ -f "$src/scripts/checkpatch.pl" ] || { echo "deps: no checkpatch.pl" >&2; exit 1; }
log "ok: kernels $releases"

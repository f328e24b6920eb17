#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh RELEASE MODDIR OUTPUT
#
# Build the test guest's initramfs: static busybox, the PID-1 script
# selftests/vm/init, and the modules of Debian kernel RELEASE (found under
# MODDIR, the unpacked lib/modules/RELEASE) that the guest needs to reach
# the host over 9p on virtio, plus virtio-net for multi-node set-ups and
# overlay for the system mode (run-vm.sh --system).
# Modules are stored uncompressed (busybox insmod does not decompress) and
# listed in /etc/bcs-modules in dependency order.

set -eu

[ $# = 3 ] || { echo "usage: $0 RELEASE MODDIR OUTPUT" >&2; exit 2; }
rel=$1
moddir=$2
output=$3
here=$(cd "$(dirname "$0")" && pwd)

# Modules wanted; their dependencies are added below.  Those built into
# this kernel (modules.builtin) are skipped.
wanted="virtio_pci 9pnet_virtio 9p virtio_net net_failover overlay"

stage=$(mktemp -d "${output}.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" \
	"$stage/tmp" "$stage/host" "$stage/etc" "$stage/lib/modules"

cp /bin/busybox "$stage/bin/busybox"
for applet in $(/bin/busybox --list); do
	[ "$applet" = busybox ] || ln -s busybox "$stage/bin/$applet"
done
ln -s bin "$stage/sbin"
cp "$here/init" "$stage/init"
chmod 755 "$stage/init"
# The kernel opens /dev/console for PID 1 before anything is mounted.
mknod -m 600 "$stage/dev/console" c 5 1
mknod -m 666 "$stage/dev/null" c 1 3

# Map module name (dashes and underscores are the same to the kernel) to
# its path relative to MODDIR.
norm()
{
	echo "$1" | tr - _
}

path_of()
{
	n=$(norm "$1")
	awk -v n="$n" '{
		b = $0; sub(/.*\//, "", b); sub(/\.ko(\.[a-z]+)?$/, "", b);
		gsub(/-/, "_", b);
		if (b == n) { print; exit }
	}' "$moddir/modules.order"
}

is_builtin()
{
	n=$(norm "$1")
	[ -f "$moddir/modules.builtin" ] || return 1
	sed 's|.*/||; s|\.ko$||; s|-|_|g' "$moddir/modules.builtin" |
		grep -qx "$n"
}

order=""
# Depth-first: a module's dependencies are listed before it.  "local" is
# not POSIX but dash and bash have it, and recursion needs it.
visit()
{
	# shellcheck disable=SC3043
	local n p f c d
	n=$(norm "$1")
	case " $order " in
	*" $n "*) return 0 ;;
	esac
	if is_builtin "$n"; then
		return 0
	fi
	p=$(path_of "$n")
	# modules.order lists kernel/... paths without the compression
	# suffix on some releases; the file on disk may carry one.
	f=""
	for c in "$moddir/$p" "$moddir/$p.xz" "$moddir/$p.zst" "$moddir/$p.gz"; do
		if [ -n "$p" ] && [ -f "$c" ]; then
			f=$c
			break
		fi
	done
	if [ -z "$f" ]; then
		echo "mkinitramfs: module $n not found for $rel" >&2
		exit 1
	fi
	for d in $(modinfo -F depends "$f" | tr , ' '); do
		visit "$d"
	done
	case $f in
	*.xz)  xz -dc "$f" > "$stage/lib/modules/$n.ko" ;;
	*.zst) zstd -dcq "$f" > "$stage/lib/modules/$n.ko" ;;
	*.gz)  gzip -dc "$f" > "$stage/lib/modules/$n.ko" ;;
	*)     cp "$f" "$stage/lib/modules/$n.ko" ;;
	esac
	order="$order $n"
}

for m in $wanted; do
	visit "$m"
done
for m in $order; do
	echo "$m"
done > "$stage/etc/bcs-modules"
echo "$rel" > "$stage/etc/bcs-release"

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
	gzip -1 > "$output.tmp"
mv "$output.tmp" "$output"
echo "mkinitramfs: $output ($rel; modules:$order)"

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shell helpers shared by the scripts in this directory; sourced, not run.
# Callers set "top" to the repository root before sourcing.

BCS_CACHE=${BCS_CACHE:-/var/cache/bcs}
BUILD=${BUILD:-$top/build}
case $BUILD in
/*) ;;
*) BUILD=$(pwd)/$BUILD ;;
esac
export BCS_CACHE BUILD

# Variable-name form of a kernel release: 6.12.117+deb12-amd64 becomes
# 6_12_117_deb12_amd64.
bcs_key()
{
	echo "$1" | tr -c 'A-Za-z0-9\n' '_'
}

# bcs_kvar KDIR|VMLINUZ|MODDIR RELEASE: print a per-kernel setting from
# kernels.env.
bcs_kvar()
{
	eval "echo \"\${BCS_$1_$(bcs_key "$2"):-}\""
}

# Load $BCS_CACHE/kernels.env written by scripts/deps.sh.  A BCS_KERNELS
# already set in the environment (a subset, e.g. "6.1" or a full release)
# takes precedence over the full list.
bcs_load_kernels()
{
	_bcs_user_kernels=${BCS_KERNELS:-}
	if [ ! -r "$BCS_CACHE/kernels.env" ]; then
		echo "$BCS_CACHE/kernels.env missing: run scripts/deps.sh (make deps)" >&2
		return 1
	fi
	. "$BCS_CACHE/kernels.env"
	# The debug kernel (scripts/debug-kernel.sh), when built: known by
	# name, never in the default list.
	if [ -r "$BCS_CACHE/kernels-debug.env" ]; then
		. "$BCS_CACHE/kernels-debug.env"
	fi
	if [ -n "$_bcs_user_kernels" ]; then
		# Short names (6.1, 6.12, debug) stand for their releases.
		BCS_KERNELS=""
		for _k in $_bcs_user_kernels; do
			BCS_KERNELS="${BCS_KERNELS:+$BCS_KERNELS }$(bcs_release "$_k")"
		done
	fi
	for _k in $BCS_KERNELS; do
		if [ -z "$(bcs_kvar KDIR "$_k")" ]; then
			echo "kernel $_k is not one of those set up by scripts/deps.sh" >&2
			return 1
		fi
	done
	export BCS_KERNELS
}

# Kernel release for a short name (6.1, 6.12, debug) or a full release.
bcs_release()
{
	case $1 in
	6.1)  echo "$BCS_KERNEL_6_1" ;;
	6.12) echo "$BCS_KERNEL_6_12" ;;
	debug) echo "${BCS_KERNEL_DEBUG:-debug}" ;;
	*)    echo "$1" ;;
	esac
}

# bcs_copy_src DEST: copy the module sources (Kbuild, module/, include/)
# into DEST for a private out-of-tree build, leaving behind any objects of
# an in-tree build, which belong to another kernel.
bcs_copy_src()
{
	rm -rf "$1"
	mkdir -p "$1"
	(cd "$top" && tar -cf - --exclude='*.o' --exclude='*.ko' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' \
		--exclude='*.d' --exclude='*.order' --exclude='*.symvers' \
		--exclude='.tmp_*' --exclude='module/generated' \
		Kbuild module include) | tar -xf - -C "$1"
}

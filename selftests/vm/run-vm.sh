#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-vm.sh --kernel RELEASE [options] -- COMMAND...
#
# Boot Debian kernel RELEASE (full release, or 6.1 / 6.12) in qemu (TCG)
# with the busybox initramfs of selftests/vm/, and run COMMAND as root in a
# chroot of this machine's root file system (read-only), with the working
# directory at the repository root and:
#
#   BCS_KVER    the guest kernel release
#   BCS_MODULE  $BUILD/kmod/<release>/bcs.ko (scripts/build-modules.sh)
#   BCS_OUT     a directory writable by the guest, at the same path here
#   BCS_SRC     the repository root
#
# The guest console is streamed to stdout and saved to $OUT/console.log;
# the guest's kernel log to $OUT/dmesg.txt.  The exit status is the
# command's, or non-zero if the guest kernel logged an oops, a warning, a
# lockdep report, a hung task, a leak at module unload or the like, or if
# the guest did not finish within the timeout.
#
# Options:
#   --timeout SEC   hard limit for the whole run (default 900)
#   --smp N         virtual CPUs (default 2)
#   --mem MB        guest memory (default 1024)
#   --out DIR       output directory (default $BUILD/vm/out/<release>);
#                   emptied first
#   --prefix STR    prefix for streamed console lines
#   --quiet         do not stream the console
#   --append STR    extra kernel command line
#   --qemu-arg ARG  extra qemu argument, may repeat (e.g. -netdev/-device
#                   pairs when several guests are connected)
#   --share DIR     also mount DIR read-write at the same path; several
#                   guests may share one directory (guest init: bcs_share=)
#   --system        systemd as PID 1 on a writable overlay of this
#                   machine's root (tmpfs upper layer: nothing the guest
#                   writes reaches this machine; the shares still do), so
#                   that the command can install packages and start units.
#                   The guest boots bcs-vm.target, basic.target and the
#                   command's unit only: nothing this machine has enabled
#                   starts, and timers.target and systemd-timesyncd are
#                   masked.  The command runs as bcs-vm-command.service,
#                   then the guest powers off through systemd
#   --icount SHIFT  instruction-counted guest: one TCG thread for all
#                   virtual CPUs, and the guest's clocks advance 2^SHIFT ns
#                   per instruction executed, whatever the host does
#                   (qemu -icount shift=SHIFT,align=off,sleep=off); for
#                   benchmarks whose ratios the host's load would blur.
#                   One virtual CPU only: qemu 7.2 hangs bringing up a
#                   second x86 CPU in this mode

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/selftests/vm
. "$top/scripts/lib.sh"

usage()
{
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

kernel=""
tmo=900
smp=2
mem=1024
out=""
prefix=""
quiet=0
append=""
qemu_extra=()
share=""
system=0
accel=tcg,thread=multi
icount=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel)   kernel=$2; shift 2 ;;
	--timeout)  tmo=$2; shift 2 ;;
	--smp)      smp=$2; shift 2 ;;
	--mem)      mem=$2; shift 2 ;;
	--out)      out=$2; shift 2 ;;
	--prefix)   prefix=$2; shift 2 ;;
	--quiet)    quiet=1; shift ;;
	--append)   append=$2; shift 2 ;;
	--qemu-arg) qemu_extra+=("$2"); shift 2 ;;
	--share)    share=$2; shift 2 ;;
	--system)   system=1; shift ;;
	--icount)
		case $2 in
		[0-9]|10) ;;
		*) echo "run-vm: --icount 0..10, not '$2'" >&2; exit 2 ;;
		esac
		accel=tcg,thread=single
		icount=(-icount "shift=$2,align=off,sleep=off")
		shift 2 ;;
	--)         shift; break ;;
	-h|--help)  usage ;;
	*)          echo "run-vm: unknown option $1" >&2; usage ;;
	esac
done
if [ -z "$kernel" ] || [ $# = 0 ]; then
	usage
fi
if [ ${#icount[@]} -gt 0 ] && [ "$smp" != 1 ]; then
	echo "run-vm: --icount needs --smp 1" >&2
	exit 2
fi

# The guest mounts fresh tmpfs file systems over /tmp, /run and /var/tmp
# and binds these back in place (guest init: bcs_keep=), so they may live
# anywhere; the kernel command line cannot carry spaces or commas in them.
keep="$top,$(mkdir -p "$BUILD" && cd "$BUILD" && pwd -P)"
case $keep in
*[[:space:]]*|*,*,*)
	echo "run-vm: '$top' or '$BUILD': no spaces or commas, please" >&2
	exit 2 ;;
esac

bcs_load_kernels
rel=$(bcs_release "$kernel")
vmlinuz=$(bcs_kvar VMLINUZ "$rel")
moddir=$(bcs_kvar MODDIR "$rel")
if [ -z "$vmlinuz" ] || [ ! -f "$vmlinuz" ]; then
	echo "run-vm: no kernel image for '$kernel': run scripts/deps.sh" >&2
	exit 2
fi

# The initramfs depends only on the kernel and on the files here.
vmdir=$BUILD/vm
mkdir -p "$vmdir"
initrd=$vmdir/initramfs-$rel.cpio.gz
# Guests booted together (selftests/cluster) must not build it twice.
exec 9> "$vmdir/.initramfs-$rel.lock"
flock 9
if [ ! -f "$initrd" ] || [ "$here/init" -nt "$initrd" ] ||
   [ "$here/mkinitramfs.sh" -nt "$initrd" ] || [ "$vmlinuz" -nt "$initrd" ]; then
	"$here/mkinitramfs.sh" "$rel" "$moddir" "$initrd" >&2
fi
exec 9>&-

out=${out:-$vmdir/out/$rel}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
case $out in
*[[:space:]]*) echo "run-vm: output path must not contain spaces" >&2; exit 2 ;;
/) echo "run-vm: refusing / as output directory" >&2; exit 2 ;;
esac
find "$out" -mindepth 1 -delete
if [ -n "$share" ]; then
	share=$(cd "$share" && pwd -P) || exit 2
	case $share in
	*[[:space:]]*|/) echo "run-vm: bad shared directory '$share'" >&2; exit 2 ;;
	esac
	qemu_extra+=(-virtfs "local,path=$share,mount_tag=bcsshare,security_model=none,multidevs=remap")
	append="bcs_share=$share $append"
fi
if [ $system = 1 ]; then
	# fstab=no: this machine's fstab names its disks, not the guest's.
	append="bcs_system=1 fstab=no systemd.gpt_auto=0 systemd.unit=bcs-vm.target systemd.show_status=error $append"
fi
mkdir -p "$out/.bcs-vm"

# Single-quote each word for the guest's /bin/sh.
quote()
{
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

{
	echo "export BCS_KVER=$(quote "$rel")"
	echo "export BCS_MODULE=$(quote "$BUILD/kmod/$rel/bcs.ko")"
	echo "export BCS_OUT=$(quote "$out")"
	echo "export BCS_SRC=$(quote "$top")"
	echo "export BUILD=$(quote "$BUILD")"
	echo "cd \"\$BCS_SRC\" || exit 125"
	printf 'exec'
	for a in "$@"; do
		printf ' %s' "$(quote "$a")"
	done
	echo
} > "$out/.bcs-vm/cmd.sh"

log=$out/console.log
# The guest gets a minute less than the hard limit so that it can still
# save its kernel log when the command hangs.
gtmo=$((tmo > 120 ? tmo - 60 : tmo * 3 / 4))
cmdline="console=ttyS0 loglevel=5 panic=-1 bcs_out=$out bcs_keep=$keep"
cmdline+=" bcs_timeout=$gtmo $append"

# shellcheck disable=SC2054 # commas are inside qemu option values
qemu=(qemu-system-x86_64
	-accel "$accel" "${icount[@]}" -cpu max -smp "$smp" -m "$mem"
	-nodefaults -display none -no-reboot
	-kernel "$vmlinuz" -initrd "$initrd" -append "$cmdline"
	-chardev "stdio,id=con,signal=off,logfile=$log"
	-serial chardev:con
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$out,mount_tag=bcsout,security_model=none,multidevs=remap"
	"${qemu_extra[@]}")

stream()
{
	if [ $quiet = 1 ]; then
		cat > /dev/null
	else
		# Serial lines end in CR LF.
		sed -u "s/\r\$//; s/^/$(printf '%s' "$prefix" | sed 's/[\/&]/\\&/g')/"
	fi
}

# A kernel that dies while it boots, before the command (and so bcs.ko)
# ever ran, is booted once more: under TCG a boot can crash on its own
# (6.12 has oopsed in early text patching).  The first console log is
# kept as console-boot1.log.
for attempt in 1 2; do
	echo "run-vm: booting $rel (smp $smp, ${mem}M, timeout ${tmo}s)" >&2
	start=$(date +%s.%N)
	set +e
	timeout -k 10 "$tmo" "${qemu[@]}" < /dev/null 2>"$out/qemu.err" |
		stream
	qrc=${PIPESTATUS[0]}
	set -e
	wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	[ -s "$out/qemu.err" ] && sed 's/^/run-vm: qemu: /' "$out/qemu.err" >&2

	tr -d '\r' < "$log" > "$log.tmp" && mv "$log.tmp" "$log"

	rc=$(sed -n 's/^bcs-vm: rc=\([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
	boot=$(sed -n 's/^bcs-vm: boot done uptime=\([0-9.]*\)$/\1/p' "$log" |
		tail -n 1)
	if [ -n "$boot" ] || [ "$qrc" = 124 ] || [ "$qrc" = 137 ] ||
	   [ "$attempt" = 2 ] || [ -f "$out/dmesg.txt" ]; then
		break
	fi
	echo "run-vm: $rel: the kernel died while booting, before the command ran; booting once more" >&2
	grep -E 'Oops|BUG:|Kernel panic' "$log" | head -n 3 | sed 's/^/run-vm:   /' >&2
	mv "$log" "$out/console-boot1.log"
done
cmd_end=$(sed -n 's/^bcs-vm: command done uptime=\([0-9.]*\)$/\1/p' "$log" | tail -n 1)

status=0
if [ -z "$rc" ]; then
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "run-vm: $rel: TIMEOUT: no result after ${tmo}s, qemu killed" >&2
	else
		echo "run-vm: $rel: guest gave no result (qemu rc=$qrc)" >&2
	fi
	status=125
elif [ "$rc" != 0 ]; then
	status=$rc
fi

# Kernel log problems.  The saved dmesg is complete up to the end of the
# command; console lines carrying a kernel timestamp cover what came later
# (or everything, when the guest died before saving it).
bad='Oops|BUG:|WARNING:|Call Trace|kernel BUG|general protection fault'
# Lockdep's reports are WARNINGs; after one (or when it runs out of room)
# it says it turns itself off.  Its boot banner is no report.
bad+='|possible circular locking|inconsistent lock state'
bad+='|turning off the locking correctness validator'
bad+='|hung_task|blocked for more than|soft lockup|hard LOCKUP'
bad+='|rcu: INFO|rcu_.*stall|Objects remaining|Slab cache still has objects'
bad+='|refcount_t:|list_add corruption|list_del corruption|UBSAN|KASAN'
bad+='|Kernel panic'
klog=$out/kernel-problems.txt
{
	last=0
	if [ -f "$out/dmesg.txt" ]; then
		grep -E "$bad" "$out/dmesg.txt" || true
		last=$(sed -n 's/^\[ *\([0-9][0-9]*\.[0-9]*\)\].*/\1/p' \
			"$out/dmesg.txt" | tail -n 1)
	fi
	awk -v last="${last:-0}" '
		match($0, /^\[ *[0-9]+\.[0-9]+\]/) {
			t = substr($0, 2, RLENGTH - 2) + 0
			if (t > last + 0) print
		}' "$log" | grep -E "$bad" || true
} > "$klog"

if [ -s "$klog" ]; then
	echo "run-vm: $rel: kernel log problems:" >&2
	head -n 60 "$klog" | sed 's/^/run-vm:   /' >&2
	[ "$status" != 0 ] || status=1
else
	rm -f "$klog"
fi

cmd_time="?"
if [ -n "$boot" ] && [ -n "$cmd_end" ]; then
	cmd_time=$(awk -v a="$boot" -v b="$cmd_end" 'BEGIN { print b - a }')
fi
printf 'run-vm: %s: rc=%s guest-rc=%s boot=%ss command=%ss wall=%.1fs\n' \
	"$rel" "$status" "${rc:-none}" "${boot:-?}" "$cmd_time" "$wall" >&2
exit "$status"

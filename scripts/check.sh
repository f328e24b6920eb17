#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: everything CI runs.  Installs what is missing (deps.sh),
# builds user space, the module for every guest kernel, lints, runs host
# unit tests, then boots each guest kernel in qemu and runs
# selftests/run-in-guest.sh there.  Every step counts as a test; the KTAP
# results from the guests are added up.  Ends with a KTAP-style totals line
# and "N passed, N failed"; exits non-zero if anything failed.
#
# Environment:
#   BCS_KERNELS     subset of kernels to test (default: all, see deps.sh)
#   BCS_VM_TIMEOUT  hard limit per guest run in seconds (default 1500)
#   BCS_CLUSTER     0: skip the three-guest cluster tests (selftests/cluster)
#   BCS_CLUSTER_KERNEL   their guest kernel (default 6.1)
#   BCS_CLUSTER_TIMEOUT  their hard limit in seconds (default 3000)
#   BCS_FUZZ_SECONDS     budget per fuzz target (default 10; make fuzz: 60)

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. "$top/scripts/lib.sh"

vm_timeout=${BCS_VM_TIMEOUT:-1500}
logdir=$BUILD/check
started=$(date +%s)

n=0
pass=0
fail=0
skip=0
tap=()		# step result lines, printed again in the summary
failed=()

record()	# record ok|fail|skip NAME [REASON]
{
	local line
	n=$((n + 1))
	case $1 in
	ok)   pass=$((pass + 1)); line="ok $n $2" ;;
	skip) skip=$((skip + 1)); line="ok $n $2 # SKIP ${3:-}" ;;
	*)    fail=$((fail + 1)); line="not ok $n $2"; failed+=("$2") ;;
	esac
	tap+=("$line")
	echo "$line"
}

# step NAME LOGFILE CMD...: run CMD with its output both shown and saved.
step()
{
	local name=$1 log=$2 t0 rc
	shift 2
	echo "# ---- $name: $*"
	t0=$(date +%s)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	echo "# ---- $name: rc=$rc ($(($(date +%s) - t0))s)"
	if [ "$rc" = 0 ]; then
		record ok "$name"
	else
		record fail "$name"
	fi
	return "$rc"
}

summary()
{
	local k
	echo
	echo "# ======== bcs check summary ($(($(date +%s) - started))s) ========"
	for k in ${BCS_KERNELS:-}; do
		[ -n "${vm_result[$k]:-}" ] && echo "# guest $k: ${vm_result[$k]}"
	done
	for t in "${tap[@]}"; do
		echo "# $t"
	done
	if [ ${#failed[@]} -gt 0 ]; then
		echo "# failed:"
		printf '#   %s\n' "${failed[@]}"
	fi
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	if [ "$skip" -gt 0 ]; then
		echo "$pass passed, $fail failed, $skip skipped"
	else
		echo "$pass passed, $fail failed"
	fi
}

declare -A vm_result=()

mkdir -p "$logdir"
echo "TAP version 13"

# --- set-up -----------------------------------------------------------------
if ! step deps "$logdir/deps.log" scripts/deps.sh; then
	summary
	exit 1
fi
if ! bcs_load_kernels; then
	record fail "kernels.env"
	summary
	exit 1
fi

# --- user space ---------------------------------------------------------------
# In dependency order; a directory without a Makefile is not written yet.
for d in libbcs tools libbcsmpi selftests bench daemon slurm; do
	if [ ! -f "$d/Makefile" ]; then
		echo "# $d has no Makefile yet; not built"
		record skip "build $d" "no Makefile"
		continue
	fi
	step "build $d" "$logdir/build-$d.log" make -C "$d"
done

# --- module -------------------------------------------------------------------
declare -A built=()
for rel in $BCS_KERNELS; do
	if BCS_KERNELS=$rel step "build module $rel" "$logdir/module-$rel.log" \
			make modules-all; then
		built[$rel]=1
	fi
done

step lint "$logdir/lint.log" make lint
# Every source file in design.rst's tables, a header per .c.
step layout "$logdir/layout.log" scripts/test-layout.sh

# --- host unit tests ----------------------------------------------------------
for d in libbcs tools libbcsmpi daemon slurm; do
	[ -f "$d/Makefile" ] || continue
	# Only directories whose Makefile has a "test" target.
	if make -C "$d" -n test > /dev/null 2>&1; then
		step "unit $d" "$logdir/unit-$d.log" make -C "$d" test
	fi
done
# A short run of each libFuzzer target of bcsd's parsers (make fuzz).
step fuzz "$logdir/fuzz.log" env FUZZ_SECONDS="${BCS_FUZZ_SECONDS:-10}" \
	scripts/fuzz.sh
step install "$logdir/install.log" scripts/test-install.sh
# The Debian packages, built and checked with lintian (make deb, about two
# minutes); installing them on the host is make check-deb's, not run here.
step deb "$logdir/deb.log" scripts/deb.sh

# --- guests -------------------------------------------------------------------
# Count the KTAP leaf results of a guest run.  Output of programs run by a
# wrapper may be nested by indentation or by "# " prefixes; a result line
# that follows deeper results is the summary of those and not counted again.
ktap_count()	# ktap_count LOG [all]: "all" for logs without guest markers
{
	awk -v all="${2:-}" '
	BEGIN { on = all == "all" }
	function depth(s,   d) {
		d = 0
		while (s ~ /^#( |$)/) { s = substr(s, 3); d += 100 }
		match(s, /^ */); d += RLENGTH
		return d
	}
	function strip(s) {
		while (s ~ /^#( |$)/) s = substr(s, 3)
		sub(/^ */, "", s)
		return s
	}
	/^bcs-vm: boot done/ { on = 1; next }
	/^bcs-vm: command done/ { on = 0 }
	!on { next }
	/^\[ *[0-9]+\.[0-9]+\]/ { next }
	{
		s = strip($0); d = depth($0)
		if (s ~ /^(KTAP|TAP) version/ || s ~ /^1\.\.[0-9]+/) {
			prev = d; next
		}
		if (s !~ /^(not )?ok [0-9]+/) next
		leaf = !(seen && prev > d)
		seen = 1; prev = d
		if (!leaf) {
			# A failed parent with no failed result below it (a
			# program that crashed or timed out) is a failure too.
			if (s ~ /^not ok/ && f + 0 == mark[d] + 0) {
				f++; sub(/^not ok [0-9]+ */, "", s)
				names = names "\n" s
			}
			mark[d] = f
			next
		}
		mark[d] = f
		if (s ~ /# *[Ss][Kk][Ii][Pp]/) { sk++; next }
		if (s ~ /^not ok/ && s !~ /# *(TODO|XFAIL)/) {
			f++; mark[d] = f
			sub(/^not ok [0-9]+ */, "", s); names = names "\n" s
			next
		}
		p++
	}
	END {
		printf "%d %d %d%s\n", p, f, sk, names
	}' "$1"
}

if [ ! -x selftests/run-in-guest.sh ] && [ ! -f selftests/run-in-guest.sh ]; then
	echo "# selftests/run-in-guest.sh missing; no guest tests"
	for rel in $BCS_KERNELS; do
		record skip "vm $rel" "no selftests/run-in-guest.sh"
	done
else
	for rel in $BCS_KERNELS; do
		if [ -z "${built[$rel]:-}" ]; then
			record fail "vm $rel"
			vm_result[$rel]="not run: module did not build"
			continue
		fi
		out=$logdir/vm-$rel
		step "vm $rel" "$logdir/vm-$rel.log" \
			selftests/vm/run-vm.sh --kernel "$rel" \
			--timeout "$vm_timeout" --out "$out" --prefix "[$rel] " \
			-- bash selftests/run-in-guest.sh
		if [ -f "$out/console.log" ]; then
			sed -n '/^bcs-vm: boot done/,/^bcs-vm: command done/p' \
				"$out/console.log" | grep -v '^\[ *[0-9]*\.[0-9]*\]' \
				> "$logdir/ktap-$rel.txt"
			res=$(ktap_count "$out/console.log")
			read -r p f s <<< "$(head -n 1 <<< "$res")"
			pass=$((pass + p))
			fail=$((fail + f))
			skip=$((skip + s))
			while IFS= read -r t; do
				[ -n "$t" ] && failed+=("$rel: $t")
			done < <(tail -n +2 <<< "$res")
			vm_result[$rel]="pass:$p fail:$f skip:$s (KTAP in $logdir/ktap-$rel.txt)"
		else
			vm_result[$rel]="no console log"
		fi
	done
fi

# --- cluster ------------------------------------------------------------------
# Three guests on a private bridge with bcsd (selftests/cluster): its own
# time limit, and its KTAP results count like the guests' above.
cl_rel=$(bcs_release "${BCS_CLUSTER_KERNEL:-6.1}")
if [ "${BCS_CLUSTER:-1}" = 0 ]; then
	record skip "cluster" "BCS_CLUSTER=0"
elif [ -z "${built[$cl_rel]:-}" ]; then
	record skip "cluster" "bcs.ko for $cl_rel not built in this run"
else
	cl_tmo=${BCS_CLUSTER_TIMEOUT:-3600}
	step cluster "$logdir/cluster.log" timeout -k 30 "$cl_tmo" \
		selftests/cluster/run-cluster.sh --kernel "$cl_rel" \
		--timeout "$((cl_tmo - 60))"
	res=$(ktap_count "$logdir/cluster.log" all)
	read -r p f s <<< "$(head -n 1 <<< "$res")"
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
	while IFS= read -r t; do
		[ -n "$t" ] && failed+=("cluster: $t")
	done < <(tail -n +2 <<< "$res")
	echo "# cluster: pass:$p fail:$f skip:$s (log in $logdir/cluster.log)"
fi

summary
[ "$fail" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The layout of the tree as Documentation/design.rst shows it ("Source
# files"):
#
#   every source file of the module, the daemon, the libraries, the tools
#   and the Slurm plugin is listed there, by its path from the top
#   (``daemon/core/loop.c``); a header of a .c of the same name goes with
#   it, a header of its own is listed by its path;
#   every path listed there exists;
#   every .c of bcsd (its tests, fuzz targets and stand-in aside) and of
#   bcs.ko (main.c aside) has a header of its own.

cd "$(dirname "$0")/.." || exit 1
. scripts/check-lib.sh

doc=Documentation/design.rst
mapfile -t srcs < <(git ls-files 'module/*.[ch]' 'daemon/*.[ch]' \
	'libbcs/*.[ch]' 'libbcsmpi/*.[ch]' 'tools/*.[ch]' 'slurm/*.[ch]' \
	'include/uapi/linux/*.h' |
	grep -v -e '/tests/' -e '^daemon/fuzz/')
[ "${#srcs[@]}" -gt 100 ]
check $? "${#srcs[@]} source files found"

# The literals of design.rst: ``text``.
lits=$(grep -o '``[^`]*``' "$doc" | sed 's/``//g' | sort -u)

listed()	# listed TEXT: TEXT is one of design.rst's literals
{
	grep -qxF -- "$1" <<< "$lits"
}

for f in "${srcs[@]}"; do
	case $f in
	*.h)
		c=${f%.h}.c
		if listed "$f" || { [ -f "$c" ] && listed "$c"; }; then
			ok=0
		else
			ok=1
		fi
		;;
	*)
		listed "$f"
		ok=$?
		;;
	esac
	check $ok "$f is listed in $doc"
done

# Paths the tables name exist (a literal with a slash and a source suffix),
# in git: a generated file (module/generated/) is made by the build.
while read -r p; do
	case $p in */generated/*) continue ;; esac
	git ls-files --error-unmatch "$p" > /dev/null 2>&1
	check $? "$doc names $p, which is in git"
done < <(grep -E '^(module|daemon|libbcs|libbcsmpi|tools|slurm|include)/[^ ]*\.[ch]$' <<< "$lits")

for f in "${srcs[@]}"; do
	case $f in
	daemon/sim/*|module/main.c|*.h) continue ;;
	daemon/*.c|module/*.c)
		[ -f "${f%.c}.h" ]
		check $? "$f has its own header"
		;;
	esac
done
# The build dependencies of the packages in their two places, the same:
# debian/control's Build-Depends and scripts/deps.sh's "build" list
# (debhelper-compat is debhelper's, dh-sequence-dkms dh-dkms's).
control=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control |
	sed -e 's/^Build-Depends://' -e '/^[A-Z]/d' | tr ',' '\n' |
	sed -e 's/[(<[].*//' -e 's/[[:space:]]//g' -e '/^$/d' \
	    -e 's/^debhelper-compat$/debhelper/' -e 's/^dh-sequence-dkms$/dh-dkms/' |
	sort -u | tr '\n' ' ')
deps=$(sed -n '/^build="/,/"$/p' scripts/deps.sh | sed -e 's/^build="//' \
	-e 's/"$//' | tr ' \t' '\n\n' | sed '/^$/d' |
	grep -vx build-essential | sort -u | tr '\n' ' ')
echo "# debian/control: $control"
[ -n "$control" ] && [ "$control" = "$deps" ]
check $? "debian/control's Build-Depends are scripts/deps.sh's build list${deps:+ ($deps)}"

checks_done test-layout

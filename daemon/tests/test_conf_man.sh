#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcsd.conf(5) lists every option of bcsd's table (cfg_opts,
# core/config.c), as `bcsd --help` prints it, with its default and range:
# its OPTIONS block is what scripts/man-bcsd-conf.sh makes of them (run it
# with --update after changing an option); the page and bcsd.8 pass
# `man --warnings`.

set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)/..
BCSD=${BCS_TEST_BCSD:-$(pwd)/bcsd}
. "$top/scripts/check-lib.sh"

out=$("$top/scripts/man-bcsd-conf.sh" --check "$BCSD" 2>&1)
rc=$?
[ $rc = 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
check $rc "bcsd.conf.5's options are bcsd's table (scripts/man-bcsd-conf.sh --check)"

# Every name of --help is in the page, as an entry of its own.
page=$top/Documentation/man/bcsd.conf.5
missing=
for n in $("$BCSD" --help | sed -n 's/^  --\([a-z0-9_]*\)=.*/\1/p'); do
	grep -qF "\\fB${n}\\fR " "$page" || missing="$missing $n"
done
n=$("$BCSD" --help | grep -c '^  --[a-z0-9_]*=')
[ "$n" -gt 40 ] && [ -z "$missing" ]
check $? "each of bcsd's $n options has its entry${missing:+ (missing:$missing)}"

if command -v man > /dev/null; then
	for p in bcsd.conf.5 bcsd.8; do
		w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l \
			"$top/Documentation/man/$p" 2>&1 > /dev/null)
		[ -z "$w" ] || printf '%s\n' "$w" | sed 's/^/# /'
		[ -z "$w" ]
		check $? "man --warnings $p: no warning"
	done
fi

checks_done test_conf_man

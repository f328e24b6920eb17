#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The options of bcsd.conf(5), made from bcsd's one table of options
# (cfg_opts in daemon/core/config.c) as `bcsd --help` prints it, so that
# the page cannot drift from the daemon:
#
#   scripts/man-bcsd-conf.sh [BCSD]           print the roff of the options
#   scripts/man-bcsd-conf.sh --update [BCSD]  rewrite them in the page,
#                                             between its BEGIN and END
#                                             OPTIONS comments
#   scripts/man-bcsd-conf.sh --check [BCSD]   fail if the page differs
#                                             (daemon/tests/test_conf_man.sh)
#
# BCSD defaults to daemon/bcsd of this tree.

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
page=$top/Documentation/man/bcsd.conf.5
mode=print
case ${1:-} in
--update|--check) mode=${1#--}; shift ;;
esac
bcsd=${1:-$top/daemon/bcsd}
begin='.\" BEGIN OPTIONS: made by scripts/man-bcsd-conf.sh from bcsd --help; do not edit'
end='.\" END OPTIONS'

# "  --name=META" then "      text (default "D"[, LO..HI])", per option.
options()
{
	"$bcsd" --help | awk '
	function esc(s) {
		gsub(/\\/, "\\e", s)
		gsub(/-/, "\\-", s)
		return s
	}
	function line(s) {
		if (s ~ /^[.'\'']/)
			s = "\\&" s
		print s
	}
	/^Options/ { on = 1; next }
	!on { next }
	/^  --/ {
		sub(/^  --/, "")
		name = $0; meta = ""
		if (i = index($0, "=")) {
			name = substr($0, 1, i - 1)
			meta = substr($0, i + 1)
		}
		next
	}
	/^      / {
		sub(/^      /, "")
		if (!match($0, / \(default "[^"]*"(, [0-9]+\.\.[0-9]+)?\)$/)) {
			print "man-bcsd-conf: cannot read: " $0 > "/dev/stderr"
			exit 1
		}
		text = substr($0, 1, RSTART - 1)
		tail = substr($0, RSTART + 11, RLENGTH - 12)
		def = tail; range = ""
		sub(/^"/, "", def); sub(/".*$/, "", def)
		if (tail ~ /", /) {
			range = tail; sub(/^.*", /, "", range)
		}
		if (meta == "N")
			m = "\\fInumber\\fR"
		else if (meta == "STR")
			m = "\\fIstring\\fR"
		else {
			m = esc(meta); gsub(/\|/, "\\fR|\\fB", m)
			m = "\\fB" m "\\fR"
		}
		print ".TP"
		print "\\fB" esc(name) "\\fR " m
		line(esc(text) ".")
		d = def == "" ? "empty" : "\\fB" esc(def) "\\fR"
		if (range != "")
			line("Default " d "; " esc(range) ".")
		else
			line("Default " d ".")
		n++
	}
	END { if (!n) exit 1 }'
}

gen=$(options)
if [ "$mode" = print ]; then
	printf '%s\n' "$gen"
	exit 0
fi

# The page with its options block replaced by $gen.
# (Through the environment: awk -v would read the backslashes.)
new=$(B=$begin E=$end G=$gen awk '
	$0 == ENVIRON["B"] { print; print ENVIRON["G"]; skip = 1; found++; next }
	$0 == ENVIRON["E"] { print; skip = 0; next }
	!skip { print }
	END { if (found != 1) exit 1 }' "$page") ||
	{ echo "man-bcsd-conf: no BEGIN/END OPTIONS block in $page" >&2; exit 1; }

if [ "$mode" = update ]; then
	printf '%s\n' "$new" > "$page.tmp"
	mv "$page.tmp" "$page"
	exit 0
fi
if ! diff -u "$page" <(printf '%s\n' "$new"); then
	echo "man-bcsd-conf: $page differs from bcsd's options:" \
		"run scripts/man-bcsd-conf.sh --update" >&2
	exit 1
fi

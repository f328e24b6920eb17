#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks of the shell and Python of the tree (`make lint`):
#
#   ShellCheck (-x, severity warning) over every tracked shell script
#   (*.sh, the guest's init, dkms.conf, the packages' maintainer
#   scripts), sourced files followed;
#   pyflakes3 over every tracked Python file.
#
# Exits non-zero if anything was found.

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
fail=0

for tool in shellcheck pyflakes3; do
	if ! command -v "$tool" > /dev/null; then
		echo "lint-scripts: $tool missing: run scripts/deps.sh" >&2
		exit 1
	fi
done

mapfile -t sh < <(git ls-files '*.sh' selftests/vm/init dkms.conf \
	'debian/*.postinst' 'debian/*.postrm')
echo "lint-scripts: shellcheck on ${#sh[@]} files"
if ! shellcheck -x -S warning "${sh[@]}"; then
	echo "lint-scripts: shellcheck: FAILED"
	fail=1
fi

mapfile -t py < <(git ls-files '*.py')
echo "lint-scripts: pyflakes3 on ${#py[@]} files"
if ! pyflakes3 "${py[@]}"; then
	echo "lint-scripts: pyflakes3: FAILED"
	fail=1
fi

[ $fail = 0 ] && echo "lint-scripts: ok"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bcsstat under valgrind, for `make test-valgrind`: the dynamically linked
# tests/bcsstat-dynamic (valgrind sees no allocations in a static binary);
# a leak or a memory error exits 99, which no test expects.  valgrind by
# its full path and no dirname: a test runs bcsstat with PATH=/nonexistent.
exec /usr/bin/valgrind -q --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
	"${0%/*}/bcsstat-dynamic" "$@"

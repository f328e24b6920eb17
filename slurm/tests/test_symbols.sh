#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_symbols.sh PLUGIN: the plugin exports what Slurm looks up (its name,
# type and versions, its hooks) and nothing of libbcs, and needs no
# library that a Slurm node may lack.

so=${1:-./bcs.so}
rc=0
syms=$(nm -D --defined-only "$so" | awk '{ print $3 }')
for s in plugin_name plugin_type plugin_version spank_plugin_version \
	 slurm_spank_init slurm_spank_init_post_opt \
	 slurm_spank_task_init_privileged slurm_spank_exit; do
	echo "$syms" | grep -qx "$s" || { echo "FAIL: $so does not export $s"; rc=1; }
done
other=$(echo "$syms" | grep -v -e '^plugin_' -e '^spank_plugin_version$' \
	-e '^slurm_spank_' -e '^_init$' -e '^_fini$' -e '^$')
[ -z "$other" ] || { echo "FAIL: $so exports more:" $other; rc=1; }
undef=$(nm -D --undefined-only "$so" | awk '{ print $2 }' |
	grep -e '^bcs_' -e '^cluster_')
[ -z "$undef" ] || { echo "FAIL: $so needs bcs symbols from outside:" $undef; rc=1; }
[ "$(strings "$so" | grep -c '^libbcs\.so')" = 0 ] ||
	{ echo "FAIL: $so needs libbcs.so"; rc=1; }
[ $rc = 0 ] && echo "ok: $so exports the plugin's symbols only"
exit $rc

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# slow-rank.sh: the worked example of Documentation/monitoring.rst.  Four
# ranks of bench/barrier (compute, then a barrier through rank 0) run in
# one bcs job on this node; rank 2 is given twice the work of the others.
# The job's distributions are recorded from the start, and bcsstat dist
# shows which rank it is: its bursts are twice as long, and the others
# sleep at the barrier while it computes.
#
# Run as root on a node with bcs.ko loaded, from the top of the tree,
# after `make -C tools && make -C bench`.  With DUMP_DIR set, the job's
# dump is also written there (DUMP_DIR/JOB-HOST.json) for bcsstat plot:
#
#   bcsstat plot ranks -o ranks.png DUMP_DIR/JOB-*.json

set -euo pipefail
PATH=$PWD/tools:$PATH
barrier=${BARRIER:-bench/barrier}
iters=${ITERS:-300}
work=${WORK:-300}

job=$(bcsctl job create)
trap 'bcsctl job destroy "$job" > /dev/null 2>&1 || :' EXIT
bcsctl stats enable "$job" --metric burst,blocked
pids=()
for rank in 0 1 2 3; do
	w=$work
	[ $rank = 2 ] && w=$((2 * work))
	bcsctl run --job "$job" -- "$barrier" --rank $rank --size 4 \
		--root 127.0.0.1:5411 --iters "$iters" --work "$w" &
	pids+=($!)
	echo "rank $rank: pid $! (work $w)"
done
wait "${pids[@]}"
echo "\$ bcsstat dist --job $job"
bcsstat dist --job "$job"
if [ -n "${DUMP_DIR:-}" ]; then
	bcsstat dump --job "$job" -o "$DUMP_DIR/$job-$(hostname).json"
fi

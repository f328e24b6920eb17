#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/gang_benefit.sh [--nodes N] [--repeat R] [--iters K] [--work W]
#                       [--slices "US..."] [--nodrain] [--variant "OPTS"]
#
# The makespan of two barrier jobs (one rank per node of the test bed,
# three nodes unless --nodes says otherwise) run one after the other, at
# once under plain time-sharing, and at once as bcs cluster jobs with
# 100 ms slices and the slices of --slices (default "1000 10000" us);
# prints a table with the ratios to the sequential run and plain/bcs.
# --nodrain adds every bcs slice length with bcs.ko's drain_us at 0, and
# --variant every bcs slice length with every bcsd given OPTS.  The
# cluster demo does the work (scripts/demo-cluster.sh --bench), and takes
# its other options.

exec "$(dirname "$0")/../scripts/demo-cluster.sh" --bench "$@"

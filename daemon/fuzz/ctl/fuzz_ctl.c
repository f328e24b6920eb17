// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: requests on bcsd's control socket, which any local
 * user may send, into ctl_parse().  An accepted request names a command
 * and carries fields in their ranges; a refused one has a message.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs.h>
#include <linux/bcs_hist.h>

#include "ctl/ctl_req.h"
#include "fuzz/fuzz_assert.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_req req;
	char err[128];
	int ret;

	ret = ctl_parse((const char *)data, size, &req, err, sizeof(err));
	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(err[0]);
		return 0;
	}
	FUZZ_ASSERT(req.cmd >= CTL_STATUS && req.cmd < __CTL_CMD_MAX);
	FUZZ_ASSERT(req.row == BCS_ROW_NONE || req.row < BCS_ROW_NONE);
	FUZZ_ASSERT(req.cmd != CTL_JOB_WAIT || req.job);
	FUZZ_ASSERT(req.timeout_ms <= INT64_MAX);
	/* A job's MPI processes: no metrics, a selection that fits. */
	FUZZ_ASSERT(req.cmd != CTL_STATS || !req.mpi ||
		    (req.job && req.dist_op < BCS_DIST_RELEASE &&
		     !req.metrics && !req.sub_bits &&
		     req.mpi_sub_bits >= -1 &&
		     req.mpi_sub_bits <= BCS_HIST_SUB_BITS_MAX &&
		     (req.dist_op == BCS_DIST_ENABLE ? req.mpi_sel[0] != 0 :
						      req.mpi_sub_bits == -1) &&
		     memchr(req.mpi_sel, 0, sizeof(req.mpi_sel))));
	FUZZ_ASSERT(req.cmd != CTL_STATS || req.mpi ||
		    (req.job && req.dist_op <= BCS_DIST_RELEASE &&
		     req.metrics <= BCS_DIST_ALL &&
		     (req.dist_op == BCS_DIST_RELEASE) == !req.metrics &&
		     req.sub_bits <= BCS_HIST_SUB_BITS_MAX &&
		     (req.dist_op == BCS_DIST_ENABLE || !req.sub_bits)));
	FUZZ_ASSERT(req.cmd != CTL_WINDOW ||
		    (req.from <= req.to && req.to <= INT64_MAX));
	FUZZ_ASSERT(req.cmd != CTL_SLICES ||
		    (req.last >= 1 && req.last <= UINT32_MAX));
	FUZZ_ASSERT(req.cmd != CTL_JOB_SIGNAL ||
		    (req.job && req.signal >= 1 &&
		     req.signal <= BCSP_SIGNAL_MAX));
	FUZZ_ASSERT(req.cmd != CTL_MPI_GATHER || req.job);
	FUZZ_ASSERT(req.cmd != CTL_JOB_ATTACH ||
		    (req.job && req.node && req.pid >= 1 &&
		     req.pid <= BCSP_PID_MAX));
	return 0;
}

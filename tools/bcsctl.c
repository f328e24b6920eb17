// SPDX-License-Identifier: GPL-2.0
/*
 * bcsctl - control bcs, the gang scheduler: jobs, modes, slices, strobes.
 * See bcsctl(8).
 */
#include <stdio.h>

#include <bcs.h>

#include "bcsctl.h"

int main(int argc, char **argv)
{
	struct bcsctl_req req;

	switch (bcsctl_parse(argc, argv, &req)) {
	case BCSCTL_PARSE_OK:
		return req.cmd->run(&req);
	case BCSCTL_PARSE_HELP:
		bcsctl_usage(stdout, req.cmd);
		return BCSCTL_EXIT_OK;
	case BCSCTL_PARSE_VERSION:
		printf("bcsctl %s (bcs interface %u)\n", LIBBCS_VERSION,
		       BCS_VERSION);
		return BCSCTL_EXIT_OK;
	default:
		fprintf(stderr, "bcsctl: %s\n", req.err);
		if (req.cmd)
			bcsctl_usage(stderr, req.cmd);
		else
			fprintf(stderr, "Try 'bcsctl --help'.\n");
		return BCSCTL_EXIT_USAGE;
	}
}

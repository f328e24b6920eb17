// SPDX-License-Identifier: GPL-2.0
/*
 * bcsctl - control bcs, the gang scheduler: jobs, modes, slices, strobes.
 * See bcsctl(1).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bcs.h>

#include "bcsctl.h"

int main(int argc, char **argv)
{
	struct bcsctl_req req;
	int rc;

	switch (bcsctl_parse(argc, argv, &req)) {
	case BCSCTL_PARSE_OK:
		rc = req.cmd->run(&req);
		/* Output that could not be written is a failure. */
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "bcsctl: writing the output: %s\n",
				strerror(errno));
			return rc ? rc : BCSCTL_EXIT_FAIL;
		}
		return rc;
	case BCSCTL_PARSE_HELP:
		bcsctl_usage(stdout, req.cmd, req.group);
		return BCSCTL_EXIT_OK;
	case BCSCTL_PARSE_VERSION:
		printf("bcsctl %s (bcs interface %u)\n", LIBBCS_VERSION,
		       BCS_VERSION);
		return BCSCTL_EXIT_OK;
	default:
		fprintf(stderr, "bcsctl: %s\n", req.err);
		if (req.cmd)
			bcsctl_usage(stderr, req.cmd, NULL);
		else if (req.group)
			bcsctl_usage(stderr, NULL, req.group);
		else
			fprintf(stderr, "Try 'bcsctl --help'.\n");
		return BCSCTL_EXIT_USAGE;
	}
}

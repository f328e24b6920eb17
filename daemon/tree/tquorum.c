// SPDX-License-Identifier: GPL-2.0
/*
 * The quorum of a standby master down a tree of daemons.
 *
 * With multicast a standby hears every node's report and counts them; down
 * a tree it hears only its own subtree, so it asks: once its master has
 * been silent for a while it probes every node of the nodes file, and each
 * answer says whether that node still hears a master (probe.c).  It takes
 * over only if no node that answered hears one (else only its own path to
 * the master broke, which the attach to another node mends), and if it and
 * the nodes that answered make the quorum.
 */
#include "tree/tquorum.h"

enum tq_verdict tq_decide(uint32_t nodes, uint32_t quorum, uint32_t answered,
			  uint32_t hearing, uint32_t *need)
{
	uint64_t have = (uint64_t)answered + 1;

	*need = quorum ? quorum : nodes / 2 + 1;
	if (hearing)
		return TQ_MASTER_HEARD;
	return have >= *need ? TQ_TAKE_OVER : TQ_NO_QUORUM;
}

const char *tq_verdict_name(enum tq_verdict v)
{
	switch (v) {
	case TQ_TAKE_OVER:
		return "take over";
	case TQ_MASTER_HEARD:
		return "master heard";
	case TQ_NO_QUORUM:
		return "no quorum";
	}
	return "?";
}

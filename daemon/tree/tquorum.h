/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tquorum.c: the quorum of a standby master down a tree of daemons
 * (Documentation/tree.rst, "The quorum of a standby").  A pure function:
 * no clock, no I/O, nothing else of bcsd.
 */
#ifndef BCSD_TQUORUM_H
#define BCSD_TQUORUM_H

#include <stdint.h>

enum tq_verdict {
	TQ_TAKE_OVER = 0,	/* nobody heard hears a master, enough heard */
	TQ_MASTER_HEARD,	/* a node heard still hears one: only our path broke */
	TQ_NO_QUORUM,		/* too few nodes answer: cut off ourselves */
};

/*
 * @nodes: the nodes of the nodes file; @quorum: the quorum option (0: more
 * than half of @nodes); @answered: the other nodes whose last answer to the
 * standby's quorum probes is recent; @hearing: of them, those that said
 * they hear a master.  The standby counts itself.
 */
enum tq_verdict tq_decide(uint32_t nodes, uint32_t quorum, uint32_t answered,
			  uint32_t hearing, uint32_t *need);

const char *tq_verdict_name(enum tq_verdict v);

#endif

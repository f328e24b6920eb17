// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of a standby's quorum down a tree (tquorum.c): a node
 * that still hears a master vetoes the take-over, the default quorum is a
 * majority of the nodes file with the standby counted, the option
 * overrides it, and the cases of tree.rst's "The quorum of a standby".
 */
#include "tree/tquorum.h"
#include "tests/unit.h"

int main(void)
{
	uint32_t need, n, a, h;
	enum tq_verdict v;

	/* Three guests: master dead, the standby hears node 3. */
	CHECK(tq_decide(3, 0, 1, 0, &need) == TQ_TAKE_OVER && need == 2);
	/* Only the standby's link broke: node 3 (or the master) hears. */
	CHECK(tq_decide(3, 0, 2, 1, &need) == TQ_MASTER_HEARD);
	CHECK(tq_decide(3, 0, 1, 1, &need) == TQ_MASTER_HEARD);
	/* Cut off from everyone. */
	CHECK(tq_decide(3, 0, 0, 0, &need) == TQ_NO_QUORUM && need == 2);
	/* Two nodes: a standby alone is never a majority, as with multicast. */
	CHECK(tq_decide(2, 0, 0, 0, &need) == TQ_NO_QUORUM && need == 2);
	CHECK(tq_decide(2, 1, 0, 0, &need) == TQ_TAKE_OVER && need == 1);
	/* Seven nodes, fan-out 2: the master dead, the other five answer. */
	CHECK(tq_decide(7, 0, 5, 0, &need) == TQ_TAKE_OVER && need == 4);
	CHECK(tq_decide(7, 0, 3, 0, &need) == TQ_TAKE_OVER);
	CHECK(tq_decide(7, 0, 2, 0, &need) == TQ_NO_QUORUM);
	/* The option. */
	CHECK(tq_decide(7, 7, 5, 0, &need) == TQ_NO_QUORUM && need == 7);
	CHECK(tq_decide(7, 6, 5, 0, &need) == TQ_TAKE_OVER);
	CHECK(tq_decide(1, 0, 0, 0, &need) == TQ_TAKE_OVER && need == 1);
	/* No overflow at the edges. */
	CHECK(tq_decide(UINT32_MAX, 0, UINT32_MAX, 0, &need) == TQ_TAKE_OVER);
	CHECK(tq_decide(1024, 0, 511, 0, &need) == TQ_NO_QUORUM && need == 513);
	CHECK(tq_decide(1024, 0, 512, 0, &need) == TQ_TAKE_OVER);
	/* Exhaustively over small clusters: the rule as tree.rst states it. */
	for (n = 1; n <= 40; n++)
		for (a = 0; a < n; a++)
			for (h = 0; h <= a; h++) {
				v = tq_decide(n, 0, a, h, &need);
				CHECK(v == (h ? TQ_MASTER_HEARD :
					    2 * (a + 1) > n ? TQ_TAKE_OVER :
					    TQ_NO_QUORUM));
			}
	CHECK(tq_verdict_name(TQ_NO_QUORUM)[0] == 'n');
	return unit_done("test_tquorum");
}

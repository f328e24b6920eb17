/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "bcs", through which bcsd drives strobes.
 */
#ifndef _BCS_NETLINK_H
#define _BCS_NETLINK_H

int bcs_netlink_init(void);
void bcs_netlink_exit(void);

#endif /* _BCS_NETLINK_H */

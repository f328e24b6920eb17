/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text views of bcs state under debugfs bcs/.
 */
#ifndef _BCS_DEBUGFS_H
#define _BCS_DEBUGFS_H

void bcs_debugfs_init(void);
void bcs_debugfs_exit(void);

#endif /* _BCS_DEBUGFS_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rx.c: datagram acceptance (decode, MAC, replay window, deadline); what
 * passes goes to the parts through dispatch().
 */
#ifndef BCSD_RX_H
#define BCSD_RX_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "proto/proto.h"

struct bcsd;

/* Every node may send: a replay window each. */
#define BCSD_MAX_SENDERS	BCSD_MAX_NODES
/* Parts of the largest map (proto.h): 100. */
#define BCSD_MAP_PARTS_MAX	\
	((BCSP_MAP_JOBS_MAX + BCSP_MAP_PART_JOBS - 1) / BCSP_MAP_PART_JOBS)

/* rx.c: datagram acceptance. */
struct bcsd_rx {
	struct {
		uint32_t sender;
		uint64_t heard_ms;	/* CLOCK_MONOTONIC */
		struct bcsp_window w;
	} windows[BCSD_MAX_SENDERS];
	uint64_t dup_id_said_ms;	/* another daemon with our node id */
	/* Rejections, said at most every RX_REJECT_LOG_MS. */
	uint64_t said[__BCSP_VERDICT_MAX];	/* cnt.rejected when last said */
	uint64_t said_ms;
	struct in_addr last_from;	/* the last rejected datagram's */
	/* The ids of the followed master's commands taken, each once. */
	struct bcsp_window cmds;
	/*
	 * The parts of the map being received (BCSP_MAP_PART_JOBS jobs
	 * each), of (epoch, master, version): bit k % 64 of @parts[k / 64],
	 * part k, of up to BCSD_MAP_PARTS_MAX.
	 */
	struct bcsd_map_asm {
		uint32_t epoch, master, version;
		bool started;
		uint64_t parts[(BCSD_MAP_PARTS_MAX + 63) / 64];
		struct bcsp_whole_map map;
	} map_asm;
};

/* rx.c: datagram acceptance; what passes goes to dispatch(). */
int rx_init(struct bcsd *d);
void rx_datagram(struct bcsd *d, const uint8_t *buf, size_t len,
		 const struct sockaddr_in *from);

#endif /* BCSD_RX_H */

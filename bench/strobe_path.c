// SPDX-License-Identifier: GPL-2.0
/*
 * strobe_path: the user-space part of bcsd's strobe path, measured.
 *
 *   strobe_path send --key FILE [--group G] [--port P] [--count N] [--interval-us U]
 *   strobe_path recv --key FILE [--group G] [--port P] [--count N] [--netlink]
 *   strobe_path watch --key FILE [--group G] [--port P] [--count N] --lead-us L
 *
 * The sender multicasts N signed strobes (daemon/proto/proto.c, the same code
 * bcsd uses) carrying their CLOCK_REALTIME send time.  The receiver, in
 * another network namespace or on another node, takes each one through
 * what bcsd does: receive, decode and check the tag, and with --netlink
 * hand it to bcs.ko (BCS_CMD_STROBE, for an empty row, so nothing is
 * suspended).  It prints the median, p99 and maximum of each step, in
 * microseconds.  Sender and receiver must share a clock (same host, or
 * synchronised nodes) for the "network" column to mean anything.
 *
 * watch listens to a bcsd master instead (cluster 1): for each of N strobes
 * it takes how long after the master's intended send time (the deadline
 * less the master's lead_us, L) the strobe arrived, and it counts the
 * slices the master skipped (gaps in the slice numbers).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "../daemon/proto/proto.h"
#include "bcs.h"

#define RECV_TIMEOUT_MS	3000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, uint64_t *v, size_t n)
{
	if (!n) {
		printf("  %-16s no samples\n", name);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("  %-16s p50 %9.1f  p99 %9.1f  max %9.1f us  (%zu)\n", name,
	       v[n / 2] / 1e3, v[(n * 99) / 100] / 1e3, v[n - 1] / 1e3, n);
}

static int open_socket(const char *group, uint16_t port, int recv,
		       struct sockaddr_in *ga)
{
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct ip_mreqn mreq = { 0 };
	int fd, one = 1;

	memset(ga, 0, sizeof(*ga));
	ga->sin_family = AF_INET;
	ga->sin_port = htons(port);
	if (inet_pton(AF_INET, group, &ga->sin_addr) != 1) {
		fprintf(stderr, "strobe_path: bad group %s\n", group);
		exit(2);
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (!recv)
		return fd;
	any.sin_port = htons(port);
	mreq.imr_multiaddr = ga->sin_addr;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&any, sizeof(any)) ||
	    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The next datagram into @buf and its arrival time; 0 for a failed
 * receive, -1 after RECV_TIMEOUT_MS without one.
 */
static ssize_t recv_timed(int fd, uint8_t *buf, size_t len, uint64_t *t_rx)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t r;

	if (poll(&pfd, 1, RECV_TIMEOUT_MS) <= 0)
		return -1;
	r = recv(fd, buf, len, 0);
	*t_rx = now_ns();
	return r < 0 ? 0 : r;
}

/* The watch mode: see the comment at the top. */
static int watch(int fd, const uint8_t *key, unsigned long count,
		 uint64_t lead_ns)
{
	uint64_t *late = calloc(count, sizeof(*late)), t_rx, send;
	uint64_t prev = 0, skipped = 0, first = 0;
	uint8_t buf[BCSP_MAX_LEN];
	struct bcsp_msg m;
	size_t n = 0;

	if (!late)
		return 1;
	while (n < count) {
		ssize_t r = recv_timed(fd, buf, sizeof(buf), &t_rx);

		if (r < 0)
			break;
		if (bcsp_decode(buf, (size_t)r, 1, key, &m) != BCSP_OK ||
		    m.hdr.type != BCSP_STROBE)
			continue;
		send = m.strobe.deadline_ns - lead_ns;
		late[n++] = t_rx > send ? t_rx - send : 0;
		if (!first)
			first = m.strobe.slice;
		else if (m.strobe.slice > prev + 1)
			skipped += m.strobe.slice - prev - 1;
		prev = m.strobe.slice;
	}
	printf("strobes: %zu received, slices %llu..%llu, %llu skipped (%.2f%%)\n",
	       n, (unsigned long long)first, (unsigned long long)prev,
	       (unsigned long long)skipped,
	       prev > first ? 100.0 * (double)skipped / (double)(prev - first) : 0.0);
	report("late after send", late, n);
	free(late);
	return n ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "group", required_argument, NULL, 'g' },
		{ "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "interval-us", required_argument, NULL, 'i' },
		{ "netlink", no_argument, NULL, 'N' },
		{ "lead-us", required_argument, NULL, 'l' },
		{ 0 }
	};
	const char *keyfile = NULL, *group = "239.255.66.84";
	unsigned long count = 1000, interval_us = 1000, lead_us = 0, i;
	uint64_t *net, *mac, *nl, t_rx, t_mac, t_nl;
	size_t n_net = 0, n_mac = 0, n_nl = 0;
	uint8_t key[BCSP_KEY_LEN], buf[BCSP_MAX_LEN];
	struct bcs_nl *bnl = NULL;
	struct sockaddr_in ga;
	struct bcsp_msg m;
	uint16_t port = 5401;
	int c, fd, len, use_nl = 0, sending, watching, err;
	char errbuf[256];

	if (argc < 2 || (strcmp(argv[1], "send") && strcmp(argv[1], "recv") &&
			 strcmp(argv[1], "watch"))) {
		fprintf(stderr, "usage: strobe_path send|recv|watch --key FILE [options]\n");
		return 2;
	}
	sending = !strcmp(argv[1], "send");
	watching = !strcmp(argv[1], "watch");
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			keyfile = optarg;
			break;
		case 'g':
			group = optarg;
			break;
		case 'p':
			port = (uint16_t)atoi(optarg);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 10);
			break;
		case 'i':
			interval_us = strtoul(optarg, NULL, 10);
			break;
		case 'N':
			use_nl = 1;
			break;
		case 'l':
			lead_us = strtoul(optarg, NULL, 10);
			break;
		default:
			return 2;
		}
	}
	if (!keyfile || !count || count > 10000000 || sodium_init() < 0)
		return 2;
	if (bcsp_load_key(keyfile, key, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "strobe_path: %s\n", errbuf);
		return 1;
	}
	fd = open_socket(group, port, !sending, &ga);
	if (fd < 0) {
		perror("strobe_path: socket");
		return 1;
	}

	if (sending) {
		for (i = 0; i < count; i++) {
			memset(&m, 0, sizeof(m));
			m.hdr.type = BCSP_STROBE;
			m.hdr.cluster = 1;
			m.hdr.epoch = 1;
			m.hdr.sender = 1;
			m.hdr.seq = i + 1;
			m.strobe.slice = i + 1;
			m.strobe.slice_ns = 1000000;
			m.strobe.row = BCS_ROWS_MAX - 1;
			m.strobe.deadline_ns = now_ns();	/* send time */
			len = bcsp_encode(&m, key, buf, sizeof(buf));
			if (len < 0 || sendto(fd, buf, (size_t)len, 0,
					      (struct sockaddr *)&ga, sizeof(ga)) != len) {
				perror("strobe_path: sendto");
				return 1;
			}
			usleep((useconds_t)interval_us);
		}
		return 0;
	}

	if (watching)
		return watch(fd, key, count, lead_us * 1000);

	net = calloc(count, sizeof(*net));
	mac = calloc(count, sizeof(*mac));
	nl = calloc(count, sizeof(*nl));
	if (!net || !mac || !nl)
		return 1;
	if (use_nl) {
		err = bcs_nl_open(&bnl);
		if (!err)
			err = bcs_nl_drive(bnl, 1000000, 0);
		if (err) {
			fprintf(stderr, "strobe_path: netlink: %s\n",
				bcs_strerror(err, BCS_CTX_NETLINK));
			return 1;
		}
	}
	for (i = 0; i < count; i++) {
		ssize_t r = recv_timed(fd, buf, sizeof(buf), &t_rx);

		if (r < 0)
			break;
		if (bcsp_decode(buf, (size_t)r, 1, key, &m) != BCSP_OK)
			continue;
		t_mac = now_ns();
		net[n_net++] = t_rx - m.strobe.deadline_ns;
		mac[n_mac++] = t_mac - t_rx;
		if (bnl) {
			/* Deadline now: the module switches at once. */
			err = bcs_nl_strobe(bnl, m.strobe.slice, m.strobe.row,
					    0, 0, BCS_STROBE_NOW);
			t_nl = now_ns();
			if (!err)
				nl[n_nl++] = t_nl - t_mac;
		}
	}
	if (bnl) {
		bcs_nl_release(bnl);
		bcs_nl_close(bnl);
	}
	printf("strobe path: %zu of %lu strobes received\n", n_net, count);
	report("network", net, n_net);
	report("decode+MAC", mac, n_mac);
	if (use_nl)
		report("netlink strobe", nl, n_nl);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bcsp_flood: send forged bcsd datagrams to the cluster's group as fast as
 * this process can, for the cluster test of a flood (selftests/cluster/
 * test-flood.sh).
 *
 *   bcsp_flood GROUP PORT IFADDR FILE SECONDS
 *
 * FILE holds a datagram captured from the group (bcsp-inject.py capture):
 * each one sent is a copy with a sequence number of its own and a random
 * tag, which only the cluster key could make right, so every receiver
 * checks the tag (one HMAC) and rejects it as bad MAC.  Batches of 64 go
 * out with one sendmmsg() each.  Prints "sent N flood datagrams in S s
 * (D not queued)".
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH	64
#define MAX_LEN	1400
#define TAG_LEN	32

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: bcsp_flood GROUP PORT IFADDR FILE SECONDS\n");
	return 2;
}

int main(int argc, char **argv)
{
	static uint8_t buf[BATCH][MAX_LEN];
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	unsigned long long sent = 0, dropped = 0;
	struct in_addr ifaddr;
	uint64_t seq, be;
	double end;
	int fd, secs, i, n, ttl = 1;
	size_t len;
	FILE *f;

	if (argc != 6)
		return usage();
	secs = atoi(argv[5]);
	to.sin_port = htons((uint16_t)atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &to.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[3], &ifaddr) != 1 || secs <= 0)
		return usage();
	f = fopen(argv[4], "rb");
	if (!f) {
		perror(argv[4]);
		return 1;
	}
	len = fread(buf[0], 1, MAX_LEN, f);
	fclose(f);
	if (len < 32 + TAG_LEN) {
		fprintf(stderr, "%s: not a datagram\n", argv[4]);
		return 1;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ifaddr,
		       sizeof(ifaddr)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl))) {
		perror("socket");
		return 1;
	}
	memcpy(&be, buf[0] + 24, 8);
	seq = be64toh(be) + 1;
	for (i = 0; i < BATCH; i++) {
		memcpy(buf[i], buf[0], len);
		iov[i] = (struct iovec){ buf[i], len };
		msg[i] = (struct mmsghdr){ .msg_hdr = {
			.msg_name = &to, .msg_namelen = sizeof(to),
			.msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	end = now() + secs;
	while (now() < end) {
		for (i = 0; i < BATCH; i++) {
			be = htobe64(seq++);
			memcpy(buf[i] + 24, &be, 8);
			if (getrandom(buf[i] + len - TAG_LEN, TAG_LEN, 0) !=
			    TAG_LEN)
				return 1;
		}
		n = sendmmsg(fd, msg, BATCH, 0);
		if (n < 0) {
			if (errno != ENOBUFS && errno != EAGAIN) {
				perror("sendmmsg");
				return 1;
			}
			n = 0;
		}
		sent += (unsigned long long)n;
		dropped += (unsigned long long)(BATCH - n);
	}
	printf("sent %llu flood datagrams in %d s (%llu not queued)\n", sent,
	       secs, dropped);
	close(fd);
	return 0;
}

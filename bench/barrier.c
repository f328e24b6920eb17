// SPDX-License-Identifier: GPL-2.0
/*
 * barrier: a bulk-synchronous parallel program over TCP, the kind of job
 * gang scheduling is for.  N ranks (one per node) repeat: a fixed amount
 * of computation, then a barrier through rank 0.  A rank that is
 * descheduled on its node holds up every other rank at the barrier, so
 * the run time shows how well the ranks are co-scheduled.
 *
 *   barrier --rank R --size N --root HOST[:PORT] [--iters K] [--work N]
 *           [--spin]
 *
 * Rank 0 listens on PORT (default 5400) at HOST; the others connect to it.
 * The computation is a fixed number of loop iterations (--work, in
 * thousands), not a time, so that a descheduled rank takes longer.
 *
 * With --spin a rank waiting at the barrier polls its socket instead of
 * sleeping in recv(), as MPI libraries do by default: under plain
 * time-sharing a waiting rank then burns the CPU its node could give to
 * the other job, which is where co-scheduling pays most.  Rank 0
 * prints one line: "barrier: size N iters K work W elapsed_s S".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "work.h"

#define MAX_RANKS	256
#define CONNECT_TRIES	300	/* 100 ms apart: 30 s for the root to come up */

static int spin;

static void die(const char *what)
{
	fprintf(stderr, "barrier: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void xfer(int fd, int send_it)
{
	char c = 'b';
	ssize_t n;

	do {
		n = send_it ? send(fd, &c, 1, MSG_NOSIGNAL) :
			      recv(fd, &c, 1, spin ? MSG_DONTWAIT : 0);
	} while (n < 0 && (errno == EINTR || (spin && errno == EAGAIN)));
	if (n != 1) {
		if (!n)
			errno = ECONNRESET;
		die(send_it ? "send" : "recv");
	}
}

static int tcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		die("socket");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	return fd;
}

static void resolve(const char *spec, struct sockaddr_in *sa)
{
	char host[256], *colon;
	struct addrinfo hints = { .ai_family = AF_INET }, *ai;

	snprintf(host, sizeof(host), "%s", spec);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(5400);
	colon = strrchr(host, ':');
	if (colon) {
		*colon = '\0';
		sa->sin_port = htons((uint16_t)atoi(colon + 1));
	}
	if (getaddrinfo(host, NULL, &hints, &ai)) {
		fprintf(stderr, "barrier: cannot resolve %s\n", host);
		exit(1);
	}
	sa->sin_addr = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
	freeaddrinfo(ai);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rank", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "root", required_argument, NULL, 'R' },
		{ "iters", required_argument, NULL, 'i' },
		{ "work", required_argument, NULL, 'w' },
		{ "spin", no_argument, NULL, 'S' },
		{ 0 }
	};
	unsigned long iters = 1000, work = 100, it;
	int rank = -1, size = 0, fds[MAX_RANKS], lfd, fd, c, r, try;
	const char *root = NULL;
	struct sockaddr_in sa;
	double t0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rank = atoi(optarg);
			break;
		case 's':
			size = atoi(optarg);
			break;
		case 'R':
			root = optarg;
			break;
		case 'i':
			iters = strtoul(optarg, NULL, 10);
			break;
		case 'w':
			work = strtoul(optarg, NULL, 10);
			break;
		case 'S':
			spin = 1;
			break;
		default:
			return 2;
		}
	}
	if (!root || size < 1 || size > MAX_RANKS || rank < 0 || rank >= size) {
		fprintf(stderr, "usage: barrier --rank R --size N --root HOST[:PORT]\n"
				"               [--iters K] [--work N] [--spin]\n");
		return 2;
	}
	resolve(root, &sa);

	if (rank == 0) {
		lfd = tcp_socket();
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, size))
			die("listen");
		for (r = 1; r < size; r++) {
			fds[r] = accept(lfd, NULL, NULL);
			if (fds[r] < 0)
				die("accept");
			fd = 1;
			setsockopt(fds[r], IPPROTO_TCP, TCP_NODELAY, &fd, sizeof(fd));
		}
		close(lfd);
	} else {
		fd = -1;
		for (try = 0; try < CONNECT_TRIES; try++) {
			fd = tcp_socket();
			if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
				break;
			close(fd);
			fd = -1;
			usleep(100000);
		}
		if (fd < 0)
			die("connect");
		fds[0] = fd;
	}

	/* One barrier to start together. */
	t0 = now_s();
	for (it = 0; it <= iters; it++) {
		if (it)
			bench_work(work);
		if (rank == 0) {
			for (r = 1; r < size; r++)
				xfer(fds[r], 0);
			for (r = 1; r < size; r++)
				xfer(fds[r], 1);
		} else {
			xfer(fds[0], 1);
			xfer(fds[0], 0);
		}
		if (!it)
			t0 = now_s();
	}
	if (rank == 0)
		printf("barrier: size %d iters %lu work %lu wait %s elapsed_s %.3f\n",
		       size, iters, work, spin ? "spin" : "block", now_s() - t0);
	return 0;
}

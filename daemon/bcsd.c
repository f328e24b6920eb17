// SPDX-License-Identifier: GPL-2.0
/*
 * bcsd: the bcs daemon.  A master keeps the matrix of jobs and rows and
 * multicasts one authenticated strobe per slice; a node receives strobes
 * and hands them to bcs.ko over generic netlink.  One process can be both.
 *
 * One poll() loop serves the UDP socket, two timerfds (the master's strobe
 * deadlines and a housekeeping tick) and the bcsctl control socket.
 * Signals only set flags.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/bcs.h>
#include <sodium.h>

#include "bcsd.h"
#include "log.h"

#define BCSD_CONF_DEFAULT	"/etc/bcs/bcsd.conf"
/* Bounds of the housekeeping tick's period (tick_period_ms()). */
#define BCSD_TICK_MS_MIN	10
#define BCSD_TICK_MS_MAX	100
/* Datagrams taken per recvmmsg() call, up to four calls per wake-up. */
#define BCSD_RX_BATCH		16

volatile sig_atomic_t bcsd_stop;
volatile sig_atomic_t bcsd_dump;

uint64_t now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t now_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000ULL + (uint64_t)ts.tv_nsec / 1000000;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		bcsd_dump = 1;
	else
		bcsd_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bcsd [-f FILE] [--name=value...]   run the daemon\n"
		"       bcsd --genkey FILE                   write a new cluster key (mode 0600)\n"
		"       bcsd --print-config [-f FILE] [...]  show the configuration and exit\n"
		"       bcsd --version                       show the version and exit\n"
		"\n"
		"  -f, --config FILE  configuration file (default " BCSD_CONF_DEFAULT ")\n"
		"  -h, --help         this help\n"
		"\nOptions (also \"name value\" lines in the configuration file):\n");
	cfg_print_help(f);
}

static int genkey(const char *path)
{
	uint8_t key[BCSP_KEY_LEN];
	FILE *f;
	int fd, i;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "bcsd: %s: %s\n", path, strerror(errno));
		return 1;
	}
	randombytes_buf(key, sizeof(key));
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return 1;
	}
	for (i = 0; i < BCSP_KEY_LEN; i++)
		fprintf(f, "%02x", key[i]);
	fputc('\n', f);
	sodium_memzero(key, sizeof(key));
	if (fclose(f)) {
		fprintf(stderr, "bcsd: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

/* The daemon's view and counters, for the stats file and bcsctl status. */
struct json_object *bcsd_counters_json(const struct bcsd *d)
{
	struct json_object *o = json_object_new_object();
	uint32_t fresh, need;

	add_u64(o, "node_id", d->node_id);
	json_object_object_add(o, "active_master",
			       json_object_new_boolean(d->active));
	add_u64(o, "master_id", d->have_master ? d->master_id : 0);
	add_u64(o, "epoch", d->master_epoch);
	add_u64(o, "slice", d->master_slice);
	add_u64(o, "rx", d->cnt.rx);
	add_u64(o, "strobes_rx", d->cnt.strobes_rx);
	add_u64(o, "strobe_copies", d->cnt.strobe_copies);
	add_u64(o, "strobes_forwarded", d->cnt.strobes_forwarded);
	add_u64(o, "strobes_stale_map", d->cnt.strobes_stale_map);
	add_u64(o, "strobes_tx", d->cnt.strobes_tx);
	add_u64(o, "strobe_copies_tx", d->cnt.strobe_copies_tx);
	add_u64(o, "kernel_errors", d->cnt.kernel_errors);
	add_u64(o, "jobs_superseded", d->cnt.jobs_superseded);
	add_u64(o, "takeovers", d->cnt.takeovers);
	add_u64(o, "stepdowns", d->cnt.stepdowns);
	add_u64(o, "master_changes", d->cnt.master_changes);
	view_quorum(d, now_mono_ms(), &fresh, &need);
	add_u64(o, "nodes_reporting", fresh);
	add_u64(o, "nodes_heard", d->nr_peers);
	add_u64(o, "quorum", need);
	return o;
}

/* The maps applied to bcs.ko, oldest first, each with its job -> row. */
static struct json_object *map_history_json(const struct bcsd *d)
{
	struct json_object *a = json_object_new_array(), *o, *rows;
	uint32_t n = d->map_history_n, i, k;
	char id[16];

	for (i = n > BCSD_MAP_HISTORY ? n - BCSD_MAP_HISTORY : 0; i < n; i++) {
		const struct bcsd_map_event *ev =
			&d->map_history[i % BCSD_MAP_HISTORY];

		o = json_object_new_object();
		add_u64(o, "applied_ns", ev->applied_ns);
		add_u64(o, "from_slice", ev->from_slice);
		add_u64(o, "epoch", ev->epoch);
		add_u64(o, "master", ev->master);
		add_u64(o, "version", ev->version);
		rows = json_object_new_object();
		for (k = 0; k < ev->nr_jobs; k++) {
			snprintf(id, sizeof(id), "%u", ev->job[k]);
			add_u64(rows, id, ev->row[k]);
		}
		json_object_object_add(o, "rows", rows);
		json_object_array_add(a, o);
	}
	return a;
}

void bcsd_write_stats(struct bcsd *d)
{
	const char *path = d->cfg.stats_file;
	struct json_object *o, *rej;
	char tmp[CFG_STR_MAX + 8];
	int i, fd;

	if (!*path)
		return;
	o = bcsd_counters_json(d);
	rej = json_object_new_object();
	for (i = 1; i < __BCSP_VERDICT_MAX; i++)
		add_u64(rej, bcsp_verdict_name(i), d->cnt.rejected[i]);
	json_object_object_add(o, "rejected", rej);
	json_object_object_add(o, "maps", map_history_json(d));
	/* A fresh file of our own (mkstemp): never one a link points to. */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0 || json_object_to_fd(fd, o, JSON_C_TO_STRING_PRETTY) ||
	    fchmod(fd, 0644) || rename(tmp, path)) {
		pr_warn("cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
	}
	if (fd >= 0)
		close(fd);
	json_object_put(o);
}

/*
 * The window of @sender, or a free one.  When the table is full, the
 * window of the sender heard from longest ago makes room if that was more
 * than WINDOW_EXPIRY_MS ago (nodes come and go over a daemon's life);
 * NULL if none is that old.
 */
#define WINDOW_EXPIRY_MS	60000

static struct bcsp_window *window_of(struct bcsd *d, uint32_t sender)
{
	uint64_t now = now_mono_ms();
	int i, free_slot = -1, oldest = -1;

	for (i = 0; i < BCSD_MAX_SENDERS; i++) {
		if (d->windows[i].w.used && d->windows[i].sender == sender)
			goto found;
		if (!d->windows[i].w.used) {
			if (free_slot < 0)
				free_slot = i;
		} else if (oldest < 0 || d->windows[i].heard_ms <
					 d->windows[oldest].heard_ms) {
			oldest = i;
		}
	}
	if (free_slot < 0 && oldest >= 0 &&
	    now - d->windows[oldest].heard_ms > WINDOW_EXPIRY_MS) {
		memset(&d->windows[oldest].w, 0, sizeof(d->windows[oldest].w));
		free_slot = oldest;
	}
	if (free_slot < 0)
		return NULL;
	i = free_slot;
	d->windows[i].sender = sender;
found:
	d->windows[i].heard_ms = now;
	return &d->windows[i].w;
}

/*
 * A datagram that names this daemon as its sender: its own, looped back,
 * if it carries a sequence number it has sent.  Any other is a replay of
 * an earlier run, or comes from another daemon with the same node id,
 * which would break the cluster in ways hard to see: say so.
 */
static enum bcsp_verdict own_verdict(struct bcsd *d, const struct bcsp_msg *m,
				     const struct sockaddr_in *from)
{
	char addr[INET_ADDRSTRLEN] = "?";
	uint64_t now;

	if (m->hdr.seq >= d->seq_first && m->hdr.seq < d->seq)
		return BCSP_OK;
	now = now_mono_ms();
	if (m->hdr.seq >= d->seq &&
	    (!d->dup_id_warned_ms || now - d->dup_id_warned_ms > 60000)) {
		d->dup_id_warned_ms = now;
		inet_ntop(AF_INET, &from->sin_addr, addr, sizeof(addr));
		pr_err("another daemon at %s sends with this node id (%u): give every node its own node_id",
		       addr, d->node_id);
	}
	return BCSP_REPLAY;
}

/*
 * Is @m from a master at least as senior as the one we follow?  Seniority
 * is (epoch, priority, sender id), compared in that order.
 */
static bool from_senior_master(const struct bcsd *d, const struct bcsp_msg *m)
{
	const struct bcsp_hdr *h = &m->hdr;

	if (!d->have_master)
		return true;
	if (h->epoch != d->master_epoch)
		return h->epoch > d->master_epoch;
	if (h->priority != d->master_priority)
		return h->priority > d->master_priority;
	return h->sender >= d->master_id;
}

static void follow_master(struct bcsd *d, const struct bcsp_msg *m,
			  const struct sockaddr_in *from)
{
	if (!d->have_master || d->master_id != m->hdr.sender ||
	    d->master_epoch != m->hdr.epoch) {
		if (d->have_master)
			d->cnt.master_changes++;
		pr_notice("following master %u epoch %u", m->hdr.sender,
			  m->hdr.epoch);
	}
	d->have_master = true;
	d->master_id = m->hdr.sender;
	d->master_epoch = m->hdr.epoch;
	d->master_priority = m->hdr.priority;
	d->master_addr = *from;
	d->master_heard_ms = now_mono_ms();
	d->no_quorum_said = false;
	if (m->hdr.epoch > d->max_epoch_seen)
		d->max_epoch_seen = m->hdr.epoch;
}

static void on_datagram(struct bcsd *d, const uint8_t *buf, size_t len,
			const struct sockaddr_in *from)
{
	struct bcsp_window *w;
	enum bcsp_verdict v;
	struct bcsp_msg m;
	bool own, outranks;

	d->cnt.rx++;
	v = bcsp_decode(buf, len, d->cluster, d->key, &m);
	own = v == BCSP_OK && m.hdr.sender == d->node_id;
	if (own)
		v = own_verdict(d, &m, from);
	if (v == BCSP_OK && !own) {
		w = window_of(d, m.hdr.sender);
		v = w ? bcsp_window_check(w, m.hdr.epoch, m.hdr.seq) : BCSP_STALE;
	}
	if (v == BCSP_OK && !own && m.hdr.type == BCSP_STROBE)
		v = bcsp_strobe_verdict(&m.strobe, now_real_ns(),
					d->cfg.stale_slices);
	if (v != BCSP_OK) {
		/* Said by say_rejected(): a flood costs no log line each. */
		d->cnt.rejected[v]++;
		d->rejected_from = from->sin_addr;
		return;
	}
	if (m.hdr.epoch > d->max_epoch_seen)
		d->max_epoch_seen = m.hdr.epoch;

	switch (m.hdr.type) {
	case BCSP_STROBE:
		if (own)
			return;	/* our own strobe, looped back */
		if (!from_senior_master(d, &m)) {
			d->cnt.rejected[BCSP_STALE]++;
			return;
		}
		/*
		 * A copy of a strobe already followed (the master sends each
		 * strobe_copies times), or one overtaken by a later strobe:
		 * it keeps the master alive and changes nothing else.
		 */
		if (d->have_master && d->master_id == m.hdr.sender &&
		    d->master_epoch == m.hdr.epoch &&
		    m.strobe.slice <= d->master_slice) {
			d->master_heard_ms = now_mono_ms();
			d->cnt.strobe_copies++;
			return;
		}
		/* Before following it: the master it replaces counts. */
		outranks = d->master_role && master_outranks(d, &m);
		follow_master(d, &m, from);
		d->master_slice = m.strobe.slice;
		d->cnt.strobes_rx++;
		if (d->master_role)
			master_heard_other(d, &m, outranks);
		if (d->node_role)
			node_on_strobe(d, &m);
		break;
	case BCSP_MAP:
		if (own || !d->have_master || m.hdr.sender != d->master_id ||
		    m.hdr.epoch != d->master_epoch)
			return;
		d->map = m.map;
		d->map_epoch = m.hdr.epoch;
		d->map_master = m.hdr.sender;
		d->have_map = true;
		if (d->node_role)
			node_on_map(d, m.hdr.epoch, m.hdr.sender, &m.map);
		break;
	case BCSP_REPORT:
		if (own)
			return;	/* looped back; send_report() took it */
		view_on_report(d, m.hdr.sender, &m.report, now_mono_ms());
		if (d->master_role)
			master_report_epoch(d, &m);
		/* fall through */
	case BCSP_REQUEST:
		if (own)
			return;	/* never sent to ourselves */
		if (d->master_role && d->active)
			master_on_msg(d, &m);
		break;
	case BCSP_REPLY:
		/*
		 * To the group: the node that asked takes it, and standbys
		 * keep it for retries after a take-over.
		 */
		if (own || !d->have_master || m.hdr.sender != d->master_id)
			return;
		ctl_on_reply(d, &m);
		if (d->master_role)
			master_heard_reply(d, &m);
		break;
	}
}

/*
 * Datagrams come in bursts (copies of a strobe, a map after it): take
 * what is queued with one recvmmsg(), and stop when a call returns less
 * than a full batch, which saves a last call that finds nothing.
 */
static void on_socket(struct bcsd *d)
{
	static uint8_t buf[BCSD_RX_BATCH][BCSP_MAX_LEN + 1];
	struct sockaddr_in from[BCSD_RX_BATCH];
	struct mmsghdr msg[BCSD_RX_BATCH];
	struct iovec iov[BCSD_RX_BATCH];
	int round, n, i;

	/* Bounded: a flood cannot starve the timers. */
	for (round = 0; round < 4; round++) {
		for (i = 0; i < BCSD_RX_BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
			msg[i] = (struct mmsghdr){ .msg_hdr = {
				.msg_name = &from[i],
				.msg_namelen = sizeof(from[i]),
				.msg_iov = &iov[i], .msg_iovlen = 1 } };
		}
		n = recvmmsg(d->sock, msg, BCSD_RX_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return;
		for (i = 0; i < n; i++)
			on_datagram(d, buf[i], msg[i].msg_len, &from[i]);
		if (n < BCSD_RX_BATCH)
			return;
	}
}

/*
 * Say what was rejected since it was last said, at most every
 * BCSD_REJECT_LOG_MS: a sender of forged datagrams shows in the log, and
 * a flood of them costs one line, not one each.
 */
#define BCSD_REJECT_LOG_MS	10000

static void say_rejected(struct bcsd *d)
{
	char what[256], addr[INET_ADDRSTRLEN] = "?";
	uint64_t now = now_mono_ms(), n, total = 0;
	size_t off = 0;
	int i;

	if (d->rejected_said_ms &&
	    now - d->rejected_said_ms < BCSD_REJECT_LOG_MS)
		return;
	what[0] = '\0';
	for (i = 1; i < __BCSP_VERDICT_MAX; i++) {
		n = d->cnt.rejected[i] - d->rejected_said[i];
		d->rejected_said[i] = d->cnt.rejected[i];
		if (!n)
			continue;
		total += n;
		if (off < sizeof(what))
			off += (size_t)snprintf(what + off, sizeof(what) - off,
						"%s%s %llu", off ? ", " : "",
						bcsp_verdict_name(i),
						(unsigned long long)n);
	}
	if (!total)
		return;
	inet_ntop(AF_INET, &d->rejected_from, addr, sizeof(addr));
	pr_notice("rejected %llu datagram(s) (%s), the last from %s",
		  (unsigned long long)total, what, addr);
	d->rejected_said_ms = now;
}

static void drain_timerfd(int fd)
{
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		pr_warn("timerfd: %s", strerror(errno));
}

/*
 * The tick watches for a silent master and times out requests and
 * reports; a quarter of the failover silence is fine enough for that.
 * Every tick wakes bcsd, which preempts the jobs it runs beside: on a
 * busy node each wake-up costs the job a context switch, so the tick is
 * no more frequent than it must be.
 */
static long tick_period_ms(const struct bcsd *d)
{
	uint64_t ms = d->cfg.failover_slices * d->slice_ns /
		      1000000 / 4;

	if (ms > d->cfg.report_ms)
		ms = d->cfg.report_ms;
	if (ms < BCSD_TICK_MS_MIN)
		ms = BCSD_TICK_MS_MIN;
	if (ms > BCSD_TICK_MS_MAX)
		ms = BCSD_TICK_MS_MAX;
	return (long)ms;
}

static int start_tick(struct bcsd *d)
{
	long ms = tick_period_ms(d);
	struct itimerspec its = {
		.it_value = { ms / 1000, ms % 1000 * 1000000L },
		.it_interval = { ms / 1000, ms % 1000 * 1000000L },
	};

	d->tick_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->tick_tfd < 0 || timerfd_settime(d->tick_tfd, 0, &its, NULL)) {
		pr_err("timerfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int run(struct bcsd *d)
{
	struct pollfd *pfd = calloc(4 + d->nr_clients, sizeof(*pfd));
	struct bcsd_client **map = calloc(d->nr_clients + 1, sizeof(*map));
	unsigned int i;
	int n, nc, ret = 0;

	if (!pfd || !map) {
		pr_err("out of memory");
		ret = -1;
		bcsd_stop = 1;
	}
	while (!bcsd_stop) {
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = d->sock, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d->tick_tfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d->strobe_tfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d->ctl_fd, .events = POLLIN };
		nc = 0;
		for (i = 0; i < d->nr_clients; i++) {
			if (d->clients[i].fd < 0)
				continue;
			map[nc++] = &d->clients[i];
			pfd[n++] = (struct pollfd){ .fd = d->clients[i].fd,
						    .events = POLLIN };
		}
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				goto signals;
			pr_err("poll: %s", strerror(errno));
			ret = -1;
			break;
		}
		if (pfd[2].revents & POLLIN) {
			drain_timerfd(d->strobe_tfd);
			master_on_strobe_timer(d);
		}
		if (pfd[0].revents & POLLIN)
			on_socket(d);
		if (pfd[1].revents & POLLIN) {
			drain_timerfd(d->tick_tfd);
			if (d->master_role)
				master_tick(d);
			if (d->node_role)
				node_tick(d);
			ctl_tick(d);
			say_rejected(d);
		}
		/* Before accepting, which may hand a slot to a new client. */
		for (i = 0; i < (unsigned int)nc; i++)
			if (pfd[4 + i].revents && map[i]->fd >= 0)
				ctl_on_client(d, map[i]);
		if (pfd[3].revents & POLLIN)
			ctl_accept(d);
signals:
		if (bcsd_dump) {
			bcsd_dump = 0;
			bcsd_write_stats(d);
		}
	}
	free(pfd);
	free(map);
	return ret;
}

static uint32_t default_node_id(void)
{
	char host[256] = "";
	uint32_t h = 2166136261u;	/* FNV-1a */
	const char *p;

	gethostname(host, sizeof(host) - 1);
	for (p = host; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h ? h : 1;
}

/*
 * Strobes are time-critical and the nodes are busy by design: the jobs'
 * ranks keep every CPU running.  As an ordinary task, bcsd would wait
 * behind them for a scheduler slice before the master sends a strobe or
 * a node passes one on; at SCHED_FIFO it preempts them at once, and with
 * its memory locked it never waits for a page.  Not getting either is
 * worth a warning, not a refusal to start.
 */
static void set_realtime(const struct bcsd *d)
{
	int prio = (int)d->cfg.rt_priority;
	struct sched_param sp = { .sched_priority = prio };

	if (!prio)
		return;
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		pr_warn("rt_priority %d: %s: strobes may be late on busy CPUs",
			prio, strerror(errno));
	else if (mlockall(MCL_CURRENT | MCL_FUTURE))
		pr_warn("cannot lock memory: %s", strerror(errno));
}

static int setup(struct bcsd *d)
{
	char err[256];

	d->cluster = d->cfg.cluster;
	d->node_id = d->cfg.node_id;
	if (!d->node_id)
		d->node_id = default_node_id();
	d->master_role = d->cfg.role != CFG_ROLE_NODE;
	d->node_role = d->cfg.role != CFG_ROLE_MASTER;
	d->slice_ns = (uint64_t)d->cfg.slice_us * 1000;
	/* Nodes hold only a few strobes ahead of their deadlines. */
	if (d->master_role && d->cfg.lead_us >=
			      BCSD_LEAD_SLICES_MAX * d->cfg.slice_us) {
		pr_err("lead_us %llu must be less than %d slices (%llu us)",
		       (unsigned long long)d->cfg.lead_us,
		       BCSD_LEAD_SLICES_MAX, (unsigned long long)
		       (BCSD_LEAD_SLICES_MAX * d->cfg.slice_us));
		return -1;
	}
	d->sock = d->strobe_tfd = d->tick_tfd = d->ctl_fd = -1;

	if (bcsp_load_key(d->cfg.key_file, d->key, err, sizeof(err))) {
		if (access(d->cfg.key_file, F_OK) && errno == ENOENT)
			pr_err("cluster key: %s: make one with 'bcsd --genkey %s' and copy it to every node",
			       err, d->cfg.key_file);
		else
			pr_err("cluster key: %s", err);
		return -1;
	}
	/* Sequence numbers start from the clock so a restart never reuses one. */
	d->seq = now_real_ns();
	d->seq_first = d->seq;
	if (net_open(d) || start_tick(d))
		return -1;
	if (d->master_role && master_init(d))
		return -1;
	if (d->node_role && node_init(d))
		return -1;
	if (ctl_open(d))
		return -1;
	set_realtime(d);
	pr_notice("started: role %s, node %u, cluster %u, group %s:%u",
		  cfg_role_name(d->cfg.role), d->node_id, d->cluster,
		  d->cfg.group, d->cfg.port);
	return 0;
}

static void teardown(struct bcsd *d)
{
	if (d->node_role)
		node_exit(d);
	ctl_close(d);
	bcsd_write_stats(d);
	if (d->sock >= 0)
		close(d->sock);
	if (d->tick_tfd >= 0)
		close(d->tick_tfd);
	if (d->strobe_tfd >= 0)
		close(d->strobe_tfd);
	sodium_memzero(d->key, sizeof(d->key));
}

enum { OPT_GENKEY = 1000, OPT_PRINT, OPT_VERSION, OPT_CFG_BASE = 2000 };

int main(int argc, char **argv)
{
	struct option longopts[64 + 8];	/* the options, then bcsd's own */
	const char *conf = BCSD_CONF_DEFAULT, *genkey_path = NULL;
	bool conf_given = false, print = false;
	struct sigaction sa = { .sa_handler = on_signal };
	static struct bcsd d;
	char err[256];
	unsigned int i;
	int c, ret;

	if (sodium_init() < 0) {
		fprintf(stderr, "bcsd: libsodium failed to initialise\n");
		return 1;
	}
	cfg_init(&d.cfg);
	i = cfg_longopts(longopts, OPT_CFG_BASE);
	longopts[i++] = (struct option){ "config", required_argument, NULL, 'f' };
	longopts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[i++] = (struct option){ "genkey", required_argument, NULL,
					 OPT_GENKEY };
	longopts[i++] = (struct option){ "print-config", no_argument, NULL,
					 OPT_PRINT };
	longopts[i++] = (struct option){ "version", no_argument, NULL,
					 OPT_VERSION };
	longopts[i] = (struct option){ 0 };

	while ((c = getopt_long(argc, argv, "f:h", longopts, NULL)) != -1) {
		if (c >= OPT_CFG_BASE) {
			if (cfg_set(&d.cfg, cfg_opts[c - OPT_CFG_BASE].name,
				    optarg, true, err, sizeof(err))) {
				fprintf(stderr, "bcsd: %s\n", err);
				return 2;
			}
			continue;
		}
		switch (c) {
		case 'f':
			conf = optarg;
			conf_given = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_GENKEY:
			genkey_path = optarg;
			break;
		case OPT_PRINT:
			print = true;
			break;
		case OPT_VERSION:
			printf("bcsd %s (bcs interface %u)\n", bcsd_version,
			       BCS_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bcsd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (genkey_path)
		return genkey(genkey_path);
	if (cfg_read_file(&d.cfg, conf, conf_given, err, sizeof(err))) {
		fprintf(stderr, "bcsd: %s\n", err);
		return 2;
	}
	if (print) {
		cfg_dump(&d.cfg, stdout);
		return 0;
	}

	log_setup("bcsd", d.cfg.log == CFG_LOG_SYSLOG, (int)d.cfg.verbose);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = setup(&d) ? 1 : run(&d) ? 1 : 0;
	teardown(&d);
	pr_notice("stopped");
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bcsd: the bcs daemon.  A master keeps the matrix of jobs and rows and
 * multicasts one authenticated strobe per slice; a node receives strobes
 * and hands them to bcs.ko over generic netlink.  One process can be both.
 *
 * This file starts the parts (each registers its descriptors with the
 * loop), runs the loop until a signal stops it, and stops the parts in
 * the reverse order; SIGHUP reloads the configuration and the keys
 * (reload()).  Signals only set flags.  The parts and their files are
 * listed in Documentation/design.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/bcs.h>
#include <sodium.h>

#include "bcsd.h"
#include "core/log.h"
#include "core/notify.h"
#include "ctl/ctl.h"
#include "master/master.h"
#include "node/node.h"
#include "node/record.h"
#include "clock/probe.h"
#include "node/switches.h"
#include "node/collect.h"
#include "node/tgnode.h"
#include "node/filler.h"

#define BCSD_CONF_DEFAULT	"/etc/bcs/bcsd.conf"

static volatile sig_atomic_t bcsd_stop;
static volatile sig_atomic_t bcsd_dump;
static volatile sig_atomic_t bcsd_reload;

/* The configuration file, read again on SIGHUP. */
static const char *conf_path = BCSD_CONF_DEFAULT;
static bool conf_given;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		bcsd_dump = 1;
	else if (sig == SIGHUP)
		bcsd_reload = 1;
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

static uint32_t default_node_id(void)
{
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	return cfg_node_id_of(host);
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

/*
 * The keys of @c: key_file's into @key, the second of a rotation
 * (key_file_next or key_file_old, never both: a datagram costs at most
 * two HMACs) into @key2, *@have2 whether there is one.  0, or -1 with
 * the reason logged; nothing is written then.
 */
static int load_keys(const struct cfg *c, uint8_t key[BCSP_KEY_LEN],
		     uint8_t key2[BCSP_KEY_LEN], bool *have2)
{
	const char *second = c->key_file_next[0] ? c->key_file_next :
			     c->key_file_old;
	uint8_t k[BCSP_KEY_LEN], k2[BCSP_KEY_LEN];
	char err[256];

	if (c->key_file_next[0] && c->key_file_old[0]) {
		pr_err("key_file_next and key_file_old: one at a time (a rotation has two keys, key_file and one of them)");
		return -1;
	}
	if (bcsp_load_key(c->key_file, k, err, sizeof(err))) {
		if (access(c->key_file, F_OK) && errno == ENOENT)
			pr_err("cluster key: %s: make one with 'bcsd --genkey %s' and copy it to every node",
			       err, c->key_file);
		else
			pr_err("cluster key: %s", err);
		return -1;
	}
	if (second[0] && bcsp_load_key(second, k2, err, sizeof(err))) {
		pr_err("second cluster key (%s): %s",
		       c->key_file_next[0] ? "key_file_next" : "key_file_old",
		       err);
		sodium_memzero(k, sizeof(k));
		return -1;
	}
	memcpy(key, k, BCSP_KEY_LEN);
	*have2 = second[0];
	if (*have2)
		memcpy(key2, k2, BCSP_KEY_LEN);
	sodium_memzero(k, sizeof(k));
	sodium_memzero(k2, sizeof(k2));
	return 0;
}

static bool is_master(const struct bcsd *d)
{
	return d->master_role;
}

static bool is_node(const struct bcsd *d)
{
	return d->node_role;
}

/*
 * The stats' sections of the records that have no part of their own to
 * start: the active master's clock offsets (offsets.c) and global records
 * (global.c).  The tree registers its own (tree.c).
 */
static struct json_object *stats_offsets(const struct bcsd *d)
{
	return offsets_json(d, now_real_ns());
}

static struct json_object *stats_global(const struct bcsd *d)
{
	return global_json(d, BCSD_GLOBAL_SLICES);
}

/* The parts, in the order they start; they stop in the reverse. */
static const struct bcsd_part {
	bool (*wanted)(const struct bcsd *d);	/* NULL: always */
	int (*init)(struct bcsd *d);
	void (*exit)(struct bcsd *d);
} parts[] = {
	{ NULL,		loop_init,	loop_exit },
	{ NULL,		notify_init,	NULL },
	{ NULL,		rx_init,	NULL },
	{ NULL,		tree_init,	tree_exit },
	{ NULL,		reduce_init,	reduce_exit },
	{ NULL,		net_init,	net_exit },
	{ is_master,	master_init,	master_exit },
	{ is_node,	node_init,	node_exit },
	{ is_node,	record_init,	record_exit },
	{ is_node,	collect_init,	collect_exit },
	{ is_node,	tgnode_init,	tgnode_exit },
	{ is_node,	switches_init,	switches_exit },
	{ is_node,	filler_init,	filler_exit },
	{ NULL,		probe_init,	probe_exit },
	{ NULL,		ctl_init,	ctl_exit },
	{ NULL,		metrics_init,	metrics_exit },
};

/* Started, or that failed to: the parts to stop. */
static unsigned int nr_started;

static int setup(struct bcsd *d)
{
	const struct bcsd_part *p;

	d->cluster = d->cfg.cluster;
	d->node_id = d->cfg.node_id;
	if (!d->node_id)
		d->node_id = default_node_id();
	d->master_role = d->cfg.role != CFG_ROLE_NODE;
	d->node_role = d->cfg.role != CFG_ROLE_MASTER;
	d->slice_ns = (uint64_t)d->cfg.slice_us * 1000;
	/* Nodes hold only a few strobes ahead of their deadlines. */
	if (d->master_role &&
	    d->cfg.lead_us >= BCSD_LEAD_SLICES_MAX * d->cfg.slice_us) {
		pr_err("lead_us %u must be less than %d slices (%u us)",
		       d->cfg.lead_us, BCSD_LEAD_SLICES_MAX,
		       BCSD_LEAD_SLICES_MAX * d->cfg.slice_us);
		return -1;
	}
	if (load_keys(&d->cfg, d->key, d->key2, &d->have_key2))
		return -1;
	/* Sequence numbers start from the clock so a restart never reuses one. */
	d->net.seq = now_real_ns();
	d->net.seq_first = d->net.seq;
	stats_register(d, "offsets", stats_offsets);
	stats_register(d, "global", stats_global);
	for (p = parts; p < parts + ARRAY_SIZE(parts); p++) {
		if (p->wanted && !p->wanted(d))
			continue;
		nr_started = (unsigned int)(p - parts) + 1;
		if (p->init(d))
			return -1;
	}
	set_realtime(d);
	pr_notice("started: role %s, node %u, cluster %u, group %s:%u%s",
		  cfg_role_name(d->cfg.role), d->node_id, d->cluster,
		  d->cfg.group, d->cfg.port,
		  d->have_key2 ? ", a second key accepted" : "");
	return 0;
}

/* STATUS= of the unit (systemctl status). */
static void say_ready(const struct bcsd *d, const char *what,
		      unsigned int restart)
{
	char status[192];

	snprintf(status, sizeof(status),
		 "%s: role %s, node %u, cluster %u%s%s", what,
		 cfg_role_name(d->cfg.role), d->node_id, d->cluster,
		 d->have_key2 ? ", two keys (rotation)" : "",
		 restart ? ", options changed that need a restart" : "");
	notify_ready(status);
}

/*
 * SIGHUP: read the configuration file again over the command line's
 * options (which still win), and the key files.  An option a reload can
 * apply (cfg_is_live()) takes its new value; one that needs a restart
 * (addresses, role, the parts' sizes) keeps its value, with a warning.
 * Nothing else stops or starts: the sockets, the jobs and the master
 * followed stay, so the cluster sees no change but the new values.  The
 * keys change between two datagrams (one thread): with the rotation's
 * second key (key_file_next, key_file_old) every daemon accepts both
 * while they move from one to the other.  A file that cannot be read,
 * an option or a key refused: nothing changes.
 */
static void reload(struct bcsd *d)
{
	char err[256], was[CFG_STR_MAX], now[CFG_STR_MAX];
	uint8_t key[BCSP_KEY_LEN], key2[BCSP_KEY_LEN];
	unsigned int i, restart = 0;
	struct cfg n;
	bool have2;

	notify_reloading();
	cfg_init(&n);
	for (i = 0; i < cfg_nr_opts; i++) {
		if (!(d->cfg.from_cmdline[i / 64] & (1ULL << (i % 64))))
			continue;
		cfg_format(&d->cfg, i, was, sizeof(was));
		if (cfg_set(&n, cfg_opts[i].name, was, true, err, sizeof(err)))
			abort();	/* a value it took before */
	}
	if (cfg_read_file(&n, conf_path, conf_given, err, sizeof(err))) {
		pr_err("reload: %s: nothing changed", err);
		goto out;
	}
	if (load_keys(&n, key, key2, &have2)) {
		pr_err("reload: keys refused: nothing changed");
		goto out;
	}
	for (i = 0; i < cfg_nr_opts; i++) {
		cfg_format(&d->cfg, i, was, sizeof(was));
		cfg_format(&n, i, now, sizeof(now));
		if (!strcmp(was, now))
			continue;
		if (!cfg_is_live(i)) {
			pr_warn("reload: %s '%s' -> '%s' needs a restart: still '%s'",
				cfg_opts[i].name, was, now, was);
			restart++;
			continue;
		}
		pr_notice("reload: %s '%s' -> '%s'", cfg_opts[i].name, was,
			  now);
		if (cfg_set(&d->cfg, cfg_opts[i].name, now, false, err,
			    sizeof(err)))
			abort();	/* the same table took it */
	}
	memcpy(d->key, key, sizeof(key));
	memcpy(d->key2, key2, sizeof(key2));
	d->have_key2 = have2;
	sodium_memzero(key, sizeof(key));
	sodium_memzero(key2, sizeof(key2));
	log_set_verbose((int)d->cfg.verbose);
	pr_notice("reloaded: keys from %s%s%s; %u option(s) need a restart",
		  d->cfg.key_file, have2 ? " and " : "",
		  !have2 ? "" : d->cfg.key_file_next[0] ? d->cfg.key_file_next :
		  d->cfg.key_file_old, restart);
out:
	say_ready(d, "serving", restart);
}

static void teardown(struct bcsd *d)
{
	const struct bcsd_part *p;

	while (nr_started) {
		p = &parts[--nr_started];
		if ((!p->wanted || p->wanted(d)) && p->exit)
			p->exit(d);
	}
	stats_write(d);
	sodium_memzero(d->key, sizeof(d->key));
	sodium_memzero(d->key2, sizeof(d->key2));
}

static int run(struct bcsd *d)
{
	say_ready(d, "serving", 0);
	while (!bcsd_stop) {
		if (loop_wait(d))
			return -1;
		if (bcsd_dump) {
			bcsd_dump = 0;
			stats_write(d);
			metrics_write(d);
		}
		if (bcsd_reload) {
			bcsd_reload = 0;
			reload(d);
		}
	}
	return 0;
}

enum { OPT_GENKEY = 1000, OPT_PRINT, OPT_VERSION, OPT_CFG_BASE = 2000 };

int main(int argc, char **argv)
{
	struct option longopts[64 + 8];	/* the options, then bcsd's own */
	const char *genkey_path = NULL;
	bool print = false;
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
			conf_path = optarg;
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
			printf("bcsd %s (bcs interface %u)\n", BCS_PACKAGE_VERSION,
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
	if (genkey_path) {
		if (bcsp_write_key(genkey_path, err, sizeof(err))) {
			fprintf(stderr, "bcsd: %s\n", err);
			return 1;
		}
		return 0;
	}
	if (cfg_read_file(&d.cfg, conf_path, conf_given, err, sizeof(err))) {
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
	notify_stopping();
	teardown(&d);
	pr_notice("stopped");
	return ret;
}

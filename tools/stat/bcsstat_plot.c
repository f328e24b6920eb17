// SPDX-License-Identifier: GPL-2.0
/*
 * bcsstat plot KIND -o FILE.png [FILE...]: a picture of the slice records
 * of one or more nodes, drawn by gnuplot.  Each KIND is one entry of
 * plot_kinds[]: what it computes from a record and how its axes read.
 *
 * gnuplot runs as a child (fork and exec, no shell) on a script and a data
 * file in a private temporary directory; the only text of ours it parses
 * is the titles, quoted so that no file name can become a command.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bcs.h>

#include "bcsstat.h"

struct plot_kind {
	const char *name;
	const char *help;
	const char *title;
	const char *ylabel;	/* "%s": the unit chosen */
	/* The value of @r to plot in *@v, ns; false if it has none. */
	int (*value)(const struct bcs_slice_record *r, double *v);
};

/* The time since the previous switch began; none before the first. */
static int value_interval(const struct bcs_slice_record *r, double *v)
{
	if (!r->interval_ns)
		return 0;
	*v = (double)r->interval_ns;
	return 1;
}

/* How long after its deadline the switch began; early is negative. */
static int value_lateness(const struct bcs_slice_record *r, double *v)
{
	if (!r->deadline_ns || !r->switch_start_ns)
		return 0;
	*v = (double)(int64_t)(r->switch_start_ns - r->deadline_ns);
	return 1;
}

/* The axes read in the unit that fits the values (plot_time_unit()). */
static const struct plot_kind plot_kinds[] = {
	{ "interval", "the slice interval against the slice number",
	  "Slice interval per node", "slice interval (%s)", value_interval },
	{ "lateness", "switch start - deadline against the slice number",
	  "Switch lateness per node (negative: early)",
	  "switch start - deadline (%s)", value_lateness },
};

#define NR_PLOT_KINDS	(sizeof(plot_kinds) / sizeof(plot_kinds[0]))

void plot_help(FILE *f)
{
	size_t k;

	fprintf(f, "KIND:\n");
	for (k = 0; k < NR_PLOT_KINDS; k++)
		fprintf(f, "  %-10s %s\n", plot_kinds[k].name,
			plot_kinds[k].help);
	fprintf(f, "  %-10s %s\n", "dist", "the distributions of a job's "
		"tasks against their duration,\n"
		"             a panel per metric (--metric NAME: that one, a "
		"line per node; --job J)");
	fprintf(f, "  %-10s %s\n", "ranks", "a job's tasks, a row each: the "
		"share of each one's time per\n"
		"             duration bucket, and its total against the "
		"median (red: 1.5 times\n"
		"             off), a panel per metric (--metric NAME: that "
		"one; --job J)");
	fprintf(f, "  %-10s %s\n", "mpi", "the latency and size "
		"distributions of an MPI primitive\n"
		"             (--hist PRIM; FILE: libbcsmpi files, merged)");
	fprintf(f, "FILE: bcsstat slices --json of one node each (the node "
		"is named after\nnodeN.slices.json, else the file), or job "
		"dumps; none: the local ring.\n");
}

/* @s as a gnuplot single-quoted string: ' doubled, control bytes '?'. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("''", f);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc('?', f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* Open the data file @data and the script @script to write: 0, or -1. */
static int open_files(const char *data, const char *script, FILE **d,
		      FILE **s)
{
	*d = fopen(data, "w");
	*s = *d ? fopen(script, "w") : NULL;
	if (*s)
		return 0;
	if (*d)
		fclose(*d);
	return -1;
}

/* Close the data file @d and the script @s: -1 if @err or either fails. */
static int close_files(FILE *d, FILE *s, int err)
{
	if (ferror(d) || ferror(s))
		err = -1;
	if (fclose(d))
		err = -1;
	if (fclose(s))
		err = -1;
	return err;
}

/* The directory all @in share ("coherence" for .../coherence/nodeN...). */
static char *common_dir(const struct node_input *in, size_t n)
{
	const char *p = in[0].path, *slash, *start;
	size_t i, len;

	slash = p ? strrchr(p, '/') : NULL;
	if (!slash)
		return NULL;
	len = (size_t)(slash - p);
	for (i = 1; i < n; i++)
		if (!in[i].path || strncmp(in[i].path, p, len) ||
		    in[i].path[len] != '/' ||
		    strchr(in[i].path + len + 1, '/'))
			return NULL;
	for (start = slash; start > p && start[-1] != '/'; start--)
		;
	if (start == slash || (slash - start == 1 && *start == '.'))
		return NULL;
	return strndup(start, (size_t)(slash - start));
}

/*
 * Outliers such as the interval of a node that stood still for seconds
 * would flatten every other value against the axis.  When the largest
 * value is over OFF_SCALE_RATIO times the 99th percentile, the axis ends
 * at twice the percentile and the values above it are drawn on its top.
 */
#define OFF_SCALE_RATIO	5

struct scale {
	int clip;
	double cap;		/* values above are off the scale */
	double min, max;
	size_t above;
	uint64_t first, last;	/* slice numbers */
};

static void find_scale(double *v, size_t n, struct scale *sc)
{
	double p99;
	size_t i;

	sc->clip = 0;
	sc->above = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), plot_cmp_double);
	p99 = v[(size_t)(0.99 * (double)(n - 1))];
	sc->min = v[0];
	sc->max = v[n - 1];
	if (p99 <= 0 || sc->max <= OFF_SCALE_RATIO * p99)
		return;
	sc->clip = 1;
	sc->cap = 2 * p99;
	for (i = 0; i < n; i++)
		sc->above += v[i] > sc->cap;
}

/*
 * The data: one block per node that has a value, two blank lines apart,
 * one blank line where slices are missing.  Sets @has_block of those
 * nodes and returns the number of values, stored in @vals.
 */
static size_t write_data(const struct plot_kind *k,
			 const struct node_input *in, size_t n, FILE *d,
			 int *has_block, double *vals, struct scale *sc)
{
	size_t i, r, pts, nr_vals = 0;
	uint64_t prev = 0;
	double v;

	for (i = 0; i < n; i++) {
		pts = 0;
		for (r = 0; r < in[i].nr_recs; r++) {
			const struct bcs_slice_record *rec = &in[i].recs[r];

			if (!k->value(rec, &v))
				continue;
			/* A blank line: no line across slices not recorded. */
			if (pts && rec->slice != prev + 1)
				fputc('\n', d);
			fprintf(d, "%llu %.0f\n",
				(unsigned long long)rec->slice, v);
			prev = rec->slice;
			if (!nr_vals || rec->slice < sc->first)
				sc->first = rec->slice;
			if (!nr_vals || rec->slice > sc->last)
				sc->last = rec->slice;
			vals[nr_vals++] = v;
			pts++;
		}
		has_block[i] = pts > 0;
		if (pts)
			fprintf(d, "\n\n");
		else
			fprintf(stderr, "bcsstat: %s: no records to plot\n",
				in[i].name);
	}
	return nr_vals;
}

static const char *fmt_value(char *buf, size_t len, double v)
{
	snprintf(buf, len, fabs(v) >= 100 ? "%.0f" : "%.1f", v);
	return buf;
}

static void write_script(const struct plot_kind *k,
			 const struct node_input *in, size_t n,
			 const int *has_block, const struct scale *sc,
			 const char *data, FILE *s)
{
	char label[160], b1[32], b2[32], ylabel[64], *dir;
	const struct time_unit *u;
	double un;
	int block = 0;
	size_t i;

	/* The unit of what is on the axis: up to the cap if clipped. */
	u = plot_time_unit(sc->min, sc->clip ? sc->cap : sc->max);
	un = u->ns;

	fprintf(s, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"  set terminal pngcairo size 1024,560 font 'Sans,12' "
		"noenhanced\n"
		"} else {\n"
		"  set terminal png size 1024,560 noenhanced\n"
		"}\n"
		"set output\n"
		"set encoding utf8\n"
		"set title ");
	dir = common_dir(in, n);
	if (dir) {
		char *t = malloc(strlen(k->title) + strlen(dir) + 4);

		if (t)
			sprintf(t, "%s: %s", k->title, dir);
		put_quoted(s, t ? t : k->title);
		free(t);
		free(dir);
	} else {
		put_quoted(s, k->title);
	}
	fprintf(s, "\nset xlabel 'slice number'\nset ylabel ");
	snprintf(ylabel, sizeof(ylabel), k->ylabel, u->name);
	put_quoted(s, ylabel);
	/* The data are in ns; the script divides by the unit. */
	fprintf(s, "\nu = %.0f", un);
	fprintf(s, "\nset grid\n"
		"set key outside right top reverse Left box width 1 title 'node'\n"
		"set format x '%%.0f'\n"
		"set autoscale xfix\n");
	/* Slice numbers are whole: no ticks between them. */
	if (sc->last - sc->first < 10)
		fprintf(s, "set xtics 1\n");
	/* A flat line in the middle, not on an axis of its own. */
	if (sc->min == sc->max) {
		double v = sc->min / un;
		double pad = fabs(v) > 1 ? fabs(v) / 10 : 1;

		fprintf(s, "set yrange [%.6f:%.6f]\n", v - pad, v + pad);
	}
	if (sc->clip) {
		snprintf(label, sizeof(label), "off scale: %zu %s above %s "
			 "%s, the highest %s %s", sc->above,
			 sc->above == 1 ? "value" : "values",
			 fmt_value(b1, sizeof(b1), sc->cap / un), u->name,
			 fmt_value(b2, sizeof(b2), sc->max / un), u->name);
		fprintf(s, "cap = %.6f\nset yrange [*:cap * 1.05]\n"
			"set label 1 ", sc->cap / un);
		put_quoted(s, label);
		fprintf(s, " at screen 0.99, screen 0.03 right "
			"font ',10'\n");
	}
	fprintf(s, "plot ");
	for (i = 0; i < n; i++) {
		if (!has_block[i])
			continue;
		fprintf(s, "%s", block ? ", \\\n     " : "");
		put_quoted(s, data);
		fprintf(s, " index %d using 1:%s with linespoints lw 1.5 "
			"pt 7 ps 0.6 lc %d title ", block,
			sc->clip ? "($2 / u > cap ? cap : $2 / u)" :
			"($2 / u)", block + 1);
		put_quoted(s, in[i].name);
		if (sc->clip) {
			fprintf(s, ", \\\n     ");
			put_quoted(s, data);
			fprintf(s, " index %d using 1:($2 / u > cap ? cap : "
				"1/0) "
				"with points pt 9 ps 2 lc %d notitle", block,
				block + 1);
		}
		block++;
	}
	if (sc->clip)
		fprintf(s, ", \\\n     NaN with points pt 9 ps 2 "
			"lc 'black' title 'off scale'");
	fprintf(s, "\n");
}

/* Write the data and the script.  Returns the number of blocks, or -1. */
static int write_files(const struct plot_kind *k, const struct node_input *in,
		       size_t n, const char *data, const char *script)
{
	size_t i, total = 0, nr_vals;
	int *has_block, blocks = 0, err = 0;
	struct scale sc;
	double *vals;
	FILE *d, *s;

	for (i = 0; i < n; i++)
		total += in[i].nr_recs;
	vals = malloc((total ? total : 1) * sizeof(*vals));
	has_block = calloc(n, sizeof(*has_block));
	d = vals && has_block ? fopen(data, "w") : NULL;
	s = d ? fopen(script, "w") : NULL;
	if (!s) {
		if (!vals || !has_block)
			errno = ENOMEM;
		if (d)
			fclose(d);
		free(vals);
		free(has_block);
		return -1;
	}
	memset(&sc, 0, sizeof(sc));
	nr_vals = write_data(k, in, n, d, has_block, vals, &sc);
	find_scale(vals, nr_vals, &sc);
	write_script(k, in, n, has_block, &sc, data, s);
	for (i = 0; i < n; i++)
		blocks += has_block[i];
	err = close_files(d, s, err);
	free(vals);
	free(has_block);
	return err ? -1 : blocks;
}

/*
 * Run gnuplot on @script with its standard output to @outfd.  An exec
 * that fails reports its errno through a close-on-exec pipe.
 */
static int run_gnuplot(const char *script, int outfd)
{
	const char *prog = "gnuplot";
	int p[2], status, child_err = 0;
	ssize_t got;
	pid_t pid;

	if (pipe(p))
		return -1;
	if (fcntl(p[1], F_SETFD, FD_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if (dup2(outfd, STDOUT_FILENO) < 0)
			_exit(127);
		execlp(prog, prog, script, (char *)NULL);
		child_err = errno;
		if (write(p[1], &child_err, sizeof(child_err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	do
		got = read(p[0], &child_err, sizeof(child_err));
	while (got < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (got == sizeof(child_err)) {
		if (child_err == ENOENT)
			fprintf(stderr, "bcsstat: gnuplot not found; install "
				"it (Debian: apt-get install gnuplot-nox)\n");
		else
			fprintf(stderr, "bcsstat: cannot run gnuplot: %s\n",
				strerror(child_err));
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bcsstat: gnuplot failed (%s %d)\n",
			WIFEXITED(status) ? "exit status" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) :
			WTERMSIG(status));
		return 1;
	}
	return 0;
}

/* Copy the picture to @path; a failure removes what was written. */
static int copy_out(const char *from, const char *path)
{
	char buf[65536];
	int in, out, err = 0;
	ssize_t n, w, off;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (out < 0) {
		err = errno;
		close(in);
		errno = err;
		return -1;
	}
	while (!err && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno != EINTR)
				err = errno;
			continue;
		}
		for (off = 0; off < n && !err; off += w) {
			w = write(out, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno != EINTR)
					err = errno;
				w = 0;
			}
		}
	}
	close(in);
	if (close(out) && !err)
		err = errno;
	if (err) {
		unlink(path);
		errno = err;
		return -1;
	}
	return 0;
}

static char *join(const char *dir, const char *name)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);

	if (p)
		sprintf(p, "%s/%s", dir, name);
	return p;
}

/*
 * Writes the data file @data and the gnuplot script @script of a
 * picture; returns the number of series, or -1 with errno.
 */
typedef int (*write_fn)(void *ctx, const char *data, const char *script);

struct slices_ctx {
	const struct plot_kind *k;
	const struct node_input *in;
	size_t n;
};

static int write_slices(void *ctx, const char *data, const char *script)
{
	struct slices_ctx *c = ctx;

	return write_files(c->k, c->in, c->n, data, script);
}

static int plot(write_fn write, void *ctx, const char *output)
{
	const char *tmp = getenv("TMPDIR");
	char *dir, *data = NULL, *script = NULL, *png = NULL;
	int ret = EXIT_FAILURE, fd, blocks;
	struct stat sb;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	dir = join(tmp, "bcsstat-plot.XXXXXX");
	if (!dir || !mkdtemp(dir)) {
		fprintf(stderr, "bcsstat: cannot make a directory in %s: %s\n",
			tmp, strerror(errno));
		free(dir);
		return EXIT_FAILURE;
	}
	data = join(dir, "data");
	script = join(dir, "plot.gp");
	png = join(dir, "plot.png");
	if (!data || !script || !png) {
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		goto out;
	}
	blocks = write(ctx, data, script);
	if (blocks < 0) {
		fprintf(stderr, "bcsstat: writing in %s: %s\n", dir,
			strerror(errno));
		goto out;
	}
	if (!blocks) {
		fprintf(stderr, "bcsstat: nothing to plot\n");
		goto out;
	}
	fd = open(png, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "bcsstat: %s: %s\n", png, strerror(errno));
		goto out;
	}
	if (run_gnuplot(script, fd)) {
		close(fd);
		goto out;
	}
	close(fd);
	if (stat(png, &sb) || sb.st_size == 0) {
		fprintf(stderr, "bcsstat: gnuplot made no picture\n");
		goto out;
	}
	if (copy_out(png, output)) {
		fprintf(stderr, "bcsstat: cannot write %s: %s\n", output,
			strerror(errno));
		goto out;
	}
	ret = EXIT_SUCCESS;
out:
	if (png)
		unlink(png);
	if (script)
		unlink(script);
	if (data)
		unlink(data);
	rmdir(dir);
	free(png);
	free(script);
	free(data);
	free(dir);
	return ret;
}

/* ---- dist: the distributions of a job's tasks ---- */

struct dist_ctx {
	const struct opts *o;
	const struct dist_job *j;
};

static const char *const dist_series_title[BCS_DIST_METRICS] = {
	[BCS_DIST_BURST] = "burst (CPU time between sleeps)",
	[BCS_DIST_BLOCKED] = "blocked (each voluntary sleep)",
	[BCS_DIST_SUSPENDED] = "suspended (each park by bcs)",
	[BCS_DIST_WAIT] = "wait (each wait on a run queue)",
};

/*
 * One block of @h: a step a bucket, from its lower bound on, at the
 * share of the values it holds (%), dropping to 0 after the last bucket;
 * the empty buckets between are steps at 0.
 */
static void dist_block(FILE *d, const struct bcs_hist_header *h,
		       double *xmin, double *xmax, double *ymax)
{
	const struct bcs_hist_bucket *b = (const void *)(h + 1);
	unsigned int sub = h->sub_bits;
	uint32_t i, idx, last;
	uint64_t lo;

	if (!h->nr_buckets)
		return;
	last = b[h->nr_buckets - 1].index;
	fprintf(d, "%llu 0\n",
		(unsigned long long)bcs_hist_lower(b[0].index, sub));
	for (i = 0, idx = b[0].index; idx <= last; idx++) {
		uint64_t c = 0;

		if (b[i].index == idx)
			c = b[i++].count;
		fprintf(d, "%llu %.6f\n",
			(unsigned long long)bcs_hist_lower(idx, sub),
			100.0 * (double)c / (double)h->count);
		/* Values of 0 ns are off a log axis: not on its scale. */
		if (bcs_hist_lower(idx, sub) &&
		    100.0 * (double)c / (double)h->count > *ymax)
			*ymax = 100.0 * (double)c / (double)h->count;
	}
	fprintf(d, "%llu 0\n\n\n",
		(unsigned long long)bcs_hist_upper(last, sub) + 1);
	/* A log axis has no 0: it starts at the lowest bucket above. */
	lo = bcs_hist_lower(b[0].index, sub);
	if (!lo && h->nr_buckets > 1)
		lo = bcs_hist_lower(b[1].index, sub);
	if (lo && (*xmin == 0 || (double)lo < *xmin))
		*xmin = (double)lo;
	if ((double)bcs_hist_upper(last, sub) + 1 > *xmax)
		*xmax = (double)bcs_hist_upper(last, sub) + 1;
}

/* The histogram of metric @m of the tasks of @j on node @node. */
static struct bcs_hist_header *node_hist(const struct dist_job *j,
					 uint32_t m, const char *node)
{
	struct bcs_hist_header *h = NULL;
	size_t i;

	for (i = 0; i < j->nr_tasks; i++) {
		if (strcmp(j->tasks[i].node, node) || !j->tasks[i].hist[m])
			continue;
		if (bcs_hist_add(&h, j->tasks[i].hist[m])) {
			free(h);
			return NULL;
		}
	}
	return h;
}

/* The coarsest resolution among the histograms of @j. */
static unsigned int min_sub_bits(const struct dist_job *j)
{
	unsigned int sub = BCS_HIST_SUB_BITS_MAX;
	size_t i;
	int m;

	for (i = 0; i < j->nr_tasks; i++)
		for (m = 0; m < BCS_DIST_METRICS; m++)
			if (j->tasks[i].hist[m] &&
			    j->tasks[i].hist[m]->sub_bits < sub)
				sub = j->tasks[i].hist[m]->sub_bits;
	return sub;
}

/*
 * The x tics of a log axis of durations from @lo to @hi ns, with units:
 * at 1, 10, 100 of each unit, and at 2 and 5 too over 3 decades or less.
 */
static void time_tics(FILE *s, double lo, double hi)
{
	static const char *const unit[] = { "ns", "\xc2\xb5s", "ms", "s" };
	static const int step[] = { 1, 2, 5 };
	int fine = hi / lo <= 2000, i, k, n = 0;
	double v = 1;

	fprintf(s, "set xtics (");
	for (i = 0; i < 12; i++, v *= 10)
		for (k = 0; k < (fine ? 3 : 1); k++)
			fprintf(s, "%s\"%d %s\" %.0f", n++ ? ", " : "",
				step[k] * (i % 3 == 0 ? 1 : i % 3 == 1 ?
					   10 : 100), unit[i / 3],
				v * step[k]);
	fprintf(s, ")\nset mxtics 10\n");
}

/* "@what of job 7 on node1, node2" in @title. */
static void dist_title(char *title, size_t len, const char *what,
		       const struct dist_job *j)
{
	size_t i;

	snprintf(title, len, "%s of job %u on ", what, j->id);
	for (i = 0; i < j->nr_nodes; i++) {
		if (strlen(title) + strlen(j->nodes[i]) + 8 >= len) {
			strcat(title, ", ...");
			break;
		}
		strcat(title, i ? ", " : "");
		strcat(title, j->nodes[i]);
	}
}

static void png_terminal(FILE *s, int width, int height)
{
	fprintf(s, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"  set terminal pngcairo size %d,%d font 'Sans,12' "
		"noenhanced\n"
		"} else {\n"
		"  set terminal png size %d,%d noenhanced\n"
		"}\n"
		"set output\nset encoding utf8\n", width, height, width,
		height);
}

/* The x axis of a panel of durations from @xmin to @xmax ns. */
static void dist_xaxis(FILE *s, double xmin, double xmax)
{
	xmin = xmin / 2 > 1 ? xmin / 2 : 1;
	xmax = xmax > xmin ? xmax * 2 : xmin * 4;
	fprintf(s, "set xrange [%.0f:%.0f]\n", xmin, xmax);
	time_tics(s, xmin, xmax);
}

/* ", 25 of 0 ns" after @key if @h has values of 0 (off a log axis). */
static void zero_note(char *key, size_t len, const struct bcs_hist_header *h)
{
	const struct bcs_hist_bucket *b = (const void *)(h + 1);
	size_t n = strlen(key);

	if (h->nr_buckets && bcs_hist_lower(b[0].index, h->sub_bits) == 0 &&
	    n < len)
		snprintf(key + n, len - n, ", %llu of 0 ns",
			 (unsigned long long)b[0].count);
}

/*
 * Small multiples: a panel per metric that has values, each with its own
 * duration axis (a metric of microseconds is not squeezed against one of
 * seconds) and its own share axis.
 */
static int write_dist_panels(const struct dist_job *j, const char *data,
			     FILE *d, FILE *s)
{
	struct bcs_hist_header *h[BCS_DIST_METRICS] = { NULL };
	char title[512], key[256], nb[32];
	int err = 0, n = 0, rows, cols;
	uint32_t m;

	for (m = 0; m < BCS_DIST_METRICS; m++) {
		h[m] = dist_job_hist(j, m, &err);
		if (h[m] && h[m]->count)
			n++;
	}
	if (!n || err)
		goto out;
	cols = n > 1 ? 2 : 1;
	rows = (n + 1) / 2;
	png_terminal(s, cols > 1 ? 1280 : 1024, rows > 1 ? 880 : 520);
	dist_title(title, sizeof(title), "Distributions", j);
	fprintf(s, "set logscale x 10\nset grid xtics mxtics ytics\n"
		"set key top right opaque box\n"
		"set ylabel 'share of the values (%%)'\n"
		"set xlabel 'duration (log scale; buckets within %.3g %%)'\n"
		"set multiplot layout %d,%d title ",
		100.0 / (double)(1U << min_sub_bits(j)), rows, cols);
	put_quoted(s, title);
	fprintf(s, "\n");
	for (m = 0, n = 0; m < BCS_DIST_METRICS; m++) {
		double xmin = 0, xmax = 0, ymax = 0;

		if (!h[m] || !h[m]->count)
			continue;
		dist_block(d, h[m], &xmin, &xmax, &ymax);
		fprintf(s, "set title ");
		put_quoted(s, dist_series_title[m]);
		fprintf(s, "\nset yrange [0:%.3f]\n",
			ymax > 0 ? ymax * 1.3 : 1);
		dist_xaxis(s, xmin, xmax);
		snprintf(key, sizeof(key), "n=%llu, avg %s",
			 (unsigned long long)h[m]->count,
			 dist_fmt_ns(nb, sizeof(nb), (double)h[m]->sum /
				     (double)h[m]->count));
		zero_note(key, sizeof(key), h[m]);
		fprintf(s, "plot ");
		put_quoted(s, data);
		fprintf(s, " index %d using 1:2 with steps lw 2 lc %u title ",
			n++, m + 1);
		put_quoted(s, key);
		fprintf(s, "\n");
	}
	fprintf(s, "unset multiplot\n");
out:
	for (m = 0; m < BCS_DIST_METRICS; m++)
		free(h[m]);
	if (err)
		errno = ENOMEM;
	return err ? -1 : n;
}

/* --metric NAME: one panel, a line per node. */
static int write_dist_nodes(const struct dist_ctx *c, const char *data,
			    FILE *d, FILE *s)
{
	const struct dist_job *j = c->j;
	char title[512], key[256], nb[32];
	double xmin = 0, xmax = 0, ymax = 0;
	size_t i, nr_series = 0;
	const char *names[64];
	struct bcs_hist_header *h;

	for (i = 0; i < j->nr_nodes && nr_series < 64; i++) {
		h = node_hist(j, c->o->metric, j->nodes[i]);
		if (!h || !h->count) {
			free(h);
			continue;
		}
		dist_block(d, h, &xmin, &xmax, &ymax);
		snprintf(key, sizeof(key), "%s (n=%llu, avg %s)",
			 j->nodes[i], (unsigned long long)h->count,
			 dist_fmt_ns(nb, sizeof(nb), (double)h->sum /
				     (double)h->count));
		names[nr_series++] = strdup(key);
		free(h);
	}
	snprintf(title, sizeof(title), "%s of job %u, per node",
		 dist_series_title[c->o->metric], j->id);
	png_terminal(s, 1024, 560);
	fprintf(s, "set title ");
	put_quoted(s, title);
	fprintf(s, "\nset xlabel 'duration (log scale; buckets within "
		"%.3g %%)'\n", 100.0 / (double)(1U << (j->nr_tasks ?
		min_sub_bits(j) : 0)));
	fprintf(s, "set ylabel 'share of the values in the bucket (%%)'\n"
		"set logscale x 10\nset grid xtics mxtics ytics\n"
		"set key top left opaque box\n");
	/* Room above the highest step for the key. */
	fprintf(s, "set yrange [0:%.3f]\n", ymax > 0 ?
		ymax * (1.15 + 0.08 * (double)nr_series) : 1);
	dist_xaxis(s, xmin, xmax);
	fprintf(s, "plot ");
	for (i = 0; i < nr_series; i++) {
		fprintf(s, "%s", i ? ", \\\n     " : "");
		put_quoted(s, data);
		fprintf(s, " index %zu using 1:2 with steps lw 2 lc %zu "
			"title ", i, i + 1);
		put_quoted(s, names[i] ? names[i] : "?");
		free((void *)names[i]);
	}
	fprintf(s, "\n");
	return (int)nr_series;
}

static int write_dist(void *ctx, const char *data, const char *script)
{
	struct dist_ctx *c = ctx;
	FILE *d, *s;
	int err = 0, n;

	if (open_files(data, script, &d, &s))
		return -1;
	if (c->o->given & OPT_METRIC)
		n = write_dist_nodes(c, data, d, s);
	else
		n = write_dist_panels(c->j, data, d, s);
	err = close_files(d, s, n < 0 ? -1 : 0);
	if (err)
		errno = errno ? errno : ENOMEM;
	return err ? -1 : n;
}

/* ---- ranks: a heatmap of the tasks of a job, a row each ---- */

/* A step of 1, 2 or 5 times a power of ten: 2 to 5 tics up to @max. */
static double nice_step(double max)
{
	double p = 1;

	while (p * 10 <= max)
		p *= 10;
	while (p > max && p > 1e-9)
		p /= 10;

	if (max / p >= 5)
		return 2 * p;
	if (max / p >= 2)
		return p;
	return p / 2;
}

/* The heatmap's palette: white at 0 %, dark red at 100 %. */
#define RANKS_PALETTE	"set palette defined (0 '#ffffff', 5 '#fee8c8', " \
			"30 '#fdbb84', 60 '#e34a33', 100 '#7f0000')\n"

/* Screen heights: the title, a metric's rows and its axis. */
#define RANKS_TITLE_PX	40
#define RANKS_ROW_PX	30
#define RANKS_MIN_ROWS	3	/* the height of a panel of fewer rows */
#define RANKS_MAX_ROWS	40	/* more: rows thinner, a label every few */
#define RANKS_AXIS_PX	130

/*
 * One metric: the heatmap (a row per task, a column per duration bucket,
 * the share of the task's time in it) from the left to @split of the
 * width, and the tasks' totals as bars on the right, between @top and
 * @bottom (screen fractions).  Blocks 2 * @index (the cells: lo hi row
 * share) and 2 * @index + 1 (the totals: row total_ns count).
 */
static void ranks_panel(FILE *s, FILE *d, const char *data, int index,
			uint32_t metric, const struct rank_map *m,
			double top, double bottom)
{
	const struct time_unit *u;
	double tmax = 0, lo, hi, cbmax;
	size_t r, c, step;

	for (r = 0; r < m->nr_rows; r++) {
		for (c = 0; c < m->nr_cols; c++) {
			if (m->cell[r * m->nr_cols + c] > 0)
				fprintf(d, "%.0f %.0f %zu %.4f\n", m->col_lo[c],
					m->col_hi[c], r,
					m->cell[r * m->nr_cols + c]);
		}
		if (m->total_ns[r] > tmax)
			tmax = m->total_ns[r];
	}
	fprintf(d, "\n\n");
	/* Rows that stand out in red, the others grey; their labels. */
	for (r = 0; r < m->nr_rows; r++) {
		char nb[32];

		int out = rank_map_outlier(m, r);

		fprintf(d, "%zu %.0f %llu %.3f %d ", r, m->total_ns[r],
			(unsigned long long)m->count[r], m->ratio[r],
			out ? 0xd7301f : 0xbdbdbd);
		/* Too many rows for a label each: the red ones'. */
		if (out || m->nr_rows <= RANKS_MAX_ROWS)
			fprintf(d, "\"%s  x%.*f\"\n",
				dist_fmt_ns(nb, sizeof(nb), m->total_ns[r]),
				m->ratio[r] >= 0.1 || m->ratio[r] == 0 ?
				2 : 3, m->ratio[r]);
		else
			fprintf(d, "\"\"\n");
	}
	fprintf(d, "\n\n");
	u = plot_time_unit(0, tmax);

	fprintf(s, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n"
		"set lmargin at screen 0.13\nset rmargin at screen 0.64\n",
		top, bottom);
	fprintf(s, "set title ");
	put_quoted(s, dist_series_title[metric]);
	fprintf(s, "\nset logscale x 10\nunset logscale y\n"
		"set xlabel \"duration of the interval (log scale); colour: "
		"%% of the task's time\"\n"
		"set ylabel 'task'\nset grid noxtics nomxtics noytics\n"
		"set yrange [%zu.5:-0.5]\nset ytics (", m->nr_rows - 1);
	step = (m->nr_rows + RANKS_MAX_ROWS - 1) / RANKS_MAX_ROWS;
	for (r = 0; r < m->nr_rows; r += step) {
		fprintf(s, "%s", r ? ", " : "");
		put_quoted(s, m->labels[r]);
		fprintf(s, " %zu", r);
	}
	/* At least a decade and a bit wide, around the columns there are. */
	lo = m->col_lo[0];
	hi = m->col_hi[m->nr_cols - 1];
	while (hi < 16 * lo) {
		lo /= 2;
		hi *= 2;
	}
	fprintf(s, ")\nset xrange [%.0f:%.0f]\n", lo, hi);
	time_tics(s, lo, hi);
	/* The palette spans the shares there are: a row's time spread over
	 * many buckets would be pale on a scale to 100 %. */
	cbmax = m->max_cell > 1 ? (double)(long)(m->max_cell + 0.999) : 1;
	fprintf(s, "set cbrange [0:%.0f]\nset cbtics %g\nunset cblabel\n"
		"set colorbox vertical user origin screen 0.655, screen %.4f "
		"size screen 0.012, screen %.4f\n", cbmax,
		nice_step(cbmax), bottom, top - bottom);
	fprintf(s, "plot ");
	put_quoted(s, data);
	fprintf(s, " index %d using (sqrt($1 * $2)):3:1:2:($3 - 0.45):"
		"($3 + 0.45):4 with boxxyerror fc palette fs solid 1.0 "
		"noborder notitle\n", 2 * index);

	/* The totals: a bar each, its value written beside it. */
	fprintf(s, "unset colorbox\nunset logscale x\nunset title\n"
		"set lmargin at screen 0.74\nset rmargin at screen 0.97\n"
		"set xrange [0:%.6f]\nset xtics %g\nset mxtics default\n"
		"unset ytics\nunset ylabel\nset grid xtics\n"
		"set xlabel 'total (%s); x: to the median'\nu = %.0f\n",
		tmax > 0 ? 2 * tmax / u->ns : 1,
		nice_step(tmax > 0 ? 2 * tmax / u->ns : 1), u->name, u->ns);
	fprintf(s, "plot ");
	put_quoted(s, data);
	fprintf(s, " index %d using ($2 / u / 2):1:(0):($2 / u):($1 - 0.35):"
		"($1 + 0.35):5 with boxxyerror fs solid 0.8 lc rgb variable "
		"notitle, \\\n     ", 2 * index + 1);
	put_quoted(s, data);
	fprintf(s, " index %d using ($2 / u):1:(' ' . strcol(6)):"
		"($5 == %d ? $5 : 0) with labels left font ',10' "
		"textcolor rgb variable notitle\n", 2 * index + 1, 0xd7301f);
}

/* The height of the panel of a metric of @rows tasks, in pixels. */
static int ranks_panel_px(size_t rows)
{
	if (rows > RANKS_MAX_ROWS)	/* thinner rows, as high as the most */
		return RANKS_AXIS_PX + RANKS_ROW_PX * RANKS_MAX_ROWS;
	return RANKS_AXIS_PX + RANKS_ROW_PX * (int)(rows > RANKS_MIN_ROWS ?
						     rows : RANKS_MIN_ROWS);
}

static int write_ranks(void *ctx, const char *data, const char *script)
{
	struct dist_ctx *c = ctx;
	const struct dist_job *j = c->j;
	struct rank_map map[BCS_DIST_METRICS];
	int err = 0, n = 0, px = RANKS_TITLE_PX, y;
	char title[512];
	uint32_t m;
	FILE *d, *s;

	memset(map, 0, sizeof(map));
	for (m = 0; m < BCS_DIST_METRICS && !err; m++) {
		if ((c->o->given & OPT_METRIC) && m != c->o->metric)
			continue;
		err = rank_map_build(j, m, &map[m]);
		if (map[m].nr_rows)
			px += ranks_panel_px(map[m].nr_rows);
	}
	d = err ? NULL : fopen(data, "w");
	s = d ? fopen(script, "w") : NULL;
	if (!s) {
		if (d)
			fclose(d);
		for (m = 0; m < BCS_DIST_METRICS; m++)
			rank_map_free(&map[m]);
		if (err)
			errno = -err;
		return -1;
	}
	png_terminal(s, 1280, px);
	dist_title(title, sizeof(title), "Tasks", j);
	fprintf(s, "set multiplot title ");
	put_quoted(s, title);
	fprintf(s, "\n" RANKS_PALETTE);
	y = RANKS_TITLE_PX;
	for (m = 0; m < BCS_DIST_METRICS; m++) {
		int h = ranks_panel_px(map[m].nr_rows);

		if (!map[m].nr_rows)
			continue;
		ranks_panel(s, d, data, n++, m, &map[m],
			    1 - (double)(y + 30) / px,
			    1 - (double)(y + h - 75) / px);
		y += h;
	}
	fprintf(s, "unset multiplot\n");
	for (m = 0; m < BCS_DIST_METRICS; m++)
		rank_map_free(&map[m]);
	err = close_files(d, s, err);
	return err ? -1 : n;
}

/* plot dist or ranks: the statistics of one job, drawn by @write. */
static int plot_dist(const struct opts *o, write_fn write)
{
	struct opts rest = *o;
	struct dist_set set;
	struct dist_ctx c;
	int ret;

	/* The files follow KIND. */
	rest.args = o->args + 1;
	rest.nr_args = o->nr_args - 1;
	if (dist_load(&rest, &set))
		return EXIT_FAILURE;
	if (set.nr_jobs != 1) {
		if (set.nr_jobs)
			fprintf(stderr, "bcsstat: plot dist: statistics of %zu "
				"jobs: choose one with --job\n", set.nr_jobs);
		else
			fprintf(stderr, "bcsstat: plot dist: no job has "
				"statistics\n");
		dist_free(&set);
		return EXIT_FAILURE;
	}
	c.o = o;
	c.j = &set.jobs[0];
	ret = plot(write, &c, o->output);
	dist_free(&set);
	return ret;
}

/* ---- mpi: the distributions of one MPI primitive ---- */

struct mpi_ctx {
	const char *name;			/* "MPI_Allreduce" */
	const struct bcs_hist_header *lat, *size;	/* size: or NULL */
};

/*
 * The x tics of a log axis of bytes from @lo to @hi: at powers of two
 * with binary units, every fourth one over a wide range.
 */
static void byte_tics(FILE *s, double lo, double hi)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int step = hi / lo <= 4096 ? 1 : 4, p, n = 0;

	fprintf(s, "set xtics (");
	for (p = 0; p < 50; p += step)
		fprintf(s, "%s\"%d %s\" %.0f", n++ ? ", " : "",
			1 << (p % 10), unit[p / 10], (double)(1ULL << p));
	fprintf(s, ")\nset mxtics default\n");
}

/* One panel of a histogram: its step curve, axes from its range. */
static void mpi_panel(FILE *s, FILE *d, int index,
		      const struct bcs_hist_header *h, const char *title,
		      const char *data, const char *what, int bytes)
{
	double xmin = 0, xmax = 0, ymax = 0;
	char key[128], nb[32];

	dist_block(d, h, &xmin, &xmax, &ymax);
	fprintf(s, "set title ");
	put_quoted(s, title);
	fprintf(s, "\nset xlabel '%s (log scale; buckets within %.3g %%)'\n",
		what,
		100.0 / (double)(1U << h->sub_bits));
	fprintf(s, "set yrange [0:%.3f]\n", ymax > 0 ? ymax * 1.25 : 1);
	xmin = xmin / 2 > 1 ? xmin / 2 : 1;
	xmax = xmax > xmin ? xmax * 2 : xmin * 4;
	fprintf(s, "set xrange [%.0f:%.0f]\n", xmin, xmax);
	if (bytes)
		byte_tics(s, xmin, xmax);
	else
		time_tics(s, xmin, xmax);
	snprintf(key, sizeof(key), "n=%llu, avg %s",
		 (unsigned long long)h->count,
		 bytes ? dist_fmt_bytes(nb, sizeof(nb), h->count ?
					(double)h->sum / (double)h->count : 0) :
			 dist_fmt_ns(nb, sizeof(nb), h->count ?
				     (double)h->sum / (double)h->count : 0));
	fprintf(s, "plot ");
	put_quoted(s, data);
	fprintf(s, " index %d using 1:2 with steps lw 2 lc %d title ", index,
		index + 1);
	put_quoted(s, key);
	fprintf(s, "\n");
}

static int write_mpi(void *ctx, const char *data, const char *script)
{
	struct mpi_ctx *c = ctx;
	char title[128];
	FILE *d, *s;
	int err = 0, panels = c->size ? 2 : 1;

	if (!c->lat->count)
		return 0;
	if (open_files(data, script, &d, &s))
		return -1;
	fprintf(s, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"  set terminal pngcairo size %d,560 font 'Sans,12' "
		"noenhanced\n"
		"} else {\n"
		"  set terminal png size %d,560 noenhanced\n"
		"}\n"
		"set output\nset encoding utf8\n"
		"set ylabel 'share of the calls in the bucket (%%)'\n"
		"set logscale x 10\nset grid xtics mxtics ytics\n"
		"set key top left opaque box\n", 640 * panels, 640 * panels);
	if (panels > 1)
		fprintf(s, "set multiplot layout 1,2\n");
	/* A primitive's latency, or a process row's durations. */
	if (strncmp(c->name, "MPI_", 4)) {
		mpi_panel(s, d, 0, c->lat, c->name, data, "duration", 0);
	} else {
		snprintf(title, sizeof(title), "%s: latency", c->name);
		mpi_panel(s, d, 0, c->lat, title, data, "latency", 0);
	}
	if (c->size) {
		snprintf(title, sizeof(title), "%s: size", c->name);
		fprintf(s, "set logscale x 2\n");
		mpi_panel(s, d, 1, c->size, title, data, "bytes", 1);
		fprintf(s, "unset multiplot\n");
	}
	err = close_files(d, s, err);
	return err ? -1 : panels;
}

static int plot_mpi(const struct opts *o)
{
	struct bcs_hist_header *lat, *size;
	struct mpi_ctx c;
	char name[64];
	int ret;

	if (!o->hist)
		return usage_err(o->cmd, "plot mpi needs --hist PRIM", NULL);
	if (o->nr_args < 2)
		return usage_err(o->cmd, "plot mpi needs the libbcsmpi FILEs",
				 NULL);
	if (mpi_hists(o->args + 1, o->nr_args - 1, o->hist, name,
		      sizeof(name), &lat, &size))
		return EXIT_FAILURE;
	c.name = name;
	c.lat = lat;
	c.size = size && size->count ? size : NULL;
	ret = plot(write_mpi, &c, o->output);
	free(lat);
	free(size);
	return ret;
}

int run_plot(const struct opts *o)
{
	const struct plot_kind *k = NULL;
	struct node_input *in;
	size_t n, i;
	int ret;

	if (o->nr_args < 1)
		return usage_err(o->cmd, "missing KIND", NULL);
	for (i = 0; i < NR_PLOT_KINDS; i++)
		if (!strcmp(o->args[0], plot_kinds[i].name))
			k = &plot_kinds[i];
	if (!k && strcmp(o->args[0], "dist") && strcmp(o->args[0], "mpi") &&
	    strcmp(o->args[0], "ranks"))
		return usage_err(o->cmd, "unknown plot kind", o->args[0]);
	if (!o->output)
		return usage_err(o->cmd, "missing -o FILE.png", NULL);
	if (o->hist && (k || strcmp(o->args[0], "mpi")))
		return usage_err(o->cmd, "--hist is for plot mpi", NULL);
	if (!k && !strcmp(o->args[0], "mpi")) {
		if (o->given & (OPT_METRIC | OPT_JOB))
			return usage_err(o->cmd, "--metric and --job are for "
					 "plot dist and ranks", NULL);
		return plot_mpi(o);
	}
	if (!k)
		return plot_dist(o, strcmp(o->args[0], "ranks") ? write_dist :
				 write_ranks);
	if (o->given & (OPT_METRIC | OPT_JOB))
		return usage_err(o->cmd, "--metric and --job are for plot "
				 "dist and ranks", NULL);
	ret = inputs_load(o->args + 1, o->nr_args - 1, 0, &in, &n);
	if (ret)
		return ret;
	{
		struct slices_ctx c = { k, in, n };

		ret = plot(write_slices, &c, o->output);
	}
	inputs_free(in, n);
	return ret;
}

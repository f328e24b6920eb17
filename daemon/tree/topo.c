// SPDX-License-Identifier: GPL-2.0
/*
 * The topology of a tree of bcsd daemons: the nodes file, the k-ary tree
 * over it, the topology file in MRNet's notation, and re-rooting
 * (Documentation/tree.rst, "Topology").  Every loop is bounded by the
 * length of a file or by the number of nodes; nothing recurses.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hostlist.h"
#include "tree/topo.h"

/* The longest line of a nodes file, its comment included. */
#define TOPO_LINE_MAX		1024
/* The longest name of a topology file: "host:idx". */
#define TOPO_TOKEN_MAX		(TOPO_HOST_MAX + 8)

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static bool host_char(int c)
{
	return isascii(c) && (isalnum(c) || c == '.' || c == '-' || c == '_');
}

/*
 * Check @host: letters, digits, '.', '-' and '_'; one of digits and dots
 * only must be an IPv4 address, which goes into @addr.
 */
static int check_host(const char *host, bool *numeric, struct in_addr *addr,
		      char *err, size_t errlen)
{
	size_t len = strlen(host), i;
	bool digits = true;

	if (!len)
		return fail(err, errlen, "empty host");
	if (len >= TOPO_HOST_MAX)
		return fail(err, errlen, "host name longer than %d characters",
			    TOPO_HOST_MAX - 1);
	for (i = 0; i < len; i++) {
		if (!host_char((unsigned char)host[i]))
			return fail(err, errlen,
				    "host '%s': character %zu is not a letter, digit, '.', '-' or '_'",
				    host, i + 1);
		if (!isdigit((unsigned char)host[i]) && host[i] != '.')
			digits = false;
	}
	*numeric = digits;
	if (digits && inet_pton(AF_INET, host, addr) != 1)
		return fail(err, errlen, "host '%s' is not an IPv4 address",
			    host);
	return 0;
}

/* A decimal number of digits only, within [@min, @max]. */
static int parse_uint(const char *s, uint64_t min, uint64_t max,
		      uint64_t *v)
{
	uint64_t n = 0;
	size_t i;

	if (!*s || strlen(s) > 10)
		return -1;
	for (i = 0; s[i]; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		n = n * 10 + (uint64_t)(s[i] - '0');
	}
	if (n < min || n > max)
		return -1;
	*v = n;
	return 0;
}

void topo_list_init(struct topo_list *l)
{
	l->nr = 0;
}

/* topo_list_add(), and in *@dup the node it clashes with, or TOPO_NONE. */
static int list_add(struct topo_list *l, uint32_t id, const char *host,
		    uint16_t port, uint32_t *dup, char *err, size_t errlen)
{
	struct topo_node *n;
	struct in_addr addr = { 0 };
	bool numeric;
	uint32_t i;

	*dup = TOPO_NONE;
	if (!id)
		return fail(err, errlen, "node id 0 (ids are 1..4294967295)");
	if (check_host(host, &numeric, &addr, err, errlen))
		return -1;
	for (i = 0; i < l->nr; i++) {
		n = &l->node[i];
		if (n->id == id) {
			*dup = i;
			return fail(err, errlen, "node id %u twice", id);
		}
		if (n->port == port && !strcasecmp(n->host, host)) {
			*dup = i;
			if (port)
				return fail(err, errlen, "host %s:%u twice",
					    host, port);
			return fail(err, errlen, "host %s twice", host);
		}
	}
	if (l->nr >= BCSD_MAX_NODES)
		return fail(err, errlen, "more than %d nodes", BCSD_MAX_NODES);
	/* Its place among the ids, the larger ones moved up. */
	for (i = l->nr; i > 0 && l->node[l->by_id[i - 1]].id > id; i--)
		l->by_id[i] = l->by_id[i - 1];
	l->by_id[i] = l->nr;
	n = &l->node[l->nr++];
	n->id = id;
	memset(n->host, 0, sizeof(n->host));
	memcpy(n->host, host, strlen(host));
	n->numeric = numeric;
	n->addr = addr;
	n->port = port;
	return 0;
}

int topo_list_add(struct topo_list *l, uint32_t id, const char *host,
		  uint16_t port, char *err, size_t errlen)
{
	uint32_t dup;

	return list_add(l, id, host, port, &dup, err, errlen);
}

/* The hosts of one line, added with consecutive ids (list_line()). */
struct line_hosts {
	struct topo_list *l;
	uint64_t id;			/* the next host's */
	uint16_t port;
	const char *path;
	unsigned int lineno;
	unsigned int *lines;		/* each node's line, by index */
	char *err;
	size_t errlen;
};

static int line_host(const char *host, void *arg)
{
	struct line_hosts *h = arg;
	char msg[512];
	uint32_t dup;

	if (h->id > UINT32_MAX)
		return fail(h->err, h->errlen,
			    "%s:%u: the ids of the hosts run past 4294967295 at '%s'",
			    h->path, h->lineno, host);
	if (list_add(h->l, (uint32_t)h->id, host, h->port, &dup, msg,
		     sizeof(msg))) {
		if (dup != TOPO_NONE)
			return fail(h->err, h->errlen, "%s:%u: %s (line %u)",
				    h->path, h->lineno, msg, h->lines[dup]);
		return fail(h->err, h->errlen, "%s:%u: %s", h->path,
			    h->lineno, msg);
	}
	h->lines[h->l->nr - 1] = h->lineno;
	h->id++;
	return 0;
}

/*
 * One "ID HOST[:PORT]" line, without its comment, into @l; HOST may be a
 * hostlist ("node[01-16]", core/hostlist.h), whose hosts get the ids from
 * ID on, in order, and share PORT.
 */
static int list_line(struct topo_list *l, char *line, const char *path,
		     unsigned int lineno, unsigned int *lines,
		     char *err, size_t errlen)
{
	char *id_s, *host, *port_s, *extra, *save, msg[256];
	uint64_t id, port = 0;
	struct line_hosts h;
	int r;

	id_s = strtok_r(line, " \t\r\n", &save);
	if (!id_s)
		return 0;
	host = strtok_r(NULL, " \t\r\n", &save);
	extra = strtok_r(NULL, " \t\r\n", &save);
	if (!host || extra)
		return fail(err, errlen, "%s:%u: expected 'ID HOST[:PORT]'",
			    path, lineno);
	if (parse_uint(id_s, 1, UINT32_MAX, &id))
		return fail(err, errlen,
			    "%s:%u: node id '%s' is not a number in 1..4294967295",
			    path, lineno, id_s);
	port_s = strchr(host, ':');
	if (port_s) {
		*port_s++ = '\0';
		if (parse_uint(port_s, 1, UINT16_MAX, &port))
			return fail(err, errlen,
				    "%s:%u: port '%s' is not a number in 1..65535",
				    path, lineno, port_s);
	}
	h = (struct line_hosts){ l, id, (uint16_t)port, path, lineno, lines,
				 err, errlen };
	/* One host as it is, its errors its own. */
	if (!strpbrk(host, "[],"))
		return line_host(host, &h);
	r = hostlist_expand(host, line_host, &h, msg, sizeof(msg));
	if (r == -EINVAL || r == -E2BIG)
		return fail(err, errlen, "%s:%u: bad hostlist '%.64s': %s",
			    path, lineno, host, msg);
	return r ? -1 : 0;
}

/*
 * The next line of @f without its '\n' into @buf of @size: 1, 0 at the
 * end of the file, -1 on a line too long or with a NUL byte.
 */
static int read_line(FILE *f, char *buf, size_t size, const char **why)
{
	size_t len = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (!c) {
			*why = "NUL byte";
			return -1;
		}
		if (len + 1 >= size) {
			*why = "line too long";
			return -1;
		}
		buf[len++] = (char)c;
	}
	buf[len] = '\0';
	return c != EOF || len;
}

int topo_list_read_stream(struct topo_list *l, FILE *f, const char *path,
			  char *err, size_t errlen)
{
	unsigned int lines[BCSD_MAX_NODES], lineno = 0;
	char line[TOPO_LINE_MAX], *hash;
	const char *why;
	int ret;

	topo_list_init(l);
	while ((ret = read_line(f, line, sizeof(line), &why)) != 0) {
		lineno++;
		if (ret < 0)
			return fail(err, errlen, "%s:%u: %s", path, lineno,
				    why);
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		if (list_line(l, line, path, lineno, lines, err, errlen))
			return -1;
	}
	if (ferror(f))
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (!l->nr)
		return fail(err, errlen, "%s: no nodes", path);
	return 0;
}

int topo_list_read_file(struct topo_list *l, const char *path, char *err,
			size_t errlen)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	ret = topo_list_read_stream(l, f, path, err, errlen);
	fclose(f);
	return ret;
}

int topo_index(const struct topo_list *l, uint32_t id)
{
	uint32_t lo = 0, hi = l->nr, mid, at;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		at = l->by_id[mid];
		if (l->node[at].id == id)
			return (int)at;
		if (l->node[at].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const char *topo_name(const struct topo_list *l, uint32_t i, char *buf,
		      size_t len)
{
	uint32_t j, idx = 0;

	for (j = 0; j < i; j++)
		idx += !strcasecmp(l->node[j].host, l->node[i].host);
	snprintf(buf, len, "%s:%u", l->node[i].host, idx);
	return buf;
}

/*
 * The fields of @t derived from its nr, root and parent[]: children in
 * list order, the breadth-first order, depths and subtree sizes.  -1 if
 * parent[] is not a tree hanging from the root.
 */
static int derive(struct topo_tree *t)
{
	uint32_t i, p, c, head, tail, n = t->nr;

	if (!n || n > BCSD_MAX_NODES || t->root >= n ||
	    t->parent[t->root] != TOPO_NONE)
		return -1;
	memset(t->first, 0, sizeof(t->first[0]) * (n + 1));
	for (i = 0; i < n; i++) {
		p = t->parent[i];
		if (p == TOPO_NONE)
			continue;
		if (p >= n)
			return -1;
		t->first[p + 1]++;
	}
	for (i = 0; i < n; i++)
		t->first[i + 1] += t->first[i];
	/* size[] is each node's next free place in child[] for now. */
	for (i = 0; i < n; i++)
		t->size[i] = t->first[i];
	for (i = 0; i < n; i++)
		if (t->parent[i] != TOPO_NONE)
			t->child[t->size[t->parent[i]]++] = i;
	t->order[0] = t->root;
	t->depth[t->root] = 0;
	head = 0;
	tail = 1;
	while (head < tail) {
		p = t->order[head++];
		for (c = t->first[p]; c < t->first[p + 1]; c++) {
			if (tail >= n)
				return -1;
			t->order[tail++] = t->child[c];
			t->depth[t->child[c]] = t->depth[p] + 1;
		}
	}
	if (tail != n)
		return -1;
	for (i = 0; i < n; i++)
		t->size[i] = 1;
	for (i = n - 1; i > 0; i--)
		t->size[t->parent[t->order[i]]] += t->size[t->order[i]];
	return 0;
}

int topo_tree_kary(struct topo_tree *t, const struct topo_list *l,
		   uint32_t root_id, uint32_t fanout, char *err,
		   size_t errlen)
{
	uint32_t seq[BCSD_MAX_NODES], i, p;
	int root;

	if (!l->nr || l->nr > BCSD_MAX_NODES)
		return fail(err, errlen, "no nodes");
	if (fanout < 1 || fanout > BCSD_MAX_NODES)
		return fail(err, errlen, "fan-out %u is not in 1..%d", fanout,
			    BCSD_MAX_NODES);
	root = topo_index(l, root_id);
	if (root < 0)
		return fail(err, errlen, "root: node %u is not in the list",
			    root_id);
	/* seq[p]: the node at place p, breadth-first. */
	seq[0] = (uint32_t)root;
	for (i = 0, p = 1; i < l->nr; i++)
		if (i != (uint32_t)root)
			seq[p++] = i;
	t->kind = TOPO_KARY;
	t->fanout = fanout;
	t->nr = l->nr;
	t->root = (uint32_t)root;
	t->parent[root] = TOPO_NONE;
	for (p = 1; p < l->nr; p++)
		t->parent[seq[p]] = seq[(p - 1) / fanout];
	if (derive(t))
		abort();	/* a k-ary tree is a tree */
	return 0;
}

enum token {
	TOK_EOF,
	TOK_NAME,
	TOK_ARROW,
	TOK_SEMI,
};

/* The tokens of a topology file. */
struct lexer {
	FILE *f;
	const char *path;
	unsigned int line;		/* of the next character */
	unsigned int tok_line;		/* of the last token */
	char name[TOPO_TOKEN_MAX];	/* TOK_NAME */
};

/* The next token into *@tok; -1 with @err on a character out of place. */
static int lex(struct lexer *lx, enum token *tok, char *err, size_t errlen)
{
	size_t len;
	int c;

	for (;;) {
		c = getc(lx->f);
		if (c == '#') {
			while (c != EOF && c != '\n')
				c = getc(lx->f);
		}
		if (c == EOF) {
			lx->tok_line = lx->line;
			if (ferror(lx->f))
				return fail(err, errlen, "%s: %s", lx->path,
					    strerror(errno));
			*tok = TOK_EOF;
			return 0;
		}
		if (c == '\n')
			lx->line++;
		else if (c != ' ' && c != '\t' && c != '\r')
			break;
	}
	lx->tok_line = lx->line;
	if (c == ';') {
		*tok = TOK_SEMI;
		return 0;
	}
	if (c == '=') {
		if (getc(lx->f) != '>')
			return fail(err, errlen, "%s:%u: '=' without '>'",
				    lx->path, lx->line);
		*tok = TOK_ARROW;
		return 0;
	}
	if (!host_char(c) && c != ':') {
		if (isascii(c) && isprint(c))
			return fail(err, errlen, "%s:%u: unexpected '%c'",
				    lx->path, lx->line, c);
		return fail(err, errlen, "%s:%u: unexpected byte 0x%02x",
			    lx->path, lx->line, (unsigned int)c);
	}
	len = 0;
	while (host_char(c) || c == ':') {
		if (len + 1 >= sizeof(lx->name))
			return fail(err, errlen, "%s:%u: name too long",
				    lx->path, lx->line);
		lx->name[len++] = (char)c;
		c = getc(lx->f);
	}
	lx->name[len] = '\0';
	if (c != EOF)
		ungetc(c, lx->f);
	*tok = TOK_NAME;
	return 0;
}

/* The node that "host:idx" @name names in @l. */
static int lookup(const struct topo_list *l, const struct lexer *lx,
		  uint32_t *node, char *err, size_t errlen)
{
	char host[TOPO_TOKEN_MAX], *colon;
	uint64_t idx;
	uint32_t i, seen = 0;

	memcpy(host, lx->name, sizeof(host));
	colon = strrchr(host, ':');
	if (!colon || colon == host ||
	    parse_uint(colon + 1, 0, BCSD_MAX_NODES, &idx) ||
	    strchr(host, ':') != colon)
		return fail(err, errlen, "%s:%u: '%s' is not host:idx",
			    lx->path, lx->tok_line, lx->name);
	*colon = '\0';
	for (i = 0; i < l->nr; i++) {
		if (strcasecmp(l->node[i].host, host))
			continue;
		if (seen++ == idx) {
			*node = i;
			return 0;
		}
	}
	return fail(err, errlen, "%s:%u: '%s' is not in the nodes file",
		    lx->path, lx->tok_line, lx->name);
}

static const char *tok_name(enum token tok)
{
	switch (tok) {
	case TOK_EOF:
		return "the end of the file";
	case TOK_NAME:
		return "a name";
	case TOK_ARROW:
		return "'=>'";
	case TOK_SEMI:
		return "';'";
	}
	return "?";
}

/* What a topology file says of each node, by line; 0: nothing. */
struct topo_lines {
	unsigned int seen[BCSD_MAX_NODES];	/* first named */
	unsigned int stmt[BCSD_MAX_NODES];	/* its "=> children ;" */
	unsigned int link[BCSD_MAX_NODES];	/* named as a child */
};

/* The statements of a topology file into @t->parent[] and @ln. */
static int parse_file(struct topo_tree *t, const struct topo_list *l,
		      struct lexer *lx, struct topo_lines *ln, char *err,
		      size_t errlen)
{
	char pname[TOPO_TOKEN_MAX], b[TOPO_TOKEN_MAX];
	enum token tok;
	uint32_t p, c;

	for (;;) {
		if (lex(lx, &tok, err, errlen))
			return -1;
		if (tok == TOK_EOF)
			return 0;
		if (tok != TOK_NAME)
			return fail(err, errlen,
				    "%s:%u: expected host:idx, not %s",
				    lx->path, lx->tok_line, tok_name(tok));
		if (lookup(l, lx, &p, err, errlen))
			return -1;
		if (ln->stmt[p])
			return fail(err, errlen,
				    "%s:%u: '%s' has its children on line %u already",
				    lx->path, lx->tok_line, lx->name,
				    ln->stmt[p]);
		ln->stmt[p] = lx->tok_line;
		if (!ln->seen[p])
			ln->seen[p] = lx->tok_line;
		memcpy(pname, lx->name, sizeof(pname));
		if (lex(lx, &tok, err, errlen))
			return -1;
		if (tok == TOK_SEMI)
			continue;
		if (tok != TOK_ARROW)
			return fail(err, errlen,
				    "%s:%u: expected '=>' or ';' after '%s', not %s",
				    lx->path, lx->tok_line, pname,
				    tok_name(tok));
		for (;;) {
			if (lex(lx, &tok, err, errlen))
				return -1;
			if (tok == TOK_SEMI)
				break;
			if (tok != TOK_NAME)
				return fail(err, errlen,
					    "%s:%u: expected a child or ';' after '%s =>', not %s",
					    lx->path, lx->tok_line, pname,
					    tok_name(tok));
			if (lookup(l, lx, &c, err, errlen))
				return -1;
			if (t->parent[c] != TOPO_NONE)
				return fail(err, errlen,
					    "%s:%u: '%s' has two parents, '%s' and '%s' (line %u)",
					    lx->path, lx->tok_line, lx->name,
					    pname,
					    topo_name(l, t->parent[c], b,
						      sizeof(b)),
					    ln->link[c]);
			t->parent[c] = p;
			ln->link[c] = lx->tok_line;
			if (!ln->seen[c])
				ln->seen[c] = lx->tok_line;
		}
	}
}

/* @i's ancestor after up to @nr steps: on a cycle if it has no root. */
static uint32_t climb(const struct topo_tree *t, uint32_t i)
{
	uint32_t step;

	for (step = 0; step < t->nr && t->parent[i] != TOPO_NONE; step++)
		i = t->parent[i];
	return i;
}

/* One root, no cycle, every node of @l named. */
static int check_file(struct topo_tree *t, const struct topo_list *l,
		      const struct lexer *lx, const struct topo_lines *ln,
		      char *err, size_t errlen)
{
	char a[TOPO_TOKEN_MAX], b[TOPO_TOKEN_MAX];
	uint32_t i, root = TOPO_NONE, top;

	for (i = 0; i < l->nr; i++) {
		if (!ln->seen[i] || t->parent[i] != TOPO_NONE)
			continue;
		if (root != TOPO_NONE)
			return fail(err, errlen,
				    "%s:%u: two roots, '%s' (line %u) and '%s'",
				    lx->path, ln->seen[i],
				    topo_name(l, root, a, sizeof(a)),
				    ln->seen[root],
				    topo_name(l, i, b, sizeof(b)));
		root = i;
	}
	for (i = 0; i < l->nr; i++) {
		if (!ln->seen[i])
			continue;
		top = climb(t, i);
		if (t->parent[top] == TOPO_NONE)
			continue;
		/* After nr steps up from a node, one is on its cycle. */
		return fail(err, errlen, "%s:%u: '%s' is in a cycle",
			    lx->path, ln->link[top],
			    topo_name(l, top, a, sizeof(a)));
	}
	if (root == TOPO_NONE)
		return fail(err, errlen, "%s: no tree: the file names no node",
			    lx->path);
	for (i = 0; i < l->nr; i++)
		if (!ln->seen[i])
			return fail(err, errlen,
				    "%s: node %u ('%s') of the nodes file is not in the tree",
				    lx->path, l->node[i].id,
				    topo_name(l, i, a, sizeof(a)));
	t->root = root;
	return 0;
}

int topo_tree_read_stream(struct topo_tree *t, const struct topo_list *l,
			  FILE *f, const char *path, char *err,
			  size_t errlen)
{
	struct lexer lx = { .f = f, .path = path, .line = 1 };
	struct topo_lines *ln;
	uint32_t i;
	int ret;

	if (!l->nr || l->nr > BCSD_MAX_NODES)
		return fail(err, errlen, "%s: no nodes", path);
	ln = calloc(1, sizeof(*ln));
	if (!ln)
		return fail(err, errlen, "%s: out of memory", path);
	t->kind = TOPO_FILE;
	t->fanout = 0;
	t->nr = l->nr;
	t->root = 0;
	for (i = 0; i < l->nr; i++)
		t->parent[i] = TOPO_NONE;
	ret = parse_file(t, l, &lx, ln, err, errlen);
	if (!ret)
		ret = check_file(t, l, &lx, ln, err, errlen);
	if (!ret && derive(t))
		abort();	/* check_file() let a non-tree through */
	free(ln);
	return ret;
}

int topo_tree_read_file(struct topo_tree *t, const struct topo_list *l,
			const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	ret = topo_tree_read_stream(t, l, f, path, err, errlen);
	fclose(f);
	return ret;
}

int topo_tree_reroot(struct topo_tree *t, const struct topo_list *l,
		     uint32_t root_id, char *err, size_t errlen)
{
	uint32_t path[BCSD_MAX_NODES], m, i;
	int root;

	if (t->nr != l->nr)
		return fail(err, errlen,
			    "the tree has %u nodes, the list %u", t->nr,
			    l->nr);
	root = topo_index(l, root_id);
	if (root < 0)
		return fail(err, errlen, "root: node %u is not in the list",
			    root_id);
	if (t->kind == TOPO_KARY)
		return topo_tree_kary(t, l, root_id, t->fanout, err, errlen);
	/* path[0] is the new root, path[m - 1] the old. */
	path[0] = (uint32_t)root;
	for (m = 1; m < t->nr && t->parent[path[m - 1]] != TOPO_NONE; m++)
		path[m] = t->parent[path[m - 1]];
	for (i = m - 1; i > 0; i--)
		t->parent[path[i]] = path[i - 1];
	t->parent[root] = TOPO_NONE;
	t->root = (uint32_t)root;
	if (derive(t))
		abort();	/* turning a path round keeps a tree */
	return 0;
}

uint32_t topo_parent(const struct topo_tree *t, uint32_t i)
{
	return t->parent[i];
}

uint32_t topo_children(const struct topo_tree *t, uint32_t i,
		       const uint32_t **child)
{
	*child = &t->child[t->first[i]];
	return t->first[i + 1] - t->first[i];
}

uint32_t topo_depth(const struct topo_tree *t, uint32_t i)
{
	return t->depth[i];
}

uint32_t topo_height(const struct topo_tree *t)
{
	/* Breadth-first: the last is the deepest. */
	return t->nr ? t->depth[t->order[t->nr - 1]] : 0;
}

uint32_t topo_subtree(const struct topo_tree *t, uint32_t i)
{
	return t->size[i];
}

int topo_check(const struct topo_tree *t, char *err, size_t errlen)
{
	uint8_t seen[BCSD_MAX_NODES];
	uint32_t i, j, c, up, steps, sum, n = t->nr;

	if (!n || n > BCSD_MAX_NODES)
		return fail(err, errlen, "%u nodes", n);
	if (t->root >= n || t->parent[t->root] != TOPO_NONE)
		return fail(err, errlen, "root %u has a parent", t->root);
	/* Every node reaches the root, at its depth. */
	for (i = 0; i < n; i++) {
		if (i != t->root && t->parent[i] >= n)
			return fail(err, errlen, "node %u has no parent", i);
		for (up = i, steps = 0; up != t->root && steps < n; steps++)
			up = t->parent[up];
		if (up != t->root)
			return fail(err, errlen, "node %u is in a cycle", i);
		if (t->depth[i] != steps)
			return fail(err, errlen, "node %u: depth %u, not %u",
				    i, t->depth[i], steps);
	}
	/* Each is the child of its parent, once; the subtree sizes add up. */
	memset(seen, 0, sizeof(seen));
	if (t->first[0] != 0 || t->first[n] != n - 1)
		return fail(err, errlen, "%u children of %u nodes",
			    t->first[n] - t->first[0], n);
	for (i = 0; i < n; i++) {
		if (t->first[i + 1] < t->first[i])
			return fail(err, errlen, "node %u: bad children", i);
		sum = 1;
		for (j = t->first[i]; j < t->first[i + 1]; j++) {
			c = t->child[j];
			if (c >= n || t->parent[c] != i || seen[c]++)
				return fail(err, errlen,
					    "node %u: bad child %u", i, c);
			sum += t->size[c];
		}
		if (t->size[i] != sum)
			return fail(err, errlen, "node %u: subtree %u, not %u",
				    i, t->size[i], sum);
	}
	/* The breadth-first order holds each node once, by depth. */
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++) {
		c = t->order[i];
		if (c >= n || seen[c]++ ||
		    (i && t->depth[c] < t->depth[t->order[i - 1]]))
			return fail(err, errlen, "order: bad node at %u", i);
	}
	if (t->order[0] != t->root)
		return fail(err, errlen, "order: the root is not first");
	return 0;
}

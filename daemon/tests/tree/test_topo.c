// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the topology of a tree of daemons (topo.c): k-ary
 * trees against a model of their places, re-rooting, the topology file
 * in MRNet's notation and the nodes file, each error with its message.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "tree/topo.h"
#include "tests/unit.h"

static struct topo_list list;
static struct topo_tree tree, other;
static char err[512];

static int list_from(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		abort();
	err[0] = '\0';
	ret = topo_list_read_stream(&list, f, "nodes", err, sizeof(err));
	fclose(f);
	return ret;
}

static int tree_from(struct topo_tree *t, const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		abort();
	err[0] = '\0';
	ret = topo_tree_read_stream(t, &list, f, "topo", err, sizeof(err));
	fclose(f);
	return ret;
}

/* @n nodes with ids 1000 + i at hosts n0, n1, ... */
static void make_list(uint32_t n)
{
	char host[32];
	uint32_t i;

	topo_list_init(&list);
	for (i = 0; i < n; i++) {
		snprintf(host, sizeof(host), "n%u", i);
		if (topo_list_add(&list, 1000 + i, host, 0, err, sizeof(err)))
			abort();
	}
}

/* The model: node i's place in the k-ary tree rooted at node r. */
static uint64_t place(uint32_t i, uint32_t r)
{
	return i == r ? 0 : 1 + (i < r ? i : i - 1);
}

static uint32_t at_place(uint64_t p, uint32_t r)
{
	if (!p)
		return r;
	return (uint32_t)(p - 1 < r ? p - 1 : p);
}

/* Nodes in the subtree of place @p of @n places, level by level. */
static uint32_t model_size(uint64_t p, uint64_t n, uint64_t k)
{
	uint64_t lo = p, hi = p, size = 0;

	while (lo < n) {
		size += (hi < n ? hi : n - 1) - lo + 1;
		lo = k * lo + 1;
		hi = k * hi + k;
	}
	return (uint32_t)size;
}

/* @tree is the k-ary tree of @n nodes with fan-out @k rooted at @r. */
static void check_kary(uint32_t n, uint32_t k, uint32_t r)
{
	const uint32_t *child;
	uint64_t p, q, d;
	uint32_t i, j, nr, bad = 0;

	CHECK(topo_check(&tree, err, sizeof(err)) == 0);
	CHECK(tree.root == r && tree.nr == n);
	CHECK(topo_parent(&tree, r) == TOPO_NONE);
	for (i = 0; i < n; i++) {
		p = place(i, r);
		for (q = p, d = 0; q; d++)
			q = (q - 1) / k;
		if (p && topo_parent(&tree, i) != at_place((p - 1) / k, r))
			bad++;
		if (topo_depth(&tree, i) != d)
			bad++;
		if (topo_subtree(&tree, i) != model_size(p, n, k))
			bad++;
		nr = topo_children(&tree, i, &child);
		for (j = 0, q = k * p + 1; j < nr; j++, q++)
			if (q >= n || child[j] != at_place(q, r))
				bad++;
		if (nr != (k * p + 1 >= n ? 0 :
			   (k * p + k < n ? k : n - 1 - k * p)))
			bad++;
	}
	CHECK(bad == 0);
	CHECK(topo_subtree(&tree, r) == n);
}

static void test_kary(void)
{
	static const uint32_t sizes[] = { 1, 2, 33, 1024 };
	static const uint32_t fanouts[] = { 1, 2, 32 };
	uint32_t s, f, n, roots[3], i;

	for (s = 0; s < 4; s++) {
		n = sizes[s];
		make_list(n);
		roots[0] = 0;
		roots[1] = n - 1;
		roots[2] = n / 2;
		for (f = 0; f < 3; f++) {
			CHECK(topo_tree_kary(&tree, &list, 1000, fanouts[f],
					     err, sizeof(err)) == 0);
			check_kary(n, fanouts[f], 0);
			/* A take-over: the same tree, another root. */
			for (i = 1; i < 3; i++) {
				CHECK(topo_tree_reroot(&tree, &list,
						       1000 + roots[i], err,
						       sizeof(err)) == 0);
				check_kary(n, fanouts[f], roots[i]);
			}
		}
	}
	/* Depths: 1,024 nodes at fan-out 32 are 3 levels, at 1 a chain. */
	CHECK(topo_tree_kary(&tree, &list, 1000, 32, err, sizeof(err)) == 0);
	CHECK(topo_depth(&tree, 1023) == 2 && topo_depth(&tree, 32) == 1 &&
	      topo_depth(&tree, 33) == 2);
	CHECK(topo_tree_kary(&tree, &list, 1000, 1, err, sizeof(err)) == 0);
	CHECK(topo_depth(&tree, 1023) == 1023);
	CHECK(topo_tree_kary(&tree, &list, 1000, 1024, err, sizeof(err)) == 0);
	CHECK(topo_depth(&tree, 1023) == 1 && topo_subtree(&tree, 5) == 1);

	/* Refused, the tree unchanged. */
	make_list(33);
	CHECK(topo_tree_kary(&tree, &list, 1005, 2, err, sizeof(err)) == 0);
	CHECK(topo_tree_kary(&tree, &list, 1000, 0, err, sizeof(err)) < 0);
	CHECK(strstr(err, "fan-out 0 is not in 1..1024") != NULL);
	CHECK(topo_tree_kary(&tree, &list, 1000, 1025, err,
			     sizeof(err)) < 0);
	CHECK(topo_tree_kary(&tree, &list, 999, 2, err, sizeof(err)) < 0);
	CHECK(strstr(err, "node 999 is not in the list") != NULL);
	CHECK(topo_tree_reroot(&tree, &list, 7, err, sizeof(err)) < 0);
	CHECK(strstr(err, "node 7 is not in the list") != NULL);
	check_kary(33, 2, 5);
	topo_list_init(&list);
	CHECK(topo_tree_kary(&tree, &list, 1000, 2, err, sizeof(err)) < 0);

	/* topo_check() finds a broken tree. */
	make_list(33);
	CHECK(topo_tree_kary(&tree, &list, 1000, 2, err, sizeof(err)) == 0);
	other = tree;
	other.parent[1] = 3;	/* 3 is 1's child: a cycle */
	CHECK(topo_check(&other, err, sizeof(err)) < 0);
	CHECK(strstr(err, "cycle") != NULL);
	other = tree;
	other.depth[7]++;
	CHECK(topo_check(&other, err, sizeof(err)) < 0);
	other = tree;
	other.size[0]--;
	CHECK(topo_check(&other, err, sizeof(err)) < 0);
	other = tree;
	other.child[3] = other.child[4];
	CHECK(topo_check(&other, err, sizeof(err)) < 0);
	other = tree;
	other.order[5] = other.order[6];
	CHECK(topo_check(&other, err, sizeof(err)) < 0);
}

/* The 7 nodes of Documentation/tree.rst. */
static const char nodes7[] =
	"# id host\n"
	"1 fe\n"
	"2 c1\n"
	"3 c2\n"
	"\n"
	"4 b1   # leaves\n"
	"5 b2\n"
	"6 b3\n"
	"7 b4\n";

static const char topo7[] =
	"fe:0 => c1:0 c2:0 ;\n"
	"c1:0 => b1:0 b2:0 ;\n"
	"c2:0 => b3:0 b4:0 ;\n";

/* Node @id's parent's id, or 0. */
static uint32_t parent_id(uint32_t id)
{
	uint32_t p = topo_parent(&tree, (uint32_t)topo_index(&list, id));

	return p == TOPO_NONE ? 0 : list.node[p].id;
}

static uint32_t depth_id(uint32_t id)
{
	return topo_depth(&tree, (uint32_t)topo_index(&list, id));
}

/* The ids of node @id's children, as "2 3". */
static const char *children_ids(uint32_t id)
{
	static char buf[256];
	const uint32_t *c;
	uint32_t n, j;
	size_t off = 0;

	buf[0] = '\0';
	n = topo_children(&tree, (uint32_t)topo_index(&list, id), &c);
	for (j = 0; j < n && off < sizeof(buf); j++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%u",
					j ? " " : "", list.node[c[j]].id);
	return buf;
}

static void test_file(void)
{
	uint32_t i, bad;
	char name[64];

	CHECK(list_from(nodes7) == 0);
	CHECK(list.nr == 7 && list.node[3].id == 4);
	CHECK(!strcmp(topo_name(&list, 3, name, sizeof(name)), "b1:0"));
	CHECK(tree_from(&tree, topo7) == 0);
	CHECK(tree.kind == TOPO_FILE);
	CHECK(topo_check(&tree, err, sizeof(err)) == 0);
	CHECK(parent_id(1) == 0 && parent_id(2) == 1 && parent_id(3) == 1);
	CHECK(parent_id(4) == 2 && parent_id(5) == 2);
	CHECK(parent_id(6) == 3 && parent_id(7) == 3);
	CHECK(depth_id(1) == 0 && depth_id(3) == 1 && depth_id(7) == 2);
	CHECK(!strcmp(children_ids(1), "2 3"));
	CHECK(!strcmp(children_ids(3), "6 7"));
	CHECK(!strcmp(children_ids(7), ""));
	CHECK(topo_subtree(&tree, 0) == 7 && topo_subtree(&tree, 1) == 3);

	/* Statements over lines, comments, any order; children in list order. */
	CHECK(tree_from(&other,
			"# the leaves first\n"
			"c2:0 =>\n"
			"  b4:0   # last\n"
			"  b3:0\n"
			";\n"
			"FE:0=>c2:0 c1:0;c1:0 => b2:0 b1:0 ;") == 0);
	CHECK(!memcmp(other.parent, tree.parent, sizeof(tree.parent)));
	CHECK(!memcmp(other.child, tree.child, sizeof(tree.child)));
	CHECK(other.root == 0);

	/* A take-over by b1: the path b1 - c1 - fe turns round. */
	CHECK(topo_tree_reroot(&tree, &list, 4, err, sizeof(err)) == 0);
	CHECK(topo_check(&tree, err, sizeof(err)) == 0);
	CHECK(parent_id(4) == 0 && parent_id(2) == 4 && parent_id(1) == 2);
	CHECK(parent_id(5) == 2 && parent_id(3) == 1 && parent_id(6) == 3);
	CHECK(depth_id(4) == 0 && depth_id(1) == 2 && depth_id(7) == 4);
	CHECK(!strcmp(children_ids(2), "1 5"));
	CHECK(!strcmp(children_ids(4), "2"));
	CHECK(topo_subtree(&tree, 1) == 6 && topo_subtree(&tree, 0) == 4);
	/* Then by b3: as if the file's tree were hung from b3 at once. */
	CHECK(topo_tree_reroot(&tree, &list, 6, err, sizeof(err)) == 0);
	CHECK(tree_from(&other, topo7) == 0);
	CHECK(topo_tree_reroot(&other, &list, 6, err, sizeof(err)) == 0);
	CHECK(!memcmp(other.parent, tree.parent, sizeof(tree.parent)));
	CHECK(parent_id(6) == 0 && parent_id(3) == 6 && parent_id(1) == 3);
	CHECK(parent_id(7) == 3 && parent_id(2) == 1);
	/* Back to the file's root: the file's tree. */
	CHECK(topo_tree_reroot(&tree, &list, 1, err, sizeof(err)) == 0);
	CHECK(tree_from(&other, topo7) == 0);
	CHECK(!memcmp(other.parent, tree.parent, sizeof(tree.parent)));
	CHECK(!memcmp(other.depth, tree.depth, sizeof(tree.depth)));
	/* The root again: nothing changes. */
	CHECK(topo_tree_reroot(&tree, &list, 1, err, sizeof(err)) == 0);
	CHECK(!memcmp(other.parent, tree.parent, sizeof(tree.parent)));
	CHECK(topo_tree_reroot(&tree, &list, 8, err, sizeof(err)) < 0);
	CHECK(!memcmp(other.parent, tree.parent, sizeof(tree.parent)));

	/* Several daemons of one host: idx counts them in list order. */
	CHECK(list_from("10 10.0.0.1:6000\n11 10.0.0.2\n12 10.0.0.1:6001\n"
			"13 10.0.0.1\n") == 0);
	CHECK(list.node[0].numeric && list.node[0].port == 6000);
	CHECK(list.node[0].addr.s_addr == htonl(0x0a000001));
	CHECK(!strcmp(topo_name(&list, 2, name, sizeof(name)),
		      "10.0.0.1:1"));
	CHECK(tree_from(&tree, "10.0.0.2:0 => 10.0.0.1:2 ;\n"
			"10.0.0.1:2 => 10.0.0.1:0 10.0.0.1:1 ;\n") == 0);
	CHECK(parent_id(13) == 11 && parent_id(10) == 13 &&
	      parent_id(12) == 13 && parent_id(11) == 0);

	/* One node: a statement without children. */
	CHECK(list_from("5 solo\n") == 0);
	CHECK(tree_from(&tree, "solo:0 ;") == 0);
	CHECK(tree.root == 0 && topo_subtree(&tree, 0) == 1);
	CHECK(tree_from(&tree, "solo:0 => ;") == 0);
	CHECK(topo_check(&tree, err, sizeof(err)) == 0);

	/* A flat tree of 1,024 nodes, then re-rooted at each leaf in turn. */
	make_list(1024);
	{
		static char text[16 * 1024];
		size_t off;

		off = (size_t)snprintf(text, sizeof(text), "n0:0 =>");
		for (i = 1; i < 1024; i++)
			off += (size_t)snprintf(text + off, sizeof(text) - off,
						" n%u:0", i);
		snprintf(text + off, sizeof(text) - off, " ;\n");
		CHECK(tree_from(&tree, text) == 0);
	}
	CHECK(topo_subtree(&tree, 0) == 1024 && topo_depth(&tree, 1023) == 1);
	bad = 0;
	for (i = 1; i < 1024; i += 97) {
		bad += topo_tree_reroot(&tree, &list, 1000 + i, err,
					sizeof(err)) != 0;
		bad += topo_check(&tree, err, sizeof(err)) != 0;
		bad += topo_depth(&tree, 0) != 1 ||
		       topo_subtree(&tree, 0) != 1023;
	}
	CHECK(bad == 0);
}

/* Topology file @text over nodes7 is refused with @msg. */
static void refused(const char *text, const char *msg)
{
	int ret = tree_from(&tree, text);

	CHECK(ret < 0);
	if (ret < 0 && !strstr(err, msg))
		fprintf(stderr, "expected \"%s\", got \"%s\"\n", msg, err);
	CHECK(strstr(err, msg) != NULL);
}

static void test_file_errors(void)
{
	CHECK(list_from(nodes7) == 0);
	refused("", "topo: no tree: the file names no node");
	refused("# nothing\n\n", "topo: no tree");
	refused(topo7 + 20, "topo:2: two roots, 'c1:0' (line 1) and 'c2:0'");
	refused("fe:0 => c1:0 c2:0 ;\nc1:0 => b1:0 b2:0 ;\n"
		"c2:0 => b3:0 b9:0 ;\n", "topo:3: 'b9:0' is not in the nodes file");
	refused("fe:0 => c1:1 ;", "topo:1: 'c1:1' is not in the nodes file");
	refused("fe:0 => xx:0 ;", "topo:1: 'xx:0' is not in the nodes file");
	refused("fe:0 => c1:0 c2:0 ;\nc1:0 => b1:0 b2:0 ;\n"
		"c2:0 =>\n b3:0\n b1:0 ;\n",
		"topo:5: 'b1:0' has two parents, 'c2:0' and 'c1:0' (line 2)");
	refused("fe:0 => c1:0 c1:0 ;",
		"topo:1: 'c1:0' has two parents, 'fe:0' and 'fe:0' (line 1)");
	refused("fe:0 => c1:0 ;\nfe:0 => c2:0 ;",
		"topo:2: 'fe:0' has its children on line 1 already");
	refused("fe:0 => c1:0 c2:0 ;\nc1:0 => b1:0 b2:0 ;\n"
		"c2:0 => b3:0 b4:0 ;\nb4:0 => fe:0 ;\n",
		"topo:3: 'b4:0' is in a cycle");
	refused("fe:0 => c1:0 c2:0 ;\nc1:0 => b1:0 b2:0 ;\n"
		"c2:0 => b3:0 b4:0 ;\nb3:0 => b3:0 ;\n",
		"topo:4: 'b3:0' has two parents, 'b3:0' and 'c2:0' (line 3)");
	refused("fe:0 => fe:0 ;", "topo:1: 'fe:0' is in a cycle");
	refused("fe:0 => c1:0 c2:0 ;\nc1:0 => b1:0 b2:0 ;\n"
		"b3:0 => b4:0 ;\nb4:0 => b3:0 ;\n",
		"topo:3: 'b4:0' is in a cycle");
	refused("fe:0 => c1:0 c2:0 ;\nc1:0 => b1:0 b2:0 ;\n"
		"c2:0 => b3:0 ;\n",
		"topo: node 7 ('b4:0') of the nodes file is not in the tree");
	refused("fe:0 => c1:0", "topo:1: expected a child or ';' after 'fe:0 =>', not the end of the file");
	refused("fe:0 c1:0 ;", "topo:1: expected '=>' or ';' after 'fe:0', not a name");
	refused("fe:0", "topo:1: expected '=>' or ';' after 'fe:0', not the end of the file");
	refused("\n\n=> c1:0 ;", "topo:3: expected host:idx, not '=>'");
	refused(";", "topo:1: expected host:idx, not ';'");
	refused("fe:0 => c1:0 => c2:0 ;", "topo:1: expected a child or ';' after 'fe:0 =>', not '=>'");
	refused("fe:0 = c1:0 ;", "topo:1: '=' without '>'");
	refused("fe:0 -> c1:0 ;",
		"topo:1: expected '=>' or ';' after 'fe:0', not a name");
	refused("fe:0 => c1:0 @ ;", "topo:1: unexpected '@'");
	refused("fe:0 => c1:0 \x01;", "topo:1: unexpected byte 0x01");
	refused("fe => c1:0 ;", "topo:1: 'fe' is not host:idx");
	refused("fe:x => c1:0 ;", "topo:1: 'fe:x' is not host:idx");
	refused(":0 => c1:0 ;", "topo:1: ':0' is not host:idx");
	refused("fe:0:0 => c1:0 ;", "topo:1: 'fe:0:0' is not host:idx");
	refused("fe:1025 => c1:0 ;", "topo:1: 'fe:1025' is not host:idx");
	{
		char big[400];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		refused(big, "topo:1: name too long");
	}
	/* A NUL byte in a file is refused too. */
	{
		static const char nul[] = "fe:0 => c1:0\0 ;";
		FILE *f = fmemopen((void *)nul, sizeof(nul) - 1, "r");

		CHECK(f && topo_tree_read_stream(&tree, &list, f, "topo", err,
						 sizeof(err)) < 0);
		CHECK(strstr(err, "topo:1: unexpected byte 0x00") != NULL);
		if (f)
			fclose(f);
	}
	CHECK(topo_tree_read_file(&tree, &list, "/nonexistent/topo", err,
				  sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent/topo: No such file") != NULL);
}

/* Nodes file @text is refused with @msg. */
static void list_refused(const char *text, const char *msg)
{
	int ret = list_from(text);

	CHECK(ret < 0);
	if (!strstr(err, msg))
		fprintf(stderr, "expected \"%s\", got \"%s\"\n", msg, err);
	CHECK(strstr(err, msg) != NULL);
}

static void test_nodes(void)
{
	static char text[1100 * 24];
	char big[1200];
	size_t off = 0;
	uint32_t i;

	CHECK(list_from("  1\t10.1.2.3:7000   \r\n2 Node-2.example_org\n"
			"4294967295 n3 # last\n") == 0);
	CHECK(list.nr == 3 && list.node[0].port == 7000);
	CHECK(list.node[0].numeric && list.node[0].addr.s_addr ==
	      htonl(0x0a010203));
	CHECK(!list.node[1].numeric && list.node[1].port == 0);
	CHECK(!strcmp(list.node[1].host, "Node-2.example_org"));
	CHECK(list.node[2].id == 4294967295U);
	CHECK(topo_index(&list, 2) == 1 && topo_index(&list, 3) < 0);
	/* The same host at two ports is two nodes; no final newline. */
	CHECK(list_from("1 h:1\n2 h:2\n3 h") == 0 && list.nr == 3);

	list_refused("", "nodes: no nodes");
	list_refused("# only a comment\n\n", "nodes: no nodes");
	list_refused("1 a\n\n1 b\n", "nodes:3: node id 1 twice (line 1)");
	list_refused("1 a\n2 b\n3 A\n", "nodes:3: host A twice (line 1)");
	list_refused("1 a:9\n2 a:9\n", "nodes:2: host a:9 twice (line 1)");
	list_refused("0 a\n",
		     "nodes:1: node id '0' is not a number in 1..4294967295");
	list_refused("4294967296 a\n", "nodes:1: node id '4294967296' is not a number");
	list_refused("-1 a\n", "nodes:1: node id '-1' is not a number");
	list_refused("x a\n", "nodes:1: node id 'x' is not a number");
	list_refused("1\n", "nodes:1: expected 'ID HOST[:PORT]'");
	list_refused("1 a b\n", "nodes:1: expected 'ID HOST[:PORT]'");
	list_refused("1 a:0\n", "nodes:1: port '0' is not a number in 1..65535");
	list_refused("1 a:65536\n", "nodes:1: port '65536' is not");
	list_refused("1 a:\n", "nodes:1: port '' is not");
	list_refused("1 a:1:2\n", "nodes:1: port '1:2' is not");
	list_refused("1 :5\n", "nodes:1: empty host");
	list_refused("1 a/b\n", "nodes:1: host 'a/b': character 2 is not");
	list_refused("1 300.1.1.1\n", "nodes:1: host '300.1.1.1' is not an IPv4 address");
	list_refused("1 10.1.1\n", "is not an IPv4 address");
	{
		static const char nul[] = "1 a\n2 b\0\n";
		FILE *f = fmemopen((void *)nul, sizeof(nul) - 1, "r");

		CHECK(f && topo_list_read_stream(&list, f, "nodes", err,
						 sizeof(err)) < 0);
		CHECK(strstr(err, "nodes:2: NUL byte") != NULL);
		if (f)
			fclose(f);
	}
	memset(big, 'h', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	list_refused(big, "nodes:1: line too long");
	snprintf(big, sizeof(big), "1 %0300d\n", 0);
	memset(big + 2, 'h', 300);
	list_refused(big, "nodes:1: host name longer than 253 characters");
	for (i = 1; i <= 1025; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off,
					"%u 10.0.%u.%u\n", i, i / 256, i % 256);
	list_refused(text, "nodes:1025: more than 1024 nodes");
	text[off - strlen("1025 10.0.4.1\n")] = '\0';
	CHECK(list_from(text) == 0 && list.nr == 1024);
	CHECK(topo_list_read_file(&list, "/nonexistent/nodes", err,
				  sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent/nodes: No such file") != NULL);
	CHECK(topo_list_add(&list, 2000, "x", 0, err, sizeof(err)) < 0);
	CHECK(strstr(err, "more than 1024 nodes") != NULL);
}

/*
 * Hostlists in the nodes file: the hosts of a line get consecutive ids
 * from the line's, in the list's order, and its port; errors name the line.
 */
static void test_nodes_hostlist(void)
{
	static char text[64];

	CHECK(list_from("1 head\n2 node[01-16]\n20 10.0.0.[30-31]:5400\n"
			"30 r[1-2]n[1-2],login # comment\n") == 0);
	CHECK(list.nr == 1 + 16 + 2 + 5);
	CHECK(list.node[1].id == 2 && !strcmp(list.node[1].host, "node01"));
	CHECK(list.node[16].id == 17 && !strcmp(list.node[16].host, "node16"));
	CHECK(list.node[17].id == 20 && list.node[17].numeric &&
	      list.node[17].addr.s_addr == htonl(0x0a00001e) &&
	      list.node[17].port == 5400);
	CHECK(list.node[18].id == 21 && list.node[18].port == 5400 &&
	      !strcmp(list.node[18].host, "10.0.0.31"));
	CHECK(!strcmp(list.node[19].host, "r1n1") && list.node[19].id == 30);
	CHECK(!strcmp(list.node[21].host, "r2n1") && list.node[21].id == 32);
	CHECK(!strcmp(list.node[23].host, "login") && list.node[23].id == 34);
	CHECK(list.node[3].port == 0);
	CHECK(topo_index(&list, 17) == 16 && topo_index(&list, 18) < 0);
	/* One host in brackets is one node. */
	CHECK(list_from("7 n[5]\n") == 0 && list.nr == 1 &&
	      list.node[0].id == 7 && !strcmp(list.node[0].host, "n5"));

	list_refused("1 n[1-3]\n3 m\n", "nodes:2: node id 3 twice (line 1)");
	list_refused("1 n[1-3]\n9 n2\n", "nodes:2: host n2 twice (line 1)");
	list_refused("1 n[1,1]\n", "nodes:1: host n1 twice (line 1)");
	list_refused("1 n[1-2\n", "nodes:1: bad hostlist 'n[1-2': a '[' without ']'");
	list_refused("1 n[2-1]\n", "nodes:1: bad hostlist 'n[2-1]': a range backwards");
	list_refused("1 n[a]\n", "nodes:1: bad hostlist 'n[a]': not a number");
	list_refused("1 a,,b\n", "nodes:1: bad hostlist 'a,,b': an empty name");
	list_refused("1 n[1-2]/x\n", "nodes:1: host 'n1/x': character 3 is not");
	list_refused("4294967295 n[1-2]\n",
		     "nodes:1: the ids of the hosts run past 4294967295 at 'n2'");
	list_refused("1 n[1-1025]\n", "nodes:1: more than 1024 nodes");
	snprintf(text, sizeof(text), "1 n[1-2]:0\n");
	list_refused(text, "nodes:1: port '0' is not a number in 1..65535");
}

/*
 * topo_index() against a linear search: 1,024 ids in a scrambled order,
 * the extremes among them, every id found at its place, none in between
 * nor beyond found; a refused node leaves the index as it was.
 */
static void test_index(void)
{
	uint32_t i, j, id, want, bad = 0;
	char host[32];

	topo_list_init(&list);
	CHECK(topo_index(&list, 1) < 0);
	for (i = 0; i < BCSD_MAX_NODES; i++) {
		/* Scrambled by a multiplicative hash (a repeat aborts). */
		id = i * 2654435761U % 4000000000U + 2;
		if (i < 2)
			id = i ? 1 : UINT32_MAX;
		snprintf(host, sizeof(host), "h%u", i);
		if (topo_list_add(&list, id, host, 0, err, sizeof(err)))
			abort();
	}
	CHECK(topo_list_add(&list, 7, "h0", 0, err, sizeof(err)) < 0);
	for (i = 0; i < list.nr; i++) {
		id = list.node[i].id;
		bad += topo_index(&list, id) != (int)i;
		/* The ids next to it, if no node has them. */
		for (j = 0; j < 2; j++) {
			uint32_t near = j ? id + 1 : id - 1;
			uint32_t k;

			want = UINT32_MAX;
			for (k = 0; k < list.nr; k++)
				if (list.node[k].id == near)
					want = k;
			bad += want == UINT32_MAX ?
			       topo_index(&list, near) >= 0 :
			       topo_index(&list, near) != (int)want;
		}
	}
	CHECK(bad == 0);
	CHECK(topo_index(&list, 0) < 0 && topo_index(&list, 1) == 1 &&
	      topo_index(&list, UINT32_MAX) == 0);
}

int main(void)
{
	test_kary();
	test_file();
	test_file_errors();
	test_nodes();
	test_nodes_hostlist();
	test_index();
	return unit_done("test_topo");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bcsstat's reader of slice records for plot and trace: the JSON files of
 * `bcsstat slices --json` (one per node, as cluster tests save them), with
 * the `bcsstat jobs --json` file beside each, or the local ring.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include <bcs.h>

#include "bcsstat.h"

/* ---- JSON files ---- */

/* The whole of @path, NUL-terminated; NULL and errno on failure. */
static char *read_all(const char *path)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap), *p;
	FILE *f;

	if (!buf)
		return NULL;
	f = fopen(path, "r");
	if (!f) {
		free(buf);
		return NULL;
	}
	for (;;) {
		len += fread(buf + len, 1, cap - len - 1, f);
		if (len < cap - 1)
			break;
		p = realloc(buf, cap * 2);
		if (!p) {
			errno = ENOMEM;
			goto fail;
		}
		buf = p;
		cap *= 2;
	}
	if (ferror(f)) {
		errno = EIO;
		goto fail;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

/* Parse the JSON value at @text; prints why not and returns NULL. */
static struct json_object *parse_one(struct json_tokener *tok,
				     const char *path, const char *text,
				     size_t at, size_t *end)
{
	struct json_object *o;

	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, text + at, (int)strlen(text + at));
	*end = at + json_tokener_get_parse_end(tok);
	if (!o) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		fprintf(stderr, "bcsstat: %s is not JSON: %s at byte %zu\n",
			path, e == json_tokener_continue ? "unexpected end" :
			json_tokener_error_desc(e), *end);
	}
	return o;
}

/*
 * Parse @text, the contents of @path: one JSON value (the array of
 * `slices --json`, a job dump), or objects one after the other (the lines
 * of `slices --follow --json`, dumps put together with cat), which come
 * back as an array.  Prints what is wrong and returns NULL.
 */
struct json_object *json_text_parse(const char *path, const char *text)
{
	struct json_object *o, *arr = NULL;
	struct json_tokener *tok;
	size_t end;

	if (strlen(text) > INT32_MAX) {
		fprintf(stderr, "bcsstat: %s: too large\n", path);
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		return NULL;
	}
	o = parse_one(tok, path, text, 0, &end);
	end += strspn(text + end, " \t\r\n");
	if (o && text[end] && json_object_is_type(o, json_type_object)) {
		arr = json_object_new_array();
		json_object_array_add(arr, o);
		while (text[end]) {
			size_t at = end;

			o = parse_one(tok, path, text, at, &end);
			if (!o || !json_object_is_type(o, json_type_object)) {
				if (o)
					fprintf(stderr, "bcsstat: %s: not an "
						"object at byte %zu\n", path,
						at);
				json_object_put(o);
				json_object_put(arr);
				arr = NULL;
				break;
			}
			json_object_array_add(arr, o);
			end += strspn(text + end, " \t\r\n");
		}
		o = arr;
	} else if (o && text[end]) {
		fprintf(stderr, "bcsstat: %s: more after the JSON value at "
			"byte %zu\n", path, end);
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

struct json_object *json_file_parse(const char *path)
{
	struct json_object *o;
	char *text;

	text = read_all(path);
	if (!text) {
		fprintf(stderr, "bcsstat: cannot read %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	o = json_text_parse(path, text);
	free(text);
	return o;
}

/* Field @key of record @i as an unsigned integer; -1 if it is wrong. */
static int get_u64(const char *path, size_t i, struct json_object *rec,
		   const char *key, int required, __u64 *v)
{
	struct json_object *f;

	*v = 0;
	if (!json_object_object_get_ex(rec, key, &f) || !f) {
		if (!required)
			return 0;
		fprintf(stderr, "bcsstat: %s: record %zu has no \"%s\"\n",
			path, i, key);
		return -1;
	}
	if (!json_object_is_type(f, json_type_int) ||
	    json_object_get_int64(f) < 0) {
		fprintf(stderr, "bcsstat: %s: record %zu: \"%s\" is not an "
			"unsigned integer\n", path, i, key);
		return -1;
	}
	*v = json_object_get_uint64(f);
	return 0;
}

static int get_u32(const char *path, size_t i, struct json_object *rec,
		   const char *key, __u32 *v)
{
	__u64 x;

	if (get_u64(path, i, rec, key, 0, &x))
		return -1;
	*v = x > UINT32_MAX ? UINT32_MAX : (uint32_t)x;
	return 0;
}

static int record_from_json(const char *path, size_t i,
			    struct json_object *rec,
			    struct bcs_slice_record *r)
{
	struct json_object *f;
	__u64 row;
	int e = 0;

	memset(r, 0, sizeof(*r));
	if (!json_object_is_type(rec, json_type_object)) {
		fprintf(stderr, "bcsstat: %s: record %zu is not an object\n",
			path, i);
		return -1;
	}
	e |= get_u64(path, i, rec, "seq", 1, &r->seq);
	e |= get_u64(path, i, rec, "slice", 1, &r->slice);
	e |= get_u64(path, i, rec, "deadline_ns", 1, &r->deadline_ns);
	e |= get_u64(path, i, rec, "switch_start_ns", 1, &r->switch_start_ns);
	e |= get_u64(path, i, rec, "interval_ns", 1, &r->interval_ns);
	e |= get_u64(path, i, rec, "strobe_ns", 0, &r->strobe_ns);
	e |= get_u64(path, i, rec, "switch_end_ns", 0, &r->switch_end_ns);
	e |= get_u64(path, i, rec, "switch_ns", 0, &r->switch_ns);
	e |= get_u64(path, i, rec, "late_total", 0, &r->late_total);
	e |= get_u64(path, i, rec, "missed_total", 0, &r->missed_total);
	e |= get_u64(path, i, rec, "parked_ns", 0, &r->parked_ns);
	e |= get_u64(path, i, rec, "resumed_ns", 0, &r->resumed_ns);
	e |= get_u32(path, i, rec, "suspended", &r->nr_suspended);
	e |= get_u32(path, i, rec, "resumed", &r->nr_resumed);
	e |= get_u32(path, i, rec, "running", &r->nr_running);
	e |= get_u32(path, i, rec, "blocked", &r->nr_blocked);
	e |= get_u32(path, i, rec, "late", &r->late);
	e |= get_u32(path, i, rec, "missed", &r->missed);
	if (e)
		return -1;
	r->row = BCS_ROW_NONE;
	if (json_object_object_get_ex(rec, "row", &f) && f) {
		if (get_u64(path, i, rec, "row", 1, &row))
			return -1;
		if (row >= BCS_ROWS_MAX) {
			fprintf(stderr, "bcsstat: %s: record %zu: bad row "
				"%llu\n", path, i, (unsigned long long)row);
			return -1;
		}
		r->row = (uint32_t)row;
	}
	if (!json_object_object_get_ex(rec, "flags", &f) ||
	    !json_object_is_type(f, json_type_string) ||
	    bcs_slice_flags_parse(json_object_get_string(f), &r->flags)) {
		fprintf(stderr, "bcsstat: %s: record %zu: \"flags\" is not a "
			"string of flag letters (see bcsstat --help)\n",
			path, i);
		return -1;
	}
	return 0;
}

static int load_slices(struct node_input *in)
{
	struct json_object *arr, *f;
	size_t i, n;

	arr = json_file_parse(in->path);
	if (!arr)
		return -1;
	/* A job dump: its records, and its node's name. */
	if (json_object_is_type(arr, json_type_object) &&
	    json_object_object_get_ex(arr, "format", &f) &&
	    json_object_is_type(f, json_type_string) &&
	    !strcmp(json_object_get_string(f), BCS_DUMP_FORMAT)) {
		struct json_object *dump = arr, *node;

		if (!json_object_object_get_ex(dump, "slices", &f) || !f) {
			fprintf(stderr, "bcsstat: %s: a job dump without "
				"slice records\n", in->path);
			goto fail;
		}
		if (json_object_object_get_ex(dump, "node", &node) &&
		    json_object_is_type(node, json_type_string)) {
			char *name = strdup(json_object_get_string(node));

			if (name) {
				free(in->name);
				in->name = name;
			}
		}
		arr = json_object_get(f);
		json_object_put(dump);
	}
	if (!json_object_is_type(arr, json_type_array)) {
		fprintf(stderr, "bcsstat: %s: not an array of slice records "
			"(bcsstat slices --json)\n", in->path);
		goto fail;
	}
	n = json_object_array_length(arr);
	in->recs = calloc(n ? n : 1, sizeof(*in->recs));
	if (!in->recs) {
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (record_from_json(in->path, i,
				     json_object_array_get_idx(arr, i),
				     &in->recs[i]))
			goto fail;
	in->nr_recs = n;
	json_object_put(arr);
	return 0;
fail:
	json_object_put(arr);
	return -1;
}

/* The jobs of @path, a `bcsstat jobs --json` file: id and row of each. */
static int load_jobs(struct node_input *in, const char *path)
{
	struct json_object *arr, *j, *f;
	size_t i, n;

	arr = json_file_parse(path);
	if (!arr)
		return -1;
	if (!json_object_is_type(arr, json_type_array)) {
		fprintf(stderr, "bcsstat: %s: not an array of jobs "
			"(bcsstat jobs --json)\n", path);
		goto fail;
	}
	n = json_object_array_length(arr);
	in->jobs = calloc(n ? n : 1, sizeof(*in->jobs));
	if (!in->jobs) {
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		goto fail;
	}
	for (i = 0; i < n; i++) {
		__u64 id, row = BCS_ROW_NONE;

		j = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(j, json_type_object))
			goto bad;
		if (get_u64(path, i, j, "id", 1, &id) ||
		    (json_object_object_get_ex(j, "row", &f) && f &&
		     get_u64(path, i, j, "row", 1, &row)))
			goto fail;
		if (id > UINT32_MAX || row > BCS_ROW_NONE)
			goto bad;
		in->jobs[i].id = (uint32_t)id;
		in->jobs[i].row = (uint32_t)row;
	}
	in->nr_jobs = n;
	json_object_put(arr);
	return 0;
bad:
	fprintf(stderr, "bcsstat: %s: job %zu: want an object with an id "
		"and a row\n", path, i);
fail:
	json_object_put(arr);
	return -1;
}

/* "node1" from ".../node1.slices.json"; else the file name. */
static char *node_name(const char *path)
{
	static const char suffix[] = ".slices.json";
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (len > sizeof(suffix) - 1 &&
	    !strcmp(base + len - (sizeof(suffix) - 1), suffix))
		len -= sizeof(suffix) - 1;
	return strndup(base, len);
}

/* The jobs.json file beside a slices.json one, or NULL if none is. */
static char *jobs_path(const char *path)
{
	static const char slices[] = "slices.json", jobs[] = "jobs.json";
	size_t len = strlen(path), stem;
	char *p;

	if (len < sizeof(slices) - 1 ||
	    strcmp(path + len - (sizeof(slices) - 1), slices))
		return NULL;
	stem = len - (sizeof(slices) - 1);
	p = malloc(stem + sizeof(jobs));
	if (!p)
		return NULL;
	memcpy(p, path, stem);
	memcpy(p + stem, jobs, sizeof(jobs));
	if (access(p, F_OK)) {
		free(p);
		return NULL;
	}
	return p;
}

/*
 * Inputs named alike (run1/node1.slices.json, run2/node1.slices.json) are
 * told apart by their directory: run1/node1, run2/node1.
 */
static int unique_names(struct node_input *in, size_t n)
{
	const char *p, *slash, *dir;
	size_t i, j;
	char *name;
	int *dup;

	dup = calloc(n, sizeof(*dup));
	if (!dup)
		return -1;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (!strcmp(in[i].name, in[j].name))
				dup[i] = dup[j] = 1;
	for (i = 0; i < n; i++) {
		p = in[i].path;
		slash = dup[i] && p ? strrchr(p, '/') : NULL;
		if (!slash)
			continue;
		for (dir = slash; dir > p && dir[-1] != '/'; dir--)
			;
		name = malloc((size_t)(slash - dir) + strlen(in[i].name) + 2);
		if (!name) {
			free(dup);
			return -1;
		}
		sprintf(name, "%.*s/%s", (int)(slash - dir), dir, in[i].name);
		free(in[i].name);
		in[i].name = name;
	}
	free(dup);
	return 0;
}

/* ---- the local ring ---- */

/* The jobs of this node, for their names; none if they cannot be had. */
static void load_local_jobs(struct bcs_stat *st, struct node_input *in)
{
	struct bcs_job_info *jobs;
	size_t n, i;

	if (bcs_stat_job_list(st, &jobs, &n))
		return;
	in->jobs = calloc(n ? n : 1, sizeof(*in->jobs));
	if (in->jobs) {
		for (i = 0; i < n; i++) {
			in->jobs[i].id = jobs[i].id;
			in->jobs[i].row = jobs[i].row;
		}
		in->nr_jobs = n;
	}
	free(jobs);
}

static int load_local(struct node_input *in, int want_jobs)
{
	struct bcs_stat_header hdr;
	struct bcs_stat *st;
	char host[256];
	uint64_t from;
	int err;

	if (gethostname(host, sizeof(host)))
		strcpy(host, "local");
	host[sizeof(host) - 1] = '\0';
	in->name = strdup(host);
	err = bcs_stat_open(&st);
	if (err) {
		fprintf(stderr, "bcsstat: %s\n",
			bcs_strerror(err, BCS_CTX_STAT_OPEN));
		return -1;
	}
	err = bcs_stat_map(st);
	if (!err)
		err = bcs_stat_header(st, &hdr);
	if (err) {
		fprintf(stderr, "bcsstat: cannot map /dev/"
			BCS_STAT_DEVICE_NAME ": %s\n",
			bcs_strerror(err, BCS_CTX_STAT_OPEN));
		goto out;
	}
	from = hdr.head > hdr.nr_records ? hdr.head - hdr.nr_records : 0;
	in->recs = calloc(hdr.nr_records ? hdr.nr_records : 1,
			  sizeof(*in->recs));
	if (!in->recs) {
		err = -ENOMEM;
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		goto out;
	}
	err = bcs_stat_snapshot(st, from, in->recs, hdr.nr_records,
				&in->nr_recs, NULL);
	if (err)
		fprintf(stderr, "bcsstat: reading /dev/" BCS_STAT_DEVICE_NAME
			": %s\n", bcs_strerror(err, BCS_CTX_GENERIC));
	else if (want_jobs)
		load_local_jobs(st, in);
out:
	bcs_stat_close(st);
	return err ? -1 : 0;
}

void inputs_free(struct node_input *in, size_t n)
{
	size_t i;

	if (!in)
		return;
	for (i = 0; i < n; i++) {
		free(in[i].name);
		free(in[i].recs);
		free(in[i].jobs);
	}
	free(in);
}

int inputs_load(char **files, int nr_files, int want_jobs,
		struct node_input **out, size_t *nr_out)
{
	size_t n = nr_files > 0 ? (size_t)nr_files : 1, i;
	struct node_input *in = calloc(n, sizeof(*in));
	char *jp;

	if (!in) {
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		return EXIT_FAILURE;
	}
	if (nr_files <= 0) {
		if (load_local(&in[0], want_jobs) || !in[0].name)
			goto fail;
		goto done;
	}
	for (i = 0; i < n; i++) {
		in[i].path = files[i];
		in[i].name = node_name(files[i]);
		if (!in[i].name || load_slices(&in[i]))
			goto fail;
		jp = want_jobs ? jobs_path(files[i]) : NULL;
		if (jp && load_jobs(&in[i], jp)) {
			free(jp);
			goto fail;
		}
		free(jp);
	}
	if (unique_names(in, n)) {
		fprintf(stderr, "bcsstat: %s\n", strerror(ENOMEM));
		goto fail;
	}
done:
	*out = in;
	*nr_out = n;
	return 0;
fail:
	inputs_free(in, n);
	return EXIT_FAILURE;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bcsstat events: one line per job's end, as bcs.ko announces it on the
 * generic netlink multicast group "events" (BCS_CMD_JOB_ENDED).  Joining
 * the group needs CAP_SYS_ADMIN, unlike the rest of bcsstat.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include <bcs.h>

#include "bcsstat.h"

static void event_line(const struct bcs_job_ended *e)
{
	printf("%10u %-9s %10u %10llu\n", e->job, bcs_job_end_name(e->reason),
	       e->dist_tasks, (unsigned long long)e->seq);
}

static void event_json(const struct bcs_job_ended *e)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "job", json_object_new_uint64(e->job));
	json_object_object_add(o, "end", json_object_new_string(
					bcs_job_end_name(e->reason)));
	json_object_object_add(o, "dist_tasks",
			       json_object_new_uint64(e->dist_tasks));
	json_object_object_add(o, "seq", json_object_new_uint64(e->seq));
	json_object_object_add(o, "lost", json_object_new_uint64(e->lost));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

int run_events(const struct opts *o)
{
	int json = o->given & OPT_JSON;
	struct bcs_events *ev;
	struct bcs_job_ended e;
	uint64_t printed = 0;
	int err;

	err = bcs_events_open(&ev);
	if (err) {
		fprintf(stderr, "bcsstat: events: %s\n",
			err == -EOPNOTSUPP ?
			"the loaded bcs module announces no job ends" :
			bcs_strerror(err, BCS_CTX_NETLINK));
		return EXIT_FAILURE;
	}
	/* The header says that the group is joined: what ends now shows. */
	if (!json)
		printf("%10s %-9s %10s %10s\n", "JOB", "END", "DIST_TASKS",
		       "SEQ");
	fflush(stdout);
	while (!(o->given & OPT_COUNT) || printed < o->count) {
		err = bcs_events_read(ev, &e, 0);
		if (err == -ENOBUFS) {
			fprintf(stderr, "bcsstat: events lost: the socket's "
				"buffer overflowed\n");
			continue;
		}
		if (err) {
			fprintf(stderr, "bcsstat: events: %s\n",
				bcs_strerror(err, BCS_CTX_NETLINK));
			bcs_events_close(ev);
			return EXIT_FAILURE;
		}
		if (e.lost)
			fprintf(stderr, "bcsstat: %llu events lost before "
				"number %llu\n", (unsigned long long)e.lost,
				(unsigned long long)e.seq);
		if (json)
			event_json(&e);
		else
			event_line(&e);
		fflush(stdout);
		printed++;
	}
	bcs_events_close(ev);
	return EXIT_SUCCESS;
}

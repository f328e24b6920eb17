// SPDX-License-Identifier: GPL-2.0
/*
 * Write files that stand in for /dev/bcsstat in the tool tests:
 *   mkring ring PATH NR HEAD   header + ring of NR records, HEAD written
 *   mkring stream PATH COUNT   COUNT bare records, as read(2) returns them
 * Record s has slice 100 + s, row s % 4, flags cycling through the
 * BCS_SLICE_* bits, interval 10 ms and switch 12.5 us, its deadline at
 * 1 s + s * 10 ms and its switch starting 2 us before that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs.h>

#define RECORDS_OFFSET 128

static void fill(struct bcs_slice_record *r, unsigned long long s)
{
	memset(r, 0, sizeof(*r));
	r->seq = s;
	r->slice = 100 + s;
	r->row = (unsigned int)(s % 4);
	r->flags = 1U << (s % 5);
	r->interval_ns = 10000000;
	r->deadline_ns = 1000000000ULL + s * 10000000ULL;
	r->switch_start_ns = r->deadline_ns - 2000;
	r->switch_end_ns = r->switch_start_ns + 12500;
	r->switch_ns = 12500;
	r->nr_suspended = 4;
	r->nr_resumed = 4;
	r->nr_running = 4;
	r->late = r->flags & BCS_SLICE_LATE ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct bcs_slice_record r;
	unsigned long long s, nr, head;
	FILE *f;

	if (argc < 4)
		return 2;
	f = fopen(argv[2], "wb");
	if (!f)
		return 1;
	if (!strcmp(argv[1], "stream")) {
		nr = strtoull(argv[3], NULL, 10);
		for (s = 0; s < nr; s++) {
			fill(&r, s);
			fwrite(&r, sizeof(r), 1, f);
		}
	} else if (!strcmp(argv[1], "ring") && argc == 5) {
		struct bcs_stat_header h;
		unsigned char *ring;

		nr = strtoull(argv[3], NULL, 10);
		head = strtoull(argv[4], NULL, 10);
		if (!nr)
			return 2;
		memset(&h, 0, sizeof(h));
		h.magic = BCS_STAT_MAGIC;
		h.version = BCS_STAT_VERSION;
		h.header_size = sizeof(h);
		h.record_size = sizeof(r);
		h.nr_records = (unsigned int)nr;
		h.records_offset = RECORDS_OFFSET;
		h.head = head;
		ring = calloc(nr, sizeof(r));
		if (!ring)
			return 1;
		for (s = head > nr ? head - nr : 0; s < head; s++) {
			fill(&r, s);
			memcpy(ring + (s % nr) * sizeof(r), &r, sizeof(r));
		}
		fwrite(&h, sizeof(h), 1, f);
		for (s = sizeof(h); s < RECORDS_OFFSET; s++)
			fputc(0, f);
		fwrite(ring, sizeof(r), nr, f);
		free(ring);
	} else {
		return 2;
	}
	return fclose(f) ? 1 : 0;
}

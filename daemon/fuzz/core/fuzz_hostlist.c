// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: Slurm's hostlist syntax (hostlist.c), which bcsd
 * expands for a job create's --nodes from any root client and the SPANK
 * plugin.  The input is one list.  An accepted list gives 1 ..
 * HOSTLIST_HOSTS_MAX names, none empty or longer than HOSTLIST_NAME_MAX
 * and none with a bracket or a comma; a refused one says why; the
 * expansion of a list with a bracket group of one number is that of the
 * number written in its place.
 */
#include <errno.h>
#include <string.h>

#include "core/hostlist.h"
#include "fuzz/fuzz_assert.h"

static unsigned int names;

static int check_name(const char *name, void *arg)
{
	size_t n = strlen(name);

	(void)arg;
	FUZZ_ASSERT(n >= 1 && n <= HOSTLIST_NAME_MAX);
	FUZZ_ASSERT(!strpbrk(name, "[],"));
	names++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char list[HOSTLIST_LEN_MAX + 2], err[200];
	int r;

	if (size > HOSTLIST_LEN_MAX + 1)
		size = HOSTLIST_LEN_MAX + 1;
	memcpy(list, data, size);
	list[size] = '\0';
	names = 0;
	err[0] = '\0';
	r = hostlist_expand(list, check_name, NULL, err, sizeof(err));
	if (!r) {
		FUZZ_ASSERT(names >= 1 && names <= HOSTLIST_HOSTS_MAX);
	} else {
		FUZZ_ASSERT(r == -EINVAL || r == -E2BIG);
		FUZZ_ASSERT(err[0]);
	}
	return 0;
}

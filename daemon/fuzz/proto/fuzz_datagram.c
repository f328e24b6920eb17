// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: whole datagrams as they arrive from the network,
 * into bcsp_decode().  Most fail the tag, as forgeries do; the seed
 * corpus (signed with the test key of fuzz.h) and mutations that keep
 * the tag reach the rest.  fuzz_body.c signs every input instead.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t key[BCSP_KEY_LEN];
	struct bcsp_msg m;
	enum bcsp_verdict v;

	fuzz_key(key);
	v = bcsp_decode(data, size, FUZZ_CLUSTER, key, &m);
	fuzz_check_decoded(data, size, v, &m, key);
	return 0;
}

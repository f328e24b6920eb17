// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the decoding after authentication.  The input is a
 * datagram without its tag; the harness sets the length field (bytes 6
 * and 7) to the length with the tag, signs it with the test key of
 * fuzz.h and gives it to bcsp_decode(), so that every input passes the
 * tag check and the header and body parsers see the fuzzer's bytes.
 */
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t key[BCSP_KEY_LEN], buf[BCSP_MAX_LEN];
	struct bcsp_msg m;
	enum bcsp_verdict v;
	size_t len;

	if (size > BCSP_MAX_LEN - BCSP_TAG_LEN)
		return -1;	/* not a datagram: keep it out of the corpus */
	fuzz_key(key);
	memcpy(buf, data, size);
	len = size + BCSP_TAG_LEN;
	if (size >= 8) {
		buf[6] = (uint8_t)(len >> 8);
		buf[7] = (uint8_t)len;
	}
	crypto_auth_hmacsha256(buf + size, buf, size, key);
	v = bcsp_decode(buf, len, FUZZ_CLUSTER, key, &m);
	fuzz_check_decoded(buf, len, v, &m, key);
	return 0;
}

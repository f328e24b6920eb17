// SPDX-License-Identifier: GPL-2.0
/*
 * The Slurm SPANK plugin's parts that need no Slurm (bcs_slurm.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs.h>

#include "bcs_slurm.h"

void bcs_slurm_conf_init(struct bcs_slurm_conf *c)
{
	c->default_on = false;
	c->require = false;
	c->slice_ms = 0;
	c->wait_s = BCS_SLURM_WAIT_S;
}

/* A decimal number in 0 .. @max, nothing else. */
static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "on", "yes", "1", "true" };
	static const char *const no[] = { "off", "no", "0", "false" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int bcs_slurm_conf_parse(struct bcs_slurm_conf *c, int argc, char **argv,
			 char *err, size_t errlen)
{
	const char *a, *v;
	size_t klen;
	int i, ret;

	for (i = 0; i < argc; i++) {
		a = argv[i];
		v = strchr(a, '=');
		if (!v) {
			snprintf(err, errlen, "'%s': an argument is NAME=VALUE",
				 a);
			return -EINVAL;
		}
		klen = (size_t)(v - a);
		v++;
		if (klen == 7 && !strncmp(a, "default", klen))
			ret = parse_bool(v, &c->default_on);
		else if (klen == 7 && !strncmp(a, "require", klen))
			ret = parse_bool(v, &c->require);
		else if (klen == 5 && !strncmp(a, "slice", klen))
			ret = parse_u32(v, BCS_SLURM_SLICE_MAX_MS, &c->slice_ms);
		else if (klen == 4 && !strncmp(a, "wait", klen))
			ret = parse_u32(v, BCS_SLURM_WAIT_MAX_S, &c->wait_s);
		else {
			snprintf(err, errlen, "'%s': unknown argument (default, require, slice, wait)",
				 a);
			return -EINVAL;
		}
		if (ret) {
			snprintf(err, errlen, "'%s': bad value (default=on|off, require=yes|no, slice=0..%u, wait=0..%u)",
				 a, BCS_SLURM_SLICE_MAX_MS,
				 BCS_SLURM_WAIT_MAX_S);
			return ret;
		}
	}
	return 0;
}

int bcs_slurm_opt_parse(const char *arg, enum bcs_slurm_want *want,
			uint32_t *job)
{
	uint32_t id;

	/*
	 * "(null)": how Slurm 22.05 hands an option given without its
	 * optional argument to sbatch or salloc on to the job's sruns (in
	 * SLURM_SPANK__SLURM_SPANK_OPTION_bcs_bcs, printed with "%s").
	 */
	if (!arg || !*arg || !strcmp(arg, "(null)")) {
		*want = BCS_WANT_STEP;
		return 0;
	}
	if (!strcmp(arg, "off") || !strcmp(arg, "no")) {
		*want = BCS_WANT_OFF;
		return 0;
	}
	if (parse_u32(arg, BCS_JOB_ID_MAX, &id) || !id)
		return -EINVAL;
	*want = BCS_WANT_JOB;
	*job = id;
	return 0;
}

bool bcs_slurm_enabled(const struct bcs_slurm_conf *c,
		       enum bcs_slurm_want want)
{
	switch (want) {
	case BCS_WANT_STEP:
	case BCS_WANT_JOB:
		return true;
	case BCS_WANT_OFF:
		return false;
	default:
		return c->default_on;
	}
}

int bcs_slurm_job_id(uint32_t job, uint32_t step, uint32_t *id)
{
	job &= BCS_SLURM_JOB_MASK;
	if (!job || step >= BCS_SLURM_SPECIAL_STEP)
		return -EINVAL;
	*id = BCS_SLURM_ID_BASE | job;
	return 0;
}

int bcs_slurm_label(char *buf, size_t len, uint32_t job)
{
	int n = snprintf(buf, len, "slurm %u", job);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int bcs_slurm_label_path(char *buf, size_t len, const char *dir, uint32_t id)
{
	int n = snprintf(buf, len, "%s/%u", dir, id);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

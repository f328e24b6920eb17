// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the Slurm plugin's parts that need no Slurm: its
 * plugstack.conf arguments, --bcs's argument, the bcs job id of a step and
 * its label.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/bcs.h>

#include "bcs_slurm.h"

static int passed, failed;

static void check(int ok, const char *what, const char *line)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	fprintf(stderr, "FAIL: %s: '%s'\n", what, line);
}

/* Split @line at blanks and parse it as plugstack.conf's arguments. */
static int conf(const char *line, struct bcs_slurm_conf *c, char *err,
		size_t errlen)
{
	char buf[256], *argv[16], *p;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (p = strtok(buf, " "); p && argc < 16; p = strtok(NULL, " "))
		argv[argc++] = p;
	bcs_slurm_conf_init(c);
	err[0] = '\0';
	return bcs_slurm_conf_parse(c, argc, argv, err, errlen);
}

static void test_conf(void)
{
	static const char *const bad[] = {
		"default", "default=", "default=maybe", "require=2",
		"slice=", "slice=-1", "slice=10ms", "slice=60001",
		"slice= 5", "wait=601", "wait=x", "nodefault=on", "=on",
		"default=on bogus=1", "slices=10", "def=on",
	};
	struct bcs_slurm_conf c;
	char err[160];
	size_t i;

	check(!conf("", &c, err, sizeof(err)) && !c.default_on &&
	      !c.require && !c.slice_ms && c.wait_s == BCS_SLURM_WAIT_S,
	      "defaults", "");
	check(!conf("default=on require=yes slice=100 wait=3", &c, err,
		    sizeof(err)) && c.default_on && c.require &&
	      c.slice_ms == 100 && c.wait_s == 3, "all set",
	      "default=on require=yes slice=100 wait=3");
	check(!conf("default=off require=no slice=0 wait=0", &c, err,
		    sizeof(err)) && !c.default_on && !c.require &&
	      !c.slice_ms && !c.wait_s, "all off",
	      "default=off require=no slice=0 wait=0");
	check(!conf("default=yes require=on", &c, err, sizeof(err)) &&
	      c.default_on && c.require, "yes and on alike",
	      "default=yes require=on");
	check(!conf("require=yes require=no", &c, err, sizeof(err)) &&
	      !c.require, "the last one counts", "require=yes require=no");
	check(!conf("slice=60000", &c, err, sizeof(err)) &&
	      c.slice_ms == 60000, "largest slice", "slice=60000");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		check(conf(bad[i], &c, err, sizeof(err)) == -EINVAL,
		      "should be refused", bad[i]);
		check(err[0] != '\0', "refused with a message", bad[i]);
	}
	check(conf("bogus=1", &c, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "unknown") && strstr(err, "bogus"),
	      "an unknown name is named", "bogus=1");
}

static void test_opt(void)
{
	static const char *const bad[] = {
		"x", "-1", "0", "2147483648", "4294967296", "1x", " 1",
		"on", "+5", "99999999999999999999",
	};
	enum bcs_slurm_want w;
	struct bcs_slurm_conf c;
	uint32_t job = 0;
	size_t i;

	check(!bcs_slurm_opt_parse(NULL, &w, &job) && w == BCS_WANT_STEP,
	      "--bcs: a job for the step", "(null)");
	check(!bcs_slurm_opt_parse("", &w, &job) && w == BCS_WANT_STEP,
	      "--bcs=: a job for the step", "");
	check(!bcs_slurm_opt_parse("(null)", &w, &job) && w == BCS_WANT_STEP,
	      "sbatch --bcs, seen by srun: a job for the step", "(null)");
	check(!bcs_slurm_opt_parse("off", &w, &job) && w == BCS_WANT_OFF,
	      "--bcs=off", "off");
	check(!bcs_slurm_opt_parse("no", &w, &job) && w == BCS_WANT_OFF,
	      "--bcs=no", "no");
	check(!bcs_slurm_opt_parse("17", &w, &job) && w == BCS_WANT_JOB &&
	      job == 17, "--bcs=17", "17");
	check(!bcs_slurm_opt_parse("2147483647", &w, &job) &&
	      w == BCS_WANT_JOB && job == BCS_JOB_ID_MAX, "largest id",
	      "2147483647");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		w = BCS_WANT_DEFAULT;
		check(bcs_slurm_opt_parse(bad[i], &w, &job) == -EINVAL &&
		      w == BCS_WANT_DEFAULT, "should be refused", bad[i]);
	}

	bcs_slurm_conf_init(&c);
	check(!bcs_slurm_enabled(&c, BCS_WANT_DEFAULT), "default off",
	      "default");
	check(bcs_slurm_enabled(&c, BCS_WANT_STEP), "--bcs with default off",
	      "step");
	check(bcs_slurm_enabled(&c, BCS_WANT_JOB), "--bcs=J with default off",
	      "job");
	c.default_on = true;
	check(bcs_slurm_enabled(&c, BCS_WANT_DEFAULT), "default on",
	      "default");
	check(!bcs_slurm_enabled(&c, BCS_WANT_OFF), "--bcs=off, default on",
	      "off");
}

static void test_ids(void)
{
	uint32_t id, id2, j, s;
	char buf[64];

	check(!bcs_slurm_job_id(1, 0, &id) && id == BCS_SLURM_ID_BASE + 1,
	      "job 1 step 0", "1.0");
	check(!bcs_slurm_job_id(42, 3, &id2) && id2 == BCS_SLURM_ID_BASE + 42 &&
	      !bcs_slurm_job_id(42, 0, &id) && id == id2,
	      "every step of job 42 in one bcs job", "42.3");
	check(!bcs_slurm_job_id(0x03ffffff, 31, &id) &&
	      id == BCS_SLURM_ID_BASE + 0x03ffffff && bcs_job_id_valid(id),
	      "the largest job gives a valid id", "0x3ffffff.31");
	/* Federated ids carry the cluster above bit 26: left out. */
	check(!bcs_slurm_job_id(0x04000000 | 7, 1, &id) &&
	      id == BCS_SLURM_ID_BASE + 7, "federation bits left out",
	      "0x4000007.1");
	check(bcs_slurm_job_id(0, 0, &id) == -EINVAL, "job 0", "0.0");
	check(bcs_slurm_job_id(0x04000000, 0, &id) == -EINVAL,
	      "job 0 once the federation bits are gone", "0x4000000.0");
	check(bcs_slurm_job_id(5, 0xfffffffb, &id) == -EINVAL,
	      "the batch script's step", "5.batch");
	check(bcs_slurm_job_id(5, 0xfffffffc, &id) == -EINVAL,
	      "the extern step", "5.extern");
	check(bcs_slurm_job_id(5, 0xfffffffa, &id) == -EINVAL,
	      "the interactive step", "5.interactive");
	check(bcs_slurm_job_id(5, 0xfffffffd, &id) == -EINVAL,
	      "the pending step", "5.pending");
	check(!bcs_slurm_job_id(5, 0xffffffef, &id),
	      "an ordinary step with a large id", "5.0xffffffef");

	/* Every id is valid, distinct for distinct jobs, one for all steps. */
	for (j = 1; j < 3000; j += 7) {
		for (s = 0; s < 32; s++) {
			if (bcs_slurm_job_id(j, s, &id) || !bcs_job_id_valid(id) ||
			    id < BCS_SLURM_ID_BASE) {
				check(0, "valid id", "loop");
				return;
			}
			if (bcs_slurm_job_id(j + 1, s, &id2) || id2 == id ||
			    (s && (bcs_slurm_job_id(j, s - 1, &id2) ||
				   id2 != id))) {
				check(0, "distinct ids", "loop");
				return;
			}
		}
	}
	check(1, "ids valid and distinct", "loop");

	check(!bcs_slurm_label(buf, sizeof(buf), 42) &&
	      !strcmp(buf, "slurm 42"), "label", buf);
	check(bcs_slurm_label(buf, 7, 42) == -ENAMETOOLONG,
	      "label too long", "7 bytes");
	check(!bcs_slurm_label_path(buf, sizeof(buf), BCS_LABEL_DIR, 1347) &&
	      !strcmp(buf, "/run/bcs/labels/1347"), "label path", buf);
	check(bcs_slurm_label_path(buf, 10, BCS_LABEL_DIR, 1) == -ENAMETOOLONG,
	      "label path too long", "10 bytes");
}

int main(void)
{
	test_conf();
	test_opt();
	test_ids();
	printf("test_bcs_slurm: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

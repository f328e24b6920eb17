/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Slurm SPANK plugin's parts that need no Slurm: its plugstack.conf
 * arguments, the --bcs option, the bcs job id of a Slurm job step and the
 * label that `bcsctl job list` shows beside it.  Unit-tested on the host
 * (tests/test_bcs_slurm.c).
 */
#ifndef BCS_SLURM_H
#define BCS_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * BCS_LABEL_DIR: the labels of jobs, one file per job on each node that
 * runs a task of it, BCS_LABEL_DIR/<bcs job id>, one line ("slurm 42").
 * Written by the plugin, read by `bcsctl job list`, removed when the step
 * ends on the node.
 */
#include <linux/bcs_ctl.h>

/* Slurm's job ids have 26 bits (MAX_JOB_ID). */
#define BCS_SLURM_JOB_BITS	26
#define BCS_SLURM_JOB_MASK	((1U << BCS_SLURM_JOB_BITS) - 1)
/* Slurm's own steps (batch script, extern, interactive, pending). */
#define BCS_SLURM_SPECIAL_STEP	0xfffffff0U

/* The plugin's settings: plugstack.conf's arguments. */
struct bcs_slurm_conf {
	bool default_on;	/* default=on: --bcs for every step */
	bool require;		/* require=yes: fail the step without bcs */
	uint32_t slice_ms;	/* slice=MS: the slice the site expects, 0: any */
	uint32_t wait_s;	/* wait=S: how long the end of a step waits for
				 * the other nodes' tasks to leave the job
				 */
};

#define BCS_SLURM_WAIT_S	10
#define BCS_SLURM_WAIT_MAX_S	600
#define BCS_SLURM_SLICE_MAX_MS	60000

/* What --bcs asked for. */
enum bcs_slurm_want {
	BCS_WANT_DEFAULT,	/* no --bcs: plugstack.conf's default */
	BCS_WANT_OFF,		/* --bcs=off */
	BCS_WANT_STEP,		/* --bcs: a job for the step */
	BCS_WANT_JOB,		/* --bcs=JOB: the existing job JOB */
};

void bcs_slurm_conf_init(struct bcs_slurm_conf *c);
/*
 * Apply plugstack.conf's arguments (default=on|off, require=yes|no,
 * slice=MS, wait=S); -EINVAL with a message in @err for a bad one.
 */
int bcs_slurm_conf_parse(struct bcs_slurm_conf *c, int argc, char **argv,
			 char *err, size_t errlen);
/*
 * --bcs's argument: NULL, "" or "(null)" (sbatch's --bcs, as srun gets it
 * from the environment) a job for the step, "off"/"no" none, a
 * number an existing bcs job (1 .. BCS_JOB_ID_MAX, into *@job).
 */
int bcs_slurm_opt_parse(const char *arg, enum bcs_slurm_want *want,
			uint32_t *job);
/* Does the step get gang scheduling, given the option and the default? */
bool bcs_slurm_enabled(const struct bcs_slurm_conf *c,
		       enum bcs_slurm_want want);
/*
 * The bcs job of Slurm job @job, for its step @step: one job for every
 * step of a Slurm job, so that concurrent steps run as one gang and never
 * take turns against each other.  BCS_SLURM_ID_BASE plus the job id's 26
 * bits: above the ids the master hands out in turn from 1, and the same on
 * every node, so that every node of every step asks for the same job and
 * only the first request creates it.  -EINVAL for Slurm's own steps
 * (batch script, extern, interactive) and job 0.
 */
#define BCS_SLURM_ID_BASE	(1U << 30)
int bcs_slurm_job_id(uint32_t job, uint32_t step, uint32_t *id);
/* The label of the Slurm job's bcs job, "slurm JOB". */
int bcs_slurm_label(char *buf, size_t len, uint32_t job);
/* The path of job @id's label file under @dir. */
int bcs_slurm_label_path(char *buf, size_t len, const char *dir, uint32_t id);

#endif /* BCS_SLURM_H */

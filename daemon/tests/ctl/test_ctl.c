// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the control-socket request parser: every command,
 * fields in and out of their ranges, numbers of the wrong JSON type,
 * and messages that are not exactly one JSON object.
 */
#include <errno.h>
#include <string.h>

#include <linux/bcs.h>

#include "ctl/ctl_req.h"
#include "tests/unit.h"

static char err[128];

static int parse(const char *s, struct ctl_req *r)
{
	return ctl_parse(s, strlen(s), r, err, sizeof(err));
}

/* Refused with -EINVAL and a message containing @what. */
static int refused(const char *s, const char *what)
{
	struct ctl_req r;

	return parse(s, &r) == -EINVAL && strstr(err, what) != NULL &&
	       r.cmd == 0;
}

int main(void)
{
	struct ctl_req r;
	static char big[CTL_MSG_MAX + 2];

	CHECK(parse("{\"cmd\":\"status\"}", &r) == 0 && r.cmd == CTL_STATUS &&
	      r.row == BCS_ROW_NONE && !err[0]);
	CHECK(parse("{\"cmd\":\"job-list\"}\n", &r) == 0 &&
	      r.cmd == CTL_JOB_LIST);
	CHECK(parse("{\"cmd\":\"job-create\",\"job\":0,\"row\":-1}", &r) == 0 &&
	      r.cmd == CTL_JOB_CREATE && r.job == 0 && r.row == BCS_ROW_NONE);
	/* No row is null, as in the answers; -1 is taken too. */
	CHECK(parse("{\"cmd\":\"job-create\",\"job\":0,\"row\":null}", &r) == 0 &&
	      r.cmd == CTL_JOB_CREATE && r.row == BCS_ROW_NONE);
	/* The nodes a job will run on, as a hostlist bcsd expands. */
	CHECK(parse("{\"cmd\":\"job-create\",\"nodes\":\"n[1-4]\"}", &r) == 0 &&
	      !strcmp(r.nodes, "n[1-4]"));
	CHECK(parse("{\"cmd\":\"job-create\"}", &r) == 0 && !r.nodes[0]);
	CHECK(parse("{\"cmd\":\"job-create\",\"nodes\":\"\"}", &r) == -EINVAL &&
	      strstr(err, "hostlist"));
	CHECK(parse("{\"cmd\":\"job-create\",\"nodes\":3}", &r) == -EINVAL);
	CHECK(parse("{\"cmd\":\"job-destroy\",\"job\":2,\"nodes\":\"a\"}",
		    &r) == -EINVAL && strstr(err, "only job-create"));
	/* The uid that will own it: root unless given, never (uid_t)-1. */
	CHECK(parse("{\"cmd\":\"job-create\",\"owner\":65534}", &r) == 0 &&
	      r.owner == 65534);
	CHECK(parse("{\"cmd\":\"job-create\",\"owner\":4294967294}",
		    &r) == 0 && r.owner == 4294967294u);
	CHECK(parse("{\"cmd\":\"job-create\",\"owner\":null}", &r) == 0 &&
	      r.owner == 0);
	CHECK(parse("{\"cmd\":\"job-create\",\"owner\":4294967295}",
		    &r) == -EINVAL && strstr(err, "\"owner\""));
	CHECK(parse("{\"cmd\":\"job-create\",\"owner\":-1}", &r) == -EINVAL);
	CHECK(parse("{\"cmd\":\"job-create\",\"owner\":\"nobody\"}",
		    &r) == -EINVAL);
	CHECK(parse("{\"cmd\":\"job-destroy\",\"job\":2,\"owner\":5}",
		    &r) == -EINVAL && strstr(err, "only job-create"));
	CHECK(parse("{\"cmd\":\"job-row\",\"job\":2,\"row\":null}", &r) == 0 &&
	      r.job == 2 && r.row == BCS_ROW_NONE);
	CHECK(parse("{\"cmd\":\"job-row\",\"job\":4294967295,\"row\":3}",
		    &r) == 0 && r.cmd == CTL_JOB_ROW && r.job == 4294967295u &&
	      r.row == 3);
	CHECK(parse("{\"cmd\":\"job-destroy\",\"job\":12}", &r) == 0 &&
	      r.cmd == CTL_JOB_DESTROY && r.job == 12);
	CHECK(parse("{\"cmd\":\"job-wait\",\"job\":12}", &r) == 0 &&
	      r.cmd == CTL_JOB_WAIT && r.timeout_ms == CTL_WAIT_DEFAULT_MS);
	CHECK(parse("{\"cmd\":\"job-wait\",\"job\":1,\"timeout_ms\":0}",
		    &r) == 0 && r.timeout_ms == 0);

	/* Statistics and windows. */
	CHECK(parse("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		    "\"metrics\":15,\"sub_bits\":7}", &r) == 0 &&
	      r.cmd == CTL_STATS && r.job == 3 && r.dist_op == BCS_DIST_ENABLE &&
	      r.metrics == 15 && r.sub_bits == 7);
	CHECK(parse("{\"cmd\":\"stats\",\"job\":3,\"op\":\"disable\","
		    "\"metrics\":2}", &r) == 0 &&
	      r.dist_op == BCS_DIST_DISABLE && r.metrics == 2 && !r.sub_bits);
	CHECK(parse("{\"cmd\":\"stats\",\"job\":3,\"op\":\"release\"}",
		    &r) == 0 && r.dist_op == BCS_DIST_RELEASE && !r.metrics);
	CHECK(refused("{\"cmd\":\"stats\",\"op\":\"enable\",\"metrics\":1}",
		      "stats needs a job"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"on\"}",
		      "\"op\" must be"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":1}",
		      "\"op\" must be"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\"}",
		      "needs \"metrics\""));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":16}", "\"metrics\" must be"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"sub_bits\":8}", "\"sub_bits\" must be"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"disable\","
		      "\"metrics\":1,\"sub_bits\":2}", "\"sub_bits\" must be"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"release\","
		      "\"metrics\":1}", "\"metrics\" must be"));
	/* Subsets of the job's tasks: ranks, node and pid; enable only. */
	CHECK(parse("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		    "\"metrics\":1,\"subsets\":[{\"ranks\":[0,3]},"
		    "{\"node\":\"n2\",\"pid\":77},{\"ranks\":[16777215,"
		    "16777215]}]}", &r) == 0 && r.nr_subsets == 3 &&
	      r.subsets[0].a == 0 && r.subsets[0].b == 3 &&
	      !r.subsets[0].node[0] && !strcmp(r.subsets[1].node, "n2") &&
	      r.subsets[1].b == 77 && r.subsets[2].a == 16777215);
	CHECK(parse("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		    "\"metrics\":1}", &r) == 0 && !r.nr_subsets);
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"disable\","
		      "\"metrics\":1,\"subsets\":[{\"ranks\":[0,3]}]}",
		      "only stats enable"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[]}", "array of 1 to 32"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":{}}", "array of 1 to 32"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"ranks\":[3,0]}]}",
		      "0 <= A <= B"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"ranks\":[0,16777216]}]}",
		      "0 <= A <= B"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"ranks\":[-1,2]}]}",
		      "0 <= A <= B"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"ranks\":[1]}]}",
		      "each of \"subsets\""));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"ranks\":[1,\"2\"]}]}",
		      "each of \"subsets\""));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"ranks\":[1,2],\"x\":1}]}",
		      "each of \"subsets\""));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"node\":\"\",\"pid\":1}]}",
		      "\"node\" must be"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"node\":\"a\",\"pid\":0}]}",
		      "\"pid\" must be"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"node\":\"a\",\"pid\":4194305}]}",
		      "\"pid\" must be"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"metrics\":1,\"subsets\":[{\"node\":7,\"pid\":1}]}",
		      "each of \"subsets\""));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":3,\"op\":\"enable\","
		      "\"mpi\":\"on\",\"subsets\":[{\"ranks\":[0,3]}]}",
		      "takes no \"subsets\""));
	{
		char many[2048];
		size_t n;
		int i;

		n = (size_t)snprintf(many, sizeof(many),
				     "{\"cmd\":\"stats\",\"job\":3,"
				     "\"op\":\"enable\",\"metrics\":1,"
				     "\"subsets\":[");
		for (i = 0; i < 33; i++)
			n += (size_t)snprintf(many + n, sizeof(many) - n,
					      "%s{\"ranks\":[%d,%d]}",
					      i ? "," : "", i, i);
		snprintf(many + n, sizeof(many) - n, "]}");
		CHECK(refused(many, "array of 1 to 32"));
		/* 32 of them are taken. */
		snprintf(strstr(many, ",{\"ranks\":[32,32]}"), 8, "]}");
		CHECK(parse(many, &r) == 0 && r.nr_subsets == 32);
	}
	CHECK(parse("{\"cmd\":\"window\",\"from\":100,\"to\":100}", &r) == 0 &&
	      r.cmd == CTL_WINDOW && r.from == 100 && r.to == 100);
	CHECK(refused("{\"cmd\":\"window\",\"from\":101,\"to\":100}",
		      "window needs"));
	CHECK(refused("{\"cmd\":\"window\",\"from\":1}", "window needs"));
	CHECK(refused("{\"cmd\":\"window\",\"from\":-1,\"to\":5}",
		      "\"from\" must be"));
	CHECK(parse("{\"cmd\":\"window-clear\"}", &r) == 0 &&
	      r.cmd == CTL_WINDOW_CLEAR);
	CHECK(parse("{\"cmd\":\"slices\"}", &r) == 0 &&
	      r.cmd == CTL_SLICES && r.last == CTL_SLICES_DEFAULT);
	CHECK(parse("{\"cmd\":\"slices\",\"last\":4294967295}", &r) == 0 &&
	      r.cmd == CTL_SLICES && r.last == 4294967295u);
	CHECK(refused("{\"cmd\":\"slices\",\"last\":0}", "\"last\" must be"));
	CHECK(parse("{\"cmd\":\"job-signal\",\"job\":4,\"signal\":15}",
		    &r) == 0 && r.cmd == CTL_JOB_SIGNAL && r.job == 4 &&
	      r.signal == 15);
	CHECK(refused("{\"cmd\":\"job-signal\",\"signal\":15}",
		      "needs a job"));
	CHECK(refused("{\"cmd\":\"job-signal\",\"job\":4}",
		      "needs \"signal\""));
	CHECK(refused("{\"cmd\":\"job-signal\",\"job\":4,\"signal\":65}",
		      "\"signal\" must be"));
	CHECK(refused("{\"cmd\":\"job-signal\",\"job\":4,\"signal\":0}",
		      "\"signal\" must be"));
	CHECK(parse("{\"cmd\":\"job-attach\",\"job\":4,\"node\":3,\"pid\":77}",
		    &r) == 0 && r.cmd == CTL_JOB_ATTACH && r.job == 4 &&
	      r.node == 3 && r.pid == 77);
	CHECK(refused("{\"cmd\":\"job-attach\",\"node\":3,\"pid\":77}",
		      "needs a job"));
	CHECK(refused("{\"cmd\":\"job-attach\",\"job\":4,\"pid\":77}",
		      "needs \"node\" and \"pid\""));
	CHECK(refused("{\"cmd\":\"job-attach\",\"job\":4,\"node\":3}",
		      "needs \"node\" and \"pid\""));
	CHECK(refused("{\"cmd\":\"job-attach\",\"job\":4,\"node\":0,\"pid\":7}",
		      "\"node\" must be"));
	CHECK(refused("{\"cmd\":\"job-attach\",\"job\":4,\"node\":3,\"pid\":4194305}",
		      "\"pid\" must be"));
	CHECK(refused("{\"cmd\":\"job-attach\",\"job\":4,\"node\":4294967296,\"pid\":7}",
		      "\"node\" must be"));
	/* A job's MPI statistics files, gathered from its nodes. */
	CHECK(parse("{\"cmd\":\"mpi-gather\",\"job\":4}", &r) == 0 &&
	      r.cmd == CTL_MPI_GATHER && r.job == 4 && !r.files);
	/* Each rank's file (flat), not the answer merged in the tree. */
	CHECK(parse("{\"cmd\":\"mpi-gather\",\"job\":4,\"files\":1}",
		    &r) == 0 && r.files == 1);
	CHECK(refused("{\"cmd\":\"mpi-gather\",\"job\":4,\"files\":2}",
		      "\"files\" must be"));
	CHECK(refused("{\"cmd\":\"mpi-gather\"}", "needs a job"));
	CHECK(refused("{\"cmd\":\"mpi-gather\",\"job\":0}", "needs a job"));
	CHECK(refused("{\"cmd\":\"mpi-gather\",\"job\":-1}",
		      "\"job\" must be"));
	/* The MPI statistics of a job's processes. */
	CHECK(parse("{\"cmd\":\"stats\",\"job\":4,\"op\":\"enable\","
		    "\"mpi\":\"Allreduce\",\"sub_bits\":2}", &r) == 0 &&
	      r.cmd == CTL_STATS && r.mpi && r.mpi_sub_bits == 2 &&
	      !strcmp(r.mpi_sel, "Allreduce"));
	CHECK(parse("{\"cmd\":\"stats\",\"job\":4,\"op\":\"enable\","
		    "\"mpi\":\"all\"}", &r) == 0 && r.mpi_sub_bits == -1);
	CHECK(parse("{\"cmd\":\"stats\",\"job\":4,\"op\":\"disable\","
		    "\"mpi\":\"\"}", &r) == 0 && r.mpi &&
	      r.dist_op == BCS_DIST_DISABLE && !r.mpi_sel[0]);
	CHECK(refused("{\"cmd\":\"stats\",\"job\":4,\"op\":\"enable\","
		      "\"mpi\":\"\"}", "needs an \"mpi\""));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":4,\"op\":\"release\","
		      "\"mpi\":\"on\"}", "takes no \"mpi\""));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":4,\"op\":\"enable\","
		      "\"mpi\":3}", "must be a string"));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":4,\"op\":\"enable\","
		      "\"mpi\":\"on\",\"metrics\":1}", "\"metrics\""));
	CHECK(refused("{\"cmd\":\"stats\",\"job\":4,\"op\":\"disable\","
		      "\"mpi\":\"\",\"sub_bits\":2}", "\"sub_bits\""));
	CHECK(refused("{\"cmd\":\"slices\",\"last\":4294967296}",
		      "\"last\" must be"));

	/* Was job 1: a cast to 32 bits. */
	CHECK(refused("{\"cmd\":\"job-destroy\",\"job\":4294967297}",
		      "\"job\" must be an integer in 0..4294967295"));
	CHECK(refused("{\"cmd\":\"job-destroy\",\"job\":-1}", "\"job\""));
	CHECK(refused("{\"cmd\":\"job-destroy\",\"job\":99999999999999999999}",
		      "\"job\""));
	/* Were 5, 1 and 1: json_object_get_int64() converts. */
	CHECK(refused("{\"cmd\":\"job-destroy\",\"job\":\"5\"}", "\"job\""));
	CHECK(refused("{\"cmd\":\"job-destroy\",\"job\":1.9}", "\"job\""));
	CHECK(refused("{\"cmd\":\"job-destroy\",\"job\":true}", "\"job\""));
	/* Was row 3: 2^32 + 3 cast to 32 bits; -2 was "no row". */
	CHECK(refused("{\"cmd\":\"job-row\",\"job\":1,\"row\":4294967299}",
		      "\"row\" must be an integer in -1..4294967294"));
	CHECK(refused("{\"cmd\":\"job-row\",\"job\":1,\"row\":4294967295}",
		      "\"row\""));
	CHECK(refused("{\"cmd\":\"job-row\",\"job\":1,\"row\":-2}", "\"row\""));
	/* Was a wait that ends at once (now - 1) or is never answered. */
	CHECK(refused("{\"cmd\":\"job-wait\",\"job\":1,\"timeout_ms\":-1}",
		      "\"timeout_ms\""));
	CHECK(refused("{\"cmd\":\"job-wait\"}", "job-wait needs a job"));
	CHECK(refused("{\"cmd\":\"job-wait\",\"job\":0}", "needs a job"));

	/* Not one JSON object with a string "cmd". */
	CHECK(refused("", "malformed"));
	CHECK(refused("{\"cmd\":\"status\"", "malformed"));
	CHECK(refused("{\"cmd\":\"status\"} {}", "malformed"));
	CHECK(refused("{\"cmd\":\"status\"}x", "malformed"));
	CHECK(refused("[\"status\"]", "malformed"));
	CHECK(refused("\"status\"", "malformed"));
	CHECK(refused("{\"cmd\":7}", "malformed"));
	CHECK(refused("{\"command\":\"status\"}", "malformed"));
	CHECK(refused("{\"cmd\":\"reboot\"}", "unknown command"));
	CHECK(ctl_parse("{\"cmd\":\"status\"}\0x", 18, &r, err,
			sizeof(err)) == -EINVAL);
	memset(big, ' ', sizeof(big));
	memcpy(big, "{\"cmd\":\"status\"}", 16);
	CHECK(ctl_parse(big, CTL_MSG_MAX, &r, err, sizeof(err)) == 0);
	CHECK(ctl_parse(big, CTL_MSG_MAX + 1, &r, err, sizeof(err)) ==
	      -EINVAL);
	return unit_done("test_ctl");
}

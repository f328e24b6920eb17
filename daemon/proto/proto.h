/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bcsd wire protocol, version 4 (Documentation/wire-protocol.rst);
 * versions BCSP_VERSION_MIN .. BCSP_VERSION are read and written, so that a
 * cluster upgrades one daemon at a time (wire-protocol.rst, "Versions").
 *
 * Every datagram is a fixed header, a body whose layout depends on the
 * type, and an HMAC-SHA-256 tag (libsodium crypto_auth_hmacsha256) over
 * header and body with the cluster key.  All integers are big-endian.
 *
 *   off size field
 *     0    4 magic        BCSP_MAGIC
 *     4    1 version      BCSP_VERSION_MIN .. BCSP_VERSION
 *     5    1 type         enum bcsp_type
 *     6    2 length       of the whole datagram, tag included
 *     8    4 cluster      cluster id; datagrams of other clusters are ignored
 *    12    4 epoch        master epoch; a new master takes a higher one
 *    16    4 sender       node id of the sender
 *    20    2 priority     sender's master priority (0 for nodes)
 *    22    2 reserved     zero
 *    24    8 seq          sender's sequence number, strictly increasing
 *    32  ... body
 *   end   32 tag
 */
#ifndef BCSD_PROTO_H
#define BCSD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bcs.h>

#define BCSP_MAGIC		0x42435350u	/* "BCSP" */
/*
 * Version 4 is version 3 whose daemons all know plans (the 56-byte strobe,
 * struct bcsp_strobe): a master sends plans only at 4 (option
 * protocol_version), never to a cluster that may hold daemons of version 3,
 * some of which refuse them.  Bodies are the same in both.
 */
#define BCSP_VERSION		4
#define BCSP_VERSION_MIN	3
#define BCSP_HDR_LEN		32
#define BCSP_TAG_LEN		32
#define BCSP_KEY_LEN		32
#define BCSP_MAX_LEN		1400	/* fits an Ethernet MTU */
/*
 * Jobs of a node's report, of a subtree's sum of tasks (BCSP_TASKS) and of
 * a statistics context: what one datagram carries.  A map holds up to
 * BCSP_MAP_JOBS_MAX, in parts (struct bcsp_map).
 */
#define BCSP_MAX_JOBS		64

/*
 * The message types.  Each has its row in the table of types, bcsp_types[]
 * (proto/codec.h): its name, the sizes of its body, its encoder and
 * decoder.
 */
enum bcsp_type {
	BCSP_STROBE	= 1,	/* master -> group: run @row at @deadline */
	BCSP_MAP	= 2,	/* master -> group: job -> row map */
	BCSP_REQUEST	= 3,	/* node -> master: job create/destroy/row */
	BCSP_REPLY	= 4,	/* master -> group: answer to a request */
	BCSP_REPORT	= 5,	/* node -> master: local tasks per job */
	BCSP_CONTEXT	= 6,	/* master -> group: statistics to record */
	BCSP_SWITCHES	= 7,	/* node -> master: how its switches went */
	BCSP_ATTACH	= 8,	/* node -> ancestor: its parent is silent */
	BCSP_PROBE	= 9,	/* parent -> child: a timed round trip */
	BCSP_PROBE_REPLY = 10,	/* child -> parent: its answer */
	BCSP_TASKS	= 11,	/* node -> parent: its subtree's tasks per job */
	BCSP_OFFSETS	= 12,	/* parent -> master: its children's offsets */
	BCSP_COMMAND	= 13,	/* master -> nodes of a job: act on its tasks */
	BCSP_RESULT	= 14,	/* node -> master: how a command went here */
	BCSP_ACK	= 15,	/* child -> parent: a command taken */
	BCSP_NODE_TASKS	= 16,	/* node -> parent: its subtree's tasks per node */
	BCSP_MPI_PART	= 17,	/* node -> node: part of an MPI statistics file */
	BCSP_STROBE_NACK = 18,	/* child -> parent: the next strobe missed */
	BCSP_TG_PART	= 19,	/* child -> parent: part of a tree gather's answer */
	BCSP_TG_NACK	= 20,	/* parent -> child: lost parts, again */
	__BCSP_TYPE_MAX,
};

/* Is @type one of enum bcsp_type? */
static inline bool bcsp_type_valid(unsigned int type)
{
	return type >= BCSP_STROBE && type < __BCSP_TYPE_MAX;
}

struct bcsp_hdr {
	/*
	 * Decoded: the datagram's version.  Encoded at this version, 0:
	 * BCSP_VERSION.
	 */
	uint8_t version;
	uint8_t type;
	uint32_t cluster;
	uint32_t epoch;
	uint32_t sender;
	uint16_t priority;
	uint64_t seq;
};

/*
 * BCSP_STROBE body: 40 bytes, or 56 with a plan.  A strobe names slice
 * @slice; with a plan (@plan_slices not 0: the last 16 bytes, plan_slices,
 * plan_next and plan_rows) it names the @plan_slices slices from @slice on,
 * as bcs.ko's BCS_STROBE_PLAN does (<linux/bcs.h>, "Plans"): slice i due at
 * @deadline_ns + i * @slice_ns, running bcsp_plan_row(@plan_rows, @row, i).
 * The master sends the next plan for slice @slice + @plan_next (1 ..
 * @plan_slices): plans overlap, so a node that loses one still holds the
 * rest of the one before, and a node knows when to miss the next.
 */
struct bcsp_strobe {
	uint64_t slice;
	uint64_t deadline_ns;	/* CLOCK_REALTIME */
	uint64_t slice_ns;
	uint32_t row;
	uint32_t map_version;	/* nodes ask nothing: the map follows */
	uint32_t nr_rows;
	uint32_t flags;		/* BCSP_STROBE_F_* */
	uint32_t plan_slices;	/* 0: no plan; else 1 .. BCS_PLAN_SLICES_MAX */
	uint32_t plan_next;	/* with a plan: slices to the next plan's */
	uint64_t plan_rows;	/* with a plan: the home rows it steps through */
};

/* The body's length without a plan, and the plan's part of it. */
#define BCSP_STROBE_LEN		40
#define BCSP_STROBE_PLAN_LEN	16

/*
 * Down a tree of daemons, a node that misses the next strobe asks the
 * node that passed it this one (BCSP_STROBE_NACK), which sends it its
 * last strobe again: the master's strobe_copies counts the tries, and no
 * copies go down (Documentation/tree.rst, "Lost strobes").
 */
#define BCSP_STROBE_F_REPAIR	0x1u
#define BCSP_STROBE_F_ALL	BCSP_STROBE_F_REPAIR

/*
 * A job's birth is a random number, not 0, that the master which made the
 * job chose, and that maps and reports carry for the job's life: two
 * masters of a partitioned cluster may each make a job with the same id,
 * and the births tell them apart when the cut heals.  0: not known (a
 * master that learnt the job from reports that did not know it either).
 */
struct bcsp_job_row {
	uint32_t job;
	uint32_t row;		/* home row, or BCS_ROW_NONE */
	/*
	 * The rows it runs in (bit r: row r): @row's bit and its alternate
	 * rows, where none of its nodes runs another job
	 * (Documentation/matrix.rst); 0 with no row.
	 */
	uint64_t rows;
	uint32_t nodes;		/* nodes that reported tasks of the job */
	uint32_t tasks;		/* tasks reported, summed over nodes */
	uint32_t birth;
	uint32_t owner;		/* its owner's uid, or BCSP_OWNER_NONE */
};

/*
 * A job's owner (Documentation/admin-guide.rst, "Job owners"): the uid its
 * create named (bcsctl job create --owner, the SPANK plugin's user; 0,
 * root, if none), which every node gives the job in bcs.ko, so that the
 * owner may attach to it and destroy it there.  BCSP_OWNER_NONE in a map:
 * not known (a master that learnt the job from reports): a node keeps the
 * owner its bcs.ko has, and makes a job it lacks as root.  No uid is
 * (uid_t)-1; a create never names it.
 */
#define BCSP_OWNER_NONE		0xffffffffu

/*
 * BCSP_MAP body: 24 bytes + 32 per job, in parts of at most
 * BCSP_MAP_PART_JOBS jobs, a datagram each: part k holds jobs
 * [k * BCSP_MAP_PART_JOBS, ...) of the whole map, every part but the last
 * full, and a map of no job one part with none; a map of
 * BCSP_MAP_JOBS_MAX jobs takes 100.  @version steps on with every change
 * of a master's map (master.c), wrapping: bcsp_map_older() compares two;
 * a node applies a map once it holds every part of one version (rx.c).
 * Its rows take effect at the switch to slice @apply_slice (bcs.ko's
 * BCS_JOB_AT_SLICE), so that every node switches the changed jobs in the
 * same slice; 0: at once.
 *
 * struct bcsp_map is one part, as the wire has it: @jobs[0 .. @nr) are
 * the whole map's jobs [@first, @first + @nr).  It stays small, for
 * struct bcsp_msg lives on the stack.  A whole map, as a daemon holds it
 * (struct bcsd's copies, the master's), is struct bcsp_whole_map;
 * bcsp_map_fill_part() cuts a part from it.
 */
#define BCSP_MAP_PART_JOBS	41	/* fills a datagram: 32 + 24 + 41 * 32 + 32 */
#define BCSP_MAP_JOBS_MAX	BCS_JOBS_MAX	/* bcs.ko's own bound */

struct bcsp_map {
	uint32_t version;
	uint32_t nr_jobs;	/* of the whole map */
	uint64_t apply_slice;
	uint32_t first;		/* the part's first job in the whole map */
	uint32_t nr;		/* the part's jobs (encoding: computed) */
	struct bcsp_job_row jobs[BCSP_MAP_PART_JOBS];
};

/* A whole map: every part's jobs in place (about 128 KB at the most). */
struct bcsp_whole_map {
	uint32_t version;
	uint32_t nr_jobs;
	uint64_t apply_slice;
	struct bcsp_job_row jobs[BCSP_MAP_JOBS_MAX];
};

/* The parts of a map of @nr_jobs jobs: at least 1. */
static inline uint32_t bcsp_map_parts(uint32_t nr_jobs)
{
	return nr_jobs ? (nr_jobs + BCSP_MAP_PART_JOBS - 1) / BCSP_MAP_PART_JOBS : 1;
}

/* The jobs of the part of a map of @nr_jobs that starts at @first. */
static inline uint32_t bcsp_map_part_len(uint32_t nr_jobs, uint32_t first)
{
	uint32_t left = nr_jobs > first ? nr_jobs - first : 0;

	return left < BCSP_MAP_PART_JOBS ? left : BCSP_MAP_PART_JOBS;
}

/*
 * Part @k of whole map @w into @part: its header, @first, @nr and the
 * jobs it holds.  @k below bcsp_map_parts(@w->nr_jobs).
 */
void bcsp_map_fill_part(const struct bcsp_whole_map *w, uint32_t k,
			struct bcsp_map *part);

/* Is map version @a older than @b (of one master and epoch)? */
static inline bool bcsp_map_older(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

enum bcsp_op {
	BCSP_OP_CREATE	= 1,
	BCSP_OP_DESTROY	= 2,
	BCSP_OP_SET_ROW	= 3,
	BCSP_OP_STATS	= 4,	/* a job's distributions, @stats */
	BCSP_OP_WINDOW	= 5,	/* arm the slice window, @window */
	BCSP_OP_WINDOW_CLEAR = 6,
	BCSP_OP_SIGNAL	= 7,	/* a signal to every task of a job, @signal */
	BCSP_OP_ATTACH	= 8,	/* a process of one node to a job, @attach */
	BCSP_OP_MPI	= 9,	/* a job's MPI statistics (libbcsmpi), @mpi */
	BCSP_OP_MPI_GATHER = 10, /* a job's MPI statistics files, to @node */
	BCSP_OP_TGATHER	= 11,	/* the same reduced in the tree, to @node */
};

/*
 * The selection of a job's MPI statistics (BCS_MPI_STATS syntax: "on",
 * "all", "Allreduce,Isend"), at most BCSP_MPI_SEL_LEN - 1 bytes on the
 * wire, where the control file (struct bcs_mpi_control) takes more: a
 * datagram is at most BCSP_MAX_LEN.
 */
#define BCSP_MPI_SEL_LEN	256
#define BCSP_MPI_OFF		(1U << 0)	/* record nothing */
#define BCSP_MPI_SUB_BITS	(1U << 1)	/* @sub_bits is set */
#define BCSP_MPI_FLAGS		(BCSP_MPI_OFF | BCSP_MPI_SUB_BITS)

/* The highest signal number a command may send (SIGRTMAX on Linux). */
#define BCSP_SIGNAL_MAX		64
/* The highest process id a command may name (Linux's PID_MAX_LIMIT). */
#define BCSP_PID_MAX		4194304

/*
 * The nodes a create may name (bcsctl job create --nodes, the SPANK
 * plugin's allocation): the job is placed by them before any task of it
 * is reported (Documentation/matrix.rst).
 */
#define BCSP_CREATE_NODES_MAX	256

/*
 * A subset of a job's processes (bcsctl stats enable --rank, --pid
 * NODE:PID), DPCL's context: @kind BCSP_SUBSET_RANKS the MPI ranks @a ..
 * @b of MPI_COMM_WORLD (a <= b <= BCSP_RANK_MAX), BCSP_SUBSET_PID the
 * thread @b (1 .. BCSP_PID_MAX) on node @a (not 0).  On the wire 12 bytes:
 * u16 the job's index in the context's jobs (0 in a request), u16 @kind,
 * u32 @a, u32 @b.  A job has at most BCSP_JOB_SUBSETS_MAX of them, a
 * context BCSP_CTX_SUBSETS_MAX in all: 40 + 8 * 64 + 8 + 12 * 64 = 1328
 * bytes, which fits a datagram (BCSP_MAX_LEN - 64).
 */
#define BCSP_SUBSET_RANKS	0
#define BCSP_SUBSET_PID		1
#define BCSP_RANK_MAX		16777215	/* the highest rank named */
#define BCSP_JOB_SUBSETS_MAX	32
#define BCSP_CTX_SUBSETS_MAX	64
#define BCSP_SUBSET_LEN		12

struct bcsp_subset {
	uint32_t job;		/* in memory: its job; 0 in a request */
	uint32_t kind;		/* BCSP_SUBSET_* */
	uint32_t a, b;
};

/* Is @s a subset a decoder takes (its job aside)? */
static inline bool bcsp_subset_valid(const struct bcsp_subset *s)
{
	if (s->kind == BCSP_SUBSET_RANKS)
		return s->a <= s->b && s->b <= BCSP_RANK_MAX;
	return s->kind == BCSP_SUBSET_PID && s->a && s->b &&
	       s->b <= BCSP_PID_MAX;
}

/*
 * BCSP_REQUEST and BCSP_REPLY body: 24 bytes, and 16 more (@stats,
 * @window, @signal or @attach) for BCSP_OP_STATS, BCSP_OP_WINDOW,
 * BCSP_OP_SIGNAL and BCSP_OP_ATTACH, and for them only (a stats enable
 * of a subset, version 4 only: then @stats.nr_subsets entries of
 * BCSP_SUBSET_LEN bytes, struct bcsp_subset); for BCSP_OP_MPI
 * 16 more (@mpi's flags, sub_bits, len and a zero) and then the @len bytes
 * of @mpi.sel, padded with zeros to a multiple of 4.  The reply to an
 * attach carries the error of the node that carried it out.  For
 * BCSP_OP_MPI_GATHER 16 more (@gather): the reply says that the command
 * went (or -ENOENT) and how many nodes the master hears from, all of
 * which answer; the files come from the nodes (BCSP_MPI_PART).  For
 * BCSP_OP_CREATE, 24 bytes (owned by root, on no named nodes), or 16 more
 * (@nodes: @nr, @owner and two zeros) and @nr node ids (0 ..
 * BCSP_CREATE_NODES_MAX of them, none 0): the nodes the job will run on,
 * and its owner's uid (not BCSP_OWNER_NONE); sent so whenever either is
 * not 0.
 */
struct bcsp_request {
	uint32_t id;		/* chosen by the node, echoed in the reply */
	uint32_t op;		/* enum bcsp_op */
	uint32_t job;		/* 0 on create: the master picks */
	uint32_t row;		/* BCS_ROW_NONE on create: the master picks */
	int32_t error;		/* reply: 0 or a negative errno */
	uint32_t node;		/* the requesting node (its header's sender) */
	union {
		struct {
			uint32_t op;		/* enum bcs_dist_op */
			uint32_t metrics;	/* 1 << enum bcs_dist_metric */
			uint32_t sub_bits;	/* BCS_DIST_ENABLE */
			/* 0: the whole job; else enable only, version 4 */
			uint32_t nr_subsets;	/* 0 .. BCSP_JOB_SUBSETS_MAX */
			struct bcsp_subset subsets[BCSP_JOB_SUBSETS_MAX];
		} stats;
		struct {
			uint64_t from;		/* first slice, inclusive */
			uint64_t to;		/* last slice, inclusive */
		} window;
		struct {
			uint32_t sig;		/* 1 .. BCSP_SIGNAL_MAX */
			uint32_t reserved[3];
		} signal;
		struct {
			uint32_t target;	/* node id, not 0 */
			uint32_t pid;		/* 1 .. BCSP_PID_MAX */
			uint32_t reserved[2];
		} attach;
		struct {
			uint32_t flags;		/* BCSP_MPI_* */
			uint32_t sub_bits;	/* with BCSP_MPI_SUB_BITS */
			uint32_t len;		/* of @sel; 0: keep it */
			uint32_t reserved;
			char sel[BCSP_MPI_SEL_LEN];	/* NUL-terminated */
		} mpi;
		struct {
			uint32_t live;		/* reply: nodes heard; 0 */
			uint32_t reserved[3];
		} gather;
		struct {
			uint32_t nr;		/* 0 .. BCSP_CREATE_NODES_MAX */
			uint32_t owner;		/* the job's owner, a uid */
			uint32_t reserved[2];
			uint32_t id[BCSP_CREATE_NODES_MAX];	/* not 0 */
		} nodes;
	};
};

/*
 * BCSP_CONTEXT body: 40 bytes + 8 per job, and then, only if some job has
 * a subset (version 4 only), 8 bytes (u32 @nr_subsets, u32 zero) and the
 * @nr_subsets subsets of 12 bytes (struct bcsp_subset: at most
 * BCSP_JOB_SUBSETS_MAX of a job, BCSP_CTX_SUBSETS_MAX in all).  What every
 * node records: the distributions of each job (bcsctl stats, through the
 * master), of all its tasks or, if it has subsets, of the tasks they name
 * on the node (its pids, its MPI ranks), and the slice window.  @version
 * rises with every change; a node applies a new one at the strobe of
 * slice @apply_slice or at the first after it, so that all nodes start
 * and stop recording in the same slice.  The master sends it when it
 * changes and with every map.  At protocol_version 3 the master sends no
 * subsets and a job that has some with no metrics: a daemon of version 3
 * records nothing of it rather than all of it (wire-protocol.rst).
 */
struct bcsp_job_stats {
	uint32_t job;
	uint8_t metrics;	/* 1 << enum bcs_dist_metric, or'ed; 0: none */
	uint8_t sub_bits;	/* their resolution */
	uint16_t release;	/* rises with every release of its statistics */
};

#define BCSP_WINDOW_ARMED	1U	/* bcsp_context.flags */

struct bcsp_context {
	uint32_t version;
	uint32_t nr_jobs;
	uint64_t apply_slice;
	uint64_t window_from;	/* BCSP_WINDOW_ARMED: the window */
	uint64_t window_to;
	uint32_t flags;		/* BCSP_WINDOW_ARMED */
	uint32_t reserved;
	struct bcsp_job_stats jobs[BCSP_MAX_JOBS];
	uint32_t nr_subsets;	/* 0 .. BCSP_CTX_SUBSETS_MAX */
	struct bcsp_subset subsets[BCSP_CTX_SUBSETS_MAX];	/* by job */
};

/*
 * BCSP_REPORT body: 4 bytes + 20 per job.  @cpus: the CPUs the job's
 * tasks on the node may run on (their affinity: cpusets, Slurm's
 * task/affinity and task/cgroup), CPU c as bit c % 64, so that a node of
 * more CPUs only errs towards a conflict; 0: not known, the whole node.
 * Two jobs whose sets do not meet do not conflict there (matrix.rst).
 */
struct bcsp_report {
	uint32_t nr_jobs;
	struct {
		uint32_t job;
		uint32_t tasks;
		uint32_t birth;	/* as the node learnt it from a map, or 0 */
		uint64_t cpus;
	} jobs[BCSP_MAX_JOBS];
};

/*
 * BCSP_SWITCHES body: 8 bytes + 40 per slice.  How the switches to some
 * slices went, on one node or, summed, on several: what the master keeps
 * as its global records of each slice (the paper's GTTS).  A node sends
 * the slices its slice ring recorded since its last report, each once,
 * with @nodes 1; the fields combine by the rule beside them, so that
 * summaries of several nodes are summaries of the same kind.  Only
 * switches to a master's slice count: driven, predicted or expired, not
 * those of a fail-open, of the local timer or injected.
 */
#define BCSP_ROW_CLASSES	2	/* rows run, told apart per summary */
#define BCSP_ROW_CLASS_NONE	0xffff	/* the class of "no row ran" */

/*
 * An equivalence class (MRNet's EQ_CLASS) of the nodes that ran row
 * @row in the slice; @nodes 0: unused, and then @row 0.
 */
struct bcsp_row_class {
	uint16_t row;		/* 0 .. BCS_ROWS_MAX - 1, BCSP_ROW_CLASS_NONE */
	uint16_t nodes;
};

struct bcsp_switch_sum {
	uint64_t slice;		/* the key: only equal slices combine */
	int64_t end_max_ns;	/* max: latest switch end - deadline */
	int64_t end_min_ns;	/* min: earliest */
	uint16_t nodes;		/* sum: nodes that switched to the slice */
	uint16_t late;		/* sum: of them, late (BCS_SLICE_LATE) */
	uint16_t predicted;	/* sum: of them, on a prediction */
	/*
	 * The rows the nodes ran, as equivalence classes: "no row ran"
	 * and the lowest rows, BCSP_ROW_CLASSES of them, and the nodes of
	 * any other rows in @other; @other and the classes' nodes add up
	 * to @nodes.  Kept by row, not by count, so that sums are
	 * associative and commutative (proto.c, class_before()).
	 */
	uint16_t other;
	struct bcsp_row_class rows[BCSP_ROW_CLASSES];
};

#define BCSP_MAX_SWITCHES	33	/* slices per datagram */

struct bcsp_switches {
	uint32_t nr;
	uint32_t reserved;	/* zero */
	struct bcsp_switch_sum s[BCSP_MAX_SWITCHES];
};

/*
 * Combine summary @src of a slice into @dst of the same slice; false,
 * and @dst as it was, if the slices differ or a count would pass 65535.
 * The row classes of both are merged, "no row ran" and the lowest rows
 * kept, the nodes of the others counted in @other: associative and
 * commutative, so a tree's shape never changes the master's records.
 */
bool bcsp_switch_sum_add(struct bcsp_switch_sum *dst,
			 const struct bcsp_switch_sum *src);

/*
 * BCSP_ATTACH body: 8 bytes.  A node of a tree of daemons whose parent
 * has passed nothing on for tree_reattach_slices asks an ancestor to pass
 * the master's datagrams to it too, for 3 report periods; it asks again
 * every report period while it needs to.
 */
struct bcsp_attach {
	uint32_t parent;	/* the silent parent, for the log */
	uint32_t reserved;	/* zero */
};

/*
 * BCSP_TASKS body: 8 bytes + 16 per job.  Down a tree of daemons, the
 * reports of a subtree added up (reduce.c): how many of its nodes
 * reported, and per job on how many of them it has tasks and how many.
 */
struct bcsp_tasks {
	uint32_t nodes;		/* nodes whose reports are in the sum */
	uint32_t nr_jobs;
	struct {
		uint32_t job;
		uint32_t nodes;	/* of them, with tasks of the job */
		uint32_t tasks;	/* summed over them */
		uint32_t birth;	/* as the nodes learnt it, or 0 */
	} jobs[BCSP_MAX_JOBS];
};

/*
 * BCSP_NODE_TASKS body: 16 bytes + 12 per entry.  Down a tree of
 * daemons, the reports of a subtree concatenated (filter.c's bounded
 * list) rather than added up: per node and job with tasks there, how
 * many, for the per-node column of the job list.  The entries are
 * sorted by job, then node, each pair once; when more pairs come than
 * fit, the smallest BCSP_MAX_NODE_TASKS are kept and the others counted
 * in @more, here or below, so that what a daemon keeps does not depend
 * on the order in which its children's lists came.
 */
#define BCSP_MAX_NODE_TASKS	96	/* pairs per datagram */

struct bcsp_node_task {
	uint32_t job;		/* a valid job id */
	uint32_t node;		/* not 0 */
	uint32_t tasks;		/* at least 1 */
};

struct bcsp_node_tasks {
	uint32_t nr;
	uint32_t reserved;	/* zero */
	uint64_t more;		/* pairs left out */
	struct bcsp_node_task e[BCSP_MAX_NODE_TASKS];
};


/*
 * BCSP_PROBE body: 16 bytes; BCSP_PROBE_REPLY body: 32 bytes.  One round
 * trip of the clock offset estimate (Documentation/tree.rst, "Clock
 * offsets"): a parent sends @id and @t1, its CLOCK_REALTIME at sending;
 * the child echoes both with @t2, its own clock when the probe came, and
 * @t3, when it replies (@t3 >= @t2, else bad body).  PROBE has no @t2,
 * @t3 on the wire.  A standby whose master is silent probes every node
 * for its quorum (@id with BCSP_PROBE_QUORUM set); every reply says in
 * @flags whether the replier hears a master (BCSP_PROBE_HEARS; any other
 * bit, or a flag in a PROBE, is a bad body).
 */
#define BCSP_PROBE_QUORUM	0x80000000u	/* in @id: a quorum probe */
#define BCSP_PROBE_HEARS	0x1u		/* in @flags of a reply */

struct bcsp_probe {
	uint32_t id;		/* chosen by the prober, echoed */
	uint32_t flags;		/* PROBE: zero; REPLY: BCSP_PROBE_HEARS */
	uint64_t t1;		/* parent's clock, ns */
	uint64_t t2;		/* reply: child's clock at receipt, ns */
	uint64_t t3;		/* reply: child's clock at reply, ns */
};

/*
 * BCSP_OFFSETS body: 8 bytes + 24 per child.  A parent's estimates of its
 * children's clock offsets (child minus sender), for the master.  A child
 * appears at most once and is not the sender; @offset is within
 * -INT64_MAX .. INT64_MAX; @bound BCSP_BOUND_NONE means not known, and
 * then @offset is 0.  A parent with more children sends several.
 */
#define BCSP_MAX_OFFSETS	32	/* children per datagram */
#define BCSP_BOUND_NONE		UINT64_MAX

struct bcsp_offset {
	uint32_t node;		/* the child's node id */
	uint32_t reserved;	/* zero */
	int64_t offset;		/* ns */
	uint64_t bound;		/* ns, BCSP_BOUND_NONE: not known */
};

struct bcsp_offsets {
	uint32_t nr;
	uint32_t reserved;	/* zero */
	struct bcsp_offset o[BCSP_MAX_OFFSETS];
};

/*
 * BCSP_COMMAND body: 16 bytes; 24 for BCSP_CMD_ATTACH and
 * BCSP_CMD_MPI_GATHER; for BCSP_CMD_MPI 8
 * more (@sub_bits, @len) and the @len bytes of @sel padded with zeros to a
 * multiple of 4.  An application-oriented command on the tasks of a job,
 * as scalable DPCL sends to a context: the master sends it to the nodes
 * (down a tree, only into subtrees that hold the job's tasks, or for an
 * attach only towards node @node), and every node that holds tasks of
 * @job (for an attach: node @node alone) carries it out once: @id rises
 * with every command of a master's epoch, and a node takes each id once,
 * whatever the copies and in whatever order they come.  Down a tree each
 * child acknowledges each command to the daemon that passed it
 * (BCSP_ACK), which sends it again, a bounded number of times, until it
 * does.
 */
enum bcsp_cmd_op {
	BCSP_CMD_SIGNAL	= 1,	/* kill(2) every task of @job with @arg */
	BCSP_CMD_ATTACH	= 2,	/* on node @node: process @arg to @job */
	BCSP_CMD_MPI	= 3,	/* set the MPI control file of @job */
	BCSP_CMD_MPI_GATHER = 4, /* @job's MPI statistics files to @node */
	BCSP_CMD_TGATHER = 5,	/* the same, merged up the tree to @node */
};

/*
 * @arg: SIGNAL the signal, 1 .. BCSP_SIGNAL_MAX; ATTACH the pid; MPI the
 * BCSP_MPI_* flags; MPI_GATHER the id of @node's request, not 0.
 * @node: ATTACH the node that attaches, MPI_GATHER the node that asked,
 * not 0; not sent with the others, nor @reserved.
 */
struct bcsp_command {
	uint32_t id;		/* not 0 */
	uint32_t op;		/* enum bcsp_cmd_op */
	uint32_t job;
	uint32_t arg;
	uint32_t node;
	uint32_t reserved;	/* zero */
	/* BCSP_CMD_MPI only, as struct bcsp_request's @mpi. */
	uint32_t sub_bits;
	uint32_t len;
	char sel[BCSP_MPI_SEL_LEN];
};

/*
 * BCSP_RESULT body: 24 bytes.  How command @id of the master's epoch (the
 * header's) went on the node that sent it, for the master, which answers
 * the request that made it: @op, @job and @arg as in the command, @error
 * 0 or a negative errno (-ESRCH: no such process there).
 */
struct bcsp_result {
	uint32_t id;
	uint32_t op;		/* enum bcsp_cmd_op */
	uint32_t job;
	uint32_t arg;
	int32_t error;		/* 0 or -4095 .. -1 */
	uint32_t reserved;	/* zero */
};

/*
 * BCSP_ACK body: 8 bytes.  A child of a tree of daemons has taken command
 * @id of master @master, of the epoch in the header: its parent (or the
 * ancestor that passed it on) stops sending it again.
 */
struct bcsp_ack {
	uint32_t master;	/* the command's sender, not 0 */
	uint32_t id;		/* not 0 */
};

/*
 * BCSP_STROBE_NACK body: 16 bytes.  A node of a tree of daemons has not
 * had the strobe after that of slice @slice of master @master, of the
 * epoch in the header, when it was due (BCSP_STROBE_F_REPAIR): the node
 * that passed that one on sends its last strobe again, if later.
 */
struct bcsp_strobe_nack {
	uint64_t slice;		/* the last strobe the node has */
	uint32_t master;	/* its sender, not 0 */
	uint32_t reserved;	/* zero */
};

/*
 * BCSP_MPI_PART body: 28 bytes + @len, padded with zeros to a multiple of
 * 4.  For command BCSP_CMD_MPI_GATHER, each node that holds the job (in
 * bcs.ko, or files of it) sends the node that asked, @node, a summary of each
 * of its MPI statistics files of the job (libbcsmpi's
 * bcs_mpi_stats_summary()), cut into parts: file @file of @files, @size
 * bytes, of which this part holds [@offset, @offset + @len).  A node with
 * none sends one part with @files, @size and @len 0, so that the asker
 * knows it has heard all of it.  @req is the asker's request id (the
 * command's @arg).
 */
#define BCSP_MPI_PART_MAX	1308	/* bytes of a part: fills a datagram */
#define BCSP_MPI_FILES_MAX	1024	/* files of one node and job */
#define BCSP_MPI_FILE_MAX	65536	/* bytes of one summary */

struct bcsp_mpi_part {
	uint32_t req;		/* not 0 */
	uint32_t node;		/* the asker, not 0 */
	uint32_t job;
	uint16_t file;		/* < @files, or 0 */
	uint16_t files;		/* 0 .. BCSP_MPI_FILES_MAX */
	uint32_t size;		/* 1 .. BCSP_MPI_FILE_MAX, or 0 with no file */
	uint32_t offset;
	uint32_t len;		/* 1 .. BCSP_MPI_PART_MAX, or 0 with no file */
	uint8_t data[BCSP_MPI_PART_MAX];
};

/*
 * BCSP_TG_PART body: 28 bytes + @len, padded with zeros to a multiple of
 * 4 (protocol 4 only: a daemon of version 3 refuses type 19 and command
 * BCSP_CMD_TGATHER, and its subtree is counted missing).  For command
 * BCSP_CMD_TGATHER, each daemon sends the daemon above it in the tree
 * (BCSP_TG_F_FINAL: the root, to the asker @node) its subtree's merged
 * answer (tree/tgather.h's tg_encode()), @size bytes, of which this part
 * holds [@offset, @offset + @len): @offset a multiple of
 * BCSP_TG_PART_MAX, @len all the rest up to BCSP_TG_PART_MAX.  @req is
 * the asker's request id (the command's @arg).
 */
#define BCSP_TG_PART_MAX	1308	/* as tgather.h's TG_PART_MAX */
#define BCSP_TG_SIZE_MAX	131072	/* at least tgather.h's TG_BLOB_MAX */
#define BCSP_TG_F_FINAL		1u	/* to the asker: the whole tree's */
#define BCSP_TG_FLAGS		BCSP_TG_F_FINAL

struct bcsp_tg_part {
	uint32_t req;		/* not 0 */
	uint32_t node;		/* the asker, not 0 */
	uint32_t job;
	uint32_t flags;		/* BCSP_TG_F_* */
	uint32_t size;		/* 1 .. BCSP_TG_SIZE_MAX */
	uint32_t offset;
	uint32_t len;		/* 1 .. BCSP_TG_PART_MAX */
	uint8_t data[BCSP_TG_PART_MAX];
};

/*
 * BCSP_TG_NACK body: 40 bytes.  The daemon a tree gather's answer went
 * to asks its sender for parts of it again (Documentation/filters.rst,
 * "Lost parts of an answer"): a parent (or the ancestor that adopted the
 * node) asks a child, the asker @node asks the root for its
 * BCSP_TG_F_FINAL answer.  @req, @node and @job name the gather as its
 * parts do.  With BCSP_TG_NACK_F_ALL (no part of it came) all of it is
 * wanted, @size and @parts 0; else @size is the answer's, as its parts
 * said (1 .. BCSP_TG_SIZE_MAX), and bit k of @parts (@parts[k / 64], bit
 * k % 64) asks for part k, at k * BCSP_TG_PART_MAX: at least one bit,
 * none at or past the answer's last part.  The sender answers only the
 * node it sent that answer to, at most a few times per gather, with the
 * parts asked for (BCSP_TG_PART, as sent the first time) and nothing
 * more.  Protocol 4, from the daemons that send it: one of protocol 3,
 * or of protocol 4 before it, does not know type 20 and rejects the
 * datagram (bcsp_decode(): BCSP_BAD_TYPE, counted in its "rejected"
 * statistics): the gather then goes on as without the repair, the lost
 * parts' subtree counted missing.
 */
#define BCSP_TG_NACK_F_ALL	1u	/* nothing came: the whole answer */
#define BCSP_TG_NACK_FLAGS	BCSP_TG_NACK_F_ALL
#define BCSP_TG_NACK_BITS	128	/* parts one NACK names */

struct bcsp_tg_nack {
	uint32_t req;		/* not 0 */
	uint32_t node;		/* the asker, not 0 */
	uint32_t job;		/* a job id (bcs_job_id_valid()) */
	uint32_t flags;		/* BCSP_TG_NACK_F_* */
	uint32_t size;		/* 0 with F_ALL, else 1 .. BCSP_TG_SIZE_MAX */
	uint32_t reserved;	/* zero */
	uint64_t parts[BCSP_TG_NACK_BITS / 64];	/* parts wanted */
};

struct bcsp_msg {
	struct bcsp_hdr hdr;
	union {
		struct bcsp_strobe strobe;
		struct bcsp_map map;
		struct bcsp_request req;
		struct bcsp_report report;
		struct bcsp_context ctx;
		struct bcsp_switches sw;
		struct bcsp_attach attach;
		struct bcsp_tasks tasks;
		struct bcsp_command cmd;
		struct bcsp_result result;
		struct bcsp_ack ack;
		struct bcsp_strobe_nack nack;
		struct bcsp_node_tasks node_tasks;
		struct bcsp_probe probe;
		struct bcsp_offsets offsets;
		struct bcsp_mpi_part part;
		struct bcsp_tg_part tg;
		struct bcsp_tg_nack tg_nack;
	};
};

/* Reasons a datagram is rejected; counted per reason by the daemon. */
enum bcsp_verdict {
	BCSP_OK = 0,
	BCSP_SHORT,		/* truncated or length field wrong */
	BCSP_BAD_MAGIC,
	BCSP_BAD_VERSION,
	BCSP_BAD_TYPE,
	BCSP_BAD_MAC,
	BCSP_OTHER_CLUSTER,
	BCSP_BAD_BODY,		/* body length or reserved fields */
	BCSP_REPLAY,		/* seq already seen */
	BCSP_STALE,		/* old epoch or deadline long past */
	__BCSP_VERDICT_MAX,
};

const char *bcsp_verdict_name(enum bcsp_verdict v);

/*
 * The highest epoch.  A master that takes over takes one more than the
 * highest it has seen, and a 32-bit sum would wrap to 0 above 0xffffffff:
 * an epoch older than every other, whose strobes every node rejects as
 * stale, so that one datagram with epoch 0xffffffff would stop every
 * later take-over.  Epochs rise by one per take-over, and no cluster
 * comes near 2^31 of them; a datagram with a higher epoch (a negative
 * number, a corrupt or hostile value) is bad-body, and the upper half
 * stays free.  A master whose epoch would pass BCSP_EPOCH_MAX does not
 * take over (wire-protocol.rst, Epochs).
 */
#define BCSP_EPOCH_MAX		0x7fffffffu

/*
 * The epoch of a take-over by a master that has seen epochs up to @seen:
 * false if none is left (@seen is BCSP_EPOCH_MAX or above).
 */
bool bcsp_epoch_next(uint32_t seen, uint32_t *next);

/*
 * The row after @row in the rotation of map @m, by bcs.ko's own rule
 * (bcs_row_next() of <linux/bcs.h>): the next higher row that holds a
 * job, else the lowest; 0 if no job has a row.  The master picks each
 * slice's row with it, and a node that lost a strobe the same way.
 */
uint32_t bcsp_map_next_row(const struct bcsp_whole_map *m, uint32_t row);

/* The home rows of map @m's jobs (bit r: row r). */
uint64_t bcsp_map_home_rows(const struct bcsp_whole_map *m);

/* bcsp_map_next_row() over the home rows @rows of a map. */
uint32_t bcsp_rows_next(uint64_t rows, uint32_t row);

/*
 * Plans (struct bcsp_strobe, <linux/bcs.h> "Plans").  The row of slice @i
 * of a plan that starts with row @row and steps through the home rows
 * @rows (bcsp_rows_next() @i times; @row throughout if @rows is 0): bcs.ko's
 * own bcs_plan_row(), for any @i.
 */
uint32_t bcsp_plan_row(uint64_t rows, uint32_t row, uint64_t i);

/*
 * The master's plan for slice @start, one every @step slices (2 ..
 * BCS_PLAN_SLICES_MAX / 2): twice @step slices, so that a node that loses
 * a plan still holds @step slices of the one before; cut short at @cut
 * if it lies within them (the first slice of a map change not yet in
 * force; 0: none), so that no plan crosses it and every node changes
 * there alike.  Returns the plan's slices; *@next: the slices to the next
 * plan's first, @step, or fewer if the plan was cut shorter (the next
 * starts at @cut); 1 if no plan sent before covers @start (none from
 * @covered on: the first plan, or the first from a cut), so that a node
 * that loses this one has the next a slice later.
 */
uint32_t bcsp_plan_make(uint64_t start, uint32_t step, uint64_t cut,
			uint64_t covered, uint32_t *next);

/* The slices from @slice to the next plan's first (1 if no plan). */
static inline uint32_t bcsp_plan_next(const struct bcsp_strobe *s)
{
	return s->plan_slices ? s->plan_next : 1;
}

/* The slices @s names: its plan's, or 1. */
static inline uint32_t bcsp_plan_len(const struct bcsp_strobe *s)
{
	return s->plan_slices ? s->plan_slices : 1;
}

/*
 * Encode @msg into @buf (at least BCSP_MAX_LEN bytes) at version
 * @msg->hdr.version (0: BCSP_VERSION) and sign it with @key.  Returns the
 * datagram length, or -1 if @msg does not fit, its epoch is above
 * BCSP_EPOCH_MAX or its version is not one of BCSP_VERSION_MIN ..
 * BCSP_VERSION.
 */
int bcsp_encode(const struct bcsp_msg *msg, const uint8_t *key,
		uint8_t *buf, size_t size);

/*
 * Check and decode datagram @buf of @len bytes: magic, version
 * (BCSP_VERSION_MIN .. BCSP_VERSION, into @msg->hdr.version), length
 * (also against the lengths its type can have: BCSP_SHORT), type, tag
 * (@key), cluster (@cluster), epoch (not above BCSP_EPOCH_MAX, else
 * BCSP_BAD_BODY) and body.  Nothing costs more than one HMAC before the
 * tag is good, and @msg is written only then.  Replay and staleness are
 * the caller's, see struct bcsp_window.
 */
enum bcsp_verdict bcsp_decode(const uint8_t *buf, size_t len,
			      uint32_t cluster, const uint8_t *key,
			      struct bcsp_msg *msg);

/*
 * The same with a second key, @key2 (NULL: none), that of a key rotation
 * (Documentation/admin-guide.rst): the tag is checked against @key, and
 * against @key2 only when it is not @key's.  A good datagram costs one
 * HMAC as before, a forged one two: never more than one per key before
 * the tag is good.  *@which (if not NULL) is 1 when @key2 signed it, else
 * 0; set only when the tag is good.
 */
enum bcsp_verdict bcsp_decode_keys(const uint8_t *buf, size_t len,
				   uint32_t cluster, const uint8_t *key,
				   const uint8_t *key2, unsigned int *which,
				   struct bcsp_msg *msg);

/*
 * Replay window per sender and epoch: accepts each sequence number once,
 * in any order within the last 64, and nothing older.  A sender's jump
 * forward (bcsp_seq_next() catching up with its clock) would leave what
 * it sent just before out of the window, though in flight or passed on
 * again down a tree: the window before the last jump of 64 or more is
 * kept as well, with the 64 numbers above its top (below those that the
 * window since has covered), each accepted once.
 */
struct bcsp_window {
	uint32_t epoch;
	uint64_t top;		/* highest sequence number accepted */
	uint64_t bits;		/* bit i: top - i was accepted */
	uint64_t prev_top;	/* @top before the last jump; 0: none */
	uint64_t prev_bits;	/* bit i: prev_top - i was accepted */
	uint64_t prev_above;	/* bit i: prev_top + 1 + i was accepted */
	uint64_t prev_end;	/* above it the window since the jump */
	bool used;
};

/*
 * Returns BCSP_OK and records @seq, BCSP_REPLAY for a sequence number seen
 * or too old, BCSP_STALE for an epoch older than the window's.  A higher
 * epoch restarts the window.
 */
enum bcsp_verdict bcsp_window_check(struct bcsp_window *w, uint32_t epoch,
				    uint64_t seq);

/*
 * Sequence numbers follow the sender's CLOCK_REALTIME: a sender counts
 * them up by one, but never lets them fall more than BCSP_SEQ_LAG_NS
 * behind its clock (bcsp_seq_next()), so that a receiver that holds no
 * window for the sender can tell a datagram sent lately from one
 * captured long ago (bcsp_seq_check()).
 */
#define BCSP_SEQ_LAG_NS		1000000000ULL

/* The sequence number to send at CLOCK_REALTIME @now_ns; @next moves on. */
uint64_t bcsp_seq_next(uint64_t *next, uint64_t now_ns);

/*
 * bcsp_window_check(), and a datagram that would start the window (none
 * yet, or a newer epoch) only if @seq is at least @floor_ns, the oldest
 * sequence number a sender of lately can carry (the receiver's clock
 * less its allowance): else BCSP_STALE, and the window stays as it was.
 * A captured datagram replayed to a receiver that lost its window
 * (restarted, or the window expired) is refused once it is older than
 * the allowance.
 */
enum bcsp_verdict bcsp_seq_check(struct bcsp_window *w, uint32_t epoch,
				 uint64_t seq, uint64_t floor_ns);

/*
 * Can strobe @s take effect at CLOCK_REALTIME @now_ns?  BCSP_BAD_BODY for
 * a row or slice length bcs.ko would refuse; BCSP_STALE for a deadline
 * more than @stale_slices slices in the past or more than
 * BCSP_AHEAD_SLICES in the future.  bcs.ko holds only BCS_STROBE_QUEUE
 * strobes until their deadlines and gives up the earliest for a new one,
 * so strobes that all arrived that far ahead (a clock behind the master's
 * by that much less the lead) would never switch, and would keep the
 * kernel's watchdog from failing open.  Rejected, they let it.  A plan's
 * first deadline is checked so, and its last must not pass
 * BCS_DEADLINE_NS_MAX (BCSP_BAD_BODY).
 */
#define BCSP_AHEAD_SLICES	(BCS_STROBE_QUEUE - 1)
enum bcsp_verdict bcsp_strobe_verdict(const struct bcsp_strobe *s,
				      uint64_t now_ns, uint64_t stale_slices);

/* Read a key file: 32 raw bytes or 64 hex digits; refuses group/other access. */
int bcsp_load_key(const char *path, uint8_t key[BCSP_KEY_LEN], char *err,
		  size_t errlen);
/* Write a new random key to @path, 64 hex digits, mode 0600; never over one. */
int bcsp_write_key(const char *path, char *err, size_t errlen);

#endif /* BCSD_PROTO_H */

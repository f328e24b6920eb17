/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * bcs - the statistics file of one MPI process, as libbcsmpi writes it
 * (through a shared mapping, so that it is current at every instant) and
 * bcsstat mpi reads it.  Documentation/mpi.rst describes it in prose.
 *
 * Layout, all in the byte order of the host and naturally aligned:
 *
 *   struct bcs_mpi_file_header                 at 0
 *   struct bcs_mpi_prim[nr_prims]              at prim_off
 *   struct bcs_mpi_region[nr_regions]          at region_off (0: none)
 *   struct bcs_mpi_rprim[nr_regions][nr_prims] at region_off + nr_regions *
 *                                              region_size
 *   struct bcs_mpi_site[nr_sites]              at site_off (0: none)
 *   struct bcs_mpi_slices, then                at slices_off (0: none)
 *     struct bcs_mpi_slice[nr_slices] and
 *     struct bcs_mpi_call[nr_calls]
 *   histograms                                 at the offsets the records
 *                                              give, each a struct
 *                                              bcs_hist_header and then
 *                                              ALL bcs_hist_buckets(sub_bits)
 *                                              struct bcs_hist_bucket of
 *                                              <linux/bcs_hist.h>, index i
 *                                              at position i (a valid
 *                                              histogram of that format
 *                                              whose empty buckets are
 *                                              left in)
 *
 * Each histogram is of its own header's @sub_bits: the file's, except
 * those from before a change of resolution while the process ran (see
 * struct bcs_mpi_control), which stay in the file and are no longer
 * pointed to by records that were given new ones.  A file that grew has
 * @file_size updated after its new histograms are written; what lies
 * beyond it is not in use yet.
 *
 * The first two records are the process's own distributions:
 * BCS_MPI_PRIM_COMP ("Comp Granularity", the time between two blocking
 * MPI calls) and BCS_MPI_PRIM_COMM ("Comm Overhead", the time inside
 * blocking MPI calls); both always have a latency histogram (but in a
 * summary, BCS_MPI_SUMMARY).  The sum of
 * their @total_ns is the time from the return of MPI_Init to the entry of
 * MPI_Finalize (@finalize_ns - @init_ns) once BCS_MPI_COMPLETE is set.
 */
#ifndef _UAPI_LINUX_BCS_MPI_H
#define _UAPI_LINUX_BCS_MPI_H

#include <linux/types.h>
#include <linux/bcs_hist.h>

#define BCS_MPI_MAGIC		0x4d534342	/* "BCSM" little endian */
#define BCS_MPI_VERSION		4
/* The oldest version readers accept: 3 has no slices (@slices_off 0). */
#define BCS_MPI_VERSION_MIN	3
#define BCS_MPI_NAME_LEN	32
#define BCS_MPI_PRIM_COMP	0	/* record of the computation granularity */
#define BCS_MPI_PRIM_COMM	1	/* record of the communication overhead */

/* @flags of the file header. */
#define BCS_MPI_COMPLETE	(1U << 0)	/* MPI_Finalize was reached */
/*
 * A summary of a process's file, made to be sent elsewhere (bcsd gathers
 * them for bcsstat mpi --job): the process records and the records of
 * the primitives called, none with a histogram.
 */
#define BCS_MPI_SUMMARY		(1U << 1)

struct bcs_mpi_file_header {
	__u32 magic;		/* BCS_MPI_MAGIC, written last at creation */
	__u16 version;		/* BCS_MPI_VERSION */
	__u16 header_size;	/* sizeof(struct bcs_mpi_file_header) */
	__u32 flags;		/* BCS_MPI_* */
	__u32 nr_prims;		/* records at @prim_off */
	__u32 prim_size;	/* sizeof(struct bcs_mpi_prim) */
	__u32 sub_bits;		/* resolution of the histograms (below) */
	__u64 prim_off;		/* bytes from the start of the file */
	__u64 file_size;	/* bytes of the whole file */
	__s32 rank;		/* in MPI_COMM_WORLD */
	__s32 world_size;
	__s32 pid;
	__u32 reserved0;	/* 0 */
	__u64 init_ns;		/* CLOCK_MONOTONIC at MPI_Init's return */
	__u64 finalize_ns;	/* at MPI_Finalize's entry; 0 before */
	__u64 start_realtime_ns; /* CLOCK_REALTIME at MPI_Init's return */
	char job[BCS_MPI_NAME_LEN];	/* $BCS_JOB, or "" */
	char host[64];			/* gethostname() */
	char mpi[BCS_MPI_NAME_LEN];	/* "openmpi" or "mpich" */
	/* Version 3: MPI_Pcontrol's regions and the call sites. */
	__u64 region_off;	/* struct bcs_mpi_region[], 0 for none */
	__u32 nr_regions;	/* slots at @region_off (used: @name set) */
	__u32 region_size;	/* sizeof(struct bcs_mpi_region) */
	__u64 site_off;		/* struct bcs_mpi_site[], 0 for none */
	__u32 nr_sites;		/* slots at @site_off (used: @calls != 0) */
	__u32 site_size;	/* sizeof(struct bcs_mpi_site) */
	__u64 paused_ns;	/* time with MPI_Pcontrol(0) in force */
	__s32 pcontrol;		/* the last MPI_Pcontrol level (1 at start) */
	/* Version 4 (0 in version 3): struct bcs_mpi_slices, 0 for none. */
	__u32 slices_off;
};

/* @flags of a record. */
#define BCS_MPI_PRIM_BLOCKING	(1U << 0)	/* counts as communication */
#define BCS_MPI_PRIM_SIZED	(1U << 1)	/* @bytes means something */
#define BCS_MPI_PRIM_OTHER	(1U << 2)	/* no communication primitive */
#define BCS_MPI_PRIM_POLL	(1U << 3)	/* polled: one call in @sample timed */
/* Version 4: counted per slice as point-to-point or as a collective. */
#define BCS_MPI_PRIM_P2P	(1U << 4)
#define BCS_MPI_PRIM_COLL	(1U << 5)

/*
 * The totals of one primitive ("MPI_Allreduce") in this process.  @calls
 * counts every call; @timed the calls whose latency was measured, of
 * which @total_ns, @min_ns, @max_ns and the histograms are: every call
 * (@timed equals @calls) but for the primitives an application polls in
 * loops (BCS_MPI_PRIM_POLL: MPI_Test and its family, MPI_Iprobe), of
 * which the first call and then one in @sample are timed (BCS_MPI_POLL,
 * see Documentation/mpi.rst).  Their average latency is @total_ns /
 * @timed, and the time spent in them is estimated as that average times
 * @calls.  A reader of a live file may see @calls ahead of @timed.
 * @min_ns and @max_ns are 0 while @timed is 0.  @bytes is the sum over
 * the calls of count times MPI_Type_size of the datatype (for the
 * collectives the data the calling process contributes or receives, see
 * Documentation/mpi.rst).  @lat_hist_off and @size_hist_off are the
 * offsets of the latency (ns) and size (bytes) histograms, 0 for none.
 */
struct bcs_mpi_prim {
	char name[BCS_MPI_NAME_LEN];
	__u32 flags;		/* BCS_MPI_PRIM_* */
	__u32 sample;		/* 1 in @sample calls timed; 1 for every one */
	__u64 calls;
	__u64 timed;
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
	__u64 bytes;
	__u64 lat_hist_off;
	__u64 size_hist_off;
};

/*
 * A region of MPI_Pcontrol (IPM's convention): MPI_Pcontrol(1, "name")
 * enters it, MPI_Pcontrol(-1, "name") leaves it.  Slots are taken in the
 * order regions are first entered, at most @nr_regions of the header;
 * @name is sanitized ([A-Za-z0-9_.-], others '_', NUL-terminated).  A
 * call is counted in the innermost region the process is in (and in the
 * records of the whole process as always), in the region's row of
 * struct bcs_mpi_rprim, one per record of the file, in its order.
 * @time_ns is the time spent inside the region (entries to leaves);
 * @inside is non-zero while the process is in it.
 */
struct bcs_mpi_region {
	char name[BCS_MPI_NAME_LEN];
	__u64 entries;
	__u64 time_ns;
	__u64 entered_ns;	/* CLOCK_MONOTONIC of the open entry */
	__u32 inside;		/* depth of nesting of this region */
	__u32 reserved0;	/* 0 */
};

/* The calls of one primitive inside one region. */
struct bcs_mpi_rprim {
	__u64 calls;
	__u64 total_ns;		/* of the timed calls */
	__u64 bytes;
};

/*
 * A call site (BCS_MPI_SITES=1): a distinct return address of a
 * primitive's wrapper, i.e. the instruction after the application's
 * call.  @module is the object it lies in (dladdr()), @offset its
 * offset from the object's load address, so that it can be resolved to
 * file:line after the process ended (bcsstat mpi --sites, the job's
 * report).  @id is its slot number + 1; @prim the record index.
 */
#define BCS_MPI_MODULE_LEN	128
struct bcs_mpi_site {
	__u64 offset;
	__u32 prim;
	__u32 id;
	__u64 calls;
	__u64 total_ns;
	__u64 bytes;
	__u64 addr;		/* in the process, the key of the table */
	char module[BCS_MPI_MODULE_LEN];
};

/*
 * The MPI calls of this process per global slice of bcs.ko (version 4;
 * Documentation/mpi.rst "Per-slice counts").  libbcsmpi maps /dev/bcsstat
 * read-only and learns the slice in which each call returns from the
 * newest slice record; the calls of the point-to-point primitives and of
 * the collectives (BCS_MPI_PRIM_P2P, BCS_MPI_PRIM_COLL of their records)
 * are counted in the entry of that slice, a ring of @nr_slices entries
 * in which entry k (k < @slice_head) is at k % @nr_slices, each begun at
 * the first such call of a new slice.  With the node's slice window
 * armed (`bcsctl stats window`), only slices in it are kept; without
 * one, the newest @nr_slices.  While the window captures, every such
 * call is also written to the ring of @nr_calls struct bcs_mpi_call
 * (event k at k % @nr_calls, k < @call_head).  A reader of a live file
 * takes the entries of @slice_head - @nr_slices .. @slice_head - 1 (an
 * entry's @slice is written last, after its counters were cleared).
 */
#define BCS_MPI_SLICES_ON	(1U << 0)	/* /dev/bcsstat mapped */
#define BCS_MPI_SLICES_NODEV	(1U << 1)	/* no /dev/bcsstat: none */
#define BCS_MPI_SLICES_TEST	(1U << 2)	/* BCS_MPI_STATDEV's file */
#define BCS_MPI_SLICES_WINDOW	(1U << 3)	/* a window was armed */

struct bcs_mpi_slices {
	__u32 flags;		/* BCS_MPI_SLICES_* */
	__u32 nr_slices;	/* entries of the ring of slices */
	__u32 slice_size;	/* sizeof(struct bcs_mpi_slice) */
	__u32 nr_calls;		/* events of the ring of calls, 0: none */
	__u32 call_size;	/* sizeof(struct bcs_mpi_call) */
	__u32 reserved0;	/* 0 */
	__u64 slice_head;	/* entries begun */
	__u64 call_head;	/* call events written */
	__u64 window_from;	/* the window last seen, 0 0: none */
	__u64 window_to;
};

/* The calls that returned in one slice. */
struct bcs_mpi_slice {
	__u64 slice;		/* global slice number, written last */
	__u64 p2p_calls;	/* NP2P */
	__u64 coll_calls;	/* NCOLL */
	__u64 p2p_ns;		/* time inside them */
	__u64 coll_ns;
	__u64 p2p_bytes;
	__u64 coll_bytes;
	__u64 first_ns;		/* CLOCK_MONOTONIC: the first call's start */
	__u64 last_ns;		/* the latest return */
};

/* One call inside the window. */
struct bcs_mpi_call {
	__u64 slice;
	__u64 start_ns;		/* CLOCK_MONOTONIC */
	__u64 duration_ns;
	__u64 bytes;
	__u32 prim;		/* record index */
	__u32 reserved0;	/* 0 */
};

/* The bytes of one histogram of the file at resolution @sub_bits. */
static inline __u64 bcs_mpi_hist_bytes(unsigned int sub_bits)
{
	return sizeof(struct bcs_hist_header) +
	       (__u64)bcs_hist_buckets(sub_bits) *
	       sizeof(struct bcs_hist_bucket);
}

/*
 * The control file of the MPI statistics of a job, BCS_MPI_DIR/JOB.control
 * (JOB as in BCS_JOB): what its processes measure, changed while they run.
 * `bcsctl stats enable|disable JOB --mpi` writes it; each process of the
 * job maps it in MPI_Init (creating it, "never set", if it is missing)
 * and applies it whenever @generation changes, at its next MPI call; the
 * one load of @generation is all it costs while nothing changes.
 *
 * A writer holds an flock() on the file, makes @generation odd, writes
 * the rest, and makes it even again (a sequence lock): a reader that sees
 * it odd, or changed across its copy, tries again at a later call.  0
 * means never set: the processes follow their environment.
 *
 * @stats is in the syntax of BCS_MPI_STATS ("on", "all", or a list of
 * primitives "Allreduce,Isend" that get distributions); the processes
 * parse it as they parse the variable, so the selection does not depend
 * on the order of the records in their files.  @sub_bits (with
 * BCS_MPI_CTL_SUB_BITS) is the resolution: a process that runs when it
 * changes starts the distributions selected again at it, in new
 * histograms at the end of its file.
 */
#define BCS_MPI_CTL_MAGIC	0x43534342	/* "BCSC" little endian */
#define BCS_MPI_CTL_VERSION	1
#define BCS_MPI_CTL_STATS_LEN	1024

/* @flags of the control file. */
#define BCS_MPI_CTL_OFF		(1U << 0)	/* record nothing */
#define BCS_MPI_CTL_SUB_BITS	(1U << 1)	/* @sub_bits is set */

struct bcs_mpi_control {
	__u32 magic;		/* BCS_MPI_CTL_MAGIC, written last */
	__u16 version;		/* BCS_MPI_CTL_VERSION */
	__u16 size;		/* sizeof(struct bcs_mpi_control) */
	__u32 generation;	/* even: stable, odd: being written */
	__u32 flags;		/* BCS_MPI_CTL_* */
	__u32 sub_bits;		/* with BCS_MPI_CTL_SUB_BITS */
	__u32 reserved0;	/* 0 */
	char stats[BCS_MPI_CTL_STATS_LEN];	/* NUL-terminated */
};

#endif /* _UAPI_LINUX_BCS_MPI_H */

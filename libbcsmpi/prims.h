/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libbcsmpi: the MPI primitives it interposes, as one table.  Each entry
 * of BCSMPI_PRIMS is
 *
 *   P(name, blocking, sized, (parameters), (arguments), bytes)
 *
 * name: the primitive without its "MPI_" prefix; blocking: 1 if the time
 * inside it is communication overhead (and the time before it computation
 * granularity), 0 if not, BCSMPI_POLL (not blocking either) for the
 * primitives applications poll in loops, timed one call in a sample;
 * sized: 1 if @bytes means something; bytes: an expression of the
 * parameters, the bytes of one call (evaluated after a successful call
 * only).  wrappers.c expands the table into the wrappers,
 * this header into the indices and names of the records.  The parameters
 * are those of MPI-3.1, which Open MPI 4.1 and MPICH 4.0 both declare.
 *
 * The records of a file are, in this order: the two process
 * distributions (BCS_MPI_PRIM_COMP, BCS_MPI_PRIM_COMM of
 * <linux/bcs_mpi.h>), MPI_Init, MPI_Init_thread, MPI_Finalize, the
 * table, then MPI_Abort and the other functions (BCSMPI_OTHERS).
 */
#ifndef BCSMPI_PRIMS_H
#define BCSMPI_PRIMS_H

#define BCSMPI_SEND_PARAMS (const void *buf, int count, MPI_Datatype datatype, \
			    int dest, int tag, MPI_Comm comm)
#define BCSMPI_SEND_ARGS (buf, count, datatype, dest, tag, comm)
#define BCSMPI_XFER_PARAMS(...) (const void *sendbuf, int sendcount, \
	MPI_Datatype sendtype, void *recvbuf, int recvcount, \
	MPI_Datatype recvtype, __VA_ARGS__)
#define BCSMPI_XFER_ARGS(...) (sendbuf, sendcount, sendtype, recvbuf, \
	recvcount, recvtype, __VA_ARGS__)
/* Bytes of a collective's sending side, or of the receiving one in place. */
#define BCSMPI_XFER_BYTES bcsmpi_io_bytes(sendbuf, sendcount, sendtype, \
					  recvcount, recvtype)

/* The blocking column of a polled primitive (BCS_MPI_PRIM_POLL). */
#define BCSMPI_POLL	2

#define BCSMPI_PRIMS							\
	/* point-to-point, blocking */					\
	P(Send, 1, 1, BCSMPI_SEND_PARAMS, BCSMPI_SEND_ARGS,		\
	  bcsmpi_bytes(count, datatype))				\
	P(Ssend, 1, 1, BCSMPI_SEND_PARAMS, BCSMPI_SEND_ARGS,		\
	  bcsmpi_bytes(count, datatype))				\
	P(Bsend, 1, 1, BCSMPI_SEND_PARAMS, BCSMPI_SEND_ARGS,		\
	  bcsmpi_bytes(count, datatype))				\
	P(Rsend, 1, 1, BCSMPI_SEND_PARAMS, BCSMPI_SEND_ARGS,		\
	  bcsmpi_bytes(count, datatype))				\
	P(Recv, 1, 1, (void *buf, int count, MPI_Datatype datatype,	\
		       int source, int tag, MPI_Comm comm,		\
		       MPI_Status *status),				\
	  (buf, count, datatype, source, tag, comm, status),		\
	  bcsmpi_bytes(count, datatype))				\
	P(Sendrecv, 1, 1, (const void *sendbuf, int sendcount,		\
			   MPI_Datatype sendtype, int dest, int sendtag, \
			   void *recvbuf, int recvcount,		\
			   MPI_Datatype recvtype, int source,		\
			   int recvtag, MPI_Comm comm, MPI_Status *status), \
	  (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,	\
	   recvcount, recvtype, source, recvtag, comm, status),		\
	  bcsmpi_bytes(sendcount, sendtype) +				\
	  bcsmpi_bytes(recvcount, recvtype))				\
	P(Probe, 1, 0, (int source, int tag, MPI_Comm comm,		\
			MPI_Status *status),				\
	  (source, tag, comm, status), 0)				\
	/* point-to-point, non-blocking, and their completion */	\
	P(Isend, 0, 1, (const void *buf, int count,			\
			MPI_Datatype datatype, int dest, int tag,	\
			MPI_Comm comm, MPI_Request *request),		\
	  (buf, count, datatype, dest, tag, comm, request),		\
	  bcsmpi_bytes(count, datatype))				\
	P(Irecv, 0, 1, (void *buf, int count, MPI_Datatype datatype,	\
			int source, int tag, MPI_Comm comm,		\
			MPI_Request *request),				\
	  (buf, count, datatype, source, tag, comm, request),		\
	  bcsmpi_bytes(count, datatype))				\
	P(Iprobe, BCSMPI_POLL, 0, (int source, int tag, MPI_Comm comm,	\
				   int *flag, MPI_Status *status),	\
	  (source, tag, comm, flag, status), 0)				\
	P(Wait, 1, 0, (MPI_Request *request, MPI_Status *status),	\
	  (request, status), 0)						\
	P(Waitall, 1, 0, (int count, MPI_Request array_of_requests[],	\
			  MPI_Status array_of_statuses[]),		\
	  (count, array_of_requests, array_of_statuses), 0)		\
	P(Waitany, 1, 0, (int count, MPI_Request array_of_requests[],	\
			  int *index, MPI_Status *status),		\
	  (count, array_of_requests, index, status), 0)			\
	P(Waitsome, 1, 0, (int incount, MPI_Request array_of_requests[], \
			   int *outcount, int array_of_indices[],	\
			   MPI_Status array_of_statuses[]),		\
	  (incount, array_of_requests, outcount, array_of_indices,	\
	   array_of_statuses), 0)					\
	P(Test, BCSMPI_POLL, 0, (MPI_Request *request, int *flag,	\
				 MPI_Status *status),			\
	  (request, flag, status), 0)					\
	P(Testall, BCSMPI_POLL, 0, (int count,				\
				    MPI_Request array_of_requests[],	\
				    int *flag,				\
				    MPI_Status array_of_statuses[]),	\
	  (count, array_of_requests, flag, array_of_statuses), 0)	\
	P(Testany, BCSMPI_POLL, 0, (int count,				\
				    MPI_Request array_of_requests[],	\
				    int *index, int *flag,		\
				    MPI_Status *status),		\
	  (count, array_of_requests, index, flag, status), 0)		\
	P(Testsome, BCSMPI_POLL, 0, (int incount,			\
				     MPI_Request array_of_requests[],	\
				     int *outcount,			\
				     int array_of_indices[],		\
				     MPI_Status array_of_statuses[]),	\
	  (incount, array_of_requests, outcount, array_of_indices,	\
	   array_of_statuses), 0)					\
	/* collectives, blocking */					\
	P(Barrier, 1, 0, (MPI_Comm comm), (comm), 0)			\
	P(Bcast, 1, 1, (void *buffer, int count, MPI_Datatype datatype, \
			int root, MPI_Comm comm),			\
	  (buffer, count, datatype, root, comm),			\
	  bcsmpi_bytes(count, datatype))				\
	P(Reduce, 1, 1, (const void *sendbuf, void *recvbuf, int count, \
			 MPI_Datatype datatype, MPI_Op op, int root,	\
			 MPI_Comm comm),				\
	  (sendbuf, recvbuf, count, datatype, op, root, comm),		\
	  bcsmpi_bytes(count, datatype))				\
	P(Allreduce, 1, 1, (const void *sendbuf, void *recvbuf,		\
			    int count, MPI_Datatype datatype, MPI_Op op, \
			    MPI_Comm comm),				\
	  (sendbuf, recvbuf, count, datatype, op, comm),		\
	  bcsmpi_bytes(count, datatype))				\
	P(Scan, 1, 1, (const void *sendbuf, void *recvbuf, int count,	\
		       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm), \
	  (sendbuf, recvbuf, count, datatype, op, comm),		\
	  bcsmpi_bytes(count, datatype))				\
	P(Reduce_scatter, 1, 1, (const void *sendbuf, void *recvbuf,	\
				 const int recvcounts[],		\
				 MPI_Datatype datatype, MPI_Op op,	\
				 MPI_Comm comm),			\
	  (sendbuf, recvbuf, recvcounts, datatype, op, comm),		\
	  bcsmpi_vbytes(recvcounts, datatype, comm, 0))			\
	P(Reduce_scatter_block, 1, 1, (const void *sendbuf,		\
				       void *recvbuf, int recvcount,	\
				       MPI_Datatype datatype, MPI_Op op, \
				       MPI_Comm comm),			\
	  (sendbuf, recvbuf, recvcount, datatype, op, comm),		\
	  bcsmpi_bytes(recvcount, datatype))				\
	P(Gather, 1, 1, BCSMPI_XFER_PARAMS(int root, MPI_Comm comm),	\
	  BCSMPI_XFER_ARGS(root, comm), BCSMPI_XFER_BYTES)		\
	P(Allgather, 1, 1, BCSMPI_XFER_PARAMS(MPI_Comm comm),		\
	  BCSMPI_XFER_ARGS(comm), BCSMPI_XFER_BYTES)			\
	P(Scatter, 1, 1, BCSMPI_XFER_PARAMS(int root, MPI_Comm comm),	\
	  BCSMPI_XFER_ARGS(root, comm),					\
	  bcsmpi_io_bytes(recvbuf, recvcount, recvtype, sendcount,	\
			  sendtype))					\
	P(Alltoall, 1, 1, BCSMPI_XFER_PARAMS(MPI_Comm comm),		\
	  BCSMPI_XFER_ARGS(comm), BCSMPI_XFER_BYTES)			\
	P(Gatherv, 1, 1, (const void *sendbuf, int sendcount,		\
			  MPI_Datatype sendtype, void *recvbuf,		\
			  const int recvcounts[], const int displs[],	\
			  MPI_Datatype recvtype, int root, MPI_Comm comm), \
	  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,	\
	   recvtype, root, comm),					\
	  bcsmpi_io_bytes(sendbuf, sendcount, sendtype, 0, recvtype))	\
	P(Allgatherv, 1, 1, (const void *sendbuf, int sendcount,	\
			     MPI_Datatype sendtype, void *recvbuf,	\
			     const int recvcounts[], const int displs[], \
			     MPI_Datatype recvtype, MPI_Comm comm),	\
	  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,	\
	   recvtype, comm),						\
	  bcsmpi_io_bytes(sendbuf, sendcount, sendtype, 0, recvtype))	\
	P(Scatterv, 1, 1, (const void *sendbuf, const int sendcounts[], \
			   const int displs[], MPI_Datatype sendtype,	\
			   void *recvbuf, int recvcount,		\
			   MPI_Datatype recvtype, int root, MPI_Comm comm), \
	  (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,	\
	   recvtype, root, comm),					\
	  bcsmpi_io_bytes(recvbuf, recvcount, recvtype, 0, sendtype))	\
	P(Alltoallv, 1, 1, (const void *sendbuf, const int sendcounts[], \
			    const int sdispls[], MPI_Datatype sendtype,	\
			    void *recvbuf, const int recvcounts[],	\
			    const int rdispls[], MPI_Datatype recvtype,	\
			    MPI_Comm comm),				\
	  (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, \
	   rdispls, recvtype, comm),					\
	  sendbuf == MPI_IN_PLACE ?					\
	  bcsmpi_vbytes(recvcounts, recvtype, comm, 1) :		\
	  bcsmpi_vbytes(sendcounts, sendtype, comm, 1))			\
	/* collectives, non-blocking */					\
	P(Ibarrier, 0, 0, (MPI_Comm comm, MPI_Request *request),	\
	  (comm, request), 0)						\
	P(Ibcast, 0, 1, (void *buffer, int count, MPI_Datatype datatype, \
			 int root, MPI_Comm comm, MPI_Request *request), \
	  (buffer, count, datatype, root, comm, request),		\
	  bcsmpi_bytes(count, datatype))				\
	P(Ireduce, 0, 1, (const void *sendbuf, void *recvbuf, int count, \
			  MPI_Datatype datatype, MPI_Op op, int root,	\
			  MPI_Comm comm, MPI_Request *request),		\
	  (sendbuf, recvbuf, count, datatype, op, root, comm, request), \
	  bcsmpi_bytes(count, datatype))				\
	P(Iallreduce, 0, 1, (const void *sendbuf, void *recvbuf,	\
			     int count, MPI_Datatype datatype, MPI_Op op, \
			     MPI_Comm comm, MPI_Request *request),	\
	  (sendbuf, recvbuf, count, datatype, op, comm, request),	\
	  bcsmpi_bytes(count, datatype))				\
	P(Igather, 0, 1, BCSMPI_XFER_PARAMS(int root, MPI_Comm comm,	\
					    MPI_Request *request),	\
	  BCSMPI_XFER_ARGS(root, comm, request), BCSMPI_XFER_BYTES)	\
	P(Iallgather, 0, 1, BCSMPI_XFER_PARAMS(MPI_Comm comm,		\
					       MPI_Request *request),	\
	  BCSMPI_XFER_ARGS(comm, request), BCSMPI_XFER_BYTES)		\
	P(Iscatter, 0, 1, BCSMPI_XFER_PARAMS(int root, MPI_Comm comm,	\
					     MPI_Request *request),	\
	  BCSMPI_XFER_ARGS(root, comm, request),			\
	  bcsmpi_io_bytes(recvbuf, recvcount, recvtype, sendcount,	\
			  sendtype))					\
	P(Ialltoall, 0, 1, BCSMPI_XFER_PARAMS(MPI_Comm comm,		\
					      MPI_Request *request),	\
	  BCSMPI_XFER_ARGS(comm, request), BCSMPI_XFER_BYTES)

/*
 * The MPI functions that are no communication primitive but are called
 * often enough to be worth counting, "other" by name (BCS_MPI_PRIM_OTHER
 * records):
 *
 *   O(name, blocking, (parameters), (arguments))
 *
 * blocking as above: the collectives that make communicators wait for
 * the other processes.  MPI_Wtime and MPI_Wtick are left out on purpose:
 * programs call them around everything, and measuring them would cost
 * more than they do.  MPI_Abort, which does not return, is counted at
 * its entry (wrappers.c).
 */
#define BCSMPI_OTHERS							\
	O(Comm_rank, 0, (MPI_Comm comm, int *rank), (comm, rank))	\
	O(Comm_size, 0, (MPI_Comm comm, int *size), (comm, size))	\
	O(Comm_dup, 1, (MPI_Comm comm, MPI_Comm *newcomm),		\
	  (comm, newcomm))						\
	O(Comm_split, 1, (MPI_Comm comm, int color, int key,		\
			  MPI_Comm *newcomm), (comm, color, key, newcomm)) \
	O(Comm_create, 1, (MPI_Comm comm, MPI_Group group,		\
			   MPI_Comm *newcomm), (comm, group, newcomm))	\
	O(Comm_free, 0, (MPI_Comm *comm), (comm))			\
	O(Comm_group, 0, (MPI_Comm comm, MPI_Group *group), (comm, group)) \
	O(Comm_compare, 0, (MPI_Comm comm1, MPI_Comm comm2, int *result), \
	  (comm1, comm2, result))					\
	O(Comm_set_errhandler, 0, (MPI_Comm comm,			\
				   MPI_Errhandler errhandler),		\
	  (comm, errhandler))						\
	O(Group_incl, 0, (MPI_Group group, int n, const int ranks[],	\
			  MPI_Group *newgroup), (group, n, ranks, newgroup)) \
	O(Group_free, 0, (MPI_Group *group), (group))			\
	O(Group_size, 0, (MPI_Group group, int *size), (group, size))	\
	O(Group_rank, 0, (MPI_Group group, int *rank), (group, rank))	\
	O(Cart_create, 1, (MPI_Comm comm_old, int ndims, const int dims[], \
			   const int periods[], int reorder,		\
			   MPI_Comm *comm_cart),			\
	  (comm_old, ndims, dims, periods, reorder, comm_cart))		\
	O(Cart_coords, 0, (MPI_Comm comm, int rank, int maxdims,	\
			   int coords[]), (comm, rank, maxdims, coords)) \
	O(Cart_rank, 0, (MPI_Comm comm, const int coords[], int *rank),	\
	  (comm, coords, rank))						\
	O(Cart_shift, 0, (MPI_Comm comm, int direction, int disp,	\
			  int *rank_source, int *rank_dest),		\
	  (comm, direction, disp, rank_source, rank_dest))		\
	O(Dims_create, 0, (int nnodes, int ndims, int dims[]),		\
	  (nnodes, ndims, dims))					\
	O(Type_size, 0, (MPI_Datatype datatype, int *size),		\
	  (datatype, size))						\
	O(Type_commit, 0, (MPI_Datatype *datatype), (datatype))	\
	O(Type_free, 0, (MPI_Datatype *datatype), (datatype))		\
	O(Type_contiguous, 0, (int count, MPI_Datatype oldtype,	\
			       MPI_Datatype *newtype),			\
	  (count, oldtype, newtype))					\
	O(Type_vector, 0, (int count, int blocklength, int stride,	\
			   MPI_Datatype oldtype, MPI_Datatype *newtype), \
	  (count, blocklength, stride, oldtype, newtype))		\
	O(Type_indexed, 0, (int count, const int array_of_blocklengths[], \
			    const int array_of_displacements[],	\
			    MPI_Datatype oldtype, MPI_Datatype *newtype), \
	  (count, array_of_blocklengths, array_of_displacements, oldtype, \
	   newtype))							\
	O(Type_create_struct, 0, (int count,				\
				  const int array_of_blocklengths[],	\
				  const MPI_Aint array_of_displacements[], \
				  const MPI_Datatype array_of_types[],	\
				  MPI_Datatype *newtype),		\
	  (count, array_of_blocklengths, array_of_displacements,	\
	   array_of_types, newtype))					\
	O(Type_get_extent, 0, (MPI_Datatype datatype, MPI_Aint *lb,	\
			       MPI_Aint *extent), (datatype, lb, extent)) \
	O(Get_count, 0, (const MPI_Status *status, MPI_Datatype datatype, \
			 int *count), (status, datatype, count))	\
	O(Get_elements, 0, (const MPI_Status *status,			\
			    MPI_Datatype datatype, int *count),		\
	  (status, datatype, count))					\
	O(Op_create, 0, (MPI_User_function *user_fn, int commute,	\
			 MPI_Op *op), (user_fn, commute, op))		\
	O(Op_free, 0, (MPI_Op *op), (op))				\
	O(Request_free, 0, (MPI_Request *request), (request))		\
	O(Cancel, 0, (MPI_Request *request), (request))			\
	O(Get_processor_name, 0, (char *name, int *resultlen),		\
	  (name, resultlen))						\
	O(Error_string, 0, (int errorcode, char *string, int *resultlen), \
	  (errorcode, string, resultlen))				\
	O(Initialized, 0, (int *flag), (flag))				\
	O(Finalized, 0, (int *flag), (flag))				\
	O(Query_thread, 0, (int *provided), (provided))

/* The index of each record in the file. */
enum bcsmpi_prim {
	BCSMPI_COMP,		/* = BCS_MPI_PRIM_COMP */
	BCSMPI_COMM,		/* = BCS_MPI_PRIM_COMM */
	BCSMPI_Init,
	BCSMPI_Init_thread,
	BCSMPI_Finalize,
#define P(name, ...) BCSMPI_##name,
	BCSMPI_PRIMS
#undef P
	BCSMPI_Abort,
#define O(name, ...) BCSMPI_##name,
	BCSMPI_OTHERS
#undef O
	BCSMPI_NR_PRIMS
};

/* What a record is: its name ("MPI_Send") and BCS_MPI_PRIM_* flags. */
struct bcsmpi_prim_info {
	const char *name;
	unsigned int flags;
};

/* The records, indexed by enum bcsmpi_prim (prims.c). */
extern const struct bcsmpi_prim_info bcsmpi_prim_info[BCSMPI_NR_PRIMS];

#endif /* BCSMPI_PRIMS_H */

! SPDX-License-Identifier: GPL-2.0
! The Fortran program of the libbcsmpi tests (mpif.h), on 2 ranks or
! more: per rank 10 MPI_Allreduce of 8 doubles, 5 MPI_Barrier, 2
! MPI_Bcast of 16 integers, 6 MPI_Isend and MPI_Irecv of 25 integers
! around the ring, each pair completed by one MPI_Waitall; rank 0 sends
! rank 1 3 MPI_Send of 100 integers, which it receives with MPI_Recv; an
! MPI_Pcontrol(0) before 4 MPI_Barrier not counted, MPI_Pcontrol(1) after.
program fortran
    implicit none
    include 'mpif.h'
    integer :: ierr, rank, nproc, i, req(2), st(MPI_STATUS_SIZE)
    integer :: sts(MPI_STATUS_SIZE, 2), ibuf(100), ring(25), got(25)
    double precision :: a(8), b(8)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
    a = 1.0d0
    ibuf = rank
    ring = rank
    do i = 1, 10
        call MPI_Allreduce(a, b, 8, MPI_DOUBLE_PRECISION, MPI_SUM, &
                   MPI_COMM_WORLD, ierr)
    end do
    do i = 1, 5
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
    end do
    do i = 1, 2
        call MPI_Bcast(ibuf, 16, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    end do
    do i = 1, 6
        call MPI_Irecv(got, 25, MPI_INTEGER, mod(rank + nproc - 1, nproc), &
                   7, MPI_COMM_WORLD, req(1), ierr)
        call MPI_Isend(ring, 25, MPI_INTEGER, mod(rank + 1, nproc), 7, &
                   MPI_COMM_WORLD, req(2), ierr)
        call MPI_Waitall(2, req, sts, ierr)
    end do
    do i = 1, 3
        if (rank == 0) then
            call MPI_Send(ibuf, 100, MPI_INTEGER, 1, 9, MPI_COMM_WORLD, ierr)
        else if (rank == 1) then
            call MPI_Recv(ibuf, 100, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, &
                      st, ierr)
        end if
    end do
    call MPI_Pcontrol(0)
    do i = 1, 4
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
    end do
    call MPI_Pcontrol(1)
    call MPI_Finalize(ierr)
end program fortran

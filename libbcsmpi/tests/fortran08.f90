! SPDX-License-Identifier: GPL-2.0
! The calls of fortran.f90 through "use mpi_f08" (the same counts).
program fortran08
    use mpi_f08
    implicit none
    integer :: rank, nproc, i, ibuf(100), ring(25), got(25)
    type(MPI_Request) :: req(2)
    type(MPI_Status) :: st, sts(2)
    double precision :: a(8), b(8)

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nproc)
    a = 1.0d0
    ibuf = rank
    ring = rank
    do i = 1, 10
        call MPI_Allreduce(a, b, 8, MPI_DOUBLE_PRECISION, MPI_SUM, &
                   MPI_COMM_WORLD)
    end do
    do i = 1, 5
        call MPI_Barrier(MPI_COMM_WORLD)
    end do
    do i = 1, 2
        call MPI_Bcast(ibuf, 16, MPI_INTEGER, 0, MPI_COMM_WORLD)
    end do
    do i = 1, 6
        call MPI_Irecv(got, 25, MPI_INTEGER, mod(rank + nproc - 1, nproc), &
                   7, MPI_COMM_WORLD, req(1))
        call MPI_Isend(ring, 25, MPI_INTEGER, mod(rank + 1, nproc), 7, &
                   MPI_COMM_WORLD, req(2))
        call MPI_Waitall(2, req, sts)
    end do
    do i = 1, 3
        if (rank == 0) then
            call MPI_Send(ibuf, 100, MPI_INTEGER, 1, 9, MPI_COMM_WORLD)
        else if (rank == 1) then
            call MPI_Recv(ibuf, 100, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, st)
        end if
    end do
    call MPI_Pcontrol(0)
    do i = 1, 4
        call MPI_Barrier(MPI_COMM_WORLD)
    end do
    call MPI_Pcontrol(1)
    call MPI_Finalize()
end program fortran08

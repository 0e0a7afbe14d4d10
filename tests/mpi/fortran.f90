! SPDX-License-Identifier: BSD-3-Clause
! fortran: the Fortran 90 bindings (use mpi) over the channel: point-to-point send/receive
! (small, and rendezvous-sized), MPI_ANY_TAG order, allreduce, and an RMA fence epoch with a
! window on a Fortran array.  The NAS benchmarks reach MPI this way, so the Fortran layer's
! argument passing (integer handles, status arrays, MPI_ADDRESS_KIND) must work with it.
! Every value is checked; any mismatch aborts with a message and a non-zero exit status.
!
! Usage: mpiexec -n N fortran     (N >= 2)
program fortran_test
  use mpi
  implicit none
  integer, parameter :: nsmall = 100, nbig = 300000
  integer :: ierr, rank, nprocs, left, right, i, k, win, tag, cnt
  integer :: status(MPI_STATUS_SIZE)
  integer :: small(nsmall), rsmall(nsmall)
  double precision, allocatable :: big(:), rbig(:)
  integer :: wbuf(64), getv(4)
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp
  integer :: isum, sizeofint, lleft, one
  double precision :: dsum(3), dloc(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  if (nprocs < 2) call die('needs at least 2 processes')
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)

  ! --- ring exchange: small integers, then a large double array (rendezvous) -------------
  do i = 1, nsmall
    small(i) = rank * 1000 + i
  end do
  call MPI_Sendrecv(small, nsmall, MPI_INTEGER, right, 7, rsmall, nsmall, MPI_INTEGER, left, 7, &
                    MPI_COMM_WORLD, status, ierr)
  call check(ierr, 'MPI_Sendrecv')
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  if (status(MPI_SOURCE) /= left .or. status(MPI_TAG) /= 7 .or. cnt /= nsmall) &
    call die('MPI_Sendrecv: wrong status')
  do i = 1, nsmall
    if (rsmall(i) /= left * 1000 + i) call die('MPI_Sendrecv: wrong integer data')
  end do

  allocate(big(nbig), rbig(nbig))
  do i = 1, nbig
    big(i) = dble(rank) * 1.0d6 + dble(i) * 0.5d0
  end do
  if (mod(rank, 2) == 0) then
    call MPI_Send(big, nbig, MPI_DOUBLE_PRECISION, right, 8, MPI_COMM_WORLD, ierr)
    call check(ierr, 'MPI_Send (large)')
    call MPI_Recv(rbig, nbig, MPI_DOUBLE_PRECISION, left, 8, MPI_COMM_WORLD, status, ierr)
    call check(ierr, 'MPI_Recv (large)')
  else
    call MPI_Recv(rbig, nbig, MPI_DOUBLE_PRECISION, left, 8, MPI_COMM_WORLD, status, ierr)
    call check(ierr, 'MPI_Recv (large)')
    call MPI_Send(big, nbig, MPI_DOUBLE_PRECISION, right, 8, MPI_COMM_WORLD, ierr)
    call check(ierr, 'MPI_Send (large)')
  end if
  do i = 1, nbig
    if (rbig(i) /= dble(left) * 1.0d6 + dble(i) * 0.5d0) call die('large message: wrong data')
  end do

  ! --- tags 1, 3, 5 received with MPI_ANY_TAG come back in send order ----------------------
  if (rank == 0) then
    do k = 1, 5, 2
      call MPI_Send(k, 1, MPI_INTEGER, 1, k, MPI_COMM_WORLD, ierr)
      call check(ierr, 'MPI_Send (tags)')
    end do
  else if (rank == 1) then
    do k = 1, 5, 2
      call MPI_Recv(tag, 1, MPI_INTEGER, 0, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
      call check(ierr, 'MPI_Recv (ANY_TAG)')
      if (status(MPI_TAG) /= k .or. tag /= k) call die('MPI_ANY_TAG: messages out of send order')
    end do
  end if

  ! --- allreduce -----------------------------------------------------------------------------
  call MPI_Allreduce(rank + 1, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr, 'MPI_Allreduce (integer)')
  if (isum /= nprocs * (nprocs + 1) / 2) call die('MPI_Allreduce: wrong integer sum')
  dloc = (/ dble(rank), dble(rank) * 2.0d0, 1.0d0 /)
  call MPI_Allreduce(dloc, dsum, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr, 'MPI_Allreduce (double)')
  if (dsum(1) /= dble(nprocs * (nprocs - 1) / 2) .or. dsum(2) /= 2.0d0 * dsum(1) .or. &
      dsum(3) /= dble(nprocs)) call die('MPI_Allreduce: wrong double sums')

  ! --- RMA: fence epoch on a window over a Fortran array -------------------------------------
  wbuf = -1
  call MPI_Type_size(MPI_INTEGER, sizeofint, ierr)
  winsize = 64 * sizeofint
  call MPI_Win_create(wbuf, winsize, sizeofint, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call check(ierr, 'MPI_Win_create')
  call MPI_Win_fence(0, win, ierr)
  ! put 4 integers into the right neighbour at displacement 4*rank (mod 64), get 4 from the left
  do i = 1, 4
    small(i) = rank * 10 + i
  end do
  disp = mod(4 * rank, 60)
  call MPI_Put(small, 4, MPI_INTEGER, right, disp, 4, MPI_INTEGER, win, ierr)
  call check(ierr, 'MPI_Put')
  call MPI_Win_fence(0, win, ierr)
  call check(ierr, 'MPI_Win_fence')
  disp = mod(4 * left, 60)
  do i = 1, 4
    if (wbuf(disp + i) /= left * 10 + i) call die('RMA: window does not hold what MPI_Put wrote')
  end do
  ! read back what the left neighbour received from its own left neighbour (lleft)
  lleft = mod(left + nprocs - 1, nprocs)
  disp = mod(4 * lleft, 60)
  call MPI_Get(getv, 4, MPI_INTEGER, left, disp, 4, MPI_INTEGER, win, ierr)
  call check(ierr, 'MPI_Get')
  one = 1
  call MPI_Accumulate(one, 1, MPI_INTEGER, 0, 63_MPI_ADDRESS_KIND, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  call check(ierr, 'MPI_Accumulate')
  call MPI_Win_fence(0, win, ierr)
  do i = 1, 4
    if (getv(i) /= lleft * 10 + i) call die('RMA: MPI_Get returned wrong data')
  end do
  if (rank == 0 .and. wbuf(64) /= -1 + nprocs) call die('RMA: MPI_Accumulate sum wrong')
  call MPI_Win_free(win, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran: OK (', nprocs, ' processes: send/recv, ANY_TAG order, allreduce, RMA fence)'
  call MPI_Finalize(ierr)

contains

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    character(len=MPI_MAX_ERROR_STRING) :: msg
    integer :: l, e
    if (code /= MPI_SUCCESS) then
      call MPI_Error_string(code, msg, l, e)
      call die(what // ' returned error: ' // msg(1:l))
    end if
  end subroutine check

  subroutine die(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    write (0, '(a,i0,a,a)') 'fortran: rank ', rank, ': FAIL: ', msg
    flush (0)
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
    stop 1
  end subroutine die

end program fortran_test

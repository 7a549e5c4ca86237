! The Fortran binding over MPI (mpirun -np 2 or 4): each rank holds its section of a 10 x 7 array
! whose rows are block-cyclic (blocks of 2) over the ranks, in a Fortran array a(7, n) (the C shape
! reversed). C writes every element's global position through gdap's view of that same memory;
! Fortran checks them against its own block-cyclic arithmetic; then the communicator made from
! MPI_COMM_WORLD's INTEGER handle moves the array to row blocks, checked element by element.
! Rank 0 prints "fortran mpi: N ranks ok" when every rank saw everything right; exits 1 otherwise.
program mpi_fortran
  use, intrinsic :: iso_c_binding
  use mpi
  use gdap
  implicit none
  interface
    function c_write_globals(array) bind(C, name='c_write_globals') result(n)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: array
      integer(c_int64_t) :: n
    end function c_write_globals
  end interface
  integer(c_int64_t), parameter :: rows = 10, cols = 7, bs = 2
  type(gdap_dtype), parameter :: f64 = gdap_dtype(GDAP_DTYPE_FLOAT, 64_c_int8_t, 1_c_int16_t)
  integer :: ierr, me, nprocs, failures
  integer(c_int64_t) :: r, p

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  r = me
  p = nprocs
  failures = 0
  call run()
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (failures == 0 .and. me == 0) print '(a,i0,a)', 'fortran mpi: ', nprocs, ' ranks ok'
  call MPI_Finalize(ierr)
  if (failures > 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    print '(a,i0,4a)', 'rank ', me, ': FAIL: ', what, ' | last error: ', gdap_error_message()
  end subroutine check

  ! Rows owned by this rank under block-cyclic rows: blocks k = r, r + p, ... of bs rows each.
  integer(c_int64_t) function cyclic_rows()
    integer(c_int64_t) :: g
    cyclic_rows = 0
    do g = 0, rows - 1
      if (mod(g / bs, p) == r) cyclic_rows = cyclic_rows + 1
    end do
  end function cyclic_rows

  ! The global row of local row i (0-based) under block-cyclic rows.
  integer(c_int64_t) function global_row(i)
    integer(c_int64_t), intent(in) :: i
    global_row = ((i / bs) * p + r) * bs + mod(i, bs)
  end function global_row

  subroutine run()
    type(gdap_dim) :: cdims(2), bdims(2)
    type(c_ptr) :: comm, from, to, plan, src, dst, data
    real(c_double), allocatable, target :: a(:, :), b(:, :)
    integer(c_int64_t) :: n, lo, hi, i, j, wrong
    n = cyclic_rows()
    lo = rows * r / p
    hi = rows * (r + 1) / p
    call check(gdap_dim_set_cyclic(cdims(1), rows, p, r, bs * r, bs) == GDAP_SUCCESS, 'block-cyclic rows')
    call check(gdap_dim_set_block(cdims(2), cols, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, cols) == GDAP_SUCCESS, &
               'whole columns')
    call check(gdap_dim_set_block(bdims(1), rows, p, r, lo, hi) == GDAP_SUCCESS, 'row blocks')
    bdims(2) = cdims(2)
    allocate(a(cols, n), b(cols, hi - lo))
    a = -1
    b = -1

    ! Shared with C: gdap's view of a, written from C, read here.
    call check(gdap_array_wrap_fortran(src, c_loc(a), f64, cdims) == GDAP_SUCCESS, 'wrap a')
    call check(gdap_array_data(data, src) == GDAP_SUCCESS, 'gdap_array_data')
    call check(c_associated(data, c_loc(a)), 'gdap views a itself, not a copy')
    call check(c_write_globals(src) == n * cols, 'C wrote every element')
    wrong = 0
    do i = 0, n - 1
      do j = 0, cols - 1
        if (a(j + 1, i + 1) /= real(1000 * global_row(i) + j, c_double)) wrong = wrong + 1
      end do
    end do
    call check(wrong == 0, 'Fortran sees what C wrote, where block-cyclic rows put it')

    ! Redistributed over MPI: block-cyclic rows -> row blocks.
    call check(gdap_comm_from_mpi(comm, int(MPI_COMM_WORLD, c_int)) == GDAP_SUCCESS, 'gdap_comm_from_mpi')
    call check(gdap_map_create_collective(from, comm, 2_c_int64_t, cdims) == GDAP_SUCCESS, 'collective source map')
    call check(gdap_map_create_collective(to, comm, 2_c_int64_t, bdims) == GDAP_SUCCESS, 'collective destination map')
    call check(gdap_plan_create(plan, from, to, f64, r) == GDAP_SUCCESS, 'plan')
    call check(gdap_array_wrap_fortran(dst, c_loc(b), f64, bdims) == GDAP_SUCCESS, 'wrap b')
    call check(gdap_redistribute(comm, plan, src, dst) == GDAP_SUCCESS, 'gdap_redistribute')
    wrong = 0
    do i = 0, hi - lo - 1
      do j = 0, cols - 1
        if (b(j + 1, i + 1) /= real(1000 * (lo + i) + j, c_double)) wrong = wrong + 1
      end do
    end do
    call check(wrong == 0, 'every element of the row block arrived')
    call check(gdap_array_destroy(src) == GDAP_SUCCESS, 'destroy src')
    call check(gdap_array_destroy(dst) == GDAP_SUCCESS, 'destroy dst')
    call check(gdap_plan_destroy(plan) == GDAP_SUCCESS, 'destroy plan')
    call check(gdap_map_destroy(from) == GDAP_SUCCESS, 'destroy from')
    call check(gdap_map_destroy(to) == GDAP_SUCCESS, 'destroy to')
    call check(gdap_comm_destroy(comm) == GDAP_SUCCESS, 'destroy comm')
  end subroutine run

end program mpi_fortran

! The stencil path in Fortran over MPI (mpi_f08): a padded layout, this rank's section seen as a
! 1-based Fortran array, the halo exchange, one Jacobi step, the all-reduce of the residual, and
! the field saved as a Zarr store. u = i^2 + j^2 (C-order global indices) makes every interior
! cell grow by exactly 1, so the residual must equal the number of interior cells.
! Build: mpifort fortran_guide.f90 -I<prefix>/include/gdap/fortran -L<prefix>/lib \
!          -Wl,-rpath,<prefix>/lib -lgdap_fortran -lgdap; run: mpirun -np 4 ./a.out
program fortran_guide
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use gdap
  implicit none
  integer(c_int64_t), parameter :: rows = 12, cols = 10     ! the global shape in C order
  type(gdap_dtype), parameter :: f64 = gdap_dtype(GDAP_DTYPE_FLOAT, 64_c_int8_t, 1_c_int16_t)
  type(gdap_device), parameter :: cpu = gdap_device(GDAP_DEVICE_CPU, 0)
  type(c_ptr) :: comm = c_null_ptr, map = c_null_ptr, field = c_null_ptr, halo = c_null_ptr
  type(c_ptr) :: scalar = c_null_ptr, data
  type(gdap_dim) :: dims(2), whole
  type(gdap_zarr_options) :: zarr             ! defaults as GDAP_ZARR_OPTIONS_INIT
  integer(c_int64_t) :: grid(2), fshape(2), me, local(2), k, saved(2), ndim
  real(c_double), pointer :: u(:, :)          ! u(column, row): the C shape reversed
  real(c_double), allocatable :: next(:, :)
  real(c_double), target :: residual
  integer :: ierr, rank, nranks, i, j, gi, gj

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  me = rank
  ! gdap takes the communicator's integer handle: MPI_COMM_WORLD%MPI_VAL with mpi_f08
  ! (with `use mpi`, MPI_COMM_WORLD itself).
  call ok(gdap_comm_from_mpi(comm, MPI_COMM_WORLD%MPI_VAL))

  ! 1. The padded layout: a grid for nranks, one cell of halo towards each neighbour.
  grid = 0                                     ! 0: free, as MPI_Dims_create
  call ok(gdap_grid_balance(grid, 2_c_int64_t, int(nranks, c_int64_t)))
  call ok(gdap_layout_block(map, [rows, cols], grid, halo=[1_c_int64_t, 1_c_int64_t]))

  ! 2. This rank's section: its dictionaries from the map, gdap allocates, Fortran views it.
  do k = 1, 2
    call ok(gdap_map_dim(dims(k), map, me, k - 1))       ! dimensions count from 0, as in C
  end do
  call ok(gdap_array_create(field, f64, cpu, dims, 2_c_int64_t))
  call ok(gdap_array_data(data, field))
  call ok(gdap_fortran_shape(fshape, field))               ! (columns, rows), padding included
  call c_f_pointer(data, u, fshape)
  ! C local index (i0, j0), 0-based, is u(j0 + 1, i0 + 1); its global index is start + local.
  do i = int(dims(1)%padding(1)), int(fshape(2) - dims(1)%padding(2)) - 1
    do j = int(dims(2)%padding(1)), int(fshape(1) - dims(2)%padding(2)) - 1
      gi = int(dims(1)%start) + i
      gj = int(dims(2)%start) + j
      u(j + 1, i + 1) = real(gi * gi + gj * gj, c_double)
    end do
  end do
  ! 3. The halo exchange fills the padding from the neighbours' owned cells.
  call ok(gdap_halo_create(halo, map, f64, me))
  call ok(gdap_halo_exchange(comm, halo, field))
  ! Index calls answer in C order and from 0: C index (a, b) is Fortran u(b + 1, a + 1).
  if (gdap_array_global_to_local(local, field, [5_c_int64_t, 3_c_int64_t]) == GDAP_SUCCESS) then
    print '(a,i0,a,f5.1,a,i0,a,i0,a)', 'rank ', rank, ' holds global (5, 3) = ', &
      u(local(2) + 1, local(1) + 1), ' in u(', local(2) + 1, ', ', local(1) + 1, ')'
  end if

  ! 4. One Jacobi step on the owned cells inside the global boundary, and this rank's residual.
  allocate(next, source=u)
  residual = 0
  do i = int(dims(1)%padding(1)), int(fshape(2) - dims(1)%padding(2)) - 1
    do j = int(dims(2)%padding(1)), int(fshape(1) - dims(2)%padding(2)) - 1
      gi = int(dims(1)%start) + i
      gj = int(dims(2)%start) + j
      if (gi == 0 .or. gi == rows - 1 .or. gj == 0 .or. gj == cols - 1) cycle
      next(j + 1, i + 1) = (u(j + 1, i) + u(j + 1, i + 2) + u(j, i + 1) + u(j + 2, i + 1)) / 4
      residual = residual + abs(next(j + 1, i + 1) - u(j + 1, i + 1))
    end do
  end do
  u = next

  ! 5. The all-reduce of the residual: a one-element section every rank holds whole ({}).
  call ok(gdap_dim_set_undistributed(whole, 1_c_int64_t))
  call ok(gdap_array_wrap(scalar, c_loc(residual), f64, cpu, dims=[whole], ndim=1_c_int64_t))
  call ok(gdap_allreduce(comm, scalar, GDAP_REDUCE_SUM))
  if (rank == 0) print '(a,i0,a,i0,a,f6.1,a,i0,2a)', 'fortran stencil on ', grid(1), ' x ', grid(2), &
    ' ranks: residual ', residual, ', interior cells ', (rows - 2) * (cols - 2), ': ', &
    merge('ok   ', 'WRONG', residual == (rows - 2) * (cols - 2))

  ! 6. Save the field (owned cells only) as a Zarr v3 store that zarr-python or gdap reads back.
  zarr%overwrite = 1
  call ok(gdap_zarr_save(comm, map, field, 'fortran_guide.zarr'//c_null_char, zarr))
  if (rank == 0) then
    call ok(gdap_zarr_shape_read(saved, ndim, path='fortran_guide.zarr'//c_null_char, capacity=2_c_int64_t))
    print '(a,i0,a,i0)', 'fortran_guide.zarr holds ', saved(1), ' x ', saved(2)
  end if

  call ok(gdap_array_destroy(scalar))
  call ok(gdap_halo_destroy(halo))
  call ok(gdap_array_destroy(field))
  call ok(gdap_map_destroy(map))
  call ok(gdap_comm_destroy(comm))
  call MPI_Finalize(ierr)

contains

  ! Every call returns a status; on failure gdap_error_message() says what was wrong.
  subroutine ok(status)
    integer(c_int), intent(in) :: status
    if (status == GDAP_SUCCESS) return
    print '(a,i0,4a)', 'rank ', rank, ': ', gdap_status_name(status), ': ', gdap_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine ok

end program fortran_guide

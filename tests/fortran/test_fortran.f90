! The Fortran binding, end to end: struct layout, descriptors and their errors, a 2x2 global map
! (block x block-cyclic), a Fortran array shared with gdap without a copy (row/column order),
! a DLPack round trip, and redistribution: plan counts, a group of one rank, and (built with
! OpenMP) a group of two ranks run as two threads. Each call is made in a statement of its own
! before its results are checked: Fortran may evaluate the operands of .and. in any order.
! Prints "fortran binding: N passed, M failed"; exits 1 on a failure.
program test_fortran
  use, intrinsic :: iso_c_binding
  use gdap
  !$ use omp_lib, only: omp_get_thread_num
  implicit none
  integer :: passed = 0, failed = 0
  type(gdap_dtype), parameter :: f64 = gdap_dtype(GDAP_DTYPE_FLOAT, 64_c_int8_t, 1_c_int16_t)

  call struct_layout_matches_c()
  call block_dimension_counts()
  call invalid_dimension_names_dimension_and_key()
  call map_of_block_by_block_cyclic()
  call fortran_array_shared_without_copy()
  call dlpack_round_trip_keeps_the_pointer()
  call plan_counts_block_to_cyclic()
  call plan_refuses_different_global_shapes()
  call group_of_one_redistributes()
  call group_of_one_exchanges_a_periodic_halo()
  call protocol_text_answers()
  call group_of_two_threads_redistributes()
  call mpi_needs_mpi()
  call root_and_replicated_layouts()
  call layout_helpers()
  call layout_helpers_check_lengths()
  call fortran_shape_refusals_say_why()
  call group_of_one_saves_and_loads_zarr()
  call group_of_one_saves_and_loads_dnpy()

  print '(a,i0,a,i0,a)', 'fortran binding: ', passed, ' passed, ', failed, ' failed'
  if (failed > 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(4a)', 'FAIL: ', what, ' | last error: ', gdap_error_message()
    end if
  end subroutine check

  ! Rank r's dictionaries on a 2x2 grid for a 6 x 10 array: rows in blocks of 3,
  ! columns block-cyclic with block_size 2 (grid column 0 holds 6 columns, column 1 holds 4).
  subroutine rank_dims(r, dims)
    integer, intent(in) :: r
    type(gdap_dim), intent(out) :: dims(2)
    integer(c_int64_t) :: gr, gc
    gr = r / 2
    gc = mod(r, 2)
    call check(gdap_dim_set_block(dims(1), 6_c_int64_t, 2_c_int64_t, gr, 3 * gr, 3 * gr + 3) == GDAP_SUCCESS, &
               'set_block')
    call check(gdap_dim_set_cyclic(dims(2), 10_c_int64_t, 2_c_int64_t, gc, 2 * gc, 2_c_int64_t) == GDAP_SUCCESS, &
               'set_cyclic')
  end subroutine rank_dims

  subroutine struct_layout_matches_c()
    type(gdap_dim) :: d
    call check(c_sizeof(d) == 104, 'sizeof(gdap_dim) is 104 bytes as in C')
    call check(d%struct_size == c_sizeof(d), 'default struct_size equals c_sizeof')
    call check(gdap_dim_init(d) == GDAP_SUCCESS, 'gdap_dim_init')
    call check(d%struct_size == 104 .and. d%block_size == 1, 'gdap_dim_init fills GDAP_DIM_INIT')
    call check(gdap_version() == GDAP_VERSION_NUMBER, 'gdap_version is the header''s GDAP_VERSION_NUMBER')
    call check(gdap_protocol_version_check('0.10.0'//c_null_char) == GDAP_SUCCESS, 'protocol 0.10.0 accepted')
    call check(gdap_protocol_version_check('1.0.0'//c_null_char) == GDAP_ERR_VERSION, 'protocol 1.0.0 refused')
    call check(gdap_status_name(GDAP_ERR_PROTOCOL) == 'GDAP_ERR_PROTOCOL', 'status names')
  end subroutine struct_layout_matches_c

  subroutine block_dimension_counts()
    type(gdap_dim) :: d
    integer(c_int64_t) :: n, local, global
    call check(gdap_dim_set_block(d, 18_c_int64_t, 2_c_int64_t, 1_c_int64_t, 8_c_int64_t, 18_c_int64_t) &
               == GDAP_SUCCESS, 'padded block')
    call check(gdap_dim_set_padding(d, 1_c_int64_t, 1_c_int64_t) == GDAP_SUCCESS, 'set_padding')
    call check(gdap_dim_validate(d, 0_c_int64_t, 10_c_int64_t) == GDAP_SUCCESS, 'padded block is valid')
    call check(gdap_dim_owned_count(n, d) == GDAP_SUCCESS, 'gdap_dim_owned_count')
    call check(n == 9, 'owned count leaves out the communication padding, keeps the boundary padding')
    call check(gdap_dim_global_to_local(local, d, 12_c_int64_t) == GDAP_SUCCESS, 'gdap_dim_global_to_local')
    call check(local == 4, 'global 12 -> local 4')
    call check(gdap_dim_local_to_global(global, d, 0_c_int64_t) == GDAP_SUCCESS, 'gdap_dim_local_to_global')
    call check(global == 8, 'local 0 -> global 8')
  end subroutine block_dimension_counts

  subroutine invalid_dimension_names_dimension_and_key()
    type(gdap_dim) :: d
    character(len=:), allocatable :: msg
    integer(c_int64_t) :: n
    integer(c_int) :: status
    call check(gdap_dim_set_block(d, 10_c_int64_t, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, 12_c_int64_t) &
               == GDAP_SUCCESS, 'set_block stores without checking')
    call check(gdap_dim_validate(d, 1_c_int64_t, -1_c_int64_t) == GDAP_ERR_PROTOCOL, 'stop > size is refused')
    msg = gdap_error_message()
    call check(index(msg, 'dimension 1') > 0 .and. index(msg, 'stop') > 0, 'message names dimension and key: '//msg)
    n = -7
    status = gdap_dim_owned_count(n, d)
    call check(status /= GDAP_SUCCESS, 'owned count of an invalid dimension fails')
    call check(n == -7, 'output untouched on failure')
  end subroutine invalid_dimension_names_dimension_and_key

  subroutine map_of_block_by_block_cyclic()
    type(gdap_dim) :: dims(8)
    type(c_ptr) :: map
    integer(c_int64_t) :: rank, total, n, local(2), shape(2), grid(2), global(2), r
    do r = 0, 3
      call rank_dims(int(r), dims(2 * r + 1:2 * r + 2))
    end do
    call check(gdap_map_create(map, 4_c_int64_t, 2_c_int64_t, dims) == GDAP_SUCCESS, 'map of 4 ranks')
    call check(gdap_map_global_shape(shape, map) == GDAP_SUCCESS, 'gdap_map_global_shape')
    call check(all(shape == [6, 10]), 'global shape')
    call check(gdap_map_grid_shape(grid, map) == GDAP_SUCCESS, 'gdap_map_grid_shape')
    call check(all(grid == [2, 2]), 'grid shape')
    total = 0
    do r = 0, 3
      call check(gdap_map_owned_count(n, map, r) == GDAP_SUCCESS, 'owned count')
      total = total + n
    end do
    call check(total == 60, 'owned counts sum to the global size')
    global = [4_c_int64_t, 7_c_int64_t]
    call check(gdap_map_owner(rank, local, map, global) == GDAP_SUCCESS, 'gdap_map_owner of (4, 7)')
    call check(rank == 3 .and. all(local == [1, 3]), 'row block 1, column block 3 -> rank 3, local (1, 3)')
    call check(gdap_map_destroy(map) == GDAP_SUCCESS, 'destroy map')
    dims(3)%start = 1  ! rank 1's row block no longer starts at 0
    call check(gdap_map_create(map, 4_c_int64_t, 2_c_int64_t, dims) == GDAP_ERR_PROTOCOL, 'inconsistent map refused')
    call check(index(gdap_error_message(), 'rank') > 0, 'collective error names a rank')
  end subroutine map_of_block_by_block_cyclic

  ! Rank 3's section (C shape 3 x 4) held in a Fortran array a(4, 3): Fortran index (j, i)
  ! is C index (i-1, j-1). gdap sees the same memory.
  subroutine fortran_array_shared_without_copy()
    real(c_double), target :: a(4, 3)
    real(c_double), pointer :: view(:, :)
    type(gdap_dim) :: dims(2)
    type(c_ptr) :: array, data
    integer(c_int64_t) :: fshape(2), local(2), global(2)
    integer :: i, j
    call rank_dims(3, dims)
    call check(gdap_array_wrap_fortran(array, c_loc(a), f64, dims) == GDAP_SUCCESS, 'wrap a Fortran array')
    do i = 1, 3
      do j = 1, 4
        call check(gdap_array_local_to_global(global, array, [int(i - 1, c_int64_t), int(j - 1, c_int64_t)]) &
                   == GDAP_SUCCESS, 'local_to_global')
        a(j, i) = real(global(1) * 1000 + global(2), c_double)
      end do
    end do
    call check(gdap_array_data(data, array) == GDAP_SUCCESS, 'gdap_array_data')
    call check(c_associated(data, c_loc(a)), 'gdap hands back the Fortran array''s own address')
    call check(gdap_fortran_shape(fshape, array) == GDAP_SUCCESS, 'gdap_fortran_shape')
    call check(all(fshape == [4, 3]), 'Fortran view shape is the C shape reversed')
    call c_f_pointer(data, view, fshape)
    view(2, 1) = -1.0_c_double
    call check(a(2, 1) == -1.0_c_double, 'a write through the view is seen in the array')
    call check(gdap_array_global_to_local(local, array, [4_c_int64_t, 7_c_int64_t]) == GDAP_SUCCESS, &
               'gdap_array_global_to_local')
    call check(all(local == [1, 3]) .and. a(local(2) + 1, local(1) + 1) == 4007.0_c_double, &
               'global (4, 7) is a(4, 2) holding 4007')
    call check(gdap_array_destroy(array) == GDAP_SUCCESS, 'destroy leaves the Fortran array alone')
    call check(a(4, 2) == 4007.0_c_double, 'Fortran array intact after destroy')
  end subroutine fortran_array_shared_without_copy

  subroutine dlpack_round_trip_keeps_the_pointer()
    type(gdap_dim) :: dims(2)
    type(c_ptr) :: array, again, tensor, data1, data2
    type(gdap_dtype), parameter :: f32 = gdap_dtype(GDAP_DTYPE_FLOAT, 32_c_int8_t, 1_c_int16_t)
    call rank_dims(0, dims)
    call check(gdap_array_create(array, f32, gdap_device(GDAP_DEVICE_CPU, 0), dims, 2_c_int64_t) == GDAP_SUCCESS, &
               'create a host section')
    call check(gdap_array_to_dlpack(tensor, array) == GDAP_SUCCESS, 'export to DLPack')
    call check(gdap_array_from_dlpack(again, tensor, dims, 2_c_int64_t) == GDAP_SUCCESS, &
               're-import the DLPack tensor')
    call check(gdap_array_data(data1, array) == GDAP_SUCCESS, 'data pointer of the original')
    call check(gdap_array_data(data2, again) == GDAP_SUCCESS, 'data pointer of the re-import')
    call check(c_associated(data1, data2), 'the round trip copies nothing')
    call check(gdap_array_destroy(array) == GDAP_SUCCESS, 'destroy the original')
    call check(gdap_array_destroy(again) == GDAP_SUCCESS, 'destroy the re-import (memory freed once, now)')
  end subroutine dlpack_round_trip_keeps_the_pointer

  ! Rank r's dictionary for a 10-element vector on 2 ranks: in blocks of 5, or cyclic.
  subroutine halves(r, d)
    integer(c_int64_t), intent(in) :: r
    type(gdap_dim), intent(out) :: d
    call check(gdap_dim_set_block(d, 10_c_int64_t, 2_c_int64_t, r, 5 * r, 5 * r + 5) == GDAP_SUCCESS, 'set_block')
  end subroutine halves

  subroutine alternate(r, d)
    integer(c_int64_t), intent(in) :: r
    type(gdap_dim), intent(out) :: d
    call check(gdap_dim_set_cyclic(d, 10_c_int64_t, 2_c_int64_t, r, r, 1_c_int64_t) == GDAP_SUCCESS, 'set_cyclic')
  end subroutine alternate

  subroutine destroy_maps(from, to)
    type(c_ptr), intent(in) :: from, to
    call check(gdap_map_destroy(from) == GDAP_SUCCESS, 'destroy the source map')
    call check(gdap_map_destroy(to) == GDAP_SUCCESS, 'destroy the destination map')
  end subroutine destroy_maps

  ! Blocks -> cyclic on 2 ranks: rank 0 keeps 0, 2, 4, sends 1, 3 and receives 6, 8.
  subroutine plan_counts_block_to_cyclic()
    type(gdap_dim) :: src(2), dst(2)
    type(c_ptr) :: from, to, plan
    type(gdap_plan_stats) :: st
    integer(c_int64_t) :: r, roles(2)
    do r = 0, 1
      call halves(r, src(r + 1))
      call alternate(r, dst(r + 1))
    end do
    call check(gdap_map_create(from, 2_c_int64_t, 1_c_int64_t, src) == GDAP_SUCCESS, 'map of the blocks')
    call check(gdap_map_create(to, 2_c_int64_t, 1_c_int64_t, dst) == GDAP_SUCCESS, 'map of the cycles')
    call check(gdap_plan_create(plan, from, to, f64, 0_c_int64_t) == GDAP_SUCCESS, 'plan of rank 0')
    call check(c_sizeof(st) == 88 .and. st%struct_size == 88, 'gdap_plan_stats is 88 bytes as in C')
    call check(gdap_plan_stats_get(st, plan) == GDAP_SUCCESS, 'gdap_plan_stats_get')
    call check(st%rank == 0 .and. st%nranks == 2, 'stats name the rank and the group size')
    call check(st%send_messages == 1 .and. st%recv_messages == 1, 'one message each way')
    call check(st%send_bytes == 16 .and. st%recv_bytes == 16 .and. st%local_bytes == 24, &
               'sends 1 and 3, receives 6 and 8, keeps 0, 2 and 4 (8 bytes each)')
    call check(st%local_runs == 3, 'kept elements are 3 runs (strided in the source)')
    call check(gdap_plan_destroy(plan) == GDAP_SUCCESS, 'destroy the plan')
    ! Each rank keeps 3 of its 5 elements as its own role and 2 as the other's: the keeping roles are
    ! the identity; swapped roles keep 2.
    roles = -1
    call check(gdap_plan_roles_keeping(roles, 2_c_int64_t, from, to) == GDAP_SUCCESS, 'gdap_plan_roles_keeping')
    call check(all(roles == [0_c_int64_t, 1_c_int64_t]), 'the keeping roles are the identity')
    roles = [1_c_int64_t, 0_c_int64_t]
    call check(gdap_plan_create_with_roles(plan, from, to, f64, 0_c_int64_t, roles, 2_c_int64_t) == GDAP_SUCCESS, &
               'plan with swapped roles')
    call check(gdap_plan_stats_get(st, plan) == GDAP_SUCCESS, 'stats of the swapped plan')
    call check(st%local_bytes == 16 .and. st%send_bytes == 24, 'swapped: keeps 1 and 3, sends 0, 2 and 4')
    call check(gdap_plan_destroy(plan) == GDAP_SUCCESS, 'destroy the swapped plan')
    call destroy_maps(from, to)
  end subroutine plan_counts_block_to_cyclic

  subroutine plan_refuses_different_global_shapes()
    type(gdap_dim) :: a(1), b(1)
    type(c_ptr) :: from, to, plan
    call check(gdap_dim_set_block(a(1), 10_c_int64_t, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, 10_c_int64_t) &
               == GDAP_SUCCESS, 'set_block 10')
    call check(gdap_dim_set_block(b(1), 12_c_int64_t, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, 12_c_int64_t) &
               == GDAP_SUCCESS, 'set_block 12')
    call check(gdap_map_create(from, 1_c_int64_t, 1_c_int64_t, a) == GDAP_SUCCESS, 'map of 10')
    call check(gdap_map_create(to, 1_c_int64_t, 1_c_int64_t, b) == GDAP_SUCCESS, 'map of 12')
    plan = c_null_ptr
    call check(gdap_plan_create(plan, from, to, f64, 0_c_int64_t) == GDAP_ERR_INVALID_ARGUMENT, &
               'sizes 10 and 12 cannot be redistributed')
    call check(index(gdap_error_message(), 'global shape') > 0, 'the message says why: '//gdap_error_message())
    call check(.not. c_associated(plan), 'no plan on failure')
    call destroy_maps(from, to)
  end subroutine plan_refuses_different_global_shapes

  ! A group of one rank: both maps built collectively, a Fortran array a(6, 4) (C shape 4 x 6, in
  ! blocks) moved to b(6, 4) (cyclic with blocks of 2 on a grid of one: the same elements).
  subroutine group_of_one_redistributes()
    type(c_ptr) :: comms(1), from, to, plan, src, dst
    type(gdap_dim) :: sdims(2), ddims(2)
    type(gdap_plan_stats) :: st
    integer(c_int64_t) :: rank, size, i
    integer(c_int64_t), parameter :: extent(2) = [4, 6]  ! C order: a(6, 4) is 4 x 6
    integer(c_int) :: kind
    real(c_double), target :: a(6, 4), b(6, 4)
    type(gdap_dtype), parameter :: f32 = gdap_dtype(GDAP_DTYPE_FLOAT, 32_c_int8_t, 1_c_int16_t)
    call check(gdap_comm_create_group(comms, 1_c_int64_t) == GDAP_SUCCESS, 'group of one rank')
    call check(gdap_comm_rank(rank, comms(1)) == GDAP_SUCCESS, 'gdap_comm_rank')
    call check(gdap_comm_size(size, comms(1)) == GDAP_SUCCESS, 'gdap_comm_size')
    call check(rank == 0 .and. size == 1, 'rank 0 of 1')
    call check(gdap_comm_kind_get(kind, comms(1)) == GDAP_SUCCESS, 'gdap_comm_kind_get')
    call check(kind == GDAP_COMM_GROUP, 'an in-process group')
    call check(gdap_comm_set_timeout(comms(1), 30.0_c_double) == GDAP_SUCCESS, 'set the timeout')
    call check(gdap_comm_set_interrupt(comms(1), c_funloc(never_interrupt), c_null_ptr) == GDAP_SUCCESS, &
               'set an interrupt check')
    call check(gdap_comm_barrier(comms(1)) == GDAP_SUCCESS, 'barrier of one')
    call check(gdap_comm_set_interrupt(comms(1), c_null_funptr, c_null_ptr) == GDAP_SUCCESS, 'clear it')
    call check(gdap_comm_set_interrupt(c_null_ptr, c_funloc(never_interrupt), c_null_ptr) == &
               GDAP_ERR_INVALID_ARGUMENT, 'an interrupt check on a NULL comm is refused')
    do i = 1, 2
      call check(gdap_dim_set_block(sdims(i), extent(i), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, extent(i)) &
                 == GDAP_SUCCESS, 'block dictionary')
      call check(gdap_dim_set_cyclic(ddims(i), extent(i), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, 2_c_int64_t) &
                 == GDAP_SUCCESS, 'cyclic dictionary')
    end do
    call check(gdap_map_create_collective(from, comms(1), 2_c_int64_t, sdims) == GDAP_SUCCESS, 'collective source map')
    call check(gdap_map_create_collective(to, comms(1), 2_c_int64_t, ddims) == GDAP_SUCCESS, 'collective destination map')
    call check(gdap_plan_create(plan, from, to, f64, rank) == GDAP_SUCCESS, 'plan of rank 0')
    call check(gdap_plan_stats_get(st, plan) == GDAP_SUCCESS, 'stats of a group of one')
    call check(st%send_messages == 0 .and. st%recv_messages == 0 .and. st%local_bytes == 24 * 8, &
               'one rank copies everything within itself')
    a = reshape([(real(i, c_double), i = 1, 24)], [6, 4])
    b = -1
    call check(gdap_array_wrap_fortran(src, c_loc(a), f64, sdims) == GDAP_SUCCESS, 'wrap the source')
    call check(gdap_array_wrap_fortran(dst, c_loc(b), f64, ddims) == GDAP_SUCCESS, 'wrap the destination')
    call check(gdap_redistribute(comms(1), plan, src, dst) == GDAP_SUCCESS, 'gdap_redistribute')
    call check(all(b == a), 'every element arrived where it belongs')
    call check(gdap_array_destroy(dst) == GDAP_SUCCESS, 'destroy the destination')
    b = -1
    call check(gdap_array_wrap_fortran(dst, c_loc(b), f32, ddims) == GDAP_SUCCESS, 'wrap it as float32')
    call check(gdap_redistribute(comms(1), plan, src, dst) == GDAP_ERR_INVALID_ARGUMENT, 'a dtype not the plan''s')
    call check(index(gdap_error_message(), 'dtype') > 0 .and. all(b == -1), 'refused before moving: ' &
               //gdap_error_message())
    call check(gdap_array_destroy(src) == GDAP_SUCCESS, 'destroy the source')
    call check(gdap_array_destroy(dst) == GDAP_SUCCESS, 'destroy the destination')
    call check(gdap_plan_destroy(plan) == GDAP_SUCCESS, 'destroy the plan')
    call destroy_maps(from, to)
    call check(gdap_comm_destroy(comms(1)) == GDAP_SUCCESS, 'destroy the communicator')
  end subroutine group_of_one_redistributes

  ! An interrupt check (gdap_comm_set_interrupt) that never stops a wait.
  integer(c_int) function never_interrupt(user) bind(C)
    type(c_ptr), value :: user
    never_interrupt = 0
    if (c_associated(user)) never_interrupt = 1
  end function

  ! A periodic dimension of one grid rank wraps onto itself: boundary padding (1, 1) around 6
  ! interior values (size 8, start 0, as DAP 0.10 writes it), each filled from the far end.
  subroutine group_of_one_exchanges_a_periodic_halo()
    type(c_ptr) :: comms(1), map, halo, arr
    type(gdap_dim) :: dims(1)
    type(gdap_halo_options) :: options
    type(gdap_halo_stats) :: st
    real(c_double), target :: a(8)
    integer :: i
    call check(gdap_comm_create_group(comms, 1_c_int64_t) == GDAP_SUCCESS, 'group of one rank (halo)')
    call check(gdap_dim_set_block(dims(1), 8_c_int64_t, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, 8_c_int64_t) &
               == GDAP_SUCCESS, 'periodic block dictionary')
    call check(gdap_dim_set_padding(dims(1), 1_c_int64_t, 1_c_int64_t) == GDAP_SUCCESS, 'padding (1, 1)')
    call check(gdap_dim_set_periodic(dims(1), 1) == GDAP_SUCCESS, 'periodic')
    call check(gdap_map_create_collective(map, comms(1), 1_c_int64_t, dims) == GDAP_SUCCESS, 'map of one rank')
    call check(gdap_halo_create(halo, map, f64, 0_c_int64_t, options) == GDAP_SUCCESS, 'gdap_halo_create')
    call check(gdap_halo_stats_get(st, halo) == GDAP_SUCCESS, 'gdap_halo_stats_get')
    call check(st%send_messages == 0 .and. st%local_bytes == 16, 'two cells copied onto itself')
    a = [-1.0_c_double, (real(i, c_double), i = 1, 6), -1.0_c_double]
    call check(gdap_array_wrap_fortran(arr, c_loc(a), f64, dims) == GDAP_SUCCESS, 'wrap the section')
    call check(gdap_halo_exchange(comms(1), halo, arr) == GDAP_SUCCESS, 'gdap_halo_exchange')
    call check(a(1) == 6 .and. a(8) == 1 .and. all(a(2:7) == [(real(i, c_double), i = 1, 6)]), &
               'the boundary padding holds the far end, interior values untouched')
    call check(gdap_array_destroy(arr) == GDAP_SUCCESS, 'destroy the section')
    call check(gdap_halo_destroy(halo) == GDAP_SUCCESS, 'gdap_halo_destroy')
    call check(gdap_map_destroy(map) == GDAP_SUCCESS, 'destroy the map')
    call check(gdap_comm_destroy(comms(1)) == GDAP_SUCCESS, 'destroy the communicator')
  end subroutine group_of_one_exchanges_a_periodic_halo

  ! DAP 0.10 read to the letter: the cases of tests/python/test_protocol_text.py and tests/protocol,
  ! with the statuses and messages C and Python give for them.
  subroutine protocol_text_answers()
    type(gdap_dim) :: d, two(2)
    type(c_ptr) :: map
    integer(c_int64_t) :: n, local
    integer(c_int64_t), target :: low(2) = [-1_c_int64_t, 0_c_int64_t], high(1) = [2_c_int64_t]
    integer(c_int) :: status
    integer(c_int64_t), parameter :: big = huge(0_c_int64_t)
    ! 1. periodic, padded, one rank: valid, all 10 cells owned; the wrap as start = -1 is refused
    status = gdap_dim_set_block(d, 10_c_int64_t, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, 10_c_int64_t)
    status = gdap_dim_set_padding(d, 2_c_int64_t, 2_c_int64_t)
    status = gdap_dim_set_periodic(d, 1)
    call check(gdap_dim_validate(d, 0_c_int64_t, 10_c_int64_t) == GDAP_SUCCESS, 'periodic padded single rank is valid')
    status = gdap_dim_owned_count(n, d)
    call check(n == 10, 'its boundary padding is owned')
    status = gdap_dim_set_block(d, 10_c_int64_t, 2_c_int64_t, 0_c_int64_t, -1_c_int64_t, 6_c_int64_t)
    status = gdap_dim_set_padding(d, 1_c_int64_t, 1_c_int64_t)
    status = gdap_dim_set_periodic(d, 1)
    call check(gdap_dim_validate(d, 0_c_int64_t, 7_c_int64_t) == GDAP_ERR_PROTOCOL, 'a periodic start -1 is refused')
    call check(index(gdap_error_message(), "dimension 0 ('b'): start (-1) < 0 (periodic too") == 1, &
               'the message says how periodic padding reads')
    ! 2. and 3. padding on one rank only: boundary padding there, none on its neighbour
    status = gdap_dim_set_block(two(1), 10_c_int64_t, 2_c_int64_t, 0_c_int64_t, 0_c_int64_t, 5_c_int64_t)
    status = gdap_dim_set_padding(two(1), 1_c_int64_t, 0_c_int64_t)
    status = gdap_dim_set_block(two(2), 10_c_int64_t, 2_c_int64_t, 1_c_int64_t, 5_c_int64_t, 10_c_int64_t)
    call check(gdap_map_create(map, 2_c_int64_t, 1_c_int64_t, two) == GDAP_SUCCESS, 'padding given on one rank only')
    status = gdap_map_destroy(map)
    ! 4. version 0.9 is refused, naming what it reads otherwise
    call check(gdap_protocol_version_check('0.9.0'//c_null_char) == GDAP_ERR_VERSION, 'protocol 0.9.0 refused')
    call check(index(gdap_error_message(), "dist_type 'n'") > 0, 'the message names the dist_type n of 0.9')
    ! 5. exact look-ups near the int64 limits
    status = gdap_dim_set_block(d, big, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, big)
    status = gdap_dim_set_periodic(d, 1)
    local = -7
    call check(gdap_dim_global_to_local(local, d, -big) == GDAP_ERR_NOT_FOUND, 'global -(2^63 - 1) is not held')
    call check(local == -7, 'output untouched')
    ! 6. the rank and dimension that disagree on the grid are named
    status = gdap_dim_set_block(two(1), 10_c_int64_t, 3_c_int64_t, 0_c_int64_t, 0_c_int64_t, 5_c_int64_t)
    status = gdap_dim_set_block(two(2), 10_c_int64_t, 2_c_int64_t, 1_c_int64_t, 5_c_int64_t, 10_c_int64_t)
    call check(gdap_map_create(map, 2_c_int64_t, 1_c_int64_t, two) == GDAP_ERR_PROTOCOL, 'a grid of 3 for 2 ranks')
    call check(gdap_error_message() == "rank 1, dimension 0 ('b'): proc_grid_size (2) != rank 0's (3)", &
               'the message names rank, dimension and key')
    ! 8. one_to_one indices outside [0, size) are refused
    status = gdap_dim_init(two(1))
    status = gdap_dim_init(two(2))
    status = gdap_dim_set_unstructured(two(1), 3_c_int64_t, 2_c_int64_t, 0_c_int64_t, c_loc(low), 2_c_int64_t, 1)
    status = gdap_dim_set_unstructured(two(2), 3_c_int64_t, 2_c_int64_t, 1_c_int64_t, c_loc(high), 1_c_int64_t, 1)
    call check(gdap_map_create(map, 2_c_int64_t, 1_c_int64_t, two) == GDAP_ERR_PROTOCOL, 'index -1 of size 3 refused')
    call check(index(gdap_error_message(), "rank 0, dimension 0 ('u'): indices[0] (-1) is outside [0, size (3))") == 1, &
               'the message names rank, dimension, key and value')
  end subroutine protocol_text_answers

  ! One undistributed block dictionary per dimension (a group of one rank holds everything).
  subroutine whole_blocks(dims, extent)
    type(gdap_dim), intent(inout) :: dims(:)
    integer(c_int64_t), intent(in) :: extent(:)
    integer :: i
    do i = 1, size(dims)
      call check(gdap_dim_set_block(dims(i), extent(i), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, extent(i)) &
                 == GDAP_SUCCESS, 'block dictionary')
    end do
  end subroutine whole_blocks

  ! A Fortran array a(6, 4) (C order 4 x 6) saved as a Zarr store and loaded into another array.
  subroutine group_of_one_saves_and_loads_zarr()
    type(c_ptr) :: comms(1), map, src, dst
    type(gdap_dim) :: dims(2)
    type(gdap_zarr_options) :: options
    type(gdap_dtype) :: dtype
    integer(c_int64_t) :: ndim, shape(4), i
    integer(c_int64_t), parameter :: extent(2) = [4, 6]
    real(c_double), target :: a(6, 4), b(6, 4)
    character(len=*), parameter :: path = 'fortran_test.zarr'
    call check(gdap_comm_create_group(comms, 1_c_int64_t) == GDAP_SUCCESS, 'group of one rank (zarr)')
    call whole_blocks(dims, extent)
    call check(gdap_map_create_collective(map, comms(1), 2_c_int64_t, dims) == GDAP_SUCCESS, 'map (zarr)')
    a = reshape([(real(i, c_double), i = 1, 24)], [6, 4])
    b = -1
    call check(gdap_array_wrap_fortran(src, c_loc(a), f64, dims) == GDAP_SUCCESS, 'wrap the source (zarr)')
    call check(gdap_array_wrap_fortran(dst, c_loc(b), f64, dims) == GDAP_SUCCESS, 'wrap the destination (zarr)')
    options%overwrite = 1
    call check(gdap_zarr_save(comms(1), map, src, path//c_null_char, options) == GDAP_SUCCESS, &
               'gdap_zarr_save: '//gdap_error_message())
    call check(gdap_zarr_shape_read(shape, ndim, dtype, path//c_null_char, 4_c_int64_t) == GDAP_SUCCESS, &
               'gdap_zarr_shape_read')
    call check(ndim == 2 .and. shape(1) == 4 .and. shape(2) == 6 .and. dtype%bits == 64, 'the store is 4 x 6 float64')
    call check(gdap_zarr_load(comms(1), map, dst, path//c_null_char) == GDAP_SUCCESS, 'gdap_zarr_load')
    call check(all(b == a), 'every element came back')
    options%codec = GDAP_ZARR_BLOSC_LZ4
    options%shuffle = GDAP_ZARR_BITSHUFFLE
    options%chunk_bytes = 48
    b = -1
    call check(gdap_zarr_save(comms(1), map, src, path//c_null_char, options) == GDAP_SUCCESS, &
               'gdap_zarr_save, blosc shards of 48-byte inner chunks: '//gdap_error_message())
    call check(gdap_zarr_load(comms(1), map, dst, path//c_null_char) == GDAP_SUCCESS, 'gdap_zarr_load (blosc shards)')
    call check(all(b == a), 'every element came back through blosc shards')
    options%layout = GDAP_ZARR_CHUNKS
    options%codec = 9
    call check(gdap_zarr_save(comms(1), map, src, path//c_null_char, options) == GDAP_ERR_INVALID_ARGUMENT, &
               'an unknown codec is refused')
    call check(gdap_zarr_load(comms(1), map, dst, 'no_such.zarr'//c_null_char) == GDAP_ERR_IO, 'a missing store')
    call check(index(gdap_error_message(), 'no_such.zarr/zarr.json') > 0, 'the error names the file')
    call check(gdap_array_destroy(src) == GDAP_SUCCESS, 'destroy the source (zarr)')
    call check(gdap_array_destroy(dst) == GDAP_SUCCESS, 'destroy the destination (zarr)')
    call check(gdap_map_destroy(map) == GDAP_SUCCESS, 'destroy the map (zarr)')
    call check(gdap_comm_destroy(comms(1)) == GDAP_SUCCESS, 'destroy the communicator (zarr)')
  end subroutine group_of_one_saves_and_loads_zarr

  ! A Fortran array a(6, 4) (C order 4 x 6) saved as DistArray's .dnpy and loaded into a new section.
  subroutine group_of_one_saves_and_loads_dnpy()
    type(c_ptr) :: comms(1), src, dst, data
    type(gdap_dim) :: dims(2)
    integer(c_int64_t) :: i
    integer(c_int64_t), parameter :: extent(2) = [4, 6]
    real(c_double), target :: a(6, 4)
    real(c_double), pointer :: b(:, :)
    character(len=*), parameter :: prefix = 'fortran_test'
    call check(gdap_comm_create_group(comms, 1_c_int64_t) == GDAP_SUCCESS, 'group of one rank (dnpy)')
    call whole_blocks(dims, extent)
    a = reshape([(real(i, c_double), i = 1, 24)], [6, 4])
    call check(gdap_array_wrap_fortran(src, c_loc(a), f64, dims) == GDAP_SUCCESS, 'wrap the source (dnpy)')
    call check(gdap_dnpy_save(comms(1), src, prefix//c_null_char) == GDAP_SUCCESS, 'gdap_dnpy_save: '//gdap_error_message())
    dst = c_null_ptr
    call check(gdap_dnpy_load(dst, comms(1), prefix//c_null_char, gdap_device(GDAP_DEVICE_CPU, 0)) == GDAP_SUCCESS, &
               'gdap_dnpy_load: '//gdap_error_message())
    call check(gdap_array_data(data, dst) == GDAP_SUCCESS, 'data of the loaded section')
    call c_f_pointer(data, b, [6, 4])
    call check(all(b == a), 'every element came back (dnpy)')
    call check(gdap_array_destroy(dst) == GDAP_SUCCESS, 'destroy the loaded section (dnpy)')
    call check(gdap_dnpy_load(dst, comms(1), 'no_such'//c_null_char, gdap_device(GDAP_DEVICE_CPU, 0)) == GDAP_ERR_IO, &
               'a missing .dnpy file')
    call check(index(gdap_error_message(), 'no_such_0.dnpy') > 0, 'the error names the file (dnpy)')
    call check(gdap_array_destroy(src) == GDAP_SUCCESS, 'destroy the source (dnpy)')
    call check(gdap_comm_destroy(comms(1)) == GDAP_SUCCESS, 'destroy the communicator (dnpy)')
  end subroutine group_of_one_saves_and_loads_dnpy

  ! Two ranks as two OpenMP threads, each with its own communicator: blocks -> cyclic. Without
  ! OpenMP there is one thread, which would wait for its peer until the timeout: skipped.
  subroutine group_of_two_threads_redistributes()
    type(c_ptr) :: comms(2)
    logical :: threads, ok(2)
    integer :: t
    threads = .false.
    !$ threads = .true.
    if (.not. threads) then
      print '(a)', 'note: built without OpenMP, the two-rank group is skipped'
      return
    end if
    call check(gdap_comm_create_group(comms, 2_c_int64_t) == GDAP_SUCCESS, 'group of two ranks')
    ok = .false.
    t = 0
    !$omp parallel num_threads(2) private(t)
    !$ t = omp_get_thread_num() + 1
    call two_rank_body(comms(t), int(t - 1, c_int64_t), ok(t))
    !$omp end parallel
    call check(ok(1), 'rank 0 received its cyclic elements')
    call check(ok(2), 'rank 1 received its cyclic elements')
    call check(gdap_comm_destroy(comms(1)) == GDAP_SUCCESS, 'destroy rank 0''s communicator')
    call check(gdap_comm_destroy(comms(2)) == GDAP_SUCCESS, 'destroy rank 1''s communicator')
  end subroutine group_of_two_threads_redistributes

  ! ok = ok .and. done, with `done` (a call's outcome) evaluated whatever ok is.
  subroutine step(done, ok)
    logical, intent(in) :: done
    logical, intent(inout) :: ok
    ok = ok .and. done
  end subroutine step

  ! One rank's part, on its own thread; `ok` says whether every call and every element was right.
  ! It calls no check(): the pass and fail counters are not shared between threads. Every
  ! collective call is made whatever failed before it, so the peer is never left waiting.
  subroutine two_rank_body(comm, rank, ok)
    type(c_ptr), intent(in) :: comm
    integer(c_int64_t), intent(in) :: rank
    logical, intent(out) :: ok
    type(gdap_dim) :: sdim(1), ddim(1)
    type(c_ptr) :: from, to, plan, src, dst, whole
    real(c_double), target :: a(5), b(5), total
    integer :: k
    whole = c_null_ptr
    from = c_null_ptr
    to = c_null_ptr
    plan = c_null_ptr
    src = c_null_ptr
    dst = c_null_ptr
    ok = .true.
    call step(gdap_comm_set_timeout(comm, 30.0_c_double) == GDAP_SUCCESS, ok)
    call step(gdap_dim_set_block(sdim(1), 10_c_int64_t, 2_c_int64_t, rank, 5 * rank, 5 * rank + 5) == GDAP_SUCCESS, ok)
    call step(gdap_dim_set_cyclic(ddim(1), 10_c_int64_t, 2_c_int64_t, rank, rank, 1_c_int64_t) == GDAP_SUCCESS, ok)
    call step(gdap_map_create_collective(from, comm, 1_c_int64_t, sdim) == GDAP_SUCCESS, ok)
    call step(gdap_map_create_collective(to, comm, 1_c_int64_t, ddim) == GDAP_SUCCESS, ok)
    call step(gdap_plan_create(plan, from, to, f64, rank) == GDAP_SUCCESS, ok)
    a = [(real(5 * rank + k - 1, c_double), k = 1, 5)]  ! the global index of each element
    b = -1
    call step(gdap_array_wrap_fortran(src, c_loc(a), f64, sdim) == GDAP_SUCCESS, ok)
    call step(gdap_array_wrap_fortran(dst, c_loc(b), f64, ddim) == GDAP_SUCCESS, ok)
    call step(gdap_redistribute(comm, plan, src, dst) == GDAP_SUCCESS, ok)
    call step(all(b == [(real(rank + 2 * (k - 1), c_double), k = 1, 5)]), ok)
    ! The two ranks' sources summed element-wise, in place: [0..4] + [5..9] on both ranks.
    call step(gdap_allreduce(comm, src, GDAP_REDUCE_SUM) == GDAP_SUCCESS, ok)
    call step(all(a == [(real(5 + 2 * (k - 1), c_double), k = 1, 5)]), ok)
    ! Now the global array is [5, 7, ..., 13, 5, 7, ..., 13]: its sum over every axis into a 0-d
    ! result on both ranks, then a reduce-scatter of the block source into the cyclic section.
    total = -1
    call step(gdap_array_wrap(whole, c_loc(total), f64, gdap_device(GDAP_DEVICE_CPU, 0), dims=ddim, &
                              ndim=0_c_int64_t) == GDAP_SUCCESS, ok)
    call step(gdap_reduce_axes(comm, src, whole, GDAP_REDUCE_SUM, naxes=0_c_int64_t) == GDAP_SUCCESS, ok)
    call step(total == 90, ok)
    call step(gdap_reduce_axes(comm, src, whole, GDAP_REDUCE_MAX, [0_c_int64_t], 1_c_int64_t) == GDAP_SUCCESS, ok)
    call step(total == 13, ok)
    call step(gdap_reduce_scatter(comm, src, dst, GDAP_REDUCE_SUM) == GDAP_SUCCESS, ok)
    call step(all(b == [(real(5 + 2 * mod(rank + 2 * (k - 1), 5_c_int64_t), c_double), k = 1, 5)]), ok)
    call step(gdap_array_destroy(whole) == GDAP_SUCCESS, ok)
    call step(gdap_array_destroy(src) == GDAP_SUCCESS, ok)
    call step(gdap_array_destroy(dst) == GDAP_SUCCESS, ok)
    call step(gdap_plan_destroy(plan) == GDAP_SUCCESS, ok)
    call step(gdap_map_destroy(from) == GDAP_SUCCESS, ok)
    call step(gdap_map_destroy(to) == GDAP_SUCCESS, ok)
  end subroutine two_rank_body

  ! gdap_comm_from_mpi takes the communicator's Fortran INTEGER handle. MPI is not initialised
  ! here (or gdap has no MPI), and gdap says so instead of calling into MPI.
  subroutine mpi_needs_mpi()
    type(c_ptr) :: comm
    integer(c_int) :: status
    comm = c_null_ptr
    status = gdap_comm_from_mpi(comm, 0_c_int)
    call check(status == GDAP_ERR_COMM .or. status == GDAP_ERR_UNSUPPORTED, 'no MPI communicator without MPI: ' &
               //gdap_status_name(status))
    call check(.not. c_associated(comm), 'nothing made')
  end subroutine mpi_needs_mpi

  ! gdap_map_create_root and gdap_map_create_replicated: who holds what (C order shapes).
  subroutine root_and_replicated_layouts()
    type(c_ptr) :: root, replicated
    integer(c_int64_t) :: shape(2), r
    call check(gdap_map_create_root(root, 3_c_int64_t, 2_c_int64_t, [7_c_int64_t, 5_c_int64_t], 2_c_int64_t) &
               == GDAP_SUCCESS, 'gdap_map_create_root')
    call check(gdap_map_create_replicated(replicated, 3_c_int64_t, 2_c_int64_t, [7_c_int64_t, 5_c_int64_t]) &
               == GDAP_SUCCESS, 'gdap_map_create_replicated')
    do r = 0, 2
      call check(gdap_map_local_shape(shape, root, r) == GDAP_SUCCESS, 'root layout local shape')
      call check(all(shape == merge([7, 5], [0, 5], r == 2)), 'only the root holds rows')
      call check(gdap_map_local_shape(shape, replicated, r) == GDAP_SUCCESS, 'replicated local shape')
      call check(all(shape == [7, 5]), 'every rank holds the whole array')
    end do
    call check(gdap_map_create_root(root, 3_c_int64_t, 2_c_int64_t, [7_c_int64_t, 5_c_int64_t], 3_c_int64_t) &
               == GDAP_ERR_OUT_OF_RANGE, 'a root outside the group is refused')
    call destroy_maps(root, replicated)
  end subroutine root_and_replicated_layouts

  ! The layout helpers: gdap_layout_block / gdap_layout_cyclic (gdap_map_create_grid), irregular
  ! blocks through gdap_axis_layout%lengths, gdap_map_create_unstructured and gdap_grid_balance.
  subroutine layout_helpers()
    type(c_ptr) :: map
    type(gdap_axis_layout) :: axes(2)
    type(gdap_dim) :: d
    integer(c_int64_t), target :: lengths(3)
    integer(c_int64_t) :: shape(2), grid(2), n
    call check(c_sizeof(axes(1)) == 56 .and. axes(1)%struct_size == 56, 'gdap_axis_layout is 56 bytes as in C')
    grid = [0_c_int64_t, 0_c_int64_t]
    call check(gdap_grid_balance(grid, 2_c_int64_t, 12_c_int64_t) == GDAP_SUCCESS, 'gdap_grid_balance')
    call check(all(grid == [4, 3]), 'balance: 12 ranks over two free axes are 4 x 3')
    call check(gdap_layout_block(map, [10_c_int64_t, 6_c_int64_t], [4_c_int64_t, 1_c_int64_t]) == GDAP_SUCCESS, &
               'gdap_layout_block')
    call check(gdap_map_local_shape(shape, map, 3_c_int64_t) == GDAP_SUCCESS, 'block local shape')
    call check(all(shape == [1, 6]), 'even blocks: 10 rows over 4 ranks leave the last 1 row')
    call check(gdap_map_destroy(map) == GDAP_SUCCESS, 'destroy block map')
    call check(gdap_layout_block(map, [12_c_int64_t, 4_c_int64_t], [3_c_int64_t, 1_c_int64_t], &
                                 halo=[2_c_int64_t, 0_c_int64_t]) == GDAP_SUCCESS, 'gdap_layout_block with a halo')
    call check(gdap_map_dim(d, map, 1_c_int64_t, 0_c_int64_t) == GDAP_SUCCESS, 'padded dim')
    call check(d%start == 2 .and. d%stop == 10 .and. all(d%padding == [2, 2]), 'a halo pads towards both neighbours')
    call check(gdap_map_destroy(map) == GDAP_SUCCESS, 'destroy padded map')
    call check(gdap_layout_cyclic(map, [10_c_int64_t, 6_c_int64_t], [2_c_int64_t, 1_c_int64_t], &
                                  block_size=[3_c_int64_t, 1_c_int64_t]) == GDAP_SUCCESS, 'gdap_layout_cyclic')
    call check(gdap_map_dim(d, map, 1_c_int64_t, 0_c_int64_t) == GDAP_SUCCESS, 'cyclic dim')
    call check(d%dist_type == GDAP_DIST_CYCLIC .and. d%start == 3 .and. d%block_size == 3, 'block-cyclic of 3')
    call check(gdap_map_destroy(map) == GDAP_SUCCESS, 'destroy cyclic map')
    lengths = [2_c_int64_t, 7_c_int64_t, 1_c_int64_t]
    axes(1)%size = 10
    axes(1)%grid_size = 3
    axes(1)%lengths = c_loc(lengths)
    axes(2)%size = 4
    call check(gdap_map_create_grid(map, 2_c_int64_t, axes) == GDAP_SUCCESS, 'irregular blocks')
    call check(gdap_map_owned_count(n, map, 1_c_int64_t) == GDAP_SUCCESS, 'irregular owned count')
    call check(n == 28, 'irregular blocks: rank 1 owns 7 x 4')
    call check(gdap_map_destroy(map) == GDAP_SUCCESS, 'destroy irregular map')
    lengths = [2_c_int64_t, 7_c_int64_t, 2_c_int64_t]
    call check(gdap_map_create_grid(map, 2_c_int64_t, axes) == GDAP_ERR_INVALID_ARGUMENT, &
               'lengths that do not sum to size are refused')
    call check(index(gdap_error_message(), 'sum to 11, not to size 10') > 0, 'the message names the sum')
    call check(gdap_map_create_unstructured(map, 2_c_int64_t, 1_c_int64_t, [4_c_int64_t], [1_c_int64_t, 3_c_int64_t], &
                                            [2_c_int64_t, 0_c_int64_t, 1_c_int64_t, 3_c_int64_t], 4_c_int64_t, &
                                            1_c_int) == GDAP_SUCCESS, 'gdap_map_create_unstructured')
    call check(gdap_map_local_shape(shape(1:1), map, 1_c_int64_t) == GDAP_SUCCESS, 'unstructured local shape')
    call check(shape(1) == 3, 'unstructured: rank 1 holds three rows')
    call check(gdap_map_destroy(map) == GDAP_SUCCESS, 'destroy unstructured map')
  end subroutine layout_helpers

  ! halo, periodic, block_size and grid must hold one entry per dimension of shape: a shorter array
  ! was read past its end, a longer one written past the helper's own stack array (hunt 12, item 6).
  ! Each refusal names the helper, the argument and both lengths (item 12).
  subroutine layout_helpers_check_lengths()
    type(c_ptr) :: map
    integer(c_int64_t) :: long_halo(64), three(3)
    integer(c_int) :: s
    character(len=:), allocatable :: msg
    three = [8_c_int64_t, 8_c_int64_t, 8_c_int64_t]
    long_halo = 1
    s = gdap_layout_block(map, [8_c_int64_t], [2_c_int64_t], halo=long_halo)
    msg = gdap_error_message()
    call check(s == GDAP_ERR_INVALID_ARGUMENT, 'a halo of 64 entries for 1 dimension is refused')
    call check(index(msg, 'gdap_layout_block: halo has 64 entries but shape has 1 dimensions') > 0, &
               'the message names halo and both lengths: '//msg)
    s = gdap_layout_block(map, three, [2_c_int64_t, 2_c_int64_t, 1_c_int64_t], halo=[1_c_int64_t])
    call check(s == GDAP_ERR_INVALID_ARGUMENT, 'a halo of 1 entry for 3 dimensions is refused')
    s = gdap_layout_block(map, three, [2_c_int64_t, 2_c_int64_t, 1_c_int64_t], periodic=[1_c_int32_t, 0_c_int32_t])
    msg = gdap_error_message()
    call check(s == GDAP_ERR_INVALID_ARGUMENT .and. index(msg, 'periodic has 2 entries but shape has 3') > 0, &
               'periodic of 2 entries for 3 dimensions is refused: '//msg)
    s = gdap_layout_cyclic(map, three, [2_c_int64_t, 2_c_int64_t, 1_c_int64_t], block_size=[3_c_int64_t])
    msg = gdap_error_message()
    call check(s == GDAP_ERR_INVALID_ARGUMENT .and. &
               index(msg, 'gdap_layout_cyclic: block_size has 1 entries but shape has 3') > 0, &
               'block_size of 1 entry for 3 dimensions is refused: '//msg)
    s = gdap_layout_cyclic(map, three, [2_c_int64_t, 2_c_int64_t, 1_c_int64_t], block_size=long_halo)
    call check(s == GDAP_ERR_INVALID_ARGUMENT, 'block_size of 64 entries for 3 dimensions is refused')
    s = gdap_protocol_version_check('1.0.0'//c_null_char)
    s = gdap_layout_block(map, [8_c_int64_t, 8_c_int64_t], [2_c_int64_t])
    msg = gdap_error_message()
    call check(s == GDAP_ERR_INVALID_ARGUMENT .and. index(msg, 'grid has 1 entries but shape has 2') > 0, &
               'a grid of 1 for 2 dimensions says so, not an older call''s message: '//msg)
  end subroutine layout_helpers_check_lengths

  ! gdap_fortran_shape's own refusals set gdap_last_error (hunt 12, item 12).
  subroutine fortran_shape_refusals_say_why()
    type(c_ptr) :: array
    type(gdap_dim) :: dims(3)
    integer(c_int64_t) :: fshape(2)
    integer(c_int) :: s
    integer :: k
    character(len=:), allocatable :: msg
    do k = 1, 3
      call check(gdap_dim_set_block(dims(k), 4_c_int64_t, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, 4_c_int64_t) &
                 == GDAP_SUCCESS, 'set_block')
    end do
    call check(gdap_array_create(array, f64, gdap_device(GDAP_DEVICE_CPU, 0), dims, 3_c_int64_t) == GDAP_SUCCESS, &
               'a 4 x 4 x 4 array')
    s = gdap_protocol_version_check('0.9.0'//c_null_char)
    s = gdap_fortran_shape(fshape, array)
    msg = gdap_error_message()
    call check(s == GDAP_ERR_INVALID_ARGUMENT .and. &
               index(msg, 'gdap_fortran_shape: fshape has 2 entries but the array has 3 dimensions') > 0, &
               'fshape(2) for a 3-d array names both lengths: '//msg)
    call check(gdap_array_destroy(array) == GDAP_SUCCESS, 'destroy the 3-d array')
  end subroutine fortran_shape_refusals_say_why

end program test_fortran

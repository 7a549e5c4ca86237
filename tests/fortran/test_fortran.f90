! The Fortran binding, end to end: struct layout, descriptors and their errors, a 2x2 global map
! (block x block-cyclic), a Fortran array shared with gdap without a copy (row/column order),
! and a DLPack round trip. Each call is made in a statement of its own before its results are
! checked: Fortran may evaluate the operands of .and. in any order. Prints "fortran binding: N passed, M failed"; exits 1 on a failure.
program test_fortran
  use, intrinsic :: iso_c_binding
  use gdap
  implicit none
  integer :: passed = 0, failed = 0

  call struct_layout_matches_c()
  call block_dimension_counts()
  call invalid_dimension_names_dimension_and_key()
  call map_of_block_by_block_cyclic()
  call fortran_array_shared_without_copy()
  call dlpack_round_trip_keeps_the_pointer()

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
    call check(gdap_version() >= 100, 'gdap_version is 0.1.0 or later')
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
    type(gdap_dtype), parameter :: f64 = gdap_dtype(GDAP_DTYPE_FLOAT, 64_c_int8_t, 1_c_int16_t)
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
    call check(gdap_array_from_dlpack(again, tensor, dims, 2_c_int64_t, c_null_ptr) == GDAP_SUCCESS, &
               're-import the DLPack tensor')
    call check(gdap_array_data(data1, array) == GDAP_SUCCESS, 'data pointer of the original')
    call check(gdap_array_data(data2, again) == GDAP_SUCCESS, 'data pointer of the re-import')
    call check(c_associated(data1, data2), 'the round trip copies nothing')
    call check(gdap_array_destroy(array) == GDAP_SUCCESS, 'destroy the original')
    call check(gdap_array_destroy(again) == GDAP_SUCCESS, 'destroy the re-import (memory freed once, now)')
  end subroutine dlpack_round_trip_keeps_the_pointer

end program test_fortran

! A Fortran array shared with gdap without a copy: rank 1's section of a 6 x 10 array whose rows
! are in blocks of 3 over 2 ranks and whose columns are whole, held in a(10, 3) (Fortran keeps the
! C shape reversed). gdap says where a global element lives, and hands back the array's own memory.
! Build: gfortran hello_gdap.f90 -I<prefix>/include/gdap/fortran -L<prefix>/lib -Wl,-rpath,<prefix>/lib -lgdap_fortran -lgdap
program hello_gdap
  use, intrinsic :: iso_c_binding
  use gdap
  implicit none
  type(gdap_dtype), parameter :: f64 = gdap_dtype(GDAP_DTYPE_FLOAT, 64_c_int8_t, 1_c_int16_t)
  type(gdap_dim) :: dims(2)
  type(c_ptr) :: array, data
  real(c_double), target :: a(10, 3)
  integer(c_int64_t) :: local(2), global(2)
  integer :: i, j

  call ok(gdap_dim_set_block(dims(1), 6_c_int64_t, 2_c_int64_t, 1_c_int64_t, 3_c_int64_t, 6_c_int64_t))
  call ok(gdap_dim_set_block(dims(2), 10_c_int64_t, 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, 10_c_int64_t))
  call ok(gdap_array_wrap_fortran(array, c_loc(a), f64, dims))
  do i = 1, 3        ! C row i - 1 of the section
    do j = 1, 10     ! C column j - 1
      call ok(gdap_array_local_to_global(global, array, [int(i - 1, c_int64_t), int(j - 1, c_int64_t)]))
      a(j, i) = real(100 * global(1) + global(2), c_double)
    end do
  end do
  call ok(gdap_array_global_to_local(local, array, [4_c_int64_t, 7_c_int64_t]))
  call ok(gdap_array_data(data, array))
  print '(a,i0,a,i0,a,f6.0,a,l1)', 'global (4, 7) is local (', local(1), ', ', local(2), ') holding ', &
    a(local(2) + 1, local(1) + 1), '; gdap uses the Fortran array itself: ', c_associated(data, c_loc(a))
  call ok(gdap_array_destroy(array))

contains

  subroutine ok(status)
    integer(c_int), intent(in) :: status
    if (status /= GDAP_SUCCESS) then
      print '(a)', gdap_error_message()
      error stop 1
    end if
  end subroutine ok

end program hello_gdap

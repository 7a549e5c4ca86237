! A Fortran program built against an installed gdap (module file + libraries).
program consumer
  use, intrinsic :: iso_c_binding
  use gdap
  implicit none
  type(gdap_dim) :: d
  integer(c_int64_t) :: n
  if (gdap_dim_set_cyclic(d, 10_c_int64_t, 3_c_int64_t, 1_c_int64_t, 2_c_int64_t, 2_c_int64_t) /= GDAP_SUCCESS) error stop 1
  if (gdap_dim_owned_count(n, d) /= GDAP_SUCCESS) error stop 2
  print '(a,i0)', 'fortran consumer: owned ', n
end program consumer

! The Fortran binding of the distributed GEMM on a one-rank in-process group. Fortran arrays are
! column-major, so the memory of a(k, m) is the C-order m x k matrix A that the maps describe (and
! c(n, m) holds C^T). C = 0.5 * A * B + 2 * C checked against Fortran's matmul, element by element,
! then the stats, then a shape mismatch refused with its message. Prints "gemm fortran: N passed, F failed".
program gemm_fortran
  use, intrinsic :: iso_c_binding
  use gdap
  implicit none
  integer, parameter :: m = 3, n = 4, k = 5
  real(c_double), target :: a(k, m), b(n, k), c(n, m), want(n, m)
  type(c_ptr) :: comm(1), ma, mb, mc, aa, ab, ac, g
  type(gdap_dim) :: da(2), db(2), dc(2)
  type(gdap_gemm_options) :: options
  type(gdap_gemm_stats) :: stats
  type(gdap_dtype) :: f64
  type(gdap_device) :: host
  integer :: i, j, passed = 0, failed = 0
  f64 = gdap_dtype(2_c_int8_t, 64_c_int8_t, 1_c_int16_t)
  host = gdap_device(1, 0)
  do i = 1, m
    do j = 1, k
      a(j, i) = real(mod(i * 7 + j * 3, 11) - 5, c_double) / 4
    end do
  end do
  do i = 1, k
    do j = 1, n
      b(j, i) = real(mod(i * 5 + j * 2, 9) - 4, c_double) / 4
    end do
  end do
  c = 1.5_c_double
  ! In C order: A is m x k, B is k x n, C is m x n; Fortran's c(n, m) = transpose of the C-order C.
  want = 0.5_c_double * matmul(b, a) + 2 * c
  call check(gdap_comm_create_group(comm, 1_c_int64_t) == 0, "group")
  call check(gdap_dim_set_block(da(1), int(m, c_int64_t), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, int(m, c_int64_t)) == 0, "dim")
  call check(gdap_dim_set_block(da(2), int(k, c_int64_t), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, int(k, c_int64_t)) == 0, "dim")
  call check(gdap_dim_set_block(db(1), int(k, c_int64_t), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, int(k, c_int64_t)) == 0, "dim")
  call check(gdap_dim_set_block(db(2), int(n, c_int64_t), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, int(n, c_int64_t)) == 0, "dim")
  call check(gdap_dim_set_block(dc(1), int(m, c_int64_t), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, int(m, c_int64_t)) == 0, "dim")
  call check(gdap_dim_set_block(dc(2), int(n, c_int64_t), 1_c_int64_t, 0_c_int64_t, 0_c_int64_t, int(n, c_int64_t)) == 0, "dim")
  ma = c_null_ptr
  mb = c_null_ptr
  mc = c_null_ptr
  call check(gdap_map_create(ma, 1_c_int64_t, 2_c_int64_t, da) == 0, "map A")
  call check(gdap_map_create(mb, 1_c_int64_t, 2_c_int64_t, db) == 0, "map B")
  call check(gdap_map_create(mc, 1_c_int64_t, 2_c_int64_t, dc) == 0, "map C")
  aa = c_null_ptr
  ab = c_null_ptr
  ac = c_null_ptr
  call check(gdap_array_wrap(aa, c_loc(a), f64, host, dims=da, ndim=2_c_int64_t) == 0, "wrap A")
  call check(gdap_array_wrap(ab, c_loc(b), f64, host, dims=db, ndim=2_c_int64_t) == 0, "wrap B")
  call check(gdap_array_wrap(ac, c_loc(c), f64, host, dims=dc, ndim=2_c_int64_t) == 0, "wrap C")
  g = c_null_ptr
  options%panel_width = 2
  call check(gdap_gemm_create(g, comm(1), ma, mb, mc, f64, options) == 0, "gdap_gemm_create")
  call check(gdap_gemm_execute(comm(1), g, 0.5_c_double, aa, ab, 2.0_c_double, ac) == 0, "gdap_gemm_execute")
  call check(maxval(abs(c - want)) < 1e-12_c_double, "C = 0.5 A B + 2 C element by element")
  call check(gdap_gemm_stats_get(stats, g) == 0, "gdap_gemm_stats_get")
  call check(stats%panels == 3 .and. stats%flops == 2 * m * n * k .and. stats%redistributed_a == 0, "stats")
  call check(gdap_gemm_destroy(g) == 0, "gdap_gemm_destroy")
  g = c_null_ptr
  ! B's map is k x n, so A's map cannot stand in for it: K = 5 != 3.
  call check(gdap_gemm_create(g, comm(1), ma, ma, mc, f64, options) == 1, "shape mismatch refused")
  call check(index(gdap_error_message(), "shape mismatch") > 0, "the message says shape mismatch")
  call check(gdap_array_destroy(aa) == 0 .and. gdap_array_destroy(ab) == 0 .and. gdap_array_destroy(ac) == 0, "destroy")
  call check(gdap_map_destroy(ma) == 0 .and. gdap_map_destroy(mb) == 0 .and. gdap_map_destroy(mc) == 0, "destroy maps")
  call check(gdap_comm_destroy(comm(1)) == 0, "destroy comm")
  print '(a, i0, a, i0, a)', "gemm fortran: ", passed, " passed, ", failed, " failed"
  if (failed > 0) stop 1
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(a, a, a, a)', "FAIL: ", what, ": ", gdap_error_message()
    end if
  end subroutine
end program gemm_fortran

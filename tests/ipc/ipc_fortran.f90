! The Fortran IPC wrappers: a section in POSIX shared memory, its handle, and the handle opened as a
! second array over the same memory (in this process: another mapping, another address); a write
! through one is read through the other. Then a truncated handle and ordinary host memory, refused.
! Prints "fortran ipc: N passed, M failed"; exits 1 on a failure.
program ipc_fortran
  use, intrinsic :: iso_c_binding
  use gdap
  implicit none
  integer :: passed = 0, failed = 0
  type(gdap_dtype), parameter :: f64 = gdap_dtype(GDAP_DTYPE_FLOAT, 64_c_int8_t, 1_c_int16_t)
  type(gdap_dim) :: dims(2)
  type(c_ptr) :: shm, opened, plain, p_shm, p_opened
  integer(c_int8_t) :: handle(GDAP_IPC_HANDLE_SIZE)
  real(c_double), pointer :: a(:, :), b(:, :)
  integer(c_int) :: s

  s = gdap_dim_set_block(dims(1), 6_c_int64_t, 2_c_int64_t, 1_c_int64_t, 3_c_int64_t, 6_c_int64_t)
  s = gdap_dim_set_undistributed(dims(2), 4_c_int64_t)
  shm = c_null_ptr
  s = gdap_array_create_shm(shm, c_null_char, f64, dims, 2_c_int64_t)
  call check(s == GDAP_SUCCESS, 'gdap_array_create_shm with a fresh name')
  s = gdap_ipc_export(handle, GDAP_IPC_HANDLE_SIZE, shm)
  call check(s == GDAP_SUCCESS, 'gdap_ipc_export')
  call check(all(handle(1:8) == transfer('GDAP-IPC', handle(1:8))), 'the handle starts with the magic')
  opened = c_null_ptr
  s = gdap_ipc_open(opened, handle, GDAP_IPC_HANDLE_SIZE)
  call check(s == GDAP_SUCCESS, 'gdap_ipc_open')
  s = gdap_array_data(p_shm, shm)
  s = gdap_array_data(p_opened, opened)
  call check(.not. c_associated(p_shm, p_opened), 'the importer maps the segment at its own address')
  ! C order 3 x 4 is Fortran 4 x 3.
  call c_f_pointer(p_shm, a, [4, 3])
  call c_f_pointer(p_opened, b, [4, 3])
  b(2, 3) = 12.5_c_double
  call check(a(2, 3) == 12.5_c_double, 'a write through the importer is seen by the exporter')
  s = gdap_array_destroy(opened)

  opened = c_null_ptr
  s = gdap_ipc_open(opened, handle, GDAP_IPC_HANDLE_SIZE - 1)
  call check(s == GDAP_ERR_INVALID_ARGUMENT .and. .not. c_associated(opened), 'a truncated handle is refused')
  call check(index(gdap_error_message(), '2047 bytes') > 0, 'the message gives the size')

  plain = c_null_ptr
  s = gdap_array_create(plain, f64, gdap_device(GDAP_DEVICE_CPU, 0), dims, 2_c_int64_t)
  s = gdap_ipc_export(handle, GDAP_IPC_HANDLE_SIZE, plain)
  call check(s == GDAP_ERR_UNSUPPORTED, 'ordinary host memory cannot be shared')
  call check(index(gdap_error_message(), 'gdap_array_create_shm') > 0, 'the message says what to use')
  s = gdap_array_destroy(plain)
  s = gdap_array_destroy(shm)

  print '(a,i0,a,i0,a)', 'fortran ipc: ', passed, ' passed, ', failed, ' failed'
  if (failed > 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(a,a)', 'FAILED: ', what
    end if
  end subroutine

end program ipc_fortran

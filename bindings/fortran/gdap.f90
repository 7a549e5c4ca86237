! gdap — the Fortran binding of gdap's C ABI: `use gdap` gives every constant, bind(C) type and
! interface of the generated module gdap_c_api (gdap_c_api.f90, written by tools/abigen/generate.py from
! the headers in include/gdap; its opening comment says how each C parameter is translated) and the Fortran
! conveniences below, which have no C counterpart.
!
! Row and column order. The protocol describes C-order (row-major) local sections: dimension 0
! varies slowest. A Fortran array is column-major, so the Fortran view of a C-order section with
! shape (n0, n1, ..., nk) has shape (nk, ..., n1, n0): the index order is reversed, no element
! moves. gdap_fortran_shape gives that reversed shape, and gdap_array_wrap_fortran describes a
! Fortran array to gdap with its dimensions listed in C order (last Fortran dimension first).
module gdap
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int, c_int32_t, c_int64_t, c_char, c_size_t, c_associated, c_f_pointer, &
                                          c_null_char
  use gdap_c_api
  implicit none
  ! Everything of gdap_c_api is public here; the iso_c_binding names this module uses are not.
  private :: c_ptr, c_int, c_int32_t, c_int64_t, c_char, c_size_t, c_associated, c_f_pointer, c_null_char
  private :: fortran_string, c_strlen, grid_axes, refuse, length_mismatch, int_text

  interface
    function c_strlen(s) bind(C, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

contains

  !> A C string as a Fortran string ('' for NULL).
  function fortran_string(p) result(text)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      text = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: text)
    do i = 1, n
      text(i:i) = chars(i)
    end do
  end function fortran_string

  !> This thread's last error detail (gdap_last_error) as a Fortran string.
  function gdap_error_message() result(text)
    character(len=:), allocatable :: text
    text = fortran_string(gdap_last_error())
  end function gdap_error_message

  !> The name of a status code (gdap_status_string) as a Fortran string.
  function gdap_status_name(status) result(text)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: text
    text = fortran_string(gdap_status_string(status))
  end function gdap_status_name

  !> The shape of a host section as a Fortran array sees it (C shape reversed), for
  !> c_f_pointer(data, x, fshape). Fails with GDAP_ERR_UNSUPPORTED unless the section is
  !> C-contiguous, since c_f_pointer can only describe contiguous memory.
  function gdap_fortran_shape(fshape, array) result(s)
    integer(c_int64_t), intent(inout) :: fshape(:)
    type(c_ptr), intent(in) :: array
    integer(c_int) :: s
    integer(c_int64_t) :: ndim, expected
    integer(c_int64_t), allocatable :: shape(:), strides(:)
    integer :: i
    s = gdap_array_ndim(ndim, array)
    if (s /= GDAP_SUCCESS) return
    if (size(fshape) /= ndim) then
      s = refuse(GDAP_ERR_INVALID_ARGUMENT, 'gdap_fortran_shape: fshape has '//int_text(size(fshape, kind=c_int64_t)) &
                 //' entries but the array has '//int_text(ndim)//' dimensions')
      return
    end if
    allocate(shape(max(ndim, 1_c_int64_t)), strides(max(ndim, 1_c_int64_t)))
    s = gdap_array_shape(shape, array)
    if (s == GDAP_SUCCESS) s = gdap_array_strides(strides, array)
    if (s /= GDAP_SUCCESS) return
    expected = 1
    do i = int(ndim), 1, -1
      if (shape(i) > 1 .and. strides(i) /= expected) then
        s = refuse(GDAP_ERR_UNSUPPORTED, 'gdap_fortran_shape: the section is not C-contiguous: dimension ' &
                   //int_text(int(i - 1, c_int64_t))//' has stride '//int_text(strides(i))//', not ' &
                   //int_text(expected)//' elements')
        return
      end if
      expected = expected * shape(i)
    end do
    fshape = shape(ndim:1:-1)
  end function gdap_fortran_shape

  !> Wraps a contiguous Fortran array (retained: TARGET, kept alive) as a local section.
  !> `dims` lists the dictionaries in C order: dims(1) describes the LAST Fortran dimension.
  function gdap_array_wrap_fortran(array, data, dtype, dims) result(s)
    type(c_ptr), intent(inout) :: array
    type(c_ptr), intent(in) :: data
    type(gdap_dtype), intent(in) :: dtype
    type(gdap_dim), intent(in) :: dims(:)
    integer(c_int) :: s
    s = gdap_array_wrap(array, data, dtype, gdap_device(GDAP_DEVICE_CPU, 0), dims=dims, &
                        ndim=int(size(dims), c_int64_t))
  end function gdap_array_wrap_fortran

  !> Even blocks over the process grid `grid` (C order, like `shape`), with an optional `halo`
  !> of communication padding per dimension and `periodic` flags (0 or 1): gdap_map_create_grid
  !> with 'b' on every axis.
  function gdap_layout_block(map, shape, grid, halo, periodic) result(s)
    type(c_ptr), intent(inout) :: map
    integer(c_int64_t), intent(in) :: shape(:), grid(:)
    integer(c_int64_t), intent(in), optional :: halo(:)
    integer(c_int32_t), intent(in), optional :: periodic(:)
    integer(c_int) :: s
    type(gdap_axis_layout) :: axes(size(shape))
    s = grid_axes(axes, shape, grid, 'gdap_layout_block')
    if (s /= GDAP_SUCCESS) return
    if (present(halo)) then
      s = length_mismatch('gdap_layout_block', 'halo', size(halo), size(shape))
      if (s /= GDAP_SUCCESS) return
      axes%halo = halo
    end if
    if (present(periodic)) then
      s = length_mismatch('gdap_layout_block', 'periodic', size(periodic), size(shape))
      if (s /= GDAP_SUCCESS) return
      axes%periodic = periodic
    end if
    s = gdap_map_create_grid(map, int(size(axes), c_int64_t), axes)
  end function gdap_layout_block

  !> Cyclic (block_size 1, the default) or block-cyclic dimensions over the grid `grid` (C order).
  function gdap_layout_cyclic(map, shape, grid, block_size) result(s)
    type(c_ptr), intent(inout) :: map
    integer(c_int64_t), intent(in) :: shape(:), grid(:)
    integer(c_int64_t), intent(in), optional :: block_size(:)
    integer(c_int) :: s
    type(gdap_axis_layout) :: axes(size(shape))
    s = grid_axes(axes, shape, grid, 'gdap_layout_cyclic')
    if (s /= GDAP_SUCCESS) return
    axes%dist_type = GDAP_DIST_CYCLIC
    if (present(block_size)) then
      s = length_mismatch('gdap_layout_cyclic', 'block_size', size(block_size), size(shape))
      if (s /= GDAP_SUCCESS) return
      axes%block_size = block_size
    end if
    s = gdap_map_create_grid(map, int(size(axes), c_int64_t), axes)
  end function gdap_layout_cyclic

  !> Each axis's size and grid extent (GDAP_ERR_INVALID_ARGUMENT unless grid has one per dimension).
  function grid_axes(axes, shape, grid, caller) result(s)
    type(gdap_axis_layout), intent(inout) :: axes(:)
    integer(c_int64_t), intent(in) :: shape(:), grid(:)
    character(len=*), intent(in) :: caller
    integer(c_int) :: s
    s = length_mismatch(caller, 'grid', size(grid), size(shape))
    if (s /= GDAP_SUCCESS) return
    axes%size = shape
    axes%grid_size = grid
    s = GDAP_SUCCESS
  end function grid_axes

  !> GDAP_SUCCESS when the per-dimension array `what` has one entry per dimension of shape, else
  !> GDAP_ERR_INVALID_ARGUMENT with a message naming the argument and both lengths: an array
  !> assignment of another length would read or write past one of them.
  function length_mismatch(caller, what, n, ndim) result(s)
    character(len=*), intent(in) :: caller, what
    integer, intent(in) :: n, ndim
    integer(c_int) :: s
    s = GDAP_SUCCESS
    if (n == ndim) return
    s = refuse(GDAP_ERR_INVALID_ARGUMENT, caller//': '//what//' has '//int_text(int(n, c_int64_t)) &
               //' entries but shape has '//int_text(int(ndim, c_int64_t))//' dimensions')
  end function length_mismatch

  !> Records a check of this module as gdap_last_error (gdap_last_error_set) and returns `status`.
  function refuse(status, message) result(s)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: message
    integer(c_int) :: s
    s = gdap_last_error_set(status, message//c_null_char)
  end function refuse

  !> An integer as its shortest decimal text.
  function int_text(n) result(text)
    integer(c_int64_t), intent(in) :: n
    character(len=:), allocatable :: text
    character(len=24) :: buffer
    write(buffer, '(i0)') n
    text = trim(buffer)
  end function int_text

end module gdap

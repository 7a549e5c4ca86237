! heat_kernels: the Fortran driver's view of the example's C kernels and helpers (heat_kernels.h,
! heat_problem.h, heat_comm.h) over ISO_C_BINDING. Device memory, streams and events are
! type(c_ptr): Fortran never touches device data, it hands the addresses gdap gives it to the
! CUDA C kernels. Indices in the structs are 0-based and in C order, as gdap's.
module heat_kernels
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: HEAT_MAX_BOXES = 6

  !> heat_problem.h's heat_problem.
  type, bind(C), public :: heat_problem
    integer(c_int32_t) :: ndim = 0
    integer(c_int32_t) :: reserved = 0
    integer(c_int32_t) :: periodic(3) = 0
    integer(c_int32_t) :: mode(3) = 1
    integer(c_int64_t) :: n(3) = 0
    integer(c_int64_t) :: origin(3) = 0
    real(c_double) :: r = 0
    real(c_double) :: amplitude = 0
    real(c_double) :: offset = 0
    real(c_double) :: slope(3) = 0
    real(c_double) :: twist = 0
  end type heat_problem

  !> One rank's section as the kernels see it (heat_view).
  type, bind(C), public :: heat_view
    integer(c_int32_t) :: ndim = 0
    integer(c_int32_t) :: bits = 64
    integer(c_int64_t) :: shape(3) = 1
    integer(c_int64_t) :: start(3) = 0
  end type heat_view

  !> Local cells lo(d) <= i < hi(d), 0-based, C order (heat_box).
  type, bind(C), public :: heat_box
    integer(c_int64_t) :: lo(3) = 0
    integer(c_int64_t) :: hi(3) = 1
  end type heat_box

  type, bind(C), public :: heat_boxes
    integer(c_int32_t) :: count = 0
    integer(c_int32_t) :: reserved = 0
    type(heat_box) :: box(6)
  end type heat_boxes

  public :: heat_split, heat_problem_init, heat_problem_size, heat_problem_growth, heat_problem_mode_norm, heat_problem_bound
  public :: heat_host_step, heat_host_fill, heat_host_sqdiff, heat_host_error, heat_host_fingerprint
  public :: heat_cuda_step, heat_cuda_fill, heat_cuda_sqdiff, heat_cuda_error, heat_cuda_fingerprint
  public :: heat_cuda_scratch_bytes, heat_cuda_device_count, heat_cuda_set_device, heat_cuda_malloc, heat_cuda_free
  public :: heat_cuda_copy_sync, heat_cuda_stream_create, heat_cuda_stream_destroy, heat_cuda_stream_sync
  public :: heat_cuda_event_create, heat_cuda_event_destroy, heat_cuda_event_record, heat_cuda_stream_wait
  public :: heat_nccl_from_mpi, heat_nccl_destroy, heat_cuda_message, heat_nccl_message

  interface
    subroutine heat_split(update, ndim, boundary, interior) bind(C, name='heat_split')
      import :: c_int, heat_box, heat_boxes
      type(heat_box), intent(in) :: update
      integer(c_int), value :: ndim
      type(heat_boxes), intent(inout) :: boundary, interior
    end subroutine
    function heat_problem_init(p, ndim, n, periodic, mode, r, why, capacity) bind(C, name='heat_problem_init') result(e)
      import :: c_int, c_int32_t, c_int64_t, c_double, c_char, heat_problem
      type(heat_problem), intent(inout) :: p
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: n(*)
      integer(c_int32_t), intent(in) :: periodic(*), mode(*)
      real(c_double), value :: r
      character(kind=c_char), intent(inout) :: why(*)
      integer(c_int), value :: capacity
      integer(c_int) :: e
    end function
    function heat_problem_size(p, d) bind(C, name='heat_problem_size') result(n)
      import :: c_int, c_int64_t, heat_problem
      type(heat_problem), intent(in) :: p
      integer(c_int), value :: d
      integer(c_int64_t) :: n
    end function
    function heat_problem_growth(p) bind(C, name='heat_problem_growth') result(g)
      import :: c_double, heat_problem
      type(heat_problem), intent(in) :: p
      real(c_double) :: g
    end function
    function heat_problem_mode_norm(p) bind(C, name='heat_problem_mode_norm') result(x)
      import :: c_double, heat_problem
      type(heat_problem), intent(in) :: p
      real(c_double) :: x
    end function
    function heat_problem_bound(p) bind(C, name='heat_problem_bound') result(x)
      import :: c_double, heat_problem
      type(heat_problem), intent(in) :: p
      real(c_double) :: x
    end function

    ! --- host memory (the data are c_ptr: gdap_array_data's addresses) ---
    subroutine heat_host_step(view, u, v, boxes, r) bind(C, name='heat_host_step')
      import :: c_ptr, c_double, heat_view, heat_boxes
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u, v
      type(heat_boxes), intent(in) :: boxes
      real(c_double), value :: r
    end subroutine
    subroutine heat_host_fill(view, u, owned, p) bind(C, name='heat_host_fill')
      import :: c_ptr, heat_view, heat_box, heat_problem
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u
      type(heat_box), intent(in) :: owned
      type(heat_problem), intent(in) :: p
    end subroutine
    function heat_host_sqdiff(view, u, v, box) bind(C, name='heat_host_sqdiff') result(x)
      import :: c_ptr, c_double, heat_view, heat_box
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u, v
      type(heat_box), intent(in) :: box
      real(c_double) :: x
    end function
    function heat_host_error(view, u, box, p, decay) bind(C, name='heat_host_error') result(x)
      import :: c_ptr, c_double, heat_view, heat_box, heat_problem
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u
      type(heat_box), intent(in) :: box
      type(heat_problem), intent(in) :: p
      real(c_double), value :: decay
      real(c_double) :: x
    end function
    function heat_host_fingerprint(view, u, box, p) bind(C, name='heat_host_fingerprint') result(x)
      import :: c_ptr, c_int64_t, heat_view, heat_box, heat_problem
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u
      type(heat_box), intent(in) :: box
      type(heat_problem), intent(in) :: p
      integer(c_int64_t) :: x  ! a uint64_t: the same bits
    end function

    ! --- CUDA device memory: queued on `stream`, 0 or a cudaError_t ---
    function heat_cuda_step(view, u, v, boxes, r, stream) bind(C, name='heat_cuda_step') result(e)
      import :: c_int, c_ptr, c_double, heat_view, heat_boxes
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u, v
      type(heat_boxes), intent(in) :: boxes
      real(c_double), value :: r
      type(c_ptr), value :: stream
      integer(c_int) :: e
    end function
    function heat_cuda_fill(view, u, owned, p, stream) bind(C, name='heat_cuda_fill') result(e)
      import :: c_int, c_ptr, heat_view, heat_box, heat_problem
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u
      type(heat_box), intent(in) :: owned
      type(heat_problem), intent(in) :: p
      type(c_ptr), value :: stream
      integer(c_int) :: e
    end function
    function heat_cuda_sqdiff(view, u, v, box, out, scratch, stream) bind(C, name='heat_cuda_sqdiff') result(e)
      import :: c_int, c_ptr, heat_view, heat_box
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u, v
      type(heat_box), intent(in) :: box
      type(c_ptr), value :: out, scratch, stream
      integer(c_int) :: e
    end function
    function heat_cuda_error(view, u, box, p, decay, out, scratch, stream) bind(C, name='heat_cuda_error') result(e)
      import :: c_int, c_ptr, c_double, heat_view, heat_box, heat_problem
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u
      type(heat_box), intent(in) :: box
      type(heat_problem), intent(in) :: p
      real(c_double), value :: decay
      type(c_ptr), value :: out, scratch, stream
      integer(c_int) :: e
    end function
    function heat_cuda_fingerprint(view, u, box, p, out, scratch, stream) bind(C, name='heat_cuda_fingerprint') result(e)
      import :: c_int, c_ptr, heat_view, heat_box, heat_problem
      type(heat_view), intent(in) :: view
      type(c_ptr), value :: u
      type(heat_box), intent(in) :: box
      type(heat_problem), intent(in) :: p
      type(c_ptr), value :: out, scratch, stream
      integer(c_int) :: e
    end function
    function heat_cuda_scratch_bytes() bind(C, name='heat_cuda_scratch_bytes') result(n)
      import :: c_int64_t
      integer(c_int64_t) :: n
    end function
    function heat_cuda_error_string(code) bind(C, name='heat_cuda_error_string') result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: code
      type(c_ptr) :: text
    end function
    function heat_cuda_device_count(count) bind(C, name='heat_cuda_device_count') result(e)
      import :: c_int
      integer(c_int), intent(inout) :: count
      integer(c_int) :: e
    end function
    function heat_cuda_set_device(device) bind(C, name='heat_cuda_set_device') result(e)
      import :: c_int
      integer(c_int), value :: device
      integer(c_int) :: e
    end function
    function heat_cuda_malloc(pointer, bytes) bind(C, name='heat_cuda_malloc') result(e)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: pointer
      integer(c_int64_t), value :: bytes
      integer(c_int) :: e
    end function
    function heat_cuda_free(pointer) bind(C, name='heat_cuda_free') result(e)
      import :: c_int, c_ptr
      type(c_ptr), value :: pointer
      integer(c_int) :: e
    end function
    function heat_cuda_copy_sync(dst, src, bytes, stream) bind(C, name='heat_cuda_copy_sync') result(e)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: dst, src
      integer(c_int64_t), value :: bytes
      type(c_ptr), value :: stream
      integer(c_int) :: e
    end function
    function heat_cuda_stream_create(stream, high) bind(C, name='heat_cuda_stream_create') result(e)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: stream
      integer(c_int), value :: high
      integer(c_int) :: e
    end function
    function heat_cuda_stream_destroy(stream) bind(C, name='heat_cuda_stream_destroy') result(e)
      import :: c_int, c_ptr
      type(c_ptr), value :: stream
      integer(c_int) :: e
    end function
    function heat_cuda_stream_sync(stream) bind(C, name='heat_cuda_stream_sync') result(e)
      import :: c_int, c_ptr
      type(c_ptr), value :: stream
      integer(c_int) :: e
    end function
    function heat_cuda_event_create(event) bind(C, name='heat_cuda_event_create') result(e)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: event
      integer(c_int) :: e
    end function
    function heat_cuda_event_destroy(event) bind(C, name='heat_cuda_event_destroy') result(e)
      import :: c_int, c_ptr
      type(c_ptr), value :: event
      integer(c_int) :: e
    end function
    function heat_cuda_event_record(event, stream) bind(C, name='heat_cuda_event_record') result(e)
      import :: c_int, c_ptr
      type(c_ptr), value :: event, stream
      integer(c_int) :: e
    end function
    function heat_cuda_stream_wait(stream, event) bind(C, name='heat_cuda_stream_wait') result(e)
      import :: c_int, c_ptr
      type(c_ptr), value :: stream, event
      integer(c_int) :: e
    end function

    ! --- NCCL over MPI (heat_comm.h) ---
    function heat_nccl_from_mpi(nccl_comm, mpi_comm, device) bind(C, name='heat_nccl_from_mpi') result(e)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: nccl_comm
      integer(c_int), value :: mpi_comm, device
      integer(c_int) :: e
    end function
    function heat_nccl_destroy(nccl_comm) bind(C, name='heat_nccl_destroy') result(e)
      import :: c_int, c_ptr
      type(c_ptr), value :: nccl_comm
      integer(c_int) :: e
    end function
    function heat_nccl_error_string(code) bind(C, name='heat_nccl_error_string') result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: code
      type(c_ptr) :: text
    end function
    function c_strlen(s) bind(C, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

contains

  function c_string(p) result(text)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i
    call c_f_pointer(p, chars, [c_strlen(p)])
    allocate(character(len=size(chars)) :: text)
    do i = 1, size(chars)
      text(i:i) = chars(i)
    end do
  end function c_string

  !> A CUDA error code's name (heat_cuda_error_string) as a Fortran string.
  function heat_cuda_message(code) result(text)
    integer(c_int), intent(in) :: code
    character(len=:), allocatable :: text
    text = c_string(heat_cuda_error_string(code))
  end function heat_cuda_message

  function heat_nccl_message(code) result(text)
    integer(c_int), intent(in) :: code
    character(len=:), allocatable :: text
    text = c_string(heat_nccl_error_string(code))
  end function heat_nccl_message

end module heat_kernels

! gdap — Fortran binding of the C ABI (include/gdap/gdap.h, gdap_mpi.h, gdap_cuda.h) over
! ISO_C_BINDING.
!
! Every C function has an interface of the same name and arguments; each returns the
! gdap_status as integer(c_int) and takes handles (gdap_map, gdap_array, gdap_comm, gdap_plan)
! as type(c_ptr).
! Out-parameters are intent(inout), not intent(out): gdap leaves them untouched when a call
! fails, and intent(out) would let the compiler discard the caller's value before the call.
! Index and size arguments are integer(c_int64_t), 0-based like the protocol.
!
! Row and column order. The protocol describes C-order (row-major) local sections: dimension 0
! varies slowest. A Fortran array is column-major, so the Fortran view of a C-order section with
! shape (n0, n1, ..., nk) has shape (nk, ..., n1, n0): the index order is reversed, no element
! moves. gdap_fortran_shape gives that reversed shape, and gdap_array_wrap_fortran describes a
! Fortran array to gdap with its dimensions listed in C order (last Fortran dimension first).
module gdap
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! gdap_status
  integer(c_int), parameter, public :: GDAP_SUCCESS = 0, GDAP_ERR_INVALID_ARGUMENT = 1, &
    GDAP_ERR_PROTOCOL = 2, GDAP_ERR_VERSION = 3, GDAP_ERR_OVERFLOW = 4, GDAP_ERR_OUT_OF_RANGE = 5, &
    GDAP_ERR_NOT_FOUND = 6, GDAP_ERR_BUFFER_TOO_SMALL = 7, GDAP_ERR_NO_MEMORY = 8, &
    GDAP_ERR_UNSUPPORTED = 9, GDAP_ERR_DEVICE = 10, GDAP_ERR_COMM = 11, GDAP_ERR_REMOTE = 12, &
    GDAP_ERR_TIMEOUT = 13, GDAP_ERR_IO = 14, GDAP_ERR_INTERNAL = 15, GDAP_ERR_INTERRUPTED = 16

  ! gdap_dist_type (the protocol's character codes) and GDAP_KEY_* bits of gdap_dim%given
  integer(c_int32_t), parameter, public :: GDAP_DIST_UNDISTRIBUTED = 0, GDAP_DIST_BLOCK = 98, &
    GDAP_DIST_CYCLIC = 99, GDAP_DIST_UNSTRUCTURED = 117
  integer(c_int32_t), parameter, public :: GDAP_KEY_PADDING = 1, GDAP_KEY_PERIODIC = 2, &
    GDAP_KEY_BLOCK_SIZE = 4, GDAP_KEY_ONE_TO_ONE = 8

  ! dtype codes and device types (DLPack's)
  integer(c_int8_t), parameter, public :: GDAP_DTYPE_INT = 0, GDAP_DTYPE_UINT = 1, &
    GDAP_DTYPE_FLOAT = 2, GDAP_DTYPE_BFLOAT = 4, GDAP_DTYPE_COMPLEX = 5, GDAP_DTYPE_BOOL = 6
  integer(c_int32_t), parameter, public :: GDAP_DEVICE_CPU = 1, GDAP_DEVICE_CUDA = 2, &
    GDAP_DEVICE_CUDA_HOST = 3, GDAP_DEVICE_CUDA_MANAGED = 13

  ! gdap_comm_kind: what a communicator moves data with
  integer(c_int), parameter, public :: GDAP_COMM_GROUP = 1, GDAP_COMM_MPI = 2, GDAP_COMM_NCCL = 3
  ! gdap_reduce_op (gdap_allreduce, gdap_reduce_scatter, gdap_reduce_axes; MEAN: gdap_reduce_axes only)
  integer(c_int), parameter, public :: GDAP_REDUCE_SUM = 1, GDAP_REDUCE_PROD = 2, GDAP_REDUCE_MIN = 3, &
                                       GDAP_REDUCE_MAX = 4, GDAP_REDUCE_MEAN = 5
  ! gdap_zarr_codec (gdap_zarr_options%codec), gdap_zarr_layout (%layout), gdap_zarr_shuffle (%shuffle)
  integer(c_int32_t), parameter, public :: GDAP_ZARR_RAW = 0, GDAP_ZARR_ZSTD = 1, GDAP_ZARR_BLOSC_LZ4 = 2, &
                                           GDAP_ZARR_BLOSC_ZSTD = 3
  integer(c_int32_t), parameter, public :: GDAP_ZARR_SHARDS = 0, GDAP_ZARR_CHUNKS = 1
  integer(c_int32_t), parameter, public :: GDAP_ZARR_SHUFFLE = 0, GDAP_ZARR_NOSHUFFLE = 1, GDAP_ZARR_BITSHUFFLE = 2
  ! IPC handles (gdap_ipc_export / gdap_ipc_open): bytes per handle, most dimensions a handle carries
  integer(c_int64_t), parameter, public :: GDAP_IPC_HANDLE_SIZE = 2048, GDAP_IPC_MAX_NDIM = 8

  !> One dimension dictionary; the defaults are GDAP_DIM_INIT. struct_size is the C sizeof
  !> (104 bytes); the test program checks it against c_sizeof.
  type, bind(C), public :: gdap_dim
    integer(c_int32_t) :: struct_size = 104
    integer(c_int32_t) :: given = 0
    integer(c_int32_t) :: dist_type = GDAP_DIST_UNDISTRIBUTED
    integer(c_int32_t) :: periodic = 0
    integer(c_int64_t) :: size = 0
    integer(c_int64_t) :: proc_grid_size = 1
    integer(c_int64_t) :: proc_grid_rank = 0
    integer(c_int64_t) :: start = 0
    integer(c_int64_t) :: stop = 0
    integer(c_int64_t) :: padding(2) = 0
    integer(c_int64_t) :: block_size = 1
    type(c_ptr) :: indices = c_null_ptr
    integer(c_int64_t) :: num_indices = 0
    integer(c_int32_t) :: one_to_one = 0
    integer(c_int32_t) :: reserved = 0
  end type gdap_dim

  !> How gdap_map_create_grid lays out one dimension (gdap_axis_layout); the defaults are
  !> GDAP_AXIS_LAYOUT_INIT (struct_size is the C sizeof, 56 bytes): one undivided block
  !> dimension. lengths: c_null_ptr (even blocks) or c_loc of grid_size integer(c_int64_t) lengths.
  type, bind(C), public :: gdap_axis_layout
    integer(c_int32_t) :: struct_size = 56
    integer(c_int32_t) :: dist_type = GDAP_DIST_BLOCK
    integer(c_int64_t) :: size = 0
    integer(c_int64_t) :: grid_size = 1
    integer(c_int64_t) :: block_size = 1
    type(c_ptr) :: lengths = c_null_ptr
    integer(c_int64_t) :: halo = 0
    integer(c_int32_t) :: periodic = 0
    integer(c_int32_t) :: reserved = 0
  end type gdap_axis_layout

  type, bind(C), public :: gdap_run
    integer(c_int64_t) :: global_start, length, local_start
  end type gdap_run

  type, bind(C), public :: gdap_dtype
    integer(c_int8_t) :: code
    integer(c_int8_t) :: bits
    integer(c_int16_t) :: lanes
  end type gdap_dtype

  type, bind(C), public :: gdap_device
    integer(c_int32_t) :: type
    integer(c_int32_t) :: id
  end type gdap_device

  !> What one rank's plan moves (gdap_plan_stats). struct_size defaults to the C sizeof (88
  !> bytes), so a default-initialised value is ready for gdap_plan_stats_get.
  type, bind(C), public :: gdap_plan_stats
    integer(c_int32_t) :: struct_size = 88
    integer(c_int32_t) :: reserved_head = 0
    integer(c_int64_t) :: rank = 0
    integer(c_int64_t) :: nranks = 0
    integer(c_int64_t) :: send_messages = 0
    integer(c_int64_t) :: recv_messages = 0
    integer(c_int64_t) :: send_bytes = 0
    integer(c_int64_t) :: recv_bytes = 0
    integer(c_int64_t) :: local_bytes = 0
    integer(c_int64_t) :: send_runs = 0
    integer(c_int64_t) :: recv_runs = 0
    integer(c_int64_t) :: local_runs = 0
  end type gdap_plan_stats

  !> How a halo is exchanged (gdap_halo_options): struct_size defaults to the C sizeof (16 bytes),
  !> corners on, no width caps (widths: c_null_ptr, or c_loc of ndim integer(c_int64_t) caps).
  type, bind(C), public :: gdap_halo_options
    integer(c_int32_t) :: struct_size = 16
    integer(c_int32_t) :: corners = 1
    type(c_ptr) :: widths = c_null_ptr
  end type gdap_halo_options

  !> What one rank's halo exchange moves (gdap_halo_stats); struct_size defaults to the C sizeof
  !> (64 bytes), so a default-initialised value is ready for gdap_halo_stats_get.
  type, bind(C), public :: gdap_halo_stats
    integer(c_int32_t) :: struct_size = 64
    integer(c_int32_t) :: reserved_head = 0
    integer(c_int64_t) :: rank = 0
    integer(c_int64_t) :: nranks = 0
    integer(c_int64_t) :: send_messages = 0
    integer(c_int64_t) :: recv_messages = 0
    integer(c_int64_t) :: send_bytes = 0
    integer(c_int64_t) :: recv_bytes = 0
    integer(c_int64_t) :: local_bytes = 0
  end type gdap_halo_stats

  !> How gdap_save_zarr writes (gdap_zarr_options): struct_size defaults to the C sizeof (40 bytes),
  !> codec GDAP_ZARR_ZSTD at its default level (zstd_level is the level of any codec), one shard per
  !> rank's block with inner chunks of at most chunk_bytes (0: 2 MiB), blosc's byte shuffle, an
  !> existing store refused (overwrite = 0).
  type, bind(C), public :: gdap_zarr_options
    integer(c_int32_t) :: struct_size = 40
    integer(c_int32_t) :: reserved_head = 0
    integer(c_int32_t) :: codec = 1
    integer(c_int32_t) :: zstd_level = 0
    integer(c_int32_t) :: overwrite = 0
    integer(c_int32_t) :: reserved = 0
    integer(c_int32_t) :: layout = 0
    integer(c_int32_t) :: shuffle = 0
    integer(c_int64_t) :: chunk_bytes = 0
  end type gdap_zarr_options

  !> Distributed GEMM (gdap_gemm_*): arithmetic modes, options and statistics.
  integer(c_int32_t), parameter, public :: GDAP_GEMM_EXACT = 0, GDAP_GEMM_TF32 = 1, GDAP_GEMM_BF16 = 2
  !> gdap_gemm_options: struct_size defaults to the C sizeof (16 bytes), exact mode, default panels.
  type, bind(C), public :: gdap_gemm_options
    integer(c_int32_t) :: struct_size = 16
    integer(c_int32_t) :: mode = 0
    integer(c_int64_t) :: panel_width = 0
  end type gdap_gemm_options
  !> gdap_gemm_stats: struct_size defaults to the C sizeof (112 bytes), ready for gdap_gemm_stats_get.
  type, bind(C), public :: gdap_gemm_stats
    integer(c_int32_t) :: struct_size = 112
    integer(c_int32_t) :: reserved_head = 0
    integer(c_int64_t) :: rank = 0
    integer(c_int64_t) :: nranks = 0
    integer(c_int64_t) :: grid_rows = 0
    integer(c_int64_t) :: grid_cols = 0
    integer(c_int64_t) :: redistributed_a = 0
    integer(c_int64_t) :: redistributed_b = 0
    integer(c_int64_t) :: redistributed_c = 0
    integer(c_int64_t) :: redistribute_bytes = 0
    integer(c_int64_t) :: panels = 0
    integer(c_int64_t) :: panel_bytes = 0
    integer(c_int64_t) :: local_m = 0
    integer(c_int64_t) :: local_n = 0
    integer(c_int64_t) :: flops = 0
  end type gdap_gemm_stats

  public :: gdap_status_string, gdap_last_error, gdap_version, gdap_version_string
  public :: gdap_protocol_version_check
  public :: gdap_dim_init, gdap_dim_set_block, gdap_dim_set_padding, gdap_dim_set_periodic
  public :: gdap_dim_set_cyclic, gdap_dim_set_unstructured, gdap_dim_set_undistributed
  public :: gdap_dim_validate, gdap_dims_validate, gdap_dim_owned_count, gdap_dim_local_extent
  public :: gdap_dim_global_to_local, gdap_dim_local_to_global, gdap_dim_num_runs, gdap_dim_runs
  public :: gdap_grid_rank_to_coords, gdap_grid_coords_to_rank
  public :: gdap_map_create, gdap_map_destroy, gdap_map_ndim, gdap_map_nranks
  public :: gdap_map_create_root, gdap_map_create_replicated
  public :: gdap_grid_balance, gdap_map_create_grid, gdap_map_create_unstructured
  public :: gdap_layout_block, gdap_layout_cyclic
  public :: gdap_map_global_shape, gdap_map_grid_shape, gdap_map_dim, gdap_map_local_shape
  public :: gdap_map_owned_shape, gdap_map_owned_count, gdap_map_owner, gdap_map_owners
  public :: gdap_map_owner_batch, gdap_map_local_to_global, gdap_map_num_runs, gdap_map_runs
  public :: gdap_array_from_dlpack, gdap_array_from_dlpack_unversioned, gdap_array_wrap
  public :: gdap_array_create, gdap_array_destroy, gdap_array_to_dlpack
  public :: gdap_array_to_dlpack_unversioned, gdap_array_ndim, gdap_array_data, gdap_array_shape
  public :: gdap_array_strides, gdap_array_dtype, gdap_array_device, gdap_array_readonly
  public :: gdap_array_dim, gdap_array_version, gdap_array_global_to_local
  public :: gdap_array_local_to_global
  public :: gdap_comm_create_group, gdap_comm_from_mpi, gdap_comm_from_nccl, gdap_comm_destroy
  public :: gdap_comm_rank, gdap_comm_size, gdap_comm_kind_get, gdap_comm_set_stream, gdap_comm_set_timeout
  public :: gdap_comm_set_interrupt
  public :: gdap_comm_barrier, gdap_map_create_collective, gdap_plan_create, gdap_plan_destroy
  public :: gdap_plan_stats_get, gdap_redistribute, gdap_allreduce, gdap_reduce_scatter, gdap_reduce_axes
  public :: gdap_halo_create, gdap_halo_destroy, gdap_halo_stats_get, gdap_halo_exchange
  public :: gdap_halo_exchange_init, gdap_exchange_start, gdap_exchange_destroy
  public :: gdap_save_zarr, gdap_load_zarr, gdap_zarr_shape
  public :: gdap_save_dnpy, gdap_load_dnpy
  public :: gdap_gemm_create, gdap_gemm_destroy, gdap_gemm_stats_get, gdap_gemm_execute
  public :: gdap_array_create_shm, gdap_ipc_export, gdap_ipc_open
  ! Fortran conveniences (no C counterpart)
  public :: gdap_error_message, gdap_status_name, gdap_fortran_shape, gdap_array_wrap_fortran

  interface
    ! --- status, errors, versions ---
    function gdap_status_string(status) bind(C, name='gdap_status_string') result(name)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: name  ! static C string: read it with gdap_status_name
    end function
    function gdap_last_error() bind(C, name='gdap_last_error') result(message)
      import :: c_ptr
      type(c_ptr) :: message  ! thread-local C string: read it with gdap_error_message
    end function
    function gdap_version() bind(C, name='gdap_version') result(v)
      import :: c_int
      integer(c_int) :: v
    end function
    function gdap_version_string() bind(C, name='gdap_version_string') result(v)
      import :: c_ptr
      type(c_ptr) :: v
    end function
    function gdap_protocol_version_check(version) bind(C, name='gdap_protocol_version_check') result(s)
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: version(*)  ! NUL-terminated: 'x.y.z'//c_null_char
      integer(c_int) :: s
    end function

    ! --- dimension descriptors ---
    function gdap_dim_init(dim) bind(C, name='gdap_dim_init') result(s)
      import :: c_int, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int) :: s
    end function
    function gdap_dim_set_block(dim, size, proc_grid_size, proc_grid_rank, start, stop) &
        bind(C, name='gdap_dim_set_block') result(s)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: size, proc_grid_size, proc_grid_rank, start, stop
      integer(c_int) :: s
    end function
    function gdap_dim_set_padding(dim, lower, upper) bind(C, name='gdap_dim_set_padding') result(s)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: lower, upper
      integer(c_int) :: s
    end function
    function gdap_dim_set_periodic(dim, periodic) bind(C, name='gdap_dim_set_periodic') result(s)
      import :: c_int, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int), value :: periodic
      integer(c_int) :: s
    end function
    function gdap_dim_set_cyclic(dim, size, proc_grid_size, proc_grid_rank, start, block_size) &
        bind(C, name='gdap_dim_set_cyclic') result(s)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: size, proc_grid_size, proc_grid_rank, start, block_size
      integer(c_int) :: s
    end function
    !> `indices` is retained: give it the TARGET attribute and keep it alive while `dim` is used.
    function gdap_dim_set_unstructured(dim, size, proc_grid_size, proc_grid_rank, indices, &
        num_indices, one_to_one) bind(C, name='gdap_dim_set_unstructured') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: size, proc_grid_size, proc_grid_rank
      type(c_ptr), value :: indices  ! c_loc of an integer(c_int64_t) array
      integer(c_int64_t), value :: num_indices
      integer(c_int), value :: one_to_one
      integer(c_int) :: s
    end function
    function gdap_dim_set_undistributed(dim, extent) bind(C, name='gdap_dim_set_undistributed') result(s)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: extent
      integer(c_int) :: s
    end function
    function gdap_dim_validate(dim, dim_index, extent) bind(C, name='gdap_dim_validate') result(s)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(in) :: dim
      integer(c_int64_t), value :: dim_index, extent
      integer(c_int) :: s
    end function
    !> `shape` is in C order (dims(1) is C dimension 0); leave it out when unknown.
    function gdap_dims_validate(dims, ndim, shape) bind(C, name='gdap_dims_validate') result(s)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in), optional :: shape(*)
      integer(c_int) :: s
    end function
    function gdap_dim_owned_count(count, dim) bind(C, name='gdap_dim_owned_count') result(s)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: count
      type(gdap_dim), intent(in) :: dim
      integer(c_int) :: s
    end function
    function gdap_dim_local_extent(extent, dim) bind(C, name='gdap_dim_local_extent') result(s)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: extent
      type(gdap_dim), intent(in) :: dim
      integer(c_int) :: s
    end function
    function gdap_dim_global_to_local(local, dim, global) bind(C, name='gdap_dim_global_to_local') result(s)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: local
      type(gdap_dim), intent(in) :: dim
      integer(c_int64_t), value :: global
      integer(c_int) :: s
    end function
    function gdap_dim_local_to_global(global, dim, local) bind(C, name='gdap_dim_local_to_global') result(s)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: global
      type(gdap_dim), intent(in) :: dim
      integer(c_int64_t), value :: local
      integer(c_int) :: s
    end function

    ! --- process grid and runs ---
    function gdap_grid_rank_to_coords(coords, ndim, grid_shape, rank) &
        bind(C, name='gdap_grid_rank_to_coords') result(s)
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(inout) :: coords(*)
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in) :: grid_shape(*)
      integer(c_int64_t), value :: rank
      integer(c_int) :: s
    end function
    function gdap_grid_coords_to_rank(rank, ndim, grid_shape, coords) &
        bind(C, name='gdap_grid_coords_to_rank') result(s)
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(inout) :: rank
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in) :: grid_shape(*), coords(*)
      integer(c_int) :: s
    end function
    function gdap_dim_num_runs(num_runs, dim) bind(C, name='gdap_dim_num_runs') result(s)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: num_runs
      type(gdap_dim), intent(in) :: dim
      integer(c_int) :: s
    end function
    function gdap_dim_runs(runs, written, dim, first, capacity) bind(C, name='gdap_dim_runs') result(s)
      import :: c_int, c_int64_t, gdap_dim, gdap_run
      type(gdap_run), intent(inout) :: runs(*)
      integer(c_int64_t), intent(inout) :: written
      type(gdap_dim), intent(in) :: dim
      integer(c_int64_t), value :: first, capacity
      integer(c_int) :: s
    end function

    ! --- global maps (handles are type(c_ptr)) ---
    function gdap_map_create(map, nranks, ndim, dims) bind(C, name='gdap_map_create') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(c_ptr), intent(inout) :: map
      integer(c_int64_t), value :: nranks, ndim
      type(gdap_dim), intent(in) :: dims(*)  ! rank-major: rank r's C dimension i at r*ndim+i+1
      integer(c_int) :: s
    end function
    ! The whole array on rank `root`, nothing elsewhere (gather / scatter). shape: C order.
    function gdap_map_create_root(map, nranks, ndim, shape, root) bind(C, name='gdap_map_create_root') result(s)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: map
      integer(c_int64_t), value :: nranks, ndim, root
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int) :: s
    end function
    ! The whole array on every rank (allgather / broadcast). shape: C order.
    function gdap_map_create_replicated(map, nranks, ndim, shape) bind(C, name='gdap_map_create_replicated') result(s)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: map
      integer(c_int64_t), value :: nranks, ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int) :: s
    end function
    ! A grid for nranks ranks (MPI_Dims_create's rule): 0 entries of grid_shape are free and set.
    function gdap_grid_balance(grid_shape, ndim, nranks) bind(C, name='gdap_grid_balance') result(s)
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(inout) :: grid_shape(*)
      integer(c_int64_t), value :: ndim, nranks
      integer(c_int) :: s
    end function
    ! A distribution over a process grid, one gdap_axis_layout per C dimension (axes(1): dimension 0).
    function gdap_map_create_grid(map, ndim, axes) bind(C, name='gdap_map_create_grid') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_axis_layout
      type(c_ptr), intent(inout) :: map
      integer(c_int64_t), value :: ndim
      type(gdap_axis_layout), intent(in) :: axes(*)
      integer(c_int) :: s
    end function
    ! Rows held by any rank: rank r holds indices(o_r+1 : o_r+counts(r+1)); other dimensions whole.
    function gdap_map_create_unstructured(map, nranks, ndim, shape, counts, indices, num_indices, one_to_one) &
        bind(C, name='gdap_map_create_unstructured') result(s)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: map
      integer(c_int64_t), value :: nranks, ndim, num_indices
      integer(c_int64_t), intent(in) :: shape(*), counts(*), indices(*)
      integer(c_int), value :: one_to_one
      integer(c_int) :: s
    end function
    function gdap_map_destroy(map) bind(C, name='gdap_map_destroy') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: map
      integer(c_int) :: s
    end function
    function gdap_map_ndim(ndim, map) bind(C, name='gdap_map_ndim') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: ndim
      type(c_ptr), value :: map
      integer(c_int) :: s
    end function
    function gdap_map_nranks(nranks, map) bind(C, name='gdap_map_nranks') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: nranks
      type(c_ptr), value :: map
      integer(c_int) :: s
    end function
    function gdap_map_global_shape(shape, map) bind(C, name='gdap_map_global_shape') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: shape(*)
      type(c_ptr), value :: map
      integer(c_int) :: s
    end function
    function gdap_map_grid_shape(grid_shape, map) bind(C, name='gdap_map_grid_shape') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: grid_shape(*)
      type(c_ptr), value :: map
      integer(c_int) :: s
    end function
    function gdap_map_dim(out, map, rank, dim) bind(C, name='gdap_map_dim') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(gdap_dim), intent(inout) :: out
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank, dim
      integer(c_int) :: s
    end function
    function gdap_map_local_shape(shape, map, rank) bind(C, name='gdap_map_local_shape') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: shape(*)
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int) :: s
    end function
    function gdap_map_owned_shape(shape, map, rank) bind(C, name='gdap_map_owned_shape') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: shape(*)
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int) :: s
    end function
    function gdap_map_owned_count(count, map, rank) bind(C, name='gdap_map_owned_count') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: count
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int) :: s
    end function
    function gdap_map_owner(rank, local, map, global) bind(C, name='gdap_map_owner') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: rank
      integer(c_int64_t), intent(inout), optional :: local(*)
      type(c_ptr), value :: map
      integer(c_int64_t), intent(in) :: global(*)
      integer(c_int) :: s
    end function
    function gdap_map_owners(ranks, count, map, global, capacity) bind(C, name='gdap_map_owners') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout), optional :: ranks(*)  ! leave out (capacity 0) to count
      integer(c_int64_t), intent(inout) :: count
      type(c_ptr), value :: map
      integer(c_int64_t), intent(in) :: global(*)
      integer(c_int64_t), value :: capacity
      integer(c_int) :: s
    end function
    !> ranks, locals, globals: c_loc of host arrays, or CUDA device pointers (CUDA Fortran /
    !> OpenACC host_data use_device) with device%type = GDAP_DEVICE_CUDA and the stream.
    function gdap_map_owner_batch(ranks, locals, map, globals, count, device, stream) &
        bind(C, name='gdap_map_owner_batch') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_device
      type(c_ptr), value :: ranks, locals, map, globals
      integer(c_int64_t), value :: count
      type(gdap_device), value :: device
      type(c_ptr), value :: stream
      integer(c_int) :: s
    end function
    function gdap_map_local_to_global(global, map, rank, local) bind(C, name='gdap_map_local_to_global') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: global(*)
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int64_t), intent(in) :: local(*)
      integer(c_int) :: s
    end function
    function gdap_map_num_runs(num_runs, map, rank, dim) bind(C, name='gdap_map_num_runs') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: num_runs
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank, dim
      integer(c_int) :: s
    end function
    function gdap_map_runs(runs, written, map, rank, dim, first, capacity) bind(C, name='gdap_map_runs') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_run
      type(gdap_run), intent(inout) :: runs(*)
      integer(c_int64_t), intent(inout) :: written
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank, dim, first, capacity
      integer(c_int) :: s
    end function

    ! --- local arrays (handles and DLPack tensors are type(c_ptr)) ---
    function gdap_array_from_dlpack(array, tensor, dims, ndim, version) &
        bind(C, name='gdap_array_from_dlpack') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(c_ptr), intent(inout) :: array
      type(c_ptr), value :: tensor   ! DLManagedTensorVersioned*: taken on success
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      type(c_ptr), value :: version  ! NUL-terminated string or c_null_ptr
      integer(c_int) :: s
    end function
    function gdap_array_from_dlpack_unversioned(array, tensor, dims, ndim, version) &
        bind(C, name='gdap_array_from_dlpack_unversioned') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(c_ptr), intent(inout) :: array
      type(c_ptr), value :: tensor   ! DLManagedTensor*: taken on success
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      type(c_ptr), value :: version
      integer(c_int) :: s
    end function
    !> `data` is retained (keep the Fortran array alive, TARGET attribute); strides c_null_ptr =
    !> C-contiguous. See gdap_array_wrap_fortran for a Fortran array.
    function gdap_array_wrap(array, data, dtype, device, strides, dims, ndim) &
        bind(C, name='gdap_array_wrap') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim, gdap_dtype, gdap_device
      type(c_ptr), intent(inout) :: array
      type(c_ptr), value :: data
      type(gdap_dtype), value :: dtype
      type(gdap_device), value :: device
      type(c_ptr), value :: strides
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      integer(c_int) :: s
    end function
    function gdap_array_create(array, dtype, device, dims, ndim) bind(C, name='gdap_array_create') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim, gdap_dtype, gdap_device
      type(c_ptr), intent(inout) :: array
      type(gdap_dtype), value :: dtype
      type(gdap_device), value :: device
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      integer(c_int) :: s
    end function
    function gdap_array_destroy(array) bind(C, name='gdap_array_destroy') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_to_dlpack(tensor, array) bind(C, name='gdap_array_to_dlpack') result(s)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: tensor  ! DLManagedTensorVersioned*: the caller calls its deleter
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_to_dlpack_unversioned(tensor, array) bind(C, name='gdap_array_to_dlpack_unversioned') result(s)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: tensor
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_ndim(ndim, array) bind(C, name='gdap_array_ndim') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: ndim
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    !> Host sections: c_f_pointer(data, x, gdap_fortran_shape(...)). Device sections: pass `data`
    !> on as a device pointer (CUDA Fortran: c_f_pointer into a device array; OpenACC: deviceptr).
    function gdap_array_data(data, array) bind(C, name='gdap_array_data') result(s)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: data
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_shape(shape, array) bind(C, name='gdap_array_shape') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: shape(*)  ! C order
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_strides(strides, array) bind(C, name='gdap_array_strides') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: strides(*)  ! C order, in elements
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_dtype(dtype, array) bind(C, name='gdap_array_dtype') result(s)
      import :: c_int, c_ptr, gdap_dtype
      type(gdap_dtype), intent(inout) :: dtype
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_device(device, array) bind(C, name='gdap_array_device') result(s)
      import :: c_int, c_ptr, gdap_device
      type(gdap_device), intent(inout) :: device
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_readonly(readonly, array) bind(C, name='gdap_array_readonly') result(s)
      import :: c_int, c_ptr
      integer(c_int), intent(inout) :: readonly
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_dim(out, array, dim) bind(C, name='gdap_array_dim') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(gdap_dim), intent(inout) :: out
      type(c_ptr), value :: array
      integer(c_int64_t), value :: dim
      integer(c_int) :: s
    end function
    function gdap_array_version(version, array) bind(C, name='gdap_array_version') result(s)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: version  ! C string owned by the array
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    function gdap_array_global_to_local(local, array, global) bind(C, name='gdap_array_global_to_local') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: local(*)
      type(c_ptr), value :: array
      integer(c_int64_t), intent(in) :: global(*)
      integer(c_int) :: s
    end function
    function gdap_array_local_to_global(global, array, local) bind(C, name='gdap_array_local_to_global') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: global(*)
      type(c_ptr), value :: array
      integer(c_int64_t), intent(in) :: local(*)
      integer(c_int) :: s
    end function
    ! --- communicators and redistribution (handles are type(c_ptr)) ---
    function gdap_comm_create_group(comms, nranks) bind(C, name='gdap_comm_create_group') result(s)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: comms(*)  ! nranks handles, one per rank
      integer(c_int64_t), value :: nranks
      integer(c_int) :: s
    end function
    function gdap_comm_from_mpi(comm, mpi_comm) bind(C, name='gdap_comm_from_mpi') result(s)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: comm
      integer(c_int), value :: mpi_comm  ! an MPI communicator as Fortran MPI has it: INTEGER, or comm%MPI_VAL (mpi_f08)
      integer(c_int) :: s
    end function
    function gdap_comm_from_nccl(comm, nccl_comm, stream) bind(C, name='gdap_comm_from_nccl') result(s)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: comm
      type(c_ptr), value :: nccl_comm, stream
      integer(c_int) :: s
    end function
    function gdap_comm_destroy(comm) bind(C, name='gdap_comm_destroy') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int) :: s
    end function
    function gdap_comm_rank(rank, comm) bind(C, name='gdap_comm_rank') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: rank
      type(c_ptr), value :: comm
      integer(c_int) :: s
    end function
    function gdap_comm_size(size, comm) bind(C, name='gdap_comm_size') result(s)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: size
      type(c_ptr), value :: comm
      integer(c_int) :: s
    end function
    function gdap_comm_kind_get(kind, comm) bind(C, name='gdap_comm_kind_get') result(s)
      import :: c_int, c_ptr
      integer(c_int), intent(inout) :: kind
      type(c_ptr), value :: comm
      integer(c_int) :: s
    end function
    function gdap_comm_set_stream(comm, stream) bind(C, name='gdap_comm_set_stream') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm, stream
      integer(c_int) :: s
    end function
    function gdap_comm_set_timeout(comm, seconds) bind(C, name='gdap_comm_set_timeout') result(s)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: comm
      real(c_double), value :: seconds
      integer(c_int) :: s
    end function
    ! `check` is c_funloc of a function `integer(c_int) function f(user) bind(C)` taking
    ! `type(c_ptr), value :: user`; c_null_funptr clears it. See gdap.h.
    function gdap_comm_set_interrupt(comm, check, user) bind(C, name='gdap_comm_set_interrupt') result(s)
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: comm
      type(c_funptr), value :: check
      type(c_ptr), value :: user
      integer(c_int) :: s
    end function
    function gdap_comm_barrier(comm) bind(C, name='gdap_comm_barrier') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int) :: s
    end function
    function gdap_map_create_collective(map, comm, ndim, dims) bind(C, name='gdap_map_create_collective') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(c_ptr), intent(inout) :: map
      type(c_ptr), value :: comm
      integer(c_int64_t), value :: ndim
      type(gdap_dim), intent(in) :: dims(*)  ! this rank's dictionaries, C order
      integer(c_int) :: s
    end function
    function gdap_plan_create(plan, src, dst, dtype, rank) bind(C, name='gdap_plan_create') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dtype
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: src, dst
      type(gdap_dtype), value :: dtype
      integer(c_int64_t), value :: rank
      integer(c_int) :: s
    end function
    function gdap_plan_destroy(plan) bind(C, name='gdap_plan_destroy') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: s
    end function
    function gdap_plan_stats_get(stats, plan) bind(C, name='gdap_plan_stats_get') result(s)
      import :: c_int, c_ptr, gdap_plan_stats
      type(gdap_plan_stats), intent(inout) :: stats
      type(c_ptr), value :: plan
      integer(c_int) :: s
    end function
    function gdap_redistribute(comm, plan, src, dst) bind(C, name='gdap_redistribute') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm, plan, src, dst
      integer(c_int) :: s
    end function
    ! Collective, in place: every rank's section becomes the element-wise op (GDAP_REDUCE_*) of all.
    function gdap_allreduce(comm, section, op) bind(C, name='gdap_allreduce') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm, section
      integer(c_int), value :: op
      integer(c_int) :: s
    end function
    ! Collective: each element `result` owns becomes the op over every rank's `source` holding it.
    function gdap_reduce_scatter(comm, source, result, op) bind(C, name='gdap_reduce_scatter') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm, source, result
      integer(c_int), value :: op
      integer(c_int) :: s
    end function
    ! Collective: the global reduction of `source` over axes(1:naxes) (the C API's 0-based axes, in
    ! the order of the dims gdap was given; leave axes out with naxes 0 to reduce every axis), into
    ! the owned elements of `result` (the kept shape in any distribution; 0-d for a full reduction).
    function gdap_reduce_axes(comm, source, result, op, axes, naxes) bind(C, name='gdap_reduce_axes') result(s)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: comm, source, result
      integer(c_int), value :: op
      integer(c_int64_t), intent(in), optional :: axes(*)
      integer(c_int64_t), value :: naxes
      integer(c_int) :: s
    end function
    ! --- halo exchange ---
    function gdap_halo_create(halo, map, dtype, rank, options) bind(C, name='gdap_halo_create') result(s)
      import :: c_int, c_int64_t, c_ptr, gdap_dtype, gdap_halo_options
      type(c_ptr), intent(inout) :: halo
      type(c_ptr), value :: map
      type(gdap_dtype), value :: dtype
      integer(c_int64_t), value :: rank
      type(gdap_halo_options), intent(in) :: options  ! gdap_halo_options() for the defaults
      integer(c_int) :: s
    end function
    function gdap_halo_destroy(halo) bind(C, name='gdap_halo_destroy') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: halo
      integer(c_int) :: s
    end function
    function gdap_halo_stats_get(stats, halo) bind(C, name='gdap_halo_stats_get') result(s)
      import :: c_int, c_ptr, gdap_halo_stats
      type(gdap_halo_stats), intent(inout) :: stats
      type(c_ptr), value :: halo
      integer(c_int) :: s
    end function
    function gdap_halo_exchange(comm, halo, local) bind(C, name='gdap_halo_exchange') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm, halo, local
      integer(c_int) :: s
    end function
    ! A persistent exchange: checked and agreed once (collective), then started again and again.
    function gdap_halo_exchange_init(exchange, comm, halo, local) bind(C, name='gdap_halo_exchange_init') result(s)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: exchange
      type(c_ptr), value :: comm, halo, local
      integer(c_int) :: s
    end function
    function gdap_exchange_start(exchange) bind(C, name='gdap_exchange_start') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: exchange
      integer(c_int) :: s
    end function
    function gdap_exchange_destroy(exchange) bind(C, name='gdap_exchange_destroy') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: exchange
      integer(c_int) :: s
    end function
    ! --- distributed GEMM (C order: a Fortran column-major matrix is the C-order transpose) ---
    function gdap_gemm_create(gemm, comm, a, b, c, dtype, options) bind(C, name='gdap_gemm_create') result(s)
      import :: c_int, c_ptr, gdap_dtype, gdap_gemm_options
      type(c_ptr), intent(inout) :: gemm
      type(c_ptr), value :: comm, a, b, c
      type(gdap_dtype), value :: dtype
      type(gdap_gemm_options), intent(in) :: options  ! gdap_gemm_options() for the defaults
      integer(c_int) :: s
    end function
    function gdap_gemm_destroy(gemm) bind(C, name='gdap_gemm_destroy') result(s)
      import :: c_int, c_ptr
      type(c_ptr), value :: gemm
      integer(c_int) :: s
    end function
    function gdap_gemm_stats_get(stats, gemm) bind(C, name='gdap_gemm_stats_get') result(s)
      import :: c_int, c_ptr, gdap_gemm_stats
      type(gdap_gemm_stats), intent(inout) :: stats
      type(c_ptr), value :: gemm
      integer(c_int) :: s
    end function
    function gdap_gemm_execute(comm, gemm, alpha, a, b, beta, c) bind(C, name='gdap_gemm_execute') result(s)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: comm, gemm
      real(c_double), value :: alpha
      type(c_ptr), value :: a, b
      real(c_double), value :: beta
      type(c_ptr), value :: c
      integer(c_int) :: s
    end function
    ! --- .dnpy files, DistArray's per-rank format (prefix NUL-terminated: trim(prefix)//c_null_char;
    !     each rank's file is <prefix>_<rank>.dnpy) ---
    function gdap_save_dnpy(comm, section, prefix) bind(C, name='gdap_save_dnpy') result(s)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: comm, section
      character(kind=c_char), intent(in) :: prefix(*)
      integer(c_int) :: s
    end function
    !> out: a new C-contiguous section (C order: a Fortran array of the reversed shape), destroyed
    !> with gdap_array_destroy.
    function gdap_load_dnpy(comm, out, prefix, device) bind(C, name='gdap_load_dnpy') result(s)
      import :: c_int, c_ptr, c_char, gdap_device
      type(c_ptr), value :: comm
      type(c_ptr), intent(inout) :: out
      character(kind=c_char), intent(in) :: prefix(*)
      type(gdap_device), value :: device
      integer(c_int) :: s
    end function
    ! --- Zarr v3 stores (paths NUL-terminated: trim(path)//c_null_char) ---
    function gdap_save_zarr(comm, map, section, path, options) bind(C, name='gdap_save_zarr') result(s)
      import :: c_int, c_ptr, c_char, gdap_zarr_options
      type(c_ptr), value :: comm, map, section
      character(kind=c_char), intent(in) :: path(*)
      type(gdap_zarr_options), intent(in) :: options  ! gdap_zarr_options() for the defaults
      integer(c_int) :: s
    end function
    function gdap_load_zarr(comm, map, section, path) bind(C, name='gdap_load_zarr') result(s)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: comm, map, section
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: s
    end function
    function gdap_zarr_shape(path, ndim, shape, capacity, dtype) bind(C, name='gdap_zarr_shape') result(s)
      import :: c_int, c_int64_t, c_char, gdap_dtype
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int64_t), intent(inout) :: ndim
      integer(c_int64_t), intent(inout) :: shape(*)  ! C order (the store's), capacity entries
      integer(c_int64_t), value :: capacity
      type(gdap_dtype), intent(inout) :: dtype
      integer(c_int) :: s
    end function
    ! --- IPC: sharing a section with another process of the node (docs/ipc.md) ---
    !> name: the shm segment's name, NUL-terminated ('/solver-0'//c_null_char), or c_null_char alone
    !> for a fresh one. The array owns the segment (unlinked when it is destroyed).
    function gdap_array_create_shm(array, name, dtype, dims, ndim) bind(C, name='gdap_array_create_shm') result(s)
      import :: c_int, c_int64_t, c_ptr, c_char, gdap_dim, gdap_dtype
      type(c_ptr), intent(inout) :: array
      character(kind=c_char), intent(in) :: name(*)
      type(gdap_dtype), value :: dtype
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      integer(c_int) :: s
    end function
    !> handle: integer(c_int8_t) :: handle(GDAP_IPC_HANDLE_SIZE), written on success (capacity = its size).
    function gdap_ipc_export(handle, capacity, array) bind(C, name='gdap_ipc_export') result(s)
      import :: c_int, c_int8_t, c_int64_t, c_ptr
      integer(c_int8_t), intent(inout) :: handle(*)
      integer(c_int64_t), value :: capacity
      type(c_ptr), value :: array
      integer(c_int) :: s
    end function
    !> handle: the GDAP_IPC_HANDLE_SIZE bytes another process exported; size must be GDAP_IPC_HANDLE_SIZE.
    function gdap_ipc_open(array, handle, size) bind(C, name='gdap_ipc_open') result(s)
      import :: c_int, c_int8_t, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: array
      integer(c_int8_t), intent(in) :: handle(*)
      integer(c_int64_t), value :: size
      integer(c_int) :: s
    end function
  end interface

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
      s = GDAP_ERR_INVALID_ARGUMENT
      return
    end if
    allocate(shape(max(ndim, 1_c_int64_t)), strides(max(ndim, 1_c_int64_t)))
    s = gdap_array_shape(shape, array)
    if (s == GDAP_SUCCESS) s = gdap_array_strides(strides, array)
    if (s /= GDAP_SUCCESS) return
    expected = 1
    do i = int(ndim), 1, -1
      if (shape(i) > 1 .and. strides(i) /= expected) then
        s = GDAP_ERR_UNSUPPORTED
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
    s = gdap_array_wrap(array, data, dtype, gdap_device(GDAP_DEVICE_CPU, 0), c_null_ptr, dims, &
                        int(size(dims), c_int64_t))
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
    s = grid_axes(axes, shape, grid)
    if (s /= GDAP_SUCCESS) return
    if (present(halo)) axes%halo = halo
    if (present(periodic)) axes%periodic = periodic
    s = gdap_map_create_grid(map, int(size(axes), c_int64_t), axes)
  end function gdap_layout_block

  !> Cyclic (block_size 1, the default) or block-cyclic dimensions over the grid `grid` (C order).
  function gdap_layout_cyclic(map, shape, grid, block_size) result(s)
    type(c_ptr), intent(inout) :: map
    integer(c_int64_t), intent(in) :: shape(:), grid(:)
    integer(c_int64_t), intent(in), optional :: block_size(:)
    integer(c_int) :: s
    type(gdap_axis_layout) :: axes(size(shape))
    s = grid_axes(axes, shape, grid)
    if (s /= GDAP_SUCCESS) return
    axes%dist_type = GDAP_DIST_CYCLIC
    if (present(block_size)) axes%block_size = block_size
    s = gdap_map_create_grid(map, int(size(axes), c_int64_t), axes)
  end function gdap_layout_cyclic

  !> Each axis's size and grid extent (GDAP_ERR_INVALID_ARGUMENT unless grid has one per dimension).
  function grid_axes(axes, shape, grid) result(s)
    type(gdap_axis_layout), intent(inout) :: axes(:)
    integer(c_int64_t), intent(in) :: shape(:), grid(:)
    integer(c_int) :: s
    s = GDAP_ERR_INVALID_ARGUMENT
    if (size(grid) /= size(shape)) return
    axes%size = shape
    axes%grid_size = grid
    s = GDAP_SUCCESS
  end function grid_axes

end module gdap

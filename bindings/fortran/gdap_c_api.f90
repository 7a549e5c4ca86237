! gdap_c_api: gdap's C ABI (include/gdap/gdap.h, gdap_mpi.h, gdap_cuda.h) for Fortran, over ISO_C_BINDING.
! GENERATED from the headers by tools/abigen/generate.py: do not edit. After changing a header, run
!   tools/abigen/generate.py --write
! (the ctest bindings.generated fails while this file differs from what the generator writes).
!
! Every C function has an interface of the same name with the same parameters in the same order,
! returning the gdap_status as integer(c_int). The translation, parameter by parameter:
!  - handles (gdap_map*, gdap_array*, gdap_comm*, ...) are type(c_ptr), value; a handle that a call
!    creates (gdap_x** out) is type(c_ptr), intent(inout);
!  - a pointer to one value is that value's type: intent(in) when C reads it (const), else intent(inout)
!    (not intent(out): gdap leaves an out-parameter untouched when a call fails, and intent(out) would
!    let the compiler discard the caller's value first);
!  - a pointer to several values (the header's comment [n] after the parameter) is an assumed-size
!    array x(*), in C order (0-based indices, dimension 0 first); one that may be NULL (or NULL) is
!    optional;
!  - strings are character(kind=c_char) arrays, NUL-terminated by the caller: trim(s)//c_null_char;
!  - memory gdap keeps after the call (retained), may find on a device (host or device) or takes as
!    raw bytes of any type (void*) is type(c_ptr), value: c_loc of a TARGET, or a device pointer;
!  - structs are bind(C) derived types, field for field, their defaults the header's _INIT macro
!    (struct_size as the C compiler on LP64 systems computes it: the test bindings.fortran_layout checks).
! The module gdap (gdap.f90) re-exports all of this with Fortran conveniences; use that one.
module gdap_c_api
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! ---- constants (enums and macros of the headers) ----

  ! Library version (semantic): a minor release adds functions and appends struct fields only.
  integer(c_int), parameter, public :: GDAP_VERSION_MAJOR = 0
  ! minor version: functions added, fields appended
  integer(c_int), parameter, public :: GDAP_VERSION_MINOR = 2
  integer(c_int), parameter, public :: GDAP_VERSION_PATCH = 0  ! patch version: fixes only

  ! The version as one number, major * 10000 + minor * 100 + patch; compare with gdap_version().
  integer(c_int), parameter, public :: GDAP_VERSION_NUMBER = 200

  ! The Distributed Array Protocol version gdap produces.
  character(len=*), parameter, public :: GDAP_PROTOCOL_VERSION = '0.10.0'
  integer(c_int), parameter, public :: GDAP_PROTOCOL_MAJOR = 0  ! protocol major version gdap reads
  ! the protocol minor version gdap reads (any patch)
  integer(c_int), parameter, public :: GDAP_PROTOCOL_MINOR = 10

  ! gdap_status: The result of every gdap call.
  integer(c_int), parameter, public :: GDAP_SUCCESS = 0
  ! a NULL pointer, a bad enum value, a size the call cannot take
  integer(c_int), parameter, public :: GDAP_ERR_INVALID_ARGUMENT = 1
  integer(c_int), parameter, public :: GDAP_ERR_PROTOCOL = 2  ! a descriptor breaks a rule of the protocol
  ! a protocol or DLPack version this gdap does not know
  integer(c_int), parameter, public :: GDAP_ERR_VERSION = 3
  ! a size, offset or product does not fit in int64_t
  integer(c_int), parameter, public :: GDAP_ERR_OVERFLOW = 4
  ! an index, rank or dimension outside its range
  integer(c_int), parameter, public :: GDAP_ERR_OUT_OF_RANGE = 5
  ! a global index this process (or any process) does not hold
  integer(c_int), parameter, public :: GDAP_ERR_NOT_FOUND = 6
  ! an output buffer is smaller than the result; the count says how large
  integer(c_int), parameter, public :: GDAP_ERR_BUFFER_TOO_SMALL = 7
  integer(c_int), parameter, public :: GDAP_ERR_NO_MEMORY = 8  ! an allocation failed
  ! a device, dtype or feature this build does not support
  integer(c_int), parameter, public :: GDAP_ERR_UNSUPPORTED = 9
  ! a CUDA call failed (no device, out of device memory, ...)
  integer(c_int), parameter, public :: GDAP_ERR_DEVICE = 10
  integer(c_int), parameter, public :: GDAP_ERR_COMM = 11  ! a communication call failed (MPI, NCCL)
  integer(c_int), parameter, public :: GDAP_ERR_REMOTE = 12  ! another rank failed a collective call
  integer(c_int), parameter, public :: GDAP_ERR_TIMEOUT = 13  ! a collective call did not complete in time
  integer(c_int), parameter, public :: GDAP_ERR_IO = 14  ! reading or writing a file failed
  ! a bug in gdap: please report it with gdap_last_error()
  integer(c_int), parameter, public :: GDAP_ERR_INTERNAL = 15
  ! a wait at a collective call was interrupted (gdap_comm_set_interrupt)
  integer(c_int), parameter, public :: GDAP_ERR_INTERRUPTED = 16

  integer(c_int8_t), parameter, public :: GDAP_DTYPE_INT = 0
  integer(c_int8_t), parameter, public :: GDAP_DTYPE_UINT = 1
  integer(c_int8_t), parameter, public :: GDAP_DTYPE_FLOAT = 2
  integer(c_int8_t), parameter, public :: GDAP_DTYPE_BFLOAT = 4
  integer(c_int8_t), parameter, public :: GDAP_DTYPE_COMPLEX = 5
  integer(c_int8_t), parameter, public :: GDAP_DTYPE_BOOL = 6

  integer(c_int32_t), parameter, public :: GDAP_DEVICE_CPU = 1  ! ordinary host memory
  integer(c_int32_t), parameter, public :: GDAP_DEVICE_CUDA = 2  ! CUDA device memory
  integer(c_int32_t), parameter, public :: GDAP_DEVICE_CUDA_HOST = 3  ! CUDA pinned host memory
  integer(c_int32_t), parameter, public :: GDAP_DEVICE_CUDA_MANAGED = 13  ! CUDA managed (unified) memory

  ! gdap_dist_type: The protocol's dist_type values; the enum value is the protocol's character.
  ! the empty dictionary {}: an alias resolved from the buffer shape
  integer(c_int32_t), parameter, public :: GDAP_DIST_UNDISTRIBUTED = 0
  ! 'b': block: start, stop; optional padding, periodic
  integer(c_int32_t), parameter, public :: GDAP_DIST_BLOCK = 98
  ! 'c': cyclic / block-cyclic: start; optional block_size
  integer(c_int32_t), parameter, public :: GDAP_DIST_CYCLIC = 99
  ! 'u': unstructured: indices; optional one_to_one
  integer(c_int32_t), parameter, public :: GDAP_DIST_UNSTRUCTURED = 117

  ! Bits of gdap_dim.given: which optional keys the dictionary holds.
  integer(c_int32_t), parameter, public :: GDAP_KEY_PADDING = 1  ! 'b': padding
  integer(c_int32_t), parameter, public :: GDAP_KEY_PERIODIC = 2  ! 'b': periodic
  integer(c_int32_t), parameter, public :: GDAP_KEY_BLOCK_SIZE = 4  ! 'c': block_size
  integer(c_int32_t), parameter, public :: GDAP_KEY_ONE_TO_ONE = 8  ! 'u': one_to_one

  ! Versioned structs (gdap_dim, the _options and _stats structs) begin with `uint32_t struct_size`, set by
  ! their _INIT macro.
  integer(c_int64_t), parameter, public :: GDAP_MAX_STRUCT_SIZE = 1024

  ! gdap_comm_kind: What a communicator moves data with.
  ! an in-process group: ranks are threads of this process
  integer(c_int), parameter, public :: GDAP_COMM_GROUP = 1
  integer(c_int), parameter, public :: GDAP_COMM_MPI = 2  ! an MPI communicator (gdap_mpi.h)
  ! an NCCL communicator and a CUDA stream (gdap_cuda.h)
  integer(c_int), parameter, public :: GDAP_COMM_NCCL = 3

  ! gdap_reduce_op: Reductions (gdap_allreduce, gdap_reduce_scatter, gdap_reduce_axes).
  integer(c_int), parameter, public :: GDAP_REDUCE_SUM = 1
  integer(c_int), parameter, public :: GDAP_REDUCE_PROD = 2
  integer(c_int), parameter, public :: GDAP_REDUCE_MIN = 3
  integer(c_int), parameter, public :: GDAP_REDUCE_MAX = 4
  ! gdap_reduce_axes only, float32/64: the sum over the count of elements
  integer(c_int), parameter, public :: GDAP_REDUCE_MEAN = 5

  ! gdap_zarr_codec: Codecs gdap_zarr_save can write (gdap_zarr_load reads these and more: docs/zarr.md).
  integer(c_int32_t), parameter, public :: GDAP_ZARR_RAW = 0  ! "bytes" (little endian) only: uncompressed
  integer(c_int32_t), parameter, public :: GDAP_ZARR_ZSTD = 1  ! "bytes" then "zstd" (zarr-python's default)
  ! "bytes" then "blosc" with lz4 (numcodecs' default), shuffled by `shuffle`
  integer(c_int32_t), parameter, public :: GDAP_ZARR_BLOSC_LZ4 = 2
  ! "bytes" then "blosc" with zstd, shuffled by `shuffle`
  integer(c_int32_t), parameter, public :: GDAP_ZARR_BLOSC_ZSTD = 3

  ! gdap_zarr_layout: How gdap_zarr_save lays out the store's files.
  ! one shard ("sharding_indexed") per rank's block, of inner chunks of at most chunk_bytes (default): a
  ! reader of any layout reads only the inner chunks it needs
  integer(c_int32_t), parameter, public :: GDAP_ZARR_SHARDS = 0
  ! one chunk file per rank's block, no sharding (gdap 0.1's only layout)
  integer(c_int32_t), parameter, public :: GDAP_ZARR_CHUNKS = 1

  ! gdap_zarr_shuffle: How blosc rearranges the bytes of a chunk before compressing them.
  ! bytes grouped by their position in an element (blosc's and gdap's default)
  integer(c_int32_t), parameter, public :: GDAP_ZARR_SHUFFLE = 0
  integer(c_int32_t), parameter, public :: GDAP_ZARR_NOSHUFFLE = 1  ! as they are
  ! bits grouped by their position in an element
  integer(c_int32_t), parameter, public :: GDAP_ZARR_BITSHUFFLE = 2

  ! gdap_gemm_mode: How the local products are computed.
  ! default: fp32 products for float32, fp64 for float64
  integer(c_int32_t), parameter, public :: GDAP_GEMM_EXACT = 0
  ! float32 only, device only: inputs rounded to TF32 on tensor cores
  integer(c_int32_t), parameter, public :: GDAP_GEMM_TF32 = 1
  ! float32 only, device only: inputs rounded to bfloat16 on tensor cores
  integer(c_int32_t), parameter, public :: GDAP_GEMM_BF16 = 2

  ! Bytes of an IPC handle: every handle has exactly this size, whatever the array.
  integer(c_int64_t), parameter, public :: GDAP_IPC_HANDLE_SIZE = 2048

  ! The most dimensions a section shared through an IPC handle may have.
  integer(c_int64_t), parameter, public :: GDAP_IPC_MAX_NDIM = 8

  ! The 8 bytes an IPC handle starts with (no terminating NUL in the handle).
  character(len=*), parameter, public :: GDAP_IPC_MAGIC = 'GDAP-IPC'

  ! The layout version of IPC handles this gdap writes and reads.
  integer(c_int64_t), parameter, public :: GDAP_IPC_FORMAT_VERSION = 2

  ! ---- structs ----

  !> Element type; the same layout and codes as DLPack's DLDataType.
  type, bind(C), public :: gdap_dtype
    integer(c_int8_t) :: code  ! GDAP_DTYPE_* (DLPack's DLDataTypeCode)
    integer(c_int8_t) :: bits  ! bits per lane
    integer(c_int16_t) :: lanes  ! 1 for scalars
  end type gdap_dtype

  !> Where the data lives; the same layout and codes as DLPack's DLDevice.
  type, bind(C), public :: gdap_device
    integer(c_int32_t) :: type  ! GDAP_DEVICE_* (DLPack's DLDeviceType)
    integer(c_int32_t) :: id  ! device ordinal; 0 for host memory
  end type gdap_device

  !> One dimension dictionary.
  !> Defaults: GDAP_DIM_INIT (struct_size 104 bytes).
  type, bind(C), public :: gdap_dim
    ! sizeof(gdap_dim) as the caller compiled it (GDAP_DIM_INIT sets it)
    integer(c_int32_t) :: struct_size = 104
    integer(c_int32_t) :: given = 0  ! GDAP_KEY_* bits of the optional keys present
    integer(c_int32_t) :: dist_type = GDAP_DIST_UNDISTRIBUTED  ! a gdap_dist_type
    integer(c_int32_t) :: periodic = 0  ! 'b': non-zero if the dimension wraps (needs GDAP_KEY_PERIODIC)
    integer(c_int64_t) :: size = 0  ! global number of elements along this dimension, >= 0
    integer(c_int64_t) :: proc_grid_size = 1  ! processes along this dimension of the process grid, >= 1
    integer(c_int64_t) :: proc_grid_rank = 0  ! this process's coordinate along it, 0 <= rank < proc_grid_size
    integer(c_int64_t) :: start = 0  ! 'b', 'c': first global index held (for 'b' including padding)
    integer(c_int64_t) :: stop = 0  ! 'b': one past the last global index held (including padding)
    integer(c_int64_t) :: padding(2) = 0  ! 'b': elements of padding below and above (needs GDAP_KEY_PADDING)
    integer(c_int64_t) :: block_size = 1  ! 'c': length of the blocks dealt round-robin, >= 1 (default 1)
    ! 'u': global indices held, in local order; borrowed or owned as the function that filled the struct says
    type(c_ptr) :: indices = c_null_ptr
    integer(c_int64_t) :: num_indices = 0  ! 'u': length of `indices`
    integer(c_int32_t) :: one_to_one = 0  ! 'u': non-zero if every global index lives on exactly one process
    integer(c_int32_t) :: reserved = 0  ! must be 0
  end type gdap_dim

  !> A run of owned global indices that sit contiguously in the local buffer: global indices [global_start,
  !> global_start + length) live at local [local_start, local_start + length) along one dimension.
  type, bind(C), public :: gdap_run
    integer(c_int64_t) :: global_start  ! first global index of the run
    integer(c_int64_t) :: length  ! number of indices in the run, >= 1
    integer(c_int64_t) :: local_start  ! local index of global_start in the buffer
  end type gdap_run

  !> How gdap_map_create_grid lays out one dimension over one axis of the process grid.
  !> Defaults: GDAP_AXIS_LAYOUT_INIT (struct_size 56 bytes).
  type, bind(C), public :: gdap_axis_layout
    ! sizeof(gdap_axis_layout) as the caller compiled it (GDAP_AXIS_LAYOUT_INIT sets it)
    integer(c_int32_t) :: struct_size = 56
    integer(c_int32_t) :: dist_type = GDAP_DIST_BLOCK  ! GDAP_DIST_BLOCK (default) or GDAP_DIST_CYCLIC
    integer(c_int64_t) :: size = 0  ! global length of the dimension, >= 0
    integer(c_int64_t) :: grid_size = 1  ! processes along this axis of the grid, >= 1 (default 1)
    ! 'c': length of the blocks dealt round-robin, >= 1 (default 1: cyclic); 'b': 1
    integer(c_int64_t) :: block_size = 1
    ! 'b': NULL (default) for even blocks, or grid_size owned lengths >= 0 that sum to size (irregular
    ! blocks); borrowed for the call.
    type(c_ptr) :: lengths = c_null_ptr
    ! 'b': cells of communication padding towards each neighbour, >= 0 (default 0)
    integer(c_int64_t) :: halo = 0
    ! 'b': non-zero if the dimension wraps (the 'periodic' key; see gdap_map_create_grid)
    integer(c_int32_t) :: periodic = 0
    integer(c_int32_t) :: reserved = 0  ! must be 0
  end type gdap_axis_layout

  !> What one rank's plan moves.
  !> Defaults: GDAP_PLAN_STATS_INIT (struct_size 88 bytes).
  type, bind(C), public :: gdap_plan_stats
    ! set by the caller to sizeof(gdap_plan_stats) (GDAP_PLAN_STATS_INIT)
    integer(c_int32_t) :: struct_size = 88
    integer(c_int32_t) :: reserved_head = 0  ! 0
    integer(c_int64_t) :: rank = 0  ! the rank planned
    integer(c_int64_t) :: nranks = 0  ! ranks in the group
    integer(c_int64_t) :: send_messages = 0  ! messages to other ranks
    integer(c_int64_t) :: recv_messages = 0  ! messages from other ranks
    integer(c_int64_t) :: send_bytes = 0  ! bytes to other ranks
    integer(c_int64_t) :: recv_bytes = 0  ! bytes from other ranks
    integer(c_int64_t) :: local_bytes = 0  ! bytes copied within the rank
    integer(c_int64_t) :: send_runs = 0  ! contiguous runs sent (C-order local sections)
    integer(c_int64_t) :: recv_runs = 0  ! contiguous runs received
    integer(c_int64_t) :: local_runs = 0  ! contiguous runs copied within the rank
  end type gdap_plan_stats

  !> How a halo is exchanged.
  !> Defaults: GDAP_HALO_OPTIONS_INIT (struct_size 16 bytes).
  type, bind(C), public :: gdap_halo_options
    integer(c_int32_t) :: struct_size = 16  ! sizeof(gdap_halo_options) as the caller compiled it
    ! non-zero (default): edges and corners too (a full-neighbourhood stencil); 0: faces only (cells that
    ! differ from owned ones along one dimension)
    integer(c_int32_t) :: corners = 1
    ! NULL (default): all padding; else ndim caps >= 0: along dimension i only the widths[i] cells next to the
    ! kept ones (owned, less periodic boundary padding) on each side are filled (0: none).
    type(c_ptr) :: widths = c_null_ptr
  end type gdap_halo_options

  !> What one rank's halo exchange moves.
  !> Defaults: GDAP_HALO_STATS_INIT (struct_size 64 bytes).
  type, bind(C), public :: gdap_halo_stats
    ! set by the caller to sizeof(gdap_halo_stats) (GDAP_HALO_STATS_INIT)
    integer(c_int32_t) :: struct_size = 64
    integer(c_int32_t) :: reserved_head = 0  ! 0
    integer(c_int64_t) :: rank = 0  ! the rank planned
    integer(c_int64_t) :: nranks = 0  ! ranks in the group
    integer(c_int64_t) :: send_messages = 0  ! messages to other ranks (one per neighbour rank)
    integer(c_int64_t) :: recv_messages = 0  ! messages from other ranks
    integer(c_int64_t) :: send_bytes = 0  ! bytes to other ranks
    integer(c_int64_t) :: recv_bytes = 0  ! bytes from other ranks
    integer(c_int64_t) :: local_bytes = 0  ! bytes copied within the rank (a periodic wrap onto itself)
  end type gdap_halo_stats

  !> Options of gdap_zarr_save.
  !> Defaults: GDAP_ZARR_OPTIONS_INIT (struct_size 40 bytes).
  type, bind(C), public :: gdap_zarr_options
    ! set by the caller to sizeof(gdap_zarr_options) (GDAP_ZARR_OPTIONS_INIT)
    integer(c_int32_t) :: struct_size = 40
    integer(c_int32_t) :: reserved_head = 0  ! 0
    integer(c_int32_t) :: codec = GDAP_ZARR_ZSTD  ! a gdap_zarr_codec
    ! the codec's level: zstd 1 to 22 (0: zstd's default, 3); blosc 1 to 9 (0: 5); ignored for GDAP_ZARR_RAW.
    integer(c_int32_t) :: zstd_level = 0
    integer(c_int32_t) :: overwrite = 0  ! nonzero: replace a store already at the path; 0: refuse it
    integer(c_int32_t) :: reserved = 0  ! 0
    ! a gdap_zarr_layout: GDAP_ZARR_SHARDS (default) or GDAP_ZARR_CHUNKS
    integer(c_int32_t) :: layout = GDAP_ZARR_SHARDS
    integer(c_int32_t) :: shuffle = GDAP_ZARR_SHUFFLE  ! a gdap_zarr_shuffle, for the blosc codecs
    ! GDAP_ZARR_SHARDS: the most bytes of an inner chunk (0: 2 MiB); each inner chunk extent divides the
    ! block's, halving the widest until it fits
    integer(c_int64_t) :: chunk_bytes = 0
  end type gdap_zarr_options

  !> Options of gdap_gemm_create.
  !> Defaults: GDAP_GEMM_OPTIONS_INIT (struct_size 16 bytes).
  type, bind(C), public :: gdap_gemm_options
    integer(c_int32_t) :: struct_size = 16  ! sizeof(gdap_gemm_options) as the caller compiled it
    integer(c_int32_t) :: mode = GDAP_GEMM_EXACT  ! a gdap_gemm_mode (default GDAP_GEMM_EXACT)
    ! widest k-panel broadcast per SUMMA step, >= 0; 0 (default) picks 1024
    integer(c_int64_t) :: panel_width = 0
  end type gdap_gemm_options

  !> What one rank's gemm plan does per gdap_gemm_execute.
  !> Defaults: GDAP_GEMM_STATS_INIT (struct_size 112 bytes).
  type, bind(C), public :: gdap_gemm_stats
    ! set by the caller to sizeof(gdap_gemm_stats) (GDAP_GEMM_STATS_INIT)
    integer(c_int32_t) :: struct_size = 112
    integer(c_int32_t) :: reserved_head = 0  ! 0
    integer(c_int64_t) :: rank = 0  ! the rank planned
    integer(c_int64_t) :: nranks = 0  ! ranks in the group
    integer(c_int64_t) :: grid_rows = 0  ! rows of the process grid SUMMA runs on
    integer(c_int64_t) :: grid_cols = 0  ! columns of that grid
    integer(c_int64_t) :: redistributed_a = 0  ! 1 if A is redistributed to fit SUMMA at each execute, else 0
    integer(c_int64_t) :: redistributed_b = 0  ! 1 if B is
    integer(c_int64_t) :: redistributed_c = 0  ! 1 if C is (in before the product and out after it)
    ! bytes this rank sends and receives in those redistributions
    integer(c_int64_t) :: redistribute_bytes = 0
    integer(c_int64_t) :: panels = 0  ! SUMMA steps (k-panels)
    integer(c_int64_t) :: panel_bytes = 0  ! bytes of panels this rank receives from other ranks
    integer(c_int64_t) :: local_m = 0  ! rows of this rank's working block of C
    integer(c_int64_t) :: local_n = 0  ! columns of this rank's working block of C
    ! floating-point operations of this rank's local products (2 m n k); INT64_MAX (9.2e18) where that exceeds
    ! int64
    integer(c_int64_t) :: flops = 0
  end type gdap_gemm_stats

  ! ---- functions ----
  public :: gdap_status_string, gdap_last_error, gdap_last_error_set, gdap_version, gdap_version_string, &
      gdap_protocol_version_check, gdap_dim_init, gdap_dim_set_block, gdap_dim_set_padding, &
      gdap_dim_set_periodic, gdap_dim_set_cyclic, gdap_dim_set_unstructured, gdap_dim_set_undistributed, &
      gdap_dim_validate, gdap_dims_validate, gdap_dim_owned_count, gdap_dim_local_extent, &
      gdap_dim_global_to_local, gdap_dim_local_to_global, gdap_grid_rank_to_coords, &
      gdap_grid_coords_to_rank, gdap_dim_num_runs, gdap_dim_runs, gdap_map_create, gdap_map_create_root, &
      gdap_map_create_replicated, gdap_grid_balance, gdap_map_create_grid, gdap_map_create_unstructured, &
      gdap_map_destroy, gdap_map_ndim, gdap_map_nranks, gdap_map_global_shape, gdap_map_grid_shape, &
      gdap_map_dim, gdap_map_local_shape, gdap_map_owned_shape, gdap_map_owned_count, gdap_map_owner, &
      gdap_map_owners, gdap_map_owner_batch, gdap_map_local_to_global, gdap_map_num_runs, gdap_map_runs, &
      gdap_array_from_dlpack, gdap_array_from_dlpack_unversioned, gdap_array_wrap, gdap_array_create, &
      gdap_array_destroy, gdap_array_to_dlpack, gdap_array_to_dlpack_unversioned, gdap_array_ndim, &
      gdap_array_data, gdap_array_shape, gdap_array_strides, gdap_array_dtype, gdap_array_device, &
      gdap_array_readonly, gdap_array_dim, gdap_array_version, gdap_array_global_to_local, &
      gdap_array_local_to_global, gdap_comm_create_group, gdap_comm_destroy, gdap_comm_rank, gdap_comm_size, &
      gdap_comm_kind_get, gdap_comm_set_stream, gdap_comm_set_timeout, gdap_comm_set_interrupt, &
      gdap_comm_fail_next, gdap_comm_barrier, gdap_map_create_collective, gdap_plan_create, &
      gdap_plan_roles_keeping, gdap_plan_create_with_roles, gdap_plan_destroy, gdap_plan_stats_get, &
      gdap_redistribute, gdap_allreduce, gdap_reduce_scatter, gdap_reduce_axes, gdap_halo_create, &
      gdap_halo_destroy, gdap_halo_stats_get, gdap_halo_exchange, gdap_halo_exchange_init, &
      gdap_exchange_start, gdap_exchange_destroy, gdap_dnpy_save, gdap_dnpy_load, gdap_zarr_save, &
      gdap_zarr_load, gdap_zarr_shape_read, gdap_gemm_create, gdap_gemm_destroy, gdap_gemm_stats_get, &
      gdap_gemm_execute, gdap_array_create_shm, gdap_ipc_export, gdap_ipc_open, gdap_comm_from_mpi, &
      gdap_comm_from_nccl

  interface

    ! ---- gdap.h ----

    !> The name of a status code, e.g. "GDAP_ERR_PROTOCOL".
    function gdap_status_string(status) bind(C, name='gdap_status_string') result(res)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: res
    end function gdap_status_string

    !> The detail of the last failed gdap call on this thread, e.g. "dimension 1 ('b'): stop (12) > size
    !> (10)".
    function gdap_last_error() bind(C, name='gdap_last_error') result(res)
      import :: c_ptr
      type(c_ptr) :: res
    end function gdap_last_error

    !> Records a binding's own refusal (a check made in the binding, before any gdap call) as this thread's
    !> gdap_last_error, so that callers read one place for every error's detail.
    function gdap_last_error_set(status, message) bind(C, name='gdap_last_error_set') result(res)
      import :: c_char, c_int
      integer(c_int), value :: status
      character(kind=c_char), intent(in), optional :: message(*)
      integer(c_int) :: res
    end function gdap_last_error_set

    !> The library version as GDAP_VERSION_NUMBER of the build that is loaded (never fails).
    function gdap_version() bind(C, name='gdap_version') result(res)
      import :: c_int
      integer(c_int) :: res
    end function gdap_version

    !> The library version as a static string "major.minor.patch" (never fails).
    function gdap_version_string() bind(C, name='gdap_version_string') result(res)
      import :: c_ptr
      type(c_ptr) :: res
    end function gdap_version_string

    !> Checks a protocol version string ("major.minor.patch").
    function gdap_protocol_version_check(version) bind(C, name='gdap_protocol_version_check') result(res)
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: version(*)
      integer(c_int) :: res
    end function gdap_protocol_version_check

    !> Sets `*dim` to GDAP_DIM_INIT.
    function gdap_dim_init(dim) bind(C, name='gdap_dim_init') result(res)
      import :: c_int, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int) :: res
    end function gdap_dim_init

    !> Sets `*dim` to a block dimension without optional keys.
    function gdap_dim_set_block(dim, size, proc_grid_size, proc_grid_rank, start, &
        stop) bind(C, name='gdap_dim_set_block') result(res)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: size
      integer(c_int64_t), value :: proc_grid_size
      integer(c_int64_t), value :: proc_grid_rank
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: stop
      integer(c_int) :: res
    end function gdap_dim_set_block

    !> Adds the optional 'padding' key to a block dimension.
    function gdap_dim_set_padding(dim, lower, upper) bind(C, name='gdap_dim_set_padding') result(res)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: lower
      integer(c_int64_t), value :: upper
      integer(c_int) :: res
    end function gdap_dim_set_padding

    !> Adds the optional 'periodic' key to a block dimension.
    function gdap_dim_set_periodic(dim, periodic) bind(C, name='gdap_dim_set_periodic') result(res)
      import :: c_int, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int), value :: periodic
      integer(c_int) :: res
    end function gdap_dim_set_periodic

    !> Sets `*dim` to a cyclic dimension.
    function gdap_dim_set_cyclic(dim, size, proc_grid_size, proc_grid_rank, start, &
        block_size) bind(C, name='gdap_dim_set_cyclic') result(res)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: size
      integer(c_int64_t), value :: proc_grid_size
      integer(c_int64_t), value :: proc_grid_rank
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: block_size
      integer(c_int) :: res
    end function gdap_dim_set_cyclic

    !> Sets `*dim` to an unstructured dimension.
    function gdap_dim_set_unstructured(dim, size, proc_grid_size, proc_grid_rank, indices, num_indices, &
        one_to_one) bind(C, name='gdap_dim_set_unstructured') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: size
      integer(c_int64_t), value :: proc_grid_size
      integer(c_int64_t), value :: proc_grid_rank
      type(c_ptr), value :: indices
      integer(c_int64_t), value :: num_indices
      integer(c_int), value :: one_to_one
      integer(c_int) :: res
    end function gdap_dim_set_unstructured

    !> Sets `*dim` to what the empty dictionary {} stands for, for a buffer extent `extent`:
    !> {'dist_type':'b','proc_grid_rank':0,'proc_grid_size':1,'start':0,'stop':extent,'size':extent}.
    function gdap_dim_set_undistributed(dim, extent) bind(C, name='gdap_dim_set_undistributed') result(res)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(inout) :: dim
      integer(c_int64_t), value :: extent
      integer(c_int) :: res
    end function gdap_dim_set_undistributed

    !> Checks one dimension dictionary against every per-process rule of the protocol.
    function gdap_dim_validate(dim, dim_index, extent) bind(C, name='gdap_dim_validate') result(res)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(in) :: dim
      integer(c_int64_t), value :: dim_index
      integer(c_int64_t), value :: extent
      integer(c_int) :: res
    end function gdap_dim_validate

    !> Checks a whole per-process dim_data: each dictionary as gdap_dim_validate does, with `shape[i]` as
    !> dimension i's extent.
    function gdap_dims_validate(dims, ndim, shape) bind(C, name='gdap_dims_validate') result(res)
      import :: c_int, c_int64_t, gdap_dim
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in), optional :: shape(*)
      integer(c_int) :: res
    end function gdap_dims_validate

    !> Number of global indices this process owns along one dimension.
    function gdap_dim_owned_count(count, dim) bind(C, name='gdap_dim_owned_count') result(res)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: count
      type(gdap_dim), intent(in) :: dim
      integer(c_int) :: res
    end function gdap_dim_owned_count

    !> Buffer extent along one dimension that this dictionary implies: stop - start for 'b' (padding
    !> included), the owned count for 'c', num_indices for 'u'.
    function gdap_dim_local_extent(extent, dim) bind(C, name='gdap_dim_local_extent') result(res)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: extent
      type(gdap_dim), intent(in) :: dim
      integer(c_int) :: res
    end function gdap_dim_local_extent

    !> Local index of global index `global` in this process's buffer.
    function gdap_dim_global_to_local(local, dim, &
        global) bind(C, name='gdap_dim_global_to_local') result(res)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: local
      type(gdap_dim), intent(in) :: dim
      integer(c_int64_t), value :: global
      integer(c_int) :: res
    end function gdap_dim_global_to_local

    !> Global index held at local index `local`; GDAP_ERR_OUT_OF_RANGE outside the buffer.
    function gdap_dim_local_to_global(global, dim, &
        local) bind(C, name='gdap_dim_local_to_global') result(res)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: global
      type(gdap_dim), intent(in) :: dim
      integer(c_int64_t), value :: local
      integer(c_int) :: res
    end function gdap_dim_local_to_global

    !> Grid coordinates of `rank` on a process grid of `ndim` dimensions `grid_shape`, in C order (last
    !> coordinate fastest, as MPI_Cart_create).
    function gdap_grid_rank_to_coords(coords, ndim, grid_shape, &
        rank) bind(C, name='gdap_grid_rank_to_coords') result(res)
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(inout) :: coords(*)
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in) :: grid_shape(*)
      integer(c_int64_t), value :: rank
      integer(c_int) :: res
    end function gdap_grid_rank_to_coords

    !> The rank at grid coordinates `coords` (C order).
    function gdap_grid_coords_to_rank(rank, ndim, grid_shape, &
        coords) bind(C, name='gdap_grid_coords_to_rank') result(res)
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(inout) :: rank
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in) :: grid_shape(*)
      integer(c_int64_t), intent(in) :: coords(*)
      integer(c_int) :: res
    end function gdap_grid_coords_to_rank

    !> Number of owned runs along one dimension: 1 (or 0 when empty) for 'b', one per block held for 'c', and
    !> for 'u' the maximal runs in which both global and local indices step by one.
    function gdap_dim_num_runs(num_runs, dim) bind(C, name='gdap_dim_num_runs') result(res)
      import :: c_int, c_int64_t, gdap_dim
      integer(c_int64_t), intent(inout) :: num_runs
      type(gdap_dim), intent(in) :: dim
      integer(c_int) :: res
    end function gdap_dim_num_runs

    !> Writes runs [first, first + capacity) of one dimension, in increasing global order, to `runs`;
    !> `*written` is how many were written (fewer at the end).
    function gdap_dim_runs(runs, written, dim, first, capacity) bind(C, name='gdap_dim_runs') result(res)
      import :: c_int, c_int64_t, gdap_dim, gdap_run
      type(gdap_run), intent(inout) :: runs(*)
      integer(c_int64_t), intent(inout) :: written
      type(gdap_dim), intent(in) :: dim
      integer(c_int64_t), value :: first
      integer(c_int64_t), value :: capacity
      integer(c_int) :: res
    end function gdap_dim_runs

    !> Builds the global view of a distribution from every rank's dim_data and checks every cross-process rule
    !> of the protocol.
    function gdap_map_create(out, nranks, ndim, dims) bind(C, name='gdap_map_create') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(c_ptr), intent(inout) :: out
      integer(c_int64_t), value :: nranks
      integer(c_int64_t), value :: ndim
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int) :: res
    end function gdap_map_create

    !> The layout of a gather's result or a scatter's source.
    function gdap_map_create_root(out, nranks, ndim, shape, &
        root) bind(C, name='gdap_map_create_root') result(res)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int64_t), value :: nranks
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int64_t), value :: root
      integer(c_int) :: res
    end function gdap_map_create_root

    !> The layout of an allgather's result or a broadcast's destination: the whole array on every one of
    !> `nranks` ranks.
    function gdap_map_create_replicated(out, nranks, ndim, &
        shape) bind(C, name='gdap_map_create_replicated') result(res)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int64_t), value :: nranks
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int) :: res
    end function gdap_map_create_replicated

    !> Chooses a process grid for `nranks` ranks over `ndim` dimensions, as MPI_Dims_create does.
    function gdap_grid_balance(grid_shape, ndim, nranks) bind(C, name='gdap_grid_balance') result(res)
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(inout) :: grid_shape(*)
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), value :: nranks
      integer(c_int) :: res
    end function gdap_grid_balance

    !> A distribution over a process grid of `ndim` >= 1 axes, axis i of axes[i].grid_size processes (nranks =
    !> their product; rank r at the C-order grid coordinates of r, as everywhere in gdap), each dimension laid
    !> out as its gdap_axis_layout says.
    function gdap_map_create_grid(out, ndim, axes) bind(C, name='gdap_map_create_grid') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_axis_layout
      type(c_ptr), intent(inout) :: out
      integer(c_int64_t), value :: ndim
      type(gdap_axis_layout), intent(in) :: axes(*)
      integer(c_int) :: res
    end function gdap_map_create_grid

    !> An unstructured distribution of an array of `ndim` >= 1 dimensions and C-order `shape` over `nranks`
    !> ranks.
    function gdap_map_create_unstructured(out, nranks, ndim, shape, counts, indices, num_indices, &
        one_to_one) bind(C, name='gdap_map_create_unstructured') result(res)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int64_t), value :: nranks
      integer(c_int64_t), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int64_t), intent(in) :: counts(*)
      integer(c_int64_t), intent(in) :: indices(*)
      integer(c_int64_t), value :: num_indices
      integer(c_int), value :: one_to_one
      integer(c_int) :: res
    end function gdap_map_create_unstructured

    !> Destroys a map.
    function gdap_map_destroy(map) bind(C, name='gdap_map_destroy') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: map
      integer(c_int) :: res
    end function gdap_map_destroy

    !> Number of array dimensions of the distribution.
    function gdap_map_ndim(ndim, map) bind(C, name='gdap_map_ndim') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: ndim
      type(c_ptr), value :: map
      integer(c_int) :: res
    end function gdap_map_ndim

    !> Number of ranks (processes) of the distribution.
    function gdap_map_nranks(nranks, map) bind(C, name='gdap_map_nranks') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: nranks
      type(c_ptr), value :: map
      integer(c_int) :: res
    end function gdap_map_nranks

    !> Global shape: each dimension's size (ndim values written to `shape`).
    function gdap_map_global_shape(shape, map) bind(C, name='gdap_map_global_shape') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: shape(*)
      type(c_ptr), value :: map
      integer(c_int) :: res
    end function gdap_map_global_shape

    !> Process grid shape: each dimension's proc_grid_size (ndim values).
    function gdap_map_grid_shape(grid_shape, map) bind(C, name='gdap_map_grid_shape') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: grid_shape(*)
      type(c_ptr), value :: map
      integer(c_int) :: res
    end function gdap_map_grid_shape

    !> Rank `rank`'s own dictionary for dimension `dim` (as that rank gave it, boundary padding and optional
    !> keys included), copied into `*out`.
    function gdap_map_dim(out, map, rank, dim) bind(C, name='gdap_map_dim') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(gdap_dim), intent(inout) :: out
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int64_t), value :: dim
      integer(c_int) :: res
    end function gdap_map_dim

    !> Rank `rank`'s buffer shape, padding included (ndim values).
    function gdap_map_local_shape(shape, map, rank) bind(C, name='gdap_map_local_shape') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: shape(*)
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int) :: res
    end function gdap_map_local_shape

    !> Rank `rank`'s owned shape: owned indices per dimension (ndim values).
    function gdap_map_owned_shape(shape, map, rank) bind(C, name='gdap_map_owned_shape') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: shape(*)
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int) :: res
    end function gdap_map_owned_shape

    !> Number of elements rank `rank` owns (the product of its owned shape; overflow-checked).
    function gdap_map_owned_count(count, map, rank) bind(C, name='gdap_map_owned_count') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: count
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int) :: res
    end function gdap_map_owned_count

    !> The rank owning global index `global` (ndim coordinates) and the local index (ndim) there.
    function gdap_map_owner(rank, local, map, global) bind(C, name='gdap_map_owner') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: rank
      integer(c_int64_t), intent(inout), optional :: local(*)
      type(c_ptr), value :: map
      integer(c_int64_t), intent(in) :: global(*)
      integer(c_int) :: res
    end function gdap_map_owner

    !> Every rank that owns global index `global` (replicas of unstructured dimensions included), ascending,
    !> into `ranks` (capacity `capacity`); GDAP_ERR_OUT_OF_RANGE outside [0, size) along any dimension.
    function gdap_map_owners(ranks, count, map, global, &
        capacity) bind(C, name='gdap_map_owners') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout), optional :: ranks(*)
      integer(c_int64_t), intent(inout) :: count
      type(c_ptr), value :: map
      integer(c_int64_t), intent(in) :: global(*)
      integer(c_int64_t), value :: capacity
      integer(c_int) :: res
    end function gdap_map_owners

    !> Batched gdap_map_owner for `count` global indices.
    function gdap_map_owner_batch(ranks, locals, map, globals, count, device, &
        stream) bind(C, name='gdap_map_owner_batch') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_device
      type(c_ptr), value :: ranks
      type(c_ptr), value :: locals
      type(c_ptr), value :: map
      type(c_ptr), value :: globals
      integer(c_int64_t), value :: count
      type(gdap_device), value :: device
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function gdap_map_owner_batch

    !> Global index (ndim) held at local index `local` (ndim) of rank `rank`'s buffer.
    function gdap_map_local_to_global(global, map, rank, &
        local) bind(C, name='gdap_map_local_to_global') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: global(*)
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int64_t), intent(in) :: local(*)
      integer(c_int) :: res
    end function gdap_map_local_to_global

    !> Number of owned runs of rank `rank` along dimension `dim` (as gdap_dim_num_runs).
    function gdap_map_num_runs(num_runs, map, rank, dim) bind(C, name='gdap_map_num_runs') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: num_runs
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int64_t), value :: dim
      integer(c_int) :: res
    end function gdap_map_num_runs

    !> Owned runs [first, first + capacity) of rank `rank` along dimension `dim` (as gdap_dim_runs).
    function gdap_map_runs(runs, written, map, rank, dim, first, &
        capacity) bind(C, name='gdap_map_runs') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_run
      type(gdap_run), intent(inout) :: runs(*)
      integer(c_int64_t), intent(inout) :: written
      type(c_ptr), value :: map
      integer(c_int64_t), value :: rank
      integer(c_int64_t), value :: dim
      integer(c_int64_t), value :: first
      integer(c_int64_t), value :: capacity
      integer(c_int) :: res
    end function gdap_map_runs

    !> Wraps a DLPack tensor as a local array, without copying any element.
    function gdap_array_from_dlpack(out, tensor, dims, ndim, &
        version) bind(C, name='gdap_array_from_dlpack') result(res)
      import :: c_char, c_int, c_int64_t, c_ptr, gdap_dim
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: tensor
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      character(kind=c_char), intent(in), optional :: version(*)
      integer(c_int) :: res
    end function gdap_array_from_dlpack

    !> As gdap_array_from_dlpack, for the unversioned DLManagedTensor (taken on success likewise).
    function gdap_array_from_dlpack_unversioned(out, tensor, dims, ndim, &
        version) bind(C, name='gdap_array_from_dlpack_unversioned') result(res)
      import :: c_char, c_int, c_int64_t, c_ptr, gdap_dim
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: tensor
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      character(kind=c_char), intent(in), optional :: version(*)
      integer(c_int) :: res
    end function gdap_array_from_dlpack_unversioned

    !> Wraps memory the caller keeps: `data` is *retained* (it must outlive the array and every tensor
    !> exported from it; gdap never frees it).
    function gdap_array_wrap(out, data, dtype, device, strides, dims, &
        ndim) bind(C, name='gdap_array_wrap') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_device, gdap_dim, gdap_dtype
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: data
      type(gdap_dtype), value :: dtype
      type(gdap_device), value :: device
      integer(c_int64_t), intent(in), optional :: strides(*)
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      integer(c_int) :: res
    end function gdap_array_wrap

    !> Allocates a C-contiguous local section owned by the array, with the shape the dictionaries imply, on
    !> `device`.
    function gdap_array_create(out, dtype, device, dims, ndim) bind(C, name='gdap_array_create') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_device, gdap_dim, gdap_dtype
      type(c_ptr), intent(inout) :: out
      type(gdap_dtype), value :: dtype
      type(gdap_device), value :: device
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      integer(c_int) :: res
    end function gdap_array_create

    !> Destroys the handle.
    function gdap_array_destroy(array) bind(C, name='gdap_array_destroy') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_destroy

    !> Exports the local section as a new DLPack tensor sharing the same memory (no element copied).
    function gdap_array_to_dlpack(out, array) bind(C, name='gdap_array_to_dlpack') result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_to_dlpack

    !> As gdap_array_to_dlpack, as an unversioned DLManagedTensor (for consumers of DLPack < 1.0).
    function gdap_array_to_dlpack_unversioned(out, &
        array) bind(C, name='gdap_array_to_dlpack_unversioned') result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_to_dlpack_unversioned

    !> Number of dimensions of the local section.
    function gdap_array_ndim(ndim, array) bind(C, name='gdap_array_ndim') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: ndim
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_ndim

    !> Address of element (0, ..., 0) (data plus byte offset).
    function gdap_array_data(data, array) bind(C, name='gdap_array_data') result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: data
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_data

    !> Shape of the local section (ndim values, padding included).
    function gdap_array_shape(shape, array) bind(C, name='gdap_array_shape') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: shape(*)
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_shape

    !> Strides in elements (ndim values; always filled, also for compact buffers).
    function gdap_array_strides(strides, array) bind(C, name='gdap_array_strides') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: strides(*)
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_strides

    !> Element type of the section.
    function gdap_array_dtype(dtype, array) bind(C, name='gdap_array_dtype') result(res)
      import :: c_int, c_ptr, gdap_dtype
      type(gdap_dtype), intent(inout) :: dtype
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_dtype

    !> Where the section's memory lives.
    function gdap_array_device(device, array) bind(C, name='gdap_array_device') result(res)
      import :: c_int, c_ptr, gdap_device
      type(gdap_device), intent(inout) :: device
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_device

    !> Non-zero if the section may not be written (DLPack read-only flag).
    function gdap_array_readonly(readonly, array) bind(C, name='gdap_array_readonly') result(res)
      import :: c_int, c_ptr
      integer(c_int), intent(inout) :: readonly
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_readonly

    !> Dimension `dim`'s dictionary, copied into `*out` (empty dictionaries resolved).
    function gdap_array_dim(out, array, dim) bind(C, name='gdap_array_dim') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(gdap_dim), intent(inout) :: out
      type(c_ptr), value :: array
      integer(c_int64_t), value :: dim
      integer(c_int) :: res
    end function gdap_array_dim

    !> The protocol version string the array was described with.
    function gdap_array_version(version, array) bind(C, name='gdap_array_version') result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: version
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_array_version

    !> Local index (ndim) of global index `global` (ndim) in this section; GDAP_ERR_NOT_FOUND if not held here
    !> (padding counts as held).
    function gdap_array_global_to_local(local, array, &
        global) bind(C, name='gdap_array_global_to_local') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: local(*)
      type(c_ptr), value :: array
      integer(c_int64_t), intent(in) :: global(*)
      integer(c_int) :: res
    end function gdap_array_global_to_local

    !> Global index (ndim) of local index `local` (ndim).
    function gdap_array_local_to_global(global, array, &
        local) bind(C, name='gdap_array_local_to_global') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: global(*)
      type(c_ptr), value :: array
      integer(c_int64_t), intent(in) :: local(*)
      integer(c_int) :: res
    end function gdap_array_local_to_global

    !> Creates an in-process group of `nranks` ranks and writes one communicator per rank to comms[0] to
    !> comms[nranks - 1].
    function gdap_comm_create_group(comms, nranks) bind(C, name='gdap_comm_create_group') result(res)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(inout) :: comms(*)
      integer(c_int64_t), value :: nranks
      integer(c_int) :: res
    end function gdap_comm_create_group

    !> Destroys a communicator (never the MPI or NCCL communicator it wraps) and the buffers gdap kept on it.
    function gdap_comm_destroy(comm) bind(C, name='gdap_comm_destroy') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int) :: res
    end function gdap_comm_destroy

    !> This rank's number, in [0, size).
    function gdap_comm_rank(rank, comm) bind(C, name='gdap_comm_rank') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: rank
      type(c_ptr), value :: comm
      integer(c_int) :: res
    end function gdap_comm_rank

    !> The number of ranks.
    function gdap_comm_size(size, comm) bind(C, name='gdap_comm_size') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: size
      type(c_ptr), value :: comm
      integer(c_int) :: res
    end function gdap_comm_size

    !> What the communicator moves data with.
    function gdap_comm_kind_get(kind, comm) bind(C, name='gdap_comm_kind_get') result(res)
      import :: c_int, c_ptr
      integer(c_int), intent(inout) :: kind
      type(c_ptr), value :: comm
      integer(c_int) :: res
    end function gdap_comm_kind_get

    !> The CUDA stream (a cudaStream_t; NULL for the legacy default stream) on which this rank's device work
    !> is queued.
    function gdap_comm_set_stream(comm, stream) bind(C, name='gdap_comm_set_stream') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function gdap_comm_set_stream

    !> How long (seconds, > 0; INFINITY for ever) this rank waits for the others at a collective call before
    !> it returns GDAP_ERR_TIMEOUT and the communicator breaks (300 s by default).
    function gdap_comm_set_timeout(comm, seconds) bind(C, name='gdap_comm_set_timeout') result(res)
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: comm
      real(c_double), value :: seconds
      integer(c_int) :: res
    end function gdap_comm_set_timeout

    !> Sets the function gdap calls, with `user`, about every 100 ms while this rank waits for the others at a
    !> collective call on `comm` (NULL, the default: none).
    function gdap_comm_set_interrupt(comm, check, user) bind(C, name='gdap_comm_set_interrupt') result(res)
      import :: c_funptr, c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_funptr), value :: check
      type(c_ptr), value :: user
      integer(c_int) :: res
    end function gdap_comm_set_interrupt

    !> Says that this rank fails its next collective call on `comm`, with `status` and `reason`.
    function gdap_comm_fail_next(comm, status, reason) bind(C, name='gdap_comm_fail_next') result(res)
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), value :: status
      character(kind=c_char), intent(in), optional :: reason(*)
      integer(c_int) :: res
    end function gdap_comm_fail_next

    !> Collective: returns once every rank has called it.
    function gdap_comm_barrier(comm) bind(C, name='gdap_comm_barrier') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int) :: res
    end function gdap_comm_barrier

    !> Collective.
    function gdap_map_create_collective(out, comm, ndim, &
        dims) bind(C, name='gdap_map_create_collective') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_dim
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: comm
      integer(c_int64_t), value :: ndim
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int) :: res
    end function gdap_map_create_collective

    !> Plans rank `rank`'s part of moving an array of `dtype` from distribution `src` to distribution `dst`.
    function gdap_plan_create(out, src, dst, dtype, rank) bind(C, name='gdap_plan_create') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_dtype
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: src
      type(c_ptr), value :: dst
      type(gdap_dtype), value :: dtype
      integer(c_int64_t), value :: rank
      integer(c_int) :: res
    end function gdap_plan_create

    !> Writes the destination roles that keep the most elements on their rank (COSTA's relabeling).
    function gdap_plan_roles_keeping(roles, nroles, src, &
        dst) bind(C, name='gdap_plan_roles_keeping') result(res)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int64_t), intent(inout) :: roles(*)
      integer(c_int64_t), value :: nroles
      type(c_ptr), value :: src
      type(c_ptr), value :: dst
      integer(c_int) :: res
    end function gdap_plan_roles_keeping

    !> gdap_plan_create with destination roles: rank `rank`'s destination section is that of `dst`'s rank
    !> roles[rank] (gdap_plan_roles_keeping says why).
    function gdap_plan_create_with_roles(out, src, dst, dtype, rank, roles, &
        nroles) bind(C, name='gdap_plan_create_with_roles') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_dtype
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: src
      type(c_ptr), value :: dst
      type(gdap_dtype), value :: dtype
      integer(c_int64_t), value :: rank
      integer(c_int64_t), intent(in) :: roles(*)
      integer(c_int64_t), value :: nroles
      integer(c_int) :: res
    end function gdap_plan_create_with_roles

    !> Destroys a plan.
    function gdap_plan_destroy(plan) bind(C, name='gdap_plan_destroy') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int) :: res
    end function gdap_plan_destroy

    !> Fills `*stats` (whose struct_size the caller sets) with the plan's counts.
    function gdap_plan_stats_get(stats, plan) bind(C, name='gdap_plan_stats_get') result(res)
      import :: c_int, c_ptr, gdap_plan_stats
      type(gdap_plan_stats), intent(inout) :: stats
      type(c_ptr), value :: plan
      integer(c_int) :: res
    end function gdap_plan_stats_get

    !> Collective.
    function gdap_redistribute(comm, plan, src, dst) bind(C, name='gdap_redistribute') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: plan
      type(c_ptr), value :: src
      type(c_ptr), value :: dst
      integer(c_int) :: res
    end function gdap_redistribute

    !> Collective, in place.
    function gdap_allreduce(comm, section, op) bind(C, name='gdap_allreduce') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: section
      integer(c_int), value :: op
      integer(c_int) :: res
    end function gdap_allreduce

    !> Collective, out of place: the reduce-scatter of replicated or overlapping sections.
    function gdap_reduce_scatter(comm, source, result, op) bind(C, name='gdap_reduce_scatter') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: source
      type(c_ptr), value :: result
      integer(c_int), value :: op
      integer(c_int) :: res
    end function gdap_reduce_scatter

    !> Collective, out of place.
    function gdap_reduce_axes(comm, source, result, op, axes, &
        naxes) bind(C, name='gdap_reduce_axes') result(res)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: source
      type(c_ptr), value :: result
      integer(c_int), value :: op
      integer(c_int64_t), intent(in), optional :: axes(*)
      integer(c_int64_t), value :: naxes
      integer(c_int) :: res
    end function gdap_reduce_axes

    !> Plans rank `rank`'s halo exchange on distribution `map` for elements of `dtype`: which boxes of its
    !> padding each rank fills and which boxes of its owned elements it sends.
    function gdap_halo_create(out, map, dtype, rank, options) bind(C, name='gdap_halo_create') result(res)
      import :: c_int, c_int64_t, c_ptr, gdap_dtype, gdap_halo_options
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: map
      type(gdap_dtype), value :: dtype
      integer(c_int64_t), value :: rank
      type(gdap_halo_options), intent(in), optional :: options
      integer(c_int) :: res
    end function gdap_halo_create

    !> Destroys a halo.
    function gdap_halo_destroy(halo) bind(C, name='gdap_halo_destroy') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: halo
      integer(c_int) :: res
    end function gdap_halo_destroy

    !> Fills `*stats` (whose struct_size the caller sets) with the halo's counts.
    function gdap_halo_stats_get(stats, halo) bind(C, name='gdap_halo_stats_get') result(res)
      import :: c_int, c_ptr, gdap_halo_stats
      type(gdap_halo_stats), intent(inout) :: stats
      type(c_ptr), value :: halo
      integer(c_int) :: res
    end function gdap_halo_stats_get

    !> Collective.
    function gdap_halo_exchange(comm, halo, local) bind(C, name='gdap_halo_exchange') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: halo
      type(c_ptr), value :: local
      integer(c_int) :: res
    end function gdap_halo_exchange

    !> Collective: binds `halo` to `comm` and `local` for repeated exchanges.
    function gdap_halo_exchange_init(out, comm, halo, &
        local) bind(C, name='gdap_halo_exchange_init') result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: comm
      type(c_ptr), value :: halo
      type(c_ptr), value :: local
      integer(c_int) :: res
    end function gdap_halo_exchange_init

    !> Collective.
    function gdap_exchange_start(exchange) bind(C, name='gdap_exchange_start') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: exchange
      integer(c_int) :: res
    end function gdap_exchange_start

    !> Destroys an exchange (not collective; nothing it borrows).
    function gdap_exchange_destroy(exchange) bind(C, name='gdap_exchange_destroy') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: exchange
      integer(c_int) :: res
    end function gdap_exchange_destroy

    !> Collective.
    function gdap_dnpy_save(comm, section, prefix) bind(C, name='gdap_dnpy_save') result(res)
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: section
      character(kind=c_char), intent(in) :: prefix(*)
      integer(c_int) :: res
    end function gdap_dnpy_save

    !> Collective.
    function gdap_dnpy_load(out, comm, prefix, device) bind(C, name='gdap_dnpy_load') result(res)
      import :: c_char, c_int, c_ptr, gdap_device
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: comm
      character(kind=c_char), intent(in) :: prefix(*)
      type(gdap_device), value :: device
      integer(c_int) :: res
    end function gdap_dnpy_load

    !> Collective.
    function gdap_zarr_save(comm, map, section, path, options) bind(C, name='gdap_zarr_save') result(res)
      import :: c_char, c_int, c_ptr, gdap_zarr_options
      type(c_ptr), value :: comm
      type(c_ptr), value :: map
      type(c_ptr), value :: section
      character(kind=c_char), intent(in) :: path(*)
      type(gdap_zarr_options), intent(in), optional :: options
      integer(c_int) :: res
    end function gdap_zarr_save

    !> Collective.
    function gdap_zarr_load(comm, map, section, path) bind(C, name='gdap_zarr_load') result(res)
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: map
      type(c_ptr), value :: section
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: res
    end function gdap_zarr_load

    !> Reads the global shape and dtype of the Zarr v3 array at `path` (its zarr.json), so that a caller can
    !> build a map for gdap_zarr_load.
    function gdap_zarr_shape_read(shape, ndim, dtype, path, &
        capacity) bind(C, name='gdap_zarr_shape_read') result(res)
      import :: c_char, c_int, c_int64_t, gdap_dtype
      integer(c_int64_t), intent(inout), optional :: shape(*)
      integer(c_int64_t), intent(inout) :: ndim
      type(gdap_dtype), intent(inout), optional :: dtype
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int64_t), value :: capacity
      integer(c_int) :: res
    end function gdap_zarr_shape_read

    !> Collective.
    function gdap_gemm_create(out, comm, a, b, c, dtype, &
        options) bind(C, name='gdap_gemm_create') result(res)
      import :: c_int, c_ptr, gdap_dtype, gdap_gemm_options
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: comm
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), value :: c
      type(gdap_dtype), value :: dtype
      type(gdap_gemm_options), intent(in), optional :: options
      integer(c_int) :: res
    end function gdap_gemm_create

    !> Destroys a plan and the buffers it keeps (host and device).
    function gdap_gemm_destroy(gemm) bind(C, name='gdap_gemm_destroy') result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: gemm
      integer(c_int) :: res
    end function gdap_gemm_destroy

    !> Fills `*stats` (whose struct_size the caller sets) with the plan's counts.
    function gdap_gemm_stats_get(stats, gemm) bind(C, name='gdap_gemm_stats_get') result(res)
      import :: c_int, c_ptr, gdap_gemm_stats
      type(gdap_gemm_stats), intent(inout) :: stats
      type(c_ptr), value :: gemm
      integer(c_int) :: res
    end function gdap_gemm_stats_get

    !> Collective.
    function gdap_gemm_execute(comm, gemm, alpha, a, b, beta, &
        c) bind(C, name='gdap_gemm_execute') result(res)
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: gemm
      real(c_double), value :: alpha
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      real(c_double), value :: beta
      type(c_ptr), value :: c
      integer(c_int) :: res
    end function gdap_gemm_execute

    !> Allocates a C-contiguous host section (zero-filled) in a new POSIX shared-memory segment, so that
    !> gdap_ipc_export can share it with other processes of the node.
    function gdap_array_create_shm(out, name, dtype, dims, &
        ndim) bind(C, name='gdap_array_create_shm') result(res)
      import :: c_char, c_int, c_int64_t, c_ptr, gdap_dim, gdap_dtype
      type(c_ptr), intent(inout) :: out
      character(kind=c_char), intent(in), optional :: name(*)
      type(gdap_dtype), value :: dtype
      type(gdap_dim), intent(in) :: dims(*)
      integer(c_int64_t), value :: ndim
      integer(c_int) :: res
    end function gdap_array_create_shm

    !> Writes an IPC handle for `array`'s local section to `handle` (GDAP_IPC_HANDLE_SIZE bytes; a `capacity`
    !> below that is GDAP_ERR_BUFFER_TOO_SMALL).
    function gdap_ipc_export(handle, capacity, array) bind(C, name='gdap_ipc_export') result(res)
      import :: c_int, c_int64_t, c_int8_t, c_ptr
      integer(c_int8_t), intent(inout) :: handle(*)
      integer(c_int64_t), value :: capacity
      type(c_ptr), value :: array
      integer(c_int) :: res
    end function gdap_ipc_export

    !> Opens an IPC handle made by gdap_ipc_export in another process of this node, as a new array over the
    !> same memory (no element copied; writes on either side are seen by the other, ordered by the processes'
    !> own synchronisation).
    function gdap_ipc_open(out, handle, size) bind(C, name='gdap_ipc_open') result(res)
      import :: c_int, c_int64_t, c_int8_t, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int8_t), intent(in) :: handle(*)
      integer(c_int64_t), value :: size
      integer(c_int) :: res
    end function gdap_ipc_open

    ! ---- gdap_mpi.h ----

    !> Wraps MPI communicator `comm` (its Fortran handle, MPI_Comm_c2f) as a gdap communicator.
    function gdap_comm_from_mpi(out, comm) bind(C, name='gdap_comm_from_mpi') result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      integer(c_int), value :: comm
      integer(c_int) :: res
    end function gdap_comm_from_mpi

    ! ---- gdap_cuda.h ----

    !> Wraps an NCCL communicator (an ncclComm_t) and the CUDA stream (a cudaStream_t, NULL for the legacy
    !> default stream) its data movement is queued on.
    function gdap_comm_from_nccl(out, nccl_comm, stream) bind(C, name='gdap_comm_from_nccl') result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
      type(c_ptr), value :: nccl_comm
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function gdap_comm_from_nccl
  end interface
end module gdap_c_api

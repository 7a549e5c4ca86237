# gdap's C ABI (include/gdap/gdap.h, gdap_mpi.h, gdap_cuda.h) for Julia: every constant, every struct
# with the C layout, and one `ccall` wrapper per C function, each named as in C.
# GENERATED from the headers by tools/abigen/generate.py: do not edit. After changing a header, run
#   tools/abigen/generate.py --write
# (the ctest bindings.generated fails while this file differs from what the generator writes).
#
# Included by GDAP.jl, which defines `libgdap` before it. The translation, parameter by parameter:
# handles are `Ptr{Cvoid}` and a handle a call creates (`gdap_x** out`) is `Ref{Ptr{Cvoid}}`; a pointer
# to one value is `Ref{T}`, to several values (the header's /*[n]*/) or to one that may be NULL
# (/*or NULL*/) `Ptr{T}` (pass a Vector, a Ref or C_NULL); strings are `Cstring` (`Ptr{UInt8}` when
# NULL is allowed). Every wrapper returns the C result: a gdap_status as `Cint`, or a `Cstring`.
# The test julia.binding checks every struct's field types, offsets and size against the C compiler,
# and every ccall's types against the C prototype, without a Julia runtime.

# ---- constants (enums and macros of the headers) ----

# Library version (semantic): a minor release adds functions and appends struct fields only.
const GDAP_VERSION_MAJOR = Cint(0)
const GDAP_VERSION_MINOR = Cint(2)  # minor version: functions added, fields appended
const GDAP_VERSION_PATCH = Cint(0)  # patch version: fixes only

# The version as one number, major * 10000 + minor * 100 + patch; compare with gdap_version().
const GDAP_VERSION_NUMBER = Cint(200)

# The Distributed Array Protocol version gdap produces.
const GDAP_PROTOCOL_VERSION = "0.10.0"
const GDAP_PROTOCOL_MAJOR = Cint(0)  # protocol major version gdap reads
const GDAP_PROTOCOL_MINOR = Cint(10)  # the protocol minor version gdap reads (any patch)

# gdap_status: The result of every gdap call.
const GDAP_SUCCESS = Cint(0)
const GDAP_ERR_INVALID_ARGUMENT = Cint(1)  # a NULL pointer, a bad enum value, a size the call cannot take
const GDAP_ERR_PROTOCOL = Cint(2)  # a descriptor breaks a rule of the protocol
const GDAP_ERR_VERSION = Cint(3)  # a protocol or DLPack version this gdap does not know
const GDAP_ERR_OVERFLOW = Cint(4)  # a size, offset or product does not fit in int64_t
const GDAP_ERR_OUT_OF_RANGE = Cint(5)  # an index, rank or dimension outside its range
const GDAP_ERR_NOT_FOUND = Cint(6)  # a global index this process (or any process) does not hold
# an output buffer is smaller than the result; the count says how large
const GDAP_ERR_BUFFER_TOO_SMALL = Cint(7)
const GDAP_ERR_NO_MEMORY = Cint(8)  # an allocation failed
const GDAP_ERR_UNSUPPORTED = Cint(9)  # a device, dtype or feature this build does not support
const GDAP_ERR_DEVICE = Cint(10)  # a CUDA call failed (no device, out of device memory, ...)
const GDAP_ERR_COMM = Cint(11)  # a communication call failed (MPI, NCCL)
const GDAP_ERR_REMOTE = Cint(12)  # another rank failed a collective call
const GDAP_ERR_TIMEOUT = Cint(13)  # a collective call did not complete in time
const GDAP_ERR_IO = Cint(14)  # reading or writing a file failed
const GDAP_ERR_INTERNAL = Cint(15)  # a bug in gdap: please report it with gdap_last_error()
const GDAP_ERR_INTERRUPTED = Cint(16)  # a wait at a collective call was interrupted (gdap_comm_set_interrupt)

const GDAP_DTYPE_INT = UInt8(0)
const GDAP_DTYPE_UINT = UInt8(1)
const GDAP_DTYPE_FLOAT = UInt8(2)
const GDAP_DTYPE_BFLOAT = UInt8(4)
const GDAP_DTYPE_COMPLEX = UInt8(5)
const GDAP_DTYPE_BOOL = UInt8(6)

const GDAP_DEVICE_CPU = Int32(1)  # ordinary host memory
const GDAP_DEVICE_CUDA = Int32(2)  # CUDA device memory
const GDAP_DEVICE_CUDA_HOST = Int32(3)  # CUDA pinned host memory
const GDAP_DEVICE_CUDA_MANAGED = Int32(13)  # CUDA managed (unified) memory

# gdap_dist_type: The protocol's dist_type values; the enum value is the protocol's character.
const GDAP_DIST_UNDISTRIBUTED = Int32(0)  # the empty dictionary {}: an alias resolved from the buffer shape
const GDAP_DIST_BLOCK = Int32(98)  # 'b': block: start, stop; optional padding, periodic
const GDAP_DIST_CYCLIC = Int32(99)  # 'c': cyclic / block-cyclic: start; optional block_size
const GDAP_DIST_UNSTRUCTURED = Int32(117)  # 'u': unstructured: indices; optional one_to_one

# Bits of gdap_dim.given: which optional keys the dictionary holds.
const GDAP_KEY_PADDING = UInt32(1)  # 'b': padding
const GDAP_KEY_PERIODIC = UInt32(2)  # 'b': periodic
const GDAP_KEY_BLOCK_SIZE = UInt32(4)  # 'c': block_size
const GDAP_KEY_ONE_TO_ONE = UInt32(8)  # 'u': one_to_one

# Versioned structs (gdap_dim, the _options and _stats structs) begin with `uint32_t struct_size`, set by
# their _INIT macro.
const GDAP_MAX_STRUCT_SIZE = Int64(1024)

# gdap_comm_kind: What a communicator moves data with.
const GDAP_COMM_GROUP = Cint(1)  # an in-process group: ranks are threads of this process
const GDAP_COMM_MPI = Cint(2)  # an MPI communicator (gdap_mpi.h)
const GDAP_COMM_NCCL = Cint(3)  # an NCCL communicator and a CUDA stream (gdap_cuda.h)

# gdap_reduce_op: Reductions (gdap_allreduce, gdap_reduce_scatter, gdap_reduce_axes).
const GDAP_REDUCE_SUM = Cint(1)
const GDAP_REDUCE_PROD = Cint(2)
const GDAP_REDUCE_MIN = Cint(3)
const GDAP_REDUCE_MAX = Cint(4)
const GDAP_REDUCE_MEAN = Cint(5)  # gdap_reduce_axes only, float32/64: the sum over the count of elements

# gdap_zarr_codec: Codecs gdap_zarr_save can write (gdap_zarr_load reads these and more: docs/zarr.md).
const GDAP_ZARR_RAW = Int32(0)  # "bytes" (little endian) only: uncompressed
const GDAP_ZARR_ZSTD = Int32(1)  # "bytes" then "zstd" (zarr-python's default)
# "bytes" then "blosc" with lz4 (numcodecs' default), shuffled by `shuffle`
const GDAP_ZARR_BLOSC_LZ4 = Int32(2)
const GDAP_ZARR_BLOSC_ZSTD = Int32(3)  # "bytes" then "blosc" with zstd, shuffled by `shuffle`

# gdap_zarr_layout: How gdap_zarr_save lays out the store's files.
# one shard ("sharding_indexed") per rank's block, of inner chunks of at most chunk_bytes (default): a reader
# of any layout reads only the inner chunks it needs
const GDAP_ZARR_SHARDS = Int32(0)
const GDAP_ZARR_CHUNKS = Int32(1)  # one chunk file per rank's block, no sharding (gdap 0.1's only layout)

# gdap_zarr_shuffle: How blosc rearranges the bytes of a chunk before compressing them.
# bytes grouped by their position in an element (blosc's and gdap's default)
const GDAP_ZARR_SHUFFLE = Int32(0)
const GDAP_ZARR_NOSHUFFLE = Int32(1)  # as they are
const GDAP_ZARR_BITSHUFFLE = Int32(2)  # bits grouped by their position in an element

# gdap_gemm_mode: How the local products are computed.
const GDAP_GEMM_EXACT = Int32(0)  # default: fp32 products for float32, fp64 for float64
const GDAP_GEMM_TF32 = Int32(1)  # float32 only, device only: inputs rounded to TF32 on tensor cores
const GDAP_GEMM_BF16 = Int32(2)  # float32 only, device only: inputs rounded to bfloat16 on tensor cores

# Bytes of an IPC handle: every handle has exactly this size, whatever the array.
const GDAP_IPC_HANDLE_SIZE = Int64(2048)

# The most dimensions a section shared through an IPC handle may have.
const GDAP_IPC_MAX_NDIM = Int64(8)

# The 8 bytes an IPC handle starts with (no terminating NUL in the handle).
const GDAP_IPC_MAGIC = "GDAP-IPC"

# The layout version of IPC handles this gdap writes and reads.
const GDAP_IPC_FORMAT_VERSION = Int64(2)

# ---- structs ----

# Element type; the same layout and codes as DLPack's DLDataType.
struct gdap_dtype
    code::UInt8  # GDAP_DTYPE_* (DLPack's DLDataTypeCode)
    bits::UInt8  # bits per lane
    lanes::UInt16  # 1 for scalars
end

# Where the data lives; the same layout and codes as DLPack's DLDevice.
struct gdap_device
    type::Int32  # GDAP_DEVICE_* (DLPack's DLDeviceType)
    id::Int32  # device ordinal; 0 for host memory
end

# One dimension dictionary.
struct gdap_dim
    struct_size::UInt32  # sizeof(gdap_dim) as the caller compiled it (GDAP_DIM_INIT sets it)
    given::UInt32  # GDAP_KEY_* bits of the optional keys present
    dist_type::Int32  # a gdap_dist_type
    periodic::Int32  # 'b': non-zero if the dimension wraps (needs GDAP_KEY_PERIODIC)
    size::Int64  # global number of elements along this dimension, >= 0
    proc_grid_size::Int64  # processes along this dimension of the process grid, >= 1
    proc_grid_rank::Int64  # this process's coordinate along it, 0 <= rank < proc_grid_size
    start::Int64  # 'b', 'c': first global index held (for 'b' including padding)
    stop::Int64  # 'b': one past the last global index held (including padding)
    padding::NTuple{2,Int64}  # 'b': elements of padding below and above (needs GDAP_KEY_PADDING)
    block_size::Int64  # 'c': length of the blocks dealt round-robin, >= 1 (default 1)
    # 'u': global indices held, in local order; borrowed or owned as the function that filled the struct says
    indices::Ptr{Int64}
    num_indices::Int64  # 'u': length of `indices`
    one_to_one::Int32  # 'u': non-zero if every global index lives on exactly one process
    reserved::Int32  # must be 0
end
# The C macro GDAP_DIM_INIT.
const GDAP_DIM_INIT = gdap_dim(UInt32(sizeof(gdap_dim)), UInt32(0), Int32(GDAP_DIST_UNDISTRIBUTED), Int32(0),
    Int64(0), Int64(1), Int64(0), Int64(0), Int64(0), (Int64(0), Int64(0)), Int64(1), Ptr{Int64}(C_NULL),
    Int64(0), Int32(0), Int32(0))

# A run of owned global indices that sit contiguously in the local buffer: global indices [global_start,
# global_start + length) live at local [local_start, local_start + length) along one dimension.
struct gdap_run
    global_start::Int64  # first global index of the run
    length::Int64  # number of indices in the run, >= 1
    local_start::Int64  # local index of global_start in the buffer
end

# How gdap_map_create_grid lays out one dimension over one axis of the process grid.
struct gdap_axis_layout
    struct_size::UInt32  # sizeof(gdap_axis_layout) as the caller compiled it (GDAP_AXIS_LAYOUT_INIT sets it)
    dist_type::Int32  # GDAP_DIST_BLOCK (default) or GDAP_DIST_CYCLIC
    size::Int64  # global length of the dimension, >= 0
    grid_size::Int64  # processes along this axis of the grid, >= 1 (default 1)
    block_size::Int64  # 'c': length of the blocks dealt round-robin, >= 1 (default 1: cyclic); 'b': 1
    # 'b': NULL (default) for even blocks, or grid_size owned lengths >= 0 that sum to size (irregular
    # blocks); borrowed for the call.
    lengths::Ptr{Int64}
    halo::Int64  # 'b': cells of communication padding towards each neighbour, >= 0 (default 0)
    periodic::Int32  # 'b': non-zero if the dimension wraps (the 'periodic' key; see gdap_map_create_grid)
    reserved::Int32  # must be 0
end
# The C macro GDAP_AXIS_LAYOUT_INIT.
const GDAP_AXIS_LAYOUT_INIT = gdap_axis_layout(UInt32(sizeof(gdap_axis_layout)), Int32(GDAP_DIST_BLOCK),
    Int64(0), Int64(1), Int64(1), Ptr{Int64}(C_NULL), Int64(0), Int32(0), Int32(0))

# What one rank's plan moves.
struct gdap_plan_stats
    struct_size::UInt32  # set by the caller to sizeof(gdap_plan_stats) (GDAP_PLAN_STATS_INIT)
    reserved_head::UInt32  # 0
    rank::Int64  # the rank planned
    nranks::Int64  # ranks in the group
    send_messages::Int64  # messages to other ranks
    recv_messages::Int64  # messages from other ranks
    send_bytes::Int64  # bytes to other ranks
    recv_bytes::Int64  # bytes from other ranks
    local_bytes::Int64  # bytes copied within the rank
    send_runs::Int64  # contiguous runs sent (C-order local sections)
    recv_runs::Int64  # contiguous runs received
    local_runs::Int64  # contiguous runs copied within the rank
end
# The C macro GDAP_PLAN_STATS_INIT.
const GDAP_PLAN_STATS_INIT = gdap_plan_stats(UInt32(sizeof(gdap_plan_stats)), UInt32(0), Int64(0), Int64(0),
    Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0))

# How a halo is exchanged.
struct gdap_halo_options
    struct_size::UInt32  # sizeof(gdap_halo_options) as the caller compiled it
    # non-zero (default): edges and corners too (a full-neighbourhood stencil); 0: faces only (cells that
    # differ from owned ones along one dimension)
    corners::Int32
    # NULL (default): all padding; else ndim caps >= 0: along dimension i only the widths[i] cells next to the
    # kept ones (owned, less periodic boundary padding) on each side are filled (0: none).
    widths::Ptr{Int64}
end
# The C macro GDAP_HALO_OPTIONS_INIT.
const GDAP_HALO_OPTIONS_INIT = gdap_halo_options(UInt32(sizeof(gdap_halo_options)), Int32(1),
    Ptr{Int64}(C_NULL))

# What one rank's halo exchange moves.
struct gdap_halo_stats
    struct_size::UInt32  # set by the caller to sizeof(gdap_halo_stats) (GDAP_HALO_STATS_INIT)
    reserved_head::UInt32  # 0
    rank::Int64  # the rank planned
    nranks::Int64  # ranks in the group
    send_messages::Int64  # messages to other ranks (one per neighbour rank)
    recv_messages::Int64  # messages from other ranks
    send_bytes::Int64  # bytes to other ranks
    recv_bytes::Int64  # bytes from other ranks
    local_bytes::Int64  # bytes copied within the rank (a periodic wrap onto itself)
end
# The C macro GDAP_HALO_STATS_INIT.
const GDAP_HALO_STATS_INIT = gdap_halo_stats(UInt32(sizeof(gdap_halo_stats)), UInt32(0), Int64(0), Int64(0),
    Int64(0), Int64(0), Int64(0), Int64(0), Int64(0))

# Options of gdap_zarr_save.
struct gdap_zarr_options
    struct_size::UInt32  # set by the caller to sizeof(gdap_zarr_options) (GDAP_ZARR_OPTIONS_INIT)
    reserved_head::UInt32  # 0
    codec::Int32  # a gdap_zarr_codec
    # the codec's level: zstd 1 to 22 (0: zstd's default, 3); blosc 1 to 9 (0: 5); ignored for GDAP_ZARR_RAW.
    zstd_level::Int32
    overwrite::Int32  # nonzero: replace a store already at the path; 0: refuse it
    reserved::Int32  # 0
    layout::Int32  # a gdap_zarr_layout: GDAP_ZARR_SHARDS (default) or GDAP_ZARR_CHUNKS
    shuffle::Int32  # a gdap_zarr_shuffle, for the blosc codecs
    # GDAP_ZARR_SHARDS: the most bytes of an inner chunk (0: 2 MiB); each inner chunk extent divides the
    # block's, halving the widest until it fits
    chunk_bytes::Int64
end
# The C macro GDAP_ZARR_OPTIONS_INIT.
const GDAP_ZARR_OPTIONS_INIT = gdap_zarr_options(UInt32(sizeof(gdap_zarr_options)), UInt32(0),
    Int32(GDAP_ZARR_ZSTD), Int32(0), Int32(0), Int32(0), Int32(GDAP_ZARR_SHARDS), Int32(GDAP_ZARR_SHUFFLE),
    Int64(0))

# Options of gdap_gemm_create.
struct gdap_gemm_options
    struct_size::UInt32  # sizeof(gdap_gemm_options) as the caller compiled it
    mode::Int32  # a gdap_gemm_mode (default GDAP_GEMM_EXACT)
    panel_width::Int64  # widest k-panel broadcast per SUMMA step, >= 0; 0 (default) picks 1024
end
# The C macro GDAP_GEMM_OPTIONS_INIT.
const GDAP_GEMM_OPTIONS_INIT = gdap_gemm_options(UInt32(sizeof(gdap_gemm_options)), Int32(GDAP_GEMM_EXACT),
    Int64(0))

# What one rank's gemm plan does per gdap_gemm_execute.
struct gdap_gemm_stats
    struct_size::UInt32  # set by the caller to sizeof(gdap_gemm_stats) (GDAP_GEMM_STATS_INIT)
    reserved_head::UInt32  # 0
    rank::Int64  # the rank planned
    nranks::Int64  # ranks in the group
    grid_rows::Int64  # rows of the process grid SUMMA runs on
    grid_cols::Int64  # columns of that grid
    redistributed_a::Int64  # 1 if A is redistributed to fit SUMMA at each execute, else 0
    redistributed_b::Int64  # 1 if B is
    redistributed_c::Int64  # 1 if C is (in before the product and out after it)
    redistribute_bytes::Int64  # bytes this rank sends and receives in those redistributions
    panels::Int64  # SUMMA steps (k-panels)
    panel_bytes::Int64  # bytes of panels this rank receives from other ranks
    local_m::Int64  # rows of this rank's working block of C
    local_n::Int64  # columns of this rank's working block of C
    # floating-point operations of this rank's local products (2 m n k); INT64_MAX (9.2e18) where that exceeds
    # int64
    flops::Int64
end
# The C macro GDAP_GEMM_STATS_INIT.
const GDAP_GEMM_STATS_INIT = gdap_gemm_stats(UInt32(sizeof(gdap_gemm_stats)), UInt32(0), Int64(0), Int64(0),
    Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0),
    Int64(0))

# ---- functions ----

# ---- gdap.h ----

# The name of a status code, e.g. "GDAP_ERR_PROTOCOL".
gdap_status_string(status) = ccall((:gdap_status_string, libgdap), Cstring, (Cint,), status)

# The detail of the last failed gdap call on this thread, e.g. "dimension 1 ('b'): stop (12) > size (10)".
gdap_last_error() = ccall((:gdap_last_error, libgdap), Cstring, ())

# Records a binding's own refusal (a check made in the binding, before any gdap call) as this thread's
# gdap_last_error, so that callers read one place for every error's detail.
gdap_last_error_set(status, message) =
    ccall((:gdap_last_error_set, libgdap), Cint, (Cint, Ptr{UInt8}), status, message)

# The library version as GDAP_VERSION_NUMBER of the build that is loaded (never fails).
gdap_version() = ccall((:gdap_version, libgdap), Cint, ())

# The library version as a static string "major.minor.patch" (never fails).
gdap_version_string() = ccall((:gdap_version_string, libgdap), Cstring, ())

# Checks a protocol version string ("major.minor.patch").
gdap_protocol_version_check(version) =
    ccall((:gdap_protocol_version_check, libgdap), Cint, (Cstring,), version)

# Sets `*dim` to GDAP_DIM_INIT.
gdap_dim_init(dim) = ccall((:gdap_dim_init, libgdap), Cint, (Ref{gdap_dim},), dim)

# Sets `*dim` to a block dimension without optional keys.
gdap_dim_set_block(dim, size, proc_grid_size, proc_grid_rank, start, stop) =
    ccall((:gdap_dim_set_block, libgdap), Cint, (Ref{gdap_dim}, Int64, Int64, Int64, Int64, Int64),
          dim, size, proc_grid_size, proc_grid_rank, start, stop)

# Adds the optional 'padding' key to a block dimension.
gdap_dim_set_padding(dim, lower, upper) =
    ccall((:gdap_dim_set_padding, libgdap), Cint, (Ref{gdap_dim}, Int64, Int64), dim, lower, upper)

# Adds the optional 'periodic' key to a block dimension.
gdap_dim_set_periodic(dim, periodic) =
    ccall((:gdap_dim_set_periodic, libgdap), Cint, (Ref{gdap_dim}, Cint), dim, periodic)

# Sets `*dim` to a cyclic dimension.
gdap_dim_set_cyclic(dim, size, proc_grid_size, proc_grid_rank, start, block_size) =
    ccall((:gdap_dim_set_cyclic, libgdap), Cint, (Ref{gdap_dim}, Int64, Int64, Int64, Int64, Int64),
          dim, size, proc_grid_size, proc_grid_rank, start, block_size)

# Sets `*dim` to an unstructured dimension.
gdap_dim_set_unstructured(dim, size, proc_grid_size, proc_grid_rank, indices, num_indices, one_to_one) =
    ccall((:gdap_dim_set_unstructured, libgdap), Cint, (Ref{gdap_dim}, Int64, Int64, Int64, Ptr{Int64}, Int64,
          Cint),
          dim, size, proc_grid_size, proc_grid_rank, indices, num_indices, one_to_one)

# Sets `*dim` to what the empty dictionary {} stands for, for a buffer extent `extent`:
# {'dist_type':'b','proc_grid_rank':0,'proc_grid_size':1,'start':0,'stop':extent,'size':extent}.
gdap_dim_set_undistributed(dim, extent) =
    ccall((:gdap_dim_set_undistributed, libgdap), Cint, (Ref{gdap_dim}, Int64), dim, extent)

# Checks one dimension dictionary against every per-process rule of the protocol.
gdap_dim_validate(dim, dim_index, extent) =
    ccall((:gdap_dim_validate, libgdap), Cint, (Ref{gdap_dim}, Int64, Int64), dim, dim_index, extent)

# Checks a whole per-process dim_data: each dictionary as gdap_dim_validate does, with `shape[i]` as dimension
# i's extent.
gdap_dims_validate(dims, ndim, shape) =
    ccall((:gdap_dims_validate, libgdap), Cint, (Ptr{gdap_dim}, Int64, Ptr{Int64}), dims, ndim, shape)

# Number of global indices this process owns along one dimension.
gdap_dim_owned_count(count, dim) =
    ccall((:gdap_dim_owned_count, libgdap), Cint, (Ref{Int64}, Ref{gdap_dim}), count, dim)

# Buffer extent along one dimension that this dictionary implies: stop - start for 'b' (padding included), the
# owned count for 'c', num_indices for 'u'.
gdap_dim_local_extent(extent, dim) =
    ccall((:gdap_dim_local_extent, libgdap), Cint, (Ref{Int64}, Ref{gdap_dim}), extent, dim)

# Local index of global index `global` in this process's buffer.
gdap_dim_global_to_local(local_, dim, global_) =
    ccall((:gdap_dim_global_to_local, libgdap), Cint, (Ref{Int64}, Ref{gdap_dim}, Int64),
          local_, dim, global_)

# Global index held at local index `local`; GDAP_ERR_OUT_OF_RANGE outside the buffer.
gdap_dim_local_to_global(global_, dim, local_) =
    ccall((:gdap_dim_local_to_global, libgdap), Cint, (Ref{Int64}, Ref{gdap_dim}, Int64),
          global_, dim, local_)

# Grid coordinates of `rank` on a process grid of `ndim` dimensions `grid_shape`, in C order (last coordinate
# fastest, as MPI_Cart_create).
gdap_grid_rank_to_coords(coords, ndim, grid_shape, rank) =
    ccall((:gdap_grid_rank_to_coords, libgdap), Cint, (Ptr{Int64}, Int64, Ptr{Int64}, Int64),
          coords, ndim, grid_shape, rank)

# The rank at grid coordinates `coords` (C order).
gdap_grid_coords_to_rank(rank, ndim, grid_shape, coords) =
    ccall((:gdap_grid_coords_to_rank, libgdap), Cint, (Ref{Int64}, Int64, Ptr{Int64}, Ptr{Int64}),
          rank, ndim, grid_shape, coords)

# Number of owned runs along one dimension: 1 (or 0 when empty) for 'b', one per block held for 'c', and for
# 'u' the maximal runs in which both global and local indices step by one.
gdap_dim_num_runs(num_runs, dim) =
    ccall((:gdap_dim_num_runs, libgdap), Cint, (Ref{Int64}, Ref{gdap_dim}), num_runs, dim)

# Writes runs [first, first + capacity) of one dimension, in increasing global order, to `runs`; `*written` is
# how many were written (fewer at the end).
gdap_dim_runs(runs, written, dim, first, capacity) =
    ccall((:gdap_dim_runs, libgdap), Cint, (Ptr{gdap_run}, Ref{Int64}, Ref{gdap_dim}, Int64, Int64),
          runs, written, dim, first, capacity)

# Builds the global view of a distribution from every rank's dim_data and checks every cross-process rule of
# the protocol.
gdap_map_create(out, nranks, ndim, dims) =
    ccall((:gdap_map_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Int64, Ptr{gdap_dim}),
          out, nranks, ndim, dims)

# The layout of a gather's result or a scatter's source.
gdap_map_create_root(out, nranks, ndim, shape, root) =
    ccall((:gdap_map_create_root, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Int64, Ptr{Int64}, Int64),
          out, nranks, ndim, shape, root)

# The layout of an allgather's result or a broadcast's destination: the whole array on every one of `nranks`
# ranks.
gdap_map_create_replicated(out, nranks, ndim, shape) =
    ccall((:gdap_map_create_replicated, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Int64, Ptr{Int64}),
          out, nranks, ndim, shape)

# Chooses a process grid for `nranks` ranks over `ndim` dimensions, as MPI_Dims_create does.
gdap_grid_balance(grid_shape, ndim, nranks) =
    ccall((:gdap_grid_balance, libgdap), Cint, (Ptr{Int64}, Int64, Int64), grid_shape, ndim, nranks)

# A distribution over a process grid of `ndim` >= 1 axes, axis i of axes[i].grid_size processes (nranks =
# their product; rank r at the C-order grid coordinates of r, as everywhere in gdap), each dimension laid out
# as its gdap_axis_layout says.
gdap_map_create_grid(out, ndim, axes) =
    ccall((:gdap_map_create_grid, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Ptr{gdap_axis_layout}),
          out, ndim, axes)

# An unstructured distribution of an array of `ndim` >= 1 dimensions and C-order `shape` over `nranks` ranks.
gdap_map_create_unstructured(out, nranks, ndim, shape, counts, indices, num_indices, one_to_one) =
    ccall((:gdap_map_create_unstructured, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Int64, Ptr{Int64},
          Ptr{Int64}, Ptr{Int64}, Int64, Cint),
          out, nranks, ndim, shape, counts, indices, num_indices, one_to_one)

# Destroys a map.
gdap_map_destroy(map) = ccall((:gdap_map_destroy, libgdap), Cint, (Ptr{Cvoid},), map)

# Number of array dimensions of the distribution.
gdap_map_ndim(ndim, map) = ccall((:gdap_map_ndim, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), ndim, map)

# Number of ranks (processes) of the distribution.
gdap_map_nranks(nranks, map) = ccall((:gdap_map_nranks, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), nranks, map)

# Global shape: each dimension's size (ndim values written to `shape`).
gdap_map_global_shape(shape, map) =
    ccall((:gdap_map_global_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}), shape, map)

# Process grid shape: each dimension's proc_grid_size (ndim values).
gdap_map_grid_shape(grid_shape, map) =
    ccall((:gdap_map_grid_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}), grid_shape, map)

# Rank `rank`'s own dictionary for dimension `dim` (as that rank gave it, boundary padding and optional keys
# included), copied into `*out`.
gdap_map_dim(out, map, rank, dim) =
    ccall((:gdap_map_dim, libgdap), Cint, (Ref{gdap_dim}, Ptr{Cvoid}, Int64, Int64), out, map, rank, dim)

# Rank `rank`'s buffer shape, padding included (ndim values).
gdap_map_local_shape(shape, map, rank) =
    ccall((:gdap_map_local_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Int64), shape, map, rank)

# Rank `rank`'s owned shape: owned indices per dimension (ndim values).
gdap_map_owned_shape(shape, map, rank) =
    ccall((:gdap_map_owned_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Int64), shape, map, rank)

# Number of elements rank `rank` owns (the product of its owned shape; overflow-checked).
gdap_map_owned_count(count, map, rank) =
    ccall((:gdap_map_owned_count, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}, Int64), count, map, rank)

# The rank owning global index `global` (ndim coordinates) and the local index (ndim) there.
gdap_map_owner(rank, local_, map, global_) =
    ccall((:gdap_map_owner, libgdap), Cint, (Ref{Int64}, Ptr{Int64}, Ptr{Cvoid}, Ptr{Int64}),
          rank, local_, map, global_)

# Every rank that owns global index `global` (replicas of unstructured dimensions included), ascending, into
# `ranks` (capacity `capacity`); GDAP_ERR_OUT_OF_RANGE outside [0, size) along any dimension.
gdap_map_owners(ranks, count, map, global_, capacity) =
    ccall((:gdap_map_owners, libgdap), Cint, (Ptr{Int64}, Ref{Int64}, Ptr{Cvoid}, Ptr{Int64}, Int64),
          ranks, count, map, global_, capacity)

# Batched gdap_map_owner for `count` global indices.
gdap_map_owner_batch(ranks, locals, map, globals, count, device, stream) =
    ccall((:gdap_map_owner_batch, libgdap), Cint, (Ptr{Int64}, Ptr{Int64}, Ptr{Cvoid}, Ptr{Int64}, Int64,
          gdap_device, Ptr{Cvoid}),
          ranks, locals, map, globals, count, device, stream)

# Global index (ndim) held at local index `local` (ndim) of rank `rank`'s buffer.
gdap_map_local_to_global(global_, map, rank, local_) =
    ccall((:gdap_map_local_to_global, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Int64, Ptr{Int64}),
          global_, map, rank, local_)

# Number of owned runs of rank `rank` along dimension `dim` (as gdap_dim_num_runs).
gdap_map_num_runs(num_runs, map, rank, dim) =
    ccall((:gdap_map_num_runs, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}, Int64, Int64),
          num_runs, map, rank, dim)

# Owned runs [first, first + capacity) of rank `rank` along dimension `dim` (as gdap_dim_runs).
gdap_map_runs(runs, written, map, rank, dim, first, capacity) =
    ccall((:gdap_map_runs, libgdap), Cint, (Ptr{gdap_run}, Ref{Int64}, Ptr{Cvoid}, Int64, Int64, Int64,
          Int64),
          runs, written, map, rank, dim, first, capacity)

# Wraps a DLPack tensor as a local array, without copying any element.
gdap_array_from_dlpack(out, tensor, dims, ndim, version) =
    ccall((:gdap_array_from_dlpack, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{gdap_dim}, Int64,
          Ptr{UInt8}),
          out, tensor, dims, ndim, version)

# As gdap_array_from_dlpack, for the unversioned DLManagedTensor (taken on success likewise).
gdap_array_from_dlpack_unversioned(out, tensor, dims, ndim, version) =
    ccall((:gdap_array_from_dlpack_unversioned, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{gdap_dim},
          Int64, Ptr{UInt8}),
          out, tensor, dims, ndim, version)

# Wraps memory the caller keeps: `data` is *retained* (it must outlive the array and every tensor exported
# from it; gdap never frees it).
gdap_array_wrap(out, data, dtype, device, strides, dims, ndim) =
    ccall((:gdap_array_wrap, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, gdap_dtype, gdap_device,
          Ptr{Int64}, Ptr{gdap_dim}, Int64),
          out, data, dtype, device, strides, dims, ndim)

# Allocates a C-contiguous local section owned by the array, with the shape the dictionaries imply, on
# `device`.
gdap_array_create(out, dtype, device, dims, ndim) =
    ccall((:gdap_array_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, gdap_dtype, gdap_device, Ptr{gdap_dim},
          Int64),
          out, dtype, device, dims, ndim)

# Destroys the handle.
gdap_array_destroy(array) = ccall((:gdap_array_destroy, libgdap), Cint, (Ptr{Cvoid},), array)

# Exports the local section as a new DLPack tensor sharing the same memory (no element copied).
gdap_array_to_dlpack(out, array) =
    ccall((:gdap_array_to_dlpack, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}), out, array)

# As gdap_array_to_dlpack, as an unversioned DLManagedTensor (for consumers of DLPack < 1.0).
gdap_array_to_dlpack_unversioned(out, array) =
    ccall((:gdap_array_to_dlpack_unversioned, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}), out, array)

# Number of dimensions of the local section.
gdap_array_ndim(ndim, array) = ccall((:gdap_array_ndim, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), ndim, array)

# Address of element (0, ..., 0) (data plus byte offset).
gdap_array_data(data, array) =
    ccall((:gdap_array_data, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}), data, array)

# Shape of the local section (ndim values, padding included).
gdap_array_shape(shape, array) =
    ccall((:gdap_array_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}), shape, array)

# Strides in elements (ndim values; always filled, also for compact buffers).
gdap_array_strides(strides, array) =
    ccall((:gdap_array_strides, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}), strides, array)

# Element type of the section.
gdap_array_dtype(dtype, array) =
    ccall((:gdap_array_dtype, libgdap), Cint, (Ref{gdap_dtype}, Ptr{Cvoid}), dtype, array)

# Where the section's memory lives.
gdap_array_device(device, array) =
    ccall((:gdap_array_device, libgdap), Cint, (Ref{gdap_device}, Ptr{Cvoid}), device, array)

# Non-zero if the section may not be written (DLPack read-only flag).
gdap_array_readonly(readonly, array) =
    ccall((:gdap_array_readonly, libgdap), Cint, (Ref{Cint}, Ptr{Cvoid}), readonly, array)

# Dimension `dim`'s dictionary, copied into `*out` (empty dictionaries resolved).
gdap_array_dim(out, array, dim) =
    ccall((:gdap_array_dim, libgdap), Cint, (Ref{gdap_dim}, Ptr{Cvoid}, Int64), out, array, dim)

# The protocol version string the array was described with.
gdap_array_version(version, array) =
    ccall((:gdap_array_version, libgdap), Cint, (Ref{Ptr{UInt8}}, Ptr{Cvoid}), version, array)

# Local index (ndim) of global index `global` (ndim) in this section; GDAP_ERR_NOT_FOUND if not held here
# (padding counts as held).
gdap_array_global_to_local(local_, array, global_) =
    ccall((:gdap_array_global_to_local, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Ptr{Int64}),
          local_, array, global_)

# Global index (ndim) of local index `local` (ndim).
gdap_array_local_to_global(global_, array, local_) =
    ccall((:gdap_array_local_to_global, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Ptr{Int64}),
          global_, array, local_)

# Creates an in-process group of `nranks` ranks and writes one communicator per rank to comms[0] to
# comms[nranks - 1].
gdap_comm_create_group(comms, nranks) =
    ccall((:gdap_comm_create_group, libgdap), Cint, (Ptr{Ptr{Cvoid}}, Int64), comms, nranks)

# Destroys a communicator (never the MPI or NCCL communicator it wraps) and the buffers gdap kept on it.
gdap_comm_destroy(comm) = ccall((:gdap_comm_destroy, libgdap), Cint, (Ptr{Cvoid},), comm)

# This rank's number, in [0, size).
gdap_comm_rank(rank, comm) = ccall((:gdap_comm_rank, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), rank, comm)

# The number of ranks.
gdap_comm_size(size, comm) = ccall((:gdap_comm_size, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), size, comm)

# What the communicator moves data with.
gdap_comm_kind_get(kind, comm) =
    ccall((:gdap_comm_kind_get, libgdap), Cint, (Ref{Cint}, Ptr{Cvoid}), kind, comm)

# The CUDA stream (a cudaStream_t; NULL for the legacy default stream) on which this rank's device work is
# queued.
gdap_comm_set_stream(comm, stream) =
    ccall((:gdap_comm_set_stream, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}), comm, stream)

# How long (seconds, > 0; INFINITY for ever) this rank waits for the others at a collective call before it
# returns GDAP_ERR_TIMEOUT and the communicator breaks (300 s by default).
gdap_comm_set_timeout(comm, seconds) =
    ccall((:gdap_comm_set_timeout, libgdap), Cint, (Ptr{Cvoid}, Cdouble), comm, seconds)

# Sets the function gdap calls, with `user`, about every 100 ms while this rank waits for the others at a
# collective call on `comm` (NULL, the default: none).
gdap_comm_set_interrupt(comm, check, user) =
    ccall((:gdap_comm_set_interrupt, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}), comm, check, user)

# Says that this rank fails its next collective call on `comm`, with `status` and `reason`.
gdap_comm_fail_next(comm, status, reason) =
    ccall((:gdap_comm_fail_next, libgdap), Cint, (Ptr{Cvoid}, Cint, Ptr{UInt8}), comm, status, reason)

# Collective: returns once every rank has called it.
gdap_comm_barrier(comm) = ccall((:gdap_comm_barrier, libgdap), Cint, (Ptr{Cvoid},), comm)

# Collective.
gdap_map_create_collective(out, comm, ndim, dims) =
    ccall((:gdap_map_create_collective, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{gdap_dim}),
          out, comm, ndim, dims)

# Plans rank `rank`'s part of moving an array of `dtype` from distribution `src` to distribution `dst`.
gdap_plan_create(out, src, dst, dtype, rank) =
    ccall((:gdap_plan_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, gdap_dtype, Int64),
          out, src, dst, dtype, rank)

# Writes the destination roles that keep the most elements on their rank (COSTA's relabeling).
gdap_plan_roles_keeping(roles, nroles, src, dst) =
    ccall((:gdap_plan_roles_keeping, libgdap), Cint, (Ptr{Int64}, Int64, Ptr{Cvoid}, Ptr{Cvoid}),
          roles, nroles, src, dst)

# gdap_plan_create with destination roles: rank `rank`'s destination section is that of `dst`'s rank
# roles[rank] (gdap_plan_roles_keeping says why).
gdap_plan_create_with_roles(out, src, dst, dtype, rank, roles, nroles) =
    ccall((:gdap_plan_create_with_roles, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, gdap_dtype,
          Int64, Ptr{Int64}, Int64),
          out, src, dst, dtype, rank, roles, nroles)

# Destroys a plan.
gdap_plan_destroy(plan) = ccall((:gdap_plan_destroy, libgdap), Cint, (Ptr{Cvoid},), plan)

# Fills `*stats` (whose struct_size the caller sets) with the plan's counts.
gdap_plan_stats_get(stats, plan) =
    ccall((:gdap_plan_stats_get, libgdap), Cint, (Ref{gdap_plan_stats}, Ptr{Cvoid}), stats, plan)

# Collective.
gdap_redistribute(comm, plan, src, dst) =
    ccall((:gdap_redistribute, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
          comm, plan, src, dst)

# Collective, in place.
gdap_allreduce(comm, section, op) =
    ccall((:gdap_allreduce, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Cint), comm, section, op)

# Collective, out of place: the reduce-scatter of replicated or overlapping sections.
gdap_reduce_scatter(comm, source, result, op) =
    ccall((:gdap_reduce_scatter, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Cint),
          comm, source, result, op)

# Collective, out of place.
gdap_reduce_axes(comm, source, result, op, axes, naxes) =
    ccall((:gdap_reduce_axes, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Cint, Ptr{Int64}, Int64),
          comm, source, result, op, axes, naxes)

# Plans rank `rank`'s halo exchange on distribution `map` for elements of `dtype`: which boxes of its padding
# each rank fills and which boxes of its owned elements it sends.
gdap_halo_create(out, map, dtype, rank, options) =
    ccall((:gdap_halo_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, gdap_dtype, Int64,
          Ptr{gdap_halo_options}),
          out, map, dtype, rank, options)

# Destroys a halo.
gdap_halo_destroy(halo) = ccall((:gdap_halo_destroy, libgdap), Cint, (Ptr{Cvoid},), halo)

# Fills `*stats` (whose struct_size the caller sets) with the halo's counts.
gdap_halo_stats_get(stats, halo) =
    ccall((:gdap_halo_stats_get, libgdap), Cint, (Ref{gdap_halo_stats}, Ptr{Cvoid}), stats, halo)

# Collective.
gdap_halo_exchange(comm, halo, local_) =
    ccall((:gdap_halo_exchange, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}), comm, halo, local_)

# Collective: binds `halo` to `comm` and `local` for repeated exchanges.
gdap_halo_exchange_init(out, comm, halo, local_) =
    ccall((:gdap_halo_exchange_init, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
          out, comm, halo, local_)

# Collective.
gdap_exchange_start(exchange) = ccall((:gdap_exchange_start, libgdap), Cint, (Ptr{Cvoid},), exchange)

# Destroys an exchange (not collective; nothing it borrows).
gdap_exchange_destroy(exchange) = ccall((:gdap_exchange_destroy, libgdap), Cint, (Ptr{Cvoid},), exchange)

# Collective.
gdap_dnpy_save(comm, section, prefix) =
    ccall((:gdap_dnpy_save, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Cstring), comm, section, prefix)

# Collective.
gdap_dnpy_load(out, comm, prefix, device) =
    ccall((:gdap_dnpy_load, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Cstring, gdap_device),
          out, comm, prefix, device)

# Collective.
gdap_zarr_save(comm, map, section, path, options) =
    ccall((:gdap_zarr_save, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Cstring,
          Ptr{gdap_zarr_options}),
          comm, map, section, path, options)

# Collective.
gdap_zarr_load(comm, map, section, path) =
    ccall((:gdap_zarr_load, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Cstring),
          comm, map, section, path)

# Reads the global shape and dtype of the Zarr v3 array at `path` (its zarr.json), so that a caller can build
# a map for gdap_zarr_load.
gdap_zarr_shape_read(shape, ndim, dtype, path, capacity) =
    ccall((:gdap_zarr_shape_read, libgdap), Cint, (Ptr{Int64}, Ref{Int64}, Ptr{gdap_dtype}, Cstring, Int64),
          shape, ndim, dtype, path, capacity)

# Collective.
gdap_gemm_create(out, comm, a, b, c, dtype, options) =
    ccall((:gdap_gemm_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid},
          Ptr{Cvoid}, gdap_dtype, Ptr{gdap_gemm_options}),
          out, comm, a, b, c, dtype, options)

# Destroys a plan and the buffers it keeps (host and device).
gdap_gemm_destroy(gemm) = ccall((:gdap_gemm_destroy, libgdap), Cint, (Ptr{Cvoid},), gemm)

# Fills `*stats` (whose struct_size the caller sets) with the plan's counts.
gdap_gemm_stats_get(stats, gemm) =
    ccall((:gdap_gemm_stats_get, libgdap), Cint, (Ref{gdap_gemm_stats}, Ptr{Cvoid}), stats, gemm)

# Collective.
gdap_gemm_execute(comm, gemm, alpha, a, b, beta, c) =
    ccall((:gdap_gemm_execute, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Cdouble, Ptr{Cvoid}, Ptr{Cvoid},
          Cdouble, Ptr{Cvoid}),
          comm, gemm, alpha, a, b, beta, c)

# Allocates a C-contiguous host section (zero-filled) in a new POSIX shared-memory segment, so that
# gdap_ipc_export can share it with other processes of the node.
gdap_array_create_shm(out, name, dtype, dims, ndim) =
    ccall((:gdap_array_create_shm, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{UInt8}, gdap_dtype, Ptr{gdap_dim},
          Int64),
          out, name, dtype, dims, ndim)

# Writes an IPC handle for `array`'s local section to `handle` (GDAP_IPC_HANDLE_SIZE bytes; a `capacity` below
# that is GDAP_ERR_BUFFER_TOO_SMALL).
gdap_ipc_export(handle, capacity, array) =
    ccall((:gdap_ipc_export, libgdap), Cint, (Ptr{Cvoid}, Int64, Ptr{Cvoid}), handle, capacity, array)

# Opens an IPC handle made by gdap_ipc_export in another process of this node, as a new array over the same
# memory (no element copied; writes on either side are seen by the other, ordered by the processes' own
# synchronisation).
gdap_ipc_open(out, handle, size) =
    ccall((:gdap_ipc_open, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Int64), out, handle, size)

# ---- gdap_mpi.h ----

# Wraps MPI communicator `comm` (its Fortran handle, MPI_Comm_c2f) as a gdap communicator.
gdap_comm_from_mpi(out, comm) =
    ccall((:gdap_comm_from_mpi, libgdap), Cint, (Ref{Ptr{Cvoid}}, Cint), out, comm)

# ---- gdap_cuda.h ----

# Wraps an NCCL communicator (an ncclComm_t) and the CUDA stream (a cudaStream_t, NULL for the legacy default
# stream) its data movement is queued on.
gdap_comm_from_nccl(out, nccl_comm, stream) =
    ccall((:gdap_comm_from_nccl, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}),
          out, nccl_comm, stream)

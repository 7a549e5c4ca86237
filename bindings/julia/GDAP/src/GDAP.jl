"""
    GDAP

Julia binding of gdap's C ABI (`include/gdap/gdap.h`): distributed-array descriptors of the
Distributed Array Protocol, their validation and global maps, and local sections shared without
copying. Each C function has a `ccall` wrapper of the same name (status returned as `Cint`);
the friendlier layer (`DAPArray`, `GlobalMap`, `local_view`, `distarray`) throws `GDAPError`.

Row and column order: the protocol's sections are C-order (row-major). A Julia `Array` is
column-major, so `local_view` returns the section with its dimensions reversed: C index
`(i0, i1)` is Julia index `[i1 + 1, i0 + 1]`. No element moves.

The library is found through `ENV["GDAP_LIBRARY"]` (a path to libgdap.so) or the loader's path.
"""
module GDAP

using Libdl

export Dim, DType, Device, Run, GDAPError, DAPArray, GlobalMap, root_map, replicated_map
export AxisLayout, balance_grid, block_map, cyclic_map, unstructured_map
export block, cyclic, unstructured, undistributed, validate, owned_count
export local_view, distarray, cuda_pointer, owner, destroy!
export Comm, Plan, PlanStats, group, comm_rank, comm_size, barrier, stats, redistribute!, allreduce!
export reduce_scatter!, reduce_axes!
export Halo, HaloOptions, HaloStats, halo_exchange!, HaloExchange, start!
export ZarrOptions, save_zarr, load_zarr!, zarr_shape
export save_dnpy, load_dnpy
export Gemm, GemmOptions, GemmStats, gemm!, GEMM_EXACT, GEMM_TF32, GEMM_BF16
export IPC_HANDLE_SIZE, shm_array, ipc_export, ipc_open

const libgdap = get(ENV, "GDAP_LIBRARY", "libgdap")

# ---------------------------------------------------------------------------------------------
# Status, errors, versions
# ---------------------------------------------------------------------------------------------

const SUCCESS = Cint(0)
const ERR_INVALID_ARGUMENT = Cint(1)
const ERR_PROTOCOL = Cint(2)
const ERR_VERSION = Cint(3)
const ERR_OVERFLOW = Cint(4)
const ERR_OUT_OF_RANGE = Cint(5)
const ERR_NOT_FOUND = Cint(6)
const ERR_BUFFER_TOO_SMALL = Cint(7)
const ERR_NO_MEMORY = Cint(8)
const ERR_UNSUPPORTED = Cint(9)
const ERR_DEVICE = Cint(10)
const ERR_INTERRUPTED = Cint(16)

"""A failed gdap call: the status name and `gdap_last_error()`'s detail."""
struct GDAPError <: Exception
    status::Cint
    name::String
    message::String
end
Base.showerror(io::IO, e::GDAPError) = print(io, e.name, ": ", e.message)

gdap_status_string(status::Integer) = ccall((:gdap_status_string, libgdap), Cstring, (Cint,), status)
gdap_last_error() = ccall((:gdap_last_error, libgdap), Cstring, ())
gdap_version() = ccall((:gdap_version, libgdap), Cint, ())
gdap_version_string() = ccall((:gdap_version_string, libgdap), Cstring, ())
gdap_protocol_version_check(version::AbstractString) =
    ccall((:gdap_protocol_version_check, libgdap), Cint, (Cstring,), version)

"""Throws `GDAPError` unless `status` is success."""
function check(status::Cint)
    status == SUCCESS && return nothing
    throw(GDAPError(status, unsafe_string(gdap_status_string(status)), unsafe_string(gdap_last_error())))
end

version() = VersionNumber(unsafe_string(gdap_version_string()))

# ---------------------------------------------------------------------------------------------
# Plain structs with the C layout
# ---------------------------------------------------------------------------------------------

"""One dimension dictionary, laid out as C's `gdap_dim` (104 bytes)."""
struct Dim
    struct_size::UInt32
    given::UInt32
    dist_type::Int32
    periodic::Int32
    size::Int64
    proc_grid_size::Int64
    proc_grid_rank::Int64
    start::Int64
    stop::Int64
    padding::NTuple{2,Int64}
    block_size::Int64
    indices::Ptr{Int64}
    num_indices::Int64
    one_to_one::Int32
    reserved::Int32
end

"""`GDAP_DIM_INIT`: the empty dictionary `{}`."""
Dim() = Dim(UInt32(104), UInt32(0), Int32(0), Int32(0), 0, 1, 0, 0, 0, (0, 0), 1, C_NULL, 0, Int32(0), Int32(0))

"""Element type with DLPack's `DLDataType` layout."""
struct DType
    code::UInt8
    bits::UInt8
    lanes::UInt16
end

"""Memory location with DLPack's `DLDevice` layout; type 1 = host, 2 = CUDA, 3 = pinned, 13 = managed."""
struct Device
    type::Int32
    id::Int32
end
const CPU = Device(1, 0)
const DEVICE_CUDA = Int32(2)

"""An owned run: global `[global_start, global_start + length)` at local `local_start`."""
struct Run
    global_start::Int64
    length::Int64
    local_start::Int64
end

const KEY_PADDING = UInt32(1)
const KEY_PERIODIC = UInt32(2)
const KEY_BLOCK_SIZE = UInt32(4)
const KEY_ONE_TO_ONE = UInt32(8)

DType(::Type{Float64}) = DType(2, 64, 1)
DType(::Type{Float32}) = DType(2, 32, 1)
DType(::Type{Int64}) = DType(0, 64, 1)
DType(::Type{Int32}) = DType(0, 32, 1)
DType(::Type{UInt8}) = DType(1, 8, 1)
DType(::Type{ComplexF64}) = DType(5, 128, 1)

function julia_type(d::DType)
    d.lanes == 1 || throw(ArgumentError("vector dtypes (lanes $(d.lanes)) have no Julia element type here"))
    d.code == 2 && d.bits == 64 && return Float64
    d.code == 2 && d.bits == 32 && return Float32
    d.code == 0 && d.bits == 64 && return Int64
    d.code == 0 && d.bits == 32 && return Int32
    d.code == 1 && d.bits == 8 && return UInt8
    d.code == 5 && d.bits == 128 && return ComplexF64
    throw(ArgumentError("no Julia element type for DLPack dtype code $(d.code), $(d.bits) bits"))
end

# ---------------------------------------------------------------------------------------------
# Dimension descriptors (the C functions, then constructors that throw)
# ---------------------------------------------------------------------------------------------

gdap_dim_init(dim::Ref{Dim}) = ccall((:gdap_dim_init, libgdap), Cint, (Ref{Dim},), dim)
gdap_dim_set_block(dim::Ref{Dim}, size, grid_size, grid_rank, start, stop) =
    ccall((:gdap_dim_set_block, libgdap), Cint, (Ref{Dim}, Int64, Int64, Int64, Int64, Int64),
          dim, size, grid_size, grid_rank, start, stop)
gdap_dim_set_padding(dim::Ref{Dim}, lower, upper) =
    ccall((:gdap_dim_set_padding, libgdap), Cint, (Ref{Dim}, Int64, Int64), dim, lower, upper)
gdap_dim_set_periodic(dim::Ref{Dim}, periodic) =
    ccall((:gdap_dim_set_periodic, libgdap), Cint, (Ref{Dim}, Cint), dim, periodic)
gdap_dim_set_cyclic(dim::Ref{Dim}, size, grid_size, grid_rank, start, block_size) =
    ccall((:gdap_dim_set_cyclic, libgdap), Cint, (Ref{Dim}, Int64, Int64, Int64, Int64, Int64),
          dim, size, grid_size, grid_rank, start, block_size)
gdap_dim_set_unstructured(dim::Ref{Dim}, size, grid_size, grid_rank, indices::Ptr{Int64}, n, one_to_one) =
    ccall((:gdap_dim_set_unstructured, libgdap), Cint,
          (Ref{Dim}, Int64, Int64, Int64, Ptr{Int64}, Int64, Cint),
          dim, size, grid_size, grid_rank, indices, n, one_to_one)
gdap_dim_set_undistributed(dim::Ref{Dim}, extent) =
    ccall((:gdap_dim_set_undistributed, libgdap), Cint, (Ref{Dim}, Int64), dim, extent)
gdap_dim_validate(dim::Ref{Dim}, dim_index, extent) =
    ccall((:gdap_dim_validate, libgdap), Cint, (Ref{Dim}, Int64, Int64), dim, dim_index, extent)
gdap_dims_validate(dims::Vector{Dim}, ndim, shape) =
    ccall((:gdap_dims_validate, libgdap), Cint, (Ptr{Dim}, Int64, Ptr{Int64}), dims, ndim, shape)
gdap_dim_owned_count(count::Ref{Int64}, dim::Ref{Dim}) =
    ccall((:gdap_dim_owned_count, libgdap), Cint, (Ref{Int64}, Ref{Dim}), count, dim)
gdap_dim_local_extent(extent::Ref{Int64}, dim::Ref{Dim}) =
    ccall((:gdap_dim_local_extent, libgdap), Cint, (Ref{Int64}, Ref{Dim}), extent, dim)
gdap_dim_global_to_local(local_index::Ref{Int64}, dim::Ref{Dim}, global_index) =
    ccall((:gdap_dim_global_to_local, libgdap), Cint, (Ref{Int64}, Ref{Dim}, Int64), local_index, dim, global_index)
gdap_dim_local_to_global(global_index::Ref{Int64}, dim::Ref{Dim}, local_index) =
    ccall((:gdap_dim_local_to_global, libgdap), Cint, (Ref{Int64}, Ref{Dim}, Int64), global_index, dim, local_index)
gdap_dim_num_runs(n::Ref{Int64}, dim::Ref{Dim}) =
    ccall((:gdap_dim_num_runs, libgdap), Cint, (Ref{Int64}, Ref{Dim}), n, dim)
gdap_dim_runs(runs::Vector{Run}, written::Ref{Int64}, dim::Ref{Dim}, first, capacity) =
    ccall((:gdap_dim_runs, libgdap), Cint, (Ptr{Run}, Ref{Int64}, Ref{Dim}, Int64, Int64),
          runs, written, dim, first, capacity)

"""A block dimension; `padding` and `periodic` are given only when passed."""
function block(size, grid_size, grid_rank, start, stop; padding=nothing, periodic=nothing)
    d = Ref(Dim())
    check(gdap_dim_set_block(d, size, grid_size, grid_rank, start, stop))
    padding === nothing || check(gdap_dim_set_padding(d, padding[1], padding[2]))
    periodic === nothing || check(gdap_dim_set_periodic(d, periodic ? 1 : 0))
    return d[]
end

"""A cyclic dimension; `block_size = 0` leaves the optional key out."""
function cyclic(size, grid_size, grid_rank, start; block_size=0)
    d = Ref(Dim())
    check(gdap_dim_set_cyclic(d, size, grid_size, grid_rank, start, block_size))
    return d[]
end

"""
An unstructured dimension. The returned `Dim` points into `indices`: keep `indices` alive
(`GC.@preserve indices ...`) while the `Dim` is used. `one_to_one = -1` leaves the key out.
"""
function unstructured(size, grid_size, grid_rank, indices::Vector{Int64}; one_to_one=-1)
    d = Ref(Dim())
    check(gdap_dim_set_unstructured(d, size, grid_size, grid_rank, pointer(indices), length(indices), one_to_one))
    return d[]
end

"""What the empty dictionary `{}` stands for, for a buffer extent."""
function undistributed(extent)
    d = Ref(Dim())
    check(gdap_dim_set_undistributed(d, extent))
    return d[]
end

"""Checks one dictionary (`extent = -1` when the buffer length is unknown); throws `GDAPError`."""
validate(dim::Dim; index=0, extent=-1) = check(gdap_dim_validate(Ref(dim), index, extent))

"""Checks a whole dim_data against a C-order `shape`; throws `GDAPError`."""
function validate(dims::Vector{Dim}, shape::Vector{Int64})
    length(shape) == length(dims) || throw(ArgumentError("shape has $(length(shape)) entries for $(length(dims)) dimensions"))
    check(gdap_dims_validate(dims, length(dims), shape))
end

function owned_count(dim::Dim)
    n = Ref{Int64}(0)
    check(gdap_dim_owned_count(n, Ref(dim)))
    return n[]
end

# ---------------------------------------------------------------------------------------------
# Process grid and global maps
# ---------------------------------------------------------------------------------------------

gdap_grid_rank_to_coords(coords::Vector{Int64}, ndim, grid_shape::Vector{Int64}, rank) =
    ccall((:gdap_grid_rank_to_coords, libgdap), Cint, (Ptr{Int64}, Int64, Ptr{Int64}, Int64),
          coords, ndim, grid_shape, rank)
gdap_grid_coords_to_rank(rank::Ref{Int64}, ndim, grid_shape::Vector{Int64}, coords::Vector{Int64}) =
    ccall((:gdap_grid_coords_to_rank, libgdap), Cint, (Ref{Int64}, Int64, Ptr{Int64}, Ptr{Int64}),
          rank, ndim, grid_shape, coords)

gdap_map_create(out::Ref{Ptr{Cvoid}}, nranks, ndim, dims::Vector{Dim}) =
    ccall((:gdap_map_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Int64, Ptr{Dim}), out, nranks, ndim, dims)
gdap_map_create_root(out::Ref{Ptr{Cvoid}}, nranks, ndim, shape::Vector{Int64}, root) =
    ccall((:gdap_map_create_root, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Int64, Ptr{Int64}, Int64),
          out, nranks, ndim, shape, root)
gdap_map_create_replicated(out::Ref{Ptr{Cvoid}}, nranks, ndim, shape::Vector{Int64}) =
    ccall((:gdap_map_create_replicated, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Int64, Ptr{Int64}),
          out, nranks, ndim, shape)
gdap_map_destroy(map::Ptr{Cvoid}) = ccall((:gdap_map_destroy, libgdap), Cint, (Ptr{Cvoid},), map)
gdap_map_ndim(n::Ref{Int64}, map::Ptr{Cvoid}) = ccall((:gdap_map_ndim, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), n, map)
gdap_map_nranks(n::Ref{Int64}, map::Ptr{Cvoid}) =
    ccall((:gdap_map_nranks, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), n, map)
gdap_map_global_shape(shape::Vector{Int64}, map::Ptr{Cvoid}) =
    ccall((:gdap_map_global_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}), shape, map)
gdap_map_grid_shape(shape::Vector{Int64}, map::Ptr{Cvoid}) =
    ccall((:gdap_map_grid_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}), shape, map)
gdap_map_dim(out::Ref{Dim}, map::Ptr{Cvoid}, rank, dim) =
    ccall((:gdap_map_dim, libgdap), Cint, (Ref{Dim}, Ptr{Cvoid}, Int64, Int64), out, map, rank, dim)
gdap_map_local_shape(shape::Vector{Int64}, map::Ptr{Cvoid}, rank) =
    ccall((:gdap_map_local_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Int64), shape, map, rank)
gdap_map_owned_shape(shape::Vector{Int64}, map::Ptr{Cvoid}, rank) =
    ccall((:gdap_map_owned_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Int64), shape, map, rank)
gdap_map_owned_count(n::Ref{Int64}, map::Ptr{Cvoid}, rank) =
    ccall((:gdap_map_owned_count, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}, Int64), n, map, rank)
gdap_map_owner(rank::Ref{Int64}, local_index::Vector{Int64}, map::Ptr{Cvoid}, global_index::Vector{Int64}) =
    ccall((:gdap_map_owner, libgdap), Cint, (Ref{Int64}, Ptr{Int64}, Ptr{Cvoid}, Ptr{Int64}),
          rank, local_index, map, global_index)
gdap_map_owners(ranks::Vector{Int64}, count::Ref{Int64}, map::Ptr{Cvoid}, global_index::Vector{Int64}, capacity) =
    ccall((:gdap_map_owners, libgdap), Cint, (Ptr{Int64}, Ref{Int64}, Ptr{Cvoid}, Ptr{Int64}, Int64),
          ranks, count, map, global_index, capacity)
gdap_map_owner_batch(ranks::Ptr{Int64}, locals::Ptr{Int64}, map::Ptr{Cvoid}, globals::Ptr{Int64}, count,
                     device::Device, stream::Ptr{Cvoid}) =
    ccall((:gdap_map_owner_batch, libgdap), Cint,
          (Ptr{Int64}, Ptr{Int64}, Ptr{Cvoid}, Ptr{Int64}, Int64, Device, Ptr{Cvoid}),
          ranks, locals, map, globals, count, device, stream)
gdap_map_local_to_global(global_index::Vector{Int64}, map::Ptr{Cvoid}, rank, local_index::Vector{Int64}) =
    ccall((:gdap_map_local_to_global, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Int64, Ptr{Int64}),
          global_index, map, rank, local_index)
gdap_map_num_runs(n::Ref{Int64}, map::Ptr{Cvoid}, rank, dim) =
    ccall((:gdap_map_num_runs, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}, Int64, Int64), n, map, rank, dim)
gdap_map_runs(runs::Vector{Run}, written::Ref{Int64}, map::Ptr{Cvoid}, rank, dim, first, capacity) =
    ccall((:gdap_map_runs, libgdap), Cint, (Ptr{Run}, Ref{Int64}, Ptr{Cvoid}, Int64, Int64, Int64, Int64),
          runs, written, map, rank, dim, first, capacity)

"""The global view of a distribution: every rank's dictionaries, checked collectively."""
mutable struct GlobalMap
    handle::Ptr{Cvoid}
    ndim::Int
end

"""`dims[r][i]` is rank `r-1`'s dictionary for C dimension `i-1`."""
function GlobalMap(dims::Vector{Vector{Dim}})
    ndim = isempty(dims) ? 0 : length(dims[1])
    flat = reduce(vcat, dims; init=Dim[])
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_map_create(out, length(dims), ndim, flat))
    map = GlobalMap(out[], ndim)
    finalizer(destroy!, map)
    return map
end

function destroy!(map::GlobalMap)
    map.handle == C_NULL || gdap_map_destroy(map.handle)
    map.handle = C_NULL
    return nothing
end

"""(rank, C-order local index) owning a C-order global index (0-based)."""
function owner(map::GlobalMap, global_index::Vector{Int64})
    rank = Ref{Int64}(-1)
    local_index = zeros(Int64, map.ndim)
    check(gdap_map_owner(rank, local_index, map.handle, global_index))
    return rank[], local_index
end

function adopt_map(out::Ref{Ptr{Cvoid}}, ndim)
    map = GlobalMap(out[], ndim)
    finalizer(destroy!, map)
    return map
end

"""The whole array of C-order `shape` on rank `root` of `nranks`, nothing elsewhere: the layout of
a gather's result or a scatter's source."""
function root_map(nranks::Integer, shape::Vector{Int64}; root::Integer=0)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_map_create_root(out, nranks, length(shape), shape, root))
    return adopt_map(out, length(shape))
end

"""The whole array of C-order `shape` on every one of `nranks` ranks: the layout of an
allgather's result or a broadcast's destination."""
function replicated_map(nranks::Integer, shape::Vector{Int64})
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_map_create_replicated(out, nranks, length(shape), shape))
    return adopt_map(out, length(shape))
end

# ---------------------------------------------------------------------------------------------
# Layouts in one call: the C library makes the maps (gdap_map_create_grid, ..._unstructured)
# ---------------------------------------------------------------------------------------------

"""How `gdap_map_create_grid` lays out one dimension (C `gdap_axis_layout`; `lengths` borrowed)."""
struct AxisLayout
    struct_size::UInt32
    dist_type::Int32
    size::Int64
    grid_size::Int64
    block_size::Int64
    lengths::Ptr{Int64}
    halo::Int64
    periodic::Int32
    reserved::Int32
end

"""`GDAP_AXIS_LAYOUT_INIT` with the given fields: a block dimension unless `dist_type = Int32('c')`."""
AxisLayout(size::Integer, grid_size::Integer; dist_type::Integer=Int32('b'), block_size::Integer=1,
           lengths::Ptr{Int64}=Ptr{Int64}(C_NULL), halo::Integer=0, periodic::Bool=false) =
    AxisLayout(UInt32(56), Int32(dist_type), size, grid_size, block_size, lengths, halo, Int32(periodic), Int32(0))

gdap_grid_balance(grid_shape::Vector{Int64}, ndim, nranks) =
    ccall((:gdap_grid_balance, libgdap), Cint, (Ptr{Int64}, Int64, Int64), grid_shape, ndim, nranks)
gdap_map_create_grid(out::Ref{Ptr{Cvoid}}, ndim, axes::Vector{AxisLayout}) =
    ccall((:gdap_map_create_grid, libgdap), Cint, (Ref{Ptr{Cvoid}}, Int64, Ptr{AxisLayout}), out, ndim, axes)
gdap_map_create_unstructured(out::Ref{Ptr{Cvoid}}, nranks, ndim, shape::Vector{Int64}, counts::Vector{Int64},
                             indices::Vector{Int64}, num_indices, one_to_one) =
    ccall((:gdap_map_create_unstructured, libgdap), Cint,
          (Ref{Ptr{Cvoid}}, Int64, Int64, Ptr{Int64}, Ptr{Int64}, Ptr{Int64}, Int64, Cint),
          out, nranks, ndim, shape, counts, indices, num_indices, one_to_one)

"""A C-order process grid for `nranks` ranks: entries 0 of `grid` are free (MPI_Dims_create's rule)."""
function balance_grid(nranks::Integer, grid::Vector{Int64})
    out = copy(grid)
    check(gdap_grid_balance(out, length(out), nranks))
    return out
end

"""
Even blocks over the C-order process grid `grid` (or irregular ones: `lengths[i]` the owned lengths
of C dimension `i`, `nothing` for even), with `halo` cells of communication padding and `periodic`
axes per dimension.
"""
function block_map(shape::Vector{Int64}, grid::Vector{Int64}; halo=zeros(Int64, length(shape)),
                   periodic=falses(length(shape)), lengths=fill(nothing, length(shape)))
    length(grid) == length(shape) || throw(ArgumentError("grid has $(length(grid)) entries for $(length(shape)) dimensions"))
    owned = [l === nothing ? Int64[] : Vector{Int64}(l) for l in lengths]
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve owned begin
        axes = [AxisLayout(shape[i], grid[i]; halo=halo[i], periodic=Bool(periodic[i]),
                           lengths=lengths[i] === nothing ? Ptr{Int64}(C_NULL) : pointer(owned[i]))
                for i in eachindex(shape)]
        check(gdap_map_create_grid(out, length(axes), axes))
    end
    return adopt_map(out, length(shape))
end

"""Cyclic dimensions (or block-cyclic, `block_size` per dimension) over the C-order grid `grid`."""
function cyclic_map(shape::Vector{Int64}, grid::Vector{Int64}; block_size=ones(Int64, length(shape)))
    length(grid) == length(shape) || throw(ArgumentError("grid has $(length(grid)) entries for $(length(shape)) dimensions"))
    axes = [AxisLayout(shape[i], grid[i]; dist_type=Int32('c'), block_size=block_size[i]) for i in eachindex(shape)]
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_map_create_grid(out, length(axes), axes))
    return adopt_map(out, length(shape))
end

"""Rows (C dimension 0) held by any rank: `indices[r]` lists rank `r-1`'s rows (0-based); other dimensions whole."""
function unstructured_map(shape::Vector{Int64}, indices::Vector{Vector{Int64}}; one_to_one::Union{Nothing,Bool}=nothing)
    flat = reduce(vcat, indices; init=Int64[])
    counts = Int64[length(ix) for ix in indices]
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_map_create_unstructured(out, length(indices), length(shape), shape, counts, flat, length(flat),
                                       one_to_one === nothing ? -1 : Int(one_to_one)))
    return adopt_map(out, length(shape))
end

function owned_count(map::GlobalMap, rank::Integer)
    n = Ref{Int64}(0)
    check(gdap_map_owned_count(n, map.handle, rank))
    return n[]
end

# ---------------------------------------------------------------------------------------------
# Local arrays
# ---------------------------------------------------------------------------------------------

gdap_array_from_dlpack(out::Ref{Ptr{Cvoid}}, tensor::Ptr{Cvoid}, dims::Vector{Dim}, ndim, version::Ptr{UInt8}) =
    ccall((:gdap_array_from_dlpack, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Dim}, Int64, Ptr{UInt8}),
          out, tensor, dims, ndim, version)
gdap_array_from_dlpack_unversioned(out::Ref{Ptr{Cvoid}}, tensor::Ptr{Cvoid}, dims::Vector{Dim}, ndim,
                                   version::Ptr{UInt8}) =
    ccall((:gdap_array_from_dlpack_unversioned, libgdap), Cint,
          (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Dim}, Int64, Ptr{UInt8}), out, tensor, dims, ndim, version)
gdap_array_wrap(out::Ref{Ptr{Cvoid}}, data::Ptr{Cvoid}, dtype::DType, device::Device, strides::Ptr{Int64},
                dims::Vector{Dim}, ndim) =
    ccall((:gdap_array_wrap, libgdap), Cint,
          (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, DType, Device, Ptr{Int64}, Ptr{Dim}, Int64),
          out, data, dtype, device, strides, dims, ndim)
gdap_array_create(out::Ref{Ptr{Cvoid}}, dtype::DType, device::Device, dims::Vector{Dim}, ndim) =
    ccall((:gdap_array_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, DType, Device, Ptr{Dim}, Int64),
          out, dtype, device, dims, ndim)
gdap_array_destroy(array::Ptr{Cvoid}) = ccall((:gdap_array_destroy, libgdap), Cint, (Ptr{Cvoid},), array)
gdap_array_to_dlpack(out::Ref{Ptr{Cvoid}}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_to_dlpack, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}), out, array)
gdap_array_to_dlpack_unversioned(out::Ref{Ptr{Cvoid}}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_to_dlpack_unversioned, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}), out, array)
gdap_array_ndim(n::Ref{Int64}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_ndim, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), n, array)
gdap_array_data(data::Ref{Ptr{Cvoid}}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_data, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}), data, array)
gdap_array_shape(shape::Vector{Int64}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_shape, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}), shape, array)
gdap_array_strides(strides::Vector{Int64}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_strides, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}), strides, array)
gdap_array_dtype(dtype::Ref{DType}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_dtype, libgdap), Cint, (Ref{DType}, Ptr{Cvoid}), dtype, array)
gdap_array_device(device::Ref{Device}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_device, libgdap), Cint, (Ref{Device}, Ptr{Cvoid}), device, array)
gdap_array_readonly(readonly::Ref{Cint}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_readonly, libgdap), Cint, (Ref{Cint}, Ptr{Cvoid}), readonly, array)
gdap_array_dim(out::Ref{Dim}, array::Ptr{Cvoid}, dim) =
    ccall((:gdap_array_dim, libgdap), Cint, (Ref{Dim}, Ptr{Cvoid}, Int64), out, array, dim)
gdap_array_version(version::Ref{Ptr{UInt8}}, array::Ptr{Cvoid}) =
    ccall((:gdap_array_version, libgdap), Cint, (Ref{Ptr{UInt8}}, Ptr{Cvoid}), version, array)
gdap_array_global_to_local(local_index::Vector{Int64}, array::Ptr{Cvoid}, global_index::Vector{Int64}) =
    ccall((:gdap_array_global_to_local, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Ptr{Int64}),
          local_index, array, global_index)
gdap_array_local_to_global(global_index::Vector{Int64}, array::Ptr{Cvoid}, local_index::Vector{Int64}) =
    ccall((:gdap_array_local_to_global, libgdap), Cint, (Ptr{Int64}, Ptr{Cvoid}, Ptr{Int64}),
          global_index, array, local_index)

"""
One process's local section and its distribution (a `gdap_array` handle). `keepalive` holds the
Julia array a section wraps, so the GC cannot free memory gdap still points at.
"""
mutable struct DAPArray
    handle::Ptr{Cvoid}
    keepalive::Any
end

function adopt(handle::Ptr{Cvoid}, keepalive)
    a = DAPArray(handle, keepalive)
    finalizer(destroy!, a)
    return a
end

function destroy!(a::DAPArray)
    a.handle == C_NULL || gdap_array_destroy(a.handle)
    a.handle = C_NULL
    a.keepalive = nothing
    return nothing
end

"""Allocates a C-contiguous section of element type `T` on `device` for C-order `dims`."""
function DAPArray(::Type{T}, dims::Vector{Dim}; device::Device=CPU) where {T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_array_create(out, DType(T), device, dims, length(dims)))
    return adopt(out[], nothing)
end

"""
Shares a Julia array with gdap without copying. `dims` are in C order: `dims[1]` describes the
LAST Julia dimension (the protocol's dimension 0).
"""
function DAPArray(A::Array{T}, dims::Vector{Dim}) where {T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve A check(gdap_array_wrap(out, Ptr{Cvoid}(pointer(A)), DType(T), CPU, Ptr{Int64}(C_NULL),
                                          dims, length(dims)))
    return adopt(out[], A)
end

function c_shape(a::DAPArray)
    n = Ref{Int64}(0)
    check(gdap_array_ndim(n, a.handle))
    shape = zeros(Int64, n[])
    check(gdap_array_shape(shape, a.handle))
    return shape
end

function element_type(a::DAPArray)
    dtype = Ref{DType}(DType(0, 0, 0))
    check(gdap_array_dtype(dtype, a.handle))
    return julia_type(dtype[])
end

function data_pointer(a::DAPArray)
    data = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_array_data(data, a.handle))
    return data[]
end

function device(a::DAPArray)
    d = Ref{Device}(CPU)
    check(gdap_array_device(d, a.handle))
    return d[]
end

"""
The host section as a Julia `Array` sharing its memory (dimensions reversed: column-major view
of a row-major section). Valid while `a` lives. Throws for device memory (use `cuda_pointer`)
and for non-contiguous sections.
"""
function local_view(a::DAPArray)
    device(a).type == DEVICE_CUDA && throw(ArgumentError("the section is in CUDA device memory: use cuda_pointer"))
    shape = c_shape(a)
    strides = zeros(Int64, length(shape))
    check(gdap_array_strides(strides, a.handle))
    expected = 1
    for i in length(shape):-1:1
        shape[i] > 1 && strides[i] != expected && throw(ArgumentError("the section is not C-contiguous"))
        expected *= shape[i]
    end
    T = element_type(a)
    return unsafe_wrap(Array, Ptr{T}(data_pointer(a)), Tuple(reverse(shape)); own=false)
end

"""
For CUDA.jl users: `(address, julia_dims, T)` of a device section, to wrap without copying as
`unsafe_wrap(CuArray, CuPtr{T}(address), julia_dims)`. The section must outlive the CuArray.
"""
function cuda_pointer(a::DAPArray)
    device(a).type == DEVICE_CUDA || throw(ArgumentError("the section is not in CUDA device memory"))
    return UInt(data_pointer(a)), Tuple(reverse(c_shape(a))), element_type(a)
end

function dim_dict(d::Dim)
    dict = Dict{String,Any}("dist_type" => string(Char(d.dist_type)), "size" => d.size,
                            "proc_grid_size" => d.proc_grid_size, "proc_grid_rank" => d.proc_grid_rank)
    if d.dist_type == Int32('b')
        dict["start"] = d.start
        dict["stop"] = d.stop
        (d.given & KEY_PADDING) != 0 && (dict["padding"] = d.padding)
        (d.given & KEY_PERIODIC) != 0 && (dict["periodic"] = d.periodic != 0)
    elseif d.dist_type == Int32('c')
        dict["start"] = d.start
        (d.given & KEY_BLOCK_SIZE) != 0 && (dict["block_size"] = d.block_size)
    elseif d.dist_type == Int32('u')
        dict["indices"] = copy(unsafe_wrap(Array, d.indices, d.num_indices))
        (d.given & KEY_ONE_TO_ONE) != 0 && (dict["one_to_one"] = d.one_to_one != 0)
    end
    return dict
end

"""
The equivalent of Python's `__distarray__()`: `"__version__"`, `"buffer"` (the host section
shared, as `local_view`) and `"dim_data"` (a tuple of Dicts with the protocol's keys).
"""
function distarray(a::DAPArray)
    n = length(c_shape(a))
    dims = map(0:n-1) do i
        d = Ref(Dim())
        check(gdap_array_dim(d, a.handle, i))
        dim_dict(d[])
    end
    version = Ref{Ptr{UInt8}}(C_NULL)
    check(gdap_array_version(version, a.handle))
    return Dict{String,Any}("__version__" => unsafe_string(version[]), "buffer" => local_view(a),
                            "dim_data" => Tuple(dims))
end

# ---------------------------------------------------------------------------------------------
# Communicators and redistribution (gdap.h, gdap_mpi.h, gdap_cuda.h)
# ---------------------------------------------------------------------------------------------

const COMM_GROUP = Cint(1)
const COMM_MPI = Cint(2)
const COMM_NCCL = Cint(3)

"""What one rank's plan moves (C `gdap_plan_stats`); build with `PlanStats()`."""
struct PlanStats
    struct_size::UInt32
    reserved_head::UInt32
    rank::Int64
    nranks::Int64
    send_messages::Int64
    recv_messages::Int64
    send_bytes::Int64
    recv_bytes::Int64
    local_bytes::Int64
    send_runs::Int64
    recv_runs::Int64
    local_runs::Int64
end
PlanStats() = PlanStats(sizeof(PlanStats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

gdap_comm_create_group(comms::Vector{Ptr{Cvoid}}, nranks) =
    ccall((:gdap_comm_create_group, libgdap), Cint, (Ptr{Ptr{Cvoid}}, Int64), comms, nranks)
gdap_comm_destroy(comm::Ptr{Cvoid}) = ccall((:gdap_comm_destroy, libgdap), Cint, (Ptr{Cvoid},), comm)
gdap_comm_rank(rank::Ref{Int64}, comm::Ptr{Cvoid}) =
    ccall((:gdap_comm_rank, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), rank, comm)
gdap_comm_size(size::Ref{Int64}, comm::Ptr{Cvoid}) =
    ccall((:gdap_comm_size, libgdap), Cint, (Ref{Int64}, Ptr{Cvoid}), size, comm)
gdap_comm_kind_get(kind::Ref{Cint}, comm::Ptr{Cvoid}) =
    ccall((:gdap_comm_kind_get, libgdap), Cint, (Ref{Cint}, Ptr{Cvoid}), kind, comm)
gdap_comm_set_stream(comm::Ptr{Cvoid}, stream::Ptr{Cvoid}) =
    ccall((:gdap_comm_set_stream, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}), comm, stream)
gdap_comm_set_timeout(comm::Ptr{Cvoid}, seconds::Real) =
    ccall((:gdap_comm_set_timeout, libgdap), Cint, (Ptr{Cvoid}, Cdouble), comm, seconds)
"""Sets the function gdap calls while this rank waits at a collective call: `check` is
`@cfunction(f, Cint, (Ptr{Cvoid},))` (non-zero stops the wait: ERR_INTERRUPTED), C_NULL clears it."""
gdap_comm_set_interrupt(comm::Ptr{Cvoid}, check::Ptr{Cvoid}, user::Ptr{Cvoid}) =
    ccall((:gdap_comm_set_interrupt, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}), comm, check, user)
gdap_comm_barrier(comm::Ptr{Cvoid}) = ccall((:gdap_comm_barrier, libgdap), Cint, (Ptr{Cvoid},), comm)
"""Wraps an MPI communicator given as its Fortran handle (MPI.jl: `MPI.Comm_c2f(comm)`)."""
gdap_comm_from_mpi(out::Ref{Ptr{Cvoid}}, fortran_comm::Integer) =
    ccall((:gdap_comm_from_mpi, libgdap), Cint, (Ref{Ptr{Cvoid}}, Cint), out, fortran_comm)
"""Wraps an NCCL communicator (an `ncclComm_t`) and a CUDA stream (`C_NULL`: the default stream)."""
gdap_comm_from_nccl(out::Ref{Ptr{Cvoid}}, nccl_comm::Ptr{Cvoid}, stream::Ptr{Cvoid}) =
    ccall((:gdap_comm_from_nccl, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}), out, nccl_comm, stream)
gdap_map_create_collective(out::Ref{Ptr{Cvoid}}, comm::Ptr{Cvoid}, ndim, dims::Vector{Dim}) =
    ccall((:gdap_map_create_collective, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Dim}),
          out, comm, ndim, dims)
gdap_plan_create(out::Ref{Ptr{Cvoid}}, src::Ptr{Cvoid}, dst::Ptr{Cvoid}, dtype::DType, rank) =
    ccall((:gdap_plan_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, DType, Int64),
          out, src, dst, dtype, rank)
gdap_plan_destroy(plan::Ptr{Cvoid}) = ccall((:gdap_plan_destroy, libgdap), Cint, (Ptr{Cvoid},), plan)
gdap_plan_stats_get(stats::Ref{PlanStats}, plan::Ptr{Cvoid}) =
    ccall((:gdap_plan_stats_get, libgdap), Cint, (Ref{PlanStats}, Ptr{Cvoid}), stats, plan)
gdap_redistribute(comm::Ptr{Cvoid}, plan::Ptr{Cvoid}, src::Ptr{Cvoid}, dst::Ptr{Cvoid}) =
    ccall((:gdap_redistribute, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}), comm, plan, src, dst)

"""How a halo is exchanged (C `gdap_halo_options`): `corners` 0 for faces only; `widths` C_NULL or
a pointer to ndim `Int64` caps, kept alive by the caller during `gdap_halo_create`."""
struct HaloOptions
    struct_size::UInt32
    corners::Int32
    widths::Ptr{Int64}
end
HaloOptions(; corners::Bool=true) = HaloOptions(sizeof(HaloOptions), corners ? 1 : 0, C_NULL)

"""What one rank's halo exchange moves (C `gdap_halo_stats`); build with `HaloStats()`."""
struct HaloStats
    struct_size::UInt32
    reserved_head::UInt32
    rank::Int64
    nranks::Int64
    send_messages::Int64
    recv_messages::Int64
    send_bytes::Int64
    recv_bytes::Int64
    local_bytes::Int64
end
HaloStats() = HaloStats(sizeof(HaloStats), 0, 0, 0, 0, 0, 0, 0, 0)

gdap_halo_create(out::Ref{Ptr{Cvoid}}, map::Ptr{Cvoid}, dtype::DType, rank, options::Ref{HaloOptions}) =
    ccall((:gdap_halo_create, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, DType, Int64, Ref{HaloOptions}),
          out, map, dtype, rank, options)
gdap_halo_destroy(halo::Ptr{Cvoid}) = ccall((:gdap_halo_destroy, libgdap), Cint, (Ptr{Cvoid},), halo)
gdap_halo_stats_get(stats::Ref{HaloStats}, halo::Ptr{Cvoid}) =
    ccall((:gdap_halo_stats_get, libgdap), Cint, (Ref{HaloStats}, Ptr{Cvoid}), stats, halo)
gdap_halo_exchange(comm::Ptr{Cvoid}, halo::Ptr{Cvoid}, local_array::Ptr{Cvoid}) =
    ccall((:gdap_halo_exchange, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}), comm, halo, local_array)
gdap_halo_exchange_init(out::Ref{Ptr{Cvoid}}, comm::Ptr{Cvoid}, halo::Ptr{Cvoid}, local_array::Ptr{Cvoid}) =
    ccall((:gdap_halo_exchange_init, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
          out, comm, halo, local_array)
gdap_exchange_start(exchange::Ptr{Cvoid}) = ccall((:gdap_exchange_start, libgdap), Cint, (Ptr{Cvoid},), exchange)
gdap_exchange_destroy(exchange::Ptr{Cvoid}) = ccall((:gdap_exchange_destroy, libgdap), Cint, (Ptr{Cvoid},), exchange)

"""
One rank's communicator (a `gdap_comm` handle): `group(n)` for an in-process group, `Comm(handle)`
for an MPI communicator. Collective calls wait inside C, where Julia's garbage collector cannot
stop the thread: ranks of a group run as Julia threads should keep the collector off
(`GC.enable(false)`) while they make collective calls, or a collection started by one rank waits
for a rank that waits for it, until the group's timeout.
"""
mutable struct Comm
    handle::Ptr{Cvoid}
end

function adopt_comm(handle::Ptr{Cvoid})
    c = Comm(handle)
    finalizer(destroy!, c)
    return c
end

function destroy!(c::Comm)
    c.handle == C_NULL || gdap_comm_destroy(c.handle)
    c.handle = C_NULL
    return nothing
end

"""An in-process group of `n` ranks: `comms[r + 1]` is rank `r`'s, for the thread that runs rank `r`."""
function group(n::Integer)
    handles = fill(C_NULL, max(n, 1))
    check(gdap_comm_create_group(handles, n))
    return [adopt_comm(h) for h in handles[1:n]]
end

"""
Wraps an MPI communicator given as its Fortran handle (MPI.jl: `MPI.Comm_c2f(comm)`; an Int32).
Collective over that communicator; libgdap must use the same MPI library as MPI.jl.
"""
function Comm(fortran_handle::Integer)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_comm_from_mpi(out, Cint(fortran_handle)))
    return adopt_comm(out[])
end

function comm_rank(c::Comm)
    r = Ref{Int64}(0)
    check(gdap_comm_rank(r, c.handle))
    return r[]
end

function comm_size(c::Comm)
    n = Ref{Int64}(0)
    check(gdap_comm_size(n, c.handle))
    return n[]
end

"""Collective: returns once every rank has called it."""
barrier(c::Comm) = check(gdap_comm_barrier(c.handle))

"""Collective: the global view built from each rank's own C-order dictionaries `dims`."""
function GlobalMap(c::Comm, dims::Vector{Dim})
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_map_create_collective(out, c.handle, length(dims), dims))
    map = GlobalMap(out[], length(dims))
    finalizer(destroy!, map)
    return map
end

"""One rank's part of moving an array of element type `T` from map `src` to map `dst`."""
mutable struct Plan
    handle::Ptr{Cvoid}
end

function Plan(src::GlobalMap, dst::GlobalMap, ::Type{T}, rank::Integer) where {T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_plan_create(out, src.handle, dst.handle, DType(T), rank))
    plan = Plan(out[])
    finalizer(destroy!, plan)
    return plan
end

function destroy!(p::Plan)
    p.handle == C_NULL || gdap_plan_destroy(p.handle)
    p.handle = C_NULL
    return nothing
end

"""What the plan's rank sends, receives and copies within itself (a `PlanStats`)."""
function stats(p::Plan)
    s = Ref(PlanStats())
    check(gdap_plan_stats_get(s, p.handle))
    return s[]
end

"""Collective: moves `src` (this rank's section of the plan's source) into `dst`; returns `dst`."""
function redistribute!(dst::DAPArray, c::Comm, p::Plan, src::DAPArray)
    check(gdap_redistribute(c.handle, p.handle, src.handle, dst.handle))
    return dst
end

gdap_allreduce(comm::Ptr{Cvoid}, section::Ptr{Cvoid}, op) =
    ccall((:gdap_allreduce, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Cint), comm, section, op)

const REDUCE_OPS = Dict(:sum => 1, :prod => 2, :min => 3, :max => 4)

"""Collective, in place: `a` becomes the element-wise `op` (:sum, :prod, :min, :max) of every rank's section."""
function allreduce!(a::DAPArray, c::Comm, op::Symbol=:sum)
    haskey(REDUCE_OPS, op) || throw(ArgumentError("op must be :sum, :prod, :min or :max, not :$op"))
    check(gdap_allreduce(c.handle, a.handle, REDUCE_OPS[op]))
    return a
end

gdap_reduce_scatter(comm::Ptr{Cvoid}, source::Ptr{Cvoid}, result::Ptr{Cvoid}, op) =
    ccall((:gdap_reduce_scatter, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Cint), comm, source, result, op)
gdap_reduce_axes(comm::Ptr{Cvoid}, source::Ptr{Cvoid}, result::Ptr{Cvoid}, op, axes, naxes) =
    ccall((:gdap_reduce_axes, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Cint, Ptr{Int64}, Int64),
          comm, source, result, op, axes, naxes)

"""Collective: each element `result` owns becomes the `op` (:sum, :prod, :min, :max) over every
rank whose `source` section holds it (replicated or overlapping sections); returns `result`."""
function reduce_scatter!(result::DAPArray, c::Comm, source::DAPArray, op::Symbol=:sum)
    haskey(REDUCE_OPS, op) || throw(ArgumentError("op must be :sum, :prod, :min or :max, not :$op"))
    check(gdap_reduce_scatter(c.handle, source.handle, result.handle, REDUCE_OPS[op]))
    return result
end

"""Collective: the global reduction (:sum, :prod, :min, :max, :mean) of the distributed array
`source` over `axes` (`nothing`: every axis; else the C API's 0-based axes), each element counted
once, into the owned elements of `result` (the kept shape in any distribution); returns `result`."""
function reduce_axes!(result::DAPArray, c::Comm, source::DAPArray, op::Symbol=:sum; axes=nothing)
    ops = merge(REDUCE_OPS, Dict(:mean => 5))
    haskey(ops, op) || throw(ArgumentError("op must be :sum, :prod, :min, :max or :mean, not :$op"))
    if axes === nothing
        check(gdap_reduce_axes(c.handle, source.handle, result.handle, ops[op], Ptr{Int64}(C_NULL), 0))
    else
        list = Int64[a for a in axes]
        GC.@preserve list check(gdap_reduce_axes(c.handle, source.handle, result.handle, ops[op], pointer(list),
                                                 length(list)))
    end
    return result
end

"""How `save_zarr` writes (C `gdap_zarr_options`): `codec` :zstd, :blosc_lz4, :blosc_zstd or :raw
at `level` (zstd 1 to 22, blosc 1 to 9; 0 for the default); `shards` true (the default) writes one
shard per rank's block with inner chunks of at most `chunk_bytes` (0: 2 MiB), false one chunk per
block; `shuffle` (:shuffle, :noshuffle, :bitshuffle) for blosc; `overwrite` replaces a store."""
struct ZarrOptions
    struct_size::UInt32
    reserved_head::UInt32
    codec::Int32
    zstd_level::Int32
    overwrite::Int32
    reserved::Int32
    layout::Int32
    shuffle::Int32
    chunk_bytes::Int64
end
const ZARR_CODECS = Dict(:raw => 0, :zstd => 1, :blosc_lz4 => 2, :blosc_zstd => 3)
const ZARR_SHUFFLES = Dict(:shuffle => 0, :noshuffle => 1, :bitshuffle => 2)
function ZarrOptions(; codec::Symbol=:zstd, level::Integer=0, overwrite::Bool=false, shards::Bool=true,
                     chunk_bytes::Integer=0, shuffle::Symbol=:shuffle)
    haskey(ZARR_CODECS, codec) || throw(ArgumentError("codec must be :zstd, :blosc_lz4, :blosc_zstd or :raw, not :$codec"))
    haskey(ZARR_SHUFFLES, shuffle) || throw(ArgumentError("shuffle must be :shuffle, :noshuffle or :bitshuffle, not :$shuffle"))
    return ZarrOptions(sizeof(ZarrOptions), 0, ZARR_CODECS[codec], level, overwrite ? 1 : 0, 0, shards ? 0 : 1,
                       ZARR_SHUFFLES[shuffle], chunk_bytes)
end

gdap_save_zarr(comm::Ptr{Cvoid}, map::Ptr{Cvoid}, section::Ptr{Cvoid}, path::AbstractString, options::Ref{ZarrOptions}) =
    ccall((:gdap_save_zarr, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Cstring, Ref{ZarrOptions}),
          comm, map, section, path, options)
gdap_load_zarr(comm::Ptr{Cvoid}, map::Ptr{Cvoid}, section::Ptr{Cvoid}, path::AbstractString) =
    ccall((:gdap_load_zarr, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Cstring), comm, map, section, path)
gdap_zarr_shape(path::AbstractString, ndim::Ref{Int64}, shape::Ptr{Int64}, capacity, dtype::Ref{DType}) =
    ccall((:gdap_zarr_shape, libgdap), Cint, (Cstring, Ref{Int64}, Ptr{Int64}, Int64, Ref{DType}),
          path, ndim, shape, capacity, dtype)

"""Collective: writes the distributed array whose sections are `a` on each rank (of map `map`) to
the Zarr v3 store at `path`, each rank writing its own shards (or chunks). Keywords as `ZarrOptions`."""
function save_zarr(a::DAPArray, map::GlobalMap, c::Comm, path::AbstractString; kw...)
    check(gdap_save_zarr(c.handle, map.handle, a.handle, path, Ref(ZarrOptions(; kw...))))
    return nothing
end

"""Collective: fills the owned elements of `a` (this rank's section of `map`) from the Zarr v3
store at `path`; nothing is written unless every rank read everything it needs."""
function load_zarr!(a::DAPArray, map::GlobalMap, c::Comm, path::AbstractString)
    check(gdap_load_zarr(c.handle, map.handle, a.handle, path))
    return a
end

"""The global shape (C order, as the store keeps it) and `DType` of the Zarr v3 array at `path`."""
function zarr_shape(path::AbstractString)
    ndim = Ref{Int64}(0)
    dtype = Ref(DType(0, 0, 0))
    status = gdap_zarr_shape(path, ndim, Ptr{Int64}(C_NULL), 0, dtype)
    shape = zeros(Int64, ndim[])
    if status != 0
        GC.@preserve shape check(gdap_zarr_shape(path, ndim, pointer(shape), length(shape), dtype))
    end
    return Tuple(shape), dtype[]
end

gdap_save_dnpy(comm::Ptr{Cvoid}, section::Ptr{Cvoid}, prefix::AbstractString) =
    ccall((:gdap_save_dnpy, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Cstring), comm, section, prefix)
gdap_load_dnpy(comm::Ptr{Cvoid}, out::Ref{Ptr{Cvoid}}, prefix::AbstractString, device::Device) =
    ccall((:gdap_load_dnpy, libgdap), Cint, (Ptr{Cvoid}, Ref{Ptr{Cvoid}}, Cstring, Device), comm, out, prefix, device)

"""Collective: every rank writes its section `a` (dim_data, protocol version and every element,
padding included) to `<prefix>_<rank>.dnpy`, DistArray's per-rank file format."""
function save_dnpy(a::DAPArray, c::Comm, prefix::AbstractString)
    check(gdap_save_dnpy(c.handle, a.handle, prefix))
    return nothing
end

"""Collective: every rank reads `<prefix>_<rank>.dnpy` (written by gdap or DistArray) into a new
C-contiguous `DAPArray` on `device`, with the file's dim_data, dtype and protocol version."""
function load_dnpy(c::Comm, prefix::AbstractString; device::Device=CPU)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_load_dnpy(c.handle, out, prefix, device))
    return adopt(out[], nothing)
end

"""One rank's part of a halo exchange of element type `T` on map `map`: `corners=false` for faces
only, `widths` (one cap per dimension, C order) to fill only the cells next to the owned range."""
mutable struct Halo
    handle::Ptr{Cvoid}
end

function Halo(map::GlobalMap, ::Type{T}, rank::Integer; corners::Bool=true,
              widths::Union{Nothing,Vector{Int64}}=nothing) where {T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    caps = widths === nothing ? Int64[] : widths
    GC.@preserve caps begin
        options = HaloOptions(sizeof(HaloOptions), corners ? 1 : 0, widths === nothing ? C_NULL : pointer(caps))
        check(gdap_halo_create(out, map.handle, DType(T), rank, Ref(options)))
    end
    halo = Halo(out[])
    finalizer(destroy!, halo)
    return halo
end

function destroy!(h::Halo)
    h.handle == C_NULL || gdap_halo_destroy(h.handle)
    h.handle = C_NULL
    return nothing
end

"""What the halo's rank sends, receives and copies onto itself (a `HaloStats`)."""
function stats(h::Halo)
    s = Ref(HaloStats())
    check(gdap_halo_stats_get(s, h.handle))
    return s[]
end

"""Collective: fills the communication padding of `a` (this rank's section of the halo's map) from
the neighbours' owned elements, in place; returns `a`."""
function halo_exchange!(a::DAPArray, c::Comm, h::Halo)
    check(gdap_halo_exchange(c.handle, h.handle, a.handle))
    return a
end

"""A persistent halo exchange (C `gdap_exchange`): `HaloExchange(a, c, h)` checks and agrees once
(collective), then each `start!` exchanges without either. Keeps `a`, `c` and `h` alive."""
mutable struct HaloExchange
    handle::Ptr{Cvoid}
    keepalive::Tuple{DAPArray,Comm,Halo}
end

function HaloExchange(a::DAPArray, c::Comm, h::Halo)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_halo_exchange_init(out, c.handle, h.handle, a.handle))
    ex = HaloExchange(out[], (a, c, h))
    finalizer(destroy!, ex)
    return ex
end

function destroy!(ex::HaloExchange)
    ex.handle == C_NULL || gdap_exchange_destroy(ex.handle)
    ex.handle = C_NULL
    return nothing
end

"""Collective: one exchange of a `HaloExchange`; returns its array."""
function start!(ex::HaloExchange)
    check(gdap_exchange_start(ex.handle))
    return ex.keepalive[1]
end

# ---------------------------------------------------------------------------------------------
# Distributed GEMM: C = alpha * A * B + beta * C (SUMMA; BLAS on the host, cuBLAS on devices)
# ---------------------------------------------------------------------------------------------

"""Arithmetic modes of `Gemm` (C `gdap_gemm_mode`): exact by default; tensor cores only when asked."""
const GEMM_EXACT = Int32(0)
const GEMM_TF32 = Int32(1)
const GEMM_BF16 = Int32(2)

"""Options of `gdap_gemm_create` (C `gdap_gemm_options`): `mode` a GEMM_* value, `panel_width` 0 for the default."""
struct GemmOptions
    struct_size::UInt32
    mode::Int32
    panel_width::Int64
end
GemmOptions(; mode::Integer=GEMM_EXACT, panel_width::Integer=0) =
    GemmOptions(sizeof(GemmOptions), Int32(mode), Int64(panel_width))

"""What one rank's gemm plan does per call (C `gdap_gemm_stats`); build with `GemmStats()`."""
struct GemmStats
    struct_size::UInt32
    reserved_head::UInt32
    rank::Int64
    nranks::Int64
    grid_rows::Int64
    grid_cols::Int64
    redistributed_a::Int64
    redistributed_b::Int64
    redistributed_c::Int64
    redistribute_bytes::Int64
    panels::Int64
    panel_bytes::Int64
    local_m::Int64
    local_n::Int64
    flops::Int64
end
GemmStats() = GemmStats(sizeof(GemmStats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

gdap_gemm_create(out::Ref{Ptr{Cvoid}}, comm::Ptr{Cvoid}, a::Ptr{Cvoid}, b::Ptr{Cvoid}, c::Ptr{Cvoid}, dtype::DType,
                 options::Ref{GemmOptions}) =
    ccall((:gdap_gemm_create, libgdap), Cint,
          (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, DType, Ref{GemmOptions}),
          out, comm, a, b, c, dtype, options)
gdap_gemm_destroy(gemm::Ptr{Cvoid}) = ccall((:gdap_gemm_destroy, libgdap), Cint, (Ptr{Cvoid},), gemm)
gdap_gemm_stats_get(stats::Ref{GemmStats}, gemm::Ptr{Cvoid}) =
    ccall((:gdap_gemm_stats_get, libgdap), Cint, (Ref{GemmStats}, Ptr{Cvoid}), stats, gemm)
gdap_gemm_execute(comm::Ptr{Cvoid}, gemm::Ptr{Cvoid}, alpha::Float64, a::Ptr{Cvoid}, b::Ptr{Cvoid}, beta::Float64,
                  c::Ptr{Cvoid}) =
    ccall((:gdap_gemm_execute, libgdap), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Cdouble, Ptr{Cvoid}, Ptr{Cvoid}, Cdouble, Ptr{Cvoid}),
          comm, gemm, alpha, a, b, beta, c)

"""Collective: one rank's plan of C = alpha * A * B + beta * C for maps `a` (M x K), `b` (K x N) and
`c` (M x N) in C order over the ranks of `comm`, elements of `T` (Float32 or Float64). No transposes."""
mutable struct Gemm
    handle::Ptr{Cvoid}
end

function Gemm(comm::Comm, a::GlobalMap, b::GlobalMap, c::GlobalMap, ::Type{T};
              mode::Integer=GEMM_EXACT, panel_width::Integer=0) where {T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_gemm_create(out, comm.handle, a.handle, b.handle, c.handle, DType(T),
                           Ref(GemmOptions(; mode=mode, panel_width=panel_width))))
    g = Gemm(out[])
    finalizer(destroy!, g)
    return g
end

function destroy!(g::Gemm)
    g.handle == C_NULL || gdap_gemm_destroy(g.handle)
    g.handle = C_NULL
    return nothing
end

"""What the plan's rank does per call (a `GemmStats`): the grid, what is redistributed, panels, bytes."""
function stats(g::Gemm)
    s = Ref(GemmStats())
    check(gdap_gemm_stats_get(s, g.handle))
    return s[]
end

"""Collective: C = alpha * A * B + beta * C on this rank's sections; returns `c`."""
function gemm!(c::DAPArray, comm::Comm, g::Gemm, a::DAPArray, b::DAPArray; alpha::Real=1.0, beta::Real=0.0)
    check(gdap_gemm_execute(comm.handle, g.handle, Float64(alpha), a.handle, b.handle, Float64(beta), c.handle))
    return c
end

# ---------------------------------------------------------------------------------------------
# IPC: sharing a section with another process of the node (docs/ipc.md)
# ---------------------------------------------------------------------------------------------

"""Bytes of an IPC handle (`GDAP_IPC_HANDLE_SIZE`) and the most dimensions one carries."""
const IPC_HANDLE_SIZE = 2048
const IPC_MAX_NDIM = 8

gdap_array_create_shm(out::Ref{Ptr{Cvoid}}, name::Union{Ptr{Cvoid},AbstractString}, dtype::DType, dims::Vector{Dim},
                      ndim) =
    ccall((:gdap_array_create_shm, libgdap), Cint, (Ref{Ptr{Cvoid}}, Cstring, DType, Ptr{Dim}, Int64),
          out, name isa AbstractString ? name : Cstring(C_NULL), dtype, dims, ndim)
gdap_ipc_export(handle::Vector{UInt8}, capacity, array::Ptr{Cvoid}) =
    ccall((:gdap_ipc_export, libgdap), Cint, (Ptr{Cvoid}, Int64, Ptr{Cvoid}), handle, capacity, array)
gdap_ipc_open(out::Ref{Ptr{Cvoid}}, handle::Vector{UInt8}, size) =
    ccall((:gdap_ipc_open, libgdap), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Int64), out, handle, size)

"""A zero-filled host section of element type `T` for C-order `dims` in a new POSIX shared-memory
segment named `name` ("/something"; `nothing` for a fresh name), so that `ipc_export` can share it.
The segment is unlinked when the array is destroyed."""
function shm_array(::Type{T}, dims::Vector{Dim}; name::Union{Nothing,AbstractString}=nothing) where {T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_array_create_shm(out, name === nothing ? C_NULL : name, DType(T), dims, length(dims)))
    return adopt(out[], nothing)
end

"""The IPC handle (`IPC_HANDLE_SIZE` bytes) of `a`'s section, for another process of this node."""
function ipc_export(a::DAPArray)
    handle = zeros(UInt8, IPC_HANDLE_SIZE)
    check(gdap_ipc_export(handle, length(handle), a.handle))
    return handle
end

"""A `DAPArray` over the memory another process exported with `ipc_export` (no copy)."""
function ipc_open(handle::Vector{UInt8})
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_ipc_open(out, handle, length(handle)))
    return adopt(out[], nothing)
end

end # module GDAP

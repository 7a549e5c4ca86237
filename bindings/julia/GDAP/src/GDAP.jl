"""
    GDAP

Julia binding of gdap's C ABI (`include/gdap/gdap.h`): distributed-array descriptors of the
Distributed Array Protocol, their validation and global maps, and local sections shared without
copying. `capi.jl`, generated from the headers by tools/abigen, holds every C constant, struct mirror
and a `ccall` wrapper of the same name per C function (status returned as `Cint`); this file is the
friendlier layer (`DAPArray`, `GlobalMap`, `local_view`, `distarray`), which throws `GDAPError`.

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
export Comm, Plan, PlanStats, keeping_roles, group, comm_rank, comm_size, barrier, fail_next, stats, redistribute!, allreduce!
export reduce_scatter!, reduce_axes!
export Halo, HaloOptions, HaloStats, halo_exchange!, HaloExchange, start!
export ZarrOptions, save_zarr, load_zarr!, zarr_shape
export save_dnpy, load_dnpy
export Gemm, GemmOptions, GemmStats, gemm!, GEMM_EXACT, GEMM_TF32, GEMM_BF16
export IPC_HANDLE_SIZE, shm_array, ipc_export, ipc_open

const libgdap = get(ENV, "GDAP_LIBRARY", "libgdap")

include("capi.jl")

# ---------------------------------------------------------------------------------------------
# Status, errors, versions
# ---------------------------------------------------------------------------------------------

"""A failed gdap call: the status name and `gdap_last_error()`'s detail."""
struct GDAPError <: Exception
    status::Cint
    name::String
    message::String
end
Base.showerror(io::IO, e::GDAPError) = print(io, e.name, ": ", e.message)

"""Throws `GDAPError` unless `status` is success."""
function check(status::Cint)
    status == GDAP_SUCCESS && return nothing
    throw(GDAPError(status, unsafe_string(gdap_status_string(status)), unsafe_string(gdap_last_error())))
end

version() = VersionNumber(unsafe_string(gdap_version_string()))

# ---------------------------------------------------------------------------------------------
# Plain structs with the C layout
# ---------------------------------------------------------------------------------------------

# The C structs under the names this package has always used (capi.jl mirrors them field for field).
"""One dimension dictionary (C `gdap_dim`); `Dim()` is `GDAP_DIM_INIT`, the empty dictionary `{}`."""
const Dim = gdap_dim
Dim() = GDAP_DIM_INIT
"""Element type with DLPack's `DLDataType` layout (C `gdap_dtype`)."""
const DType = gdap_dtype
"""Memory location with DLPack's `DLDevice` layout (C `gdap_device`): `type` a GDAP_DEVICE_* value."""
const Device = gdap_device
const CPU = Device(GDAP_DEVICE_CPU, 0)
"""An owned run (C `gdap_run`): global `[global_start, global_start + length)` at local `local_start`."""
const Run = gdap_run

DType(::Type{Float64}) = DType(GDAP_DTYPE_FLOAT, 64, 1)
DType(::Type{Float32}) = DType(GDAP_DTYPE_FLOAT, 32, 1)
DType(::Type{Int64}) = DType(GDAP_DTYPE_INT, 64, 1)
DType(::Type{Int32}) = DType(GDAP_DTYPE_INT, 32, 1)
DType(::Type{UInt8}) = DType(GDAP_DTYPE_UINT, 8, 1)
DType(::Type{ComplexF64}) = DType(GDAP_DTYPE_COMPLEX, 128, 1)

function julia_type(d::DType)
    d.lanes == 1 || throw(ArgumentError("vector dtypes (lanes $(d.lanes)) have no Julia element type here"))
    d.code == GDAP_DTYPE_FLOAT && d.bits == 64 && return Float64
    d.code == GDAP_DTYPE_FLOAT && d.bits == 32 && return Float32
    d.code == GDAP_DTYPE_INT && d.bits == 64 && return Int64
    d.code == GDAP_DTYPE_INT && d.bits == 32 && return Int32
    d.code == GDAP_DTYPE_UINT && d.bits == 8 && return UInt8
    d.code == GDAP_DTYPE_COMPLEX && d.bits == 128 && return ComplexF64
    throw(ArgumentError("no Julia element type for DLPack dtype code $(d.code), $(d.bits) bits"))
end

# ---------------------------------------------------------------------------------------------
# Dimension descriptors: constructors that throw
# ---------------------------------------------------------------------------------------------

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
const AxisLayout = gdap_axis_layout

"""`GDAP_AXIS_LAYOUT_INIT` with the given fields: a block dimension unless `dist_type = Int32('c')`."""
AxisLayout(size::Integer, grid_size::Integer; dist_type::Integer=Int32('b'), block_size::Integer=1,
           lengths::Ptr{Int64}=Ptr{Int64}(C_NULL), halo::Integer=0, periodic::Bool=false) =
    AxisLayout(UInt32(sizeof(AxisLayout)), Int32(dist_type), size, grid_size, block_size, lengths, halo,
               Int32(periodic), Int32(0))

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
LAST Julia dimension (the protocol's dimension 0). Throws `DimensionMismatch` unless `size(A)` is
the section shape the dims describe, reversed: gdap reads and writes that many elements at
`pointer(A)`, and a larger section would run past the array.
"""
function DAPArray(A::Array{T}, dims::Vector{Dim}) where {T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve A check(gdap_array_wrap(out, Ptr{Cvoid}(pointer(A)), DType(T), CPU, Ptr{Int64}(C_NULL),
                                          dims, length(dims)))
    a = adopt(out[], A)
    described = Tuple(reverse(c_shape(a)))
    if described != size(A)
        destroy!(a)
        throw(DimensionMismatch("the dims describe a section of Julia size $(described) (C shape " *
                                "$(reverse(described))) but the array has size $(size(A)); dims[1] describes " *
                                "the LAST Julia dimension"))
    end
    return a
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
    device(a).type == GDAP_DEVICE_CUDA && throw(ArgumentError("the section is in CUDA device memory: use cuda_pointer"))
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
    device(a).type == GDAP_DEVICE_CUDA || throw(ArgumentError("the section is not in CUDA device memory"))
    return UInt(data_pointer(a)), Tuple(reverse(c_shape(a))), element_type(a)
end

function dim_dict(d::Dim)
    dict = Dict{String,Any}("dist_type" => string(Char(d.dist_type)), "size" => d.size,
                            "proc_grid_size" => d.proc_grid_size, "proc_grid_rank" => d.proc_grid_rank)
    if d.dist_type == GDAP_DIST_BLOCK
        dict["start"] = d.start
        dict["stop"] = d.stop
        (d.given & GDAP_KEY_PADDING) != 0 && (dict["padding"] = d.padding)
        (d.given & GDAP_KEY_PERIODIC) != 0 && (dict["periodic"] = d.periodic != 0)
    elseif d.dist_type == GDAP_DIST_CYCLIC
        dict["start"] = d.start
        (d.given & GDAP_KEY_BLOCK_SIZE) != 0 && (dict["block_size"] = d.block_size)
    elseif d.dist_type == GDAP_DIST_UNSTRUCTURED
        dict["indices"] = copy(unsafe_wrap(Array, d.indices, d.num_indices))
        (d.given & GDAP_KEY_ONE_TO_ONE) != 0 && (dict["one_to_one"] = d.one_to_one != 0)
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

"""What one rank's plan moves (C `gdap_plan_stats`); `PlanStats()` is ready for `gdap_plan_stats_get`."""
const PlanStats = gdap_plan_stats
PlanStats() = GDAP_PLAN_STATS_INIT

"""How a halo is exchanged (C `gdap_halo_options`): `corners` 0 for faces only; `widths` C_NULL or
a pointer to ndim `Int64` caps, kept alive by the caller during `gdap_halo_create`."""
const HaloOptions = gdap_halo_options
HaloOptions(; corners::Bool=true) = HaloOptions(sizeof(HaloOptions), corners ? 1 : 0, C_NULL)

"""What one rank's halo exchange moves (C `gdap_halo_stats`); `HaloStats()` is ready for `gdap_halo_stats_get`."""
const HaloStats = gdap_halo_stats
HaloStats() = GDAP_HALO_STATS_INIT

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

"""
    fail_next(c::Comm, status::Integer, reason::AbstractString)

This rank fails its next collective call on `c` with `status` (a `GDAP_ERR_*` code) and `reason`
(gdap_comm_fail_next): the call reads none of its arguments, fails at its agreement before any
data moves, and every other rank gets `GDAP_ERR_REMOTE` quoting `status` and `reason`. For a rank
that cannot build its arguments but must still make the call. Not collective.
"""
fail_next(c::Comm, status::Integer, reason::AbstractString) =
    check(gdap_comm_fail_next(c.handle, Cint(status), reason))

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

"""
    Plan(src, dst, T, rank; roles=nothing)

With `roles` (a permutation of `0:n-1`, n the larger map's rank count, the same on every rank),
rank `r` holds destination rank `roles[r+1]`'s section (see `keeping_roles`).
"""
function Plan(src::GlobalMap, dst::GlobalMap, ::Type{T}, rank::Integer; roles=nothing) where {T}
    out = Ref{Ptr{Cvoid}}(C_NULL)
    if roles === nothing
        check(gdap_plan_create(out, src.handle, dst.handle, DType(T), rank))
    else
        r = Vector{Int64}(roles)
        GC.@preserve r check(gdap_plan_create_with_roles(out, src.handle, dst.handle, DType(T), rank, pointer(r),
                                                          length(r)))
    end
    plan = Plan(out[])
    finalizer(destroy!, plan)
    return plan
end

"""
    keeping_roles(src, dst) -> Vector{Int64}

The destination roles that keep the most elements on their rank (COSTA's relabeling): rank `r`
should hold destination rank `roles[r+1]`'s section. The same on every rank; nothing is sent.
"""
function keeping_roles(src::GlobalMap, dst::GlobalMap)
    counts = [Ref{Int64}(0), Ref{Int64}(0)]
    check(gdap_map_nranks(counts[1], src.handle))
    check(gdap_map_nranks(counts[2], dst.handle))
    n = max(counts[1][], counts[2][])
    roles = Vector{Int64}(undef, n)
    GC.@preserve roles check(gdap_plan_roles_keeping(pointer(roles), n, src.handle, dst.handle))
    return roles
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

const REDUCE_OPS = Dict(:sum => GDAP_REDUCE_SUM, :prod => GDAP_REDUCE_PROD, :min => GDAP_REDUCE_MIN,
                        :max => GDAP_REDUCE_MAX)

"""Collective, in place: `a` becomes the element-wise `op` (:sum, :prod, :min, :max) of every rank's section."""
function allreduce!(a::DAPArray, c::Comm, op::Symbol=:sum)
    haskey(REDUCE_OPS, op) || throw(ArgumentError("op must be :sum, :prod, :min or :max, not :$op"))
    check(gdap_allreduce(c.handle, a.handle, REDUCE_OPS[op]))
    return a
end

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
    ops = merge(REDUCE_OPS, Dict(:mean => GDAP_REDUCE_MEAN))
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
const ZarrOptions = gdap_zarr_options
const ZARR_CODECS = Dict(:raw => GDAP_ZARR_RAW, :zstd => GDAP_ZARR_ZSTD, :blosc_lz4 => GDAP_ZARR_BLOSC_LZ4,
                         :blosc_zstd => GDAP_ZARR_BLOSC_ZSTD)
const ZARR_SHUFFLES = Dict(:shuffle => GDAP_ZARR_SHUFFLE, :noshuffle => GDAP_ZARR_NOSHUFFLE,
                           :bitshuffle => GDAP_ZARR_BITSHUFFLE)
function ZarrOptions(; codec::Symbol=:zstd, level::Integer=0, overwrite::Bool=false, shards::Bool=true,
                     chunk_bytes::Integer=0, shuffle::Symbol=:shuffle)
    haskey(ZARR_CODECS, codec) || throw(ArgumentError("codec must be :zstd, :blosc_lz4, :blosc_zstd or :raw, not :$codec"))
    haskey(ZARR_SHUFFLES, shuffle) || throw(ArgumentError("shuffle must be :shuffle, :noshuffle or :bitshuffle, not :$shuffle"))
    return ZarrOptions(sizeof(ZarrOptions), 0, ZARR_CODECS[codec], level, overwrite ? 1 : 0, 0, shards ? 0 : 1,
                       ZARR_SHUFFLES[shuffle], chunk_bytes)
end

"""Collective: writes the distributed array whose sections are `a` on each rank (of map `map`) to
the Zarr v3 store at `path`, each rank writing its own shards (or chunks). Keywords as `ZarrOptions`."""
function save_zarr(a::DAPArray, map::GlobalMap, c::Comm, path::AbstractString; kw...)
    check(gdap_zarr_save(c.handle, map.handle, a.handle, path, Ref(ZarrOptions(; kw...))))
    return nothing
end

"""Collective: fills the owned elements of `a` (this rank's section of `map`) from the Zarr v3
store at `path`; nothing is written unless every rank read everything it needs."""
function load_zarr!(a::DAPArray, map::GlobalMap, c::Comm, path::AbstractString)
    check(gdap_zarr_load(c.handle, map.handle, a.handle, path))
    return a
end

"""The global shape (C order, as the store keeps it) and `DType` of the Zarr v3 array at `path`,
both of one read of its zarr.json: a rank past the buffer is read again with room for it and only
that read counts, so a save between two reads never mixes their answers (asking for the rank, then
for the extents, returned a 3-d buffer's zeros after a 1-d store's extent)."""
function zarr_shape(path::AbstractString)
    ndim = Ref{Int64}(0)
    dtype = Ref(DType(0, 0, 0))
    shape = zeros(Int64, 32)
    while true
        status = GC.@preserve shape gdap_zarr_shape_read(pointer(shape), ndim, dtype, path, length(shape))
        if status != GDAP_ERR_BUFFER_TOO_SMALL
            check(status)
            return Tuple(shape[1:ndim[]]), dtype[]
        end
        shape = zeros(Int64, ndim[])
    end
end

"""Collective: every rank writes its section `a` (dim_data, protocol version and every element,
padding included) to `<prefix>_<rank>.dnpy`, DistArray's per-rank file format."""
function save_dnpy(a::DAPArray, c::Comm, prefix::AbstractString)
    check(gdap_dnpy_save(c.handle, a.handle, prefix))
    return nothing
end

"""Collective: every rank reads `<prefix>_<rank>.dnpy` (written by gdap or DistArray) into a new
C-contiguous `DAPArray` on `device`, with the file's dim_data, dtype and protocol version."""
function load_dnpy(c::Comm, prefix::AbstractString; device::Device=CPU)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(gdap_dnpy_load(out, c.handle, prefix, device))
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
const GEMM_EXACT = GDAP_GEMM_EXACT
const GEMM_TF32 = GDAP_GEMM_TF32
const GEMM_BF16 = GDAP_GEMM_BF16

"""Options of `gdap_gemm_create` (C `gdap_gemm_options`): `mode` a GEMM_* value, `panel_width` 0 for the default."""
const GemmOptions = gdap_gemm_options
GemmOptions(; mode::Integer=GEMM_EXACT, panel_width::Integer=0) =
    GemmOptions(sizeof(GemmOptions), Int32(mode), Int64(panel_width))

"""What one rank's gemm plan does per call (C `gdap_gemm_stats`); `GemmStats()` is ready for `gdap_gemm_stats_get`."""
const GemmStats = gdap_gemm_stats
GemmStats() = GDAP_GEMM_STATS_INIT

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
const IPC_HANDLE_SIZE = GDAP_IPC_HANDLE_SIZE
const IPC_MAX_NDIM = GDAP_IPC_MAX_NDIM

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

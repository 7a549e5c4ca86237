"""GlobalArray: a distributed array seen whole. Its data are gdap sections, one per rank, laid out
by a GlobalMap (the layout); every movement between ranks is one of gdap's collective calls
(redistribute, reduce_axes, reduce_scatter, gemm, halo exchange, Zarr and .dnpy I/O).

One API, two modes (see _context): a Controller drives every rank from this process (single
controller), or each process holds its own rank of an MPI / NCCL communicator (SPMD) and calls the
same methods collectively. Element-wise arithmetic is local (NumPy on the host, CuPy on devices);
anything that reads across ranks goes through gdap.

Reading across ranks, in both modes, is a redistribution into a layout that holds the answer: the
whole array on rank 0 (gather: get() in single-controller mode) or on every rank (allgather: get()
in SPMD mode), or, for a[i, j] and a[0:10, :], the selected elements laid out where their owners
hold them (an unstructured dimension per axis), gathered the same way.

A GlobalArray may carry a pending reduction (cupyx's partial modes, DTensor's Partial): its
sections then hold partial values whose sum (prod, min, max) over the ranks holding an element is
the element. Anything that reads values performs it first, with gdap.reduce_scatter into the
layout asked for.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, TypeVar, Union

import numpy as np

from . import _gdap_c as _c
from . import _stats
from ._agree import Call, Parts, agree_parts, agreed_array, agreed_call, release_agreement
from ._args import axis_items, integer
from ._context import (Context, Controller, DeviceSpec, Spmd, check_devices_argument, cuda_ordinal, device_label,
                       run_c)
from ._comm import Comm, told
from ._errors import InvalidArgumentError, UnsupportedError
from ._local import LocalArray, device_to_c, dtype_to_c, from_distarray, from_dlpack
from ._map import GlobalMap, release_map
from ._paths import c_name
from ._redistribute import release_redistribute

Devices = Union[int, Sequence[DeviceSpec], Controller, None]
_OPS = {"sum": _c.GDAP_REDUCE_SUM, "prod": _c.GDAP_REDUCE_PROD, "min": _c.GDAP_REDUCE_MIN,
        "max": _c.GDAP_REDUCE_MAX, "mean": _c.GDAP_REDUCE_MEAN}
PENDING_OPS = ("sum", "prod", "min", "max")
T = TypeVar("T")
Checked = TypeVar("Checked")  # inside GlobalArray, T names the transpose


# ---- layouts gdap needs for its own moves, made once per shape -------------------------------

@functools.lru_cache(maxsize=64)
def _root_layout(shape: tuple[int, ...], nranks: int, root: int) -> GlobalMap:
    return GlobalMap.root(nranks, shape, root)


@functools.lru_cache(maxsize=64)
def _replicated_layout(shape: tuple[int, ...], nranks: int) -> GlobalMap:
    return GlobalMap.replicated(nranks, shape)


@functools.lru_cache(maxsize=64)
def _block_layout(shape: tuple[int, ...], nranks: int) -> GlobalMap:
    """Even blocks over a balanced grid: where gdap puts results the caller gave no layout for."""
    from . import layout
    return layout.block(shape, nranks=nranks)


# ---- memory --------------------------------------------------------------------------------

_CUPY: list = []


def _cupy() -> Any:
    """CuPy, or None where it is not installed (looked up once)."""
    if not _CUPY:
        try:
            import cupy
        except ImportError:
            cupy = None
        _CUPY.append(cupy)
    return _CUPY[0]


def _device_scope(device: str) -> Any:
    """CUDA device `device` current for a block of CuPy work (nothing to do for host memory)."""
    import contextlib
    ordinal = cuda_ordinal(device)
    cupy = _cupy() if ordinal is not None else None
    return cupy.cuda.Device(ordinal) if cupy is not None else contextlib.nullcontext()


def _allocate(device: str, shape: tuple[int, ...], dtype: np.dtype, zero: bool) -> tuple[Any, int]:
    """(array, address): a new C-contiguous array on `device`, NumPy on the host, CuPy (its memory
    pool) on a CUDA device; (None, 0) where neither can (gdap then allocates)."""
    if device == "cpu":
        return _aligned(shape, dtype, zero)
    cupy = _cupy()
    if cupy is not None and device.startswith("cuda:"):
        with cupy.cuda.Device(cuda_ordinal(device)):
            native = cupy.zeros(shape, dtype) if zero else cupy.empty(shape, dtype)
        return native, int(native.data.ptr)
    return None, 0


_ALIGN = 64  # bytes: what gdap_array_create gives host sections, and what JAX needs to share them


def _aligned(shape: tuple[int, ...], dtype: np.dtype, zero: bool) -> tuple[np.ndarray, int]:
    """(array, address): a C-contiguous NumPy array starting on a 64-byte boundary (NumPy itself
    promises 16)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    raw = (np.zeros if zero else np.empty)(nbytes + _ALIGN, np.uint8)
    start = raw.__array_interface__["data"][0]
    skip = -start % _ALIGN
    return raw[skip:skip + nbytes].view(dtype).reshape(shape), start + skip


def aligned_copy(x: Any) -> Any:
    """A C-contiguous copy of x in new memory: 64-byte aligned on the host (as gdap allocates, and as
    to_jax needs; NumPy's own copy is not), CuPy's on a device."""
    if not isinstance(x, np.ndarray):
        return x.copy(order="C")
    out = _aligned(x.shape, x.dtype, False)[0]
    out[...] = x
    return out


def _address(native: Any) -> int:
    if isinstance(native, np.ndarray):
        return native.__array_interface__["data"][0]
    return int(native.data.ptr)  # CuPy


@functools.lru_cache(maxsize=64)
def _c_codes(dtype: np.dtype, device: str) -> tuple[tuple[int, int, int], tuple[int, int]]:
    """gdap's codes of a dtype and a device, worked out once per pair (every new section needs them)."""
    return dtype_to_c(dtype), device_to_c(device)


def new_section(ctx: Context, layout: GlobalMap, rank: int, dtype: np.dtype, zero: bool = False,
                device: Optional[str] = None) -> tuple[LocalArray, Any]:
    """(LocalArray, native array) for rank `rank`'s section of `layout`, allocated on its device;
    zero-filled when `zero`, and when the section has padding (which no move writes: zeros there,
    not whatever the memory held; on a CUDA device only where CuPy allocates it)."""
    device = device or ctx.device(rank)
    dims = ctx.dims(layout, rank)
    shape = layout.local_shape(rank)
    padded = _padded(layout, rank)
    dtype_c, device_c = _c_codes(np.dtype(dtype), device)
    native, address = _allocate(device, shape, dtype, zero or padded)
    if native is None:  # no CuPy: gdap allocates (zero-filled on the host only)
        handle_ = _c.gdap_array_create(dtype_c, device_c, dims.dims)
        local = LocalArray(handle_)
        if zero and 0 not in shape:
            _fill_zero(local)
        return local, None
    return LocalArray(_c.gdap_array_wrap(address, dtype_c, device_c, None, dims.dims), owner=native), native


def _padded(layout: GlobalMap, rank: int) -> bool:
    """Whether rank `rank`'s section of `layout` has padding (cells it holds but does not own)."""
    return any(any(d.get("padding", ())) for d in layout.dim_data(rank))


def _fill_zero(local: LocalArray) -> None:
    view = _view_of(local)
    view[...] = 0


def _view_of(local: LocalArray) -> Any:
    """An array over a section's memory, no copy: NumPy for host memory, CuPy for device memory."""
    if local.device.startswith("cuda:"):
        cupy = _cupy()
        if cupy is None:
            raise UnsupportedError("reading a device section from Python needs CuPy")
        with cupy.cuda.Device(cuda_ordinal(local.device)):
            return cupy.from_dlpack(local)
    return np.asarray(local)


def _to_host(view: Any) -> np.ndarray:
    if isinstance(view, np.ndarray):
        return view
    return view.get()  # CuPy


def _to_device(host: np.ndarray, device: str) -> Any:
    if device == "cpu":
        return host
    cupy = _cupy()
    if cupy is None:
        raise UnsupportedError("moving host data to %s from Python needs CuPy" % device)
    with cupy.cuda.Device(cuda_ordinal(device)):
        return cupy.asarray(host)


def _wrap(ctx: Context, layout: GlobalMap, rank: int, native: Any, device: str) -> LocalArray:
    """A LocalArray over an array this module made or viewed (C-contiguous, or strided: a
    transposed view), described by the layout."""
    dims = ctx.dims(layout, rank)
    dtype = np.dtype(native.dtype)
    return LocalArray(_c.gdap_array_wrap(_address(native), dtype_to_c(dtype), device_to_c(device),
                                         _element_strides(native), dims.dims), owner=native)


def _element_strides(native: Any) -> Optional[tuple[int, ...]]:
    """A NumPy or CuPy array's strides in elements (gdap's unit); None where it is C-contiguous."""
    if native.flags.c_contiguous:
        return None
    return tuple(int(s) // native.itemsize for s in native.strides)


# ---- choosing where the ranks are ---------------------------------------------------------------

def _spmd(comm: Any, device: Optional[DeviceSpec]) -> Spmd:
    """The SPMD context of `comm` (a gdap.Comm or an mpi4py communicator, wrapped once: collectively)
    with sections on `device`. The communicator is made before the device is read, on every rank
    alike, so that a device only this rank gets wrong can be told to the peers over it (_spmd_told)."""
    gdap_comm = _gdap_comm(comm)
    made = Spmd(gdap_comm, device)  # reads the default device (None) as Spmd does: one context for both
    # Kept on the Comm (a cycle the collector frees with it), one per device: arrays of one
    # communicator and device combine whichever constructor made them.
    contexts = gdap_comm.__dict__.setdefault("_gdap_spmd_contexts", {})
    return contexts.setdefault(made.device(made.ranks[0]), made)


def _gdap_comm(comm: Any) -> Comm:
    """`comm` as a gdap.Comm: itself, or the one made (collectively, gdap_comm_from_mpi: an MPI
    dup) for an mpi4py communicator object, cached while that object lives (a weakref finalizer
    drops it; the dup is freed once no array uses it); a Fortran handle (an int) is cached for the
    process. A cached Comm that timed out stays broken: wrap a new communicator (comm.Dup())."""
    if isinstance(comm, Comm):
        return comm
    key = id(comm)
    hit = _COMMS.get(key)
    if hit is not None and hit[0]() is comm:
        return hit[1]
    made = Comm.from_mpi(comm)
    try:
        alive: Callable[[], Any] = weakref.ref(comm)
        weakref.finalize(comm, _COMMS.pop, key, None)
    except TypeError:  # not weakly referable (a Fortran handle): kept
        alive = _kept(comm)
    _COMMS[key] = (alive, made)
    return made


def _kept(value: Any) -> Callable[[], Any]:
    return lambda: value


def _spmd_told(comm: Any, device: Optional[DeviceSpec], devices: Devices, release: Callable[[Comm], object]) -> Spmd:
    """_spmd(comm, device), a device only this rank cannot use, or devices= given beside comm,
    told to the peers through release (the collective call they make next; telling_peers)."""
    gdap_comm = _gdap_comm(comm)

    def spmd() -> Spmd:
        _refuse_devices_with_comm(devices)
        return _spmd(gdap_comm, device)

    return told(gdap_comm, spmd, release)


def _refuse_devices_with_comm(devices: Devices) -> None:
    if devices is not None:
        raise InvalidArgumentError("give comm (SPMD) or devices (single controller), not both")


_COMMS: dict = {}


def context_for(nranks: int, devices: Devices = None, comm: Any = None, device: Optional[DeviceSpec] = None,
                like: Any = None) -> Context:
    """The context of a new array of `nranks` ranks: SPMD over `comm`, or a Controller of
    `devices` (default: one rank per CUDA device 0 .. nranks-1 when `like` lives on a GPU, else
    nranks ranks in host memory)."""
    if comm is not None:
        _refuse_devices_with_comm(devices)
        ctx: Context = _spmd(comm, device)
    elif isinstance(devices, Controller):
        ctx = devices
    else:
        if devices is None:
            devices = ["cuda:%d" % r for r in range(nranks)] if _on_cuda(like) else ["cpu"] * nranks
        ctx = Controller.of(devices)
    if ctx.nranks != nranks:
        raise InvalidArgumentError("the layout spans %d ranks but %s has %d" % (nranks, _where(ctx), ctx.nranks))
    return ctx


def _on_cuda(x: Any) -> bool:
    query = getattr(x, "__dlpack_device__", None)
    return query is not None and int(query()[0]) in (2, 13)


def _where(ctx: Context) -> str:
    if isinstance(ctx, Controller):
        return "the controller (devices %s)" % ", ".join(ctx.devices)
    return "the communicator"


def _check_layout(layout: Any, shape: Optional[tuple[int, ...]], what: str = "layout") -> GlobalMap:
    if not isinstance(layout, GlobalMap):
        raise TypeError("%s must be a gdap.GlobalMap (gdap.layout.block(...), ...), not %s"
                        % (what, type(layout).__name__))
    if shape is not None and tuple(layout.shape) != tuple(shape):
        raise InvalidArgumentError("%s has shape %s but the array has shape %s" % (what, tuple(layout.shape),
                                                                                    tuple(shape)))
    return layout


# ---- the array -----------------------------------------------------------------------------------

class GlobalArray:
    """A distributed array: one gdap section per rank, laid out by a GlobalMap.

    Make one with gdap.distribute(x, layout) (scatter a whole array), GlobalArray.from_sections
    (per-rank arrays, no copy), GlobalArray.empty / .zeros / .ones / .full, .load_zarr / .load_dnpy,
    or a bridge (from_cupyx, from_jax, from_dtensor, from_distarray). In single-controller mode give `devices`
    (one per rank; default host memory, or GPUs 0.. for a CUDA input); in SPMD mode give `comm`
    (a gdap.Comm over MPI or NCCL, or an mpi4py communicator) and call every method on every rank.
    """

    def __init__(self, ctx: Context, layout: GlobalMap, dtype: Any, sections: dict[int, LocalArray],
                 natives: Optional[dict[int, Any]] = None, pending: Optional[str] = None) -> None:
        # Private: use the constructors above. `sections` holds this process's ranks' sections.
        self._ctx = ctx
        self._layout = layout
        self._dtype = np.dtype(dtype)
        self._sections = sections
        self._natives = dict(natives or {})
        self._pending = pending

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def empty(cls, layout: GlobalMap, dtype: Any = np.float64, *, devices: Devices = None, comm: Any = None,
              device: Optional[DeviceSpec] = None) -> GlobalArray:
        """An array in `layout` whose elements are not set; its padding, if the layout has any, is
        zero (as after scatter and reshard into a padded layout: no move writes padding), except on
        a CUDA device without CuPy, where gdap allocates the section and does not fill it."""
        return cls._new(layout, dtype, devices, comm, device, zero=False)

    @classmethod
    def zeros(cls, layout: GlobalMap, dtype: Any = np.float64, *, devices: Devices = None, comm: Any = None,
              device: Optional[DeviceSpec] = None) -> GlobalArray:
        """An array of zeros in `layout`, padding included."""
        return cls._new(layout, dtype, devices, comm, device, zero=True)

    @classmethod
    def ones(cls, layout: GlobalMap, dtype: Any = np.float64, *, devices: Devices = None, comm: Any = None,
             device: Optional[DeviceSpec] = None) -> GlobalArray:
        """An array of ones in `layout` (as full(layout, 1, dtype))."""
        return cls.full(layout, 1, dtype, devices=devices, comm=comm, device=device)

    @classmethod
    def full(cls, layout: GlobalMap, fill_value: Any, dtype: Any = None, *, devices: Devices = None,
             comm: Any = None, device: Optional[DeviceSpec] = None) -> GlobalArray:
        """An array in `layout` whose every cell, padding included, is `fill_value` (dtype: NumPy's
        for the value, as np.full, unless given). On a CUDA device it needs CuPy."""
        dtype = np.asarray(fill_value).dtype if dtype is None else dtype
        return cls._new(layout, dtype, devices, comm, device, zero=False, fill=(fill_value,))

    @classmethod
    def _new(cls, layout: GlobalMap, dtype: Any, devices: Devices, comm: Any, device: Optional[DeviceSpec],
             zero: bool, fill: tuple = ()) -> GlobalArray:
        """A new array (fill: () or (value,)). SPMD: collective, one agreement after the sections
        are made (_agree: every rank's dtype, shape and layout compared), which a rank that refused (a
        device or memory only it lacks, a layout or dtype it cannot use) makes after Comm.fail_next:
        every rank raises at once (the refusing one its error, the others RemoteError), none goes on
        to wait in its next collective call; ranks that passed different dtypes or layouts all raise
        InvalidArgumentError naming them."""
        gdap_comm = _wrap_first(comm)

        def made() -> GlobalArray:
            return cls._made(layout, dtype, devices, gdap_comm, device, zero, fill)

        if gdap_comm is None:
            return made()
        return agreed_array(gdap_comm, made, _parts)

    @classmethod
    def _made(cls, layout: GlobalMap, dtype: Any, devices: Devices, comm: Optional[Comm],
              device: Optional[DeviceSpec], zero: bool, fill: tuple = ()) -> GlobalArray:
        """_new's sections, made and filled on this process's ranks (local: the caller tells a refusal)."""
        _check_layout(layout, None)
        out = cls._new_in(context_for(layout.nranks, devices, comm, device), layout, dtype, zero)
        for r in out._ctx.ranks if fill else ():
            with _device_scope(out._ctx.device(r)):
                out.local_view(r)[...] = fill[0]
        return out

    @classmethod
    def _new_in(cls, ctx: Context, layout: GlobalMap, dtype: Any, zero: bool = False) -> GlobalArray:
        """New sections of `layout` on the ranks of `ctx`."""
        dtype = np.dtype(dtype)
        dtype_to_c(dtype)  # UnsupportedError for a dtype gdap cannot hold, before anything is allocated
        made = {r: new_section(ctx, layout, r, dtype, zero) for r in ctx.ranks}
        return cls(ctx, layout, dtype, {r: m[0] for r, m in made.items()}, {r: m[1] for r, m in made.items()})

    @classmethod
    def scatter(cls, whole: Any, layout: GlobalMap, *, devices: Devices = None, comm: Any = None,
                device: Optional[DeviceSpec] = None, root: int = 0, dtype: Any = None) -> GlobalArray:
        """Collective: the whole array `whole` (NumPy, CuPy, any DLPack producer, or an array-like
        such as a list of lists, read with np.asarray; in SPMD mode given on rank `root` only, None
        elsewhere, where `dtype` says what it holds) dealt out into `layout`. `dtype` on the root
        converts as np.asarray(whole, dtype) does (NumPy's casting: float to int truncates); in
        SPMD mode the other ranks' `dtype` must be the root's result dtype. The result's sections
        are new memory on the ranks' devices (padding, if the layout has any, zero, except on a
        CUDA device without CuPy: halo_exchange fills it)."""
        def where() -> tuple[Context, int, GlobalMap]:
            _check_layout(layout, None)
            ctx = context_for(layout.nranks, devices, comm, device, like=whole)
            at = integer(root, "root")
            if not 0 <= at < ctx.nranks:
                raise InvalidArgumentError("root %d is not a rank of %d" % (at, ctx.nranks))
            return ctx, at, _root_layout(tuple(layout.shape), layout.nranks, at)

        # A layout, device or root wrong on this rank only: the others are told in the agreement.
        ctx, root, root_layout = told(_wrap_first(comm), where, release_agreement)

        def prepare(r: int) -> tuple[LocalArray, tuple[LocalArray, Any]]:
            if r == root:
                src = cls._root_section(ctx, root_layout, r, whole, layout, dtype)
            else:
                src = new_section(ctx, root_layout, r, _dtype_given(dtype, whole))[0]
            return src, new_section(ctx, layout, r, src.dtype)

        prepared = _prepare(ctx, prepare, lambda ctx, r: release_agreement(ctx.comm(r)))
        dtype_out = prepared[ctx.ranks[0]][0].dtype
        if ctx.spmd:  # layouts, dtypes or shapes that differ: named before the redistribution mixes them up
            agree_parts(ctx.comm(ctx.ranks[0]), layout, dtype_out, None, ctx.device(ctx.ranks[0]))
        plans = _agreed_plans(ctx, root_layout, layout, dtype_out)
        run_c(ctx, lambda r: (plans[r], prepared[r][0], prepared[r][1][0]), _c.gdap_redistribute,
              placeholders=(None,) * 3)
        return cls(ctx, layout, dtype_out, {r: p[1][0] for r, p in prepared.items()},
                   {r: p[1][1] for r, p in prepared.items()})

    @staticmethod
    def _root_section(ctx: Context, root_layout: GlobalMap, r: int, whole: Any, layout: GlobalMap,
                      dtype: Any = None) -> LocalArray:
        """The root's whole array as its section of the root layout, converted to `dtype` (None:
        its own) and moved to its device if needed."""
        if whole is None:
            raise InvalidArgumentError("scatter: the root rank %d passed no array" % r)
        want = None if dtype is None else np.dtype(dtype)
        if want is None and isinstance(whole, np.ndarray) and not whole.dtype.isnative:
            want = whole.dtype.newbyteorder("=")  # a big-endian array (a .npy from another machine) becomes native
        if not hasattr(whole, "shape"):
            whole = np.asarray(whole, dtype=want)
        if tuple(whole.shape) != tuple(layout.shape):
            raise InvalidArgumentError("the array has shape %s but the layout has shape %s"
                                       % (tuple(whole.shape), tuple(layout.shape)))
        device = ctx.device(r)
        if isinstance(whole, np.ndarray) or not hasattr(whole, "__dlpack__"):
            native = _to_device(np.ascontiguousarray(whole, dtype=want), device)
        else:
            local = from_dlpack(whole, root_layout.dim_data(r))
            if local.device == device and want in (None, local.dtype):
                return local
            view = _view_of(local)
            if want is not None and view.dtype != want:
                with _device_scope(local.device):
                    view = view.astype(want)
            native = _to_device(_to_host(view), device) if device == "cpu" or local.device == "cpu" \
                else _copy_between_devices(view, device)
        return _wrap(ctx, root_layout, r, native, device)

    @classmethod
    def from_sections(cls, sections: Any, layout: Optional[GlobalMap] = None, *, devices: Devices = None,
                      comm: Any = None, pending: Optional[str] = None) -> GlobalArray:
        """An array over existing per-rank arrays, without copying: single-controller mode takes
        one section per rank, SPMD mode (comm given) this rank's. A section is a gdap.LocalArray,
        a __distarray__ producer / distbuffer (its dim_data describes it) or an array of the rank's
        local shape in `layout` (NumPy, CuPy, PyTorch, JAX, any DLPack producer). Without `layout`
        the sections' dim_data make it (collectively in SPMD mode). `pending` ('sum', 'prod',
        'min', 'max') says the sections hold partial values of that reduction."""
        if comm is not None:
            return cls._from_local_section(sections, layout, comm, pending, devices)
        _check_pending(pending)
        if isinstance(sections, (LocalArray, Mapping)) or hasattr(sections, "__distarray__") or not isinstance(
                sections, Sequence):
            raise TypeError("from_sections without comm (single controller) takes a sequence of one section per "
                            "rank, not %s" % type(sections).__name__)
        sections = list(sections)
        if layout is not None:
            _check_layout(layout, None)
            if layout.nranks != len(sections):
                raise InvalidArgumentError("the layout spans %d ranks but %d sections were given"
                                           % (layout.nranks, len(sections)))
        locals_ = {r: _as_section(x, layout, r) for r, x in enumerate(sections)}
        if layout is None:
            layout = GlobalMap([s.dim_data for s in locals_.values()], [s.shape for s in locals_.values()])
        _check_sections(locals_, layout)
        found = [s.device for s in locals_.values()]
        if devices is None:
            devices = found
        ctx = context_for(layout.nranks, devices)
        for r, s in locals_.items():
            if s.device != ctx.device(r):
                raise InvalidArgumentError("rank %d's section is on %s, but the controller puts rank %d on %s"
                                           % (r, s.device, r, ctx.device(r)))
        return cls(ctx, layout, locals_[0].dtype, locals_, pending=pending)

    @classmethod
    def _from_local_section(cls, section: Any, layout: Optional[GlobalMap], comm: Any,
                            pending: Optional[str], devices: Devices = None) -> GlobalArray:
        """SPMD from_sections: collective, ending in one agreement on the dtype, shape and layout
        (_agree), which a rank whose section or arguments are wrong makes after Comm.fail_next."""
        ctx = _spmd(comm, None)
        rank = ctx.ranks[0]
        gdap_comm = ctx.comm(rank)
        given = layout
        if given is None:  # a section or pending wrong on this rank only: the others are told in the collective map
            def checked() -> LocalArray:
                _refuse_devices_with_comm(devices)
                _check_pending(pending)
                return _as_section(section, None, rank)

            first = told(gdap_comm, checked, release_map)
            given = GlobalMap.collective(gdap_comm, first)

        def made() -> GlobalArray:
            if layout is None:
                local = first
            else:
                local = cls._checked_section(section, layout, ctx, pending, devices)
            return cls(_spmd(comm, local.device), given, local.dtype, {rank: local}, pending=pending)

        return agreed_array(gdap_comm, made, _parts)

    @staticmethod
    def _checked_section(section: Any, layout: GlobalMap, ctx: Context, pending: Optional[str],
                         devices: Devices) -> LocalArray:
        """This rank's section of `layout` (SPMD from_sections with a layout), every argument checked."""
        _refuse_devices_with_comm(devices)
        _check_pending(pending)
        _check_layout(layout, None)
        if layout.nranks != ctx.nranks:
            raise InvalidArgumentError("the layout spans %d ranks but the communicator has %d"
                                       % (layout.nranks, ctx.nranks))
        local = _as_section(section, layout, ctx.ranks[0])
        _check_sections({ctx.ranks[0]: local}, layout)
        return local

    # -- what it is ------------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._layout.shape)

    @property
    def ndim(self) -> int:
        return len(self._layout.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def itemsize(self) -> int:
        """Bytes per element, as NumPy's."""
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the elements of the whole shape (size * itemsize, as NumPy's), over all ranks."""
        return self.size * self._dtype.itemsize

    @property
    def layout(self) -> GlobalMap:
        """The distribution: every rank's dim_data (a gdap.GlobalMap)."""
        return self._layout

    @property
    def nranks(self) -> int:
        return self._ctx.nranks

    @property
    def mode(self) -> str:
        """'controller' (this process drives every rank) or 'spmd' (one rank per process)."""
        return "spmd" if self._ctx.spmd else "controller"

    @property
    def context(self) -> Context:
        """The Controller or Spmd context whose ranks hold the sections."""
        return self._ctx

    @property
    def pending(self) -> Optional[str]:
        """The reduction the sections' partial values still await ('sum', ...), or None."""
        return self._pending

    @property
    def devices(self) -> dict[int, str]:
        """Each held rank's device ('cpu', 'cuda:N')."""
        return {r: self._ctx.device(r) for r in self._ctx.ranks}

    @property
    def sections(self) -> dict[int, LocalArray]:
        """This process's ranks' sections (every rank in single-controller mode, its own in SPMD)."""
        return dict(self._sections)

    def section(self, rank: Optional[int] = None) -> LocalArray:
        """Rank `rank`'s section (default: this process's rank in SPMD mode, rank 0 otherwise)."""
        rank = self._ctx.ranks[0] if rank is None else integer(rank, "rank")
        if rank not in self._sections:
            raise InvalidArgumentError("rank %d's section is not held by this process (it holds %s)"
                                       % (rank, list(self._sections)))
        return self._sections[rank]

    def local_view(self, rank: Optional[int] = None) -> Any:
        """Rank `rank`'s section as a NumPy (host) or CuPy (device) array over the same memory."""
        rank = self._ctx.ranks[0] if rank is None else integer(rank, "rank")
        view = self._natives.get(rank)
        if view is None:
            view = self._natives[rank] = _view_of(self.section(rank))
        return view

    def __repr__(self) -> str:
        from ._describe import describe
        return describe(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d GlobalArray")
        return self.shape[0]

    # -- moving ---------------------------------------------------------------------------------

    def reshard(self, layout: GlobalMap) -> GlobalArray:
        """Collective: the same array in another layout (new sections, their padding zero except on
        a CUDA device without CuPy; this one is unchanged). A pending reduction is performed on the way (gdap.reduce_scatter). In SPMD
        mode a rank whose layout is wrong still takes part, so that every rank raises (the others
        RemoteError)."""
        ctx = self._ctx

        def prepare(r: int) -> tuple[LocalArray, Any]:
            _check_layout(layout, self.shape)
            if layout.nranks != ctx.nranks:
                raise InvalidArgumentError("the layout spans %d ranks but the array has %d" % (layout.nranks,
                                                                                             ctx.nranks))
            return new_section(ctx, layout, r, self._dtype)

        if self._pending is not None:
            _prepare(ctx, prepare, _release_reduce_scatter)
            return self._reduce_into(layout)
        made = _prepare(ctx, prepare, _release_redistribute)
        plans = _agreed_plans(ctx, self._layout, layout, self._dtype)
        src = self._sections
        run_c(ctx, lambda r: (plans[r], src[r], made[r][0]), _c.gdap_redistribute, placeholders=(None,) * 3)
        return GlobalArray(ctx, layout, self._dtype, {r: m[0] for r, m in made.items()},
                           {r: m[1] for r, m in made.items()})

    def _reduce_into(self, layout: GlobalMap) -> GlobalArray:
        """Collective: the pending reduction, reduce-scattered into `layout`."""
        code = _OPS[str(self._pending)]
        out = GlobalArray._new_in(self._ctx, layout, self._dtype)
        src, dst, back = _reduction_sections(self, out)
        ctx = self._ctx
        run_c(ctx, lambda r: (src[r], dst[r]), lambda comm, s, d: _c.gdap_reduce_scatter(comm, s, d, code))
        back()
        return out

    def settled(self) -> GlobalArray:
        """Collective: this array with its pending reduction performed (itself if none): the
        values reduce-scattered into even blocks over the same ranks."""
        if self._pending is None:
            return self
        return self._reduce_into(_block_layout(self.shape, self._ctx.nranks))

    def get(self) -> np.ndarray:
        """Collective: the whole array as a NumPy array on the host (single controller: gathered
        to rank 0; SPMD: on every rank)."""
        if self._ctx.spmd:
            return self.allgather()
        whole = self.gather(0)
        assert whole is not None  # rank 0 is this process's in single-controller mode
        return whole

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        if copy is False:  # NumPy 2's protocol: refuse rather than hand over a copy the caller takes for a view
            raise ValueError("a GlobalArray's elements lie in its sections: np.asarray(a, copy=False) cannot view them "
                             "without a copy (np.asarray(a) gathers one; a.local_view(r) views rank r's section)")
        whole = self.get()
        return whole if dtype is None else whole.astype(dtype, copy=False)

    def gather(self, root: int = 0) -> Optional[np.ndarray]:
        """Collective: the whole array on the host of rank `root` (None on the other ranks)."""
        target = self._checked(lambda: _root_layout(self.shape, self._ctx.nranks, integer(root, "root")),
                               _release_redistribute)
        out = self._moved_to(target)
        return _to_host(out.local_view(root)).reshape(self.shape) if root in out._sections else None

    def allgather(self) -> np.ndarray:
        """Collective: the whole array on the host of every rank (SPMD) / of this process."""
        out = self._moved_to(_replicated_layout(self.shape, self._ctx.nranks))
        return _to_host(out.local_view(self._ctx.ranks[0])).reshape(self.shape)

    def _moved_to(self, target: GlobalMap) -> GlobalArray:
        src = self.settled()
        return src.reshard(target)

    # -- element access ------------------------------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        """Reads through the owners: a[i, j] is the element (a NumPy scalar), a[0:10, :] a NumPy
        array of the selected elements, on the host. Integers, slices (any step), Ellipsis, and on
        one axis a 1-d integer array or boolean mask, read as NumPy's fancy indexing (a copy; the
        array's axis goes first where NumPy puts it first). Index arrays on several axes and None
        raise IndexError / TypeError. Collective in SPMD mode (every rank gets the answer)."""
        from ._select import read
        return read(self.settled(), key)

    def __setitem__(self, key: Any, value: Any) -> None:
        """a[key] = value, each rank writing the selected cells it owns (never padding), no gather.
        key: integers, slices (any step), '...', a 1-d integer array or mask on one axis (as a[key]
        reads), or a GlobalArray of bool of a's shape and layout (value then a scalar or a 1-d NumPy
        array or GlobalArray of one value per True cell, in C order, or of one value). value: a
        scalar, a NumPy array broadcastable to the selection (SPMD: every rank passes the same), or
        a GlobalArray of the selection's shape (moved into place by gdap's redistribution:
        collective). See _assign."""
        from ._assign import assign
        assign(self, key, value)

    # -- reductions ----------------------------------------------------------------------------

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            **numpy_only: Any) -> Any:
        """Collective: the sum over `axis` (None: every axis, a NumPy scalar; an int or a tuple: a
        GlobalArray of the kept shape in even blocks), each element counted once (gdap.reduce_axes).
        The result's dtype is NumPy's: bool and integers narrower than 64 bits are summed as int64
        (unsigned: uint64), so that they do not overflow; other dtypes keep theirs; `dtype` sums in
        that dtype instead. Dtypes gdap's C reductions do not take are converted first (_stats.work_dtype:
        float16 and bfloat16 in float32, bool/int16 min and max in uint8/int64, complex sum as real and imaginary
        parts); complex prod/min/max raise UnsupportedError naming the way round. np.sum(a) calls this;
        NumPy's out= and keepdims=True are refused."""
        return self._numpy_reduce("sum", axis, dtype, out, keepdims, numpy_only)

    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             **numpy_only: Any) -> Any:
        """Collective: the product over `axis` (as sum, dtype included)."""
        return self._numpy_reduce("prod", axis, dtype, out, keepdims, numpy_only)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False, **numpy_only: Any) -> Any:
        """Collective: the minimum over `axis` (as sum, in the array's dtype). InvalidArgumentError
        (a ValueError, as NumPy's) when a reduced axis has length 0: the minimum has no identity.
        NaN propagates as in np.min (not np.nanmin): NaN wherever a reduced element is NaN, whichever
        rank holds it; an all-NaN array gives NaN."""
        return self._numpy_reduce("min", axis, None, out, keepdims, numpy_only)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False, **numpy_only: Any) -> Any:
        """Collective: the maximum over `axis` (as min; NaN propagates as in np.max)."""
        return self._numpy_reduce("max", axis, None, out, keepdims, numpy_only)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             **numpy_only: Any) -> Any:
        """Collective: the mean over `axis` (as sum; integers are averaged as float64, or in `dtype`,
        a float or complex dtype; float16 and bfloat16 in float32, returned in their own dtype; complex as its real and
        imaginary parts, each a compensated C mean). Averaging no elements (a reduced axis of length 0) gives NaN with
        NumPy's RuntimeWarning "Mean of empty slice"."""
        def check() -> tuple[Optional[np.dtype], tuple[int, ...]]:
            _refuse_numpy_keywords("mean", out, keepdims, numpy_only)
            want = np.dtype(dtype) if dtype is not None else None
            if want is not None and want.kind not in "fc" and not _stats.is_half(want):
                raise UnsupportedError("mean with dtype=%s: gdap's mean takes a float or complex dtype" % want)
            return want, self._reduced_axes("mean", axis)

        want, axes = self._checked(check, _release_reduce_axes)
        src = self.astype(want) if want is not None and want != self._dtype else self
        src = src if src._dtype.kind in "fc" or _stats.is_half(src._dtype) else src.astype(np.float64)
        _warn_empty_mean(self.shape, axes)
        return src._reduce("mean", axes)

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: Any = False,
            **numpy_only: Any) -> Any:
        """Collective: the variance over `axis` (None, an int or a tuple, as sum), NumPy's: the mean of
        |x - x.mean()|**2 over n - ddof. Two compensated C sums (the mean, then the squared deviations;
        the means, one per result element, allgathered in between); no gather of the array. Result
        dtype as NumPy's: float64 for bool and integers, float16 / bfloat16 for float16 / bfloat16
        (computed in float32), float32 (float64) for complex64 (complex128); `dtype` gives that dtype
        (a complex one: the real variance with an imaginary part of zero, as NumPy's). ddof >= n
        gives inf or NaN with NumPy's RuntimeWarning. keepdims=True as NumPy's; out= is refused."""
        return self._spread("var", axis, dtype, out, ddof, keepdims, numpy_only)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: Any = False,
            **numpy_only: Any) -> Any:
        """Collective: the standard deviation over `axis`, the square root of var (which see)."""
        return self._spread("std", axis, dtype, out, ddof, keepdims, numpy_only)

    def _spread(self, op: str, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: Any, numpy_only: dict) -> Any:
        def check() -> tuple[tuple[int, ...], float, np.dtype, bool]:
            _refuse_numpy_keywords(op, out, False, numpy_only)
            return (self._reduced_axes(op, axis), _stats.check_ddof(ddof), _stats.var_dtype(self._dtype, dtype),
                    _stats.check_keepdims(keepdims))

        axes, ddof_, result, keep = self._checked(check, _release_reduce_axes)
        value = _stats.variance(self, axes, ddof_, result)
        if op == "std":
            value = np.sqrt(value) if not isinstance(value, GlobalArray) else value._local_op(np.sqrt)
        return _stats.with_kept_dims(value, self.shape, axes) if keep else value

    def argmin(self, axis: Any = None, out: Any = None, *, keepdims: Any = False, **numpy_only: Any) -> Any:
        """Collective: the index of the minimum, NumPy's: axis=None the flat (C-order) index into
        the whole array, a NumPy int64; an int the index along that axis, a GlobalArray of int64 in
        even blocks. The first occurrence wins a tie, and a NaN (the first) beats every number, as
        in NumPy. Each rank sends one candidate (value, global index) per result element to the rank
        holding that element (two gdap.redistribute of result-sized arrays per rank); the array is
        not gathered. InvalidArgumentError (a ValueError) for an empty axis; out= is refused."""
        return self._arg("argmin", axis, out, keepdims, numpy_only)

    def argmax(self, axis: Any = None, out: Any = None, *, keepdims: Any = False, **numpy_only: Any) -> Any:
        """Collective: the index of the maximum (as argmin)."""
        return self._arg("argmax", axis, out, keepdims, numpy_only)

    def _arg(self, op: str, axis: Any, out: Any, keepdims: Any, numpy_only: dict) -> Any:
        def check() -> tuple[tuple[int, ...], bool]:
            _refuse_numpy_keywords(op, out, False, numpy_only)
            return _stats.arg_axes(self, op, axis), _stats.check_keepdims(keepdims)

        axes, keep = self._checked(check, _release_redistribute)
        value = _stats.arg_extreme(self, op, axes)
        return _stats.with_kept_dims(value, self.shape, axes) if keep else value

    def any(self, axis: Any = None, out: Any = None, keepdims: Any = False, **numpy_only: Any) -> Any:
        """Collective: whether any element over `axis` is nonzero (NaN counts), NumPy's bool: a C
        sum of int64 counts crosses the ranks. keepdims=True as NumPy's; out= is refused."""
        return self._logical("any", axis, out, keepdims, numpy_only)

    def all(self, axis: Any = None, out: Any = None, keepdims: Any = False, **numpy_only: Any) -> Any:
        """Collective: whether every element over `axis` is nonzero (as any; True over no element)."""
        return self._logical("all", axis, out, keepdims, numpy_only)

    def _logical(self, op: str, axis: Any, out: Any, keepdims: Any, numpy_only: dict) -> Any:
        def check() -> tuple[tuple[int, ...], bool]:
            _refuse_numpy_keywords(op, out, False, numpy_only)
            return _axes(axis, self.ndim), _stats.check_keepdims(keepdims)

        axes, keep = self._checked(check, _release_reduce_axes)
        value = _stats.any_all(self, op, axes)
        return _stats.with_kept_dims(value, self.shape, axes) if keep else value

    def _numpy_reduce(self, op: str, axis: Any, dtype: Any, out: Any, keepdims: bool, numpy_only: dict) -> Any:
        def check() -> tuple[tuple[int, ...], Optional[np.dtype]]:
            _refuse_numpy_keywords(op, out, keepdims, numpy_only)
            return self._reduced_axes(op, axis), None if dtype is None else np.dtype(dtype)

        axes, accumulate = self._checked(check, _release_reduce_axes)
        return self._reduce(op, axes, accumulate)

    def _reduced_axes(self, op: str, axis: Any) -> tuple[int, ...]:
        axes = _axes(axis, self.ndim)
        if op in ("min", "max") and any(self.shape[a] == 0 for a in axes):
            raise InvalidArgumentError("zero-size array to reduction operation %s which has no identity"
                                       % {"min": "minimum", "max": "maximum"}[op])
        return axes

    def _checked(self, check: Callable[[], Checked], release: Optional[Callable[[Context, int], None]]) -> Checked:
        """check()'s result: this rank's checks of a method's arguments, before its first collective
        call. In SPMD mode a failure is told to the peers (telling_peers) through the call they make
        next: the pending reduction's gdap_reduce_scatter, else `release` (None: no collective call
        follows, the method is local)."""
        following = _release_reduce_scatter if self._pending is not None else release
        if following is None or not self._ctx.spmd:
            return check()
        return _prepare(self._ctx, lambda r: check(), following)[self._ctx.ranks[0]]

    def _reduce(self, op: str, axes: tuple[int, ...], accumulate: Optional[np.dtype] = None) -> Any:
        """Collective: the reduction `op` over `axes` (checked: _reduced_axes)."""
        src = self.settled()
        wide = accumulate if accumulate is not None else _result_dtype(op, src._dtype)
        work = _stats.work_dtype(op, wide)  # where C takes no `wide` (float16, bool, int16): one it takes
        if work.kind == "c":
            return _stats.reduce_complex(src if src._dtype == work else src.astype(work), op, axes, work)
        if work != src._dtype:  # NumPy's accumulator: sums and products of small integers in 64 bits
            src = src.astype(work)
        return _stats.as_result(src._reduce_as_is(op, axes), wide)

    def _reduce_as_is(self, op: str, axes: tuple[int, ...]) -> Any:
        """Collective: gdap_reduce_axes of this (settled) array, in its dtype."""
        src = self
        kept = tuple(n for i, n in enumerate(self.shape) if i not in axes)
        ctx = self._ctx
        if kept:  # a GlobalArray of the kept shape, in even blocks
            out = GlobalArray._new_in(ctx, _block_layout(kept, ctx.nranks), src._dtype)
        else:  # a 0-d section per rank, each the whole reduction
            out = _scalar_results(src)
        sources, results, back = _reduction_sections(src, out)
        code = _OPS[op]
        run_c(ctx, lambda r: (sources[r], results[r]),
              lambda comm, s, d: _c.gdap_reduce_axes(comm, s, d, code, list(axes)))
        back()
        if kept:
            return out
        return _to_host(out.local_view(ctx.ranks[0])).reshape(())[()]

    # -- transposes and reshapes (_reshape: which are views, which move data) ------------------

    @property
    def T(self) -> GlobalArray:
        """The transpose (axes reversed), as a.transpose(): see there."""
        return self.transpose()

    @property
    def mT(self) -> GlobalArray:
        """The last two axes swapped (NumPy's matrix transpose), as swapaxes(-2, -1)."""
        if self.ndim < 2:
            raise InvalidArgumentError("mT needs at least 2 dimensions, not %d" % self.ndim)
        return self.swapaxes(-2, -1)

    def transpose(self, *axes: Any) -> GlobalArray:
        """The array with its axes permuted (none given: reversed; a tuple or separate ints, as
        NumPy's). A view, sharing the sections' memory (a.T[0, 1] = 5 writes a[1, 0]), where the
        permutation keeps the order of the distributed axes (those the grid divides: any axis of
        row or column blocks, cyclic, padded or unstructured rows); every dimension dictionary is
        permuted with its axis. Where it reorders distributed axes (a 2 x 2 grid of blocks), gdap's
        map cannot keep each block on its rank (its ranks are numbered in C order over the grid):
        then it is collective and returns a COPY, each rank's block moved whole to the rank that
        holds it in the permuted grid (one gdap redistribution), padding zero; writes to it do not
        reach this array. A pending reduction stays pending in a view and is performed for a copy.
        In SPMD mode the ranks' axes are agreed first (one all-reduce), views' too."""
        from . import _reshape
        given: Any = axes[0] if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))) \
            else (axes or None)
        ndim = self.ndim
        return self._permuted(lambda: _reshape.permutation(given, ndim))

    def swapaxes(self, axis1: Any, axis2: Any) -> GlobalArray:
        """The array with two axes swapped: a transpose (a view or a copy, as transpose says)."""
        from . import _reshape
        ndim = self.ndim
        return self._permuted(lambda: _reshape.swapped(axis1, axis2, ndim))

    def _permuted(self, permutation: Callable[[], tuple[int, ...]]) -> GlobalArray:
        """The transpose by permutation() (which checks the caller's axes), agreed first in SPMD mode."""
        from . import _reshape
        call, _ = self._agreed_call(lambda: (("transpose", permutation(), "C", None), True))
        return _reshape.transpose(self, call[1])

    def reshape(self, *shape: Any, order: Optional[str] = "C", copy: Optional[bool] = None) -> GlobalArray:
        """The array in another shape (a tuple or separate ints, one -1 inferred), in C order (order='F'
        is a.T.reshape(shape[::-1]).T, 'c', 'f' and None as NumPy reads them, 'A' refused). Never
        gathered. Where every rank's section reshapes alone (flattening or splitting undistributed
        axes; row blocks whose row boundaries fall on rows of the new shape; an axis left as it is
        keeps its distribution, padding included; a replicated array, which every rank holds whole;
        an array of no element) the result is a view of each section, as NumPy's reshape returns a
        view where it can: only where NumPy's reshape of the whole array is a view (a transpose's
        ravel is a copy), an answer every rank agrees on (a copy, on every rank). Otherwise it is
        collective and a COPY in a layout spread over every rank whose sections are flat runs of the
        C-order elements (_reshape.spread_rows; docs/python.md says the rule): the array is
        redistributed to such a layout of its own shape, flattened, redistributed to flat blocks that
        end on rows of the new shape, and reshaped. copy=True always copies; copy=False refuses
        (ValueError) what is not a view. In SPMD mode the ranks' calls are agreed first."""
        if not shape:
            raise TypeError("reshape() takes the new shape (a tuple or separate ints), none was given")
        given: Any = shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) else shape
        return self._reshaped("reshape", given, order, copy)

    def _reshaped(self, what: str, given: Any, order: Any, copy: Any) -> GlobalArray:
        from . import _reshape

        def check() -> tuple[Call, bool]:
            call = ("reshape", _reshape.new_shape(given, self.size), _reshape.check_order(order, what),
                    _reshape.check_copy(copy))
            return call, _reshape.reads_as_c(call[2], self.shape, call[1]) and _reshape.reshapes_as_views(self, call[1])

        (_, target, order_, copy_), all_views = self._agreed_call(check)
        return _reshape.reshaped(self, target, order_, copy_, all_views)

    def _agreed_call(self, check: Callable[[], tuple[Call, bool]]) -> tuple[Call, Optional[bool]]:
        """check()'s call, read from the caller's arguments, and its flag (whether this rank's sections
        reshape as views); in SPMD mode every rank's call, agreed in one all-reduce (agreed_call)
        before anything moves or any rank returns a view, with every rank's flag ANDed in it: a rank
        whose arguments are wrong raises its error and the others RemoteError; ranks whose calls
        differ all raise InvalidArgumentError naming each rank's call; none waits in a move the
        others never start. Controller mode: the flag is None (reshape asks every held rank)."""
        ctx = self._ctx
        if not ctx.spmd:
            return check()[0], None
        return agreed_call(ctx.comm(ctx.ranks[0]), check, ctx.device(ctx.ranks[0]))

    def ravel(self, order: Optional[str] = "C") -> GlobalArray:
        """The array as 1-d (reshape(-1); order 'K' reads C order): a view where each rank's section
        flattens alone (blocks of rows over a 1-d grid, others whole: see reshape), else a copy."""
        return self._reshaped("ravel", -1, order, None)

    def flatten(self, order: Optional[str] = "C") -> GlobalArray:
        """The array as 1-d, always a copy (NumPy's flatten): reshape(-1, copy=True); order as ravel's."""
        return self._reshaped("flatten", -1, order, True)

    def squeeze(self, axis: Any = None) -> GlobalArray:
        """The array without its length-1 axes (`axis`: those, each of length 1, as NumPy's), a view
        (no communication): each rank's section indexed, its dimension dictionary dropped with the
        axis; where the grid divides one (only the ranks of its one cell hold elements), its grid
        extent folded into the kept axis before it (the other cells' ranks hold an empty block or
        index list there). Where that is no map (a padded or periodic axis in the fold, the cell
        held by several grid cells), a reshape to the new shape (a view where sections reshape
        alone, else collective: a copy in row blocks). A 0-d result is refused (UnsupportedError)."""
        from . import _reshape
        shape = self.shape
        call, _ = self._agreed_call(lambda: (("squeeze", _reshape.squeezed_axes(axis, shape), "C", None), True))
        return _reshape.squeeze(self, call[1])

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> GlobalArray:
        """Collective: the cumulative sum along `axis` (None: of the flattened array, as NumPy's),
        NumPy's dtype (int8 and bool sum in the platform integer); never gathered (_scan: a local
        scan, then the ranks' totals shared in one collective). Floats: the first two blocks along
        the axis are NumPy's bit for bit, later ones within the bound docs/python.md states (float16:
        loose after a few hundred cells; scan in float32 there). out= is refused."""
        return self._cumulative("sum", axis, dtype, out)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: Any = None) -> GlobalArray:
        """Collective: the cumulative product along `axis` (as cumsum)."""
        return self._cumulative("prod", axis, dtype, out)

    def _cumulative(self, op: str, axis: Any, dtype: Any, out: Any) -> GlobalArray:
        from . import _scan
        if out is not None:
            raise TypeError("GlobalArray.cum%s(out=...): out= is not taken; assign the new array, or write into one "
                            "in place with a[...] = a.cum%s(...)" % (op, op))
        return _scan.cumulative(self, op, axis, dtype)

    # -- element-wise arithmetic ---------------------------------------------------------------

    def astype(self, dtype: Any) -> GlobalArray:
        """The array converted to `dtype`, same layout (local: no communication, except that a
        pending reduction is performed first, into even blocks, as every other read does)."""
        def check() -> np.dtype:
            wanted = np.dtype(dtype)
            dtype_to_c(wanted)
            return wanted

        wanted = self._checked(check, None)  # collective only where a pending reduction comes first
        return self.settled()._local_op(lambda v: v.astype(wanted))

    def copy(self) -> GlobalArray:
        """A new array of the same values, layout and ranks, sharing no memory with this one (local:
        no communication, except that a pending reduction is performed first, as astype does)."""
        return self.settled()._local_op(aligned_copy)

    def _local_op(self, fn: Callable[[Any], Any], pending: Optional[str] = None) -> GlobalArray:
        natives, sections = {}, {}
        for r in self._ctx.ranks:
            device = self._ctx.device(r)
            with _device_scope(device):
                out = _contiguous(fn(self.local_view(r)))
            natives[r] = out
            sections[r] = _wrap(self._ctx, self._layout, r, out, device)
        dtype = natives[self._ctx.ranks[0]].dtype
        return GlobalArray(self._ctx, self._layout, dtype, sections, natives, pending)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """np.sqrt(a), np.maximum(a, b), np.add(a, 1, out=a), np.add.reduce(a): computed section by
        section, never gathered (_ufunc: what is taken, what is refused and why)."""
        from ._ufunc import apply
        return apply(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """np.where, np.clip, np.allclose, np.linalg.norm, np.zeros_like, np.sum, ...: computed
        distributed; any other NumPy function gathers its GlobalArrays with a gdap.GatherWarning
        (_functions: which, how, and the explicit spelling)."""
        from ._functions import dispatch
        return dispatch(func, types, args, kwargs)

    def _binary(self, other: Any, ufunc: np.ufunc, reflected: bool = False) -> Any:
        """ufunc(self, other) (reflected: ufunc(other, self)) through __array_ufunc__'s path, or
        NotImplemented where `other` is neither a scalar nor a GlobalArray (a whole array: TypeError)."""
        if not (isinstance(other, GlobalArray) or _scalar(other)):
            _refuse_whole_operand(other)
            return NotImplemented
        from ._ufunc import call
        return call(ufunc, (other, self) if reflected else (self, other), {})

    def _unary(self, ufunc: np.ufunc) -> GlobalArray:
        from ._ufunc import call
        return call(ufunc, (self,), {})

    def _elementwise(self, fn: Callable[[int, Any], Any]) -> GlobalArray:
        """A new array of this layout whose rank r section is fn(r, owned) at the owned cells (owned:
        the index of rank r's owned cells in its section, ... where it has no padding) and zero in the
        padding, as a new array's (halo_exchange fills it): padding is not computed on, so that it
        raises no floating-point error nor turns into NaN or stale values."""
        natives, sections = {}, {}
        for r in self._ctx.ranks:
            device = self._ctx.device(r)
            owned = _owned_cells(self._layout, r)
            with _device_scope(device):
                computed = fn(r, owned)
                if owned is Ellipsis:
                    out = _contiguous(computed)
                else:
                    out = _zeros(device, self.local_view(r).shape, computed.dtype)
                    out[owned] = computed
            natives[r] = out
            sections[r] = _wrap(self._ctx, self._layout, r, out, device)
        return GlobalArray(self._ctx, self._layout, natives[self._ctx.ranks[0]].dtype, sections, natives)

    def _check_partner(self, other: GlobalArray, how: str) -> None:
        if other._ctx is not self._ctx:
            raise InvalidArgumentError("arrays on different controllers or communicators cannot be %s (%r, %r)"
                                       % (how, self._ctx, other._ctx))
        if other.shape != self.shape:
            raise InvalidArgumentError("shapes %s and %s differ" % (self.shape, other.shape))
        if not same_layout(self._layout, other._layout):
            raise InvalidArgumentError("the layouts differ: reshard one array to the other's layout first "
                                       "(b.reshard(a.layout))")

    def _check_writable(self, what: str) -> None:
        """Every held section writable (checked before any is written)."""
        for r in self._ctx.ranks:
            view = self.local_view(r)
            if isinstance(view, np.ndarray) and not view.flags.writeable:
                raise InvalidArgumentError("rank %d's section is read-only: %s cannot write it (a + b makes a new "
                                           "array)" % (r, what))

    # Operands: a scalar, a 0-d array or a GlobalArray of the same layout; a whole array (NumPy,
    # CuPy, a list) raises TypeError saying to distribute it into self.layout first. Each operator
    # is its NumPy ufunc on the sections (_ufunc): NumPy's dtype rules, owned cells only.
    def __add__(self, other: Any) -> Any:
        return self._binary(other, np.add)

    def __radd__(self, other: Any) -> Any:
        return self._binary(other, np.add, reflected=True)

    def __sub__(self, other: Any) -> Any:
        return self._binary(other, np.subtract)

    def __rsub__(self, other: Any) -> Any:
        return self._binary(other, np.subtract, reflected=True)

    def __mul__(self, other: Any) -> Any:
        return self._binary(other, np.multiply)

    def __rmul__(self, other: Any) -> Any:
        return self._binary(other, np.multiply, reflected=True)

    def __truediv__(self, other: Any) -> Any:
        return self._binary(other, np.true_divide)

    def __rtruediv__(self, other: Any) -> Any:
        return self._binary(other, np.true_divide, reflected=True)

    def __floordiv__(self, other: Any) -> Any:
        return self._binary(other, np.floor_divide)

    def __rfloordiv__(self, other: Any) -> Any:
        return self._binary(other, np.floor_divide, reflected=True)

    def __mod__(self, other: Any) -> Any:
        return self._binary(other, np.remainder)

    def __rmod__(self, other: Any) -> Any:
        return self._binary(other, np.remainder, reflected=True)

    def __pow__(self, other: Any) -> Any:
        return self._binary(other, np.power)

    def __rpow__(self, other: Any) -> Any:
        return self._binary(other, np.power, reflected=True)

    def __and__(self, other: Any) -> Any:
        return self._binary(other, np.bitwise_and)

    def __rand__(self, other: Any) -> Any:
        return self._binary(other, np.bitwise_and, reflected=True)

    def __or__(self, other: Any) -> Any:
        return self._binary(other, np.bitwise_or)

    def __ror__(self, other: Any) -> Any:
        return self._binary(other, np.bitwise_or, reflected=True)

    def __xor__(self, other: Any) -> Any:
        return self._binary(other, np.bitwise_xor)

    def __rxor__(self, other: Any) -> Any:
        return self._binary(other, np.bitwise_xor, reflected=True)

    def __divmod__(self, other: Any) -> Any:
        return self._binary(other, np.divmod)

    def __rdivmod__(self, other: Any) -> Any:
        return self._binary(other, np.divmod, reflected=True)

    def __neg__(self) -> GlobalArray:
        return self._unary(np.negative)

    def __pos__(self) -> GlobalArray:
        return self._unary(np.positive)

    def __abs__(self) -> GlobalArray:
        return self._unary(np.absolute)

    def __invert__(self) -> GlobalArray:
        return self._unary(np.invert)

    # In-place arithmetic writes this array's sections, as NumPy's does, so that every name bound to
    # the array sees it (without these, a += 1 rebound `a` to a new array and left the others stale).
    def __iadd__(self, other: Any) -> Any:
        return self._in_place(other, np.add)

    def __isub__(self, other: Any) -> Any:
        return self._in_place(other, np.subtract)

    def __imul__(self, other: Any) -> Any:
        return self._in_place(other, np.multiply)

    def __itruediv__(self, other: Any) -> Any:
        return self._in_place(other, np.true_divide)

    def __ifloordiv__(self, other: Any) -> Any:
        return self._in_place(other, np.floor_divide)

    def __imod__(self, other: Any) -> Any:
        return self._in_place(other, np.remainder)

    def __ipow__(self, other: Any) -> Any:
        return self._in_place(other, np.power)

    def __iand__(self, other: Any) -> Any:
        return self._in_place(other, np.bitwise_and)

    def __ior__(self, other: Any) -> Any:
        return self._in_place(other, np.bitwise_or)

    def __ixor__(self, other: Any) -> Any:
        return self._in_place(other, np.bitwise_xor)

    def _in_place(self, other: Any, ufunc: np.ufunc) -> Any:
        """ufunc(self, other, out=self) (NumPy's casting: int += float raises). Every result is
        computed, in a copy, before any section is written: sections that share memory (replicas
        over one buffer) or an operand that is this array are read unchanged. An array whose
        sections hold partial values (pending) is not written: Python then makes a new array."""
        if self._pending is not None:
            return NotImplemented
        if not (isinstance(other, GlobalArray) or _scalar(other)):
            _refuse_whole_operand(other)
            return NotImplemented
        from ._ufunc import call
        return call(ufunc, (self, other), {"out": (self,)})

    # Comparisons are element-wise, as NumPy's: a GlobalArray of bool in the same layout. Without
    # them Python compared identities, so a == b was False for equal arrays (a silent wrong answer).
    def __eq__(self, other: Any) -> Any:
        return self._compared(other, np.equal)

    def __ne__(self, other: Any) -> Any:
        return self._compared(other, np.not_equal)

    def _compared(self, other: Any, ufunc: np.ufunc) -> Any:
        """a == x, a != x: element-wise for a scalar or a GlobalArray; TypeError for anything else
        (None, a string, a list: NumPy would compare element-wise, Python's fallback compared
        identities and answered a silent False)."""
        out = self._binary(other, ufunc)
        if out is NotImplemented:
            raise TypeError("a GlobalArray compares element-wise with a scalar (a number, a NumPy scalar or 0-d "
                            "array) or a GlobalArray of the same layout, not %s" % type(other).__name__)
        return out

    def __lt__(self, other: Any) -> Any:
        return self._binary(other, np.less)

    def __le__(self, other: Any) -> Any:
        return self._binary(other, np.less_equal)

    def __gt__(self, other: Any) -> Any:
        return self._binary(other, np.greater)

    def __ge__(self, other: Any) -> Any:
        return self._binary(other, np.greater_equal)

    __hash__ = None  # type: ignore[assignment]  # mutable and compared element-wise, as a NumPy array

    def __bool__(self) -> bool:
        """NumPy's rule: the truth of the one element (collective in SPMD mode); ValueError for
        more or none (Python's default read len(a), so zeros((1,)) was True)."""
        if self.size != 1:
            raise ValueError("the truth value of a GlobalArray of %s is ambiguous: use a.get().any() or a.get().all()"
                             % ("%d elements" % self.size if self.size else "no elements"))
        return bool(self[(0,) * self.ndim])

    # -- matrix product ----------------------------------------------------------------------------

    def __matmul__(self, other: Any) -> Any:
        if not isinstance(other, GlobalArray):
            return NotImplemented
        return self.matmul(other)

    def matmul(self, other: GlobalArray, layout: Optional[GlobalMap] = None) -> GlobalArray:
        """Collective: self @ other through gdap's distributed GEMM (SUMMA), into `layout` (default:
        even blocks over a balanced 2-d grid). Both 2-d, float32 or float64, of one dtype."""
        if other._ctx is not self._ctx:
            raise InvalidArgumentError("arrays on different controllers or communicators cannot be multiplied")
        if self.ndim != 2 or other.ndim != 2:
            raise InvalidArgumentError("matmul takes 2-d arrays, not shapes %s and %s" % (self.shape, other.shape))
        if self.shape[1] != other.shape[0]:
            raise InvalidArgumentError("matmul: shapes %s and %s do not chain (%d != %d)"
                                       % (self.shape, other.shape, self.shape[1], other.shape[0]))
        if self._dtype != other._dtype or self._dtype not in (np.float32, np.float64):
            raise InvalidArgumentError("matmul takes float32 or float64 operands of one dtype, not %s and %s"
                                       % (self._dtype, other._dtype))
        a, b = _unit_strided(self.settled()), _unit_strided(other.settled())
        shape = (self.shape[0], other.shape[1])
        ctx = self._ctx
        if layout is not None:  # in SPMD mode a rank whose layout is wrong still tells the others
            _agreed(ctx, lambda r: _check_result_layout(layout, shape, ctx.nranks))
        layout = _block_layout(shape, ctx.nranks) if layout is None else layout
        out = GlobalArray._new_in(ctx, layout, self._dtype)
        plans = ctx.gemm_plans(a._layout, b._layout, layout, self._dtype)
        run_c(ctx, lambda r: (plans[r], a._sections[r], b._sections[r], out._sections[r]),
              lambda comm, plan, x, y, z: _c.gdap_gemm_execute(comm, plan, 1.0, x, y, 0.0, z))
        return out

    # -- halos ---------------------------------------------------------------------------------------

    def halo_exchange(self) -> GlobalArray:
        """Collective: fills every rank's communication padding (and, on periodic axes, the edge
        blocks' boundary padding) from the owners' cells, in place; returns self. Refused for an
        array with a pending reduction: its cells hold partial values, and settling it cannot be in
        place (settled() gives the values in even blocks; reshard them back into a padded layout)."""
        if self._pending is not None:
            raise InvalidArgumentError("halo_exchange: the sections hold partial values (pending %s), which would "
                                       "fill the padding; settle first: a.settled().reshard(a.layout)" % self._pending)
        ctx = self._ctx
        # A halo plan only this rank cannot build (its memory, GDAP_PLAN_MAX_RUNS): the others are told
        # in the exchange they make next, at once, not after their timeout.
        halos = _told_in(ctx, lambda: ctx.halos(self._layout, self._dtype),
                         lambda comm: _c.gdap_halo_exchange(comm._h(), None, None))
        run_c(ctx, lambda r: (halos[r], self._sections[r]), _c.gdap_halo_exchange, placeholders=(None,) * 2)
        return self

    # -- files ---------------------------------------------------------------------------------------

    def save_zarr(self, path: Any, codec: str = "zstd", level: int = 0, overwrite: bool = False) -> None:
        """Collective: writes the array to a Zarr v3 store at `path` (each rank its own chunks);
        `codec`, `level` and `overwrite` as gdap.save_zarr's. In SPMD mode a rank whose arguments
        are wrong still takes part, so that the others raise RemoteError naming it at once."""
        from ._zarr import release_save, zarr_options
        ctx = self._ctx
        # Settled first: a rank whose arguments are wrong releases its peers into gdap_zarr_save, so
        # every rank must be past settled()'s reduction by then.
        src = self.settled()
        options, name = _prepare(ctx, lambda r: (zarr_options(codec, level, overwrite), c_name(path, "path")),
                                 lambda ctx, r: release_save(ctx.comm(r)))[ctx.ranks[0]]
        run_c(ctx, lambda r: (src._layout, src._sections[r]),
              lambda comm, layout_h, section: _c.gdap_zarr_save(comm, layout_h, section, name, options))

    @classmethod
    def load_zarr(cls, path: Any, layout: Optional[GlobalMap] = None, *, devices: Devices = None, comm: Any = None,
                  device: Optional[DeviceSpec] = None, nranks: Optional[int] = None) -> GlobalArray:
        """Collective: the Zarr v3 array at `path` read into `layout` (default: even blocks over
        `nranks`, the communicator's size, or the number of devices). A single controller needs
        one of `layout`, `devices`, `nranks` (InvalidArgumentError otherwise: as distribute's
        layout, the argument says how many ranks; gdap does not guess 1)."""
        from ._zarr import release_load, zarr_shape

        if comm is None and layout is None and devices is None and nranks is None:
            raise InvalidArgumentError("load_zarr: give layout=, devices= or nranks= (how many ranks the array spans, "
                                       "as distribute's layout does), or comm= in SPMD mode")

        def target() -> GlobalArray:
            """The array the store is read into: `layout` (checked against the store's shape) or even blocks."""
            shape, dtype = zarr_shape(path)
            chosen = _block_layout(tuple(shape), _count_ranks(devices, comm, nranks)) if layout is None else layout
            return cls._made(_check_layout(chosen, shape), dtype, devices, _wrap_first(comm), device, zero=False)

        # A store this rank cannot read, a layout or device wrong on this rank: the others are told at once.
        out = told(None if comm is None else _gdap_comm(comm), target, release_load)
        ctx = out._ctx
        run_c(ctx, lambda r: (out._layout, out._sections[r]),
              lambda comm, layout_h, section: _c.gdap_zarr_load(comm, layout_h, section, str(path)))
        return out

    def save_dnpy(self, prefix: Any) -> None:
        """Collective: every rank writes its section to `<prefix>_<rank>.dnpy` (DistArray's format)."""
        src = self.settled()
        ctx = self._ctx
        run_c(ctx, lambda r: (src._sections[r],), lambda comm, section, name: _c.gdap_dnpy_save(comm, section, name),
              lambda r: (c_name(prefix, "prefix"),))

    @classmethod
    def load_dnpy(cls, prefix: Any, *, devices: Devices = None, comm: Any = None,
                  device: Optional[DeviceSpec] = None, nranks: Optional[int] = None) -> GlobalArray:
        """Collective: the array whose ranks wrote `<prefix>_<rank>.dnpy`, each rank reading its file
        (single controller: `devices` or `nranks` ranks; SPMD: this rank's file)."""
        if comm is not None:  # devices= or a device only this rank cannot use: the others are told at once
            ctx: Context = _spmd_told(comm, device, devices,
                                      lambda c: _c.gdap_dnpy_load(c._h(), None, device_to_c("cpu")))
        else:
            ctx = devices if isinstance(devices, Controller) else Controller.of(
                devices if devices is not None else 1 if nranks is None else integer(nranks, "nranks"))
        path = str(prefix)
        try:
            loaded = run_c(ctx, lambda r: (), lambda comm, name, device: LocalArray(_c.gdap_dnpy_load(comm, name, device)),
                           lambda r: (c_name(prefix, "prefix"), device_to_c(ctx.device(r))),
                           placeholders=(None, device_to_c("cpu")))
        except InvalidArgumentError as e:
            hint = None if ctx.spmd else _dnpy_count_hint(path, ctx.nranks)
            if hint is None:
                raise
            raise type(e)("%s; %s" % (e, hint)) from e
        if ctx.spmd:
            return cls._from_local_section(loaded[ctx.ranks[0]], None, ctx.comm(ctx.ranks[0]), None)
        assert isinstance(ctx, Controller)
        return cls.from_sections([loaded[r] for r in ctx.ranks], devices=ctx)

    # -- the Distributed Array Protocol ------------------------------------------------------------

    def __distarray__(self) -> dict:
        """This rank's distbuffer (SPMD mode, or a controller of one rank): what DistArray's
        LocalArray.from_distarray and any protocol consumer take, sharing the memory."""
        if len(self._sections) != 1:
            raise TypeError("__distarray__ is one rank's: this controller's array holds %d ranks; take rank r's "
                            "with a.section(r).__distarray__()" % len(self._sections))
        if self._pending is not None:
            raise InvalidArgumentError("the sections hold partial values (pending %s): call settled() first"
                                       % self._pending)
        return self._sections[self._ctx.ranks[0]].__distarray__()

    @classmethod
    def from_distarray(cls, obj: Any, comm: Any) -> GlobalArray:
        """Collective (SPMD): the array whose rank sections are every rank's `obj` (a
        __distarray__ producer such as DistArray's LocalArray, or a distbuffer dict), no copy."""
        return cls.from_sections(obj, comm=comm)

    # -- bridges -------------------------------------------------------------------------------------

    @classmethod
    def from_cupyx(cls, darray: Any) -> GlobalArray:
        """A cupyx.distributed.array DistributedArray's chunks as sections, no copy (see
        gdap.from_cupyx)."""
        from ._cupyx import from_cupyx
        return from_cupyx(darray)

    def to_cupyx(self) -> Any:
        """A cupyx DistributedArray whose chunks are views of the sections (see gdap.to_cupyx)."""
        from ._cupyx import to_cupyx
        return to_cupyx(self)

    @classmethod
    def from_jax(cls, array: Any) -> GlobalArray:
        """A jax.Array's addressable shards as sections, no copy (single controller)."""
        from ._jax import from_jax
        return from_jax(array)

    def to_jax(self) -> Any:
        """A jax.Array over the sections (jax.make_array_from_single_device_arrays), no copy."""
        from ._jax import to_jax
        return to_jax(self)

    @classmethod
    def from_dtensor(cls, dtensor: Any, comm: Any) -> GlobalArray:
        """Collective (SPMD): a PyTorch DTensor's local shard as this rank's section, no copy."""
        from ._dtensor import from_dtensor
        return from_dtensor(dtensor, comm)

    def to_dtensor(self, mesh: Any) -> Any:
        """This rank's section as a DTensor's local shard on `mesh`, no copy (SPMD)."""
        from ._dtensor import to_dtensor
        return to_dtensor(self, mesh)


# ---- helpers ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _result_dtype(op: str, dtype: np.dtype) -> np.dtype:
    """The dtype NumPy gives a reduction's result: sum and prod of bool and of integers narrower than
    the platform's (int8 ... int32, uint8 ... uint32) accumulate in int64 / uint64; the rest keep theirs."""
    if op in ("sum", "prod"):
        return np.dtype(getattr(np, op)(np.zeros(1, dtype)).dtype)
    return dtype


def _scalar(x: Any) -> bool:
    """Whether element-wise arithmetic takes `x` as one value for every element."""
    return isinstance(x, (numbers.Number, np.generic)) or (isinstance(x, np.ndarray) and x.ndim == 0)


def _dnpy_count_hint(prefix: str, nranks: int) -> Optional[str]:
    """When the files <prefix>_<rank>.dnpy are not one per rank of this controller: how to load them
    (the C message speaks of a communicator, which a single controller's caller never made)."""
    folder, stem = os.path.split(prefix)
    pattern = re.compile(re.escape(stem) + r"_[0-9]+\.dnpy")
    try:
        files = sum(1 for name in os.listdir(folder or ".") if pattern.fullmatch(name))
    except OSError:
        return None
    if files in (0, nranks):
        return None
    return ("%d files %s_<rank>.dnpy but this controller has %d ranks: give devices=%d (or nranks=%d) to load them"
            % (files, prefix, nranks, files, files))


def _warn_empty_mean(shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    """NumPy's RuntimeWarning where a mean averages no elements (its result there is NaN)."""
    if math.prod(shape[a] for a in axes) == 0:
        import warnings
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=3)


def _refuse_whole_operand(other: Any) -> None:
    """a + x and x + a with x a whole array (NumPy, CuPy, a list): TypeError saying how to combine
    them, rather than NumPy's or Python's generic refusal (gdap never gathers or scatters silently)."""
    if isinstance(other, (list, tuple)) or hasattr(other, "__array__") or hasattr(other, "__dlpack__"):
        shape = getattr(other, "shape", None)
        what = "%s of shape %s" % (type(other).__name__, tuple(shape)) if shape is not None else type(other).__name__
        raise TypeError("a GlobalArray combines element-wise with a scalar or a GlobalArray of the same layout, not "
                        "a whole %s (no silent scatter or gather, no broadcasting): distribute an array of a's shape "
                        "first, b = gdap.distribute(x, a.layout, devices=a.context) (SPMD: comm=..., x on the root), "
                        "then a + b; or a.get() + x for a NumPy result" % what)


def _refuse_numpy_keywords(op: str, out: Any, keepdims: bool, numpy_only: dict) -> None:
    """np.sum(a), np.max(a), ... pass NumPy's keywords to the method: those gdap cannot honour are
    refused by name rather than ignored (a result silently not written to `out` is a wrong answer)."""
    unsupported = sorted(numpy_only)
    if out is not None:
        unsupported.insert(0, "out")
    if keepdims:
        unsupported.append("keepdims=True")
    if unsupported:
        raise UnsupportedError("GlobalArray.%s (np.%s on a GlobalArray) does not support %s: it returns a new NumPy "
                               "scalar (every axis) or GlobalArray (some axes); assign or reshape that instead"
                               % (op, op, ", ".join(unsupported)))


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    out = []
    for a in axis_items(axis):
        a = integer(a, "axis")
        if not -ndim <= a < ndim:
            raise InvalidArgumentError("axis %d is out of range for %d dimensions" % (a, ndim))
        a %= ndim
        if a in out:
            raise InvalidArgumentError("axis %d is given twice" % a)
        out.append(a)
    return tuple(sorted(out))


def _as_section(x: Any, layout: Optional[GlobalMap], rank: int) -> LocalArray:
    """A LocalArray over rank `rank`'s section `x` without a copy."""
    if isinstance(x, LocalArray):
        return x
    if hasattr(x, "__distarray__") or isinstance(x, Mapping):
        return from_distarray(x)
    if layout is None:
        raise InvalidArgumentError("rank %d's section (%s) has no dim_data: give the layout" % (rank, type(x).__name__))
    shape = getattr(x, "shape", None)
    if shape is not None and tuple(shape) != tuple(layout.local_shape(rank)):
        raise InvalidArgumentError(_block_mismatch(tuple(shape), layout, rank))
    return from_dlpack(x, layout.dim_data(rank))


def _block_mismatch(shape: tuple[int, ...], layout: GlobalMap, rank: int) -> str:
    """Why rank `rank`'s section of this shape is not the layout's: per differing dimension, the
    layout's range and the section's extent, and the usual cause (two block rules)."""
    want = tuple(layout.local_shape(rank))
    if len(want) != len(shape):
        return "rank %d's section has shape %s but the layout gives rank %d the shape %s" % (rank, shape, rank, want)
    dims = layout.dim_data(rank)
    differ = []
    for i, (d, w, h) in enumerate(zip(dims, want, shape)):
        if w != h:
            where = " [%d, %d)" % (d["start"], d["stop"]) if "start" in d else ""
            differ.append("dimension %d ('%s'): the layout gives rank %d %d elements%s of %d, its section has %d"
                          % (i, d.get("dist_type", ""), rank, w, where, d.get("size", w), h))
    return ("%s. The layout's block for rank %d differs from the section: check that both sides use the same block "
            "rule (gdap.layout.block, like gdap_map_create_grid, gives each rank ceil(n / p) elements and the last "
            "rank the rest; size * r / p .. size * (r + 1) / p is another rule), or give from_sections no layout to "
            "take each section's own dim_data (LocalArray, distbuffer)" % ("; ".join(differ), rank))


def _check_sections(sections: dict[int, LocalArray], layout: GlobalMap) -> None:
    """Every section has the layout's dictionaries, one dtype, and one kind of memory."""
    first = sections[min(sections)]
    for r, s in sections.items():
        if s.dtype != first.dtype:
            raise InvalidArgumentError("rank %d's section has dtype %s but rank %d's has %s"
                                       % (r, s.dtype, min(sections), first.dtype))
        if s.device.startswith("cuda:") != first.device.startswith("cuda:"):  # device vs host-accessible
            raise InvalidArgumentError("mixed devices: rank %d's section is on %s but rank %d's on %s; gdap moves "
                                       "one kind of memory at a time" % (r, s.device, min(sections), first.device))
        if not _same_dims(s.dim_data, layout.dim_data(r)):
            raise InvalidArgumentError("rank %d's section is described by %s, which is not the layout's %s"
                                       % (r, s.dim_data, layout.dim_data(r)))


def _same_dims(a: Sequence[dict], b: Sequence[dict]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.keys() != y.keys():
            return False
        for k in x:
            if isinstance(x[k], np.ndarray) or isinstance(y[k], np.ndarray):
                if not np.array_equal(x[k], y[k]):
                    return False
            elif x[k] != y[k]:
                return False
    return True


_SAME: dict = {}


def same_layout(a: GlobalMap, b: GlobalMap) -> bool:
    """Whether two maps describe one distribution (every rank's dim_data equal); cached per pair."""
    if a is b:
        return True
    key = (id(a), id(b))
    hit = _SAME.get(key)
    if hit is not None and hit[0] is a and hit[1] is b:
        return hit[2]
    same = (a.nranks == b.nranks and tuple(a.shape) == tuple(b.shape)
            and all(_same_dims(a.dim_data(r), b.dim_data(r)) for r in range(a.nranks)))
    if len(_SAME) > 256:
        _SAME.clear()
    _SAME[key] = (a, b, same)
    return same


def _host_section(ctx: Context, layout: GlobalMap, rank: int, view: Any, dtype: Any = None) -> LocalArray:
    """A host LocalArray of rank `rank`'s section of `layout`: a copy of `view`, or new zeros."""
    native = _to_host(view).copy() if view is not None else np.zeros(layout.local_shape(rank), dtype)
    native = np.ascontiguousarray(native)
    return _wrap(ctx, layout, rank, native, "cpu")


def _copy_between_devices(view: Any, device: str) -> Any:
    cupy = _cupy()
    with cupy.cuda.Device(cuda_ordinal(device)):
        return cupy.array(view, copy=True)


def _prepare(ctx: Context, prepare: Callable[[int], Any], release: Callable[[Context, int], None]) -> dict:
    """Every held rank's prepared arguments; in SPMD mode a rank that cannot prepare still makes the
    collective call (release) so that the other ranks fail at once, naming it, then raises."""
    if not ctx.spmd:
        return {r: prepare(r) for r in ctx.ranks}
    return _spmd_prepare(ctx, prepare, release)


def _spmd_prepare(ctx: Context, prepare: Callable[[int], Any], release: Callable[[Context, int], None]) -> dict:
    rank = ctx.ranks[0]
    return told(ctx.comm(rank), lambda: {rank: prepare(rank)}, lambda comm: release(ctx, rank))


def _agreed(ctx: Context, check: Callable[[int], None]) -> None:
    """check(r) on every held rank; in SPMD mode every rank then meets the others in one
    gdap_comm_barrier, a rank whose check raised after Comm.fail_next with its error (_prepare): each
    rank learns of a refusal there, whatever collective call it would make next (a plan cached on
    some ranks only: gdap_gemm_execute on those, gdap_gemm_create on the rank that refused)."""
    _prepare(ctx, check, _release_barrier)
    if ctx.spmd:
        _release_barrier(ctx, ctx.ranks[0])


def _agreed_step(ctx: Context, step: Callable[[], T]) -> T:
    """step()'s result: what every held rank computes before anything it writes becomes visible
    (results into temporaries, new sections). In SPMD mode every rank then meets the others in one
    gdap_comm_barrier, which a rank whose step raised makes after Comm.fail_next: every rank raises
    (that one its error, the others RemoteError naming it) and none writes or returns a new array.
    Controller mode: every rank's step runs in this process before any write, nothing to agree."""
    if not ctx.spmd:
        return step()
    comm = ctx.comm(ctx.ranks[0])
    out = told(comm, step, _barrier)
    _barrier(comm)
    return out


def _parts(a: GlobalArray) -> Parts:
    """What the SPMD ranks' parts of `a` must agree on (agreed_array), and where this rank's lives."""
    return a._layout, a._dtype, a._pending, a._ctx.device(a._ctx.ranks[0])


def _told_in(ctx: Context, step: Callable[[], T], release: Callable[[Comm], object]) -> T:
    """step()'s result; in SPMD mode a failure is told to the peers through release, the collective
    call they make next (telling_peers). Controller mode: nothing to tell, every rank's step runs here."""
    return told(ctx.comm(ctx.ranks[0]) if ctx.spmd else None, step, release)


def _agreed_plans(ctx: Context, src: GlobalMap, dst: GlobalMap, dtype: Any) -> dict[int, Any]:
    """ctx.plans(src, dst, dtype) for the redistribution that follows: a plan only this rank cannot
    build (GDAP_PLAN_MAX_RUNS, its memory) is told to the peers in that redistribution, so that every
    rank fails at once, the others with RemoteError naming this one, instead of waiting out the timeout."""
    return _told_in(ctx, lambda: ctx.plans(src, dst, dtype), release_redistribute)


def _plans_and_sections(ctx: Context, src: GlobalMap, dst: GlobalMap, dtype: Any) -> tuple[dict[int, Any], dict]:
    """_agreed_plans and a new section of `dst` (new_section) on every held rank, in one told step."""
    return _told_in(ctx, lambda: (ctx.plans(src, dst, dtype), {r: new_section(ctx, dst, r, dtype) for r in ctx.ranks}),
                    release_redistribute)


def _unit_strided(x: GlobalArray) -> GlobalArray:
    """x, or a C-contiguous copy of it where a device section is strided (a transpose's view or
    copy): cuBLAS's GEMM takes device sections with unit stride along their last axis only (the host
    GEMM takes any strides). Local: each rank copies its own section, no communication."""
    ctx = x._ctx
    if all(ctx.device(r) == "cpu" or x.local_view(r).flags.c_contiguous for r in ctx.ranks):
        return x
    return x.copy()


def _owned_cells(layout: GlobalMap, rank: int) -> Any:
    """The index of rank `rank`'s owned cells in its section: ... where it has no padding, else a
    slice per axis (owned_span). The owned cells come from the layout's runs, not from the padding
    numbers: on a periodic axis the edge ranks own their boundary padding (DAP 0.10)."""
    if layout is None:  # a full reduction's 0-d sections
        return Ellipsis
    dims = layout.dim_data(rank)
    if not any(any(d.get("padding", ())) for d in dims):
        return Ellipsis
    return tuple(slice(*owned_span(layout, rank, i)) if any(d.get("padding", ())) else slice(None)
                 for i, d in enumerate(dims))


def owned_span(layout: GlobalMap, rank: int, dim: int) -> tuple[int, int]:
    """(first, past last) local index of rank `rank`'s owned cells along `dim` (a padded axis is
    'b': one run, contiguous); (0, 0) where it owns none."""
    runs = layout.runs(rank, dim)
    if not runs:
        return 0, 0
    return min(local for _, _, local in runs), max(local + length for _, length, local in runs)


def _zeros(device: str, shape: tuple[int, ...], dtype: Any) -> Any:
    """Zeros on `device` (NumPy on the host, CuPy on a CUDA device)."""
    if device == "cpu":
        return np.zeros(shape, dtype)
    cupy = _cupy()
    if cupy is None:
        raise UnsupportedError("element-wise arithmetic on padded %s sections from Python needs CuPy" % device)
    with cupy.cuda.Device(cuda_ordinal(device)):
        return cupy.zeros(shape, dtype)


def _check_pending(pending: Optional[str]) -> None:
    if pending is not None and pending not in PENDING_OPS:
        raise InvalidArgumentError("pending must be one of %s, not %r" % (", ".join(PENDING_OPS), pending))


def _wrap_first(comm: Any) -> Optional[Comm]:
    """`comm` as a gdap.Comm (None: none given), first thing in a constructor: wrapping an mpi4py
    communicator is collective (MPI_Comm_dup), so no argument check may raise before it on one rank
    only (the others would wait in MPI_Comm_dup for good, with no gdap timeout)."""
    return None if comm is None else _gdap_comm(comm)


def _release_reduce_axes(ctx: Context, rank: int) -> None:
    _c.gdap_reduce_axes(ctx.comm(rank)._h(), None, None, _c.GDAP_REDUCE_SUM, None)


def _release_barrier(ctx: Context, rank: int) -> None:
    _barrier(ctx.comm(rank))


def _barrier(comm: Comm) -> None:
    _c.gdap_comm_barrier(comm._h())


def _release_redistribute(ctx: Context, rank: int) -> None:
    release_redistribute(ctx.comm(rank))


def _release_reduce_scatter(ctx: Context, rank: int) -> None:
    _c.gdap_reduce_scatter(ctx.comm(rank)._h(), None, None, _c.GDAP_REDUCE_SUM)


def _check_result_layout(layout: Any, shape: tuple[int, ...], nranks: int) -> None:
    """A result layout of `shape` over the array's `nranks` ranks (a clear message where it spans fewer)."""
    _check_layout(layout, shape)
    if layout.nranks != nranks:
        raise InvalidArgumentError("the result layout spans %d ranks but the array has %d: give a layout over all %d"
                                   % (layout.nranks, nranks, nranks))


def _count_ranks(devices: Devices, comm: Any, nranks: Optional[int]) -> int:
    """How many ranks an array made from these arguments has."""
    if nranks is not None:
        return integer(nranks, "nranks")
    if comm is not None:
        return _spmd(comm, None).nranks
    if isinstance(devices, Controller):
        return devices.nranks
    check_devices_argument(devices)
    if isinstance(devices, (int, np.integer, np.bool_)):
        return integer(devices, "devices (a number of ranks)")
    return 1 if devices is None else len(devices)


def _dtype_given(dtype: Any, whole: Any) -> np.dtype:
    if dtype is not None:
        return np.dtype(dtype)
    if whole is not None:  # a NumPy array (big-endian read as native) or a DLPack producer; a list or a number as NumPy reads it
        return np.dtype(whole.dtype).newbyteorder("=") if hasattr(whole, "dtype") else np.asarray(whole).dtype
    raise TypeError("scatter: give dtype on the ranks that pass no array")


def _contiguous(x: Any) -> Any:
    """A C-contiguous array of x's values (x itself when it is one). NumPy gives a scalar for an
    operation on 0-d arrays: that is made a 0-d array again (np.ascontiguousarray would add an axis)."""
    if isinstance(x, (np.ndarray, np.generic)):
        x = np.asarray(x)
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)
    if not x.flags.c_contiguous:
        with x.device:  # CuPy copies onto the current device: the copy stays on x's
            return x.copy(order="C")
    return x


def _on_gpu_without_nccl(a: GlobalArray) -> bool:
    """Whether a gdap reduction must go through host copies: device sections on an in-process
    group or MPI (gdap reduces device memory over NCCL only)."""
    on_device = any(d.startswith("cuda:") for d in a.devices.values())
    return on_device and not (a.context.spmd and a.context.comm(a.context.ranks[0]).kind == "nccl")


def _reduction_sections(src: GlobalArray, out: GlobalArray) -> tuple[dict, dict, Callable[[], None]]:
    """The source and result sections a gdap reduction of `src` into `out` takes, and what copies
    the results back: the sections themselves, or host copies where _on_gpu_without_nccl."""
    if not _on_gpu_without_nccl(src):
        return src._sections, out._sections, lambda: None
    ctx = src.context
    sources = {r: _host_section(ctx, src.layout, r, src.local_view(r)) for r in ctx.ranks}
    results = {r: _host_section(ctx, out.layout, r, None, out.dtype) if out.layout is not None else
               _scalar_section(np.zeros((), out.dtype), "cpu") for r in ctx.ranks}

    def back() -> None:
        for r in ctx.ranks:
            device = out.devices[r]
            with _device_scope(device):
                out.local_view(r)[...] = _to_device(np.asarray(results[r]), device)

    return sources, results, back


def _scalar_section(native: Any, device: str) -> LocalArray:
    """A 0-d LocalArray over a 0-d array (no layout: a full reduction's result)."""
    return LocalArray(_c.gdap_array_wrap(_address(native), dtype_to_c(np.dtype(native.dtype)), device_to_c(device),
                                         None, []), owner=native)


def _scalar_results(src: GlobalArray) -> GlobalArray:
    """A 0-d section per rank for a full reduction (layout None), on the ranks' devices."""
    ctx = src.context
    natives = {r: _allocate(ctx.device(r), (), src.dtype, zero=True)[0] for r in ctx.ranks}
    if any(n is None for n in natives.values()):
        raise UnsupportedError("a full reduction of device sections needs CuPy to hold its result")
    sections = {r: _scalar_section(natives[r], ctx.device(r)) for r in ctx.ranks}
    return GlobalArray(ctx, None, src.dtype, sections, natives)  # type: ignore[arg-type]


def distribute(x: Any, layout: GlobalMap, *, devices: Devices = None, comm: Any = None,
               device: Optional[DeviceSpec] = None, root: int = 0, dtype: Any = None) -> GlobalArray:
    """Collective: the whole array `x` dealt out into `layout` (GlobalArray.scatter). Single
    controller by default (devices: one per rank; default GPUs 0.. for a CUDA array, host memory
    otherwise); SPMD with `comm` (x given on rank `root`). `x` may be an array-like (a list of
    lists: np.asarray reads it); `dtype` converts it as np.asarray(x, dtype) does."""
    return GlobalArray.scatter(x, layout, devices=devices, comm=comm, device=device, root=root, dtype=dtype)


__all__ = ["GlobalArray", "distribute", "same_layout"]

"""Plan and redistribute: moving an array from one distribution to another (gdap_plan_*,
gdap_redistribute). The planning and the moving are the C library's; this module wraps the
sections a rank passes (NumPy arrays, DLPack producers, distbuffers) as LocalArrays described
by the plan's maps, so a caller need not build the dim_data itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np

from . import _gdap_c as _c
from ._args import axis_items, integer
from ._comm import rank_arg, telling_peers, told
from ._context import handle
from ._handle import Handle
from ._dims import Dims, dims_from_dim_data
from ._errors import InvalidArgumentError
from ._local import LocalArray, dtype_to_c, empty, from_distarray, from_dlpack, from_dlpack_with_dims
from ._map import GlobalMap
from ._types import DeviceLike, DTypeLike, SectionLike, Shape

if TYPE_CHECKING:
    from ._comm import Comm

# What makes one argument of a collective call: (the LocalArray, or None; whether it was made here).
Maker = Callable[[], "tuple[Optional[LocalArray], bool]"]


class Plan(Handle):
    """One rank's part of moving an array of `dtype` from distribution `src` to distribution
    `dst` (GlobalMaps of the same global shape, on grids of any shapes and rank counts: the
    group is the larger count). `rank` is an int or an object with an integer `rank` (this
    rank's Comm, an mpi4py communicator).

    `roles` (optional): rank r holds destination rank roles[r]'s section instead of its own (a
    permutation of range(nranks), the same on every rank; keeping_roles(src, dst) gives the one
    that moves least). A caller adopts it by renumbering its ranks afterwards, so that `dst`
    describes the renumbered ranks; `role` is this rank's.

    Read-only and reusable. InvalidArgumentError when the global shapes differ or the roles are
    no permutation, ProtocolError when the source lacks an index the destination owns,
    OutOfRangeError for a rank outside the group. `stats` says what the rank sends, receives and
    copies within itself.
    """

    def __init__(self, src: GlobalMap, dst: GlobalMap, dtype: DTypeLike, rank: Union[int, Comm],
                 roles: Optional[Sequence[int]] = None) -> None:
        _require_maps(src, dst)
        rank = rank_arg(rank)
        if roles is None:
            self._adopt(_c.gdap_plan_create(src._h(), dst._h(), dtype_to_c(dtype), rank), _c.gdap_plan_destroy)
        else:
            roles = tuple(integer(x, "roles[%d]" % i, InvalidArgumentError) for i, x in enumerate(roles))
            self._adopt(_c.gdap_plan_create_with_roles(src._h(), dst._h(), dtype_to_c(dtype), rank, roles),
                        _c.gdap_plan_destroy)
        # The C plan keeps what it needs; the maps are kept to describe the sections redistribute wraps.
        self._src, self._dst = src, dst
        self._roles: Optional[tuple[int, ...]] = roles
        self._dtype = np.dtype(dtype)
        self._rank = rank
        # This rank's sections as gdap_dim structs, made on first use (the plan and its maps never
        # change): gdap.redistribute wraps a caller's arrays with them on every call.
        self._dims: dict[str, Optional[Dims]] = {}

    @property
    def stats(self) -> dict[str, int]:
        """{'rank', 'nranks', 'send_messages', 'recv_messages', 'send_bytes', 'recv_bytes',
        'local_bytes', 'send_runs', 'recv_runs', 'local_runs'}: messages and sent bytes leave out
        the rank's copy within itself (local_*)."""
        return _c.gdap_plan_stats_get(self._h())

    @property
    def src(self) -> GlobalMap:
        """The source distribution (read-only, as the plan is)."""
        return self._src

    @property
    def dst(self) -> GlobalMap:
        """The destination distribution (read-only)."""
        return self._dst

    @property
    def roles(self) -> Optional[tuple[int, ...]]:
        """The destination roles the plan was made with (None: every rank its own)."""
        return self._roles

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def nranks(self) -> int:
        return self.stats["nranks"]

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def src_shape(self) -> Optional[Shape]:
        """This rank's local shape in the source distribution; None if it holds nothing there."""
        return _local_shape(self.src, self.rank)

    @property
    def role(self) -> int:
        """The destination rank whose section this rank holds (its own rank without roles)."""
        return self.rank if self.roles is None else self.roles[self.rank]

    @property
    def dst_shape(self) -> Optional[Shape]:
        """This rank's local shape in the destination distribution (its role's); None if it holds
        nothing there."""
        return _local_shape(self.dst, self.role)

    def _section_dims(self, side: str) -> Optional[Dims]:
        """This rank's section of `side` ("src", or "dst": its role's) as gdap_dim structs, made
        once; None where the rank holds nothing there."""
        if side not in self._dims:
            gmap, rank = (self.src, self.rank) if side == "src" else (self.dst, self.role)
            self._dims[side] = dims_from_dim_data(gmap.dim_data(rank)) if rank < gmap.nranks else None
        return self._dims[side]

    def __repr__(self) -> str:
        if self._handle is None:
            return "<gdap.Plan (closed)>"
        return "<gdap.Plan rank %d of %d dtype=%s %s -> %s>" % (self.rank, self.nranks, self._dtype,
                                                                self.src.grid_shape, self.dst.grid_shape)


def _local_shape(gmap: GlobalMap, rank: int) -> Optional[Shape]:
    return gmap.local_shape(rank) if rank < gmap.nranks else None


def _section(x: SectionLike, gmap: GlobalMap, rank: int, dtype: Optional[DTypeLike],
             dims: Optional[Dims] = None, what: str = "section") -> tuple[Optional[LocalArray], bool]:
    """A LocalArray for x as this rank's section of `gmap` (None where the rank is outside the
    map, which gdap ignores; an empty section made here for None where the rank's section is
    empty); the bool says whether it was made here (and is to be closed here). `dims`: the rank's
    dim_data already converted (Plan._section_dims), else converted here. `what` names x in the
    error when its shape is not the rank's local shape ("dst")."""
    if x is None and rank < gmap.nranks and 0 in gmap.local_shape(rank):
        return empty(gmap.dim_data(rank), np.dtype(dtype)), True
    if x is None or rank >= gmap.nranks or isinstance(x, LocalArray):
        return x, False
    if hasattr(x, "__distarray__") or isinstance(x, Mapping):
        return from_distarray(x), True
    shape = getattr(x, "shape", None)
    if shape is not None and tuple(shape) != tuple(gmap.local_shape(rank)):
        raise InvalidArgumentError("%s has local shape %s but the %s map gives rank %d %s"
                                   % (what, tuple(shape), what, rank, tuple(gmap.local_shape(rank))))
    if dims is None:
        dims = dims_from_dim_data(gmap.dim_data(rank))
    return from_dlpack_with_dims(x, dims), True


def redistribute(comm: Comm, plan: Plan, src: SectionLike, dst: SectionLike) -> SectionLike:
    """Collective: moves every owned element of `src` (this rank's section of plan.src) into
    `dst` (its section of plan.dst), out of place; returns `dst`. Only dst's owned elements are
    written. Each may be a LocalArray, a distbuffer / __distarray__ producer, or an array (NumPy,
    CuPy, PyTorch, any DLPack producer) of the rank's local shape, described by the plan's map;
    None where the rank holds nothing on that side (an empty section is made for it).

    If any rank's arguments are wrong, no rank moves anything: that rank raises its own error
    and the others RemoteError naming it.
    """
    # A plan only this rank cannot use (closed, no Plan): the others are told at once.
    plan_h, rank, role = told(comm, lambda: (plan._h(), plan.rank, plan.role), release_redistribute)
    together(comm, lambda s, d: _c.gdap_redistribute(comm._h(), plan_h, s, d),
             [lambda: _section(src, plan.src, rank, plan.dtype, plan._section_dims("src"), "src"),
              lambda: _section(dst, plan.dst, role, plan.dtype, plan._section_dims("dst"), "dst")])
    return dst


def _require_maps(src: object, dst: object) -> None:
    """TypeError naming the argument when src or dst is not a GlobalMap."""
    for name, m in (("src", src), ("dst", dst)):
        if not isinstance(m, GlobalMap):
            raise TypeError("%s must be a GlobalMap, not %s" % (name, type(m).__name__))


def keeping_roles(src: GlobalMap, dst: GlobalMap) -> tuple[int, ...]:
    """The destination roles that keep the most elements on their rank (COSTA's relabeling; see
    Plan): roles[r] is the destination rank whose section rank r should hold. Every rank computes
    the same; nothing is communicated. An identity or rank-permuted redistribution then moves
    nothing between ranks."""
    _require_maps(src, dst)
    return tuple(_c.gdap_plan_roles_keeping(max(src.nranks, dst.nranks), src._h(), dst._h()))


def together(comm: Comm, call: Callable[..., object], makers: Sequence[Maker]) -> None:
    """Runs call(*handles) on this rank of `comm` with the handle of each argument, made by its
    maker (a function returning (LocalArray or None, made here)). An argument that cannot be made
    is told to the peers (telling_peers: call with NULLs after Comm.fail_next), so every other rank
    fails at once with RemoteError quoting this rank's own error; then this rank raises that error.
    Closes what it made."""
    sections: list[tuple[Optional[LocalArray], bool]] = []
    try:
        with telling_peers(comm, lambda c: call(*[None] * len(makers))):
            for make in makers:
                sections.append(make())
            handles = [handle(s) for s, _ in sections]
        call(*handles)
    finally:
        for section, made_here in sections:
            if made_here and section is not None:
                section.close()



# ---- collectives: redistributions to and from the root and replicated layouts

def _move_to(comm: Comm, arguments: Callable[[], tuple[GlobalMap, SectionLike, GlobalMap, Optional[DTypeLike], DeviceLike]]
             ) -> Optional[LocalArray]:
    """Plans src_map -> dst_map for this rank, allocates its destination section (gdap.empty on
    `device`; None where it holds nothing) and runs the move; arguments() gives (src_map, section,
    dst_map, dtype, device), checked, like the rest, before the collective call: a failure on this
    rank only is told to the peers. Returns the destination."""
    with telling_peers(comm, release_redistribute):
        src_map, section, dst_map, dtype, device = arguments()
        dtype = np.dtype(dtype)
        plan = Plan(src_map, dst_map, dtype, comm)
        if section is None and plan.rank < src_map.nranks:
            # An empty part, in the same kind of memory as the others' (engines take one kind).
            section = empty(src_map.dim_data(plan.rank), dtype, device)
        inside = plan.rank < dst_map.nranks
        out = empty(dst_map.dim_data(plan.rank), dtype, device) if inside else None
    redistribute(comm, plan, section, out)
    return out if inside and 0 not in dst_map.local_shape(plan.rank) else None


def release_redistribute(comm: Comm) -> None:
    """This rank's part of a gdap_redistribute it cannot make (telling_peers)."""
    _c.gdap_redistribute(comm._h(), None, None, None)


def _dtype_device(section: SectionLike, dtype: Optional[DTypeLike],
                  device: Optional[DeviceLike]) -> tuple[Optional[DTypeLike], DeviceLike]:
    if isinstance(section, LocalArray):
        return dtype or section.dtype, device or section.device
    if hasattr(section, "dtype") and dtype is None:
        dtype = section.dtype
    return dtype, device or "cpu"


def _from_root(what: str, comm: Comm, whole: SectionLike, root: int, dtype: Optional[DTypeLike],
               device: Optional[DeviceLike]) -> tuple[SectionLike, Optional[DTypeLike], DeviceLike]:
    """(the root's array or None, dtype, device) of a scatter or broadcast: dtype given on the
    ranks that pass no array."""
    dtype, device = _dtype_device(whole, dtype, device)
    if dtype is None:
        raise TypeError("%s: give dtype on the ranks that pass no array" % what)
    return (whole if comm.rank == root else None), dtype, device


def gather(comm: Comm, src_map: GlobalMap, section: SectionLike, root: int = 0, dtype: Optional[DTypeLike] = None,
           device: Optional[DeviceLike] = None) -> Optional[LocalArray]:
    """Collective: the whole array on rank `root` (a LocalArray of the global shape), None on the
    others. `section` is this rank's part of `src_map` (as for redistribute); the result is on
    `device` (default: the section's) with `dtype` (default: the section's)."""
    return _move_to(comm, lambda: (src_map, section, GlobalMap.root(comm.size, src_map.shape, root),
                                   *_dtype_device(section, dtype, device)))


def scatter(comm: Comm, dst_map: GlobalMap, whole: SectionLike, root: int = 0, dtype: Optional[DTypeLike] = None,
            device: Optional[DeviceLike] = None) -> Optional[LocalArray]:
    """Collective: rank `root`'s whole array `whole` (ignored elsewhere; None is fine) dealt out
    to every rank's section of `dst_map`, returned as a LocalArray (None where a rank holds
    nothing). dtype and device default to `whole`'s on the root; give them on the other ranks."""
    def arguments() -> tuple[GlobalMap, SectionLike, GlobalMap, Optional[DTypeLike], DeviceLike]:
        src, kind, where = _from_root("scatter", comm, whole, root, dtype, device)
        return GlobalMap.root(comm.size, dst_map.shape, root), src, dst_map, kind, where

    return _move_to(comm, arguments)


def allgather(comm: Comm, src_map: GlobalMap, section: SectionLike, dtype: Optional[DTypeLike] = None,
              device: Optional[DeviceLike] = None) -> Optional[LocalArray]:
    """Collective: the whole array on every rank (a LocalArray of the global shape)."""
    return _move_to(comm, lambda: (src_map, section, GlobalMap.replicated(comm.size, src_map.shape),
                                   *_dtype_device(section, dtype, device)))


def broadcast(comm: Comm, whole: SectionLike, shape: Sequence[int], root: int = 0, dtype: Optional[DTypeLike] = None,
              device: Optional[DeviceLike] = None) -> Optional[LocalArray]:
    """Collective: rank `root`'s array `whole` of `shape` on every rank (a LocalArray); other
    ranks pass None and give dtype."""
    def arguments() -> tuple[GlobalMap, SectionLike, GlobalMap, Optional[DTypeLike], DeviceLike]:
        src, kind, where = _from_root("broadcast", comm, whole, root, dtype, device)
        return GlobalMap.root(comm.size, shape, root), src, GlobalMap.replicated(comm.size, shape), kind, where

    return _move_to(comm, arguments)


_OPS = {"sum": _c.GDAP_REDUCE_SUM, "prod": _c.GDAP_REDUCE_PROD, "min": _c.GDAP_REDUCE_MIN, "max": _c.GDAP_REDUCE_MAX}


def allreduce(comm: Comm, section: SectionLike, op: str = "sum") -> SectionLike:
    """Collective, in place: every rank's `section` becomes the element-wise `op` ('sum', 'prod',
    'min', 'max') of all ranks' sections, which must share shape, dtype and kind of memory.
    `section` is a LocalArray or any array gdap can take without a copy (NumPy, CuPy, PyTorch...);
    it is returned. Host sections over a group or MPI, device sections over NCCL."""
    local: Optional[LocalArray] = None
    try:
        with telling_peers(comm, lambda c: _c.gdap_allreduce(c._h(), None, _c.GDAP_REDUCE_SUM)):
            code = _op_code(op, _OPS)
            local = section if isinstance(section, LocalArray) else from_dlpack(section)
            held = local._h()
        _c.gdap_allreduce(comm._h(), held, code)
    finally:
        if local is not None and local is not section:
            local.close()
    return section


_AXES_OPS = dict(_OPS, mean=_c.GDAP_REDUCE_MEAN)


def _op_code(op: str, ops: dict[str, int]) -> int:
    try:
        return ops[op]
    except (KeyError, TypeError):
        raise ValueError("op must be one of %s, not %r" % (", ".join(sorted(ops)), op)) from None


def _distributed(x: SectionLike) -> tuple[LocalArray, bool]:
    """(LocalArray, made here) for a LocalArray or a distbuffer / __distarray__ producer."""
    if isinstance(x, LocalArray):
        return x, False
    if hasattr(x, "__distarray__") or isinstance(x, Mapping):
        return from_distarray(x), True
    raise TypeError("a reduction needs a distributed section: a gdap.LocalArray or a distbuffer "
                    "(__distarray__), not %s" % type(x).__name__)


def _reduce(comm: Comm, call: Callable[..., object], source: SectionLike, result: SectionLike) -> SectionLike:
    makers: list[Maker] = [lambda: _distributed(source), lambda: _distributed(result)]
    together(comm, call, makers)
    return result


def reduce_scatter(comm: Comm, section: SectionLike, result: SectionLike, op: str = "sum") -> SectionLike:
    """Collective: each element of `result` this rank owns becomes the `op` ('sum', 'prod',
    'min', 'max') of that element over every rank whose `section` holds it (replicated or
    overlapping sections; padding never counts). Both are LocalArrays or distbuffers of one
    global shape and dtype, in any distributions; returns `result`. Host memory, group or MPI."""
    code = told(comm, lambda: _op_code(op, _OPS), lambda c: _c.gdap_reduce_scatter(c._h(), None, None, _c.GDAP_REDUCE_SUM))
    return _reduce(comm, lambda s, r: _c.gdap_reduce_scatter(comm._h(), s, r, code), section, result)


def reduce_axes(comm: Comm, section: SectionLike, result: SectionLike, op: str = "sum",
                axis: Union[None, int, Sequence[int]] = None) -> SectionLike:
    """Collective: the global reduction ('sum', 'prod', 'min', 'max', 'mean') of the distributed
    array whose section this rank holds over `axis` (None: every axis; an int or a sequence of
    ints, negative from the end), each global element counted once, written into the owned
    elements of `result`: a LocalArray or distbuffer of the kept shape (the reduced axes removed,
    as NumPy) in any distribution, 0-d for a full reduction. Returns `result`. Host memory, group
    or MPI."""
    code, axes = told(comm, lambda: (_op_code(op, _AXES_OPS),
                                     None if axis is None else [integer(a, "axis") for a in axis_items(axis)]),
                      lambda c: _c.gdap_reduce_axes(c._h(), None, None, _c.GDAP_REDUCE_SUM, None))
    return _reduce(comm, lambda s, r: _c.gdap_reduce_axes(comm._h(), s, r, code, axes), section, result)

"""Transposes and reshapes of a GlobalArray, never gathered.

Transposes (a.T, a.transpose(axes), np.transpose, a.swapaxes, np.moveaxis, ...) permute the global
shape and every rank's dimension dictionaries. A gdap map numbers its ranks in C order over the
process grid (proc_grid_rank is the rank's C-order coordinates), and a map cannot say otherwise: so
where the permutation keeps the order of the distributed axes (those whose grid extent is above 1),
each rank keeps its block and its section becomes a strided view of the same memory (a view, as
NumPy's: writes go through). Where it reorders them (a 2 x 2 grid transposed), the block of source
rank q belongs to another rank s in the permuted grid: one gdap redistribution with destination
roles moves each rank's section whole to that rank, and the result is a copy (new sections, their
padding zero, as after reshard).

Reshapes (a.reshape, np.reshape, ravel, flatten), C order: the shapes are split into the coarsest
groups of axes whose products agree. Where, on every rank, each group is either unchanged or holds
a flat run of the group's C-order elements (a block, no padding, not cyclic, of one axis, the axes
after it whole and those before it held one index at a time), and the run is a block of the new
group's rows (spread over its leading axes as the grid's cells are: _split_run), each rank reshapes its own section: a view where NumPy's reshape
of the whole array is one (every merged group of axes in C order in each section's memory), else a
copy on every rank (agreed in SPMD mode). Otherwise the array is redistributed: to its spread layout, flattened locally,
redistributed to flat blocks that end on rows of the new shape, and reshaped locally (a copy, in
the spread layout of the new shape: spread_rows). A replicated array, every rank
holding it whole, reshapes each rank's copy (a view, replicated); an array of no element too.
In SPMD mode the caller (GlobalArray._agreed_call) has agreed the call's arguments on every rank.

Squeeze and expand_dims drop or insert length-1 axes: a view with the axes' dimension dictionaries
dropped or inserted (a whole axis of length 1), the other axes' distribution kept. Where the grid
divides a dropped axis (only the ranks of its one grid cell hold elements), its grid extent is
folded into a kept axis, the ranks off that cell holding an empty block there (still a view); where
no map can say that (padding in the fold, the cell held by several grid cells), a reshape.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from . import _gdap_c as _c
from ._args import integer
from ._errors import AxisError, InvalidArgumentError, ProtocolError, UnsupportedError
from ._map import GlobalMap

if TYPE_CHECKING:
    from ._global import GlobalArray


# ---- transposes --------------------------------------------------------------------------------

def permutation(axes: Any, ndim: int) -> tuple[int, ...]:
    """`axes` (None: reversed) as a permutation of range(ndim), negative axes counted from the end;
    as NumPy's: TypeError for what is no sequence of integers, AxisError for an axis out of range,
    InvalidArgumentError (a ValueError) for the wrong count or a repeated axis."""
    if axes is None:
        return tuple(range(ndim))[::-1]
    if isinstance(axes, (int, np.integer)) and ndim == 1:
        axes = (axes,)
    if not np.iterable(axes):
        raise TypeError("axes must be None or a sequence of %d axes, not %r" % (ndim, axes))
    given = [integer(x, "axes[%d]" % i) for i, x in enumerate(axes)]  # TypeError for a float, as NumPy's
    if len(given) != ndim:
        raise InvalidArgumentError("axes %s do not match an array of %d dimensions" % (tuple(given), ndim))
    perm = tuple(_axis(x, ndim, "axes") for x in given)
    if len(set(perm)) != ndim:
        raise InvalidArgumentError("axes %s repeat an axis" % (tuple(given),))
    return perm


def _axis(x: Any, ndim: int, what: str) -> int:
    x = integer(x, what)
    if not -ndim <= x < ndim:
        raise AxisError("%s: axis %d is out of range for %d dimensions" % (what, x, ndim))
    return x % ndim


def swapped(axis1: Any, axis2: Any, ndim: int) -> tuple[int, ...]:
    """The permutation that swaps two axes (np.swapaxes)."""
    i, j = _axis(axis1, ndim, "axis1"), _axis(axis2, ndim, "axis2")
    perm = list(range(ndim))
    perm[i], perm[j] = j, i
    return tuple(perm)


def moved(source: Any, destination: Any, ndim: int) -> tuple[int, ...]:
    """The permutation of np.moveaxis(a, source, destination) (ints or sequences of one length)."""
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise InvalidArgumentError("moveaxis: source %s and destination %s need as many axes" % (src, dst))
    src_ = [_axis(x, ndim, "source") for x in src]
    dst_ = [_axis(x, ndim, "destination") for x in dst]
    if len(set(src_)) != len(src_) or len(set(dst_)) != len(dst_):
        raise InvalidArgumentError("moveaxis: an axis repeats in source %s or destination %s" % (src, dst))
    order = [n for n in range(ndim) if n not in src_]
    for d, s in sorted(zip(dst_, src_)):
        order.insert(d, s)
    return tuple(order)


def transpose(a: GlobalArray, perm: tuple[int, ...]) -> GlobalArray:
    """a with its axes permuted (perm checked): a view where the map can keep every rank's block
    on its rank, else a copy (see the module's text)."""
    from ._global import GlobalArray
    if perm == tuple(range(a.ndim)):
        return GlobalArray(a.context, a.layout, a.dtype, a.sections, _held_views(a), a.pending)
    if keeps_rank_order(a.layout.grid_shape, perm):
        return _transposed_view(a, perm)
    return _transposed_copy(a, perm)


def may_move(layout: GlobalMap) -> bool:
    """Whether some transpose of `layout` moves blocks (its grid divides more than one axis)."""
    return sum(g > 1 for g in layout.grid_shape) > 1


def keeps_rank_order(grid: Sequence[int], perm: tuple[int, ...]) -> bool:
    """Whether permuting the axes keeps the order of the distributed ones (grid extent above 1):
    then every rank's C-order grid coordinates name the same block after the permutation."""
    distributed = [axis for axis in perm if grid[axis] > 1]
    return distributed == sorted(distributed)


def _held_views(a: GlobalArray) -> dict[int, Any]:
    return {r: a.local_view(r) for r in a.context.ranks}


@functools.lru_cache(maxsize=64)
def _permuted_layout(layout: GlobalMap, perm: tuple[int, ...], roles: Optional[tuple[int, ...]]) -> GlobalMap:
    """Rank s's dictionaries: those of rank roles[s] (s itself without roles), permuted."""
    def rank_dims(s: int) -> tuple[dict, ...]:
        dims = layout.dim_data(s if roles is None else roles[s])
        return tuple(dims[axis] for axis in perm)

    return GlobalMap([rank_dims(s) for s in range(layout.nranks)])


def _transposed_view(a: GlobalArray, perm: tuple[int, ...]) -> GlobalArray:
    from ._global import GlobalArray, _wrap
    ctx = a.context
    layout = _permuted_layout(a.layout, perm, None)
    natives = {r: a.local_view(r).transpose(perm) for r in ctx.ranks}
    sections = {r: _wrap(ctx, layout, r, natives[r], ctx.device(r)) for r in ctx.ranks}
    return GlobalArray(ctx, layout, a.dtype, sections, natives, a.pending)


def grid_roles(grid: Sequence[int], perm: tuple[int, ...]) -> tuple[int, ...]:
    """roles[s]: the rank whose block rank s holds once the grid's axes are permuted (both grids
    numbered in C order)."""
    grid = tuple(int(g) for g in grid)
    permuted = tuple(grid[axis] for axis in perm)
    roles = [0] * math.prod(grid)
    for q in range(len(roles)):
        coords = np.unravel_index(q, grid)
        roles[int(np.ravel_multi_index(tuple(coords[axis] for axis in perm), permuted))] = q
    return tuple(roles)


def _transposed_copy(a: GlobalArray, perm: tuple[int, ...]) -> GlobalArray:
    """Collective: each rank's block moved whole to the rank that holds it in the permuted grid
    (one gdap redistribution with destination roles), then viewed transposed there."""
    from ._global import GlobalArray, _told_in, _view_of, _wrap, new_section
    from ._context import run_c
    from ._redistribute import release_redistribute
    src = a if a.pending is None else a._reduce_into(a.layout)  # partial values: each holder's sum first
    ctx, layout, dtype = src.context, src.layout, src.dtype
    roles = grid_roles(layout.grid_shape, perm)
    if len(roles) != layout.nranks:  # a grid that does not number every rank (no gdap layout makes one)
        raise UnsupportedError("transpose: the layout's grid %s has %d cells but %d ranks; reshard it first"
                               % (tuple(layout.grid_shape), len(roles), layout.nranks))
    # A plan or section only this rank cannot make is told to the peers in the move (their RemoteError
    # at once, not their timeout), as reshard's are (_global._plans_and_sections).
    plans, made = _told_in(ctx, lambda: (_role_plans(ctx, layout, dtype, roles),
                                         {r: new_section(ctx, layout, roles[r], dtype, device=ctx.device(r))
                                          for r in ctx.ranks}), release_redistribute)
    run_c(ctx, lambda r: (plans[r], src.sections[r], made[r][0]), _c.gdap_redistribute, placeholders=(None,) * 3)
    out_layout = _permuted_layout(layout, perm, roles)
    # The views keep the moved memory alive (their base; where gdap allocated it, the LocalArray).
    natives = {r: (_view_of(m[0]) if m[1] is None else m[1]).transpose(perm) for r, m in made.items()}
    sections = {r: _wrap(ctx, out_layout, r, natives[r], ctx.device(r)) for r in ctx.ranks}
    return GlobalArray(ctx, out_layout, dtype, sections, natives)


def _role_plans(ctx: Any, layout: GlobalMap, dtype: np.dtype, roles: tuple[int, ...]) -> dict[int, Any]:
    from ._redistribute import Plan
    return ctx._caches.lookup("role plans", (layout,), (np.dtype(dtype).str, roles),
                              lambda: {r: Plan(layout, layout, dtype, r, roles=roles) for r in ctx.ranks})


# ---- reshapes ----------------------------------------------------------------------------------

def new_shape(shape: Any, size: int) -> tuple[int, ...]:
    """`shape` (an int or a sequence, one -1 allowed) for an array of `size` elements; a
    ValueError (InvalidArgumentError) as NumPy's where it does not fit."""
    items = [shape] if _is_index(shape) or not np.iterable(shape) else list(shape)
    dims = [integer(n, "shape[%d]" % i) for i, n in enumerate(items)]
    unknown = [i for i, n in enumerate(dims) if n < 0]  # NumPy reads any negative extent as -1
    if len(unknown) > 1:
        raise InvalidArgumentError("reshape: can only specify one unknown dimension (-1), not %s" % (tuple(dims),))
    if unknown:
        dims[unknown[0]] = -1
    known = math.prod(n for n in dims if n != -1)
    if unknown and known and size % known == 0:
        dims[unknown[0]] = size // known
    if (unknown and dims[unknown[0]] == -1) or math.prod(dims) != size:
        raise InvalidArgumentError("cannot reshape array of size %d into shape %s" % (size, tuple(dims)))
    return tuple(dims)


def _is_index(x: Any) -> bool:
    """Whether x is one integer to NumPy (an int, a NumPy integer, a 0-d integer array: operator.index)."""
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


def _groups(old: tuple[int, ...], new: tuple[int, ...]) -> Optional[list[tuple[range, range]]]:
    """The finest split of both shapes into consecutive groups of axes of equal products, as
    (old axes, new axes), a side empty for a length-1 axis the other lacks; None for size 0."""
    if 0 in old or 0 in new:
        return None
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        i0, j0, p, q = i, j, 1, 1
        if i < len(old):
            p, i = old[i], i + 1
        if j < len(new):
            q, j = new[j], j + 1
        while p != q:  # the smaller side has axes left: the totals agree
            if p < q:
                p, i = p * old[i], i + 1
            else:
                q, j = q * new[j], j + 1
        groups.append((range(i0, i), range(j0, j)))
    return groups


def _whole(d: dict) -> bool:
    """Whether a dimension is held whole and plainly on this rank (a grid of one, no padding: a
    periodic flag without padding changes no cell)."""
    return d["dist_type"] in ("b", "c") and d["proc_grid_size"] == 1 and not any(d.get("padding", ()))


def _carrier(sizes: Sequence[int]) -> int:
    """The axis of a group that carries its block where the grid divides none: the first longer
    than 1 (0 if none is)."""
    return next((k for k, n in enumerate(sizes) if n > 1), 0)


def _regrouped(dims: tuple[dict, ...], old: tuple[int, ...], new: tuple[int, ...],
               group: tuple[range, range], spread: bool) -> Optional[list[dict]]:
    """One rank's dictionaries for a group's new axes, or None where its block is no flat range
    that ends on rows of the new group."""
    olds, news = list(group[0]), list(group[1])
    if [old[k] for k in olds] == [new[k] for k in news]:
        return [dims[k] for k in olds]  # unchanged: any distribution, padding included
    if not olds or not news:  # a length-1 axis added, or dropped where it is held whole
        return _whole_axes(new, news) if all(_whole(dims[k]) for k in olds) else None
    run = _flat_run([old[k] for k in olds], [dims[k] for k in olds])
    return None if run is None else _split_run(run, [new[k] for k in news], _whole_axes(new, news), spread)


def _plain(d: dict) -> bool:
    return (d["dist_type"] == "b" and not any(d.get("padding", ()))) or _whole(d)


def _flat_run(sizes: list[int], dims: list[dict]) -> Optional[tuple[int, int, int, int]]:
    """(lo, hi, cells, cell) for one rank's dictionaries of a group of axes: the C-order flat range
    of the group's elements it holds, the group grid's cell count and this rank's cell (C order);
    None where its block is no such range: every axis before the last divided one held one index
    at a time, that one a plain block, those after it whole."""
    divided = [n for n, d in enumerate(dims) if d["proc_grid_size"] > 1]
    last = divided[-1] if divided else -1
    lo = cell = 0
    spans = [(0, d["size"]) if _whole(d) else (d.get("start", 0), d.get("stop", 0)) for d in dims]
    for n, (size, d) in enumerate(zip(sizes, dims)):
        if not _plain(d) or (n < last and spans[n][1] - spans[n][0] != 1) or (n > last and not _whole(d)):
            return None
        lo = lo * size + (spans[n][0] if n <= last else 0)
        cell = cell * d["proc_grid_size"] + d["proc_grid_rank"]
    if last < 0:
        return 0, math.prod(sizes), 1, 0
    count = (spans[last][1] - spans[last][0]) * math.prod(sizes[last + 1:])
    return lo, lo + count, math.prod(d["proc_grid_size"] for d in dims), cell


def _split_run(run: tuple[int, int, int, int], sizes: list[int], out: list[dict], spread: bool) -> Optional[list[dict]]:
    """`out` (the group's new axes, whole) with the rank's flat run as a block: spread, the grid's
    cells laid in C order over the leading new axes, one index each, and blocks of the first axis
    at which the new shape has as many rows as cells; else all the cells on the first axis longer
    than 1 (as where there are fewer elements than cells, or blocks uneven or empty). None where
    the run is no such block."""
    cells = run[2]
    t = next((n for n in range(len(sizes)) if math.prod(sizes[:n + 1]) >= cells), None) if spread else None
    t = _carrier(sizes) if t is None else t
    if cells % math.prod(sizes[:t]):
        return None
    return _split_at(run, sizes, out, t)


def _split_at(run: tuple[int, int, int, int], sizes: list[int], out: list[dict], t: int) -> Optional[list[dict]]:
    lo, hi, cells, cell = run
    grid = cells // math.prod(sizes[:t])
    lead, rank = divmod(cell, grid)
    inner = math.prod(sizes[t + 1:])
    base = lead * sizes[t] * inner
    if lo % inner or hi % inner or not base <= lo <= hi <= base + sizes[t] * inner:
        return None
    for n in reversed(range(t)):
        lead, at = divmod(lead, sizes[n])
        out[n] = dict(out[n], proc_grid_size=sizes[n], proc_grid_rank=at, start=at, stop=at + 1)
    out[t] = dict(out[t], proc_grid_size=grid, proc_grid_rank=rank, start=(lo - base) // inner,
                  stop=(hi - base) // inner)
    return out


def _whole_axes(shape: tuple[int, ...], axes: Sequence[int]) -> list[dict]:
    return [dict(dist_type="b", size=shape[k], proc_grid_size=1, proc_grid_rank=0, start=0, stop=shape[k])
            for k in axes]


@functools.lru_cache(maxsize=64)
def local_layout(layout: GlobalMap, shape: tuple[int, ...]) -> Optional[GlobalMap]:
    """The layout in which every rank's section of `layout`, reshaped locally to `shape`, holds
    the same elements; None where there is none (see the module's text)."""
    old = tuple(layout.shape)
    groups = _groups(old, shape)
    if groups is None or not shape or not old:
        return None
    for spread in (True, False):  # a grid spread over the new leading axes, else the old rule (_split_run)
        ranks = _regrouped_ranks(layout, old, shape, groups, spread)
        if ranks is not None:
            try:
                return GlobalMap(ranks)
            except ProtocolError:  # empty blocks a spread grid cannot place: the old rule's layout
                continue
    return None


def _regrouped_ranks(layout: GlobalMap, old: tuple[int, ...], shape: tuple[int, ...],
                     groups: list[tuple[range, range]], spread: bool) -> Optional[list[tuple[dict, ...]]]:
    ranks = []
    for r in range(layout.nranks):
        dims = layout.dim_data(r)
        rank_dims: list[dict] = []
        for group in groups:
            part = _regrouped(dims, old, shape, group, spread)
            if part is None:
                return None
            rank_dims.extend(part)
        ranks.append(tuple(rank_dims))
    return ranks


def reshaped(a: GlobalArray, shape: tuple[int, ...], order: str, copy: Optional[bool],
             all_views: Optional[bool] = None) -> GlobalArray:
    """a.reshape(shape, order=order, copy=copy), its arguments checked (and agreed in SPMD mode, with
    all_views: whether every rank's sections reshape as views, where reads_as_c): order 'F' is a.T
    reshaped to shape[::-1] in C order and transposed back, a view only where both transposes are,
    except where it reads as order 'C' (an identity, length-1 axes added or dropped)."""
    if reads_as_c(order, tuple(a.shape), shape):
        return reshape(a, shape, copy, all_views)
    if copy is False and may_move(a.layout):
        raise InvalidArgumentError("reshape(order='F', copy=False): the transpose of this layout (grid %s) moves "
                                   "blocks between ranks, a copy; leave copy unset" % (tuple(a.layout.grid_shape),))
    reversed_ = transpose(a, tuple(range(a.ndim))[::-1])
    return transpose(reshape(reversed_, shape[::-1], copy), tuple(range(len(shape)))[::-1])


def reads_as_c(order: str, old: tuple[int, ...], new: tuple[int, ...]) -> bool:
    """Whether reshape(new, order) of an array of shape `old` is its C-order reshape: order 'C', or the
    same extents above 1 in the same order (an identity; length-1 axes added or dropped), which both
    orders read alike, so that order 'F' there needs neither transpose (each a copy on a 2 x 2 grid)."""
    return order == "C" or [n for n in old if n != 1] == [n for n in new if n != 1]


def reshape(a: GlobalArray, shape: tuple[int, ...], copy: Optional[bool],
            all_views: Optional[bool] = None) -> GlobalArray:
    """a in `shape` (C order, checked): each rank's section reshaped where a layout says so, else
    redistributed (a copy). copy=True always copies, copy=False refuses anything but a view. The
    view-or-copy answer is every rank's (all_views where the caller's agreement carried it, else
    agreed here in SPMD mode), so every rank takes the same branch."""
    layout = _layout_in_place(a.layout, tuple(a.shape), shape)
    if layout is not None:
        out, viewed = _reshaped_locally(a, layout, shape, all_views)
        if copy is False and not viewed:
            raise InvalidArgumentError("reshape(copy=False): the sections of a (strided views, as a transpose's) "
                                       "cannot be reshaped to %s without a copy (NumPy would copy too); leave copy "
                                       "unset to copy them" % (shape,))
        return out.copy() if copy and viewed else out
    if copy is False:
        raise InvalidArgumentError("reshape(copy=False): %s in layout %r cannot become %s without moving elements "
                                   "between ranks; leave copy unset to redistribute (a copy)" % (a.shape, a.layout,
                                                                                                 shape))
    return _redistributed(a, shape)


def _layout_in_place(layout: GlobalMap, old: tuple[int, ...], shape: tuple[int, ...]) -> Optional[GlobalMap]:
    """The layout of `shape` in which each rank's section, reshaped locally, holds its elements;
    None where the reshape must move elements between ranks."""
    if shape == old:
        return layout
    if layout.nranks > 1 and _holds_whole(layout):  # every rank has every element: reshape each copy
        return GlobalMap.replicated(layout.nranks, shape)
    if 0 in old:  # no element to move: empty sections of any layout will do
        from . import layout as layouts
        return layouts.block(shape, layout.nranks)
    return local_layout(layout, shape)


def _holds_whole(layout: GlobalMap) -> bool:
    """Whether every rank holds the whole array, in C order (a replicated layout, or a transpose of one)."""
    def whole(d: dict) -> bool:
        if d["dist_type"] == "u":
            return bool(np.array_equal(d["indices"], np.arange(d["size"])))
        return _whole(d)

    return all(all(whole(d) for d in layout.dim_data(r)) for r in range(layout.nranks))


def _merges_in_memory_order(view: Any, old: tuple[int, ...], new: tuple[int, ...]) -> bool:
    """Whether every group of axes that the reshape merges lies in C order in the section's memory,
    each axis's stride its successor's times its successor's local length. Strict where NumPy is
    lenient (a local length of 1 or 0 says nothing about the global array's memory order: a transposed
    section of one column reshapes without a copy, the global transpose does not), so that a view
    here is one in NumPy's sense of the global array too. Axes of global length 1 are skipped, as
    NumPy skips them; the result's own axes can always split a merged run."""
    groups = _groups(old, new)
    if groups is None:
        return True  # size 0: no element to alias
    for olds, _news in groups:
        axes = [k for k in olds if old[k] != 1]
        for k, n in zip(axes, axes[1:]):
            if view.strides[k] != view.strides[n] * view.shape[n]:
                return False
    return True


def _every_rank(ctx: Any, mine: bool) -> bool:
    """Whether `mine` holds on every rank: in SPMD mode agreed through a one-element-a-rank array's
    minimum (collective), so that no rank takes a view where another takes a copy."""
    if not ctx.spmd:
        return mine
    from . import layout as layouts
    from ._global import GlobalArray
    flags = GlobalArray._new_in(ctx, layouts.block((ctx.nranks,), ctx.nranks), np.int32)
    for r in ctx.ranks:
        flags.local_view(r)[...] = int(mine)
    return bool(int(flags.min()))


def reshapes_as_views(a: GlobalArray, shape: tuple[int, ...]) -> bool:
    """Whether this process's sections of `a` reshape to `shape` (C order) as views in NumPy's sense
    (True where the reshape moves elements: nothing local to ask). Local: the flag that the SPMD
    agreement of a reshape ANDs over the ranks."""
    layout = _layout_in_place(a.layout, tuple(a.shape), shape)
    return layout is None or _local_reshapes(a, layout, shape)[1]


def _local_reshapes(a: GlobalArray, layout: GlobalMap, shape: tuple[int, ...]) -> tuple[dict[int, Any], bool]:
    """(every held rank's section reshaped to its part of `layout`, whether each is a view of a's
    memory in NumPy's sense of the global array)."""
    from ._global import _address, _device_scope
    ctx, old = a.context, tuple(a.shape)
    views = {r: a.local_view(r) for r in ctx.ranks}
    natives = {}
    for r in ctx.ranks:
        with _device_scope(ctx.device(r)):
            natives[r] = views[r].reshape(layout.local_shape(r))
    return natives, all(natives[r].size == 0 or (_address(natives[r]) == _address(views[r])
                                                 and _merges_in_memory_order(views[r], old, shape))
                        for r in ctx.ranks)


def _reshaped_locally(a: GlobalArray, layout: GlobalMap, shape: tuple[int, ...],
                      all_views: Optional[bool] = None) -> tuple[GlobalArray, bool]:
    """(a over `layout`, each rank's section reshaped; whether the result is a view of a's memory in
    NumPy's sense of the global array, on every rank (all_views where already agreed): where one
    rank's section cannot be one (a strided section, a transpose's), every rank's is copied, so that
    the result never aliases a on some ranks only)."""
    from ._global import GlobalArray, _device_scope, _wrap, aligned_copy
    ctx = a.context
    views = {r: a.local_view(r) for r in ctx.ranks}
    natives, mine = _local_reshapes(a, layout, shape)
    viewed = _every_rank(ctx, mine) if all_views is None else all_views
    if not viewed:
        for r in ctx.ranks:
            with _device_scope(ctx.device(r)):
                natives[r] = aligned_copy(views[r]).reshape(layout.local_shape(r))
    sections = {r: _wrap(ctx, layout, r, natives[r], ctx.device(r)) for r in ctx.ranks}
    return GlobalArray(ctx, layout, a.dtype, sections, natives, a.pending), viewed


def _redistributed(a: GlobalArray, shape: tuple[int, ...]) -> GlobalArray:
    """Collective: a in `shape` through flat blocks: a's spread layout (a reshard unless a flattens
    locally already), flattened; a reshard to flat blocks that end on rows of `shape`; reshaped
    locally into the spread layout of `shape` (spread_rows)."""
    if not shape or not a.shape:
        raise UnsupportedError("reshape between %s and %s: a 0-d GlobalArray has no layout; read the element with "
                               "a[(0,) * a.ndim] or reshape a.get()" % (a.shape, shape))
    size, nranks = a.size, a.nranks
    flat_shape = (size,)
    to_flat = local_layout(a.layout, flat_shape)
    src = a
    if to_flat is None:
        src = a.reshard(spread_rows(a.shape, nranks))  # flattens locally: a flat run a rank
        to_flat = local_layout(src.layout, flat_shape)
    rows = spread_rows(shape, nranks)
    flat_rows = local_layout(rows, flat_shape)
    if size == 0:  # nothing to move: new empty sections
        from ._global import GlobalArray
        return GlobalArray._new_in(a.context, rows, a.dtype, zero=True)
    assert to_flat is not None and flat_rows is not None, "spread layouts always flatten locally"
    flat = _reshaped_locally(src, to_flat, flat_shape)[0]
    moved = flat.reshard(flat_rows)
    return _reshaped_locally(moved, rows, shape)[0]


def spread_rows(shape: tuple[int, ...], nranks: int) -> GlobalMap:
    """The layout a redistributing reshape moves through and returns: sections that are flat runs of
    the C-order elements, spread over every rank. The leading axes before the first at which the
    shape has as many rows as ranks are divided one index a rank, that axis in blocks over the ranks
    left ((2, n) over 4 ranks: a 2 x 2 grid, a half row each). Where their product does not divide
    the ranks' count, blocks of the first axis longer than 1 (axis 0 if none is)."""
    from . import layout as layouts
    grid = [1] * len(shape)
    t = next((n for n in range(len(shape)) if math.prod(shape[:n + 1]) >= nranks), None)
    if t is not None and nranks % math.prod(shape[:t]) == 0:
        grid[:t] = shape[:t]
        grid[t] = nranks // math.prod(shape[:t])
    else:
        grid[_carrier(shape)] = nranks
    return layouts.block(shape, tuple(grid))


def check_order(order: Any, what: str) -> str:
    """`order` as 'C' or 'F' (any case; None is 'C'), as NumPy's reshape, ravel and flatten take it.
    ravel and flatten also take 'K' (their elements in memory order): a GlobalArray's sections on
    several ranks have no one memory order, and its gathered copy is C-contiguous, whose 'K' order
    is C order; so 'K' reads C order there."""
    named = "C" if order is None else order.upper() if isinstance(order, str) else order
    if named == "K" and what != "reshape":
        return "C"
    if named not in ("C", "F"):
        raise UnsupportedError("%s(order=%r): gdap takes order='C' and 'F' (through transposes)%s; 'A' reads the "
                               "memory order of sections spread over ranks, which is no one order"
                               % (what, order, "" if what == "reshape" else " and 'K' (C order)"))
    return str(named)


def check_copy(copy: Any) -> Optional[bool]:
    """reshape's copy: None (a view where one can be), else read as a flag, as NumPy reads it."""
    return None if copy is None else bool(copy)


# ---- squeeze and expand_dims -------------------------------------------------------------------

def squeezed_axes(axis: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes np.squeeze(a, axis) drops (None: every length-1 axis), checked as NumPy's: an axis out
    of range, repeated or not of length 1 raises InvalidArgumentError (a ValueError); a 0-d result
    raises UnsupportedError (a GlobalArray has no 0-d layout)."""
    ndim = len(shape)
    if axis is None:
        axes = [k for k, n in enumerate(shape) if n == 1]
    else:
        items = [axis] if _is_index(axis) else list(axis)
        axes = [_axis(x, ndim, "squeeze") for x in items]
        if len(set(axes)) != len(axes):
            raise InvalidArgumentError("squeeze: repeated axis in %s" % (tuple(items),))
        for k in axes:
            if shape[k] != 1:
                raise InvalidArgumentError("cannot select an axis to squeeze out which has size not equal to one "
                                           "(axis %d of shape %s)" % (k, shape))
    if axes and len(axes) == ndim:
        raise UnsupportedError("squeeze of shape %s leaves a 0-d array: a 0-d GlobalArray has no layout; read the "
                               "element with a[(0,) * a.ndim]" % (shape,))
    return tuple(sorted(axes))


def squeeze(a: GlobalArray, axes: tuple[int, ...]) -> GlobalArray:
    """a without the length-1 `axes` (squeezed_axes), a view: where every rank holds them whole, each
    dimension dictionary dropped with its axis (any distribution of the others kept); where the grid
    divides one (the ranks off its one cell hold nothing), its grid extent folded into a kept axis
    (_folded_layout). Where that layout cannot say so (a padded or periodic kept axis, the one cell
    held by several grid cells), a reshape: a view where the sections reshape alone, else a copy."""
    from ._global import GlobalArray
    if not axes:
        return GlobalArray(a.context, a.layout, a.dtype, a.sections, _held_views(a), a.pending)
    layout = a.layout
    if any(layout.grid_shape[k] > 1 for k in axes):  # a map's grid must still number every rank
        folded = _folded_layout(layout, axes)
        if folded is None:
            return reshape(a, tuple(n for k, n in enumerate(a.shape) if k not in axes), None)
        return _local_view(a, folded, lambda r, view: _squeezed_section(layout, folded, axes, r, view))
    dropped = _dropped_layout(layout, axes)
    return _local_view(a, dropped, lambda r, view: view[_dropping_index(layout.dim_data(r), axes)])


def _squeezed_section(layout: GlobalMap, folded: GlobalMap, axes: tuple[int, ...], r: int, view: Any) -> Any:
    """Rank r's section without `axes`: indexed where it holds their one cell, else (no element) an
    empty array of its folded local shape."""
    if all(layout.runs(r, k) for k in axes):
        return view[_dropping_index(layout.dim_data(r), axes)]
    return view.reshape(folded.local_shape(r))


@functools.lru_cache(maxsize=64)
def _folded_layout(layout: GlobalMap, axes: tuple[int, ...]) -> Optional[GlobalMap]:
    """The layout without the length-1 `axes` where the grid divides some: each dropped axis's grid
    extent folded into the kept axis before it (the first kept axis for leading ones), so that the
    grid still numbers every rank in C order. Along a folded axis the grid cells that hold the
    dropped axes' one cell keep their block (a 'b' or whole axis) or index list ('c', 'u': listed as
    'u'); the others hold an empty block (placed so that the blocks still tile) or list. None where
    no map says so: a padded or periodic axis in a fold, the one cell held by several grid cells."""
    kept = [j for j in range(layout.ndim) if j not in axes]
    folds = {j: [k for k in axes if max([i for i in kept if i < k], default=kept[0]) == j] for j in kept}
    if any(_padded_or_periodic(layout.dim_data(r)[k]) for r in range(layout.nranks) for k in axes):
        return None
    per_rank: list[list[dict]] = [[dict(d) for d in layout.dim_data(r)] for r in range(layout.nranks)]
    for j, dropped in folds.items():
        if any(layout.grid_shape[k] > 1 for k in dropped):
            fold = _folded_axis(layout, j, sorted([j] + dropped))
            if fold is None:
                return None
            for r, d in enumerate(fold):
                per_rank[r][j] = d
    try:
        return GlobalMap([tuple(d for k, d in enumerate(dims) if k not in axes) for dims in per_rank])
    except (ProtocolError, InvalidArgumentError):  # the blocks overlap: the one cell held twice
        return None


def _padded_or_periodic(d: dict) -> bool:
    return any(d.get("padding", ())) or bool(d.get("periodic"))


def _folded_axis(layout: GlobalMap, j: int, group: list[int]) -> Optional[list[dict]]:
    """Every rank's dictionary of kept axis j with the grid extents of the group's dropped axes folded
    in (the group's axes in order, C order over their grid cells), or None (see _folded_layout)."""
    from ._map import grid_rank_to_coords
    grid = layout.grid_shape
    extent = math.prod(grid[k] for k in group)
    dims = [layout.dim_data(r)[j] for r in range(layout.nranks)]
    if any(_padded_or_periodic(d) for d in dims):
        return None
    cells, holds = [], []
    for r in range(layout.nranks):
        coords = grid_rank_to_coords(r, grid)
        cells.append(int(np.ravel_multi_index([coords[k] for k in group], [grid[k] for k in group])))
        holds.append(all(layout.runs(r, k) for k in group if k != j))
    if all(d["dist_type"] == "b" or _whole(d) for d in dims):
        return _folded_blocks(layout.shape[j], dims, cells, holds, extent)
    return [dict(dist_type="u", size=layout.shape[j], proc_grid_size=extent, proc_grid_rank=c,
                 indices=_global_indices(layout, r, j) if h else np.zeros(0, np.int64))
            for r, (c, h) in enumerate(zip(cells, holds))]


def _folded_blocks(size: int, dims: list[dict], cells: list[int], holds: list[bool], extent: int) -> list[dict]:
    """'b' dictionaries over the folded grid: the holding cells' blocks as they were, every other cell
    an empty block at the end of the last holding cell before it (so that the blocks tile)."""
    span = {c: (d.get("start", 0), d.get("stop", size)) for d, c, h in zip(dims, cells, holds) if h}
    ends, end = [], 0
    for c in range(extent):
        end = span[c][1] if c in span else end
        ends.append(end)
    return [dict(dist_type="b", size=size, proc_grid_size=extent, proc_grid_rank=c,
                 start=span[c][0] if c in span else ends[c], stop=ends[c]) for c in cells]


def _global_indices(layout: GlobalMap, r: int, j: int) -> np.ndarray:
    """The global indices rank r holds along axis j, in its section's order."""
    runs = sorted(layout.runs(r, j), key=lambda run: run[2])
    if not runs:
        return np.zeros(0, np.int64)
    return np.concatenate([np.arange(start, start + length, dtype=np.int64) for start, length, _ in runs])


def _dropping_index(dims: tuple[dict, ...], axes: tuple[int, ...]) -> tuple[Any, ...]:
    """The index of a section that drops `axes` (held whole: the local index of their one element,
    past any padding) and keeps the others."""
    from ._dims import dim_global_to_local
    return tuple(dim_global_to_local(d, 0) if k in axes else slice(None) for k, d in enumerate(dims))


@functools.lru_cache(maxsize=64)
def _dropped_layout(layout: GlobalMap, axes: tuple[int, ...]) -> GlobalMap:
    return GlobalMap([tuple(d for k, d in enumerate(layout.dim_data(r)) if k not in axes)
                      for r in range(layout.nranks)])


def expanded_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """The new axes of np.expand_dims(a, axis) in the result's ndim + len(axis) dimensions, checked as
    NumPy's (out of range or repeated: InvalidArgumentError, a ValueError)."""
    items = [axis] if _is_index(axis) else list(axis)
    out_ndim = ndim + len(items)
    axes = [_axis(x, out_ndim, "expand_dims") for x in items]
    if len(set(axes)) != len(axes):
        raise InvalidArgumentError("expand_dims: repeated axis in %s" % (tuple(items),))
    return tuple(sorted(axes))


def expand_dims(a: GlobalArray, axes: tuple[int, ...]) -> GlobalArray:
    """a with length-1 axes inserted at `axes` (expanded_axes): always a view, each rank's dictionaries
    given a whole axis of length 1 there; no communication."""
    layout = _inserted_layout(a.layout, axes)
    # reshape, not view[None]: NumPy gives an inserted axis stride 0, which a section's strides refuse
    return _local_view(a, layout, lambda r, view: view.reshape(layout.local_shape(r)))


@functools.lru_cache(maxsize=64)
def _inserted_layout(layout: GlobalMap, axes: tuple[int, ...]) -> GlobalMap:
    def rank_dims(r: int) -> tuple[dict, ...]:
        kept = iter(layout.dim_data(r))
        one = _whole_axes((1,), [0])[0]
        return tuple(dict(one) if k in axes else next(kept) for k in range(layout.ndim + len(axes)))

    return GlobalMap([rank_dims(r) for r in range(layout.nranks)])


def _local_view(a: GlobalArray, layout: GlobalMap, view: Any) -> GlobalArray:
    """A view of a over `layout`: rank r's section is view(r, its section) (indexed or reshaped
    without a copy)."""
    from ._global import GlobalArray, _device_scope, _wrap
    ctx = a.context
    natives = {}
    for r in ctx.ranks:
        with _device_scope(ctx.device(r)):
            natives[r] = view(r, a.local_view(r))
    sections = {r: _wrap(ctx, layout, r, natives[r], ctx.device(r)) for r in ctx.ranks}
    return GlobalArray(ctx, layout, a.dtype, sections, natives, a.pending)

"""Reading elements of a GlobalArray through their owners: a[i, j] and a[0:10, ::2].

The selection is itself laid out as a distributed array: along each axis, every grid coordinate
holds the selected indices it owns (an unstructured dimension listing their positions in the
result), so each rank copies its part out of its own section and one gdap redistribution gathers
the parts, to rank 0 in single-controller mode or to every rank in SPMD mode. A single element in
single-controller mode is read from its owner directly.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _gdap_c as _c
from ._context import run_c
from ._map import GlobalMap, grid_coords_to_rank, grid_rank_to_coords

if TYPE_CHECKING:
    from ._global import GlobalArray


def normalize(key: Any, shape: Sequence[int]) -> tuple[list[np.ndarray], list[bool]]:
    """Per axis the selected global indices (int64, in result order) and whether the axis stays
    (slices) or goes (integers). IndexError / TypeError name the axis and the value."""
    items = list(key) if isinstance(key, tuple) else [key]
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (len(shape) - len(items) + 1)
    if len(items) > len(shape):
        raise IndexError("too many indices: %d for an array of %d dimensions" % (len(items), len(shape)))
    items += [slice(None)] * (len(shape) - len(items))
    selected, kept = [], []
    for axis, (k, n) in enumerate(zip(items, shape)):
        if isinstance(k, slice):
            selected.append(np.arange(*k.indices(n), dtype=np.int64))
            kept.append(True)
            continue
        if isinstance(k, (bool, np.bool_)):  # operator.index reads True as 1; NumPy reads it as a 0-d mask
            raise TypeError("axis %d: index %r is a boolean: NumPy reads True / False as a mask that adds an axis, "
                            "which a GlobalArray does not do; give an integer or a slice" % (axis, k))
        try:
            i = operator.index(k)
        except TypeError:
            raise TypeError("axis %d: index %r is not an integer, a slice or '...' (a GlobalArray reads integers "
                            "and slices)" % (axis, k)) from None
        if not -n <= i < n:
            raise IndexError("axis %d: index %d is out of bounds for size %d" % (axis, i, n))
        selected.append(np.array([i % n], dtype=np.int64))
        kept.append(False)
    return selected, kept


def _owned_selection(layout: GlobalMap, rank: int, axis: int, selected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions in the result, local indices in the section) of the selected indices that
    `rank` owns along `axis`, in increasing position order."""
    order = np.argsort(selected, kind="stable")
    ordered = selected[order]
    positions, local = [], []
    for start, length, local_start in layout.runs(rank, axis):
        lo, hi = np.searchsorted(ordered, [start, start + length])
        if hi > lo:
            positions.append(order[lo:hi])
            local.append(ordered[lo:hi] - start + local_start)
    if not positions:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pos, loc = np.concatenate(positions), np.concatenate(local)
    by_position = np.argsort(pos, kind="stable")
    return pos[by_position].astype(np.int64), loc[by_position].astype(np.int64)


def selection_layout(layout: GlobalMap, selected: list[np.ndarray]) -> tuple[GlobalMap, list[list[np.ndarray]]]:
    """The selection as a distribution over the layout's ranks and grid, and, per axis and grid
    coordinate, the local indices that coordinate's sections read."""
    grid = tuple(layout.grid_shape)
    positions: list[list[np.ndarray]] = []
    local: list[list[np.ndarray]] = []
    for axis, g in enumerate(grid):
        positions.append([])
        local.append([])
        for c in range(g):
            coords = [0] * len(grid)
            coords[axis] = c
            pos, loc = _owned_selection(layout, grid_coords_to_rank(coords, grid), axis, selected[axis])
            positions[axis].append(pos)
            local[axis].append(loc)
    dim_data = []
    for r in range(layout.nranks):
        rank_coords = grid_rank_to_coords(r, grid)
        dim_data.append(tuple(dict(dist_type="u", size=len(selected[i]), proc_grid_size=grid[i], proc_grid_rank=c,
                                   indices=positions[i][c]) for i, c in enumerate(rank_coords)))
    return GlobalMap(dim_data), local


def read(a: GlobalArray, key: Any) -> Any:
    """a[key] on the host: a NumPy scalar for integers only, else a NumPy array."""
    from ._global import _prepare, _release_redistribute, _replicated_layout, _root_layout, _to_host, _wrap, new_section

    ctx = a.context
    # A key wrong on this rank only (SPMD): the others are told in the redistribution below.
    selected, kept = _prepare(ctx, lambda r: normalize(key, a.shape), _release_redistribute)[ctx.ranks[0]]
    if not any(kept) and not ctx.spmd:  # one element: ask its owner
        rank, at = a.layout.owner(tuple(int(s[0]) for s in selected))
        return _to_host(a.local_view(rank)[tuple(at)].reshape(1)).reshape(())[()]
    shape = tuple(len(s) for s in selected)
    sel_layout, local = selection_layout(a.layout, selected)
    grid = tuple(a.layout.grid_shape)
    parts = {}
    for r in ctx.ranks:
        coords = grid_rank_to_coords(r, grid)
        view = a.local_view(r)
        index = [local[i][c] for i, c in enumerate(coords)]
        part = _take(view, index)
        parts[r] = _wrap(ctx, sel_layout, r, part, ctx.device(r))
    target = _replicated_layout(shape, ctx.nranks) if ctx.spmd else _root_layout(shape, ctx.nranks, 0)
    plans = ctx.plans(sel_layout, target, a.dtype)
    made = {r: new_section(ctx, target, r, a.dtype) for r in ctx.ranks}
    run_c(ctx, lambda r: (plans[r], parts[r], made[r][0]), _c.gdap_redistribute, placeholders=(None,) * 3)
    whole = _to_host(_view(made[ctx.ranks[0]]))
    out = whole.reshape(tuple(n for n, k in zip(shape, kept) if k))
    return out if any(kept) else out[()]


def _take(view: Any, index: list[np.ndarray]) -> Any:
    """The elements of `view` at the outer product of per-axis local indices, a new C-contiguous
    array (NumPy or CuPy, as `view`)."""
    if isinstance(view, np.ndarray):
        return np.ascontiguousarray(view[np.ix_(*index)])
    import cupy
    with view.device:
        return cupy.ascontiguousarray(view[cupy.ix_(*[cupy.asarray(i) for i in index])])


def _view(made: tuple) -> Any:
    from ._global import _view_of
    local, native = made
    return native if native is not None else _view_of(local)

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
    (slices, an index array) or goes (integers). IndexError / TypeError name the axis and the value."""
    items = _items(key, len(shape))
    _check_one_index_array(items)
    selected, kept = [], []
    for axis, (k, n) in enumerate(zip(items, shape)):
        if isinstance(k, slice):
            selected.append(np.arange(*k.indices(n), dtype=np.int64))
            kept.append(True)
            continue
        if _is_index_array(k):
            selected.append(_array_index(k, axis, n))
            kept.append(True)
            continue
        if isinstance(k, (bool, np.bool_)):  # operator.index reads True as 1; NumPy reads it as a 0-d mask
            raise TypeError("axis %d: index %r is a boolean: NumPy reads True / False as a mask that adds an axis, "
                            "which a GlobalArray does not do; give an integer or a slice" % (axis, k))
        try:
            i = operator.index(k)
        except TypeError:
            raise TypeError("axis %d: index %r is not an integer, a slice, '...' or a 1-d integer array / boolean "
                            "mask (what a GlobalArray reads)" % (axis, k)) from None
        if not -n <= i < n:
            raise IndexError("axis %d: index %d is out of bounds for size %d" % (axis, i, n))
        selected.append(np.array([i % n], dtype=np.int64))
        kept.append(False)
    return selected, kept


def _items(key: Any, ndim: int) -> list:
    """The index's items, one per axis: '...' expanded and missing trailing axes taken whole."""
    items = list(key) if isinstance(key, tuple) else [key]
    ellipses = [i for i, k in enumerate(items) if k is Ellipsis]  # `is`: `in` compares arrays element-wise
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if ellipses:
        at = ellipses[0]
        items[at:at + 1] = [slice(None)] * (ndim - len(items) + 1)
    if len(items) > ndim:
        raise IndexError("too many indices: %d for an array of %d dimensions" % (len(items), ndim))
    return items + [slice(None)] * (ndim - len(items))


def _is_index_array(k: Any) -> bool:
    """Whether index item `k` is an array or a list (NumPy's advanced indexing), not a scalar."""
    return isinstance(k, (list, np.ndarray)) and not (isinstance(k, np.ndarray) and k.ndim == 0)


def _check_one_index_array(items: list) -> None:
    """At most one axis takes an array: NumPy pairs several arrays element-wise (broadcasting them),
    which the per-axis read below does not do."""
    arrays = [i for i, k in enumerate(items) if _is_index_array(k)]
    if len(arrays) > 1:
        raise IndexError("axes %s: a GlobalArray takes an integer array or boolean mask on one axis only (NumPy "
                         "pairs several arrays element-wise, which it does not do); index one axis, then the "
                         "NumPy result" % ", ".join(map(str, arrays)))


def _array_index(k: Any, axis: int, n: int) -> np.ndarray:
    """The global indices a 1-d integer array or a boolean mask of length n selects along `axis`,
    in NumPy's order (negative integers counted from the end; repeats kept)."""
    k = np.asarray(k)
    if k.dtype == np.bool_ and k.ndim > 1:
        raise IndexError("axis %d: a %d-d boolean mask selects elements (NumPy's a[a > 0]), which a GlobalArray does "
                         "not do; give a 1-d mask per axis, or mask the NumPy array a.get()" % (axis, k.ndim))
    if k.ndim != 1:
        raise IndexError("axis %d: the index array has %d dimensions; a GlobalArray takes a 1-d integer array or "
                         "boolean mask per axis" % (axis, k.ndim))
    if k.dtype == np.bool_:
        if len(k) != n:
            raise IndexError("axis %d: the boolean mask has length %d but the axis has size %d" % (axis, len(k), n))
        return np.flatnonzero(k).astype(np.int64)
    if k.size == 0:
        return np.zeros(0, np.int64)
    if k.dtype.kind not in "iu":
        raise IndexError("axis %d: arrays used as indices must be of integer or boolean type, not %s"
                         % (axis, k.dtype))
    bad = k[(k < -n) | (k >= n)]
    if bad.size:
        raise IndexError("axis %d: index %d is out of bounds for size %d" % (axis, int(bad[0]), n))
    return (k.astype(np.int64) % n) if n else k.astype(np.int64)


def _advanced_axis_first(key: Any, ndim: int) -> bool:
    """Whether NumPy puts the index array's axis first in the result: when an integer and the
    array are separated by a slice (advanced indices not adjacent), not where the array stands."""
    items = _items(key, ndim)
    advanced = [i for i, k in enumerate(items) if not isinstance(k, slice)]
    if not any(_is_index_array(items[i]) for i in advanced):
        return False
    return advanced[-1] - advanced[0] + 1 != len(advanced)


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
    from ._global import (_plans_and_sections, _prepare, _release_redistribute, _replicated_layout, _root_layout, _to_host,
                          _wrap)

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
    plans, made = _plans_and_sections(ctx, sel_layout, target, a.dtype)
    run_c(ctx, lambda r: (plans[r], parts[r], made[r][0]), _c.gdap_redistribute, placeholders=(None,) * 3)
    whole = _to_host(_view(made[ctx.ranks[0]]))
    out = whole.reshape(tuple(n for n, k in zip(shape, kept) if k))
    if _advanced_axis_first(key, a.ndim):
        array_axis = next(i for i, k in enumerate(_items(key, a.ndim)) if _is_index_array(k))
        out = np.moveaxis(out, sum(kept[:array_axis]), 0)
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

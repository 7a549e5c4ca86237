"""Layouts in one call: the GlobalMap of a block (even or irregular), cyclic, block-cyclic, padded,
periodic, unstructured, replicated or root distribution over an N-d process grid, without writing a
dimension dictionary by hand. The C library makes every map (gdap_map_create_grid,
gdap_map_create_unstructured, gdap_map_create_replicated, gdap_map_create_root) and chooses
balanced grids (gdap_grid_balance); this module only turns Python arguments into its calls.

    from gdap import layout
    rows = layout.block((N, N), 4)              # row blocks over 4 ranks
    cols = layout.block((N, N), (1, 4))         # column blocks
    tiles = layout.block((N, N), nranks=4)      # a balanced 2 x 2 grid of blocks
    bc = layout.block_cyclic((N, N), (2, 2), 256)
    halo = layout.periodic((N + 2, N + 2), (2, 2), halo=1)

`grid` is an int (that many ranks along axis 0, one along the others) or one extent per axis; 0
entries are free and filled from `nranks` (as MPI_Dims_create does). Per-axis options (dist,
block_size, halo, periodic) take one value for every axis or a sequence (or 1-d NumPy array) of one
per axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional, Union

import numpy as np

from . import _gdap_c as _c
from ._args import flag, integer, optional_integer
from ._dims import _indices
from ._map import GlobalMap

Shape = Union[int, Sequence[int]]
PerAxis = Union[int, bool, str, Sequence, np.ndarray]

_DIST = {"b": ord(_c.GDAP_DIST_BLOCK), "c": ord(_c.GDAP_DIST_CYCLIC)}  # SWIG gives the char codes as strings


def balance(nranks: int, grid: Shape) -> tuple[int, ...]:
    """The grid shape for `nranks` ranks: `grid` is the number of axes (all free) or one extent per
    axis, 0 where free; free extents are as even as the prime factors of nranks allow, largest first
    (12 over 2 axes: (4, 3)). InvalidArgumentError if the fixed extents do not divide nranks."""
    shape = (0,) * integer(grid, "grid") if _one(grid) else _ints(grid, "grid")
    return _c.gdap_grid_balance(shape, integer(nranks, "nranks"))


def _shape(shape: Shape) -> tuple[int, ...]:
    return (integer(shape, "shape"),) if _one(shape) else _ints(shape, "shape")


def _one(value: object) -> bool:
    """Whether a shape or grid argument is one number (an int, or a bool that integer() refuses)."""
    return isinstance(value, (int, np.integer, np.bool_))


def _ints(values: Any, name: str) -> tuple[int, ...]:
    return tuple(integer(v, "%s[%d]" % (name, i)) for i, v in enumerate(values))


def _grid(grid: Optional[Shape], ndim: int, nranks: Optional[int]) -> tuple[int, ...]:
    if grid is None:
        if nranks is None:
            raise TypeError("give grid (ranks per axis) or nranks (a balanced grid over every axis)")
        return balance(nranks, ndim)
    if _one(grid):
        grid = (integer(grid, "grid"),) + (1,) * (ndim - 1)
    grid = _ints(grid, "grid")
    if len(grid) != ndim:
        raise ValueError("grid %s has %d axes but the shape has %d" % (grid, len(grid), ndim))
    nranks = optional_integer(nranks, "nranks")
    if 0 in grid:
        if nranks is None:
            raise TypeError("grid %s has free (0) axes: give nranks" % (grid,))
        return balance(nranks, grid)
    if nranks is not None and int(np.prod(grid)) != nranks:
        raise ValueError("grid %s has %d ranks, not nranks %d" % (grid, int(np.prod(grid)), nranks))
    return grid


def _per_axis(value: PerAxis, ndim: int, name: str) -> list:
    """One value per axis: `value` repeated, or its entries when it is a sequence or a NumPy array
    of 1 or more dimensions (np.array([True, False]) is one flag per axis)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)) or \
            (isinstance(value, np.ndarray) and value.ndim == 0):
        return [value] * ndim
    if len(value) != ndim:
        raise ValueError("%s has %d values but the shape has %d axes" % (name, len(value), ndim))
    return list(value)


def grid(shape: Shape, grid: Optional[Shape] = None, *, nranks: Optional[int] = None, dist: PerAxis = "b",
         block_size: PerAxis = 1, lengths: Optional[Sequence] = None, halo: PerAxis = 0,
         periodic: PerAxis = False) -> GlobalMap:
    """The general form (gdap_map_create_grid): each axis 'b' (even blocks, or irregular ones of
    `lengths[axis]` cells, with a `halo` and `periodic` boundary padding) or 'c' (cyclic, or
    block-cyclic of `block_size`). `lengths` is None or one entry per axis (None or a sequence of
    one length per grid coordinate). Errors name the axis and the value (InvalidArgumentError)."""
    shape = _shape(shape)
    ndim = len(shape)
    if lengths is not None and grid is None:
        grid = tuple(1 if ls is None else len(ls) for ls in lengths)
    g = _grid(grid, ndim, nranks)
    dists = _per_axis(dist, ndim, "dist")
    sizes, halos, wraps = (_per_axis(block_size, ndim, "block_size"), _per_axis(halo, ndim, "halo"),
                           _per_axis(periodic, ndim, "periodic"))
    lens: list = [None] * ndim if lengths is None else _per_axis(list(lengths), ndim, "lengths")
    axes = []
    for i in range(ndim):
        if dists[i] not in _DIST:
            raise ValueError("axis %d: dist %r is not 'b' (block) or 'c' (cyclic)" % (i, dists[i]))
        ls = None if lens[i] is None else list(_ints(lens[i], "lengths[%d]" % i))
        axes.append((_DIST[dists[i]], shape[i], g[i], integer(sizes[i], "block_size[%d]" % i), ls,
                     integer(halos[i], "halo[%d]" % i), flag(wraps[i], "periodic[%d]" % i)))
    return GlobalMap._made(_c.gdap_map_create_grid(axes))


_general = grid  # the functions below take a parameter named grid


def block(shape: Shape, grid: Optional[Shape] = None, *, nranks: Optional[int] = None, halo: PerAxis = 0,
          periodic: PerAxis = False) -> GlobalMap:
    """Even blocks (ceil(n / P) cells, the last ones shorter or empty, as cupyx and DTensor split)."""
    return _general(shape, grid, nranks=nranks, halo=halo, periodic=periodic)


def irregular(shape: Shape, lengths: Sequence, *, halo: PerAxis = 0, periodic: PerAxis = False) -> GlobalMap:
    """Blocks of the given lengths: lengths[axis] is None (the axis is not divided) or one owned
    length per grid coordinate, summing to the axis's size."""
    return _general(shape, lengths=lengths, halo=halo, periodic=periodic)


def cyclic(shape: Shape, grid: Optional[Shape] = None, *, nranks: Optional[int] = None) -> GlobalMap:
    """Indices dealt round-robin, one at a time, along every axis of the grid."""
    return _general(shape, grid, nranks=nranks, dist="c")


def block_cyclic(shape: Shape, grid: Optional[Shape] = None, block_size: PerAxis = 1, *,
                 nranks: Optional[int] = None) -> GlobalMap:
    """Blocks of `block_size` dealt round-robin (ScaLAPACK's 2-d block-cyclic on a 2-d grid)."""
    return _general(shape, grid, nranks=nranks, dist="c", block_size=block_size)


def padded(shape: Shape, grid: Optional[Shape] = None, halo: PerAxis = 1, *, nranks: Optional[int] = None,
           periodic: PerAxis = False) -> GlobalMap:
    """Even blocks whose sections reach `halo` cells into each neighbour's block (communication
    padding, filled by halo_exchange)."""
    return _general(shape, grid, nranks=nranks, halo=halo, periodic=periodic)


def periodic(shape: Shape, grid: Optional[Shape] = None, halo: PerAxis = 1, *,
             nranks: Optional[int] = None) -> GlobalMap:
    """Padded blocks on a periodic domain: along every axis the edge blocks also hold `halo` cells
    of boundary padding (part of the shape: n interior cells and halo h make n + 2h, n >= h), which
    halo_exchange fills from the opposite edge."""
    return _general(shape, grid, nranks=nranks, halo=halo, periodic=True)


def unstructured(shape: Shape, indices: Sequence, *, one_to_one: Optional[bool] = None) -> GlobalMap:
    """Rows (axis 0) held in any order by any rank: indices[r] lists rank r's row indices, in its
    local order, or is its one row index (integers: floats and strings are refused, as in a
    dim_data's 'indices'); the other axes are whole. one_to_one None leaves the key out (replicas
    allowed)."""
    shape = _shape(shape)
    rows = [_indices(_one_row_as_1d(ix), "layout.unstructured rank %d" % r) for r, ix in enumerate(indices)]
    flat = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    one = -1 if one_to_one is None else int(flag(one_to_one, "one_to_one"))
    return GlobalMap._made(_c.gdap_map_create_unstructured(len(rows), len(shape), shape, [len(r) for r in rows],
                                                           flat, one))


def _one_row_as_1d(rows: Any) -> Any:
    """A rank's indices, one scalar or 0-d array (layout.unstructured(2, [0, 1]): one row each) as
    a 1-d array; anything iterable (a string too, which _indices refuses by name) as it is."""
    if isinstance(rows, np.ndarray):
        return rows.reshape(1) if rows.ndim == 0 else rows
    return rows if hasattr(rows, "__iter__") else [rows]


def replicated(shape: Shape, nranks: int) -> GlobalMap:
    """The whole array on every one of `nranks` ranks (an allgather's result)."""
    return GlobalMap.replicated(nranks, _shape(shape))


def root(shape: Shape, nranks: int, root: int = 0) -> GlobalMap:
    """The whole array on rank `root` of `nranks`, nothing elsewhere (a gather's result)."""
    return GlobalMap.root(nranks, _shape(shape), root)


__all__ = ["balance", "grid", "block", "irregular", "cyclic", "block_cyclic", "padded", "periodic", "unstructured",
           "replicated", "root"]

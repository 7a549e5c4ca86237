"""Cumulative sums and products of a GlobalArray (a.cumsum, a.cumprod, np.cumsum, np.cumprod), never
gathered.

Along an axis that every rank holds in order (a block without padding, or the whole axis in global
order), each rank scans its own cells; the ranks' totals (the last slice of each scan: one slice per
rank, the array's surface, not its volume) are shared in one collective (SPMD: an all-reduce in
which each rank fills its own slot with its totals' bytes; a single controller reads them in place),
and each rank folds the totals of the blocks before its own along the axis (an exclusive scan, in
the order of the blocks) into its first slice and scans again. The other axes keep any distribution.
An axis held cyclically, unstructured or padded is redistributed to blocks over the same grid first
and the result moved back (two redistributions). axis=None scans a.ravel() (a view or a
redistribution to flat blocks: _reshape), as NumPy flattens.

Integers (and bool) are exact: NumPy's accumulator dtype, wrapping as NumPy's. Floats are added in a
different order than NumPy's one running sum (each block from the sum of the blocks before it), so
they agree with NumPy to rounding, exactly where every partial sum is exact (integer values).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ._errors import InvalidArgumentError
from ._map import GlobalMap, grid_coords_to_rank, grid_rank_to_coords

if TYPE_CHECKING:
    from ._global import GlobalArray

_NUMPY: dict[str, Any] = {"sum": np.cumsum, "prod": np.cumprod}


def result_dtype(op: str, dtype: np.dtype, wanted: Any) -> np.dtype:
    """NumPy's result dtype of np.cum<op>(x of `dtype`, dtype=wanted): int8 and bool accumulate in
    the platform integer, unsigned in the platform unsigned, as NumPy's."""
    return _NUMPY[op](np.zeros(1, dtype), dtype=None if wanted is None else np.dtype(wanted)).dtype


def cumulative(a: GlobalArray, op: str, axis: Any, dtype: Any) -> GlobalArray:
    """Collective: np.cum<op>(a, axis, dtype) as a GlobalArray (axis None: 1-d, a's flattening's
    layout; an int: a's layout). The arguments are agreed first in SPMD mode."""
    from ._global import GlobalArray
    from ._agree import Call, scan_values
    from ._reshape import _axis

    result = np.dtype(np.int8)  # check() sets it

    def check() -> tuple[Call, bool]:
        nonlocal result
        result = result_dtype(op, a.dtype, dtype)
        at = None if axis is None else _axis(axis, a.ndim, "cum" + op)
        return ("cum" + op, scan_values(at, result), "C", None), True

    call, _ = a._agreed_call(check)  # SPMD: every rank's axis and dtype agreed in one all-reduce
    ax: Optional[int] = None if call[1][0] < 0 else call[1][0]
    src = a.settled()
    if ax is None:
        src, ax = src.ravel(), 0
    if src.size == 0:
        return GlobalArray._new_in(src.context, src.layout, result, zero=True)
    blocks = _blocked_layout(src.layout, ax)
    if blocks is None:
        return _scanned(src, op, ax, result)
    return _scanned(src.reshard(blocks), op, ax, result).reshard(src.layout)


def _in_order(d: dict) -> bool:
    """Whether a rank's cells along an axis are one run in global order that no padding interrupts:
    a block, or the whole axis in order."""
    return (d["dist_type"] == "b" and not any(d.get("padding", ()))) or _whole(d)


def _whole(d: dict) -> bool:
    """Whether a rank holds the whole axis in global order (a replicated layout's unstructured axis
    lists every index in order on every rank)."""
    if d["dist_type"] == "u":
        return np.array_equal(d["indices"], np.arange(d["size"]))
    if d["dist_type"] == "c":
        return d["proc_grid_size"] == 1
    return d["start"] == 0 and d["stop"] == d["size"] and not any(d.get("padding", ()))


@functools.lru_cache(maxsize=64)
def _blocked_layout(layout: GlobalMap, axis: int) -> Optional[GlobalMap]:
    """`layout` with `axis` held in even blocks over the same grid extent, the other axes as they are;
    None where every rank holds it in order already."""
    ranks = [layout.dim_data(r) for r in range(layout.nranks)]
    if all(_in_order(dims[axis]) for dims in ranks):
        return None

    def block(d: dict) -> dict:
        n, g, c = d["size"], d["proc_grid_size"], d["proc_grid_rank"]
        step = -(-n // g)
        return dict(dist_type="b", size=n, proc_grid_size=g, proc_grid_rank=c, start=min(c * step, n),
                    stop=min((c + 1) * step, n))

    return GlobalMap([tuple(block(d) if k == axis else d for k, d in enumerate(dims)) for dims in ranks])


def _scan(xp: Any, cells: Any, op: str, axis: int, result: np.dtype) -> Any:
    return (xp.cumsum if op == "sum" else xp.cumprod)(cells, axis=axis, dtype=result)


def _xp(view: Any) -> Any:
    if hasattr(view, "__cuda_array_interface__"):
        import cupy
        return cupy
    return np


def _first(axis: int, at: int) -> tuple:
    return (slice(None),) * axis + (at,)


def _scanned(src: GlobalArray, op: str, axis: int, result: np.dtype) -> GlobalArray:
    """The scan of `src` along `axis`, which every rank holds in order (see the module's text)."""
    from ._global import GlobalArray, _device_scope, _owned_cells, _to_device, _wrap, _zeros
    ctx, layout = src.context, src.layout
    owned = {r: _owned_cells(layout, r) for r in ctx.ranks}

    def local_scans() -> dict:
        scans = {}
        for r in ctx.ranks:
            with _device_scope(ctx.device(r)):
                cells = src.local_view(r)[owned[r]]
                scans[r] = _scan(_xp(cells), cells, op, axis, result)
        return scans

    distributed = not all(_whole(layout.dim_data(q)[axis]) for q in range(layout.nranks))  # else: blocks
    scans = _told_totals(ctx, local_scans) if distributed else local_scans()
    if distributed:
        totals = _shared_totals(ctx, layout, axis, {r: _totals(scans[r], op, axis, result) for r in ctx.ranks},
                                result)
        for r in ctx.ranks:
            offset = _exclusive(layout, axis, r, totals, op)
            if offset is None or scans[r].shape[axis] == 0:
                continue
            with _device_scope(ctx.device(r)):
                cells = src.local_view(r)[owned[r]]
                xp = _xp(cells)
                work = cells.astype(result, copy=True)
                head = _first(axis, 0)
                shift = _to_device(offset, ctx.device(r))
                work[head] = shift + work[head] if op == "sum" else shift * work[head]
                scans[r] = _scan(xp, work, op, axis, result)
    natives, sections = {}, {}
    for r in ctx.ranks:
        device = ctx.device(r)
        with _device_scope(device):
            if owned[r] is Ellipsis:
                out = scans[r]
            else:
                out = _zeros(device, src.local_view(r).shape, result)
                out[owned[r]] = scans[r]
        natives[r] = out
        sections[r] = _wrap(ctx, layout, r, out, device)
    return GlobalArray(ctx, layout, result, sections, natives)


def _totals(scan: Any, op: str, axis: int, result: np.dtype) -> np.ndarray:
    """A rank's totals on the host: its scan's last slice along `axis` (the identity where its block
    is empty)."""
    from ._global import _to_host
    if scan.shape[axis] == 0:
        shape = scan.shape[:axis] + scan.shape[axis + 1:]
        return np.full(shape, 0 if op == "sum" else 1, result)
    last = _to_host(scan[(slice(None),) * axis + (slice(scan.shape[axis] - 1, None),)])
    return last.reshape(last.shape[:axis] + last.shape[axis + 1:]).copy()  # C order (ascontiguousarray makes 0-d 1-d)


def _told_totals(ctx: Any, step: Any) -> Any:
    """step()'s result; in SPMD mode a rank whose step raises still makes the all-reduce of the totals
    (after Comm.fail_next), so the others raise RemoteError naming it at once."""
    from ._agree import release_agreement
    from ._comm import told
    if not ctx.spmd:
        return step()
    return told(ctx.comm(ctx.ranks[0]), step, release_agreement)


def _other_shape(layout: GlobalMap, rank: int, axis: int) -> tuple[int, ...]:
    """The shape of rank `rank`'s totals: its owned count along every axis but `axis`."""
    return tuple(sum(n for _, n, _ in layout.runs(rank, k)) for k in range(layout.ndim) if k != axis)


def _shared_totals(ctx: Any, layout: GlobalMap, axis: int, mine: dict, result: np.dtype) -> dict:
    """Every rank's totals (host arrays): a single controller holds them all; SPMD ranks all-reduce a
    buffer of int64 slots, one a rank, each filled with its totals' bytes by its rank (others zero: the
    sum copies every bit)."""
    if not ctx.spmd:
        return mine
    from ._agree import _allreduce
    rank = ctx.ranks[0]
    shapes = [_other_shape(layout, q, axis) for q in range(layout.nranks)]
    slot = max(-(-math.prod(s) * result.itemsize // 8) for s in shapes)
    table = np.zeros((layout.nranks, max(slot, 1)), np.int64)
    raw = mine[rank].tobytes()
    table[rank].view(np.uint8)[:len(raw)] = np.frombuffer(raw, np.uint8)
    summed = _allreduce(ctx.comm(rank), table.reshape(-1), "sum", ctx.device(rank))
    if summed is None:
        raise InvalidArgumentError("cumsum / cumprod over NCCL needs CuPy to share the ranks' totals")
    rows = summed.reshape(table.shape)
    return {q: rows[q].view(np.uint8)[:math.prod(s) * result.itemsize].view(result).reshape(s)
            for q, s in enumerate(shapes)}


def _exclusive(layout: GlobalMap, axis: int, rank: int, totals: dict, op: str) -> Optional[np.ndarray]:
    """The fold of the totals of the blocks before rank `rank`'s along `axis`, in their order: those of
    the ranks at its grid coordinate on every other axis, which the map gives the same cells there
    (their dictionaries may differ in boundary padding, which moves no cell); None for the first
    block that holds cells. Empty blocks are left out: their total, +0.0, would turn a leading -0.0
    into +0.0 (NumPy's cumsum keeps it)."""
    grid = tuple(layout.grid_shape)
    coords = list(grid_rank_to_coords(rank, grid))
    offset = None
    for before in range(coords[axis]):
        coords[axis] = before
        q = grid_coords_to_rank(coords, grid)
        if not layout.runs(q, axis):
            continue
        t = totals[q]
        offset = t if offset is None else (offset + t if op == "sum" else offset * t)
    return offset

"""Writing elements of a GlobalArray in place: a[0, :] = 0, a[1:-1, 1:-1] = b, a[mask] = 0.

Each rank writes the selected cells it owns (GlobalMap.runs: never the communication padding,
which stay as they were until halo_exchange(); every replica of a replicated layout writes its
copy), so nothing is gathered. The key is checked whole before anything is written, on every
rank: in SPMD mode every rank should pass the same key and value (as every collective call takes
the same arguments); a refusal on some ranks only (a key, a value, a read-only section) is agreed in
one barrier before any rank writes, so every rank raises and nothing is written. A GlobalArray value
is moved into place with one gdap redistribution into the selection's cells (collective; a rank
whose key is refused tells the others there); for a[mask] = b, into a 1-d unstructured layout of
the True cells' places in C order, each rank holding those of its own True cells.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import _gdap_c as _c
from ._context import run_c
from ._errors import InvalidArgumentError
from ._map import GlobalMap, grid_rank_to_coords
from ._select import _owned_selection, normalize, selection_layout

if TYPE_CHECKING:
    from ._global import GlobalArray


def assign(a: GlobalArray, key: Any, value: Any) -> None:
    """a[key] = value (GlobalArray.__setitem__)."""
    from ._global import GlobalArray
    if a.pending is not None:
        raise InvalidArgumentError("a[...] = v: a holds a pending reduction ('%s'): its sections hold partial values, "
                                   "which an element cannot be written into; settle it first, a = a.settled(), then "
                                   "assign" % a.pending)
    if isinstance(key, GlobalArray):
        _assign_masked(a, key, value)
    elif isinstance(value, GlobalArray):
        _assign_global(a, key, value)
    else:
        _assign_host(a, key, value)


def _host_value(a: GlobalArray, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """value in a's dtype (NumPy's assignment casting) broadcast to the selection's `shape` (a view,
    no copy per element), its leading length-1 axes beyond the selection's dropped first, as
    NumPy's assignment does (a[1] = np.ones((1, 4))): raises before anything is written."""
    held = np.empty(np.shape(value), a.dtype)
    held[...] = value
    extra = held.ndim - len(shape)
    if extra > 0 and all(n == 1 for n in held.shape[:extra]):
        held = held.reshape(held.shape[extra:])
    try:
        return np.broadcast_to(held, shape)
    except ValueError:
        raise ValueError("a[...] = v: v of shape %s cannot be broadcast to the selection's shape %s"
                         % (held.shape, shape)) from None


def _assign_host(a: GlobalArray, key: Any, value: Any) -> None:
    """a[key] = v for a host v: every rank's key checked and its owned part of v picked out, then
    (SPMD: agreed in one barrier, a key or value refused on one rank only is every rank's refusal,
    nothing written anywhere) written."""
    from ._global import _agreed_step, _device_scope, _to_device

    def parts() -> list:
        selected, kept = normalize(key, a.shape)
        whole = tuple(len(s) for s in selected)
        host = _host_value(a, value, tuple(n for n, k in zip(whole, kept) if k)).reshape(whole)
        a._check_writable("a[...] = v")
        out = []
        for r in a.context.ranks:
            where = [_owned_selection(a.layout, r, axis, s) for axis, s in enumerate(selected)]
            if any(len(pos) == 0 for pos, _ in where):
                continue
            out.append((r, [loc for _, loc in where], np.ascontiguousarray(host[np.ix_(*[pos for pos, _ in where])])))
        return out

    ctx = a.context
    for r, local, part in _agreed_step(ctx, parts):
        device = ctx.device(r)
        with _device_scope(device):
            _write(a.local_view(r), local, _to_device(part, device))


def _write(view: Any, local: list, part: Any) -> None:
    """view at the outer product of per-axis local indices = part (NumPy or CuPy, as view). On a
    device, with view's device current: CuPy runs the copy on the current device's stream, which
    waits neither for a gdap move into `part` on view's device nor for an upload there."""
    if isinstance(view, np.ndarray):
        view[np.ix_(*local)] = part
        return
    import cupy
    with view.device:
        view[cupy.ix_(*[cupy.asarray(i) for i in local])] = part


def _assign_masked(a: GlobalArray, mask: GlobalArray, value: Any) -> None:
    """a[m] = v: the owned cells where the mask (a's shape and layout) is True, v a scalar, a 1-d host
    array of one value per True cell (or of one value), or a GlobalArray of either kind, in C order
    of the whole array."""
    from ._global import GlobalArray, _scalar
    from ._ufunc import settled_partners
    given = isinstance(value, GlobalArray)

    def check() -> None:
        if mask.dtype != np.bool_:
            raise IndexError("a[m] = v: m is a GlobalArray of %s; a GlobalArray key must be a mask of bool of a's "
                             "shape and layout (a[m > 0] = v)" % mask.dtype)
        if given and value.context is not a.context:
            raise InvalidArgumentError("a[m] = b: a and b are on different controllers or communicators")
        ndim = value.ndim if given else 0 if _scalar(value) else np.ndim(value)
        if ndim > 1:
            raise TypeError("NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, input has "
                            "%d dimensions" % ndim)
        a._check_partner(mask, "a and its mask")

    told = mask.pending is not None

    def held() -> Any:
        if not told:
            check()
        if given:
            a._check_writable("a[m] = b")
            return value
        one = np.empty(np.shape(value), a.dtype)
        one[...] = value
        a._check_writable("a[m] = v")
        return one

    # SPMD: a pending mask's refusal is told in its reduce-scatter; every other refusal (a value or
    # key refused on one rank only, a read-only section) and a value's length that differs between
    # ranks are agreed before any rank writes.
    if told:
        mask._checked(check, None)
    mask = settled_partners([a, mask])[id(mask)]
    cast = _agreed_value(a.context, held)
    if given:
        cast = _one_value_or_moved(a, mask, cast)
        if isinstance(cast, dict):
            _write_masked(a, mask, lambda r, cells: cast[r])
            return
    if cast.ndim == 0:
        _write_masked(a, mask, lambda r, cells: cast[()])
        return
    count = _checked_count(cast.size, mask)
    if cast.size == 1:
        _write_masked(a, mask, lambda r, cells: cast[0])
        return
    order = _c_order_positions(a, mask)
    _write_masked(a, mask, lambda r, cells: cast[_host(cells(order)) - 1])


def _checked_count(size: int, mask: GlobalArray) -> int:
    """Collective: the mask's True cells, which a value of `size` elements must match (or be one)."""
    count = int(mask.sum())
    if size not in (1, count):
        raise ValueError("NumPy boolean array indexing assignment cannot assign %d input values to the %d output "
                         "values where the mask is true" % (size, count))
    return count


def _one_value_or_moved(a: GlobalArray, mask: GlobalArray, value: GlobalArray) -> Any:
    """Collective, for a[m] = b with b a GlobalArray: b's one element on the host (0-d NumPy, of a's
    dtype: the caller broadcasts it) where b has one, else {rank: b's values for that rank's True cells,
    in its sections' C order}, b's elements moved to their cells' owners by one redistribution into a
    1-d unstructured layout of those cells' C-order positions (never gathered)."""
    from ._global import _plans_and_sections, _replicated_layout, _view_of
    ctx = a.context
    count = _checked_count(value.size, mask)
    src = value.settled()
    src = src if src.dtype == a.dtype else src.astype(a.dtype)
    if value.size == 1:  # every rank gets the one element (an allgather of one)
        one = src.reshard(_replicated_layout(src.shape, ctx.nranks))
        return np.asarray(_host(one.local_view(ctx.ranks[0]))).reshape(())
    if count == 0:  # nothing to move (an empty value, an all-False mask)
        return {r: np.zeros(0, a.dtype) for r in ctx.ranks}
    positions = _true_cell_positions(a, mask)
    target = _positions_layout(ctx, count, positions)
    plans, made = _plans_and_sections(ctx, src.layout, target, a.dtype)
    run_c(ctx, lambda r: (plans[r], src.sections[r], made[r][0]), _c.gdap_redistribute, placeholders=(None,) * 3)
    return {r: native if native is not None else _view_of(local) for r, (local, native) in made.items()}


def _true_cell_positions(a: GlobalArray, mask: GlobalArray) -> dict[int, np.ndarray]:
    """Collective (the distributed cumsum): per held rank, the C-order positions among all True cells
    of the True cells it owns, in its section's C order (as _write_masked picks them)."""
    from ._global import _device_scope, _owned_cells
    order = _c_order_positions(a, mask)
    out = {}
    for r in a.context.ranks:
        owned = _owned_cells(a.layout, r)
        # The rank's device current: CuPy's indexing runs on the current device's stream, which does not
        # wait for another device's queued work (the argmax race of the fifteenth session's call A).
        with _device_scope(a.context.device(r)):
            out[r] = _host(order.local_view(r)[owned][mask.local_view(r)[owned]]).astype(np.int64) - 1
    return out


def _positions_layout(ctx: Any, count: int, positions: dict[int, np.ndarray]) -> GlobalMap:
    """The 1-d layout of `count` cells where rank r holds positions[r], in that order (unstructured,
    one grid coordinate a rank; replicas of a replicated layout hold the same positions): collective
    in SPMD mode, where each rank knows its own."""
    def dims(r: int) -> tuple[dict[str, Any], ...]:
        return (dict(dist_type="u", size=count, proc_grid_size=ctx.nranks, proc_grid_rank=r, indices=positions[r]),)

    if ctx.spmd:
        rank = ctx.ranks[0]
        return GlobalMap.collective(ctx.comm(rank), dims(rank))
    return GlobalMap([dims(r) for r in range(ctx.nranks)])


def _agreed_value(ctx: Any, held: Any) -> Any:
    """held()'s value (a NumPy array or a GlobalArray), every rank's checks agreed before anything is
    written; in SPMD mode the values' lengths too (-1: a scalar): ranks that pass different ones all
    raise InvalidArgumentError."""
    if not ctx.spmd:
        return held()
    from ._agree import _allreduce, release_agreement
    from ._comm import told
    comm = ctx.comm(ctx.ranks[0])
    out = told(comm, held, release_agreement)
    n = -1 if out.ndim == 0 else out.size
    both = _allreduce(comm, np.array([n, -n], np.int64), "max", ctx.device(ctx.ranks[0]))
    if both is not None and both[0] != -both[1]:
        raise InvalidArgumentError("a[m] = v: the ranks pass values of different lengths (from %d to %d; -1 is a "
                                   "scalar): every rank must pass the same value" % (-both[1], both[0]))
    return out


def _host(x: Any) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else x.get()


def _c_order_positions(a: GlobalArray, mask: GlobalArray) -> GlobalArray:
    """Collective: how many True cells come up to each cell in C order of the whole array (its index
    among them plus one), in a's layout: the distributed cumsum of the flattened mask (exact: int64),
    reshaped and moved back."""
    from ._global import same_layout
    order = mask.cumsum().reshape(a.shape)
    return order if same_layout(order.layout, a.layout) else order.reshard(a.layout)


def _write_masked(a: GlobalArray, mask: GlobalArray, values: Any) -> None:
    """a's owned cells where mask holds = values(r, cells) on each held rank r: cells(x) picks those cells
    of rank r's section of an array x of a's layout."""
    from ._global import _device_scope, _owned_cells, _to_device
    ctx = a.context
    for r in ctx.ranks:
        owned = _owned_cells(a.layout, r)
        device = ctx.device(r)
        with _device_scope(device):
            where = mask.local_view(r)[owned]
            picked = values(r, lambda x: x.local_view(r)[owned][where])
            if device != "cpu" and isinstance(picked, (np.ndarray, np.generic)):
                picked = _to_device(np.asarray(picked), device)
            a.local_view(r)[owned][where] = picked


def _assign_global(a: GlobalArray, key: Any, value: GlobalArray) -> None:
    """a[key] = b: b redistributed into the selection's cells, laid out where their owners in a
    hold them (_select.selection_layout), then each rank writes its part."""
    from ._global import _plans_and_sections, _prepare, _release_redistribute, _release_reduce_scatter, _view_of
    ctx = a.context

    def check(r: int) -> list:
        selected, kept = normalize(key, a.shape)
        shape = tuple(len(s) for s, k in zip(selected, kept) if k)
        if value.context is not a.context:
            raise InvalidArgumentError("a[...] = b: a and b are on different controllers or communicators")
        if not all(kept):
            raise TypeError("a[...] = b with b a GlobalArray and an integer in the key (%r): a GlobalArray value "
                            "fills slices only; write a[i:i+1, ...] = b with b of that shape, or pass a NumPy value "
                            "(b.get(), collective)" % (key,))
        if value.shape != shape:
            raise ValueError("a[...] = b: b has shape %s but the selection has shape %s (a GlobalArray value is not "
                             "broadcast)" % (value.shape, shape))
        a._check_writable("a[...] = b")
        return selected

    # A key refused on one rank only (SPMD): the others are told in the collective call that comes
    # next, a pending value's reduce-scatter or else the redistribution below.
    release = _release_reduce_scatter if value.pending is not None else _release_redistribute
    selected = _prepare(ctx, check, release)[ctx.ranks[0]]
    src = value.settled()
    src = src if src.dtype == a.dtype else src.astype(a.dtype)
    target, local = selection_layout(a.layout, selected)
    plans, made = _plans_and_sections(ctx, src.layout, target, a.dtype)
    run_c(ctx, lambda r: (plans[r], src.sections[r], made[r][0]), _c.gdap_redistribute, placeholders=(None,) * 3)
    grid = tuple(a.layout.grid_shape)
    for r in ctx.ranks:
        coords = grid_rank_to_coords(r, grid)
        index = [local[i][c] for i, c in enumerate(coords)]
        if any(len(i) == 0 for i in index):
            continue
        local_made, native = made[r]
        part = native if native is not None else _view_of(local_made)
        _write(a.local_view(r), index, part.reshape(tuple(len(i) for i in index)))

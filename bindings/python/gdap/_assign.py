"""Writing elements of a GlobalArray in place: a[0, :] = 0, a[1:-1, 1:-1] = b, a[mask] = 0.

Each rank writes the selected cells it owns (GlobalMap.runs: never the communication padding,
which stay as they were until halo_exchange(); every replica of a replicated layout writes its
copy), so nothing is gathered. The key is checked whole before anything is written, on every
rank: in SPMD mode every rank should pass the same key and value (as every collective call takes
the same arguments); a refusal on some ranks only (a key, a value, a read-only section) is agreed in
one barrier before any rank writes, so every rank raises and nothing is written. A GlobalArray value
is moved into place with one gdap redistribution into the selection's cells (collective; a rank
whose key is refused tells the others there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import _gdap_c as _c
from ._context import run_c
from ._errors import InvalidArgumentError
from ._map import grid_rank_to_coords
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
    """a[mask] = v: the owned cells where the mask (a's shape and layout) is True, v a scalar or a 1-d
    host array of one value per True cell (or of one value), in C order of the whole array."""
    from ._global import GlobalArray, _scalar
    from ._ufunc import settled_partners

    def check() -> None:
        if mask.dtype != np.bool_:
            raise IndexError("a[m] = v: m is a GlobalArray of %s; a GlobalArray key must be a mask of bool of a's "
                             "shape and layout (a[m > 0] = v)" % mask.dtype)
        if isinstance(value, GlobalArray):
            raise TypeError("a[m] = v with m a GlobalArray mask takes a scalar or a 1-d host array v, not a "
                            "GlobalArray: its elements would have to move to the True cells' owners in C order; for "
                            "a GlobalArray b of a's layout write np.positive(b, out=a, where=m), or pass b.get() "
                            "(collective)")
        if not _scalar(value) and np.ndim(value) > 1:
            raise TypeError("NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, input has "
                            "%d dimensions" % np.ndim(value))
        a._check_partner(mask, "a and its mask")

    told = mask.pending is not None

    def held() -> np.ndarray:
        if not told:
            check()
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
    if cast.ndim == 0:
        _write_masked(a, mask, lambda cells: cast[()])
        return
    count = int(mask.sum())
    if cast.size not in (1, count):
        raise ValueError("NumPy boolean array indexing assignment cannot assign %d input values to the %d output "
                         "values where the mask is true" % (cast.size, count))
    if cast.size == 1:
        _write_masked(a, mask, lambda cells: cast[0])
        return
    order = _c_order_positions(a, mask)
    _write_masked(a, mask, lambda cells: cast[_host(cells(order)) - 1])


def _agreed_value(ctx: Any, held: Any) -> np.ndarray:
    """held()'s value, every rank's checks agreed before anything is written; in SPMD mode the values'
    lengths too (-1: a scalar): ranks that pass different ones all raise InvalidArgumentError."""
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
    """a's owned cells where mask holds = values(cells): cells(x) picks those cells of rank r's section
    of an array x of a's layout."""
    from ._global import _device_scope, _owned_cells, _to_device
    ctx = a.context
    for r in ctx.ranks:
        owned = _owned_cells(a.layout, r)
        device = ctx.device(r)
        with _device_scope(device):
            where = mask.local_view(r)[owned]
            picked = values(lambda x: x.local_view(r)[owned][where])
            if device != "cpu":
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

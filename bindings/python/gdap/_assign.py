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
    """a[mask] = scalar: the owned cells where the mask (a's shape and layout) is True."""
    from ._global import _agreed_step, _device_scope, _owned_cells, _scalar
    from ._ufunc import settled_partners
    def check() -> None:
        if mask.dtype != np.bool_:
            raise IndexError("a[m] = v: m is a GlobalArray of %s; a GlobalArray key must be a mask of bool of a's "
                             "shape and layout (a[m > 0] = v)" % mask.dtype)
        if not _scalar(value):
            raise TypeError("a[m] = v with m a GlobalArray mask takes a scalar v, not %s: NumPy would fill the masked "
                            "cells in order, which needs their count on every rank; for a GlobalArray b of a's layout "
                            "write np.positive(b, out=a, where=m)" % type(value).__name__)
        a._check_partner(mask, "a and its mask")

    told = mask.pending is not None

    def held() -> np.ndarray:
        if not told:
            check()
        one = np.empty((), a.dtype)
        one[()] = value
        a._check_writable("a[m] = v")
        return one

    # SPMD: a pending mask's refusal is told in its reduce-scatter; every other refusal (a value or
    # key refused on one rank only, a read-only section) is agreed before any rank writes.
    if told:
        mask._checked(check, None)
    mask = settled_partners([a, mask])[id(mask)]
    ctx = a.context
    cast = _agreed_step(ctx, held)
    for r in ctx.ranks:
        owned = _owned_cells(a.layout, r)
        with _device_scope(ctx.device(r)):
            view = a.local_view(r)[owned]
            view[mask.local_view(r)[owned]] = cast[()]


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

"""The reductions GlobalArray adds to sum/prod/min/max/mean: var, std, argmin, argmax, any, all, and
the dtypes gdap's C reductions do not take (bool, int16/uint16, float16, bfloat16, complex), all without
gathering the array. What crosses the ranks, per method (docs/python.md, "Reductions"):

- var / std: two compensated C reductions (gdap.reduce_axes): the mean, then the sum of squared
  deviations from it; in between the mean (one value per result element) is allgathered so that
  each rank can subtract it from its own cells.
- argmin / argmax: each rank's candidate (its first extreme value and that value's global index)
  per result element; the candidates of a result element meet on the rank that holds it in the
  result (one gdap.redistribute for the values, one for the indices), which keeps the one NumPy picks.
- any / all: a C sum of int64 counts (of nonzero, resp. zero elements).
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from ._args import integer
from ._errors import InvalidArgumentError, UnsupportedError

if TYPE_CHECKING:
    from ._global import GlobalArray

# The dtypes gdap's C reductions take (src/reduce/reduction.hpp, reducible).
REDUCIBLE = frozenset(np.dtype(t) for t in (np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64,
                                             np.float32, np.float64))
_RESULT_KINDS = "bool, int8/16/32/64, uint8/16/32/64, float16/32/64, bfloat16 (and complex for sum and mean)"


def is_half(dtype: np.dtype) -> bool:
    """float16 or ml_dtypes' bfloat16 (NumPy kind 'V'): reduced in float32, returned in their own dtype."""
    return dtype == np.float16 or dtype.name == "bfloat16"


# ---- dtypes the C reductions do not take -------------------------------------------------------

def work_dtype(op: str, dtype: np.dtype) -> np.dtype:
    """The dtype gdap's C reduction computes `op` in for a result of `dtype` (NumPy's): `dtype`
    where C takes it; float16 and bfloat16 in float32 (as NumPy adds float16); int16/uint16 in int64/uint64
    (exact for min/max, the same bits modulo 2**16 for sum/prod); bool's min/max in uint8; complex
    sum and mean in `dtype` (reduce_complex splits it). UnsupportedError, naming the dtype and a
    workaround, for the rest."""
    if dtype in REDUCIBLE:
        return dtype
    if is_half(dtype):
        return np.dtype(np.float32)
    if dtype.kind in "iu" and op != "mean":
        return np.dtype(np.int64 if dtype.kind == "i" else np.uint64)
    if dtype.kind == "b" and op in ("min", "max"):
        return np.dtype(np.uint8)
    if dtype.kind == "c" and op in ("sum", "mean"):
        return dtype
    raise UnsupportedError("%s of a %s array: gdap reduces %s; convert first (a.astype(np.float64).%s(), or for "
                           "complex a.real and a.imag separately)" % (op, dtype, _RESULT_KINDS, op))


def as_result(value: Any, dtype: np.dtype) -> Any:
    """A reduction's result (a NumPy scalar or a GlobalArray) converted to `dtype` where it is not."""
    if value.dtype == dtype:
        return value
    return value.astype(dtype) if hasattr(value, "layout") else dtype.type(value)


def reduce_complex(src: GlobalArray, op: str, axes: tuple[int, ...], dtype: np.dtype) -> Any:
    """Collective: the sum or mean of a complex array, its real and imaginary parts reduced apart
    (two C reductions of the real dtype of the same precision)."""
    real = src._local_op(lambda v: v.real)._reduce(op, axes)
    imag = src._local_op(lambda v: v.imag)._reduce(op, axes)
    if not hasattr(real, "layout"):
        return dtype.type(complex(real, imag))
    return real._elementwise(lambda r, owned: _complex_of(real.local_view(r)[owned], imag.local_view(r)[owned],
                                                          dtype))


def _complex_of(real: Any, imag: Any, dtype: np.dtype) -> Any:
    out = real.astype(dtype)
    out.imag = imag
    return out


# ---- var and std ------------------------------------------------------------------------------

def var_dtype(dtype: np.dtype, given: Any) -> np.dtype:
    """NumPy's result dtype of var/std: float64 for bool and integers, the real dtype of a complex
    one, the array's own for floats (bfloat16 included); `given` (a float or complex dtype) where
    given, as NumPy's: a complex `given` gives that complex dtype (an imaginary part of zero)."""
    if given is not None:
        want = np.dtype(given)
        if want.kind not in "fc" and not is_half(want):
            raise UnsupportedError("var/std with dtype=%s: give a float or complex dtype (NumPy's would compute in "
                                   "%s as well, gdap refuses it)" % (want, want))
        return want
    if is_half(dtype):
        return dtype
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype.kind == "c":
        return np.dtype(dtype.char.lower())  # complex64 -> float32, complex128 -> float64
    if dtype.kind != "f":
        raise UnsupportedError("var/std of a %s array: gdap computes them for bool, integer, float and complex "
                               "arrays" % dtype)
    return dtype


def check_ddof(ddof: Any) -> float:
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise InvalidArgumentError("ddof must be a number, not %r" % (ddof,))
    return float(ddof)


def variance(a: GlobalArray, axes: tuple[int, ...], ddof: float, result: np.dtype) -> Any:
    """Collective: the variance of `a` over `axes` (checked), in `result`'s dtype: the mean first,
    then the sum of squared deviations (|x - mean|**2 for complex), both compensated C sums, over
    max(n - ddof, 0) (NumPy's warning where that is not positive)."""
    real = _real_dtype(result)
    src = a.settled()
    work = np.dtype(real.char.upper()) if src.dtype.kind == "c" else real
    src = src if src.dtype == work else src.astype(work)
    mean = src.mean(axis=axes)
    at = _mean_at(src, axes, mean)
    squares = src._elementwise(lambda r, owned: _squared_deviation(src.local_view(r)[owned], at(r)))
    total = squares.sum(axis=axes)
    count = math.prod(a.shape[i] for i in axes) - ddof
    if count <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=4)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = total / real.type(max(count, 0))
    return as_result(var, result)


def _real_dtype(result: np.dtype) -> np.dtype:
    """The real dtype var computes in for a result of `result`: float32 for float16 and bfloat16
    (as NumPy's float16 var), the real dtype of a complex `result` (given as dtype=), else `result`."""
    if is_half(result):
        return np.dtype(np.float32)
    return np.dtype(result.char.lower()) if result.kind == "c" else result


def _squared_deviation(x: Any, mean: Any) -> Any:
    d = x - mean
    if d.dtype.kind == "c":
        return d.real * d.real + d.imag * d.imag
    return d * d


def _mean_at(src: GlobalArray, axes: tuple[int, ...], mean: Any) -> Callable[[int], Any]:
    """mean_at(r): the mean at each of rank r's owned cells, broadcastable against them (a scalar
    for a full reduction; else the allgathered means, one per result element, picked out at the
    global indices of r's cells along the kept axes, a length-1 axis for each reduced axis)."""
    if not hasattr(mean, "layout"):
        return lambda r: mean
    means = mean.allgather()
    from ._global import _to_device

    def mean_at(r: int) -> Any:
        owned = owned_global_indices(src.layout, r)
        kept = [g for i, g in enumerate(owned) if i not in axes]
        picked = means[np.ix_(*kept)] if kept else means
        return _to_device(np.expand_dims(picked, axes), src.context.device(r))

    return mean_at


def owned_global_indices(layout: Any, rank: int) -> list[np.ndarray]:
    """Per axis, the global index of each of rank `rank`'s owned cells, in section order (past
    the section's cells it does not own): from the layout's owned runs (global_start, length,
    local_start), each placed from the first owned local index (a periodic edge rank owns its
    boundary padding: its first owned cell is local 0)."""
    out = []
    for dim, n in enumerate(layout.owned_shape(rank)):
        runs = layout.runs(rank, dim)
        first = min((local for _, _, local in runs), default=0)
        g = np.empty(n, dtype=np.int64)
        for start, length, local in runs:
            g[local - first:local - first + length] = np.arange(start, start + length)
        out.append(g)
    return out


# ---- argmin and argmax ------------------------------------------------------------------------

def arg_axes(a: GlobalArray, op: str, axis: Any) -> tuple[int, ...]:
    """The axes argmin/argmax reduce (None: every axis, their flat index; an int: that axis),
    InvalidArgumentError (a ValueError, as NumPy's) where one has length 0."""
    from ._global import _axes
    if axis is not None and isinstance(axis, (tuple, list)):
        raise TypeError("%s takes axis=None or one int (NumPy's too), not %r" % (op, axis))
    axes = _axes(axis, a.ndim)
    if any(a.shape[i] == 0 for i in axes):
        raise InvalidArgumentError("attempt to get %s of an empty sequence" % op)
    return axes


def arg_extreme(a: GlobalArray, op: str, axes: tuple[int, ...]) -> Any:
    """Collective: argmin/argmax over `axes` (checked: arg_axes): each rank's candidates, their
    meeting on the result's ranks, NumPy's pick among them (first occurrence; a NaN first)."""
    from . import layout as layouts
    from ._global import GlobalArray, _block_layout, _device_scope, _to_device, _to_host
    src = a.settled()
    ctx, nranks = src.context, src.context.nranks
    kept = tuple(n for i, n in enumerate(src.shape) if i not in axes)
    values = GlobalArray._new_in(ctx, layouts.grid((nranks,) + kept, (nranks,) + (1,) * len(kept)), src.dtype)
    indices = GlobalArray._new_in(ctx, values.layout, np.int64)
    for r in ctx.ranks:
        v, i = _candidates(_to_host(src.local_view(r)), src, r, op, axes, kept)
        with _device_scope(ctx.device(r)):  # CuPy's copy on the section's device, after its upload
            values.local_view(r)[...] = _to_device(v[None], ctx.device(r))
            indices.local_view(r)[...] = _to_device(i[None], ctx.device(r))
    result = _block_layout(kept, nranks) if kept else None
    meet = (layouts.block((nranks,) + kept, (1,) + tuple(result.grid_shape)) if result is not None
            else layouts.replicated((nranks,), nranks))
    values, indices = values.reshard(meet), indices.reshard(meet)
    picks = {r: _pick(_to_host(values.local_view(r)), _to_host(indices.local_view(r)), op) for r in ctx.ranks}
    if result is None:
        return np.int64(picks[ctx.ranks[0]])
    out = GlobalArray._new_in(ctx, result, np.int64)
    for r in ctx.ranks:
        with _device_scope(ctx.device(r)):
            out.local_view(r)[...] = _to_device(picks[r], ctx.device(r))
    return out


def _candidates(view: np.ndarray, src: GlobalArray, rank: int, op: str, axes: tuple[int, ...],
                kept: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Rank `rank`'s candidates, one per result element (of shape `kept`): the value NumPy's
    op picks among the rank's own cells and its global index (flat for a full reduction, along the
    axis otherwise); index -1 where the rank owns no cell of that element. The cells are put in
    global order along each axis first, so that NumPy's local pick is the first occurrence."""
    from ._global import _owned_cells
    cells = view[_owned_cells(src.layout, rank)]
    owned = owned_global_indices(src.layout, rank)
    order = [np.argsort(g, kind="stable") for g in owned]
    cells = cells[np.ix_(*order)] if order else cells
    owned = [g[o] for g, o in zip(owned, order)]
    values = np.zeros(kept, cells.dtype)
    indices = np.full(kept, -1, np.int64)
    if cells.size == 0:
        return values, indices
    pick = getattr(np, op)
    if not kept:  # a full reduction: the flat index of the rank's pick
        local = np.unravel_index(pick(cells), cells.shape)
        values[()] = cells[local]
        indices[()] = np.ravel_multi_index(tuple(g[i] for g, i in zip(owned, local)), src.shape) if owned else 0
        return values, indices
    axis = axes[0]
    local = pick(cells, axis=axis)
    where = np.ix_(*[g for i, g in enumerate(owned) if i != axis])
    values[where] = np.take_along_axis(cells, np.expand_dims(local, axis), axis).squeeze(axis)
    indices[where] = owned[axis][local]
    return values, indices


def _pick(values: np.ndarray, indices: np.ndarray, op: str) -> np.ndarray:
    """Per result element (axis 0 holds its candidates, one per rank): the index NumPy's op gives.
    Candidates ordered by index (none, -1, last) and NumPy's pick among them: the first of the
    extreme values, or the first NaN, is the whole array's first. A missing candidate takes the
    value of the first one (it loses the tie to it), so that no filler value is needed."""
    order = np.argsort(np.where(indices < 0, np.iinfo(np.int64).max, indices), axis=0, kind="stable")
    values = np.take_along_axis(values, order, 0)
    indices = np.take_along_axis(indices, order, 0)
    values = np.where(indices < 0, values[:1], values)
    best = getattr(np, op)(values, axis=0)
    return np.take_along_axis(indices, best[None], 0)[0]


# ---- any and all ------------------------------------------------------------------------------

def any_all(a: GlobalArray, op: str, axes: tuple[int, ...]) -> Any:
    """Collective: any (all) over `axes`: a C sum of int64 counts of the nonzero (zero) elements,
    then whether it is positive (zero). NaN counts as nonzero, as in NumPy."""
    src = a.settled()
    test = (lambda x: x != 0) if op == "any" else (lambda x: x == 0)
    counts = src._elementwise(lambda r, owned: test(src.local_view(r)[owned])).sum(axis=axes)
    decide = (lambda c: c > 0) if op == "any" else (lambda c: c == 0)
    if not hasattr(counts, "layout"):
        return np.bool_(decide(counts))
    return counts._local_op(decide)


# ---- keepdims ---------------------------------------------------------------------------------

def with_kept_dims(value: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """A reduction's result with a length-1 axis for each reduced one (NumPy's keepdims=True): a
    NumPy array for a full reduction; a GlobalArray over the same sections, no copy, otherwise
    (the even-block layout with a grid of 1 on the new axes holds the same cells on each rank)."""
    keep_shape = tuple(1 if i in axes else n for i, n in enumerate(shape))
    if not hasattr(value, "layout"):
        return np.asarray(value).reshape(keep_shape)
    from . import layout as layouts
    from ._global import GlobalArray, _contiguous, _wrap
    grid = list(value.layout.grid_shape)
    for i in axes:
        grid.insert(i, 1)
    kept = layouts.block(keep_shape, tuple(grid))
    ctx = value.context
    natives = {r: _contiguous(value.local_view(r)).reshape(kept.local_shape(r)) for r in ctx.ranks}
    sections = {r: _wrap(ctx, kept, r, natives[r], ctx.device(r)) for r in ctx.ranks}
    return GlobalArray(ctx, kept, value.dtype, sections, natives)


def check_keepdims(keepdims: Any) -> bool:
    if not isinstance(keepdims, (bool, np.bool_)):
        raise InvalidArgumentError("keepdims must be True or False, not %r" % (keepdims,))
    return bool(keepdims)

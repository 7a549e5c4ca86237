"""np.concatenate, np.stack, np.vstack and np.hstack of GlobalArrays, never gathered.

The result is a new GlobalArray on the operands' controller (or communicator), laid out like the
first GlobalArray operand: every rank keeps that operand's dimension dictionaries along the other
axes (any distribution, padding included), and along the joined axis holds the even block of the
new length that its grid coordinate there names (the first operand's grid extent along that axis;
stack's new axis is whole on every rank). Where no map says that (the kept dictionaries do not fit
a block there), the result is in plain blocks over the first operand's grid (layout.block), or,
where that grid does not number every rank (a replicated layout), in the spread layout a
redistributing reshape returns (_reshape.spread_rows). Each GlobalArray operand is then moved into
its slab with one gdap redistribution (a[slab] = operand: _assign), nothing gathered to one rank
and nothing sent to a rank that does not own its place; a NumPy operand is taken as replicated:
every rank holds all of it and writes the cells it owns (no communication). axis=None joins the
operands raveled (a.ravel(): a view or a redistribution, as reshape's).

In SPMD mode the call (kind, axis, dtype, casting, out, every operand's shape and kind) is agreed
in the one all-reduce of _agree.agreed_call before anything is allocated or moved: ranks that pass
different calls all raise InvalidArgumentError naming each rank's call.
"""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from ._errors import AxisError, InvalidArgumentError, ProtocolError
from ._functions import _GATHER, _implements, _is_global
from ._map import GlobalMap

if TYPE_CHECKING:
    from ._global import GlobalArray

CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _first_global(arrays: Sequence[Any]) -> Optional[GlobalArray]:
    from ._global import GlobalArray
    return next((x for x in arrays if isinstance(x, GlobalArray)), None)


def _operands(arrays: Any, what: str) -> list[Any]:
    """The operands as a list: GlobalArrays as given, anything else through np.asarray (NumPy's
    reading of a list or scalar); NumPy's ValueError for none."""
    from ._global import GlobalArray
    items = list(arrays)
    if not items:
        raise ValueError("need at least one array to %s" % what)
    return [x if isinstance(x, GlobalArray) else np.asarray(x) for x in items]


def _check_controllers(items: list[Any], first: GlobalArray) -> None:
    from ._global import GlobalArray
    for i, x in enumerate(items):
        if isinstance(x, GlobalArray) and x.context is not first.context:
            raise InvalidArgumentError("np.concatenate / np.stack: the array at index %d is on another controller or "
                                       "communicator than the first GlobalArray operand; reshard or distribute it "
                                       "onto one first" % i)


def _axis(axis: Any, ndim: int) -> int:
    from ._args import integer
    given = integer(axis, "axis")
    if not -ndim <= given < ndim:
        raise AxisError("axis %d is out of bounds for array of dimension %d" % (given, ndim))
    return given % ndim


def joined_shape(shapes: list[tuple[int, ...]], axis: int) -> tuple[int, ...]:
    """The shape np.concatenate gives operands of `shapes` along `axis` (checked), NumPy's
    ValueErrors where they do not join."""
    first = shapes[0]
    for i, shape in enumerate(shapes[1:], 1):
        if len(shape) != len(first):
            raise ValueError("all the input arrays must have same number of dimensions, but the array at index 0 has "
                             "%d dimension(s) and the array at index %d has %d dimension(s)"
                             % (len(first), i, len(shape)))
        for k, (n, m) in enumerate(zip(first, shape)):
            if k != axis and n != m:
                raise ValueError("all the input array dimensions except for the concatenation axis must match "
                                 "exactly, but along dimension %d, the array at index 0 has size %d and the array "
                                 "at index %d has size %d" % (k, n, i, m))
    return first[:axis] + (sum(s[axis] for s in shapes),) + first[axis + 1:]


def result_dtype(items: list[Any], dtype: Any, out: Any, casting: Any) -> np.dtype:
    """The result's dtype (dtype=, else out's, else the operands' result type), every operand's
    cast checked under `casting` as NumPy checks it."""
    if casting not in CASTINGS:
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe' (got %r)" % (casting,))
    if dtype is not None and out is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both were provided.")
    common = np.result_type(*[x.dtype for x in items])
    wanted = np.dtype(dtype) if dtype is not None else out.dtype if out is not None else common
    for x in items:
        if not np.can_cast(x.dtype, wanted, casting=casting):
            raise TypeError("Cannot cast array data from %r to %r according to the rule %r"
                            % (x.dtype, wanted, casting))
    return wanted


def _digest(shapes: list[tuple[int, ...]], kinds: list[bool]) -> int:
    """56 bits naming every operand's shape and kind (GlobalArray or NumPy), equal where they are."""
    text = repr([(s, k) for s, k in zip(shapes, kinds)]).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:7], "little")


def join(arrays: Any, axis: Any, out: Any, dtype: Any, casting: Any, stack: bool) -> Any:
    """np.concatenate (stack False) or np.stack (stack True) with a GlobalArray among `arrays` or
    as `out`: checked as NumPy checks, agreed in SPMD mode, then moved into place (module text)."""
    from ._agree import dtype_to_c
    from ._global import GlobalArray
    what = "stack" if stack else "concatenate"
    arrays = list(arrays)  # a generator read once
    first = _first_global(arrays + [out])
    if first is None:  # a generator NumPy's dispatcher has read already: NumPy's own answer
        return _GATHER

    def check() -> tuple[Any, bool]:
        items = _operands(arrays, what)
        if out is not None and not isinstance(out, GlobalArray):
            raise TypeError("np.%s(..., out=x) with GlobalArray operands and out a %s: gdap would gather the result "
                            "into it; write x[...] = np.%s(...).get() (collective), or pass a GlobalArray out"
                            % (what, type(out).__name__, what))
        _check_controllers(items + ([out] if out is not None else []), first)
        shapes, kinds, ax = _shapes(items, axis, stack)
        shape = joined_shape(shapes, ax) if shapes else ()
        wanted = result_dtype(items, dtype, out, casting)
        if out is not None:
            _check_out(out, shape, what)
        values = (int(stack), -1 if axis is None else ax) + tuple(dtype_to_c(wanted)) + (
            CASTINGS.index(casting), int(out is not None), len(items), _digest(shapes, kinds)) + shape
        return ("join", values, "C", None), True

    call, _ = first._agreed_call(check)
    items = _operands(arrays, what)
    shapes, _, ax = _shapes(items, axis, stack)
    wanted = np.dtype(_dtype_of(call[1]))
    parts = [_prepared(x, axis, stack, ax) for x in items]
    result = _joined(parts, ax, wanted, tuple(call[1][9:]), out)
    if out is None:
        return result
    out[...] = result
    return out


def _dtype_of(values: tuple[int, ...]) -> np.dtype:
    from ._local import dtype_from_c
    return dtype_from_c(list(values[2:5]))


def _shapes(items: list[Any], axis: Any, stack: bool) -> tuple[list[tuple[int, ...]], list[bool], int]:
    """Every operand's shape as joined (raveled for axis None, a length-1 axis inserted for stack),
    whether each is a GlobalArray, and the joining axis (checked)."""
    from ._global import GlobalArray
    kinds = [isinstance(x, GlobalArray) for x in items]
    shapes = [tuple(x.shape) for x in items]
    if stack:
        if len(set(shapes)) > 1:
            raise ValueError("all input arrays must have the same shape")
        ax = _axis(axis, len(shapes[0]) + 1)
        return [s[:ax] + (1,) + s[ax:] for s in shapes], kinds, ax
    if axis is None:
        return [(math.prod(s),) for s in shapes], kinds, 0
    if not shapes[0]:  # NumPy asks the first only; a later 0-d operand has the wrong ndim
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    return shapes, kinds, _axis(axis, len(shapes[0]))


def _check_out(out: GlobalArray, shape: tuple[int, ...], what: str) -> None:
    if out.ndim != len(shape):
        raise ValueError("Output array has wrong dimensionality")
    if tuple(out.shape) != shape:
        raise ValueError("Output array is the wrong shape")


def _prepared(x: Any, axis: Any, stack: bool, ax: int) -> Any:
    """An operand in the shape it is joined in: raveled (axis None) or with stack's new axis."""
    from ._global import GlobalArray
    from ._reshape import expand_dims
    if stack:
        return expand_dims(x, (ax,)) if isinstance(x, GlobalArray) else np.expand_dims(x, ax)
    if axis is None:
        return x.ravel()
    return x


def _joined(parts: list[Any], ax: int, dtype: np.dtype, shape: tuple[int, ...], out: Any) -> GlobalArray:
    """The new array of `shape` over the first GlobalArray part's layout (out's where every part is
    NumPy's: result_layout), each part written into its slab along `ax` (a GlobalArray part: one
    redistribution)."""
    from ._global import GlobalArray
    first = _first_global(parts + [out])
    assert first is not None, "a GlobalArray operand or out"
    result = GlobalArray._new_in(first.context, result_layout(first.layout, ax, shape), dtype, zero=True)
    start = 0
    for part in parts:
        stop = start + part.shape[ax]
        if stop > start:  # an empty part has no cell to write (and no selection layout)
            key = tuple(slice(start, stop) if k == ax else slice(None) for k in range(len(shape)))
            result[key] = part if isinstance(part, GlobalArray) or part.dtype == dtype else part.astype(dtype)
        start = stop
    return result


def result_layout(layout: GlobalMap, ax: int, shape: tuple[int, ...]) -> GlobalMap:
    """`layout`'s dictionaries along the axes other than `ax`, along `ax` the even block of
    shape[ax] that each rank's grid coordinate there names; else plain blocks over layout's grid
    (or, where that grid does not number every rank, _reshape.spread_rows)."""
    from . import layout as layouts
    from ._reshape import spread_rows
    try:
        return _kept_layout(layout, ax, shape)
    except (ProtocolError, InvalidArgumentError, ValueError):
        pass
    grid = tuple(layout.grid_shape)
    if math.prod(grid) == layout.nranks:
        return layouts.block(shape, grid)
    return spread_rows(shape, layout.nranks)


def _kept_layout(layout: GlobalMap, ax: int, shape: tuple[int, ...]) -> GlobalMap:
    from . import layout as layouts
    extent = layout.grid_shape[ax]
    along = layouts.block((shape[ax],), extent)

    def rank_dims(r: int) -> tuple[dict, ...]:
        dims = [dict(d) for d in layout.dim_data(r)]
        dims[ax] = dict(along.dim_data(dims[ax]["proc_grid_rank"])[0])
        return tuple(dims)

    return GlobalMap([rank_dims(r) for r in range(layout.nranks)])


# ---- NumPy's functions ----------------------------------------------------------------------------

@_implements(np.concatenate)
def _concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                 casting: Any = "same_kind") -> Any:
    """np.concatenate with a GlobalArray operand or out: a new GlobalArray (or out, written), never
    gathered; a NumPy operand is taken as replicated (every rank must hold all of it). See join."""
    if _is_global(arrays):  # the rows of one GlobalArray: NumPy's reading of it as a sequence gathers
        return _GATHER
    return join(arrays, axis, out, dtype, casting, stack=False)


@_implements(np.stack)
def _stack(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None, casting: Any = "same_kind") -> Any:
    """np.stack: as np.concatenate of the operands given a length-1 axis at `axis` (a view of each
    GlobalArray operand); NumPy operands replicated, as there."""
    if _is_global(arrays):
        return _GATHER
    return join(arrays, axis, out, dtype, casting, stack=True)


def _at_least_2d(x: Any) -> Any:
    """np.atleast_2d of one operand, a 1-d GlobalArray given a leading length-1 axis (a view)."""
    from ._global import GlobalArray
    from ._reshape import expand_dims
    if isinstance(x, GlobalArray):
        return expand_dims(x, (0,)) if x.ndim == 1 else x
    return np.atleast_2d(x)


@_implements(np.vstack)
def _vstack(tup: Any, *, dtype: Any = None, casting: Any = "same_kind") -> Any:
    """np.vstack: 1-d operands as rows, joined along axis 0 (NumPy operands replicated)."""
    return join([_at_least_2d(x) for x in tup], 0, None, dtype, casting, stack=False)


@_implements(np.hstack)
def _hstack(tup: Any, *, dtype: Any = None, casting: Any = "same_kind") -> Any:
    """np.hstack: joined along axis 1, or axis 0 where the first operand is 1-d (NumPy operands replicated)."""
    from ._global import GlobalArray
    items = [x if isinstance(x, GlobalArray) else np.atleast_1d(x) for x in tup]
    return join(items, 0 if items and items[0].ndim == 1 else 1, None, dtype, casting, stack=False)

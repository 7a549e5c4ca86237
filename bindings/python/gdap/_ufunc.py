"""NumPy ufuncs on a GlobalArray, section by section: np.sqrt(a), np.maximum(a, b), a ** 2, a & m.

An element-wise ufunc (method '__call__') whose operands are GlobalArrays of one layout and scalars
is computed on every rank's owned cells, NumPy on host sections and CuPy on device sections, with
NumPy's dtype rules; nothing moves between ranks, except that an operand holding a pending
reduction is reduced into its partners' layout first (the partner rules of a + b). out= takes
GlobalArrays of the same layout, written in place; where= a GlobalArray of bool of that layout (or a
bool). ufunc.reduce of add, multiply, minimum and maximum is the distributed sum, prod, min and max.
Everything else (accumulate, outer, at, reduceat, logical_and.reduce, a whole NumPy operand) raises
TypeError naming the ufunc and the explicit, collective call that would gather: a GlobalArray
operand never gathers silently (one inside a list, np.add([a], 1), is converted by NumPy through
__array__ without reaching here: docs/python.md lists such silent gathers).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from ._errors import InvalidArgumentError

if TYPE_CHECKING:
    from ._global import GlobalArray

_REDUCTIONS = {"add": "sum", "multiply": "prod", "minimum": "min", "maximum": "max"}
_PASSED_ON = ("dtype", "casting")  # keywords handed to the local ufunc as they are


def apply(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """GlobalArray.__array_ufunc__: the ufunc's result as GlobalArrays (out= given: those), or a
    TypeError that says why it is not computed where the data are."""
    if ufunc.signature is not None:
        return _generalized(ufunc, method, inputs, kwargs)
    if method == "reduce":
        return _reduce(ufunc, inputs, kwargs)
    if method != "__call__":
        raise TypeError("np.%s.%s on a GlobalArray is not computed distributed (gdap never gathers silently): "
                        "gather explicitly, collective, with np.%s.%s(a.get(), ...) (np.asarray(a) is the same)"
                        % (ufunc.__name__, method, ufunc.__name__, method))
    return call(ufunc, inputs, kwargs)


def _generalized(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """np.matmul(a, b) is a @ b (gdap's distributed GEMM); other generalized ufuncs (np.vecdot, ...)
    combine whole rows, not elements: computing them section by section would be wrong."""
    from ._global import GlobalArray
    if ufunc is np.matmul and method == "__call__" and not kwargs and len(inputs) == 2 and all(
            isinstance(x, GlobalArray) for x in inputs):
        return inputs[0].matmul(inputs[1])
    raise TypeError("np.%s (a generalized ufunc, signature %s) is not element-wise and is not computed distributed "
                    "on a GlobalArray%s: gather explicitly, collective, with np.%s(a.get(), ...)"
                    % (ufunc.__name__, ufunc.signature, " (a @ b takes two GlobalArrays, no keywords)"
                       if ufunc is np.matmul else "", ufunc.__name__))


def call(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """ufunc(*inputs, **kwargs) section by section (see the module's text)."""
    from ._global import GlobalArray, _agreed_step
    where = _plain_where(kwargs.get("where", True))
    inputs = tuple(x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x for x in inputs)  # CuPy takes scalars
    given = [x for x in inputs + _as_tuple(kwargs.get("out")) + (where,) if isinstance(x, GlobalArray)]
    if not given:
        raise TypeError("np.%s: no GlobalArray among the operands" % ufunc.__name__)
    pending = next((x for x in given if x.pending is not None), given[0])

    def check() -> list:
        outs = _outputs(ufunc, kwargs.get("out"))
        _check_keywords(ufunc, kwargs, outs, where)
        for x in inputs:
            _check_operand(ufunc, x)
        for o in outs:
            _check_out(ufunc, o)
        for other in given[1:]:
            given[0]._check_partner(other, "combined by np.%s" % ufunc.__name__)
        return outs

    # SPMD: a refusal is agreed before anything is written or returned. With a pending operand
    # the checks are told in the reduce-scatter it is settled with; then the computation (into
    # temporaries: NumPy may raise on the ranks owning cells only, a ** -1 on integers) and, with
    # none pending, the checks too, are agreed in one barrier (_agreed_step).
    told = pending.pending is not None
    outs = pending._checked(check, None) if told else []
    settled = settled_partners(given)
    inputs = tuple(settled.get(id(x), x) for x in inputs)
    where = settled.get(id(where), where)
    local = {k: kwargs[k] for k in _PASSED_ON if k in kwargs}

    def computed() -> Callable[[], Any]:
        checked = outs if told else check()
        if any(o is not None for o in checked):
            return _into(ufunc, inputs, checked, where, local)
        made = _new(ufunc, inputs, settled[id(given[0])], local)
        return lambda: made

    return _agreed_step(given[0].context, computed)()


def _plain_where(where: Any) -> Any:
    """where= as NumPy reads it: np.True_ or a 0-d bool array is the bool (where=np.True_ without
    out= is where=True, no unselected element)."""
    if isinstance(where, np.bool_) or (isinstance(where, np.ndarray) and where.shape == () and where.dtype == np.bool_):
        return bool(where)
    return where


def settled_partners(arrays: list) -> dict:
    """id(x) -> x for the GlobalArrays of one element-wise call (partners, checked: one layout),
    where some hold a pending reduction with it performed into that layout, so that each rank's
    sections of them all describe the same elements. All pending: into their own layout too (not
    settled()'s even blocks), so that p + 1 keeps p's layout and combines with p's partners."""
    if all(x.pending is None for x in arrays):
        return {id(x): x for x in arrays}
    plain = next((x for x in arrays if x.pending is None), None)
    ref = plain if plain is not None else arrays[0]._reduce_into(arrays[0].layout)
    done = {} if plain is not None else {id(arrays[0]): ref}
    for x in arrays:
        if id(x) not in done:
            done[id(x)] = x if x.pending is None else x._reduce_into(ref.layout)
    return done


def _as_tuple(x: Any) -> tuple:
    return () if x is None else x if isinstance(x, tuple) else (x,)


def _check_operand(ufunc: np.ufunc, x: Any) -> None:
    from ._global import GlobalArray, _scalar
    if not (isinstance(x, GlobalArray) or _scalar(x)):
        _refuse_operand(ufunc, x)


def _check_out(ufunc: np.ufunc, o: Optional[GlobalArray]) -> None:
    if o is not None and o.pending is not None:
        raise InvalidArgumentError("np.%s(..., out=a): a holds a pending reduction ('%s'), whose partial values "
                                   "cannot be written element-wise: settle it first, a = a.settled()"
                                   % (ufunc.__name__, o.pending))


def _outputs(ufunc: np.ufunc, out: Any) -> list:
    """out= as a list of nout entries (None: a new array), each a GlobalArray or None."""
    from ._global import GlobalArray
    if out is None:
        return [None] * ufunc.nout
    outs = list(out) if isinstance(out, tuple) else [out]
    for o in outs:
        if o is not None and not isinstance(o, GlobalArray):
            raise TypeError("np.%s(..., out=%s): out= takes a GlobalArray of the operands' layout, written in place "
                            "(a NumPy out would need a gather: np.%s(a.get(), ..., out=x), collective)"
                            % (ufunc.__name__, type(o).__name__, ufunc.__name__))
    return outs


def _check_keywords(ufunc: np.ufunc, kwargs: dict, outs: list, where: Any) -> None:
    from ._global import GlobalArray
    unknown = sorted(k for k in kwargs if k not in _PASSED_ON + ("out", "where"))
    if unknown:
        raise TypeError("np.%s on a GlobalArray does not take %s (it takes out=, where=, dtype=, casting=)"
                        % (ufunc.__name__, ", ".join(unknown)))
    if isinstance(where, GlobalArray):
        if where.dtype != np.bool_:
            raise TypeError("np.%s(..., where=w): w must be a GlobalArray of bool, not %s" % (ufunc.__name__,
                                                                                          where.dtype))
    elif not isinstance(where, (bool, np.bool_)):
        raise TypeError("np.%s(..., where=%s): where= takes a bool or a GlobalArray of bool of the operands' layout "
                        "(a whole NumPy mask: distribute it first, gdap.distribute(m, a.layout, devices=a.context))"
                        % (ufunc.__name__, type(where).__name__))
    if where is not True and not any(o is not None for o in outs):
        raise TypeError("np.%s(..., where=w) without out=: NumPy leaves the unselected elements undefined; give "
                        "out= (a GlobalArray of the operands' layout, e.g. a copy)" % ufunc.__name__)


def _refuse_operand(ufunc: np.ufunc, x: Any) -> None:
    from ._global import _refuse_whole_operand
    try:
        _refuse_whole_operand(x)
    except TypeError as e:
        raise TypeError("np.%s: %s" % (ufunc.__name__, e)) from None
    raise TypeError("np.%s: a GlobalArray combines element-wise with scalars and GlobalArrays of the same layout, "
                    "not %s" % (ufunc.__name__, type(x).__name__))


def _views(inputs: tuple, r: int, owned: Any) -> list:
    from ._global import GlobalArray
    return [x.local_view(r)[owned] if isinstance(x, GlobalArray) else x for x in inputs]


def _new(ufunc: np.ufunc, inputs: tuple, ref: GlobalArray, local: dict) -> Any:
    """New GlobalArrays of `ref`'s layout: the ufunc of the owned cells, padding zero (_elementwise)."""
    if ufunc.nout == 1:
        return ref._elementwise(lambda r, owned: ufunc(*_views(inputs, r, owned), **local))
    return tuple(ref._elementwise(functools.partial(_one_output, ufunc, inputs, local, i)) for i in range(ufunc.nout))


def _one_output(ufunc: np.ufunc, inputs: tuple, local: dict, i: int, r: int, owned: Any) -> Any:
    """Output i of a ufunc of several (np.divmod, np.modf) on rank r's owned cells."""
    return ufunc(*_views(inputs, r, owned), **local)[i]


def _into(ufunc: np.ufunc, inputs: tuple, outs: list, where: Any, local: dict) -> Callable[[], Any]:
    """The ufunc into the out= GlobalArrays (None entries: new arrays), NumPy's casting and where=:
    every rank's result computed into copies of the out cells, returned as the write that puts
    them in place (after the agreement: _agreed_step). Sections sharing memory (replicas over one
    buffer) and an operand that is an out are read unchanged. The padding keeps its values
    (stale until halo_exchange)."""
    from ._global import GlobalArray, _device_scope, _owned_cells
    given = [o for o in outs if o is not None]
    first = given[0]
    ctx = first.context
    for o in given:
        o._check_writable("in-place arithmetic")
    if any(o is None for o in outs):  # the other outputs: new arrays, made as NumPy makes them
        fresh = _new(ufunc, inputs, first, local)
        outs = [o if o is not None else fresh[i] for i, o in enumerate(outs)]
    results = {}
    for r in ctx.ranks:
        owned = _owned_cells(first.layout, r)
        with _device_scope(ctx.device(r)):
            copies = tuple(o.local_view(r)[owned].copy() for o in outs)
            mask = where.local_view(r)[owned] if isinstance(where, GlobalArray) else where
            _call_into(ufunc, _views(inputs, r, owned), copies, mask, local)
            results[r] = (owned, copies)

    def write() -> Any:
        for r, (owned, copies) in results.items():
            with _device_scope(ctx.device(r)):
                for o, c in zip(outs, copies):
                    o.local_view(r)[owned] = c
        return outs[0] if len(outs) == 1 else tuple(outs)

    return write


def _call_into(ufunc: np.ufunc, views: list, copies: tuple, mask: Any, local: dict) -> None:
    """ufunc(*views, out=copies, where=mask): NumPy's where= on the host; CuPy's ufuncs take no
    where=, so on a device every owned cell is computed into a temporary (NumPy's casting check
    included) and the masked ones copied."""
    if mask is True:
        ufunc(*views, out=copies, **local)
    elif isinstance(copies[0], np.ndarray):
        ufunc(*views, out=copies, where=mask, **local)
    else:
        import cupy
        full = tuple(c.copy() for c in copies)
        ufunc(*views, out=full, **local)
        for c, f in zip(copies, full):
            cupy.copyto(c, f, where=mask)


def _reduce(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """np.add.reduce(a, axis) and its kin: the distributed sum, prod, min, max (ufunc.reduce's
    default axis is 0, not None). What the methods cannot honour (out=, keepdims, initial, where)
    they refuse by name."""
    from ._global import GlobalArray
    name = ufunc.__name__
    op = _REDUCTIONS.get(name)
    if op is None or len(inputs) != 1 or not isinstance(inputs[0], GlobalArray):
        raise TypeError("np.%s.reduce on a GlobalArray is not computed distributed (gdap reduces with add, multiply, "
                        "minimum and maximum: a.sum / prod / min / max): gather explicitly, collective, with "
                        "np.%s.reduce(a.get(), ...)" % (name, name))
    a = inputs[0]
    kwargs = dict(kwargs)
    axis = kwargs.pop("axis", 0)
    if op in ("sum", "prod"):
        return getattr(a, op)(axis=axis, **kwargs)
    dtype: Optional[Any] = kwargs.pop("dtype", None)
    if dtype is not None and np.dtype(dtype) != a.dtype:
        kwargs["dtype"] = dtype  # refused by name: min and max keep the array's dtype
    return getattr(a, op)(axis=axis, **kwargs)

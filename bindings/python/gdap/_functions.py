"""NumPy functions (not ufuncs) on a GlobalArray: GlobalArray.__array_function__.

The functions below are computed where the data are: cell-wise ones (np.where, np.clip, np.round,
np.isclose, np.nan_to_num) section by section on the owned cells, with a + b's partner rules (one
layout; a pending reduction performed into the partner's layout first); reductions (np.allclose,
np.array_equal, np.count_nonzero, np.nansum, ..., np.linalg.norm, np.dot / np.vdot of 1-d arrays)
through gdap's distributed reductions; np.sum, np.std, np.argmax, ... through the methods; the
*_like functions and np.copy as new arrays of the same layout; np.shape / ndim / size from the
metadata; np.transpose, np.swapaxes, np.moveaxis, np.reshape, np.ravel, np.squeeze, np.expand_dims, ... through
the methods (_reshape: views where the layout allows, else a redistribution); np.cumsum and np.cumprod as
distributed scans (_scan); np.concatenate, np.stack, np.vstack and np.hstack
as a new array each operand is redistributed into (_concat). Every other NumPy function, and these
where called outside what they do distributed (an ord of np.linalg.norm, np.where(c) with one argument,
...), gathers its GlobalArray arguments
(collective) and calls NumPy on them, with a GatherWarning naming the function, the bytes gathered
and the explicit spelling. np.asarray(a) and np.array(a) are the explicit gather and do not warn;
nor does any call NumPy converts through __array__ without dispatching here (np.ascontiguousarray(a),
np.sum([a, a]): a GlobalArray inside a list), which __array__ cannot tell from np.asarray(a)
(docs/python.md lists them)."""

from __future__ import annotations

import inspect
import math
import warnings
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from ._errors import InvalidArgumentError

if TYPE_CHECKING:
    from ._global import GlobalArray


class GatherWarning(UserWarning):
    """A NumPy function gdap does not compute distributed gathered its GlobalArray arguments to the
    host of every rank (collective, the whole array in memory) to call NumPy on them. Write
    np.X(a.get(), ...) to gather on purpose; warnings.simplefilter('error', gdap.GatherWarning)
    makes every such gather an error."""


_GATHER = object()  # an implementation's answer for a call it does not compute distributed
_IMPLEMENTED: dict[Callable, Callable] = {}


def _implements(*funcs: Callable) -> Callable:
    def register(impl: Callable) -> Callable:
        for f in funcs:
            _IMPLEMENTED[f] = impl
        return impl
    return register


def _numpy_functions(*names: str) -> tuple:
    """NumPy's functions of these names that this NumPy has (permute_dims and matrix_transpose came
    with NumPy 2; gdap also runs on the NumPy 1 of Debian 12's python3)."""
    return tuple(getattr(np, name) for name in names if hasattr(np, name))


def dispatch(func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
    """GlobalArray.__array_function__: the distributed implementation of `func`, or NumPy's on the
    gathered arguments with a GatherWarning. NotImplemented where another array type takes part."""
    from ._global import GlobalArray
    if not all(issubclass(t, (GlobalArray, np.ndarray)) for t in types):
        return NotImplemented
    impl = _IMPLEMENTED.get(func)
    if impl is not None:
        result = impl(*args, **kwargs)
        if result is not _GATHER:
            return result
    return gathered_call(func, args, kwargs)


def _spelling(func: Callable) -> str:
    """np.median, np.linalg.svd: the public name of a NumPy function (its module less the private part)."""
    public = (getattr(func, "__module__", None) or "numpy").split("._")[0]
    prefix = "np" + public[len("numpy"):] if public.startswith("numpy") else public
    return "%s.%s" % (prefix, getattr(func, "__name__", repr(func)))


def _global_arrays(x: Any, found: list) -> None:
    from ._global import GlobalArray
    if isinstance(x, GlobalArray):
        found.append(x)
    elif isinstance(x, (list, tuple)):
        for item in x:
            _global_arrays(item, found)
    elif isinstance(x, dict):
        for item in x.values():
            _global_arrays(item, found)


def _replaced(x: Any, whole: dict) -> Any:
    from ._global import GlobalArray
    if isinstance(x, GlobalArray):
        return whole[id(x)]
    if isinstance(x, list):
        return [_replaced(item, whole) for item in x]
    if isinstance(x, tuple):
        return tuple(_replaced(item, whole) for item in x)
    return x


def _out_argument(func: Callable, args: tuple, kwargs: dict) -> Any:
    """func's out argument, given by keyword or by position (np.cumsum(a, 0, None, out)); None where
    absent or func's signature is unknown."""
    if "out" in kwargs:
        return kwargs["out"]
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for place, parameter in enumerate(parameters[:len(args)]):
        if parameter.kind not in positional:  # np.einsum(*operands, out=None): out is keyword-only
            return None
        if parameter.name == "out":
            return args[place]
    return None


def gathered_call(func: Callable, args: tuple, kwargs: dict) -> Any:
    """func on the arguments with every GlobalArray gathered (a.get(): collective), after a
    GatherWarning. An out= GlobalArray is refused: NumPy would write a gathered copy."""
    name = _spelling(func)
    outs: list = []
    _global_arrays(_out_argument(func, args, kwargs), outs)
    if outs:
        raise TypeError("%s(..., out=a) with a GlobalArray out is not computed distributed and NumPy would write a "
                        "gathered copy, not a: write a[...] = %s(..., ...) (a distributed assignment) instead"
                        % (name, name))
    _refuse_write_into(func, name, args, kwargs)
    found: list = []
    _global_arrays((args, kwargs), found)
    unique = {id(a): a for a in found}
    nbytes = sum(a.nbytes for a in unique.values())
    warnings.warn("%s is not computed distributed on a GlobalArray: gathering %d bytes (%d array%s) to the host of "
                  "every rank (collective) to call NumPy; write %s(a.get(), ...) to gather explicitly"
                  % (name, nbytes, len(unique), "" if len(unique) == 1 else "s", name), GatherWarning, stacklevel=4)
    whole = {key: a.get() for key, a in unique.items()}
    return func(*_replaced(args, whole), **{k: _replaced(v, whole) for k, v in kwargs.items()})


# NumPy functions that write into their first argument (its name): on a gathered copy the write
# would be lost without a word, so a GlobalArray there is refused.
_WRITES_FIRST = {np.put: "a", np.place: "arr", np.putmask: "a", np.fill_diagonal: "a",
                 np.put_along_axis: "arr", np.copyto: "dst"}


def _refuse_write_into(func: Callable, name: str, args: tuple, kwargs: dict) -> None:
    param = _WRITES_FIRST.get(func)
    if param is None:
        return
    target = args[0] if args else kwargs.get(param)
    if _is_global(target):
        raise TypeError("%s writes into its first argument, a GlobalArray here, which it does not compute distributed "
                        "(NumPy would write a gathered copy and the write would be lost): write into it with a "
                        "distributed assignment, a[key] = values or a[mask] = value" % name)


_WEAK_TARGETS = {int: "iufc", float: "fc", complex: "c"}  # NEP 50: the dtype kinds a Python scalar casts to by value


def _check_weak_scalar(value: Any, dtype: np.dtype, casting: str) -> None:
    """NumPy 2's rule (NEP 50) for a Python int, float or complex, whatever NumPy is installed: its
    value, not int64 / float64 / complex128, meets `dtype`. Any casting rule takes it into a dtype
    of its kind or a wider kind (5 into uint8 under 'same_kind', even 'no'); only 'unsafe' takes it
    into a narrower kind (2.0 into uint8); an int out of an integer dtype's range is an
    OverflowError, as NumPy 2's."""
    if casting != "unsafe" and dtype.kind not in _WEAK_TARGETS[type(value)]:
        raise TypeError("np.copyto: cannot cast Python %s %r to the GlobalArray's %s according to the rule %r"
                        % (type(value).__name__, value, dtype, casting))
    if type(value) is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError("np.copyto: Python integer %d out of bounds for %s" % (value, dtype))


@_implements(np.copyto)
def _copyto(dst: Any, src: Any, casting: Any = "same_kind", where: Any = True) -> Any:
    """np.copyto(a, src) into a GlobalArray: a[...] = src (a distributed assignment), after NumPy's
    casting check; where= other than True is refused (write a[mask] = ... instead)."""
    if not _is_global(dst):
        return _GATHER  # into a NumPy array: NumPy's on the gathered source writes the caller's array
    if where is not True:
        raise TypeError("np.copyto(a, src, where=...) into a GlobalArray is not computed distributed: write "
                        "a[mask] = value (a GlobalArray mask of a's layout) instead")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError("np.copyto: casting must be one of 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', not %r"
                         % (casting,))
    if type(src) in _WEAK_TARGETS:
        _check_weak_scalar(src, dst.dtype, casting)
    else:
        kind = src.dtype if _is_global(src) else np.result_type(src)
        if not np.can_cast(kind, dst.dtype, casting):
            raise TypeError("np.copyto: cannot cast %s to the GlobalArray's %s according to the rule %r"
                            % (kind, dst.dtype, casting))
    dst[...] = src
    return None


# ---- cell-wise functions ------------------------------------------------------------------------

def _xp(*views: Any) -> Any:
    """The array module of sections: CuPy where one is on a device, else NumPy."""
    if any(hasattr(v, "__cuda_array_interface__") for v in views):
        import cupy
        return cupy
    return np


def _cellwise(name: str, operands: tuple, local: Callable[..., Any]) -> GlobalArray:
    """A new GlobalArray of the operands' layout: local(*owned cells of each operand) section by
    section (scalars passed as they are), with a + b's partner rules."""
    from ._global import GlobalArray, _refuse_whole_operand, _scalar
    from ._ufunc import settled_partners
    given = [x for x in operands if isinstance(x, GlobalArray)]
    pending = next((x for x in given if x.pending is not None), given[0])

    def check() -> None:
        for x in operands:
            if not (isinstance(x, GlobalArray) or _scalar(x) or x is None):
                try:
                    _refuse_whole_operand(x)
                except TypeError as e:
                    raise TypeError("np.%s: %s" % (name, e)) from None
                raise TypeError("np.%s takes GlobalArrays of one layout and scalars, not %s" % (name, type(x).__name__))
        for other in given[1:]:
            given[0]._check_partner(other, "combined by np.%s" % name)

    # SPMD: a refusal is told to the peers in a pending operand's reduce-scatter, else in the one
    # barrier that agrees the computation (a NumPy error on some ranks only) before it is returned
    # (also where the caller reduces it next: np.allclose's peers meet the refusal there).
    from ._global import _agreed_step
    told = pending.pending is not None
    if told:
        pending._checked(check, None)
    settled = settled_partners(given)
    ops = tuple(settled[id(x)] if isinstance(x, GlobalArray) else x for x in operands)
    ops = tuple(x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x for x in ops)  # CuPy takes scalars
    ref = settled[id(given[0])]

    def section(r: int, owned: Any) -> Any:
        return local(*(x.local_view(r)[owned] if isinstance(x, GlobalArray) else x for x in ops))

    def made() -> GlobalArray:
        if not told:
            check()
        return ref._elementwise(section)
    return _agreed_step(ref.context, made)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError("np.%s(..., out=...) on a GlobalArray: out= is not taken; assign the new array, or write into "
                        "one in place with a[...] = np.%s(...)" % (name, name))


def _is_global(x: Any) -> bool:
    from ._global import GlobalArray
    return isinstance(x, GlobalArray)


@_implements(np.where)
def _where(condition: Any, *xy: Any) -> Any:
    if len(xy) != 2 or not _is_global(condition):  # np.where(c): the indices, a NumPy result
        return _GATHER
    x, y = xy
    cond = condition if condition.dtype == np.bool_ else condition != 0
    return _cellwise("where", (cond, x, y), lambda c, u, v: _xp(c).where(c, u, v))


_ABSENT = object()  # a keyword not given


def _clip_bounds(a_min: Any, a_max: Any, low: Any, high: Any) -> tuple:
    """np.clip's bounds by NumPy 2.4's rule: both positional, or min=/max= (a missing one None)."""
    if a_min is _ABSENT and a_max is _ABSENT:
        return tuple(None if v is _ABSENT else v for v in (low, high))
    if a_min is _ABSENT or a_max is _ABSENT:
        raise TypeError("np.clip() missing 1 required positional argument: '%s'" % ("a_min" if a_min is _ABSENT
                                                                                   else "a_max"))
    if low is not _ABSENT or high is not _ABSENT:
        raise ValueError("np.clip: passing min= or max= when a_min and a_max are given is forbidden (NumPy's rule)")
    return a_min, a_max


@_implements(np.clip)
def _clip(a: Any, a_min: Any = _ABSENT, a_max: Any = _ABSENT, out: Any = None, *, min: Any = _ABSENT,
          max: Any = _ABSENT, **kwargs: Any) -> Any:
    _no_out("clip", out)
    if kwargs or not _is_global(a):
        return _GATHER
    lo, hi = _clip_bounds(a_min, a_max, min, max)
    if lo is None and hi is None:  # NumPy 2.4: a copy
        return a.copy()
    return _cellwise("clip", (a, lo, hi), lambda v, low, high: _xp(v, low, high).clip(v, low, high))


@_implements(np.round, np.around)
def _round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    _no_out("round", out)
    from ._args import integer
    places = integer(decimals, "decimals")
    return _cellwise("round", (a,), lambda v: _xp(v).round(v, places))


def _distributed_pair(a: Any, b: Any) -> bool:
    """Whether a comparison of a and b is computed distributed: GlobalArrays and scalars. A whole
    NumPy operand (np.allclose(a, expected)) is gathered, with the warning, rather than refused."""
    from ._global import _scalar
    return all(_is_global(x) or _scalar(x) for x in (a, b))


@_implements(np.isclose)
def _isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    if not _distributed_pair(a, b):
        return _GATHER
    return _close("isclose", a, b, rtol, atol, equal_nan)


def _close(name: str, a: Any, b: Any, rtol: float, atol: float, equal_nan: bool) -> Any:
    return _cellwise(name, (a, b), lambda u, v: _xp(u, v).isclose(u, v, rtol=rtol, atol=atol, equal_nan=equal_nan))


@_implements(np.allclose)
def _allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """Collective: bool(np.isclose(...).all())."""
    if not _distributed_pair(a, b):
        return _GATHER
    return bool(_close("allclose", a, b, rtol, atol, equal_nan).all())


@_implements(np.array_equal)
def _array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Collective where both are GlobalArrays of one shape: bool((a1 == a2).all()); False for
    another shape, as NumPy (no communication)."""
    if not (_is_global(a1) and _is_global(a2)):
        return _GATHER
    if a1.shape != a2.shape:
        return False
    if equal_nan and (a1.dtype.kind in "fc" or a2.dtype.kind in "fc"):
        def same(u: Any, v: Any) -> Any:
            xp = _xp(u)
            return (u == v) | (xp.isnan(u) & xp.isnan(v))
        return bool(_cellwise("array_equal", (a1, a2), same).all())
    return bool(_cellwise("array_equal", (a1, a2), lambda u, v: u == v).all())


@_implements(np.nan_to_num)
def _nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Optional[float] = None,
                neginf: Optional[float] = None) -> Any:
    """A new array, or with copy=False x itself, written in place on its owned cells."""
    from ._global import _agreed_step, _device_scope, _owned_cells
    if not _is_global(x):
        return _GATHER

    def writable() -> None:
        if x.pending is not None:
            raise InvalidArgumentError("np.nan_to_num(a, copy=False): a holds a pending reduction, whose partial "
                                       "values cannot be written in place: settle it first, a = a.settled()")
        x._check_writable("np.nan_to_num(copy=False)")
    if not copy:  # SPMD: a section read-only on one rank only is every rank's refusal
        _agreed_step(x.context, writable)
    made = _cellwise("nan_to_num", (x,), lambda v: _xp(v).nan_to_num(v, nan=nan, posinf=posinf, neginf=neginf))
    if copy:
        return made
    for r in x.context.ranks:
        owned = _owned_cells(x.layout, r)
        with _device_scope(x.context.device(r)):
            x.local_view(r)[owned] = made.local_view(r)[owned]
    return x


# ---- new arrays of the same layout --------------------------------------------------------------

def _like(name: str, prototype: Any, dtype: Any, order: str, shape: Any, device: Any) -> Any:
    """The new array's dtype, after refusing what a GlobalArray of the prototype's layout cannot be."""
    if shape is not None:
        wanted = tuple(int(n) for n in np.atleast_1d(np.asarray(shape)))
        if wanted != prototype.shape:
            raise InvalidArgumentError("np.%s(a, shape=%s): the new GlobalArray takes a's layout, which fixes its "
                                       "shape %s; make one of another shape with GlobalArray.%s(layout, ...)"
                                       % (name, wanted, prototype.shape, name[:-5]))
    if order not in ("K", "A", "C"):
        raise InvalidArgumentError("np.%s(a, order=%r): a GlobalArray's sections are C order ('C', 'A' or 'K')"
                                   % (name, order))
    if device is not None:
        raise InvalidArgumentError("np.%s(a, device=%r): the new GlobalArray is on a's devices (device= is not taken)"
                                   % (name, device))
    return prototype.dtype if dtype is None else np.dtype(dtype)


def _fresh(prototype: GlobalArray, dtype: np.dtype, fill: Any) -> GlobalArray:
    from ._global import GlobalArray, _device_scope
    zero = fill is not None and not np.asarray(fill, dtype).tobytes().strip(b"\0")  # -0.0 is not all-zero bits
    out = GlobalArray._new_in(prototype.context, prototype.layout, dtype, zero=zero)
    if fill is not None and not zero:
        for r in out.context.ranks:
            with _device_scope(out.context.device(r)):
                out.local_view(r)[...] = fill
    return out


@_implements(np.empty_like)
def _empty_like(prototype: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None, *,
                device: Any = None) -> Any:
    return _fresh(prototype, _like("empty_like", prototype, dtype, order, shape, device), None)


@_implements(np.zeros_like)
def _zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None, *,
                device: Any = None) -> Any:
    return _fresh(a, _like("zeros_like", a, dtype, order, shape, device), 0)


@_implements(np.ones_like)
def _ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None, *,
               device: Any = None) -> Any:
    return _fresh(a, _like("ones_like", a, dtype, order, shape, device), 1)


@_implements(np.full_like)
def _full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None,
               *, device: Any = None) -> Any:
    from ._global import _scalar
    if not _is_global(a):
        return _GATHER
    if not _scalar(fill_value):
        raise TypeError("np.full_like(a, fill_value): fill_value must be a scalar, not %s" % type(fill_value).__name__)
    wanted = _like("full_like", a, dtype, order, shape, device)
    return _fresh(a, wanted, np.asarray(fill_value).astype(wanted)[()])


@_implements(np.copy)
def _copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    if order not in ("K", "A", "C"):
        raise InvalidArgumentError("np.copy(a, order=%r): a GlobalArray's sections are C order" % order)
    return a.copy()


@_implements(np.shape)
def _shape(a: Any) -> Any:
    return a.shape


@_implements(np.ndim)
def _ndim(a: Any) -> Any:
    return a.ndim


@_implements(np.size)
def _size(a: Any, axis: Any = None) -> Any:
    """NumPy 2.4's: an int or a tuple of axes (AxisError for one out of range)."""
    if axis is None:
        return a.size
    from numpy.lib.array_utils import normalize_axis_tuple
    return math.prod(a.shape[k] for k in normalize_axis_tuple(axis, a.ndim, allow_duplicate=False))


@_implements(np.result_type)
def _result_type(*arrays_and_dtypes: Any) -> Any:
    return np.result_type(*(x.dtype if _is_global(x) else x for x in arrays_and_dtypes))


@_implements(np.iscomplexobj)
def _iscomplexobj(x: Any) -> Any:
    return x.dtype.kind == "c"


@_implements(np.isrealobj)
def _isrealobj(x: Any) -> Any:
    return x.dtype.kind != "c"


# ---- transposes and reshapes: the methods (views where the layout allows, see _reshape) -------

@_implements(np.transpose, *_numpy_functions("permute_dims"))
def _transpose(a: Any, axes: Any = None) -> Any:
    return a.transpose(axes) if _is_global(a) else _GATHER


@_implements(*_numpy_functions("matrix_transpose"))
def _matrix_transpose(x: Any) -> Any:
    return x.mT if _is_global(x) else _GATHER


@_implements(np.swapaxes)
def _swapaxes(a: Any, axis1: Any, axis2: Any) -> Any:
    return a.swapaxes(axis1, axis2) if _is_global(a) else _GATHER


@_implements(np.moveaxis)
def _moveaxis(a: Any, source: Any, destination: Any) -> Any:
    if not _is_global(a):
        return _GATHER
    from ._reshape import moved
    return a._permuted(lambda: moved(source, destination, a.ndim))


@_implements(np.reshape)
def _reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None, copy: Optional[bool] = None) -> Any:
    if not _is_global(a):
        return _GATHER
    if (shape is None) == (newshape is None):
        raise TypeError("np.reshape(a, shape): give shape (newshape is its deprecated name), once")
    return a.reshape(shape if newshape is None else newshape, order=order, copy=copy)


@_implements(np.ravel)
def _ravel(a: Any, order: str = "C") -> Any:
    return a.ravel(order) if _is_global(a) else _GATHER



@_implements(np.squeeze)
def _squeeze(a: Any, axis: Any = None) -> Any:
    return a.squeeze(axis) if _is_global(a) else _GATHER


@_implements(np.expand_dims)
def _expand_dims(a: Any, axis: Any) -> Any:
    """Always a view: a length-1 axis held whole by every rank (_reshape.expand_dims). In SPMD mode the
    ranks' axes are agreed first (one all-reduce), as every transpose and reshape: a rank with a wrong
    axis would otherwise raise alone, and ranks with different axes go on with different shapes."""
    if not _is_global(a):
        return _GATHER
    from ._reshape import expand_dims, expanded_axes
    ndim = a.ndim
    call, _ = a._agreed_call(lambda: (("expand_dims", expanded_axes(axis, ndim), "C", None), True))
    return expand_dims(a, call[1])


# ---- cumulative sums and products: distributed scans (_scan) ------------------------------------

def _cumulative(name: str) -> Callable:
    def call(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if not _is_global(a) or out is not None:  # out=: gathered_call refuses a GlobalArray out by name
            return _GATHER
        return getattr(a, name)(axis, dtype)
    return call


_IMPLEMENTED[np.cumsum] = _cumulative("cumsum")
_IMPLEMENTED[np.cumprod] = _cumulative("cumprod")

# ---- reductions -------------------------------------------------------------------------------

_COMPLEX_UNREDUCED = ("prod", "min", "max")  # gdap's C reductions take no complex product or order


def _method(name: str) -> Callable:
    def call(a: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_global(a) or (name in _COMPLEX_UNREDUCED and a.dtype.kind == "c"):
            return _GATHER
        return getattr(a, name)(*args, **kwargs)
    return call


for _name in ("sum", "prod", "mean", "std", "var", "min", "max", "argmin", "argmax", "any", "all"):
    _IMPLEMENTED[getattr(np, _name)] = _method(_name)
_IMPLEMENTED[np.amin] = _method("min")
_IMPLEMENTED[np.amax] = _method("max")


@_implements(np.count_nonzero)
def _count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if keepdims:
        return _GATHER
    counts = _cellwise("count_nonzero", (a,), lambda v: v != 0).sum(axis=axis)
    return int(counts) if axis is None else counts


def _nan_free(a: GlobalArray, fill: Any) -> GlobalArray:
    """a with its NaNs replaced by `fill` (a itself where its dtype has no NaN)."""
    if a.dtype.kind not in "fc":
        return a
    return _cellwise("nan", (a,), lambda v: _xp(v).where(_xp(v).isnan(v), fill, v))


def _numbers(a: GlobalArray, axis: Any) -> Any:
    """How many elements are not NaN, over `axis` (an int, or a GlobalArray of int64)."""
    return _cellwise("nan", (a,), lambda v: ~_xp(v).isnan(v)).sum(axis=axis)


@_implements(np.nansum)
def _nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    if not _distributed_nan_call(a, out, keepdims, kw) or (dtype is not None and np.dtype(dtype) == np.bool_):
        return _GATHER
    return _nan_free(a, 0).sum(axis, dtype)


def _distributed_nan_call(a: Any, out: Any, keepdims: bool, kw: dict) -> bool:
    """Whether np.nansum / nanmin / nanmax / nanmean is computed distributed: a GlobalArray, without
    out=, keepdims=True, where= or initial= (those gather, with the warning, as np.count_nonzero's)."""
    return _is_global(a) and out is None and not keepdims and not kw


def _nan_extreme(op: str, a: Any, axis: Any, out: Any, keepdims: bool, kw: dict) -> Any:
    """np.nanmin / np.nanmax: the extreme of the non-NaN values; NaN with NumPy's RuntimeWarning
    where a slice holds nothing else."""
    if not _distributed_nan_call(a, out, keepdims, kw) or a.dtype.kind == "c":
        return _GATHER
    if a.dtype.kind not in "fc":
        return getattr(a, op)(axis)
    extreme = getattr(_nan_free(a, np.inf if op == "min" else -np.inf), op)(axis)
    numbers = _numbers(a, axis)
    if not _is_global(extreme):  # every axis reduced (axis=None, 0 of a vector, (0, 1) of a matrix): a scalar
        if numbers == 0:
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=5)
            return a.dtype.type(np.nan)
        return extreme
    if not bool((numbers > 0).all()):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=5)
    return _cellwise("nan" + op, (numbers, extreme), lambda n, e: _xp(e).where(n > 0, e, np.nan).astype(e.dtype))


@_implements(np.nanmin)
def _nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    return _nan_extreme("min", a, axis, out, keepdims, kw)


@_implements(np.nanmax)
def _nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    return _nan_extreme("max", a, axis, out, keepdims, kw)


@_implements(np.nanmean)
def _nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    """The sum of the non-NaN values over their number (NaN, with a RuntimeWarning, where none)."""
    if not _distributed_nan_call(a, out, keepdims, kw):
        return _GATHER
    if a.dtype.kind not in "fc":
        return a.mean(axis, dtype)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError("np.nanmean(a, dtype=%s): a is inexact (%s), so dtype must be inexact (NumPy's rule)"
                        % (np.dtype(dtype), a.dtype))
    total = _nan_free(a, 0).sum(axis, dtype)
    numbers = _numbers(a, axis)
    if not _is_global(total):  # every axis reduced
        if numbers == 0:
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=4)
            return total.dtype.type(np.nan)
        return total.dtype.type(total / numbers)
    if not bool((numbers > 0).all()):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=4)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total / numbers).astype(total.dtype)


@_implements(np.linalg.norm)
def _norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Collective: the 2-norm of the flattened array (ord None, 2 of a vector, 'fro' of a matrix)
    as the square root of a distributed sum of |x|^2; ord 1, inf, -inf of a vector likewise. Other
    ords and axis= gather."""
    if not _is_global(x) or axis is not None or keepdims:
        return _GATHER
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    if ord is None or (ord == 2 and x.ndim == 1) or (ord == "fro" and x.ndim == 2):
        squares = _cellwise("linalg.norm", (x,), lambda v: (v * v.conj()).real if v.dtype.kind == "c" else v * v)
        return np.sqrt(squares.sum())
    if x.ndim != 1 or isinstance(ord, str) or ord not in (1, np.inf, -np.inf):
        return _GATHER
    if x.size == 0 and ord == np.inf:  # NumPy's: the largest of no magnitudes is 0 (-inf gathers: NumPy raises)
        return x.dtype.type(0).real
    if x.size == 0 and ord == -np.inf:
        return _GATHER
    magnitudes = _cellwise("linalg.norm", (x,), lambda v: _xp(v).abs(v))
    if ord == 1:
        return magnitudes.sum()
    return magnitudes.max() if ord > 0 else magnitudes.min()


def _products(name: str, a: Any, b: Any, conjugate: bool) -> Any:
    if not (_is_global(a) and _is_global(b) and a.ndim == 1 and b.ndim == 1):
        return _GATHER
    if a.shape != b.shape:
        raise ValueError("np.%s: shapes %s and %s not aligned" % (name, a.shape, b.shape))
    wanted = np.result_type(a.dtype, b.dtype)
    work = np.float32 if wanted == np.float16 else None  # NumPy accumulates float16 in float32: 300 * 300 fits

    def product(u: Any, v: Any) -> Any:
        if work is not None:
            u, v = u.astype(work), v.astype(work)
        return (u.conj() if conjugate else u) * v
    products = _cellwise(name, (a, b), product)
    total = products.sum() if wanted.kind != "b" else products.any()
    return np.asarray(total).astype(wanted)[()]


@_implements(np.dot)
def _dot(a: Any, b: Any, out: Any = None) -> Any:
    """Collective: the sum of the products of two 1-d arrays of one layout; two 2-d arrays: a @ b
    (gdap's GEMM)."""
    if out is not None:
        return _GATHER
    if _is_global(a) and _is_global(b) and a.ndim == 2 and b.ndim == 2:
        if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):  # gdap's GEMM takes these only
            return _GATHER
        return a.matmul(b)
    return _products("dot", a, b, False)


@_implements(np.vdot)
def _vdot(a: Any, b: Any) -> Any:
    return _products("vdot", a, b, True)

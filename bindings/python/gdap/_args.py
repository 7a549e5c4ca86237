"""Strict readers of the Python API's integer and flag arguments. Python counts True as 1 and any
non-empty string as true, so int(x), operator.index(x) and bool(x) would read `root=True` as rank 1,
`periodic='no'` as periodic and `overwrite='no'` as overwrite; every entry point that takes a count,
a rank, an extent or a flag reads it through these instead, and refuses what is not one, naming the
argument."""

from __future__ import annotations

import numbers
import operator
from typing import Any, Optional

import numpy as np


def describe(value: object) -> str:
    """What `value` is, for a message: "string 'no'", "boolean True", "float 0.9"."""
    if isinstance(value, str):
        return "string %r" % (value[:40],)
    if isinstance(value, (bool, np.bool_)):
        return "boolean %s" % bool(value)
    text = repr(value)
    return "%s %s" % (type(value).__name__, text if len(text) <= 40 else text[:40] + "...")


def integer(value: Any, name: str, error: type[Exception] = TypeError) -> int:
    """`value` as a Python int: an int, a NumPy integer or anything with __index__, but no bool
    (NumPy's or Python's), float or string; `error` "<name> must be an integer, not ..." otherwise."""
    if isinstance(value, (bool, np.bool_)):
        raise error("%s must be an integer, not %s" % (name, describe(value)))
    try:
        return operator.index(value)
    except TypeError:
        raise error("%s must be an integer, not %s" % (name, describe(value))) from None


def real(value: Any, name: str) -> float:
    """`value` as a Python float: an int, a float, a NumPy real scalar or 0-d array of an integer or
    float dtype (as GlobalArray arithmetic takes for a scalar), but no bool or string (float('2')
    and float(True) would read them as numbers); TypeError naming `name` otherwise."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return float(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a real number, not %s" % (name, describe(value)))
    return float(value)


def optional_integer(value: Any, name: str) -> Optional[int]:
    """None, or `value` read by integer()."""
    return None if value is None else integer(value, name)


def flag(value: Any, name: str) -> bool:
    """`value` as a Python bool: True, False, a NumPy bool or a 0-d NumPy bool array; TypeError
    naming `name` otherwise (a string such as 'no' or an int is no flag)."""
    if not (isinstance(value, (bool, np.bool_)) or _is_0d_bool_array(value)):
        raise TypeError("%s must be True or False, not %s" % (name, describe(value)))
    return bool(value)


def _is_0d_bool_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype == np.bool_


def axis_items(axis: Any) -> list:
    """The entries of an `axis` argument: one (an integer, or a bool, which integer() then refuses)
    or a sequence's."""
    if isinstance(axis, (bool, np.bool_, np.integer)) or not hasattr(axis, "__iter__") or isinstance(axis, str):
        return [axis]
    return list(axis)


def index_tuple(index: Any, label: str) -> tuple[int, ...]:
    """A `label` ("global" or "local") index argument (one integer for 1-d, or one per axis) as a
    tuple of ints; gdap.InvalidArgumentError (as gdap's own index checks) for a string (whose
    characters or bytes are no index entries) or an entry that is no integer, naming its dimension."""
    from ._errors import InvalidArgumentError
    if isinstance(index, (str, bytes)):
        raise InvalidArgumentError("%s index must be an integer or a sequence of integers, not %s"
                                   % (label, describe(index)))
    entries = [index] if isinstance(index, (bool, np.bool_, int, np.integer)) or not hasattr(index, "__iter__") \
        else index
    return tuple(integer(i, "dimension %d: %s[%d]" % (k, label, k), InvalidArgumentError) for k, i in enumerate(entries))

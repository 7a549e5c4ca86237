"""Dimension dictionaries: Python dicts <-> the C gdap_dim struct.

A protocol dim_data is a tuple of dicts; the C API takes gdap_dim structs filled by the
gdap_dim_set_* calls. This module only translates: it reads the keys of each dict (refusing
unknown keys, keys of another dist_type and values of the wrong type, with the same messages as
gdap's JSON reader) and calls the setter; every rule of the protocol is checked by the C library
(gdap_dims_validate, gdap_array_*, gdap_map_create), which names the dimension, key and values.

Dicts handed out have Python ints, bools and tuples; 'indices' is a NumPy int64 array (a copy),
'padding' a 2-tuple. Only the optional keys that were given appear.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

import numpy as np

from . import _gdap_c as _c
from ._args import describe as _describe, integer
from ._errors import InvalidArgumentError, ProtocolError, SizeOverflowError
from ._types import DimData, DimDict, Run, Shape

_COMMON = ("dist_type", "size", "proc_grid_size", "proc_grid_rank")
_KEYS = {  # dist_type: (required, optional)
    "b": (("start", "stop"), ("padding", "periodic")),
    "c": (("start",), ("block_size",)),
    "u": (("indices",), ("one_to_one",)),
}
_ANY_TYPE = ("start", "stop", "padding", "periodic", "block_size", "indices", "one_to_one")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_NOT_N = " ('n', undistributed, is DAP 0.9's; 0.10 writes the empty dictionary {} or 'b' over one grid rank)"


class Dims:
    """The gdap_dim structs of one dim_data, with the index arrays they point to kept alive."""

    __slots__ = ("dims", "_keep")

    def __init__(self, dims: list[Any], keep: list[np.ndarray]) -> None:
        self.dims = dims
        self._keep = keep

    def __len__(self) -> int:
        return len(self.dims)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _int(value: Any, label: str, key: str) -> int:
    v = integer(value, "%s: key '%s'" % (label, key), ProtocolError)
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise SizeOverflowError("%s: key '%s' (%d) does not fit in int64" % (label, key, v))
    return v


def _bool(value: Any, label: str, key: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ProtocolError("%s: key '%s' must be a boolean (True or False), not %s" % (label, key, _describe(value)))
    return bool(value)


def _indices(value: Any, label: str) -> np.ndarray:
    if isinstance(value, (str, bytes, Mapping)):
        raise ProtocolError("%s: key 'indices' must be a 1-d sequence or buffer of integers, not %s"
                            % (label, _describe(value)))
    try:
        a = np.asarray(value)
    except Exception:
        raise ProtocolError("%s: key 'indices' must be a 1-d sequence or buffer of integers" % label) from None
    if a.ndim != 1:
        raise ProtocolError("%s: key 'indices' must be 1-d, not %d-d" % (label, a.ndim))
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if a.dtype.kind == "O":  # Python ints, perhaps too large for int64
        return np.array([_int(v, label, "indices") for v in a], dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise ProtocolError("%s: key 'indices' must hold integers, not %s" % (label, a.dtype))
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and int(a.max()) > _INT64_MAX:
        raise SizeOverflowError("%s: key 'indices' holds %d, which does not fit in int64" % (label, int(a.max())))
    return np.ascontiguousarray(a, dtype=np.int64)


def _label(index: int, dist_type: Optional[str] = None) -> str:
    return "dimension %d ('%s')" % (index, dist_type) if dist_type else "dimension %d" % index


def _check_keys(d: DimDict, dist_type: str, label: str) -> None:
    required, optional = _KEYS[dist_type]
    for key in d:
        if key in _COMMON or key in required or key in optional:
            continue
        if key in _ANY_TYPE:
            raise ProtocolError("%s: key '%s' is not a key of dist_type '%s'" % (label, key, dist_type))
        raise ProtocolError("%s: unknown key %s" % (label, _short(key)))
    for key in _COMMON + required:
        if key not in d:
            raise ProtocolError("%s: missing required key '%s'" % (label, key))


def dim_from_dict(d: DimDict, index: int, keep: list[np.ndarray]) -> Any:
    """A gdap_dim for dimension `index` of a dim_data; arrays it points to are appended to `keep`."""
    if not isinstance(d, Mapping):
        raise ProtocolError("dimension %d: a dimension dictionary must be a dict, not %s"
                            % (index, type(d).__name__))
    dim = _c.gdap_dim()
    if len(d) == 0:
        return dim  # the {} alias: the C library resolves it from the buffer's shape
    if "dist_type" not in d:
        raise ProtocolError("dimension %d: missing required key 'dist_type'" % index)
    dist_type = d["dist_type"]
    if not isinstance(dist_type, str):
        raise ProtocolError("dimension %d: key 'dist_type' must be a string, not %s" % (index, _describe(dist_type)))
    if dist_type not in _KEYS:
        raise ProtocolError("dimension %d: dist_type %s is not 'b', 'c' or 'u'%s"
                            % (index, _short(dist_type), _NOT_N if dist_type == "n" else ""))
    label = _label(index, dist_type)
    _check_keys(d, dist_type, label)
    common = [_int(d[k], label, k) for k in _COMMON[1:]]
    if dist_type == "b":
        _c.gdap_dim_set_block(dim, *common, _int(d["start"], label, "start"), _int(d["stop"], label, "stop"))
        if "padding" in d:
            padding = d["padding"]
            # An ordered pair: a set or a dict has a length but no first and second entry.
            if isinstance(padding, (str, bytes)) or not isinstance(padding, (Sequence, np.ndarray)) \
                    or len(padding) != 2:
                raise ProtocolError("%s: key 'padding' must be a sequence of 2 integers (a tuple), not %s"
                                    % (label, _describe(padding)))
            _c.gdap_dim_set_padding(dim, _int(padding[0], label, "padding"), _int(padding[1], label, "padding"))
        if "periodic" in d:
            _c.gdap_dim_set_periodic(dim, int(_bool(d["periodic"], label, "periodic")))
    elif dist_type == "c":
        _c.gdap_dim_set_cyclic(dim, *common, _int(d["start"], label, "start"), 0)
        if "block_size" in d:
            # gdap_dim_set_cyclic reads block_size 0 as "key absent"; an explicit value, even an
            # invalid 0, is given through the fields so that gdap's validation reports it.
            dim.block_size = _int(d["block_size"], label, "block_size")
            dim.given |= _c.GDAP_KEY_BLOCK_SIZE
    else:
        indices = _indices(d["indices"], label)
        keep.append(indices)
        one_to_one = int(_bool(d["one_to_one"], label, "one_to_one")) if "one_to_one" in d else -1
        _c.gdap_dim_set_unstructured(dim, *common, indices, one_to_one)
    return dim


def dims_from_dim_data(dim_data: DimData) -> Dims:
    """A Dims for a dim_data (a tuple or list of dicts)."""
    if isinstance(dim_data, (str, bytes, Mapping)) or not hasattr(dim_data, "__iter__"):
        raise ProtocolError("dim_data must be a tuple of dimension dictionaries, not %s" % type(dim_data).__name__)
    keep: list[np.ndarray] = []
    return Dims([dim_from_dict(d, i, keep) for i, d in enumerate(dim_data)], keep)


def dim_to_dict(dim: Any) -> dict[str, Any]:
    """The protocol dict of a gdap_dim (as gdap_array_dim / gdap_map_dim hand them out)."""
    dist_type = dim.dist_type
    if dist_type == _c.GDAP_DIST_UNDISTRIBUTED:
        return {}
    t = chr(dist_type)
    out: dict[str, Any] = {"dist_type": t, "size": dim.size, "proc_grid_size": dim.proc_grid_size,
           "proc_grid_rank": dim.proc_grid_rank}
    given = dim.given
    if t == "b":
        out["start"] = dim.start
        out["stop"] = dim.stop
        if given & _c.GDAP_KEY_PADDING:
            out["padding"] = tuple(dim.padding)
        if given & _c.GDAP_KEY_PERIODIC:
            out["periodic"] = bool(dim.periodic)
    elif t == "c":
        out["start"] = dim.start
        if given & _c.GDAP_KEY_BLOCK_SIZE:
            out["block_size"] = dim.block_size
    else:
        out["indices"] = np.frombuffer(dim.indices_bytes(), dtype=np.int64).copy()
        if given & _c.GDAP_KEY_ONE_TO_ONE:
            out["one_to_one"] = bool(dim.one_to_one)
    return out


def shape_entry(value: Any, index: int) -> int:
    """Entry `index` of a buffer shape as an int; a gdap error naming the dimension otherwise."""
    v = integer(value, "dimension %d: shape[%d]" % (index, index), InvalidArgumentError)
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise SizeOverflowError("dimension %d: shape[%d] (%d) does not fit in int64" % (index, index, v))
    return v


def shape_arg(shape: Union[None, int, Sequence[int]]) -> Optional[Shape]:
    """A buffer shape (a sequence of integers, or one integer for 1-d) as a tuple of ints."""
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if isinstance(shape, (str, bytes, Mapping)) or not hasattr(shape, "__iter__"):
        raise InvalidArgumentError("shape must be a sequence of integers, not %s" % type(shape).__name__)
    return tuple(shape_entry(v, i) for i, v in enumerate(shape))


def validate(dim_data: DimData, shape: Union[None, int, Sequence[int]] = None) -> None:
    """Checks a per-process dim_data against every per-process rule of the protocol.

    `shape` is the local buffer's shape (or None: the rules that need it are skipped, and an
    empty dictionary {} is refused). Returns None; raises ProtocolError (or SizeOverflowError)
    with a message naming the dimension, the key and the values.
    """
    dims = dims_from_dim_data(dim_data)
    _c.gdap_dims_validate(dims.dims, shape_arg(shape))


def _one(dim: DimDict) -> tuple[Any, list[np.ndarray]]:
    keep: list[np.ndarray] = []
    return dim_from_dict(dim, 0, keep), keep


def dim_owned_count(dim: DimDict) -> int:
    """Number of global indices this process owns along one dimension (a valid dict)."""
    d, keep = _one(dim)
    return _c.gdap_dim_owned_count(d)


def dim_local_extent(dim: DimDict) -> int:
    """Buffer extent along one dimension that the dict implies (padding included)."""
    d, keep = _one(dim)
    return _c.gdap_dim_local_extent(d)


def dim_global_to_local(dim: DimDict, global_index: int) -> int:
    """Local index of a global index along one dimension; NotFoundError if not held here."""
    d, keep = _one(dim)
    return _c.gdap_dim_global_to_local(d, global_index)


def dim_local_to_global(dim: DimDict, local_index: int) -> int:
    """Global index held at a local index along one dimension."""
    d, keep = _one(dim)
    return _c.gdap_dim_local_to_global(d, local_index)


_RUN_CHUNK = 4096


def dim_runs(dim: DimDict) -> list[Run]:
    """The owned runs of one dimension, as (global_start, length, local_start) tuples, in
    increasing global order: global [g, g + n) lives at local [l, l + n)."""
    d, keep = _one(dim)
    total = _c.gdap_dim_num_runs(d)
    runs: list[Run] = []
    while len(runs) < total:
        runs.extend(_c.gdap_dim_runs(d, len(runs), min(_RUN_CHUNK, total - len(runs))))
    return runs

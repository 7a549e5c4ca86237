"""SPMD agreement on what every rank's part of one GlobalArray must share: the dtype, the pending
reduction, the global shape and the layout. Each rank builds its part of a new array from its own arguments (a section,
a file, a dtype); ranks that disagree would otherwise go on to reinterpret each other's bytes or
wait in a later collective call that only some of them can make. One all-reduce (max of each
rank's token and of its negation) tells every rank whether all tokens are equal; only where they
are not, a second one gathers every rank's token, so that every rank raises the same error naming
the ranks and what each passed."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Optional, TypeVar

import numpy as np

from . import _gdap_c as _c
from ._comm import Comm, told
from ._errors import InvalidArgumentError
from ._local import dtype_from_c, dtype_to_c
from ._map import GlobalMap

T = TypeVar("T")

_DTYPE = slice(0, 3)  # gdap's (code, bits, lanes)
_PENDING, _NDIM, _DIGEST = 3, 4, 5
_SHAPE = 6  # the global shape, one slot per axis, -1 past the last
_SHAPE_SLOTS = 64  # NumPy's most dimensions
_SLOTS = _SHAPE + _SHAPE_SLOTS
_PENDING_NAMES = (None, "sum", "prod", "min", "max")  # None: the sections hold values (GlobalArray's pending)


Parts = tuple[GlobalMap, np.dtype, Optional[str], str]


def agreed_array(comm: Comm, made: Callable[[], T], parts: Callable[[T], Parts]) -> T:
    """made()'s result (a new array on this rank), once every rank of `comm` has made its own and
    all agree on parts(result): (layout, dtype, pending reduction, this rank's device). A rank whose made() raises still
    takes part, after Comm.fail_next (telling_peers): the others raise RemoteError naming it. Ranks
    that disagree all raise InvalidArgumentError naming each rank's dtype, shape or layout."""
    out = told(comm, made, release_agreement)
    agree_parts(comm, *parts(out))
    return out


def agree_parts(comm: Comm, layout: GlobalMap, dtype: np.dtype, pending: Optional[str], device: str) -> None:
    """agreed_array's comparison alone (one all-reduce), for a call that made its part itself, its
    failure told to the peers through release_agreement."""
    _agree(comm, _token(layout, dtype, pending), device, _disagreement)


def _token(layout: GlobalMap, dtype: np.dtype, pending: Optional[str]) -> np.ndarray:
    token = np.full(_SLOTS, -1, np.int64)
    token[_DTYPE] = dtype_to_c(dtype)
    token[_PENDING] = _PENDING_NAMES.index(pending)
    shape = tuple(layout.shape)
    token[_NDIM] = len(shape)
    token[_DIGEST] = _digest(layout)
    token[_SHAPE:_SHAPE + min(len(shape), _SHAPE_SLOTS)] = shape[:_SHAPE_SLOTS]
    return token


def _digest(layout: GlobalMap) -> int:
    """56 bits of a hash of every rank's dim_data: equal on ranks whose layouts are equal."""
    ranks = [[{k: np.asarray(v).tolist() if k == "indices" else v for k, v in sorted(d.items())}
              for d in layout.dim_data(r)] for r in range(layout.nranks)]
    text = json.dumps(ranks, default=lambda v: np.asarray(v).tolist()).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:7], "little")


def _agree(comm: Comm, token: np.ndarray, device: str, disagreement: Callable[[np.ndarray], str],
           compared: Optional[int] = None) -> Optional[np.ndarray]:
    """Every slot's maximum over the ranks (one all-reduce), where every rank's first `compared` slots
    (all: None) equal this one's; else every rank raises InvalidArgumentError(disagreement(every
    rank's token, a row each)). None over NCCL without CuPy, where nothing is compared."""
    n = len(token)
    m = n if compared is None else compared
    both = _allreduce(comm, np.concatenate([token, -token]), "max", device)
    if both is None:  # over NCCL without CuPy: nothing to compare with, every rank still meets
        comm.barrier()
        return None
    if np.array_equal(both[:m], -both[n:n + m]):
        return both[:n]
    table = np.zeros((comm.size, n), np.int64)
    table[comm.rank] = token
    gathered = _allreduce(comm, table.reshape(-1), "sum", device)
    assert gathered is not None
    raise InvalidArgumentError(disagreement(gathered.reshape(comm.size, n)))


# ---- the arguments of one collective call (transposes and reshapes) ----------------------------

# the operation slot's values (append only: a rank's number for a call must not change)
CALLS = ("transpose", "reshape", "squeeze", "cumsum", "cumprod", "expand_dims", "join")
_ORDERS = ("C", "F")
_COPIES = (None, True, False)
_CALL, _ORDER, _COPY, _COUNT, _VALUES = 0, 1, 2, 3, 4


# (operation, axes or target shape, order, copy); a scan's values are (axis, -1 for None, then its
# result dtype as gdap's (code, bits, lanes): scan_values)
Call = tuple[str, tuple[int, ...], str, Optional[bool]]


def agreed_call(comm: Comm, step: Callable[[], tuple[Call, bool]], device: str) -> tuple[Call, Optional[bool]]:
    """(call, every rank's flag): step() reads the call from this rank's arguments (checking them) and
    a flag of this rank's (whether its sections reshape as views), returned once every rank of `comm`
    has read the same call. One all-reduce, in place of a barrier, that also ANDs the flags (None over
    NCCL without CuPy): a rank whose step raises still takes part (the others raise RemoteError
    naming it); ranks whose calls differ all raise InvalidArgumentError naming each rank's call,
    before any of them moves data or returns a view that the others do not."""
    call, mine = told(comm, step, release_agreement)
    token = np.append(_call_token(*call), int(not mine))  # the last slot, not compared: any rank's 1
    agreed = _agree(comm, token, device, _call_disagreement, compared=len(token) - 1)
    return call, None if agreed is None else not agreed[-1]


def scan_values(axis: Optional[int], result: np.dtype) -> tuple[int, ...]:
    """A scan's call values: its axis (-1: None, the flattened array) and its result dtype."""
    return (-1 if axis is None else axis,) + dtype_to_c(result)


def _call_token(op: str, values: tuple[int, ...], order: str, copy: Optional[bool]) -> np.ndarray:
    token = np.full(_VALUES + _SHAPE_SLOTS, -1, np.int64)
    token[[_CALL, _ORDER, _COPY, _COUNT]] = CALLS.index(op), _ORDERS.index(order), _COPIES.index(copy), len(values)
    token[_VALUES:_VALUES + len(values)] = values
    return token


def _call_text(row: np.ndarray) -> str:
    op, values = CALLS[int(row[_CALL])], tuple(int(x) for x in row[_VALUES:_VALUES + int(row[_COUNT])])
    if op == "transpose":
        return "transpose(axes=%s)" % (values,)
    if op == "squeeze":
        return "squeeze(axis=%s)" % (values,)
    if op == "expand_dims":
        return "expand_dims(axis=%s)" % (values,)
    if op == "join":
        return _join_text(values)
    if op in ("cumsum", "cumprod"):
        return "%s(axis=%s, dtype=%s)" % (op, None if values[0] < 0 else values[0], _dtype_text(np.array(values[1:])))
    return "reshape(%s, order=%r, copy=%s)" % (values, _ORDERS[int(row[_ORDER])], _COPIES[int(row[_COPY])])


def _join_text(values: tuple[int, ...]) -> str:
    """np.concatenate / np.stack's call values (_concat.join): kind, axis (-1: None), dtype, casting,
    out given, operand count, a digest of the operands' shapes and kinds, the result's shape."""
    from ._concat import CASTINGS
    stack, axis, dtype, casting, out, count, digest = (values[0], values[1], values[2:5], values[5], values[6],
                                                       values[7], values[8])
    return "%s(%d operands %07x, axis=%s, dtype=%s, casting=%r%s) of shape %s" % (
        "stack" if stack else "concatenate", count, digest % (1 << 28), None if axis < 0 else axis,
        _dtype_text(np.array(dtype)), CASTINGS[casting], ", out=a GlobalArray" if out else "", values[9:])


def _call_disagreement(table: np.ndarray) -> str:
    return ("the ranks' calls on one GlobalArray differ: %s (every rank must make the same call with the same "
            "arguments)" % _by_value([_call_text(row) for row in table]))


def _disagreement(table: np.ndarray) -> str:
    for what, text in (("dtype", _dtype_text), ("pending reduction", _pending_text), ("global shape", _shape_text)):
        values = [text(row) for row in table]
        if len(set(values)) > 1:
            return "the ranks' arrays differ in %s: %s (every rank's part of one array must have the same %s)" % (
                what, _by_value(values), what)
    return ("the ranks' arrays of shape %s differ in layout: %s (every rank must pass the same layout)"
            % (_shape_text(table[0]), _by_value(["layout %d" % i for i in _numbered(table[:, _DIGEST])])))


def _dtype_text(row: np.ndarray) -> str:
    try:
        return dtype_from_c([int(x) for x in row[_DTYPE]]).name
    except Exception:  # noqa: BLE001 - a dtype NumPy cannot name: gdap's code
        return "gdap dtype %s" % tuple(int(x) for x in row[_DTYPE])


def _pending_text(row: np.ndarray) -> str:
    return _PENDING_NAMES[int(row[_PENDING])] or "none"


def _shape_text(row: np.ndarray) -> str:
    ndim = int(row[_NDIM])
    if ndim > _SHAPE_SLOTS:
        return "(%d dimensions)" % ndim
    return str(tuple(int(x) for x in row[_SHAPE:_SHAPE + ndim]))


def _numbered(digests: np.ndarray) -> list[int]:
    """Each rank's layout numbered in order of first appearance (1, 2, ...)."""
    order: dict[int, int] = {}
    return [order.setdefault(int(d), len(order) + 1) for d in digests]


def _by_value(values: list[str]) -> str:
    ranks: dict[str, list[int]] = {}
    for r, v in enumerate(values):
        ranks.setdefault(v, []).append(r)
    return "; ".join("%s on %s" % (v, _ranks_text(rs)) for v, rs in ranks.items())


def _ranks_text(ranks: list[int]) -> str:
    shown = ", ".join(str(r) for r in ranks[:8])
    more = "" if len(ranks) <= 8 else " and %d more" % (len(ranks) - 8)
    return ("rank " if len(ranks) == 1 else "ranks ") + shown + more


def _allreduce(comm: Comm, values: np.ndarray, op: str, device: str) -> Optional[np.ndarray]:
    """values all-reduced over `comm` (host memory; over NCCL through CuPy on `device`, None without CuPy)."""
    from ._redistribute import allreduce
    if comm.kind != "nccl":
        return allreduce(comm, values.copy(), op)
    cupy = _nccl_cupy()
    if cupy is None:
        return None
    with cupy.cuda.Device(int(device.split(":")[1])):
        on_device = cupy.asarray(values)
        cupy.cuda.get_current_stream().synchronize()  # gdap's stream does not wait for CuPy's upload
        allreduce(comm, on_device, op)
        return cupy.asnumpy(on_device)


def _nccl_cupy() -> Any:
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def release_agreement(comm: Comm) -> None:
    """This rank's part of the agreement it cannot reach (telling_peers): the call the others make."""
    if comm.kind == "nccl" and _nccl_cupy() is None:
        comm.barrier()
    else:
        _c.gdap_allreduce(comm._h(), None, _c.GDAP_REDUCE_MAX)

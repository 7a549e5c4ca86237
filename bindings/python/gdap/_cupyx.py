"""Adapters for cupyx.distributed.array (CuPy >= 13): its DistributedArray as a GlobalArray whose
sections are the chunks' own device memory, and a GlobalArray (or gdap sections) as a
DistributedArray whose chunks are views of them. Nothing is copied either way.

Each chunk is one rank (_chunks.chunk_layout says which chunk sets fit a gdap distribution:
regions on a grid, each held by as many chunks). cupyx's partial modes (sum, prod, max, min: the
results of its matmul and reductions) keep their meaning as a pending reduction, which gdap
performs with reduce_scatter when the array is resharded or read; to_cupyx hands a pending array
back in its mode.

This module uses cupyx's DistributedArray constructor and _Chunk, which are not public API: CuPy
14 is what it is tested with (tests/python/test_cupyx.py, on a GPU machine).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from ._chunks import chunk_layout
from ._errors import InvalidArgumentError, UnsupportedError
from ._local import LocalArray, from_dlpack

# cupyx's mode objects name their element-wise operation; gdap's reductions by these names.
_MODE_OF_FUNC = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}


def _cupyx() -> tuple[Any, Any, Any]:
    try:
        import cupy
        from cupyx.distributed import array as dda
        from cupyx.distributed.array import _chunk
    except ImportError as e:  # pragma: no cover - the GPU machines have CuPy
        raise UnsupportedError("cupyx.distributed.array is not importable: %s" % e) from None
    return cupy, dda, _chunk


def mode_name(mode: Any) -> Optional[str]:
    """None for cupyx's REPLICA (None), else 'sum', 'prod', 'max' or 'min' (a mode object, or
    its name as a string)."""
    if mode is None or mode == "replica":
        return None
    if isinstance(mode, str):
        name: Optional[str] = mode
    else:
        func = getattr(getattr(mode, "numpy_func", None), "__name__", None)
        name = _MODE_OF_FUNC.get(str(func))
    if name is None or name not in _MODE_OF_FUNC.values():
        raise UnsupportedError("cupyx mode %r has no gdap reduction (sum, prod, max, min)" % (mode,))
    return name


def from_cupyx(darray: Any) -> Any:
    """A GlobalArray over a cupyx DistributedArray's chunks (single controller, one rank per chunk,
    each on its chunk's device): writes through either are seen by both. A partial mode becomes the
    GlobalArray's pending reduction, performed by gdap on reshard / get / any read. Pending updates
    are flushed first (all_chunks()). Uses only the chunks (no CuPy call), so any object with
    cupyx's mode / shape / all_chunks() / _chunks_map works too. ProtocolError / UnsupportedError
    name the axis, region or chunk that does not fit a gdap distribution."""
    from ._global import GlobalArray
    pending = mode_name(darray.mode)
    if darray.ndim == 0:
        raise UnsupportedError("a 0-d DistributedArray has no chunk grid")
    shape = tuple(darray.shape)
    arrays = darray.all_chunks()  # flushes pending updates into the chunks
    chunks = [(c.index, arrays[dev][i]) for dev, dev_chunks in darray._chunks_map.items()
              for i, c in enumerate(dev_chunks)]
    layout, chunk_of_rank, replicas = chunk_layout(shape, [index for index, _ in chunks])
    sections = [from_dlpack(chunks[k][1], layout.dim_data(r)) for r, k in enumerate(chunk_of_rank)]
    # Without replicas each element is in one chunk: its partial value is the value.
    return GlobalArray.from_sections(sections, layout, pending=pending if replicas > 1 else None)


def _arithmetic(indices: np.ndarray, size: int) -> slice:
    """An unstructured dimension's indices as the slice they form (a chunk's index is a slice)."""
    n = len(indices)
    if n == 0:
        return slice(0, 0)
    step = int(indices[1] - indices[0]) if n > 1 else 1
    if step <= 0 or not np.array_equal(indices, indices[0] + step * np.arange(n)):
        raise UnsupportedError("unstructured indices %s... are not an arithmetic progression: a cupyx chunk is a "
                               "slice" % indices[:4].tolist())
    return slice(int(indices[0]), int(indices[0]) + step * n, step)


def _owned_view(section: LocalArray, dims: Sequence[dict]) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
    """The chunk slice and the view of `section` holding only the owned elements of one rank."""
    index, view = [], []
    for axis, d in enumerate(dims):
        kind = d["dist_type"]
        if kind == "b":
            lo, hi = d.get("padding", (0, 0))
            # Only padding towards a neighbour is a halo; an edge's outer padding is owned.
            lo = lo if d["proc_grid_rank"] > 0 else 0
            hi = hi if d["proc_grid_rank"] < d["proc_grid_size"] - 1 else 0
            index.append(slice(d["start"] + lo, d["stop"] - hi))
            view.append(slice(lo, section.shape[axis] - hi))
        elif kind == "c" and d.get("block_size", 1) == 1:
            index.append(slice(d["start"], d["size"], d["proc_grid_size"]))
            view.append(slice(None))
        elif kind == "u":
            index.append(_arithmetic(np.asarray(d["indices"]), d["size"]))
            view.append(slice(None))
        else:
            raise UnsupportedError("dimension %d ('%s', block_size %s): a cupyx chunk is a slice, which cannot "
                                   "express it" % (axis, kind, d.get("block_size")))
    return tuple(index), tuple(view)


def to_cupyx(x: Any) -> Any:
    """A cupyx DistributedArray whose chunks are views of gdap device sections: `x` is a
    GlobalArray (single controller; a pending reduction becomes the cupyx mode) or a sequence of
    one LocalArray (or __distarray__ producer) per rank, each on a CUDA device, together describing
    every element (replicas allowed). Padding is left out of the chunks (a chunk is the owned
    part). The sections must outlive the returned array, which keeps references to them. Block
    ('b'), cyclic ('c', block size 1) and unstructured dimensions whose indices are a slice."""
    from ._global import GlobalArray
    from ._map import GlobalMap
    cupy, dda, _chunk = _cupyx()
    mode = None
    if isinstance(x, GlobalArray):
        if x.mode != "controller":
            raise UnsupportedError("to_cupyx takes a single-controller GlobalArray (cupyx is single-process)")
        sections = [x.section(r) for r in range(x.nranks)]
        mode = x.pending
    else:
        sections = [s if isinstance(s, LocalArray) else _as_local(s) for s in x]
        GlobalMap([s.dim_data for s in sections], [s.shape for s in sections])  # one distribution, or raise
    if not sections:
        raise InvalidArgumentError("no sections")
    dtype, shape = sections[0].dtype, None
    chunks_map: dict[int, list] = {}
    for rank, section in enumerate(sections):
        device = section.device
        if not device.startswith("cuda:"):
            raise UnsupportedError("rank %d's section is on %s: cupyx chunks live on CUDA devices" % (rank, device))
        if section.dtype != dtype:
            raise InvalidArgumentError("rank %d's dtype %s differs from rank 0's %s" % (rank, section.dtype, dtype))
        dims = section.dim_data
        rank_shape = tuple(d["size"] for d in dims)
        if shape is not None and rank_shape != shape:
            raise InvalidArgumentError("rank %d's global shape %s differs from rank 0's %s" % (rank, rank_shape, shape))
        shape = rank_shape
        index, view = _owned_view(section, dims)
        dev = int(device.split(":")[1])
        with cupy.cuda.Device(dev):
            array = cupy.from_dlpack(section)[view]
            ready = cupy.cuda.Event()
            ready.record()
        chunks_map.setdefault(dev, []).append(_chunk._Chunk(array, ready, index, prevent_gc=section))
    modes = {None: dda.REPLICA, "sum": dda.SUM, "prod": dda.PROD, "max": dda.MAX, "min": dda.MIN}
    return dda.DistributedArray(shape, dtype, chunks_map, modes[mode])


def _as_local(x: Any) -> LocalArray:
    from ._local import from_distarray
    return from_distarray(x)


__all__ = ["from_cupyx", "to_cupyx"]

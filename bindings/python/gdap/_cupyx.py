"""Adapters for cupyx.distributed.array (CuPy >= 13): its DistributedArray as a gdap distribution
whose sections are the chunks' own device memory, and gdap sections as a DistributedArray whose
chunks are views of them. Nothing is copied either way.

A cupyx array is a set of chunks, each a tuple of slices of the global array held by one device
(a device may hold several). gdap sees each chunk as one rank of a process grid:

  - the chunks must tile the array as a Cartesian product of per-axis pieces, each element in
    exactly one chunk (cupyx's replicas have no gdap counterpart, and are refused);
  - along an axis, pieces of step 1 that tile [0, n) become a 'b' dimension (irregular blocks
    allowed), and P pieces of step P starting at 0 .. P-1 a 'c' dimension;
  - ranks are numbered in C order over the pieces' coordinates (sorted by start).

This module uses cupyx's DistributedArray constructor and _Chunk, which are not public API: CuPy
14.2 is what it is tested with (tests/python/test_cupyx.py, on a GPU machine).
"""

import itertools
import math

from ._errors import InvalidArgumentError, ProtocolError, UnsupportedError
from ._local import LocalArray, from_dlpack
from ._map import GlobalMap


def _cupyx():
    try:
        import cupy
        from cupyx.distributed import array as dda
        from cupyx.distributed.array import _chunk
    except ImportError as e:  # pragma: no cover - the GPU machines have CuPy
        raise UnsupportedError("cupyx.distributed.array is not importable: %s" % e) from None
    return cupy, dda, _chunk


class _Axis:
    """One axis of a chunk grid: its pieces as (start, stop, step), sorted, and its kind."""

    def __init__(self, axis, size, pieces):
        self.size = size
        self.pieces = sorted(pieces)
        steps = {step for _, _, step in self.pieces}
        if steps == {1}:
            self.kind = "b"
            at = 0
            for start, stop, _ in self.pieces:
                if start != at:
                    raise ProtocolError("axis %d: the chunks' slices %s do not tile [0, %d) in order without gaps "
                                        "or overlaps" % (axis, _text(self.pieces), size))
                at = stop
            if at != size:
                raise ProtocolError("axis %d: the chunks' slices end at %d, not at the size %d" % (axis, at, size))
        elif len(steps) == 1 and steps == {len(self.pieces)} and [p[0] for p in self.pieces] == list(range(len(self.pieces))):
            self.kind = "c"
        else:
            raise UnsupportedError("axis %d: slices %s are neither contiguous blocks nor a cyclic set (step P, "
                                   "starts 0 .. P-1); gdap cannot take this index map" % (axis, _text(self.pieces)))
        self.coord = {piece: c for c, piece in enumerate(self.pieces)}

    def dim(self, coord):
        start, stop, _ = self.pieces[coord]
        d = dict(dist_type=self.kind, size=self.size, proc_grid_size=len(self.pieces), proc_grid_rank=coord,
                 start=start)
        if self.kind == "b":
            d["stop"] = stop
        return d


def _text(pieces):
    return ", ".join("%d:%d:%d" % p for p in pieces)


def _pieces(index, shape):
    return tuple(s.indices(n) for s, n in zip(index, shape))


def from_cupyx(darray):
    """A cupyx DistributedArray as (GlobalMap, sections): sections[r] is rank r's LocalArray over
    chunk r's device memory (its device is the chunk's), so writes through either are seen by
    both. The array must be in REPLICA mode with no pending updates left unflushed (this calls
    all_chunks(), which flushes them). ProtocolError / UnsupportedError say which axis or chunk
    does not fit a gdap distribution. Uses only the array's chunks (no CuPy call), so any
    object with cupyx's mode / shape / all_chunks() / _chunks_map shape works too."""
    if darray.mode is not None and str(darray.mode) != "replica":  # cupyx's REPLICA is None
        raise InvalidArgumentError("the array is in mode '%s': its chunks hold partial values; "
                                   "call change_mode('replica') first" % darray.mode)
    if darray.ndim == 0:
        raise UnsupportedError("a 0-d DistributedArray has no chunk grid")
    shape = tuple(darray.shape)
    arrays = darray.all_chunks()  # flushes pending updates into the chunks
    chunks = [(dev, _pieces(c.index, shape), arrays[dev][i])
              for dev, dev_chunks in darray._chunks_map.items() for i, c in enumerate(dev_chunks)]
    axes = [_Axis(a, n, {pieces[a] for _, pieces, _ in chunks}) for a, n in enumerate(shape)]
    grid = [len(ax.pieces) for ax in axes]
    by_coords = {}
    for dev, pieces, array in chunks:
        coords = tuple(ax.coord[p] for ax, p in zip(axes, pieces))
        if coords in by_coords:
            raise ProtocolError("chunks on devices %d and %d both hold %s: replicas are not a gdap distribution"
                                % (by_coords[coords][0], dev, _text(pieces)))
        by_coords[coords] = (dev, array)
    if len(by_coords) != math.prod(grid):
        missing = next(c for c in itertools.product(*map(range, grid)) if c not in by_coords)
        raise ProtocolError("the chunks are not a grid: no chunk holds %s"
                            % _text(tuple(ax.pieces[c] for ax, c in zip(axes, missing))))
    dim_data, sections = [], []
    for coords in itertools.product(*map(range, grid)):  # C order: rank = position here
        dims = tuple(ax.dim(c) for ax, c in zip(axes, coords))
        dim_data.append(dims)
        sections.append(from_dlpack(by_coords[coords][1], dims))
    return GlobalMap(dim_data), sections


def _owned_view(section, dims):
    """The chunk slice and the view of `section` holding only the owned elements of one rank."""
    index, view = [], []
    for axis, d in enumerate(dims):
        kind = d["dist_type"]
        if kind == "b":
            lo, hi = d.get("padding", (0, 0))
            index.append(slice(d["start"] + lo, d["stop"] - hi))
            view.append(slice(lo, section.shape[axis] - hi))
        elif kind == "c" and d.get("block_size", 1) == 1:
            index.append(slice(d["start"], d["size"], d["proc_grid_size"]))
            view.append(slice(None))
        else:
            raise UnsupportedError("dimension %d ('%s', block_size %s): a cupyx chunk is a slice, which cannot "
                                   "express it" % (axis, kind, d.get("block_size")))
    return tuple(index), tuple(view)


def to_cupyx(sections):
    """A cupyx DistributedArray (REPLICA mode) whose chunks are views of gdap device sections:
    `sections` holds one LocalArray (or __distarray__ producer) per rank, each on a CUDA device,
    together describing every element once. Padding is left out of the chunks (a chunk is the
    owned part). The sections must outlive the returned array, which keeps references to them.
    Block ('b', padded or not) and cyclic ('c', block size 1) dimensions only."""
    cupy, dda, _chunk = _cupyx()
    sections = [s if isinstance(s, LocalArray) else _as_local(s) for s in sections]
    if not sections:
        raise InvalidArgumentError("no sections")
    dtype, shape, chunks_map = sections[0].dtype, None, {}
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
    GlobalMap([s.dim_data for s in sections], [s.shape for s in sections])  # every element once, or raise
    return dda.DistributedArray(shape, dtype, chunks_map, dda.REPLICA)


def _as_local(x):
    from ._local import from_distarray
    return from_distarray(x)


__all__ = ["from_cupyx", "to_cupyx"]

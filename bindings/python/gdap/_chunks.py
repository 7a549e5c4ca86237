"""Chunk sets as gdap distributions: a set of chunks, each a tuple of slices of the global array (a
cupyx.distributed.array chunk, a JAX shard's index), read as one rank each of a process grid.

  - The distinct chunk regions must tile the array as a Cartesian product of per-axis pieces.
    Along an axis, pieces of step 1 that tile [0, n) become a 'b' dimension (irregular blocks
    allowed), and P pieces of step P starting at 0 .. P-1 a 'c' dimension.
  - Every region may be held by k >= 1 chunks (replicas: JAX's replicated shardings, cupyx's replica
    and partial modes), the same k for every region. With k > 1 axis 0 becomes unstructured over
    P0 * k grid coordinates, coordinate c0 * k + j holding region c0's rows for the j-th replica
    (one_to_one false), since the protocol has no replicated block.
  - Ranks are numbered in C order over the grid coordinates (pieces sorted by start).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ._errors import ProtocolError, UnsupportedError
from ._map import GlobalMap

Piece = tuple[int, int, int]  # (start, stop, step) of one axis


class _Axis:
    """One axis of a chunk grid: its pieces, sorted, and its kind ('b' or 'c')."""

    def __init__(self, axis: int, size: int, pieces: set) -> None:
        self.size = size
        self.pieces: list[Piece] = sorted(pieces)
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
        elif (len(steps) == 1 and steps == {len(self.pieces)}
              and [p[0] for p in self.pieces] == list(range(len(self.pieces)))):
            self.kind = "c"
        else:
            raise UnsupportedError("axis %d: slices %s are neither contiguous blocks nor a cyclic set (step P, "
                                   "starts 0 .. P-1); gdap cannot take this index map" % (axis, _text(self.pieces)))
        self.coord = {piece: c for c, piece in enumerate(self.pieces)}

    def dim(self, coord: int) -> dict:
        start, stop, _ = self.pieces[coord]
        d = dict(dist_type=self.kind, size=self.size, proc_grid_size=len(self.pieces), proc_grid_rank=coord,
                 start=start)
        if self.kind == "b":
            d["stop"] = stop
        return d

    def replicated_dim(self, coord: int, replicas: int) -> dict:
        """Grid coordinate `coord` of this axis spread over `replicas` times as many coordinates,
        as an unstructured dimension holding the piece coord // replicas."""
        start, stop, step = self.pieces[coord // replicas]
        return dict(dist_type="u", size=self.size, proc_grid_size=len(self.pieces) * replicas, proc_grid_rank=coord,
                    indices=np.arange(start, stop, step, dtype=np.int64), one_to_one=False)


def _text(pieces: Sequence[Piece]) -> str:
    return ", ".join("%d:%d:%d" % p for p in pieces)


def pieces_of(index: Sequence[slice], shape: Sequence[int]) -> tuple[Piece, ...]:
    """A chunk's slices as (start, stop, step) per axis."""
    if len(index) != len(shape):
        raise ProtocolError("a chunk index has %d slices for %d axes" % (len(index), len(shape)))
    return tuple(s.indices(n) for s, n in zip(index, shape))


def chunk_layout(shape: Sequence[int], indices: Sequence[Sequence[slice]]) -> tuple[GlobalMap, list[int], int]:
    """(map, chunk_of_rank, replicas): the distribution in which rank r holds chunk
    chunk_of_rank[r], for chunks whose regions are `indices` (tuples of slices), as the module
    says, and how many chunks hold each region. ProtocolError or UnsupportedError name the axis,
    the region or the chunk that does not fit."""
    shape = tuple(shape)
    if not shape:
        raise UnsupportedError("a 0-d array has no chunk grid")
    if not indices:
        raise ProtocolError("there are no chunks")
    pieces = [pieces_of(ix, shape) for ix in indices]
    axes = [_Axis(a, n, {p[a] for p in pieces}) for a, n in enumerate(shape)]
    grid = [len(ax.pieces) for ax in axes]
    holders: dict[tuple[int, ...], list[int]] = {}
    for k, p in enumerate(pieces):
        holders.setdefault(tuple(ax.coord[q] for ax, q in zip(axes, p)), []).append(k)
    if len(holders) != math.prod(grid):
        missing = next(c for c in itertools.product(*map(range, grid)) if c not in holders)
        raise ProtocolError("the chunks are not a grid: no chunk holds %s"
                            % _text(tuple(ax.pieces[c] for ax, c in zip(axes, missing))))
    counts = {len(ks) for ks in holders.values()}
    if len(counts) != 1:
        few = min(holders.items(), key=lambda kv: len(kv[1]))
        many = max(holders.items(), key=lambda kv: len(kv[1]))

        def region_text(coords: tuple[int, ...]) -> str:
            return _text(tuple(a.pieces[c] for a, c in zip(axes, coords)))

        raise UnsupportedError("region %s is held by %d chunk%s but region %s by %d: gdap takes replicas only when "
                               "every region has as many" % (region_text(few[0]), len(few[1]), "" if len(few[1]) == 1
                                                             else "s", region_text(many[0]), len(many[1])))
    replicas = counts.pop()
    dim_data, chunk_of_rank = [], []
    coords_grid = [grid[0] * replicas] + grid[1:]
    for coords in itertools.product(*map(range, coords_grid)):  # C order: rank = position here
        region = (coords[0] // replicas,) + coords[1:]
        first = axes[0].replicated_dim(coords[0], replicas) if replicas > 1 else axes[0].dim(coords[0])
        dim_data.append((first,) + tuple(ax.dim(c) for ax, c in zip(axes[1:], coords[1:])))
        chunk_of_rank.append(holders[region][coords[0] % replicas])
    return GlobalMap(dim_data), chunk_of_rank, replicas

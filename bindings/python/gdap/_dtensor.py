"""Adapters for PyTorch DTensor (SPMD: one process per rank): a DTensor's local shard as this
rank's section of a GlobalArray whose layout its placements give, and back. Nothing is copied: the
shard and the section share memory (DLPack).

How placements become a layout. The device mesh must list the communicator's ranks in C order
(init_device_mesh's own order). Its dimensions are walked in order and grouped by the tensor
dimension they split: Shard(d) moves the walk to tensor dimension d (which may not go back to an
earlier one: gdap's grid is in C order over the tensor's dimensions, as the mesh is over its own);
Replicate and Partial join the group of the tensor dimension the walk is on. A tensor dimension
split by exactly one Shard is a block dimension with DTensor's split (torch.chunk: ceil(n / m)
rows each, the last ones shorter or empty: uneven Shard included); any other group becomes an
unstructured dimension whose grid coordinates list the rows they hold (replicas share rows,
one_to_one false). Partial(op) becomes the GlobalArray's pending reduction (sum, prod, max, min),
and then a Replicate's copies beyond the first hold nothing, so that no element counts twice.

Back (to_dtensor): a layout of even blocks (no halos) over a grid whose axes of more than one rank
match the mesh's dimensions in order gives Shard placements; gdap's replicated layout gives
Replicate; a pending reduction over the replicated layout gives Partial.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._errors import InvalidArgumentError, UnsupportedError
from ._map import GlobalMap

_PARTIAL_OPS = {"sum": "sum", "product": "prod", "prod": "prod", "max": "max", "min": "min"}


def _kind(placement: Any) -> str:
    name = type(placement).__name__
    if name in ("Shard", "Replicate", "Partial"):
        return name
    raise UnsupportedError("placement %r is not Shard, Replicate or Partial" % (placement,))


def _mesh_shape_and_ranks(mesh: Any) -> tuple[tuple[int, ...], list[int]]:
    ranks = mesh.mesh
    shape = tuple(int(n) for n in ranks.shape)
    return shape, [int(r) for r in np.asarray(ranks.tolist()).reshape(-1)]


def placements_layout(shape: tuple[int, ...], mesh_shape: tuple[int, ...], placements: list,
                      ) -> tuple[GlobalMap, Optional[str]]:
    """The layout (over prod(mesh_shape) ranks in C order) and pending reduction of a DTensor."""
    ndim = len(shape)
    if ndim == 0:
        raise UnsupportedError("a 0-d DTensor has no grid")
    if len(placements) != len(mesh_shape):
        raise InvalidArgumentError("%d placements for a mesh of %d dimensions" % (len(placements), len(mesh_shape)))
    groups: list[list[int]] = [[] for _ in range(ndim)]
    at, pending = 0, None
    for j, p in enumerate(placements):
        kind = _kind(p)
        if kind == "Shard":
            d = p.dim % ndim
            if d < at:
                raise UnsupportedError("mesh dimension %d shards tensor dimension %d after dimension %d: gdap's grid "
                                       "runs over the tensor's dimensions in order, as the mesh's" % (j, d, at))
            at = d
        elif kind == "Partial":
            op = _PARTIAL_OPS.get(str(getattr(p, "reduce_op", "sum")).lower().split(".")[-1])
            if op is None or (pending is not None and op != pending):
                raise UnsupportedError("Partial(%s) has no gdap reduction or differs from another Partial"
                                       % getattr(p, "reduce_op", "?"))
            pending = op
        groups[at].append(j)
    grid = [int(np.prod([mesh_shape[j] for j in g], dtype=np.int64)) for g in groups]

    def rows(axis: int, coord: int) -> tuple[int, int, bool]:
        """(lo, hi, held) of tensor dimension `axis` at group coordinate `coord`."""
        members = groups[axis]
        sub = np.unravel_index(coord, [mesh_shape[j] for j in members]) if members else ()
        lo, hi, held = 0, shape[axis], True
        for j, c in zip(members, sub):
            kind = _kind(placements[j])
            if kind == "Shard":
                width = -(-(hi - lo) // mesh_shape[j])  # torch.chunk's split
                lo, hi = min(lo + int(c) * width, hi), min(lo + (int(c) + 1) * width, hi)
            elif kind == "Replicate" and pending is not None and int(c) != 0:
                held = False  # one copy of each partial value, so that none counts twice
        return lo, hi, held

    def dim(axis: int, coord: int) -> dict:
        lo, hi, held = rows(axis, coord)
        members = groups[axis]
        common = dict(size=shape[axis], proc_grid_size=grid[axis], proc_grid_rank=coord)
        if len(members) == 1 and _kind(placements[members[0]]) == "Shard" or not members:
            return dict(dist_type="b", start=lo, stop=hi, **common)
        return dict(dist_type="u", indices=np.arange(lo, hi if held else lo, dtype=np.int64), **common)

    dim_data = []
    for r in range(int(np.prod(grid, dtype=np.int64))):
        coords = np.unravel_index(r, grid)
        dim_data.append(tuple(dim(i, int(c)) for i, c in enumerate(coords)))
    return GlobalMap(dim_data), pending


def from_dtensor(dtensor: Any, comm: Any) -> Any:
    """Collective (SPMD): the GlobalArray whose section on this rank is the DTensor's local shard,
    no copy; `comm` is a gdap.Comm (NCCL or MPI) over the mesh's ranks, in the same order."""
    from ._global import GlobalArray, _spmd
    ctx = _spmd(comm, None)
    mesh_shape, ranks = _mesh_shape_and_ranks(dtensor.device_mesh)
    if ranks != list(range(ctx.nranks)):
        raise UnsupportedError("the device mesh holds ranks %s; gdap needs every rank of the communicator (%d) in "
                               "C order" % (ranks[:8], ctx.nranks))
    layout, pending = placements_layout(tuple(dtensor.shape), mesh_shape, list(dtensor.placements))
    local = dtensor.to_local()
    rank = ctx.ranks[0]
    want = tuple(layout.local_shape(rank))
    if tuple(local.shape) != want:  # a Replicate copy that holds nothing under a Partial
        local = local[tuple(slice(0, n) for n in want)]
    return GlobalArray.from_sections(local, layout, comm=comm, pending=pending)


def to_dtensor(a: Any, mesh: Any) -> Any:
    """This rank's section as the local shard of a DTensor on `mesh` (SPMD), no copy."""
    try:
        import torch
        from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
    except ImportError as e:
        raise UnsupportedError("torch.distributed.tensor is not importable: %s" % e) from None
    if a.mode != "spmd":
        raise UnsupportedError("to_dtensor takes an SPMD GlobalArray (DTensor runs one process per rank)")
    mesh_shape, ranks = _mesh_shape_and_ranks(mesh)
    if ranks != list(range(a.nranks)):
        raise UnsupportedError("the device mesh holds ranks %s; gdap's are 0 .. %d in C order" % (ranks[:8],
                                                                                                  a.nranks - 1))
    placements = _placements_of(a, mesh_shape, Shard, Replicate, Partial)
    local = torch.from_dlpack(a.section())
    stride = tuple(int(np.prod(a.shape[i + 1:], dtype=np.int64)) for i in range(a.ndim))
    return DTensor.from_local(local, mesh, placements, run_check=False, shape=torch.Size(a.shape), stride=stride)


def _placements_of(a: Any, mesh_shape: tuple[int, ...], Shard: Any, Replicate: Any, Partial: Any) -> list:
    from ._global import _replicated_layout, same_layout
    if same_layout(a.layout, _replicated_layout(a.shape, a.nranks)):
        if a.pending is not None:
            ops = {"sum": "sum", "prod": "product", "max": "max", "min": "min"}
            return [Partial(ops[a.pending])] * len(mesh_shape)
        return [Replicate()] * len(mesh_shape)
    if a.pending is not None:
        a = a.settled()
    from . import layout as layouts
    grid = tuple(a.layout.grid_shape)
    split = [i for i, g in enumerate(grid) if g > 1]
    if not same_layout(a.layout, layouts.block(a.shape, grid)) or [grid[i] for i in split] != list(mesh_shape):
        raise UnsupportedError("the layout (grid %s) is not even blocks over the mesh %s in order: reshard to "
                               "gdap.layout.block(shape, grid) with the mesh's extents first" % (grid, mesh_shape))
    return [Shard(i) for i in split]

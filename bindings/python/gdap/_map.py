"""GlobalMap: the global view of a distribution (every rank's dim_data), over a C gdap_map handle;
and the process-grid helpers. Every check and look-up is the C library's (gdap_map_*)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

import numpy as np

from . import _gdap_c as _c
from ._args import index_tuple, integer
from ._comm import told
from ._dims import dims_from_dim_data, dim_to_dict, shape_entry
from ._errors import ProtocolError, SizeOverflowError
from ._handle import Handle
from ._types import DimData, Index, Run, Shape

if TYPE_CHECKING:
    from ._comm import Comm
    from ._dims import Dims

_RUN_CHUNK = 4096


def grid_rank_to_coords(rank: int, grid_shape: Sequence[int]) -> Shape:
    """Grid coordinates (C order, last fastest, as MPI_Cart_create) of `rank`."""
    return _c.gdap_grid_rank_to_coords(tuple(grid_shape), integer(rank, "rank"))


def grid_coords_to_rank(coords: Sequence[int], grid_shape: Sequence[int]) -> int:
    """The rank at grid coordinates `coords` (C order)."""
    return _c.gdap_grid_coords_to_rank(tuple(grid_shape), tuple(coords))


def _rank_dim_data(item: Any, rank: int) -> tuple[Any, Optional[Sequence[int]]]:
    """(dim_data, local shape or None) of one rank's entry."""
    if hasattr(item, "__distarray__"):
        item = item.__distarray__()
    if isinstance(item, Mapping) and "dim_data" in item:
        buffer = item.get("buffer")
        shape = getattr(buffer, "shape", None)
        if shape is None and buffer is not None and not hasattr(buffer, "__cuda_array_interface__"):
            try:
                shape = memoryview(buffer).shape
            except TypeError:
                shape = None
        return item["dim_data"], shape
    if hasattr(item, "dim_data") and hasattr(item, "shape"):  # a LocalArray
        return item.dim_data, item.shape
    if isinstance(item, Mapping) or isinstance(item, (str, bytes)):
        raise ProtocolError("rank %d: expected a dim_data (tuple of dicts), a distbuffer or a LocalArray" % rank)
    return item, None


def _rank_dims(item: Any, rank: int, local_shape: Optional[Sequence[int]] = None) -> Dims:
    """The Dims of one rank's entry, each {} resolved from its buffer's shape or `local_shape`."""
    dim_data, shape = _rank_dim_data(item, rank)
    if local_shape is not None:
        shape = local_shape
    try:
        dims = dims_from_dim_data(dim_data)
    except (ProtocolError, SizeOverflowError) as e:  # name the rank, as the map's range checks do
        raise type(e)("rank %d, %s" % (rank, e)) from None
    for i, dim in enumerate(dims.dims):
        if dim.dist_type == _c.GDAP_DIST_UNDISTRIBUTED and shape is not None:
            _c.gdap_dim_set_undistributed(dim, shape_entry(shape[i], i))
    return dims


def release_map(comm: Comm) -> None:
    """This rank's part of a gdap_map_create_collective it cannot make (telling_peers: it fails at
    the agreement, before reading its arguments)."""
    _c.gdap_map_create_collective(comm._h(), -1, [])


class GlobalMap(Handle):
    """The global view of one distribution, checked against every cross-process rule.

    GlobalMap(ranks) takes one entry per rank, in rank order: a dim_data (tuple of dicts), a
    distbuffer dict, an object with __distarray__, or a LocalArray. Empty dicts {} are resolved
    from the entry's buffer shape, or from `local_shapes[rank]` when given. Raises ProtocolError
    naming the rank and dimension when the dim_data do not form one distribution.

    Maps compare equal when they describe the same distribution, and pickle as every rank's
    dim_data (unpickling checks them again).
    """

    _hash: Optional[int] = None

    def __init__(self, ranks: Iterable[Any], local_shapes: Optional[Sequence[Sequence[int]]] = None) -> None:
        ranks = list(ranks)
        if not ranks:
            raise ProtocolError("a distribution needs at least one rank")
        dims: list[Any] = []
        keep: list[Dims] = []
        for r, item in enumerate(ranks):
            rank_dims = _rank_dims(item, r, None if local_shapes is None else local_shapes[r])
            if keep and len(rank_dims) != len(keep[0]):
                raise ProtocolError("rank %d has %d dimensions but rank 0 has %d" % (r, len(rank_dims), len(keep[0])))
            dims.extend(rank_dims.dims)
            keep.append(rank_dims)
        handle = _c.gdap_map_create(len(keep), len(keep[0]), dims)
        self._adopt(handle, _c.gdap_map_destroy)

    @classmethod
    def collective(cls, comm: Comm, local: Any, local_shape: Optional[Sequence[int]] = None) -> GlobalMap:
        """Collective over `comm` (a gdap.Comm): the global view built from each rank's own entry,
        `local` (a dim_data, a distbuffer, an object with __distarray__, or a LocalArray; each {}
        resolved from its buffer's shape or `local_shape`). Every rank gets the same map, or the
        same error naming the offending rank and dimension; a rank whose own entry cannot be read
        raises its error and the others RemoteError naming it."""
        dims = told(comm, lambda: _rank_dims(local, comm.rank, local_shape), release_map)
        self = cls.__new__(cls)
        self._adopt(_c.gdap_map_create_collective(comm._h(), len(dims), dims.dims), _c.gdap_map_destroy)
        return self

    @classmethod
    def root(cls, nranks: int, shape: Sequence[int], root: int = 0) -> GlobalMap:
        """The whole array of `shape` on rank `root` of `nranks`, nothing on the others: the
        layout of a gather's result or a scatter's source (gdap_map_create_root)."""
        shape = tuple(shape)
        return cls._made(_c.gdap_map_create_root(integer(nranks, "nranks"), len(shape), shape, integer(root, "root")))

    @classmethod
    def replicated(cls, nranks: int, shape: Sequence[int]) -> GlobalMap:
        """The whole array of `shape` on every one of `nranks` ranks: the layout of an allgather's
        result or a broadcast's destination (gdap_map_create_replicated)."""
        shape = tuple(shape)
        return cls._made(_c.gdap_map_create_replicated(integer(nranks, "nranks"), len(shape), shape))

    @classmethod
    def _made(cls, handle: Any) -> GlobalMap:
        self = cls.__new__(cls)
        self._adopt(handle, _c.gdap_map_destroy)
        return self

    @property
    def ndim(self) -> int:
        return _c.gdap_map_ndim(self._h())

    @property
    def nranks(self) -> int:
        return _c.gdap_map_nranks(self._h())

    @property
    def shape(self) -> Shape:
        """The global shape."""
        return _c.gdap_map_global_shape(self._h())

    @property
    def grid_shape(self) -> Shape:
        """The process grid shape (each dimension's proc_grid_size)."""
        return _c.gdap_map_grid_shape(self._h())

    def dim_data(self, rank: int) -> tuple[dict[str, Any], ...]:
        """Rank `rank`'s dim_data, a tuple of dicts."""
        h, rank = self._h(), integer(rank, "rank")
        return tuple(dim_to_dict(_c.gdap_map_dim(h, rank, i)) for i in range(_c.gdap_map_ndim(h)))

    def local_shape(self, rank: int) -> Shape:
        """Rank `rank`'s buffer shape, padding included."""
        return _c.gdap_map_local_shape(self._h(), integer(rank, "rank"))

    def owned_shape(self, rank: int) -> Shape:
        """Rank `rank`'s owned indices per dimension."""
        return _c.gdap_map_owned_shape(self._h(), integer(rank, "rank"))

    def owned_count(self, rank: int) -> int:
        """Number of elements rank `rank` owns."""
        return _c.gdap_map_owned_count(self._h(), integer(rank, "rank"))

    def owner(self, global_index: Index) -> tuple[int, Shape]:
        """(rank, local index tuple) owning a global index (for replicas, the lowest rank)."""
        return _c.gdap_map_owner(self._h(), index_tuple(global_index, "global"))

    def owners(self, global_index: Index) -> tuple[int, ...]:
        """Every rank owning a global index, ascending (a tuple)."""
        h = self._h()
        ranks, count = _c.gdap_map_owners(h, index_tuple(global_index, "global"), _c.gdap_map_nranks(h))
        return ranks

    def local_to_global(self, rank: int, local_index: Index) -> Shape:
        """The global index held at a local index of rank `rank`'s buffer."""
        return _c.gdap_map_local_to_global(self._h(), integer(rank, "rank"), index_tuple(local_index, "local"))

    def runs(self, rank: int, dim: int) -> list[Run]:
        """Rank `rank`'s owned runs along dimension `dim`: (global_start, length, local_start)
        tuples in increasing global order."""
        h, rank, dim = self._h(), integer(rank, "rank"), integer(dim, "dim")
        total = _c.gdap_map_num_runs(h, rank, dim)
        runs: list[Run] = []
        while len(runs) < total:
            runs.extend(_c.gdap_map_runs(h, rank, dim, len(runs), min(_RUN_CHUNK, total - len(runs))))
        return runs

    def owner_batch(self, global_indices: Any) -> tuple[np.ndarray, np.ndarray]:
        """Owners of many global indices at once, on the host: `global_indices` is (count, ndim)
        (or (count,) for 1-d); returns (ranks, locals) NumPy int64 arrays, rank -1 where no rank
        owns the index. (Device arrays: call gdap._gdap_c.gdap_map_owner_batch with addresses.)"""
        h = self._h()
        ndim = _c.gdap_map_ndim(h)
        g = np.ascontiguousarray(global_indices, dtype=np.int64)
        if g.ndim == 1 and ndim == 1:
            g = g.reshape(-1, 1)
        if g.ndim != 2 or g.shape[1] != ndim:
            raise ValueError("global_indices must have shape (count, %d), not %s" % (ndim, g.shape))
        count = g.shape[0]
        ranks = np.empty(count, dtype=np.int64)
        locals_ = np.empty((count, ndim), dtype=np.int64)
        _c.gdap_map_owner_batch(ranks.ctypes.data, locals_.ctypes.data, h, g.ctypes.data, count,
                                (_c.GDAP_DEVICE_CPU, 0), None)
        return ranks, locals_

    def __eq__(self, other: object) -> bool:
        """Two maps are equal when they describe the same distribution: as many ranks, each with the
        same dim_data (a closed map equals only itself)."""
        if not isinstance(other, GlobalMap):
            return NotImplemented
        if self is other:
            return True
        if self.closed or other.closed or self.nranks != other.nranks:
            return False
        return all(_same_dim_data(self.dim_data(r), other.dim_data(r)) for r in range(self.nranks))

    def __hash__(self) -> int:
        # From what never changes in a map, kept so that a map hashes the same after close().
        if self._hash is None:
            self._hash = hash((self.shape, self.grid_shape, self.nranks))
        return self._hash

    def __reduce__(self) -> tuple[type[GlobalMap], tuple[list[tuple[dict[str, Any], ...]]]]:
        """Pickles as every rank's dim_data: unpickling builds (and checks) the map again."""
        return (GlobalMap, ([self.dim_data(r) for r in range(self.nranks)],))

    def __repr__(self) -> str:
        if self._handle is None:
            return "<gdap.GlobalMap (closed)>"
        from ._describe import axes_text
        axes = axes_text(self)
        return "<gdap.GlobalMap shape=%s grid=%s%s>" % (self.shape, self.grid_shape, "; " + axes if axes else "")


def _same_dim_data(a: tuple[dict[str, Any], ...], b: tuple[dict[str, Any], ...]) -> bool:
    """Equal dicts, key by key ('indices' are NumPy arrays, compared element by element)."""
    return len(a) == len(b) and all(
        x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) if k == "indices" else x[k] == y[k] for k in x)
        for x, y in zip(a, b))

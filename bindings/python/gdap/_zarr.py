"""Zarr v3 stores: collective save and load of a distributed array (gdap_zarr_save,
gdap_zarr_load, gdap_zarr_shape_read). Each rank writes or reads only the chunks it needs; the files
are ordinary Zarr v3 stores that zarr-python and TensorStore read and write."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from . import _gdap_c as _c
from ._args import flag, integer
from ._local import LocalArray, dtype_from_c, empty
from ._comm import telling_peers
from ._context import handle
from ._paths import c_name
from ._redistribute import _section
from ._types import DeviceLike, SectionLike, Shape

if TYPE_CHECKING:
    from ._comm import Comm
    from ._map import GlobalMap

_CODECS = {"raw": _c.GDAP_ZARR_RAW, None: _c.GDAP_ZARR_RAW, "zstd": _c.GDAP_ZARR_ZSTD,
           "blosc-lz4": _c.GDAP_ZARR_BLOSC_LZ4, "blosc-zstd": _c.GDAP_ZARR_BLOSC_ZSTD}
_SHUFFLES = {"shuffle": _c.GDAP_ZARR_SHUFFLE, "noshuffle": _c.GDAP_ZARR_NOSHUFFLE, "bitshuffle": _c.GDAP_ZARR_BITSHUFFLE}


def release_save(comm: Comm) -> None:
    """The collective gdap_zarr_save of a rank that cannot take part (telling_peers)."""
    _c.gdap_zarr_save(comm._h(), None, None, None, zarr_options())


def release_load(comm: Comm) -> None:
    """The collective gdap_zarr_load of a rank that cannot take part (telling_peers)."""
    _c.gdap_zarr_load(comm._h(), None, None, None)


# Extents room for the first read of a shape: any rank up to it is read in one call.
_SHAPE_CAPACITY = 32


def zarr_shape(path: Union[str, os.PathLike[str]]) -> tuple[Shape, np.dtype]:
    """(shape, dtype) of the Zarr v3 array at `path`, from its zarr.json: enough to build a
    GlobalMap for load_zarr. FileIOError for a missing or malformed store, UnsupportedError for a
    data type, grid or codec gdap does not read."""
    name = c_name(path, "path")
    capacity = _SHAPE_CAPACITY
    while True:
        # One read gives the extents, the rank and the dtype together; a rank past the buffer asks
        # again with room for it and keeps only that read's answer, never a mix of two reads that
        # a save between them would give.
        shape, ndim, code_bits_lanes = _c.gdap_zarr_shape_read(name, capacity)
        if ndim <= capacity:
            return tuple(shape), dtype_from_c(code_bits_lanes)
        capacity = ndim


def zarr_options(codec: Optional[str] = "zstd", level: int = 0, overwrite: bool = False, shards: bool = True,
                 chunk_bytes: int = 0, shuffle: str = "shuffle") -> tuple:
    """The options tuple gdap_zarr_save takes, every argument checked: ValueError for a codec or
    shuffle gdap does not write (listing those it does), TypeError for a level or chunk_bytes that
    is no integer and for an overwrite or shards that is no bool (overwrite='no' is not False)."""
    try:
        code = _CODECS[codec]
    except (KeyError, TypeError):
        raise ValueError("codec must be 'zstd', 'blosc-lz4', 'blosc-zstd' or 'raw' (or None: raw), not %r"
                         % (codec,)) from None
    if not isinstance(shuffle, str) or shuffle not in _SHUFFLES:
        raise ValueError("shuffle must be 'shuffle', 'noshuffle' or 'bitshuffle', not %r" % (shuffle,))
    return (code, integer(level, "level"), flag(overwrite, "overwrite"),
            _c.GDAP_ZARR_SHARDS if flag(shards, "shards") else _c.GDAP_ZARR_CHUNKS, _SHUFFLES[shuffle],
            integer(chunk_bytes, "chunk_bytes"))


def save_zarr(comm: Comm, gmap: GlobalMap, section: SectionLike, path: Union[str, os.PathLike[str]],
              codec: Optional[str] = "zstd", level: int = 0, overwrite: bool = False, shards: bool = True,
              chunk_bytes: int = 0, shuffle: str = "shuffle") -> None:
    """Collective: writes the distributed array whose sections are `section` on each rank (this
    rank's section of `gmap`: a LocalArray, a __distarray__ producer, or any array of the rank's
    local shape that gdap takes without a copy) to a Zarr v3 store at `path`. `codec` is 'zstd'
    (zarr-python's default), 'blosc-lz4', 'blosc-zstd' (blosc's byte `shuffle`: 'shuffle',
    'noshuffle' or 'bitshuffle') or 'raw'; `level` is the codec's (zstd 1 to 22, blosc 1 to 9; 0
    for the default). With shards=True (the default) each rank's block is one shard of inner chunks
    of at most `chunk_bytes` (0: 2 MiB), so that readers of any layout read only what they need;
    shards=False writes one chunk per block. An existing store is replaced only with
    overwrite=True, and only when it is provably a Zarr array store (its zarr.json a regular file
    of array metadata, every other entry one of its chunks); anything else at `path` is refused,
    naming it, before anything is removed. Only owned elements are written, and the source is only
    read."""
    # Every check of this rank's arguments before the collective call: one that fails is told to the peers.
    local: Optional[LocalArray] = None
    made_here = False
    try:
        with telling_peers(comm, release_save):
            options = zarr_options(codec, level, overwrite, shards, chunk_bytes, shuffle)
            name = c_name(path, "path")
            local, made_here = _section(section, gmap, comm.rank, None)
            handles = (gmap._h(), handle(local))
        _c.gdap_zarr_save(comm._h(), *handles, name, options)
    finally:
        if made_here and local is not None:
            local.close()


def load_zarr(comm: Comm, gmap: GlobalMap, path: Union[str, os.PathLike[str]], section: SectionLike = None,
              device: DeviceLike = "cpu") -> SectionLike:
    """Collective: fills the owned elements of this rank's section of `gmap` from the Zarr v3
    array at `path` (any chunk grid; shards read in parts; codecs 'transpose', 'bytes',
    'sharding_indexed', 'zstd', 'blosc', 'gzip', 'crc32c'; absent chunks read as the fill value)
    and returns the section. With section=None a new LocalArray of the store's dtype is
    made on `device`. Nothing is written unless every rank read everything it needs."""
    made: Optional[LocalArray] = None
    local: Optional[LocalArray] = None
    made_here = False
    try:
        # Every check of this rank's arguments, and the store's dtype where it makes the section, before
        # the collective call: one that fails is told to the peers.
        with telling_peers(comm, release_load):
            name = c_name(path, "path")
            if section is None:
                _, dtype = zarr_shape(path)
                made = section = empty(gmap.dim_data(comm.rank), dtype, device)
            local, made_here = _section(section, gmap, comm.rank, None)
            handles = (gmap._h(), handle(local))
        _c.gdap_zarr_load(comm._h(), *handles, name)
    except BaseException:
        if made is not None:
            made.close()
        raise
    finally:
        if made_here and local is not None:
            local.close()
    return section


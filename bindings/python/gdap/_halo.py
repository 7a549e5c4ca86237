"""Halo exchange: filling the communication padding of 'b' dimensions from the neighbours' owned
elements (gdap_halo_*, gdap_halo_exchange, and the persistent gdap_halo_exchange_init / gdap_exchange_start). The planning and the moving are the C library's; this
module wraps the section a rank passes as a LocalArray described by the halo's map."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from . import _gdap_c as _c
from ._args import flag, integer
from ._comm import rank_arg, telling_peers
from ._handle import Handle
from ._local import LocalArray, dtype_to_c, from_distarray, from_dlpack
from ._map import GlobalMap
from ._types import DTypeLike, SectionLike

if TYPE_CHECKING:
    from ._comm import Comm


class Halo(Handle):
    """One rank's part of a halo exchange on distribution `gmap` (a GlobalMap) for elements of
    `dtype`. `rank` is an int or an object with an integer `rank` (this rank's Comm, an mpi4py
    communicator). `corners=True` fills edges and corners too (a
    full-neighbourhood stencil); False fills faces only. `widths` (None, or one int per dimension)
    caps the cells filled on each side to those next to the owned range.

    Read-only and reusable. InvalidArgumentError when no rank has communication padding to fill
    or a width is asked on a dimension that is not 'b'; OutOfRangeError for a bad rank.
    """

    def __init__(self, gmap: GlobalMap, dtype: DTypeLike, rank: Union[int, Comm], corners: bool = True,
                 widths: Optional[Sequence[int]] = None) -> None:
        if not isinstance(gmap, GlobalMap):
            raise TypeError("gmap must be a GlobalMap, not %s" % type(gmap).__name__)
        rank = rank_arg(rank)
        corners = flag(corners, "corners")
        options = (corners, None if widths is None else [integer(w, "widths[%d]" % i) for i, w in enumerate(widths)])
        self._adopt(_c.gdap_halo_create(gmap._h(), dtype_to_c(dtype), rank, options), _c.gdap_halo_destroy)
        self.map = gmap
        self.corners = corners
        self._dtype = np.dtype(dtype)

    @property
    def stats(self) -> dict[str, int]:
        """{'rank', 'nranks', 'send_messages', 'recv_messages', 'send_bytes', 'recv_bytes',
        'local_bytes'}: messages and bytes leave out the rank's copy onto itself (local_bytes)."""
        return _c.gdap_halo_stats_get(self._h())

    @property
    def rank(self) -> int:
        return self.stats["rank"]

    @property
    def nranks(self) -> int:
        return self.stats["nranks"]

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def __repr__(self) -> str:
        if self._handle is None:
            return "<gdap.Halo (closed)>"
        return "<gdap.Halo rank %d of %d dtype=%s grid=%s corners=%s>" % (self.rank, self.nranks, self._dtype,
                                                                       self.map.grid_shape, self.corners)


def _section_of(halo: Halo, local: SectionLike) -> tuple[LocalArray, bool, tuple[Any, Any]]:
    """(section, made here, the C handles of the halo and the section): `local` as a LocalArray
    described by the halo's map. Raises what stops it; callers tell the peers (telling_peers)."""
    if isinstance(local, LocalArray):
        section, made_here = local, False
    elif hasattr(local, "__distarray__") or isinstance(local, Mapping):
        section, made_here = from_distarray(local), True
    else:
        section, made_here = from_dlpack(local, halo.map.dim_data(halo.rank)), True
    try:
        return section, made_here, (halo._h(), section._h())
    except Exception:
        if made_here:
            section.close()
        raise


class HaloExchange(Handle):
    """A persistent halo exchange (gdap_halo_exchange_init): `halo` bound to `comm` and `local`, as
    halo_exchange takes them. Collective to make: every check and the ranks' agreement happen once,
    here (if any rank's arguments are wrong, every rank raises); each start() then fills the
    padding without them. On NCCL a start queues the pack kernel, one NCCL group and the unpack
    kernel on the communicator's stream and returns. Keeps comm, halo and the section alive (one
    of them closed first: its C object waits for this exchange, and start() raises
    InvalidArgumentError); every rank starts its exchange as many times.
    """

    def __init__(self, comm: Comm, halo: Halo, local: SectionLike) -> None:
        # A section or halo only this rank cannot use: the others are told at once.
        with telling_peers(comm, lambda c: _c.gdap_halo_exchange_init(c._h(), None, None)):
            section, made_here, handles = _section_of(halo, local)
        try:
            handle = _c.gdap_halo_exchange_init(comm._h(), *handles)
        except Exception:
            if made_here:
                section.close()
            raise
        # The C exchange keeps pointers to the communicator, the halo and the section: closing any
        # of them first leaves its C object alive until this exchange is destroyed.
        self._adopt(handle, _c.gdap_exchange_destroy, borrows=(comm, halo, section))
        self.comm, self.halo, self.local = comm, halo, local
        self._section: Optional[LocalArray] = section

    def start(self) -> SectionLike:
        """Collective: one halo exchange; returns the local array."""
        _c.gdap_exchange_start(self._h())
        return self.local

    def close(self) -> None:
        super().close()
        section = getattr(self, "_section", None)
        if section is not None and section is not self.local:
            section.close()
        self._section = None


def halo_exchange(comm: Comm, halo: Halo, local: SectionLike) -> SectionLike:
    """Collective: fills the communication padding of `local` (this rank's section of halo.map)
    from its neighbours' owned elements, in place; returns `local`. Owned elements and boundary
    padding are not written. `local` may be a LocalArray, a distbuffer / __distarray__ producer,
    or an array (NumPy, CuPy, PyTorch, any DLPack producer) of the rank's local shape, padding
    included, described by the halo's map.

    If any rank's arguments are wrong, no rank touches any data: that rank raises its own error
    and the others RemoteError naming it.
    """
    # A section or halo only this rank cannot use: the others are told at once.
    with telling_peers(comm, lambda c: _c.gdap_halo_exchange(c._h(), None, None)):
        section, made_here, handles = _section_of(halo, local)
    try:
        _c.gdap_halo_exchange(comm._h(), *handles)
    finally:
        if made_here:
            section.close()
    return local

""".dnpy files: DistArray's per-rank save format (gdap_dnpy_save, gdap_dnpy_load). Each rank writes
or reads its own `<prefix>_<rank>.dnpy` (its __version__, dim_data and local buffer, padding
included), byte for byte as DistArray 0.6's localapi.save_dnpy / load_dnpy write and read them."""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Optional, Union

from . import _gdap_c as _c
from ._local import LocalArray, device_to_c, from_distarray
from ._comm import telling_peers
from ._paths import c_name
from ._types import DeviceLike, SectionLike

if TYPE_CHECKING:
    from ._comm import Comm


def save_dnpy(comm: Comm, section: SectionLike, prefix: Union[str, os.PathLike[str]]) -> None:
    """Collective: every rank writes its section (a LocalArray or a __distarray__ producer /
    distbuffer dict) to `<prefix>_<rank>.dnpy`, replacing a file already there. The section is
    only read; device sections are staged through pinned host memory. If any rank fails, every
    rank raises (the others RemoteError naming it)."""
    local: Optional[LocalArray] = None
    made_here = False
    try:
        # A prefix or section only this rank cannot use: the others are told at once.
        with telling_peers(comm, lambda c: _c.gdap_dnpy_save(c._h(), None, None)):
            name = c_name(prefix, "prefix")
            if isinstance(section, LocalArray):
                local = section
            elif hasattr(section, "__distarray__") or isinstance(section, Mapping):
                local, made_here = from_distarray(section), True
            else:
                raise TypeError("save_dnpy: section must be a LocalArray, a __distarray__ producer or a distbuffer "
                                "dict, not %s (a plain array has no dim_data: gdap.from_dlpack(array, dim_data) first)"
                                % type(section).__name__)
            held = local._h()
        _c.gdap_dnpy_save(comm._h(), held, name)
    finally:
        if made_here and local is not None:
            local.close()


def load_dnpy(comm: Comm, prefix: Union[str, os.PathLike[str]], device: DeviceLike = "cpu") -> LocalArray:
    """Collective: every rank reads `<prefix>_<rank>.dnpy` (written by gdap, DistArray or any
    writer of the format) into a new C-contiguous LocalArray on `device`, with the file's
    dim_data, dtype and protocol version. Malformed files raise FileIOError naming the file, the
    byte offset and the key; nothing is returned unless every rank read its file."""
    # A prefix or device only this rank cannot use: the others are told at once.
    with telling_peers(comm, lambda c: _c.gdap_dnpy_load(c._h(), None, device_to_c("cpu"))):
        name, where = c_name(prefix, "prefix"), device_to_c(device)
    return LocalArray(_c.gdap_dnpy_load(comm._h(), name, where))

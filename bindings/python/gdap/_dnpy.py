""".dnpy files: DistArray's per-rank save format (gdap_dnpy_save, gdap_dnpy_load). Each rank writes
or reads its own `<prefix>_<rank>.dnpy` (its __version__, dim_data and local buffer, padding
included), byte for byte as DistArray 0.6's localapi.save_dnpy / load_dnpy write and read them."""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Optional, Union

from . import _gdap_c as _c
from ._local import LocalArray, device_to_c, from_distarray
from ._paths import collective_name
from ._types import DeviceLike, SectionLike

if TYPE_CHECKING:
    from ._comm import Comm


def save_dnpy(comm: Comm, section: SectionLike, prefix: Union[str, os.PathLike[str]]) -> None:
    """Collective: every rank writes its section (a LocalArray or a __distarray__ producer /
    distbuffer dict) to `<prefix>_<rank>.dnpy`, replacing a file already there. The section is
    only read; device sections are staged through pinned host memory. If any rank fails, every
    rank raises (the others RemoteError naming it)."""
    # A section this rank cannot use still makes the collective call (with none), so that the
    # other ranks fail at once with RemoteError naming this one instead of waiting for it.
    local: Optional[LocalArray] = section
    made_here = False
    failure: Optional[Exception]
    name, failure = collective_name(prefix, "prefix")
    try:
        if not isinstance(section, LocalArray):
            if not (hasattr(section, "__distarray__") or isinstance(section, Mapping)):
                raise TypeError("save_dnpy: section must be a LocalArray, a __distarray__ producer or a distbuffer "
                                "dict, not %s (a plain array has no dim_data: gdap.from_dlpack(array, dim_data) first)"
                                % type(section).__name__)
            local, made_here = from_distarray(section), True
    except Exception as e:
        local, failure = None, failure or e
    try:
        _c.gdap_dnpy_save(comm._h(), local._h() if local is not None else None, name)
    except Exception:
        if failure is None:
            raise
    finally:
        if made_here and local is not None:
            local.close()
    if failure is not None:
        raise failure


def load_dnpy(comm: Comm, prefix: Union[str, os.PathLike[str]], device: DeviceLike = "cpu") -> LocalArray:
    """Collective: every rank reads `<prefix>_<rank>.dnpy` (written by gdap, DistArray or any
    writer of the format) into a new C-contiguous LocalArray on `device`, with the file's
    dim_data, dtype and protocol version. Malformed files raise FileIOError naming the file, the
    byte offset and the key; nothing is returned unless every rank read its file."""
    name, failure = collective_name(prefix, "prefix")
    try:
        return LocalArray(_c.gdap_dnpy_load(comm._h(), name, device_to_c(device)))
    except Exception:
        if failure is None:
            raise
    raise failure

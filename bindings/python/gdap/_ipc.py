"""Sharing local sections between processes of one node (gdap_array_create_shm, gdap_ipc_export,
gdap_ipc_open). A handle is `bytes` of IPC_HANDLE_SIZE: send it over any channel (a file, a pipe,
mpi4py, a socket) to another process of the node, which opens the same memory, without a copy, as
a LocalArray. Device sections travel by CUDA IPC, host sections through POSIX shared memory
(allocate them with empty_shm). See docs/ipc.md for the lifetime rules."""

from __future__ import annotations

from . import _gdap_c as _c
from typing import Any, Optional, Sequence, Union

from ._local import LocalArray, _dims_for_shape, dtype_to_c, from_dlpack
from ._paths import c_name
from ._types import DimData, DTypeLike

IPC_HANDLE_SIZE = _c.GDAP_IPC_HANDLE_SIZE
IPC_MAX_NDIM = _c.GDAP_IPC_MAX_NDIM


def empty_shm(shape_or_dim_data: Union[int, Sequence[Any]], dtype: DTypeLike = "float64",
              name: Optional[str] = None) -> LocalArray:
    """A new zero-filled host section in a new POSIX shared-memory segment (gdap_array_create_shm):
    a shape (one undistributed dimension per extent) or one rank's dim_data. `name` is the
    segment's name ("/something", no other "/"), or None for a fresh one; an existing name raises
    InvalidArgumentError. The segment is unlinked when the LocalArray and its views are gone;
    importers that already opened it keep their mapping."""
    dims = _dims_for_shape(shape_or_dim_data)
    if name is not None and not isinstance(name, str):
        raise TypeError("name must be a str such as '/my-segment' or None, not %s" % type(name).__name__)
    return LocalArray(_c.gdap_array_create_shm(None if name is None else c_name(name, "name"), dtype_to_c(dtype),
                                               dims.dims))


def ipc_export(section: Any, dim_data: Optional[DimData] = None) -> bytes:
    """The IPC handle (bytes) of a section: a LocalArray, or a DLPack producer (CuPy, PyTorch,
    NumPy over shared memory) described by `dim_data`. UnsupportedError for ordinary host memory
    (use empty_shm), pinned or managed memory, unstructured dimensions, or more than IPC_MAX_NDIM
    dimensions. The exporting section must outlive every importer's use of the memory."""
    if isinstance(section, LocalArray):
        return _c.gdap_ipc_export(section._h())
    local = from_dlpack(section, dim_data)
    try:
        return _c.gdap_ipc_export(local._h())
    finally:
        local.close()


def ipc_open(handle: Union[bytes, bytearray, memoryview]) -> LocalArray:
    """A LocalArray over the memory an IPC handle (bytes-like, IPC_HANDLE_SIZE long) names, made by
    ipc_export or gdap_ipc_export in another process of this node: writes are seen by both sides.
    Bad handles raise with the reason: truncated or padded bytes, wrong magic, a newer format
    (VersionError), altered bytes, another node, an unlinked segment or exited exporter."""
    return LocalArray(_c.gdap_ipc_open(handle))

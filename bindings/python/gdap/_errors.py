"""The exceptions gdap raises: one class per gdap_status, all under gdap.Error.

Every failing C call raises the class of its status with gdap_last_error()'s text as the message
(the SWIG wrapper calls error_class() below). Where a built-in exception means the same thing, the
class derives from it too, so `except ValueError` still catches a ProtocolError; no class shadows
a built-in name.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import _gdap_c as _c

__all__ = [
    "Error", "InvalidArgumentError", "ProtocolError", "VersionError", "SizeOverflowError",
    "OutOfRangeError", "NotFoundError", "BufferTooSmallError", "OutOfMemoryError",
    "UnsupportedError", "DeviceError", "CommError", "RemoteError", "CollectiveTimeoutError",
    "FileIOError", "InternalError", "CollectiveInterruptedError", "error_class",
]


class Error(Exception):
    """Base class of every gdap error. `status` is the gdap_status code, `status_name` its name."""

    status: Optional[int] = None

    @property
    def status_name(self) -> Optional[str]:
        return _c.gdap_status_string(self.status) if self.status is not None else None


class InvalidArgumentError(Error, ValueError):
    """GDAP_ERR_INVALID_ARGUMENT: a NULL handle, a bad enum value, a size the call cannot take."""
    status = _c.GDAP_ERR_INVALID_ARGUMENT


class AxisError(InvalidArgumentError, getattr(getattr(np, "exceptions", np), "AxisError")):  # type: ignore[misc]
    """An axis out of range for the array: NumPy's AxisError (np.exceptions.AxisError in NumPy 2,
    np.AxisError in 1.x: a ValueError and an IndexError), and a gdap InvalidArgumentError."""


class ProtocolError(Error, ValueError):
    """GDAP_ERR_PROTOCOL: a descriptor breaks a rule of the Distributed Array Protocol."""
    status = _c.GDAP_ERR_PROTOCOL


class VersionError(Error, ValueError):
    """GDAP_ERR_VERSION: a protocol or DLPack version this gdap does not know."""
    status = _c.GDAP_ERR_VERSION


class SizeOverflowError(Error, OverflowError):
    """GDAP_ERR_OVERFLOW: a size, offset or product does not fit in int64."""
    status = _c.GDAP_ERR_OVERFLOW


class OutOfRangeError(Error, IndexError):
    """GDAP_ERR_OUT_OF_RANGE: an index, rank or dimension outside its range."""
    status = _c.GDAP_ERR_OUT_OF_RANGE


class NotFoundError(Error, LookupError):
    """GDAP_ERR_NOT_FOUND: a global index this process (or any process) does not hold."""
    status = _c.GDAP_ERR_NOT_FOUND


class BufferTooSmallError(Error):
    """GDAP_ERR_BUFFER_TOO_SMALL: an output buffer is smaller than the result."""
    status = _c.GDAP_ERR_BUFFER_TOO_SMALL


class OutOfMemoryError(Error, MemoryError):
    """GDAP_ERR_NO_MEMORY: an allocation failed."""
    status = _c.GDAP_ERR_NO_MEMORY


class UnsupportedError(Error):
    """GDAP_ERR_UNSUPPORTED: a device, dtype or feature this build does not support."""
    status = _c.GDAP_ERR_UNSUPPORTED


class DeviceError(Error):
    """GDAP_ERR_DEVICE: a CUDA call failed (no device, out of device memory, ...)."""
    status = _c.GDAP_ERR_DEVICE


class CommError(Error):
    """GDAP_ERR_COMM: a communication call failed (MPI, NCCL)."""
    status = _c.GDAP_ERR_COMM


class RemoteError(Error):
    """GDAP_ERR_REMOTE: another rank failed a collective call."""
    status = _c.GDAP_ERR_REMOTE


class CollectiveTimeoutError(Error, TimeoutError):
    """GDAP_ERR_TIMEOUT: a collective call did not complete in time."""
    status = _c.GDAP_ERR_TIMEOUT


class FileIOError(Error, OSError):
    """GDAP_ERR_IO: reading or writing a file failed."""
    status = _c.GDAP_ERR_IO


class InternalError(Error):
    """GDAP_ERR_INTERNAL: a bug in gdap; please report it with the message."""
    status = _c.GDAP_ERR_INTERNAL


class CollectiveInterruptedError(Error, KeyboardInterrupt):
    """GDAP_ERR_INTERRUPTED: a wait at a collective call was interrupted (Ctrl-C). Raised on the
    ranks whose wait ended because of it; the thread that ran the signal handler gets the
    handler's own KeyboardInterrupt. A KeyboardInterrupt, so that Ctrl-C ends the program."""
    status = _c.GDAP_ERR_INTERRUPTED


_BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, ProtocolError, VersionError, SizeOverflowError, OutOfRangeError,
    NotFoundError, BufferTooSmallError, OutOfMemoryError, UnsupportedError, DeviceError, CommError,
    RemoteError, CollectiveTimeoutError, FileIOError, InternalError, CollectiveInterruptedError)}


def error_class(status: int) -> type[Error]:
    """The exception class for a gdap_status code (Error for a code this binding does not know)."""
    return _BY_STATUS.get(status, Error)


# C messages that name a C call as the fix, with what a Python caller writes instead. Exact phrases,
# applied in order, only to messages that come from the C library (gdap_c.i calls python_text).
_PYTHON_NAMES = (
    ("describe it with gdap_dim_set_undistributed(dim, extent)",
     "give a shape instead, or describe the dimension with a full dictionary ('b' over one grid rank: "
     "size, start 0 and stop the extent)"),
    ("call gdap_dim_set_undistributed with the buffer's extent",
     "give a full dictionary instead ('b' over one grid rank: size, start 0 and stop the buffer's extent)"),
    ("(gdap_dim_set_undistributed)", "(a full dictionary: 'b' over one grid rank)"),
    ("gdap_array_create_shm", "gdap.empty_shm"),
)


def python_text(message: str) -> str:
    """A C error message as a Python caller should read it: C calls named as the fix become gdap's
    Python equivalents (_PYTHON_NAMES)."""
    for c_words, python_words in _PYTHON_NAMES:
        message = message.replace(c_words, python_words)
    return message

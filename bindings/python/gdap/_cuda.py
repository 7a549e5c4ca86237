"""The CUDA current device, switched for the length of one call. A DLPack producer exports a CUDA
tensor on the current device's streams (PyTorch refuses outright when its tensor lives on another
device), so a consumer asks __dlpack_device__() first and makes that device current while it calls
__dlpack__. CUDA's current device is per-thread state of the runtime that CuPy, PyTorch and gdap
share, so whichever of them is importable switches it for all; the producer's own library is
preferred."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import sys
from collections.abc import Iterator
from typing import Any, Optional

#: DLPack device types whose memory belongs to one CUDA device ordinal.
CUDA_DEVICE_TYPES = (2, 13)  # kDLCUDA, kDLCUDAManaged

_cudart: Optional[Any] = None


def _runtime() -> Optional[Any]:
    """The CUDA runtime library already loaded in this process (by libgdap, CuPy or PyTorch), or None."""
    global _cudart
    if _cudart is None:
        for name in ("libcudart.so.13", "libcudart.so.12", ctypes.util.find_library("cudart")):
            if not name:
                continue
            try:
                _cudart = ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
                break
            except OSError:
                continue
    return _cudart


@contextlib.contextmanager
def _with_runtime(ordinal: int) -> Iterator[None]:
    lib = _runtime()
    if lib is None:  # no CUDA runtime in this process: nothing can be current, nothing to switch
        yield
        return
    previous = ctypes.c_int(-1)
    switched = lib.cudaGetDevice(ctypes.byref(previous)) == 0 and previous.value != ordinal
    if switched and lib.cudaSetDevice(ctypes.c_int(ordinal)) != 0:
        switched = False
    try:
        yield
    finally:
        if switched:
            lib.cudaSetDevice(previous)


def current_device(ordinal: int, producer: Any = None) -> contextlib.AbstractContextManager:
    """A context in which CUDA device `ordinal` is current on this thread, the previous one
    current again after it. Uses the producer's library (PyTorch, CuPy) when it is loaded, else
    CuPy, PyTorch or the CUDA runtime itself."""
    module = type(producer).__module__.split(".")[0] if producer is not None else ""
    order = ("torch", "cupy") if module == "torch" else ("cupy", "torch")
    for name in order:
        lib = sys.modules.get(name)
        if lib is None:
            continue
        if name == "cupy":
            return lib.cuda.Device(ordinal)
        if name == "torch" and lib.cuda.is_available():
            return lib.cuda.device(ordinal)
    return _with_runtime(ordinal)


def dlpack_device(x: Any) -> Optional[tuple[int, int]]:
    """The producer's (device type, ordinal) from __dlpack_device__(), or None if it has none."""
    query = getattr(x, "__dlpack_device__", None)
    if query is None:
        return None
    device = query()
    return int(device[0]), int(device[1])


def current_ordinal() -> int:
    """This thread's current CUDA device (0 where no CUDA library is loaded)."""
    for name in ("cupy", "torch"):
        lib = sys.modules.get(name)
        if lib is not None:
            return int(lib.cuda.runtime.getDevice()) if name == "cupy" else int(lib.cuda.current_device())
    lib = _runtime()
    ordinal = ctypes.c_int(0)
    if lib is not None:
        lib.cudaGetDevice(ctypes.byref(ordinal))
    return ordinal.value


def wait_for_stream(stream: int, ordinal: int, producer: Any = None) -> None:
    """Blocks until the work queued so far on CUDA stream `stream` (a cudaStream_t; 1 and 2 are
    the legacy and per-thread default streams) of device `ordinal` has finished: what a
    __cuda_array_interface__ consumer owes its producer's stream before it reads or writes the data.
    The import does not know which stream gdap's later moves will run on (a Comm's, set per call),
    so the host waits: correct for every stream gdap may use. UnsupportedError without a CUDA
    runtime, a gdap error naming the stream where CUDA refuses."""
    from ._errors import InvalidArgumentError, UnsupportedError

    lib = _runtime()
    if lib is None:
        raise UnsupportedError("synchronising on __cuda_array_interface__ stream %#x needs the CUDA runtime "
                               "(libcudart), which this process cannot load" % stream)
    lib.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
    lib.cudaStreamSynchronize.restype = ctypes.c_int
    with current_device(ordinal, producer):  # the default streams (1, 2) are the current device's
        status = lib.cudaStreamSynchronize(ctypes.c_void_p(stream))
    if status != 0:
        lib.cudaGetErrorString.restype = ctypes.c_char_p
        raise InvalidArgumentError("__cuda_array_interface__ stream %#x on cuda:%d: cudaStreamSynchronize failed: %s"
                                   % (stream, ordinal, lib.cudaGetErrorString(ctypes.c_int(status)).decode()))

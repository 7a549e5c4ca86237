"""LocalArray: one process's local section plus its distribution, over a C gdap_array handle.

Everything here moves pointers, never elements: a section comes in as a DLPack tensor (from any
__dlpack__ producer, from a buffer-protocol object through NumPy's own DLPack export, or from a
__cuda_array_interface__ producer through a tensor that keeps that producer alive) and goes out as
DLPack capsules, __array_interface__ / __cuda_array_interface__ dicts and __distarray__ dicts
that all point at the same memory. Ownership follows gdap's C rules: the memory stays valid until
the LocalArray and every tensor exported from it are gone, whatever the order.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Mapping
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _cuda
from . import _gdap_c as _c
from ._args import index_tuple, integer
from ._dims import Dims, dims_from_dim_data, dim_to_dict, shape_entry
from ._errors import InvalidArgumentError, ProtocolError, UnsupportedError
from ._handle import Handle
from ._types import DeviceLike, DimData, DTypeLike, Index, Shape

PROTOCOL_VERSION = _c.GDAP_PROTOCOL_VERSION

CPU = _c.GDAP_DEVICE_CPU
CUDA = _c.GDAP_DEVICE_CUDA
CUDA_HOST = _c.GDAP_DEVICE_CUDA_HOST
CUDA_MANAGED = _c.GDAP_DEVICE_CUDA_MANAGED

_HOST_VISIBLE = (CPU, CUDA_HOST, CUDA_MANAGED)    # __array_interface__ is offered for these
_DEVICE_VISIBLE = (CUDA, CUDA_HOST, CUDA_MANAGED)  # __cuda_array_interface__ for these
_DEVICE_NAMES = {"cpu": CPU, "cuda": CUDA, "cuda_host": CUDA_HOST, "cuda_managed": CUDA_MANAGED}
_NAMES_OF_DEVICE = {v: k for k, v in _DEVICE_NAMES.items()}
_DLPACK_VERSION = (_c.GDAP_PY_DLPACK_MAJOR, _c.GDAP_PY_DLPACK_MINOR)
_NOWHERE = np.zeros(1, dtype=np.uint8)  # the address an empty section's __array_interface__ gives

# ---- dtypes and devices ----------------------------------------------------------------------

_CODE_OF_KIND = {"i": _c.GDAP_DTYPE_INT, "u": _c.GDAP_DTYPE_UINT, "f": _c.GDAP_DTYPE_FLOAT,
                 "c": _c.GDAP_DTYPE_COMPLEX, "b": _c.GDAP_DTYPE_BOOL}
_KIND_OF_CODE = {v: k for k, v in _CODE_OF_KIND.items()}


def _bfloat16() -> Optional[np.dtype]:
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def dtype_to_c(dtype: DTypeLike) -> tuple[int, int, int]:
    """A NumPy dtype (or anything np.dtype takes) as gdap's (code, bits, lanes)."""
    dt = np.dtype(dtype)
    if dt.name == "bfloat16":
        return (_c.GDAP_DTYPE_BFLOAT, 16, 1)
    if dt.kind not in _CODE_OF_KIND or not dt.isnative:
        raise UnsupportedError(_unshareable(dt))
    return (_CODE_OF_KIND[dt.kind], dt.itemsize * 8, 1)


def _unshareable(dtype: Any) -> str:
    return ("dtype %s cannot be shared without a copy: DLPack, through which gdap shares sections, holds "
            "native-endian bool, int, uint, float and complex elements only" % (dtype,))


def dtype_from_c(code_bits_lanes: Sequence[int]) -> np.dtype:
    """gdap's (code, bits, lanes) as a NumPy dtype; UnsupportedError where NumPy has none."""
    code, bits, lanes = code_bits_lanes
    bfloat16 = _bfloat16() if lanes == 1 and code == _c.GDAP_DTYPE_BFLOAT and bits == 16 else None
    if bfloat16 is not None:
        return bfloat16
    if lanes == 1 and code in _KIND_OF_CODE and bits % 8 == 0:
        try:
            return np.dtype("%s%d" % (_KIND_OF_CODE[code], bits // 8))
        except TypeError:
            pass
    raise UnsupportedError("DLPack dtype (code %d, bits %d, lanes %d) has no NumPy equivalent" % (code, bits, lanes))


def device_to_c(device: DeviceLike) -> tuple[int, int]:
    """'cpu', 'cuda', 'cuda:1', 'cuda_host', 'cuda_managed:0' or a DLPack (type, id) pair -> (type, id)."""
    if isinstance(device, str):
        name, _, ordinal = device.partition(":")
        if name not in _DEVICE_NAMES:
            raise ValueError("unknown device %r: use 'cpu', 'cuda[:N]', 'cuda_host' or 'cuda_managed[:N]'" % device)
        try:
            return (_DEVICE_NAMES[name], int(ordinal) if ordinal else 0)
        except ValueError:
            raise ValueError("unknown device %r: the ordinal must be an integer" % device) from None
    if hasattr(device, "__len__") and len(device) == 2:
        return (integer(device[0], "device type"), integer(device[1], "device id"))
    raise TypeError("device must be a string such as 'cuda:0' or a (type, id) pair, not %r" % (device,))


def device_name(device: Sequence[int]) -> str:
    """(type, id) -> 'cpu', 'cuda:0', 'cuda_host', 'cuda_managed:0' (or 'dlpack:<type>:<id>')."""
    type_, id_ = device
    name = _NAMES_OF_DEVICE.get(type_)
    if name is None:
        return "dlpack:%d:%d" % (type_, id_)
    return name if type_ in (CPU, CUDA_HOST) else "%s:%d" % (name, id_)


# ---- the local array --------------------------------------------------------------------------

class LocalArray(Handle):
    """One process's local section and its distribution (a gdap_array handle).

    Make one with from_distarray, from_dlpack, empty or wrap. The handle is destroyed by close(),
    at the end of a `with` block, or when the object is collected; the memory lives on while any
    exported view (NumPy array, DLPack consumer) still uses it, and is freed when the last is gone
    (a NumPy view made through __array_interface__ holds its own owner of the memory, not this
    object). A __cuda_array_interface__ consumer holds this object instead, so once one has been
    handed out, the memory lives until this object is collected. After close() the metadata
    methods raise ValueError.
    """

    def __init__(self, handle: Any, owner: Any = None) -> None:
        # Private: `handle` is a new gdap_array this object takes over; `owner` is kept alive
        # with it (the Python object whose memory gdap_array_wrap retained).
        self._owner = owner
        self._pin: Any = None  # an exported tensor that keeps the memory alive for CUDA interface views
        self._adopt(handle, _c.gdap_array_destroy)

    # -- life cycle

    def close(self) -> None:
        """Destroys the handle now (idempotent). Views already handed out stay valid; the memory
        (and an empty_shm segment's name) goes with the last of them."""
        Handle.close(self)

    # -- metadata

    @property
    def ndim(self) -> int:
        return _c.gdap_array_ndim(self._h())

    @property
    def shape(self) -> Shape:
        """The local section's shape (padding included), in C order."""
        return _c.gdap_array_shape(self._h())

    @property
    def strides(self) -> Shape:
        """Strides in elements (not bytes), in C order."""
        return _c.gdap_array_strides(self._h())

    @property
    def dtype(self) -> np.dtype:
        return dtype_from_c(_c.gdap_array_dtype(self._h()))

    @property
    def device(self) -> str:
        """'cpu', 'cuda:N', 'cuda_host' or 'cuda_managed:N'."""
        return device_name(_c.gdap_array_device(self._h()))

    @property
    def readonly(self) -> bool:
        return _c.gdap_array_readonly(self._h())

    @property
    def version(self) -> str:
        """The protocol version the section was described with."""
        return _c.gdap_array_version(self._h())

    @property
    def data_ptr(self) -> int:
        """Address of element (0, ..., 0), an int."""
        return _c.gdap_array_data(self._h())

    @property
    def dim_data(self) -> tuple[dict[str, Any], ...]:
        """A tuple of protocol dicts, one per dimension ({} resolved to its 'b' form); 'indices'
        of unstructured dimensions are NumPy int64 arrays (copies)."""
        h = self._h()
        return tuple(dim_to_dict(_c.gdap_array_dim(h, i)) for i in range(_c.gdap_array_ndim(h)))

    def global_to_local(self, global_index: Index) -> Shape:
        """Local index (tuple) of a global index held here; NotFoundError otherwise."""
        return _c.gdap_array_global_to_local(self._h(), index_tuple(global_index, "global"))

    def local_to_global(self, local_index: Index) -> Shape:
        """Global index (tuple) held at a local index; OutOfRangeError outside the buffer."""
        return _c.gdap_array_local_to_global(self._h(), index_tuple(local_index, "local"))

    def __repr__(self) -> str:
        if self._handle is None:
            return "<gdap.LocalArray (closed)>"
        return "<gdap.LocalArray shape=%s dtype=%s device=%s>" % (self.shape, _dtype_text(self), self.device)

    # -- the Distributed Array Protocol

    def __distarray__(self) -> dict[str, Any]:
        """The protocol's distbuffer: {'__version__', 'buffer', 'dim_data'}. 'buffer' is a NumPy
        array sharing the memory for host sections, and this LocalArray itself (which offers
        __dlpack__ and __cuda_array_interface__) for device sections."""
        h = self._h()
        device = _c.gdap_array_device(h)
        buffer = np.asarray(self) if device[0] in _HOST_VISIBLE else self
        return {"__version__": PROTOCOL_VERSION, "buffer": buffer, "dim_data": self.dim_data}

    # -- DLPack

    def __dlpack_device__(self) -> tuple[int, int]:
        return tuple(_c.gdap_array_device(self._h()))

    def __dlpack__(self, *, stream: Any = None, max_version: Optional[tuple[int, int]] = None,
                   dl_device: Optional[tuple[int, int]] = None, copy: Optional[bool] = None) -> Any:
        """A DLPack capsule sharing the section (the Python DLPack protocol).

        max_version >= (1, 0) gives a "dltensor_versioned" capsule, None or older an unversioned
        "dltensor" one. gdap never copies: copy=True, or a dl_device other than the section's,
        raises BufferError. gdap enqueues no work on the section, so `stream` needs no
        synchronisation and is only checked (CPU sections take None only, as the spec says).
        """
        h = self._h()
        device = tuple(_c.gdap_array_device(h))
        if copy:
            raise BufferError("gdap never copies a section; export with copy=None or copy=False")
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError("the section lives on DLPack device %s, not %s; gdap never copies"
                              % (device, tuple(dl_device)))
        if stream is not None and device[0] == CPU:
            raise BufferError("stream must be None for a CPU section, not %r" % (stream,))
        if max_version is not None and tuple(max_version)[0] >= 1:
            return _c.gdap_array_to_dlpack(h)
        return _c.gdap_array_to_dlpack_unversioned(h)

    # -- array interfaces

    def _interface(self, host: bool) -> dict[str, Any]:
        h = self._h()
        device = _c.gdap_array_device(h)
        if device[0] not in (_HOST_VISIBLE if host else _DEVICE_VISIBLE):
            raise AttributeError("%s: the section is on %s" % (
                "__array_interface__" if host else "__cuda_array_interface__", device_name(device)))
        dtype = dtype_from_c(_c.gdap_array_dtype(h))
        shape = _c.gdap_array_shape(h)
        strides = _c.gdap_array_strides(h)
        compact, step = True, 1
        for extent, stride in zip(reversed(shape), reversed(strides)):
            if extent > 1 and stride != step:
                compact = False
            step *= extent
        address = _c.gdap_array_data(h)
        readonly = _c.gdap_array_readonly(h)
        byte_strides = tuple(s * dtype.itemsize for s in strides)
        interface = {"shape": shape, "typestr": dtype.str, "strides": None if compact else byte_strides, "version": 3}
        if 0 in shape:
            # An empty section has no memory to keep alive. NumPy before 1.25 refuses a NULL data
            # pointer even for zero elements (np.asarray then fails, and DistArray's from_distarray
            # with it), so point at a byte that is never read or written.
            interface["data"] = (address or _NOWHERE.ctypes.data, readonly)
        elif host:
            # The memory's owner is a buffer of its own, holding a DLPack export of the section:
            # NumPy keeps that buffer (not this LocalArray) as the view's base, so close() frees
            # the memory once the views are gone, and a view never outlives it.
            interface["data"], interface["offset"] = _owned_span(h, address, shape, byte_strides, dtype.itemsize, readonly)
        else:
            if self._pin is None:
                self._pin = _c.gdap_array_to_dlpack(h)  # the consumer holds this object, which holds the memory
            interface["data"] = (address, readonly)
        return interface

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """NumPy's array interface (v3), for host-visible sections (CPU, CUDA pinned, managed)."""
        return self._interface(host=True)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA array interface v3, for device-visible sections (CUDA, pinned, managed).
        'stream' is None: gdap enqueues no work on the section, so a consumer need not wait."""
        interface = self._interface(host=False)
        interface["stream"] = None
        return interface


def _owned_span(h: Any, address: int, shape: Shape, byte_strides: Shape, itemsize: int,
                readonly: bool) -> tuple[Any, int]:
    """A buffer over every byte a section of `shape` and `byte_strides` at `address` spans, which
    holds a DLPack export of the section (so its memory lives while the buffer does), and the
    offset of element (0, ..., 0) in it. Read-only sections get a read-only view of the buffer."""
    low = sum(s * (n - 1) for n, s in zip(shape, byte_strides) if s < 0)
    high = sum(s * (n - 1) for n, s in zip(shape, byte_strides) if s > 0) + itemsize
    span = (ctypes.c_char * (high - low)).from_address(address + low)
    span.gdap_pin = _c.gdap_array_to_dlpack(h)  # type: ignore[attr-defined]
    return (memoryview(span).toreadonly() if readonly else span), -low


def _dtype_text(array: LocalArray) -> str:
    try:
        return str(array.dtype)
    except UnsupportedError:
        return str(_c.gdap_array_dtype(array._h()))


# ---- making local arrays --------------------------------------------------------------------

def _capsule_from_producer(x: Any, stream: Any, what: str = "the array") -> Any:
    """A DLPack capsule from a __dlpack__ producer: versioned if it can, unversioned otherwise.
    The producer's device is asked first (__dlpack_device__): a CUDA tensor is exported with its
    own device current, so that `stream` (None: that device's legacy default stream) is read on
    it; PyTorch refuses to export a tensor of another device than the current one. A producer
    that cannot export (NumPy's BufferError for a structured, object or byte-swapped dtype) is
    UnsupportedError naming `what` and the dtype."""
    _require_aligned(x, what)
    kwargs: dict[str, Any] = {}
    if stream is not None:
        kwargs["stream"] = stream
    device = _cuda.dlpack_device(x)
    scope = (_cuda.current_device(device[1], x) if device is not None and device[0] in _cuda.CUDA_DEVICE_TYPES
             else contextlib.nullcontext())
    try:
        with scope:
            try:
                return x.__dlpack__(max_version=_DLPACK_VERSION, **kwargs)
            except TypeError:  # a producer older than DLPack 1.0's max_version keyword
                return x.__dlpack__(**kwargs)
    except BufferError as e:
        dtype = getattr(x, "dtype", None)
        if dtype is not None:
            raise UnsupportedError("%s: %s (%s)" % (what, _unshareable(dtype), e)) from None
        raise UnsupportedError("%s cannot be shared without a copy: %s" % (what, e)) from None


def _require_aligned(x: Any, what: str) -> None:
    """A NumPy array whose data is off its dtype's alignment (np.frombuffer(b, offset=1)) is refused
    here, where the advice can name NumPy: NumPy exports it through DLPack all the same (DLPack
    leaves alignment to the producer), and gdap's typed loops and kernels read whole elements
    (gdap_array_from_dlpack refuses it too, naming the address)."""
    if isinstance(x, np.ndarray) and not x.flags.aligned and x.size > 0:
        raise InvalidArgumentError(
            "%s: its data at %#x is not aligned for %s (an address that is a multiple of %d bytes); gdap reads "
            "whole elements: pass an aligned copy, x.copy() or np.array(x) (np.ascontiguousarray returns an "
            "already contiguous array as it is)" % (what, x.ctypes.data, x.dtype, x.dtype.alignment))


def _from_capsule(capsule: Any, dim_data: Optional[DimData], version: Optional[str], owner: Any = None,
                  dims: Optional[Dims] = None) -> LocalArray:
    """A LocalArray taking the tensor of an unconsumed DLPack capsule (renamed "used_..." once
    gdap took it). dim_data None: undistributed, one {} per dimension of the tensor. `dims`: the
    dim_data already converted (a caller that wraps sections of one map again and again keeps
    them), used instead of dim_data."""
    if dims is None:
        if dim_data is None:
            dim_data = [{}] * _c.gdap_py_capsule_ndim(capsule)
        dims = dims_from_dim_data(dim_data)
    if _c.gdap_py_capsule_name(capsule) == "dltensor":
        handle = _c.gdap_array_from_dlpack_unversioned(capsule, dims.dims, version)
    else:  # the C glue names what is wrong with anything but an unconsumed versioned capsule
        handle = _c.gdap_array_from_dlpack(capsule, dims.dims, version)
    return LocalArray(handle, owner)


def from_dlpack(x: Any, dim_data: Optional[DimData] = None, *, version: Optional[str] = None,
                stream: Any = None) -> LocalArray:
    """A LocalArray sharing the memory of a DLPack producer (NumPy, CuPy, PyTorch, JAX arrays, a
    LocalArray, or an unconsumed DLPack capsule), without copying.

    dim_data: the section's dimension dicts (a tuple, one per dimension); None = undistributed
    (each dimension the empty dict {}, resolved from the shape). version: the producer's protocol
    version (None: "0.10.0"). stream: passed to the producer's __dlpack__ (for CUDA producers, the
    stream the consumer will use; None = the legacy default stream).
    """
    capsule = x if _is_capsule(x) else _capsule_from_producer(x, stream, "from_dlpack")
    return _from_capsule(capsule, dim_data, version)


def from_dlpack_with_dims(x: Any, dims: Dims) -> LocalArray:
    """from_dlpack(x, dim_data) with the dim_data already converted (`dims`, from
    dims_from_dim_data): how gdap.redistribute wraps a plan's sections on every call without
    converting the same dictionaries each time."""
    capsule = x if _is_capsule(x) else _capsule_from_producer(x, None, "from_dlpack")
    return _from_capsule(capsule, None, None, dims=dims)


def _is_capsule(x: object) -> bool:
    return type(x).__name__ == "PyCapsule"


def _dims_for_shape(shape_or_dim_data: Union[int, Sequence[Any]]) -> Dims:
    if isinstance(shape_or_dim_data, (int, np.integer)):
        shape_or_dim_data = (shape_or_dim_data,)
    items = list(shape_or_dim_data)
    if items and all(isinstance(d, Mapping) for d in items):
        return dims_from_dim_data(items)
    dims = dims_from_dim_data([{}] * len(items))
    for i, (dim, extent) in enumerate(zip(dims.dims, items)):
        _c.gdap_dim_set_undistributed(dim, shape_entry(extent, i))
    return dims


def empty(shape_or_dim_data: Union[int, Sequence[Any]], dtype: DTypeLike = np.float64,
          device: DeviceLike = "cpu") -> LocalArray:
    """A new section that gdap allocates (gdap_array_create): C-contiguous, zero-filled on the host,
    not initialised on a CUDA device. shape_or_dim_data: a shape (undistributed) or a dim_data
    whose dicts define the local shape ({} is refused: it has no extent of its own)."""
    dims = _dims_for_shape(shape_or_dim_data)
    return LocalArray(_c.gdap_array_create(dtype_to_c(dtype), device_to_c(device), dims.dims))


def wrap(address: int, dtype: DTypeLike, shape_or_dim_data: Union[int, Sequence[Any]], device: DeviceLike = "cpu",
         strides: Optional[Sequence[int]] = None, owner: Any = None) -> LocalArray:
    """A LocalArray over memory at an integer `address` that the caller keeps alive
    (gdap_array_wrap: the memory is retained, never freed by gdap). `owner`, if given, is kept
    alive as long as the LocalArray. strides are in elements (None: C-contiguous). Views exported
    from the result are valid only while that memory lives."""
    dims = _dims_for_shape(shape_or_dim_data)
    element_strides = None if strides is None else tuple(integer(s, "strides[%d]" % i) for i, s in enumerate(strides))
    handle = _c.gdap_array_wrap(integer(address, "address"), dtype_to_c(dtype), device_to_c(device), element_strides,
                                dims.dims)
    return LocalArray(handle, owner)


# ---- __distarray__ consumers --------------------------------------------------------------------

_DISTBUFFER_KEYS = ("__version__", "buffer", "dim_data")


def from_distarray(obj: Any) -> LocalArray:
    """A LocalArray sharing the section of a protocol producer, without copying.

    obj: an object with __distarray__(), or a distbuffer dict {'__version__', 'buffer',
    'dim_data'}. The buffer may be anything with __dlpack__ (NumPy, CuPy, PyTorch, JAX arrays, a
    LocalArray), __cuda_array_interface__ (device memory), or the buffer protocol / NumPy's array
    interface (memoryview, bytearray, array.array, ...). Empty dicts {} are resolved from the
    buffer's shape.
    """
    d = obj.__distarray__() if hasattr(obj, "__distarray__") else obj
    if not isinstance(d, Mapping):
        raise ProtocolError("a distbuffer must be a dict with keys '__version__', 'buffer' and 'dim_data', not %s"
                            % type(d).__name__)
    for key in d:
        if key not in _DISTBUFFER_KEYS:
            raise ProtocolError("distbuffer: unknown key %r" % (key,))
    for key in _DISTBUFFER_KEYS:
        if key not in d:
            raise ProtocolError("distbuffer: missing required key '%s'" % key)
    version = d["__version__"]
    if not isinstance(version, str):
        raise ProtocolError("distbuffer: key '__version__' must be a string, not %s" % type(version).__name__)
    _c.gdap_protocol_version_check(version)
    buffer, dim_data = d["buffer"], d["dim_data"]
    what = "distbuffer: key 'buffer'"
    if hasattr(buffer, "__dlpack__"):
        return _from_capsule(_capsule_from_producer(buffer, None, what), dim_data, version)
    if hasattr(buffer, "__cuda_array_interface__"):
        return _from_cuda_array_interface(buffer, dim_data, version)
    return _from_capsule(_capsule_from_producer(_host_array(buffer), None, what), dim_data, version)


def _host_array(buffer: Any) -> np.ndarray:
    """A NumPy array over a host buffer (buffer protocol or array interface), never a copy."""
    if not (hasattr(buffer, "__array_interface__") or hasattr(buffer, "__array_struct__")):
        try:
            buffer = memoryview(buffer)
        except TypeError:
            raise ProtocolError("distbuffer: 'buffer' (%s) offers none of __dlpack__, __cuda_array_interface__, "
                                "the buffer protocol or __array_interface__" % type(buffer).__name__) from None
    return np.asarray(buffer)


def _from_cuda_array_interface(buffer: Any, dim_data: DimData, version: str) -> LocalArray:
    cai = buffer.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise UnsupportedError("__cuda_array_interface__ with a mask is not supported")
    stream = cai_stream(cai)  # checked before anything is made: a bad entry leaves nothing behind
    dtype = np.dtype(cai["typestr"])
    shape = tuple(int(s) for s in cai["shape"])
    strides = cai.get("strides")
    if strides is not None:
        if any(s % dtype.itemsize for s in strides):
            raise UnsupportedError("__cuda_array_interface__ strides %s are not multiples of the element size %d"
                                   % (tuple(strides), dtype.itemsize))
        strides = tuple(int(s) // dtype.itemsize for s in strides)
    address, readonly = cai["data"]
    ordinal = _cuda_device_of(buffer, address)
    if stream is not None:  # the producer's pending work on the data ends before gdap can touch it
        _cuda.wait_for_stream(stream, ordinal, buffer)
    capsule = _c.gdap_py_tensor_from_pointer(address, shape, strides, dtype_to_c(dtype), (CUDA, ordinal),
                                             int(bool(readonly)), buffer)
    return _from_capsule(capsule, dim_data, version)


_CAI_STREAM = "__cuda_array_interface__ 'stream'"


def cai_stream(cai: Mapping) -> Optional[int]:
    """The stream a __cuda_array_interface__ (v3) asks its consumer to synchronise on: None (no
    synchronisation), 1 (the legacy default stream), 2 (the per-thread default stream) or another
    cudaStream_t as an int; the runtime takes 1 and 2 as those streams' handles (cudaStreamLegacy,
    cudaStreamPerThread). 0 is disallowed by the interface (ambiguous between None and either
    default stream), as are negative values and anything that is not an integer: ProtocolError."""
    stream = cai.get("stream")
    if stream is None:
        return None
    value = integer(stream, _CAI_STREAM, ProtocolError)
    if value == 0:
        raise ProtocolError("%s is 0, which the interface disallows (ambiguous): a producer gives None, 1 (the legacy "
                            "default stream), 2 (the per-thread default stream) or a cudaStream_t" % _CAI_STREAM)
    if value < 0:
        raise ProtocolError("%s is %d: a stream is None, 1, 2 or a cudaStream_t (an address), never negative"
                            % (_CAI_STREAM, value))
    return value


def _cuda_device_of(buffer: Any, address: int) -> int:
    """The CUDA device ordinal of a __cuda_array_interface__ buffer (the interface omits it)."""
    device = getattr(buffer, "device", None)
    for attribute in ("id", "index"):  # CuPy's Device.id, PyTorch's device.index
        ordinal = getattr(device, attribute, None)
        if isinstance(ordinal, int):
            return ordinal
    if address:
        try:
            import cupy
            return int(cupy.cuda.runtime.pointerGetAttributes(address).device)
        except Exception:
            pass
    return 0

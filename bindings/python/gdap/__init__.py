"""gdap: the Distributed Array Protocol (DAP 0.10.0) for host and GPU arrays, in Python.

A thin layer over the C library (libgdap) through its SWIG extension gdap._gdap_c: every check
and every index computation is the C library's; this package translates Python objects (dicts,
NumPy arrays, DLPack capsules, CUDA array interfaces) to the C API and back, without copying
array elements.

  LocalArray        one process's local section + distribution; __distarray__, __dlpack__,
                    __array_interface__ (host) and __cuda_array_interface__ (device)
  from_distarray    a LocalArray from any protocol producer (object or distbuffer dict)
  from_dlpack       a LocalArray from a NumPy / CuPy / PyTorch / JAX array (or a capsule)
  empty, wrap       a section gdap allocates / memory the caller owns, at an address
  validate          check one process's dim_data (and shape) against the protocol
  GlobalMap         every rank's dim_data: owners, local shapes, owned counts and runs;
                    GlobalMap.collective(comm, dim_data) builds it from each rank's own
  Comm, group       communicators: an in-process group of threads (group(n)), MPI (mpi4py), NCCL
  Plan, redistribute    one rank's part of a redistribution and its collective execution
  keeping_roles     destination roles that keep the most in place (a relabeled Plan moves least)
  gather, scatter, allgather, broadcast   the same moves to and from GlobalMap.root / .replicated
  allreduce         element-wise sum / prod / min / max of every rank's section, in place
  reduce_scatter    the same over replicated or overlapping sections, into a distributed result
  reduce_axes       global sum / prod / min / max / mean over some or all axes, into any distribution
  Halo, halo_exchange   one rank's part of a halo exchange and its collective execution
  HaloExchange          a persistent halo exchange: checked and agreed once, then start()ed
  Gemm, gemm        distributed C = alpha * A * B + beta * C (SUMMA; BLAS / cuBLAS)
  layout            one call per layout: block, irregular, cyclic, block_cyclic, padded, periodic,
                    unstructured, replicated, root (GlobalMaps made by the C library)
  GlobalArray       a distributed array seen whole: reshard, get, a[i, j], sum / mean / ..., + - * /,
                    @, .T / transpose / reshape (views where the layout allows), halo_exchange,
                    Zarr and .dnpy; single controller (Controller) or SPMD (Comm)
  distribute        a whole array dealt out into a layout (GlobalArray.scatter)
  GatherWarning     a NumPy function gdap does not compute distributed gathered a GlobalArray
  Controller        the ranks of a single-controller GlobalArray (an in-process group and its threads)
  from_cupyx, to_cupyx  a cupyx.distributed.array DistributedArray as a GlobalArray, and back
  from_jax, to_jax, from_dtensor, to_dtensor   JAX arrays and PyTorch DTensors, likewise
  save_dnpy, load_dnpy   DistArray's per-rank .dnpy files, one per rank
  empty_shm, ipc_export, ipc_open   share a section with another process of the node (bytes handle)
  Error, ProtocolError, VersionError, ...   one exception class per gdap_status

Order: shapes, indices and dim_data are in C order (row-major), as NumPy and the protocol have them.
"""

from __future__ import annotations

from . import _gdap_c as _gdap_c  # the SWIG extension (explicitly re-exported for the submodules)
from ._comm import Comm, group
from ._dims import (dim_global_to_local, dim_local_extent, dim_local_to_global, dim_owned_count, dim_runs,
                    validate)
from ._errors import (BufferTooSmallError, CollectiveInterruptedError, CollectiveTimeoutError, CommError,
                      DeviceError, Error, FileIOError, InternalError, InvalidArgumentError, NotFoundError, OutOfMemoryError, OutOfRangeError,
                      ProtocolError, RemoteError, SizeOverflowError, UnsupportedError, VersionError)
from ._local import (PROTOCOL_VERSION, LocalArray, empty, from_distarray, from_dlpack, wrap)
from ._map import GlobalMap, grid_coords_to_rank, grid_rank_to_coords
from ._redistribute import (Plan, allgather, keeping_roles, allreduce, broadcast, gather, redistribute, reduce_axes, reduce_scatter,
                            scatter)
from ._halo import Halo, HaloExchange, halo_exchange
from ._gemm import Gemm, gemm
from ._cupyx import from_cupyx, to_cupyx
from . import layout
from ._context import Controller
from ._global import GlobalArray, distribute
from ._functions import GatherWarning
from . import _concat  # noqa: F401 - registers np.concatenate, np.stack, np.vstack, np.hstack
from ._jax import from_jax, to_jax
from ._dtensor import from_dtensor, to_dtensor
from ._zarr import load_zarr, save_zarr, zarr_shape
from ._dnpy import load_dnpy, save_dnpy
from ._ipc import IPC_HANDLE_SIZE, IPC_MAX_NDIM, empty_shm, ipc_export, ipc_open

__version__ = _gdap_c.gdap_version_string()


def protocol_version_check(version: str) -> None:
    """Checks a protocol version string ("major.minor.patch"): None if gdap reads it, VersionError
    for another major or a newer minor, InvalidArgumentError for a malformed string."""
    if not isinstance(version, str):
        raise InvalidArgumentError("version must be a string such as '0.10.0', not %s" % type(version).__name__)
    _gdap_c.gdap_protocol_version_check(version)


def library_version() -> tuple[str, int]:
    """The loaded libgdap's version as (string, number): ("0.2.0", 200)."""
    return _gdap_c.gdap_version_string(), _gdap_c.gdap_version()


__all__ = [
    "LocalArray", "GlobalMap", "from_distarray", "from_dlpack", "empty", "wrap", "validate",
    "protocol_version_check", "library_version", "PROTOCOL_VERSION",
    "grid_rank_to_coords", "grid_coords_to_rank", "Comm", "group", "Plan", "keeping_roles", "redistribute", "gather", "scatter", "allgather", "broadcast", "allreduce", "reduce_scatter", "reduce_axes", "Halo", "HaloExchange", "halo_exchange", "Gemm", "gemm", "from_cupyx", "to_cupyx",
    "layout", "GlobalArray", "distribute", "GatherWarning", "Controller", "from_jax", "to_jax", "from_dtensor", "to_dtensor",
    "save_zarr", "load_zarr", "zarr_shape", "save_dnpy", "load_dnpy",
    "empty_shm", "ipc_export", "ipc_open", "IPC_HANDLE_SIZE", "IPC_MAX_NDIM",
    "dim_owned_count", "dim_local_extent", "dim_global_to_local", "dim_local_to_global", "dim_runs",
    "Error", "InvalidArgumentError", "ProtocolError", "VersionError", "SizeOverflowError", "OutOfRangeError",
    "NotFoundError", "BufferTooSmallError", "OutOfMemoryError", "UnsupportedError", "DeviceError", "CommError",
    "RemoteError", "CollectiveTimeoutError", "FileIOError", "InternalError", "CollectiveInterruptedError",
]

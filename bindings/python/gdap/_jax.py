"""Adapters for JAX: a jax.Array's addressable shards as a GlobalArray's sections (one rank per
shard, each shard's index a chunk region: _chunks.chunk_layout), and a GlobalArray as a jax.Array
assembled from its sections (jax.make_array_from_single_device_arrays over a NamedSharding that
gdap derives from the layout). Nothing is copied: sections and shards share memory through DLPack.

JAX arrays are immutable: a GlobalArray over JAX shards aliases JAX's buffers, so writing through
it (halo_exchange, or a section written by hand) changes those JAX arrays in place, which JAX does
not expect. Reading (reshard, get, reductions, matmul) is safe.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._chunks import chunk_layout
from ._errors import UnsupportedError
from ._local import from_dlpack


def _jax() -> Any:
    try:
        import jax
    except ImportError as e:
        raise UnsupportedError("jax is not importable: %s" % e) from None
    return jax


def from_jax(array: Any) -> Any:
    """A GlobalArray (single controller) over a jax.Array's addressable shards, no copy: rank r
    holds one shard (replicated shardings give replicas), on the shard's device. The array must be
    fully addressable (one process)."""
    from ._global import GlobalArray
    if not getattr(array, "is_fully_addressable", True):
        raise UnsupportedError("the jax.Array spans several processes: gdap's single controller takes one "
                               "process's arrays (use SPMD with each process's shards)")
    shards = list(array.addressable_shards)
    if array.ndim == 0:
        raise UnsupportedError("a 0-d jax.Array has no shard grid")
    layout, shard_of_rank, _ = chunk_layout(tuple(array.shape), [s.index for s in shards])
    sections = [from_dlpack(shards[k].data, layout.dim_data(r)) for r, k in enumerate(shard_of_rank)]
    return GlobalArray.from_sections(sections, layout)


def _jax_device(jax: Any, device: str, rank: int) -> Any:
    """The JAX device of a gdap device name: GPU ordinal N for 'cuda:N', the rank's CPU device
    for host memory (XLA_FLAGS=--xla_force_host_platform_device_count gives one per rank)."""
    if device.startswith("cuda:"):
        ordinal = int(device.split(":")[1])
        for d in jax.devices("gpu"):
            if getattr(d, "local_hardware_id", d.id) == ordinal:
                return d
        raise UnsupportedError("JAX has no GPU with ordinal %d" % ordinal)
    cpus = jax.devices("cpu")
    if rank >= len(cpus):
        raise UnsupportedError("rank %d needs a JAX CPU device of its own but JAX has %d (set XLA_FLAGS="
                               "--xla_force_host_platform_device_count)" % (rank, len(cpus)))
    return cpus[rank]


def sharding_of(layout: Any, devices: list) -> tuple[Any, tuple]:
    """A NamedSharding (and its mesh's axis names) that places the regions of an even-block layout
    on `devices` (one per rank, in rank order): mesh axes are the grid axes of more than one rank."""
    _jax()
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    grid = tuple(layout.grid_shape)
    for axis, (n, g) in enumerate(zip(layout.shape, grid)):
        dims = layout.dim_data(0)[axis]
        if g > 1 and (dims["dist_type"] != "b" or "padding" in dims or n % g):
            raise UnsupportedError("axis %d ('%s' over %d, size %d): a JAX sharding splits an axis into equal "
                                   "blocks without halos; reshard to gdap.layout.block first" % (axis,
                                                                                                 dims["dist_type"],
                                                                                                 g, n))
    names = tuple("gdap%d" % i for i in range(len(grid)))
    mesh = Mesh(np.array(devices, dtype=object).reshape(grid), names)
    spec = PartitionSpec(*[names[i] if g > 1 else None for i, g in enumerate(grid)])
    return NamedSharding(mesh, spec), names


def to_jax(a: Any) -> Any:
    """A jax.Array whose shards are the sections of a single-controller GlobalArray in even blocks
    (no halos, each axis's size a multiple of its grid), no copy: each section becomes a
    single-device array through DLPack and JAX assembles them."""
    jax = _jax()
    if a.mode != "controller":
        raise UnsupportedError("to_jax takes a single-controller GlobalArray")
    if a.pending is not None:
        a = a.settled()
    devices = [_jax_device(jax, a.devices[r], r) for r in range(a.nranks)]
    sharding, _ = sharding_of(a.layout, devices)
    # Each section's own array (NumPy, CuPy) is exported, not its LocalArray: its DLPack capsule keeps
    # that memory alive as long as JAX holds it, so a temporary GlobalArray (a.T.reshape(-1).to_jax())
    # may be collected without JAX reading freed memory.
    arrays = [_single_device_array(jax, _shared(a, r, devices[r]), devices[r]) for r in range(a.nranks)]
    return jax.make_array_from_single_device_arrays(a.shape, sharding, arrays)


def _shared(a: Any, rank: int, device: Any) -> Any:
    """Rank `rank`'s section as the array JAX imports: host memory must be 64-byte aligned for JAX
    to share it (gdap allocates it so; a copy NumPy made, as (a + 0) gives, may not be)."""
    from ._global import _ALIGN, _address
    if device.platform != "cpu" and a._natives.get(rank) is None:
        return a.section(rank)  # memory gdap allocated on a device (no CuPy): the LocalArray owns it
    native = a.local_view(rank)
    if device.platform == "cpu" and _address(native) % _ALIGN:
        raise UnsupportedError("to_jax: rank %d's section (address 0x%x) is not %d-byte aligned, which JAX needs to "
                               "share host memory (NumPy allocated it); a.reshard(a.layout) or a.copy() "
                               "gives aligned sections" % (rank, _address(native), _ALIGN))
    return native


def _single_device_array(jax: Any, section: Any, device: Any) -> Any:
    """A single-device jax.Array over a section's memory. A GPU section's DLPack device is its
    JAX device (jax.dlpack.from_dlpack). Host memory is DLPack's CPU device 0 whichever JAX CPU
    device a rank is, so a host section is placed on its rank's CPU device by jaxlib's own DLPack
    import (a private function: JAX's public one would copy onto that device); JAX takes host memory
    without a copy when it is 64-byte aligned, as gdap allocates it."""
    if device.platform != "cpu":
        return jax.dlpack.from_dlpack(section, device=device, copy=False)
    from jax._src.lib import _jax as jaxlib  # noqa: PLC2701 - see above
    try:
        return jaxlib.dlpack_managed_tensor_to_buffer(section.__dlpack__(), device, None, False, 1)
    except TypeError:  # jaxlib before its 5-argument form
        return jaxlib.dlpack_managed_tensor_to_buffer(section.__dlpack__(), device, None, False)

"""One process's part of test_global_gpu.py's DTensor round trip (run under
`python -m torch.distributed.run --standalone --nproc_per_node=4`, not collected by pytest): a gdap
NCCL communicator over the same ranks as torch.distributed, then DTensors of several placements
(uneven Shard, 2-d meshes, Replicate, Partial) to GlobalArrays and back, the local shard's address
unchanged each way and the values checked. Prints "rank R: ok"."""
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

import cupy
from cupy.cuda import nccl

import gdap
from gdap import layout

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
assert world == 4
torch.cuda.set_device(rank)
cupy.cuda.Device(rank).use()
dist.init_process_group("nccl")
uid = [nccl.get_unique_id() if rank == 0 else None]
dist.broadcast_object_list(uid, src=0)
comm = gdap.Comm.from_nccl(nccl.NcclCommunicator(world, uid[0], rank))

N, M = 10, 6  # 10 rows over 4 ranks: torch.chunk's 3, 3, 3, 1 (an uneven Shard)
full = torch.arange(N * M, dtype=torch.float32, device="cuda").reshape(N, M)
host = full.cpu().numpy()


def round_trip(x, mesh, what):
    g = gdap.from_dtensor(x, comm)
    local = x.to_local()
    if 0 not in tuple(local.shape):
        assert g.section().data_ptr == local.data_ptr(), what
    assert np.array_equal(g.get(), host), what
    return g


mesh1 = init_device_mesh("cuda", (world,))
x = distribute_tensor(full, mesh1, [Shard(0)])
g = round_trip(x, mesh1, "Shard(0), uneven")
assert g.layout.local_shape(3) == (1, M)
y = gdap.to_dtensor(g, mesh1)
assert y.to_local().data_ptr() == x.to_local().data_ptr() and torch.equal(y.full_tensor(), full)
cols = g.reshard(layout.block((N, M), (1, world)))
z = gdap.to_dtensor(cols, mesh1)
assert z.placements == (Shard(1),) and torch.equal(z.full_tensor(), full)

mesh2 = init_device_mesh("cuda", (2, 2))
for placements in ([Shard(0), Shard(1)], [Replicate(), Shard(1)], [Shard(1), Replicate()], [Replicate(), Replicate()]):
    round_trip(distribute_tensor(full, mesh2, placements), mesh2, str(placements))

partial = DTensor.from_local(torch.full((N, M), rank + 1.0, device="cuda"), mesh1, [Partial()], run_check=False)
p = gdap.from_dtensor(partial, comm)
assert p.pending == "sum" and p.section().data_ptr == partial.to_local().data_ptr()
assert (p.get() == 10.0).all()
print("rank %d: ok" % rank, flush=True)
dist.destroy_process_group()

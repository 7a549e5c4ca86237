"""PyTorch DTensor redistribute, row blocks -> column blocks, float32 N x N, one process per GPU: the
DTensor row of bench/gpu/reshard_scaling.py's rows-cols layout, which runs this under
`python -m torch.distributed.run --standalone --nproc_per_node=<GPUs> dtensor_reshard.py N`.
Rank 0 prints one JSON line, {"ms": median of 30 after 3 warm-ups (barrier and synchronise before
each, synchronise after), "ok": the result checked on every rank}."""
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor

N = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
REPS, WARMUP = 30, 3
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(rank)
mesh = init_device_mesh("cuda", (world,))
full = (torch.arange(N * N, dtype=torch.int64, device="cuda") % 1009).to(torch.float32).reshape(N, N)
x = distribute_tensor(full, mesh, [Shard(0)])
del full
times = []
for it in range(WARMUP + REPS):
    dist.barrier()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    y = x.redistribute(mesh, [Shard(1)])
    torch.cuda.synchronize()
    if it >= WARMUP:
        times.append(time.perf_counter() - t0)
local = y.to_local()
c0 = -(-N // world) * rank
expected = (torch.arange(N, device="cuda")[:, None] * N + torch.arange(c0, c0 + local.shape[1], device="cuda")[None, :])
ok = bool(torch.equal(local, (expected % 1009).to(torch.float32)))
oks = [None] * world
dist.all_gather_object(oks, ok)
if rank == 0:
    print(json.dumps({"ms": 1e3 * sorted(times)[len(times) // 2], "ok": all(oks)}), flush=True)
dist.destroy_process_group()

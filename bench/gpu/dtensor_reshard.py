"""PyTorch DTensor redistribute, row blocks -> column blocks, float32 N x N, one process per GPU: the
DTensor row of bench/gpu/global_reshard.py, which runs this under
`python -m torch.distributed.run --standalone --nproc_per_node=<GPUs> dtensor_reshard.py N`.
Rank 0 prints one markdown row (median of 30 after 3 warm-ups, barrier and synchronise before each,
synchronise after) and its ratio to GDAP_BARE_MS when that is set; the result is checked."""
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
    ms = 1e3 * sorted(times)[len(times) // 2]
    across = N * N * 4 * (world - 1) / world
    bare = float(os.environ.get("GDAP_BARE_MS", "0") or 0)
    ratio = "%.2fx" % (ms / bare) if bare else ""
    print("| PyTorch DTensor redistribute (NCCL, %d processes) | %.3f | %.0f | %s | %s |"
          % (world, ms, across / ms / 1e6, ratio, "ok" if all(oks) else "WRONG"), flush=True)
dist.destroy_process_group()

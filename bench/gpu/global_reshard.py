"""Resharding through gdap.GlobalArray beside the bare gdap.redistribute of the same move and beside
the peers, in one run on one multi-GPU machine: float32 N x N, row blocks -> column blocks over
every GPU of the machine (one rank per GPU).

  GlobalArray.reshard   a.reshard(cols): plans cached, new sections from CuPy's pool, the ranks'
                        threads the Controller's (what a user writes: one line)
  bare, per call        gdap.redistribute by the caller's own threads into preallocated sections,
                        one call per rank per repeat, released by a barrier (the floor the class is
                        held to: target <= 1.1x)
  bare, pipelined       the same threads calling it REPS times back to back (no wait between)
  cupyx reshard         cupyx.distributed.array
  JAX jit reshard       jax.jit(identity, out_shardings=columns)
  DTensor redistribute  bench/gpu/dtensor_reshard.py under torch.distributed.run (one process per GPU)

Every repeat is timed from the call to every GPU synchronised; the median of REPS after warm-ups.
Every engine's result is checked against the source. Prints a markdown table, ratios against the
bare per-call time.
Usage: PYTHONPATH=<gdap build>/bindings/python python3 bench/gpu/global_reshard.py [N] [--host]
  --host: four ranks in host memory and the gdap rows only (what the class costs beside the bare
  call where there is no GPU; N defaults to 2048 there)
"""
import os
import pathlib
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

import gdap
from gdap import layout

HOST = "--host" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "--host"]
N = int(ARGS[0]) if ARGS else 2048 if HOST else 16384
REPS, WARMUP = 30, 3
if HOST:
    cupy = None
    P = 4
else:
    import cupy
    P = cupy.cuda.runtime.getDeviceCount()
ROWS = []


def sync_all():
    for d in range(0 if HOST else P):
        cupy.cuda.Device(d).synchronize()


def median_ms(once, reps=REPS):
    for _ in range(WARMUP):
        once()
    sync_all()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        once()
        sync_all()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def row(engine, ms, ok, base=None):
    across = N * N * 4 * (P - 1) / P
    ratio = "" if base is None else "%.2fx" % (ms / base)
    ROWS.append("| %s | %.3f | %.0f | %s | %s |" % (engine, ms, across / ms / 1e6, ratio, "ok" if ok else "WRONG"))
    print(ROWS[-1], flush=True)


def host_cols(d):
    """Rank d's columns of the source, (i * N + j) % 1009, computed in integers."""
    c0, c1 = N * d // P, N * (d + 1) // P
    return ((np.arange(N)[:, None] * N + np.arange(c0, c1)[None, :]) % 1009).astype(np.float32)


def whole_on_gpu0():
    if HOST:
        return (np.arange(N * N, dtype=np.int64) % 1009).astype(np.float32).reshape(N, N)
    with cupy.cuda.Device(0):
        return (cupy.arange(N * N, dtype=cupy.int64) % 1009).astype(cupy.float32).reshape(N, N)


def check_cols(sections):
    return all(np.array_equal(np.asarray(sections[d]) if HOST else cupy.asnumpy(sections[d]), host_cols(d))
               for d in range(P))


whole = whole_on_gpu0()
rows, cols = layout.block((N, N), P), layout.block((N, N), (1, P))
a = gdap.distribute(whole, rows, devices=P if HOST else None)
whole = None
out = {}


def reshard_once():
    out["b"] = a.reshard(cols)


class_ms = median_ms(reshard_once)
class_ok = check_cols([out["b"].local_view(d) for d in range(P)])
out.pop("b")

# The bare call: the caller's threads, preallocated destinations, the class's own source sections.
comms = gdap.group(P)
plans = [gdap.Plan(rows, cols, np.float32, comms[r]) for r in range(P)]
dst = []
for d in range(P):
    if HOST:
        dst.append(np.empty((N, cols.local_shape(d)[1]), dtype=np.float32))
        continue
    with cupy.cuda.Device(d):
        dst.append(cupy.empty((N, cols.local_shape(d)[1]), dtype=cupy.float32))
src = [a.section(r) for r in range(P)]
go, done = threading.Barrier(P + 1), threading.Barrier(P + 1)
calls = {"n": 1, "stop": False}


def worker(r):
    while True:
        go.wait()
        if calls["stop"]:
            return
        for _ in range(calls["n"]):
            gdap.redistribute(comms[r], plans[r], src[r], dst[r])
        done.wait()


threads = [threading.Thread(target=worker, args=(r,), daemon=True) for r in range(P)]
for t in threads:
    t.start()


def bare_once():
    go.wait()
    done.wait()


bare_ms = median_ms(bare_once)
bare_ok = check_cols(dst)
calls["n"] = REPS
pipelined_ms = median_ms(bare_once, reps=5) / REPS
calls["stop"] = True
go.wait()

row("gdap GlobalArray.reshard", class_ms, class_ok, bare_ms)
row("gdap.redistribute, bare, per call", bare_ms, bare_ok, bare_ms)
row("gdap.redistribute, bare, pipelined", pipelined_ms, bare_ok, bare_ms)
a = src = dst = None  # free the sections before the peers run
if HOST:
    print("\n## float32 %d x %d, row blocks -> column blocks, %d ranks in host memory\n" % (N, N, P))
    print("| engine | median ms | GB/s across | / bare per call | result |")
    print("|---|---|---|---|---|")
    print("\n".join(ROWS))
    sys.exit(0)
for d in range(P):
    with cupy.cuda.Device(d):
        cupy.get_default_memory_pool().free_all_blocks()

try:
    from cupyx.distributed import array as dda
    whole = whole_on_gpu0()
    rmap = {d: [(slice(N * d // P, N * (d + 1) // P), slice(None))] for d in range(P)}
    cmap = {d: [(slice(None), slice(N * d // P, N * (d + 1) // P))] for d in range(P)}
    darr = dda.distributed_array(whole, rmap)
    whole = None

    def cupyx_once():
        out["c"] = darr.reshard(cmap)
        out["c"].all_chunks()

    ms = median_ms(cupyx_once, reps=10)
    row("cupyx reshard", ms, check_cols([out["c"].all_chunks()[d][0] for d in range(P)]), bare_ms)
    darr = None
    out.pop("c")
except Exception as e:  # noqa: BLE001 - a peer that fails is reported, not fatal
    print("cupyx failed:", repr(e), flush=True)
for d in range(P):
    with cupy.cuda.Device(d):
        cupy.get_default_memory_pool().free_all_blocks()

try:
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as PS
    devs = jax.devices("gpu")[:P]
    mesh = Mesh(np.array(devs), ("x",))
    host = (np.arange(N * N, dtype=np.int64) % 1009).astype(np.float32).reshape(N, N)
    xr = jax.device_put(host, NamedSharding(mesh, PS("x", None)))
    to_cols = jax.jit(lambda v: v, out_shardings=NamedSharding(mesh, PS(None, "x")))

    def jax_once():
        out["j"] = to_cols(xr)
        out["j"].block_until_ready()

    ms = median_ms(jax_once)
    row("JAX jit(out_shardings) reshard", ms, bool(np.array_equal(np.asarray(out["j"]), host)), bare_ms)
    xr = None
    out.pop("j")
except Exception as e:  # noqa: BLE001
    print("jax failed:", repr(e), flush=True)

script = pathlib.Path(__file__).with_name("dtensor_reshard.py")
try:
    run = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=%d" % P,
                          str(script), str(N)], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, GDAP_BARE_MS="%.6f" % bare_ms))
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("| ")]
    if run.returncode != 0 or not lines:
        print("DTensor failed:", run.stdout[-800:], run.stderr[-800:], flush=True)
    ROWS.extend(lines)
except Exception as e:  # noqa: BLE001
    print("DTensor failed:", repr(e), flush=True)

print("\n## float32 %d x %d, row blocks -> column blocks, %d GPUs (one rank per GPU)\n" % (N, N, P))
print("| engine | median ms | GB/s across | / bare per call | result |")
print("|---|---|---|---|---|")
print("\n".join(ROWS))

"""Saving and loading a distributed array as a Zarr v3 store: gdap beside zarr-python and (where it is
installed) TensorStore, same array, same codec, same shards and inner chunks, same process layout,
and a plain write and read of the same bytes (dd-style: no encoding, no store) as the floor.

Run under MPI, one process per rank (bench/zarr/run.sh does): the array (float64, ROWS x COLS,
smooth values with noise in the low bits, so that the codecs have work) is split in row blocks, one
per rank. Each rank holds its block; then, timed (every rank starts after a barrier; a step takes
as long as its slowest rank; the fastest and the median of the repeats):

  save           every rank writes its block: gdap.save_zarr (one shard per block, inner chunks
                 of at most 2 MiB); zarr-python and TensorStore open the store rank 0 created with
                 the same metadata (gdap's own zarr.json) and write their block's region;
  load           every rank reads its block back;
  load columns   every rank reads a column block (another layout: each reads a part of every shard);
  floor          every rank writes (then reads) its block's raw bytes to (from) a file of its own.

Every load is checked element for element. With --device cuda the blocks live in GPU memory
(CuPy): gdap saves and loads device sections; zarr-python and TensorStore are timed from and to the
same device arrays (the copy to and from host memory counted). Prints a markdown table.
Usage: mpirun -np 4 python3 zarr_io.py [--rows R] [--cols C] [--codec zstd|blosc-lz4|raw]
       [--repeats N] [--dir D] [--device cpu|cuda]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

import gdap

WORLD = MPI.COMM_WORLD
RANK, SIZE = WORLD.Get_rank(), WORLD.Get_size()


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=8192)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--codec", default="zstd", choices=["zstd", "blosc-lz4", "raw"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    return p.parse_args()


def block(n, p, r):
    return n * r // p, n * (r + 1) // p


def dims_rows(a):
    lo, hi = block(a.rows, SIZE, RANK)
    return [dict(dist_type="b", size=a.rows, proc_grid_size=SIZE, proc_grid_rank=RANK, start=lo, stop=hi),
            dict(dist_type="b", size=a.cols, proc_grid_size=1, proc_grid_rank=0, start=0, stop=a.cols)]


def dims_cols(a):
    lo, hi = block(a.cols, SIZE, RANK)
    return [dict(dist_type="b", size=a.rows, proc_grid_size=1, proc_grid_rank=0, start=0, stop=a.rows),
            dict(dist_type="b", size=a.cols, proc_grid_size=SIZE, proc_grid_rank=RANK, start=lo, stop=hi)]


def values(a, rows, cols):
    """The array's elements at rows x cols: a smooth field plus noise in the low bits."""
    i = np.arange(*rows, dtype=np.float64)[:, None]
    j = np.arange(*cols, dtype=np.float64)[None, :]
    noise = (((i * 7919 + j * 104729) % 1021) / 1021.0) * 1e-6
    return np.sin(i / 97.0) * np.cos(j / 131.0) + noise


def timed(step):
    """The slowest rank's seconds for step() (every rank starts together)."""
    WORLD.Barrier()
    t0 = time.perf_counter()
    out = step()
    t = time.perf_counter() - t0
    return WORLD.allreduce(t, op=MPI.MAX), out


def fresh(path):
    if RANK == 0:
        shutil.rmtree(path, ignore_errors=True)
    WORLD.Barrier()


class Device:
    """Moves blocks between host arrays and the device the benchmark's sections live on."""

    def __init__(self, kind):
        self.kind = kind
        self.cp = None
        if kind == "cuda":
            import cupy
            cupy.cuda.Device(RANK % cupy.cuda.runtime.getDeviceCount()).use()
            self.cp = cupy

    def put(self, host):
        return self.cp.asarray(host) if self.cp else host

    def host(self, x):
        return self.cp.asnumpy(x) if self.cp else np.asarray(x)

    def empty(self, shape):
        return self.cp.empty(shape, np.float64) if self.cp else np.empty(shape, np.float64)

    def sync(self):
        if self.cp:
            self.cp.cuda.runtime.deviceSynchronize()


def gdap_steps(a, dev, comm, path, mine, rows_map, cols_map):
    def save():
        gdap.save_zarr(comm, rows_map, mine, path, codec=a.codec, overwrite=True)
        dev.sync()

    def load(gmap, shape):
        def step():
            section = dev.empty(shape)
            gdap.load_zarr(comm, gmap, path, section=section)
            dev.sync()
            return section
        return step
    return save, load


def create_store(path, meta):
    """Rank 0 writes `meta` as the store's zarr.json; every rank returns once it is there."""
    if RANK == 0:
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "zarr.json"), "w") as f:
            json.dump(meta, f)
    WORLD.Barrier()


def zarr_python_steps(a, dev, path, meta, rows, cols):
    import zarr

    def save(block):
        def step():
            create_store(path, meta)
            z = zarr.open_array(path, mode="r+")
            z[rows[0]:rows[1], :] = dev.host(block)
        return step

    def load(r, c):
        def step():
            z = zarr.open_array(path, mode="r")
            return dev.put(z[r[0]:r[1], c[0]:c[1]])
        return step
    return save, load


def tensorstore_steps(a, dev, path, meta, rows, cols):
    try:
        import tensorstore as ts
    except ImportError:
        return None
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}

    def save(block):
        def step():
            create_store(path, meta)
            store = ts.open(spec, open=True).result()
            store[rows[0]:rows[1], :].write(dev.host(block)).result()
        return step

    def load(r, c):
        def step():
            store = ts.open(spec, open=True).result()
            return dev.put(store[r[0]:r[1], c[0]:c[1]].read().result())
        return step
    return save, load


def floor_steps(dev, path, block):
    file = os.path.join(path, "rank%d.raw" % RANK)

    def save():
        os.makedirs(path, exist_ok=True)
        data = dev.host(block)
        with open(file, "wb") as f:
            f.write(memoryview(np.ascontiguousarray(data)).cast("B"))

    def load():
        out = np.empty(block.shape, np.float64)
        with open(file, "rb") as f:
            f.readinto(memoryview(out).cast("B"))
        return dev.put(out)
    return save, load


def median_of(repeats, step, check=None):
    """(fastest, median) of `repeats` runs of `step`, each checked."""
    times = []
    for _ in range(repeats):
        t, out = timed(step)
        if check is not None:
            check(out)
        times.append(t)
    return min(times), statistics.median(times)


def main():
    a = parse()
    dev = Device(a.device)
    comm = gdap.Comm.from_mpi(WORLD)
    comm.set_timeout(600)
    rows, cols = block(a.rows, SIZE, RANK), block(a.cols, SIZE, RANK)
    host_block = values(a, rows, (0, a.cols))
    want_cols = values(a, (0, a.rows), cols)
    mine = dev.put(host_block)
    if a.rows % SIZE != 0:
        raise SystemExit("--rows must be a multiple of the %d ranks (one shard per row block)" % SIZE)
    rows_map = gdap.GlobalMap(WORLD.allgather(dims_rows(a)))
    cols_map = gdap.GlobalMap(WORLD.allgather(dims_cols(a)))
    base = os.path.join(a.dir, "gdap_bench_zarr")
    results = []  # (writer, step, seconds)

    def check_rows(x):
        if not np.array_equal(dev.host(x), host_block):
            raise SystemExit("rank %d: a load of its row block differs from what was saved" % RANK)

    def check_cols(x):
        if not np.array_equal(dev.host(x), want_cols):
            raise SystemExit("rank %d: a load of its column block differs from what was saved" % RANK)

    # gdap first: its zarr.json is the metadata every writer then uses.
    path = os.path.join(base, "gdap.zarr")
    fresh(path)
    save, load = gdap_steps(a, dev, comm, path, mine, rows_map, cols_map)
    results.append(("gdap", "save", median_of(a.repeats, save)))
    results.append(("gdap", "load", median_of(a.repeats, load(rows_map, (rows[1] - rows[0], a.cols)), check_rows)))
    results.append(("gdap", "load columns", median_of(a.repeats, load(cols_map, (a.rows, cols[1] - cols[0])), check_cols)))
    with open(os.path.join(path, "zarr.json")) as f:
        meta = json.load(f)
    stored = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)

    for name, steps in (("zarr-python", zarr_python_steps), ("TensorStore", tensorstore_steps)):
        made = steps(a, dev, os.path.join(base, name + ".zarr"), meta, rows, cols)
        if made is None:
            continue
        save, load = made
        fresh(os.path.join(base, name + ".zarr"))
        results.append((name, "save", median_of(a.repeats, save(mine))))
        results.append((name, "load", median_of(a.repeats, load(rows, (0, a.cols)), check_rows)))
        results.append((name, "load columns", median_of(a.repeats, load((0, a.rows), cols), check_cols)))

    fresh(os.path.join(base, "floor"))
    save, load = floor_steps(dev, os.path.join(base, "floor"), mine)
    results.append(("raw write/read (floor)", "save", median_of(a.repeats, save)))
    results.append(("raw write/read (floor)", "load", median_of(a.repeats, load, check_rows)))

    if RANK == 0:
        total = a.rows * a.cols * 8
        inner = meta["codecs"][0]["configuration"]["chunk_shape"] if meta["codecs"][0]["name"] == "sharding_indexed" else None
        print("### Zarr v3 save and load: float64 %d x %d (%.0f MiB), %d ranks (row blocks), %s, device %s"
              % (a.rows, a.cols, total / 2**20, SIZE, a.codec, a.device))
        print()
        print("one shard per rank's block, inner chunks %s; the store holds %.0f MiB; %d repeats; "
              "gdap %s (GDAP_IO_THREADS=%s), numpy %s" % (inner, stored / 2**20, a.repeats, gdap.__version__,
                                                         os.environ.get("GDAP_IO_THREADS", "default"), np.__version__))
        print()
        print("| writer / reader | step | min s | median s | GiB/s (median, array bytes) | x gdap (median) |")
        print("|---|---|---|---|---|---|")
        ours = {step: med for who, step, (_, med) in results if who == "gdap"}
        for who, step, (fast, med) in results:
            print("| %s | %s | %.3f | %.3f | %.2f | %.2f |" % (who, step, fast, med, total / med / 2**30, med / ours[step]))
        sys.stdout.flush()
    WORLD.Barrier()
    if RANK == 0:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

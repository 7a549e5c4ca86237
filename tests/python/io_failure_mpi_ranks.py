"""One MPI rank's part of test_io_failure_mpi.py (run under mpiexec -n 2, not collected by pytest):
saves whose writing fails for real on rank 1 alone leave every old file byte for byte and nothing
beside them, and every rank raises rank 1's reason (iosafe items 1 and 2). A Zarr overwrite whose
chunk passes rank 1's file-size limit (EFBIG; rank 0's zeros compress below it) lost the old store;
a .dnpy save whose rename failed on rank 1 (a folder at its file name) left rank 0's new file with
rank 1's old one. Prints "rank R: ok" on success."""
import hashlib
import os
import resource
import shutil
import signal
import tempfile

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
FAILING = 1
N = 8192  # float64 elements per rank: a chunk of 64 KiB
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60.0)
lay = layout.block((N * P,), P)
base = WORLD.bcast(tempfile.mkdtemp(prefix="gdap_io_failure_") if R == 0 else None, root=0)


def tree(path):
    """Every entry under `path`, hidden ones included (relative name) -> 'folder' or the SHA-256 of its bytes."""
    out = {}
    for folder, dirs, names in os.walk(path):
        for name in dirs:
            out[os.path.relpath(os.path.join(folder, name), path)] = "folder"
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                out[os.path.relpath(os.path.join(folder, name), path)] = hashlib.sha256(f.read()).hexdigest()
    return out


def size_limited(run):
    """run() with writes past 16 KiB failing (EFBIG) on rank FAILING."""
    if R != FAILING:
        return run()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16384, hard))
    try:
        return run()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)


def fails_with_rank1s_reason(rule, run, text):
    """run() raises FileIOError with `text` on rank FAILING and RemoteError naming it elsewhere;
    every file under `base` stays as it was."""
    WORLD.Barrier()
    before = tree(base)
    WORLD.Barrier()
    try:
        run()
        raise AssertionError("%s: no error on rank %d" % (rule, R))
    except gdap.Error as e:
        mine = e
    if R == FAILING:
        assert isinstance(mine, gdap.FileIOError) and text in str(mine), (rule, type(mine), mine)
    else:
        assert isinstance(mine, gdap.RemoteError), (rule, type(mine), mine)
        assert str(mine).startswith("rank %d failed" % FAILING) and text in str(mine), (rule, mine)
    WORLD.Barrier()
    assert tree(base) == before, "%s: the files changed (or a temporary is left): %s" % (
        rule, sorted(set(tree(base).items()) ^ set(before.items())))
    WORLD.Barrier()  # no rank changes the files (the next case's setup) while another still reads them
    print("rank %d: %s: ok" % (R, rule), flush=True)


old = gdap.distribute(np.arange(N * P, dtype=np.float64) if R == 0 else None, lay, comm=comm, dtype=np.float64)
new = np.zeros(N) if R == 0 else np.random.default_rng(7).random(N)  # rank 1's chunk does not compress below 16 KiB

# iosafe item 2: a Zarr overwrite whose chunk write fails on rank 1 keeps the old store.
store = os.path.join(base, "store")
old.save_zarr(store)
fails_with_rank1s_reason("save_zarr(overwrite=True), rank 1's chunk past its file-size limit",
                         lambda: size_limited(lambda: gdap.save_zarr(comm, lay, new, store, codec="zstd", overwrite=True,
                                                                     shards=False)),
                         "File too large")
assert np.array_equal(gdap.GlobalArray.load_zarr(store, comm=comm).get(), np.arange(N * P, dtype=np.float64))

# iosafe item 1: .dnpy saves.
prefix = os.path.join(base, "d")
gdap.save_dnpy(comm, old.section(), prefix)
newer = gdap.distribute(np.arange(N * P, dtype=np.float64) * 2 if R == 0 else None, lay, comm=comm, dtype=np.float64)
fails_with_rank1s_reason("save_dnpy, rank 1's file past its file-size limit",
                         lambda: size_limited(lambda: gdap.save_dnpy(comm, newer.section(), prefix)), "write failed")
if R == FAILING:
    os.remove(prefix + "_1.dnpy")
    os.makedirs(prefix + "_1.dnpy/inside")
fails_with_rank1s_reason("save_dnpy, a folder at rank 1's file name",
                         lambda: gdap.save_dnpy(comm, newer.section(), prefix),
                         "_1.dnpy: cannot move the written file into place: Is a directory")
if R == FAILING:
    shutil.rmtree(prefix + "_1.dnpy")
WORLD.Barrier()
gdap.save_dnpy(comm, newer.section(), prefix)
assert np.array_equal(np.asarray(gdap.load_dnpy(comm, prefix)), np.asarray(newer.section()))
WORLD.Barrier()
if R == 0:
    assert sorted(os.listdir(base)) == ["d_0.dnpy", "d_1.dnpy", "store"], os.listdir(base)
    shutil.rmtree(base)
print("rank %d: ok" % R, flush=True)

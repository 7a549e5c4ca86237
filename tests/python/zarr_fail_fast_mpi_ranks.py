"""One MPI rank's part of test_zarr_fail_fast_mpi.py (run under mpiexec -n 2, not collected by
pytest): a rank whose Zarr arguments are bad (codec, shuffle, level, overwrite) or that cannot see
the store raises its own error, and every other rank RemoteError quoting it, at once: well under
the communicator's 60 s timeout (hunt 12 #7: they waited the whole timeout; review 12 #1: for an
array with a pending reduction they got "ranks are in different collective calls"). Each case names its
rule; the communicator must still work after each. Prints "rank R: ok" on success."""
import hashlib
import os
import sys
import tempfile
import time

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
FAILING = P - 1
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60.0)
lay = layout.block((8,), P)
a = gdap.distribute(np.arange(8.0) if R == 0 else None, lay, comm=comm, dtype=np.float64)
base = WORLD.bcast(tempfile.mkdtemp(prefix="gdap_zarr_fail_fast_") if R == 0 else None, root=0)
a.save_zarr(os.path.join(base, "good"))


def bad(good, wrong):
    """This rank's argument: `wrong` on the failing rank, `good` elsewhere."""
    return wrong if R == FAILING else good


def fails_fast(rule, run, own_type, text):
    """run() on every rank: FAILING raises own_type with `text`, the others RemoteError naming
    FAILING and quoting `text`, all within 10 s; then the communicator still works."""
    WORLD.Barrier()
    t0 = time.monotonic()
    try:
        run()
        raise AssertionError("%s: no error on rank %d" % (rule, R))
    except Exception as e:
        mine = e
    took = time.monotonic() - t0
    if R == FAILING:
        assert type(mine) is own_type and text in str(mine), (rule, type(mine), mine)
    else:
        assert isinstance(mine, gdap.RemoteError), (rule, type(mine), mine)
        assert str(mine).startswith("rank %d failed" % FAILING) and text in str(mine), (rule, mine)
    assert took < 10.0, "%s: rank %d took %.1f s (the timeout is 60 s)" % (rule, R, took)
    assert np.array_equal(gdap.GlobalArray.load_zarr(os.path.join(base, "good"), comm=comm).get(), np.arange(8.0)), rule
    print("rank %d: %s: %.2f s" % (R, rule, took), flush=True)


fails_fast("GlobalArray.save_zarr: a codec bad on one rank",
           lambda: a.save_zarr(os.path.join(base, "s1"), codec=bad("zstd", "lz4")), ValueError, "not 'lz4'")
fails_fast("GlobalArray.save_zarr: overwrite='no' on one rank",
           lambda: a.save_zarr(os.path.join(base, "s0"), overwrite=bad(True, "no")), TypeError,
           "overwrite must be True or False, not string 'no'")
fails_fast("gdap.save_zarr: a shuffle bad on one rank",
           lambda: gdap.save_zarr(comm, lay, a.section(), os.path.join(base, "s2"), codec="blosc-lz4",
                                  shuffle=bad("shuffle", "byte")), ValueError, "not 'byte'")
fails_fast("gdap.save_zarr: level 'x' on one rank",
           lambda: gdap.save_zarr(comm, lay, a.section(), os.path.join(base, "s3"), level=bad(0, "x")), TypeError,
           "level must be an integer, not string 'x'")
pending = gdap.GlobalArray.from_sections(np.arange(8.0) + R, layout.replicated((8,), P), comm=comm, pending="sum")
fails_fast("GlobalArray.save_zarr: level 'x' on one rank of an array with a pending reduction",
           lambda: pending.save_zarr(os.path.join(base, "s4"), level=bad(0, "x")), TypeError,
           "level must be an integer, not string 'x'")
fails_fast("GlobalArray.load_zarr: a store one rank cannot see",
           lambda: gdap.GlobalArray.load_zarr(os.path.join(base, bad("good", "missing")), comm=comm),
           gdap.FileIOError, "zarr.json: cannot open")
fails_fast("gdap.load_zarr(section=None): a store one rank cannot see",
           lambda: gdap.load_zarr(comm, lay, os.path.join(base, bad("good", "missing"))), gdap.FileIOError,
           "zarr.json: cannot open")


def store_hashes(path):
    """Every file under `path` (relative name) -> the SHA-256 of its bytes."""
    out = {}
    for folder, _, names in os.walk(path):
        for name in names:
            full = os.path.join(folder, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, path)] = hashlib.sha256(f.read()).hexdigest()
    return out


# zarrfix item 1: rank 0 (overwrite=True) removed the old store inside the agreement, before it knew
# that a peer had refused: the store was gone and nothing written. It must stay byte for byte.
kept = os.path.join(base, "kept")
a.save_zarr(kept)
before = store_hashes(kept)
assert len(before) > 1, before
fails_fast("GlobalArray.save_zarr(overwrite=True) over a store, a codec bad on one rank: the store stays whole",
           lambda: a.save_zarr(kept, codec=bad("zstd", "lz4"), overwrite=True), ValueError, "not 'lz4'")
assert store_hashes(kept) == before, "the old store changed although a rank refused the save"
fails_fast("gdap.save_zarr(overwrite=True) over a store, no section on one rank (refused in C): the store stays whole",
           lambda: gdap.save_zarr(comm, lay, a.section() if R != FAILING else None, kept, overwrite=True),
           gdap.InvalidArgumentError, "section is NULL")
assert store_hashes(kept) == before, "the old store changed although a rank refused the save"
# zarrfix item 2: a layout that does not fit the store on one rank was refused before the collective
# call, so the other ranks waited out the timeout.
fails_fast("GlobalArray.load_zarr: a layout of the wrong shape on one rank",
           lambda: gdap.GlobalArray.load_zarr(os.path.join(base, "good"), bad(lay, layout.block((9,), P)), comm=comm),
           gdap.InvalidArgumentError, "layout has shape (9,) but the array has shape (8,)")
fails_fast("GlobalArray.load_zarr: a layout over the wrong number of ranks on one rank",
           lambda: gdap.GlobalArray.load_zarr(os.path.join(base, "good"), bad(lay, layout.block((8,), P + 1)), comm=comm),
           gdap.InvalidArgumentError, "the layout spans %d ranks" % (P + 1))
WORLD.Barrier()
print("rank %d: ok" % R, flush=True)
sys.stdout.flush()

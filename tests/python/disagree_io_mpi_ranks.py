"""One MPI rank's part of test_disagree_io_mpi.py (run under mpiexec -n 2, not collected by pytest):
rank 1 passes save_zarr / load_zarr / load_dnpy another dtype, map, path or prefix than rank 0
(hunt 15b #6, hunt 15a #4 and #8: every rank returned, the store was corrupt or two saves mixed).
Every rank must raise InvalidArgumentError naming rank 1 and the argument, at once, and nothing may
be written at either path. Options that differ only in how they spell one setting (zstd level 0 and
3) save, recording the level as it takes effect. Prints "rank R: ok" on success."""
import json
import os
import shutil
import tempfile
import time

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60.0)
base = WORLD.bcast(tempfile.mkdtemp(prefix="gdap_disagree_io_") if R == 0 else None, root=0)
block = layout.block((4 * P,), P)


def at(name):
    return os.path.join(base, name)


def refused(rule, run, field):
    """run() on every rank raises InvalidArgumentError naming rank 1's `field`, within 2.5 s."""
    WORLD.Barrier()
    t0 = time.monotonic()
    try:
        run()
        raise AssertionError("%s: no error on rank %d" % (rule, R))
    except gdap.InvalidArgumentError as e:
        assert "rank 1 passed " + field in str(e), (rule, str(e))
        message = str(e)
    took = time.monotonic() - t0
    assert took < 2.5, "%s: rank %d took %.1f s" % (rule, R, took)
    print("rank %d: %s: %.2f s: %s" % (R, rule, took, message), flush=True)


# save_zarr: another dtype, map or path on rank 1; nothing written anywhere.
x32 = (np.arange(4) + 4 * R + 0.5).astype(np.float32 if R == 0 else np.int32)
refused("save_zarr, float32 and int32", lambda: gdap.save_zarr(comm, block, x32, at("d")), "dtype")
odd_map = block if R == 0 else layout.cyclic((4 * P,), P)
refused("save_zarr, block and cyclic maps",
        lambda: gdap.save_zarr(comm, odd_map, np.arange(4.0) + 100 * R, at("m")), "map")
refused("save_zarr, two paths", lambda: gdap.save_zarr(comm, block, np.arange(4.0), at("p%d" % R)), "path '")
WORLD.Barrier()
assert os.listdir(base) == [], os.listdir(base)

# load_zarr (section made from the store's dtype) and load_dnpy of two saves.
for tag in (1, 2):
    gdap.save_zarr(comm, block, np.arange(4.0) + 10 * tag, at("z%d" % tag))
    with gdap.empty(block.dim_data(R), np.float64) as section:
        gdap.save_dnpy(comm, section, at("n%d" % tag))
refused("load_zarr, two stores", lambda: gdap.load_zarr(comm, block, at("z%d" % (1 + (R == 1)))), "path '")
refused("load_dnpy, two prefixes", lambda: gdap.load_dnpy(comm, at("n%d" % (1 + (R == 1)))), "prefix '")

# save_zarr where rank 0's own argument would also fail rank 0's survey of the place (hunt 17 #3):
# the disagreement is still told on every rank, as such, and nothing is written.
refused("save_zarr over a store, overwrite on rank 1 only",
        lambda: gdap.save_zarr(comm, block, np.arange(4.0), at("z1"), overwrite=(R == 1)), "options->overwrite")
if R == 0:
    open(at("afile"), "w").close()
WORLD.Barrier()
refused("save_zarr, a file on rank 0 and a new folder on rank 1",
        lambda: gdap.save_zarr(comm, block, np.arange(4.0), at("afile" if R == 0 else "fresh")), "path '")
WORLD.Barrier()
assert not os.path.exists(at("fresh")), "a refused save created its folder"
WORLD.Barrier()


def zstd_levels(node):
    """The levels of the zstd codecs a zarr.json (or any part of it) names, shards' codecs included."""
    if isinstance(node, list):
        return [level for item in node for level in zstd_levels(item)]
    if not isinstance(node, dict):
        return []
    own = [node["configuration"]["level"]] if node.get("name") == "zstd" else []
    return own + [level for value in node.values() for level in zstd_levels(value)]


# save_zarr with zstd level 0 on rank 0 and 3 on rank 1: 0 is zstd's default, 3, so the ranks agree and
# zarr.json records the level the chunks were written with (they were refused as disagreeing, and
# zarr.json said 0).
gdap.save_zarr(comm, block, np.arange(4.0) + 4 * R, at("zstd0"), codec="zstd", level=0 if R == 0 else 3)
with open(os.path.join(at("zstd0"), "zarr.json")) as f:
    levels = zstd_levels(json.load(f))
assert levels == [3], levels
with gdap.load_zarr(comm, block, at("zstd0")) as section:
    assert np.array_equal(np.asarray(section), np.arange(4.0) + 4 * R), np.asarray(section)
WORLD.Barrier()
if R == 0:
    shutil.rmtree(base)
print("rank %d: ok" % R, flush=True)

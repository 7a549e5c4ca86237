"""One MPI rank's part of test_global_mpi.py (run under mpiexec -n 4, not collected by pytest):
gdap.GlobalArray in SPMD mode, every method called collectively on every rank, each result checked
against NumPy on the whole array. Then bad input: one rank's wrong layout makes every rank raise,
and a rank that never arrives makes every rank raise within the communicator's timeout instead of
hanging. Prints "rank R: ok" on success."""
import sys
import tempfile
import time

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout
from rank_script import rank_helpers

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
assert P == 4, "run under mpiexec -n 4"
WHOLE = np.arange(9 * 6, dtype=np.float64).reshape(9, 6) - 17.5
TMP = WORLD.bcast(tempfile.mkdtemp(prefix="gdap-global-") if R == 0 else None)
comm = gdap.Comm.from_mpi(WORLD)


case, _ = rank_helpers(comm)


case("distribute from rank 0: the others pass None and the dtype")
rows = layout.block(WHOLE.shape, P)
a = gdap.distribute(WHOLE if R == 0 else None, rows, comm=comm, dtype=np.float64)
assert a.mode == "spmd" and list(a.sections) == [R]
assert (a.get() == WHOLE).all() and (np.asarray(a) == WHOLE).all()
g = a.gather(1)
assert (g == WHOLE).all() if R == 1 else g is None

case("distribute converts the root's int32 to dtype=float64 and reads a list (review 13)")
ints = np.arange(9 * 6, dtype=np.int32).reshape(9, 6)
f = gdap.distribute(ints if R == 0 else None, rows, comm=comm, dtype=np.float64)
assert f.dtype == np.float64 and (f.get() == ints.astype(np.float64)).all()
listed = gdap.distribute(ints.tolist() if R == 2 else None, rows, comm=comm, root=2, dtype=np.float32)
assert listed.dtype == np.float32 and (listed.get() == ints).all()
assert (a[[8, 0, 8]] == WHOLE[[8, 0, 8]]).all() and (a[:, WHOLE[0] > -15] == WHOLE[:, WHOLE[0] > -15]).all()

case("reshard to block-cyclic, padded and replicated layouts")
for target in (layout.block_cyclic(WHOLE.shape, (2, 2), 2), layout.padded(WHOLE.shape, (2, 2), 1),
               layout.replicated(WHOLE.shape, P)):
    assert (a.reshard(target).get() == WHOLE).all()

case("from_sections: each rank's own array, the layout gathered collectively, no copy")
mine = np.ascontiguousarray(WHOLE[R::P])
local = gdap.from_dlpack(mine, layout.cyclic(WHOLE.shape, (P, 1)).dim_data(R))
c = gdap.GlobalArray.from_sections(local, comm=comm)
assert c.section().data_ptr == mine.__array_interface__["data"][0] and (c.get() == WHOLE).all()

case("element access reaches every rank")
assert a[5, 4] == WHOLE[5, 4] and (a[1:8:3, ::-2] == WHOLE[1:8:3, ::-2]).all() and (c[-1] == WHOLE[-1]).all()

case("reductions and arithmetic")
assert np.isclose(a.sum(), WHOLE.sum()) and np.isclose(c.mean(), WHOLE.mean()) and a.max() == WHOLE.max()
assert np.allclose(a.sum(axis=0).get(), WHOLE.sum(axis=0)) and np.allclose(c.min(axis=1).get(), WHOLE.min(axis=1))
assert np.allclose((a * 2 - a / 4 + 1).get(), WHOLE * 2 - WHOLE / 4 + 1)
wt = gdap.distribute(WHOLE.T.copy() if R == 0 else None, layout.block((6, 9), (2, 2)), comm=comm, dtype=np.float64)
assert np.allclose((a @ wt).get(), WHOLE @ WHOLE.T)

case("halo exchange on padded blocks")
h = a.reshard(layout.padded(WHOLE.shape, (2, 2), (2, 1))).halo_exchange()
lo = h.layout.local_to_global(R, (0, 0))
shape = h.layout.local_shape(R)
assert (h.local_view() == WHOLE[lo[0]:lo[0] + shape[0], lo[1]:lo[1] + shape[1]]).all()

case("Zarr and .dnpy")
a.save_zarr(TMP + "/a.zarr")
assert (gdap.GlobalArray.load_zarr(TMP + "/a.zarr", layout.cyclic(WHOLE.shape, P), comm=comm).get() == WHOLE).all()
c.save_dnpy(TMP + "/c")
d = gdap.GlobalArray.load_dnpy(TMP + "/c", comm=comm)
assert (d.get() == WHOLE).all() and d.layout.dim_data(R) == c.layout.dim_data(R)

case("__distarray__ per rank, both ways, no copy")
buf = a.__distarray__()
assert buf["dim_data"] == rows.dim_data(R) and np.asarray(buf["buffer"]).__array_interface__["data"][0] == \
    a.section().data_ptr
back = gdap.GlobalArray.from_distarray(buf, comm)
assert back.section().data_ptr == a.section().data_ptr and (back.get() == WHOLE).all()

case("a wrong layout on one rank: every rank raises, the others naming it")
wrong = layout.block((9, 5), P) if R == 2 else layout.cyclic(WHOLE.shape, P)
try:
    a.reshard(wrong)
    raise AssertionError("reshard with rank 2's wrong layout did not raise")
except gdap.InvalidArgumentError as e:
    assert R == 2 and "layout has shape (9, 5) but the array has shape (9, 6)" in str(e), e
except gdap.RemoteError as e:
    assert R != 2 and "rank 2" in str(e), e

case("sum of int8 in int64 as NumPy; max of nothing raises on every rank")
small = gdap.distribute(np.full((200, 100), 100, np.int8) if R == 0 else None, layout.block((200, 100), P), comm=comm,
                        dtype=np.int8)
assert small.sum() == 2000000 and small.sum().dtype == np.int64 and (small.sum(axis=0).get() == 20000).all()
empty = gdap.distribute(np.zeros((0, 3)) if R == 0 else None, layout.block((0, 3), P), comm=comm, dtype=np.float64)
try:
    empty.max()
    raise AssertionError("max of a zero-size array did not raise")
except ValueError as e:
    assert "zero-size array to reduction operation maximum which has no identity" in str(e), e

case("a section closed on one rank: every rank raises at once (not after the timeout), the others naming it")
comm.set_timeout(60.0)
spoiled = a.reshard(rows)
if R == 1:
    with spoiled.section():  # a plausible misuse: the with block closes the section
        pass
t0 = time.monotonic()
try:
    spoiled.reshard(layout.cyclic(WHOLE.shape, P))
    raise AssertionError("reshard of a closed section did not raise")
except gdap.InvalidArgumentError as e:
    assert R == 1 and "rank 1: the LocalArray is closed" in str(e), e
except gdap.RemoteError as e:
    assert R != 1 and "rank 1 failed" in str(e), e
assert time.monotonic() - t0 < 30, "every rank failed at once"
assert (a.reshard(layout.cyclic(WHOLE.shape, P)).get() == WHOLE).all(), "the communicator still works"

case("a rank that never arrives: every rank raises within the timeout, none hangs")
comm.set_timeout(3.0)
t0 = time.monotonic()
errors = []
if R == 3:
    time.sleep(5.0)  # away while the others reshard: they give up after 3 s
else:
    try:
        a.reshard(layout.cyclic(WHOLE.shape, P))
    except gdap.Error as e:
        errors.append(e)
try:  # the others' communicator is broken: they fail at once; rank 3 finds nobody and times out
    a.get()
except gdap.Error as e:
    errors.append(e)
print("rank %d: %s after %.1f s" % (R, [type(e).__name__ for e in errors], time.monotonic() - t0), flush=True)
assert len(errors) == (1 if R == 3 else 2), errors
assert all(isinstance(e, gdap.CollectiveTimeoutError) for e in errors), errors
assert time.monotonic() - t0 < 60
comm.close()
print("rank %d: ok" % R, flush=True)
sys.stdout.flush()

"""One MPI rank's part of test_ufuncs_mpi.py (run under mpiexec -n 2 or 4, not collected by pytest):
NumPy ufuncs, the operators and item assignment on a GlobalArray in SPMD mode, every rank calling
with the same arguments, each result checked against NumPy on the whole array; the gathering
methods are patched to raise while the distributed calls run. Prints "rank R: ok" on success."""
import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout
from no_gather import NoGather
from rank_script import rank_helpers

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
SHAPE = (9, 6)
WHOLE = np.arange(54, dtype=np.float64).reshape(SHAPE) * 0.5 - 9
LAYOUTS = [layout.block(SHAPE, P), layout.cyclic(SHAPE, (P, 1)), layout.block_cyclic(SHAPE, (P // 2, 2), 2),
           layout.padded(SHAPE, (P // 2, 2), 1), layout.replicated(SHAPE, P),
           layout.irregular(SHAPE, [(0,) + (1,) * (P - 2) + (9 - (P - 2),), None])]


case, dist = rank_helpers(comm)


def same(got, want):
    host = got.get()
    assert host.dtype == want.dtype and np.array_equal(host, want), (R, host, want)


for lay in LAYOUTS:
    case("ufuncs and operators on %s" % lay.dim_data(R)[0].get("dist_type"))
    a, b = dist(WHOLE, lay), dist(WHOLE[::-1].copy(), lay)
    ints = dist((np.abs(WHOLE) * 2).astype(np.int32), lay)
    with NoGather():
        got = [np.sqrt(abs(a)), np.exp(a), a ** 2, a // 2, a % 3, np.maximum(a, b), ints & 6, ~ints, -a, np.add.reduce(a)]
    want = [np.sqrt(abs(WHOLE)), np.exp(WHOLE), WHOLE ** 2, WHOLE // 2, WHOLE % 3, np.maximum(WHOLE, WHOLE[::-1]),
            (np.abs(WHOLE) * 2).astype(np.int32) & 6, ~(np.abs(WHOLE) * 2).astype(np.int32), -WHOLE, WHOLE.sum(0)]
    for g, w in zip(got, want):
        same(g, w)

    case("in place, out= and where= on %s" % lay.dim_data(R)[0].get("dist_type"))
    c = dist(WHOLE, lay)
    with NoGather():
        c **= 2
        np.subtract(c, b, out=c, where=a > 0)
    same(c, np.where(WHOLE > 0, WHOLE ** 2 - WHOLE[::-1], WHOLE ** 2))

    case("item assignment on %s" % lay.dim_data(R)[0].get("dist_type"))
    d = dist(WHOLE, lay)
    want = WHOLE.copy()
    inner = np.arange(7 * 2, dtype=np.float64).reshape(7, 2)
    moved = dist(inner, layout.cyclic((7, 2), P))
    with NoGather():
        d[0, :] = 0
        d[:, -1] = np.arange(9.0)
        d[::-3, 1] = 5
        d[d > 10] = -1
        d[1:-1, 2:5:2] = moved
    want[0, :] = 0
    want[:, -1] = np.arange(9.0)
    want[::-3, 1] = 5
    want[want > 10] = -1
    want[1:-1, 2:5:2] = inner
    same(d, want)

case("an out-of-bounds key raises IndexError on every rank, nothing written")
e = dist(WHOLE, LAYOUTS[1])
try:
    e[9, 0] = 1
    raise AssertionError("no IndexError")
except IndexError as err:
    assert "axis 0: index 9 is out of bounds for size 9" in str(err), err
same(e, WHOLE)

case("a pending operand is settled collectively first")
p = gdap.GlobalArray.from_sections(WHOLE * (R + 1), layout.replicated(SHAPE, P), comm=comm, pending="sum")
total = WHOLE * sum(range(1, P + 1))
same(np.sqrt(abs(p)), np.sqrt(abs(total)))
same(np.maximum(dist(WHOLE, layout.replicated(SHAPE, P)), p), np.maximum(WHOLE, total))

WORLD.Barrier()
comm.close()
print("rank %d: ok" % R, flush=True)

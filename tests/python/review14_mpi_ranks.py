"""One MPI rank's part of test_review14_mpi.py (run under mpiexec -n 2 or 4, not collected by
pytest): review 14's SPMD findings. A periodic layout's boundary cells are owned by the edge ranks
(element-wise results and statistics as NumPy's); an element-wise call or assignment refused on
some ranks only (a read-only section, NumPy raising where a rank owns cells, a key or value that
differs) raises on every rank (the others RemoteError naming the refusing rank) and writes nothing
anywhere; the next collective call then works. A hang ends the job through faulthandler after
HANG s. Prints "rank R: ok" on success."""
import faulthandler
import os

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
LAST = P - 1  # the rank that refuses alone
faulthandler.dump_traceback_later(float(os.environ.get("REVIEW14_HANG", "60")), exit=True)
comm = gdap.Comm.from_mpi(WORLD)
W = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])


def dist(host, gm):
    return gdap.distribute(host if R == 0 else None, gm, comm=comm, dtype=host.dtype)


def refused_everywhere(step, own_error, text):
    """step() raises on every rank: the refusing ranks their own error, the others RemoteError."""
    try:
        step()
    except gdap.RemoteError as e:
        assert text in str(e), (R, e)
        return "remote"
    except own_error as e:
        assert text in str(e), (R, e)
        return "own"
    raise AssertionError("rank %d: no error" % R)


# ---- periodic layouts: the edge ranks own their boundary cells ----------------------------------
gm = layout.padded(W.shape, (P,), 1, periodic=True)
a = dist(W, gm)
np.testing.assert_array_equal((a + 1).get(), W + 1)
np.testing.assert_array_equal(np.sqrt(a).get(), np.sqrt(W))
assert abs(a.var() - W.var()) < 1e-12 and (a.argmin(), a.argmax()) == (W.argmin(), W.argmax())
a += 1
a[a > 3] = 0
np.testing.assert_array_equal(a.get(), np.where(W + 1 > 3, 0, W + 1))
edge = np.zeros(8)
edge[7] = 1
assert dist(edge, gm).any()

# ---- a read-only section on one rank: nothing written anywhere ----------------------------------
blocks = layout.block((4,), P)
mine = np.zeros(blocks.local_shape(R))
mine.flags.writeable = R != LAST
ro = gdap.GlobalArray.from_sections(mine, blocks, comm=comm)
for step in (lambda: ro.__setitem__(slice(None), 5.0), lambda: ro.__iadd__(1.0),
             lambda: np.add(ro, 1.0, out=ro), lambda: ro.__setitem__(ro > -1, 2.0),
             lambda: np.nan_to_num(ro, copy=False)):
    got = refused_everywhere(step, gdap.InvalidArgumentError, "section is read-only")
    assert (got == "own") == (R == LAST), (R, got)
    np.testing.assert_array_equal(ro.get(), np.zeros(4))  # before: rank 0 wrote [6, 6, 0, 0]

# ---- NumPy raising on the ranks that own cells only: no new array anywhere ----------------------
ints = dist(np.array([1, 2]), layout.block((2,), P))  # ranks 2 and 3 of 4 own nothing
refused_everywhere(lambda: ints ** -1, ValueError, "Integers to negative integer powers")
assert ints.sum() == 3  # the next collective call meets every rank

# ---- a value or key refused on one rank only ----------------------------------------------------
b = dist(np.arange(8.0), layout.block((8,), P))
refused_everywhere(lambda: b.__setitem__(b > 3, 0.0 if R != LAST else [1.0, 2.0]), gdap.InvalidArgumentError,
                   "values of different lengths")
grid = dist(np.zeros((4, 4)), layout.block((4, 4), P))
refused_everywhere(lambda: grid.__setitem__((slice(None), 1 if R != LAST else 9), 5.0), IndexError,
                   "index 9 is out of bounds")
refused_everywhere(lambda: np.add(b, 1, dtype=np.float64 if R != LAST else np.int8, casting="same_kind"),
                   TypeError, "Cannot cast ufunc 'add'")
refused_everywhere(lambda: np.where(b > 2, b, 0 if R != LAST else np.zeros(8)), TypeError, "np.where")
np.testing.assert_array_equal(b.get(), np.arange(8.0))
np.testing.assert_array_equal(grid.get(), np.zeros((4, 4)))
assert b.sum() == 28.0

# ---- the same calls on every rank still work ----------------------------------------------------
b[b > 3] = 0.0
grid[:, 1] = 5.0
np.testing.assert_array_equal(b.get(), np.where(np.arange(8.0) > 3, 0, np.arange(8.0)))
np.testing.assert_array_equal(grid.get()[:, 1], np.full(4, 5.0))

WORLD.Barrier()
comm.close()
print("rank %d: ok" % R, flush=True)

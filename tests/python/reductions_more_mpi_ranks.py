"""One MPI rank's part of test_reductions_more_mpi.py (mpiexec -n 2 or 4, not collected by pytest):
var, std, argmin, argmax, any, all and the float16 / bool / complex reductions in SPMD mode, each
rank holding its own section, in every layout kind, against NumPy on the whole array (every rank
computes the whole array from one seed to compare; gdap sees only its section). Prints "rank R: ok"."""
import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60)
SHAPE = (10, 5)
rng = np.random.default_rng(14)
X = (rng.integers(0, 6, SHAPE) + 1e4).astype(np.float64)  # repeats: ties across the ranks
X[3, 2] = X[7, 4] = np.nan
Y = X[:, ::-1].copy()
Y[np.isnan(Y)] = 2.5  # no NaN, for var
ROWS = np.array_split(np.arange(SHAPE[0])[::-1], P)  # unstructured: rows held in reverse order
LAYOUTS = {
    "row blocks": layout.block(SHAPE, P),
    "2-d blocks": layout.block(SHAPE, (P // 2, 2) if P % 2 == 0 else (P, 1)),
    "cyclic rows": layout.cyclic(SHAPE, (P, 1)),
    "block-cyclic": layout.block_cyclic(SHAPE, (P, 1), 2),
    "irregular rows": layout.irregular(SHAPE, [[1] * (P - 1) + [SHAPE[0] - P + 1], None]),
    "padded rows": layout.padded(SHAPE, (P, 1), (1, 0)),
    "replicated": layout.replicated(SHAPE, P),
    "unstructured rows": layout.unstructured(SHAPE, [list(r) for r in ROWS]),
}


def whole(v):
    return v.get() if isinstance(v, gdap.GlobalArray) else v


def check(what, got, want, rtol=0.0):
    got = whole(got)
    assert np.asarray(got).dtype == np.asarray(want).dtype, (what, np.asarray(got).dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(np.asarray(got, np.complex128), np.asarray(want, np.complex128), rtol=rtol,
                               err_msg=what)


for name, gmap in LAYOUTS.items():
    a = gdap.distribute(X if R == 0 else None, gmap, comm=comm, dtype=np.float64)
    b = gdap.distribute(Y if R == 0 else None, gmap, comm=comm, dtype=np.float64)
    for axis in (None, 0, 1):
        for op in ("argmin", "argmax"):
            check("%s %s axis=%s" % (name, op, axis), getattr(a, op)(axis=axis), getattr(X, op)(axis=axis))
            check("%s %s no NaN axis=%s" % (name, op, axis), getattr(b, op)(axis=axis), getattr(Y, op)(axis=axis))
        for op in ("any", "all"):
            check("%s %s axis=%s" % (name, op, axis), getattr(a == 1e4, op)(axis=axis), getattr(X == 1e4, op)(axis=axis))
        check("%s var axis=%s" % (name, axis), b.var(axis=axis, ddof=1), Y.var(axis=axis, ddof=1), 1e-12)
        check("%s std axis=%s" % (name, axis), b.std(axis=axis), Y.std(axis=axis), 1e-12)
    check("%s std keepdims" % name, b.std(axis=1, keepdims=True), Y.std(axis=1, keepdims=True), 1e-12)
    h = b.astype(np.float16) - np.float16(1e4)
    check("%s float16 sum" % name, h.sum(axis=0), (Y.astype(np.float16) - np.float16(1e4)).sum(axis=0), 2e-3)
    c = b + 1j * np.float64(2)
    check("%s complex mean" % name, c.mean(axis=1), (Y + 2j).mean(axis=1), 1e-12)
    check("%s complex var" % name, c.var(), (Y + 2j).var(), 1e-12)
    t = a > 1e4 + 2
    check("%s bool max" % name, t.max(axis=0), (X > 1e4 + 2).max(axis=0))
    check("%s bool sum" % name, t.sum(), (X > 1e4 + 2).sum())

comm.close()
print("rank %d: ok" % R, flush=True)

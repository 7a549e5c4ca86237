"""One MPI rank's part of test_sum_accuracy.py (mpiexec -n 2, not collected by pytest): float sums
and means over 2 processes as accurate as NumPy's. Prints "rank R: ok"."""
import math

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
assert P == 2, "run under mpiexec -n 2"
comm = gdap.Comm.from_mpi(WORLD)

xs = np.ones(40000, np.float32)
xs[::10000] = 1e8
a = gdap.distribute(xs if R == 0 else None, layout.block(xs.shape, P), comm=comm, dtype=np.float32)
np.testing.assert_allclose(a.sum(), 400039996, rtol=1e-7)
np.testing.assert_allclose(a.mean(), xs.mean(), rtol=1e-6)

d = np.ones(40000)
d[::10000] = 1e16
b = gdap.distribute(d if R == 0 else None, layout.cyclic(d.shape, P), comm=comm, dtype=np.float64)
assert abs(b.sum() - math.fsum(d)) <= np.spacing(math.fsum(d)), (b.sum(), math.fsum(d))

x = np.random.default_rng(7).random((1 << 19, 4), dtype=np.float32)
t = gdap.distribute(x if R == 0 else None, layout.block(x.shape, (P, 1)), comm=comm, dtype=np.float32)
np.testing.assert_allclose(t.sum(axis=0).get(), x.sum(axis=0, dtype=np.float64), rtol=1e-6)
comm.close()
print("rank %d: ok" % R, flush=True)

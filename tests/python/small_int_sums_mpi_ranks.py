"""One MPI rank's part of test_small_int_sums_mpi.py (mpiexec -n 3, not collected by pytest): the
Python paths that reach an 8-bit MPI sum wrap around as NumPy does (Open MPI's op/avx saturated
them: 3 x 100 gave 127, not 44), and GlobalArray.sum promotes small integers to 64 bits, as NumPy
does. Prints "rank R: ok"."""
import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
N = 64  # op/avx saturated from 16 elements on

for dt in (np.int8, np.uint8):
    mine = (100 + 37 * R + np.arange(N)).astype(dt)
    every = np.stack([(100 + 37 * q + np.arange(N)).astype(dt) for q in range(P)])
    with np.errstate(over="ignore"):
        want = every.sum(axis=0, dtype=dt)  # NumPy's wrap-around

    x = mine.copy()
    gdap.allreduce(comm, x, "sum")
    np.testing.assert_array_equal(x, want, err_msg="gdap.allreduce %s" % np.dtype(dt).name)

    rows = gdap.distribute(every if R == 0 else None, layout.block(every.shape, (P, 1)), comm=comm, dtype=dt)
    np.testing.assert_array_equal(rows.sum(axis=0, dtype=dt).get(), want, err_msg="sum(dtype=%s)" % np.dtype(dt).name)
    total = rows.sum()  # NumPy's accumulator: 64 bits, no overflow, no 8-bit MPI sum
    assert total.dtype == every.sum().dtype and total == every.sum(), (total, total.dtype, every.sum())

    partial = gdap.GlobalArray.from_sections(mine.copy(), layout.replicated((N,), P), comm=comm, pending="sum")
    np.testing.assert_array_equal(partial.get(), want, err_msg="pending sum %s" % np.dtype(dt).name)
comm.close()
print("rank %d: ok" % R, flush=True)

"""gdap.GlobalArray against DistArray 0.6, one MPI rank's part (run under mpirun -np 4 with
.deps/distarray-venv's interpreter, like cross.py; not collected by pytest): each rank's DistArray
LocalArray becomes its section of an SPMD GlobalArray through __distarray__, without a copy, and a
GlobalArray's __distarray__ becomes a DistArray LocalArray, without a copy; values are checked and
the GlobalArray's collective methods run over the DistArray memory. Prints "rank R: ok"."""
import numpy as np
from mpi4py import MPI

from distarray.localapi import LocalArray as DaLocalArray
from distarray.localapi.maps import Distribution

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
RANK = WORLD.Get_rank()
assert WORLD.Get_size() == 4, "run this under mpirun -np 4"
COMM = gdap.Comm.from_mpi(WORLD)
WHOLE = np.arange(8 * 6, dtype=np.float64).reshape(8, 6) * 0.5


def address(buffer):
    return np.asarray(buffer).__array_interface__["data"][0]


# DistArray -> GlobalArray: block rows x cyclic columns on a 2 x 2 grid.
la = DaLocalArray(Distribution.from_shape(WORLD, WHOLE.shape, dist=("b", "c"), grid_shape=(2, 2)), dtype=np.float64)
for lidx in np.ndindex(*la.local_shape):
    la.ndarray[lidx] = WHOLE[la.global_from_local(lidx)]
g = gdap.GlobalArray.from_distarray(la, COMM)
assert g.section().data_ptr == address(la.ndarray), "gdap copied DistArray's buffer"
assert (g.get() == WHOLE).all()
assert np.isclose(g.sum(), WHOLE.sum()) and (g[2:7:2, 1] == WHOLE[2:7:2, 1]).all()
rows = g.reshard(layout.block(WHOLE.shape, 4))
assert (rows.get() == WHOLE).all()

# GlobalArray -> DistArray: every rank's __distarray__ is DistArray's input.
back = DaLocalArray.from_distarray(WORLD, rows)
assert address(back.ndarray) == rows.section().data_ptr, "DistArray copied gdap's buffer"
for lidx in np.ndindex(*back.local_shape):
    assert back.ndarray[lidx] == WHOLE[back.global_from_local(lidx)]
back.ndarray[...] += 1  # DistArray writes gdap's memory
assert (rows.get() == WHOLE + 1).all()
WORLD.Barrier()
COMM.close()
print("rank %d: ok" % RANK, flush=True)

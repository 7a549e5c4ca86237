"""One MPI rank's part of test_mpi.py (run under mpiexec, not collected by pytest): an mpi4py
communicator wrapped with gdap.Comm.from_mpi, both maps built collectively, and an uneven block ->
cyclic move checked element by element. Prints "rank R: ok" on success."""
import numpy as np
from mpi4py import MPI

import gdap

N = 11  # uneven over any rank count > 1

with gdap.Comm.from_mpi(MPI.COMM_WORLD) as comm:
    r, p = comm.rank, comm.size
    assert (comm.kind, p) == ("mpi", MPI.COMM_WORLD.Get_size()), (comm.kind, p)
    lo, hi = N * r // p, N * (r + 1) // p
    src_map = gdap.GlobalMap.collective(comm, [dict(dist_type="b", size=N, proc_grid_size=p, proc_grid_rank=r,
                                                    start=lo, stop=hi)])
    dst_map = gdap.GlobalMap.collective(comm, [dict(dist_type="c", size=N, proc_grid_size=p, proc_grid_rank=r,
                                                    start=r)])
    plan = gdap.Plan(src_map, dst_map, np.float64, comm)
    dst = gdap.redistribute(comm, plan, np.arange(lo, hi, dtype=np.float64), np.full(plan.dst_shape, -1.0))
    assert (dst == np.arange(r, N, p)).all(), (r, dst)
    comm.barrier()
print("rank %d: ok" % r, flush=True)

"""One MPI rank's part of test_review13_mpi.py (run under mpiexec -n 2 or 4, not collected by
pytest): review 13's SPMD findings. A partner holding a pending reduction in a replicated layout
meets the same elements (+, ==, +=, either side); from_sections(comm=w) and zeros(comm=w) share a
context; a check failing on one rank before the first (collective) wrap of a fresh mpi4py
communicator no longer leaves the others in MPI_Comm_dup for good; devices= on one rank is told;
load_dnpy refuses devices= beside comm; the wrap of an mpi4py communicator is dropped with it.
A hang ends the job through faulthandler after HANG s. Prints "rank R: ok" on success."""
import faulthandler
import gc
import os
import shutil
import tempfile
import time

import numpy as np
from mpi4py import MPI

import gdap
from gdap import _global, layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
FAILING = P - 1
HANG = float(os.environ.get("REVIEW13_HANG", "60"))
faulthandler.dump_traceback_later(HANG, exit=True)  # a rank left in MPI_Comm_dup ends the job, not the CI

# ---- a pending partner (replicated partial sums) -------------------------------------------------
rep = layout.replicated((P,), P)
mine = np.arange(P, dtype=np.float64) + R  # this rank's partial values
want_p = sum(np.arange(P, dtype=np.float64) + r for r in range(P))
host = np.arange(P, dtype=np.float64) * 3


def p():
    return gdap.GlobalArray.from_sections(mine.copy(), rep, comm=WORLD, pending="sum")


a = gdap.distribute(host if R == 0 else None, rep, comm=WORLD, dtype=np.float64)
np.testing.assert_array_equal((a + p()).get(), host + want_p)
np.testing.assert_array_equal((p() - a).get(), want_p - host)
np.testing.assert_array_equal((a == p()).get(), host == want_p)
np.testing.assert_array_equal((p() <= a).get(), want_p <= host)
b = gdap.distribute(host if R == 0 else None, rep, comm=WORLD, dtype=np.float64)
b += p()  # before: np=4 gave [14,14,14,14] (a one-long block broadcast over the replicated section)
np.testing.assert_array_equal(b.get(), host + want_p)
q = p()
q += a
np.testing.assert_array_equal(q.get(), host + want_p)

# ---- one context per communicator and device -----------------------------------------------------
blocks = layout.block((2 * P,), P)
s = gdap.GlobalArray.from_sections(np.full(2, float(R)), blocks, comm=WORLD)
z = gdap.GlobalArray.zeros(blocks, comm=WORLD)
assert s.context is z.context, (s.context, z.context)
np.testing.assert_array_equal((s + z).get(), np.repeat(np.arange(P, dtype=np.float64), 2))
np.testing.assert_array_equal((s == z).get(), np.repeat(np.arange(P) == 0, 2))


# ---- a check failing on one rank before the first wrap of a fresh communicator ------------------
def outcome(run):
    """(error or None, seconds) of run() on this rank."""
    t0 = time.monotonic()
    try:
        run()
        return None, time.monotonic() - t0
    except Exception as e:  # noqa: BLE001 - checked by the caller
        return e, time.monotonic() - t0


fresh = WORLD.Dup()
err, took = outcome(lambda: gdap.GlobalArray.zeros(blocks if R != FAILING else "rows", comm=fresh))
WORLD.Barrier()  # before: the other ranks never got here (MPI_Comm_dup waiting for FAILING, with no timeout)
if R == FAILING:
    assert type(err) is TypeError and "layout must be a gdap.GlobalMap" in str(err), repr(err)
else:  # told in the barrier zeros ends with (before it: they went on, to wait in their next collective call)
    assert isinstance(err, gdap.RemoteError) and "layout must be a gdap.GlobalMap" in str(err), repr(err)
assert took < HANG / 4, took
np.testing.assert_array_equal(gdap.GlobalArray.zeros(blocks, comm=fresh).get(), np.zeros(2 * P))  # fresh still works
fresh.Free()

fresh = WORLD.Dup()
err, took = outcome(lambda: gdap.distribute(np.arange(2.0 * P) if R == 0 else None, blocks, comm=fresh,
                                            dtype=np.float64, devices=["cpu"] * P if R == FAILING else None))
WORLD.Barrier()
if R == FAILING:
    assert type(err) is gdap.InvalidArgumentError and "not both" in str(err), repr(err)
else:
    assert isinstance(err, gdap.RemoteError) and "not both" in str(err), repr(err)
assert took < HANG / 4, took
np.testing.assert_array_equal(gdap.GlobalArray.zeros(blocks, comm=fresh).get(), np.zeros(2 * P))
fresh.Free()

# ---- load_dnpy: devices= beside comm is refused (it was ignored) ---------------------------------
BASE = WORLD.bcast(tempfile.mkdtemp(prefix="gdap_review13_") if R == 0 else None, root=0)
prefix = os.path.join(BASE, "a")
s.save_dnpy(prefix)
err, _ = outcome(lambda: gdap.GlobalArray.load_dnpy(prefix, comm=WORLD, devices=["cpu"] * P if R == FAILING else None))
if R == FAILING:
    assert type(err) is gdap.InvalidArgumentError and "not both" in str(err), repr(err)
else:
    assert isinstance(err, gdap.RemoteError), repr(err)
np.testing.assert_array_equal(gdap.GlobalArray.load_dnpy(prefix, comm=WORLD).get(), s.get())

# ---- the wrap of an mpi4py communicator lives as long as the communicator object -----------------
dup = WORLD.Dup()
made = gdap.GlobalArray.zeros(blocks, comm=dup)
key = id(dup)
assert key in _global._COMMS
made = None
dup.Free()
dup = None
gc.collect()
assert key not in _global._COMMS, "the gdap.Comm of a dropped mpi4py communicator is still cached"

WORLD.Barrier()
if R == 0:
    shutil.rmtree(BASE)
faulthandler.cancel_dump_traceback_later()
print("rank %d: ok" % R, flush=True)

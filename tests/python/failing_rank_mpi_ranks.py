"""One MPI rank's part of test_failing_rank_mpi.py (run under mpiexec -n 2 or 4, not collected by
pytest): a rank whose own arguments are bad still makes the collective call (so that nobody waits
for it), and every other rank is told that rank's own error: its status and its text, not the NULL
argument the failing rank passed. Each case names its rule. Prints "rank R: ok" on success."""
import sys
import time

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
WHOLE = np.arange(8 * 6, dtype=np.float64).reshape(8, 6)
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60.0)
FAILING = P - 1  # the rank whose arguments are bad


def told(rule, run, status):
    """Runs run() on every rank: FAILING must raise its own error, of gdap status `status`, and every
    other rank RemoteError "rank FAILING failed (STATUS): <that error's text>", at once."""
    print("rank %d: %s" % (R, rule), flush=True)
    t0 = time.monotonic()
    try:
        run()
        raise AssertionError("%s: no error on rank %d" % (rule, R))
    except gdap.RemoteError as e:
        mine = e
    except Exception as e:  # the failing rank's own error, whatever its class
        mine = e
    own = WORLD.bcast(str(mine) if R == FAILING else None, root=FAILING)
    if R == FAILING:
        assert not isinstance(mine, gdap.RemoteError), (rule, mine)
        assert getattr(mine, "status", None) == status, (rule, type(mine), mine)
    else:
        name = _c_name(status)
        assert isinstance(mine, gdap.RemoteError), (rule, type(mine), mine)
        expected = "rank %d failed (%s): " % (FAILING, name)
        assert str(mine).startswith(expected), (rule, str(mine), expected)
        assert own.split(": ", 1)[-1] in str(mine), (rule, str(mine), own)
        assert "is NULL" not in str(mine), (rule, str(mine))
    assert time.monotonic() - t0 < 30, "%s: every rank failed at once" % rule
    WORLD.Barrier()


def _c_name(status):
    return gdap._gdap_c.gdap_status_string(status)


C = gdap._gdap_c
rows = layout.block(WHOLE.shape, P)
cyc = layout.cyclic(WHOLE.shape, (P, 1))
a = gdap.distribute(WHOLE if R == 0 else None, rows, comm=comm, dtype=np.float64)
plan = gdap.Plan(rows, cyc, np.float64, comm)
src = np.ascontiguousarray(a.local_view())
dst_shape = cyc.local_shape(R)


def one_row_too_many():
    d = np.full((dst_shape[0] + (1 if R == FAILING else 0), dst_shape[1]), -1.0)
    gdap.redistribute(comm, plan, src, d)


told("redistribute (together): a destination one row too long -> the failing rank's InvalidArgumentError (naming dst) "
     "on every rank", one_row_too_many, C.GDAP_ERR_INVALID_ARGUMENT)

told("reshard (_spmd_prepare): a layout of the wrong shape on one rank -> its InvalidArgumentError on every rank",
     lambda: a.reshard(layout.block((8, 5), P) if R == FAILING else cyc), C.GDAP_ERR_INVALID_ARGUMENT)

spoiled = a.reshard(rows)
if R == FAILING:
    with spoiled.section():  # closes this rank's section
        pass
told("reshard (run_c): a closed section on one rank -> 'the LocalArray is closed' on every rank",
     lambda: spoiled.reshard(cyc), C.GDAP_ERR_INVALID_ARGUMENT)


def python_error():
    if R == FAILING:
        comm.fail_next(TypeError("a section must be an array, not str"))
    comm.barrier()


told("Comm.fail_next with a Python TypeError -> GDAP_ERR_INVALID_ARGUMENT and 'TypeError: ...' on every rank",
     python_error, C.GDAP_ERR_INVALID_ARGUMENT)


def gdap_error():
    if R == FAILING:
        comm.fail_next(gdap.FileIOError("disk full"))
    comm.barrier()


told("Comm.fail_next with a gdap.FileIOError -> GDAP_ERR_IO on every rank", gdap_error, C.GDAP_ERR_IO)

print("rank %d: after the failures, the communicator still works" % R, flush=True)
assert (a.reshard(cyc).get() == WHOLE).all()
comm.close()
print("rank %d: ok" % R, flush=True)
sys.stdout.flush()

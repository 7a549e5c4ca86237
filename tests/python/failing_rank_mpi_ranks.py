"""One MPI rank's part of test_failing_rank_mpi.py (run under mpiexec -n 2 or 4, not collected by
pytest): a rank whose own arguments are bad still makes the collective call (so that nobody waits
for it), and every other rank is told that rank's own error: its status and its text, not the NULL
argument the failing rank passed. Each case names its rule. Prints "rank R: ok" on success."""
import os
import shutil
import sys
import tempfile
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

# matmul where the gemm plan is already cached (zarrfix item 3): the ranks whose result layout is
# right would go straight to gdap_gemm_execute, the failing rank (its layout spans a rank fewer) to
# gdap_gemm_create: the others were told only "the ranks are in different collective calls".
right = a.reshard(layout.block((8, 6), P))
other = gdap.distribute(np.ones((6, 4)) if R == 0 else None, layout.block((6, 4), P), comm=comm, dtype=np.float64)
product = layout.block((8, 4), P)
assert np.allclose(right.matmul(other, product).get(), WHOLE @ np.ones((6, 4)))  # the plan is cached on every rank
told("matmul (a cached plan): a result layout over the wrong number of ranks on one rank -> its InvalidArgumentError "
     "on every rank", lambda: right.matmul(other, layout.block((8, 4), P - 1) if R == FAILING else product),
     C.GDAP_ERR_INVALID_ARGUMENT)
assert np.allclose(right.matmul(other, product).get(), WHOLE @ np.ones((6, 4))), "matmul after the refusal"

# matmul with a layout on some ranks and none on another (review 12b feared the ranks would fall out of
# step: those with a layout meet in a barrier, the other in its gemm call): the agreement sees the
# different calls, so each rank gets the product or an error, at once, and the next matmul works.
print("rank %d: matmul, a layout on some ranks and none on one" % R, flush=True)
t0 = time.monotonic()
try:
    mixed = right.matmul(other, None if R == FAILING else product).get()
    assert np.allclose(mixed, WHOLE @ np.ones((6, 4))), "matmul with mixed layout arguments"
except gdap.Error:
    pass  # the ranks were in different collective calls: every one is told
assert time.monotonic() - t0 < 30.0, "matmul with mixed layout arguments waited %.1f s" % (time.monotonic() - t0)
WORLD.Barrier()
assert np.allclose(right.matmul(other, product).get(), WHOLE @ np.ones((6, 4))), "matmul after mixed layouts"

spoiled = a.reshard(rows)
if R == FAILING:
    with spoiled.section():  # closes this rank's section
        pass
told("reshard (run_c): a closed section on one rank -> 'the LocalArray is closed' on every rank",
     lambda: spoiled.reshard(cyc), C.GDAP_ERR_INVALID_ARGUMENT)

# run_c itself, where a rank's arguments cannot even be built (its objects(r) or values(r) raises):
# that rank still makes the call, with placeholders, after Comm.fail_next (it used to make none, and
# the others waited out their timeout, 60 s here: told() allows 30).
from gdap._context import Spmd, run_c  # noqa: E402
from gdap._local import device_to_c  # noqa: E402
from gdap._redistribute import _section  # noqa: E402

spmd = Spmd(comm)


def told_own(rule, run, kind, status):
    """As told, where the failing rank raises its own Python error, of class `kind` (run_c re-raises
    what stopped it), and the others RemoteError "rank FAILING failed (STATUS): Kind: <its text>"
    for a class outside gdap's (Comm.fail_next), or "...: <its text>" for one that carries a status."""
    print("rank %d: %s" % (R, rule), flush=True)
    t0 = time.monotonic()
    try:
        run()
        raise AssertionError("%s: no error on rank %d" % (rule, R))
    except Exception as e:
        mine = e
    own = WORLD.bcast(str(mine) if R == FAILING else None, root=FAILING)
    if R == FAILING:
        assert type(mine) is kind, (rule, type(mine), mine)
    else:
        assert isinstance(mine, gdap.RemoteError), (rule, type(mine), mine)
        expected = "rank %d failed (%s): " % (FAILING, _c_name(status))
        assert str(mine).startswith(expected), (rule, str(mine), expected)
        assert own in str(mine), (rule, str(mine), own)
    assert time.monotonic() - t0 < 30, "%s: every rank failed at once (took %.1f s)" % (rule, time.monotonic() - t0)
    WORLD.Barrier()


def good_sections():
    """This rank's source and destination of `plan` as LocalArrays: every check passes on them."""
    return (_section(src, plan.src, R, plan.dtype)[0],
            _section(np.full(dst_shape, -1.0), plan.dst, plan.role, plan.dtype)[0])


def objects_raise():
    def objects(r):
        if r == FAILING:
            raise OverflowError("rank %d's section is too large to build" % r)
        return (plan,) + good_sections()
    run_c(spmd, objects, C.gdap_redistribute, placeholders=(None,) * 3)


told_own("run_c: objects(r) raises OverflowError on one rank (a C function, its placeholders given) -> "
         "GDAP_ERR_OVERFLOW on every rank at once", objects_raise, OverflowError, C.GDAP_ERR_OVERFLOW)


def values_raise():
    def values(r):
        if r == FAILING:
            raise IndexError("rank %d's tag is out of range" % r)
        return ("tag",)
    run_c(spmd, lambda r: (plan,) + good_sections(), lambda comm, p, s, d, tag: C.gdap_redistribute(comm, p, s, d),
          values)


told_own("run_c: values(r) raises IndexError on one rank (a lambda: None for each of its parameters) -> "
         "GDAP_ERR_OUT_OF_RANGE on every rank at once", values_raise, IndexError, C.GDAP_ERR_OUT_OF_RANGE)

saved = WORLD.bcast(tempfile.mkdtemp(prefix="gdap-run-c-") if R == 0 else None, root=0)
a.save_dnpy(os.path.join(saved, "a"))


def device_raises():
    def values(r):
        if r == FAILING:
            raise ValueError("unknown device 'tpu' on rank %d" % r)
        return (device_to_c("cpu"),)
    run_c(spmd, lambda r: (), lambda comm, device: C.gdap_dnpy_load(comm, os.path.join(saved, "a"), device), values,
          placeholders=(device_to_c("cpu"),))


told_own("run_c: a device that cannot be made on one rank (dnpy load: a (type, id) placeholder, not None) -> "
         "GDAP_ERR_INVALID_ARGUMENT and 'ValueError: ...' on every rank at once", device_raises, ValueError,
         C.GDAP_ERR_INVALID_ARGUMENT)
WORLD.Barrier()
if R == 0:
    shutil.rmtree(saved)


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

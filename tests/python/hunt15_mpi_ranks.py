"""One MPI rank's part of test_hunt15_mpi.py (run under mpiexec -n 2 or 4, not collected by pytest):
hunt 15's SPMD agreement defects in the Python package.

- A redistribution plan only the last rank (FAILING) cannot build (GDAP_PLAN_MAX_RUNS set on it
  alone): FAILING raises OutOfMemoryError, every other rank RemoteError naming it, at once. Before,
  the plan was built outside the agreement (telling_peers) and the others waited out the whole
  timeout (CollectiveTimeoutError), after which the communicator was broken.
- Ranks whose parts of one new array differ in dtype, pending reduction, global shape or layout (from_sections with
  and without a layout, load_dnpy of per-rank files, zeros): every rank raises InvalidArgumentError
  naming each rank's dtype (shape, layout), at once. Before, from_sections and load_dnpy accepted
  them, and a.sum() then failed on one rank while the others waited out the timeout.

Every case must end within PROMPT s, and the communicator must still work after it.
Prints "rank R: ok" on success."""
import os
import shutil
import sys
import tempfile

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout
from spmd_timing import timed_case

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
FAILING = P - 1
TIMEOUT = 30.0  # seconds: a hang shows as CollectiveTimeoutError on the peers
PROMPT = TIMEOUT / 2
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(TIMEOUT)
BASE = WORLD.bcast(tempfile.mkdtemp(prefix="gdap_hunt15_") if R == 0 else None, root=0)
rows = layout.block((8, 6), P)
WHOLE = np.arange(48.0).reshape(8, 6)
a = gdap.distribute(WHOLE if R == 0 else None, rows, comm=comm, dtype=np.float64)
ran = []


def check(rule, run, expect):
    """run() on every rank; expect(error) asserts what this rank raised. Then the communicator still
    works. A failed check ends the whole job (MPI Abort): no rank waits for one that gave up."""
    ran.append(rule)
    mine, took = timed_case(WORLD, run)
    try:
        assert mine is not None, "%s: no error on rank %d" % (rule, R)
        expect(mine)
        assert took < PROMPT, "%s: rank %d took %.1f s (timeout %.0f s)" % (rule, R, took, TIMEOUT)
        WORLD.Barrier()
        assert np.array_equal(a.get(), WHOLE), "%s: the communicator no longer works" % rule
    except AssertionError as e:
        print("rank %d: FAILED %s: %r" % (R, rule, e), flush=True)
        WORLD.Abort(1)
    print("rank %d: %s: %.2f s" % (R, rule, took), flush=True)


# ---- a plan only one rank cannot build ------------------------------------------------------------

def plan_refused(error):
    if R == FAILING:
        assert type(error) is gdap.OutOfMemoryError and "GDAP_PLAN_MAX_RUNS" in str(error), (type(error), str(error))
    else:
        assert isinstance(error, gdap.RemoteError), (type(error), str(error))
        assert str(error).startswith("rank %d failed (GDAP_ERR_NO_MEMORY)" % FAILING), str(error)
        assert "GDAP_PLAN_MAX_RUNS" in str(error), str(error)


def with_max_runs(run):
    """run() with GDAP_PLAN_MAX_RUNS=1 on FAILING only (each case plans a pair of layouts no earlier
    step planned: the plan cache would otherwise answer)."""
    def limited():
        if R == FAILING:
            os.environ["GDAP_PLAN_MAX_RUNS"] = "1"
        try:
            run()
        finally:
            os.environ.pop("GDAP_PLAN_MAX_RUNS", None)
    return limited


check("distribute: a plan only the last rank cannot build",
      with_max_runs(lambda: gdap.distribute(WHOLE if R == 0 else None, layout.cyclic((8, 6), (P, 1)), comm=comm,
                                            dtype=np.float64)), plan_refused)
check("reshard: a plan only the last rank cannot build",
      with_max_runs(lambda: a.reshard(layout.cyclic((8, 6), (1, P)))), plan_refused)
if P == 4:  # a 2 x 2 grid: the transpose moves each block whole to its rank in the permuted grid
    grid = gdap.distribute(WHOLE if R == 0 else None, layout.block((8, 6), (2, 2)), comm=comm, dtype=np.float64)
    check("a.T of a 2 x 2 grid: a plan only the last rank cannot build", with_max_runs(lambda: grid.T), plan_refused)
check("a[key] (read): a plan only the last rank cannot build",
      with_max_runs(lambda: a[::2, 1::2]), plan_refused)
values = gdap.GlobalArray.ones(layout.cyclic((4, 6), (P, 1)), comm=comm)
check("a[key] = b: a plan only the last rank cannot build",
      with_max_runs(lambda: a.__setitem__((slice(0, 8, 2), slice(None)), values)), plan_refused)
assert np.array_equal(a.get(), WHOLE), "a[key] = b wrote although a rank refused its plan"

# ---- ranks whose parts of one array differ --------------------------------------------------------


def refused(*texts):
    def expect(error):
        assert type(error) is gdap.InvalidArgumentError, (type(error), str(error))
        for text in texts:
            assert text in str(error), (text, str(error))
    return expect


def by_rank(first, last):
    return last if R == FAILING else first


DTYPES = refused("the ranks' arrays differ in dtype", "float64 on rank", "float32 on rank %d" % FAILING)
mine = a.local_view()
check("from_sections (layout): a dtype only the last rank passes",
      lambda: gdap.GlobalArray.from_sections(mine.astype(by_rank(np.float64, np.float32)), rows, comm=comm), DTYPES)
check("from_sections (no layout): a dtype only the last rank passes",
      lambda: gdap.GlobalArray.from_sections(
          gdap.from_dlpack(mine.astype(by_rank(np.float64, np.float32)), rows.dim_data(R)), comm=comm), DTYPES)
# Per-rank files of different dtypes: one save of each dtype (a save itself refuses ranks whose dtypes
# differ), then the last rank's float32 file put in place of its float64 one.
mixed, as32 = os.path.join(BASE, "mixed"), os.path.join(BASE, "as32")
gdap.save_dnpy(comm, gdap.from_dlpack(mine.astype(np.float64), rows.dim_data(R)), mixed)
gdap.save_dnpy(comm, gdap.from_dlpack(mine.astype(np.float32), rows.dim_data(R)), as32)
if R == FAILING:
    os.replace("%s_%d.dnpy" % (as32, R), "%s_%d.dnpy" % (mixed, R))
WORLD.Barrier()
check("load_dnpy: per-rank files of different dtypes", lambda: gdap.GlobalArray.load_dnpy(mixed, comm=comm), DTYPES)
check("zeros: a dtype only the last rank passes",
      lambda: gdap.GlobalArray.zeros(rows, comm=comm, dtype=by_rank(np.float64, np.float32)), DTYPES)
check("ones: a global shape only the last rank passes",
      lambda: gdap.GlobalArray.ones(by_rank(rows, layout.block((8, 7), P)), comm=comm),
      refused("differ in global shape", "(8, 6) on rank", "(8, 7) on rank %d" % FAILING))
check("from_sections (layout): a pending reduction only the last rank passes",
      lambda: gdap.GlobalArray.from_sections(mine.copy(), rows, comm=comm, pending=by_rank(None, "sum")),
      refused("differ in pending reduction", "none on rank", "sum on rank %d" % FAILING))
cyclic = layout.cyclic((8, 6), (P, 1))
check("from_sections (layout): a layout only the last rank passes",
      lambda: gdap.GlobalArray.from_sections(np.zeros(by_rank(rows, cyclic).local_shape(R)), by_rank(rows, cyclic),
                                             comm=comm),
      refused("differ in layout", "layout 1 on rank", "layout 2 on rank %d" % FAILING))


def section_refused(error):
    assert "differs from the section" in str(error), str(error)
    if R == FAILING:
        assert type(error) is gdap.InvalidArgumentError, (type(error), str(error))
    else:
        assert isinstance(error, gdap.RemoteError), (type(error), str(error))
        assert str(error).startswith("rank %d failed (GDAP_ERR_INVALID_ARGUMENT)" % FAILING), str(error)


check("from_sections (layout): a section of the wrong shape on one rank (the others are told)",
      lambda: gdap.GlobalArray.from_sections(by_rank(mine, np.zeros((mine.shape[0] + 1, 6))), rows, comm=comm),
      section_refused)

# ---- what must still work ---------------------------------------------------------------------------
b = gdap.GlobalArray.from_sections(mine.copy(), rows, comm=comm)
assert float(b.sum()) == WHOLE.sum()
gdap.save_dnpy(comm, a.section(), os.path.join(BASE, "same"))
assert float(gdap.GlobalArray.load_dnpy(os.path.join(BASE, "same"), comm=comm).sum()) == WHOLE.sum()

WORLD.Barrier()
if R == 0:
    shutil.rmtree(BASE)
comm.close()
print("rank %d: ok (%d cases)" % (R, len(ran)), flush=True)
sys.stdout.flush()

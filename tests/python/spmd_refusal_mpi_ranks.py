"""One MPI rank's part of test_spmd_refusal_mpi.py (run under mpiexec -n 2 or 4, not collected by
pytest): for every collective entry point of the Python package, a Python-side check that raises on
ONE rank (FAILING, the last) before the C call reaches the other ranks at once (telling_peers): the
failing rank raises its own error, every other rank RemoteError "rank FAILING failed (STATUS): ..."
quoting that error's text, all well inside the communicator's short timeout (TIMEOUT s). Before
telling_peers covered them, each case below left the peers waiting out the timeout
(CollectiveTimeoutError). Each case names its rule; the communicator must still work after each.
SPMD_CASES (rule names separated by '|') runs only those cases, SPMD_TIMEOUT sets the timeout.
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
TIMEOUT = float(os.environ.get("SPMD_TIMEOUT", "30"))  # seconds: a hang shows as CollectiveTimeoutError on the peers
PROMPT = TIMEOUT / 2  # every rank fails well before it (about 0.01 s each here; the CI machine is shared)
C = gdap._gdap_c
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(TIMEOUT)
ONLY = [s for s in os.environ.get("SPMD_CASES", "").split("|") if s]
BASE = WORLD.bcast(tempfile.mkdtemp(prefix="gdap_spmd_refusal_") if R == 0 else None, root=0)

rows = layout.block((8, 6), P)
WHOLE = np.arange(48.0).reshape(8, 6)
a = gdap.distribute(WHOLE if R == 0 else None, rows, comm=comm, dtype=np.float64)
pending = gdap.GlobalArray.from_sections(np.ones((8, 6)), layout.replicated((8, 6), P), comm=comm, pending="sum")
STORE = os.path.join(BASE, "store")
a.save_zarr(STORE)
DNPY = os.path.join(BASE, "a")
a.save_dnpy(DNPY)
ran = []


def bad(good, wrong):
    """This rank's argument: `wrong` on the failing rank, `good` elsewhere."""
    return wrong if R == FAILING else good


def told(rule, run, own_type, text):
    """run() on every rank: FAILING raises own_type (exactly) whose text holds `text`, every other
    rank RemoteError naming FAILING and quoting the failing rank's whole text, all within PROMPT s;
    then the communicator still works (an allgather). A failed check ends the whole job (MPI
    Abort), so that no rank waits for one that has given up."""
    if ONLY and rule not in ONLY:
        return
    try:
        _check(rule, run, own_type, text)
    except AssertionError as e:
        print("rank %d: FAILED %r" % (R, e), flush=True)
        WORLD.Abort(1)


def _check(rule, run, own_type, text):
    ran.append(rule)
    mine, took = timed_case(WORLD, run)
    own = WORLD.bcast(str(mine) if R == FAILING else None, root=FAILING)
    assert mine is not None, "%s: no error on rank %d" % (rule, R)
    if R == FAILING:
        assert type(mine) is own_type and text in str(mine), (rule, type(mine), str(mine))
    else:
        assert isinstance(mine, gdap.RemoteError), (rule, R, type(mine), str(mine))
        assert str(mine).startswith("rank %d failed (" % FAILING), (rule, str(mine))
        assert own.split(": ", 1)[-1] in str(mine) and text in str(mine), (rule, str(mine), own)
    assert took < PROMPT, "%s: rank %d took %.1f s (timeout %.0f s)" % (rule, R, took, TIMEOUT)
    WORLD.Barrier()
    assert np.array_equal(a.get(), WHOLE), "%s: the communicator no longer works" % rule
    print("rank %d: %s: %.2f s" % (R, rule, took), flush=True)


# ---- the two cases this work started from --------------------------------------------------------
told("GlobalArray.load_zarr: a device only one rank cannot use",
     lambda: gdap.GlobalArray.load_zarr(STORE, comm=comm, device=bad("cpu", "tpu")), ValueError, "unknown device 'tpu'")
told("GlobalArray.load_zarr (an mpi4py communicator): a device only one rank cannot use",
     lambda: gdap.GlobalArray.load_zarr(STORE, comm=WORLD, device=bad("cpu", "tpu")), ValueError, "unknown device 'tpu'")
local = a.local_view()
told("gdap.save_zarr: a section of the wrong shape on one rank",
     lambda: gdap.save_zarr(comm, rows, bad(local, np.zeros((local.shape[0] + 1, 6))), os.path.join(BASE, "s1")),
     gdap.InvalidArgumentError, "local shape")
told("gdap.load_zarr: a section of the wrong shape on one rank",
     lambda: gdap.load_zarr(comm, rows, STORE, bad(np.zeros(local.shape), np.zeros((local.shape[0] + 1, 6)))),
     gdap.InvalidArgumentError, "local shape")
told("gdap.load_zarr(section=None): a device only one rank cannot use",
     lambda: gdap.load_zarr(comm, rows, STORE, device=bad("cpu", "tpu")), ValueError, "unknown device 'tpu'")
told("gdap.save_zarr: a NUL in the path on one rank",
     lambda: gdap.save_zarr(comm, rows, local, os.path.join(BASE, bad("s2", "s2\0x"))), ValueError, "NUL character")

# ---- the audit: every other collective entry point ------------------------------------------------
told("GlobalArray.save_zarr: a NUL in the path on one rank",
     lambda: a.save_zarr(os.path.join(BASE, bad("s3", "s3\0x"))), ValueError, "NUL character")
told("GlobalArray.save_dnpy: a NUL in the prefix on one rank",
     lambda: a.save_dnpy(os.path.join(BASE, bad("d1", "d1\0x"))), ValueError, "NUL character")
told("GlobalArray.load_dnpy: a device only one rank cannot use",
     lambda: gdap.GlobalArray.load_dnpy(DNPY, comm=comm, device=bad("cpu", "tpu")), ValueError, "unknown device 'tpu'")
told("GlobalArray.load_dnpy: a NUL in the prefix on one rank",
     lambda: gdap.GlobalArray.load_dnpy(bad(DNPY, DNPY + "\0x"), comm=comm), ValueError, "NUL character")
told("gdap.save_dnpy: a NUL in the prefix on one rank",
     lambda: gdap.save_dnpy(comm, a.section(), bad(DNPY + "2", DNPY + "\0x")), ValueError, "NUL character")
told("gdap.load_dnpy: a device only one rank cannot use",
     lambda: gdap.load_dnpy(comm, DNPY, device=bad("cpu", "tpu")), ValueError, "unknown device 'tpu'")
told("GlobalArray.scatter: a root out of range on one rank",
     lambda: gdap.distribute(WHOLE if R == 0 else None, rows, comm=comm, dtype=np.float64, root=bad(0, P)),
     gdap.InvalidArgumentError, "root %d is not a rank of %d" % (P, P))
told("GlobalArray.scatter: a device only one rank cannot use",
     lambda: gdap.distribute(WHOLE if R == 0 else None, rows, comm=comm, dtype=np.float64, device=bad("cpu", "tpu")),
     ValueError, "unknown device 'tpu'")
told("GlobalArray.scatter: a layout that is no GlobalMap on one rank",
     lambda: gdap.distribute(WHOLE if R == 0 else None, bad(rows, "rows"), comm=comm, dtype=np.float64), TypeError,
     "layout must be a gdap.GlobalMap")
told("GlobalArray.from_sections (no layout): a section without dim_data on one rank",
     lambda: gdap.GlobalArray.from_sections(bad(a.section(), np.zeros(3)), comm=comm), gdap.InvalidArgumentError,
     "has no dim_data")
told("GlobalArray.from_sections (no layout): a pending op unknown on one rank",
     lambda: gdap.GlobalArray.from_sections(a.section(), comm=comm, pending=bad(None, "avg")),
     gdap.InvalidArgumentError, "not 'avg'")
told("GlobalArray.sum: an axis out of range on one rank", lambda: a.sum(axis=bad(0, 5)), gdap.InvalidArgumentError,
     "axis 5 is out of range")
told("GlobalArray.sum (pending reduction): an axis out of range on one rank", lambda: pending.sum(axis=bad(0, 5)),
     gdap.InvalidArgumentError, "axis 5 is out of range")
told("GlobalArray.max: keepdims=True on one rank", lambda: a.max(keepdims=bad(False, True)), gdap.UnsupportedError,
     "keepdims=True")
told("GlobalArray.mean: an integer dtype on one rank", lambda: a.mean(dtype=bad(None, np.int32)),
     gdap.UnsupportedError, "mean with dtype=int32")
told("GlobalArray.var: a ddof that is no number on one rank", lambda: a.var(ddof=bad(1, "1")),
     gdap.InvalidArgumentError, "ddof must be a number")
told("GlobalArray.std (pending reduction): an axis out of range on one rank", lambda: pending.std(axis=bad(0, 5)),
     gdap.InvalidArgumentError, "axis 5 is out of range")
told("GlobalArray.argmax: an axis out of range on one rank", lambda: a.argmax(axis=bad(1, 5)),
     gdap.InvalidArgumentError, "axis 5 is out of range")
told("GlobalArray.argmin (pending reduction): out= on one rank",
     lambda: pending.argmin(out=bad(None, np.zeros((), np.int64))), gdap.UnsupportedError, "does not support out")
told("GlobalArray.any: keepdims that is no bool on one rank", lambda: a.any(keepdims=bad(False, "yes")),
     gdap.InvalidArgumentError, "keepdims must be True or False")
told("GlobalArray.all (pending reduction): an axis out of range on one rank", lambda: pending.all(axis=bad(0, 5)),
     gdap.InvalidArgumentError, "axis 5 is out of range")
told("GlobalArray.astype (pending reduction): a dtype gdap cannot hold on one rank",
     lambda: pending.astype(bad(np.float32, np.dtype("U3"))), gdap.UnsupportedError, "")
told("GlobalArray.gather: a root out of range on one rank", lambda: a.gather(bad(0, P + 3)), gdap.OutOfRangeError,
     "root %d is not in [0, %d)" % (P + 3, P))
told("GlobalArray.__getitem__: an index out of range on one rank", lambda: a[bad(1, 80), 0], IndexError, "80")
told("np.add (pending operand): a whole ndarray operand on one rank",
     lambda: np.add(pending, bad(1.0, np.ones((8, 6)))), TypeError, "whole ndarray of shape (8, 6)")
told("np.sqrt (pending operand): out= a NumPy array on one rank",
     lambda: np.sqrt(pending, out=bad(None, np.ones((8, 6)))), TypeError, "out= takes a GlobalArray")
inner = gdap.GlobalArray.zeros(layout.cyclic((6, 6), P), comm=comm)
told("GlobalArray.__setitem__ (GlobalArray value): an index out of range on one rank",
     lambda: a.__setitem__((slice(1, 7), bad(slice(None), [0, 1, 2, 3, 4, 60])), inner), IndexError,
     "axis 1: index 60 is out of bounds for size 6")
told("GlobalArray.__setitem__ (pending GlobalArray value): an index out of range on one rank",
     lambda: a.__setitem__((slice(0, 8), bad(slice(None), [0, 1, 2, 3, 4, 60])), pending), IndexError,
     "axis 1: index 60 is out of bounds for size 6")
told("gdap.gather: a device only one rank cannot use",
     lambda: gdap.gather(comm, rows, a.section(), device=bad("cpu", "tpu")), ValueError, "unknown device 'tpu'")
told("gdap.scatter: no dtype on a rank that passes no array",
     lambda: gdap.scatter(comm, rows, WHOLE if R == 0 else None, dtype=bad(np.float64, None)), TypeError,
     "give dtype on the ranks that pass no array")
told("gdap.allgather: a device only one rank cannot use",
     lambda: gdap.allgather(comm, rows, a.section(), device=bad("cpu", "tpu")), ValueError, "unknown device 'tpu'")
told("gdap.broadcast: no dtype on a rank that passes no array",
     lambda: gdap.broadcast(comm, WHOLE if R == 0 else None, (8, 6), dtype=bad(np.float64, None)), TypeError,
     "give dtype on the ranks that pass no array")
told("gdap.allreduce: an op unknown on one rank", lambda: gdap.allreduce(comm, np.ones(4), op=bad("sum", "avg")),
     ValueError, "not 'avg'")
result = gdap.GlobalArray.zeros(layout.block((8,), P), comm=comm)
told("gdap.reduce_scatter: an op unknown on one rank",
     lambda: gdap.reduce_scatter(comm, pending.section(), a.section(), op=bad("sum", "avg")), ValueError, "not 'avg'")
told("gdap.reduce_axes: an axis that is no integer on one rank",
     lambda: gdap.reduce_axes(comm, a.section(), result.section(), axis=bad(1, "x")), TypeError, "axis")
halo_map = layout.block((8, 6), P, halo=1)
halo = gdap.Halo(halo_map, np.float64, comm)
cells = np.zeros(halo_map.local_shape(R))
told("gdap.halo_exchange: a section of the wrong shape on one rank (its reason, not 'NULL')",
     lambda: gdap.halo_exchange(comm, halo, bad(cells, np.zeros((1, 1)))), gdap.ProtocolError, "buffer shape (1)")
cyc = layout.cyclic((8, 6), (P, 1))
closed = gdap.Plan(rows, cyc, np.float64, comm)
if R == FAILING:
    closed.close()
told("gdap.redistribute: a closed plan on one rank",
     lambda: gdap.redistribute(comm, closed, a.section(), np.zeros(cyc.local_shape(R))), gdap.InvalidArgumentError,
     "the Plan is closed")
square = layout.block((8, 8), P)
gemm_plan = gdap.Gemm(comm, square, square, square, np.float64)
m = np.ones(square.local_shape(R))
told("gdap.gemm: an alpha that is no number on one rank",
     lambda: gdap.gemm(comm, gemm_plan, m, m, np.zeros(m.shape), alpha=bad(1.0, "x")), TypeError, "alpha must be a real number, not string 'x'")
told("gdap.gemm: a beta of True on one rank (float(True) read it as 1.0)",
     lambda: gdap.gemm(comm, gemm_plan, m, m, np.zeros(m.shape), beta=bad(0.0, True)), TypeError, "beta must be a real number, not boolean True")
told("GlobalMap.collective: an entry only one rank cannot read (its reason, not 'ndim -1')",
     lambda: gdap.GlobalMap.collective(comm, bad(a.section(), 42)), gdap.ProtocolError, "dim_data must be a tuple")

WORLD.Barrier()
assert ran, "SPMD_CASES=%s matched no case" % os.environ.get("SPMD_CASES")
if R == 0:
    shutil.rmtree(BASE)
comm.close()
print("rank %d: ok (%d cases)" % (R, len(ran)), flush=True)
sys.stdout.flush()

"""One MPI rank's part of test_functions_mpi.py (run under mpiexec -n 2 or 4, not collected by pytest):
NumPy functions on GlobalArrays in SPMD mode (GlobalArray.__array_function__), every rank calling with
the same arguments, each result checked against NumPy on the whole array, the gathering methods
patched to raise while the distributed calls run; the gather of any other function warns on every
rank; a refusal on one rank only (np.allclose with a partner of another layout, GlobalArray.zeros of a dtype gdap
cannot hold, ...) makes that rank raise its error and the others RemoteError at once, not wait out the
timeout. Prints "rank R: ok" on success."""
import warnings

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout
from no_gather import NoGather, told_at_once
from rank_script import rank_helpers

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60)
SHAPE = (9, 6)
WHOLE = np.arange(54, dtype=np.float64).reshape(SHAPE) * 0.5 - 9
NANS = WHOLE.copy()
NANS[2, 1] = NANS[5, :] = np.nan
LAYOUTS = [layout.block(SHAPE, P), layout.cyclic(SHAPE, (P, 1)), layout.block_cyclic(SHAPE, (P // 2, 2), 2),
           layout.padded(SHAPE, (P // 2, 2), 1), layout.replicated(SHAPE, P)]
FAILING = P - 1


case, dist = rank_helpers(comm)


def same(got, want):
    host = got.get()
    assert host.dtype == want.dtype and np.array_equal(host, want, equal_nan=True), (R, host, want)


def told(rule, run):
    told_at_once(rule, run, WORLD, FAILING)


for lay in LAYOUTS:
    case("functions on %s" % lay.dim_data(R)[0].get("dist_type"))
    a, b, m = dist(WHOLE, lay), dist(WHOLE[::-1].copy(), lay), dist(NANS, lay)
    with NoGather(), warnings.catch_warnings():
        warnings.simplefilter("error", gdap.GatherWarning)
        got = [np.where(a > 0, a, b), np.clip(a, -2, 3), np.round(a * 1.3, 1), np.isclose(a, b),
               np.nan_to_num(m, nan=7.0), np.zeros_like(a), np.full_like(a, 3, dtype=np.int32), np.copy(a)]
        scalars = [np.allclose(a, a), np.allclose(a, b), np.array_equal(a, a), np.count_nonzero(a), np.nansum(m),
                   np.nanmax(m), np.nanmean(m), np.linalg.norm(a), np.sum(a), np.std(a), np.any(a)]
        per_column = np.nanmin(m, axis=0)
    want = [np.where(WHOLE > 0, WHOLE, WHOLE[::-1]), np.clip(WHOLE, -2, 3), np.round(WHOLE * 1.3, 1),
            np.isclose(WHOLE, WHOLE[::-1]), np.nan_to_num(NANS, nan=7.0), np.zeros_like(WHOLE),
            np.full_like(WHOLE, 3, dtype=np.int32), WHOLE]
    for g, w in zip(got, want):
        same(g, w)
    expected = [True, False, True, np.count_nonzero(WHOLE), np.nansum(NANS), np.nanmax(NANS), np.nanmean(NANS),
                np.linalg.norm(WHOLE), WHOLE.sum(), WHOLE.std(), True]
    assert scalars[:4] == expected[:4], (R, scalars, expected)
    assert np.allclose(scalars[4:], expected[4:]), (R, scalars, expected)
    same(per_column, np.nanmin(NANS, axis=0))

case("another NumPy function gathers on every rank with a GatherWarning")
a = dist(WHOLE, LAYOUTS[1])
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    median = np.median(a, axis=0)
assert [w.category for w in seen] == [gdap.GatherWarning] and "np.median" in str(seen[0].message), seen
assert np.array_equal(median, np.median(WHOLE, axis=0))

case("a pending operand keeps its layout: (p + 1) + a on a replicated layout")
rep = LAYOUTS[-1]
p = gdap.GlobalArray.from_sections(WHOLE * (R + 1), rep, comm=comm, pending="sum")
same((p + 1) + dist(WHOLE, rep), WHOLE * sum(range(1, P + 1)) + 1 + WHOLE)

a = dist(WHOLE, LAYOUTS[0])
other = dist(WHOLE, LAYOUTS[1])
told("np.allclose with a partner of another layout on one rank", lambda: np.allclose(a, other if R == FAILING else a))
told("np.where of a pending array, a NumPy operand on one rank",
     lambda: np.where(p > 0, p, WHOLE if R == FAILING else 0))
told("GlobalArray.zeros of a dtype gdap cannot hold on one rank",
     lambda: gdap.GlobalArray.zeros(LAYOUTS[0], object if R == FAILING else np.float64, comm=comm))
told("GlobalArray.full on a device only one rank names",
     lambda: gdap.GlobalArray.full(LAYOUTS[0], 1.0, comm=comm, device="tpu" if R == FAILING else None))
case("the communicator works on after the refusals")
assert np.array_equal(gdap.GlobalArray.ones(LAYOUTS[0], comm=comm).get(), np.ones(SHAPE))

print("rank %d: ok" % R, flush=True)

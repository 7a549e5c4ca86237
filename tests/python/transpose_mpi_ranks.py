"""One MPI rank's part of test_transpose_mpi.py (run under mpiexec -n 2 or 4, not collected by pytest):
transposes and reshapes of GlobalArrays in SPMD mode, every rank calling with the same arguments, each
result checked against NumPy on the whole array with the gathering methods patched to raise while
the call runs; views write through (a.T[0, 1] = 5 writes a[1, 0]), copies do not; chains and
reductions over a transpose; a wrong argument on one rank only makes that rank raise its error and
the others RemoteError at once, never wait; ranks that call with different arguments all refuse,
naming each rank's call. Prints "rank R: ok" on success."""
import time
import warnings

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout
from gdap._reshape import keeps_rank_order
from no_gather import NoGather, NoWholeGather, told_at_once
from rank_script import eight_layouts, rank_helpers

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60)
SHAPE = (8, 6)
WHOLE = np.arange(48, dtype=np.float64).reshape(SHAPE) * 0.5 - 7
SQUARE = np.arange(64, dtype=np.float64).reshape(8, 8) * 0.25 + 1
LAYOUTS = eight_layouts(SHAPE, P)
FAILING = P - 1


case, dist = rank_helpers(comm)


def same(got, want):
    host = got.get()
    assert host.shape == want.shape and np.array_equal(host, want), (R, host, want)


def told(rule, run):
    told_at_once(rule, run, WORLD, FAILING)


for lay in LAYOUTS:
    case("transposes on grid %s, %s" % (lay.grid_shape, lay.dim_data(R)[0]["dist_type"]))
    a = dist(WHOLE, lay)
    with NoGather(), warnings.catch_warnings():
        warnings.simplefilter("error", gdap.GatherWarning)
        got = [a.T, np.transpose(a), a.swapaxes(0, 1), np.moveaxis(a, 1, 0), a.T.T]
    for g, want in zip(got, [WHOLE.T, WHOLE.T, WHOLE.T, WHOLE.T, WHOLE]):
        same(g, want)
    view = keeps_rank_order(lay.grid_shape, (1, 0))
    t = a.T
    if t.local_view().size and a.local_view().size:
        assert np.shares_memory(t.local_view(), a.local_view()) == view, (R, lay)
    t[0, 1] = 5
    assert a[1, 0] == (5 if view else WHOLE[1, 0]), (R, lay, a[1, 0])
    case("reductions over the transpose")
    x = WHOLE.copy()
    if view:
        x[1, 0] = 5
    np.testing.assert_allclose(a.T.sum(axis=0).get(), x.T.sum(axis=0))
    np.testing.assert_array_equal(a.T.argmax(axis=1).get(), x.T.argmax(axis=1))
    assert np.isclose(a.T.mean(), x.mean())
    case("reshapes")
    with NoWholeGather(), warnings.catch_warnings():
        warnings.simplefilter("error", gdap.GatherWarning)
        shaped = [a.reshape(-1), a.reshape(4, 12), a.reshape(6, 8), np.reshape(a, (2, 4, 6)), a.T.reshape(3, 16),
                  a.flatten(), np.ravel(a.T)]
    for g, want in zip(shaped, [x.ravel(), x.reshape(4, 12), x.reshape(6, 8), x.reshape(2, 4, 6),
                                x.T.reshape(3, 16), x.flatten(), np.ravel(x.T)]):
        same(g, want)

case("a view reshape on row blocks writes through")
a = dist(WHOLE, LAYOUTS[0])
with NoGather():
    f = a.reshape(16, 3)
assert np.shares_memory(f.local_view(), a.local_view())
f[3, 1] = 100  # flat element 10: a[1, 4]
f[15, 2] = 200  # flat element 47: a[7, 5]
assert a[1, 4] == 100 and a[7, 5] == 200

case("chains: (a.T @ b).T, a.T + a")
for lay in (layout.block((8, 8), (P // 2, 2)), layout.block((8, 8), P)):
    a, b = dist(SQUARE, lay), dist(SQUARE[::-1].copy(), lay)
    np.testing.assert_allclose((a.T @ b).T.get(), (SQUARE.T @ SQUARE[::-1]).T)
    t = a.T
    total = t + (a if t.layout == a.layout else a.reshard(t.layout))
    same(total, SQUARE.T + SQUARE)

case("a reshape of a transpose is a copy on every rank (review s15 #1: a view on some ranks only)")
cols = layout.block((4, 3), (1, P))  # P = 2: rank 0 two columns, rank 1 one; P = 4: one or none
x = np.arange(12, dtype=np.float64).reshape(4, 3)
a = dist(x, cols)
r = a.T.reshape(-1)
if r.local_view().size and a.local_view().size:
    assert not np.shares_memory(r.local_view(), a.local_view()), R
r[11] = -1  # a[0, 2]'s copy: NumPy's a.T.reshape(-1) is a copy
same(a, x)
refused = 0
try:
    a.T.reshape(-1, copy=False)
except gdap.InvalidArgumentError:
    refused = 1
assert WORLD.allreduce(refused) == P, (R, refused)  # every rank refuses, none returns a view
ones = [np.ones(cols.local_shape(q)) for q in range(P)]
p = gdap.GlobalArray.from_sections(ones[R], cols, comm=comm, pending="sum")
flat = p.T.flatten()
assert len(set(WORLD.allgather(flat.pending))) == 1, (R, flat.pending)  # the same state on every rank
same(flat, np.ones(12))  # each element has one holder: its sum is its value
same(a.ravel(order="F"), x.ravel(order="F"))

case("reshape(order='F') that reads as order 'C' is a view on every layout, no move")
for lay in LAYOUTS:
    a = dist(WHOLE, lay)
    with NoGather():
        f = a.reshape(SHAPE, order="F", copy=False)
    same(f, WHOLE)
    if a.local_view().size:
        assert np.shares_memory(f.local_view(), a.local_view()), (R, lay.grid_shape)

grid = LAYOUTS[3]
a = dist(WHOLE, grid)
if P >= 4:  # a 2 x 2 grid: the transpose moves blocks (collective), so a wrong argument is agreed first
    told("a.transpose with repeated axes on one rank", lambda: a.transpose((0, 0) if R == FAILING else (1, 0)))
    told("np.moveaxis out of range on one rank", lambda: np.moveaxis(a, 5 if R == FAILING else 0, 1))
told("a.reshape to a wrong size on one rank", lambda: a.reshape((7, 7) if R == FAILING else (6, 8)))
told("a.reshape(order='A') on one rank", lambda: a.reshape(-1, order="A" if R == FAILING else "C"))
for rule, run in [("copy=False on rank 0 only", lambda: a.reshape(6, 8, copy=False if R == 0 else None)),
                  ("an identity transpose on rank 0, a.T on the others", lambda: a.transpose(0, 1) if R == 0 else a.T)]:
    case("ranks that call differently all refuse, naming rank 0's call (review s16 #1): " + rule)
    t0 = time.monotonic()
    try:
        run()
        raise AssertionError("%s: no error on rank %d" % (rule, R))
    except gdap.InvalidArgumentError as e:
        assert "calls on one GlobalArray differ" in str(e) and "on rank 0;" in str(e), (R, e)
    assert time.monotonic() - t0 < 30, "%s: rank %d waited for the timeout" % (rule, R)
    WORLD.Barrier()
case("the communicator works on after the refusals")
same(a.T, WHOLE.T)

print("rank %d: ok" % R, flush=True)

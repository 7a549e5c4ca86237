"""One MPI rank's part of test_squeeze_cumsum_mpi.py (run under mpiexec -n 2 or 4, not collected by
pytest): squeeze / expand_dims, cumsum / cumprod and a[mask] = 1-d values (NumPy or GlobalArray) of
GlobalArrays in SPMD mode, every rank calling with the same arguments, each result checked against
NumPy on the whole array (dtype included) with the gathering methods patched to raise while the call
runs. Where the behaviour differs across ranks: each rank's exclusive scan of the other ranks' totals,
each rank's offset into the value in C order, a length-1 axis held by one grid cell only; a wrong
argument on one rank only makes that rank raise its error and the others RemoteError at once. Prints
"rank R: ok" on success."""
import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout
from no_gather import NoGather, NoWholeGather, calls_differ_everywhere, told_at_once
from rank_script import boundary_padded, eight_layouts, rank_helpers, same_values

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60)
SHAPE = (8, 6)
INTS = (np.arange(48).reshape(SHAPE) % 7 - 3).astype(np.int64)
LAYOUTS = eight_layouts(SHAPE, P)
FAILING = P - 1

case, dist = rank_helpers(comm)


def same(got, want):
    same_values(got, want, R)


for lay in LAYOUTS:
    case("cumsum / cumprod on grid %s, %s" % (lay.grid_shape, lay.dim_data(R)[0]["dist_type"]))
    for x in (INTS.astype(np.int8), INTS.astype(np.float64)):
        a = dist(x, lay)
        with NoWholeGather():
            got = [a.cumsum(0), np.cumsum(a, axis=1), a.cumprod(1), np.cumprod(a, 0), a.cumsum(), np.cumprod(a)]
        for g, want in zip(got, [x.cumsum(0), np.cumsum(x, axis=1), x.cumprod(1), np.cumprod(x, 0), x.cumsum(),
                                 np.cumprod(x)]):
            same(g, want)
    case("a[mask] = values on grid %s" % (lay.grid_shape,))
    x = np.arange(48, dtype=np.float64).reshape(SHAPE) - 20
    a = dist(x, lay)
    values = np.arange(int((x % 3 == 0).sum())) * 2.0 + 0.5
    with NoWholeGather():
        a[a % 3 == 0] = values
    want = x.copy()
    want[want % 3 == 0] = values
    same(a, want)
    case("a[mask] = GlobalArray on grid %s" % (lay.grid_shape,))
    for value_layout in (layout.block(values.shape, P), layout.cyclic(values.shape, P),
                         layout.root(values.shape, P, FAILING)):
        a = dist(x, lay)
        b = dist(values, value_layout)
        with NoWholeGather():
            a[a % 3 == 0] = b
        same(a, want)

case("cumsum keeps a leading -0.0 after empty blocks")
zeros = np.array([-0.0] * P)
got = dist(zeros, layout.grid((P,), (P,), lengths=[[0] + [1] * (P - 2) + [2]])).cumsum().get()
np.testing.assert_array_equal(np.signbit(got), np.signbit(np.cumsum(zeros)))

case("cumsum along blocks moves nothing")
for lay in (LAYOUTS[0], LAYOUTS[1], LAYOUTS[3]):
    a = dist(INTS, lay)
    with NoGather():
        got = a.cumsum(0), a.cumsum(1)
    same(got[0], INTS.cumsum(0))
    same(got[1], INTS.cumsum(1))

case("cumsum / cumprod where the ranks of one grid column differ only in boundary padding")
x = np.arange(1, 17, dtype=np.int64).reshape(4, 4)
a = dist(x, boundary_padded(x.shape, (2, P // 2)))
with NoWholeGather():  # hunt 17 #1: the ranks below rank 0 found no rank before theirs, scanned from zero
    got = a.cumsum(0), np.cumprod(a, 0), a.cumsum(1), a.cumsum()
for g, want in zip(got, (x.cumsum(0), x.cumprod(0), x.cumsum(1), x.cumsum())):
    same(g, want)

case("squeeze and expand_dims are views without communication")
x3 = np.arange(48, dtype=np.float64).reshape(8, 1, 6)
for lay in (layout.block(x3.shape, P), layout.cyclic(x3.shape, (1, 1, P)), layout.block(x3.shape, (P // 2, 1, 2))):
    a = dist(x3, lay)
    with NoGather():
        s, e = a.squeeze(), np.expand_dims(a, 0)
    same(s, x3.squeeze())
    same(e, x3[None])
    if a.local_view().size:
        assert np.shares_memory(s.local_view(), a.local_view()) and np.shares_memory(e.local_view(), a.local_view())

case("squeeze of a length-1 axis the grid divides (only one grid cell holds it): a view")
x = np.arange(12, dtype=np.int32).reshape(1, 12)
for lay in (layout.block(x.shape, (2, P // 2)), layout.cyclic(x.shape, (2, P // 2)),
            layout.block(x.T.shape, (P // 2, 2))):
    a = dist(x.reshape(lay.shape), lay)
    with NoGather():
        s = np.squeeze(a)
    same(s, x.squeeze())
    if a.local_view().size:
        assert np.shares_memory(s.local_view(), a.local_view()), R
    s[5] = -1
    want = x.squeeze().copy()
    want[5] = -1
    same(a, want.reshape(lay.shape))

case("refusals on one rank only")
a = dist(INTS, LAYOUTS[3])
told_at_once("a.cumsum with an axis out of range on one rank", lambda: a.cumsum(5 if R == FAILING else 0), WORLD,
             FAILING)
told_at_once("np.cumprod with a bad dtype on one rank", lambda: np.cumprod(a, 0, "not a dtype" if R == FAILING
                                                                          else None), WORLD, FAILING)
one = dist(np.arange(12.0).reshape(1, 12), layout.block((1, 12), (2, P // 2)))
told_at_once("squeeze of a length-6 axis on one rank", lambda: one.squeeze(1 if R == FAILING else 0), WORLD, FAILING)
told_at_once("np.expand_dims with an axis out of range on one rank",  # hunt 17 #2: the others returned
             lambda: np.expand_dims(a, 5 if R == FAILING else 0), WORLD, FAILING)  # and waited later
b = dist(np.arange(8.0), layout.block((8,), P))
try:
    b[b > 3] = [1.0, 2.0, 3.0, 4.0] if R != FAILING else [1.0, 2.0]
    raise AssertionError("rank %d: no error" % R)
except gdap.InvalidArgumentError as e:  # every rank sees every rank's length
    assert "values of different lengths" in str(e), (R, e)
try:
    b[b > 3] = [1.0, 2.0]
    raise AssertionError("rank %d: no error" % R)
except ValueError as e:
    assert "cannot assign 2 input values to the 4 output values" in str(e), (R, e)
same(b, np.arange(8.0))
for length in (3, 5):  # a GlobalArray value of another length: every rank raises, nothing written
    try:
        b[b > 3] = dist(np.ones(length), layout.block((length,), P))
        raise AssertionError("rank %d: no error" % R)
    except ValueError as e:
        assert "cannot assign %d input values to the 4 output values" % length in str(e), (R, e)
mine = np.zeros(layout.block((8,), P).local_shape(R))
mine.flags.writeable = R != FAILING
ro = gdap.GlobalArray.from_sections(mine, layout.block((8,), P), comm=comm)
told_at_once("a[m] = b with a read-only section on one rank", lambda: ro.__setitem__(
    ro > -1, dist(np.ones(8), layout.cyclic((8,), P))), WORLD, FAILING)
same(b, np.arange(8.0))
same(ro, np.zeros(8))
case("ranks that pass different valid arguments all raise, naming each rank's call")
x4 = np.arange(48.0).reshape(8, 1, 6, 1)
calls_differ_everywhere((("axis", lambda: a.cumsum(1 if R == FAILING else 0)),
                        ("dtype", lambda: a.cumsum(0, dtype=np.float64 if R == FAILING else None)),
                        ("squeeze axis",
                         lambda: dist(x4, layout.block(x4.shape, P)).squeeze(1 if R == FAILING else None)),
                        ("expand_dims axis", lambda: np.expand_dims(a, 1 if R == FAILING else 0))), R, FAILING)
case("the communicator works on after the refusals")
same(a.cumsum(1), INTS.cumsum(1))

print("rank %d: ok" % R, flush=True)

"""np.squeeze / a.squeeze / np.expand_dims, np.cumsum / np.cumprod (and the methods) and a[mask] = 1-d
values on a GlobalArray, single controller on the host (SPMD over MPI: squeeze_cumsum_mpi_ranks.py
through test_squeeze_cumsum_mpi). Every result is compared with NumPy on the whole array, dtype
included; none gathers (the gathering calls are patched to raise while they run). Before this change
a.squeeze, a.cumsum and a.cumprod did not exist, np.squeeze, np.expand_dims, np.cumsum and np.cumprod
gathered with a GatherWarning, and a[mask] = np.arange(k) raised TypeError ("takes a scalar v"); a[mask] = b
with b a GlobalArray raised TypeError ("not a GlobalArray") until session 17."""
import numpy as np
import pytest

import gdap
from gdap import layout
from conftest import block, unstructured
from rank_script import boundary_padded
from test_global import LAYOUTS, NAMES, P
from test_transpose import no_gather

SHAPE = (7, 6)
INTS = (np.arange(42).reshape(SHAPE) % 7 - 3).astype(np.int64)  # small values: products stay exact


def dist(x, lay):
    return gdap.distribute(x, lay)


def shares(a, b):
    held = [r for r in range(P) if a.local_view(r).size and b.local_view(r).size]
    assert held
    return all(np.shares_memory(a.local_view(r), b.local_view(r)) for r in held)


def same(got, want):
    assert isinstance(got, gdap.GlobalArray)
    host = got.get()
    assert host.shape == want.shape and host.dtype == want.dtype, (host.shape, host.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(host, want)


# -- squeeze and expand_dims --------------------------------------------------------------------------------

WITH_ONE = (7, 1, 6)
ONE_LAYOUTS = {  # layouts of a (7, 1, 6) array whose length-1 axis every rank holds whole
    "row blocks": lambda s: layout.block(s, P),
    "blocks over axes 0 and 2": lambda s: layout.block(s, (2, 1, 2)),
    "cyclic rows": lambda s: layout.cyclic(s, (P, 1, 1)),
    "cyclic last axis": lambda s: layout.cyclic(s, (1, 1, P)),
    "unstructured rows": lambda s: layout.unstructured(s, [[6, 0], [2], [5, 1, 3], [4]]),
    "padded": lambda s: layout.padded(s, (2, 1, 2), (1, 0, 1)),
    "replicated": lambda s: layout.replicated(s, P),
}
X3 = np.arange(42, dtype=np.float64).reshape(WITH_ONE) * 0.5 - 4


@pytest.mark.parametrize("name", list(ONE_LAYOUTS))
def test_squeeze_of_an_undistributed_length_1_axis_is_a_view(name):
    # Rule: NumPy's values and shape; no communication at all (reshard patched too); the sections are
    # the same memory (a write goes through) and the other axes keep their distribution.
    a = dist(X3, ONE_LAYOUTS[name](WITH_ONE))
    with no_gather(moves=False):
        got = [a.squeeze(), a.squeeze(1), a.squeeze((-2,)), np.squeeze(a), np.squeeze(a, axis=1)]
    for g in got:
        same(g, X3.squeeze())
        assert shares(g, a)
        assert g.layout.grid_shape == tuple(n for k, n in enumerate(a.layout.grid_shape) if k != 1)
    got[0][6, 5] = 100.0
    assert a[6, 0, 5] == 100.0


@pytest.mark.parametrize("name", list(ONE_LAYOUTS))
@pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 3)])
def test_expand_dims_is_a_view_on_every_layout(name, axis):
    # Rule: NumPy's shape and values, a view of the same sections, no communication; squeezing it back
    # gives the array's own layout.
    a = dist(X3, ONE_LAYOUTS[name](WITH_ONE))
    with no_gather(moves=False):
        e = np.expand_dims(a, axis)
    same(e, np.expand_dims(X3, axis))
    assert shares(e, a)
    with no_gather(moves=False):
        back = e.squeeze(axis)
    assert back.layout == a.layout
    same(back, X3)


@pytest.mark.parametrize("name", NAMES)
def test_squeeze_and_expand_dims_of_2d_layouts(name):
    # Rule: the layouts the other tests use: expand_dims then squeeze is the array, a view.
    x = np.arange(42, dtype=np.float32).reshape(SHAPE)
    a = dist(x, LAYOUTS[name](SHAPE))
    with no_gather(moves=False):
        e = np.expand_dims(a, 0)
        s = e.squeeze(0)
    same(e, x[None])
    same(s, x)
    assert shares(s, a) and s.layout == a.layout


@pytest.mark.parametrize("shape, grid", [((2, 1, 6), (1, 2, 2)), ((1, 8), (2, 2)), ((1, 8), (4, 1)), ((1, 8), None)])
def test_squeeze_of_a_distributed_length_1_axis_moves_or_views_as_reshape(shape, grid):
    # Rule: where the grid divides the length-1 axis (only the ranks of its one cell hold elements, or a
    # replicated layout's grid of replicas) the result is reshape's: NumPy's values, never a gather
    # (reshards allowed).
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    a = dist(x, layout.block(shape, grid) if grid else layout.replicated(shape, P))
    with no_gather():
        s = a.squeeze()
    same(s, x.squeeze())
    assert s.layout.nranks == P


DIVIDED = {  # layouts whose grid divides a length-1 axis: only the ranks of its one grid cell hold elements
    "(1, 8) on 2 x 2 blocks": ((1, 8), lambda s: layout.block(s, (2, 2))),
    "(8, 1) on 1 x 4 blocks": ((8, 1), lambda s: layout.block(s, (1, 4))),
    "(8, 1) on 2 x 2 blocks": ((8, 1), lambda s: layout.block(s, (2, 2))),
    "(2, 1, 6) on 1 x 2 x 2": ((2, 1, 6), lambda s: layout.block(s, (1, 2, 2))),
    "(1, 8, 1) on 2 x 1 x 2": ((1, 8, 1), lambda s: layout.block(s, (2, 1, 2))),
    "(1, 8) cyclic on 2 x 2": ((1, 8), lambda s: layout.cyclic(s, (2, 2))),
    "(8, 1) unstructured rows on 2 x 2": ((8, 1), lambda s: unstructured_rows_2x2()),
}


def unstructured_rows_2x2():
    """An (8, 1) array: rows listed out of order over grid axis 0, the length-1 axis in blocks over 2."""
    rows = [[7, 0, 3], [5, 1, 2, 4, 6]]
    return gdap.GlobalMap([(unstructured(8, rows[r // 2], 2, r // 2), block(1, *((0, 1) if r % 2 == 0 else (1, 1)),
                                                                            grid=2, rank=r % 2)) for r in range(P)])


@pytest.mark.parametrize("name", list(DIVIDED))
def test_squeeze_of_a_length_1_axis_the_grid_divides_is_a_view(name):
    # Rule: as NumPy's squeeze, a view: no communication at all (reshard patched too), the ranks that
    # hold elements keep their memory, writes go through both ways; the dropped axis's grid extent is
    # folded into a kept axis so that the map still numbers every rank. Before: a copy (reshape's
    # redistribution) for every one of these.
    shape, make = DIVIDED[name]
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    a = dist(x, make(shape))
    with no_gather(moves=False):
        s = a.squeeze()
    same(s, x.squeeze())
    assert shares(s, a) and s.layout.nranks == P
    s[np.unravel_index(5, s.shape)] = -1.0
    a[(0,) * a.ndim] = -2.0
    want = x.copy()
    want.reshape(-1)[5] = -1.0
    want[(0,) * want.ndim] = -2.0
    same(a, want)
    same(s, want.squeeze())


def test_squeeze_copies_where_a_kept_axis_in_the_fold_is_padded():
    # Rule: a padded axis cannot take the folded grid (an empty block has no room for padding): the
    # reshape's copy, NumPy's values.
    x = np.arange(8.0).reshape(1, 8)
    a = dist(x, layout.padded(x.shape, (2, 2), (0, 1)))
    s = a.squeeze()
    same(s, x.squeeze())
    assert not shares(s, a)


def test_squeeze_keeps_a_pending_reduction_in_a_view():
    # Rule: a view keeps the partial values pending; reading it performs the reduction.
    lay = layout.replicated((3, 1), P)
    p = gdap.GlobalArray.from_sections([np.ones((3, 1))] * P, lay, pending="sum")
    s = p.squeeze()
    assert s.pending == "sum"
    same(s, np.full(3, float(P)))


@pytest.mark.parametrize("call, error, words", [
    (lambda a: a.squeeze(0), gdap.InvalidArgumentError, "cannot select an axis to squeeze out which has size not "
                                                        "equal to one"),
    (lambda a: np.squeeze(a, 3), gdap.InvalidArgumentError, "axis 3 is out of range"),
    (lambda a: a.squeeze((1, 1)), gdap.InvalidArgumentError, "repeated axis"),
    (lambda a: np.expand_dims(a, 4), gdap.InvalidArgumentError, "axis 4 is out of range"),
    (lambda a: np.expand_dims(a, (0, 0)), gdap.InvalidArgumentError, "repeated axis"),
])
def test_squeeze_and_expand_dims_refuse_as_numpy(call, error, words):
    # Rule: NumPy's ValueErrors (gdap.InvalidArgumentError is one); a 0-d result is refused with the way round.
    a = dist(X3, ONE_LAYOUTS["row blocks"](WITH_ONE))
    assert issubclass(error, ValueError)
    with pytest.raises(error, match=words):
        call(a)
    np.testing.assert_array_equal(a.get(), X3)


def test_squeeze_to_0d_is_refused_with_the_way_round():
    a = dist(np.full((1, 1), 5.0), layout.replicated((1, 1), P))
    with pytest.raises(gdap.UnsupportedError, match=r"a 0-d GlobalArray has no layout; read the element with"):
        np.squeeze(a)


# -- cumsum and cumprod ---------------------------------------------------------------------------------------

SCANS = {
    "np.cumsum": (lambda a, **k: np.cumsum(a, **k), np.cumsum),
    "a.cumsum": (lambda a, **k: a.cumsum(**k), np.cumsum),
    "np.cumprod": (lambda a, **k: np.cumprod(a, **k), np.cumprod),
    "a.cumprod": (lambda a, **k: a.cumprod(**k), np.cumprod),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scan", list(SCANS))
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_cumulative_is_numpys_on_every_layout_without_a_gather(name, scan, axis):
    # Rule: NumPy's values and dtype (integers exact, int8 accumulating in int64), on every layout,
    # never gathered (block axes: a local scan and the ranks' totals; others: redistributed to blocks).
    ours, numpys = SCANS[scan]
    for x in (INTS.astype(np.int8), INTS.astype(np.float64)):
        a = dist(x, LAYOUTS[name](SHAPE))
        with no_gather():
            got = ours(a, axis=axis)
        same(got, numpys(x, axis=axis))
        if axis is not None:
            assert got.layout == a.layout
        np.testing.assert_array_equal(a.get(), x)


@pytest.mark.parametrize("name", ["row blocks", "column blocks", "2 x 2 blocks", "irregular rows", "replicated"])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumsum_along_blocks_moves_nothing(name, axis):
    # Rule: an axis held in blocks (or whole) is scanned where it lies: no reshard, no gather.
    a = dist(INTS, LAYOUTS[name](SHAPE))
    with no_gather(moves=False):
        got = a.cumsum(axis)
    same(got, INTS.cumsum(axis))


def test_cumulative_where_ranks_of_one_grid_column_differ_only_in_boundary_padding():
    # Rule: the blocks before a rank's are those at its grid coordinate on the other axes, whatever
    # boundary padding they give (hunt 17 #1: the ranks below rank 0, whose axis-1 dictionary alone
    # has padding, found no rank before theirs and scanned from zero, a silent wrong answer).
    x = np.arange(1, 17, dtype=np.int64).reshape(4, 4)
    a = dist(x, boundary_padded(x.shape, (2, 2)))
    with no_gather():
        got = a.cumsum(0), np.cumprod(a, 0), a.cumsum(1), a.cumsum()
    for g, want in zip(got, (x.cumsum(0), x.cumprod(0), x.cumsum(1), x.cumsum())):
        same(g, want)


@pytest.mark.parametrize("dtype, wanted", [(np.int8, None), (np.bool_, None), (np.uint8, None), (np.int32, None),
                                           (np.float32, None), (np.float16, None), (np.int8, np.float32),
                                           (np.float64, np.int64), (np.complex128, None), (np.bool_, np.bool_)])
def test_cumulative_dtypes_are_numpys(dtype, wanted):
    # Rule: np.cumsum / np.cumprod's result dtype: bool and narrow integers in the platform integer,
    # unsigned in the platform unsigned, dtype= honoured.
    x = (INTS % 3).astype(dtype)
    a = dist(x, layout.block(SHAPE, (2, 2)))
    for ours, numpys in (SCANS["a.cumsum"], SCANS["np.cumprod"]):
        with no_gather():
            got = ours(a, axis=0, dtype=wanted)
        same(got, numpys(x, axis=0, dtype=wanted))


def test_cumsum_of_floats_agrees_with_numpy_to_rounding():
    # Rule: floats are summed block by block (each block from the sum of the blocks before it): NumPy's
    # to rounding.
    x = np.random.default_rng(16).standard_normal((40, 5))
    a = dist(x, layout.block(x.shape, P))
    np.testing.assert_allclose(a.cumsum(0).get(), x.cumsum(0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.cumsum(a).get(), np.cumsum(x), rtol=1e-12, atol=1e-12)


def _gamma(k):
    """The rounding-error factor gamma(k) = k u / (1 - k u) of docs/python.md's float16 scan bound."""
    u = 2.0 ** -11 * (1 + 2.0 ** -12)
    return k * u / (1 - k * u)


FLOAT16_SCANS = {  # name: (values, layout of them, axis, block length along the scanned axis in C order)
    "even blocks": ((600,), lambda s: layout.block(s, P), 0, [150] * 4),
    "irregular blocks, the first empty": ((600,), lambda s: layout.grid(s, (P,), lengths=[[0, 250, 50, 300]]), 0,
                                          [0, 250, 50, 300]),
    "block-cyclic (moved to even blocks)": ((600,), lambda s: layout.block_cyclic(s, P, 7), 0, [150] * 4),
}


@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("name", list(FLOAT16_SCANS))
def test_float16_scans_differ_from_numpys_sequential_rounding_within_the_stated_bound(name, op):
    # Rule (docs/python.md, scans): the first two blocks that hold cells are NumPy's bit for bit; element i
    # of block q (its grid coordinate along the axis) differs from NumPy's float16 result by at most
    # (gamma(i + q + 1) + gamma(i)) * S_i, S_i = sum of |x_j| over j <= i (cumsum) or |prod of x_j| (cumprod).
    # And the bound is not idle: the later blocks do differ here.
    shape, make, axis, lengths = FLOAT16_SCANS[name]
    rng = np.random.default_rng(17)
    x = (rng.uniform(0.5, 1.5, shape) if op == "sum" else rng.uniform(0.99, 1.01, shape)).astype(np.float16)
    a = dist(x, make(shape))
    ours = (a.cumsum(axis) if op == "sum" else a.cumprod(axis)).get()
    numpys = np.cumsum(x, axis) if op == "sum" else np.cumprod(x, axis)
    assert ours.dtype == numpys.dtype == np.float16
    block = np.repeat(np.arange(len(lengths)), lengths)
    held = [q for q, n in enumerate(lengths) if n]
    first_two = np.isin(block, held[:2])
    np.testing.assert_array_equal(ours[first_two], numpys[first_two])
    i = np.arange(len(x))
    wide = x.astype(np.float64)
    scale = np.cumsum(np.abs(wide)) if op == "sum" else np.abs(np.cumprod(wide))
    gap = np.abs(ours.astype(np.float64) - numpys.astype(np.float64))
    assert (gap <= (_gamma(i + block + 1) + _gamma(i)) * scale).all()
    assert gap[~first_two].max() > 0


def test_cumsum_keeps_a_leading_negative_zero_after_empty_blocks():
    # Rule: as NumPy's, -0.0 + -0.0 stays -0.0: the blocks before the first that holds cells are left out of
    # its offset. Before: their total, +0.0, was added to the first cell, which became +0.0.
    x = np.array([-0.0, -0.0, 2.0, -0.0])
    for dtype in (np.float16, np.float64):
        a = dist(x.astype(dtype), layout.grid((4,), (P,), lengths=[[0, 1, 2, 1]]))
        got = a.cumsum()
        same(got, np.cumsum(x.astype(dtype)))
        np.testing.assert_array_equal(np.signbit(got.get()), np.signbit(np.cumsum(x.astype(dtype))))


def test_cumulative_of_a_pending_array_and_empty_axes():
    # Rule: a pending reduction is performed first; an axis of length 0 gives NumPy's empty result.
    p = gdap.GlobalArray.from_sections([INTS] * P, layout.replicated(SHAPE, P), pending="sum")
    same(p.cumsum(1), (P * INTS).cumsum(1))
    e = dist(np.zeros((0, 6), np.int8), layout.block((0, 6), P))
    same(e.cumsum(0), np.zeros((0, 6), np.int8).cumsum(0))
    same(np.cumprod(e), np.cumprod(np.zeros((0, 6), np.int8)))


def test_cumulative_refusals():
    # Rule: an axis out of range is NumPy's ValueError; out= is refused by name; nothing is written.
    a = dist(INTS, layout.block(SHAPE, P))
    with pytest.raises(gdap.InvalidArgumentError, match="axis 2 is out of range"):
        a.cumsum(2)
    with pytest.raises(TypeError, match=r"cumsum\(out=...\): out= is not taken"):
        a.cumsum(0, out=a)
    with pytest.raises(TypeError, match=r"np.cumprod\(\.\.\., out=a\) with a GlobalArray out"):
        np.cumprod(a, 0, None, a)
    np.testing.assert_array_equal(a.get(), INTS)


# -- a[mask] = values -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_mask_assignment_of_one_value_per_true_cell_is_numpys(name):
    # Rule: the k-th True cell in C order of the whole array gets value[k], on every layout, never
    # gathered; one value is broadcast; a scalar still works.
    x = np.arange(42, dtype=np.float64).reshape(SHAPE) * 1.5 - 20
    a = dist(x, LAYOUTS[name](SHAPE))
    m = (x % 4 == 1) | (x > 30)
    values = np.arange(m.sum()) * 10 + 0.5
    with no_gather():
        a[(a % 4 == 1) | (a > 30)] = values
    want = x.copy()
    want[m] = values
    np.testing.assert_array_equal(a.get(), want)
    a[a < -10] = [7]
    want[want < -10] = [7]
    a[a == 7] = np.int8(3)
    want[want == 7] = 3
    np.testing.assert_array_equal(a.get(), want)


def test_mask_assignment_casts_as_numpy_and_takes_lists():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = dist(x, layout.cyclic(x.shape, (1, P)))
    a[a > 8] = [1.9, -2.7, 3.2]  # NumPy's assignment casting: floats truncate into int32
    want = x.copy()
    want[want > 8] = [1.9, -2.7, 3.2]
    same(a, want)


VALUE_LAYOUTS = {  # layouts of a 1-d GlobalArray value of n elements
    "blocks": lambda n: layout.block((n,), P),
    "cyclic": lambda n: layout.cyclic((n,), P),
    "on rank 2 only": lambda n: layout.root((n,), P, 2),
    "replicated": lambda n: layout.replicated((n,), P),
    "unstructured": lambda n: layout.unstructured((n,), [list(range(n - 1, -1, -2)), [], list(range(n - 2, -1, -2)),
                                                         []]),
}


@pytest.mark.parametrize("value_layout", list(VALUE_LAYOUTS))
@pytest.mark.parametrize("name", NAMES)
def test_mask_assignment_of_a_global_array_moves_its_elements_to_the_owners(name, value_layout):
    # Rule: a[m] = b with b a 1-d GlobalArray of one element per True cell is NumPy's a[m] = b.get(),
    # b's elements moved to the True cells' owners in C order without a gather, whatever the layouts.
    # Before: TypeError "not a GlobalArray".
    x = np.arange(42, dtype=np.float64).reshape(SHAPE) - 20
    m = (x % 3 == 0) | (x > 15)
    values = np.arange(m.sum()) * 10 + 0.5
    a = dist(x, LAYOUTS[name](SHAPE))
    b = dist(values, VALUE_LAYOUTS[value_layout](len(values)))
    with no_gather():
        a[(a % 3 == 0) | (a > 15)] = b
    want = x.copy()
    want[m] = values
    same(a, want)
    same(b, values)  # the value is unchanged


def test_mask_assignment_of_a_global_array_casts_broadcasts_and_settles():
    # Rule: as NumPy's: the value cast to a's dtype (floats truncate into ints), one element (any layout)
    # broadcast to every True cell, an all-False mask with an empty value writes nothing, a
    # pending value's reduction performed first; never a gather. Before: TypeError "not a GlobalArray".
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = dist(x, layout.cyclic(x.shape, (1, P)))
    want = x.copy()
    with no_gather():
        a[a > 8] = dist(np.array([1.9, -2.7, 3.2]), layout.block((3,), P))
        a[a < 2] = dist(np.array([7.0]), layout.block((1,), P))
        a[a == 3] = dist(np.array([-5]), layout.replicated((1,), P))
        a[a > 100] = dist(np.zeros(0), layout.block((0,), P))
        a[a == 2] = gdap.GlobalArray.from_sections([np.ones(1)] * P, layout.replicated((1,), P), pending="sum")
    want[want > 8] = [1.9, -2.7, 3.2]
    want[want < 2] = 7
    want[want == 3] = -5
    want[want == 2] = P
    same(a, want)


@pytest.mark.parametrize("value, error, words", [
    (np.zeros(3), ValueError, "cannot assign 3 input values to the 20 output values where the mask is true"),
    (np.zeros((2, 10)), TypeError, "requires a 0 or 1-dimensional input, input has 2 dimensions"),
    ("global (3,)", ValueError, "cannot assign 3 input values to the 20 output values where the mask is true"),
    ("global (21,)", ValueError, "cannot assign 21 input values to the 20 output values where the mask is true"),
    ("global (2, 10)", TypeError, "requires a 0 or 1-dimensional input, input has 2 dimensions"),
    ("global elsewhere", gdap.InvalidArgumentError, "a and b are on different controllers"),
])
def test_mask_assignment_refusals_write_nothing(value, error, words):
    # Rule: NumPy's errors for a value (host or GlobalArray) of another length or more dimensions, a
    # GlobalArray value of another controller refused; nothing is written. Before: every GlobalArray
    # value was refused with TypeError "not a GlobalArray", whatever its length.
    x = np.arange(42, dtype=np.float64).reshape(SHAPE) - 21.5
    a = dist(x, layout.block(SHAPE, (2, 2)))
    if isinstance(value, str) and value == "global elsewhere":
        value = gdap.distribute(np.zeros(20), layout.block((20,), 2))
    elif isinstance(value, str):
        shape = tuple(int(n) for n in value[8:-1].split(",") if n)
        value = dist(np.zeros(shape), layout.block(shape, P))
    with pytest.raises(error, match=words):
        a[a > 0] = value
    same(a, x)

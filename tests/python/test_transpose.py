"""Transposes (a.T, a.transpose, np.transpose, swapaxes, np.moveaxis, mT) and reshapes (a.reshape,
np.reshape, ravel, flatten) of a GlobalArray, single controller on the host (SPMD over MPI:
transpose_mpi_ranks.py through test_transpose_mpi; devices: the gpu-marked tests at the end).
Every result is compared with NumPy on the whole array, on the nine layouts the other tests use;
a transpose that keeps the order of the distributed axes is a view (writes go through, as NumPy's),
one that reorders them is a copy moved by one redistribution; a reshape is a view where each rank's
section reshapes alone, else a redistribution. None gathers: the gathering calls are patched to
raise while they run. Before this change a.T, a.transpose and a.reshape did not exist and
np.transpose / np.reshape gathered with a GatherWarning."""
import contextlib
import math
import warnings

import numpy as np
import pytest

import gdap
from gdap import layout
from gdap._global import same_layout
from gdap._reshape import keeps_rank_order
from test_global import LAYOUTS, NAMES, P
from test_global_gpu import _gpus

SHAPE = (7, 6)
WHOLE = np.arange(42, dtype=np.float64).reshape(SHAPE) * 0.5 - 3
SQUARE = np.arange(36, dtype=np.float64).reshape(6, 6) * 0.25 + 1


@contextlib.contextmanager
def no_gather(moves=True):
    """Every whole-array gather raises meanwhile (and reshard too unless moves); GatherWarning is an error."""
    def refuse(*args, **kwargs):
        raise AssertionError("a silent gather or move")
    names = ["get", "__array__", "gather", "allgather"] + ([] if moves else ["reshard"])
    saved = {n: getattr(gdap.GlobalArray, n) for n in names}
    try:
        for n in names:
            setattr(gdap.GlobalArray, n, refuse)
        with warnings.catch_warnings():
            warnings.simplefilter("error", gdap.GatherWarning)
            yield
    finally:
        for n, f in saved.items():
            setattr(gdap.GlobalArray, n, f)


def dist(x, name):
    return gdap.distribute(x, LAYOUTS[name](x.shape))


def shares(a, b):
    """Whether every rank's section of a and of b share memory (ranks that hold nothing aside)."""
    held = [r for r in range(P) if a.local_view(r).size and b.local_view(r).size]
    assert held
    return all(np.shares_memory(a.local_view(r), b.local_view(r)) for r in held)


def shares_none(a, b):
    return not any(np.shares_memory(a.local_view(r), b.local_view(r)) for r in range(P))


TRANSPOSES = {
    "a.T": (lambda a: a.T, lambda x: x.T),
    "a.transpose()": (lambda a: a.transpose(), lambda x: x.transpose()),
    "a.transpose(1, 0)": (lambda a: a.transpose(1, 0), lambda x: x.transpose(1, 0)),
    "a.transpose((-1, 0))": (lambda a: a.transpose((-1, 0)), lambda x: x.transpose((-1, 0))),
    "np.transpose": (lambda a: np.transpose(a), lambda x: np.transpose(x)),
    "np.permute_dims": (lambda a: np.permute_dims(a, (1, 0)), lambda x: np.permute_dims(x, (1, 0))),
    "a.swapaxes": (lambda a: a.swapaxes(0, 1), lambda x: x.swapaxes(0, 1)),
    "np.swapaxes": (lambda a: np.swapaxes(a, -1, 0), lambda x: np.swapaxes(x, -1, 0)),
    "np.moveaxis": (lambda a: np.moveaxis(a, 0, -1), lambda x: np.moveaxis(x, 0, -1)),
    "a.mT": (lambda a: a.mT, lambda x: x.mT),
    "np.matrix_transpose": (lambda a: np.matrix_transpose(a), lambda x: np.matrix_transpose(x)),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fn", TRANSPOSES, ids=list(TRANSPOSES))
def test_transposes_are_numpys_on_every_layout_without_a_gather(name, fn):
    # Rule: the global shape and values are NumPy's transpose's; a view exactly where the grid keeps
    # the distributed axes' order (1-d grids), else a copy sharing no memory.
    a = dist(WHOLE, name)
    ours, numpys = TRANSPOSES[fn]
    with no_gather():
        t = ours(a)
    assert isinstance(t, gdap.GlobalArray) and t.shape == (6, 7)
    np.testing.assert_array_equal(t.get(), numpys(WHOLE))
    if keeps_rank_order(a.layout.grid_shape, (1, 0)):
        assert shares(t, a), "a view of the same sections"
    else:
        assert shares_none(t, a), "a copy"
    np.testing.assert_array_equal(a.get(), WHOLE)


@pytest.mark.parametrize("name", NAMES)
def test_transpose_of_a_transpose_is_the_array(name):
    a = dist(WHOLE, name)
    with no_gather():
        back = a.T.T
    np.testing.assert_array_equal(back.get(), WHOLE)


def test_which_layouts_give_views():
    # Rule: 1-d grids (rows, columns, cyclic, unstructured, replicated) keep their blocks: views;
    # 2 x 2 grids (blocks, block-cyclic, padded) reorder them: copies.
    views = {n for n in NAMES if keeps_rank_order(LAYOUTS[n](SHAPE).grid_shape, (1, 0))}
    assert views == {"row blocks", "column blocks", "irregular rows", "cyclic rows", "unstructured rows", "replicated"}


@pytest.mark.parametrize("name", ["row blocks", "cyclic rows", "unstructured rows", "irregular rows"])
def test_a_view_writes_through_both_ways(name):
    # Rule: as NumPy's: a.T[0, 1] = 5 writes a[1, 0]; a write to a shows in a.T; t += 1 writes a.
    a = dist(WHOLE, name)
    t = a.T
    t[0, 1] = 5
    assert a[1, 0] == 5
    a[4, 2] = -8
    assert t[2, 4] == -8
    t += 1
    want = WHOLE.copy()
    want[1, 0], want[4, 2] = 5, -8
    np.testing.assert_array_equal(a.get(), want + 1)
    np.testing.assert_array_equal(t.get(), (want + 1).T)


@pytest.mark.parametrize("name", ["2 x 2 blocks", "2 x 2 block-cyclic", "padded rows"])
def test_a_copy_does_not_write_back(name):
    # Rule: where the transpose must move blocks between ranks it is a copy (documented): writes stay in it.
    a = dist(WHOLE, name)
    t = a.T
    t[0, 1] = 5
    a[4, 2] = -8
    assert a[1, 0] == WHOLE[1, 0] and t[2, 4] == WHOLE[4, 2]


def test_transposed_padded_layout_keeps_its_padding_in_a_view_and_exchanges_halos():
    # Rule: a padded (periodic) 1-d grid transposes as a view: the padding dictionaries move with
    # their axis, and halo_exchange on the transpose fills the padding of the same memory.
    x = np.arange(10 * 4, dtype=np.float64).reshape(10, 4)
    lay = layout.periodic(x.shape, (P, 1), halo=(1, 0))
    a = gdap.distribute(x, lay)
    t = a.T
    assert shares(t, a)
    assert t.layout.dim_data(1)[1]["padding"] == a.layout.dim_data(1)[0]["padding"]
    np.testing.assert_array_equal(t.get(), x.T)
    t.halo_exchange()
    b = gdap.distribute(x, lay).halo_exchange()
    for r in range(P):
        np.testing.assert_array_equal(a.local_view(r), b.local_view(r))


@pytest.mark.parametrize("grid", [(2, 1, 2), (2, 2, 1), (1, 2, 2), (4, 1, 1)])
@pytest.mark.parametrize("perm", [(2, 1, 0), (1, 0, 2), (0, 2, 1), (2, 0, 1), (1, 2, 0)])
def test_3d_permutations_on_3d_grids(grid, perm):
    x = np.arange(4 * 5 * 6, dtype=np.int32).reshape(4, 5, 6)
    a = gdap.distribute(x, layout.block(x.shape, grid))
    with no_gather():
        t = a.transpose(perm)
    np.testing.assert_array_equal(t.get(), x.transpose(perm))
    assert shares(t, a) == keeps_rank_order(grid, perm)
    assert t.dtype == np.int32


def test_3d_block_cyclic_moveaxis():
    x = np.arange(4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5)
    a = gdap.distribute(x, layout.block_cyclic(x.shape, (2, 2, 1), 2))
    np.testing.assert_array_equal(np.moveaxis(a, [0, 1], [-1, 0]).get(), np.moveaxis(x, [0, 1], [-1, 0]))


@pytest.mark.parametrize("name", NAMES)
def test_reductions_over_a_transpose(name):
    a = dist(WHOLE, name)
    t = a.T
    x = WHOLE.T
    np.testing.assert_allclose(t.sum(axis=0).get(), x.sum(axis=0))
    np.testing.assert_allclose(t.max(axis=1).get(), x.max(axis=1))
    np.testing.assert_array_equal(t.argmin(axis=0).get(), x.argmin(axis=0))
    assert t.argmax() == x.argmax()
    np.testing.assert_allclose(t.mean(), x.mean())
    np.testing.assert_allclose(np.linalg.norm(t), np.linalg.norm(x))
    np.testing.assert_allclose(t.std(axis=1).get(), x.std(axis=1))


@pytest.mark.parametrize("name", ["2 x 2 blocks", "row blocks", "2 x 2 block-cyclic", "padded rows", "cyclic rows"])
def test_chains(name):
    # Rule: (a.T @ b).T and a.T + a as NumPy's; a.T + a needs one layout (a square 2 x 2 grid's transpose
    # has it; else reshard, as for any two layouts).
    a = dist(SQUARE, name)
    b = dist(SQUARE[::-1].copy(), name)
    np.testing.assert_allclose((a.T @ b).T.get(), (SQUARE.T @ SQUARE[::-1]).T)
    np.testing.assert_allclose((a @ b.T).get(), SQUARE @ SQUARE[::-1].T)
    t = a.T
    if same_layout(t.layout, a.layout):
        total = t + a
    else:
        with pytest.raises(gdap.InvalidArgumentError, match="layouts differ"):
            t + a
        total = t + a.reshard(t.layout)
    np.testing.assert_array_equal(total.get(), SQUARE.T + SQUARE)
    np.testing.assert_array_equal((2 * a.T - 1).T.get(), 2 * SQUARE - 1)


def test_a_square_2x2_grid_transpose_has_the_arrays_layout():
    a = dist(SQUARE, "2 x 2 blocks")
    assert same_layout(a.T.layout, a.layout)


def test_pending_reduction_stays_pending_in_a_view_and_is_settled_for_a_copy():
    parts = [np.full(SQUARE.shape, float(r + 1)) for r in range(P)]
    rep = layout.replicated(SQUARE.shape, P)
    p = gdap.GlobalArray.from_sections([x.copy() for x in parts], rep, pending="sum")
    t = p.T
    assert t.pending == "sum"
    np.testing.assert_array_equal(t.get(), np.full((6, 6), 10.0))
    grid = layout.block(SQUARE.shape, (2, 2))
    q = gdap.GlobalArray.from_sections([np.full(grid.local_shape(r), 1.0) for r in range(P)], grid, pending="sum")
    np.testing.assert_array_equal(q.T.get(), np.ones((6, 6)))


@pytest.mark.parametrize("bad, match", [
    (lambda a: a.transpose(0, 0), "repeat"),
    (lambda a: a.transpose(0, 2), "axis 2 is out of range"),
    (lambda a: a.transpose(0), "do not match"),
    (lambda a: a.swapaxes(0, -3), "axis2: axis -3"),
    (lambda a: np.moveaxis(a, [0, 1], [0]), "as many axes"),
    (lambda a: a.transpose("x", 1), "axes"),
])
def test_bad_axes_are_refused_by_name(bad, match):
    a = dist(WHOLE, "2 x 2 blocks")
    with pytest.raises((gdap.InvalidArgumentError, TypeError), match=match):
        bad(a)
    np.testing.assert_array_equal(a.get(), WHOLE)


def test_mT_of_a_1d_array_is_refused():
    with pytest.raises(gdap.InvalidArgumentError, match="at least 2"):
        gdap.distribute(np.arange(4.0), layout.block(4, P)).mT


# -- reshapes -------------------------------------------------------------------------------------------

RESHAPES = [(42,), (-1,), (-2, 21), (6, 7), (3, 14), (14, 3), (2, 3, 7), (7, 2, 3), (42, 1), (1, 42), (7, 6, 1), (-1, 2)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", RESHAPES, ids=[str(s) for s in RESHAPES])
def test_reshape_is_numpys_on_every_layout_without_a_gather(name, shape):
    a = dist(WHOLE, name)
    with no_gather():
        r = a.reshape(shape)
    np.testing.assert_array_equal(r.get(), WHOLE.reshape(shape))
    np.testing.assert_array_equal(a.get(), WHOLE)


@pytest.mark.parametrize("name", NAMES)
def test_np_reshape_ravel_flatten(name):
    a = dist(WHOLE, name)
    with no_gather():
        got = [np.reshape(a, (3, -1)), np.reshape(a, shape=(21, 2)), a.reshape(2, 21), np.ravel(a), a.ravel(),
               a.flatten(), a.T.reshape(-1), a.T.ravel(), a.reshape((6, 7), order="F")]
    want = [WHOLE.reshape(3, -1), WHOLE.reshape(21, 2), WHOLE.reshape(2, 21), np.ravel(WHOLE), WHOLE.ravel(),
            WHOLE.flatten(), WHOLE.T.reshape(-1), WHOLE.T.ravel(), WHOLE.reshape((6, 7), order="F")]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.get(), w)


def test_flattening_trailing_undistributed_axes_is_a_view_that_writes_through():
    # Rule: a solver's (N, a, b) -> (N, a * b) on row blocks (padding and periodic too) moves nothing.
    x = np.arange(8 * 3 * 4, dtype=np.float64).reshape(8, 3, 4)
    for lay in (layout.block(x.shape, P), layout.padded(x.shape, (P, 1, 1), (1, 0, 0)),
                layout.periodic((10, 3, 4), (P, 1, 1), (1, 0, 0)), layout.cyclic(x.shape, (P, 1, 1))):
        data = x if lay.shape == x.shape else np.arange(10 * 3 * 4, dtype=np.float64).reshape(10, 3, 4)
        a = gdap.distribute(data, lay)
        with no_gather(moves=False):
            f = a.reshape(data.shape[0], -1)
        assert shares(f, a)
        np.testing.assert_array_equal(f.get(), data.reshape(data.shape[0], -1))
        f[1, 5] = 99
        assert a[1, 1, 1] == 99


def test_splitting_an_undistributed_axis_is_a_view():
    x = np.arange(8 * 12, dtype=np.float64).reshape(8, 12)
    a = gdap.distribute(x, layout.block(x.shape, P))
    with no_gather(moves=False):
        s = a.reshape(8, 3, 4)
    assert shares(s, a) and s.layout.grid_shape == (P, 1, 1)
    np.testing.assert_array_equal(s.get(), x.reshape(8, 3, 4))


def test_row_blocks_to_rows_of_another_width():
    # Rule: (8, 6) row blocks of 2 rows (12 elements) -> (16, 3) or (12, 4) is local (a view: rank 1's
    # elements 12..23 are whole rows of either); -> (6, 8) is not (12 is no multiple of 8): a
    # redistribution, a copy in row blocks of (6, 8).
    x = np.arange(48, dtype=np.float64).reshape(8, 6)
    a = gdap.distribute(x, layout.block(x.shape, P))
    with no_gather(moves=False):
        v = a.reshape(16, 3)
        u = a.reshape(12, 4)
    assert shares(v, a) and shares(u, a)
    np.testing.assert_array_equal(u.get(), x.reshape(12, 4))
    w = a.reshape(6, 8)
    assert shares_none(w, a) and w.layout == layout.block((6, 8), P)
    np.testing.assert_array_equal(w.get(), x.reshape(6, 8))
    y = np.arange(60, dtype=np.float64).reshape(12, 5)
    b = gdap.distribute(y, layout.block(y.shape, P))
    np.testing.assert_array_equal(b.reshape(10, 6).get(), y.reshape(10, 6))


def test_reshape_of_a_transpose_copies_on_every_rank_and_copy_flags():
    a = dist(WHOLE, "row blocks")
    r = a.T.reshape(-1)
    assert shares_none(r, a)
    assert shares(a.ravel(), a) and shares_none(a.flatten(), a) and shares_none(a.reshape(-1, copy=True), a)
    with pytest.raises(gdap.InvalidArgumentError, match="copy=False"):
        a.T.reshape(-1, copy=False)
    with pytest.raises(gdap.InvalidArgumentError, match="copy=False"):
        dist(WHOLE, "2 x 2 blocks").reshape(-1, copy=False)
    assert shares(a.reshape(42, copy=False), a)
    f = a.reshape((7, 6, 1), order="F", copy=False)
    assert shares(f, a)
    np.testing.assert_array_equal(f.get(), WHOLE.reshape((7, 6, 1), order="F"))
    with pytest.raises(gdap.InvalidArgumentError, match="copy=False"):
        a.reshape((6, 7), order="F", copy=False)  # NumPy's refuses too: WHOLE is C-contiguous
    with pytest.raises(gdap.InvalidArgumentError, match="order='F', copy=False"):
        dist(WHOLE, "2 x 2 blocks").reshape((6, 7), order="F", copy=False)


@pytest.mark.parametrize("name", NAMES)
def test_reshape_order_f_that_reads_as_order_c_is_a_view(name):
    # Rule: order 'F' of the same shape, or one that only adds or drops length-1 axes, is order 'C''s
    # reshape (NumPy's values alike): a view wherever that one is, without the two transposes (on a 2 x 2
    # grid each moved every block: before, two copies, and copy=False was refused).
    a = dist(WHOLE, name)
    with no_gather(moves=False):
        same_shape = a.reshape(SHAPE, order="F")
    unit_axes = a.reshape((1, 7, 6, 1), order="F")  # order 'C''s: moves where that one does (cyclic rows)
    np.testing.assert_array_equal(same_shape.get(), WHOLE.reshape(SHAPE, order="F"))
    np.testing.assert_array_equal(unit_axes.get(), WHOLE.reshape((1, 7, 6, 1), order="F"))
    assert shares(same_shape, a) and same_layout(same_shape.layout, a.layout)
    assert shares(a.reshape(SHAPE, order="F", copy=False), a)
    assert shares(unit_axes, a) == shares(a.reshape((1, 7, 6, 1)), a)
    same_shape[0, 1] = 99.0
    assert a[0, 1] == 99.0


def test_reshape_keeps_a_pending_reduction_where_local():
    grid = layout.block((8, 6), P)
    p = gdap.GlobalArray.from_sections([np.full(grid.local_shape(r), 2.0) for r in range(P)],
                                       layout.replicated((8, 6), P) if False else grid, pending="max")
    r = p.reshape(16, 3)
    assert r.pending == "max"
    np.testing.assert_array_equal(r.get(), np.full((16, 3), 2.0))


@pytest.mark.parametrize("shape, match", [
    ((5, -1), "cannot reshape array of size 42 into shape"),
    ((-1, -1), "one unknown dimension"),
    ((43,), "cannot reshape"),
    ((-2, -1), "one unknown dimension"),
])
def test_bad_shapes_are_refused_as_numpy_does(shape, match):
    a = dist(WHOLE, "row blocks")
    with pytest.raises(ValueError, match=match):
        a.reshape(shape)
    with pytest.raises(ValueError):
        WHOLE.reshape(shape)


@pytest.mark.parametrize("order", ["A", "K", "X"])
def test_other_orders_are_refused_by_name(order):
    a = dist(WHOLE, "row blocks")
    with pytest.raises(gdap.UnsupportedError, match=r"^reshape\(order='%s'\)" % order):
        a.reshape(-1, order=order)
    if order != "K":  # ravel and flatten take 'K' (review s16 #5)
        with pytest.raises(gdap.UnsupportedError, match=r"^ravel\(order='%s'\)" % order):
            a.ravel(order)
        with pytest.raises(gdap.UnsupportedError, match=r"^flatten\(order='%s'\)" % order):
            a.flatten(order)


def test_reshape_to_0d_is_refused_with_the_way_round():
    a = gdap.distribute(np.array([[3.0]]), layout.block((1, 1), P))
    with pytest.raises(gdap.UnsupportedError, match="0-d"):
        a.reshape(())


def test_size_0_reshape():
    a = gdap.distribute(np.zeros((0, 6)), layout.block((0, 6), P))
    assert a.reshape(3, 0, 2).shape == (3, 0, 2) and a.T.shape == (6, 0)
    assert a.reshape(-1, 3).get().shape == (0, 3)


def test_a_reshape_is_a_view_only_where_numpys_is():
    # Review s15 #2: with one column a rank, each transposed section (1 x 2) reshaped alone without a
    # copy, so a.T.ravel() and a.ravel('F') were views where NumPy's are copies: writes changed a.
    x = np.arange(2 * P, dtype=np.float64).reshape(2, P)
    a = gdap.distribute(x, layout.block(x.shape, (1, P)))
    r = a.T.ravel()
    r[1] = 100
    f = a.ravel(order="F")
    f[0] = -5
    np.testing.assert_array_equal(a.get(), x)
    np.testing.assert_array_equal(r.get()[[0, 2]], x.T.ravel()[[0, 2]])
    assert shares_none(r, a) and shares_none(f, a)
    with pytest.raises(gdap.InvalidArgumentError, match="copy=False"):
        a.T.reshape(-1, copy=False)
    y = np.arange(3 * 4 * P, dtype=np.float64).reshape(3, 4, P)
    b = gdap.distribute(y, layout.block(y.shape, (1, 1, P)))
    t = b.T.reshape(P, 12)
    t[0, 1] = 7
    np.testing.assert_array_equal(b.get(), y)
    np.testing.assert_array_equal(t.get()[1:], y.T.reshape(P, 12)[1:])
    # what is a view in NumPy stays one: row blocks flattened, a transpose's split axis
    rows = gdap.distribute(x.T.copy(), layout.block((P, 2), P))
    assert shares(rows.reshape(-1), rows) and shares(rows.T.reshape(2, P, 1), rows)


@pytest.mark.parametrize("shape", [(0, -1), (-1, 0), (0, -1, 2), (3, -1, 0), (0, 0, -1)])
def test_size_0_reshape_with_an_unknown_extent_is_refused_as_numpys(shape):
    # Review s15 #3: gdap inferred 0 for the -1 where NumPy cannot tell the extent and refuses.
    z = np.zeros((0, 6))
    with pytest.raises(ValueError):
        z.reshape(shape)
    with pytest.raises(gdap.InvalidArgumentError, match="cannot reshape array of size 0"):
        gdap.distribute(z, layout.block(z.shape, P)).reshape(shape)


def test_a_0d_integer_array_is_a_shape():
    # Review s15 #5: operator.index, as NumPy's reshape reads it.
    a = dist(WHOLE, "row blocks")
    assert a.reshape(np.array(42)).shape == (42,) and np.reshape(a, np.array(42)).shape == (42,)
    np.testing.assert_array_equal(a.reshape(np.array(42)).get(), WHOLE.reshape(42))
    with pytest.raises(TypeError, match="integer"):
        a.reshape(np.array(42.0))


def test_np_copyto_into_a_global_array_is_a_distributed_assignment():
    # Review s15 #6: NumPy's copyto ran on a gathered copy and the write was lost.
    a = dist(SQUARE, "row blocks")
    with no_gather(moves=True):
        np.copyto(a, a.T)
    np.testing.assert_array_equal(a.get(), SQUARE.T)
    b = dist(SQUARE * 2, "2 x 2 blocks")
    np.copyto(a, b)
    np.testing.assert_array_equal(a.get(), SQUARE * 2)
    np.copyto(a, 3)
    np.testing.assert_array_equal(a.get(), np.full_like(SQUARE, 3))
    ints = gdap.distribute(np.arange(36).reshape(6, 6), layout.block((6, 6), P))
    with pytest.raises(TypeError, match="same_kind"):
        np.copyto(ints, b)  # float into int: NumPy refuses the same_kind cast too
    np.copyto(ints, b, casting="unsafe")
    np.testing.assert_array_equal(ints.get(), (SQUARE * 2).astype(int))
    with pytest.raises(TypeError, match="where"):
        np.copyto(a, 0.0, where=SQUARE > 2)
    out = np.zeros((6, 6))
    with pytest.warns(gdap.GatherWarning):
        np.copyto(out, b)  # into a NumPy array: NumPy's own, on the gathered source
    np.testing.assert_array_equal(out, SQUARE * 2)


@pytest.mark.parametrize("call", [lambda a: np.put(a, [0, 1], 9.0), lambda a: np.place(a, np.ones(a.shape, bool), 9.0),
                                  lambda a: np.putmask(a, np.ones(a.shape, bool), 9.0),
                                  lambda a: np.fill_diagonal(a, 9.0),
                                  lambda a: np.put_along_axis(a, np.zeros((6, 1), int), 9.0, axis=1)],
                         ids=["put", "place", "putmask", "fill_diagonal", "put_along_axis"])
def test_numpy_functions_that_write_their_first_argument_are_refused(call):
    # Review s15 #6: they gathered and wrote the gathered copy, silently a no-op on the GlobalArray.
    a = dist(SQUARE, "row blocks")
    with pytest.raises(TypeError, match="writes into its first argument"):
        call(a)
    np.testing.assert_array_equal(a.get(), SQUARE)


# -- devices ---------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_transpose_view_writes_through_and_reshape():
    cupy = _gpus(2)
    with cupy.cuda.Device(0):
        x = cupy.asarray(WHOLE)
    a = gdap.distribute(x, layout.block(SHAPE, 2))
    t = a.T
    assert all(isinstance(t.local_view(r), cupy.ndarray) for r in range(2))
    assert t.local_view(1).data.ptr == a.local_view(1).data.ptr
    np.testing.assert_array_equal(t.get(), WHOLE.T)
    t[0, 1] = 5
    assert a[1, 0] == 5
    want = WHOLE.copy()
    want[1, 0] = 5
    np.testing.assert_allclose(t.sum(axis=0).get(), want.T.sum(axis=0))
    np.testing.assert_array_equal(a.reshape(-1).get(), want.ravel())
    np.testing.assert_array_equal(a.reshape(6, 7).get(), want.reshape(6, 7))
    np.testing.assert_array_equal(t.reshape(-1).get(), want.T.ravel())


@pytest.mark.gpu
def test_gpu_2x2_grid_transpose_is_a_copy_and_chains():
    cupy = _gpus(4)
    with cupy.cuda.Device(0):
        x = cupy.asarray(SQUARE)
    a = gdap.distribute(x, layout.block(SQUARE.shape, (2, 2)))
    t = a.T
    assert all(t.local_view(r).data.ptr != a.local_view(r).data.ptr for r in range(4))
    np.testing.assert_array_equal(t.get(), SQUARE.T)
    np.testing.assert_array_equal((t + a).get(), SQUARE.T + SQUARE)
    np.testing.assert_allclose((a.T @ a).T.get(), (SQUARE.T @ SQUARE).T)


# -- review s16: agreed calls, replicated and even reshapes, NEP 50 copyto, NumPy's argument rules --------

def _spmd(nranks, body):
    """body(r, a) on an in-process group of nranks ranks, a = an (8, 6) array in a 2 x 2 grid (nranks
    4) or row blocks; each rank's gdap.Error (None where none), all within seconds (no timeout)."""
    import time
    from conftest import rank_errors
    comms = gdap.group(nranks)
    for c in comms:
        c.set_timeout(20)
    x = np.arange(48.0).reshape(8, 6)
    lay = layout.block(x.shape, (2, 2) if nranks == 4 else nranks)

    def rank(r):
        body(r, gdap.distribute(x if r == 0 else None, lay, comm=comms[r], dtype=np.float64))
    t0 = time.monotonic()
    errors = rank_errors(nranks, rank)
    assert time.monotonic() - t0 < 10, "a rank waited for the timeout"
    return errors


@pytest.mark.parametrize("call, names", [
    # p22: copy=False on rank 0 only (it refused after the barrier; the others timed out in the move)
    (lambda r, a: a.reshape(6, 8, copy=False if r == 0 else None), "copy=False) on rank 0; "),
    # p21: an identity transpose (a view) on rank 0, a.T (a move) on the others: they timed out
    (lambda r, a: a.transpose(0, 1) if r == 0 else a.T, "transpose(axes=(0, 1)) on rank 0"),
    # p2: equal roles, different permutations: different global shapes, no error at all
    (lambda r, a: a.reshape(4, 12) if r % 2 else a.reshape(12, 4), "reshape((12, 4), order='C', copy=None) on "
                                                                   "ranks 0, 2"),
    (lambda r, a: a.ravel(order="F" if r == 3 else "C"), "order='F', copy=None) on rank 3"),
])
def test_spmd_ranks_that_call_differently_all_refuse_naming_each_rank(call, names):
    # Review s16 #1: the ranks' arguments were never compared (hangs, or different shapes per rank).
    out = [None] * 4
    errors = _spmd(4, lambda r, a: out.__setitem__(r, call(r, a).shape))
    for e in errors:
        assert isinstance(e, gdap.InvalidArgumentError) and "calls on one GlobalArray differ" in str(e), (errors, out)
        assert names in str(e), e


def test_spmd_transposes_and_reshapes_agree_in_one_collective(monkeypatch):
    # Review s16 #1: one all-reduce per call, in place of the barrier (a view transpose had no agreement).
    import collections
    import threading
    from gdap import _agree, _global, _reshape
    counts = collections.Counter()

    def counted(name, call):
        def counting(*args, **kwargs):
            counts[threading.current_thread().name, name] += 1
            return call(*args, **kwargs)
        return counting
    monkeypatch.setattr(_agree, "_allreduce", counted("allreduce", _agree._allreduce))
    monkeypatch.setattr(_global, "_barrier", counted("barrier", _global._barrier))
    monkeypatch.setattr(_reshape, "_every_rank", counted("view answer", _reshape._every_rank))
    made = [None] * 2
    kinds = ("allreduce", "barrier", "view answer")

    def body(r, a):
        me = threading.current_thread().name
        before = [counts[me, k] for k in kinds]  # distribute's own agreement aside
        shapes = (a.T.shape, a.reshape(2, 24).shape, np.shares_memory(a.reshape(2, 24).local_view(), a.local_view()))
        made[r] = shapes, tuple(counts[me, k] - b for k, b in zip(kinds, before))
    assert _spmd(2, body) == [None, None]
    # One all-reduce a call, which also carries the view-or-copy answer: no barrier, no second round.
    assert made == [(((6, 8), (2, 24), True), (3, 0, 0))] * 2, made


def test_a_replicated_array_reshapes_as_a_view_in_a_replicated_layout():
    # Review s16 #3: it was redistributed into a row-block copy, writes through it lost.
    x = np.arange(36.0).reshape(6, 6)
    a = gdap.distribute(x, layout.replicated(x.shape, P))
    with no_gather(moves=False):
        r = a.reshape(12, 3)
        t = a.T.reshape(-1)
    assert r.layout == layout.replicated((12, 3), P) and shares(r, a)
    np.testing.assert_array_equal(r.get(), x.reshape(12, 3))
    np.testing.assert_array_equal(t.get(), x.T.reshape(-1))  # a copy (NumPy's is one), in C order
    r[5, 2] = -1  # x[2, 5]
    assert a[2, 5] == -1


@pytest.mark.parametrize("shape, grid, to", [
    ((8, 8), (2, 2), (1, -1)), ((8, 8), (2, 2), (2, -1)), ((8, 8), (2, 2), (1, 2, -1)), ((2, 32), (1, 4), (-1,)),
    ((2, 32), (1, 4), (4, 16)),
])
def test_a_redistributing_reshape_spreads_the_elements_over_every_rank(shape, grid, to):
    # Review s16 #2: (1, n) landed whole on rank 0 and (2, n) on ranks 0 and 1 (row blocks of the new
    # shape), and column blocks of (2, n) were first moved onto 2 ranks to be flattened.
    x = np.arange(64.0).reshape(shape)
    a = gdap.distribute(x, layout.block(shape, grid))
    moved = []
    reshard = gdap.GlobalArray.reshard

    def watched(self, lay):
        moved.append([lay.local_shape(q) for q in range(P)])
        return reshard(self, lay)
    gdap.GlobalArray.reshard = watched
    try:
        r = a.reshape(to)
    finally:
        gdap.GlobalArray.reshard = reshard
    assert [r.local_view(q).size for q in range(P)] == [16] * 4
    assert all(math.prod(s) == 16 for step in moved for s in step), moved
    np.testing.assert_array_equal(r.get(), x.reshape(to))


def test_a_grid_whose_sections_are_flat_runs_reshapes_as_a_view():
    # Review s16 #2: a 2 x 2 grid of (2, 8) holds a quarter of the C-order elements a rank: ravel
    # reshapes each section (before: a move onto 2 ranks and a copy), and back again.
    x = np.arange(16.0).reshape(2, 8)
    a = gdap.distribute(x, layout.block(x.shape, (2, 2)))
    with no_gather(moves=False):
        r = a.ravel()
        back = r.reshape(2, 8)
    assert shares(r, a) and back.layout == a.layout
    r[13] = -1  # x[1, 5]
    assert a[1, 5] == -1


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint64, np.int8, np.float32])
def test_copyto_takes_a_python_int_by_value_as_numpy_2(dtype):
    # Review s16 #4: np.copyto(a, 5) raised TypeError for unsigned a (int64 cannot cast to uint8).
    a = gdap.distribute(np.zeros(8, dtype), layout.block((8,), P))
    np.copyto(a, 5)
    np.testing.assert_array_equal(a.get(), np.full(8, 5, dtype))


def test_copyto_refuses_python_scalars_as_numpy_2():
    a = gdap.distribute(np.zeros(8, np.uint8), layout.block((8,), P))
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        np.copyto(a, 300)
    with pytest.raises(TypeError, match="float 2.0"):
        np.copyto(a, 2.0)
    np.copyto(a, 2.0, casting="unsafe")
    with pytest.raises(TypeError, match="complex"):
        np.copyto(gdap.distribute(np.zeros(8), layout.block((8,), P)), 1j)
    np.testing.assert_array_equal(a.get(), np.full(8, 2, np.uint8))


@pytest.mark.parametrize("order, like", [("c", "C"), ("f", "F"), (None, "C"), ("K", "C"), ("k", "C")])
def test_orders_numpy_takes_are_taken(order, like):
    # Review s16 #5: 'c', 'f' and None were refused, and ravel's and flatten's 'K'.
    a = dist(WHOLE, "row blocks")
    np.testing.assert_array_equal(a.ravel(order).get(), WHOLE.ravel(like))
    np.testing.assert_array_equal(a.flatten(order).get(), WHOLE.flatten(like))
    if order not in ("K", "k"):
        np.testing.assert_array_equal(a.reshape(6, 7, order=order).get(), WHOLE.reshape(6, 7, order=like))


@pytest.mark.parametrize("bad", [lambda a: a.transpose(0, 2), lambda a: a.swapaxes(0, -3),
                                 lambda a: np.moveaxis(a, 2, 0)])
def test_an_axis_out_of_range_is_numpys_axis_error(bad):
    # Review s16 #6: InvalidArgumentError, a ValueError but not the IndexError NumPy's AxisError also is.
    axis_error = getattr(getattr(np, "exceptions", np), "AxisError")
    with pytest.raises(axis_error) as caught:
        bad(dist(WHOLE, "2 x 2 blocks"))
    assert isinstance(caught.value, IndexError) and isinstance(caught.value, gdap.InvalidArgumentError)


@pytest.mark.parametrize("bad", [lambda a: a.transpose((1.0, 0)), lambda a: a.reshape(), lambda a: a.transpose(1.5)])
def test_no_integer_axes_or_no_shape_is_a_type_error(bad):
    # Review s16 #6: ValueError where NumPy raises TypeError.
    with pytest.raises(TypeError):
        bad(dist(WHOLE, "row blocks"))


def test_a_size_0_reshape_is_a_view_even_with_copy_false():
    # Review s16 #7: refused as "cannot become ... without moving elements between ranks".
    z = np.zeros((0, 6))
    a = gdap.distribute(z, layout.block(z.shape, P))
    r = a.reshape(6, 0, copy=False)
    assert r.shape == (6, 0) and r.get().shape == (6, 0)


@pytest.mark.parametrize("lay, dtype, names", [
    (lambda r, x: layout.block(x.shape, 2) if r == 0 else layout.cyclic(x.shape, (2, 1)), lambda r: np.float64,
     "layout 1 on rank 0; layout 2 on rank 1"),
    (lambda r, x: layout.block(x.shape, 2), lambda r: np.float64 if r == 0 else np.float32,
     "float64 on rank 0; float32 on rank 1"),
    (lambda r, x: layout.block(x.shape if r == 0 else x.shape[::-1], 2), lambda r: np.float64,
     "(8, 6) on rank 0; (6, 8) on rank 1"),
])
def test_spmd_distribute_names_each_ranks_differing_layout_dtype_or_shape(lay, dtype, names):
    # Review s16 #9: scatter never compared them ("the ranks' plans are of different redistributions").
    from conftest import rank_errors
    comms = gdap.group(2)
    x = np.arange(48.0).reshape(8, 6)
    errors = rank_errors(2, lambda r: gdap.distribute(x if r == 0 else None, lay(r, x), comm=comms[r], dtype=dtype(r)))
    for e in errors:
        assert isinstance(e, gdap.InvalidArgumentError) and names in str(e), errors

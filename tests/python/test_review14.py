"""Review 14's findings on the element-wise features, single controller on the host (SPMD over MPI:
review14_mpi_ranks.py through test_review14_mpi). A periodic layout's edge ranks own their boundary
padding (DAP 0.10): element-wise results, in-place writes, masked assignment and var/std/argmin/
argmax/any/all must count those cells, as NumPy does on the gathered array. a[1] = v drops v's
leading length-1 axes as NumPy's assignment does; where=np.True_ is where=True."""
import numpy as np
import pytest

import gdap
from gdap import layout

W = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
PERIODIC = {
    "padded periodic 1-d": lambda shape: layout.padded(shape, (4,), (1,), periodic=True),
    "periodic 1-d": lambda shape: layout.periodic(shape, (4,), 1),
    "periodic 2-d": lambda shape: layout.periodic(shape, (2, 2), 1),
    "periodic rows, halo 2": lambda shape: layout.padded(shape, (2, 2), (2, 0), periodic=[True, False]),
}
SHAPES = {"padded periodic 1-d": (8,), "periodic 1-d": (11,), "periodic 2-d": (7, 6), "periodic rows, halo 2": (9, 5)}


def gathered(x):
    """A GlobalArray's elements (a reduction to 0-d is a scalar already)."""
    return x.get() if isinstance(x, gdap.GlobalArray) else x


def values(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).integers(-4, 10, size=shape).astype(dtype)


@pytest.fixture(params=sorted(PERIODIC))
def periodic_case(request):
    shape = SHAPES[request.param]
    return values(shape), PERIODIC[request.param](shape)


def test_the_edge_ranks_own_their_boundary_cells():
    """The premise: padding (1, 1) on rank 0, yet its first run starts at local 0 (global 0 is owned)."""
    gm = layout.padded((8,), (4,), (1,), periodic=True)
    assert gm.dim_data(0)[0]["padding"] == (1, 1)
    assert list(gm.runs(0, 0)) == [(0, 3, 0)]
    assert list(gm.runs(3, 0)) == [(7, 1, 1)]


def test_elementwise_results_count_the_boundary_cells(periodic_case):
    host, gm = periodic_case
    a = gdap.distribute(host, gm)
    np.testing.assert_array_equal((a + 1).get(), host + 1)  # before: 0 at the edge cells
    np.testing.assert_array_equal(np.sqrt(abs(a)).get(), np.sqrt(abs(host)))
    np.testing.assert_array_equal(np.divmod(a, 3)[1].get(), np.divmod(host, 3)[1])
    np.testing.assert_array_equal(np.where(a > 2, a, -a).get(), np.where(host > 2, host, -host))
    np.testing.assert_array_equal(np.clip(a, 0, 5).get(), np.clip(host, 0, 5))


def test_in_place_writes_reach_the_boundary_cells(periodic_case):
    host, gm = periodic_case
    b = gdap.distribute(host, gm)
    b += 1  # before: the edge cells kept their values
    np.testing.assert_array_equal(b.get(), host + 1)
    c = gdap.distribute(host, gm)
    c[c > 2] = 0
    np.testing.assert_array_equal(c.get(), np.where(host > 2, 0, host))
    o = gdap.GlobalArray.zeros(gm)
    np.add(gdap.distribute(host, gm), 1, out=o)
    np.testing.assert_array_equal(o.get(), host + 1)
    n = gdap.distribute(np.where(host > 5, np.nan, host), gm)
    np.nan_to_num(n, copy=False, nan=-1.0)
    np.testing.assert_array_equal(n.get(), np.where(host > 5, -1.0, host))


def test_statistics_count_the_boundary_cells(periodic_case):
    host, gm = periodic_case
    a = gdap.distribute(host, gm)
    assert a.var() == pytest.approx(host.var())  # before: 5.949 for 6.609 on W
    assert a.std(ddof=1) == pytest.approx(host.std(ddof=1))
    assert a.argmin() == host.argmin() and a.argmax() == host.argmax()  # before: ValueError
    for axis in range(host.ndim):
        np.testing.assert_array_equal(gathered(a.argmax(axis=axis)), host.argmax(axis=axis))
        np.testing.assert_allclose(gathered(a.var(axis=axis)), host.var(axis=axis))
    first, last = np.ones(host.shape), np.zeros(host.shape)
    first.flat[0], last.flat[-1] = 0, 1
    assert not gdap.distribute(first, gm).all()  # before: True
    assert gdap.distribute(last, gm).any()  # before: False


def test_the_review_array_w():
    gm = layout.padded(W.shape, (4,), (1,), periodic=True)
    a = gdap.distribute(W, gm)
    np.testing.assert_array_equal((a + 1).get(), W + 1)
    assert a.var() == pytest.approx(6.609375)
    assert (a.argmin(), a.argmax()) == (1, 5)


def test_communication_padding_is_still_not_computed_on():
    """New arrays keep zero communication padding (halo_exchange fills it); in-place writes leave it."""
    gm = layout.padded((8,), (4,), (1,), periodic=True)
    a = gdap.distribute(W, gm)
    b = a + 1
    assert b.local_view(0)[3] == 0 and b.local_view(3)[0] == 0  # rank 0's upper and rank 3's lower halo
    a.local_view(0)[3] = 77.0
    a += 1
    assert a.local_view(0)[3] == 77.0
    b.halo_exchange()
    assert b.local_view(0)[3] == W[3] + 1  # the neighbour's owned cell
    assert b.local_view(0)[0] == W[6] + 1  # the boundary cell from the periodic image (interior 6)
    np.testing.assert_array_equal(b.get()[1:7], W[1:7] + 1)


def test_fuzz_every_layout_kind_against_numpy():
    rng = np.random.default_rng(14)
    kinds = {
        "block": lambda s: layout.block(s, (4,) + (1,) * (len(s) - 1)),
        "cyclic": lambda s: layout.cyclic(s, (4,) + (1,) * (len(s) - 1)),
        "block-cyclic": lambda s: layout.block_cyclic(s, (2,) * 2 + (1,) * (len(s) - 2), 2),
        "padded": lambda s: layout.padded(s, (2, 2) + (1,) * (len(s) - 2), 1),
        "padded periodic": lambda s: layout.padded(s, (2, 2) + (1,) * (len(s) - 2), (1, 1) + (0,) * (len(s) - 2),
                                                   periodic=True),
        "periodic": lambda s: layout.periodic(s, (4,) + (1,) * (len(s) - 1), (1,) + (0,) * (len(s) - 1)),
        "replicated": lambda s: layout.replicated(s, 4),
    }
    for shape in [(9, 6), (12, 5, 2)]:
        for name, make in kinds.items():
            host = rng.integers(-5, 9, size=shape).astype(np.float64)
            a = gdap.distribute(host, make(shape))
            tag = (shape, name)
            np.testing.assert_array_equal((a * 2 - 1).get(), host * 2 - 1, err_msg=str(tag))
            np.testing.assert_array_equal(np.maximum(a, a + 3).get(), np.maximum(host, host + 3), err_msg=str(tag))
            for axis in [None, 0, 1]:
                np.testing.assert_allclose(gathered(a.var(axis=axis)), host.var(axis=axis), err_msg=str(tag))
                np.testing.assert_array_equal(gathered(a.argmin(axis=axis)), host.argmin(axis=axis), err_msg=str(tag))
            assert a.any() == host.any() and (a > -5).all() == (host > -5).all(), tag
            c = gdap.distribute(host, make(shape))
            c[c > 1] = -9
            c += 2
            np.testing.assert_array_equal(c.get(), np.where(host > 1, -9, host) + 2, err_msg=str(tag))


def test_a_value_with_leading_length_1_axes_is_assigned_as_numpy_does():
    host = np.arange(12.0).reshape(3, 4)
    want = host.copy()
    want[1] = np.ones((1, 4))
    a = gdap.distribute(host, layout.block(host.shape, 4))
    a[1] = np.ones((1, 4))  # before: ValueError (shape (1, 4) into (4,))
    np.testing.assert_array_equal(a.get(), want)
    want[:] = np.full((1, 1, 4), 7.0)
    a[:] = np.full((1, 1, 4), 7.0)
    np.testing.assert_array_equal(a.get(), want)
    with pytest.raises(ValueError, match=r"shape \(2, 4\) cannot be broadcast to the selection's shape \(4,\)"):
        a[1] = np.ones((2, 4))  # a leading axis of length 2 is still refused, as NumPy's
    np.testing.assert_array_equal(a.get(), want)


@pytest.mark.parametrize("where", [np.True_, np.array(True), True])
def test_where_true_scalar_needs_no_out(where):
    host = np.arange(8.0)
    a = gdap.distribute(host, layout.block((8,), 4))
    np.testing.assert_array_equal(np.add(a, 1, where=where).get(), host + 1)  # before: TypeError for np.True_


def test_where_false_scalar_still_needs_out():
    a = gdap.distribute(np.arange(8.0), layout.block((8,), 4))
    with pytest.raises(TypeError, match="without out="):
        np.add(a, 1, where=np.False_)

"""GlobalArray's var, std, argmin, argmax, any, all and the dtypes the C reductions do not take
(bool, int16, uint16, float16, complex) in sum/prod/min/max/mean, in single-controller mode on the
host (four ranks of an in-process group), against NumPy on the whole array, in every layout the
GlobalArray tests use and along every axis. Before, var/std/argmin/argmax/any/all were not methods
(np.std(a) gathered the whole array to compute it) and float16, bool min/max, int16 min/max and
complex sums and means raised UnsupportedError from C. SPMD over MPI: reductions_more_mpi_ranks.py."""
import warnings

import numpy as np
import pytest

import gdap
from gdap import layout
from test_global import LAYOUTS, NAMES, P

SHAPE = (7, 6)  # the layouts of test_global.py are made for 7 rows
AXES = [None, 0, 1, -1, (0, 1), (1,)]
RNG = np.random.default_rng(14)


def data(dtype):
    """7 x 6 values of `dtype` with repeats (ties for argmin/argmax) and, for floats, a large offset
    (where a one-pass variance would cancel)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(SHAPE) < 0.5
    if dtype.kind in "iu":
        return RNG.integers(0, 5, SHAPE).astype(dtype)
    x = RNG.integers(0, 7, SHAPE) + RNG.random(SHAPE).round(1)
    if dtype.kind == "c":
        return (x + 1j * RNG.integers(0, 3, SHAPE)).astype(dtype)
    return (x + (1e4 if dtype != np.float16 else 0)).astype(dtype)


def whole(value):
    return value.get() if isinstance(value, gdap.GlobalArray) else value


def same(got, want, rtol):
    got = whole(got)
    assert np.asarray(got).dtype == np.asarray(want).dtype, (np.asarray(got).dtype, np.asarray(want).dtype)
    assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
    np.testing.assert_allclose(np.asarray(got, dtype=np.complex128), np.asarray(want, dtype=np.complex128),
                               rtol=rtol, atol=0)


TOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-5, np.dtype(np.complex64): 1e-5}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.bool_, np.complex128,
                                   np.complex64])
def test_var_and_std_are_numpys_on_every_layout_and_axis(name, dtype):
    x = data(dtype)
    a = gdap.distribute(x, LAYOUTS[name](SHAPE))
    tol = TOL.get(np.dtype(dtype), 1e-12)
    for axis in AXES:
        for ddof in (0, 1):
            same(a.var(axis=axis, ddof=ddof), x.var(axis=axis, ddof=ddof), tol)
            same(a.std(axis=axis, ddof=ddof), x.std(axis=axis, ddof=ddof), tol)
        same(a.var(axis=axis, keepdims=True), x.var(axis=axis, keepdims=True), tol)
    same(np.std(a, axis=0), np.std(x, axis=0), tol)  # NumPy calls the method: no gather


def test_var_is_two_pass_not_a_cancelling_one_pass():
    x = 1e9 + RNG.random(4000)  # E[x^2] - E[x]^2 in float64 loses every digit of a variance of 1/12
    a = gdap.distribute(x, layout.cyclic(x.shape, P))
    np.testing.assert_allclose(a.var(), x.var(), rtol=1e-6)
    np.testing.assert_allclose(a.std(ddof=1), x.std(ddof=1), rtol=1e-6)


def test_var_with_ddof_past_the_count_warns_as_numpy():
    x = data(np.float64)
    a = gdap.distribute(x, layout.block(SHAPE, P))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = a.var(axis=0, ddof=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(got.get(), x.var(axis=0, ddof=7))  # inf where the squares sum > 0


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int16, np.uint8, np.bool_, np.complex128])
def test_argmin_argmax_are_numpys_first_occurrence(name, dtype):
    x = data(dtype)
    a = gdap.distribute(x, LAYOUTS[name](SHAPE))
    for op in ("argmin", "argmax"):
        for axis in (None, 0, 1, -2):
            got, want = getattr(a, op)(axis=axis), getattr(x, op)(axis=axis)
            assert np.asarray(whole(got)).dtype == np.int64
            np.testing.assert_array_equal(whole(got), want, err_msg="%s axis=%s" % (op, axis))
        np.testing.assert_array_equal(whole(getattr(a, op)(axis=1, keepdims=True)), getattr(x, op)(axis=1, keepdims=True))
        np.testing.assert_array_equal(getattr(a, op)(keepdims=True), getattr(x, op)(keepdims=True))
    assert np.argmax(a) == x.argmax()


@pytest.mark.parametrize("name", NAMES)
def test_argmax_takes_the_first_nan_as_numpy(name):
    x = data(np.float64)
    x[5, 1] = x[2, 4] = x[6, 0] = np.nan  # several NaN, on different ranks in most layouts
    a = gdap.distribute(x, LAYOUTS[name](SHAPE))
    for op in ("argmin", "argmax"):
        assert getattr(a, op)() == getattr(x, op)() == 2 * 6 + 4
        for axis in (0, 1):
            np.testing.assert_array_equal(getattr(a, op)(axis=axis).get(), getattr(x, op)(axis=axis))


def test_argmax_ties_between_ranks_take_the_lowest_index():
    x = np.zeros((8, 3))
    x[[1, 6], 2] = 5.0  # rank 0 and rank 3 hold the tie in row blocks; in cyclic rows ranks 1 and 2
    for gmap in (layout.block(x.shape, P), layout.cyclic(x.shape, (P, 1)),
                 layout.unstructured(x.shape, [[7, 6], [5, 4], [3, 2], [1, 0]])):
        a = gdap.distribute(x, gmap)
        assert a.argmax() == 1 * 3 + 2 and a.argmin() == 0
        np.testing.assert_array_equal(a.argmax(axis=0).get(), [0, 0, 1])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_, np.complex64])
def test_any_all_are_numpys(name, dtype):
    x = data(dtype)
    x[2, :] = 0
    x[:, 3] = 1
    if x.dtype.kind == "f":
        x[4, 4] = np.nan  # NaN is nonzero, as in NumPy
    a = gdap.distribute(x, LAYOUTS[name](SHAPE))
    for op in ("any", "all"):
        for axis in AXES:
            got, want = getattr(a, op)(axis=axis), getattr(x, op)(axis=axis)
            assert np.asarray(whole(got)).dtype == np.bool_
            np.testing.assert_array_equal(whole(got), want, err_msg="%s axis=%s" % (op, axis))
        np.testing.assert_array_equal(whole(getattr(a, op)(axis=0, keepdims=True)), getattr(x, op)(axis=0, keepdims=True))
    assert np.all(a) == x.all() and np.any(a, axis=1).get().tolist() == x.any(axis=1).tolist()


def test_any_all_of_no_elements_are_numpys():
    x = np.zeros((0, 5))
    a = gdap.distribute(x, layout.block(x.shape, P))
    assert a.any() == np.False_ and a.all() == np.True_
    np.testing.assert_array_equal(a.all(axis=0).get(), x.all(axis=0))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.uint16, np.float16, np.complex64, np.complex128])
def test_sum_prod_min_max_mean_of_the_dtypes_c_does_not_take(name, dtype):
    x = data(dtype)
    a = gdap.distribute(x, LAYOUTS[name](SHAPE))
    tol = TOL.get(np.dtype(dtype), 1e-12)
    ops = ["sum", "mean"] + ([] if x.dtype.kind == "c" else ["prod", "min", "max"])
    for op in ops:
        for axis in (None, 0, 1, (0, 1)):  # float16 products overflow to inf, in NumPy's too
            got, want = getattr(a, op)(axis=axis), getattr(x, op)(axis=axis)
            same(got, want, tol if op not in ("min", "max") else 0)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_prod_min_max_are_refused_by_name(dtype):
    a = gdap.distribute(data(dtype), layout.block(SHAPE, P))
    for op in ("prod", "min", "max"):
        with pytest.raises(gdap.UnsupportedError, match="%s of a %s array.*a.real and a.imag" % (op, np.dtype(dtype))):
            getattr(a, op)()


def test_refusals_name_what_was_wrong():
    a = gdap.distribute(data(np.float64), layout.block(SHAPE, P))
    with pytest.raises(gdap.UnsupportedError, match="does not support out"):
        a.var(out=np.zeros(()))
    with pytest.raises(gdap.UnsupportedError, match="does not support out"):
        a.argmax(out=np.zeros((), np.int64))
    with pytest.raises(gdap.UnsupportedError, match="does not support where"):
        a.any(where=True)
    with pytest.raises(gdap.InvalidArgumentError, match="ddof must be a number"):
        a.std(ddof="1")
    with pytest.raises(gdap.UnsupportedError, match="dtype=int64"):
        a.var(dtype=np.int64)
    with pytest.raises(TypeError, match="argmax takes axis=None or one int"):
        a.argmax(axis=(0, 1))
    with pytest.raises(gdap.InvalidArgumentError, match="axis 2 is out of range"):
        a.argmin(axis=2)
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        gdap.distribute(np.zeros((0, 3)), layout.block((0, 3), P)).argmax(axis=0)


def test_pending_sum_is_performed_first():
    parts = [np.full(SHAPE, r, np.float64) for r in range(P)]  # the element: 0 + 1 + 2 + 3 = 6 everywhere
    parts[2][3, 4] = 20.0  # that element: 24, the maximum
    x = sum(parts)
    for op, want in (("argmax", x.argmax()), ("var", x.var()), ("all", x.all())):
        a = gdap.GlobalArray.from_sections(parts, layout.replicated(SHAPE, P), pending="sum")
        np.testing.assert_allclose(getattr(a, op)(), want)


@pytest.mark.parametrize("gmap", [layout.block((5, 6, 7), (2, 2, 1)), layout.block_cyclic((5, 6, 7), (1, 2, 2), 2),
                                  layout.padded((5, 6, 7), (2, 1, 2), (1, 0, 1))])
def test_three_axes_any_pair_of_them(gmap):
    x = RNG.integers(0, 4, (5, 6, 7)).astype(np.float64)
    a = gdap.distribute(x, gmap)
    for axis in (None, 0, 1, 2, (0, 2), (1, 2), (0, 1)):
        for keepdims in (False, True):
            for op in ("var", "std", "any", "all"):
                same(getattr(a, op)(axis=axis, keepdims=keepdims), getattr(x, op)(axis=axis, keepdims=keepdims), 1e-12)
    for axis in (None, 0, 1, 2):
        for op in ("argmin", "argmax"):
            np.testing.assert_array_equal(whole(getattr(a, op)(axis=axis)), getattr(x, op)(axis=axis))

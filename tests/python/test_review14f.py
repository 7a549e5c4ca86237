"""Review 14f's findings on the NumPy-function layer (_functions.py), single controller on the host.
Each test names NumPy's answer on the gathered array and checks gdap gives it: the same value, the
same exception type, the same warning, or the GatherWarning the docs promise where gdap does not
compute the call distributed. Before this change: np.full_like(a, -0.0) lost the sign, a float16
np.dot overflowed to NaN, np.nanmean(dtype=int) truncated, a positional out= was written in a
gathered copy, np.clip ignored a conflicting min=, np.nanmax(v, axis=0) raised IndexError, and
np.dot of int matrices, np.prod of complex, np.size(a, (0, 1)) raised where NumPy answers."""
import os
import warnings

import numpy as np
import pytest

import gdap
from gdap import layout
from test_global import LAYOUTS
from test_ufuncs import no_gather

P = 4


def dist(x, name="row blocks"):
    return gdap.distribute(x, LAYOUTS[name](x.shape) if x.ndim == 2 else layout.block(x.shape, P))


def recorded(call):
    """call()'s result (gathered where a GlobalArray) and the categories of the warnings it raised."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = call()
    return (got.get() if isinstance(got, gdap.GlobalArray) else got), [w.category for w in seen]


# -- wrong answers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fill", [-0.0, complex(-0.0, -0.0)])
def test_full_like_keeps_the_sign_of_negative_zero(fill):
    """NumPy: np.full_like(x, -0.0) is all -0.0 (signbit set); the zero-allocation path dropped it."""
    x = np.arange(12.0).reshape(3, 4).astype(np.complex128 if isinstance(fill, complex) else np.float64)
    got = np.full_like(dist(x), fill).get()
    want = np.full_like(x, fill)
    assert got.tobytes() == want.tobytes()
    assert np.signbit(got.real).all() and (not isinstance(fill, complex) or np.signbit(got.imag).all())


@pytest.mark.parametrize("fn", [np.dot, np.vdot])
def test_float16_dot_accumulates_as_numpy(fn):
    """NumPy forms float16 products in float32: [300, 300] . [300, -300] is 0, not inf - inf = NaN."""
    h, k = np.array([300, 300, 2, 7], np.float16), np.array([300, -300, 3, 1], np.float16)
    got, seen = recorded(lambda: fn(dist(h), dist(k)))
    want = fn(h, k)
    assert got == want == 13.0 and np.asarray(got).dtype == want.dtype and seen == []


def test_nanmean_of_floats_with_an_integer_dtype_raises_as_numpy():
    x = np.array([[1.5, np.nan, 3.0, 4.0]] * 4)
    with pytest.raises(TypeError):
        np.nanmean(x, dtype=np.int64)
    for axis in (None, 1):
        with pytest.raises(TypeError, match="dtype must be inexact"):
            np.nanmean(dist(x), axis=axis, dtype=np.int64)


def test_out_given_by_position_is_refused_as_the_keyword_form():
    """np.cumsum(a, 0, None, out): NumPy wrote a gathered copy and out stayed unwritten."""
    a, out = dist(np.arange(16.0).reshape(4, 4)), dist(np.zeros((4, 4)))
    for call in (lambda: np.cumsum(a, 0, None, out), lambda: np.nansum(a, None, None, out),
                 lambda: np.dot(a, a, out)):
        with pytest.raises(TypeError, match="GlobalArray out"):
            call()
    assert (out.get() == 0).all()


def test_clip_bounds_follow_numpys_rule():
    x = np.arange(-6.0, 6.0).reshape(4, 3)
    g = dist(x)
    with pytest.raises(ValueError, match="forbidden"):
        np.clip(x, 0, 10, min=-5)
    with pytest.raises(ValueError, match="forbidden"):
        np.clip(g, 0, 10, min=-5)
    with pytest.raises(TypeError, match="a_max"):
        np.clip(g, 0, min=-5)
    copied = np.clip(g, None, None)  # NumPy 2.4: a copy
    assert isinstance(copied, gdap.GlobalArray) and copied is not g
    assert (copied.get() == np.clip(x, None, None)).all()


# -- crashes and refusals where NumPy answers ------------------------------------------------------------

@pytest.mark.parametrize("fn", [np.nanmin, np.nanmax])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_extremes_over_every_axis_are_a_scalar(fn, dtype, monkeypatch):
    v = np.array([1.0, np.nan, 3.0, -2.0, 5.0], dtype)
    m = np.arange(12.0, dtype=dtype).reshape(3, 4)
    m[1, 1] = np.nan
    for x, axis in ((v, 0), (v, -1), (m, (0, 1)), (m, (1, 0))):
        g = dist(x)
        with no_gather(monkeypatch):  # computed distributed
            got = fn(g, axis=axis)
        assert got == fn(x, axis=axis) and np.asarray(got).dtype == dtype


def test_nan_extreme_over_every_axis_of_an_all_nan_array_warns():
    v = np.full(5, np.nan)
    got, seen = recorded(lambda: np.nanmax(dist(v), axis=0))
    assert np.isnan(got) and RuntimeWarning in seen


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.complex128, np.float16, "f4*f8"])
def test_dot_of_matrices_gdap_cannot_multiply_gathers_with_the_warning(dtype):
    x = np.arange(16).reshape(4, 4) % 3
    first, second = (x.astype(np.float32), x.astype(np.float64)) if dtype == "f4*f8" else (x.astype(dtype),) * 2
    got, seen = recorded(lambda: np.dot(dist(first), dist(second)))
    want = np.dot(first, second)
    assert got.dtype == want.dtype and (got == want).all() and gdap.GatherWarning in seen


@pytest.mark.parametrize("fn", [np.prod, np.min, np.max, np.amin, np.amax])
def test_complex_products_and_extremes_gather_with_the_warning(fn):
    c = np.array([1 + 1j, 2 - 1j, 0.5j, 3.0])
    got, seen = recorded(lambda: fn(dist(c)))
    assert got == fn(c) and seen == [gdap.GatherWarning]


def test_norm_of_an_empty_vector():
    empty = np.zeros(0)
    assert np.linalg.norm(dist(empty), np.inf) == np.linalg.norm(empty, np.inf) == 0.0
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore", gdap.GatherWarning)
        np.linalg.norm(dist(empty), -np.inf)  # NumPy raises: no identity


def test_size_takes_axes_as_numpy_2_4():
    x = np.zeros((3, 4))
    g = dist(x)
    for axis in (None, 0, -1, (0, 1), (1,), (-1, 0)):
        assert np.size(g, axis) == np.size(x, axis)
    for axis, error in ((5, np.exceptions.AxisError), ((0, 2), np.exceptions.AxisError), ((0, 0), ValueError)):
        with pytest.raises(error):
            np.size(x, axis)
        with pytest.raises(error):
            np.size(g, axis)


# -- warnings and error texts ------------------------------------------------------------------------

def test_nanmean_over_an_axis_with_an_all_nan_slice_warns_as_numpy():
    x = np.ones((4, 3))
    x[1] = np.nan
    got, seen = recorded(lambda: np.nanmean(dist(x), axis=1))
    want, numpys = recorded(lambda: np.nanmean(x, axis=1))
    np.testing.assert_array_equal(got, want)
    assert RuntimeWarning in numpys and RuntimeWarning in seen


@pytest.mark.parametrize("call", [
    lambda f, a: f(a, axis=0, keepdims=True),
    lambda f, a: f(a, where=np.arange(12).reshape(4, 3) % 2 == 0, **({} if f in (np.nansum, np.nanmean)
                                                                     else {"initial": 50.0})),
], ids=["keepdims", "where"])
@pytest.mark.parametrize("fn", [np.nansum, np.nanmin, np.nanmax, np.nanmean])
def test_nan_reductions_outside_what_gdap_computes_gather_with_the_warning(fn, call):
    """These raised UnsupportedError naming GlobalArray.sum / .max, not the function called."""
    x = np.arange(12.0).reshape(4, 3)
    x[2, 1] = np.nan
    got, seen = recorded(lambda: call(fn, dist(x)))
    np.testing.assert_array_equal(got, call(fn, x))
    assert seen == [gdap.GatherWarning]


def test_nansum_to_bool_is_numpys():
    x = np.array([[0.0, np.nan, 2.0, 0.0]] * 4)
    got, seen = recorded(lambda: np.nansum(dist(x), dtype=bool))
    assert got == np.nansum(x, dtype=bool) and seen == [gdap.GatherWarning]


# -- the gathers NumPy never offers to __array_function__ --------------------------------------------

SILENT_GATHERS = {  # docs/python.md names each of these: NumPy converts through __array__, not dispatch
    "np.asarray(a)": (np.asarray, np.asarray),
    "np.array(a)": (np.array, np.array),
    "np.asanyarray(a)": (np.asanyarray, np.asanyarray),
    "np.ascontiguousarray(a)": (np.ascontiguousarray, np.ascontiguousarray),
    "np.asfortranarray(a)": (np.asfortranarray, np.asfortranarray),
    "np.require(a)": (np.require, np.require),
    "np.asarray_chkfinite(a)": (np.asarray_chkfinite, np.asarray_chkfinite),
    "np.sum([a, a])": (lambda a: np.sum([a, a]), lambda x: np.sum([x, x])),
    "np.median((a,))": (lambda a: np.median((a,)), lambda x: np.median((x,))),
}


@pytest.mark.parametrize("name", SILENT_GATHERS)
def test_the_conversions_docs_python_lists_gather_without_the_warning(name):
    """NumPy does not call __array_function__ for these, and __array__ cannot tell np.asarray(a)
    from np.sum([a, a]): the docs list them rather than claim "never a silent gather"."""
    ours, numpys = SILENT_GATHERS[name]
    x = np.arange(12.0).reshape(3, 4)
    got, seen = recorded(lambda: ours(dist(x)))
    np.testing.assert_array_equal(got, numpys(x))
    assert seen == []
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")) as f:
        assert "`%s`" % name in f.read()

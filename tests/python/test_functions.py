"""NumPy functions that are not ufuncs on a GlobalArray (GlobalArray.__array_function__, _functions),
single controller on the host (SPMD over MPI: functions_mpi_ranks.py through test_functions_mpi).
Every distributed function runs with the gathering methods patched to raise (no_gather) and is
compared with NumPy on the whole array; every other NumPy function gathers with a GatherWarning and
gives NumPy's answer. Before this change np.where(m, a, b), np.clip(a, ..), np.round(a),
np.allclose(a, b), np.linalg.norm(a), np.zeros_like(a), ... gathered silently through __array__
(and np.zeros_like(a) was a NumPy array). Each test names its rule."""
import warnings

import numpy as np
import pytest

import gdap
from gdap import layout
from gdap._global import same_layout
from test_global import LAYOUTS, NAMES, P
from test_ufuncs import no_gather

SHAPE = (7, 6)
FLOATS = np.arange(42, dtype=np.float64).reshape(SHAPE) * 0.75 - 12
WITH_NANS = FLOATS.copy()
WITH_NANS[1, 2] = WITH_NANS[4, :] = WITH_NANS[6, 5] = np.nan
WITH_NANS[0, 0] = np.inf


def dist(x, name):
    return gdap.distribute(x, LAYOUTS[name](x.shape))


def same(got, want, a=None):
    assert isinstance(got, gdap.GlobalArray), type(got)
    if a is not None:
        assert same_layout(got.layout, a.layout) and got.context is a.context
    host = got.get()
    assert host.dtype == want.dtype, (host.dtype, want.dtype)
    np.testing.assert_array_equal(host, want)


# -- cell-wise functions ----------------------------------------------------------------------------------

CELLWISE = {
    "where": (lambda a, b: np.where(a > 0, a, b), lambda x, y: np.where(x > 0, x, y)),
    "where scalars": (lambda a, b: np.where(b < 3, 7.5, a), lambda x, y: np.where(y < 3, 7.5, x)),
    "where int condition": (lambda a, b: np.where(a.astype(np.int64), 1, 2),
                            lambda x, y: np.where(x.astype(np.int64), 1, 2)),
    "clip": (lambda a, b: np.clip(a, -3, 4.5), lambda x, y: np.clip(x, -3, 4.5)),
    "clip by an array": (lambda a, b: np.clip(a, b, None), lambda x, y: np.clip(x, y, None)),
    "clip min= max=": (lambda a, b: np.clip(a, min=-1, max=2), lambda x, y: np.clip(x, min=-1, max=2)),
    "round": (lambda a, b: np.round(a * 1.37, 1), lambda x, y: np.round(x * 1.37, 1)),
    "around -1": (lambda a, b: np.around(a * 3.3, -1), lambda x, y: np.around(x * 3.3, -1)),
    "isclose": (lambda a, b: np.isclose(a, b + 1e-9), lambda x, y: np.isclose(x, y + 1e-9)),
    "isclose scalar": (lambda a, b: np.isclose(a, 3.0, atol=1), lambda x, y: np.isclose(x, 3.0, atol=1)),
    "nan_to_num": (lambda a, b: np.nan_to_num(a / b, nan=-1, posinf=9), lambda x, y: np.nan_to_num(x / y, nan=-1,
                                                                                                  posinf=9)),
    "copy": (lambda a, b: np.copy(a), lambda x, y: np.copy(x)),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fn", CELLWISE, ids=list(CELLWISE))
def test_cellwise_functions_are_numpys_on_every_layout(name, fn, monkeypatch):
    # Rule: np.where / clip / round / isclose / nan_to_num / copy of GlobalArrays of one layout and scalars are a
    # GlobalArray of that layout holding NumPy's answer on the whole arrays, computed without a gather.
    ours, numpys = CELLWISE[fn]
    x, y = FLOATS, FLOATS[::-1, ::-1] * 0.5 + (np.arange(42).reshape(SHAPE) % 3 == 0)
    a, b = dist(x, name), dist(y, name)
    with no_gather(monkeypatch), np.errstate(divide="ignore", invalid="ignore"):
        got = ours(a, b)
        want = numpys(x, y)
    same(got, want, a)


@pytest.mark.parametrize("name", NAMES)
def test_nan_to_num_copy_false_writes_in_place(name, monkeypatch):
    # Rule: np.nan_to_num(a, copy=False) is a itself, its owned cells rewritten as NumPy's in-place call does.
    a = dist(WITH_NANS, name)
    with no_gather(monkeypatch):
        got = np.nan_to_num(a, copy=False, nan=5.0)
    assert got is a
    np.testing.assert_array_equal(a.get(), np.nan_to_num(WITH_NANS, nan=5.0))


# -- reductions -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_reductions_and_comparisons_are_numpys(name, monkeypatch):
    # Rule: allclose / array_equal / count_nonzero / nan* / norm / dot / vdot and the functions that call the
    # methods give NumPy's values (allclose and array_equal a Python bool), computed without a gather.
    x, n = FLOATS, WITH_NANS
    a, b, m = dist(x, name), dist(x + 1e-9, name), dist(n, name)
    with no_gather(monkeypatch), warnings.catch_warnings():
        warnings.simplefilter("error", gdap.GatherWarning)
        assert np.allclose(a, b) is True and np.allclose(a, b + 1, atol=0.5) is False
        assert np.allclose(m, m) is False and np.allclose(m, m, equal_nan=True) is True
        assert np.array_equal(a, a.copy()) is True and np.array_equal(a, b) is False
        assert np.array_equal(m, m) is False and np.array_equal(m, m, equal_nan=True) is True
        assert np.count_nonzero(a) == np.count_nonzero(x) and isinstance(np.count_nonzero(a), int)
        counted = np.count_nonzero(a, axis=0)
        assert np.isclose(np.nansum(m), np.nansum(n)) and np.nanmin(m) == np.nanmin(n)
        assert np.nanmax(m) == np.nanmax(n) and np.nanmean(m) == pytest.approx(np.nanmean(n))
        nansum0, nanmax1, nanmean0 = np.nansum(m, axis=0), np.nanmax(m, axis=1), np.nanmean(m, axis=0)
        assert np.linalg.norm(a) == pytest.approx(np.linalg.norm(x))
        assert np.linalg.norm(a, "fro") == pytest.approx(np.linalg.norm(x, "fro"))
        assert np.sum(a) == pytest.approx(x.sum()) and np.std(a) == pytest.approx(x.std())
        assert np.amin(a) == x.min() and np.amax(a) == x.max()
        assert np.any(a) and not np.all(a > 0) and np.prod(a > -20) == 1
        assert np.shape(a) == SHAPE and np.ndim(a) == 2 and np.size(a) == 42 and np.size(a, 1) == 6
        assert np.result_type(a, np.float32) == np.float64 and not np.iscomplexobj(a) and np.isrealobj(a)
    assert np.argmax(a) == x.argmax() and np.argmin(a, axis=0).get().tolist() == x.argmin(axis=0).tolist()  # the
    # methods' candidates move by redistribution (reshard, patched above), not a gather
    np.testing.assert_array_equal(counted.get(), np.count_nonzero(x, axis=0))
    np.testing.assert_allclose(nansum0.get(), np.nansum(n, axis=0))
    np.testing.assert_array_equal(nanmax1.get(), np.nanmax(n, axis=1))
    np.testing.assert_allclose(nanmean0.get(), np.nanmean(n, axis=0))


@pytest.mark.parametrize("name", ["row blocks", "cyclic rows", "padded rows", "unstructured rows", "replicated"])
def test_vector_norms_and_dot_products(name, monkeypatch):
    # Rule: np.linalg.norm of a vector (ord None, 1, 2, inf, -inf) and np.dot / np.vdot of two vectors of one
    # layout are NumPy's, complex included (vdot conjugates its first argument), without a gather.
    lay = {"row blocks": layout.block(12, P), "cyclic rows": layout.cyclic(12, P),
           "padded rows": layout.padded(12, P, 1), "unstructured rows": layout.unstructured(
               12, [[11, 0, 5], [1, 2], [3, 4, 6, 7], [8, 9, 10]]), "replicated": layout.replicated(12, P)}[name]
    u = np.arange(12.0) - 5.5
    z = u + 1j * u[::-1]
    i = np.arange(12, dtype=np.int32) * 100000
    a, c, k = (gdap.distribute(v, lay) for v in (u, z, i))
    with no_gather(monkeypatch):
        norms = [np.linalg.norm(a, o) for o in (None, 1, 2, np.inf, -np.inf)]
        dots = np.dot(a, a), np.vdot(c, c), np.dot(c, c), np.dot(k, k), np.linalg.norm(c)
    assert norms == pytest.approx([np.linalg.norm(u, o) for o in (None, 1, 2, np.inf, -np.inf)])
    assert dots[0] == np.dot(u, u) and dots[1] == np.vdot(z, z) and dots[2] == np.dot(z, z)
    assert dots[3] == np.dot(i, i) and dots[3].dtype == np.int32  # NumPy's wrap-around of int32 products
    assert dots[4] == pytest.approx(np.linalg.norm(z))


def test_nanmin_of_an_all_nan_slice_is_nan_with_numpys_warning(monkeypatch):
    # Rule: where a slice holds only NaN, np.nanmin / nanmax / nanmean give NaN and NumPy's RuntimeWarning.
    x = np.array([[np.nan, 1.0], [np.nan, 2.0], [np.nan, -3.0], [np.nan, 0.5]])
    a = gdap.distribute(x, layout.block(x.shape, P))
    with no_gather(monkeypatch):
        with pytest.warns(RuntimeWarning, match="All-NaN"):
            low = np.nanmin(a, axis=0)
        with pytest.warns(RuntimeWarning, match="All-NaN"):
            assert np.isnan(np.nanmax(gdap.distribute(x[:, 0].copy(), layout.block(4, P))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(low.get(), np.nanmin(x, axis=0))


# -- new arrays of the same layout ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_like_functions_make_an_array_of_the_same_layout(name, monkeypatch):
    # Rule: np.zeros_like / ones_like / full_like / empty_like of a GlobalArray are GlobalArrays of its layout and
    # ranks, NumPy's dtype (dtype= honoured), the same values as NumPy's.
    a = dist(FLOATS, name)
    with no_gather(monkeypatch):
        made = (np.zeros_like(a), np.ones_like(a, dtype=np.int32), np.full_like(a, 2.5), np.full_like(a, 2.5, np.int8),
                np.empty_like(a, shape=SHAPE))
    same(made[0], np.zeros_like(FLOATS), a)
    same(made[1], np.ones_like(FLOATS, dtype=np.int32), a)
    same(made[2], np.full_like(FLOATS, 2.5), a)
    same(made[3], np.full_like(FLOATS, 2.5, np.int8), a)
    assert made[4].layout is a.layout and made[4].dtype == np.float64 and made[4].context is a.context


@pytest.mark.parametrize("call, error, words", [
    (lambda a: np.zeros_like(a, shape=(3, 2)), gdap.InvalidArgumentError, r"shape=\(3, 2\).*fixes its shape \(7, 6\)"),
    (lambda a: np.ones_like(a, order="F"), gdap.InvalidArgumentError, "C order"),
    (lambda a: np.full_like(a, np.zeros(3)), TypeError, "fill_value must be a scalar"),
    (lambda a: np.where(a > 0, a, np.zeros(SHAPE)), TypeError, r"np.where: .*gdap.distribute\(x, a.layout"),
    (lambda a: np.where(a > 0, a, gdap.distribute(FLOATS, layout.block(SHAPE, (1, P)))), gdap.InvalidArgumentError,
     "layouts differ"),
    (lambda a: np.clip(a, 0, 1, out=a), TypeError, "out= is not taken"),
    (lambda a: np.isclose(a, gdap.distribute(FLOATS[:3], layout.block((3, 6), P))), gdap.InvalidArgumentError,
     r"shapes \(7, 6\) and \(3, 6\) differ"),
    (lambda a: np.cumsum(a, out=a), TypeError, r"np.cumsum\(\.\.\., out=a\) with a GlobalArray out"),
])
def test_refusals_name_what_is_wrong_and_change_nothing(call, error, words, monkeypatch):
    # Rule: what a distributed function cannot do raises, naming it, before anything is written or gathered.
    a = gdap.distribute(FLOATS, layout.block(SHAPE, P))
    with no_gather(monkeypatch), pytest.raises(error, match=words):
        call(a)
    np.testing.assert_array_equal(a.get(), FLOATS)


# -- everything else: a gather with a GatherWarning ---------------------------------------------------------

@pytest.mark.parametrize("call, numpys", [
    (lambda a: np.median(a), lambda x: np.median(x)),
    (lambda a: np.sort(a, axis=1), lambda x: np.sort(x, axis=1)),
    (lambda a: np.dstack([a, a]), lambda x: np.dstack([x, x])),
    (lambda a: np.linalg.norm(a, axis=0), lambda x: np.linalg.norm(x, axis=0)),
    (lambda a: np.where(a > 0), lambda x: np.where(x > 0)),
    (lambda a: np.allclose(a, FLOATS + 1e-9), lambda x: np.allclose(x, FLOATS + 1e-9)),
    (lambda a: np.isclose(FLOATS[::-1], a), lambda x: np.isclose(FLOATS[::-1], x)),
    (lambda a: np.array_equal(a, FLOATS), lambda x: np.array_equal(x, FLOATS)),
])
def test_other_functions_gather_with_a_warning_and_give_numpys_answer(call, numpys):
    # Rule: a NumPy function gdap does not compute distributed warns GatherWarning (its name, the bytes, the
    # explicit spelling) and returns NumPy's result on the gathered arrays.
    a = gdap.distribute(FLOATS, layout.cyclic(SHAPE, (P, 1)))
    with pytest.warns(gdap.GatherWarning) as record:
        got = call(a)
    message = str(record[0].message)
    assert "bytes" in message and "(a.get(), ...)" in message and "np." in message
    assert record[0].filename == __file__  # it points at the caller's line
    want = numpys(FLOATS)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)


def test_the_warning_names_the_function_and_the_bytes_and_can_be_an_error():
    a = gdap.distribute(FLOATS, layout.block(SHAPE, P))
    with pytest.warns(gdap.GatherWarning, match=r"np.linalg.svd .*gathering 336 bytes \(1 array\).*"
                                                r"np.linalg.svd\(a.get\(\), \.\.\.\)"):
        np.linalg.svd(a)
    with pytest.warns(gdap.GatherWarning, match=r"np.dstack .*gathering 672 bytes \(2 arrays\)"):
        np.dstack([a, a.copy()])
    with warnings.catch_warnings():
        warnings.simplefilter("error", gdap.GatherWarning)
        with pytest.raises(gdap.GatherWarning):
            np.median(a)
        assert (np.asarray(a) == FLOATS).all() and (np.array(a) == FLOATS).all()  # explicit: no warning
    assert issubclass(gdap.GatherWarning, UserWarning) and "GatherWarning" in gdap.__all__


# -- a pending reduction -------------------------------------------------------------------------------------

def test_pending_operands_are_reduced_into_their_layout_and_combine_with_its_arrays(monkeypatch):
    # Rule: p + 1 with p pending on a non-block layout keeps p's layout (its values reduced into it), so that it
    # combines with p's partners; np.where and np.clip settle a pending operand likewise. Before: p + 1 went to
    # even blocks and (p + 1) + a raised "the layouts differ".
    lay = layout.replicated(SHAPE, P)
    p = gdap.GlobalArray.from_sections([FLOATS * (r + 1) for r in range(P)], lay, pending="sum")
    total = FLOATS * sum(range(1, P + 1))
    a = gdap.distribute(FLOATS, lay)
    with no_gather(monkeypatch):
        q = p + 1
        r = q + a
        w = np.where(p > 0, p, a)
        c = np.clip(p, -10, 10)
    assert q.layout is lay and q.pending is None
    same(r, total + 1 + FLOATS)
    same(w, np.where(total > 0, total, FLOATS))
    same(c, np.clip(total, -10, 10))
    cyc = layout.cyclic(SHAPE, (P, 1))
    pc = gdap.GlobalArray.from_sections([np.ones(cyc.local_shape(k)) for k in range(P)], cyc, pending="sum")
    same((pc * 2) + gdap.distribute(FLOATS, cyc), FLOATS + 2)


# -- device sections (GPU machine: ctest python.gpu) ----------------------------------------------------------

@pytest.mark.gpu
def test_argmin_argmax_on_two_devices_see_every_ranks_candidate():
    # Rule: argmin/argmax over two GPUs' sections see each rank's candidate: CuPy's copy into a rank's
    # candidate section runs on that rank's device, after its upload (it ran on the current device's
    # stream, which does not wait for the other device's upload: 23 for 41 in session 15's first run).
    from test_global_gpu import _gpus
    cupy = _gpus(2)
    lay = layout.padded(SHAPE, (2, 1), 1)
    for seed in range(20):
        host = np.random.default_rng(seed).permutation(FLOATS.ravel()).reshape(SHAPE)
        with cupy.cuda.Device(0):
            a = gdap.distribute(cupy.asarray(host), lay)
        assert set(a.devices.values()) == {"cuda:0", "cuda:1"}
        assert a.argmax() == host.argmax() and a.argmin() == host.argmin(), seed
        assert (a.argmax(axis=0).get() == host.argmax(axis=0)).all(), seed
        assert (np.argmin(a, axis=1).get() == host.argmin(axis=1)).all(), seed


@pytest.mark.gpu
def test_stats_and_functions_on_device_sections(monkeypatch):
    # Rule: on two GPUs' padded sections the reductions std / var / argmax / any and the NumPy functions compute
    # with CuPy where the data are and give NumPy's answers; another function gathers with a GatherWarning.
    from test_global_gpu import _gpus
    cupy = _gpus(2)
    with cupy.cuda.Device(0):
        x, n = cupy.asarray(FLOATS), cupy.asarray(WITH_NANS)
    lay = layout.padded(SHAPE, (2, 1), 1)
    a = gdap.distribute(x, lay)
    b = gdap.distribute(x[::-1].copy(), lay, devices=a.context)
    m = gdap.distribute(n, lay, devices=a.context)
    assert set(a.devices.values()) == {"cuda:0", "cuda:1"}
    stats = [a.std(), a.var(axis=0).get(), a.argmax(), np.argmax(a, axis=1).get(), (a > 10).any(), np.any(a > 100)]
    assert stats[0] == pytest.approx(FLOATS.std()) and np.allclose(stats[1], FLOATS.var(axis=0))
    assert stats[2] == FLOATS.argmax() and (stats[3] == FLOATS.argmax(axis=1)).all()
    assert stats[4] and not stats[5]
    with no_gather(monkeypatch), warnings.catch_warnings():
        warnings.simplefilter("error", gdap.GatherWarning)
        got = [np.where(a > 0, a, b), np.clip(a, -2, 3), np.round(a * 1.37, 1), np.isclose(a, b),
               np.nan_to_num(m, nan=-1.0, posinf=9.0), np.zeros_like(a), np.full_like(a, 2, dtype=np.int32)]
        scalars = [np.allclose(a, a), np.array_equal(a, b), np.count_nonzero(a), np.nansum(m), np.nanmax(m),
                   np.nanmean(m), np.linalg.norm(a), np.sum(a * b)]
        column_min = np.nanmin(m, axis=0)
    want = [np.where(FLOATS > 0, FLOATS, FLOATS[::-1]), np.clip(FLOATS, -2, 3), np.round(FLOATS * 1.37, 1),
            np.isclose(FLOATS, FLOATS[::-1]), np.nan_to_num(WITH_NANS, nan=-1.0, posinf=9.0), np.zeros(SHAPE),
            np.full(SHAPE, 2, np.int32)]
    for g, w in zip(got, want):
        same(g, w, a)
    assert scalars[:3] == [True, False, np.count_nonzero(FLOATS)]
    assert np.allclose(scalars[3:], [np.nansum(WITH_NANS), np.nanmax(WITH_NANS), np.nanmean(WITH_NANS),
                                     np.linalg.norm(FLOATS), np.sum(FLOATS * FLOATS[::-1])])
    np.testing.assert_array_equal(column_min.get(), np.nanmin(WITH_NANS, axis=0))
    with pytest.warns(gdap.GatherWarning, match="np.median"):
        assert np.median(a) == np.median(FLOATS)
    u = gdap.distribute(cupy.asarray(FLOATS[0]), layout.block(6, 2))
    assert np.dot(u, u) == np.dot(FLOATS[0], FLOATS[0]) and np.linalg.norm(u, 1) == np.linalg.norm(FLOATS[0], 1)

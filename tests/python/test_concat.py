"""np.concatenate / np.stack / np.vstack / np.hstack of GlobalArrays, single controller on the host
(SPMD over MPI: concat_mpi_ranks.py through test_concat_mpi). Every result is compared with NumPy
on the whole arrays, dtype included; none gathers (the gathering calls patched to raise, GatherWarning
an error, while they run). Before this change every one of these calls gathered with a
GatherWarning (np.concatenate(..., out=a GlobalArray) raised TypeError), so every test here but the
refusals' NumPy texts failed on the old code."""
import numpy as np
import pytest

import gdap
from gdap import layout
from test_global import LAYOUTS, NAMES, P
from test_transpose import no_gather

A = np.arange(42, dtype=np.float64).reshape(7, 6) * 1.5 - 20
B = np.arange(28, dtype=np.float64).reshape(7, 4) + 100


def dist(x, name):
    return gdap.distribute(x, LAYOUTS[name](x.shape))


def same(got, want):
    assert isinstance(got, gdap.GlobalArray)
    host = got.get()
    assert host.shape == want.shape and host.dtype == want.dtype, (host.shape, host.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(host, want)


@pytest.mark.parametrize("name", NAMES)
def test_concatenate_matches_numpy_without_a_gather(name):
    # Rule: np.concatenate along any axis (negative too, None: flattened), NumPy operands mixed in, equals NumPy's.
    a, b = dist(A, name), dist(B, name)
    with no_gather():
        got = [np.concatenate([a, b], axis=1), np.concatenate([a, a, a]), np.concatenate([a, B, a], axis=-1),
               np.concatenate((A, a), axis=-2), np.concatenate([a, b], axis=None)]
    for g, want in zip(got, [np.concatenate([A, B], 1), np.concatenate([A, A, A]), np.concatenate([A, B, A], -1),
                             np.concatenate((A, A), -2), np.concatenate([A, B], None)]):
        same(g, want)


@pytest.mark.parametrize("name", NAMES)
def test_stack_vstack_hstack_match_numpy(name):
    # Rule: np.stack (every axis), np.vstack and np.hstack of 2-d GlobalArrays equal NumPy's.
    a, b = dist(A, name), dist(B, name)
    with no_gather():
        got = [np.stack([a, a]), np.stack([a, A, a], axis=1), np.stack([a, a], axis=-1), np.vstack([a, a]),
               np.hstack([a, b, B])]
    for g, want in zip(got, [np.stack([A, A]), np.stack([A, A, A], 1), np.stack([A, A], -1), np.vstack([A, A]),
                             np.hstack([A, B, B])]):
        same(g, want)


def _plain(d):
    return {k: np.asarray(v).tolist() for k, v in d.items()}  # an unstructured dictionary's indices as a list


@pytest.mark.parametrize("name", ["row blocks", "cyclic rows", "2 x 2 block-cyclic", "padded rows", "replicated"])
def test_result_keeps_the_first_operands_layout_off_the_joined_axis(name):
    # Rule: along the other axes every rank keeps the first GlobalArray operand's dictionaries (padding and
    # cyclic too); along the joined axis an even block of the grid extent the first operand has there.
    a, b = dist(A, name), dist(B, "column blocks")
    with no_gather():
        c = np.concatenate([B, a, b], axis=1)
    same(c, np.concatenate([B, A, B], 1))
    for r in range(P):
        assert _plain(c.layout.dim_data(r)[0]) == _plain(a.layout.dim_data(r)[0]), (r, c.layout.dim_data(r))
        d = c.layout.dim_data(r)[1]
        assert d["dist_type"] == "b" and d["proc_grid_size"] == a.layout.grid_shape[1], d
    assert c.layout.grid_shape == a.layout.grid_shape


def test_one_dimensional_operands():
    # Rule: 1-d operands: hstack joins them, vstack and stack make rows, concatenate of empty ones works.
    x, y = np.arange(10.0), np.arange(5.0) - 7
    for lay in (layout.block, layout.cyclic):
        a, b = gdap.distribute(x, lay(x.shape, P)), gdap.distribute(y, lay(y.shape, P))
        with no_gather():
            got = [np.hstack([a, b]), np.vstack([a, a]), np.stack([a, x], axis=1),
                   np.concatenate([a, gdap.distribute(np.zeros(0), layout.block((0,), P)), b])]
        for g, want in zip(got, [np.hstack([x, y]), np.vstack([x, x]), np.stack([x, x], 1),
                                 np.concatenate([x, np.zeros(0), y])]):
            same(g, want)


def test_dtype_casting_and_out():
    # Rule: the result type of the operands; dtype= and casting= as NumPy's; a GlobalArray out written and returned.
    ints = np.arange(42).reshape(7, 6)
    a, i = dist(A, "2 x 2 blocks"), dist(ints, "cyclic rows")
    out = dist(np.zeros((7, 12)), "column blocks")
    with no_gather():
        mixed = np.concatenate([i, a], axis=1)
        as32 = np.concatenate([a, i], axis=1, dtype=np.float32)
        unsafe = np.concatenate([a, i], axis=1, dtype=np.int16, casting="unsafe")
        stacked = np.stack([i, i], dtype=np.float64, casting="safe")
        written = np.concatenate([a, i], axis=1, out=out)
    assert written is out
    same(mixed, np.concatenate([ints, A], 1))
    same(as32, np.concatenate([A, ints], 1, dtype=np.float32))
    same(unsafe, np.concatenate([A, ints], 1, dtype=np.int16, casting="unsafe"))
    same(stacked, np.stack([ints, ints]).astype(np.float64))
    same(out, np.concatenate([A, ints], 1).astype(np.float64))


def _numpy_error(call):
    with pytest.raises(Exception) as caught:
        call()
    return type(caught.value), str(caught.value)


def test_refusals_say_what_numpy_says():
    # Rule: bad shapes, axes, casts and outs raise NumPy's error class and text; nothing is gathered.
    a, b, v = dist(A, "row blocks"), dist(B, "2 x 2 blocks"), gdap.distribute(np.arange(7.0), layout.block((7,), P))
    host = {id(a): A, id(b): B, id(v): np.arange(7.0)}
    cases = [(np.concatenate, ([a, b],), {}), (np.concatenate, ([a, v],), {}), (np.concatenate, ([a, a],), {"axis": 2}),
             (np.stack, ([a, b],), {}), (np.stack, ([a, a],), {"axis": -4}),
             (np.concatenate, ([a, 3.0],), {}), (np.concatenate, ([3.0, a],), {}),
             (np.concatenate, ([a, a],), {"dtype": np.int64}), (np.concatenate, ([a, a],), {"casting": "bogus"}),
             (np.stack, ([a, a],), {"dtype": np.float32, "casting": "safe"})]
    for func, args, kwargs in cases:
        want = _numpy_error(lambda: func([host.get(id(x), x) for x in args[0]], **kwargs))
        with no_gather():
            got = _numpy_error(lambda: func(*args, **kwargs))
        assert issubclass(got[0], want[0]) and got[1] == want[1], (func, kwargs, got, want)


def test_out_refusals():
    # Rule: out of the wrong shape or ndim raises NumPy's ValueError; out with dtype= NumPy's TypeError; an
    # out that is no GlobalArray is refused with the way round; nothing is written.
    a = dist(A, "row blocks")
    out = dist(np.zeros((14, 6)), "row blocks")
    for bad, text in ((dist(np.zeros((14, 5)), "row blocks"), "Output array is the wrong shape"),
                      (gdap.distribute(np.zeros(84), layout.block((84,), P)), "Output array has wrong dimensionality")):
        with pytest.raises(ValueError, match=text):
            np.concatenate([a, a], out=bad)
    with pytest.raises(TypeError, match="only takes `out` or `dtype`"):
        np.concatenate([a, a], out=out, dtype=np.float64)
    host = np.zeros((14, 6))
    with pytest.raises(TypeError, match=r"out a ndarray: .*write x\[\.\.\.\] = np\.concatenate\(\.\.\.\)\.get\(\)"):
        np.concatenate([a, a], out=host)
    assert not host.any()
    same(out, np.zeros((14, 6)))


def test_operands_on_different_controllers_are_refused():
    # Rule: operands (or out) on another controller raise InvalidArgumentError naming the operand.
    a = dist(A, "row blocks")
    other = gdap.distribute(A, layout.block(A.shape, P), devices=gdap.Controller(P))
    assert other.context is not a.context
    with pytest.raises(gdap.InvalidArgumentError, match="the array at index 1 is on another controller"):
        np.concatenate([a, other])
    with pytest.raises(gdap.InvalidArgumentError, match="on another controller"):
        np.stack([a, a], out=gdap.distribute(np.zeros((2, 7, 6)), layout.block((2, 7, 6), P),
                                             devices=gdap.Controller(P)))

"""NumPy ufuncs, the operators built on them and item assignment on a GlobalArray, single controller
on the host (SPMD over MPI: ufunc_mpi_ranks.py through test_ufuncs_mpi). Every result is compared
with NumPy on the whole array, and every distributed call runs with the gathering methods patched to
raise: a ufunc or an assignment that gathered silently fails here. Before this change np.sqrt(a)
raised TypeError (__array_ufunc__ = None), a ** 2, a // 2, a % 3, abs(a), a & b raised TypeError
and a[...] = v raised TypeError (no item assignment). Each test names its rule."""
import contextlib

import numpy as np
import pytest

import gdap
from gdap import layout
from test_global import LAYOUTS, NAMES, P

SHAPE = (7, 6)
FLOATS = np.arange(42, dtype=np.float64).reshape(SHAPE) * 0.75 - 12
INTS = np.arange(42, dtype=np.int64).reshape(SHAPE) * 7 % 23 - 9


@contextlib.contextmanager
def no_gather(monkeypatch):
    """Every way to gather a whole array raises meanwhile (get, np.asarray, gather, allgather, reshard)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a silent gather or move")
    with monkeypatch.context() as m:
        for name in ("get", "__array__", "gather", "allgather", "reshard", "_moved_to"):
            m.setattr(gdap.GlobalArray, name, refuse)
        yield


def dist(x, name):
    return gdap.distribute(x, LAYOUTS[name](x.shape))


def same(got, want):
    assert isinstance(got, gdap.GlobalArray), type(got)
    host = got.get()
    assert host.dtype == want.dtype, (host.dtype, want.dtype)
    np.testing.assert_array_equal(host, want)


# -- element-wise ufuncs --------------------------------------------------------------------------------

UNARY = [np.sqrt, np.exp, np.sin, np.absolute, np.negative, np.positive, np.floor, np.isnan, np.square, np.sign,
         np.signbit, np.rint]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_unary_ufunc_is_numpys_on_every_layout(name, ufunc, monkeypatch):
    # Rule: np.f(a) is a GlobalArray of a's layout holding np.f of the whole array, NumPy's dtype, no gather.
    x = np.abs(FLOATS) if ufunc is np.sqrt else FLOATS
    a = dist(x, name)
    with no_gather(monkeypatch):
        out = ufunc(a)
    assert out.layout is a.layout
    same(out, ufunc(x))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.float32, np.float64, np.bool_, np.complex128])
@pytest.mark.parametrize("ufunc", [np.sqrt, np.absolute, np.square], ids=lambda u: u.__name__)
def test_dtype_rules_are_numpys(dtype, ufunc, monkeypatch):
    # Rule: the result's dtype is NumPy's for the operand's dtype (np.sqrt(int8) is float16, ...).
    x = (np.abs(INTS) % 5).astype(dtype)
    a = dist(x, "2 x 2 block-cyclic")
    with no_gather(monkeypatch):
        out = ufunc(a)
    same(out, ufunc(x))


BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder, np.power, np.maximum,
          np.minimum, np.fmax, np.arctan2, np.hypot, np.less_equal, np.not_equal, np.logical_and, np.copysign]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_binary_ufunc_with_a_partner_and_scalars(name, ufunc, monkeypatch):
    # Rule: two GlobalArrays of one layout, or one and a scalar (either side), as NumPy on the whole.
    x, y = FLOATS, FLOATS[::-1].copy() / 4 + 0.5
    a, b = dist(x, name), dist(y, name)
    with np.errstate(all="ignore"), no_gather(monkeypatch):
        both, left, right, zero_d = ufunc(a, b), ufunc(a, 3), ufunc(2.5, b), ufunc(a, np.array(1.5))
    with np.errstate(all="ignore"):
        same(both, ufunc(x, y))
        same(left, ufunc(x, 3))
        same(right, ufunc(2.5, y))
        same(zero_d, ufunc(x, np.array(1.5)))


@pytest.mark.parametrize("name", ["row blocks", "cyclic rows", "padded rows", "replicated", "irregular rows"])
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.float32])
def test_operators_are_numpys(name, dtype, monkeypatch):
    # Rule: ** // % abs + ~ & | ^ divmod as NumPy, NumPy's dtype (NEP 50: int8 ** 2 stays int8).
    x = (np.abs(INTS) % 11 + 1).astype(dtype)
    a = dist(x, name)
    with no_gather(monkeypatch):
        got = {"pow": a ** 2, "rpow": 2 ** a, "floordiv": a // 3, "rfloordiv": 50 // a, "mod": a % 3, "rmod": 50 % a,
               "abs": abs(-a) if dtype != np.uint8 else abs(a), "pos": +a, "divmod": divmod(a, 4)}
        if dtype != np.float32:
            got.update(invert=~a, bitand=a & 6, bitor=3 | a, xor=a ^ a)
    want = {"pow": x ** 2, "rpow": 2 ** x, "floordiv": x // 3, "rfloordiv": 50 // x, "mod": x % 3, "rmod": 50 % x,
            "abs": abs(-x) if dtype != np.uint8 else abs(x), "pos": +x, "divmod": divmod(x, 4)}
    if dtype != np.float32:
        want.update(invert=~x, bitand=x & 6, bitor=3 | x, xor=x ^ x)
    for key in want:
        if key == "divmod":
            same(got[key][0], want[key][0])
            same(got[key][1], want[key][1])
        else:
            same(got[key], want[key])


def test_bool_operators_are_logical():
    # Rule: & | ^ ~ on bool arrays are NumPy's logical ones (masks combine).
    x = FLOATS > 0
    y = (np.abs(INTS) % 3) == 0
    a, b = dist(x, "2 x 2 blocks"), dist(y, "2 x 2 blocks")
    same(a & b, x & y)
    same(a | b, x | y)
    same(a ^ b, x ^ y)
    same(~a, ~x)


@pytest.mark.parametrize("name", NAMES)
def test_in_place_operators_write_the_same_array(name, monkeypatch):
    # Rule: a **= 2 (and //=, %=, &=, |=, ^=) write a's sections: another name bound to a sees it.
    x = np.abs(INTS) % 9 + 1
    a = dist(x, name)
    alias = a
    with no_gather(monkeypatch):
        a **= 2
        a //= 3
        a %= 7
        a &= 13
        a |= 16
        a ^= 5
    assert alias is a
    same(alias, (((((x ** 2) // 3) % 7) & 13) | 16) ^ 5)


def test_in_place_casting_is_numpys_and_writes_nothing():
    # Rule: int **= 0.5 raises NumPy's casting error (a TypeError) before any section is written.
    a = dist(INTS, "cyclic rows")
    with pytest.raises(TypeError, match="Cannot cast ufunc"):
        a **= 0.5
    same(a, INTS)


@pytest.mark.parametrize("name", NAMES)
def test_out_writes_in_place_and_where_selects(name, monkeypatch):
    # Rule: out= a GlobalArray of the layout is written in place (returned); where= a GlobalArray mask.
    x = FLOATS
    a = dist(x, name)
    out = dist(np.full(SHAPE, -1.0), name)
    mask = a > 0
    with no_gather(monkeypatch):
        got = np.multiply(a, 2, out=out, where=mask)
        self_out = np.sqrt(a, out=a, where=mask)
    assert got is out and self_out is a
    same(out, np.where(x > 0, x * 2, -1.0))
    same(a, np.where(x > 0, np.sqrt(np.abs(x)), x))


def test_out_leaves_padding_and_a_new_result_zero_pads():
    # Rule: computation touches owned cells only: out= leaves the padding, a new result's padding is 0.
    a = dist(FLOATS, "padded rows").halo_exchange()
    before = {r: a.local_view(r).copy() for r in range(P)}
    owned = {r: gdap._global._owned_cells(a.layout, r) for r in range(P)}
    np.add(a, 100, out=a)
    fresh = np.sqrt(a)
    for r in range(P):
        pad = np.ones(before[r].shape, bool)
        pad[owned[r]] = False
        assert pad.any()
        np.testing.assert_array_equal(a.local_view(r)[pad], before[r][pad])
        assert (fresh.local_view(r)[pad] == 0).all()
    same(a, FLOATS + 100)


def test_a_pending_operand_is_settled_into_its_partners_layout():
    # Rule: np.maximum(a, p) with p pending reduces p into a's layout first (a + p's rule), then computes.
    parts = [FLOATS * (r + 1) for r in range(P)]
    p = gdap.GlobalArray.from_sections(parts, layout.replicated(SHAPE, P), pending="sum")
    total = FLOATS * sum(range(1, P + 1))
    a = dist(FLOATS[::-1].copy(), "replicated")
    same(np.maximum(a, p), np.maximum(FLOATS[::-1], total))
    same(np.sqrt(abs(p)), np.sqrt(np.abs(total)))
    same(np.add(p, p, out=a), 2 * total)
    with pytest.raises(gdap.InvalidArgumentError, match=r"out=a\): a holds a pending reduction \('sum'\)"):
        np.add(a, 1, out=p)


# -- ufunc.reduce -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_reduce_is_the_distributed_reduction(name):
    # Rule: np.add.reduce(a) sums axis 0 (ufunc.reduce's default), axis=None everything; max/min/prod too.
    x = INTS
    a = dist(x, name)
    same(np.add.reduce(a), np.add.reduce(x))
    assert np.add.reduce(a, axis=None) == x.sum()
    same(np.maximum.reduce(a, axis=1), np.maximum.reduce(x, axis=1))
    assert np.minimum.reduce(a, axis=None) == x.min()
    same(np.multiply.reduce(a % 3 + 1, axis=0), np.multiply.reduce(x % 3 + 1, axis=0))


# -- refusals -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call,match", [
    (lambda a: np.add.accumulate(a), r"np\.add\.accumulate on a GlobalArray .* np\.add\.accumulate\(a\.get\(\)"),
    (lambda a: np.add.outer(a, a), r"np\.add\.outer on a GlobalArray"),
    (lambda a: np.add.at(a, [0], 1), r"np\.add\.at on a GlobalArray"),
    (lambda a: np.add.reduceat(a, [0, 2]), r"np\.add\.reduceat on a GlobalArray"),
    (lambda a: np.logical_and.reduce(a), r"np\.logical_and\.reduce on a GlobalArray .*a\.get\(\)"),
    (lambda a: np.logical_or.reduce(a, axis=None), r"np\.logical_or\.reduce on a GlobalArray"),
    (lambda a: np.add(a, FLOATS), r"np\.add: .*whole ndarray of shape \(7, 6\).*gdap\.distribute\(x, a\.layout"),
    (lambda a: FLOATS + a, r"whole ndarray of shape \(7, 6\).*gdap\.distribute\(x, a\.layout"),
    (lambda a: a ** FLOATS, r"whole ndarray of shape \(7, 6\)"),
    (lambda a: FLOATS % a, r"whole ndarray of shape \(7, 6\)"),
    (lambda a: np.sqrt(a, out=np.empty(SHAPE)), r"np\.sqrt\(\.\.\., out=ndarray\): .* np\.sqrt\(a\.get\(\)"),
    (lambda a: np.sqrt(a, out=a, where=FLOATS > 0), r"where=ndarray\): where= takes a bool or a GlobalArray"),
    (lambda a: np.sqrt(a, where=a > 0), r"where=w\) without out="),
    (lambda a: np.sqrt(a, order="F"), r"np\.sqrt on a GlobalArray does not take order"),
    (lambda a: np.sqrt(a, out=a, where=a), r"where=w\): w must be a GlobalArray of bool, not float64"),
    (lambda a: np.vecdot(a, a), r"np\.vecdot \(a generalized ufunc, signature .*\) is not element-wise"),
    (lambda a: np.matmul(a, FLOATS.T), r"np\.matmul \(a generalized ufunc.*a @ b takes two GlobalArrays"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_refusals_name_the_ufunc_and_the_explicit_call(call, match):
    # Rule: what cannot stay distributed raises TypeError (never a silent gather); a is unchanged.
    a = dist(FLOATS, "2 x 2 block-cyclic")
    with pytest.raises(TypeError, match=match):
        call(a)
    same(a, FLOATS)


def test_np_matmul_is_the_distributed_product():
    # Rule: np.matmul(a, b), a generalized ufunc, is a @ b (gdap's GEMM), never a product of sections.
    a, b = dist(FLOATS, "2 x 2 blocks"), dist(FLOATS.T.copy(), "cyclic rows")
    np.testing.assert_allclose(np.matmul(a, b).get(), FLOATS @ FLOATS.T)


def test_a_partner_of_another_layout_is_refused():
    # Rule: np.maximum(a, b) with b in another layout: reshard first (a + b's rule).
    a, b = dist(FLOATS, "row blocks"), dist(FLOATS, "cyclic rows")
    with pytest.raises(gdap.InvalidArgumentError, match=r"the layouts differ: reshard one array"):
        np.maximum(a, b)
    with pytest.raises(gdap.InvalidArgumentError, match=r"the layouts differ"):
        np.add(a, 1, out=b)


# -- item assignment ------------------------------------------------------------------------------------------

KEYS = [(0, slice(None)), (slice(None), -1), (slice(1, -1), slice(1, -1)), (slice(None, None, -2), slice(1, 5, 3)),
        (Ellipsis, 2), 3, (slice(5, 1, -1), Ellipsis), (-1, -2), (slice(None), [5, 0, 3]), ([1, 4], 2),
        np.array([True, False] * 3 + [True]), (slice(4, 4), 0)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_setitem_scalar_and_numpy_value_as_numpy(name, key, monkeypatch):
    # Rule: a[key] = v writes what NumPy's would, scalar or broadcastable array; each owner its cells.
    a = dist(FLOATS, name)
    want = FLOATS.copy()
    with no_gather(monkeypatch):
        a[key] = -3
    want[key] = -3
    same(a, want)
    value = np.arange(np.prod(want[key].shape), dtype=np.float64).reshape(want[key].shape) + 100
    with no_gather(monkeypatch):
        a[key] = value
    want[key] = value
    same(a, want)


def test_setitem_broadcasts_and_casts_as_numpy():
    # Rule: a row broadcast over rows; float into int truncates as NumPy's assignment does.
    a = dist(INTS, "2 x 2 block-cyclic")
    want = INTS.copy()
    a[1:5] = np.array([1.9, 2, 3, 4, 5, 6])
    want[1:5] = np.array([1.9, 2, 3, 4, 5, 6])
    same(a, want)


@pytest.mark.parametrize("name", NAMES)
def test_setitem_through_a_mask(name, monkeypatch):
    # Rule: a[m] = v with m a GlobalArray of bool of a's layout writes v where m holds.
    a = dist(FLOATS, name)
    with no_gather(monkeypatch):
        a[a > 3] = 0
        a[a < -5] = np.float32(-5)
    want = FLOATS.copy()
    want[want > 3] = 0
    want[want < -5] = -5
    same(a, want)


@pytest.mark.parametrize("src", ["row blocks", "cyclic rows", "2 x 2 block-cyclic", "padded rows"])
@pytest.mark.parametrize("name", ["row blocks", "2 x 2 blocks", "cyclic rows", "irregular rows", "padded rows",
                                  "replicated", "unstructured rows", "2 x 2 block-cyclic"])
def test_setitem_of_a_global_array_moves_it_into_place(name, src, monkeypatch):
    # Rule: a[1:-1, ::2] = b with b a GlobalArray of the selection's shape in any layout; padding untouched.
    a = dist(FLOATS, name)
    if LAYOUTS[name] is LAYOUTS["padded rows"]:
        a = a.halo_exchange()
    pads = {r: a.local_view(r).copy() for r in range(P)}
    inner = np.arange(5 * 3, dtype=np.int32).reshape(5, 3) * 10
    b = dist(inner, src)
    with no_gather(monkeypatch):
        a[1:-1, ::2] = b
    want = FLOATS.copy()
    want[1:-1, ::2] = inner
    same(a, want)
    for r in range(P):
        owned = gdap._global._owned_cells(a.layout, r)
        pad = np.ones(pads[r].shape, bool)
        pad[owned] = False
        np.testing.assert_array_equal(a.local_view(r)[pad], pads[r][pad])


def test_setitem_of_a_pending_value_performs_its_reduction_into_place():
    # Rule: a[1:-1] = p with p holding partial sums writes their sum.
    p = gdap.GlobalArray.from_sections([FLOATS[1:-1] * (r + 1) for r in range(P)], layout.replicated((5, 6), P),
                                       pending="sum")
    a = dist(FLOATS, "cyclic rows")
    a[1:-1] = p
    want = FLOATS.copy()
    want[1:-1] *= sum(range(1, P + 1))
    same(a, want)


@pytest.mark.parametrize("key,error,match", [
    ((7, 0), IndexError, r"axis 0: index 7 is out of bounds for size 7"),
    ((0, -7), IndexError, r"axis 1: index -7 is out of bounds for size 6"),
    ((0, 0, 0), IndexError, r"too many indices"),
    ((None, 0), TypeError, r"axis 0: index None is not an integer"),
    ((slice(None), [0, 9]), IndexError, r"axis 1: index 9 is out of bounds for size 6"),
], ids=repr)
def test_setitem_refuses_a_bad_key_and_writes_nothing(key, error, match):
    # Rule: IndexError / TypeError naming the axis; no rank has written anything.
    a = dist(FLOATS, "2 x 2 block-cyclic")
    with pytest.raises(error, match=match):
        a[key] = 1
    same(a, FLOATS)


def test_setitem_refusals_name_what_is_wrong():
    # Rule: a value of the wrong shape, a pending array, a mask with a value of another length or a 2-d
    # GlobalArray value: clear errors, nothing written.
    a = dist(FLOATS, "cyclic rows")
    with pytest.raises(ValueError, match=r"v of shape \(4,\) cannot be broadcast to the selection's shape \(7, 6\)"):
        a[:] = np.zeros(4)
    with pytest.raises(ValueError, match=r"b has shape \(7, 6\) but the selection has shape \(5, 6\)"):
        a[1:-1] = dist(FLOATS, "row blocks")
    with pytest.raises(TypeError, match=r"integer in the key .* a\[i:i\+1, \.\.\.\] = b"):
        a[0] = dist(FLOATS[0].copy(), "row blocks")
    with pytest.raises(ValueError, match=r"cannot assign 3 input values to the 25 output values where the mask"):
        a[a > 0] = np.zeros(3)
    with pytest.raises(TypeError, match=r"requires a 0 or 1-dimensional input, input has 2 dimensions"):
        a[a > 0] = a  # NumPy's refusal of a 2-d value (a 1-d GlobalArray value is taken since session 17)
    with pytest.raises(IndexError, match=r"m is a GlobalArray of float64"):
        a[a] = 0
    with pytest.raises(gdap.InvalidArgumentError, match=r"the layouts differ"):
        a[dist(FLOATS, "row blocks") > 0] = 0
    same(a, FLOATS)
    p = gdap.GlobalArray.from_sections([FLOATS] * P, layout.replicated(SHAPE, P), pending="sum")
    with pytest.raises(gdap.InvalidArgumentError, match=r"a holds a pending reduction \('sum'\).*a = a\.settled\(\)"):
        p[0, 0] = 1
    np.testing.assert_array_equal(p.local_view(0), FLOATS)


# -- device sections (GPU machine: ctest python.gpu) ----------------------------------------------------------

@pytest.mark.gpu
def test_ufuncs_and_assignment_on_device_sections(monkeypatch):
    # Rule: CuPy computes on each GPU's section; results, out=/where= and a[key] = v as NumPy, no gather.
    from test_global_gpu import _gpus
    cupy = _gpus(2)
    with cupy.cuda.Device(0):
        x = cupy.asarray(FLOATS)
    a = gdap.distribute(x, layout.padded(SHAPE, (2, 1), 1))
    b = gdap.distribute(x[::-1].copy(), layout.padded(SHAPE, (2, 1), 1), devices=a.context)
    assert set(a.devices.values()) == {"cuda:0", "cuda:1"}
    with no_gather(monkeypatch):
        got = [np.sqrt(abs(a)), a ** 2, a // 3, np.maximum(a, b), a > 0]
        c = a.copy()
        np.add(c, 100, out=c, where=a > 0)
        c[0, :] = 0
        c[c < -5] = -5
        c[1:-1, ::2] = gdap.distribute(cupy.ones((5, 3)), layout.block((5, 3), 2), devices=a.context)
    want = [np.sqrt(abs(FLOATS)), FLOATS ** 2, FLOATS // 3, np.maximum(FLOATS, FLOATS[::-1]), FLOATS > 0]
    for g, w in zip(got, want):
        same(g, w)
    w = np.where(FLOATS > 0, FLOATS + 100, FLOATS)
    w[0, :] = 0
    w[w < -5] = -5
    w[1:-1, ::2] = 1
    same(c, w)

"""The Python layer against hostile-input hunt 13 (single controller on the host). Each test
names its rule."""
import numpy as np
import pytest

import gdap
from gdap import layout


def _pair():
    host = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0])
    lay = layout.block((10,), 3)
    return host, gdap.distribute(host, lay, devices=3), gdap.distribute(host.copy(), lay, devices=3)


def test_comparisons_are_element_wise_as_numpy():
    # Rule: a == b, a != b, a < 3, ... are GlobalArrays of bool (hunt 13 #1: == and != compared
    # identities, so two equal arrays were 'not equal' and a == 3 was False).
    host, a, b = _pair()
    cases = {"a == b": (a == b, host == host), "a != b": (a != b, host != host), "a == 3": (a == 3, host == 3),
             "a != 3": (a != 3, host != 3), "a < 3": (a < 3, host < 3), "a <= 3": (a <= 3, host <= 3),
             "a > 3": (a > 3, host > 3), "a >= 3": (a >= 3, host >= 3), "3 < a": (3 < a, 3 < host),
             "a == -b": (a == -b, host == -host)}
    for what, (got, want) in cases.items():
        assert isinstance(got, gdap.GlobalArray) and got.dtype == np.bool_, what
        assert got.layout is a.layout, what
        assert np.array_equal(got.get(), want), what


def test_comparing_other_layouts_is_refused_as_arithmetic_is():
    host, a, _ = _pair()
    other = gdap.distribute(host, layout.cyclic((10,), 3), devices=3)
    with pytest.raises(gdap.InvalidArgumentError, match="the layouts differ"):
        a == other


def test_the_truth_of_a_global_array_is_numpys():
    # Rule: bool() of one element is that element's truth; of more or none a ValueError, as NumPy
    # (hunt 13 #2: Python read len(a), so a zero was True and a 10-element array True).
    lay1 = layout.block((1,), 3)
    assert not gdap.distribute(np.zeros(1), lay1, devices=3)
    assert gdap.distribute(np.ones(1), lay1, devices=3)
    assert not gdap.distribute(np.zeros((1, 1), np.int32), layout.block((1, 1), 3), devices=3)
    _, a, _ = _pair()
    with pytest.raises(ValueError, match="truth value of a GlobalArray of 10 elements is ambiguous"):
        bool(a)
    with pytest.raises(ValueError, match="no elements"):
        bool(gdap.distribute(np.zeros(0), layout.block((0,), 3), devices=3))
    assert not (a != a.settled()).get().any()


def test_a_global_array_is_not_hashable_as_a_numpy_array():
    _, a, _ = _pair()
    with pytest.raises(TypeError):
        hash(a)


def test_in_place_arithmetic_writes_the_array_every_name_sees():
    # Rule: a += x writes a's sections, as NumPy's in-place operators do (hunt 13 #3: Python made a
    # new array and rebound `a`, so another name bound to the array kept the old values).
    host, a, b = _pair()
    alias = a
    a += 1
    a -= b
    a *= 4
    a /= 2
    assert a is alias
    assert np.array_equal(alias.get(), ((host + 1) - host) * 4 / 2)
    assert np.array_equal(b.get(), host)  # the operand is only read


def test_in_place_arithmetic_keeps_the_dtype_as_numpy():
    # Rule: int += float raises (NumPy's same_kind casting) and writes nothing, where a new float
    # array used to replace the int one.
    ints = gdap.distribute(np.arange(10), layout.block((10,), 3), devices=3)
    with pytest.raises(TypeError, match="same_kind"):
        ints += 0.5
    assert ints.dtype == np.int64 and np.array_equal(ints.get(), np.arange(10))


def test_in_place_arithmetic_on_read_only_sections_writes_nothing():
    parts = [np.arange(4.0), np.arange(4.0, 8.0)]
    parts[1].flags.writeable = False
    a = gdap.GlobalArray.from_sections(parts, layout.block((8,), 2))
    with pytest.raises(gdap.InvalidArgumentError, match="rank 1's section is read-only"):
        a += 1
    assert np.array_equal(a.get(), np.arange(8.0))


def test_asarray_without_a_copy_is_refused_as_numpy_2_asks():
    # Rule: np.asarray(a, copy=False) raises ValueError (hunt 13 #4: it returned a gathered copy,
    # whose writes the caller took to reach the array and which were lost).
    host, a, _ = _pair()
    with pytest.raises(ValueError, match="cannot view them without a copy"):
        np.asarray(a, copy=False)
    assert np.array_equal(np.asarray(a), host) and np.array_equal(np.array(a, dtype=np.int32), host.astype(np.int32))


@pytest.mark.parametrize("nranks", [1, 3])
def test_distribute_converts_to_the_dtype_it_is_given(nranks):
    # Rule: distribute(x, layout, dtype=d) deals out x converted to d, as np.asarray(x, d) (hunt 13
    # #9: the root's section kept x's dtype and the others took d: over 3 ranks 'src has dtype
    # float32 but the plan was made for float64'; over 1 rank d was ignored, float64 came back).
    host = np.arange(6.0) + 0.5
    a = gdap.distribute(host, layout.block((6,), nranks), devices=nranks, dtype=np.float32)
    assert a.dtype == np.float32
    assert np.array_equal(a.get(), host.astype(np.float32))
    b = gdap.distribute(np.array([1.7, -1.7, 2.0]), layout.block((3,), nranks), devices=nranks, dtype=np.int64)
    assert b.dtype == np.int64 and np.array_equal(b.get(), [1, -1, 2])


def test_distribute_takes_a_list_as_numpy_reads_it():
    # Rule: a list (or any array-like without a dtype) is read as np.asarray reads it on every rank
    # (hunt 13 #9: ranks other than the root said 'give dtype on the ranks that pass no array').
    a = gdap.distribute([1, 2, 3], layout.block((3,), 2), devices=2)
    assert a.dtype == np.asarray([1, 2, 3]).dtype and np.array_equal(a.get(), [1, 2, 3])
    f = gdap.distribute([[1.5, 2], [3, 4]], layout.block((2, 2), 2), devices=2, dtype=np.float32)
    assert f.dtype == np.float32 and np.array_equal(f.get(), [[1.5, 2], [3, 4]])


def test_element_wise_arithmetic_on_a_0d_array():
    # Rule: a + 1, -a, a == 2, a * a, a += 1 on a 0-d GlobalArray give 0-d GlobalArrays (hunt 13
    # #10: NumPy returns a scalar for 0-d operands and wrapping it raised AttributeError "'memoryview'
    # object has no attribute 'ptr'"; astype's 0-d result was wrapped as a (1,) array).
    a = gdap.GlobalArray.from_sections([np.array(2.0)], gdap.GlobalMap([()]))
    cases = ((a + 1, 3.0, np.float64), (-a, -2.0, np.float64), (a * a, 4.0, np.float64), (a == 2, True, np.bool_),
             (a.astype(np.int32), 2, np.int32))
    for got, value, dtype in cases:
        assert got.shape == () and got.local_view(0).shape == (), got
        assert got[()] == value and got.dtype == dtype, (got[()], got.dtype)
    a += 1
    assert a[()] == 3.0 and a.sum() == 3.0


def test_in_place_arithmetic_on_sections_sharing_memory_counts_each_element_once():
    # Rule: replicas over one buffer are written with one result (each rank's result is computed
    # before any rank writes: written rank by rank, the buffer got += 1 twice).
    shared = np.arange(4.0)
    a = gdap.GlobalArray.from_sections([shared, shared], layout.replicated((4,), 2))
    a += 1
    a *= a
    assert np.array_equal(shared, (np.arange(4.0) + 1) ** 2), shared
    assert np.array_equal(a.get(), shared)

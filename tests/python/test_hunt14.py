"""The Python layer against hostile-input hunt 14 (defects 2 and 5: misaligned element data, and
destinations whose elements overlap). Each test names its rule."""
import numpy as np
import pytest

import gdap
from conftest import block


def _unaligned(n):
    raw = np.zeros(8 * n + 8, dtype=np.uint8)
    a = np.frombuffer(raw, dtype=np.float64, count=n, offset=1)
    assert not a.flags.aligned
    return a


def test_an_unaligned_numpy_array_is_refused_with_a_copy_as_the_advice():
    # Rule: data off its dtype's alignment is refused (hunt 14 #5: it was wrapped, and typed loops
    # read misaligned doubles); NumPy's DLPack export does not refuse it, so gdap names the cure.
    a = _unaligned(4)
    with pytest.raises(gdap.InvalidArgumentError, match=r"not aligned for float64 .*multiple of 8 bytes.*x\.copy\(\)"):
        gdap.from_dlpack(a)
    section = gdap.from_dlpack(a.copy())  # the advice works
    assert np.array_equal(np.from_dlpack(section), a)


def test_an_unaligned_capsule_is_refused_by_the_c_library():
    # Rule: the same check holds for a capsule (no NumPy array to look at): the C library names the
    # address and the dtype.
    a = _unaligned(4)
    with pytest.raises(gdap.InvalidArgumentError, match=r"DLPack tensor data \+ byte_offset 0x[0-9a-f]+ is not aligned "
                                                        r"for float64"):
        gdap.from_dlpack(a.__dlpack__())


def test_wrap_of_an_odd_address_is_refused():
    raw = np.zeros(80, dtype=np.uint8)
    with pytest.raises(gdap.InvalidArgumentError, match=r"data 0x[0-9a-f]+ is not aligned for float64"):
        gdap.wrap(raw.ctypes.data + 1, np.float64, 4, owner=raw)


def test_a_broadcast_view_is_a_source_but_not_a_destination():
    # Rule: a stride-0 view (np.broadcast_to) may be read; written, two indices would be one element
    # (hunt 14 #2: gdap_redistribute wrote such a destination and left a silent wrong answer).
    whole = gdap.GlobalMap([[block(2, 0, 2), block(3, 0, 3)]])
    plan = gdap.Plan(whole, whole, np.float64, 0)
    (comm,) = gdap.group(1)
    row = np.arange(3.0)
    view = np.broadcast_to(row, (2, 3))
    target = np.zeros((2, 3))
    gdap.redistribute(comm, plan, view, target)
    assert np.array_equal(target, view)
    writable = np.lib.stride_tricks.as_strided(np.zeros(3), shape=(2, 3), strides=(0, 8))
    with pytest.raises(gdap.InvalidArgumentError, match=r"dst has strides \(0, 1\) on shape 2 x 3: axis 0"):
        gdap.redistribute(comm, plan, np.ones((2, 3)), writable)
    assert np.array_equal(writable, np.zeros((2, 3))), "nothing was written"

"""Ownership: DLPack capsule destructors run, every deleter runs exactly once, nothing leaks, in
every order of closing, exporting and consuming."""
import gc
import sys
import weakref

import numpy as np
import pytest

import gdap
from gdap import _gdap_c as c


class Buffer(np.ndarray):
    """A NumPy array type that can be weakly referenced and counted."""


def tracked(n=1000):
    a = np.arange(n, dtype=np.float64).view(Buffer)
    return a, weakref.ref(a)


def test_import_releases_the_producer_once_closed():
    a, alive = tracked()
    la = gdap.from_dlpack(a)
    del a
    gc.collect()
    assert alive() is not None  # gdap holds the producer's tensor
    la.close()
    gc.collect()
    assert alive() is None  # NumPy's deleter ran


@pytest.mark.parametrize("versioned", [True, False])
def test_ten_thousand_dropped_capsules_release_everything(versioned):
    a, alive = tracked()
    la = gdap.from_dlpack(a)
    del a
    for _ in range(10000):
        capsule = la.__dlpack__(max_version=(1, 0) if versioned else None)
        del capsule  # never consumed: the capsule destructor calls the deleter
    la.close()
    gc.collect()
    assert alive() is None  # had one export leaked, the memory would still be referenced


def test_consumed_exports_outlive_the_array_then_release():
    a, alive = tracked()
    la = gdap.from_dlpack(a)
    del a
    views = [np.from_dlpack(la) for _ in range(100)]
    la.close()
    gc.collect()
    assert alive() is not None and views[0][5] == 5.0  # memory valid after close
    del views
    gc.collect()
    assert alive() is None


def test_interface_views_keep_memory_after_close():
    a, alive = tracked()
    la = gdap.from_dlpack(a)
    del a
    view = np.asarray(la)  # __array_interface__: its base is the LocalArray
    la.close()
    del la
    gc.collect()
    assert alive() is not None and view[3] == 3.0
    del view
    gc.collect()
    assert alive() is None


def test_refused_import_leaves_the_capsule_to_its_producer():
    a, alive = tracked()
    capsule = a.__dlpack__(max_version=(1, 0))
    del a
    with pytest.raises(gdap.ProtocolError):
        gdap.from_dlpack(capsule, dim_data=({}, {}))  # ndim mismatch: gdap takes nothing
    assert '"dltensor_versioned"' in repr(capsule)
    del capsule  # NumPy's capsule destructor frees it
    gc.collect()
    assert alive() is None


class Owner:
    """Stands for a __cuda_array_interface__ producer: memory plus the object keeping it."""

    def __init__(self):
        self.memory = np.arange(8, dtype=np.int32)


def test_pointer_tensor_deleter_runs_exactly_once():
    owner = Owner()
    base = sys.getrefcount(owner)
    capsule = c.gdap_py_tensor_from_pointer(owner.memory.ctypes.data, (8,), None, (0, 32, 1), (1, 0), 0, owner)
    assert sys.getrefcount(owner) == base + 1
    la = gdap.from_dlpack(capsule)
    exported = [la.__dlpack__(max_version=(1, 0)) for _ in range(3)] + [np.from_dlpack(la)]
    assert la.data_ptr == owner.memory.ctypes.data
    del capsule
    la.close()
    assert sys.getrefcount(owner) == base + 1  # the exports still hold the memory
    del exported
    gc.collect()
    assert sys.getrefcount(owner) == base  # released once: twice would go below the base count


def test_dropped_pointer_capsule_releases_its_owner():
    owner = Owner()
    base = sys.getrefcount(owner)
    for _ in range(1000):
        c.gdap_py_tensor_from_pointer(owner.memory.ctypes.data, (8,), (1,), (0, 32, 1), (1, 0), 0, owner)
    gc.collect()
    assert sys.getrefcount(owner) == base


def test_wrap_keeps_its_owner():
    a, alive = tracked()
    la = gdap.wrap(a.ctypes.data, a.dtype, a.shape, owner=a)
    del a
    gc.collect()
    assert alive() is not None
    la.close()
    del la
    gc.collect()
    assert alive() is None


def test_collected_arrays_destroy_their_handles():
    a, alive = tracked()
    gdap.from_dlpack(a)  # dropped at once: the finalizer destroys the handle
    del a
    gc.collect()
    assert alive() is None

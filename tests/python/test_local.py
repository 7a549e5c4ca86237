"""LocalArray on the host: the protocol dict, zero-copy round trips through __distarray__, DLPack,
the array interface and plain buffers (pointer identity, and a write through one view seen
through the other), index conversions and life cycle."""
import array
import ctypes

import numpy as np
import pytest

import gdap
from conftest import block, cyclic, unstructured


def ptr(a):
    return a.__array_interface__["data"][0]


# ---- the protocol dict ------------------------------------------------------------------------

DISTRIBUTIONS = [  # (rule, dim_data, local shape)
    ("block with all optional keys", (block(10, 4, 8, grid=3, rank=1, padding=(1, 1), periodic=False),), (4,)),
    ("block without optional keys", (block(10, 0, 5, grid=2, rank=0),), (5,)),
    ("cyclic with block_size", (cyclic(10, 2, 1, block_size=2),), (4,)),
    ("cyclic without block_size", (cyclic(7, 3, 2),), (2,)),
    ("2-d block x cyclic", (block(6, 3, 6, grid=2, rank=1), cyclic(5, 2, 0)), (3, 3)),
    ("0-d", (), ()),
]


@pytest.mark.parametrize("rule,dim_data,shape", DISTRIBUTIONS, ids=[case[0] for case in DISTRIBUTIONS])
def test_distarray_is_exactly_the_protocol_dict(rule, dim_data, shape):
    la = gdap.empty(dim_data, dtype=np.int32)
    d = la.__distarray__()
    assert set(d) == {"__version__", "buffer", "dim_data"}
    assert d["__version__"] == "0.10.0"
    assert type(d["dim_data"]) is tuple
    assert d["dim_data"] == tuple(dim_data)  # only the optional keys that were given
    for got in d["dim_data"]:
        assert type(got) is dict
        for key, value in got.items():
            assert type(value) in (str, int, bool, tuple), (key, type(value))
            if key == "padding":
                assert all(type(v) is int for v in value)
    assert isinstance(d["buffer"], np.ndarray)
    assert d["buffer"].shape == shape and d["buffer"].dtype == np.int32
    assert ptr(d["buffer"]) == la.data_ptr


def test_unstructured_indices_are_an_int64_array():
    indices = np.array([7, 2, 5], dtype=np.int64)
    la = gdap.from_dlpack(np.zeros(3), dim_data=(unstructured(10, indices, one_to_one=True),))
    (dim,) = la.dim_data
    assert dim["dist_type"] == "u" and dim["one_to_one"] is True
    assert isinstance(dim["indices"], np.ndarray) and dim["indices"].dtype == np.int64
    assert dim["indices"].tolist() == [7, 2, 5]
    assert la.global_to_local((5,)) == (2,)
    assert la.local_to_global((1,)) == (2,)
    with pytest.raises(gdap.NotFoundError):
        la.global_to_local((3,))


def test_empty_dicts_resolve_from_the_buffer_shape():
    a = np.zeros((2, 3))
    la = gdap.from_distarray({"__version__": "0.10.0", "buffer": a, "dim_data": ({}, {})})
    assert la.dim_data == (block(2, 0, 2), block(3, 0, 3))


# ---- zero-copy round trips ----------------------------------------------------------------------

def test_distarray_round_trip_keeps_the_pointer():
    la = gdap.empty((block(8, 0, 4, grid=2, rank=0), {"dist_type": "b", "size": 3, "proc_grid_size": 1,
                                                       "proc_grid_rank": 0, "start": 0, "stop": 3}), np.float64)
    back = gdap.from_distarray(la)  # the object itself: __distarray__ is called
    assert back.data_ptr == la.data_ptr
    assert back.dim_data == la.dim_data
    view_a = np.asarray(la)
    view_b = np.asarray(back)
    view_b[1, 2] = 42.0
    assert view_a[1, 2] == 42.0
    assert ptr(view_a) == ptr(view_b) == la.data_ptr


def test_from_distarray_of_a_numpy_dict_is_zero_copy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    la = gdap.from_distarray({"__version__": "0.10.0", "buffer": a,
                              "dim_data": (block(6, 3, 6, grid=2, rank=1), {})})
    assert la.data_ptr == a.ctypes.data
    np.asarray(la)[0, 0] = -1
    assert a[0, 0] == -1
    a[2, 3] = 99
    assert la.__distarray__()["buffer"][2, 3] == 99


def test_from_dlpack_numpy_is_zero_copy():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    la = gdap.from_dlpack(a)
    assert la.data_ptr == a.ctypes.data and la.shape == (2, 3) and la.dtype == np.int64
    assert la.device == "cpu" and la.__dlpack_device__() == (1, 0)
    np.asarray(la)[1, 1] = 100
    assert a[1, 1] == 100


def test_np_from_dlpack_of_a_local_array_is_zero_copy():
    la = gdap.empty((4, 5), np.float32)
    b = np.from_dlpack(la)
    assert ptr(b) == la.data_ptr
    b[3, 4] = 7
    assert np.asarray(la)[3, 4] == 7


def test_strided_sections_keep_their_strides():
    base = np.arange(20.0).reshape(4, 5)
    view = base[::2, 1::2]  # strides in elements (10, 2)
    la = gdap.from_dlpack(view)
    assert la.strides == (10, 2) and la.data_ptr == view.ctypes.data
    out = np.asarray(la)
    assert out.strides == view.strides and np.array_equal(out, view)
    out[1, 1] = -5
    assert base[2, 3] == -5


def test_unversioned_dlpack_export_for_old_consumers():
    la = gdap.empty((3,), np.int16)
    capsule = la.__dlpack__()  # max_version None: the unversioned struct
    assert "dltensor" in repr(capsule) and "versioned" not in repr(capsule)
    back = gdap.from_dlpack(capsule)
    assert back.data_ptr == la.data_ptr
    assert "used_dltensor" in repr(capsule)


def test_versioned_capsule_is_renamed_once_taken():
    capsule = np.zeros(3).__dlpack__(max_version=(1, 0))
    gdap.from_dlpack(capsule)
    assert '"used_dltensor_versioned"' in repr(capsule)


@pytest.mark.parametrize("kwargs", [dict(copy=True), dict(dl_device=(2, 0)), dict(stream=1)])
def test_dlpack_export_refuses_copies_and_other_devices(kwargs):
    with pytest.raises(BufferError):
        gdap.empty((2,)).__dlpack__(max_version=(1, 0), **kwargs)


# ---- other producers -------------------------------------------------------------------------------

def _address(buffer):
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))


BUFFERS = [  # (rule, make buffer, dtype seen, shape)
    ("bytearray", lambda: bytearray(8), np.uint8, (8,)),
    ("memoryview of a bytearray", lambda: memoryview(bytearray(16)).cast("d"), np.float64, (2,)),
    ("array.array", lambda: array.array("i", [1, 2, 3]), np.int32, (3,)),
    ("2-d memoryview", lambda: memoryview(bytearray(24)).cast("B", (4, 6)), np.uint8, (4, 6)),
]


@pytest.mark.parametrize("rule,make,dtype,shape", BUFFERS, ids=[case[0] for case in BUFFERS])
def test_buffer_protocol_producers_are_zero_copy(rule, make, dtype, shape):
    buffer = make()
    address = _address(buffer.obj if isinstance(buffer, memoryview) else buffer)
    la = gdap.from_distarray({"__version__": "0.10.0", "buffer": buffer, "dim_data": tuple({} for _ in shape)})
    assert la.data_ptr == address
    assert la.dtype == dtype and la.shape == shape
    view = np.asarray(la)
    view.reshape(-1)[0] = 9
    assert memoryview(buffer).cast("B")[0] == 9 if view.itemsize == 1 else np.frombuffer(buffer, dtype)[0] == 9


def test_a_bytearray_cannot_be_resized_while_shared():
    buffer = bytearray(8)
    la = gdap.from_distarray({"__version__": "0.10.0", "buffer": buffer, "dim_data": ({},)})
    with pytest.raises(BufferError):
        buffer.extend(b"x" * 100)  # would move the memory under gdap
    la.close()


def test_read_only_buffers_stay_read_only():
    la = gdap.from_distarray({"__version__": "0.10.0", "buffer": b"abcd", "dim_data": ({},)})
    assert la.readonly
    view = np.asarray(la)
    assert not view.flags.writeable
    with pytest.raises(gdap.UnsupportedError):
        la.__dlpack__()  # the unversioned struct cannot say read-only


def test_a_foreign_distarray_producer():
    class Producer:
        def __init__(self):
            self.data = np.arange(4.0)

        def __distarray__(self):
            return {"__version__": "0.10.0", "buffer": self.data, "dim_data": (block(8, 4, 8, grid=2, rank=1),)}

    p = Producer()
    la = gdap.from_distarray(p)
    assert la.data_ptr == p.data.ctypes.data
    assert la.global_to_local((5,)) == (1,)


@pytest.mark.parametrize("distbuffer,message", [
    ({"buffer": np.zeros(1), "dim_data": ({},)}, "missing required key '__version__'"),
    ({"__version__": "0.10.0", "buffer": np.zeros(1), "dim_data": ({},), "extra": 1}, "unknown key"),
    ({"__version__": "0.10.0", "buffer": [1, 2], "dim_data": ({},)}, "buffer"),
    ({"__version__": "0.10.0", "buffer": np.zeros(2), "dim_data": ({}, {})}, "2 dimensions"),
    ({"__version__": 10, "buffer": np.zeros(2), "dim_data": ({},)}, "'__version__' must be a string"),
    ([1, 2, 3], "must be a dict"),
])
def test_bad_distbuffers(distbuffer, message):
    with pytest.raises(gdap.ProtocolError, match=message):
        gdap.from_distarray(distbuffer)


# ---- creation, indices, life cycle -------------------------------------------------------------------

def test_empty_is_zero_filled_and_c_contiguous():
    la = gdap.empty((cyclic(10, 3, 1, block_size=2),), np.complex128)
    assert la.shape == (4,) and la.strides == (1,)
    assert la.dtype == np.complex128
    assert not np.asarray(la).any()


def test_wrap_retains_caller_memory():
    a = np.arange(6.0)
    la = gdap.wrap(a.ctypes.data, a.dtype, (block(12, 6, 12, grid=2, rank=1),), owner=a)
    assert la.data_ptr == a.ctypes.data and la._owner is a
    assert la.local_to_global((0,)) == (6,)
    np.asarray(la)[0] = 50
    assert a[0] == 50


INDEX_CASES = [  # (rule, dim_data, global, local)
    ("block with padding holds its halo", (block(10, 3, 8, grid=3, rank=1, padding=(1, 1)),), (3,), (0,)),
    ("cyclic block_size 2", (cyclic(10, 2, 1, block_size=2),), (7,), (3,)),
    ("2-d", (block(4, 2, 4, grid=2, rank=1), cyclic(6, 3, 2)), (3, 5), (1, 1)),
]


@pytest.mark.parametrize("rule,dim_data,global_index,local_index", INDEX_CASES, ids=[case[0] for case in INDEX_CASES])
def test_global_local_round_trip(rule, dim_data, global_index, local_index):
    la = gdap.empty(dim_data)
    assert la.global_to_local(global_index) == local_index
    assert la.local_to_global(local_index) == global_index


def test_close_is_deterministic_and_views_survive():
    with gdap.empty((3,), np.int64) as la:
        view = np.asarray(la)
        exported = np.from_dlpack(la)
        view[0] = 1
    assert la.closed and "closed" in repr(la)
    with pytest.raises(ValueError):
        la.dim_data
    view[1] = 2  # the memory lives while a view uses it
    assert exported.tolist() == [1, 2, 0]
    la.close()  # idempotent


def test_interfaces_by_device():
    la = gdap.empty((2, 2))
    assert la.__array_interface__["version"] == 3
    assert not hasattr(la, "__cuda_array_interface__")


def test_dim_helpers():
    d = cyclic(10, 3, 1, block_size=2)
    assert gdap.dim_owned_count(d) == 4 and gdap.dim_local_extent(d) == 4
    assert gdap.dim_global_to_local(d, 3) == 1 and gdap.dim_local_to_global(d, 2) == 8
    assert gdap.dim_runs(d) == [(2, 2, 0), (8, 2, 2)]

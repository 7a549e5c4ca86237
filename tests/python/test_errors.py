"""Errors: every C failure is a Python exception of its status's class carrying the C message;
bad input never crashes. Each case names the rule it checks."""
import numpy as np
import pytest

import gdap
from gdap import _gdap_c as c
from conftest import block, cyclic, rank_errors, unstructured

STATUS_CLASSES = [  # (status, class, built-in it also is)
    (c.GDAP_ERR_INVALID_ARGUMENT, gdap.InvalidArgumentError, ValueError),
    (c.GDAP_ERR_PROTOCOL, gdap.ProtocolError, ValueError),
    (c.GDAP_ERR_VERSION, gdap.VersionError, ValueError),
    (c.GDAP_ERR_OVERFLOW, gdap.SizeOverflowError, OverflowError),
    (c.GDAP_ERR_OUT_OF_RANGE, gdap.OutOfRangeError, IndexError),
    (c.GDAP_ERR_NOT_FOUND, gdap.NotFoundError, LookupError),
    (c.GDAP_ERR_BUFFER_TOO_SMALL, gdap.BufferTooSmallError, gdap.Error),
    (c.GDAP_ERR_NO_MEMORY, gdap.OutOfMemoryError, MemoryError),
    (c.GDAP_ERR_UNSUPPORTED, gdap.UnsupportedError, gdap.Error),
    (c.GDAP_ERR_DEVICE, gdap.DeviceError, gdap.Error),
    (c.GDAP_ERR_COMM, gdap.CommError, gdap.Error),
    (c.GDAP_ERR_REMOTE, gdap.RemoteError, gdap.Error),
    (c.GDAP_ERR_TIMEOUT, gdap.CollectiveTimeoutError, TimeoutError),
    (c.GDAP_ERR_IO, gdap.FileIOError, OSError),
    (c.GDAP_ERR_INTERNAL, gdap.InternalError, gdap.Error),
]


@pytest.mark.parametrize("status,cls,builtin", STATUS_CLASSES)
def test_one_class_per_status(status, cls, builtin):
    from gdap._errors import error_class
    assert error_class(status) is cls
    assert issubclass(cls, gdap.Error) and issubclass(cls, builtin)
    assert cls.status == status
    assert cls("x").status_name == c.gdap_status_string(status)


# (rule, dim_data, shape, exception, fragments the message must contain: dimension and key)
INVALID = [
    ("stop beyond size", [block(10, 0, 12)], None, gdap.ProtocolError, ["dimension 0 ('b')", "stop (12)", "size (10)"]),
    ("extent equals stop - start", [block(10, 0, 10)], (9,), gdap.ProtocolError, ["dimension 0 ('b')", "buffer shape (9)"]),
    ("rank inside the grid", [block(10, 0, 10), block(4, 0, 4, grid=1, rank=2)], None, gdap.ProtocolError,
     ["dimension 1 ('b')", "proc_grid_rank (2)"]),
    ("block_size >= 1", [cyclic(10, 2, 1, block_size=0)], None, gdap.ProtocolError, ["dimension 0 ('c')", "block_size (0)"]),
    ("unique unstructured indices", [unstructured(10, [1, 1])], None, gdap.ProtocolError, ["dimension 0 ('u')", "indices"]),
    ("required key", [{"dist_type": "b", "size": 10, "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0}], None,
     gdap.ProtocolError, ["dimension 0 ('b')", "missing required key 'stop'"]),
    ("keys of the dist_type only", [block(10, 0, 10, block_size=2)], None, gdap.ProtocolError,
     ["dimension 0 ('b')", "'block_size'", "not a key of dist_type 'b'"]),
    ("unknown key", [block(10, 0, 10, colour=1)], None, gdap.ProtocolError, ["dimension 0 ('b')", "unknown key 'colour'"]),
    ("integers are integers", [block(True, 0, 10)], None, gdap.ProtocolError, ["dimension 0 ('b')", "key 'size'", "boolean"]),
    ("booleans are booleans", [block(10, 0, 10, periodic=1)], None, gdap.ProtocolError, ["key 'periodic'", "boolean"]),
    ("padding is 2 integers", [block(10, 0, 10, padding=(1,))], None, gdap.ProtocolError, ["key 'padding'"]),
    ("dist_type is b, c or u", [{"dist_type": "x"}], None, gdap.ProtocolError, ["dimension 0", "dist_type 'x'"]),
    ("dicts only", [[1, 2]], None, gdap.ProtocolError, ["dimension 0", "must be a dict"]),
    ("{} needs a shape", [{}], None, gdap.ProtocolError, ["dimension 0", "empty dictionary"]),
    ("int64 sizes", [block(1 << 70, 0, 10)], None, gdap.SizeOverflowError, ["dimension 0 ('b')", "key 'size'", "int64"]),
    ("shape length is ndim", [block(10, 0, 10)], (10, 1), gdap.InvalidArgumentError, ["shape", "ndim"]),
]


@pytest.mark.parametrize("rule,dim_data,shape,exc,fragments", INVALID, ids=[case[0] for case in INVALID])
def test_invalid_dim_data_names_dimension_and_key(rule, dim_data, shape, exc, fragments):
    with pytest.raises(exc) as info:
        gdap.validate(dim_data, shape=shape)
    for fragment in fragments:
        assert fragment in str(info.value), (rule, str(info.value))


VALID = [
    ("block", [block(10, 0, 10)], (10,)),
    ("boundary padding", [block(10, 0, 10, padding=(1, 1))], (10,)),
    ("periodic single rank with boundary padding", [block(10, 0, 10, padding=(2, 2), periodic=True)], (10,)),
    ("cyclic with block_size", [cyclic(10, 2, 1, block_size=3)], (4,)),
    ("unstructured, unordered and negative", [unstructured(10, np.array([5, -1, 3]), one_to_one=False)], (3,)),
    ("{} resolved from the shape", [{}, {}], (2, 3)),
    ("0-d", [], ()),
]


@pytest.mark.parametrize("rule,dim_data,shape", VALID, ids=[case[0] for case in VALID])
def test_valid_dim_data(rule, dim_data, shape):
    assert gdap.validate(dim_data, shape=shape) is None


@pytest.mark.parametrize("version,exc", [
    ("1.0.0", gdap.VersionError), ("0.11.0", gdap.VersionError), ("0.9.0", gdap.VersionError),
    ("0.0.0", gdap.VersionError), ("abc", gdap.InvalidArgumentError),
    ("0.10", gdap.InvalidArgumentError), (10, gdap.InvalidArgumentError)])
def test_protocol_version_check_refuses(version, exc):
    with pytest.raises(exc):
        gdap.protocol_version_check(version)


@pytest.mark.parametrize("version", ["0.10.0", "0.10.3"])
def test_protocol_version_check_accepts(version):
    assert gdap.protocol_version_check(version) is None


def test_version_mismatch_in_a_distbuffer():
    a = np.zeros(4)
    with pytest.raises(gdap.VersionError, match="major 1"):
        gdap.from_distarray({"__version__": "1.0.0", "buffer": a, "dim_data": ({},)})
    with pytest.raises(gdap.VersionError):
        gdap.from_dlpack(a, version="0.99.0")


BAD_CALLS = [  # never a crash: the low-level module refuses bad arguments with exceptions
    ("a handle of the wrong type", lambda: c.gdap_array_ndim(c.gdap_dim()), TypeError),
    ("a NULL handle", lambda: c.gdap_array_ndim(None), gdap.InvalidArgumentError),
    ("a NULL map", lambda: c.gdap_map_ndim(None), gdap.InvalidArgumentError),
    ("a short index", lambda: gdap.empty((2, 3)).global_to_local((1,)), gdap.InvalidArgumentError),
    ("a long index", lambda: gdap.empty((2, 3)).local_to_global((1, 1, 1)), gdap.InvalidArgumentError),
    ("not integers", lambda: gdap.empty((2, 3)).global_to_local(("a", 1)), gdap.InvalidArgumentError),
    ("not a capsule", lambda: c.gdap_array_from_dlpack(object(), [], None), TypeError),
    ("a used capsule", lambda: _used_capsule(), ValueError),
    ("grid coordinates of another length", lambda: gdap.grid_coords_to_rank((1,), (2, 2)), gdap.InvalidArgumentError),
    ("dims of another length than nranks * ndim", lambda: c.gdap_map_create(2, 1, [c.gdap_dim()]),
     gdap.InvalidArgumentError),
    ("not gdap_dim objects", lambda: c.gdap_dims_validate([1, 2], None), TypeError),
    ("a dtype that is not a tuple", lambda: c.gdap_array_create("f8", (1, 0), []), TypeError),
    ("an unknown device", lambda: gdap.empty((2,), device="tpu"), ValueError),
    ("a device gdap does not support", lambda: gdap.empty((2,), device=(99, 0)), gdap.Error),
    ("an unsupported dtype", lambda: gdap.empty((2,), dtype=object), gdap.UnsupportedError),
    ("{} in empty()", lambda: gdap.empty([{}]), gdap.ProtocolError),
    ("a closed array", lambda: _closed().shape, ValueError),
]


def _used_capsule():
    capsule = np.zeros(3).__dlpack__(max_version=(1, 0))
    gdap.from_dlpack(capsule)
    return gdap.from_dlpack(capsule)


def _closed():
    a = gdap.empty((2,))
    a.close()
    return a


@pytest.mark.parametrize("rule,call,exc", BAD_CALLS, ids=[case[0] for case in BAD_CALLS])
def test_bad_calls_raise(rule, call, exc):
    with pytest.raises(exc):
        call()


def test_error_text_is_gdap_last_error():
    with pytest.raises(gdap.ProtocolError) as info:
        gdap.validate([block(10, 0, 12)])
    assert str(info.value) == c.gdap_last_error()


# ---- memory shared between a call's input and output (issue 27, item 1) ----

def test_redistribute_into_its_own_source_is_refused():
    # Rule: gdap.redistribute(comm, plan, a, a) (the same memory as source and destination) is
    # refused and changes nothing; it used to return wrong data.
    d = block(8, 0, 8)
    gmap = gdap.GlobalMap([[d]])
    cyc = gdap.GlobalMap([[dict(dist_type="c", size=8, proc_grid_size=1, proc_grid_rank=0, start=0, block_size=3)]])
    comm = gdap.group(1)[0]
    plan = gdap.Plan(gmap, cyc, np.float64, 0)
    a = np.arange(8.0)
    with pytest.raises(gdap.InvalidArgumentError, match="dst shares memory with src"):
        gdap.redistribute(comm, plan, a, a)
    with pytest.raises(gdap.InvalidArgumentError, match="dst shares memory with src"):
        gdap.redistribute(comm, plan, a, a[::-1])  # overlapping, not equal pointers
    np.testing.assert_array_equal(a, np.arange(8.0))


def test_ranks_of_a_group_reducing_one_array_are_refused():
    # Rule: on an in-process group, two ranks passing the same memory ([a] * n) are refused on every
    # rank, naming both, and nothing changes.
    comms = gdap.group(2)
    a = np.arange(4.0)
    errors = rank_errors(2, lambda r: gdap.allreduce(comms[r], a))
    for e in errors:
        assert isinstance(e, gdap.InvalidArgumentError), e
        assert "rank 0's section and rank 1's section share memory" in str(e)
    np.testing.assert_array_equal(a, np.arange(4.0))

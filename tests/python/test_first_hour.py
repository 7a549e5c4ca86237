"""What a new user met in the first hour (session 12's report): NumPy's reduction functions on a
GlobalArray, devices given as one str, errors that named C calls or C dtype codes, a wrong-size
redistribute destination, load_dnpy's rank count, and a layout whose block rule differs from the
sections'. Each test fails on the code before these fixes."""
import numpy as np
import pytest

import gdap
from gdap import layout


@pytest.fixture
def a():
    return gdap.distribute(np.arange(40.0).reshape(10, 4), layout.block((10, 4), 4))


def test_numpy_reductions_call_the_methods(a):
    whole = np.arange(40.0).reshape(10, 4)
    assert np.sum(a) == whole.sum() and np.max(a) == whole.max() and np.min(a) == whole.min()
    assert np.mean(a) == whole.mean() and np.prod(a + 1) == np.prod(whole + 1)
    assert np.allclose(np.sum(a, axis=0).get(), whole.sum(axis=0))
    assert np.allclose(np.max(a, axis=1).get(), whole.max(axis=1))


def test_numpy_reduction_dtype_is_honoured():
    small = gdap.distribute(np.full(12, 100, np.int8), layout.block(12, 4))
    assert np.sum(small) == 1200 and np.sum(small).dtype == np.int64               # NumPy's default
    assert np.sum(small, dtype=np.int32).dtype == np.int32
    assert np.sum(small, dtype=np.int8) == np.sum(np.full(12, 100, np.int8), dtype=np.int8)  # wraps as NumPy's
    mean = np.mean(small, dtype=np.float32)
    assert mean == 100 and mean.dtype == np.float32


@pytest.mark.parametrize("call, words", [
    (lambda a: np.sum(a, out=np.zeros(())), "out"),
    (lambda a: np.max(a, keepdims=True), "keepdims=True"),
    (lambda a: np.sum(a, where=True), "where"),
    (lambda a: np.min(a, initial=0.0), "initial"),
    (lambda a: np.mean(a, dtype=np.int64), "dtype=int64"),
])
def test_numpy_keywords_gdap_cannot_honour_are_refused_by_name(a, call, words):
    with pytest.raises(gdap.UnsupportedError, match=words):
        call(a)


@pytest.mark.parametrize("devices", ["cuda", "cpu", b"cpu"])
def test_devices_given_as_one_str_is_refused(devices):
    with pytest.raises(TypeError, match="one device per rank|takes one per rank"):
        gdap.distribute(np.zeros(4), layout.block(4, 1), devices=devices)
    with pytest.raises(TypeError, match="takes one per rank"):
        gdap.GlobalArray.zeros(layout.block(4, 3), devices=devices)


def test_c_calls_named_as_the_fix_are_given_in_python():
    with pytest.raises(gdap.ProtocolError) as e:
        gdap.empty_shm([dict(dist_type="b", size=2, proc_grid_size=1, proc_grid_rank=0, start=0, stop=2), {}],
                       "float64")
    assert "gdap_dim_set_undistributed" not in str(e.value) and "give a shape" in str(e.value), e.value
    with pytest.raises(gdap.UnsupportedError) as e:
        gdap.ipc_export(np.zeros((2, 6)), [dict(dist_type="b", size=2, proc_grid_size=1, proc_grid_rank=0,
                                                start=0, stop=2), {}])
    assert "gdap_array_create_shm" not in str(e.value) and "gdap.empty_shm" in str(e.value), e.value


@pytest.mark.parametrize("dtype, name", [(np.float16, "float16"), (np.complex128, "complex128")])
def test_dtypes_are_named_as_numpy_names_them(dtype, name):
    # gdap.allreduce: GlobalArray.sum now reduces float16 and complex (in float32, as real and imaginary parts)
    with pytest.raises(gdap.UnsupportedError) as e:
        gdap.allreduce(gdap.group(1)[0], np.arange(8).astype(dtype))
    assert "dtype %s cannot be reduced" % name in str(e.value) and "code" not in str(e.value), e.value


def test_a_wrong_size_destination_is_named():
    comms = gdap.group(1)
    plan = gdap.Plan(layout.block(10, 1), layout.block(10, 1), np.float64, comms[0])
    with pytest.raises(gdap.InvalidArgumentError, match=r"dst has local shape \(9,\) but the dst map gives rank 0 "
                                                        r"\(10,\)"):
        gdap.redistribute(comms[0], plan, np.zeros(10), np.zeros(9))
    with pytest.raises(gdap.InvalidArgumentError, match=r"src has local shape \(8,\)"):
        gdap.redistribute(comms[0], plan, np.zeros(8), np.zeros(10))


def test_load_dnpy_with_another_rank_count_suggests_devices(tmp_path):
    gdap.distribute(np.arange(12.0), layout.block(12, 3)).save_dnpy(tmp_path / "out")
    with pytest.raises(gdap.InvalidArgumentError, match=r"3 files .*out_<rank>.dnpy but this controller has 1 "
                                                        r"ranks: give devices=3 \(or nranks=3\)"):
        gdap.GlobalArray.load_dnpy(tmp_path / "out")
    assert (gdap.GlobalArray.load_dnpy(tmp_path / "out", devices=3).get() == np.arange(12.0)).all()


def test_sections_split_by_another_block_rule_are_named_with_the_rank():
    n, p = 10, 4
    parts = [np.zeros((n * (r + 1) // p - n * r // p, 6)) for r in range(p)]  # 2, 3, 2, 3 rows
    with pytest.raises(gdap.InvalidArgumentError) as e:
        gdap.GlobalArray.from_sections(parts, layout.block((n, 6), p))
    text = str(e.value)
    assert "dimension 0 ('b'): the layout gives rank 0 3 elements [0, 3) of 10, its section has 2" in text, text
    assert "same block rule" in text, text


def test_a_layout_repr_shows_the_blocks():
    text = repr(layout.block((10, 6), 4))
    assert "grid=(4, 1)" in text and "[0:3) [3:6) [6:9) [9:10)" in text and "axis 1: whole" in text, text

"""The Python layer against hostile-input hunt 12 (single controller on the host): a pending
reduction is performed before any read (astype, mean), a bool is no index, axis, count, rank or
extent, a string is no flag, unstructured indices must be integers, and the messages name what was
wrong. Each test names its rule. (The SPMD Zarr cases run over MPI: test_zarr_fail_fast_mpi.py.)"""
import numpy as np
import pytest

import gdap
from gdap import layout


def _pending_sum():
    # Two replicas of 4 elements holding partial sums: the values are 11 22 33 44.
    parts = [np.array([1, 2, 3, 4], np.int64), np.array([10, 20, 30, 40], np.int64)]
    return gdap.GlobalArray.from_sections(parts, layout.replicated((4,), 2), pending="sum")


def test_astype_performs_the_pending_reduction_first():
    # Rule: astype converts the values, not one replica's partial values.
    got = _pending_sum().astype(np.float64)
    assert got.pending is None
    assert np.array_equal(got.get(), [11.0, 22.0, 33.0, 44.0]), got.get()


def test_mean_of_a_pending_integer_array_is_the_mean_of_its_values():
    # Rule: mean of integers goes through astype(float64), which must settle first.
    assert _pending_sum().mean() == 27.5


def test_halo_exchange_of_a_pending_array_is_refused():
    # Rule: partial values never fill padding; the message says how to settle.
    parts = [np.ones(5), np.ones(5)]
    a = gdap.GlobalArray.from_sections(parts, layout.padded((8,), 2, halo=1), pending="sum")
    with pytest.raises(gdap.InvalidArgumentError, match="partial values .pending sum.*settled"):
        a.halo_exchange()


def _matrix():
    return gdap.distribute(np.arange(12.0).reshape(3, 4), layout.block((3, 4), 2))


@pytest.mark.parametrize("key", [True, False, (True, 0), (0, np.bool_(True))], ids=str)
def test_a_bool_is_no_index(key):
    # Rule: NumPy reads a[True] as a mask adding an axis; gdap must not read it as a[1].
    with pytest.raises(TypeError, match="is a boolean: NumPy reads True / False as a mask"):
        _matrix()[key]


@pytest.mark.parametrize("axis", [True, np.bool_(False), (0, True)], ids=str)
def test_a_bool_is_no_axis(axis):
    # Rule: a.sum(axis=True) is a TypeError in NumPy, not the sum over axis 1.
    with pytest.raises(TypeError, match="axis must be an integer, not boolean"):
        _matrix().sum(axis=axis)


def test_a_bool_is_no_axis_of_gdap_reduce_axes():
    # Rule: the section-level reduce_axes reads its axis the same way.
    comm = gdap.group(1)[0]
    with pytest.raises(TypeError, match="axis must be an integer, not boolean True"):
        gdap.reduce_axes(comm, np.zeros((2, 3)), np.zeros(3), "sum", axis=True)


@pytest.mark.parametrize("rows, kind", [([[0.0, 1.9], [2.5, 3.99]], "float64"), ([["0", "1"], ["2", "3"]], "<U1"),
                                        ([[0, 1], [True, False]], "bool")], ids=["floats", "strings", "bools"])
def test_unstructured_indices_must_be_integers(rows, kind):
    # Rule: layout.unstructured refuses what the dim_data path refuses, naming the rank (not int(1.9) = 1).
    rank = 1 if kind == "bool" else 0
    with pytest.raises(gdap.ProtocolError, match="rank %d: key 'indices' must hold integers, not %s" % (rank, kind)):
        layout.unstructured((4,), rows)


def test_unstructured_takes_every_integer_dtype():
    # Rule: the check refuses non-integers only: int32 and uint8 index arrays still make the layout.
    m = layout.unstructured((4,), [np.array([3, 0], np.int32), np.array([1, 2], np.uint8)])
    assert list(m.dim_data(0)[0]["indices"]) == [3, 0] and list(m.dim_data(1)[0]["indices"]) == [1, 2]

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

"""Float sums and means as accurate as NumPy's (review 13 item 1.1): gdap used to add one element
at a time in the array's dtype, so 4 x 1e8 plus 39996 ones summed to 4e8 in float32 and 4 x 1e16
plus ones to 4e16 in float64, and a float32 sum of random values was 80 times further off than
np.sum. Now each rank's partial is a sum in double, compensated except for float32 on GPUs
(docs/api.md, "Accuracy of float sums"). Checked in the in-process group (1 and 4 ranks, several
layouts), over 2 MPI processes (sum_accuracy_mpi_ranks.py), and on 2 GPUs (marked gpu)."""
import math

import numpy as np
import pytest

import gdap
from gdap import layout
from conftest import every_rank_ok
from test_global_gpu import _gpus


def big_and_ones(dtype, big):
    xs = np.ones(40000, dtype)
    xs[::10000] = big
    return xs


@pytest.mark.parametrize("nranks", [1, 4])
def test_float32_ones_beside_1e8_are_not_lost(nranks):
    xs = big_and_ones(np.float32, 1e8)
    a = gdap.distribute(xs, layout.block(xs.shape, nranks))
    np.testing.assert_allclose(a.sum(), xs.sum(), rtol=1e-6)        # before: 4e8, rel. error 1e-4
    np.testing.assert_allclose(a.sum(), 400039996, rtol=1e-7)       # the exact sum, correctly rounded
    np.testing.assert_allclose(a.mean(), xs.mean(), rtol=1e-6)      # before: 10000.0
    assert a.sum().dtype == np.float32 and a.mean().dtype == np.float32


@pytest.mark.parametrize("nranks", [1, 4])
def test_float64_ones_beside_1e16_are_not_lost(nranks):
    xs = big_and_ones(np.float64, 1e16)
    a = gdap.distribute(xs, layout.cyclic(xs.shape, nranks))
    exact = math.fsum(xs)                                           # 4.0000000000039996e16, rounded: ...40000
    assert abs(a.sum() - exact) <= np.spacing(exact), (a.sum(), exact)  # before: 4e16, 5000 ulps off
    assert abs(a.sum() - exact) <= abs(np.sum(xs) - exact)          # NumPy: 4.000000000003996e16, 36 off
    assert abs(a.mean() - exact / xs.size) <= np.spacing(exact / xs.size)


@pytest.mark.parametrize("shape, grid", [((1000, 999), (2, 2)), ((100000,), (4,))])
def test_random_float32_sums_as_closely_as_numpy(shape, grid):
    x = np.random.default_rng(13).random(shape, dtype=np.float32)
    a = gdap.distribute(x, layout.block_cyclic(x.shape, grid, 16))
    exact = x.sum(dtype=np.float64)
    assert abs(a.sum() - exact) <= max(abs(x.sum() - exact), np.spacing(np.float32(exact)))  # before: 1.8e-6 rel.
    np.testing.assert_allclose(a.sum(), x.sum())                    # NumPy's default rtol 1e-7


@pytest.mark.parametrize("grid", [(4, 1), (2, 2)])
def test_tall_float32_sum_over_axis_0(grid):
    x = np.random.default_rng(7).random((1 << 19, 4), dtype=np.float32)
    a = gdap.distribute(x, layout.block(x.shape, grid))
    want = x.sum(axis=0, dtype=np.float64)
    np.testing.assert_allclose(a.sum(axis=0).get(), want, rtol=1e-6)  # before: rel. errors of ~5e-6
    np.testing.assert_allclose(a.mean(axis=0).get(), want / x.shape[0], rtol=1e-6)


def test_sums_over_two_mpi_processes():
    every_rank_ok("sum_accuracy_mpi_ranks.py", 2, timeout=300)


@pytest.mark.gpu
def test_device_sums_are_as_accurate():
    cupy = _gpus(2)
    xs = big_and_ones(np.float32, 1e8)
    with cupy.cuda.Device(0):
        a = gdap.distribute(cupy.asarray(xs), layout.block(xs.shape, 2))
    np.testing.assert_allclose(a.sum(), 400039996, rtol=1e-7)       # one thread adds thousands of ones
    x = np.random.default_rng(7).random((1 << 19, 4), dtype=np.float32)
    for target in (layout.block(x.shape, (2, 1)), layout.block(x.shape, (1, 2))):
        with cupy.cuda.Device(0):
            t = gdap.distribute(cupy.asarray(x), target)
        want = x.sum(axis=0, dtype=np.float64)
        np.testing.assert_allclose(cupy.asnumpy(t.sum(axis=0).get()), want, rtol=1e-6)
        np.testing.assert_allclose(t.sum(), want.sum(), rtol=1e-6)
    d = big_and_ones(np.float64, 1e16)
    with cupy.cuda.Device(0):
        b = gdap.distribute(cupy.asarray(d), layout.block(d.shape, 2))
    assert abs(b.sum() - math.fsum(d)) <= np.spacing(math.fsum(d))

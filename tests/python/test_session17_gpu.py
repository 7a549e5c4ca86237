"""The GlobalArray calls added on 2026-11-28 (seventeenth session), on two GPUs' sections: distributed
np.concatenate / np.stack, a[mask] = b with b a GlobalArray, squeeze of a grid-divided length-1 axis as a
view, reshape(order='F') identities, expand_dims, and cumsum on boundary-padded layouts. Each compares with
NumPy on the host copy and checks that the results' sections stay on the GPUs (nothing gathers)."""
import warnings

import numpy as np
import pytest

import gdap
from gdap import layout

SHAPE = (8, 6)
FLOATS = np.arange(48, dtype=np.float64).reshape(SHAPE) * 0.5 - 7


def _on_two_gpus(host, lay):
    from test_global_gpu import _gpus
    cupy = _gpus(2)
    with cupy.cuda.Device(0):
        a = gdap.distribute(cupy.asarray(host), lay)
    assert set(a.devices.values()) == {"cuda:0", "cuda:1"}
    return cupy, a


def _no_gathers():
    warnings.simplefilter("error", gdap.GatherWarning)


@pytest.mark.gpu
def test_concatenate_and_stack_of_device_sections():
    # Rule: joining two GPUs' GlobalArrays moves each operand into its slab on the devices, as NumPy joins.
    cupy, a = _on_two_gpus(FLOATS, layout.block(SHAPE, (2, 1)))
    b = gdap.distribute(cupy.asarray(FLOATS[::-1].copy()), layout.cyclic(SHAPE, (2, 1)), devices=a.context)
    with warnings.catch_warnings():
        _no_gathers()
        got = [np.concatenate([a, b]), np.concatenate([a, b], axis=1), np.stack([a, b]), np.vstack([a, b]),
               np.hstack([a, b])]
    want = [np.concatenate([FLOATS, FLOATS[::-1]]), np.concatenate([FLOATS, FLOATS[::-1]], axis=1),
            np.stack([FLOATS, FLOATS[::-1]]), np.vstack([FLOATS, FLOATS[::-1]]), np.hstack([FLOATS, FLOATS[::-1]])]
    for g, w in zip(got, want):
        assert set(g.devices.values()) == {"cuda:0", "cuda:1"}
        np.testing.assert_array_equal(g.get(), w)


@pytest.mark.gpu
def test_mask_assignment_from_a_device_global_array():
    # Rule: a[mask] = b, b a 1-d GlobalArray on the GPUs with one value per True cell, writes NumPy's cells,
    # with each section's device current (CuPy warned "peer access activated" on 2 x H200: device 1's
    # section indexed on device 0's stream, the pattern of the fifteenth session's argmax race).
    cupy, a = _on_two_gpus(FLOATS, layout.padded(SHAPE, (2, 1), 1))
    mask = a > 0
    count = int(np.count_nonzero(FLOATS > 0))
    values = np.arange(count, dtype=np.float64) + 1000
    b = gdap.distribute(cupy.asarray(values), layout.block((count,), (2,)), devices=a.context)
    with warnings.catch_warnings():  # CuPy's work on a section runs with its device current
        warnings.simplefilter("error", cupy._util.PerformanceWarning)
        a[mask] = b
    want = FLOATS.copy()
    want[FLOATS > 0] = values
    np.testing.assert_array_equal(a.get(), want)


@pytest.mark.gpu
def test_views_and_scans_of_device_sections():
    # Rule: squeeze of a length-1 axis the grid divides, reshape(order='F') identities and expand_dims are
    # views of the GPUs' sections (a write through them shows in the source); cumsum matches NumPy.
    x = FLOATS.reshape(1, 8, 6)
    cupy, a = _on_two_gpus(x, layout.block(x.shape, (1, 2, 1)))
    s = a.squeeze(0)
    f = a.reshape(x.shape, order="F")
    e = np.expand_dims(s, 2)
    s[0, 0] = 99.0
    assert a.get()[0, 0, 0] == 99.0 and f.get()[0, 0, 0] == 99.0 and e.get()[0, 0, 0] == 99.0
    d = gdap.distribute(cupy.asarray(x), layout.block(x.shape, (2, 1, 1)), devices=a.context)
    d.squeeze(0)[1, 2] = -5.0  # the axis the grid divides: one rank holds its cell, the other none
    assert d.get()[0, 1, 2] == -5.0
    want = x.copy()
    want[0, 0, 0] = 99.0
    np.testing.assert_allclose(s.cumsum(0).get(), want[0].cumsum(0))
    np.testing.assert_allclose(np.cumprod(s * 0 + 1.5, axis=1).get(), (want[0] * 0 + 1.5).cumprod(1))

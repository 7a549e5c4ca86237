"""gdap.GlobalArray on GPUs (marked gpu; ctest python.gpu on a GPU machine): the 2-GPU row -> column
reshard in two lines, every bridge round trip with pointer identity on 4 GPUs (cupyx in each mode,
JAX, DTensor under torchrun, DistArray is host-only: tests/distarray), the DLPack device defect
(a tensor on cuda:1 while cuda:0 is current) for CuPy, PyTorch and JAX, and the class's collective
methods on device sections. Each test skips where its library or GPUs are missing."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import gdap
from gdap import layout

pytestmark = pytest.mark.gpu


def _gpus(n):
    cupy = pytest.importorskip("cupy")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver
        pytest.skip("no CUDA device: %s" % e)
    if count < n:
        pytest.skip("needs %d GPUs, found %d" % (n, count))
    try:
        gdap.empty((1,), np.float32, device="cuda:0").close()
    except gdap.UnsupportedError as e:
        pytest.skip("gdap was built without CUDA: %s" % e)
    return cupy


def test_two_gpu_row_to_column_reshard_is_two_lines():
    cupy = _gpus(2)
    n = 1000
    with cupy.cuda.Device(0):
        x = cupy.arange(n * n, dtype=cupy.float32).reshape(n, n)
    a = gdap.distribute(x, layout.block(x.shape, 2))            # line 1: rows over cuda:0, cuda:1
    b = a.reshard(layout.block(x.shape, (1, 2)))                # line 2: columns
    assert [b.section(r).device for r in range(2)] == ["cuda:0", "cuda:1"]
    assert b.local_view(1).device.id == 1 and b.section(1).data_ptr == b.local_view(1).data.ptr
    assert (b.get() == x.get()).all()
    assert (cupy.asnumpy(b.local_view(1)) == x.get()[:, n // 2:]).all()


def test_repeated_device_reshards_rebase_the_kept_copies():
    # Rule: on GPUs the group re-bases each rank's kept copies onto every call's new sections; another
    # layout, dtype, or destination strides (gdap.redistribute into column slices, then into
    # contiguous arrays, on one plan) never reuse them.
    from concurrent.futures import ThreadPoolExecutor
    cupy = _gpus(2)
    shape = (203, 61)
    whole = np.arange(shape[0] * shape[1], dtype=np.float64).reshape(shape)
    with cupy.cuda.Device(0):
        x = cupy.asarray(whole)
    a = gdap.distribute(x, layout.cyclic(shape, (2, 1)))
    rows, cols = layout.block(shape, 2), layout.block(shape, (1, 2))
    kept = [a.reshard(target) for target in (rows, cols, rows, rows, cols, rows)]
    assert len({b.section(0).data_ptr for b in kept}) == len(kept), "every result has its own memory"
    assert all((b.get() == whole).all() for b in kept)
    assert (a.astype(np.float32).reshard(rows).get() == whole.astype(np.float32)).all()
    comms = gdap.group(2)
    plans = [gdap.Plan(a.layout, rows, np.float64, comms[r]) for r in range(2)]
    views, compact = [], []
    for r in range(2):
        with cupy.cuda.Device(r):
            views.append(cupy.zeros((rows.local_shape(r)[0], shape[1] + 5))[:, :shape[1]])
            compact.append(cupy.zeros(rows.local_shape(r)))
    for dst in (views, compact):
        with ThreadPoolExecutor(2) as pool:
            for f in [pool.submit(gdap.redistribute, comms[r], plans[r], a.section(r), dst[r]) for r in range(2)]:
                f.result()
        assert (np.concatenate([cupy.asnumpy(d) for d in dst]) == whole).all()


def test_dlpack_export_on_another_device_cupy():
    cupy = _gpus(2)
    with cupy.cuda.Device(1):
        x = cupy.arange(6, dtype=cupy.float32)
    with cupy.cuda.Device(0):
        la = gdap.from_dlpack(x)
        assert cupy.cuda.runtime.getDevice() == 0, "the consumer's device is current again"
    assert la.device == "cuda:1" and la.data_ptr == x.data.ptr


def test_dlpack_export_on_another_device_torch():
    _gpus(2)
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32, device="cuda:1")
    torch.cuda.set_device(0)
    la = gdap.from_dlpack(t)  # PyTorch raised BufferError here before the fix
    assert torch.cuda.current_device() == 0
    assert la.device == "cuda:1" and la.data_ptr == t.data_ptr()
    comms = gdap.group(1)  # gdap.redistribute with such a tensor, from a thread whose device is 0
    plan = gdap.Plan(layout.block((6,), 1), layout.cyclic((6,), 1), np.float32, comms[0])
    out = torch.empty(6, dtype=torch.float32, device="cuda:1")
    gdap.redistribute(comms[0], plan, t, out)
    assert torch.cuda.current_device() == 0, "gdap.redistribute leaves the caller's device current"
    torch.cuda.synchronize(1)
    assert torch.equal(out.cpu(), t.cpu())


def test_dlpack_export_on_another_device_jax():
    _gpus(2)
    jax = pytest.importorskip("jax")
    gpus = jax.devices("gpu")
    if len(gpus) < 2:
        pytest.skip("JAX sees fewer than 2 GPUs")
    import cupy
    j = jax.device_put(jax.numpy.arange(6, dtype=jax.numpy.float32), gpus[1])
    with cupy.cuda.Device(0):
        la = gdap.from_dlpack(j)
    assert la.device == "cuda:%d" % gpus[1].local_hardware_id and la.data_ptr == j.unsafe_buffer_pointer()


def test_cupyx_round_trip_in_replica_and_partial_modes():
    cupy = _gpus(4)
    from cupyx.distributed import array as dda
    n = 64
    whole = np.arange(n * n, dtype=np.float32).reshape(n, n)
    d = dda.distributed_array(cupy.asarray(whole), {r: [(slice(r * 16, r * 16 + 16), slice(None))] for r in range(4)})
    g = gdap.from_cupyx(d)
    chunks = d.all_chunks()
    assert [g.section(r).data_ptr for r in range(4)] == [chunks[r][0].data.ptr for r in range(4)]
    back = gdap.to_cupyx(g)
    assert [back.all_chunks()[r][0].data.ptr for r in range(4)] == [chunks[r][0].data.ptr for r in range(4)]
    # A partial sum (cupyx's matmul result): columns split on the left, rows on the right.
    left = dda.distributed_array(cupy.asarray(whole), {r: [(slice(None), slice(r * 16, r * 16 + 16))] for r in range(4)})
    right = dda.distributed_array(cupy.asarray(whole), {r: [(slice(r * 16, r * 16 + 16), slice(None))] for r in range(4)})
    prod = left @ right
    assert prod.mode is not None, "cupyx leaves the product's partial sums pending"
    p = gdap.from_cupyx(prod)
    assert p.pending == "sum" and p.section(0).data_ptr == prod.all_chunks()[0][0].data.ptr
    assert np.allclose(p.get(), whole @ whole, rtol=1e-4)
    assert np.allclose(p.reshard(layout.block((n, n), 4)).get(), whole @ whole, rtol=1e-4)
    again = gdap.to_cupyx(p)
    assert again.mode is prod.mode and np.allclose(again.get(), whole @ whole, rtol=1e-4)
    for mode in (dda.MAX, dda.MIN, dda.PROD):
        m = gdap.from_cupyx(prod.change_mode(mode))
        assert np.allclose(m.get(), whole @ whole, rtol=1e-4), mode


def test_jax_round_trip_on_four_gpus():
    cupy = _gpus(4)
    jax = pytest.importorskip("jax")
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    gpus = jax.devices("gpu")[:4]
    whole = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
    j = jax.device_put(whole, NamedSharding(Mesh(np.array(gpus).reshape(2, 2), ("x", "y")), PartitionSpec("x", "y")))
    g = gdap.from_jax(j)
    ptrs = {s.device.local_hardware_id: s.data.unsafe_buffer_pointer() for s in j.addressable_shards}
    assert sorted(g.section(r).data_ptr for r in range(4)) == sorted(ptrs.values())
    assert (g.get() == whole).all()
    back = gdap.to_jax(g)
    assert sorted(s.data.unsafe_buffer_pointer() for s in back.addressable_shards) == sorted(ptrs.values())
    assert (np.asarray(back) == whole).all()
    cols = gdap.to_jax(gdap.distribute(cupy.asarray(whole), layout.block(whole.shape, 4)).reshard(
        layout.block(whole.shape, (1, 4))))
    assert (np.asarray(cols) == whole).all()


def test_dtensor_round_trip_under_torchrun():
    _gpus(4)
    pytest.importorskip("torch.distributed.tensor")
    script = pathlib.Path(__file__).with_name("dtensor_ranks.py")
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=4",
                           str(script)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    for r in range(4):
        assert "rank %d: ok" % r in output, output


def test_global_array_methods_on_four_gpus(tmp_path):
    cupy = _gpus(4)
    whole = (np.arange(40 * 24, dtype=np.float64).reshape(40, 24) % 17) - 8
    a = gdap.distribute(cupy.asarray(whole), layout.block(whole.shape, (2, 2)))
    assert [a.section(r).device for r in range(4)] == ["cuda:%d" % r for r in range(4)]
    for target in (layout.block_cyclic(whole.shape, (2, 2), 4), layout.cyclic(whole.shape, 4),
                   layout.replicated(whole.shape, 4)):
        assert (a.reshard(target).get() == whole).all()
    assert a[13, 7] == whole[13, 7] and (a[::3, 5:9] == whole[::3, 5:9]).all()
    assert np.isclose(a.sum(), whole.sum()) and np.allclose(a.mean(axis=0).get(), whole.mean(axis=0))
    assert np.allclose((a * a - 1).get(), whole * whole - 1)
    b = gdap.distribute(cupy.asarray(whole.T.copy()), layout.block((24, 40), (2, 2)))
    assert np.allclose((a @ b).get(), whole @ whole.T)
    h = a.reshard(layout.padded(whole.shape, (2, 2), 2)).halo_exchange()
    for r in range(4):
        lo = h.layout.local_to_global(r, (0, 0))
        part = cupy.asnumpy(h.local_view(r))
        assert (part == whole[lo[0]:lo[0] + part.shape[0], lo[1]:lo[1] + part.shape[1]]).all()
    a.save_zarr(tmp_path / "a.zarr")
    assert (gdap.GlobalArray.load_zarr(tmp_path / "a.zarr", layout.cyclic(whole.shape, 4),
                                       devices=a.context).get() == whole).all()


def test_mixed_devices_are_refused():
    cupy = _gpus(1)
    with cupy.cuda.Device(0):
        dev = cupy.zeros(2, dtype=cupy.float32)
    with pytest.raises(gdap.InvalidArgumentError, match="mixed devices: rank 1's section is on cpu but rank 0's on "
                                                        "cuda:0"):
        gdap.GlobalArray.from_sections([dev, np.zeros(2, np.float32)], layout.block((4,), 2))
